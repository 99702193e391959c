//! One complex grid per thread, kept for the thread's life: the work array of the serial 3-D
//! transforms (band blocks through the grid, densities, potentials). A fresh grid of a few MiB
//! per transform costs its page faults every time (it is mapped on its own, see the CLI's heap
//! policy); this costs one grid per thread once.
//!
//! Contract: [`with_grid`] hands out this thread's grid resized to `n` points, contents
//! unspecified (callers overwrite or clear what they read); a nested call on the same thread
//! gets a fresh grid instead.

use num_complex::Complex64;
use std::cell::RefCell;

thread_local! {
    static GRID: RefCell<Vec<Complex64>> = const { RefCell::new(Vec::new()) };
}

/// `f` on this thread's grid of `n` complex points (contents unspecified).
pub fn with_grid<R>(n: usize, f: impl FnOnce(&mut [Complex64]) -> R) -> R {
    GRID.with(|cell| match cell.try_borrow_mut() {
        Ok(mut grid) => {
            grid.resize(n, Complex64::new(0.0, 0.0));
            f(&mut grid[..n])
        }
        Err(_) => f(&mut vec![Complex64::new(0.0, 0.0); n]),
    })
}
