//! `Threads`: n ranks as threads of one process, with real message passing between them.
//!
//! Contract:
//! - [`Threads::run`]`(n, f)` runs `f(comm)` on n threads, one per rank, and returns every
//!   rank's result in rank order. [`Threads::try_run`] does the same for a fallible `f`.
//! - Messages are copied into the receiver's mailbox (a mutex-protected map of FIFO queues keyed
//!   by communicator, source and tag, with a condition variable): sends never block, receives
//!   block until their message arrives. Collectives are built from these messages with fixed
//!   rank orders, so reductions are deterministic (summed in rank order on rank 0, then
//!   broadcast) and every rank gets the same bits.
//! - Failure never hangs: when a rank panics or returns an error, the world is marked failed
//!   and every rank blocked in (or later entering) a communication unwinds silently; the
//!   caller gets the first failure (`run` re-raises the original panic, `try_run` returns
//!   [`RankFailure`]). A receive that waits for a rank that has already returned, or that
//!   waits longer than the stall timeout (default 300 s, `PLANEWAVE_THREADS_TIMEOUT` seconds or
//!   [`ThreadsBuilder::timeout`]), is itself a failure (mismatched collectives).
//! - Node emulation: [`ThreadsBuilder::ranks_per_node`] makes `split_shared` group consecutive
//!   world ranks into "nodes" of that size (default: one node holding every rank).

use crate::communicator::{CommClass, Communicator};
use crate::element::{displacements, Element, Kind, Payload, ReduceOp, Slice, SliceMut};
use crate::request::{Pending, Ready, Request};
use crate::stats::Stats;
use std::any::Any;
use std::collections::{HashMap, VecDeque};
use std::fmt;
use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

/// Entry point of the threads back end.
#[derive(Clone, Copy, Debug)]
pub struct Threads;

/// Options of a threads run.
#[derive(Clone, Debug)]
pub struct ThreadsBuilder {
    n: usize,
    ranks_per_node: Option<usize>,
    timeout: Duration,
}

/// The first failure of a threads run.
#[derive(Debug)]
pub enum RankFailure<E> {
    /// A rank returned an error.
    Error {
        /// The failing rank.
        rank: usize,
        /// Its error.
        error: E,
    },
    /// A rank panicked.
    Panic {
        /// The failing rank.
        rank: usize,
        /// The panic message.
        message: String,
    },
}

impl<E: fmt::Display> fmt::Display for RankFailure<E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RankFailure::Error { rank, error } => write!(f, "rank {rank} failed: {error}"),
            RankFailure::Panic { rank, message } => write!(f, "rank {rank} panicked: {message}"),
        }
    }
}

impl<E: fmt::Debug + fmt::Display> std::error::Error for RankFailure<E> {}

/// Text of a panic payload.
pub fn panic_message(p: &(dyn Any + Send)) -> String {
    if let Some(s) = p.downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = p.downcast_ref::<String>() {
        s.clone()
    } else {
        "(non-string panic payload)".to_string()
    }
}

/// Unwind payload of a rank released because a peer failed (not reported).
struct PeerFailed;

enum Failure<E> {
    Error(E),
    Panic(Box<dyn Any + Send>),
}

impl Threads {
    /// Run `f` on `n` ranks; every rank's result in rank order. A panic of any rank is
    /// re-raised here (the first one; ranks blocked on the failed rank are released).
    pub fn run<R, F>(n: usize, f: F) -> Vec<R>
    where
        R: Send,
        F: Fn(ThreadComm) -> R + Sync,
    {
        Self::builder(n).run(f)
    }

    /// Run a fallible `f` on `n` ranks; the first error or panic ends the run.
    pub fn try_run<R, E, F>(n: usize, f: F) -> Result<Vec<R>, RankFailure<E>>
    where
        R: Send,
        E: Send,
        F: Fn(ThreadComm) -> Result<R, E> + Sync,
    {
        Self::builder(n).try_run(f)
    }

