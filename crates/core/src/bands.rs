//! `BandScalar`: what a band block's element type must do on the FFT grid.
//!
//! Two implementations: `c64` (general k: one complex coefficient per plane wave) and `f64` (the
//! Γ-point real path: a band is the real vector [c(0), sqrt2 Re c(G), sqrt2 Im c(G), ...] over half
//! the sphere, see [`crate::basis`]). The real path puts TWO bands into one complex FFT,
//! psi_a(r) + i psi_b(r), and separates them again with the +-G symmetry, halving FFT work.

use crate::basis::Kpoint;
use num_complex::Complex64;
use planewave_fft::Fft3d;
use planewave_linalg::{Mat, MatMut, MatRef, Scalar};
use rayon::prelude::*;
use std::f64::consts::SQRT_2;

/// Element type of band blocks, with its grid operations.
pub trait BandScalar: Scalar {
    /// `out = (T + V_eff) psi` for a block (columns are bands).
    fn apply_local(
        kpt: &Kpoint,
        fft: &Fft3d,
        veff: &[f64],
        psi: MatRef<'_, Self>,
        out: MatMut<'_, Self>,
    );
    /// `acc(r) += sum_n w_n |psi_n(r)|^2` with psi(r) = sum_G c(G) e^{i(k+G)r} (no 1/Omega).
    fn add_density(kpt: &Kpoint, fft: &Fft3d, psi: &Mat<Self>, weights: &[f64], acc: &mut [f64]);
    /// Convert complex plane-wave columns (over the k-point's sphere) to this representation.
    fn from_plane_waves(kpt: &Kpoint, p: &Mat<Complex64>) -> Mat<Self>;
    /// A seeded random starting block, damped at high kinetic energy: column `b` is drawn from
    /// the stream `(seed, b)`, so a band's start does not depend on who computes it.
    fn random(kpt: &Kpoint, nb: usize, seed: u64) -> Mat<Self>;
}

/// Items per rayon task so that each thread gets one contiguous share: the per-task grid and FFT
/// buffers are then allocated once per thread, not once per band.
fn per_thread(items: usize) -> usize {
    items.div_ceil(rayon::current_num_threads()).max(1)
}

/// An `n × nb` block whose column `b` holds `entry(i, next)` for i = 0..n, with `next` drawing
/// from the random stream `(seed, b)`.
fn random_columns<T: Scalar>(
    n: usize,
    nb: usize,
    seed: u64,
    entry: impl Fn(usize, &mut dyn FnMut() -> f64) -> T,
) -> Mat<T> {
    let mut m = Mat::zeros(n, nb);
    for b in 0..nb {
        let mut rng = crate::rng::stream(seed, &[b as u64]);
        let mut next = || rng.next_centered();
        for (i, x) in col_mut(m.as_mut().subcols_mut(b, 1)).iter_mut().enumerate() {
            *x = entry(i, &mut next);
        }
    }
    m
}

fn zeros(n: usize) -> Vec<Complex64> {
    vec![Complex64::new(0.0, 0.0); n]
}

/// The single column of a one-column block, as a mutable slice.
fn col_mut<T: Scalar>(m: MatMut<'_, T>) -> &mut [T] {
    m.col_mut(0)
        .try_as_col_major_mut()
        .expect("band blocks are column-major")
        .as_slice_mut()
}

fn column<T: Scalar>(m: MatRef<'_, T>, j: usize) -> &[T] {
    m.col(j)
        .try_as_col_major()
        .expect("band blocks are column-major")
        .as_slice()
}

