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
//! - `Reduce`: rotations `Y = Psi X` by one local GEMM of this rank's bands against their rows
//!   of `X` (every output column, as partial sums) and one reduce-scatter that sums the partial
//!   columns onto their owners: each rank sends about `npw · m` elements for `m` output columns
//!   instead of circulating the whole input block, which pays when the input is wider than the
//!   output (a search space of several blocks against the bands). Overlaps, where one operand
//!   must travel whole anyway, circulate the other operand by the natural ring.
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
use crate::scratch::{sized, BandScratch};
use crate::subspace::redundant_cholesky;
use faer::{Mat, MatMut, MatRef};
use planewave_comm::ring::RingOrder;
use planewave_comm::{
    displacements, AlltoallvStrategy, CommClass, CommExt, Communicator, Operation, Slice, SliceMut,
};
use std::fmt;
use std::sync::Arc;

/// How band-distributed products move the blocks.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BandAlgorithm {
    /// Systolic ring with this neighbour order.
    Ring(RingOrder),
    /// All-gather the whole block, multiply locally.
    Gather,
    /// Rotations: local GEMM and a reduce-scatter of the partial products; overlaps: the
    /// natural ring.
    Reduce,
}

impl BandAlgorithm {
    /// Every algorithm.
    pub const ALL: [BandAlgorithm; 4] = [
        BandAlgorithm::Ring(RingOrder::Natural),
        BandAlgorithm::Ring(RingOrder::OddEven),
        BandAlgorithm::Gather,
        BandAlgorithm::Reduce,
    ];
}

impl std::str::FromStr for BandAlgorithm {
    type Err = String;

    /// The name [`Display`](fmt::Display) prints.
    fn from_str(name: &str) -> Result<Self, String> {
        BandAlgorithm::ALL
            .into_iter()
            .find(|a| a.to_string() == name)
            .ok_or_else(|| {
                let names: Vec<String> = BandAlgorithm::ALL.iter().map(|a| a.to_string()).collect();
                format!(
                    "unknown band algorithm \"{name}\" (known: {})",
                    names.join(", ")
                )
            })
    }
}

impl BandAlgorithm {
    /// The algorithm of overlaps (`Reduce` circulates the other operand by the natural ring).
    fn for_overlaps(self) -> Self {
        match self {
            BandAlgorithm::Reduce => BandAlgorithm::Ring(RingOrder::Natural),
            a => a,
        }
    }
}

impl fmt::Display for BandAlgorithm {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            BandAlgorithm::Ring(RingOrder::Natural) => "ring-natural",
            BandAlgorithm::Ring(RingOrder::OddEven) => "ring-oddeven",
            BandAlgorithm::Gather => "gather",
            BandAlgorithm::Reduce => "reduce",
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
    /// This rank's bands, owned (for reuse of the storage, or to return them).
    pub fn into_local(self) -> Mat<T> {
        self.local
    }

