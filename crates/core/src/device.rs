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
use planewave_comm::Communicator;
pub use planewave_input::Device;

/// The local operator of `device` for a run whose G-vector groups have `gvector_ranks` ranks,
/// or why not (the same message on every rank).
pub fn open(
    device: Device,
    world: &dyn Communicator,
    gvector_ranks: usize,
) -> Result<Option<DeviceLocal>, String> {
    if device == Device::Cpu {
        return Ok(None);
    }
    let local = if gvector_ranks > 1 {
        Err(format!(
            "the GPU path keeps each band on one GPU, but this layout shares a band's plane \
             waves over {gvector_ranks} ranks (a G-vector group); give every rank its own \
             k-points or bands (--kpoint-groups times --band-groups equal to the rank count)"
        ))
    } else {
        let node_rank = world.split_shared().rank();
        open_gpu(node_rank)
    };
    agree_on(world, local)
        .map(Some)
        .map_err(|e| match e.failed < world.size() {
            true => format!("{} (on rank {} of {})", e.error, e.rank, world.size()),
            false => e.error,
        })
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
