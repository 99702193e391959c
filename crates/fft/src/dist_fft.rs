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
//! - The steps: z-FFTs of the local sticks; transpose 1 (all ranks) to y-pencils; y-FFTs of
//!   the x-planes that hold sticks; transpose 2 (the `p1` ranks of a slab; none for slab) to
//!   x-pencils; x-FFTs. The forward transform runs them in reverse and overwrites `real`.
//! - Buffers are kept in the plan and grow to the largest band block seen.

use crate::decomposition::{block_range, Decomposition, ProcessGrid};
use crate::fft3d::lines;
use crate::grid::FftGrid;
use crate::real_layout::RealLayout;
use crate::stick_deal::StickDistribution;
use crate::transpose::{PlaneTranspose, StickTranspose};
use crate::C64;
use planewave_comm::{AlltoallvAlgorithm, AlltoallvStrategy, CommClass, Communicator};
use rayon::prelude::*;
use rustfft::{Fft, FftDirection, FftPlanner};
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
}

impl Default for DistFftOptions {
    fn default() -> Self {
        Self {
            decomposition: Decomposition::Auto,
            alltoallv: AlltoallvAlgorithm::Native,
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

#[derive(Default)]
struct Buffers {
    sticks: Vec<C64>,
    ypl: Vec<C64>,
    send: Vec<C64>,
    recv: Vec<C64>,
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
        let sticks = StickDistribution::new(dims, millers, size);
        let active = sticks.active_planes();
        let sub_planes: Vec<Vec<usize>> = (0..pg.p1)
            .map(|a| active[block_range(active.len(), pg.p1, a)].to_vec())
            .collect();
        let y_all: Vec<_> = (0..pg.p1).map(|a| block_range(n1, pg.p1, a)).collect();
        let z = block_range(n2, pg.p2, slab);
        let layout = RealLayout {
            dims,
            z: z.clone(),
            y: y_all[sub].clone(),
        };
        let t1 = StickTranspose::new(&sticks, pg, rank, &sub_planes);
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

        let strat1 = options.alltoallv.build(comm.clone());
        let strat2 = if pg.is_slab() {
            None
        } else {
            let sc = comm
                .split(Some(slab as u32), sub as i64)
                .ok_or("planewave-fft: split into slab groups failed")?;
            Some(options.alltoallv.build(sc))
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

    /// Backward transform of `nb` bands: `coeffs` (`nb * n_g_local()`) to `real`
    /// (`nb * n_real_local()`, fully overwritten). Collective.
    pub fn backward(&mut self, coeffs: &[C64], nb: usize, real: &mut [C64]) {
        let ng = self.local_g.len();
        assert_eq!(
            coeffs.len(),
            nb * ng,
            "DistFft::backward: coefficient length"
        );
        assert_eq!(
            real.len(),
            nb * self.layout.len(),
            "DistFft::backward: real length"
        );
        let [n0, n1, n2] = self.grid.dims;
        let Self {
            t1,
            t2,
            strat1,
            strat2,
            bufs,
            times,
            g_map,
            n_sticks,
            ypencil_len,
            inv,
            ..
        } = self;
        let t = Instant::now();
        let sl = *n_sticks * n2;
        let sticks = grow(&mut bufs.sticks, nb * sl);
        if sl > 0 {
            sticks
                .par_chunks_mut(sl)
                .zip(coeffs.par_chunks(ng.max(1)))
                .for_each(|(col, c)| {
                    col.fill(ZERO);
                    for (&m, &v) in g_map.iter().zip(c) {
                        col[m] = v;
                    }
                });
        }
        lines(sticks, n2, &inv[2]);
        times.fft += t.elapsed().as_secs_f64();

        let t = Instant::now();
        let sc = scaled(t1.backward_send_counts(), nb);
        let rc = scaled(t1.backward_recv_counts(), nb);
        let send = grow(&mut bufs.send, sc.iter().sum());
        t1.pack_sticks(sticks, nb, send);
        times.pack += t.elapsed().as_secs_f64();
        let t = Instant::now();
        let recv = grow(&mut bufs.recv, rc.iter().sum());
        strat1.alltoallv_into(send, &sc, recv, &rc, CommClass::GVector);
        times.exchange += t.elapsed().as_secs_f64();
        let t = Instant::now();
        let ypl = grow(&mut bufs.ypl, nb * *ypencil_len);
        t1.unpack_to_planes(recv, nb, ypl);
        times.unpack += t.elapsed().as_secs_f64();

        let t = Instant::now();
        lines(ypl, n1, &inv[1]);
        times.fft += t.elapsed().as_secs_f64();

        match strat2 {
            None => {
                let t = Instant::now();
                t2.unpack_to_real(ypl, nb, real);
                times.unpack += t.elapsed().as_secs_f64();
            }
            Some(s2) => {
                let t = Instant::now();
                let sc = scaled(t2.backward_send_counts(), nb);
                let rc = scaled(t2.backward_recv_counts(), nb);
                let send = grow(&mut bufs.send, sc.iter().sum());
                t2.pack_planes(ypl, nb, send);
                times.pack += t.elapsed().as_secs_f64();
                let t = Instant::now();
                let recv = grow(&mut bufs.recv, rc.iter().sum());
                s2.alltoallv_into(send, &sc, recv, &rc, CommClass::GVector);
                times.exchange += t.elapsed().as_secs_f64();
                let t = Instant::now();
                t2.unpack_to_real(recv, nb, real);
                times.unpack += t.elapsed().as_secs_f64();
            }
        }
        let t = Instant::now();
        lines(real, n0, &inv[0]);
        times.fft += t.elapsed().as_secs_f64();
    }

    /// Forward transform of `nb` bands with the `1/N` normalisation: `real` (overwritten) to
    /// `coeffs`. Collective.
    pub fn forward(&mut self, real: &mut [C64], nb: usize, coeffs: &mut [C64]) {
        let scale = 1.0 / self.grid.len() as f64;
        self.forward_scaled(real, nb, scale, coeffs)
    }

    /// Forward transform of `nb` bands, coefficients multiplied by `scale` (1 for the
    /// unnormalised sum). `real` is overwritten. Collective.
    pub fn forward_scaled(&mut self, real: &mut [C64], nb: usize, scale: f64, coeffs: &mut [C64]) {
        let ng = self.local_g.len();
        assert_eq!(
            coeffs.len(),
            nb * ng,
            "DistFft::forward: coefficient length"
        );
        assert_eq!(
            real.len(),
            nb * self.layout.len(),
            "DistFft::forward: real length"
        );
        let [n0, n1, n2] = self.grid.dims;
        let Self {
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
            ..
        } = self;
        let t = Instant::now();
        lines(real, n0, &fwd[0]);
        times.fft += t.elapsed().as_secs_f64();

        let ypl = grow(&mut bufs.ypl, nb * *ypencil_len);
        match strat2 {
            None => {
                let t = Instant::now();
                t2.pack_real(real, nb, ypl);
                times.pack += t.elapsed().as_secs_f64();
            }
            Some(s2) => {
                let t = Instant::now();
                let sc = scaled(t2.backward_recv_counts(), nb);
                let rc = scaled(t2.backward_send_counts(), nb);
                let send = grow(&mut bufs.send, sc.iter().sum());
                t2.pack_real(real, nb, send);
                times.pack += t.elapsed().as_secs_f64();
                let t = Instant::now();
                let recv = grow(&mut bufs.recv, rc.iter().sum());
                s2.alltoallv_into(send, &sc, recv, &rc, CommClass::GVector);
                times.exchange += t.elapsed().as_secs_f64();
                let t = Instant::now();
                t2.unpack_to_planes(recv, nb, ypl);
                times.unpack += t.elapsed().as_secs_f64();
            }
        }
        let t = Instant::now();
        lines(ypl, n1, &fwd[1]);
        times.fft += t.elapsed().as_secs_f64();

        let t = Instant::now();
        let sc = scaled(t1.backward_recv_counts(), nb);
        let rc = scaled(t1.backward_send_counts(), nb);
        let send = grow(&mut bufs.send, sc.iter().sum());
        t1.pack_planes(ypl, nb, send);
        times.pack += t.elapsed().as_secs_f64();
        let t = Instant::now();
        let recv = grow(&mut bufs.recv, rc.iter().sum());
        strat1.alltoallv_into(send, &sc, recv, &rc, CommClass::GVector);
        times.exchange += t.elapsed().as_secs_f64();
        let t = Instant::now();
        let sl = *n_sticks * n2;
        let sticks = grow(&mut bufs.sticks, nb * sl);
        t1.unpack_to_sticks(recv, nb, sticks);
        times.unpack += t.elapsed().as_secs_f64();

        let t = Instant::now();
        lines(sticks, n2, &fwd[2]);
        if sl > 0 && ng > 0 {
            sticks
                .par_chunks(sl)
                .zip(coeffs.par_chunks_mut(ng))
                .for_each(|(col, c)| {
                    for (&m, v) in g_map.iter().zip(c.iter_mut()) {
                        *v = col[m] * scale;
                    }
                });
        }
        times.fft += t.elapsed().as_secs_f64();
    }
}
