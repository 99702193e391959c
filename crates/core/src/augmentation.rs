//! The augmentation charges of ultrasoft species on the density sphere: the charge the bands
//! carry inside the spheres, and the part of the coupling D_ij that the potential screens.
//!
//! Contract (per atom a of an ultrasoft species, its projector components ih ≤ jh, a "pair"
//! p, in row-major order: (0,0), (0,1), ..., (1,1), ...):
//! - `becsum[s][a][p] = (2 - δ_ij) Re Σ_k w_k Σ_n f_nks ⟨ψ|β_i⟩⟨β_j|ψ⟩` ([`becsum`]): the
//!   occupied bands' projections, summed over every rank that holds bands (collective).
//! - [`AugmentationCharges::density`]: `ρ_aug(G) = (1/Ω) Σ_a e^{-iG·τ_a} Σ_p becsum_p Q_p(G)`
//!   on this rank's density-sphere entries, `Q_p(G) = ∫ Q_ij(r) e^{-iG·r} d³r`
//!   ([`crate::pseudo::augmentation`]). Added to the bands' density before it is symmetrised,
//!   so the k-points of the irreducible wedge suffice.
//! - [`AugmentationCharges::screening`]: `ΔD_a[p] = ∫ V(r) Q_ij(r - τ_a) d³r
//!   = Σ_G V(G) e^{iG·τ_a} Q_p(G)*` of a local potential V given on the sphere, summed over
//!   the G-vector group (collective): the screened coupling is `D^0 + ΔD`.
//! - Q_p(G) is formed when needed from Y_LM(Ĝ) of this rank's entries (stored once) and the
//!   radial integrals per |G| shell, as QE's `qvan2`, one block of entries at a time: the
//!   density and the integrals run over blocks of the sphere on the threads and keep no
//!   sphere-sized buffer per pair or atom (the integrals' blocks are [`ordered_sum`]'s).
//! - The forces and the stress of the charges in a local potential
//!   ([`AugmentationCharges::stress`]: the analytic strain derivative of Q_p).

use crate::bands::BandScalar;
use crate::basis::{conjugate_pair_weight, Basis};
use crate::clebsch_gordan::{product_ls, real_ylm_upto6, YlmProducts, LMAX_PRODUCT};
use crate::model::Model;
use crate::ordered_sum::ordered_sum;
use crate::terms::nonlocal::KProjectors;
use num_complex::Complex64;
use planewave_linalg::Mat;
use rayon::prelude::*;
use std::f64::consts::PI;
use std::ops::Range;

mod stress;

/// `[spin][atom][pair]`: see the module doc (atoms of norm-conserving species hold none).
pub type Becsum = Vec<Vec<Vec<f64>>>;

/// The values of `b` in order (spin, atom, pair): one vector for a sum or the mixer.
pub fn flat_becsum(b: &Becsum) -> Vec<f64> {
    b.iter().flatten().flatten().copied().collect()
}

/// Overwrite `b` with `flat`, in the order of [`flat_becsum`] (as many values as `b` holds).
pub fn refill_becsum(b: &mut Becsum, flat: &[f64]) {
    let mut it = flat.iter().copied();
    b.iter_mut()
        .flatten()
        .flatten()
        .for_each(|v| *v = it.next().expect("as many values as band sums"));
    assert!(it.next().is_none(), "as many band sums as values");
}

/// Zeros in the layout of `like`.
pub fn zero_becsum_like(like: &Becsum) -> Becsum {
    like.iter()
        .map(|c| c.iter().map(|v| vec![0.0; v.len()]).collect())
        .collect()
}

/// One angular term of a pair: L, its radial integral 4π qrad_L per |G| shell, and the
/// (LM index, ap) with ap ≠ 0.
struct AngularTerm {
    big_l: usize,
    /// The betas (i, j) of the radial integral.
    betas: (usize, usize),
    radial: Vec<f64>,
    harmonics: Vec<(usize, f64)>,
}

/// The pairs of one ultrasoft species.
struct SpeciesPairs {
    /// Projector components of one atom.
    ncomp: usize,
    /// Per pair (ih ≤ jh, row-major), its angular terms.
    terms: Vec<Vec<AngularTerm>>,
}

