//! `DeviceMatrix` (a column-major complex matrix on the device) and `zgemm` through cuBLAS.
//!
//! Contract: a `DeviceMatrix` of `rows x cols` holds exactly `rows cols` values, column-major
//! (entry `(i, j)` at `i + j rows`), like faer's and planewave's band blocks. [`zgemm`] computes
//! `C = alpha op(A) op(B) + beta C` with `op` = [`Op::N`] (as is) or [`Op::C`] (conjugate
//! transpose), by `cublasZgemm_v2` (cudarc's safe `Gemm` has no complex types).

use crate::complex::{from_device_layout, to_device_layout, Z};
use crate::device::{Gpu, GpuError};
use crate::C64;
use cudarc::cublas::sys as cublas;
use cudarc::driver::{CudaSlice, DevicePtr, DevicePtrMut};

/// A complex column-major matrix on the device.
pub struct DeviceMatrix {
    rows: usize,
    cols: usize,
    data: CudaSlice<Z>,
}

impl DeviceMatrix {
    /// A `rows x cols` matrix of zeros.
    pub fn zeros(gpu: &Gpu, rows: usize, cols: usize) -> Result<Self, GpuError> {
        let n = rows.checked_mul(cols).expect("matrix size overflows");
        let data = gpu
            .stream()
            .alloc_zeros::<Z>(n)
            .map_err(|e| GpuError::cuda("device allocation", e))?;
        Ok(DeviceMatrix { rows, cols, data })
    }

    /// Copy `host` (`rows x cols`, column-major) to the device.
    pub fn upload(gpu: &Gpu, rows: usize, cols: usize, host: &[C64]) -> Result<Self, GpuError> {
        assert_eq!(
            host.len(),
            rows * cols,
            "upload: host length is not rows x cols"
        );
        let data = gpu
            .stream()
            .clone_htod(&to_device_layout(host))
            .map_err(|e| GpuError::cuda("upload", e))?;
        Ok(DeviceMatrix { rows, cols, data })
    }

    /// Overwrite the matrix with `host` (`rows x cols`, column-major), keeping its allocation.
    pub fn set(&mut self, gpu: &Gpu, host: &[C64]) -> Result<(), GpuError> {
        assert_eq!(
            host.len(),
            self.rows * self.cols,
            "set: host length is not rows x cols"
        );
        gpu.stream()
            .memcpy_htod(&to_device_layout(host), &mut self.data)
            .map_err(|e| GpuError::cuda("upload", e))
    }

    /// Copy the matrix back (column-major); waits for the work queued before it.
    pub fn download(&self, gpu: &Gpu) -> Result<Vec<C64>, GpuError> {
        let v = gpu
            .stream()
            .clone_dtoh(&self.data)
            .map_err(|e| GpuError::cuda("download", e))?;
        Ok(from_device_layout(&v))
    }

    /// Number of rows.
    pub fn rows(&self) -> usize {
        self.rows
    }

    /// Number of columns.
    pub fn cols(&self) -> usize {
        self.cols
    }

    pub(crate) fn data(&self) -> &CudaSlice<Z> {
        &self.data
    }

    pub(crate) fn data_mut(&mut self) -> &mut CudaSlice<Z> {
        &mut self.data
    }
}

/// How a matrix enters a product.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    /// As is.
    N,
    /// Conjugate transpose.
    C,
}

impl Op {
    /// Shape of `op(M)` for `M` of `shape`.
    fn shape(self, m: &DeviceMatrix) -> (usize, usize) {
        match self {
            Op::N => (m.rows, m.cols),
            Op::C => (m.cols, m.rows),
        }
    }

    fn cublas(self) -> cublas::cublasOperation_t {
        match self {
            Op::N => cublas::cublasOperation_t::CUBLAS_OP_N,
            Op::C => cublas::cublasOperation_t::CUBLAS_OP_C,
        }
    }
}

/// `C = alpha op_a(A) op_b(B) + beta C` on the device.
#[allow(clippy::too_many_arguments)]
pub fn zgemm(
    gpu: &Gpu,
    alpha: C64,
    op_a: Op,
    a: &DeviceMatrix,
    op_b: Op,
    b: &DeviceMatrix,
    beta: C64,
    c: &mut DeviceMatrix,
) -> Result<(), GpuError> {
    let ((m, k), (kb, n)) = (op_a.shape(a), op_b.shape(b));
    assert_eq!(k, kb, "zgemm: inner dimensions differ");
    assert_eq!((c.rows, c.cols), (m, n), "zgemm: C has the wrong shape");
    let fits = |x: usize| x <= i32::MAX as usize;
    assert!(
        [m, n, k, a.rows, b.rows].into_iter().all(fits),
        "zgemm: dimension over i32"
    );
    if m == 0 || n == 0 {
        return Ok(());
    }
    let stream = gpu.stream();
    stream
        .context()
        .bind_to_thread()
        .map_err(|e| GpuError::cuda("CUDA context", e))?;
    let al = cublas::cuDoubleComplex {
        x: alpha.re,
        y: alpha.im,
    };
    let be = cublas::cuDoubleComplex {
        x: beta.re,
        y: beta.im,
    };
    let (lda, ldb, ldc) = (
        a.rows.max(1) as i32,
        b.rows.max(1) as i32,
        c.rows.max(1) as i32,
    );
    let (pa, _ra) = a.data.device_ptr(stream);
    let (pb, _rb) = b.data.device_ptr(stream);
    let (pc, _rc) = c.data.device_ptr_mut(stream);
    // SAFETY: the handle is the Gpu's live cuBLAS handle, bound to `stream`, on which the three
    // pointers are valid. Each matrix holds exactly `rows cols` values (DeviceMatrix invariant)
    // and its leading dimension is its row count, so cuBLAS reads `op_a(A)` (m x k), `op_b(B)`
    // (k x n) and writes C (m x n) inside their allocations (shapes checked above, all within
    // i32). `c` is borrowed mutably, so C aliases neither A nor B. `al` and `be` are host
    // values (pointer mode host, cuBLAS's default) alive for the call. cuBLAS's `double2` has
    // the layout of `Z` (checked in `complex`).
    let status = unsafe {
        cublas::cublasZgemm_v2(
            *gpu.blas().handle(),
            op_a.cublas(),
            op_b.cublas(),
            m as i32,
            n as i32,
            k as i32,
            &al,
            pa as *const cublas::cuDoubleComplex,
            lda,
            pb as *const cublas::cuDoubleComplex,
            ldb,
            &be,
            pc as *mut cublas::cuDoubleComplex,
            ldc,
        )
    };
    match status {
        cublas::cublasStatus_t::CUBLAS_STATUS_SUCCESS => Ok(()),
        s => Err(GpuError::cuda("cublasZgemm", s)),
    }
}
