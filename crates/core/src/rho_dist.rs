//! `RhoDist`: the density sphere and the FFT grid dealt over the ranks of a G-vector group.
//!
//! Contract:
//! - The sticks of the density sphere are dealt by [`DistFft`] (balanced by count) with the
//!   decomposition of the k-points' transforms, so a rank's real-space points (its slab or
//!   pencil bundle, [`RealLayout`]) are the same for densities, potentials and band
//!   transforms: a potential is applied and a density added where they lie, with no exchange.
//!   [`RhoDist::new`] refuses a layout that differs.
//! - The per-G fields of the density sphere in [`crate::basis::Basis`] (Miller indices, G,
//!   |G|², shells) hold the local entries, in the transform's local order; densities and
//!   potentials are vectors of local coefficients and local grid values.
//! - Sums over the sphere or the grid (energies, forces, stress, inner products) are local sums
//!   plus [`RhoDist::sum`] over the group (class G).
//! - The transform's work buffers are freed after each call: densities and potentials are
//!   transformed a few times per SCF step, and the buffers (three density fields' worth)
//!   would otherwise add to the eigensolver's memory peak.
//! - What needs the whole sphere (the symmetriser's orbits, carrying a density to another
//!   basis by Miller index) goes through [`RhoDist::gather`]: an all-gather of the
//!   coefficients, in the global order of [`RhoDist::global_millers`].

use num_complex::Complex64;
use planewave_comm::{CommClass, CommExt, Communicator, Element, Operation};
use planewave_fft::{DistFft, DistFftOptions, FftGrid, RealLayout};
use std::sync::{Arc, Mutex};

/// The density sphere and grid on the ranks of one G-vector group.
pub struct RhoDist {
    comm: Arc<dyn Communicator>,
    fft: Mutex<DistFft>,
    /// The whole sphere's Miller indices, in the global order.
    global_millers: Vec<[i32; 3]>,
    /// For every rank of the group, the global indices of its entries in its local order.
    local_g_of: Vec<Vec<usize>>,
    /// This rank's real-space points.
    layout: RealLayout,
    /// Keep the transforms' work buffers from one to the next ([`RhoDist::keep_buffers`]).
    keep: std::sync::atomic::AtomicBool,
}

impl std::fmt::Debug for RhoDist {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RhoDist")
            .field("ranks", &self.comm.size())
            .field("local_g", &self.local_g().len())
            .field("global_g", &self.global_millers.len())
            .finish()
    }
}

impl RhoDist {
    /// Deal the density sphere `millers` (global order) on `grid` over `comm` (collective),
    /// with the decomposition of `options`; the real-space points must be `expected` (the
    /// k-points' layout) when given.
    pub fn new(
        comm: Arc<dyn Communicator>,
        grid: FftGrid,
        millers: Vec<[i32; 3]>,
        options: &DistFftOptions,
        expected: Option<&RealLayout>,
    ) -> Result<Self, String> {
        // On a slab each stick sits with its mirror, so two real fields can share a transform
        // (see crate::rho_grid); the real-space layout does not depend on the stick deal.
        let mut options = *options;
        options.pair_mirror_sticks = options
            .decomposition
            .resolve(comm.size(), grid.dims)
            .is_ok_and(|pg| pg.is_slab());
        let fft = DistFft::new(comm.clone(), grid, &millers, &options)?;
        if let Some(e) = expected {
            if fft.layout() != e {
                return Err(format!(
                    "planewave: the density grid's real-space points ({:?}) differ from the bands' ({e:?})",
                    fft.layout()
                ));
            }
        }
        let local_g_of = (0..comm.size()).map(|r| fft.sticks().local_g(r)).collect();
        let layout = fft.layout().clone();
        Ok(Self {
            layout,
            comm,
            fft: Mutex::new(fft),
            global_millers: millers,
            local_g_of,
            keep: std::sync::atomic::AtomicBool::new(false),
        })
    }

    /// Global indices (into [`Self::global_millers`]) of this rank's entries, in local order.
    pub fn local_g(&self) -> &[usize] {
        &self.local_g_of[self.comm.rank()]
    }

    /// The whole sphere's Miller indices, in the global order.
    pub fn global_millers(&self) -> &[[i32; 3]] {
        &self.global_millers
    }

    /// This rank's real-space points.
    pub fn layout(&self) -> &RealLayout {
        &self.layout
    }

    /// Whether `flag` holds on every rank of the group (for choices that steer collective
    /// calls, which every rank must make alike). Collective.
    pub fn on_every_rank(&self, flag: bool) -> bool {
        let mut n = [u64::from(flag)];
        self.sum(&mut n);
        n[0] == self.comm.size() as u64
    }

