//! Structural relaxation: atomic positions, and optionally the cell at a target pressure.
//!
//! Coordinates (as in ASE's unit-cell filter): the cell is `a_i = (1 + eps) a0_i` for the
//! starting rows `a0_i` and a symmetric strain `eps`; atoms are described by their Cartesian
//! positions in the undeformed cell, `r0 = (1 + eps)^{-1} r`. The optimiser sees
//! `x = (r0, c eps)` with gradient `(-(1+eps)^T F, -Omega (sigma - p 1)(1+eps)^{-T} / c)`
//! (sigma in QE's sign, `c` balancing cell and atomic stiffness), i.e. it minimises the enthalpy
//! E + p Omega. Every step re-runs the SCF starting from the previous density and bands
//! ([`crate::restart::ScfStart`]). Forces and stress are symmetrised, so steps keep the
//! crystal's symmetry. A step that raises the enthalpy is halved (and reported); non-finite
//! numbers end the run with an error before anything is written.

mod bfgs;
pub mod files;
mod fire;

use crate::checkpoint;
use crate::forces::{self, Forces};
use crate::input::{RelaxAlgorithm, RelaxSpec, RunSpec};
use crate::restart::ScfStart;
use crate::scf::{self, CheckpointPlan, IterationInfo, ScfResult};
use crate::setup::{self, Setup};
use crate::stop::{StopReason, StopWhen};
use crate::stress::{self, Stress};
use crate::symmetry::symmetrize_forces;
use planewave_comm::{CommClass, CommExt, Communicator, Solo};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

/// Starting curvature of the BFGS Hessian (Ha/bohr^2), ~ a covalent bond's.
const HESSIAN_GUESS: f64 = 0.7;
/// Largest displacement of one atom in one step (bohr).
const MAX_ATOM_STEP: f64 = 0.2;
/// Largest change of one strain component in one step.
const MAX_STRAIN_STEP: f64 = 0.03;
/// Typical elastic constant (Ha/bohr^3, ~150 GPa) used to balance strain and atomic coordinates.
const STIFFNESS_GUESS: f64 = 5e-3;
/// Consecutive halvings after which a relaxation is declared divergent.
const MAX_DAMPINGS: usize = 6;

/// What one ionic step reports.
#[derive(Debug, Clone)]
pub struct StepInfo {
    /// 0-based ionic step (0 = the starting structure).
    pub step: usize,
    /// Free energy F (Ha).
    pub energy: f64,
    /// Enthalpy F + p Omega (Ha); equals `energy` without cell relaxation.
    pub enthalpy: f64,
    /// Largest |F| over the atoms (Ha/bohr).
    pub max_force: f64,
    /// Pressure trace(sigma)/3 (Ha/bohr^3), when the stress was computed.
    pub pressure: Option<f64>,
    /// Largest |sigma - p 1| component (Ha/bohr^3), with cell relaxation.
    pub stress_residual: Option<f64>,
    /// Cell volume (bohr^3).
    pub volume: f64,
    /// SCF iterations this step needed.
    pub scf_iterations: usize,
    /// Wall seconds of the step.
    pub seconds: f64,
    /// A note when the step was damped after the enthalpy rose.
    pub note: Option<String>,
}

/// The outcome of a relaxation.
pub struct RelaxResult {
    /// Both tolerances met.
    pub converged: bool,
    /// One entry per ionic step.
    pub steps: Vec<StepInfo>,
    /// The set-up of the final structure.
    pub setup: Setup,
    /// Its SCF state.
    pub scf: ScfResult,
    /// Its forces.
    pub forces: Forces,
    /// Its stress (when computed).
    pub stress: Option<Stress>,
    /// Extended-XYZ frames, one per step.
    pub trajectory: Vec<String>,
    /// Why the relaxation stopped before converging, when a signal or the time limit stopped
    /// it (inside the SCF of the last step; its forces are those of that unfinished SCF).
    pub stopped: Option<StopReason>,
}

/// Checkpoints and clean stops of a relaxation.
#[derive(Default)]
pub struct Resume {
    /// The checkpoint written at the end of every ionic step's SCF (and on a stop).
    pub checkpoint: Option<CheckpointPlan>,
    /// When to stop cleanly (see [`crate::stop`]).
    pub stop: Option<StopWhen>,
    /// A checkpoint to start the first SCF from (its structure should already be the input's:
    /// see [`crate::checkpoint::Meta::apply_structure`]).
    pub restart: Option<PathBuf>,
    /// The algorithm choices of every ionic step's SCF.
    pub tuning: crate::tuning::Tuning,
}

