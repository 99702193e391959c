//! The stress tensor `sigma = -(1/Omega) dE/d eps` (Ha/bohr^3, Quantum ESPRESSO's sign: a negative
//! diagonal means the cell wants to shrink; pressure = trace/3) of a converged SCF state.
//!
//! Strain at fixed fractional positions and fixed plane-wave coefficients (the Pulay-free form at
//! a fixed set of plane waves): kinetic, Hartree, XC (LDA and the GGA gradient part), local,
//! nonlocal, NLCC core, Ewald — the terms of [`crate::terms::term::standard`] that give stress, each
//! completed over the k-point groups and symmetrised with the crystal's operations.

use crate::bands::BandScalar;
use crate::basis::Basis;
use crate::converged::{of_converged, PerTerm};
use crate::model::Model;
use crate::scf::ScfResult;
use crate::symmetry::symmetrize_stress;
use crate::terms::term::{Share, State, Term};

/// 1 Ha/bohr^3 in GPa.
pub const HA_PER_BOHR3_IN_GPA: f64 = 29_421.015_697_2;

/// Total stress and its parts (symmetrised), Ha/bohr^3.
#[derive(Debug, Clone)]
pub struct Stress {
    /// The stress tensor.
    pub total: [[f64; 3]; 3],
    /// (term name, tensor) for "kinetic", "local", "nonlocal", "hartree", "xc", "ewald",
    /// "core_correction".
    pub terms: Vec<(&'static str, [[f64; 3]; 3])>,
    /// (term name, seconds) on this rank, "set-up" first ([`crate::converged::PerTerm`]).
    pub seconds: Vec<(&'static str, f64)>,
}

impl Stress {
    /// Pressure trace/3 (Ha/bohr^3).
    pub fn pressure(&self) -> f64 {
        (self.total[0][0] + self.total[1][1] + self.total[2][2]) / 3.0
    }
}

/// The stress of a term (for [`crate::converged::of_converged`]).
pub(crate) struct StressOf;

impl crate::converged::Quantity for StressOf {
    type Value = [[f64; 3]; 3];
    fn of<T: BandScalar>(t: &dyn Term<T>, s: &State<'_, T>) -> Option<Share<Self::Value>> {
        t.stress(s)
    }
}

/// Stress of the converged state `scf` of `model` on `basis`.
pub fn compute(model: &Model, basis: &Basis, scf: &ScfResult) -> Stress {
    let (per_term, _) = of_converged::<StressOf, StressOf>(model, basis, scf, (true, false));
    from_terms(model, per_term.expect("asked for"))
}

/// The stress of every term, symmetrised, and their sum.
pub(crate) fn from_terms(model: &Model, per_term: PerTerm<[[f64; 3]; 3]>) -> Stress {
    let terms: Vec<_> = (per_term.values.into_iter())
        .map(|(name, s)| {
            (
                name,
                symmetrize_stress(&model.symmetries, &model.crystal, &s),
            )
        })
        .collect();
    let mut total = [[0.0; 3]; 3];
    for (_, s) in &terms {
        for (t, x) in total.iter_mut().flatten().zip(s.iter().flatten()) {
            *t += x;
        }
    }
    Stress {
        total,
        terms,
        seconds: per_term.seconds,
    }
}
