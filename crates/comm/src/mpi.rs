//! `Mpi`: the MPI back end on rsmpi (cargo feature `mpi`).
//!
//! Contract:
//! - [`Mpi::init`] initialises MPI (asking for `MPI_THREAD_MULTIPLE`) and returns an
//!   [`MpiUniverse`]; keep it alive for the whole run (dropping it finalises MPI) and drop
//!   every communicator before it.
//! - Every [`Communicator`] operation maps onto the matching MPI call: `MPI_Allreduce`,
//!   `MPI_Reduce`, `MPI_Bcast`, `MPI_Gatherv`, `MPI_Allgatherv`, `MPI_Scatterv`,
//!   `MPI_Alltoallv`, `MPI_Ialltoallv` (overlap), `MPI_Reduce_scatter_block` (equal counts;
//!   uneven counts use `MPI_Reduce` + `MPI_Scatterv`), `MPI_Send`/`MPI_Recv`,
//!   `MPI_Isend`/`MPI_Irecv` + wait, `MPI_Comm_split` and `MPI_Comm_split_type(SHARED)`.
//!   In-place reductions go through a copy of the buffer (rsmpi has no `MPI_IN_PLACE`).
//! - Errors: [`Communicator::fail`] prints the message (prefixed by the rank) and calls
//!   `MPI_Abort` with exit code 2 (planewave's code for errors), which ends every rank; [`Communicator::fail_collective`]
//!   prints it once, from rank 0. A panic on any rank should be routed to `fail` by the
//!   program (see [`install_abort_on_panic`]).
//! - Statistics ("waiting" under MPI): MPI does not say how much of a blocking call was spent
//!   idle, so the waiting time recorded is the time spent in calls whose only job is to wait
//!   for peers: `MPI_Barrier`, blocking `MPI_Recv`, the `MPI_Wait` phase of `exchange_raw`
//!   (timed apart from posting the `MPI_Isend`/`MPI_Irecv`), of the non-blocking all-to-all-v
//!   (the overlapped work between start and wait is not counted at all) and of non-blocking
//!   requests ([`Request::wait`]). Data-moving blocking collectives (reductions, broadcast,
//!   gathers, scatters, `MPI_Alltoallv`, reduce-scatter) and blocking sends record their whole
//!   time and no waiting, so waiting is a lower bound of idle time under MPI, unless the
//!   statistics measure waiting ([`Stats::set_measure_waiting`]): then each of those
//!   collectives starts with an `MPI_Barrier`, recorded as its waiting.
//! - Threads: when MPI grants `MPI_THREAD_MULTIPLE` calls go straight through; otherwise (at
//!   least `MPI_THREAD_SERIALIZED` is required) every MPI call is serialised by a process-wide
//!   lock, which is what makes the handles `Send + Sync`.

use crate::communicator::{CommClass, Communicator, SharedMemory};
use crate::element::{displacements, Element, Kind, Payload, ReduceOp, Slice, SliceMut};
use crate::request::{Pending, Request};
use crate::stats::Stats;
use mpi::collective::SystemOperation;
use mpi::datatype::{Equivalence, Partition, PartitionMut};
use mpi::ffi;
use mpi::raw::AsRaw;
use mpi::request::StaticScope;
use mpi::topology::Communicator as _;
use mpi::topology::{Color, SimpleCommunicator};
use mpi::traits::*;
use mpi::Count;
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};
use std::time::{Duration, Instant};

/// Whether every MPI call must take [`LOCK`] (threading level below `MULTIPLE`).
static SERIALIZE: OnceLock<bool> = OnceLock::new();
static LOCK: Mutex<()> = Mutex::new(());

fn guard() -> Option<MutexGuard<'static, ()>> {
    if *SERIALIZE.get().unwrap_or(&true) {
        Some(LOCK.lock().unwrap_or_else(|e| e.into_inner()))
    } else {
        None
    }
}

/// The MPI environment; finalises MPI when dropped.
pub struct MpiUniverse {
    universe: mpi::environment::Universe,
    world: Arc<Mpi>,
}

impl MpiUniverse {
    /// The world communicator.
    pub fn world(&self) -> Arc<Mpi> {
        self.world.clone()
    }
    /// The underlying rsmpi universe.
    pub fn universe(&self) -> &mpi::environment::Universe {
        &self.universe
    }
}

