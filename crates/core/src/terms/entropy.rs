//! The smearing term -TS of the occupations (zero without smearing): part of the free energy
//! F = E - TS that the SCF minimises; no potential, forces or stress of its own.

use super::term::{Share, State, Term};
use crate::bands::BandScalar;

/// The term's name, under which [`crate::energies::Energies`] holds -TS.
pub const MINUS_TS: &str = "minus_ts";

/// The -TS term.
pub struct Entropy;

impl<T: BandScalar> Term<T> for Entropy {
    fn name(&self) -> &'static str {
        MINUS_TS
    }
    fn label(&self) -> &'static str {
        "-TS (smearing)"
    }
    fn energy(&self, s: &State<'_, T>) -> Option<Share<f64>> {
        Some(Share::Whole(s.minus_ts))
    }
}
