//! `Basis`: the plane-wave discretisation of a [`Model`]: cutoff, FFT grid, the k-points this rank
//! computes with their G-vectors, the density sphere, and the run's [`Parallel`] layout (the
//! process topology and which k-point group computes which (spin, k) block).
//!
//! Wavefunctions at k hold the G with |k+G|^2/2 <= ecut; densities and potentials hold the G with
//! |G|^2/2 <= ecut_rho ("the density sphere"; 4 ecut unless given, [`Cutoffs`]), and the FFT
//! grid is the smallest with factors 2,3,5,7 that holds the density sphere without aliasing
//! (so every difference of two wavefunction G-vectors too). With ecut_rho > 4 ecut the bands'
//! serial transforms use their own, smaller grid of the sphere of 4 ecut (QE's smooth grid,
//! [`crate::wfc_grid`]): the same H ψ, since ⟨G|V|G'⟩ needs V only at |G - G'|^2/2 <= 4 ecut.
//! A rank computes only the blocks [`Parallel::owns`]. With a G-vector group of more than one
//! rank ([`Basis::distribute_gvectors`]), each k-point the rank computes holds only its local
//! plane waves (those on its sticks, see [`crate::gvectors`]) and `Kpoint::dist` says how they
//! sit in the whole sphere; every per-G field of the [`Kpoint`] is then local. The density
//! sphere and grid are then dealt the same way ([`Basis::rho_dist`], [`crate::rho_dist`]): the
//! `rho_*` fields hold this rank's entries, densities and potentials its grid points. Other
//! k-points stay whole.
//!
//! Γ-point real wavefunctions (`gamma_real`): only half of the sphere is stored (G = 0 first, then
//! one G of each +-G pair), since c(-G) = c(G)*. A band is then a REAL vector of length 2 n - 1:
//! [c(0), sqrt2 Re c(G_1), sqrt2 Im c(G_1), ...], whose Euclidean inner product equals the
//! plane-wave one; see [`Kpoint::dim`]. On a rank of a G-vector group without G = 0 the local
//! vector is [sqrt2 Re c(G_h), sqrt2 Im c(G_h), ...] over its local plane waves.

use crate::crystal::{dot, norm, Crystal};
use crate::gvectors::KDist;
use crate::model::Model;
use crate::parallel::Parallel;
use crate::rho_dist::RhoDist;
use crate::wfc_grid::WfcGrid;
use planewave_comm::{Communicator, Element};
use planewave_fft::{good_fft_size, DistFftOptions, Fft3d, FftGrid, SphereMap, Sticks};
use std::f64::consts::PI;
use std::sync::Arc;

/// The plane waves of one k-point.
#[derive(Debug)]
pub struct Kpoint {
    /// k in fractional reciprocal coordinates.
    pub frac: [f64; 3],
    /// k in Cartesian coordinates (1/bohr).
    pub cart: [f64; 3],
    /// Weight in the Brillouin-zone sum (weights of all k-points add to 1).
    pub weight: f64,
    /// Miller indices of the local G-vectors.
    pub millers: Vec<[i32; 3]>,
    /// Cartesian k+G for every local G (1/bohr).
    pub kpg: Vec<[f64; 3]>,
    /// Kinetic energy |k+G|^2/2 (Ha) of each band-vector component (length [`Kpoint::dim`]):
    /// one per G, or for the Γ-real path |G|^2/2 for c(0) and twice for each (Re, Im) pair.
    pub kinetic: Vec<f64>,
    /// Where each G sits on the grid the bands go through ([`Basis::band_fft`]).
    pub map: SphereMap,
    /// Γ-point real path: where each -G sits on the grid (None for complex wavefunctions).
    pub map_neg: Option<SphereMap>,
    /// The z-lines and planes a band occupies on the grid (for sphere-restricted FFTs).
    pub sticks: Sticks,
    /// The plane waves' deal over a G-vector group (None: every plane wave is local).
    pub dist: Option<KDist>,
}

impl Kpoint {
    /// Number of local plane waves.
    pub fn npw(&self) -> usize {
        self.millers.len()
    }

    /// True for the Γ-point real-wavefunction representation.
    pub fn is_gamma_real(&self) -> bool {
        self.map_neg.is_some()
    }

    /// Number of plane waves of the whole sphere (the stored half for Γ-real), over all ranks.
    pub fn npw_global(&self) -> usize {
        self.dist.as_ref().map_or(self.npw(), KDist::npw_global)
    }