/// One rank's handle on an MPI communicator.
pub struct Mpi {
    comm: SimpleCommunicator,
    rank: usize,
    size: usize,
    stats: Arc<Stats>,
}

// SAFETY: `SimpleCommunicator` is a handle (an `MPI_Comm`, a pointer into the MPI library) that
// rsmpi does not mark `Send`/`Sync` because the MPI library may not be thread-safe. `Mpi::init`
// requests `MPI_THREAD_MULTIPLE`; when it is granted, the MPI standard (§12.4) allows any
// thread to call MPI on any communicator concurrently. When it is not granted, `init` requires
// at least `MPI_THREAD_SERIALIZED` and sets `SERIALIZE`, and then every MPI call made through
// `Mpi` holds the process-wide `LOCK` (see `guard()`), so no two threads call MPI at the same
// time, which is exactly what SERIALIZED permits. The handle itself is never mutated after
// construction. Hence sharing and sending `Mpi` between threads cannot cause a data race.
unsafe impl Send for Mpi {}
// SAFETY: see the `Send` impl above.
unsafe impl Sync for Mpi {}

impl Mpi {
    /// Initialise MPI. Fails when MPI was already initialised or grants less than
    /// `MPI_THREAD_SERIALIZED`.
    pub fn init() -> Result<MpiUniverse, String> {
        let (universe, level) = mpi::initialize_with_threading(mpi::Threading::Multiple)
            .ok_or_else(|| "MPI is already initialised".to_string())?;
        if level < mpi::Threading::Serialized {
            return Err(format!(
                "the MPI library grants only {level:?} thread support (SERIALIZED needed)"
            ));
        }
        let _ = SERIALIZE.set(level < mpi::Threading::Multiple);
        let world = Arc::new(Mpi::wrap(universe.world(), Arc::new(Stats::new())));
        Ok(MpiUniverse { universe, world })
    }

    fn wrap(comm: SimpleCommunicator, stats: Arc<Stats>) -> Mpi {
        let rank = comm.rank() as usize;
        let size = comm.size() as usize;
        Mpi {
            comm,
            rank,
            size,
            stats,
        }
    }

    /// The rsmpi communicator.
    pub fn raw(&self) -> &SimpleCommunicator {
        &self.comm
    }

    fn timed<R>(&self, class: CommClass, bytes: usize, f: impl FnOnce() -> R) -> R {
        self.timed_wait(class, bytes, || (f(), Duration::ZERO))
    }

    /// A data-moving collective: [`Self::timed`], but when the statistics measure waiting
    /// ([`Stats::measures_waiting`]) a barrier first, whose time is the call's waiting.
    fn collective<R>(&self, class: CommClass, bytes: usize, f: impl FnOnce() -> R) -> R {
        if !self.stats.measures_waiting() {
            return self.timed(class, bytes, f);
        }
        self.timed_wait(class, bytes, || {
            let t0 = Instant::now();
            self.comm.barrier();
            let waited = t0.elapsed();
            (f(), waited)
        })
    }

    /// Like `timed` for calls that measure their own waiting (returned with the result).
    fn timed_wait<R>(
        &self,
        class: CommClass,
        bytes: usize,
        f: impl FnOnce() -> (R, Duration),
    ) -> R {
        let t0 = Instant::now();
        let (r, waited) = {
            let _g = guard();
            f()
        };
        self.stats.record(class, bytes, t0.elapsed(), waited);
        r
    }

    /// A call that only waits (barrier, blocking receive): all its time is waiting.
    fn timed_all_wait<R>(&self, class: CommClass, bytes: usize, f: impl FnOnce() -> R) -> R {
        self.timed_wait(class, bytes, || {
            let t0 = Instant::now();
            let r = f();
            (r, t0.elapsed())
        })
    }

    fn proc(&self, r: usize) -> mpi::topology::Process<'_> {
        assert!(
            r < self.size,
            "planewave-comm: rank {r} out of range ({} ranks)",
            self.size
        );
        self.comm.process_at_rank(r as i32)
    }
}

fn op_of(op: ReduceOp, kind: Kind) -> SystemOperation {
    match op {
        ReduceOp::Sum => SystemOperation::sum(),
        _ if kind == Kind::C64 => {
            panic!("planewave-comm: {op:?} is not defined for complex numbers")
        }
        ReduceOp::Max => SystemOperation::max(),
        ReduceOp::Min => SystemOperation::min(),
    }
}

