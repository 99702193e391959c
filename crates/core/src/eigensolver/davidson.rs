//! Block Davidson with restart, the approach of Quantum ESPRESSO's `cegterg`/`regterg`, on an
//! orthonormal basis.
//!
//! The search space V (orthonormal, at most `max_dim` columns) and its image AV grow by the
//! preconditioned residuals of the bands not yet converged; the reduced matrix `V^H A V` is
//! extended by the new columns only (`V^H (A W)`), never re-formed. When the next block would not
//! fit, V restarts from the current Ritz vectors (`V <- V C`, `AV <- AV C`, reduced matrix
//! `diag(theta)`). Converged bands stay in the Ritz problem but add no new directions (locking),
//! so late iterations are cheap. New directions are orthogonalised against V (block Gram–Schmidt,
//! twice) and among themselves *before* the operator is applied, so A W is never transformed:
//! by Cholesky and a triangular solve when they are well conditioned, else by the canonical
//! transform, which drops dependent directions.
//! Residuals of all bands come from two GEMMs, `R = AV C - V C diag(theta)`, without forming the
//! Ritz vectors except at a restart and at the end.
//! Preconditioner (QE's `g_psi`): `W = R / d`, `d = (1 + x + sqrt(1 + (x - 1)^2)) / 2` with
//! `x = h_diag - theta`, `h_diag` the operator's [`BlockOperator::diagonal`] — close to
//! `h_diag - theta` where that is large, and never below ~1.
//! Memory: V and AV (`max_dim` columns each, kept between calls in a [`Workspace`]); residuals
//! are formed in V's free columns, products with small matrices done in place by row blocks,
//! and the Ritz vectors returned in the starting bands' storage, so nothing else of n rows is
//! allocated (but a block of residuals when the space cannot hold 2 nb vectors).

use super::block::{
    column_norms2, gram, hermitian_part, multiply_cols_in_place, orthonormalise_in_place,
    orthonormaliser_of, subtract_projection,
};
use super::{BlockOperator, EigenResult};
use planewave_linalg::{matmul_into, Mat, MatMut, MatRef, Scalar};
use rayon::prelude::*;

/// Relative overlap eigenvalue below which a new direction counts as dependent and is dropped.
pub(super) const DEPENDENCE_TOL: f64 = 1e-12;

/// Iterations on the empty bands alone once the occupied ones have met their targets, in an
/// SCF step ([`Tolerances::empty_only`]). Water PBE0 (6 bands, 4 occupied): Davidson 0.97 ->
/// 0.85 s on one thread, the same 37 SCF iterations and energy, eigenvalues within 8e-9 Ha;
/// al1 and h1 move empty eigenvalues by 4e-6 and 2e-6 Ha; si8, si64 and si2 PBE keep their
/// iterations.
pub const EMPTY_ONLY_ITERATIONS: usize = 2;

/// Size of the search space as a multiple of the number of bands (QE's `diago_david_ndim`,
/// whose default is 2). 3 keeps the previous iteration's directions through one more step,
/// which makes each iteration nearly as effective as LOBPCG's: on si64 Γ (128 bands, one
/// thread) the SCF took 35-36 s with 3 against 44-47 s with 2, for 7 instead of 5 blocks of
/// nb vectors (about 50 MB more).
pub const DEFAULT_DIM_FACTOR: usize = planewave_input::DEFAULT_DAVIDSON_DIM;

/// Residual-norm targets: `occupied` for the first `n_occupied` bands,
/// [`super::EMPTY_TOL_FACTOR`] times that for the others.
#[derive(Clone, Copy, Debug)]
pub struct Tolerances {
    /// Target of the occupied bands.
    pub occupied: f64,
    /// How many bands (from the lowest) are occupied.
    pub n_occupied: usize,
    /// Stop after this many iterations on the empty bands alone, once every occupied band
    /// has met its target (an SCF step); None: converge them.
    pub empty_only: Option<usize>,
}

impl Tolerances {
    /// The same target for every band.
    pub fn uniform(tol: f64) -> Self {
        Self {
            occupied: tol,
            n_occupied: usize::MAX,
            empty_only: None,
        }
    }

    /// Target of band `j`.
    pub(super) fn of(&self, j: usize) -> f64 {
        if j < self.n_occupied {
            self.occupied
        } else {
            super::EMPTY_TOL_FACTOR * self.occupied
        }
    }
}

