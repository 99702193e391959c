//! Occupation smearing: occupation function f(x) and entropy S(x) of x = (eps - mu) / width.
//!
//! Conventions (as DFTK and QE): Gaussian f = erfc(x)/2, S = e^{-x^2}/(2 sqrt pi);
//! Fermi–Dirac f = 1/(1+e^x), S = -f ln f - (1-f) ln(1-f); Methfessel–Paxton order 1
//! f = erfc(x)/2 - x e^{-x^2}/(2 sqrt pi), S = (1 - 2x^2) e^{-x^2}/(4 sqrt pi); Marzari–Vanderbilt
//! (cold) with y = x + 1/sqrt 2: f = erfc(y)/2 + e^{-y^2}/sqrt(2 pi), S = y e^{-y^2}/sqrt(2 pi).
//! In every case dS/dx = x df/dx, and the free energy is F = E - T S with
//! -TS = -width * sum_nk w_k f_max S(x_nk).

use crate::special::erfc;
use std::f64::consts::PI;

pub use planewave_input::Smearing;

/// The occupation and entropy functions of a smearing kind.
pub trait SmearingFunction {
    /// Occupation (between 0 and 1, MP may overshoot slightly) at x = (eps - mu) / width.
    fn occupation(&self, x: f64) -> f64;
    /// Entropy function S(x).
    fn entropy(&self, x: f64) -> f64;
    /// The broadened delta function `-df/dx` (it integrates to 1): a state's share of the
    /// density of states, dos.x's `w0gauss`.
    fn delta(&self, x: f64) -> f64;
    /// Widths beyond which [`Self::delta`] is negligible (below 1e-15).
    fn reach(&self) -> f64;
}

impl SmearingFunction for Smearing {
    fn delta(&self, x: f64) -> f64 {
        let g = (-x * x).exp() / PI.sqrt();
        match self {
            Smearing::None => 0.0,
            Smearing::Gaussian(_) => g,
            Smearing::FermiDirac(_) => {
                let f = self.occupation(x);
                f * (1.0 - f)
            }
            Smearing::MethfesselPaxton(_) => g * (1.5 - x * x),
            Smearing::MarzariVanderbilt(_) => {
                let y = x + std::f64::consts::FRAC_1_SQRT_2;
                (-y * y).exp() / PI.sqrt() * (1.0 + std::f64::consts::SQRT_2 * y)
            }
        }
    }

    fn reach(&self) -> f64 {
        match self {
            Smearing::FermiDirac(_) => 36.0,
            _ => 7.0,
        }
    }

    fn occupation(&self, x: f64) -> f64 {
        match self {
            Smearing::None => {
                if x < 0.0 {
                    1.0
                } else {
                    0.0
                }
            }
            Smearing::Gaussian(_) => 0.5 * erfc(x),
            Smearing::FermiDirac(_) => {
                if x > 0.0 {
                    let e = (-x).exp();
                    e / (1.0 + e)
                } else {
                    1.0 / (1.0 + x.exp())
                }
            }
            Smearing::MethfesselPaxton(_) => 0.5 * erfc(x) - x * (-x * x).exp() / (2.0 * PI.sqrt()),
            Smearing::MarzariVanderbilt(_) => {
                let y = x + std::f64::consts::FRAC_1_SQRT_2;
                0.5 * erfc(y) + (-y * y).exp() / (2.0 * PI).sqrt()
            }
        }
    }

    fn entropy(&self, x: f64) -> f64 {
        match self {
            Smearing::None => 0.0,
            Smearing::Gaussian(_) => (-x * x).exp() / (2.0 * PI.sqrt()),
            Smearing::FermiDirac(_) => {
                let f = self.occupation(x);
                let term = |p: f64| if p > 0.0 { -p * p.ln() } else { 0.0 };
                term(f) + term(1.0 - f)
            }
            Smearing::MethfesselPaxton(_) => {
                (1.0 - 2.0 * x * x) * (-x * x).exp() / (4.0 * PI.sqrt())
            }
            Smearing::MarzariVanderbilt(_) => {
                let y = x + std::f64::consts::FRAC_1_SQRT_2;
                y * (-y * y).exp() / (2.0 * PI).sqrt()
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn delta_is_minus_the_occupation_s_derivative_and_integrates_to_one() {
        for s in [
            Smearing::Gaussian(1.0),
            Smearing::FermiDirac(1.0),
            Smearing::MethfesselPaxton(1.0),
            Smearing::MarzariVanderbilt(1.0),
        ] {
            let h = 1e-5;
            let mut total = 0.0;
            let mut x = -s.reach();
            while x < s.reach() {
                let numeric = -(s.occupation(x + h) - s.occupation(x - h)) / (2.0 * h);
                assert!((s.delta(x) - numeric).abs() < 1e-8, "{s:?} at {x}");
                total += s.delta(x) * 1e-3;
                x += 1e-3;
            }
            assert!((total - 1.0).abs() < 1e-6, "{s:?}: {total}");
        }
    }

    #[test]
    fn entropy_derivative_is_x_times_occupation_derivative() {
        for s in [
            Smearing::Gaussian(0.01),
            Smearing::FermiDirac(0.01),
            Smearing::MethfesselPaxton(0.01),
            Smearing::MarzariVanderbilt(0.01),
        ] {
            for &x in &[-2.0, -0.7, 0.0, 0.3, 1.5] {
                let h = 1e-5;
                let ds = (s.entropy(x + h) - s.entropy(x - h)) / (2.0 * h);
                let df = (s.occupation(x + h) - s.occupation(x - h)) / (2.0 * h);
                assert!(
                    (ds - x * df).abs() < 1e-8,
                    "{s:?} x={x}: {ds} vs {}",
                    x * df
                );
            }
            assert!((s.occupation(-30.0) - 1.0).abs() < 1e-12 && s.occupation(30.0).abs() < 1e-12);
        }
    }
}
