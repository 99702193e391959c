//! Band-distributed blocks: bands dealt round-robin, each rank holding all coefficients of its
//! bands; products by a systolic ring (or, for comparison, by gathering the whole block).
//!
//! Contract: a [`BandDistBlock`] is an `npw x nbands` block whose band `j` lives on rank
//! `j % p` as local column `j / p` (ranks with `rank >= nbands` own nothing). Operations are
//! collective over the group (class band) and take a [`BandAlgorithm`]:
//! - `Ring(order)`: the blocks circulate around a ring with the given neighbour order
//!   (`Natural` n±1 or CASTEP's `OddEven`), the transfer of the next block overlapping the
//!   GEMM on the current one; memory per rank stays O(npw · nbands / p).
//! - `Gather`: every rank all-gathers the whole block and multiplies locally (the simple
//!   alternative the ring replaces; O(npw · nbands) memory per rank).
//!
//! Replicated inputs (rotation matrices) must be identical on every rank; replicated outputs
//! (full overlaps, Cholesky factors) are. Orthonormalisation: full overlap, Cholesky and
//! triangular inverse on rank 0 (broadcast), then the triangular rotation
//! `Psi <- Psi L^-H` by the ring with triangular kernels (about half the flops of a general
//! rotation).

use crate::dense::{gemm, upper_matmul_acc};
use crate::gdist::GDistBlock;
use crate::partition::{band_count, band_global, mat_to_vec, vec_to_mat, vec_view, RowPartition};
use crate::ring::systolic;
use crate::scalar::{LinalgError, Scalar};
use crate::subspace::redundant_cholesky;
use faer::{Mat, MatMut, MatRef};
use planewave_comm::ring::RingOrder;
use planewave_comm::{AlltoallvStrategy, CommClass, CommExt, Communicator};
use std::fmt;
use std::sync::Arc;

/// How band-distributed products move the blocks.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BandAlgorithm {
    /// Systolic ring with this neighbour order.
    Ring(RingOrder),
    /// All-gather the whole block, multiply locally.
    Gather,
}

impl BandAlgorithm {
    /// Every algorithm.
    pub const ALL: [BandAlgorithm; 3] = [
        BandAlgorithm::Ring(RingOrder::Natural),
        BandAlgorithm::Ring(RingOrder::OddEven),
        BandAlgorithm::Gather,
    ];
}

impl fmt::Display for BandAlgorithm {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            BandAlgorithm::Ring(RingOrder::Natural) => "ring-natural",
            BandAlgorithm::Ring(RingOrder::OddEven) => "ring-oddeven",
            BandAlgorithm::Gather => "gather",
        })
    }
}

const CLASS: CommClass = CommClass::Band;

/// An `npw x nbands` block distributed round-robin over bands.
#[derive(Clone)]
pub struct BandDistBlock<T: Scalar> {
    comm: Arc<dyn Communicator>,
    npw: usize,
    nbands: usize,
    local: Mat<T>,
}

