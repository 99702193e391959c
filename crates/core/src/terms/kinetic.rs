//! Kinetic energy: diagonal in plane waves, |k+G|^2/2 (applied inside
//! [`crate::bands::BandScalar::apply_local`]).

use crate::basis::Kpoint;
use planewave_linalg::{Mat, Scalar};

/// `<psi_n|T|psi_n>` for every band (column) of the block.
pub fn band_energies<T: Scalar>(kpt: &Kpoint, psi: &Mat<T>) -> Vec<f64> {
    (0..psi.ncols())
        .map(|b| {
            psi.col_as_slice(b)
                .iter()
                .zip(&kpt.kinetic)
                .map(|(x, t)| x.abs2() * t)
                .sum()
        })
        .collect()
}
