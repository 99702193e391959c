//! `Term`: the one interface of the energy terms, and the driver side of it.
//!
//! Contract:
//! - A term reads a [`State`] (model, basis, density, bands with their weights) and gives its
//!   energy, its part of the local potential (density terms), its forces and its stress; what
//!   it does not contribute it leaves at the defaults (`None`, zero).
//! - Terms compute from this rank's data and say how far their result is summed with a
//!   [`Share`]: `Whole` (the same on every rank: ion terms), `Grid` (this rank's part of a
//!   sum over the density sphere or grid, which a G-vector group deals: density terms) or
//!   `Blocks` (this rank's k-point group's sum over the (spin, k) blocks it owns; sums over
//!   plane waves inside a block are complete over the G-vector group, as in the block
//!   algebra). The driver ([`Share::complete`]) does the sums over the G-vector group or the
//!   k-point groups, in one place.
//! - Potentials are local: values at this rank's grid points, no reduction.
//! - A term that acts on the bands directly gives its [`Operator`] on each (spin, k) block
//!   ([`Term::operator`]); a density term acts through its potential, which the SCF sums over
//!   the density terms into one real-space operator. The Hamiltonian of a block is assembled
//!   from these ([`block_operators`], [`crate::hamiltonian::KHamiltonian::assemble`]).
//! - [`standard`] lists the terms of the Kohn–Sham functional in a fixed order; the SCF loop,
//!   forces and stress iterate over it, so a new term touches its own file and that list.

use crate::bands::BandScalar;
use crate::basis::Basis;
use crate::density::Density;
use crate::exx::ace::Ace;
use crate::model::Model;
use crate::operators::Operator;
use num_complex::Complex64;
use planewave_linalg::Mat;

/// Band data of a state: `psi[s][k]` (this rank's bands; empty for blocks another k-point
/// group computes) and their weights `w[s][k][n]` (k-point weight times occupation).
#[derive(Clone, Copy)]
pub struct Bands<'a, T: BandScalar> {
    /// Wavefunctions per spin channel and k-point.
    pub psi: &'a [Vec<Mat<T>>],
    /// Band weights per spin channel and k-point.
    pub weights: &'a [Vec<Vec<f64>>],
    /// The bands' eigenvalues per spin channel and k-point (this rank's bands, Ha), where
    /// known: the forces of ultrasoft species need them.
    pub eigenvalues: Option<&'a [Vec<Vec<f64>>]>,
}

/// Band weights (k-point weight times occupation) of every (spin, k) for occupations
/// `occ[s][k][n]`, for this rank's bands ([`crate::parallel::Parallel::local_bands`]).
pub fn band_weights(basis: &Basis, occ: &[Vec<Vec<f64>>]) -> Vec<Vec<Vec<f64>>> {
    occ.iter()
        .map(|occ_s| {
            basis
                .kpoints
                .iter()
                .zip(occ_s)
                .map(|(k, o)| {
                    let mine = basis.parallel.local_band_values(o);
                    mine.iter().map(|f| f * k.weight).collect()
                })
                .collect()
        })
        .collect()
}

/// What the terms read.
pub struct State<'a, T: BandScalar> {
    /// The physical system.
    pub model: &'a Model,
    /// The discretisation and the run's layout.
    pub basis: &'a Basis,
    /// The density (per spin channel).
    pub rho: &'a Density,
    /// The NLCC core density (sphere, grid), if any species has one.
    pub core: Option<&'a (Vec<Complex64>, Vec<f64>)>,
    /// The occupied bands (None for density-only uses such as the potential).
    pub bands: Option<Bands<'a, T>>,
    /// The density terms' summed local potential of `rho` per spin channel at this rank's
    /// grid points (Ha), where the driver has it: the augmentation forces read it.
    pub local_potential: Option<&'a [Vec<f64>]>,
    /// -TS of the occupations (Ha).
    pub minus_ts: f64,
    /// Whether a hybrid's exact exchange is on: its semilocal part then has the exchange
    /// scaled ([`State::exchange_mix`]). Off during the semilocal start of a hybrid run.
    pub exx_on: bool,
    /// The compressed exchange operators of the (spin, k) blocks this rank computes, which
    /// give the Fock energy of the bands (None: no Fock energy, e.g. forces).
    pub ace: Option<&'a [Vec<Option<Ace<T>>>]>,
}

