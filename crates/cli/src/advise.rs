//! `planewave advise`: the valid layouts of a run on N ranks ranked by predicted seconds per
//! SCF iteration, with memory per rank.
//!
//! The cost model (seconds, one rank, one thread) of one SCF iteration:
//! - each (spin, k) block: `nbands · (A_BAND + A_FFT · N log2 N) + A_DENSE · npw · nbands²`
//!   (N = FFT grid points): per-band work and FFTs, and the subspace algebra, over the
//!   eigensolver sweeps of one SCF iteration; blocks are dealt to k-point groups as the run
//!   deals them (by cost), and an iteration waits for the slowest group;
//! - for a hybrid, each block's exchange operator: `A_EXX · n_q · n_occ · nbands · N log2 N`
//!   per build (a pair density's two transforms and products for every band with every
//!   occupied orbital of every k + q), spread over `INNER_PER_OUTER` SCF iterations;
//! - the grid work (potentials, XC, mixing, symmetrisation): `A_GRID · nspin · N log2 N`;
//! - the sum over k-point groups: `LATENCY · log2(kg)` plus `BYTE · 8 N nspin / g` per
//!   iteration (each of a group's `g` ranks sums its part of the grid).
//!
//! Threads divide the computing terms with an efficiency of `THREAD_EFF` per doubling, except
//! that a rank without band groups or G-vector ranks solves small blocks one per thread
//! (`scf::blocks_concurrently`): its blocks are dealt by cost over its threads, and the slowest
//! thread's share sets the pace (si8_lda_gth_displaced on 2 cores, 2026-11-28: 1 × 2 threads
//! 2.24–2.32 s, 2 k-point groups 2.22–2.29 s). The
//! ranks of a k-point group form `b` band groups of `g` G-vector ranks: the band groups divide
//! the block work with an efficiency of `BAND_EFF` per doubling (the subspace products' ring
//! and reduce-scatter, the replicated subspace eigenproblem); the G-vector ranks divide the
//! block work and the grid work (both the plane waves and the density grid are dealt) with an
//! efficiency of `GVECTOR_EFF` per doubling (transposes and sums over G), times the balance of
//! the FFT grid's planes over the group (25 planes over 16 ranks leave some ranks 2 and others
//! 1: 25 / 32), and each band pays [`TRANSPOSES_PER_BAND`] messages per other rank of its
//! G-vector group per iteration (the all-to-all's, which threads do not divide) at the
//! intra-node link's latency ([`CommModel`]).
//!
//! On several nodes (`--nodes M`, ranks filling nodes in order, consecutive ranks in one G-vector
//! group as the run lays them out) the messages to ranks on other nodes pay the inter-node
//! link's latency, and their bytes (`16 N / g²` per pair and transpose) pass through the node's
//! network card, which the node's ranks share. Likewise the k-point sums between nodes
//! (`α ⌈log2(min(nodes, kg))⌉` and twice the grid's bytes) and the band groups' ring passes
//! ([`PRODUCTS_PER_BAND_SWEEP`] per block and iteration, each bringing every other band group's
//! block of `npw / g` rows; every rank is charged as many remote passes as its ring has members
//! on other nodes, an approximation of the systolic ring, whose crossings sit at node edges).
//!
//! Calibration (2-core AMD EPYC, AVX2, idle): the mean SCF iteration (`t_iter` of the report)
//! of si2_lda_gth, al1_lda_gth, si8_lda_gth_displaced and h1_lsda_gth_box at 1 rank × 1 thread
//! (`RAYON_NUM_THREADS=1 planewave run tests/data/qe/<case>/pw.in`), least-squares fit of the
//! three block constants to the per-block time (relative residuals within 12%); `A_GRID` from
//! h1's potential and mixing time; `THREAD_EFF` from si8 and al1 at 1 × 2 threads;
//! `GVECTOR_EFF` from si64_lda_gth_gamma at 2 MPI ranks × 1 thread against 1 × 1 with the
//! density grid dealt too (t_iter 2.186 s vs 4.337 s: a speed-up of 1.98); `BAND_EFF` from the
//! same case with `--band-groups 2` against G-vector groups of 2 in one session (see the
//! constant).

