//! `BatchedFft`: one cuFFT plan for a batch of 3-D complex transforms, in place.
//!
//! Contract: a plan for grid `dims = [n0, n1, n2]` (C order, axis 2 contiguous, as in
//! planewave-fft) and `batch` fields stored one after the other (field `b` at offset `b N`,
//! `N = n0 n1 n2`). [`BatchedFft::backward`] computes `f(r) = sum_G f(G) e^{+iG.r}`
//! (planewave-fft's `Fft3d::backward`, cuFFT's `CUFFT_INVERSE`); [`BatchedFft::forward_unnormalized`]
//! computes `sum_r f(r) e^{-iG.r}` (cuFFT's `CUFFT_FORWARD`, planewave-fft's
//! `Fft3d::forward_unnormalized`). Neither divides by `N`: planewave's forward transform is
//! `(1/N)` times the second, and the caller puts the `1/N` where it is cheapest (the gather of
//! [`crate::LocalOperator`]). So `forward_unnormalized(backward(x)) = N x`.

use crate::blas::DeviceMatrix;
use crate::complex::Z;
use crate::device::{Gpu, GpuError};
use cudarc::cufft::{result as cufft, sys, CudaFft, FftDirection};
use cudarc::driver::{CudaStream, CudaViewMut, DevicePtrMut};
use std::sync::Arc;

/// A batched in-place 3-D Z2Z plan on the [`Gpu`]'s stream.
pub struct BatchedFft {
    plan: CudaFft,
    stream: Arc<CudaStream>,
    dims: [usize; 3],
    batch: usize,
}

impl BatchedFft {
    /// Plan `batch` transforms of grid `dims` (cufftPlanMany, contiguous fields).
    pub fn new(gpu: &Gpu, dims: [usize; 3], batch: usize) -> Result<Self, GpuError> {
        let n: usize = dims.iter().product();
        let fits = |x: usize| x > 0 && x <= i32::MAX as usize;
        assert!(
            fits(n) && fits(batch),
            "FFT plan: {dims:?} x {batch} out of range"
        );
        let shape = dims.map(|d| d as i32);
        let (n, nb) = (n as i32, batch as i32);
        let stream = gpu.stream().clone();
        let plan = CudaFft::plan_many(
            &shape,
            None,
            1,
            n,
            None,
            1,
            n,
            sys::cufftType::CUFFT_Z2Z,
            nb,
            stream.clone(),
        )
        .map_err(|e| GpuError::cuda("cuFFT plan", e))?;
        Ok(BatchedFft {
            plan,
            stream,
            dims,
            batch,
        })
    }

    /// Grid dimensions.
    pub fn dims(&self) -> [usize; 3] {
        self.dims
    }

    /// Fields per call.
    pub fn batch(&self) -> usize {
        self.batch
    }

    /// Points of one grid.
    pub fn grid_len(&self) -> usize {
        self.dims.iter().product()
    }

    /// `f(r) = sum_G f(G) e^{+iG.r}` on each column of `fields` (`N x batch`).
    pub fn backward(&self, fields: &mut DeviceMatrix) -> Result<(), GpuError> {
        self.check_matrix(fields);
        self.backward_view(&mut fields.data_mut().as_view_mut())
    }

    /// `sum_r f(r) e^{-iG.r}` (no `1/N`) on each column of `fields` (`N x batch`).
    pub fn forward_unnormalized(&self, fields: &mut DeviceMatrix) -> Result<(), GpuError> {
        self.check_matrix(fields);
        self.forward_view(&mut fields.data_mut().as_view_mut())
    }

    fn check_matrix(&self, m: &DeviceMatrix) {
        assert_eq!(
            (m.rows(), m.cols()),
            (self.grid_len(), self.batch),
            "FFT: the matrix must be grid points x batch"
        );
    }

    /// [`BatchedFft::backward`] on `batch N` contiguous values.
    pub(crate) fn backward_view(&self, data: &mut CudaViewMut<'_, Z>) -> Result<(), GpuError> {
        self.exec(data, FftDirection::Inverse)
    }

    /// [`BatchedFft::forward_unnormalized`] on `batch N` contiguous values.
    pub(crate) fn forward_view(&self, data: &mut CudaViewMut<'_, Z>) -> Result<(), GpuError> {
        self.exec(data, FftDirection::Forward)
    }

    fn exec(&self, data: &mut CudaViewMut<'_, Z>, dir: FftDirection) -> Result<(), GpuError> {
        assert_eq!(data.len(), self.grid_len() * self.batch, "FFT: buffer size");
        self.stream
            .context()
            .bind_to_thread()
            .map_err(|e| GpuError::cuda("CUDA context", e))?;
        let (ptr, _record) = data.device_ptr_mut(&self.stream);
        let p = ptr as *mut sys::cufftDoubleComplex;
        // SAFETY: `self.plan` is a live Z2Z plan for `batch` contiguous grids of `N` points,
        // bound to `self.stream`, and `p` points at exactly `batch N` device values (checked
        // above) that `data` borrows mutably for the call, on that same stream. cuFFT allows
        // `idata == odata` (in place) for Z2Z with the default layout. `Z` is cuFFT's own
        // `double2`, i.e. `cufftDoubleComplex`. `_record` keeps cudarc's stream ordering.
        unsafe { cufft::exec_z2z(self.plan.handle(), p, p, dir as i32) }
            .map_err(|e| GpuError::cuda("cuFFT exec", e))
    }
}
