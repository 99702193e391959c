//! `Energies`: the Kohn–Sham energy by term (Ha), as the terms gave it, with QE-comparable
//! sums.

use crate::terms::entropy::MINUS_TS;
use serde::Serialize;

/// One term's energy.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct TermEnergy {
    /// The term's name ([`crate::terms::term::Term::name`]: "kinetic", "minus_ts", ...).
    pub name: &'static str,
    /// Its name in the summary ([`crate::terms::term::Term::label`]).
    pub label: &'static str,
    /// Its energy (Ha).
    pub value: f64,
}

/// The energy terms of a state in Ha, in the order of the term list: only the terms the model
/// has (no exact exchange without a hybrid, no -TS without smearing).
#[derive(Debug, Clone, Default, Serialize)]
pub struct Energies {
    terms: Vec<TermEnergy>,
}

impl Energies {
    /// The energies of named terms.
    pub fn from_terms(terms: impl IntoIterator<Item = TermEnergy>) -> Self {
        Self {
            terms: terms.into_iter().collect(),
        }
    }

    /// The terms, in order.
    pub fn terms(&self) -> &[TermEnergy] {
        &self.terms
    }

    /// The energy of term `name` (Ha); 0 when the model has no such term.
    pub fn get(&self, name: &str) -> f64 {
        self.terms
            .iter()
            .find(|t| t.name == name)
            .map_or(0.0, |t| t.value)
    }

    /// Replace the energy of term `name`, which must be one of the terms.
    pub fn set(&mut self, name: &str, value: f64) {
        let t = self.terms.iter_mut().find(|t| t.name == name);
        t.unwrap_or_else(|| panic!("no energy term {name}")).value = value;
    }

    /// The smearing term -TS (Ha; 0 without smearing).
    pub fn minus_ts(&self) -> f64 {
        self.get(MINUS_TS)
    }
    /// Internal energy E (no smearing term).
    pub fn internal(&self) -> f64 {
        self.total() - self.minus_ts()
    }
    /// Free energy F = E - TS: what Quantum ESPRESSO prints as "! total energy".
    pub fn total(&self) -> f64 {
        self.terms.iter().map(|t| t.value).sum()
    }
    /// QE's "one-electron contribution": kinetic + local + nonlocal.
    pub fn one_electron(&self) -> f64 {
        ["kinetic", "local", "nonlocal"]
            .iter()
            .map(|n| self.get(n))
            .sum()
    }
}
