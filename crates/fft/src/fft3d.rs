//! `Fft3d`: the serial (one-rank) 3-D complex FFT on a C-order grid, from cached rustfft plans.
//!
//! Axis 2 is contiguous and transformed in place; axis 1 is transformed plane by plane through a
//! small per-thread buffer of gathered columns; axis 0 is gathered block-wise into the caller's
//! work buffer, transformed there in the same pass, and written back plane by plane.
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

    fn transform(&self, data: &mut [C64], work: &mut [C64], plans: &[Arc<dyn Fft<f64>>; 3]) {
        let [n0, n1, n2] = self.grid.dims;
        let n = n0 * n1 * n2;
        assert_eq!(data.len(), n, "FFT data has the wrong length");
        assert!(work.len() >= n, "FFT work buffer too small");
        let work = &mut work[..n];
        let m = n1 * n2;
        // Axis 2: contiguous lines, in place.
        lines(data, n2, &plans[2]);
        // Axis 1: inside each (contiguous) plane, gather B columns into scratch lines, transform,
        // scatter back.
        let plan1 = &plans[1];
        let s1 = plan1.get_inplace_scratch_len();
        data.par_chunks_mut(m).for_each_init(
            || {
                (
                    vec![C64::new(0.0, 0.0); BLOCK * n1],
                    vec![C64::new(0.0, 0.0); s1],
                )
            },
            |(lines_buf, scratch), plane| {
                for c0 in (0..n2).step_by(BLOCK) {
                    let nc = BLOCK.min(n2 - c0);
                    let buf = &mut lines_buf[..nc * n1];
                    for i1 in 0..n1 {
                        let row = &plane[i1 * n2 + c0..i1 * n2 + c0 + nc];
                        for (c, &v) in row.iter().enumerate() {
                            buf[c * n1 + i1] = v;
                        }
                    }
                    plan1.process_with_scratch(buf, scratch);
                    for i1 in 0..n1 {
                        let row = &mut plane[i1 * n2 + c0..i1 * n2 + c0 + nc];
                        for (c, v) in row.iter_mut().enumerate() {
                            *v = buf[c * n1 + i1];
                        }
                    }
                }
            },
        );
        // Axis 0: gather blocks of B columns of the (n0 x m) view into `work` as contiguous lines
        // and transform them there (one fused pass), then write back plane by plane.
        let plan0 = &plans[0];
        let s0 = plan0.get_inplace_scratch_len();
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
                plan0.process_with_scratch(w, scratch);
            },
        );
        let w: &[C64] = work;
        data.par_chunks_mut(m).enumerate().for_each(|(i0, plane)| {
            for (j, v) in plane.iter_mut().enumerate() {
                *v = w[j * n0 + i0];
            }
        });
    }
}

/// Columns gathered per block in the strided passes.
const BLOCK: usize = 8;

/// Transform every contiguous line of length `len` in `buf`.
fn lines(buf: &mut [C64], len: usize, plan: &Arc<dyn Fft<f64>>) {
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
