//! Dealing the sticks (z-columns) of a G-sphere to the ranks of a G-vector group.
//!
//! Contract: [`StickDistribution::new`] is deterministic: every rank computes the same
//! distribution from the same global list of Miller indices, so no communication is needed to
//! know who owns what. Sticks are taken longest first (most G-vectors) and each goes to the
//! rank with the fewest sticks, ties broken by fewest G-vectors, then lowest rank: stick counts
//! differ by at most one between ranks and G-vector counts are close. A rank's sticks are kept
//! in ascending `(i0, i1)` order; its G-vectors ("local G") are the sphere entries on its
//! sticks, in the order of the global list.
//!
//! [`StickDistribution::in_groups`] does the same inside groups of ranks: the sticks of an
//! `i0` plane go only to the ranks of that plane's group (a pencil decomposition deals the
//! sticks of a sub's x-planes among the sub's ranks, so its first transpose stays inside the
//! sub); counts then differ by at most one within a group.
//!
//! [`StickDistribution::paired`] keeps each stick and its mirror `(-i0, -i1)` on one rank (the
//! Γ-point real path needs c(G) and c(-G) = c(G)* side by side); pairs are dealt as units.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};

/// Which rank owns each stick of one sphere on one grid.
#[derive(Clone, Debug)]
pub struct StickDistribution {
    dims: [usize; 3],
    /// `(i0, i1)` of every stick, ascending.
    sticks: Vec<(usize, usize)>,
    /// G-vectors on each stick.
    g_per_stick: Vec<usize>,
    /// Owner of each stick.
    owner: Vec<usize>,
    /// Sticks of each rank, ascending.
    by_rank: Vec<Vec<usize>>,
    /// Stick and z index of every G-vector of the global list (u32: the distribution's only
    /// arrays over the whole sphere, and a stick or z index fits).
    g_stick: Vec<u32>,
    g_z: Vec<u32>,
}

impl StickDistribution {
    /// Deal the sticks of `millers` on a grid of `dims` to `ranks` ranks.
    pub fn new(dims: [usize; 3], millers: &[[i32; 3]], ranks: usize) -> Self {
        assert!(ranks > 0, "planewave-fft: need at least one rank");
        Self::in_groups(dims, millers, &[(0..ranks).collect()], &vec![0; dims[0]])
    }

    /// Deal the sticks of `millers` so that those of plane `i0` go to the ranks of
    /// `groups[plane_group[i0]]` (the groups partition `0..P`, none empty).
    pub fn in_groups(
        dims: [usize; 3],
        millers: &[[i32; 3]],
        groups: &[Vec<usize>],
        plane_group: &[usize],
    ) -> Self {
        Self::deal(dims, millers, groups, plane_group, false)
    }

    /// Deal the sticks of `millers` over `ranks` ranks with every stick on the rank of its
    /// mirror `(-i0, -i1)` (a sphere symmetric under G -> -G: each pair is one unit).
    pub fn paired(dims: [usize; 3], millers: &[[i32; 3]], ranks: usize) -> Self {
        assert!(ranks > 0, "planewave-fft: need at least one rank");
        Self::deal(
            dims,
            millers,
            &[(0..ranks).collect()],
            &vec![0; dims[0]],
            true,
        )
    }

