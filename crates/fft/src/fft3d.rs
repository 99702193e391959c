//! `Fft3d`: the serial (one-rank) 3-D complex FFT on a C-order grid, from cached rustfft plans.
//!
//! Axis 2 is contiguous and transformed in place. Axis 1 is done plane by plane right after
//! (backward) or before (forward) axis 2 of the same plane, so the plane is still in cache;
//! its columns are copied [`COLS`] at a time into a small per-thread block of contiguous
//! lines, transformed there and copied back. Axis 0 works the same way on blocks of `COLS`
//! columns of the `n0 x (n1 n2)` view, in place: each thread owns a range of columns of every
//! plane. Sphere transforms skip what is zero (backward: rows outside the sticks are not read)
//! and what is not wanted (forward: rows outside the sticks are not written back).
//! Every pass works in place with small per-thread blocks: no grid-sized scratch is needed.

use crate::grid::FftGrid;
use crate::C64;
use rayon::prelude::*;
use rustfft::{Fft, FftDirection, FftPlanner};
use std::sync::Arc;

/// Lines per rayon task (amortises task overhead on small grids).
const LINES_PER_TASK: usize = 16;

/// Columns copied into one block of contiguous lines in the strided passes: 32 columns are
/// 512 contiguous bytes of a row, and a block of 32 lines of up to 90 points fits in a 48 KiB
/// L1. si8 displaced (36^3), one thread, alternated: 3.07-3.14 s with 32 against 3.17-3.28 s
/// with 16 and 3.31-3.40 s with 8; si64 Γ (72^3) the same within noise (2026-11-23).
const COLS: usize = 32;

const ZERO: C64 = C64 { re: 0.0, im: 0.0 };

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

