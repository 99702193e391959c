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
//!
//! Values that ride along (PAW's band sums, as QE's `mix_rho` carries `rho%bec`) are mixed
//! with the same coefficients but stay out of the inner products: `carried` in
//! [`AndersonMixer::next_carrying`], the same on every rank.
//!
//! Densities are real, so rho(-G) = rho(G)*: given the position of every entry's mirror -G,
//! the mixer works on one entry of each pair (inner products count it twice) and restores the
//! other by conjugation, which halves its history (8 pairs of sphere vectors by default) and
//! gives the same steps up to rounding.

use num_complex::Complex64;
use std::collections::VecDeque;

/// Anderson mixer state.
#[derive(Debug)]
pub struct AndersonMixer {
    beta: f64,
    depth: usize,
    kerker: Vec<f64>,
    nchan: usize,
    /// Length of one channel as the caller holds it.
    ng: usize,
    /// The entries worked on: one of each pair (G, -G), or all.
    keep: Vec<usize>,
    /// Weight of each kept entry in an inner product: 2 for a pair, 1 for G = 0 or without
    /// mirrors.
    weight: Vec<f64>,
    /// Position of each entry's mirror (None: every entry is kept).
    mirror: Option<Vec<usize>>,
    history: VecDeque<(Vec<Complex64>, Vec<Complex64>)>,
    /// The carried values' (x, F) of each history entry.
    carried: VecDeque<(Vec<f64>, Vec<f64>)>,
}

impl AndersonMixer {
    /// A mixer for `nchan` channels on a sphere (or this rank's part of it) with squared norms
    /// `g2`; `mirror[i]` is the position of the mirror -G of entry i when every mirror is
    /// local (then only one entry of each pair is kept).
    pub fn new(
        beta: f64,
        depth: usize,
        q0: f64,
        g2: &[f64],
        nchan: usize,
        mirror: Option<&[usize]>,
    ) -> Self {
        let ng = g2.len();
        let keep: Vec<usize> = match mirror {
            Some(m) => (0..ng).filter(|&i| i <= m[i]).collect(),
            None => (0..ng).collect(),
        };
        let weight = keep
            .iter()
            .map(|&i| match mirror {
                Some(m) if m[i] != i => 2.0,
                _ => 1.0,
            })
            .collect();
        let kerker = keep
            .iter()
            .map(|&i| {
                if q0 > 0.0 {
                    g2[i] / (g2[i] + q0 * q0)
                } else {
                    1.0
                }
            })
            .collect();
        Self {
            beta,
            depth,
            kerker,
            nchan,
            ng,
            keep,
            weight,
            mirror: mirror.map(<[usize]>::to_vec),
            history: VecDeque::new(),
            carried: VecDeque::new(),
        }
    }

    /// The kept entries of every channel, one after the other.
    fn pack(&self, x: &[Vec<Complex64>]) -> Vec<Complex64> {
        x.iter()
            .flat_map(|c| self.keep.iter().map(move |&i| c[i]))
            .collect()
    }

    /// Whole channels from their kept entries (mirrors by conjugation).
    fn unpack(&self, packed: &[Complex64]) -> Vec<Vec<Complex64>> {
        packed
            .chunks(self.keep.len())
            .take(self.nchan)
            .map(|c| {
                let mut out = vec![Complex64::new(0.0, 0.0); self.ng];
                for (&i, &v) in self.keep.iter().zip(c) {
                    out[i] = v;
                    if let Some(m) = &self.mirror {
                        out[m[i]] = if m[i] == i { v } else { v.conj() };
                    }
                }
                out
            })
            .collect()
    }

    /// Next input density (channels as (total, magnetisation)) from the current input and
    /// output. `sum` completes sums over the sphere (the identity when it is whole).
    pub fn next(
        &mut self,
        x_in: &[Vec<Complex64>],
        x_out: &[Vec<Complex64>],
        sum: &dyn Fn(&mut [f64]),
    ) -> Vec<Vec<Complex64>> {
        self.next_carrying(x_in, x_out, (&[], &[]), sum).0
    }

