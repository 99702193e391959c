//! `DistFft`: the 3-D FFT between a G-sphere and the real-space grid, distributed over the
//! ranks of a G-vector group, for a block of `nb` bands at a time.
//!
//! Contract:
//! - [`DistFft::new`] is collective on the group. Every rank passes the same global list of
//!   Miller indices (the sphere of one k-point); the sticks are dealt by
//!   [`StickDistribution`] and rank `r` holds the coefficients of [`DistFft::local_g`] (indices
//!   into the global list, in global order). The decomposition ([`Decomposition`]) and the
//!   all-to-all-v algorithm of the transposes are chosen in [`DistFftOptions`].
//! - Real space on each rank is laid out as its [`RealLayout`] ([`DistFft::layout`]).
//! - [`DistFft::backward`] computes `f(r) = sum_G f(G) e^{iG.r}` and [`DistFft::forward`]
//!   `f(G) = (1/N) sum_r f(r) e^{-iG.r}` on the sphere, exactly like the serial
//!   [`Fft3d`](crate::Fft3d) restricted to the sphere. Both take `nb` bands, band after band
//!   (`nb * n_g_local` coefficients, `nb * layout().len()` real-space values); all `nb` bands
//!   share each transpose (band blocking). Both are collective, with the same `nb` everywhere.
//! - The steps: z-FFTs of the local sticks; transpose 1 to y-pencils (among the `p2` ranks of
//!   one sub: the x-planes that hold sticks are shared out to the `p1` subs in contiguous
//!   blocks of about equal FFT work, and each plane's sticks are dealt among its sub's ranks;
//!   for a slab the sub is the whole group); y-FFTs of the sub's x-planes; transpose 2 (the
//!   `p1` ranks of a slab; none for slab) to x-pencils; x-FFTs. The forward transform runs
//!   them in reverse and overwrites `real`.
//! - Buffers are kept in the plan and grow to the largest band block seen, until
//!   [`DistFft::release_buffers`].

use crate::decomposition::{block_range, Decomposition, ProcessGrid};
use crate::fft3d::lines;
use crate::grid::FftGrid;
use crate::real_layout::RealLayout;
use crate::stick_deal::StickDistribution;
use crate::transpose::{PlaneTranspose, StickTranspose};
use crate::C64;
use planewave_comm::{
    AlltoallvAlgorithm, AlltoallvStrategy, CommClass, Communicator, Operation, Stats,
};
use rayon::prelude::*;
use rustfft::{Fft, FftDirection, FftPlanner};
use std::ops::Range;
use std::sync::Arc;
use std::time::Instant;

const ZERO: C64 = C64 { re: 0.0, im: 0.0 };

/// Choices for a distributed transform.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DistFftOptions {
    /// Slab, pencil or automatic.
    pub decomposition: Decomposition,
    /// The all-to-all-v algorithm of both transposes.
    pub alltoallv: AlltoallvAlgorithm,
    /// Keep every stick on the rank of its mirror `(-i0, -i1)` (for a sphere symmetric under
    /// G -> -G whose coefficients pair up, as in the Γ-point real path; slab only).
    pub pair_mirror_sticks: bool,
}

impl Default for DistFftOptions {
    fn default() -> Self {
        Self {
            decomposition: Decomposition::Auto,
            alltoallv: AlltoallvAlgorithm::Native,
            pair_mirror_sticks: false,
        }
    }
}

/// Seconds spent in each phase since the last [`DistFft::reset_timings`].
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct PhaseTimes {
    /// 1-D FFTs, scatter and gather of coefficients.
    pub fft: f64,
    /// Packing send buffers.
    pub pack: f64,
    /// The all-to-all-v calls.
    pub exchange: f64,
    /// Unpacking receive buffers (including the zeroing of holes).
    pub unpack: f64,
}

