//! The `lapack` back end: BLAS/LAPACK of the system OpenBLAS (`libopenblas-dev`) through the
//! `blas` and `lapack` crates (feature `lapack`).
//!
//! Contract: each function has the semantics of the `Scalar` method of the same name. Operands
//! are copied into contiguous column-major buffers (leading dimension = rows) before the
//! Fortran call and results copied back: O(mn) copies around O(mnk) work, and no slice is ever
//! formed over memory a faer view does not own. The eigensolver is `zheevd`/`dsyevd`
//! (divide and conquer; not `zheev`), all pairs, truncated by the caller for the lowest n. The
//! first call applies `PLANEWAVE_BLAS_THREADS` and warns once about `OPENBLAS_CORETYPE` (see
//! [`crate::openblas`]). All `unsafe` is in the FFI calls, each with its soundness argument.

use crate::openblas::{recommended_coretype, BLAS_THREADS_ENV, CORETYPE_ENV};
use crate::scalar::{LinalgError, Scalar};
use faer::{c64, Mat, MatMut, MatRef};
use std::ffi::{c_char, c_int, CStr};
use std::sync::Once;

#[link(name = "openblas")]
extern "C" {
    fn openblas_set_num_threads(n: c_int);
    fn openblas_get_corename() -> *const c_char;
}

/// OpenBLAS's kernel choice.
pub(crate) fn corename() -> String {
    // SAFETY: openblas_get_corename takes no arguments and returns a pointer to a static,
    // NUL-terminated string owned by the library (never freed); we copy it out at once.
    unsafe { CStr::from_ptr(openblas_get_corename()) }
        .to_string_lossy()
        .into_owned()
}

/// Size of OpenBLAS's thread pool.
pub(crate) fn set_threads(n: usize) {
    let n = c_int::try_from(n.max(1)).unwrap_or(c_int::MAX);
    // SAFETY: openblas_set_num_threads takes a plain int (clamped to >= 1) and only resizes the
    // library's internal pool; it is safe to call at any time from any thread.
    unsafe { openblas_set_num_threads(n) }
}

static INIT: Once = Once::new();

fn init() {
    INIT.call_once(|| {
        if let Some(n) = std::env::var(BLAS_THREADS_ENV)
            .ok()
            .and_then(|v| v.trim().parse::<usize>().ok())
        {
            set_threads(n);
        }
        if std::env::var_os(CORETYPE_ENV).is_none() {
            if let Some(rec) = recommended_coretype() {
                let got = corename();
                if !got.eq_ignore_ascii_case(rec) {
                    eprintln!(
                        "planewave-linalg: OpenBLAS runs '{got}' kernels on a CPU that supports \
                         '{rec}'; export {CORETYPE_ENV}={rec} before starting the program (it \
                         is read when the library loads) for several times faster BLAS"
                    );
                }
            }
        }
    });
}

fn dim(n: usize) -> i32 {
    i32::try_from(n).expect("planewave-linalg: matrix dimension exceeds the LAPACK integer range")
}

/// Column-major copy with leading dimension max(1, rows).
fn pack<T: Scalar>(m: MatRef<'_, T>) -> Vec<T> {
    let mut v = Vec::with_capacity(m.nrows().max(1) * m.ncols());
    for j in 0..m.ncols() {
        for i in 0..m.nrows() {
            v.push(m[(i, j)]);
        }
        if m.nrows() == 0 {
            v.push(T::from_f64(0.0));
        }
    }
    v
}

fn unpack<T: Scalar>(mut dst: MatMut<'_, T>, v: &[T]) {
    let ld = dst.nrows().max(1);
    for j in 0..dst.ncols() {
        for i in 0..dst.nrows() {
            dst[(i, j)] = v[i + j * ld];
        }
    }
}

fn ld(rows: usize) -> i32 {
    dim(rows.max(1))
}

/// The Fortran routines of one element type (all arguments as the BLAS/LAPACK reference).
pub(crate) trait LapackScalar: Scalar {
    #[allow(clippy::too_many_arguments)]
    fn gemm_raw(
        ta: u8,
        tb: u8,
        m: i32,
        n: i32,
        k: i32,
        a: &[Self],
        lda: i32,
        b: &[Self],
        ldb: i32,
        beta: Self,
        c: &mut [Self],
        ldc: i32,
    );
    #[allow(clippy::too_many_arguments)]
    fn trmm_raw(uplo: u8, ta: u8, m: i32, n: i32, a: &[Self], lda: i32, b: &mut [Self], ldb: i32);
    #[allow(clippy::too_many_arguments)]
    fn trsm_raw(uplo: u8, ta: u8, m: i32, n: i32, a: &[Self], lda: i32, b: &mut [Self], ldb: i32);
    fn potrf_raw(n: i32, a: &mut [Self], lda: i32) -> i32;
    fn trtri_raw(n: i32, a: &mut [Self], lda: i32) -> i32;
    /// Eigenvalues into `w`, eigenvectors over `a`; returns `info`.
    fn heevd_raw(n: i32, a: &mut [Self], lda: i32, w: &mut [f64]) -> i32;
}

