//! The one-centre term of PAW species: the energy of the densities inside the atoms' spheres
//! (all-electron minus pseudo, Hartree and XC, [`crate::paw`]) and its coupling D¹_ij, which
//! the SCF adds to the screened coupling of the nonlocal term.
//!
//! Contract:
//! * The band sums are those the density carries ([`Density::becsum`], symmetrised over the
//!   crystal's operations by [`OneCentre::symmetrize`]); a density without them (a start, a
//!   restart) stands for the atoms' own ([`OneCentre::atomic`]).
//! * [`OneCentre::evaluate`] deals every PAW atom's XC sphere over the world's ranks by
//!   direction (its Hartree terms to rank 0) and sums energy and couplings once with one
//!   all-reduce (collective): the same on every rank.
//! * Forces and stress: none of its own. The energy does not depend on positions or strain
//!   at fixed band sums, and the bands see D¹ through the nonlocal term's coupling.

use super::term::{Share, State, Term};
use crate::augmentation::{
    flat_becsum, refill_becsum, zero_becsum_like, AugmentationCharges, Becsum,
};
use crate::bands::BandScalar;
use crate::density::Density;
use crate::model::Model;
use crate::paw::symmetrize::Symmetrizer;
use crate::paw::{OneCentreEnergy, PawSpecies};
use planewave_comm::{CommClass, Communicator};

/// The PAW atoms of a model and the operations that symmetrise their band sums.
pub struct OneCentre {
    symmetrizer: Option<Symmetrizer>,
    /// Zero band sums in the layout of `charges` (every atom, PAW or not).
    zero: Becsum,
}

impl OneCentre {
    /// The one-centre part of `model`, whose band sums have the layout of `charges` (None
    /// without PAW species).
    pub fn new(model: &Model, charges: &AugmentationCharges) -> Option<Self> {
        model
            .species
            .iter()
            .any(|s| s.pseudo.paw().is_some())
            .then(|| Self {
                symmetrizer: Symmetrizer::new(model),
                zero: charges.zero_becsum(model),
            })
    }

    /// The PAW data of atom `a` (None: not a PAW species).
    fn species(model: &Model, a: usize) -> Option<&PawSpecies> {
        model.species[model.crystal.atoms[a].species].pseudo.paw()
    }

    /// The (l, m index) of each projector component of atom `a` (empty: not PAW).
    fn components(model: &Model, a: usize) -> Vec<(usize, usize)> {
        Self::species(model, a).map_or_else(Vec::new, |p| p.component_ls().to_vec())
    }

    /// Symmetrise band sums (`halved`) or couplings over the crystal's operations, PAW atoms
    /// only.
    pub fn symmetrize(&self, model: &Model, values: &mut Becsum, halved: bool) {
        let Some(sym) = &self.symmetrizer else {
            return;
        };
        let comps = |a: usize| Self::components(model, a);
        for channel in values.iter_mut() {
            let mut paw: Vec<Vec<f64>> = channel
                .iter()
                .enumerate()
                .map(|(a, v)| {
                    if comps(a).is_empty() {
                        Vec::new()
                    } else {
                        v.clone()
                    }
                })
                .collect();
            sym.apply(&mut paw, &comps, halved);
            for (v, p) in channel.iter_mut().zip(paw) {
                if !p.is_empty() {
                    *v = p;
                }
            }
        }
    }

    /// The atoms' own band sums (QE's `PAW_atomic_becsum`), `[spin][atom][pair]`, with the
    /// pairs of non-PAW atoms zero.
    pub fn atomic(&self, model: &Model) -> Becsum {
        let nspin = self.zero.len();
        let mut out = self.zero.clone();
        let paw_atoms =
            (0..model.crystal.atoms.len()).filter_map(|a| Self::species(model, a).map(|p| (a, p)));
        for (a, p) in paw_atoms {
            let m0 = model.starting_magnetization.get(a).copied().unwrap_or(0.0);
            for (channel, b) in out.iter_mut().zip(p.atomic_becsum(nspin, m0)) {
                channel[a] = b;
            }
        }
        out
    }

    /// The sphere energies summed over atoms, and D¹ `[spin][atom][pair]` (zero for non-PAW
    /// atoms), of `becsum`. Collective over `world`.
    pub fn evaluate(
        &self,
        model: &Model,
        becsum: &Becsum,
        world: &dyn Communicator,
    ) -> (OneCentreEnergy, Becsum) {
        self.evaluate_with(model, becsum, world, true)
    }

    /// The sphere energies alone of [`Self::evaluate`] (no coupling computed). Collective
    /// over `world`.
    pub fn energy(&self, model: &Model, becsum: &Becsum, world: &dyn Communicator) -> f64 {
        self.evaluate_with(model, becsum, world, false).0.total()
    }

    /// [`Self::evaluate`], the couplings left zero unless `coupling`.
    fn evaluate_with(
        &self,
        model: &Model,
        becsum: &Becsum,
        world: &dyn Communicator,
        coupling: bool,
    ) -> (OneCentreEnergy, Becsum) {
        let nspin = becsum.len();
        let mut d = zero_becsum_like(becsum);
        let mut parts = [0.0; 4];
        // Every rank takes its share of every atom's sphere (a split that scales past the
        // number of atoms, as the VASP report asks of PAW).
        let part = (world.rank(), world.size());
        for a in 0..model.crystal.atoms.len() {
            let Some(p) = Self::species(model, a) else {
                continue;
            };
            let b: Vec<Vec<f64>> = (0..nspin).map(|s| becsum[s][a].clone()).collect();
            let (e, da) = p.one_centre_part(model.functional, &b, part, coupling);
            parts = [
                parts[0] + e.hartree_ae,
                parts[1] + e.hartree_ps,
                parts[2] + e.xc_ae,
                parts[3] + e.xc_ps,
            ];
            for (s, v) in da.into_iter().enumerate() {
                d[s][a] = v;
            }
        }
        // One reduction: the four energies, then every coupling in order.
        let mut flat: Vec<f64> = parts.to_vec();
        if coupling {
            flat.extend(flat_becsum(&d));
        }
        world.allreduce_sum_f64(&mut flat, CommClass::Other);
        if coupling {
            refill_becsum(&mut d, &flat[4..]);
            self.symmetrize(model, &mut d, false);
        }
        let e = OneCentreEnergy {
            hartree_ae: flat[0],
            hartree_ps: flat[1],
            xc_ae: flat[2],
            xc_ps: flat[3],
        };
        (e, d)
    }

    /// The band sums of `rho`, or the atoms' own when it has none.
    pub fn becsum_of(&self, model: &Model, rho: &Density) -> Becsum {
        rho.becsum.clone().unwrap_or_else(|| self.atomic(model))
    }
}

/// The one-centre term (present only with PAW species).
pub struct Paw {
    one_centre: OneCentre,
}

impl Paw {
    /// The term of `model`, whose band sums have the layout of `charges` (None without PAW
    /// species).
    pub fn new(model: &Model, charges: &AugmentationCharges) -> Option<Self> {
        OneCentre::new(model, charges).map(|one_centre| Self { one_centre })
    }
}

impl<T: BandScalar> Term<T> for Paw {
    fn name(&self) -> &'static str {
        "one_centre_paw"
    }

    fn label(&self) -> &'static str {
        "one-centre PAW"
    }

    fn energy(&self, s: &State<'_, T>) -> Option<Share<f64>> {
        let b = self.one_centre.becsum_of(s.model, s.rho);
        let world = s.basis.parallel.world();
        let e = self.one_centre.energy(s.model, &b, world.as_ref());
        Some(Share::Whole(e))
    }
}
