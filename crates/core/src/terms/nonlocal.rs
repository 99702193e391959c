//! Nonlocal pseudopotential (Kleinman–Bylander): V_nl = sum_ij |beta_i> D_ij <beta_j|.
//!
//! For each k the projectors of all atoms form one `npw x nproj` matrix
//! P[G, (atom, i, m)] = (1/sqrt(Omega)) (-i)^l Y_lm(k+G) beta_i(|k+G|) e^{-i(k+G).tau},
//! and D is block diagonal (same atom, same m, same l). A block of bands is applied with two
//! passes of GEMMs: V_nl Psi = P (D (P^H Psi)). P is never stored whole: each k keeps the
//! shapes of its species' projectors (everything but the phase) and the atoms' phases as
//! products of 1-D factors e^{-2 pi i (k_d + m_d) x_d}, and P is built in blocks of
//! `PROJECTOR_BLOCK` plane waves, each used for its GEMM and overwritten by the next (two
//! builds per application for P's memory: 61 MB on si64 Γ) — unless P takes at most
//! `STORED_PROJECTORS_MAX` bytes, when [`KProjectors::keep_whole`] builds it once and keeps it
//! while its guard lives: the SCF keeps the P of the k-point it is solving only (as QE keeps
//! one k-point's `vkb`), so a rank holds one P however many k-points it has.
//! In the Γ-real representation the blocks are converted row pair by row pair (the projectors
//! are real functions, so their coefficients have the +-G symmetry).
//! On a k-point dealt over a G-vector group the shapes hold the local rows: P^H psi is a local
//! GEMM plus one sum over the group per band block, so the work splits over G, never by atom.

use super::term::{Bands, Share, State, Term};
use crate::bands::{col_mut, column, BandScalar};
use crate::basis::{Basis, Kpoint};
use crate::model::Model;
use crate::operators::{Operator, ProjectorOperator};
use crate::overlap::{OverlapOperator, OverlapRoots};
use crate::special::real_ylm;
use num_complex::Complex64;
use planewave_comm::{CommClass, CommExt, Communicator, Operation};
use planewave_linalg::{matmul, Mat, MatMut, MatRef};
use rayon::prelude::*;
use std::sync::{Arc, Mutex, OnceLock, RwLock, RwLockReadGuard};

/// Plane waves per block of the projector matrix built at once (a block of si64's 320
/// projectors is 2.6 MB, in cache while its GEMM runs).
const PROJECTOR_BLOCK: usize = 512;

/// P of one k-point is kept whole up to this size (bytes on this rank) and built block by block
/// in every application above it: small cells keep the speed of one GEMM per pass (si8: 1 MiB
/// per k), large ones the memory (si64 Γ: 61 MB on one rank, 12 MB of phases instead).
pub const STORED_PROJECTORS_MAX: usize = 8 << 20;

/// Most bytes of partial projections the threads of one projection hold at once.
const PARTIALS_MAX: usize = 64 << 20;

/// The projectors of one k-point, compact (see the module doc).
pub struct KProjectors<T: BandScalar> {
    /// Per species: local plane waves x its projector functions (i, m),
    /// `(1/sqrt(Omega)) beta_i(|k+G|) Y_lm(k+G)`, and each column's `l`.
    shapes: Shapes,
    /// Per atom: its species and first column.
    atoms: Vec<(usize, usize)>,
    /// Local plane waves x atoms: `e^{-i(k+G).tau}`.
    phases: Mat<Complex64>,
    /// Whether the first local plane wave is G = 0 (Γ-real row layout).
    g0: bool,
    /// Number of projector functions (columns of P).
    nproj: usize,
    /// P itself while a [`KeptWhole`] guard lives (and P takes at most
    /// [`STORED_PROJECTORS_MAX`] bytes): applications then make no blocks.
    stored: RwLock<Option<Mat<T>>>,
    /// nproj x nproj coupling matrix (Ha): the bare D^0 of the files.
    pub d: Mat<T>,
    /// D^0 + ΔD, the coupling screened by the local potential (ultrasoft species,
    /// [`KProjectors::screen`]): what the operator applies once set.
    screened: RwLock<Option<Mat<T>>>,
    /// The ultrasoft overlap's q_ij as an nproj x nproj matrix (None: norm-conserving only).
    q: Option<Mat<T>>,
    /// `S^{±1/2}`'s small matrices, made on first use ([`crate::overlap`]).
    roots: OnceLock<OverlapRoots<T>>,
    /// The atom each projector column belongs to.
    pub atom_of_column: Vec<usize>,
    /// The G-vector group over which the rows of P are dealt (None: all rows local).
    group: Option<Arc<dyn Communicator>>,
    /// Block buffers given back after use ([`BlockBuffer`]), at most one per thread: the
    /// applications of one eigensolver call after the first allocate none (each was a fresh
    /// 2.6 MB of pages on si64 Γ); emptied when the k-point's solve ends.
    spare_blocks: Mutex<Vec<Mat<T>>>,
}

/// A block buffer of [`KProjectors`], lent from its spares and given back when dropped.
struct BlockBuffer<'a, T: BandScalar> {
    m: Option<Mat<T>>,
    spares: &'a Mutex<Vec<Mat<T>>>,
}

impl<T: BandScalar> std::ops::Deref for BlockBuffer<'_, T> {
    type Target = Mat<T>;
    fn deref(&self) -> &Mat<T> {
        self.m.as_ref().expect("lent until dropped")
    }
}

impl<T: BandScalar> std::ops::DerefMut for BlockBuffer<'_, T> {
    fn deref_mut(&mut self) -> &mut Mat<T> {
        self.m.as_mut().expect("lent until dropped")
    }
}

impl<T: BandScalar> Drop for BlockBuffer<'_, T> {
    fn drop(&mut self) {
        if let Some(m) = self.m.take() {
            let mut spares = self.spares.lock().unwrap_or_else(|e| e.into_inner());
            if spares.len() < rayon::current_num_threads() {
                spares.push(m);
            }
        }
    }
}

/// `e^{-i(k+G).tau}` of one atom as `e^{-2 pi i k.x}` times one factor per Miller index (one
/// `sincos` per index instead of one per plane wave).
pub(crate) struct AtomPhase {
    /// `e^{-2 pi i k.x}`.
    k_phase: Complex64,
    /// Per direction d, `e^{-2 pi i m x_d}` for `m = lowest[d]..`.
    factors: [Vec<Complex64>; 3],
    lowest: [i32; 3],
}

