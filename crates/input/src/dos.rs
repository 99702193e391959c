//! A density of states as the input declares it (TOML `[dos]`; QE's `nscf` + `dos.x`).
//!
//! Contract: the k-points of the non-self-consistent step (a denser grid than the SCF's,
//! reduced by the crystal's symmetry), the broadening and the energy step, in Ha.

use crate::units::{EV_PER_HARTREE, HARTREE_PER_RYDBERG};
use crate::Kpoints;

/// What `planewave dos` computes after the SCF.
#[derive(Debug, Clone, PartialEq)]
pub struct DosSpec {
    /// The k-points of the fixed-density step (default: the SCF's grid, doubled).
    pub kpoints: Option<Kpoints>,
    /// Gaussian broadening: the width s of exp(-((E - e)/s)^2) / (s sqrt(pi)), Ha (default
    /// 0.01 Ry, dos.x's `degauss` of the reference runs).
    pub width: f64,
    /// Energy step of the output grid, Ha (default 0.01 eV, dos.x's `DeltaE`).
    pub step: f64,
    /// Bands per k-point (default: the SCF's).
    pub nbands: Option<usize>,
}

impl Default for DosSpec {
    fn default() -> Self {
        DosSpec {
            kpoints: None,
            width: 0.01 * HARTREE_PER_RYDBERG,
            step: 0.01 / EV_PER_HARTREE,
            nbands: None,
        }
    }
}
