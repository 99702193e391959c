//! Cross-back-end self-check of every operation and strategy.
//!
//! Contract: [`run_selfcheck`] is collective. It runs the same checks on any back end (the
//! `Threads` tests and the MPI check under `mpirun` share it): every all-to-all-v strategy on
//! random uneven counts including zeros must give bit-identical results equal to the known
//! expected data; reductions, broadcast, gather(v)/scatter(v), reduce-scatter (all three
//! algorithms, equal to rounding), point-to-point (blocking and non-blocking), splits, the
//! ring shifts and the topology grid must give the expected values. Failures are counted on
//! every rank and summed, so every rank returns `Err` (with its own findings) when any rank
//! found a mismatch; `Ok` carries a one-line summary.

use crate::communicator::{CommClass, Communicator};
use crate::element::ReduceOp;
use crate::ext::CommExt;
use crate::reduce_scatter::{reduce_scatter, ReduceScatterAlgorithm};
use crate::ring::{Ring, RingOrder};
use crate::strategies::node_aggregated::NodeAggregated;
use crate::strategies::{AlltoallvAlgorithm, AlltoallvStrategy};
use crate::topology::{LayoutRequest, ProblemSize, RankOrder, Topology};
use num_complex::Complex64;
use std::sync::Arc;

const C: CommClass = CommClass::Other;

/// SplitMix64: a tiny deterministic generator (same stream on every rank).
#[derive(Clone, Debug)]
pub struct SplitMix(pub u64);

impl SplitMix {
    /// Next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    /// Uniform in `0..n`.
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n as u64) as usize
    }
}

/// A random `size × size` count matrix (`m[s][d]` elements from `s` to `d`), about a third of
/// the entries zero, the rest in `1..=max`.
pub fn random_counts(size: usize, seed: u64, max: usize) -> Vec<Vec<usize>> {
    let mut g = SplitMix(seed);
    (0..size)
        .map(|_| {
            (0..size)
                .map(|_| if g.below(3) == 0 { 0 } else { 1 + g.below(max) })
                .collect()
        })
        .collect()
}

/// The test value of element `i` of the block from `s` to `d`.
pub fn test_value(s: usize, d: usize, i: usize) -> Complex64 {
    Complex64::new(
        (s as f64 + 0.1) * (d as f64 + 1.7) + i as f64 * 0.37,
        -(i as f64) / 3.0 + s as f64,
    )
}

/// This rank's send buffer, send counts, receive counts and expected receive buffer for the
/// count matrix `m`.
pub fn alltoallv_case(
    m: &[Vec<usize>],
    rank: usize,
) -> (Vec<Complex64>, Vec<usize>, Vec<usize>, Vec<Complex64>) {
    let n = m.len();
    let sc = m[rank].clone();
    let rc: Vec<usize> = (0..n).map(|s| m[s][rank]).collect();
    let send = (0..n)
        .flat_map(|d| (0..sc[d]).map(move |i| test_value(rank, d, i)))
        .collect();
    let expect = (0..n)
        .flat_map(|s| (0..rc[s]).map(move |i| test_value(s, rank, i)))
        .collect();
    (send, sc, rc, expect)
}

struct Checker {
    rank: usize,
    failures: Vec<String>,
    checks: usize,
}

impl Checker {
    fn check(&mut self, ok: bool, what: impl FnOnce() -> String) {
        self.checks += 1;
        if !ok {
            self.failures
                .push(format!("rank {}: {}", self.rank, what()));
        }
    }
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-12 * (1.0 + a.abs().max(b.abs()))
}

