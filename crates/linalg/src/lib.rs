//! planewave-linalg: dense kernels for the subspace operations of the eigensolvers.
//!
//! Contract: matrices are faer `Mat<c64>` in column-major layout; a block of bands is an
//! `npw x nbands` matrix whose columns are the bands. Default back end: faer (pure Rust).
//! The band-distributed (ring/systolic) forms and the LAPACK back end plug in behind these
//! functions (see DESIGN.md and the linalg issue).

mod dense;

pub use dense::{hermitian_eigen, matmul, matmul_into, overlap, HermitianEigen, LinalgError};
pub use faer::{c64, Mat, MatMut, MatRef};
