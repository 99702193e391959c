//! `IndexMap`: where the plane waves of a G-sphere sit on the FFT grid, checked once on the host.
//!
//! Contract: the grid layout is planewave-fft's (`crates/fft/src/grid.rs`): `dims = [n0, n1, n2]`
//! stored flat in C order, Miller index `m` at `(w0 n1 + w1) n2 + w2` with `wa = m[a] mod na`
//! (negative indices wrap), so axis 2 is contiguous, which is also the order cuFFT assumes for
//! `n = [n0, n1, n2]`. An `IndexMap` is valid by construction: every entry is `< n0 n1 n2`, no
//! two entries are equal (so a scatter writes each point once), and `n0 n1 n2` fits an `i32`
//! (the kernels' index type). The kernels' memory safety rests on these invariants.

use std::fmt;

/// Why a list of grid indices is not a valid sphere map.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum IndexMapError {
    /// A dimension is zero, or the grid has more points than an `i32` holds.
    BadGrid([usize; 3]),
    /// Entry `position` is `index`, not below the grid size `len`.
    OutOfRange {
        /// Sphere position.
        position: usize,
        /// The grid index found there.
        index: usize,
        /// Number of grid points.
        len: usize,
    },
    /// Sphere entries `first` and `second` point at the same grid point (the grid is too small
    /// for the sphere, or a G-vector is listed twice).
    Duplicate {
        /// Earlier sphere position.
        first: usize,
        /// Later sphere position.
        second: usize,
    },
}

impl fmt::Display for IndexMapError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            IndexMapError::BadGrid(d) => write!(f, "grid {d:?} is empty or has over 2^31 points"),
            IndexMapError::OutOfRange {
                position,
                index,
                len,
            } => {
                write!(
                    f,
                    "sphere entry {position} points at {index}, outside the {len}-point grid"
                )
            }
            IndexMapError::Duplicate { first, second } => {
                write!(f, "sphere entries {first} and {second} share a grid point")
            }
        }
    }
}

impl std::error::Error for IndexMapError {}

/// Sphere index -> flat grid index, validated.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IndexMap {
    dims: [usize; 3],
    indices: Vec<usize>,
}

/// Flat C-order index of Miller index `m` on `dims` (planewave-fft's `miller_to_index`).
pub fn grid_index(dims: [usize; 3], m: [i32; 3]) -> usize {
    let w = |x: i32, n: usize| x.rem_euclid(n as i32) as usize;
    (w(m[0], dims[0]) * dims[1] + w(m[1], dims[1])) * dims[2] + w(m[2], dims[2])
}

impl IndexMap {
    /// Check `indices` (flat grid indices, e.g. planewave-fft's `SphereMap::indices()`).
    pub fn new(dims: [usize; 3], indices: Vec<usize>) -> Result<Self, IndexMapError> {
        let len = dims.iter().try_fold(1usize, |a, &d| a.checked_mul(d));
        let len = match len {
            Some(l) if l > 0 && l <= i32::MAX as usize => l,
            _ => return Err(IndexMapError::BadGrid(dims)),
        };
        let mut owner = vec![u32::MAX; len];
        for (position, &index) in indices.iter().enumerate() {
            if index >= len {
                return Err(IndexMapError::OutOfRange {
                    position,
                    index,
                    len,
                });
            }
            if owner[index] != u32::MAX {
                let first = owner[index] as usize;
                return Err(IndexMapError::Duplicate {
                    first,
                    second: position,
                });
            }
            owner[index] = position as u32;
        }
        Ok(IndexMap { dims, indices })
    }

    /// The map of the Miller indices `millers` on `dims`.
    pub fn from_millers(dims: [usize; 3], millers: &[[i32; 3]]) -> Result<Self, IndexMapError> {
        if dims.contains(&0) || dims.iter().any(|&d| d > i32::MAX as usize) {
            return Err(IndexMapError::BadGrid(dims));
        }
        Self::new(dims, millers.iter().map(|&m| grid_index(dims, m)).collect())
    }

    /// Grid dimensions.
    pub fn dims(&self) -> [usize; 3] {
        self.dims
    }

    /// Number of grid points.
    pub fn grid_len(&self) -> usize {
        self.dims.iter().product()
    }

    /// Number of sphere entries.
    pub fn len(&self) -> usize {
        self.indices.len()
    }

    /// True for an empty sphere.
    pub fn is_empty(&self) -> bool {
        self.indices.is_empty()
    }

    /// Grid index of each sphere entry.
    pub fn indices(&self) -> &[usize] {
        &self.indices
    }
}

/// The Miller indices `m` with `|m|^2 <= r2` (integer units), in a fixed order: a test sphere.
pub fn sphere_millers(r2: i32) -> Vec<[i32; 3]> {
    let r = (r2 as f64).sqrt() as i32 + 1;
    let mut out = Vec::new();
    for a in -r..=r {
        for b in -r..=r {
            for c in -r..=r {
                if a * a + b * b + c * c <= r2 {
                    out.push([a, b, c]);
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn miller_layout_is_c_order_with_wrap() {
        let d = [4, 5, 6];
        assert_eq!(grid_index(d, [0, 0, 0]), 0);
        assert_eq!(grid_index(d, [0, 0, 1]), 1);
        assert_eq!(grid_index(d, [0, 1, 0]), 6);
        assert_eq!(grid_index(d, [-1, 0, 0]), 3 * 30);
        assert_eq!(grid_index(d, [0, -1, -1]), 4 * 6 + 5);
    }

    #[test]
    fn valid_sphere_builds() {
        let millers = sphere_millers(9);
        let map = IndexMap::from_millers([8, 8, 8], &millers).unwrap();
        assert_eq!(map.len(), millers.len());
        assert_eq!(map.grid_len(), 512);
    }

    #[test]
    fn aliasing_sphere_is_refused() {
        // Radius 3 on a 6-point axis: m = 3 and m = -3 land on the same point.
        let err = IndexMap::from_millers([6, 8, 8], &sphere_millers(9)).unwrap_err();
        assert!(matches!(err, IndexMapError::Duplicate { .. }), "{err}");
    }

    #[test]
    fn out_of_range_and_bad_grids_are_refused() {
        let err = IndexMap::new([2, 2, 2], vec![0, 8]).unwrap_err();
        assert_eq!(
            err,
            IndexMapError::OutOfRange {
                position: 1,
                index: 8,
                len: 8
            }
        );
        assert_eq!(
            IndexMap::new([0, 2, 2], vec![]).unwrap_err(),
            IndexMapError::BadGrid([0, 2, 2])
        );
        let huge = [1 << 11, 1 << 11, 1 << 10];
        assert_eq!(
            IndexMap::new(huge, vec![]).unwrap_err(),
            IndexMapError::BadGrid(huge)
        );
        let dup = IndexMap::new([2, 2, 2], vec![3, 1, 3]).unwrap_err();
        assert_eq!(
            dup,
            IndexMapError::Duplicate {
                first: 0,
                second: 2
            }
        );
    }
}
