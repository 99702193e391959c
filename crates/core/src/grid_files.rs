//! Fields on the FFT grid as the files viewers read: Gaussian cube (VESTA, Ovito, ASE, VMD;
//! QE pp.x `output_format = 6`), XCrySDen XSF (`output_format = 5`) and VASP CHGCAR.
//!
//! Contract: [`on_grid`] gives a real field from its density-sphere coefficients at every
//! point of the basis' FFT grid, whole on every rank (gathered, then one serial transform;
//! collective on the G-vector group), in the grid's flat order: the third index fastest;
//! [`orbital_on_grid`] gives |psi|² of one band there (serial).
//! The writers take such values (electrons/bohr³) and give the file's text, ten significant
//! digits:
//! - [`cube`]: bohr; origin 0, the voxel vectors a_i/n_i, each atom's atomic number and valence
//!   charge; the values third index fastest, six a line, a new line for every row;
//! - [`xsf`]: Å; the cell, the atoms, one periodic data grid of n_i + 1 points a side (the
//!   last plane repeats the first), first index fastest; values in electrons/bohr³ as pp.x's;
//! - [`chgcar`]: Å; a POSCAR (atoms grouped by species), then the values times the cell volume
//!   in Å³, first index fastest, five a line; a second field (the spin density) follows as
//!   VASP writes the magnetisation.

use std::fmt::Write as _;

use num_complex::Complex64;

use crate::bands::BandScalar;
use crate::basis::{Basis, Kpoint};
use crate::density::Density;
use crate::input::units::ANGSTROM_PER_BOHR;
use crate::model::Model;
use crate::pseudo::atomic_number;
use crate::scf::{Engine, ScfParams};
use planewave_linalg::Mat;

/// The field of this rank's density-sphere entries `local_g` at every FFT grid point.
/// Collective on the G-vector group.
pub fn on_grid(basis: &Basis, local_g: &[Complex64]) -> Vec<f64> {
    let whole = basis.rho_gather(local_g);
    let mut grid = vec![Complex64::default(); basis.grid.len()];
    for (m, c) in basis.rho_global_millers().iter().zip(&whole) {
        grid[basis.grid.index_of(*m)] = *c;
    }
    basis.fft.backward(&mut grid);
    grid.iter().map(|z| z.re).collect()
}

/// The local potential V_loc + V_H + V_xc (Ha) of the density `density_g` (this rank's
/// density-sphere entries per spin) at every FFT grid point, per spin channel, with `params`'
/// functional settings. Serial (one rank holds the whole grid).
pub fn potential_on_grid(
    model: &Model,
    basis: &Basis,
    params: &ScfParams,
    density_g: Vec<Vec<Complex64>>,
) -> Result<Vec<Vec<f64>>, String> {
    let engine = Engine::<Complex64>::new(model, basis, params)?;
    let rho = Density::from_g(basis, density_g);
    Ok(engine.local_potential(&rho))
}

/// |psi|² of band `band` of `psi` (the bands of `kpt` as columns, whole on this rank) at every
/// FFT grid point, in 1/bohr³: the density of one electron in that state (its grid sum times
/// the voxel volume is 1). Serial: the band's plane waves must all be on this rank.
pub fn orbital_on_grid<T: BandScalar>(
    basis: &Basis,
    kpt: &Kpoint,
    psi: &Mat<T>,
    band: usize,
) -> Vec<f64> {
    let mut weights = vec![0.0; psi.ncols()];
    weights[band] = 1.0;
    let mut acc = vec![0.0; basis.band_grid_len()];
    T::add_density(kpt, basis.band_fft(), psi, &weights, &mut acc);
    acc.iter_mut().for_each(|x| *x /= basis.volume);
    if basis.wfc.is_none() {
        return acc;
    }
    // Through the density sphere onto the density grid: exact for |psi|^2, up to rounding,
    // which may leave a point at -1e-18.
    let g = basis.band_fields_to_sphere(&[&acc]);
    basis
        .rho_to_real(&g[0])
        .into_iter()
        .map(|x| x.max(0.0))
        .collect()
}

/// Each atom's atomic number (0 when the symbol is not an element's) and Cartesian position
/// (bohr).
fn atoms(model: &Model) -> Vec<(usize, [f64; 3])> {
    let lattice = &model.crystal.lattice;
    let z = |s: usize| {
        let species = &model.species[s];
        atomic_number(&species.pseudo.symbol)
            .or_else(|| atomic_number(&species.symbol))
            .unwrap_or(0)
    };
    model
        .crystal
        .atoms
        .iter()
        .map(|a| {
            let r = [0, 1, 2].map(|c| (0..3).map(|i| a.frac[i] * lattice[i][c]).sum::<f64>());
            (z(a.species), r)
        })
        .collect()
}

/// `values` in the grid's order re-read first index fastest (XSF, CHGCAR), `closed`: with the
/// periodic repeat of the first point along each direction.
fn first_index_fastest(dims: [usize; 3], values: &[f64], closed: bool) -> Vec<f64> {
    let extra = usize::from(closed);
    let mut out = Vec::with_capacity((dims[0] + extra) * (dims[1] + extra) * (dims[2] + extra));
    for k in 0..dims[2] + extra {
        for j in 0..dims[1] + extra {
            for i in 0..dims[0] + extra {
                let (i, j, k) = (i % dims[0], j % dims[1], k % dims[2]);
                out.push(values[(i * dims[1] + j) * dims[2] + k]);
            }
        }
    }
    out
}

/// `values` written `per_line` to a line.
fn columns(out: &mut String, values: &[f64], per_line: usize) {
    for line in values.chunks(per_line) {
        let cells: Vec<String> = line.iter().map(|x| format!("{x:17.9E}")).collect();
        out.push_str(&cells.join(" "));
        out.push('\n');
    }
}

