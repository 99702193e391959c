//! Process topology: k-point groups × band groups × G-vector groups, plus node groups.
//!
//! Contract:
//! - A [`Layout`] splits `ranks` into `kpoint_groups × band_groups × gvector_groups` (the last
//!   is the number of ranks sharing the G-vectors of one band). It is valid when the product is
//!   the rank count, no k-point group is idle (`kpoint_groups ≤ k-points`, spin channels
//!   included), no band group is empty (`band_groups ≤ bands`) and no G rank is left without an
//!   FFT plane (`gvector_groups ≤ planes`).
//! - [`Topology::new`] resolves a [`LayoutRequest`] (numbers from the input; a missing number
//!   is chosen by the cost model, [`choose_layout`]), rejects an impossible one with a
//!   [`LayoutError`] that names the nearest valid layout, and splits the world communicator
//!   (collectively) into the level communicators.
//! - Rank order inside a k-point group is a choice ([`RankOrder`]): consecutive ranks in one
//!   G group (the VASP default) or in one band group (what CASTEP found faster).
//! - Placement emulation ([`Placement`]): launchers fill nodes one after the other ("smp");
//!   `Folded` permutes world ranks so that consecutive logical ranks sit on different nodes
//!   (round-robin), as a folded/cyclic placement would, without touching the launcher.
//! - The cost model is deliberately simple (arbitrary units per SCF iteration): FFT work
//!   `N log N` per band and k-point with load imbalance from uneven division; G all-to-all
//!   transposes `α·(g−1) + β·N/g` per band FFT; band-group exchange `β·bands·N/g·(b−1)/b` plus
//!   `α·log2 b` per k-point; k-point density sum `β·N·log2 k`. It prefers k-point groups (nearly
//!   free), then trades band against G groups.

use crate::communicator::{CommClass, Communicator};
use crate::ext::CommExt;
use std::fmt;
use std::sync::Arc;

/// Which ranks are consecutive inside a k-point group.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum RankOrder {
    /// Consecutive ranks share the G-vectors of a band (VASP default).
    #[default]
    GConsecutive,
    /// Consecutive ranks belong to different band groups at the same G index (CASTEP's
    /// choice: the band-level traffic stays between neighbouring ranks).
    BandConsecutive,
}

/// Emulated placement of ranks on nodes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Placement {
    /// As launched: consecutive ranks on the same node.
    #[default]
    Smp,
    /// Round-robin: consecutive logical ranks on different nodes.
    Folded,
}

/// The sizes the layout is judged against.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ProblemSize {
    /// Number of k-points times spin channels.
    pub kpoints: usize,
    /// Number of bands.
    pub bands: usize,
    /// Number of FFT planes (the grid size along the distributed axis).
    pub fft_planes: usize,
}

/// What the input asks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct LayoutRequest {
    /// `parallel.kpoint_groups`, or `None` for the cost model's choice.
    pub kpoint_groups: Option<usize>,
    /// `parallel.band_groups`, or `None` for the cost model's choice.
    pub band_groups: Option<usize>,
    /// Rank order inside a k-point group.
    pub order: RankOrder,
    /// Placement emulation.
    pub placement: Placement,
    /// The problem the layout serves.
    pub problem: ProblemSize,
}

impl LayoutRequest {
    /// A request with every number left to the cost model.
    pub fn auto(problem: ProblemSize) -> Self {
        LayoutRequest {
            kpoint_groups: None,
            band_groups: None,
            order: RankOrder::default(),
            placement: Placement::default(),
            problem,
        }
    }
}

/// A resolved layout.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Layout {
    /// Number of k-point groups.
    pub kpoint_groups: usize,
    /// Band groups per k-point group.
    pub band_groups: usize,
    /// Ranks sharing the G-vectors of a band.
    pub gvector_groups: usize,
    /// Rank order.
    pub order: RankOrder,
    /// Placement emulation.
    pub placement: Placement,
}

