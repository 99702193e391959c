//! Heap policy of the planewave process: blocks of 1 MiB and more are mapped on their own and
//! returned to the system when freed.
//!
//! glibc's default raises its mmap threshold each time a mapped block is freed (up to 32 MiB),
//! after which band blocks, mixing vectors and FFT buffers of a few MiB come from the arenas
//! and, once freed, stay resident as fragmented free space. On si64 Γ (one thread) that was
//! 424 MiB of peak RSS against 346 MiB with a fixed 1 MiB threshold, at the same speed (31.0 vs
//! 29.3 s SCF; si8 5.1 s either way). A `MALLOC_MMAP_THRESHOLD_` set by the user wins.

/// Fix the mmap threshold at 1 MiB (glibc on Linux; elsewhere nothing to do).
pub fn return_large_blocks() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    if std::env::var_os("MALLOC_MMAP_THRESHOLD_").is_none() {
        // SAFETY: mallopt takes two integers and touches no memory of ours; glibc serialises
        // it against allocations with the arena locks, so calling it at any time is sound.
        // The return value only says whether the option was accepted: either way the heap
        // stays valid.
        unsafe {
            libc::mallopt(libc::M_MMAP_THRESHOLD, 1 << 20);
        }
    }
}