    /// The rows of `S = self^H other` for this rank's bands of `self` (`nlocal x
    /// other.nbands`, row `l` is band `band_global(rank, p, l)`).
    pub fn overlap_rows(&self, other: &BandDistBlock<T>, algo: BandAlgorithm) -> Mat<T> {
        let algo = algo.for_overlaps();
        assert_eq!(
            self.npw, other.npw,
            "planewave-linalg: overlap of blocks of different npw"
        );
        let p = self.comm.size();
        let nb = other.nbands;
        let mut s = Mat::<T>::zeros(self.local.ncols(), nb);
        match algo {
            BandAlgorithm::Reduce => unreachable!("overlaps run by the ring"),
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
                    &mut BandScratch::new(),
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
        rotate_stack(&[self], x, algo)
    }
    /// `self triu(X)` for a replicated square `X` (only its upper triangle is read), by
    /// triangular kernels: the triangular half of [`rotate`](Self::rotate)'s work.
    pub fn rotate_upper(&self, x: MatRef<'_, T>, algo: BandAlgorithm) -> BandDistBlock<T> {
        let mut y = Mat::<T>::zeros(self.npw, self.local.ncols());
        rotate_upper_into(self, x, algo, &mut BandScratch::new(), y.as_mut());
        BandDistBlock::new(self.comm.clone(), self.npw, self.nbands, y)
    }
    /// The bands `cols` of this block (global indices, any order, no repeats), as a new block
    /// whose band `c` is `cols[c]`, dealt round-robin: every column moves once, straight from
    /// its owner to its new owner (one all-to-all-v). Collective.
    pub fn select(&self, cols: &[usize]) -> BandDistBlock<T> {
        let (p, me) = (self.comm.size(), self.comm.rank());
        let npw = self.npw;
        // New band c goes from rank cols[c] % p (local column cols[c] / p) to rank c % p.
        let mut send = Vec::new();
        let mut send_counts = vec![0; p];
        for (dest, count) in send_counts.iter_mut().enumerate() {
            for &j in cols.iter().skip(dest).step_by(p) {
                if j % p == me {
                    send.extend(self.local.col(j / p).iter().copied());
                    *count += npw;
                }
            }
        }
        let mine: Vec<usize> = cols.iter().skip(me).step_by(p).copied().collect();
        let recv_counts: Vec<usize> = (0..p)
            .map(|src| npw * mine.iter().filter(|&&j| j % p == src).count())
            .collect();
        let recv = if p == 1 {
            send
        } else {
            let _op = self.comm.operation(Operation::Transpose);
            self.comm
                .alltoallv(&send, &send_counts, &recv_counts, CLASS)
        };
        // From each source the columns arrive in increasing new index.
        let mut next: Vec<usize> = (0..p)
            .scan(0, |acc, src| {
                let at = *acc;
                *acc += recv_counts[src];
                Some(at)
            })
            .collect();
        let mut local = Mat::<T>::zeros(npw, mine.len());
        for (l, &j) in mine.iter().enumerate() {
            let at = &mut next[j % p];
            local
                .col_mut(l)
                .copy_from(vec_view(&recv[*at..*at + npw], npw, 1).col(0));
            *at += npw;
        }
        BandDistBlock::new(self.comm.clone(), npw, cols.len(), local)
    }
    /// One value per band from this rank's values of its bands (`local_values[l]` for local
    /// band `l`), identical on every rank (an all-gather).
    pub fn gather_values(&self, local_values: &[f64]) -> Vec<f64> {
        let row = Mat::from_fn(1, local_values.len(), |_, l| local_values[l]);
        let all = gather_bands(&*self.comm, row.as_ref(), self.nbands);
        (0..self.nbands).map(|j| all[(0, j)]).collect()
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
        let recv = {
            let _op = strategy.comm().operation(Operation::Transpose);
            strategy.alltoallv(&send, &send_counts, &recv_counts, CLASS)
        };
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

/// `[blocks]^H other` (`sum of the blocks' band counts x other.nbands`), identical on every
/// rank: the blocks (each dealt over its own bands, all on `other`'s communicator) read as one
/// block of their bands side by side, with `other` circulated once for all of them.
pub fn overlap_stack<T: Scalar>(
    blocks: &[&BandDistBlock<T>],
    other: &BandDistBlock<T>,
    algo: BandAlgorithm,
) -> Mat<T> {
    overlap_stack_with(blocks, other, algo, &mut BandScratch::new())
}

/// [`overlap_stack`] through `scratch`'s reusable buffers.
pub fn overlap_stack_with<T: Scalar>(
    blocks: &[&BandDistBlock<T>],
    other: &BandDistBlock<T>,
    algo: BandAlgorithm,
    scratch: &mut BandScratch<T>,
) -> Mat<T> {
    let comm = &*other.comm;
    let p = comm.size();
    let nb = other.nbands;
    let mut rows: Vec<Mat<T>> = blocks
        .iter()
        .map(|b| {
            assert_eq!(
                b.npw, other.npw,
                "planewave-linalg: overlap of blocks of different npw"
            );
            Mat::<T>::zeros(b.local.ncols(), nb)
        })
        .collect();
    let mut part = Mat::<T>::zeros(0, 0);
    let mut visit = |cols: &dyn Fn(usize) -> usize, block: MatRef<'_, T>| {
        for (b, s) in blocks.iter().zip(rows.iter_mut()) {
            part.resize_with(b.local.ncols(), block.ncols(), |_, _| T::from_f64(0.0));
            gemm(part.as_mut(), false, b.local.as_ref(), true, block, false);
            for l in 0..block.ncols() {
                s.col_mut(cols(l)).copy_from(part.col(l));
            }
        }
    };
    match algo.for_overlaps() {
        BandAlgorithm::Gather => visit(&|l| l, other.to_global().as_ref()),
        BandAlgorithm::Reduce => unreachable!("overlaps run by the ring"),
        BandAlgorithm::Ring(order) => systolic(
            comm,
            order,
            other.local.as_ref(),
            |r| band_count(nb, p, r),
            CLASS,
            scratch,
            |owner, block| visit(&|l| band_global(owner, p, l), block),
        ),
    }
    let m: usize = blocks.iter().map(|b| b.nbands).sum();
    let mut out = Mat::<T>::zeros(m, nb);
    let mut at = 0;
    for (b, s) in blocks.iter().zip(&rows) {
        let full = gather_bands(comm, s.transpose().to_owned().as_ref(), b.nbands);
        out.as_mut()
            .submatrix_mut(at, 0, b.nbands, nb)
            .copy_from(full.transpose());
        at += b.nbands;
    }
    out
}

/// `[blocks] X` for a replicated `X` (one row per band of the blocks, in order), dealt
/// round-robin over its columns: every rank's parts of all the blocks circulate once, side by
/// side.
pub fn rotate_stack<T: Scalar>(
    blocks: &[&BandDistBlock<T>],
    x: MatRef<'_, T>,
    algo: BandAlgorithm,
) -> BandDistBlock<T> {
    let first = blocks.first().expect("planewave-linalg: an empty stack");
    let (comm, npw) = (first.comm.clone(), first.npw);
    let nl_out = band_count(x.ncols(), comm.size(), comm.rank());
    let mut y = Mat::<T>::zeros(npw, nl_out);
    rotate_stack_into(blocks, x, algo, &mut BandScratch::new(), y.as_mut());
    BandDistBlock::new(comm, npw, x.ncols(), y)
}

/// [`rotate_stack`] into `out`, this rank's columns of the result (`npw x band_count(x.ncols(),
/// p, rank)`, overwritten; it must not alias the blocks), through `scratch`'s reusable buffers.
pub fn rotate_stack_into<T: Scalar>(
    blocks: &[&BandDistBlock<T>],
    x: MatRef<'_, T>,
    algo: BandAlgorithm,
    scratch: &mut BandScratch<T>,
    mut out: MatMut<'_, T>,
) {
    let first = blocks.first().expect("planewave-linalg: an empty stack");
    let (comm, npw) = (first.comm.clone(), first.npw);
    let (p, me) = (comm.size(), comm.rank());
    let sizes: Vec<usize> = blocks.iter().map(|b| b.nbands).collect();
    assert_eq!(
        x.nrows(),
        sizes.iter().sum::<usize>(),
        "planewave-linalg: rotation matrix rows"
    );
    let nout = x.ncols();
    let nl_out = band_count(nout, p, me);
    assert_eq!(
        (out.nrows(), out.ncols()),
        (npw, nl_out),
        "planewave-linalg: local shape of a rotation's output"
    );
    // Row offset of every block in X.
    let offsets: Vec<usize> = sizes
        .iter()
        .scan(0, |acc, &n| {
            let o = *acc;
            *acc += n;
            Some(o)
        })
        .collect();
    if algo == BandAlgorithm::Reduce {
        return reduce_rotation(blocks, x, &offsets, Shape::General, scratch, out);
    }
    out.fill(T::from_f64(0.0));
    // `owner`'s parts of the blocks (or, not `dealt`, the whole blocks), side by side, times
    // the rows of X they stand for.
    let mut visit = |owner: usize, stacked: MatRef<'_, T>, dealt: bool| {
        let mut col = 0;
        for (&nb, &off) in sizes.iter().zip(&offsets) {
            let k = if dealt { band_count(nb, p, owner) } else { nb };
            let xs = Mat::from_fn(k, nl_out, |kk, l| {
                let row = if dealt { band_global(owner, p, kk) } else { kk };
                x[(off + row, band_global(me, p, l))]
            });
            gemm(
                out.as_mut(),
                true,
                stacked.subcols(col, k),
                false,
                xs.as_ref(),
                false,
            );
            col += k;
        }
    };
    match algo {
        BandAlgorithm::Gather => {
            let globals: Vec<Mat<T>> = blocks.iter().map(|b| b.to_global()).collect();
            let mut all = Mat::<T>::zeros(npw, sizes.iter().sum());
            let mut at = 0;
            for g in &globals {
                all.as_mut().subcols_mut(at, g.ncols()).copy_from(g);
                at += g.ncols();
            }
            visit(me, all.as_ref(), false);
        }
        BandAlgorithm::Ring(order) => {
            let mine: usize = blocks.iter().map(|b| b.local.ncols()).sum();
            let mut stacked = Mat::<T>::zeros(npw, mine);
            let mut at = 0;
            for b in blocks {
                stacked
                    .as_mut()
                    .subcols_mut(at, b.local.ncols())
                    .copy_from(&b.local);
                at += b.local.ncols();
            }
            let ncols_of = |r: usize| sizes.iter().map(|&n| band_count(n, p, r)).sum();
            systolic(
                &*comm,
                order,
                stacked.as_ref(),
                ncols_of,
                CLASS,
                scratch,
                |owner, block| visit(owner, block, true),
            );
        }
        BandAlgorithm::Reduce => unreachable!("reduced rotations returned above"),
    }
}

/// `block triu(X)` into `out` for a replicated square `X` (only its upper triangle is read):
/// [`rotate_stack_into`] with triangular kernels, about half the flops. The ring multiplies
/// each visiting block by its triangle; a reduced rotation forms each panel of output columns
/// from the leading local bands that reach it; gather multiplies by the masked triangle.
pub fn rotate_upper_into<T: Scalar>(
    block: &BandDistBlock<T>,
    x: MatRef<'_, T>,
    algo: BandAlgorithm,
    scratch: &mut BandScratch<T>,
    mut out: MatMut<'_, T>,
) {
    let nb = block.nbands;
    assert_eq!(
        (x.nrows(), x.ncols()),
        (nb, nb),
        "planewave-linalg: a triangular rotation is square over the block's bands"
    );
    let (p, me) = (block.comm.size(), block.comm.rank());
    let nl = band_count(nb, p, me);
    assert_eq!(
        (out.nrows(), out.ncols()),
        (block.npw, nl),
        "planewave-linalg: local shape of a rotation's output"
    );
    let upper = |i: usize, j: usize| if i <= j { x[(i, j)] } else { T::from_f64(0.0) };
    match algo {
        BandAlgorithm::Reduce => {
            let masked = Mat::from_fn(nb, nb, upper);
            reduce_rotation(&[block], masked.as_ref(), &[0], Shape::Upper, scratch, out);
        }
        BandAlgorithm::Gather => {
            let masked = Mat::from_fn(nb, nb, upper);
            rotate_stack_into(&[block], masked.as_ref(), algo, scratch, out);
        }
        BandAlgorithm::Ring(order) => {
            out.fill(T::from_f64(0.0));
            // The columns of X this rank produces.
            let xmine = Mat::from_fn(nb, nl, |i, l| upper(i, band_global(me, p, l)));
            systolic(
                &*block.comm,
                order,
                block.local.as_ref(),
                |r| band_count(nb, p, r),
                CLASS,
                scratch,
                |owner, visiting| {
                    // Rows of X for the owner's bands.
                    let k = visiting.ncols();
                    let xs = Mat::from_fn(k, nl, |kk, l| xmine[(band_global(owner, p, kk), l)]);
                    upper_block(out.as_mut(), visiting, xs.as_ref(), owner > me);
                },
            );
        }
    }
}

/// What a reduced rotation may assume of `X`.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Shape {
    /// Any matrix.
    General,
    /// Square and upper triangular (zeros below the diagonal), one block.
    Upper,
}

