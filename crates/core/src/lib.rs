//! planewave-core: the physics of plane-wave Kohn–Sham DFT.
//!
//! Split as in DFTK: [`model::Model`] (the physical system) -> [`basis::Basis`] (plane waves,
//! FFT grid, k-points) -> [`terms`] (one file per energy term) -> [`eigensolver`] and [`scf`].
//! [`input`] reads TOML and Quantum ESPRESSO inputs, [`setup`] turns them into a model and basis,
//! [`results`] writes the JSON summary. Hartree atomic units throughout.

pub mod atomic_start;
pub mod augmentation;
pub mod band_structure;
pub mod bands;
pub mod basis;
pub mod checkpoint;
pub mod clebsch_gordan;
pub mod converged;
pub mod crystal;
pub mod density;
pub mod device;
pub mod device_local;
pub mod dos;
pub mod efficiency;
pub mod eigensolver;
pub mod energies;
pub mod exx;
pub mod fixed_density;
pub mod forces;
#[cfg(feature = "cuda")]
pub mod gpu_local;
pub mod grid_files;
pub mod gvectors;
pub mod hamiltonian;
pub mod kpath;
pub(crate) mod miller_lookup;
/// The input declaration (the `planewave-input` crate).
pub use planewave_input as input;
pub mod mixing;
pub mod model;
pub mod occupation;
pub mod operators;
pub mod ordered_sum;
pub mod overlap;
pub mod parallel;
pub mod paw;
pub mod pdos;
pub mod projections;
pub mod pseudo;
pub mod relax;
pub mod restart;
pub mod results;
pub mod rho_dist;
pub mod rho_grid;
pub mod rng;
pub mod scf;
pub(crate) mod scratch;
pub mod setup;
pub mod smearing;
pub mod special;
pub mod stop;
pub mod stress;
pub mod symmetry;
pub mod terms;
pub mod tetrahedra;
pub mod tuning;
pub mod vacuum;
pub mod wfc_grid;
pub mod workflow;
pub mod xc;