/// Plan-owned buffers. Transpose 1 is double-buffered so that one band block's exchange can
/// overlap the next (backward: `send`) or previous (forward: `recv`) block's local work.
#[derive(Default)]
struct Buffers {
    sticks: Vec<C64>,
    ypl: Vec<C64>,
    send: [Vec<C64>; 2],
    recv: [Vec<C64>; 2],
    send2: Vec<C64>,
    recv2: Vec<C64>,
}

fn grow(v: &mut Vec<C64>, n: usize) -> &mut [C64] {
    if v.len() < n {
        v.resize(n, ZERO);
    }
    &mut v[..n]
}

fn scaled(counts: &[usize], nb: usize) -> Vec<usize> {
    counts.iter().map(|c| c * nb).collect()
}

/// Contiguous shares of the `active` planes for `p1` subs, balanced by the FFT work a plane
/// brings to its sub: its sticks' z-transforms and its y-transforms (each plane goes to the
/// sub whose share of the cumulative work holds the plane's midpoint).
fn share_planes(
    active: &[usize],
    per_plane: &[usize],
    dims: [usize; 3],
    p1: usize,
) -> Vec<Vec<usize>> {
    let [_, n1, n2] = dims;
    let lg = |n: usize| (n as f64).log2().max(1.0);
    let work = |i0: usize| per_plane[i0] as f64 * n2 as f64 * lg(n2) + (n1 * n2) as f64 * lg(n1);
    let total: f64 = active.iter().map(|&i0| work(i0)).sum();
    let mut out = vec![Vec::new(); p1];
    let mut acc = 0.0;
    for &i0 in active {
        let w = work(i0);
        let a = ((acc + 0.5 * w) / total * p1 as f64) as usize;
        out[a.min(p1 - 1)].push(i0);
        acc += w;
    }
    out
}

/// A distributed sphere ↔ grid transform plan for one rank of a G-vector group.
pub struct DistFft {
    grid: FftGrid,
    pg: ProcessGrid,
    rank: usize,
    sticks: StickDistribution,
    local_g: Vec<usize>,
    /// Position `k * n2 + i2` in the stick buffer of each local coefficient.
    g_map: Vec<usize>,
    n_sticks: usize,
    layout: RealLayout,
    ypencil_len: usize,
    t1: StickTranspose,
    t2: PlaneTranspose,
    strat1: Box<dyn AlltoallvStrategy>,
    strat2: Option<Box<dyn AlltoallvStrategy>>,
    fwd: [Arc<dyn Fft<f64>>; 3],
    inv: [Arc<dyn Fft<f64>>; 3],
    bufs: Buffers,
    times: PhaseTimes,
    /// The group's statistics, whose calls the transforms file as transposes.
    stats: Arc<Stats>,
}

impl std::fmt::Debug for DistFft {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DistFft")
            .field("grid", &self.grid)
            .field("process_grid", &self.pg)
            .field("rank", &self.rank)
            .field("layout", &self.layout)
            .finish()
    }
}

