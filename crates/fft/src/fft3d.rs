//! `Fft3d`: the serial (one-rank) 3-D complex FFT on a C-order grid, from cached rustfft plans.
//!
//! Axis 2 is contiguous and transformed in place; axis 1 is transformed plane by plane through a
//! small per-thread buffer of gathered columns; axis 0 is gathered block-wise into the caller's
//! work buffer, transformed there in the same pass, and written back a few planes at a time.
//! Lines are dealt to rayon threads in batches.

use crate::grid::FftGrid;
use crate::C64;
use rayon::prelude::*;
use rustfft::{Fft, FftDirection, FftPlanner};
use std::sync::Arc;

/// Lines per rayon task (amortises task overhead on small grids).
const LINES_PER_TASK: usize = 16;

/// Forward and inverse 1-D plans for the three axes of one grid.
pub struct Fft3d {
    grid: FftGrid,
    fwd: [Arc<dyn Fft<f64>>; 3],
    inv: [Arc<dyn Fft<f64>>; 3],
}

impl std::fmt::Debug for Fft3d {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Fft3d").field("grid", &self.grid).finish()
    }
}

impl Fft3d {
    /// Plan the transforms for `grid` (plans of equal length are shared by rustfft's planner).
    pub fn new(grid: FftGrid) -> Self {
        let mut planner = FftPlanner::<f64>::new();
        let d = grid.dims;
        let fwd = [0, 1, 2].map(|a| planner.plan_fft(d[a], FftDirection::Forward));
        let inv = [0, 1, 2].map(|a| planner.plan_fft(d[a], FftDirection::Inverse));
        Self { grid, fwd, inv }
    }

    /// The grid this transform works on.
    pub fn grid(&self) -> FftGrid {
        self.grid
    }

    /// `f(G) = (1/N) sum_r f(r) e^{-iG.r}` in place. `work` must hold `grid().len()` values.
    pub fn forward(&self, data: &mut [C64], work: &mut [C64]) {
        self.transform(data, work, &self.fwd);
        let s = 1.0 / self.grid.len() as f64;
        data.par_iter_mut().for_each(|x| *x *= s);
    }

    /// `f(G) = sum_r f(r) e^{-iG.r}` in place (no 1/N normalisation).
    pub fn forward_unnormalized(&self, data: &mut [C64], work: &mut [C64]) {
        self.transform(data, work, &self.fwd);
    }

    /// `f(r) = sum_G f(G) e^{iG.r}` in place. `work` must hold `grid().len()` values.
    pub fn backward(&self, data: &mut [C64], work: &mut [C64]) {
        self.transform(data, work, &self.inv);
    }

    /// Backward transform of a field whose coefficients lie only in the columns and planes of
    /// `sticks` (e.g. a wavefunction sphere): z-lines and y-planes outside them are skipped.
    pub fn backward_sphere(&self, data: &mut [C64], work: &mut [C64], sticks: &Sticks) {
        self.check(data, work);
        self.axis2(data, &self.inv[2], Some(&sticks.lines));
        self.axis1(data, &self.inv[1], Some(&sticks.planes));
        self.axis0(data, work, &self.inv[0]);
    }

    /// Unnormalised forward transform, computing only the coefficients inside `sticks`
    /// (everything else in `data` is left undefined).
    pub fn forward_sphere_unnormalized(&self, data: &mut [C64], work: &mut [C64], sticks: &Sticks) {
        self.check(data, work);
        self.axis0(data, work, &self.fwd[0]);
        self.axis1(data, &self.fwd[1], Some(&sticks.planes));
        self.axis2(data, &self.fwd[2], Some(&sticks.lines));
    }

    /// Axes 0 and 1 only (the a3 axis is done by the caller, e.g. [`crate::RealFft3d`]).
    pub(crate) fn axes01(&self, data: &mut [C64], work: &mut [C64], inverse: bool) {
        self.check(data, work);
        let plans = if inverse { &self.inv } else { &self.fwd };
        self.axis1(data, &plans[1], None);
        self.axis0(data, work, &plans[0]);
    }

    fn check(&self, data: &[C64], work: &[C64]) {
        let n = self.grid.len();
        assert_eq!(data.len(), n, "FFT data has the wrong length");
        assert!(work.len() >= n, "FFT work buffer too small");
    }

    fn transform(&self, data: &mut [C64], work: &mut [C64], plans: &[Arc<dyn Fft<f64>>; 3]) {
        self.check(data, work);
        self.axis2(data, &plans[2], None);
        self.axis1(data, &plans[1], None);
        self.axis0(data, work, &plans[0]);
    }

    /// Axis 2: contiguous lines, in place (only those flagged in `lines`, if given).
    fn axis2(&self, data: &mut [C64], plan: &Arc<dyn Fft<f64>>, lines_mask: Option<&[bool]>) {
        let n2 = self.grid.dims[2];
        match lines_mask {
            None => lines(data, n2, plan),
            Some(mask) => {
                let s = plan.get_inplace_scratch_len();
                data.par_chunks_mut(n2)
                    .zip(mask.par_iter())
                    .filter(|(_, &on)| on)
                    .for_each_init(
                        || vec![C64::new(0.0, 0.0); s],
                        |scratch, (line, _)| plan.process_with_scratch(line, scratch),
                    );
            }
        }
    }

