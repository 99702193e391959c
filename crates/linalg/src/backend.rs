//! Choice of the dense-kernel back end.
//!
//! Contract: [`Backend::Faer`] (pure Rust, always built) is the default. [`Backend::Lapack`]
//! (the system OpenBLAS through the `lapack` and `blas` crates) exists only with the cargo
//! feature `lapack`. The process-wide default is [`set_default_backend`], else the environment
//! variable `PLANEWAVE_LINALG_BACKEND=faer|lapack` (read once), else faer. Every kernel also has
//! an explicit-back-end form (`Scalar::*_with`), so one run can compare both. Both back ends
//! pass the same tests; their results agree to rounding, not bit for bit.

use std::fmt;
use std::str::FromStr;
use std::sync::atomic::{AtomicU8, Ordering};

/// The environment variable that picks the default back end.
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

/// The process-wide default back end (see the module documentation). An unusable value of
/// `PLANEWAVE_LINALG_BACKEND` is reported once on stderr and faer is used.
pub fn default_backend() -> Backend {
    match DEFAULT.load(Ordering::Relaxed) {
        1 => return Backend::Faer,
        #[cfg(feature = "lapack")]
        2 => return Backend::Lapack,
        _ => {}
    }
    let b = match std::env::var(BACKEND_ENV) {
        Ok(v) if !v.trim().is_empty() => v.parse().unwrap_or_else(|e| {
            eprintln!("planewave-linalg: {BACKEND_ENV}: {e}; using faer");
            Backend::Faer
        }),
        _ => Backend::Faer,
    };
    set_default_backend(b);
    b
}