    /// Options for a run of `n` ranks.
    pub fn builder(n: usize) -> ThreadsBuilder {
        let timeout = std::env::var("PLANEWAVE_THREADS_TIMEOUT")
            .ok()
            .and_then(|s| s.parse::<f64>().ok())
            .filter(|&s| s > 0.0)
            .map_or(Duration::from_secs(300), Duration::from_secs_f64);
        ThreadsBuilder {
            n,
            ranks_per_node: None,
            timeout,
        }
    }
}

impl ThreadsBuilder {
    /// Emulate nodes of `k` consecutive ranks for `split_shared`.
    pub fn ranks_per_node(mut self, k: usize) -> Self {
        assert!(k > 0, "planewave-comm: ranks_per_node must be positive");
        self.ranks_per_node = Some(k);
        self
    }

    /// Longest a receive may wait before the run is declared stalled.
    pub fn timeout(mut self, t: Duration) -> Self {
        self.timeout = t;
        self
    }

    /// See [`Threads::run`].
    pub fn run<R, F>(self, f: F) -> Vec<R>
    where
        R: Send,
        F: Fn(ThreadComm) -> R + Sync,
    {
        match self.run_inner(|c| Ok::<R, std::convert::Infallible>(f(c))) {
            Ok(v) => v,
            Err((_, Failure::Panic(p))) => resume_unwind(p),
            Err((_, Failure::Error(e))) => match e {},
        }
    }

    /// See [`Threads::try_run`].
    pub fn try_run<R, E, F>(self, f: F) -> Result<Vec<R>, RankFailure<E>>
    where
        R: Send,
        E: Send,
        F: Fn(ThreadComm) -> Result<R, E> + Sync,
    {
        self.run_inner(f).map_err(|(rank, fail)| match fail {
            Failure::Error(error) => RankFailure::Error { rank, error },
            Failure::Panic(p) => RankFailure::Panic {
                rank,
                message: panic_message(p.as_ref()),
            },
        })
    }

