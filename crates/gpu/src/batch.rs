//! Batch planning: how many bands go through one batched FFT, and the band ranges.
//!
//! Contract: a batch of `b` bands on a grid of `N` points needs `b N` complex grid values plus
//! cuFFT's work area, which for a batched out-of-cache 3-D Z2Z is at most about as large again:
//! [`BYTES_PER_GRID_POINT`] bytes per point and band in all. [`max_batch`] is the largest `b`
//! (at least 1) that fits a memory budget; [`band_batches`] splits `nb` bands into consecutive
//! ranges of `batch` bands (the last one shorter).

use std::ops::Range;

/// Device bytes per grid point of one band in a batch: the grid (16 B) and cuFFT's work area
/// (up to 16 B more).
pub const BYTES_PER_GRID_POINT: usize = 32;

/// The most bands per batch such that `batch grid_len BYTES_PER_GRID_POINT <= budget_bytes`,
/// and at least 1.
pub fn max_batch(grid_len: usize, budget_bytes: usize) -> usize {
    let per_band = grid_len.max(1).saturating_mul(BYTES_PER_GRID_POINT);
    (budget_bytes / per_band).max(1)
}

/// Consecutive ranges covering `0..nb`, each of `batch` bands but the last (`batch >= 1`).
pub fn band_batches(nb: usize, batch: usize) -> impl Iterator<Item = Range<usize>> {
    assert!(batch >= 1, "band_batches: empty batch");
    (0..nb).step_by(batch).map(move |j| j..(j + batch).min(nb))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn batches_cover_every_band_once() {
        let v: Vec<_> = band_batches(10, 4).collect();
        assert_eq!(v, vec![0..4, 4..8, 8..10]);
        assert_eq!(band_batches(8, 8).count(), 1);
        assert_eq!(band_batches(0, 3).count(), 0);
        assert_eq!(band_batches(3, 100).collect::<Vec<_>>(), vec![0..3]);
    }

    #[test]
    fn max_batch_fits_the_budget_and_is_never_zero() {
        let n = 72 * 72 * 72;
        let b = max_batch(n, 8 << 30);
        assert!(b * n * BYTES_PER_GRID_POINT <= 8 << 30);
        assert!((b + 1) * n * BYTES_PER_GRID_POINT > 8 << 30);
        assert_eq!(max_batch(n, 0), 1);
        assert_eq!(max_batch(0, 100), 3);
    }
}
