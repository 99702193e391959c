//! `Solo`: the single-process communicator (one rank; every collective is a local copy).
//!
//! Contract: rank 0 of 1. Reductions and broadcasts leave the data unchanged; gathers,
//! scatters, all-to-alls and `exchange_raw` copy locally. Blocking and non-blocking
//! point-to-point messages to itself are not supported (there is no mailbox) and panic, as
//! does any rank argument other than 0. Calls are still recorded in the (process-wide) stats.

use crate::communicator::{CommClass, Communicator};
use crate::element::{Kind, Payload, ReduceOp, Slice, SliceMut};
use crate::request::Request;
use crate::stats::Stats;
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

/// A communicator with exactly one rank.
#[derive(Clone, Copy, Debug, Default)]
pub struct Solo;

fn solo_stats() -> Arc<Stats> {
    static STATS: OnceLock<Arc<Stats>> = OnceLock::new();
    STATS.get_or_init(|| Arc::new(Stats::new())).clone()
}

fn check_root(root: usize) {
    assert_eq!(root, 0, "planewave-comm: Solo has only rank 0 (got {root})");
}

fn check_counts(counts: &[usize]) {
    assert_eq!(
        counts.len(),
        1,
        "planewave-comm: Solo expects one count per rank (1)"
    );
}

impl Solo {
    fn rec(&self, class: CommClass, bytes: usize, t0: Instant) {
        solo_stats().record(class, bytes, t0.elapsed(), Duration::ZERO);
    }
}

impl Communicator for Solo {
    fn rank(&self) -> usize {
        0
    }
    fn size(&self) -> usize {
        1
    }
    fn backend(&self) -> &'static str {
        "solo"
    }
    fn stats(&self) -> Arc<Stats> {
        solo_stats()
    }
    fn barrier(&self, class: CommClass) {
        self.rec(class, 0, Instant::now());
    }
    fn broadcast_raw(&self, data: SliceMut<'_>, root: usize, class: CommClass) {
        check_root(root);
        self.rec(class, data.bytes(), Instant::now());
    }
    fn allreduce_raw(&self, data: SliceMut<'_>, op: ReduceOp, class: CommClass) {
        if data.kind() == Kind::C64 && op != ReduceOp::Sum {
            panic!("planewave-comm: {op:?} is not defined for complex numbers");
        }
        self.rec(class, data.bytes(), Instant::now());
    }
    fn reduce_raw(&self, data: SliceMut<'_>, op: ReduceOp, root: usize, class: CommClass) {
        check_root(root);
        self.allreduce_raw(data, op, class);
    }
    fn gatherv_raw(
        &self,
        send: Slice<'_>,
        mut recv: SliceMut<'_>,
        counts: &[usize],
        root: usize,
        class: CommClass,
    ) {
        let t0 = Instant::now();
        check_root(root);
        check_counts(counts);
        recv.copy_at(0, send);
        self.rec(class, send.bytes(), t0);
    }
    fn allgatherv_raw(
        &self,
        send: Slice<'_>,
        recv: SliceMut<'_>,
        counts: &[usize],
        class: CommClass,
    ) {
        self.gatherv_raw(send, recv, counts, 0, class)
    }
    fn scatterv_raw(
        &self,
        send: Slice<'_>,
        counts: &[usize],
        recv: SliceMut<'_>,
        root: usize,
        class: CommClass,
    ) {
        self.gatherv_raw(send, recv, counts, root, class)
    }
    fn alltoallv_raw(
        &self,
        send: Slice<'_>,
        send_counts: &[usize],
        recv: SliceMut<'_>,
        recv_counts: &[usize],
        class: CommClass,
    ) {
        assert_eq!(
            send_counts, recv_counts,
            "planewave-comm: Solo all-to-all-v counts differ"
        );
        self.gatherv_raw(send, recv, send_counts, 0, class)
    }
    fn reduce_scatter_raw(
        &self,
        send: Slice<'_>,
        recv: SliceMut<'_>,
        counts: &[usize],
        op: ReduceOp,
        class: CommClass,
    ) {
        if send.kind() == Kind::C64 && op != ReduceOp::Sum {
            panic!("planewave-comm: {op:?} is not defined for complex numbers");
        }
        self.gatherv_raw(send, recv, counts, 0, class)
    }
    fn send_raw(&self, _data: Slice<'_>, _dest: usize, _tag: u32, _class: CommClass) {
        panic!("planewave-comm: Solo cannot send a message to itself");
    }
    fn recv_raw(&self, _data: SliceMut<'_>, _src: usize, _tag: u32, _class: CommClass) {
        panic!("planewave-comm: Solo cannot receive a message from itself");
    }
    fn exchange_raw(
        &self,
        sends: &[(usize, Slice<'_>)],
        recvs: &mut [(usize, SliceMut<'_>)],
        _tag: u32,
        class: CommClass,
    ) {
        let t0 = Instant::now();
        assert_eq!(
            sends.len(),
            recvs.len(),
            "planewave-comm: Solo exchange: unmatched messages"
        );
        let mut bytes = 0;
        for ((d, s), (src, r)) in sends.iter().zip(recvs.iter_mut()) {
            check_root(*d);
            check_root(*src);
            assert_eq!(
                s.len(),
                r.len(),
                "planewave-comm: Solo exchange: length mismatch"
            );
            r.copy_at(0, *s);
            bytes += s.bytes();
        }
        self.rec(class, bytes, t0);
    }
    fn isend_raw(&self, _data: Payload, _dest: usize, _tag: u32, _class: CommClass) -> Request {
        panic!("planewave-comm: Solo cannot send a message to itself");
    }
    fn irecv_raw(&self, _buf: Payload, _src: usize, _tag: u32, _class: CommClass) -> Request {
        panic!("planewave-comm: Solo cannot receive a message from itself");
    }
    fn split(&self, color: Option<u32>, _key: i64) -> Option<Arc<dyn Communicator>> {
        color.map(|_| Arc::new(Solo) as Arc<dyn Communicator>)
    }
    fn split_shared(&self) -> Arc<dyn Communicator> {
        Arc::new(Solo)
    }
    fn fail(&self, message: &str) -> ! {
        panic!("{message}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::CommExt;

    #[test]
    fn solo_is_one_rank_and_reductions_keep_data() {
        let c = Solo;
        assert_eq!((c.rank(), c.size()), (0, 1));
        assert!(c.is_root());
        let mut x = [1.5, -2.0];
        c.allreduce_sum_f64(&mut x, CommClass::GVector);
        assert_eq!(x, [1.5, -2.0]);
        let v = c.alltoallv(&[1i64, 2, 3], &[3], &[3], CommClass::Other);
        assert_eq!(v, vec![1, 2, 3]);
        assert_eq!(c.allgatherv(&[4u64], CommClass::Other), vec![4]);
    }
}
