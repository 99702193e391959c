//! FFT benchmark: serial grids (full complex, sphere-restricted, r2c) against FFTW 3, and the
//! distributed transform on `Threads` for each decomposition, transpose strategy and band block.
//!
//! Contract: [`run_fft_bench`] returns an [`FftBenchTable`] that prints as the tables `planewave
//! bench fft` shows. Serial: one measurement is a backward plus a forward transform (input
//! refreshed from a template outside the timed region), repeated for at least `min_time`
//! seconds and three times, interleaved with the other kinds of the grid (and FFTW's) so that
//! all see the same machine; the fastest repetition counts, reported per transform in ms and in
//! GFLOP/s of the nominal count `5 N log2 N` (`2.5 N log2 N` for r2c; the sphere transform is
//! credited with the full-grid count, so its rate is an effective one). The sphere is a
//! wavefunction sphere (semi-axes `n_i / 4`); `sphere+V` is the local potential's application
//! ([`Fft3d::apply_potential_sphere`]: the sphere transforms and the product with a real field,
//! each column block of the last axis done in cache). With the feature `fftw` the same
//! transforms of FFTW 3 (`FFTW_MEASURE`, one thread) are timed in the same run and the ratio
//! ours/FFTW is shown (complex, sphere and sphere+V against FFTW's complex transform, without
//! the product; r2c against FFTW's r2c).
//! Distributed: ms per band per transform (slowest rank, fastest repetition of a backward plus
//! a normalised forward transform of `nb` bands, or of [`PIPELINE_BLOCKS`] blocks of `nb`
//! bands pipelined so that each block's transpose overlaps its neighbour's local work) and the
//! share of pack+unpack and of the all-to-all-v in it; the ranks are `Threads` sharing the
//! process's rayon pool, emulating nodes of two ranks.

use crate::decomposition::{Decomposition, ProcessGrid};
use crate::dist_fft::{DistFft, DistFftOptions};
use crate::fft3d::{Fft3d, Sticks};
use crate::grid::FftGrid;
use crate::r2c::RealFft3d;
use crate::selfcheck::CheckCase;
use crate::C64;
use planewave_comm::{AlltoallvAlgorithm, CommClass, CommExt, ReduceOp, Threads};
use std::fmt;
use std::time::Instant;

/// The serial grids of the issue: 24³, 45³, 64³, 96³ and 120×120×90.
pub const SERIAL_GRIDS: [[usize; 3]; 5] = [
    [24, 24, 24],
    [45, 45, 45],
    [64, 64, 64],
    [96, 96, 96],
    [120, 120, 90],
];

/// What to measure.
#[derive(Clone, Debug, PartialEq)]
pub struct FftBenchOptions {
    /// Serial grids.
    pub grids: Vec<[usize; 3]>,
    /// rayon thread counts for the serial transforms.
    pub threads: Vec<usize>,
    /// Grid of the distributed runs (none: skip them).
    pub dist_grid: Option<[usize; 3]>,
    /// Rank counts of the distributed runs (each gets slab and, for even counts, a 2 × P/2
    /// pencil).
    pub dist_ranks: Vec<usize>,
    /// Band-block sizes of the distributed runs.
    pub band_blocks: Vec<usize>,
    /// All-to-all-v algorithms of the distributed runs.
    pub algorithms: Vec<AlltoallvAlgorithm>,
    /// Least time spent per measurement, seconds.
    pub min_time: f64,
}

impl Default for FftBenchOptions {
    fn default() -> Self {
        Self {
            grids: SERIAL_GRIDS.to_vec(),
            threads: vec![1],
            dist_grid: Some([64, 64, 64]),
            dist_ranks: vec![4],
            band_blocks: vec![1, 4, 16],
            algorithms: AlltoallvAlgorithm::ALL.to_vec(),
            min_time: 0.3,
        }
    }
}

/// One serial measurement.
#[derive(Clone, Debug, PartialEq)]
pub struct SerialRow {
    /// Grid.
    pub dims: [usize; 3],
    /// rayon threads.
    pub threads: usize,
    /// `complex`, `sphere`, `sphere+V` or `r2c`.
    pub kind: &'static str,
    /// Milliseconds per transform.
    pub ms: f64,
    /// Nominal GFLOP/s.
    pub gflops: f64,
    /// FFTW's milliseconds per transform for the comparison (feature `fftw`, one thread).
    pub fftw_ms: Option<f64>,
}

