//! Operations on blocks of vectors shared by the eigensolvers: overlaps and norms over all rows
//! (completed with [`BlockOperator::sum_rows`] when the rows are dealt over a G-vector group),
//! and orthonormalisation (Cholesky with triangular kernels when the block is well
//! conditioned, canonical otherwise).

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
    use rayon::prelude::*;
    let mut out: Vec<f64> = x
        .par_col_iter()
        .map(|col| match w {
            None => col.iter().map(|v| v.abs2()).sum(),
            Some(w) => col.iter().zip(w).map(|(v, w)| v.abs2() * w).sum(),
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

/// [`orthonormaliser`] of `z` (collective over the ranks holding its rows).
pub(super) fn orthonormaliser_of<T: Scalar>(
    op: &impl BlockOperator<T>,
    z: MatRef<'_, T>,
    tol: f64,
) -> Option<Orthonormaliser<T>> {
    let norms2 = column_norms2(op, z, None);
    orthonormaliser(op, gram(op, z, z), &norms2, tol)
}

/// Make `z`'s columns orthonormal in place by `o` (a canonical transform must keep every
/// column).
pub(super) fn orthonormalise_in_place<T: Scalar>(
    z: &mut Mat<T>,
    at: usize,
    o: &Orthonormaliser<T>,
) {
    match o {
        Orthonormaliser::Cholesky(l) => {
            planewave_linalg::trsm_right(z.as_mut().subcols_mut(at, l.ncols()), l.as_ref(), true)
        }
        Orthonormaliser::Canonical(t) => multiply_cols_in_place(z, at, t.as_ref()),
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

/// Smallest squared Cholesky pivot (of the overlap with columns scaled to unit norm: the share
/// of a column's norm left once the previous columns are projected out) for which Cholesky
/// orthonormalisation is used; below it the block is near dependence and the canonical
/// transform drops directions instead. 1e-3 keeps the Cholesky basis orthonormal to about
/// 1e-12 (the loss grows with the overlap's condition number).
pub(super) const CHOLESKY_MIN_PIVOT: f64 = 1e-3;

/// How a block is made orthonormal.
pub(super) enum Orthonormaliser<T: Scalar> {
    /// `z L^-H`, `z^H z = L L^H` (lower triangular `L`; every direction kept): a triangular
    /// solve or rotation, half the flops of a general one.
    Cholesky(Mat<T>),
    /// `z T` by [`canonical_from`]'s `T` (dependent directions dropped).
    Canonical(Mat<T>),
}

impl<T: Scalar> Orthonormaliser<T> {
    /// How many directions it keeps.
    pub(super) fn kept(&self) -> usize {
        match self {
            Orthonormaliser::Cholesky(l) | Orthonormaliser::Canonical(l) => l.ncols(),
        }
    }
}

/// The orthonormaliser of `z` from its overlap `s = z^H z` and squared column norms (over all
/// rows): Cholesky when every scaled pivot reaches [`CHOLESKY_MIN_PIVOT`], else canonical with
/// `tol`; identical on every rank that shares the vectors (the factorisations go through `op`).
/// None when nothing is left.
pub(super) fn orthonormaliser<T: Scalar>(
    op: &impl BlockOperator<T>,
    s: Mat<T>,
    norms2: &[f64],
    tol: f64,
) -> Option<Orthonormaliser<T>> {
    if s.ncols() == 0 {
        return None;
    }
    let norms: Vec<f64> = norms2.iter().map(|n| n.sqrt()).collect();
    let s = unit_scaled(s, &norms);
    // A zero column leaves a zero pivot: Cholesky fails and the canonical transform drops it.
    if let Ok(ls) = op.small_cholesky(s.as_ref()) {
        if (0..ls.ncols()).all(|j| ls[(j, j)].abs2() >= CHOLESKY_MIN_PIVOT) {
            // s = D ls ls^H D: the factor of the unscaled overlap is D ls.
            let l = Mat::from_fn(ls.nrows(), ls.ncols(), |i, j| ls[(i, j)].scale(norms[i]));
            return Some(Orthonormaliser::Cholesky(l));
        }
    }
    canonical_scaled(op, s, &norms, tol).map(Orthonormaliser::Canonical)
}

/// `s` with rows and columns divided by `norms` (the overlap of unit columns), zero where a
/// norm is zero: the thresholds on it are relative.
fn unit_scaled<T: Scalar>(mut s: Mat<T>, norms: &[f64]) -> Mat<T> {
    let m = s.ncols();
    for j in 0..m {
        for i in 0..m {
            let d = norms[i] * norms[j];
            s[(i, j)] = if d > 0.0 {
                s[(i, j)].scale(1.0 / d)
            } else {
                T::from_f64(0.0)
            };
        }
    }
    s
}

/// [`canonical_transform`] from the overlap `s = z^H z` and the squared column norms of `z`
/// (both over all rows).
pub(super) fn canonical_from<T: Scalar>(
    op: &impl BlockOperator<T>,
    s: Mat<T>,
    norms2: &[f64],
    tol: f64,
) -> Option<Mat<T>> {
    if s.ncols() == 0 {
        return None;
    }
    let norms: Vec<f64> = norms2.iter().map(|n| n.sqrt()).collect();
    canonical_scaled(op, unit_scaled(s, &norms), &norms, tol)
}

/// [`canonical_from`] on the overlap already divided by the column norms `norms`.
fn canonical_scaled<T: Scalar>(
    op: &impl BlockOperator<T>,
    s: Mat<T>,
    norms: &[f64],
    tol: f64,
) -> Option<Mat<T>> {
    let m = s.ncols();
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

/// The `nb` lowest Ritz vectors of `op` in the span of `x` (more columns than `nb`): an
/// eigensolver's start from more trial vectors than bands, such as every atom's orbitals
/// (QE's `rotate_wfc`). None when the span has fewer than `nb` independent directions.
pub fn ritz_start<T: Scalar>(
    op: &impl BlockOperator<T>,
    x: MatRef<'_, T>,
    nb: usize,
) -> Option<Mat<T>> {
    let t = canonical_transform(op, x, 1e-8)?;
    if t.ncols() < nb {
        return None;
    }
    let q = matmul(x, t.as_ref());
    let mut hq = Mat::<T>::zeros(q.nrows(), q.ncols());
    op.apply(q.as_ref(), hq.as_mut());
    let mut h = gram(op, q.as_ref(), hq.as_ref());
    drop(hq);
    hermitian_part(h.as_mut());
    let e = op.small_eigen(h.as_ref(), nb).ok()?;
    Some(matmul(q.as_ref(), e.vectors.as_ref()))
}

/// Most bytes of one temporary of [`multiply_cols_in_place`]: below the heap's 1 MiB mmap
/// threshold (see the CLI's heap policy), so the temporaries come from the heap instead of
/// fresh pages for every block.
const BLOCK_TMP_BYTES: usize = 512 << 10;

/// `blk[:, start..start + k] = blk[:, start..start + t.nrows()] t` with `k = t.ncols() <=
/// t.nrows()`, in place: the rows are independent in this product, so blocks of rows go to
/// rayon's threads (one parallel region per product), each rayon job through a temporary of
/// its own of at most [`BLOCK_TMP_BYTES`], or 64 rows where k is larger (no n-row scratch).
pub(super) fn multiply_cols_in_place<T: Scalar>(blk: &mut Mat<T>, start: usize, t: MatRef<'_, T>) {
    use rayon::prelude::*;
    let (n, k) = (blk.nrows(), t.ncols());
    debug_assert!(k <= t.nrows());
    let rows_per_block = (BLOCK_TMP_BYTES / (k * std::mem::size_of::<T>()).max(1)).clamp(64, 1024);
    let cols = blk.as_mut().subcols_mut(start, t.nrows());
    cols.par_row_chunks_mut(rows_per_block).for_each_init(
        || Mat::<T>::zeros(rows_per_block.min(n), k),
        |tmp, mut rows| {
            let mut tmp = tmp.as_mut().subrows_mut(0, rows.nrows());
            matmul_into(tmp.as_mut(), rows.as_ref(), t, false);
            rows.as_mut().subcols_mut(0, k).copy_from(tmp.as_ref());
        },
    );
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

#[cfg(test)]
mod tests {
    use super::super::testing::{complex_operator, complex_start};
    use super::*;

    /// `z` after `o`, and the distance of its overlap from the identity.
    fn orthonormality_error(
        z: &Mat<planewave_linalg::c64>,
        o: &Orthonormaliser<planewave_linalg::c64>,
    ) -> f64 {
        let mut y = z.clone();
        orthonormalise_in_place(&mut y, 0, o);
        let y = y.as_ref().subcols(0, o.kept());
        let s = overlap(y, y);
        let eye = Mat::from_fn(s.nrows(), s.ncols(), |i, j| {
            planewave_linalg::c64::new(if i == j { 1.0 } else { 0.0 }, 0.0)
        });
        (&s - &eye).norm_l2()
    }

    #[test]
    fn independent_columns_take_cholesky_dependent_ones_the_canonical_transform() {
        let op = complex_operator(60, false);
        let z = complex_start(60, 8).as_ref().to_owned();
        let mut scaled = z.clone();
        for j in 0..8 {
            let f = 10f64.powi(j as i32 - 4);
            scaled.col_mut(j).iter_mut().for_each(|v| *v = v.scale(f));
        }
        // Column scales do not matter: the pivots are taken on unit columns.
        for z in [&z, &scaled] {
            let o = orthonormaliser_of(&op, z.as_ref(), 1e-12).expect("directions kept");
            assert!(matches!(o, Orthonormaliser::Cholesky(_)));
            assert!(orthonormality_error(z, &o) < 1e-12);
        }
        // Column 7 = column 0 + 1e-4 noise: Cholesky's last pivot is 1e-8 of the column.
        let mut near = z.clone();
        let c0 = near.col(0).to_owned();
        for (i, v) in near.col_mut(7).iter_mut().enumerate() {
            *v = c0[i] + planewave_linalg::c64::new(1e-4 * ((i % 7) as f64 - 3.0), 0.0);
        }
        let o = orthonormaliser_of(&op, near.as_ref(), 1e-12).expect("directions kept");
        assert!(matches!(o, Orthonormaliser::Canonical(_)));
        assert_eq!(o.kept(), 8);
        let err = orthonormality_error(&near, &o);
        assert!(err < 1e-6, "{err}");
        // An exact copy is dropped.
        let mut copy = z.clone();
        let c1 = copy.col(1).to_owned();
        copy.col_mut(5).copy_from(&c1);
        let o = orthonormaliser_of(&op, copy.as_ref(), 1e-12).expect("directions kept");
        assert!(matches!(o, Orthonormaliser::Canonical(_)));
        assert_eq!(o.kept(), 7);
    }
}
