//! Löwdin projections of the bands on orthonormalised pseudo-atomic orbitals, as projwfc.x.
//!
//! Contract: [`compute`] takes a finished run (an SCF or a fixed-density step) and gives, for
//! every (spin, k, band), the weight `|⟨φ̃_a|ψ_n⟩|²` of the band on each atomic orbital `a`
//! (per atom, orbital and m, in [`AtomicStart::bands`]' order), where `φ̃ = φ O^{-1/2}` are
//! the orbitals of all atoms made orthonormal with the least change (Löwdin), `O = ⟨φ|φ⟩`.
//! The orbitals are the files' `PP_PSWFC` (or GTH's solved pseudo-atom). A band's weights add
//! to at most 1. The weights at an irreducible k-point are those of its whole star: averaged
//! over the symmetry group, each operation moving an atom's l-block to the atom's image and
//! rotating it by the real harmonics' matrix (projwfc.x's `lsym`), so equivalent atoms and
//! the m of a cubic site come out equal. Collective: every rank ends with the whole table,
//! the same on every layout. None when no species has orbitals.

use planewave_linalg::{matmul, overlap, Mat};
use serde::{Deserialize, Serialize};

use crate::atomic_start::AtomicStart;
use crate::bands::BandScalar;
use crate::basis::Kpoint;
use crate::overlap::hermitian_power;
use crate::scf::{ScfResult, Wavefunctions};
use crate::setup::Setup;

/// One atomic orbital of the projection basis.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Orbital {
    /// The atom, from 0.
    pub atom: usize,
    /// Its species' symbol.
    pub species: String,
    /// The radial orbital's index within the species, from 0 (projwfc.x's `wfc#` less 1).
    pub wfc: usize,
    /// Its label ("3S").
    pub label: String,
    /// Angular momentum and magnetic index (0..2l, the real harmonics' order).
    pub l: usize,
    pub m: usize,
}

/// The projections of every band on every orbital.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Projections {
    pub orbitals: Vec<Orbital>,
    /// `weights[spin][k][band][orbital]`: `|⟨φ̃|ψ⟩|²`.
    pub weights: Vec<Vec<Vec<Vec<f64>>>>,
    /// Löwdin charges: electrons per orbital, `Σ_k w_k Σ_n f_nk |p|²` with the run's
    /// occupations (spin factor included), summed over spin.
    pub charges: Vec<f64>,
}

/// The projections of `r`'s bands on `at`'s atomic orbitals (None without orbitals, or with
/// ultrasoft species, whose Löwdin projections need the overlap S: not written yet).
/// Collective.
pub fn compute(at: &Setup, r: &ScfResult) -> Option<Projections> {
    let (model, basis) = (&at.model, &at.basis);
    if model
        .species
        .iter()
        .any(|s| s.pseudo.augmentation().is_some())
    {
        return None;
    }
    let start = AtomicStart::new(model, basis);
    let n = start.count(model);
    if n == 0 {
        return None;
    }
    let (nspin, nk) = (r.eigenvalues.len(), basis.kpoints.len());
    let nbands = r.eigenvalues[0][0].len();
    let par = &basis.parallel;
    let mine = par.local_bands(nbands);
    let columns = start.columns(model);
    let sym = Symmetriser::new(model, &columns);
    let mut flat = vec![0.0; nspin * nk * nbands * n];
    for (s, k) in par.owned_blocks(nspin, nk) {
        let kpt = &basis.kpoints[k];
        let p = match &r.wavefunctions {
            Wavefunctions::Complex(w) => sym.weights(&block(&start, at, kpt, &w[s][k])),
            Wavefunctions::Real(w) => sym.weights(&block(&start, at, kpt, &w[s][k])),
        };
        for (j, &band) in mine.iter().enumerate() {
            let at = ((s * nk + k) * nbands + band) * n;
            flat[at..at + n].copy_from_slice(&p[j]);
        }
    }
    par.sum_over_blocks(&mut flat);
    let mut rows = flat.chunks(n).map(<[f64]>::to_vec);
    let weights: Vec<Vec<Vec<Vec<f64>>>> = (0..nspin)
        .map(|_| {
            (0..nk)
                .map(|_| {
                    (0..nbands)
                        .map(|_| rows.next().unwrap_or_default())
                        .collect()
                })
                .collect()
        })
        .collect();
    let orbitals = (columns.into_iter())
        .map(|(atom, wfc, label, l, m)| Orbital {
            atom,
            species: model.species[model.crystal.atoms[atom].species]
                .symbol
                .clone(),
            wfc,
            label,
            l,
            m,
        })
        .collect();
    let kweights: Vec<f64> = basis.kpoints.iter().map(|k| k.weight).collect();
    let charges = charges(&weights, &kweights, &r.occupations.occ);
    Some(Projections {
        orbitals,
        weights,
        charges,
    })
}

