//! The machine's links measured as latency and bandwidth: one fit for the ranks of a node, one
//! for the nodes between themselves.
//!
//! Contract: [`measure_links`] is collective over `world`. It times native all-to-all-v calls
//! ([`time_alltoallv`]) at [`LINK_SIZES`] bytes per pair:
//! - inside each node (the ranks [`Communicator::split_shared`] groups, all nodes at once): the
//!   **intra** link, when a node holds two ranks or more;
//! - between one rank per node (each node's first): the **inter** link, when there are two
//!   nodes or more. One rank per node makes the fit the node's own link (its network card),
//!   which every rank of a node then shares.
//!
//! Each fit is `t = (p − 1)(α + s β)` for `p` ranks and `s` bytes per pair, least squares in
//! the relative error (so that the small messages set α and the large ones β). Every rank
//! returns the same [`Links`].

use crate::communicator::{CommClass, Communicator};
use crate::strategies::autotune::time_alltoallv;
use crate::strategies::AlltoallvAlgorithm;
use std::sync::Arc;

/// Bytes per rank pair of the timed calls: 64 B to 1 MiB.
pub const LINK_SIZES: [usize; 5] = [64, 1 << 10, 1 << 14, 1 << 17, 1 << 20];

/// Latency and inverse bandwidth of one kind of link.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Link {
    /// Seconds per message (α).
    pub latency_s: f64,
    /// Seconds per byte (β).
    pub seconds_per_byte: f64,
}

impl Link {
    /// Seconds to send `messages` messages of `bytes` bytes each, one after the other.
    pub fn seconds(&self, messages: f64, bytes: f64) -> f64 {
        messages * (self.latency_s + bytes * self.seconds_per_byte)
    }
}

impl std::fmt::Display for Link {
    /// "1.67 us per message, 10.00 GB/s".
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{:.2} us per message, {:.2} GB/s",
            self.latency_s * 1e6,
            1e-9 / self.seconds_per_byte.max(f64::MIN_POSITIVE)
        )
    }
}

/// What [`measure_links`] found.
#[derive(Clone, Debug, PartialEq)]
pub struct Links {
    /// Ranks of the world.
    pub ranks: usize,
    /// Nodes the world spans.
    pub nodes: usize,
    /// The ranks of a node between themselves (None with one rank per node).
    pub intra: Option<Link>,
    /// One rank per node between nodes (None on one node).
    pub inter: Option<Link>,
    /// The back end measured ("mpi", "threads", ...).
    pub backend: String,
}

/// Fit `t = (p − 1)(α + s β)` to `(bytes per pair, seconds)` samples of `p` ranks, in relative
/// error. Negative values (noise on a fast link) are clamped to zero.
pub fn fit_link(p: usize, samples: &[(usize, f64)]) -> Link {
    let peers = p.saturating_sub(1).max(1) as f64;
    // Minimise Σ ((α x + β y − t) / t)² with x = peers, y = peers · s.
    let (mut xx, mut xy, mut yy, mut xt, mut yt) = (0.0, 0.0, 0.0, 0.0, 0.0);
    for &(s, t) in samples.iter().filter(|(_, t)| *t > 0.0) {
        let (x, y) = (peers / t, peers * s as f64 / t);
        xx += x * x;
        xy += x * y;
        yy += y * y;
        xt += x;
        yt += y;
    }
    let det = xx * yy - xy * xy;
    if det.abs() < f64::MIN_POSITIVE {
        return Link {
            latency_s: 0.0,
            seconds_per_byte: 0.0,
        };
    }
    Link {
        latency_s: ((yy * xt - xy * yt) / det).max(0.0),
        seconds_per_byte: ((xx * yt - xy * xt) / det).max(0.0),
    }
}

/// Time native all-to-all-v on `comm` at every size of [`LINK_SIZES`] and fit a link
/// (None on one rank). Collective over `comm`.
fn measure(comm: &Arc<dyn Communicator>) -> Option<Link> {
    let p = comm.size();
    if p < 2 {
        return None;
    }
    let native = AlltoallvAlgorithm::Native.build(comm.clone());
    let samples: Vec<(usize, f64)> = LINK_SIZES
        .iter()
        .map(|&bytes| {
            let counts = vec![(bytes / 16).max(1); p];
            let reps = ((16usize << 20) / (bytes * p)).clamp(3, 200);
            (bytes, time_alltoallv(&*native, &counts, &counts, reps))
        })
        .collect();
    Some(fit_link(p, &samples))
}

/// Measure the intra- and inter-node links of `world` (see the module doc). Collective.
pub fn measure_links(world: &Arc<dyn Communicator>) -> Links {
    let node = world.split_shared();
    let first = node.rank() == 0;
    let mut counts = [u64::from(first)];
    crate::CommExt::allreduce_sum(&**world, &mut counts, CommClass::Other);
    let nodes = counts[0] as usize;
    // Every node measures at once; the largest latency and the largest seconds per byte
    // over the nodes (possibly of two nodes) are everyone's.
    let mut intra = measure(&node).map_or([0.0; 3], |l| [1.0, l.latency_s, l.seconds_per_byte]);
    world.allreduce_max_f64(&mut intra, CommClass::Other);
    let leaders = world.split(first.then_some(0), world.rank() as i64);
    let mut inter = match leaders.as_ref().filter(|_| nodes > 1) {
        Some(l) => measure(l).map_or([0.0; 3], |l| [1.0, l.latency_s, l.seconds_per_byte]),
        None => [0.0; 3],
    };
    world.allreduce_max_f64(&mut inter, CommClass::Other);
    let link = |v: [f64; 3]| {
        (v[0] > 0.0).then_some(Link {
            latency_s: v[1],
            seconds_per_byte: v[2],
        })
    };
    Links {
        ranks: world.size(),
        nodes,
        intra: link(intra),
        inter: link(inter),
        backend: world.backend().to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_fit_recovers_latency_and_bandwidth_of_exact_samples() {
        let (alpha, beta, p) = (2.0e-6, 1.0e-10, 8);
        let samples: Vec<(usize, f64)> = LINK_SIZES
            .iter()
            .map(|&s| (s, (p - 1) as f64 * (alpha + s as f64 * beta)))
            .collect();
        let l = fit_link(p, &samples);
        assert!((l.latency_s / alpha - 1.0).abs() < 1e-9, "{l:?}");
        assert!((l.seconds_per_byte / beta - 1.0).abs() < 1e-9, "{l:?}");
        assert!((l.seconds(3.0, 100.0) - 3.0 * (alpha + 100.0 * beta)).abs() < 1e-18);
    }

    #[test]
    fn threads_ranks_on_two_emulated_nodes_measure_both_links() {
        let links = crate::Threads::builder(4)
            .ranks_per_node(2)
            .run(|c| measure_links(&c.into_arc()));
        assert!(links.windows(2).all(|w| w[0] == w[1]), "every rank agrees");
        let l = &links[0];
        assert_eq!((l.ranks, l.nodes, l.backend.as_str()), (4, 2, "threads"));
        for link in [l.intra, l.inter] {
            let link = link.expect("two ranks per node and two nodes");
            assert!(
                link.seconds_per_byte > 0.0,
                "a MiB per pair takes time: {link:?}"
            );
        }
        let one_node = crate::Threads::builder(2).run(|c| measure_links(&c.into_arc()));
        assert_eq!(one_node[0].nodes, 1);
        assert!(one_node[0].inter.is_none() && one_node[0].intra.is_some());
    }
}