    /// Whether G = 0 is a local plane wave (the first one).
    pub fn holds_g0(&self) -> bool {
        self.dist.as_ref().is_none_or(KDist::holds_g0)
    }

    /// The plane wave (index into `millers`/`kpg`) that band-vector component `i` belongs to.
    /// In the Γ-real layout component 0 is G = 0 and components 2h-1, 2h are sqrt2 (Re, Im) of
    /// the coefficient of half-sphere entry h (2h, 2h+1 on a rank without G = 0), so that
    /// sum_i x_i^2 f(G(i)) is the full-sphere sum of |c(G)|^2 f(G) for any f even in G.
    pub fn plane_wave_of_component(&self, i: usize) -> usize {
        if self.is_gamma_real() {
            (i + usize::from(self.holds_g0())) / 2
        } else {
            i
        }
    }

    /// Length of a local band vector: npw (complex) or 2 npw - 1 (Γ real; 2 npw on a rank
    /// without G = 0).
    pub fn dim(&self) -> usize {
        if self.is_gamma_real() {
            2 * self.npw() - usize::from(self.holds_g0())
        } else {
            self.npw()
        }
    }

    /// Length of a whole band vector (over all ranks of the G-vector group).
    pub fn global_dim(&self) -> usize {
        match (&self.dist, self.is_gamma_real()) {
            (None, _) => self.dim(),
            (Some(d), true) => 2 * d.npw_global() - 1,
            (Some(d), false) => d.npw_global(),
        }
    }

    /// Complete a sum over band-vector components: this rank's partial sums become the sum
    /// over the whole sphere on every rank of the G-vector group (nothing to do when every
    /// plane wave is local). Collective on the group.
    pub fn sum_over_g<E: Element>(&self, data: &mut [E]) {
        if let Some(d) = &self.dist {
            d.sum(data);
        }
    }
}

impl Kpoint {
    /// The same plane waves, in the same order, on `grid` (maps and sticks rebuilt); for a
    /// k-point whose plane waves are not dealt.
    pub(crate) fn remap(&mut self, crystal: &Crystal, grid: FftGrid) {
        assert!(
            self.dist.is_none(),
            "a dealt k-point's transforms are its deal's"
        );
        let pw: Vec<([i32; 3], [f64; 3])> = (self.millers.iter().copied())
            .zip(self.kpg.iter().copied())
            .collect();
        let gamma_real = self.is_gamma_real();
        let point = (self.frac, self.weight);
        *self = make_kpoint(crystal, grid, point, &pw, gamma_real, None);
    }
}

/// A k-point from its plane waves `pw` (Miller index, Cartesian k+G; for `gamma_real` the
/// stored half with G = 0 first, or this rank's share of it under `dist`).
fn make_kpoint(
    crystal: &Crystal,
    grid: FftGrid,
    (frac, weight): ([f64; 3], f64),
    pw: &[([i32; 3], [f64; 3])],
    gamma_real: bool,
    dist: Option<KDist>,
) -> Kpoint {
    let millers: Vec<[i32; 3]> = pw.iter().map(|p| p.0).collect();
    let kpg: Vec<[f64; 3]> = pw.iter().map(|p| p.1).collect();
    let per_g = kpg.iter().map(|g| 0.5 * dot(g, g));
    let g0 = dist.as_ref().is_none_or(KDist::holds_g0);
    let kinetic: Vec<f64> = if gamma_real {
        // c(0) is one real component; every other G gives a (Re, Im) pair.
        per_g
            .enumerate()
            .flat_map(|(i, t)| std::iter::repeat_n(t, if g0 && i == 0 { 1 } else { 2 }))
            .collect()
    } else {
        per_g.collect()
    };
    let map = SphereMap::new(grid, &millers);
    let neg: Vec<[i32; 3]> = millers.iter().map(|m| [-m[0], -m[1], -m[2]]).collect();
    let map_neg = gamma_real.then(|| SphereMap::new(grid, &neg));
    let sticks = if gamma_real {
        Sticks::new(grid, &[millers.as_slice(), neg.as_slice()].concat())
    } else {
        Sticks::new(grid, &millers)
    };
    Kpoint {
        frac,
        cart: crystal.recip_to_cartesian(&frac),
        weight,
        millers,
        kpg,
        kinetic,
        map,
        map_neg,
        sticks,
        dist,
    }
}