impl SpeciesPairs {
    /// The largest L of the pairs' angular terms.
    fn lmax(&self) -> usize {
        (self.terms.iter().flatten())
            .map(|t| t.big_l)
            .max()
            .unwrap_or(0)
    }
}

/// The augmentation charges of a model on a basis' density sphere (see the module doc).
pub struct AugmentationCharges {
    /// Per species: its pairs (None: norm-conserving).
    species: Vec<Option<SpeciesPairs>>,
    /// `ylm[L² + M][g]` of this rank's density-sphere entries, L up to the largest of the
    /// species' pairs (2 l_max of their projectors: 2 for s and p projectors, 9 harmonics).
    ylm: Vec<Vec<f64>>,
}

/// Number of pairs ih ≤ jh of `n` components.
pub fn pair_count(n: usize) -> usize {
    n * (n + 1) / 2
}

/// The pairs (ih, jh), ih ≤ jh, of `n` components in row-major order.
pub fn pairs(n: usize) -> impl Iterator<Item = (usize, usize)> {
    (0..n).flat_map(move |i| (i..n).map(move |j| (i, j)))
}

impl AugmentationCharges {
    /// The charges of `model`'s ultrasoft species on `basis` (None when every species is
    /// norm-conserving).
    pub fn new(model: &Model, basis: &Basis) -> Option<Self> {
        let species: Vec<Option<SpeciesPairs>> = model
            .species
            .iter()
            .map(|sp| {
                sp.pseudo
                    .augmentation()
                    .map(|aug| species_pairs(aug, basis))
            })
            .collect();
        if species.iter().all(Option::is_none) {
            return None;
        }
        let lmax = (species.iter().flatten()).map(SpeciesPairs::lmax).max();
        Some(Self {
            species,
            ylm: ylm_table(&basis.rho_g, lmax.unwrap_or(0)),
        })
    }

    /// Zero band sums of `model`'s atoms, `[spin][atom][pair]`.
    pub fn zero_becsum(&self, model: &Model) -> Becsum {
        let atoms: Vec<Vec<f64>> = model
            .crystal
            .atoms
            .iter()
            .map(|a| vec![0.0; pair_count(self.components(a.species))])
            .collect();
        vec![atoms; model.nspin()]
    }

    /// Projector components of one atom of `species` (0: norm-conserving).
    pub fn components(&self, species: usize) -> usize {
        self.species[species].as_ref().map_or(0, |s| s.ncomp)
    }

    /// `Q_p(G)` of pair `p` of `species` on this rank's entries `range`, into `out` (as long).
    /// Worked in real arithmetic, [`BLOCK`] entries at a time: each angular term's `(-i)^L`
    /// only chooses the real or the imaginary part and a sign.
    fn pair_charge(
        &self,
        basis: &Basis,
        (species, p): (usize, usize),
        range: Range<usize>,
        out: &mut [Complex64],
    ) {
        let sp = self.species[species]
            .as_ref()
            .expect("an ultrasoft species");
        let (mut re, mut im, mut angular) = ([0.0; BLOCK], [0.0; BLOCK], [0.0; BLOCK]);
        for (start, out) in range.step_by(BLOCK).zip(out.chunks_mut(BLOCK)) {
            let (g, len) = (start..start + out.len(), out.len());
            re[..len].fill(0.0);
            im[..len].fill(0.0);
            for t in &sp.terms[p] {
                let angular = &mut angular[..len];
                angular.fill(0.0);
                for &(lm, ap) in &t.harmonics {
                    let y = &self.ylm[lm][g.clone()];
                    angular.iter_mut().zip(y).for_each(|(a, y)| *a += ap * y);
                }
                let part = if t.big_l % 2 == 0 { &mut re } else { &mut im };
                let sign = if matches!(t.big_l % 4, 0 | 3) {
                    1.0
                } else {
                    -1.0
                };
                let shells = &basis.rho_shell[g.clone()];
                (part[..len].iter_mut().zip(&*angular).zip(shells))
                    .for_each(|((x, a), &s)| *x += sign * t.radial[s] * a);
            }
            (out.iter_mut().zip(&re).zip(&im)).for_each(|((o, &r), &i)| *o = Complex64::new(r, i));
        }
    }

