//! Starting the SCF from pseudo-atomic orbitals (issue 32): on Si8 (GTH, k-points, more
//! orbitals than bands, so the first eigensolve starts from the lowest Ritz vectors of their
//! span) the first eigensolve needs fewer Davidson iterations than from random bands, and the
//! converged energy and eigenvalues are those of the random start.

mod common;

use planewave::core::atomic_start::{AtomicStart, BandStart};
use planewave::core::{input, scf, setup};

#[test]
fn atomic_orbitals_start_closer_and_end_at_the_same_state() {
    let spec = input::load(&common::case_input("si8_lda_gth_displaced")).unwrap();
    let s = setup::build(spec).unwrap();
    assert_eq!(s.params.start, BandStart::Atomic, "the default");
    let orbitals = AtomicStart::new(&s.model, &s.basis).count(&s.model);
    assert_eq!(orbitals, 8 * 4, "3s and 3p of every Si");
    assert!(orbitals > s.params.nbands);

    let atomic = scf::run(&s.model, &s.basis, &s.params, |_| {}).unwrap();
    let mut params = s.params.clone();
    params.start = BandStart::Random;
    let random = scf::run(&s.model, &s.basis, &params, |_| {}).unwrap();
    assert!(atomic.converged && random.converged);

    let first = |r: &scf::ScfResult| r.history[0].eigensolver_iterations;
    assert!(
        first(&atomic) < 0.7 * first(&random),
        "Davidson iterations in the first step: atomic {} against random {}",
        first(&atomic),
        first(&random)
    );
    let de = (atomic.energies.total() - random.energies.total()).abs();
    assert!(de < 1e-8, "energies differ by {de:e} Ha");
    let eig = |r: &scf::ScfResult| r.eigenvalues.concat().concat();
    let worst = eig(&atomic)
        .iter()
        .zip(eig(&random))
        .map(|(a, b)| (a - b).abs())
        .fold(0.0, f64::max);
    assert!(worst < 1e-5, "eigenvalues differ by {worst:e} Ha");
}
