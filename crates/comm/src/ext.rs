//! Typed, generic helpers over the object-safe [`Communicator`] core.
//!
//! Contract: `CommExt` is implemented for every communicator, including `dyn Communicator`;
//! each method erases its buffers with [`Element`] and calls the matching `*_raw` method, so it
//! has exactly the semantics documented there.

use crate::communicator::{CommClass, Communicator};
use crate::element::{Element, ReduceOp};
use crate::request::Request;
use crate::stats::{Operation, OperationScope};

/// Generic forms of the [`Communicator`] operations.
pub trait CommExt: Communicator {
    /// File this rank's calls (on every communicator sharing its statistics) under `op`
    /// until the returned scope is dropped (see [`Stats::operation`](crate::Stats::operation)).
    fn operation(&self, op: Operation) -> OperationScope {
        self.stats().operation(op)
    }
    /// In-place broadcast from `root`.
    fn broadcast<T: Element>(&self, data: &mut [T], root: usize, class: CommClass) {
        self.broadcast_raw(T::slice_mut(data), root, class)
    }
    /// In-place all-reduce.
    fn allreduce<T: Element>(&self, data: &mut [T], op: ReduceOp, class: CommClass) {
        self.allreduce_raw(T::slice_mut(data), op, class)
    }
    /// In-place sum over all ranks.
    fn allreduce_sum<T: Element>(&self, data: &mut [T], class: CommClass) {
        self.allreduce_raw(T::slice_mut(data), ReduceOp::Sum, class)
    }
    /// Reduction with the result on `root`.
    fn reduce<T: Element>(&self, data: &mut [T], op: ReduceOp, root: usize, class: CommClass) {
        self.reduce_raw(T::slice_mut(data), op, root, class)
    }
    /// Gather variable blocks on `root`; returns the concatenation on `root`, empty elsewhere.
    fn gatherv<T: Element>(&self, send: &[T], root: usize, class: CommClass) -> Vec<T> {
        let counts = self.allgather_counts(send.len(), class);
        let mut recv = if self.rank() == root {
            vec![T::default(); counts.iter().sum()]
        } else {
            Vec::new()
        };
        self.gatherv_raw(
            T::slice(send),
            T::slice_mut(&mut recv),
            &counts,
            root,
            class,
        );
        recv
    }
    /// Gather variable blocks on every rank; returns the concatenation in rank order.
    fn allgatherv<T: Element>(&self, send: &[T], class: CommClass) -> Vec<T> {
        let counts = self.allgather_counts(send.len(), class);
        let mut recv = vec![T::default(); counts.iter().sum()];
        self.allgatherv_raw(T::slice(send), T::slice_mut(&mut recv), &counts, class);
        recv
    }
    /// Every rank's `n`, in rank order.
    fn allgather_counts(&self, n: usize, class: CommClass) -> Vec<usize> {
        let size = self.size();
        let mut all = vec![0u64; size];
        all[self.rank()] = n as u64;
        self.allreduce_raw(u64::slice_mut(&mut all), ReduceOp::Sum, class);
        all.into_iter().map(|c| c as usize).collect()
    }
    /// Scatter blocks of `counts` from `root` (`send` only read on `root`).
    fn scatterv<T: Element>(
        &self,
        send: &[T],
        counts: &[usize],
        root: usize,
        class: CommClass,
    ) -> Vec<T> {
        let mut recv = vec![T::default(); counts[self.rank()]];
        self.scatterv_raw(T::slice(send), counts, T::slice_mut(&mut recv), root, class);
        recv
    }
    /// Native all-to-all-v into a new vector.
    fn alltoallv<T: Element>(
        &self,
        send: &[T],
        send_counts: &[usize],
        recv_counts: &[usize],
        class: CommClass,
    ) -> Vec<T> {
        let mut recv = vec![T::default(); recv_counts.iter().sum()];
        self.alltoallv_raw(
            T::slice(send),
            send_counts,
            T::slice_mut(&mut recv),
            recv_counts,
            class,
        );
        recv
    }
    /// Native reduce-scatter into a new vector of `counts[rank]` elements.
    fn reduce_scatter<T: Element>(
        &self,
        send: &[T],
        counts: &[usize],
        op: ReduceOp,
        class: CommClass,
    ) -> Vec<T> {
        let mut recv = vec![T::default(); counts[self.rank()]];
        self.reduce_scatter_raw(T::slice(send), T::slice_mut(&mut recv), counts, op, class);
        recv
    }
    /// Blocking send.
    fn send<T: Element>(&self, data: &[T], dest: usize, tag: u32, class: CommClass) {
        self.send_raw(T::slice(data), dest, tag, class)
    }
    /// Blocking receive of `count` elements.
    fn recv<T: Element>(&self, count: usize, src: usize, tag: u32, class: CommClass) -> Vec<T> {
        let mut v = vec![T::default(); count];
        self.recv_raw(T::slice_mut(&mut v), src, tag, class);
        v
    }
    /// Non-blocking send of an owned vector.
    fn isend<T: Element>(&self, data: Vec<T>, dest: usize, tag: u32, class: CommClass) -> Request {
        self.isend_raw(T::into_payload(data), dest, tag, class)
    }
    /// Non-blocking receive of `count` elements; get them with [`Request::wait_data`].
    fn irecv<T: Element>(&self, count: usize, src: usize, tag: u32, class: CommClass) -> Request {
        self.irecv_into(vec![T::default(); count], src, tag, class)
    }
    /// Non-blocking receive of `buf.len()` elements into `buf` (reused: no allocation under
    /// MPI); get them with [`Request::wait_data`].
    fn irecv_into<T: Element>(
        &self,
        buf: Vec<T>,
        src: usize,
        tag: u32,
        class: CommClass,
    ) -> Request {
        self.irecv_raw(T::into_payload(buf), src, tag, class)
    }
}

impl<C: Communicator + ?Sized> CommExt for C {}