/// Group squared norms into shells of equal value (relative tolerance 1e-12): the shell index of
/// each entry and the norm of each shell.
fn shells(g2: &[f64]) -> (Vec<usize>, Vec<f64>) {
    let mut order: Vec<usize> = (0..g2.len()).collect();
    order.sort_by(|&a, &b| g2[a].total_cmp(&g2[b]));
    let mut shell = vec![0; g2.len()];
    let mut norms: Vec<f64> = Vec::new();
    let mut last = f64::NEG_INFINITY;
    for i in order {
        if g2[i] - last > 1e-12 * (1.0 + g2[i]) {
            norms.push(g2[i].sqrt());
            last = g2[i];
        }
        shell[i] = norms.len() - 1;
    }
    (shell, norms)
}

/// One representative of each +-G pair (and G = 0): the "upper half" of Miller space.
fn in_upper_half(m: [i32; 3]) -> bool {
    m[0] > 0 || (m[0] == 0 && (m[1] > 0 || (m[1] == 0 && m[2] >= 0)))
}

/// The weight of the sphere entry of Miller indices `m` in a sum over the whole sphere of a
/// term whose value at -G is its value at G conjugated (the real part of a product of the
/// transforms of real fields): 2 for the upper half's representative of a +-G pair, 0 for
/// its mirror, 1 for G = 0. The sum of the real parts is the same on any layout: each pair
/// counts once, wherever its representative lives.
pub(crate) fn conjugate_pair_weight(m: &[i32; 3]) -> f64 {
    match (*m == [0; 3], in_upper_half(*m)) {
        (true, _) => 1.0,
        (false, true) => 2.0,
        (false, false) => 0.0,
    }
}

/// The two kinetic-energy cutoffs (Ha): the wavefunctions' and the density's. A single
/// number is a norm-conserving run's pair, `rho = 4 wfc`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Cutoffs {
    pub wfc: f64,
    pub rho: f64,
}

impl From<f64> for Cutoffs {
    fn from(wfc: f64) -> Self {
        Cutoffs {
            wfc,
            rho: 4.0 * wfc,
        }
    }
}

/// The plane-wave basis.
pub struct Basis {
    /// Kinetic-energy cutoff of the wavefunctions (Ha).
    pub ecut: f64,
    /// Kinetic-energy cutoff of the density sphere (Ha), at least 4 `ecut`.
    pub ecut_rho: f64,
    /// The FFT grid for densities and potentials.
    pub grid: FftGrid,
    /// Plans for that grid.
    pub fft: Fft3d,
    /// The bands' own grid when smaller than the density's (None: the bands go through the
    /// density grid), [`crate::wfc_grid`].
    pub wfc: Option<WfcGrid>,
    /// The k-points (irreducible set), each with its plane waves.
    pub kpoints: Vec<Kpoint>,
    /// Miller indices of the density sphere.
    pub rho_millers: Vec<[i32; 3]>,
    /// Cartesian G of the density sphere (1/bohr).
    pub rho_g: Vec<[f64; 3]>,
    /// |G|^2 of the density sphere.
    pub rho_g2: Vec<f64>,
    /// Shell (set of equal |G|) of each density-sphere vector: radial form factors are evaluated
    /// once per shell.
    pub rho_shell: Vec<usize>,
    /// |G| of each shell (1/bohr).
    pub rho_shell_norm: Vec<f64>,
    /// Where the density sphere sits on the grid (empty when the sphere is dealt).
    pub rho_map: SphereMap,
    /// For each density-sphere entry, the position of its mirror -G among this rank's entries
    /// (None when some mirror is on another rank): lets two real fields share a transform.
    pub rho_mirror: Option<Vec<usize>>,
    /// The density sphere's deal over a G-vector group (None: the sphere and the grid are
    /// whole on this rank). When set, the `rho_*` fields above hold this rank's entries only
    /// and densities and potentials live at its real-space points.
    pub rho_dist: Option<RhoDist>,
    /// The process layout and the owner of every (spin, k) block ([`Parallel::solo`] for one
    /// process; set by [`crate::setup`] for a distributed run).
    pub parallel: Arc<Parallel>,
    /// Cell volume (bohr^3).
    pub volume: f64,
}

