//! LOBPCG (locally optimal block preconditioned conjugate gradient) with robust basis selection.
//!
//! Each iteration builds the search space [X, W, P]: X the current Ritz vectors (orthonormal),
//! W the preconditioned residuals of the unconverged bands, P the previous search directions.
//! W and P are made orthogonal to X (twice, for stability) and then orthonormalised among
//! themselves by canonical orthogonalisation (eigen-decomposition of their overlap, dropping
//! directions with tiny overlap eigenvalues), so the Rayleigh–Ritz problem is a standard Hermitian
//! eigenproblem even when the directions become nearly dependent near convergence.
//! Preconditioner: W_i = R_i / (|k+G|^2/2 + <x_i|T|x_i>) (Teter–Payne–Allan style).
//! Memory: one `Workspace` per call holds [X, W, P], its image and a scratch block (8 blocks
//! of nb bands); the iterations work inside it and allocate no band block.

use super::block::{
    canonical_transform, column_norms2, gram, hermitian_part, multiply_cols_in_place,
    orthonormalize, subtract_projection,
};
use super::{BlockOperator, EigenResult};
use planewave_linalg::{matmul_into, Mat, MatMut, MatRef, Scalar};

/// Relative threshold below which overlap eigenvalues count as linear dependence.
const DEPENDENCE_TOL: f64 = 1e-12;

/// Lowest `ncols(x0)` eigenpairs of `op`, to residual norm `tol`, at most `maxiter` iterations.
pub fn lobpcg<T: Scalar>(
    op: &impl BlockOperator<T>,
    x0: Mat<T>,
    tol: f64,
    maxiter: usize,
) -> EigenResult<T> {
    lobpcg_with_min(op, x0, tol, 0, maxiter)
}

/// As [`lobpcg`], but at least `min_iterations` iterations on the bands whose residual is above
/// `tol / 100` (what an SCF step needs after the potential moved).
pub fn lobpcg_with_min<T: Scalar>(
    op: &impl BlockOperator<T>,
    x0: Mat<T>,
    tol: f64,
    min_iterations: usize,
    maxiter: usize,
) -> EigenResult<T> {
    let n = op.dim();
    let nb = x0.ncols();
    let n_global = op.global_dim();
    assert!(
        nb <= n_global,
        "more bands ({nb}) than plane waves ({n_global})"
    );
    let mut n_applications = 0;
    let mut ws = Workspace::new(n, nb);
    match orthonormalize(op, x0.as_ref()) {
        Some(o) => ws.x_mut().copy_from(&o),
        None => ws.x_mut().copy_from(&x0),
    }
    drop(x0);
    op.apply(
        ws.y.as_ref().subcols(0, nb),
        ws.ay.as_mut().subcols_mut(0, nb),
    );
    n_applications += nb;
    // Initial Rayleigh–Ritz on X.
    let (mut lambda, c) = rayleigh_ritz(op, ws.x(), ws.ax(), nb);
    ws.rotate_x(c.as_ref());
    let mut np = 0; // columns of P (after X in its slot at 2 nb)
    let mut resid = vec![0.0; nb];
    let mut iterations = 0;
    loop {
        // Residuals R = AX - X Λ, in the W slot.
        ws.residuals(&lambda);
        let r = ws.y.as_ref().subcols(nb, nb);
        for (rj, n2) in resid.iter_mut().zip(column_norms2(op, r, None)) {
            *rj = n2.sqrt();
        }
        let mut active: Vec<usize> = (0..nb).filter(|&j| resid[j] > tol).collect();
        if active.is_empty() && iterations < min_iterations {
            // A warm start inside an SCF must still respond to the new potential.
            active = (0..nb).filter(|&j| resid[j] > 0.01 * tol).collect();
        }
        if active.is_empty() || iterations >= maxiter {
            break;
        }
        iterations += 1;
        let na = active.len();
        ws.precondition(op, &active);
        {
            let (w, aw) = (
                ws.y.as_ref().subcols(nb, na),
                ws.ay.as_mut().subcols_mut(nb, na),
            );
            op.apply(w, aw);
        }
        n_applications += na;
        // Z = [W, P] right after X, and A Z.
        ws.move_p_after_w(na, np);
        let mz = na + np;
        // Orthogonalise Z against X (twice), tracking A Z consistently: Z -= X C, AZ -= AX C.
        for _ in 0..2 {
            let c = gram(op, ws.x(), ws.y.as_ref().subcols(nb, mz));
            ws.project_out_x(c.as_ref());
        }
        // Canonical orthonormalisation of Z.
        let Some(t) = canonical_transform(op, ws.y.as_ref().subcols(nb, mz), DEPENDENCE_TOL) else {
            break;
        };
        let mz = t.ncols();
        ws.transform_z(t.as_ref());
        // Rayleigh–Ritz on Y = [X, Z]; X <- Y C, P <- Z C_z.
        let (vals, c) = rayleigh_ritz(
            op,
            ws.y.as_ref().subcols(0, nb + mz),
            ws.ay.as_ref().subcols(0, nb + mz),
            nb,
        );
        lambda = vals;
        ws.rotate_with_p(c.as_ref(), mz);
        np = nb;
        // Keep X orthonormal against drift.
        if orthonormality_drift(op, ws.x()) > 1e-10 {
            if let Some(t) = canonical_transform(op, ws.x(), DEPENDENCE_TOL) {
                if t.ncols() == nb {
                    ws.rotate_x(t.as_ref());
                    let (l2, c2) = rayleigh_ritz(op, ws.x(), ws.ax(), nb);
                    lambda = l2;
                    ws.rotate_x(c2.as_ref());
                    np = 0;
                }
            }
        }
    }
    let x = ws.y.as_ref().subcols(0, nb).to_owned();
    let converged = resid.iter().all(|&r| r <= tol);
    EigenResult {
        values: lambda,
        vectors: x,
        residual_norms: resid,
        iterations,
        n_applications,
        converged,
    }
}

