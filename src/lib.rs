//! planewave: a plane-wave pseudopotential Kohn–Sham DFT solver in safe Rust.
//!
//! This facade re-exports the workspace crates so that research codes can depend on one package:
//! [`comm`] (communicators), [`fft`] (FFT grids and transforms), [`linalg`] (dense kernels) and
//! [`core`] (the physics: model, basis, terms, eigensolvers, SCF).
//!
//! # Running the SCF distributed, from Rust
//!
//! A run's layout lives in its basis: [`core::basis::Basis::parallel`] holds the process
//! topology and which k-point group computes which (spin, k) block. From an input,
//! [`core::setup::build_on`] (or [`core::relax::run_on`]) takes the world communicator — one
//! process ([`comm::Solo`]), in-process ranks ([`comm::Threads`]) or MPI (`comm::mpi`, feature
//! `mpi`) — and every rank calls it. From a model built in code, distribute its basis with
//! [`core::parallel::Parallel::over_kpoints`] before [`core::scf::run`]; energies, eigenvalues,
//! densities, forces and stress come back whole on every rank:
//!
//! ```no_run
//! # use planewave::{comm::Threads, core::{parallel::Parallel, scf}};
//! # use std::sync::Arc;
//! # fn model_and_basis() -> (planewave::core::model::Model, planewave::core::basis::Basis, scf::ScfParams) { unimplemented!() }
//! let energies = Threads::run(2, |c| {
//!     let (model, mut basis, params) = model_and_basis();
//!     let sum = planewave::comm::sum::SumChoice::Fixed(Default::default());
//!     let par = Parallel::over_kpoints(c.into_arc(), 2, Default::default(), &basis, 1, params.nbands, sum)
//!         .expect("a valid layout");
//!     basis.parallel = Arc::new(par);
//!     scf::run(&model, &basis, &params, |_| {}).expect("SCF").energies.total()
//! });
//! ```
//!
//! `examples/distributed_scf.rs` is a complete program (`cargo run --release --example
//! distributed_scf`).
pub use planewave_comm as comm;
pub use planewave_core as core;
pub use planewave_fft as fft;
pub use planewave_linalg as linalg;
