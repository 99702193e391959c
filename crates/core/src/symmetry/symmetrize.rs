//! Symmetrisation of a periodic scalar field (the density) in G-space.
//!
//! With `rho(x) = sum_G rho(G) exp(2 pi i G.x)` (x fractional, G integer Miller
//! indices), the field transformed by `{W|w}` is
//! `rho({W|w}^{-1} x) = rho(W^{-1}(x - w))`, whose coefficient at `G` is
//! `rho(W^T G) exp(-2 pi i G.w)`. The symmetrised field is the group average
//! `rho_sym(G) = (1/N_ops) sum_ops rho(W^T G) exp(-2 pi i G.w)`, which is
//! invariant (`rho_sym(W x + w) = rho_sym(x)`), idempotent and preserves
//! Hermiticity (`rho(-G) = conj rho(G)`, i.e. real fields stay real).
//!
//! Operations sharing a rotation differ by pure translations `tau` (supercells);
//! their average factorises into the average over distinct rotations (one
//! representative translation each) times the mask
//! `(1/N_tau) sum_tau exp(-2 pi i G.tau)`, which is 1 if `G.tau` is an integer
//! for all `tau` and 0 otherwise.
//!
//! `W^T G` is found at every symmetrisation from the rotation and a dense box of positions
//! over the sphere's Miller bounds (about two indices per G), not from a stored table of
//! `N_rot * N_G` indices (37 MB for 48 rotations of si64's 191 711 G-vectors).
//!
//! The symmetriser may produce only some rows of the result (a rank's entries of a sphere
//! dealt over a G-vector group, [`DensitySymmetrizer::for_rows`]): it then reads the whole
//! sphere and keeps the Miller indices of its rows only.

use num_complex::Complex64;
use rayon::prelude::*;

use super::{int_det, SymOp, IDENTITY};

/// Tolerance used to decide whether `G.tau` is an integer for a pure translation.
const TRANS_TOL: f64 = 1e-6;

const ZERO: Complex64 = Complex64 { re: 0.0, im: 0.0 };

/// Precomputed tables for G-space symmetrisation over a fixed Miller-index set.
#[derive(Clone, Debug)]
pub struct DensitySymmetrizer {
    /// Number of G vectors of the sphere read.
    ng: usize,
    /// Number of rows produced (G vectors of `millers`).
    nrows: usize,
    /// Number of operations in the group (all translations included).
    nops: usize,
    /// One rotation `W` per distinct rotation of the group.
    rotations: Vec<[[i32; 3]; 3]>,
    /// Positions of the sphere's Miller indices (where `W^T G` is looked up).
    index: MillerIndex,
    /// Per distinct rotation, per direction: `exp(-2 pi i m w_d)` for
    /// `m = mmin[d] ..= mmax[d]`; `None` when the translation is zero.
    phases: Vec<Option<[Vec<Complex64>; 3]>>,
    /// Lowest Miller index per direction (offset into the phase tables).
    mmin: [i32; 3],
    /// Miller indices of the rows (to evaluate the phases).
    millers: Vec<[i32; 3]>,
    /// G vectors that survive the pure-translation average (all true when
    /// there are no pure translations).
    mask: Vec<bool>,
}

/// Position of each Miller index of a set, looked up in a dense box over the set's bounds
/// (a few bytes per grid point, no hashing: the table of every rotation of every G is built
/// from some 10^7 lookups on large cells).
#[derive(Clone, Debug)]
struct MillerIndex {
    lo: [i32; 3],
    len: [usize; 3],
    pos: Vec<u32>,
}

impl MillerIndex {
    const ABSENT: u32 = u32::MAX;

