//! Starting bands from atomic orbitals (QE's `startingwfc = 'atomic'`).
//!
//! Contract: [`AtomicStart::new`] solves each species' pseudo-atom once
//! ([`Pseudopotential::atomic_orbitals`](crate::pseudo::Pseudopotential::atomic_orbitals)) and
//! tabulates each orbital's form factor on a uniform grid of |q|. [`AtomicStart::bands`] gives,
//! at one k-point, every atom's orbitals (l, m) as band vectors on this rank's rows,
//! `c(G) = Ω^{-1/2} (-i)^l φ(|k+G|) Y_lm(k+G) e^{-i(k+G)·τ}` (the construction of the nonlocal
//! projectors), in the order atom, orbital, m. Every value depends on its plane wave only, so
//! the vectors are the same on every layout. The SCF fills the bands the orbitals do not cover
//! with random vectors, or reduces more orbitals than bands to the lowest Ritz vectors of
//! their span ([`crate::eigensolver::ritz_start`]).

use crate::bands::{col_mut, BandScalar};
use crate::basis::{Basis, Kpoint};
use crate::model::Model;
use crate::special::real_ylm;
use crate::terms::nonlocal::{kpg_norms, AtomPhase};
use num_complex::Complex64;
use planewave_linalg::Mat;

pub use planewave_input::BandStart;

/// Spacing of the form-factor tables (bohr⁻¹).
const DQ: f64 = 0.01;

/// One orbital's form factor `φ(q)` on `q = i * DQ`.
struct Table {
    l: usize,
    label: String,
    values: Vec<f64>,
}

impl Table {
    /// `φ(q)` by QE's 4-point Lagrange interpolation on the points `i..i + 3` with
    /// `i = ⌊q / DQ⌋` (q within the table).
    fn at(&self, q: f64) -> f64 {
        let x = q / DQ;
        let i = (x as usize).min(self.values.len() - 4);
        let p = x - i as f64;
        let (u, v, w) = (1.0 - p, 2.0 - p, 3.0 - p);
        let t = &self.values[i..i + 4];
        t[0] * u * v * w / 6.0 + t[1] * p * v * w / 2.0 - t[2] * p * u * w / 2.0
            + t[3] * p * u * v / 6.0
    }
}

/// The tabulated orbitals of every species.
pub struct AtomicStart {
    /// Per species, its orbitals.
    tables: Vec<Vec<Table>>,
}

impl AtomicStart {
    /// Solve every species' pseudo-atom and tabulate its orbitals up to the largest |k+G| of
    /// `basis` on this rank.
    pub fn new(model: &Model, basis: &Basis) -> Self {
        let qmax = basis.kpoints.iter().flat_map(kpg_norms).fold(0.0, f64::max);
        let n = (qmax / DQ) as usize + 5;
        let tables = model
            .species
            .iter()
            .map(|sp| {
                sp.pseudo
                    .atomic_orbitals()
                    .iter()
                    .map(|o| Table {
                        l: o.l,
                        label: o.label.clone(),
                        values: o.fourier_many(&(0..n).map(|i| i as f64 * DQ).collect::<Vec<_>>()),
                    })
                    .collect()
            })
            .collect();
        AtomicStart { tables }
    }

    /// Atomic orbitals of all atoms of `model` (0: the pseudopotentials give none).
    pub fn count(&self, model: &Model) -> usize {
        let per: Vec<usize> = self
            .tables
            .iter()
            .map(|t| t.iter().map(|o| 2 * o.l + 1).sum())
            .collect();
        model.crystal.atoms.iter().map(|a| per[a.species]).sum()
    }

    /// What each column of [`Self::bands`] is: (atom, the orbital's index within its species
    /// from 0, its label, l, m from 0), in the columns' order.
    pub fn columns(&self, model: &Model) -> Vec<(usize, usize, String, usize, usize)> {
        let mut out = Vec::new();
        for (atom, a) in model.crystal.atoms.iter().enumerate() {
            for (i, o) in self.tables[a.species].iter().enumerate() {
                out.extend((0..2 * o.l + 1).map(|m| (atom, i, o.label.clone(), o.l, m)));
            }
        }
        out
    }

    /// Every atom's orbitals at `kpt` as band vectors (`kpt.dim()` rows, [`Self::count`]
    /// columns), of a cell of `volume` (bohr³).
    pub fn bands<T: BandScalar>(&self, model: &Model, kpt: &Kpoint, volume: f64) -> Mat<T> {
        let norm = 1.0 / volume.sqrt();
        let qs = kpg_norms(kpt);
        // Per species: Ω^{-1/2} φ(|k+G|) Y_lm(k+G), one column per (orbital, m).
        let shapes: Vec<Vec<(usize, Vec<f64>)>> = self
            .tables
            .iter()
            .map(|orbitals| {
                let mut cols = Vec::new();
                let mut ylm = [0.0; 7];
                for o in orbitals {
                    let mut per_m = vec![vec![0.0; qs.len()]; 2 * o.l + 1];
                    for (ig, g) in kpt.kpg.iter().enumerate() {
                        real_ylm(o.l, *g, &mut ylm);
                        let f = norm * o.at(qs[ig]);
                        for (m, c) in per_m.iter_mut().enumerate() {
                            c[ig] = f * ylm[m];
                        }
                    }
                    cols.extend(per_m.into_iter().map(|c| (o.l, c)));
                }
                cols
            })
            .collect();
        let mut out = Mat::<T>::zeros(kpt.dim(), self.count(model));
        let mut col = 0;
        let mut phase = vec![Complex64::new(0.0, 0.0); qs.len()];
        for atom in &model.crystal.atoms {
            let f = AtomPhase::new(atom.frac, kpt.frac, &kpt.millers);
            for (p, m) in phase.iter_mut().zip(&kpt.millers) {
                *p = f.of(m);
            }
            for (l, shape) in &shapes[atom.species] {
                let dst = col_mut(out.as_mut().subcols_mut(col, 1));
                T::phased_into(kpt.holds_g0(), 0, *l, shape, &phase, dst);
                col += 1;
            }
        }
        out
    }
}
