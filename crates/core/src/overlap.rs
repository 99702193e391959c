//! The overlap of ultrasoft pseudopotentials, `S = 1 + Σ_ij |β_i⟩ q_ij ⟨β_j|`, and its
//! square roots, which turn the generalised eigenproblem `H ψ = ε S ψ` into a standard one
//! for the eigensolvers: `H̃ φ = ε φ` with `H̃ = S^{-1/2} H S^{-1/2}` and `φ = S^{1/2} ψ`.
//! Every eigensolver, band-distributed or not, then works unchanged, and its orthonormal
//! φ give S-orthonormal ψ.
//!
//! Contract: with the projectors B (plane waves × nproj) of one k-point and their Gram
//! matrix `G = B^H B`, S is the identity off the span of B, so
//! `S^p = 1 + B X_p B^H`, `X_p = G^{-1/2} ((1 + G^{1/2} q G^{1/2})^p - 1) G^{-1/2}`,
//! exact for every power p. [`OverlapRoots`] holds `X_{1/2}` and `X_{-1/2}`, two small
//! matrices per k-point; an application costs a projection and a GEMM, as the nonlocal
//! potential does. S must be positive definite (q's eigenvalues above -1 on the span):
//! [`OverlapRoots::new`] says so when it is not.

use crate::bands::BandScalar;
use planewave_linalg::{hermitian_eigen, matmul, Mat, MatMut, MatRef};

/// An overlap operator `S = 1 + B q B^H` on the band blocks of one k-point.
pub trait OverlapOperator<T: BandScalar>: Sync {
    /// `out += (S^p - 1) psi` for `p` = 1/2 (`inverse` false) or -1/2 (`inverse` true).
    /// Collective on the k-point's G-vector group.
    fn root_add(&self, inverse: bool, psi: MatRef<'_, T>, out: MatMut<'_, T>);

    /// `S^p psi` as a new matrix (p = ±1/2 as in [`OverlapOperator::root_add`]).
    fn root(&self, inverse: bool, psi: MatRef<'_, T>) -> Mat<T> {
        let mut out = psi.to_owned();
        self.root_add(inverse, psi, out.as_mut());
        out
    }
}

/// The small matrices of `S^{1/2}` and `S^{-1/2}` at one k-point (see the module doc).
#[derive(Debug, Clone)]
pub struct OverlapRoots<T: BandScalar> {
    /// `X_{1/2}`.
    pub sqrt: Mat<T>,
    /// `X_{-1/2}`.
    pub inv_sqrt: Mat<T>,
}

impl<T: BandScalar> OverlapRoots<T> {
    /// The roots from the projectors' Gram matrix `gram` and the coupling `q` (both nproj ×
    /// nproj, Hermitian); an error when S is not positive definite or the projectors are
    /// linearly dependent.
    pub fn new(gram: &Mat<T>, q: &Mat<T>) -> Result<Self, String> {
        let (g_half, g_inv_half) = (
            hermitian_power(gram, 0.5, "projector Gram matrix")?,
            hermitian_power(gram, -0.5, "projector Gram matrix")?,
        );
        let n = q.nrows();
        let mut m = matmul(
            g_half.as_ref(),
            matmul(q.as_ref(), g_half.as_ref()).as_ref(),
        );
        for i in 0..n {
            m[(i, i)] += T::from_f64(1.0);
        }
        let x = |p: f64| -> Result<Mat<T>, String> {
            let mut mp = hermitian_power(&m, p, "overlap S")?;
            for i in 0..n {
                mp[(i, i)] -= T::from_f64(1.0);
            }
            let inner = matmul(mp.as_ref(), g_inv_half.as_ref());
            Ok(matmul(g_inv_half.as_ref(), inner.as_ref()))
        };
        Ok(Self {
            sqrt: x(0.5)?,
            inv_sqrt: x(-0.5)?,
        })
    }

