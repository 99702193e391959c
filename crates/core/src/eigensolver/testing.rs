//! Dense test operators shared by the eigensolvers' unit tests, and the check of a result
//! against a full diagonalisation.

use super::{BlockOperator, EigenResult};
use num_complex::Complex64;
use planewave_linalg::{
    hermitian_eigen, matmul, matmul_into, overlap, Mat, MatMut, MatRef, Scalar,
};

/// A dense Hermitian matrix with the diagonal `kin` used by the preconditioners.
pub struct Dense<T: Scalar> {
    pub a: Mat<T>,
    pub kin: Vec<f64>,
}

impl<T: Scalar> BlockOperator<T> for Dense<T> {
    fn dim(&self) -> usize {
        self.a.nrows()
    }
    fn apply(&self, x: MatRef<'_, T>, out: MatMut<'_, T>) {
        matmul_into(out, self.a.as_ref(), x, false);
    }
    fn kinetic(&self) -> &[f64] {
        &self.kin
    }
}

/// A diagonally dominant complex Hermitian matrix of order n; with `degenerate`, two uncoupled
/// copies of one of order n/2 (every eigenvalue doubly degenerate).
pub fn complex_operator(n: usize, degenerate: bool) -> Dense<Complex64> {
    let half = n / 2;
    let idx = |i: usize| if degenerate { i % half } else { i };
    let kin: Vec<f64> = (0..n).map(|i| 0.5 * idx(i) as f64).collect();
    let a = Mat::from_fn(n, n, |i, j| {
        let (p, q) = (idx(i), idx(j));
        if degenerate && i / half != j / half {
            Complex64::new(0.0, 0.0)
        } else if p == q {
            Complex64::new(kin[i], 0.0)
        } else {
            let v = 0.05 / (1.0 + (p as f64 - q as f64).abs());
            Complex64::new(v, if p < q { 0.3 * v } else { -0.3 * v })
        }
    });
    Dense { a, kin }
}

/// A diagonally dominant real symmetric matrix of order n.
pub fn real_operator(n: usize) -> Dense<f64> {
    let kin: Vec<f64> = (0..n).map(|i| 0.3 * i as f64).collect();
    let a = Mat::from_fn(n, n, |i, j| {
        if i == j {
            kin[i]
        } else {
            0.04 / (1.0 + (i as f64 - j as f64).abs())
        }
    });
    Dense { a, kin }
}

/// A deterministic complex starting block.
pub fn complex_start(n: usize, nb: usize) -> Mat<Complex64> {
    Mat::from_fn(n, nb, |i, j| {
        Complex64::new(((i * 7 + j * 13) % 11) as f64 - 5.0, ((i + j) % 3) as f64)
    })
}

/// A deterministic real starting block.
pub fn real_start(n: usize, nb: usize) -> Mat<f64> {
    Mat::from_fn(n, nb, |i, j| {
        (((i * 5 + j * 3) % 7) as f64 - 3.0) + 0.1 * j as f64
    })
}

/// `r` converged to the lowest eigenvalues of `op` within `tol`, with orthonormal vectors whose
/// residuals are below 1e-8.
pub fn check<T: Scalar>(op: &Dense<T>, r: &EigenResult<T>, tol: f64) {
    let exact = hermitian_eigen(op.a.as_ref()).unwrap();
    assert!(r.converged, "residuals {:?}", r.residual_norms);
    for (j, v) in r.values.iter().enumerate() {
        assert!(
            (v - exact.values[j]).abs() < tol,
            "{j}: {v} vs {}",
            exact.values[j]
        );
    }
    let ax = matmul(op.a.as_ref(), r.vectors.as_ref());
    let s = overlap(r.vectors.as_ref(), r.vectors.as_ref());
    for j in 0..r.values.len() {
        for i in 0..r.values.len() {
            let want = if i == j { 1.0 } else { 0.0 };
            assert!((s[(i, j)] - T::from_f64(want)).abs2() < 1e-20);
        }
        let res: f64 = (0..op.a.nrows())
            .map(|i| (ax[(i, j)] - r.vectors[(i, j)].scale(r.values[j])).abs2())
            .sum();
        assert!(res.sqrt() < 1e-8, "residual of {j}: {}", res.sqrt());
    }
}
