//! Iterative eigensolvers for the lowest bands of a Hamiltonian at one k-point, on blocks of bands.
//!
//! Contract: given H (anything that applies to a band block), a starting block X0 and a residual
//! tolerance, return the lowest `ncols(X0)` eigenpairs with ||H x - lambda x|| <= tol (or the best
//! found in `maxiter` iterations, flagged unconverged).
//!
//! Vectors may be distributed by rows (plane waves over a G-vector group): the solver then works
//! on this rank's rows and completes every sum over rows (overlaps, norms) with
//! [`BlockOperator::sum_rows`]; the small dense problems go through
//! [`BlockOperator::small_eigen`] and [`BlockOperator::small_cholesky`], which on a G-vector group is planewave-linalg's subspace
//! solver (rank 0 solves and broadcasts, or ScaLAPACK over the group from
//! `SCALAPACK_MIN_DIM` on, chosen by size), so every rank keeps the same vectors bit for bit.

mod block;
mod block_pool;
pub mod davidson;
pub mod davidson_bands;
pub mod lobpcg;
#[cfg(test)]
mod testing;

pub use block::{orthonormalize, ritz_start};

use crate::bands::BandScalar;
use crate::hamiltonian::KHamiltonian;
use planewave_comm::{CommClass, Communicator, Element};
use planewave_linalg::{
    hermitian_eigen_lowest, BandAlgorithm, HermitianEigen, LinalgError, Mat, MatMut, MatRef, Scalar,
};
use std::sync::Arc;

/// Which iterative eigensolver the SCF uses (input `scf.eigensolver`, QE `diagonalization`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Eigensolver {
    /// [`lobpcg::lobpcg_with_min`].
    Lobpcg,
    /// [`davidson::davidson`] with a search space of `dim_factor` times the bands.
    Davidson {
        /// QE's `diago_david_ndim`.
        dim_factor: usize,
    },
}

impl Eigensolver {
    /// The solver an input names (`"lobpcg"` or `"davidson"`, the latter with a search space
    /// of `davidson_dim` times the bands); None for anything else.
    pub fn from_name(name: &str, davidson_dim: usize) -> Option<Self> {
        match name {
            "lobpcg" => Some(Self::Lobpcg),
            "davidson" => Some(Self::Davidson {
                dim_factor: davidson_dim,
            }),
            _ => None,
        }
    }

    /// Blocks of nbands vectors the solver holds while it works (besides the caller's bands):
    /// Davidson V and A V of `dim_factor` blocks each, kept between calls by the SCF, and one
    /// more for the starting bands, which it keeps alongside them to return its vectors in
    /// (before the space was kept, the starting block was freed once copied: si64 Γ's peak RSS
    /// rose by one block, 264 to 289 MiB); LOBPCG [X|W|P], its image and a 2-block scratch.
    pub fn workspace_blocks(self) -> usize {
        match self {
            Self::Lobpcg => 8,
            Self::Davidson { dim_factor } => 2 * dim_factor + 1,
        }
    }

    /// Lowest `ncols(x0)` eigenpairs of `op` to residual norm `tol` within `maxiter`
    /// iterations, at least `min_iterations` on bands above `tol / 100`. Bands from
    /// `n_occupied` on are empty: Davidson converges them to [`EMPTY_TOL_FACTOR`] `* tol` (as
    /// QE loosens `ethr` for empty bands), and in an SCF step (`min_iterations > 0`) makes at
    /// most [`davidson::EMPTY_ONLY_ITERATIONS`] iterations on them alone once the occupied
    /// bands are converged; LOBPCG treats every band alike. Davidson keeps its search space in
    /// `ws` between calls.
    #[allow(clippy::too_many_arguments)]
    pub fn solve<T: Scalar>(
        self,
        op: &impl BlockOperator<T>,
        x0: Mat<T>,
        tol: f64,
        n_occupied: usize,
        min_iterations: usize,
        maxiter: usize,
        ws: &mut davidson::Workspace<T>,
    ) -> EigenResult<T> {
        match self {
            Self::Lobpcg => lobpcg::lobpcg_with_min(op, x0, tol, min_iterations, maxiter),
            Self::Davidson { dim_factor } => {
                let tols = davidson::Tolerances {
                    occupied: tol,
                    n_occupied,
                    empty_only: (min_iterations > 0).then_some(davidson::EMPTY_ONLY_ITERATIONS),
                };
                davidson::davidson_in(ws, op, x0, tols, (min_iterations, maxiter, dim_factor))
            }
        }
    }
}