/// Output columns of a triangular reduced rotation formed by one GEMM: wide enough for the
/// kernels, narrow enough that the skipped zero rows are about half of the work.
const UPPER_PANEL: usize = 32;

/// Tag of a reduced rotation's exchange of partial sums.
const TAG_REDUCE: u32 = 0x4C41_0002;

/// Elements of a reduced rotation's partial products formed at once: the rows are taken in
/// slabs of about this many elements, so the partial products and the received pieces stay a
/// few MiB (and in cache) instead of `p` times the output.
const REDUCE_SLAB_ELEMENTS: usize = 1 << 18;

/// [`rotate_stack_into`] by `Reduce`, slab of rows by slab: every rank multiplies its parts of
/// the blocks by their rows of `X` into all output columns, ordered by owner (rank r's
/// columns r, r + p, ... side by side), sends each owner its columns and sums, in rank order,
/// the pieces it receives for its own (a reduce-scatter by one exchange: each rank sends and
/// receives `(p - 1) / p` of the partial products, with no root). With `Shape::Upper`, a
/// panel of output columns is formed from the local bands at or above its last column only.
fn reduce_rotation<T: Scalar>(
    blocks: &[&BandDistBlock<T>],
    x: MatRef<'_, T>,
    offsets: &[usize],
    shape: Shape,
    scratch: &mut BandScratch<T>,
    mut out: MatMut<'_, T>,
) {
    let (comm, npw) = (&*blocks[0].comm, blocks[0].npw);
    let (p, me) = (comm.size(), comm.rank());
    let nout = x.ncols();
    // Output columns in owner order, and every block's rows of X in that order.
    let order: Vec<usize> = (0..p)
        .flat_map(|r| (0..band_count(nout, p, r)).map(move |l| band_global(r, p, l)))
        .collect();
    let xs: Vec<Mat<T>> = blocks
        .iter()
        .zip(offsets)
        .map(|(b, &off)| {
            Mat::from_fn(b.local.ncols(), nout, |kk, c| {
                x[(off + band_global(me, p, kk), order[c])]
            })
        })
        .collect();
    let slab = (REDUCE_SLAB_ELEMENTS / nout.max(1)).clamp(1, npw.max(1));
    for r0 in (0..npw).step_by(slab) {
        let h = slab.min(npw - r0);
        let partial = sized(&mut scratch.partial, h * nout);
        let mut written = false;
        for (b, xb) in blocks.iter().zip(&xs) {
            if xb.nrows() > 0 {
                let dst = MatMut::from_column_major_slice_mut(partial, h, nout);
                let rows = b.local.as_ref().subrows(r0, h);
                match shape {
                    Shape::General => gemm(dst, written, rows, false, xb.as_ref(), false),
                    Shape::Upper => upper_panels(dst, rows, xb.as_ref(), &order, (me, p)),
                }
                written = true;
            }
        }
        if !written {
            partial.fill(T::from_f64(0.0));
        }
        let counts: Vec<usize> = (0..p).map(|r| h * band_count(nout, p, r)).collect();
        let pieces = sized(&mut scratch.pieces, counts[me] * (p - 1));
        exchange_pieces(comm, partial, &counts, pieces);
        sum_pieces(
            out.as_mut().subrows_mut(r0, h),
            &partial[displacements(&counts)[me]..],
            pieces,
            (me, p),
        );
    }
}

