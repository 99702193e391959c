//! All-to-all-v strategies, chosen per communicator and call site.
//!
//! Contract: every [`AlltoallvStrategy`] has the semantics of
//! [`Communicator::alltoallv_raw`] (block `d` of `send` to rank `d`, blocks in `recv` in source
//! rank order) and gives bit-identical results; strategies differ only in the messages they
//! use. A strategy is bound to one communicator ([`AlltoallvAlgorithm::build`] is collective on
//! it, since the node-aggregated one splits it by node once). The choice for a call site is the
//! caller's (`config`: `native|p2p|node|pairwise|nonblocking|auto`; the CLI takes it from the
//! input or `PLANEWAVE_ALLTOALLV`), else native;
//! `auto` times the candidates on the call site's real counts ([`autotune`]) and logs its
//! choice on rank 0.

pub mod alltoallv_native;
pub mod autotune;
pub mod node_aggregated;
pub mod nonblocking;
pub mod pairwise;
pub mod point_to_point;

use crate::communicator::{CommClass, Communicator};
use crate::element::{Element, Slice, SliceMut};
use std::fmt;
use std::str::FromStr;
use std::sync::Arc;

/// Tags used by the point-to-point based strategies (above the range planewave uses).
pub(crate) const TAG_P2P: u32 = 0xFFF0_0001;
pub(crate) const TAG_PAIRWISE: u32 = 0xFFF0_0002;
pub(crate) const TAG_NODE: u32 = 0xFFF0_0003;

/// One way of doing an all-to-all-v.
pub trait AlltoallvStrategy: Send + Sync {
    /// Which algorithm this is.
    fn algorithm(&self) -> AlltoallvAlgorithm;
    /// The communicator it is bound to.
    fn comm(&self) -> &Arc<dyn Communicator>;
    /// The exchange (see [`Communicator::alltoallv_raw`]).
    fn alltoallv_raw(
        &self,
        send: Slice<'_>,
        send_counts: &[usize],
        recv: SliceMut<'_>,
        recv_counts: &[usize],
        class: CommClass,
    );
    /// Start the exchange, run `overlap`, wait. Only the non-blocking strategy really
    /// overlaps; the others run `overlap` first.
    fn alltoallv_overlap_raw(
        &self,
        send: Slice<'_>,
        send_counts: &[usize],
        recv: SliceMut<'_>,
        recv_counts: &[usize],
        overlap: &mut dyn FnMut(),
        class: CommClass,
    ) {
        overlap();
        self.alltoallv_raw(send, send_counts, recv, recv_counts, class)
    }
}

impl dyn AlltoallvStrategy {
    /// Typed exchange into `recv` (of `recv_counts` total elements).
    pub fn alltoallv_into<T: Element>(
        &self,
        send: &[T],
        send_counts: &[usize],
        recv: &mut [T],
        recv_counts: &[usize],
        class: CommClass,
    ) {
        self.alltoallv_raw(
            T::slice(send),
            send_counts,
            T::slice_mut(recv),
            recv_counts,
            class,
        )
    }
    /// Typed [`AlltoallvStrategy::alltoallv_overlap_raw`]: start the exchange into `recv`, run
    /// `overlap` (local work that touches neither buffer), wait.
    pub fn alltoallv_overlap_into<T: Element>(
        &self,
        send: &[T],
        send_counts: &[usize],
        recv: &mut [T],
        recv_counts: &[usize],
        overlap: &mut dyn FnMut(),
        class: CommClass,
    ) {
        self.alltoallv_overlap_raw(
            T::slice(send),
            send_counts,
            T::slice_mut(recv),
            recv_counts,
            overlap,
            class,
        )
    }
    /// Typed exchange into a new vector.
    pub fn alltoallv<T: Element>(
        &self,
        send: &[T],
        send_counts: &[usize],
        recv_counts: &[usize],
        class: CommClass,
    ) -> Vec<T> {
        let mut recv = vec![T::default(); recv_counts.iter().sum()];
        self.alltoallv_into(send, send_counts, &mut recv, recv_counts, class);
        recv
    }
    /// Name of the algorithm.
    pub fn name(&self) -> &'static str {
        self.algorithm().name()
    }
}

/// The all-to-all-v algorithms.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum AlltoallvAlgorithm {
    /// The back end's collective (`MPI_Alltoallv`).
    Native,
    /// Every block as its own non-blocking send/receive, all posted at once (VASP 5.2).
    PointToPoint,
    /// Ranks of a node pack into their leader, leaders exchange, leaders scatter back.
    NodeAggregated,
    /// n−1 rounds; in round k rank r sends to r+k and receives from r−k.
    Pairwise,
    /// The back end's non-blocking collective (start, overlap, wait).
    Nonblocking,
}