    /// The augmentation density per spin channel on this rank's density-sphere entries
    /// (electrons/bohr³ as sphere coefficients) of `becsum`: dealt over the threads in blocks
    /// of 256 entries, each formed whole (no sphere-sized temporaries). The density is real:
    /// where every entry's mirror -G is on this rank ([`Basis::rho_mirror`]), the entries
    /// outside the upper half are their mirror's conjugate, and blocks with no upper-half
    /// entry are not formed (half the sphere on one rank).
    pub fn density(&self, model: &Model, basis: &Basis, becsum: &Becsum) -> Vec<Vec<Complex64>> {
        let (n, zero) = (basis.rho_g.len(), Complex64::new(0.0, 0.0));
        let phases = AtomPhases::of(model, basis);
        let mirror = basis.rho_mirror.as_deref();
        let mirrored =
            |e: usize| mirror.is_some() && conjugate_pair_weight(&basis.rho_millers[e]) == 0.0;
        let blocks: Vec<Vec<Complex64>> = (0..n.div_ceil(BLOCK))
            .into_par_iter()
            .map(|b| {
                let range = b * BLOCK..n.min((b + 1) * BLOCK);
                if range.clone().all(mirrored) {
                    return Vec::new();
                }
                self.density_block(model, basis, (becsum, &phases), range)
            })
            .collect();
        let mut rho = vec![vec![zero; n]; becsum.len()];
        for (s, r) in rho.iter_mut().enumerate() {
            for (dst, src) in r
                .chunks_mut(BLOCK)
                .zip(&blocks)
                .filter(|(_, b)| !b.is_empty())
            {
                dst.copy_from_slice(&src[s * dst.len()..(s + 1) * dst.len()]);
            }
            if let Some(mirror) = mirror {
                for e in (0..n).filter(|&e| mirrored(e)) {
                    r[e] = r[mirror[e]].conj();
                }
            }
        }
        rho
    }

    /// [`Self::density`] on the entries `range`, spin-major: per species, per spin and pair
    /// `Σ_a becsum_a,p e^{-iG·τ_a}` (QE's aux2, atoms in order), then each `Q_p` once for
    /// every spin.
    fn density_block(
        &self,
        model: &Model,
        basis: &Basis,
        (becsum, phases): (&Becsum, &AtomPhases),
        range: Range<usize>,
    ) -> Vec<Complex64> {
        let (len, zero) = (range.len(), Complex64::new(0.0, 0.0));
        let mut rho = vec![zero; becsum.len() * len];
        let (mut q, mut e) = (vec![zero; len], vec![zero; len]);
        for (sp, pairs) in self.species.iter().enumerate() {
            let np = pairs.as_ref().map_or(0, |p| p.terms.len());
            if np == 0 {
                continue;
            }
            let mut weighted = vec![zero; becsum.len() * np * len];
            for (a, atom) in model.crystal.atoms.iter().enumerate() {
                if atom.species != sp {
                    continue;
                }
                phases.fill(a, basis, range.clone(), &mut e);
                for (w_s, b_s) in weighted.chunks_mut(np * len).zip(becsum) {
                    for (w, b) in w_s.chunks_mut(len).zip(&b_s[a]) {
                        // 1/Ω folded into the weight: no division in the loop over pairs.
                        let b = b / basis.volume;
                        w.iter_mut().zip(&e).for_each(|(w, e)| *w += e * b);
                    }
                }
            }
            for p in 0..np {
                self.pair_charge(basis, (sp, p), range.clone(), &mut q);
                for (r_s, w_s) in rho.chunks_mut(len).zip(weighted.chunks(np * len)) {
                    let w = &w_s[p * len..(p + 1) * len];
                    (r_s.iter_mut().zip(&q).zip(w)).for_each(|((r, q), w)| *r += q * w);
                }
            }
        }
        rho
    }

