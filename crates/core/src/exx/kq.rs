//! The points k + q of exact exchange and where their orbitals come from (QE's
//! `exx_grid_init`): for every computed k-point k and every q of the Γ-centred
//! `nq1 x nq2 x nq3` grid, k' = k + q is the image of an irreducible k-point p under a
//! space-group operation `{W|w}` (k -> W^{-T} k) and possibly time reversal (k -> -k), up to
//! a reciprocal-lattice vector G0.
//!
//! With `psi'(x) = psi(W^{-1}(x - w))` (x fractional), the plane wave p + G of `psi_p` becomes
//! `W^{-T}(p + G)` with the factor `e^{-2 pi i W^{-T}(p + G) . w}`; time reversal conjugates the
//! coefficients and negates the wave vectors. So with `k' = s W^{-T} p + G0` (s = +-1), the
//! periodic part of `psi_k'` has at Miller index `s W^{-T} G - G0` the coefficient
//! `c_p(G) e^{-2 pi i W^{-T}(p + G) . w}` (conjugated when s = -1).

use crate::symmetry::SymOp;

/// Tolerance (fractional reciprocal units) for two k-points to be the same.
const K_TOL: f64 = 1e-6;

/// Where the orbitals of one k' = k + q come from.
#[derive(Clone, Debug, PartialEq)]
pub struct Image {
    /// q (fractional reciprocal coordinates, on the q grid).
    pub q: [f64; 3],
    /// The irreducible k-point p (index into the basis' k-points).
    pub source: usize,
    /// `W^{-T}` of the operation (acting on fractional reciprocal vectors).
    pub rot_k: [[i32; 3]; 3],
    /// The operation's translation `w`.
    pub trans: [f64; 3],
    /// Whether time reversal follows the operation (s = -1).
    pub time_reversal: bool,
    /// `G0 = k' - s W^{-T} p`.
    pub g0: [i32; 3],
}

impl Image {
    /// Whether q = 0: [`images`] then finds k itself under the identity (no rotation, phase
    /// or shift), the operations being tried identity first.
    pub fn is_identity(&self) -> bool {
        self.q == [0.0; 3]
    }

    /// The periodic part's Miller index and coefficient at k' of the plane wave `m` of p with
    /// coefficient `c` (see the module doc).
    pub fn map(
        &self,
        p: [f64; 3],
        m: [i32; 3],
        c: num_complex::Complex64,
    ) -> ([i32; 3], num_complex::Complex64) {
        let rm = mat_vec_i(&self.rot_k, m);
        let rp = mat_vec_f(&self.rot_k, p);
        let phase: f64 = (0..3)
            .map(|i| (rp[i] + f64::from(rm[i])) * self.trans[i])
            .sum::<f64>();
        let z = c * num_complex::Complex64::from_polar(1.0, -2.0 * std::f64::consts::PI * phase);
        let s = if self.time_reversal { -1 } else { 1 };
        let g = [0, 1, 2].map(|i| s * rm[i] - self.g0[i]);
        (g, if self.time_reversal { z.conj() } else { z })
    }
}

fn mat_vec_i(m: &[[i32; 3]; 3], v: [i32; 3]) -> [i32; 3] {
    [0, 1, 2].map(|i| (0..3).map(|j| m[i][j] * v[j]).sum())
}

fn mat_vec_f(m: &[[i32; 3]; 3], v: [f64; 3]) -> [f64; 3] {
    [0, 1, 2].map(|i| (0..3).map(|j| f64::from(m[i][j]) * v[j]).sum())
}

/// The Γ-centred q grid, fractional, last index fastest.
pub fn q_points(grid: [usize; 3]) -> Vec<[f64; 3]> {
    let [n1, n2, n3] = grid;
    let mut out = Vec::with_capacity(n1 * n2 * n3);
    for i in 0..n1 {
        for j in 0..n2 {
            for k in 0..n3 {
                out.push([
                    i as f64 / n1 as f64,
                    j as f64 / n2 as f64,
                    k as f64 / n3 as f64,
                ]);
            }
        }
    }
    out
}