    /// Axis 1: inside each (contiguous) plane, gather B columns into scratch lines, transform,
    /// scatter back (only planes flagged in `planes`, if given).
    fn axis1(&self, data: &mut [C64], plan: &Arc<dyn Fft<f64>>, planes: Option<&[bool]>) {
        let [_, n1, n2] = self.grid.dims;
        let m = n1 * n2;
        let s1 = plan.get_inplace_scratch_len();
        data.par_chunks_mut(m)
            .enumerate()
            .filter(|(i0, _)| planes.is_none_or(|p| p[*i0]))
            .for_each_init(
                || {
                    (
                        vec![C64::new(0.0, 0.0); BLOCK * n1],
                        vec![C64::new(0.0, 0.0); s1],
                    )
                },
                |(lines_buf, scratch), (_, plane)| {
                    for c0 in (0..n2).step_by(BLOCK) {
                        let nc = BLOCK.min(n2 - c0);
                        let buf = &mut lines_buf[..nc * n1];
                        for i1 in 0..n1 {
                            let row = &plane[i1 * n2 + c0..i1 * n2 + c0 + nc];
                            for (c, &v) in row.iter().enumerate() {
                                buf[c * n1 + i1] = v;
                            }
                        }
                        plan.process_with_scratch(buf, scratch);
                        for i1 in 0..n1 {
                            let row = &mut plane[i1 * n2 + c0..i1 * n2 + c0 + nc];
                            for (c, v) in row.iter_mut().enumerate() {
                                *v = buf[c * n1 + i1];
                            }
                        }
                    }
                },
            );
    }

    /// Axis 0: gather blocks of B columns of the (n0 x m) view into `work` as contiguous lines
    /// and transform them there (one fused pass), then write back plane by plane.
    fn axis0(&self, data: &mut [C64], work: &mut [C64], plan: &Arc<dyn Fft<f64>>) {
        let [n0, n1, n2] = self.grid.dims;
        let m = n1 * n2;
        let work = &mut work[..n0 * m];
        let s0 = plan.get_inplace_scratch_len();
        let src: &[C64] = data;
        work.par_chunks_mut(n0 * BLOCK).enumerate().for_each_init(
            || vec![C64::new(0.0, 0.0); s0],
            |scratch, (blk, w)| {
                let c0 = blk * BLOCK;
                let nc = w.len() / n0;
                for i0 in 0..n0 {
                    let run = &src[i0 * m + c0..i0 * m + c0 + nc];
                    for (c, &v) in run.iter().enumerate() {
                        w[c * n0 + i0] = v;
                    }
                }
                plan.process_with_scratch(w, scratch);
            },
        );
        // Write back PLANES planes per task: each cache line of `work` (consecutive i0) is read
        // once, instead of once per plane with a stride of n0 (which thrashes the cache sets
        // for power-of-two n0).
        let w: &[C64] = work;
        data.par_chunks_mut(m * PLANES)
            .enumerate()
            .for_each(|(blk, planes)| {
                let i00 = blk * PLANES;
                let np = planes.len() / m;
                for j in 0..m {
                    let src = &w[j * n0 + i00..j * n0 + i00 + np];
                    for (p, &v) in src.iter().enumerate() {
                        planes[p * m + j] = v;
                    }
                }
            });
    }
}

/// Which z-lines (index i0 * n1 + i1) and which i0-planes hold coefficients of a G-sphere: the
/// "sticks" of plane-wave codes. A wavefunction sphere fills about a fifth of the lines and half
/// of the planes of its grid, so sphere transforms do a bit over half the work of full ones.
#[derive(Clone, Debug)]
pub struct Sticks {
    lines: Vec<bool>,
    planes: Vec<bool>,
}

impl Sticks {
    /// The sticks of the Miller indices `millers` on `grid`.
    pub fn new(grid: FftGrid, millers: &[[i32; 3]]) -> Self {
        let [n0, n1, _] = grid.dims;
        let mut lines = vec![false; n0 * n1];
        let mut planes = vec![false; n0];
        for m in millers {
            let i0 = m[0].rem_euclid(n0 as i32) as usize;
            let i1 = m[1].rem_euclid(n1 as i32) as usize;
            lines[i0 * n1 + i1] = true;
            planes[i0] = true;
        }
        Self { lines, planes }
    }

    /// Number of z-lines that hold coefficients.
    pub fn n_lines(&self) -> usize {
        self.lines.iter().filter(|&&b| b).count()
    }
}

/// Columns gathered per block in the strided passes.
const BLOCK: usize = 8;

/// Planes written back together after the axis-0 pass.
const PLANES: usize = 8;