/// One distributed measurement.
#[derive(Clone, Debug, PartialEq)]
pub struct DistRow {
    /// Grid.
    pub dims: [usize; 3],
    /// Process grid.
    pub grid: ProcessGrid,
    /// Transpose strategy.
    pub algorithm: AlltoallvAlgorithm,
    /// Bands per transpose.
    pub nb: usize,
    /// Band blocks per call: 1, or several pipelined (`backward_bands`/`forward_bands_scaled`,
    /// each block's transpose 1 overlapping local work of its neighbour block).
    pub blocks: usize,
    /// Milliseconds per band per transform (slowest rank).
    pub ms_per_band: f64,
    /// Fraction of rank 0's time in pack and unpack.
    pub pack_share: f64,
    /// Fraction of rank 0's time in the all-to-all-v.
    pub exchange_share: f64,
}

/// The benchmark's results.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct FftBenchTable {
    /// Serial rows.
    pub serial: Vec<SerialRow>,
    /// Distributed rows.
    pub dist: Vec<DistRow>,
}

fn flops(dims: [usize; 3]) -> f64 {
    let n = (dims[0] * dims[1] * dims[2]) as f64;
    5.0 * n * n.log2()
}

/// Fastest of repeated `run`s (each returns its own timed seconds), at least 3 and `min_time`.
fn timed(f: impl FnOnce()) -> f64 {
    let t = Instant::now();
    f();
    t.elapsed().as_secs_f64()
}

fn wavefunction_sphere(dims: [usize; 3]) -> Vec<[i32; 3]> {
    CheckCase {
        dims,
        kpoint: [0.0; 3],
        fraction: 0.5,
        seed: 1,
    }
    .millers()
}

fn template(n: usize) -> Vec<C64> {
    (0..n)
        .map(|i| C64::new((i as f64 * 0.37).sin(), (i as f64 * 0.91).cos()))
        .collect()
}

/// The fastest time of each of `runs`, taken round-robin (one repetition of each in turn,
/// after one warm-up each) until `min_time` per run has passed and each ran three times: on a
/// machine whose speed drifts, every candidate sees the same conditions, so their ratios hold.
fn best_interleaved(min_time: f64, runs: &mut [Box<dyn FnMut() -> f64 + '_>]) -> Vec<f64> {
    for r in runs.iter_mut() {
        r();
    }
    let start = Instant::now();
    let budget = min_time * runs.len() as f64;
    let mut best = vec![f64::INFINITY; runs.len()];
    let mut reps = 0;
    while reps < 3 || start.elapsed().as_secs_f64() < budget {
        for (b, r) in best.iter_mut().zip(runs.iter_mut()) {
            *b = b.min(r());
        }
        reps += 1;
    }
    best
}

/// Serial rows for one grid at the current rayon thread count (with FFTW, at one thread,
/// measured interleaved with ours).
fn serial_rows(dims: [usize; 3], threads: usize, min_time: f64) -> Vec<SerialRow> {
    let grid = FftGrid { dims };
    let n = grid.len();
    let fft = Fft3d::new(grid);
    let x = template(n);
    let mut data = x.clone();
    let mut sdata = x.clone();
    let millers = wavefunction_sphere(dims);
    let sticks = Sticks::new(grid, &millers);
    let mut sph = vec![C64::new(0.0, 0.0); n];
    for (i, m) in millers.iter().enumerate() {
        sph[grid.index_of(*m)] = x[i];
    }
    let mut vdata = sph.clone();
    let v: Vec<f64> = x.iter().map(|z| 1.0 + 0.1 * z.re).collect();
    let r2c = RealFft3d::new(grid);
    let xr: Vec<f64> = x.iter().map(|z| z.re).collect();
    let mut real = xr.clone();
    let mut half = vec![C64::new(0.0, 0.0); r2c.half_len()];
    // Each run: a backward and a forward transform, input refreshed outside the timing.
    let mut runs: Vec<Box<dyn FnMut() -> f64 + '_>> = vec![
        Box::new(|| {
            data.copy_from_slice(&x);
            timed(|| {
                fft.backward(&mut data);
                fft.forward_unnormalized(&mut data);
            })
        }),
        Box::new(|| {
            sdata.copy_from_slice(&sph);
            timed(|| {
                fft.backward_sphere(&mut sdata, &sticks);
                fft.forward_sphere_unnormalized(&mut sdata, &sticks);
            })
        }),
        Box::new(|| {
            vdata.copy_from_slice(&sph);
            timed(|| fft.apply_potential_sphere(&mut vdata, &v, &sticks))
        }),
        Box::new(|| {
            real.copy_from_slice(&xr);
            timed(|| {
                r2c.forward_unnormalized(&real, &mut half);
                r2c.backward(&mut half, &mut real);
            })
        }),
    ];
    let with_fftw = threads == 1 && fftw_runs(dims, &mut runs);
    let t: Vec<f64> = best_interleaved(min_time, &mut runs)
        .into_iter()
        .map(|s| s / 2.0)
        .collect();
    let (f_c2c, f_r2c) = if with_fftw {
        (Some(t[4]), Some(t[5]))
    } else {
        (None, None)
    };
    let row = |kind, s: f64, fl: f64, f: Option<f64>| SerialRow {
        dims,
        threads,
        kind,
        ms: s * 1e3,
        gflops: fl / s * 1e-9,
        fftw_ms: f.map(|t| t * 1e3),
    };
    vec![
        row("complex", t[0], flops(dims), f_c2c),
        row("sphere", t[1], flops(dims), f_c2c),
        row("sphere+V", t[2], flops(dims), f_c2c),
        row("r2c", t[3], flops(dims) / 2.0, f_r2c),
    ]
}

