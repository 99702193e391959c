//! Dense kernels against naive reference implementations, for f64 and c64, on every back end
//! built in (faer; OpenBLAS with the feature `lapack`).

use planewave_linalg::selfcheck::{rel_err, test_matrix};
use planewave_linalg::{c64, hermitian_eigen_lowest, Backend, Mat, MatRef, Scalar};

const TOL: f64 = 1e-12;

fn adj<T: Scalar>(a: MatRef<'_, T>) -> Mat<T> {
    Mat::from_fn(a.ncols(), a.nrows(), |i, j| a[(j, i)].cj())
}

fn naive_mul<T: Scalar>(a: MatRef<'_, T>, b: MatRef<'_, T>) -> Mat<T> {
    assert_eq!(a.ncols(), b.nrows());
    Mat::from_fn(a.nrows(), b.ncols(), |i, j| {
        let mut s = T::from_f64(0.0);
        for k in 0..a.ncols() {
            s += a[(i, k)] * b[(k, j)];
        }
        s
    })
}

/// Lower triangle of `m` with the strict upper part zeroed.
fn tril<T: Scalar>(m: MatRef<'_, T>) -> Mat<T> {
    Mat::from_fn(m.nrows(), m.ncols(), |i, j| {
        if i >= j {
            m[(i, j)]
        } else {
            T::from_f64(0.0)
        }
    })
}

/// A well-conditioned lower triangular matrix with junk in its strict upper triangle (which
/// the kernels must ignore).
fn lower_with_junk<T: Scalar>(n: usize, seed: u64) -> Mat<T> {
    let mut l = test_matrix::<T>(n, n, seed);
    for i in 0..n {
        l[(i, i)] += T::from_f64(3.0 + i as f64 * 0.01);
    }
    l
}

fn hpd<T: Scalar>(n: usize, seed: u64) -> Mat<T> {
    let a = test_matrix::<T>(n + 7, n, seed);
    let mut h = naive_mul(adj(a.as_ref()).as_ref(), a.as_ref());
    for i in 0..n {
        h[(i, i)] += T::from_f64(0.5);
    }
    h
}

