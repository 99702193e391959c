//! Communication benchmark: every all-to-all-v strategy against native, per message size.
//!
//! Contract: [`run_comm_bench`] is collective. For each size (bytes per rank pair, rounded
//! down to whole complex numbers, at least one) it times every strategy of
//! [`AlltoallvAlgorithm::ALL`] with equal counts to every rank ([`time_alltoallv`]: one
//! warm-up, then enough repetitions to move about 64 MiB per rank, slowest rank's time) and
//! reports seconds per call and the ratio to native. The returned [`BenchTable`] prints as the
//! table `planewave bench comm` shows, for the back end in use.

use crate::communicator::Communicator;
use crate::strategies::autotune::time_alltoallv;
use crate::strategies::{AlltoallvAlgorithm, AlltoallvStrategy};
use std::fmt;
use std::sync::Arc;

/// Message sizes from 64 B to 16 MiB per pair, by factors of 4.
pub const DEFAULT_SIZES: [usize; 10] = [
    64,
    256,
    1 << 10,
    1 << 12,
    1 << 14,
    1 << 16,
    1 << 18,
    1 << 20,
    1 << 22,
    1 << 24,
];

/// One measurement.
#[derive(Clone, Debug, PartialEq)]
pub struct BenchRow {
    /// Bytes sent to every other rank.
    pub bytes_per_pair: usize,
    /// The strategy.
    pub algorithm: AlltoallvAlgorithm,
    /// Seconds per call (slowest rank).
    pub seconds: f64,
    /// `seconds` over native's.
    pub ratio_to_native: f64,
}

/// The benchmark's result.
#[derive(Clone, Debug, PartialEq)]
pub struct BenchTable {
    /// Back end name.
    pub backend: String,
    /// Number of ranks.
    pub ranks: usize,
    /// Number of nodes seen by `split_shared`.
    pub nodes: usize,
    /// Rows, grouped by size, strategies in [`AlltoallvAlgorithm::ALL`] order.
    pub rows: Vec<BenchRow>,
}

fn human_bytes(b: usize) -> String {
    if b >= 1 << 20 {
        format!("{} MiB", b >> 20)
    } else if b >= 1 << 10 {
        format!("{} KiB", b >> 10)
    } else {
        format!("{b} B")
    }
}

fn human_time(s: f64) -> String {
    if s >= 1.0 {
        format!("{s:.2} s")
    } else if s >= 1e-3 {
        format!("{:.2} ms", s * 1e3)
    } else {
        format!("{:.1} us", s * 1e6)
    }
}

impl fmt::Display for BenchTable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "all-to-all-v, {} back end, {} ranks on {} node(s): time per call (ratio to native)",
            self.backend, self.ranks, self.nodes
        )?;
        write!(f, "{:>10}", "bytes/pair")?;
        for a in AlltoallvAlgorithm::ALL {
            write!(f, " {:>20}", a.name())?;
        }
        writeln!(f)?;
        for chunk in self.rows.chunks(AlltoallvAlgorithm::ALL.len()) {
            write!(f, "{:>10}", human_bytes(chunk[0].bytes_per_pair))?;
            for r in chunk {
                let cell = if r.algorithm == AlltoallvAlgorithm::Native {
                    human_time(r.seconds)
                } else {
                    format!("{} ({:.2})", human_time(r.seconds), r.ratio_to_native)
                };
                write!(f, " {cell:>20}")?;
            }
            writeln!(f)?;
        }
        Ok(())
    }
}

/// Time every strategy on `comm` for each size in `sizes` (bytes per pair). Collective.
pub fn run_comm_bench(comm: Arc<dyn Communicator>, sizes: &[usize]) -> BenchTable {
    let n = comm.size();
    let strategies: Vec<Box<dyn AlltoallvStrategy>> = AlltoallvAlgorithm::ALL
        .iter()
        .map(|a| a.build(comm.clone()))
        .collect();
    let nodes = {
        let node = comm.split_shared();
        let mut leaders = [u64::from(node.rank() == 0)];
        crate::CommExt::allreduce_sum(&*comm, &mut leaders, crate::CommClass::Other);
        leaders[0] as usize
    };
    let mut rows = Vec::new();
    for &bytes in sizes {
        let count = (bytes / 16).max(1);
        let counts = vec![count; n];
        let per_call = 16 * count * n;
        let reps = ((64usize << 20) / per_call).clamp(2, 200);
        let mut native = f64::NAN;
        for s in &strategies {
            let t = time_alltoallv(&**s, &counts, &counts, reps);
            if s.algorithm() == AlltoallvAlgorithm::Native {
                native = t;
            }
            rows.push(BenchRow {
                bytes_per_pair: 16 * count,
                algorithm: s.algorithm(),
                seconds: t,
                ratio_to_native: t / native,
            });
        }
    }
    BenchTable {
        backend: comm.backend().to_string(),
        ranks: n,
        nodes,
        rows,
    }
}
