//! Node-aggregated all-to-all-v (the CASTEP/Cray shared-memory transpose).
//!
//! Contract: the ranks of a node (from [`Communicator::split_shared`], computed once in
//! [`NodeAggregated::new`], which is collective) send their counts and whole send buffers to
//! the node leader (node rank 0); the leader packs one message per other node (blocks ordered
//! by source rank, then destination rank), exchanges only with the other leaders, unpacks, and
//! scatters every member's receive buffer back. Inter-node messages drop from (ranks per
//! node)² per node pair to one, at the price of two intra-node copies.
//!
//! Shared memory: when the back end gives the node group shared memory
//! ([`Communicator::allocate_shared`]; MPI: an MPI-3 window from `MPI_Win_allocate_shared` on
//! the shared-memory communicator) the strategy uses it instead of the gather/scatter:
//! 1. every member stores its `2n` counts into its slot of a small fixed window (the leader's
//!    segment) and the node synchronises (`MPI_Win_sync` + barrier + `MPI_Win_sync`);
//! 2. every member computes the same layout of the data window from all members' counts (the
//!    window, in the leader's segment, is re-allocated, collectively, when a call needs more
//!    than it holds, by 1.5× at least) and stores each of its outgoing blocks straight to its
//!    final place: the packet for its node's leader to send to another node, or the block
//!    another member of the node will read; the node synchronises;
//! 3. members copy their intra-node blocks out while the leader sends every packet from the
//!    window and receives the other leaders' packets into it; the node synchronises and the
//!    members copy their inter-node blocks out of the window.
//!
//! Every element is copied twice in shared memory (into and out of the window) against four
//! times with the gather/scatter, and three barriers replace two gathers and a scatter (two
//! on a single node). Back ends without shared memory (`Threads`, whose ranks share memory
//! but pass messages, and `Solo`) keep the gather/scatter through the leader, which moves the
//! same inter-node messages. To test several nodes on one machine use
//! `ThreadsBuilder::ranks_per_node` or, under MPI, `PLANEWAVE_MPI_RANKS_PER_NODE`.
//!
//! Measured (`mpi_check --bench`, OpenMPI, one 2-core machine, equal counts; time per call,
//! gather/scatter before → shared window after): 2 ranks, 64 KiB per pair 1.59 ms → 18 us
//! (native 12 us), 1 MiB 24.7 ms → 3.3 ms (native 0.5–4.6 ms, noisy); 4 ranks, 64 KiB
//! 2.0 ms → 0.42 ms (native 0.27 ms), 1 MiB 54 ms → 13.4 ms (native 8.3 ms); 4 ranks as two
//! emulated nodes, 64 KiB 0.56 ms, 1 MiB 17.7 ms.

use super::{check_counts, AlltoallvAlgorithm, AlltoallvStrategy, TAG_NODE};
use crate::communicator::{CommClass, Communicator, SharedMemory};
use crate::element::{displacements, Payload, Slice, SliceMut};
use crate::ext::CommExt;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Node-aggregated exchange bound to a communicator.
pub struct NodeAggregated {
    comm: Arc<dyn Communicator>,
    node: Arc<dyn Communicator>,
    /// For every rank of `comm`, the `comm` rank of its node leader.
    leader_of: Vec<usize>,
    /// Leaders in ascending order.
    leaders: Vec<usize>,
    /// Members (comm ranks, ascending) of every node, in the order of `leaders`.
    members: Vec<Vec<usize>>,
    /// Index of this rank's node in `leaders`.
    my_node: usize,
    /// The shared windows, when the back end has shared memory (locked for a whole call).
    windows: Option<Mutex<Windows>>,
}

/// The node's shared memory: both windows live in the leader's segment.
struct Windows {
    /// Two areas (used by alternate calls) of `2n` counts (send, then receive) of every
    /// member: member `i` at `u64` offset `2n(i + m·area)`.
    meta: Box<dyn SharedMemory>,
    /// Calls made so far (selects the meta area).
    calls: u64,
    /// The data window and its size in bytes (none before the first call that moves data).
    data: Option<(Box<dyn SharedMemory>, usize)>,
}

impl NodeAggregated {
    /// Find the nodes of `comm` (collective).
    pub fn new(comm: Arc<dyn Communicator>) -> Self {
        let node = comm.split_shared();
        Self::with_node(comm, node)
    }