impl std::fmt::Debug for Basis {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Basis")
            .field("ecut", &self.ecut)
            .field("ecut_rho", &self.ecut_rho)
            .field("grid", &self.grid)
            .field("nkpt", &self.kpoints.len())
            .finish()
    }
}

/// Largest Miller index along each lattice direction for vectors of length <= gmax.
fn miller_bounds(crystal: &Crystal, gmax: f64) -> [i32; 3] {
    [0, 1, 2].map(|i| (gmax * norm(&crystal.lattice[i]) / (2.0 * PI)).floor() as i32)
}

/// The fewest points along each lattice vector that hold the density sphere of `cutoffs`
/// (|G|^2/2 <= ecut_rho) without aliasing: 2 m + 1 for the largest Miller index m.
pub fn min_fft_dims(crystal: &Crystal, cutoffs: impl Into<Cutoffs>) -> [usize; 3] {
    let gmax_rho = (2.0 * cutoffs.into().rho).sqrt();
    miller_bounds(crystal, gmax_rho).map(|mi| 2 * mi as usize + 1)
}

/// The FFT grid that holds the density sphere of `cutoffs`: the smallest sizes of at least
/// [`min_fft_dims`] with factors 2, 3, 5, 7 only.
pub fn fft_grid_for(crystal: &Crystal, cutoffs: impl Into<Cutoffs>) -> FftGrid {
    FftGrid {
        dims: min_fft_dims(crystal, cutoffs).map(good_fft_size),
    }
}

/// Every G (Miller indices, Cartesian, squared norm) with |q+G|^2 <= gmax^2, in a fixed order.
pub fn sphere(crystal: &Crystal, q: [f64; 3], gmax: f64) -> Vec<([i32; 3], [f64; 3])> {
    let qn = norm(&crystal.recip_to_cartesian(&q));
    let m = miller_bounds(crystal, gmax + qn);
    let mut out = Vec::new();
    for i in -m[0]..=m[0] {
        for j in -m[1]..=m[1] {
            for k in -m[2]..=m[2] {
                let f = [q[0] + i as f64, q[1] + j as f64, q[2] + k as f64];
                let g = crystal.recip_to_cartesian(&f);
                if dot(&g, &g) <= gmax * gmax {
                    out.push(([i, j, k], g));
                }
            }
        }
    }
    out
}

impl Basis {
    /// Discretise `model` with cutoffs `ecut` (Ha; a number is the wavefunctions', the
    /// density's being 4 times it) on the k-points `kpoints` (fractional, weight).
    pub fn new(model: &Model, ecut: impl Into<Cutoffs>, kpoints: &[([f64; 3], f64)]) -> Self {
        let cutoffs = ecut.into();
        let grid = fft_grid_for(&model.crystal, cutoffs);
        Self::with_grid(model, cutoffs, kpoints, grid, false)
    }

    /// The Γ-only basis with real wavefunctions (half the plane waves, half the FFTs).
    pub fn gamma_real(model: &Model, ecut: impl Into<Cutoffs>) -> Self {
        let cutoffs = ecut.into();
        let grid = fft_grid_for(&model.crystal, cutoffs);
        Self::with_grid(model, cutoffs, &[([0.0; 3], 1.0)], grid, true)
    }

