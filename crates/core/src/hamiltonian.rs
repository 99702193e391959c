//! The Kohn–Sham Hamiltonian of one k-point and spin, applied to blocks of bands.
//!
//! H psi = T psi + V_nl psi + FFT^-1[ V_eff(r) FFT[psi] ], where V_eff = V_loc + V_H + V_xc of the
//! spin channel. Bands of a block go through the grid in parallel (rayon), each thread reusing its
//! own grid and work buffers; the nonlocal part is two GEMMs on the whole block.

use crate::basis::Kpoint;
use crate::terms::{kinetic, nonlocal::KProjectors};
use num_complex::Complex64;
use planewave_fft::Fft3d;
use planewave_linalg::{Mat, MatMut, MatRef};
use rayon::prelude::*;

/// H at one k-point for one spin channel.
pub struct KHamiltonian<'a> {
    /// The k-point's plane waves.
    pub kpt: &'a Kpoint,
    /// The grid transforms.
    pub fft: &'a Fft3d,
    /// Total local potential of this spin channel on the grid (Ha).
    pub veff: &'a [f64],
    /// Nonlocal projectors of this k-point.
    pub proj: &'a KProjectors,
}

impl KHamiltonian<'_> {
    /// Number of plane waves.
    pub fn npw(&self) -> usize {
        self.kpt.npw()
    }

    /// Kinetic energies of the plane waves (for preconditioning).
    pub fn kinetic(&self) -> &[f64] {
        &self.kpt.kinetic
    }

    /// `out = H psi` for the block `psi` (npw x nb, column per band).
    pub fn apply(&self, psi: MatRef<'_, Complex64>, mut out: MatMut<'_, Complex64>) {
        let npw = self.npw();
        let nb = psi.ncols();
        let n = self.fft.grid().len();
        let scale = 1.0 / n as f64;
        let cols_in: Vec<&[Complex64]> = (0..nb).map(|j| col(psi, j, npw)).collect();
        let mut results: Vec<Vec<Complex64>> = vec![Vec::new(); nb];
        results
            .par_iter_mut()
            .zip(cols_in.par_iter())
            .for_each_init(
                || {
                    (
                        vec![Complex64::new(0.0, 0.0); n],
                        vec![Complex64::new(0.0, 0.0); n],
                    )
                },
                |(grid, work), (res, x)| {
                    self.kpt.map.scatter(x, grid);
                    self.fft.backward(grid, work);
                    for (g, v) in grid.iter_mut().zip(self.veff) {
                        *g *= v;
                    }
                    self.fft.forward_unnormalized(grid, work);
                    res.resize(npw, Complex64::new(0.0, 0.0));
                    self.kpt.map.gather(grid, scale, res);
                    kinetic::apply_add(self.kpt, x, res);
                },
            );
        for (j, r) in results.iter().enumerate() {
            for (i, v) in r.iter().enumerate() {
                out[(i, j)] = *v;
            }
        }
        self.proj.apply_add(psi, out.as_mut());
    }

    /// `H psi` as a new matrix.
    pub fn apply_new(&self, psi: MatRef<'_, Complex64>) -> Mat<Complex64> {
        let mut out = Mat::<Complex64>::zeros(psi.nrows(), psi.ncols());
        self.apply(psi, out.as_mut());
        out
    }
}

/// Column `j` of a column-major matrix view as a slice.
fn col<'a>(m: MatRef<'a, Complex64>, j: usize, npw: usize) -> &'a [Complex64] {
    let c = m.col(j);
    c.try_as_col_major()
        .map(|c| c.as_slice())
        .unwrap_or_else(|| panic!("band block must be column-major contiguous (npw = {npw})"))
}
