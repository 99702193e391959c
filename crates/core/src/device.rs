//! The device a run's local part of H runs on (`[parallel] device`), opened and agreed.
//!
//! Contract: [`open`] is collective on `world`. For [`Device::Cpu`] it returns `None`. For
//! [`Device::Gpu`] each rank takes the GPU of its rank on its node (modulo the node's GPUs, so
//! ranks may share one), opened once per process and shared by the in-process ranks and the
//! steps of a relaxation; it is refused, by the same message on every rank, when this build
//! has no GPU support (feature `cuda`), when a rank's GPU cannot be opened, or when the layout
//! splits a band's plane waves over a G-vector group (each band's transforms stay on one GPU,
//! as in VASP and ABACUS).

use crate::device_local::DeviceLocal;
use crate::parallel::agree_on;
use crate::setup::MemoryParts;
use planewave_comm::Communicator;
pub use planewave_input::Device;

/// One rank's GPU memory (bytes) for the local part of H, estimated before the run.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct GpuMemory {
    /// The two band blocks (in and out) of the largest application: every band of the rank's
    /// band group at once, Γ-real bands two per complex column.
    pub blocks: f64,
    /// V(r), the sphere's map and the FFT scratch of one band (the operator takes as many bands
    /// per batched transform as half the free memory allows, one at the least).
    pub grids: f64,
}

impl GpuMemory {
    /// The estimate of a run with the sizes `parts` (whole-sphere plane waves, bands), an FFT
    /// grid of `grid_points`, `band_groups` groups sharing the bands, Γ-real bands or not.
    pub fn estimate(
        parts: &MemoryParts,
        grid_points: usize,
        band_groups: usize,
        gamma_real: bool,
    ) -> Self {
        let bands = parts.nbands.div_ceil(band_groups.max(1));
        let columns = if gamma_real { bands.div_ceil(2) } else { bands };
        let (pw, n) = (parts.plane_waves, grid_points as f64);
        GpuMemory {
            blocks: 2.0 * 16.0 * pw * columns as f64,
            // V (8 B), scratch and cuFFT work area (16 B each) per grid point; the map and
            // the kinetic diagonal (4 + 8 B) per plane wave.
            grids: 40.0 * n + 12.0 * pw,
        }
    }

    /// Bytes in all.
    pub fn total(&self) -> f64 {
        self.blocks + self.grids
    }

    /// "1210.5 MiB (band blocks 1100.2, FFT grids 110.3)".
    pub fn describe(&self) -> String {
        format!(
            "{:.1} MiB (band blocks {:.1}, FFT grids {:.1})",
            mib(self.total()),
            mib(self.blocks),
            mib(self.grids)
        )
    }
}

/// Bytes in MiB.
fn mib(bytes: f64) -> f64 {
    bytes / 1048576.0
}

/// The local operator of `device` for a run whose G-vector groups have `gvector_ranks` ranks
/// and which needs `needed` of each rank's GPU, or why not (the same message on every rank).
pub fn open(
    device: Device,
    world: &dyn Communicator,
    gvector_ranks: usize,
    needed: GpuMemory,
) -> Result<Option<DeviceLocal>, String> {
    if device == Device::Cpu {
        return Ok(None);
    }
    let local = match refused_layout(gvector_ranks) {
        Some(e) => Err(e),
        None => open_gpu(world.split_shared().rank()).and_then(|d| fits(d, needed)),
    };
    agree_on(world, local)
        .map(Some)
        .map_err(|e| match e.failed < world.size() {
            true => format!("{} (on rank {} of {})", e.error, e.rank, world.size()),
            false => e.error,
        })
}

/// Why a layout with G-vector groups of `gvector_ranks` ranks cannot run on GPUs, if it cannot.
pub fn refused_layout(gvector_ranks: usize) -> Option<String> {
    (gvector_ranks > 1).then(|| {
        format!(
            "the GPU path keeps each band on one GPU, but this layout shares a band's plane \
             waves over {gvector_ranks} ranks (a G-vector group); give every rank its own \
             k-points or bands (--kpoint-groups times --band-groups equal to the rank count)"
        )
    })
}

