//! The density sphere and FFT grid as this rank holds them ([`Basis`]'s `rho_*` fields and
//! [`Basis::rho_dist`]): transforms between sphere coefficients and grid values, sums, and the
//! whole sphere when something needs it.
//!
//! Contract:
//! - Without a deal every entry and point is local and the transforms are the serial FFT; with
//!   one ([`crate::rho_dist`]) a rank holds its sticks and its slab (or pencil bundle), the
//!   transforms are collective on the G-vector group and sums need [`Basis::sum_over_rho`].
//! - Real fields go two per complex transform ([`Basis::rho_to_real_many`],
//!   [`Basis::rho_to_sphere_many`]): `a + ib` transforms to `a(r) + i b(r)`; back, the two
//!   fields separate through `c(G)` and `c(-G)*`, which needs every entry's mirror -G on the
//!   same rank ([`Basis::rho_mirror`]: always without a deal, with mirror-paired sticks on a
//!   slab; set only when it holds on every rank of the group, since pairing changes the number
//!   of collective transforms); otherwise they go one by one. Results are the same either way.

use crate::basis::Basis;
use num_complex::Complex64;
use planewave_comm::Element;

impl Basis {
    /// Volume per grid point (bohr^3): the weight of a grid sum in an integral.
    pub fn dv(&self) -> f64 {
        self.volume / self.grid_len() as f64
    }

    /// Index of G = 0 among this rank's density-sphere entries (None when another rank of
    /// the G-vector group holds it).
    pub fn rho_g0_local(&self) -> Option<usize> {
        self.rho_millers.iter().position(|m| *m == [0, 0, 0])
    }

    /// Number of density-sphere vectors over all ranks.
    pub fn rho_global_len(&self) -> usize {
        self.rho_dist
            .as_ref()
            .map_or(self.rho_millers.len(), |d| d.global_millers().len())
    }

    /// Number of this rank's points of the FFT grid (all of them unless the grid is dealt).
    pub fn rho_real_len(&self) -> usize {
        self.rho_dist
            .as_ref()
            .map_or(self.grid_len(), |d| d.layout().len())
    }

    /// Grid indices `(i0, i1, i2)` of this rank's grid point `l` (C order, i2 fastest, without
    /// a deal; the deal's own order with one).
    pub fn rho_real_point(&self, l: usize) -> [usize; 3] {
        match &self.rho_dist {
            Some(d) => d.layout().point(l),
            None => {
                let [_, n1, n2] = self.grid.dims;
                [l / (n1 * n2), (l / n2) % n1, l % n2]
            }
        }
    }

    /// Complete a sum over the density sphere or grid: this rank's partial sums become the
    /// total on every rank of the G-vector group (nothing to do when they are whole).
    /// Collective on the group.
    pub fn sum_over_rho<E: Element>(&self, data: &mut [E]) {
        if let Some(d) = &self.rho_dist {
            d.sum(data);
        }
    }

    /// The whole density sphere's Miller indices, in global order.
    pub fn rho_global_millers(&self) -> &[[i32; 3]] {
        self.rho_dist
            .as_ref()
            .map_or(&self.rho_millers, |d| d.global_millers())
    }

    /// A field on the whole density sphere (global order) from this rank's entries.
    /// Collective on the G-vector group.
    pub fn rho_gather(&self, local: &[Complex64]) -> Vec<Complex64> {
        match &self.rho_dist {
            Some(d) => d.gather(local),
            None => local.to_vec(),
        }
    }

    /// Values at this rank's grid points of a real field given on the density sphere.
    /// Collective on the G-vector group.
    pub fn rho_to_real(&self, field_g: &[Complex64]) -> Vec<f64> {
        use rayon::prelude::*;
        self.rho_backward_with(field_g, |z| z.par_iter().map(|v| v.re).collect())
    }

    /// Density-sphere coefficients (`f(G) = (1/N) sum_r f(r) e^{-iGr}`) of a real field given
    /// at this rank's grid points. Collective on the G-vector group.
    pub fn rho_to_sphere(&self, field_r: &[f64]) -> Vec<Complex64> {
        self.rho_forward_of(|grid| {
            for (z, &x) in grid.iter_mut().zip(field_r) {
                *z = Complex64::new(x, 0.0);
            }
        })
    }

