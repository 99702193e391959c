//! Block Davidson on band-distributed blocks: the algorithm of [`super::davidson`] with every
//! block of vectors dealt round-robin over the ranks of a band group (band `j` on rank
//! `j % p`, all of its coefficients — or this rank's G-vector rows of them — local).
//!
//! Contract: every rank of the band group calls [`davidson_bands`] together with its own
//! columns of the starting block; each returns its columns of the Ritz vectors (same deal) and
//! all eigenvalues and residual norms, identical on every rank. The operator is applied to
//! local columns only. Overlaps and rotations go through planewave-linalg's
//! [`BandDistBlock`] (systolic ring or gather, `algo`), sums over G-vector rows through
//! [`BlockOperator::sum_rows`]. The Ritz pairs are solved over the whole grid of the k-point
//! group (band x G) by planewave-linalg's [`subspace::eigen`] (rank 0 solves and broadcasts,
//! or ScaLAPACK block-cyclic over the grid from `SCALAPACK_MIN_DIM` on), and the
//! orthonormalising transforms are taken from band rank 0, so all ranks rotate by the same
//! matrices bit for bit. New directions are orthonormalised as the serial solver does them:
//! Cholesky of their overlap and the triangular rotation `W L^-H` (planewave-linalg's
//! [`rotate_upper_into`]: the ring's triangular kernels, or a reduced rotation that skips the
//! zero triangle), the canonical transform when they are near dependence.
//!
//! The search space is a list of blocks (the start or last restart, then one block per
//! iteration), each dealt over its own columns, so that new directions never have to be
//! re-dealt to append them; a product with the space circulates all of its blocks once, side
//! by side (planewave-linalg's [`overlap_stack_with`] and [`rotate_stack_into`]). The
//! products' message buffers ([`BandScratch`]) and the blocks' storage (`block_pool`) are
//! reused from iteration to iteration.

use super::block::{hermitian_part, orthonormaliser, Orthonormaliser};
use super::block_pool::BlockPool;
use super::davidson::{g_psi_factor, Locking, Tolerances, DEPENDENCE_TOL};
use super::{BlockOperator, EigenResult};
use crate::gvectors::sum_matrix;
use planewave_comm::{CommClass, CommExt, Communicator, Operation};
use planewave_linalg::partition::{band_count, band_global};
use planewave_linalg::subspace;
use planewave_linalg::{
    overlap_stack_with, rotate_stack_into, rotate_upper_into, triangular_inverse, BandAlgorithm,
    BandDistBlock, BandScratch, Mat, MatRef, Scalar,
};
use std::cell::RefCell;
use std::sync::Arc;

