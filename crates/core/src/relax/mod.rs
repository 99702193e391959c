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
use crate::scf::{CheckpointPlan, IterationInfo, ScfResult};
use crate::setup::{self, Setup};
use crate::stop::{StopReason, StopWhen};
use crate::stress::Stress;
use crate::symmetry::symmetrize_forces;
use crate::workflow;
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
/// count start afresh). Every ionic step is one [`workflow::run`] (SCF, forces, stress).
pub fn run_resumable(
    mut spec: RunSpec,
    world: Arc<dyn Communicator>,
    opts: &RelaxSpec,
    observer: &mut dyn Observer,
    resume: Resume,
) -> Result<RelaxResult, String> {
    spec.properties.forces = true;
    spec.properties.stress |= opts.cell;
    let setup0 = setup::build_on(spec.clone(), world.clone()).map_err(|e| e.to_string())?;
    if !opts.cell && !positions_can_move(&setup0) {
        return Err(format!(
            "nothing to relax: with the crystal's {} symmetry operations no atom can move except by a rigid translation\n  hint: relax the cell as well ([relax] cell = true, or QE calculation = 'vc-relax'), or displace an atom to lower the symmetry",
            setup0.model.symmetries.len()
        ));
    }
    let crystal = &setup0.model.crystal;
    let coords = Coordinates {
        lattice0: crystal.lattice,
        cell_factor: (crystal.volume * STIFFNESS_GUESS / HESSIAN_GUESS).sqrt(),
        natoms: crystal.atoms.len(),
        cell: opts.cell,
    };
    let frac0: Vec<[f64; 3]> = crystal.atoms.iter().map(|a| a.frac).collect();
    let mut walk = Walk {
        x: coords.coordinates_of(&frac0, &[[0.0; 3]; 3]),
        bfgs: bfgs::Bfgs::new(coords.len(), HESSIAN_GUESS),
        fire: fire::Fire::new(coords.len(), 1.0),
        best: None,
        dampings: 0,
        note: None,
    };
    let (mut steps, mut trajectory) = (Vec::new(), Vec::new());
    let mut previous: Option<(Setup, ScfResult)> = None;
    let mut first = Some(setup0);
    for step in 0..=opts.max_steps {
        let t0 = Instant::now();
        let mut setup = match first.take() {
            Some(s) => s,
            None => step_setup(&spec, &coords, &walk.x, &world, previous.as_ref())
                .map_err(|e| format!("ionic step {step}: {e}"))?,
        };
        setup.params.checkpoint = resume.checkpoint.clone();
        setup.params.stop = resume.stop.clone();
        setup.params.tuning = resume.tuning;
        let start = starting_point(previous.as_ref(), &resume, &setup)?;
        let calc = workflow::run(&setup, start, |it: &IterationInfo| {
            observer.scf_iteration(step, it)
        })?;
        if let Some(reason) = calc.scf.stopped {
            let forces = forces::compute(&setup.model, &setup.basis, &calc.scf);
            return Ok(RelaxResult {
                converged: false,
                steps,
                setup,
                scf: calc.scf,
                forces,
                stress: None,
                trajectory,
                stopped: Some(reason),
            });
        }
        if !calc.scf.converged {
            return Err(format!(
                "ionic step {step}: the SCF did not converge in {} iterations; raise scf.max_iterations or lower scf.mixing.beta",
                calc.scf.iterations
            ));
        }
        let point = Point::of(&setup, calc, opts, world.as_ref())
            .map_err(|e| format!("ionic step {step}: {e}"))?;
        trajectory.push(point.frame(&setup, step));
        let info = point.info(step, t0.elapsed().as_secs_f64(), walk.note.take());
        observer.ionic_step(&info, &trajectory);
        steps.push(info);
        let converged = point.max_force < opts.force_tolerance
            && point
                .stress_residual
                .is_none_or(|r| r < opts.stress_tolerance);
        if converged || step == opts.max_steps {
            return Ok(RelaxResult {
                converged,
                steps,
                setup,
                scf: point.scf,
                forces: point.forces,
                stress: point.stress,
                trajectory,
                stopped: None,
            });
        }
        walk.advance(&coords, &point, opts)
            .map_err(|e| format!("ionic step {step}: {e}"))?;
        previous = Some((setup, point.scf));
    }
    unreachable!("the loop returns at step == max_steps")
}

/// The set-up of the structure at `x`, keeping the previous step's deal of k-points to groups.
fn step_setup(
    spec: &RunSpec,
    coords: &Coordinates,
    x: &[f64],
    world: &Arc<dyn Communicator>,
    previous: Option<&(Setup, ScfResult)>,
) -> Result<Setup, crate::input::InputError> {
    let (lattice, frac) = coords.structure(x);
    let mut sp = spec.clone();
    sp.lattice = lattice;
    for (a, f) in sp.atoms.iter_mut().zip(&frac) {
        a.frac = *f;
    }
    let prev = previous.map(|(s, _)| &*s.basis.parallel);
    setup::build_following(sp, world.clone(), prev)
}

