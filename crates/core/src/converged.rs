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
    /// (term name, seconds), "set-up" first: the term list and, with ultrasoft species, the
    /// screening of the coupling.
    pub seconds: Vec<(&'static str, f64)>,
}

/// The contribution of every term of [`term::standard`] to `Q` for the converged SCF `scf` (its
/// output density, bands and -TS), completed over the k-point groups, with the terms' names
/// and times. Collective.
pub fn of_converged<Q: Quantity>(
    model: &Model,
    basis: &Basis,
    scf: &ScfResult,
) -> PerTerm<Q::Value> {
    fn with<Q: Quantity, T: BandScalar>(
        model: &Model,
        basis: &Basis,
        scf: &ScfResult,
        psi: &[Vec<Mat<T>>],
    ) -> PerTerm<Q::Value> {
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
        let mut out = PerTerm {
            values: Vec::new(),
            seconds: vec![("set-up", t0.elapsed().as_secs_f64())],
        };
        for t in &terms {
            let t0 = Instant::now();
            if let Some(v) = Q::of(t.as_ref(), &state) {
                out.values.push((t.name(), v.complete(basis)));
                out.seconds.push((t.name(), t0.elapsed().as_secs_f64()));
            }
        }
        out
    }
    match &scf.wavefunctions {
        Wavefunctions::Complex(psi) => with::<Q, Complex64>(model, basis, scf, psi),
        Wavefunctions::Real(psi) => with::<Q, f64>(model, basis, scf, psi),
    }
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