/// Lowest `nb` eigenpairs of `op` as [`super::davidson::davidson`] finds them, with the
/// bands dealt over `band` (`x0`: this rank's columns of the `nb` starting vectors) and the
/// subspace eigenproblems solved over `grid` (every rank of the k-point group: `band`'s ranks
/// and the G-vector groups of their bands). The result's `vectors` are this rank's columns of
/// the Ritz vectors.
#[allow(clippy::too_many_arguments)]
pub fn davidson_bands<T: Scalar>(
    op: &impl BlockOperator<T>,
    (band, grid): (&Arc<dyn Communicator>, &Arc<dyn Communicator>),
    algo: BandAlgorithm,
    x0: Mat<T>,
    nb: usize,
    tols: Tolerances,
    min_iterations: usize,
    maxiter: usize,
    dim_factor: usize,
) -> EigenResult<T> {
    let n_global = op.global_dim();
    assert!(
        nb <= n_global,
        "more bands ({nb}) than plane waves ({n_global})"
    );
    let max_dim = (dim_factor.max(2) * nb).min(n_global).max(nb);
    let ctx = Ctx {
        op,
        band,
        grid,
        algo,
        scratch: RefCell::new(BandScratch::new()),
        pool: RefCell::new(BlockPool::default()),
    };
    let mut x = BandDistBlock::new(band.clone(), op.dim(), nb, x0);
    if let Some(o) = ctx.orthonormaliser(&x).filter(|o| o.kept() == nb) {
        x = ctx.orthonormalise(x, &o);
    }
    let ax = ctx.apply(&x);
    let mut n_applications = nb;
    let mut h = Mat::<T>::zeros(max_dim, max_dim);
    h.as_mut()
        .submatrix_mut(0, 0, nb, nb)
        .copy_from(&ctx.gram(std::slice::from_ref(&x), &ax));
    let mut s = Space {
        v: vec![x],
        av: vec![ax],
        h,
        m: nb,
    };
    let diag = op.diagonal();
    let mut lock = Locking::new(nb, tols);
    let mut iterations = 0;
    let (mut theta, mut c) = ctx.ritz(&s, nb);
    loop {
        let open = lock.open();
        if s.m + open.len() > max_dim && s.m > nb {
            s.restart(&ctx, &theta, c.as_ref());
            c = Mat::from_fn(nb, nb, |i, j| T::from_f64(if i == j { 1.0 } else { 0.0 }));
        }
        let r = s.residuals(&ctx, &theta, c.as_ref(), &open);
        let norms2 = ctx.norms2(&r);
        let force = iterations < min_iterations;
        let active = lock.pick_active(&open, &norms2, force, max_dim - s.m);
        if active.is_empty() || iterations >= maxiter || lock.empty_only_done(force) {
            break;
        }
        iterations += 1;
        let mut w = if active.len() == open.len() {
            r
        } else {
            let cols: Vec<usize> = active.iter().map(|&(k, _)| k).collect();
            let w = r.select(&cols);
            ctx.recycle(r);
            w
        };
        precondition(&mut w, &diag, &theta, &active);
        let Some(w) = s.orthogonalize_new(&ctx, w) else {
            break;
        };
        let aw = ctx.apply(&w);
        n_applications += w.nbands();
        s.extend(&ctx, w, aw);
        (theta, c) = ctx.ritz(&s, nb);
    }
    let vectors = ctx.combine(&s.v.iter().collect::<Vec<_>>(), c.as_ref());
    drop(s);
    let converged = lock.locked.iter().all(|&l| l);
    EigenResult {
        values: theta,
        vectors: vectors.into_local(),
        residual_norms: lock.resid,
        iterations,
        n_applications,
        converged,
    }
}

/// The operator, the band group, the product algorithm and the reused buffers.
struct Ctx<'a, O, T: Scalar> {
    op: &'a O,
    band: &'a Arc<dyn Communicator>,
    /// Every rank of the k-point group (band x G).
    grid: &'a Arc<dyn Communicator>,
    algo: BandAlgorithm,
    /// The products' message buffers.
    scratch: RefCell<BandScratch<T>>,
    /// Storage of blocks no longer used.
    pool: RefCell<BlockPool<T>>,
}

impl<O, T: Scalar> Ctx<'_, O, T> {
    /// `data` as band rank 0 has it, on every rank of the band group.
    fn take_rank0<E: planewave_comm::Element>(&self, data: &mut [E]) {
        if self.band.size() > 1 {
            let _op = self.band.operation(Operation::Subspace);
            self.band.broadcast(data, 0, CommClass::Band);
        }
    }

    /// `m` as band rank 0 has it.
    fn mat_of_rank0(&self, m: Mat<T>) -> Mat<T> {
        if self.band.size() == 1 {
            return m;
        }
        sum_matrix(m, |flat| self.take_rank0(flat))
    }

    /// A block of `nbands` bands of `npw` rows from the pool (contents unspecified).
    fn block(&self, npw: usize, nbands: usize) -> BandDistBlock<T> {
        let (p, me) = (self.band.size(), self.band.rank());
        let local = self.pool.borrow_mut().take(npw, band_count(nbands, p, me));
        BandDistBlock::new(self.band.clone(), npw, nbands, local)
    }

    /// Give `x`'s storage back to the pool.
    fn recycle(&self, x: BandDistBlock<T>) {
        self.pool.borrow_mut().give(x.into_local());
    }
}

