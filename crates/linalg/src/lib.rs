//! planewave-linalg: dense kernels for the subspace operations of the eigensolvers.
//!
//! Contract: matrices are faer `Mat<T>` (column-major) with `T` a [`Scalar`]: `c64` for general
//! k-points, `f64` for the Γ-point real-wavefunction path. A block of bands is an `n x nbands`
//! matrix whose columns are the bands. Default back end: faer (pure Rust). The band-distributed
//! (ring/systolic) forms and the LAPACK back end plug in behind these functions (see DESIGN.md
//! and the linalg issue).

mod dense;
mod scalar;

pub use dense::{hermitian_eigen, matmul, matmul_into, overlap, HermitianEigen};
pub use faer::{c64, Mat, MatMut, MatRef};
pub use scalar::{LinalgError, Scalar};