/// The image of every k + q (q on `grid`) among the irreducible k-points `irreducible` under
/// `ops` and time reversal; an error naming k + q when it is none of them (the q grid is not
/// a sub-grid of the k grid).
pub fn images(
    k: [f64; 3],
    grid: [usize; 3],
    irreducible: &[[f64; 3]],
    ops: &[SymOp],
) -> Result<Vec<Image>, String> {
    q_points(grid)
        .into_iter()
        .map(|q| {
            let kq = [k[0] + q[0], k[1] + q[1], k[2] + q[2]];
            find(kq, irreducible, ops)
                .map(|(source, rot_k, trans, time_reversal, g0)| Image {
                    q,
                    source,
                    rot_k,
                    trans,
                    time_reversal,
                    g0,
                })
                .ok_or_else(|| {
                    format!(
                        "k + q = ({:.4}, {:.4}, {:.4}) (k = ({:.4}, {:.4}, {:.4}), q on the {}x{}x{} grid) is not a symmetry image of the computed k-points: the q grid must divide the k grid",
                        kq[0], kq[1], kq[2], k[0], k[1], k[2], grid[0], grid[1], grid[2]
                    )
                })
        })
        .collect()
}

type Found = (usize, [[i32; 3]; 3], [f64; 3], bool, [i32; 3]);

/// The first (point, operation, sign) with `kq = s W^{-T} p + G0`: the identity first, then
/// every operation, each without and then with time reversal.
fn find(kq: [f64; 3], irreducible: &[[f64; 3]], ops: &[SymOp]) -> Option<Found> {
    for op in ops {
        let inv = op.rot_inverse()?;
        let rot_k = [0, 1, 2].map(|i| [0, 1, 2].map(|j| inv[j][i]));
        for tr in [false, true] {
            let s = if tr { -1.0 } else { 1.0 };
            for (p, pk) in irreducible.iter().enumerate() {
                let r = mat_vec_f(&rot_k, *pk);
                let d = [0, 1, 2].map(|i| kq[i] - s * r[i]);
                let g0 = d.map(|x| x.round() as i32);
                if (0..3).all(|i| (d[i] - f64::from(g0[i])).abs() < K_TOL) {
                    return Some((p, rot_k, op.trans, tr, g0));
                }
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::symmetry::{find_symmetries, monkhorst_pack, reduce_kpoints};

    fn silicon_ops() -> Vec<SymOp> {
        let a = 5.13;
        let lattice = [[0.0, a, a], [a, 0.0, a], [a, a, 0.0]];
        find_symmetries(&lattice, &[[0.0; 3], [0.25; 3]], &[0, 0], 1e-5).unwrap()
    }

    #[test]
    fn every_k_plus_q_of_a_sub_grid_has_an_image() {
        let ops = silicon_ops();
        for (kgrid, qgrid) in [
            ([2, 2, 2], [2, 2, 2]),
            ([4, 4, 4], [2, 2, 2]),
            ([3, 3, 3], [3, 3, 3]),
        ] {
            let ibz = reduce_kpoints(&monkhorst_pack(kgrid, [false; 3]), &ops, true).kpoints;
            for k in &ibz {
                let im = images(*k, qgrid, &ibz, &ops).unwrap();
                assert_eq!(im.len(), qgrid.iter().product::<usize>());
                for (x, q) in im.iter().zip(q_points(qgrid)) {
                    // s W^{-T} p + G0 = k + q.
                    let s = if x.time_reversal { -1.0 } else { 1.0 };
                    let r = mat_vec_f(&x.rot_k, ibz[x.source]);
                    for i in 0..3 {
                        let kq = s * r[i] + f64::from(x.g0[i]);
                        assert!((kq - k[i] - q[i]).abs() < 1e-9);
                    }
                }
                assert!(im[0].is_identity() && ibz[im[0].source] == *k);
            }
        }
        // A q grid finer than the k grid has points outside it.
        let ibz = reduce_kpoints(&monkhorst_pack([2, 2, 2], [false; 3]), &ops, true).kpoints;
        let e = images(ibz[0], [3, 3, 3], &ibz, &ops).unwrap_err();
        assert!(e.contains("the q grid must divide the k grid"), "{e}");
    }
}
