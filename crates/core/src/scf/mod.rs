//! The self-consistent field loop: a fixed point on the density.
//!
//! Each iteration: potentials from rho_in -> lowest bands at every (spin, k) by the eigensolver
//! (warm-started, tolerance following the density residual) -> occupations -> rho_out -> energy
//! E[psi, rho_out] -> mixing. The rules are values in [`ScfParams::policies`]
//! ([`policies`]): by default the eigensolver tolerance follows the density residual, the
//! mixing is Anderson/Kerker, and a loop has converged when both the energy change and the
//! density residual sqrt(\int |rho_out - rho_in|^2) are below their tolerances.
//!
//! [`Engine`] is the loop with its terms; [`run`] is one loop, a hybrid run (`exx::outer`) a
//! semilocal loop and one loop per outer step, each through the engine's public methods.

pub mod policies;

use crate::atomic_start::{AtomicStart, BandStart};
use crate::augmentation::{flat_becsum, refill_becsum, AugmentationCharges};
use crate::bands::BandScalar;
use crate::basis::Basis;
use crate::checkpoint::{self, Snapshot};
use crate::density::{self, Density};
use crate::eigensolver::ritz_start;
use crate::eigensolver::Eigensolver;
use crate::energies::{Energies, TermEnergy};
use crate::exx::ace::{Ace, Operators};
use crate::hamiltonian::{ApplyTimes, KHamiltonian};
use crate::model::Model;
use crate::occupation::{self, Occupations};
use crate::parallel::PANIC_RANK_ENV;
pub use crate::restart::ScfStart;
use crate::stop::{StopReason, StopWhen};
use crate::symmetry::DensitySymmetrizer;
use crate::terms::exact_exchange::EXACT_EXCHANGE;
use crate::terms::term::{self, Bands, State};
use num_complex::Complex64;
use planewave_linalg::Mat;
pub use policies::Policies;
use policies::{ConvergenceQuery, Mixer, ToleranceQuery};
use rayon::prelude::*;
use std::borrow::Cow;
use std::time::Instant;

/// Occupation (electrons, spin factor included) above which a band counts as occupied for the
/// eigensolver's tolerance; below it the band's error reaches the density 1e6 times damped.
const OCCUPIED: f64 = 1e-6;

/// Relative amplitude of the noise on each coefficient of the atomic orbitals of a start (QE's
/// `atomic+random` uses the same 5%). Without it a start of symmetric orbitals spans no state of
/// some symmetries, and Davidson cannot reach them: h2o_pbe_us_paw_gamma with `nbnd = 6` gave
/// 2.3130 eV for band 6 where QE has 2.2452.
const ORBITAL_NOISE: f64 = 0.05;

/// The residual target of the final pass on a converged loop's empty bands ([`Engine::polish`]);
/// Davidson takes them to [`crate::eigensolver::EMPTY_TOL_FACTOR`] times it (1e-4). Their
/// eigenvalues' error goes as the residual's square: h2o_pbe_us_paw_gamma's band 6 (`nbnd =
/// 6`) took 34 Davidson iterations to it and came within 2.2e-7 Ha of its value after 100.
/// (QE's default stops its empty bands at an eigenvalue change of 1e-5 Ry.)
const POLISH_TOL: f64 = 1e-5;

/// The most Davidson iterations of that final pass. The highest band converges at the rate set
/// by its gap to the first band above the block, which may be small.
const POLISH_MAX_ITERATIONS: usize = 100;

/// The key, under a (spin, k) block's seed, of the stream of its orbitals' noise (apart from
/// the random bands' streams, keyed by band).
const ORBITAL_NOISE_STREAM: u64 = u64::MAX;

/// SCF parameters.
#[derive(Debug, Clone)]
pub struct ScfParams {
    /// Number of bands per k-point and spin.
    pub nbands: usize,
    /// Stop when |E_n - E_{n-1}| is below this (Ha)...
    pub energy_tolerance: f64,
    /// ...and the density residual is below this (electrons/bohr^{3/2}).
    pub density_tolerance: f64,
    /// Iteration limit.
    pub max_iterations: usize,
    /// The eigensolver tolerance rule, the convergence test and the density mixing.
    pub policies: Policies,
    /// Algorithm choices that do not change results (band products, checkpoint transfers).
    pub tuning: crate::tuning::Tuning,
    /// The device of the local part of H (None: the CPU's batched FFTs;
    /// [`crate::device::open`]).
    pub device: Option<crate::device_local::DeviceLocal>,
    /// Seed of the random starting wavefunctions.
    pub seed: u64,
    /// How bands start when the run does not continue from bands.
    pub start: crate::atomic_start::BandStart,
    /// The iterative eigensolver.
    pub eigensolver: Eigensolver,
    /// Where and how often to write checkpoints (None: never).
    pub checkpoint: Option<CheckpointPlan>,
    /// When to stop cleanly before converging (signals, time limit; None: never). A stop
    /// writes the checkpoint of `checkpoint` if there is one.
    pub stop: Option<StopWhen>,
}

/// When the SCF writes its state to a checkpoint file (see [`crate::checkpoint`]).
#[derive(Debug, Clone)]
pub struct CheckpointPlan {
    /// The file (replaced atomically at every write).
    pub path: std::path::PathBuf,
    /// Also every this many iterations (with the next iteration's input density).
    pub every: Option<usize>,
    /// Also at the end of the SCF (a clean stop always writes it).
    pub at_end: bool,
}

/// What one iteration reports.
#[derive(Debug, Clone)]
pub struct IterationInfo {
    /// 1-based iteration number.
    pub iteration: usize,
    /// Free energy F (Ha).
    pub energy: f64,
    /// Change of F from the previous iteration (Ha); NaN on the first.
    pub delta_e: f64,
    /// Density residual.
    pub residual: f64,
    /// Seconds spent in this iteration.
    pub seconds: f64,
    /// Average eigensolver iterations per (spin, k).
    pub eigensolver_iterations: f64,
    /// Whether `energy` is a first-order estimate (GGA far from convergence, see
    /// [`EXACT_ENERGY_RESIDUALS`]) rather than the functional at the output density.
    pub estimated: bool,
}

/// Iterations whose density residual is below this many times the tolerance (or whose
/// functional gives no expansion: LDA) take the energy at the output density exactly; the
/// others take GGA XC's energy to first order about the input density, from its potential
/// ([`term::Potentials::expanded_energy`]), which saves evaluating the functional and its
/// gradient transforms a second time. Convergence is judged on two exact energies in a row.
pub const EXACT_ENERGY_RESIDUALS: f64 = 10.0;

