//! Monkhorst-Pack k-point grids and their reduction to the irreducible wedge.
//!
//! k-points are fractional reciprocal coordinates. A space-group operation
//! `{W|w}` maps `k -> W^{-T} k` (translations do not act on k); time reversal
//! maps `k -> -k`. Two k-points are equivalent when they differ by a reciprocal
//! lattice vector (integer triple), within [`K_TOL`].

use std::collections::HashMap;

use super::{int_inverse, int_transpose, SymOp, IDENTITY};

/// Tolerance (fractional reciprocal units) for two k-points to be identified.
pub const K_TOL: f64 = 1e-6;

/// Irreducible k-points with their weights.
#[derive(Clone, Debug, PartialEq)]
pub struct KpointSet {
    /// Representative k-points (fractional reciprocal coordinates), in the order
    /// of their first appearance in the full grid.
    pub kpoints: Vec<[f64; 3]>,
    /// Weights (number of full-grid points in each star / grid size); sum to 1.
    pub weights: Vec<f64>,
}

/// Monkhorst-Pack grid in fractional reciprocal coordinates.
///
/// Unshifted direction `i`: `k_i = j / n_i`; shifted: `k_i = (j + 1/2) / n_i`,
/// `j = 0..n_i`. Every component is folded into `(-1/2, 1/2]` (shifted ones
/// too; equivalent modulo reciprocal lattice vectors). The order is that of
/// QE's `kpoint_grid` (last index fastest), and the set equals QE's
/// `K_POINTS automatic n1 n2 n3 s1 s2 s3`. Returns an empty vector if any
/// `n_i == 0`.
pub fn monkhorst_pack(grid: [usize; 3], shift: [bool; 3]) -> Vec<[f64; 3]> {
    if grid.contains(&0) {
        return Vec::new();
    }
    let axis = |d: usize| -> Vec<f64> {
        let n = grid[d];
        let nf = n as f64;
        (0..n)
            .map(|j| {
                // numerator in units of 1/(2n): 2j (+1 if shifted), folded to (-n, n]
                let mut num = 2 * j + usize::from(shift[d]);
                let mut neg = false;
                if num > n {
                    num = 2 * n - num;
                    neg = true;
                }
                let v = num as f64 / (2.0 * nf);
                if neg {
                    -v
                } else {
                    v
                }
            })
            .collect()
    };
    let (a, b, c) = (axis(0), axis(1), axis(2));
    let mut out = Vec::with_capacity(a.len() * b.len() * c.len());
    for &x in &a {
        for &y in &b {
            for &z in &c {
                out.push([x, y, z]);
            }
        }
    }
    out
}

/// Reduce `full` by the point-group parts of `ops` (and `k -> -k` if
/// `time_reversal`). See [`reduce_kpoints_with_map`].
pub fn reduce_kpoints(full: &[[f64; 3]], ops: &[SymOp], time_reversal: bool) -> KpointSet {
    reduce_kpoints_with_map(full, ops, time_reversal).0
}

/// Like [`reduce_kpoints`], and also returns `map` with `map[i]` = index of the
/// irreducible k-point whose star contains `full[i]`.
///
/// The first point of each star in grid order is the representative. The
/// images of a representative that are not in `full` (grid incompatible with
/// an operation) are ignored, as in QE. Weights are star sizes counted in the
/// grid divided by `full.len()`, so the stars partition the grid. Operations
/// whose rotation is not unimodular are skipped; the identity is always used.
pub fn reduce_kpoints_with_map(
    full: &[[f64; 3]],
    ops: &[SymOp],
    time_reversal: bool,
) -> (KpointSet, Vec<usize>) {
    // Distinct k-space rotations W^{-T}, identity first.
    let mut krots: Vec<[[i32; 3]; 3]> = vec![IDENTITY];
    for op in ops {
        if let Some(inv) = int_inverse(&op.rot) {
            let m = int_transpose(&inv);
            if !krots.contains(&m) {
                krots.push(m);
            }
        }
    }
    let signs: &[f64] = if time_reversal { &[1.0, -1.0] } else { &[1.0] };

    let lookup = KLookup::new(full);
    let mut map: Vec<Option<usize>> = vec![None; full.len()];
    let mut kpoints = Vec::new();
    let mut counts: Vec<usize> = Vec::new();
    for (i, k) in full.iter().enumerate() {
        if map[i].is_some() {
            continue;
        }
        let rep = kpoints.len();
        kpoints.push(*k);
        map[i] = Some(rep);
        let mut count = 1usize;
        for m in &krots {
            let mut kr = [0.0; 3];
            for (a, v) in kr.iter_mut().enumerate() {
                *v = (0..3).map(|b| f64::from(m[a][b]) * k[b]).sum();
            }
            for &s in signs {
                let kk = kr.map(|v| s * v);
                for j in lookup.find(full, &kk) {
                    if map[j].is_none() {
                        map[j] = Some(rep);
                        count += 1;
                    }
                }
            }
        }
        counts.push(count);
    }
    let total = full.len().max(1) as f64;
    let weights = counts.iter().map(|&c| c as f64 / total).collect();
    let map = map.into_iter().map(|m| m.unwrap_or(0)).collect();
    (KpointSet { kpoints, weights }, map)
}

