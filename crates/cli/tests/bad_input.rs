//! Bad inputs given to the real `planewave` binary: each must give ONE clear message
//! (`error: <file>:<line>: <key>: <message>` + `  hint: ...`), exit code 2, no panic,
//! and no results JSON.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

/// A file under the repository's `tests/data`.
fn data(rel: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/data")
        .join(rel)
}

/// A fresh temporary folder for one test, removed when dropped.
struct Case {
    dir: PathBuf,
}

impl Case {
    fn new(name: &str) -> Self {
        let dir =
            std::env::temp_dir().join(format!("planewave_bad_input_{name}_{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        Case { dir }
    }

    /// Writes `text` to `name` in the folder.
    fn write(&self, name: &str, text: &str) -> PathBuf {
        let p = self.dir.join(name);
        std::fs::write(&p, text).unwrap();
        p
    }

    /// Copies `tests/data/<rel>` to `name` in the folder.
    fn copy(&self, rel: &str, name: &str) -> PathBuf {
        let p = self.dir.join(name);
        std::fs::copy(data(rel), &p).unwrap();
        p
    }

    /// Runs `planewave ARGS` in the folder.
    fn planewave(&self, args: &[&str]) -> Output {
        Command::new(env!("CARGO_BIN_EXE_planewave"))
            .args(args)
            .current_dir(&self.dir)
            .output()
            .expect("the planewave binary runs")
    }

    /// JSON files (results or their temporaries) in the folder.
    fn json_files(&self) -> Vec<String> {
        std::fs::read_dir(&self.dir)
            .unwrap()
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| n.ends_with(".json") || n.ends_with(".json.tmp"))
            .collect()
    }

    /// `check INPUT` and `run INPUT` (default JSON path and `--json`) must both refuse the
    /// input with exit code 2, the same single message naming the input file, with a hint,
    /// no panic and no results JSON. Returns stderr.
    fn refuse(&self, input: &str) -> String {
        let check = self.planewave(&["check", input]);
        let msg = assert_refused(&check, input);
        for args in [
            vec!["run", input],
            vec!["run", input, "--json", "explicit.json"],
        ] {
            let run = self.planewave(&args);
            let run_msg = assert_refused(&run, input);
            assert_eq!(run_msg, msg, "`run` and `check` disagree for {args:?}");
            let stdout = String::from_utf8_lossy(&run.stdout);
            assert!(
                !stdout.contains("results written"),
                "run claims results for a bad input:\n{stdout}"
            );
            assert!(
                self.json_files().is_empty(),
                "run wrote a results JSON for a bad input: {:?}",
                self.json_files()
            );
        }
        msg
    }
}

impl Drop for Case {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// Exit code 2, one `error:` line naming `input`, a hint, no panic. Returns stderr.
fn assert_refused(out: &Output, input: &str) -> String {
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(2), "exit code; stderr:\n{stderr}");
    assert!(!stderr.contains("panicked"), "panic:\n{stderr}");
    assert!(!stderr.contains("RUST_BACKTRACE"), "panic:\n{stderr}");
    let errors = stderr.lines().filter(|l| l.starts_with("error:")).count();
    assert_eq!(errors, 1, "expected exactly one error line:\n{stderr}");
    assert!(
        stderr.starts_with(&format!("error: {input}")),
        "the message must start by naming the input file {input}:\n{stderr}"
    );
    assert!(stderr.contains("\n  hint: "), "no hint:\n{stderr}");
    stderr
}

/// Asserts `stderr` contains every one of `parts`.
fn assert_mentions(stderr: &str, parts: &[&str]) {
    for p in parts {
        assert!(stderr.contains(p), "expected `{p}` in:\n{stderr}");
    }
}

/// A valid two-atom silicon input (lines: 2 lattice, 4-5 atoms, 8 [species.Si], 12 ecut,
/// 13 kpoints).
const SI: &str = r#"[structure]
lattice = [[0.0, 5.13, 5.13], [5.13, 0.0, 5.13], [5.13, 5.13, 0.0]]
atoms = [
  { species = "Si", position = [0.0, 0.0, 0.0] },
  { species = "Si", position = [0.25, 0.25, 0.25] },
]

[species.Si]
pseudo = "Si-q4.lda.cp2k"

[basis]
ecut = 5.0
kpoints = { grid = [2, 2, 2] }
"#;

/// `SI` with `from` replaced by `to` (which must occur).
fn si_with(from: &str, to: &str) -> String {
    assert!(SI.contains(from), "{from}");
    SI.replace(from, to)
}

/// A case with the GTH silicon pseudopotential in place.
fn si_case(name: &str) -> Case {
    let c = Case::new(name);
    c.copy("pseudos/gth/Si-q4.lda.cp2k", "Si-q4.lda.cp2k");
    c
}

/// A QE pw.x input for silicon with `extra` added to &system (line 9 onwards).
fn qe_si(extra: &str) -> String {
    format!(
        "&control
  calculation = 'scf', prefix = 'si2'
/
&system
  ibrav = 0, nat = 2, ntyp = 1,
  ecutwfc = 10.0,
  occupations = 'fixed',
  nbnd = 8,
{extra}
/
&electrons
  conv_thr = 1.0d-8
/
ATOMIC_SPECIES
  Si 28.085 Si-q4.lda.gth
CELL_PARAMETERS bohr
  0.0 5.13 5.13
  5.13 0.0 5.13
  5.13 5.13 0.0
ATOMIC_POSITIONS crystal
  Si 0.00 0.00 0.00
  Si 0.25 0.25 0.25
K_POINTS automatic
  2 2 2 0 0 0
"
    )
}

fn qe_case(name: &str) -> Case {
    let c = Case::new(name);
    c.copy("pseudos/gth/Si-q4.lda.gth", "Si-q4.lda.gth");
    c
}

#[test]
fn valid_input_check_prints_setup() {
    let c = si_case("valid");
    c.write("si.toml", SI);
    let out = c.planewave(&["check", "si.toml"]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stdout}\n{stderr}");
    assert!(stdout.contains("FFT grid 15x15x15"), "{stdout}");
    assert!(
        stdout.contains("k-points 3 (8 before symmetry)"),
        "{stdout}"
    );
    assert!(c.json_files().is_empty(), "check must not write results");
}

#[test]
fn left_handed_lattice_is_accepted() {
    let c = si_case("left_handed");
    // a1 and a3 of SI swapped: determinant < 0, same crystal.
    let text = si_with(
        "[[0.0, 5.13, 5.13], [5.13, 0.0, 5.13], [5.13, 5.13, 0.0]]",
        "[[5.13, 5.13, 0.0], [5.13, 0.0, 5.13], [0.0, 5.13, 5.13]]",
    );
    c.write("left.toml", &text);
    let out = c.planewave(&["check", "left.toml"]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stdout}\n{stderr}");
    assert!(!stderr.contains("error"), "{stderr}");
    assert!(stdout.contains("FFT grid"), "{stdout}");
    assert!(stdout.contains("volume 270.01"), "{stdout}");
}

#[test]
fn malformed_toml_names_the_line() {
    let c = si_case("malformed");
    c.write(
        "bad.toml",
        &si_with(
            r#"pseudo = "Si-q4.lda.cp2k""#,
            r#"pseudo = "Si-q4.lda.cp2k"#,
        ),
    );
    let e = c.refuse("bad.toml");
    assert_mentions(&e, &["error: bad.toml:9:", "malformed TOML"]);
}

#[test]
fn unknown_key_suggests_the_right_one() {
    let c = si_case("unknown_key");
    c.write("bad.toml", &si_with("ecut = 5.0", "ecutt = 5.0"));
    let e = c.refuse("bad.toml");
    assert_mentions(
        &e,
        &[
            "error: bad.toml:12: basis.ecutt:",
            "unknown key `ecutt`",
            "did you mean `ecut`?",
        ],
    );
}

#[test]
fn missing_pseudopotential_file() {
    let c = Case::new("missing_pseudo");
    c.write("bad.toml", SI);
    let e = c.refuse("bad.toml");
    assert_mentions(
        &e,
        &[
            "error: bad.toml:8: species.Si.pseudo:",
            "Si-q4.lda.cp2k",
            "not found",
            "relative to the input file's folder",
        ],
    );
}

#[test]
fn truncated_upf_pseudopotential() {
    let c = Case::new("truncated_upf");
    let full = std::fs::read(data("pseudos/Si.sg15.upf")).unwrap();
    std::fs::write(c.dir.join("Si.half.upf"), &full[..full.len() / 2]).unwrap();
    c.write(
        "bad.toml",
        &si_with(r#""Si-q4.lda.cp2k""#, r#""Si.half.upf""#),
    );
    let e = c.refuse("bad.toml");
    assert_mentions(
        &e,
        &[
            "error: bad.toml:8: species.Si.pseudo:",
            "Si.half.upf:",
            "truncated",
        ],
    );
    // The line inside the pseudopotential file is given.
    let after = e.split("Si.half.upf:").nth(1).unwrap();
    assert!(
        after.starts_with(|ch: char| ch.is_ascii_digit()),
        "no line number in the pseudopotential file:\n{e}"
    );
}

#[test]
fn pseudopotential_in_a_wrong_format() {
    let c = Case::new("wrong_format");
    // A VASP POTCAR header: not a format planewave reads.
    c.write(
        "Si.potcar",
        "  PAW_PBE Si 05Jan2001\n 4.00000000000000000\n parameters from PSCTR are:\n   VRHFIN =Si: s2p2\n",
    );
    c.write(
        "bad.toml",
        &si_with(r#""Si-q4.lda.cp2k""#, r#""Si.potcar""#),
    );
    let e = c.refuse("bad.toml");
    assert_mentions(
        &e,
        &[
            "error: bad.toml:8: species.Si.pseudo:",
            "Si.potcar",
            "unrecognised pseudopotential format",
            "UPF",
        ],
    );
}

#[test]
fn element_without_pseudo() {
    let c = si_case("no_pseudo_for_element");
    c.write(
        "bad.toml",
        &si_with(
            r#"{ species = "Si", position = [0.25"#,
            r#"{ species = "Ge", position = [0.25"#,
        ),
    );
    let e = c.refuse("bad.toml");
    assert_mentions(
        &e,
        &[
            "error: bad.toml:5: structure.atoms:",
            "`Ge`",
            "without a pseudo",
            "hint: add [species.Ge]",
        ],
    );
}

#[test]
fn atoms_too_close() {
    let c = si_case("atoms_too_close");
    c.write(
        "bad.toml",
        &si_with("[0.25, 0.25, 0.25]", "[0.01, 0.01, 0.01]"),
    );
    let e = c.refuse("bad.toml");
    assert_mentions(
        &e,
        &[
            "error: bad.toml:5: structure.atoms:",
            "atoms 1 (Si) and 2 (Si) are 0.1777 bohr apart",
            "0.5 bohr",
        ],
    );
}

#[test]
fn singular_lattice() {
    let c = si_case("singular_lattice");
    c.write(
        "bad.toml",
        &si_with(
            "[[0.0, 5.13, 5.13], [5.13, 0.0, 5.13], [5.13, 5.13, 0.0]]",
            "[[0.0, 5.13, 5.13], [5.13, 0.0, 5.13], [5.13, 5.13, 10.26]]",
        ),
    );
    let e = c.refuse("bad.toml");
    assert_mentions(
        &e,
        &[
            "error: bad.toml:2: structure.lattice:",
            "linearly dependent",
        ],
    );
}

#[test]
fn zero_cutoff() {
    let c = si_case("zero_ecut");
    c.write("bad.toml", &si_with("ecut = 5.0", "ecut = 0.0"));
    let e = c.refuse("bad.toml");
    assert_mentions(
        &e,
        &[
            "error: bad.toml:12: basis.ecut:",
            "must be positive",
            "got 0 Ha",
        ],
    );
}

#[test]
fn density_cutoff_below_four_times_the_wavefunctions() {
    let c = si_case("low_ecut_rho");
    c.write(
        "bad.toml",
        &si_with("ecut = 5.0", "ecut = 5.0\necut_rho = \"30 Ry\""),
    );
    let e = c.refuse("bad.toml");
    assert_mentions(
        &e,
        &[
            "error: bad.toml:13: basis.ecut_rho:",
            "15 Ha (30 Ry) is below 4 times the wavefunction cutoff, 20 Ha",
        ],
    );
}

#[test]
fn gpu_device_that_cannot_be_used_is_refused_by_name() {
    // No GPU here (CI): a build without `cuda` names the feature, one with it finds no driver;
    // both refuse by the key, exit 2, before any SCF. (`check` does not open the GPU: it
    // estimates its memory, check_cli.rs.)
    let c = si_case("device_gpu");
    c.write("gpu.toml", &format!("{SI}\n[parallel]\ndevice = \"gpu\"\n"));
    let e = assert_refused(&c.planewave(&["run", "gpu.toml"]), "gpu.toml");
    assert_mentions(
        &e,
        &["error: gpu.toml:16: parallel.device:", "--device cpu"],
    );
    assert!(
        e.contains("built without GPU support") || e.contains("NVIDIA") || e.contains("CUDA"),
        "{e}"
    );
    // A band's plane waves over two ranks: refused whatever the build.
    let out = c.planewave(&["run", "gpu.toml", "--ranks", "2", "--kpoint-groups", "1"]);
    let e = assert_refused(&out, "gpu.toml");
    assert_mentions(&e, &["shares a band's plane waves over 2 ranks"]);
    // An unknown device is named, with the nearest choice.
    c.write("tpu.toml", &format!("{SI}\n[parallel]\ndevice = \"tpu\"\n"));
    let e = c.refuse("tpu.toml");
    assert_mentions(
        &e,
        &[
            "parallel.device: unknown device `tpu`",
            "did you mean `cpu`?",
        ],
    );
}

#[test]
fn negative_cutoff() {
    let c = si_case("negative_ecut");
    c.write("bad.toml", &si_with("ecut = 5.0", r#"ecut = "-10 Ry""#));
    let e = c.refuse("bad.toml");
    assert_mentions(
        &e,
        &[
            "error: bad.toml:12: basis.ecut:",
            "must be positive",
            "-5 Ha",
        ],
    );
}

#[test]
fn cutoff_too_large_for_memory_is_refused_quickly() {
    let c = si_case("huge_ecut");
    let text = si_with("ecut = 5.0", "ecut = 5000.0").replace(
        "[[0.0, 5.13, 5.13], [5.13, 0.0, 5.13], [5.13, 5.13, 0.0]]",
        "[[60.0, 0.0, 0.0], [0.0, 60.0, 0.0], [0.0, 0.0, 60.0]]",
    );
    c.write("bad.toml", &text);
    let t0 = Instant::now();
    let e = c.refuse("bad.toml");
    // Three processes (check, run, run --json): refused before any allocation.
    assert!(
        t0.elapsed() < Duration::from_secs(20),
        "took {:?}",
        t0.elapsed()
    );
    assert_mentions(
        &e,
        &[
            "error: bad.toml:12: basis.ecut:",
            "a cutoff of 5000 Ha",
            "GiB per rank, more than the",
            "GiB a run may plan on (80% of this machine's",
            "is the density-sized arrays on the FFT grid",
            "hint: lower ecut",
        ],
    );
}

#[test]
fn kpoint_grid_too_large_for_memory_names_the_kpoints() {
    let c = si_case("huge_kgrid");
    c.write(
        "bad.toml",
        // About 12000 irreducible k-points of 400 bands of ~4600 plane waves: over 300 GiB.
        &si_with("grid = [2, 2, 2] }", "grid = [80, 80, 80] }\nnbands = 400")
            .replace("ecut = 5.0", "ecut = 50.0"),
    );
    let e = c.refuse("bad.toml");
    assert_mentions(
        &e,
        &[
            "error: bad.toml:13: basis.kpoints:",
            "GiB per rank, more than the",
            "is the bands of the",
            "(spin, k) blocks this rank holds",
            "hint: use a coarser k-point grid",
        ],
    );
    assert!(!e.contains("basis.ecut"), "{e}");
}

#[test]
fn kpoint_grid_with_a_zero() {
    let c = si_case("kgrid_zero");
    c.write("bad.toml", &si_with("grid = [2, 2, 2]", "grid = [2, 0, 2]"));
    let e = c.refuse("bad.toml");
    assert_mentions(
        &e,
        &[
            "error: bad.toml:13: basis.kpoints:",
            "[2, 0, 2] has a zero entry",
            "at least 1 point per direction",
        ],
    );
}

#[test]
fn odd_electron_count_without_smearing_or_spin() {
    let c = Case::new("odd_electrons");
    c.copy("pseudos/gth/H-q1.lda.cp2k", "H-q1.lda.cp2k");
    c.write(
        "h.toml",
        r#"[structure]
lattice = [[10.0, 0.0, 0.0], [0.0, 10.0, 0.0], [0.0, 0.0, 10.0]]
atoms = [{ species = "H", position = [0.0, 0.0, 0.0] }]

[species.H]
pseudo = "H-q1.lda.cp2k"

[model]
spin = "none"

[basis]
ecut = 5.0
kpoints = "gamma"
"#,
    );
    let e = c.refuse("h.toml");
    assert_mentions(
        &e,
        &[
            "error: h.toml: model.smearing:",
            "odd number of electrons (1)",
            "smearing",
            "collinear",
        ],
    );
}

#[test]
fn too_few_bands() {
    let c = si_case("too_few_bands");
    c.write("bad.toml", &si_with("ecut = 5.0", "ecut = 5.0\nnbands = 3"));
    let e = c.refuse("bad.toml");
    assert_mentions(
        &e,
        &[
            "error: bad.toml:13: basis.nbands:",
            "3 bands cannot hold 8 electrons",
            "hint: use at least 4 bands",
        ],
    );
}

#[test]
fn qe_valid_input_checks() {
    let c = qe_case("qe_valid");
    c.write("pw.in", &qe_si(""));
    let out = c.planewave(&["check", "pw.in"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
}

#[test]
fn qe_lda_plus_u_is_refused() {
    let c = qe_case("qe_lda_plus_u");
    c.write("pw.in", &qe_si("  lda_plus_u = .true.,"));
    let e = c.refuse("pw.in");
    assert_mentions(
        &e,
        &[
            "error: pw.in:9: lda_plus_u:",
            "not supported",
            "hint: remove it",
        ],
    );
}

#[test]
fn qe_noncolin_is_refused() {
    let c = qe_case("qe_noncolin");
    c.write("pw.in", &qe_si("  noncolin = .true."));
    let e = c.refuse("pw.in");
    assert_mentions(&e, &["error: pw.in:9: noncolin:", "not supported"]);
}

#[test]
fn qe_too_few_bands_names_nbnd() {
    let c = qe_case("qe_too_few_bands");
    c.write("pw.in", &qe_si("").replace("nbnd = 8", "nbnd = 2"));
    let e = c.refuse("pw.in");
    assert_mentions(
        &e,
        &[
            "error: pw.in:8: nbnd:",
            "2 bands cannot hold 8 electrons",
            "at least 4",
        ],
    );
}

#[test]
fn qe_missing_pseudo_names_atomic_species() {
    let c = Case::new("qe_missing_pseudo");
    c.write("pw.in", &qe_si(""));
    let e = c.refuse("pw.in");
    assert_mentions(
        &e,
        &[
            "error: pw.in:15: ATOMIC_SPECIES:",
            "Si-q4.lda.gth",
            "not found",
            "pseudo_dir",
        ],
    );
}

#[test]
fn missing_input_file() {
    let c = Case::new("missing_input");
    let e = c.refuse("nothere.toml");
    assert_mentions(
        &e,
        &[
            "error: nothere.toml: cannot read the input file",
            "hint: check the path",
        ],
    );
    assert!(!Path::new(&c.dir.join("nothere.toml")).exists());
}

#[test]
fn relax_with_nothing_free_to_move_says_so() {
    // Ideal diamond: every force vanishes by symmetry, so a positions-only relaxation is void.
    let c = Case::new("relax_no_dof");
    c.copy("pseudos/gth/Si-q4.lda.cp2k", "Si-q4.lda.cp2k");
    c.write("si.toml", SI);
    let out = c.planewave(&["relax", "si.toml"]);
    let stderr = assert_refused(&out, "si.toml");
    assert_mentions(&stderr, &["nothing to relax", "cell = true"]);
    let written: Vec<String> = std::fs::read_dir(&c.dir)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n != "si.toml" && n != "Si-q4.lda.cp2k")
        .collect();
    assert!(written.is_empty(), "files written: {written:?}");
}

#[test]
fn relax_tolerance_must_be_positive() {
    let c = Case::new("relax_tol");
    c.copy("pseudos/gth/Si-q4.lda.cp2k", "Si-q4.lda.cp2k");
    c.write(
        "si.toml",
        &format!("{SI}\n[relax]\nforce_tolerance = -1e-4\n"),
    );
    let msg = c.refuse("si.toml");
    assert_mentions(&msg, &["relax.force_tolerance", "positive"]);
}

#[test]
fn started_by_mpirun_without_the_mpi_back_end_stops() {
    // Two ranks announced by Open MPI's launcher: a binary without MPI must not run N copies.
    let c = Case::new("mpirun_guard");
    c.copy("pseudos/gth/Si-q4.lda.cp2k", "Si-q4.lda.cp2k");
    c.write("si.toml", SI);
    for rank in ["0", "1"] {
        let out = Command::new(env!("CARGO_BIN_EXE_planewave"))
            .args(["run", "si.toml"])
            .current_dir(&c.dir)
            .env("OMPI_COMM_WORLD_SIZE", "2")
            .env("OMPI_COMM_WORLD_RANK", rank)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2));
        let stderr = String::from_utf8_lossy(&out.stderr);
        if rank == "0" {
            assert_mentions(&stderr, &["error: started by OpenMPI as 2 ranks", "hint:"]);
        } else {
            // The message is printed once, by rank 0.
            assert!(stderr.is_empty(), "{stderr}");
        }
        assert!(c.json_files().is_empty());
    }
}

#[test]
fn impossible_parallel_layout_proposes_the_nearest() {
    let c = Case::new("parallel_layout");
    c.copy("pseudos/gth/Si-q4.lda.cp2k", "Si-q4.lda.cp2k");
    c.write(
        "si.toml",
        &format!("{SI}\n[parallel]\nkpoint_groups = 2\nband_groups = 1\n"),
    );
    let msg = c.refuse("si.toml");
    assert_mentions(
        &msg,
        &[
            "si.toml:16",
            "parallel.kpoint_groups",
            "1 ranks",
            "kpoint_groups = 1, band_groups = 1",
        ],
    );
}

#[test]
fn unknown_alltoallv_strategy_is_named() {
    let c = Case::new("alltoallv");
    c.copy("pseudos/gth/Si-q4.lda.cp2k", "Si-q4.lda.cp2k");
    c.write(
        "si.toml",
        &format!("{SI}\n[parallel]\nalltoallv = \"fastest\"\n"),
    );
    let msg = c.refuse("si.toml");
    assert_mentions(&msg, &["parallel.alltoallv", "fastest", "pairwise"]);
}

#[test]
fn impossible_parallel_options_are_refused() {
    let c = si_case("parallel_options");
    c.write("si.toml", SI);
    for (args, expect) in [
        (vec!["--ranks", "0"], "--ranks must be at least 1"),
        (
            vec!["--ranks", "2", "--band-groups", "3"],
            "3 band groups do not divide the 2 ranks of a k-point group",
        ),
        (
            vec!["--ranks", "8", "--band-groups", "8"],
            "8 band groups for 4 bands",
        ),
        (
            vec!["--ranks", "2", "--kpoint-groups", "3"],
            "3 k-point groups do not divide 2 ranks",
        ),
        (
            vec![
                "--ranks",
                "4",
                "--band-groups",
                "2",
                "--rank-order",
                "sideways",
            ],
            "invalid value 'sideways' for '--rank-order <ORDER>'",
        ),
    ] {
        let out = c.planewave(&[&["run", "si.toml"][..], &args].concat());
        assert_eq!(out.status.code(), Some(2), "{args:?}: {out:?}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(
            stderr.lines().filter(|l| l.starts_with("error")).count(),
            1,
            "{stderr}"
        );
        assert_mentions(&stderr, &[expect]);
        assert!(!stderr.contains("panicked"), "{stderr}");
        assert!(c.json_files().is_empty());
    }
}

#[test]
fn rank_order_flag_sets_the_layout_it_prints() {
    let c = si_case("rank_order");
    c.write("si.toml", SI);
    for (order, shown) in [("band", "rank order band"), ("g", "rank order g")] {
        let args = [
            "run",
            "si.toml",
            "--ranks",
            "4",
            "--kpoint-groups",
            "1",
            "--band-groups",
            "2",
            "--rank-order",
            order,
        ];
        let out = c.planewave(&args);
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert_eq!(out.status.code(), Some(0), "{stdout}");
        let layout = stdout
            .lines()
            .find(|l| l.starts_with("parallel layout on 4 rank(s)"))
            .unwrap_or_else(|| panic!("no layout line:\n{stdout}"));
        assert!(
            layout.ends_with(&format!("(G-vector groups of 2 ranks), {shown}")),
            "{layout}"
        );
    }
}

#[test]
fn tuning_and_strategy_variables_with_unusable_values_are_one_error_each() {
    let c = si_case("tuning_env");
    c.write("si.toml", SI);
    for (var, value, says) in [
        (
            "PLANEWAVE_BAND_ALGORITHM",
            "spiral",
            "unknown band algorithm \"spiral\" (known: ",
        ),
        (
            "PLANEWAVE_CHECKPOINT_TRANSPORT",
            "carrier",
            "'carrier': use 'group' or 'world'",
        ),
        (
            "PLANEWAVE_CHECKPOINT_BLOCK_MIB",
            "-1",
            "give a positive size in MiB",
        ),
        (
            "PLANEWAVE_ALLTOALLV",
            "carrier",
            "unknown all-to-all-v strategy 'carrier'",
        ),
        (
            "PLANEWAVE_KPOINT_SUM",
            "carrier",
            "unknown k-point sum strategy 'carrier'",
        ),
        (
            "PLANEWAVE_MEASURE_WAITING",
            "yes",
            "use 1 (measure) or 0 (not)",
        ),
        (
            "PLANEWAVE_LINALG_BACKEND",
            "carrier",
            "unknown linalg back end 'carrier'",
        ),
        (
            "PLANEWAVE_SUBSPACE_SOLVER",
            "carrier",
            "expected redundant, scalapack or auto",
        ),
    ] {
        let out = Command::new(env!("CARGO_BIN_EXE_planewave"))
            .args(["run", "si.toml"])
            .env(var, value)
            .current_dir(&c.dir)
            .output()
            .expect("the planewave binary runs");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{var}: {stderr}");
        assert!(stderr.starts_with(&format!("error: {var}")), "{stderr}");
        assert_mentions(&stderr, &[says, "\n  hint: unset it"]);
        assert_eq!(
            stderr.lines().filter(|l| l.starts_with("error:")).count(),
            1
        );
        assert!(!stderr.contains("panicked"), "{stderr}");
        assert!(c.json_files().is_empty(), "{var}: results written");
    }
}