/// What one outer step of a hybrid run reports: the exchange operator rebuilt from the bands
/// its inner SCF loop converged.
#[derive(Debug, Clone, serde::Serialize)]
pub struct ExxStepInfo {
    /// 1-based outer step.
    pub step: usize,
    /// SCF iterations of its inner loop.
    pub inner_iterations: usize,
    /// Total energy with the Fock energy of the new bands (Ha).
    pub energy: f64,
    /// Fock energy of the new bands, `(1/2) sum w <psi|V_x[psi]|psi>` (Ha; QE's `+ Fock
    /// energy`).
    pub fock_energy: f64,
    /// The estimated exchange error `fock1 - (fock0 + fock2)/2` (Ha; QE's `dexx`): `fock1` the
    /// new bands with the old operator, `fock0`/`fock2` the old/new bands with their own.
    pub dexx: f64,
    /// Seconds of the step (inner loop and operator).
    pub seconds: f64,
}

/// Receives an SCF run's progress: every iteration, and a hybrid run's outer steps.
/// Any `FnMut(&IterationInfo)` is one that ignores the outer steps.
pub trait ScfObserver {
    /// After every SCF iteration.
    fn iteration(&mut self, info: &IterationInfo);
    /// After every outer step of a hybrid run.
    fn exx_step(&mut self, _info: &ExxStepInfo) {}
    /// When the SCF has ended (converged, stopped or out of iterations), before anything that
    /// follows it (forces, stress).
    fn finished(&mut self, _result: &ScfResult) {}
}

impl<F: FnMut(&IterationInfo)> ScfObserver for F {
    fn iteration(&mut self, info: &IterationInfo) {
        self(info)
    }
}

/// Timings per phase, seconds.
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct Timings {
    /// Set-up (potentials, projectors, Ewald, guess).
    pub setup: f64,
    /// Eigensolver.
    pub eigensolver: f64,
    /// Of the eigensolver's time: applying the local part of H (kinetic and local potential,
    /// the FFT round trips).
    pub h_local: f64,
    /// Of the eigensolver's time: applying the projectors (nonlocal pseudopotential).
    pub h_nonlocal: f64,
    /// Of the eigensolver's time: applying the exchange operators (hybrids).
    pub h_exchange: f64,
    /// Of the eigensolver's time: its small dense problems (subspace eigenproblems and
    /// Cholesky factorisations).
    pub subspace: f64,
    /// Density construction.
    pub density: f64,
    /// Potentials and energies.
    pub potentials: f64,
    /// Mixing.
    pub mixing: f64,
    /// A hybrid's exchange operators (built once per outer step).
    pub exchange: f64,
    /// Writing checkpoints.
    pub checkpoint: f64,
    /// Whole SCF.
    pub total: f64,
}

impl Timings {
    /// An eigensolve's `seconds` and its operators' times `applied` added to their parts.
    fn add_eigensolve(&mut self, seconds: f64, applied: &ApplyTimes) {
        self.eigensolver += seconds;
        self.h_local += applied.local;
        self.h_nonlocal += applied.projectors;
        self.h_exchange += applied.low_rank;
        self.subspace += applied.subspace;
    }
}

/// The converged (or last) state.
#[derive(Debug)]
pub struct ScfResult {
    /// Whether the tolerances were met.
    pub converged: bool,
    /// Iterations done.
    pub iterations: usize,
    /// Energy terms.
    pub energies: Energies,
    /// `Eigenvalues[spin][k][band]` (Ha, QE convention: includes the alpha Z shift).
    pub eigenvalues: Vec<Vec<Vec<f64>>>,
    /// Occupations and Fermi level.
    pub occupations: Occupations,
    /// Final (output) density.
    pub density: Density,
    /// Total and absolute magnetisation (bohr magnetons per cell).
    pub magnetization: (f64, f64),
    /// `Wavefunctions[spin][k]`.
    pub wavefunctions: Wavefunctions,
    /// Per-iteration history (all SCF loops of a hybrid run, numbered on).
    pub history: Vec<IterationInfo>,
    /// A hybrid run's outer (exchange) steps; empty otherwise.
    pub exx_steps: Vec<ExxStepInfo>,
    /// Timings.
    pub timings: Timings,
    /// Why the SCF stopped before converging, when a signal or the time limit stopped it.
    pub stopped: Option<StopReason>,
}

/// Converged bands per spin channel and k-point, in the basis' representation.
#[derive(Debug)]
pub enum Wavefunctions {
    /// Complex coefficients over each k-point's sphere.
    Complex(Vec<Vec<Mat<Complex64>>>),
    /// Γ-point real band vectors (see [`crate::basis`]).
    Real(Vec<Vec<Mat<f64>>>),
}

/// Everything that depends on the positions but not on the density (besides the terms).
struct Fixed {
    core: Option<(Vec<Complex64>, Vec<f64>)>,
    symmetrizer: Option<DensitySymmetrizer>,
    /// The ultrasoft species' augmentation charges (None: norm-conserving only).
    augmentation: Option<std::sync::Arc<AugmentationCharges>>,
    /// The PAW atoms' one-centre part (None without PAW species).
    paw: Option<crate::terms::paw::OneCentre>,
}

impl Fixed {
    /// The state the terms read: `rho`, the core density, and the bands if given.
    #[allow(clippy::too_many_arguments)]
    fn state<'a, T: BandScalar>(
        &'a self,
        model: &'a Model,
        basis: &'a Basis,
        rho: &'a Density,
        bands: Option<Bands<'a, T>>,
        minus_ts: f64,
        exx_on: bool,
        ace: Option<&'a [Vec<Option<Ace<T>>>]>,
    ) -> State<'a, T> {
        State {
            model,
            basis,
            rho,
            core: self.core.as_ref(),
            bands,
            local_potential: None,
            minus_ts,
            exx_on,
            ace,
        }
    }
}

/// The coupling's screening of ultrasoft species by the local potentials `veff` (per spin, at
/// this rank's grid points), with PAW's one-centre coupling of `rho`'s band sums added.
/// Collective.
pub(crate) fn screening(
    model: &Model,
    basis: &Basis,
    aug: &AugmentationCharges,
    paw: Option<&crate::terms::paw::OneCentre>,
    veff: &[Vec<f64>],
    rho: &Density,
) -> crate::augmentation::Becsum {
    let fields: Vec<&[f64]> = veff.iter().map(Vec::as_slice).collect();
    let v_g = basis.rho_to_sphere_many(&fields);
    let mut delta = aug.screening(model, basis, &v_g);
    if let Some(paw) = paw {
        let b = paw.becsum_of(model, rho);
        let (_, d1) = paw.evaluate(model, &b, basis.parallel.world().as_ref());
        for (x, y) in delta
            .iter_mut()
            .flatten()
            .flatten()
            .zip(d1.iter().flatten().flatten())
        {
            *x += y;
        }
    }
    delta
}