/// Hash lookup of k-points modulo reciprocal lattice vectors.
struct KLookup {
    bins: HashMap<[i64; 3], Vec<usize>>,
}

/// Bin size: 1/BINS, coarser than K_TOL so equal points are in the same or a
/// neighbouring bin.
const BINS: f64 = 1.0e4;
const NBINS: i64 = 10_000;

fn bin_key(k: &[f64; 3]) -> [i64; 3] {
    k.map(|v| {
        let w = v - v.floor();
        ((w * BINS).round() as i64).rem_euclid(NBINS)
    })
}

fn same_k(a: &[f64; 3], b: &[f64; 3]) -> bool {
    a.iter().zip(b).all(|(x, y)| {
        let d = x - y;
        (d - d.round()).abs() < K_TOL
    })
}

impl KLookup {
    fn new(full: &[[f64; 3]]) -> Self {
        let mut bins: HashMap<[i64; 3], Vec<usize>> = HashMap::new();
        for (i, k) in full.iter().enumerate() {
            bins.entry(bin_key(k)).or_default().push(i);
        }
        Self { bins }
    }

    /// Indices of all points of `full` equivalent to `k` (ascending order not guaranteed).
    fn find(&self, full: &[[f64; 3]], k: &[f64; 3]) -> Vec<usize> {
        let key = bin_key(k);
        let mut out = Vec::new();
        for d0 in -1..=1i64 {
            for d1 in -1..=1i64 {
                for d2 in -1..=1i64 {
                    let kk = [
                        (key[0] + d0).rem_euclid(NBINS),
                        (key[1] + d1).rem_euclid(NBINS),
                        (key[2] + d2).rem_euclid(NBINS),
                    ];
                    if let Some(list) = self.bins.get(&kk) {
                        for &j in list {
                            if full.get(j).is_some_and(|p| same_k(p, k)) && !out.contains(&j) {
                                out.push(j);
                            }
                        }
                    }
                }
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::super::find_symmetries;
    use super::*;

    const SI_LAT: [[f64; 3]; 3] = [[0.0, 5.13, 5.13], [5.13, 0.0, 5.13], [5.13, 5.13, 0.0]];

    fn si_ops() -> Vec<SymOp> {
        find_symmetries(&SI_LAT, &[[0.0; 3], [0.25; 3]], &[0, 0], 1e-5).unwrap_or_default()
    }

    fn check_partition(full: &[[f64; 3]], set: &KpointSet, map: &[usize]) {
        let s: f64 = set.weights.iter().sum();
        assert!((s - 1.0).abs() < 1e-12);
        let mut counts = vec![0usize; set.kpoints.len()];
        for &m in map {
            counts[m] += 1;
        }
        assert_eq!(counts.iter().sum::<usize>(), full.len());
        for (c, w) in counts.iter().zip(&set.weights) {
            assert!((*c as f64 / full.len() as f64 - w).abs() < 1e-14);
        }
    }

    #[test]
    fn mp_grid_values() {
        let g = monkhorst_pack([4, 1, 3], [false, false, false]);
        assert_eq!(g.len(), 12);
        assert_eq!(g[0], [0.0, 0.0, 0.0]);
        assert_eq!(g[1], [0.0, 0.0, 1.0 / 3.0]);
        assert_eq!(g[2], [0.0, 0.0, -1.0 / 3.0]);
        assert_eq!(g[3], [0.25, 0.0, 0.0]);
        assert_eq!(g[6], [0.5, 0.0, 0.0]);
        assert_eq!(g[9], [-0.25, 0.0, 0.0]);
        let s = monkhorst_pack([2, 3, 1], [true, true, true]);
        let xs: Vec<f64> = s.iter().map(|k| k[0]).collect();
        assert_eq!(xs, vec![0.25, 0.25, 0.25, -0.25, -0.25, -0.25]);
        let ys: Vec<f64> = s.iter().take(3).map(|k| k[1]).collect();
        assert_eq!(ys, vec![1.0 / 6.0, 0.5, -1.0 / 6.0]);
        assert!(s.iter().all(|k| k[2] == 0.5));
        assert!(monkhorst_pack([0, 2, 2], [false; 3]).is_empty());
        // All components in (-1/2, 1/2].
        for k in monkhorst_pack([5, 6, 7], [true, false, true]) {
            assert!(k.iter().all(|v| *v > -0.5 && *v <= 0.5));
        }
    }

    #[test]
    fn si2_4x4x4_gives_8() {
        // QE si2_lda_gth / si2_pbe_*: 4x4x4 unshifted, 48 ops, nk_irreducible = 8.
        let full = monkhorst_pack([4, 4, 4], [false; 3]);
        let ops = si_ops();
        assert_eq!(ops.len(), 48);
        let (set, map) = reduce_kpoints_with_map(&full, &ops, true);
        assert_eq!(set.kpoints.len(), 8);
        check_partition(&full, &set, &map);
        assert_eq!(set.kpoints[0], [0.0; 3]);
        assert!((set.weights[0] - 1.0 / 64.0).abs() < 1e-15);
    }

    #[test]
    fn al_6x6x6_gives_16() {
        // QE al1_lda_gth: 6x6x6 unshifted, 48 ops, nk_irreducible = 16.
        let lat = [
            [0.0, 3.825, 3.825],
            [3.825, 0.0, 3.825],
            [3.825, 3.825, 0.0],
        ];
        let ops = find_symmetries(&lat, &[[0.0; 3]], &[0], 1e-5).unwrap_or_default();
        let full = monkhorst_pack([6, 6, 6], [false; 3]);
        let (set, map) = reduce_kpoints_with_map(&full, &ops, true);
        assert_eq!(set.kpoints.len(), 16);
        check_partition(&full, &set, &map);
    }

    #[test]
    fn identity_only_counts() {
        let full = monkhorst_pack([4, 4, 4], [false; 3]);
        let id = [SymOp::identity()];
        assert_eq!(reduce_kpoints(&full, &id, true).kpoints.len(), 36);
        assert_eq!(reduce_kpoints(&full, &id, false).kpoints.len(), 64);
        assert_eq!(reduce_kpoints(&full, &[], false).kpoints.len(), 64);
        // si8 displaced: 2x2x2, no symmetry -> 8 (QE: 8)
        let full2 = monkhorst_pack([2, 2, 2], [false; 3]);
        assert_eq!(reduce_kpoints(&full2, &id, true).kpoints.len(), 8);
        // H in a box, Gamma only -> 1
        let g = monkhorst_pack([1, 1, 1], [false; 3]);
        let set = reduce_kpoints(&g, &id, true);
        assert_eq!(set.kpoints, vec![[0.0; 3]]);
        assert_eq!(set.weights, vec![1.0]);
    }

    #[test]
    fn shifted_grids_and_star_closure() {
        let ops = si_ops();
        for (grid, shift) in [
            ([4, 4, 4], [true; 3]),
            ([3, 3, 3], [false; 3]),
            ([5, 5, 5], [true; 3]),
            ([8, 8, 8], [false; 3]),
        ] {
            let full = monkhorst_pack(grid, shift);
            for tr in [true, false] {
                let (set, map) = reduce_kpoints_with_map(&full, &ops, tr);
                check_partition(&full, &set, &map);
                // Each full point is an image of its representative.
                for (k, &m) in full.iter().zip(&map) {
                    let rep = set.kpoints[m];
                    let ok = ops.iter().any(|op| {
                        let r = op.rotate_k(&rep).unwrap_or([9.0; 3]);
                        same_k(&r, k) || (tr && same_k(&r.map(|v| -v), k))
                    });
                    assert!(ok);
                }
                // Representatives are pairwise inequivalent.
                for (a, ka) in set.kpoints.iter().enumerate() {
                    for kb in set.kpoints.iter().skip(a + 1) {
                        assert!(!ops.iter().any(|op| {
                            let r = op.rotate_k(ka).unwrap_or([9.0; 3]);
                            same_k(&r, kb) || (tr && same_k(&r.map(|v| -v), kb))
                        }));
                    }
                }
            }
        }
        // Known counts for fcc with Oh: 8x8x8 Gamma-centred -> 29; 4x4x4 shifted -> 10.
        let n8 = reduce_kpoints(&monkhorst_pack([8, 8, 8], [false; 3]), &ops, true);
        assert_eq!(n8.kpoints.len(), 29);
        let n4s = reduce_kpoints(&monkhorst_pack([4, 4, 4], [true; 3]), &ops, true);
        assert_eq!(n4s.kpoints.len(), 10);
    }

    #[test]
    fn duplicates_merge() {
        let full = [[0.1, 0.2, 0.3], [1.1, 0.2, -0.7], [0.0; 3]];
        let set = reduce_kpoints(&full, &[], false);
        assert_eq!(set.kpoints.len(), 2);
        assert!((set.weights[0] - 2.0 / 3.0).abs() < 1e-15);
    }
}
