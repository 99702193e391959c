//! Helpers shared by the command-line tests.

// Each test file uses some of them.
#![allow(dead_code)]

use std::process::Command;

/// Start `cmd`, send `signal` (a `kill` option such as `-TERM`) to it once it prints a line
/// starting with `prefix`, and wait for the end: (exit code, stdout, stderr).
pub fn signal_after_line(
    cmd: &mut Command,
    signal: &str,
    prefix: &str,
) -> (Option<i32>, String, String) {
    use std::io::{BufRead, BufReader, Read};
    use std::process::Stdio;
    let mut child = cmd
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut seen = String::new();
    let mut line = String::new();
    while stdout.read_line(&mut line).unwrap() > 0 {
        seen.push_str(&line);
        if line.starts_with(prefix) {
            let pid = child.id().to_string();
            let ok = Command::new("kill").args([signal, &pid]).status().unwrap();
            assert!(ok.success());
            break;
        }
        line.clear();
    }
    stdout.read_to_string(&mut seen).unwrap();
    let mut err = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut err)
        .unwrap();
    let status = child.wait().unwrap();
    (status.code(), seen, err)
}

/// `planewave run examples/si.toml` with `args` after the input and `RAYON_NUM_THREADS=1`,
/// writing the results JSON to a temporary file: (stdout, the results document). Panics
/// when the run fails.
pub fn si_example(tag: &str, args: &[&str]) -> (String, serde_json::Value) {
    let root = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    let json = std::env::temp_dir().join(format!("planewave-{tag}-{}.json", std::process::id()));
    let out = Command::new(env!("CARGO_BIN_EXE_planewave"))
        .arg("run")
        .arg(root.join("examples/si.toml"))
        .args(args)
        .arg("--json")
        .arg(&json)
        .env("RAYON_NUM_THREADS", "1")
        .output()
        .expect("the planewave binary runs");
    assert!(out.status.success(), "{out:?}");
    let doc = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    std::fs::remove_file(&json).unwrap();
    (String::from_utf8(out.stdout).unwrap(), doc)
}

/// An empty folder `planewave-<tag>-<pid>` in the temporary directory holding copies of
/// `files` (paths relative to the repository root, copied to the folder under the same
/// relative path unless given a `to` name).
pub fn case_folder(tag: &str, files: &[(&str, &str)]) -> std::path::PathBuf {
    let root = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    let dir = std::env::temp_dir().join(format!("planewave-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    for (from, to) in files {
        let to = dir.join(to);
        std::fs::create_dir_all(to.parent().expect("a file in the folder")).unwrap();
        std::fs::copy(root.join(from), &to).unwrap();
    }
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// `planewave run INPUT ARGS` in `dir` on two threads, as a QE workflow script runs it (no
/// `$ESPRESSO_TMPDIR`).
pub fn run_in(dir: &std::path::Path, input: &str, args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_planewave"))
        .args(["run", input])
        .args(args)
        .current_dir(dir)
        .env("RAYON_NUM_THREADS", "2")
        .env_remove("ESPRESSO_TMPDIR")
        .output()
        .unwrap()
}

/// The standard output of a run that must succeed (its output in the failure message).
pub fn ok(out: &std::process::Output) -> String {
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{text}\n{err}");
    text
}

/// From a results document: the band energy Σ_k w_k Σ_n f_nk e_nk less the kinetic and
/// nonlocal energies (Ha), which at self-consistency is ∫ (V_loc + V_H + V_xc) ρ.
pub fn band_less_kinetic_and_nonlocal(doc: &serde_json::Value) -> f64 {
    let mut band = 0.0;
    for (k, kpt) in doc["kpoints"].as_array().unwrap().iter().enumerate() {
        let e = doc["eigenvalues_ha"][0][k].as_array().unwrap();
        let f = doc["occupations"][0][k].as_array().unwrap();
        let sum: f64 = (e.iter().zip(f))
            .map(|(e, f)| e.as_f64().unwrap() * f.as_f64().unwrap())
            .sum();
        band += kpt["weight"].as_f64().unwrap() * sum;
    }
    let terms = &doc["energy_terms_ha"];
    band - terms["kinetic"].as_f64().unwrap() - terms["nonlocal"].as_f64().unwrap()
}

/// The values of a Gaussian cube file (after its header of `8` lines for a 2-atom cell: give
/// the atom count).
pub fn cube_values(text: &str, atoms: usize) -> Vec<f64> {
    (text.lines().skip(6 + atoms))
        .flat_map(|l| l.split_whitespace().map(|x| x.parse::<f64>().unwrap()))
        .collect()
}

/// The numbers after the last `=` on the lines of a pw.x output `text` that contain `key`.
pub fn numbers_after(text: &str, key: &str) -> Vec<Vec<f64>> {
    text.lines()
        .filter(|l| l.contains(key))
        .map(|l| {
            let tail = l.rsplit('=').next().unwrap();
            tail.split_whitespace()
                .filter_map(|x| x.parse().ok())
                .collect()
        })
        .collect()
}

/// pw.x's total stress: the Ry/bohr³ columns of the three rows after its header.
pub fn qe_stress(text: &str) -> Vec<Vec<f64>> {
    let at = text.find("total   stress").unwrap();
    text[at..]
        .lines()
        .skip(1)
        .take(3)
        .map(|l| {
            l.split_whitespace()
                .take(3)
                .map(|x| x.parse().unwrap())
                .collect()
        })
        .collect()
}
