//! OpenBLAS run-time settings for the `lapack` back end: core type and thread count.
//!
//! Contract:
//! - Core type. Debian's OpenBLAS is a DYNAMIC_ARCH build that picks its kernels when the
//!   library is loaded; on some (virtualised) CPUs it fails to recognise the model and runs
//!   SSE3 "Prescott" kernels, 4–7× slower than the AVX-512 ones. `OPENBLAS_CORETYPE` overrides
//!   the choice, but it is read once, while the shared library initialises — before `main`
//!   runs — so setting it with `std::env::set_var` inside the program is too late.
//!   [`recommended_coretype`] derives the value from the flags in `/proc/cpuinfo`
//!   (`SkylakeX` with AVX-512F/VL/BW/DQ, `Haswell` with AVX2+FMA, `Sandybridge` with AVX);
//!   [`reexec_with_coretype`] re-executes the current program with it set (call it first thing
//!   in `main`, before MPI or threads start); otherwise export it in the job script, e.g.
//!   `export OPENBLAS_CORETYPE=SkylakeX`. With the `lapack` feature, the first LAPACK call
//!   prints one warning when the variable is unset and OpenBLAS chose a different core than
//!   recommended ([`corename`] reports OpenBLAS's choice).
//! - Threads. OpenBLAS has its own thread pool, which oversubscribes the cores when BLAS is
//!   called from rayon workers or from several ranks of a `Threads` communicator at once.
//!   [`set_blas_threads`] sets its size; the first LAPACK call applies
//!   `PLANEWAVE_BLAS_THREADS` when set (else OpenBLAS's own default, `OPENBLAS_NUM_THREADS` or
//!   all cores). Use 1 when the callers are already parallel.

/// The environment variable OpenBLAS reads (at load time) to force its kernels.
pub const CORETYPE_ENV: &str = "OPENBLAS_CORETYPE";
/// The environment variable planewave reads (at the first LAPACK call) for BLAS threads.
pub const BLAS_THREADS_ENV: &str = "PLANEWAVE_BLAS_THREADS";
/// Set by [`reexec_with_coretype`] in the re-executed program (prevents a loop).
pub const REEXEC_GUARD_ENV: &str = "PLANEWAVE_OPENBLAS_REEXEC";

/// The OpenBLAS core type for a CPU with these `/proc/cpuinfo` flags.
pub fn coretype_for_flags(flags: &str) -> Option<&'static str> {
    let has = |f: &str| flags.split_whitespace().any(|x| x == f);
    if ["avx512f", "avx512vl", "avx512bw", "avx512dq"]
        .iter()
        .all(|f| has(f))
    {
        Some("SkylakeX")
    } else if has("avx2") && has("fma") {
        Some("Haswell")
    } else if has("avx") {
        Some("Sandybridge")
    } else {
        None
    }
}

/// The OpenBLAS core type for this machine, from the first `flags` line of `/proc/cpuinfo`
/// (`None` when unknown or not Linux/x86-64).
pub fn recommended_coretype() -> Option<&'static str> {
    let info = std::fs::read_to_string("/proc/cpuinfo").ok()?;
    let line = info.lines().find(|l| l.starts_with("flags"))?;
    coretype_for_flags(line.split_once(':').map_or("", |(_, f)| f))
}

/// When `OPENBLAS_CORETYPE` is unset and a core type is recommended for this CPU, re-execute
/// the current program with it set (same arguments and environment otherwise). Returns only
/// when nothing was to be done (`Ok(false)`) or the re-execution failed (`Err`). Call it first
/// thing in `main`.
#[cfg(unix)]
pub fn reexec_with_coretype() -> std::io::Result<bool> {
    use std::os::unix::process::CommandExt;
    if std::env::var_os(CORETYPE_ENV).is_some() || std::env::var_os(REEXEC_GUARD_ENV).is_some() {
        return Ok(false);
    }
    let Some(core) = recommended_coretype() else {
        return Ok(false);
    };
    let exe = std::env::current_exe()?;
    let err = std::process::Command::new(exe)
        .args(std::env::args_os().skip(1))
        .env(CORETYPE_ENV, core)
        .env(REEXEC_GUARD_ENV, "1")
        .exec();
    Err(err)
}

/// The kernels OpenBLAS chose at load time (e.g. "SkylakeX", "Prescott"); `None` without the
/// `lapack` feature.
pub fn corename() -> Option<String> {
    #[cfg(feature = "lapack")]
    {
        Some(crate::lapack_backend::corename())
    }
    #[cfg(not(feature = "lapack"))]
    {
        None
    }
}

/// Set the size of OpenBLAS's thread pool (no effect without the `lapack` feature).
pub fn set_blas_threads(n: usize) {
    #[cfg(feature = "lapack")]
    crate::lapack_backend::set_threads(n);
    #[cfg(not(feature = "lapack"))]
    let _ = n;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn coretype_from_flags() {
        let skx = "fpu sse3 avx avx2 fma avx512f avx512dq avx512bw avx512vl";
        assert_eq!(coretype_for_flags(skx), Some("SkylakeX"));
        assert_eq!(coretype_for_flags("sse3 avx avx2 fma"), Some("Haswell"));
        assert_eq!(coretype_for_flags("sse3 avx"), Some("Sandybridge"));
        assert_eq!(coretype_for_flags("sse3 sse4_2"), None);
    }
}
