//! Ultrasoft pseudopotentials against pw.x 6.7 on its own inputs (tests/data/uspp:
//! pslibrary's Si with Q_ij in `q_with_l` form and a core charge, ecutrho = 8 ecutwfc):
//! - si2_pbe_us: the total energy and its terms, every k-point's plane waves and eigenvalues,
//!   on one rank and on two in-process ranks sharing the G-vectors or the bands;
//! - si2_pbe_us_displaced: the energy, forces and stress (augmentation terms included),
//!   serial and in band groups;
//! - si2_pbe_us_gamma: the same at Γ alone with cold smearing (real wavefunctions), against
//!   pw.x's own Γ path; `check` names the augmentation charges' memory;
//! - si2_pbe_us_gamma_spin: the same with spin and a fixed moment of 2 μB (a screened
//!   coupling per channel);
//! - h2o_us_gth_gamma: ultrasoft O in the older `PP_QIJ` layout with norm-conserving GTH H;
//! - c2_pbe_paw: PAW diamond with k-points (pslibrary 0.1 C): the energy and its one-centre
//!   term, the all-electron energy, every k-point's eigenvalues and the stress, serial and on
//!   two in-process ranks, within issue 37's tolerances (2e-5 Ha per atom, 5e-5 Ha, 1e-6
//!   Ha/bohr³);
//! - h2o_pbe_us_paw_gamma: ultrasoft O with PAW H at Γ: energy, forces, stress, eigenvalues.
//!
//! And a file whose augmentation section or PAW block is cut short is refused with one message
//! naming it.

use serde_json::Value;
use std::path::PathBuf;

mod common;

const PSEUDO: &str = "Si.pbe-nl-rrkjus_psl.1.0.0.UPF";

/// A folder with `case`'s input as pw.x ran it and the pseudopotential.
fn folder(case: &str) -> PathBuf {
    folder_with(case, &[PSEUDO])
}

/// A folder with `case`'s input as pw.x ran it and the pseudopotentials `pseudos` (file names
/// in tests/data/uspp).
fn folder_with(case: &str, pseudos: &[&str]) -> PathBuf {
    let input = format!("tests/data/uspp/{case}/pw.in");
    let paths: Vec<String> = pseudos
        .iter()
        .map(|p| format!("tests/data/uspp/{p}"))
        .collect();
    let mut files = vec![(input.as_str(), "pw.in")];
    files.extend(
        paths
            .iter()
            .map(String::as_str)
            .zip(pseudos.iter().copied()),
    );
    common::case_folder(&format!("ultrasoft-{case}"), &files)
}

fn reference(case: &str) -> Value {
    let path = format!(
        "{}/../../tests/data/uspp/{case}/reference.json",
        env!("CARGO_MANIFEST_DIR")
    );
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// The log and the results document of a run.
fn results(dir: &std::path::Path, args: &[&str]) -> (String, Value) {
    let log = common::ok(&common::run_in(dir, "pw.in", args));
    let doc = std::fs::read_to_string(dir.join("pw.json")).unwrap();
    (log, serde_json::from_str(&doc).unwrap())
}

fn numbers(v: &Value) -> Vec<f64> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_f64().unwrap())
        .collect()
}

/// Each of QE's k-points matched to one of ours with as many plane waves and the same
/// eigenvalues (the irreducible k-points are other representatives of the same stars).
fn assert_bands_match(doc: &Value, qe: &Value) {
    assert_bands_match_within(doc, qe, 1e-5);
}

/// [`assert_bands_match`] with eigenvalues equal to `tol` (Ha).
fn assert_bands_match_within(doc: &Value, qe: &Value, tol: f64) {
    let mut ours: Vec<(u64, Vec<f64>)> = doc["kpoints"]
        .as_array()
        .unwrap()
        .iter()
        .zip(doc["eigenvalues_ha"][0].as_array().unwrap())
        .map(|(k, e)| (k["npw"].as_u64().unwrap(), numbers(e)))
        .collect();
    for b in qe["bands"].as_array().unwrap() {
        let (npw, e_qe) = (b["npw"].as_u64().unwrap(), numbers(&b["eigenvalues_ha"]));
        let worst = |e: &[f64]| {
            e.iter()
                .zip(&e_qe)
                .map(|(a, b)| (a - b).abs())
                .fold(0.0, f64::max)
        };
        let at = ours
            .iter()
            .position(|(n, e)| *n == npw && worst(e) < tol)
            .unwrap_or_else(|| panic!("no k-point with {npw} plane waves and QE's bands {e_qe:?}"));
        ours.swap_remove(at);
    }
    assert!(ours.is_empty(), "k-points QE does not have: {ours:?}");
}

