//! Per-term quantities of a converged SCF state (forces, stress): every term of the list is
//! asked with the state's output density, bands and -TS, and its share completed over the
//! layout. The terms layer never reads the SCF's types; this module joins the two.

use crate::bands::BandScalar;
use crate::basis::Basis;
use crate::model::Model;
use crate::scf::{ScfResult, Wavefunctions};
use crate::terms::term::{self, band_weights, Bands, Share, State, Summable, Term};
use num_complex::Complex64;
use planewave_linalg::Mat;
use std::time::Instant;

/// A per-term quantity of a converged state (forces, stress), read from any [`Term`].
pub trait Quantity {
    /// Its value.
    type Value: Summable;
    /// What term `t` contributes to it in state `s`, if anything.
    fn of<T: BandScalar>(t: &dyn Term<T>, s: &State<'_, T>) -> Option<Share<Self::Value>>;
}

/// Each term's value of a quantity, with the seconds the work took on this rank.
pub struct PerTerm<V> {
    /// (term name, value), in the term list's order.
    pub values: Vec<(&'static str, V)>,
    /// (term name, seconds), "set-up" first: the term list, the potentials and, with
    /// ultrasoft species, the screening of the coupling (0 for the second of two quantities
    /// asked together: they share it).
    pub seconds: Vec<(&'static str, f64)>,
}

/// The per-term values of two quantities, each when asked for.
pub type Asked<A, B> = (
    Option<PerTerm<<A as Quantity>::Value>>,
    Option<PerTerm<<B as Quantity>::Value>>,
);

/// The contributions of every term of [`term::standard`] to the quantities `A` and `B` (each
/// when `want` asks for it) for the converged SCF `scf` (its output density, bands and -TS),
/// completed over the k-point groups, with the terms' names and times. The term list, the
/// potentials and the ultrasoft screening are formed once for both (the set-up's seconds go to
/// the first asked for). Collective (`want` the same on every rank).
pub fn of_converged<A: Quantity, B: Quantity>(
    model: &Model,
    basis: &Basis,
    scf: &ScfResult,
    want: (bool, bool),
) -> Asked<A, B> {
    fn with<A: Quantity, B: Quantity, T: BandScalar>(
        model: &Model,
        basis: &Basis,
        (scf, psi): (&ScfResult, &[Vec<Mat<T>>]),
        want: (bool, bool),
    ) -> Asked<A, B> {
        let t0 = Instant::now();
        let weights = band_weights(basis, &scf.occupations.occ);
        let eigenvalues = local_eigenvalues(basis, &scf.eigenvalues);
        let core = crate::density::core_density(model, basis);
        let mut state = State {
            model,
            basis,
            rho: &scf.density,
            core: core.as_ref(),
            bands: Some(Bands {
                psi,
                weights: &weights,
                eigenvalues: Some(&eigenvalues),
            }),
            local_potential: None,
            minus_ts: scf.energies.minus_ts(),
            // A hybrid run ends with exact exchange on; the Fock energy has no explicit
            // dependence on positions or strain that a term here would give.
            exx_on: model.hybrid.is_some(),
            ace: None,
        };
        let (terms, charges) = term::standard_and_charges(model, basis);
        // Ultrasoft and PAW species: the coupling screened by the density's potential (and
        // PAW's one-centre coupling of its band sums), which the augmentation forces read too.
        let potential = charges.map(|charges| {
            let paw = crate::terms::paw::OneCentre::new(model, &charges);
            let v = term::potentials(&terms, &state).total;
            let delta =
                crate::scf::screening(model, basis, &charges, paw.as_ref(), &v, &scf.density);
            term::screen(&terms, &delta);
            v
        });
        state.local_potential = potential.as_deref();
        let setup = t0.elapsed().as_secs_f64();
        let a = want.0.then(|| per_term::<A, T>(&terms, &state, setup));
        let b_setup = if want.0 { 0.0 } else { setup };
        let b = want.1.then(|| per_term::<B, T>(&terms, &state, b_setup));
        (a, b)
    }
    match &scf.wavefunctions {
        Wavefunctions::Complex(psi) => with::<A, B, Complex64>(model, basis, (scf, psi), want),
        Wavefunctions::Real(psi) => with::<A, B, f64>(model, basis, (scf, psi), want),
    }
}

/// Every term's share of `Q` in `state`, completed over the layout, timed; `setup` seconds
/// first.
fn per_term<Q: Quantity, T: BandScalar>(
    terms: &[Box<dyn Term<T> + '_>],
    state: &State<'_, T>,
    setup: f64,
) -> PerTerm<Q::Value> {
    let mut out = PerTerm {
        values: Vec::new(),
        seconds: vec![("set-up", setup)],
    };
    for t in terms {
        let t0 = Instant::now();
        if let Some(v) = Q::of(t.as_ref(), state) {
            out.values.push((t.name(), v.complete(state.basis)));
            out.seconds.push((t.name(), t0.elapsed().as_secs_f64()));
        }
    }
    out
}

/// This rank's bands' eigenvalues per spin and k-point.
fn local_eigenvalues(basis: &Basis, all: &[Vec<Vec<f64>>]) -> Vec<Vec<Vec<f64>>> {
    all.iter()
        .map(|s| {
            s.iter()
                .map(|k| basis.parallel.local_band_values(k))
                .collect()
        })
        .collect()
}