/// Which rows of a strided pass hold data (`None`: all of them).
type RowMask<'a> = Option<&'a [bool]>;

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

    /// `f(G) = (1/N) sum_r f(r) e^{-iG.r}` in place .
    pub fn forward(&self, data: &mut [C64]) {
        self.forward_unnormalized(data);
        let s = 1.0 / self.grid.len() as f64;
        data.par_iter_mut().for_each(|x| *x *= s);
    }

    /// `f(G) = sum_r f(r) e^{-iG.r}` in place (no 1/N normalisation).
    pub fn forward_unnormalized(&self, data: &mut [C64]) {
        self.check(data);
        self.axis0(data, &self.fwd[0], None, None);
        self.planes(data, &self.fwd, false, None);
    }

    /// `f(r) = sum_G f(G) e^{iG.r}` in place .
    pub fn backward(&self, data: &mut [C64]) {
        self.check(data);
        self.planes(data, &self.inv, true, None);
        self.axis0(data, &self.inv[0], None, None);
    }

    /// Backward transform of a field whose coefficients lie only in the z-lines of `sticks`
    /// (e.g. a wavefunction sphere). Only those lines of `data` are read: the rest of the
    /// input may hold anything (it is overwritten by the result).
    pub fn backward_sphere(&self, data: &mut [C64], sticks: &Sticks) {
        self.check(data);
        self.planes(data, &self.inv, true, Some(sticks));
        self.axis0(data, &self.inv[0], Some(&sticks.planes), None);
    }

    /// Unnormalised forward transform, computing only the coefficients on the z-lines of
    /// `sticks` (everything else in `data` is left undefined).
    pub fn forward_sphere_unnormalized(&self, data: &mut [C64], sticks: &Sticks) {
        self.check(data);
        self.axis0(data, &self.fwd[0], None, Some(&sticks.planes));
        self.planes(data, &self.fwd, false, Some(sticks));
    }

    /// A real potential applied to a sphere field: backward sphere transform, `v(r)` times the
    /// field at every point, unnormalised forward transform, as [`Fft3d::backward_sphere`],
    /// a pointwise product and [`Fft3d::forward_sphere_unnormalized`] give it, bit for bit.
    /// The axis-0 passes of both transforms and the product run on one block of columns while
    /// it is in cache, so the full real-space field is never written out: only the z-lines of
    /// `sticks` in `data` are read, and only they are defined afterwards.
    pub fn apply_potential_sphere(&self, data: &mut [C64], v: &[f64], sticks: &Sticks) {
        self.check(data);
        assert_eq!(v.len(), data.len(), "potential has the wrong length");
        self.planes(data, &self.inv, true, Some(sticks));
        self.axis0_through(data, v, &sticks.planes);
        self.planes(data, &self.fwd, false, Some(sticks));
    }

    /// Backward sphere transform consumed where it is made: `f(&mut out[r], psi(r))` at every
    /// point `r`, with `psi(r)` what [`Fft3d::backward_sphere`] gives, bit for bit, but never
    /// stored in `data` (whose contents are undefined afterwards). The density's sum of
    /// `|psi|^2` reads each column block of the last axis while it is in cache.
    pub fn backward_sphere_fold(
        &self,
        data: &mut [C64],
        sticks: &Sticks,
        out: &mut [f64],
        f: impl Fn(&mut f64, C64) + Sync,
    ) {
        self.check(data);
        assert_eq!(out.len(), data.len(), "output field has the wrong length");
        self.planes(data, &self.inv, true, Some(sticks));
        let n0 = self.grid.dims[0];
        let plan = &self.inv[0];
        let ranges = self.column_ranges(data).into_par_iter();
        ranges.zip(self.column_ranges(out)).for_each_init(
            || StridedBuffers::new(plan),
            |bufs, (rows, mut out_rows)| {
                let w = rows[0].len();
                for c0 in (0..w).step_by(COLS) {
                    let nc = COLS.min(w - c0);
                    bufs.gather(&rows, c0, nc, n0, Some(&sticks.planes));
                    bufs.transform(plan, nc * n0);
                    bufs.fold(&mut out_rows, c0, nc, n0, &f);
                }
            },
        );
    }

    /// Buffers for [`Fft3d::plane_axis1`] (one set per thread).
    pub(crate) fn plane_buffers(&self) -> StridedBuffers {
        StridedBuffers::new(&self.fwd[1])
    }

    /// Axis 1 of one plane (`n1 n2` values), for callers that do axis 2 themselves
    /// ([`crate::RealFft3d`]).
    pub(crate) fn plane_axis1(&self, plane: &mut [C64], inverse: bool, bufs: &mut StridedBuffers) {
        let plans = if inverse { &self.inv } else { &self.fwd };
        self.axis1(plane, &plans[1], None, None, bufs);
    }

    /// Axis 0 of the whole grid.
    pub(crate) fn full_axis0(&self, data: &mut [C64], inverse: bool) {
        let plans = if inverse { &self.inv } else { &self.fwd };
        self.axis0(data, &plans[0], None, None);
    }

    fn check(&self, data: &[C64]) {
        assert_eq!(data.len(), self.grid.len(), "FFT data has the wrong length");
    }

    /// Axes 2 and 1 of every plane (only the planes and z-lines of `sticks`, if given), plane
    /// by plane: axis 2 then 1 (`backward`) or 1 then 2.
    fn planes(
        &self,
        data: &mut [C64],
        plans: &[Arc<dyn Fft<f64>>; 3],
        backward: bool,
        sticks: Option<&Sticks>,
    ) {
        let [_, n1, n2] = self.grid.dims;
        let m = n1 * n2;
        let s2 = plans[2].get_inplace_scratch_len();
        data.par_chunks_mut(m)
            .enumerate()
            .filter(|(i0, _)| sticks.is_none_or(|s| s.planes[*i0]))
            .for_each_init(
                || (StridedBuffers::new(&plans[1]), vec![ZERO; s2]),
                |(bufs, scratch2), (i0, plane)| {
                    let lines = sticks.map(|s| &s.lines[i0 * n1..(i0 + 1) * n1]);
                    let axis2 = |plane: &mut [C64], scratch2: &mut Vec<C64>| match lines {
                        None => plans[2].process_with_scratch(plane, scratch2),
                        Some(mask) => {
                            for (line, _) in plane.chunks_exact_mut(n2).zip(mask).filter(|x| *x.1) {
                                plans[2].process_with_scratch(line, scratch2);
                            }
                        }
                    };
                    if backward {
                        axis2(plane, scratch2);
                        self.axis1(plane, &plans[1], lines, None, bufs);
                    } else {
                        self.axis1(plane, &plans[1], None, lines, bufs);
                        axis2(plane, scratch2);
                    }
                },
            );
    }

    /// Axis 1 of one plane: columns in blocks of [`COLS`]; rows outside `read` count as zero,
    /// rows outside `write` are not written back.
    fn axis1(
        &self,
        plane: &mut [C64],
        plan: &Arc<dyn Fft<f64>>,
        read: RowMask<'_>,
        write: RowMask<'_>,
        bufs: &mut StridedBuffers,
    ) {
        let [_, n1, n2] = self.grid.dims;
        let mut rows: Vec<&mut [C64]> = plane.chunks_exact_mut(n2).collect();
        for c0 in (0..n2).step_by(COLS) {
            let nc = COLS.min(n2 - c0);
            bufs.columns(&mut rows, c0, nc, n1, plan, read, write);
        }
    }

    /// Axis 0: the `n0 x (n1 n2)` view in blocks of [`COLS`] columns, in place; every thread
    /// takes a contiguous range of columns of all planes. Planes outside `read` count as zero,
    /// planes outside `write` are not written back.
    fn axis0(
        &self,
        data: &mut [C64],
        plan: &Arc<dyn Fft<f64>>,
        read: RowMask<'_>,
        write: RowMask<'_>,
    ) {
        let n0 = self.grid.dims[0];
        self.column_ranges(data).into_par_iter().for_each_init(
            || StridedBuffers::new(plan),
            |bufs, mut rows| {
                let w = rows[0].len();
                for c0 in (0..w).step_by(COLS) {
                    bufs.columns(&mut rows, c0, COLS.min(w - c0), n0, plan, read, write);
                }
            },
        );
    }

    /// Axis 0 backward, the product with `v`, axis 0 forward, on each block of [`COLS`]
    /// columns in turn (reading and writing only the planes in `planes`).
    fn axis0_through(&self, data: &mut [C64], v: &[f64], planes: &[bool]) {
        let n0 = self.grid.dims[0];
        let (inv, fwd) = (&self.inv[0], &self.fwd[0]);
        let ranges = self.column_ranges(data);
        let width = ranges[0][0].len();
        let m = data_plane(self.grid);
        // The potential's rows cut exactly as the data's.
        let v_rows = |r: usize| {
            v.chunks_exact(m)
                .map(move |p| &p[r * width..(r * width + width).min(m)])
        };
        ranges.into_par_iter().enumerate().for_each_init(
            || StridedBuffers::new(inv).with_scratch_for(fwd),
            |bufs, (r, mut rows)| {
                let v: Vec<&[f64]> = v_rows(r).collect();
                let w = rows[0].len();
                for c0 in (0..w).step_by(COLS) {
                    let nc = COLS.min(w - c0);
                    bufs.gather(&rows, c0, nc, n0, Some(planes));
                    bufs.transform(inv, nc * n0);
                    bufs.multiply(&v, c0, nc, n0);
                    bufs.transform(fwd, nc * n0);
                    bufs.scatter(&mut rows, c0, nc, n0, Some(planes));
                }
            },
        );
    }

    /// The `n0 x (n1 n2)` view of `data` cut into column ranges, each a list of its `n0`
    /// row pieces: a few ranges per thread for balance, each a whole number of [`COLS`] blocks
    /// wide (the last one may be narrower).
    fn column_ranges<'a, T>(&self, data: &'a mut [T]) -> Vec<Vec<&'a mut [T]>> {
        let n0 = self.grid.dims[0];
        let m = data_plane(self.grid);
        let parts = (4 * rayon::current_num_threads())
            .min(m.div_ceil(COLS))
            .max(1);
        let width = m.div_ceil(parts).div_ceil(COLS) * COLS;
        let mut ranges: Vec<Vec<&mut [T]>> = (0..m.div_ceil(width))
            .map(|_| Vec::with_capacity(n0))
            .collect();
        for plane in data.chunks_exact_mut(m) {
            for (range, piece) in ranges.iter_mut().zip(plane.chunks_mut(width)) {
                range.push(piece);
            }
        }
        ranges
    }
}