/// Where an ionic step's SCF starts: the previous step's density and bands, else the restart
/// checkpoint's, else from scratch.
fn starting_point(
    previous: Option<&(Setup, ScfResult)>,
    resume: &Resume,
    setup: &Setup,
) -> Result<Option<ScfStart>, String> {
    let (model, basis) = (&setup.model, &setup.basis);
    Ok(match (previous, &resume.restart) {
        (Some((s, r)), _) => Some(ScfStart::from_previous(&s.model, &s.basis, r, model, basis)),
        (None, Some(path)) => {
            let identity = (setup.params.nbands, setup.params.seed);
            let read = checkpoint::read(path, model, basis, identity, resume.tuning.checkpoint)?;
            Some(read.start)
        }
        (None, None) => None,
    })
}

/// One converged structure: its energy, enthalpy, forces and stress, the same on every rank.
struct Point {
    scf: ScfResult,
    forces: Forces,
    stress: Option<Stress>,
    energy: f64,
    enthalpy: f64,
    volume: f64,
    max_force: f64,
    /// Largest |sigma - p 1| component (Ha/bohr^3), with cell relaxation.
    stress_residual: Option<f64>,
}

impl Point {
    /// The point of a finished calculation; every rank takes rank 0's numbers, so that every
    /// rank takes the same step. Non-finite numbers are an error.
    fn of(
        setup: &Setup,
        calc: workflow::Calculation,
        opts: &RelaxSpec,
        world: &dyn Communicator,
    ) -> Result<Self, String> {
        let mut forces = calc.forces.expect("a relaxation asks for forces");
        let mut stress = calc.stress;
        let mut energy = calc.scf.energies.total();
        share_from_root(world, &mut energy, &mut forces, stress.as_mut());
        let volume = setup.model.crystal.volume;
        let enthalpy = energy
            + if opts.cell {
                opts.pressure * volume
            } else {
                0.0
            };
        let finite = enthalpy.is_finite()
            && forces.total.iter().flatten().all(|v| v.is_finite())
            && (stress.iter()).all(|s| s.total.iter().flatten().all(|v| v.is_finite()));
        if !finite {
            return Err("non-finite energy, force or stress; the structure was not written".into());
        }
        let stress_residual = stress.as_ref().filter(|_| opts.cell).map(|s| {
            let mut m: f64 = 0.0;
            for (i, row) in s.total.iter().enumerate() {
                for (j, v) in row.iter().enumerate() {
                    m = m.max((v - if i == j { opts.pressure } else { 0.0 }).abs());
                }
            }
            m
        });
        Ok(Point {
            max_force: forces.max_norm(),
            scf: calc.scf,
            forces,
            stress,
            energy,
            enthalpy,
            volume,
            stress_residual,
        })
    }

    /// The trajectory frame of this point.
    fn frame(&self, setup: &Setup, step: usize) -> String {
        let stress = self.stress.as_ref().map(|s| &s.total);
        files::xyz_frame(&setup.model, self.energy, &self.forces.total, stress, step)
    }

    /// What ionic step `step` reports.
    fn info(&self, step: usize, seconds: f64, note: Option<String>) -> StepInfo {
        StepInfo {
            step,
            energy: self.energy,
            enthalpy: self.enthalpy,
            max_force: self.max_force,
            pressure: self.stress.as_ref().map(|s| s.pressure()),
            stress_residual: self.stress_residual,
            volume: self.volume,
            scf_iterations: self.scf.iterations,
            seconds,
            note,
        }
    }
}

/// The optimiser's walk: where it is, its history, and the best point so far.
struct Walk {
    x: Vec<f64>,
    bfgs: bfgs::Bfgs,
    fire: fire::Fire,
    /// Best accepted point: (x, enthalpy).
    best: Option<(Vec<f64>, f64)>,
    /// Successive halvings.
    dampings: usize,
    /// What the next step reports (a halving).
    note: Option<String>,
}

impl Walk {
    /// The next x from `point`: a step of the optimiser, or, when the enthalpy rose, half way
    /// back to the best point.
    fn advance(
        &mut self,
        coords: &Coordinates,
        point: &Point,
        opts: &RelaxSpec,
    ) -> Result<(), String> {
        if let Some((xb, hb)) = &self.best {
            if point.enthalpy > hb + 1e-6 * coords.natoms as f64 {
                self.dampings += 1;
                if self.dampings > MAX_DAMPINGS {
                    return Err(format!("the relaxation diverges (the enthalpy rose after {MAX_DAMPINGS} successive step halvings); check the structure and the SCF settings"));
                }
                self.note = Some(format!(
                    "enthalpy rose by {:.2e} Ha: step halved",
                    point.enthalpy - hb
                ));
                self.bfgs.forget_last();
                self.fire.halt();
                self.x = xb
                    .iter()
                    .zip(&self.x)
                    .map(|(b, c)| b + 0.5 * (c - b))
                    .collect();
                return Ok(());
            }
        }
        self.dampings = 0;
        self.best = Some((self.x.clone(), point.enthalpy));
        let stress = point.stress.as_ref().map(|s| &s.total);
        let g = coords.gradient(
            &self.x,
            &point.forces.total,
            stress,
            point.volume,
            opts.pressure,
        );
        let mut dx = match opts.algorithm {
            RelaxAlgorithm::Bfgs => self.bfgs.step(&self.x, &g)?,
            RelaxAlgorithm::Fire => self.fire.step(&g.iter().map(|v| -v).collect::<Vec<_>>()),
        };
        coords.cap(&mut dx);
        self.x.iter_mut().zip(&dx).for_each(|(a, b)| *a += b);
        Ok(())
    }
}
