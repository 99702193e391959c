//! Densities of states: eigenvalues on a k-point grid with a converged SCF's density held fixed
//! (QE's `nscf` + `dos.x`), broadened by Gaussians or integrated by tetrahedra.
//!
//! Contract: [`compute`] solves the grid of the input's `[dos]` (default: the SCF's grid
//! doubled), reduced by the crystal's symmetry, through [`fixed_density::run`]; by tetrahedra
//! every grid point takes its irreducible point's bands ([`crate::tetrahedra`]); [`gaussian`]
//! gives D(E) = f Σ_k w_k Σ_n exp(-((E - e_nk)/s)²) / (s √π) and its exact integral
//! N(E) = f Σ_k w_k Σ_n (1 + erf((E - e_nk)/s)) / 2, per spin channel, with f = 2 without spin
//! and 1 per channel with it (the weights w_k add to 1). D is in states per Ha per cell (per eV
//! in the document), N in electrons per cell. The energies run from the lowest eigenvalue less
//! 3 s to the highest plus 3 s (tetrahedra: from the lowest to the highest) in the input's
//! step, as dos.x's. Collective.

use serde_json::{json, Value};

use crate::fixed_density;
use crate::input::units::EV_PER_HARTREE;
use crate::input::{DosMethod, InputError, Kpoints, RunSpec};
use crate::scf::ScfResult;
use crate::setup::Setup;
use crate::special::erfc;
use crate::symmetry::{monkhorst_pack, reduce_kpoints_with_map};
use crate::tetrahedra::{self as tetrahedron, tetrahedra, Interpolation};

/// A density of states on an energy grid.
#[derive(Debug, Clone)]
pub struct Dos {
    /// Gaussian broadening or tetrahedra.
    pub method: DosMethod,
    /// The energies (Ha, on the SCF's energy zero).
    pub energies: Vec<f64>,
    /// `dos[spin][i]`: states per Ha per cell at `energies[i]`.
    pub dos: Vec<Vec<f64>>,
    /// `integrated[spin][i]`: electrons per cell up to `energies[i]`.
    pub integrated: Vec<Vec<f64>>,
    /// The Gaussian width s (Ha).
    pub width: f64,
    /// The k-point grid's points after symmetry reduction.
    pub kpoints: usize,
    /// Highest occupied eigenvalue on the grid (integer occupations), Ha.
    pub vbm: Option<f64>,
    /// The SCF's Fermi level (smearing), Ha.
    pub fermi_level: Option<f64>,
    /// Above this energy (Ha) the DOS lacks bands: the lowest value of the highest band.
    pub valid_up_to: f64,
}

/// Widths beyond which a Gaussian-broadened state is taken as all below or all above.
const GAUSSIAN_REACH: f64 = 6.0;

/// D and N of `eigenvalues[spin][k][band]` with k-weights `weights` (adding to 1) at
/// `energies` (Ha, ascending), Gaussian width `width` (Ha), `spin_factor` electrons per band.
pub fn gaussian(
    eigenvalues: &[Vec<Vec<f64>>],
    weights: &[f64],
    spin_factor: f64,
    width: f64,
    energies: &[f64],
) -> (Vec<Vec<f64>>, Vec<Vec<f64>>) {
    let norm = 1.0 / (width * std::f64::consts::PI.sqrt());
    // Beyond 6 widths a state adds nothing to D (e^-36) and its whole weight to N.
    let reach = GAUSSIAN_REACH * width;
    let per_channel = |channel: &Vec<Vec<f64>>| {
        let mut d = vec![0.0; energies.len()];
        let mut n = vec![0.0; energies.len()];
        let mut filled = vec![0.0; energies.len() + 1];
        for (bands, &w) in channel.iter().zip(weights) {
            let c = spin_factor * w;
            for &e in bands {
                let lo = energies.partition_point(|&x| x < e - reach);
                let hi = energies.partition_point(|&x| x <= e + reach);
                for i in lo..hi {
                    let t = (energies[i] - e) / width;
                    d[i] += c * norm * (-t * t).exp();
                    n[i] += c * 0.5 * erfc(-t);
                }
                filled[hi] += c;
            }
        }
        let mut below = 0.0;
        for (ni, f) in n.iter_mut().zip(&filled) {
            below += f;
            *ni += below;
        }
        (d, n)
    };
    eigenvalues.iter().map(per_channel).unzip()
}