    fn run_inner<R, E, F>(self, f: F) -> Result<Vec<R>, (usize, Failure<E>)>
    where
        R: Send,
        E: Send,
        F: Fn(ThreadComm) -> Result<R, E> + Sync,
    {
        let n = self.n;
        assert!(n > 0, "planewave-comm: Threads needs at least one rank");
        let world = Arc::new(World {
            ranks_per_node: self.ranks_per_node.unwrap_or(n),
            boxes: (0..n).map(|_| Mailbox::default()).collect(),
            failed: AtomicBool::new(false),
            finished: (0..n).map(|_| AtomicBool::new(false)).collect(),
            next_ctx: AtomicU64::new(1),
            timeout: self.timeout,
        });
        let members: Arc<[usize]> = (0..n).collect();
        let first: Mutex<Option<(usize, Failure<E>)>> = Mutex::new(None);
        let results: Vec<Option<R>> = std::thread::scope(|s| {
            let handles: Vec<_> = (0..n)
                .map(|rank| {
                    let comm = ThreadComm {
                        world: world.clone(),
                        ctx: 0,
                        members: members.clone(),
                        rank,
                        stats: Arc::new(Stats::new()),
                        wait_ns: Arc::new(AtomicU64::new(0)),
                    };
                    let (f, world, first) = (&f, world.clone(), &first);
                    std::thread::Builder::new()
                        .name(format!("rank-{rank}"))
                        .spawn_scoped(s, move || {
                            let out = catch_unwind(AssertUnwindSafe(|| f(comm)));
                            let fail = |e: Failure<E>| {
                                let mut g = first.lock().unwrap_or_else(|p| p.into_inner());
                                if g.is_none() {
                                    *g = Some((rank, e));
                                }
                                drop(g);
                                world.set_failed();
                            };
                            let r = match out {
                                Ok(Ok(r)) => Some(r),
                                Ok(Err(e)) => {
                                    fail(Failure::Error(e));
                                    None
                                }
                                Err(p) if p.is::<PeerFailed>() => None,
                                Err(p) => {
                                    fail(Failure::Panic(p));
                                    None
                                }
                            };
                            world.set_finished(rank);
                            r
                        })
                        .expect("planewave-comm: cannot spawn a rank thread")
                })
                .collect();
            handles
                .into_iter()
                .map(|h| h.join().unwrap_or_else(|p| resume_unwind(p)))
                .collect()
        });
        if let Some(f) = first.into_inner().unwrap_or_else(|p| p.into_inner()) {
            return Err(f);
        }
        Ok(results
            .into_iter()
            .map(|r| r.expect("planewave-comm: rank ended without a result"))
            .collect())
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
struct Key {
    ctx: u64,
    src: usize,
    tag: u64,
}

#[derive(Default)]
struct Mailbox {
    queues: Mutex<HashMap<Key, VecDeque<Payload>>>,
    cv: Condvar,
}

struct World {
    ranks_per_node: usize,
    boxes: Vec<Mailbox>,
    failed: AtomicBool,
    finished: Vec<AtomicBool>,
    next_ctx: AtomicU64,
    timeout: Duration,
}

impl World {
    fn wake_all(&self) {
        for b in &self.boxes {
            let _g = b.queues.lock().unwrap_or_else(|p| p.into_inner());
            b.cv.notify_all();
        }
    }
    fn set_failed(&self) {
        self.failed.store(true, Ordering::SeqCst);
        self.wake_all();
    }
    fn set_finished(&self, rank: usize) {
        self.finished[rank].store(true, Ordering::SeqCst);
        self.wake_all();
    }
}

// Internal tags live above every user tag (user tags are u32).
const INTERNAL: u64 = 1 << 40;
const T_BARRIER: u64 = INTERNAL + 1;
const T_BCAST: u64 = INTERNAL + 2;
const T_REDUCE: u64 = INTERNAL + 3;
const T_GATHER: u64 = INTERNAL + 4;
const T_SCATTER: u64 = INTERNAL + 5;
const T_ALLTOALL: u64 = INTERNAL + 6;
const T_REDSCAT: u64 = INTERNAL + 7;

/// One rank's handle on a group of thread ranks.
#[derive(Clone)]
pub struct ThreadComm {
    world: Arc<World>,
    ctx: u64,
    members: Arc<[usize]>,
    rank: usize,
    stats: Arc<Stats>,
    wait_ns: Arc<AtomicU64>,
}

impl fmt::Debug for ThreadComm {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ThreadComm")
            .field("rank", &self.rank)
            .field("size", &self.members.len())
            .field("world_rank", &self.members[self.rank])
            .finish()
    }
}

impl ThreadComm {
    /// Shared handle as a trait object.
    pub fn into_arc(self) -> Arc<dyn Communicator> {
        Arc::new(self)
    }

    /// This rank's index in the world of the run.
    pub fn world_rank(&self) -> usize {
        self.members[self.rank]
    }

    fn check_alive(&self) {
        if self.world.failed.load(Ordering::SeqCst) {
            resume_unwind(Box::new(PeerFailed));
        }
    }

    fn post(&self, dest: usize, tag: u64, p: Payload) {
        self.check_alive();
        assert!(
            dest < self.members.len(),
            "planewave-comm: rank {dest} out of range"
        );
        let b = &self.world.boxes[self.members[dest]];
        let key = Key {
            ctx: self.ctx,
            src: self.members[self.rank],
            tag,
        };
        b.queues
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .entry(key)
            .or_default()
            .push_back(p);
        b.cv.notify_all();
    }