    /// `Err` on duplicates or more than `u32::MAX - 1` vectors.
    fn new(millers: &[[i32; 3]]) -> Result<Self, String> {
        if u32::try_from(millers.len()).map_or(true, |n| n == Self::ABSENT) {
            return Err("DensitySymmetrizer: too many G vectors".to_string());
        }
        let mut lo = [0i32; 3];
        let mut hi = [0i32; 3];
        for m in millers {
            for d in 0..3 {
                lo[d] = lo[d].min(m[d]);
                hi[d] = hi[d].max(m[d]);
            }
        }
        let len = [0, 1, 2].map(|d| (hi[d] - lo[d] + 1) as usize);
        let mut me = Self {
            lo,
            len,
            pos: vec![Self::ABSENT; len[0] * len[1] * len[2]],
        };
        for (i, m) in millers.iter().enumerate() {
            let at = me.slot(*m).expect("inside its own bounds");
            if me.pos[at] != Self::ABSENT {
                return Err(format!("DensitySymmetrizer: duplicate Miller index {m:?}"));
            }
            // i < millers.len() < u32::MAX (checked above)
            me.pos[at] = i as u32;
        }
        Ok(me)
    }

    fn slot(&self, m: [i32; 3]) -> Option<usize> {
        m.iter()
            .zip(self.lo.iter().zip(&self.len))
            .try_fold(0, |at, (&x, (&lo, &len))| {
                let k = usize::try_from(x - lo).ok().filter(|&k| k < len)?;
                Some(at * len + k)
            })
    }

    /// The position of `m`, known to be in the set (no bounds test per direction: a
    /// non-member gives a wrong position or, outside the box, a panic).
    fn member(&self, m: [i32; 3]) -> usize {
        let d = [0, 1, 2].map(|a| (m[a] - self.lo[a]) as usize);
        self.pos[(d[0] * self.len[1] + d[1]) * self.len[2] + d[2]] as usize
    }

    /// The position of `m` in the set.
    fn get(&self, m: [i32; 3]) -> Option<u32> {
        self.slot(m)
            .map(|at| self.pos[at])
            .filter(|&p| p != Self::ABSENT)
    }
}

/// `W^T G`: `(W^T G)_a = sum_b W[b][a] G_b`.
fn rotate_transposed(w: &[[i32; 3]; 3], m: [i32; 3]) -> [i32; 3] {
    [0, 1, 2].map(|a| w[0][a] * m[0] + w[1][a] * m[1] + w[2][a] * m[2])
}

impl DensitySymmetrizer {
    /// Index the Miller set and precompute the phases `exp(-2 pi i G.w)` of every
    /// distinct rotation. `Err` if the Miller set is not closed under
    /// the rotations, has duplicates, or an operation is not unimodular, or if
    /// the operations are not a group modulo pure translations (unequal
    /// multiplicities per rotation). An empty `ops` means identity only.
    pub fn new(ops: &[SymOp], millers: &[[i32; 3]]) -> Result<Self, String> {
        let rows: Vec<usize> = (0..millers.len()).collect();
        Self::for_rows(ops, millers, &rows)
    }

