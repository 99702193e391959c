//! Self-check of the distributed operations against their serial counterparts, on any
//! communicator (the tests run it on `Threads` with 1..8 ranks, the `mpi_check` example under
//! `mpirun`).
//!
//! Contract: [`run_selfcheck`] is collective. On deterministic pseudo-random blocks with
//! uneven coefficient counts (rank 1 owns no rows when there are several ranks) and band
//! counts below, equal to and above the number of ranks (so some ranks own no band), for
//! `f64` and `c64`, it compares every G- and band-distributed operation (overlap, rotation,
//! triangular rotation, Cholesky orthonormalisation, redundant eigensolver, layout conversion
//! through every all-to-all-v strategy, every ring order and the gather variant) with the
//! serial kernel on the whole matrix: relative Frobenius error at most [`TOLERANCE`],
//! layout conversions exact, replicated results bit-identical on every rank. With the
//! feature `scalapack` on an MPI group it also compares the ScaLAPACK eigensolver with the
//! redundant one (f64 and c64; dimensions 1, 5, 33, 64, 100 and 130 with block 32, so `n`
//! not divisible by the block size and ranks owning no block; `n` = 1, half and all
//! eigenpairs): eigenvalues to [`TOLERANCE`] relative to the largest, residual
//! `|H V - V diag(w)| / |H V|` and orthonormality `|V^H V - I|` to [`TOLERANCE`], spectral
//! projectors `V V^H` of both solvers to [`PROJECTOR_TOLERANCE`] (gap-dependent), results
//! bit-identical on every rank; and the dispatcher [`eigen`](crate::subspace::eigen) with
//! every request. Every rank returns the same verdict: `Ok(summary)` or
//! `Err(list of failures)`.

use crate::band_dist::{BandAlgorithm, BandDistBlock};
use crate::dense::{cholesky_orthonormalise, hermitian_eigen_lowest, matmul, overlap};
use crate::gdist::GDistBlock;
use crate::partition::{mat_to_vec, RowPartition};
use crate::scalar::Scalar;
use crate::subspace::{broadcast_mat, redundant_eigen};
use faer::{c64, Mat, MatRef};
use planewave_comm::{AlltoallvAlgorithm, CommClass, CommExt, Communicator, ReduceOp};
use std::sync::Arc;

/// Largest accepted relative error of a distributed result against the serial one.
pub const TOLERANCE: f64 = 1e-12;
/// Largest accepted relative distance between the spectral projectors of two eigensolvers
/// (eigenvector errors scale with `eps |H| / gap`, so this is looser than [`TOLERANCE`]).
pub const PROJECTOR_TOLERANCE: f64 = 1e-10;

/// Deterministic pseudo-random `rows x cols` matrix with entries in [-1, 1] (+ i[-1, 1]).
pub fn test_matrix<T: Scalar>(rows: usize, cols: usize, seed: u64) -> Mat<T> {
    let h = |i: usize, j: usize, k: u64| {
        let mut x = (i as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15)
            ^ (j as u64).wrapping_mul(0xC2B2_AE3D_27D4_EB4F)
            ^ seed.wrapping_mul(0x1656_67B1_9E37_79F9)
            ^ k;
        x ^= x >> 31;
        x = x.wrapping_mul(0xBF58_476D_1CE4_E5B9);
        x ^= x >> 29;
        (x >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0
    };
    Mat::from_fn(rows, cols, |i, j| T::from_re_im(h(i, j, 1), h(i, j, 2)))
}

/// Uneven coefficient counts summing to `npw` over `p` ranks; rank 1 gets none when `p > 1`.
pub fn uneven_rows(npw: usize, p: usize) -> RowPartition {
    let w: Vec<usize> = (0..p)
        .map(|r| if p > 1 && r == 1 { 0 } else { 1 + (r * 5) % 4 })
        .collect();
    let total: usize = w.iter().sum();
    let mut counts: Vec<usize> = w.iter().map(|&x| npw * x / total).collect();
    counts[0] += npw - counts.iter().sum::<usize>();
    RowPartition::new(counts)
}

/// Relative Frobenius distance `|a - b| / |b|`.
pub fn rel_err<T: Scalar>(a: MatRef<'_, T>, b: MatRef<'_, T>) -> f64 {
    if (a.nrows(), a.ncols()) != (b.nrows(), b.ncols()) {
        return f64::INFINITY;
    }
    let (mut d, mut n) = (0.0, 0.0);
    for j in 0..a.ncols() {
        for i in 0..a.nrows() {
            d += (a[(i, j)] - b[(i, j)]).abs2();
            n += b[(i, j)].abs2();
        }
    }
    (d / n.max(f64::MIN_POSITIVE)).sqrt()
}

fn triu<T: Scalar>(x: MatRef<'_, T>) -> Mat<T> {
    Mat::from_fn(x.nrows(), x.ncols(), |i, j| {
        if i <= j {
            x[(i, j)]
        } else {
            T::from_f64(0.0)
        }
    })
}

struct Checker<'a> {
    comm: &'a dyn Communicator,
    failures: Vec<String>,
    count: usize,
}

