//! Eigenvalues at any list of k-points with a converged SCF's density held fixed (Quantum
//! ESPRESSO's `calculation = 'bands'`, VASP's `ICHARG = 11`).
//!
//! Contract: [`compute`] is the SCF engine run with three other policies, which is what the
//! engine's policy seam is for: the mixer never moves the density (the SCF's, carried over by
//! Miller index, [`ScfStart::from_previous`]), every band is solved to a fixed tight residual ([`BAND_RESIDUAL`]),
//! and the loop stops when the band energy no longer changes. The k-points are taken as given
//! (no symmetry reduction) on the SCF's own layout rules, so every layout gives the same
//! eigenvalues. Collective on the SCF set-up's world. Hybrids are refused: their exchange
//! operator would have to be carried over too.

use std::sync::Arc;

use num_complex::Complex64;
use serde_json::{json, Value};

use crate::basis::Basis;
use crate::input::units::EV_PER_HARTREE;
use crate::input::{InputError, Kpoints, PathPoints};
use crate::restart::ScfStart;
use crate::scf::policies::{
    ConvergenceQuery, ConvergenceTest, EigensolverTolerance, Mixer, Mixing, Policies,
    ToleranceQuery,
};
use crate::scf::{self, ScfResult};
use crate::setup::{self, Setup};

/// Residual norm the occupied bands are solved to (the empty ones to
/// [`crate::eigensolver::EMPTY_TOL_FACTOR`] times it): an eigenvalue's error is about the
/// square of its residual over the distance to the next band, 1e-10 Ha and below.
pub const BAND_RESIDUAL: f64 = 1e-7;

/// The loop stops when the free energy of the fixed-density bands changes by less than this
/// (Ha) between two iterations.
const SETTLED: f64 = 1e-9;

/// Eigenvalues along a list of k-points.
#[derive(Debug, Clone)]
pub struct BandStructure {
    /// The k-points, fractional (reciprocal-lattice) coordinates, in the order given.
    pub kpoints_frac: Vec<[f64; 3]>,
    /// `eigenvalues[spin][k][band]` (Ha, on the SCF's energy zero).
    pub eigenvalues: Vec<Vec<Vec<f64>>>,
    /// Fixed-density iterations it took.
    pub iterations: usize,
    /// Whether every band settled within the iteration limit.
    pub converged: bool,
    /// Occupied bands per spin channel, when the occupations are integers (insulators);
    /// None with smearing.
    pub occupied: Option<Vec<usize>>,
    /// The SCF's Fermi level (Ha), with smearing.
    pub fermi_level: Option<f64>,
}

/// Where the occupied and the empty bands end along the path (integer occupations).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BandEdges {
    /// Highest occupied eigenvalue on the path (Ha) and its k-point index.
    pub vbm: (f64, usize),
    /// Lowest empty eigenvalue on the path (Ha) and its k-point index.
    pub cbm: (f64, usize),
}

impl BandEdges {
    /// The gap (Ha); direct when both edges are at one k-point.
    pub fn gap(&self) -> f64 {
        self.cbm.0 - self.vbm.0
    }
}

impl BandStructure {
    /// The band edges along the path, when the occupations are integers and an empty band
    /// was computed.
    pub fn edges(&self) -> Option<BandEdges> {
        let occupied = self.occupied.as_ref()?;
        let mut vbm = (f64::NEG_INFINITY, 0);
        let mut cbm = (f64::INFINITY, 0);
        for (spin, &n) in self.eigenvalues.iter().zip(occupied) {
            for (k, e) in spin.iter().enumerate() {
                if n > 0 && e[n - 1] > vbm.0 {
                    vbm = (e[n - 1], k);
                }
                if n < e.len() && e[n] < cbm.0 {
                    cbm = (e[n], k);
                }
            }
        }
        (vbm.0.is_finite() && cbm.0.is_finite()).then_some(BandEdges { vbm, cbm })
    }

