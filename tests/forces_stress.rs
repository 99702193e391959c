//! Forces and stress tensors against Quantum ESPRESSO 6.7 / ABINIT 9.6.2 (tests/data/reference.json,
//! inputs tests/data/qe/*/pw.in), against DFTK's published ABINIT force check
//! (tests/data/dftk_si_abinit_forces.toml), and against central finite differences of the total
//! energy of planewave itself.
//!
//! Tolerances: forces 1e-5 Ha/bohr, stress 1e-7 Ha/bohr^3 (QE's sign: stress = -(1/V) dE/d(strain),
//! a negative diagonal means the cell wants to shrink). QE 6.7's stress is wrong off the diagonal
//! for analytic `.gth` pseudopotentials, so the GTH stresses are compared with ABINIT's.

use planewave::core::input::{self, Kpoints, RunSpec};
use planewave::core::{forces, scf, setup, stress};
use serde_json::Value;
use std::path::PathBuf;

const FORCE_TOL: f64 = 1e-5;
const STRESS_TOL: f64 = 1e-7;

fn data(rel: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(rel)
}

fn reference() -> Value {
    let text = std::fs::read_to_string(data("reference.json")).expect("tests/data/reference.json");
    serde_json::from_str(&text).expect("valid reference JSON")
}

fn load(rel: &str) -> RunSpec {
    input::load(&data(rel)).unwrap_or_else(|e| panic!("{e}"))
}

/// What one SCF run gives.
struct State {
    energy: f64,
    forces: Vec<[f64; 3]>,
    stress: [[f64; 3]; 3],
    volume: f64,
    grid: [usize; 3],
    /// The Miller indices of the plane waves, per k-point.
    plane_waves: Vec<Vec<[i32; 3]>>,
}

/// SCF of `spec`, then (when `derivatives`) forces and stress.
fn solve(spec: RunSpec, derivatives: bool) -> State {
    let title = spec.title.clone();
    let s = setup::build(spec).unwrap_or_else(|e| panic!("{e}"));
    let r = scf::run(&s.model, &s.basis, &s.params, |_| {}).expect("SCF runs");
    assert!(r.converged, "{title}: SCF did not converge");
    let (f, st) = if derivatives {
        (
            forces::compute(&s.model, &s.basis, &r).total,
            stress::compute(&s.model, &s.basis, &r).total,
        )
    } else {
        (Vec::new(), [[0.0; 3]; 3])
    };
    State {
        energy: r.energies.total(),
        forces: f,
        stress: st,
        volume: s.basis.volume,
        grid: s.basis.grid.dims,
        plane_waves: s.basis.kpoints.iter().map(|k| k.millers.clone()).collect(),
    }
}

fn vec3(v: &Value) -> [f64; 3] {
    let a = v.as_array().expect("3-vector");
    assert_eq!(a.len(), 3);
    [0, 1, 2].map(|i| a[i].as_f64().expect("number"))
}

fn vec3s(v: &Value) -> Vec<[f64; 3]> {
    v.as_array()
        .expect("list of 3-vectors")
        .iter()
        .map(vec3)
        .collect()
}

fn mat3(v: &Value) -> [[f64; 3]; 3] {
    let rows = vec3s(v);
    assert_eq!(rows.len(), 3);
    [rows[0], rows[1], rows[2]]
}

/// Prints ours and the reference side by side and returns the largest |difference|.
fn compare_forces(what: &str, ours: &[[f64; 3]], reference: &[[f64; 3]]) -> f64 {
    assert_eq!(ours.len(), reference.len(), "{what}: number of atoms");
    let mut worst = 0.0_f64;
    println!("{what}: forces (Ha/bohr), ours | reference | difference");
    for (i, (a, b)) in ours.iter().zip(reference).enumerate() {
        let d = [0, 1, 2].map(|c| a[c] - b[c]);
        worst = d.iter().fold(worst, |m, x| m.max(x.abs()));
        println!(
            "  atom {:2}: {:13.9} {:13.9} {:13.9} | {:13.9} {:13.9} {:13.9} | {:9.1e} {:9.1e} {:9.1e}",
            i + 1,
            a[0],
            a[1],
            a[2],
            b[0],
            b[1],
            b[2],
            d[0],
            d[1],
            d[2]
        );
    }
    println!("  max |difference| = {worst:.2e} Ha/bohr");
    worst
}

