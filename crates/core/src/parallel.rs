//! Who computes what: a run's process [`Topology`], the deal of its (spin, k-point) blocks to
//! the k-point groups, and the reductions over those groups.
//!
//! Contract:
//! - One `Parallel` per basis (the [`Basis`] owns it); every rank holds the
//!   same deal. A (spin, k) block belongs to exactly one k-point group, chosen by cost (plane
//!   waves × bands, largest first to the least loaded group), never by rank.
//! - Inside a k-point group the bands of each block are dealt round-robin over the band
//!   groups ([`Parallel::local_bands`]: band `j` to band group `j % band_groups`), and the
//!   ranks of a band group form its G-vector group: the plane waves of the k-points are dealt
//!   over it ([`Basis::distribute`]) and so is the density grid; sums over plane waves or
//!   grid points are completed over the group by `Kpoint::sum_over_g` and
//!   `Basis::sum_over_rho`. Every band group holds the same G-vector rows and grid points.
//! - Anything summed over bands (densities, band energies, forces, stress) is a local sum
//!   over the owned blocks' local bands plus one [`Parallel::sum_over_blocks`] (over the band
//!   groups, then over the `inter_kpoint` communicator (class k) through the run's
//!   [`SumAlgorithm`]); tables every band group holds whole (eigenvalues) need only
//!   [`Parallel::sum_over_kgroups`]. The results are the same on every rank that holds the
//!   same rows.
//! - Decisions that steer control flow (convergence) go through [`Parallel::agree`], so that
//!   no rank leaves a loop its peers stay in.
//! - Seconds of block work (eigensolver, density, forces) are recorded per rank with
//!   [`Parallel::time_block_work`], for the efficiency report.

use crate::basis::Basis;
use planewave_comm::sum::{allreduce_sum, autotune, SumAlgorithm, SumChoice};
use planewave_comm::topology::{LayoutRequest, ProblemSize, RankOrder};
use planewave_comm::LayoutError;
use planewave_comm::{
    AlltoallvAlgorithm, CommClass, CommExt, Communicator, Element, Layout, Operation, ReduceOp,
    Solo, Topology,
};
use std::sync::{Arc, Mutex};
use std::time::Instant;

/// Testing aid: world rank `r` fails its set-up as if it could not read its pseudopotential
/// files when this variable is `r` (exercises the one-rank-fails path under mpirun).
pub const FAIL_RANK_ENV: &str = "PLANEWAVE_FAIL_RANK";
/// Testing aid: world rank `r` panics in its first SCF iteration when this variable is `r`.
pub const PANIC_RANK_ENV: &str = "PLANEWAVE_PANIC_RANK";

/// Whether the testing variable `var` names world rank `rank`.
pub fn injected(var: &str, rank: usize) -> bool {
    std::env::var(var)
        .ok()
        .and_then(|v| v.trim().parse::<usize>().ok())
        == Some(rank)
}

/// A rank-local error made collective (see [`agree_on`]).
#[derive(Debug)]
pub struct AgreedError<E> {
    /// The error of the lowest failing rank.
    pub error: E,
    /// That rank (world numbering of `comm`).
    pub rank: usize,
    /// How many ranks failed.
    pub failed: usize,
}

/// Make a rank-local outcome collective (every rank of `comm` must call it at the same point):
/// when any rank failed, every rank returns the error of the lowest failing rank (sent to the
/// others as JSON), so all ranks stop together with one message; otherwise each keeps its value.
pub fn agree_on<T, E>(comm: &dyn Communicator, local: Result<T, E>) -> Result<T, AgreedError<E>>
where
    E: serde::Serialize + serde::de::DeserializeOwned,
{
    let n = comm.size();
    let me = comm.rank();
    let mut flags = [
        if local.is_err() { me as u64 } else { n as u64 },
        u64::from(local.is_err()),
    ];
    if n > 1 {
        comm.allreduce(&mut flags[..1], ReduceOp::Min, CommClass::Other);
        comm.allreduce(&mut flags[1..], ReduceOp::Sum, CommClass::Other);
    }
    let (first, failed) = (flags[0] as usize, flags[1] as usize);
    if first == n {
        return local.map_err(|_| unreachable!("no rank failed"));
    }
    let mut text = match &local {
        Err(e) if me == first => serde_json::to_vec(e).unwrap_or_default(),
        _ => Vec::new(),
    };
    let mut len = [text.len() as u64];
    comm.broadcast(&mut len, first, CommClass::Other);
    text.resize(len[0] as usize, 0);
    comm.broadcast(&mut text, first, CommClass::Other);
    let error = match local {
        Err(e) if me == first => e,
        _ => serde_json::from_slice(&text).expect("the error came from a peer as JSON"),
    };
    Err(AgreedError {
        error,
        rank: first,
        failed,
    })
}

