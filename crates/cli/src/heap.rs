//! Heap policy of the planewave process: blocks of 1 MiB and more are mapped on their own and
//! returned to the system when freed.
//!
//! glibc's default raises its mmap threshold each time a mapped block is freed (up to 32 MiB),
//! after which band blocks, mixing vectors and FFT buffers of a few MiB come from the arenas
//! and, once freed, stay resident as fragmented free space. On si64 Γ (one thread) that was
//! 424 MiB of peak RSS against 346 MiB with a fixed 1 MiB threshold, at the same speed (31.0 vs
//! 29.3 s SCF; si8 5.1 s either way). A `MALLOC_MMAP_THRESHOLD_` set by the user wins.
//!
//! Once the grid and the bands are known, and when a block of bands is smaller than two real
//! fields of the density grid (a molecule in a box: the grid work dominates), the threshold
//! rises to just above one complex field of this rank's grid ([`fit_to_grid`]): the grid work
//! of an SCF iteration (XC gradients and divergence, Hartree, densities, mixing) makes dozens
//! of such temporaries, and a mapped block costs its page faults every time; so does a block
//! below it that glibc trims off the top of the heap when freed, so the trim threshold rises
//! to eight mmap thresholds, and the distributed density transforms keep their work buffers.
//! Water in a 60³ box (PBE0, 37 iterations, 2 threads, with the transforms' scratch grids of
//! `planewave_core::scratch`): 5.0 s → 3.8 s, 92 → 97 MiB peak RSS, with the real-field
//! threshold; with a complex field, the trim threshold and kept buffers (2026-11-24, SCF
//! times): one thread 3.19–3.49 → 3.03–3.08 s, 95–103 → 104 MiB; on a G-vector group of 2
//! ranks 3.38–3.50 → 1.83–1.85 s, 85–86 → 90–92 MiB per rank. Where the bands dominate
//! the memory it stays at 1 MiB: si64 Γ (one thread, 72³ grid, 128 bands) would go from 244
//! to 269 MiB for 16.8 → 15.9 s.

/// Raise the mmap threshold to just above one complex field of `points` grid points (at
/// least 1 MiB, at most 32 MiB) when a block of bands (`band_block` bytes) is smaller than two
/// real fields (glibc on Linux, unless the user set it). Returns whether it did: the run's
/// work is on the grid.
pub fn fit_to_grid(points: usize, band_block: usize) -> bool {
    let field = 8 * points;
    let grid_work = band_block <= 2 * field;
    if grid_work {
        let complex = 2 * field;
        let threshold = (complex + complex / 16).clamp(1 << 20, 32 << 20);
        set_threshold(threshold);
        keep_top(8 * threshold);
    }
    grid_work
}

/// Fix the mmap threshold at 1 MiB (glibc on Linux; elsewhere nothing to do).
pub fn return_large_blocks() {
    set_threshold(1 << 20);
}

/// `M_TRIM_THRESHOLD` = `bytes`, unless the user set `MALLOC_TRIM_THRESHOLD_`: free space at
/// the top of the heap is returned to the system only above it. A fixed mmap threshold leaves
/// glibc's at 128 KiB, so the grid temporaries below the mmap threshold would be trimmed and
/// faulted in again at every use.
fn keep_top(bytes: usize) {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    mallopt_unless_set("MALLOC_TRIM_THRESHOLD_", libc::M_TRIM_THRESHOLD, bytes);
    #[cfg(not(all(target_os = "linux", target_env = "gnu")))]
    let _ = bytes;
}

/// `M_MMAP_THRESHOLD` = `bytes`, unless the user set `MALLOC_MMAP_THRESHOLD_`.
fn set_threshold(bytes: usize) {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    mallopt_unless_set("MALLOC_MMAP_THRESHOLD_", libc::M_MMAP_THRESHOLD, bytes);
    #[cfg(not(all(target_os = "linux", target_env = "gnu")))]
    let _ = bytes;
}

/// glibc's `mallopt(option, bytes)` unless the environment variable `user` (glibc's own name
/// for the option) is set.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn mallopt_unless_set(user: &str, option: libc::c_int, bytes: usize) {
    if std::env::var_os(user).is_none() {
        // SAFETY: mallopt takes two integers and touches no memory of ours; glibc serialises
        // it against allocations with the arena locks, so calling it at any time is sound.
        // The return value only says whether the option was accepted: either way the heap
        // stays valid.
        unsafe {
            libc::mallopt(
                option,
                libc::c_int::try_from(bytes).unwrap_or(libc::c_int::MAX),
            );
        }
    }
}