impl<T: BandScalar> State<'_, T> {
    /// The semilocal exchange of a hybrid with exact exchange on (PBE0: all of it times 1 - a;
    /// HSE: less a times its short-range part), else all of it.
    pub fn exchange_mix(&self) -> crate::xc::ExchangeMix {
        use crate::xc::ExchangeMix;
        match &self.model.hybrid {
            Some(h) if self.exx_on => match h.kernel.screening {
                None => ExchangeMix {
                    scale: 1.0 - h.fraction,
                    short_range: None,
                },
                Some(w) => ExchangeMix {
                    scale: 1.0,
                    short_range: Some((h.fraction, w)),
                },
            },
            _ => ExchangeMix::FULL,
        }
    }
}

/// A contribution and how far it is summed.
#[derive(Debug, Clone)]
pub enum Share<V> {
    /// The same on every rank.
    Whole(V),
    /// This rank's part of a sum over the density sphere or grid.
    Grid(V),
    /// This rank's k-point group's sum over its (spin, k) blocks.
    Blocks(V),
}

/// Values the driver can sum over k-point groups.
pub trait Summable {
    /// The values as one flat slice.
    fn flat_mut(&mut self) -> &mut [f64];
}

impl Summable for f64 {
    fn flat_mut(&mut self) -> &mut [f64] {
        std::slice::from_mut(self)
    }
}

impl Summable for Vec<[f64; 3]> {
    fn flat_mut(&mut self) -> &mut [f64] {
        self.as_flattened_mut()
    }
}

impl Summable for [[f64; 3]; 3] {
    fn flat_mut(&mut self) -> &mut [f64] {
        self.as_flattened_mut()
    }
}

impl<V: Summable> Share<V> {
    /// The whole value on every rank: grid shares summed over the G-vector group, block
    /// shares over the k-point groups of `basis`' layout (collective unless `Whole`).
    pub fn complete(self, basis: &Basis) -> V {
        match self {
            Share::Whole(v) => v,
            Share::Grid(mut v) => {
                basis.sum_over_rho(v.flat_mut());
                v
            }
            Share::Blocks(mut v) => {
                basis.parallel.sum_over_blocks(v.flat_mut());
                v
            }
        }
    }
}

