//! Replicated subspace matrices: the small (nbands x nbands) problems every rank of a group
//! needs the same answer to.
//!
//! Contract: [`redundant_eigen`] and [`redundant_cholesky`] solve on rank 0 and broadcast, so
//! every rank gets bit-identical results even when ranks run with different thread counts
//! (faer's threaded kernels need not give the same bits for different rayon pools, and MPI
//! ranks on different nodes may have different pools). A failure on rank 0 (not positive
//! definite, no convergence) is broadcast too and returned as an error on every rank. The
//! input matrix is taken from rank 0 (other ranks' copies are only checked for shape).
//! A distributed (ScaLAPACK/ELPA) solve is not implemented.

use crate::dense::{hermitian_eigen_lowest, HermitianEigen};
use crate::partition::{mat_to_vec, vec_to_mat};
use crate::scalar::{LinalgError, Scalar};
use faer::{Mat, MatRef};
use planewave_comm::{CommClass, CommExt, Communicator};

/// Copy rank `root`'s `m` to every rank (every rank passes a matrix of the same shape).
pub fn broadcast_mat<T: Scalar>(
    comm: &dyn Communicator,
    m: &mut Mat<T>,
    root: usize,
    class: CommClass,
) {
    if comm.size() == 1 {
        return;
    }
    let mut v = mat_to_vec(m.as_ref());
    comm.broadcast(&mut v, root, class);
    *m = vec_to_mat(&v, m.nrows(), m.ncols());
}

/// Broadcast rank 0's outcome: `Ok` when it succeeded, its message otherwise.
fn broadcast_status(
    comm: &dyn Communicator,
    status: Result<(), LinalgError>,
    class: CommClass,
) -> Result<(), LinalgError> {
    let mut flag = [u64::from(status.is_err())];
    comm.broadcast(&mut flag, 0, class);
    match (flag[0], status) {
        (0, _) => Ok(()),
        (_, Err(e)) => Err(e),
        (_, Ok(())) => Err(LinalgError("failed on rank 0 of the group".into())),
    }
}

/// The lowest `n` eigenpairs of the Hermitian `h` (lower triangle read), identical on every
/// rank.
pub fn redundant_eigen<T: Scalar>(
    comm: &dyn Communicator,
    h: MatRef<'_, T>,
    n: usize,
    class: CommClass,
) -> Result<HermitianEigen<T>, LinalgError> {
    let dim = h.nrows();
    let n = n.min(dim);
    let mut out = HermitianEigen {
        values: vec![0.0; n],
        vectors: Mat::zeros(dim, n),
    };
    let status = if comm.rank() == 0 {
        hermitian_eigen_lowest(h, n).map(|e| out = e)
    } else {
        Ok(())
    };
    broadcast_status(comm, status, class)?;
    if comm.size() > 1 {
        comm.broadcast(&mut out.values, 0, class);
        broadcast_mat(comm, &mut out.vectors, 0, class);
    }
    Ok(out)
}

/// Cholesky factor `L` of the Hermitian positive definite `s = L L^H` and, with `inverse`,
/// also `L^-1`; identical on every rank.
pub fn redundant_cholesky<T: Scalar>(
    comm: &dyn Communicator,
    s: MatRef<'_, T>,
    inverse: bool,
    class: CommClass,
) -> Result<(Mat<T>, Option<Mat<T>>), LinalgError> {
    let n = s.nrows();
    let mut l = Mat::<T>::zeros(n, n);
    let mut inv = inverse.then(|| Mat::<T>::zeros(n, n));
    let status = if comm.rank() == 0 {
        crate::dense::cholesky(s).map(|f| {
            if let Some(i) = inv.as_mut() {
                *i = crate::dense::triangular_inverse(f.as_ref());
            }
            l = f;
        })
    } else {
        Ok(())
    };
    broadcast_status(comm, status, class)?;
    broadcast_mat(comm, &mut l, 0, class);
    if let Some(i) = inv.as_mut() {
        broadcast_mat(comm, i, 0, class);
    }
    Ok((l, inv))
}
