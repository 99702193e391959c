//! The outer loop of a hybrid run, as Quantum ESPRESSO's `electrons` runs it: after the
//! semilocal SCF has converged, each outer step builds the compressed exchange operators from
//! the current bands, then runs an inner SCF loop with them fixed. The step's energy takes
//! the Fock energy of the new bands with their own operator (exact on them); the run has
//! converged when the estimated exchange error `dexx = fock1 - (fock0 + fock2)/2` is below
//! the energy tolerance (`fock` = `sum w <psi|V_x|psi>` = twice the Fock energy: `fock1` the
//! new bands with the old operator, `fock0` and `fock2` the old and new bands with their own).

use super::ace::{Ace, Operators};
use super::kernel::CoulombKernel;
use super::kq::images;
use super::operator::{scaled_kernel_at, Exchange, Pairing};
use super::orbitals::Sources;
use crate::bands::BandScalar;
use crate::occupation::Occupations;
use crate::scf::{ExxStepInfo, Loop, LoopEnd, LoopTolerances, Record, ScfObserver};
use planewave_linalg::Mat;
use std::time::Instant;

/// The scaled kernel of every q of the run's q grid (in grid order).
struct Kernels {
    per_q: Vec<Vec<f64>>,
}

impl Kernels {
    fn new(basis: &crate::basis::Basis, hybrid: &super::Hybrid, coulomb: &CoulombKernel) -> Self {
        let qs = super::kq::q_points(hybrid.kernel.q_grid);
        let n = qs.len();
        let per_q = qs
            .into_iter()
            .map(|q| scaled_kernel_at(basis, coulomb, hybrid.fraction, q, n))
            .collect();
        Self { per_q }
    }
}

/// The compressed exchange operators of every (spin, k) block this rank computes, from the
/// bands `psi` and occupations of `end`, with their Fock energy. Collective.
fn operators<T: BandScalar>(
    lp: &Loop<'_, T>,
    kernel: &Kernels,
    psi: &[Vec<Mat<T>>],
    end: &LoopEnd,
    rec: &mut Record,
) -> Result<Operators<T>, String> {
    let t0 = Instant::now();
    let par = &*lp.basis.parallel;
    let blocks = par.time_block_work(|| blocks(lp, kernel, psi, &end.occupations))?;
    rec.timings.exchange += t0.elapsed().as_secs_f64();
    let own_fock_energy = fock_energy(lp, psi, end, &blocks);
    Ok(Operators {
        blocks,
        own_fock_energy,
    })
}

/// The operator of every (spin, k) block this rank computes, from the bands and occupations
/// of every block: with one q-point each block's own, else every k + q's by symmetry
/// ([`Sources`], gathered from all k-point groups).
fn blocks<T: BandScalar>(
    lp: &Loop<'_, T>,
    kernel: &Kernels,
    psi: &[Vec<Mat<T>>],
    occ: &Occupations,
) -> Result<Vec<Vec<Option<Ace<T>>>>, String> {
    let (model, basis) = (lp.model, lp.basis);
    let par = &*basis.parallel;
    let nk = basis.kpoints.len();
    let q_grid = model.hybrid.expect("a hybrid run").kernel.q_grid;
    let sources = (kernel.per_q.len() > 1).then(|| Sources::gather(model, basis, psi, occ));
    let irreducible: Vec<[f64; 3]> = basis.kpoints.iter().map(|k| k.frac).collect();
    let mut out: Vec<Vec<Option<Ace<T>>>> = (0..model.nspin())
        .map(|_| (0..nk).map(|_| None).collect())
        .collect();
    for (s, k) in par.owned_blocks(model.nspin(), nk) {
        let kpt = &basis.kpoints[k];
        let mine = psi[s][k].as_ref();
        // With band groups the pairs (i, j) are dealt by i: each group applies V_x to its own
        // bands, with every occupied orbital j and all bands for the compressed operator.
        let all = all_bands(par, mine, lp.params.nbands);
        let pairings = match &sources {
            None => {
                let x: Vec<f64> = occ.occ[s][k]
                    .iter()
                    .map(|f| f / model.max_occupation())
                    .collect();
                vec![Pairing::own(
                    basis,
                    kpt,
                    kernel.per_q[0].clone(),
                    all.as_ref(),
                    &x,
                )]
            }
            Some(src) => images(kpt.frac, q_grid, &irreducible, &model.symmetries)?
                .iter()
                .zip(&kernel.per_q)
                .map(|(im, v)| {
                    let (u, x) = src.fields(basis, s, im);
                    Pairing::new(u, &x, v.clone())
                })
                .collect(),
        };
        let w = Exchange::new(pairings).apply(basis, kpt, mine);
        let w = all_bands(par, w.as_ref(), lp.params.nbands);
        out[s][k] = Some(Ace::new(kpt, all.as_ref(), w)?);
    }
    Ok(out)
}