    /// `X_p` for p = 1/2 or, with `inverse`, -1/2.
    pub fn of(&self, inverse: bool) -> &Mat<T> {
        if inverse {
            &self.inv_sqrt
        } else {
            &self.sqrt
        }
    }
}

/// `A^p` of a Hermitian positive definite `a`, from its eigenvectors; an error naming `what`
/// when an eigenvalue is not positive (relative to the largest).
pub(crate) fn hermitian_power<T: BandScalar>(
    a: &Mat<T>,
    p: f64,
    what: &str,
) -> Result<Mat<T>, String> {
    let e = hermitian_eigen(a.as_ref()).map_err(|e| format!("{what}: {e}"))?;
    let top = e.values.iter().fold(0.0_f64, |m, v| m.max(v.abs()));
    if let Some(low) = e.values.iter().find(|&&v| v <= 1e-14 * top) {
        return Err(format!(
            "the {what} is not positive definite (eigenvalue {low:.3e} of at most {top:.3e})"
        ));
    }
    let v = &e.vectors;
    let scaled = Mat::from_fn(v.nrows(), v.ncols(), |i, j| {
        v[(i, j)].scale(e.values[j].powf(p))
    });
    let vh = Mat::from_fn(v.ncols(), v.nrows(), |i, j| v[(j, i)].cj());
    Ok(matmul(scaled.as_ref(), vh.as_ref()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use num_complex::Complex64;
    use planewave_linalg::overlap;

    /// A small S = 1 + B q B^H with random B (n × k) and a q that keeps S positive definite.
    fn example(n: usize, k: usize) -> (Mat<Complex64>, Mat<Complex64>) {
        let mut seed = 7_u64;
        let mut rand = move || {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((seed >> 11) as f64 / (1u64 << 53) as f64) - 0.5
        };
        let b = Mat::from_fn(n, k, |_, _| Complex64::new(rand(), rand()));
        let mut q = Mat::from_fn(k, k, |_, _| Complex64::new(0.02 * rand(), 0.02 * rand()));
        q = Mat::from_fn(k, k, |i, j| (q[(i, j)] + q[(j, i)].conj()) * 0.5);
        (b, q)
    }

    fn apply(b: &Mat<Complex64>, x: &Mat<Complex64>, psi: &Mat<Complex64>) -> Mat<Complex64> {
        let c = overlap(b.as_ref(), psi.as_ref());
        let mut out = psi.clone();
        let add = matmul(b.as_ref(), matmul(x.as_ref(), c.as_ref()).as_ref());
        for j in 0..out.ncols() {
            for i in 0..out.nrows() {
                out[(i, j)] += add[(i, j)];
            }
        }
        out
    }

    #[test]
    fn the_roots_square_to_s_and_invert_each_other() {
        let (b, q) = example(30, 6);
        let gram = overlap(b.as_ref(), b.as_ref());
        let roots = OverlapRoots::new(&gram, &q).unwrap();
        let psi = example(30, 3).0;
        let s_psi = apply(&b, &q, &psi);
        let twice = apply(&b, &roots.sqrt, &apply(&b, &roots.sqrt, &psi));
        let back = apply(&b, &roots.inv_sqrt, &apply(&b, &roots.sqrt, &psi));
        for j in 0..3 {
            for i in 0..30 {
                assert!((twice[(i, j)] - s_psi[(i, j)]).norm() < 1e-12);
                assert!((back[(i, j)] - psi[(i, j)]).norm() < 1e-12);
            }
        }
    }

    #[test]
    fn an_overlap_that_is_not_positive_is_refused() {
        let (b, _) = example(30, 6);
        let gram = overlap(b.as_ref(), b.as_ref());
        let q = Mat::from_fn(6, 6, |i, j| {
            Complex64::new(if i == j { -100.0 } else { 0.0 }, 0.0)
        });
        let e = OverlapRoots::new(&gram, &q).unwrap_err();
        assert!(e.contains("overlap S is not positive definite"), "{e}");
    }
}
