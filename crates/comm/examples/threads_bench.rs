//! Print the communication benchmark table on the `Threads` back end.
//!
//! ```text
//! cargo run --release -p planewave-comm --example threads_bench -- [RANKS [RANKS_PER_NODE]]
//! ```

use planewave_comm::bench::{run_comm_bench, DEFAULT_SIZES};
use planewave_comm::Threads;

fn main() {
    let args: Vec<usize> = std::env::args()
        .skip(1)
        .filter_map(|a| a.parse().ok())
        .collect();
    let ranks = args.first().copied().unwrap_or(4);
    let per_node = args.get(1).copied().unwrap_or(ranks);
    let tables = Threads::builder(ranks)
        .ranks_per_node(per_node)
        .run(|c| run_comm_bench(c.into_arc(), &DEFAULT_SIZES));
    print!("{}", tables[0]);
}