/// Points in one `i0` plane of `grid`.
fn data_plane(grid: FftGrid) -> usize {
    grid.dims[1] * grid.dims[2]
}

/// Per-thread buffers of a strided pass: a block of `COLS` contiguous lines and FFT scratch.
pub(crate) struct StridedBuffers {
    lines: Vec<C64>,
    scratch: Vec<C64>,
}

impl StridedBuffers {
    fn new(plan: &Arc<dyn Fft<f64>>) -> Self {
        Self {
            lines: vec![ZERO; COLS * plan.len()],
            scratch: vec![ZERO; plan.get_inplace_scratch_len()],
        }
    }

    /// These buffers with scratch enough for `plan` as well.
    fn with_scratch_for(mut self, plan: &Arc<dyn Fft<f64>>) -> Self {
        let len = plan.get_inplace_scratch_len().max(self.scratch.len());
        self.scratch.resize(len, ZERO);
        self
    }

    /// Transform columns `c0..c0 + nc` of `rows` (`n` rows): copy them into contiguous lines
    /// (rows outside `read` as zeros), transform, copy back (rows inside `write`).
    #[allow(clippy::too_many_arguments)]
    fn columns(
        &mut self,
        rows: &mut [&mut [C64]],
        c0: usize,
        nc: usize,
        n: usize,
        plan: &Arc<dyn Fft<f64>>,
        read: RowMask<'_>,
        write: RowMask<'_>,
    ) {
        self.gather(rows, c0, nc, n, read);
        self.transform(plan, nc * n);
        self.scatter(rows, c0, nc, n, write);
    }

