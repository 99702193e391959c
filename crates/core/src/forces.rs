//! Forces on the atoms, `F = -dE/dtau` (Ha/bohr), from a converged SCF state.
//!
//! At self-consistency only the explicit dependence of each term on the positions counts
//! (Hellmann–Feynman): local potential, nonlocal projectors, NLCC core density (through v_xc)
//! and Ewald — the terms of [`crate::terms::term::standard`] that give forces, each completed over the
//! k-point groups and symmetrised with the crystal's operations. Each term is kept so that it
//! can be compared with Quantum ESPRESSO's breakdown.

use crate::bands::BandScalar;
use crate::basis::Basis;
use crate::converged::{of_converged, PerTerm};
use crate::model::Model;
use crate::scf::ScfResult;
use crate::symmetry::symmetrize_forces;
use crate::terms::term::{Share, State, Term};

/// Total forces and their parts (all symmetrised), Ha/bohr, one vector per atom.
#[derive(Debug, Clone)]
pub struct Forces {
    /// The total force on each atom.
    pub total: Vec<[f64; 3]>,
    /// (term name, forces) for "local", "nonlocal", "ewald", "core_correction".
    pub terms: Vec<(&'static str, Vec<[f64; 3]>)>,
    /// (term name, seconds) on this rank, "set-up" first ([`crate::converged::PerTerm`]).
    pub seconds: Vec<(&'static str, f64)>,
}

impl Forces {
    /// Largest |F| over the atoms (Ha/bohr).
    pub fn max_norm(&self) -> f64 {
        self.total
            .iter()
            .map(|f| (f[0] * f[0] + f[1] * f[1] + f[2] * f[2]).sqrt())
            .fold(0.0, f64::max)
    }
}

/// The forces of a term (for [`crate::converged::of_converged`]).
pub(crate) struct ForcesOf;

impl crate::converged::Quantity for ForcesOf {
    type Value = Vec<[f64; 3]>;
    fn of<T: BandScalar>(t: &dyn Term<T>, s: &State<'_, T>) -> Option<Share<Self::Value>> {
        t.forces(s)
    }
}

/// Forces of the converged state `scf` of `model` on `basis`.
pub fn compute(model: &Model, basis: &Basis, scf: &ScfResult) -> Forces {
    let (per_term, _) = of_converged::<ForcesOf, ForcesOf>(model, basis, scf, (true, false));
    from_terms(model, per_term.expect("asked for"))
}

/// The forces of every term, symmetrised, and their sum.
pub(crate) fn from_terms(model: &Model, per_term: PerTerm<Vec<[f64; 3]>>) -> Forces {
    let terms: Vec<_> = (per_term.values.into_iter())
        .map(|(name, f)| {
            (
                name,
                symmetrize_forces(&model.symmetries, &model.crystal, &f),
            )
        })
        .collect();
    let mut total = vec![[0.0; 3]; model.crystal.atoms.len()];
    for (_, f) in &terms {
        for (t, x) in total.iter_mut().zip(f) {
            (0..3).for_each(|i| t[i] += x[i]);
        }
    }
    Forces {
        total,
        terms,
        seconds: per_term.seconds,
    }
}