    /// Use the groups of `node` (a split of `comm` whose groups share memory, e.g. a split of
    /// [`Communicator::split_shared`], listing its ranks in `comm` rank order) as the nodes
    /// (collective). This is how tests emulate several nodes on one machine.
    pub fn with_node(comm: Arc<dyn Communicator>, node: Arc<dyn Communicator>) -> Self {
        let mut leader = [comm.rank() as u64];
        node.broadcast(&mut leader, 0, CommClass::Other);
        let leader_of: Vec<usize> = comm
            .allgatherv(&leader, CommClass::Other)
            .into_iter()
            .map(|l| l as usize)
            .collect();
        let mut leaders = leader_of.clone();
        leaders.sort_unstable();
        leaders.dedup();
        let members: Vec<Vec<usize>> = leaders
            .iter()
            .map(|&l| (0..comm.size()).filter(|&r| leader_of[r] == l).collect())
            .collect();
        // The node communicator must list its members in comm-rank order.
        let me_node = leaders
            .binary_search(&leader_of[comm.rank()])
            .expect("own node");
        assert_eq!(
            members[me_node][node.rank()],
            comm.rank(),
            "planewave-comm: node communicator is not in communicator rank order"
        );
        let m = node.size();
        let n = comm.size();
        let meta_bytes = if node.rank() == 0 { 2 * 16 * n * m } else { 0 };
        let windows = node.allocate_shared(meta_bytes).map(|meta| {
            Mutex::new(Windows {
                meta,
                calls: 0,
                data: None,
            })
        });
        NodeAggregated {
            comm,
            node,
            leader_of,
            leaders,
            members,
            my_node: me_node,
            windows,
        }
    }

    /// Number of nodes.
    pub fn nodes(&self) -> usize {
        self.leaders.len()
    }

    /// Whether the exchange goes through a shared-memory window (see the module doc).
    pub fn uses_shared_window(&self) -> bool {
        self.windows.is_some()
    }
}

/// Store elements `start..start + len` of `src` at `dst` (a byte copy).
///
/// # Safety
/// `dst` must be valid for writes of `len` elements' bytes, and no other rank or thread may
/// access those bytes until the next synchronisation of the shared memory they lie in.
unsafe fn store(dst: *mut u8, src: Slice<'_>, start: usize, len: usize) {
    crate::with_typed!(Slice, src, v => {
        let part = &v[start..start + len];
        // SAFETY: the source is a live slice (bounds checked above) in this rank's private
        // memory, so it cannot overlap the shared window; the destination is valid and
        // unshared for these bytes by the caller's contract. A byte copy needs no alignment.
        unsafe {
            std::ptr::copy_nonoverlapping(
                part.as_ptr().cast::<u8>(),
                dst,
                std::mem::size_of_val(part),
            )
        }
    })
}

/// Load `len` elements from `src` (a byte copy) into elements `start..start + len` of `dst`.
///
/// # Safety
/// `src` must be valid for reads of `len` elements' bytes, hold bytes written by a [`store`]
/// of the same element kind, and no rank may write them until the next synchronisation.
unsafe fn load(src: *const u8, dst: &mut SliceMut<'_>, start: usize, len: usize) {
    crate::with_typed!(SliceMut, dst, v => {
        let part = &mut v[start..start + len];
        // SAFETY: the destination is a live, exclusively borrowed slice in private memory
        // (bounds checked above), disjoint from the window; the source is valid and not
        // written concurrently by the caller's contract. The element kinds (f64, Complex64,
        // i64, u64, u8) are plain data for which every bit pattern is a valid value, and the
        // bytes are those a `store` of the same kind copied, so the values are bit-identical.
        unsafe {
            std::ptr::copy_nonoverlapping(
                src,
                part.as_mut_ptr().cast::<u8>(),
                std::mem::size_of_val(part),
            )
        }
    })
}

/// `w.sync()`, returning the time it took (a barrier: all of it is waiting).
fn timed_sync(w: &dyn SharedMemory) -> Duration {
    let t0 = Instant::now();
    w.sync();
    t0.elapsed()
}

