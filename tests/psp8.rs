//! ABINIT psp8 pseudopotentials: Si diamond PBE with the PseudoDojo nc-sr-04 standard psp8
//! (tests/data/pseudos/Si.dojo.pbe.psp8) against ABINIT 9.6.2 on the same file
//! (tests/data/reference.json, si2_pbe_dojo's `abinit_total_energy_ha`; ABINIT's 27^3 grid).

use planewave::core::{input, scf, setup};
use std::path::PathBuf;

#[test]
fn si2_pbe_psp8_matches_abinit() {
    let data = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data");
    let text = std::fs::read_to_string(data.join("qe/si2_pbe_dojo/pw.in")).unwrap();
    let text = text
        .replace(
            "pseudo_dir='../../pseudos'",
            &format!("pseudo_dir='{}'", data.join("pseudos").display()),
        )
        .replace("Si.dojo.pbe.upf", "Si.dojo.pbe.psp8")
        .replace(
            "occupations='fixed',",
            "occupations='fixed', nr1=27, nr2=27, nr3=27,",
        );
    let dir = std::env::temp_dir().join(format!("planewave-psp8-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("pw.in");
    std::fs::write(&path, text).unwrap();
    let s = setup::build(input::load(&path).unwrap_or_else(|e| panic!("{e}"))).unwrap();
    let r = scf::run(&s.model, &s.basis, &s.params, |_| {}).expect("SCF runs");
    assert!(r.converged);
    let reference: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(data.join("reference.json")).unwrap())
            .unwrap();
    let abinit = reference["cases"]["si2_pbe_dojo"]["abinit_total_energy_ha"]
        .as_f64()
        .unwrap();
    let per_atom = (r.energies.total() - abinit).abs() / 2.0;
    assert!(
        per_atom < 1e-6,
        "psp8 {} Ha against ABINIT {abinit} Ha: {per_atom:e} Ha/atom",
        r.energies.total()
    );
    std::fs::remove_dir_all(&dir).ok();
}
