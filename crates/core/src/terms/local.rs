//! Local pseudopotential: V_loc(G) = (1/Omega) sum_atoms e^{-iG.tau} v(|G|) on the density sphere.
//!
//! The G = 0 component is the "alpha Z" constant (1/Omega) sum_atoms \int (V_loc(r) + Z/r) d^3r,
//! so E_loc = \int V_loc rho includes E_alphaZ = N_el/Omega sum alpha, and eigenvalues carry that
//! shift as in Quantum ESPRESSO.

use crate::basis::Basis;
use crate::model::Model;
use num_complex::Complex64;

/// The local pseudopotential on the density sphere and on the grid.
#[derive(Debug, Clone)]
pub struct LocalPotential {
    /// V_loc(G) on the density sphere (Ha).
    pub values_g: Vec<Complex64>,
    /// V_loc(r) on the FFT grid (Ha).
    pub values_r: Vec<f64>,
}

impl LocalPotential {
    /// Build V_loc for the atoms of `model` on `basis`.
    pub fn new(model: &Model, basis: &Basis) -> Self {
        let values_g = super::structure_factor_sum(
            model,
            basis,
            |_| 1.0,
            |s, q| {
                let p = &model.species[s].pseudo;
                if q < 1e-12 {
                    p.local_fourier_g0()
                } else {
                    p.local_fourier(q)
                }
            },
        );
        let values_r = super::sphere_to_real(basis, &values_g);
        Self { values_g, values_r }
    }

    /// E_loc = \int V_loc(r) rho(r) dr for the total density on the grid.
    pub fn energy(&self, basis: &Basis, rho_total_r: &[f64]) -> f64 {
        let dv = basis.volume / basis.grid_len() as f64;
        self.values_r
            .iter()
            .zip(rho_total_r)
            .map(|(v, r)| v * r)
            .sum::<f64>()
            * dv
    }
}

/// The local-potential form factor of species `s` at |G| = q (the alpha Z constant at q = 0).
fn form_factor(model: &Model, s: usize, q: f64) -> f64 {
    let p = &model.species[s].pseudo;
    if q < 1e-12 {
        p.local_fourier_g0()
    } else {
        p.local_fourier(q)
    }
}

/// Forces (Ha/bohr) on the atoms from the local potential for the total density `rho_g`.
pub fn forces(model: &Model, basis: &Basis, rho_g: &[Complex64]) -> Vec<[f64; 3]> {
    super::structure_factor_forces(model, basis, rho_g, |s, q| form_factor(model, s, q))
}

/// Local-potential stress (Ha/bohr^3, QE sign) for the total density `rho_g` whose local energy
/// is `e_loc`: `sigma = (1/Omega) [E_loc delta + sum_G Re(rho* S) v'(|G|) G G/|G|]`.
pub fn stress(model: &Model, basis: &Basis, rho_g: &[Complex64], e_loc: f64) -> [[f64; 3]; 3] {
    let shape =
        super::structure_factor_strain(model, basis, rho_g, |s, q| form_factor(model, s, q));
    let mut out = [[0.0; 3]; 3];
    for a in 0..3 {
        for b in 0..3 {
            let diag = if a == b { e_loc } else { 0.0 };
            out[a][b] = (diag + shape[a][b]) / basis.volume;
        }
    }
    out
}
