//! The stress tensor `sigma = -(1/Omega) dE/d eps` (Ha/bohr^3, Quantum ESPRESSO's sign: a negative
//! diagonal means the cell wants to shrink; pressure = trace/3) of a converged SCF state.
//!
//! Strain at fixed fractional positions and fixed plane-wave coefficients (the Pulay-free form at
//! a fixed set of plane waves): kinetic, Hartree, XC (LDA and the GGA gradient part), local,
//! nonlocal, NLCC core, Ewald. Symmetrised with the crystal's operations.

use crate::bands::BandScalar;
use crate::basis::Basis;
use crate::density;
use crate::forces::{band_weights, core_coupling, for_each_owned_block};
use crate::model::Model;
use crate::scf::{ScfResult, Wavefunctions};
use crate::symmetry::symmetrize_stress;
use crate::terms::{ewald, hartree, kinetic, local, xc};
use planewave_linalg::Mat;

/// 1 Ha/bohr^3 in GPa.
pub const HA_PER_BOHR3_IN_GPA: f64 = 29_421.015_697_2;

/// Total stress and its parts (symmetrised), Ha/bohr^3.
#[derive(Debug, Clone)]
pub struct Stress {
    /// The stress tensor.
    pub total: [[f64; 3]; 3],
    /// (term name, tensor) for "kinetic", "hartree", "xc", "local", "nonlocal", "ewald",
    /// "core_correction".
    pub terms: Vec<(&'static str, [[f64; 3]; 3])>,
}

impl Stress {
    /// Pressure trace/3 (Ha/bohr^3).
    pub fn pressure(&self) -> f64 {
        (self.total[0][0] + self.total[1][1] + self.total[2][2]) / 3.0
    }
}

fn wavefunction_terms<T: BandScalar>(
    model: &Model,
    basis: &Basis,
    psi: &[Vec<Mat<T>>],
    weights: &[Vec<Vec<f64>>],
) -> ([[f64; 3]; 3], [[f64; 3]; 3]) {
    let mut flat = [0.0; 18];
    for_each_owned_block(model, basis, psi, weights, |kpt, proj, x, w| {
        let (kin, nl) = flat.split_at_mut(9);
        let mut k3 = [[0.0; 3]; 3];
        kinetic::add_stress(kpt, x, w, basis.volume, &mut k3);
        let de = proj.strain_derivative(model, kpt, basis.volume, x, w);
        for (i, (a, b)) in (0..3).flat_map(|a| (0..3).map(move |b| (a, b))).enumerate() {
            kin[i] += k3[a][b];
            nl[i] -= de[a][b] / basis.volume;
        }
    });
    basis.parallel.sum_over_kgroups(&mut flat);
    let tensor = |c: &[f64]| [0, 1, 2].map(|a| [c[3 * a], c[3 * a + 1], c[3 * a + 2]]);
    (tensor(&flat[..9]), tensor(&flat[9..]))
}

/// Stress of the converged state `scf` of `model` on `basis`.
#[allow(clippy::needless_range_loop)] // tensor components read best as indices
pub fn compute(model: &Model, basis: &Basis, scf: &ScfResult) -> Stress {
    let omega = basis.volume;
    let rho = &scf.density;
    let rho_g = rho.total_g();
    let weights = band_weights(basis, scf);
    let (kin, nl) = match &scf.wavefunctions {
        Wavefunctions::Complex(psi) => wavefunction_terms(model, basis, psi, &weights),
        Wavefunctions::Real(psi) => wavefunction_terms(model, basis, psi, &weights),
    };
    let (_, e_h) = hartree::potential_and_energy(basis, &rho_g);
    let vloc = local::LocalPotential::new(model, basis);
    let e_loc = vloc.energy(basis, &rho.total_r());

    // XC: sigma = -(1/Omega) [(E_xc - int v rho_xc) delta - T_grad] (+ the core shape term).
    let core = density::core_density(model, basis);
    let (xr, xg) = density::with_core(rho, core.as_ref());
    let xcr = xc::compute(model.functional, basis, &xr, &xg);
    let dv = omega / basis.grid_len() as f64;
    let v_rho: f64 = xcr
        .potential
        .iter()
        .zip(&xr)
        .map(|(v, r)| v.iter().zip(r).map(|(a, b)| a * b).sum::<f64>())
        .sum::<f64>()
        * dv;
    let mut sxc = [[0.0; 3]; 3];
    for a in 0..3 {
        for b in 0..3 {
            let diag = if a == b { xcr.energy - v_rho } else { 0.0 };
            sxc[a][b] = (xcr.gradient_tensor[a][b] - diag) / omega;
        }
    }
    let mut terms = vec![
        ("kinetic", kin),
        ("hartree", hartree::stress(basis, &rho_g, e_h)),
        ("xc", sxc),
        ("local", local::stress(model, basis, &rho_g, e_loc)),
        ("nonlocal", nl),
        (
            "ewald",
            ewald::ewald_forces_stress(&model.crystal, &model.atom_charges()).1,
        ),
    ];
    if let Some(v) = core_coupling(model, basis, rho) {
        let shape = crate::terms::structure_factor_strain(model, basis, &v, |s, q| {
            model.species[s].pseudo.core_density_fourier(q)
        });
        terms.push(("core_correction", shape.map(|r| r.map(|x| x / omega))));
    }
    for (_, s) in terms.iter_mut() {
        *s = symmetrize_stress(&model.symmetries, &model.crystal, s);
    }
    let mut total = [[0.0; 3]; 3];
    for (_, s) in &terms {
        for a in 0..3 {
            for b in 0..3 {
                total[a][b] += s[a][b];
            }
        }
    }
    Stress { total, terms }
}