impl Eigensolver {
    /// [`Eigensolver::solve`] with the bands dealt over the band group `band` (`x0`: this
    /// rank's columns of `nb` bands; the result's vectors likewise), their products formed by
    /// `algo`, at least `min_iterations` iterations (the empty bands treated as there); `grid`
    /// is every rank of the k-point group (band x G), over which the subspace eigenproblems
    /// are solved. Only Davidson has a band-distributed form. Collective over `grid`.
    #[allow(clippy::too_many_arguments)]
    pub fn solve_bands<T: Scalar>(
        self,
        op: &impl BlockOperator<T>,
        (band, grid, algo): (
            &Arc<dyn Communicator>,
            &Arc<dyn Communicator>,
            BandAlgorithm,
        ),
        x0: Mat<T>,
        nb: usize,
        tol: f64,
        n_occupied: usize,
        (min_iterations, maxiter): (usize, usize),
    ) -> Result<EigenResult<T>, String> {
        let Self::Davidson { dim_factor } = self else {
            return Err(
                "LOBPCG works on whole bands only: use the Davidson eigensolver with band groups"
                    .into(),
            );
        };
        let tols = davidson::Tolerances {
            occupied: tol,
            n_occupied,
            empty_only: (min_iterations > 0).then_some(davidson::EMPTY_ONLY_ITERATIONS),
        };
        Ok(davidson_bands::davidson_bands(
            op,
            (band, grid),
            algo,
            x0,
            nb,
            tols,
            min_iterations,
            maxiter,
            dim_factor,
        ))
    }
}

/// Residual tolerance of the empty bands relative to the occupied ones: they do not enter the
/// density, and converging them as tightly cost 15% more Davidson iterations on si8 (QE uses a
/// looser `ethr` for them too).
pub const EMPTY_TOL_FACTOR: f64 = 10.0;

/// Something that applies a Hermitian operator to a block of vectors.
pub trait BlockOperator<T: Scalar> {
    /// Length of this rank's part of a vector.
    fn dim(&self) -> usize;
    /// Length of a whole vector (over all ranks).
    fn global_dim(&self) -> usize {
        self.dim()
    }
    /// Complete sums over vector components: each rank's partial sums become the totals on
    /// every rank (nothing to do when vectors are not distributed). Collective.
    fn sum_rows<E: Element>(&self, _partial: &mut [E]) {}
    /// The lowest `n` eigenpairs of a small Hermitian matrix (lower triangle read) built from
    /// summed rows, identical on every rank that shares the vectors. Collective.
    fn small_eigen(&self, h: MatRef<'_, T>, n: usize) -> Result<HermitianEigen<T>, LinalgError> {
        hermitian_eigen_lowest(h, n)
    }
    /// The Cholesky factor `L` of a small Hermitian positive definite matrix built from summed
    /// rows (`s = L L^H`), identical on every rank that shares the vectors. Collective.
    fn small_cholesky(&self, s: MatRef<'_, T>) -> Result<Mat<T>, LinalgError> {
        planewave_linalg::cholesky(s)
    }
    /// `out = A x`.
    fn apply(&self, x: MatRef<'_, T>, out: MatMut<'_, T>);
    /// Diagonal kinetic energies for the preconditioner (length `dim()`).
    fn kinetic(&self) -> &[f64];
    /// An approximation of the operator's diagonal for the preconditioner (length `dim()`);
    /// the kinetic energies unless the operator knows better. Collective.
    fn diagonal(&self) -> Vec<f64> {
        self.kinetic().to_vec()
    }
}

impl<T: BandScalar> BlockOperator<T> for KHamiltonian<'_, T> {
    fn dim(&self) -> usize {
        KHamiltonian::dim(self)
    }
    fn global_dim(&self) -> usize {
        self.kpt.global_dim()
    }
    fn sum_rows<E: Element>(&self, partial: &mut [E]) {
        self.kpt.sum_over_g(partial)
    }
    fn small_eigen(&self, h: MatRef<'_, T>, n: usize) -> Result<HermitianEigen<T>, LinalgError> {
        self.time_subspace(|| match &self.kpt.dist {
            Some(d) => planewave_linalg::subspace::eigen(&**d.comm(), h, n, CommClass::GVector),
            None => hermitian_eigen_lowest(h, n),
        })
    }
    fn small_cholesky(&self, s: MatRef<'_, T>) -> Result<Mat<T>, LinalgError> {
        self.time_subspace(|| match &self.kpt.dist {
            Some(d) => planewave_linalg::subspace::redundant_cholesky(
                &**d.comm(),
                s,
                false,
                CommClass::GVector,
            )
            .map(|(l, _)| l),
            None => planewave_linalg::cholesky(s),
        })
    }
    /// With an overlap S, the standard problem `S^{-1/2} H S^{-1/2}` (see
    /// [`crate::overlap`]; the caller turns bands into `S^{1/2} psi` and back).
    fn apply(&self, x: MatRef<'_, T>, out: MatMut<'_, T>) {
        KHamiltonian::apply_orthonormal(self, x, out)
    }
    fn kinetic(&self) -> &[f64] {
        &self.kpt.kinetic
    }
    fn diagonal(&self) -> Vec<f64> {
        KHamiltonian::diagonal(self)
    }
}

/// Result of an eigensolver call.
#[derive(Debug, Clone)]
pub struct EigenResult<T: Scalar> {
    /// Eigenvalues, ascending (Ha).
    pub values: Vec<f64>,
    /// Eigenvectors as columns (orthonormal).
    pub vectors: Mat<T>,
    /// ||H x - lambda x|| for each pair.
    pub residual_norms: Vec<f64>,
    /// Iterations taken.
    pub iterations: usize,
    /// Number of single-vector operator applications.
    pub n_applications: usize,
    /// All residuals below the tolerance.
    pub converged: bool,
}