/// One energy term of the Kohn–Sham functional.
pub trait Term<T: BandScalar>: Sync {
    /// Name in reports and the results JSON ("kinetic", "local", ...).
    fn name(&self) -> &'static str;
    /// Name of the energy in the summary ("exact exchange", "-TS (smearing)"); the name by
    /// default.
    fn label(&self) -> &'static str {
        self.name()
    }
    /// Energy (Ha); None for a term with no energy of its own (the core correction, whose
    /// energy is inside XC).
    fn energy(&self, _s: &State<'_, T>) -> Option<Share<f64>> {
        None
    }
    /// This term's part of the local potential, per spin channel at this rank's grid points
    /// (Ha).
    fn potential(&self, _s: &State<'_, T>) -> Option<Vec<Vec<f64>>> {
        None
    }
    /// This term's potential with its energy at the same density, for a term whose energy
    /// costs as much again as its potential (GGA XC: the gradient transforms and the
    /// functional): far from convergence the SCF then takes the energy at its output density
    /// to first order about the input ([`Potentials::expanded_energy`]). None (the default):
    /// the energy is always evaluated afresh, and the potential comes from
    /// [`Term::potential`].
    fn potential_with_energy(&self, _s: &State<'_, T>) -> Option<(Vec<Vec<f64>>, Share<f64>)> {
        None
    }
    /// This term's operator on the bands of the (spin, k) block `block` that this rank
    /// computes, for a term that acts on bands directly (kinetic, nonlocal, exchange). None
    /// (the default): a density term, acting through [`Term::potential`], or no operator.
    fn operator<'s>(
        &'s self,
        _s: &State<'s, T>,
        _block: (usize, usize),
    ) -> Option<Operator<'s, T>> {
        None
    }
    /// The overlap S of the block's generalised eigenproblem, for the term that makes one
    /// (the nonlocal term of ultrasoft species, [`crate::overlap`]). None by default.
    fn overlap<'s>(&'s self, _s: &State<'s, T>, _block: (usize, usize)) -> Option<Operator<'s, T>> {
        None
    }
    /// The augmentation's band sums `becsum` of `psi` with `weights`
    /// ([`crate::augmentation::becsum`]), from the term that projects the bands anyway (the
    /// nonlocal term, with the projectors its operator holds), so the SCF does not build them
    /// again. None by default. Collective over the ranks that hold bands.
    fn becsum(
        &self,
        _charges: &crate::augmentation::AugmentationCharges,
        _psi: &[Vec<Mat<T>>],
        _weights: &[Vec<Vec<f64>>],
    ) -> Option<crate::augmentation::Becsum> {
        None
    }
    /// Take the screening `delta` (`[spin][atom][pair]`, Ha) of the local potential, for a
    /// term whose operator depends on it (the ultrasoft coupling D^0 + ΔD,
    /// [`crate::augmentation`]). Nothing by default.
    fn screen(&self, _delta: &crate::augmentation::Becsum) {}
    /// Forces `-dE/dtau` (Ha/bohr, per atom; not yet symmetrised).
    fn forces(&self, _s: &State<'_, T>) -> Option<Share<Vec<[f64; 3]>>> {
        None
    }
    /// Stress `-(1/Omega) dE/d eps` (Ha/bohr^3, QE sign; not yet symmetrised).
    fn stress(&self, _s: &State<'_, T>) -> Option<Share<[[f64; 3]; 3]>> {
        None
    }
}

/// The terms of the Kohn–Sham functional of `model` on `basis`, in report order: exact
/// exchange for a hybrid only, -TS with smearing only.
pub fn standard<'a, T: BandScalar + 'a>(
    model: &'a Model,
    basis: &'a Basis,
) -> Vec<Box<dyn Term<T> + 'a>> {
    standard_and_charges(model, basis).0
}

/// A list of terms.
pub type Terms<'a, T> = Vec<Box<dyn Term<T> + 'a>>;

/// Augmentation charges shared by the terms and the SCF.
pub type SharedCharges = std::sync::Arc<crate::augmentation::AugmentationCharges>;

/// [`standard`] and the ultrasoft species' augmentation charges its augmentation term holds
/// (None: norm-conserving only), for the density and the screening to share (they are the
/// largest tables of an ultrasoft run).
pub fn standard_and_charges<'a, T: BandScalar + 'a>(
    model: &'a Model,
    basis: &'a Basis,
) -> (Terms<'a, T>, Option<SharedCharges>) {
    let mut terms: Vec<Box<dyn Term<T> + 'a>> = vec![
        Box::new(super::kinetic::Kinetic),
        Box::new(super::local::Local::new(model, basis)),
        Box::new(super::nonlocal::Nonlocal::new(model, basis)),
        Box::new(super::hartree::Hartree),
        Box::new(super::xc::Xc),
    ];
    if model.hybrid.is_some() {
        terms.push(Box::new(super::exact_exchange::ExactExchange));
    }
    let charges =
        crate::augmentation::AugmentationCharges::new(model, basis).map(std::sync::Arc::new);
    if let Some(charges) = &charges {
        terms.push(Box::new(super::augmentation::Augmentation::new(
            charges.clone(),
        )));
        if let Some(paw) = super::paw::Paw::new(model, charges) {
            terms.push(Box::new(paw));
        }
    }
    terms.push(Box::new(super::ewald::Ewald::new(model)));
    terms.push(Box::new(super::core_correction::CoreCorrection));
    if !matches!(model.smearing, crate::smearing::Smearing::None) {
        terms.push(Box::new(super::entropy::Entropy));
    }
    #[cfg(test)]
    terms.extend(super::constant_shift::active(basis));
    (terms, charges)
}

