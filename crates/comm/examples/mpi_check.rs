//! MPI check: run the shared self-check (every all-to-all-v strategy bit-identical on random
//! uneven counts, reductions, point-to-point, splits, rings, topology) on `MPI_COMM_WORLD`.
//!
//! ```text
//! cargo build --release -p planewave-comm --features mpi --example mpi_check
//! mpirun --allow-run-as-root --oversubscribe -np 4 target/release/examples/mpi_check
//! ```
//!
//! Exits 0 when every rank passed; on any mismatch the failing checks are printed and the job
//! is aborted with a non-zero exit code. Options: `--bench [SIZES...]` prints the
//! communication benchmark table afterwards (sizes in bytes per pair, default 64 B .. 16 MiB);
//! `--inject-failure` makes the last rank fail, to check that the job ends (non-zero, no hang).
//! The self-check runs the node-aggregated strategy through its MPI shared window, also on
//! emulated nodes (each node split by parity); for the benchmark on several emulated nodes
//! run with `-x PLANEWAVE_MPI_RANKS_PER_NODE=k`.

use planewave_comm::bench::{run_comm_bench, DEFAULT_SIZES};
use planewave_comm::mpi::{install_abort_on_panic, Mpi};
use planewave_comm::selfcheck::run_selfcheck;
use planewave_comm::{CommClass, Communicator};
use std::sync::Arc;

fn main() {
    let universe = Mpi::init().unwrap_or_else(|e| {
        eprintln!("mpi_check: {e}");
        std::process::exit(1)
    });
    install_abort_on_panic();
    let world: Arc<dyn Communicator> = universe.world();
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.iter().any(|a| a == "--inject-failure") && world.rank() + 1 == world.size() {
        world.fail("mpi_check: injected failure on the last rank");
    }
    match run_selfcheck(world.clone()) {
        Ok(summary) => {
            if world.is_root() {
                println!("mpi_check: {summary}");
            }
        }
        Err(e) => world.fail(&format!("mpi_check: {e}")),
    }
    if let Some(i) = args.iter().position(|a| a == "--bench") {
        let sizes: Vec<usize> = args[i + 1..].iter().map_while(|s| s.parse().ok()).collect();
        let sizes = if sizes.is_empty() {
            DEFAULT_SIZES.to_vec()
        } else {
            sizes
        };
        let table = run_comm_bench(world.clone(), &sizes);
        if world.is_root() {
            print!("{table}");
        }
    }
    world.barrier(CommClass::Other);
    if world.is_root() {
        print!("{}", world.stats().snapshot());
    }
}