impl<T: Scalar> BandDistBlock<T> {
    /// Wrap this rank's bands (`npw x band_count(nbands, p, rank)`, in local order); panics
    /// on a shape mismatch.
    pub fn new(comm: Arc<dyn Communicator>, npw: usize, nbands: usize, local: Mat<T>) -> Self {
        let nl = band_count(nbands, comm.size(), comm.rank());
        assert_eq!(
            (local.nrows(), local.ncols()),
            (npw, nl),
            "planewave-linalg: local shape of a band-distributed block"
        );
        BandDistBlock {
            comm,
            npw,
            nbands,
            local,
        }
    }
    /// This rank's bands of a block every rank holds in full.
    pub fn from_global(comm: Arc<dyn Communicator>, global: MatRef<'_, T>) -> Self {
        let (p, me) = (comm.size(), comm.rank());
        let nb = global.ncols();
        let nl = band_count(nb, p, me);
        let local = Mat::from_fn(global.nrows(), nl, |i, l| {
            global[(i, band_global(me, p, l))]
        });
        Self::new(comm, global.nrows(), nb, local)
    }
    /// The whole block on every rank (an all-gather).
    pub fn to_global(&self) -> Mat<T> {
        gather_bands(&*self.comm, self.local.as_ref(), self.nbands)
    }
    /// The communicator (the band group).
    pub fn comm(&self) -> &Arc<dyn Communicator> {
        &self.comm
    }
    /// Coefficients per band.
    pub fn npw(&self) -> usize {
        self.npw
    }
    /// Number of bands.
    pub fn nbands(&self) -> usize {
        self.nbands
    }
    /// Global indices of this rank's bands, in local order.
    pub fn local_bands(&self) -> Vec<usize> {
        let (p, me) = (self.comm.size(), self.comm.rank());
        (0..self.local.ncols())
            .map(|l| band_global(me, p, l))
            .collect()
    }
    /// This rank's bands.
    pub fn local(&self) -> MatRef<'_, T> {
        self.local.as_ref()
    }
    /// This rank's bands, writable.
    pub fn local_mut(&mut self) -> MatMut<'_, T> {
        self.local.as_mut()
    }

    /// The rows of `S = self^H other` for this rank's bands of `self` (`nlocal x
    /// other.nbands`, row `l` is band `band_global(rank, p, l)`).
    pub fn overlap_rows(&self, other: &BandDistBlock<T>, algo: BandAlgorithm) -> Mat<T> {
        assert_eq!(
            self.npw, other.npw,
            "planewave-linalg: overlap of blocks of different npw"
        );
        let p = self.comm.size();
        let nb = other.nbands;
        let mut s = Mat::<T>::zeros(self.local.ncols(), nb);
        match algo {
            BandAlgorithm::Gather => {
                let full = other.to_global();
                gemm(
                    s.as_mut(),
                    false,
                    self.local.as_ref(),
                    true,
                    full.as_ref(),
                    false,
                );
            }
            BandAlgorithm::Ring(order) => {
                let mut part = Mat::<T>::zeros(self.local.ncols(), 0);
                systolic(
                    &*self.comm,
                    order,
                    other.local.as_ref(),
                    |r| band_count(nb, p, r),
                    CLASS,
                    |owner, block| {
                        part.resize_with(self.local.ncols(), block.ncols(), |_, _| {
                            T::from_f64(0.0)
                        });
                        gemm(
                            part.as_mut(),
                            false,
                            self.local.as_ref(),
                            true,
                            block,
                            false,
                        );
                        for l in 0..block.ncols() {
                            s.col_mut(band_global(owner, p, l)).copy_from(part.col(l));
                        }
                    },
                );
            }
        }
        s
    }
    /// The full `S = self^H other` (`nbands x other.nbands`), identical on every rank: the
    /// rows of [`overlap_rows`](Self::overlap_rows), all-gathered.
    pub fn overlap(&self, other: &BandDistBlock<T>, algo: BandAlgorithm) -> Mat<T> {
        let rows = self.overlap_rows(other, algo);
        gather_bands(
            &*self.comm,
            rows.transpose().to_owned().as_ref(),
            self.nbands,
        )
        .transpose()
        .to_owned()
    }
    /// `self X` for a replicated `X` (`nbands x m`), distributed round-robin over its `m`
    /// bands.
    pub fn rotate(&self, x: MatRef<'_, T>, algo: BandAlgorithm) -> BandDistBlock<T> {
        self.rotate_impl(x, algo, false)
    }
    /// `self triu(X)` for a replicated square `X` (only its upper triangle is read), by
    /// triangular kernels: the triangular half of [`rotate`](Self::rotate)'s work.
    pub fn rotate_upper(&self, x: MatRef<'_, T>, algo: BandAlgorithm) -> BandDistBlock<T> {
        assert_eq!(
            x.nrows(),
            x.ncols(),
            "planewave-linalg: triangular rotation must be square"
        );
        self.rotate_impl(x, algo, true)
    }
    fn rotate_impl(&self, x: MatRef<'_, T>, algo: BandAlgorithm, upper: bool) -> BandDistBlock<T> {
        assert_eq!(
            x.nrows(),
            self.nbands,
            "planewave-linalg: rotation matrix rows"
        );
        let (p, me) = (self.comm.size(), self.comm.rank());
        let (nb, nout) = (self.nbands, x.ncols());
        let nl_out = band_count(nout, p, me);
        let mut y = Mat::<T>::zeros(self.npw, nl_out);
        // The columns of X this rank produces.
        let xmine = Mat::from_fn(nb, nl_out, |i, l| {
            let j = band_global(me, p, l);
            if !upper || i <= j {
                x[(i, j)]
            } else {
                T::from_f64(0.0)
            }
        });
        match algo {
            BandAlgorithm::Gather => {
                let full = self.to_global();
                gemm(
                    y.as_mut(),
                    false,
                    full.as_ref(),
                    false,
                    xmine.as_ref(),
                    false,
                );
            }
            BandAlgorithm::Ring(order) => {
                systolic(
                    &*self.comm,
                    order,
                    self.local.as_ref(),
                    |r| band_count(nb, p, r),
                    CLASS,
                    |owner, block| {
                        let k = block.ncols();
                        // Rows of X for the owner's bands.
                        let xs =
                            Mat::from_fn(k, nl_out, |kk, l| xmine[(band_global(owner, p, kk), l)]);
                        if upper {
                            upper_block(y.as_mut(), block, xs.as_ref(), owner > me);
                        } else {
                            gemm(y.as_mut(), true, block, false, xs.as_ref(), false);
                        }
                    },
                );
            }
        }
        BandDistBlock::new(self.comm.clone(), self.npw, nout, y)
    }
    /// Orthonormalise the bands in place: `S = Psi^H Psi = L L^H` (replicated; factor and
    /// inverse on rank 0, broadcast), then `Psi <- Psi L^-H` by [`rotate_upper`](Self::rotate_upper).
    /// Returns `L`.
    pub fn orthonormalise(&mut self, algo: BandAlgorithm) -> Result<Mat<T>, LinalgError> {
        let s = self.overlap(self, algo);
        let (l, inv) = redundant_cholesky(&*self.comm, s.as_ref(), true, CLASS)?;
        let inv = inv.expect("inverse requested");
        let u = inv.adjoint().to_owned();
        *self = self.rotate_upper(u.as_ref(), algo);
        Ok(l)
    }
    /// The same block distributed over coefficient rows by `rows`, through `strategy` (bound
    /// to this block's communicator or one with the same ranks).
    pub fn to_g(
        &self,
        rows: &RowPartition,
        strategy: &(dyn AlltoallvStrategy + 'static),
    ) -> GDistBlock<T> {
        let (p, me) = (self.comm.size(), self.comm.rank());
        assert_eq!(
            strategy.comm().size(),
            p,
            "planewave-linalg: strategy of another group"
        );
        assert_eq!(
            rows.total(),
            self.npw,
            "planewave-linalg: row partition of another npw"
        );
        let nl = self.local.ncols();
        let mut send = Vec::with_capacity(self.npw * nl);
        let send_counts: Vec<usize> = (0..p)
            .map(|d| {
                let (off, n) = (rows.offset(d), rows.count(d));
                for l in 0..nl {
                    send.extend(self.local.col(l).subrows(off, n).iter().copied());
                }
                n * nl
            })
            .collect();
        let mine = rows.count(me);
        let recv_counts: Vec<usize> = (0..p)
            .map(|s| mine * band_count(self.nbands, p, s))
            .collect();
        let recv = strategy.alltoallv(&send, &send_counts, &recv_counts, CLASS);
        let mut local = Mat::<T>::zeros(mine, self.nbands);
        let mut at = 0;
        for s in 0..p {
            for l in 0..band_count(self.nbands, p, s) {
                local
                    .col_mut(band_global(s, p, l))
                    .copy_from(vec_view(&recv[at..at + mine], mine, 1).col(0));
                at += mine;
            }
        }
        GDistBlock::new(self.comm.clone(), rows.clone(), local)
    }
}

