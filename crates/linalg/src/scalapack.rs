//! The subspace eigenproblem distributed over a 2-D block-cyclic grid through ScaLAPACK
//! (feature `scalapack`: Debian's `libscalapack-openmpi-dev`).
//!
//! Contract: [`scalapack_eigen`] has the contract of
//! [`redundant_eigen`](crate::subspace::redundant_eigen) — collective over the group, the
//! input taken from rank 0 (other ranks' matrices are only checked for shape, lower triangle
//! read), the lowest `n` eigenpairs (values ascending) returned on every rank with identical
//! bits, a failure returned as an error on every rank (ranks where ScaLAPACK itself failed add
//! its INFO) — but the solve itself is
//! ScaLAPACK's divide and conquer (`pzheevd` for `c64`, `pdsyevd` for `f64`, workspace
//! query first) on a [`BlacsGrid`] of the group, in square blocks of [`BLOCK_SIZE`]. Rank 0
//! scatters each grid rank's local blocks of the matrix; the eigenvector columns below `n`
//! are assembled on every rank by one all-gather (pure data movement, so every rank holds
//! the same bits) and the eigenvalues are broadcast from rank 0. Ranks outside the grid and
//! grid ranks that own no block take part in the collectives with empty buffers. The group
//! must be an MPI communicator (other back ends give an error).

use crate::blacs::BlacsGrid;
use crate::block_cyclic::BlockCyclic;
use crate::dense::HermitianEigen;
use crate::scalar::{LinalgError, Scalar};
use faer::{c64, Mat, MatRef};
use planewave_comm::{CommClass, CommExt, Communicator, Kind};
use std::os::raw::{c_char, c_int};

/// Block size of the block-cyclic distribution (rows and columns).
pub const BLOCK_SIZE: usize = 32;

// Fortran entry points of ScaLAPACK (LP64: default INTEGER is 32-bit). Character arguments
// are followed by their hidden lengths (gfortran passes them as `size_t` after all others).
extern "C" {
    fn numroc_(
        n: *const c_int,
        nb: *const c_int,
        iproc: *const c_int,
        isrcproc: *const c_int,
        nprocs: *const c_int,
    ) -> c_int;
    #[allow(clippy::too_many_arguments)]
    fn descinit_(
        desc: *mut c_int,
        m: *const c_int,
        n: *const c_int,
        mb: *const c_int,
        nb: *const c_int,
        irsrc: *const c_int,
        icsrc: *const c_int,
        ictxt: *const c_int,
        lld: *const c_int,
        info: *mut c_int,
    );
    #[allow(clippy::too_many_arguments)]
    fn pzheevd_(
        jobz: *const c_char,
        uplo: *const c_char,
        n: *const c_int,
        a: *mut c64,
        ia: *const c_int,
        ja: *const c_int,
        desca: *const c_int,
        w: *mut f64,
        z: *mut c64,
        iz: *const c_int,
        jz: *const c_int,
        descz: *const c_int,
        work: *mut c64,
        lwork: *const c_int,
        rwork: *mut f64,
        lrwork: *const c_int,
        iwork: *mut c_int,
        liwork: *const c_int,
        info: *mut c_int,
        jobz_len: usize,
        uplo_len: usize,
    );
    #[allow(clippy::too_many_arguments)]
    fn pdsyevd_(
        jobz: *const c_char,
        uplo: *const c_char,
        n: *const c_int,
        a: *mut f64,
        ia: *const c_int,
        ja: *const c_int,
        desca: *const c_int,
        w: *mut f64,
        z: *mut f64,
        iz: *const c_int,
        jz: *const c_int,
        descz: *const c_int,
        work: *mut f64,
        lwork: *const c_int,
        iwork: *mut c_int,
        liwork: *const c_int,
        info: *mut c_int,
        jobz_len: usize,
        uplo_len: usize,
    );
}

fn to_int(x: usize, what: &str) -> Result<c_int, LinalgError> {
    c_int::try_from(x).map_err(|_| LinalgError(format!("{what} {x} exceeds ScaLAPACK's INTEGER")))
}

/// `NUMROC` from the library (checked against [`BlockCyclic`]'s own arithmetic).
fn numroc(n: c_int, nb: c_int, iproc: c_int, nprocs: c_int) -> usize {
    let zero: c_int = 0;
    // SAFETY: all five arguments point to live, initialised locals that NUMROC only reads.
    let r = unsafe { numroc_(&n, &nb, &iproc, &zero, &nprocs) };
    r.max(0) as usize
}

/// The imaginary part of `x` (0 for reals), from `Scalar`'s operations.
fn imag<T: Scalar>(x: T) -> f64 {
    (x * T::from_re_im(0.0, -1.0)).real()
}

