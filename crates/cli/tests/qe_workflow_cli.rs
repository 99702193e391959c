//! A QE user's workflow with `pw.x`, `bands.x`, `dos.x` and `pp.x` replaced by `planewave run`,
//! on QE 6.7's own inputs for si2_lda_gth (tests/data/post/si2_lda_gth/workflow, laid out as
//! the shared reference set ran them: each step in its folder, the bands and nscf steps in a
//! copy of the SCF's save folder). Checked against QE's results: the bands along the path
//! (bands.json, ≤ 1e-5 Ha) and bands.x's plottable file, the DOS by optimised tetrahedra and
//! by Gaussians (L1 ≤ 2% of the integral, the electrons up to E_F within 0.01) and by
//! Methfessel–Paxton and Marzari–Vanderbilt broadening (dos.x's columns, L1 ≤ 1e-4), and pp.x's
//! cube of the density on QE's 32³ grid (≤ 1e-5 of its maximum; the grid sum gives the
//! electrons), of one band's |psi|² (one electron) and of the local potential (its integral
//! with the density is the band energy less the kinetic and nonlocal ones); the bands step on
//! two ranks gives the
//! same eigenvalues (1e-8 Ha). Then the refusals: a step without an SCF state, a state of another crystal,
//! dos.x before an nscf step.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

