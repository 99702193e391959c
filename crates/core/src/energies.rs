//! `Energies`: the Kohn–Sham energy by term (Ha), with QE-comparable sums.

use serde::Serialize;

/// Energy terms in Ha.
#[derive(Debug, Clone, Copy, Default, Serialize)]
pub struct Energies {
    /// Kinetic energy of the occupied states.
    pub kinetic: f64,
    /// Local pseudopotential energy, including the G = 0 (alpha Z) term.
    pub local: f64,
    /// Nonlocal pseudopotential energy.
    pub nonlocal: f64,
    /// Hartree energy.
    pub hartree: f64,
    /// Exchange–correlation energy (with the NLCC core density): for a hybrid, its semilocal
    /// part.
    pub xc: f64,
    /// Exact (Fock) exchange energy of a hybrid functional, its fraction included (QE's
    /// `+ Fock energy`); 0 otherwise.
    pub exact_exchange: f64,
    /// Ion–ion (Ewald) energy.
    pub ewald: f64,
    /// Smearing term -TS (0 without smearing).
    pub minus_ts: f64,
}

impl Energies {
    /// The energies of named terms ([`crate::terms::term::Term::name`]); unknown names panic,
    /// since every term of the functional has a field here.
    pub fn from_terms<'a>(terms: impl IntoIterator<Item = (&'a str, f64)>) -> Self {
        let mut e = Energies::default();
        for (name, v) in terms {
            let slot = match name {
                "kinetic" => &mut e.kinetic,
                "local" => &mut e.local,
                "nonlocal" => &mut e.nonlocal,
                "hartree" => &mut e.hartree,
                "xc" => &mut e.xc,
                "exact_exchange" => &mut e.exact_exchange,
                "ewald" => &mut e.ewald,
                "minus_ts" => &mut e.minus_ts,
                "core_correction" => continue, // inside xc
                other => panic!("energy term {other} has no field in Energies"),
            };
            *slot += v;
        }
        e
    }

    /// Internal energy E (no smearing term).
    pub fn internal(&self) -> f64 {
        self.kinetic
            + self.local
            + self.nonlocal
            + self.hartree
            + self.xc
            + self.exact_exchange
            + self.ewald
    }
    /// Free energy F = E - TS: what Quantum ESPRESSO prints as "! total energy".
    pub fn total(&self) -> f64 {
        self.internal() + self.minus_ts
    }
    /// QE's "one-electron contribution": kinetic + local + nonlocal.
    pub fn one_electron(&self) -> f64 {
        self.kinetic + self.local + self.nonlocal
    }
}
