//! MPI check of planewave-linalg: every G- and band-distributed operation against its serial
//! counterpart on `MPI_COMM_WORLD` (the same comparisons the tests run on `Threads`).
//!
//! ```text
//! cargo build --release -p planewave-linalg --features mpi --example linalg_mpi_check
//! mpirun --allow-run-as-root --oversubscribe -np 4 target/release/examples/linalg_mpi_check
//! ```
//!
//! Exits 0 when every rank passed; on any mismatch the failures are printed and the job is
//! aborted with a non-zero exit code.

use planewave_comm::mpi::{install_abort_on_panic, Mpi};
use planewave_comm::{CommClass, Communicator};
use planewave_linalg::selfcheck::run_selfcheck;
use std::sync::Arc;

fn main() {
    let universe = Mpi::init().unwrap_or_else(|e| {
        eprintln!("linalg mpi_check: {e}");
        std::process::exit(1)
    });
    install_abort_on_panic();
    let world: Arc<dyn Communicator> = universe.world();
    // This program takes the default back end from the environment, as the planewave CLI does.
    match planewave_linalg::backend_from_env() {
        Ok(Some(b)) => planewave_linalg::set_default_backend(b),
        Ok(None) => {}
        Err(e) => world.fail(&format!("linalg mpi_check: {e}")),
    }
    match run_selfcheck(world.clone()) {
        Ok(summary) => {
            if world.is_root() {
                println!("linalg mpi_check: {summary}");
            }
        }
        Err(e) => world.fail(&format!("linalg mpi_check: {e}")),
    }
    world.barrier(CommClass::Other);
}
