//! The operators that terms contribute to the Hamiltonian of one (spin, k) block, by kind.
//!
//! Contract:
//! - A term acts on bands through one [`Operator`] per block ([`crate::terms::term::Term::operator`]);
//!   a density term acts through its potential ([`crate::terms::term::Term::potential`]), which
//!   the SCF sums over the density terms once per density into one [`Operator::RealSpace`].
//! - The kinds are few: Fourier-diagonal (kinetic: a value per plane wave), real-space
//!   multiplication (local + Hartree + XC: a value per grid point), projector (nonlocal:
//!   `sum_ij |beta_i> D_ij <beta_j|`; later the ultrasoft S) and low-rank (a hybrid's compressed
//!   exchange, `-xi xi^H`).
//! - The array kinds are plain slices on this rank's plane waves or grid points; the other two
//!   are traits ([`ProjectorOperator`], [`LowRankOperator`]) that the CPU types
//!   ([`crate::terms::nonlocal::KProjectors`], [`crate::exx::ace::Ace`]) implement and a device
//!   back end can implement on device memory.
//! - [`crate::hamiltonian::KHamiltonian::assemble`] sums the Fourier-diagonal and real-space
//!   operators, so that one FFT round trip per band applies every real-space term and the
//!   kinetic energy with it (the fused fast path); projector and low-rank operators are applied
//!   after it, each on the whole block (BLAS-3).

use crate::bands::BandScalar;
use crate::basis::Kpoint;
use planewave_linalg::{MatMut, MatRef};

/// A projector operator `sum_ij |beta_i> D_ij <beta_j|` on the band blocks of one k-point.
pub trait ProjectorOperator<T: BandScalar>: Sync {
    /// `out += (sum_ij |beta_i> D_ij <beta_j|) psi` for the block `psi` (columns are bands).
    /// Collective on the k-point's G-vector group.
    fn apply_add(&self, psi: MatRef<'_, T>, out: MatMut<'_, T>);

    /// Run `f` with the operator made ready for many applications (say, its projectors built
    /// whole once instead of block by block each time); by default just run it.
    fn prepared(&self, f: &mut dyn FnMut()) {
        f()
    }
}

/// A low-rank operator on the band blocks of one k-point.
pub trait LowRankOperator<T: BandScalar>: Sync {
    /// `out += V psi` for the block `psi` of k-point `kpt`. Collective on its G-vector group.
    fn apply_add(&self, kpt: &Kpoint, psi: MatRef<'_, T>, out: MatMut<'_, T>);
}

/// One term's operator on the bands of one (spin, k) block.
#[derive(Clone, Copy)]
pub enum Operator<'a, T: BandScalar> {
    /// Multiplication of each band-vector component by a value (Ha; one per row of the
    /// block: the kinetic energies `|k+G|^2/2`).
    FourierDiagonal(&'a [f64]),
    /// Multiplication by a potential on this rank's grid points (Ha).
    RealSpace(&'a [f64]),
    /// A projector operator.
    Projector(&'a dyn ProjectorOperator<T>),
    /// A low-rank operator.
    LowRank(&'a dyn LowRankOperator<T>),
}
