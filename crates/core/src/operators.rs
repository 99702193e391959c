//! The operators that terms contribute to the Hamiltonian of one (spin, k) block, by kind.
//!
//! Contract:
//! - A term acts on bands through one [`Operator`] per block ([`crate::terms::term::Term::operator`]);
//!   a density term acts through its potential ([`crate::terms::term::Term::potential`]), which
//!   the SCF sums over the density terms once per density into one [`Operator::RealSpace`].
//! - The kinds are few: Fourier-diagonal (kinetic: a value per plane wave), real-space
//!   multiplication (local + Hartree + XC: a value per grid point), projector (nonlocal:
//!   `sum_ij |beta_i> D_ij <beta_j|`), low-rank (a hybrid's compressed exchange, `-xi xi^H`)
//!   and the overlap of ultrasoft pseudopotentials, `S = 1 + sum_ij |beta_i> q_ij <beta_j|`,
//!   which is not part of H but makes its eigenproblem a generalised one
//!   ([`crate::overlap`]).
//! - The array kinds are plain slices on this rank's plane waves or grid points; the other two
//!   are traits ([`ProjectorOperator`], [`LowRankOperator`]) that the CPU types
//!   ([`crate::terms::nonlocal::KProjectors`], [`crate::exx::ace::Ace`]) implement and a device
//!   back end can implement on device memory.
//! - [`crate::hamiltonian::KHamiltonian::assemble`] sums the Fourier-diagonal and real-space
//!   operators, so that one FFT round trip per band applies every real-space term and the
//!   kinetic energy with it (the fused fast path, a [`LocalOperator`]: [`FftLocal`] on the CPU,
//!   a device back end's own through [`crate::hamiltonian::KHamiltonian::with_local`]);
//!   projector and low-rank operators are applied after it, each on the whole block (BLAS-3).

use crate::bands::BandScalar;
use crate::basis::Kpoint;
use crate::overlap::OverlapOperator;
use planewave_fft::Fft3d;
use planewave_linalg::{MatMut, MatRef};

/// The fused local part of H on a block: `out = (D + V) psi`, with D the Fourier-diagonal
/// operators' sum (a value per band-vector component) and V the real-space ones' sum (a value
/// per grid point of this rank), one grid round trip per band.
pub trait LocalOperator<T: BandScalar>: Sync {
    /// `out = (D + V) psi` for the block `psi` (columns are bands) of k-point `kpt`, with
    /// `diagonal` = D and `potential` = V. Collective on the k-point's G-vector group.
    fn apply(
        &self,
        kpt: &Kpoint,
        diagonal: &[f64],
        potential: &[f64],
        psi: MatRef<'_, T>,
        out: MatMut<'_, T>,
    );
}

/// The CPU's local operator: batched FFTs through the grid plan `0`
/// ([`BandScalar::apply_local`]).
pub struct FftLocal<'a>(pub &'a Fft3d);

impl<T: BandScalar> LocalOperator<T> for FftLocal<'_> {
    fn apply(
        &self,
        kpt: &Kpoint,
        diagonal: &[f64],
        potential: &[f64],
        psi: MatRef<'_, T>,
        out: MatMut<'_, T>,
    ) {
        T::apply_local(kpt, self.0, (diagonal, potential), psi, out);
    }
}

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
    /// The overlap S of the generalised eigenproblem `H psi = e S psi` (at most one).
    Overlap(&'a dyn OverlapOperator<T>),
}