#[test]
fn ultrasoft_silicon_gives_qe_s_energy_terms_and_bands() {
    let dir = folder("si2_pbe_us");
    let ((log, doc), qe) = (results(&dir, &[]), reference("si2_pbe_us"));
    let e = doc["total_energy_ha"].as_f64().unwrap();
    let e_qe = qe["total_energy_ha"].as_f64().unwrap();
    assert!((e - e_qe).abs() < 1e-7, "energy {e} Ha against QE's {e_qe}");
    for term in ["one_electron", "hartree", "xc", "ewald"] {
        let (a, b) = (&doc["energy_terms_ha"][term], &qe["energy_terms_ha"][term]);
        let (a, b) = (a.as_f64().unwrap(), b.as_f64().unwrap());
        assert!((a - b).abs() < 1e-7, "{term}: {a} Ha against QE's {b}");
    }
    // QE's dense G-vectors (its FFT grid, 48³, is a size planewave's rule passes over for 45³).
    let dense = qe["dense_gvectors"].as_u64().unwrap();
    assert!(log.contains(&format!("density G-vectors {dense}")), "{log}");
    assert_bands_match(&doc, &qe);

    for layout in [["--kpoint-groups", "1"], ["--band-groups", "2"]] {
        let mut args = vec!["--ranks", "2"];
        args.extend(layout);
        if layout[0] == "--band-groups" {
            args.extend(["--kpoint-groups", "1"]);
        }
        let other = results(&dir, &args).1["total_energy_ha"].as_f64().unwrap();
        assert!((other - e).abs() < 1e-8, "{args:?}: {other} Ha against {e}");
    }
}

/// The forces less their mean (QE prints them so).
fn forces(doc: &Value) -> Vec<[f64; 3]> {
    let f: Vec<Vec<f64>> = doc["forces_ha_per_bohr"]
        .as_array()
        .or(doc["forces_ha_bohr"].as_array())
        .unwrap()
        .iter()
        .map(numbers)
        .collect();
    let mean: Vec<f64> = (0..3)
        .map(|d| f.iter().map(|x| x[d]).sum::<f64>() / f.len() as f64)
        .collect();
    f.iter()
        .map(|x| [0, 1, 2].map(|d| x[d] - mean[d]))
        .collect()
}

/// The stress tensor's rows.
fn stress(doc: &Value) -> Vec<[f64; 3]> {
    let rows = doc["stress_ha_per_bohr3"].as_array();
    rows.or(doc["stress_ha_bohr3"].as_array())
        .unwrap()
        .iter()
        .map(|r| {
            let r = numbers(r);
            [r[0], r[1], r[2]]
        })
        .collect()
}

fn largest_difference(a: &[[f64; 3]], b: &[[f64; 3]]) -> f64 {
    a.iter()
        .flatten()
        .zip(b.iter().flatten())
        .map(|(x, y)| (x - y).abs())
        .fold(0.0, f64::max)
}

#[test]
fn ultrasoft_forces_and_stress_match_qe_with_their_augmentation_terms() {
    let case = "si2_pbe_us_displaced";
    let dir = folder(case);
    let ((_, doc), qe) = (results(&dir, &[]), reference(case));
    let e = doc["total_energy_ha"].as_f64().unwrap();
    let e_qe = qe["total_energy_ha"].as_f64().unwrap();
    assert!((e - e_qe).abs() < 1e-7, "energy {e} Ha against QE's {e_qe}");
    let (f, f_qe) = (forces(&doc), forces(&qe));
    let worst = largest_difference(&f, &f_qe);
    assert!(worst < 1e-7, "forces {f:?} against QE's {f_qe:?}");
    assert!(doc["force_terms_ha_per_bohr"]["augmentation"].is_array());
    // QE prints the stress to 5e-9 Ry/bohr³.
    let (s, s_qe) = (stress(&doc), stress(&qe));
    let worst = largest_difference(&s, &s_qe);
    assert!(worst < 1e-8, "stress {s:?} against QE's {s_qe:?}");

    let args = ["--ranks", "2", "--kpoint-groups", "1", "--band-groups", "2"];
    let other = results(&dir, &args).1;
    let worst = largest_difference(&forces(&other), &f);
    assert!(
        worst < 1e-8,
        "band groups: forces {:?} against {f:?}",
        forces(&other)
    );
    let worst = largest_difference(&stress(&other), &s);
    assert!(
        worst < 1e-10,
        "band groups: stress {:?} against {s:?}",
        stress(&other)
    );
}