    /// [`Self::next`], with the values `carried` = (in, out) mixed alongside by the same
    /// coefficients (see the module doc).
    pub fn next_carrying(
        &mut self,
        x_in: &[Vec<Complex64>],
        x_out: &[Vec<Complex64>],
        carried: (&[f64], &[f64]),
        sum: &dyn Fn(&mut [f64]),
    ) -> (Vec<Vec<Complex64>>, Vec<f64>) {
        debug_assert_eq!(
            carried.0.len(),
            carried.1.len(),
            "carried in and out differ"
        );
        debug_assert!(self.carried.iter().all(|(x, _)| x.len() == carried.0.len()));
        let ce: Vec<f64> = carried.0.to_vec();
        let cf: Vec<f64> = carried
            .1
            .iter()
            .zip(carried.0)
            .map(|(o, i)| o - i)
            .collect();
        let (mut ce_bar, mut cf_bar) = (ce.clone(), cf.clone());
        let nk = self.keep.len();
        let x = self.pack(x_in);
        let mut f = self.pack(x_out);
        f.iter_mut().zip(&x).for_each(|(o, i)| *o -= i);
        for (v, k) in f[..nk].iter_mut().zip(&self.kerker) {
            *v *= k;
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
                    .zip(self.weight.iter().cycle())
                    .map(|(k, w)| {
                        let (p, q) = (a(k), b(k));
                        w * (p.re * q.re + p.im * q.im)
                    })
                    .sum::<f64>()
            };
            // [A (m x m, row-major) | b], summed in one call; every product on its own thread
            // (each one serial, so the sums do not depend on the thread count).
            use rayon::prelude::*;
            let pairs: Vec<(usize, Option<usize>)> = (0..m)
                .flat_map(|i| (0..=i).map(move |j| (i, Some(j))).chain([(i, None)]))
                .collect();
            let values: Vec<f64> = pairs
                .par_iter()
                .map(|&(i, j)| match j {
                    Some(j) => dot(&|k| df(i, k), &|k| df(j, k)),
                    None => dot(&|k| df(i, k), &|k| f[k]),
                })
                .collect();
            let mut ab = vec![0.0; m * m + m];
            for (&(i, j), v) in pairs.iter().zip(values) {
                match j {
                    Some(j) => (ab[i * m + j], ab[j * m + i]) = (v, v),
                    None => ab[m * m + i] = v,
                }
            }
            sum(&mut ab);
            let a = ab[..m * m].chunks(m).map(<[f64]>::to_vec).collect();
            let b = ab[m * m..].to_vec();
            if let Some(gamma) = solve_regularized(a, b) {
                // Element by element, the history in order: the same sums as one pass per
                // history entry.
                let update = |(k, (xv, fv)): (usize, (&mut Complex64, &mut Complex64))| {
                    for (i, g) in gamma.iter().enumerate() {
                        *xv -= dx(i, k) * g;
                        *fv -= df(i, k) * g;
                    }
                };
                xbar.par_iter_mut()
                    .zip(fbar.par_iter_mut())
                    .enumerate()
                    .with_min_len(4096)
                    .for_each(update);
                for (g, (hx, hf)) in gamma.iter().zip(&self.carried) {
                    for k in 0..ce_bar.len().min(hx.len()) {
                        ce_bar[k] -= (ce[k] - hx[k]) * g;
                        cf_bar[k] -= (cf[k] - hf[k]) * g;
                    }
                }
            }
        }
        self.history.push_back((x, f));
        self.carried.push_back((ce, cf));
        if self.history.len() > self.depth {
            self.history.pop_front();
            self.carried.pop_front();
        }
        let next: Vec<Complex64> = xbar
            .iter()
            .zip(&fbar)
            .map(|(a, b)| a + b * self.beta)
            .collect();
        let carried_next = ce_bar
            .iter()
            .zip(&cf_bar)
            .map(|(a, b)| a + b * self.beta)
            .collect();
        (self.unpack(&next), carried_next)
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
        let mut mixer = AndersonMixer::new(0.5, 8, 0.0, &g2, 1, None);
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

    #[test]
    fn mirrored_history_takes_the_same_steps() {
        // Entries G = -3..=3 (mirror of i is 6 - i) with Hermitian data: the half-history mixer
        // must reproduce the whole one up to rounding (amplified by the conditioning of the
        // Anderson system as the iterates converge: compare to 1e-7 relative).
        let n = 7;
        let mirror: Vec<usize> = (0..n).map(|i| n - 1 - i).collect();
        let g2: Vec<f64> = (0..n).map(|i| ((i as f64) - 3.0).powi(2)).collect();
        let c = |i: usize| {
            let g = i as f64 - 3.0;
            Complex64::new(1.0 + 0.1 * g * g, 0.3 * g)
        };
        // y(G) = a(G) x(G) + 0.2 x(-G)* + c(G) keeps x Hermitian.
        let map = |x: &[Complex64]| -> Vec<Complex64> {
            (0..n)
                .map(|i| x[i] * (0.5 + 0.05 * g2[i]) + x[mirror[i]].conj() * 0.2 + c(i))
                .collect()
        };
        let mut whole = AndersonMixer::new(0.4, 4, 0.7, &g2, 1, None);
        let mut half = AndersonMixer::new(0.4, 4, 0.7, &g2, 1, Some(&mirror));
        assert_eq!(half.keep.len(), 4);
        let (mut x, mut y) = (
            vec![Complex64::new(0.0, 0.0); n],
            vec![Complex64::new(0.0, 0.0); n],
        );
        for step in 0..8 {
            let (fx, fy) = (map(&x), map(&y));
            x = whole.next(&[x.clone()], &[fx], &|_| {}).remove(0);
            y = half.next(&[y.clone()], &[fy], &|_| {}).remove(0);
            for (a, b) in x.iter().zip(&y) {
                assert!((a - b).norm() <= 1e-7 * a.norm(), "step {step}: {a} vs {b}");
            }
        }
    }
}