/// Lowest `ncols(x0)` eigenpairs of `op` to the residual norms `tols`, with at most `maxiter`
/// iterations and a search space of `dim_factor * nb` vectors (at least 2). At least
/// `min_iterations` iterations are made on the bands whose residual is above 1/100 of their
/// target (what an SCF step needs after the potential moved).
pub fn davidson<T: Scalar>(
    op: &impl BlockOperator<T>,
    x0: Mat<T>,
    tols: Tolerances,
    min_iterations: usize,
    maxiter: usize,
    dim_factor: usize,
) -> EigenResult<T> {
    let limits = (min_iterations, maxiter, dim_factor);
    davidson_in(&mut Workspace::default(), op, x0, tols, limits)
}

/// The search space's two `n x max_dim` blocks (V and A V), kept between calls so that an
/// SCF's eigensolver steps allocate nothing of n rows: fresh blocks cost a page fault per
/// 4 KiB, taken by the one thread that zeroes them while the others wait (on si64 Γ about
/// 150 MB per call, a third of the run's page faults). Their contents between calls are
/// unspecified. In an SCF (a fixed number of columns) they stop reallocating at the k-point
/// with the most plane waves; faer grows a matrix to the size asked for, so calls that
/// alternate between more rows and more columns would reallocate.
pub struct Workspace<T: Scalar> {
    v: Mat<T>,
    av: Mat<T>,
}

impl<T: Scalar> Default for Workspace<T> {
    fn default() -> Self {
        Self {
            v: Mat::zeros(0, 0),
            av: Mat::zeros(0, 0),
        }
    }
}

impl<T: Scalar> Workspace<T> {
    /// Its blocks as `n x cols` matrices (grown when needed), the workspace left empty until
    /// they are given back.
    fn take(&mut self, n: usize, cols: usize) -> (Mat<T>, Mat<T>) {
        let shaped = |m: &mut Mat<T>| {
            let mut m = std::mem::replace(m, Mat::zeros(0, 0));
            m.resize_with(n, cols, |_, _| T::from_f64(0.0));
            m
        };
        (shaped(&mut self.v), shaped(&mut self.av))
    }
}

/// [`davidson`] with its search space in `ws`; `(min_iterations, maxiter, dim_factor)` as
/// there. The Ritz vectors are returned in `x0`'s storage.
pub fn davidson_in<T: Scalar>(
    ws: &mut Workspace<T>,
    op: &impl BlockOperator<T>,
    x0: Mat<T>,
    tols: Tolerances,
    (min_iterations, maxiter, dim_factor): (usize, usize, usize),
) -> EigenResult<T> {
    let nb = x0.ncols();
    let n_global = op.global_dim();
    assert!(
        nb <= n_global,
        "more bands ({nb}) than plane waves ({n_global})"
    );
    let max_dim = (dim_factor.max(2) * nb).min(n_global).max(nb);
    assert_eq!(x0.nrows(), op.dim(), "starting vectors of the wrong length");
    let mut s = Space::new(x0, max_dim, ws);
    s.orthonormalize_start(op);
    op.apply(
        s.v.as_ref().subcols(0, nb),
        s.av.as_mut().subcols_mut(0, nb),
    );
    let mut n_applications = nb;
    s.m = nb;
    let h0 = gram(
        op,
        s.v.as_ref().subcols(0, nb),
        s.av.as_ref().subcols(0, nb),
    );
    s.h.as_mut().submatrix_mut(0, 0, nb, nb).copy_from(&h0);
    let diag = op.diagonal();
    let mut lock = Locking::new(nb, tols);
    let mut iterations = 0;
    let (mut theta, mut c) = s.ritz(op);
    loop {
        let open = lock.open();
        if s.m + open.len() > max_dim && s.m > nb {
            // The residuals go to the free columns of V: make room. The Ritz vectors become
            // the space, their coefficients the identity.
            s.restart(&theta, c.as_ref());
            c = Mat::from_fn(nb, nb, |i, j| T::from_f64(if i == j { 1.0 } else { 0.0 }));
        }
        // Residuals of the open bands, in this order, after the first m columns of V (or, when
        // the space cannot hold 2 nb vectors, in a block of their own).
        let aside = s.residuals(&theta, c.as_ref(), &open);
        let r = aside
            .as_ref()
            .map_or_else(|| s.v.as_ref().subcols(s.m, open.len()), |a| a.as_ref());
        let norms2 = column_norms2(op, r, None);
        let force = iterations < min_iterations;
        let active = lock.pick_active(&open, &norms2, force, max_dim - s.m);
        if active.is_empty() || iterations >= maxiter || lock.empty_only_done(force) {
            break;
        }
        iterations += 1;
        s.precondition(&diag, &theta, &active, aside.as_ref());
        let Some(added) = s.orthonormalize_new(op, active.len()) else {
            break;
        };
        let m = s.m;
        {
            let (v, av) = (
                s.v.as_ref().subcols(m, added),
                s.av.as_mut().subcols_mut(m, added),
            );
            op.apply(v, av);
        }
        n_applications += added;
        s.extend_reduced(op, added);
        (theta, c) = s.ritz(op);
    }
    let vectors = s.into_ritz_vectors(c.as_ref(), ws);
    let converged = lock.locked.iter().all(|&l| l);
    EigenResult {
        values: theta,
        vectors,
        residual_norms: lock.resid,
        iterations,
        n_applications,
        converged,
    }
}