impl fmt::Display for Layout {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "kpoint_groups = {}, band_groups = {} (G-vector groups of {} ranks)",
            self.kpoint_groups, self.band_groups, self.gvector_groups
        )?;
        // The order only matters when there are both band groups and G-vector groups.
        if self.band_groups > 1 && self.gvector_groups > 1 {
            let order = match self.order {
                RankOrder::GConsecutive => "g",
                RankOrder::BandConsecutive => "band",
            };
            write!(f, ", rank order {order}")?;
        }
        Ok(())
    }
}

/// An impossible layout, with the nearest valid one.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LayoutError {
    /// Number of ranks.
    pub ranks: usize,
    /// Why the requested layout is impossible.
    pub reason: String,
    /// The nearest valid layout, if any exists.
    pub nearest: Option<Layout>,
}

impl fmt::Display for LayoutError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "invalid parallel layout for {} ranks: {}",
            self.ranks, self.reason
        )?;
        match &self.nearest {
            Some(l) => write!(f, "; nearest valid layout: {l}"),
            None => write!(f, "; no layout fits this problem on {} ranks", self.ranks),
        }
    }
}

impl std::error::Error for LayoutError {}

/// Why `(kg, bg)` is not a valid layout of `ranks` for `p`, if it is not.
pub fn check_layout(ranks: usize, kg: usize, bg: usize, p: &ProblemSize) -> Result<usize, String> {
    if kg == 0 || bg == 0 {
        return Err("group counts must be at least 1".into());
    }
    if !ranks.is_multiple_of(kg) {
        return Err(format!("{kg} k-point groups do not divide {ranks} ranks"));
    }
    if !(ranks / kg).is_multiple_of(bg) {
        return Err(format!(
            "{bg} band groups do not divide the {} ranks of a k-point group",
            ranks / kg
        ));
    }
    if kg > p.kpoints {
        return Err(format!(
            "{kg} k-point groups for {} k-points (some groups would be idle)",
            p.kpoints
        ));
    }
    if bg > p.bands {
        return Err(format!("{bg} band groups for {} bands", p.bands));
    }
    let g = ranks / kg / bg;
    if g > p.fft_planes {
        return Err(format!(
            "{g} ranks share each band's G-vectors but the FFT grid has only {} planes",
            p.fft_planes
        ));
    }
    Ok(g)
}

/// Every valid `(kpoint_groups, band_groups)` for `ranks`.
pub fn valid_layouts(ranks: usize, p: &ProblemSize) -> Vec<(usize, usize)> {
    let divisors = |n: usize| (1..=n).filter(move |d| n.is_multiple_of(*d));
    divisors(ranks)
        .flat_map(|kg| divisors(ranks / kg).map(move |bg| (kg, bg)))
        .filter(|&(kg, bg)| check_layout(ranks, kg, bg, p).is_ok())
        .collect()
}

/// Modelled cost (arbitrary units per SCF iteration) of a layout; see the module doc.
pub fn layout_cost(ranks: usize, kg: usize, bg: usize, p: &ProblemSize) -> f64 {
    const ALPHA: f64 = 2.0e4; // latency of one message, in units of one flop
    const BETA: f64 = 4.0; // cost per element moved
    let g = (ranks / kg / bg).max(1) as f64;
    let n = (p.fft_planes as f64).powi(3);
    let kpg = p.kpoints.div_ceil(kg) as f64;
    let bpg = p.bands.div_ceil(bg) as f64;
    let planes_per_rank = (p.fft_planes as f64 / g).ceil();
    let g_imbalance = planes_per_rank * g / p.fft_planes as f64;
    let compute = kpg * bpg * n * n.log2() / g * g_imbalance;
    let g_comm = if g > 1.0 {
        kpg * bpg * 2.0 * (ALPHA * (g - 1.0) + BETA * n / g)
    } else {
        0.0
    };
    let b = bg as f64;
    let band_comm = if bg > 1 {
        kpg * (BETA * p.bands as f64 * n / g * (b - 1.0) / b + ALPHA * b.log2())
    } else {
        0.0
    };
    let k_comm = if kg > 1 {
        BETA * n * (kg as f64).log2()
    } else {
        0.0
    };
    compute + g_comm + band_comm + k_comm
}