impl AtomPhase {
    pub(crate) fn new(x: [f64; 3], k: [f64; 3], millers: &[[i32; 3]]) -> Self {
        let two_pi = 2.0 * std::f64::consts::PI;
        let mut lowest = [0; 3];
        let factors = std::array::from_fn(|d| {
            let lo = millers.iter().map(|m| m[d]).min().unwrap_or(0);
            let hi = millers.iter().map(|m| m[d]).max().unwrap_or(0);
            lowest[d] = lo;
            (lo..=hi)
                .map(|m| Complex64::from_polar(1.0, -two_pi * m as f64 * x[d]))
                .collect()
        });
        let kx: f64 = (0..3).map(|d| k[d] * x[d]).sum();
        AtomPhase {
            k_phase: Complex64::from_polar(1.0, -two_pi * kx),
            factors,
            lowest,
        }
    }

    /// The phase of the plane wave with Miller indices `m`.
    pub(crate) fn of(&self, m: &[i32; 3]) -> Complex64 {
        let f = |d: usize| self.factors[d][(m[d] - self.lowest[d]) as usize];
        self.k_phase * f(0) * f(1) * f(2)
    }
}

impl<T: BandScalar> std::fmt::Debug for KProjectors<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("KProjectors")
            .field("plane_waves", &self.phases.nrows())
            .field("nproj", &self.nproj)
            .field("distributed", &self.group.is_some())
            .finish()
    }
}

/// Sum `partial` over `group` (class G), if the rows are dealt over one.
fn sum_over(group: &Option<Arc<dyn Communicator>>, partial: &mut [f64]) {
    if let Some(g) = group {
        let _op = g.operation(Operation::Overlap);
        g.allreduce_sum(partial, CommClass::GVector);
    }
}

/// Which projector functions [`species_shapes`] (and the direct [`projector_matrices`] of the
/// tests) build.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Part {
    /// The projectors themselves.
    Value,
    /// Their derivative with respect to a symmetric strain eps_ab at fixed fractional positions,
    /// leaving out the -delta_ab/2 of the 1/sqrt(Omega) normalisation:
    /// `-(q_b d/dq_a + q_a d/dq_b)/2` applied to the radial function times Y_lm (the phase
    /// e^{-iq.tau} is strain invariant).
    Strain(usize, usize),
}

/// Column layout of the projector matrix: (atom, projector index, m) per column.
fn columns(model: &Model) -> Vec<(usize, usize, usize)> {
    let mut cols = Vec::new();
    for (a, atom) in model.crystal.atoms.iter().enumerate() {
        let ps = &model.species[atom.species].pseudo;
        for (i, pr) in ps.projectors.iter().enumerate() {
            for m in 0..2 * pr.l + 1 {
                cols.push((a, i, m));
            }
        }
    }
    cols
}

/// The nproj x nproj matrix, block diagonal by atom, same l and m, of the per-species
/// coupling `of` (between projector functions, file order); None when no species has one.
fn coupling<T: BandScalar>(
    model: &Model,
    cols: &[(usize, usize, usize)],
    of: fn(&crate::pseudo::Pseudopotential) -> Option<&Vec<Vec<f64>>>,
) -> Option<Mat<T>> {
    let nproj = cols.len();
    let mut out = Mat::<T>::zeros(nproj, nproj);
    let mut any = false;
    for (c1, &(a1, i1, m1)) in cols.iter().enumerate() {
        let ps = model.pseudo_of_atom(a1);
        let Some(x) = of(ps) else { continue };
        any = true;
        for (c2, &(a2, i2, m2)) in cols.iter().enumerate() {
            if a1 == a2 && m1 == m2 && ps.projectors[i1].l == ps.projectors[i2].l {
                out[(c1, c2)] = T::from_f64(x[i1][i2]);
            }
        }
    }
    any.then_some(out)
}

/// Cartesian gradient of the real spherical harmonics Y_lm(q/|q|) (central differences with a
/// step 1e-5 |q|; the functions are smooth, the error is ~1e-10 relative).
fn ylm_gradient(l: usize, q: [f64; 3], out: &mut [[f64; 7]; 3]) {
    let h = 1e-5 * (q[0] * q[0] + q[1] * q[1] + q[2] * q[2]).sqrt();
    let (mut yp, mut ym) = ([0.0; 7], [0.0; 7]);
    for (a, o) in out.iter_mut().enumerate() {
        let mut qp = q;
        let mut qm = q;
        qp[a] += h;
        qm[a] -= h;
        real_ylm(l, qp, &mut yp);
        real_ylm(l, qm, &mut ym);
        for m in 0..2 * l + 1 {
            o[m] = (yp[m] - ym[m]) / (2.0 * h);
        }
    }
}

/// For every atom, the complex `npw x ncols` matrices of its projector functions (or strain
/// derivatives of them), one per requested part, handed to `each(part index, first column,
/// matrix)`, built directly (phases e^{-i(k+G).tau} from the Cartesian positions): the
/// reference the compact, blocked build is tested against.
#[cfg(test)]
fn projector_matrices(
    model: &Model,
    kpt: &Kpoint,
    volume: f64,
    parts: &[Part],
    mut each: impl FnMut(usize, usize, Mat<Complex64>),
) {
    let npw = kpt.npw();
    let tables = radial_tables(model, kpt, parts);
    let qs = kpg_norms(kpt);
    let norm = 1.0 / volume.sqrt();
    let mut col = 0;
    let mut ylm = [0.0; 7];
    let mut dylm = [[0.0; 7]; 3];
    for atom in model.crystal.atoms.iter() {
        let ps = &model.species[atom.species].pseudo;
        let ncols: usize = ps.projectors.iter().map(|p| 2 * p.l + 1).sum();
        let mut out: Vec<Mat<Complex64>> = parts.iter().map(|_| Mat::zeros(npw, ncols)).collect();
        let tau = model.crystal.to_cartesian(&atom.frac);
        let mut first = 0;
        for (i, pr) in ps.projectors.iter().enumerate() {
            let l = pr.l;
            let il = Complex64::new(0.0, -1.0).powi(l as i32);
            for (ig, g) in kpt.kpg.iter().enumerate() {
                let phase =
                    Complex64::from_polar(1.0, -(g[0] * tau[0] + g[1] * tau[1] + g[2] * tau[2]));
                real_ylm(l, *g, &mut ylm);
                if qs[ig] >= 1e-10 {
                    ylm_gradient(l, *g, &mut dylm);
                }
                let f = &tables[atom.species][i];
                for (part, p) in parts.iter().zip(out.iter_mut()) {
                    for m in 0..2 * l + 1 {
                        let v = part_value(*part, f, ig, *g, qs[ig], &ylm, &dylm, m);
                        p[(ig, first + m)] = phase * il * (norm * v);
                    }
                }
            }
            first += 2 * l + 1;
        }
        for (ip, p) in out.into_iter().enumerate() {
            each(ip, col, p);
        }
        col += ncols;
    }
}