    fn take(&self, src: usize, tag: u64) -> Payload {
        assert!(
            src < self.members.len(),
            "planewave-comm: rank {src} out of range"
        );
        let me = self.members[self.rank];
        let wsrc = self.members[src];
        let key = Key {
            ctx: self.ctx,
            src: wsrc,
            tag,
        };
        let b = &self.world.boxes[me];
        let t0 = Instant::now();
        let mut g = b.queues.lock().unwrap_or_else(|e| e.into_inner());
        loop {
            if let Some(p) = g.get_mut(&key).and_then(VecDeque::pop_front) {
                self.wait_ns
                    .fetch_add(t0.elapsed().as_nanos() as u64, Ordering::Relaxed);
                return p;
            }
            if self.world.failed.load(Ordering::SeqCst) {
                drop(g);
                resume_unwind(Box::new(PeerFailed));
            }
            if self.world.finished[wsrc].load(Ordering::SeqCst) {
                drop(g);
                panic!(
                    "planewave-comm: rank {me} waits for a message from rank {wsrc} (tag {}), \
                     but rank {wsrc} has already returned (mismatched communication)",
                    tag_name(tag)
                );
            }
            let waited = t0.elapsed();
            if waited > self.world.timeout {
                drop(g);
                panic!(
                    "planewave-comm: rank {me} waited {:.0} s for a message from rank {wsrc} \
                     (tag {}): stalled (set PLANEWAVE_THREADS_TIMEOUT to wait longer)",
                    waited.as_secs_f64(),
                    tag_name(tag)
                );
            }
            g =
                b.cv.wait_timeout(g, Duration::from_millis(100))
                    .unwrap_or_else(|e| e.into_inner())
                    .0;
        }
    }

    fn timed<R>(&self, class: CommClass, bytes: usize, f: impl FnOnce() -> R) -> R {
        self.check_alive();
        let t0 = Instant::now();
        let w0 = self.wait_ns.load(Ordering::Relaxed);
        let r = f();
        let w = self.wait_ns.load(Ordering::Relaxed) - w0;
        self.stats
            .record(class, bytes, t0.elapsed(), Duration::from_nanos(w));
        r
    }

    fn bcast_payload(&self, p: Option<Payload>, root: usize) -> Payload {
        if self.rank == root {
            let p = p.expect("root payload");
            for r in 0..self.size() {
                if r != root {
                    self.post(r, T_BCAST, p.clone());
                }
            }
            p
        } else {
            self.take(root, T_BCAST)
        }
    }

    fn reduce_inner(&self, mut data: SliceMut<'_>, op: ReduceOp, root: usize) {
        let n = self.size();
        if data.kind() == Kind::C64 && op != ReduceOp::Sum {
            panic!("planewave-comm: {op:?} is not defined for complex numbers");
        }
        if self.rank != root {
            self.post(root, T_REDUCE, data.as_slice().to_payload());
            return;
        }
        // Sum in rank order: ((r0 + r1) + r2) + ...
        let own = data.as_slice().to_payload();
        let mut acc = if root == 0 {
            own.clone()
        } else {
            self.take(0, T_REDUCE)
        };
        for r in 1..n {
            let p = if r == root {
                own.clone()
            } else {
                self.take(r, T_REDUCE)
            };
            assert_eq!(
                p.len(),
                acc.len(),
                "planewave-comm: reduction lengths differ between ranks"
            );
            acc.as_slice_mut().combine(p.as_slice(), op);
        }
        data.copy_from_payload(&acc);
    }

