//! Band structures: eigenvalues along a path of k-points with a converged SCF's density held
//! fixed (Quantum ESPRESSO's `calculation = 'bands'`, VASP's `ICHARG = 11`).
//!
//! Contract: [`compute`] solves the path's k-points as given (no symmetry reduction) through
//! [`fixed_density::run`], so every layout gives the same eigenvalues; [`BandStructure`] finds
//! the band edges and writes the results document (Cartesian k-points, the length along the
//! path, labels). Collective on the SCF set-up's world. Hybrids are refused.

use serde_json::{json, Value};

use crate::fixed_density;
use crate::input::units::EV_PER_HARTREE;
use crate::input::{InputError, Kpoints, PathPoints};
use crate::scf::ScfResult;
use crate::setup::Setup;

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
    if kpoints.is_empty() {
        let msg = "no k-points for the bands";
        return Err(InputError::new(&scf_setup.spec.source, msg).with_hint("give a path"));
    }
    let weight = 1.0 / kpoints.len() as f64;
    let list = Kpoints::Explicit(kpoints.iter().map(|k| (*k, weight)).collect());
    let (_, r) = fixed_density::run(scf_setup, scf, list, false, nbands)?;
    let fermi_level = scf
        .occupations
        .fermi
        .as_ref()
        .map(|f| f.iter().copied().fold(f64::MIN, f64::max));
    Ok(BandStructure::from_run(kpoints, &r, fermi_level))
}

impl BandStructure {
    /// The bands of `kpoints` from the fixed-density result `r` on them; `fermi_level`: the
    /// SCF's, with smearing (without, the occupied bands are counted from `r`).
    pub fn from_run(kpoints: &[[f64; 3]], r: &ScfResult, fermi_level: Option<f64>) -> Self {
        let occupied = fermi_level.is_none().then(|| {
            let count = |s: &Vec<Vec<f64>>| s[0].iter().filter(|&&f| f > 1e-6).count();
            r.occupations.occ.iter().map(count).collect()
        });
        BandStructure {
            kpoints_frac: kpoints.to_vec(),
            eigenvalues: r.eigenvalues.clone(),
            iterations: r.iterations,
            converged: r.converged,
            occupied,
            fermi_level,
        }
    }
}
