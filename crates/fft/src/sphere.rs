//! `SphereMap`: where the plane waves of one basis set (a G-sphere) sit on the FFT grid.
//!
//! Scatter writes sphere coefficients into a grid (zeroing the rest), gather reads them back,
//! both through an index table built once per basis.

use crate::grid::FftGrid;
use crate::C64;

/// Grid positions of the G-vectors of one sphere, in the sphere's own order.
#[derive(Clone, Debug)]
pub struct SphereMap {
    grid: FftGrid,
    indices: Vec<usize>,
}

impl SphereMap {
    /// Build the map for the Miller indices `millers` on `grid`.
    pub fn new(grid: FftGrid, millers: &[[i32; 3]]) -> Self {
        let indices = millers.iter().map(|&m| grid.index_of(m)).collect();
        Self { grid, indices }
    }
    /// The grid this map points into.
    pub fn grid(&self) -> FftGrid {
        self.grid
    }
    /// Number of G-vectors in the sphere.
    pub fn len(&self) -> usize {
        self.indices.len()
    }
    /// True for an empty sphere.
    pub fn is_empty(&self) -> bool {
        self.indices.is_empty()
    }
    /// Grid index of each sphere entry.
    pub fn indices(&self) -> &[usize] {
        &self.indices
    }
    /// Zero `grid_data` and place `coeffs` at their grid points.
    pub fn scatter(&self, coeffs: &[C64], grid_data: &mut [C64]) {
        debug_assert_eq!(coeffs.len(), self.indices.len());
        grid_data.fill(C64::new(0.0, 0.0));
        self.place(coeffs, grid_data);
    }
    /// Place `coeffs` at their grid points, leaving the rest of `grid_data` as it is (after
    /// [`Sticks::clear_lines`](crate::Sticks::clear_lines) this is the input of a sphere
    /// transform).
    pub fn place(&self, coeffs: &[C64], grid_data: &mut [C64]) {
        debug_assert_eq!(coeffs.len(), self.indices.len());
        for (&i, &c) in self.indices.iter().zip(coeffs) {
            grid_data[i] = c;
        }
    }
    /// Read the sphere entries of `grid_data` into `coeffs`, multiplied by `scale`.
    pub fn gather(&self, grid_data: &[C64], scale: f64, coeffs: &mut [C64]) {
        debug_assert_eq!(coeffs.len(), self.indices.len());
        for (&i, c) in self.indices.iter().zip(coeffs.iter_mut()) {
            *c = grid_data[i] * scale;
        }
    }
    /// Add the sphere entries of `grid_data`, multiplied by `scale`, to `coeffs`.
    pub fn gather_add(&self, grid_data: &[C64], scale: f64, coeffs: &mut [C64]) {
        debug_assert_eq!(coeffs.len(), self.indices.len());
        for (&i, c) in self.indices.iter().zip(coeffs.iter_mut()) {
            *c += grid_data[i] * scale;
        }
    }
}
