//! Carrying a converged state over to a nearby geometry (relaxation steps).
//!
//! [`ScfStart::from_previous`] expresses the previous density and bands on the new basis by
//! Miller index (so a changed cell works too): the density as rho_prev + (atomic superposition at
//! the new positions - atomic superposition at the old ones) — Quantum ESPRESSO's "atomic"
//! extrapolation — scaled by Omega_old/Omega_new to keep the electron count, and the bands
//! coefficient by coefficient (plane waves that left the sphere are dropped, new ones start at
//! zero; the eigensolver re-orthonormalises). Bands are carried only when the k-point set is
//! unchanged (same fractional k-points in the same order). PAW band sums carry over when the
//! atoms are the same species in the same order (checkpoints do not hold them: a restart
//! starts from the atoms' own).

use crate::basis::{Basis, Kpoint};
use crate::density;
use crate::model::Model;
use crate::scf::{ScfResult, Wavefunctions};
use num_complex::Complex64;
use planewave_linalg::{Mat, Scalar};
use std::collections::HashMap;

/// A starting point for [`crate::scf::run_from`], already expressed on the new basis.
pub struct ScfStart {
    /// Density-sphere coefficients per spin channel.
    pub density_g: Vec<Vec<Complex64>>,
    /// Bands per spin and k-point (None: random start).
    pub wavefunctions: Option<Wavefunctions>,
    /// The PAW band sums of the density (None: the atoms' own stand for them).
    pub becsum: Option<crate::augmentation::Becsum>,
}

impl ScfStart {
    /// Map the converged state `prev` of (`old_model`, `old_basis`) onto (`model`, `basis`).
    /// Collective on the G-vector group (the old density is gathered whole, then each rank
    /// takes its entries of the new sphere).
    pub fn from_previous(
        old_model: &Model,
        old_basis: &Basis,
        prev: &ScfResult,
        model: &Model,
        basis: &Basis,
    ) -> Self {
        let index: HashMap<[i32; 3], usize> = old_basis
            .rho_global_millers()
            .iter()
            .enumerate()
            .map(|(i, m)| (*m, i))
            .collect();
        let scale = old_basis.volume / basis.volume;
        let new_atoms = density::atomic_guess(model, basis);
        let old_atoms = density::atomic_guess(old_model, basis);
        let density_g = prev
            .density
            .g
            .iter()
            .enumerate()
            .map(|(s, g_old)| {
                let g_old = old_basis.rho_gather(g_old);
                basis
                    .rho_millers
                    .iter()
                    .enumerate()
                    .map(|(i, m)| {
                        let carried = index.get(m).map(|&j| g_old[j] * scale).unwrap_or_default();
                        carried + new_atoms.g[s][i] - old_atoms.g[s][i]
                    })
                    .collect()
            })
            .collect();
        let old_frac: Vec<[f64; 3]> = old_basis.kpoints.iter().map(|k| k.frac).collect();
        let wavefunctions = if same_kpoints(&old_frac, basis) {
            match &prev.wavefunctions {
                Wavefunctions::Complex(p) => {
                    Wavefunctions::Complex(map_bands(old_basis, basis, p)).into()
                }
                Wavefunctions::Real(p) => {
                    Wavefunctions::Real(map_bands(old_basis, basis, p)).into()
                }
            }
        } else {
            None
        };
        // The same atoms (a relaxation step, a fixed-density run): their band sums carry over.
        let species =
            |m: &Model| -> Vec<usize> { m.crystal.atoms.iter().map(|a| a.species).collect() };
        let same_atoms = species(model) == species(old_model);
        ScfStart {
            density_g,
            wavefunctions,
            becsum: prev.density.becsum.clone().filter(|_| same_atoms),
        }
    }
}

/// Whether `basis` has the k-points `frac` (fractional), in that order: bands can be carried
/// over only then.
pub(crate) fn same_kpoints(frac: &[[f64; 3]], basis: &Basis) -> bool {
    frac.len() == basis.kpoints.len()
        && frac
            .iter()
            .zip(&basis.kpoints)
            .all(|(a, b)| (0..3).all(|i| (a[i] - b.frac[i]).abs() < 1e-10))
}

/// For each band-vector component of `new`, the component of `old` with the same plane wave
/// (and the same real/imaginary part in the Γ-real layout), if any.
fn component_map(old: &Kpoint, new: &Kpoint) -> Vec<Option<usize>> {
    let index = crate::miller_lookup::MillerLookup::new(&old.millers);
    (0..new.dim())
        .map(|i| {
            let h = new.plane_wave_of_component(i);
            let h_old = index.get(&new.millers[h])?;
            if !new.is_gamma_real() {
                return Some(h_old);
            }
            if new.millers[h] == [0, 0, 0] {
                return Some(0);
            }
            // (Re, Im) at components 2h-1, 2h (2h, 2h+1 on a rank without G = 0).
            let first = |k: &Kpoint, h: usize| 2 * h - usize::from(k.holds_g0());
            let part = i - first(new, h);
            Some(first(old, h_old) + part)
        })
        .collect()
}

fn map_bands<T: Scalar>(old: &Basis, new: &Basis, psi: &[Vec<Mat<T>>]) -> Vec<Vec<Mat<T>>> {
    psi.iter()
        .map(|ps| {
            ps.iter()
                .zip(old.kpoints.iter().zip(&new.kpoints))
                .map(|(m, (ko, kn))| {
                    if m.ncols() == 0 {
                        // A block another k-point group computes.
                        return Mat::zeros(0, 0);
                    }
                    let map = component_map(ko, kn);
                    Mat::from_fn(kn.dim(), m.ncols(), |i, b| match map[i] {
                        Some(j) => m[(j, b)],
                        None => T::from_f64(0.0),
                    })
                })
                .collect()
        })
        .collect()
}
