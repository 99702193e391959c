//! Test only: a term that shifts every eigenvalue by a constant `c` (Ha), written once as a
//! density term (the potential `c` at every grid point) and once as an operator term (a
//! Fourier-diagonal `c` on every plane wave). Both leave the density unchanged and add
//! `c N_electrons` to the energy. They show that a new term is this file plus one line in
//! [`super::term::standard`], which adds the one a test asks for on its thread ([`with`]).

use super::term::{Share, State, Term};
use crate::bands::BandScalar;
use crate::basis::Basis;
use crate::operators::Operator;
use std::cell::Cell;

/// How the shift acts.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Kind {
    /// Through its potential (a density term).
    Potential,
    /// Through its operator on the bands.
    Operator,
}

thread_local! {
    static ACTIVE: Cell<Option<(Kind, f64)>> = const { Cell::new(None) };
}

/// Run `f` with the shift `c` (Ha) of kind `kind` in this thread's term lists.
pub fn with<R>(kind: Kind, c: f64, f: impl FnOnce() -> R) -> R {
    ACTIVE.with(|a| a.set(Some((kind, c))));
    let r = f();
    ACTIVE.with(|a| a.set(None));
    r
}

/// The shift a test asked for on this thread, if any.
pub fn active<'a, T: BandScalar + 'a>(basis: &Basis) -> Option<Box<dyn Term<T> + 'a>> {
    let (kind, c) = ACTIVE.with(|a| a.get())?;
    Some(match kind {
        Kind::Potential => Box::new(AsPotential(c)),
        Kind::Operator => Box::new(AsOperator {
            c,
            diagonal: basis.kpoints.iter().map(|k| vec![c; k.dim()]).collect(),
        }),
    })
}

/// The shift as a density term.
struct AsPotential(f64);

impl<T: BandScalar> Term<T> for AsPotential {
    fn name(&self) -> &'static str {
        "constant_shift"
    }
    fn energy(&self, s: &State<'_, T>) -> Option<Share<f64>> {
        let electrons: f64 = s.rho.total_r().iter().sum::<f64>() * s.basis.dv();
        Some(Share::Grid(self.0 * electrons))
    }
    fn potential(&self, s: &State<'_, T>) -> Option<Vec<Vec<f64>>> {
        Some(vec![vec![self.0; s.basis.rho_real_len()]; s.rho.r.len()])
    }
}

/// The shift as an operator term.
struct AsOperator {
    c: f64,
    /// `c` per band-vector component, per k-point.
    diagonal: Vec<Vec<f64>>,
}

impl<T: BandScalar> Term<T> for AsOperator {
    fn name(&self) -> &'static str {
        "constant_shift"
    }
    fn operator<'s>(
        &'s self,
        _s: &State<'s, T>,
        (_, k): (usize, usize),
    ) -> Option<Operator<'s, T>> {
        Some(Operator::FourierDiagonal(&self.diagonal[k]))
    }
    fn energy(&self, s: &State<'_, T>) -> Option<Share<f64>> {
        let b = s.bands?;
        let par = &s.basis.parallel;
        let mut e = 0.0;
        for (sp, k) in par.owned_blocks(b.psi.len(), s.basis.kpoints.len()) {
            let psi = &b.psi[sp][k];
            let mut norms: Vec<f64> = (0..psi.ncols())
                .map(|n| psi.col_as_slice(n).iter().map(|x| x.abs2()).sum())
                .collect();
            s.basis.kpoints[k].sum_over_g(&mut norms);
            e += norms
                .iter()
                .zip(&b.weights[sp][k])
                .map(|(n, w)| self.c * n * w)
                .sum::<f64>();
        }
        Some(Share::Blocks(e))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{input, scf, setup};

    /// (total energy, eigenvalues of every block, electrons) of si2_lda_gth with `shift`.
    fn si2(shift: Option<(Kind, f64)>) -> (f64, Vec<f64>, f64) {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../tests/data/qe/si2_lda_gth/pw.in");
        let mut spec = input::load(&path).unwrap();
        spec.scf.energy_tolerance = 1e-11;
        spec.scf.density_tolerance = 1e-10;
        let s = setup::build(spec).unwrap();
        let run = || scf::run(&s.model, &s.basis, &s.params, |_| {}).unwrap();
        let r = match shift {
            Some((kind, c)) => with(kind, c, run),
            None => run(),
        };
        assert!(r.converged);
        let eig = r.eigenvalues.into_iter().flatten().flatten().collect();
        (r.energies.total(), eig, s.model.n_electrons)
    }

    #[test]
    fn a_constant_shift_moves_energy_and_eigenvalues_by_its_analytic_amount() {
        let c = 0.25;
        let (e0, eig0, n) = si2(None);
        for kind in [Kind::Potential, Kind::Operator] {
            let (e, eig) = {
                let (e, eig, _) = si2(Some((kind, c)));
                (e, eig)
            };
            assert!(
                (e - e0 - c * n).abs() < 1e-8,
                "{kind:?}: {e} - {e0} != {c} x {n}"
            );
            // Occupied bands tightly; the empty ones as converged as the SCF leaves them.
            for (a, b) in eig.iter().zip(&eig0) {
                assert!((a - b - c).abs() < 1e-5, "{kind:?}: {a} - {b} != {c}");
            }
        }
    }
}
