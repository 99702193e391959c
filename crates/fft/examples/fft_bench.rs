//! Print the FFT benchmark table (`planewave_fft::bench`).
//!
//! ```text
//! cargo run --release -p planewave-fft --features fftw --example fft_bench -- [--threads 1,2]
//!     [--ranks 4] [--dist-grid 64x64x64|none] [--grids 24x24x24,...] [--min-time 0.3]
//! ```

use planewave_fft::bench::{run_fft_bench, FftBenchOptions};

fn parse_dims(s: &str) -> [usize; 3] {
    let v: Vec<usize> = s
        .split('x')
        .map(|t| t.parse().expect("grid side"))
        .collect();
    match v[..] {
        [n] => [n, n, n],
        [a, b, c] => [a, b, c],
        _ => panic!("grid must be N or AxBxC"),
    }
}

fn list(s: &str) -> Vec<usize> {
    s.split(',').map(|t| t.parse().expect("number")).collect()
}

fn main() {
    let mut opts = FftBenchOptions::default();
    let args: Vec<String> = std::env::args().skip(1).collect();
    for w in args.chunks(2) {
        let v = w.get(1).map(String::as_str).unwrap_or("");
        match w[0].as_str() {
            "--threads" => opts.threads = list(v),
            "--ranks" => opts.dist_ranks = list(v),
            "--nb" => opts.band_blocks = list(v),
            "--dist-grid" if v == "none" => opts.dist_grid = None,
            "--dist-grid" => opts.dist_grid = Some(parse_dims(v)),
            "--grids" if v == "none" => opts.grids.clear(),
            "--grids" => opts.grids = v.split(',').map(parse_dims).collect(),
            "--min-time" => opts.min_time = v.parse().expect("seconds"),
            other => panic!("unknown option {other}"),
        }
    }
    match run_fft_bench(&opts) {
        Ok(t) => print!("{t}"),
        Err(e) => {
            eprintln!("fft_bench: {e}");
            std::process::exit(1)
        }
    }
}
