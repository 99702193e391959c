//! LOBPCG (locally optimal block preconditioned conjugate gradient) with robust basis selection.
//!
//! Each iteration builds the search space [X, W, P]: X the current Ritz vectors (orthonormal),
//! W the preconditioned residuals of the unconverged bands, P the previous search directions.
//! W and P are made orthogonal to X (twice, for stability) and then orthonormalised among
//! themselves by canonical orthogonalisation (eigen-decomposition of their overlap, dropping
//! directions with tiny overlap eigenvalues), so the Rayleigh–Ritz problem is a standard Hermitian
//! eigenproblem even when the directions become nearly dependent near convergence.
//! Preconditioner: W_i = R_i / (|k+G|^2/2 + <x_i|T|x_i>) (Teter–Payne–Allan style).

use super::{BlockOperator, EigenResult};
use planewave_linalg::{matmul, matmul_into, overlap, Mat, MatRef, Scalar};

/// `a^H b` over all rows: the local overlap completed over the ranks holding other rows.
fn gram<T: Scalar>(op: &impl BlockOperator<T>, a: MatRef<'_, T>, b: MatRef<'_, T>) -> Mat<T> {
    crate::gvectors::sum_matrix(overlap(a, b), |flat| op.sum_rows(flat))
}

/// Squared column norms of `x` weighted by `w` (1 when None), over all rows.
fn column_norms2<T: Scalar>(
    op: &impl BlockOperator<T>,
    x: MatRef<'_, T>,
    w: Option<&[f64]>,
) -> Vec<f64> {
    let mut out: Vec<f64> = (0..x.ncols())
        .map(|j| {
            (0..x.nrows())
                .map(|i| x[(i, j)].abs2() * w.map_or(1.0, |w| w[i]))
                .sum()
        })
        .collect();
    op.sum_rows(&mut out);
    out
}

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
    let mut x = match orthonormalize(op, x0.as_ref()) {
        Some(o) => o,
        None => x0,
    };
    let mut ax = Mat::<T>::zeros(n, nb);
    op.apply(x.as_ref(), ax.as_mut());
    n_applications += nb;
    // Initial Rayleigh–Ritz on X.
    let (mut lambda, c) = rayleigh_ritz(op, x.as_ref(), ax.as_ref(), nb);
    x = matmul(x.as_ref(), c.as_ref());
    ax = matmul(ax.as_ref(), c.as_ref());
    let mut p: Option<(Mat<T>, Mat<T>)> = None;
    let mut resid = vec![0.0; nb];
    let mut iterations = 0;
    // Memory: every block below is dropped as soon as the next is built; the peak is the
    // Rayleigh–Ritz step (Y, AY of up to 3 nb columns, and the new X, AX, P, AP).
    loop {
        let r = residuals(x.as_ref(), ax.as_ref(), &lambda);
        for (rj, n2) in resid.iter_mut().zip(column_norms2(op, r.as_ref(), None)) {
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
        let w = precondition(op, x.as_ref(), r, &active);
        let mut aw = Mat::<T>::zeros(n, w.ncols());
        op.apply(w.as_ref(), aw.as_mut());
        n_applications += w.ncols();
        // Search directions Z = [W, P] and A Z.
        let (mut z, mut az) = match p.take() {
            Some((pp, ap)) => (hcat_owned(w, pp), hcat_owned(aw, ap)),
            None => (w, aw),
        };
        // Orthogonalise against X (twice), tracking A Z consistently: Z -= X C, AZ -= AX C.
        for _ in 0..2 {
            let c = gram(op, x.as_ref(), z.as_ref());
            sub_mul(&mut z, x.as_ref(), c.as_ref());
            sub_mul(&mut az, ax.as_ref(), c.as_ref());
        }
        // Canonical orthonormalisation of Z.
        let Some(t) = canonical_transform(op, z.as_ref()) else {
            break;
        };
        z = matmul(z.as_ref(), t.as_ref());
        az = matmul(az.as_ref(), t.as_ref());
        // Rayleigh–Ritz on Y = [X, Z].
        let y = hcat_owned(x, z);
        let ay = hcat_owned(ax, az);
        let (vals, c) = rayleigh_ritz(op, y.as_ref(), ay.as_ref(), nb);
        lambda = vals;
        let cz = c.as_ref().subrows(nb, c.nrows() - nb);
        let zc = y.ncols() - nb;
        p = Some((
            matmul(y.as_ref().subcols(nb, zc), cz),
            matmul(ay.as_ref().subcols(nb, zc), cz),
        ));
        x = matmul(y.as_ref(), c.as_ref());
        drop(y);
        ax = matmul(ay.as_ref(), c.as_ref());
        drop(ay);
        // Keep X orthonormal against drift.
        if orthonormality_drift(op, x.as_ref()) > 1e-10 {
            if let Some(t) = canonical_transform(op, x.as_ref()) {
                if t.ncols() == nb {
                    x = matmul(x.as_ref(), t.as_ref());
                    ax = matmul(ax.as_ref(), t.as_ref());
                    let (l2, c2) = rayleigh_ritz(op, x.as_ref(), ax.as_ref(), nb);
                    lambda = l2;
                    x = matmul(x.as_ref(), c2.as_ref());
                    ax = matmul(ax.as_ref(), c2.as_ref());
                    p = None;
                }
            }
        }
    }
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
    let m = h.nrows();
    for i in 0..m {
        for j in 0..i {
            let v = (h[(i, j)] + h[(j, i)].cj()).scale(0.5);
            h[(i, j)] = v;
            h[(j, i)] = v.cj();
        }
        h[(i, i)] = T::from_f64(h[(i, i)].real());
    }
    let e = op
        .small_eigen(h.as_ref(), nb)
        .expect("Rayleigh-Ritz eigensolver failed");
    (e.values, e.vectors)
}