/// Append FFTW's complex and r2c runs (backward + forward each); false without the feature.
#[cfg(feature = "fftw")]
fn fftw_runs(dims: [usize; 3], runs: &mut Vec<Box<dyn FnMut() -> f64 + '_>>) -> bool {
    use crate::fftw::{FftwC2c, FftwR2c};
    let x = template(dims.iter().product());
    let xr: Vec<f64> = x.iter().map(|z| z.re).collect();
    let mut c = FftwC2c::new(dims);
    let mut r = FftwR2c::new(dims);
    runs.push(Box::new(move || {
        c.data_mut().copy_from_slice(&x);
        timed(|| {
            c.backward();
            c.forward();
        })
    }));
    runs.push(Box::new(move || {
        r.real_mut().copy_from_slice(&xr);
        timed(|| {
            r.forward();
            r.backward();
        })
    }));
    true
}

#[cfg(not(feature = "fftw"))]
fn fftw_runs(_: [usize; 3], _: &mut Vec<Box<dyn FnMut() -> f64 + '_>>) -> bool {
    false
}

/// Serial measurements for every grid and thread count of `opts`.
pub fn run_serial_bench(opts: &FftBenchOptions) -> Vec<SerialRow> {
    let mut rows = Vec::new();
    for &t in &opts.threads {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(t)
            .build()
            .expect("planewave-fft bench: cannot build a rayon pool");
        for &dims in &opts.grids {
            rows.extend(pool.install(|| serial_rows(dims, t, opts.min_time)));
        }
    }
    rows
}

/// Band blocks of the pipelined distributed rows.
pub const PIPELINE_BLOCKS: usize = 4;

/// One distributed measurement on `ranks` thread ranks: `blocks` blocks of `nb` bands per
/// backward and forward call.
pub fn dist_row(
    dims: [usize; 3],
    ranks: usize,
    decomposition: Decomposition,
    algorithm: AlltoallvAlgorithm,
    nb: usize,
    blocks: usize,
    min_time: f64,
) -> Result<DistRow, String> {
    let nbands = nb * blocks;
    let millers = wavefunction_sphere(dims);
    let grid = FftGrid { dims };
    let out = Threads::builder(ranks)
        .ranks_per_node(2.min(ranks))
        .run(|c| -> Result<_, String> {
            let comm = c.into_arc();
            let options = DistFftOptions {
                decomposition,
                alltoallv: algorithm,
                pair_mirror_sticks: false,
            };
            let mut plan = DistFft::new(comm.clone(), grid, &millers, &options)?;
            let coeffs: Vec<C64> = template(nbands * plan.n_g_local());
            let mut real = vec![C64::new(0.0, 0.0); nbands * plan.n_real_local()];
            let scale = 1.0 / grid.len() as f64;
            let mut back = coeffs.clone();
            let mut step = |plan: &mut DistFft| {
                comm.barrier(CommClass::Other);
                let mut t = [timed(|| {
                    plan.backward_bands(&coeffs, nbands, nb, &mut real);
                    plan.forward_bands_scaled(&mut real, nbands, nb, scale, &mut back);
                })];
                comm.allreduce(&mut t, ReduceOp::Max, CommClass::Other);
                t[0]
            };
            step(&mut plan);
            // Every rank must run the same number of repetitions: rank 0 decides.
            let start = Instant::now();
            let mut best = f64::INFINITY;
            let mut reps = 0usize;
            let mut go = [1u64];
            plan.reset_timings();
            while go[0] == 1 {
                best = best.min(step(&mut plan));
                reps += 1;
                go[0] = u64::from(reps < 3 || start.elapsed().as_secs_f64() < min_time);
                comm.broadcast(&mut go, 0, CommClass::Other);
            }
            let p = plan.timings();
            let total = p.fft + p.pack + p.exchange + p.unpack;
            Ok((
                plan.process_grid(),
                best,
                (p.pack + p.unpack) / total,
                p.exchange / total,
            ))
        });
    let (pg, t, pack, exch) = out.into_iter().next().expect("rank 0")?;
    Ok(DistRow {
        dims,
        grid: pg,
        algorithm,
        nb,
        blocks,
        ms_per_band: t / (2.0 * nbands as f64) * 1e3,
        pack_share: pack,
        exchange_share: exch,
    })
}

