//! The bands' own FFT grid (QE's "smooth" grid): when the grid of the sphere of 4 ecutwfc is
//! smaller than the density's (`ecutrho > 4 ecutwfc`, as ultrasoft and PAW runs have, or a
//! denser grid given in the input), the bands go through it.
//!
//! Contract:
//! - H|psi> and the band densities are those of the density grid, to rounding. A band holds
//!   |G| <= G_w, so V psi projected back onto the band's sphere needs V only up to 2 G_w, and
//!   |psi|^2 has nothing beyond 2 G_w: the smaller grid holds both without aliasing. The
//!   local potential comes to it through the density sphere (its entries up to 2 G_w), the
//!   band densities go back the same way.
//! - Used for serial transforms of semilocal runs: a G-vector group's distributed transforms
//!   ([`Basis::bands_on_density_grid`]) and the exchange's pair densities (hybrids never get
//!   it) stay on the density grid.
//! - [`Basis::band_fft`], [`Basis::band_grid_len`], [`Basis::potential_for_bands`] and
//!   [`Basis::band_fields_to_sphere`] are the same calls either way; without a smaller grid
//!   they are the density grid's.

use crate::basis::{fft_grid_for, Basis, Cutoffs};
use crate::crystal::Crystal;
use crate::scratch::with_grid;
use num_complex::Complex64;
use planewave_fft::{Fft3d, FftGrid};
use std::borrow::Cow;

/// The bands' grid, smaller than the density's.
#[derive(Debug)]
pub struct WfcGrid {
    /// Its dimensions.
    pub grid: FftGrid,
    /// Plans for it.
    pub fft: Fft3d,
    /// (density-sphere entry, grid index) of every entry with |G|^2 / 2 <= 4 ecutwfc.
    entries: Vec<(usize, usize)>,
}

impl WfcGrid {
    /// The grid for the bands of cutoff `ecut` (Ha) when smaller than `rho_grid` (None
    /// otherwise), with the density sphere `rho_millers` of squared norms `rho_g2`.
    pub fn smaller_than(
        crystal: &Crystal,
        ecut: f64,
        rho_grid: FftGrid,
        (rho_millers, rho_g2): (&[[i32; 3]], &[f64]),
    ) -> Option<Self> {
        let grid = fft_grid_for(crystal, Cutoffs::from(ecut));
        if grid.len() >= rho_grid.len() {
            return None;
        }
        let gmax2 = 8.0 * ecut * (1.0 + 1e-12);
        let entries = (rho_millers.iter().zip(rho_g2).enumerate())
            .filter(|(_, (_, &g2))| g2 <= gmax2)
            .map(|(i, (m, _))| (i, grid.index_of(*m)))
            .collect();
        Some(Self {
            grid,
            fft: Fft3d::new(grid),
            entries,
        })
    }
}

impl Basis {
    /// The transforms of the bands: the bands' grid's when smaller, else the density grid's.
    pub fn band_fft(&self) -> &Fft3d {
        self.wfc.as_ref().map_or(&self.fft, |w| &w.fft)
    }

    /// Number of this rank's points of the grid the bands go through.
    pub fn band_grid_len(&self) -> usize {
        self.wfc
            .as_ref()
            .map_or_else(|| self.rho_real_len(), |w| w.grid.len())
    }

    /// A local potential given at this rank's density-grid points, at the points of the
    /// grid the bands go through (borrowed when that is the density grid).
    pub fn potential_for_bands<'a>(&self, v: &'a [f64]) -> Cow<'a, [f64]> {
        let Some(w) = &self.wfc else {
            return Cow::Borrowed(v);
        };
        let v_g = self.rho_to_sphere(v);
        with_grid(w.grid.len(), |grid| {
            grid.fill(Complex64::new(0.0, 0.0));
            for &(i, at) in &w.entries {
                grid[at] = v_g[i];
            }
            w.fft.backward(grid);
            Cow::Owned(grid.iter().map(|z| z.re).collect())
        })
    }

    /// Density-sphere coefficients of real fields given at the points of the grid the bands
    /// go through (band densities). Collective on the G-vector group.
    pub fn band_fields_to_sphere(&self, fields: &[&[f64]]) -> Vec<Vec<Complex64>> {
        let Some(w) = &self.wfc else {
            return self.rho_to_sphere_many(fields);
        };
        let n_rho = self.rho_millers.len();
        fields
            .iter()
            .map(|f| {
                with_grid(w.grid.len(), |grid| {
                    (grid.iter_mut().zip(*f)).for_each(|(z, &x)| *z = Complex64::new(x, 0.0));
                    w.fft.forward(grid);
                    let mut out = vec![Complex64::new(0.0, 0.0); n_rho];
                    for &(i, at) in &w.entries {
                        out[i] = grid[at];
                    }
                    out
                })
            })
            .collect()
    }

    /// Move the bands to the density grid (every k-point's maps onto it), as a G-vector
    /// group's distributed transforms and the exchange's pair densities need.
    pub fn bands_on_density_grid(&mut self, crystal: &Crystal) {
        if self.wfc.take().is_some() {
            let grid = self.grid;
            for kpt in &mut self.kpoints {
                kpt.remap(crystal, grid);
            }
        }
    }
}
