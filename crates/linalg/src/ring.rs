//! The systolic loop of band-distributed products, with the next block's transfer in flight
//! while the current block's GEMM runs.
//!
//! Contract: every rank of `comm` calls [`systolic`] together with the same `order`, `rows`
//! and `ncols_of` (the column count of each rank's block). `visit(owner, block)` is called
//! `size` times, first with the own block, then with the blocks of the ring predecessors in
//! turn, so each rank sees every block exactly once. At each step the receive of the next
//! block and the send of the current one are posted (non-blocking) before `visit` runs and
//! waited for after it. Cycle orders are those of [`planewave_comm::ring::Ring`].

use crate::partition::vec_view;
use crate::scalar::Scalar;
use crate::scratch::{sized, BandScratch};
use faer::MatRef;
use planewave_comm::ring::{Ring, RingOrder};
use planewave_comm::{CommClass, CommExt, Communicator, Operation};

/// Tag of the band-ring messages.
const TAG_BAND_RING: u32 = 0x4C41_0001;

/// Circulate every rank's `rows x ncols_of(rank)` block around the ring (see the module
/// documentation), through `scratch`'s message buffers.
pub(crate) fn systolic<T: Scalar>(
    comm: &dyn Communicator,
    order: RingOrder,
    block: MatRef<'_, T>,
    ncols_of: impl Fn(usize) -> usize,
    class: CommClass,
    scratch: &mut BandScratch<T>,
    mut visit: impl FnMut(usize, MatRef<'_, T>),
) {
    let _op = comm.operation(Operation::Ring);
    let (p, rank) = (comm.size(), comm.rank());
    let rows = block.nrows();
    if p == 1 {
        visit(rank, block);
        return;
    }
    let ring = Ring::new(p, rank, order);
    let cycle = ring.cycle();
    let pos = cycle.iter().position(|&r| r == rank).expect("rank in ring");
    let mut current = std::mem::take(&mut scratch.current);
    current.clear();
    for j in 0..block.ncols() {
        current.extend(block.col(j).iter().copied());
    }
    let mut cols = block.ncols();
    for step in 0..p {
        let owner = cycle[(pos + p - step) % p];
        let in_flight = (step + 1 < p).then(|| {
            let incoming = cycle[(pos + 2 * p - step - 1) % p];
            let n_in = ncols_of(incoming);
            let mut recv = std::mem::take(&mut scratch.recv);
            sized(&mut recv, rows * n_in);
            let recv = comm.irecv_into(recv, ring.prev(), TAG_BAND_RING, class);
            let mut send = std::mem::take(&mut scratch.send);
            send.clear();
            send.extend_from_slice(&current);
            let send = comm.isend(send, ring.next(), TAG_BAND_RING, class);
            (recv, send, n_in)
        });
        visit(owner, vec_view(&current, rows, cols));
        if let Some((recv, send, n_in)) = in_flight {
            scratch.recv = std::mem::replace(&mut current, recv.wait_data());
            if let Some(sent) = send.wait() {
                scratch.send = T::from_payload(sent);
            }
            cols = n_in;
        }
    }
    scratch.current = current;
}
