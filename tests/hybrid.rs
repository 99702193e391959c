//! Hybrid functionals (PBE0, HSE06) against Quantum ESPRESSO 6.7: the water molecule at Γ on the real
//! path, with the x_gamma extrapolation on and off (tests/data/qe/h2o_pbe0_gth_gamma/: the QE
//! inputs and the reference numbers, trimmed from the shared reference set with their origin);
//! silicon on a 2x2x2 k grid with the q grid 1x1x1 (complex bands; tests/data/qe/
//! si2_pbe0_gth_nq1/: a QE run made for planewave), and with q grids of 2x2x2 (GTH) and
//! 3x3x3 (SG15, numeric UPF: 2e-5 Ha per atom), the orbitals at k + q by symmetry; HSE06 on
//! silicon (SG15); and the
//! same results on G-vector groups, band groups and k-point groups.
//!
//! Tolerances: total energy 1e-6 Ha per atom (analytic GTH pseudopotentials), the Fock energy
//! 1e-6 Ha against QE's tightly converged run, gap and eigenvalues 1e-3 eV (QE prints 4
//! decimals in eV), forces 1e-6 Ha/bohr after removing the net force as QE does.

use planewave::comm::{Communicator, Solo, Threads};
use planewave::core::{forces, input, scf, setup};
use serde_json::Value;
use std::path::PathBuf;
use std::sync::Arc;

const EV: f64 = 27.211386245988;

fn data(rel: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(rel)
}

fn reference_of(case: &str) -> Value {
    let text = std::fs::read_to_string(data(&format!("qe/{case}/reference.json")))
        .expect("the case's reference numbers");
    serde_json::from_str(&text).expect("valid reference JSON")
}

fn reference() -> Value {
    reference_of("h2o_pbe0_gth_gamma")
}

/// A converged run's numbers.
struct Outcome {
    energy: f64,
    fock: f64,
    /// Γ's (the first k-point's) eigenvalues.
    eigenvalues_ev: Vec<f64>,
    homo_ev: f64,
    gap_ev: f64,
    forces: Vec<[f64; 3]>,
    outer_steps: usize,
}

fn run(spec: input::RunSpec, world: Arc<dyn Communicator>) -> Outcome {
    let s = setup::build_on(spec, world).unwrap_or_else(|e| panic!("{e}"));
    let r = scf::run(&s.model, &s.basis, &s.params, |_| {}).expect("SCF runs");
    assert!(r.converged, "the hybrid SCF converges");
    let f = forces::compute(&s.model, &s.basis, &r);
    let occ = &r.occupations;
    Outcome {
        energy: r.energies.total(),
        fock: r.energies.get("exact_exchange"),
        eigenvalues_ev: r.eigenvalues[0][0].iter().map(|e| e * EV).collect(),
        gap_ev: (occ.lumo.expect("a LUMO") - occ.homo.expect("a HOMO")) * EV,
        homo_ev: occ.homo.expect("a HOMO") * EV,
        forces: f.total,
        outer_steps: r.exx_steps.len(),
    }
}

fn load(rel: &str) -> input::RunSpec {
    input::load(&data(rel)).unwrap_or_else(|e| panic!("{e}"))
}

fn numbers(v: &Value) -> Vec<f64> {
    v.as_array()
        .expect("an array")
        .iter()
        .map(|x| x.as_f64().expect("a number"))
        .collect()
}

fn check_levels(o: &Outcome, gap: f64, eig: &[f64]) {
    assert!(
        (o.gap_ev - gap).abs() < 1e-3,
        "gap {} eV, QE {gap}",
        o.gap_ev
    );
    for (e, q) in o.eigenvalues_ev.iter().zip(eig) {
        assert!((e - q).abs() < 1e-3, "eigenvalue {e} eV, QE {q}");
    }
}

#[test]
fn water_pbe0_at_gamma_matches_quantum_espresso() {
    let r = reference();
    let o = run(load("qe/h2o_pbe0_gth_gamma/pw.in"), Arc::new(Solo));
    let e_qe = r["etot_ha"].as_f64().unwrap();
    let de = (o.energy - e_qe).abs() / 3.0;
    println!(
        "water PBE0: E = {:.10} Ha, QE {e_qe}, |dE|/atom {de:.1e}",
        o.energy
    );
    assert!(de < 1e-6, "energy {} Ha, QE {e_qe}", o.energy);
    let fock_qe = r["exx_energy_tight_ha"].as_f64().unwrap();
    let df = (o.fock - fock_qe).abs();
    println!(
        "Fock energy {:.10} Ha, QE (tight) {fock_qe}, diff {df:.1e}",
        o.fock
    );
    assert!(df < 1e-6, "Fock energy {} Ha, QE {fock_qe}", o.fock);
    check_levels(
        &o,
        r["gap_ev"].as_f64().unwrap(),
        &numbers(&r["eig_gamma_ev"]),
    );
    assert!(o.outer_steps >= 2, "the outer loop iterates");
    // QE prints forces with the net force (the grid's egg-box force) removed.
    let n = o.forces.len() as f64;
    let net: Vec<f64> = (0..3)
        .map(|c| o.forces.iter().map(|f| f[c]).sum::<f64>() / n)
        .collect();
    for (f, q) in o.forces.iter().zip(r["forces_ha_bohr"].as_array().unwrap()) {
        for c in 0..3 {
            let want = q[c].as_f64().unwrap();
            let got = f[c] - net[c];
            assert!((got - want).abs() < 1e-6, "force {got} Ha/bohr, QE {want}");
        }
    }
}