/// |k+G| of every plane wave of `kpt`.
pub(crate) fn kpg_norms(kpt: &Kpoint) -> Vec<f64> {
    kpt.kpg
        .iter()
        .map(|g| (g[0] * g[0] + g[1] * g[1] + g[2] * g[2]).sqrt())
        .collect()
}

/// Per species and projector, the radial form factor at every |k+G| and, when a strain part
/// is among `parts`, its derivative.
fn radial_tables(model: &Model, kpt: &Kpoint, parts: &[Part]) -> Vec<Vec<(Vec<f64>, Vec<f64>)>> {
    let want_strain = parts.iter().any(|p| matches!(p, Part::Strain(..)));
    let qs = kpg_norms(kpt);
    model
        .species
        .iter()
        .map(|sp| {
            let ps = &sp.pseudo;
            (0..ps.projectors.len())
                .map(|i| {
                    let radial = ps.projector_fourier_many(i, &qs);
                    let dradial: Vec<f64> = if want_strain {
                        qs.iter()
                            .map(|&q| {
                                if q < 1e-10 {
                                    0.0
                                } else {
                                    super::radial_derivative(|x| ps.projector_fourier(i, x), q)
                                }
                            })
                            .collect()
                    } else {
                        Vec::new()
                    };
                    (radial, dradial)
                })
                .collect()
        })
        .collect()
}

/// Component `m` of `part` of one projector (radial table `f`) at plane wave `ig` (`k+G` = `g`,
/// |k+G| = `q`, with its `ylm` and, for a strain part at q > 0, their gradient `dylm`), before
/// the `(-i)^l` and the phase: `f(q) Y_lm`, or `-(q_b d/dq_a + q_a d/dq_b)/2` of it.
#[allow(clippy::too_many_arguments)]
fn part_value(
    part: Part,
    f: &(Vec<f64>, Vec<f64>),
    ig: usize,
    g: [f64; 3],
    q: f64,
    ylm: &[f64; 7],
    dylm: &[[f64; 7]; 3],
    m: usize,
) -> f64 {
    let (radial, dradial) = f;
    match part {
        Part::Value => radial[ig] * ylm[m],
        Part::Strain(_, _) if q < 1e-10 => 0.0, // q_a = q_b = 0
        Part::Strain(a, b) => {
            // d/dq_c [f(q) Y(q)] = f'(q) q_c/q Y + f dY/dq_c
            let d = |c: usize| dradial[ig] * g[c] / q * ylm[m] + radial[ig] * dylm[c][m];
            -0.5 * (g[b] * d(a) + g[a] * d(b))
        }
    }
}

/// Shapes of one part: per species, the `npw x nproj_species` real functions and the `l` of
/// each column (P's columns, or their strain derivatives, are `(-i)^l` shape times the atom's
/// phase).
type Shapes = Vec<(Mat<f64>, Vec<usize>)>;

/// Per part, the [`Shapes`] `(1/sqrt(Omega))` times [`part_value`]: for [`Part::Value`]
/// `beta_i(|k+G|) Y_lm(k+G)`. Built per species, not per atom (the atoms differ by phase only).
fn species_shapes(model: &Model, kpt: &Kpoint, volume: f64, parts: &[Part]) -> Vec<Shapes> {
    let qs = kpg_norms(kpt);
    let tables = radial_tables(model, kpt, parts);
    let want_strain = parts.iter().any(|p| matches!(p, Part::Strain(..)));
    let norm = 1.0 / volume.sqrt();
    let mut ylm = [0.0; 7];
    let mut dylm = [[0.0; 7]; 3];
    let mut out: Vec<Shapes> = parts.iter().map(|_| Vec::new()).collect();
    for (sp, table) in model.species.iter().zip(&tables) {
        let ps = &sp.pseudo;
        let ls: Vec<usize> = ps
            .projectors
            .iter()
            .flat_map(|p| std::iter::repeat_n(p.l, 2 * p.l + 1))
            .collect();
        let mut shapes: Vec<Mat<f64>> = parts
            .iter()
            .map(|_| Mat::zeros(kpt.npw(), ls.len()))
            .collect();
        let mut col = 0;
        for (pr, f) in ps.projectors.iter().zip(table) {
            let l = pr.l;
            for (ig, g) in kpt.kpg.iter().enumerate() {
                real_ylm(l, *g, &mut ylm);
                if want_strain && qs[ig] >= 1e-10 {
                    ylm_gradient(l, *g, &mut dylm);
                }
                for (part, shape) in parts.iter().zip(shapes.iter_mut()) {
                    for m in 0..2 * l + 1 {
                        let v = part_value(*part, f, ig, *g, qs[ig], &ylm, &dylm, m);
                        shape[(ig, col + m)] = norm * v;
                    }
                }
            }
            col += 2 * l + 1;
        }
        for (o, shape) in out.iter_mut().zip(shapes) {
            o.push((shape, ls.clone()));
        }
    }
    out
}