/// The residual norms of the bands and their locks. Bands whose residual has met their target
/// are locked (QE's `conv`): their residuals are not recomputed, which halves the dense work of
/// the late iterations.
pub(super) struct Locking {
    /// Residual norm of every band.
    pub resid: Vec<f64>,
    /// Whether each band has met its target.
    pub locked: Vec<bool>,
    tols: Tolerances,
    /// Iterations in a row with every occupied band locked.
    empty_only: usize,
}

impl Locking {
    /// `nb` bands, none converged yet.
    pub fn new(nb: usize, tols: Tolerances) -> Self {
        Self {
            resid: vec![f64::INFINITY; nb],
            locked: vec![false; nb],
            tols,
            empty_only: 0,
        }
    }

    /// Whether to stop although empty bands remain open, called once per iteration after
    /// [`Locking::pick_active`]: every occupied band has met its target for more than
    /// `tols.empty_only` iterations in a row (and no iteration is forced). The empty
    /// bands do not enter the density, and the topmost, with no gap above it in the block,
    /// converges slowly: in water PBE0 it alone kept Davidson at its iteration limit in most
    /// SCF steps. They end within a few 1e-6 Ha of their converged eigenvalues (QE converges
    /// empty bands to `max(5 ethr, 1e-5 Ry)`).
    pub fn empty_only_done(&mut self, force: bool) -> bool {
        let n_occ = self.locked.len().min(self.tols.n_occupied);
        if self.locked[..n_occ].iter().all(|&l| l) {
            self.empty_only += 1;
        } else {
            self.empty_only = 0;
        }
        !force && self.tols.empty_only.is_some_and(|n| self.empty_only > n)
    }

    /// The bands not locked.
    pub fn open(&self) -> Vec<usize> {
        (0..self.locked.len())
            .filter(|&j| !self.locked[j])
            .collect()
    }

    /// Record the squared residual norms `norms2` of the `open` bands, lock those that meet
    /// their target, and return (residual column, band) of the bands that get a new direction,
    /// at most `room`: the unlocked ones, or, when there are none but the solver must still
    /// `force` an iteration (a warm start inside an SCF must respond to the new potential), those
    /// above 1/100 of their target.
    pub fn pick_active(
        &mut self,
        open: &[usize],
        norms2: &[f64],
        force: bool,
        room: usize,
    ) -> Vec<(usize, usize)> {
        for (&j, n2) in open.iter().zip(norms2) {
            self.resid[j] = n2.sqrt();
            self.locked[j] = self.resid[j] <= self.tols.of(j);
        }
        let pick = |keep: &dyn Fn(usize) -> bool| -> Vec<(usize, usize)> {
            open.iter()
                .enumerate()
                .filter(|&(_, &j)| keep(j))
                .map(|(k, &j)| (k, j))
                .collect()
        };
        let mut active = pick(&|j| !self.locked[j]);
        if active.is_empty() && force {
            active = pick(&|j| self.resid[j] > 0.01 * self.tols.of(j));
            for &(_, j) in &active {
                self.locked[j] = false;
            }
        }
        // Only when the space cannot hold 2 nb vectors (tiny bases): work on what fits.
        active.truncate(room);
        active
    }
}

