//! `HermitianEigensolver`: all eigenpairs of a Hermitian device matrix by cuSOLVER's ZHEEVD.
//!
//! Contract: built once for an order `n` (the workspace size is queried once and the workspace,
//! eigenvalue and status buffers kept); [`HermitianEigensolver::solve`] takes an `n x n`
//! Hermitian [`DeviceMatrix`] (only its lower triangle is read), overwrites it with the
//! orthonormal eigenvectors (column `j` for eigenvalue `j`) and returns the eigenvalues in
//! ascending order. A failure of the algorithm (`info != 0`) is an `Err`.

use crate::blas::DeviceMatrix;
use crate::complex::Z;
use crate::device::{Gpu, GpuError};
use cudarc::cusolver::sys as sol;
use cudarc::driver::{CudaSlice, DevicePtr, DevicePtrMut};

const JOBZ: sol::cusolverEigMode_t = sol::cusolverEigMode_t::CUSOLVER_EIG_MODE_VECTOR;
const UPLO: sol::cublasFillMode_t = sol::cublasFillMode_t::CUBLAS_FILL_MODE_LOWER;

/// ZHEEVD of a fixed order with its workspace.
pub struct HermitianEigensolver {
    n: usize,
    lwork: i32,
    work: CudaSlice<Z>,
    w: CudaSlice<f64>,
    info: CudaSlice<i32>,
}

fn check(what: &'static str, s: sol::cusolverStatus_t) -> Result<(), GpuError> {
    match s {
        sol::cusolverStatus_t::CUSOLVER_STATUS_SUCCESS => Ok(()),
        s => Err(GpuError::cuda(what, s)),
    }
}

impl HermitianEigensolver {
    /// Query and allocate the workspace for order `n` (`1 <= n <= i32::MAX`).
    pub fn new(gpu: &Gpu, n: usize) -> Result<Self, GpuError> {
        assert!(n >= 1 && n <= i32::MAX as usize, "zheevd: bad order {n}");
        let stream = gpu.stream();
        let alloc = |e| GpuError::cuda("device allocation", e);
        let probe = DeviceMatrix::zeros(gpu, n, n)?;
        let w = stream.alloc_zeros::<f64>(n).map_err(alloc)?;
        let info = stream.alloc_zeros::<i32>(1).map_err(alloc)?;
        let mut lwork = 0i32;
        {
            let (pa, _ra) = probe.data().device_ptr(stream);
            let (pw, _rw) = w.device_ptr(stream);
            // SAFETY: the handle is the Gpu's live cuSOLVER handle on `stream`; `pa` points at
            // an n x n matrix (leading dimension n) and `pw` at n doubles, both valid on that
            // stream (the query reads neither); `lwork` is a live host i32 it writes.
            let s = unsafe {
                sol::cusolverDnZheevd_bufferSize(
                    gpu.solver().cu(),
                    JOBZ,
                    UPLO,
                    n as i32,
                    pa as *const sol::cuDoubleComplex,
                    n as i32,
                    pw as *const f64,
                    &mut lwork,
                )
            };
            check("cusolverDnZheevd_bufferSize", s)?;
        }
        let work = stream
            .alloc_zeros::<Z>(lwork.max(1) as usize)
            .map_err(alloc)?;
        Ok(HermitianEigensolver {
            n,
            lwork,
            work,
            w,
            info,
        })
    }

    /// The order this solver was built for.
    pub fn order(&self) -> usize {
        self.n
    }

    /// Eigenvalues (ascending) of Hermitian `a`; `a` becomes the eigenvectors.
    pub fn solve(&mut self, gpu: &Gpu, a: &mut DeviceMatrix) -> Result<Vec<f64>, GpuError> {
        let n = self.n;
        assert_eq!(
            (a.rows(), a.cols()),
            (n, n),
            "zheevd: matrix is not {n} x {n}"
        );
        let stream = gpu.stream();
        stream
            .context()
            .bind_to_thread()
            .map_err(|e| GpuError::cuda("CUDA context", e))?;
        {
            let (pa, _ra) = a.data_mut().device_ptr_mut(stream);
            let (pw, _rw) = self.w.device_ptr_mut(stream);
            let (pk, _rk) = self.work.device_ptr_mut(stream);
            let (pi, _ri) = self.info.device_ptr_mut(stream);
            // SAFETY: the handle is the Gpu's live cuSOLVER handle on `stream`, where all four
            // pointers are valid: `a` holds n x n values (leading dimension n, shape checked),
            // `w` n doubles, `work` `lwork` values (the size cuSOLVER asked for this n, jobz
            // and uplo), `info` one int. Each buffer is borrowed mutably and distinct, so
            // nothing cuSOLVER writes aliases anything else. cuSOLVER's `double2` has the
            // layout of `Z`.
            let s = unsafe {
                sol::cusolverDnZheevd(
                    gpu.solver().cu(),
                    JOBZ,
                    UPLO,
                    n as i32,
                    pa as *mut sol::cuDoubleComplex,
                    n as i32,
                    pw as *mut f64,
                    pk as *mut sol::cuDoubleComplex,
                    self.lwork,
                    pi as *mut i32,
                )
            };
            check("cusolverDnZheevd", s)?;
        }
        let info = stream
            .clone_dtoh(&self.info)
            .map_err(|e| GpuError::cuda("download", e))?;
        if info[0] != 0 {
            return Err(GpuError::cuda("zheevd (info)", info[0]));
        }
        stream
            .clone_dtoh(&self.w)
            .map_err(|e| GpuError::cuda("download", e))
    }
}
