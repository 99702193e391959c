//! The GPU as a [`SphereLocal`] device (feature `cuda`): planewave-gpu's batched local
//! operator (cuFFT plans of many bands, scatter, V(r) psi(r) and gather kernels).
//!
//! Contract: [`GpuSphere::open`] opens one GPU (its libraries found first, so a missing one is a
//! clean error) or says why not; [`SphereLocal::apply`] uploads the sphere, the potential and
//! the columns, applies the local part on the device in batches that fit half its free memory,
//! and downloads the result. One operator (plans and grid scratch) is kept per grid; calls are
//! serialised on the device's one stream.

use crate::device_local::SphereLocal;
use num_complex::Complex64;
use planewave_gpu::{max_batch, DeviceMatrix, Gpu, GpuError, IndexMap, LocalOperator};
use std::sync::Mutex;

/// The most bands per batched FFT (beyond it the batches only cost memory).
const BATCH_MAX: usize = 128;

/// One GPU applying the local part of H.
pub struct GpuSphere {
    description: String,
    device: Mutex<Device>,
}

/// The opened device and its operator for the last grid used.
struct Device {
    gpu: Gpu,
    op: Option<([usize; 3], LocalOperator)>,
}

impl GpuSphere {
    /// Open GPU `ordinal`; the error says why it cannot be used and what to do.
    pub fn open(ordinal: usize) -> Result<Self, String> {
        let gpu = Gpu::open(ordinal).map_err(|e| e.to_string())?;
        let name = gpu.name().map_err(|e| e.to_string())?;
        let (free, total) = gpu.memory().map_err(|e| e.to_string())?;
        let gib = |b: usize| b as f64 / f64::from(1u32 << 30);
        Ok(Self {
            description: format!(
                "GPU {ordinal}: {name} ({:.1} of {:.1} GiB free)",
                gib(free),
                gib(total)
            ),
            device: Mutex::new(Device { gpu, op: None }),
        })
    }
}

impl Device {
    /// The operator of grid `dims` on `map` with potential `v`, made or updated.
    fn operator(&mut self, map: &IndexMap, v: &[f64]) -> Result<&mut LocalOperator, GpuError> {
        let (dims, zeros) = (map.dims(), vec![0.0; map.len()]);
        match &mut self.op {
            Some((d, op)) if *d == dims => {
                op.set_sphere(&self.gpu, map, &zeros)?;
                op.set_potential(&self.gpu, v)?;
            }
            _ => {
                self.op = None; // free the old grid's scratch first
                let batch = max_batch(map.grid_len(), self.gpu.memory()?.0 / 2).min(BATCH_MAX);
                let op = LocalOperator::new(&self.gpu, map, &zeros, v, batch)?;
                self.op = Some((dims, op));
            }
        }
        Ok(&mut self.op.as_mut().expect("operator just made").1)
    }
}

impl SphereLocal for GpuSphere {
    fn describe(&self) -> String {
        self.description.clone()
    }

    fn apply(
        &self,
        dims: [usize; 3],
        sphere: &[usize],
        potential: &[f64],
        psi: &[Complex64],
        out: &mut [Complex64],
    ) -> Result<(), String> {
        let mut device = self
            .device
            .lock()
            .map_err(|_| "GPU state poisoned".to_string())?;
        let map = IndexMap::new(dims, sphere.to_vec()).map_err(|e| e.to_string())?;
        let (ng, nb) = (sphere.len(), psi.len() / sphere.len().max(1));
        let run = |device: &mut Device| -> Result<Vec<Complex64>, GpuError> {
            let x = DeviceMatrix::upload(&device.gpu, ng, nb, psi)?;
            let mut y = DeviceMatrix::zeros(&device.gpu, ng, nb)?;
            device.operator(&map, potential)?;
            let Device { gpu, op } = device;
            let op = &mut op.as_mut().expect("operator made above").1;
            op.apply(gpu, &x, &mut y)?;
            y.download(gpu)
        };
        let y = run(&mut device).map_err(|e| e.to_string())?;
        out.copy_from_slice(&y);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::device_local::{tests::same_as_cpu, DeviceLocal};
    use std::sync::Arc;

    /// H psi with its local part on the GPU equals the CPU's, complex and Γ-real bands (one
    /// skip line where no GPU opens; a failure instead under `PLANEWAVE_REQUIRE_GPU=1`).
    #[test]
    fn gpu_local_part_matches_the_cpu() {
        let gpu = match GpuSphere::open(0) {
            Ok(g) => g,
            Err(e) if planewave_gpu::testing::gpu_required() => {
                panic!("PLANEWAVE_REQUIRE_GPU=1 but no GPU: {e}")
            }
            Err(e) => return println!("skipped: no GPU ({e})"),
        };
        let device = DeviceLocal::new(Arc::new(gpu));
        same_as_cpu::<Complex64>(&device, false, 37);
        same_as_cpu::<f64>(&device, true, 37);
    }
}
