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
use super::operator::{apply, scaled_kernel_at, Pairing};
use super::orbitals::Sources;
use crate::bands::BandScalar;
use crate::occupation::Occupations;
use crate::scf::{Engine, ExxStepInfo, LoopEnd, LoopTolerances, Record, ScfObserver};
use crate::terms::exact_exchange::EXACT_EXCHANGE;
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
    lp: &Engine<'_, T>,
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
/// ([`Sources`], gathered from all k-point groups, each band group holding its share); either
/// way the band groups' occupied orbitals go around the band-group ring.
fn blocks<T: BandScalar>(
    lp: &Engine<'_, T>,
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
        let x: Vec<f64> = occ.occ[s][k]
            .iter()
            .map(|f| f / model.max_occupation())
            .collect();
        let w = match &sources {
            // One q-point: each band group's occupied orbitals go around the band-group ring;
            // every group pairs them with its own bands (the pairs (i, j) dealt by i).
            None => ring_exchange(lp, kpt, mine, &x, &kernel.per_q[0]),
            // A q grid: the images of the orbitals of every k + q, each band group's share
            // around the ring in turn.
            Some(src) => {
                let ims = images(kpt.frac, q_grid, &irreducible, &model.symmetries)?;
                apply(basis, kpt, mine, |u, w| {
                    for (im, v) in ims.iter().zip(&kernel.per_q) {
                        src.accumulate_image(basis, s, im, v, u, w);
                    }
                })
            }
        };
        // The compressed operator from every band: each band group holds it whole.
        let w = all_bands(par, w, lp.params.nbands);
        let ace = with_all_bands(par, mine, lp.params.nbands, |all| Ace::new(kpt, all, w))?;
        out[s][k] = Some(ace);
    }
    Ok(out)
}

/// `V_x mine` for this rank's bands `mine` of one block (one q-point: k' = k), the occupied
/// orbitals coming around the ring of the band group (CASTEP's systolic pattern, as in the
/// subspace products): each group's block of occupied coefficients visits every group once,
/// is transformed to the grid there and paired with that group's bands. Occupations per
/// spin `x` of all bands. Collective on the band group and the G-vector group.
fn ring_exchange<T: BandScalar>(
    lp: &Engine<'_, T>,
    kpt: &crate::basis::Kpoint,
    mine: planewave_linalg::MatRef<'_, T>,
    x: &[f64],
    kernel: &[f64],
) -> Mat<T> {
    use planewave_comm::ring::{Ring, RingOrder};
    use planewave_comm::CommClass;
    let basis = lp.basis;
    let par = &*basis.parallel;
    let my_bands = par.local_bands(lp.params.nbands);
    let occupied: Vec<usize> = (0..my_bands.len())
        .filter(|&l| x[my_bands[l]] > super::operator::EPS_OCCUPATION)
        .collect();
    let rows = mine.nrows();
    let block: Vec<T> = occupied
        .iter()
        .flat_map(|&l| (0..rows).map(move |i| mine[(i, l)]))
        .collect();
    let my_x: Vec<f64> = occupied.iter().map(|&l| x[my_bands[l]]).collect();
    let comm = par.band_comm();
    let ring = Ring::new(comm.size(), comm.rank(), RingOrder::Natural);
    let mut occupations = vec![Vec::new(); comm.size()];
    ring.systolic(comm.as_ref(), my_x, CommClass::Band, |owner, v| {
        occupations[owner] = v.to_vec();
    });
    apply(basis, kpt, mine, |u, w| {
        ring.systolic(comm.as_ref(), block, CommClass::Band, |owner, flat| {
            let xo = &occupations[owner];
            let orbitals = Mat::from_fn(rows, xo.len(), |i, j| flat[i + j * rows]);
            Pairing::own(basis, kpt, kernel, orbitals.as_ref(), xo).accumulate(basis, u, w);
        });
    })
}

/// Every band of a block whose bands `mine` are this rank's share over the band groups (an
/// all-gather over the band group; `mine` itself without band groups).
pub(crate) fn all_bands<T: BandScalar>(
    par: &crate::parallel::Parallel,
    mine: Mat<T>,
    nbands: usize,
) -> Mat<T> {
    if par.band_groups() == 1 {
        return mine;
    }
    let comm = par.band_comm().clone();
    planewave_linalg::BandDistBlock::new(comm, mine.nrows(), nbands, mine).to_global()
}

/// [`all_bands`] of a block this rank holds, borrowed as it is without band groups.
fn with_all_bands<T: BandScalar, R>(
    par: &crate::parallel::Parallel,
    mine: planewave_linalg::MatRef<'_, T>,
    nbands: usize,
    f: impl FnOnce(planewave_linalg::MatRef<'_, T>) -> R,
) -> R {
    if par.band_groups() == 1 {
        return f(mine);
    }
    f(all_bands(par, mine.to_owned(), nbands).as_ref())
}

/// Run the outer loop from the converged semilocal loop `start`, the bands `psi` updated in
/// place. Returns the last loop's end (with the Fock energy of its bands) and the steps.
pub(crate) fn run<T: BandScalar>(
    lp: &Engine<'_, T>,
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
        end = lp.iterate(psi, end.next_input(), Some(&ops), tol, rec, observer)?;
        if !end.converged {
            return Ok((end, steps));
        }
        // QE's fock0, fock1, fock2 (sum w <psi|V|psi>, twice the Fock energies).
        let fock0 = 2.0 * ops.own_fock_energy;
        let fock1 = end.energies.get(EXACT_EXCHANGE) + ops.own_fock_energy;
        ops = operators(lp, &kernel, psi, &end, rec)?;
        let fock2 = 2.0 * ops.own_fock_energy;
        end.energies.set(EXACT_EXCHANGE, ops.own_fock_energy);
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
    lp: &Engine<'_, T>,
    psi: &[Vec<Mat<T>>],
    end: &LoopEnd,
    ace: &[Vec<Option<Ace<T>>>],
) -> f64 {
    use crate::terms::term::Term;
    let weights = crate::terms::term::band_weights(lp.basis, &end.occupations.occ);
    let bands = crate::terms::term::Bands {
        psi,
        weights: &weights,
        eigenvalues: None,
    };
    let state = lp.state(&end.density, Some(bands), Some(ace));
    Term::<T>::energy(&crate::terms::exact_exchange::ExactExchange, &state)
        .map_or(0.0, |e| e.complete(lp.basis))
}
