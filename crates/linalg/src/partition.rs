//! How coefficient rows and bands are dealt out to the ranks of a group, and the
//! column-major packing used to move matrices through a communicator.
//!
//! Contract: a [`RowPartition`] gives rank `r` the contiguous rows
//! `offset(r)..offset(r) + count(r)` (any counts, zeros allowed — the G-vector distribution
//! by sticks is uneven). Bands are dealt round-robin: band `j` lives on rank `j % p` as its
//! local column `j / p`; a rank owns no band when `nbands <= rank`.

use crate::scalar::Scalar;
use faer::{Mat, MatRef};

/// Contiguous row ranges, one per rank, in rank order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RowPartition {
    counts: Vec<usize>,
    offsets: Vec<usize>,
}

impl RowPartition {
    /// Rank `r` gets `counts[r]` rows.
    pub fn new(counts: Vec<usize>) -> Self {
        let offsets = counts
            .iter()
            .scan(0, |acc, &c| {
                let o = *acc;
                *acc += c;
                Some(o)
            })
            .collect();
        RowPartition { counts, offsets }
    }
    /// `n` rows over `p` ranks as evenly as possible (the first `n % p` ranks get one more).
    pub fn even(n: usize, p: usize) -> Self {
        Self::new((0..p).map(|r| n / p + usize::from(r < n % p)).collect())
    }
    /// Rows per rank.
    pub fn counts(&self) -> &[usize] {
        &self.counts
    }
    /// Number of ranks.
    pub fn nranks(&self) -> usize {
        self.counts.len()
    }
    /// First row of rank `r`.
    pub fn offset(&self, r: usize) -> usize {
        self.offsets[r]
    }
    /// Rows of rank `r`.
    pub fn count(&self, r: usize) -> usize {
        self.counts[r]
    }
    /// All rows.
    pub fn total(&self) -> usize {
        self.counts.iter().sum()
    }
}

/// The rank that owns band `j` of a group of `p`.
pub fn band_owner(j: usize, p: usize) -> usize {
    j % p
}

/// How many of `nbands` bands rank `r` of `p` owns.
pub fn band_count(nbands: usize, p: usize, r: usize) -> usize {
    nbands.saturating_sub(r).div_ceil(p)
}

/// The global index of local band `l` of rank `r` of `p`.
pub fn band_global(r: usize, p: usize, l: usize) -> usize {
    r + l * p
}

/// Column-major copy of `m` (`nrows * ncols` elements).
pub(crate) fn mat_to_vec<T: Scalar>(m: MatRef<'_, T>) -> Vec<T> {
    let mut v = Vec::with_capacity(m.nrows() * m.ncols());
    for j in 0..m.ncols() {
        v.extend(m.col(j).iter().copied());
    }
    v
}

/// The matrix whose column-major elements are `v`.
pub(crate) fn vec_to_mat<T: Scalar>(v: &[T], nrows: usize, ncols: usize) -> Mat<T> {
    assert_eq!(
        v.len(),
        nrows * ncols,
        "planewave-linalg: packed matrix size"
    );
    Mat::from_fn(nrows, ncols, |i, j| v[i + j * nrows])
}

/// A column-major view of `v`.
pub(crate) fn vec_view<T: Scalar>(v: &[T], nrows: usize, ncols: usize) -> MatRef<'_, T> {
    MatRef::from_column_major_slice(v, nrows, ncols)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_robin_counts_cover_every_band_once() {
        for p in 1..9 {
            for n in 0..20 {
                let total: usize = (0..p).map(|r| band_count(n, p, r)).sum();
                assert_eq!(total, n);
                for r in 0..p {
                    for l in 0..band_count(n, p, r) {
                        let j = band_global(r, p, l);
                        assert!(j < n && band_owner(j, p) == r);
                    }
                }
            }
        }
        let rp = RowPartition::new(vec![3, 0, 5]);
        assert_eq!((rp.offset(2), rp.total()), (3, 8));
        assert_eq!(RowPartition::even(7, 3).counts(), &[3, 2, 2]);
    }
}