    /// Complete a sum over the sphere or the grid: each rank passes its partial sums, all get
    /// the total. Collective.
    pub fn sum<E: Element>(&self, data: &mut [E]) {
        let _op = self.comm.operation(Operation::Density);
        self.comm.allreduce_sum(data, CommClass::GVector);
    }

    /// Values at this rank's points of a field given by its local sphere coefficients.
    /// Collective.
    pub fn backward(&self, field_g: &[Complex64]) -> Vec<Complex64> {
        let mut fft = self.lock();
        let mut real = vec![Complex64::new(0.0, 0.0); fft.n_real_local()];
        fft.backward(field_g, 1, &mut real);
        self.release_unless_kept(&mut fft);
        real
    }

    /// Local sphere coefficients (`f(G) = (1/N) sum_r f(r) e^{-iGr}`) of a field given at
    /// this rank's points. Collective.
    pub fn forward(&self, mut field_r: Vec<Complex64>) -> Vec<Complex64> {
        let mut fft = self.lock();
        let mut out = vec![Complex64::new(0.0, 0.0); fft.n_g_local()];
        fft.forward(&mut field_r, 1, &mut out);
        self.release_unless_kept(&mut fft);
        out
    }

    /// Every field (values at this rank's points) replaced by `FFT^-1[kernel FFT[field]]` over
    /// the sphere (`kernel` on the local entries): the fields go through the transforms one
    /// exchange each, the next field's local work overlapping the current exchange. One
    /// field per exchange measured fastest: si2_pbe0_sg15 on a G-vector group of 2 (one thread
    /// per rank), exchange operators 6.6 s against 7.1 s for separate transforms and 9.0 /
    /// 10.2 s for 2 / all fields per exchange. Collective, with the same number of fields
    /// everywhere.
    pub fn convolve(&self, fields: &mut [Vec<Complex64>], kernel: &[f64]) {
        let nf = fields.len();
        let mut fft = self.lock();
        let (nr, ng) = (fft.n_real_local(), fft.n_g_local());
        let mut real: Vec<Complex64> = fields.concat();
        let mut coeffs = vec![Complex64::new(0.0, 0.0); nf * ng];
        let scale = 1.0 / fft.grid().len() as f64;
        fft.forward_bands_scaled(&mut real, nf, 1, scale, &mut coeffs);
        for c in coeffs.chunks_mut(ng.max(1)) {
            c.iter_mut().zip(kernel).for_each(|(z, v)| *z *= v);
        }
        fft.backward_bands(&coeffs, nf, 1, &mut real);
        self.release_unless_kept(&mut fft);
        for (f, r) in fields.iter_mut().zip(real.chunks(nr.max(1))) {
            f.copy_from_slice(r);
        }
    }

    /// The whole sphere (global order) on every rank from each rank's local coefficients.
    /// Collective.
    pub fn gather(&self, local: &[Complex64]) -> Vec<Complex64> {
        let counts: Vec<usize> = self.local_g_of.iter().map(Vec::len).collect();
        let mut all = vec![Complex64::new(0.0, 0.0); counts.iter().sum()];
        let (send, recv) = (Complex64::slice(local), Complex64::slice_mut(&mut all));
        let _op = self.comm.operation(Operation::Density);
        self.comm
            .allgatherv_raw(send, recv, &counts, CommClass::GVector);
        let mut out = vec![Complex64::new(0.0, 0.0); self.global_millers.len()];
        for (&g, v) in self.local_g_of.iter().flatten().zip(all) {
            out[g] = v;
        }
        out
    }

    /// This rank's entries of a whole-sphere vector (global order).
    pub fn local_part<T: Copy>(&self, global: &[T]) -> Vec<T> {
        self.local_g().iter().map(|&g| global[g]).collect()
    }

    /// Keep the transforms' work buffers from one to the next (those of a convolution grow to
    /// its fields, as many as the occupied orbitals paired at once), for runs whose work is
    /// on the grid (a molecule in a box: dozens of transforms per SCF iteration, each
    /// of whose fresh buffers costs its page faults; water PBE0 on a G-vector group of 2 spent
    /// a third of its time in them). By default they are freed after each use, so that they
    /// do not sit through the eigensolver's memory peak where the bands dominate.
    pub fn keep_buffers(&self) {
        self.keep.store(true, std::sync::atomic::Ordering::Relaxed);
    }

    fn release_unless_kept(&self, fft: &mut DistFft) {
        if !self.keep.load(std::sync::atomic::Ordering::Relaxed) {
            fft.release_buffers();
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, DistFft> {
        self.fft.lock().unwrap_or_else(|e| e.into_inner())
    }
}