impl<T: BandScalar> KProjectors<T> {
    /// Build the projectors of every atom of `model` at k-point `kpt`.
    pub fn new(model: &Model, kpt: &Kpoint, volume: f64) -> Self {
        let cols = columns(model);
        let nproj = cols.len();
        let d = coupling(model, &cols, |ps| Some(&ps.dij)).unwrap_or_else(|| Mat::zeros(0, 0));
        let q = coupling(model, &cols, |ps| {
            ps.augmentation().map(|a| a.q_integrals())
        });
        let mut first = 0;
        let mut atoms = Vec::new();
        let mut phases = Mat::<Complex64>::zeros(kpt.npw(), model.crystal.atoms.len());
        for (a, atom) in model.crystal.atoms.iter().enumerate() {
            let f = AtomPhase::new(atom.frac, kpt.frac, &kpt.millers);
            for (ph, m) in phases.col_mut(a).iter_mut().zip(&kpt.millers) {
                *ph = f.of(m);
            }
            atoms.push((atom.species, first));
            first += model.species[atom.species]
                .pseudo
                .projectors
                .iter()
                .map(|p| 2 * p.l + 1)
                .sum::<usize>();
        }
        Self {
            shapes: species_shapes(model, kpt, volume, &[Part::Value]).swap_remove(0),
            atoms,
            phases,
            g0: kpt.holds_g0(),
            nproj,
            stored: RwLock::new(None),
            d,
            screened: RwLock::new(None),
            q,
            roots: OnceLock::new(),
            atom_of_column: cols.iter().map(|c| c.0).collect(),
            group: kpt.dist.as_ref().map(|d| d.comm().clone()),
            spare_blocks: Mutex::new(Vec::new()),
        }
    }

    /// Rows of P in this representation (this rank's plane waves).
    fn rows(&self) -> usize {
        T::plane_wave_rows(self.g0, 0, self.phases.nrows()).len()
    }

    /// Whether P takes at most [`STORED_PROJECTORS_MAX`] bytes (then it is kept whole while
    /// in use).
    pub fn fits_whole(&self) -> bool {
        self.rows() * self.nproj * std::mem::size_of::<T>() <= STORED_PROJECTORS_MAX
    }

