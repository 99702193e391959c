//! Densities of states: eigenvalues on a k-point grid with a converged SCF's density held fixed
//! (QE's `nscf` + `dos.x`), broadened (Gaussian, Methfessel–Paxton, Marzari–Vanderbilt or
//! Fermi–Dirac, dos.x's `ngauss`) or integrated by tetrahedra.
//!
//! Contract: [`compute`] solves the grid of the input's `[dos]` (default: the SCF's grid
//! doubled), reduced by the crystal's symmetry, through [`fixed_density::run`], keeps the
//! result as [`GridBands`] (what QE's nscf step leaves for dos.x; [`grid_bands`]) and
//! integrates it ([`from_grid`]): by tetrahedra every grid point takes its irreducible point's
//! bands ([`crate::tetrahedra`]; [`tetrahedron_fermi_level`] finds E_F that way); [`broadened`]
//! gives D(E) = f Σ_k w_k Σ_n δ((E - e_nk)/s) / s and its exact integral
//! N(E) = f Σ_k w_k Σ_n occ((e_nk - E)/s) with the smearing's delta and occupation (Gaussian:
//! exp(-x²)/√π and erfc(x)/2), per spin channel, with f = 2 without spin
//! and 1 per channel with it (the weights w_k add to 1). D is in states per Ha per cell (per eV
//! in the document), N in electrons per cell. The energies run from the lowest eigenvalue less
//! 3 s to the highest plus 3 s (tetrahedra: from the lowest to the highest) in the input's
//! step, as dos.x's, or over the range given. [`GridBands`] also holds the bands' Löwdin
//! projections on the atomic orbitals ([`crate::projections`]), from which [`compute`] adds the
//! projected DOS ([`crate::pdos`]). [`compute`] and [`grid_bands`] are collective; the rest is
//! serial.

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use crate::fixed_density;
use crate::input::units::EV_PER_HARTREE;
use crate::input::{DosMethod, InputError, Kpoints, RunSpec};
use crate::pdos::{self, ProjectedDos};
use crate::projections::{self, Projections};
use crate::scf::ScfResult;
use crate::setup::Setup;
use crate::smearing::{Smearing, SmearingFunction};
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
    /// The DOS of each atomic orbital, where asked for and the pseudopotentials have them.
    pub projected: Option<ProjectedDos>,
}

