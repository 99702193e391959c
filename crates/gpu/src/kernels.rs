//! The crate's own CUDA kernels, compiled by NVRTC once per [`crate::Gpu`].
//!
//! Contract, for a block of `nb` bands of `ng` sphere coefficients (column-major, `ng x nb`) and
//! `nb` grids of `n` points (grid `b` at offset `b n`), with a [`DeviceMap`] `map` (sphere
//! index -> grid index, injective, every entry `< n`):
//! - [`Kernels::scatter`]: zero the grids, then `grid_b[map[g]] = c[g, b]`;
//! - [`Kernels::gather`]: `c[g, b] = scale * grid_b[map[g]]`;
//! - [`Kernels::mul_potential`]: `grid_b[r] *= v[r]` for every band;
//! - [`Kernels::add_kinetic`]: `out[g, b] += kin[g] * psi[g, b]` (`out` already holds the
//!   gathered local term, so `out = kin psi + gathered`).
//!
//! Every kernel is a grid-stride loop over the `ng nb` (or `n nb`) elements, 64-bit indices.
//! The wrappers check every length before launching: the bounds the kernels rely on.

use crate::complex::Z;
use crate::device::GpuError;
use crate::index_map::IndexMap;
use cudarc::driver::{
    CudaContext, CudaFunction, CudaSlice, CudaStream, CudaView, CudaViewMut, LaunchConfig,
    PushKernelArg,
};
use std::sync::Arc;

const SOURCE: &str = r#"
typedef long long i64;
#define STRIDE_LOOP(i, total) \
    for (i64 i = blockIdx.x * (i64)blockDim.x + threadIdx.x; i < (total); \
         i += (i64)gridDim.x * blockDim.x)

extern "C" __global__ void pw_scatter(double2* grids, const double2* coeffs, const int* map,
                                      i64 ng, i64 n, i64 total) {
    STRIDE_LOOP(i, total) {
        i64 b = i / ng, g = i - b * ng;
        grids[b * n + map[g]] = coeffs[i];
    }
}

extern "C" __global__ void pw_gather(double2* coeffs, const double2* grids, const int* map,
                                     i64 ng, i64 n, i64 total, double scale) {
    STRIDE_LOOP(i, total) {
        i64 b = i / ng, g = i - b * ng;
        double2 v = grids[b * n + map[g]];
        double2 r;
        r.x = scale * v.x;
        r.y = scale * v.y;
        coeffs[i] = r;
    }
}

extern "C" __global__ void pw_mul_potential(double2* grids, const double* v, i64 n, i64 total) {
    STRIDE_LOOP(i, total) {
        double s = v[i % n];
        grids[i].x *= s;
        grids[i].y *= s;
    }
}

extern "C" __global__ void pw_add_kinetic(double2* out, const double2* psi, const double* kin,
                                          i64 ng, i64 total) {
    STRIDE_LOOP(i, total) {
        double t = kin[i % ng];
        out[i].x += t * psi[i].x;
        out[i].y += t * psi[i].y;
    }
}
"#;

/// Threads per block of every kernel.
const THREADS: u32 = 256;
/// At most this many blocks (the loops stride over the rest).
const MAX_BLOCKS: u32 = 1 << 16;

/// A grid-stride launch for `total` elements (`total > 0`).
fn launch_config(total: usize) -> LaunchConfig {
    let blocks = total.div_ceil(THREADS as usize).min(MAX_BLOCKS as usize) as u32;
    LaunchConfig {
        grid_dim: (blocks.max(1), 1, 1),
        block_dim: (THREADS, 1, 1),
        shared_mem_bytes: 0,
    }
}

/// An [`IndexMap`] on the device: `ng` grid indices as `i32`, each `< grid_len`, no two equal.
pub struct DeviceMap {
    idx: CudaSlice<i32>,
    grid_len: usize,
}

