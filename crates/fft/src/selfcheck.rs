//! Self-check of the distributed transform against the serial one, on any communicator.
//!
//! Contract: every function here is collective and deterministic (the same random spheres and
//! data on every rank, from a seed). [`check_case`] runs [`DistFft`] backward and forward on
//! band blocks (all bands in one exchange, and pipelined in blocks of a third of them with
//! overlapped exchanges) and compares each rank's part with the serial [`Fft3d`] result computed on
//! every rank; the error is `max |dist - serial| / max |serial|` over the band block, reduced
//! (maximum) over the ranks, so every rank returns the same verdict. [`run_fft_selfcheck`]
//! loops over every decomposition valid for the group size, every all-to-all-v algorithm,
//! Γ-point and general-k spheres and band blocks of 1, 4 and 16. The tests run it on `Threads`
//! and the `fft_mpi_check` example under `mpirun`.

use crate::decomposition::Decomposition;
use crate::dist_fft::{DistFft, DistFftOptions};
use crate::fft3d::Fft3d;
use crate::grid::FftGrid;
use crate::sphere::SphereMap;
use crate::C64;
use planewave_comm::selfcheck::SplitMix;
use planewave_comm::{AlltoallvAlgorithm, CommClass, CommExt, Communicator, ReduceOp};
use std::sync::Arc;

/// Agreement required between distributed and serial transforms.
pub const TOLERANCE: f64 = 1e-12;

/// Band-block sizes the self-check uses.
pub const BAND_BLOCKS: [usize; 3] = [1, 4, 16];

/// One random sphere on one grid.
#[derive(Clone, Debug, PartialEq)]
pub struct CheckCase {
    /// Grid dimensions.
    pub dims: [usize; 3],
    /// k-point in reciprocal-lattice coordinates (zero: Γ).
    pub kpoint: [f64; 3],
    /// Semi-axis of the sphere along each axis as a fraction of `n_i / 2`.
    pub fraction: f64,
    /// Seed of the Miller order and of the data.
    pub seed: u64,
}

