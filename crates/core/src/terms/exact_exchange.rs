//! The Fock exchange energy of a hybrid functional: `E_x = (1/2) sum_nk w_nk <psi_nk|V_x|psi_nk>`
//! with the compressed operators of the state ([`crate::exx::ace`]), which are exact on the
//! bands they were built from. Zero when the state has none (semilocal functionals, the
//! semilocal start of a hybrid run). It adds no potential (the operator acts on the bands in
//! the Hamiltonian) and, for norm-conserving pseudopotentials, no explicit force.

use super::term::{Share, State, Term};
use crate::bands::BandScalar;

/// The exact-exchange term.
pub struct ExactExchange;

impl<T: BandScalar> Term<T> for ExactExchange {
    fn name(&self) -> &'static str {
        "exact_exchange"
    }
    fn energy(&self, s: &State<'_, T>) -> Share<f64> {
        let (Some(ace), Some(bands)) = (s.ace, s.bands) else {
            return Share::Whole(0.0);
        };
        let mut e = 0.0;
        for ((ace_s, psi_s), w_s) in ace.iter().zip(bands.psi).zip(bands.weights) {
            for (k, op) in ace_s.iter().enumerate() {
                if let Some(op) = op {
                    let kpt = &s.basis.kpoints[k];
                    let v = op.band_energies(kpt, psi_s[k].as_ref());
                    e += 0.5 * v.iter().zip(&w_s[k]).map(|(v, w)| v * w).sum::<f64>();
                }
            }
        }
        Share::Blocks(e)
    }
}
