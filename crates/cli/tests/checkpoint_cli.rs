//! `planewave run --checkpoint/--checkpoint-every/--restart` end to end: the file is written
//! (and only under its final name), a restart continues from it, and a missing, truncated,
//! corrupted or foreign file ends the run with one message naming it and the problem, exit 2,
//! and the file untouched.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

mod common;
use common::signal_after_line;

const BIN: &str = env!("CARGO_BIN_EXE_planewave");

fn data(case: &str) -> String {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/data/qe");
    p.join(case).join("pw.in").to_str().unwrap().to_string()
}

fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("planewave-ckpt-cli-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn planewave(args: &[&str]) -> Output {
    Command::new(BIN).args(args).output().unwrap()
}

/// A scratch folder `name` with the paths of checkpoint `file` and `json` in it, and the si2
/// input.
fn si2_case(name: &str, file: &str, json: &str) -> (PathBuf, PathBuf, PathBuf, String) {
    let dir = scratch(name);
    let (ck, j) = (dir.join(file), dir.join(json));
    (dir, ck, j, data("si2_lda_gth"))
}

/// [`si2_case`] with the checkpoint written by a converged run, and its bytes.
fn si2_written(name: &str, file: &str) -> (PathBuf, PathBuf, PathBuf, String, Vec<u8>) {
    let (dir, ck, j, input) = si2_case(name, file, "a.json");
    let out = quiet_run(&input, &j, "--checkpoint", ck.to_str().unwrap());
    assert!(out.status.success(), "{}", text(&out.stderr));
    let bytes = std::fs::read(&ck).unwrap();
    (dir, ck, j, input, bytes)
}

/// The arguments `run input -q --json json <flag> <file>`.
fn quiet_args<'a>(input: &'a str, json: &'a Path, flag: &'a str, file: &'a str) -> Vec<&'a str> {
    let json = json.to_str().unwrap();
    vec!["run", input, "-q", "--json", json, flag, file]
}

/// `planewave` with [`quiet_args`].
fn quiet_run(input: &str, json: &Path, flag: &str, file: &str) -> Output {
    planewave(&quiet_args(input, json, flag, file))
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).to_string()
}

/// Exit code 2, one error line mentioning every part of `expect`.
fn refused(out: &Output, expect: &[&str]) {
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert_eq!(
        err.lines().filter(|l| l.starts_with("error")).count(),
        1,
        "{err}"
    );
    for e in expect {
        assert!(err.contains(e), "{err} (expected {e})");
    }
    assert!(!err.contains("panicked"), "{err}");
}