impl<O: BlockOperator<T>, T: Scalar> Ctx<'_, O, T> {
    /// `op x` on this rank's columns.
    fn apply(&self, x: &BandDistBlock<T>) -> BandDistBlock<T> {
        let mut out = self.block(x.npw(), x.nbands());
        self.op.apply(x.local(), out.local_mut());
        out
    }

    /// `[blocks]^H y` over all rows, identical on every rank (`y` circulates once).
    fn gram(&self, blocks: &[BandDistBlock<T>], y: &BandDistBlock<T>) -> Mat<T> {
        let refs: Vec<&BandDistBlock<T>> = blocks.iter().collect();
        let s = overlap_stack_with(&refs, y, self.algo, &mut self.scratch.borrow_mut());
        sum_matrix(s, |flat| self.op.sum_rows(flat))
    }

    /// `[blocks] c` for a replicated `c` with one row per column of the blocks (the blocks
    /// circulate once, side by side), in a block from the pool.
    fn combine(&self, blocks: &[&BandDistBlock<T>], c: MatRef<'_, T>) -> BandDistBlock<T> {
        let mut out = self.block(blocks[0].npw(), c.ncols());
        let scratch = &mut self.scratch.borrow_mut();
        rotate_stack_into(blocks, c, self.algo, scratch, out.local_mut());
        out
    }

    /// `x t`, `x`'s storage recycled.
    fn rotate(&self, x: BandDistBlock<T>, t: MatRef<'_, T>) -> BandDistBlock<T> {
        let y = self.combine(&[&x], t);
        self.recycle(x);
        y
    }

    /// Squared column norms over all rows, one per band of `x`, on every rank.
    fn norms2(&self, x: &BandDistBlock<T>) -> Vec<f64> {
        let local = x.local();
        let mut n2: Vec<f64> = (0..local.ncols())
            .map(|l| local.col(l).iter().map(|v| v.abs2()).sum())
            .collect();
        self.op.sum_rows(&mut n2);
        x.gather_values(&n2)
    }

    /// How to make `x` orthonormal (band rank 0's choice and matrix; None: nothing left).
    fn orthonormaliser(&self, x: &BandDistBlock<T>) -> Option<Orthonormaliser<T>> {
        let norms2 = self.norms2(x);
        let s = self.gram(std::slice::from_ref(x), x);
        let o = orthonormaliser(self.op, s, &norms2, DEPENDENCE_TOL);
        let mut head = match &o {
            None => [0, 0],
            Some(o @ Orthonormaliser::Cholesky(_)) => [1, o.kept() as u64],
            Some(o @ Orthonormaliser::Canonical(_)) => [2, o.kept() as u64],
        };
        self.take_rank0(&mut head);
        let [kind, k] = head;
        let k = k as usize;
        let mine = match o {
            Some(Orthonormaliser::Cholesky(m) | Orthonormaliser::Canonical(m))
                if m.ncols() == k =>
            {
                m
            }
            _ => Mat::zeros(x.nbands(), k),
        };
        match kind {
            0 => None,
            1 => Some(Orthonormaliser::Cholesky(self.mat_of_rank0(mine))),
            _ => Some(Orthonormaliser::Canonical(self.mat_of_rank0(mine))),
        }
    }

    /// `x` made orthonormal by `o` (Cholesky: `x L^-H` by triangular kernels), `x`'s storage
    /// recycled.
    fn orthonormalise(&self, x: BandDistBlock<T>, o: &Orthonormaliser<T>) -> BandDistBlock<T> {
        match o {
            Orthonormaliser::Canonical(t) => self.rotate(x, t.as_ref()),
            Orthonormaliser::Cholesky(l) => {
                let u = triangular_inverse(l.as_ref()).adjoint().to_owned();
                let mut out = self.block(x.npw(), x.nbands());
                let scratch = &mut self.scratch.borrow_mut();
                rotate_upper_into(&x, u.as_ref(), self.algo, scratch, out.local_mut());
                self.recycle(x);
                out
            }
        }
    }

    /// Lowest `nb` Ritz values and coefficients of the space, identical on every rank of the
    /// grid.
    fn ritz(&self, s: &Space<T>, nb: usize) -> (Vec<f64>, Mat<T>) {
        let mut h = s.h.as_ref().submatrix(0, 0, s.m, s.m).to_owned();
        hermitian_part(h.as_mut());
        let e = subspace::eigen(&**self.grid, h.as_ref(), nb, CommClass::Band)
            .expect("Davidson: the reduced eigenproblem failed");
        (e.values, e.vectors)
    }
}

