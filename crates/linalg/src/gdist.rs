//! G-distributed band blocks: each rank holds a slice of coefficient rows of every band.
//!
//! Contract: a [`GDistBlock`] is the `npw x nbands` block whose rows are dealt out by a
//! [`RowPartition`] over the ranks of its communicator (one G-vector group); rank `r` holds
//! rows `offset(r)..offset(r) + count(r)` of every band (zero rows allowed). Operations are
//! collective over the group. Overlaps are a local GEMM and one allreduce (class G), so every
//! rank gets the same bits; rotations are local; orthonormalisation is Cholesky of the
//! overlap (solved on rank 0, broadcast) followed by a local triangular solve
//! `Psi <- Psi L^-H`. [`GDistBlock::to_band`] converts to the band-distributed layout through
//! an all-to-all-v strategy.

use crate::band_dist::BandDistBlock;
use crate::dense::{gemm, trsm_right};
use crate::partition::{band_count, band_global, mat_to_vec, vec_to_mat, RowPartition};
use crate::scalar::{LinalgError, Scalar};
use crate::subspace::redundant_cholesky;
use faer::{Mat, MatMut, MatRef};
use planewave_comm::{AlltoallvStrategy, CommClass, CommExt, Communicator, Operation};
use std::sync::Arc;

/// An `npw x nbands` block distributed over coefficient rows.
#[derive(Clone)]
pub struct GDistBlock<T: Scalar> {
    comm: Arc<dyn Communicator>,
    rows: RowPartition,
    nbands: usize,
    local: Mat<T>,
}