/// T such that Z T has orthonormal columns spanning Z's numerically independent directions.
fn canonical_transform<T: Scalar>(op: &impl BlockOperator<T>, z: MatRef<'_, T>) -> Option<Mat<T>> {
    let m = z.ncols();
    if m == 0 {
        return None;
    }
    // Scale columns to unit norm first so that the threshold is relative.
    let norms: Vec<f64> = column_norms2(op, z, None)
        .into_iter()
        .map(f64::sqrt)
        .collect();
    let mut s = gram(op, z, z);
    for i in 0..m {
        for j in 0..m {
            let d = norms[i] * norms[j];
            s[(i, j)] = if d > 0.0 {
                s[(i, j)].scale(1.0 / d)
            } else {
                T::from_f64(0.0)
            };
        }
    }
    let e = op.small_eigen(s.as_ref(), m).ok()?;
    let smax = e.values.last().copied().unwrap_or(0.0);
    let keep: Vec<usize> = (0..m)
        .filter(|&k| e.values[k] > DEPENDENCE_TOL * smax.max(1.0))
        .collect();
    if keep.is_empty() {
        return None;
    }
    let mut t = Mat::<T>::zeros(m, keep.len());
    for (c, &k) in keep.iter().enumerate() {
        let f = 1.0 / e.values[k].sqrt();
        for i in 0..m {
            let inv = if norms[i] > 0.0 { 1.0 / norms[i] } else { 0.0 };
            t[(i, c)] = e.vectors[(i, k)].scale(f * inv);
        }
    }
    Some(t)
}

/// Orthonormal columns spanning `x` (None when `x` is rank deficient); `op` completes sums
/// over distributed rows.
pub fn orthonormalize<T: Scalar>(op: &impl BlockOperator<T>, x: MatRef<'_, T>) -> Option<Mat<T>> {
    let t = canonical_transform(op, x)?;
    (t.ncols() == x.ncols()).then(|| matmul(x, t.as_ref()))
}

/// The columns of `a` then those of `b`, in one block (both consumed, so that neither outlives
/// the join).
fn hcat_owned<T: Scalar>(a: Mat<T>, b: Mat<T>) -> Mat<T> {
    let (n, ca) = (a.nrows(), a.ncols());
    let mut out = Mat::<T>::zeros(n, ca + b.ncols());
    out.as_mut().subcols_mut(0, ca).copy_from(&a);
    drop(a);
    out.as_mut().subcols_mut(ca, b.ncols()).copy_from(&b);
    out
}

/// `a -= b c`, in place (no temporary block).
fn sub_mul<T: Scalar>(a: &mut Mat<T>, b: MatRef<'_, T>, c: MatRef<'_, T>) {
    let minus_c = Mat::from_fn(c.nrows(), c.ncols(), |i, j| -c[(i, j)]);
    matmul_into(a.as_mut(), b, minus_c.as_ref(), true);
}

