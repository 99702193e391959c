//! `KDist`: one k-point's plane waves dealt over the ranks of a G-vector group, and the
//! transforms of band blocks between those local coefficients and the real-space grid.
//!
//! Contract:
//! - The sticks (z-columns) of the k-point's sphere are dealt by [`DistFft`]; a rank holds the
//!   coefficients of the G-vectors on its sticks, in the global order of the sphere. The band
//!   blocks, the kinetic energies and the projectors of the [`Kpoint`](crate::basis::Kpoint)
//!   use the same rows, so a band block is `local rows × bands` on every rank and no
//!   coefficient is ever stored twice.
//! - Γ-point real path: the transform runs on the full sphere (the stored half and its
//!   mirror), with every stick on the rank of its mirror, so c(-G) = c(G)* is formed locally.
//!   Real-space points are the rank's slab of z-planes ([`planewave_fft::RealLayout`]).
//! - Sums over the rows of band vectors (overlaps, norms, projections, energies) are a local
//!   sum plus [`KDist::sum`] over the group (class G); every rank gets the same bits.
//! - Densities and potentials live at the same real-space points ([`crate::rho_dist`] deals
//!   the density grid with the same layout): a potential is applied and a density added where
//!   they lie, with no exchange.

use num_complex::Complex64;
use planewave_comm::{CommClass, CommExt, Communicator, Element, Operation};
use planewave_fft::{DistFft, DistFftOptions, FftGrid, RealLayout};
use std::sync::{Arc, Mutex};

/// Complex fields transformed per exchange-and-multiply round (bounds the real-space buffer).
/// si64 Γ on 2 MPI ranks, one thread each (alternated, same energies bit for bit): 4 fields
/// 11.1 / 11.7 s wall and 202 MiB per rank against 12.3 / 12.5 s and 218 MiB with 8; 2 fields
/// 9.18 / 9.04 / 9.11 s (t_total) and 196 MiB against 9.66 / 9.54 / 9.73 s and 208 MiB with
/// 4; and (2026-11-23, with the density plan's buffers released and GEMMs in slabs) 1 field
/// 9.65 / 9.48 / 9.28 s and 159 MiB against 10.40 / 10.38 / 10.14 s and 165 MiB with 2.
/// Across nodes one field per exchange makes the rounds more latency-bound; a larger round
/// would be worth measuring there.
pub(crate) const FIELDS_PER_ROUND: usize = 1;
/// Fields per transpose inside a round (one exchange overlaps the next block's work).
const FIELDS_PER_EXCHANGE: usize = 4;

/// The real-space buffer of a G-vector group's transforms: one per group, shared by the plans
/// of all its k-points (the real-space layout is the same for every sphere of the grid).
pub type RealBuffer = Arc<Mutex<Vec<Complex64>>>;

/// A k-point's plane waves on the ranks of one G-vector group.
pub struct KDist {
    comm: Arc<dyn Communicator>,
    fft: Mutex<DistFft>,
    real: RealBuffer,
    /// Indices into the k-point's global plane-wave list (half sphere for Γ-real) of the local
    /// plane waves, ascending.
    local_pw: Vec<usize>,
    /// Number of plane waves of the whole sphere (half sphere for Γ-real).
    npw_global: usize,
    /// Γ-real: position of each local plane wave and of its mirror in the transform's local
    /// coefficients (complex: the identity, both empty).
    plus: Vec<usize>,
    minus: Vec<usize>,
    /// This rank's real-space points.
    layout: RealLayout,
    n_coeffs: usize,
}

impl std::fmt::Debug for KDist {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("KDist")
            .field("ranks", &self.comm.size())
            .field("local_pw", &self.local_pw.len())
            .field("npw_global", &self.npw_global)
            .finish()
    }
}

