//! Exact exchange for hybrid functionals, as Quantum ESPRESSO 6.7 defines it (issue 18):
//! - [`kernel`]: the Coulomb (or erfc-screened) kernel on q + G with the x_gamma extrapolation,
//!   and the Gygi–Baldereschi divergence constant, matching QE's `exxdiv`;
//! - [`operator`]: the exchange operator of a (spin, k) block from its occupied orbitals, pair
//!   densities through the density transforms (so on G-vector groups too), q = 0;
//! - [`ace`]: its adaptively compressed form, a low-rank block in the Hamiltonian;
//! - `outer`: the outer loop of a hybrid run (semilocal SCF first, then operator rebuilds
//!   with inner SCF loops), driven by [`crate::scf`].
//!
//! The semilocal part (PBE0: the model's PBE with its exchange scaled by 1 - a; HSE: less a
//! times the short-range ωPBE exchange) is the XC term's
//! ([`crate::terms::term::State::exchange_mix`]); the Fock energy is the `exact_exchange`
//! term's.
//!
//! - [`kq`] and [`orbitals`]: the points k + q of a q grid as symmetry images of the computed
//!   k-points, and their orbitals gathered from every k-point group, each band group keeping
//!   its share.
//!
//! Band groups deal the pairs (i, j) by the band i: the groups' shares of the occupied
//! orbitals j go around the band-group ring (with a q grid, their images at each k + q are
//! built as they arrive); the compressed operator is built from every band (gathered) and
//! held whole by each band group.
//!
//! Not yet: stress.

pub use planewave_input::Hybrid;

pub mod ace;
pub mod kernel;
pub mod kq;
pub mod operator;
pub mod orbitals;
pub(crate) mod outer;

#[cfg(test)]
mod tests;
