//! Criterion benchmarks of the all-to-all-v strategies and reduce-scatter algorithms on the
//! `Threads` back end (4 ranks, 2 emulated nodes). Each sample runs the exchanges inside one
//! `Threads::run` and reports the slowest rank's time. For the full 64 B .. 16 MiB table with
//! ratios to native use `planewave bench comm` (or `planewave_comm::bench::run_comm_bench`).

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use planewave_comm::reduce_scatter::{reduce_scatter, ReduceScatterAlgorithm};
use planewave_comm::{AlltoallvAlgorithm, CommClass, CommExt, ReduceOp, Threads};
use std::time::{Duration, Instant};

const RANKS: usize = 4;

fn alltoallv(c: &mut Criterion) {
    let mut g = c.benchmark_group("alltoallv_threads4");
    g.sample_size(10)
        .measurement_time(Duration::from_secs(2))
        .warm_up_time(Duration::from_millis(300));
    for bytes in [64usize, 4 << 10, 256 << 10, 4 << 20] {
        let count = (bytes / 16).max(1);
        g.throughput(Throughput::Bytes((bytes * RANKS * RANKS) as u64));
        for algo in AlltoallvAlgorithm::ALL {
            g.bench_with_input(BenchmarkId::new(algo.name(), bytes), &count, |b, &count| {
                b.iter_custom(|iters| {
                    let times = Threads::builder(RANKS).ranks_per_node(2).run(|c| {
                        let comm = c.into_arc();
                        let s = algo.build(comm.clone());
                        let counts = vec![count; RANKS];
                        let send = vec![num_complex::Complex64::new(1.0, 2.0); count * RANKS];
                        let mut recv = send.clone();
                        comm.barrier(CommClass::Other);
                        let t0 = Instant::now();
                        for _ in 0..iters {
                            s.alltoallv_into(
                                &send,
                                &counts,
                                &mut recv,
                                &counts,
                                CommClass::GVector,
                            );
                        }
                        let mut t = [t0.elapsed().as_secs_f64()];
                        comm.allreduce(&mut t, ReduceOp::Max, CommClass::Other);
                        t[0]
                    });
                    Duration::from_secs_f64(times[0])
                })
            });
        }
    }
    g.finish();
}

fn reduce_scatter_bench(c: &mut Criterion) {
    let mut g = c.benchmark_group("reduce_scatter_threads4");
    g.sample_size(10)
        .measurement_time(Duration::from_secs(2))
        .warm_up_time(Duration::from_millis(300));
    let count = 16 << 10; // f64 per rank block
    for algo in ReduceScatterAlgorithm::ALL {
        g.bench_function(algo.name(), |b| {
            b.iter_custom(|iters| {
                let times = Threads::run(RANKS, |c| {
                    let comm = c.into_arc();
                    let counts = vec![count; RANKS];
                    let send = vec![1.0f64; count * RANKS];
                    let t0 = Instant::now();
                    for _ in 0..iters {
                        let r = reduce_scatter(
                            &*comm,
                            algo,
                            &send,
                            &counts,
                            ReduceOp::Sum,
                            CommClass::Band,
                        );
                        criterion::black_box(r);
                    }
                    let mut t = [t0.elapsed().as_secs_f64()];
                    comm.allreduce(&mut t, ReduceOp::Max, CommClass::Other);
                    t[0]
                });
                Duration::from_secs_f64(times[0])
            })
        });
    }
    g.finish();
}

criterion_group!(benches, alltoallv, reduce_scatter_bench);
criterion_main!(benches);
