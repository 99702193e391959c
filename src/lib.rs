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
//!
//! # Arrays in, arrays out: ndarray at the boundary
//!
//! [`arrays`] takes a structure as [`ndarray`] arrays (units named: here Å and Cartesian) and
//! gives the results as arrays: the density and potential on the FFT grid (`[i, j, k]` along
//! a1, a2, a3), eigenvalues and occupations `[spin, k, band]`, forces, stress and band
//! coefficients, as views where the layout allows. The facade re-exports [`ndarray`] (0.16);
//! a project's own `ndarray = "0.16"` is the same crate. Here, the planar average of the
//! density over the planes spanned by a1 and a2:
//!
//! ```no_run
//! use ndarray::{array, Axis};
//! use planewave::arrays::{self, LengthUnit, Positions, Structure};
//! use planewave::core::{input, scf::IterationInfo, setup, workflow};
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let (h, q) = (2.715, 1.3575); // Å: half and a quarter of silicon's cubic lattice constant
//! let cell = array![[0.0, h, h], [h, 0.0, h], [h, h, 0.0]]; // rows a1, a2, a3
//! let positions = array![[0.0, 0.0, 0.0], [q, q, q]];
//! let (unit, kind) = (LengthUnit::Angstrom, Positions::Cartesian);
//! let st = Structure::from_arrays(cell.view(), unit, positions.view(), kind)?;
//! // The pseudopotential, cutoff and k-points from the silicon example's input.
//! let mut spec = input::load(std::path::Path::new("examples/si.toml"))?;
//! st.set_in(&mut spec, &["Si", "Si"])?;
//! let s = setup::build(spec)?;
//! let c = workflow::run(&s, None, |_: &IterationInfo| {})?;
//! let rho = arrays::density(&s.basis, &c.scf.density, 0); // (n1, n2, n3), a view
//! println!("{} electrons", rho.sum() * s.basis.dv());
//! let planar = rho.mean_axis(Axis(0)).unwrap().mean_axis(Axis(0)).unwrap(); // along a3
//! println!("planar average along a3: {planar:.5}");
//! println!("forces (Ha/bohr):\n{:.6}", arrays::forces(c.forces.as_ref().unwrap()));
//! # Ok(()) }
//! ```
//!
//! `examples/planar_average.rs` is the complete program (`cargo run --release --example
//! planar_average`): planar averages of the density and the potential, and the electron count.
pub mod arrays;

pub use ndarray;
pub use planewave_comm as comm;
pub use planewave_core as core;
pub use planewave_fft as fft;
pub use planewave_linalg as linalg;
