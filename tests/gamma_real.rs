//! The Γ-point real-wavefunction path (half sphere, two bands per FFT) must give the same
//! results as the general complex path on the same Γ-only problem, to 1e-8 Ha.

use planewave::core::input::{self, Kpoints};
use planewave::core::{scf, setup};
use std::path::PathBuf;

fn energy(rel: &str, kpoints: Kpoints) -> (f64, Vec<f64>, usize) {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(rel);
    let mut spec = input::load(&path).unwrap_or_else(|e| panic!("{e}"));
    spec.kpoints = kpoints;
    spec.scf.density_tolerance = 1e-8;
    let s = setup::build(spec).unwrap_or_else(|e| panic!("{e}"));
    let npw = s.basis.kpoints[0].npw();
    let r = scf::run(&s.model, &s.basis, &s.params, |_| {}).expect("SCF runs");
    assert!(r.converged);
    // Occupied levels only: empty levels are converged to a looser tolerance, and an empty
    // spin-down channel's levels depend on rho_down^(1/3) of a density that is zero only up to
    // the SCF residual.
    let eig = r
        .eigenvalues
        .iter()
        .zip(&r.occupations.occ)
        .flat_map(|(e, o)| {
            e[0].iter()
                .zip(&o[0])
                .filter(|(_, &f)| f > 0.0)
                .map(|(&x, _)| x)
        })
        .collect();
    (r.energies.total(), eig, npw)
}

fn compare(rel: &str) {
    let (e_real, eig_real, npw_half) = energy(rel, Kpoints::Gamma);
    let full = Kpoints::MonkhorstPack {
        grid: [1, 1, 1],
        shift: [false; 3],
    };
    let (e_cplx, eig_cplx, npw_full) = energy(rel, full);
    println!("{rel}: real {e_real:.12} complex {e_cplx:.12}");
    assert_eq!(
        2 * npw_half - 1,
        npw_full,
        "half sphere holds one G of each +-G pair"
    );
    assert!((e_real - e_cplx).abs() < 1e-8, "{e_real} vs {e_cplx}");
    for (a, b) in eig_real.iter().zip(&eig_cplx) {
        assert!((a - b).abs() < 1e-7, "eigenvalue {a} vs {b}");
    }
}

#[test]
fn gamma_real_equals_complex_for_silicon_with_nonlocal_projectors() {
    compare("qe/si2_lda_gth/pw.in");
}

#[test]
fn gamma_real_equals_complex_for_spin_polarised_hydrogen() {
    compare("qe/h1_lsda_gth_box/pw.in");
}
