//! FFT grid sizes: only products of 2, 3, 5 and 7, and the map from Miller indices to grid points.

/// True when `n` has no prime factor other than 2, 3, 5, 7.
pub fn is_good_fft_size(mut n: usize) -> bool {
    if n == 0 {
        return false;
    }
    for p in [2, 3, 5, 7] {
        while n.is_multiple_of(p) {
            n /= p;
        }
    }
    n == 1
}

/// A fast FFT size `>= min` with prime factors in {2, 3, 5, 7}: the smallest such size, unless a
/// size without the factor 7 is at most 7% larger (radix-7 passes are markedly slower in
/// rustfft: 35^3 takes longer than 36^3).
pub fn good_fft_size(min: usize) -> usize {
    let smallest = |ok: fn(usize) -> bool| {
        let mut n = min.max(1);
        while !ok(n) {
            n += 1;
        }
        n
    };
    let with7 = smallest(is_good_fft_size);
    let without7 = smallest(|n| is_good_fft_size(n) && !n.is_multiple_of(7));
    if without7 as f64 <= 1.07 * with7 as f64 {
        without7
    } else {
        with7
    }
}

/// Grid dimensions along a1, a2, a3.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FftGrid {
    /// Points along each lattice vector.
    pub dims: [usize; 3],
}

impl FftGrid {
    /// Total number of grid points.
    pub fn len(&self) -> usize {
        self.dims[0] * self.dims[1] * self.dims[2]
    }
    /// True for an empty grid (never the case for a valid basis).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// Flat index of the grid point holding Miller index `m` (negative indices wrap around).
    pub fn index_of(&self, m: [i32; 3]) -> usize {
        miller_to_index(self.dims, m)
    }
}

/// Flat C-order index of Miller index `m` on a grid of `dims` (negative indices wrap around).
pub fn miller_to_index(dims: [usize; 3], m: [i32; 3]) -> usize {
    let w = |x: i32, n: usize| x.rem_euclid(n as i32) as usize;
    (w(m[0], dims[0]) * dims[1] + w(m[1], dims[1])) * dims[2] + w(m[2], dims[2])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn good_sizes() {
        assert_eq!(good_fft_size(25), 25);
        assert_eq!(good_fft_size(11), 12);
        assert_eq!(good_fft_size(97), 100);
        assert_eq!(good_fft_size(35), 36);
        assert_eq!(good_fft_size(13), 14);
        assert!(!is_good_fft_size(11 * 2));
        assert_eq!(good_fft_size(0), 1);
    }

    #[test]
    fn miller_wraps() {
        let d = [4, 5, 6];
        assert_eq!(miller_to_index(d, [0, 0, 0]), 0);
        assert_eq!(miller_to_index(d, [-1, 0, 0]), 3 * 30);
        assert_eq!(miller_to_index(d, [0, -1, -1]), 4 * 6 + 5);
    }
}
