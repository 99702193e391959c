//! The Hartree energy of a one-centre density in the spheres of PAW (Ha, e² = 1).
//!
//! Contract: a density `ρ(r) = Σ_lm ρ_lm(r) Y_lm(r̂)` is given by `f_lm(r) = r² ρ_lm(r)` on
//! the first points of a radial mesh (`r`, `rab` = dr/di). [`potential`] gives
//! `v_lm(r) = 4π/(2l+1) [r^{-l-1} ∫_0^r f r'^l dr' + r^l ∫_r^R f r'^{-l-1} dr']`, the
//! cumulative integrals by a fourth-order rule in the mesh index; the energy is
//! `½ Σ_lm ∫ v_lm f_lm dr` by QE's Simpson rule, and its derivative with respect to `f_lm` at
//! point k is `v_lm(k) w_k` with `w` the Simpson weights (to the rules' order).

use std::f64::consts::PI;

/// Cumulative integral `c[k] = ∫_{r_0}^{r_k} g dr` of `h = g rab` (per mesh index), by the
/// four-point rule inside and three-point rules at the two ends.
fn cumulative(h: &[f64]) -> Vec<f64> {
    let n = h.len();
    let mut c = vec![0.0; n];
    for k in 0..n.saturating_sub(1) {
        let step = if n < 4 {
            0.5 * (h[k] + h[k + 1])
        } else if k == 0 {
            (5.0 * h[0] + 8.0 * h[1] - h[2]) / 12.0
        } else if k + 2 == n {
            (-h[k - 1] + 8.0 * h[k] + 5.0 * h[k + 1]) / 12.0
        } else {
            (-h[k - 1] + 13.0 * h[k] + 13.0 * h[k + 1] - h[k + 2]) / 24.0
        };
        c[k + 1] = c[k] + step;
    }
    c
}

/// The Hartree potential `v_l(r)` (Ha) of the component `f = r² ρ_lm` of angular momentum `l`
/// on the mesh points of `f` (see the module doc).
pub fn potential(l: usize, f: &[f64], r: &[f64], rab: &[f64]) -> Vec<f64> {
    let n = f.len();
    let li = l as i32;
    let inner: Vec<f64> = (0..n).map(|k| f[k] * r[k].powi(li) * rab[k]).collect();
    // r^{-l-1}, 0 at r = 0 (as QE's radial grids; f vanishes there).
    let inv = |k: usize| {
        if r[k] > 1e-16 {
            r[k].powi(-li - 1)
        } else {
            0.0
        }
    };
    let outer: Vec<f64> = (0..n).map(|k| f[k] * inv(k) * rab[k]).collect();
    let (a, b) = (cumulative(&inner), cumulative(&outer));
    let total = b[n - 1];
    let scale = 4.0 * PI / (2 * l + 1) as f64;
    (0..n)
        .map(|k| scale * (a[k] * inv(k) + (total - b[k]) * r[k].powi(li)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pseudo::radial::simpson_weights;

    /// A logarithmic mesh like pslibrary's: r_i = e^{x0 + i dx} / Z.
    fn mesh(n: usize) -> (Vec<f64>, Vec<f64>) {
        let (x0, dx) = (-7.0f64, 0.0125);
        let r: Vec<f64> = (0..n).map(|i| (x0 + i as f64 * dx).exp() / 6.0).collect();
        let rab = r.iter().map(|r| r * dx).collect();
        (r, rab)
    }

    #[test]
    fn a_gaussian_charge_has_its_analytic_potential_and_energy() {
        // ρ = e^{-r²} Y_00 / (its norm): the potential of a spherical Gaussian is known.
        let (r, rab) = mesh(1201);
        let a = 1.3;
        let y00 = 0.5 / PI.sqrt();
        let f: Vec<f64> = r.iter().map(|r| r * r * (-a * r * r).exp() / y00).collect();
        let v = potential(0, &f, &r, &rab);
        // Charge Q = (π/a)^{3/2}; v(r) Y_00 = Q erf(√a r)/r: Q/r outside, 2Q√(a/π) at 0.
        let q = (PI / a).powf(1.5);
        let k = r.iter().position(|&x| x > 6.0).unwrap();
        assert!((v[k] * y00 - q / r[k]).abs() < 1e-10 * q, "outside");
        let centre = 2.0 * q * (a / PI).sqrt();
        assert!((v[0] * y00 - centre).abs() < 1e-7 * centre, "centre");
        let w = simpson_weights(&rab, r.len());
        let e: f64 = 0.5 * (0..r.len()).map(|k| w[k] * v[k] * f[k]).sum::<f64>();
        // Self-energy of a Gaussian charge: Q² √(a/(2π)).
        let exact = q * q * (a / (2.0 * PI)).sqrt();
        assert!((e - exact).abs() < 1e-8 * exact, "{e} vs {exact}");
    }

    #[test]
    fn a_quadrupole_decays_as_r_to_the_minus_three() {
        let (r, rab) = mesh(1201);
        let f: Vec<f64> = r.iter().map(|r| r.powi(4) * (-r * r).exp()).collect();
        let v = potential(2, &f, &r, &rab);
        // Beyond the charge: v = (4π/5) r^{-3} ∫ r'^2 f dr'; here ∫ r^6 e^{-r²} dr = 15√π/16.
        let moment = 15.0 * PI.sqrt() / 16.0;
        let k = r.iter().position(|&x| x > 9.0).unwrap();
        let exact = 4.0 * PI / 5.0 * moment / r[k].powi(3);
        assert!((v[k] - exact).abs() < 1e-9 * exact, "{} vs {exact}", v[k]);
    }
}