/// One iteration's input and output densities in the mixer's form (`to_mix`).
type MixPair = (Vec<Vec<Complex64>>, Vec<Vec<Complex64>>);

/// The occupied bands of each (spin, k) block: those up to the last with an occupation above
/// [`OCCUPIED`].
fn occupied_counts(occ: &[Vec<Vec<f64>>]) -> Vec<Vec<usize>> {
    let count = |o: &Vec<f64>| o.iter().rposition(|&f| f > OCCUPIED).map_or(0, |i| i + 1);
    occ.iter().map(|s| s.iter().map(count).collect()).collect()
}

/// Mixing representation (total, magnetisation) <-> spin channels (up, down).
fn to_mix(g: &[Vec<Complex64>]) -> Vec<Vec<Complex64>> {
    if g.len() == 1 {
        return g.to_vec();
    }
    let t = g[0].iter().zip(&g[1]).map(|(u, d)| u + d).collect();
    let m = g[0].iter().zip(&g[1]).map(|(u, d)| u - d).collect();
    vec![t, m]
}
fn from_mix(g: &[Vec<Complex64>]) -> Vec<Vec<Complex64>> {
    if g.len() == 1 {
        return g.to_vec();
    }
    let u = g[0].iter().zip(&g[1]).map(|(t, m)| 0.5 * (t + m)).collect();
    let d = g[0].iter().zip(&g[1]).map(|(t, m)| 0.5 * (t - m)).collect();
    vec![u, d]
}

/// Run the SCF for `model` on `basis`; `on_iteration` is called after every iteration.
pub fn run(
    model: &Model,
    basis: &Basis,
    params: &ScfParams,
    on_iteration: impl FnMut(&IterationInfo),
) -> Result<ScfResult, String> {
    run_from(model, basis, params, None, on_iteration)
}

/// Run the SCF from a starting point (see [`crate::restart::ScfStart`]) instead of the atomic
/// guess and random bands.
pub fn run_from(
    model: &Model,
    basis: &Basis,
    params: &ScfParams,
    start: Option<ScfStart>,
    on_iteration: impl FnMut(&IterationInfo),
) -> Result<ScfResult, String> {
    run_observed(model, basis, params, start, on_iteration)
}

/// [`run_from`] reporting to an [`ScfObserver`] (which also hears of a hybrid run's outer
/// steps).
pub fn run_observed(
    model: &Model,
    basis: &Basis,
    params: &ScfParams,
    start: Option<ScfStart>,
    observer: impl ScfObserver,
) -> Result<ScfResult, String> {
    let (density, wavefunctions) = match start {
        Some(s) => (Some((s.density_g, s.becsum)), s.wavefunctions),
        None => (None, None),
    };
    // Bands of the other representation (real vs complex) cannot seed this run: start fresh.
    if basis.kpoints.iter().any(|k| k.is_gamma_real()) {
        let psi = match wavefunctions {
            Some(Wavefunctions::Real(p)) => Some(p),
            _ => None,
        };
        run_with::<f64>(
            model,
            basis,
            params,
            (density, psi),
            observer,
            Wavefunctions::Real,
        )
    } else {
        let psi = match wavefunctions {
            Some(Wavefunctions::Complex(p)) => Some(p),
            _ => None,
        };
        let wrap = Wavefunctions::Complex;
        run_with::<Complex64>(model, basis, params, (density, psi), observer, wrap)
    }
}

/// Write `snap` to the checkpoint of `params`, timed in `timings.checkpoint`. Collective.
fn save<T: BandScalar>(
    (plan, params): (&CheckpointPlan, &ScfParams),
    model: &Model,
    basis: &Basis,
    snap: &Snapshot<'_, T>,
    timings: &mut Timings,
) -> Result<(), String> {
    let t0 = Instant::now();
    checkpoint::write(&plan.path, model, basis, snap, params.tuning.checkpoint)?;
    timings.checkpoint += t0.elapsed().as_secs_f64();
    Ok(())
}

/// Eigenvalues per spin channel, k-point and band (Ha).
type Eigenvalues = Vec<Vec<Vec<f64>>>;

/// Starting density (sphere coefficients per spin channel, with its PAW band sums) and bands,
/// if any.
type Start<T> = (
    Option<(Vec<Vec<Complex64>>, Option<crate::augmentation::Becsum>)>,
    Option<Vec<Vec<Mat<T>>>>,
);

/// The SCF engine of one model on one basis: the terms and what stays fixed while it iterates.
/// [`Engine::iterate`] runs one SCF loop with the policies of its parameters; a run is one
/// loop ([`run`]), a hybrid run (`exx::outer`) a semilocal loop and then one loop per outer
/// step with the exchange operators fixed, each a client of this public API.
pub struct Engine<'a, T: BandScalar> {
    /// The physical system.
    pub model: &'a Model,
    /// The discretisation and the layout.
    pub basis: &'a Basis,
    /// The parameters, policies included.
    pub params: &'a ScfParams,
    fixed: Fixed,
    terms: Vec<Box<dyn term::Term<T> + 'a>>,
    /// k-point weights.
    weights: Vec<f64>,
    /// Davidson's search space (without band groups), reused by every (spin, k) block and
    /// iteration and kept for the engine's life: it is the peak memory's workspace anyway.
    workspace: std::sync::Mutex<crate::eigensolver::davidson::Workspace<T>>,
}

/// Whether a rank's `count` (spin, k) blocks are solved at once, one per thread (each with its
/// own Davidson workspace, at most 5 MiB: [`CONCURRENT_BLOCK_SIZE`]), rather than one after the
/// other with every thread on the block. They are when the tuning allows it, there are several,
/// the rank has threads, no band or G-vector group shares a block's work (its collectives
/// would interleave), no device holds the bands, and every block is small, where the threads
/// inside one block's transforms and products have too little to share. Either way gives the
/// same bits: each block's work is the same.
pub fn blocks_concurrently(basis: &Basis, params: &ScfParams, count: usize) -> bool {
    let par = &*basis.parallel;
    params.tuning.concurrent_blocks
        && count > 1
        && rayon::current_num_threads() > 1
        && par.band_groups() == 1
        && par.topology().gvector.size() == 1
        && params.device.is_none()
        && blocks_small_enough(basis, params.nbands)
}