/// QE's `g_psi` on this rank's columns of `w`; column `c` is the residual of band
/// `active[c].1`.
fn precondition<T: Scalar>(
    w: &mut BandDistBlock<T>,
    diag: &[f64],
    theta: &[f64],
    active: &[(usize, usize)],
) {
    let (p, me) = (w.comm().size(), w.comm().rank());
    let mut local = w.local_mut();
    for l in 0..local.ncols() {
        let t = theta[active[band_global(me, p, l)].1];
        for (x, &hd) in local.as_mut().col_mut(l).iter_mut().zip(diag) {
            *x = x.scale(g_psi_factor(hd, t));
        }
    }
}

/// The search space: blocks of V and AV side by side (same column counts), the reduced
/// matrix `V^H A V` (leading m x m) and the number of columns m.
struct Space<T: Scalar> {
    v: Vec<BandDistBlock<T>>,
    av: Vec<BandDistBlock<T>>,
    h: Mat<T>,
    m: usize,
}

impl<T: Scalar> Space<T> {
    /// Restart from the Ritz vectors: `V <- V C`, `AV <- AV C`, `h <- diag(theta)`.
    fn restart<O: BlockOperator<T>>(
        &mut self,
        ctx: &Ctx<'_, O, T>,
        theta: &[f64],
        c: MatRef<'_, T>,
    ) {
        for blocks in [&mut self.v, &mut self.av] {
            let new = ctx.combine(&blocks.iter().collect::<Vec<_>>(), c);
            for old in std::mem::replace(blocks, vec![new]) {
                ctx.recycle(old);
            }
        }
        let nb = c.ncols();
        self.h.fill(T::from_f64(0.0));
        for (j, &t) in theta.iter().enumerate().take(nb) {
            self.h[(j, j)] = T::from_f64(t);
        }
        self.m = nb;
    }

    /// Residuals `AV C_w - V C_w diag(theta_w)` of the bands `which`, in this order (AV and V
    /// circulate once, side by side, against `[C_w; -C_w diag(theta_w)]`).
    fn residuals<O: BlockOperator<T>>(
        &self,
        ctx: &Ctx<'_, O, T>,
        theta: &[f64],
        c: MatRef<'_, T>,
        which: &[usize],
    ) -> BandDistBlock<T> {
        let m = self.m;
        let coef = Mat::from_fn(2 * m, which.len(), |i, k| {
            let j = which[k];
            if i < m {
                c[(i, j)]
            } else {
                -c[(i - m, j)].scale(theta[j])
            }
        });
        let stack: Vec<&BandDistBlock<T>> = self.av.iter().chain(&self.v).collect();
        ctx.combine(&stack, coef.as_ref())
    }