    /// As [`Self::new`], producing only the entries `rows` (indices into `millers`) of the
    /// symmetrised field ([`Self::symmetrized_rows`]).
    pub fn for_rows(ops: &[SymOp], millers: &[[i32; 3]], rows: &[usize]) -> Result<Self, String> {
        let ng = millers.len();
        let row_millers: Vec<[i32; 3]> = rows.iter().map(|&i| millers[i]).collect();
        if u32::try_from(ng).is_err() {
            return Err("DensitySymmetrizer: too many G vectors".to_string());
        }
        let index = MillerIndex::new(millers)?;
        let identity = [SymOp::identity()];
        let ops = if ops.is_empty() { &identity[..] } else { ops };

        // Group by rotation.
        let mut reps: Vec<&SymOp> = Vec::new();
        let mut mult: Vec<usize> = Vec::new();
        let mut pure: Vec<[f64; 3]> = Vec::new();
        for op in ops {
            let det = int_det(&op.rot);
            if det != 1 && det != -1 {
                return Err(format!(
                    "DensitySymmetrizer: rotation {:?} not unimodular",
                    op.rot
                ));
            }
            if op.trans.iter().any(|t| !t.is_finite()) {
                return Err("DensitySymmetrizer: non-finite translation".to_string());
            }
            match reps.iter().position(|r| r.rot == op.rot) {
                Some(p) => mult[p] += 1,
                None => {
                    reps.push(op);
                    mult.push(1);
                }
            }
            if op.rot == IDENTITY {
                pure.push(op.trans);
            }
        }
        if mult.iter().any(|&m| m != mult[0]) || pure.len() != mult[0] {
            return Err("DensitySymmetrizer: operations do not form a group \
                        (unequal number of translations per rotation)"
                .to_string());
        }

        // The sphere must hold every rotated row.
        for op in &reps {
            for m in &row_millers {
                let r = rotate_transposed(&op.rot, *m);
                if index.get(r).is_none() {
                    return Err(format!(
                        "DensitySymmetrizer: Miller set not closed: {m:?} -> {r:?} under {:?}",
                        op.rot
                    ));
                }
            }
        }

        // Phase tables.
        let mut mmin = [0i32; 3];
        let mut mmax = [0i32; 3];
        for m in &row_millers {
            for d in 0..3 {
                mmin[d] = mmin[d].min(m[d]);
                mmax[d] = mmax[d].max(m[d]);
            }
        }
        let phases = reps
            .iter()
            .map(|op| {
                if op.trans.iter().all(|t| *t == 0.0) {
                    return None;
                }
                Some([0usize, 1, 2].map(|d| {
                    (mmin[d]..=mmax[d])
                        .map(|m| {
                            let arg = -2.0 * std::f64::consts::PI * f64::from(m) * op.trans[d];
                            Complex64::from_polar(1.0, arg)
                        })
                        .collect()
                }))
            })
            .collect();

        // Pure-translation mask.
        let mask = row_millers
            .iter()
            .map(|m| {
                pure.iter().all(|t| {
                    let x: f64 = (0..3).map(|d| f64::from(m[d]) * t[d]).sum();
                    (x - x.round()).abs() < TRANS_TOL
                })
            })
            .collect();

        Ok(Self {
            ng,
            nrows: row_millers.len(),
            nops: ops.len(),
            rotations: reps.iter().map(|op| op.rot).collect(),
            index,
            phases,
            mmin,
            millers: row_millers,
            mask,
        })
    }

    /// Number of G vectors.
    pub fn len(&self) -> usize {
        self.ng
    }

    /// True if there are no G vectors.
    pub fn is_empty(&self) -> bool {
        self.ng == 0
    }

    /// Number of operations of the group (including pure translations).
    pub fn num_ops(&self) -> usize {
        self.nops
    }

    /// Number of distinct rotations.
    pub fn num_rotations(&self) -> usize {
        self.phases.len()
    }

    /// Replace `rho_g` (coefficients at the Miller indices given to [`Self::new`],
    /// convention `rho(G) = (1/N) sum_x rho(x) exp(-2 pi i G.x)`) by the group
    /// average `rho_sym(x) = (1/N_ops) sum_ops rho({W|w}^{-1} x)`.
    ///
    /// If `rho_g.len()` differs from the number of G vectors, `rho_g` is left
    /// untouched; use [`Self::try_symmetrize`] to get an error instead.
    pub fn symmetrize(&self, rho_g: &mut [Complex64]) {
        let _ = self.try_symmetrize(rho_g);
    }

    /// As [`Self::symmetrize`], returning `Err` on a length mismatch (or when the
    /// symmetriser produces only some rows).
    pub fn try_symmetrize(&self, rho_g: &mut [Complex64]) -> Result<(), String> {
        if self.nrows != self.ng {
            return Err(format!(
                "DensitySymmetrizer: produces {} of {} rows; use symmetrized_rows",
                self.nrows, self.ng
            ));
        }
        let out = self.symmetrized_rows(rho_g)?;
        rho_g.copy_from_slice(&out);
        Ok(())
    }