use crate::comm_model::CommModel;
use planewave_core::eigensolver::Eigensolver;
use planewave_core::input::Kpoints;
use planewave_core::parallel::deal_by_cost;
use planewave_core::scf::blocks_small_enough;
use planewave_core::setup::{memory_per_rank, Setup};
use std::fmt::Write;

/// Seconds per (npw · nbands²) of subspace algebra per SCF iteration.
const A_DENSE: f64 = 3.3e-8;
/// Seconds per (nbands · N log2 N) of FFT work per SCF iteration.
const A_FFT: f64 = 2.0e-9;
/// Seconds per band of fixed work (projectors, small dense problems) per SCF iteration.
const A_BAND: f64 = 1.7e-3;
/// Seconds per (nspin · N log2 N) of grid work on one rank (divided over a G-vector group).
const A_GRID: f64 = 1.9e-8;
/// Seconds per (pair · N log2 N) of an exchange operator build, one thread.
const A_EXX: f64 = 1.4e-9;
/// SCF iterations per exchange operator build (si2_pbe0_gth: 25 iterations, 6 builds;
/// h2o_pbe0_gth_gamma: 37, 6).
const INNER_PER_OUTER: f64 = 5.0;
/// Seconds per collective step of the k-point sum.
const LATENCY: f64 = 1.0e-4;
/// Seconds per byte summed over k-point groups.
const BYTE: f64 = 2.0e-9;
/// Fraction of linear speed-up kept per doubling of the threads.
const THREAD_EFF: f64 = 0.8;
/// Fraction of linear speed-up kept per doubling of the ranks of a G-vector group.
const GVECTOR_EFF: f64 = 0.99;
/// Transposes per band per SCF iteration (the eigensolver's H applications and the density),
/// each one message to every other rank of the G-vector group. With the built-in intra-node
/// latency (1.67 µs, [`CommModel::built_in`]) a band pays 1.5e-5 s per other rank and
/// iteration, chosen so that the lent 16-core node's ranking holds: si8_lda_gth_displaced ran
/// in 1.89 s on 8 k-point groups × 2 G ranks and in 2.28 s on 1 × 16 (2026-11-25).
pub const TRANSPOSES_PER_BAND: f64 = 9.0;
/// Band-distributed products per (spin, k) block and SCF iteration, each passing every other
/// band group's block around the ring.
pub const PRODUCTS_PER_BAND_SWEEP: f64 = 6.0;
/// Fraction of linear speed-up kept per doubling of the band groups: si64_lda_gth_gamma on 2
/// MPI ranks × 1 thread, t_iter 2.057 and 1.847 s with 2 band groups against 1.709 and 1.685 s
/// with a G-vector group of 2 (alternated, one session, 2026-11-23): 0.99 × 1.70 / 1.95.
const BAND_EFF: f64 = 0.86;

/// One candidate layout with its prediction.
struct Candidate {
    ranks: usize,
    threads: usize,
    kpoint_groups: usize,
    band_groups: usize,
    gvector_ranks: usize,
    seconds: f64,
    /// Of `seconds`, the modelled communication.
    communication: f64,
    slowest_blocks: usize,
    /// Whether a rank solves its blocks one per thread.
    blocks_per_thread: bool,
    memory: f64,
}

/// Speed-up of `n` workers keeping `eff` of linear speed-up per doubling.
fn speedup(n: usize, eff: f64) -> f64 {
    let t = n.max(1) as f64;
    t * eff.powf(t.log2())
}

/// Speed-up of a G-vector group of `g` ranks over `planes` FFT planes: [`GVECTOR_EFF`] per
/// doubling, times the planes' balance (the rank with the most planes sets the pace).
fn gvector_speedup(g: usize, planes: usize) -> f64 {
    let balance = planes as f64 / (g * planes.div_ceil(g)) as f64;
    speedup(g, GVECTOR_EFF) * balance.min(1.0)
}

/// A hybrid's exchange operator build per (spin, k) block, per SCF iteration (s, one rank,
/// one thread); 0 for a semilocal functional.
fn exchange_per_block(s: &Setup) -> f64 {
    let Some(h) = &s.model.hybrid else {
        return 0.0;
    };
    let n = s.basis.grid_len() as f64;
    let n_q: usize = h.kernel.q_grid.iter().product();
    let n_occ = (s.model.n_electrons / s.model.max_occupation()).ceil();
    A_EXX * n_q as f64 * n_occ * s.params.nbands as f64 * n * n.log2() / INNER_PER_OUTER
}