    /// The results document of a path: k-points (fractional and Cartesian, 1/bohr), the
    /// length along the path (1/bohr; no length across a jump), the vertex labels, the
    /// eigenvalues (Ha) and the energy reference (Fermi level or band edges).
    pub fn to_json(&self, recip: &[[f64; 3]; 3], path: &PathPoints) -> Value {
        let cart: Vec<[f64; 3]> = self
            .kpoints_frac
            .iter()
            .map(|k| [0, 1, 2].map(|c| (0..3).map(|i| k[i] * recip[i][c]).sum()))
            .collect();
        let mut distance = vec![0.0; cart.len()];
        for i in 1..cart.len() {
            let step = (0..3)
                .map(|c| (cart[i][c] - cart[i - 1][c]).powi(2))
                .sum::<f64>();
            let jump = path.jumps.contains(&i);
            distance[i] = distance[i - 1] + if jump { 0.0 } else { step.sqrt() };
        }
        let mut doc = json!({
            "kpoints_frac": self.kpoints_frac,
            "kpoints_cart_inv_bohr": cart,
            "distance_inv_bohr": distance,
            "labels": path.labels,
            "eigenvalues_ha": self.eigenvalues,
            "nspin": self.eigenvalues.len(),
            "nbands": self.eigenvalues.first().and_then(|s| s.first()).map_or(0, Vec::len),
            "iterations": self.iterations,
            "converged": self.converged,
        });
        if let Some(f) = self.fermi_level {
            doc["fermi_level_ha"] = json!(f);
        }
        if let Some(e) = self.edges() {
            doc["vbm_ha"] = json!(e.vbm.0);
            doc["cbm_ha"] = json!(e.cbm.0);
            doc["gap_ev"] = json!(e.gap() * EV_PER_HARTREE);
            doc["gap_direct"] = json!(e.vbm.1 == e.cbm.1);
        }
        doc
    }
}

/// The bands of `kpoints` (fractional) with the density of `scf`, the converged state of
/// `scf_setup`; `nbands`: how many (default: the SCF's). Collective.
pub fn compute(
    scf_setup: &Setup,
    scf: &ScfResult,
    kpoints: &[[f64; 3]],
    nbands: Option<usize>,
) -> Result<BandStructure, InputError> {
    let spec = &scf_setup.spec;
    let refuse = |msg: &str, hint: &str| InputError::new(&spec.source, msg).with_hint(hint);
    if spec.hybrid.is_some() {
        return Err(refuse(
            "band structures of hybrid functionals are not implemented yet",
            "run the band structure with the semilocal functional",
        ));
    }
    if kpoints.is_empty() {
        return Err(refuse("no k-points for the bands", "give a path"));
    }
    let mut path = spec.clone();
    path.kpoints = Kpoints::Explicit(
        kpoints
            .iter()
            .map(|k| (*k, 1.0 / kpoints.len() as f64))
            .collect(),
    );
    path.use_symmetry = false;
    path.nbands = Some(nbands.unwrap_or(scf_setup.params.nbands));
    path.scf.restart = false;
    let world = Arc::clone(scf_setup.basis.parallel.world());
    let at = setup::build_on(path, world)?;
    let start = ScfStart::from_previous(
        &scf_setup.model,
        &scf_setup.basis,
        scf,
        &at.model,
        &at.basis,
    );
    let mut params = at.params.clone();
    params.policies = Policies {
        tolerance: Arc::new(FixedResidual(BAND_RESIDUAL)),
        convergence: Arc::new(Settled),
        mixing: Arc::new(Frozen),
    };
    params.checkpoint = None;
    params.max_iterations = params.max_iterations.min(20);
    let start = ScfStart {
        density_g: start.density_g,
        wavefunctions: None,
    };
    let r = scf::run_observed(
        &at.model,
        &at.basis,
        &params,
        Some(start),
        |_: &scf::IterationInfo| {},
    )
    .map_err(|m| InputError::new(&spec.source, m).with_hint("see the message above"))?;
    let fermi_level = scf
        .occupations
        .fermi
        .as_ref()
        .map(|f| f.iter().copied().fold(f64::MIN, f64::max));
    let occupied = fermi_level.is_none().then(|| {
        let count = |s: &Vec<Vec<f64>>| s[0].iter().filter(|&&f| f > 1e-6).count();
        r.occupations.occ.iter().map(count).collect()
    });
    Ok(BandStructure {
        kpoints_frac: kpoints.to_vec(),
        eigenvalues: r.eigenvalues,
        iterations: r.iterations,
        converged: r.converged,
        occupied,
        fermi_level,
    })
}

/// Every band to the same residual, whatever the density residual.
#[derive(Debug)]
struct FixedResidual(f64);

impl EigensolverTolerance for FixedResidual {
    fn choose(&self, _: &ToleranceQuery) -> (f64, usize) {
        (self.0, 200)
    }
}

/// Converged when the energy of the bands stops changing (the density residual means
/// nothing here: the density never moves).
#[derive(Debug)]
struct Settled;

impl ConvergenceTest for Settled {
    fn converged(&self, q: &ConvergenceQuery) -> bool {
        q.delta_e.abs() < SETTLED
    }
}

/// A mixer that keeps the input density.
#[derive(Debug)]
struct Frozen;

impl Mixing for Frozen {
    fn mixer(&self, _: &Basis, _: usize) -> Box<dyn Mixer> {
        Box::new(Frozen)
    }
}

impl Mixer for Frozen {
    fn next(
        &mut self,
        input: &[Vec<Complex64>],
        _: &[Vec<Complex64>],
        _: &dyn Fn(&mut [f64]),
    ) -> Vec<Vec<Complex64>> {
        input.to_vec()
    }
}
