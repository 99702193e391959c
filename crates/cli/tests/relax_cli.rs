//! `planewave relax` end to end on a small cell relaxation: one line per ionic step, and the
//! POSCAR, extended-XYZ trajectory and results JSON written next to the input; on in-process
//! ranks (k-point groups) the same steps to the same structure.

use std::path::PathBuf;
use std::process::Command;

mod common;

/// A folder `tag` with the Si pseudopotential and a small cell-relaxation input `si.toml`.
fn relax_case(tag: &str) -> PathBuf {
    let pseudo = ("tests/data/pseudos/gth/Si-q4.lda.cp2k", "Si-q4.lda.cp2k");
    let dir = common::case_folder(&format!("relax-cli-{tag}"), &[pseudo]);
    std::fs::write(
        dir.join("si.toml"),
        r#"[structure]
lattice = [[0.0, 5.3, 5.3], [5.3, 0.0, 5.3], [5.3, 5.3, 0.0]]
atoms = [
  { species = "Si", position = [0.0, 0.0, 0.0] },
  { species = "Si", position = [0.25, 0.25, 0.25] },
]
[species.Si]
pseudo = "Si-q4.lda.cp2k"
[basis]
ecut = 8.0
kpoints = { grid = [2, 2, 2] }
[relax]
cell = true
pressure = 1.0          # GPa
stress_tolerance = 0.01
"#,
    )
    .unwrap();
    dir
}

#[test]
fn relaxation_on_ranks_takes_the_same_steps() {
    let run = |tag: &str, extra: &[&str]| {
        let dir = relax_case(tag);
        let out = Command::new(env!("CARGO_BIN_EXE_planewave"))
            .args(["relax", "si.toml", "-q"])
            .args(extra)
            .current_dir(&dir)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0), "{out:?}");
        let text = std::fs::read_to_string(dir.join("si.json")).unwrap();
        let _ = std::fs::remove_dir_all(&dir);
        serde_json::from_str::<serde_json::Value>(&text).unwrap()
    };
    let serial = run("serial", &[]);
    let ranks = run("ranks", &["--ranks", "3"]);
    let steps = |j: &serde_json::Value| j["relaxation"]["steps"].as_array().unwrap().len();
    assert_eq!(steps(&serial), steps(&ranks), "same number of ionic steps");
    let e = |j: &serde_json::Value| j["total_energy_ha"].as_f64().unwrap();
    assert!(
        (e(&serial) - e(&ranks)).abs() < 1e-8,
        "{} vs {}",
        e(&serial),
        e(&ranks)
    );
    for i in 0..3 {
        for k in 0..3 {
            let l = |j: &serde_json::Value| j["structure"]["lattice_bohr"][i][k].as_f64().unwrap();
            assert!((l(&serial) - l(&ranks)).abs() < 1e-7, "lattice differs");
        }
    }
}

#[test]
fn cell_relaxation_writes_poscar_trajectory_and_json() {
    let dir = relax_case("files");
    let out = Command::new(env!("CARGO_BIN_EXE_planewave"))
        .args(["relax", "si.toml", "-q"])
        .current_dir(&dir)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let steps = stdout.lines().filter(|l| l.starts_with("relax ")).count();
    assert!(steps >= 3, "{stdout}");
    assert!(stdout.contains("relaxation converged"));

    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("si.json")).unwrap()).unwrap();
    assert_eq!(json["relaxation"]["converged"], true);
    assert_eq!(json["relaxation"]["steps"].as_array().unwrap().len(), steps);
    // At the target pressure: sigma = +p (QE sign) on the diagonal, to the tolerance.
    let p = json["pressure_gpa"].as_f64().unwrap();
    assert!((p - 1.0).abs() < 0.01, "pressure {p} GPa");
    assert_eq!(json["forces_ha_per_bohr"].as_array().unwrap().len(), 2);

    let poscar = std::fs::read_to_string(dir.join("si.relaxed.vasp")).unwrap();
    let lines: Vec<&str> = poscar.lines().collect();
    assert_eq!(lines[5].trim(), "Si");
    assert_eq!(lines[6].trim(), "2");
    assert_eq!(lines[7].trim(), "Direct");
    // The lattice in the POSCAR (Å) is the JSON's (bohr).
    let a1: Vec<f64> = lines[2]
        .split_whitespace()
        .map(|x| x.parse().unwrap())
        .collect();
    let l = &json["structure"]["lattice_bohr"][0];
    for (k, x) in a1.iter().enumerate() {
        let bohr = l[k].as_f64().unwrap();
        assert!(
            (x * 1.8897261246257702 - bohr).abs() < 1e-8,
            "{x} Å vs {bohr} bohr"
        );
    }

    let xyz = std::fs::read_to_string(dir.join("si.traj.xyz")).unwrap();
    let frames = xyz.lines().filter(|l| l.starts_with("Lattice=")).count();
    assert_eq!(frames, steps);
    assert!(xyz.contains("Properties=species:S:1:pos:R:3:forces:R:3"));
    let _ = std::fs::remove_dir_all(&dir);
}

/// SIGTERM after the second ionic step stops the relaxation with exit code 3 and a checkpoint of
/// the structure it reached; `--restart` continues from there to the same relaxed cell.
#[test]
fn a_stopped_relaxation_resumes_from_its_checkpoint() {
    let dir = relax_case("resume");
    let relax = |extra: &[&str]| {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_planewave"));
        cmd.args(["relax", "si.toml"]).args(extra).current_dir(&dir);
        cmd
    };
    let json = || -> serde_json::Value {
        serde_json::from_str(&std::fs::read_to_string(dir.join("si.json")).unwrap()).unwrap()
    };
    let out = relax(&["-q"]).output().unwrap();
    assert!(out.status.success(), "{out:?}");
    let reference = json();
    let (code, stdout, stderr) = common::signal_after_line(
        &mut relax(&["--checkpoint", "si.ckpt"]),
        "-TERM",
        "relax     1",
    );
    assert_eq!(code, Some(3), "{stdout}\n{stderr}");
    assert!(
        stderr.contains("stopped by signal SIGTERM in ionic step "),
        "{stderr}"
    );
    assert!(
        stderr.contains("planewave relax si.toml --restart si.ckpt"),
        "{stderr}"
    );
    assert_eq!(json()["stopped"], "signal SIGTERM");
    let out = relax(&["-q", "--restart", "si.ckpt"]).output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{out:?}");
    assert!(
        stdout.contains("continues from the structure of si.ckpt"),
        "{stdout}"
    );
    let resumed = json();
    assert_eq!(resumed["relaxation"]["converged"], true);
    let v = |j: &serde_json::Value| j["structure"]["volume_bohr3"].as_f64().unwrap();
    assert!(
        (v(&resumed) - v(&reference)).abs() < 1e-3 * v(&reference),
        "{} vs {} bohr^3",
        v(&resumed),
        v(&reference)
    );
    let _ = std::fs::remove_dir_all(&dir);
}
