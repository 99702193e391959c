//! Buffers that band-distributed products keep from call to call, so that an eigensolver's
//! inner loop allocates nothing: the systolic ring's three message buffers, and the partial
//! products and received pieces of a reduced rotation.
//!
//! Contract: a [`BandScratch`] holds no state between calls, only capacity; any product may use
//! any scratch, and the results never depend on what it held. It grows to the largest product
//! it served and keeps that memory until dropped (a solver keeps one per call).

/// Reusable buffers of [`crate::overlap_stack_with`] and [`crate::rotate_stack_into`].
pub struct BandScratch<T> {
    /// The block being multiplied (a copy of the own block, then the received ones).
    pub(crate) current: Vec<T>,
    /// The copy of `current` in flight to the ring successor.
    pub(crate) send: Vec<T>,
    /// The block arriving from the ring predecessor.
    pub(crate) recv: Vec<T>,
    /// A reduced rotation's partial products, every output column, in owner order.
    pub(crate) partial: Vec<T>,
    /// The other ranks' partial sums of this rank's output columns.
    pub(crate) pieces: Vec<T>,
}

impl<T> Default for BandScratch<T> {
    fn default() -> Self {
        BandScratch {
            current: Vec::new(),
            send: Vec::new(),
            recv: Vec::new(),
            partial: Vec::new(),
            pieces: Vec::new(),
        }
    }
}

impl<T> BandScratch<T> {
    /// An empty scratch (it allocates on first use).
    pub fn new() -> Self {
        Self::default()
    }
}

/// `buf` resized to exactly `len` elements (its old contents are garbage to the caller), with
/// no new allocation once its capacity suffices.
pub(crate) fn sized<T: Copy + Default>(buf: &mut Vec<T>, len: usize) -> &mut [T] {
    if buf.len() < len {
        buf.resize(len, T::default());
    } else {
        buf.truncate(len);
    }
    buf.as_mut_slice()
}
