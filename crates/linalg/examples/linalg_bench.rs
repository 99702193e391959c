//! Print the planewave-linalg benchmark table.
//!
//! ```text
//! cargo run --release -p planewave-linalg --example linalg_bench -- [--quick] [--ranks N]
//! cargo run --release -p planewave-linalg --features lapack --example linalg_bench
//! ```
//!
//! With the `lapack` feature, the program first re-executes itself with `OPENBLAS_CORETYPE`
//! set from `/proc/cpuinfo` when it is unset (OpenBLAS reads it only when it loads).

use planewave_linalg::bench::{run_linalg_bench, BenchOptions};

fn main() {
    if cfg!(feature = "lapack") {
        if let Err(e) = planewave_linalg::openblas::reexec_with_coretype() {
            eprintln!("linalg_bench: could not re-execute with OPENBLAS_CORETYPE: {e}");
        }
    }
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut opts = if args.iter().any(|a| a == "--quick") {
        BenchOptions::quick()
    } else {
        BenchOptions::full()
    };
    if let Some(i) = args.iter().position(|a| a == "--ranks") {
        opts.ranks = args.get(i + 1).and_then(|s| s.parse().ok()).unwrap_or(2);
    }
    print!("{}", run_linalg_bench(&opts));
}