    /// The rows given to [`Self::for_rows`] of the symmetrised field, from the whole field
    /// `rho_g` (coefficients at all the Miller indices given there).
    pub fn symmetrized_rows(&self, rho_g: &[Complex64]) -> Result<Vec<Complex64>, String> {
        if rho_g.len() != self.ng {
            return Err(format!(
                "DensitySymmetrizer: got {} coefficients, expected {}",
                rho_g.len(),
                self.ng
            ));
        }
        let mut acc = vec![Complex64::new(0.0, 0.0); self.nrows];
        // Rows in chunks over the rayon threads; inside a chunk, rotation by rotation.
        const CHUNK: usize = 4096;
        acc.par_chunks_mut(CHUNK)
            .zip(self.millers.par_chunks(CHUNK))
            .zip(self.mask.par_chunks(CHUNK))
            .for_each(|((acc, millers), mask)| {
                // Only the rows the translations keep are summed (1 in 32 of si64's).
                let kept: Vec<usize> = (0..acc.len()).filter(|&i| mask[i]).collect();
                self.accumulate(rho_g, millers, &kept, acc);
                let inv = 1.0 / self.phases.len().max(1) as f64;
                for (a, keep) in acc.iter_mut().zip(mask) {
                    *a = if *keep { *a * inv } else { ZERO };
                }
            });
        Ok(acc)
    }