#[test]
fn water_pbe0_without_the_x_gamma_extrapolation() {
    let r = &reference()["no_x_gamma_extrapolation"];
    let o = run(load("qe/h2o_pbe0_gth_gamma/pw_noxg.in"), Arc::new(Solo));
    let e_qe = r["etot_ha"].as_f64().unwrap();
    assert!(
        (o.energy - e_qe).abs() / 3.0 < 1e-6,
        "energy {} Ha, QE {e_qe}",
        o.energy
    );
    // QE's Fock energy of this run is converged to its 1e-10 Ry threshold only (no tight run).
    let fock_qe = r["exx_energy_ha"].as_f64().unwrap();
    assert!(
        (o.fock - fock_qe).abs() < 2e-6,
        "Fock energy {} Ha, QE {fock_qe}",
        o.fock
    );
    check_levels(
        &o,
        r["gap_ev"].as_f64().unwrap(),
        &numbers(&r["eig_gamma_ev"]),
    );
}

#[test]
fn water_pbe0_same_on_gvector_groups_and_band_groups() {
    // A lower cutoff keeps this quick; the comparison is between layouts.
    let mut spec = load("qe/h2o_pbe0_gth_gamma/pw.in");
    spec.ecut = 10.0;
    spec.ecut_rho = None;
    let serial = run(spec.clone(), Arc::new(Solo));
    for (n, bg) in [(2, 1), (3, 1), (2, 2)] {
        let mut spec = spec.clone();
        spec.parallel.band_groups = Some(bg);
        let all = Threads::run(n, |c| run(spec.clone(), c.into_arc()));
        for (rank, o) in all.iter().enumerate() {
            let de = (o.energy - serial.energy).abs();
            assert!(
                de < 1e-8,
                "{n} ranks (rank {rank}): energy differs by {de:.1e} Ha"
            );
            let df = (o.fock - serial.fock).abs();
            assert!(
                df < 1e-8,
                "{n} ranks (rank {rank}): Fock energy differs by {df:.1e} Ha"
            );
            for (a, b) in o.eigenvalues_ev.iter().zip(&serial.eigenvalues_ev) {
                assert!(
                    (a - b).abs() < 1e-8 * EV,
                    "{n} ranks: eigenvalue {a} eV against {b}"
                );
            }
        }
    }
}

#[test]
fn silicon_pbe0_on_kpoints_matches_quantum_espresso() {
    let r = reference_of("si2_pbe0_gth_nq1");
    let spec = load("qe/si2_pbe0_gth_nq1/pw.in");
    let o = run(spec.clone(), Arc::new(Solo));
    let e_qe = r["etot_ha"].as_f64().unwrap();
    assert!(
        (o.energy - e_qe).abs() / 2.0 < 1e-6,
        "energy {} Ha, QE {e_qe}",
        o.energy
    );
    // QE's main run (conv_thr 1e-10 Ry): its Fock energy is converged to about 1e-7 Ha.
    let fock_qe = r["exx_energy_ha"].as_f64().unwrap();
    assert!(
        (o.fock - fock_qe).abs() < 1e-6,
        "Fock energy {} Ha, QE {fock_qe}",
        o.fock
    );
    let homo = r["homo_ev"].as_f64().unwrap();
    let gap = r["lumo_ev"].as_f64().unwrap() - homo;
    assert!(
        (o.homo_ev - homo).abs() < 1e-3,
        "HOMO {} eV, QE {homo}",
        o.homo_ev
    );
    assert!(
        (o.gap_ev - gap).abs() < 1e-3,
        "gap {} eV, QE {gap}",
        o.gap_ev
    );
    // k-point groups, G-vector groups under them, and band groups (the occupied orbitals
    // around the band-group ring).
    for (n, kg, bg) in [(2, 2, 1), (2, 1, 1), (4, 2, 1), (2, 1, 2), (4, 1, 4)] {
        let mut spec = spec.clone();
        spec.parallel.kpoint_groups = Some(kg);
        spec.parallel.band_groups = Some(bg);
        let what = format!("{n} ranks, {kg} k-point groups, {bg} band groups");
        for o2 in Threads::run(n, |c| run(spec.clone(), c.into_arc())) {
            let de = (o2.energy - o.energy).abs();
            assert!(de < 1e-8, "{what}: energy differs by {de:.1e} Ha");
            let df = (o2.fock - o.fock).abs();
            assert!(df < 1e-8, "{what}: Fock energy differs by {df:.1e} Ha");
        }
    }
}