impl DeviceMap {
    /// Upload `map` (its invariants are checked when it is built, so they hold here).
    pub(crate) fn upload(stream: &Arc<CudaStream>, map: &IndexMap) -> Result<Self, GpuError> {
        let idx: Vec<i32> = map.indices().iter().map(|&i| i as i32).collect();
        let idx = stream
            .clone_htod(&idx)
            .map_err(|e| GpuError::cuda("index map upload", e))?;
        Ok(DeviceMap {
            idx,
            grid_len: map.grid_len(),
        })
    }

    /// Number of sphere entries.
    pub(crate) fn len(&self) -> usize {
        self.idx.len()
    }
}

/// The compiled kernels.
pub(crate) struct Kernels {
    scatter: CudaFunction,
    gather: CudaFunction,
    mul_potential: CudaFunction,
    add_kinetic: CudaFunction,
}

impl Kernels {
    /// Compile [`SOURCE`] with NVRTC and load its functions into `ctx`.
    pub(crate) fn compile(ctx: &Arc<CudaContext>) -> Result<Self, GpuError> {
        let ptx = cudarc::nvrtc::compile_ptx(SOURCE).map_err(|e| GpuError::cuda("NVRTC", e))?;
        let module = ctx
            .load_module(ptx)
            .map_err(|e| GpuError::cuda("kernel module load", e))?;
        let f = |name: &str| {
            module
                .load_function(name)
                .map_err(|e| GpuError::cuda("kernel load", e))
        };
        Ok(Kernels {
            scatter: f("pw_scatter")?,
            gather: f("pw_gather")?,
            mul_potential: f("pw_mul_potential")?,
            add_kinetic: f("pw_add_kinetic")?,
        })
    }

    /// Zero `grids` (`nb` grids of `map.grid_len` points) and place the `nb` columns of `coeffs`
    /// (`map.len() x nb`) at the grid points of `map`.
    pub(crate) fn scatter(
        &self,
        stream: &Arc<CudaStream>,
        coeffs: &CudaView<'_, Z>,
        map: &DeviceMap,
        grids: &mut CudaViewMut<'_, Z>,
        nb: usize,
    ) -> Result<(), GpuError> {
        let (ng, n) = (map.len(), map.grid_len);
        assert_eq!(coeffs.len(), ng * nb, "scatter: coefficient block size");
        assert_eq!(grids.len(), n * nb, "scatter: grid block size");
        stream
            .memset_zeros(grids)
            .map_err(|e| GpuError::cuda("grid zeroing", e))?;
        let total = ng * nb;
        if total == 0 {
            return Ok(());
        }
        let (ng, n, t) = (ng as i64, n as i64, total as i64);
        let mut b = stream.launch_builder(&self.scatter);
        b.arg(grids)
            .arg(coeffs)
            .arg(&map.idx)
            .arg(&ng)
            .arg(&n)
            .arg(&t);
        // SAFETY: the arguments match `pw_scatter(double2*, const double2*, const int*, i64,
        // i64, i64)` in order and type (`Z` is `double2`). Element `i < ng nb = coeffs.len()` is
        // read from `coeffs`; it is written at `b n + map[g]` with `b < nb` and `map[g] < n`
        // (DeviceMap invariant), so below `nb n = grids.len()`. `map` is injective, so no two
        // threads write the same point; `grids` is borrowed mutably, so no other buffer aliases it.
        unsafe { b.launch(launch_config(total)) }
            .map_err(|e| GpuError::cuda("scatter kernel", e))?;
        Ok(())
    }