    /// `w` orthogonalised against V (a second pass where the first removed more than half of
    /// a column's squared norm) and orthonormalised, dependent directions dropped (None:
    /// nothing left).
    fn orthogonalize_new<O: BlockOperator<T>>(
        &self,
        ctx: &Ctx<'_, O, T>,
        mut w: BandDistBlock<T>,
    ) -> Option<BandDistBlock<T>> {
        let before = ctx.norms2(&w);
        for pass in 0..2 {
            let c = ctx.gram(&self.v, &w);
            // w - V c in one pass: [V w] [-c; 1].
            let k = w.nbands();
            let coef = Mat::from_fn(self.m + k, k, |i, j| {
                if i < self.m {
                    -c[(i, j)]
                } else {
                    T::from_f64(if i - self.m == j { 1.0 } else { 0.0 })
                }
            });
            let stack: Vec<&BandDistBlock<T>> = self.v.iter().chain([&w]).collect();
            let next = ctx.combine(&stack, coef.as_ref());
            ctx.recycle(std::mem::replace(&mut w, next));
            let lost_much = (0..w.nbands()).any(|j| {
                let removed: f64 = (0..self.m).map(|i| c[(i, j)].abs2()).sum();
                before[j] - removed < 0.5 * before[j]
            });
            if pass == 0 && !lost_much {
                break;
            }
        }
        let Some(o) = ctx.orthonormaliser(&w) else {
            ctx.recycle(w);
            return None;
        };
        Some(ctx.orthonormalise(w, &o))
    }

    /// Append `w` and `aw = A w`: `h[:, m..] = [V w]^H aw` and its Hermitian mirror.
    fn extend<O: BlockOperator<T>>(
        &mut self,
        ctx: &Ctx<'_, O, T>,
        w: BandDistBlock<T>,
        aw: BandDistBlock<T>,
    ) {
        let added = w.nbands();
        self.v.push(w);
        let b = ctx.gram(&self.v, &aw);
        self.av.push(aw);
        let (m, m2) = (self.m, self.m + added);
        for j in 0..added {
            for i in 0..m2 {
                self.h[(i, m + j)] = b[(i, j)];
                self.h[(m + j, i)] = b[(i, j)].cj();
            }
        }
        self.m = m2;
    }
}

#[cfg(test)]
mod tests {
    use super::super::davidson::davidson;
    use super::super::testing::{
        check, complex_operator, complex_start, real_operator, real_start,
    };
    use super::*;
    use planewave_comm::ring::RingOrder;
    use planewave_comm::Threads;
    use planewave_linalg::partition::band_count;

    /// The distributed solver on `p` thread ranks gives the serial solver's eigenpairs.
    fn agrees_with_serial<T: Scalar + Send>(
        p: usize,
        algo: BandAlgorithm,
        op: &super::super::testing::Dense<T>,
        x0: Mat<T>,
    ) {
        let tols = Tolerances::uniform(1e-9);
        let nb = x0.ncols();
        let serial = davidson(op, x0.clone(), tols, 0, 200, 3);
        let out = Threads::run(p, |comm| {
            let comm = comm.into_arc();
            let mine = BandDistBlock::from_global(comm.clone(), x0.as_ref());
            let r = davidson_bands(
                op,
                (&comm, &comm),
                algo,
                mine.local().to_owned(),
                nb,
                tols,
                0,
                200,
                3,
            );
            assert_eq!(r.vectors.ncols(), band_count(nb, p, comm.rank()));
            let whole = BandDistBlock::new(comm.clone(), op.dim(), nb, r.vectors.clone());
            let all = whole.to_global();
            (r, all)
        });
        for (mut r, all) in out {
            r.vectors = all;
            check(op, &r, 1e-10);
            for (a, b) in r.values.iter().zip(&serial.values) {
                assert!((a - b).abs() < 1e-10, "{p} ranks {algo}: {a} vs {b}");
            }
        }
    }

    #[test]
    fn band_distributed_davidson_matches_the_serial_one() {
        let op = complex_operator(150, true);
        for p in 1..=4 {
            for algo in BandAlgorithm::ALL {
                agrees_with_serial(p, algo, &op, complex_start(150, 9));
            }
        }
        let op = real_operator(90);
        agrees_with_serial(
            3,
            BandAlgorithm::Ring(RingOrder::Natural),
            &op,
            real_start(90, 5),
        );
    }
}
