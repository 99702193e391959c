//! The `Communicator` trait: the operations planewave's distributed algorithms need.
//!
//! Contract:
//! - The trait is object safe (`Arc<dyn Communicator>`): its required methods move type-erased
//!   buffers ([`Slice`], [`SliceMut`], [`Payload`]); the typed, generic forms live in
//!   [`CommExt`](crate::CommExt), implemented for every communicator.
//! - Collectives must be called by every rank of the group in the same order, with consistent
//!   arguments (counts, roots). Reductions are deterministic for a given group: every rank
//!   gets the same bits.
//! - Every call carries the [`CommClass`] of the parallel level it serves and is recorded in
//!   the rank's [`Stats`].
//! - Counts are in elements. `gatherv`/`scatterv`/`alltoallv` blocks are contiguous and in rank
//!   order (displacements are the prefix sums of the counts).
//! - Failure: a communicator never returns an error from a collective. When a peer has failed
//!   the call does not return: the `Threads` back end unwinds every rank and reports the first
//!   failure to the caller of `Threads::run`, the MPI back end aborts the job. [`Communicator::fail`]
//!   is how a rank reports its own unrecoverable error.
//! - Shared memory (optional): [`Communicator::allocate_shared`] gives the ranks of a group
//!   that share memory one [`SharedMemory`] region (MPI: an MPI-3 shared window); back ends
//!   without it return `None` on every rank and callers fall back to message passing.
//! - Back-end access (optional): [`Communicator::as_any`] lets a caller downcast to the
//!   concrete back end (only MPI offers it), for libraries that need the native handle.

use crate::element::{Payload, ReduceOp, Slice, SliceMut};
use crate::request::Request;
use crate::stats::Stats;
use num_complex::Complex64;
use std::sync::Arc;

/// Which level of the parallel grid a collective serves (used for timing reports).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CommClass {
    /// Between k-point groups.
    Kpoint,
    /// Inside a k-point group, between band groups.
    Band,
    /// Inside a band group, between the ranks sharing the G-vectors of a band.
    GVector,
    /// Anything else (set-up, I/O).
    Other,
}

impl CommClass {
    /// All classes, in report order.
    pub const ALL: [CommClass; 4] = [
        CommClass::Kpoint,
        CommClass::Band,
        CommClass::GVector,
        CommClass::Other,
    ];
    /// Index into [`CommClass::ALL`].
    pub fn index(self) -> usize {
        match self {
            CommClass::Kpoint => 0,
            CommClass::Band => 1,
            CommClass::GVector => 2,
            CommClass::Other => 3,
        }
    }
    /// Short name for reports.
    pub fn name(self) -> &'static str {
        match self {
            CommClass::Kpoint => "k",
            CommClass::Band => "band",
            CommClass::GVector => "G",
            CommClass::Other => "other",
        }
    }
}

/// A group of cooperating ranks (object-safe core; see [`CommExt`](crate::CommExt) for the
/// typed helpers).
pub trait Communicator: Send + Sync {
    /// This rank's index in the group, `0..size()`.
    fn rank(&self) -> usize;
    /// Number of ranks in the group.
    fn size(&self) -> usize;
    /// Name of the back end ("solo", "threads", "mpi").
    fn backend(&self) -> &'static str;
    /// The statistics this rank records into (shared with split communicators).
    fn stats(&self) -> Arc<Stats>;