/// Every band of a block whose bands `mine` are this rank's share over the band groups (an
/// all-gather over the band group; a copy without band groups).
pub(crate) fn all_bands<T: BandScalar>(
    par: &crate::parallel::Parallel,
    mine: planewave_linalg::MatRef<'_, T>,
    nbands: usize,
) -> Mat<T> {
    if par.band_groups() == 1 {
        return mine.to_owned();
    }
    let comm = par.band_comm().clone();
    planewave_linalg::BandDistBlock::new(comm, mine.nrows(), nbands, mine.to_owned()).to_global()
}

/// Run the outer loop from the converged semilocal loop `start`, the bands `psi` updated in
/// place. Returns the last loop's end (with the Fock energy of its bands) and the steps.
pub(crate) fn run<T: BandScalar>(
    lp: &Loop<'_, T>,
    psi: &mut [Vec<Mat<T>>],
    start: LoopEnd,
    rec: &mut Record,
    observer: &mut impl ScfObserver,
) -> Result<(LoopEnd, Vec<ExxStepInfo>), String> {
    let (model, basis, params) = (lp.model, lp.basis, lp.params);
    let hybrid = model.hybrid.expect("a hybrid run");
    let par = &*basis.parallel;
    let coulomb = CoulombKernel::new(hybrid.kernel, &model.crystal, basis.ecut, 4.0 * basis.ecut);
    let kernel = Kernels::new(basis, &hybrid, &coulomb);
    let mut ops = operators(lp, &kernel, psi, &start, rec)?;
    let mut end = start;
    let mut steps = Vec::new();
    // Early steps need no tighter inner loops than their exchange error (QE's adaptive
    // thresholds): `loosen` times the run's tolerance, at most a tenth of the last dexx.
    let mut loosen: f64 = 1.0;
    for step in 1..=params.max_iterations {
        let t0 = Instant::now();
        let before = rec.iterations();
        let tol = LoopTolerances::loosened(params, loosen, end.residual);
        end = lp.iterate(psi, end.next, Some(&ops), tol, rec, observer)?;
        if !end.converged {
            return Ok((end, steps));
        }
        // QE's fock0, fock1, fock2 (sum w <psi|V|psi>, twice the Fock energies).
        let fock0 = 2.0 * ops.own_fock_energy;
        let fock1 = end.energies.exact_exchange + ops.own_fock_energy;
        ops = operators(lp, &kernel, psi, &end, rec)?;
        let fock2 = 2.0 * ops.own_fock_energy;
        end.energies.exact_exchange = ops.own_fock_energy;
        let dexx = fock1 - 0.5 * (fock0 + fock2);
        let info = ExxStepInfo {
            step,
            inner_iterations: rec.iterations() - before,
            energy: end.energies.total(),
            fock_energy: fock2 / 2.0,
            dexx,
            seconds: t0.elapsed().as_secs_f64(),
        };
        observer.exx_step(&info);
        steps.push(info);
        // Converged when the exchange error is below the tolerance after an inner loop at
        // the full tolerance.
        if par.agree(dexx.abs() < params.energy_tolerance && loosen == 1.0) {
            return Ok((end, steps));
        }
        loosen = (0.1 * dexx.abs() / params.energy_tolerance).max(1.0);
    }
    end.converged = false;
    Ok((end, steps))
}

/// `(1/2) sum w <psi|V_x|psi>` of the bands of `end` with the operators `ace`. Collective.
fn fock_energy<T: BandScalar>(
    lp: &Loop<'_, T>,
    psi: &[Vec<Mat<T>>],
    end: &LoopEnd,
    ace: &[Vec<Option<Ace<T>>>],
) -> f64 {
    use crate::terms::term::Term;
    let weights = crate::terms::term::band_weights(lp.basis, &end.occupations.occ);
    let bands = crate::terms::term::Bands {
        psi,
        weights: &weights,
    };
    let state = lp.state(&end.density, Some(bands), Some(ace));
    Term::<T>::energy(&crate::terms::exact_exchange::ExactExchange, &state).complete(lp.basis)
}
