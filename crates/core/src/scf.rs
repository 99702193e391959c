//! The self-consistent field loop: a fixed point on the density.
//!
//! Each iteration: potentials from rho_in -> lowest bands at every (spin, k) by the eigensolver
//! (warm-started, tolerance following the density residual) -> occupations -> rho_out -> energy
//! E[psi, rho_out] -> Anderson/Kerker mixing. Converged when both the energy change and the
//! density residual sqrt(\int |rho_out - rho_in|^2) are below their tolerances.

use crate::bands::BandScalar;
use crate::basis::Basis;
use crate::checkpoint::{self, Snapshot};
use crate::density::{self, Density};
use crate::eigensolver::Eigensolver;
use crate::energies::Energies;
use crate::hamiltonian::KHamiltonian;
use crate::mixing::AndersonMixer;
use crate::model::Model;
use crate::occupation::{self, Occupations};
use crate::parallel::PANIC_RANK_ENV;
pub use crate::restart::ScfStart;
use crate::stop::{StopReason, StopWhen};
use crate::symmetry::DensitySymmetrizer;
use crate::terms::nonlocal::KProjectors;
use crate::terms::term::{self, Bands, State};
use num_complex::Complex64;
use planewave_linalg::Mat;
use std::time::Instant;

/// Occupation (electrons, spin factor included) above which a band counts as occupied for the
/// eigensolver's tolerance; below it the band's error reaches the density 1e6 times damped.
const OCCUPIED: f64 = 1e-6;

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
    /// Anderson damping.
    pub mixing_beta: f64,
    /// Anderson history length.
    pub mixing_depth: usize,
    /// Kerker wave vector (1/bohr); 0 disables Kerker.
    pub kerker_q0: f64,
    /// Seed of the random starting wavefunctions.
    pub seed: u64,
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
}

/// Timings per phase, seconds.
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct Timings {
    /// Set-up (potentials, projectors, Ewald, guess).
    pub setup: f64,
    /// Eigensolver.
    pub eigensolver: f64,
    /// Density construction.
    pub density: f64,
    /// Potentials and energies.
    pub potentials: f64,
    /// Mixing.
    pub mixing: f64,
    /// Writing checkpoints.
    pub checkpoint: f64,
    /// Whole SCF.
    pub total: f64,
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
    /// Per-iteration history.
    pub history: Vec<IterationInfo>,
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
struct Fixed<T: BandScalar> {
    /// Projectors of the k-points this rank computes (None elsewhere).
    projectors: Vec<Option<KProjectors<T>>>,
    core: Option<(Vec<Complex64>, Vec<f64>)>,
    symmetrizer: Option<DensitySymmetrizer>,
}

impl<T: BandScalar> Fixed<T> {
    /// The state the terms read: `rho`, the core density, and the bands if given.
    fn state<'a>(
        &'a self,
        model: &'a Model,
        basis: &'a Basis,
        rho: &'a Density,
        bands: Option<Bands<'a, T>>,
        minus_ts: f64,
    ) -> State<'a, T> {
        State {
            model,
            basis,
            rho,
            core: self.core.as_ref(),
            bands,
            minus_ts,
        }
    }

    /// The projectors of k-point `k`, which this rank computes.
    fn proj(&self, k: usize) -> &KProjectors<T> {
        self.projectors[k]
            .as_ref()
            .expect("projectors exist for every k-point of an owned block")
    }
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

/// Run the SCF for `model` on `basis`. `on_iteration` is called after every iteration.
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
    let (density, wavefunctions) = match start {
        Some(s) => (Some(s.density_g), s.wavefunctions),
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
            on_iteration,
            Wavefunctions::Real,
        )
    } else {
        let psi = match wavefunctions {
            Some(Wavefunctions::Complex(p)) => Some(p),
            _ => None,
        };
        let wrap = Wavefunctions::Complex;
        run_with::<Complex64>(model, basis, params, (density, psi), on_iteration, wrap)
    }
}

/// Write `snap` to the plan's checkpoint, timed in `timings.checkpoint`. Collective.
fn save<T: BandScalar>(
    plan: &CheckpointPlan,
    model: &Model,
    basis: &Basis,
    snap: &Snapshot<'_, T>,
    timings: &mut Timings,
) -> Result<(), String> {
    let t0 = Instant::now();
    checkpoint::write(&plan.path, model, basis, snap)?;
    timings.checkpoint += t0.elapsed().as_secs_f64();
    Ok(())
}

/// Starting density (sphere coefficients per spin channel) and bands, if any.
type Start<T> = (Option<Vec<Vec<Complex64>>>, Option<Vec<Vec<Mat<T>>>>);

