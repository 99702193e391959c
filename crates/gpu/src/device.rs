//! `Gpu`: one CUDA device opened for the back end, and [`GpuError`], every failure of the crate.
//!
//! Contract: [`Gpu::open`] finds the libraries first ([`crate::discovery`]) and checks that the
//! dynamic loader can open each of them, so that a missing library is an `Err` (cudarc's loaders
//! panic); only then does it create the CUDA context, one stream, a cuBLAS handle, a cuSOLVER
//! handle (its first creation costs ~0.1 s, so once per `Gpu`) and compile the NVRTC kernels.
//! All work of the crate is queued on that one stream, in order.

use crate::discovery::{self, find_library, MissingLibrary, SearchPath};
use crate::kernels::Kernels;
use cudarc::cublas::CudaBlas;
use cudarc::cusolver::DnHandle;
use cudarc::driver::{CudaContext, CudaStream};
use std::fmt;
use std::path::PathBuf;
use std::sync::Arc;

/// Why the GPU could not be opened or a GPU operation failed. The message says what to do.
#[derive(Clone, Debug)]
pub enum GpuError {
    /// A CUDA library was found in none of the folders searched, nor by the loader.
    MissingLibrary(MissingLibrary),
    /// A library file was found but the dynamic loader cannot open it (not on its path, or a
    /// library it needs is missing).
    NotLoadable {
        /// Short name (`cufft`).
        name: &'static str,
        /// The file found on disk, if any.
        path: Option<PathBuf>,
    },
    /// The driver loads but there is no device `ordinal`.
    NoDevice {
        /// The device asked for.
        ordinal: usize,
        /// What the driver said.
        detail: String,
    },
    /// A CUDA call failed (`what`: the library or operation; `detail`: its error).
    Cuda {
        /// Library or operation.
        what: &'static str,
        /// The error returned.
        detail: String,
    },
}

impl fmt::Display for GpuError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            GpuError::MissingLibrary(m) if m.name == "cuda" => write!(
                f,
                "no NVIDIA driver: {m}; run with --device cpu (or install the driver)"
            ),
            GpuError::MissingLibrary(m) => write!(
                f,
                "{m}: set LD_LIBRARY_PATH to the folder of {} (CUDA 13: /usr/local/cuda/lib64 or \
                 a Python site-packages/nvidia/*/lib), or run with --device cpu",
                discovery::usual_file_name(m.name)
            ),
            GpuError::NotLoadable {
                name,
                path: Some(p),
            } => write!(
                f,
                "found {} but the dynamic loader cannot open lib{name}: start the program with \
                 LD_LIBRARY_PATH={}:$LD_LIBRARY_PATH (the loader reads it at start-up; the \
                 libraries lib{name} needs must be there too), or run with --device cpu",
                p.display(),
                p.parent()
                    .map_or(String::new(), |d| d.display().to_string())
            ),
            GpuError::NotLoadable { name, path: None } => write!(
                f,
                "the dynamic loader cannot open lib{name}: set LD_LIBRARY_PATH to its folder, or \
                 run with --device cpu"
            ),
            GpuError::NoDevice { ordinal, detail } => {
                write!(
                    f,
                    "no CUDA device {ordinal} ({detail}): run with --device cpu"
                )
            }
            GpuError::Cuda { what, detail } => write!(f, "{what} failed: {detail}"),
        }
    }
}

impl std::error::Error for GpuError {}

impl GpuError {
    /// A failed CUDA call.
    pub(crate) fn cuda(what: &'static str, e: impl fmt::Debug) -> Self {
        GpuError::Cuda {
            what,
            detail: format!("{e:?}"),
        }
    }
}

/// An opened CUDA device: context, one stream, library handles, compiled kernels.
pub struct Gpu {
    ctx: Arc<CudaContext>,
    stream: Arc<CudaStream>,
    blas: CudaBlas,
    solver: DnHandle,
    kernels: Kernels,
}

impl fmt::Debug for Gpu {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Gpu")
            .field("ordinal", &self.ctx.ordinal())
            .finish()
    }
}

impl Gpu {
    /// How many CUDA devices the driver sees (libraries searched and checked first, as by
    /// [`Gpu::open`]).
    pub fn count() -> Result<usize, GpuError> {
        check_libraries(&SearchPath::from_env())?;
        let count = CudaContext::device_count().map_err(|e| GpuError::NoDevice {
            ordinal: 0,
            detail: format!("{e:?}"),
        })?;
        Ok(count.max(0) as usize)
    }

    /// Open device `ordinal` (libraries searched with [`SearchPath::from_env`]).
    pub fn open(ordinal: usize) -> Result<Gpu, GpuError> {
        check_libraries(&SearchPath::from_env())?;
        let count = CudaContext::device_count().map_err(|e| GpuError::NoDevice {
            ordinal,
            detail: format!("{e:?}"),
        })?;
        if ordinal >= count.max(0) as usize {
            let detail = format!("the driver sees {count} device(s)");
            return Err(GpuError::NoDevice { ordinal, detail });
        }
        let ctx = CudaContext::new(ordinal).map_err(|e| GpuError::cuda("CUDA context", e))?;
        let stream = ctx
            .new_stream()
            .map_err(|e| GpuError::cuda("CUDA stream", e))?;
        let blas = CudaBlas::new(stream.clone()).map_err(|e| GpuError::cuda("cuBLAS handle", e))?;
        let solver =
            DnHandle::new(stream.clone()).map_err(|e| GpuError::cuda("cuSOLVER handle", e))?;
        let kernels = Kernels::compile(&ctx)?;
        Ok(Gpu {
            ctx,
            stream,
            blas,
            solver,
            kernels,
        })
    }

