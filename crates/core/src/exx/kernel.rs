//! The Coulomb kernel of exact exchange and its divergence constant, as Quantum ESPRESSO 6.7
//! defines them (`g2_convolution` and `exx_divergence` in `PW/src/exx_base.f90`), in Hartree
//! atomic units.
//!
//! Contract, for Q = q + G (q on the Γ-centred `nq1 x nq2 x nq3` grid, G a reciprocal-lattice
//! vector):
//! - `v(Q) = 4π/|Q|²` (Coulomb, PBE0) or `4π/|Q|² (1 - e^{-|Q|²/4ω²})` (its short-range erfc
//!   part, HSE, screening ω in 1/bohr).
//! - With the x_gamma extrapolation (Nguyen and de Gironcoli, PRB 79, 205114 (2009)): write
//!   Q = Σ n_i b_i; when every `n_i nq_i / 2` is an integer (Q on the grid of twice the q
//!   spacing) v(Q) = 0, and every other Q ≠ 0 gets 8/7. With one q-point this acts on the G
//!   lattice itself: G with all-even Miller indices drop out.
//! - At Q = 0 (|Q|² < 1e-8 bohr⁻²) v = -divergence, plus π/ω² for the erfc kernel without the
//!   extrapolation.
//! - The divergence (Gygi–Baldereschi): with the auxiliary `F(Q) = e^{-α Q²} v(Q) / 4π`,
//!   `α = 10 / ecutwfc(Ry) = 5 / ecut(Ha)` bohr², the sum over the q grid and the density
//!   sphere `|G|² <= 2 ecutrho(Ha)` (centred on G = 0, not on q) of `4π w(Q) F(Q)` for Q ≠ 0,
//!   plus, without the extrapolation, `4π` times the Q → 0 limit of `F - 1/Q²` (-α, or 1/4ω²
//!   for erfc), minus `N_q Ω I` with `I = 1/√(πα)` (less `1/√(π(α + 1/4ω²))` for erfc), the
//!   integral of the auxiliary function (QE integrates the erfc part numerically; the analytic
//!   value differs by less than 1e-10 on the reference cases).

use crate::crystal::Crystal;
use std::f64::consts::PI;

/// Below this |Q|² (bohr⁻²) Q counts as zero.
const Q2_ZERO: f64 = 1e-8;

pub use planewave_input::KernelSpec;

/// The kernel of one cell and cutoff, with its divergence constant.
#[derive(Clone, Debug)]
pub struct CoulombKernel {
    spec: KernelSpec,
    /// Rows b1, b2, b3 (1/bohr).
    recip: [[f64; 3]; 3],
    divergence: f64,
}

impl CoulombKernel {
    /// The kernel of `spec` for `crystal`, with the divergence of wavefunction cutoff
    /// `ecut_wfc` and density cutoff `ecut_rho` (both Ha).
    pub fn new(spec: KernelSpec, crystal: &Crystal, ecut_wfc: f64, ecut_rho: f64) -> Self {
        let mut k = Self {
            spec,
            recip: crystal.recip,
            divergence: 0.0,
        };
        k.divergence = k.gygi_baldereschi(crystal, ecut_wfc, ecut_rho);
        k
    }

    /// The divergence constant (Ha bohr³): the kernel at Q = 0 is minus this (QE's `exxdiv`,
    /// which is in Ry bohr³, is twice it).
    pub fn divergence(&self) -> f64 {
        self.divergence
    }

    /// v(Q) (Ha bohr³ per unit of 1/Ω) for `q_frac + G` given in crystal coordinates
    /// (fractional q plus integer Miller indices).
    pub fn at(&self, q_crystal: [f64; 3]) -> f64 {
        let q2 = self.norm2(q_crystal);
        if q2 < Q2_ZERO {
            let erfc_limit = match self.spec.screening {
                Some(w) if !self.spec.x_gamma_extrapolation => PI / (w * w),
                _ => 0.0,
            };
            return -self.divergence + erfc_limit;
        }
        self.weight(q_crystal) * self.bare(q2)
    }

    /// The kernel without extrapolation weight, at Q ≠ 0.
    fn bare(&self, q2: f64) -> f64 {
        let coulomb = 4.0 * PI / q2;
        match self.spec.screening {
            Some(w) => coulomb * (1.0 - (-q2 / (4.0 * w * w)).exp()),
            None => coulomb,
        }
    }

    /// The x_gamma extrapolation weight of Q ≠ 0: 0 on the doubled grid, else 8/7 (1 without
    /// the extrapolation).
    fn weight(&self, q_crystal: [f64; 3]) -> f64 {
        if !self.spec.x_gamma_extrapolation {
            return 1.0;
        }
        let on_double_grid = (0..3).all(|i| {
            let x = q_crystal[i] * self.spec.q_grid[i] as f64 / 2.0;
            (x - x.round()).abs() < 1e-8
        });
        if on_double_grid {
            0.0
        } else {
            8.0 / 7.0
        }
    }

    /// |Q|² of Q in crystal coordinates.
    fn norm2(&self, q: [f64; 3]) -> f64 {
        (0..3)
            .map(|c| (0..3).map(|i| q[i] * self.recip[i][c]).sum::<f64>().powi(2))
            .sum()
    }

