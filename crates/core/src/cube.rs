//! Gaussian cube files of fields on the FFT grid, the format VESTA, Ovito, ASE, VMD and QE's
//! pp.x (`output_format = 6`) share.
//!
//! Contract: [`on_grid`] gives a real field from its density-sphere coefficients at every
//! point of the basis' FFT grid, whole on every rank (gathered, then one serial transform;
//! collective on the G-vector group), in the grid's flat order, which is the cube's: the third
//! index fastest. [`write`] writes the header (origin at 0, the voxel vectors a_i/n_i and the
//! atoms in bohr, each atom's atomic number and valence charge) and the values, six per
//! line, with ten significant digits.

use std::fmt::Write as _;
use std::path::Path;

use num_complex::Complex64;
use planewave_fft::Fft3d;

use crate::basis::Basis;
use crate::model::Model;
use crate::pseudo::atomic_number;

/// The field of this rank's density-sphere entries `local_g` at every FFT grid point.
/// Collective on the G-vector group.
pub fn on_grid(basis: &Basis, local_g: &[Complex64]) -> Vec<f64> {
    let whole = basis.rho_gather(local_g);
    let mut grid = vec![Complex64::default(); basis.grid.len()];
    for (m, c) in basis.rho_global_millers().iter().zip(&whole) {
        grid[basis.grid.index_of(*m)] = *c;
    }
    Fft3d::new(basis.grid).backward(&mut grid);
    grid.iter().map(|z| z.re).collect()
}

/// The cube file text of `values` (on `basis`' grid) for `model`'s cell and atoms.
pub fn text(model: &Model, basis: &Basis, title: &str, what: &str, values: &[f64]) -> String {
    let crystal = &model.crystal;
    let dims = basis.grid.dims;
    let mut out = format!("{title}\n{what}\n");
    let _ = writeln!(
        out,
        "{:5} {:12.6} {:12.6} {:12.6}",
        crystal.atoms.len(),
        0.0,
        0.0,
        0.0
    );
    for (n, a) in dims.iter().zip(&crystal.lattice) {
        let v = a.map(|x| x / *n as f64);
        let _ = writeln!(out, "{n:5} {:12.6} {:12.6} {:12.6}", v[0], v[1], v[2]);
    }
    for atom in &crystal.atoms {
        let species = &model.species[atom.species];
        let z = atomic_number(&species.pseudo.symbol)
            .or_else(|| atomic_number(&species.symbol))
            .unwrap_or(0);
        let r = [0, 1, 2].map(|c| {
            (0..3)
                .map(|i| atom.frac[i] * crystal.lattice[i][c])
                .sum::<f64>()
        });
        let zv = species.pseudo.z_valence;
        let _ = writeln!(
            out,
            "{z:5} {zv:12.6} {:12.6} {:12.6} {:12.6}",
            r[0], r[1], r[2]
        );
    }
    for line in values.chunks(dims[2]).flat_map(|row| row.chunks(6)) {
        let cells: Vec<String> = line.iter().map(|x| format!("{x:17.9E}")).collect();
        out.push_str(&cells.join(" "));
        out.push('\n');
    }
    out
}

/// Write [`text`] to `path`.
pub fn write(
    path: &Path,
    (model, basis): (&Model, &Basis),
    (title, what): (&str, &str),
    values: &[f64],
) -> std::io::Result<()> {
    std::fs::write(path, text(model, basis, title, what, values))
}
