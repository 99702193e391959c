//! The exact-exchange operator of one (spin, k) block from its own occupied orbitals (q = 0:
//! every orbital pairs with those of the same k-point; a q grid of one point).
//!
//! Contract, in Hartree units with band vectors normalised to one over the cell:
//! `V_x psi_i = -a sum_j x_j u_j(r) W_ij(r)` with `W_ij = (1/Omega) sum_G v(G) C_ij(G) e^{iGr}`
//! and `C_ij(G)` the coefficients of the pair density `u_j*(r) u_i(r)` over the density sphere
//! (the kernel sphere: QE's `ecutfock` at its default, the density cutoff). `u` are the
//! periodic parts on the grid ([`BandScalar::to_grid`]), `x_j` occupations per spin (0..1),
//! `a` the exact-exchange fraction and `v` the kernel of [`super::kernel`]. Pair densities go
//! through the density transforms, so a G-vector group deals them like any density; the
//! orbitals are held at this rank's grid points.

use super::kernel::CoulombKernel;
use crate::bands::BandScalar;
use crate::basis::{Basis, Kpoint};
use planewave_linalg::{Mat, MatRef};

/// Orbitals below this occupation per spin do not enter the operator (QE's `eps_occ`).
pub const EPS_OCCUPATION: f64 = 1e-8;

/// `-a v(G) / Omega` on this rank's density-sphere entries (q = 0): the kernel the pair
/// densities are convolved with.
pub fn scaled_kernel(basis: &Basis, kernel: &CoulombKernel, fraction: f64) -> Vec<f64> {
    basis
        .rho_millers
        .iter()
        .map(|m| -fraction * kernel.at(m.map(f64::from)) / basis.volume)
        .collect()
}

/// V_x of one (spin, k) block.
pub struct Exchange<T: BandScalar> {
    /// The occupied orbitals `u_j` at this rank's grid points.
    orbitals: Vec<Vec<T>>,
    /// Their occupations per spin `x_j`.
    occupations: Vec<f64>,
    /// `-a v(G) / Omega` ([`scaled_kernel`]).
    kernel: Vec<f64>,
}

impl<T: BandScalar> Exchange<T> {
    /// The operator of the orbitals `psi` (columns) with occupations per spin `x` (those
    /// below [`EPS_OCCUPATION`] are left out). Collective on the G-vector group.
    pub fn new(
        basis: &Basis,
        kpt: &Kpoint,
        kernel: Vec<f64>,
        psi: MatRef<'_, T>,
        x: &[f64],
    ) -> Self {
        let kept: Vec<usize> = (0..psi.ncols())
            .filter(|&j| x[j] > EPS_OCCUPATION)
            .collect();
        let occupied = Mat::from_fn(psi.nrows(), kept.len(), |i, j| psi[(i, kept[j])]);
        Self {
            orbitals: T::to_grid(kpt, &basis.fft, occupied.as_ref()),
            occupations: kept.iter().map(|&j| x[j]).collect(),
            kernel,
        }
    }

    /// `V_x psi` for the block `psi`. Collective on the G-vector group.
    pub fn apply(&self, basis: &Basis, kpt: &Kpoint, psi: MatRef<'_, T>) -> Mat<T> {
        let u = T::to_grid(kpt, &basis.fft, psi);
        let n = basis.rho_real_len();
        let mut pairs: Vec<Vec<T>> = vec![vec![T::from_f64(0.0); n]; self.orbitals.len()];
        let mut out = Vec::with_capacity(u.len());
        for ui in &u {
            for (p, uj) in pairs.iter_mut().zip(&self.orbitals) {
                for ((p, a), b) in p.iter_mut().zip(uj).zip(ui) {
                    *p = a.cj() * *b;
                }
            }
            T::convolve(basis, &self.kernel, &mut pairs);
            let mut w = vec![T::from_f64(0.0); n];
            for ((p, uj), &x) in pairs.iter().zip(&self.orbitals).zip(&self.occupations) {
                for ((w, a), b) in w.iter_mut().zip(uj).zip(p) {
                    *w += (*a * *b).scale(x);
                }
            }
            out.push(w);
        }
        T::from_grid(kpt, &basis.fft, &out)
    }
}