    /// `ΔD[s][a][p]` (Ha) of the local potentials `v_g` (per spin, on this rank's sphere
    /// entries). Collective on the G-vector group.
    pub fn screening(&self, model: &Model, basis: &Basis, v_g: &[Vec<Complex64>]) -> Becsum {
        self.integrals(model, basis, v_g)
    }

    /// The forces (Ha/bohr, per atom) of the augmentation charges in the local potentials
    /// `v_g` (per spin, on this rank's sphere entries) with the bands' `becsum`:
    /// `F_a = -Σ_s Σ_p becsum_p ∂ΔD_p/∂τ_a`, the charges moving with their atom.
    /// Collective on the G-vector group.
    pub fn forces(
        &self,
        model: &Model,
        basis: &Basis,
        v_g: &[Vec<Complex64>],
        becsum: &Becsum,
    ) -> Vec<[f64; 3]> {
        // ∂/∂τ of e^{iG·τ} brings down i G.
        let fields: Vec<Vec<Complex64>> = v_g
            .iter()
            .flat_map(|v| {
                (0..3).map(move |d| {
                    v.iter()
                        .zip(&basis.rho_g)
                        .map(|(v, g)| v * Complex64::new(0.0, g[d]))
                        .collect()
                })
            })
            .collect();
        let slopes = self.integrals(model, basis, &fields);
        let mut out = vec![[0.0; 3]; model.crystal.atoms.len()];
        for (s, per_atom) in becsum.iter().enumerate() {
            for (a, b) in per_atom.iter().enumerate() {
                for (d, f) in out[a].iter_mut().enumerate() {
                    let slope = &slopes[3 * s + d][a];
                    *f -= b.iter().zip(slope).map(|(b, x)| b * x).sum::<f64>();
                }
            }
        }
        out
    }

    /// `Re Σ_G f(G) e^{iG·τ_a} Q_p(G)*` for every field f (on this rank's sphere entries),
    /// atom and pair (`[field][atom][pair]`), summed over the G-vector group: each species'
    /// sums over the fixed ranges of [`ordered_sum`] (the same on any thread count), each
    /// range's `Q_p` formed once. The fields are transforms of real fields (`f(-G) = f(G)*`,
    /// as `Q_p` and the phases are), so each +-G pair's two terms have one real part: it is
    /// taken twice at the pair's upper-half entry and the mirror's block is skipped where
    /// it holds no upper-half entry (half the sphere on one rank). Collective.
    fn integrals(&self, model: &Model, basis: &Basis, v_g: &[Vec<Complex64>]) -> Becsum {
        let natoms = model.crystal.atoms.len();
        let phases = AtomPhases::of(model, basis);
        let mut out: Becsum = vec![vec![Vec::new(); natoms]; v_g.len()];
        for (sp, pairs) in self.species.iter().enumerate() {
            let Some(pairs) = pairs else { continue };
            let atoms: Vec<usize> = (0..natoms)
                .filter(|&a| model.crystal.atoms[a].species == sp)
                .collect();
            let np = pairs.terms.len();
            if np == 0 {
                continue;
            }
            let zero = vec![0.0; v_g.len() * atoms.len() * np];
            let part =
                |r: Range<usize>| self.integrals_on(basis, (sp, np), (&atoms, &phases), v_g, r);
            let sums = ordered_sum(basis.rho_g.len(), zero, part, |mut a, b| {
                a.iter_mut().zip(b).for_each(|(x, y)| *x += y);
                a
            });
            let mut it = sums.chunks(np);
            for out_s in out.iter_mut() {
                for &a in &atoms {
                    out_s[a] = it.next().expect("a sum per field, atom and pair").to_vec();
                }
            }
        }
        let mut flat: Vec<f64> = out.iter().flatten().flatten().copied().collect();
        basis.sum_over_rho(&mut flat);
        let mut it = flat.into_iter();
        for x in out.iter_mut().flatten().flatten() {
            *x = it.next().expect("as many sums as values");
        }
        out
    }

