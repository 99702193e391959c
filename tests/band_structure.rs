//! Band structures with the SCF density held fixed (`band_structure::compute`), against
//! Quantum ESPRESSO 6.7's `calculation = 'bands'` on the si2_lda_gth reference SCF: 67 k-points
//! along L-Γ-X-U|K-Γ, 12 bands (tests/data/post/si2_lda_gth/bands.json; the path is the
//! crystal_b list of its `bands_pw.in`); the same bands without symmetry and with collinear spin;
//! and PAW diamond's bands at its own SCF k-points equal to the SCF's (the fixed-density step
//! keeps the SCF's one-centre band sums).

use planewave::core::input::{BandsSpec, PathVertex};
use planewave::core::scf::IterationInfo;
use planewave::core::{band_structure, input, setup, workflow};
use std::path::PathBuf;

fn data(rel: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(rel)
}

/// QE's crystal_b path of the reference run.
fn qe_path() -> BandsSpec {
    let v = |label: &str, k: [f64; 3], points| PathVertex {
        label: label.into(),
        k,
        points,
    };
    BandsSpec {
        path: vec![
            v("L", [0.5, 0.5, 0.5], 17),
            v("Γ", [0.0; 3], 20),
            v("X", [0.5, 0.0, 0.5], 7),
            v("U", [0.625, 0.25, 0.625], 1),
            v("K", [0.375, 0.375, 0.75], 21),
            v("Γ", [0.0; 3], 1),
        ],
        nbands: Some(12),
        density: None,
    }
}

#[test]
fn si2_bands_match_quantum_espresso() {
    let text = std::fs::read_to_string(data("post/si2_lda_gth/bands.json")).unwrap();
    let qe: serde_json::Value = serde_json::from_str(&text).unwrap();
    let qe_k: Vec<[f64; 3]> = serde_json::from_value(qe["kpoints_frac"].clone()).unwrap();
    let want: Vec<Vec<Vec<f64>>> = serde_json::from_value(qe["eigenvalues_ha"].clone()).unwrap();
    let labels: Vec<(usize, String)> = serde_json::from_value(qe["labels"].clone()).unwrap();

    let path = qe_path().kpoints();
    assert_eq!(path.labels, labels);
    assert_eq!(path.kpoints.len(), qe_k.len());
    for (a, b) in path.kpoints.iter().zip(&qe_k) {
        assert!(
            (0..3).all(|d| (a[d] - b[d]).abs() < 1e-8),
            "{a:?} against QE's {b:?}"
        );
    }

    let s = setup::build(input::load(&data("qe/si2_lda_gth/pw.in")).unwrap()).unwrap();
    let c = workflow::run(&s, None, |_: &IterationInfo| {}).unwrap();
    let b = band_structure::compute(&s, &c.scf, &path.kpoints, Some(12)).unwrap();
    assert!(b.converged, "{} iterations", b.iterations);
    assert_eq!(b.eigenvalues.len(), 1);
    let mut worst = (0.0, 0, 0);
    for (k, (got, qe)) in b.eigenvalues[0].iter().zip(&want[0]).enumerate() {
        assert_eq!(got.len(), 12);
        for (n, (e, r)) in got.iter().zip(qe).enumerate() {
            if (e - r).abs() > worst.0 {
                worst = ((e - r).abs(), k, n);
            }
        }
    }
    println!(
        "largest difference from QE: {:.2e} Ha (k {}, band {})",
        worst.0, worst.1, worst.2
    );
    assert!(worst.0 < 5e-7, "{worst:?}");

    let edges = b.edges().expect("silicon has a gap");
    let (vbm, cbm) = (
        qe["vbm_path_ha"].as_f64().unwrap(),
        qe["cbm_path_ha"].as_f64().unwrap(),
    );
    assert!((edges.vbm.0 - vbm).abs() < 5e-7 && (edges.cbm.0 - cbm).abs() < 5e-7);
    assert!(
        [17, 66].contains(&edges.vbm.1),
        "the valence maximum is at Γ"
    );
    let doc = b.to_json(&s.model.crystal.recip, &path);
    let d = doc["distance_inv_bohr"].as_array().unwrap();
    assert_eq!(d[44], d[45], "no length across the U|K jump");
    assert!((doc["gap_ev"].as_f64().unwrap() - (cbm - vbm) * 27.211386245988).abs() < 2e-5);
}