    /// Wait until every rank has arrived.
    fn barrier(&self, class: CommClass);
    /// Copy `data` of rank `root` to every rank.
    fn broadcast_raw(&self, data: SliceMut<'_>, root: usize, class: CommClass);
    /// Element-wise reduction over all ranks, result on every rank (in place).
    fn allreduce_raw(&self, data: SliceMut<'_>, op: ReduceOp, class: CommClass);
    /// Element-wise reduction over all ranks, result in `data` of `root` (other ranks' `data`
    /// is left unchanged).
    fn reduce_raw(&self, data: SliceMut<'_>, op: ReduceOp, root: usize, class: CommClass);
    /// Gather blocks of `counts[r]` elements from every rank `r` into `recv` of `root`
    /// (`recv` is ignored elsewhere and may be empty).
    fn gatherv_raw(
        &self,
        send: Slice<'_>,
        recv: SliceMut<'_>,
        counts: &[usize],
        root: usize,
        class: CommClass,
    );
    /// Gather blocks of `counts[r]` elements from every rank `r` into `recv` of every rank.
    fn allgatherv_raw(
        &self,
        send: Slice<'_>,
        recv: SliceMut<'_>,
        counts: &[usize],
        class: CommClass,
    );
    /// Scatter block `r` (of `counts[r]` elements) of `send` on `root` to rank `r`'s `recv`.
    fn scatterv_raw(
        &self,
        send: Slice<'_>,
        counts: &[usize],
        recv: SliceMut<'_>,
        root: usize,
        class: CommClass,
    );
    /// Native all-to-all-v: block `d` of `send` (`send_counts[d]` elements) goes to rank `d`,
    /// block `s` of `recv` (`recv_counts[s]` elements) comes from rank `s`.
    fn alltoallv_raw(
        &self,
        send: Slice<'_>,
        send_counts: &[usize],
        recv: SliceMut<'_>,
        recv_counts: &[usize],
        class: CommClass,
    );
    /// Non-blocking all-to-all-v: start the exchange, run `overlap` while it is in flight,
    /// then wait for it. The default has no overlap.
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
        self.alltoallv_raw(send, send_counts, recv, recv_counts, class);
    }
    /// Native reduce-scatter: `send` holds `size()` blocks of `counts[r]` elements; block `r`
    /// reduced over all ranks lands in `recv` of rank `r`.
    fn reduce_scatter_raw(
        &self,
        send: Slice<'_>,
        recv: SliceMut<'_>,
        counts: &[usize],
        op: ReduceOp,
        class: CommClass,
    );
    /// Blocking send to `dest` (may return before the message is received).
    fn send_raw(&self, data: Slice<'_>, dest: usize, tag: u32, class: CommClass);
    /// Blocking receive of exactly `data.len()` elements from `src`.
    fn recv_raw(&self, data: SliceMut<'_>, src: usize, tag: u32, class: CommClass);
    /// Post every send and receive at once (non-blocking), then wait for all of them.
    /// Messages between one pair with one tag are matched in order.
    fn exchange_raw(
        &self,
        sends: &[(usize, Slice<'_>)],
        recvs: &mut [(usize, SliceMut<'_>)],
        tag: u32,
        class: CommClass,
    );
    /// Non-blocking send of an owned buffer; complete it with [`Request::wait`], which gives
    /// the buffer back where the back end still holds it (MPI), for reuse.
    fn isend_raw(&self, data: Payload, dest: usize, tag: u32, class: CommClass) -> Request;
    /// Non-blocking receive of `buf.len()` elements of `buf`'s kind into `buf`;
    /// [`Request::wait`] returns them (in `buf`, or in a buffer of the back end's own).
    fn irecv_raw(&self, buf: Payload, src: usize, tag: u32, class: CommClass) -> Request;
    /// Split into sub-groups: ranks with the same `color` form a group, ordered by `(key,
    /// rank)`; `None` (MPI_UNDEFINED) takes part but gets no group. Collective.
    fn split(&self, color: Option<u32>, key: i64) -> Option<Arc<dyn Communicator>>;
    /// Split into groups of ranks that share memory (one group per node). Collective.
    fn split_shared(&self) -> Arc<dyn Communicator>;
    /// Allocate memory shared by every rank of this group, `bytes` of it in this rank's
    /// segment (collective; every rank may ask for a different size, zero included). Only
    /// meaningful on a group whose ranks share memory (from [`split_shared`] or a split of
    /// it). Every rank gets `Some` or every rank gets `None` (the default: the back end has no
    /// shared memory, or not on this group). Drop the region on every rank of the group in
    /// the same order relative to other collectives (freeing it is collective).
    ///
    /// [`split_shared`]: Communicator::split_shared
    fn allocate_shared(&self, bytes: usize) -> Option<Box<dyn SharedMemory>> {
        let _ = bytes;
        None
    }
    /// The concrete communicator behind this trait object, for code that must reach the
    /// back end itself (e.g. planewave-linalg's ScaLAPACK solve downcasts to
    /// `planewave_comm::mpi::Mpi`, feature `mpi`, to hand its `MPI_Comm` to BLACS). `None` (the default) means
    /// the back end does not offer itself; the MPI back end returns `Some(self)`. Callers
    /// must treat `None` and a failed downcast alike: the native path is not available.
    fn as_any(&self) -> Option<&dyn std::any::Any> {
        None
    }
    /// End the whole run because of this rank's unrecoverable error: `Threads` panics (the
    /// panic reaches `Threads::run`), MPI prints the message and aborts every rank with a
    /// non-zero exit code.
    fn fail(&self, message: &str) -> !;
    /// Like [`fail`](Communicator::fail), for an error every rank of this group reached at the
    /// same point: the message is printed once (by rank 0).
    fn fail_collective(&self, message: &str) -> ! {
        self.fail(message)
    }

    /// Element-wise sum over all ranks, result on every rank.
    fn allreduce_sum_f64(&self, data: &mut [f64], class: CommClass) {
        self.allreduce_raw(SliceMut::F64(data), ReduceOp::Sum, class)
    }
    /// Element-wise complex sum over all ranks, result on every rank.
    fn allreduce_sum_c64(&self, data: &mut [Complex64], class: CommClass) {
        self.allreduce_raw(SliceMut::C64(data), ReduceOp::Sum, class)
    }
    /// Element-wise maximum over all ranks, result on every rank.
    fn allreduce_max_f64(&self, data: &mut [f64], class: CommClass) {
        self.allreduce_raw(SliceMut::F64(data), ReduceOp::Max, class)
    }
    /// Copy `data` of rank `root` to every rank.
    fn broadcast_f64(&self, data: &mut [f64], root: usize, class: CommClass) {
        self.broadcast_raw(SliceMut::F64(data), root, class)
    }
    /// True on rank 0 (the rank that prints and writes files).
    fn is_root(&self) -> bool {
        self.rank() == 0
    }
}

/// Memory shared by the ranks of a group (from [`Communicator::allocate_shared`]).
///
/// Contract: every rank owns one segment; [`segment`](SharedMemory::segment) gives the address
/// of any rank's segment in this process's address space, valid (readable and writable by
/// every rank) until the region is dropped. The region does not order accesses: a rank may
/// read data another rank stored only after a [`sync`](SharedMemory::sync) that both took
/// part in came between the store and the load, and two ranks must never access the same
/// bytes between two syncs when one of them writes. Callers dereference the pointers in
/// `unsafe` code and must prove that discipline there.
pub trait SharedMemory: Send {
    /// Base address and length in bytes of rank `rank`'s segment (a dangling, non-null
    /// pointer when the length is zero).
    fn segment(&self, rank: usize) -> (*mut u8, usize);
    /// Memory synchronisation plus a barrier of the group (collective): every store any rank
    /// made to the region before its call is visible to every rank after its call returns.
    fn sync(&self);
}