    /// `coeffs[g, b] = scale * grids_b[map[g]]` for the `nb` grids.
    pub(crate) fn gather(
        &self,
        stream: &Arc<CudaStream>,
        grids: &CudaView<'_, Z>,
        map: &DeviceMap,
        scale: f64,
        coeffs: &mut CudaViewMut<'_, Z>,
        nb: usize,
    ) -> Result<(), GpuError> {
        let (ng, n) = (map.len(), map.grid_len);
        assert_eq!(coeffs.len(), ng * nb, "gather: coefficient block size");
        assert_eq!(grids.len(), n * nb, "gather: grid block size");
        let total = ng * nb;
        if total == 0 {
            return Ok(());
        }
        let (ng, n, t) = (ng as i64, n as i64, total as i64);
        let mut b = stream.launch_builder(&self.gather);
        b.arg(coeffs)
            .arg(grids)
            .arg(&map.idx)
            .arg(&ng)
            .arg(&n)
            .arg(&t)
            .arg(&scale);
        // SAFETY: the arguments match `pw_gather(double2*, const double2*, const int*, i64, i64,
        // i64, double)` in order and type. Element `i < ng nb = coeffs.len()` is written, once;
        // the read at `b n + map[g]` is below `nb n = grids.len()` since `b < nb` and
        // `map[g] < n` (DeviceMap invariant). `coeffs` is borrowed mutably: it aliases nothing.
        unsafe { b.launch(launch_config(total)) }
            .map_err(|e| GpuError::cuda("gather kernel", e))?;
        Ok(())
    }

    /// `grids_b[r] *= v[r]` for every grid of the block (`grids.len()` a multiple of `v.len()`).
    pub(crate) fn mul_potential(
        &self,
        stream: &Arc<CudaStream>,
        v: &CudaSlice<f64>,
        grids: &mut CudaViewMut<'_, Z>,
    ) -> Result<(), GpuError> {
        let n = v.len();
        assert!(
            n > 0 && grids.len().is_multiple_of(n),
            "potential: grid block size"
        );
        let total = grids.len();
        if total == 0 {
            return Ok(());
        }
        let (n, t) = (n as i64, total as i64);
        let mut b = stream.launch_builder(&self.mul_potential);
        b.arg(grids).arg(v).arg(&n).arg(&t);
        // SAFETY: the arguments match `pw_mul_potential(double2*, const double*, i64, i64)` in
        // order and type. Element `i < total = grids.len()` is read and written by one thread
        // only; `v` is read at `i % n < n = v.len()`. `grids` is borrowed mutably, `v` shared:
        // they are different allocations.
        unsafe { b.launch(launch_config(total)) }
            .map_err(|e| GpuError::cuda("potential kernel", e))?;
        Ok(())
    }

    /// `out[g, b] += kin[g] * psi[g, b]` (`out`, `psi`: `kin.len() x nb`, same length).
    pub(crate) fn add_kinetic(
        &self,
        stream: &Arc<CudaStream>,
        psi: &CudaView<'_, Z>,
        kin: &CudaSlice<f64>,
        out: &mut CudaViewMut<'_, Z>,
    ) -> Result<(), GpuError> {
        let ng = kin.len();
        assert_eq!(psi.len(), out.len(), "kinetic: block sizes");
        assert!(
            ng > 0 && out.len().is_multiple_of(ng),
            "kinetic: block size"
        );
        let total = out.len();
        if total == 0 {
            return Ok(());
        }
        let (ng, t) = (ng as i64, total as i64);
        let mut b = stream.launch_builder(&self.add_kinetic);
        b.arg(out).arg(psi).arg(kin).arg(&ng).arg(&t);
        // SAFETY: the arguments match `pw_add_kinetic(double2*, const double2*, const double*,
        // i64, i64)` in order and type. Element `i < total = out.len() = psi.len()` of `out` is
        // read and written by one thread, of `psi` read; `kin` is read at `i % ng < kin.len()`.
        // `out` is borrowed mutably, so it aliases neither `psi` nor `kin`.
        unsafe { b.launch(launch_config(total)) }
            .map_err(|e| GpuError::cuda("kinetic kernel", e))?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn launch_covers_small_blocks_and_caps_large_ones() {
        assert_eq!(launch_config(1).grid_dim.0, 1);
        assert_eq!(launch_config(257).grid_dim.0, 2);
        assert_eq!(launch_config(usize::MAX / 2).grid_dim.0, MAX_BLOCKS);
    }
}
