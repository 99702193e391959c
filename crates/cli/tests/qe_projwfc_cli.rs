//! projwfc.x's projected DOS with `pw.x` and `projwfc.x` replaced by `planewave run`, on QE
//! 6.7's own inputs for PseudoDojo Si (tests/data/post/si2_pbe_dojo_projwfc: an SCF, an nscf
//! step by optimised tetrahedra on 8×8×8 k-points, projwfc.x by tetrahedra). Checked against
//! QE's files: the total DOS, each orbital's DOS and its m columns in `pdos_tot` and
//! `pdos_atm#A(Si)_wfc#W(l)` (L1 distance ≤ 1e-3 of each column's integral: QE prints 4
//! digits), and the Löwdin charges and spilling parameter as projwfc.x prints them (4
//! decimals). The functional is PBE, which the input leaves to the pseudopotential file. The
//! nscf step on 2 in-process ranks in band groups gives the same projections to within what
//! the bands' residual determines (`BAND_RESIDUAL`, 1e-7). Then a projwfc.x input before any
//! nscf step is refused.

use planewave_core::fixed_density::BAND_RESIDUAL;
use std::path::{Path, PathBuf};
use std::process::Output;

mod common;

const DATA: &str = "tests/data/post/si2_pbe_dojo_projwfc";

fn folder(tag: &str) -> PathBuf {
    let files: Vec<(String, String)> = ["scf.in", "nscf.in", "projwfc.in"]
        .iter()
        .map(|f| (format!("{DATA}/{f}"), f.to_string()))
        .chain([(
            "tests/data/pseudos/Si.dojo.pbe.upf".to_string(),
            "Si.dojo.pbe.upf".to_string(),
        )])
        .collect();
    let pairs: Vec<(&str, &str)> = files
        .iter()
        .map(|(a, b)| (a.as_str(), b.as_str()))
        .collect();
    common::case_folder(&format!("qe-projwfc-{tag}"), &pairs)
}

use common::ok;

fn run(dir: &Path, input: &str) -> Output {
    common::run_in(dir, input, &[])
}

/// The numeric rows of a projwfc.x file.
fn rows(path: &Path) -> Vec<Vec<f64>> {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    text.lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .map(|l| l.split_whitespace().map(|x| x.parse().unwrap()).collect())
        .collect()
}

/// Per column after E, the L1 distance between two files on the same energies, over the
/// column's integral (eV steps of 0.01).
fn relative_l1(ours: &Path, qe: &Path) -> Vec<f64> {
    let (a, b) = (rows(ours), rows(qe));
    assert_eq!(
        a.len(),
        b.len(),
        "{} energies against QE's {}",
        a.len(),
        b.len()
    );
    assert!(
        (a[0][0] - b[0][0]).abs() < 1.5e-3,
        "first energy {} against {}",
        a[0][0],
        b[0][0]
    );
    (1..b[0].len())
        .map(|c| {
            let d: f64 = a.iter().zip(&b).map(|(x, y)| (x[c] - y[c]).abs()).sum();
            let total: f64 = b.iter().map(|y| y[c].abs()).sum();
            d / total
        })
        .collect()
}

/// The numbers after `key` on the lines of `text` that contain it.
fn numbers_after<'a>(text: &'a str, key: &'a str) -> impl Iterator<Item = f64> + 'a {
    text.lines().filter_map(move |l| {
        let rest = &l[l.find(key)? + key.len()..];
        let word = rest
            .trim_start_matches([' ', '=', ':'])
            .split([' ', ','])
            .next()?;
        word.parse().ok()
    })
}

#[test]
fn projwfc_x_input_gives_qe_s_projected_dos_charges_and_spilling() {
    let dir = folder("dojo");
    ok(&run(&dir, "scf.in"));
    ok(&run(&dir, "nscf.in"));
    let text = ok(&run(&dir, "projwfc.in"));
    let data = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .join(DATA);
    for name in [
        "pdos_tot",
        "pdos_atm#1(Si)_wfc#1(s)",
        "pdos_atm#1(Si)_wfc#2(p)",
        "pdos_atm#2(Si)_wfc#2(p)",
    ] {
        let ours = dir.join(format!("si.pdos.{name}"));
        let l1 = relative_l1(&ours, &data.join(format!("qe_si.pdos.{name}")));
        assert!(
            l1.iter().all(|&x| x < 1e-3),
            "{name}: relative L1 per column {l1:?}"
        );
    }
    let qe = std::fs::read_to_string(data.join("qe_projwfc_lowdin.txt")).unwrap();
    let expected: Vec<f64> = numbers_after(&qe, " s =")
        .chain(numbers_after(&qe, " p ="))
        .collect();
    let got: Vec<f64> =
        (numbers_after(&text, ":Si:s").chain(numbers_after(&text, ":Si:p"))).collect();
    assert_eq!(got.len(), 4, "{text}");
    for (g, e) in got.iter().zip(&expected) {
        assert!(
            (g - e).abs() < 1.5e-4,
            "Löwdin charge {g} against QE's {e}\n{text}"
        );
    }
    let spill = numbers_after(&text, "spilling parameter").next().unwrap();
    let qe_spill = numbers_after(&qe, "Spilling Parameter").next().unwrap();
    assert!(
        (spill - qe_spill).abs() < 1.5e-4,
        "spilling {spill} against {qe_spill}"
    );
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("si.pdos.json")).unwrap()).unwrap();
    let p = &doc["projected"];
    assert!(p["pdos_per_ev"]["2:Si:p"].is_array(), "{p}");
    assert!(dir.join("si.pdos.pdos.png").exists());

    let saved = dir.join("tmp/si.save/planewave-nscf.json");
    let weights = |path: &Path| -> Vec<f64> {
        let doc: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
        let w = &doc["bands"]["projections"]["weights"];
        serde_json::from_value::<Vec<Vec<Vec<Vec<f64>>>>>(w.clone())
            .unwrap()
            .into_iter()
            .flatten()
            .flatten()
            .flatten()
            .collect()
    };
    let serial = weights(&saved);
    ok(&common::run_in(
        &dir,
        "nscf.in",
        &["--ranks", "2", "--kpoint-groups", "1", "--band-groups", "2"],
    ));
    let parallel = weights(&saved);
    assert_eq!(serial.len(), parallel.len());
    let worst = (serial.iter().zip(&parallel))
        .map(|(a, b)| (a - b).abs())
        .fold(0.0, f64::max);
    // The nscf step solves each band to a residual of BAND_RESIDUAL (1e-7 Ha), which fixes a
    // band, and so its weights, to about that over the distance to the next band; the
    // layouts stop there along different rounding paths. Their weights were 2.7e-9 and
    // 1.0e-8 apart on two builds whose projector tables differed by 1e-14, so 1e-8 asked for
    // more than the solve determines; a layout's error would show at 1e-3 and above.
    assert!(
        worst < BAND_RESIDUAL,
        "projections on 2 band groups differ by {worst}"
    );
}

#[test]
fn projwfc_x_before_an_nscf_step_is_refused() {
    let dir = folder("refused");
    ok(&run(&dir, "scf.in"));
    let out = run(&dir, "projwfc.in");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("nscf"), "{err}");
}
