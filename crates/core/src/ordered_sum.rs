//! Sums dealt over the threads whose result does not depend on the thread count.
//!
//! Contract: [`ordered_sum`] cuts `0..len` into ranges of [`SPHERE_CHUNK`] items (fixed, not
//! chosen by rayon's work stealing), evaluates `part` on each range in parallel and adds the
//! parts in range order with `add`. The same inputs give the same bits on 1 thread or 64.

use rayon::prelude::*;
use std::ops::Range;

/// Items (density-sphere entries) per parallel task of the loops over the sphere.
pub const SPHERE_CHUNK: usize = 4096;

/// `add`-fold of `part(range)` over the fixed ranges of `0..len` (module doc), from `zero`.
pub fn ordered_sum<R: Send>(
    len: usize,
    zero: R,
    part: impl Fn(Range<usize>) -> R + Sync,
    add: impl Fn(R, R) -> R,
) -> R {
    let parts: Vec<R> = (0..len.div_ceil(SPHERE_CHUNK))
        .into_par_iter()
        .map(|c| part(c * SPHERE_CHUNK..((c + 1) * SPHERE_CHUNK).min(len)))
        .collect();
    parts.into_iter().fold(zero, add)
}

/// Element-wise sum of two small arrays (for [`ordered_sum`] of several sums at once).
pub fn add_arrays<const N: usize>(mut a: [f64; N], b: [f64; N]) -> [f64; N] {
    a.iter_mut().zip(b).for_each(|(x, y)| *x += y);
    a
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_sum_is_the_same_on_any_number_of_threads() {
        let len = 3 * SPHERE_CHUNK + 17;
        let x: Vec<f64> = (0..len).map(|i| 1.0 / (1.0 + i as f64)).collect();
        let sum = |threads: usize| {
            rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .unwrap()
                .install(|| ordered_sum(len, 0.0, |r| x[r].iter().sum::<f64>(), |a, b| a + b))
        };
        let one = sum(1);
        assert_eq!(one.to_bits(), sum(3).to_bits());
        let serial: f64 = x.iter().sum();
        assert!((one - serial).abs() < 1e-12, "{one} vs {serial}");
    }
}
