//! Non-linear core correction (NLCC): the pseudo-core density rho_c(r) = sum_atoms rho_c(|r -
//! tau|) that XC sees besides the valence density. Its energy is inside the XC term; this term
//! gives its explicit dependence on the positions and on strain (forces and the shape part of
//! the stress), through the XC potential it couples to.

use super::term::{Share, State, Term};
use crate::bands::BandScalar;
use crate::density;
use crate::model::Model;
use num_complex::Complex64;

/// The core-correction term (contributes only when a species has a core density).
pub struct CoreCorrection;

/// The XC potential averaged over spin channels, on the density sphere: what the NLCC core
/// density couples to (`dE_xc/d rho_core`). None without NLCC.
fn core_coupling<T: BandScalar>(s: &State<'_, T>) -> Option<Vec<Complex64>> {
    let (model, basis, rho) = (s.model, s.basis, s.rho);
    let core = density::core_density(model, basis)?;
    let (xr, xg) = density::with_core(rho, Some(&core));
    let v = super::xc::compute(
        model.functional,
        s.exchange_mix(),
        basis,
        &xr,
        &xg,
        super::xc::XcParts::Potential,
    )
    .potential;
    let n = v.len() as f64;
    let avg: Vec<f64> = (0..v[0].len())
        .map(|i| v.iter().map(|c| c[i]).sum::<f64>() / n)
        .collect();
    Some(super::real_to_sphere(basis, &avg))
}

fn core_form_factor(model: &Model) -> impl Fn(usize, f64) -> f64 + '_ {
    |s, q| model.species[s].pseudo.core_density_fourier(q)
}

impl<T: BandScalar> Term<T> for CoreCorrection {
    fn name(&self) -> &'static str {
        "core_correction"
    }
    fn forces(&self, s: &State<'_, T>) -> Option<Share<Vec<[f64; 3]>>> {
        s.core?;
        let v = core_coupling(s)?;
        let f = super::structure_factor_forces(s.model, s.basis, &v, core_form_factor(s.model));
        Some(Share::Grid(f))
    }
    fn stress(&self, s: &State<'_, T>) -> Option<Share<[[f64; 3]; 3]>> {
        s.core?;
        let v = core_coupling(s)?;
        let shape = super::structure_factor_strain(s.model, s.basis, &v, core_form_factor(s.model));
        let omega = s.basis.volume;
        Some(Share::Grid(shape.map(|r| r.map(|x| x / omega))))
    }
}
