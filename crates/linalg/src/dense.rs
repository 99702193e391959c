//! Dense kernels on one rank: products with (conjugate-)transposes and the Hermitian eigensolver.

use faer::linalg::matmul::matmul as faer_matmul;
use faer::{c64, Accum, Mat, MatMut, MatRef, Par, Side};

/// A dense kernel failed (the eigensolver did not converge).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LinalgError(pub String);

impl std::fmt::Display for LinalgError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "dense linear algebra failed: {}", self.0)
    }
}
impl std::error::Error for LinalgError {}

fn par() -> Par {
    if rayon_threads() > 1 {
        Par::rayon(0)
    } else {
        Par::Seq
    }
}

fn rayon_threads() -> usize {
    std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1)
}

/// `A^H B` (the overlap of two band blocks).
pub fn overlap(a: MatRef<'_, c64>, b: MatRef<'_, c64>) -> Mat<c64> {
    let mut s = Mat::<c64>::zeros(a.ncols(), b.ncols());
    faer_matmul(
        s.as_mut(),
        Accum::Replace,
        a.adjoint(),
        b,
        c64::new(1.0, 0.0),
        par(),
    );
    s
}

/// `A B` (e.g. the rotation of a band block by a subspace matrix).
pub fn matmul(a: MatRef<'_, c64>, b: MatRef<'_, c64>) -> Mat<c64> {
    let mut c = Mat::<c64>::zeros(a.nrows(), b.ncols());
    matmul_into(c.as_mut(), a, b, false);
    c
}

/// `C = A B` or, with `accumulate`, `C += A B`.
pub fn matmul_into(c: MatMut<'_, c64>, a: MatRef<'_, c64>, b: MatRef<'_, c64>, accumulate: bool) {
    let beta = if accumulate {
        Accum::Add
    } else {
        Accum::Replace
    };
    faer_matmul(c, beta, a, b, c64::new(1.0, 0.0), par());
}

/// Eigenpairs of a Hermitian matrix, eigenvalues ascending.
#[derive(Debug, Clone)]
pub struct HermitianEigen {
    /// Eigenvalues in ascending order.
    pub values: Vec<f64>,
    /// Eigenvectors as columns, in the order of `values`.
    pub vectors: Mat<c64>,
}

/// All eigenpairs of the Hermitian matrix `h` (only its lower triangle is read).
pub fn hermitian_eigen(h: MatRef<'_, c64>) -> Result<HermitianEigen, LinalgError> {
    let evd = h
        .self_adjoint_eigen(Side::Lower)
        .map_err(|e| LinalgError(format!("Hermitian eigensolver: {e:?}")))?;
    let s = evd.S().column_vector();
    let n = h.nrows();
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_by(|&i, &j| s[i].re.total_cmp(&s[j].re));
    let u = evd.U();
    let values = order.iter().map(|&i| s[i].re).collect();
    let vectors = Mat::from_fn(n, n, |r, c| u[(r, order[c])]);
    Ok(HermitianEigen { values, vectors })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn eigen_of_hermitian_reconstructs() {
        let n = 5;
        let a = Mat::from_fn(n, n, |i, j| {
            c64::new((i + 2 * j) as f64 * 0.1, (i as f64 - j as f64) * 0.3)
        });
        let h = Mat::from_fn(n, n, |i, j| a[(i, j)] + a[(j, i)].conj());
        let e = hermitian_eigen(h.as_ref()).unwrap();
        assert!(e.values.windows(2).all(|w| w[0] <= w[1]));
        let hv = matmul(h.as_ref(), e.vectors.as_ref());
        for j in 0..n {
            for i in 0..n {
                let d = hv[(i, j)] - e.vectors[(i, j)] * e.values[j];
                assert!(d.norm() < 1e-12);
            }
        }
        let s = overlap(e.vectors.as_ref(), e.vectors.as_ref());
        for j in 0..n {
            for i in 0..n {
                let expect = if i == j { 1.0 } else { 0.0 };
                assert!((s[(i, j)] - c64::new(expect, 0.0)).norm() < 1e-12);
            }
        }
    }
}
