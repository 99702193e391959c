//! Exact exchange for hybrid functionals (PBE0, HSE06), as Quantum ESPRESSO 6.7 defines it
//! (issue 18). Built in steps; what stands:
//! - [`kernel`]: the Coulomb (or erfc-screened) kernel on q + G with the x_gamma extrapolation,
//!   and the Gygi–Baldereschi divergence constant, matching QE's `exxdiv` on the reference
//!   cases.
//!
//! Not yet: pair densities through the (G-distributed) FFT, the exchange operator and energy,
//! the adaptively compressed operator and its outer loop, the band-group ring; the input still
//! refuses hybrid functionals.

pub mod kernel;
