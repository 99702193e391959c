//! The linear-algebra benchmark: GFLOP/s of the subspace kernels, per back end and per
//! band-distributed algorithm.
//!
//! Contract: [`run_linalg_bench`] measures, for every `npw x nbands` case of the options
//! (complex blocks), on one rank: the overlap `A^H A`, the rotation `A X`, the triangular
//! rotation `A triu(U)` and the Cholesky orthonormalisation (overlap, Cholesky, triangular
//! solve) on every built-in back end, with the ratio of the LAPACK back end's speed to faer's;
//! and on a `Threads` group of `ranks` ranks the band-distributed overlap, rotation and
//! orthonormalisation by the ring (both orders) and by gathering. A time is the best of
//! repetitions filling `min_time` (at least one). Flop counts are nominal: `8 npw n^2` for an
//! overlap or rotation, half that for the triangular rotation, `12 npw n^2 + 8 n^3 / 3` for
//! the orthonormalisation. Cases whose overlap exceeds `max_flops` are skipped and listed.
//! The table prints with `Display`.
//!
//! [`run_eigen_bench`] (collective, any communicator; run it under `mpirun` with the
//! `linalg_eigen_bench` example) times the subspace eigensolver of `dim x dim` complex
//! Hermitian matrices, all eigenpairs, seconds per solve on the slowest rank (best of
//! repetitions filling `min_time`, at least two): redundant on
//! every built-in back end (faer, and OpenBLAS `zheevd` with `lapack`) and, with the feature
//! `scalapack` on an MPI group, ScaLAPACK `pzheevd` (scatter and gather included).

use crate::backend::Backend;
use crate::band_dist::{BandAlgorithm, BandDistBlock};
use crate::scalar::Scalar;
use crate::selfcheck::test_matrix;
use faer::{c64, Mat};
use planewave_comm::{CommClass, CommExt, Communicator, ReduceOp, Threads};
use std::fmt;
use std::time::{Duration, Instant};

/// What to measure.
#[derive(Clone, Debug)]
pub struct BenchOptions {
    /// Coefficient counts.
    pub npw: Vec<usize>,
    /// Band counts.
    pub nbands: Vec<usize>,
    /// Ranks of the `Threads` group for the band-distributed products (0: skip them).
    pub ranks: usize,
    /// Repeat a measurement until this much time has passed.
    pub min_time: Duration,
    /// Skip cases whose overlap needs more flops than this.
    pub max_flops: f64,
}

impl BenchOptions {
    /// npw ∈ {2000, 20000}, nbands ∈ {64, 256, 1024}, 2 ranks, up to 6e10 flops per overlap
    /// (skips 1024 x 20000).
    pub fn full() -> Self {
        BenchOptions {
            npw: vec![2000, 20000],
            nbands: vec![64, 256, 1024],
            ranks: 2,
            min_time: Duration::from_millis(300),
            max_flops: 6e10,
        }
    }
    /// npw = 2000, nbands ∈ {64, 256}: a few seconds.
    pub fn quick() -> Self {
        BenchOptions {
            npw: vec![2000],
            nbands: vec![64, 256],
            ranks: 2,
            min_time: Duration::from_millis(100),
            max_flops: 6e10,
        }
    }
}

/// One measured kernel on one rank.
#[derive(Clone, Debug)]
pub struct KernelRow {
    /// Kernel name.
    pub kernel: &'static str,
    /// Coefficients.
    pub npw: usize,
    /// Bands.
    pub nbands: usize,
    /// (back end, seconds, GFLOP/s), faer first.
    pub results: Vec<(Backend, f64, f64)>,
}

/// One band-distributed product on the `Threads` group.
#[derive(Clone, Debug)]
pub struct BandRow {
    /// Operation name.
    pub op: &'static str,
    /// Coefficients.
    pub npw: usize,
    /// Bands.
    pub nbands: usize,
    /// (algorithm, seconds, GFLOP/s).
    pub results: Vec<(BandAlgorithm, f64, f64)>,
}

/// The measured table.
#[derive(Clone, Debug)]
pub struct LinalgBenchTable {
    /// Dense kernels on one rank.
    pub kernels: Vec<KernelRow>,
    /// Band-distributed products.
    pub band: Vec<BandRow>,
    /// Ranks of the band group.
    pub ranks: usize,
    /// Skipped cases.
    pub skipped: Vec<String>,
    /// Machine notes (cores, OpenBLAS core type).
    pub notes: Vec<String>,
}

fn overlap_flops(npw: usize, n: usize) -> f64 {
    c64::FLOPS_PER_FMA * npw as f64 * (n * n) as f64
}

