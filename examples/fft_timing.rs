//! Times the serial 3-D FFT on a few grids: `cargo run --release --example fft_timing`.
use planewave::fft::{Fft3d, FftGrid, C64};
use std::time::Instant;

fn main() {
    for dims in [
        [24, 24, 24],
        [35, 35, 35],
        [64, 64, 64],
        [72, 72, 72],
        [96, 96, 96],
    ] {
        let grid = FftGrid { dims };
        let fft = Fft3d::new(grid);
        let n = grid.len();
        let mut data: Vec<C64> = (0..n).map(|i| C64::new((i as f64).sin(), 0.0)).collect();
        let reps = (2e7 / n as f64).max(3.0) as usize;
        let t = Instant::now();
        for _ in 0..reps {
            fft.backward(&mut data);
            fft.forward(&mut data);
        }
        let per = t.elapsed().as_secs_f64() / (2 * reps) as f64;
        let flops = 5.0 * n as f64 * (n as f64).log2();
        println!(
            "{:?}: {:.3} ms per transform, {:.2} GFLOP/s",
            dims,
            per * 1e3,
            flops / per / 1e9
        );
    }
}