impl DistFft {
    /// Plan the transform of the sphere `millers` on `grid` over `comm` (collective).
    pub fn new(
        comm: Arc<dyn Communicator>,
        grid: FftGrid,
        millers: &[[i32; 3]],
        options: &DistFftOptions,
    ) -> Result<Self, String> {
        let dims = grid.dims;
        let [n0, n1, n2] = dims;
        let size = comm.size();
        let rank = comm.rank();
        let pg = options.decomposition.resolve(size, dims)?;
        let (sub, slab) = pg.coords(rank);
        let per_plane = StickDistribution::sticks_per_plane(dims, millers);
        let active: Vec<usize> = (0..n0).filter(|&i0| per_plane[i0] > 0).collect();
        let sub_planes = share_planes(&active, &per_plane, dims, pg.p1);
        let mut plane_sub = vec![0; n0];
        for (a, planes) in sub_planes.iter().enumerate() {
            for &i0 in planes {
                plane_sub[i0] = a;
            }
        }
        // The sticks of a sub's planes are dealt among the sub's ranks (ordered by slab), so
        // transpose 1 runs among those `p2` ranks only.
        let subs: Vec<Vec<usize>> = (0..pg.p1)
            .map(|a| (0..pg.p2).map(|b| pg.rank_of(a, b)).collect())
            .collect();
        let sticks = if options.pair_mirror_sticks {
            if !pg.is_slab() {
                return Err(format!(
                    "planewave-fft: mirror-paired sticks need a slab decomposition, not {} x {}",
                    pg.p1, pg.p2
                ));
            }
            StickDistribution::paired(dims, millers, size)
        } else {
            StickDistribution::in_groups(dims, millers, &subs, &plane_sub)
        };
        let y_all: Vec<_> = (0..pg.p1).map(|a| block_range(n1, pg.p1, a)).collect();
        let z = block_range(n2, pg.p2, slab);
        let layout = RealLayout {
            dims,
            z: z.clone(),
            y: y_all[sub].clone(),
        };
        let t1 = StickTranspose::new(&sticks, pg, rank, &sub_planes, &subs[sub]);
        let ypencil_len = z.len() * sub_planes[sub].len() * n1;
        let t2 = PlaneTranspose::new(dims, z.len(), sub_planes, y_all, sub);

        let mine = sticks.sticks_of(rank);
        let mut local_pos = vec![usize::MAX; sticks.n_sticks()];
        for (k, &s) in mine.iter().enumerate() {
            local_pos[s] = k;
        }
        let local_g = sticks.local_g(rank);
        let g_map = local_g
            .iter()
            .map(|&g| {
                let (s, i2) = sticks.g_position(g);
                local_pos[s] * n2 + i2
            })
            .collect();
        let n_sticks = mine.len();

        let (strat1, strat2) = if pg.is_slab() {
            (options.alltoallv.build(comm.clone()), None)
        } else {
            let of_sub = comm
                .split(Some(sub as u32), slab as i64)
                .ok_or("planewave-fft: split into sub groups failed")?;
            let of_slab = comm
                .split(Some(slab as u32), sub as i64)
                .ok_or("planewave-fft: split into slab groups failed")?;
            (
                options.alltoallv.build(of_sub),
                Some(options.alltoallv.build(of_slab)),
            )
        };
        let mut planner = FftPlanner::<f64>::new();
        let fwd = [n0, n1, n2].map(|n| planner.plan_fft(n, FftDirection::Forward));
        let inv = [n0, n1, n2].map(|n| planner.plan_fft(n, FftDirection::Inverse));
        Ok(Self {
            grid,
            pg,
            rank,
            sticks,
            local_g,
            g_map,
            n_sticks,
            layout,
            ypencil_len,
            t1,
            t2,
            strat1,
            strat2,
            fwd,
            inv,
            bufs: Buffers::default(),
            times: PhaseTimes::default(),
            stats: comm.stats(),
        })
    }

    /// The global grid.
    pub fn grid(&self) -> FftGrid {
        self.grid
    }
    /// The process grid in use (`p1 == 1`: slab).
    pub fn process_grid(&self) -> ProcessGrid {
        self.pg
    }
    /// The real-space points of this rank and their order.
    pub fn layout(&self) -> &RealLayout {
        &self.layout
    }
    /// Indices into the global Miller list of this rank's coefficients, in local order.
    pub fn local_g(&self) -> &[usize] {
        &self.local_g
    }
    /// Number of coefficients per band on this rank.
    pub fn n_g_local(&self) -> usize {
        self.local_g.len()
    }
    /// Number of real-space points per band on this rank.
    pub fn n_real_local(&self) -> usize {
        self.layout.len()
    }
    /// How the sticks are dealt.
    pub fn sticks(&self) -> &StickDistribution {
        &self.sticks
    }
    /// The all-to-all-v algorithm of the transposes.
    pub fn alltoallv(&self) -> AlltoallvAlgorithm {
        self.strat1.algorithm()
    }
    /// Time per phase so far.
    pub fn timings(&self) -> PhaseTimes {
        self.times
    }
    /// Restart the phase timers.
    pub fn reset_timings(&mut self) {
        self.times = PhaseTimes::default();
    }