/// Whether every (spin, k) block of `nbands` bands is small enough for [`blocks_concurrently`]:
/// the largest k-point's plane waves (over all G-vector ranks) times the bands within
/// [`CONCURRENT_BLOCK_SIZE`].
pub fn blocks_small_enough(basis: &Basis, nbands: usize) -> bool {
    let largest = basis
        .kpoints
        .iter()
        .map(|k| k.global_dim())
        .max()
        .unwrap_or(0);
    largest * nbands <= CONCURRENT_BLOCK_SIZE
}

/// One (spin, k) block's bands as the eigensolver left them.
struct BlockSolved<T> {
    values: Vec<f64>,
    vectors: Mat<T>,
    iterations: usize,
    /// Every band at its tolerance.
    converged: bool,
    times: ApplyTimes,
    /// Wall seconds of the block's solve.
    seconds: f64,
}

/// Plane waves times bands of the largest block that [`blocks_concurrently`] solves one per
/// thread (si8 at 15 Ha with 20 bands: 60 000); each thread's Davidson workspace is then at
/// most 5 MiB (five blocks of complex bands), beyond the memory estimate's one.
pub const CONCURRENT_BLOCK_SIZE: usize = 1 << 16;

/// The history, timings and pace of a run, across its SCF loops.
#[derive(Default)]
pub struct Record {
    history: Vec<IterationInfo>,
    /// Timings per phase.
    pub timings: Timings,
    /// The longest iteration so far (s), for the time limit.
    slowest: f64,
}

impl Record {
    /// SCF iterations so far.
    pub fn iterations(&self) -> usize {
        self.history.len()
    }
}

/// When one SCF loop stops, and how it starts the eigensolver.
#[derive(Debug, Clone, Copy)]
pub struct LoopTolerances {
    /// Energy change (Ha).
    pub energy: f64,
    /// Density residual.
    pub density: f64,
    /// The density residual the first iteration's eigensolver tolerance follows (None:
    /// the loose start for bands far from converged).
    pub start_residual: Option<f64>,
}

impl LoopTolerances {
    /// The run's tolerances, from bands far from converged.
    pub fn of(params: &ScfParams) -> Self {
        Self {
            energy: params.energy_tolerance,
            density: params.density_tolerance,
            start_residual: None,
        }
    }

    /// The run's tolerances loosened `factor` (>= 1) times in energy (the density residual,
    /// whose energy error is second order, by its square root), starting the eigensolver
    /// from the residual `residual`.
    pub fn loosened(params: &ScfParams, factor: f64, residual: f64) -> Self {
        Self {
            energy: params.energy_tolerance * factor,
            density: params.density_tolerance * factor.sqrt(),
            start_residual: Some(residual),
        }
    }
}

/// How one SCF loop ended.
pub struct LoopEnd {
    /// Whether the convergence test was met.
    pub converged: bool,
    /// Why the loop stopped early (a signal, the time limit), if it did.
    pub stopped: Option<StopReason>,
    /// The energy terms of the last iteration (exact).
    pub energies: Energies,
    /// The last eigenvalues per spin, k-point and band (Ha).
    pub eigenvalues: Vec<Vec<Vec<f64>>>,
    /// The last occupations.
    pub occupations: Occupations,
    /// The last output density.
    pub density: Density,
    /// The next iteration's input density when it is not the output: the mixed one of a loop
    /// that did not converge (None when converged).
    pub mixed: Option<Density>,
    /// The last density residual.
    pub residual: f64,
}

impl LoopEnd {
    /// The next loop's input density: the mixed one, or the output when converged.
    pub fn next_input(&mut self) -> Density {
        self.mixed.take().unwrap_or_else(|| self.density.clone())
    }
}

fn run_with<T: BandScalar>(
    model: &Model,
    basis: &Basis,
    params: &ScfParams,
    start: Start<T>,
    mut observer: impl ScfObserver,
    wrap: fn(Vec<Vec<Mat<T>>>) -> Wavefunctions,
) -> Result<ScfResult, String> {
    let t_start = Instant::now();
    let mut rec = Record::default();
    let nspin = model.nspin();
    let lp = Engine::new(model, basis, params)?;
    let (start_density, start_psi) = start;
    let rho_in = match start_density {
        Some((g, becsum)) if g.len() == nspin => Density {
            becsum,
            ..Density::from_g(basis, g)
        },
        _ => density::atomic_guess(model, basis),
    };
    let mut psi = lp.starting_bands(start_psi)?;
    rec.timings.setup = t_start.elapsed().as_secs_f64();

    let tol = LoopTolerances::of(params);
    let mut end = lp.iterate(&mut psi, rho_in, None, tol, &mut rec, &mut observer)?;
    let mut exx_steps = Vec::new();
    if model.hybrid.is_some() && end.converged {
        (end, exx_steps) = crate::exx::outer::run(&lp, &mut psi, end, &mut rec, &mut observer)?;
    }
    if let Some(plan) = params
        .checkpoint
        .as_ref()
        .filter(|p| p.at_end || end.stopped.is_some())
    {
        // Converged: the output density; otherwise the next iteration's (mixed) input.
        let snap = Snapshot {
            density_g: &end.mixed.as_ref().unwrap_or(&end.density).g,
            psi: &psi,
            nbands: params.nbands,
            eigenvalues: &end.eigenvalues,
            occupations: &end.occupations,
            iteration: rec.history.len(),
            converged: end.converged,
            energy: end.energies.total(),
        };
        save((plan, params), model, basis, &snap, &mut rec.timings)?;
    }
    rec.timings.total = t_start.elapsed().as_secs_f64();
    let magnetization = end.density.magnetization(basis);
    let result = ScfResult {
        converged: end.converged,
        iterations: rec.history.len(),
        energies: end.energies,
        eigenvalues: end.eigenvalues,
        occupations: end.occupations,
        density: end.density,
        magnetization,
        wavefunctions: wrap(psi),
        history: rec.history,
        exx_steps,
        timings: rec.timings,
        stopped: end.stopped,
    };
    observer.finished(&result);
    Ok(result)
}