/// A grid rank's local array: the ScaLAPACK element type and buffers.
enum Local {
    Real(Vec<f64>),
    Complex(Vec<c64>),
}

/// Solve on the grid; returns (all eigenvalues, local eigenvector array) or ScaLAPACK's INFO.
fn solve_local(
    grid: &BlacsGrid,
    bc: &BlockCyclic,
    a: Local,
    prow: usize,
    pcol: usize,
) -> Result<(Vec<f64>, Local), String> {
    let n = to_int(bc.dim, "dimension").map_err(|e| e.0)?;
    let nb = to_int(bc.nb, "block size").map_err(|e| e.0)?;
    let (locr, locc) = (bc.local_rows(prow), bc.local_cols(pcol));
    let lib = (
        numroc(n, nb, prow as c_int, bc.pr as c_int),
        numroc(n, nb, pcol as c_int, bc.pc as c_int),
    );
    if lib != (locr, locc) {
        return Err(format!(
            "NUMROC gives a {}x{} local array, the layout {locr}x{locc}",
            lib.0, lib.1
        ));
    }
    let lld = to_int(bc.lld(prow), "leading dimension").map_err(|e| e.0)?;
    let ctxt = grid.context();
    let (zero, one) = (0 as c_int, 1 as c_int);
    let mut desc = [0 as c_int; 9];
    let mut info: c_int = 0;
    // SAFETY: `desc` is a writable array of the 9 integers DESCINIT fills; every other
    // argument points to a live local that it only reads; `info` is writable.
    unsafe {
        descinit_(
            desc.as_mut_ptr(),
            &n,
            &n,
            &nb,
            &nb,
            &zero,
            &zero,
            &ctxt,
            &lld,
            &mut info,
        )
    };
    if info != 0 {
        return Err(format!("DESCINIT failed (INFO = {info})"));
    }
    let local_len = bc.lld(prow) * locc.max(1);
    let mut w = vec![0.0f64; bc.dim];
    let (jobz, uplo) = (b'V' as c_char, b'L' as c_char);
    let desc_ptr = desc.as_ptr();
    match a {
        Local::Complex(mut a) => {
            a.resize(local_len, c64::new(0.0, 0.0));
            let mut z = vec![c64::new(0.0, 0.0); local_len];
            // One PZHEEVD call with the given workspaces; LWORK = LRWORK = LIWORK = -1 is the
            // workspace query, which writes the optimal sizes into the first elements.
            let mut call = |work: &mut [c64], rwork: &mut [f64], iwork: &mut [c_int], query| {
                let len = |v: usize| {
                    if query {
                        Ok(-1)
                    } else {
                        to_int(v, "workspace")
                    }
                };
                let (lw, lrw, liw) = (len(work.len())?, len(rwork.len())?, len(iwork.len())?);
                let mut info: c_int = 0;
                // SAFETY: `a` and `z` hold `lld * max(1, locc)` elements, the local array
                // `desc` describes (`desc_ptr` points into `desc`, alive for the whole function);
                // `w` holds `n`; `work`, `rwork`, `iwork` hold at least one element each (the
                // query) or exactly `lw`, `lrw`, `liw`; scalars are live locals; the hidden
                // character lengths are 1. Every grid rank makes the same calls.
                unsafe {
                    pzheevd_(
                        &jobz,
                        &uplo,
                        &n,
                        a.as_mut_ptr(),
                        &one,
                        &one,
                        desc_ptr,
                        w.as_mut_ptr(),
                        z.as_mut_ptr(),
                        &one,
                        &one,
                        desc_ptr,
                        work.as_mut_ptr(),
                        &lw,
                        rwork.as_mut_ptr(),
                        &lrw,
                        iwork.as_mut_ptr(),
                        &liw,
                        &mut info,
                        1,
                        1,
                    )
                };
                Ok::<c_int, LinalgError>(info)
            };
            let (mut wq, mut rq, mut iq) = ([c64::new(0.0, 0.0)], [0.0f64], [0 as c_int]);
            let info = call(&mut wq, &mut rq, &mut iq, true).map_err(|e| e.0)?;
            if info != 0 {
                return Err(format!("PZHEEVD workspace query: INFO = {info}"));
            }
            // The documented minima (ScaLAPACK 2.2 PZHEEVD) guard a short query answer.
            let (np, nq, dim) = (locr, locc, bc.dim);
            let pad = back_transform_pad(bc, np, nq);
            let lwork = (wq[0].re as usize).max(1) + pad;
            // RWORK carries PDSTEDC and its PDLASRT sort, whose need the query also misses.
            let lrwork = (rq[0] as usize).max(1 + 9 * dim + 3 * np * nq) + pad;
            let liwork = (iq[0].max(0) as usize).max(7 * dim + 8 * bc.pc + 2);
            let mut work = vec![c64::new(0.0, 0.0); lwork];
            let mut rwork = vec![0.0f64; lrwork];
            let mut iwork = vec![0 as c_int; liwork];
            let info = call(&mut work, &mut rwork, &mut iwork, false).map_err(|e| e.0)?;
            if info != 0 {
                return Err(format!("PZHEEVD failed: INFO = {info}"));
            }
            Ok((w, Local::Complex(z)))
        }
        Local::Real(mut a) => {
            a.resize(local_len, 0.0);
            let mut z = vec![0.0f64; local_len];
            // One PDSYEVD call (query with LWORK = LIWORK = -1), as for PZHEEVD above.
            let mut call = |work: &mut [f64], iwork: &mut [c_int], query| {
                let len = |v: usize| {
                    if query {
                        Ok(-1)
                    } else {
                        to_int(v, "workspace")
                    }
                };
                let (lw, liw) = (len(work.len())?, len(iwork.len())?);
                let mut info: c_int = 0;
                // SAFETY: as for PZHEEVD above — `a`, `z` hold the local array `desc`
                // describes, `w` holds `n`, `work` and `iwork` one element (query) or exactly
                // `lw`, `liw`.
                unsafe {
                    pdsyevd_(
                        &jobz,
                        &uplo,
                        &n,
                        a.as_mut_ptr(),
                        &one,
                        &one,
                        desc_ptr,
                        w.as_mut_ptr(),
                        z.as_mut_ptr(),
                        &one,
                        &one,
                        desc_ptr,
                        work.as_mut_ptr(),
                        &lw,
                        iwork.as_mut_ptr(),
                        &liw,
                        &mut info,
                        1,
                        1,
                    )
                };
                Ok::<c_int, LinalgError>(info)
            };
            let (mut wq, mut iq) = ([0.0f64], [0 as c_int]);
            let info = call(&mut wq, &mut iq, true).map_err(|e| e.0)?;
            if info != 0 {
                return Err(format!("PDSYEVD workspace query: INFO = {info}"));
            }
            let lwork = (wq[0] as usize).max(1) + back_transform_pad(bc, locr, locc);
            let liwork = (iq[0].max(0) as usize).max(7 * bc.dim + 8 * bc.pc + 2);
            let mut work = vec![0.0f64; lwork];
            let mut iwork = vec![0 as c_int; liwork];
            let info = call(&mut work, &mut iwork, false).map_err(|e| e.0)?;
            if info != 0 {
                return Err(format!("PDSYEVD failed: INFO = {info}"));
            }
            Ok((w, Local::Real(z)))
        }
    }
}