/// The density of states of `scf_setup`'s `[dos]`, from the converged `scf`. Collective.
pub fn compute(scf_setup: &Setup, scf: &ScfResult) -> Result<Dos, InputError> {
    let spec = &scf_setup.spec;
    let kpoints = spec
        .dos
        .kpoints
        .clone()
        .unwrap_or_else(|| match &spec.kpoints {
            Kpoints::MonkhorstPack { grid, shift } => Kpoints::MonkhorstPack {
                grid: grid.map(|n| 2 * n),
                shift: *shift,
            },
            other => other.clone(),
        });
    let nbands = spec.dos.nbands;
    let (r, weights, tets) = match spec.dos.method {
        DosMethod::Gaussian => {
            let (at, r) = fixed_density::run(scf_setup, scf, kpoints, true, nbands)?;
            (r, at.basis.kpoints.iter().map(|k| k.weight).collect(), None)
        }
        DosMethod::Tetrahedra | DosMethod::TetrahedraOpt => {
            let (grid, shift) = tetrahedron_grid(spec, &kpoints)?;
            let full = monkhorst_pack(grid, shift);
            let (set, map) = reduce_kpoints_with_map(&full, &scf_setup.model.symmetries, true);
            let list = Kpoints::Explicit(set.kpoints.into_iter().zip(set.weights).collect());
            let (_, r) = fixed_density::run(scf_setup, scf, list, false, nbands)?;
            (
                r,
                Vec::new(),
                Some((tetrahedra(grid, &scf_setup.model.crystal.recip), map)),
            )
        }
    };
    let nspin = r.eigenvalues.len();
    let all = r.eigenvalues.iter().flatten().flatten();
    let (lo, hi) = all.fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), &e| {
        (a.min(e), b.max(e))
    });
    let (width, step) = (spec.dos.width, spec.dos.step);
    let margin = if tets.is_some() { 0.0 } else { 3.0 * width };
    let count = ((hi - lo + 2.0 * margin) / step).ceil() as usize + 1;
    let energies: Vec<f64> = (0..count).map(|i| lo - margin + i as f64 * step).collect();
    let factor = 2.0 / nspin as f64;
    let (dos, integrated) = match &tets {
        None => gaussian(&r.eigenvalues, &weights, factor, width, &energies),
        Some((tets, map)) => r
            .eigenvalues
            .iter()
            .map(|channel| {
                let how = match spec.dos.method {
                    DosMethod::TetrahedraOpt => Interpolation::Optimised,
                    _ => Interpolation::Linear,
                };
                tetrahedron::dos(tets, how, |p| &channel[map[p]][..], factor, &energies)
            })
            .unzip(),
    };
    let top = r.eigenvalues.iter().flatten().filter_map(|b| b.last());
    let fermi_level = scf
        .occupations
        .fermi
        .as_ref()
        .map(|f| f.iter().copied().fold(f64::MIN, f64::max));
    let occupied = r
        .eigenvalues
        .iter()
        .zip(&r.occupations.occ)
        .flat_map(|(e, o)| {
            e.iter()
                .zip(o)
                .flat_map(|(e, o)| e.iter().zip(o).filter(|(_, &f)| f > 1e-6).map(|(e, _)| *e))
        });
    let vbm = fermi_level
        .is_none()
        .then(|| occupied.fold(f64::NEG_INFINITY, f64::max));
    Ok(Dos {
        method: spec.dos.method,
        energies,
        dos,
        integrated,
        width,
        kpoints: r.eigenvalues.first().map_or(0, Vec::len),
        vbm,
        fermi_level,
        valid_up_to: top.copied().fold(f64::INFINITY, f64::min),
    })
}

/// The grid of a DOS by tetrahedra: a Monkhorst-Pack grid of at least 2 points a side.
fn tetrahedron_grid(
    spec: &RunSpec,
    kpoints: &Kpoints,
) -> Result<([usize; 3], [bool; 3]), InputError> {
    match kpoints {
        Kpoints::MonkhorstPack { grid, shift } if grid.iter().all(|&n| n >= 2) => Ok((*grid, *shift)),
        other => Err(InputError::new(
            &spec.source,
            format!("a DOS by tetrahedra needs a k-point grid of at least 2 points a side, not {other:?}"),
        )
        .with_key("dos.kpoints")
        .with_hint("give [dos] kpoints = { grid = [12, 12, 12] }")),
    }
}

impl Dos {
    /// The results document: energies in eV, D in states/eV per cell, N in electrons per cell
    /// (per spin channel), the reference energy and where the DOS is complete.
    pub fn to_json(&self) -> Value {
        let ev: Vec<f64> = self.energies.iter().map(|e| e * EV_PER_HARTREE).collect();
        let per_ev: Vec<Vec<f64>> = self
            .dos
            .iter()
            .map(|d| d.iter().map(|x| x / EV_PER_HARTREE).collect())
            .collect();
        let mut doc = json!({
            "method": match self.method {
                DosMethod::Gaussian => "gaussian",
                DosMethod::Tetrahedra => "tetrahedra (linear)",
                DosMethod::TetrahedraOpt => "tetrahedra_opt (optimised, Kawamura et al.)",
            },
            "kpoints_irreducible": self.kpoints,
            "energy_ev": ev,
            "dos_per_ev": per_ev,
            "integrated": self.integrated,
            "valid_up_to_ev": self.valid_up_to * EV_PER_HARTREE,
        });
        if self.method == DosMethod::Gaussian {
            doc["width_ev"] = json!(self.width * EV_PER_HARTREE);
        }
        if let Some(f) = self.fermi_level {
            doc["fermi_level_ev"] = json!(f * EV_PER_HARTREE);
        }
        if let Some(v) = self.vbm {
            doc["vbm_ev"] = json!(v * EV_PER_HARTREE);
        }
        doc
    }
}
