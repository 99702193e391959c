//! Print the planewave-linalg benchmark table.
//!
//! ```text
//! cargo run --release -p planewave-linalg --example linalg_bench -- [--quick] [--ranks N]
//!     [--npw 2000,20000] [--nbands 64,256,1024] [--max-gflop 60]
//! cargo run --release -p planewave-linalg --features lapack --example linalg_bench
//! ```
//!
//! `--max-gflop` raises the limit above which a case is skipped (the full table skips
//! npw = 20000 with 1024 bands, 168 GFLOP per overlap: `--npw 20000 --nbands 1024
//! --max-gflop 200` measures it alone).
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
    let value = |name: &str| {
        let i = args.iter().position(|a| a == name)?;
        let v = args.get(i + 1);
        if v.is_none() {
            eprintln!("linalg_bench: {name} needs a value");
            std::process::exit(2);
        }
        v
    };
    let list = |name: &str, v: &String| -> Vec<usize> {
        v.split(',')
            .map(|t| {
                t.trim().parse().unwrap_or_else(|_| {
                    eprintln!("linalg_bench: {name} {v:?}: expected comma-separated counts");
                    std::process::exit(2)
                })
            })
            .collect()
    };
    if let Some(v) = value("--ranks") {
        opts.ranks = v.parse().unwrap_or(2);
    }
    if let Some(v) = value("--npw") {
        opts.npw = list("--npw", v);
    }
    if let Some(v) = value("--nbands") {
        opts.nbands = list("--nbands", v);
    }
    if let Some(v) = value("--max-gflop") {
        opts.max_flops = v.parse::<f64>().unwrap_or(60.0) * 1e9;
    }
    print!("{}", run_linalg_bench(&opts));
}
