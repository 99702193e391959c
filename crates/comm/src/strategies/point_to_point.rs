//! Point-to-point emulation of all-to-all-v (what VASP 5.2 did by default).
//!
//! Contract: the own block is copied locally; every other non-empty block is one non-blocking
//! send, every expected non-empty block one non-blocking receive, all posted at once
//! ([`Communicator::exchange_raw`]) and then waited for. Kept for comparison with the native
//! collective (the VASP report found the collective faster at scale).

use super::{check_counts, AlltoallvAlgorithm, AlltoallvStrategy, TAG_P2P};
use crate::communicator::{CommClass, Communicator};
use crate::element::{displacements, Slice, SliceMut};
use std::sync::Arc;

/// Point-to-point emulation.
pub struct PointToPoint {
    comm: Arc<dyn Communicator>,
}

impl PointToPoint {
    /// Bind to `comm` (not collective).
    pub fn new(comm: Arc<dyn Communicator>) -> Self {
        PointToPoint { comm }
    }
}

impl AlltoallvStrategy for PointToPoint {
    fn algorithm(&self) -> AlltoallvAlgorithm {
        AlltoallvAlgorithm::PointToPoint
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
        let mut chunks = recv.chunks(recv_counts);
        chunks[me].copy_at(0, send.sub(sd[me], send_counts[me]));
        let sends: Vec<(usize, Slice<'_>)> = (1..n)
            .map(|k| (me + k) % n)
            .filter(|&d| send_counts[d] > 0)
            .map(|d| (d, send.sub(sd[d], send_counts[d])))
            .collect();
        let mut recvs: Vec<(usize, SliceMut<'_>)> = chunks
            .into_iter()
            .enumerate()
            .filter(|&(s, ref c)| s != me && !c.is_empty())
            .collect();
        comm.exchange_raw(&sends, &mut recvs, TAG_P2P, class);
    }
}
