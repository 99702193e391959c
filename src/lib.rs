//! planewave: a plane-wave pseudopotential Kohn–Sham DFT solver in safe Rust.
//!
//! This facade re-exports the workspace crates so that research codes can depend on one package:
//! [`comm`] (communicators), [`fft`] (FFT grids and transforms), [`linalg`] (dense kernels) and
//! [`core`] (the physics: model, basis, terms, eigensolvers, SCF).
//!
//! # Running the SCF distributed, from Rust
//!
//! A run's layout lives in its basis: [`core::basis::Basis::parallel`] holds the process
//! topology and which k-point group computes which (spin, k) block, and the k-points of a group
//! with several ranks have their plane waves dealt over them (G-vector groups). From an input,
//! [`core::setup::build_on`] (or [`core::relax::run_on`]) takes the world communicator — one
//! process ([`comm::Solo`]), in-process ranks ([`comm::Threads`]) or MPI (`comm::mpi`, feature
//! `mpi`) — and every rank calls it. From a model built in code, make the layout with
//! [`core::parallel::Parallel::over_kpoints`] and hand it to [`core::basis::Basis::distribute`]
//! before [`core::scf::run`]; energies, eigenvalues, densities, forces and stress come back
//! whole on every rank:
//!
//! ```no_run
//! # use planewave::{comm::Threads, core::{parallel::Parallel, scf}};
//! # fn model_and_basis() -> (planewave::core::model::Model, planewave::core::basis::Basis, scf::ScfParams) { unimplemented!() }
//! // 4 ranks: 2 k-point groups of 2 ranks sharing each k-point's plane waves.
//! let energies = Threads::run(4, |c| {
//!     let (model, mut basis, params) = model_and_basis();
//!     let sum = planewave::comm::sum::SumChoice::Fixed(Default::default());
//!     let par = Parallel::over_kpoints(c.into_arc(), 2, 1, Default::default(), &basis, 1, params.nbands, sum)
//!         .expect("a valid layout");
//!     basis.distribute(&model.crystal, par, 1, &Default::default()).expect("transform plans");
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