fn counts_of(c: &[usize]) -> Vec<Count> {
    c.iter()
        .map(|&x| Count::try_from(x).expect("planewave-comm: count exceeds MPI's int range"))
        .collect()
}

fn displs_of(c: &[usize]) -> Vec<Count> {
    counts_of(&displacements(c))
}

trait Mpt: Element + Equivalence {}
impl<T: Element + Equivalence> Mpt for T {}

impl Mpi {
    fn allreduce_t<T: Mpt>(&self, d: &mut [T], op: SystemOperation) {
        let send = d.to_vec();
        self.comm.all_reduce_into(&send[..], d, op);
    }
    fn reduce_t<T: Mpt>(&self, d: &mut [T], op: SystemOperation, root: usize) {
        let send = d.to_vec();
        if self.rank == root {
            self.proc(root).reduce_into_root(&send[..], d, op);
        } else {
            self.proc(root).reduce_into(&send[..], op);
        }
    }
    fn gatherv_t<T: Mpt>(&self, s: &[T], r: &mut [T], counts: &[usize], root: usize) {
        if self.rank == root {
            let (c, d) = (counts_of(counts), displs_of(counts));
            let mut p = PartitionMut::new(r, c, d);
            self.proc(root).gather_varcount_into_root(s, &mut p);
        } else {
            self.proc(root).gather_varcount_into(s);
        }
    }
    fn allgatherv_t<T: Mpt>(&self, s: &[T], r: &mut [T], counts: &[usize]) {
        let (c, d) = (counts_of(counts), displs_of(counts));
        let mut p = PartitionMut::new(r, c, d);
        self.comm.all_gather_varcount_into(s, &mut p);
    }
    fn scatterv_t<T: Mpt>(&self, s: &[T], counts: &[usize], r: &mut [T], root: usize) {
        if self.rank == root {
            let (c, d) = (counts_of(counts), displs_of(counts));
            let p = Partition::new(s, c, d);
            self.proc(root).scatter_varcount_into_root(&p, r);
        } else {
            self.proc(root).scatter_varcount_into(r);
        }
    }
    fn alltoallv_t<T: Mpt>(&self, s: &[T], sc: &[usize], r: &mut [T], rc: &[usize]) {
        let sp = Partition::new(s, counts_of(sc), displs_of(sc));
        let mut rp = PartitionMut::new(r, counts_of(rc), displs_of(rc));
        self.comm.all_to_all_varcount_into(&sp, &mut rp);
    }
    fn alltoallv_overlap_t<T: Mpt>(
        &self,
        s: &[T],
        sc: &[usize],
        r: &mut [T],
        rc: &[usize],
        overlap: &mut dyn FnMut(),
    ) -> (Duration, Duration) {
        // OpenMPI 4.1's MPI_Ialltoallv (libnbc) never completed on a rank whose send buffer was
        // empty (measured: 2 ranks, one sending 3 values, the other nothing, after earlier calls).
        // An empty Rust slice has a dangling address; a one-element stand-in with the same zero
        // counts gives MPI a real buffer and the exchange completes (the counts are unchanged,
        // nothing is read from or written to the stand-ins).
        let (stand_in_s, mut stand_in_r) = ([T::default()], [T::default()]);
        let s = if s.is_empty() { &stand_in_s[..] } else { s };
        let r = if r.is_empty() { &mut stand_in_r[..] } else { r };
        let sp = Partition::new(s, counts_of(sc), displs_of(sc));
        let mut rp = PartitionMut::new(r, counts_of(rc), displs_of(rc));
        mpi::request::scope(|scope| {
            let t0 = Instant::now();
            let req = {
                let _g = guard();
                self.comm
                    .immediate_all_to_all_varcount_into(scope, &sp, &mut rp)
            };
            let posting = t0.elapsed();
            overlap();
            let t1 = Instant::now();
            let _g = guard();
            req.wait();
            (posting, t1.elapsed())
        })
    }
    fn reduce_scatter_t<T: Mpt>(
        &self,
        s: &[T],
        r: &mut [T],
        counts: &[usize],
        op: SystemOperation,
    ) {
        if counts.iter().all(|&c| c == counts[0]) {
            self.comm.reduce_scatter_block_into(s, r, op);
        } else {
            let mut all = s.to_vec();
            self.reduce_t(&mut all, op, 0);
            self.scatterv_t(&all, counts, r, 0);
        }
    }
    fn exchange_t(
        &self,
        sends: &[(usize, Slice<'_>)],
        recvs: &mut [(usize, SliceMut<'_>)],
        tag: i32,
    ) -> Duration {
        mpi::request::scope(|scope| {
            let mut waits: Vec<Box<dyn FnOnce() + '_>> = Vec::new();
            for (src, buf) in recvs.iter_mut() {
                let p = self.proc(*src);
                crate::with_typed!(SliceMut, buf, b => {
                    let req = p.immediate_receive_into_with_tag(scope, &mut **b, tag);
                    waits.push(Box::new(move || { req.wait(); }));
                });
            }
            for (dest, buf) in sends.iter() {
                let p = self.proc(*dest);
                crate::with_typed!(Slice, buf, b => {
                    let req = p.immediate_send_with_tag(scope, *b, tag);
                    waits.push(Box::new(move || { req.wait(); }));
                });
            }
            let t0 = Instant::now();
            for w in waits {
                w();
            }
            t0.elapsed()
        })
    }
}

/// An `MPI_Isend`/`MPI_Irecv` on a buffer owned by the request; completing it gives the buffer
/// back (the received data, or the sent buffer for reuse).
struct MpiPending<T: Mpt> {
    req: Option<mpi::request::Request<'static, [T], StaticScope>>,
    /// The parts of the `Vec` the request owns (pointer, length, capacity), from a
    /// `ManuallyDrop`; only the MPI request refers to the buffer until completion.
    buf: (*mut T, usize, usize),
}

impl<T: Mpt> MpiPending<T> {
    /// Take ownership of `data` as raw parts (never freed until `finish` rebuilds it).
    fn own(data: Vec<T>) -> (*mut T, usize, usize) {
        let mut data = std::mem::ManuallyDrop::new(data);
        (data.as_mut_ptr(), data.len(), data.capacity())
    }

    fn send(data: Vec<T>, dest: mpi::topology::Process<'_>, tag: i32) -> Self {
        let buf = Self::own(data);
        // SAFETY: `buf` holds the parts of a live `Vec` that nothing else owns any more (it is
        // wrapped in `ManuallyDrop`), so the pointer is valid and aligned for `len` elements.
        // The shared slice handed to MPI is the only use of the buffer until the request
        // completes (in `finish` or `drop`), after which the `Vec` is rebuilt from the same
        // parts exactly once. If the request is never completed (a panic unwinding past it)
        // the buffer is leaked, never freed while MPI may still read it.
        let view: &'static [T] = unsafe { std::slice::from_raw_parts(buf.0, buf.1) };
        let req = dest.immediate_send_with_tag(StaticScope, view, tag);
        MpiPending {
            req: Some(req),
            buf,
        }
    }

    fn recv(data: Vec<T>, src: mpi::topology::Process<'_>, tag: i32) -> Self {
        let buf = Self::own(data);
        // SAFETY: as in `send`; the mutable slice given to MPI is the only access to the
        // buffer until the request completes, and the `Vec` is rebuilt only afterwards.
        let view: &'static mut [T] = unsafe { std::slice::from_raw_parts_mut(buf.0, buf.1) };
        let req = src.immediate_receive_into_with_tag(StaticScope, view, tag);
        MpiPending {
            req: Some(req),
            buf,
        }
    }

    fn finish(&mut self) -> Option<Vec<T>> {
        let req = self.req.take()?;
        {
            let _g = guard();
            req.wait();
        }
        let (ptr, len, cap) = self.buf;
        // SAFETY: the request is complete, so MPI no longer accesses the buffer; the parts
        // are those of the `Vec` taken in `own`, and `req` (the only other reference) was
        // consumed by `wait`; `req` is now `None`, so this runs once.
        let data = unsafe { Vec::from_raw_parts(ptr, len, cap) };
        Some(data)
    }
}

impl<T: Mpt> Pending for MpiPending<T> {
    fn complete(mut self: Box<Self>) -> Option<Payload> {
        self.finish().map(T::into_payload)
    }
}

impl<T: Mpt> Drop for MpiPending<T> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            // Leak the buffer rather than wait during unwinding (the job is aborting).
            if let Some(r) = self.req.take() {
                std::mem::forget(r);
            }
        } else {
            self.finish();
        }
    }
}

impl Communicator for Mpi {
    fn rank(&self) -> usize {
        self.rank
    }
    fn size(&self) -> usize {
        self.size
    }
    fn backend(&self) -> &'static str {
        "mpi"
    }
    fn stats(&self) -> Arc<Stats> {
        self.stats.clone()
    }
    fn barrier(&self, class: CommClass) {
        self.timed_all_wait(class, 0, || self.comm.barrier())
    }
    fn broadcast_raw(&self, data: SliceMut<'_>, root: usize, class: CommClass) {
        self.collective(class, data.bytes(), || {
            let p = self.proc(root);
            crate::with_typed!(SliceMut, data, d => p.broadcast_into(d))
        })
    }
    fn allreduce_raw(&self, data: SliceMut<'_>, op: ReduceOp, class: CommClass) {
        let o = op_of(op, data.kind());
        self.collective(
            class,
            data.bytes(),
            || crate::with_typed!(SliceMut, data, d => self.allreduce_t(d, o)),
        )
    }
    fn reduce_raw(&self, data: SliceMut<'_>, op: ReduceOp, root: usize, class: CommClass) {
        let o = op_of(op, data.kind());
        self.collective(
            class,
            data.bytes(),
            || crate::with_typed!(SliceMut, data, d => self.reduce_t(d, o, root)),
        )
    }
    fn gatherv_raw(
        &self,
        send: Slice<'_>,
        recv: SliceMut<'_>,
        counts: &[usize],
        root: usize,
        class: CommClass,
    ) {
        assert_eq!(
            counts.len(),
            self.size,
            "planewave-comm: need one count per rank"
        );
        self.collective(
            class,
            send.bytes(),
            || crate::with_pair!(send, recv, (s, r) => self.gatherv_t(s, r, counts, root)),
        )
    }
    fn allgatherv_raw(
        &self,
        send: Slice<'_>,
        recv: SliceMut<'_>,
        counts: &[usize],
        class: CommClass,
    ) {
        assert_eq!(
            counts.len(),
            self.size,
            "planewave-comm: need one count per rank"
        );
        self.collective(
            class,
            send.bytes(),
            || crate::with_pair!(send, recv, (s, r) => self.allgatherv_t(s, r, counts)),
        )
    }
    fn scatterv_raw(
        &self,
        send: Slice<'_>,
        counts: &[usize],
        recv: SliceMut<'_>,
        root: usize,
        class: CommClass,
    ) {
        assert_eq!(
            counts.len(),
            self.size,
            "planewave-comm: need one count per rank"
        );
        let bytes = if self.rank == root { send.bytes() } else { 0 };
        self.collective(
            class,
            bytes,
            || crate::with_pair!(send, recv, (s, r) => self.scatterv_t(s, counts, r, root)),
        )
    }
    fn alltoallv_raw(
        &self,
        send: Slice<'_>,
        send_counts: &[usize],
        recv: SliceMut<'_>,
        recv_counts: &[usize],
        class: CommClass,
    ) {
        self.collective(class, send.bytes(), || {
            crate::with_pair!(send, recv, (s, r) => self.alltoallv_t(s, send_counts, r, recv_counts))
        })
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
        // Not `timed`: the lock (if any) is taken around start and wait only, so `overlap`
        // may itself call MPI. The overlapped work is not communication time: the call
        // records posting plus waiting, the latter as waiting time.
        let bytes = send.bytes();
        let (posting, waiting) = crate::with_pair!(send, recv, (s, r) => {
            self.alltoallv_overlap_t(s, send_counts, r, recv_counts, overlap)
        });
        self.stats.record(class, bytes, posting + waiting, waiting);
    }
    fn reduce_scatter_raw(
        &self,
        send: Slice<'_>,
        recv: SliceMut<'_>,
        counts: &[usize],
        op: ReduceOp,
        class: CommClass,
    ) {
        let o = op_of(op, send.kind());
        self.collective(
            class,
            send.bytes(),
            || crate::with_pair!(send, recv, (s, r) => self.reduce_scatter_t(s, r, counts, o)),
        )
    }
    fn send_raw(&self, data: Slice<'_>, dest: usize, tag: u32, class: CommClass) {
        let p = self.proc(dest);
        self.timed(
            class,
            data.bytes(),
            || crate::with_typed!(Slice, data, d => p.send_with_tag(d, mpi_tag(tag))),
        )
    }
    fn recv_raw(&self, data: SliceMut<'_>, src: usize, tag: u32, class: CommClass) {
        let p = self.proc(src);
        self.timed_all_wait(class, 0, || {
            crate::with_typed!(SliceMut, data, d => { p.receive_into_with_tag(d, mpi_tag(tag)); })
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
        self.timed_wait(class, bytes, || {
            ((), self.exchange_t(sends, recvs, mpi_tag(tag)))
        })
    }
    fn isend_raw(&self, data: Payload, dest: usize, tag: u32, class: CommClass) -> Request {
        let p = self.proc(dest);
        let bytes = data.len() * data.kind().size();
        let t = mpi_tag(tag);
        let pending: Box<dyn Pending> = self.timed(class, bytes, || match data {
            Payload::F64(v) => Box::new(MpiPending::send(v, p, t)) as Box<dyn Pending>,
            Payload::C64(v) => Box::new(MpiPending::send(v, p, t)),
            Payload::I64(v) => Box::new(MpiPending::send(v, p, t)),
            Payload::U64(v) => Box::new(MpiPending::send(v, p, t)),
            Payload::U8(v) => Box::new(MpiPending::send(v, p, t)),
        });
        Request::new(pending, self.stats.clone(), class)
    }
    fn irecv_raw(&self, buf: Payload, src: usize, tag: u32, class: CommClass) -> Request {
        let p = self.proc(src);
        let t = mpi_tag(tag);
        let pending: Box<dyn Pending> = self.timed(class, 0, || match buf {
            Payload::F64(v) => Box::new(MpiPending::recv(v, p, t)) as Box<dyn Pending>,
            Payload::C64(v) => Box::new(MpiPending::recv(v, p, t)),
            Payload::I64(v) => Box::new(MpiPending::recv(v, p, t)),
            Payload::U64(v) => Box::new(MpiPending::recv(v, p, t)),
            Payload::U8(v) => Box::new(MpiPending::recv(v, p, t)),
        });
        Request::new(pending, self.stats.clone(), class)
    }
    fn split(&self, color: Option<u32>, key: i64) -> Option<Arc<dyn Communicator>> {
        let c = match color {
            Some(c) => {
                Color::with_value(i32::try_from(c).expect("planewave-comm: colour too large"))
            }
            None => Color::undefined(),
        };
        let k = i32::try_from(key).expect("planewave-comm: split key exceeds MPI's int range");
        let sub = self.timed(CommClass::Other, 0, || {
            self.comm.split_by_color_with_key(c, k)
        });
        sub.map(|s| Arc::new(Mpi::wrap(s, self.stats.clone())) as Arc<dyn Communicator>)
    }
    fn split_shared(&self) -> Arc<dyn Communicator> {
        let per_node = emulated_ranks_per_node();
        let s = self.timed(CommClass::Other, 0, || {
            let node = self.comm.split_shared(self.rank as i32);
            match per_node {
                // Emulated nodes: consecutive runs of `k` ranks of the real node (still in
                // shared memory, so shared windows work on them).
                Some(k) if k < node.size() as usize => {
                    let colour = Color::with_value((node.rank() as usize / k) as i32);
                    node.split_by_color_with_key(colour, node.rank())
                        .expect("every rank has an emulated node")
                }
                _ => node,
            }
        });
        Arc::new(Mpi::wrap(s, self.stats.clone()))
    }
    fn allocate_shared(&self, bytes: usize) -> Option<Box<dyn SharedMemory>> {
        let t0 = Instant::now();
        let w = MpiSharedWindow::allocate(&self.comm, bytes);
        self.stats
            .record(CommClass::Other, 0, t0.elapsed(), Duration::ZERO);
        w.map(|w| Box::new(w) as Box<dyn SharedMemory>)
    }
    fn as_any(&self) -> Option<&dyn std::any::Any> {
        Some(self)
    }
    fn fail(&self, message: &str) -> ! {
        use std::io::Write;
        eprintln!("error (rank {}): {message}", self.rank);
        let _ = std::io::stderr().flush();
        self.comm.abort(2)
    }
    fn fail_collective(&self, message: &str) -> ! {
        use std::io::Write;
        if self.rank == 0 {
            eprintln!("error: {message}");
            let _ = std::io::stderr().flush();
            self.comm.abort(2)
        }
        // Other ranks wait for rank 0's abort (it reached the same error).
        self.comm.barrier();
        self.comm.abort(2)
    }
}

/// An MPI-3 shared-memory window (`MPI_Win_allocate_shared`, displacement unit 1), kept in
/// one passive-target epoch (`MPI_Win_lock_all` with `MPI_MODE_NOCHECK`) for its whole life so
/// that ranks access it by plain loads and stores; [`SharedMemory::sync`] is the
/// `MPI_Win_sync` + `MPI_Barrier` + `MPI_Win_sync` pattern of the MPI-3 standard (§11.7,
/// "shared memory synchronisation" in the unified model).
struct MpiSharedWindow {
    win: ffi::MPI_Win,
    /// The group's members as a shared-memory communicator (same ranks, same order): the
    /// window's communicator and the one `sync` barriers on.
    comm: SimpleCommunicator,
    /// Every rank's segment: base address in this process and length in bytes.
    segments: Vec<(*mut u8, usize)>,
}

// SAFETY: the fields are an MPI window handle, a communicator handle and addresses of the
// window memory, none of them tied to the creating thread. MPI calls on them are made under
// `guard()`, i.e. either MPI granted MPI_THREAD_MULTIPLE (any thread may call MPI) or the
// process-wide lock serialises the calls (MPI_THREAD_SERIALIZED), exactly as for `Mpi` (see
// its `Send` impl). The addresses are only handed out by `segment`; dereferencing them is the
// caller's `unsafe` responsibility under the `SharedMemory` contract.
unsafe impl Send for MpiSharedWindow {}

impl MpiSharedWindow {
    /// Collective on `comm`. `None` on every rank when the ranks of `comm` do not all share
    /// memory.
    fn allocate(comm: &SimpleCommunicator, bytes: usize) -> Option<MpiSharedWindow> {
        let _g = guard();
        // The shared-memory split of `comm` has all of `comm`'s ranks, in the same order (key
        // = rank), exactly when they share memory; every rank sees the same answer.
        let shared = comm.split_shared(comm.rank());
        if shared.size() != comm.size() {
            return None;
        }
        let size = ffi::MPI_Aint::try_from(bytes)
            .expect("planewave-comm: shared window segment too large");
        let mut base: *mut u8 = std::ptr::null_mut();
        let mut win = std::mem::MaybeUninit::<ffi::MPI_Win>::uninit();
        // SAFETY: plain FFI call with valid arguments: `shared` is a live communicator whose
        // ranks share memory (checked above), `RSMPI_INFO_NULL` is a valid info handle, `base`
        // is a writable `*mut u8` that receives the segment address (the C prototype takes
        // `void *` pointing at a pointer) and `win` is writable storage for the handle. On
        // failure the communicator's default handler (MPI_ERRORS_ARE_FATAL) aborts the job;
        // the return code is checked all the same before `win` is read.
        let rc = unsafe {
            ffi::MPI_Win_allocate_shared(
                size,
                1,
                ffi::RSMPI_INFO_NULL,
                shared.as_raw(),
                (&mut base as *mut *mut u8).cast(),
                win.as_mut_ptr(),
            )
        };
        assert_eq!(
            rc,
            ffi::MPI_SUCCESS as i32,
            "planewave-comm: MPI_Win_allocate_shared failed"
        );
        // SAFETY: MPI_Win_allocate_shared succeeded, so it wrote the window handle.
        let win = unsafe { win.assume_init() };
        let mut segments = Vec::with_capacity(shared.size() as usize);
        for r in 0..shared.size() {
            let mut len: ffi::MPI_Aint = 0;
            let mut unit: std::os::raw::c_int = 0;
            let mut ptr: *mut u8 = std::ptr::null_mut();
            // SAFETY: `win` is the live window just created, `r` a rank of its group, and the
            // three out-pointers point at writable locals of the types the prototype expects
            // (`baseptr` is a `void *` through which a pointer is stored).
            let rc = unsafe {
                ffi::MPI_Win_shared_query(
                    win,
                    r,
                    &mut len,
                    &mut unit,
                    (&mut ptr as *mut *mut u8).cast(),
                )
            };
            assert_eq!(
                rc,
                ffi::MPI_SUCCESS as i32,
                "planewave-comm: MPI_Win_shared_query failed"
            );
            let len = usize::try_from(len).expect("negative segment size");
            if len == 0 || ptr.is_null() {
                segments.push((std::ptr::NonNull::<u8>::dangling().as_ptr(), 0));
            } else {
                segments.push((ptr, len));
            }
        }
        // SAFETY: `win` is live; the passive-target epoch it opens on every rank lasts until
        // `MPI_Win_unlock_all` in `drop`. MPI_MODE_NOCHECK is valid since no rank ever takes
        // an exclusive lock on this window (it is private to this struct).
        let rc = unsafe { ffi::MPI_Win_lock_all(ffi::MPI_MODE_NOCHECK as i32, win) };
        assert_eq!(
            rc,
            ffi::MPI_SUCCESS as i32,
            "planewave-comm: MPI_Win_lock_all failed"
        );
        Some(MpiSharedWindow {
            win,
            comm: shared,
            segments,
        })
    }
}

impl SharedMemory for MpiSharedWindow {
    fn segment(&self, rank: usize) -> (*mut u8, usize) {
        self.segments[rank]
    }
    fn sync(&self) {
        let _g = guard();
        // SAFETY (both calls): `self.win` is live (freed only in `drop`) and inside the
        // lock_all epoch opened in `allocate`, which is what MPI_Win_sync requires.
        // MPI_Win_sync completes this rank's stores to the window memory, the barrier orders
        // every rank's first sync before every rank's second one, and the second sync makes
        // the other ranks' completed stores visible to this rank's later loads (MPI-3 §11.7).
        unsafe { ffi::MPI_Win_sync(self.win) };
        self.comm.barrier();
        unsafe { ffi::MPI_Win_sync(self.win) };
    }
}

impl Drop for MpiSharedWindow {
    fn drop(&mut self) {
        if std::thread::panicking() || mpi::environment::is_finalized() {
            // Freeing is collective: during unwinding (the job is aborting) or after
            // MPI_Finalize it could hang or crash, so the window is leaked instead.
            return;
        }
        let _g = guard();
        // SAFETY: `self.win` is live and in the epoch opened by `allocate`; unlock_all ends
        // that epoch and MPI_Win_free (collective, called on every rank that drops its handle
        // in the same collective order, as `Communicator::allocate_shared` requires) releases
        // the memory. No reference into the memory outlives this struct: `segment` only hands
        // out raw pointers whose users are bound by the `SharedMemory` contract to stop using
        // them before the region is dropped.
        unsafe {
            ffi::MPI_Win_unlock_all(self.win);
            ffi::MPI_Win_free(&mut self.win);
        }
    }
}

/// Environment variable that makes [`Communicator::split_shared`] of the MPI back end emulate
/// nodes of `k` consecutive ranks of each real node (like `ThreadsBuilder::ranks_per_node`),
/// so that node-aware algorithms can be tested with several nodes on one machine. Unset, empty
/// or not smaller than the real node: real nodes.
pub const RANKS_PER_NODE_ENV: &str = "PLANEWAVE_MPI_RANKS_PER_NODE";

fn emulated_ranks_per_node() -> Option<usize> {
    let v = std::env::var(RANKS_PER_NODE_ENV).ok()?;
    if v.trim().is_empty() {
        return None;
    }
    match v.trim().parse::<usize>() {
        Ok(k) if k > 0 => Some(k),
        _ => panic!("planewave-comm: {RANKS_PER_NODE_ENV}={v:?} is not a positive integer"),
    }
}

fn mpi_tag(tag: u32) -> i32 {
    // MPI guarantees tags up to 32767; fold planewave's internal tags into 16384..32767.
    if tag < 16384 {
        tag as i32
    } else {
        16384 + (tag % 16384) as i32
    }
}

/// Make a panic on any thread of this process print its message once and abort every MPI
/// rank with exit code 2 (instead of leaving the other ranks blocked).
pub fn install_abort_on_panic() {
    let default = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        default(info);
        if mpi::environment::is_initialized() && !mpi::environment::is_finalized() {
            let world = SimpleCommunicator::world();
            world.abort(2);
        }
    }));
}