impl<'a, T: BandScalar> Engine<'a, T> {
    /// The engine of `model` on `basis` with `params`: the standard terms, the core density
    /// and the density symmetriser. Collective.
    pub fn new(model: &'a Model, basis: &'a Basis, params: &'a ScfParams) -> Result<Self, String> {
        let (terms, augmentation) = term::standard_and_charges(model, basis);
        Ok(Self {
            model,
            basis,
            params,
            fixed: Fixed {
                core: density::core_density(model, basis),
                symmetrizer: density::symmetrizer(model, basis)?,
                paw: (augmentation.as_ref())
                    .and_then(|aug| crate::terms::paw::OneCentre::new(model, aug)),
                augmentation,
            },
            terms,
            weights: basis.kpoints.iter().map(|k| k.weight).collect(),
            workspace: Default::default(),
        })
    }

    /// The starting bands: `start` when it fits this run's layout on every rank, else fresh
    /// ones as [`ScfParams::start`] asks (atomic orbitals or seeded random vectors). Errors
    /// when a k-point has fewer plane waves than bands.
    pub fn starting_bands(
        &self,
        start: Option<Vec<Vec<Mat<T>>>>,
    ) -> Result<Vec<Vec<Mat<T>>>, String> {
        let (basis, params) = (self.basis, self.params);
        let par = &*basis.parallel;
        let (nspin, nk) = (self.model.nspin(), basis.kpoints.len());
        for k in &basis.kpoints {
            if k.global_dim() < params.nbands {
                return Err(format!(
                    "only {} plane waves at k = {:?} for {} bands: raise ecut or lower nbands",
                    k.global_dim(),
                    k.frac,
                    params.nbands
                ));
            }
        }
        let my_bands = par.local_bands(params.nbands);
        let fits = |psi: &Vec<Vec<Mat<T>>>| {
            psi.len() == nspin
                && psi.iter().enumerate().all(|(s, ps)| {
                    ps.len() == nk
                        && ps
                            .iter()
                            .zip(&basis.kpoints)
                            .enumerate()
                            .all(|(k, (m, kpt))| {
                                !par.owns(s, k)
                                    || (m.nrows() == kpt.dim() && m.ncols() == my_bands.len())
                            })
                })
        };
        Ok(match start {
            Some(p) if par.all(fits(&p)) => p,
            _ => self.fresh_bands(&my_bands),
        })
    }

    /// Bands of a run that does not continue from bands, per [`ScfParams::start`]: every
    /// atom's orbitals (all of them, on every band group, to be reduced by the first
    /// eigensolve when they outnumber the bands, see [`Self::solve`]) completed by seeded
    /// random vectors, or random vectors only (asked for, or when no species has orbitals).
    /// Random vectors are drawn per global band, so every layout starts alike.
    fn fresh_bands(&self, my_bands: &[usize]) -> Vec<Vec<Mat<T>>> {
        let (basis, params, model) = (self.basis, self.params, self.model);
        let par = &*basis.parallel;
        let atomic = (params.start == BandStart::Atomic)
            .then(|| AtomicStart::new(model, basis))
            .filter(|a| a.count(model) > 0);
        let (nspin, nk) = (model.nspin(), basis.kpoints.len());
        (0..nspin)
            .map(|s| {
                (0..nk)
                    .map(|k| {
                        if !par.owns(s, k) {
                            return Mat::zeros(0, 0);
                        }
                        let kpt = &basis.kpoints[k];
                        let seed = crate::rng::stream(params.seed, &[s as u64, k as u64]);
                        let Some(a) = &atomic else {
                            return T::random(kpt, my_bands, seed.state());
                        };
                        self.atomic_block(a, kpt, my_bands, seed.state())
                    })
                    .collect()
            })
            .collect()
    }

    /// This rank's starting bands `my_bands` (ascending) at `kpt` from the atomic orbitals
    /// `a`, each coefficient with a seeded noise of [`ORBITAL_NOISE`] (QE's `atomic+random`):
    /// every orbital when they outnumber the bands, else orbital b for band b and seeded
    /// random vectors for the bands beyond the orbitals.
    fn atomic_block(
        &self,
        a: &AtomicStart,
        kpt: &crate::basis::Kpoint,
        my_bands: &[usize],
        seed: u64,
    ) -> Mat<T> {
        let mut orbitals = a.bands::<T>(self.model, kpt, self.basis.volume);
        let n = orbitals.ncols();
        let noise = crate::rng::stream(seed, &[ORBITAL_NOISE_STREAM]).state();
        let all: Vec<usize> = (0..n).collect();
        crate::bands::perturb(kpt, orbitals.as_mut(), &all, noise, ORBITAL_NOISE);
        if n > self.params.nbands {
            return orbitals;
        }
        let (mine, beyond): (Vec<usize>, Vec<usize>) = my_bands.iter().partition(|&&b| b < n);
        let random = T::random(kpt, &beyond, seed);
        Mat::from_fn(kpt.dim(), my_bands.len(), |i, j| match mine.get(j) {
            Some(&b) => orbitals[(i, b)],
            None => random[(i, j - mine.len())],
        })
    }

