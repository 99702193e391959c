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

/// Most bytes of A one product takes at a time (see [`slab_count`]).
pub const SLAB_BYTES: usize = 4 << 20;

/// How many row slabs a product `C = A B` with `rows` rows and `row_bytes` bytes per row of
/// A runs in: faer's x86 kernels pack as many rows of a tall A as fit the L3 cache into a
/// thread-local buffer that stays resident for the process's life (16-18 MiB on a 32 MiB L3
/// for the Davidson rotation `V C` of si64 Γ), so A goes in slabs of at most
/// [`SLAB_BYTES`]. Each row of C is still one row of A times B (only the kernel, and so the
/// rounding, may differ), and on si64 Γ the slabs cost no time while saving 12 MiB per
/// process.
fn slab_count(rows: usize, row_bytes: usize) -> usize {
    (rows * row_bytes)
        .div_ceil(SLAB_BYTES)
        .clamp(1, rows.max(1))
}

/// Most bytes of partial results a split-k product ([`split_k_tasks`]) holds at once.
const SPLIT_K_BYTES: usize = 64 << 20;
/// Fewest rows of A per task of a split-k product.
const SPLIT_K_ROWS: usize = 2048;

/// Tasks for `C = A^H B` with `k` rows of A and B and an `m x n` C of `elem`-byte entries:
/// the rows dealt over rayon's threads, each task into a partial C of its own, when the
/// product is deep. faer parallelises over C's tiles, which an overlap or a projection (C of
/// tens to hundreds of columns, k of 10^4-10^5 plane waves) leaves mostly idle: on si64 Γ
/// with 16 threads the overlaps and projections ran only 1.7-2.1x faster than on one.
fn split_k_tasks(k: usize, (m, n): (usize, usize), elem: usize) -> usize {
    let threads = rayon::current_num_threads();
    if threads < 2 || k.saturating_mul(m).saturating_mul(n) < PAR_THRESHOLD {
        return 1;
    }
    let by_memory = SPLIT_K_BYTES / (m * n * elem).max(1);
    threads.min(k / SPLIT_K_ROWS).min(by_memory).max(1)
}

/// `C (+)= A^H B` in `tasks` slices of rows, summed in slice order (the same rounding for a
/// given thread count).
fn gemm_split_k<T: Scalar>(
    mut c: MatMut<'_, T>,
    accumulate: bool,
    a: MatRef<'_, T>,
    b: MatRef<'_, T>,
    tasks: usize,
) {
    use rayon::prelude::*;
    let (k, m, n) = (a.nrows(), c.nrows(), c.ncols());
    let rows = k.div_ceil(tasks);
    let inner = par(rows * m * n / rayon::current_num_threads().div_ceil(tasks).max(1));
    let partials: Vec<Mat<T>> = (0..tasks)
        .into_par_iter()
        .map(|t| {
            let (r0, r1) = ((t * rows).min(k), ((t + 1) * rows).min(k));
            let mut p = Mat::<T>::zeros(m, n);
            let (at, bt) = (a.subrows(r0, r1 - r0), b.subrows(r0, r1 - r0));
            faer_matmul(
                p.as_mut(),
                Accum::Replace,
                at.adjoint(),
                bt,
                T::from_f64(1.0),
                inner,
            );
            p
        })
        .collect();
    for j in 0..n {
        for i in 0..m {
            let sum = partials.iter().fold(T::from_f64(0.0), |s, p| s + p[(i, j)]);
            c[(i, j)] = if accumulate { c[(i, j)] + sum } else { sum };
        }
    }
}