impl KDist {
    /// Deal the plane waves `millers` (the whole sphere, or its stored half with G = 0 first
    /// for `gamma_real`) over `comm` (collective); transforms use the group's `real` buffer.
    pub fn new(
        comm: Arc<dyn Communicator>,
        grid: FftGrid,
        millers: &[[i32; 3]],
        gamma_real: bool,
        options: &DistFftOptions,
        real: RealBuffer,
    ) -> Result<Self, String> {
        let n = millers.len();
        let mut options = *options;
        options.pair_mirror_sticks = gamma_real;
        let sphere: Vec<[i32; 3]> = if gamma_real {
            // The stored half, then the mirrors of all but G = 0.
            let neg = millers[1..].iter().map(|m| [-m[0], -m[1], -m[2]]);
            millers.iter().copied().chain(neg).collect()
        } else {
            millers.to_vec()
        };
        let fft = DistFft::new(comm.clone(), grid, &sphere, &options)?;
        let local = fft.local_g();
        let local_pw: Vec<usize> = local.iter().copied().filter(|&g| g < n).collect();
        let (plus, minus) = if gamma_real {
            let mut pos = std::collections::HashMap::with_capacity(local.len());
            for (i, &g) in local.iter().enumerate() {
                pos.insert(g, i);
            }
            let at = |g: usize| {
                pos.get(&g)
                    .copied()
                    .ok_or_else(|| format!("planewave: sphere entry {g} is not on its rank"))
            };
            let plus = local_pw.iter().map(|&h| at(h)).collect::<Result<_, _>>()?;
            let minus = local_pw
                .iter()
                .map(|&h| if h == 0 { at(0) } else { at(n + h - 1) })
                .collect::<Result<_, _>>()?;
            (plus, minus)
        } else {
            (Vec::new(), Vec::new())
        };
        let layout = fft.layout().clone();
        let n_coeffs = fft.n_g_local();
        Ok(Self {
            comm,
            fft: Mutex::new(fft),
            real,
            local_pw,
            npw_global: n,
            plus,
            minus,
            layout,
            n_coeffs,
        })
    }

    /// Indices (into the global plane-wave list) of the local plane waves, ascending.
    pub fn local_plane_waves(&self) -> &[usize] {
        &self.local_pw
    }

    /// Plane waves of the whole sphere (stored half for Γ-real).
    pub fn npw_global(&self) -> usize {
        self.npw_global
    }

    /// Whether this rank holds G = 0 (the first entry of the global list).
    pub fn holds_g0(&self) -> bool {
        self.local_pw.first() == Some(&0)
    }

    /// The group's communicator.
    pub fn comm(&self) -> &Arc<dyn Communicator> {
        &self.comm
    }

    /// Complete a sum over rows: each rank passes its partial sums, all get the total.
    pub fn sum<E: Element>(&self, data: &mut [E]) {
        let _op = self.comm.operation(Operation::Overlap);
        self.comm.allreduce_sum(data, CommClass::GVector);
    }