fn uniform(rng: &mut SplitMix) -> f64 {
    (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64
}

impl CheckCase {
    /// A random case: grid sides from `sides`, a sphere filling 35–95% of the half grid,
    /// Γ or a random k-point.
    pub fn random(seed: u64, sides: &[usize], gamma: bool) -> Self {
        let mut rng = SplitMix(seed ^ 0x5EED_F00D);
        let dims = [0, 1, 2].map(|_| sides[rng.below(sides.len())]);
        let kpoint = if gamma {
            [0.0; 3]
        } else {
            [0, 1, 2].map(|_| uniform(&mut rng) - 0.5)
        };
        Self {
            dims,
            kpoint,
            fraction: 0.35 + 0.6 * uniform(&mut rng),
            seed,
        }
    }

    /// The sphere's Miller indices, in a shuffled (seeded) order. Every index lies strictly
    /// inside `(-n_i/2, n_i/2)`, so no two share a grid point.
    pub fn millers(&self) -> Vec<[i32; 3]> {
        let h = self.dims.map(|n| (n as i32 - 1) / 2);
        let semi = self.dims.map(|n| (self.fraction * n as f64 / 2.0).max(0.5));
        let mut out = Vec::new();
        for a in -h[0]..=h[0] {
            for b in -h[1]..=h[1] {
                for c in -h[2]..=h[2] {
                    let m = [a, b, c];
                    let r2: f64 = (0..3)
                        .map(|i| ((m[i] as f64 + self.kpoint[i]) / semi[i]).powi(2))
                        .sum();
                    if r2 <= 1.0 {
                        out.push(m);
                    }
                }
            }
        }
        let mut rng = SplitMix(self.seed);
        for i in (1..out.len()).rev() {
            out.swap(i, rng.below(i + 1));
        }
        out
    }
}

fn random_values(n: usize, rng: &mut SplitMix) -> Vec<C64> {
    (0..n)
        .map(|_| C64::new(uniform(rng) - 0.5, uniform(rng) - 0.5))
        .collect()
}

fn max_abs(v: &[C64]) -> f64 {
    v.iter().map(|z| z.norm()).fold(0.0, f64::max)
}

/// `max |got - expect| / scale`.
fn relative_error(got: &[C64], expect: &[C64], scale: f64) -> f64 {
    let err = got
        .iter()
        .zip(expect)
        .map(|(a, b)| (a - b).norm())
        .fold(0.0, f64::max);
    err / scale.max(f64::MIN_POSITIVE)
}

/// Compare backward and forward transforms of `case` with `options` for each band-block size
/// in `nbs`; returns the worst relative error (all ranks agree on it). Collective.
pub fn check_case(
    comm: &Arc<dyn Communicator>,
    case: &CheckCase,
    options: &DistFftOptions,
    nbs: &[usize],
) -> Result<f64, String> {
    let grid = FftGrid { dims: case.dims };
    let millers = case.millers();
    let mut plan = DistFft::new(comm.clone(), grid, &millers, options)?;
    let serial = Fft3d::new(grid);
    let map = SphereMap::new(grid, &millers);
    let n = grid.len();
    let (ng, nr) = (plan.n_g_local(), plan.n_real_local());
    let mut worst = 0.0f64;
    for &nb in nbs {
        let mut rng = SplitMix(case.seed.wrapping_mul(31).wrapping_add(nb as u64));
        // Backward: sphere coefficients → real space.
        let mut local_c = Vec::with_capacity(nb * ng);
        let mut expect = Vec::with_capacity(nb * nr);
        let mut scale = 0.0f64;
        for _ in 0..nb {
            let coeffs = random_values(millers.len(), &mut rng);
            local_c.extend(plan.local_g().iter().map(|&g| coeffs[g]));
            let mut full = vec![C64::new(0.0, 0.0); n];
            map.scatter(&coeffs, &mut full);
            serial.backward(&mut full);
            scale = scale.max(max_abs(&full));
            expect.extend(plan.layout().extract(&full));
        }
        // All nb bands in one exchange, then in blocks of about nb/3 with overlapped exchanges.
        let block = nb.div_ceil(3);
        let mut real = vec![C64::new(0.0, 0.0); nb * nr];
        let mut piped = real.clone();
        plan.backward(&local_c, nb, &mut real);
        plan.backward_bands(&local_c, nb, block, &mut piped);
        for got in [&real, &piped] {
            worst = worst.max(relative_error(got, &expect, scale));
        }
        // Forward: real space → sphere coefficients (1/N).
        let mut local_r = Vec::with_capacity(nb * nr);
        let mut expect = Vec::with_capacity(nb * ng);
        let mut scale = 0.0f64;
        for _ in 0..nb {
            let mut full = random_values(n, &mut rng);
            local_r.extend(plan.layout().extract(&full));
            serial.forward(&mut full);
            let mut coeffs = vec![C64::new(0.0, 0.0); millers.len()];
            map.gather(&full, 1.0, &mut coeffs);
            scale = scale.max(max_abs(&coeffs));
            expect.extend(plan.local_g().iter().map(|&g| coeffs[g]));
        }
        let mut got = vec![C64::new(0.0, 0.0); nb * ng];
        let mut piped = got.clone();
        let mut local_r2 = local_r.clone();
        plan.forward(&mut local_r, nb, &mut got);
        let inv_n = 1.0 / n as f64;
        plan.forward_bands_scaled(&mut local_r2, nb, block, inv_n, &mut piped);
        for got in [&got, &piped] {
            worst = worst.max(relative_error(got, &expect, scale));
        }
    }
    let mut w = [worst];
    comm.allreduce(&mut w, ReduceOp::Max, CommClass::Other);
    if w[0] <= TOLERANCE {
        Ok(w[0])
    } else {
        Err(format!(
            "planewave-fft self-check: {} on {} ranks with {}, grid {:?}, k {:?}: relative \
             error {:.3e} > {TOLERANCE:e}",
            plan.process_grid(),
            comm.size(),
            options.alltoallv,
            case.dims,
            case.kpoint,
            w[0]
        ))
    }
}

/// Every decomposition valid for `ranks`: slab, each pencil grid with `p1 > 1`, and auto.
pub fn decompositions(ranks: usize) -> Vec<Decomposition> {
    let mut v = vec![Decomposition::Slab];
    v.extend(
        (2..=ranks)
            .filter(|&p1| ranks.is_multiple_of(p1))
            .map(|p1| Decomposition::Pencil { p1, p2: ranks / p1 }),
    );
    v.push(Decomposition::Auto);
    v
}

/// Grid sides the self-check draws from (small, with factors 2, 3, 5, 7, some fewer than 8).
pub const CHECK_SIDES: [usize; 8] = [5, 6, 7, 8, 9, 10, 12, 15];

/// The full self-check on `comm` for the random cases of `seeds` (each seed: one Γ-point and
/// one general-k sphere). Collective; returns a one-line summary.
pub fn run_fft_selfcheck(comm: Arc<dyn Communicator>, seeds: &[u64]) -> Result<String, String> {
    let mut count = 0;
    let mut worst = 0.0f64;
    for &seed in seeds {
        for gamma in [true, false] {
            let case = CheckCase::random(seed, &CHECK_SIDES, gamma);
            for decomposition in decompositions(comm.size()) {
                for alltoallv in AlltoallvAlgorithm::ALL {
                    let options = DistFftOptions {
                        decomposition,
                        alltoallv,
                        pair_mirror_sticks: false,
                    };
                    worst = worst.max(check_case(&comm, &case, &options, &BAND_BLOCKS)?);
                    count += 1;
                }
            }
        }
    }
    Ok(format!(
        "planewave-fft self-check on {} ranks ({}): {count} plans x band blocks {:?} agree with \
         the serial transform, worst relative error {worst:.2e}",
        comm.size(),
        comm.backend(),
        BAND_BLOCKS
    ))
}
