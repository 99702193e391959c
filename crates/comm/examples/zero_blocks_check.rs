//! Regression check under mpirun (feature `mpi`): every all-to-all-v strategy on 2 ranks for all
//! 16 patterns of empty and non-empty blocks, including ranks whose send or receive buffer is
//! empty (OpenMPI 4.1's `MPI_Ialltoallv` used to hang there). Exits non-zero on a wrong result.
//!
//! ```text
//! cargo build --release -p planewave-comm --features mpi --example zero_blocks_check
//! mpirun -np 2 target/release/examples/zero_blocks_check
//! ```

use planewave_comm::strategies::AlltoallvAlgorithm;
use planewave_comm::{CommClass, Communicator};

fn main() {
    let universe = planewave_comm::mpi::Mpi::init().expect("MPI initialises");
    let comm: std::sync::Arc<dyn Communicator> = universe.world();
    let (me, n) = (comm.rank(), comm.size());
    let mut bad = 0;
    for algorithm in AlltoallvAlgorithm::ALL {
        let strategy = algorithm.build(comm.clone());
        for pattern in 0..(1u32 << (n * n).min(16)) {
            // count(a, b): values rank a sends to rank b.
            let count = |a: usize, b: usize| 3 * (pattern >> ((n * a + b) % 16) & 1) as usize;
            let sc: Vec<usize> = (0..n).map(|b| count(me, b)).collect();
            let rc: Vec<usize> = (0..n).map(|a| count(a, me)).collect();
            let send: Vec<f64> = (0..n)
                .flat_map(|b| (0..count(me, b)).map(move |i| (100 * me + 10 * b + i) as f64))
                .collect();
            let mut recv = vec![-1.0f64; rc.iter().sum()];
            strategy.alltoallv_into(&send, &sc, &mut recv, &rc, CommClass::Other);
            let want: Vec<f64> = (0..n)
                .flat_map(|a| (0..count(a, me)).map(move |i| (100 * a + 10 * me + i) as f64))
                .collect();
            if recv != want {
                bad += 1;
                eprintln!("rank {me}: {algorithm:?} pattern {pattern:b}: {recv:?} != {want:?}");
            }
        }
    }
    if bad > 0 {
        std::process::exit(1);
    }
    if me == 0 {
        println!("zero-block all-to-all-v check passed on {n} ranks");
    }
}