    /// Build P whole and keep it until the guard drops, when it fits
    /// ([`Self::fits_whole`]) and is not kept already; otherwise a guard that does nothing.
    pub fn keep_whole(&self) -> KeptWhole<'_, T> {
        let build = self.fits_whole() && self.whole().is_none();
        if build {
            let mut whole = Mat::<T>::zeros(self.rows(), self.nproj);
            self.build_rows(&self.shapes, 0, self.phases.nrows(), whole.as_mut());
            *self.stored.write().unwrap_or_else(|e| e.into_inner()) = Some(whole);
        }
        KeptWhole {
            proj: self,
            owner: build,
        }
    }

    /// P when it is kept whole.
    fn whole(&self) -> RwLockReadGuard<'_, Option<Mat<T>>> {
        self.stored.read().unwrap_or_else(|e| e.into_inner())
    }

    /// A buffer for one block of any part's matrix (up to [`PROJECTOR_BLOCK`] plane waves),
    /// contents unspecified: a spare one when there is one.
    fn block_buffer(&self) -> BlockBuffer<'_, T> {
        let spare = self
            .spare_blocks
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .pop();
        let m = spare.unwrap_or_else(|| {
            let b = PROJECTOR_BLOCK.min(self.phases.nrows());
            Mat::zeros(T::plane_wave_rows(false, 0, b).len(), self.nproj)
        });
        BlockBuffer {
            m: Some(m),
            spares: &self.spare_blocks,
        }
    }

    /// The rows of the matrix of `shapes` that hold the local plane waves `h0..h1`, into
    /// `block`.
    fn build_rows(&self, shapes: &Shapes, h0: usize, h1: usize, mut block: MatMut<'_, T>) {
        for (a, &(species, first)) in self.atoms.iter().enumerate() {
            let phase = &column(self.phases.as_ref(), a)[h0..h1];
            let (shape, ls) = &shapes[species];
            for (c, &l) in ls.iter().enumerate() {
                let r = &column(shape.as_ref(), c)[h0..h1];
                let out = col_mut(block.as_mut().subcols_mut(first + c, 1));
                T::phased_into(self.g0, h0, l, r, phase, out);
            }
        }
    }

    /// `P^H x` on this rank's rows (not summed over the G-vector group).
    fn project_local(&self, x: MatRef<'_, T>) -> Mat<T> {
        self.project_local_of(None, x)
    }

    /// `M^H x` on this rank's rows, for M = P (`shapes` None: kept whole or built in blocks)
    /// or the matrix of `shapes` (built in blocks).
    fn project_local_of(&self, shapes: Option<&Shapes>, x: MatRef<'_, T>) -> Mat<T> {
        let mut c = Mat::<T>::zeros(self.nproj, x.ncols());
        if shapes.is_none() {
            if let Some(p) = &*self.whole() {
                planewave_linalg::gemm(c.as_mut(), false, p.as_ref(), true, x, false);
                return c;
            }
        }
        let shapes = shapes.unwrap_or(&self.shapes);
        // The blocks in `tasks` contiguous runs on rayon's threads, each run summed into a
        // partial of its own, the partials summed in run order (one run: the plain sum).
        let starts: Vec<usize> = (0..self.phases.nrows()).step_by(PROJECTOR_BLOCK).collect();
        let partial_bytes = (self.nproj * x.ncols() * std::mem::size_of::<T>()).max(1);
        let tasks = rayon::current_num_threads()
            .min(starts.len())
            .min(PARTIALS_MAX / partial_bytes)
            .max(1);
        let per = starts.len().div_ceil(tasks).max(1);
        let run = |chunk: &[usize], acc: &mut Mat<T>| {
            let mut buf = self.block_buffer();
            for &h0 in chunk {
                let (rows, block) = self.build_block(shapes, h0, &mut buf);
                let xs = x.subrows(rows.start, rows.len());
                planewave_linalg::gemm(acc.as_mut(), true, block, true, xs, false);
            }
        };
        if tasks == 1 {
            run(&starts, &mut c);
            return c;
        }
        let partials: Vec<Mat<T>> = starts
            .par_chunks(per)
            .map(|chunk| {
                let mut acc = Mat::<T>::zeros(self.nproj, x.ncols());
                run(chunk, &mut acc);
                acc
            })
            .collect();
        for p in &partials {
            for j in 0..c.ncols() {
                for i in 0..c.nrows() {
                    c[(i, j)] += p[(i, j)];
                }
            }
        }
        c
    }

    /// The block of the matrix of `shapes` for the local plane waves from `h0` (up to
    /// [`PROJECTOR_BLOCK`] of them), built in `buf`: its rows of the representation, and it.
    fn build_block<'b>(
        &self,
        shapes: &Shapes,
        h0: usize,
        buf: &'b mut Mat<T>,
    ) -> (std::ops::Range<usize>, MatRef<'b, T>) {
        let h1 = (h0 + PROJECTOR_BLOCK).min(self.phases.nrows());
        let rows = T::plane_wave_rows(self.g0, h0, h1);
        let mut block = buf.as_mut().subrows_mut(0, rows.len());
        self.build_rows(shapes, h0, h1, block.as_mut());
        (rows.clone(), buf.as_ref().subrows(0, rows.len()))
    }

    /// `P^H psi` over all rows: local GEMMs plus one sum over the G-vector group.
    fn project(&self, psi: MatRef<'_, T>) -> Mat<T> {
        let c = self.project_local(psi);
        match &self.group {
            Some(g) => {
                let _op = g.operation(Operation::Overlap);
                crate::gvectors::sum_matrix(c, |flat| g.allreduce_sum(flat, CommClass::GVector))
            }
            None => c,
        }
    }

    /// `D C` with `C = P^H psi`, and the nonlocal energy `sum_n w_n <psi_n|V_nl|psi_n>`.
    fn coefficients(&self, psi: MatRef<'_, T>, weights: &[f64]) -> (Mat<T>, f64) {
        let c = self.project(psi);
        let dc = matmul(self.d.as_ref(), c.as_ref());
        let e = contract(c.as_ref(), dc.as_ref(), weights)
            .iter()
            .sum::<f64>()
            / 2.0;
        (dc, e)
    }

    /// Nonlocal forces `-dE_nl/dtau` (Ha/bohr, per atom) of one k-point for the band block
    /// `psi` with band weights `w_n` (k weight times occupation), from dP/dtau = -i(k+G) P:
    /// `(dP)^H psi = P^H (i(k+G) psi)`, so P's blocks serve and only one block of the bands'
    /// size is made per direction. With ultrasoft species the coupling is the screened D less
    /// `e_n q` (the overlap moves with the atoms too), which needs the bands' `eigenvalues`.
    pub fn forces(
        &self,
        model: &Model,
        kpt: &Kpoint,
        psi: MatRef<'_, T>,
        weights: &[f64],
        eigenvalues: Option<&[f64]>,
    ) -> Vec<[f64; 3]> {
        let mut forces = vec![[0.0; 3]; model.crystal.atoms.len()];
        if self.nproj() == 0 {
            return forces;
        }
        let (dc, _) = self.band_coefficients(psi, weights, eigenvalues);
        // Per direction and projector: this rank's rows' share, summed over the group once.
        let mut per_column = Vec::with_capacity(3 * self.nproj());
        for dir in 0..3 {
            let gpsi = T::times_i_kpg(kpt, psi, dir);
            let dpc = self.project_local(gpsi.as_ref());
            per_column.extend(contract(dpc.as_ref(), dc.as_ref(), weights));
        }
        sum_over(&self.group, &mut per_column);
        for (dir, values) in per_column.chunks(self.nproj()).enumerate() {
            for (i, v) in values.iter().enumerate() {
                forces[self.atom_of_column[i]][dir] -= v;
            }
        }
        forces
    }

    /// [`Self::coefficients`], or with ultrasoft species `(D - e_n q) C` (D screened, `e_n`
    /// the bands' `eigenvalues`) and `sum_n w_n <psi_n|P (D - e_n q) P^H|psi_n>`: what the
    /// forces and stress of a generalised eigenproblem contract with.
    fn band_coefficients(
        &self,
        psi: MatRef<'_, T>,
        weights: &[f64],
        eigenvalues: Option<&[f64]>,
    ) -> (Mat<T>, f64) {
        let Some(q) = &self.q else {
            return self.coefficients(psi, weights);
        };
        let e = eigenvalues.expect("ultrasoft forces and stress need the bands' eigenvalues");
        let c = self.project(psi);
        let screened = self.screened.read().unwrap_or_else(|e| e.into_inner());
        let mut dc = matmul(screened.as_ref().unwrap_or(&self.d).as_ref(), c.as_ref());
        let qc = matmul(q.as_ref(), c.as_ref());
        for (n, &en) in e.iter().enumerate() {
            for i in 0..dc.nrows() {
                dc[(i, n)] -= qc[(i, n)].scale(en);
            }
        }
        let energy = contract(c.as_ref(), dc.as_ref(), weights)
            .iter()
            .sum::<f64>()
            / 2.0;
        (dc, energy)
    }

    /// Strain derivative `dE_nl/d eps_ab` (Ha) of one k-point (same arguments as
    /// [`Self::forces`]), including the -delta_ab E_nl of the projectors' 1/sqrt(Omega).
    pub fn strain_derivative(
        &self,
        model: &Model,
        kpt: &Kpoint,
        volume: f64,
        (psi, weights): (MatRef<'_, T>, &[f64]),
        eigenvalues: Option<&[f64]>,
    ) -> [[f64; 3]; 3] {
        let mut de = [[0.0; 3]; 3];
        if self.nproj() == 0 {
            return de;
        }
        let (dc, e_nl) = self.band_coefficients(psi, weights, eigenvalues);
        let pairs: Vec<(usize, usize)> = (0..3).flat_map(|a| (a..3).map(move |b| (a, b))).collect();
        let parts: Vec<Part> = pairs.iter().map(|&(a, b)| Part::Strain(a, b)).collect();
        // The six derivative matrices block by block from per-species shapes, like P.
        let mut sums: Vec<f64> = species_shapes(model, kpt, volume, &parts)
            .iter()
            .map(|shapes| {
                let dpc = self.project_local_of(Some(shapes), psi);
                contract(dpc.as_ref(), dc.as_ref(), weights).iter().sum()
            })
            .collect();
        sum_over(&self.group, &mut sums);
        for (&(a, b), &v) in pairs.iter().zip(&sums) {
            de[a][b] += v;
            if a != b {
                de[b][a] += v;
            }
        }
        for (a, row) in de.iter_mut().enumerate() {
            row[a] -= e_nl;
        }
        de
    }

    /// Number of projector functions.
    pub fn nproj(&self) -> usize {
        self.nproj
    }

    /// `out += V_nl psi` for the block `psi` (npw x nb), with the screened coupling once
    /// [`Self::screen`] has set one.
    pub fn apply_add(&self, psi: MatRef<'_, T>, out: MatMut<'_, T>) {
        let screened = self.screened.read().unwrap_or_else(|e| e.into_inner());
        self.apply_coupled_add(screened.as_ref().unwrap_or(&self.d), psi, out);
    }

    /// Set the coupling to `D^0 + ΔD`, with `delta[a]` atom a's ΔD by pairs of its
    /// components ([`crate::augmentation`]; empty for norm-conserving atoms).
    pub fn screen(&self, delta: &[Vec<f64>]) {
        let mut d = self.d.clone();
        for ((a, &(_, first)), da) in self.atoms.iter().enumerate().zip(delta) {
            let n = self.atom_of_column.iter().filter(|&&c| c == a).count();
            for ((i, j), &v) in crate::augmentation::pairs(n).zip(da) {
                d[(first + i, first + j)] += T::from_f64(v);
                if i != j {
                    d[(first + j, first + i)] += T::from_f64(v);
                }
            }
        }
        *self.screened.write().unwrap_or_else(|e| e.into_inner()) = Some(d);
    }

    /// Per atom: its index and its first projector column.
    pub(crate) fn atom_columns(&self) -> impl Iterator<Item = (usize, usize)> + '_ {
        self.atoms
            .iter()
            .enumerate()
            .map(|(a, &(_, first))| (a, first))
    }

    /// `⟨β|psi⟩` of every projector column and band, summed over the G-vector group.
    pub(crate) fn projections(&self, psi: MatRef<'_, T>) -> Mat<T> {
        self.project(psi)
    }

    /// `out += P M P^H psi` for the block `psi` and an nproj x nproj matrix `m`.
    fn apply_coupled_add(&self, m: &Mat<T>, psi: MatRef<'_, T>, out: MatMut<'_, T>) {
        if self.nproj() == 0 {
            return;
        }
        let c = self.project(psi);
        let dc = matmul(m.as_ref(), c.as_ref());
        if let Some(p) = &*self.whole() {
            planewave_linalg::gemm(out, true, p.as_ref(), false, dc.as_ref(), false);
            return;
        }
        // Each block adds to its own rows of `out`: the blocks run on rayon's threads.
        let mut pieces = Vec::new();
        let (mut rest, mut at) = (out, 0);
        for h0 in (0..self.phases.nrows()).step_by(PROJECTOR_BLOCK) {
            let h1 = (h0 + PROJECTOR_BLOCK).min(self.phases.nrows());
            let rows = T::plane_wave_rows(self.g0, h0, h1);
            let (_, tail) = rest.split_at_row_mut(rows.start - at);
            let (piece, tail) = tail.split_at_row_mut(rows.len());
            pieces.push((h0, piece));
            (rest, at) = (tail, rows.end);
        }
        pieces.into_par_iter().for_each_init(
            || self.block_buffer(),
            |buf, (h0, piece)| {
                let (_, block) = self.build_block(&self.shapes, h0, buf);
                planewave_linalg::gemm(piece, true, block, false, dc.as_ref(), false);
            },
        );
    }

    /// `<psi_n|V_nl|psi_n>` for every band of the block.
    pub fn band_energies(&self, psi: MatRef<'_, T>) -> Vec<f64> {
        let nb = psi.ncols();
        if self.nproj() == 0 {
            return vec![0.0; nb];
        }
        let c = self.project(psi);
        let dc = matmul(self.d.as_ref(), c.as_ref());
        (0..nb)
            .map(|n| {
                (0..c.nrows())
                    .map(|j| (c[(j, n)].cj() * dc[(j, n)]).real())
                    .sum()
            })
            .collect()
    }
}