/// Best time per call of `f` over repetitions filling `min_time`.
fn time_it(min_time: Duration, mut f: impl FnMut()) -> f64 {
    let start = Instant::now();
    let mut best = f64::INFINITY;
    loop {
        let t = Instant::now();
        f();
        best = best.min(t.elapsed().as_secs_f64());
        if start.elapsed() >= min_time {
            return best;
        }
    }
}

fn dense_rows(opts: &BenchOptions, npw: usize, n: usize) -> Vec<KernelRow> {
    let a = test_matrix::<c64>(npw, n, 1);
    let x = test_matrix::<c64>(n, n, 2);
    let f = overlap_flops(npw, n);
    let orth_f = 1.5 * f + c64::FLOPS_PER_FMA * (n * n * n) as f64 / 3.0;
    let mut rows: Vec<KernelRow> = [
        ("overlap A^H A", f),
        ("rotation A X", f),
        ("triangular rotation A triu(U)", f / 2.0),
        ("Cholesky orthonormalisation", orth_f),
    ]
    .into_iter()
    .map(|(kernel, _)| KernelRow {
        kernel,
        npw,
        nbands: n,
        results: Vec::new(),
    })
    .collect();
    let flops = [f, f, f / 2.0, orth_f];
    for be in Backend::available() {
        let mut s = Mat::<c64>::zeros(n, n);
        let mut y = Mat::<c64>::zeros(npw, n);
        let times = [
            time_it(opts.min_time, || {
                c64::gemm_with(be, s.as_mut(), false, a.as_ref(), true, a.as_ref(), false)
            }),
            time_it(opts.min_time, || {
                c64::gemm_with(be, y.as_mut(), false, a.as_ref(), false, x.as_ref(), false)
            }),
            time_it(opts.min_time, || {
                c64::upper_matmul_acc_with(be, y.as_mut(), a.as_ref(), x.as_ref(), false)
            }),
            time_it(opts.min_time, || {
                let mut b = a.clone();
                let mut ss = Mat::<c64>::zeros(n, n);
                c64::gemm_with(be, ss.as_mut(), false, b.as_ref(), true, b.as_ref(), false);
                let l = c64::cholesky_with(be, ss.as_ref()).expect("positive definite");
                c64::trsm_right_with(be, b.as_mut(), l.as_ref(), true);
            }),
        ];
        for (k, row) in rows.iter_mut().enumerate() {
            row.results.push((be, times[k], flops[k] / times[k] * 1e-9));
        }
    }
    rows
}

