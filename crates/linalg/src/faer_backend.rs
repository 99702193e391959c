//! The faer back end of the dense kernels (pure Rust, always built).
//!
//! Contract: each function has the semantics of the `Scalar` method of the same name (see
//! `scalar.rs`). Products use rayon threads only above [`PAR_THRESHOLD`] multiply-adds. faer
//! has no partial Hermitian eigensolver: the lowest-n form computes every pair and truncates.

use crate::scalar::{LinalgError, Scalar};
use faer::linalg::matmul::matmul as faer_matmul;
use faer::linalg::matmul::triangular::{matmul as tri_matmul, BlockStructure};
use faer::linalg::triangular_inverse::invert_lower_triangular;
use faer::linalg::triangular_solve::{
    solve_lower_triangular_in_place, solve_upper_triangular_in_place,
};
use faer::{Accum, Mat, MatMut, MatRef, Par, Side};

/// Below this many multiply-adds a kernel runs on one thread (synchronisation costs more).
pub const PAR_THRESHOLD: usize = 1 << 18;

/// Parallelism for a kernel of `flops` multiply-adds.
pub(crate) fn par(flops: usize) -> Par {
    match std::thread::available_parallelism() {
        Ok(n) if n.get() > 1 && flops >= PAR_THRESHOLD => Par::rayon(0),
        _ => Par::Seq,
    }
}

fn accum(accumulate: bool) -> Accum {
    if accumulate {
        Accum::Add
    } else {
        Accum::Replace
    }
}

/// `C (+)= op(A) op(B)` with `op` the identity or the conjugate transpose.
pub(crate) fn gemm<T: Scalar>(
    c: MatMut<'_, T>,
    accumulate: bool,
    a: MatRef<'_, T>,
    adj_a: bool,
    b: MatRef<'_, T>,
    adj_b: bool,
) {
    let k = if adj_a { a.nrows() } else { a.ncols() };
    let p = par(c.nrows() * c.ncols() * k);
    let one = T::from_f64(1.0);
    let acc = accum(accumulate);
    match (adj_a, adj_b) {
        (false, false) => faer_matmul(c, acc, a, b, one, p),
        (true, false) => faer_matmul(c, acc, a.adjoint(), b, one, p),
        (false, true) => faer_matmul(c, acc, a, b.adjoint(), one, p),
        (true, true) => faer_matmul(c, acc, a.adjoint(), b.adjoint(), one, p),
    }
}

/// Lower Cholesky factor of the Hermitian positive definite `h` (lower triangle read).
pub(crate) fn cholesky<T: Scalar>(h: MatRef<'_, T>) -> Result<Mat<T>, LinalgError> {
    let n = h.nrows();
    let llt = h
        .llt(Side::Lower)
        .map_err(|e| LinalgError(format!("Cholesky: matrix not positive definite ({e:?})")))?;
    let l = llt.L();
    Ok(Mat::from_fn(n, n, |i, j| {
        if i >= j {
            l[(i, j)]
        } else {
            T::from_f64(0.0)
        }
    }))
}

/// Inverse of the lower triangular `l` (lower triangular; the strict upper part is zero).
pub(crate) fn tri_inverse<T: Scalar>(l: MatRef<'_, T>) -> Mat<T> {
    let n = l.nrows();
    let mut inv = Mat::<T>::zeros(n, n);
    invert_lower_triangular(inv.as_mut(), l, par(n * n * n / 3));
    for j in 0..n {
        for i in 0..j {
            inv[(i, j)] = T::from_f64(0.0);
        }
    }
    inv
}

/// `X <- X op(L)`, `L` lower triangular (only its lower triangle is read).
pub(crate) fn trmm_right<T: Scalar>(mut x: MatMut<'_, T>, l: MatRef<'_, T>, adj: bool) {
    let tmp = x.to_owned();
    let p = par(x.nrows() * x.ncols() * x.ncols() / 2);
    let one = T::from_f64(1.0);
    let rect = BlockStructure::Rectangular;
    if adj {
        tri_matmul(
            x.as_mut(),
            rect,
            Accum::Replace,
            tmp.as_ref(),
            rect,
            l.adjoint(),
            BlockStructure::TriangularUpper,
            one,
            p,
        );
    } else {
        tri_matmul(
            x.as_mut(),
            rect,
            Accum::Replace,
            tmp.as_ref(),
            rect,
            l,
            BlockStructure::TriangularLower,
            one,
            p,
        );
    }
}

/// `X <- X op(L)^-1`, `L` lower triangular and invertible.
pub(crate) fn trsm_right<T: Scalar>(x: MatMut<'_, T>, l: MatRef<'_, T>, adj: bool) {
    // Y op(L) = X  <=>  op(L)^T Y^T = X^T.
    let p = par(x.nrows() * x.ncols() * x.ncols() / 2);
    if adj {
        // (L^H)^T = conj(L), lower.
        solve_lower_triangular_in_place(l.conjugate(), x.transpose_mut(), p);
    } else {
        solve_upper_triangular_in_place(l.transpose(), x.transpose_mut(), p);
    }
}

/// `C += A triu(U)` (`strict`: the strict upper triangle only); `U` square.
pub(crate) fn upper_matmul_acc<T: Scalar>(
    c: MatMut<'_, T>,
    a: MatRef<'_, T>,
    u: MatRef<'_, T>,
    strict: bool,
) {
    let p = par(a.nrows() * u.nrows() * u.ncols() / 2);
    let rect = BlockStructure::Rectangular;
    let s = if strict {
        BlockStructure::StrictTriangularUpper
    } else {
        BlockStructure::TriangularUpper
    };
    tri_matmul(c, rect, Accum::Add, a, rect, u, s, T::from_f64(1.0), p);
}

/// All eigenpairs of the Hermitian `h` (lower triangle read), values ascending.
pub(crate) fn hermitian_eigen<T: Scalar>(
    h: MatRef<'_, T>,
) -> Result<(Vec<f64>, Mat<T>), LinalgError> {
    let evd = h
        .self_adjoint_eigen(Side::Lower)
        .map_err(|e| LinalgError(format!("Hermitian eigensolver: {e:?}")))?;
    let s = evd.S().column_vector();
    let n = h.nrows();
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_by(|&i, &j| s[i].real().total_cmp(&s[j].real()));
    let u = evd.U();
    let values = order.iter().map(|&i| s[i].real()).collect();
    let vectors = Mat::from_fn(n, n, |r, c| u[(r, order[c])]);
    Ok((values, vectors))
}