/// Extra `WORK` (and, for `PZHEEVD`, `RWORK`) for the back-transformation
/// (`PDORMTR`/`PZUNMTR`) and the eigenvector sort (`PDLASRT`) inside the divide and conquer
/// drivers. Their workspace query (ScaLAPACK 2.2.1) does not account for it when the
/// block size is large against the local array (e.g. `n = 5`, block 32: `PDORMTR` then
/// rejects `LWORK` — argument 16 — and the eigenvectors come back untransformed). The pad is
/// `PDORMTR`'s own minimum, `max(nb (nb - 1) / 2, (np + nq) nb) + nb^2`, plus the driver's
/// `5 n` of offsets, `PDLASRT`'s sort space and the documented minimum: about twice the
/// local array, negligible against the solve.
fn back_transform_pad(bc: &BlockCyclic, np: usize, nq: usize) -> usize {
    let nb = bc.nb;
    let ormtr = (nb * (nb - 1) / 2).max((np + nq + 2 * nb) * nb) + nb * nb + 5 * bc.dim;
    // PDLASRT inside PDSTEDC (the eigenvector sort) wants `max(n, np (nb + nq))` more, and
    // the driver's documented minimum counts `1 + 6 n + 2 np nq`.
    ormtr + bc.dim.max(np * (nb + nq)) + 1 + 6 * bc.dim + 2 * np * nq
}

/// Every rank's grid coordinates (`None` outside the grid), known on every rank.
fn all_coords(comm: &dyn Communicator, grid: &BlacsGrid) -> Vec<Option<(usize, usize)>> {
    let (pr, pc) = grid.shape();
    (0..comm.size())
        .map(|r| (r < pr * pc).then_some((r / pc, r % pc)))
        .collect()
}