fn band_rows(opts: &BenchOptions, npw: usize, n: usize) -> Vec<BandRow> {
    let p = opts.ranks;
    let f = overlap_flops(npw, n);
    let orth_f = 1.5 * f + c64::FLOPS_PER_FMA * (n * n * n) as f64 / 3.0;
    let ops: [(&'static str, f64); 3] = [
        ("band overlap", f),
        ("band rotation", f),
        ("band orthonormalisation", orth_f),
    ];
    let a = test_matrix::<c64>(npw, n, 1);
    let x = test_matrix::<c64>(n, n, 2);
    let min_time = opts.min_time;
    let times: Vec<Vec<f64>> = Threads::run(p, |comm| {
        let comm = comm.into_arc();
        let ba = BandDistBlock::from_global(comm.clone(), a.as_ref());
        let mut out = Vec::new();
        for algo in BandAlgorithm::ALL {
            let run = |op: usize| match op {
                0 => drop(ba.overlap(&ba, algo)),
                1 => drop(ba.rotate(x.as_ref(), algo)),
                _ => {
                    let mut b = ba.clone();
                    b.orthonormalise(algo).expect("positive definite");
                }
            };
            for op in 0..ops.len() {
                out.push(time_collective(&*comm, min_time, || run(op)));
            }
        }
        out
    })
    .swap_remove(0)
    .chunks(ops.len())
    .map(<[f64]>::to_vec)
    .collect();
    ops.iter()
        .enumerate()
        .map(|(k, &(op, fl))| BandRow {
            op,
            npw,
            nbands: n,
            results: BandAlgorithm::ALL
                .iter()
                .enumerate()
                .map(|(ai, &algo)| (algo, times[ai][k], fl / times[ai][k] * 1e-9))
                .collect(),
        })
        .collect()
}

/// Time per call of a collective `f` (slowest rank; same repetition count on every rank).
fn time_collective(comm: &dyn Communicator, min_time: Duration, mut f: impl FnMut()) -> f64 {
    comm.barrier(CommClass::Other);
    let t = Instant::now();
    f();
    let mut first = [t.elapsed().as_secs_f64()];
    comm.allreduce(&mut first, ReduceOp::Max, CommClass::Other);
    let reps = ((min_time.as_secs_f64() / first[0].max(1e-9)) as usize).clamp(1, 50);
    comm.barrier(CommClass::Other);
    let t = Instant::now();
    for _ in 0..reps {
        f();
    }
    comm.barrier(CommClass::Other);
    let mut per = [t.elapsed().as_secs_f64() / reps as f64];
    comm.allreduce(&mut per, ReduceOp::Max, CommClass::Other);
    per[0].min(first[0])
}

/// Best time of a collective `f` over repetitions filling `min_time` (at least two): each
/// repetition is timed between barriers and reduced to the slowest rank, so every rank takes
/// the same decisions. The best, not the mean, resists other load on a shared machine.
fn time_collective_best(comm: &dyn Communicator, min_time: Duration, mut f: impl FnMut()) -> f64 {
    let (mut best, mut total, mut reps) = (f64::INFINITY, 0.0, 0);
    while reps < 2 || (total < min_time.as_secs_f64() && reps < 100) {
        comm.barrier(CommClass::Other);
        let t = Instant::now();
        f();
        let mut dt = [t.elapsed().as_secs_f64()];
        comm.allreduce(&mut dt, ReduceOp::Max, CommClass::Other);
        best = best.min(dt[0]);
        total += dt[0];
        reps += 1;
    }
    best
}

/// Run the benchmark (see the module documentation).
pub fn run_linalg_bench(opts: &BenchOptions) -> LinalgBenchTable {
    let mut table = LinalgBenchTable {
        kernels: Vec::new(),
        band: Vec::new(),
        ranks: opts.ranks,
        skipped: Vec::new(),
        notes: vec![format!(
            "cores: {}; back ends: {}",
            std::thread::available_parallelism().map_or(1, |n| n.get()),
            Backend::available()
                .iter()
                .map(|b| b.name())
                .collect::<Vec<_>>()
                .join(", ")
        )],
    };
    if let Some(core) = crate::openblas::corename() {
        table.notes.push(format!(
            "OpenBLAS kernels: {core} (OPENBLAS_CORETYPE={}, recommended {})",
            std::env::var(crate::openblas::CORETYPE_ENV).unwrap_or_else(|_| "unset".into()),
            crate::openblas::recommended_coretype().unwrap_or("-")
        ));
    }
    for &npw in &opts.npw {
        for &n in &opts.nbands {
            if overlap_flops(npw, n) > opts.max_flops {
                table.skipped.push(format!(
                    "npw={npw} nbands={n} ({:.0} GFLOP per overlap)",
                    overlap_flops(npw, n) * 1e-9
                ));
                continue;
            }
            table.kernels.extend(dense_rows(opts, npw, n));
            if opts.ranks > 0 {
                table.band.extend(band_rows(opts, npw, n));
            }
        }
    }
    table
}

impl fmt::Display for LinalgBenchTable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "planewave-linalg benchmark (complex blocks, GFLOP/s)")?;
        for n in &self.notes {
            writeln!(f, "  {n}")?;
        }
        let backends = Backend::available();
        write!(f, "{:<32} {:>6} {:>6}", "kernel (1 rank)", "npw", "bands")?;
        for b in &backends {
            write!(f, " {:>10}", b.name())?;
        }
        if backends.len() > 1 {
            write!(f, " {:>13}", "lapack/faer")?;
        }
        writeln!(f)?;
        for r in &self.kernels {
            write!(f, "{:<32} {:>6} {:>6}", r.kernel, r.npw, r.nbands)?;
            for (_, _, g) in &r.results {
                write!(f, " {g:>10.1}")?;
            }
            if r.results.len() > 1 {
                write!(f, " {:>12.2}x", r.results[1].2 / r.results[0].2)?;
            }
            writeln!(f)?;
        }
        if !self.band.is_empty() {
            write!(
                f,
                "{:<32} {:>6} {:>6}",
                format!("band group of {} (Threads)", self.ranks),
                "npw",
                "bands"
            )?;
            for a in BandAlgorithm::ALL {
                write!(f, " {:>13}", a.to_string())?;
            }
            writeln!(f)?;
            for r in &self.band {
                write!(f, "{:<32} {:>6} {:>6}", r.op, r.npw, r.nbands)?;
                for (_, _, g) in &r.results {
                    write!(f, " {g:>13.1}")?;
                }
                writeln!(f)?;
            }
        }
        for s in &self.skipped {
            writeln!(f, "  skipped: {s}")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tiny_eigen_bench_runs_and_prints() {
        let t = run_eigen_bench(&planewave_comm::Solo, &[8], Duration::ZERO);
        assert_eq!(t.rows.len(), 1);
        assert!(t.rows[0].results.iter().all(|(_, s)| *s > 0.0));
        assert!(t.to_string().contains("redundant faer"));
    }

    #[test]
    fn tiny_bench_runs_and_prints() {
        let opts = BenchOptions {
            npw: vec![40],
            nbands: vec![4, 400],
            ranks: 2,
            min_time: Duration::from_millis(1),
            max_flops: 1e6,
        };
        let t = run_linalg_bench(&opts);
        assert_eq!(t.kernels.len(), 4);
        assert_eq!(t.band.len(), 3);
        assert_eq!(t.skipped.len(), 1);
        let s = t.to_string();
        assert!(s.contains("ring-oddeven") && s.contains("skipped"));
    }
}

