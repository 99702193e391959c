//! Local pseudopotential: V_loc(G) = (1/Omega) sum_atoms e^{-iG.tau} v(|G|) on the density sphere.
//!
//! The G = 0 component is the "alpha Z" constant (1/Omega) sum_atoms \int (V_loc(r) + Z/r) d^3r,
//! so E_loc = \int V_loc rho includes E_alphaZ = N_el/Omega sum alpha, and eigenvalues carry that
//! shift as in Quantum ESPRESSO.

use super::term::{Share, State, Term};
use crate::bands::BandScalar;
use crate::basis::Basis;
use crate::model::Model;
use num_complex::Complex64;

/// The local-pseudopotential term (V_loc built once for the positions).
pub struct Local<'a> {
    model: &'a Model,
    v: LocalPotential,
}

impl<'a> Local<'a> {
    /// V_loc of `model` on `basis`.
    pub fn new(model: &'a Model, basis: &Basis) -> Self {
        Self {
            model,
            v: LocalPotential::new(model, basis),
        }
    }
}

impl<T: BandScalar> Term<T> for Local<'_> {
    fn name(&self) -> &'static str {
        "local"
    }
    fn energy(&self, s: &State<'_, T>) -> Option<Share<f64>> {
        Some(Share::Grid(self.v.energy(s.basis, &s.rho.total_r())))
    }
    fn potential(&self, s: &State<'_, T>) -> Option<Vec<Vec<f64>>> {
        Some(vec![self.v.values_r.clone(); s.rho.r.len()])
    }
    fn forces(&self, s: &State<'_, T>) -> Option<Share<Vec<[f64; 3]>>> {
        Some(Share::Grid(forces(self.model, s.basis, &s.rho.total_g())))
    }
    fn stress(&self, s: &State<'_, T>) -> Option<Share<[[f64; 3]; 3]>> {
        let e_loc = self.v.energy(s.basis, &s.rho.total_r());
        let rho_g = s.rho.total_g();
        Some(Share::Grid(stress(self.model, s.basis, &rho_g, e_loc)))
    }
}

/// The local pseudopotential on the density sphere and on the grid.
#[derive(Debug, Clone)]
pub struct LocalPotential {
    /// V_loc(G) on this rank's density-sphere entries (Ha).
    pub values_g: Vec<Complex64>,
    /// V_loc(r) at this rank's grid points (Ha).
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

    /// This rank's part of E_loc = \int V_loc(r) rho(r) dr for the total density at its grid
    /// points.
    pub fn energy(&self, basis: &Basis, rho_total_r: &[f64]) -> f64 {
        self.values_r
            .iter()
            .zip(rho_total_r)
            .map(|(v, r)| v * r)
            .sum::<f64>()
            * basis.dv()
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

/// Forces (Ha/bohr) on the atoms from the local potential for the total density `rho_g`
/// (this rank's part: a sum over its density-sphere entries).
pub fn forces(model: &Model, basis: &Basis, rho_g: &[Complex64]) -> Vec<[f64; 3]> {
    super::structure_factor_forces(model, basis, rho_g, |s, q| form_factor(model, s, q))
}

/// Local-potential stress (Ha/bohr^3, QE sign) for the total density `rho_g` whose local energy
/// is `e_loc`: `sigma = (1/Omega) [E_loc delta + sum_G Re(rho* S) v'(|G|) G G/|G|]` (this
/// rank's part, with its part of E_loc).
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
