//! The SCF's policies are values: a caller's convergence test and eigensolver tolerance rule
//! replace the defaults without touching the loop (`scf::policies`).

mod common;

use planewave::core::scf::policies::{
    AdaptiveTolerance, ConvergenceQuery, ConvergenceTest, EigensolverTolerance, ToleranceQuery,
};
use planewave::core::{input, scf, setup};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

/// Converged as soon as the density residual is below the bound, whatever the energy does.
#[derive(Debug)]
struct ResidualBelow(f64);

impl ConvergenceTest for ResidualBelow {
    fn converged(&self, q: &ConvergenceQuery) -> bool {
        q.residual < self.0
    }
}

/// The default rule, counting the eigensolves it was asked about.
#[derive(Debug, Default)]
struct Counting(AtomicUsize);

impl EigensolverTolerance for Counting {
    fn choose(&self, q: &ToleranceQuery) -> (f64, usize) {
        self.0.fetch_add(1, Ordering::Relaxed);
        AdaptiveTolerance.choose(q)
    }
}

#[test]
fn a_callers_policies_replace_the_defaults() {
    let spec = input::load(&common::case_input("si2_lda_gth")).unwrap();
    let s = setup::build(spec).unwrap();
    let full = scf::run(&s.model, &s.basis, &s.params, |_| {}).unwrap();
    assert!(full.converged);

    let counting = Arc::new(Counting::default());
    let mut params = s.params.clone();
    params.policies.tolerance = counting.clone();
    params.policies.convergence = Arc::new(ResidualBelow(1e-3));
    let r = scf::run(&s.model, &s.basis, &params, |_| {}).unwrap();
    assert!(r.converged);
    let residuals: Vec<f64> = r.history.iter().map(|h| h.residual).collect();
    assert!(residuals.last().unwrap() < &1e-3, "{residuals:?}");
    assert!(
        residuals[..residuals.len() - 1].iter().all(|&x| x >= 1e-3),
        "{residuals:?}"
    );
    assert!(
        r.iterations < full.iterations,
        "{} against {}",
        r.iterations,
        full.iterations
    );
    assert_eq!(counting.0.load(Ordering::Relaxed), r.iterations);
    // Stopped early, the energy is off by about the square of the residual.
    let de = (r.energies.total() - full.energies.total()).abs();
    assert!(de < 1e-4, "{de}");
}
