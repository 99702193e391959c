//! Replicated subspace matrices: the small (nbands x nbands) problems every rank of a group
//! needs the same answer to.
//!
//! Contract: [`redundant_eigen`] and [`redundant_cholesky`] solve on rank 0 and broadcast, so
//! every rank gets bit-identical results even when ranks run with different thread counts
//! (faer's threaded kernels need not give the same bits for different rayon pools, and MPI
//! ranks on different nodes may have different pools). A failure on rank 0 (not positive
//! definite, no convergence) is broadcast too and returned as an error on every rank. The
//! input matrix is taken from rank 0 (other ranks' copies are only checked for shape).
//!
//! [`eigen`] is the entry point the eigensolvers use: it dispatches to [`redundant_eigen`] or,
//! with the cargo feature `scalapack` on an MPI group, to ScaLAPACK over a 2-D block-cyclic
//! grid (`scalapack::scalapack_eigen`, built only with the feature), both with the same
//! contract. The choice ([`choose_eigen_solver`]) depends only on the matrix dimension, the
//! group and [`SUBSPACE_SOLVER_ENV`], so every rank makes the same one. ELPA is not
//! implemented.

use crate::dense::{hermitian_eigen_lowest, HermitianEigen};
use crate::partition::{mat_to_vec, vec_to_mat};
#[cfg(feature = "scalapack")]
use crate::scalapack::scalapack_eigen;
use crate::scalar::{LinalgError, Scalar};
use faer::{Mat, MatRef};
use planewave_comm::{CommClass, CommExt, Communicator, Operation};
use std::sync::atomic::{AtomicU8, Ordering};

/// Copy rank `root`'s `m` to every rank (every rank passes a matrix of the same shape).
pub fn broadcast_mat<T: Scalar>(
    comm: &dyn Communicator,
    m: &mut Mat<T>,
    root: usize,
    class: CommClass,
) {
    if comm.size() == 1 {
        return;
    }
    let mut v = mat_to_vec(m.as_ref());
    comm.broadcast(&mut v, root, class);
    *m = vec_to_mat(&v, m.nrows(), m.ncols());
}

/// Broadcast rank 0's outcome: `Ok` when it succeeded, its message otherwise.
fn broadcast_status(
    comm: &dyn Communicator,
    status: Result<(), LinalgError>,
    class: CommClass,
) -> Result<(), LinalgError> {
    let mut flag = [u64::from(status.is_err())];
    comm.broadcast(&mut flag, 0, class);
    match (flag[0], status) {
        (0, _) => Ok(()),
        (_, Err(e)) => Err(e),
        (_, Ok(())) => Err(LinalgError("failed on rank 0 of the group".into())),
    }
}

/// The lowest `n` eigenpairs of the Hermitian `h` (lower triangle read), identical on every
/// rank.
pub fn redundant_eigen<T: Scalar>(
    comm: &dyn Communicator,
    h: MatRef<'_, T>,
    n: usize,
    class: CommClass,
) -> Result<HermitianEigen<T>, LinalgError> {
    let dim = h.nrows();
    let n = n.min(dim);
    let mut out = HermitianEigen {
        values: vec![0.0; n],
        vectors: Mat::zeros(dim, n),
    };
    let status = if comm.rank() == 0 {
        hermitian_eigen_lowest(h, n).map(|e| out = e)
    } else {
        Ok(())
    };
    broadcast_status(comm, status, class)?;
    if comm.size() > 1 {
        comm.broadcast(&mut out.values, 0, class);
        broadcast_mat(comm, &mut out.vectors, 0, class);
    }
    Ok(out)
}

/// Cholesky factor `L` of the Hermitian positive definite `s = L L^H` and, with `inverse`,
/// also `L^-1`; identical on every rank.
pub fn redundant_cholesky<T: Scalar>(
    comm: &dyn Communicator,
    s: MatRef<'_, T>,
    inverse: bool,
    class: CommClass,
) -> Result<(Mat<T>, Option<Mat<T>>), LinalgError> {
    let _op = comm.operation(Operation::Subspace);
    let n = s.nrows();
    let mut l = Mat::<T>::zeros(n, n);
    let mut inv = inverse.then(|| Mat::<T>::zeros(n, n));
    let status = if comm.rank() == 0 {
        crate::dense::cholesky(s).map(|f| {
            if let Some(i) = inv.as_mut() {
                *i = crate::dense::triangular_inverse(f.as_ref());
            }
            l = f;
        })
    } else {
        Ok(())
    };
    broadcast_status(comm, status, class)?;
    broadcast_mat(comm, &mut l, 0, class);
    if let Some(i) = inv.as_mut() {
        broadcast_mat(comm, i, 0, class);
    }
    Ok((l, inv))
}