/// QE's `g_psi` preconditioner factor `1/d`, `d = (1 + x + sqrt(1 + (x - 1)^2)) / 2` with
/// `x = h_diag - theta`.
pub(super) fn g_psi_factor(h_diag: f64, theta: f64) -> f64 {
    let x = h_diag - theta;
    2.0 / (1.0 + x + (1.0 + (x - 1.0) * (x - 1.0)).sqrt())
}

/// The search space: `v` (orthonormal columns, the first `m` in use), `av = A v`, and the
/// reduced matrix `h = v^H A v` (its leading m x m block). Residuals are formed in the unused
/// columns of `v`, and products with small matrices are done in place by row blocks, so there
/// is no other n-row block but `out`, the caller's starting bands, whose storage receives the
/// Ritz vectors.
struct Space<T: Scalar> {
    nb: usize,
    m: usize,
    v: Mat<T>,
    av: Mat<T>,
    h: Mat<T>,
    out: Mat<T>,
}

impl<T: Scalar> Space<T> {
    /// The space with `x0` in its first columns, its blocks from `ws`.
    fn new(x0: Mat<T>, max_dim: usize, ws: &mut Workspace<T>) -> Self {
        let (n, nb) = (x0.nrows(), x0.ncols());
        let (mut v, av) = ws.take(n, max_dim);
        v.as_mut().subcols_mut(0, nb).copy_from(&x0);
        Self {
            nb,
            m: 0,
            v,
            av,
            h: Mat::zeros(max_dim, max_dim),
            out: x0,
        }
    }

    /// Orthonormalise the starting block in the first nb columns of V, in place (through the
    /// scratch block); a rank-deficient start is left as it is.
    fn orthonormalize_start(&mut self, op: &impl BlockOperator<T>) {
        let nb = self.nb;
        let Some(o) = orthonormaliser_of(op, self.v.as_ref().subcols(0, nb), DEPENDENCE_TOL) else {
            return;
        };
        if o.kept() == nb {
            orthonormalise_in_place(&mut self.v, 0, &o);
        }
    }

    /// Lowest nb Ritz values and their coefficients (m x nb) in the current space.
    fn ritz(&self, op: &impl BlockOperator<T>) -> (Vec<f64>, Mat<T>) {
        let m = self.m;
        let mut h = self.h.as_ref().submatrix(0, 0, m, m).to_owned();
        hermitian_part(h.as_mut());
        let e = op
            .small_eigen(h.as_ref(), self.nb)
            .expect("Davidson: the reduced eigenproblem failed");
        (e.values, e.vectors)
    }

    /// Restart from the Ritz vectors: `V <- V C`, `AV <- AV C`, `h <- diag(theta)`, m = nb.
    fn restart(&mut self, theta: &[f64], c: MatRef<'_, T>) {
        let nb = self.nb;
        for blk in [&mut self.v, &mut self.av] {
            multiply_cols_in_place(blk, 0, c);
        }
        let mut h = self.h.as_mut().submatrix_mut(0, 0, nb, nb);
        for j in 0..nb {
            for i in 0..nb {
                h[(i, j)] = T::from_f64(if i == j { theta[i] } else { 0.0 });
            }
        }
        self.m = nb;
    }

    /// Residuals `R = AV C_w - V C_w diag(theta_w)` of the bands `which`: in columns
    /// `m..m + which.len()` of V when they fit (None returned), else in a block of their own.
    fn residuals(&mut self, theta: &[f64], c: MatRef<'_, T>, which: &[usize]) -> Option<Mat<T>> {
        let (m, nw) = (self.m, which.len());
        let cw = Mat::from_fn(m, nw, |i, k| c[(i, which[k])]);
        let minus_c_theta = Mat::from_fn(m, nw, |i, k| -cw[(i, k)].scale(theta[which[k]]));
        let av = self.av.as_ref().subcols(0, m);
        let form = |v: MatRef<'_, T>, mut r: MatMut<'_, T>| {
            matmul_into(r.as_mut(), av, cw.as_ref(), false);
            matmul_into(r, v, minus_c_theta.as_ref(), true);
        };
        let mut aside = (m + nw > self.v.ncols()).then(|| Mat::zeros(self.v.nrows(), nw));
        match aside.as_mut() {
            Some(a) => form(self.v.as_ref().subcols(0, m), a.as_mut()),
            None => {
                let (v, rest) = self.v.as_mut().split_at_col_mut(m);
                form(v.as_ref(), rest.subcols_mut(0, nw));
            }
        }
        aside
    }

