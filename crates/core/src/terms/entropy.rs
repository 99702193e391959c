//! The smearing term -TS of the occupations (zero without smearing): part of the free energy
//! F = E - TS that the SCF minimises; no potential, forces or stress of its own.

use super::term::{Share, State, Term};
use crate::bands::BandScalar;

/// The -TS term.
pub struct Entropy;

impl<T: BandScalar> Term<T> for Entropy {
    fn name(&self) -> &'static str {
        "minus_ts"
    }
    fn energy(&self, s: &State<'_, T>) -> Share<f64> {
        Share::Whole(s.minus_ts)
    }
}
