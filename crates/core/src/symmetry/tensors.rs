//! Symmetrisation of forces (one Cartesian vector per atom) and of the stress tensor with the
//! crystal's space-group operations: F_{S(a)} = R_S F_a and sigma = R_S sigma R_S^T, averaged
//! over the group. Quantities computed from the irreducible k-points carry the full symmetry
//! only after this step.

use super::SymOp;
use crate::clebsch_gordan::sphere_quadrature;
use crate::crystal::Crystal;
use crate::special::real_ylm;
use planewave_linalg::Mat;

/// The Cartesian matrix of an operation's rotation: `R = L W L^{-1}` with `L` the matrix whose
/// columns are the lattice vectors (`L^{-1} = B / 2 pi`, B with the reciprocal vectors as rows).
pub fn cartesian_rotation(op: &SymOp, crystal: &Crystal) -> [[f64; 3]; 3] {
    let mut r = [[0.0; 3]; 3];
    for (i, row) in r.iter_mut().enumerate() {
        for (j, x) in row.iter_mut().enumerate() {
            let mut s = 0.0;
            for k in 0..3 {
                for l in 0..3 {
                    s += crystal.lattice[k][i] * f64::from(op.rot[k][l]) * crystal.recip[l][j];
                }
            }
            *x = s / (2.0 * std::f64::consts::PI);
        }
    }
    r
}

/// The real-harmonic rotation `D^l(R)` of a Cartesian rotation `r`, with
/// `Y_lm(R u) = Σ_m' D_mm' Y_lm'(u)` for the harmonics of [`crate::special::real_ylm`] (index
/// `m + l`), as `D_mm' = ∫ Y_lm(R u) Y_lm'(u) dΩ` on a sphere quadrature exact for these
/// products (l ≤ 3 here).
pub fn harmonic_rotation(l: usize, r: &[[f64; 3]; 3]) -> Mat<f64> {
    assert!(l <= 3, "harmonic_rotation: l = {l} > 3");
    let n = 2 * l + 1;
    let mut d = Mat::<f64>::zeros(n, n);
    let (mut y, mut yr) = ([0.0; 7], [0.0; 7]);
    for (u, w) in sphere_quadrature() {
        let ru: [f64; 3] = std::array::from_fn(|i| (0..3).map(|j| r[i][j] * u[j]).sum());
        real_ylm(l, u, &mut y);
        real_ylm(l, ru, &mut yr);
        for m in 0..n {
            for mp in 0..n {
                d[(m, mp)] += w * yr[m] * y[mp];
            }
        }
    }
    d
}

/// The atom that `op` moves atom `a` onto (same species, positions equal modulo the lattice).
pub(crate) fn image(op: &SymOp, crystal: &Crystal, a: usize) -> Option<usize> {
    let x = op.apply(&crystal.atoms[a].frac);
    crystal.atoms.iter().position(|b| {
        b.species == crystal.atoms[a].species
            && (0..3).all(|i| {
                let d = x[i] - b.frac[i];
                (d - d.round()).abs() < 1e-5
            })
    })
}

/// Group average of per-atom Cartesian vectors. Returns the input unchanged when an operation
/// does not map the atoms onto each other (it is then not a symmetry of this crystal).
pub fn symmetrize_forces(ops: &[SymOp], crystal: &Crystal, forces: &[[f64; 3]]) -> Vec<[f64; 3]> {
    if ops.len() <= 1 {
        return forces.to_vec();
    }
    let mut out = vec![[0.0; 3]; forces.len()];
    let w = 1.0 / ops.len() as f64;
    for op in ops {
        let r = cartesian_rotation(op, crystal);
        for (a, f) in forces.iter().enumerate() {
            let Some(b) = image(op, crystal, a) else {
                return forces.to_vec();
            };
            for i in 0..3 {
                out[b][i] += w * (0..3).map(|j| r[i][j] * f[j]).sum::<f64>();
            }
        }
    }
    out
}

