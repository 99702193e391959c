//! Results and structures as [`ndarray`] arrays: the boundary a research code works across.
//!
//! Contract: Hartree atomic units (Ha, bohr) throughout, and the crate's own orders:
//! - grid fields ([`density`], [`potential`]) have the shape [`grid_shape`] `(n1, n2, n3)`:
//!   element `[i, j, k]` is the point at fractional position `(i/n1, j/n2, k/n3)` along a1,
//!   a2, a3, in C order (`k` fastest, the order of `Density::r`); one array per spin channel;
//! - per-band values ([`eigenvalues`], [`occupations`]) are indexed `[spin, k, band]` over
//!   the basis' k-points (the irreducible set when symmetry reduced them);
//! - [`forces`] is natoms × 3 (Ha/bohr), [`stress`] 3 × 3 (Ha/bohr³), both Cartesian;
//! - [`band_coefficients`] is npw × nbands (complex), rows in `Kpoint::millers` order.
//!
//! Views or copies: [`density`] (when the grid is whole on this rank, always for one process),
//! [`forces`], [`stress`] and [`band`] borrow the result without copying. [`density`] of a
//! grid dealt over a G-vector group (gathered, collective), [`potential`] (computed),
//! [`eigenvalues`], [`occupations`] (nested `Vec`s) and [`band_coefficients`] (faer pads each
//! column to an alignment, so a band matrix is not one slice) are copies.
//!
//! The other way, [`Structure::from_arrays`] reads a cell (rows a1, a2, a3) and positions
//! (natoms × 3) in the units it is told, for a [`Crystal`] built in code
//! ([`Structure::crystal`]) or an input's structure ([`Structure::set_in`], then
//! `setup::build`).

use ndarray::{Array2, Array3, ArrayView1, ArrayView2, ArrayView3, CowArray, Ix3};
use num_complex::Complex64;
use planewave_core::basis::Basis;
use planewave_core::crystal::{Atom, Crystal};
use planewave_core::density::Density;
use planewave_core::forces::Forces;
use planewave_core::input::{AtomSpec, RunSpec};
use planewave_core::model::Model;
use planewave_core::scf::{Engine, ScfParams, ScfResult, Wavefunctions};
use planewave_core::stress::Stress;
use std::f64::consts::{PI, SQRT_2};

pub use planewave_core::input::units::LengthUnit;

/// How [`Structure::from_arrays`] reads the positions.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Positions {
    /// Fractional coordinates along a1, a2, a3.
    Fractional,
    /// Cartesian coordinates, in the cell's length unit.
    Cartesian,
}

/// A cell and its atoms in the crate's units: lattice rows in bohr, fractional positions.
#[derive(Clone, Debug, PartialEq)]
pub struct Structure {
    /// Rows a1, a2, a3 (bohr).
    pub lattice: [[f64; 3]; 3],
    /// Each atom's fractional position along a1, a2, a3.
    pub frac: Vec<[f64; 3]>,
}

impl Structure {
    /// From `cell` (3 × 3, rows a1, a2, a3, in `unit`) and `positions` (natoms × 3, read as
    /// `kind` says; Cartesian ones in `unit` too). Fails on other shapes, values that are not
    /// finite, or a singular cell.
    pub fn from_arrays(
        cell: ArrayView2<'_, f64>,
        unit: LengthUnit,
        positions: ArrayView2<'_, f64>,
        kind: Positions,
    ) -> Result<Self, String> {
        check_array("cell", cell, Some(3))?;
        check_array("positions", positions, None)?;
        let lattice = [0, 1, 2].map(|i| [0, 1, 2].map(|j| unit.to_bohr(cell[[i, j]])));
        let recip = Crystal::new(lattice, Vec::new())?.recip;
        let to_frac = |r: [f64; 3]| match kind {
            Positions::Fractional => r,
            Positions::Cartesian => {
                recip.map(|b| (0..3).map(|j| unit.to_bohr(r[j]) * b[j]).sum::<f64>() / (2.0 * PI))
            }
        };
        let frac = positions
            .rows()
            .into_iter()
            .map(|r| to_frac([r[0], r[1], r[2]]));
        Ok(Self {
            lattice,
            frac: frac.collect(),
        })
    }

    /// The crystal with atom `i` of species `species[i]` (an index into the model's species).
    pub fn crystal(&self, species: &[usize]) -> Result<Crystal, String> {
        self.check_count(species.len())?;
        let atoms = (self.frac.iter().zip(species))
            .map(|(&frac, &species)| Atom { species, frac })
            .collect();
        Crystal::new(self.lattice, atoms)
    }

    /// Puts this structure into `spec` (replacing its lattice and atoms), atom `i` of the
    /// species labelled `species[i]`, which `spec` must list; the rest of the input stays.
    pub fn set_in(&self, spec: &mut RunSpec, species: &[&str]) -> Result<(), String> {
        self.check_count(species.len())?;
        if let Some(s) = species
            .iter()
            .find(|s| !spec.species.iter().any(|k| k.symbol == **s))
        {
            return Err(format!("species {s} is not in the input's species"));
        }
        spec.lattice = self.lattice;
        spec.atoms = (self.frac.iter().zip(species))
            .map(|(&frac, s)| AtomSpec {
                species: s.to_string(),
                frac,
            })
            .collect();
        Ok(())
    }

    fn check_count(&self, n: usize) -> Result<(), String> {
        if n == self.frac.len() {
            return Ok(());
        }
        Err(format!("{n} species for {} atoms", self.frac.len()))
    }
}

