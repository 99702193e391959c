//! A density of states as the input declares it (TOML `[dos]`; QE's `nscf` + `dos.x`).
//!
//! Contract: the k-points of the non-self-consistent step (a denser grid than the SCF's,
//! reduced by the crystal's symmetry), the method, the Gaussian width (unused by tetrahedra)
//! and the energy step, in Ha.

use crate::units::{EV_PER_HARTREE, HARTREE_PER_RYDBERG};
use crate::Kpoints;

/// How the k-point sum becomes a density of states.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum DosMethod {
    /// Gaussian broadening of every eigenvalue (dos.x's `bz_sum = 'smearing'`, `ngauss = 0`).
    #[default]
    Gaussian,
    /// The linear tetrahedron method on the grid (dos.x's `bz_sum = 'tetrahedra'` and
    /// `'tetrahedra_lin'`).
    Tetrahedra,
    /// The optimised tetrahedron method (Kawamura et al.; dos.x's `'tetrahedra_opt'`).
    TetrahedraOpt,
}

/// What `planewave dos` computes after the SCF.
#[derive(Debug, Clone, PartialEq)]
pub struct DosSpec {
    /// The k-points of the fixed-density step (default: the SCF's grid, doubled).
    pub kpoints: Option<Kpoints>,
    /// Gaussian broadening or tetrahedra (which need a grid of at least 2 points a side).
    pub method: DosMethod,
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
            method: DosMethod::Gaussian,
            width: 0.01 * HARTREE_PER_RYDBERG,
            step: 0.01 / EV_PER_HARTREE,
            nbands: None,
        }
    }
}