/// `⟨φ̃_a|ψ_j⟩` for this rank's bands `psi` at `kpt` (orbitals × bands).
fn block<T: BandScalar>(start: &AtomicStart, at: &Setup, kpt: &Kpoint, psi: &Mat<T>) -> Mat<T> {
    let phi = start.bands::<T>(&at.model, kpt, at.model.crystal.volume);
    let summed = |m: Mat<T>| crate::gvectors::sum_matrix(m, |flat| kpt.sum_over_g(flat));
    let o = summed(overlap(phi.as_ref(), phi.as_ref()));
    let a = summed(overlap(phi.as_ref(), psi.as_ref()));
    matmul(
        hermitian_power(&o, -0.5, "orbitals' overlap")
            .expect("linearly independent orbitals")
            .as_ref(),
        a.as_ref(),
    )
}

/// The group average that turns the projections at an irreducible k-point into those of its
/// star: operation S takes the l-block of atom a to atom S(a), rotated by the real harmonics'
/// matrix D^l(S), so the weight of (S(a), m) is `|(D^l(S) p_a)_m|²` averaged over the group.
struct Symmetriser {
    /// Per operation, per l-block (its first column and size): the block it goes to and D^l.
    moves: Vec<Vec<(usize, usize, Mat<f64>)>>,
    /// The first column of each l-block, in order.
    blocks: Vec<(usize, usize)>,
}

impl Symmetriser {
    fn new(model: &crate::model::Model, columns: &[(usize, usize, String, usize, usize)]) -> Self {
        // l-blocks: (atom, wfc) runs of 2l + 1 columns.
        let blocks: Vec<(usize, usize)> = (0..columns.len())
            .filter(|&c| columns[c].4 == 0)
            .map(|c| (c, 2 * columns[c].3 + 1))
            .collect();
        let start_of = |atom: usize, wfc: usize| {
            (blocks.iter())
                .find(|(c, _)| columns[*c].0 == atom && columns[*c].1 == wfc)
                .map(|(c, _)| *c)
        };
        let crystal = &model.crystal;
        let moves = (model.symmetries.iter())
            .filter_map(|op| {
                let r = crate::symmetry::cartesian_rotation(op, crystal);
                (blocks.iter())
                    .map(|&(c, n)| {
                        let (atom, wfc, _, l, _) = &columns[c];
                        let image = crate::symmetry::image(op, crystal, *atom)?;
                        Some((
                            start_of(image, *wfc)?,
                            n,
                            crate::symmetry::harmonic_rotation(*l, &r),
                        ))
                    })
                    .collect::<Option<Vec<_>>>()
            })
            .collect();
        Symmetriser { moves, blocks }
    }

    /// `|p|²` of `p` (orbitals × bands) averaged over the group, one row per band.
    fn weights<T: BandScalar>(&self, p: &Mat<T>) -> Vec<Vec<f64>> {
        let w = 1.0 / self.moves.len().max(1) as f64;
        (0..p.ncols())
            .map(|j| {
                if self.moves.is_empty() {
                    return (0..p.nrows()).map(|i| p[(i, j)].abs2()).collect();
                }
                let mut out = vec![0.0; p.nrows()];
                for op in &self.moves {
                    for (&(from, n), (to, _, d)) in self.blocks.iter().zip(op) {
                        for m in 0..n {
                            let v = (0..n).fold(T::from_f64(0.0), |acc, k| {
                                acc + p[(from + k, j)].scale(d[(m, k)])
                            });
                            out[to + m] += w * v.abs2();
                        }
                    }
                }
                out
            })
            .collect()
    }
}

/// `Σ_s Σ_k w_k Σ_n f_nk |p_a|²` per orbital a.
fn charges(weights: &[Vec<Vec<Vec<f64>>>], kweights: &[f64], occ: &[Vec<Vec<f64>>]) -> Vec<f64> {
    let mut out = vec![0.0; weights[0][0].first().map_or(0, Vec::len)];
    for (ws, os) in weights.iter().zip(occ) {
        for ((bands, o), w) in ws.iter().zip(os).zip(kweights) {
            for (p, f) in bands.iter().zip(o) {
                out.iter_mut().zip(p).for_each(|(c, x)| *c += w * f * x);
            }
        }
    }
    out
}

impl Projections {
    /// The spilling parameter, projwfc.x's: the part of the `n_electrons` occupied states that
    /// the orbitals miss, `1 - Σ_a q_a / N_el` with the Löwdin charges `q_a`.
    pub fn spilling(&self, n_electrons: f64) -> f64 {
        1.0 - self.charges.iter().sum::<f64>() / n_electrons
    }
}