    /// [`Self::rho_to_real`] of every field, two per complex transform. Collective.
    pub fn rho_to_real_many(&self, fields: &[&[Complex64]]) -> Vec<Vec<f64>> {
        use rayon::prelude::*;
        let mut out = Vec::with_capacity(fields.len());
        for pair in fields.chunks(2) {
            if let [a, b] = pair {
                let c: Vec<Complex64> = a
                    .par_iter()
                    .zip(*b)
                    .map(|(x, y)| x + Complex64::i() * y)
                    .collect();
                let (re, im) = self.rho_backward_with(&c, |z| {
                    (
                        z.par_iter().map(|v| v.re).collect(),
                        z.par_iter().map(|v| v.im).collect(),
                    )
                });
                out.push(re);
                out.push(im);
            } else {
                out.push(self.rho_to_real(pair[0]));
            }
        }
        out
    }

    /// [`Self::rho_to_sphere`] of every field, two per complex transform when every entry's
    /// mirror is local ([`Basis::rho_mirror`]), else one by one. Collective.
    pub fn rho_to_sphere_many(&self, fields: &[&[f64]]) -> Vec<Vec<Complex64>> {
        let Some(mirror) = &self.rho_mirror else {
            return fields.iter().map(|f| self.rho_to_sphere(f)).collect();
        };
        use rayon::prelude::*;
        let mut out = Vec::with_capacity(fields.len());
        for pair in fields.chunks(2) {
            if let [a, b] = pair {
                let c = self.rho_forward_of(|grid| {
                    grid.par_iter_mut()
                        .zip(*a)
                        .zip(*b)
                        .for_each(|((z, &x), &y)| *z = Complex64::new(x, y));
                });
                // a(G) = (c(G) + c(-G)*)/2, b(G) = (c(G) - c(-G)*)/(2i).
                let (fa, fb) = mirror
                    .par_iter()
                    .zip(&c)
                    .map(|(&m, &cg)| {
                        let cm = c[m].conj();
                        (0.5 * (cg + cm), Complex64::new(0.0, -0.5) * (cg - cm))
                    })
                    .unzip();
                out.push(fa);
                out.push(fb);
            } else {
                out.push(self.rho_to_sphere(pair[0]));
            }
        }
        out
    }

    /// `f` of the complex values at this rank's grid points of a field on the density sphere
    /// (serial: on the thread's scratch grid, no grid allocated). Collective on the G-vector
    /// group.
    pub(crate) fn rho_backward_with<R>(
        &self,
        field_g: &[Complex64],
        f: impl FnOnce(&[Complex64]) -> R,
    ) -> R {
        if let Some(d) = &self.rho_dist {
            return f(&d.backward(field_g));
        }
        crate::scratch::with_grid(self.grid_len(), |grid| {
            grid.fill(Complex64::new(0.0, 0.0));
            self.rho_map.scatter(field_g, grid);
            self.fft.backward(grid);
            f(grid)
        })
    }

    /// Every complex field at this rank's grid points replaced by its convolution with
    /// `kernel` over the density sphere, `FFT^-1[kernel FFT[f]]` (`kernel` on this rank's
    /// entries): on a G-vector group one pipelined sequence of transforms
    /// ([`crate::rho_dist::RhoDist::convolve`]), serially on rayon threads. Collective on the
    /// G-vector group.
    pub(crate) fn rho_convolve(&self, fields: &mut [Vec<Complex64>], kernel: &[f64]) {
        if let Some(d) = &self.rho_dist {
            return d.convolve(fields, kernel);
        }
        use rayon::prelude::*;
        fields.par_iter_mut().for_each(|f| {
            let mut c = self.rho_forward_of(|grid| grid.copy_from_slice(f));
            c.iter_mut().zip(kernel).for_each(|(z, v)| *z *= v);
            self.rho_backward_with(&c, |z| f.copy_from_slice(z));
        });
    }

    /// Density-sphere coefficients (with 1/N) of the complex field `fill` writes at this
    /// rank's grid points (serial: on the thread's scratch grid). Collective on the G-vector
    /// group.
    pub(crate) fn rho_forward_of(&self, fill: impl FnOnce(&mut [Complex64])) -> Vec<Complex64> {
        if let Some(d) = &self.rho_dist {
            let mut field = vec![Complex64::new(0.0, 0.0); d.layout().len()];
            fill(&mut field);
            return d.forward(field);
        }
        crate::scratch::with_grid(self.grid_len(), |grid| {
            fill(grid);
            self.fft.forward(grid);
            let mut out = vec![Complex64::new(0.0, 0.0); self.rho_millers.len()];
            self.rho_map.gather(grid, 1.0, &mut out);
            out
        })
    }
}

/// For every entry of `millers`, the position of its mirror -G in `millers`; None when some
/// mirror is missing (on another rank of a G-vector group).
pub(crate) fn mirror_positions(millers: &[[i32; 3]]) -> Option<Vec<usize>> {
    let index = crate::miller_lookup::MillerLookup::new(millers);
    millers
        .iter()
        .map(|m| index.get(&[-m[0], -m[1], -m[2]]))
        .collect()
}
