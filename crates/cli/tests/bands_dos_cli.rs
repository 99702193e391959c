//! `planewave dos`, `planewave bands`, the density cube of `planewave run` and `planewave
//! export` on the README's
//! Si example (its [bands] path is QE's L-Γ-X-U|K-Γ): the
//! files it writes and what they hold, against QE 6.7's band edges on that path
//! (tests/data/post/si2_lda_gth/bands.json), the same on a G-vector group of two ranks; an
//! input without a path gets its lattice's path, or is refused before the SCF when its
//! lattice has none.

use std::path::{Path, PathBuf};
use std::process::Command;

mod common;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// A fresh folder with the Si example and its pseudopotential.
fn folder(tag: &str) -> PathBuf {
    let files = [
        ("examples/si.toml", "si.toml"),
        ("examples/pseudos/Si-q4.lda.cp2k", "pseudos/Si-q4.lda.cp2k"),
    ];
    common::case_folder(&format!("bands-{tag}"), &files)
}

/// `path` is a PNG of `size` pixels with more than a few drawn (not white) ones.
fn assert_png(path: &Path, size: (u32, u32)) {
    let bytes = std::fs::read(path).unwrap();
    assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n", "{}", path.display());
    let dim = |at: usize| u32::from_be_bytes(bytes[at..at + 4].try_into().unwrap());
    assert_eq!((dim(16), dim(20)), size, "{}", path.display());
    // A blank 800 x 600 picture compresses to a few kB; the drawn one does not.
    assert!(
        bytes.len() > 20_000,
        "{}: {} bytes",
        path.display(),
        bytes.len()
    );
}

fn bands(dir: &Path, input: &str, args: &[&str]) -> std::process::Output {
    planewave(dir, &[&["bands", input], args].concat())
}

fn planewave(dir: &Path, args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_planewave"))
        .args(args)
        .current_dir(dir)
        .env("RAYON_NUM_THREADS", "2")
        .output()
        .unwrap()
}

