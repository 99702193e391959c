//! The SCF's policies as values: how tight each eigensolve is, when a loop has converged, and
//! how the next input density is mixed.
//!
//! Contract: [`super::ScfParams::policies`] holds one of each; the defaults are the rules the
//! SCF has always used. A caller changes a rule by passing another value that implements the
//! trait; the loop ([`super::Engine::iterate`]) asks the values and knows no rule itself. A
//! policy is the same on every rank (the loop's decisions are taken on rank 0 and shared).

use crate::basis::Basis;
use crate::mixing::AndersonMixer;
use num_complex::Complex64;
use std::fmt::Debug;
use std::sync::Arc;

/// What the eigensolver tolerance rule is told before an iteration's eigensolve.
#[derive(Debug, Clone, Copy)]
pub struct ToleranceQuery {
    /// The bands are random: the first iteration of a run that did not start from bands.
    pub from_random: bool,
    /// The last density residual (1 before the first iteration).
    pub residual: f64,
    /// Bands per (spin, k) block.
    pub nbands: usize,
}

/// Chooses each eigensolve's tolerance (Ha) and iteration limit.
pub trait EigensolverTolerance: Debug + Send + Sync {
    /// (tolerance, iteration limit) of this iteration's eigensolve.
    fn choose(&self, q: &ToleranceQuery) -> (f64, usize);
}

/// The default: loose from random bands (1e-2, up to 100 iterations), then a tenth of what the
/// density residual can resolve, `0.1 residual / sqrt(nbands)` within [1e-11, 1e-2], up to 8
/// iterations: errors in the occupied bands add up in the density, so that the output density
/// keeps responding to the mixed input.
#[derive(Debug, Clone, Copy, Default)]
pub struct AdaptiveTolerance;

impl EigensolverTolerance for AdaptiveTolerance {
    fn choose(&self, q: &ToleranceQuery) -> (f64, usize) {
        if q.from_random {
            (1e-2, 100)
        } else {
            let tol = 0.1 * q.residual / (q.nbands as f64).sqrt();
            (tol.clamp(1e-11, 1e-2), 8)
        }
    }
}

/// What the convergence test is told after an iteration.
#[derive(Debug, Clone, Copy)]
pub struct ConvergenceQuery {
    /// Change of the free energy from the previous iteration (Ha; NaN on the first).
    pub delta_e: f64,
    /// Density residual.
    pub residual: f64,
    /// Whether this iteration's energy is exact (not a first-order estimate).
    pub exact: bool,
    /// Whether the previous iteration's energy was exact.
    pub previous_exact: bool,
    /// The loop's energy tolerance (Ha).
    pub energy_tolerance: f64,
    /// The loop's density tolerance.
    pub density_tolerance: f64,
    /// Whether the eigensolver brought every band of every (spin, k) block to its tolerance
    /// this iteration (on every rank).
    pub bands_converged: bool,
}

/// Decides when an SCF loop has converged.
pub trait ConvergenceTest: Debug + Send + Sync {
    /// Whether the loop stops converged after the iteration described by `q`.
    fn converged(&self, q: &ConvergenceQuery) -> bool;
}

/// The default: the energy change and the density residual below their tolerances, judged on
/// two exact energies in a row.
#[derive(Debug, Clone, Copy, Default)]
pub struct EnergyAndDensity;

impl ConvergenceTest for EnergyAndDensity {
    fn converged(&self, q: &ConvergenceQuery) -> bool {
        q.exact
            && q.previous_exact
            && q.delta_e.abs() < q.energy_tolerance
            && q.residual < q.density_tolerance
    }
}

/// A density mixer of one SCF loop, on the mixing representation (total and magnetisation
/// channels on this rank's density sphere entries).
pub trait Mixer {
    /// The next input from this iteration's input and output, with values `carried` = (in,
    /// out) that ride along (PAW's band sums: mixed alike, the same on every rank); `sum`
    /// completes a partial sum over the G-vector group. Collective.
    fn next(
        &mut self,
        input: &[Vec<Complex64>],
        output: &[Vec<Complex64>],
        carried: (&[f64], &[f64]),
        sum: &dyn Fn(&mut [f64]),
    ) -> (Vec<Vec<Complex64>>, Vec<f64>);
}

impl Mixer for AndersonMixer {
    fn next(
        &mut self,
        input: &[Vec<Complex64>],
        output: &[Vec<Complex64>],
        carried: (&[f64], &[f64]),
        sum: &dyn Fn(&mut [f64]),
    ) -> (Vec<Vec<Complex64>>, Vec<f64>) {
        AndersonMixer::next_carrying(self, input, output, carried, sum)
    }
}

/// Makes the mixer of each SCF loop.
pub trait Mixing: Debug + Send + Sync {
    /// A fresh mixer for `nspin` channels on `basis`.
    fn mixer(&self, basis: &Basis, nspin: usize) -> Box<dyn Mixer>;
}

/// The default: Anderson (Pulay) mixing of damping `beta` over `depth` iterations, with
/// Kerker preconditioning of wave vector `kerker_q0` (1/bohr; 0 switches it off).
#[derive(Debug, Clone, Copy)]
pub struct AndersonKerker {
    /// Damping.
    pub beta: f64,
    /// History length.
    pub depth: usize,
    /// Kerker wave vector (1/bohr).
    pub kerker_q0: f64,
}

impl Mixing for AndersonKerker {
    fn mixer(&self, basis: &Basis, nspin: usize) -> Box<dyn Mixer> {
        Box::new(AndersonMixer::new(
            self.beta,
            self.depth,
            self.kerker_q0,
            &basis.rho_g2,
            nspin,
            basis.rho_mirror.as_deref(),
        ))
    }
}

/// One value of each policy.
#[derive(Debug, Clone)]
pub struct Policies {
    /// The eigensolver tolerance rule.
    pub tolerance: Arc<dyn EigensolverTolerance>,
    /// The convergence test.
    pub convergence: Arc<dyn ConvergenceTest>,
    /// The density mixing.
    pub mixing: Arc<dyn Mixing>,
}

impl Policies {
    /// The default rules, with Anderson–Kerker mixing of these parameters.
    pub fn standard(mixing: AndersonKerker) -> Self {
        Self {
            tolerance: Arc::new(AdaptiveTolerance),
            convergence: Arc::new(EnergyAndDensity),
            mixing: Arc::new(mixing),
        }
    }
}