impl Checker<'_> {
    fn close<T: Scalar>(&mut self, what: &str, got: MatRef<'_, T>, want: MatRef<'_, T>) {
        self.count += 1;
        let e = rel_err(got, want);
        if e.is_nan() || e > TOLERANCE {
            self.failures.push(format!(
                "rank {}: {what}: relative error {e:.2e}",
                self.comm.rank()
            ));
        }
    }
    fn exact<T: Scalar>(&mut self, what: &str, got: MatRef<'_, T>, want: MatRef<'_, T>) {
        self.count += 1;
        if mat_to_vec(got) != mat_to_vec(want) || got.nrows() != want.nrows() {
            self.failures
                .push(format!("rank {}: {what}: not identical", self.comm.rank()));
        }
    }
    /// Every rank holds the same bits as rank 0.
    fn replicated<T: Scalar>(&mut self, what: &str, m: MatRef<'_, T>) {
        let mut root = m.to_owned();
        broadcast_mat(self.comm, &mut root, 0, CommClass::Other);
        self.exact(
            &format!("{what} (bit-identical to rank 0)"),
            m,
            root.as_ref(),
        );
    }
}

fn check_type<T: Scalar>(c: &mut Checker<'_>, comm: &Arc<dyn Communicator>, tname: &str) {
    let p = comm.size();
    let strategies: Vec<_> = AlltoallvAlgorithm::ALL
        .iter()
        .map(|a| a.build(comm.clone()))
        .collect();
    for (case, &(npw, nb)) in [(37, 5), (61, 13), (24, 1), (50, 8), (16, 3)]
        .iter()
        .enumerate()
    {
        let tag = format!("{tname} npw={npw} nbands={nb} p={p}");
        let seed = case as u64 * 10;
        let (a, b) = (
            test_matrix::<T>(npw, nb, seed),
            test_matrix::<T>(npw, nb + 2, seed + 1),
        );
        let nout = nb.saturating_sub(2).max(1);
        let x = test_matrix::<T>(nb, nout, seed + 2);
        let xsq = test_matrix::<T>(nb, nb, seed + 3);
        let rows = uneven_rows(npw, p);

        // Serial references.
        let s_ab = overlap(a.as_ref(), b.as_ref());
        let ax = matmul(a.as_ref(), x.as_ref());
        let ax_up = matmul(a.as_ref(), triu(xsq.as_ref()).as_ref());
        let mut a_on = a.clone();
        cholesky_orthonormalise(a_on.as_mut()).expect("serial orthonormalisation");

        // G-distributed.
        let ga = GDistBlock::from_global(comm.clone(), rows.clone(), a.as_ref());
        let gb = GDistBlock::from_global(comm.clone(), rows.clone(), b.as_ref());
        let s = ga.overlap(&gb);
        c.close(&format!("G overlap {tag}"), s.as_ref(), s_ab.as_ref());
        c.replicated(&format!("G overlap {tag}"), s.as_ref());
        let gy = ga.rotate(x.as_ref());
        c.close(
            &format!("G rotation {tag}"),
            gy.to_global().as_ref(),
            ax.as_ref(),
        );
        let mut go = ga.clone();
        match go.orthonormalise() {
            Ok(l) => {
                c.close(
                    &format!("G orthonormalise {tag}"),
                    go.to_global().as_ref(),
                    a_on.as_ref(),
                );
                c.replicated(&format!("G Cholesky factor {tag}"), l.as_ref());
            }
            Err(e) => c.failures.push(format!("G orthonormalise {tag}: {e}")),
        }

        // Layout conversions through every strategy.
        let ba = BandDistBlock::from_global(comm.clone(), a.as_ref());
        for st in &strategies {
            let conv = ga.to_band(&**st);
            c.exact(
                &format!("G->band via {} {tag}", st.name()),
                conv.local(),
                ba.local(),
            );
            let back = conv.to_g(&rows, &**st);
            c.exact(
                &format!("band->G via {} {tag}", st.name()),
                back.local(),
                ga.local(),
            );
        }

        // Band-distributed, every algorithm.
        let bb = BandDistBlock::from_global(comm.clone(), b.as_ref());
        for algo in BandAlgorithm::ALL {
            let s = ba.overlap(&bb, algo);
            c.close(
                &format!("band overlap {algo} {tag}"),
                s.as_ref(),
                s_ab.as_ref(),
            );
            c.replicated(&format!("band overlap {algo} {tag}"), s.as_ref());
            let y = ba.rotate(x.as_ref(), algo);
            c.close(
                &format!("band rotation {algo} {tag}"),
                y.to_global().as_ref(),
                ax.as_ref(),
            );
            let yu = ba.rotate_upper(xsq.as_ref(), algo);
            c.close(
                &format!("band triangular rotation {algo} {tag}"),
                yu.to_global().as_ref(),
                ax_up.as_ref(),
            );
            let mut bo = ba.clone();
            match bo.orthonormalise(algo) {
                Ok(l) => {
                    c.close(
                        &format!("band orthonormalise {algo} {tag}"),
                        bo.to_global().as_ref(),
                        a_on.as_ref(),
                    );
                    c.replicated(&format!("band Cholesky factor {algo} {tag}"), l.as_ref());
                }
                Err(e) => c
                    .failures
                    .push(format!("band orthonormalise {algo} {tag}: {e}")),
            }
        }

        // Redundant subspace eigenproblem on the (distributed) Hermitian overlap.
        let h = ga.overlap(&ga);
        let h_serial = overlap(a.as_ref(), a.as_ref());
        let nlow = nb / 2 + 1;
        match (
            redundant_eigen(&**comm, h.as_ref(), nlow, CommClass::Band),
            hermitian_eigen_lowest(h_serial.as_ref(), nlow),
        ) {
            (Ok(e), Ok(se)) => {
                let v = Mat::from_fn(1, nlow, |_, j| T::from_f64(e.values[j]));
                let sv = Mat::from_fn(1, nlow, |_, j| T::from_f64(se.values[j]));
                c.close(
                    &format!("redundant eigenvalues {tag}"),
                    v.as_ref(),
                    sv.as_ref(),
                );
                // Residual |H V - V diag(w)| relative to |H V|.
                let hv = matmul(h_serial.as_ref(), e.vectors.as_ref());
                let vw = Mat::from_fn(nb, nlow, |i, j| e.vectors[(i, j)].scale(e.values[j]));
                c.close(
                    &format!("redundant eigenvectors {tag}"),
                    vw.as_ref(),
                    hv.as_ref(),
                );
                c.replicated(&format!("redundant eigenvectors {tag}"), e.vectors.as_ref());
                c.replicated(&format!("redundant eigenvalues {tag}"), v.as_ref());
            }
            (Err(e), _) | (_, Err(e)) => c.failures.push(format!("eigen {tag}: {e}")),
        }
    }
}

