//! planewave-fft: FFT grids and transforms between the G-sphere and the real-space grid.
//!
//! Contract: a grid of `dims = [n0, n1, n2]` points along the lattice vectors a1, a2, a3 is stored
//! flat in C order, index `(i0 * n1 + i1) * n2 + i2`. [`Fft3d::backward`] computes
//! `f(r) = sum_G f(G) e^{iG.r}` and [`Fft3d::forward`] `f(G) = (1/N) sum_r f(r) e^{-iG.r}`, so the two
//! are exact inverses. Plans are built once per grid and reused; lines are transformed in parallel
//! with rayon. [`RealFft3d`] does the same for real fields (half spectrum along a3).
//!
//! Distributed over a G-vector group ([`planewave_comm::Communicator`]): [`DistFft`] deals the
//! sticks of a sphere to the ranks ([`StickDistribution`]), transforms with a slab or pencil
//! [`Decomposition`] whose transposes go through an all-to-all-v strategy and carry a block of
//! bands each, and leaves each rank the real-space points of its [`RealLayout`].
//! [`selfcheck`] compares it with the serial transform (tests and the `fft_mpi_check`
//! example), [`bench`](mod@bench) times both (and FFTW 3 with the feature `fftw`).
//!
//! Everything is safe Rust, except the FFTW bindings of the optional `fftw` feature.

#![deny(unsafe_code)]

pub mod bench;
mod decomposition;
mod dist_fft;
mod fft3d;
#[cfg(feature = "fftw")]
#[allow(unsafe_code)]
pub mod fftw;
mod grid;
mod r2c;
mod real_layout;
pub mod selfcheck;
mod sphere;
mod stick_deal;
mod transpose;

pub use decomposition::{block_range, Decomposition, ProcessGrid};
pub use dist_fft::{DistFft, DistFftOptions, PhaseTimes};
pub use fft3d::{Fft3d, Sticks};
pub use grid::{good_fft_size, is_good_fft_size, miller_to_index, FftGrid};
pub use r2c::RealFft3d;
pub use real_layout::RealLayout;
pub use sphere::SphereMap;
pub use stick_deal::StickDistribution;

/// Complex double precision, the element type of every transform.
pub type C64 = num_complex::Complex64;