    /// One SCF loop from `rho_in` and the bands `psi` (updated in place), with the exchange
    /// operators `ace` fixed (a hybrid's inner loop; None: a semilocal loop, or the
    /// semilocal start of a hybrid). Iterations are numbered on from `rec.history`.
    pub fn iterate(
        &self,
        psi: &mut [Vec<Mat<T>>],
        mut rho_in: Density,
        ace: Option<&Operators<T>>,
        tolerances: LoopTolerances,
        rec: &mut Record,
        observer: &mut impl ScfObserver,
    ) -> Result<LoopEnd, String> {
        let (model, basis, params) = (self.model, self.basis, self.params);
        let par = &*basis.parallel;
        let (nspin, nk) = (model.nspin(), basis.kpoints.len());
        let exx_on = ace.is_some();
        let policies = &params.policies;
        let mut mixer = policies.mixing.mixer(basis, nspin);
        // Occupied bands per (spin, k) as of the last occupations (all bands until there are
        // some).
        let mut n_occupied = vec![vec![params.nbands; nk]; nspin];
        let mut e_prev = f64::NAN;
        let mut previous_exact = false;
        let mut residual: f64 = tolerances.start_residual.unwrap_or(1.0);
        let first = rec.history.len();
        let loose_start = tolerances.start_residual.is_none();
        let mut last = None;
        let mut stopped = None;
        for iteration in first + 1..=first + params.max_iterations {
            let t_it = Instant::now();
            if iteration == 1 && crate::parallel::injected(PANIC_RANK_ENV, par.world().rank()) {
                panic!("injected panic ({PANIC_RANK_ENV}) in the first SCF iteration");
            }
            let t0 = Instant::now();
            let blocks = ace.map(|a| a.blocks.as_slice());
            let state = self
                .fixed
                .state(model, basis, &rho_in, None, 0.0, exx_on, blocks);
            let potentials = term::potentials(&self.terms, &state);
            self.screen(&potentials.total, &rho_in);
            rec.timings.potentials += t0.elapsed().as_secs_f64();
            let (tol, maxiter) = policies.tolerance.choose(&ToleranceQuery {
                from_random: loose_start && iteration == first + 1,
                residual,
                nbands: params.nbands,
            });
            let t0 = Instant::now();
            let (eig, (eig_iters, bands_converged), applied) = self.solve(
                psi,
                &state,
                &potentials.total,
                (tol, maxiter, 1),
                &n_occupied,
            )?;
            rec.timings
                .add_eigensolve(t0.elapsed().as_secs_f64(), &applied);
            let occ = occupation::compute(model, &eig, &self.weights)?;
            n_occupied = occupied_counts(&occ.occ);
            let t0 = Instant::now();
            let rho_out = self.density_of(psi, &occ.occ);
            rec.timings.density += t0.elapsed().as_secs_f64();
            let mixed = (to_mix(&rho_in.g), to_mix(&rho_out.g));
            residual = self.residual(&mixed);
            let t0 = Instant::now();
            let exact =
                !potentials.expandable() || residual < EXACT_ENERGY_RESIDUALS * tolerances.density;
            let near = (!exact).then_some((&potentials, &rho_in));
            let energies = self.energies(psi, &occ, &rho_out, exx_on, ace, near);
            rec.timings.potentials += t0.elapsed().as_secs_f64();
            let e = energies.total();
            let delta_e = e - e_prev;
            e_prev = e;
            let info = IterationInfo {
                iteration,
                energy: e,
                delta_e,
                residual,
                seconds: t_it.elapsed().as_secs_f64(),
                eigensolver_iterations: eig_iters / (nspin * nk) as f64,
                estimated: !exact,
            };
            observer.iteration(&info);
            rec.history.push(info);
            // Rank 0 decides for everyone, so that no rank leaves the loop alone.
            let done = par.agree(policies.convergence.converged(&ConvergenceQuery {
                delta_e,
                residual,
                exact,
                previous_exact,
                energy_tolerance: tolerances.energy,
                density_tolerance: tolerances.density,
                bands_converged,
            }));
            previous_exact = exact;
            if done {
                let step = (tol, n_occupied.as_slice(), exx_on);
                let polished = self.polish(psi, (&state, &potentials.total), step, rec)?;
                let eig = polished.unwrap_or(eig);
                return Ok(LoopEnd {
                    converged: true,
                    stopped: None,
                    energies,
                    eigenvalues: eig,
                    occupations: occ,
                    density: rho_out,
                    mixed: None,
                    residual,
                });
            }
            let t0 = Instant::now();
            rho_in = self.mix(mixer.as_mut(), &rho_in, &rho_out, &mixed);
            rec.timings.mixing += t0.elapsed().as_secs_f64();
            rec.slowest = rec.slowest.max(t_it.elapsed().as_secs_f64());
            stopped = params
                .stop
                .as_ref()
                .and_then(|w| w.agreed(par.world().as_ref(), rec.slowest));
            if stopped.is_none() {
                let snap = Snapshot {
                    density_g: &rho_in.g,
                    psi,
                    nbands: params.nbands,
                    eigenvalues: &eig,
                    occupations: &occ,
                    iteration,
                    converged: false,
                    energy: e,
                };
                self.checkpoint_due(&snap, &mut rec.timings)?;
            }
            last = Some((energies, exact, eig, occ, rho_out));
            if stopped.is_some() {
                break;
            }
        }
        let (energies, exact, eigenvalues, occupations, density) =
            last.ok_or("max_iterations is 0: nothing was computed")?;
        Ok(LoopEnd {
            converged: false,
            stopped,
            energies: self.exact(energies, exact, psi, &occupations, &density, ace),
            eigenvalues,
            occupations,
            density,
            mixed: Some(rho_in),
            residual,
        })
    }

    /// Saves `snap` when the run's checkpoint plan asks for one every n iterations and this
    /// is one of them. Collective.
    fn checkpoint_due(&self, snap: &Snapshot<'_, T>, timings: &mut Timings) -> Result<(), String> {
        let params = self.params;
        let Some(plan) = params.checkpoint.as_ref() else {
            return Ok(());
        };
        if !plan
            .every
            .is_some_and(|n| n > 0 && snap.iteration.is_multiple_of(n))
        {
            return Ok(());
        }
        save((plan, params), self.model, self.basis, snap, timings)
    }

    /// The density residual |rho_out - rho_in| Omega^(1/2) of one iteration's (input, output)
    /// in the mixer's form. Collective on the G-vector group.
    fn residual(&self, (input, output): &MixPair) -> f64 {
        let mut r2 = [input
            .iter()
            .flatten()
            .zip(output.iter().flatten())
            .map(|(a, b)| (a - b).norm_sqr())
            .sum::<f64>()];
        self.basis.sum_over_rho(&mut r2);
        r2[0].sqrt() * self.basis.volume.sqrt()
    }

    /// The next input density from this iteration's `rho_in` and `rho_out` (`pair`: both in
    /// the mixer's form). PAW's band sums ride along, out of the residual and the mixer's
    /// inner products (as QE's `mix_rho`: weighing them in took 3 to 10 times the
    /// iterations). Collective on the G-vector group.
    fn mix(
        &self,
        mixer: &mut dyn Mixer,
        rho_in: &Density,
        rho_out: &Density,
        (input, output): &MixPair,
    ) -> Density {
        let basis = self.basis;
        let out_flat = (rho_out.becsum.as_ref()).map_or_else(Vec::new, flat_becsum);
        let carried = (self.carried_becsum(rho_in), out_flat);
        let (next, becsum) = mixer.next(input, output, (&carried.0, &carried.1), &|x| {
            basis.sum_over_rho(x)
        });
        let mut mixed = Density::from_g(basis, from_mix(&next));
        mixed.becsum = rho_out.becsum.clone().map(|mut b| {
            refill_becsum(&mut b, &becsum);
            b
        });
        mixed
    }