/// Lowest `nb` Ritz pairs of the orthonormal basis `y` with images `ay`: (values, coefficients).
fn rayleigh_ritz<T: Scalar>(
    op: &impl BlockOperator<T>,
    y: MatRef<'_, T>,
    ay: MatRef<'_, T>,
    nb: usize,
) -> (Vec<f64>, Mat<T>) {
    let mut h = gram(op, y, ay);
    hermitian_part(h.as_mut());
    let e = op
        .small_eigen(h.as_ref(), nb)
        .expect("Rayleigh-Ritz eigensolver failed");
    (e.values, e.vectors)
}

/// The eigensolver's blocks, allocated once per call: `y = [X | W | P]` and `ay = A y` with
/// room for 3 nb columns each (X in the first nb, W after it, P in the last nb between
/// iterations), and a scratch block of 2 nb columns for products that cannot run in place.
/// Nothing is allocated inside the iterations, so the loop neither asks the system for fresh
/// pages nor leaves freed blocks behind in the allocator.
struct Workspace<T: Scalar> {
    nb: usize,
    y: Mat<T>,
    ay: Mat<T>,
    s: Mat<T>,
}

impl<T: Scalar> Workspace<T> {
    fn new(n: usize, nb: usize) -> Self {
        Self {
            nb,
            y: Mat::zeros(n, 3 * nb),
            ay: Mat::zeros(n, 3 * nb),
            s: Mat::zeros(n, 2 * nb),
        }
    }

