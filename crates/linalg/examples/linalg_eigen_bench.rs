//! Time the subspace eigensolver under MPI: redundant (faer; OpenBLAS `zheevd` with feature
//! `lapack`) against ScaLAPACK `pzheevd` (feature `scalapack`), c64, all eigenpairs.
//!
//! ```text
//! cargo build --release -p planewave-linalg --features scalapack --example linalg_eigen_bench
//! OPENBLAS_NUM_THREADS=1 mpirun --allow-run-as-root -np 2 \
//!     target/release/examples/linalg_eigen_bench [--min-time SECONDS] [DIM ...]
//! ```
//!
//! Default dimensions 64 256 512 1024. Set `OPENBLAS_NUM_THREADS=1` (ScaLAPACK's BLAS is the
//! system OpenBLAS, whose own threads would fight the ranks) and `OPENBLAS_CORETYPE` (see
//! `planewave_linalg::openblas`); the program re-executes itself with the recommended core
//! type when it is unset.

use planewave_comm::mpi::{install_abort_on_panic, Mpi};
use planewave_comm::{CommClass, Communicator};
use planewave_linalg::bench::run_eigen_bench;
use std::sync::Arc;
use std::time::Duration;

fn main() {
    if let Err(e) = planewave_linalg::openblas::reexec_with_coretype() {
        eprintln!("linalg_eigen_bench: could not re-execute with OPENBLAS_CORETYPE: {e}");
    }
    let mut args = std::env::args().skip(1);
    let mut dims = Vec::new();
    let mut min_time = Duration::from_secs(1);
    while let Some(a) = args.next() {
        if a == "--min-time" {
            let s = args
                .next()
                .and_then(|s| s.parse::<f64>().ok())
                .unwrap_or(1.0);
            min_time = Duration::from_secs_f64(s.max(0.0));
        } else if let Ok(d) = a.parse() {
            dims.push(d);
        } else {
            eprintln!("linalg_eigen_bench: unknown argument {a:?}");
            std::process::exit(2);
        }
    }
    if dims.is_empty() {
        dims = vec![64, 256, 512, 1024];
    }
    let universe = Mpi::init().unwrap_or_else(|e| {
        eprintln!("linalg_eigen_bench: {e}");
        std::process::exit(1)
    });
    install_abort_on_panic();
    let world: Arc<dyn Communicator> = universe.world();
    let table = run_eigen_bench(&*world, &dims, min_time);
    if world.is_root() {
        print!("{table}");
    }
    world.barrier(CommClass::Other);
}