/// Distributed measurements of `opts`.
pub fn run_dist_bench(opts: &FftBenchOptions) -> Result<Vec<DistRow>, String> {
    let Some(dims) = opts.dist_grid else {
        return Ok(Vec::new());
    };
    let mut rows = Vec::new();
    for &p in &opts.dist_ranks {
        let mut decomps = vec![Decomposition::Slab];
        if p >= 4 && p % 2 == 0 {
            decomps.push(Decomposition::Pencil { p1: 2, p2: p / 2 });
        }
        for d in decomps {
            for &a in &opts.algorithms {
                for &nb in &opts.band_blocks {
                    for blocks in [1, PIPELINE_BLOCKS] {
                        rows.push(dist_row(dims, p, d, a, nb, blocks, opts.min_time)?);
                    }
                }
            }
        }
    }
    Ok(rows)
}

/// The whole benchmark.
pub fn run_fft_bench(opts: &FftBenchOptions) -> Result<FftBenchTable, String> {
    Ok(FftBenchTable {
        serial: run_serial_bench(opts),
        dist: run_dist_bench(opts)?,
    })
}

fn dims_name(d: [usize; 3]) -> String {
    if d[0] == d[1] && d[1] == d[2] {
        format!("{}^3", d[0])
    } else {
        format!("{}x{}x{}", d[0], d[1], d[2])
    }
}

impl fmt::Display for FftBenchTable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if !self.serial.is_empty() {
            writeln!(
                f,
                "serial FFT (per transform; GFLOP/s of 5 N log2 N, r2c 2.5 N log2 N; \
                 ours/FFTW: FFTW 3 with FFTW_MEASURE, 1 thread, complex for complex and sphere)"
            )?;
            writeln!(
                f,
                "{:<12} {:>7} {:<8} {:>10} {:>9} {:>10} {:>10}",
                "grid", "threads", "kind", "ms", "GFLOP/s", "FFTW ms", "ours/FFTW"
            )?;
            for r in &self.serial {
                let (fm, ratio) = match r.fftw_ms {
                    Some(t) => (format!("{t:.3}"), format!("{:.2}", r.ms / t)),
                    None => ("-".into(), "-".into()),
                };
                writeln!(
                    f,
                    "{:<12} {:>7} {:<8} {:>10.3} {:>9.2} {:>10} {:>10}",
                    dims_name(r.dims),
                    r.threads,
                    r.kind,
                    r.ms,
                    r.gflops,
                    fm,
                    ratio
                )?;
            }
        }
        if !self.dist.is_empty() {
            writeln!(
                f,
                "distributed sphere FFT on Threads (ms per band per transform, slowest rank; \
                 shares of rank 0's time)"
            )?;
            writeln!(
                f,
                "{:<12} {:<14} {:<12} {:>4} {:>6} {:>12} {:>12} {:>10}",
                "grid",
                "decomposition",
                "alltoallv",
                "nb",
                "blocks",
                "ms/band",
                "pack+unpack",
                "exchange"
            )?;
            for r in &self.dist {
                writeln!(
                    f,
                    "{:<12} {:<14} {:<12} {:>4} {:>6} {:>12.3} {:>11.0}% {:>9.0}%",
                    dims_name(r.dims),
                    r.grid.to_string(),
                    r.algorithm.name(),
                    r.nb,
                    r.blocks,
                    r.ms_per_band,
                    100.0 * r.pack_share,
                    100.0 * r.exchange_share
                )?;
            }
        }
        Ok(())
    }
}
