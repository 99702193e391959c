//! Iterative eigensolvers for the lowest bands of a Hamiltonian at one k-point, on blocks of bands.
//!
//! Contract: given H (anything that applies to a band block), a starting block X0 and a residual
//! tolerance, return the lowest `ncols(X0)` eigenpairs with ||H x - lambda x|| <= tol (or the best
//! found in `maxiter` iterations, flagged unconverged).

pub mod lobpcg;

use num_complex::Complex64;
use planewave_linalg::{Mat, MatMut, MatRef};

/// Something that applies a Hermitian operator to a block of vectors.
pub trait BlockOperator {
    /// Length of a vector.
    fn dim(&self) -> usize;
    /// `out = A x`.
    fn apply(&self, x: MatRef<'_, Complex64>, out: MatMut<'_, Complex64>);
    /// Diagonal kinetic energies for the preconditioner (length `dim()`).
    fn kinetic(&self) -> &[f64];
}

impl BlockOperator for crate::hamiltonian::KHamiltonian<'_> {
    fn dim(&self) -> usize {
        self.npw()
    }
    fn apply(&self, x: MatRef<'_, Complex64>, out: MatMut<'_, Complex64>) {
        crate::hamiltonian::KHamiltonian::apply(self, x, out)
    }
    fn kinetic(&self) -> &[f64] {
        crate::hamiltonian::KHamiltonian::kinetic(self)
    }
}

/// Result of an eigensolver call.
#[derive(Debug, Clone)]
pub struct EigenResult {
    /// Eigenvalues, ascending (Ha).
    pub values: Vec<f64>,
    /// Eigenvectors as columns (orthonormal).
    pub vectors: Mat<Complex64>,
    /// ||H x - lambda x|| for each pair.
    pub residual_norms: Vec<f64>,
    /// Iterations taken.
    pub iterations: usize,
    /// Number of single-vector operator applications.
    pub n_applications: usize,
    /// All residuals below the tolerance.
    pub converged: bool,
}