    /// Free the work buffers; the next transform grows them again. For a plan used a few
    /// times per SCF step (the density's), whose buffers would otherwise sit through the
    /// eigensolver's memory peak.
    pub fn release_buffers(&mut self) {
        self.bufs = Buffers::default();
    }

    /// Backward transform of `nb` bands: `coeffs` (`nb * n_g_local()`) to `real`
    /// (`nb * n_real_local()`, fully overwritten), all `nb` in one exchange. Collective.
    pub fn backward(&mut self, coeffs: &[C64], nb: usize, real: &mut [C64]) {
        self.backward_bands(coeffs, nb, nb.max(1), real)
    }

    /// Backward transform of `nbands` bands in blocks of `block` (the last may be shorter):
    /// while one block's transpose 1 is in flight, the next block's sticks are scattered,
    /// z-transformed and packed (real overlap with the non-blocking all-to-all-v strategy;
    /// the others do that work first). Same result as [`DistFft::backward`]. Collective,
    /// with the same `nbands` and `block` everywhere.
    pub fn backward_bands(
        &mut self,
        coeffs: &[C64],
        nbands: usize,
        block: usize,
        real: &mut [C64],
    ) {
        let (ng, nr) = (self.local_g.len(), self.layout.len());
        let blocks = self.band_blocks("backward", nbands, block, coeffs.len(), real.len());
        let _op = self.stats.operation(Operation::Transpose);
        let (st, strat1, strat2, bufs, times) = self.split(true);
        let Buffers {
            sticks,
            ypl,
            send,
            recv,
            send2,
            recv2,
        } = bufs;
        let [send_a, send_b] = send;
        let recv = &mut recv[0];
        if let Some(b) = blocks.first() {
            st.sticks_out(
                &coeffs[b.start * ng..b.end * ng],
                b.len(),
                sticks,
                send_a,
                times,
            );
        }
        for (k, b) in blocks.iter().enumerate() {
            let nb = b.len();
            let sc = scaled(st.t1.backward_send_counts(), nb);
            let rc = scaled(st.t1.backward_recv_counts(), nb);
            let (cur, next) = if k % 2 == 0 {
                (&mut *send_a, &mut *send_b)
            } else {
                (&mut *send_b, &mut *send_a)
            };
            let work = |lt: &mut PhaseTimes| {
                if let Some(n) = blocks.get(k + 1) {
                    let c = &coeffs[n.start * ng..n.end * ng];
                    st.sticks_out(c, n.len(), sticks, next, lt);
                }
            };
            exchange_overlapped(strat1, cur, &sc, recv, &rc, work, times);
            let out = &mut real[b.start * nr..b.end * nr];
            st.planes_in(recv, nb, ypl, strat2, send2, recv2, out, times);
        }
    }

    /// Forward transform of `nb` bands with the `1/N` normalisation: `real` (overwritten) to
    /// `coeffs`. Collective.
    pub fn forward(&mut self, real: &mut [C64], nb: usize, coeffs: &mut [C64]) {
        let scale = 1.0 / self.grid.len() as f64;
        self.forward_bands_scaled(real, nb, nb.max(1), scale, coeffs)
    }

    /// Forward transform of `nb` bands, coefficients multiplied by `scale` (1 for the
    /// unnormalised sum). `real` is overwritten. Collective.
    pub fn forward_scaled(&mut self, real: &mut [C64], nb: usize, scale: f64, coeffs: &mut [C64]) {
        self.forward_bands_scaled(real, nb, nb.max(1), scale, coeffs)
    }