/// The reference SCF with `change` applied, then its bands at every sixth point of QE's path
/// compared with QE's (every spin channel, 12 bands): (channels, largest difference in Ha).
fn bands_against_qe(change: impl Fn(&mut input::RunSpec)) -> (usize, f64) {
    let text = std::fs::read_to_string(data("post/si2_lda_gth/bands.json")).unwrap();
    let qe: serde_json::Value = serde_json::from_str(&text).unwrap();
    let want: Vec<Vec<Vec<f64>>> = serde_json::from_value(qe["eigenvalues_ha"].clone()).unwrap();
    let mut spec = input::load(&data("qe/si2_lda_gth/pw.in")).unwrap();
    change(&mut spec);
    let s = setup::build(spec).unwrap();
    let c = workflow::run(&s, None, |_: &IterationInfo| {}).unwrap();
    let path = qe_path().kpoints();
    let picked: Vec<usize> = (0..path.kpoints.len()).step_by(6).collect();
    let ks: Vec<[f64; 3]> = picked.iter().map(|&i| path.kpoints[i]).collect();
    let b = band_structure::compute(&s, &c.scf, &ks, Some(12)).unwrap();
    assert!(b.converged);
    let mut worst: f64 = 0.0;
    for channel in &b.eigenvalues {
        for (got, &i) in channel.iter().zip(&picked) {
            for (e, r) in got.iter().zip(&want[0][i]) {
                worst = worst.max((e - r).abs());
            }
        }
    }
    (b.eigenvalues.len(), worst)
}

#[test]
fn si2_bands_without_symmetry_and_with_spin_are_the_same() {
    // Without symmetry: the SCF on all 64 k-points of the grid, one channel.
    let (channels, worst) = bands_against_qe(|s| s.use_symmetry = false);
    println!("without symmetry: {worst:.2e} Ha from QE");
    assert!(
        channels == 1 && worst < 1e-6,
        "{channels} channels, {worst:e} Ha from QE"
    );
    // Collinear spin with no moment: two channels, each the unpolarised bands.
    let (channels, worst) = bands_against_qe(|s| {
        s.spin = input::Spin::Collinear {
            starting_magnetization: vec![0.0; s.atoms.len()],
            total_magnetization: Some(0.0),
        }
    });
    println!("collinear spin: {worst:.2e} Ha from QE");
    assert!(
        channels == 2 && worst < 1e-6,
        "{channels} channels, {worst:e} Ha from QE"
    );
}

#[test]
fn paw_bands_at_the_scf_k_points_repeat_the_scf_eigenvalues() {
    // A folder with the input and its pseudopotential (the input reads it from `./`).
    let dir = std::env::temp_dir().join(format!("planewave-paw-bands-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let pseudo = "C.pbe-n-kjpaw_psl.0.1.UPF";
    std::fs::copy(data("uspp/c2_pbe_paw/pw.in"), dir.join("pw.in")).unwrap();
    std::fs::copy(data(&format!("uspp/{pseudo}")), dir.join(pseudo)).unwrap();
    let s = setup::build(input::load(&dir.join("pw.in")).unwrap()).unwrap();
    let c = workflow::run(&s, None, |_: &IterationInfo| {}).unwrap();
    let ks: Vec<[f64; 3]> = s.basis.kpoints.iter().map(|k| k.frac).collect();
    let b = band_structure::compute(&s, &c.scf, &ks, None).unwrap();
    assert!(b.converged, "{} iterations", b.iterations);
    for (k, (ours, scf)) in b.eigenvalues[0]
        .iter()
        .zip(&c.scf.eigenvalues[0])
        .enumerate()
    {
        for (a, e) in ours.iter().zip(scf) {
            assert!((a - e).abs() < 1e-6, "k {k}: {a} against the SCF's {e}");
        }
    }
    let _ = std::fs::remove_dir_all(dir);
}