    /// `acc[i] = sum_r rho(W_r^T G_i) exp(-2 pi i G_i.w_r)` for the rows `kept` of `millers`
    /// (the other rows of `acc` are left as they are).
    fn accumulate(
        &self,
        rho_g: &[Complex64],
        millers: &[[i32; 3]],
        kept: &[usize],
        acc: &mut [Complex64],
    ) {
        for (w, ph) in self.rotations.iter().zip(&self.phases) {
            // Every rotated row is in the sphere (checked at construction).
            let source = |m: &[i32; 3]| rho_g[self.index.member(rotate_transposed(w, *m))];
            let rows = kept.iter().map(|&i| (i, &millers[i]));
            match ph {
                None => {
                    for (i, m) in rows {
                        acc[i] += source(m);
                    }
                }
                Some(tab) => {
                    for (i, m) in rows {
                        let a = &mut acc[i];
                        let p = tab[0][(m[0] - self.mmin[0]) as usize]
                            * tab[1][(m[1] - self.mmin[1]) as usize]
                            * tab[2][(m[2] - self.mmin[2]) as usize];
                        *a += source(m) * p;
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::find_symmetries;
    use super::*;
    use std::collections::HashMap;
    use std::f64::consts::PI;

    const A: f64 = 5.13;
    const SI_LAT: [[f64; 3]; 3] = [[0.0, A, A], [A, 0.0, A], [A, A, 0.0]];

    /// Miller indices with |G| <= gcut, all |m_i| <= mmax.
    fn sphere(lat: &[[f64; 3]; 3], mmax: i32) -> Vec<[i32; 3]> {
        let g2 = |m: &[i32; 3]| -> f64 {
            let b = recip(lat);
            let mut c = [0.0; 3];
            for d in 0..3 {
                for k in 0..3 {
                    c[k] += f64::from(m[d]) * b[d][k];
                }
            }
            c.iter().map(|v| v * v).sum()
        };
        let mut all = Vec::new();
        for i in -mmax..=mmax {
            for j in -mmax..=mmax {
                for k in -mmax..=mmax {
                    all.push([i, j, k]);
                }
            }
        }
        let cut = all
            .iter()
            .filter(|m| m.iter().any(|v| v.abs() == mmax))
            .map(g2)
            .fold(f64::INFINITY, f64::min)
            * 0.999;
        all.into_iter().filter(|m| g2(m) < cut).collect()
    }

    /// Reciprocal rows b_i with a_i . b_j = 2 pi delta_ij.
    fn recip(a: &[[f64; 3]; 3]) -> [[f64; 3]; 3] {
        let cross = |u: &[f64; 3], v: &[f64; 3]| {
            [
                u[1] * v[2] - u[2] * v[1],
                u[2] * v[0] - u[0] * v[2],
                u[0] * v[1] - u[1] * v[0],
            ]
        };
        let c = cross(&a[1], &a[2]);
        let vol: f64 = (0..3).map(|i| a[0][i] * c[i]).sum();
        let f = 2.0 * PI / vol;
        [
            c.map(|v| v * f),
            cross(&a[2], &a[0]).map(|v| v * f),
            cross(&a[0], &a[1]).map(|v| v * f),
        ]
    }

    fn synth(millers: &[[i32; 3]], c: &[Complex64], x: &[f64; 3]) -> Complex64 {
        millers
            .iter()
            .zip(c)
            .map(|(m, v)| {
                let arg = 2.0 * PI * (0..3).map(|d| f64::from(m[d]) * x[d]).sum::<f64>();
                v * Complex64::from_polar(1.0, arg)
            })
            .sum()
    }

    struct Lcg(u64);
    impl Lcg {
        fn next(&mut self) -> f64 {
            self.0 = self
                .0
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((self.0 >> 11) as f64) / ((1u64 << 53) as f64)
        }
    }

    fn max_abs(c: &[Complex64]) -> f64 {
        c.iter().map(|v| v.norm()).fold(0.0, f64::max)
    }

    fn max_diff(a: &[Complex64], b: &[Complex64]) -> f64 {
        a.iter()
            .zip(b)
            .map(|(x, y)| (x - y).norm())
            .fold(0.0, f64::max)
    }

    /// Gaussians on the atoms sampled on an n^3 grid, coefficients by direct DFT.
    fn gaussian_dft(
        lat: &[[f64; 3]; 3],
        atoms: &[[f64; 3]],
        n: usize,
        millers: &[[i32; 3]],
    ) -> Vec<Complex64> {
        let sigma = 0.7;
        let mut rho = Vec::with_capacity(n * n * n);
        let mut pts = Vec::with_capacity(n * n * n);
        for i in 0..n {
            for j in 0..n {
                for k in 0..n {
                    let x = [
                        i as f64 / n as f64,
                        j as f64 / n as f64,
                        k as f64 / n as f64,
                    ];
                    let mut v = 0.0;
                    for a in atoms {
                        for l0 in -2..=2 {
                            for l1 in -2..=2 {
                                for l2 in -2..=2 {
                                    let d = [
                                        x[0] - a[0] - f64::from(l0),
                                        x[1] - a[1] - f64::from(l1),
                                        x[2] - a[2] - f64::from(l2),
                                    ];
                                    let mut c = [0.0; 3];
                                    for (q, dq) in d.iter().enumerate() {
                                        for r in 0..3 {
                                            c[r] += dq * lat[q][r];
                                        }
                                    }
                                    let r2: f64 = c.iter().map(|v| v * v).sum();
                                    v += (-r2 / (2.0 * sigma * sigma)).exp();
                                }
                            }
                        }
                    }
                    rho.push(v);
                    pts.push(x);
                }
            }
        }
        let norm = 1.0 / (n * n * n) as f64;
        millers
            .iter()
            .map(|m| {
                pts.iter()
                    .zip(&rho)
                    .map(|(x, v)| {
                        let arg = -2.0 * PI * (0..3).map(|d| f64::from(m[d]) * x[d]).sum::<f64>();
                        Complex64::from_polar(*v, arg)
                    })
                    .sum::<Complex64>()
                    * norm
            })
            .collect()
    }

    /// Exact Fourier coefficients of periodic Gaussians (any positions).
    fn gaussian_analytic(
        lat: &[[f64; 3]; 3],
        atoms: &[[f64; 3]],
        millers: &[[i32; 3]],
    ) -> Vec<Complex64> {
        let b = recip(lat);
        let sigma = 0.7f64;
        millers
            .iter()
            .map(|m| {
                let mut g = [0.0; 3];
                for d in 0..3 {
                    for k in 0..3 {
                        g[k] += f64::from(m[d]) * b[d][k];
                    }
                }
                let g2: f64 = g.iter().map(|v| v * v).sum();
                let f = (-0.5 * sigma * sigma * g2).exp();
                atoms
                    .iter()
                    .map(|a| {
                        let arg = -2.0 * PI * (0..3).map(|d| f64::from(m[d]) * a[d]).sum::<f64>();
                        Complex64::from_polar(f, arg)
                    })
                    .sum()
            })
            .collect()
    }

    fn check_invariant_random(ops: &[SymOp], millers: &[[i32; 3]], seed: u64) {
        let sym = DensitySymmetrizer::new(ops, millers).unwrap_or_else(|e| panic!("{e}"));
        let mut rng = Lcg(seed);
        let idx: HashMap<[i32; 3], usize> =
            millers.iter().enumerate().map(|(i, m)| (*m, i)).collect();
        let mut c: Vec<Complex64> = millers
            .iter()
            .map(|_| Complex64::new(rng.next() - 0.5, rng.next() - 0.5))
            .collect();
        let c0 = c.clone();
        for (i, m) in millers.iter().enumerate() {
            let j = idx[&[-m[0], -m[1], -m[2]]];
            c[i] = 0.5 * (c0[i] + c0[j].conj());
        }
        sym.symmetrize(&mut c);
        assert!(max_abs(&c) > 1e-3);
        // Hermitian
        for (i, m) in millers.iter().enumerate() {
            let j = idx[&[-m[0], -m[1], -m[2]]];
            assert!((c[i] - c[j].conj()).norm() < 1e-14);
        }
        // Idempotent
        let mut c2 = c.clone();
        sym.symmetrize(&mut c2);
        assert!(max_diff(&c, &c2) < 1e-14, "{}", max_diff(&c, &c2));
        // Pointwise invariance rho(Wx + w) = rho(x)
        for _ in 0..4 {
            let x = [rng.next(), rng.next(), rng.next()];
            let v = synth(millers, &c, &x);
            assert!(v.im.abs() < 1e-12);
            for op in ops {
                let y = op.apply(&x);
                let w = synth(millers, &c, &y);
                assert!((v - w).norm() < 1e-11, "{op:?}: {v} vs {w}");
            }
        }
    }

    #[test]
    fn si_gaussians_dft_unchanged() {
        let atoms = [[0.0; 3], [0.25; 3]];
        let ops = find_symmetries(&SI_LAT, &atoms, &[0, 0], 1e-5).unwrap_or_default();
        assert_eq!(ops.len(), 48);
        assert!(ops
            .iter()
            .any(|o| o.trans.iter().any(|t| (t - 0.25).abs() < 1e-12)));
        let millers = sphere(&SI_LAT, 7);
        assert!(millers.len() > 100);
        let c = gaussian_dft(&SI_LAT, &atoms, 16, &millers);
        let mut s = c.clone();
        let sym = DensitySymmetrizer::new(&ops, &millers).unwrap_or_else(|e| panic!("{e}"));
        sym.symmetrize(&mut s);
        let d = max_diff(&c, &s);
        assert!(d < 1e-12 * max_abs(&c).max(1.0), "diff {d}");
        // Sanity: a non-symmetric field IS changed (phase sign matters).
        let bad = gaussian_dft(&SI_LAT, &[[0.0; 3], [-0.25, 0.25, 0.25]], 16, &millers);
        let mut bs = bad.clone();
        sym.symmetrize(&mut bs);
        assert!(max_diff(&bad, &bs) > 1e-3);
    }

    #[test]
    fn shifted_origin_analytic_unchanged() {
        // Diamond with a generic origin shift: translations are generic.
        let s = [0.1, 0.23, 0.37];
        let atoms = [s, [0.25 + s[0], 0.25 + s[1], 0.25 + s[2]]];
        let ops = find_symmetries(&SI_LAT, &atoms, &[0, 0], 1e-5).unwrap_or_default();
        assert_eq!(ops.len(), 48);
        let millers = sphere(&SI_LAT, 6);
        let c = gaussian_analytic(&SI_LAT, &atoms, &millers);
        let mut sc = c.clone();
        DensitySymmetrizer::new(&ops, &millers)
            .unwrap_or_else(|e| panic!("{e}"))
            .symmetrize(&mut sc);
        assert!(
            max_diff(&c, &sc) < 1e-12 * max_abs(&c),
            "{}",
            max_diff(&c, &sc)
        );
        check_invariant_random(&ops, &millers, 7);
    }

    #[test]
    fn random_field_becomes_invariant() {
        let ops =
            find_symmetries(&SI_LAT, &[[0.0; 3], [0.25; 3]], &[0, 0], 1e-5).unwrap_or_default();
        let millers = sphere(&SI_LAT, 5);
        check_invariant_random(&ops, &millers, 42);
    }

    #[test]
    fn supercell_with_pure_translations() {
        // Conventional 8-atom Si cell: 192 ops (48 rotations x 4 centrings).
        let a = 10.26;
        let lat = [[a, 0.0, 0.0], [0.0, a, 0.0], [0.0, 0.0, a]];
        let mut atoms = Vec::new();
        for c in [
            [0.0, 0.0, 0.0],
            [0.0, 0.5, 0.5],
            [0.5, 0.0, 0.5],
            [0.5, 0.5, 0.0],
        ] {
            atoms.push(c);
            atoms.push(c.map(|v| v + 0.25));
        }
        let ops = find_symmetries(&lat, &atoms, &[0; 8], 1e-5).unwrap_or_default();
        assert_eq!(ops.len(), 192);
        let millers = sphere(&lat, 5);
        let sym = DensitySymmetrizer::new(&ops, &millers).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(sym.num_ops(), 192);
        assert_eq!(sym.num_rotations(), 48);
        let c = gaussian_analytic(&lat, &atoms, &millers);
        let mut sc = c.clone();
        sym.symmetrize(&mut sc);
        assert!(max_diff(&c, &sc) < 1e-12 * max_abs(&c));
        check_invariant_random(&ops, &millers, 3);
    }

    #[test]
    fn rows_of_a_dealt_sphere_match_the_whole() {
        // A rank of a G-vector group holds some rows (every third one, out of order): its
        // symmetriser must give exactly those entries of the whole result, and refuse to
        // symmetrise in place.
        let ops =
            find_symmetries(&SI_LAT, &[[0.0; 3], [0.25; 3]], &[0, 0], 1e-5).unwrap_or_default();
        let millers = sphere(&SI_LAT, 5);
        let mut rng = Lcg(11);
        let c: Vec<Complex64> = millers
            .iter()
            .map(|_| Complex64::new(rng.next() - 0.5, rng.next() - 0.5))
            .collect();
        let mut whole = c.clone();
        DensitySymmetrizer::new(&ops, &millers)
            .unwrap_or_else(|e| panic!("{e}"))
            .symmetrize(&mut whole);
        let rows: Vec<usize> = (0..millers.len()).rev().filter(|i| i % 3 == 1).collect();
        let part = DensitySymmetrizer::for_rows(&ops, &millers, &rows).unwrap();
        let got = part.symmetrized_rows(&c).unwrap();
        let want: Vec<Complex64> = rows.iter().map(|&i| whole[i]).collect();
        assert_eq!(got, want);
        assert!(part.try_symmetrize(&mut c.clone()).is_err());
        assert!(part.symmetrized_rows(&c[1..]).is_err());
    }

    #[test]
    fn errors() {
        let ops =
            find_symmetries(&SI_LAT, &[[0.0; 3], [0.25; 3]], &[0, 0], 1e-5).unwrap_or_default();
        // Not closed: a box of Miller indices is not closed under fcc rotations.
        let mut boxm = Vec::new();
        for i in -1..=1 {
            for j in -1..=1 {
                for k in -1..=1 {
                    boxm.push([i, j, k]);
                }
            }
        }
        assert!(DensitySymmetrizer::new(&ops, &boxm).is_err());
        assert!(DensitySymmetrizer::new(&ops, &[[0, 0, 0], [0, 0, 0]]).is_err());
        // Identity only: no-op.
        let sym = DensitySymmetrizer::new(&[], &boxm).unwrap_or_else(|e| panic!("{e}"));
        let mut c: Vec<Complex64> = (0..boxm.len())
            .map(|i| Complex64::new(i as f64, 1.0))
            .collect();
        let c0 = c.clone();
        sym.symmetrize(&mut c);
        assert_eq!(c, c0);
        assert!(sym.try_symmetrize(&mut c[..3]).is_err());
    }
}