/// P of one k-point kept whole while this lives ([`KProjectors::keep_whole`]).
pub struct KeptWhole<'a, T: BandScalar> {
    proj: &'a KProjectors<T>,
    /// Whether this guard built P (and so drops it).
    owner: bool,
}

impl<T: BandScalar> Drop for KeptWhole<'_, T> {
    fn drop(&mut self) {
        if self.owner {
            *self.proj.stored.write().unwrap_or_else(|e| e.into_inner()) = None;
        }
    }
}

impl<T: BandScalar> OverlapOperator<T> for KProjectors<T> {
    fn root_add(&self, inverse: bool, psi: MatRef<'_, T>, out: MatMut<'_, T>) {
        let roots = self.roots.get_or_init(|| {
            let q = self.q.as_ref().expect("an overlap needs ultrasoft species");
            let mut p = Mat::<T>::zeros(self.rows(), self.nproj);
            self.build_rows(&self.shapes, 0, self.phases.nrows(), p.as_mut());
            let gram = self.project(p.as_ref());
            OverlapRoots::new(&gram, q).unwrap_or_else(|e| panic!("ultrasoft overlap: {e}"))
        });
        self.apply_coupled_add(roots.of(inverse), psi, out);
    }
}

impl<T: BandScalar> KProjectors<T> {
    /// Whether some species is ultrasoft: the projectors then also give the overlap S.
    pub fn has_overlap(&self) -> bool {
        self.q.is_some()
    }
}

impl<T: BandScalar> ProjectorOperator<T> for KProjectors<T> {
    fn apply_add(&self, psi: MatRef<'_, T>, out: MatMut<'_, T>) {
        KProjectors::apply_add(self, psi, out)
    }
    fn prepared(&self, f: &mut dyn FnMut()) {
        let _whole = self.keep_whole();
        f();
        // The k-point's applications are done: its spare blocks go, so that a rank's spares
        // are one k-point's at a time.
        self.spare_blocks
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clear();
    }
}

/// The nonlocal term: its projector operator on the bands, and the energy, forces and stress
/// of the occupied bands. It owns the projectors of the k-points this rank computes, each
/// kept from the first time its operator is asked for (the SCF); energy, forces and stress
/// use those, or build one k-point's at a time.
pub struct Nonlocal<'a, T: BandScalar> {
    model: &'a Model,
    basis: &'a Basis,
    /// Per spin slot and k-point (`slot * nk + k`), once built: one slot unless ultrasoft
    /// species with spin make the screened coupling differ between the channels.
    projectors: Vec<OnceLock<KProjectors<T>>>,
    /// Whether each spin channel has its own slot.
    per_spin: bool,
    /// The screening ΔD of the last [`Term::screen`] (`[spin][atom][pair]`).
    screening: RwLock<Option<crate::augmentation::Becsum>>,
}

impl<'a, T: BandScalar> Nonlocal<'a, T> {
    /// The projectors held for block `(spin, k)` once its operator was asked for.
    fn held_projectors(&self, (spin, k): (usize, usize)) -> Option<&KProjectors<T>> {
        let slot = if self.per_spin { spin } else { 0 };
        self.projectors[slot * self.basis.kpoints.len() + k].get()
    }