fn check_backend<T: Scalar>(be: Backend) {
    let who = format!("{be} {}", std::any::type_name::<T>());
    // GEMM, every conjugate-transpose variant, replace and accumulate.
    let (m, n, k) = (9, 7, 11);
    for (adj_a, adj_b) in [(false, false), (true, false), (false, true), (true, true)] {
        let a = test_matrix::<T>(if adj_a { k } else { m }, if adj_a { m } else { k }, 1);
        let b = test_matrix::<T>(if adj_b { n } else { k }, if adj_b { k } else { n }, 2);
        let oa = if adj_a { adj(a.as_ref()) } else { a.clone() };
        let ob = if adj_b { adj(b.as_ref()) } else { b.clone() };
        let want = naive_mul(oa.as_ref(), ob.as_ref());
        let mut c = test_matrix::<T>(m, n, 3);
        T::gemm_with(be, c.as_mut(), false, a.as_ref(), adj_a, b.as_ref(), adj_b);
        assert!(
            rel_err(c.as_ref(), want.as_ref()) < TOL,
            "{who} gemm {adj_a} {adj_b}"
        );
        let c0 = test_matrix::<T>(m, n, 3);
        let mut c = c0.clone();
        T::gemm_with(be, c.as_mut(), true, a.as_ref(), adj_a, b.as_ref(), adj_b);
        let want = Mat::from_fn(m, n, |i, j| c0[(i, j)] + want[(i, j)]);
        assert!(
            rel_err(c.as_ref(), want.as_ref()) < TOL,
            "{who} gemm acc {adj_a} {adj_b}"
        );
    }
    // Empty inner dimension.
    let mut c = test_matrix::<T>(3, 2, 4);
    T::gemm_with(
        be,
        c.as_mut(),
        false,
        Mat::<T>::zeros(3, 0).as_ref(),
        false,
        Mat::<T>::zeros(0, 2).as_ref(),
        false,
    );
    assert!(
        c.col_iter().all(|col| col.iter().all(|x| x.abs2() == 0.0)),
        "{who} k = 0"
    );

    // Cholesky.
    let n = 12;
    let h = hpd::<T>(n, 5);
    let l = T::cholesky_with(be, h.as_ref()).unwrap();
    assert!(
        rel_err(l.as_ref(), tril(l.as_ref()).as_ref()) == 0.0,
        "{who} L lower"
    );
    let llh = naive_mul(l.as_ref(), adj(l.as_ref()).as_ref());
    assert!(rel_err(llh.as_ref(), h.as_ref()) < TOL, "{who} cholesky");
    let mut not_pd = h.clone();
    not_pd[(3, 3)] = T::from_f64(-1.0);
    assert!(
        T::cholesky_with(be, not_pd.as_ref()).is_err(),
        "{who} not PD"
    );

    // Triangular inverse, multiply and solve (junk in the strict upper part is ignored).
    let lj = lower_with_junk::<T>(n, 6);
    let lt = tril(lj.as_ref());
    let inv = T::tri_inverse_with(be, lj.as_ref());
    let id = Mat::from_fn(n, n, |i, j| T::from_f64(if i == j { 1.0 } else { 0.0 }));
    assert!(
        rel_err(naive_mul(lt.as_ref(), inv.as_ref()).as_ref(), id.as_ref()) < TOL,
        "{who} trtri"
    );
    let x = test_matrix::<T>(17, n, 7);
    for adj_l in [false, true] {
        let op = if adj_l { adj(lt.as_ref()) } else { lt.clone() };
        let mut y = x.clone();
        T::trmm_right_with(be, y.as_mut(), lj.as_ref(), adj_l);
        let want = naive_mul(x.as_ref(), op.as_ref());
        assert!(
            rel_err(y.as_ref(), want.as_ref()) < TOL,
            "{who} trmm {adj_l}"
        );
        let mut z = x.clone();
        T::trsm_right_with(be, z.as_mut(), lj.as_ref(), adj_l);
        let back = naive_mul(z.as_ref(), op.as_ref());
        assert!(
            rel_err(back.as_ref(), x.as_ref()) < TOL,
            "{who} trsm {adj_l}"
        );
    }
    // C += A triu(U), strict and not.
    let u = test_matrix::<T>(n, n, 8);
    for strict in [false, true] {
        let ut = Mat::from_fn(n, n, |i, j| {
            if i < j || (i == j && !strict) {
                u[(i, j)]
            } else {
                T::from_f64(0.0)
            }
        });
        let c0 = test_matrix::<T>(17, n, 9);
        let mut c = c0.clone();
        T::upper_matmul_acc_with(be, c.as_mut(), x.as_ref(), u.as_ref(), strict);
        let p = naive_mul(x.as_ref(), ut.as_ref());
        let want = Mat::from_fn(17, n, |i, j| c0[(i, j)] + p[(i, j)]);
        assert!(
            rel_err(c.as_ref(), want.as_ref()) < TOL,
            "{who} upper matmul {strict}"
        );
    }

    // Hermitian eigensolver: residual, orthonormality, ascending order.
    let (w, v) = T::hermitian_eigen_with(be, h.as_ref()).unwrap();
    assert!(w.windows(2).all(|p| p[0] <= p[1]), "{who} ascending");
    let hv = naive_mul(h.as_ref(), v.as_ref());
    let vw = Mat::from_fn(n, n, |i, j| v[(i, j)].scale(w[j]));
    assert!(
        rel_err(vw.as_ref(), hv.as_ref()) < TOL,
        "{who} eigen residual"
    );
    let vhv = naive_mul(adj(v.as_ref()).as_ref(), v.as_ref());
    assert!(
        rel_err(vhv.as_ref(), id.as_ref()) < TOL,
        "{who} eigenvectors orthonormal"
    );
}

#[test]
fn kernels_match_naive_references_on_every_backend() {
    for be in Backend::available() {
        check_backend::<f64>(be);
        check_backend::<c64>(be);
    }
}

#[test]
fn backends_agree_on_eigenvalues_and_lowest_n_truncates() {
    let h = hpd::<c64>(20, 11);
    let all = planewave_linalg::hermitian_eigen(h.as_ref()).unwrap();
    let low = hermitian_eigen_lowest(h.as_ref(), 6).unwrap();
    assert_eq!(low.values, all.values[..6].to_vec());
    assert_eq!((low.vectors.nrows(), low.vectors.ncols()), (20, 6));
    let reference = c64::hermitian_eigen_with(Backend::Faer, h.as_ref())
        .unwrap()
        .0;
    for be in Backend::available() {
        let w = c64::hermitian_eigen_with(be, h.as_ref()).unwrap().0;
        for (a, b) in w.iter().zip(&reference) {
            assert!(
                (a - b).abs() <= 1e-12 * reference.last().unwrap().abs(),
                "{be}"
            );
        }
    }
}