/// The environment variable from which programs take the subspace solver request
/// (`redundant`, `scalapack` or `auto`, the default; [`set_solver_request`]). Must be the same
/// on every rank (mpirun forwards the environment).
pub const SUBSPACE_SOLVER_ENV: &str = "PLANEWAVE_SUBSPACE_SOLVER";

/// Smallest dimension for which `auto` solves with ScaLAPACK (groups of 2 or more MPI ranks,
/// feature `scalapack`); below it the redundant solve is used.
///
/// Measured crossover (`linalg_eigen_bench` example; c64, all eigenpairs; seconds per solve,
/// best of repetitions filling 0.5 s, slowest rank, scatter/gather included). "faer"/"zheevd" =
/// redundant (rank 0 solves with faer / OpenBLAS `zheevd` on its one core, then broadcasts);
/// "pzheevd" = ScaLAPACK, block 32, on the most square grid (np 1: 1x1, np 2: 1x2). Debian
/// ScaLAPACK 2.2.1 on OpenBLAS 0.3.21 (`OPENBLAS_CORETYPE=SkylakeX`, `OPENBLAS_NUM_THREADS=1`),
/// OpenMPI 4.1 binding one core per rank, on an otherwise idle 2-core machine (2026-11-22):
///
/// ```text
///  dim |   np1 faer  zheevd pzheevd |   np2 faer  zheevd pzheevd
///   64 |                            |    0.00092 0.00094 0.00151
///  256 |    0.0143  0.0164  0.0172  |    0.0194  0.0247  0.0178
///  384 |                            |    0.0514  0.0791  0.0450
///  512 |    0.105   0.202   0.145   |    0.117   0.210   0.106
///  768 |                            |    0.389   0.565   0.200
/// 1024 |    0.795   1.51    0.711   |    0.840   1.67    0.589
/// 1536 |                            |    2.26    5.31    1.49
/// ```
///
/// Reading: on 2 ranks ScaLAPACK ties the redundant faer solve at 256 and is ahead from 384
/// (1.1x at 512, 1.9x at 768, 1.4-1.5x at 1024-1536); below 256 its latency-bound
/// tridiagonalisation and the scatter/gather lose. The threshold is 512, where it wins in every
/// measurement on an idle machine (an earlier one on a loaded machine, where ScaLAPACK's ranks
/// wait on descheduled peers, had it 1.1x behind at 512 and level from 768 on). More ranks per
/// group should lower the crossover; measure it on the target machine with the example and
/// override with [`set_solver_request`].
pub const SCALAPACK_MIN_DIM: usize = 512;

/// Which solver [`eigen`] runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EigenSolver {
    /// [`redundant_eigen`]: rank 0 solves, then broadcasts.
    Redundant,
    /// ScaLAPACK over a block-cyclic grid of the group (feature `scalapack`, MPI group).
    Scalapack,
}

/// Which solver [`eigen`] should run: the process-wide request ([`set_solver_request`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SolverRequest {
    /// Always redundant.
    Redundant,
    /// ScaLAPACK wherever it is available (MPI group, feature `scalapack`), redundant elsewhere.
    Scalapack,
    /// ScaLAPACK for dimensions from [`SCALAPACK_MIN_DIM`] on groups of two or more ranks.
    Auto,
}

impl SolverRequest {
    /// Parse `redundant`, `scalapack` or `auto` (case-insensitive).
    pub fn parse(s: &str) -> Result<SolverRequest, LinalgError> {
        match s.trim().to_ascii_lowercase().as_str() {
            "redundant" => Ok(SolverRequest::Redundant),
            "scalapack" => Ok(SolverRequest::Scalapack),
            "auto" | "" => Ok(SolverRequest::Auto),
            other => Err(LinalgError(format!(
                "{SUBSPACE_SOLVER_ENV}={other:?}: expected redundant, scalapack or auto"
            ))),
        }
    }
    /// The request named in [`SUBSPACE_SOLVER_ENV`] (`Auto` when unset), for programs.
    pub fn from_env() -> Result<SolverRequest, LinalgError> {
        match std::env::var(SUBSPACE_SOLVER_ENV) {
            Ok(s) => SolverRequest::parse(&s),
            Err(_) => Ok(SolverRequest::Auto),
        }
    }
    /// The process-wide request: the one set with [`set_solver_request`], else `Auto`.
    pub fn current() -> SolverRequest {
        match REQUEST.load(Ordering::Relaxed) {
            1 => SolverRequest::Redundant,
            2 => SolverRequest::Scalapack,
            _ => SolverRequest::Auto,
        }
    }
}