    /// The term of `model` on `basis`.
    pub fn new(model: &'a Model, basis: &'a Basis) -> Self {
        let ultrasoft = model
            .species
            .iter()
            .any(|s| s.pseudo.augmentation().is_some());
        let per_spin = ultrasoft && model.nspin() == 2;
        let slots = if per_spin { 2 } else { 1 };
        Self {
            model,
            basis,
            projectors: (0..slots * basis.kpoints.len())
                .map(|_| OnceLock::new())
                .collect(),
            per_spin,
            screening: RwLock::new(None),
        }
    }

    /// The projectors of spin channel `spin` at k-point `k`, screened by the last screening.
    fn projectors(&self, spin: usize, k: usize) -> &KProjectors<T> {
        let slot = if self.per_spin { spin } else { 0 };
        self.projectors[slot * self.basis.kpoints.len() + k].get_or_init(|| {
            let p = KProjectors::new(self.model, &self.basis.kpoints[k], self.basis.volume);
            if let Some(d) = &*self.screening.read().unwrap_or_else(|e| e.into_inner()) {
                p.screen(&d[spin]);
            }
            p
        })
    }

    /// Call `f(k-point, its projectors, (spin, k), band block, band weights)` for every
    /// (spin, k) block this rank computes, timed as block work. The projectors are the
    /// operator's of the block's spin slot, or, where the operator has not built them (forces
    /// and stress after the SCF hold one k-point's at a time), built for this call and given
    /// the block's screened coupling like the operator's.
    fn for_each_block(
        &self,
        b: Bands<'_, T>,
        mut f: impl FnMut(&Kpoint, &KProjectors<T>, (usize, usize), MatRef<'_, T>, &[f64]),
    ) {
        let (basis, par) = (self.basis, &*self.basis.parallel);
        let screening = self.screening.read().unwrap_or_else(|e| e.into_inner());
        par.time_block_work(|| {
            for (k, kpt) in basis.kpoints.iter().enumerate() {
                let spins: Vec<usize> = (0..b.psi.len()).filter(|&s| par.owns(s, k)).collect();
                let missing = spins
                    .iter()
                    .any(|&s| self.held_projectors((s, k)).is_none());
                let built = missing.then(|| KProjectors::new(self.model, kpt, basis.volume));
                let _built_whole = built.as_ref().map(KProjectors::keep_whole);
                for sp in spins {
                    let proj = match (self.held_projectors((sp, k)), &built) {
                        (Some(p), _) => p,
                        (None, Some(p)) => {
                            if let Some(delta) = &*screening {
                                p.screen(&delta[sp]);
                            }
                            p
                        }
                        (None, None) => unreachable!("built when any spin's are missing"),
                    };
                    let _whole = proj.keep_whole();
                    f(kpt, proj, (sp, k), b.psi[sp][k].as_ref(), &b.weights[sp][k]);
                }
            }
        });
    }
}

impl<T: BandScalar> Term<T> for Nonlocal<'_, T> {
    fn name(&self) -> &'static str {
        "nonlocal"
    }

    fn operator<'s>(
        &'s self,
        _s: &State<'s, T>,
        (spin, k): (usize, usize),
    ) -> Option<Operator<'s, T>> {
        Some(Operator::Projector(self.projectors(spin, k)))
    }

    fn overlap<'s>(
        &'s self,
        _s: &State<'s, T>,
        (spin, k): (usize, usize),
    ) -> Option<Operator<'s, T>> {
        let p = self.projectors(spin, k);
        p.has_overlap().then_some(Operator::Overlap(p))
    }

    fn becsum(
        &self,
        charges: &crate::augmentation::AugmentationCharges,
        psi: &[Vec<Mat<T>>],
        weights: &[Vec<Vec<f64>>],
    ) -> Option<crate::augmentation::Becsum> {
        let held = |s, k| self.held_projectors((s, k));
        Some(crate::augmentation::becsum(
            self.model, self.basis, charges, psi, weights, held,
        ))
    }

    fn screen(&self, delta: &crate::augmentation::Becsum) {
        for (i, cell) in self.projectors.iter().enumerate() {
            let spin = if self.per_spin {
                i / self.basis.kpoints.len()
            } else {
                0
            };
            if let Some(p) = cell.get() {
                p.screen(&delta[spin]);
            }
        }
        *self.screening.write().unwrap_or_else(|e| e.into_inner()) = Some(delta.clone());
    }

    fn energy(&self, s: &State<'_, T>) -> Option<Share<f64>> {
        let Some(b) = s.bands else {
            return Some(Share::Whole(0.0));
        };
        let mut e = 0.0;
        self.for_each_block(b, |_, proj, _, x, w| {
            let nl = proj.band_energies(x);
            e += nl.iter().zip(w).map(|(e, w)| w * e).sum::<f64>();
        });
        Some(Share::Blocks(e))
    }

    fn forces(&self, s: &State<'_, T>) -> Option<Share<Vec<[f64; 3]>>> {
        let b = s.bands?;
        let mut out = vec![[0.0; 3]; s.model.crystal.atoms.len()];
        self.for_each_block(b, |kpt, proj, (sp, k), x, w| {
            let e = b.eigenvalues.map(|e| e[sp][k].as_slice());
            let f = proj.forces(s.model, kpt, x, w, e);
            for (o, v) in out.iter_mut().zip(&f) {
                (0..3).for_each(|c| o[c] += v[c]);
            }
        });
        Some(Share::Blocks(out))
    }

    fn stress(&self, s: &State<'_, T>) -> Option<Share<[[f64; 3]; 3]>> {
        let b = s.bands?;
        let mut out = [[0.0; 3]; 3];
        let omega = s.basis.volume;
        self.for_each_block(b, |kpt, proj, (sp, k), x, w| {
            let e = b.eigenvalues.map(|e| e[sp][k].as_slice());
            let de = proj.strain_derivative(s.model, kpt, omega, (x, w), e);
            for (o, d) in out.iter_mut().flatten().zip(de.iter().flatten()) {
                *o -= d / omega;
            }
        });
        Some(Share::Blocks(out))
    }
}

