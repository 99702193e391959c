//! Non-blocking all-to-all-v: start the exchange, let the caller compute, wait.
//!
//! Contract: [`Communicator::alltoallv_overlap_raw`] of the back end (`MPI_Ialltoallv` under
//! MPI; eager sends and late receives with `Threads`), so that FFT work passed as `overlap`
//! runs while the messages are in flight. Without overlap work it is start + wait.

use super::{AlltoallvAlgorithm, AlltoallvStrategy};
use crate::communicator::{CommClass, Communicator};
use crate::element::{Slice, SliceMut};
use std::sync::Arc;

/// The non-blocking collective.
pub struct Nonblocking {
    comm: Arc<dyn Communicator>,
}

impl Nonblocking {
    /// Bind to `comm` (not collective).
    pub fn new(comm: Arc<dyn Communicator>) -> Self {
        Nonblocking { comm }
    }
}

impl AlltoallvStrategy for Nonblocking {
    fn algorithm(&self) -> AlltoallvAlgorithm {
        AlltoallvAlgorithm::Nonblocking
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
        self.comm
            .alltoallv_overlap_raw(send, send_counts, recv, recv_counts, &mut || {}, class)
    }
    fn alltoallv_overlap_raw(
        &self,
        send: Slice<'_>,
        send_counts: &[usize],
        recv: SliceMut<'_>,
        recv_counts: &[usize],
        overlap: &mut dyn FnMut(),
        class: CommClass,
    ) {
        self.comm
            .alltoallv_overlap_raw(send, send_counts, recv, recv_counts, overlap, class)
    }
}
