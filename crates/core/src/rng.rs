//! A small seeded random number generator (SplitMix64), so runs are reproducible without a
//! dependency.

/// SplitMix64 generator.
#[derive(Debug, Clone)]
pub struct SplitMix64(u64);

impl SplitMix64 {
    /// Seeded generator.
    pub fn new(seed: u64) -> Self {
        Self(seed)
    }
    /// Next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    /// The current state (a seed for a sub-stream).
    pub fn state(&self) -> u64 {
        self.0
    }
    /// Uniform in [-0.5, 0.5).
    pub fn next_centered(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64 - 0.5
    }
}

/// A generator for the stream named by `keys` under `seed` (e.g. spin, k-point, band): the
/// numbers depend on the keys only, not on which rank draws them or in which order.
pub fn stream(seed: u64, keys: &[u64]) -> SplitMix64 {
    let mut state = seed;
    for &key in keys {
        state = SplitMix64::new(state ^ key.wrapping_mul(0xD1B5_4A32_D192_ED03)).next_u64();
    }
    SplitMix64::new(state)
}
