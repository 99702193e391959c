//! Choice of the dense-kernel back end.
//!
//! Contract: [`Backend::Faer`] (pure Rust, always built) is the default. [`Backend::Lapack`]
//! (the system OpenBLAS through the `lapack` and `blas` crates) exists only with the cargo
//! feature `lapack`. The process-wide default is what the program set with
//! [`set_default_backend`] (the planewave CLI and this crate's programs take it from
//! `PLANEWAVE_LINALG_BACKEND=faer|lapack`, [`BACKEND_ENV`]), else faer; the library reads no
//! environment variable. Every kernel also has
//! an explicit-back-end form (`Scalar::*_with`), so one run can compare both. Both back ends
//! pass the same tests; their results agree to rounding, not bit for bit.

use std::fmt;
use std::str::FromStr;
use std::sync::atomic::{AtomicU8, Ordering};

/// The environment variable from which programs take the default back end.
pub const BACKEND_ENV: &str = "PLANEWAVE_LINALG_BACKEND";

/// A dense-kernel implementation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Backend {
    /// faer (pure Rust, rayon threads above a size threshold).
    Faer,
    /// LAPACK/BLAS of the system OpenBLAS (cargo feature `lapack`).
    #[cfg(feature = "lapack")]
    Lapack,
}

impl Backend {
    /// The back ends built into this binary, faer first.
    pub fn available() -> Vec<Backend> {
        vec![
            Backend::Faer,
            #[cfg(feature = "lapack")]
            Backend::Lapack,
        ]
    }
    /// Name as written in `PLANEWAVE_LINALG_BACKEND`.
    pub fn name(self) -> &'static str {
        match self {
            Backend::Faer => "faer",
            #[cfg(feature = "lapack")]
            Backend::Lapack => "lapack",
        }
    }
}

impl fmt::Display for Backend {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Backend {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s.trim().to_ascii_lowercase().as_str() {
            "faer" => Ok(Backend::Faer),
            #[cfg(feature = "lapack")]
            "lapack" | "openblas" => Ok(Backend::Lapack),
            #[cfg(not(feature = "lapack"))]
            "lapack" | "openblas" => Err(format!(
                "linalg back end '{s}' needs planewave-linalg built with the feature `lapack`"
            )),
            _ => Err(format!(
                "unknown linalg back end '{s}' (expected faer or lapack)"
            )),
        }
    }
}

/// 0: not yet resolved; 1: faer; 2: lapack.
static DEFAULT: AtomicU8 = AtomicU8::new(0);

fn code(b: Backend) -> u8 {
    match b {
        Backend::Faer => 1,
        #[cfg(feature = "lapack")]
        Backend::Lapack => 2,
    }
}

/// Set the process-wide default back end.
pub fn set_default_backend(b: Backend) {
    DEFAULT.store(code(b), Ordering::Relaxed);
}

/// The process-wide default back end: the one set with [`set_default_backend`], else faer.
pub fn default_backend() -> Backend {
    match DEFAULT.load(Ordering::Relaxed) {
        #[cfg(feature = "lapack")]
        2 => Backend::Lapack,
        _ => Backend::Faer,
    }
}

/// The back end named in [`BACKEND_ENV`] (None when unset or blank), for programs; an
/// unusable name is an error naming the variable.
pub fn backend_from_env() -> Result<Option<Backend>, String> {
    match std::env::var(BACKEND_ENV) {
        Ok(v) if !v.trim().is_empty() => v
            .parse()
            .map(Some)
            .map_err(|e| format!("{BACKEND_ENV}: {e}")),
        _ => Ok(None),
    }
}