    /// The lowest bands of every (spin, k) block this rank computes, for the Hamiltonian of
    /// the terms' operators in `state` with the summed local potentials `veff` (per spin
    /// channel), to tolerance and iteration limit `tol`; warm-started from and written to
    /// `psi`, with at least `min_iterations` eigensolver iterations (an SCF step: 1, and a
    /// few on the empty bands alone; 0: every band converged, [`Self::polish`]). Returns every
    /// block's eigenvalues (gathered on every rank), the eigensolver iterations summed over
    /// blocks with whether every block converged (both over all ranks), and this rank's
    /// seconds in each kind of operator. Small blocks may be solved side by side
    /// ([`blocks_concurrently`]; the bits are the same, and the seconds are then each kind's
    /// share of the wall).
    fn solve(
        &self,
        psi: &mut [Vec<Mat<T>>],
        state: &State<'_, T>,
        veff: &[Vec<f64>],
        (tol, maxiter, min_iterations): (f64, usize, usize),
        n_occupied: &[Vec<usize>],
    ) -> Result<(Eigenvalues, (f64, bool), ApplyTimes), String> {
        let (basis, params) = (self.basis, self.params);
        let par = &*basis.parallel;
        let (nspin, nk) = (self.model.nspin(), basis.kpoints.len());
        let mut eig = vec![vec![Vec::new(); nk]; nspin];
        // [eigensolver iterations, blocks left unconverged], summed over blocks: one array
        // for one sum over the k-point groups.
        let mut iterations_unconverged = [0.0, 0.0];
        let mut applied = ApplyTimes::default();
        let veff: Vec<Cow<[f64]>> = veff.iter().map(|v| basis.potential_for_bands(v)).collect();
        let blocks: Vec<(usize, usize)> = par.owned_blocks(nspin, nk).collect();
        let starts: Vec<Mat<T>> = (blocks.iter())
            .map(|&(s, k)| std::mem::replace(&mut psi[s][k], Mat::zeros(0, 0)))
            .collect();
        let job = |(s, k): (usize, usize), x0, ws: &mut _| {
            let tols = (tol, maxiter, min_iterations, n_occupied[s][k]);
            self.solve_block(state, (s, k), &veff[s], x0, tols, ws)
        };
        let concurrent = blocks_concurrently(basis, params, blocks.len());
        let t0 = Instant::now();
        let solved = par.time_block_work(|| -> Result<Vec<BlockSolved<T>>, String> {
            if concurrent {
                (blocks.par_iter().zip(starts))
                    .map_init(Default::default, |ws, (&b, x0)| job(b, x0, ws))
                    .collect()
            } else {
                let mut ws = self.workspace.lock().unwrap_or_else(|e| e.into_inner());
                (blocks.iter().zip(starts))
                    .map(|(&b, x0)| job(b, x0, &mut ws))
                    .collect()
            }
        })?;
        // Blocks side by side: each kind's share of the wall, not the threads' sum of it.
        let busy: f64 = solved.iter().map(|r| r.seconds).sum();
        let share = if concurrent && busy > 0.0 {
            t0.elapsed().as_secs_f64() / busy
        } else {
            1.0
        };
        for ((s, k), r) in blocks.into_iter().zip(solved) {
            iterations_unconverged[0] += r.iterations as f64;
            iterations_unconverged[1] += f64::from(u8::from(!r.converged));
            applied.local += share * r.times.local;
            applied.projectors += share * r.times.projectors;
            applied.low_rank += share * r.times.low_rank;
            applied.subspace += share * r.times.subspace;
            eig[s][k] = r.values;
            psi[s][k] = r.vectors;
        }
        // Every rank needs every eigenvalue for the occupations.
        par.gather_blocks(&mut eig, params.nbands);
        par.sum_over_kgroups(&mut iterations_unconverged);
        let [iterations, unconverged] = iterations_unconverged;
        Ok((eig, (iterations, unconverged == 0.0), applied))
    }

    /// The lowest bands of block `(s, k)` from `x0` (as [`Self::solve`] says), with the
    /// Davidson workspace `ws`; `tols` are the tolerance, iteration limits and the block's
    /// occupied bands.
    fn solve_block(
        &self,
        state: &State<'_, T>,
        (s, k): (usize, usize),
        veff: &[f64],
        x0: Mat<T>,
        (tol, maxiter, min_iterations, n_occupied): (f64, usize, usize, usize),
        ws: &mut crate::eigensolver::davidson::Workspace<T>,
    ) -> Result<BlockSolved<T>, String> {
        let (basis, params) = (self.basis, self.params);
        let par = &*basis.parallel;
        let t0 = Instant::now();
        let ops = term::block_operators(&self.terms, state, (s, k), veff);
        let h = KHamiltonian::assemble(&basis.kpoints[k], basis.band_fft(), ops);
        let h = match &params.device {
            Some(d) => h.with_local(crate::device_local::as_local::<T>(d)),
            None => h,
        };
        // Prepared for all of the block's applications (one k-point's projectors whole at a
        // time, when small enough).
        let r = h.prepared(|h| {
            // With an overlap S the solver works on phi = S^{1/2} psi.
            let x0 = match h.overlap() {
                Some(o) => o.root(false, x0.as_ref()),
                None => x0,
            };
            // More starting vectors than bands (atomic orbitals, on every band group): the
            // lowest Ritz vectors of their span, this band group's share of them.
            let x0 = if x0.ncols() > params.nbands {
                let all = ritz_start(h, x0.as_ref(), params.nbands)
                    .unwrap_or_else(|| x0.subcols(0, params.nbands).to_owned());
                let mine = par.local_bands(params.nbands);
                Mat::from_fn(all.nrows(), mine.len(), |i, j| all[(i, mine[j])])
            } else {
                x0
            };
            if par.band_groups() > 1 {
                params.eigensolver.solve_bands(
                    h,
                    (
                        par.band_comm(),
                        par.kgroup_comm(),
                        params.tuning.band_algorithm,
                    ),
                    x0,
                    params.nbands,
                    tol,
                    n_occupied,
                    (min_iterations, maxiter),
                )
            } else {
                Ok(params
                    .eigensolver
                    .solve(h, x0, tol, n_occupied, min_iterations, maxiter, ws))
            }
        })?;
        let vectors = match h.overlap() {
            Some(o) => o.root(true, r.vectors.as_ref()),
            None => r.vectors,
        };
        Ok(BlockSolved {
            values: r.values,
            vectors,
            iterations: r.iterations,
            converged: r.converged,
            times: h.apply_times(),
            seconds: t0.elapsed().as_secs_f64(),
        })
    }

