//! planewave-linalg: dense kernels and band-distributed subspace linear algebra.
//!
//! Contract: matrices are faer `Mat<T>` (column-major) with `T` a [`Scalar`]: `c64` for general
//! k-points, `f64` for the Γ-point real-wavefunction path. A block of bands is an `n x nbands`
//! matrix whose columns are the bands.
//!
//! - Dense kernels on one rank ([`dense`](mod@dense) functions, `Scalar::*_with`): GEMM with
//!   conjugate transposes, overlap, Cholesky, triangular inverse/multiply/solve, Hermitian
//!   eigensolver (all pairs or the lowest n). Back ends ([`Backend`]): faer (default, pure
//!   Rust) and, with the cargo feature `lapack`, the system OpenBLAS ([`openblas`] has its
//!   core-type and thread settings).
//! - Distributed blocks over a planewave-comm communicator: [`GDistBlock`] (each rank a slice
//!   of coefficient rows, all bands) and [`BandDistBlock`] (bands dealt round-robin, all
//!   coefficients), converted into each other by an all-to-all-v strategy. Subspace
//!   matrices (overlaps, rotations, Cholesky factors, eigenvectors) are replicated: every
//!   rank of the group holds the same bits ([`subspace`]). The subspace eigenproblem is
//!   solved redundantly or, with the cargo feature `scalapack` (implies `mpi`; Debian
//!   `libscalapack-openmpi-dev`) on an MPI group, over a 2-D block-cyclic grid through
//!   ScaLAPACK (`scalapack`, `blacs`, [`block_cyclic`]); [`subspace::eigen`] chooses.
//! - [`bench`](mod@bench): GFLOP/s tables; [`selfcheck`]: every distributed operation against
//!   its serial counterpart (used by the tests and the MPI check example).

mod backend;
mod band_dist;
pub mod bench;
#[cfg(feature = "scalapack")]
pub mod blacs;
pub mod block_cyclic;
pub mod dense;
mod faer_backend;
mod gdist;
#[cfg(feature = "lapack")]
mod lapack_backend;
pub mod openblas;
pub mod partition;
mod ring;
#[cfg(feature = "scalapack")]
pub mod scalapack;
mod scalar;
mod scratch;
pub mod selfcheck;
pub mod subspace;

pub use backend::{backend_from_env, default_backend, set_default_backend, Backend, BACKEND_ENV};
pub use band_dist::{
    overlap_stack, overlap_stack_with, rotate_stack, rotate_stack_into, rotate_upper_into,
    BandAlgorithm, BandDistBlock,
};
pub use dense::{
    cholesky, cholesky_orthonormalise, gemm, hermitian_eigen, hermitian_eigen_lowest, matmul,
    matmul_into, overlap, triangular_inverse, trmm_right, trsm_right, upper_matmul_acc,
    HermitianEigen,
};
pub use faer::{c64, Mat, MatMut, MatRef};
pub use gdist::GDistBlock;
pub use planewave_comm::ring::RingOrder;
pub use scalar::{LinalgError, Scalar};
pub use scratch::BandScratch;
