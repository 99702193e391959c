//! Hartree: V_H(G) = 4 pi rho(G) / G^2 (G != 0), E_H = (Omega/2) sum_G 4 pi |rho(G)|^2 / G^2.

use super::term::{Share, State, Term};
use crate::bands::BandScalar;
use crate::basis::Basis;
use num_complex::Complex64;
use std::f64::consts::PI;

/// The Hartree term.
pub struct Hartree;

impl<T: BandScalar> Term<T> for Hartree {
    fn name(&self) -> &'static str {
        "hartree"
    }
    fn energy(&self, s: &State<'_, T>) -> Option<Share<f64>> {
        Some(Share::Grid(
            potential_and_energy(s.basis, &s.rho.total_g()).1,
        ))
    }
    fn potential(&self, s: &State<'_, T>) -> Option<Vec<Vec<f64>>> {
        let (v_g, _) = potential_and_energy(s.basis, &s.rho.total_g());
        Some(vec![super::sphere_to_real(s.basis, &v_g); s.rho.r.len()])
    }
    fn stress(&self, s: &State<'_, T>) -> Option<Share<[[f64; 3]; 3]>> {
        let rho_g = s.rho.total_g();
        let (_, e_h) = potential_and_energy(s.basis, &rho_g);
        Some(Share::Grid(stress(s.basis, &rho_g, e_h)))
    }
}

/// Hartree potential on this rank's density-sphere entries and its part of the Hartree energy,
/// from the total rho(G).
pub fn potential_and_energy(basis: &Basis, rho_g: &[Complex64]) -> (Vec<Complex64>, f64) {
    let mut e = 0.0;
    let v = rho_g
        .iter()
        .zip(&basis.rho_g2)
        .map(|(r, &g2)| {
            if g2 < 1e-12 {
                Complex64::new(0.0, 0.0)
            } else {
                e += 4.0 * PI * r.norm_sqr() / g2;
                r * (4.0 * PI / g2)
            }
        })
        .collect();
    (v, 0.5 * basis.volume * e)
}

/// Hartree stress (Ha/bohr^3, QE sign; this rank's part) for the total rho(G) with (this
/// rank's part of) the Hartree energy `e_h`:
/// `sigma_ab = (E_H/Omega) delta_ab - 4 pi sum_{G != 0} |rho(G)|^2 G_a G_b / G^4`.
pub fn stress(basis: &Basis, rho_g: &[Complex64], e_h: f64) -> [[f64; 3]; 3] {
    let mut out = [[0.0; 3]; 3];
    for ((r, &g2), g) in rho_g.iter().zip(&basis.rho_g2).zip(&basis.rho_g) {
        if g2 < 1e-12 {
            continue;
        }
        let w = 4.0 * PI * r.norm_sqr() / (g2 * g2);
        for a in 0..3 {
            for b in 0..3 {
                out[a][b] -= w * g[a] * g[b];
            }
        }
    }
    for (a, row) in out.iter_mut().enumerate() {
        row[a] += e_h / basis.volume;
    }
    out
}
