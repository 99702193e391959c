//! Densities of states from a fixed-density step on a denser grid (`fixed_density`, `dos`),
//! against Quantum ESPRESSO 6.7's `nscf` on 12x12x12 k-points and dos.x's Gaussian DOS
//! (degauss 0.01 Ry) and optimised tetrahedra for the si2_lda_gth reference SCF
//! (tests/data/post/si2_lda_gth/dos_gauss.json, dos_tetra.json).

use planewave::core::input::units::EV_PER_HARTREE;
use planewave::core::input::{self, Kpoints};
use planewave::core::scf::IterationInfo;
use planewave::core::{dos, fixed_density, setup, workflow};
use std::path::PathBuf;

fn data(rel: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(rel)
}

/// The converged SCF of the reference case, its [dos] as QE's runs (12x12x12, 12 bands, a
/// 0.01 Ry Gaussian) by `method`.
fn si2_scf(method: input::DosMethod) -> (setup::Setup, workflow::Calculation) {
    let mut spec = input::load(&data("qe/si2_lda_gth/pw.in")).unwrap();
    spec.dos.method = method;
    spec.dos.width = 0.005;
    spec.dos.nbands = Some(12);
    spec.dos.kpoints = Some(Kpoints::MonkhorstPack {
        grid: [12; 3],
        shift: [false; 3],
    });
    let s = setup::build(spec).unwrap();
    let c = workflow::run(&s, None, |_: &IterationInfo| {}).unwrap();
    (s, c)
}

#[test]
fn si2_gaussian_dos_matches_quantum_espresso() {
    let text = std::fs::read_to_string(data("post/si2_lda_gth/dos_gauss.json")).unwrap();
    let qe: serde_json::Value = serde_json::from_str(&text).unwrap();
    let energies_ev: Vec<f64> = serde_json::from_value(qe["energy_ev"].clone()).unwrap();
    let want: Vec<Vec<f64>> = serde_json::from_value(qe["dos_per_ev_fullprec"].clone()).unwrap();
    let valid = qe["valid_up_to_ev"].as_f64().unwrap();

    let (s, c) = si2_scf(input::DosMethod::Gaussian);
    let grid = s.spec.dos.kpoints.clone().unwrap();
    let (at, r) = fixed_density::run(&s, &c.scf, grid, true, Some(12)).unwrap();
    assert!(r.converged);
    let weights: Vec<f64> = at.basis.kpoints.iter().map(|k| k.weight).collect();
    let energies: Vec<f64> = energies_ev.iter().map(|e| e / EV_PER_HARTREE).collect();
    let gauss = planewave::core::smearing::Smearing::Gaussian(0.005);
    let (d, n) = dos::broadened(&r.eigenvalues, &weights, 2.0, gauss, &energies);
    let peak = want[0].iter().copied().fold(0.0, f64::max);
    let mut worst = 0.0f64;
    for ((e, ours), theirs) in energies_ev.iter().zip(&d[0]).zip(&want[0]) {
        if *e < valid {
            worst = worst.max((ours / EV_PER_HARTREE - theirs).abs() / peak);
        }
    }
    println!(
        "{} irreducible k-points (QE {}); largest DOS difference {worst:.1e} of the peak",
        weights.len(),
        qe["nks_irreducible"]
    );
    assert!(worst < 1e-4, "{worst:.2e}");
    let fermi = qe["fermi_ev"].as_f64().unwrap() / EV_PER_HARTREE;
    let at_fermi = energies.iter().position(|&e| e > fermi).unwrap();
    assert!(
        (n[0][at_fermi] - 8.0).abs() < 1e-3,
        "N(E_F) = {}",
        n[0][at_fermi]
    );

    // The whole step as `planewave dos` runs it.
    let full = dos::compute(&s, &c.scf).unwrap();
    assert_eq!(full.kpoints, weights.len());
    let last = full.integrated[0].last().unwrap();
    assert!(
        (last - 24.0).abs() < 1e-6,
        "12 bands hold 24 electrons: {last}"
    );
    assert!(full.vbm.is_some() && full.fermi_level.is_none());
}

#[test]
fn si2_optimised_tetrahedron_dos_matches_quantum_espresso() {
    let text = std::fs::read_to_string(data("post/si2_lda_gth/dos_tetra.json")).unwrap();
    let qe: serde_json::Value = serde_json::from_str(&text).unwrap();
    let qe_e: Vec<f64> = serde_json::from_value(qe["energy_ev"].clone()).unwrap();
    let qe_d: Vec<Vec<f64>> = serde_json::from_value(qe["dos_per_ev"].clone()).unwrap();
    let valid = qe["valid_up_to_ev"].as_f64().unwrap();

    let (s, c) = si2_scf(input::DosMethod::TetrahedraOpt);
    let d = dos::compute(&s, &c.scf).unwrap();
    assert_eq!(d.kpoints, 72);
    // The optimised tetrahedra, each code on its own energies: the L1 distance of D over the
    // bands' complete range, relative to its integral.
    let ours = |e_ev: f64| {
        let x = e_ev / EV_PER_HARTREE;
        let i = d
            .energies
            .partition_point(|&y| y < x)
            .clamp(1, d.energies.len() - 1);
        let t = (x - d.energies[i - 1]) / (d.energies[i] - d.energies[i - 1]);
        ((1.0 - t) * d.dos[0][i - 1] + t * d.dos[0][i]) / EV_PER_HARTREE
    };
    let (mut l1, mut total) = (0.0, 0.0);
    for (e, theirs) in qe_e.iter().zip(&qe_d[0]).filter(|(e, _)| **e < valid) {
        l1 += (ours(*e) - theirs).abs() * 0.01;
        total += theirs * 0.01;
    }
    println!(
        "L1 distance {:.2}% of the integral ({total:.3} electrons)",
        100.0 * l1 / total
    );
    // dos.x prints four digits; the issue asks for 2%.
    assert!(l1 < 0.002 * total, "{l1} of {total}");
    let fermi = qe["fermi_ev"].as_f64().unwrap() / EV_PER_HARTREE;
    let at = d.energies.partition_point(|&e| e < fermi);
    assert!(
        (d.integrated[0][at] - 8.0).abs() < 0.01,
        "N(E_F) = {}",
        d.integrated[0][at]
    );
}
