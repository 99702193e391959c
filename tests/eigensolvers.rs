//! Both eigensolvers give the same SCF: Davidson (the default) and LOBPCG agree on the energy
//! to 1e-8 Ha and on the occupied eigenvalues to 1e-7 Ha, for an insulator with k-points, a
//! metal with smearing, spin polarisation and the Γ-point real path.

mod common;

use planewave::core::input;
use planewave::core::{scf, setup};

fn solve(case: &str, eigensolver: &str) -> (f64, Vec<f64>, usize) {
    let mut spec = input::load(&common::case_input(case)).unwrap_or_else(|e| panic!("{e}"));
    spec.scf.eigensolver = eigensolver.to_string();
    spec.scf.density_tolerance = 1e-8;
    let s = setup::build(spec).unwrap_or_else(|e| panic!("{e}"));
    let r = scf::run(&s.model, &s.basis, &s.params, |_| {}).expect("SCF runs");
    assert!(r.converged, "{case} with {eigensolver} did not converge");
    let occupied = r
        .eigenvalues
        .iter()
        .zip(&r.occupations.occ)
        .flat_map(|(e, o)| e.iter().zip(o).flat_map(|(e, o)| e.iter().zip(o)))
        .filter(|(_, &f)| f > 1e-6)
        .map(|(&e, _)| e)
        .collect();
    (r.energies.total(), occupied, r.iterations)
}

fn agree(case: &str) {
    let (e_d, eig_d, it_d) = solve(case, "davidson");
    let (e_l, eig_l, it_l) = solve(case, "lobpcg");
    println!("{case}: davidson {e_d:.12} ({it_d} it), lobpcg {e_l:.12} ({it_l} it)");
    assert!((e_d - e_l).abs() < 1e-8, "{case}: {e_d} vs {e_l}");
    assert_eq!(eig_d.len(), eig_l.len());
    for (a, b) in eig_d.iter().zip(&eig_l) {
        assert!((a - b).abs() < 1e-7, "{case}: eigenvalue {a} vs {b}");
    }
}

#[test]
fn davidson_and_lobpcg_agree_for_silicon_with_kpoints() {
    agree("si2_lda_gth");
}

#[test]
fn davidson_and_lobpcg_agree_for_a_smeared_metal() {
    agree("al1_lda_gth");
}

#[test]
fn davidson_and_lobpcg_agree_for_a_spin_polarised_atom_at_gamma() {
    agree("h1_lsda_gth_box");
}

#[test]
fn an_unknown_eigensolver_is_refused_by_name() {
    let mut spec = input::load(&common::case_input("si2_lda_gth")).unwrap();
    spec.scf.eigensolver = "jacobi".to_string();
    let Err(err) = setup::build(spec) else {
        panic!("an unknown eigensolver was accepted")
    };
    let err = err.to_string();
    assert!(err.contains("jacobi") && err.contains("davidson"), "{err}");
}
