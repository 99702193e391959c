//! A user-chosen FFT grid (QE `nr1, nr2, nr3`, TOML `[basis] fft_grid`): used as given when it
//! holds the density sphere, refused with the minimum when it does not.

use planewave::core::{input, scf, setup};
use std::path::{Path, PathBuf};

fn si2_with(system_extra: &str, dir: &Path) -> PathBuf {
    let data = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data");
    let text = std::fs::read_to_string(data.join("qe/si2_lda_gth/pw.in")).expect("input");
    let pseudo = data.join("pseudos/gth");
    let text = text
        .replace(
            "pseudo_dir='../../pseudos/gth'",
            &format!("pseudo_dir='{}'", pseudo.display()),
        )
        .replace("nbnd=8,", &format!("nbnd=8, {system_extra}"));
    std::fs::create_dir_all(dir).unwrap();
    let path = dir.join("pw.in");
    std::fs::write(&path, text).unwrap();
    path
}

fn scratch(name: &str) -> PathBuf {
    std::env::temp_dir().join(format!("planewave-fft-grid-{}-{name}", std::process::id()))
}

#[test]
fn a_user_grid_is_used_and_changes_nothing_physical() {
    let dir = scratch("ok");
    let default = setup::build(input::load(&si2_with("", &dir)).unwrap()).unwrap();
    let dims = default.basis.grid.dims;
    let bigger = [dims[0] + 4, dims[1] + 4, dims[2] + 4];
    let extra = format!("nr1={}, nr2={}, nr3={},", bigger[0], bigger[1], bigger[2]);
    let user = setup::build(input::load(&si2_with(&extra, &dir)).unwrap()).unwrap();
    assert_eq!(user.basis.grid.dims, bigger);
    let e = |s: &setup::Setup| {
        scf::run(&s.model, &s.basis, &s.params, |_| {})
            .unwrap()
            .energies
            .total()
    };
    let (e0, e1) = (e(&default), e(&user));
    // A finer grid only refines the XC quadrature (LDA): micro-Hartree at most.
    assert!((e0 - e1).abs() < 1e-6, "{e0} vs {e1}");
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn a_grid_too_small_or_incomplete_is_refused() {
    let dir = scratch("bad");
    let small = match setup::build(input::load(&si2_with("nr1=12, nr2=12, nr3=12,", &dir)).unwrap())
    {
        Ok(_) => panic!("a 12^3 grid cannot hold the density sphere"),
        Err(e) => e.to_string(),
    };
    assert!(
        small.contains("nr1") && small.contains("at least"),
        "{small}"
    );
    let partial = input::load(&si2_with("nr1=36,", &dir))
        .expect_err("nr1 alone is refused")
        .to_string();
    assert!(partial.contains("together"), "{partial}");
    let huge = match setup::build(
        input::load(&si2_with("nr1=20000, nr2=20000, nr3=20000,", &dir)).unwrap(),
    ) {
        Ok(_) => panic!("a 20000^3 grid does not fit in memory"),
        Err(e) => e.to_string(),
    };
    assert!(huge.contains("nr1") && huge.contains("GiB"), "{huge}");
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn qe_grid_given_as_nr1_nr2_nr3_reproduces_qe() {
    // fcc Al (GTH LDA) at ecutwfc = 15 Ry: QE 6.7 picks a 15^3 grid where planewave's own choice
    // is 14^3. With QE's grid given as nr1..3, planewave uses it; QE 6.7 (pw.x run by hand on
    // this input without the nr keys) gives -4.20004223 Ry with its 15^3 grid.
    let input = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/fft_grid/al1_lda_gth_15ry_qe_grid.in");
    let s = setup::build(input::load(&input).unwrap()).unwrap();
    assert_eq!(s.basis.grid.dims, [15, 15, 15]);
    let r = scf::run(&s.model, &s.basis, &s.params, |_| {}).unwrap();
    let e_qe = -4.200_042_23 / 2.0;
    let de = (r.energies.total() - e_qe).abs();
    assert!(
        de < 1e-6,
        "E = {} vs QE {e_qe} ({de:.1e} Ha)",
        r.energies.total()
    );
}