    /// The sums of [`Self::integrals`] for the `np` pairs of species `sp` and its `atoms` over
    /// the entries `range`, as `[field][atom][pair]`, each added up entry by entry in order;
    /// the range is worked through in blocks of [`BLOCK`] entries, each block's `Q_p` formed
    /// once (np × 4 KiB: O's 36 pairs 147 KiB).
    fn integrals_on(
        &self,
        basis: &Basis,
        (sp, np): (usize, usize),
        (atoms, phases): (&[usize], &AtomPhases),
        v_g: &[Vec<Complex64>],
        range: Range<usize>,
    ) -> Vec<f64> {
        let zero = Complex64::new(0.0, 0.0);
        let mut sums = vec![0.0; v_g.len() * atoms.len() * np];
        let (mut q, mut e, mut w) = (Vec::new(), Vec::new(), Vec::new());
        let mut pair_weight = Vec::new();
        for start in range.clone().step_by(BLOCK) {
            let block = start..range.end.min(start + BLOCK);
            let len = block.len();
            pair_weight.clear();
            pair_weight.extend(
                basis.rho_millers[block.clone()]
                    .iter()
                    .map(conjugate_pair_weight),
            );
            if pair_weight.iter().all(|&x| x == 0.0) {
                continue;
            }
            q.resize(np * len, zero);
            e.resize(len, zero);
            w.resize(len, zero);
            for (p, q) in q.chunks_mut(len).enumerate() {
                self.pair_charge(basis, (sp, p), block.clone(), q);
            }
            for (i, &a) in atoms.iter().enumerate() {
                phases.fill(a, basis, block.clone(), &mut e[..len]);
                for (f, v) in v_g.iter().enumerate() {
                    let v = &v[block.clone()];
                    (w.iter_mut().zip(v).zip(&e).zip(&pair_weight))
                        .for_each(|(((w, v), e), x)| *w = v * e.conj() * x);
                    let slot = &mut sums[(f * atoms.len() + i) * np..][..np];
                    for (x, q) in slot.iter_mut().zip(q.chunks(len)) {
                        *x = (w.iter().zip(q)).fold(*x, |x, (w, q)| x + (w * q.conj()).re);
                    }
                }
            }
        }
        sums
    }
}

/// Entries per parallel block of [`AugmentationCharges::density`] (its spin × pair sums of a
/// block stay in the cache: 2 spins × 36 pairs × 256 × 16 B = 295 kB).
const BLOCK: usize = 256;

/// Every atom's `e^{-iG·τ}` factors, to form its phases on any entries of the density sphere.
struct AtomPhases(Vec<crate::terms::nonlocal::AtomPhase>);

impl AtomPhases {
    fn of(model: &Model, basis: &Basis) -> Self {
        let of = |x| crate::terms::nonlocal::AtomPhase::new(x, [0.0; 3], &basis.rho_millers);
        Self(model.crystal.atoms.iter().map(|a| of(a.frac)).collect())
    }

    /// Atom `a`'s `e^{-iG·τ_a}` on this rank's entries `range`, into `out` (as long).
    fn fill(&self, a: usize, basis: &Basis, range: Range<usize>, out: &mut [Complex64]) {
        let m = &basis.rho_millers[range];
        out.iter_mut()
            .zip(m)
            .for_each(|(o, m)| *o = self.0[a].of(m));
    }
}

/// The pairs of a species with augmentation `aug` on `basis`' density-sphere shells.
fn species_pairs(aug: &crate::pseudo::augmentation::Augmentation, basis: &Basis) -> SpeciesPairs {
    let comps = aug.components();
    let ap = YlmProducts::shared();
    let terms = pairs(comps.len())
        .map(|(ih, jh)| {
            let (a, b) = (comps[ih], comps[jh]);
            product_ls(a.l, b.l)
                .filter_map(|big_l| {
                    let harmonics: Vec<(usize, f64)> = (0..2 * big_l + 1)
                        .map(|m| (big_l * big_l + m, ap.ap((big_l, m), (a.l, a.m), (b.l, b.m))))
                        .filter(|&(_, c)| c != 0.0)
                        .collect();
                    let radial: Vec<f64> = basis
                        .rho_shell_norm
                        .iter()
                        .map(|&q| 4.0 * PI * aug.qrad(big_l, a.beta, b.beta, q))
                        .collect();
                    let nonzero = !harmonics.is_empty() && radial.iter().any(|&r| r != 0.0);
                    nonzero.then_some(AngularTerm {
                        big_l,
                        betas: (a.beta, b.beta),
                        radial,
                        harmonics,
                    })
                })
                .collect()
        })
        .collect();
    SpeciesPairs {
        ncomp: comps.len(),
        terms,
    }
}