impl NodeAggregated {
    /// The exchange through the shared windows (see the module doc).
    fn alltoallv_window(
        &self,
        win: &mut Windows,
        send: Slice<'_>,
        send_counts: &[usize],
        mut recv: SliceMut<'_>,
        recv_counts: &[usize],
        class: CommClass,
    ) {
        let t_start = Instant::now();
        let mut waited = Duration::ZERO;
        let mut exchange_time = Duration::ZERO;
        let comm = &*self.comm;
        let n = comm.size();
        let node = &*self.node;
        let m = node.size();
        let me = node.rank();
        let is_leader = me == 0;
        let my_node = self.my_node;
        let mine = &self.members[my_node];
        let es = send.kind().size();

        // 1. Counts into slot `me` of the meta window, then everybody's counts out of it.
        let meta: Vec<u64> = send_counts
            .iter()
            .chain(recv_counts)
            .map(|&c| c as u64)
            .collect();
        let (meta_segment, meta_len) = win.meta.segment(0);
        assert!(
            meta_len >= 2 * 16 * n * m,
            "planewave-comm: meta window too small"
        );
        // Alternate calls use alternate areas: a call that moves no data has a single sync, so
        // a member could otherwise overwrite its counts while a slower one still reads them.
        let area = (win.calls % 2) as usize;
        win.calls += 1;
        // SAFETY (pointer arithmetic): the area is inside the segment, checked above.
        let meta_base = unsafe { meta_segment.add(area * 16 * n * m) };
        // SAFETY: slot `me` of this area (bytes 16n·me .. 16n·(me+1)) lies inside the leader's
        // segment (checked above) and only this rank writes it. Nobody reads it before the
        // sync below. It was last read in the call before the previous one, during which every
        // member read it before the meta sync of the previous call, which this rank has passed
        // (all members arrived there), so no read of the old values races with this write.
        // The source is a private `Vec<u64>` of exactly 16n bytes.
        unsafe {
            std::ptr::copy_nonoverlapping(
                meta.as_ptr().cast::<u8>(),
                meta_base.add(16 * n * me),
                16 * n,
            )
        };
        waited += timed_sync(&*win.meta);
        let mut all = vec![0u64; 2 * n * m];
        // SAFETY: the whole meta area (16nm bytes, inside the segment) was written by the
        // members before the sync just done and is not written again before the call after
        // next, whose stores come after the next call's meta sync, i.e. after this read. The
        // destination is a private `Vec<u64>` of 16nm bytes (any bit pattern is a valid u64).
        unsafe {
            std::ptr::copy_nonoverlapping(meta_base, all.as_mut_ptr().cast::<u8>(), 16 * n * m)
        };
        let sc = |i: usize, d: usize| all[2 * n * i + d] as usize;
        let rc = |j: usize, s: usize| all[2 * n * j + n + s] as usize;

        // 2. Layout of the data window (bytes; identical on every member): the outgoing
        // packets per other node, the intra-node blocks, the incoming packets per other node.
        let mut put = vec![0usize; n]; // where my block for rank d goes
        let mut get = vec![0usize; n]; // where my block from rank s lies
        let mut out: Vec<(usize, usize, usize)> = Vec::new(); // (leader, offset, bytes)
        let mut inc: Vec<(usize, usize, usize)> = Vec::new();
        let mut off = 0usize;
        for (t, targets) in self.members.iter().enumerate() {
            if t == my_node {
                continue;
            }
            let start = off;
            for i in 0..m {
                for &d in targets {
                    if i == me {
                        put[d] = off;
                    }
                    off += sc(i, d) * es;
                }
            }
            if off > start {
                out.push((self.leaders[t], start, off - start));
            }
        }
        for (i, &s) in mine.iter().enumerate() {
            for (j, &d) in mine.iter().enumerate() {
                assert_eq!(
                    sc(i, d),
                    rc(j, s),
                    "planewave-comm: rank {s} sends {} elements to rank {d}, which expects {}",
                    sc(i, d),
                    rc(j, s)
                );
                if i == me {
                    put[d] = off;
                }
                if j == me {
                    get[s] = off;
                }
                off += sc(i, d) * es;
            }
        }
        for (t, sources) in self.members.iter().enumerate() {
            if t == my_node {
                continue;
            }
            let start = off;
            for &s in sources {
                for j in 0..m {
                    if j == me {
                        get[s] = off;
                    }
                    off += rc(j, s) * es;
                }
            }
            if off > start {
                inc.push((self.leaders[t], start, off - start));
            }
        }
        let total = off;
        if total == 0 {
            comm.stats().record(class, 0, t_start.elapsed(), waited);
            return;
        }
        // Grow: every member takes the same decision from the same counts, so the collective
        // free and allocation match. Nobody uses the old window any more: every member passed
        // the sync above, after its reads of the previous call.
        if win.data.as_ref().is_none_or(|(_, cap)| *cap < total) {
            let cap = total.max(win.data.as_ref().map_or(0, |(_, c)| c + c / 2));
            win.data = None;
            let w = node
                .allocate_shared(if is_leader { cap } else { 0 })
                .expect("planewave-comm: shared memory vanished on the node communicator");
            win.data = Some((w, cap));
        }
        let (data, _) = win.data.as_ref().expect("data window");
        let (base, len) = data.segment(0);
        assert!(len >= total, "planewave-comm: data window too small");

        // 3. Outgoing blocks straight to their final place.
        let sd = displacements(send_counts);
        for d in 0..n {
            if send_counts[d] > 0 {
                // SAFETY: `put[d]..put[d] + send_counts[d]·es` is this member's block for `d`
                // in the layout every member computed identically; blocks of the layout are
                // disjoint and inside `total <= len` bytes of the leader's segment. Nobody
                // reads the window before the sync below, and the previous call's readers
                // finished before the meta sync of this call (see step 1).
                unsafe { store(base.add(put[d]), send, sd[d], send_counts[d]) };
            }
        }
        waited += timed_sync(&**data);

        // 4. Intra-node blocks out; the leader exchanges the packets meanwhile.
        let rd = displacements(recv_counts);
        let copy_in = |recv: &mut SliceMut<'_>, s: usize| {
            if recv_counts[s] > 0 {
                // SAFETY: `get[s]..get[s] + recv_counts[s]·es` is the block from `s` to this
                // member (its size is `recv_counts[s]` by the counts check above for s on this
                // node, by the layout for the others); it was stored by `s` (intra-node) or
                // received by the leader before the sync this call just passed, and nobody
                // writes it before the next call's meta sync, which this rank reaches only
                // after this read.
                unsafe { load(base.add(get[s]), recv, rd[s], recv_counts[s]) };
            }
        };
        for &s in mine {
            copy_in(&mut recv, s);
        }
        if self.nodes() > 1 {
            if is_leader {
                let t0 = Instant::now();
                // SAFETY: the packets are disjoint byte ranges inside `total <= len` bytes of
                // the window. Between the sync above and the one below only the leader (this
                // rank, here) accesses the outgoing and incoming areas: members only read the
                // intra-node area, which neither range overlaps. The slices do not outlive
                // this block, which ends before the next sync; `u8` has no alignment or
                // validity requirement.
                let sends: Vec<(usize, Slice<'_>)> = out
                    .iter()
                    .map(|&(l, o, b)| {
                        (
                            l,
                            Slice::U8(unsafe { std::slice::from_raw_parts(base.add(o), b) }),
                        )
                    })
                    .collect();
                let mut recvs: Vec<(usize, SliceMut<'_>)> = inc
                    .iter()
                    .map(|&(l, o, b)| {
                        (
                            l,
                            SliceMut::U8(unsafe { std::slice::from_raw_parts_mut(base.add(o), b) }),
                        )
                    })
                    .collect();
                comm.exchange_raw(&sends, &mut recvs, TAG_NODE, class);
                exchange_time = t0.elapsed();
            }
            waited += timed_sync(&**data);
            for (t, sources) in self.members.iter().enumerate() {
                if t != my_node {
                    for &s in sources {
                        copy_in(&mut recv, s);
                    }
                }
            }
        }
        comm.stats().record(
            class,
            send.bytes(),
            t_start.elapsed().saturating_sub(exchange_time),
            waited,
        );
    }
}

impl AlltoallvStrategy for NodeAggregated {
    fn algorithm(&self) -> AlltoallvAlgorithm {
        AlltoallvAlgorithm::NodeAggregated
    }
    fn comm(&self) -> &Arc<dyn Communicator> {
        &self.comm
    }
    fn alltoallv_raw(
        &self,
        send: Slice<'_>,
        send_counts: &[usize],
        mut recv: SliceMut<'_>,
        recv_counts: &[usize],
        class: CommClass,
    ) {
        let comm = &*self.comm;
        check_counts(comm, &send, send_counts, &recv, recv_counts);
        if let Some(w) = &self.windows {
            let mut w = w.lock().unwrap_or_else(|e| e.into_inner());
            return self.alltoallv_window(&mut w, send, send_counts, recv, recv_counts, class);
        }
        let n = comm.size();
        let node = &*self.node;
        let m = node.size();
        let is_leader = node.rank() == 0;
        let my_node = self
            .leaders
            .binary_search(&self.leader_of[comm.rank()])
            .expect("own node");
        let kind = send.kind();

        // 1. Counts to the leader: [send_counts, recv_counts] of every member.
        let meta: Vec<u64> = send_counts
            .iter()
            .chain(recv_counts)
            .map(|&c| c as u64)
            .collect();
        let mut all_meta = vec![0u64; if is_leader { 2 * n * m } else { 0 }];
        node.gatherv_raw(
            Slice::U64(&meta),
            SliceMut::U64(&mut all_meta),
            &vec![2 * n; m],
            0,
            class,
        );

        // 2. Send buffers to the leader.
        let mut totals = vec![0usize; m];
        if is_leader {
            for (i, t) in totals.iter_mut().enumerate() {
                *t = all_meta[2 * n * i..2 * n * i + n].iter().sum::<u64>() as usize;
            }
        } else {
            totals[node.rank()] = send.len();
        }
        let mut gathered = Payload::zeros(kind, if is_leader { totals.iter().sum() } else { 0 });
        node.gatherv_raw(send, gathered.as_slice_mut(), &totals, 0, class);

        // 3-5. Leader: pack per node, exchange with the other leaders, unpack per member.
        let mut out_counts = vec![0usize; m];
        out_counts[node.rank()] = recv.len();
        let mut out = Payload::zeros(kind, 0);
        if is_leader {
            let mine = &self.members[my_node];
            let sc = |i: usize, d: usize| all_meta[2 * n * i + d] as usize;
            let rc = |j: usize, s: usize| all_meta[2 * n * j + n + s] as usize;
            let member_off = displacements(&totals);
            let sdispl: Vec<Vec<usize>> = (0..m)
                .map(|i| displacements(&(0..n).map(|d| sc(i, d)).collect::<Vec<_>>()))
                .collect();
            for (j, c) in out_counts.iter_mut().enumerate() {
                *c = (0..n).map(|s| rc(j, s)).sum();
            }
            let g = gathered.as_slice();
            // Outgoing packets: for s in my members, for d in the target node's members.
            let mut packets: Vec<(usize, Payload)> = Vec::new();
            for (t, targets) in self.members.iter().enumerate() {
                if t == my_node {
                    continue;
                }
                let len: usize = (0..m)
                    .map(|i| targets.iter().map(|&d| sc(i, d)).sum::<usize>())
                    .sum();
                if len == 0 {
                    continue;
                }
                let mut p = Payload::zeros(kind, len);
                let mut off = 0;
                let mut pm = p.as_slice_mut();
                for i in 0..m {
                    for &d in targets {
                        let c = sc(i, d);
                        pm.copy_at(off, g.sub(member_off[i] + sdispl[i][d], c));
                        off += c;
                    }
                }
                packets.push((self.leaders[t], p));
            }
            // Incoming packets: from s in the source node's members, to d in mine.
            let in_len: Vec<usize> = self
                .members
                .iter()
                .map(|srcs| {
                    srcs.iter()
                        .map(|&s| (0..m).map(|j| rc(j, s)).sum::<usize>())
                        .sum()
                })
                .collect();
            let mut incoming: Vec<Payload> = in_len
                .iter()
                .enumerate()
                .map(|(t, &l)| Payload::zeros(kind, if t == my_node { 0 } else { l }))
                .collect();
            {
                let sends: Vec<(usize, Slice<'_>)> =
                    packets.iter().map(|(d, p)| (*d, p.as_slice())).collect();
                let mut recvs: Vec<(usize, SliceMut<'_>)> = incoming
                    .iter_mut()
                    .enumerate()
                    .filter(|(t, p)| *t != my_node && !p.is_empty())
                    .map(|(t, p)| (self.leaders[t], p.as_slice_mut()))
                    .collect();
                comm.exchange_raw(&sends, &mut recvs, TAG_NODE, class);
            }
            // Offsets of block (s -> member j) inside the packet of s's node.
            let mut block_off = vec![vec![0usize; m]; n];
            for (t, srcs) in self.members.iter().enumerate() {
                if t == my_node {
                    continue;
                }
                let mut off = 0;
                for &s in srcs {
                    for (j, bo) in block_off[s].iter_mut().enumerate() {
                        *bo = off;
                        off += rc(j, s);
                    }
                }
            }
            let node_index = |r: usize| {
                self.leaders
                    .binary_search(&self.leader_of[r])
                    .expect("rank on a known node")
            };
            let member_index =
                |r: usize, t: usize| self.members[t].binary_search(&r).expect("rank on its node");
            out = Payload::zeros(kind, out_counts.iter().sum());
            let mut om = out.as_slice_mut();
            let mut off = 0;
            for (j, &dj) in mine.iter().enumerate() {
                for (s, offs) in block_off.iter().enumerate() {
                    let c = rc(j, s);
                    let t = node_index(s);
                    let src = if t == my_node {
                        let i = member_index(s, t);
                        g.sub(member_off[i] + sdispl[i][dj], c)
                    } else {
                        incoming[t].as_slice().sub(offs[j], c)
                    };
                    om.copy_at(off, src);
                    off += c;
                }
            }
        }
        // 6. Scatter every member's receive buffer back.
        node.scatterv_raw(out.as_slice(), &out_counts, recv.reborrow(), 0, class);
    }
}