/// Every valid layout with its modelled cost, cheapest first (what `advise` prints).
pub fn advise(ranks: usize, p: &ProblemSize) -> Vec<((usize, usize), f64)> {
    let mut v: Vec<_> = valid_layouts(ranks, p)
        .into_iter()
        .map(|(kg, bg)| ((kg, bg), layout_cost(ranks, kg, bg, p)))
        .collect();
    v.sort_by(|a, b| a.1.total_cmp(&b.1));
    v
}

/// The cheapest valid layout (by [`layout_cost`]) honouring the numbers `request` fixes.
pub fn choose_layout(ranks: usize, request: &LayoutRequest) -> Result<Layout, LayoutError> {
    resolve_layout(ranks, request)
}

/// Resolve a request: check the numbers it fixes, choose the missing ones by cost.
pub fn resolve_layout(ranks: usize, r: &LayoutRequest) -> Result<Layout, LayoutError> {
    let p = &r.problem;
    let make = |(kg, bg): (usize, usize)| Layout {
        kpoint_groups: kg,
        band_groups: bg,
        gvector_groups: ranks / kg / bg,
        order: r.order,
        placement: r.placement,
    };
    let valid = valid_layouts(ranks, p);
    let fits = |&(kg, bg): &(usize, usize)| {
        r.kpoint_groups.is_none_or(|k| k == kg) && r.band_groups.is_none_or(|b| b == bg)
    };
    let cheapest = |cands: &mut dyn Iterator<Item = (usize, usize)>| {
        cands
            .map(|l| (l, layout_cost(ranks, l.0, l.1, p)))
            .min_by(|a, b| a.1.total_cmp(&b.1))
            .map(|(l, _)| l)
    };
    if let Some(l) = cheapest(&mut valid.iter().copied().filter(fits)) {
        return Ok(make(l));
    }
    // Impossible: explain with the fixed numbers, propose the nearest valid layout.
    let kg0 = r.kpoint_groups.unwrap_or(1);
    let bg0 = r.band_groups.unwrap_or(1);
    let reason = match (r.kpoint_groups, r.band_groups) {
        (Some(kg), Some(bg)) => check_layout(ranks, kg, bg, p).err(),
        (Some(kg), None) => Some(
            check_layout(ranks, kg, 1, p)
                .err()
                .unwrap_or_else(|| format!("no band-group count fits {kg} k-point groups")),
        ),
        (None, Some(bg)) => Some(
            check_layout(ranks, 1, bg, p)
                .err()
                .unwrap_or_else(|| format!("no k-point-group count fits {bg} band groups")),
        ),
        (None, None) => None,
    }
    .unwrap_or_else(|| {
        format!(
            "{ranks} ranks cannot be split over {} k-points, {} bands and {} FFT planes",
            p.kpoints, p.bands, p.fft_planes
        )
    });
    let dist = |(kg, bg): (usize, usize)| {
        let d = |a: usize, b: usize| ((a as f64) / (b as f64)).ln().abs();
        r.kpoint_groups.map_or(0.0, |_| d(kg, kg0)) + r.band_groups.map_or(0.0, |_| d(bg, bg0))
    };
    let nearest = valid
        .iter()
        .copied()
        .map(|l| (l, dist(l), layout_cost(ranks, l.0, l.1, p)))
        .min_by(|a, b| a.1.total_cmp(&b.1).then(a.2.total_cmp(&b.2)))
        .map(|(l, _, _)| make(l));
    Err(LayoutError {
        ranks,
        reason,
        nearest,
    })
}