    fn gather_inner(&self, send: Slice<'_>, mut recv: SliceMut<'_>, counts: &[usize], root: usize) {
        let n = self.size();
        assert_eq!(counts.len(), n, "planewave-comm: need one count per rank");
        assert_eq!(
            counts[self.rank],
            send.len(),
            "planewave-comm: gather count mismatch"
        );
        if self.rank != root {
            self.post(root, T_GATHER, send.to_payload());
            return;
        }
        let displs = displacements(counts);
        for r in 0..n {
            if r == root {
                recv.copy_at(displs[r], send);
            } else {
                let p = self.take(r, T_GATHER);
                assert_eq!(p.len(), counts[r], "planewave-comm: gather count mismatch");
                recv.copy_at(displs[r], p.as_slice());
            }
        }
    }
}

fn tag_name(tag: u64) -> String {
    match tag {
        T_BARRIER => "barrier".into(),
        T_BCAST => "broadcast".into(),
        T_REDUCE => "reduce".into(),
        T_GATHER => "gather".into(),
        T_SCATTER => "scatter".into(),
        T_ALLTOALL => "alltoall".into(),
        T_REDSCAT => "reduce_scatter".into(),
        t => t.to_string(),
    }
}

struct ThreadRecv {
    comm: ThreadComm,
    src: usize,
    tag: u64,
    kind: Kind,
    count: usize,
}

impl Pending for ThreadRecv {
    fn complete(self: Box<Self>) -> Option<Payload> {
        let p = self.comm.take(self.src, self.tag);
        assert_eq!(
            (p.kind(), p.len()),
            (self.kind, self.count),
            "planewave-comm: irecv expected {} {:?} elements",
            self.count,
            self.kind
        );
        Some(p)
    }
}

impl Communicator for ThreadComm {
    fn rank(&self) -> usize {
        self.rank
    }
    fn size(&self) -> usize {
        self.members.len()
    }
    fn backend(&self) -> &'static str {
        "threads"
    }
    fn stats(&self) -> Arc<Stats> {
        self.stats.clone()
    }

    fn barrier(&self, class: CommClass) {
        self.timed(class, 0, || {
            if self.rank != 0 {
                self.post(0, T_BARRIER, Payload::U8(Vec::new()));
                self.take(0, T_BARRIER);
            } else {
                for r in 1..self.size() {
                    self.take(r, T_BARRIER);
                }
                for r in 1..self.size() {
                    self.post(r, T_BARRIER, Payload::U8(Vec::new()));
                }
            }
        })
    }

    fn broadcast_raw(&self, mut data: SliceMut<'_>, root: usize, class: CommClass) {
        self.timed(class, data.bytes(), || {
            let p = (self.rank == root).then(|| data.as_slice().to_payload());
            let p = self.bcast_payload(p, root);
            if self.rank != root {
                data.copy_from_payload(&p);
            }
        })
    }

    fn allreduce_raw(&self, mut data: SliceMut<'_>, op: ReduceOp, class: CommClass) {
        self.timed(class, data.bytes(), || {
            self.reduce_inner(data.reborrow(), op, 0);
            let p = (self.rank == 0).then(|| data.as_slice().to_payload());
            let p = self.bcast_payload(p, 0);
            if self.rank != 0 {
                data.copy_from_payload(&p);
            }
        })
    }

    fn reduce_raw(&self, data: SliceMut<'_>, op: ReduceOp, root: usize, class: CommClass) {
        self.timed(class, data.bytes(), || self.reduce_inner(data, op, root))
    }

    fn gatherv_raw(
        &self,
        send: Slice<'_>,
        recv: SliceMut<'_>,
        counts: &[usize],
        root: usize,
        class: CommClass,
    ) {
        self.timed(class, send.bytes(), || {
            self.gather_inner(send, recv, counts, root)
        })
    }

    fn allgatherv_raw(
        &self,
        send: Slice<'_>,
        mut recv: SliceMut<'_>,
        counts: &[usize],
        class: CommClass,
    ) {
        self.timed(class, send.bytes(), || {
            self.gather_inner(send, recv.reborrow(), counts, 0);
            let p = (self.rank == 0).then(|| recv.as_slice().to_payload());
            let p = self.bcast_payload(p, 0);
            if self.rank != 0 {
                recv.copy_from_payload(&p);
            }
        })
    }

