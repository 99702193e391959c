//! planewave-fft: FFT grids and transforms between the G-sphere and the real-space grid.
//!
//! Contract: a grid of `dims = [n0, n1, n2]` points along the lattice vectors a1, a2, a3 is stored
//! flat in C order, index `(i0 * n1 + i1) * n2 + i2`. [`Fft3d::backward`] computes
//! `f(r) = sum_G f(G) e^{iG.r}` and [`Fft3d::forward`] `f(G) = (1/N) sum_r f(r) e^{-iG.r}`, so the two
//! are exact inverses. Plans are built once per grid and reused; lines are transformed in parallel
//! with rayon.

mod fft3d;
mod grid;
mod sphere;

pub use fft3d::{Fft3d, Sticks};
pub use grid::{good_fft_size, is_good_fft_size, miller_to_index, FftGrid};
pub use sphere::SphereMap;

/// Complex double precision, the element type of every transform.
pub type C64 = num_complex::Complex64;