    /// As [`Basis::new`] with an explicit FFT grid (must hold the density sphere); with
    /// `gamma_real` the single k-point must be Γ.
    pub fn with_grid(
        model: &Model,
        ecut: impl Into<Cutoffs>,
        kpoints: &[([f64; 3], f64)],
        grid: FftGrid,
        gamma_real: bool,
    ) -> Self {
        assert!(
            !gamma_real || (kpoints.len() == 1 && kpoints[0].0 == [0.0; 3]),
            "the real-wavefunction path needs exactly the Γ point"
        );
        let crystal = &model.crystal;
        let Cutoffs {
            wfc: ecut,
            rho: ecut_rho,
        } = ecut.into();
        assert!(
            ecut_rho >= 4.0 * ecut * (1.0 - 1e-12),
            "the density cutoff must be at least 4 times the wavefunctions'"
        );
        let gmax_wfc = (2.0 * ecut).sqrt();
        let rho = sphere(crystal, [0.0; 3], (2.0 * ecut_rho).sqrt());
        let rho_millers: Vec<[i32; 3]> = rho.iter().map(|p| p.0).collect();
        let rho_g: Vec<[f64; 3]> = rho.iter().map(|p| p.1).collect();
        let rho_g2: Vec<f64> = rho_g.iter().map(|g| dot(g, g)).collect();
        // The exchange's pair densities use the density grid's kernel: hybrids keep the bands
        // there.
        let wfc = model
            .hybrid
            .is_none()
            .then(|| WfcGrid::smaller_than(crystal, ecut, grid, (&rho_millers, &rho_g2)));
        let wfc = wfc.flatten();
        let band_grid = wfc.as_ref().map_or(grid, |w| w.grid);
        let kpts = kpoints
            .iter()
            .map(|&(frac, weight)| {
                let mut pw = sphere(crystal, frac, gmax_wfc);
                if gamma_real {
                    pw.retain(|p| in_upper_half(p.0));
                    // G = 0 first: its coefficient is real.
                    let zero = pw
                        .iter()
                        .position(|p| p.0 == [0, 0, 0])
                        .expect("G = 0 is in every sphere");
                    let g0 = pw.remove(zero);
                    pw.insert(0, g0);
                }
                make_kpoint(crystal, band_grid, (frac, weight), &pw, gamma_real, None)
            })
            .collect();
        let (rho_shell, rho_shell_norm) = shells(&rho_g2);
        let rho_map = SphereMap::new(grid, &rho_millers);
        let rho_mirror = crate::rho_grid::mirror_positions(&rho_millers);
        Self {
            ecut,
            ecut_rho,
            grid,
            fft: Fft3d::new(grid),
            wfc,
            kpoints: kpts,
            rho_millers,
            rho_g,
            rho_g2,
            rho_shell,
            rho_shell_norm,
            rho_map,
            rho_mirror,
            rho_dist: None,
            parallel: Arc::new(Parallel::solo()),
            volume: crystal.volume,
        }
    }

    /// The basis of `kpoints` at `ecut` (Ha) on the ranks of `world` (collective), laid out as
    /// `kpoint_groups` k-point groups of `band_groups` band groups each, the remaining ranks of
    /// a band group sharing its G-vectors: the layout planned from the problem's sizes
    /// (`nspin` x k-points blocks of `nbands` bands, the FFT planes), the blocks dealt to the
    /// k-point groups by cost, each G-vector group's plane waves and transforms set up. A
    /// library's one call for what [`crate::setup`] does for an input (which also chooses
    /// the groups, the strategies and the Γ-real path).
    #[allow(clippy::too_many_arguments)]
    pub fn distributed(
        model: &Model,
        ecut: f64,
        kpoints: &[([f64; 3], f64)],
        world: Arc<dyn Communicator>,
        (kpoint_groups, band_groups): (usize, usize),
        nspin: usize,
        nbands: usize,
    ) -> Result<Self, String> {
        use planewave_comm::sum::SumChoice;
        let mut basis = Self::new(model, ecut, kpoints);
        let sum = SumChoice::Fixed(Default::default());
        let (kg, bg, order) = (kpoint_groups, band_groups, Default::default());
        let par = Parallel::over_kpoints(world, kg, bg, order, &basis, nspin, nbands, sum)
            .map_err(|e| e.to_string())?;
        basis.distribute(&model.crystal, par, nspin, &Default::default())?;
        Ok(basis)
    }

    /// Run on the layout `par`: set it as [`Basis::parallel`] and deal the plane waves of the
    /// k-points this rank's group computes over its G-vector group
    /// ([`Basis::distribute_gvectors`]). Collective on `par`'s world.
    pub fn distribute(
        &mut self,
        crystal: &Crystal,
        mut par: Parallel,
        nspin: usize,
        options: &DistFftOptions,
    ) -> Result<(), String> {
        let group = par.topology().gvector.clone();
        if group.size() > 1 {
            par.set_alltoallv(options.alltoallv);
        }
        let owned: Vec<bool> = (0..self.kpoints.len())
            .map(|k| par.owns_kpoint(nspin, k))
            .collect();
        self.parallel = Arc::new(par);
        self.distribute_gvectors(crystal, group, options, |k| owned[k])
    }