    fn scatterv_raw(
        &self,
        send: Slice<'_>,
        counts: &[usize],
        mut recv: SliceMut<'_>,
        root: usize,
        class: CommClass,
    ) {
        let bytes = if self.rank == root { send.bytes() } else { 0 };
        self.timed(class, bytes, || {
            let n = self.size();
            assert_eq!(counts.len(), n, "planewave-comm: need one count per rank");
            if self.rank == root {
                let displs = displacements(counts);
                for r in 0..n {
                    if r == root {
                        recv.copy_at(0, send.range_payload(displs[r], counts[r]).as_slice());
                    } else {
                        self.post(r, T_SCATTER, send.range_payload(displs[r], counts[r]));
                    }
                }
            } else {
                let p = self.take(root, T_SCATTER);
                recv.copy_from_payload(&p);
            }
        })
    }

    fn alltoallv_raw(
        &self,
        send: Slice<'_>,
        send_counts: &[usize],
        recv: SliceMut<'_>,
        recv_counts: &[usize],
        class: CommClass,
    ) {
        self.alltoallv_overlap_raw(send, send_counts, recv, recv_counts, &mut || {}, class)
    }

    fn alltoallv_overlap_raw(
        &self,
        send: Slice<'_>,
        send_counts: &[usize],
        mut recv: SliceMut<'_>,
        recv_counts: &[usize],
        overlap: &mut dyn FnMut(),
        class: CommClass,
    ) {
        let n = self.size();
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
        let sd = displacements(send_counts);
        let rd = displacements(recv_counts);
        // Start: every block is posted (sends are eager).
        self.timed(class, send.bytes(), || {
            for k in 1..n {
                let d = (self.rank + k) % n;
                self.post(d, T_ALLTOALL, send.range_payload(sd[d], send_counts[d]));
            }
        });
        overlap();
        // Wait: receive in rank order.
        self.timed(class, 0, || {
            let me = self.rank;
            recv.copy_at(
                rd[me],
                send.range_payload(sd[me], send_counts[me]).as_slice(),
            );
            for s in (0..n).filter(|&s| s != me) {
                let p = self.take(s, T_ALLTOALL);
                assert_eq!(
                    p.len(),
                    recv_counts[s],
                    "planewave-comm: all-to-all-v count mismatch from rank {s}"
                );
                recv.copy_at(rd[s], p.as_slice());
            }
        })
    }

    fn reduce_scatter_raw(
        &self,
        send: Slice<'_>,
        mut recv: SliceMut<'_>,
        counts: &[usize],
        op: ReduceOp,
        class: CommClass,
    ) {
        self.timed(class, send.bytes(), || {
            let n = self.size();
            assert_eq!(counts.len(), n, "planewave-comm: need one count per rank");
            if send.kind() == Kind::C64 && op != ReduceOp::Sum {
                panic!("planewave-comm: {op:?} is not defined for complex numbers");
            }
            let d = displacements(counts);
            for r in 0..n {
                if r != self.rank {
                    self.post(r, T_REDSCAT, send.range_payload(d[r], counts[r]));
                }
            }
            let me = self.rank;
            let mut acc: Option<Payload> = None;
            for s in 0..n {
                let p = if s == me {
                    send.range_payload(d[me], counts[me])
                } else {
                    self.take(s, T_REDSCAT)
                };
                match acc.as_mut() {
                    None => acc = Some(p),
                    Some(a) => a.as_slice_mut().combine(p.as_slice(), op),
                }
            }
            recv.copy_from_payload(&acc.expect("at least one rank"));
        })
    }

    fn send_raw(&self, data: Slice<'_>, dest: usize, tag: u32, class: CommClass) {
        self.timed(class, data.bytes(), || {
            self.post(dest, tag as u64, data.to_payload())
        })
    }

    fn recv_raw(&self, mut data: SliceMut<'_>, src: usize, tag: u32, class: CommClass) {
        self.timed(class, 0, || {
            let p = self.take(src, tag as u64);
            data.copy_from_payload(&p);
        })
    }