/// The lowest `n` eigenpairs of the Hermitian `h` (lower triangle read) by ScaLAPACK over the
/// group, identical on every rank (see the module doc).
pub fn scalapack_eigen<T: Scalar>(
    comm: &dyn Communicator,
    h: MatRef<'_, T>,
    n: usize,
    class: CommClass,
) -> Result<HermitianEigen<T>, LinalgError> {
    let dim = h.nrows();
    if h.ncols() != dim {
        return Err(LinalgError(format!(
            "eigenproblem of a non-square {}x{} matrix",
            dim,
            h.ncols()
        )));
    }
    let n = n.min(dim);
    if dim == 0 {
        return Ok(HermitianEigen {
            values: Vec::new(),
            vectors: Mat::zeros(0, 0),
        });
    }
    let complex = match T::KIND {
        Kind::F64 => false,
        Kind::C64 => true,
        k => return Err(LinalgError(format!("ScaLAPACK solve of {k:?} elements"))),
    };
    let grid = BlacsGrid::new(comm)?;
    let (pr, pc) = grid.shape();
    let bc = BlockCyclic {
        dim,
        nb: BLOCK_SIZE,
        pr,
        pc,
    };
    let coords = all_coords(comm, &grid);
    let counts: Vec<usize> = coords
        .iter()
        .map(|c| c.map_or(0, |(r, q)| bc.local_rows(r) * bc.local_cols(q)))
        .collect();

    // Rank 0 deals out the local arrays (column-major, leading dimension = local rows), in
    // the element type itself: one scatter, one gather.
    let mut send = Vec::new();
    if comm.rank() == 0 {
        send.reserve(counts.iter().sum());
        for &(prow, pcol) in coords.iter().flatten() {
            for lj in 0..bc.local_cols(pcol) {
                let j = bc.global_col(lj, pcol);
                send.extend((0..bc.local_rows(prow)).map(|li| h[(bc.global_row(li, prow), j)]));
            }
        }
    }
    let local: Vec<T> = comm.scatterv(&send, &counts, 0, class);
    drop(send);

    // Solve on the grid ranks; every rank learns whether all succeeded.
    let mut outcome: Result<(Vec<f64>, Option<Local>), String> = Ok((vec![0.0; dim], None));
    if let Some((prow, pcol)) = grid.coords() {
        let a = if complex {
            Local::Complex(local.iter().map(|&x| c64::new(x.real(), imag(x))).collect())
        } else {
            Local::Real(local.iter().map(|&x| x.real()).collect())
        };
        outcome = solve_local(&grid, &bc, a, prow, pcol).map(|(w, z)| (w, Some(z)));
    }
    drop(local);
    let mut failed = [u64::from(outcome.is_err())];
    comm.allreduce_sum(&mut failed, class);
    let (mut values, z) = match outcome {
        Ok(v) if failed[0] == 0 => v,
        Ok(_) => {
            return Err(LinalgError(format!(
                "ScaLAPACK eigensolver failed on {} rank(s) of the group",
                failed[0]
            )))
        }
        Err(e) => return Err(LinalgError(format!("ScaLAPACK eigensolver: {e}"))),
    };
    drop(grid);

    // Every rank sends its local eigenvector columns below `n` (all local rows); the
    // all-gather puts them in rank order on every rank.
    let mut mine: Vec<T> = Vec::new();
    if let (Some((prow, pcol)), Some(z)) = (coords[comm.rank()], z) {
        let (locr, ld) = (bc.local_rows(prow), bc.lld(prow));
        let keep = bc.local_cols_below(pcol, n);
        let at = |li: usize, lj: usize| li + lj * ld;
        for lj in 0..keep {
            match &z {
                Local::Real(z) => mine.extend((0..locr).map(|li| T::from_f64(z[at(li, lj)]))),
                Local::Complex(z) => mine.extend((0..locr).map(|li| {
                    let v = z[at(li, lj)];
                    T::from_re_im(v.re, v.im)
                })),
            }
        }
    }
    let all = comm.allgatherv(&mine, class);
    let expected: usize = coords
        .iter()
        .flatten()
        .map(|&(prow, pcol)| bc.local_rows(prow) * bc.local_cols_below(pcol, n))
        .sum();
    if all.len() != expected {
        return Err(LinalgError(format!(
            "ScaLAPACK eigenvectors: gathered {} entries, layout accounts for {expected}",
            all.len()
        )));
    }
    let mut vectors = Mat::<T>::zeros(dim, n);
    let mut gathered = all.into_iter();
    for &(prow, pcol) in coords.iter().flatten() {
        for lj in 0..bc.local_cols_below(pcol, n) {
            let j = bc.global_col(lj, pcol);
            for (li, x) in (0..bc.local_rows(prow)).zip(&mut gathered) {
                vectors[(bc.global_row(li, prow), j)] = x;
            }
        }
    }
    // The eigenvalues as rank 0 has them (outside-grid ranks have none of their own).
    comm.broadcast(&mut values, 0, class);
    values.truncate(n);
    Ok(HermitianEigen { values, vectors })
}