/// Where the ranks of a projection sit, and the links between them.
pub struct Machine<'m> {
    /// Nodes the ranks fill in order (equal shares).
    pub nodes: usize,
    /// The links.
    pub model: &'m CommModel,
}

/// For the ranks `first + i · stride` (i < `size`) of one group, on nodes of `per_node`
/// consecutive ranks: the most other members one member has on its own node and on others.
fn partners(first: usize, size: usize, stride: usize, per_node: usize) -> (usize, usize) {
    let mut on_node = std::collections::HashMap::new();
    for i in 0..size {
        *on_node
            .entry((first + i * stride) / per_node)
            .or_insert(0usize) += 1;
    }
    let most = on_node.values().copied().max().unwrap_or(1);
    let fewest = on_node.values().copied().min().unwrap_or(1);
    // The most company on one's own node, and the most members elsewhere.
    (most - 1, size - fewest)
}

/// The most other members on the same node and on other nodes that any rank has in its G-vector
/// group, its band ring and its k-point sum, for the layout `(kg, bg, g)` of `ranks` ranks on
/// nodes of `per_node` (G-vector groups of consecutive ranks).
fn placement(
    ranks: usize,
    (kg, bg, g): (usize, usize, usize),
    per_node: usize,
) -> [(usize, usize); 3] {
    let worst = |groups: Vec<(usize, usize, usize)>| {
        (groups.into_iter())
            .map(|(first, size, stride)| partners(first, size, stride, per_node))
            .fold((0, 0), |a, b| (a.0.max(b.0), a.1.max(b.1)))
    };
    let per_k = bg * g;
    let gvector = worst((0..ranks / g).map(|i| (i * g, g, 1)).collect());
    let band = worst(
        (0..kg)
            .flat_map(|k| (0..g).map(move |i| (k * per_k + i, bg, g)))
            .collect(),
    );
    let kpoint = worst((0..per_k).map(|i| (i, kg, per_k)).collect());
    [gvector, band, kpoint]
}

/// The prediction for `kg` k-point groups of `bg` band groups on `ranks` ranks of `machine`.
fn predict(
    s: &Setup,
    ranks: usize,
    (kg, bg): (usize, usize),
    threads: usize,
    machine: &Machine<'_>,
) -> Candidate {
    let nb = s.params.nbands as f64;
    let nlogn = |n: usize| n as f64 * (n as f64).log2();
    let n = nlogn(s.basis.grid_len());
    let g = ranks / (kg * bg);
    // The bands' own smaller grid serves serial transforms only (`wfc_grid`).
    let band_fft = nlogn(if g == 1 {
        s.basis.band_fft().grid().len()
    } else {
        s.basis.grid_len()
    });
    let nspin = s.model.nspin();
    let exchange = exchange_per_block(s);
    let costs: Vec<f64> = (0..nspin)
        .flat_map(|_| s.basis.kpoints.iter())
        .map(|k| {
            nb * (A_BAND + A_FFT * band_fft) + A_DENSE * k.global_dim() as f64 * nb * nb + exchange
        })
        .collect();
    let owner = deal_by_cost(&costs, kg);
    let group = |g: usize| owner.iter().zip(&costs).filter(move |(o, _)| **o == g);
    let g_speedup = gvector_speedup(g, s.basis.grid.dims[2]);
    let divided = speedup(bg, BAND_EFF) * g_speedup * speedup(threads, THREAD_EFF);
    let concurrent = bg == 1 && g == 1 && blocks_small_enough(&s.basis, s.params.nbands);
    let seconds_of = |grp: usize| {
        let mine: Vec<f64> = group(grp).map(|(_, c)| *c).collect();
        if concurrent && mine.len() > 1 && threads > 1 {
            blocks_side_by_side(&mine, threads)
        } else {
            mine.iter().sum::<f64>() / divided
        }
    };
    let (blocks, slowest_blocks) = (0..kg)
        .map(|grp| (seconds_of(grp), group(grp).count()))
        .fold((0.0, 0), |a, b| if b.0 > a.0 { b } else { a });
    let blocks_per_thread = concurrent && threads > 1 && slowest_blocks > 1;
    let grid = A_GRID * nspin as f64 * n / g_speedup;
    let comm = communication(s, ranks, (kg, bg, g), slowest_blocks, machine);
    Candidate {
        ranks,
        threads,
        kpoint_groups: kg,
        band_groups: bg,
        gvector_ranks: g,
        seconds: blocks + grid / speedup(threads, THREAD_EFF) + comm,
        communication: comm,
        slowest_blocks,
        blocks_per_thread,
        memory: memory_per_rank(
            &s.model,
            s.basis.ecut,
            (slowest_blocks, s.basis.kpoints.len() * s.model.nspin()),
            s.params.nbands,
            (bg, g),
            matches!(s.spec.kpoints, Kpoints::Gamma),
            s.params.eigensolver,
        ),
    }
}

