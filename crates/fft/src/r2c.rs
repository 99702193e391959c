//! `RealFft3d`: 3-D FFT of real fields (densities, potentials) to and from the half spectrum.
//!
//! Contract: a real field on `dims = [n0, n1, n2]` (C order) has the Hermitian spectrum
//! `F(k0, k1, k2) = conj F(-k0, -k1, -k2)`, so only `k2 = 0..=n2/2` is stored: the half
//! spectrum is C order on `[n0, n1, n2/2 + 1]`. [`RealFft3d::forward`] gives
//! `F(G) = (1/N) sum_r f(r) e^{-iG.r}` (the serial [`Fft3d`] convention) on those points;
//! [`RealFft3d::backward`] gives `f(r) = sum_G F(G) e^{iG.r}` and consumes (overwrites) the half
//! spectrum. For a half spectrum that is not exactly that of a real field, `backward` returns
//! the real field of its Hermitian part along a3 (imaginary parts of the `k2 = 0` and
//! `k2 = n2/2` entries are ignored after the a1/a2 transforms, as FFTW's c2r does).
//!
//! Along a3 two real lines are transformed as one complex line (`x + iy`) and separated with
//! the symmetry of their spectra, which works for every `n2`; a1 and a2 are complex transforms
//! of the half spectrum (a3 and a2 plane by plane, then a1). Work is about half that of the
//! complex transform of the same grid.

use crate::fft3d::{Fft3d, StridedBuffers};
use crate::grid::FftGrid;
use crate::C64;
use rayon::prelude::*;
use rustfft::{Fft, FftDirection, FftPlanner};
use std::sync::Arc;

const ZERO: C64 = C64 { re: 0.0, im: 0.0 };

/// Real-to-complex and complex-to-real 3-D transforms of one grid.
pub struct RealFft3d {
    grid: FftGrid,
    half: Fft3d,
    fwd2: Arc<dyn Fft<f64>>,
    inv2: Arc<dyn Fft<f64>>,
}

impl std::fmt::Debug for RealFft3d {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RealFft3d")
            .field("grid", &self.grid)
            .finish()
    }
}

impl RealFft3d {
    /// Plan the transforms of `grid`.
    pub fn new(grid: FftGrid) -> Self {
        let [n0, n1, n2] = grid.dims;
        let half = Fft3d::new(FftGrid {
            dims: [n0, n1, n2 / 2 + 1],
        });
        let mut planner = FftPlanner::<f64>::new();
        Self {
            grid,
            half,
            fwd2: planner.plan_fft(n2, FftDirection::Forward),
            inv2: planner.plan_fft(n2, FftDirection::Inverse),
        }
    }

    /// The real-space grid.
    pub fn grid(&self) -> FftGrid {
        self.grid
    }
    /// Dimensions of the half spectrum, `[n0, n1, n2/2 + 1]`.
    pub fn half_dims(&self) -> [usize; 3] {
        self.half.grid().dims
    }
    /// Number of half-spectrum values.
    pub fn half_len(&self) -> usize {
        self.half.grid().len()
    }

    /// `F(G) = (1/N) sum_r f(r) e^{-iG.r}` on the half spectrum.
    pub fn forward(&self, real: &[f64], half: &mut [C64]) {
        self.forward_unnormalized(real, half);
        let s = 1.0 / self.grid.len() as f64;
        half.par_iter_mut().for_each(|x| *x *= s);
    }

    /// `F(G) = sum_r f(r) e^{-iG.r}` on the half spectrum.
    pub fn forward_unnormalized(&self, real: &[f64], half: &mut [C64]) {
        self.check(real, half);
        let [_, n1, n] = self.grid.dims;
        let nh = n / 2 + 1;
        // Plane by plane: a3 (two real lines at a time), then a2 while the plane is in cache.
        real.par_chunks(n1 * n)
            .zip(half.par_chunks_mut(n1 * nh))
            .for_each_init(
                || self.plane_buffers(),
                |(z, scratch, bufs), (r, h)| {
                    for (r, h) in r.chunks(2 * n).zip(h.chunks_mut(2 * nh)) {
                        self.forward_lines(r, h, z, scratch);
                    }
                    self.half.plane_axis1(h, false, bufs);
                },
            );
        self.half.full_axis0(half, false);
    }

    /// `f(r) = sum_G F(G) e^{iG.r}` from the half spectrum (which is overwritten).
    pub fn backward(&self, half: &mut [C64], real: &mut [f64]) {
        self.check(real, half);
        let [_, n1, n] = self.grid.dims;
        let nh = n / 2 + 1;
        self.half.full_axis0(half, true);
        real.par_chunks_mut(n1 * n)
            .zip(half.par_chunks_mut(n1 * nh))
            .for_each_init(
                || self.plane_buffers(),
                |(z, scratch, bufs), (r, h)| {
                    self.half.plane_axis1(h, true, bufs);
                    for (r, h) in r.chunks_mut(2 * n).zip(h.chunks(2 * nh)) {
                        self.backward_lines(h, r, z, scratch);
                    }
                },
            );
    }

