//! The GPU as a [`SphereLocal`] device (feature `cuda`): planewave-gpu's batched local
//! operator (cuFFT plans of many bands, scatter, V(r) psi(r) and gather kernels).
//!
//! Contract: [`GpuSphere::open`] opens one GPU (its libraries found first, so a missing one is a
//! clean error) or says why not; [`SphereLocal::apply`] uploads the potential, the columns and
//! the sphere when it changed, applies the local part on the device in batches that fit half
//! its free memory, and downloads the result. One operator (plans and grid scratch) is kept per
//! grid and the two band blocks per shape; calls are serialised on the device's one stream.

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

/// The opened device, its operator for the last grid and sphere used, and the band blocks of
/// the last shape (kept: an SCF applies H to blocks of one shape on one sphere many times).
struct Device {
    gpu: Gpu,
    op: Option<([usize; 3], LocalOperator)>,
    sphere: Vec<usize>,
    blocks: Option<(DeviceMatrix, DeviceMatrix)>,
}

impl GpuSphere {
    /// Open GPU `ordinal`; the error says why it cannot be used and what to do.
    pub fn open(ordinal: usize) -> Result<Self, String> {
        let gpu = Gpu::open(ordinal).map_err(|e| e.to_string())?;
        let name = gpu.name().map_err(|e| e.to_string())?;
        let (free, total) = gpu.memory().map_err(|e| e.to_string())?;
        let gib = |b: usize| b as f64 / f64::from(1u32 << 30);
        let device = Device {
            gpu,
            op: None,
            sphere: Vec::new(),
            blocks: None,
        };
        Ok(Self {
            description: format!(
                "GPU {ordinal}: {name} ({:.1} of {:.1} GiB free)",
                gib(free),
                gib(total)
            ),
            device: Mutex::new(device),
        })
    }
}

impl Device {
    /// Make the operator that of grid `dims`, sphere `sphere` and potential `v`: the sphere is
    /// uploaded only when it changed, the grid's plans and scratch only when the grid did.
    fn prepare(&mut self, dims: [usize; 3], sphere: &[usize], v: &[f64]) -> Result<(), String> {
        let same_grid = matches!(&self.op, Some((d, _)) if *d == dims);
        if !same_grid || self.sphere != sphere {
            let map = IndexMap::new(dims, sphere.to_vec()).map_err(|e| e.to_string())?;
            let zeros = vec![0.0; sphere.len()]; // D psi is added on the host
            let gpu = &self.gpu;
            match &mut self.op {
                Some((_, op)) if same_grid => op.set_sphere(gpu, &map, &zeros),
                _ => {
                    self.op = None; // free the old grid's scratch first
                    let free = gpu.memory().map_err(|e| e.to_string())?.0;
                    let batch = max_batch(map.grid_len(), free / 2).min(BATCH_MAX);
                    LocalOperator::new(gpu, &map, &zeros, v, batch)
                        .map(|op| self.op = Some((dims, op)))
                }
            }
            .map_err(|e| e.to_string())?;
            self.sphere = sphere.to_vec();
        }
        let Some((_, op)) = &mut self.op else {
            unreachable!("operator made above")
        };
        op.set_potential(&self.gpu, v).map_err(|e| e.to_string())
    }

    /// `H_loc psi` for the `ng x nb` block `psi` through the prepared operator, in the kept
    /// device blocks (made again only when the shape changes).
    fn run(&mut self, ng: usize, nb: usize, psi: &[Complex64]) -> Result<Vec<Complex64>, GpuError> {
        let Device {
            gpu, op, blocks, ..
        } = self;
        let Some((_, op)) = op else {
            unreachable!("prepare() comes first")
        };
        if !matches!(blocks, Some((x, _)) if (x.rows(), x.cols()) == (ng, nb)) {
            *blocks = None; // free the old shape's blocks first
            *blocks = Some((
                DeviceMatrix::zeros(gpu, ng, nb)?,
                DeviceMatrix::zeros(gpu, ng, nb)?,
            ));
        }
        let Some((x, y)) = blocks else {
            unreachable!("blocks made above")
        };
        x.set(gpu, psi)?;
        op.apply(gpu, x, y)?;
        y.download(gpu)
    }
}

impl SphereLocal for GpuSphere {
    fn describe(&self) -> String {
        self.description.clone()
    }

    fn free_bytes(&self) -> Option<usize> {
        let device = self.device.lock().ok()?;
        device.gpu.memory().ok().map(|(free, _)| free)
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
        let (ng, nb) = (sphere.len(), psi.len() / sphere.len().max(1));
        device.prepare(dims, sphere, potential)?;
        let y = device.run(ng, nb, psi).map_err(|e| e.to_string())?;
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