/// Seconds of blocks of one-thread seconds `costs` solved one per thread on `threads` threads:
/// dealt by cost over `min(threads, blocks)` lanes, the slowest lane's, each lane's block on its
/// share of the threads.
fn blocks_side_by_side(costs: &[f64], threads: usize) -> f64 {
    let lanes = threads.min(costs.len());
    let owner = deal_by_cost(costs, lanes);
    let slowest = (0..lanes)
        .map(|l| {
            (owner.iter().zip(costs))
                .filter(|(o, _)| **o == l)
                .map(|(_, c)| c)
                .sum::<f64>()
        })
        .fold(0.0, f64::max);
    slowest / speedup(threads / lanes, THREAD_EFF)
}

/// Seconds per SCF iteration of the messages the model counts for layout `(kg, bg, g)`: the
/// transposes' latency, the k-point sums, and on several nodes what crosses the network (module
/// doc).
fn communication(
    s: &Setup,
    ranks: usize,
    (kg, bg, g): (usize, usize, usize),
    slowest_blocks: usize,
    machine: &Machine<'_>,
) -> f64 {
    let (intra, inter) = (&machine.model.intra, &machine.model.inter);
    let per_node = ranks.div_ceil(machine.nodes).max(1);
    let [(g_local, g_remote), (_, b_remote), (_, k_remote)] =
        placement(ranks, (kg, bg, g), per_node);
    // A node's card carries the remote bytes of every rank on it.
    let card = per_node as f64 * inter.seconds_per_byte;
    let (nb, n, nspin) = (
        s.params.nbands as f64,
        s.basis.grid_len() as f64,
        s.model.nspin() as f64,
    );
    let transposes = slowest_blocks as f64 * (nb / bg as f64).ceil() * TRANSPOSES_PER_BAND;
    let pair_bytes = 16.0 * n / (g * g) as f64;
    let mut t = transposes
        * (g_local as f64 * intra.latency_s
            + g_remote as f64 * (inter.latency_s + pair_bytes * card));
    if kg > 1 {
        let grid_bytes = 8.0 * n * nspin / g as f64;
        t += LATENCY * (kg as f64).log2() + BYTE * grid_bytes;
        if k_remote > 0 {
            let steps = (machine.nodes.min(kg) as f64).log2().ceil();
            t += steps * inter.latency_s + 2.0 * grid_bytes * card;
        }
    }
    if b_remote > 0 {
        let npw = (s.basis.kpoints.iter())
            .map(|k| k.global_dim())
            .max()
            .unwrap_or(0) as f64;
        let block_bytes = 16.0 * (nb / bg as f64).ceil() * npw / g as f64;
        t += PRODUCTS_PER_BAND_SWEEP
            * slowest_blocks as f64
            * b_remote as f64
            * (inter.latency_s + block_bytes * card);
    }
    t
}

/// What `advise` ranks: the layouts of a given number of ranks (threads given, or this
/// machine's cores shared among a node's ranks), or every ranks × threads split of a number of
/// cores (ranks a multiple of the nodes).
#[derive(Clone, Copy, Debug)]
pub enum Shape {
    /// `ranks` ranks of `threads` threads.
    Ranks {
        /// MPI (or in-process) ranks.
        ranks: usize,
        /// Threads per rank.
        threads: Option<usize>,
    },
    /// Every split of this many cores.
    Cores(usize),
}

