//! One complex grid per thread, kept for the thread's life: the work array of the serial 3-D
//! transforms (band blocks through the grid, densities, potentials). A fresh grid of a few MiB
//! per transform costs its page faults every time (it is mapped on its own, see the CLI's heap
//! policy); this costs one grid per thread once.
//!
//! Contract: [`with_grid`] hands out this thread's grid resized to `n` points, contents
//! unspecified (callers overwrite or clear what they read); a nested call on the same thread
//! gets a fresh grid instead.
//!
//! The real grids of the threaded sums over bands ([`with_sums`]) are kept too, in one pool for
//! the process (not per thread): fresh ones came from `calloc` as pages of zeros, which the first
//! `+=` read as the shared zero page and then wrote, a copy-on-write fault that flushes the page
//! from the TLB of every core running the process. Contract: [`with_sums`] lends `count` grids
//! of `n` points, contents unspecified, to `f` alone; the pool keeps the most grids ever lent at
//! once (at the largest `n`) for the process's life; grids lent to an `f` that panics are lost.

use num_complex::Complex64;
use std::cell::RefCell;
use std::sync::Mutex;

/// Real grids given back by [`with_sums`].
static SUMS: Mutex<Vec<Vec<f64>>> = Mutex::new(Vec::new());

/// `f` on `count` real grids of `n` points (contents unspecified: the caller zeroes them where
/// it works on them, by writing), lent from the process's pool and given back after.
pub fn with_sums<R>(count: usize, n: usize, f: impl FnOnce(&mut [Vec<f64>]) -> R) -> R {
    let mut sums: Vec<Vec<f64>> = {
        let mut pool = SUMS.lock().unwrap_or_else(|e| e.into_inner());
        let keep = pool.len().saturating_sub(count);
        pool.split_off(keep)
    };
    sums.resize_with(count, Vec::new);
    for s in &mut sums {
        s.resize(n, 0.0);
    }
    let r = f(&mut sums);
    SUMS.lock()
        .unwrap_or_else(|e| e.into_inner())
        .append(&mut sums);
    r
}

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

#[cfg(test)]
mod tests {
    use super::*;

    /// Sums come at the count and length asked for, whatever was lent before.
    #[test]
    fn lent_sums_have_the_size_asked_for() {
        with_sums(3, 1000, |sums| sums.iter_mut().for_each(|s| s.fill(3.0)));
        with_sums(2, 800, |sums| {
            assert_eq!(sums.len(), 2);
            assert!(sums.iter().all(|s| s.len() == 800));
        });
    }
}