/// D and N of `eigenvalues[spin][k][band]` with k-weights `weights` (adding to 1) at
/// `energies` (Ha, ascending), each state broadened by `smearing` (its kind and width),
/// `spin_factor` electrons per band: N = Σ w f((e - E)/s) and D = dN/dE = Σ w δ((e - E)/s)/s
/// (Marzari–Vanderbilt's δ is not even).
pub fn broadened(
    eigenvalues: &[Vec<Vec<f64>>],
    weights: &[f64],
    spin_factor: f64,
    smearing: Smearing,
    energies: &[f64],
) -> (Vec<Vec<f64>>, Vec<Vec<f64>>) {
    let width = smearing.width();
    let per_channel = |channel: &Vec<Vec<f64>>| {
        let mut d = vec![0.0; energies.len()];
        let mut n = vec![0.0; energies.len()];
        let mut filled = vec![0.0; energies.len() + 1];
        for (bands, &w) in channel.iter().zip(weights) {
            let c = spin_factor * w;
            for &e in bands {
                let reached = reached(energies, smearing, e);
                let hi = reached.end;
                for i in reached {
                    let t = (energies[i] - e) / width;
                    d[i] += c * smearing.delta(-t) / width;
                    n[i] += c * smearing.occupation(-t);
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

/// The indices of the `energies` (ascending) that a state at `e` reaches under `smearing`:
/// beyond them it adds nothing to D and, above them, its whole weight to N.
pub(crate) fn reached(energies: &[f64], smearing: Smearing, e: f64) -> std::ops::Range<usize> {
    let reach = smearing.reach() * smearing.width();
    energies.partition_point(|&x| x < e - reach)..energies.partition_point(|&x| x <= e + reach)
}

/// Eigenvalues on a k-point grid with what a DOS needs to integrate them: the product of a
/// fixed-density step on a grid (QE's nscf), which dos.x reads back.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct GridBands {
    /// `eigenvalues[spin][k][band]` (Ha) of the irreducible k-points.
    pub eigenvalues: Vec<Vec<Vec<f64>>>,
    /// Their weights (adding to 1).
    pub weights: Vec<f64>,
    /// The whole grid, when the k-points are a Monkhorst-Pack grid's irreducible points.
    pub grid: Option<TetrahedronGrid>,
    /// Electrons per cell.
    pub n_electrons: f64,
    /// Highest occupied eigenvalue with integer occupations (Ha).
    pub vbm: Option<f64>,
    /// The SCF's Fermi level (Ha), with smearing.
    pub fermi_level: Option<f64>,
    /// The bands' projections on the atomic orbitals, where the pseudopotentials have them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub projections: Option<Projections>,
}

/// A Monkhorst-Pack grid and where its points' bands are.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct TetrahedronGrid {
    /// Points along b1, b2, b3.
    pub size: [usize; 3],
    /// Half-step shifts.
    pub shift: [bool; 3],
    /// `map[p]`: the irreducible k-point of grid point p (in `monkhorst_pack` order).
    pub map: Vec<usize>,
    /// Reciprocal vectors (rows, 1/bohr), for the tetrahedra's shortest diagonal.
    pub recip: [[f64; 3]; 3],
}

impl Broadening {
    /// The smearing kind and width of a broadening method (Gaussian for tetrahedra, unused).
    pub fn smearing(&self) -> Smearing {
        (self.method.smearing(self.width)).unwrap_or(Smearing::Gaussian(self.width))
    }
}

/// How to turn [`GridBands`] into a DOS.
#[derive(Debug, Clone, Copy)]
pub struct Broadening {
    /// A broadening or tetrahedra.
    pub method: DosMethod,
    /// The broadening's width s (Ha).
    pub width: f64,
    /// Energy step (Ha).
    pub step: f64,
    /// The energy range (Ha); None: the eigenvalues' (with 3 s either side for broadenings).
    pub range: (Option<f64>, Option<f64>),
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
    if !spec.dos.method.broadens() {
        tetrahedron_grid(spec, &kpoints)?;
    }
    let (at, r) = fixed_density::run(scf_setup, scf, kpoints, true, spec.dos.nbands)?;
    let fermi = scf.occupations.fermi.as_ref();
    let g = grid_bands(
        &at,
        &r,
        fermi.map(|f| f.iter().copied().fold(f64::MIN, f64::max)),
    );
    let how = Broadening {
        method: spec.dos.method,
        width: spec.dos.width,
        step: spec.dos.step,
        range: (None, None),
    };
    let projected = pdos::from_grid(&g, &how);
    let dos = from_grid(&g, &how).and_then(|d| {
        Ok(Dos {
            projected: projected?,
            ..d
        })
    });
    dos.map_err(|m| InputError::new(&spec.source, m).with_key("dos"))
}

/// The eigenvalues of the fixed-density result `r` on `at`'s k-points, with the whole grid
/// when those are a Monkhorst-Pack grid's irreducible points and the projections on the atomic
/// orbitals; `fermi_level`: the SCF's. Collective.
pub fn grid_bands(at: &Setup, r: &ScfResult, fermi_level: Option<f64>) -> GridBands {
    let grid = match &at.spec.kpoints {
        Kpoints::MonkhorstPack { grid, shift } => {
            let full = monkhorst_pack(*grid, *shift);
            let (set, map) = reduce_kpoints_with_map(&full, &at.model.symmetries, true);
            let same = set.kpoints.len() == at.basis.kpoints.len()
                && (set.kpoints.iter().zip(&at.basis.kpoints))
                    .all(|(a, b)| (0..3).all(|i| (a[i] - b.frac[i]).abs() < 1e-12));
            same.then_some(TetrahedronGrid {
                size: *grid,
                shift: *shift,
                map,
                recip: at.model.crystal.recip,
            })
        }
        _ => None,
    };
    let occupied = (r.eigenvalues.iter().zip(&r.occupations.occ)).flat_map(|(e, o)| {
        e.iter()
            .zip(o)
            .flat_map(|(e, o)| e.iter().zip(o).filter(|(_, &f)| f > 1e-6).map(|(e, _)| *e))
    });
    GridBands {
        eigenvalues: r.eigenvalues.clone(),
        weights: at.basis.kpoints.iter().map(|k| k.weight).collect(),
        grid,
        n_electrons: at.model.n_electrons,
        vbm: fermi_level
            .is_none()
            .then(|| occupied.fold(f64::NEG_INFINITY, f64::max)),
        fermi_level,
        projections: projections::compute(at, r),
    }
}

/// The Fermi level of `g` by tetrahedra (`optimised`: Kawamura's, else linear): the middle of
/// the energies at which the integrated DOS holds the electron count (the middle of the gap of
/// an insulator, the single such energy of a metal); None without a grid of 2 points a side, or
/// when the bands computed hold fewer states than there are electrons.
pub fn tetrahedron_fermi_level(g: &GridBands, optimised: bool) -> Option<f64> {
    let grid = g.grid.as_ref().filter(|t| t.size.iter().all(|&n| n >= 2))?;
    let tets = tetrahedra(grid.size, &grid.recip);
    let how = if optimised {
        Interpolation::Optimised
    } else {
        Interpolation::Linear
    };
    let factor = 2.0 / g.eigenvalues.len() as f64;
    let channels: Vec<tetrahedron::Corners> = (g.eigenvalues.iter())
        .map(|c| tetrahedron::Corners::new(&tets, how, |p| &c[grid.map[p]][..], factor))
        .collect();
    let count = |e: f64| -> f64 { channels.iter().map(|c| c.integrated(e)).sum() };
    let all = g.eigenvalues.iter().flatten().flatten();
    let (lo, hi) = all.fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), &e| {
        (a.min(e), b.max(e))
    });
    let (lo, hi, target) = (lo - 1.0, hi + 1.0, g.n_electrons);
    if count(hi) < target - 1e-8 {
        return None;
    }
    // The first energy with N >= target, and the last with N <= target.
    let bisect = |reached: &dyn Fn(f64) -> bool| {
        let (mut a, mut b) = (lo, hi);
        for _ in 0..80 {
            let m = 0.5 * (a + b);
            (a, b) = if reached(m) { (a, m) } else { (m, b) };
        }
        0.5 * (a + b)
    };
    let first = bisect(&|e| count(e) >= target - 1e-8);
    let last = bisect(&|e| count(e) > target + 1e-8);
    Some(0.5 * (first + last))
}

/// The DOS of `g` as `how` says, or why not (tetrahedra without a grid).
pub fn from_grid(g: &GridBands, how: &Broadening) -> Result<Dos, String> {
    let tets = tetrahedra_of(g, how)?;
    let energies = energies_of(g, how);
    let factor = 2.0 / g.eigenvalues.len() as f64;
    let (dos, integrated) = match &tets {
        None => broadened(
            &g.eigenvalues,
            &g.weights,
            factor,
            how.smearing(),
            &energies,
        ),
        Some((tets, map, interpolation)) => g
            .eigenvalues
            .iter()
            .map(|channel| {
                tetrahedron::dos(
                    tets,
                    *interpolation,
                    |p| &channel[map[p]][..],
                    factor,
                    &energies,
                )
            })
            .unzip(),
    };
    let top = g.eigenvalues.iter().flatten().filter_map(|b| b.last());
    Ok(Dos {
        method: how.method,
        energies,
        dos,
        integrated,
        width: how.width,
        kpoints: g.weights.len(),
        vbm: g.vbm,
        fermi_level: g.fermi_level,
        valid_up_to: top.copied().fold(f64::INFINITY, f64::min),
        projected: None,
    })
}

/// The tetrahedra of `g`'s grid with its map to the irreducible points and the interpolation
/// `how` asks for; None for broadenings; why not when the grid cannot have them.
pub(crate) type Tetrahedra<'a> = (Vec<[usize; 20]>, &'a [usize], Interpolation);

