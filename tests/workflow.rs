//! The library's `workflow::run`, the calculation the CLI's `run` makes, on the README's Si
//! example (the same cell as the si2_lda_gth reference case): the SCF with its observer, the
//! forces and the stress, against Quantum ESPRESSO 6.7's numbers (tests/data/reference.json).

use planewave::core::scf::IterationInfo;
use planewave::core::{input, setup, workflow};
use std::path::PathBuf;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

#[test]
fn the_si_example_runs_through_the_library_workflow() {
    let text = std::fs::read_to_string(root().join("tests/data/reference.json")).unwrap();
    let reference: serde_json::Value = serde_json::from_str(&text).unwrap();
    let qe = &reference["cases"]["si2_lda_gth"];
    let s = setup::build(input::load(&root().join("examples/si.toml")).unwrap()).unwrap();
    let mut seen = 0;
    let c = workflow::run(&s, None, |_: &IterationInfo| seen += 1).unwrap();
    assert!(c.scf.converged);
    assert_eq!(seen, c.scf.iterations);

    let e_qe = qe["qe_total_energy_ha"].as_f64().unwrap();
    let e = c.scf.energies.total();
    assert!((e - e_qe).abs() < 2e-6, "{e} against QE's {e_qe}");
    let f = c.forces.as_ref().expect("forces by default");
    assert!(f.max_norm() < 1e-8, "{}", f.max_norm());
    let st = c.stress.as_ref().expect("stress by default");
    for (a, row) in st.total.iter().enumerate() {
        for (b, x) in row.iter().enumerate() {
            let r = qe["qe_stress_ha_bohr3"][a][b].as_f64().unwrap();
            assert!(
                (x - r).abs() < 1e-8,
                "stress[{a}][{b}] {x} against QE's {r}"
            );
        }
    }

    let doc = c.to_json(&s);
    assert_eq!(doc["total_energy_ha"].as_f64(), Some(e));
    assert_eq!(doc["pressure_ha_per_bohr3"].as_f64(), Some(st.pressure()));
    assert_eq!(doc["schema_version"], 1);
}