/// Run every comparison on `comm` (collective); see the module documentation.
pub fn run_selfcheck(comm: Arc<dyn Communicator>) -> Result<String, String> {
    let mut c = Checker {
        comm: &*comm,
        failures: Vec::new(),
        count: 0,
    };
    check_type::<f64>(&mut c, &comm, "f64");
    check_type::<c64>(&mut c, &comm, "c64");
    #[cfg(feature = "scalapack")]
    if crate::subspace::scalapack_available(&*comm) {
        check_distributed_eigen::<f64>(&mut c, "f64");
        check_distributed_eigen::<c64>(&mut c, "c64");
    }
    let mut bad = [c.failures.len() as u64];
    comm.allreduce(&mut bad, ReduceOp::Max, CommClass::Other);
    if bad[0] == 0 {
        Ok(format!(
            "{} linalg checks passed on {} ranks ({})",
            c.count,
            comm.size(),
            comm.backend()
        ))
    } else if c.failures.is_empty() {
        Err("another rank reported failures".into())
    } else {
        Err(c.failures.join("\n"))
    }
}

/// ScaLAPACK against the redundant solve (see the module doc).
#[cfg(feature = "scalapack")]
fn check_distributed_eigen<T: Scalar>(c: &mut Checker<'_>, tname: &str) {
    use crate::subspace::{eigen_with, EigenSolver, SolverRequest};
    let comm = c.comm;
    for (k, dim) in [1usize, 5, 33, 64, 100, 130].into_iter().enumerate() {
        let a = test_matrix::<T>(dim, dim, 100 + k as u64);
        // Hermitian H = A + A^H.
        let h = Mat::from_fn(dim, dim, |i, j| a[(i, j)] + a[(j, i)].cj());
        for n in [1, dim.div_ceil(2), dim] {
            let tag = format!("{tname} dim {dim} n {n}");
            let got = eigen_with(comm, h.as_ref(), n, CommClass::Band, EigenSolver::Scalapack);
            let want = eigen_with(comm, h.as_ref(), n, CommClass::Band, EigenSolver::Redundant);
            let (e, r) = match (got, want) {
                (Ok(e), Ok(r)) => (e, r),
                (Err(e), _) | (_, Err(e)) => {
                    c.failures.push(format!("scalapack eigen {tag}: {e}"));
                    continue;
                }
            };
            let v = Mat::from_fn(1, n, |_, j| T::from_f64(e.values[j]));
            // Eigenvalues relative to the largest one (not each: some are near zero).
            c.count += 1;
            let scale = r.values.iter().fold(0.0f64, |m, x| m.max(x.abs()));
            let dev = e
                .values
                .iter()
                .zip(&r.values)
                .fold(0.0f64, |m, (x, y)| m.max((x - y).abs()));
            if e.values.len() != n || dev.is_nan() || dev > TOLERANCE * scale.max(f64::MIN_POSITIVE)
            {
                c.failures.push(format!(
                    "rank {}: scalapack eigenvalues {tag}: deviation {dev:.2e} of {scale:.2e}",
                    comm.rank()
                ));
            }
            let hv = matmul(h.as_ref(), e.vectors.as_ref());
            let vw = Mat::from_fn(dim, n, |i, j| e.vectors[(i, j)].scale(e.values[j]));
            c.close(
                &format!("scalapack residual {tag}"),
                vw.as_ref(),
                hv.as_ref(),
            );
            let vhv = overlap(e.vectors.as_ref(), e.vectors.as_ref());
            let eye = Mat::from_fn(n, n, |i, j| T::from_f64(f64::from(u8::from(i == j))));
            c.close(
                &format!("scalapack orthonormality {tag}"),
                vhv.as_ref(),
                eye.as_ref(),
            );
            // Spectral projectors onto the n lowest (phase- and rotation-free).
            let proj = |x: MatRef<'_, T>| {
                let mut p = Mat::<T>::zeros(dim, dim);
                T::gemm_with(
                    crate::backend::Backend::Faer,
                    p.as_mut(),
                    false,
                    x,
                    false,
                    x,
                    true,
                );
                p
            };
            c.count += 1;
            let pe = rel_err(
                proj(e.vectors.as_ref()).as_ref(),
                proj(r.vectors.as_ref()).as_ref(),
            );
            if pe.is_nan() || pe > PROJECTOR_TOLERANCE {
                c.failures.push(format!(
                    "rank {}: scalapack projector {tag}: relative error {pe:.2e}",
                    comm.rank()
                ));
            }
            c.replicated(&format!("scalapack eigenvectors {tag}"), e.vectors.as_ref());
            c.replicated(&format!("scalapack eigenvalues {tag}"), v.as_ref());
        }
    }
    // The dispatcher: every request gives a valid answer on every size around the threshold
    // logic (the forced ScaLAPACK request included).
    let dim = 40;
    let a = test_matrix::<T>(dim, dim, 7);
    let h = Mat::from_fn(dim, dim, |i, j| a[(i, j)] + a[(j, i)].cj());
    let reference = crate::subspace::redundant_eigen(comm, h.as_ref(), 10, CommClass::Band);
    for req in [
        SolverRequest::Redundant,
        SolverRequest::Scalapack,
        SolverRequest::Auto,
    ] {
        let solver = crate::subspace::choose_eigen_solver(comm, dim, req);
        let tag = format!("dispatch {req:?} -> {solver:?} {tname}");
        match (
            eigen_with(comm, h.as_ref(), 10, CommClass::Band, solver),
            &reference,
        ) {
            (Ok(e), Ok(r)) => {
                let v = Mat::from_fn(1, 10, |_, j| T::from_f64(e.values[j]));
                let rv = Mat::from_fn(1, 10, |_, j| T::from_f64(r.values[j]));
                c.close(&tag, v.as_ref(), rv.as_ref());
            }
            (Err(e), _) => c.failures.push(format!("{tag}: {e}")),
            (_, Err(e)) => c.failures.push(format!("{tag} reference: {e}")),
        }
    }
}