    /// The preconditioned residuals of the `active` bands (residual column k, band j) into
    /// columns `m..` of V, in order. The residuals are read from `aside` if given, else from
    /// column m + k of V itself: those are first moved to their columns in order (k never
    /// below the destination column, so nothing is overwritten before it is read), then every
    /// column is scaled on rayon's threads.
    fn precondition(
        &mut self,
        diag: &[f64],
        theta: &[f64],
        active: &[(usize, usize)],
        aside: Option<&Mat<T>>,
    ) {
        let m = self.m;
        if aside.is_none() {
            for (col, &(k, _)) in active.iter().enumerate().filter(|(c, a)| a.0 != *c) {
                let (head, tail) = self.v.as_mut().split_at_col_mut(m + k);
                head.col_mut(m + col).copy_from(tail.col(0));
            }
        }
        let dest = self.v.as_mut().subcols_mut(m, active.len());
        dest.par_col_iter_mut()
            .zip(active.par_iter())
            .for_each(|(w, &(k, j))| {
                let w = w.try_as_col_major_mut().expect("contiguous column");
                let w = w.as_slice_mut();
                let f = |hd: f64| g_psi_factor(hd, theta[j]);
                match aside {
                    Some(a) => {
                        for ((w, &r), &hd) in w.iter_mut().zip(a.col_as_slice(k)).zip(diag) {
                            *w = r.scale(f(hd));
                        }
                    }
                    None => {
                        for (w, &hd) in w.iter_mut().zip(diag) {
                            *w = w.scale(f(hd));
                        }
                    }
                }
            });
    }

    /// Make the `na` new columns after V orthogonal to V (twice where needed) and orthonormal among
    /// themselves, dropping dependent directions; returns how many are kept (None: none).
    fn orthonormalize_new(&mut self, op: &impl BlockOperator<T>, na: usize) -> Option<usize> {
        let m = self.m;
        let before = column_norms2(op, self.v.as_ref().subcols(m, na), None);
        for pass in 0..2 {
            let c = gram(
                op,
                self.v.as_ref().subcols(0, m),
                self.v.as_ref().subcols(m, na),
            );
            subtract_projection(&mut self.v, m, c.as_ref());
            // A second pass only where the first removed more than half of a column's squared
            // norm (Daniel-Gragg-Kaufman-Stewart; V orthonormal: |w - V c|^2 = |w|^2 - |c|^2):
            // otherwise rounding left it orthogonal to working precision.
            let lost_much = (0..na).any(|j| {
                let removed: f64 = (0..m).map(|i| c[(i, j)].abs2()).sum();
                before[j] - removed < 0.5 * before[j]
            });
            if pass == 0 && !lost_much {
                break;
            }
        }
        let o = orthonormaliser_of(op, self.v.as_ref().subcols(m, na), DEPENDENCE_TOL)?;
        orthonormalise_in_place(&mut self.v, m, &o);
        Some(o.kept())
    }

    /// Extend the reduced matrix by the `added` columns after the first m: `h[:, m..] = V^H AW`,
    /// and its Hermitian mirror; m grows by `added`.
    fn extend_reduced(&mut self, op: &impl BlockOperator<T>, added: usize) {
        let (m, m2) = (self.m, self.m + added);
        let b = gram(
            op,
            self.v.as_ref().subcols(0, m2),
            self.av.as_ref().subcols(m, added),
        );
        let mut h = self.h.as_mut();
        for j in 0..added {
            for i in 0..m2 {
                h[(i, m + j)] = b[(i, j)];
                h[(m + j, i)] = b[(i, j)].cj();
            }
        }
        self.m = m2;
    }

