//! Criterion benchmarks of the subspace kernels: overlap, rotation (general and triangular)
//! and Cholesky orthonormalisation on one rank for every built-in back end, and the
//! band-distributed overlap by ring (both orders) vs gather on a 2-rank `Threads` group.
//! The GFLOP/s table for the full size range is `cargo run --release -p planewave-linalg
//! --example linalg_bench`.

use criterion::{criterion_group, criterion_main, Criterion};
use planewave_comm::Threads;
use planewave_linalg::selfcheck::test_matrix;
use planewave_linalg::{c64, Backend, BandAlgorithm, BandDistBlock, Mat, Scalar};
use std::hint::black_box;
use std::time::Duration;

fn dense(c: &mut Criterion) {
    let mut g = c.benchmark_group("dense");
    g.sample_size(10).measurement_time(Duration::from_secs(2));
    for &(npw, n) in &[(2000usize, 64usize), (2000, 256)] {
        let a = test_matrix::<c64>(npw, n, 1);
        let x = test_matrix::<c64>(n, n, 2);
        for be in Backend::available() {
            let mut s = Mat::<c64>::zeros(n, n);
            let mut y = Mat::<c64>::zeros(npw, n);
            g.bench_function(format!("overlap/{be}/{npw}x{n}"), |b| {
                b.iter(|| {
                    c64::gemm_with(be, s.as_mut(), false, a.as_ref(), true, a.as_ref(), false)
                })
            });
            g.bench_function(format!("rotation/{be}/{npw}x{n}"), |b| {
                b.iter(|| {
                    c64::gemm_with(be, y.as_mut(), false, a.as_ref(), false, x.as_ref(), false)
                })
            });
            g.bench_function(format!("triangular_rotation/{be}/{npw}x{n}"), |b| {
                b.iter(|| c64::upper_matmul_acc_with(be, y.as_mut(), a.as_ref(), x.as_ref(), false))
            });
            g.bench_function(format!("cholesky_orthonormalise/{be}/{npw}x{n}"), |b| {
                b.iter(|| {
                    let mut w = a.clone();
                    let mut ss = Mat::<c64>::zeros(n, n);
                    c64::gemm_with(be, ss.as_mut(), false, w.as_ref(), true, w.as_ref(), false);
                    let l = c64::cholesky_with(be, ss.as_ref()).unwrap();
                    c64::trsm_right_with(be, w.as_mut(), l.as_ref(), true);
                    black_box(w)
                })
            });
        }
    }
    g.finish();
}

fn band(c: &mut Criterion) {
    let mut g = c.benchmark_group("band");
    g.sample_size(10).measurement_time(Duration::from_secs(2));
    let (npw, n) = (2000, 128);
    let a = test_matrix::<c64>(npw, n, 1);
    for algo in BandAlgorithm::ALL {
        g.bench_function(format!("overlap/{algo}/2ranks/{npw}x{n}"), |b| {
            b.iter(|| {
                Threads::run(2, |comm| {
                    let ba = BandDistBlock::from_global(comm.into_arc(), a.as_ref());
                    black_box(ba.overlap(&ba, algo));
                })
            })
        });
    }
    g.finish();
}

criterion_group!(benches, dense, band);
criterion_main!(benches);