/// 0: auto; 1: redundant; 2: scalapack.
static REQUEST: AtomicU8 = AtomicU8::new(0);

/// Set the process-wide subspace solver request (the same on every rank).
pub fn set_solver_request(r: SolverRequest) {
    let code = match r {
        SolverRequest::Auto => 0,
        SolverRequest::Redundant => 1,
        SolverRequest::Scalapack => 2,
    };
    REQUEST.store(code, Ordering::Relaxed);
}

/// Whether the distributed solve can run on `comm`: feature `scalapack` and an MPI group.
pub fn scalapack_available(comm: &dyn Communicator) -> bool {
    #[cfg(feature = "scalapack")]
    {
        crate::blacs::as_mpi(comm).is_some()
    }
    #[cfg(not(feature = "scalapack"))]
    {
        let _ = comm;
        false
    }
}

/// The solver for a `dim x dim` problem on `comm` under `request` (same on every rank).
pub fn choose_eigen_solver(
    comm: &dyn Communicator,
    dim: usize,
    request: SolverRequest,
) -> EigenSolver {
    let available = scalapack_available(comm);
    match request {
        SolverRequest::Scalapack if available && dim > 0 => EigenSolver::Scalapack,
        SolverRequest::Auto if available && comm.size() > 1 && dim >= SCALAPACK_MIN_DIM => {
            EigenSolver::Scalapack
        }
        _ => EigenSolver::Redundant,
    }
}

/// What [`eigen`] runs on `comm` under the current request, in words (for reports).
pub fn describe_eigen_solver(comm: &dyn Communicator) -> String {
    let request = SolverRequest::current();
    let available = scalapack_available(comm);
    match request {
        SolverRequest::Scalapack if available => "ScaLAPACK".into(),
        SolverRequest::Auto if available && comm.size() > 1 => {
            format!("redundant below dimension {SCALAPACK_MIN_DIM}, ScaLAPACK from it")
        }
        _ => "redundant (rank 0 solves, broadcasts)".into(),
    }
}

/// The lowest `n` eigenpairs of the Hermitian `h` (lower triangle read), identical on every
/// rank, by the solver [`choose_eigen_solver`] picks under the current request
/// ([`SolverRequest::current`]).
pub fn eigen<T: Scalar>(
    comm: &dyn Communicator,
    h: MatRef<'_, T>,
    n: usize,
    class: CommClass,
) -> Result<HermitianEigen<T>, LinalgError> {
    let request = SolverRequest::current();
    eigen_with(
        comm,
        h,
        n,
        class,
        choose_eigen_solver(comm, h.nrows(), request),
    )
}

/// [`eigen`] with an explicit solver; [`EigenSolver::Scalapack`] without the feature or off
/// MPI is an error.
pub fn eigen_with<T: Scalar>(
    comm: &dyn Communicator,
    h: MatRef<'_, T>,
    n: usize,
    class: CommClass,
    solver: EigenSolver,
) -> Result<HermitianEigen<T>, LinalgError> {
    let _op = comm.operation(Operation::Subspace);
    match solver {
        EigenSolver::Redundant => redundant_eigen(comm, h, n, class),
        #[cfg(feature = "scalapack")]
        EigenSolver::Scalapack => scalapack_eigen(comm, h, n, class),
        #[cfg(not(feature = "scalapack"))]
        EigenSolver::Scalapack => Err(LinalgError(
            "the ScaLAPACK eigensolver needs planewave-linalg's feature `scalapack`".into(),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use planewave_comm::Solo;

    #[test]
    fn solver_request_parses_and_rejects() {
        assert_eq!(
            SolverRequest::parse("ScaLAPACK"),
            Ok(SolverRequest::Scalapack)
        );
        assert_eq!(
            SolverRequest::parse("redundant"),
            Ok(SolverRequest::Redundant)
        );
        assert_eq!(SolverRequest::parse("auto"), Ok(SolverRequest::Auto));
        assert!(SolverRequest::parse("elpa").is_err());
    }

    #[test]
    fn non_mpi_groups_always_solve_redundantly() {
        let solo = Solo;
        for r in [
            SolverRequest::Redundant,
            SolverRequest::Scalapack,
            SolverRequest::Auto,
        ] {
            assert_eq!(choose_eigen_solver(&solo, 4096, r), EigenSolver::Redundant);
        }
        let h = crate::selfcheck::test_matrix::<f64>(3, 3, 1);
        let e = eigen_with(
            &solo,
            h.as_ref(),
            3,
            CommClass::Other,
            EigenSolver::Scalapack,
        );
        assert!(e.is_err());
    }
}
