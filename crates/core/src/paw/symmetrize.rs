//! Symmetrisation of per-atom band sums (and couplings) over the crystal's operations.
//!
//! Contract: the band sums of the irreducible k-points are not those of the whole zone; the
//! group average is. An operation {R|t} that moves atom a onto atom b maps the projections of
//! a's components onto b's by the real-harmonic rotation `D^l(R)`, `Y_lm(R u) = Σ_m' D_mm'
//! Y_lm'(u)` ([`crate::symmetry::harmonic_rotation`]). [`Symmetrizer::apply`]
//! replaces each atom's matrix M_b (ρ_ij, the off-diagonal pairs halved from `becsum`'s
//! packing; or a coupling D_ij, unhalved) by `(1/N) Σ_ops T M_a Tᵀ`, T block diagonal with
//! `D^l(R)` per beta. Without operations, or when one does not map the atoms onto each other,
//! it changes nothing.

use crate::augmentation::pairs;
use crate::model::Model;
use crate::symmetry::{cartesian_rotation, harmonic_rotation, image};
use planewave_linalg::Mat;

/// The operations as atom maps and harmonic rotations (l ≤ 3).
pub struct Symmetrizer {
    /// Per operation: the image of each atom, and `D^l` for l = 0..=3.
    ops: Vec<(Vec<usize>, Vec<Mat<f64>>)>,
}

impl Symmetrizer {
    /// The symmetriser of `model`'s operations (None with at most the identity, or when one
    /// does not map the atoms onto each other).
    pub fn new(model: &Model) -> Option<Self> {
        if model.symmetries.len() <= 1 {
            return None;
        }
        let crystal = &model.crystal;
        let ops = model
            .symmetries
            .iter()
            .map(|op| {
                let images = (0..crystal.atoms.len())
                    .map(|a| image(op, crystal, a))
                    .collect::<Option<Vec<usize>>>()?;
                let r = cartesian_rotation(op, crystal);
                let d = (0..=3).map(|l| harmonic_rotation(l, &r)).collect();
                Some((images, d))
            })
            .collect::<Option<Vec<_>>>()?;
        Some(Self { ops })
    }

    /// Symmetrise `values[a][p]` (packed pairs of each atom's components, whose (l, m index)
    /// `comps(a)` gives; empty for atoms without), halving the off-diagonal pairs on the way in
    /// and doubling them on the way out when `halved` (band sums).
    pub fn apply(
        &self,
        values: &mut [Vec<f64>],
        comps: &dyn Fn(usize) -> Vec<(usize, usize)>,
        halved: bool,
    ) {
        let w = 1.0 / self.ops.len() as f64;
        let natoms = values.len();
        let mats: Vec<Vec<Vec<f64>>> = (0..natoms)
            .map(|a| unpack(&values[a], comps(a).len(), halved))
            .collect();
        let mut out: Vec<Vec<Vec<f64>>> = mats
            .iter()
            .map(|m| vec![vec![0.0; m.len()]; m.len()])
            .collect();
        for (images, d) in &self.ops {
            for a in 0..natoms {
                let c = comps(a);
                if c.is_empty() {
                    continue;
                }
                let t = block_rotation(&c, d);
                let m = &mats[a];
                let n = c.len();
                let tm: Vec<Vec<f64>> = (0..n)
                    .map(|i| {
                        (0..n)
                            .map(|j| t[i].iter().map(|&(k, v)| v * m[k][j]).sum())
                            .collect()
                    })
                    .collect();
                let o = &mut out[images[a]];
                for i in 0..n {
                    for j in 0..n {
                        o[i][j] += w * t[j].iter().map(|&(k, v)| tm[i][k] * v).sum::<f64>();
                    }
                }
            }
        }
        for (v, m) in values.iter_mut().zip(&out) {
            if !v.is_empty() {
                *v = pack(m, halved);
            }
        }
    }
}

/// The rows of T (sparse: (column, value)) for components `c` = (l, m index) in blocks of one
/// beta each (consecutive m of one l starting at m index 0).
fn block_rotation(c: &[(usize, usize)], d: &[Mat<f64>]) -> Vec<Vec<(usize, f64)>> {
    c.iter()
        .enumerate()
        .map(|(i, &(l, m))| {
            let start = i - m;
            (0..2 * l + 1)
                .map(|mp| (start + mp, d[l][(m, mp)]))
                .collect()
        })
        .collect()
}

fn unpack(p: &[f64], n: usize, halved: bool) -> Vec<Vec<f64>> {
    let mut m = vec![vec![0.0; n]; n];
    for ((i, j), &v) in pairs(n).zip(p) {
        let v = if halved && i != j { 0.5 * v } else { v };
        m[i][j] = v;
        m[j][i] = v;
    }
    m
}

fn pack(m: &[Vec<f64>], halved: bool) -> Vec<f64> {
    pairs(m.len())
        .map(|(i, j)| {
            let v = 0.5 * (m[i][j] + m[j][i]);
            if halved && i != j {
                2.0 * v
            } else {
                v
            }
        })
        .collect()
}