pub(crate) fn tetrahedra_of<'a>(
    g: &'a GridBands,
    how: &Broadening,
) -> Result<Option<Tetrahedra<'a>>, String> {
    let interpolation = match how.method {
        DosMethod::TetrahedraOpt => Interpolation::Optimised,
        DosMethod::Tetrahedra => Interpolation::Linear,
        _ => return Ok(None),
    };
    match &g.grid {
        Some(grid) if grid.size.iter().all(|&n| n >= 2) => Ok(Some((
            tetrahedra(grid.size, &grid.recip),
            &grid.map[..],
            interpolation,
        ))),
        grid => {
            let what = grid.as_ref().map_or("a k-point list".to_string(), |t| {
                format!("the grid {:?}", t.size)
            });
            Err(format!("a DOS by tetrahedra needs a Monkhorst-Pack grid of at least 2 points a side, and the bands are on {what}"))
        }
    }
}

/// The energies of a DOS of `g` (Ha): `how`'s range in its step, by default from the lowest
/// eigenvalue to the highest (less and plus 3 widths for broadenings).
pub(crate) fn energies_of(g: &GridBands, how: &Broadening) -> Vec<f64> {
    let all = g.eigenvalues.iter().flatten().flatten();
    let (lo, hi) = all.fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), &e| {
        (a.min(e), b.max(e))
    });
    let margin = if how.method.broadens() {
        3.0 * how.width
    } else {
        0.0
    };
    let lo = how.range.0.unwrap_or(lo - margin);
    let hi = how.range.1.unwrap_or(hi + margin);
    let count = ((hi - lo) / how.step).ceil() as usize + 1;
    (0..count).map(|i| lo + i as f64 * how.step).collect()
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
                DosMethod::MethfesselPaxton => "methfessel-paxton (first order)",
                DosMethod::MarzariVanderbilt => "marzari-vanderbilt (cold)",
                DosMethod::FermiDirac => "fermi-dirac",
                DosMethod::Tetrahedra => "tetrahedra (linear)",
                DosMethod::TetrahedraOpt => "tetrahedra_opt (optimised, Kawamura et al.)",
            },
            "kpoints_irreducible": self.kpoints,
            "energy_ev": ev,
            "dos_per_ev": per_ev,
            "integrated": self.integrated,
            "valid_up_to_ev": self.valid_up_to * EV_PER_HARTREE,
        });
        if self.method.broadens() {
            doc["width_ev"] = json!(self.width * EV_PER_HARTREE);
        }
        if let Some(f) = self.fermi_level {
            doc["fermi_level_ev"] = json!(f * EV_PER_HARTREE);
        }
        if let Some(v) = self.vbm {
            doc["vbm_ev"] = json!(v * EV_PER_HARTREE);
        }
        if let Some(p) = &self.projected {
            doc["projected"] = p.to_json();
        }
        doc
    }
}
