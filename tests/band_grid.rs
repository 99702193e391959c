//! The bands' own, smaller FFT grid (`wfc_grid`, QE's smooth grid) changes nothing but the
//! time: with `ecutrho > 4 ecutwfc` the bands go through the grid of the sphere of 4
//! ecutwfc, and the energies, eigenvalues, forces and stress equal those of the bands on the
//! density grid to rounding (1e-10; measured 1e-14) — ultrasoft silicon with k-points and at Γ (the real
//! path), and a norm-conserving file at `ecutrho = 8 ecutwfc`; a G-vector group, whose
//! transforms are on the density grid, agrees too.

mod common;

use planewave::comm::{Communicator, Solo, Threads};
use planewave::core::input::{self, RunSpec};
use planewave::core::{forces, scf, setup, stress};
use std::path::PathBuf;
use std::sync::Arc;

fn data(rel: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(rel)
}

/// The input of `case` (a folder under tests/data) with every species read from `pseudo`.
fn spec_of(case: &str, pseudo: &str) -> RunSpec {
    let mut spec = input::load(&data(&format!("{case}/pw.in"))).unwrap_or_else(|e| panic!("{e}"));
    for s in &mut spec.species {
        s.pseudo = data(pseudo);
    }
    spec
}

/// Energy, eigenvalues, forces and stress, and whether the bands had their own grid.
fn run(spec: RunSpec, world: Arc<dyn Communicator>, on_density_grid: bool) -> (Vec<f64>, bool) {
    let mut s = setup::build_on(spec, world).unwrap_or_else(|e| panic!("{e}"));
    if on_density_grid {
        s.basis.bands_on_density_grid(&s.model.crystal);
    }
    let own_grid = s.basis.wfc.is_some();
    let r = scf::run(&s.model, &s.basis, &s.params, |_| {}).expect("SCF runs");
    assert!(r.converged);
    let f = forces::compute(&s.model, &s.basis, &r);
    let st = stress::compute(&s.model, &s.basis, &r);
    let mut numbers = vec![r.energies.total()];
    numbers.extend(r.eigenvalues.iter().flatten().flatten());
    numbers.extend(f.total.iter().flatten());
    numbers.extend(st.total.iter().flatten());
    (numbers, own_grid)
}

fn same_on_both_grids(case: &str, pseudo: &str) {
    let (smooth, own) = run(spec_of(case, pseudo), Arc::new(Solo), false);
    let (dense, dense_own) = run(spec_of(case, pseudo), Arc::new(Solo), true);
    assert!(own && !dense_own, "{case}: the bands' grid was not smaller");
    let d = common::max_diff(&smooth, &dense);
    assert!(d < 1e-10, "{case}: {d:e} between the grids");
    assert!(
        (smooth[0] - dense[0]).abs() < 1e-9,
        "{case}: energies {} {}",
        smooth[0],
        dense[0]
    );
}

#[test]
fn ultrasoft_silicon_with_k_points_is_the_same_on_the_bands_grid() {
    same_on_both_grids(
        "uspp/si2_pbe_us_displaced",
        "uspp/Si.pbe-nl-rrkjus_psl.1.0.0.UPF",
    );
}

#[test]
fn the_gamma_real_path_and_a_norm_conserving_file_are_the_same_on_the_bands_grid() {
    same_on_both_grids(
        "uspp/si2_pbe_us_gamma",
        "uspp/Si.pbe-nl-rrkjus_psl.1.0.0.UPF",
    );
    same_on_both_grids("qe/si2_pbe_dojo_ecutrho", "pseudos/Si.dojo.pbe.upf");
}

#[test]
fn a_gvector_group_on_the_density_grid_agrees_with_the_bands_grid() {
    let case = (
        "uspp/si2_pbe_us_gamma",
        "uspp/Si.pbe-nl-rrkjus_psl.1.0.0.UPF",
    );
    let (serial, own) = run(spec_of(case.0, case.1), Arc::new(Solo), false);
    assert!(own);
    let all = Threads::run(2, |c| {
        let mut spec = spec_of(case.0, case.1);
        spec.parallel.kpoint_groups = Some(1);
        spec.parallel.band_groups = Some(1);
        run(spec, c.into_arc(), false)
    });
    for (rank, (numbers, own)) in all.iter().enumerate() {
        assert!(
            !own,
            "rank {rank}: a G-vector group's bands are on the density grid"
        );
        let d = common::max_diff(&serial, numbers);
        assert!(d < 1e-8, "rank {rank}: {d:e} from the serial run");
    }
}
