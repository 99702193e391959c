//! A research code's use of planewave through ndarray: give silicon's structure as arrays (Å,
//! Cartesian), take the rest of the set-up (pseudopotential, cutoff, k-points) from an input,
//! run the SCF, then take the converged density and local potential as arrays and compute
//! what planewave does not: their planar averages over the lattice planes spanned by a1 and
//! a2, as functions of the height along a3, and the electron count from the density.
//!
//! Run with: cargo run --release --example planar_average [INPUT] (default examples/si.toml;
//! the input's species must include Si)

use ndarray::{array, Array1, ArrayView3, Axis};
use planewave::arrays::{self, LengthUnit, Positions, Structure};
use planewave::core::scf::IterationInfo;
use planewave::core::{input, setup, workflow};
use std::path::PathBuf;

/// Silicon's cubic lattice constant (Å).
const A: f64 = 5.431;

/// The diamond structure's primitive cell: rows a1, a2, a3 and the two atoms (Å, Cartesian).
fn silicon() -> Result<Structure, String> {
    let h = A / 2.0;
    let cell = array![[0.0, h, h], [h, 0.0, h], [h, h, 0.0]];
    let positions = array![[0.0, 0.0, 0.0], [A / 4.0, A / 4.0, A / 4.0]];
    Structure::from_arrays(
        cell.view(),
        LengthUnit::Angstrom,
        positions.view(),
        Positions::Cartesian,
    )
}

/// The mean of `field` over each plane k = const (spanned by a1 and a2), one value per k.
fn planar_average(field: ArrayView3<'_, f64>) -> Array1<f64> {
    let per_row = field.mean_axis(Axis(0)).expect("a non-empty grid");
    per_row.mean_axis(Axis(0)).expect("a non-empty grid")
}

/// The distance between the planes spanned by a1 and a2 one a3 apart: volume / |a1 × a2|.
fn plane_spacing(lattice: &[[f64; 3]; 3], volume: f64) -> f64 {
    let (a, b) = (lattice[0], lattice[1]);
    let n = [
        a[1] * b[2] - a[2] * b[1],
        a[2] * b[0] - a[0] * b[2],
        a[0] * b[1] - a[1] * b[0],
    ];
    volume / n.iter().map(|x| x * x).sum::<f64>().sqrt()
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let path = std::env::args_os().nth(1).map_or_else(
        || PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("examples/si.toml"),
        PathBuf::from,
    );
    let mut spec = input::load(&path)?;
    silicon()?.set_in(&mut spec, &["Si", "Si"])?;
    let s = setup::build(spec)?;
    let c = workflow::run(&s, None, |_: &IterationInfo| {})?;
    println!(
        "Si2, a = {A} Å: {} SCF iterations, total energy {:.8} Ha",
        c.scf.iterations,
        c.scf.energies.total()
    );

    // The total density (all spin channels) and the potential of the first channel.
    let rho = (0..s.model.nspin())
        .map(|sp| arrays::density(&s.basis, &c.scf.density, sp).to_owned())
        .reduce(|a, b| a + b)
        .expect("one spin channel at least");
    let v = arrays::potential(&s.model, &s.basis, &s.params, &c.scf.density)?.remove(0);

    let electrons = rho.sum() * s.basis.dv();
    println!(
        "electrons from the density: {electrons:.10} (the model has {})",
        s.model.n_electrons
    );
    assert!((electrons - s.model.n_electrons).abs() < 1e-8);

    let (rho_z, v_z) = (planar_average(rho.view()), planar_average(v.view()));
    let n3 = rho_z.len();
    let dz = plane_spacing(&s.model.crystal.lattice, s.model.crystal.volume) / n3 as f64;
    println!("planar averages over the a1-a2 planes ({n3} planes along a3):");
    println!(
        "  {:>9} {:>14} {:>12}",
        "z (bohr)", "rho (e/bohr^3)", "V (Ha)"
    );
    for k in (0..n3).step_by(n3.div_ceil(8)) {
        println!("  {:9.4} {:14.8} {:12.6}", k as f64 * dz, rho_z[k], v_z[k]);
    }
    let (vmin, vmax) = v_z
        .iter()
        .fold((f64::MAX, f64::MIN), |(lo, hi), &x| (lo.min(x), hi.max(x)));
    println!(
        "potential: cell average {:.6} Ha, planar average from {vmin:.6} to {vmax:.6} Ha",
        v.mean().expect("a non-empty grid")
    );
    Ok(())
}