/// The operators of `terms` on the (spin, k) block `block` of state `s`, with `potential` (the
/// density terms' summed potential of the block's spin channel, [`potentials`]) as the
/// real-space one: what [`crate::hamiltonian::KHamiltonian::assemble`] takes.
pub fn block_operators<'s, T: BandScalar>(
    terms: &'s [Box<dyn Term<T> + '_>],
    s: &State<'s, T>,
    block: (usize, usize),
    potential: &'s [f64],
) -> Vec<Operator<'s, T>> {
    let mut ops: Vec<Operator<'s, T>> = terms.iter().filter_map(|t| t.operator(s, block)).collect();
    ops.extend(terms.iter().filter_map(|t| t.overlap(s, block)));
    ops.push(Operator::RealSpace(potential));
    ops
}

/// Hand the screening `delta` of the local potential to every term ([`Term::screen`]).
pub fn screen<T: BandScalar>(terms: &[Box<dyn Term<T> + '_>], delta: &crate::augmentation::Becsum) {
    terms.iter().for_each(|t| t.screen(delta));
}

/// The local potential of one density: the terms' sum, and the expansions of the terms that
/// gave their energy with it ([`Term::potential_with_energy`]).
pub struct Potentials {
    /// The total local potential per spin channel at this rank's grid points (Ha).
    pub total: Vec<Vec<f64>>,
    /// (term name, its energy (complete), its potential).
    expansions: Vec<(&'static str, f64, Vec<Vec<f64>>)>,
}

impl Potentials {
    /// Whether some term gave its energy with its potential.
    pub fn expandable(&self) -> bool {
        !self.expansions.is_empty()
    }

    /// The energy of term `name` at the density `rho` to first order about `rho0`, the density
    /// these potentials are of: `E[rho0] + int (rho - rho0) v[rho0]` (off by the second order
    /// in `rho - rho0`; Quantum ESPRESSO's SCF energies are such estimates too). None when the
    /// term gave no expansion. Collective on the G-vector group.
    pub fn expanded_energy(
        &self,
        name: &str,
        basis: &Basis,
        rho0: &Density,
        rho: &Density,
    ) -> Option<f64> {
        let (_, e0, v) = self.expansions.iter().find(|x| x.0 == name)?;
        let mut linear = [0.0];
        for ((v, r), r0) in v.iter().zip(&rho.r).zip(&rho0.r) {
            linear[0] += v
                .iter()
                .zip(r)
                .zip(r0)
                .map(|((v, a), b)| v * (a - b))
                .sum::<f64>();
        }
        basis.sum_over_rho(&mut linear);
        Some(e0 + linear[0] * basis.dv())
    }
}

/// The local potential of state `s` (density only): the sum of the terms' potentials, with
/// the expansions of the terms that give their energy with it. Collective on the G-vector
/// group.
pub fn potentials<T: BandScalar>(terms: &[Box<dyn Term<T> + '_>], s: &State<'_, T>) -> Potentials {
    let nspin = s.rho.r.len();
    let n = s.basis.rho_real_len();
    let mut total = vec![vec![0.0; n]; nspin];
    let mut expansions = Vec::new();
    for t in terms {
        let (p, energy) = match t.potential_with_energy(s) {
            Some((p, e)) => (p, Some(e.complete(s.basis))),
            None => match t.potential(s) {
                Some(p) => (p, None),
                None => continue,
            },
        };
        for (vs, ps) in total.iter_mut().zip(&p) {
            for (a, b) in vs.iter_mut().zip(ps) {
                *a += b;
            }
        }
        if let Some(e) = energy {
            expansions.push((t.name(), e, p));
        }
    }
    Potentials { total, expansions }
}