impl<T: Scalar> GDistBlock<T> {
    /// Wrap this rank's rows (`rows.count(rank) x nbands`); panics on a shape mismatch.
    pub fn new(comm: Arc<dyn Communicator>, rows: RowPartition, local: Mat<T>) -> Self {
        assert_eq!(
            rows.nranks(),
            comm.size(),
            "planewave-linalg: one row count per rank"
        );
        assert_eq!(
            local.nrows(),
            rows.count(comm.rank()),
            "planewave-linalg: local rows of a G-distributed block"
        );
        let nbands = local.ncols();
        GDistBlock {
            comm,
            rows,
            nbands,
            local,
        }
    }
    /// This rank's share of a block every rank holds in full.
    pub fn from_global(
        comm: Arc<dyn Communicator>,
        rows: RowPartition,
        global: MatRef<'_, T>,
    ) -> Self {
        assert_eq!(
            global.nrows(),
            rows.total(),
            "planewave-linalg: global rows"
        );
        let r = comm.rank();
        let local = global.subrows(rows.offset(r), rows.count(r)).to_owned();
        Self::new(comm, rows, local)
    }
    /// The whole block on every rank (an all-gather; for tests and small blocks).
    pub fn to_global(&self) -> Mat<T> {
        let all = self
            .comm
            .allgatherv(&mat_to_vec(self.local.as_ref()), CommClass::GVector);
        let mut g = Mat::<T>::zeros(self.rows.total(), self.nbands);
        let mut at = 0;
        for r in 0..self.comm.size() {
            let (off, n) = (self.rows.offset(r), self.rows.count(r));
            let block = vec_to_mat(&all[at..at + n * self.nbands], n, self.nbands);
            g.as_mut().subrows_mut(off, n).copy_from(block.as_ref());
            at += n * self.nbands;
        }
        g
    }
    /// The communicator (the G-vector group).
    pub fn comm(&self) -> &Arc<dyn Communicator> {
        &self.comm
    }
    /// The row partition.
    pub fn rows(&self) -> &RowPartition {
        &self.rows
    }
    /// Number of bands.
    pub fn nbands(&self) -> usize {
        self.nbands
    }
    /// This rank's rows of every band.
    pub fn local(&self) -> MatRef<'_, T> {
        self.local.as_ref()
    }
    /// This rank's rows, writable.
    pub fn local_mut(&mut self) -> MatMut<'_, T> {
        self.local.as_mut()
    }
    /// The local rows, consuming the block.
    pub fn into_local(self) -> Mat<T> {
        self.local
    }

    /// `S = self^H other` (`nbands x other.nbands`), identical on every rank: local GEMM and
    /// one allreduce over the group.
    pub fn overlap(&self, other: &GDistBlock<T>) -> Mat<T> {
        assert_eq!(
            self.rows, other.rows,
            "planewave-linalg: overlap of differently distributed blocks"
        );
        let mut s = Mat::<T>::zeros(self.nbands, other.nbands);
        gemm(
            s.as_mut(),
            false,
            self.local.as_ref(),
            true,
            other.local.as_ref(),
            false,
        );
        if self.comm.size() > 1 {
            let mut v = mat_to_vec(s.as_ref());
            let _op = self.comm.operation(Operation::Overlap);
            self.comm.allreduce_sum(&mut v, CommClass::GVector);
            s = vec_to_mat(&v, self.nbands, other.nbands);
        }
        s
    }
    /// `self X` for a replicated `X` (`nbands x m`): local, no communication.
    pub fn rotate(&self, x: MatRef<'_, T>) -> GDistBlock<T> {
        assert_eq!(
            x.nrows(),
            self.nbands,
            "planewave-linalg: rotation matrix rows"
        );
        let mut y = Mat::<T>::zeros(self.local.nrows(), x.ncols());
        gemm(y.as_mut(), false, self.local.as_ref(), false, x, false);
        GDistBlock::new(self.comm.clone(), self.rows.clone(), y)
    }
    /// Orthonormalise the bands in place: `S = Psi^H Psi = L L^H` (replicated), then the
    /// triangular solve `Psi <- Psi L^-H` on the local rows. Returns `L`.
    pub fn orthonormalise(&mut self) -> Result<Mat<T>, LinalgError> {
        let s = self.overlap(self);
        let (l, _) = redundant_cholesky(&*self.comm, s.as_ref(), false, CommClass::GVector)?;
        trsm_right(self.local.as_mut(), l.as_ref(), true);
        Ok(l)
    }
    /// The same block distributed over bands (round-robin) through `strategy`, which must be
    /// bound to this block's communicator (or one with the same ranks).
    pub fn to_band(&self, strategy: &(dyn AlltoallvStrategy + 'static)) -> BandDistBlock<T> {
        let (p, me) = (self.comm.size(), self.comm.rank());
        assert_eq!(
            strategy.comm().size(),
            p,
            "planewave-linalg: strategy of another group"
        );
        let mine = self.rows.count(me);
        let nb = self.nbands;
        // To rank d: my rows of each of d's bands, in d's local order.
        let mut send = Vec::with_capacity(mine * nb);
        let mut send_counts = vec![0; p];
        for (d, sc) in send_counts.iter_mut().enumerate() {
            for l in 0..band_count(nb, p, d) {
                send.extend(self.local.col(band_global(d, p, l)).iter().copied());
            }
            *sc = mine * band_count(nb, p, d);
        }
        let nl = band_count(nb, p, me);
        let recv_counts: Vec<usize> = (0..p).map(|s| self.rows.count(s) * nl).collect();
        let recv = {
            let _op = strategy.comm().operation(Operation::Transpose);
            strategy.alltoallv(&send, &send_counts, &recv_counts, CommClass::GVector)
        };
        let npw = self.rows.total();
        let mut local = Mat::<T>::zeros(npw, nl);
        let mut at = 0;
        for s in 0..p {
            let (off, n) = (self.rows.offset(s), self.rows.count(s));
            for l in 0..nl {
                for i in 0..n {
                    local[(off + i, l)] = recv[at + i];
                }
                at += n;
            }
        }
        BandDistBlock::new(self.comm.clone(), npw, nb, local)
    }
}