// SAFETY (shared by every call below): each buffer is a Vec packed by `pack` (or allocated)
// with at least ld * cols elements, ld >= max(1, rows) as BLAS/LAPACK require, dimensions are
// checked to fit i32, and the reference semantics of these routines read and write only
// inside the described (ld x cols) arrays; workspace lengths come from the routine's own
// workspace query. OpenBLAS (pthread build, >= 0.3.7) may be called from several threads at
// once. No Rust reference aliases a buffer during the call (distinct Vecs, & vs &mut).
macro_rules! lapack_common {
    ($t:ty, $gemm:ident, $trmm:ident, $trsm:ident, $potrf:ident, $trtri:ident) => {
        fn gemm_raw(
            ta: u8,
            tb: u8,
            m: i32,
            n: i32,
            k: i32,
            a: &[Self],
            lda: i32,
            b: &[Self],
            ldb: i32,
            beta: Self,
            c: &mut [Self],
            ldc: i32,
        ) {
            let one = <$t as Scalar>::from_f64(1.0);
            // SAFETY: see the comment above the macro.
            unsafe { blas::$gemm(ta, tb, m, n, k, one, a, lda, b, ldb, beta, c, ldc) }
        }
        fn trmm_raw(
            uplo: u8,
            ta: u8,
            m: i32,
            n: i32,
            a: &[Self],
            lda: i32,
            b: &mut [Self],
            ldb: i32,
        ) {
            let one = <$t as Scalar>::from_f64(1.0);
            // SAFETY: see the comment above the macro (A is n x n, B is m x n).
            unsafe { blas::$trmm(b'R', uplo, ta, b'N', m, n, one, a, lda, b, ldb) }
        }
        fn trsm_raw(
            uplo: u8,
            ta: u8,
            m: i32,
            n: i32,
            a: &[Self],
            lda: i32,
            b: &mut [Self],
            ldb: i32,
        ) {
            let one = <$t as Scalar>::from_f64(1.0);
            // SAFETY: see the comment above the macro (A is n x n, B is m x n).
            unsafe { blas::$trsm(b'R', uplo, ta, b'N', m, n, one, a, lda, b, ldb) }
        }
        fn potrf_raw(n: i32, a: &mut [Self], lda: i32) -> i32 {
            let mut info = 0;
            // SAFETY: see the comment above the macro.
            unsafe { lapack::$potrf(b'L', n, a, lda, &mut info) };
            info
        }
        fn trtri_raw(n: i32, a: &mut [Self], lda: i32) -> i32 {
            let mut info = 0;
            // SAFETY: see the comment above the macro.
            unsafe { lapack::$trtri(b'L', b'N', n, a, lda, &mut info) };
            info
        }
    };
}

impl LapackScalar for f64 {
    lapack_common!(f64, dgemm, dtrmm, dtrsm, dpotrf, dtrtri);
    fn heevd_raw(n: i32, a: &mut [f64], lda: i32, w: &mut [f64]) -> i32 {
        let (mut info, mut wq, mut iwq) = (0, [0.0f64], [0i32]);
        // SAFETY: workspace query (lwork = liwork = -1) writes one element of each workspace.
        unsafe {
            lapack::dsyevd(
                b'V', b'L', n, a, lda, w, &mut wq, -1, &mut iwq, -1, &mut info,
            )
        };
        if info != 0 {
            return info;
        }
        let (lwork, liwork) = (wq[0] as i32, iwq[0]);
        let mut work = vec![0.0f64; lwork.max(1) as usize];
        let mut iwork = vec![0i32; liwork.max(1) as usize];
        // SAFETY: see the comment above the macro; workspaces sized by the query.
        unsafe {
            lapack::dsyevd(
                b'V', b'L', n, a, lda, w, &mut work, lwork, &mut iwork, liwork, &mut info,
            )
        };
        info
    }
}

impl LapackScalar for c64 {
    lapack_common!(c64, zgemm, ztrmm, ztrsm, zpotrf, ztrtri);
    fn heevd_raw(n: i32, a: &mut [c64], lda: i32, w: &mut [f64]) -> i32 {
        let (mut info, mut wq, mut rwq, mut iwq) = (0, [c64::new(0.0, 0.0)], [0.0f64], [0i32]);
        // SAFETY: workspace query (all lengths -1) writes one element of each workspace.
        unsafe {
            lapack::zheevd(
                b'V', b'L', n, a, lda, w, &mut wq, -1, &mut rwq, -1, &mut iwq, -1, &mut info,
            )
        };
        if info != 0 {
            return info;
        }
        let (lwork, lrwork, liwork) = (wq[0].re as i32, rwq[0] as i32, iwq[0]);
        let mut work = vec![c64::new(0.0, 0.0); lwork.max(1) as usize];
        let mut rwork = vec![0.0f64; lrwork.max(1) as usize];
        let mut iwork = vec![0i32; liwork.max(1) as usize];
        // SAFETY: see the comment above the macro; workspaces sized by the query.
        unsafe {
            lapack::zheevd(
                b'V', b'L', n, a, lda, w, &mut work, lwork, &mut rwork, lrwork, &mut iwork, liwork,
                &mut info,
            )
        };
        info
    }
}