impl BandScalar for Complex64 {
    fn apply_local(
        kpt: &Kpoint,
        fft: &Fft3d,
        veff: &[f64],
        psi: MatRef<'_, Self>,
        out: MatMut<'_, Self>,
    ) {
        let n = fft.grid().len();
        let scale = 1.0 / n as f64;
        // Each thread writes its bands' results straight into their output columns.
        let per_thread = per_thread(psi.ncols());
        out.par_col_iter_mut()
            .enumerate()
            .with_min_len(per_thread)
            .for_each_init(
                || zeros(n),
                |grid, (j, col)| {
                    let res = col
                        .try_as_col_major_mut()
                        .expect("band blocks are column-major")
                        .as_slice_mut();
                    let x = column(psi, j);
                    kpt.sticks.clear_lines(grid);
                    kpt.map.place(x, grid);
                    fft.backward_sphere(grid, &kpt.sticks);
                    for (g, v) in grid.iter_mut().zip(veff) {
                        *g *= v;
                    }
                    fft.forward_sphere_unnormalized(grid, &kpt.sticks);
                    kpt.map.gather(grid, scale, res);
                    for ((r, c), t) in res.iter_mut().zip(x).zip(&kpt.kinetic) {
                        *r += c * t;
                    }
                },
            );
    }

    fn add_density(kpt: &Kpoint, fft: &Fft3d, psi: &Mat<Self>, weights: &[f64], acc: &mut [f64]) {
        let bands: Vec<usize> = (0..psi.ncols())
            .filter(|&b| weights[b].abs() > 1e-16)
            .collect();
        sum_over_grid(&bands, fft.grid().len(), acc, |&b, grid, sum| {
            kpt.sticks.clear_lines(grid);
            kpt.map.place(psi.col_as_slice(b), grid);
            fft.backward_sphere(grid, &kpt.sticks);
            for (a, z) in sum.iter_mut().zip(grid.iter()) {
                *a += weights[b] * z.norm_sqr();
            }
        });
    }

    fn from_plane_waves(_kpt: &Kpoint, p: &Mat<Complex64>) -> Mat<Self> {
        p.clone()
    }

    fn random(kpt: &Kpoint, nb: usize, seed: u64) -> Mat<Self> {
        random_columns(kpt.npw(), nb, seed, |i, next| {
            let d = 1.0 / (1.0 + kpt.kinetic[i]);
            Complex64::new(next() * d, next() * d)
        })
    }
}

/// `acc += sum over items of f(item)`, with `f` adding into a per-thread grid sum and given
/// a per-thread grid buffer; items are dealt to rayon threads.
fn sum_over_grid<I: Sync>(
    items: &[I],
    n: usize,
    acc: &mut [f64],
    f: impl Fn(&I, &mut [Complex64], &mut [f64]) + Sync,
) {
    let partial = items
        .par_iter()
        .with_min_len(per_thread(items.len()))
        .fold(
            || (vec![0.0; n], zeros(n)),
            |(mut sum, mut grid), item| {
                f(item, &mut grid, &mut sum);
                (sum, grid)
            },
        )
        .map(|t| t.0)
        .reduce(|| vec![0.0; n], add_vec);
    for (a, p) in acc.iter_mut().zip(&partial) {
        *a += p;
    }
}

fn add_vec(mut a: Vec<f64>, b: Vec<f64>) -> Vec<f64> {
    for (x, y) in a.iter_mut().zip(&b) {
        *x += y;
    }
    a
}

/// Complex coefficient of half-sphere entry `h` of a real band vector.
#[inline]
fn coeff(x: &[f64], h: usize) -> Complex64 {
    if h == 0 {
        Complex64::new(x[0], 0.0)
    } else {
        Complex64::new(x[2 * h - 1], x[2 * h]) / SQRT_2
    }
}

/// Place bands a and b (b optional) as psi_a + i psi_b on the full grid.
fn scatter_pair(kpt: &Kpoint, a: &[f64], b: Option<&[f64]>, grid: &mut [Complex64]) {
    let neg = kpt.map_neg.as_ref().expect("Γ-real k-point");
    kpt.sticks.clear_lines(grid);
    let i = Complex64::new(0.0, 1.0);
    for (h, (&ip, &im)) in kpt.map.indices().iter().zip(neg.indices()).enumerate() {
        let za = coeff(a, h);
        let zb = b.map_or(Complex64::new(0.0, 0.0), |b| coeff(b, h));
        grid[im] = za.conj() + i * zb.conj();
        grid[ip] = za + i * zb;
    }
}

