//! Kinetic energy: diagonal in plane waves, |k+G|^2/2.

use crate::basis::Kpoint;
use num_complex::Complex64;
use planewave_linalg::Mat;

/// `out += T psi` for one band.
pub fn apply_add(kpt: &Kpoint, psi: &[Complex64], out: &mut [Complex64]) {
    for ((x, y), t) in psi.iter().zip(out.iter_mut()).zip(&kpt.kinetic) {
        *y += x * t;
    }
}

/// `<psi_n|T|psi_n>` for every band (column) of the block.
pub fn band_energies(kpt: &Kpoint, psi: &Mat<Complex64>) -> Vec<f64> {
    (0..psi.ncols())
        .map(|b| {
            psi.col_as_slice(b)
                .iter()
                .zip(&kpt.kinetic)
                .map(|(x, t)| x.norm_sqr() * t)
                .sum()
        })
        .collect()
}
