//! The Kohn–Sham Hamiltonian of one k-point and spin, applied to blocks of bands.
//!
//! `H psi = T psi + V_nl psi + FFT^-1[ V_eff(r) FFT[psi] ] (+ V_x psi)`, where V_eff = V_loc +
//! V_H + V_xc of the spin channel and V_x a hybrid's compressed exchange operator. Bands of a block go through the grid in parallel (rayon, see
//! [`crate::bands::BandScalar`]); the nonlocal part is two GEMMs on the whole block.

use crate::bands::BandScalar;
use crate::basis::Kpoint;
use crate::exx::ace::Ace;
use crate::terms::nonlocal::KProjectors;
use planewave_fft::Fft3d;
use planewave_linalg::{Mat, MatMut, MatRef};

/// H at one k-point for one spin channel.
pub struct KHamiltonian<'a, T: BandScalar> {
    /// The k-point's plane waves.
    pub kpt: &'a Kpoint,
    /// The grid transforms.
    pub fft: &'a Fft3d,
    /// Total local potential of this spin channel on the grid (Ha).
    pub veff: &'a [f64],
    /// Nonlocal projectors of this k-point.
    pub proj: &'a KProjectors<T>,
    /// A hybrid's compressed exchange operator of this block, when exact exchange is on.
    pub exchange: Option<&'a Ace<T>>,
}

impl<'a, T: BandScalar> KHamiltonian<'a, T> {
    /// Assemble H for one k-point and spin channel.
    pub fn new(kpt: &'a Kpoint, fft: &'a Fft3d, veff: &'a [f64], proj: &'a KProjectors<T>) -> Self {
        Self {
            kpt,
            fft,
            veff,
            proj,
            exchange: None,
        }
    }

    /// With the exchange operator `ace` (None: none).
    pub fn with_exchange(mut self, ace: Option<&'a Ace<T>>) -> Self {
        self.exchange = ace;
        self
    }

    /// Length of a band vector.
    pub fn dim(&self) -> usize {
        self.kpt.dim()
    }

    /// `out = H psi` for the block `psi` (dim x nb, column per band).
    pub fn apply(&self, psi: MatRef<'_, T>, mut out: MatMut<'_, T>) {
        T::apply_local(self.kpt, self.fft, self.veff, psi, out.as_mut());
        if let Some(x) = self.exchange {
            x.apply_add(self.kpt, psi, out.as_mut());
        }
        self.proj.apply_add(psi, out);
    }

    /// The diagonal of H approximated for preconditioning: kinetic energy plus the average of
    /// the local potential (over the whole grid, summed over the G-vector group when the grid
    /// is dealt). Collective over the G-vector group.
    pub fn diagonal(&self) -> Vec<f64> {
        let mut sums = [self.veff.iter().sum::<f64>(), self.veff.len() as f64];
        self.kpt.sum_over_g(&mut sums);
        let v_avg = if sums[1] > 0.0 {
            sums[0] / sums[1]
        } else {
            0.0
        };
        self.kpt.kinetic.iter().map(|t| t + v_avg).collect()
    }

    /// `H psi` as a new matrix.
    pub fn apply_new(&self, psi: MatRef<'_, T>) -> Mat<T> {
        let mut out = Mat::<T>::zeros(psi.nrows(), psi.ncols());
        self.apply(psi, out.as_mut());
        out
    }
}