/// `d` when its free memory holds `needed`, or the refusal with both numbers.
fn fits(d: DeviceLocal, needed: GpuMemory) -> Result<DeviceLocal, String> {
    match d.free_bytes() {
        Some(free) if (free as f64) < needed.total() => Err(format!(
            "this run needs about {} of GPU memory per rank, but {} has {:.1} MiB free; \
             share the bands over more ranks (--band-groups) or GPUs",
            needed.describe(),
            d.describe(),
            mib(free as f64)
        )),
        _ => Ok(d),
    }
}

/// This process's GPU for node rank `node_rank`, opened on first use.
#[cfg(feature = "cuda")]
fn open_gpu(node_rank: usize) -> Result<DeviceLocal, String> {
    use std::collections::HashMap;
    use std::sync::{Arc, Mutex, OnceLock};
    static OPENED: OnceLock<Mutex<HashMap<usize, DeviceLocal>>> = OnceLock::new();
    let count = planewave_gpu::Gpu::count().map_err(|e| e.to_string())?;
    if count == 0 {
        return Err("no GPU is visible to this process (check nvidia-smi and \
                    CUDA_VISIBLE_DEVICES)"
            .into());
    }
    let ordinal = node_rank % count;
    let mut opened = OPENED
        .get_or_init(Default::default)
        .lock()
        .expect("GPU table");
    if let Some(d) = opened.get(&ordinal) {
        return Ok(d.clone());
    }
    let gpu = crate::gpu_local::GpuSphere::open(ordinal)?;
    let d = DeviceLocal::new(Arc::new(gpu));
    opened.insert(ordinal, d.clone());
    Ok(d)
}

/// Without the `cuda` feature there is no GPU to open.
#[cfg(not(feature = "cuda"))]
fn open_gpu(_node_rank: usize) -> Result<DeviceLocal, String> {
    Err(
        "this planewave was built without GPU support: build it with \
         `cargo build --release --features cuda` (no CUDA needed to build; the libraries are \
         found at run time)"
            .into(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::device_local::SphereLocal;
    use num_complex::Complex64;
    use std::sync::Arc;

    /// A device with `free` bytes that computes nothing.
    struct Small(usize);

    impl SphereLocal for Small {
        fn describe(&self) -> String {
            "test device".into()
        }
        fn apply(
            &self,
            _: [usize; 3],
            _: &[usize],
            _: &[f64],
            _: &[Complex64],
            _: &mut [Complex64],
        ) -> Result<(), String> {
            Err("not a device".into())
        }
        fn free_bytes(&self) -> Option<usize> {
            Some(self.0)
        }
    }

    #[test]
    fn a_run_that_does_not_fit_the_gpu_is_refused_with_both_numbers() {
        let needed = GpuMemory {
            blocks: 3.0 * 1048576.0,
            grids: 1048576.0,
        };
        let small = DeviceLocal::new(Arc::new(Small(2 << 20)));
        let e = fits(small, needed).unwrap_err();
        assert!(
            e.contains("needs about 4.0 MiB (band blocks 3.0, FFT grids 1.0)"),
            "{e}"
        );
        assert!(e.contains("test device has 2.0 MiB free"), "{e}");
        assert!(fits(DeviceLocal::new(Arc::new(Small(5 << 20))), needed).is_ok());
    }

    #[test]
    fn gamma_real_bands_need_half_the_blocks_and_band_groups_share_them() {
        let model_free = |nbands| MemoryParts {
            kpoint_bands: 0.0,
            working_set: 0.0,
            grids: 0.0,
            exchange: 0.0,
            augmentation: 0.0,
            base: 0.0,
            blocks: 1,
            nbands,
            plane_waves: 1000.0,
        };
        let complex = GpuMemory::estimate(&model_free(8), 4096, 1, false);
        assert_eq!(complex.blocks, 2.0 * 16.0 * 1000.0 * 8.0);
        assert_eq!(complex.grids, 40.0 * 4096.0 + 12.0 * 1000.0);
        let gamma = GpuMemory::estimate(&model_free(8), 4096, 1, true);
        assert_eq!(gamma.blocks, complex.blocks / 2.0);
        let shared = GpuMemory::estimate(&model_free(8), 4096, 2, false);
        assert_eq!(shared.blocks, complex.blocks / 2.0);
        // An odd band count rounds up: 7 Γ-real bands are 4 complex columns.
        let odd = GpuMemory::estimate(&model_free(7), 4096, 1, true);
        assert_eq!(odd.blocks, 2.0 * 16.0 * 1000.0 * 4.0);
    }
}