    fn exchange_raw(
        &self,
        sends: &[(usize, Slice<'_>)],
        recvs: &mut [(usize, SliceMut<'_>)],
        tag: u32,
        class: CommClass,
    ) {
        let bytes = sends.iter().map(|(_, s)| s.bytes()).sum();
        self.timed(class, bytes, || {
            for (d, s) in sends {
                self.post(*d, tag as u64, s.to_payload());
            }
            for (s, r) in recvs.iter_mut() {
                let p = self.take(*s, tag as u64);
                r.copy_from_payload(&p);
            }
        })
    }

    fn isend_raw(&self, data: Payload, dest: usize, tag: u32, class: CommClass) -> Request {
        let bytes = data.len() * data.kind().size();
        self.timed(class, bytes, || self.post(dest, tag as u64, data));
        Request::new(Box::new(Ready(None)), self.stats.clone(), class)
    }

    fn irecv_raw(&self, buf: Payload, src: usize, tag: u32, class: CommClass) -> Request {
        self.timed(class, 0, || ());
        // The sender's buffer itself arrives (moved, no copy); `buf` only names the shape.
        let pending = ThreadRecv {
            comm: self.clone(),
            src,
            tag: tag as u64,
            kind: buf.kind(),
            count: buf.len(),
        };
        Request::new(Box::new(pending), self.stats.clone(), class)
    }

    fn split(&self, color: Option<u32>, key: i64) -> Option<Arc<dyn Communicator>> {
        self.split_inner(color, key)
            .map(|c| Arc::new(c) as Arc<dyn Communicator>)
    }

    fn split_shared(&self) -> Arc<dyn Communicator> {
        let node = self.world_rank() / self.world.ranks_per_node;
        Arc::new(
            self.split_inner(Some(node as u32), self.rank as i64)
                .expect("every rank has a node"),
        )
    }

    fn fail(&self, message: &str) -> ! {
        panic!("{message}")
    }
}

impl ThreadComm {
    /// [`Communicator::split`] returning the concrete type.
    pub fn split_inner(&self, color: Option<u32>, key: i64) -> Option<ThreadComm> {
        self.timed(CommClass::Other, 16, || {
            let n = self.size();
            // Gather (color, key) on rank 0, which allocates context ids, then broadcast.
            let mine = [color.map_or(-1, i64::from), key];
            let mut all = vec![0i64; 2 * n];
            self.gather_inner(i64::slice(&mine), i64::slice_mut(&mut all), &vec![2; n], 0);
            let p = if self.rank == 0 {
                let mut colors: Vec<i64> =
                    all.iter().step_by(2).copied().filter(|&c| c >= 0).collect();
                colors.sort_unstable();
                colors.dedup();
                let base = self
                    .world
                    .next_ctx
                    .fetch_add(colors.len() as u64 + 1, Ordering::SeqCst);
                all.push(base as i64);
                Some(Payload::I64(all))
            } else {
                None
            };
            let all = i64::from_payload(self.bcast_payload(p, 0));
            let base = all[2 * n] as u64;
            let c = color? as i64;
            let mut colors: Vec<i64> = all[..2 * n]
                .iter()
                .step_by(2)
                .copied()
                .filter(|&c| c >= 0)
                .collect();
            colors.sort_unstable();
            colors.dedup();
            let cidx = colors.binary_search(&c).expect("own colour present") as u64;
            let mut group: Vec<(i64, usize)> = (0..n)
                .filter(|&r| all[2 * r] == c)
                .map(|r| (all[2 * r + 1], r))
                .collect();
            group.sort_unstable();
            let new_rank = group
                .iter()
                .position(|&(_, r)| r == self.rank)
                .expect("own rank");
            let members: Arc<[usize]> = group.iter().map(|&(_, r)| self.members[r]).collect();
            Some(ThreadComm {
                world: self.world.clone(),
                ctx: base + cidx,
                members,
                rank: new_rank,
                stats: self.stats.clone(),
                wait_ns: self.wait_ns.clone(),
            })
        })
    }
}