    /// The Ritz vectors `V C` (n x nb): formed in place in V, copied to the starting bands'
    /// storage; the blocks go back to `ws`.
    fn into_ritz_vectors(mut self, c: MatRef<'_, T>, ws: &mut Workspace<T>) -> Mat<T> {
        multiply_cols_in_place(&mut self.v, 0, c);
        self.out.copy_from(self.v.as_ref().subcols(0, self.nb));
        (ws.v, ws.av) = (self.v, self.av);
        self.out
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::{
        check, complex_operator, complex_start as start, real_operator, real_start,
    };
    use super::*;

    #[test]
    fn finds_lowest_eigenpairs_of_a_dense_hermitian_matrix() {
        for dim_factor in [2, 3, 4] {
            let op = complex_operator(150, false);
            let r = davidson(
                &op,
                start(150, 8),
                Tolerances::uniform(1e-9),
                0,
                200,
                dim_factor,
            );
            check(&op, &r, 1e-10);
        }
    }

    #[test]
    fn resolves_degenerate_eigenvalues() {
        let op = complex_operator(120, true);
        let r = davidson(&op, start(120, 6), Tolerances::uniform(1e-9), 0, 200, 3);
        check(&op, &r, 1e-10);
        assert!((r.values[0] - r.values[1]).abs() < 1e-10);
    }

    #[test]
    fn works_when_the_space_cannot_hold_two_blocks() {
        // 10 vectors of length 14: the search space is capped at the whole space.
        let op = complex_operator(14, false);
        let r = davidson(&op, start(14, 10), Tolerances::uniform(1e-9), 0, 100, 3);
        check(&op, &r, 1e-10);
    }

    #[test]
    fn finds_lowest_eigenpairs_of_a_real_symmetric_matrix() {
        let op = real_operator(90);
        let r = davidson(&op, real_start(90, 5), Tolerances::uniform(1e-9), 0, 200, 3);
        check(&op, &r, 1e-10);
    }

    #[test]
    fn a_converged_start_takes_no_iteration_unless_asked() {
        let op = complex_operator(100, false);
        let first = davidson(&op, start(100, 4), Tolerances::uniform(1e-9), 0, 200, 3);
        let again = davidson(
            &op,
            first.vectors.clone(),
            Tolerances::uniform(1e-6),
            0,
            200,
            3,
        );
        assert_eq!(again.iterations, 0);
        let forced = davidson(&op, first.vectors, Tolerances::uniform(1e-6), 1, 200, 3);
        assert!(forced.iterations <= 1);
    }

    /// One workspace through calls of other sizes (growing, then shrinking, in rows and
    /// columns) gives the fresh workspace's results bit for bit, and keeps its blocks.
    #[test]
    fn a_reused_workspace_changes_no_bit() {
        let mut ws = Workspace::default();
        let tols = Tolerances::uniform(1e-9);
        for (n, nb, dim) in [(80, 4, 3), (150, 8, 3), (120, 6, 2), (150, 8, 3)] {
            let op = complex_operator(n, false);
            let fresh = davidson(&op, start(n, nb), tols, 0, 200, dim);
            let reused = davidson_in(&mut ws, &op, start(n, nb), tols, (0, 200, dim));
            assert_eq!(fresh.values, reused.values, "n = {n}");
            assert_eq!(fresh.vectors, reused.vectors, "n = {n}");
            assert_eq!(fresh.iterations, reused.iterations, "n = {n}");
            assert_eq!((ws.v.nrows(), ws.v.ncols()), (n, dim * nb));
        }
        let kept = ws.v.as_ptr();
        let op = complex_operator(100, false);
        davidson_in(&mut ws, &op, start(100, 8), tols, (0, 200, 3));
        assert_eq!(ws.v.as_ptr(), kept, "a smaller call reallocates nothing");
    }

    #[test]
    fn empty_bands_converge_to_the_looser_target() {
        let op = complex_operator(120, false);
        let tols = Tolerances {
            occupied: 1e-9,
            n_occupied: 3,
            empty_only: None,
        };
        let r = davidson(&op, start(120, 6), tols, 0, 200, 3);
        assert!(r.converged);
        for (j, &res) in r.residual_norms.iter().enumerate() {
            assert!(res <= tols.of(j), "band {j}: residual {res}");
        }
        assert_eq!(tols.of(2), 1e-9);
        assert_eq!(tols.of(3), super::super::EMPTY_TOL_FACTOR * 1e-9);
    }
}