    /// Forward transform of `nbands` bands in blocks of `block`, coefficients multiplied by
    /// `scale`: while one block's transpose 1 is in flight, the previous block's sticks are
    /// unpacked, z-transformed and gathered. Same result as [`DistFft::forward_scaled`].
    /// `real` is overwritten. Collective, with the same `nbands` and `block` everywhere.
    pub fn forward_bands_scaled(
        &mut self,
        real: &mut [C64],
        nbands: usize,
        block: usize,
        scale: f64,
        coeffs: &mut [C64],
    ) {
        let (ng, nr) = (self.local_g.len(), self.layout.len());
        let blocks = self.band_blocks("forward", nbands, block, coeffs.len(), real.len());
        let _op = self.stats.operation(Operation::Transpose);
        let (st, strat1, strat2, bufs, times) = self.split(false);
        let Buffers {
            sticks,
            ypl,
            send,
            recv,
            send2,
            recv2,
        } = bufs;
        let send = &mut send[0];
        let [recv_a, recv_b] = recv;
        for (k, b) in blocks.iter().enumerate() {
            let nb = b.len();
            st.planes_out(
                &mut real[b.start * nr..b.end * nr],
                nb,
                ypl,
                strat2,
                send2,
                recv2,
                send,
                times,
            );
            let sc = scaled(st.t1.backward_recv_counts(), nb);
            let rc = scaled(st.t1.backward_send_counts(), nb);
            let (cur, prev) = if k % 2 == 0 {
                (&mut *recv_a, &*recv_b)
            } else {
                (&mut *recv_b, &*recv_a)
            };
            let coeffs_ref = &mut *coeffs;
            let work = |lt: &mut PhaseTimes| {
                if let Some(p) = k.checked_sub(1).map(|j| &blocks[j]) {
                    let c = &mut coeffs_ref[p.start * ng..p.end * ng];
                    st.sticks_in(prev, p.len(), sticks, c, scale, lt);
                }
            };
            exchange_overlapped(strat1, send, &sc, cur, &rc, work, times);
        }
        if let Some(last) = blocks.last() {
            let held = if blocks.len() % 2 == 1 {
                &*recv_a
            } else {
                &*recv_b
            };
            let c = &mut coeffs[last.start * ng..last.end * ng];
            st.sticks_in(held, last.len(), sticks, c, scale, times);
        }
    }

    /// `0..nbands` cut into consecutive blocks of `block` bands (the last may be shorter),
    /// after checking the buffer lengths of a `what` transform of `nbands` bands.
    fn band_blocks(
        &self,
        what: &str,
        nbands: usize,
        block: usize,
        coeffs_len: usize,
        real_len: usize,
    ) -> Vec<Range<usize>> {
        assert!(block > 0, "DistFft::{what}: empty band block");
        let (ng, nr) = (self.local_g.len(), self.layout.len());
        assert_eq!(
            coeffs_len,
            nbands * ng,
            "DistFft::{what}: coefficient length"
        );
        assert_eq!(real_len, nbands * nr, "DistFft::{what}: real length");
        (0..nbands)
            .step_by(block)
            .map(|s| s..(s + block).min(nbands))
            .collect()
    }

