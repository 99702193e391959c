//! The occupied orbitals of every irreducible (spin, k) block, dealt by band group, and
//! their images at k + q (QE's `exxinit`, which gathers the orbitals of all pools).
//!
//! Contract: [`Sources::gather`] gives every rank its band group's share of every block's
//! occupied orbitals (the bands the group computes, [`crate::parallel::Parallel::local_bands`])
//! over the whole sphere: the owners (the block's k-point group; each rank its own plane
//! waves of a G-vector group) put their rows into a whole-sphere matrix that is zero
//! elsewhere, summed over the G-vector group and then over the k-point groups, so every entry
//! is one owner's value plus zeros, bit for bit. [`Sources::accumulate_image`] passes the
//! shares of one image's source around the band-group ring (CASTEP's systolic pattern, as
//! for one q-point and in the subspace products); each group builds the arriving orbitals at
//! k + q on its grid points (through the density sphere, which holds every k' + G of the
//! wavefunction cutoff) and pairs them with its own bands. Collective on the band group and
//! the G-vector group.

use super::kq::Image;
use super::operator::{Pairing, EPS_OCCUPATION};
use crate::bands::BandScalar;
use crate::basis::Basis;
use crate::model::Model;
use crate::occupation::Occupations;
use num_complex::Complex64;
use planewave_comm::{CommClass, CommExt};
use planewave_linalg::Mat;

/// This band group's share of one block's occupied orbitals over its whole sphere.
struct Source {
    /// The sphere's Miller indices, in the k-point's global order.
    millers: Vec<[i32; 3]>,
    /// Coefficients, `millers.len()` per band, band after band: the occupied bands of this
    /// rank's band group.
    coeffs: Vec<Complex64>,
    /// Occupations per spin of the occupied bands of every band group's share, by group.
    occupations: Vec<Vec<f64>>,
}

/// This band group's share of the occupied orbitals of every irreducible (spin, k) block.
pub struct Sources {
    /// Per spin channel and k-point.
    blocks: Vec<Vec<Source>>,
    /// Position of every Miller index on this rank's density sphere.
    index: crate::miller_lookup::MillerLookup,
}

impl Sources {
    /// This band group's share of every block's occupied bands (complex bands only: a q grid
    /// needs k-points) from the blocks this rank holds. Collective on the world.
    pub fn gather<T: BandScalar>(
        model: &Model,
        basis: &Basis,
        psi: &[Vec<Mat<T>>],
        occ: &Occupations,
    ) -> Self {
        let par = &*basis.parallel;
        let topo = par.topology();
        let (groups, me) = (par.band_groups(), topo.band_group);
        let gmax = (2.0 * basis.ecut).sqrt();
        let mut blocks = Vec::with_capacity(psi.len());
        for (s, psi_s) in psi.iter().enumerate() {
            let mut row = Vec::with_capacity(psi_s.len());
            for (k, kpt) in basis.kpoints.iter().enumerate() {
                assert!(!kpt.is_gamma_real(), "a q grid needs complex bands");
                let millers: Vec<[i32; 3]> = crate::basis::sphere(&model.crystal, kpt.frac, gmax)
                    .into_iter()
                    .map(|p| p.0)
                    .collect();
                let x: Vec<f64> = occ.occ[s][k]
                    .iter()
                    .map(|f| f / model.max_occupation())
                    .collect();
                // Band group b's occupied bands, as positions in its local list.
                let kept = |b: usize| -> Vec<usize> {
                    (b..x.len())
                        .step_by(groups)
                        .enumerate()
                        .filter(|&(_, j)| x[j] > EPS_OCCUPATION)
                        .map(|(l, _)| l)
                        .collect()
                };
                let occupations: Vec<Vec<f64>> = (0..groups)
                    .map(|b| kept(b).iter().map(|&l| x[b + l * groups]).collect())
                    .collect();
                let mine = kept(me);
                let n = millers.len();
                let mut coeffs = vec![Complex64::new(0.0, 0.0); n * mine.len()];
                if par.owns(s, k) {
                    let local = T::to_plane_waves(kpt, &psi_s[k], &mine);
                    let rows: Vec<usize> = match &kpt.dist {
                        Some(d) => d.local_plane_waves().to_vec(),
                        None => (0..kpt.npw()).collect(),
                    };
                    for (j, col) in coeffs.chunks_mut(n.max(1)).enumerate() {
                        for (h, &g) in rows.iter().enumerate() {
                            col[g] = local[(h, j)];
                        }
                    }
                }
                if topo.gvector.size() > 1 {
                    topo.gvector.allreduce_sum(&mut coeffs, CommClass::GVector);
                }
                par.sum_over_kgroups(&mut coeffs);
                row.push(Source {
                    millers,
                    coeffs,
                    occupations,
                });
            }
            blocks.push(row);
        }
        Self {
            blocks,
            index: crate::miller_lookup::MillerLookup::new(&basis.rho_millers),
        }
    }

