//! Helpers for the GPU tests and checks: open the GPU or skip, and reproducible test data.
//!
//! Contract: [`gpu_or_skip`] returns the opened device 0, or, when it cannot be opened, prints
//! the one line `skipped: no GPU (<reason>)` and returns `None`, unless the environment variable
//! `PLANEWAVE_REQUIRE_GPU=1` is set: then it panics with the reason (the test fails).

use crate::device::Gpu;
use crate::C64;

/// Device 0, or `None` after the skip line (panics instead when `PLANEWAVE_REQUIRE_GPU=1`).
pub fn gpu_or_skip() -> Option<Gpu> {
    match Gpu::open(0) {
        Ok(gpu) => Some(gpu),
        Err(e) if gpu_required() => panic!("PLANEWAVE_REQUIRE_GPU=1 but no GPU: {e}"),
        Err(e) => {
            println!("skipped: no GPU ({e})");
            None
        }
    }
}

/// True when `PLANEWAVE_REQUIRE_GPU=1`.
pub fn gpu_required() -> bool {
    std::env::var("PLANEWAVE_REQUIRE_GPU").is_ok_and(|v| v == "1")
}

/// A small linear congruential generator: uniform values in `[-0.5, 0.5)`.
#[derive(Clone, Debug)]
pub struct Lcg(u64);

impl Lcg {
    /// Generator from `seed`.
    pub fn new(seed: u64) -> Self {
        Lcg(seed)
    }

    /// Next value in `[-0.5, 0.5)`.
    pub fn next_f64(&mut self) -> f64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (self.0 >> 11) as f64 / (1u64 << 53) as f64 - 0.5
    }

    /// `n` complex values with both parts in `[-0.5, 0.5)`.
    pub fn complex(&mut self, n: usize) -> Vec<C64> {
        (0..n)
            .map(|_| C64::new(self.next_f64(), self.next_f64()))
            .collect()
    }
}

/// `max |a - b| / max |b|` (0 for empty or zero `b` equal to `a`).
pub fn relative_error(a: &[C64], b: &[C64]) -> f64 {
    assert_eq!(a.len(), b.len(), "relative_error: lengths differ");
    let diff = a
        .iter()
        .zip(b)
        .map(|(x, y)| (x - y).norm())
        .fold(0.0, f64::max);
    let scale = b.iter().map(|y| y.norm()).fold(0.0, f64::max);
    if scale == 0.0 {
        diff
    } else {
        diff / scale
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lcg_is_reproducible_and_in_range() {
        let (a, b) = (Lcg::new(3).complex(100), Lcg::new(3).complex(100));
        assert_eq!(a, b);
        assert!(a.iter().all(|c| c.re.abs() <= 0.5 && c.im.abs() <= 0.5));
    }

    #[test]
    fn relative_error_is_scaled_by_the_reference() {
        let b = vec![C64::new(2.0, 0.0), C64::new(0.0, 0.0)];
        let a = vec![C64::new(2.0, 0.0), C64::new(0.0, 0.5)];
        assert_eq!(relative_error(&a, &b), 0.25);
    }
}
