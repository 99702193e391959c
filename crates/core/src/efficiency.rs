//! The parallel efficiency report and the time projection of a run.
//!
//! Contract: [`ParallelReport::gather`] is collective over the run's world communicator and
//! returns the same report on every rank. Per level of the layout (k-point, band, G-vector):
//! - computation: mean seconds of block work (eigensolver, density, forces, stress) per rank;
//! - waiting: mean of (slowest rank's block work − this rank's), the load imbalance the level's
//!   collectives absorb;
//! - communication: mean seconds inside the level's collectives, less that waiting;
//! - efficiency = computation / (computation + communication + waiting); a level whose ranks
//!   repeat the same work (G-vector groups before they are distributed) is 1/ways.
//!
//! Each level's communication is also split by operation ([`OperationReport`]: transposes,
//! overlap sums, the subspace solution, ring passes, density work), means per rank.
//!
//! The projection follows VASP's: t_total(N) = t_init + N·t_iter + t_post, where t_iter is the
//! mean of iterations 2..n (the first, from random bands, is dearer: its excess counts in
//! t_init), and N is the iteration count of a converged run or, for a run stopped early, the
//! count at which the density residual, falling at its mean rate so far, meets the tolerance.

use crate::parallel::Parallel;
use crate::scf::IterationInfo;
use planewave_comm::{CommClass, CommExt, Operation, Stats};
use serde::Serialize;

/// One level of the layout.
#[derive(Debug, Clone, Serialize)]
pub struct LevelReport {
    /// "k-point", "band" or "G-vector".
    pub level: &'static str,
    /// Number of groups at this level.
    pub ways: usize,
    /// Mean computation seconds per rank.
    pub computation_s: f64,
    /// Mean communication seconds per rank (waiting excluded).
    pub communication_s: f64,
    /// Mean waiting (load imbalance) seconds per rank.
    pub waiting_s: f64,
    /// computation / (computation + communication + waiting), in 0..1.
    pub efficiency: f64,
    /// What the level does in this run.
    pub note: String,
}

/// One level's communication in one operation, means over the ranks.
#[derive(Debug, Clone, Serialize)]
pub struct OperationReport {
    /// "k-point", "band", "G-vector" or "other".
    pub level: &'static str,
    /// "transposes", "overlaps", "subspace", "ring", "density" or "other".
    pub operation: &'static str,
    /// Calls per rank.
    pub calls: f64,
    /// MiB sent per rank.
    pub mebibytes: f64,
    /// Seconds per rank inside the calls, waiting included.
    pub seconds: f64,
    /// Seconds of those spent waiting for peers.
    pub waiting_s: f64,
}

/// The least and the most computation of any rank: its block work less the band and G-vector
/// communication inside it (so a rank's extra work shows, which the others then wait for).
#[derive(Debug, Clone, Serialize)]
pub struct RankSpread {
    /// Seconds of the least loaded rank.
    pub min_s: f64,
    /// Its world rank.
    pub min_rank: usize,
    /// Seconds of the most loaded rank.
    pub max_s: f64,
    /// Its world rank.
    pub max_rank: usize,
}

impl RankSpread {
    /// From every rank's gathered row: block seconds at 0, G and band seconds at 3 and 5.
    fn of(rows: &[&[f64]]) -> Self {
        let compute: Vec<f64> = rows.iter().map(|r| r[0] - r[3] - r[5]).collect();
        let by = |better: fn(f64, f64) -> bool| {
            (0..compute.len()).fold(0, |b, r| if better(compute[r], compute[b]) { r } else { b })
        };
        let (lo, hi) = (by(|a, b| a < b), by(|a, b| a > b));
        RankSpread {
            min_s: compute[lo],
            min_rank: lo,
            max_s: compute[hi],
            max_rank: hi,
        }
    }
}

/// The levels of [`OperationReport`], with their classes.
const OPERATION_LEVELS: [(CommClass, &str); 4] = [
    (CommClass::Kpoint, "k-point"),
    (CommClass::Band, "band"),
    (CommClass::GVector, "G-vector"),
    (CommClass::Other, "other"),
];

/// This rank's (calls, bytes, seconds, waiting) per level and operation, flat.
fn operation_cells(stats: &Stats) -> Vec<f64> {
    let mut v = Vec::with_capacity(OPERATION_LEVELS.len() * Operation::ALL.len() * 4);
    for (class, _) in OPERATION_LEVELS {
        for op in Operation::ALL {
            let c = stats.get_operation(class, op);
            v.extend([c.calls as f64, c.bytes as f64, c.seconds, c.wait_seconds]);
        }
    }
    v
}

/// The means over ranks of [`operation_cells`] rows, as reports (cells with calls only).
fn operation_reports(rows: &[&[f64]]) -> Vec<OperationReport> {
    let n = rows.len() as f64;
    let mean = |i: usize| rows.iter().map(|r| r[i]).sum::<f64>() / n;
    let mut out = Vec::new();
    for (li, (_, level)) in OPERATION_LEVELS.iter().enumerate() {
        for (oi, op) in Operation::ALL.iter().enumerate() {
            let at = 4 * (li * Operation::ALL.len() + oi);
            if mean(at) > 0.0 {
                out.push(OperationReport {
                    level,
                    operation: op.name(),
                    calls: mean(at),
                    mebibytes: mean(at + 1) / (1u64 << 20) as f64,
                    seconds: mean(at + 2),
                    waiting_s: mean(at + 3),
                });
            }
        }
    }
    out
}

