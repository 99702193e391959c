//! planewave-gpu: the CUDA back end of planewave (issue 34), first brick.
//!
//! Contract: everything here runs on one device through one [`Gpu`] (a CUDA context, one stream,
//! a cuBLAS and a cuSOLVER handle, the NVRTC kernels). The CUDA libraries are loaded at run time
//! (cudarc, `dynamic-loading`), so the crate builds and its host tests run with no CUDA
//! installed; [`Gpu::open`] first finds the libraries ([`discovery`]) so that a missing one is a
//! clean [`GpuError`], never a panic.
//!
//! Layout and conventions, the same as planewave-fft: a grid of `dims = [n0, n1, n2]` is stored
//! flat in C order, index `(i0 * n1 + i1) * n2 + i2`; matrices are column-major; a block of bands
//! is an `ng x nb` column-major matrix (one band per column). [`BatchedFft::backward`] is
//! `f(r) = sum_G f(G) e^{iG.r}` and [`BatchedFft::forward_unnormalized`] is
//! `sum_r f(r) e^{-iG.r}`: the `1/N` of planewave's forward transform is left to the caller
//! (the gather of [`LocalOperator`] applies it).
//!
//! This is the only crate of the project allowed `unsafe`: each block says why it is sound in a
//! `// SAFETY:` comment.

pub mod batch;
pub mod blas;
mod complex;
pub mod device;
pub mod discovery;
pub mod eigh;
pub mod fft;
pub mod index_map;
mod kernels;
pub mod local;
pub mod reference;
pub mod testing;

pub use batch::{band_batches, max_batch};
pub use blas::{zgemm, DeviceMatrix, Op};
pub use device::{Gpu, GpuError};
pub use discovery::{find_libraries, Libraries, MissingLibrary, SearchPath};
pub use eigh::HermitianEigensolver;
pub use fft::BatchedFft;
pub use index_map::{IndexMap, IndexMapError};
pub use local::LocalOperator;

/// Complex double precision on the host (the element type of every band block).
pub type C64 = num_complex::Complex64;
