//! `Scalar`: the element types of band blocks — `c64` for general k-points and `f64` for the
//! Γ-point real-wavefunction path — with the dense kernels each needs.

use faer::linalg::matmul::matmul as faer_matmul;
use faer::{c64, Accum, Mat, MatMut, MatRef, Par, Side};
use std::fmt::Debug;
use std::ops::{Add, AddAssign, Mul, MulAssign, Neg, Sub, SubAssign};

/// A dense kernel failed (the eigensolver did not converge).
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
    /// Complex conjugate (identity for reals).
    fn cj(self) -> Self;
    /// |x|^2.
    fn abs2(self) -> f64;
    /// Real part.
    fn real(self) -> f64;
    /// `x * s` for a real `s`.
    fn scale(self, s: f64) -> Self;
    /// `A^H B`.
    fn overlap(a: MatRef<'_, Self>, b: MatRef<'_, Self>) -> Mat<Self>;
    /// `C = A B` or `C += A B`.
    fn matmul_into(c: MatMut<'_, Self>, a: MatRef<'_, Self>, b: MatRef<'_, Self>, accumulate: bool);
    /// Eigenvalues (ascending) and eigenvectors of a Hermitian matrix (lower triangle read).
    fn hermitian_eigen(h: MatRef<'_, Self>) -> Result<(Vec<f64>, Mat<Self>), LinalgError>;
}

/// Parallelism for a product of `flops` multiply-adds: threads only pay off on large products
/// (below ~4M multiply-adds the synchronisation costs more than it saves).
fn par(flops: usize) -> Par {
    match std::thread::available_parallelism() {
        Ok(n) if n.get() > 1 && flops >= 1 << 18 => Par::rayon(0),
        _ => Par::Seq,
    }
}

fn accum(accumulate: bool) -> Accum {
    if accumulate {
        Accum::Add
    } else {
        Accum::Replace
    }
}

macro_rules! impl_kernels {
    ($t:ty, $one:expr) => {
        fn overlap(a: MatRef<'_, Self>, b: MatRef<'_, Self>) -> Mat<Self> {
            let mut s = Mat::<$t>::zeros(a.ncols(), b.ncols());
            let flops = a.nrows() * a.ncols() * b.ncols();
            faer_matmul(s.as_mut(), Accum::Replace, a.adjoint(), b, $one, par(flops));
            s
        }
        fn matmul_into(
            c: MatMut<'_, Self>,
            a: MatRef<'_, Self>,
            b: MatRef<'_, Self>,
            accumulate: bool,
        ) {
            let flops = a.nrows() * a.ncols() * b.ncols();
            faer_matmul(c, accum(accumulate), a, b, $one, par(flops));
        }
        fn hermitian_eigen(h: MatRef<'_, Self>) -> Result<(Vec<f64>, Mat<Self>), LinalgError> {
            let evd = h
                .self_adjoint_eigen(Side::Lower)
                .map_err(|e| LinalgError(format!("Hermitian eigensolver: {e:?}")))?;
            let s = evd.S().column_vector();
            let n = h.nrows();
            let mut order: Vec<usize> = (0..n).collect();
            order.sort_by(|&i, &j| s[i].real().total_cmp(&s[j].real()));
            let u = evd.U();
            let values = order.iter().map(|&i| s[i].real()).collect();
            let vectors = Mat::from_fn(n, n, |r, c| u[(r, order[c])]);
            Ok((values, vectors))
        }
    };
}

impl Scalar for f64 {
    fn from_f64(x: f64) -> Self {
        x
    }
    fn cj(self) -> Self {
        self
    }
    fn abs2(self) -> f64 {
        self * self
    }
    fn real(self) -> f64 {
        self
    }
    fn scale(self, s: f64) -> Self {
        self * s
    }
    impl_kernels!(f64, 1.0);
}

impl Scalar for c64 {
    fn from_f64(x: f64) -> Self {
        c64::new(x, 0.0)
    }
    fn cj(self) -> Self {
        self.conj()
    }
    fn abs2(self) -> f64 {
        self.norm_sqr()
    }
    fn real(self) -> f64 {
        self.re
    }
    fn scale(self, s: f64) -> Self {
        self * s
    }
    impl_kernels!(c64, c64::new(1.0, 0.0));
}