fn compare_stress(what: &str, ours: &[[f64; 3]; 3], reference: &[[f64; 3]; 3]) -> f64 {
    let mut worst = 0.0_f64;
    println!("{what}: stress (Ha/bohr^3, QE sign), ours | reference | difference");
    for (a, b) in ours.iter().zip(reference) {
        let d = [0, 1, 2].map(|c| a[c] - b[c]);
        worst = d.iter().fold(worst, |m, x| m.max(x.abs()));
        println!(
            "  {:14.7e} {:14.7e} {:14.7e} | {:14.7e} {:14.7e} {:14.7e} | {:9.1e} {:9.1e} {:9.1e}",
            a[0], a[1], a[2], b[0], b[1], b[2], d[0], d[1], d[2]
        );
    }
    println!("  max |difference| = {worst:.2e} Ha/bohr^3");
    worst
}

fn max_force_norm(f: &[[f64; 3]]) -> f64 {
    f.iter()
        .map(|v| (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]).sqrt())
        .fold(0.0, f64::max)
}

// ---------------------------------------------------------------------------------------------
// Si8 with displaced atoms: no symmetry, every component non-trivial.

#[test]
fn si8_gth_displaced_forces_match_qe_and_abinit_stress_matches_abinit() {
    let refs = reference();
    let c = &refs["cases"]["si8_lda_gth_displaced"];
    let o = solve(load("qe/si8_lda_gth_displaced/pw.in"), true);
    let df_qe = compare_forces(
        "si8_lda_gth_displaced vs QE",
        &o.forces,
        &vec3s(&c["qe_forces_ha_bohr"]),
    );
    let df_ab = compare_forces(
        "si8_lda_gth_displaced vs ABINIT",
        &o.forces,
        &vec3s(&c["abinit_forces_ha_bohr"]),
    );
    let ds = compare_stress(
        "si8_lda_gth_displaced vs ABINIT",
        &o.stress,
        &mat3(&c["abinit_stress_ha_bohr3_qe_sign"]),
    );
    assert!(df_qe < FORCE_TOL, "forces differ from QE by {df_qe:.2e}");
    assert!(
        df_ab < FORCE_TOL,
        "forces differ from ABINIT by {df_ab:.2e}"
    );
    assert!(ds < STRESS_TOL, "stress differs from ABINIT by {ds:.2e}");
}

#[test]
fn si8_hgh_upf_displaced_forces_and_stress_match_qe() {
    let refs = reference();
    let c = &refs["cases"]["si8_lda_hghupf_displaced"];
    let o = solve(load("qe/si8_lda_hghupf_displaced/pw.in"), true);
    let df = compare_forces(
        "si8_lda_hghupf_displaced vs QE",
        &o.forces,
        &vec3s(&c["qe_forces_ha_bohr"]),
    );
    let ds = compare_stress(
        "si8_lda_hghupf_displaced vs QE",
        &o.stress,
        &mat3(&c["qe_stress_ha_bohr3"]),
    );
    assert!(df < FORCE_TOL, "forces differ from QE by {df:.2e}");
    assert!(ds < STRESS_TOL, "stress differs from QE by {ds:.2e}");
}

// ---------------------------------------------------------------------------------------------
// Symmetric cells: isotropic stress, forces zero by symmetry.

/// Runs `case`, checks |F| < 1e-8 on every atom and the stress tensor against the QE value and,
/// where `abinit` is set, against ABINIT's (both with tolerance `tol`).
fn check_symmetric_case(case: &str, tol: f64, abinit: bool) {
    let refs = reference();
    let c = &refs["cases"][case];
    let o = solve(load(&format!("qe/{case}/pw.in")), true);
    let fmax = max_force_norm(&o.forces);
    println!("{case}: max |F| = {fmax:.2e} Ha/bohr (zero by symmetry)");
    let ds_qe = compare_stress(
        &format!("{case} vs QE"),
        &o.stress,
        &mat3(&c["qe_stress_ha_bohr3"]),
    );
    let ab = &c["abinit_stress_ha_bohr3_qe_sign"];
    let ds_ab = if ab.is_null() {
        None
    } else {
        Some(compare_stress(
            &format!("{case} vs ABINIT"),
            &o.stress,
            &mat3(ab),
        ))
    };
    assert!(
        fmax < 1e-8,
        "{case}: forces should vanish, max |F| = {fmax:.2e}"
    );
    assert!(ds_qe < tol, "{case}: stress differs from QE by {ds_qe:.2e}");
    if abinit {
        let d = ds_ab.expect("ABINIT stress in reference.json");
        assert!(d < tol, "{case}: stress differs from ABINIT by {d:.2e}");
    }
}