/// One dimension of the eigensolver benchmark: seconds per solve by solver.
#[derive(Clone, Debug)]
pub struct EigenRow {
    /// Matrix dimension (all eigenpairs are computed).
    pub dim: usize,
    /// `(solver name, seconds per solve)`.
    pub results: Vec<(String, f64)>,
}

/// The eigensolver benchmark's table.
#[derive(Clone, Debug)]
pub struct EigenBenchTable {
    /// Group size.
    pub ranks: usize,
    /// Communicator back end.
    pub backend: &'static str,
    /// One row per dimension.
    pub rows: Vec<EigenRow>,
    /// Machine notes.
    pub notes: Vec<String>,
}

/// Time the subspace eigensolvers on `comm` (collective; see the module documentation).
pub fn run_eigen_bench(
    comm: &dyn Communicator,
    dims: &[usize],
    min_time: Duration,
) -> EigenBenchTable {
    use crate::subspace::{eigen_with, scalapack_available, EigenSolver};
    let mut notes = vec![format!(
        "cores: {}; ranks: {} ({})",
        std::thread::available_parallelism().map_or(1, |n| n.get()),
        comm.size(),
        comm.backend()
    )];
    if let Ok(t) = std::env::var("OPENBLAS_NUM_THREADS") {
        notes.push(format!("OPENBLAS_NUM_THREADS={t}"));
    }
    if let Ok(c) = std::env::var(crate::openblas::CORETYPE_ENV) {
        notes.push(format!("OPENBLAS_CORETYPE={c}"));
    }
    let saved = crate::backend::default_backend();
    let mut rows = Vec::new();
    for &dim in dims {
        let a = test_matrix::<c64>(dim, dim, 11);
        let h = Mat::from_fn(dim, dim, |i, j| a[(i, j)] + a[(j, i)].conj());
        // (name, dense back end of the redundant solve, solver)
        let mut cases: Vec<(String, Backend, EigenSolver)> = Backend::available()
            .into_iter()
            .map(|be| {
                (
                    format!("redundant {}", be.name()),
                    be,
                    EigenSolver::Redundant,
                )
            })
            .collect();
        if scalapack_available(comm) {
            cases.push(("scalapack".into(), saved, EigenSolver::Scalapack));
        }
        let mut results = Vec::new();
        for (name, be, solver) in cases {
            crate::backend::set_default_backend(be);
            let t = time_collective_best(comm, min_time, || {
                let e = eigen_with(comm, h.as_ref(), dim, CommClass::Band, solver);
                std::hint::black_box(e.ok());
            });
            results.push((name, t));
        }
        crate::backend::set_default_backend(saved);
        rows.push(EigenRow { dim, results });
    }
    EigenBenchTable {
        ranks: comm.size(),
        backend: comm.backend(),
        rows,
        notes,
    }
}

impl fmt::Display for EigenBenchTable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "subspace eigensolver, c64, all eigenpairs, seconds per solve ({} ranks, {})",
            self.ranks, self.backend
        )?;
        for n in &self.notes {
            writeln!(f, "  {n}")?;
        }
        let Some(first) = self.rows.first() else {
            return Ok(());
        };
        write!(f, "{:>6}", "dim")?;
        for (name, _) in &first.results {
            write!(f, " {name:>16}")?;
        }
        writeln!(f)?;
        for r in &self.rows {
            write!(f, "{:>6}", r.dim)?;
            for (_, t) in &r.results {
                write!(f, " {t:>16.5}")?;
            }
            writeln!(f)?;
        }
        Ok(())
    }
}
