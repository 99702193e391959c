//! Storage of band blocks, recycled: a block that leaves the search space (a restart) or a
//! temporary that is done gives its matrix back, and the next block of no more columns takes
//! it, so an eigensolver's iterations stop allocating once the space has reached its size.
//!
//! Contract: [`BlockPool::take`] returns an `nrows x ncols` matrix with unspecified contents;
//! [`BlockPool::give`] takes any matrix back. The pool never holds more than the largest set
//! of blocks given back at once, and frees it when dropped (one pool per solver call).

use planewave_linalg::{Mat, Scalar};

/// Spare matrices and the column capacity of those lent out.
pub struct BlockPool<T: Scalar> {
    /// Spare matrices with the number of columns each can hold without reallocating.
    spare: Vec<(Mat<T>, usize)>,
    /// Matrices lent out: data address and column capacity.
    lent: Vec<(usize, usize)>,
}

impl<T: Scalar> Default for BlockPool<T> {
    fn default() -> Self {
        BlockPool {
            spare: Vec::new(),
            lent: Vec::new(),
        }
    }
}

impl<T: Scalar> BlockPool<T> {
    /// An `nrows x ncols` matrix, contents unspecified: the narrowest spare that holds
    /// `ncols` columns, else the widest spare (grown), else a new one.
    pub fn take(&mut self, nrows: usize, ncols: usize) -> Mat<T> {
        let fits = (0..self.spare.len())
            .filter(|&i| self.spare[i].1 >= ncols && self.spare[i].0.nrows() == nrows)
            .min_by_key(|&i| self.spare[i].1);
        let pick = fits.or_else(|| {
            (0..self.spare.len())
                .filter(|&i| self.spare[i].0.nrows() == nrows)
                .max_by_key(|&i| self.spare[i].1)
        });
        let (mut m, cap) = match pick {
            Some(i) => self.spare.swap_remove(i),
            None => (Mat::zeros(nrows, ncols), ncols),
        };
        m.resize_with(nrows, ncols, |_, _| T::from_f64(0.0));
        self.lent.push((m.as_ptr() as usize, cap.max(ncols)));
        m
    }

    /// Take `m` back for a later [`take`](Self::take).
    pub fn give(&mut self, m: Mat<T>) {
        let at = m.as_ptr() as usize;
        let cap = match self.lent.iter().position(|&(p, _)| p == at) {
            Some(i) => self.lent.swap_remove(i).1,
            None => m.ncols(),
        };
        let cap = cap.max(m.ncols());
        self.spare.push((m, cap));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_returned_matrix_serves_a_narrower_one_without_moving() {
        let mut pool = BlockPool::<f64>::default();
        let wide = pool.take(10, 8);
        let at = wide.as_ptr();
        pool.give(wide);
        let narrow = pool.take(10, 3);
        assert_eq!(
            (narrow.nrows(), narrow.ncols(), narrow.as_ptr()),
            (10, 3, at)
        );
        pool.give(narrow);
        // Its capacity is still 8 columns: an 8-column request reuses it too.
        let again = pool.take(10, 8);
        assert_eq!((again.ncols(), again.as_ptr()), (8, at));
        let fresh = pool.take(10, 2);
        assert_ne!(fresh.as_ptr(), at);
    }
}