#[test]
fn si2_lda_gth_stress_matches_abinit_and_qe() {
    check_symmetric_case("si2_lda_gth", STRESS_TOL, true);
}

#[test]
fn si2_pbe_sg15_stress_matches_qe() {
    check_symmetric_case("si2_pbe_sg15", STRESS_TOL, false);
}

#[test]
fn si2_pbe_dojo_nlcc_stress_matches_qe() {
    // ABINIT's number (psp8 version of the same PseudoDojo potential) is printed for information.
    check_symmetric_case("si2_pbe_dojo", STRESS_TOL, false);
}

#[test]
fn al1_metal_stress_matches_qe_and_abinit() {
    check_symmetric_case("al1_lda_gth", STRESS_TOL, true);
}

// ---------------------------------------------------------------------------------------------
// DFTK's published ABINIT force check (PseudoDojo LDA UPF with NLCC, PW92 correlation).

#[test]
fn dftk_silicon_nlcc_forces_match_abinit() {
    let refs = reference();
    let reference = vec3s(&refs["dftk_abinit_forces_si"]["abinit_forces_ha_bohr"]);
    let o = solve(load("dftk_si_abinit_forces.toml"), true);
    println!(
        "DFTK Si NLCC check: E = {:.10} Ha, FFT grid {:?} (DFTK's reference run: 18x18x18)",
        o.energy, o.grid
    );
    let df = compare_forces("DFTK Si (ABINIT reference)", &o.forces, &reference);
    assert!(df < FORCE_TOL, "forces differ from ABINIT by {df:.2e}");
}

// ---------------------------------------------------------------------------------------------
// Finite differences of planewave's own total energy.

fn inverse(m: &[[f64; 3]; 3]) -> [[f64; 3]; 3] {
    let det = m[0][0] * (m[1][1] * m[2][2] - m[1][2] * m[2][1])
        - m[0][1] * (m[1][0] * m[2][2] - m[1][2] * m[2][0])
        + m[0][2] * (m[1][0] * m[2][1] - m[1][1] * m[2][0]);
    let mut inv = [[0.0; 3]; 3];
    for (i, row) in inv.iter_mut().enumerate() {
        for (j, x) in row.iter_mut().enumerate() {
            let (r0, r1) = ((j + 1) % 3, (j + 2) % 3);
            let (c0, c1) = ((i + 1) % 3, (i + 2) % 3);
            *x = (m[r0][c0] * m[r1][c1] - m[r0][c1] * m[r1][c0]) / det;
        }
    }
    inv
}

/// Lattice rows strained by the symmetric `eps`: each row r -> r + eps r.
fn strained(lattice: &[[f64; 3]; 3], eps: &[[f64; 3]; 3]) -> [[f64; 3]; 3] {
    lattice.map(|r| [0, 1, 2].map(|b| r[b] + (0..3).map(|c| eps[b][c] * r[c]).sum::<f64>()))
}

/// The symmetric strain with `t` at (a, b) and (b, a).
fn strain(a: usize, b: usize, t: f64) -> [[f64; 3]; 3] {
    let mut e = [[0.0; 3]; 3];
    e[a][b] = t;
    e[b][a] = t;
    e
}

