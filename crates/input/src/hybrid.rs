//! The exact-exchange part of a hybrid functional as the input declares it (QE's
//! `exx_fraction`, `screening_parameter`, `x_gamma_extrapolation`, `nqx1..3`). The kernel and
//! operator built from it are the physics crate's (`planewave_core::exx`).

/// The exact-exchange part of a hybrid functional: `fraction` (0.25) of Fock exchange with the
/// Coulomb kernel (PBE0: the semilocal exchange scaled by `1 - fraction`) or the erfc kernel
/// of `kernel.screening` (HSE: less `fraction` times the short-range semilocal exchange).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Hybrid {
    /// The exact-exchange fraction `a` (QE `exx_fraction`).
    pub fraction: f64,
    /// The kernel: screening, divergence treatment and q grid.
    pub kernel: KernelSpec,
}

/// What defines the kernel of one calculation.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct KernelSpec {
    /// Screening ω (1/bohr) of the erfc kernel (HSE); None: the full Coulomb kernel (PBE0).
    pub screening: Option<f64>,
    /// QE's `x_gamma_extrapolation` (its default: true).
    pub x_gamma_extrapolation: bool,
    /// The q grid `nqx1..3` (a sub-grid of the k grid; `[1, 1, 1]` at Γ).
    pub q_grid: [usize; 3],
}
