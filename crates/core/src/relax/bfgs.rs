//! BFGS on a flat coordinate vector with a Hessian estimate (not its inverse), stepping along
//! the eigenvectors of H with |eigenvalue| so that negative curvature never sends the step
//! uphill, and capping the step with a caller-supplied scale (trust radius).

use planewave_linalg::{hermitian_eigen, Mat};

/// The optimiser's state.
pub struct Bfgs {
    hessian: Mat<f64>,
    previous: Option<(Vec<f64>, Vec<f64>)>,
}

impl Bfgs {
    /// Start with `H = alpha I` (Ha per squared coordinate unit).
    pub fn new(n: usize, alpha: f64) -> Self {
        Bfgs {
            hessian: Mat::from_fn(n, n, |i, j| if i == j { alpha } else { 0.0 }),
            previous: None,
        }
    }

    /// Record the gradient `g` at `x` (updating H from the previous point) and return the
    /// quasi-Newton step (before any trust-radius scaling).
    pub fn step(&mut self, x: &[f64], g: &[f64]) -> Result<Vec<f64>, String> {
        let n = x.len();
        if let Some((x0, g0)) = self.previous.take() {
            let dx: Vec<f64> = x.iter().zip(&x0).map(|(a, b)| a - b).collect();
            let dg: Vec<f64> = g.iter().zip(&g0).map(|(a, b)| a - b).collect();
            let a: f64 = dx.iter().zip(&dg).map(|(p, q)| p * q).sum();
            let hdx: Vec<f64> = (0..n)
                .map(|i| (0..n).map(|j| self.hessian[(i, j)] * dx[j]).sum())
                .collect();
            let b: f64 = dx.iter().zip(&hdx).map(|(p, q)| p * q).sum();
            // Only positive-curvature pairs keep H positive definite.
            if a > 1e-14 && b > 1e-14 {
                for i in 0..n {
                    for j in 0..n {
                        self.hessian[(i, j)] += dg[i] * dg[j] / a - hdx[i] * hdx[j] / b;
                    }
                }
            }
        }
        self.previous = Some((x.to_vec(), g.to_vec()));
        let eig = hermitian_eigen(self.hessian.as_ref())
            .map_err(|e| format!("BFGS Hessian eigensolver failed: {e:?}"))?;
        // dx = -V |w|^{-1} V^T g
        let mut step = vec![0.0; n];
        for k in 0..n {
            let w = eig.values[k].abs().max(1e-8);
            let proj: f64 = (0..n).map(|i| eig.vectors[(i, k)] * g[i]).sum();
            for (i, s) in step.iter_mut().enumerate() {
                *s -= eig.vectors[(i, k)] * proj / w;
            }
        }
        Ok(step)
    }

    /// Forget the curvature pair of the last point (after a rejected step).
    pub fn forget_last(&mut self) {
        self.previous = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn minimises_a_quadratic_in_a_few_steps() {
        // E = 1/2 x^T A x - b^T x with A SPD: minimum A^{-1} b.
        let a = [[2.0, 0.3, 0.0], [0.3, 1.0, 0.2], [0.0, 0.2, 0.5]];
        let b = [1.0, -1.0, 0.5];
        let grad = |x: &[f64]| -> Vec<f64> {
            (0..3)
                .map(|i| (0..3).map(|j| a[i][j] * x[j]).sum::<f64>() - b[i])
                .collect()
        };
        let mut x = vec![0.0; 3];
        let mut opt = Bfgs::new(3, 1.0);
        for _ in 0..20 {
            let g = grad(&x);
            if g.iter().map(|v| v * v).sum::<f64>().sqrt() < 1e-10 {
                break;
            }
            let s = opt.step(&x, &g).unwrap();
            x.iter_mut().zip(&s).for_each(|(xi, si)| *xi += si);
        }
        let g = grad(&x);
        assert!(g.iter().all(|v| v.abs() < 1e-8), "{x:?} {g:?}");
    }
}