    /// Columns `c0..c0 + nc` of the `n` rows into the contiguous lines (rows outside `read`
    /// as zeros).
    fn gather<R: AsRef<[C64]>>(
        &mut self,
        rows: &[R],
        c0: usize,
        nc: usize,
        n: usize,
        read: RowMask<'_>,
    ) {
        let lines = &mut self.lines[..nc * n];
        for (i, row) in rows.iter().enumerate() {
            if read.is_none_or(|r| r[i]) {
                for (line, &v) in lines.chunks_exact_mut(n).zip(&row.as_ref()[c0..c0 + nc]) {
                    line[i] = v;
                }
            } else {
                for line in lines.chunks_exact_mut(n) {
                    line[i] = ZERO;
                }
            }
        }
    }

    /// Transform the first `len` values of the lines (whole lines of `plan`'s length).
    fn transform(&mut self, plan: &Arc<dyn Fft<f64>>, len: usize) {
        plan.process_with_scratch(&mut self.lines[..len], &mut self.scratch);
    }

    /// Line `c` (column `c0 + c`) times the potential's column `c0 + c` of `v_rows`.
    fn multiply(&mut self, v_rows: &[&[f64]], c0: usize, nc: usize, n: usize) {
        let lines = &mut self.lines[..nc * n];
        for (i, row) in v_rows.iter().enumerate() {
            for (line, &v) in lines.chunks_exact_mut(n).zip(&row[c0..c0 + nc]) {
                line[i] *= v;
            }
        }
    }

    /// `f(&mut out, value)` for every value of the lines and its place in columns
    /// `c0..c0 + nc` of `out_rows`.
    fn fold(
        &self,
        out_rows: &mut [&mut [f64]],
        c0: usize,
        nc: usize,
        n: usize,
        f: &impl Fn(&mut f64, C64),
    ) {
        let lines = &self.lines[..nc * n];
        for (i, row) in out_rows.iter_mut().enumerate() {
            for (line, o) in lines.chunks_exact(n).zip(&mut row[c0..c0 + nc]) {
                f(o, line[i]);
            }
        }
    }

