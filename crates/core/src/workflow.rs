//! One calculation as `planewave run` does it, for any caller: the SCF, then the forces and the
//! stress the input asks for, and the results document.
//!
//! Contract: collective on the set-up's world (every rank calls it with the same set-up); prints
//! nothing (progress goes to the observer, which also hears the end of the SCF before the
//! forces are computed); forces and stress only after an SCF that was not stopped early. The
//! CLI's `run` is this function plus its printing.

use crate::converged::of_converged;
use crate::forces::{self, Forces, ForcesOf};
use crate::results;
use crate::scf::{self, ScfObserver, ScfResult, ScfStart};
use crate::setup::Setup;
use crate::stress::{self, Stress, StressOf};
use serde_json::Value;
use std::time::Instant;

/// What one calculation computed.
#[derive(Debug)]
pub struct Calculation {
    /// The SCF's final state.
    pub scf: ScfResult,
    /// Forces, when the input asks for them (`[properties] forces`) and the SCF finished.
    pub forces: Option<Forces>,
    /// Stress, when the input asks for it (`[properties] stress`) and the SCF finished.
    pub stress: Option<Stress>,
    /// Seconds after the SCF (forces and stress).
    pub post_seconds: f64,
}

/// The SCF of `s` (from `start`, else the atomic guess and random bands), then its forces and
/// stress. Collective.
pub fn run(
    s: &Setup,
    start: Option<ScfStart>,
    observer: impl ScfObserver,
) -> Result<Calculation, String> {
    let scf = scf::run_observed(&s.model, &s.basis, &s.params, start, observer)?;
    let t_post = Instant::now();
    let finished = scf.stopped.is_none();
    let props = &s.spec.properties;
    let want = (finished && props.forces, finished && props.stress);
    let (forces, stress) = if want.0 || want.1 {
        let (f, st) = of_converged::<ForcesOf, StressOf>(&s.model, &s.basis, &scf, want);
        (
            f.map(|f| forces::from_terms(&s.model, f)),
            st.map(|st| stress::from_terms(&s.model, st)),
        )
    } else {
        (None, None)
    };
    Ok(Calculation {
        scf,
        forces,
        stress,
        post_seconds: t_post.elapsed().as_secs_f64(),
    })
}

impl Calculation {
    /// The results document (the keys of the README's results JSON table).
    pub fn to_json(&self, s: &Setup) -> Value {
        results::to_json(s, &self.scf, self.forces.as_ref(), self.stress.as_ref())
    }
}