/// VASP's projection of the run time.
#[derive(Debug, Clone, Serialize)]
pub struct Projection {
    /// Set-up plus the first iteration's excess (s).
    pub t_init_s: f64,
    /// Mean SCF iteration (s).
    pub t_iter_s: f64,
    /// After the SCF: forces, stress, output (s).
    pub t_post_s: f64,
    /// Iterations run.
    pub iterations: usize,
    /// Iterations of the converged run (run or projected); None when the residual does not fall.
    pub iterations_to_converge: Option<usize>,
    /// t_init + N t_iter + t_post for that N (s).
    pub t_total_s: Option<f64>,
}

impl Projection {
    /// From the iteration history, the set-up and post-processing seconds, and the density
    /// tolerance the run aims at.
    pub fn new(
        setup_s: f64,
        history: &[IterationInfo],
        post_s: f64,
        converged: bool,
        tolerance: f64,
    ) -> Self {
        let n = history.len();
        let t_iter = if n > 1 {
            history[1..].iter().map(|i| i.seconds).sum::<f64>() / (n - 1) as f64
        } else {
            history.first().map_or(0.0, |i| i.seconds)
        };
        let first_excess = history.first().map_or(0.0, |i| i.seconds - t_iter);
        let needed = if converged {
            Some(n)
        } else if n >= 2 {
            let (r1, rn) = (history[0].residual, history[n - 1].residual);
            let rate = (rn / r1).powf(1.0 / (n - 1) as f64);
            (rate < 1.0 && rn > 0.0)
                .then(|| n + ((tolerance / rn).ln() / rate.ln() - 1e-9).ceil().max(0.0) as usize)
        } else {
            None
        };
        let t_init = setup_s + first_excess;
        Projection {
            t_init_s: t_init,
            t_iter_s: t_iter,
            t_post_s: post_s,
            iterations: n,
            iterations_to_converge: needed,
            t_total_s: needed.map(|m| t_init + m as f64 * t_iter + post_s),
        }
    }
}

/// The whole report (the results JSON's `parallel` key).
#[derive(Debug, Clone, Serialize)]
pub struct ParallelReport {
    /// Back end: solo, threads or mpi.
    pub backend: &'static str,
    /// World ranks.
    pub ranks: usize,
    /// Threads per rank.
    pub threads_per_rank: usize,
    /// Nodes (ranks that share memory count as one).
    pub nodes: usize,
    /// k-point groups.
    pub kpoint_groups: usize,
    /// Band groups per k-point group.
    pub band_groups: usize,
    /// Ranks per band group (sharing G-vectors).
    pub gvector_groups: usize,
    /// The k-point-group sum strategy.
    pub kpoint_sum: String,
    /// (spin, k) blocks of the run.
    pub blocks: usize,
    /// Per level.
    pub levels: Vec<LevelReport>,
    /// Each level's communication split by operation (cells with calls only).
    pub operations: Vec<OperationReport>,
    /// The least and the most loaded rank.
    pub compute_per_rank: RankSpread,
    /// Product of the level efficiencies.
    pub overall_efficiency: f64,
    /// What is wasted and what to do about it.
    pub advice: Vec<String>,
    /// The time projection.
    pub projection: Projection,
}