mod common;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn reference(name: &str) -> serde_json::Value {
    let path = root().join("tests/data/post/si2_lda_gth").join(name);
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

fn read(path: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// The workflow's inputs in a fresh folder, the pseudopotential where the SCF input looks.
/// The SCF input gains `nr1..3 = 32`, QE's grid for this cell, so that pp.x's cube is on it.
fn folder(tag: &str) -> PathBuf {
    let w = "tests/data/post/si2_lda_gth/workflow";
    let files: Vec<(String, String)> = [
        "scf/pw.in",
        "bands/pw.in",
        "bands/bands.in",
        "dos/pw.in",
        "dos/dos_tetra.in",
        "dos/dos_gauss.in",
        "dos/dos_mp.in",
        "dos/dos_mv.in",
        "cube/pp.in",
    ]
    .iter()
    .map(|f| (format!("{w}/{f}"), f.to_string()))
    .chain([(
        "tests/data/pseudos/gth/Si-q4.lda.gth".to_string(),
        "scf/pseudo/Si-q4.lda.gth".to_string(),
    )])
    .collect();
    let pairs: Vec<(&str, &str)> = files
        .iter()
        .map(|(a, b)| (a.as_str(), b.as_str()))
        .collect();
    let dir = common::case_folder(&format!("qe-workflow-{tag}"), &pairs);
    let scf = dir.join("scf/pw.in");
    let text = std::fs::read_to_string(&scf).unwrap();
    let text = text.replace("ecutrho=120.0,", "ecutrho=120.0, nr1=32, nr2=32, nr3=32,");
    std::fs::write(&scf, text).unwrap();
    dir
}

use common::ok;

fn run(dir: &Path, input: &str, args: &[&str]) -> Output {
    common::run_in(dir, input, args)
}

fn refused(out: &Output, part: &str) {
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains(part), "{err}");
    let messages = err.lines().filter(|l| l.starts_with("error")).count();
    assert_eq!(messages, 1, "one message: {err}");
}

/// A copy of the SCF's save folder in `step`, as the reference set ran its steps.
fn copy_save(dir: &Path, step: &str) {
    let from = dir.join("scf/qe_tmp/si2_lda_gth.save");
    let to = dir.join(step).join("qe_tmp/si2_lda_gth.save");
    std::fs::create_dir_all(&to).unwrap();
    for f in std::fs::read_dir(&from).unwrap() {
        let f = f.unwrap().path();
        std::fs::copy(&f, to.join(f.file_name().unwrap())).unwrap();
    }
}

/// Max |eps - eps_QE| over the occupied and 4 empty bands of the path.
/// The L1 distance between the DOS columns of two dos.x files over the integral of the
/// second's (the first's extra trailing energies ignored).
fn column_l1(ours: &Path, qe: &Path) -> f64 {
    let rows = |p: &Path| -> Vec<Vec<f64>> {
        let text = std::fs::read_to_string(p).unwrap();
        (text
            .lines()
            .filter(|l| !l.starts_with('#') && !l.trim().is_empty()))
        .map(|l| l.split_whitespace().map(|x| x.parse().unwrap()).collect())
        .collect()
    };
    let (a, b) = (rows(ours), rows(qe));
    assert!(
        (a[0][0] - b[0][0]).abs() < 1e-3,
        "{} against {}",
        a[0][0],
        b[0][0]
    );
    let d: f64 = a.iter().zip(&b).map(|(x, y)| (x[1] - y[1]).abs()).sum();
    d / b.iter().map(|y| y[1].abs()).sum::<f64>()
}

fn worst_band_error(ours: &serde_json::Value) -> f64 {
    let qe = reference("bands.json");
    let nb = qe["nocc"].as_u64().unwrap() as usize + 4;
    let theirs: Vec<Vec<f64>> = serde_json::from_value(qe["eigenvalues_ha"][0].clone()).unwrap();
    let mine: Vec<Vec<f64>> = serde_json::from_value(ours["eigenvalues_ha"][0].clone()).unwrap();
    assert_eq!(mine.len(), theirs.len());
    let kq: Vec<[f64; 3]> = serde_json::from_value(qe["kpoints_frac"].clone()).unwrap();
    for (k, q) in ours["kpoints"].as_array().unwrap().iter().zip(&kq) {
        for i in 0..3 {
            assert!((k["frac"][i].as_f64().unwrap() - q[i]).abs() < 1e-9);
        }
    }
    (mine.iter().zip(&theirs))
        .flat_map(|(a, b)| (0..nb).map(move |n| (a[n] - b[n]).abs()))
        .fold(0.0, f64::max)
}

/// The L1 distance between our DOS and QE's on QE's energies up to where QE's is complete,
/// relative to QE's integral, as the reference set's check.py measures it; and our electrons up
/// to QE's Fermi level.
fn dos_against_qe(ours: &serde_json::Value, qe: &serde_json::Value, column: &str) -> (f64, f64) {
    let e: Vec<f64> = serde_json::from_value(ours["energy_ev"].clone()).unwrap();
    let d: Vec<f64> = serde_json::from_value(ours["dos_per_ev"][0].clone()).unwrap();
    let eq: Vec<f64> = serde_json::from_value(qe["energy_ev"].clone()).unwrap();
    let dq: Vec<f64> = serde_json::from_value(qe[column][0].clone()).unwrap();
    let top = qe["valid_up_to_ev"].as_f64().unwrap();
    let at = |x: f64| {
        let i = e.partition_point(|&v| v <= x).clamp(1, e.len() - 1);
        let t = (x - e[i - 1]) / (e[i] - e[i - 1]);
        d[i - 1] + t * (d[i] - d[i - 1])
    };
    let (mut l1, mut norm) = (0.0, 0.0);
    for i in 0..eq.len() - 1 {
        if eq[i + 1] > top {
            break;
        }
        let h = eq[i + 1] - eq[i];
        l1 += 0.5 * h * ((at(eq[i]) - dq[i]).abs() + (at(eq[i + 1]) - dq[i + 1]).abs());
        norm += 0.5 * h * (dq[i] + dq[i + 1]);
    }
    let ef = qe["fermi_ev"].as_f64().unwrap();
    let mut n = 0.0;
    for i in 0..e.len() - 1 {
        if e[i] >= ef {
            break;
        }
        let e1 = e[i + 1].min(ef);
        n += 0.5 * (e1 - e[i]) * (d[i] + at(e1));
    }
    (l1 / norm, n)
}

#[test]
fn pw_x_bands_x_dos_x_and_pp_x_inputs_run_as_they_are() {
    let dir = folder("all");
    let scf = ok(&run(&dir.join("scf"), "pw.in", &[]));
    assert!(
        scf.contains("SCF state kept in ./qe_tmp/si2_lda_gth.save"),
        "{scf}"
    );

    // pw.x bands, then bands.x.
    copy_save(&dir, "bands");
    let bands = dir.join("bands");
    let text = ok(&run(&bands, "pw.in", &[]));
    assert!(text.contains("bands step from the SCF state"), "{text}");
    let doc = read(&bands.join("pw.json"));
    let worst = worst_band_error(&doc);
    assert!(worst < 1e-5, "bands differ from QE's by {worst:.2e} Ha");
    assert!(bands.join("pw.bands.png").exists());
    // The same step on two ranks (one G-vector group) gives the same eigenvalues.
    ok(&run(
        &bands,
        "pw.in",
        &["--ranks", "2", "--json", "two.json", "--quiet"],
    ));
    let two = read(&bands.join("two.json"));
    let flat = |d: &serde_json::Value| -> Vec<f64> {
        let e: Vec<Vec<Vec<f64>>> = serde_json::from_value(d["eigenvalues_ha"].clone()).unwrap();
        e.into_iter().flatten().flatten().collect()
    };
    let (one, two) = (flat(&doc), flat(&two));
    let layout = (one.iter().zip(&two)).fold(0.0, |m: f64, (a, b)| m.max((a - b).abs()));
    assert!(layout < 1e-8, "two ranks differ by {layout:.1e} Ha");
    ok(&run(&bands, "bands.in", &[]));
    let rows = |p: &Path| -> Vec<(f64, f64)> {
        let text = std::fs::read_to_string(p).unwrap();
        let pair = |l: &str| {
            let v: Vec<f64> = l.split_whitespace().map(|x| x.parse().unwrap()).collect();
            (v[0], v[1])
        };
        text.lines()
            .filter(|l| !l.trim().is_empty())
            .map(pair)
            .collect()
    };
    let qe_gnu = root().join("tests/data/post/si2_lda_gth/workflow/bands/qe_bands.dat.gnu");
    let (ours, theirs) = (rows(&bands.join("bands.dat.gnu")), rows(&qe_gnu));
    assert_eq!(ours.len(), theirs.len());
    for (a, b) in ours.iter().zip(&theirs) {
        // Four decimals printed: the path length to its last digit, energies (eV) to 1 meV.
        assert!(
            (a.0 - b.0).abs() < 1.5e-4 && (a.1 - b.1).abs() < 1e-3,
            "{a:?} {b:?}"
        );
    }

    // pw.x nscf by optimised tetrahedra, then dos.x two ways.
    copy_save(&dir, "dos");
    let dos = dir.join("dos");
    let text = ok(&run(&dos, "pw.in", &[]));
    assert!(
        text.contains("12x12x12 grid, 72 irreducible k-points"),
        "{text}"
    );
    ok(&run(&dos, "dos_tetra.in", &[]));
    let header = std::fs::read_to_string(dos.join("dos_tetra.dat")).unwrap();
    assert!(
        header.starts_with("#  E (eV)   dos(E)     Int dos(E) EFermi ="),
        "{header}"
    );
    let (l1, n) = dos_against_qe(
        &read(&dos.join("dos_tetra.dat.json")),
        &reference("dos_tetra.json"),
        "dos_per_ev",
    );
    assert!(
        l1 < 0.02 && (n - 8.0).abs() < 0.01,
        "tetrahedra: L1 {l1:.3e}, {n} electrons"
    );
    ok(&run(&dos, "dos_gauss.in", &[]));
    let (l1, n) = dos_against_qe(
        &read(&dos.join("dos_gauss.dat.json")),
        &reference("dos_gauss.json"),
        "dos_per_ev_fullprec",
    );
    assert!(
        l1 < 0.02 && (n - 8.0).abs() < 0.01,
        "Gaussian: L1 {l1:.3e}, {n} electrons"
    );
    // Methfessel-Paxton and Marzari-Vanderbilt (ngauss = 1, -1; 0.02 Ry): dos.x's columns.
    for (input, file) in [("dos_mp.in", "dos_mp.dat"), ("dos_mv.in", "dos_mv.dat")] {
        ok(&run(&dos, input, &[]));
        let qe = root().join("tests/data/post/si2_lda_gth/workflow/dos/qe_".to_string() + file);
        let l1 = column_l1(&dos.join(file), &qe);
        assert!(l1 < 1e-4, "{file}: L1 {l1:.3e} of the integral");
    }

    // pp.x on the SCF's own save folder.
    let cube = dir.join("cube");
    ok(&run(&cube, "pp.in", &[]));
    let text = std::fs::read_to_string(cube.join("si2_lda_gth.cube")).unwrap();
    let values: Vec<f64> = (text.lines().skip(8))
        .flat_map(|l| l.split_whitespace().map(|x| x.parse::<f64>().unwrap()))
        .collect();
    let qe = reference("cube.json");
    assert_eq!(values.len(), 32 * 32 * 32);
    let dv = qe["voxel_volume_bohr3"].as_f64().unwrap();
    assert!((values.iter().sum::<f64>() * dv - 8.0).abs() < 1e-6);
    let max = qe["max_value"].as_f64().unwrap();
    for p in qe["points"].as_array().unwrap() {
        let i: Vec<usize> = serde_json::from_value(p["index"].clone()).unwrap();
        let ours = values[(i[0] * 32 + i[1]) * 32 + i[2]];
        let theirs = p["value_e_per_bohr3"].as_f64().unwrap();
        assert!((ours - theirs).abs() < 1e-5 * max, "{p}: {ours}");
    }

    // pp.x plot_num = 1: V_bare + V_H + V_xc in Ry. At self-consistency the band energy is
    // the kinetic and nonlocal energies plus the integral of V rho.
    let pot = "&inputpp\n prefix='si2_lda_gth', outdir='../scf/qe_tmp', plot_num=1\n/\n&plot\n iflag=3, output_format=6, fileout='v.cube'\n/\n";
    std::fs::write(cube.join("pot.in"), pot).unwrap();
    ok(&run(&cube, "pot.in", &[]));
    let text = std::fs::read_to_string(cube.join("v.cube")).unwrap();
    let v = common::cube_values(&text, 2);
    let v_rho: f64 = 0.5 * dv * v.iter().zip(&values).map(|(a, b)| a * b).sum::<f64>();
    let rest = common::band_less_kinetic_and_nonlocal(&read(&dir.join("scf/pw.json")));
    assert!(
        (v_rho - rest).abs() < 1e-5,
        "int V rho = {v_rho}, band less kinetic and nonlocal {rest}"
    );

    // pp.x plot_num = 7: |psi|^2 of the highest valence band at the first k-point holds one
    // electron; a band the state lacks is refused.
    let seven = |band: usize| {
        format!("&inputpp\n prefix='si2_lda_gth', outdir='../scf/qe_tmp', plot_num=7, kpoint=1, kband={band}\n/\n&plot\n iflag=3, output_format=6, fileout='psi.cube'\n/\n")
    };
    std::fs::write(cube.join("psi.in"), seven(4)).unwrap();
    ok(&run(&cube, "psi.in", &[]));
    let text = std::fs::read_to_string(cube.join("psi.cube")).unwrap();
    let values: Vec<f64> = (text.lines().skip(8))
        .flat_map(|l| l.split_whitespace().map(|x| x.parse::<f64>().unwrap()))
        .collect();
    assert!((values.iter().sum::<f64>() * dv - 1.0).abs() < 1e-8);
    std::fs::write(cube.join("psi.in"), seven(9)).unwrap();
    refused(
        &run(&cube, "psi.in", &[]),
        "band 9 of k-point 1 (spin 1) does not exist",
    );
}

#[test]
fn steps_without_their_state_or_of_another_crystal_are_refused() {
    let dir = folder("refusals");
    // No SCF has run: the bands step and dos.x say what to run first.
    refused(&run(&dir.join("bands"), "pw.in", &[]), "run the SCF first");
    refused(
        &run(&dir.join("dos"), "dos_tetra.in", &[]),
        "run the nscf step first",
    );
    ok(&run(&dir.join("scf"), "pw.in", &["--quiet"]));
    copy_save(&dir, "bands");
    let bands = dir.join("bands");
    let text = std::fs::read_to_string(bands.join("pw.in")).unwrap();
    std::fs::write(
        bands.join("strained.in"),
        text.replace("5.1300000000", "5.2000000000"),
    )
    .unwrap();
    refused(
        &run(&bands, "strained.in", &[]),
        "of another input: the cell differs",
    );
    std::fs::write(
        bands.join("cutoff.in"),
        text.replace("ecutwfc=30.0, ecutrho=120.0", "ecutwfc=25.0"),
    )
    .unwrap();
    refused(
        &run(&bands, "cutoff.in", &[]),
        "its cutoff is 15 Ha, this input's 12.5 Ha",
    );
    // An outdir that cannot be a folder (under a file) stops the SCF before it starts.
    let scf = dir.join("scf");
    let text = std::fs::read_to_string(scf.join("pw.in")).unwrap();
    std::fs::write(
        scf.join("blocked.in"),
        text.replace("outdir='./qe_tmp'", "outdir='./pw.in/tmp'"),
    )
    .unwrap();
    refused(
        &run(&scf, "blocked.in", &["--ranks", "2"]),
        "cannot create the save folder",
    );
    // A bands input with `planewave bands` is pointed at `planewave run`.
    let out = Command::new(env!("CARGO_BIN_EXE_planewave"))
        .args(["bands", "pw.in"])
        .current_dir(&bands)
        .output()
        .unwrap();
    refused(&out, "runs with `planewave run pw.in`");
}
