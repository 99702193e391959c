//! The Fock exchange energy of a hybrid functional: `E_x = (1/2) sum_nk w_nk <psi_nk|V_x|psi_nk>`
//! with the compressed operators of the state ([`crate::exx::ace`]), which are exact on the
//! bands they were built from. Zero when the state has none (semilocal functionals, the
//! semilocal start of a hybrid run). Its operator is the state's compressed operator of each
//! block (low-rank); it adds no potential and, for norm-conserving pseudopotentials, no
//! explicit force.

use super::term::{Share, State, Term};
use crate::bands::BandScalar;
use crate::operators::Operator;

/// The term's name, under which [`crate::energies::Energies`] holds the Fock energy.
pub const EXACT_EXCHANGE: &str = "exact_exchange";

/// The exact-exchange term.
pub struct ExactExchange;

impl<T: BandScalar> Term<T> for ExactExchange {
    fn name(&self) -> &'static str {
        EXACT_EXCHANGE
    }
    fn label(&self) -> &'static str {
        "exact exchange"
    }
    fn energy(&self, s: &State<'_, T>) -> Option<Share<f64>> {
        let (Some(ace), Some(bands)) = (s.ace, s.bands) else {
            return Some(Share::Whole(0.0));
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
        Some(Share::Blocks(e))
    }
    fn operator<'s>(
        &'s self,
        s: &State<'s, T>,
        (sp, k): (usize, usize),
    ) -> Option<Operator<'s, T>> {
        let op = s.ace?[sp][k].as_ref()?;
        Some(Operator::LowRank(op))
    }
}