    /// Γ-real: (position of G, position of -G) in the transform's local coefficients for each
    /// local plane wave.
    pub fn mirror_positions(&self) -> impl Iterator<Item = (usize, usize)> + '_ {
        self.plus.iter().copied().zip(self.minus.iter().copied())
    }

    /// Coefficients per field in the transform's local order.
    pub fn n_coeffs(&self) -> usize {
        self.n_coeffs
    }

    /// This rank's real-space points (shared with the density grid).
    pub fn layout(&self) -> &RealLayout {
        &self.layout
    }

    /// `fields` (`nf` complex fields of [`Self::n_coeffs`] local coefficients each) replaced by
    /// `scale * FFT[v(r) FFT^-1[field]]` with `v` the potential at this rank's real-space
    /// points. Collective.
    pub fn apply_potential(&self, fields: &mut [Complex64], nf: usize, v: &[f64], scale: f64) {
        self.rounds(fields, nf, |fft, real, chunk, nb| {
            let nr = fft.n_real_local();
            let real = grow(real, nb * nr);
            fft.backward_bands(chunk, nb, FIELDS_PER_EXCHANGE.min(nb), real);
            for field in real.chunks_mut(nr) {
                for (z, x) in field.iter_mut().zip(v) {
                    *z *= x;
                }
            }
            fft.forward_bands_scaled(real, nb, FIELDS_PER_EXCHANGE.min(nb), scale, chunk);
        });
    }

    /// The values at this rank's real-space points of `nf` fields given by their local
    /// coefficients (`nf * n_coeffs`): `nf * layout().len()` values, field after field.
    /// Collective.
    pub fn to_real(&self, coeffs: &[Complex64], nf: usize) -> Vec<Complex64> {
        let mut fft = self.fft.lock().unwrap_or_else(|e| e.into_inner());
        let mut real = vec![Complex64::new(0.0, 0.0); nf * fft.n_real_local()];
        fft.backward_bands(coeffs, nf, FIELDS_PER_EXCHANGE.min(nf).max(1), &mut real);
        real
    }

    /// The inverse of [`Self::to_real`] with the coefficients multiplied by `scale`: `real`
    /// (`nf` fields at this rank's points, overwritten) to `nf * n_coeffs` local
    /// coefficients. Collective.
    pub fn from_real(&self, real: &mut [Complex64], nf: usize, scale: f64) -> Vec<Complex64> {
        let mut fft = self.fft.lock().unwrap_or_else(|e| e.into_inner());
        let mut coeffs = vec![Complex64::new(0.0, 0.0); nf * self.n_coeffs];
        let per = FIELDS_PER_EXCHANGE.min(nf).max(1);
        fft.forward_bands_scaled(real, nf, per, scale, &mut coeffs);
        coeffs
    }

    /// `acc[r] += sum_f (wr_f Re(psi_f(r))^2 + wi_f Im(psi_f(r))^2)` at this rank's
    /// real-space points `r`, with `psi_f = FFT^-1[field f]` and `weights[f] = (wr_f, wi_f)`.
    /// `fields` is used as scratch. Collective.
    pub fn add_density(&self, fields: &mut [Complex64], weights: &[(f64, f64)], acc: &mut [f64]) {
        let mut at = 0;
        self.rounds(fields, weights.len(), |fft, real, chunk, nb| {
            let nr = fft.n_real_local();
            let real = grow(real, nb * nr);
            fft.backward_bands(chunk, nb, FIELDS_PER_EXCHANGE.min(nb), real);
            for field in real.chunks(nr) {
                let (wr, wi) = weights[at];
                at += 1;
                for (a, z) in acc.iter_mut().zip(field) {
                    *a += wr * z.re * z.re + wi * z.im * z.im;
                }
            }
        });
    }

    /// Run `f(plan, real buffer, coefficients of up to FIELDS_PER_ROUND fields, count)` over
    /// `fields` in rounds; every rank runs the same rounds (collective transforms inside).
    fn rounds(
        &self,
        fields: &mut [Complex64],
        nf: usize,
        mut f: impl FnMut(&mut DistFft, &mut Vec<Complex64>, &mut [Complex64], usize),
    ) {
        let ng = self.n_coeffs;
        assert_eq!(fields.len(), nf * ng, "KDist: field coefficients");
        let mut fft = self.fft.lock().unwrap_or_else(|e| e.into_inner());
        let mut real = self.real.lock().unwrap_or_else(|e| e.into_inner());
        let mut start = 0;
        while start < nf {
            let nb = FIELDS_PER_ROUND.min(nf - start);
            f(
                &mut fft,
                &mut real,
                &mut fields[start * ng..(start + nb) * ng],
                nb,
            );
            start += nb;
        }
    }
}

/// `m` passed through the in-place collective `sum` (a sum over a G-vector group, or any other
/// collective on a flat slice, such as a broadcast): the matrix is packed column-major, handed
/// over in one call, and unpacked.
pub fn sum_matrix<T: planewave_linalg::Scalar>(
    m: planewave_linalg::Mat<T>,
    sum: impl FnOnce(&mut [T]),
) -> planewave_linalg::Mat<T> {
    let (r, c) = (m.nrows(), m.ncols());
    let mut flat: Vec<T> = (0..c)
        .flat_map(|j| (0..r).map(move |i| (i, j)))
        .map(|(i, j)| m[(i, j)])
        .collect();
    sum(&mut flat);
    planewave_linalg::Mat::from_fn(r, c, |i, j| flat[i + j * r])
}

fn grow(v: &mut Vec<Complex64>, n: usize) -> &mut [Complex64] {
    if v.len() < n {
        v.resize(n, Complex64::new(0.0, 0.0));
    }
    &mut v[..n]
}