    fn x(&self) -> MatRef<'_, T> {
        self.y.as_ref().subcols(0, self.nb)
    }

    fn ax(&self) -> MatRef<'_, T> {
        self.ay.as_ref().subcols(0, self.nb)
    }

    fn x_mut(&mut self) -> MatMut<'_, T> {
        self.y.as_mut().subcols_mut(0, self.nb)
    }

    /// `X <- X C`, `AX <- AX C` (C is nb x nb), through the scratch block.
    fn rotate_x(&mut self, c: MatRef<'_, T>) {
        for blk in [&mut self.y, &mut self.ay] {
            multiply_cols_in_place(blk, 0, c);
        }
    }

    /// R = AX - X diag(lambda) into the W slot (columns nb..2nb) of `y`.
    fn residuals(&mut self, lambda: &[f64]) {
        let nb = self.nb;
        let (x, mut rest) = self.y.as_mut().split_at_col_mut(nb);
        let mut r = rest.as_mut().subcols_mut(0, nb);
        r.copy_from(self.ay.as_ref().subcols(0, nb));
        for (j, &l) in lambda.iter().enumerate() {
            for i in 0..x.nrows() {
                r[(i, j)] -= x[(i, j)].scale(l);
            }
        }
    }

    /// The residuals of the `active` bands preconditioned, `W_c = R_j / (T + <x_j|T|x_j>)`,
    /// packed to the front of the W slot (c <= j, so in place in increasing order).
    fn precondition(&mut self, op: &impl BlockOperator<T>, active: &[usize]) {
        let nb = self.nb;
        let kin = op.kinetic();
        let t_all = column_norms2(op, self.x(), Some(kin));
        let mut w = self.y.as_mut().subcols_mut(nb, nb);
        for (c, &j) in active.iter().enumerate() {
            let tj = t_all[j].max(1e-2);
            for (i, k) in kin.iter().enumerate() {
                w[(i, c)] = w[(i, j)].scale(1.0 / (k + tj));
            }
        }
    }

    /// Move the `np` columns of P (at 2 nb) to right after the `na` columns of W.
    fn move_p_after_w(&mut self, na: usize, np: usize) {
        let (nb, to) = (self.nb, self.nb + na);
        if np == 0 || to == 2 * nb {
            return;
        }
        for blk in [&mut self.y, &mut self.ay] {
            for j in 0..np {
                // to + j < 2 nb + j: every source column is read before anything overwrites it.
                let (left, right) = blk.as_mut().split_at_col_mut(2 * nb + j);
                let mut dst = left.subcols_mut(to + j, 1);
                dst.copy_from(right.as_ref().subcols(0, 1));
            }
        }
    }

    /// `Z -= X C`, `AZ -= AX C` for the columns of Z after X (as many as C has).
    fn project_out_x(&mut self, c: MatRef<'_, T>) {
        for blk in [&mut self.y, &mut self.ay] {
            subtract_projection(blk, self.nb, c);
        }
    }

    /// `Z <- Z T`, `AZ <- AZ T` (T is mz x mz'), through the scratch block.
    fn transform_z(&mut self, t: MatRef<'_, T>) {
        for blk in [&mut self.y, &mut self.ay] {
            multiply_cols_in_place(blk, self.nb, t);
        }
    }

    /// After Rayleigh–Ritz on `[X, Z]` (Z of `mz` columns) with coefficients `c`:
    /// `P <- Z C_z` (into the P slot at 2 nb) and `X <- X C_x + P`, for y and ay alike.
    fn rotate_with_p(&mut self, c: MatRef<'_, T>, mz: usize) {
        let nb = self.nb;
        let (cx, cz) = (c.subrows(0, nb), c.subrows(nb, mz));
        for blk in [&mut self.y, &mut self.ay] {
            let (mut p, mut xn) = self.s.as_mut().split_at_col_mut(nb);
            matmul_into(p.as_mut(), blk.as_ref().subcols(nb, mz), cz, false);
            xn.as_mut().copy_from(p.as_ref());
            matmul_into(xn.as_mut(), blk.as_ref().subcols(0, nb), cx, true);
            blk.as_mut().subcols_mut(0, nb).copy_from(xn.as_ref());
            blk.as_mut().subcols_mut(2 * nb, nb).copy_from(p.as_ref());
        }
    }
}

/// Largest deviation of `x^H x` from the identity.
fn orthonormality_drift<T: Scalar>(op: &impl BlockOperator<T>, x: MatRef<'_, T>) -> f64 {
    let s = gram(op, x, x);
    let nb = x.ncols();
    (0..nb)
        .flat_map(|i| (0..nb).map(move |j| (i, j)))
        .map(|(i, j)| {
            (s[(i, j)] - T::from_f64(if i == j { 1.0 } else { 0.0 }))
                .abs2()
                .sqrt()
        })
        .fold(0.0, f64::max)
}

#[cfg(test)]
mod tests {
    use super::super::testing::{
        check, complex_operator, complex_start, real_operator, real_start,
    };
    use super::*;

    #[test]
    fn finds_lowest_eigenpairs_of_a_dense_hermitian_matrix() {
        let op = complex_operator(120, false);
        let r = lobpcg(&op, complex_start(120, 6), 1e-9, 200);
        check(&op, &r, 1e-10);
    }

    #[test]
    fn finds_lowest_eigenpairs_of_a_real_symmetric_matrix() {
        let op = real_operator(90);
        let r = lobpcg(&op, real_start(90, 5), 1e-9, 200);
        check(&op, &r, 1e-10);
    }
}