/// Callbacks of a relaxation: SCF iterations, finished ionic steps.
pub trait Observer {
    /// An SCF iteration of ionic step `step` finished.
    fn scf_iteration(&mut self, step: usize, info: &IterationInfo);
    /// An ionic step finished (trajectory so far included, so it can be saved).
    fn ionic_step(&mut self, info: &StepInfo, trajectory: &[String]);
}

/// Generalised coordinates of a structure with respect to the starting cell.
struct Coordinates {
    lattice0: [[f64; 3]; 3],
    /// c in x = (r0, c eps).
    cell_factor: f64,
    natoms: usize,
    cell: bool,
}

impl Coordinates {
    fn len(&self) -> usize {
        3 * self.natoms + if self.cell { 9 } else { 0 }
    }

    fn strain(&self, x: &[f64]) -> [[f64; 3]; 3] {
        let mut eps = [[0.0; 3]; 3];
        if self.cell {
            let o = 3 * self.natoms;
            for (i, row) in eps.iter_mut().enumerate() {
                for (j, e) in row.iter_mut().enumerate() {
                    *e = x[o + 3 * i + j] / self.cell_factor;
                }
            }
        }
        eps
    }

    /// Lattice rows and fractional positions of `x`.
    fn structure(&self, x: &[f64]) -> ([[f64; 3]; 3], Vec<[f64; 3]>) {
        let d = deformation(&self.strain(x));
        let lattice = self.lattice0.map(|a| mat_vec(&d, &a));
        // r0 in the undeformed cell -> fractional s = B0 r0 / 2 pi.
        let recip0 = reciprocal(&self.lattice0);
        let frac = (0..self.natoms)
            .map(|i| {
                let r0 = [x[3 * i], x[3 * i + 1], x[3 * i + 2]];
                [0, 1, 2].map(|k| dot(&recip0[k], &r0) / (2.0 * std::f64::consts::PI))
            })
            .collect();
        (lattice, frac)
    }

    /// x of fractional positions in a cell with strain eps.
    fn coordinates_of(&self, frac: &[[f64; 3]], eps: &[[f64; 3]; 3]) -> Vec<f64> {
        let mut x = Vec::with_capacity(self.len());
        for s in frac {
            let r0 = [0, 1, 2].map(|j| (0..3).map(|i| s[i] * self.lattice0[i][j]).sum::<f64>());
            x.extend_from_slice(&r0);
        }
        if self.cell {
            for row in eps {
                x.extend(row.iter().map(|e| e * self.cell_factor));
            }
        }
        x
    }

    /// Gradient of the enthalpy at x from forces (Ha/bohr) and stress (QE sign).
    #[allow(clippy::needless_range_loop)] // tensor components read best as indices
    fn gradient(
        &self,
        x: &[f64],
        forces: &[[f64; 3]],
        stress: Option<&[[f64; 3]; 3]>,
        volume: f64,
        pressure: f64,
    ) -> Vec<f64> {
        let d = deformation(&self.strain(x));
        let mut g = Vec::with_capacity(self.len());
        for f in forces {
            // dE/dr0 = D^T dE/dr = -D^T F
            g.extend((0..3).map(|j| -(0..3).map(|i| d[i][j] * f[i]).sum::<f64>()));
        }
        if self.cell {
            let s = stress.expect("stress is computed with cell relaxation");
            let dinv_t = transpose(&inverse(&d));
            let mut m = [[0.0; 3]; 3];
            for i in 0..3 {
                for j in 0..3 {
                    let mut v = 0.0;
                    for k in 0..3 {
                        let sk = s[i][k] - if i == k { pressure } else { 0.0 };
                        v += -volume * sk * dinv_t[k][j];
                    }
                    m[i][j] = v;
                }
            }
            for i in 0..3 {
                for j in 0..3 {
                    g.push(0.5 * (m[i][j] + m[j][i]) / self.cell_factor);
                }
            }
        }
        g
    }