/// The layout of one run and the ownership of its (spin, k) blocks.
pub struct Parallel {
    topology: Topology,
    /// `owner[s][k]`: the k-point group that computes block (s, k). Empty: group 0 owns all.
    owner: Vec<Vec<usize>>,
    sum: SumAlgorithm,
    /// The all-to-all-v algorithm of the G-vector transposes (None: not distributed).
    alltoallv: Option<AlltoallvAlgorithm>,
    block_seconds: Mutex<f64>,
}

impl std::fmt::Debug for Parallel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Parallel")
            .field("layout", &self.topology.layout)
            .field("kpoint_group", &self.topology.kpoint_group)
            .field("owner", &self.owner)
            .finish()
    }
}

/// Deal blocks of the given costs to `groups` groups: largest first, each to the group with
/// the least work so far (ties to the lowest index). Returns the group of every block.
pub fn deal_by_cost(costs: &[f64], groups: usize) -> Vec<usize> {
    let mut order: Vec<usize> = (0..costs.len()).collect();
    order.sort_by(|&a, &b| costs[b].total_cmp(&costs[a]).then(a.cmp(&b)));
    let mut load = vec![0.0f64; groups.max(1)];
    let mut owner = vec![0; costs.len()];
    for i in order {
        let g = (0..load.len())
            .min_by(|&x, &y| load[x].total_cmp(&load[y]).then(x.cmp(&y)))
            .unwrap_or(0);
        owner[i] = g;
        load[g] += costs[i];
    }
    owner
}

impl Parallel {
    /// One process: every block local.
    pub fn solo() -> Self {
        let world: Arc<dyn Communicator> = Arc::new(Solo);
        let request = LayoutRequest::auto(ProblemSize {
            kpoints: 1,
            bands: 1,
            fft_planes: 1,
        });
        let topology = Topology::new(world, &request).expect("one rank always fits");
        Self::new(topology, Vec::new(), SumAlgorithm::Allreduce)
    }

    /// A run on `topology` where block (s, k) costs `costs[s][k]` (any unit).
    pub fn new(topology: Topology, costs: Vec<Vec<f64>>, sum: SumAlgorithm) -> Self {
        let flat: Vec<f64> = costs.iter().flatten().copied().collect();
        let groups = deal_by_cost(&flat, topology.layout.kpoint_groups);
        let mut it = groups.into_iter();
        let owner = costs
            .iter()
            .map(|c| c.iter().map(|_| it.next().unwrap_or(0)).collect())
            .collect();
        Parallel {
            topology,
            owner,
            sum,
            alltoallv: None,
            block_seconds: Mutex::new(0.0),
        }
    }

    /// The layout of `kpoint_groups` k-point groups of `band_groups` band groups each (the
    /// remaining ranks of a band group share its G-vectors) on `world` for `basis` with
    /// `nspin` channels of `nbands` bands, its topology (collective) and the deal of the
    /// blocks by cost (plane waves × bands); the k-point sum strategy as `sum` says (`Auto`
    /// times both on the grid size).
    #[allow(clippy::too_many_arguments)]
    pub fn over_kpoints(
        world: Arc<dyn Communicator>,
        kpoint_groups: usize,
        band_groups: usize,
        order: RankOrder,
        basis: &Basis,
        nspin: usize,
        nbands: usize,
        sum: SumChoice,
    ) -> Result<Self, LayoutError> {
        let mut request = LayoutRequest::auto(ProblemSize {
            kpoints: basis.kpoints.len() * nspin,
            bands: nbands,
            fft_planes: basis.grid.dims[2],
        });
        request.kpoint_groups = Some(kpoint_groups);
        request.band_groups = Some(band_groups);
        request.order = order;
        let topology = Topology::new(world, &request)?;
        let sum = match sum {
            SumChoice::Fixed(a) => a,
            SumChoice::Auto => autotune(
                topology.inter_kpoint.as_ref(),
                basis.grid_len(),
                CommClass::Kpoint,
            ),
        };
        let costs = (0..nspin)
            .map(|_| {
                basis
                    .kpoints
                    .iter()
                    .map(|k| (k.global_dim() * nbands) as f64)
                    .collect()
            })
            .collect();
        Ok(Self::new(topology, costs, sum))
    }

