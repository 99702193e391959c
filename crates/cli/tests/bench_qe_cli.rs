//! `planewave bench qe`: the real binary against the real pw.x (when on the PATH; CI installs
//! it) on Si2, and planewave alone when pw.x is missing; a missing input is one error.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn data(rel: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/data")
        .join(rel)
}

/// A folder holding Si2's pw.x input with its pseudopotential beside it.
fn si2_folder(tag: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("planewave-bench-qe-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let text = std::fs::read_to_string(data("qe/si2_lda_gth/pw.in")).unwrap();
    let text = text.replace("pseudo_dir='../../pseudos/gth'", "pseudo_dir='./'");
    std::fs::write(dir.join("pw.in"), text).unwrap();
    std::fs::copy(data("pseudos/gth/Si-q4.lda.gth"), dir.join("Si-q4.lda.gth")).unwrap();
    dir
}

fn bench(dir: &Path, path: Option<&str>, extra: &[&str]) -> Output {
    let mut c = Command::new(env!("CARGO_BIN_EXE_planewave"));
    c.args(["bench", "qe"])
        .arg(dir.join("pw.in"))
        .args(["--runs", "1"])
        .args(extra);
    if let Some(p) = path {
        c.env("PATH", p);
    }
    c.output().unwrap()
}

/// The number after `key` in `text`.
fn number_after(text: &str, key: &str) -> f64 {
    let at = text
        .find(key)
        .unwrap_or_else(|| panic!("no `{key}` in:\n{text}"));
    let rest = &text[at + key.len()..];
    let end = rest
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(rest.len());
    rest[..end]
        .parse()
        .unwrap_or_else(|_| panic!("no number after `{key}` in:\n{text}"))
}

#[test]
fn times_planewave_against_pw_x_when_installed() {
    let dir = si2_folder("qe");
    let out = bench(&dir, None, &[]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let has_qe = std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default())
        .any(|d| d.join("pw.x").is_file());
    if has_qe {
        let ratio = number_after(&stdout, "median time ratio planewave/QE = ");
        assert!(ratio > 0.0 && ratio.is_finite(), "{stdout}");
        let mem = number_after(&stdout, "peak RSS per process ratio = ");
        assert!(mem > 0.0, "{stdout}");
        assert!(stdout.contains("run 1: QE "), "{stdout}");
    } else {
        assert!(stdout.contains("pw.x is not on the PATH"), "{stdout}");
    }
    // planewave's own run: its iterations and a peak RSS from wait4.
    assert!(stdout.contains(" SCF iterations)"), "{stdout}");
    // "run 1: planewave 0.63 s" alone, "run 1: QE 0.52 s (...), planewave 0.63 s" with pw.x.
    let key = if has_qe {
        "), planewave "
    } else {
        "run 1: planewave "
    };
    assert!(number_after(&stdout, key) > 0.0, "{stdout}");
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn without_pw_x_times_planewave_alone() {
    let dir = si2_folder("alone");
    let empty = dir.join("no-programs-here");
    std::fs::create_dir_all(&empty).unwrap();
    let out = bench(&dir, empty.to_str(), &[]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert!(stdout.contains("pw.x is not on the PATH"), "{stdout}");
    assert!(number_after(&stdout, "median ") > 0.0, "{stdout}");
    assert!(stdout.contains(" MiB, "), "peak RSS measured: {stdout}");
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn a_missing_input_is_one_error() {
    let dir = std::env::temp_dir().join(format!("planewave-bench-qe-none-{}", std::process::id()));
    let out = bench(&dir, None, &[]);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        stderr.lines().filter(|l| l.starts_with("error")).count(),
        1,
        "{stderr}"
    );
    assert!(stderr.contains("no such input file"), "{stderr}");
}
