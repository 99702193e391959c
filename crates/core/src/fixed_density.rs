//! The non-self-consistent step: bands at any k-points with a converged SCF's density held
//! fixed, the first half of QE's `bands` and `nscf` calculations.
//!
//! Contract: [`run`] is the SCF engine with three other policies, which is what the engine's
//! policy seam is for: the mixer never moves the density (the SCF's, carried over by Miller
//! index, [`ScfStart::from_previous`]), every band is solved to a fixed tight residual
//! ([`BAND_RESIDUAL`]), and the loop stops when every band has reached it (most often after
//! one iteration), or else when the band energy no longer changes. The k-points
//! are a new set-up's, on the SCF's layout rules; its occupations are of the new k-points
//! (meaningful for integer occupations only). Collective on the SCF set-up's world. Hybrids
//! are refused: their exchange operator would have to be carried over too.

use std::sync::Arc;

use num_complex::Complex64;

use crate::basis::Basis;
use crate::input::{InputError, Kpoints, RunSpec};
use crate::restart::ScfStart;
use crate::scf::policies::{
    ConvergenceQuery, ConvergenceTest, EigensolverTolerance, Mixer, Mixing, Policies,
    ToleranceQuery,
};
use crate::scf::{self, ScfResult};
use crate::setup::{self, Setup};

/// Residual norm the occupied bands are solved to (the empty ones to
/// [`crate::eigensolver::EMPTY_TOL_FACTOR`] times it): an eigenvalue's error is about the
/// square of its residual over the distance to the next band, 1e-10 Ha and below.
pub const BAND_RESIDUAL: f64 = 1e-7;

/// The loop stops when the free energy of the fixed-density bands changes by less than this
/// (Ha) between two iterations.
const SETTLED: f64 = 1e-9;

/// The bands of `kpoints` (reduced by the crystal's symmetry when `symmetry`) with the density
/// of `scf`, the converged state of `scf_setup`; `nbands` per k-point (default: the SCF's).
/// Returns the new set-up (its basis holds the k-points and their weights) and the engine's
/// result. Collective.
pub fn run(
    scf_setup: &Setup,
    scf: &ScfResult,
    kpoints: Kpoints,
    symmetry: bool,
    nbands: Option<usize>,
) -> Result<(Setup, ScfResult), InputError> {
    let spec = &scf_setup.spec;
    refuse_hybrids(spec)?;
    let mut next = spec.clone();
    next.kpoints = kpoints;
    next.use_symmetry = symmetry && spec.use_symmetry;
    next.nbands = Some(nbands.unwrap_or(scf_setup.params.nbands));
    next.scf.restart = false;
    let world = Arc::clone(scf_setup.basis.parallel.world());
    let at = setup::build_on(next, world)?;
    let carried = ScfStart::from_previous(
        &scf_setup.model,
        &scf_setup.basis,
        scf,
        &at.model,
        &at.basis,
    );
    let r = solve(&at, carried.density_g, carried.becsum)?;
    Ok((at, r))
}

/// The bands of `at`'s k-points with `density_g` (on `at`'s density sphere, per spin) held
/// fixed, with its PAW band sums `becsum` (None: the atoms' own). Collective.
pub fn solve(
    at: &Setup,
    density_g: Vec<Vec<Complex64>>,
    becsum: Option<crate::augmentation::Becsum>,
) -> Result<ScfResult, InputError> {
    refuse_hybrids(&at.spec)?;
    let start = ScfStart {
        density_g,
        wavefunctions: None,
        becsum,
    };
    let mut params = at.params.clone();
    params.policies = Policies {
        tolerance: Arc::new(FixedResidual(BAND_RESIDUAL)),
        convergence: Arc::new(Settled),
        mixing: Arc::new(Frozen),
    };
    params.checkpoint = None;
    params.max_iterations = params.max_iterations.min(20);
    let quiet = |_: &scf::IterationInfo| {};
    scf::run_observed(&at.model, &at.basis, &params, Some(start), quiet)
        .map_err(|m| InputError::new(&at.spec.source, m).with_hint("see the message above"))
}

/// Hybrids are refused: their exchange operator would have to be carried over too.
fn refuse_hybrids(spec: &RunSpec) -> Result<(), InputError> {
    if spec.hybrid.is_none() {
        return Ok(());
    }
    let msg =
        "band structures and densities of states of hybrid functionals are not implemented yet";
    let hint = "use the semilocal functional for them";
    Err(InputError::new(&spec.source, msg).with_hint(hint))
}

/// Every band to the same residual, whatever the density residual.
#[derive(Debug)]
struct FixedResidual(f64);

impl EigensolverTolerance for FixedResidual {
    fn choose(&self, _: &ToleranceQuery) -> (f64, usize) {
        (self.0, 200)
    }
}

/// Converged when every band reached its residual, or else when the energy of the bands
/// stops changing (the density residual means nothing here: the density never moves).
#[derive(Debug)]
struct Settled;

impl ConvergenceTest for Settled {
    fn converged(&self, q: &ConvergenceQuery) -> bool {
        q.bands_converged || q.delta_e.abs() < SETTLED
    }
}

/// A mixer that keeps the input density.
#[derive(Debug)]
struct Frozen;

impl Mixing for Frozen {
    fn mixer(&self, _: &Basis, _: usize) -> Box<dyn Mixer> {
        Box::new(Frozen)
    }
}

impl Mixer for Frozen {
    fn next(
        &mut self,
        input: &[Vec<Complex64>],
        _: &[Vec<Complex64>],
        carried: (&[f64], &[f64]),
        _: &dyn Fn(&mut [f64]),
    ) -> (Vec<Vec<Complex64>>, Vec<f64>) {
        (input.to_vec(), carried.0.to_vec())
    }
}