    /// The lines back into columns `c0..c0 + nc` of the rows inside `write`.
    fn scatter(&self, rows: &mut [&mut [C64]], c0: usize, nc: usize, n: usize, write: RowMask<'_>) {
        let lines = &self.lines[..nc * n];
        for (i, row) in rows.iter_mut().enumerate() {
            if write.is_none_or(|w| w[i]) {
                for (line, v) in lines.chunks_exact(n).zip(&mut row[c0..c0 + nc]) {
                    *v = line[i];
                }
            }
        }
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

    /// Zero the z-lines of the sticks in `data` (a grid of `n0 n1 n2` values): all that
    /// [`Fft3d::backward_sphere`] reads, so the rest of the grid need not be cleared before
    /// the sphere coefficients are placed.
    pub fn clear_lines(&self, data: &mut [C64]) {
        let n2 = data.len() / self.lines.len();
        for (line, _) in data.chunks_exact_mut(n2).zip(&self.lines).filter(|x| *x.1) {
            line.fill(ZERO);
        }
    }
}

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
        let mut x = data.clone();
        fft.backward(&mut x);
        let reference = naive(&data, dims, 1.0);
        for (a, b) in x.iter().zip(&reference) {
            assert!((a - b).norm() < 1e-10, "{a} vs {b}");
        }
        fft.forward(&mut x);
        for (a, b) in x.iter().zip(&data) {
            assert!((a - b).norm() < 1e-12);
        }
    }

    #[test]
    fn sphere_transforms_equal_full_ones_on_the_sphere() {
        // Small, odd and larger-than-a-block grids (several column ranges and partial blocks).
        for (dims, r) in [([12, 10, 9], 2), ([20, 18, 35], 4), ([9, 40, 24], 3)] {
            let grid = FftGrid { dims };
            let fft = Fft3d::new(grid);
            let millers: Vec<[i32; 3]> = (-r..=r)
                .flat_map(|a| (-r..=r).flat_map(move |b| (-r..=r).map(move |c| [a, b, c])))
                .filter(|m| m[0] * m[0] + m[1] * m[1] + m[2] * m[2] <= r * r + 1)
                .collect();
            let sticks = Sticks::new(grid, &millers);
            assert!(sticks.n_lines() < dims[0] * dims[1] / 2);
            let n = grid.len();
            let mut full = vec![C64::new(0.0, 0.0); n];
            for (i, m) in millers.iter().enumerate() {
                full[miller_to_index(dims, *m)] = C64::new(i as f64 * 0.1, 1.0 - i as f64 * 0.05);
            }
            // Outside its z-lines the sphere transform must not read its input.
            let mut sph = full.clone();
            for (i, v) in sph.iter_mut().enumerate() {
                if !sticks.lines[i / dims[2]] {
                    *v = C64::new(f64::NAN, f64::NAN);
                }
            }
            let mut fused = sph.clone();
            fft.backward(&mut full);
            fft.backward_sphere(&mut sph, &sticks);
            let backward = sph.clone();
            for (a, b) in full.iter().zip(&sph) {
                assert!((a - b).norm() < 1e-12, "{dims:?}: {a} vs {b}");
            }
            // Multiply by a real field and come back: compare on the sphere only.
            let v: Vec<f64> = (0..n).map(|i| 1.0 + (i as f64 * 0.01).cos()).collect();
            for ((a, b), v) in full.iter_mut().zip(sph.iter_mut()).zip(&v) {
                *a *= v;
                *b *= v;
            }
            fft.forward_unnormalized(&mut full);
            fft.forward_sphere_unnormalized(&mut sph, &sticks);
            // The folded backward transform hands on the same values.
            let mut folded = vec![0.0; n];
            let mut input = fused.clone();
            fft.backward_sphere_fold(&mut input, &sticks, &mut folded, |o, z| *o += z.re - z.im);
            for (o, z) in folded.iter().zip(&backward) {
                assert_eq!(*o, z.re - z.im, "{dims:?}");
            }
            // The fused transform is the three steps bit for bit.
            fft.apply_potential_sphere(&mut fused, &v, &sticks);
            for m in &millers {
                let k = miller_to_index(dims, *m);
                assert!((full[k] - sph[k]).norm() < 1e-10 * full[k].norm().max(1.0));
                assert_eq!(fused[k], sph[k], "{dims:?} {m:?}");
            }
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
        fft.forward(&mut x);
        let k = miller_to_index(dims, m);
        for (i, v) in x.iter().enumerate() {
            let expect = if i == k { 1.0 } else { 0.0 };
            assert!((v.re - expect).abs() < 1e-12 && v.im.abs() < 1e-12);
        }
    }
}