/// `case`'s run (files: its pseudopotentials' paths in the repository and names) against
/// pw.x's output `pw.out`: energy, forces less their mean (to `force_tol`, Ha/bohr), stress.
/// Returns the folder.
fn matches_qe_output(case: &str, pseudos: &[(&str, &str)], force_tol: f64) -> PathBuf {
    let input = format!("tests/data/uspp/{case}/pw.in");
    let mut files = vec![(input.as_str(), "pw.in")];
    files.extend_from_slice(pseudos);
    let dir = common::case_folder(&format!("ultrasoft-{case}"), &files);
    let path = format!(
        "{}/../../tests/data/uspp/{case}/pw.out",
        env!("CARGO_MANIFEST_DIR")
    );
    let qe = std::fs::read_to_string(path).unwrap();
    let (_, doc) = results(&dir, &[]);
    let e = doc["total_energy_ha"].as_f64().unwrap();
    let e_qe = common::numbers_after(&qe, "!    total energy")[0][0] / 2.0;
    assert!(
        (e - e_qe).abs() < 2e-8,
        "{case}: energy {e} Ha against QE's {e_qe}"
    );
    let ry_rows = |rows: &[Vec<f64>]| -> Vec<[f64; 3]> {
        rows.iter()
            .map(|r| [r[0] / 2.0, r[1] / 2.0, r[2] / 2.0])
            .collect()
    };
    let natoms = doc["forces_ha_per_bohr"].as_array().unwrap().len();
    let f_qe = ry_rows(&common::numbers_after(&qe, "   force =")[..natoms]);
    let worst = largest_difference(&forces(&doc), &f_qe);
    assert!(
        worst < force_tol,
        "{case}: forces {:?} against QE's {f_qe:?}",
        forces(&doc)
    );
    let s_qe = ry_rows(&common::qe_stress(&qe));
    let worst = largest_difference(&stress(&doc), &s_qe);
    assert!(
        worst < 1e-8,
        "{case}: stress {:?} against QE's {s_qe:?}",
        stress(&doc)
    );
    dir
}

#[test]
fn ultrasoft_gamma_point_with_smearing_matches_qe_s_gamma_tricks() {
    let pseudo = format!("tests/data/uspp/{PSEUDO}");
    let dir = matches_qe_output("si2_pbe_us_gamma", &[(&pseudo, PSEUDO)], 1e-7);
    let check = std::process::Command::new(env!("CARGO_BIN_EXE_planewave"))
        .args(["check", "pw.in"])
        .current_dir(&dir)
        .output()
        .unwrap();
    let log = common::ok(&check);
    assert!(log.contains("augmentation charges"), "{log}");
}

#[test]
fn ultrasoft_spin_channels_with_a_fixed_moment_match_qe() {
    let pseudo = format!("tests/data/uspp/{PSEUDO}");
    matches_qe_output("si2_pbe_us_gamma_spin", &[(&pseudo, PSEUDO)], 1e-7);
}

/// The reference's forces carry its SCF's error: pw.x 6.7 with this input at `conv_thr =
/// 1e-16` instead of 1e-11 moves O's force from -0.04603445 to -0.04603500 Ry/bohr (2.8e-7
/// Ha/bohr), which is planewave's converged value to the printed digits.
const H2O_US_GTH_FORCE_TOL: f64 = 4e-7;

#[test]
fn ultrasoft_and_norm_conserving_species_mix() {
    matches_qe_output(
        "h2o_us_gth_gamma",
        &[
            ("tests/data/uspp/O.pbe-rrkjus.UPF", "O.pbe-rrkjus.UPF"),
            ("tests/data/pseudos/gth/H-q1.pbe.gth", "H-q1.pbe.gth"),
        ],
        H2O_US_GTH_FORCE_TOL,
    );
}

/// `file` in `dir` with the line after the opening of `tag` removed is refused with one
/// message naming the file and the tag, exit 2.
fn refused_once_cut(dir: &std::path::Path, file: &str, tag: &str) {
    let path = dir.join(file);
    let text = std::fs::read_to_string(&path).unwrap();
    let at = text.find(&format!("<{tag}")).unwrap();
    let line_end = at + text[at..].find('\n').unwrap() + 1;
    let next_end = line_end + text[line_end..].find('\n').unwrap() + 1;
    std::fs::write(&path, format!("{}{}", &text[..line_end], &text[next_end..])).unwrap();
    let out = common::run_in(dir, "pw.in", &[]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains(file) && err.contains(tag), "{err}");
    assert_eq!(err.matches("error").count(), 1, "{err}");
}

