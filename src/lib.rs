//! planewave: a plane-wave pseudopotential Kohn–Sham DFT solver in safe Rust.
//!
//! This facade re-exports the workspace crates so that research codes can depend on one package:
//! [`comm`] (communicators), [`fft`] (FFT grids and transforms), [`linalg`] (dense kernels) and
//! [`core`] (the physics: model, basis, terms, eigensolvers, SCF).
pub use planewave_comm as comm;
pub use planewave_core as core;
pub use planewave_fft as fft;
pub use planewave_linalg as linalg;