    /// The Gygi–Baldereschi divergence (see the module doc).
    fn gygi_baldereschi(&self, crystal: &Crystal, ecut_wfc: f64, ecut_rho: f64) -> f64 {
        let alpha = 5.0 / ecut_wfc;
        let sphere = crate::basis::sphere(crystal, [0.0; 3], (2.0 * ecut_rho).sqrt());
        let [n1, n2, n3] = self.spec.q_grid;
        let mut sum = 0.0;
        for iq in 0..n1 * n2 * n3 {
            let q = [
                (iq / (n2 * n3)) as f64 / n1 as f64,
                ((iq / n3) % n2) as f64 / n2 as f64,
                (iq % n3) as f64 / n3 as f64,
            ];
            for (m, _) in &sphere {
                let qg = [q[0] + m[0] as f64, q[1] + m[1] as f64, q[2] + m[2] as f64];
                let q2 = self.norm2(qg);
                if q2 >= Q2_ZERO {
                    sum += self.weight(qg) * (-alpha * q2).exp() * self.bare(q2);
                }
            }
        }
        if !self.spec.x_gamma_extrapolation {
            // The Q -> 0 limit of 4π (F(Q) - 1/Q²).
            sum += 4.0
                * PI
                * match self.spec.screening {
                    Some(w) => 1.0 / (4.0 * w * w),
                    None => -alpha,
                };
        }
        let mut integral = 1.0 / (PI * alpha).sqrt();
        if let Some(w) = self.spec.screening {
            integral -= 1.0 / (PI * (alpha + 1.0 / (4.0 * w * w))).sqrt();
        }
        let nq = (n1 * n2 * n3) as f64;
        sum - nq * crystal.volume * integral
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// QE 6.7's `exxdiv` (Ry bohr³) of the hybrid reference cases, with and without the
    /// x_gamma extrapolation: `summary.json -> exxdiv` of `shared/reference/hybrid/<case>`
    /// (recomputed there from QE's formula; QE does not print it).
    const QE_EXXDIV_RY: [(&str, f64, f64); 4] = [
        ("si2_pbe0_gth", -827.3784460679708, -965.2748537459661),
        ("si2_pbe0_sg15", -1861.6015036529363, -2171.8684209284293),
        ("si2_hse_sg15", -264.3591558436561, 9.672712506691141),
        ("h2o_pbe0_gth_gamma", -700.4071492203607, -817.1416740904201),
    ];

    fn case(name: &str) -> (Crystal, f64, f64, [usize; 3], Option<f64>) {
        let si = [[0.0, 5.13, 5.13], [5.13, 0.0, 5.13], [5.13, 5.13, 0.0]];
        let cube = [[12.0, 0.0, 0.0], [0.0, 12.0, 0.0], [0.0, 0.0, 12.0]];
        let (lattice, ecut, q, w) = match name {
            "si2_pbe0_gth" => (si, 15.0, [2; 3], None),
            "si2_pbe0_sg15" => (si, 15.0, [3; 3], None),
            "si2_hse_sg15" => (si, 15.0, [3; 3], Some(0.106)),
            _ => (cube, 30.0, [1; 3], None),
        };
        let crystal = Crystal::new(lattice, Vec::new()).expect("a regular cell");
        (crystal, ecut, 4.0 * ecut, q, w)
    }

    #[test]
    fn divergence_matches_quantum_espresso() {
        for (name, with, without) in QE_EXXDIV_RY {
            let (crystal, ecut, ecut_rho, q_grid, screening) = case(name);
            for (x_gamma_extrapolation, qe) in [(true, with), (false, without)] {
                let spec = KernelSpec {
                    screening,
                    x_gamma_extrapolation,
                    q_grid,
                };
                let k = CoulombKernel::new(spec, &crystal, ecut, ecut_rho);
                let ours = 2.0 * k.divergence();
                assert!(
                    (ours - qe).abs() < 1e-8 * qe.abs().max(1.0),
                    "{name} x_gamma {x_gamma_extrapolation}: {ours} against QE {qe}"
                );
            }
        }
    }

    #[test]
    fn kernel_values_follow_the_extrapolation_rule() {
        let (crystal, ecut, ecut_rho, _, _) = case("si2_pbe0_gth");
        let spec = |x, w| KernelSpec {
            screening: w,
            x_gamma_extrapolation: x,
            q_grid: [2; 3],
        };
        let plain = CoulombKernel::new(spec(false, None), &crystal, ecut, ecut_rho);
        let extra = CoulombKernel::new(spec(true, None), &crystal, ecut, ecut_rho);
        // Q = (1/2, 0, 0) is off the doubled grid: 8/7 of the Coulomb value.
        let q = [0.5, 0.0, 0.0];
        assert!((extra.at(q) - 8.0 / 7.0 * plain.at(q)).abs() < 1e-12 * plain.at(q));
        // Q = (1, 0, 0) lies on it: dropped.
        assert_eq!(extra.at([1.0, 0.0, 0.0]), 0.0);
        // Q = 0: minus the divergence; the erfc kernel without extrapolation adds π/ω².
        assert_eq!(plain.at([0.0; 3]), -plain.divergence());
        let w = 0.106;
        let hse = CoulombKernel::new(spec(false, Some(w)), &crystal, ecut, ecut_rho);
        let expect = -hse.divergence() + PI / (w * w);
        assert!((hse.at([0.0; 3]) - expect).abs() < 1e-12 * expect.abs());
        // The erfc kernel tends to the Coulomb one at large Q.
        let far = [7.0, 0.0, 0.0];
        assert!((hse.at(far) - plain.at(far)).abs() < 1e-12 * plain.at(far));
    }
}
