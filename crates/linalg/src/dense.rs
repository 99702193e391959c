//! Dense kernels on one rank, generic over [`Scalar`] (f64 for Γ, c64 otherwise), on the
//! default back end ([`default_backend`]); the `Scalar::*_with` methods take it explicitly.
//!
//! Contract: matrices are column-major faer matrices; triangular arguments are lower
//! triangular (strict upper part ignored) and applied from the right as `op(L)` = `L` or
//! `L^H`. Eigenvalues come ascending. The lowest-n eigensolver computes every pair and keeps
//! the first n (neither faer nor the `zheevd` path has a partial solver).

use crate::backend::default_backend;
use crate::scalar::{LinalgError, Scalar};
use faer::{Mat, MatMut, MatRef};

/// `A^H B` (the overlap of two band blocks).
pub fn overlap<T: Scalar>(a: MatRef<'_, T>, b: MatRef<'_, T>) -> Mat<T> {
    T::overlap(a, b)
}

/// `A B` (e.g. the rotation of a band block by a subspace matrix).
pub fn matmul<T: Scalar>(a: MatRef<'_, T>, b: MatRef<'_, T>) -> Mat<T> {
    let mut c = Mat::<T>::zeros(a.nrows(), b.ncols());
    T::matmul_into(c.as_mut(), a, b, false);
    c
}

/// `C = A B` or, with `accumulate`, `C += A B`.
pub fn matmul_into<T: Scalar>(
    c: MatMut<'_, T>,
    a: MatRef<'_, T>,
    b: MatRef<'_, T>,
    accumulate: bool,
) {
    T::matmul_into(c, a, b, accumulate)
}

/// Eigenpairs of a Hermitian matrix, eigenvalues ascending.
#[derive(Debug, Clone)]
pub struct HermitianEigen<T: Scalar> {
    /// Eigenvalues in ascending order.
    pub values: Vec<f64>,
    /// Eigenvectors as columns, in the order of `values`.
    pub vectors: Mat<T>,
}

/// All eigenpairs of the Hermitian matrix `h` (only its lower triangle is read).
pub fn hermitian_eigen<T: Scalar>(h: MatRef<'_, T>) -> Result<HermitianEigen<T>, LinalgError> {
    let (values, vectors) = T::hermitian_eigen(h)?;
    Ok(HermitianEigen { values, vectors })
}

/// The lowest `n` eigenpairs of the Hermitian matrix `h` (all of them computed, see above).
pub fn hermitian_eigen_lowest<T: Scalar>(
    h: MatRef<'_, T>,
    n: usize,
) -> Result<HermitianEigen<T>, LinalgError> {
    let (mut values, vectors) = T::hermitian_eigen(h)?;
    let n = n.min(values.len());
    values.truncate(n);
    Ok(HermitianEigen {
        values,
        vectors: vectors.subcols(0, n).to_owned(),
    })
}

/// `C = op(A) op(B)` or, with `accumulate`, `C += op(A) op(B)` (`op` = conjugate transpose
/// where `adj_*` is set).
pub fn gemm<T: Scalar>(
    c: MatMut<'_, T>,
    accumulate: bool,
    a: MatRef<'_, T>,
    adj_a: bool,
    b: MatRef<'_, T>,
    adj_b: bool,
) {
    T::gemm_with(default_backend(), c, accumulate, a, adj_a, b, adj_b)
}

/// Lower Cholesky factor `L` of the Hermitian positive definite `h = L L^H`.
pub fn cholesky<T: Scalar>(h: MatRef<'_, T>) -> Result<Mat<T>, LinalgError> {
    T::cholesky_with(default_backend(), h)
}

/// Inverse of an invertible lower triangular matrix (lower triangular).
pub fn triangular_inverse<T: Scalar>(l: MatRef<'_, T>) -> Mat<T> {
    T::tri_inverse_with(default_backend(), l)
}

/// Triangular multiply `X <- X op(L)`.
pub fn trmm_right<T: Scalar>(x: MatMut<'_, T>, l: MatRef<'_, T>, adj: bool) {
    T::trmm_right_with(default_backend(), x, l, adj)
}

/// Triangular solve `X <- X op(L)^-1`.
pub fn trsm_right<T: Scalar>(x: MatMut<'_, T>, l: MatRef<'_, T>, adj: bool) {
    T::trsm_right_with(default_backend(), x, l, adj)
}

/// `C += A triu(U)` (`strict`: strict upper triangle only): a triangular rotation.
pub fn upper_matmul_acc<T: Scalar>(
    c: MatMut<'_, T>,
    a: MatRef<'_, T>,
    u: MatRef<'_, T>,
    strict: bool,
) {
    T::upper_matmul_acc_with(default_backend(), c, a, u, strict)
}

/// Orthonormalise the columns of `x` in place by Cholesky: `S = X^H X = L L^H`,
/// `X <- X L^-H` (a triangular solve). Returns `L`.
pub fn cholesky_orthonormalise<T: Scalar>(mut x: MatMut<'_, T>) -> Result<Mat<T>, LinalgError> {
    let s = overlap(x.as_ref(), x.as_ref());
    let l = cholesky(s.as_ref())?;
    trsm_right(x.as_mut(), l.as_ref(), true);
    Ok(l)
}

#[cfg(test)]
mod tests {
    use super::*;
    use faer::c64;

    fn check<T: Scalar>(h: Mat<T>) {
        let n = h.nrows();
        let e = hermitian_eigen(h.as_ref()).unwrap();
        assert!(e.values.windows(2).all(|w| w[0] <= w[1]));
        let hv = matmul(h.as_ref(), e.vectors.as_ref());
        for j in 0..n {
            for i in 0..n {
                let d = hv[(i, j)] - e.vectors[(i, j)].scale(e.values[j]);
                assert!(d.abs2() < 1e-24);
            }
        }
        let s = overlap(e.vectors.as_ref(), e.vectors.as_ref());
        for j in 0..n {
            for i in 0..n {
                let expect = if i == j { 1.0 } else { 0.0 };
                assert!((s[(i, j)] - T::from_f64(expect)).abs2() < 1e-24);
            }
        }
    }

    #[test]
    fn eigen_of_hermitian_reconstructs_complex_and_real() {
        let n = 5;
        let a = Mat::from_fn(n, n, |i, j| {
            c64::new((i + 2 * j) as f64 * 0.1, (i as f64 - j as f64) * 0.3)
        });
        check(Mat::from_fn(n, n, |i, j| a[(i, j)] + a[(j, i)].conj()));
        let r = Mat::from_fn(n, n, |i, j| ((i + 2 * j) as f64 * 0.1).sin());
        check(Mat::from_fn(n, n, |i, j| r[(i, j)] + r[(j, i)]));
    }
}