impl AlltoallvAlgorithm {
    /// Every algorithm, native first.
    pub const ALL: [AlltoallvAlgorithm; 5] = [
        AlltoallvAlgorithm::Native,
        AlltoallvAlgorithm::PointToPoint,
        AlltoallvAlgorithm::NodeAggregated,
        AlltoallvAlgorithm::Pairwise,
        AlltoallvAlgorithm::Nonblocking,
    ];

    /// Name as written in inputs (and `PLANEWAVE_ALLTOALLV` for the CLI).
    pub fn name(self) -> &'static str {
        match self {
            AlltoallvAlgorithm::Native => "native",
            AlltoallvAlgorithm::PointToPoint => "p2p",
            AlltoallvAlgorithm::NodeAggregated => "node",
            AlltoallvAlgorithm::Pairwise => "pairwise",
            AlltoallvAlgorithm::Nonblocking => "nonblocking",
        }
    }

    /// Bind the algorithm to `comm` (collective on `comm`).
    pub fn build(self, comm: Arc<dyn Communicator>) -> Box<dyn AlltoallvStrategy> {
        match self {
            AlltoallvAlgorithm::Native => Box::new(alltoallv_native::Native::new(comm)),
            AlltoallvAlgorithm::PointToPoint => Box::new(point_to_point::PointToPoint::new(comm)),
            AlltoallvAlgorithm::NodeAggregated => {
                Box::new(node_aggregated::NodeAggregated::new(comm))
            }
            AlltoallvAlgorithm::Pairwise => Box::new(pairwise::Pairwise::new(comm)),
            AlltoallvAlgorithm::Nonblocking => Box::new(nonblocking::Nonblocking::new(comm)),
        }
    }
}

impl fmt::Display for AlltoallvAlgorithm {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for AlltoallvAlgorithm {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        let t = s.trim().to_ascii_lowercase();
        AlltoallvAlgorithm::ALL
            .into_iter()
            .find(|a| a.name() == t)
            .or(match t.as_str() {
                "point-to-point" | "point_to_point" => Some(AlltoallvAlgorithm::PointToPoint),
                "node-aggregated" | "node_aggregated" => Some(AlltoallvAlgorithm::NodeAggregated),
                _ => None,
            })
            .ok_or_else(|| {
                format!(
                    "unknown all-to-all-v strategy '{s}' (expected one of native, p2p, node, \
                     pairwise, nonblocking, auto)"
                )
            })
    }
}

/// A call site's strategy setting.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AlltoallvChoice {
    /// Always this algorithm.
    Fixed(AlltoallvAlgorithm),
    /// Time the candidates at start-up and keep the fastest.
    Autotune,
}

impl FromStr for AlltoallvChoice {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        if s.trim().eq_ignore_ascii_case("auto") {
            Ok(AlltoallvChoice::Autotune)
        } else {
            s.parse().map(AlltoallvChoice::Fixed)
        }
    }
}

/// The setting for a call site: `config` if given, else native.
pub fn alltoallv_choice(config: Option<&str>) -> Result<AlltoallvChoice, String> {
    match config {
        Some(c) => c.parse(),
        None => Ok(AlltoallvChoice::Fixed(AlltoallvAlgorithm::Native)),
    }
}

/// Build the strategy for a call site (collective on `comm`): resolves the setting with
/// [`alltoallv_choice`] and, for `auto`, runs [`autotune::autotune_alltoallv`] on the call
/// site's counts.
pub fn select_alltoallv(
    comm: Arc<dyn Communicator>,
    config: Option<&str>,
    send_counts: &[usize],
    recv_counts: &[usize],
) -> Result<Box<dyn AlltoallvStrategy>, String> {
    Ok(match alltoallv_choice(config)? {
        AlltoallvChoice::Fixed(a) => a.build(comm),
        AlltoallvChoice::Autotune => {
            autotune::autotune_alltoallv(
                &comm,
                &AlltoallvAlgorithm::ALL,
                send_counts,
                recv_counts,
                3,
                true,
            )
            .0
        }
    })
}

pub(crate) fn check_counts(
    comm: &dyn Communicator,
    send: &Slice<'_>,
    send_counts: &[usize],
    recv: &SliceMut<'_>,
    recv_counts: &[usize],
) {
    let n = comm.size();
    assert_eq!(
        send_counts.len(),
        n,
        "planewave-comm: need one send count per rank"
    );
    assert_eq!(
        recv_counts.len(),
        n,
        "planewave-comm: need one receive count per rank"
    );
    assert_eq!(
        send.len(),
        send_counts.iter().sum::<usize>(),
        "planewave-comm: send buffer length"
    );
    assert_eq!(
        recv.len(),
        recv_counts.iter().sum::<usize>(),
        "planewave-comm: receive buffer length"
    );
}