    /// The bands `psi` of a converged loop with their empty bands converged too, at the last
    /// step's operators `state` and potentials `veff` (an SCF step stops iterating on them
    /// after [`crate::eigensolver::davidson::EMPTY_ONLY_ITERATIONS`]): their eigenvalues, the
    /// pass's times added to `rec`. Done when the step's tolerance `tol` is [`POLISH_TOL`] or
    /// tighter, to that tolerance (Davidson: 10 times it for the empty bands), so that the
    /// occupied bands are converged already and the density, the energies and the occupations
    /// stay the loop's (an occupied band the step left above it, at its iteration limit, is
    /// converged too, and the forces see it). None (nothing done) when no (spin, k) block has
    /// an empty band (`n_occupied`), when `tol` is looser (a loosened loop, or one converged
    /// from its first step), and on a hybrid's semilocal start (`exx_on` false), whose
    /// Hamiltonian the next loop changes. Collective.
    fn polish(
        &self,
        psi: &mut [Vec<Mat<T>>],
        (state, veff): (&State<'_, T>, &[Vec<f64>]),
        (tol, n_occupied, exx_on): (f64, &[Vec<usize>], bool),
        rec: &mut Record,
    ) -> Result<Option<Eigenvalues>, String> {
        let nbands = self.params.nbands;
        let all_occupied = n_occupied.iter().flatten().all(|&n| n >= nbands);
        let hybrid_start = self.model.hybrid.is_some() && !exx_on;
        if all_occupied || tol > POLISH_TOL || hybrid_start {
            return Ok(None);
        }
        let t0 = Instant::now();
        let tols = (POLISH_TOL, POLISH_MAX_ITERATIONS, 0);
        let (eig, _, applied) = self.solve(psi, state, veff, tols, n_occupied)?;
        rec.timings
            .add_eigensolve(t0.elapsed().as_secs_f64(), &applied);
        Ok(Some(eig))
    }

    /// Hand the ultrasoft terms the screening of the local potentials `veff` (per spin, at
    /// this rank's grid points) and PAW's one-centre coupling of `rho`'s band sums (nothing
    /// without ultrasoft species). Collective.
    fn screen(&self, veff: &[Vec<f64>], rho: &Density) {
        let Some(aug) = &self.fixed.augmentation else {
            return;
        };
        let delta = screening(
            self.model,
            self.basis,
            aug,
            self.fixed.paw.as_ref(),
            veff,
            rho,
        );
        term::screen(&self.terms, &delta);
    }

    /// The PAW band sums `rho` stands for (the atoms' own when it carries none), flat; empty
    /// without PAW species.
    fn carried_becsum(&self, rho: &Density) -> Vec<f64> {
        let Some(paw) = &self.fixed.paw else {
            return Vec::new();
        };
        flat_becsum(&paw.becsum_of(self.model, rho))
    }

    /// The density of the bands `psi` with occupations `occ`, their augmentation charges
    /// included, symmetrised. Collective.
    fn density_of(&self, psi: &[Vec<Mat<T>>], occ: &[Vec<Vec<f64>>]) -> Density {
        let (model, basis) = (self.model, self.basis);
        let augmentation = self.fixed.augmentation.as_ref().map(|aug| {
            let weights = term::band_weights(basis, occ);
            let by_term = self.terms.iter().find_map(|t| t.becsum(aug, psi, &weights));
            let becsum = by_term.unwrap_or_else(|| {
                crate::augmentation::becsum(model, basis, aug, psi, &weights, |_, _| None)
            });
            (aug.density(model, basis, &becsum), becsum)
        });
        let (augmentation, becsum) = augmentation.unzip();
        let mut rho = density::from_wavefunctions(
            basis,
            psi,
            occ,
            augmentation,
            self.fixed.symmetrizer.as_ref(),
        );
        if let (Some(paw), Some(mut b)) = (&self.fixed.paw, becsum) {
            paw.symmetrize(model, &mut b, true);
            rho.becsum = Some(b);
        }
        rho
    }

    /// The local potential V_loc + V_H + V_xc (Ha) of the density `rho`, per spin channel, at
    /// this rank's grid points (the potential the bands of `rho` would see). Collective on the
    /// G-vector group.
    pub fn local_potential(&self, rho: &Density) -> Vec<Vec<f64>> {
        let state = self.state(rho, None, None);
        term::potentials(&self.terms, &state).total
    }

    /// The state of the density `rho` with exact exchange on (a hybrid's inner loop),
    /// the bands and the operators `ace` if given.
    pub fn state<'s>(
        &'s self,
        rho: &'s Density,
        bands: Option<Bands<'s, T>>,
        ace: Option<&'s [Vec<Option<Ace<T>>>]>,
    ) -> State<'s, T> {
        self.fixed
            .state(self.model, self.basis, rho, bands, 0.0, true, ace)
    }

    /// `energies` of an iteration's output if `exact`, else evaluated exactly there.
    /// Collective.
    fn exact(
        &self,
        energies: Energies,
        exact: bool,
        psi: &[Vec<Mat<T>>],
        occ: &Occupations,
        rho: &Density,
        ace: Option<&Operators<T>>,
    ) -> Energies {
        if exact {
            return energies;
        }
        self.energies(psi, occ, rho, ace.is_some(), ace, None)
    }

    /// The energy terms of the bands `psi` with occupations `occ` and their density `rho`
    /// (the Fock energy from `ace`). With `near` = (the potentials of a density rho0, rho0),
    /// the terms that gave an expansion there are taken to first order about rho0
    /// ([`term::Potentials::expanded_energy`]). Collective.
    pub fn energies(
        &self,
        psi: &[Vec<Mat<T>>],
        occ: &Occupations,
        rho: &Density,
        exx_on: bool,
        ace: Option<&Operators<T>>,
        near: Option<(&term::Potentials, &Density)>,
    ) -> Energies {
        let band_weights = term::band_weights(self.basis, &occ.occ);
        let bands = Bands {
            psi,
            weights: &band_weights,
            eigenvalues: None,
        };
        let (model, basis) = (self.model, self.basis);
        let blocks = ace.map(|a| a.blocks.as_slice());
        let state = self
            .fixed
            .state(model, basis, rho, Some(bands), occ.minus_ts, exx_on, blocks);
        let mut e = Energies::from_terms(
            self.terms
                .iter()
                .filter_map(|t| {
                    let expanded =
                        near.and_then(|(p, rho0)| p.expanded_energy(t.name(), basis, rho0, rho));
                    let value = match expanded {
                        Some(e) => e,
                        None => t.energy(&state)?.complete(basis),
                    };
                    Some(TermEnergy {
                        name: t.name(),
                        label: t.label(),
                        value,
                    })
                })
                .collect::<Vec<_>>(),
        );
        if let Some(a) = ace {
            let fock = a.inner_energy(e.get(EXACT_EXCHANGE));
            e.set(EXACT_EXCHANGE, fock);
        }
        e
    }
}
