//! Choices of algorithm that never change a result, as one value the caller passes: the band
//! groups' product algorithm, how checkpoints move their arrays, and whether small (spin, k)
//! blocks are solved one per thread.
//!
//! Contract: library code reads no environment variable to make these choices; the CLI fills a
//! [`Tuning`] from the environment (the README's table), and a library user builds one or
//! takes the default, which is what an empty environment gives. It travels in
//! [`crate::scf::ScfParams::tuning`] and must be the same on every rank.

use crate::checkpoint::Transfer;
pub use planewave_linalg::BandAlgorithm;

/// The algorithm choices of a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Tuning {
    /// How band groups form their products (rotations and overlaps).
    pub band_algorithm: BandAlgorithm,
    /// How checkpoints move bands between rank 0 and their owners.
    pub checkpoint: Transfer,
    /// Whether a rank may solve its small (spin, k) blocks one per thread
    /// ([`crate::scf::blocks_concurrently`]); false: one after the other.
    pub concurrent_blocks: bool,
}

impl Default for Tuning {
    fn default() -> Self {
        Self {
            band_algorithm: BandAlgorithm::Reduce,
            checkpoint: Transfer::default(),
            concurrent_blocks: true,
        }
    }
}