impl Shape {
    /// The (ranks, threads) pairs to rank on `nodes` nodes, and the header's words for them.
    fn splits(self, nodes: usize) -> (Vec<(usize, usize)>, String) {
        match self {
            Shape::Ranks { ranks, threads } => {
                let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
                let t = threads.unwrap_or((cores / ranks.div_ceil(nodes)).max(1));
                (vec![(ranks, t)], format!("{ranks} rank(s) x {t} thread(s)"))
            }
            Shape::Cores(c) => (
                (1..=c)
                    .filter(|r| c.is_multiple_of(*r) && r.is_multiple_of(nodes))
                    .map(|r| (r, c / r))
                    .collect(),
                format!("{c} cores (every ranks x threads split)"),
            ),
        }
    }
}

/// The layouts of `ranks` ranks of `threads` threads on `machine`.
fn layouts(s: &Setup, (ranks, threads): (usize, usize), machine: &Machine<'_>) -> Vec<Candidate> {
    let blocks = s.basis.kpoints.len() * s.model.nspin();
    // Band groups need the Davidson eigensolver and at least one band each.
    let band_ok = !matches!(s.params.eigensolver, Eigensolver::Lobpcg);
    (1..=ranks.min(blocks))
        .filter(|kg| ranks.is_multiple_of(*kg))
        .flat_map(|kg| {
            let per_group = ranks / kg;
            (1..=per_group)
                .filter(move |bg| per_group.is_multiple_of(*bg))
                .filter(move |&bg| bg == 1 || (band_ok && bg <= s.params.nbands))
                .map(move |bg| (kg, bg))
        })
        .map(|layout| predict(s, ranks, layout, threads, machine))
        .collect()
}

/// The advice table for `s` in `shape` on `machine`.
pub fn advise(s: &Setup, shape: Shape, machine: &Machine<'_>) -> String {
    let blocks = s.basis.kpoints.len() * s.model.nspin();
    let (splits, words) = shape.splits(machine.nodes);
    let mut cands: Vec<Candidate> = (splits.iter())
        .flat_map(|&split| layouts(s, split, machine))
        .collect();
    cands.sort_by(|a, b| a.seconds.total_cmp(&b.seconds));
    let serial = predict(s, 1, (1, 1), 1, machine).seconds;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "layouts of {} on {words} over {} node(s): {blocks} (spin, k) blocks, {} bands, FFT grid {}x{}x{}",
        s.spec.source.display(),
        machine.nodes,
        s.params.nbands,
        s.basis.grid.dims[0],
        s.basis.grid.dims[1],
        s.basis.grid.dims[2]
    );
    let _ = writeln!(
        out,
        "communication model: {}; {}",
        machine.model.source,
        machine.model.describe()
    );
    let _ = writeln!(
        out,
        "  {:>4} {:>13} {:>11} {:>14} {:>16} {:>9} {:>18} {:>16} {:>16}",
        "rank",
        "kpoint_groups",
        "band_groups",
        "G ranks/band",
        "s/iteration",
        "speed-up",
        "memory/rank (MiB)",
        "of which comm s",
        "ranks x threads"
    );
    for (i, c) in cands.iter().enumerate() {
        let _ = writeln!(
            out,
            "  {:>4} {:>13} {:>11} {:>14} {:>16.3} {:>9.2} {:>18.1} {:>16.3} {:>16}",
            i + 1,
            c.kpoint_groups,
            c.band_groups,
            c.gvector_ranks,
            c.seconds,
            serial / c.seconds,
            c.memory / 1048576.0,
            c.communication,
            format!("{}x{}", c.ranks, c.threads)
        );
    }
    if let Some(best) = cands.first() {
        let exchange = exchange_per_block(s) * blocks as f64;
        if exchange > 0.0 {
            let _ = writeln!(
                out,
                "exact exchange dominates: about {:.0}% of a serial SCF iteration (its operator, rebuilt every ~{INNER_PER_OUTER:.0} iterations); it divides over k-point groups, band groups (each applies it to its own bands) and G-vector groups",
                100.0 * exchange / serial
            );
        }
        let _ = writeln!(out, "why: {}", why(best, &cands, blocks));
    }
    if let Some(c) = cands.first() {
        let _ = writeln!(
            out,
            "run it with: RAYON_NUM_THREADS={} planewave run {} --ranks {} --kpoint-groups {} --band-groups {} (or mpirun -np {} planewave run ... with an MPI build)",
            c.threads,
            s.spec.source.display(),
            c.ranks,
            c.kpoint_groups,
            c.band_groups,
            c.ranks
        );
    }
    out
}