/// Group average `(1/N) sum_S R_S sigma R_S^T` of a Cartesian tensor.
pub fn symmetrize_stress(ops: &[SymOp], crystal: &Crystal, s: &[[f64; 3]; 3]) -> [[f64; 3]; 3] {
    if ops.is_empty() {
        return *s;
    }
    let mut out = [[0.0; 3]; 3];
    let w = 1.0 / ops.len() as f64;
    for op in ops {
        let r = cartesian_rotation(op, crystal);
        for (i, row) in out.iter_mut().enumerate() {
            for (j, o) in row.iter_mut().enumerate() {
                let mut t = 0.0;
                for k in 0..3 {
                    for l in 0..3 {
                        t += r[i][k] * s[k][l] * r[j][l];
                    }
                }
                *o += w * t;
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::crystal::Atom;

    #[test]
    fn harmonic_rotation_carries_the_harmonics_at_any_point() {
        // A rotation by 0.7 rad about (1, 2, 2)/3 (Rodrigues), not a crystal operation.
        let (k, t) = ([1.0 / 3.0, 2.0 / 3.0, 2.0 / 3.0], 0.7_f64);
        let kx = [[0.0, -k[2], k[1]], [k[2], 0.0, -k[0]], [-k[1], k[0], 0.0]];
        let r: [[f64; 3]; 3] = std::array::from_fn(|i| {
            std::array::from_fn(|j| {
                let id = if i == j { 1.0 } else { 0.0 };
                let kk: f64 = (0..3).map(|m| kx[i][m] * kx[m][j]).sum();
                id + t.sin() * kx[i][j] + (1.0 - t.cos()) * kk
            })
        });
        let u = [0.3, -0.5, 0.81];
        let ru: [f64; 3] = std::array::from_fn(|i| (0..3).map(|j| r[i][j] * u[j]).sum());
        for l in 0..=3 {
            let d = harmonic_rotation(l, &r);
            let (mut y, mut yr) = ([0.0; 7], [0.0; 7]);
            real_ylm(l, u, &mut y);
            real_ylm(l, ru, &mut yr);
            for m in 0..2 * l + 1 {
                let rotated: f64 = (0..2 * l + 1).map(|mp| d[(m, mp)] * y[mp]).sum();
                assert!((rotated - yr[m]).abs() < 1e-13, "l {l} m {m}");
            }
        }
    }

    #[test]
    fn rotations_of_fcc_diamond_are_orthogonal_and_average_out_a_random_vector() {
        let a = 5.13;
        let lat = [[0.0, a, a], [a, 0.0, a], [a, a, 0.0]];
        let atoms = vec![
            Atom {
                species: 0,
                frac: [0.0; 3],
            },
            Atom {
                species: 0,
                frac: [0.25; 3],
            },
        ];
        let c = Crystal::new(lat, atoms).unwrap();
        let frac: Vec<[f64; 3]> = c.atoms.iter().map(|a| a.frac).collect();
        let ops = crate::symmetry::find_symmetries(&c.lattice, &frac, &[0, 0], 1e-5).unwrap();
        assert_eq!(ops.len(), 48);
        for op in &ops {
            let r = cartesian_rotation(op, &c);
            for i in 0..3 {
                for j in 0..3 {
                    let d: f64 = (0..3).map(|k| r[i][k] * r[j][k]).sum();
                    assert!((d - if i == j { 1.0 } else { 0.0 }).abs() < 1e-12);
                }
            }
        }
        // Diamond sites have Td symmetry: no vector survives; the stress becomes isotropic.
        let f = symmetrize_forces(&ops, &c, &[[0.3, -0.1, 0.2], [0.0, 0.5, 0.1]]);
        assert!(f.iter().flatten().all(|x| x.abs() < 1e-14), "{f:?}");
        let s = symmetrize_stress(
            &ops,
            &c,
            &[[1.0, 0.2, 0.3], [0.2, 2.0, 0.1], [0.3, 0.1, 3.0]],
        );
        for i in 0..3 {
            for j in 0..3 {
                let want = if i == j { 2.0 } else { 0.0 };
                assert!((s[i][j] - want).abs() < 1e-13, "{s:?}");
            }
        }
    }
}
