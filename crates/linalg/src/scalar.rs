//! `Scalar`: the element types of band blocks — `c64` for general k-points and `f64` for the
//! Γ-point real-wavefunction path — with the dense kernels each needs.
//!
//! Contract: every kernel exists in an explicit-back-end form (`*_with(Backend, ..)`); the
//! short forms (`overlap`, `matmul_into`, `hermitian_eigen`) use
//! [`default_backend`](crate::default_backend). Triangular kernels take a lower triangular
//! `L` (only its lower triangle is read) and apply `op(L)` = `L` or `L^H` from the right,
//! which covers upper triangular factors as `U = L^H`. The element type is also a
//! communicator [`Element`], so blocks travel through planewave-comm.

use crate::backend::{default_backend, Backend};
use crate::faer_backend as fb;
#[cfg(feature = "lapack")]
use crate::lapack_backend as lb;
use faer::{c64, Mat, MatMut, MatRef};
use planewave_comm::Element;
use std::fmt::Debug;
use std::ops::{Add, AddAssign, Mul, MulAssign, Neg, Sub, SubAssign};

/// A dense kernel failed (the eigensolver did not converge, a matrix was not positive
/// definite).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LinalgError(pub String);

impl std::fmt::Display for LinalgError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "dense linear algebra failed: {}", self.0)
    }
}
impl std::error::Error for LinalgError {}

