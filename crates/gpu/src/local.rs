//! `LocalOperator`: the kinetic and local-potential part of H applied to a block of bands on the
//! device, `out = kin psi + P_sphere (1/N) FFT_fwd(V(r) FFT_bwd(scatter psi))`.
//!
//! Contract: built from a valid [`IndexMap`] (sphere -> grid, planewave-fft's C-order layout),
//! the kinetic diagonal (one value per sphere entry) and V(r) (one real value per grid point, C
//! order). [`LocalOperator::apply`] takes `psi` and `out` as `ng x nb` [`DeviceMatrix`] blocks
//! and goes through the bands in batches of at most `max_batch` (one batched cuFFT plan per
//! batch size, kept), with a scratch of `max_batch` grids kept between calls. The result is that
//! of planewave-core's host `apply_local` (and of [`crate::reference::apply_local`]).

use crate::batch::band_batches;
use crate::blas::DeviceMatrix;
use crate::complex::Z;
use crate::device::{Gpu, GpuError};
use crate::fft::BatchedFft;
use crate::index_map::IndexMap;
use crate::kernels::DeviceMap;
use cudarc::driver::CudaSlice;

/// Kinetic + local potential on the device for one sphere and grid.
pub struct LocalOperator {
    map: DeviceMap,
    dims: [usize; 3],
    kin: CudaSlice<f64>,
    v: CudaSlice<f64>,
    max_batch: usize,
    grids: CudaSlice<Z>,
    plans: Vec<BatchedFft>,
}

impl LocalOperator {
    /// Upload the map, `kinetic` (`map.len()` values) and `potential` (`map.grid_len()`
    /// values); batches of at most `max_batch >= 1` bands (see [`crate::max_batch`]).
    pub fn new(
        gpu: &Gpu,
        map: &IndexMap,
        kinetic: &[f64],
        potential: &[f64],
        max_batch: usize,
    ) -> Result<Self, GpuError> {
        assert_eq!(kinetic.len(), map.len(), "LocalOperator: kinetic length");
        assert_eq!(
            potential.len(),
            map.grid_len(),
            "LocalOperator: potential length"
        );
        assert!(
            max_batch >= 1,
            "LocalOperator: max_batch must be at least 1"
        );
        let stream = gpu.stream();
        let up = |e| GpuError::cuda("upload", e);
        let grids = stream
            .alloc_zeros::<Z>(map.grid_len() * max_batch)
            .map_err(|e| GpuError::cuda("device allocation", e))?;
        Ok(LocalOperator {
            map: DeviceMap::upload(stream, map)?,
            dims: map.dims(),
            kin: stream.clone_htod(kinetic).map_err(up)?,
            v: stream.clone_htod(potential).map_err(up)?,
            max_batch,
            grids,
            plans: Vec::new(),
        })
    }

    /// Replace V(r) (`grid_len` values), e.g. after an SCF step.
    pub fn set_potential(&mut self, gpu: &Gpu, potential: &[f64]) -> Result<(), GpuError> {
        assert_eq!(
            potential.len(),
            self.v.len(),
            "LocalOperator: potential length"
        );
        gpu.stream()
            .memcpy_htod(potential, &mut self.v)
            .map_err(|e| GpuError::cuda("upload", e))
    }

    /// Replace the sphere (`map`, on this operator's grid) and its kinetic diagonal
    /// (`map.len()` values): another k-point's plane waves.
    pub fn set_sphere(
        &mut self,
        gpu: &Gpu,
        map: &IndexMap,
        kinetic: &[f64],
    ) -> Result<(), GpuError> {
        assert_eq!(
            map.dims(),
            self.dims,
            "LocalOperator: sphere on another grid"
        );
        assert_eq!(kinetic.len(), map.len(), "LocalOperator: kinetic length");
        let stream = gpu.stream();
        self.map = DeviceMap::upload(stream, map)?;
        self.kin = stream
            .clone_htod(kinetic)
            .map_err(|e| GpuError::cuda("upload", e))?;
        Ok(())
    }

    /// Number of plane waves (rows of a band block).
    pub fn n_plane_waves(&self) -> usize {
        self.map.len()
    }

    /// `out = kin psi + P (1/N) FFT_fwd(V FFT_bwd(scatter psi))` for every column of `psi`.
    pub fn apply(
        &mut self,
        gpu: &Gpu,
        psi: &DeviceMatrix,
        out: &mut DeviceMatrix,
    ) -> Result<(), GpuError> {
        let (ng, nb) = (psi.rows(), psi.cols());
        assert_eq!(
            ng,
            self.map.len(),
            "LocalOperator: psi rows are not the sphere size"
        );
        assert_eq!(
            (out.rows(), out.cols()),
            (ng, nb),
            "LocalOperator: out shape"
        );
        let n: usize = self.dims.iter().product();
        let (stream, k) = (gpu.stream(), gpu.kernels());
        for bands in band_batches(nb, self.max_batch) {
            let nbb = bands.len();
            let pi = self.plan_index(gpu, nbb)?;
            let plan = &self.plans[pi];
            let x = psi.data().slice(bands.start * ng..bands.end * ng);
            let mut y = out.data_mut().slice_mut(bands.start * ng..bands.end * ng);
            let mut grids = self.grids.slice_mut(0..n * nbb);
            k.scatter(stream, &x, &self.map, &mut grids, nbb)?;
            plan.backward_view(&mut grids)?;
            k.mul_potential(stream, &self.v, &mut grids)?;
            plan.forward_view(&mut grids)?;
            k.gather(
                stream,
                &grids.as_view(),
                &self.map,
                1.0 / n as f64,
                &mut y,
                nbb,
            )?;
            k.add_kinetic(stream, &x, &self.kin, &mut y)?;
        }
        Ok(())
    }

    /// Index in `plans` of the plan for batches of `nbb` bands (made on first use, then kept).
    fn plan_index(&mut self, gpu: &Gpu, nbb: usize) -> Result<usize, GpuError> {
        if let Some(i) = self.plans.iter().position(|p| p.batch() == nbb) {
            return Ok(i);
        }
        self.plans.push(BatchedFft::new(gpu, self.dims, nbb)?);
        Ok(self.plans.len() - 1)
    }
}