    /// Scale a step so that no atom moves more than MAX_ATOM_STEP and no strain component
    /// changes more than MAX_STRAIN_STEP; returns the factor used (<= 1).
    fn cap(&self, step: &mut [f64]) -> f64 {
        let mut f: f64 = 1.0;
        for i in 0..self.natoms {
            let n =
                (step[3 * i].powi(2) + step[3 * i + 1].powi(2) + step[3 * i + 2].powi(2)).sqrt();
            if n > MAX_ATOM_STEP {
                f = f.min(MAX_ATOM_STEP / n);
            }
        }
        if self.cell {
            for v in &step[3 * self.natoms..] {
                let e = v.abs() / self.cell_factor;
                if e > MAX_STRAIN_STEP {
                    f = f.min(MAX_STRAIN_STEP / e);
                }
            }
        }
        step.iter_mut().for_each(|s| *s *= f);
        f
    }
}

fn deformation(eps: &[[f64; 3]; 3]) -> [[f64; 3]; 3] {
    let mut d = *eps;
    for (i, row) in d.iter_mut().enumerate() {
        row[i] += 1.0;
    }
    d
}
fn mat_vec(m: &[[f64; 3]; 3], v: &[f64; 3]) -> [f64; 3] {
    [0, 1, 2].map(|i| (0..3).map(|j| m[i][j] * v[j]).sum())
}
fn dot(a: &[f64; 3], b: &[f64; 3]) -> f64 {
    a[0] * b[0] + a[1] * b[1] + a[2] * b[2]
}
fn transpose(m: &[[f64; 3]; 3]) -> [[f64; 3]; 3] {
    [0, 1, 2].map(|i| [0, 1, 2].map(|j| m[j][i]))
}
fn inverse(m: &[[f64; 3]; 3]) -> [[f64; 3]; 3] {
    let det = crate::crystal::det3(m);
    let c = |i: usize, j: usize| {
        let (a, b) = ((i + 1) % 3, (i + 2) % 3);
        let (p, q) = ((j + 1) % 3, (j + 2) % 3);
        m[a][p] * m[b][q] - m[a][q] * m[b][p]
    };
    // inverse = adjugate / det, adjugate = cofactor^T
    [0, 1, 2].map(|i| [0, 1, 2].map(|j| c(j, i) / det))
}
fn reciprocal(lattice: &[[f64; 3]; 3]) -> [[f64; 3]; 3] {
    // rows b_i with a_i . b_j = 2 pi delta_ij: B = 2 pi (A^{-1})^T
    let inv = inverse(lattice);
    [0, 1, 2].map(|i| [0, 1, 2].map(|j| 2.0 * std::f64::consts::PI * inv[j][i]))
}

/// True when the atoms can move at all once symmetry and rigid translation are accounted for.
fn positions_can_move(s: &Setup) -> bool {
    let n = s.model.crystal.atoms.len();
    let mut state = 0x9e37_79b9_7f4a_7c15_u64;
    let mut next = || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state >> 11) as f64 / (1u64 << 53) as f64 - 0.5
    };
    let trial: Vec<[f64; 3]> = (0..n).map(|_| [next(), next(), next()]).collect();
    let sym = symmetrize_forces(&s.model.symmetries, &s.model.crystal, &trial);
    let mean = [0, 1, 2].map(|k| sym.iter().map(|f| f[k]).sum::<f64>() / n as f64);
    sym.iter()
        .any(|f| (0..3).any(|k| (f[k] - mean[k]).abs() > 1e-8))
}

/// Overwrite the energy, total forces and total stress with world rank 0's.
fn share_from_root(
    world: &dyn Communicator,
    energy: &mut f64,
    f: &mut Forces,
    st: Option<&mut Stress>,
) {
    if world.size() == 1 {
        return;
    }
    let mut flat = vec![*energy];
    flat.extend(f.total.iter().flatten());
    let stress_at = flat.len();
    if let Some(s) = &st {
        flat.extend(s.total.iter().flatten());
    }
    world.broadcast(&mut flat, 0, CommClass::Other);
    *energy = flat[0];
    for (i, x) in f.total.iter_mut().flatten().enumerate() {
        *x = flat[1 + i];
    }
    if let Some(s) = st {
        for (i, x) in s.total.iter_mut().flatten().enumerate() {
            *x = flat[stress_at + i];
        }
    }
}