/// Real or complex double precision with the kernels of the subspace algorithms.
pub trait Scalar:
    faer::traits::ComplexField
    + Element
    + Copy
    + Send
    + Sync
    + Debug
    + 'static
    + Add<Output = Self>
    + Sub<Output = Self>
    + Mul<Output = Self>
    + Neg<Output = Self>
    + AddAssign
    + SubAssign
    + MulAssign
{
    /// The value `x + 0i`.
    fn from_f64(x: f64) -> Self;
    /// The value `re + im i` (`im` is dropped for reals).
    fn from_re_im(re: f64, im: f64) -> Self;
    /// Complex conjugate (identity for reals).
    fn cj(self) -> Self;
    /// |x|^2.
    fn abs2(self) -> f64;
    /// Real part.
    fn real(self) -> f64;
    /// `x * s` for a real `s`.
    fn scale(self, s: f64) -> Self;
    /// Multiply-adds per flop-counted operation: 8 real flops per complex multiply-add, 2 per
    /// real one (used by benchmarks).
    const FLOPS_PER_FMA: f64;

    /// `A^H B` (default back end).
    fn overlap(a: MatRef<'_, Self>, b: MatRef<'_, Self>) -> Mat<Self> {
        let mut s = Mat::<Self>::zeros(a.ncols(), b.ncols());
        Self::gemm_with(default_backend(), s.as_mut(), false, a, true, b, false);
        s
    }
    /// `C = A B` or `C += A B` (default back end).
    fn matmul_into(
        c: MatMut<'_, Self>,
        a: MatRef<'_, Self>,
        b: MatRef<'_, Self>,
        accumulate: bool,
    ) {
        Self::gemm_with(default_backend(), c, accumulate, a, false, b, false)
    }
    /// Eigenvalues (ascending) and eigenvectors of a Hermitian matrix (lower triangle read;
    /// default back end).
    fn hermitian_eigen(h: MatRef<'_, Self>) -> Result<(Vec<f64>, Mat<Self>), LinalgError> {
        Self::hermitian_eigen_with(default_backend(), h)
    }

    /// `C = op(A) op(B)` or, with `accumulate`, `C += op(A) op(B)`; `op` is the conjugate
    /// transpose where `adj_*` is set.
    fn gemm_with(
        be: Backend,
        c: MatMut<'_, Self>,
        accumulate: bool,
        a: MatRef<'_, Self>,
        adj_a: bool,
        b: MatRef<'_, Self>,
        adj_b: bool,
    );
    /// Lower Cholesky factor `L` of the Hermitian positive definite `h = L L^H` (lower
    /// triangle of `h` read; the strict upper part of `L` is zero).
    fn cholesky_with(be: Backend, h: MatRef<'_, Self>) -> Result<Mat<Self>, LinalgError>;
    /// Inverse of the invertible lower triangular `l` (lower triangular).
    fn tri_inverse_with(be: Backend, l: MatRef<'_, Self>) -> Mat<Self>;
    /// Triangular multiply `X <- X op(L)`.
    fn trmm_right_with(be: Backend, x: MatMut<'_, Self>, l: MatRef<'_, Self>, adj: bool);
    /// Triangular solve `X <- X op(L)^-1`.
    fn trsm_right_with(be: Backend, x: MatMut<'_, Self>, l: MatRef<'_, Self>, adj: bool);
    /// `C += A triu(U)` for a square `U` (`strict`: its strict upper triangle only) — the
    /// triangular form of a rotation, about half the flops of a general one.
    fn upper_matmul_acc_with(
        be: Backend,
        c: MatMut<'_, Self>,
        a: MatRef<'_, Self>,
        u: MatRef<'_, Self>,
        strict: bool,
    );
    /// All eigenpairs of a Hermitian matrix (lower triangle read), values ascending.
    fn hermitian_eigen_with(
        be: Backend,
        h: MatRef<'_, Self>,
    ) -> Result<(Vec<f64>, Mat<Self>), LinalgError>;
}

/// Dispatch to the back end's function of the same name.
macro_rules! dispatch {
    ($be:expr, $f:ident($($arg:expr),*)) => {
        match $be {
            Backend::Faer => fb::$f($($arg),*),
            #[cfg(feature = "lapack")]
            Backend::Lapack => lb::$f($($arg),*),
        }
    };
}

macro_rules! impl_kernels {
    () => {
        fn gemm_with(
            be: Backend,
            c: MatMut<'_, Self>,
            accumulate: bool,
            a: MatRef<'_, Self>,
            adj_a: bool,
            b: MatRef<'_, Self>,
            adj_b: bool,
        ) {
            dispatch!(be, gemm(c, accumulate, a, adj_a, b, adj_b))
        }
        fn cholesky_with(be: Backend, h: MatRef<'_, Self>) -> Result<Mat<Self>, LinalgError> {
            dispatch!(be, cholesky(h))
        }
        fn tri_inverse_with(be: Backend, l: MatRef<'_, Self>) -> Mat<Self> {
            dispatch!(be, tri_inverse(l))
        }
        fn trmm_right_with(be: Backend, x: MatMut<'_, Self>, l: MatRef<'_, Self>, adj: bool) {
            dispatch!(be, trmm_right(x, l, adj))
        }
        fn trsm_right_with(be: Backend, x: MatMut<'_, Self>, l: MatRef<'_, Self>, adj: bool) {
            dispatch!(be, trsm_right(x, l, adj))
        }
        fn upper_matmul_acc_with(
            be: Backend,
            c: MatMut<'_, Self>,
            a: MatRef<'_, Self>,
            u: MatRef<'_, Self>,
            strict: bool,
        ) {
            dispatch!(be, upper_matmul_acc(c, a, u, strict))
        }
        fn hermitian_eigen_with(
            be: Backend,
            h: MatRef<'_, Self>,
        ) -> Result<(Vec<f64>, Mat<Self>), LinalgError> {
            dispatch!(be, hermitian_eigen(h))
        }
    };
}

impl Scalar for f64 {
    const FLOPS_PER_FMA: f64 = 2.0;
    #[inline]
    fn from_f64(x: f64) -> Self {
        x
    }
    #[inline]
    fn from_re_im(re: f64, _im: f64) -> Self {
        re
    }
    #[inline]
    fn cj(self) -> Self {
        self
    }
    #[inline]
    fn abs2(self) -> f64 {
        self * self
    }
    #[inline]
    fn real(self) -> f64 {
        self
    }
    #[inline]
    fn scale(self, s: f64) -> Self {
        self * s
    }
    impl_kernels!();
}

impl Scalar for c64 {
    const FLOPS_PER_FMA: f64 = 8.0;
    #[inline]
    fn from_f64(x: f64) -> Self {
        c64::new(x, 0.0)
    }
    #[inline]
    fn from_re_im(re: f64, im: f64) -> Self {
        c64::new(re, im)
    }
    #[inline]
    fn cj(self) -> Self {
        self.conj()
    }
    #[inline]
    fn abs2(self) -> f64 {
        self.norm_sqr()
    }
    #[inline]
    fn real(self) -> f64 {
        self.re
    }
    #[inline]
    fn scale(self, s: f64) -> Self {
        self * s
    }
    impl_kernels!();
}