#[test]
fn a_cut_augmentation_section_is_refused_naming_the_file() {
    refused_once_cut(&folder("si2_pbe_us"), PSEUDO, "PP_QIJL.1.2.0");
}

const CARBON: &str = "C.pbe-n-kjpaw_psl.0.1.UPF";

/// `a` against QE's `b` within `tol`.
fn assert_near(what: &str, a: f64, b: f64, tol: f64) {
    assert!((a - b).abs() < tol, "{what}: {a} against QE's {b}");
}

#[test]
fn paw_diamond_matches_qe_with_k_points_and_on_two_ranks() {
    let case = "c2_pbe_paw";
    let dir = folder_with(case, &[CARBON]);
    let ((log, doc), qe) = (results(&dir, &[]), reference(case));
    let e = doc["total_energy_ha"].as_f64().unwrap();
    // Issue 37's tolerance, 2e-5 Ha per atom (this case: 1.1e-5 Ha for the cell).
    assert_near("energy", e, qe["total_energy_ha"].as_f64().unwrap(), 4e-5);
    let one_centre = doc["energy_terms_ha"]["one_centre_paw"].as_f64().unwrap();
    let qe_one_centre = qe["energy_terms_ha"]["one_center_paw"].as_f64().unwrap();
    assert_near("one-centre", one_centre, qe_one_centre, 1e-5);
    let ae = doc["all_electron_energy_ha"].as_f64().unwrap();
    assert_near(
        "all-electron",
        ae,
        qe["all_electron_energy_ha"].as_f64().unwrap(),
        4e-5,
    );
    assert!(log.contains("total all-electron energy"), "{log}");
    assert_bands_match_within(&doc, &qe, 5e-5);
    let (s, s_qe) = (stress(&doc), stress(&qe));
    assert!(
        largest_difference(&s, &s_qe) < 1e-6,
        "stress {s:?} against {s_qe:?}"
    );
    for layout in [["--kpoint-groups", "1"], ["--band-groups", "2"]] {
        let mut args = vec!["--ranks", "2"];
        args.extend(layout);
        if layout[0] == "--band-groups" {
            args.extend(["--kpoint-groups", "1"]);
        }
        let other = results(&dir, &args).1;
        let e2 = other["total_energy_ha"].as_f64().unwrap();
        assert!((e2 - e).abs() < 1e-8, "{args:?}: {e2} Ha against {e}");
        assert!(largest_difference(&stress(&other), &s) < 1e-9, "{args:?}");
    }
}

#[test]
fn paw_and_ultrasoft_species_mix_at_gamma() {
    let case = "h2o_pbe_us_paw_gamma";
    let dir = folder_with(case, &["O.pbe-rrkjus.UPF", "H.pbe-kjpaw.UPF"]);
    let ((_, doc), qe) = (results(&dir, &[]), reference(case));
    let e = doc["total_energy_ha"].as_f64().unwrap();
    assert_near("energy", e, qe["total_energy_ha"].as_f64().unwrap(), 6e-5);
    let worst = largest_difference(&forces(&doc), &forces(&qe));
    assert!(
        worst < 1e-4,
        "forces {:?} against {:?}",
        forces(&doc),
        forces(&qe)
    );
    let worst = largest_difference(&stress(&doc), &stress(&qe));
    assert!(
        worst < 1e-6,
        "stress {:?} against {:?}",
        stress(&doc),
        stress(&qe)
    );
    // Every band, the top one too: a start of symmetric atomic orbitals spans none of its
    // symmetry until the start's noise (2.3130 eV without, QE 2.2452), and an SCF step leaves
    // the empty bands unconverged until the final pass.
    let ours = numbers(&doc["eigenvalues_ha"][0][0]);
    let theirs = numbers(&qe["bands"][0]["eigenvalues_ha"]);
    assert_eq!(ours.len(), theirs.len());
    for (n, (a, b)) in ours.iter().zip(&theirs).enumerate() {
        assert_near(&format!("band {n}"), *a, *b, 5e-5);
    }
}

#[test]
fn a_cut_paw_block_is_refused_naming_the_file() {
    refused_once_cut(&folder_with("c2_pbe_paw", &[CARBON]), CARBON, "PP_AE_NLCC");
}
