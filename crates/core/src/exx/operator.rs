//! The exact-exchange operator of one (spin, k) block from occupied orbitals.
//!
//! Contract, in Hartree units with band vectors normalised to one over the cell:
//! `V_x psi_i = -a sum_j x_j u_j(r) W_ij(r)` with `W_ij = (1/Omega) sum_G v(G) C_ij(G) e^{iGr}`
//! and `C_ij(G)` the coefficients of the pair density `u_j*(r) u_i(r)` over the density sphere
//! (the kernel sphere: QE's `ecutfock` at its default, the density cutoff). `u` are the
//! periodic parts on the grid ([`BandScalar::to_grid`]), `x_j` occupations per spin (0..1),
//! `a` the exact-exchange fraction and `v` the kernel of [`super::kernel`]. With a q grid the
//! sum runs over the orbitals of every k' = k + q too ([`Pairing`]), the kernel at
//! `k - k' + G` and divided by the number of q-points. Pair densities go through the density
//! transforms, so a G-vector group deals them like any density; the orbitals are held at this
//! rank's grid points.

use super::kernel::CoulombKernel;
use crate::bands::BandScalar;
use crate::basis::{Basis, Kpoint};
use planewave_linalg::{Mat, MatRef};

/// Orbitals below this occupation per spin do not enter the operator (QE's `eps_occ`).
pub const EPS_OCCUPATION: f64 = 1e-8;

/// `-(a / N_q) v(Q) / Omega` with `Q = G - q` (q fractional, on a grid of `n_q` points) on this
/// rank's density-sphere entries: the kernel the pair densities of k and k' = k + q are
/// convolved with (their Fourier components sit at k - k' + G).
pub fn scaled_kernel_at(
    basis: &Basis,
    kernel: &CoulombKernel,
    fraction: f64,
    q: [f64; 3],
    n_q: usize,
) -> Vec<f64> {
    let scale = -fraction / (n_q as f64 * basis.volume);
    basis
        .rho_millers
        .iter()
        .map(|m| scale * kernel.at([0, 1, 2].map(|i| f64::from(m[i]) - q[i])))
        .collect()
}

/// The orbitals of one k' = k + q paired with the bands of k: their periodic parts at this
/// rank's grid points, occupations per spin, and the kernel of their pair densities.
pub struct Pairing<'k, T: BandScalar> {
    /// The occupied orbitals `u_j` of k'.
    orbitals: Vec<Vec<T>>,
    /// Their occupations per spin `x_j`.
    occupations: Vec<f64>,
    /// The scaled kernel ([`scaled_kernel_at`]).
    kernel: &'k [f64],
}

impl<'k, T: BandScalar> Pairing<'k, T> {
    /// The orbitals `orbitals` (at this rank's grid points) with occupations per spin `x`;
    /// those below [`EPS_OCCUPATION`] are left out.
    pub fn new(orbitals: Vec<Vec<T>>, x: &[f64], kernel: &'k [f64]) -> Self {
        let (orbitals, occupations) = orbitals
            .into_iter()
            .zip(x)
            .filter(|(_, &x)| x > EPS_OCCUPATION)
            .map(|(u, &x)| (u, x))
            .unzip();
        Self {
            orbitals,
            occupations,
            kernel,
        }
    }

    /// The block's own occupied bands `psi` (columns, occupations `x`): k' = k. Collective on
    /// the G-vector group.
    pub fn own(
        basis: &Basis,
        kpt: &Kpoint,
        kernel: &'k [f64],
        psi: MatRef<'_, T>,
        x: &[f64],
    ) -> Self {
        let kept: Vec<usize> = (0..psi.ncols())
            .filter(|&j| x[j] > EPS_OCCUPATION)
            .collect();
        let occupied = Mat::from_fn(psi.nrows(), kept.len(), |i, j| psi[(i, kept[j])]);
        debug_assert!(
            basis.wfc.is_none(),
            "hybrids keep the bands on the density grid"
        );
        let orbitals = T::to_grid(kpt, &basis.fft, occupied.as_ref());
        let x: Vec<f64> = kept.iter().map(|&j| x[j]).collect();
        Self::new(orbitals, &x, kernel)
    }

    /// `w_i += sum_j x_j u_j(r) W_ij(r)` for the bands `u` of k at this rank's grid points
    /// (the kernel's `-a` included). Collective on the G-vector group.
    pub fn accumulate(&self, basis: &Basis, u: &[Vec<T>], w: &mut [Vec<T>]) {
        use rayon::prelude::*;
        let n = basis.rho_real_len();
        // One allocation per field (fresh zeroed pages for real bands), not a copy of the first.
        let mut pairs: Vec<Vec<T>> = (self.orbitals.iter())
            .map(|_| vec![T::from_f64(0.0); n])
            .collect();
        for (ui, wi) in u.iter().zip(w.iter_mut()) {
            for (p, uj) in pairs.iter_mut().zip(&self.orbitals) {
                p.par_chunks_mut(POINTS_PER_TASK)
                    .zip(uj.par_chunks(POINTS_PER_TASK))
                    .zip(ui.par_chunks(POINTS_PER_TASK))
                    .for_each(|((p, a), b)| {
                        for ((p, a), b) in p.iter_mut().zip(a).zip(b) {
                            *p = a.cj() * *b;
                        }
                    });
            }
            T::convolve(basis, self.kernel, &mut pairs);
            // Each point adds the pairings in orbital order, whatever the thread.
            wi.par_chunks_mut(POINTS_PER_TASK)
                .enumerate()
                .for_each(|(c, wi)| {
                    let at = c * POINTS_PER_TASK;
                    for ((p, uj), &x) in pairs.iter().zip(&self.orbitals).zip(&self.occupations) {
                        for ((w, a), b) in wi.iter_mut().zip(&uj[at..]).zip(&p[at..]) {
                            *w += (*a * *b).scale(x);
                        }
                    }
                });
        }
    }
}

/// Grid points per rayon task of [`Pairing::accumulate`]'s pointwise passes.
const POINTS_PER_TASK: usize = 1 << 13;

/// `V_x psi` for the block `psi` of k: its bands go to the grid, `pairings` adds every
/// pairing's `sum_j x_j u_j W_ij` to the results there ([`Pairing::accumulate`]), and the
/// results come back as band vectors. Collective on the G-vector group.
pub fn apply<T: BandScalar>(
    basis: &Basis,
    kpt: &Kpoint,
    psi: MatRef<'_, T>,
    pairings: impl FnOnce(&[Vec<T>], &mut [Vec<T>]),
) -> Mat<T> {
    debug_assert!(
        basis.wfc.is_none(),
        "hybrids keep the bands on the density grid"
    );
    let u = T::to_grid(kpt, &basis.fft, psi);
    let n = basis.rho_real_len();
    let mut w: Vec<Vec<T>> = u.iter().map(|_| vec![T::from_f64(0.0); n]).collect();
    pairings(&u, &mut w);
    T::from_grid(kpt, &basis.fft, &w)
}