impl ParallelReport {
    /// Gather the report over the world of `par` (collective). `threads`: threads per rank;
    /// `band_algorithm`: the band groups' products; `extra_advice`: remarks from the launcher
    /// (oversubscribed cores).
    pub fn gather(
        par: &Parallel,
        (nspin, nkpoints): (usize, usize),
        (threads, band_algorithm): (usize, crate::tuning::BandAlgorithm),
        projection: Projection,
        extra_advice: Vec<String>,
    ) -> Self {
        let topo = par.topology();
        let world = par.world();
        let k = world.stats().get(CommClass::Kpoint);
        let gv = world.stats().get(CommClass::GVector);
        let bd = world.stats().get(CommClass::Band);
        let mut mine = vec![
            par.block_seconds(),
            k.seconds,
            k.wait_seconds,
            gv.seconds,
            gv.wait_seconds,
            bd.seconds,
            bd.wait_seconds,
        ];
        let split = mine.len();
        mine.extend(operation_cells(&world.stats()));
        let all = world.allgatherv(&mine, CommClass::Other);
        let rows: Vec<&[f64]> = all.chunks(mine.len()).collect();
        let operations = operation_reports(&rows.iter().map(|r| &r[split..]).collect::<Vec<_>>());
        let n = rows.len() as f64;
        let mean = |i: usize| rows.iter().map(|r| r[i]).sum::<f64>() / n;
        let slowest = rows.iter().map(|r| r[0]).fold(0.0, f64::max);
        let compute = mean(0);
        let waiting = slowest - compute;
        let comm = (mean(1) - waiting).max(0.0);
        let layout = par.layout();
        let blocks = nspin * nkpoints;
        let share = |x: f64, t: f64| if t > 0.0 { x / t } else { 1.0 };
        let k_eff = if layout.kpoint_groups > 1 {
            share(compute, compute + comm + waiting)
        } else {
            1.0
        };
        let g = layout.gvector_groups;
        let b = layout.band_groups;
        // Inside block work: band-ring transfers and sums (class band), G-vector transposes and
        // sums (class G), and the waiting in them.
        let (b_wait, b_comm) = (mean(6), (mean(5) - mean(6)).max(0.0));
        let b_compute = (compute - b_comm - b_wait).max(0.0);
        let (g_wait, g_comm) = (mean(4), (mean(3) - mean(4)).max(0.0));
        let g_compute = (b_compute - g_comm - g_wait).max(0.0);
        let levels = vec![
            LevelReport {
                level: "k-point",
                ways: layout.kpoint_groups,
                computation_s: compute,
                communication_s: comm,
                waiting_s: waiting,
                efficiency: k_eff,
                note: format!(
                    "{blocks} (spin, k) blocks over {} groups",
                    layout.kpoint_groups
                ),
            },
            LevelReport {
                level: "band",
                ways: b,
                computation_s: b_compute,
                communication_s: b_comm,
                waiting_s: b_wait,
                efficiency: share(b_compute, compute),
                note: if b > 1 {
                    format!(
                        "bands dealt round-robin over {b} groups (band products: {band_algorithm})"
                    )
                } else {
                    "bands not distributed".into()
                },
            },
            LevelReport {
                level: "G-vector",
                ways: g,
                computation_s: g_compute,
                communication_s: g_comm,
                waiting_s: g_wait,
                efficiency: share(g_compute, b_compute),
                note: if g > 1 {
                    format!(
                        "plane waves and density grid over {g} ranks (transposes: {}; subspace problems: {})",
                        par.alltoallv_name(),
                        planewave_linalg::subspace::describe_eigen_solver(&*topo.gvector)
                    )
                } else {
                    "G-vectors not distributed".into()
                },
            },
        ];
        let overall = levels.iter().map(|l| l.efficiency).product();
        let mut advice = extra_advice;
        if layout.kpoint_groups > 1 && !blocks.is_multiple_of(layout.kpoint_groups) {
            advice.push(format!(
                "{blocks} (spin, k) blocks do not divide over {} k-point groups: some groups wait (k-point efficiency {:.0}%); {} or {} groups would balance",
                layout.kpoint_groups,
                100.0 * k_eff,
                largest_divisor_at_most(blocks, layout.kpoint_groups),
                blocks
            ));
        }
        let scf_s = projection.t_iter_s * projection.iterations as f64;
        let serial = world.size() == 1 && threads == 1;
        if !serial && (projection.iterations < 3 || scf_s < 1.0) {
            advice.push(format!(
                "a short run ({} iterations, {:.2} s): timings this small are noisy; judge the layout on a longer run",
                projection.iterations, scf_s
            ));
        }
        ParallelReport {
            backend: world.backend(),
            ranks: world.size(),
            threads_per_rank: threads,
            nodes: topo.nodes,
            kpoint_groups: layout.kpoint_groups,
            band_groups: layout.band_groups,
            gvector_groups: g,
            kpoint_sum: par.sum_algorithm().name().into(),
            blocks,
            levels,
            operations,
            compute_per_rank: RankSpread::of(&rows),
            overall_efficiency: overall,
            advice,
            projection,
        }
    }
}

fn largest_divisor_at_most(n: usize, m: usize) -> usize {
    (1..=m.min(n))
        .rev()
        .find(|d| n.is_multiple_of(*d))
        .unwrap_or(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn it(i: usize, residual: f64, seconds: f64) -> IterationInfo {
        IterationInfo {
            iteration: i,
            energy: 0.0,
            delta_e: 0.0,
            residual,
            seconds,
            eigensolver_iterations: 0.0,
            estimated: false,
        }
    }

    #[test]
    fn projection_extrapolates_the_residual() {
        let h = [it(1, 1e-1, 3.0), it(2, 1e-2, 1.0), it(3, 1e-3, 1.0)];
        let p = Projection::new(2.0, &h, 0.5, false, 1e-7);
        assert_eq!(p.t_iter_s, 1.0);
        assert_eq!(p.t_init_s, 4.0);
        assert_eq!(p.iterations_to_converge, Some(7));
        assert_eq!(p.t_total_s, Some(4.0 + 7.0 + 0.5));
        let done = Projection::new(2.0, &h, 0.5, true, 1e-7);
        assert_eq!(done.iterations_to_converge, Some(3));
        let flat = [it(1, 1e-2, 1.0), it(2, 1e-2, 1.0)];
        assert_eq!(
            Projection::new(0.0, &flat, 0.0, false, 1e-7).t_total_s,
            None
        );
    }
}