/// `Y += A triu(X)` restricted to one ring step: `X` (`k x m`, rows = the owner's bands,
/// columns = this rank's bands) is upper triangular in its leading square, strictly so when
/// the owner comes after this rank (round-robin: `o + kp <= me + lp` iff `k <= l` for
/// `o <= me`, `k < l` otherwise). An extra last column (`m = k + 1`) is full; an extra last
/// row (`k = m + 1`) is zero.
fn upper_block<T: Scalar>(mut y: MatMut<'_, T>, a: MatRef<'_, T>, x: MatRef<'_, T>, strict: bool) {
    let (k, m) = (x.nrows(), x.ncols());
    let sq = k.min(m);
    if sq > 0 {
        upper_matmul_acc(
            y.as_mut().subcols_mut(0, sq),
            a.subcols(0, sq),
            x.submatrix(0, 0, sq, sq),
            strict,
        );
    }
    if m > sq {
        gemm(
            y.subcols_mut(sq, m - sq),
            true,
            a,
            false,
            x.subcols(sq, m - sq),
            false,
        );
    }
}

/// All-gather round-robin distributed columns: every rank's `local` (`rows x
/// band_count(ncols, p, rank)`) into the full `rows x ncols` matrix on every rank.
fn gather_bands<T: Scalar>(comm: &dyn Communicator, local: MatRef<'_, T>, ncols: usize) -> Mat<T> {
    let p = comm.size();
    let rows = local.nrows();
    let all = if p == 1 {
        mat_to_vec(local)
    } else {
        comm.allgatherv(&mat_to_vec(local), CLASS)
    };
    let mut g = Mat::<T>::zeros(rows, ncols);
    let mut at = 0;
    for r in 0..p {
        let nl = band_count(ncols, p, r);
        let block = vec_to_mat(&all[at..at + rows * nl], rows, nl);
        for l in 0..nl {
            g.col_mut(band_global(r, p, l)).copy_from(block.col(l));
        }
        at += rows * nl;
    }
    g
}