    /// `w_i += sum_j x_j u_j(r) W_ij(r)` ([`Pairing::accumulate`]) over the occupied orbitals
    /// of spin `s` at the image `im`, with the scaled `kernel` of its q, for this rank's bands
    /// `u` of k at its grid points: every band group's share in turn, around the band-group
    /// ring. Collective on the band group and the G-vector group.
    #[allow(clippy::too_many_arguments)]
    pub fn accumulate_image<T: BandScalar>(
        &self,
        basis: &Basis,
        s: usize,
        im: &Image,
        kernel: &[f64],
        u: &[Vec<T>],
        w: &mut [Vec<T>],
    ) {
        use planewave_comm::ring::{Ring, RingOrder};
        let src = &self.blocks[s][im.source];
        let targets = self.targets(basis, src, im);
        let comm = basis.parallel.band_comm();
        let ring = Ring::new(comm.size(), comm.rank(), RingOrder::Natural);
        let share = src.coeffs.clone();
        ring.systolic(comm.as_ref(), share, CommClass::Band, |owner, coeffs| {
            let x = &src.occupations[owner];
            let n = src.millers.len().max(1);
            let fields = coeffs
                .chunks(n)
                .map(|c| image_field(basis, &targets, c))
                .collect();
            Pairing::new(fields, x, kernel).accumulate(basis, u, w);
        });
    }

    /// For every plane wave of `src`, where it lands on this rank's density sphere at the
    /// image `im` (None: elsewhere), the phase it takes there, and whether it is conjugated.
    fn targets(&self, basis: &Basis, src: &Source, im: &Image) -> Vec<Target> {
        let p = basis.kpoints[im.source].frac;
        src.millers
            .iter()
            .map(|m| {
                let (g, phase) = im.map(p, *m, Complex64::new(1.0, 0.0));
                (self.index.get(&g), phase, im.time_reversal)
            })
            .collect()
    }
}

/// Where a plane wave of a source lands at an image: position on this rank's density sphere,
/// phase, conjugation ([`super::kq::Image::map`] is linear in the coefficient: `c e` or
/// `(c e)* = c* e*`).
type Target = (Option<usize>, Complex64, bool);

/// One orbital of a source (`coeffs` on its sphere) at an image: its periodic part at this
/// rank's grid points. Collective on the G-vector group.
fn image_field<T: BandScalar>(basis: &Basis, targets: &[Target], coeffs: &[Complex64]) -> Vec<T> {
    let mut field = vec![Complex64::new(0.0, 0.0); basis.rho_millers.len()];
    for (&(at, phase, conj), &c) in targets.iter().zip(coeffs) {
        if let Some(i) = at {
            field[i] = if conj { c.conj() * phase } else { c * phase };
        }
    }
    basis.rho_backward_with(&field, |u| {
        u.iter().map(|z| T::from_re_im(z.re, z.im)).collect()
    })
}
