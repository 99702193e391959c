//! Node-aggregated all-to-all-v (the CASTEP/Cray shared-memory transpose).
//!
//! Contract: the ranks of a node (from [`Communicator::split_shared`], computed once in
//! [`NodeAggregated::new`], which is collective) send their counts and whole send buffers to
//! the node leader (node rank 0); the leader packs one message per other node (blocks ordered
//! by source rank, then destination rank), exchanges only with the other leaders, unpacks, and
//! scatters every member's receive buffer back. Inter-node messages drop from (ranks per
//! node)² per node pair to one, at the price of two intra-node copies.
//!
//! Shared memory: with MPI the intra-node gather/scatter go through `MPI_Gatherv` /
//! `MPI_Scatterv` on the shared-memory communicator, which OpenMPI's shared-memory transport
//! (vader, with single-copy CMA/XPMEM when available) implements as copies through shared
//! memory. An MPI-3 shared window (`MPI_Win_allocate_shared`) that members write into
//! directly is not exposed by rsmpi 0.8's safe API and would need raw FFI and unsafe pointer
//! arithmetic, so it is not used; the data path and message counts are those of the window
//! version, with one extra copy per member.

use super::{check_counts, AlltoallvAlgorithm, AlltoallvStrategy, TAG_NODE};
use crate::communicator::{CommClass, Communicator};
use crate::element::{displacements, Payload, Slice, SliceMut};
use crate::ext::CommExt;
use std::sync::Arc;

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
}

impl NodeAggregated {
    /// Find the nodes of `comm` (collective).
    pub fn new(comm: Arc<dyn Communicator>) -> Self {
        let node = comm.split_shared();
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
        NodeAggregated {
            comm,
            node,
            leader_of,
            leaders,
            members,
        }
    }

    /// Number of nodes.
    pub fn nodes(&self) -> usize {
        self.leaders.len()
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