/// `Y_LM(Ĝ)` for L ≤ `lmax` (at most [`LMAX_PRODUCT`]) of every vector of `gs`, as
/// `[L² + M][g]`.
fn ylm_table(gs: &[[f64; 3]], lmax: usize) -> Vec<Vec<f64>> {
    let mut ylm = vec![vec![0.0; gs.len()]; (lmax + 1).pow(2)];
    let mut y = [0.0; 2 * LMAX_PRODUCT + 1];
    for (i, g) in gs.iter().enumerate() {
        for l in 0..=lmax {
            real_ylm_upto6(l, *g, &mut y);
            for m in 0..2 * l + 1 {
                ylm[l * l + m][i] = y[m];
            }
        }
    }
    ylm
}

/// (-i)^l.
fn minus_i_pow(l: usize) -> Complex64 {
    [
        Complex64::new(1.0, 0.0),
        Complex64::new(0.0, -1.0),
        Complex64::new(-1.0, 0.0),
        Complex64::new(0.0, 1.0),
    ][l % 4]
}

/// The occupied bands' `becsum` (see the module doc) of `psi[s][k]` (this rank's bands) with
/// band weights `weights[s][k][n]` (k weight times occupation, this rank's bands,
/// [`crate::terms::term::band_weights`]), projected by the projectors `held` gives for a
/// (spin, k) block where it has them (the SCF's nonlocal term), else by ones built here.
/// Collective over the ranks that hold bands.
pub fn becsum<'h, T: BandScalar>(
    model: &Model,
    basis: &Basis,
    charges: &AugmentationCharges,
    psi: &[Vec<Mat<T>>],
    weights: &[Vec<Vec<f64>>],
    held: impl Fn(usize, usize) -> Option<&'h KProjectors<T>>,
) -> Becsum {
    let par = &*basis.parallel;
    let natoms = model.crystal.atoms.len();
    let ncomp: Vec<usize> = (0..natoms)
        .map(|a| charges.components(model.crystal.atoms[a].species))
        .collect();
    let mut out: Becsum = psi
        .iter()
        .map(|_| ncomp.iter().map(|&n| vec![0.0; pair_count(n)]).collect())
        .collect();
    par.time_block_work(|| {
        for (s, (psi_s, w_s)) in psi.iter().zip(weights).enumerate() {
            for (k, kpt) in basis.kpoints.iter().enumerate() {
                if !par.owns(s, k) {
                    continue;
                }
                let built;
                let proj = match held(s, k) {
                    Some(p) => p,
                    None => {
                        built = KProjectors::<T>::new(model, kpt, basis.volume);
                        &built
                    }
                };
                let c = proj.projections(psi_s[k].as_ref());
                for (a, first) in proj.atom_columns() {
                    add_pairs(&c, first, ncomp[a], &w_s[k], &mut out[s][a]);
                }
            }
        }
    });
    let mut flat = flat_becsum(&out);
    par.sum_over_blocks(&mut flat);
    refill_becsum(&mut out, &flat);
    out
}

/// `(2 - δ_ij) Re Σ_n w_n c_in* c_jn` of the components `first..first + n` of `c` into
/// `sums` (pairs of n).
fn add_pairs<T: BandScalar>(c: &Mat<T>, first: usize, n: usize, w: &[f64], sums: &mut [f64]) {
    for ((i, j), s) in pairs(n).zip(sums.iter_mut()) {
        let factor = if i == j { 1.0 } else { 2.0 };
        *s += factor
            * w.iter()
                .enumerate()
                .map(|(b, wb)| wb * (c[(first + i, b)].cj() * c[(first + j, b)]).real())
                .sum::<f64>();
    }
}