/// `dst = a xb` for a triangular reduced rotation: `a` holds this rank's bands `me, me + p,
/// ...`, `xb` their rows of an upper triangular `X` with the columns in `order`; a panel of
/// columns needs only the local bands up to its last column's band.
fn upper_panels<T: Scalar>(
    mut dst: MatMut<'_, T>,
    a: MatRef<'_, T>,
    xb: MatRef<'_, T>,
    order: &[usize],
    (me, p): (usize, usize),
) {
    let nl = a.ncols();
    let reach = |j: usize| {
        if j < me {
            0
        } else {
            ((j - me) / p + 1).min(nl)
        }
    };
    let mut c0 = 0;
    while c0 < order.len() {
        // A panel stays within one owner's columns, where the bands grow with the column.
        let owner = order[c0] % p;
        let mut c1 = c0 + 1;
        while c1 < order.len() && c1 - c0 < UPPER_PANEL && order[c1] % p == owner {
            c1 += 1;
        }
        let k = reach(order[c1 - 1]);
        let mut panel = dst.as_mut().subcols_mut(c0, c1 - c0);
        if k == 0 {
            panel.fill(T::from_f64(0.0));
        } else {
            let xs = xb.submatrix(0, c0, k, c1 - c0);
            gemm(panel, false, a.subcols(0, k), false, xs, false);
        }
        c0 = c1;
    }
}

