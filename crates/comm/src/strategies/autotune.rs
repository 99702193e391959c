//! Start-up autotune of the all-to-all-v strategy.
//!
//! Contract: [`autotune_alltoallv`] is collective. It builds every candidate on the
//! communicator, runs one warm-up and `reps` timed exchanges of complex data with the call
//! site's real counts, takes the slowest rank's time for each (so every rank sees the same
//! numbers and makes the same choice), keeps the fastest candidate (ties go to the earlier one
//! in the list) and, when `log` is set, prints the timings and the choice on rank 0.

use super::{AlltoallvAlgorithm, AlltoallvStrategy};
use crate::communicator::{CommClass, Communicator};
use crate::element::ReduceOp;
use crate::ext::CommExt;
use num_complex::Complex64;
use std::sync::Arc;
use std::time::Instant;

/// What the autotune measured.
#[derive(Clone, Debug, PartialEq)]
pub struct AutotuneReport {
    /// Seconds per exchange (slowest rank) for every candidate.
    pub timings: Vec<(AlltoallvAlgorithm, f64)>,
    /// The fastest.
    pub chosen: AlltoallvAlgorithm,
}

/// Seconds per exchange of `strategy` (slowest rank), after one warm-up exchange.
pub fn time_alltoallv(
    strategy: &dyn AlltoallvStrategy,
    send_counts: &[usize],
    recv_counts: &[usize],
    reps: usize,
) -> f64 {
    let comm = strategy.comm();
    let send: Vec<Complex64> = (0..send_counts.iter().sum::<usize>())
        .map(|i| Complex64::new(i as f64, comm.rank() as f64))
        .collect();
    let mut recv = vec![Complex64::default(); recv_counts.iter().sum()];
    let run = |recv: &mut [Complex64]| {
        strategy.alltoallv_raw(
            crate::Slice::C64(&send),
            send_counts,
            crate::SliceMut::C64(recv),
            recv_counts,
            CommClass::Other,
        )
    };
    run(&mut recv);
    comm.barrier(CommClass::Other);
    let t0 = Instant::now();
    for _ in 0..reps.max(1) {
        run(&mut recv);
    }
    let mut t = [t0.elapsed().as_secs_f64() / reps.max(1) as f64];
    comm.allreduce(&mut t, ReduceOp::Max, CommClass::Other);
    t[0]
}

/// Time `candidates` on these counts and return the fastest, bound to `comm`.
pub fn autotune_alltoallv(
    comm: &Arc<dyn Communicator>,
    candidates: &[AlltoallvAlgorithm],
    send_counts: &[usize],
    recv_counts: &[usize],
    reps: usize,
    log: bool,
) -> (Box<dyn AlltoallvStrategy>, AutotuneReport) {
    assert!(
        !candidates.is_empty(),
        "planewave-comm: autotune needs a candidate"
    );
    let mut best: Option<(f64, Box<dyn AlltoallvStrategy>)> = None;
    let mut timings = Vec::new();
    for &a in candidates {
        let s = a.build(comm.clone());
        let t = time_alltoallv(&*s, send_counts, recv_counts, reps);
        timings.push((a, t));
        if best.as_ref().is_none_or(|(bt, _)| t < *bt) {
            best = Some((t, s));
        }
    }
    let (_, strategy) = best.expect("a candidate");
    let report = AutotuneReport {
        timings,
        chosen: strategy.algorithm(),
    };
    if log && comm.is_root() {
        let bytes = 16 * send_counts.iter().sum::<usize>();
        let list: Vec<String> = report
            .timings
            .iter()
            .map(|(a, t)| format!("{a} {:.3} ms", t * 1e3))
            .collect();
        eprintln!(
            "planewave-comm: all-to-all-v autotune on {} ranks ({bytes} B sent per rank): {} -> {}",
            comm.size(),
            list.join(", "),
            report.chosen
        );
    }
    (strategy, report)
}