    /// Per-thread buffers: one complex line, a3 FFT scratch, a2 blocks.
    fn plane_buffers(&self) -> (Vec<C64>, Vec<C64>, StridedBuffers) {
        let n = self.grid.dims[2];
        let s = self
            .fwd2
            .get_inplace_scratch_len()
            .max(self.inv2.get_inplace_scratch_len());
        (vec![ZERO; n], vec![ZERO; s], self.half.plane_buffers())
    }

    /// a3 forward of one or two real lines `r` into their half lines `h`, as one complex FFT.
    fn forward_lines(&self, r: &[f64], h: &mut [C64], z: &mut [C64], scratch: &mut [C64]) {
        let n = self.grid.dims[2];
        let nh = n / 2 + 1;
        let two = r.len() == 2 * n;
        if two {
            for (j, zj) in z.iter_mut().enumerate() {
                *zj = C64::new(r[j], r[n + j]);
            }
        } else {
            for (zj, &x) in z.iter_mut().zip(r) {
                *zj = C64::new(x, 0.0);
            }
        }
        self.fwd2.process_with_scratch(z, scratch);
        let (hx, hy) = h.split_at_mut(nh);
        for k in 0..nh {
            let a = z[k];
            let b = z[(n - k) % n].conj();
            hx[k] = (a + b) * 0.5;
            if two {
                // (a - b) / 2i
                let d = a - b;
                hy[k] = C64::new(0.5 * d.im, -0.5 * d.re);
            }
        }
    }

    /// a3 backward of one or two half lines `h` into real lines `r`, as one complex FFT.
    fn backward_lines(&self, h: &[C64], r: &mut [f64], z: &mut [C64], scratch: &mut [C64]) {
        let n = self.grid.dims[2];
        let nh = n / 2 + 1;
        // Hermitian extension of one half line, with the self-conjugate entries made real.
        let ext = |h: &[C64], k: usize| -> C64 {
            if k == 0 || 2 * k == n {
                C64::new(h[k].re, 0.0)
            } else if k < nh {
                h[k]
            } else {
                h[n - k].conj()
            }
        };
        let two = r.len() == 2 * n;
        let hx = &h[..nh];
        if two {
            let hy = &h[nh..];
            for (k, zk) in z.iter_mut().enumerate() {
                let x = ext(hx, k);
                let y = ext(hy, k);
                *zk = C64::new(x.re - y.im, x.im + y.re);
            }
        } else {
            for (k, zk) in z.iter_mut().enumerate() {
                *zk = ext(hx, k);
            }
        }
        self.inv2.process_with_scratch(z, scratch);
        let (rx, ry) = r.split_at_mut(n.min(r.len()));
        for (x, v) in rx.iter_mut().zip(z.iter()) {
            *x = v.re;
        }
        for (y, v) in ry.iter_mut().zip(z.iter()) {
            *y = v.im;
        }
    }

    fn check(&self, real: &[f64], half: &[C64]) {
        assert_eq!(real.len(), self.grid.len(), "RealFft3d: real field length");
        assert_eq!(
            half.len(),
            self.half_len(),
            "RealFft3d: half spectrum length"
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn field(n: usize) -> Vec<f64> {
        (0..n)
            .map(|i| (i as f64 * 0.731).sin() + 0.3 * (i as f64 * 0.117).cos())
            .collect()
    }

    #[test]
    fn matches_complex_transform_both_ways() {
        for dims in [[6, 5, 4], [5, 3, 7], [4, 4, 1], [3, 5, 2], [1, 1, 9]] {
            let grid = FftGrid { dims };
            let n = grid.len();
            let r2c = RealFft3d::new(grid);
            let c = Fft3d::new(grid);
            let f = field(n);
            let mut full: Vec<C64> = f.iter().map(|&x| C64::new(x, 0.0)).collect();
            c.forward(&mut full);
            let mut half = vec![ZERO; r2c.half_len()];
            r2c.forward(&f, &mut half);
            let nh = r2c.half_dims()[2];
            for (l, h) in half.iter().enumerate() {
                let (line, k2) = (l / nh, l % nh);
                let g = full[line * dims[2] + k2];
                assert!((h - g).norm() < 1e-13, "{dims:?}: {h} vs {g}");
            }
            let mut back = vec![0.0; n];
            r2c.backward(&mut half, &mut back);
            for (a, b) in back.iter().zip(&f) {
                assert!((a - b).abs() < 1e-12, "{dims:?}: {a} vs {b}");
            }
        }
    }
}
