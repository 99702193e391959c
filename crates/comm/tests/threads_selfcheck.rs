//! The shared self-check (every strategy bit-identical, reductions, point-to-point, splits,
//! rings, topology) on the `Threads` back end, 1..8 ranks, with several node emulations.

use planewave_comm::selfcheck::run_selfcheck;
use planewave_comm::Threads;

#[test]
fn selfcheck_passes_on_1_to_8_ranks_one_node() {
    for n in 1..=8 {
        let out = Threads::run(n, |c| run_selfcheck(c.into_arc()));
        for r in out {
            r.unwrap_or_else(|e| panic!("{n} ranks: {e}"));
        }
    }
}

#[test]
fn selfcheck_passes_with_emulated_nodes() {
    for (n, per_node) in [(2, 1), (4, 2), (5, 2), (6, 3), (7, 3), (8, 2), (8, 4)] {
        let out = Threads::builder(n)
            .ranks_per_node(per_node)
            .run(|c| run_selfcheck(c.into_arc()));
        for r in out {
            r.unwrap_or_else(|e| panic!("{n} ranks, {per_node} per node: {e}"));
        }
    }
}