    /// The process topology (world and level communicators).
    pub fn topology(&self) -> &Topology {
        &self.topology
    }

    /// The resolved layout.
    pub fn layout(&self) -> Layout {
        self.topology.layout
    }

    /// All ranks of the run.
    pub fn world(&self) -> &Arc<dyn Communicator> {
        &self.topology.world
    }

    /// True on the rank that prints and writes files (world rank 0).
    pub fn is_root(&self) -> bool {
        self.topology.world.rank() == 0
    }

    /// The k-point-group sum strategy.
    pub fn sum_algorithm(&self) -> SumAlgorithm {
        self.sum
    }

    /// Record the all-to-all-v algorithm of the G-vector transposes (for the report).
    pub fn set_alltoallv(&mut self, algorithm: AlltoallvAlgorithm) {
        self.alltoallv = Some(algorithm);
    }

    /// Name of the G-vector transposes' all-to-all-v algorithm ("none" when not distributed).
    pub fn alltoallv_name(&self) -> &'static str {
        self.alltoallv.map_or("none", AlltoallvAlgorithm::name)
    }

    /// The k-point group that computes block (spin `s`, k-point `k`).
    pub fn owner(&self, s: usize, k: usize) -> usize {
        self.owner
            .get(s)
            .and_then(|o| o.get(k))
            .copied()
            .unwrap_or(0)
    }

    /// Whether this rank's k-point group computes block (s, k).
    pub fn owns(&self, s: usize, k: usize) -> bool {
        self.owner(s, k) == self.topology.kpoint_group
    }

    /// Whether this rank's group computes k-point `k` for any of `nspin` channels.
    pub fn owns_kpoint(&self, nspin: usize, k: usize) -> bool {
        (0..nspin).any(|s| self.owns(s, k))
    }

    /// The (spin, k) blocks this rank's group computes, out of `nspin` × `nkpoints`, spin-major.
    pub fn owned_blocks(
        &self,
        nspin: usize,
        nkpoints: usize,
    ) -> impl Iterator<Item = (usize, usize)> + '_ {
        (0..nspin)
            .flat_map(move |s| (0..nkpoints).map(move |k| (s, k)))
            .filter(|&(s, k)| self.owns(s, k))
    }

    /// The ranks of this k-point group holding the other bands of the same rows (one per band
    /// group, class band).
    pub fn band_comm(&self) -> &Arc<dyn Communicator> {
        &self.topology.band
    }

    /// Every rank of this k-point group (its band groups times their G-vector ranks): the
    /// group over which a band-distributed eigensolver solves its subspace problems.
    pub fn kgroup_comm(&self) -> &Arc<dyn Communicator> {
        &self.topology.kgroup
    }

    /// Number of band groups per k-point group.
    pub fn band_groups(&self) -> usize {
        self.topology.layout.band_groups
    }

    /// Global indices of this rank's bands out of `nbands` (round-robin over the band groups).
    pub fn local_bands(&self, nbands: usize) -> Vec<usize> {
        let p = self.band_groups();
        (self.topology.band_group..nbands).step_by(p).collect()
    }

    /// The entries of a per-band table (`all[j]` for band j) that belong to this rank's bands.
    pub fn local_band_values(&self, all: &[f64]) -> Vec<f64> {
        let p = self.band_groups();
        all.iter()
            .skip(self.topology.band_group)
            .step_by(p)
            .copied()
            .collect()
    }

    /// Sum `data` (partial sums over this rank's bands of its blocks) over the band groups and
    /// the k-point groups, in place.
    pub fn sum_over_blocks<T: Element>(&self, data: &mut [T]) {
        let _op = self.topology.world.operation(Operation::Density);
        if self.band_groups() > 1 {
            self.topology
                .band
                .allreduce(data, ReduceOp::Sum, CommClass::Band);
        }
        self.sum_over_kgroups(data);
    }

    /// Sum `data` over the k-point groups (class k), in place.
    pub fn sum_over_kgroups<T: Element>(&self, data: &mut [T]) {
        allreduce_sum(
            self.topology.inter_kpoint.as_ref(),
            self.sum,
            data,
            CommClass::Kpoint,
        );
    }

    /// Make whole a table indexed `[s][k][i]` of `block_len` entries per block whose owned
    /// blocks hold values (the others are ignored): every rank ends with every block.
    pub fn gather_blocks(&self, table: &mut [Vec<Vec<f64>>], block_len: usize) {
        let mut flat = Vec::new();
        for (s, ts) in table.iter().enumerate() {
            for (k, block) in ts.iter().enumerate() {
                if self.owns(s, k) {
                    flat.extend_from_slice(block);
                } else {
                    flat.extend(std::iter::repeat_n(0.0, block_len));
                }
            }
        }
        self.sum_over_kgroups(&mut flat);
        let mut chunks = flat.chunks(block_len);
        for block in table.iter_mut().flatten() {
            *block = chunks.next().unwrap_or_default().to_vec();
        }
    }

    /// World rank 0's `value` on every rank: for decisions that steer control flow.
    pub fn agree(&self, value: bool) -> bool {
        let mut v = [u64::from(value)];
        self.topology.world.broadcast(&mut v, 0, CommClass::Other);
        v[0] != 0
    }

    /// Whether `value` holds on every rank (collective).
    pub fn all(&self, value: bool) -> bool {
        let mut v = [u64::from(value)];
        self.topology
            .world
            .allreduce(&mut v, ReduceOp::Min, CommClass::Other);
        v[0] != 0
    }

    /// Take over `previous`'s deal of the blocks when it has the same shape and group count
    /// (a relaxation keeps each block on the group that holds its bands, whatever the new
    /// plane-wave counts would suggest).
    pub fn keep_deal_of(&mut self, previous: &Parallel) {
        let same = self.owner.len() == previous.owner.len()
            && self
                .owner
                .iter()
                .zip(&previous.owner)
                .all(|(a, b)| a.len() == b.len())
            && self.topology.layout.kpoint_groups == previous.topology.layout.kpoint_groups;
        if same {
            self.owner = previous.owner.clone();
        }
    }

    /// Run `f` (work on this rank's blocks) and add its seconds to the block-work clock.
    pub fn time_block_work<R>(&self, f: impl FnOnce() -> R) -> R {
        let t = Instant::now();
        let r = f();
        *self.block_seconds.lock().unwrap_or_else(|e| e.into_inner()) += t.elapsed().as_secs_f64();
        r
    }

    /// Seconds of block work recorded on this rank so far.
    pub fn block_seconds(&self) -> f64 {
        *self.block_seconds.lock().unwrap_or_else(|e| e.into_inner())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use planewave_comm::Threads;

    #[test]
    fn one_failing_rank_fails_every_rank_with_its_message() {
        let out = Threads::run(3, |c| {
            let local: Result<usize, String> = if c.rank() == 1 {
                Err("pseudopotential missing on rank 1".into())
            } else {
                Ok(c.rank())
            };
            agree_on(&c, local).map_err(|e| (e.error, e.rank, e.failed))
        });
        for r in out {
            assert_eq!(r, Err(("pseudopotential missing on rank 1".into(), 1, 1)));
        }
        let ok = Threads::run(2, |c| agree_on::<_, String>(&c, Ok(c.rank())).is_ok());
        assert_eq!(ok, vec![true, true]);
    }

    #[test]
    fn deal_balances_by_cost_and_is_deterministic() {
        let owner = deal_by_cost(&[5.0, 1.0, 4.0, 2.0, 3.0], 2);
        let load = |g: usize| -> f64 {
            [5.0, 1.0, 4.0, 2.0, 3.0]
                .iter()
                .zip(&owner)
                .filter(|(_, o)| **o == g)
                .map(|(c, _)| c)
                .sum()
        };
        assert_eq!(load(0) + load(1), 15.0);
        assert!((load(0) - load(1)).abs() <= 1.0, "{owner:?}");
        assert_eq!(owner, deal_by_cost(&[5.0, 1.0, 4.0, 2.0, 3.0], 2));
        assert_eq!(deal_by_cost(&[1.0, 1.0], 1), vec![0, 0]);
    }
}
