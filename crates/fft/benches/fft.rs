//! Criterion benchmarks of planewave-fft: serial complex, sphere-restricted and r2c transforms
//! (24³ and 64³), FFTW 3 for comparison (feature `fftw`), and the distributed transform on 4
//! `Threads` ranks (slab and 2 × 2 pencil, native all-to-all-v, band blocks of 1 and 16).
//! The full table of the issue (all grids, strategies, band blocks) comes from
//! `planewave_fft::bench::run_fft_bench`, e.g. `cargo run --release -p planewave-fft --example
//! fft_bench`.

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use planewave_comm::{AlltoallvAlgorithm, CommClass, Threads};
use planewave_fft::selfcheck::CheckCase;
use planewave_fft::{
    Decomposition, DistFft, DistFftOptions, Fft3d, FftGrid, RealFft3d, Sticks, C64,
};
use std::time::{Duration, Instant};

const GRIDS: [[usize; 3]; 2] = [[24, 24, 24], [64, 64, 64]];

fn sphere(dims: [usize; 3]) -> Vec<[i32; 3]> {
    CheckCase {
        dims,
        kpoint: [0.0; 3],
        fraction: 0.5,
        seed: 1,
    }
    .millers()
}

fn serial(c: &mut Criterion) {
    let mut g = c.benchmark_group("serial");
    for dims in GRIDS {
        let grid = FftGrid { dims };
        let n = grid.len();
        let name = format!("{}^3", dims[0]);
        let fft = Fft3d::new(grid);
        let mut data = vec![C64::new(0.5, 0.25); n];
        g.bench_function(BenchmarkId::new("complex_backward_forward", &name), |b| {
            b.iter(|| {
                fft.backward(&mut data);
                fft.forward(&mut data);
            })
        });
        let millers = sphere(dims);
        let sticks = Sticks::new(grid, &millers);
        g.bench_function(BenchmarkId::new("sphere_backward_forward", &name), |b| {
            b.iter(|| {
                fft.backward_sphere(&mut data, &sticks);
                fft.forward_sphere_unnormalized(&mut data, &sticks);
            })
        });
        let r2c = RealFft3d::new(grid);
        let mut real = vec![0.5; n];
        let mut half = vec![C64::new(0.0, 0.0); r2c.half_len()];
        g.bench_function(BenchmarkId::new("r2c_forward_c2r", &name), |b| {
            b.iter(|| {
                r2c.forward(&real, &mut half);
                r2c.backward(&mut half, &mut real);
            })
        });
        #[cfg(feature = "fftw")]
        {
            let mut f = planewave_fft::fftw::FftwC2c::new(dims);
            f.data_mut().fill(C64::new(0.5, 0.25));
            g.bench_function(
                BenchmarkId::new("fftw_complex_backward_forward", &name),
                |b| {
                    b.iter(|| {
                        f.backward();
                        f.forward();
                        // Keep the values bounded (FFTW does not normalise).
                        f.data_mut()[0] = C64::new(0.5, 0.25);
                    })
                },
            );
        }
    }
    g.finish();
}

fn distributed(c: &mut Criterion) {
    let mut g = c.benchmark_group("distributed_64^3_4_ranks");
    g.sample_size(10);
    let dims = [64, 64, 64];
    let millers = sphere(dims);
    for decomposition in [Decomposition::Slab, Decomposition::Pencil { p1: 2, p2: 2 }] {
        for nb in [1, 16] {
            let id = BenchmarkId::new(decomposition.to_string(), format!("nb{nb}"));
            g.bench_function(id, |b| {
                b.iter_custom(|iters| {
                    let times = Threads::run(4, |comm| {
                        let comm = comm.into_arc();
                        let options = DistFftOptions {
                            decomposition,
                            alltoallv: AlltoallvAlgorithm::Native,
                            pair_mirror_sticks: false,
                        };
                        let mut plan =
                            DistFft::new(comm.clone(), FftGrid { dims }, &millers, &options)
                                .unwrap();
                        let coeffs = vec![C64::new(0.5, 0.25); nb * plan.n_g_local()];
                        let mut back = coeffs.clone();
                        let mut real = vec![C64::new(0.0, 0.0); nb * plan.n_real_local()];
                        comm.barrier(CommClass::Other);
                        let t = Instant::now();
                        for _ in 0..iters {
                            plan.backward(&coeffs, nb, &mut real);
                            plan.forward(&mut real, nb, &mut back);
                        }
                        t.elapsed()
                    });
                    // Per band, so block sizes compare directly.
                    times.into_iter().max().unwrap_or(Duration::ZERO) / nb as u32
                })
            });
        }
    }
    g.finish();
}

criterion_group!(benches, serial, distributed);
criterion_main!(benches);
