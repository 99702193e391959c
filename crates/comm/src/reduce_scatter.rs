//! Reduce-then-scatter strategies (the VASP PAW lesson: do not use an all-to-all where an
//! allreduce belongs, and vice versa — measure).
//!
//! Contract: [`reduce_scatter`] takes on every rank `size()` blocks of `counts[r]` elements
//! and leaves on rank `r` block `r` reduced over all ranks. The three algorithms give equal
//! results up to rounding (and bit-identical ones on `Threads`, where every algorithm sums in
//! rank order):
//! - [`ReduceScatterAlgorithm::AllreducePick`]: one allreduce of the whole buffer, then each
//!   rank keeps its block (most data moved, one collective);
//! - [`ReduceScatterAlgorithm::AlltoallSum`]: an all-to-all-v sends block `r` to rank `r`,
//!   which sums the `size()` pieces locally in rank order;
//! - [`ReduceScatterAlgorithm::Native`]: the back end's reduce-scatter
//!   (`MPI_Reduce_scatter_block` for equal counts under MPI).

use crate::communicator::{CommClass, Communicator};
use crate::element::{displacements, Element, ReduceOp};
use crate::ext::CommExt;
use std::fmt;
use std::str::FromStr;

/// How to reduce-then-scatter.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ReduceScatterAlgorithm {
    /// Allreduce, then pick the own block.
    AllreducePick,
    /// All-to-all-v of the blocks, then a local sum.
    AlltoallSum,
    /// The back end's reduce-scatter.
    Native,
}

impl ReduceScatterAlgorithm {
    /// Every algorithm.
    pub const ALL: [ReduceScatterAlgorithm; 3] = [
        ReduceScatterAlgorithm::AllreducePick,
        ReduceScatterAlgorithm::AlltoallSum,
        ReduceScatterAlgorithm::Native,
    ];
    /// Name as written in inputs.
    pub fn name(self) -> &'static str {
        match self {
            ReduceScatterAlgorithm::AllreducePick => "allreduce",
            ReduceScatterAlgorithm::AlltoallSum => "alltoall",
            ReduceScatterAlgorithm::Native => "native",
        }
    }
}

impl fmt::Display for ReduceScatterAlgorithm {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for ReduceScatterAlgorithm {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        Self::ALL
            .into_iter()
            .find(|a| a.name().eq_ignore_ascii_case(s.trim()))
            .ok_or_else(|| {
                format!("unknown reduce-scatter strategy '{s}' (allreduce, alltoall, native)")
            })
    }
}

/// Reduce `send` (`size()` blocks of `counts`) and return this rank's block.
pub fn reduce_scatter<T: Element>(
    comm: &dyn Communicator,
    algorithm: ReduceScatterAlgorithm,
    send: &[T],
    counts: &[usize],
    op: ReduceOp,
    class: CommClass,
) -> Vec<T> {
    let (n, me) = (comm.size(), comm.rank());
    assert_eq!(counts.len(), n, "planewave-comm: need one count per rank");
    assert_eq!(
        send.len(),
        counts.iter().sum::<usize>(),
        "planewave-comm: send buffer length"
    );
    let d = displacements(counts);
    match algorithm {
        ReduceScatterAlgorithm::AllreducePick => {
            let mut all = send.to_vec();
            comm.allreduce(&mut all, op, class);
            all[d[me]..d[me] + counts[me]].to_vec()
        }
        ReduceScatterAlgorithm::AlltoallSum => {
            let recv_counts = vec![counts[me]; n];
            let pieces = comm.alltoallv(send, counts, &recv_counts, class);
            let c = counts[me];
            let mut acc = pieces[..c].to_vec();
            for s in 1..n {
                for (a, b) in acc.iter_mut().zip(&pieces[s * c..(s + 1) * c]) {
                    *a = T::combine(op, *a, *b);
                }
            }
            acc
        }
        ReduceScatterAlgorithm::Native => comm.reduce_scatter(send, counts, op, class),
    }
}
