//! A density cutoff above 4 times the wavefunctions' (QE's `ecutrho`), against pw.x 6.7 on the
//! same input (tests/data/qe/si2_pbe_dojo_ecutrho: PseudoDojo Si with its core charge, one atom
//! moved, ecutrho = 8 ecutwfc): the density sphere holds QE's dense G-vectors, the bands go
//! through QE's smooth grid, and the energy, forces and stress agree to QE's printed digits. A TOML input's `ecut_rho` below 4 `ecut` is
//! refused by name.

mod common;

const DATA: &str = "tests/data/qe/si2_pbe_dojo_ecutrho";

#[test]
fn ecutrho_above_four_ecutwfc_gives_qe_s_energy_forces_and_stress() {
    let dir = common::case_folder(
        "ecutrho",
        &[
            (&format!("{DATA}/pw.in"), "pw.in"),
            ("tests/data/pseudos/Si.dojo.pbe.upf", "Si.dojo.pbe.upf"),
        ],
    );
    let log = common::ok(&common::run_in(&dir, "pw.in", &[]));
    assert!(log.contains("density 120 Ha"), "{log}");
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("pw.json")).unwrap()).unwrap();
    let qe = std::fs::read_to_string(format!(
        "{}/../../{DATA}/pw.out",
        env!("CARGO_MANIFEST_DIR")
    ))
    .unwrap();
    // QE: "Dense  grid:    16865 G-vectors     FFT dimensions: (  36,  36,  36)".
    assert!(qe.contains("Dense  grid:    16865 G-vectors"));
    assert!(log.contains("density G-vectors 16865"), "{log}");
    assert_eq!(doc["fft_grid"], serde_json::json!([36, 36, 36]));
    // The bands on QE's smooth grid: "Smooth grid: 5961 G-vectors FFT dimensions: (25, 25, 25)".
    assert!(qe.contains("FFT dimensions: (  25,  25,  25)"));
    assert_eq!(doc["band_fft_grid"], serde_json::json!([25, 25, 25]));
    assert!(
        log.contains("FFT grid 36x36x36 (bands on 25x25x25)"),
        "{log}"
    );
    assert_eq!(doc["ecut_rho_ha"], 120.0);

    let e_qe = common::numbers_after(&qe, "!    total energy")[0][0] / 2.0;
    let e = doc["total_energy_ha"].as_f64().unwrap();
    assert!((e - e_qe).abs() < 2e-8, "energy {e} Ha against QE's {e_qe}");

    let f_qe = common::numbers_after(&qe, "type  1   force =");
    let forces = doc["forces_ha_per_bohr"].as_array().unwrap();
    for (ours, theirs) in forces.iter().zip(&f_qe[..2]) {
        for (a, b) in ours.as_array().unwrap().iter().zip(theirs) {
            let a = a.as_f64().unwrap();
            assert!(
                (a - b / 2.0).abs() < 1e-7,
                "force {a} against QE's {}",
                b / 2.0
            );
        }
    }
    let s_qe = common::qe_stress(&qe);
    let stress = doc["stress_ha_per_bohr3"].as_array().unwrap();
    for (ours, theirs) in stress.iter().zip(&s_qe) {
        for (a, b) in ours.as_array().unwrap().iter().zip(theirs) {
            let a = a.as_f64().unwrap();
            assert!(
                (a - b / 2.0).abs() < 2e-8,
                "stress {a} against QE's {}",
                b / 2.0
            );
        }
    }
}
