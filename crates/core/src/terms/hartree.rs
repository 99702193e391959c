//! Hartree: V_H(G) = 4 pi rho(G) / G^2 (G != 0), E_H = (Omega/2) sum_G 4 pi |rho(G)|^2 / G^2.

use crate::basis::Basis;
use num_complex::Complex64;
use std::f64::consts::PI;

/// Hartree potential on the density sphere and the Hartree energy, from the total rho(G).
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