/// Per projector column i: `sum_n w_n 2 Re(conj(X[i,n]) DC[i,n])` (the first-order change of the
/// nonlocal energy when the projectors change by X's projectors).
fn contract<T: BandScalar>(x: MatRef<'_, T>, dc: MatRef<'_, T>, weights: &[f64]) -> Vec<f64> {
    (0..x.nrows())
        .map(|i| {
            weights
                .iter()
                .enumerate()
                .map(|(n, w)| 2.0 * w * (x[(i, n)].cj() * dc[(i, n)]).real())
                .sum()
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bands::BandScalar;

    /// The matrix of `part` for every atom, built directly, in `T`'s representation.
    fn direct_matrix<T: BandScalar>(s: &crate::setup::Setup, kpt: &Kpoint, part: Part) -> Mat<T> {
        let mut direct = Mat::<T>::zeros(kpt.dim(), columns(&s.model).len());
        projector_matrices(&s.model, kpt, s.basis.volume, &[part], |_, first, p| {
            let mut cols = direct.as_mut().subcols_mut(first, p.ncols());
            cols.copy_from(T::from_plane_waves(kpt, &p));
        });
        direct
    }

    /// The rows of `m`, built block by block by `blocks`, side by side.
    fn side_by_side<T: BandScalar>(
        rows: usize,
        cols: usize,
        blocks: impl FnOnce(&mut dyn FnMut(std::ops::Range<usize>, MatRef<'_, T>)),
    ) -> Mat<T> {
        let mut built = Mat::<T>::zeros(rows, cols);
        let mut covered = 0;
        blocks(&mut |r, p| {
            assert_eq!(r.start, covered, "blocks in order, no gap");
            covered = r.end;
            built.as_mut().subrows_mut(r.start, r.len()).copy_from(p);
        });
        assert_eq!(covered, rows, "every row");
        built
    }

    /// Every block of the matrix of `shapes`, in order, as the projections build them.
    fn blocks<T: BandScalar>(
        proj: &KProjectors<T>,
        shapes: &Shapes,
        f: &mut dyn FnMut(std::ops::Range<usize>, MatRef<'_, T>),
    ) {
        let mut buf = proj.block_buffer();
        for h0 in (0..proj.phases.nrows()).step_by(PROJECTOR_BLOCK) {
            let (rows, block) = proj.build_block(shapes, h0, &mut buf);
            f(rows, block);
        }
    }

    fn assert_close<T: BandScalar>(built: &Mat<T>, direct: &Mat<T>, what: &str) {
        let mut err: f64 = 0.0;
        let mut big: f64 = 0.0;
        for j in 0..built.ncols() {
            for i in 0..built.nrows() {
                err = err.max((built[(i, j)] - direct[(i, j)]).abs2().sqrt());
                big = big.max(direct[(i, j)].abs2().sqrt());
            }
        }
        assert!(big > 0.0 && err < 1e-13 * big, "{what}: {err:e} of {big:e}");
    }

    /// The set-up of the test input `case` (under tests/data).
    fn setup_of(case: &str) -> crate::setup::Setup {
        let path = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("../../tests/data")
            .join(case);
        let spec = crate::input::load(&path).unwrap_or_else(|e| panic!("{e}"));
        crate::setup::build(spec).unwrap_or_else(|e| panic!("{e}"))
    }

    /// The blocks of the compact projectors (and of their strain derivatives) side by side,
    /// against the matrices built directly; P kept whole equals its blocks.
    fn blocks_equal_the_direct_matrix<T: BandScalar>(case: &str) {
        let s = setup_of(case);
        for kpt in &s.basis.kpoints {
            let proj = KProjectors::<T>::new(&s.model, kpt, s.basis.volume);
            let (rows, cols) = (kpt.dim(), proj.nproj());
            let built = side_by_side::<T>(rows, cols, |f| blocks(&proj, &proj.shapes, f));
            assert_close(&built, &direct_matrix(&s, kpt, Part::Value), case);
            // These cells' P are small enough to be kept whole: built by the same blocks.
            assert!(
                proj.whole().is_none(),
                "{case}: P is not kept before it is asked for"
            );
            let kept = proj.keep_whole();
            assert!(
                *proj.whole() == Some(built),
                "{case}: the kept P is the blocks' P"
            );
            drop(kept);
            assert!(
                proj.whole().is_none(),
                "{case}: P is dropped with its guard"
            );
            for part in [Part::Strain(0, 0), Part::Strain(0, 2), Part::Strain(1, 2)] {
                let shapes = species_shapes(&s.model, kpt, s.basis.volume, &[part]);
                let built = side_by_side::<T>(rows, cols, |f| blocks(&proj, &shapes[0], f));
                let what = format!("{case} {part:?}");
                assert_close(&built, &direct_matrix(&s, kpt, part), &what);
            }
        }
    }

    /// V_nl psi on threads (blocks in parallel runs, partial projections summed) equals it
    /// on one thread and with P kept whole.
    fn threads_apply_as_one<T: BandScalar>(case: &str) {
        let s = setup_of(case);
        let kpt = &s.basis.kpoints[0];
        let proj = KProjectors::<T>::new(&s.model, kpt, s.basis.volume);
        assert!(
            proj.phases.nrows() > 2 * PROJECTOR_BLOCK,
            "{case}: several blocks"
        );
        let psi = T::random(kpt, &(0..6).collect::<Vec<_>>(), 7);
        let apply = |threads: usize| {
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .unwrap();
            let mut out = Mat::<T>::zeros(psi.nrows(), psi.ncols());
            pool.install(|| proj.apply_add(psi.as_ref(), out.as_mut()));
            out
        };
        let one = apply(1);
        assert_close(&apply(3), &one, &format!("{case}: 3 threads"));
        let _kept = proj.keep_whole();
        assert_close(&apply(1), &one, &format!("{case}: P kept whole"));
    }

    #[test]
    fn projectors_apply_alike_on_threads_in_blocks_and_whole() {
        threads_apply_as_one::<Complex64>("qe/si8_lda_gth_displaced/pw.in");
        threads_apply_as_one::<f64>("qe/h2o_pbe0_gth_gamma/pw.in");
    }

    #[test]
    fn compact_projectors_equal_the_direct_build() {
        // k-points (complex, several blocks of plane waves) and the Γ-real path.
        blocks_equal_the_direct_matrix::<Complex64>("qe/si8_lda_gth_displaced/pw.in");
        blocks_equal_the_direct_matrix::<f64>("layout/si8_pbe_nlcc_gamma.toml");
    }
}