/// Run every check on `comm`; see the module doc.
pub fn run_selfcheck(comm: Arc<dyn Communicator>) -> Result<String, String> {
    let (n, me) = (comm.size(), comm.rank());
    let mut ck = Checker {
        rank: me,
        failures: Vec::new(),
        checks: 0,
    };

    // All-to-all-v: every strategy, several random uneven count matrices (with zeros).
    let strategies: Vec<_> = AlltoallvAlgorithm::ALL
        .iter()
        .map(|a| a.build(comm.clone()))
        .collect();
    for seed in [1u64, 2, 3, 42] {
        let m = random_counts(n, seed * 7919 + n as u64, 37);
        let (send, sc, rc, expect) = alltoallv_case(&m, me);
        for s in &strategies {
            let got = s.alltoallv(&send, &sc, &rc, CommClass::GVector);
            ck.check(got == expect, || {
                format!(
                    "all-to-all-v '{}' (seed {seed}) differs from the expected data",
                    s.name()
                )
            });
            // Same through the overlap entry point, with the overlap run exactly once.
            let mut recv = vec![Complex64::default(); expect.len()];
            let mut ran = 0;
            s.alltoallv_overlap_raw(
                crate::Slice::C64(&send),
                &sc,
                crate::SliceMut::C64(&mut recv),
                &rc,
                &mut || ran += 1,
                CommClass::GVector,
            );
            ck.check(recv == expect && ran == 1, || {
                format!("overlapped all-to-all-v '{}' (seed {seed}) wrong", s.name())
            });
        }
        // Integer data through the native collective.
        let isend: Vec<i64> = send.iter().map(|z| (z.re * 100.0) as i64).collect();
        let iexp: Vec<i64> = expect.iter().map(|z| (z.re * 100.0) as i64).collect();
        ck.check(comm.alltoallv(&isend, &sc, &rc, C) == iexp, || {
            "i64 all-to-all-v".into()
        });
    }

    // Node-aggregated on emulated nodes: every real node split by parity of the node rank,
    // so the inter-node path runs on one machine too. With shared memory (MPI) the exchange
    // must go through the shared window; the all-zero case and the growing sizes exercise its
    // early exit and re-allocation.
    let real = comm.split_shared();
    let halves = real
        .split(Some((real.rank() % 2) as u32), real.rank() as i64)
        .expect("every rank has a half node");
    let na = NodeAggregated::with_node(comm.clone(), halves);
    ck.check(na.uses_shared_window() == (comm.backend() == "mpi"), || {
        format!(
            "node-aggregated on {}: shared window used = {}",
            comm.backend(),
            na.uses_shared_window()
        )
    });
    for (seed, max) in [(0u64, 0usize), (5, 3), (6, 37), (7, 400), (8, 5)] {
        let m = random_counts(n, seed * 104_729 + n as u64, max.max(1));
        let m: Vec<Vec<usize>> = if max == 0 { vec![vec![0; n]; n] } else { m };
        let (send, sc, rc, expect) = alltoallv_case(&m, me);
        let mut got = vec![Complex64::default(); expect.len()];
        na.alltoallv_raw(
            crate::Slice::C64(&send),
            &sc,
            crate::SliceMut::C64(&mut got),
            &rc,
            CommClass::GVector,
        );
        ck.check(got == expect, || {
            format!(
                "node-aggregated on {} emulated nodes (seed {seed}) differs",
                na.nodes()
            )
        });
        let bytes: Vec<u8> = send.iter().map(|z| (z.re * 7.0) as u8).collect();
        let bexp: Vec<u8> = expect.iter().map(|z| (z.re * 7.0) as u8).collect();
        let mut bgot = vec![0u8; bexp.len()];
        na.alltoallv_raw(
            crate::Slice::U8(&bytes),
            &sc,
            crate::SliceMut::U8(&mut bgot),
            &rc,
            CommClass::GVector,
        );
        ck.check(bgot == bexp, || {
            format!("node-aggregated u8 (seed {seed}) differs")
        });
    }
    drop(na);

    // Reductions.
    let nf = n as f64;
    let mut x: Vec<f64> = (0..5).map(|i| (me + 1) as f64 * (i as f64 + 0.5)).collect();
    comm.allreduce_sum_f64(&mut x, C);
    let tri = nf * (nf + 1.0) / 2.0;
    ck.check(
        x.iter()
            .enumerate()
            .all(|(i, &v)| close(v, tri * (i as f64 + 0.5))),
        || format!("allreduce sum f64: {x:?}"),
    );
    let mut z = vec![Complex64::new(me as f64, 1.0); 3];
    comm.allreduce_sum_c64(&mut z, C);
    ck.check(
        z.iter()
            .all(|v| close(v.re, nf * (nf - 1.0) / 2.0) && close(v.im, nf)),
        || format!("allreduce sum c64: {z:?}"),
    );
    let mut mx = [me as f64, -(me as f64)];
    comm.allreduce_max_f64(&mut mx, C);
    ck.check(mx == [(n - 1) as f64, 0.0], || {
        format!("allreduce max: {mx:?}")
    });
    let mut mn = [me as i64 - 3];
    comm.allreduce(&mut mn, ReduceOp::Min, C);
    ck.check(mn == [-3], || format!("allreduce min i64: {mn:?}"));
    let mut u = [me as u64, 1];
    comm.allreduce_sum(&mut u, C);
    ck.check(u == [(n * (n - 1) / 2) as u64, n as u64], || {
        format!("allreduce u64: {u:?}")
    });
    let root = n - 1;
    let mut r = [1.0f64, me as f64];
    comm.reduce(&mut r, ReduceOp::Sum, root, C);
    if me == root {
        ck.check(
            close(r[0], nf) && close(r[1], nf * (nf - 1.0) / 2.0),
            || format!("reduce: {r:?}"),
        );
    } else {
        ck.check(r == [1.0, me as f64], || {
            "reduce changed a non-root buffer".into()
        });
    }

    // Broadcast, gather(v), scatter(v).
    let mut b = if me == root {
        vec![3.5f64, -1.0, 7.0]
    } else {
        vec![0.0; 3]
    };
    comm.broadcast_f64(&mut b, root, C);
    ck.check(b == [3.5, -1.0, 7.0], || format!("broadcast: {b:?}"));
    let mine: Vec<u64> = (0..me as u64 % 3).map(|i| 100 * me as u64 + i).collect();
    let expect_all: Vec<u64> = (0..n as u64)
        .flat_map(|r| (0..r % 3).map(move |i| 100 * r + i))
        .collect();
    let g = comm.gatherv(&mine, 0, C);
    ck.check(
        if me == 0 {
            g == expect_all
        } else {
            g.is_empty()
        },
        || "gatherv".into(),
    );
    ck.check(comm.allgatherv(&mine, C) == expect_all, || {
        "allgatherv".into()
    });
    let counts: Vec<usize> = (0..n).map(|r| r % 3).collect();
    let sc = comm.scatterv(if me == 0 { &expect_all[..] } else { &[] }, &counts, 0, C);
    ck.check(sc == mine, || "scatterv".into());

    // Reduce-scatter, all algorithms.
    let rs_counts: Vec<usize> = (0..n).map(|r| (r * 5 + 2) % 4).collect();
    let total: usize = rs_counts.iter().sum();
    let rs_send: Vec<f64> = (0..total)
        .map(|i| (i as f64 + 1.0) * (me as f64 + 0.25))
        .collect();
    let off: usize = rs_counts[..me].iter().sum();
    let rs_expect: Vec<f64> = (0..rs_counts[me])
        .map(|i| (off + i) as f64 + 1.0)
        .map(|v| (0..n).map(|r| v * (r as f64 + 0.25)).sum())
        .collect();
    for a in ReduceScatterAlgorithm::ALL {
        let got = reduce_scatter(
            &*comm,
            a,
            &rs_send,
            &rs_counts,
            ReduceOp::Sum,
            CommClass::Band,
        );
        ck.check(
            got.len() == rs_expect.len() && got.iter().zip(&rs_expect).all(|(&x, &y)| close(x, y)),
            || format!("reduce-scatter '{a}': {got:?} vs {rs_expect:?}"),
        );
    }

    // Point-to-point: blocking ring, non-blocking ring, exchange.
    if n > 1 {
        let (next, prev) = ((me + 1) % n, (me + n - 1) % n);
        let req = comm.isend(vec![me as i64; me + 1], next, 7, C);
        let rreq = comm.irecv::<i64>(prev + 1, prev, 7, C);
        let got = rreq.wait_data::<i64>();
        req.wait();
        ck.check(got == vec![prev as i64; prev + 1], || {
            format!("isend/irecv: {got:?}")
        });
        if me % 2 == 0 {
            comm.send(&[me as f64], next, 8, C);
            let v = comm.recv::<f64>(1, prev, 8, C);
            ck.check(v == [prev as f64], || "send/recv".into());
        } else {
            let v = comm.recv::<f64>(1, prev, 8, C);
            comm.send(&[me as f64], next, 8, C);
            ck.check(v == [prev as f64], || "send/recv".into());
        }
    }

    // Split by colour/key (reversed order) and by node.
    let sub = comm
        .split(Some((me % 2) as u32), -(me as i64))
        .expect("coloured rank");
    let members: Vec<usize> = (0..n).filter(|r| r % 2 == me % 2).rev().collect();
    ck.check(
        sub.size() == members.len() && members[sub.rank()] == me,
        || format!("split: rank {} of {}", sub.rank(), sub.size()),
    );
    let mut s = [me as u64];
    sub.allreduce_sum(&mut s, C);
    ck.check(
        s[0] == members.iter().map(|&r| r as u64).sum::<u64>(),
        || "split allreduce".into(),
    );
    ck.check(comm.split(None, 0).is_none(), || {
        "split(None) gave a communicator".into()
    });
    let node = comm.split_shared();
    let mut on_nodes = [u64::from(node.rank() == 0), 1];
    comm.allreduce_sum(&mut on_nodes, C);
    ck.check(on_nodes[1] == n as u64 && on_nodes[0] >= 1, || {
        "split_shared".into()
    });

    // Rings: both orders circulate every block once.
    for order in [RingOrder::Natural, RingOrder::OddEven] {
        let ring = Ring::new(n, me, order);
        let mut seen = vec![0usize; n];
        ring.systolic(
            &*comm,
            vec![me as u64; me % 3 + 1],
            CommClass::Band,
            |owner, block| {
                seen[owner] += usize::from(block == vec![owner as u64; owner % 3 + 1]);
            },
        );
        ck.check(seen.iter().all(|&c| c == 1), || {
            format!("ring {order:?}: {seen:?}")
        });
    }

    // Topology: the default layout's grid reproduces the world sum at every level.
    let problem = ProblemSize {
        kpoints: 4,
        bands: 16,
        fft_planes: 24,
    };
    for order in [RankOrder::GConsecutive, RankOrder::BandConsecutive] {
        let req = LayoutRequest {
            order,
            ..LayoutRequest::auto(problem)
        };
        match Topology::new(comm.clone(), &req) {
            Ok(t) => {
                let l = t.layout;
                let mut v = [me as u64 + 1];
                t.gvector.allreduce_sum(&mut v, CommClass::GVector);
                t.band.allreduce_sum(&mut v, CommClass::Band);
                t.inter_kpoint.allreduce_sum(&mut v, CommClass::Kpoint);
                ck.check(
                    v[0] == (n * (n + 1) / 2) as u64
                        && t.gvector.size() == l.gvector_groups
                        && t.band.size() == l.band_groups
                        && t.inter_kpoint.size() == l.kpoint_groups,
                    || format!("topology {l}: sum {}", v[0]),
                );
            }
            Err(e) => ck.check(false, || format!("topology: {e}")),
        }
    }

    let mut bad = [ck.failures.len() as u64];
    comm.allreduce_sum(&mut bad, C);
    if bad[0] > 0 {
        Err(format!(
            "{} failed checks in all ({} on this rank):\n{}",
            bad[0],
            ck.failures.len(),
            ck.failures.join("\n")
        ))
    } else {
        Ok(format!(
            "{} back end, {} ranks: {} checks passed on every rank",
            comm.backend(),
            n,
            ck.checks
        ))
    }
}