/// Transform every contiguous line of length `len` in `buf`.
pub(crate) fn lines(buf: &mut [C64], len: usize, plan: &Arc<dyn Fft<f64>>) {
    let scratch_len = plan.get_inplace_scratch_len();
    buf.par_chunks_mut(len * LINES_PER_TASK).for_each_init(
        || vec![C64::new(0.0, 0.0); scratch_len],
        |scratch, chunk| plan.process_with_scratch(chunk, scratch),
    );
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::grid::miller_to_index;
    use std::f64::consts::PI;

    fn naive(data: &[C64], dims: [usize; 3], sign: f64) -> Vec<C64> {
        let n = dims[0] * dims[1] * dims[2];
        let mut out = vec![C64::new(0.0, 0.0); n];
        for g0 in 0..dims[0] {
            for g1 in 0..dims[1] {
                for g2 in 0..dims[2] {
                    let mut s = C64::new(0.0, 0.0);
                    for r0 in 0..dims[0] {
                        for r1 in 0..dims[1] {
                            for r2 in 0..dims[2] {
                                let ph = 2.0
                                    * PI
                                    * ((g0 * r0) as f64 / dims[0] as f64
                                        + (g1 * r1) as f64 / dims[1] as f64
                                        + (g2 * r2) as f64 / dims[2] as f64);
                                s += data[(r0 * dims[1] + r1) * dims[2] + r2]
                                    * C64::from_polar(1.0, sign * ph);
                            }
                        }
                    }
                    out[(g0 * dims[1] + g1) * dims[2] + g2] = s;
                }
            }
        }
        out
    }

    #[test]
    fn matches_naive_dft_and_inverts() {
        let dims = [6, 5, 4];
        let grid = FftGrid { dims };
        let n = grid.len();
        let data: Vec<C64> = (0..n)
            .map(|i| C64::new((i as f64 * 0.37).sin(), (i as f64 * 1.3).cos()))
            .collect();
        let fft = Fft3d::new(grid);
        let mut work = vec![C64::new(0.0, 0.0); n];
        let mut x = data.clone();
        fft.backward(&mut x, &mut work);
        let reference = naive(&data, dims, 1.0);
        for (a, b) in x.iter().zip(&reference) {
            assert!((a - b).norm() < 1e-10, "{a} vs {b}");
        }
        fft.forward(&mut x, &mut work);
        for (a, b) in x.iter().zip(&data) {
            assert!((a - b).norm() < 1e-12);
        }
    }

    #[test]
    fn sphere_transforms_equal_full_ones_on_the_sphere() {
        let dims = [12, 10, 9];
        let grid = FftGrid { dims };
        let fft = Fft3d::new(grid);
        let millers: Vec<[i32; 3]> = (-2..=2)
            .flat_map(|a| (-2..=2).flat_map(move |b| (-2..=2).map(move |c| [a, b, c])))
            .filter(|m| m[0] * m[0] + m[1] * m[1] + m[2] * m[2] <= 5)
            .collect();
        let sticks = Sticks::new(grid, &millers);
        assert!(sticks.n_lines() < dims[0] * dims[1] / 2);
        let n = grid.len();
        let mut full = vec![C64::new(0.0, 0.0); n];
        for (i, m) in millers.iter().enumerate() {
            full[miller_to_index(dims, *m)] = C64::new(i as f64 * 0.1, 1.0 - i as f64 * 0.05);
        }
        let mut sph = full.clone();
        let mut work = vec![C64::new(0.0, 0.0); n];
        fft.backward(&mut full, &mut work);
        fft.backward_sphere(&mut sph, &mut work, &sticks);
        for (a, b) in full.iter().zip(&sph) {
            assert!((a - b).norm() < 1e-12);
        }
        // Multiply by a real field and come back: compare on the sphere only.
        for (i, (a, b)) in full.iter_mut().zip(sph.iter_mut()).enumerate() {
            let v = 1.0 + (i as f64 * 0.01).cos();
            *a *= v;
            *b *= v;
        }
        fft.forward_unnormalized(&mut full, &mut work);
        fft.forward_sphere_unnormalized(&mut sph, &mut work, &sticks);
        for m in &millers {
            let k = miller_to_index(dims, *m);
            assert!((full[k] - sph[k]).norm() < 1e-10 * full[k].norm().max(1.0));
        }
    }

    #[test]
    fn plane_wave_lands_on_its_miller_index() {
        let dims = [8, 9, 10];
        let grid = FftGrid { dims };
        let fft = Fft3d::new(grid);
        let m = [-2, 3, 1];
        let mut x: Vec<C64> = (0..grid.len())
            .map(|i| {
                let (r0, r1, r2) = (i / 90, (i / 10) % 9, i % 10);
                let ph = 2.0
                    * PI
                    * (m[0] as f64 * r0 as f64 / 8.0
                        + m[1] as f64 * r1 as f64 / 9.0
                        + m[2] as f64 * r2 as f64 / 10.0);
                C64::from_polar(1.0, ph)
            })
            .collect();
        let mut work = vec![C64::new(0.0, 0.0); grid.len()];
        fft.forward(&mut x, &mut work);
        let k = miller_to_index(dims, m);
        for (i, v) in x.iter().enumerate() {
            let expect = if i == k { 1.0 } else { 0.0 };
            assert!((v.re - expect).abs() < 1e-12 && v.im.abs() < 1e-12);
        }
    }
}