/// The communicators of one rank in the parallel grid.
pub struct Topology {
    /// The resolved layout.
    pub layout: Layout,
    /// All ranks.
    pub world: Arc<dyn Communicator>,
    /// This rank's position after placement emulation (the rank the grid is built from).
    pub logical_rank: usize,
    /// Index of this rank's k-point group.
    pub kpoint_group: usize,
    /// Index of this rank's band group inside its k-point group.
    pub band_group: usize,
    /// This rank's index among the ranks sharing a band's G-vectors.
    pub gvector_rank: usize,
    /// Every rank of this k-point group.
    pub kgroup: Arc<dyn Communicator>,
    /// The ranks at the same position in every k-point group (class [`CommClass::Kpoint`]).
    pub inter_kpoint: Arc<dyn Communicator>,
    /// The ranks of this k-point group with the same G index, one per band group (class
    /// [`CommClass::Band`]).
    pub band: Arc<dyn Communicator>,
    /// This band group: the ranks sharing the G-vectors of its bands (class
    /// [`CommClass::GVector`]).
    pub gvector: Arc<dyn Communicator>,
    /// The ranks on this node.
    pub node: Arc<dyn Communicator>,
    /// Number of nodes.
    pub nodes: usize,
}

impl fmt::Debug for Topology {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Topology")
            .field("layout", &self.layout)
            .field("logical_rank", &self.logical_rank)
            .field("kpoint_group", &self.kpoint_group)
            .field("band_group", &self.band_group)
            .field("gvector_rank", &self.gvector_rank)
            .field("nodes", &self.nodes)
            .finish()
    }
}

impl Topology {
    /// Resolve `request` on `world` and build the level communicators (collective). Every
    /// rank gets the same error when the layout is impossible.
    pub fn new(
        world: Arc<dyn Communicator>,
        request: &LayoutRequest,
    ) -> Result<Topology, LayoutError> {
        let n = world.size();
        let layout = resolve_layout(n, request)?;
        // Node structure: the world rank of every rank's node leader.
        let node = world.split_shared();
        let mut leader = [world.rank() as u64];
        node.broadcast(&mut leader, 0, CommClass::Other);
        let leader_of = world.allgatherv(&leader, CommClass::Other);
        let mut leaders = leader_of.clone();
        leaders.sort_unstable();
        leaders.dedup();
        let nodes = leaders.len();
        let logical_rank = match layout.placement {
            Placement::Smp => world.rank(),
            Placement::Folded => {
                let members: Vec<Vec<usize>> = leaders
                    .iter()
                    .map(|&l| (0..n).filter(|&r| leader_of[r] == l).collect())
                    .collect();
                let widest = members.iter().map(Vec::len).max().unwrap_or(0);
                let order: Vec<usize> = (0..widest)
                    .flat_map(|j| members.iter().filter_map(move |m| m.get(j).copied()))
                    .collect();
                order
                    .iter()
                    .position(|&r| r == world.rank())
                    .expect("every rank is on a node")
            }
        };
        let (kg, bg, gg) = (
            layout.kpoint_groups,
            layout.band_groups,
            layout.gvector_groups,
        );
        let per_k = bg * gg;
        let k = logical_rank / per_k;
        let i = logical_rank % per_k;
        let (b, g) = match layout.order {
            RankOrder::GConsecutive => (i / gg, i % gg),
            RankOrder::BandConsecutive => (i % bg, i / bg),
        };
        debug_assert!(k < kg);
        let key = logical_rank as i64;
        let split = |color: usize| {
            world
                .split(Some(color as u32), key)
                .expect("a coloured rank gets a communicator")
        };
        let kgroup = split(k);
        let inter_kpoint = split(i);
        let band = split(k * gg + g);
        let gvector = split(k * bg + b);
        Ok(Topology {
            layout,
            world,
            logical_rank,
            kpoint_group: k,
            band_group: b,
            gvector_rank: g,
            kgroup,
            inter_kpoint,
            band,
            gvector,
            node,
            nodes,
        })
    }
}
