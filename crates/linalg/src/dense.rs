//! Dense kernels on one rank, generic over [`Scalar`] (f64 for Γ, c64 otherwise).

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