fn run_with<T: BandScalar>(
    model: &Model,
    basis: &Basis,
    params: &ScfParams,
    start: Start<T>,
    mut on_iteration: impl FnMut(&IterationInfo),
    wrap: fn(Vec<Vec<Mat<T>>>) -> Wavefunctions,
) -> Result<ScfResult, String> {
    let t_start = Instant::now();
    let mut timings = Timings::default();
    let nspin = model.nspin();
    let nk = basis.kpoints.len();
    let par = &*basis.parallel;
    let fixed = Fixed {
        projectors: basis
            .kpoints
            .iter()
            .enumerate()
            .map(|(k, kpt)| {
                par.owns_kpoint(nspin, k)
                    .then(|| KProjectors::new(model, kpt, basis.volume))
            })
            .collect(),
        core: density::core_density(model, basis),
        symmetrizer: density::symmetrizer(model, basis)?,
    };
    let terms = term::standard(model, basis, Some(&fixed.projectors));
    let weights: Vec<f64> = basis.kpoints.iter().map(|k| k.weight).collect();
    let (start_density, start_psi) = start;
    let mut rho_in = match start_density {
        Some(g) if g.len() == nspin => Density::from_g(basis, g),
        _ => density::atomic_guess(model, basis),
    };
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
    let mut psi: Vec<Vec<Mat<T>>> = match start_psi {
        Some(p) if par.all(fits(&p)) => p,
        _ => (0..nspin)
            .map(|s| {
                basis
                    .kpoints
                    .iter()
                    .enumerate()
                    .map(|(k, kpt)| {
                        if par.owns(s, k) {
                            let seed = crate::rng::stream(params.seed, &[s as u64, k as u64]);
                            T::random(kpt, &my_bands, seed.state())
                        } else {
                            Mat::zeros(0, 0)
                        }
                    })
                    .collect()
            })
            .collect(),
    };
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
    let mut mixer = AndersonMixer::new(
        params.mixing_beta,
        params.mixing_depth,
        params.kerker_q0,
        &basis.rho_g2,
        nspin,
        basis.rho_mirror.as_deref(),
    );
    timings.setup = t_start.elapsed().as_secs_f64();

    let mut history: Vec<IterationInfo> = Vec::new();
    // Occupied bands per (spin, k) as of the last occupations (all bands until there are some).
    let mut n_occupied = vec![vec![params.nbands; nk]; nspin];
    let mut e_prev = f64::NAN;
    let mut residual: f64 = 1.0;
    let mut converged = false;
    let mut stopped = None;
    let mut slowest = 0.0f64;
    let mut last = None;
    for iteration in 1..=params.max_iterations {
        let t_it = Instant::now();
        if iteration == 1 && crate::parallel::injected(PANIC_RANK_ENV, par.world().rank()) {
            panic!("injected panic ({PANIC_RANK_ENV}) in the first SCF iteration");
        }
        let t0 = Instant::now();
        let veff = term::total_potential(&terms, &fixed.state(model, basis, &rho_in, None, 0.0));
        timings.potentials += t0.elapsed().as_secs_f64();
        // Eigensolver tolerance follows the SCF: loose early, tight near convergence, and always
        // well below what the density residual can resolve (errors in the N occupied bands add
        // up in rho), so that rho_out keeps responding to the mixed rho_in.
        let tol: f64 = if iteration == 1 {
            1e-2
        } else {
            (0.1 * residual / (params.nbands as f64).sqrt()).clamp(1e-11, 1e-2)
        };
        let maxiter = if iteration == 1 { 100 } else { 8 };
        let t0 = Instant::now();
        let mut eig = vec![vec![Vec::new(); nk]; nspin];
        let mut eig_iters = [0.0];
        par.time_block_work(|| -> Result<(), String> {
            for (s, k) in par.owned_blocks(nspin, nk) {
                // One k-point's P whole at a time (when small enough), for all its applications.
                let _whole = fixed.proj(k).keep_whole();
                let h = KHamiltonian::new(&basis.kpoints[k], &basis.fft, &veff[s], fixed.proj(k));
                let x0 = std::mem::replace(&mut psi[s][k], Mat::zeros(0, 0));
                let r = if par.band_groups() > 1 {
                    params.eigensolver.solve_bands(
                        &h,
                        (par.band_comm(), par.kgroup_comm()),
                        x0,
                        params.nbands,
                        tol,
                        n_occupied[s][k],
                        maxiter,
                    )?
                } else {
                    params
                        .eigensolver
                        .solve(&h, x0, tol, n_occupied[s][k], 1, maxiter)
                };
                eig_iters[0] += r.iterations as f64;
                eig[s][k] = r.values;
                psi[s][k] = r.vectors;
            }
            Ok(())
        })?;
        // Every rank needs every eigenvalue for the occupations.
        par.gather_blocks(&mut eig, params.nbands);
        par.sum_over_kgroups(&mut eig_iters);
        timings.eigensolver += t0.elapsed().as_secs_f64();
        let occ = occupation::compute(model, &eig, &weights)?;
        for (n_s, occ_s) in n_occupied.iter_mut().zip(&occ.occ) {
            for (n, o) in n_s.iter_mut().zip(occ_s) {
                *n = o.iter().rposition(|&f| f > OCCUPIED).map_or(0, |i| i + 1);
            }
        }
        let t0 = Instant::now();
        let rho_out =
            density::from_wavefunctions(basis, &psi, &occ.occ, fixed.symmetrizer.as_ref());
        timings.density += t0.elapsed().as_secs_f64();
        // Energies of (psi, rho_out).
        let t0 = Instant::now();
        let band_weights = term::band_weights(basis, &occ.occ);
        let bands = Bands {
            psi: &psi,
            weights: &band_weights,
        };
        let state = fixed.state(model, basis, &rho_out, Some(bands), occ.minus_ts);
        let energies = Energies::from_terms(
            terms
                .iter()
                .map(|t| (t.name(), t.energy(&state).complete(basis)))
                .collect::<Vec<_>>(),
        );
        timings.potentials += t0.elapsed().as_secs_f64();
        let mix_in = to_mix(&rho_in.g);
        let mix_out = to_mix(&rho_out.g);
        let mut r2 = [mix_in
            .iter()
            .flatten()
            .zip(mix_out.iter().flatten())
            .map(|(a, b)| (a - b).norm_sqr())
            .sum::<f64>()];
        basis.sum_over_rho(&mut r2);
        residual = r2[0].sqrt() * basis.volume.sqrt();
        let e = energies.total();
        let delta_e = e - e_prev;
        e_prev = e;
        let info = IterationInfo {
            iteration,
            energy: e,
            delta_e,
            residual,
            seconds: t_it.elapsed().as_secs_f64(),
            eigensolver_iterations: eig_iters[0] / (nspin * nk) as f64,
        };
        on_iteration(&info);
        history.push(info);
        // Rank 0 decides for everyone, so that no rank leaves the loop alone.
        let done = par
            .agree(delta_e.abs() < params.energy_tolerance && residual < params.density_tolerance);
        if done {
            converged = true;
            last = Some((energies, eig, occ, rho_out));
            break;
        }
        let t0 = Instant::now();
        let next = mixer.next(&mix_in, &mix_out, &|x| basis.sum_over_rho(x));
        rho_in = Density::from_g(basis, from_mix(&next));
        timings.mixing += t0.elapsed().as_secs_f64();
        slowest = slowest.max(t_it.elapsed().as_secs_f64());
        stopped = params
            .stop
            .as_ref()
            .and_then(|w| w.agreed(par.world().as_ref(), slowest));
        if let Some(plan) = params.checkpoint.as_ref().filter(|_| stopped.is_none()) {
            if plan.every.is_some_and(|n| n > 0 && iteration % n == 0) {
                let snap = Snapshot {
                    density_g: &rho_in.g,
                    psi: &psi,
                    nbands: params.nbands,
                    eigenvalues: &eig,
                    occupations: &occ,
                    iteration,
                    converged: false,
                    energy: e,
                };
                save(plan, model, basis, &snap, &mut timings)?;
            }
        }
        last = Some((energies, eig, occ, rho_out));
        if stopped.is_some() {
            break;
        }
    }
    let (energies, eigenvalues, occupations, density) =
        last.ok_or("max_iterations is 0: nothing was computed")?;
    if let Some(plan) = params
        .checkpoint
        .as_ref()
        .filter(|p| p.at_end || stopped.is_some())
    {
        // Converged: the output density; otherwise the next iteration's (mixed) input.
        let rho = if converged { &density } else { &rho_in };
        let snap = Snapshot {
            density_g: &rho.g,
            psi: &psi,
            nbands: params.nbands,
            eigenvalues: &eigenvalues,
            occupations: &occupations,
            iteration: history.len(),
            converged,
            energy: energies.total(),
        };
        save(plan, model, basis, &snap, &mut timings)?;
    }
    timings.total = t_start.elapsed().as_secs_f64();
    let magnetization = density.magnetization(basis);
    Ok(ScfResult {
        converged,
        iterations: history.len(),
        energies,
        eigenvalues,
        occupations,
        density,
        magnetization,
        wavefunctions: wrap(psi),
        history,
        timings,
        stopped,
    })
}