/// `C (+)= op(A) op(B)` with `op` the identity or the conjugate transpose; a tall `A B` in row
/// slabs ([`slab_count`]); a deep `A^H B` split over the rows ([`split_k_tasks`]).
pub(crate) fn gemm<T: Scalar>(
    c: MatMut<'_, T>,
    accumulate: bool,
    a: MatRef<'_, T>,
    adj_a: bool,
    b: MatRef<'_, T>,
    adj_b: bool,
) {
    let k = if adj_a { a.nrows() } else { a.ncols() };
    if adj_a && !adj_b {
        let tasks = split_k_tasks(k, (c.nrows(), c.ncols()), std::mem::size_of::<T>());
        if tasks > 1 {
            return gemm_split_k(c, accumulate, a, b, tasks);
        }
    }
    let slabs = if adj_a {
        1
    } else {
        slab_count(c.nrows(), k * std::mem::size_of::<T>())
    };
    let rows = c.nrows().div_ceil(slabs).max(1);
    let one = T::from_f64(1.0);
    let acc = accum(accumulate);
    let mut c = c;
    for r in (0..c.nrows()).step_by(rows) {
        let h = rows.min(c.nrows() - r);
        let c = c.as_mut().subrows_mut(r, h);
        let a = if adj_a { a } else { a.subrows(r, h) };
        let p = par(h * c.ncols() * k);
        match (adj_a, adj_b) {
            (false, false) => faer_matmul(c, acc, a, b, one, p),
            (true, false) => faer_matmul(c, acc, a.adjoint(), b, one, p),
            (false, true) => faer_matmul(c, acc, a, b.adjoint(), one, p),
            (true, true) => faer_matmul(c, acc, a.adjoint(), b.adjoint(), one, p),
        }
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

#[cfg(test)]
mod tests {
    use super::*;
    use faer::c64;

    #[test]
    fn slab_count_bounds_each_slab_of_a() {
        assert_eq!(slab_count(0, 16), 1);
        assert_eq!(slab_count(100, 16), 1);
        assert_eq!(slab_count(5962, 384 * 16), 9);
        // Never more slabs than rows, however wide a row.
        assert_eq!(slab_count(3, SLAB_BYTES * 4), 3);
        for (rows, row_bytes) in [(5962usize, 384 * 16), (11924, 128 * 8), (1000, 70_000)] {
            let per = rows.div_ceil(slab_count(rows, row_bytes));
            assert!(
                per * row_bytes <= SLAB_BYTES + row_bytes,
                "{rows} x {row_bytes}"
            );
        }
    }

    /// A deep `A^H B` split over its rows (uneven slices) equals the plain sums, replacing and
    /// accumulating; and the split is only chosen for deep products on several threads.
    #[test]
    fn deep_overlap_split_over_rows_matches_the_sums() {
        let (k, m, n) = (5003, 6, 4);
        let a = Mat::from_fn(k, m, |i, j| {
            c64::new((i * 7 + j) as f64 % 1.3, (i + 3 * j) as f64 % 0.7)
        });
        let b = Mat::from_fn(k, n, |i, j| {
            c64::new((i + j * 5) as f64 % 0.9, -((i * j) as f64 % 1.1))
        });
        let exact = |i: usize, j: usize| {
            (0..k).fold(c64::new(0.0, 0.0), |s, r| s + a[(r, i)].conj() * b[(r, j)])
        };
        for accumulate in [false, true] {
            let mut c = Mat::from_fn(m, n, |i, j| c64::new(i as f64, j as f64));
            gemm_split_k(c.as_mut(), accumulate, a.as_ref(), b.as_ref(), 3);
            for (i, j) in (0..m).flat_map(|i| (0..n).map(move |j| (i, j))) {
                let want = exact(i, j)
                    + if accumulate {
                        c64::new(i as f64, j as f64)
                    } else {
                        c64::new(0.0, 0.0)
                    };
                assert!(
                    (c[(i, j)] - want).norm() <= 1e-11 * want.norm().max(1.0),
                    "{i} {j}"
                );
            }
        }
        let pool = |t| {
            rayon::ThreadPoolBuilder::new()
                .num_threads(t)
                .build()
                .unwrap()
        };
        assert_eq!(pool(1).install(|| split_k_tasks(100_000, (128, 384), 8)), 1);
        assert_eq!(
            pool(16).install(|| split_k_tasks(100_000, (128, 384), 8)),
            16
        );
        // Shallow (k near C's size) or huge C: fewer tasks or none.
        assert_eq!(pool(16).install(|| split_k_tasks(3000, (1296, 1296), 8)), 1);
        assert_eq!(
            pool(16).install(|| split_k_tasks(200_000, (1296, 1296), 16)),
            2
        );
    }

    /// A product run in several slabs equals the plain sums, for both accumulate modes and an
    /// adjoint B.
    #[test]
    fn tall_product_in_slabs_matches_the_sums() {
        let (m, k, n) = (3001, 200, 7);
        assert!(slab_count(m, k * 16) > 1);
        let a = Mat::from_fn(m, k, |i, j| {
            c64::new((i as f64 * 0.01).sin(), (j as f64).cos())
        });
        let b = Mat::from_fn(n, k, |i, j| {
            c64::new((i + j) as f64 * 0.1, 1.0 / (1 + i) as f64)
        });
        let c0 = Mat::from_fn(m, n, |i, j| c64::new(i as f64, j as f64));
        for accumulate in [false, true] {
            let mut c = c0.clone();
            gemm(c.as_mut(), accumulate, a.as_ref(), false, b.as_ref(), true);
            for i in (0..m).step_by(97) {
                for j in 0..n {
                    let sum: c64 = (0..k).map(|l| a[(i, l)] * b[(j, l)].conj()).sum();
                    let expect = if accumulate { c0[(i, j)] + sum } else { sum };
                    assert!((c[(i, j)] - expect).norm() < 1e-9, "({i}, {j})");
                }
            }
        }
    }
}