/// Send block `r` of `partial` (`counts[r]` elements) to every other rank `r` and receive this
/// rank's block from each of them into `pieces`, in rank order.
fn exchange_pieces<T: Scalar>(
    comm: &dyn Communicator,
    partial: &[T],
    counts: &[usize],
    pieces: &mut [T],
) {
    let _op = comm.operation(Operation::Overlap);
    let (p, me) = (comm.size(), comm.rank());
    if p == 1 {
        return;
    }
    let starts = displacements(counts);
    let sends: Vec<(usize, Slice<'_>)> = (0..p)
        .filter(|&r| r != me)
        .map(|r| (r, T::slice(&partial[starts[r]..starts[r] + counts[r]])))
        .collect();
    // One piece per other rank, empty ones included (their messages must be matched).
    let mut rest = pieces;
    let mut recvs: Vec<(usize, SliceMut<'_>)> = Vec::with_capacity(p - 1);
    for r in (0..p).filter(|&r| r != me) {
        let (piece, tail) = std::mem::take(&mut rest).split_at_mut(counts[me]);
        recvs.push((r, T::slice_mut(piece)));
        rest = tail;
    }
    comm.exchange_raw(&sends, &mut recvs, TAG_REDUCE, CLASS);
}

/// `out` (rows x columns, column-major pieces) = the own partial block plus the received
/// pieces, summed in rank order.
fn sum_pieces<T: Scalar>(mut out: MatMut<'_, T>, own: &[T], pieces: &[T], (me, p): (usize, usize)) {
    let h = out.nrows();
    let c = h * out.ncols();
    for l in 0..out.ncols() {
        let at = l * h;
        let column = |r: usize| {
            let from = if r == me {
                own
            } else {
                &pieces[(r - usize::from(r > me)) * c..]
            };
            &from[at..at + h]
        };
        let mut col = out.as_mut().col_mut(l);
        for (v, &first) in col.as_mut().iter_mut().zip(column(0)) {
            *v = first;
        }
        for r in 1..p {
            for (v, &add) in col.as_mut().iter_mut().zip(column(r)) {
                *v += add;
            }
        }
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
    let _op = comm.operation(Operation::Overlap);
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