/// Residuals `R = A X - X diag(lambda)`.
fn residuals<T: Scalar>(x: MatRef<'_, T>, ax: MatRef<'_, T>, lambda: &[f64]) -> Mat<T> {
    let mut r = ax.to_owned();
    for (j, &l) in lambda.iter().enumerate() {
        for i in 0..x.nrows() {
            r[(i, j)] -= x[(i, j)].scale(l);
        }
    }
    r
}

/// The preconditioned residuals of the `active` bands, `W_i = R_i / (T + <x_i|T|x_i>)`, from
/// the residual block `r` (consumed).
fn precondition<T: Scalar>(
    op: &impl BlockOperator<T>,
    x: MatRef<'_, T>,
    r: Mat<T>,
    active: &[usize],
) -> Mat<T> {
    let kin = op.kinetic();
    let t_all = column_norms2(op, x, Some(kin));
    let mut w = Mat::<T>::zeros(r.nrows(), active.len());
    for (c, &j) in active.iter().enumerate() {
        let tj = t_all[j].max(1e-2);
        for (i, k) in kin.iter().enumerate() {
            w[(i, c)] = r[(i, j)].scale(1.0 / (k + tj));
        }
    }
    w
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
    use super::*;
    use num_complex::Complex64;
    use planewave_linalg::{hermitian_eigen, MatMut};

    /// A diagonal-dominant Hermitian test operator.
    struct Dense {
        a: Mat<Complex64>,
        kin: Vec<f64>,
    }
    impl BlockOperator<Complex64> for Dense {
        fn dim(&self) -> usize {
            self.a.nrows()
        }
        fn apply(&self, x: MatRef<'_, Complex64>, out: MatMut<'_, Complex64>) {
            matmul_into(out, self.a.as_ref(), x, false);
        }
        fn kinetic(&self) -> &[f64] {
            &self.kin
        }
    }

    #[test]
    fn finds_lowest_eigenpairs_of_a_dense_hermitian_matrix() {
        let n = 120;
        let kin: Vec<f64> = (0..n).map(|i| 0.5 * i as f64).collect();
        let a = Mat::from_fn(n, n, |i, j| {
            if i == j {
                Complex64::new(kin[i], 0.0)
            } else {
                let v = 0.05 / (1.0 + (i as f64 - j as f64).abs());
                Complex64::new(v, if i < j { 0.3 * v } else { -0.3 * v })
            }
        });
        let exact = hermitian_eigen(a.as_ref()).unwrap();
        let nb = 6;
        let x0 = Mat::from_fn(n, nb, |i, j| {
            Complex64::new(((i * 7 + j * 13) % 11) as f64 - 5.0, ((i + j) % 3) as f64)
        });
        let op = Dense { a, kin };
        let r = lobpcg(&op, x0, 1e-9, 200);
        assert!(r.converged, "residuals {:?}", r.residual_norms);
        for j in 0..nb {
            assert!(
                (r.values[j] - exact.values[j]).abs() < 1e-10,
                "{j}: {} vs {}",
                r.values[j],
                exact.values[j]
            );
        }
    }

    struct DenseReal {
        a: Mat<f64>,
        kin: Vec<f64>,
    }
    impl BlockOperator<f64> for DenseReal {
        fn dim(&self) -> usize {
            self.a.nrows()
        }
        fn apply(&self, x: MatRef<'_, f64>, out: MatMut<'_, f64>) {
            matmul_into(out, self.a.as_ref(), x, false);
        }
        fn kinetic(&self) -> &[f64] {
            &self.kin
        }
    }

    #[test]
    fn finds_lowest_eigenpairs_of_a_real_symmetric_matrix() {
        let n = 90;
        let kin: Vec<f64> = (0..n).map(|i| 0.3 * i as f64).collect();
        let a = Mat::from_fn(n, n, |i, j| {
            if i == j {
                kin[i]
            } else {
                0.04 / (1.0 + (i as f64 - j as f64).abs())
            }
        });
        let exact = hermitian_eigen(a.as_ref()).unwrap();
        let x0 = Mat::from_fn(n, 5, |i, j| {
            (((i * 5 + j * 3) % 7) as f64 - 3.0) + 0.1 * j as f64
        });
        let r = lobpcg(&DenseReal { a, kin }, x0, 1e-9, 200);
        assert!(r.converged);
        for j in 0..5 {
            assert!((r.values[j] - exact.values[j]).abs() < 1e-10);
        }
    }
}