#[test]
fn the_si_example_gives_its_band_structure_files() {
    let dir = folder("si");
    let out = bands(&dir, "si.toml", &[]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        stdout.contains("band structure: 67 k-points x 12 bands along L-G-X-U-K-G"),
        "{stdout}"
    );
    let text = std::fs::read_to_string(dir.join("si.bands.json")).unwrap();
    let doc: serde_json::Value = serde_json::from_str(&text).unwrap();
    let qe_text =
        std::fs::read_to_string(root().join("tests/data/post/si2_lda_gth/bands.json")).unwrap();
    let qe: serde_json::Value = serde_json::from_str(&qe_text).unwrap();
    assert_eq!(doc["kpoints_frac"].as_array().unwrap().len(), 67);
    assert_eq!(doc["labels"][3], serde_json::json!([44, "U"]));
    // The example's cutoff and grid are QE's (15 Ha); its SCF tolerance is looser.
    for key in ["vbm", "cbm"] {
        let (ours, theirs) = (
            doc[format!("{key}_ha")].as_f64().unwrap(),
            qe[format!("{key}_path_ha")].as_f64().unwrap(),
        );
        assert!(
            (ours - theirs).abs() < 2e-6,
            "{key}: {ours} against QE's {theirs}"
        );
    }
    assert_eq!(doc["gap_direct"], false);
    let svg = std::fs::read_to_string(dir.join("si.bands.svg")).unwrap();
    assert!(svg.starts_with("<svg") && svg.contains("Γ") && svg.contains("U|K"));
    assert_png(&dir.join("si.bands.png"), (800, 600));
    assert!(
        dir.join("si.json").exists(),
        "the SCF's results are written too"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn the_si_example_gives_its_density_of_states() {
    let dir = folder("dos");
    let out = planewave(&dir, &["dos", "si.toml"]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}");
    assert!(
        stdout.contains("density of states: 29 k-points (irreducible)"),
        "{stdout}"
    );
    let text = std::fs::read_to_string(dir.join("si.dos.json")).unwrap();
    let doc: serde_json::Value = serde_json::from_str(&text).unwrap();
    let energies: Vec<f64> = serde_json::from_value(doc["energy_ev"].clone()).unwrap();
    let n: Vec<Vec<f64>> = serde_json::from_value(doc["integrated"].clone()).unwrap();
    let vbm = doc["vbm_ev"].as_f64().unwrap();
    assert!((vbm - 6.0753).abs() < 1e-3, "{vbm}");
    // Eight valence electrons below the gap (half a width above the maximum), sixteen in all.
    let gap = energies.iter().position(|&e| e > vbm + 0.4).unwrap();
    assert!((n[0][gap] - 8.0).abs() < 0.01, "{}", n[0][gap]);
    assert!((n[0].last().unwrap() - 16.0).abs() < 1e-6);
    let svg = std::fs::read_to_string(dir.join("si.dos.svg")).unwrap();
    assert!(svg.starts_with("<svg") && svg.contains("density of states"));
    assert_png(&dir.join("si.dos.png"), (800, 500));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn the_density_cube_matches_quantum_espresso() {
    let dir = folder("cube");
    let text = std::fs::read_to_string(dir.join("si.toml")).unwrap();
    let text = text.replace("nbands = 8\n", "nbands = 8\nfft_grid = [32, 32, 32]\n")
        + "\n[output]\ndensity = [\"cube\", \"xsf\", \"chgcar\"]\n";
    std::fs::write(dir.join("si.toml"), text).unwrap();
    let out = planewave(&dir, &["run", "si.toml", "--checkpoint", "si.ckpt"]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}");
    assert!(
        stdout.contains("density written to si.density.cube, si.density.xsf, si.CHGCAR"),
        "{stdout}"
    );
    exports_the_same_files(&dir);
    let cube = std::fs::read_to_string(dir.join("si.density.cube")).unwrap();
    let lines: Vec<&str> = cube.lines().collect();
    let numbers =
        |l: &str| -> Vec<f64> { l.split_whitespace().map(|x| x.parse().unwrap()).collect() };
    assert_eq!(numbers(lines[2]), [2.0, 0.0, 0.0, 0.0]);
    assert_eq!(
        numbers(lines[3]),
        [32.0, 0.0, 0.160312, 0.160312],
        "as QE writes it"
    );
    assert_eq!(
        numbers(lines[7])[..2],
        [14.0, 4.0],
        "silicon, four valence electrons"
    );
    let values: Vec<f64> = lines[8..].iter().flat_map(|l| numbers(l)).collect();
    assert_eq!(values.len(), 32 * 32 * 32);
    let qe: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(root().join("tests/data/post/si2_lda_gth/cube.json")).unwrap(),
    )
    .unwrap();
    let dv = qe["voxel_volume_bohr3"].as_f64().unwrap();
    let electrons: f64 = values.iter().sum::<f64>() * dv;
    assert!((electrons - 8.0).abs() < 1e-8, "{electrons}");
    for p in qe["points"].as_array().unwrap() {
        let i: Vec<usize> = serde_json::from_value(p["index"].clone()).unwrap();
        let ours = values[(i[0] * 32 + i[1]) * 32 + i[2]];
        let theirs = p["value_e_per_bohr3"].as_f64().unwrap();
        assert!(
            (ours - theirs).abs() < 1e-6 * theirs.max(1e-2),
            "{}: {ours} against QE's {theirs}",
            p["name"]
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// `planewave export` writes from the run's checkpoint the files the run wrote, and refuses a
/// checkpoint of another cell.
fn exports_the_same_files(dir: &Path) {
    let names = ["si.density.cube", "si.density.xsf", "si.CHGCAR"];
    let written: Vec<String> = (names.iter())
        .map(|n| std::fs::read_to_string(dir.join(n)).unwrap())
        .collect();
    for n in names {
        std::fs::remove_file(dir.join(n)).unwrap();
    }
    let args = [
        "export",
        "si.toml",
        "--density",
        "cube,xsf,chgcar",
        "--from",
        "si.ckpt",
    ];
    let out = planewave(dir, &args);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    for (n, w) in names.iter().zip(&written) {
        assert!(std::fs::read_to_string(dir.join(n)).unwrap() == *w, "{n}");
    }
    let text = std::fs::read_to_string(dir.join("si.toml")).unwrap();
    std::fs::write(dir.join("other.toml"), text.replace("5.13", "5.2")).unwrap();
    let out = planewave(dir, &["export", "other.toml", "--from", "si.ckpt"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("of another input: the cell differs"), "{err}");
    // The local potential (Ha) and one band's |psi|^2: at self-consistency the integral of V rho
    // is the band energy less the kinetic and nonlocal ones, and the band holds one electron.
    let args = [
        "export",
        "si.toml",
        "--density",
        "cube",
        "--potential",
        "--orbital",
        "1,4",
    ];
    let out = planewave(dir, &args);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let read = |n: &str| common::cube_values(&std::fs::read_to_string(dir.join(n)).unwrap(), 2);
    let (rho, v, psi2) = (
        read("si.density.cube"),
        read("si.potential.cube"),
        read("si.orbital_k1_b4.cube"),
    );
    assert_eq!((v.len(), psi2.len()), (32 * 32 * 32, 32 * 32 * 32));
    let dv = 270.011394 / (32.0 * 32.0 * 32.0);
    let v_rho: f64 = dv * v.iter().zip(&rho).map(|(a, b)| a * b).sum::<f64>();
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("si.json")).unwrap()).unwrap();
    let rest = common::band_less_kinetic_and_nonlocal(&doc);
    assert!(
        (v_rho - rest).abs() < 1e-4,
        "int V rho = {v_rho} against {rest}"
    );
    assert!((psi2.iter().sum::<f64>() * dv - 1.0).abs() < 1e-4);
}

/// The Si example without its [bands] table.
fn without_path(tag: &str) -> (PathBuf, String) {
    let dir = folder(tag);
    let text = std::fs::read_to_string(dir.join("si.toml")).unwrap();
    let cut = text.find("\n[bands]").unwrap();
    (dir, text[..cut].to_string())
}

#[test]
fn an_input_without_a_path_gets_its_lattice_path() {
    let (dir, text) = without_path("auto");
    // A [bands] table without a path: the crystal's own, 20 points per 1/bohr, 10 bands.
    std::fs::write(
        dir.join("si.toml"),
        format!("{text}\n[bands]\nnbands = 10\ndensity = 20\n"),
    )
    .unwrap();
    let out = bands(&dir, "si.toml", &[]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stdout}\n{stderr}");
    assert!(
        stdout.contains("band path from the crystal's symmetry: Setyawan-Curtarolo (2010) FCC lattice, G-X-W-K-G-L-U-W-L-K|U-X"),
        "{stdout}"
    );
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("si.bands.json")).unwrap()).unwrap();
    assert_eq!(doc["path_source"]["lattice"], "FCC");
    let eigenvalues = doc["eigenvalues_ha"][0].as_array().unwrap();
    assert_eq!(eigenvalues[0].as_array().unwrap().len(), 10);
    // Γ to X is 2π/a = 0.612 1/bohr: 12 points at 20 per 1/bohr.
    assert_eq!(doc["labels"][1], serde_json::json!([12, "X"]));
    let labels: Vec<String> = (doc["labels"].as_array().unwrap().iter())
        .map(|l| l[1].as_str().unwrap().to_string())
        .collect();
    assert_eq!(labels.join(" "), "G X W K G L U W L K U X");
    // The valence maximum is at Γ, on this path as on QE's.
    let qe_text =
        std::fs::read_to_string(root().join("tests/data/post/si2_lda_gth/bands.json")).unwrap();
    let qe: serde_json::Value = serde_json::from_str(&qe_text).unwrap();
    let (ours, theirs) = (
        doc["vbm_ha"].as_f64().unwrap(),
        qe["vbm_path_ha"].as_f64().unwrap(),
    );
    assert!(
        (ours - theirs).abs() < 2e-6,
        "vbm {ours} against QE's {theirs}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_triclinic_crystal_gets_its_path_from_its_reduced_reciprocal_cell() {
    // Si's two atoms in a monoclinic cell leave only the triclinic symmetry; its reciprocal
    // cell has a right angle: TRI2b.
    let (dir, text) = without_path("tri");
    let start = text.find("lattice = [").unwrap();
    let end = start + text[start..].find("]]").unwrap() + 2;
    let cell = "lattice = [[7.0, 0.0, 0.0], [0.0, 8.0, 0.0], [1.5, 0.0, 9.0]]";
    std::fs::write(
        dir.join("si.toml"),
        format!(
            "{}{cell}{}\n[bands]\nnbands = 6\ndensity = 5\n",
            &text[..start],
            &text[end..]
        ),
    )
    .unwrap();
    let out = bands(&dir, "si.toml", &[]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stdout}\n{stderr}");
    assert!(
        stdout.contains("Setyawan-Curtarolo (2010) TRI2b lattice, X-G-Y|L-G-Z|N-G-M|R-G"),
        "{stdout}"
    );
    assert!(dir.join("si.bands.json").exists());
    let _ = std::fs::remove_dir_all(&dir);
}