/// `a` must have 3 columns (and `rows` rows when given) and finite values.
fn check_array(name: &str, a: ArrayView2<'_, f64>, rows: Option<usize>) -> Result<(), String> {
    let (r, c) = a.dim();
    if c != 3 || rows.is_some_and(|n| n != r) {
        let want = rows.map_or("n × 3".to_string(), |n| format!("{n} × 3"));
        return Err(format!("{name} is {r} × {c}, not {want}"));
    }
    if a.iter().any(|x| !x.is_finite()) {
        return Err(format!("{name} has a value that is not finite"));
    }
    Ok(())
}

/// The FFT grid's points along a1, a2, a3: the shape of every grid array.
pub fn grid_shape(basis: &Basis) -> (usize, usize, usize) {
    let [n1, n2, n3] = basis.grid.dims;
    (n1, n2, n3)
}

/// The density of spin channel `spin` (electrons/bohr³; the only channel without spin, up
/// and down with collinear spin) on the whole grid. A view of `rho.r[spin]` when this rank
/// holds the whole grid; else gathered from the density sphere, a copy (collective on the
/// G-vector group).
pub fn density<'a>(basis: &Basis, rho: &'a Density, spin: usize) -> CowArray<'a, f64, Ix3> {
    let shape = grid_shape(basis);
    if basis.rho_dist.is_none() {
        let view = ArrayView3::from_shape(shape, &rho.r[spin]);
        return view.expect("a whole grid holds n1 n2 n3 values").into();
    }
    let whole = planewave_core::grid_files::on_grid(basis, &rho.g[spin]);
    on_grid(basis, whole).into()
}

/// The local potential V_loc + V_H + V_xc (Ha) of the density `rho` (the potential its
/// bands see, less the nonlocal part) per spin channel, computed anew: copies. Serial: fails
/// when the grid is dealt over a G-vector group.
pub fn potential(
    model: &Model,
    basis: &Basis,
    params: &ScfParams,
    rho: &Density,
) -> Result<Vec<Array3<f64>>, String> {
    if basis.rho_dist.is_some() {
        return Err("the potential as an array needs the whole grid on one rank".into());
    }
    let engine = Engine::<Complex64>::new(model, basis, params)?;
    let channels = engine.local_potential(rho);
    Ok(channels.into_iter().map(|v| on_grid(basis, v)).collect())
}

/// `values` (the whole grid, C order) as a grid array, without copying them.
fn on_grid(basis: &Basis, values: Vec<f64>) -> Array3<f64> {
    Array3::from_shape_vec(grid_shape(basis), values).expect("a whole grid holds n1 n2 n3 values")
}

/// The band energies (Ha, QE's convention as `ScfResult::eigenvalues`), `[spin, k, band]`.
pub fn eigenvalues(scf: &ScfResult) -> Array3<f64> {
    per_band(&scf.eigenvalues)
}

/// The occupations (electrons, spin factor included: 0..2 without spin), `[spin, k, band]`.
pub fn occupations(scf: &ScfResult) -> Array3<f64> {
    per_band(&scf.occupations.occ)
}

fn per_band(v: &[Vec<Vec<f64>>]) -> Array3<f64> {
    let nk = v.first().map_or(0, Vec::len);
    let nb = v.first().and_then(|s| s.first()).map_or(0, Vec::len);
    Array3::from_shape_fn((v.len(), nk, nb), |(s, k, n)| v[s][k][n])
}

/// The total force on each atom (Ha/bohr, Cartesian), natoms × 3: a view.
pub fn forces(f: &Forces) -> ArrayView2<'_, f64> {
    ArrayView2::from_shape((f.total.len(), 3), f.total.as_flattened()).expect("natoms rows of 3")
}

/// The stress tensor (Ha/bohr³, Cartesian), 3 × 3: a view.
pub fn stress(s: &Stress) -> ArrayView2<'_, f64> {
    ArrayView2::from_shape((3, 3), s.total.as_flattened()).expect("3 rows of 3")
}

/// Band `n`'s plane-wave coefficients at spin `spin` and k-point `k` as this rank holds
/// them, `Kpoint::millers` order: a view of the faer column. None for Γ-point real bands
/// (use [`band_coefficients`]).
pub fn band(scf: &ScfResult, spin: usize, k: usize, n: usize) -> Option<ArrayView1<'_, Complex64>> {
    match &scf.wavefunctions {
        Wavefunctions::Complex(psi) => Some(ArrayView1::from(psi[spin][k].col_as_slice(n))),
        Wavefunctions::Real(_) => None,
    }
}

/// The plane-wave coefficients of the bands at spin `spin` and k-point `k` as this rank
/// holds them: npw × nbands, rows in `Kpoint::millers` order, a copy. For Γ-point real bands
/// the rows are the stored half sphere (G = 0 first; c(-G) = c(G)*).
pub fn band_coefficients(
    scf: &ScfResult,
    basis: &Basis,
    spin: usize,
    k: usize,
) -> Array2<Complex64> {
    match &scf.wavefunctions {
        Wavefunctions::Complex(psi) => {
            let m = &psi[spin][k];
            Array2::from_shape_fn((m.nrows(), m.ncols()), |(i, j)| m.col_as_slice(j)[i])
        }
        Wavefunctions::Real(psi) => {
            let (m, kpt) = (&psi[spin][k], &basis.kpoints[k]);
            let g0 = usize::from(kpt.holds_g0());
            Array2::from_shape_fn((kpt.npw(), m.ncols()), |(h, j)| {
                // Components [c(0), sqrt2 Re c(G_1), sqrt2 Im c(G_1), ...] (see `basis`).
                let x = m.col_as_slice(j);
                if h == 0 && g0 == 1 {
                    return Complex64::new(x[0], 0.0);
                }
                let r = 2 * h - g0;
                Complex64::new(x[r], x[r + 1]) / SQRT_2
            })
        }
    }
}

#[cfg(test)]
mod tests;
