//! `BandScalar`: what a band block's element type must do on the FFT grid.
//!
//! Two implementations: `c64` (general k: one complex coefficient per plane wave) and `f64` (the
//! Γ-point real path: a band is the real vector [c(0), sqrt2 Re c(G), sqrt2 Im c(G), ...] over half
//! the sphere, see [`crate::basis`]). The real path puts TWO bands into one complex FFT,
//! psi_a(r) + i psi_b(r), and separates them again with the +-G symmetry, halving FFT work.
//!
//! A k-point whose plane waves are dealt over a G-vector group (`kpt.dist`) goes through the
//! distributed transform ([`crate::gvectors::KDist`]) with the whole band block at once; the
//! serial path transforms bands on rayon threads with sphere-restricted FFTs.

use crate::basis::{Basis, Kpoint};
use crate::device_local::DeviceLocal;
use crate::gvectors::FIELDS_PER_ROUND;
use crate::operators::LocalOperator;
use num_complex::Complex64;
use planewave_fft::Fft3d;
use planewave_linalg::{Mat, MatMut, MatRef, Scalar};
use rayon::prelude::*;
use std::f64::consts::SQRT_2;

/// `(-i)^l` as a sign and whether real and imaginary parts swap: `(-i)^l z` is `sign z` for
/// even `l`, `sign (Im z, -Re z)` for odd `l`.
fn rotation(l: usize) -> (f64, bool) {
    match l % 4 {
        0 => (1.0, false),
        1 => (1.0, true),
        2 => (-1.0, false),
        _ => (-1.0, true),
    }
}