/// The "why" line: what the best layout's numbers say against the most k-point groups.
fn why(best: &Candidate, cands: &[Candidate], blocks: usize) -> String {
    let most_k = cands
        .iter()
        .filter(|c| c.kpoint_groups == cands.iter().map(|c| c.kpoint_groups).max().unwrap_or(1))
        .min_by(|a, b| a.seconds.total_cmp(&b.seconds))
        .unwrap_or(best);
    let mut text = if best.kpoint_groups == most_k.kpoint_groups {
        format!(
            "{} k-point group(s) leave the slowest group {} of the {blocks} blocks; k-point groups cost one density sum per iteration, band and G-vector groups communication inside every band block, so k-point groups come first.",
            best.kpoint_groups, best.slowest_blocks
        )
    } else {
        format!(
            "{} k-point group(s), not {}: with {} the slowest group would hold {} of the {blocks} blocks and an iteration would take {:.3} s, against {:.3} s here, since {}.",
            best.kpoint_groups,
            most_k.kpoint_groups,
            most_k.kpoint_groups,
            most_k.slowest_blocks,
            most_k.seconds,
            best.seconds,
            if most_k.slowest_blocks * most_k.kpoint_groups > blocks {
                "the blocks do not divide evenly over that many groups"
            } else if best.blocks_per_thread {
                "a rank's threads share out its blocks as well as k-point groups would, with no sum between them"
            } else {
                "sharing each block over G-vector ranks costs less here than the k-point sums"
            }
        )
    };
    if best.blocks_per_thread {
        let _ = write!(
            text,
            " Each rank's {} threads solve its small (spin, k) blocks one per thread.",
            best.threads
        );
    }
    if best.band_groups > 1 {
        let _ = write!(
            text,
            " Each k-point group deals its bands over {} band groups (the subspace products circulate between them; no transposes for one rank per band group).",
            best.band_groups
        );
    }
    if best.gvector_ranks > 1 {
        let _ = write!(
            text,
            " Each band's {} G-vector ranks share its plane waves and the density grid (transposes in every FFT).",
            best.gvector_ranks
        );
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_side_by_side_wait_for_the_slowest_thread() {
        assert_eq!(blocks_side_by_side(&[1.0, 1.0, 1.0, 1.0], 2), 2.0);
        assert_eq!(blocks_side_by_side(&[3.0, 1.0, 1.0, 1.0], 2), 3.0);
        // More threads than blocks: each block on its share of them.
        let four = blocks_side_by_side(&[1.0; 4], 8);
        assert!(
            (four - 1.0 / speedup(2, THREAD_EFF)).abs() < 1e-15,
            "{four}"
        );
    }

    #[test]
    fn partners_count_members_on_the_same_node_and_elsewhere() {
        // Nodes of 16 ranks.
        assert_eq!(partners(0, 16, 1, 16), (15, 0), "a group filling one node");
        assert_eq!(partners(0, 64, 1, 16), (15, 48), "a group over four nodes");
        assert_eq!(
            partners(8, 16, 1, 16),
            (7, 8),
            "a group straddling two nodes"
        );
        assert_eq!(partners(0, 4, 16, 16), (0, 3), "one member per node");
        // 64 ranks as 4 band groups of 16 G ranks: G groups inside nodes, band rings across.
        assert_eq!(placement(64, (1, 4, 16), 16), [(15, 0), (0, 3), (0, 0)]);
        // 2 k-point groups of 32 G ranks on nodes of 16.
        assert_eq!(placement(64, (2, 1, 32), 16), [(15, 16), (0, 0), (0, 1)]);
    }
}