    /// Deal the plane waves of every k-point `k` with `which(k)` over the G-vector group
    /// `comm` (collective on it; every rank of the group passes the same `which`): those
    /// k-points keep only this rank's plane waves. `options` choose the transform's
    /// decomposition and all-to-all-v algorithm. Nothing changes on a group of one rank.
    pub fn distribute_gvectors(
        &mut self,
        crystal: &Crystal,
        comm: Arc<dyn Communicator>,
        options: &DistFftOptions,
        which: impl Fn(usize) -> bool,
    ) -> Result<(), String> {
        if comm.size() == 1 {
            return Ok(());
        }
        self.bands_on_density_grid(crystal);
        let real = crate::gvectors::RealBuffer::default();
        for k in 0..self.kpoints.len() {
            let kpt = &self.kpoints[k];
            if !which(k) || kpt.dist.is_some() {
                continue;
            }
            let gamma_real = kpt.is_gamma_real();
            let dist = KDist::new(
                comm.clone(),
                self.grid,
                &kpt.millers,
                gamma_real,
                options,
                real.clone(),
            )?;
            let pw: Vec<([i32; 3], [f64; 3])> = dist
                .local_plane_waves()
                .iter()
                .map(|&i| (kpt.millers[i], kpt.kpg[i]))
                .collect();
            let point = (kpt.frac, kpt.weight);
            self.kpoints[k] = make_kpoint(crystal, self.grid, point, &pw, gamma_real, Some(dist));
        }
        self.distribute_density(comm, options)
    }

    /// Deal the density sphere and grid over `comm` like the k-points' transforms (collective).
    fn distribute_density(
        &mut self,
        comm: Arc<dyn Communicator>,
        options: &DistFftOptions,
    ) -> Result<(), String> {
        if self.rho_dist.is_some() {
            return Ok(());
        }
        let expected = self
            .kpoints
            .iter()
            .find_map(|k| k.dist.as_ref().map(KDist::layout));
        let millers = std::mem::take(&mut self.rho_millers);
        let d = RhoDist::new(comm, self.grid, millers, options, expected)?;
        let local = d.local_g();
        self.rho_millers = d.local_part(d.global_millers());
        self.rho_g = d.local_part(&self.rho_g);
        self.rho_g2 = d.local_part(&self.rho_g2);
        self.rho_shell = d.local_part(&self.rho_shell);
        debug_assert_eq!(self.rho_millers.len(), local.len());
        self.rho_map = SphereMap::new(self.grid, &[]);
        // Pairing real fields changes the number of collective transforms: every rank of the
        // group must pair, or none.
        let mirror = crate::rho_grid::mirror_positions(&self.rho_millers);
        let everywhere = d.on_every_rank(mirror.is_some());
        self.rho_mirror = mirror.filter(|_| everywhere);
        self.rho_dist = Some(d);
        Ok(())
    }

    /// Number of points of the FFT grid.
    pub fn grid_len(&self) -> usize {
        self.grid.len()
    }
}

#[cfg(test)]
mod tests {
    use super::conjugate_pair_weight;
    use num_complex::Complex64;

    /// Over a sphere closed under G -> -G, the weighted real parts of a conjugate-symmetric
    /// term equal the whole sum, and each +-G pair has one representative.
    #[test]
    fn conjugate_pair_weights_count_each_pair_once() {
        let millers: Vec<[i32; 3]> = (-3..=3)
            .flat_map(|i| (-3..=3).flat_map(move |j| (-3..=3).map(move |k| [i, j, k])))
            .filter(|m| m.iter().map(|x| x * x).sum::<i32>() <= 9)
            .collect();
        let f = |m: &[i32; 3]| {
            let (a, b) = (
                m[0] as f64 + 0.3 * m[1] as f64,
                m[2] as f64 * 0.7 - m[1] as f64,
            );
            // Re f(-G) = Re f(G): the term of a real field's transforms.
            Complex64::new((a * a + b * b).cos() + a * b, a.sin())
        };
        let whole: f64 = millers.iter().map(|m| f(m).re).sum();
        let half: f64 = millers
            .iter()
            .map(|m| conjugate_pair_weight(m) * f(m).re)
            .sum();
        assert!((whole - half).abs() < 1e-12, "{whole} vs {half}");
        for m in &millers {
            let (w, mirror) = (
                conjugate_pair_weight(m),
                conjugate_pair_weight(&m.map(|x| -x)),
            );
            // G = 0 once (1 + 1 over the pair "G, -G" it forms with itself), else 2 + 0.
            assert_eq!(w + mirror, 2.0, "{m:?}");
            assert!(*m == [0; 3] || w * mirror == 0.0, "{m:?}");
        }
    }
}
