//! `RealLayout`: which real-space grid points a rank of a distributed transform owns, and where.
//!
//! Contract: a rank owns the points `(i0, i1, i2)` with `i2` in `z`, `i1` in `y` and every
//! `i0` (an x-pencil bundle; for a slab decomposition `y` is `0..n1`, so the rank owns whole
//! planes of constant `i2`). They are stored x-fastest: local index
//! `((i2 - z.start) * y.len() + (i1 - y.start)) * n0 + i0`. A band block of `nb` fields is
//! `nb` such arrays one after the other. To apply a local potential, a caller evaluates it at
//! the points of [`RealLayout::point`] (or cuts it from a global C-order array with
//! [`RealLayout::extract`]) and multiplies element-wise.

use std::ops::Range;

/// The real-space points of one rank.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RealLayout {
    /// Global grid dimensions.
    pub dims: [usize; 3],
    /// Owned `i2` range.
    pub z: Range<usize>,
    /// Owned `i1` range.
    pub y: Range<usize>,
}

impl RealLayout {
    /// Number of owned points.
    pub fn len(&self) -> usize {
        self.z.len() * self.y.len() * self.dims[0]
    }
    /// True when the rank owns no points.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// Local index of global point `(i0, i1, i2)`, if owned.
    pub fn local_index(&self, p: [usize; 3]) -> Option<usize> {
        (p[0] < self.dims[0] && self.y.contains(&p[1]) && self.z.contains(&p[2])).then(|| {
            ((p[2] - self.z.start) * self.y.len() + (p[1] - self.y.start)) * self.dims[0] + p[0]
        })
    }
    /// Global point `(i0, i1, i2)` of local index `l`.
    pub fn point(&self, l: usize) -> [usize; 3] {
        let n0 = self.dims[0];
        let ny = self.y.len();
        [
            l % n0,
            self.y.start + (l / n0) % ny,
            self.z.start + l / (n0 * ny),
        ]
    }
    /// Flat C-order index (`(i0 * n1 + i1) * n2 + i2`) of local index `l`.
    pub fn global_index(&self, l: usize) -> usize {
        let [i0, i1, i2] = self.point(l);
        (i0 * self.dims[1] + i1) * self.dims[2] + i2
    }
    /// The owned part of a global C-order array, in local order.
    pub fn extract<T: Copy>(&self, global: &[T]) -> Vec<T> {
        let [n0, n1, n2] = self.dims;
        assert_eq!(
            global.len(),
            n0 * n1 * n2,
            "global array has the wrong length"
        );
        let mut out = Vec::with_capacity(self.len());
        for i2 in self.z.clone() {
            for i1 in self.y.clone() {
                out.extend((0..n0).map(|i0| global[(i0 * n1 + i1) * n2 + i2]));
            }
        }
        out
    }
    /// Write the local array `local` into its place in a global C-order array.
    pub fn insert<T: Copy>(&self, local: &[T], global: &mut [T]) {
        assert_eq!(local.len(), self.len(), "local array has the wrong length");
        for (l, &v) in local.iter().enumerate() {
            global[self.global_index(l)] = v;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn indices_round_trip() {
        let l = RealLayout {
            dims: [3, 5, 4],
            z: 1..3,
            y: 2..5,
        };
        let global: Vec<usize> = (0..60).collect();
        let local = l.extract(&global);
        assert_eq!(local.len(), l.len());
        for (i, &g) in local.iter().enumerate() {
            assert_eq!(l.global_index(i), g);
            assert_eq!(l.local_index(l.point(i)), Some(i));
        }
        assert_eq!(l.local_index([0, 0, 1]), None);
        let mut back = vec![0usize; 60];
        l.insert(&local, &mut back);
        assert_eq!(back[l.global_index(7)], l.global_index(7));
    }
}