/// Write the real band vector of a field whose plane-wave coefficient at half-sphere entry h is z(h).
#[inline]
fn store(out: &mut [f64], h: usize, z: Complex64) {
    if h == 0 {
        out[0] = z.re;
    } else {
        out[2 * h - 1] = SQRT_2 * z.re;
        out[2 * h] = SQRT_2 * z.im;
    }
}

impl BandScalar for f64 {
    fn apply_local(
        kpt: &Kpoint,
        fft: &Fft3d,
        veff: &[f64],
        psi: MatRef<'_, Self>,
        out: MatMut<'_, Self>,
    ) {
        let n = fft.grid().len();
        let scale = 1.0 / n as f64;
        let nb = psi.ncols();
        let neg = kpt.map_neg.as_ref().expect("Γ-real k-point");
        // One task per pair of bands; it writes both output columns directly.
        let per_thread = per_thread(nb.div_ceil(2));
        out.par_col_chunks_mut(2)
            .enumerate()
            .with_min_len(per_thread)
            .for_each_init(
                || zeros(n),
                |grid, (p, pair)| {
                    let a = column(psi, 2 * p);
                    let b = (2 * p + 1 < nb).then(|| column(psi, 2 * p + 1));
                    scatter_pair(kpt, a, b, grid);
                    fft.backward_sphere(grid, &kpt.sticks);
                    for (g, v) in grid.iter_mut().zip(veff) {
                        *g *= v;
                    }
                    fft.forward_sphere_unnormalized(grid, &kpt.sticks);
                    let (ca, cb) = pair.split_at_col_mut(1);
                    let ra = col_mut(ca);
                    let mut rb = (cb.ncols() == 1).then(|| col_mut(cb));
                    let half_i = Complex64::new(0.0, -0.5);
                    for (h, (&ip, &im)) in kpt.map.indices().iter().zip(neg.indices()).enumerate() {
                        let fp = grid[ip] * scale;
                        let fm = grid[im].conj() * scale;
                        store(ra, h, 0.5 * (fp + fm));
                        if let Some(rb) = rb.as_deref_mut() {
                            store(rb, h, half_i * (fp - fm));
                        }
                    }
                    for ((r, x), t) in ra.iter_mut().zip(a).zip(&kpt.kinetic) {
                        *r += x * t;
                    }
                    if let (Some(rb), Some(b)) = (rb, b) {
                        for ((r, x), t) in rb.iter_mut().zip(b).zip(&kpt.kinetic) {
                            *r += x * t;
                        }
                    }
                },
            );
    }

    fn add_density(kpt: &Kpoint, fft: &Fft3d, psi: &Mat<Self>, weights: &[f64], acc: &mut [f64]) {
        let bands: Vec<usize> = (0..psi.ncols())
            .filter(|&b| weights[b].abs() > 1e-16)
            .collect();
        let pairs: Vec<(usize, Option<usize>)> =
            bands.chunks(2).map(|c| (c[0], c.get(1).copied())).collect();
        sum_over_grid(&pairs, fft.grid().len(), acc, |&(a, b), grid, sum| {
            scatter_pair(
                kpt,
                psi.col_as_slice(a),
                b.map(|b| psi.col_as_slice(b)),
                grid,
            );
            fft.backward_sphere(grid, &kpt.sticks);
            let (wa, wb) = (weights[a], b.map_or(0.0, |b| weights[b]));
            for (s, z) in sum.iter_mut().zip(grid.iter()) {
                *s += wa * z.re * z.re + wb * z.im * z.im;
            }
        });
    }

    fn from_plane_waves(kpt: &Kpoint, p: &Mat<Complex64>) -> Mat<Self> {
        let mut out = Mat::<f64>::zeros(kpt.dim(), p.ncols());
        for j in 0..p.ncols() {
            let mut col = vec![0.0; kpt.dim()];
            for h in 0..kpt.npw() {
                store(&mut col, h, p[(h, j)]);
            }
            for (i, v) in col.into_iter().enumerate() {
                out[(i, j)] = v;
            }
        }
        out
    }

    fn random(kpt: &Kpoint, nb: usize, seed: u64) -> Mat<Self> {
        random_columns(kpt.dim(), nb, seed, |i, next| {
            next() / (1.0 + kpt.kinetic[i])
        })
    }
}