/// Si2, LDA, analytic GTH, one atom off its site (no symmetry), 2x2x2 k, tight SCF.
///
/// Ecut sits between two shells of |k+G|^2/2: for this fcc cell (a = 10.26 bohr) and the 2x2x2
/// grid every |k+G|^2/2 is (2 pi / a)^2 / 2 = 0.1875 Ha times n or n + 3/4 (n integer), and
/// 15.0703125 Ha = 80.375 x 0.1875 Ha lies 0.07 Ha (0.47 %) from the nearest ones (15 Ha = 80 x
/// 0.1875 Ha would sit exactly on one). A strain of 1e-3 moves |k+G|^2 by at most ~0.2 %, so the strained cells keep
/// exactly the same plane waves (asserted below): the central differences are then derivatives at
/// a fixed plane-wave set, what the analytic stress is, with no Pulay part. (At Ecut = 15 Ha the
/// +1e-3 eps_xx cell gains 16 plane waves and the fixed-Ecut central difference of sigma_xx is off
/// by 3.2e-5 Ha/bohr^3; the Pulay pressure, from isotropic strains at fixed Ecut vs at Ecut scaled
/// by (1 + t)^-2, is 1.6e-5 Ha/bohr^3 there.)
fn fd_spec() -> RunSpec {
    let mut spec = load("qe/si2_lda_gth/pw.in");
    spec.atoms[1].frac = [0.27, 0.24, 0.255];
    spec.ecut = 0.1875 * 80.375;
    spec.ecut_rho = None;
    spec.kpoints = Kpoints::MonkhorstPack {
        grid: [2, 2, 2],
        shift: [false; 3],
    };
    spec.nbands = None;
    spec.use_symmetry = false;
    spec.scf.energy_tolerance = 1e-13;
    spec.scf.density_tolerance = 1e-10;
    spec
}

#[test]
fn finite_differences_of_the_energy_match_forces_and_stress() {
    let base = fd_spec();
    let o = solve(base.clone(), true);
    let omega = o.volume;
    let npw: usize = o.plane_waves.iter().map(Vec::len).sum();
    println!(
        "FD base: Ecut {} Ha, E = {:.12} Ha, Omega = {omega:.6} bohr^3, grid {:?}, {npw} plane waves",
        base.ecut, o.energy, o.grid
    );

    // Force on atom 2 (the displaced one) along Cartesian x: F = -dE/dx.
    let h = 1e-3;
    let inv = inverse(&base.lattice);
    let energy_at = |d: f64| {
        let mut s = base.clone();
        // Cartesian displacement (d, 0, 0) = fractional d * (row 0 of A^-1), A's rows the lattice.
        (0..3).for_each(|c| s.atoms[1].frac[c] += d * inv[0][c]);
        solve(s, false).energy
    };
    let f_fd = -(energy_at(h) - energy_at(-h)) / (2.0 * h);
    let f_an = o.forces[1][0];
    println!(
        "FD force F_2x: analytic {f_an:.10}, -(E(+h)-E(-h))/(2h) {f_fd:.10} (h = {h} bohr), difference {:.2e}",
        f_an - f_fd
    );

    // Stress: sigma = -(1/Omega) dE/d eps. For eps_xy = eps_yx = t, dE/dt = -2 Omega sigma_xy.
    let t = 1e-3;
    let fd = |a: usize, b: usize| {
        let [p, m] = [t, -t].map(|x| {
            let mut s = base.clone();
            s.lattice = strained(&base.lattice, &strain(a, b, x));
            let r = solve(s, false);
            assert_eq!(r.grid, o.grid, "strain ({a},{b}) {x}: FFT grid changed");
            assert!(
                r.plane_waves == o.plane_waves,
                "strain ({a},{b}) {x}: the plane-wave set changed (Pulay error)"
            );
            r.energy
        });
        let pairs = if a == b { 1.0 } else { 2.0 };
        -(p - m) / (2.0 * t) / (pairs * omega)
    };
    let (sxy_fd, sxx_fd) = (fd(0, 1), fd(0, 0));
    let (sxy, sxx) = (o.stress[0][1], o.stress[0][0]);
    println!(
        "FD stress xy: analytic {sxy:.10e}, FD {sxy_fd:.10e} (strain +-{t}), difference {:.2e}",
        sxy - sxy_fd
    );
    println!(
        "FD stress xx: analytic {sxx:.10e}, FD {sxx_fd:.10e} (strain +-{t}), difference {:.2e}",
        sxx - sxx_fd
    );
    println!("  (same FFT grid and same plane waves in every strained cell: no Pulay part)");

    assert!((f_an - f_fd).abs() < FORCE_TOL, "force {f_an} vs FD {f_fd}");
    // The issue asks for 1e-5; the stress tolerance of the reference comparisons is used instead.
    assert!(
        (sxy - sxy_fd).abs() < STRESS_TOL,
        "sigma_xy {sxy} vs FD {sxy_fd}"
    );
    assert!(
        (sxx - sxx_fd).abs() < STRESS_TOL,
        "sigma_xx {sxx} vs FD {sxx_fd}"
    );
}
