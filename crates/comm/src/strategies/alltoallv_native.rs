//! Native all-to-all-v: the back end's own collective (`MPI_Alltoallv` under MPI).
//!
//! Contract: one call of [`Communicator::alltoallv_raw`]; the reference every other strategy
//! must match bit for bit.

use super::{AlltoallvAlgorithm, AlltoallvStrategy};
use crate::communicator::{CommClass, Communicator};
use crate::element::{Slice, SliceMut};
use std::sync::Arc;

/// The native collective.
pub struct Native {
    comm: Arc<dyn Communicator>,
}

impl Native {
    /// Bind to `comm` (not collective).
    pub fn new(comm: Arc<dyn Communicator>) -> Self {
        Native { comm }
    }
}

impl AlltoallvStrategy for Native {
    fn algorithm(&self) -> AlltoallvAlgorithm {
        AlltoallvAlgorithm::Native
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
            .alltoallv_raw(send, send_counts, recv, recv_counts, class)
    }
}
