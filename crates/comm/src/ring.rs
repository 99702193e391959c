//! Ring (systolic) shifts for band-distributed products.
//!
//! Contract: a [`Ring`] orders the ranks of a communicator in a cycle; [`Ring::shift`] sends a
//! block to the next rank in the cycle and receives one from the previous (one message each
//! way per rank, posted together), and [`Ring::systolic`] circulates every rank's block around
//! the whole cycle so that each rank sees every block exactly once (own block first), as in
//! CASTEP's band-parallel products. Two neighbour orders (from the CASTEP report):
//! - [`RingOrder::Natural`]: rank n's neighbours are n±1; the closing hop between the last and
//!   the first rank spans the whole communicator;
//! - [`RingOrder::OddEven`]: 0, 2, 4, … up the even ranks and back down the odd ones, …, 5, 3,
//!   1: every hop joins ranks at most 2 apart (longer average, shorter longest hop).
//!
//! A block's size may differ between ranks; [`Ring::systolic`] learns the sizes with one
//! all-gather first.

use crate::communicator::{CommClass, Communicator};
use crate::element::Element;
use crate::ext::CommExt;
use crate::stats::Operation;

/// Tag of ring messages.
const TAG_RING: u32 = 0xFFF0_0010;

/// Neighbour order of a ring.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum RingOrder {
    /// n → n+1 (mod size).
    Natural,
    /// Evens ascending, then odds descending.
    OddEven,
}

/// A cycle through the ranks of a communicator.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Ring {
    cycle: Vec<usize>,
    position: usize,
}

impl Ring {
    /// The cycle for a communicator of `size` ranks, seen from `rank`.
    pub fn new(size: usize, rank: usize, order: RingOrder) -> Ring {
        assert!(
            rank < size,
            "planewave-comm: rank {rank} outside a ring of {size}"
        );
        let cycle: Vec<usize> = match order {
            RingOrder::Natural => (0..size).collect(),
            RingOrder::OddEven => (0..size)
                .step_by(2)
                .chain((1..size).step_by(2).rev())
                .collect(),
        };
        let position = cycle
            .iter()
            .position(|&r| r == rank)
            .expect("rank in cycle");
        Ring { cycle, position }
    }
    /// The ranks in cycle order.
    pub fn cycle(&self) -> &[usize] {
        &self.cycle
    }
    /// The rank this one sends to.
    pub fn next(&self) -> usize {
        self.cycle[(self.position + 1) % self.cycle.len()]
    }
    /// The rank this one receives from.
    pub fn prev(&self) -> usize {
        let n = self.cycle.len();
        self.cycle[(self.position + n - 1) % n]
    }
    /// Longest hop of the cycle, in rank numbers.
    pub fn longest_hop(&self) -> usize {
        let n = self.cycle.len();
        (0..n)
            .map(|i| self.cycle[i].abs_diff(self.cycle[(i + 1) % n]))
            .max()
            .unwrap_or(0)
    }
    /// Send `block` to `next()` and return the `recv_len` elements received from `prev()`.
    pub fn shift<T: Element>(
        &self,
        comm: &dyn Communicator,
        block: &[T],
        recv_len: usize,
        class: CommClass,
    ) -> Vec<T> {
        let mut out = vec![T::default(); recv_len];
        if self.cycle.len() == 1 {
            out.copy_from_slice(block);
            return out;
        }
        comm.exchange_raw(
            &[(self.next(), T::slice(block))],
            &mut [(self.prev(), T::slice_mut(&mut out))],
            TAG_RING,
            class,
        );
        out
    }
    /// Circulate every rank's block around the ring: `visit(owner, block)` is called `size`
    /// times, first with the own block, then with the blocks of `prev()`, `prev(prev())`…
    pub fn systolic<T: Element>(
        &self,
        comm: &dyn Communicator,
        block: Vec<T>,
        class: CommClass,
        mut visit: impl FnMut(usize, &[T]),
    ) {
        let _op = comm.operation(Operation::Ring);
        let n = self.cycle.len();
        let sizes = comm.allgather_counts(block.len(), class);
        let mut current = block;
        for step in 0..n {
            let owner = self.cycle[(self.position + n - step) % n];
            visit(owner, &current);
            if step + 1 < n {
                let incoming_owner = self.cycle[(self.position + 2 * n - step - 1) % n];
                current = self.shift(comm, &current, sizes[incoming_owner], class);
            }
        }
    }
}
