//! Operations on blocks of vectors shared by the eigensolvers: overlaps and norms over all rows
//! (completed with [`BlockOperator::sum_rows`] when the rows are dealt over a G-vector group),
//! and canonical orthonormalisation.

use super::BlockOperator;
use planewave_linalg::{matmul, matmul_into, overlap, Mat, MatMut, MatRef, Scalar};

/// `a^H b` over all rows: the local overlap completed over the ranks holding other rows.
pub(super) fn gram<T: Scalar>(
    op: &impl BlockOperator<T>,
    a: MatRef<'_, T>,
    b: MatRef<'_, T>,
) -> Mat<T> {
    crate::gvectors::sum_matrix(overlap(a, b), |flat| op.sum_rows(flat))
}

/// Squared column norms of `x` weighted by `w` (1 when None), over all rows.
pub(super) fn column_norms2<T: Scalar>(
    op: &impl BlockOperator<T>,
    x: MatRef<'_, T>,
    w: Option<&[f64]>,
) -> Vec<f64> {
    let mut out: Vec<f64> = (0..x.ncols())
        .map(|j| {
            let col = x.col(j);
            match w {
                None => col.iter().map(|v| v.abs2()).sum(),
                Some(w) => col.iter().zip(w).map(|(v, w)| v.abs2() * w).sum(),
            }
        })
        .collect();
    op.sum_rows(&mut out);
    out
}

/// Replace the square matrix `h` by its Hermitian part `(h + h^H) / 2` (rounding makes a
/// computed `Y^H A Y` slightly non-Hermitian).
pub(super) fn hermitian_part<T: Scalar>(mut h: MatMut<'_, T>) {
    for i in 0..h.nrows() {
        for j in 0..i {
            let v = (h[(i, j)] + h[(j, i)].cj()).scale(0.5);
            h[(i, j)] = v;
            h[(j, i)] = v.cj();
        }
        h[(i, i)] = T::from_f64(h[(i, i)].real());
    }
}

/// T such that `z T` has orthonormal columns spanning z's numerically independent directions:
/// directions whose overlap eigenvalue (columns scaled to unit norm) is below `tol` times the
/// largest are dropped. None when nothing is left.
pub(super) fn canonical_transform<T: Scalar>(
    op: &impl BlockOperator<T>,
    z: MatRef<'_, T>,
    tol: f64,
) -> Option<Mat<T>> {
    if z.ncols() == 0 {
        return None;
    }
    let norms2 = column_norms2(op, z, None);
    canonical_from(op, gram(op, z, z), &norms2, tol)
}

/// [`canonical_transform`] from the overlap `s = z^H z` and the squared column norms of `z`
/// (both over all rows); `s` is overwritten.
pub(super) fn canonical_from<T: Scalar>(
    op: &impl BlockOperator<T>,
    mut s: Mat<T>,
    norms2: &[f64],
    tol: f64,
) -> Option<Mat<T>> {
    let m = s.ncols();
    if m == 0 {
        return None;
    }
    // Scale columns to unit norm first so that the threshold is relative.
    let norms: Vec<f64> = norms2.iter().map(|n| n.sqrt()).collect();
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
        .filter(|&k| e.values[k] > tol * smax.max(1.0))
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
    let t = canonical_transform(op, x, 1e-12)?;
    (t.ncols() == x.ncols()).then(|| matmul(x, t.as_ref()))
}

/// Rows per block of [`multiply_cols_in_place`]: its temporary is `ROW_BLOCK x k`.
const ROW_BLOCK: usize = 1024;

/// `blk[:, start..start + k] = blk[:, start..start + t.nrows()] t` with `k = t.ncols() <=
/// t.nrows()`, in place: block of rows by block of rows through a `ROW_BLOCK x k` temporary
/// (rows are independent in this product), so no n-row scratch is needed.
pub(super) fn multiply_cols_in_place<T: Scalar>(blk: &mut Mat<T>, start: usize, t: MatRef<'_, T>) {
    let (n, k) = (blk.nrows(), t.ncols());
    debug_assert!(k <= t.nrows());
    let mut tmp = Mat::<T>::zeros(ROW_BLOCK.min(n), k);
    for r0 in (0..n).step_by(ROW_BLOCK) {
        let rows = ROW_BLOCK.min(n - r0);
        let mut tmp = tmp.as_mut().subrows_mut(0, rows);
        let src = blk.as_ref().submatrix(r0, start, rows, t.nrows());
        matmul_into(tmp.as_mut(), src, t, false);
        blk.as_mut()
            .submatrix_mut(r0, start, rows, k)
            .copy_from(tmp.as_ref());
    }
}

/// `blk[:, split..split + c.ncols()] -= blk[:, ..split] c` (removing the components along the
/// first `split` columns, whose overlaps with the others are `c`).
pub(super) fn subtract_projection<T: Scalar>(blk: &mut Mat<T>, split: usize, c: MatRef<'_, T>) {
    let minus_c = Mat::from_fn(c.nrows(), c.ncols(), |i, j| -c[(i, j)]);
    let (head, rest) = blk.as_mut().split_at_col_mut(split);
    matmul_into(
        rest.subcols_mut(0, c.ncols()),
        head.as_ref(),
        minus_c.as_ref(),
        true,
    );
}
