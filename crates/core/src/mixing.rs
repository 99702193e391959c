//! Density mixing: Kerker-preconditioned Anderson (Pulay) acceleration on the density sphere.
//!
//! The mixed vector holds the total density and, with spin, the magnetisation. The residual
//! F = P (rho_out - rho_in) uses the Kerker preconditioner P(G) = G^2/(G^2 + q0^2) on the total
//! density (damping long-wavelength charge sloshing) and the identity on the magnetisation.
//! Anderson: with the last `depth` pairs (x_i, F_i), gamma minimises |F - sum gamma_i (F - F_i)|,
//! and the next input is x_bar + beta F_bar.
//!
//! The vectors may be one rank's part of a sphere dealt over a G-vector group: the inner
//! products are local sums completed by the caller's `sum` (one reduction per step); everything
//! else is element-wise.

use num_complex::Complex64;
use std::collections::VecDeque;

/// Anderson mixer state.
#[derive(Debug)]
pub struct AndersonMixer {
    beta: f64,
    depth: usize,
    kerker: Vec<f64>,
    nchan: usize,
    history: VecDeque<(Vec<Complex64>, Vec<Complex64>)>,
}

impl AndersonMixer {
    /// A mixer for `nchan` channels on a sphere (or this rank's part of it) with squared norms
    /// `g2`.
    pub fn new(beta: f64, depth: usize, q0: f64, g2: &[f64], nchan: usize) -> Self {
        let kerker = g2
            .iter()
            .map(|&g| if q0 > 0.0 { g / (g + q0 * q0) } else { 1.0 })
            .collect();
        Self {
            beta,
            depth,
            kerker,
            nchan,
            history: VecDeque::new(),
        }
    }

    /// Next input density (channels as (total, magnetisation)) from the current input and
    /// output. `sum` completes sums over the sphere (the identity when it is whole).
    pub fn next(
        &mut self,
        x_in: &[Vec<Complex64>],
        x_out: &[Vec<Complex64>],
        sum: &dyn Fn(&mut [f64]),
    ) -> Vec<Vec<Complex64>> {
        let ng = self.kerker.len();
        let x: Vec<Complex64> = x_in.iter().flatten().copied().collect();
        let mut f: Vec<Complex64> = x_out.iter().flatten().zip(&x).map(|(o, i)| o - i).collect();
        for (i, v) in f[..ng].iter_mut().enumerate() {
            *v *= self.kerker[i];
        }
        let m = self.history.len();
        let (mut xbar, mut fbar) = (x.clone(), f.clone());
        if m > 0 {
            // The differences F - F_i and x - x_i are formed element by element where they are
            // used, never stored: m of each would be 2 m sphere-sized temporaries per step.
            let df = |i: usize, k: usize| f[k] - self.history[i].1[k];
            let dx = |i: usize, k: usize| x[k] - self.history[i].0[k];
            let dot = |a: &dyn Fn(usize) -> Complex64, b: &dyn Fn(usize) -> Complex64| {
                (0..f.len())
                    .map(|k| {
                        let (p, q) = (a(k), b(k));
                        p.re * q.re + p.im * q.im
                    })
                    .sum::<f64>()
            };
            // [A (m x m, row-major) | b], summed in one call.
            let mut ab = vec![0.0; m * m + m];
            for i in 0..m {
                for j in 0..=i {
                    let v = dot(&|k| df(i, k), &|k| df(j, k));
                    ab[i * m + j] = v;
                    ab[j * m + i] = v;
                }
                ab[m * m + i] = dot(&|k| df(i, k), &|k| f[k]);
            }
            sum(&mut ab);
            let a = ab[..m * m].chunks(m).map(<[f64]>::to_vec).collect();
            let b = ab[m * m..].to_vec();
            if let Some(gamma) = solve_regularized(a, b) {
                for (i, g) in gamma.iter().enumerate() {
                    for (k, v) in xbar.iter_mut().enumerate() {
                        *v -= dx(i, k) * g;
                    }
                    for (k, v) in fbar.iter_mut().enumerate() {
                        *v -= df(i, k) * g;
                    }
                }
            }
        }
        self.history.push_back((x, f));
        if self.history.len() > self.depth {
            self.history.pop_front();
        }
        let next: Vec<Complex64> = xbar
            .iter()
            .zip(&fbar)
            .map(|(a, b)| a + b * self.beta)
            .collect();
        next.chunks(ng)
            .take(self.nchan)
            .map(|c| c.to_vec())
            .collect()
    }
}

/// Solve the small symmetric system A x = b by Gaussian elimination with a tiny Tikhonov shift.
fn solve_regularized(mut a: Vec<Vec<f64>>, mut b: Vec<f64>) -> Option<Vec<f64>> {
    let n = b.len();
    let scale = (0..n).map(|i| a[i][i]).fold(0.0, f64::max);
    if scale.is_nan() || scale <= 0.0 {
        return None;
    }
    for (i, row) in a.iter_mut().enumerate() {
        row[i] += 1e-12 * scale;
    }
    for c in 0..n {
        let p = (c..n).max_by(|&i, &j| a[i][c].abs().total_cmp(&a[j][c].abs()))?;
        if a[p][c].abs() < 1e-300 {
            return None;
        }
        a.swap(c, p);
        b.swap(c, p);
        let (top, rest) = a.split_at_mut(c + 1);
        let pivot = &top[c];
        for (r, row) in rest.iter_mut().enumerate() {
            let f = row[c] / pivot[c];
            for (x, p) in row[c..].iter_mut().zip(&pivot[c..]) {
                *x -= f * p;
            }
            b[c + 1 + r] -= f * b[c];
        }
    }
    let mut x = vec![0.0; n];
    for r in (0..n).rev() {
        let s: f64 = (r + 1..n).map(|k| a[r][k] * x[k]).sum();
        x[r] = (b[r] - s) / a[r][r];
    }
    x.iter().all(|v| v.is_finite()).then_some(x)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn anderson_solves_a_linear_fixed_point_fast() {
        // x = M x + c with M a contraction; Anderson must converge in few steps.
        let n = 6;
        let g2 = vec![1.0; n];
        let mut mixer = AndersonMixer::new(0.5, 8, 0.0, &g2, 1);
        let map = |x: &[Complex64]| -> Vec<Complex64> {
            (0..n)
                .map(|i| Complex64::new(0.9 * x[(i + 1) % n].re - 0.3 * x[i].re + i as f64, 0.0))
                .collect()
        };
        let mut x = vec![Complex64::new(0.0, 0.0); n];
        for _ in 0..20 {
            let y = map(&x);
            x = mixer.next(&[x.clone()], &[y], &|_| {}).remove(0);
        }
        let y = map(&x);
        let r: f64 = x.iter().zip(&y).map(|(a, b)| (a - b).norm()).sum();
        assert!(r < 1e-8, "residual {r}");
    }
}