/// Element type of band blocks, with its grid operations.
pub trait BandScalar: Scalar {
    /// `out = (D + V) psi` for a block (columns are bands): `D` diagonal in the band-vector
    /// components (the kinetic energy), `V` a potential at this rank's grid points.
    fn apply_local(
        kpt: &Kpoint,
        fft: &Fft3d,
        diagonal_and_potential: (&[f64], &[f64]),
        psi: MatRef<'_, Self>,
        out: MatMut<'_, Self>,
    );
    /// `acc(r) += sum_n w_n |psi_n(r)|^2` with psi(r) = sum_G c(G) e^{i(k+G)r} (no 1/Omega).
    fn add_density(kpt: &Kpoint, fft: &Fft3d, psi: &Mat<Self>, weights: &[f64], acc: &mut [f64]);
    /// Convert complex plane-wave columns (over the k-point's sphere) to this representation.
    fn from_plane_waves(kpt: &Kpoint, p: &Mat<Complex64>) -> Mat<Self>;
    /// The inverse of [`from_plane_waves`](Self::from_plane_waves): the complex coefficients of
    /// the local plane waves (rows) of the columns `cols` of `psi`.
    fn to_plane_waves(kpt: &Kpoint, psi: &Mat<Self>, cols: &[usize]) -> Mat<Complex64>;
    /// The rows of this representation that hold the local plane waves `h0..h1` (`g0`: the
    /// first local plane wave is G = 0, see [`Kpoint::holds_g0`]).
    fn plane_wave_rows(g0: bool, h0: usize, h1: usize) -> std::ops::Range<usize>;
    /// The coefficients `(-i)^l r[j] ph[j]` of the local plane waves `h0 + j` (a real
    /// function's: `r` real) in this representation, into `out` (their
    /// [`plane_wave_rows`](Self::plane_wave_rows)).
    fn phased_into(g0: bool, h0: usize, l: usize, r: &[f64], ph: &[Complex64], out: &mut [Self]);
    /// The bands multiplied coefficient by coefficient by `i (k+G)_dir` (the gradient along
    /// Cartesian `dir`), in this representation.
    fn times_i_kpg(kpt: &Kpoint, psi: MatRef<'_, Self>, dir: usize) -> Mat<Self>;
    /// The bands' values `u(r) = sum_G c(G) e^{iGr}` (the periodic part, no 1/sqrt(Omega)) at
    /// this rank's grid points, one field per column: real for Γ-real bands. Collective on
    /// the G-vector group.
    fn to_grid(kpt: &Kpoint, fft: &Fft3d, psi: MatRef<'_, Self>) -> Vec<Vec<Self>>;
    /// Band vectors of grid fields: the coefficients `(1/N) sum_r f(r) e^{-iGr}` on the
    /// k-point's plane waves, one column per field (for Γ-real bands the fields must be
    /// real). Collective on the G-vector group.
    fn from_grid(kpt: &Kpoint, fft: &Fft3d, fields: &[Vec<Self>]) -> Mat<Self>;
    /// Every field replaced by its convolution with `kernel`: `FFT^-1[kernel(G) FFT[f](G)]`
    /// over the density sphere (`kernel` on this rank's sphere entries). Real fields go two
    /// per complex transform, which needs `kernel(-G) = kernel(G)`. Collective on the
    /// G-vector group.
    fn convolve(basis: &Basis, kernel: &[f64], fields: &mut [Vec<Self>]);
    /// A seeded random starting block of the bands `bands` (global indices), damped at high
    /// kinetic energy: band `b` is drawn from the stream `(seed, b)`, so a band's start does
    /// not depend on who computes it.
    fn random(kpt: &Kpoint, bands: &[usize], seed: u64) -> Mat<Self>;
    /// `d` as the local operator of this representation's bands.
    fn device_local(d: &DeviceLocal) -> &dyn LocalOperator<Self>;
}

/// Items per rayon task so that each thread gets one contiguous share: the per-task partial
/// sums are then allocated once per thread, not once per band.
fn per_thread(items: usize) -> usize {
    items.div_ceil(rayon::current_num_threads()).max(1)
}

/// A `rows × bands.len()` random block: row `i` of the column of band `b` is
/// `make(draws, kinetic[i])`, where `draws` are the `per_row` numbers of the row's global
/// index `global[i]` in the stream `(seed, b)` (drawn in global row order), so a band's start
/// does not depend on the layout.
fn random_columns<T: Scalar>(
    global: &[usize],
    n_global: usize,
    kinetic: &[f64],
    bands: &[usize],
    seed: u64,
    per_row: usize,
    make: impl Fn(&[f64], f64) -> T,
) -> Mat<T> {
    let mut m = Mat::zeros(global.len(), bands.len());
    let rows = (global, n_global, per_row);
    each_with_draws(m.as_mut(), rows, bands, seed, |x, i, v| {
        *v = make(x, kinetic[i])
    });
    m
}

/// `f(draws, i, &mut m[(i, c)])` for every entry of `m`, whose column `c` is band `bands[c]`:
/// `draws` are the `per_row` numbers of the row's global index `global[i]` in the stream
/// `(seed, bands[c])`, drawn in global row order (the same numbers on every layout).
fn each_with_draws<T: Scalar>(
    mut m: MatMut<'_, T>,
    (global, n_global, per_row): (&[usize], usize, usize),
    bands: &[usize],
    seed: u64,
    f: impl Fn(&[f64], usize, &mut T),
) {
    let mut draws = vec![0.0; n_global * per_row];
    for (c, &b) in bands.iter().enumerate() {
        let mut rng = crate::rng::stream(seed, &[b as u64]);
        draws.iter_mut().for_each(|x| *x = rng.next_centered());
        let col = col_mut(m.as_mut().subcols_mut(c, 1));
        for (i, (x, &g)) in col.iter_mut().zip(global).enumerate() {
            f(&draws[g * per_row..(g + 1) * per_row], i, x);
        }
    }
}

/// Every coefficient of the block `m` at `kpt` (its columns named `bands`: global bands, or
/// orbitals) multiplied by `1 + amplitude r`, r uniform in [-1, 1) and drawn per global row from
/// the stream `(seed, b)` of its column's name b: like QE's `startingwfc = 'atomic+random'`,
/// whose factor is complex. The noise breaks
/// the symmetry of a start made of atomic orbitals, which Davidson keeps (H commutes with the
/// crystal's operations), so that every symmetry of state can be reached. The same on every
/// layout.
pub fn perturb<T: Scalar>(
    kpt: &Kpoint,
    m: MatMut<'_, T>,
    bands: &[usize],
    seed: u64,
    amplitude: f64,
) {
    let (global, n) = global_rows(kpt);
    each_with_draws(m, (&global, n, 1), bands, seed, |x, _, v| {
        *v = v.scale(1.0 + 2.0 * amplitude * x[0])
    });
}

/// Global row of each local row of a band block (rows are plane waves for complex bands,
/// components for Γ-real ones), and the number of global rows.
fn global_rows(kpt: &Kpoint) -> (Vec<usize>, usize) {
    let Some(d) = &kpt.dist else {
        let n = if kpt.is_gamma_real() {
            kpt.dim()
        } else {
            kpt.npw()
        };
        return ((0..n).collect(), n);
    };
    let pw = d.local_plane_waves();
    if !kpt.is_gamma_real() {
        return (pw.to_vec(), d.npw_global());
    }
    let rows = pw
        .iter()
        .flat_map(|&h| {
            if h == 0 {
                vec![0]
            } else {
                vec![2 * h - 1, 2 * h]
            }
        })
        .collect();
    (rows, kpt.global_dim())
}

fn zeros(n: usize) -> Vec<Complex64> {
    vec![Complex64::new(0.0, 0.0); n]
}

/// The single column of a one-column block, as a mutable slice.
pub(crate) fn col_mut<T: Scalar>(m: MatMut<'_, T>) -> &mut [T] {
    m.col_mut(0)
        .try_as_col_major_mut()
        .expect("band blocks are column-major")
        .as_slice_mut()
}

/// Column `j` of `m` (column-major) as a slice.
pub(crate) fn column<T: Scalar>(m: MatRef<'_, T>, j: usize) -> &[T] {
    m.col(j)
        .try_as_col_major()
        .expect("band blocks are column-major")
        .as_slice()
}

impl BandScalar for Complex64 {
    fn device_local(d: &DeviceLocal) -> &dyn LocalOperator<Self> {
        d
    }

    fn apply_local(
        kpt: &Kpoint,
        fft: &Fft3d,
        (diagonal, veff): (&[f64], &[f64]),
        psi: MatRef<'_, Self>,
        mut out: MatMut<'_, Self>,
    ) {
        let n = fft.grid().len();
        let scale = 1.0 / n as f64;
        if let Some(d) = &kpt.dist {
            // Local coefficients are the local plane waves, in order; one round of fields at a
            // time, so the fields never hold the whole block.
            let (nb, ng) = (psi.ncols(), d.n_coeffs());
            let round = FIELDS_PER_ROUND.min(nb);
            let mut fields = Vec::with_capacity(round * ng);
            for j0 in (0..nb).step_by(round.max(1)) {
                let nf = round.min(nb - j0);
                fields.clear();
                for j in j0..j0 + nf {
                    fields.extend_from_slice(column(psi, j));
                }
                d.apply_potential(&mut fields, nf, veff, scale);
                for (j, f) in (j0..).zip(fields.chunks(ng.max(1)).take(nf)) {
                    let res = col_mut(out.as_mut().subcols_mut(j, 1));
                    let x = column(psi, j);
                    for (((r, v), c), t) in res.iter_mut().zip(f).zip(x).zip(diagonal) {
                        *r = v + c * t;
                    }
                }
            }
            return;
        }
        // One task per band, writing its result straight into its output column: a thread
        // that finishes early takes the next band (the grid is the thread's scratch grid).
        out.par_col_iter_mut().enumerate().for_each(|(j, col)| {
            crate::scratch::with_grid(n, |grid| {
                let res = col
                    .try_as_col_major_mut()
                    .expect("band blocks are column-major")
                    .as_slice_mut();
                let x = column(psi, j);
                kpt.sticks.clear_lines(grid);
                kpt.map.place(x, grid);
                fft.apply_potential_sphere(grid, veff, &kpt.sticks);
                kpt.map.gather(grid, scale, res);
                for ((r, c), t) in res.iter_mut().zip(x).zip(diagonal) {
                    *r += c * t;
                }
            })
        });
    }

    fn add_density(kpt: &Kpoint, fft: &Fft3d, psi: &Mat<Self>, weights: &[f64], acc: &mut [f64]) {
        let bands: Vec<usize> = (0..psi.ncols())
            .filter(|&b| weights[b].abs() > 1e-16)
            .collect();
        if let Some(d) = &kpt.dist {
            let mut fields = Vec::with_capacity(bands.len() * d.n_coeffs());
            for &b in &bands {
                fields.extend_from_slice(psi.col_as_slice(b));
            }
            let w: Vec<(f64, f64)> = bands.iter().map(|&b| (weights[b], weights[b])).collect();
            d.add_density(&mut fields, &w, acc);
            return;
        }
        sum_over_grid(&bands, fft.grid().len(), acc, |&b, grid, sum| {
            kpt.sticks.clear_lines(grid);
            kpt.map.place(psi.col_as_slice(b), grid);
            let w = weights[b];
            fft.backward_sphere_fold(grid, &kpt.sticks, sum, |a, z| *a += w * z.norm_sqr());
        });
    }

    fn from_plane_waves(_kpt: &Kpoint, p: &Mat<Complex64>) -> Mat<Self> {
        p.clone()
    }

    fn to_plane_waves(_kpt: &Kpoint, psi: &Mat<Self>, cols: &[usize]) -> Mat<Complex64> {
        Mat::from_fn(psi.nrows(), cols.len(), |i, j| psi[(i, cols[j])])
    }

    fn plane_wave_rows(_g0: bool, h0: usize, h1: usize) -> std::ops::Range<usize> {
        h0..h1
    }

    fn phased_into(_g0: bool, _h0: usize, l: usize, r: &[f64], ph: &[Complex64], out: &mut [Self]) {
        let (sign, swap) = rotation(l);
        for ((o, &x), &z) in out.iter_mut().zip(r).zip(ph) {
            let (a, b) = (sign * x * z.re, sign * x * z.im);
            *o = if swap {
                Complex64::new(b, -a)
            } else {
                Complex64::new(a, b)
            };
        }
    }

    fn times_i_kpg(kpt: &Kpoint, psi: MatRef<'_, Self>, dir: usize) -> Mat<Self> {
        Mat::from_fn(psi.nrows(), psi.ncols(), |i, j| {
            psi[(i, j)] * Complex64::new(0.0, kpt.kpg[i][dir])
        })
    }

    fn to_grid(kpt: &Kpoint, fft: &Fft3d, psi: MatRef<'_, Self>) -> Vec<Vec<Self>> {
        let nb = psi.ncols();
        if let Some(d) = &kpt.dist {
            let coeffs: Vec<Complex64> = (0..nb).flat_map(|j| column(psi, j).to_vec()).collect();
            let real = d.to_real(&coeffs, nb);
            return real
                .chunks(d.layout().len().max(1))
                .take(nb)
                .map(<[_]>::to_vec)
                .collect();
        }
        let n = fft.grid().len();
        (0..nb)
            .into_par_iter()
            .map(|j| {
                let mut grid = zeros(n);
                kpt.map.place(column(psi, j), &mut grid);
                fft.backward_sphere(&mut grid, &kpt.sticks);
                grid
            })
            .collect()
    }

    fn from_grid(kpt: &Kpoint, fft: &Fft3d, fields: &[Vec<Self>]) -> Mat<Self> {
        let n = fft.grid().len();
        let scale = 1.0 / n as f64;
        let mut out = Mat::<Self>::zeros(kpt.dim(), fields.len());
        if let Some(d) = &kpt.dist {
            let mut real: Vec<Complex64> = fields.concat();
            let coeffs = d.from_real(&mut real, fields.len(), scale);
            for (j, c) in coeffs
                .chunks(d.n_coeffs().max(1))
                .take(fields.len())
                .enumerate()
            {
                col_mut(out.as_mut().subcols_mut(j, 1)).copy_from_slice(c);
            }
            return out;
        }
        out.par_col_iter_mut().zip(fields).for_each(|(col, f)| {
            let mut grid = f.clone();
            fft.forward_sphere_unnormalized(&mut grid, &kpt.sticks);
            let res = col
                .try_as_col_major_mut()
                .expect("column-major")
                .as_slice_mut();
            kpt.map.gather(&grid, scale, res);
        });
        out
    }

    fn convolve(basis: &Basis, kernel: &[f64], fields: &mut [Vec<Self>]) {
        basis.rho_convolve(fields, kernel);
    }

    fn random(kpt: &Kpoint, bands: &[usize], seed: u64) -> Mat<Self> {
        let (rows, n) = global_rows(kpt);
        random_columns(&rows, n, &kpt.kinetic, bands, seed, 2, |x, t| {
            let d = 1.0 / (1.0 + t);
            Complex64::new(x[0] * d, x[1] * d)
        })
    }
}

/// `acc += sum over items of f(item)`, with `f` adding into a grid sum and given a grid
/// buffer: the items in one contiguous run per rayon thread, each run into a sum of its own
/// ([`crate::scratch::with_sums`], zeroed by its thread), the sums added in run order point by
/// point, the points dealt over the threads (the same result on any run for a thread count).
fn sum_over_grid<I: Sync>(
    items: &[I],
    n: usize,
    acc: &mut [f64],
    f: impl Fn(&I, &mut [Complex64], &mut [f64]) + Sync,
) {
    let per = per_thread(items.len());
    crate::scratch::with_sums(items.len().div_ceil(per), n, |sums| {
        items
            .par_chunks(per)
            .zip(sums.par_iter_mut())
            .for_each(|(run, sum)| {
                sum.fill(0.0);
                crate::scratch::with_grid(n, |grid| run.iter().for_each(|i| f(i, grid, sum)))
            });
        let sums = &*sums;
        acc.par_chunks_mut(POINTS_PER_SUM_TASK)
            .enumerate()
            .for_each(|(c, out)| {
                let at = c * POINTS_PER_SUM_TASK;
                for sum in sums {
                    for (a, p) in out.iter_mut().zip(&sum[at..]) {
                        *a += p;
                    }
                }
            });
    });
}

/// Grid points per task of the final sum of [`sum_over_grid`].
const POINTS_PER_SUM_TASK: usize = 1 << 14;

/// Complex coefficient of local half-sphere entry `h` of a real band vector (`g0`: entry 0 is
/// G = 0, stored as one real component).
#[inline]
fn coeff(x: &[f64], h: usize, g0: bool) -> Complex64 {
    if g0 && h == 0 {
        Complex64::new(x[0], 0.0)
    } else {
        let i = 2 * h - usize::from(g0);
        Complex64::new(x[i], x[i + 1]) / SQRT_2
    }
}

/// Place bands a and b (b optional) as psi_a + i psi_b on the full grid.
fn scatter_pair(kpt: &Kpoint, a: &[f64], b: Option<&[f64]>, grid: &mut [Complex64]) {
    let neg = kpt.map_neg.as_ref().expect("Γ-real k-point");
    kpt.sticks.clear_lines(grid);
    let slots = kpt.map.indices().iter().zip(neg.indices());
    place_pair(a, b, true, slots.map(|(&p, &m)| (p, m)), grid);
}

/// Write psi_a + i psi_b into `out` at the (G, -G) slots of each half-sphere entry (for G = 0
/// both slots are one, and the value with G wins).
pub(crate) fn place_pair(
    a: &[f64],
    b: Option<&[f64]>,
    g0: bool,
    slots: impl Iterator<Item = (usize, usize)>,
    out: &mut [Complex64],
) {
    let i = Complex64::new(0.0, 1.0);
    for (h, (ip, im)) in slots.enumerate() {
        let za = coeff(a, h, g0);
        let zb = b.map_or(Complex64::new(0.0, 0.0), |b| coeff(b, h, g0));
        out[im] = za.conj() + i * zb.conj();
        out[ip] = za + i * zb;
    }
}

/// Bands a and b (b optional) from the transform `f` of psi_a + i psi_b, read at the (G, -G)
/// slots of each half-sphere entry: a(G) = (f(G) + f(-G)*)/2, b(G) = (f(G) - f(-G)*)/(2i).
pub(crate) fn separate_pair(
    f: &[Complex64],
    scale: f64,
    g0: bool,
    slots: impl Iterator<Item = (usize, usize)>,
    ra: &mut [f64],
    mut rb: Option<&mut [f64]>,
) {
    let half_i = Complex64::new(0.0, -0.5);
    for (h, (ip, im)) in slots.enumerate() {
        let fp = f[ip] * scale;
        let fm = f[im].conj() * scale;
        store(ra, h, 0.5 * (fp + fm), g0);
        if let Some(rb) = rb.as_deref_mut() {
            store(rb, h, half_i * (fp - fm), g0);
        }
    }
}

/// Write the real band vector of a field whose plane-wave coefficient at local half-sphere entry
/// h is z(h) (`g0` as in [`coeff`]).
#[inline]
fn store(out: &mut [f64], h: usize, z: Complex64, g0: bool) {
    if g0 && h == 0 {
        out[0] = z.re;
    } else {
        let i = 2 * h - usize::from(g0);
        out[i] = SQRT_2 * z.re;
        out[i + 1] = SQRT_2 * z.im;
    }
}

/// Real fields of `nb` bands from complex fields holding two each (`a + ib`).
fn split_pairs(pairs: &[Vec<Complex64>], nb: usize) -> Vec<Vec<f64>> {
    let mut out = Vec::with_capacity(nb);
    for (p, z) in pairs.iter().enumerate() {
        out.push(z.iter().map(|v| v.re).collect());
        if 2 * p + 1 < nb {
            out.push(z.iter().map(|v| v.im).collect());
        }
    }
    out
}

/// Complex fields `a + ib` of real fields taken two by two (the last alone when odd).
fn join_pairs(fields: &[Vec<f64>]) -> Vec<Vec<Complex64>> {
    fields
        .chunks(2)
        .map(|p| match p {
            [a, b] => a
                .par_iter()
                .zip(b)
                .map(|(&x, &y)| Complex64::new(x, y))
                .collect(),
            _ => p[0].par_iter().map(|&x| Complex64::new(x, 0.0)).collect(),
        })
        .collect()
}

/// Columns `2p` and (if it exists) `2p + 1` of `out` as slices.
fn pair_columns(out: MatMut<'_, f64>, p: usize) -> (&mut [f64], Option<&mut [f64]>) {
    let nb = out.ncols();
    let pair = out.subcols_mut(2 * p, (nb - 2 * p).min(2));
    let (ca, cb) = pair.split_at_col_mut(1);
    let rb = (cb.ncols() == 1).then(|| col_mut(cb));
    (col_mut(ca), rb)
}

/// Γ-real bands on a distributed k-point: `(D + V) psi` into `out`, two bands per field.
fn apply_local_real_dist(
    kpt: &Kpoint,
    d: &crate::gvectors::KDist,
    (diagonal, veff): (&[f64], &[f64]),
    scale: f64,
    psi: MatRef<'_, f64>,
    mut out: MatMut<'_, f64>,
) {
    let (nb, ng) = (psi.ncols(), d.n_coeffs());
    let g0 = kpt.holds_g0();
    // Two bands per field, one round of fields at a time (the fields never hold the whole
    // block: 12 MB on si64 at 2 ranks).
    let n_pairs = nb.div_ceil(2);
    let round = FIELDS_PER_ROUND.min(n_pairs);
    let mut fields = vec![Complex64::new(0.0, 0.0); round * ng];
    for p0 in (0..n_pairs).step_by(round.max(1)) {
        let nf = round.min(n_pairs - p0);
        for (p, f) in (p0..).zip(fields.chunks_mut(ng.max(1)).take(nf)) {
            let b = (2 * p + 1 < nb).then(|| column(psi, 2 * p + 1));
            place_pair(column(psi, 2 * p), b, g0, d.mirror_positions(), f);
        }
        d.apply_potential(&mut fields[..nf * ng], nf, veff, scale);
        for (p, f) in (p0..).zip(fields.chunks(ng.max(1)).take(nf)) {
            let pair = out.as_mut().subcols_mut(2 * p, (nb - 2 * p).min(2));
            let (ca, cb) = pair.split_at_col_mut(1);
            let ra = col_mut(ca);
            let rb = (cb.ncols() == 1).then(|| col_mut(cb));
            separate_pair(f, 1.0, g0, d.mirror_positions(), ra, rb);
        }
    }
    for j in 0..nb {
        let r = col_mut(out.as_mut().subcols_mut(j, 1));
        for ((r, x), t) in r.iter_mut().zip(column(psi, j)).zip(diagonal) {
            *r += x * t;
        }
    }
}

impl BandScalar for f64 {
    fn device_local(d: &DeviceLocal) -> &dyn LocalOperator<Self> {
        d
    }

    fn apply_local(
        kpt: &Kpoint,
        fft: &Fft3d,
        (diagonal, veff): (&[f64], &[f64]),
        psi: MatRef<'_, Self>,
        out: MatMut<'_, Self>,
    ) {
        let n = fft.grid().len();
        let scale = 1.0 / n as f64;
        if let Some(d) = &kpt.dist {
            return apply_local_real_dist(kpt, d, (diagonal, veff), scale, psi, out);
        }
        let nb = psi.ncols();
        let neg = kpt.map_neg.as_ref().expect("Γ-real k-point");
        // One task per pair of bands, writing both output columns directly; a thread that
        // finishes early takes the next pair (with few pairs, whole tasks balance better than
        // a share per thread: water's 3 pairs on 2 threads, 0.76-1.02 -> 0.71-0.93 s of
        // Davidson).
        out.par_col_chunks_mut(2).enumerate().for_each(|(p, pair)| {
            crate::scratch::with_grid(n, |grid| {
                let a = column(psi, 2 * p);
                let b = (2 * p + 1 < nb).then(|| column(psi, 2 * p + 1));
                scatter_pair(kpt, a, b, grid);
                fft.apply_potential_sphere(grid, veff, &kpt.sticks);
                let (ca, cb) = pair.split_at_col_mut(1);
                let ra = col_mut(ca);
                let mut rb = (cb.ncols() == 1).then(|| col_mut(cb));
                let slots = kpt.map.indices().iter().zip(neg.indices());
                let slots = slots.map(|(&p, &m)| (p, m));
                separate_pair(grid, scale, true, slots, ra, rb.as_deref_mut());
                for ((r, x), t) in ra.iter_mut().zip(a).zip(diagonal) {
                    *r += x * t;
                }
                if let (Some(rb), Some(b)) = (rb, b) {
                    for ((r, x), t) in rb.iter_mut().zip(b).zip(diagonal) {
                        *r += x * t;
                    }
                }
            })
        });
    }

    fn add_density(kpt: &Kpoint, fft: &Fft3d, psi: &Mat<Self>, weights: &[f64], acc: &mut [f64]) {
        let bands: Vec<usize> = (0..psi.ncols())
            .filter(|&b| weights[b].abs() > 1e-16)
            .collect();
        let pairs: Vec<(usize, Option<usize>)> =
            bands.chunks(2).map(|c| (c[0], c.get(1).copied())).collect();
        if let Some(d) = &kpt.dist {
            let ng = d.n_coeffs();
            let g0 = kpt.holds_g0();
            let mut fields = vec![Complex64::new(0.0, 0.0); pairs.len() * ng];
            for (&(a, b), f) in pairs.iter().zip(fields.chunks_mut(ng.max(1))) {
                let b = b.map(|b| psi.col_as_slice(b));
                place_pair(psi.col_as_slice(a), b, g0, d.mirror_positions(), f);
            }
            let w: Vec<(f64, f64)> = pairs
                .iter()
                .map(|&(a, b)| (weights[a], b.map_or(0.0, |b| weights[b])))
                .collect();
            d.add_density(&mut fields, &w, acc);
            return;
        }
        sum_over_grid(&pairs, fft.grid().len(), acc, |&(a, b), grid, sum| {
            scatter_pair(
                kpt,
                psi.col_as_slice(a),
                b.map(|b| psi.col_as_slice(b)),
                grid,
            );
            let (wa, wb) = (weights[a], b.map_or(0.0, |b| weights[b]));
            fft.backward_sphere_fold(grid, &kpt.sticks, sum, |s, z| {
                *s += wa * z.re * z.re + wb * z.im * z.im
            });
        });
    }

    fn plane_wave_rows(g0: bool, h0: usize, h1: usize) -> std::ops::Range<usize> {
        let row = |h: usize| (2 * h).saturating_sub(usize::from(g0));
        row(h0)..row(h1)
    }

    fn phased_into(g0: bool, h0: usize, l: usize, r: &[f64], ph: &[Complex64], out: &mut [Self]) {
        // G = 0 is one real row; every other plane wave a (sqrt2 Re, sqrt2 Im) pair.
        let (sign, swap) = rotation(l);
        let skip = usize::from(g0 && h0 == 0);
        if skip == 1 {
            let z = ph[0] * (sign * r[0]);
            out[0] = if swap { z.im } else { z.re };
        }
        let f = sign * SQRT_2;
        let pairs = out[skip..]
            .chunks_exact_mut(2)
            .zip(&r[skip..])
            .zip(&ph[skip..]);
        if swap {
            for ((pair, &x), &z) in pairs {
                pair[0] = f * x * z.im;
                pair[1] = -f * x * z.re;
            }
        } else {
            for ((pair, &x), &z) in pairs {
                pair[0] = f * x * z.re;
                pair[1] = f * x * z.im;
            }
        }
    }

    fn to_plane_waves(kpt: &Kpoint, psi: &Mat<Self>, cols: &[usize]) -> Mat<Complex64> {
        let g0 = kpt.holds_g0();
        Mat::from_fn(kpt.npw(), cols.len(), |h, j| {
            coeff(psi.col_as_slice(cols[j]), h, g0)
        })
    }

    fn from_plane_waves(kpt: &Kpoint, p: &Mat<Complex64>) -> Mat<Self> {
        let mut out = Mat::<f64>::zeros(kpt.dim(), p.ncols());
        let g0 = kpt.holds_g0();
        for j in 0..p.ncols() {
            let mut col = vec![0.0; kpt.dim()];
            for h in 0..kpt.npw() {
                store(&mut col, h, p[(h, j)], g0);
            }
            for (i, v) in col.into_iter().enumerate() {
                out[(i, j)] = v;
            }
        }
        out
    }

    fn times_i_kpg(kpt: &Kpoint, psi: MatRef<'_, Self>, dir: usize) -> Mat<Self> {
        // Row pairs (sqrt2 Re c, sqrt2 Im c) of G become those of i g c: (-g Im, g Re); the
        // G = 0 row (real) has g = 0 at Γ.
        let g0 = kpt.holds_g0();
        let mut out = Mat::<f64>::zeros(psi.nrows(), psi.ncols());
        for j in 0..psi.ncols() {
            for (h, g) in kpt.kpg.iter().enumerate() {
                if g0 && h == 0 {
                    continue;
                }
                let i = 2 * h - usize::from(g0);
                out[(i, j)] = -g[dir] * psi[(i + 1, j)];
                out[(i + 1, j)] = g[dir] * psi[(i, j)];
            }
        }
        out
    }

    fn to_grid(kpt: &Kpoint, fft: &Fft3d, psi: MatRef<'_, Self>) -> Vec<Vec<Self>> {
        let nb = psi.ncols();
        let n_pairs = nb.div_ceil(2);
        let second = |p: usize| (2 * p + 1 < nb).then(|| column(psi, 2 * p + 1));
        let pairs: Vec<Vec<Complex64>> = if let Some(d) = &kpt.dist {
            let ng = d.n_coeffs();
            let mut coeffs = vec![Complex64::new(0.0, 0.0); n_pairs * ng];
            for (p, f) in coeffs.chunks_mut(ng.max(1)).take(n_pairs).enumerate() {
                place_pair(
                    column(psi, 2 * p),
                    second(p),
                    kpt.holds_g0(),
                    d.mirror_positions(),
                    f,
                );
            }
            let real = d.to_real(&coeffs, n_pairs);
            real.chunks(d.layout().len().max(1))
                .take(n_pairs)
                .map(<[_]>::to_vec)
                .collect()
        } else {
            let n = fft.grid().len();
            (0..n_pairs)
                .into_par_iter()
                .map(|p| {
                    let mut grid = zeros(n);
                    scatter_pair(kpt, column(psi, 2 * p), second(p), &mut grid);
                    fft.backward_sphere(&mut grid, &kpt.sticks);
                    grid
                })
                .collect()
        };
        split_pairs(&pairs, nb)
    }

    fn from_grid(kpt: &Kpoint, fft: &Fft3d, fields: &[Vec<Self>]) -> Mat<Self> {
        let nb = fields.len();
        let scale = 1.0 / fft.grid().len() as f64;
        let mut out = Mat::<Self>::zeros(kpt.dim(), nb);
        let g0 = kpt.holds_g0();
        if let Some(d) = &kpt.dist {
            let mut real: Vec<Complex64> = join_pairs(fields).concat();
            let n_pairs = nb.div_ceil(2);
            let coeffs = d.from_real(&mut real, n_pairs, scale);
            for (p, f) in coeffs.chunks(d.n_coeffs().max(1)).take(n_pairs).enumerate() {
                let (ra, rb) = pair_columns(out.as_mut(), p);
                separate_pair(f, 1.0, g0, d.mirror_positions(), ra, rb);
            }
            return out;
        }
        let neg = kpt.map_neg.as_ref().expect("Γ-real k-point");
        let joined = join_pairs(fields);
        out.par_col_chunks_mut(2)
            .zip(joined)
            .for_each(|(pair, mut grid)| {
                fft.forward_sphere_unnormalized(&mut grid, &kpt.sticks);
                let (ca, cb) = pair.split_at_col_mut(1);
                let rb = (cb.ncols() == 1).then(|| col_mut(cb));
                let slots = kpt.map.indices().iter().zip(neg.indices());
                separate_pair(
                    &grid,
                    scale,
                    true,
                    slots.map(|(&p, &m)| (p, m)),
                    col_mut(ca),
                    rb,
                );
            });
        out
    }

    fn convolve(basis: &Basis, kernel: &[f64], fields: &mut [Vec<Self>]) {
        // kernel(-G) = kernel(G) keeps a real field real: a + ib convolves to conv(a) + i conv(b).
        let mut joined = join_pairs(fields);
        basis.rho_convolve(&mut joined, kernel);
        for (pair, z) in fields.chunks_mut(2).zip(&joined) {
            for (i, f) in pair.iter_mut().enumerate() {
                f.par_iter_mut()
                    .zip(z)
                    .for_each(|(x, z)| *x = if i == 0 { z.re } else { z.im });
            }
        }
    }

    fn random(kpt: &Kpoint, bands: &[usize], seed: u64) -> Mat<Self> {
        let (rows, n) = global_rows(kpt);
        random_columns(&rows, n, &kpt.kinetic, bands, seed, 1, |x, t| {
            x[0] / (1.0 + t)
        })
    }
}