/// The Gaussian cube text of `values` on `basis`' grid, with two comment lines.
pub fn cube(model: &Model, basis: &Basis, (title, what): (&str, &str), values: &[f64]) -> String {
    let dims = basis.grid.dims;
    let atoms = atoms(model);
    let mut out = format!("{title}\n{what}\n");
    let _ = writeln!(
        out,
        "{:5} {:12.6} {:12.6} {:12.6}",
        atoms.len(),
        0.0,
        0.0,
        0.0
    );
    for (n, a) in dims.iter().zip(&model.crystal.lattice) {
        let v = a.map(|x| x / *n as f64);
        let _ = writeln!(out, "{n:5} {:12.6} {:12.6} {:12.6}", v[0], v[1], v[2]);
    }
    for ((z, r), atom) in atoms.iter().zip(&model.crystal.atoms) {
        let zv = model.species[atom.species].pseudo.z_valence;
        let _ = writeln!(
            out,
            "{z:5} {zv:12.6} {:12.6} {:12.6} {:12.6}",
            r[0], r[1], r[2]
        );
    }
    for row in values.chunks(dims[2]) {
        columns(&mut out, row, 6);
    }
    out
}

/// The XSF text of `values` on `basis`' grid, the data block named `name`.
pub fn xsf(model: &Model, basis: &Basis, name: &str, values: &[f64]) -> String {
    let to_a = |v: [f64; 3]| v.map(|x| x * ANGSTROM_PER_BOHR);
    let vector = |v: [f64; 3]| format!("{:16.10} {:16.10} {:16.10}\n", v[0], v[1], v[2]);
    let atoms = atoms(model);
    let mut out = String::from("CRYSTAL\nPRIMVEC\n");
    for a in &model.crystal.lattice {
        out.push_str(&vector(to_a(*a)));
    }
    let _ = writeln!(out, "PRIMCOORD\n{} 1", atoms.len());
    for (z, r) in &atoms {
        let _ = write!(out, "{z:4} {}", vector(to_a(*r)));
    }
    let dims = basis.grid.dims;
    let _ = writeln!(
        out,
        "BEGIN_BLOCK_DATAGRID_3D\n{name}\nBEGIN_DATAGRID_3D_{name}"
    );
    let _ = writeln!(out, "{} {} {}", dims[0] + 1, dims[1] + 1, dims[2] + 1);
    out.push_str(&vector([0.0; 3]));
    for a in &model.crystal.lattice {
        out.push_str(&vector(to_a(*a)));
    }
    columns(&mut out, &first_index_fastest(dims, values, true), 6);
    out.push_str("END_DATAGRID_3D\nEND_BLOCK_DATAGRID_3D\n");
    out
}

/// The CHGCAR text of the density `values` (and `spin`, when given) on `basis`' grid.
pub fn chgcar(
    model: &Model,
    basis: &Basis,
    title: &str,
    values: &[f64],
    spin: Option<&[f64]>,
) -> String {
    let crystal = &model.crystal;
    let mut out = format!("{title}\n   1.0\n");
    for a in &crystal.lattice {
        let a = a.map(|x| x * ANGSTROM_PER_BOHR);
        let _ = writeln!(out, " {:14.8} {:14.8} {:14.8}", a[0], a[1], a[2]);
    }
    let count = |s: usize| crystal.atoms.iter().filter(|a| a.species == s).count();
    let order: Vec<usize> = (0..model.species.len()).filter(|&s| count(s) > 0).collect();
    let names: Vec<&str> = order
        .iter()
        .map(|&s| model.species[s].pseudo.symbol.as_str())
        .collect();
    let counts: Vec<String> = order.iter().map(|&s| count(s).to_string()).collect();
    let _ = writeln!(
        out,
        "   {}\n   {}\nDirect",
        names.join("   "),
        counts.join("   ")
    );
    for &s in &order {
        for a in crystal.atoms.iter().filter(|a| a.species == s) {
            let _ = writeln!(
                out,
                " {:12.8} {:12.8} {:12.8}",
                a.frac[0], a.frac[1], a.frac[2]
            );
        }
    }
    let dims = basis.grid.dims;
    // rho (electrons/bohr^3) times the volume (bohr^3): the same number as VASP's e/A^3 x A^3.
    let scale = crystal.volume;
    for field in std::iter::once(values).chain(spin) {
        let _ = writeln!(out, "\n {} {} {}", dims[0], dims[1], dims[2]);
        let times_volume: Vec<f64> = first_index_fastest(dims, field, false)
            .iter()
            .map(|x| x * scale)
            .collect();
        columns(&mut out, &times_volume, 5);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grids_are_reordered_first_index_fastest_and_closed() {
        let dims = [2, 3, 4];
        let values: Vec<f64> = (0..24).map(f64::from).collect();
        let open = first_index_fastest(dims, &values, false);
        // Point (i, j, k) is at (i * 3 + j) * 4 + k in the grid's order, at (k * 3 + j) * 2 + i here.
        for (i, j, k) in [(1, 0, 0), (0, 1, 0), (0, 0, 1), (1, 2, 3)] {
            assert_eq!(open[(k * 3 + j) * 2 + i], values[(i * 3 + j) * 4 + k]);
        }
        let closed = first_index_fastest(dims, &values, true);
        assert_eq!(closed.len(), 3 * 4 * 5);
        assert_eq!(closed[2], closed[0], "the repeat of i = 0 ends each row");
        let mut text = String::new();
        columns(&mut text, &open, 5);
        assert_eq!(text.lines().count(), 5);
        assert_eq!(
            text.split_whitespace()
                .nth(6)
                .map(|x| x.parse::<f64>().unwrap()),
            Some(open[6])
        );
    }
}
