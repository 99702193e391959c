//! The `Communicator` trait: the collective operations planewave's algorithms need.
//!
//! Reductions are in place and deterministic for a given layout; every call carries the
//! [`CommClass`] of the parallel level it serves so that back ends can time it per level.

use num_complex::Complex64;

/// Which level of the parallel grid a collective serves (used for timing reports).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CommClass {
    /// Between k-point groups.
    Kpoint,
    /// Inside a k-point group, between band groups.
    Band,
    /// Inside a band group, between the ranks sharing the G-vectors of a band.
    GVector,
    /// Anything else (set-up, I/O).
    Other,
}

/// A group of cooperating ranks.
pub trait Communicator: Send + Sync {
    /// This rank's index in the group, `0..size()`.
    fn rank(&self) -> usize;
    /// Number of ranks in the group.
    fn size(&self) -> usize;
    /// Wait until every rank has arrived.
    fn barrier(&self, class: CommClass);
    /// Element-wise sum over all ranks, result on every rank.
    fn allreduce_sum_f64(&self, data: &mut [f64], class: CommClass);
    /// Element-wise complex sum over all ranks, result on every rank.
    fn allreduce_sum_c64(&self, data: &mut [Complex64], class: CommClass);
    /// Element-wise maximum over all ranks, result on every rank.
    fn allreduce_max_f64(&self, data: &mut [f64], class: CommClass);
    /// Copy `data` of rank `root` to every rank.
    fn broadcast_f64(&self, data: &mut [f64], root: usize, class: CommClass);
    /// True on rank 0 (the rank that prints and writes files).
    fn is_root(&self) -> bool {
        self.rank() == 0
    }
}