    fn deal(
        dims: [usize; 3],
        millers: &[[i32; 3]],
        groups: &[Vec<usize>],
        plane_group: &[usize],
        pair_mirrors: bool,
    ) -> Self {
        let ranks: usize = groups.iter().map(Vec::len).sum();
        assert!(
            groups.iter().all(|g| !g.is_empty()),
            "planewave-fft: every group needs a rank"
        );
        let w = |x: i32, n: usize| x.rem_euclid(n as i32) as usize;
        let cols: Vec<(usize, usize)> = millers
            .iter()
            .map(|m| (w(m[0], dims[0]), w(m[1], dims[1])))
            .collect();
        let mut sticks = cols.clone();
        sticks.sort_unstable();
        sticks.dedup();
        // Kept for the plan's life: drop the capacity of the per-G list it was made from.
        sticks.shrink_to_fit();
        let id: HashMap<(usize, usize), usize> =
            sticks.iter().enumerate().map(|(i, &s)| (s, i)).collect();
        let narrow = |i: usize| u32::try_from(i).expect("planewave-fft: index beyond u32");
        let g_stick: Vec<u32> = cols.iter().map(|c| narrow(id[c])).collect();
        let g_z: Vec<u32> = millers.iter().map(|m| narrow(w(m[2], dims[2]))).collect();
        let mut g_per_stick = vec![0usize; sticks.len()];
        for &s in &g_stick {
            g_per_stick[s as usize] += 1;
        }
        // Units dealt together: one stick, or a stick and its mirror.
        let units: Vec<Vec<usize>> = (0..sticks.len())
            .filter_map(|s| {
                if !pair_mirrors {
                    return Some(vec![s]);
                }
                let (i0, i1) = sticks[s];
                let m = ((dims[0] - i0) % dims[0], (dims[1] - i1) % dims[1]);
                match id.get(&m) {
                    Some(&t) if t < s => None,
                    Some(&t) if t > s => Some(vec![s, t]),
                    _ => Some(vec![s]),
                }
            })
            .collect();
        let unit_g = |u: &Vec<usize>| u.iter().map(|&s| g_per_stick[s]).sum::<usize>();
        let mut order: Vec<usize> = (0..units.len()).collect();
        order.sort_by_key(|&u| (Reverse(unit_g(&units[u])), units[u][0]));
        let mut heaps: Vec<BinaryHeap<Reverse<(usize, usize, usize)>>> = groups
            .iter()
            .map(|g| g.iter().map(|&r| Reverse((0, 0, r))).collect())
            .collect();
        let mut owner = vec![0usize; sticks.len()];
        for u in order {
            let unit = &units[u];
            let heap = &mut heaps[plane_group[sticks[unit[0]].0]];
            let Reverse((ns, ng, r)) = heap.pop().expect("groups are not empty");
            for &s in unit {
                owner[s] = r;
            }
            heap.push(Reverse((ns + unit.len(), ng + unit_g(unit), r)));
        }
        let mut by_rank = vec![Vec::new(); ranks];
        for (s, &r) in owner.iter().enumerate() {
            by_rank[r].push(s);
        }
        Self {
            dims,
            sticks,
            g_per_stick,
            owner,
            by_rank,
            g_stick,
            g_z,
        }
    }

    /// Grid dimensions.
    pub fn dims(&self) -> [usize; 3] {
        self.dims
    }
    /// Number of ranks.
    pub fn ranks(&self) -> usize {
        self.by_rank.len()
    }
    /// Number of sticks of the whole sphere.
    pub fn n_sticks(&self) -> usize {
        self.sticks.len()
    }
    /// `(i0, i1)` of stick `s`.
    pub fn stick(&self, s: usize) -> (usize, usize) {
        self.sticks[s]
    }
    /// Owner of stick `s`.
    pub fn owner(&self, s: usize) -> usize {
        self.owner[s]
    }
    /// Sticks of `rank`, ascending `(i0, i1)`.
    pub fn sticks_of(&self, rank: usize) -> &[usize] {
        &self.by_rank[rank]
    }
    /// Number of G-vectors of `rank`.
    pub fn n_g_of(&self, rank: usize) -> usize {
        self.by_rank[rank]
            .iter()
            .map(|&s| self.g_per_stick[s])
            .sum()
    }
    /// Indices (into the global Miller list) of the G-vectors of `rank`, in global order.
    pub fn local_g(&self, rank: usize) -> Vec<usize> {
        (0..self.g_stick.len())
            .filter(|&g| self.owner[self.g_stick[g] as usize] == rank)
            .collect()
    }
    /// Stick and z index of global G-vector `g`.
    pub fn g_position(&self, g: usize) -> (usize, usize) {
        (self.g_stick[g] as usize, self.g_z[g] as usize)
    }
    /// Sorted, distinct `i0` planes that hold at least one stick.
    pub fn active_planes(&self) -> Vec<usize> {
        let mut p: Vec<usize> = self.sticks.iter().map(|s| s.0).collect();
        p.dedup();
        p
    }

