//! Forces on the atoms, `F = -dE/dtau` (Ha/bohr), from a converged SCF state.
//!
//! At self-consistency only the explicit dependence of each term on the positions counts
//! (Hellmann–Feynman): local potential, nonlocal projectors, NLCC core density (through v_xc)
//! and Ewald. Summed over the irreducible k-points and then symmetrised with the crystal's
//! operations. Each term is kept so that it can be compared with Quantum ESPRESSO's breakdown.

use crate::bands::BandScalar;
use crate::basis::Basis;
use crate::basis::Kpoint;
use crate::density::{self, Density};
use crate::model::Model;
use crate::scf::{ScfResult, Wavefunctions};
use crate::symmetry::symmetrize_forces;
use crate::terms::{ewald, local, nonlocal::KProjectors, real_to_sphere, xc};
use num_complex::Complex64;
use planewave_linalg::{Mat, MatRef};

/// Total forces and their parts (all symmetrised), Ha/bohr, one vector per atom.
#[derive(Debug, Clone)]
pub struct Forces {
    /// The total force on each atom.
    pub total: Vec<[f64; 3]>,
    /// (term name, forces) for "local", "nonlocal", "ewald", "core_correction".
    pub terms: Vec<(&'static str, Vec<[f64; 3]>)>,
}

impl Forces {
    /// Largest |F| over the atoms (Ha/bohr).
    pub fn max_norm(&self) -> f64 {
        self.total
            .iter()
            .map(|f| (f[0] * f[0] + f[1] * f[1] + f[2] * f[2]).sqrt())
            .fold(0.0, f64::max)
    }
}

/// The XC potential averaged over spin channels, on the density sphere: what the NLCC core
/// density couples to (`dE_xc/d rho_core`). None without NLCC.
pub(crate) fn core_coupling(model: &Model, basis: &Basis, rho: &Density) -> Option<Vec<Complex64>> {
    let core = density::core_density(model, basis)?;
    let (xr, xg) = density::with_core(rho, Some(&core));
    let v = xc::compute(model.functional, basis, &xr, &xg).potential;
    let n = v.len() as f64;
    let avg: Vec<f64> = (0..basis.grid_len())
        .map(|i| v.iter().map(|c| c[i]).sum::<f64>() / n)
        .collect();
    Some(real_to_sphere(basis, &avg))
}

/// Band weights (k weight times occupation) of every (spin, k).
pub(crate) fn band_weights(basis: &Basis, scf: &ScfResult) -> Vec<Vec<Vec<f64>>> {
    scf.occupations
        .occ
        .iter()
        .map(|occ_s| {
            basis
                .kpoints
                .iter()
                .zip(occ_s)
                .map(|(k, o)| o.iter().map(|f| f * k.weight).collect())
                .collect()
        })
        .collect()
}

/// Call `f(k-point, its projectors, band block, band weights)` for every (spin, k) block this
/// rank computes, the projectors built once per k-point, timed as block work. What `f`
/// accumulates is this rank's share: sum it over the k-point groups.
pub(crate) fn for_each_owned_block<T: BandScalar>(
    model: &Model,
    basis: &Basis,
    psi: &[Vec<Mat<T>>],
    weights: &[Vec<Vec<f64>>],
    mut f: impl FnMut(&Kpoint, &KProjectors<T>, MatRef<'_, T>, &[f64]),
) {
    let par = &*basis.parallel;
    par.time_block_work(|| {
        for (k, kpt) in basis.kpoints.iter().enumerate() {
            if !par.owns_kpoint(psi.len(), k) {
                continue;
            }
            let proj = KProjectors::<T>::new(model, kpt, basis.volume);
            for (s, (psi_s, w_s)) in psi.iter().zip(weights).enumerate() {
                if par.owns(s, k) {
                    f(kpt, &proj, psi_s[k].as_ref(), &w_s[k]);
                }
            }
        }
    });
}

fn nonlocal_forces<T: BandScalar>(
    model: &Model,
    basis: &Basis,
    psi: &[Vec<Mat<T>>],
    weights: &[Vec<Vec<f64>>],
) -> Vec<[f64; 3]> {
    let mut flat = vec![0.0; 3 * model.crystal.atoms.len()];
    for_each_owned_block(model, basis, psi, weights, |kpt, proj, x, w| {
        let f = proj.forces(model, kpt, basis.volume, x, w);
        for (o, v) in flat.iter_mut().zip(f.iter().flatten()) {
            *o += v;
        }
    });
    basis.parallel.sum_over_kgroups(&mut flat);
    flat.chunks(3).map(|c| [c[0], c[1], c[2]]).collect()
}

/// Forces of the converged state `scf` of `model` on `basis`.
pub fn compute(model: &Model, basis: &Basis, scf: &ScfResult) -> Forces {
    let rho_g = scf.density.total_g();
    let weights = band_weights(basis, scf);
    let mut terms = vec![
        ("local", local::forces(model, basis, &rho_g)),
        (
            "nonlocal",
            match &scf.wavefunctions {
                Wavefunctions::Complex(psi) => nonlocal_forces(model, basis, psi, &weights),
                Wavefunctions::Real(psi) => nonlocal_forces(model, basis, psi, &weights),
            },
        ),
        (
            "ewald",
            ewald::ewald_forces_stress(&model.crystal, &model.atom_charges()).0,
        ),
    ];
    if let Some(v) = core_coupling(model, basis, &scf.density) {
        let f = crate::terms::structure_factor_forces(model, basis, &v, |s, q| {
            model.species[s].pseudo.core_density_fourier(q)
        });
        terms.push(("core_correction", f));
    }
    for (_, f) in terms.iter_mut() {
        *f = symmetrize_forces(&model.symmetries, &model.crystal, f);
    }
    let mut total = vec![[0.0; 3]; model.crystal.atoms.len()];
    for (_, f) in &terms {
        for (t, x) in total.iter_mut().zip(f) {
            (0..3).for_each(|i| t[i] += x[i]);
        }
    }
    Forces { total, terms }
}
