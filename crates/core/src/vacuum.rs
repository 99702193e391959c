//! Vacuum in a cell: whether the atoms are isolated (a molecule or an atom in a box), from the
//! superposed atomic density the SCF starts from.
//!
//! Contract:
//! - A *vacuum plane* is a plane of the FFT grid (fixed index along one lattice direction) on
//!   which the density stays below [`VACUUM_SHARE`] of the cell's mean density everywhere.
//!   (In a crystal every plane meets atoms or bonds, and its highest density is at least
//!   about the mean: 0.9 to 2 times it in bulk Si, Al and C. A molecule's box has planes
//!   at 1e-6 to 0.04 times it.)
//! - The cell is *isolated* when it has vacuum planes along all three lattice directions. A
//!   slab has them along one, a wire along two, a bulk crystal along none.
//! - [`Vacuum::of`] is collective on the G-vector group (two reductions: the mean density and
//!   n1 + n2 + n3 counts) and gives the same answer on every layout.
//!
//! The SCF uses it to choose the preconditioner of its mixing: Kerker's damps the long
//! wavelengths of charge sloshing in solids and metals, and only slows an isolated system,
//! which has none (water in a 12-bohr box: 19 SCF iterations with it, 13 without).

use crate::basis::Basis;
use crate::density::atomic_guess;
use crate::model::Model;

/// Share of the cell's mean density below which a grid point is vacuum.
pub const VACUUM_SHARE: f64 = 0.1;

/// The vacuum planes of a cell, per lattice direction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Vacuum {
    /// Number of vacuum planes along each lattice direction.
    pub planes: [usize; 3],
    /// Number of grid planes along each lattice direction.
    pub dims: [usize; 3],
}

impl Vacuum {
    /// The vacuum of the superposed atomic density of `model` on `basis`'s grid. Collective on
    /// the G-vector group.
    pub fn of(model: &Model, basis: &Basis) -> Self {
        Self::of_density(basis, &atomic_guess(model, basis).total_r())
    }

    /// The vacuum planes of the density `rho` given at this rank's grid points. Collective on
    /// the G-vector group.
    pub fn of_density(basis: &Basis, rho: &[f64]) -> Self {
        let dims = basis.grid.dims;
        let offsets = [0, dims[0], dims[0] + dims[1]];
        // The mean density, then the points at or above the threshold on each plane, both
        // completed over the group.
        let mut sum = [rho.iter().sum::<f64>()];
        basis.sum_over_rho(&mut sum);
        let threshold = VACUUM_SHARE * sum[0] / basis.grid_len() as f64;
        let mut occupied = vec![0.0; dims.iter().sum()];
        for (l, &v) in rho.iter().enumerate() {
            if v >= threshold {
                let p = basis.rho_real_point(l);
                for axis in 0..3 {
                    occupied[offsets[axis] + p[axis]] += 1.0;
                }
            }
        }
        basis.sum_over_rho(&mut occupied);
        let planes = std::array::from_fn(|axis| {
            let plane = &occupied[offsets[axis]..offsets[axis] + dims[axis]];
            plane.iter().filter(|&&c| c == 0.0).count()
        });
        Self { planes, dims }
    }

    /// True when every lattice direction has a vacuum plane.
    pub fn isolated(&self) -> bool {
        self.planes.iter().all(|&n| n > 0)
    }

    /// The vacuum's share of each direction's planes, as "a1 45%, a2 50%, a3 50%".
    pub fn describe(&self) -> String {
        let share = |a: usize| 100.0 * self.planes[a] as f64 / self.dims[a] as f64;
        format!(
            "a1 {:.0}%, a2 {:.0}%, a3 {:.0}%",
            share(0),
            share(1),
            share(2)
        )
    }
}