#[test]
fn a_run_writes_its_checkpoint_and_a_restart_continues_from_it() {
    let (dir, ck, j, input) = si2_case("roundtrip", "si2.ckpt", "a.json");
    let ck_s = ck.to_str().unwrap();
    let args = [
        "run",
        &input,
        "--json",
        j.to_str().unwrap(),
        "--checkpoint",
        ck_s,
        "--checkpoint-every",
        "2",
        "--max-iterations",
        "3",
    ];
    let out = planewave(&args);
    assert_eq!(
        out.status.code(),
        Some(1),
        "not converged in 3: {}",
        text(&out.stderr)
    );
    let stdout = text(&out.stdout);
    assert!(stdout.contains("checkpoint written to"), "{stdout}");
    assert!(
        stdout.contains("--restart"),
        "says how to continue: {stdout}"
    );
    assert!(ck.exists() && !dir.join("si2.ckpt.tmp").exists());
    let out = planewave(&[
        "run",
        &input,
        "--json",
        j.to_str().unwrap(),
        "--restart",
        ck_s,
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    assert!(
        stdout.contains("restart from") && stdout.contains("iteration 3"),
        "{stdout}"
    );
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn bad_checkpoints_are_refused_and_left_untouched() {
    let (dir, ck, _, input, good) = si2_written("bad", "good.ckpt");
    let ck_s = ck.to_str().unwrap();
    let mut flipped = good.clone();
    flipped[200] ^= 1;
    let cases: Vec<(&str, Vec<u8>, &str)> = vec![
        (
            "truncated.ckpt",
            good[..good.len() - 100].to_vec(),
            "truncated",
        ),
        ("flipped.ckpt", flipped, "checksum"),
        (
            "text.ckpt",
            b"not a checkpoint at all, just some words".to_vec(),
            "not a planewave checkpoint",
        ),
    ];
    for (name, bytes, problem) in cases {
        let f = dir.join(name);
        std::fs::write(&f, &bytes).unwrap();
        let out = planewave(&["run", &input, "-q", "--restart", f.to_str().unwrap()]);
        refused(&out, &[name, problem]);
        assert_eq!(std::fs::read(&f).unwrap(), bytes, "{name} untouched");
    }
    let missing = dir.join("missing.ckpt");
    let out = planewave(&["run", &input, "-q", "--restart", missing.to_str().unwrap()]);
    refused(&out, &["missing.ckpt", "cannot open"]);
    // Another input (more electrons, other atoms).
    let out = planewave(&[
        "run",
        &data("si8_lda_gth_displaced"),
        "-q",
        "--restart",
        ck_s,
    ]);
    refused(&out, &["good.ckpt", "another input"]);
    assert_eq!(std::fs::read(&ck).unwrap(), good);
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn checkpoint_flags_are_checked() {
    let input = data("si2_lda_gth");
    let out = planewave(&["run", &input, "--checkpoint-every", "2"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("--checkpoint"),
        "{}",
        text(&out.stderr)
    );
    let out = planewave(&[
        "run",
        &input,
        "--checkpoint",
        "x.ckpt",
        "--checkpoint-every",
        "0",
    ]);
    refused(&out, &["--checkpoint-every must be at least 1"]);
}

#[test]
fn sigterm_during_an_scf_writes_a_checkpoint_that_restarts() {
    let dir = scratch("sigterm");
    let ck = dir.join("stop.ckpt");
    let ck_s = ck.to_str().unwrap();
    let input = data("si8_lda_gth_displaced");
    let j = dir.join("a.json");
    let mut cmd = Command::new(BIN);
    cmd.args([
        "run",
        &input,
        "--json",
        j.to_str().unwrap(),
        "--checkpoint",
        ck_s,
    ]);
    let (code, stdout, stderr) = signal_after_line(&mut cmd, "-TERM", "scf ");
    assert_eq!(code, Some(3), "{stdout}\n{stderr}");
    assert!(stderr.contains("stopped by signal SIGTERM"), "{stderr}");
    assert!(stderr.contains(&format!("--restart {ck_s}")), "{stderr}");
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&j).unwrap()).unwrap();
    assert_eq!(doc["stopped"], "signal SIGTERM");
    assert!(!doc.as_object().unwrap().contains_key("forces_ha_per_bohr"));
    let out = quiet_run(&input, &j, "--restart", ck_s);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn a_time_limit_stops_cleanly_with_a_checkpoint_to_resume() {
    let dir = scratch("timelimit");
    let ck = dir.join("t.ckpt");
    let j = dir.join("t.json");
    let input = data("si8_lda_gth_displaced");
    let mut args = quiet_args(&input, &j, "--checkpoint", ck.to_str().unwrap());
    args.extend(["--time-limit", "1s"]);
    let out = planewave(&args);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{stderr}");
    assert!(
        stderr.contains("stopped by the time limit") && ck.exists(),
        "{stderr}"
    );
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&j).unwrap()).unwrap();
    assert!(doc["scf_iterations"].as_u64().unwrap() < 10, "{doc}");
    let out = planewave(&["run", &input, "--time-limit", "2x"]);
    refused_by_clap(&out, "not a duration");
    let _ = std::fs::remove_dir_all(dir);
}

/// A usage error: exit code 2 and the reason.
fn refused_by_clap(out: &Output, reason: &str) {
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains(reason), "{}", text(&out.stderr));
}

#[test]
fn qe_restart_mode_restart_continues_from_the_stem_checkpoint() {
    let dir = scratch("qe-restart");
    let pseudos = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/data/pseudos/gth");
    let original = std::fs::read_to_string(data("si2_lda_gth")).unwrap();
    let with = |mode: &str| {
        original
            .replace("'../../pseudos/gth'", &format!("'{}'", pseudos.display()))
            .replacen(
                "disk_io='none',",
                &format!("disk_io='none', restart_mode='{mode}',"),
                1,
            )
    };
    let input = dir.join("si2.in");
    let input_s = input.to_str().unwrap();
    std::fs::write(&input, with("restart")).unwrap();
    let out = planewave(&["run", input_s, "-q"]);
    refused(
        &out,
        &["restart_mode = 'restart'", "si2.ckpt", "does not exist"],
    );
    std::fs::write(&input, with("from_scratch")).unwrap();
    let ck = dir.join("si2.ckpt");
    let out = planewave(&["run", input_s, "-q", "--checkpoint", ck.to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    std::fs::write(&input, with("restart")).unwrap();
    let out = planewave(&["run", input_s]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        text(&out.stdout).contains("restart from"),
        "{}",
        text(&out.stdout)
    );
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn a_writer_killed_mid_write_leaves_the_previous_checkpoint_valid() {
    let (dir, ck, j, input, good) = si2_written("killed", "k.ckpt");
    let ck_s = ck.to_str().unwrap();
    // The second run dies (SIGABRT, no clean-up) 5000 bytes into writing its checkpoint.
    let out = Command::new(BIN)
        .args(quiet_args(&input, &j, "--checkpoint", ck_s))
        .env("PLANEWAVE_CHECKPOINT_ABORT_AFTER", "5000")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), None, "killed by a signal: {out:?}");
    let partial = std::fs::read(dir.join("k.ckpt.tmp")).unwrap();
    assert!(partial.len() > 5000 && partial.len() < good.len());
    assert_eq!(
        std::fs::read(&ck).unwrap(),
        good,
        "the previous checkpoint is intact"
    );
    let out = quiet_run(&input, &j, "--restart", ck_s);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let out = planewave(&[
        "run",
        &input,
        "-q",
        "--restart",
        dir.join("k.ckpt.tmp").to_str().unwrap(),
    ]);
    refused(&out, &["k.ckpt.tmp", "truncated"]);
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn slurm_job_end_time_is_a_time_limit() {
    let dir = scratch("slurm");
    let ck = dir.join("s.ckpt");
    let input = data("si8_lda_gth_displaced");
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    let run = |end: &str| {
        Command::new(BIN)
            .args(["run", &input, "-q", "--checkpoint", ck.to_str().unwrap()])
            .env("SLURM_JOB_END_TIME", end)
            .output()
            .unwrap()
    };
    let out = run(&(now + 1).to_string());
    assert_eq!(out.status.code(), Some(3), "{}", text(&out.stderr));
    assert!(text(&out.stderr).contains("stopped by the time limit") && ck.exists());
    let out = run("tomorrow");
    refused(&out, &["SLURM_JOB_END_TIME = 'tomorrow'"]);
    let _ = std::fs::remove_dir_all(dir);
}