    /// The device's name (e.g. "NVIDIA H100 80GB HBM3").
    pub fn name(&self) -> Result<String, GpuError> {
        self.ctx
            .name()
            .map_err(|e| GpuError::cuda("device name", e))
    }

    /// `(free, total)` device memory in bytes.
    pub fn memory(&self) -> Result<(usize, usize), GpuError> {
        self.ctx
            .mem_get_info()
            .map_err(|e| GpuError::cuda("memory info", e))
    }

    /// Wait until everything queued on the stream is done.
    pub fn synchronize(&self) -> Result<(), GpuError> {
        self.stream
            .synchronize()
            .map_err(|e| GpuError::cuda("stream synchronize", e))
    }

    /// The stream all work is queued on.
    pub fn stream(&self) -> &Arc<CudaStream> {
        &self.stream
    }

    pub(crate) fn blas(&self) -> &CudaBlas {
        &self.blas
    }

    pub(crate) fn solver(&self) -> &DnHandle {
        &self.solver
    }

    pub(crate) fn kernels(&self) -> &Kernels {
        &self.kernels
    }
}

/// Each library of [`discovery::REQUIRED`] must be openable by the dynamic loader (what cudarc
/// will do, panicking if it cannot); for one that is not, the file search of
/// [`discovery::find_library`] says whether it is missing or only off the loader's path. A
/// library the loader opens is accepted even where the file search would miss it (e.g. found
/// through the loader's cache).
pub fn check_libraries(search: &SearchPath) -> Result<(), GpuError> {
    for name in discovery::REQUIRED {
        if loader_opens(name) {
            continue;
        }
        // cuBLAS fails to open when its dependency cuBLASLt is missing: name the culprit.
        let culprit = match name {
            "cublas" if find_library("cublasLt", search).is_err() => "cublasLt",
            _ => name,
        };
        return Err(match find_library(culprit, search) {
            Ok(found) => GpuError::NotLoadable {
                name: culprit,
                path: Some(found.path),
            },
            Err(missing) => GpuError::MissingLibrary(missing),
        });
    }
    Ok(())
}

/// True when the dynamic loader opens library `name` under one of cudarc's candidate names.
fn loader_opens(name: &str) -> bool {
    // SAFETY: each `is_culib_present` only dlopens (and closes again) the library under the
    // names cudarc itself would load; running a CUDA library's initialisers is what cudarc does
    // on first use anyway, and no symbol is called. cublasLt has no cudarc module enabled here:
    // it is opened by the loader as a dependency of cuBLAS, so cuBLAS's check covers it.
    unsafe {
        match name {
            "cuda" => cudarc::driver::sys::is_culib_present(),
            "cufft" => cudarc::cufft::sys::is_culib_present(),
            "cublas" | "cublasLt" => cudarc::cublas::sys::is_culib_present(),
            "cusolver" => cudarc::cusolver::sys::is_culib_present(),
            "nvrtc" => cudarc::nvrtc::sys::is_culib_present(),
            _ => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn missing(name: &'static str) -> GpuError {
        GpuError::MissingLibrary(MissingLibrary {
            name,
            file_names: discovery::candidate_names(name),
            searched: vec![PathBuf::from("/nowhere")],
        })
    }

    #[test]
    fn messages_say_what_to_do() {
        let m = missing("cufft").to_string();
        assert!(
            m.contains("LD_LIBRARY_PATH") && m.contains("libcufft.so.12"),
            "{m}"
        );
        assert!(m.contains("/nowhere") && m.contains("--device cpu"), "{m}");
        let m = missing("cuda").to_string();
        assert!(
            m.contains("no NVIDIA driver") && m.contains("--device cpu"),
            "{m}"
        );
        let e = GpuError::NoDevice {
            ordinal: 0,
            detail: "the driver sees 0 device(s)".into(),
        };
        assert!(e.to_string().contains("run with --device cpu"));
        let e = GpuError::NotLoadable {
            name: "nvrtc",
            path: Some(PathBuf::from("/x/lib/libnvrtc.so.13")),
        };
        assert!(e.to_string().contains("LD_LIBRARY_PATH=/x/lib:"), "{e}");
    }

    #[test]
    fn a_library_found_off_the_loader_path_is_reported_with_its_folder() {
        let d = std::env::temp_dir().join(format!("planewave-gpu-dev-{}", std::process::id()));
        std::fs::create_dir_all(&d).unwrap();
        for name in discovery::REQUIRED {
            std::fs::write(d.join(discovery::usual_file_name(name)), b"").unwrap();
        }
        // The loader never searches the temporary folder: unless this machine has CUDA, the
        // first library it cannot open is reported as found there but not loadable.
        match check_libraries(&SearchPath::from_dirs([&d])) {
            Ok(()) => println!("this machine's loader opens every CUDA library"),
            Err(GpuError::NotLoadable { path: Some(p), .. }) => assert!(p.starts_with(&d)),
            Err(e) => panic!("unexpected error: {e}"),
        }
        std::fs::remove_dir_all(&d).unwrap();
    }
}
