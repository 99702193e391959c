//! Crystal symmetry: space-group operations, k-point generation/reduction and
//! density symmetrisation.
//!
//! # Conventions
//!
//! * The lattice is given as ROWS `a1, a2, a3` (bohr); atomic positions and all
//!   operations are in FRACTIONAL (crystal) coordinates.
//! * A [`SymOp`] `{W|w}` acts on fractional positions as `x' = W x + w`
//!   (`W = rot`, column-vector convention, `rot[i][j]` = row `i`, column `j`).
//! * k-points and G vectors are in fractional reciprocal coordinates
//!   (`k = k_1 b1 + k_2 b2 + k_3 b3`, phases `exp(2 pi i k.x)` with `x` fractional).
//!   Under `{W|w}` they transform with the inverse transpose: `k' = W^{-T} k`
//!   (this keeps `k'.(W x) = k.x`). See [`SymOp::rotate_k`].
//! * A scalar field is invariant under `{W|w}` when `rho(W x + w) = rho(x)`; in
//!   G-space this reads `rho(G) = rho(W^T G) exp(-2 pi i G.w)`.

mod kpoints;
mod ops;
mod symmetrize;
mod tensors;

pub use self::kpoints::{monkhorst_pack, reduce_kpoints, reduce_kpoints_with_map, KpointSet};
pub use self::ops::{dataset, find_symmetries};
pub use self::symmetrize::DensitySymmetrizer;
pub(crate) use self::tensors::image;
pub use self::tensors::{
    cartesian_rotation, harmonic_rotation, symmetrize_forces, symmetrize_stress,
};

/// A space-group operation acting on FRACTIONAL coordinates: `x' = rot * x + trans`.
#[derive(Clone, Debug, PartialEq)]
pub struct SymOp {
    /// Integer rotation matrix in the crystal basis (`rot[i][j]`: row `i`, column `j`).
    pub rot: [[i32; 3]; 3],
    /// Fractional translation, in `[0, 1)` for operations returned by
    /// [`find_symmetries`].
    pub trans: [f64; 3],
}

/// The 3x3 integer identity matrix.
pub(crate) const IDENTITY: [[i32; 3]; 3] = [[1, 0, 0], [0, 1, 0], [0, 0, 1]];

impl SymOp {
    /// The identity operation.
    pub fn identity() -> Self {
        Self {
            rot: IDENTITY,
            trans: [0.0; 3],
        }
    }

    /// Apply the operation to a fractional position: `W x + w` (not wrapped).
    pub fn apply(&self, x: &[f64; 3]) -> [f64; 3] {
        let mut out = self.trans;
        for (i, o) in out.iter_mut().enumerate() {
            for (j, xj) in x.iter().enumerate() {
                *o += f64::from(self.rot[i][j]) * xj;
            }
        }
        out
    }

    /// Inverse of the rotation part (`None` if `|det W| != 1`).
    pub fn rot_inverse(&self) -> Option<[[i32; 3]; 3]> {
        int_inverse(&self.rot)
    }

    /// Rotate a fractional reciprocal vector (k-point): `k' = W^{-T} k`.
    /// Returns `None` if the rotation is not unimodular.
    pub fn rotate_k(&self, k: &[f64; 3]) -> Option<[f64; 3]> {
        let inv = self.rot_inverse()?;
        // (W^{-T} k)_i = sum_j (W^{-1})_{j i} k_j
        let mut out = [0.0; 3];
        for (i, o) in out.iter_mut().enumerate() {
            for (j, kj) in k.iter().enumerate() {
                *o += f64::from(inv[j][i]) * kj;
            }
        }
        Some(out)
    }
}

/// Determinant of an integer 3x3 matrix (in i64 to avoid overflow).
pub(crate) fn int_det(m: &[[i32; 3]; 3]) -> i64 {
    let e = |i: usize, j: usize| i64::from(m[i][j]);
    e(0, 0) * (e(1, 1) * e(2, 2) - e(1, 2) * e(2, 1))
        - e(0, 1) * (e(1, 0) * e(2, 2) - e(1, 2) * e(2, 0))
        + e(0, 2) * (e(1, 0) * e(2, 1) - e(1, 1) * e(2, 0))
}

/// Inverse of a unimodular integer matrix (`None` unless `det = +-1`).
pub(crate) fn int_inverse(m: &[[i32; 3]; 3]) -> Option<[[i32; 3]; 3]> {
    let det = int_det(m);
    if det != 1 && det != -1 {
        return None;
    }
    let e = |i: usize, j: usize| i64::from(m[i][j]);
    let mut inv = [[0i32; 3]; 3];
    for (i, row) in inv.iter_mut().enumerate() {
        for (j, v) in row.iter_mut().enumerate() {
            // inv[i][j] = cofactor(j, i) / det
            let (r0, r1) = ((j + 1) % 3, (j + 2) % 3);
            let (c0, c1) = ((i + 1) % 3, (i + 2) % 3);
            let cof = e(r0, c0) * e(r1, c1) - e(r0, c1) * e(r1, c0);
            *v = i32::try_from(cof * det).ok()?;
        }
    }
    Some(inv)
}

/// Transpose of an integer 3x3 matrix.
pub(crate) fn int_transpose(m: &[[i32; 3]; 3]) -> [[i32; 3]; 3] {
    let mut t = [[0i32; 3]; 3];
    for (i, row) in m.iter().enumerate() {
        for (j, v) in row.iter().enumerate() {
            t[j][i] = *v;
        }
    }
    t
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integer_inverse_roundtrip() {
        let m = [[0, 1, 0], [-1, 1, 0], [0, 0, -1]];
        let inv = int_inverse(&m).unwrap_or(IDENTITY);
        for (i, mi) in m.iter().enumerate() {
            for j in 0..3 {
                let s: i32 = mi.iter().zip(&inv).map(|(a, row)| a * row[j]).sum();
                assert_eq!(s, i32::from(i == j));
            }
        }
        assert!(int_inverse(&[[2, 0, 0], [0, 1, 0], [0, 0, 1]]).is_none());
    }

    #[test]
    fn rotate_k_preserves_phase() {
        let op = SymOp {
            rot: [[0, 1, 0], [-1, 1, 0], [0, 0, -1]],
            trans: [0.1, 0.2, 0.3],
        };
        let k = [0.3, -0.2, 0.7];
        let x = [0.11, 0.42, -0.3];
        let kp = op.rotate_k(&k).unwrap_or([0.0; 3]);
        let wx = SymOp {
            rot: op.rot,
            trans: [0.0; 3],
        }
        .apply(&x);
        let a: f64 = (0..3).map(|i| k[i] * x[i]).sum();
        let b: f64 = (0..3).map(|i| kp[i] * wx[i]).sum();
        assert!((a - b).abs() < 1e-14);
    }
}
