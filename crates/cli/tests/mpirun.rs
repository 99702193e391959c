//! `planewave` under `mpirun` (built only with the `mpi` feature; `.ci/run` runs it):
//! results on 2 and 4 MPI ranks equal the serial ones (a spin case, a k-point case, k-point
//! groups x G-vector groups, pure G-vector groups on the Γ-point real path, ultrasoft
//! cases on G-vector, k-point and band groups, and PAW cases), one
//! message and exit code 2 for a bad input, for an error on one rank only and for a panic on
//! one rank only, and never a hang; a QE workflow (SCF, bands step, bands.x) under mpirun.
#![cfg(feature = "mpi")]

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_planewave");

mod common;

/// Ultrasoft cases whose copy gets a tighter `conv_thr` (Ry): si2_pbe_us's energy change at
/// its 9th iteration lies within rounding of its own 1e-12, so layouts stopped one iteration
/// apart (serial after 9, 2 k-point groups after 10: eigenvalues 6.1e-8 Ha apart, the shift of
/// a density residual of 1.6e-7). At 1e-13 the layouts stop 16 to 18 iterations in, 4e-11 apart.
const TIGHTER: &[(&str, &str)] = &[("si2_pbe_us", "1.000e-13")];

/// A reference case's input, one made for the layout tests (tests/data/layout), or an
/// ultrasoft case of tests/data/uspp (copied with the pseudopotentials to a scratch folder,
/// its `conv_thr` tightened as [`TIGHTER`] says).
fn case(name: &str) -> PathBuf {
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/data");
    let own = data.join("layout").join(format!("{name}.toml"));
    let uspp = data.join("uspp");
    if uspp.join(name).exists() {
        let dir = scratch(&format!("uspp-{name}"));
        let mut text = std::fs::read_to_string(uspp.join(name).join("pw.in")).unwrap();
        if let Some((_, thr)) = TIGHTER.iter().find(|(n, _)| *n == name) {
            let at = text.find("conv_thr=").expect("the case sets conv_thr") + "conv_thr=".len();
            let end = at + text[at..].find(',').expect("conv_thr ends with a comma");
            text.replace_range(at..end, thr);
        }
        std::fs::write(dir.join("pw.in"), text).unwrap();
        for f in std::fs::read_dir(&uspp).unwrap() {
            let f = f.unwrap().path();
            if f.extension().is_some_and(|e| e == "UPF") {
                std::fs::copy(&f, dir.join(f.file_name().unwrap())).unwrap();
            }
        }
        dir.join("pw.in")
    } else if own.exists() {
        own
    } else {
        data.join("qe").join(name).join("pw.in")
    }
}

fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("planewave-mpirun-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Run `cmd`, killing it after `limit` (a hang is a failure).
fn run_limited(mut cmd: Command, limit: Duration) -> Output {
    cmd.stdout(Stdio::piped()).stderr(Stdio::piped());
    let mut child = cmd.spawn().expect("mpirun starts (is OpenMPI installed?)");
    let t = Instant::now();
    loop {
        if child.try_wait().unwrap().is_some() {
            return child.wait_with_output().unwrap();
        }
        if t.elapsed() > limit {
            let _ = child.kill();
            panic!("{cmd:?} did not finish in {limit:?} (hang)");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn mpirun(np: usize, args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut cmd = Command::new("mpirun");
    cmd.args([
        "--allow-run-as-root",
        "--oversubscribe",
        "-np",
        &np.to_string(),
        BIN,
    ])
    .args(args)
    .env("RAYON_NUM_THREADS", "1");
    for (k, v) in env {
        cmd.env(k, v);
    }
    run_limited(cmd, Duration::from_secs(300))
}

fn serial(args: &[&str]) -> Output {
    let mut cmd = Command::new(BIN);
    cmd.args(args);
    run_limited(cmd, Duration::from_secs(300))
}

fn json(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

fn numbers(v: &Value, key: &str) -> Vec<f64> {
    fn walk(v: &Value, out: &mut Vec<f64>) {
        match v {
            Value::Array(a) => a.iter().for_each(|x| walk(x, out)),
            Value::Number(n) => out.push(n.as_f64().unwrap()),
            _ => {}
        }
    }
    let mut out = Vec::new();
    walk(&v[key], &mut out);
    out
}

fn same_results(name: &str, np: usize) {
    same_results_with(name, np, &[], &[]);
}

/// As [`same_results`], with extra `planewave run` options and environment for the MPI run;
/// returns the MPI run's results.
fn same_results_with(name: &str, np: usize, options: &[&str], env: &[(&str, &str)]) -> Value {
    same_results_within(name, np, options, env, 1e-8)
}

/// As [`same_results_with`], the eigenvalues equal to `eigen_tol` (Ha).
fn same_results_within(
    name: &str,
    np: usize,
    options: &[&str],
    env: &[(&str, &str)],
    eigen_tol: f64,
) -> Value {
    let dir = scratch(&format!("{name}-{np}-{}", options.join("")));
    let input = case(name);
    let input = input.to_str().unwrap();
    let (s_json, p_json) = (dir.join("serial.json"), dir.join("mpi.json"));
    let s = serial(&["run", input, "-q", "--json", s_json.to_str().unwrap()]);
    assert!(s.status.success(), "serial run: {s:?}");
    let mut args = vec!["run", input, "-q", "--json", p_json.to_str().unwrap()];
    args.extend_from_slice(options);
    let p = mpirun(np, &args, env);
    assert!(p.status.success(), "mpirun -np {np}: {p:?}");
    let (a, b) = (json(&s_json), json(&p_json));
    assert_eq!(b["parallel"]["ranks"], np, "{name}: ran on {np} MPI ranks");
    assert_eq!(b["parallel"]["backend"], "mpi");
    for (key, tol) in [
        ("total_energy_ha", 1e-8),
        ("eigenvalues_ha", eigen_tol),
        ("forces_ha_per_bohr", 1e-7),
        ("stress_ha_per_bohr3", 1e-9),
        ("total_magnetization", 1e-8),
    ] {
        let (x, y) = (numbers(&a, key), numbers(&b, key));
        assert_eq!(x.len(), y.len(), "{name}: {key}");
        let d = x
            .iter()
            .zip(&y)
            .map(|(p, q)| (p - q).abs())
            .fold(0.0, f64::max);
        assert!(d < tol, "{name} on {np} ranks: {key} differs by {d:.2e}");
    }
    let _ = std::fs::remove_dir_all(dir);
    b
}

/// The G-vector group's overlap sums in a run's report.
fn overlaps(doc: &Value) -> Value {
    doc["parallel"]["operations"]
        .as_array()
        .unwrap()
        .iter()
        .find(|o| o["level"] == "G-vector" && o["operation"] == "overlaps")
        .cloned()
        .expect("G-vector overlaps in the report")
}

#[test]
fn measured_waiting_is_reported_and_changes_no_result() {
    // MPI cannot see the waiting inside an all-reduce; a barrier before it can.
    let plain = same_results_with("si8_pbe_nlcc_gamma", 2, &[], &[]);
    assert_eq!(overlaps(&plain)["waiting_s"], 0.0);
    let env = [("PLANEWAVE_MEASURE_WAITING", "1")];
    let measured = same_results_with("si8_pbe_nlcc_gamma", 2, &[], &env);
    let o = overlaps(&measured);
    assert!(o["waiting_s"].as_f64().unwrap() > 0.0, "{o}");
    assert!(o["seconds"].as_f64() >= o["waiting_s"].as_f64(), "{o}");
}

#[test]
fn spin_case_on_2_and_4_ranks_matches_serial() {
    // The energy and the occupied band agree to 1e-14 Ha; the empty bands (spin up's second,
    // both of spin down) only to 1e-7: the final pass converges them to a residual of 1e-4 Ha,
    // which fixes an eigenvalue to about the residual's square over its gap, and the layouts
    // stop that pass along different rounding paths (measured on 4 ranks: 5.5e-9 Ha apart,
    // 1.4e-8 after XC roundings moved by 1e-16; QE leaves its empty bands at 1e-5 Ry).
    same_results_within("h1_lsda_gth_box", 2, &[], &[], 1e-7);
    same_results_within("h1_lsda_gth_box", 4, &[], &[], 1e-7);
}

#[test]
fn kpoint_case_on_2_and_4_ranks_matches_serial() {
    same_results("si2_lda_gth", 2);
    same_results("si2_lda_gth", 4);
}

#[test]
fn gamma_point_on_gvector_groups_of_2_and_4_ranks_matches_serial() {
    same_results("si8_pbe_nlcc_gamma", 2);
    same_results("si8_pbe_nlcc_gamma", 4);
}

#[test]
fn kpoint_groups_times_gvector_groups_match_serial() {
    // 2 k-point groups of 2 G-vector ranks; spin channels on 2 groups of 2 G-vector ranks.
    same_results_with("si8_lda_gth_displaced", 4, &["--kpoint-groups", "2"], &[]);
    same_results_with(
        "o2_pbe_spin_smearing_gamma",
        4,
        &["--kpoint-groups", "2"],
        &[],
    );
}

#[test]
fn hybrid_on_kpoint_band_and_gvector_groups_matches_serial() {
    // PBE0 with k-points and a q grid (orbitals at k + q from the other k-point group) on 2
    // k-point groups, then on one G-vector group of 2, then on 2 band groups (each group's
    // share of the orbitals at k + q around the ring); with one q-point on 2 k-point groups
    // and on 2 band groups (the block's own orbitals around the ring); the water molecule at
    // Γ on a G-vector group of 2.
    same_results_with("si2_pbe0_gth", 2, &["--kpoint-groups", "2"], &[]);
    same_results_with("si2_pbe0_gth", 2, &["--kpoint-groups", "1"], &[]);
    same_results_with(
        "si2_pbe0_gth",
        2,
        &["--kpoint-groups", "1", "--band-groups", "2"],
        &[],
    );
    same_results_with("si2_pbe0_gth_nq1", 2, &["--kpoint-groups", "2"], &[]);
    same_results_with(
        "si2_pbe0_gth_nq1",
        2,
        &["--kpoint-groups", "1", "--band-groups", "2"],
        &[],
    );
    same_results("h2o_pbe0_gth_gamma", 2);
}

#[test]
fn band_groups_match_serial() {
    // Bands over 2 band groups of one rank (k-points; Γ-point real bands with spin and
    // smearing), then 2 band groups of 2 G-vector ranks (both rank orders, the band ring
    // across emulated nodes in the first) and 2 k-point groups of 2 band groups.
    same_results_with("si2_lda_gth", 2, &["--band-groups", "2"], &[]);
    same_results_with(
        "o2_pbe_spin_smearing_gamma",
        2,
        &["--band-groups", "2"],
        &[],
    );
    let nodes = [
        ("PLANEWAVE_MPI_RANKS_PER_NODE", "2"),
        ("PLANEWAVE_ALLTOALLV", "node"),
    ];
    same_results_with("si8_pbe_nlcc_gamma", 4, &["--band-groups", "2"], &nodes);
    let by_band = ["--band-groups", "2", "--rank-order", "band"];
    same_results_with("si8_pbe_nlcc_gamma", 4, &by_band, &[]);
    let kb = ["--kpoint-groups", "2", "--band-groups", "2"];
    same_results_with("si8_lda_gth_displaced", 4, &kb, &[]);
}

#[test]
fn ultrasoft_cases_on_gvector_kpoint_and_band_groups_match_serial() {
    // Γ with spin (G-vector groups of the real path), k-points (k-point groups), band groups.
    same_results("si2_pbe_us_gamma_spin", 2);
    same_results("si2_pbe_us", 2);
    same_results_with(
        "si2_pbe_us",
        2,
        &["--kpoint-groups", "1", "--band-groups", "2"],
        &[],
    );
}

#[test]
fn paw_cases_on_kpoint_and_gvector_groups_match_serial() {
    // PAW diamond with k-points (k-point groups), PAW H with ultrasoft O at Γ (G-vector
    // groups of the real path): the one-centre terms are dealt over the ranks by direction.
    // Diamond's eigenvalues agree to 5e-8 Ha: its energy change meets conv_thr within
    // rounding of the tolerance, so the layouts may stop iterations apart (measured: serial
    // after 11 iterations, 2 k-point groups after 9 with the same energies to 1e-13 and
    // eigenvalues 1.7e-8 apart, the shift of a density residual of 5e-8).
    same_results_within("c2_pbe_paw", 2, &[], &[], 5e-8);
    // Water's eigenvalues agree to 1e-6 Ha (its energy to 1e-11): the one-centre coupling
    // comes from the mixed band sums, which the SCF's residual leaves out (as QE's does), so
    // the last Hamiltonian is converged to the density's tolerance, not the energy's.
    same_results_within("h2o_pbe_us_paw_gamma", 2, &[], &[], 2e-6);
}

/// The subspace eigenproblems through ScaLAPACK (forced: this case's matrices are below the
/// size from which `auto` picks it) give the serial results: over a G-vector group, and over
/// the band x G grid of a k-point group (2 band groups of 2 G-vector ranks).
#[cfg(feature = "scalapack")]
#[test]
fn scalapack_subspace_solver_matches_serial() {
    let env = [("PLANEWAVE_SUBSPACE_SOLVER", "scalapack")];
    same_results_with("si8_pbe_nlcc_gamma", 2, &[], &env);
    same_results_with("si8_pbe_nlcc_gamma", 4, &["--band-groups", "2"], &env);
}

/// Exit code 2 and exactly one line starting with `error` in the output.
fn one_error(out: &Output, what: &str) -> String {
    assert_eq!(out.status.code(), Some(2), "{what}: exit code ({out:?})");
    let stderr = String::from_utf8_lossy(&out.stderr).to_string();
    let count = stderr.lines().filter(|l| l.starts_with("error")).count();
    assert_eq!(count, 1, "{what}: one message, got:\n{stderr}");
    stderr
}

#[test]
fn bad_input_ends_every_rank_with_one_message() {
    let dir = scratch("bad");
    let bad = dir.join("bad.toml");
    std::fs::write(&bad, "[structure]\nlattice = [[1, 0, 0], [0, 1, 0]]\n").unwrap();
    let out = mpirun(2, &["run", bad.to_str().unwrap()], &[]);
    one_error(&out, "bad input");
    let _ = std::fs::remove_dir_all(dir);
}

/// si2 on 2 MPI ranks with the testing variable `var` = 1: (output, whether a JSON appeared).
fn fault_on_rank_1(var: &str) -> (Output, bool) {
    let dir = scratch(var);
    let j = dir.join("r.json");
    let input = case("si2_lda_gth");
    let args = [
        "run",
        input.to_str().unwrap(),
        "--json",
        j.to_str().unwrap(),
    ];
    let out = mpirun(2, &args, &[(var, "1")]);
    let written = j.exists();
    let _ = std::fs::remove_dir_all(dir);
    (out, written)
}

#[test]
fn error_on_one_rank_only_ends_every_rank() {
    let (out, written) = fault_on_rank_1("PLANEWAVE_FAIL_RANK");
    let msg = one_error(&out, "error on rank 1");
    assert!(msg.contains("on rank 1 of 2"), "names the rank: {msg}");
    assert!(!written, "no results written after a failed set-up");
}

#[test]
fn panic_on_one_rank_only_ends_every_rank() {
    let (out, written) = fault_on_rank_1("PLANEWAVE_PANIC_RANK");
    assert_eq!(out.status.code(), Some(2), "exit code ({out:?})");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("injected panic"),
        "the panic is reported: {stderr}"
    );
    assert!(!written, "no results written after a panic");
}

/// A checkpoint written in one process restarts on 2, 3 and 4 MPI ranks (G-vector, band x G and
/// k x G splits, both transports), the one written on 2 restarts in one process, all to the
/// same energy in at most 2 iterations; a corrupt one ends every rank with one message and
/// stays as it was.
#[test]
fn checkpoints_cross_between_serial_and_mpirun() {
    let dir = scratch("checkpoint");
    let input = case("si8_lda_gth_displaced");
    let input = input.to_str().unwrap();
    let path = |n: &str| dir.join(n).to_str().unwrap().to_string();
    let (ck1, ck2, ck3) = (path("serial.ckpt"), path("mpi.ckpt"), path("again.ckpt"));
    let iterations = |j: &str| json(Path::new(j))["scf_history"].as_array().unwrap().len();
    let energy = |j: &str| json(Path::new(j))["total_energy_ha"].as_f64().unwrap();
    let j0 = path("s.json");
    let s = serial(&["run", input, "-q", "--json", &j0, "--checkpoint", &ck1]);
    assert!(s.status.success(), "serial run: {s:?}");
    let (e_ref, it_ref) = (energy(&j0), iterations(&j0));
    // Serial -> 2 ranks (G 2) -> serial, and serial -> 3 ranks (G 3), 4 ranks (band 2 x G 2)
    // and 4 ranks (k 2 x G 2).
    // The last with the other transport (every rank in every block's gather and broadcast).
    for (np, from, to, kgroups, bgroups, transport) in [
        (2, &ck1, &ck2, "1", "1", "group"),
        (1, &ck2, &ck3, "1", "1", "group"),
        (3, &ck1, &ck3, "1", "1", "group"),
        (4, &ck1, &ck3, "1", "2", "group"),
        (4, &ck1, &ck3, "2", "1", "group"),
        (4, &ck3, &ck2, "2", "1", "world"),
    ] {
        let j = path(&format!("r{np}.json"));
        let args = [
            "run",
            input,
            "-q",
            "--kpoint-groups",
            kgroups,
            "--band-groups",
            bgroups,
            "--json",
            &j,
            "--restart",
            from,
            "--checkpoint",
            to,
        ];
        let out = if np == 1 {
            serial(&args)
        } else {
            mpirun(np, &args, &[("PLANEWAVE_CHECKPOINT_TRANSPORT", transport)])
        };
        assert!(out.status.success(), "restart on {np}: {out:?}");
        assert!(
            (energy(&j) - e_ref).abs() < 1e-9,
            "{np} ranks: {} vs {e_ref}",
            energy(&j)
        );
        assert!(
            iterations(&j) <= 2 && it_ref > 2,
            "{} iterations",
            iterations(&j)
        );
    }
    let mut bytes = std::fs::read(&ck2).unwrap();
    let n = bytes.len() / 2;
    bytes[n] ^= 0x10;
    std::fs::write(&ck2, &bytes).unwrap();
    let out = mpirun(2, &["run", input, "-q", "--restart", &ck2], &[]);
    let msg = one_error(&out, "corrupt checkpoint");
    assert!(
        msg.contains("mpi.ckpt") && msg.contains("checksum"),
        "{msg}"
    );
    assert_eq!(std::fs::read(&ck2).unwrap(), bytes, "the file is untouched");
    let _ = std::fs::remove_dir_all(dir);
}

/// SIGUSR1 to mpirun (which forwards it to every rank) stops the SCF after its iteration on
/// every rank: exit code 3, and the checkpoint restarts in one process.
#[test]
fn a_signal_stops_every_rank_with_a_checkpoint() {
    let dir = scratch("signal");
    let input = case("si8_lda_gth_displaced");
    let ck = dir.join("stop.ckpt");
    let ck_s = ck.to_str().unwrap();
    let mut cmd = Command::new("mpirun");
    cmd.args([
        "--allow-run-as-root",
        "--oversubscribe",
        "-np",
        "2",
        BIN,
        "run",
    ])
    .arg(&input)
    .args(["--kpoint-groups", "1", "--checkpoint", ck_s])
    .env("RAYON_NUM_THREADS", "1");
    let (code, stdout, stderr) = common::signal_after_line(&mut cmd, "-USR1", "scf ");
    assert_eq!(code, Some(3), "{stdout}\n{stderr}");
    assert!(stderr.contains("stopped by signal SIGUSR1"), "{stderr}");
    let out = serial(&["run", input.to_str().unwrap(), "-q", "--restart", ck_s]);
    assert!(out.status.success(), "{out:?}");
    let _ = std::fs::remove_dir_all(dir);
}

/// QE's si2_lda_gth workflow inputs (tests/data/post/si2_lda_gth/workflow) in a fresh folder.
fn qe_workflow(tag: &str) -> PathBuf {
    let dir = scratch(tag);
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/data");
    let w = data.join("post/si2_lda_gth/workflow");
    for f in ["scf/pw.in", "bands/pw.in", "bands/bands.in"] {
        std::fs::create_dir_all(dir.join(f).parent().unwrap()).unwrap();
        std::fs::copy(w.join(f), dir.join(f)).unwrap();
    }
    std::fs::create_dir_all(dir.join("scf/pseudo")).unwrap();
    let pseudo = "Si-q4.lda.gth";
    std::fs::copy(
        data.join("pseudos/gth").join(pseudo),
        dir.join("scf/pseudo").join(pseudo),
    )
    .unwrap();
    dir
}

#[test]
fn a_qe_workflow_under_mpirun_matches_serial() {
    let dir = qe_workflow("qe-workflow");
    let path = |f: &str| dir.join(f).to_str().unwrap().to_string();
    // The SCF on 2 ranks keeps its state in the save folder.
    let scf = mpirun(2, &["run", &path("scf/pw.in"), "-q"], &[]);
    assert!(scf.status.success(), "{scf:?}");
    let save = dir.join("scf/qe_tmp/si2_lda_gth.save");
    assert!(save.join("planewave.ckpt").exists());
    std::fs::create_dir_all(dir.join("bands/qe_tmp/si2_lda_gth.save")).unwrap();
    for f in std::fs::read_dir(&save).unwrap() {
        let f = f.unwrap().path();
        let to = dir
            .join("bands/qe_tmp/si2_lda_gth.save")
            .join(f.file_name().unwrap());
        std::fs::copy(&f, to).unwrap();
    }
    // The bands step on 2 ranks and on one give the same eigenvalues.
    let bands = path("bands/pw.in");
    let one = serial(&["run", &bands, "-q", "--json", &path("one.json")]);
    assert!(one.status.success(), "{one:?}");
    let two = mpirun(2, &["run", &bands, "-q", "--json", &path("two.json")], &[]);
    assert!(two.status.success(), "{two:?}");
    let (a, b) = (json(&dir.join("one.json")), json(&dir.join("two.json")));
    let (x, y) = (numbers(&a, "eigenvalues_ha"), numbers(&b, "eigenvalues_ha"));
    assert_eq!(x.len(), 67 * 12);
    let d = x
        .iter()
        .zip(&y)
        .map(|(p, q)| (p - q).abs())
        .fold(0.0, f64::max);
    assert!(d < 1e-8, "bands step on 2 ranks differs by {d:.2e} Ha");
    // bands.x is serial: under mpirun rank 0 writes its files once, every rank ends cleanly.
    let post = mpirun(2, &["run", &path("bands/bands.in")], &[]);
    assert!(post.status.success(), "{post:?}");
    let gnu = std::fs::read_to_string(dir.join("bands/bands.dat.gnu")).unwrap();
    assert_eq!(
        gnu.lines().filter(|l| !l.trim().is_empty()).count(),
        67 * 12
    );
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn bench_comm_measures_the_mpi_world_s_links_on_emulated_nodes() {
    // Two emulated nodes of one rank: no intra-node link, an inter-node one, and the file
    // names the MPI back end; rank 0 alone prints and writes.
    let dir = scratch("bench-comm");
    let file = dir.join("comm.json");
    let out = mpirun(
        2,
        &["bench", "comm", "--save", file.to_str().unwrap()],
        &[("PLANEWAVE_MPI_RANKS_PER_NODE", "1")],
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{out:?}");
    assert_eq!(text.matches("calibration written to").count(), 1, "{text}");
    let saved: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    assert_eq!(
        (&saved["backend"], &saved["ranks"], &saved["nodes"]),
        (&Value::from("mpi"), &Value::from(2), &Value::from(2)),
        "{saved}"
    );
    assert!(saved["intra"].is_null(), "{saved}");
    assert!(
        saved["inter"]["seconds_per_byte"].as_f64().unwrap() > 0.0,
        "{saved}"
    );
}