/// A silicon case with a q grid against QE: energy per atom within `tol`, the Fock energy
/// within 1e-6 Ha of QE's tight run, HOMO and gap within 1e-3 eV.
fn silicon_with_q_grid(case: &str, tol: f64) -> (input::RunSpec, Outcome) {
    let r = reference_of(case);
    let spec = load(&format!("qe/{case}/pw.in"));
    let o = run(spec.clone(), Arc::new(Solo));
    let e_qe = r["etot_ha"].as_f64().unwrap();
    let de = (o.energy - e_qe).abs() / 2.0;
    println!(
        "{case}: E = {:.10} Ha, QE {e_qe}, |dE|/atom {de:.1e}",
        o.energy
    );
    assert!(de < tol, "{case}: energy {} Ha, QE {e_qe}", o.energy);
    let fock_qe = r["exx_energy_tight_ha"].as_f64().unwrap();
    assert!(
        (o.fock - fock_qe).abs() < 1e-6,
        "{case}: Fock energy {} Ha, QE {fock_qe}",
        o.fock
    );
    let homo = r["homo_ev"].as_f64().unwrap();
    assert!(
        (o.homo_ev - homo).abs() < 1e-3,
        "{case}: HOMO {} eV, QE {homo}",
        o.homo_ev
    );
    let gap = r["gap_ev"].as_f64().unwrap();
    assert!(
        (o.gap_ev - gap).abs() < 1e-3,
        "{case}: gap {} eV, QE {gap}",
        o.gap_ev
    );
    (spec, o)
}

#[test]
fn silicon_pbe0_with_a_q_grid_matches_quantum_espresso_on_any_layout() {
    let (spec, o) = silicon_with_q_grid("si2_pbe0_gth", 1e-6);
    // The orbitals at k + q come from other k-point groups and G-vector ranks; each band
    // group's share goes around the band-group ring (also with a G-vector group of 2 per band
    // group: 4 ranks, 1 k-point group).
    for (n, kg, bg) in [
        (2, 2, 1),
        (2, 1, 1),
        (3, 3, 1),
        (2, 1, 2),
        (4, 2, 2),
        (4, 1, 2),
    ] {
        let mut spec = spec.clone();
        spec.parallel.kpoint_groups = Some(kg);
        spec.parallel.band_groups = Some(bg);
        for o2 in Threads::run(n, |c| run(spec.clone(), c.into_arc())) {
            let de = (o2.energy - o.energy).abs();
            let what = format!("{n} ranks, {kg} k-point groups, {bg} band groups");
            assert!(de < 1e-8, "{what}: energy differs by {de:.1e} Ha");
        }
    }
}

#[test]
fn silicon_pbe0_sg15_with_a_q_grid_matches_quantum_espresso() {
    silicon_with_q_grid("si2_pbe0_sg15", 2e-5);
}

#[test]
fn silicon_hse06_sg15_with_a_q_grid_matches_quantum_espresso() {
    // The erfc kernel and the short-range PBE exchange, on QE's FFT grid (see the input).
    silicon_with_q_grid("si2_hse_sg15", 2e-5);
}

#[test]
fn water_pbe0_force_is_the_energy_derivative() {
    // The force on H along x against central differences of the energy (steps of 0.01 and
    // 0.005 bohr, Richardson-extrapolated: the h^2 error of either step is ~1e-5 Ha/bohr);
    // a lower cutoff keeps it quick, tight tolerances keep the energies converged.
    let mut spec = load("qe/h2o_pbe0_gth_gamma/pw.in");
    spec.ecut = 15.0;
    spec.ecut_rho = None;
    spec.scf.energy_tolerance = 1e-12;
    spec.scf.density_tolerance = 1e-8;
    let a = spec.lattice[0][0];
    let energy_at = |dx: f64| {
        let mut s = spec.clone();
        s.atoms[1].frac[0] += dx / a;
        run(s, Arc::new(Solo)).energy
    };
    let diff = |h: f64| -(energy_at(h) - energy_at(-h)) / (2.0 * h);
    let fd = (4.0 * diff(0.005) - diff(0.01)) / 3.0;
    let f = run(spec.clone(), Arc::new(Solo)).forces[1][0];
    println!("H force x: {f:.9} Ha/bohr, from the energy {fd:.9}");
    assert!(
        (f - fd).abs() < 2e-6,
        "force {f} Ha/bohr, energy derivative {fd}"
    );
}