    /// The read-only stage data (with the 1-D plans of one direction) and the mutable parts.
    #[allow(clippy::type_complexity)]
    fn split(
        &mut self,
        inverse: bool,
    ) -> (
        Stages<'_>,
        &(dyn AlltoallvStrategy + 'static),
        Option<&(dyn AlltoallvStrategy + 'static)>,
        &mut Buffers,
        &mut PhaseTimes,
    ) {
        let Self {
            grid,
            t1,
            t2,
            strat1,
            strat2,
            bufs,
            times,
            g_map,
            n_sticks,
            ypencil_len,
            fwd,
            inv,
            ..
        } = self;
        let st = Stages {
            dims: grid.dims,
            t1,
            t2,
            g_map,
            n_sticks: *n_sticks,
            ypencil_len: *ypencil_len,
            plans: if inverse { inv } else { fwd },
        };
        (st, &**strat1, strat2.as_deref(), bufs, times)
    }
}

/// Transpose 1 of one band block, `send` into `recv` (grown to fit), while `work` runs: the
/// phases `work` books are its own, the rest of the call's time is exchange.
fn exchange_overlapped(
    strat: &(dyn AlltoallvStrategy + 'static),
    send: &[C64],
    sc: &[usize],
    recv: &mut Vec<C64>,
    rc: &[usize],
    work: impl FnOnce(&mut PhaseTimes),
    times: &mut PhaseTimes,
) {
    let mut local = PhaseTimes::default();
    let mut work = Some(work);
    let mut overlap = || {
        if let Some(w) = work.take() {
            w(&mut local)
        }
    };
    let t = Instant::now();
    let r = grow(recv, rc.iter().sum());
    let s = &send[..sc.iter().sum()];
    strat.alltoallv_overlap_into(s, sc, r, rc, &mut overlap, CommClass::GVector);
    times.exchange += t.elapsed().as_secs_f64() - local.total();
    times.add(&local);
}

impl PhaseTimes {
    fn total(&self) -> f64 {
        self.fft + self.pack + self.exchange + self.unpack
    }
    fn add(&mut self, o: &PhaseTimes) {
        self.fft += o.fft;
        self.pack += o.pack;
        self.exchange += o.exchange;
        self.unpack += o.unpack;
    }
}

/// What the stages of one direction read from the plan: index maps and 1-D plans.
struct Stages<'a> {
    dims: [usize; 3],
    t1: &'a StickTranspose,
    t2: &'a PlaneTranspose,
    g_map: &'a [usize],
    n_sticks: usize,
    ypencil_len: usize,
    plans: &'a [Arc<dyn Fft<f64>>; 3],
}

impl Stages<'_> {
    /// Backward, up to transpose 1: `nb` bands of coefficients onto their sticks, z-FFTs,
    /// packed into `send`.
    fn sticks_out(
        &self,
        coeffs: &[C64],
        nb: usize,
        sticks: &mut Vec<C64>,
        send: &mut Vec<C64>,
        times: &mut PhaseTimes,
    ) {
        let n2 = self.dims[2];
        let ng = self.g_map.len();
        let t = Instant::now();
        let sl = self.n_sticks * n2;
        let sticks = grow(sticks, nb * sl);
        if sl > 0 {
            sticks
                .par_chunks_mut(sl)
                .zip(coeffs.par_chunks(ng.max(1)))
                .for_each(|(col, c)| {
                    col.fill(ZERO);
                    for (&m, &v) in self.g_map.iter().zip(c) {
                        col[m] = v;
                    }
                });
        }
        lines(sticks, n2, &self.plans[2]);
        times.fft += t.elapsed().as_secs_f64();
        let t = Instant::now();
        let n = self.t1.backward_send_counts().iter().sum::<usize>() * nb;
        self.t1.pack_sticks(sticks, nb, grow(send, n));
        times.pack += t.elapsed().as_secs_f64();
    }

    /// Backward, after transpose 1: y-pencils from `recv`, y-FFTs, transpose 2 (pencil),
    /// x-FFTs into `real`.
    #[allow(clippy::too_many_arguments)]
    fn planes_in(
        &self,
        recv: &[C64],
        nb: usize,
        ypl: &mut Vec<C64>,
        strat2: Option<&(dyn AlltoallvStrategy + 'static)>,
        send2: &mut Vec<C64>,
        recv2: &mut Vec<C64>,
        real: &mut [C64],
        times: &mut PhaseTimes,
    ) {
        let [n0, n1, _] = self.dims;
        let t = Instant::now();
        let ypl = grow(ypl, nb * self.ypencil_len);
        self.t1.unpack_to_planes(recv, nb, ypl);
        times.unpack += t.elapsed().as_secs_f64();
        let t = Instant::now();
        lines(ypl, n1, &self.plans[1]);
        times.fft += t.elapsed().as_secs_f64();
        match strat2 {
            None => {
                let t = Instant::now();
                self.t2.unpack_to_real(ypl, nb, real);
                times.unpack += t.elapsed().as_secs_f64();
            }
            Some(s2) => {
                let t = Instant::now();
                let sc = scaled(self.t2.backward_send_counts(), nb);
                let rc = scaled(self.t2.backward_recv_counts(), nb);
                let send = grow(send2, sc.iter().sum());
                self.t2.pack_planes(ypl, nb, send);
                times.pack += t.elapsed().as_secs_f64();
                let t = Instant::now();
                let recv = grow(recv2, rc.iter().sum());
                s2.alltoallv_into(send, &sc, recv, &rc, CommClass::GVector);
                times.exchange += t.elapsed().as_secs_f64();
                let t = Instant::now();
                self.t2.unpack_to_real(recv, nb, real);
                times.unpack += t.elapsed().as_secs_f64();
            }
        }
        let t = Instant::now();
        lines(real, n0, &self.plans[0]);
        times.fft += t.elapsed().as_secs_f64();
    }

    /// Forward, up to transpose 1: x-FFTs of `real` (overwritten), transpose 2 (pencil),
    /// y-FFTs, packed into `send`.
    #[allow(clippy::too_many_arguments)]
    fn planes_out(
        &self,
        real: &mut [C64],
        nb: usize,
        ypl: &mut Vec<C64>,
        strat2: Option<&(dyn AlltoallvStrategy + 'static)>,
        send2: &mut Vec<C64>,
        recv2: &mut Vec<C64>,
        send: &mut Vec<C64>,
        times: &mut PhaseTimes,
    ) {
        let [n0, n1, _] = self.dims;
        let t = Instant::now();
        lines(real, n0, &self.plans[0]);
        times.fft += t.elapsed().as_secs_f64();
        let ypl = grow(ypl, nb * self.ypencil_len);
        match strat2 {
            None => {
                let t = Instant::now();
                self.t2.pack_real(real, nb, ypl);
                times.pack += t.elapsed().as_secs_f64();
            }
            Some(s2) => {
                let t = Instant::now();
                let sc = scaled(self.t2.backward_recv_counts(), nb);
                let rc = scaled(self.t2.backward_send_counts(), nb);
                let s = grow(send2, sc.iter().sum());
                self.t2.pack_real(real, nb, s);
                times.pack += t.elapsed().as_secs_f64();
                let t = Instant::now();
                let r = grow(recv2, rc.iter().sum());
                s2.alltoallv_into(s, &sc, r, &rc, CommClass::GVector);
                times.exchange += t.elapsed().as_secs_f64();
                let t = Instant::now();
                self.t2.unpack_to_planes(r, nb, ypl);
                times.unpack += t.elapsed().as_secs_f64();
            }
        }
        let t = Instant::now();
        lines(ypl, n1, &self.plans[1]);
        times.fft += t.elapsed().as_secs_f64();
        let t = Instant::now();
        let n = self.t1.backward_recv_counts().iter().sum::<usize>() * nb;
        self.t1.pack_planes(ypl, nb, grow(send, n));
        times.pack += t.elapsed().as_secs_f64();
    }

    /// Forward, after transpose 1: sticks from `recv`, z-FFTs, the sphere entries times
    /// `scale` into `coeffs`.
    fn sticks_in(
        &self,
        recv: &[C64],
        nb: usize,
        sticks: &mut Vec<C64>,
        coeffs: &mut [C64],
        scale: f64,
        times: &mut PhaseTimes,
    ) {
        let n2 = self.dims[2];
        let ng = self.g_map.len();
        let t = Instant::now();
        let sl = self.n_sticks * n2;
        let sticks = grow(sticks, nb * sl);
        self.t1.unpack_to_sticks(recv, nb, sticks);
        times.unpack += t.elapsed().as_secs_f64();
        let t = Instant::now();
        lines(sticks, n2, &self.plans[2]);
        if sl > 0 && ng > 0 {
            sticks
                .par_chunks(sl)
                .zip(coeffs.par_chunks_mut(ng))
                .for_each(|(col, c)| {
                    for (&m, v) in self.g_map.iter().zip(c.iter_mut()) {
                        *v = col[m] * scale;
                    }
                });
        }
        times.fft += t.elapsed().as_secs_f64();
    }
}