fn trans(adj: bool) -> u8 {
    if adj {
        b'C'
    } else {
        b'N'
    }
}

pub(crate) fn gemm<T: LapackScalar>(
    mut c: MatMut<'_, T>,
    accumulate: bool,
    a: MatRef<'_, T>,
    adj_a: bool,
    b: MatRef<'_, T>,
    adj_b: bool,
) {
    init();
    let (m, n) = (c.nrows(), c.ncols());
    let k = if adj_a { a.nrows() } else { a.ncols() };
    if m == 0 || n == 0 {
        return;
    }
    let (pa, pb) = (pack(a), pack(b));
    let mut pc = if accumulate {
        pack(c.as_ref())
    } else {
        vec![T::from_f64(0.0); m * n]
    };
    let beta = T::from_f64(if accumulate { 1.0 } else { 0.0 });
    T::gemm_raw(
        trans(adj_a),
        trans(adj_b),
        dim(m),
        dim(n),
        dim(k),
        &pa,
        ld(a.nrows()),
        &pb,
        ld(b.nrows()),
        beta,
        &mut pc,
        ld(m),
    );
    unpack(c.as_mut(), &pc);
}

pub(crate) fn cholesky<T: LapackScalar>(h: MatRef<'_, T>) -> Result<Mat<T>, LinalgError> {
    init();
    let n = h.nrows();
    let mut a = pack(h);
    let info = T::potrf_raw(dim(n), &mut a, ld(n));
    if info != 0 {
        return Err(LinalgError(format!(
            "Cholesky: matrix not positive definite (potrf info {info})"
        )));
    }
    let ldn = n.max(1);
    Ok(Mat::from_fn(n, n, |i, j| {
        if i >= j {
            a[i + j * ldn]
        } else {
            T::from_f64(0.0)
        }
    }))
}

pub(crate) fn tri_inverse<T: LapackScalar>(l: MatRef<'_, T>) -> Mat<T> {
    init();
    let n = l.nrows();
    let mut a = pack(l);
    let info = T::trtri_raw(dim(n), &mut a, ld(n));
    assert_eq!(
        info, 0,
        "planewave-linalg: trtri on a singular triangular matrix"
    );
    let ldn = n.max(1);
    Mat::from_fn(n, n, |i, j| {
        if i >= j {
            a[i + j * ldn]
        } else {
            T::from_f64(0.0)
        }
    })
}

pub(crate) fn trmm_right<T: LapackScalar>(mut x: MatMut<'_, T>, l: MatRef<'_, T>, adj: bool) {
    init();
    let (m, n) = (x.nrows(), x.ncols());
    if m == 0 || n == 0 {
        return;
    }
    let (pl, mut px) = (pack(l), pack(x.as_ref()));
    T::trmm_raw(b'L', trans(adj), dim(m), dim(n), &pl, ld(n), &mut px, ld(m));
    unpack(x.as_mut(), &px);
}

pub(crate) fn trsm_right<T: LapackScalar>(mut x: MatMut<'_, T>, l: MatRef<'_, T>, adj: bool) {
    init();
    let (m, n) = (x.nrows(), x.ncols());
    if m == 0 || n == 0 {
        return;
    }
    let (pl, mut px) = (pack(l), pack(x.as_ref()));
    T::trsm_raw(b'L', trans(adj), dim(m), dim(n), &pl, ld(n), &mut px, ld(m));
    unpack(x.as_mut(), &px);
}

pub(crate) fn upper_matmul_acc<T: LapackScalar>(
    mut c: MatMut<'_, T>,
    a: MatRef<'_, T>,
    u: MatRef<'_, T>,
    strict: bool,
) {
    init();
    let (m, n) = (a.nrows(), u.ncols());
    if m == 0 || n == 0 {
        return;
    }
    let zero = T::from_f64(0.0);
    let uu = Mat::from_fn(n, n, |i, j| {
        if i < j || (i == j && !strict) {
            u[(i, j)]
        } else {
            zero
        }
    });
    let (pu, mut pa) = (pack(uu.as_ref()), pack(a));
    T::trmm_raw(b'U', b'N', dim(m), dim(n), &pu, ld(n), &mut pa, ld(m));
    for j in 0..n {
        for i in 0..m {
            let v = pa[i + j * m];
            c[(i, j)] += v;
        }
    }
}

pub(crate) fn hermitian_eigen<T: LapackScalar>(
    h: MatRef<'_, T>,
) -> Result<(Vec<f64>, Mat<T>), LinalgError> {
    init();
    let n = h.nrows();
    let mut a = pack(h);
    let mut w = vec![0.0; n];
    let info = T::heevd_raw(dim(n), &mut a, ld(n), &mut w);
    if info != 0 {
        return Err(LinalgError(format!(
            "Hermitian eigensolver: heevd info {info}"
        )));
    }
    let ldn = n.max(1);
    Ok((w, Mat::from_fn(n, n, |i, j| a[i + j * ldn])))
}