/// Relax the structure of `spec` with the controls `opts` in one process.
pub fn run(
    spec: RunSpec,
    opts: &RelaxSpec,
    observer: &mut dyn Observer,
) -> Result<RelaxResult, String> {
    run_on(spec, Arc::new(Solo), opts, observer)
}

/// Relax on the ranks of `world`, without checkpoints (see [`run_resumable`]).
pub fn run_on(
    spec: RunSpec,
    world: Arc<dyn Communicator>,
    opts: &RelaxSpec,
    observer: &mut dyn Observer,
) -> Result<RelaxResult, String> {
    run_resumable(spec, world, opts, observer, Resume::default())
}

/// Relax on the ranks of `world` (collective; every rank calls it with the same input and
/// takes the same steps, since forces and stress are the same on every rank), writing the
/// checkpoint of `resume` after every ionic step and stopping cleanly when it says so. A
/// restart continues from the checkpoint's density and bands (BFGS/FIRE history and step
/// count start afresh).
pub fn run_resumable(
    spec: RunSpec,
    world: Arc<dyn Communicator>,
    opts: &RelaxSpec,
    observer: &mut dyn Observer,
    resume: Resume,
) -> Result<RelaxResult, String> {
    let setup0 = setup::build_on(spec.clone(), world.clone()).map_err(|e| e.to_string())?;
    let setup = &setup0;
    if !opts.cell && !positions_can_move(setup) {
        return Err(format!(
            "nothing to relax: with the crystal's {} symmetry operations no atom can move except by a rigid translation\n  hint: relax the cell as well ([relax] cell = true, or QE calculation = 'vc-relax'), or displace an atom to lower the symmetry",
            setup.model.symmetries.len()
        ));
    }
    let natoms = setup.model.crystal.atoms.len();
    let coords = Coordinates {
        lattice0: setup.model.crystal.lattice,
        cell_factor: (setup.model.crystal.volume * STIFFNESS_GUESS / HESSIAN_GUESS).sqrt(),
        natoms,
        cell: opts.cell,
    };
    let frac0: Vec<[f64; 3]> = setup.model.crystal.atoms.iter().map(|a| a.frac).collect();
    let mut x = coords.coordinates_of(&frac0, &[[0.0; 3]; 3]);
    let mut bfgs = bfgs::Bfgs::new(coords.len(), HESSIAN_GUESS);
    let mut fire = fire::Fire::new(coords.len(), 1.0);
    let want_stress = opts.cell || spec.properties.stress;

    let mut steps: Vec<StepInfo> = Vec::new();
    let mut trajectory: Vec<String> = Vec::new();
    let mut previous: Option<(Setup, ScfResult)> = None;
    // Best accepted point: (x, enthalpy, gradient).
    let mut best: Option<(Vec<f64>, f64)> = None;
    let mut dampings = 0;
    let mut note: Option<String> = None;
    let mut first = Some(setup0);
    for step in 0..=opts.max_steps {
        let t0 = Instant::now();
        let setup = match first.take() {
            Some(s) => s,
            None => {
                let (lattice, frac) = coords.structure(&x);
                let mut sp = spec.clone();
                sp.lattice = lattice;
                for (a, f) in sp.atoms.iter_mut().zip(&frac) {
                    a.frac = *f;
                }
                let prev = previous.as_ref().map(|(s, _)| &*s.basis.parallel);
                setup::build_following(sp, world.clone(), prev)
                    .map_err(|e| format!("ionic step {step}: {e}"))?
            }
        };
        let mut setup = setup;
        setup.params.checkpoint = resume.checkpoint.clone();
        setup.params.stop = resume.stop.clone();
        setup.params.tuning = resume.tuning;
        let start = match (&previous, &resume.restart) {
            (Some((s, r)), _) => Some(ScfStart::from_previous(
                &s.model,
                &s.basis,
                r,
                &setup.model,
                &setup.basis,
            )),
            (None, Some(path)) => Some(
                checkpoint::read(
                    path,
                    &setup.model,
                    &setup.basis,
                    (setup.params.nbands, setup.params.seed),
                    resume.tuning.checkpoint,
                )?
                .start,
            ),
            (None, None) => None,
        };
        let result = scf::run_from(&setup.model, &setup.basis, &setup.params, start, |it| {
            observer.scf_iteration(step, it)
        })?;
        if let Some(reason) = result.stopped {
            let f = forces::compute(&setup.model, &setup.basis, &result);
            return Ok(RelaxResult {
                converged: false,
                steps,
                setup,
                scf: result,
                forces: f,
                stress: None,
                trajectory,
                stopped: Some(reason),
            });
        }
        if !result.converged {
            return Err(format!(
                "ionic step {step}: the SCF did not converge in {} iterations; raise scf.max_iterations or lower scf.mixing.beta",
                result.iterations
            ));
        }
        let mut f = forces::compute(&setup.model, &setup.basis, &result);
        let mut st = want_stress.then(|| stress::compute(&setup.model, &setup.basis, &result));
        let mut energy = result.energies.total();
        // Every rank takes rank 0's numbers, so that every rank takes the same step.
        share_from_root(world.as_ref(), &mut energy, &mut f, st.as_mut());
        let volume = setup.model.crystal.volume;
        let enthalpy = energy
            + if opts.cell {
                opts.pressure * volume
            } else {
                0.0
            };
        let finite = enthalpy.is_finite()
            && f.total.iter().flatten().all(|v| v.is_finite())
            && st
                .as_ref()
                .is_none_or(|s| s.total.iter().flatten().all(|v| v.is_finite()));
        if !finite {
            return Err(format!(
                "ionic step {step}: non-finite energy, force or stress; the structure was not written"
            ));
        }
        let max_force = f.max_norm();
        let stress_residual = if opts.cell {
            st.as_ref().map(|s| {
                let mut m: f64 = 0.0;
                for i in 0..3 {
                    for j in 0..3 {
                        let p = if i == j { opts.pressure } else { 0.0 };
                        m = m.max((s.total[i][j] - p).abs());
                    }
                }
                m
            })
        } else {
            None
        };
        trajectory.push(files::xyz_frame(
            &setup.model,
            energy,
            &f.total,
            st.as_ref().map(|s| &s.total),
            step,
        ));
        let info = StepInfo {
            step,
            energy,
            enthalpy,
            max_force,
            pressure: st.as_ref().map(|s| s.pressure()),
            stress_residual,
            volume,
            scf_iterations: result.iterations,
            seconds: t0.elapsed().as_secs_f64(),
            note: note.take(),
        };
        observer.ionic_step(&info, &trajectory);
        steps.push(info);
        let converged = max_force < opts.force_tolerance
            && stress_residual.is_none_or(|r| r < opts.stress_tolerance);
        let g = coords.gradient(
            &x,
            &f.total,
            st.as_ref().map(|s| &s.total),
            volume,
            opts.pressure,
        );
        if converged || step == opts.max_steps {
            return Ok(RelaxResult {
                converged,
                steps,
                setup,
                scf: result,
                forces: f,
                stress: st,
                trajectory,
                stopped: None,
            });
        }
        // Damping: a step that raised the enthalpy is halved from the best point.
        if let Some((xb, hb)) = &best {
            if enthalpy > hb + 1e-6 * natoms as f64 {
                dampings += 1;
                if dampings > MAX_DAMPINGS {
                    return Err(format!(
                        "ionic step {step}: the relaxation diverges (the enthalpy rose after {MAX_DAMPINGS} successive step halvings); check the structure and the SCF settings"
                    ));
                }
                note = Some(format!(
                    "enthalpy rose by {:.2e} Ha: step halved",
                    enthalpy - hb
                ));
                bfgs.forget_last();
                fire.halt();
                x = xb.iter().zip(&x).map(|(b, c)| b + 0.5 * (c - b)).collect();
                previous = Some((setup, result));
                continue;
            }
        }
        dampings = 0;
        best = Some((x.clone(), enthalpy));
        let mut dx = match opts.algorithm {
            RelaxAlgorithm::Bfgs => bfgs.step(&x, &g)?,
            RelaxAlgorithm::Fire => {
                let force: Vec<f64> = g.iter().map(|v| -v).collect();
                fire.step(&force)
            }
        };
        coords.cap(&mut dx);
        x.iter_mut().zip(&dx).for_each(|(a, b)| *a += b);
        previous = Some((setup, result));
    }
    unreachable!("the loop returns at step == max_steps")
}
