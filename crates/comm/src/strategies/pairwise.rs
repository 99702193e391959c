//! Pairwise-exchange all-to-all-v.
//!
//! Contract: n−1 rounds; in round k (1 ≤ k < n) rank r sends its block for r+k and receives
//! the block of r−k (mod n), one send/receive pair per round ([`Communicator::exchange_raw`]),
//! so every rank has exactly one message in flight each way. Empty blocks are skipped on both
//! sides. The own block is copied locally.

use super::{check_counts, AlltoallvAlgorithm, AlltoallvStrategy, TAG_PAIRWISE};
use crate::communicator::{CommClass, Communicator};
use crate::element::{displacements, Slice, SliceMut};
use std::sync::Arc;

/// Pairwise exchange.
pub struct Pairwise {
    comm: Arc<dyn Communicator>,
}

impl Pairwise {
    /// Bind to `comm` (not collective).
    pub fn new(comm: Arc<dyn Communicator>) -> Self {
        Pairwise { comm }
    }
}

impl AlltoallvStrategy for Pairwise {
    fn algorithm(&self) -> AlltoallvAlgorithm {
        AlltoallvAlgorithm::Pairwise
    }
    fn comm(&self) -> &Arc<dyn Communicator> {
        &self.comm
    }
    fn alltoallv_raw(
        &self,
        send: Slice<'_>,
        send_counts: &[usize],
        recv: SliceMut<'_>,
        recv_counts: &[usize],
        class: CommClass,
    ) {
        let comm = &*self.comm;
        check_counts(comm, &send, send_counts, &recv, recv_counts);
        let (n, me) = (comm.size(), comm.rank());
        let sd = displacements(send_counts);
        let mut chunks: Vec<Option<SliceMut<'_>>> =
            recv.chunks(recv_counts).into_iter().map(Some).collect();
        if let Some(c) = chunks[me].as_mut() {
            c.copy_at(0, send.sub(sd[me], send_counts[me]));
        }
        for k in 1..n {
            let d = (me + k) % n;
            let s = (me + n - k) % n;
            let sends: Vec<(usize, Slice<'_>)> = if send_counts[d] > 0 {
                vec![(d, send.sub(sd[d], send_counts[d]))]
            } else {
                Vec::new()
            };
            let mut recvs: Vec<(usize, SliceMut<'_>)> = match chunks[s].take() {
                Some(c) if !c.is_empty() => vec![(s, c)],
                _ => Vec::new(),
            };
            comm.exchange_raw(&sends, &mut recvs, TAG_PAIRWISE, class);
        }
    }
}