    /// Number of sticks of `millers` on each `i0` plane of a grid of `dims` (`n0` entries),
    /// before any dealing.
    pub fn sticks_per_plane(dims: [usize; 3], millers: &[[i32; 3]]) -> Vec<usize> {
        let w = |x: i32, n: usize| x.rem_euclid(n as i32) as usize;
        let mut seen = vec![false; dims[0] * dims[1]];
        let mut c = vec![0; dims[0]];
        for m in millers {
            let (i0, i1) = (w(m[0], dims[0]), w(m[1], dims[1]));
            if !std::mem::replace(&mut seen[i0 * dims[1] + i1], true) {
                c[i0] += 1;
            }
        }
        c
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn balanced_counts_and_every_stick_dealt_once() {
        let millers: Vec<[i32; 3]> = (-3..=3)
            .flat_map(|a| (-3..=3).flat_map(move |b| (-3..=3).map(move |c| [a, b, c])))
            .filter(|m| m[0] * m[0] + m[1] * m[1] + m[2] * m[2] <= 9)
            .collect();
        for ranks in 1..=8 {
            let d = StickDistribution::new([8, 8, 8], &millers, ranks);
            let counts: Vec<usize> = (0..ranks).map(|r| d.sticks_of(r).len()).collect();
            assert!(counts.iter().max().unwrap() - counts.iter().min().unwrap() <= 1);
            assert_eq!(counts.iter().sum::<usize>(), d.n_sticks());
            let ng: usize = (0..ranks).map(|r| d.local_g(r).len()).sum();
            assert_eq!(ng, millers.len());
            for r in 0..ranks {
                assert_eq!(d.local_g(r).len(), d.n_g_of(r));
                assert!(d.sticks_of(r).windows(2).all(|w| w[0] < w[1]));
            }
        }
    }

    #[test]
    fn paired_dealing_keeps_mirror_sticks_together() {
        let millers: Vec<[i32; 3]> = (-3..=3)
            .flat_map(|a| (-3..=3).flat_map(move |b| (-3..=3).map(move |c| [a, b, c])))
            .filter(|m| m[0] * m[0] + m[1] * m[1] + m[2] * m[2] <= 9)
            .collect();
        for ranks in 1..=5 {
            let d = StickDistribution::paired([8, 9, 8], &millers, ranks);
            let owner_of = |i0: i32, i1: i32| {
                let s = (0..d.n_sticks())
                    .find(|&s| d.stick(s) == (i0.rem_euclid(8) as usize, i1.rem_euclid(9) as usize))
                    .expect("stick exists");
                d.owner(s)
            };
            for m in &millers {
                assert_eq!(owner_of(m[0], m[1]), owner_of(-m[0], -m[1]), "{m:?}");
            }
            let counts: Vec<usize> = (0..ranks).map(|r| d.sticks_of(r).len()).collect();
            assert!(counts.iter().max().unwrap() - counts.iter().min().unwrap() <= 2);
            let ng: usize = (0..ranks).map(|r| d.local_g(r).len()).sum();
            assert_eq!(ng, millers.len());
        }
    }

    #[test]
    fn grouped_dealing_keeps_each_plane_inside_its_group() {
        let millers: Vec<[i32; 3]> = (-3..=3)
            .flat_map(|a| (-3..=3).flat_map(move |b| (-3..=3).map(move |c| [a, b, c])))
            .filter(|m| m[0] * m[0] + m[1] * m[1] + m[2] * m[2] <= 9)
            .collect();
        // Ranks 0, 2, 4 own planes 0..4 (i0 = 0..3), ranks 1, 3 the rest.
        let groups = vec![vec![0, 2, 4], vec![1, 3]];
        let plane_group: Vec<usize> = (0..8).map(|i0| usize::from(i0 >= 4)).collect();
        let d = StickDistribution::in_groups([8, 8, 8], &millers, &groups, &plane_group);
        for (gi, g) in groups.iter().enumerate() {
            let counts: Vec<usize> = g.iter().map(|&r| d.sticks_of(r).len()).collect();
            assert!(counts.iter().max().unwrap() - counts.iter().min().unwrap() <= 1);
            for &r in g {
                assert!(d
                    .sticks_of(r)
                    .iter()
                    .all(|&s| plane_group[d.stick(s).0] == gi));
            }
        }
        let total: usize = (0..5).map(|r| d.sticks_of(r).len()).sum();
        assert_eq!(total, d.n_sticks());
        let per_plane = StickDistribution::sticks_per_plane([8, 8, 8], &millers);
        assert_eq!(per_plane.iter().sum::<usize>(), d.n_sticks());
    }
}
