//! MPI check of the distributed FFT: on `MPI_COMM_WORLD`, every decomposition valid for the
//! number of ranks, every all-to-all-v strategy and band blocks of 1, 4 and 16 must agree with
//! the serial transform to 1e-12 (relative), on random Γ-point and general-k spheres.
//!
//! ```text
//! cargo build --release -p planewave-fft --features mpi --example fft_mpi_check
//! mpirun --allow-run-as-root --oversubscribe -np 4 target/release/examples/fft_mpi_check
//! ```
//!
//! Exits 0 when every rank passed; on a mismatch the error is printed and the job is aborted
//! with a non-zero exit code.

use planewave_comm::mpi::{install_abort_on_panic, Mpi};
use planewave_comm::{CommClass, Communicator};
use planewave_fft::selfcheck::run_fft_selfcheck;
use std::sync::Arc;

fn main() {
    let universe = Mpi::init().unwrap_or_else(|e| {
        eprintln!("fft_mpi_check: {e}");
        std::process::exit(1)
    });
    install_abort_on_panic();
    let world: Arc<dyn Communicator> = universe.world();
    match run_fft_selfcheck(world.clone(), &[1, 2]) {
        Ok(summary) => {
            if world.is_root() {
                println!("fft_mpi_check: {summary}");
            }
        }
        Err(e) => world.fail_collective(&format!("fft_mpi_check: {e}")),
    }
    world.barrier(CommClass::Other);
}
