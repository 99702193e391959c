//! The augmentation term of ultrasoft species: the forces and stress of their augmentation
//! charges, which move with their atoms through the local potential (`-Σ becsum ∂ΔD/∂τ`,
//! [`crate::augmentation::AugmentationCharges::forces`]) and keep their shape while the cell
//! strains ([`crate::augmentation::AugmentationCharges::stress`]). Its energy is already in the local,
//! Hartree and XC terms (they see the augmented density), and its potential acts through the
//! screened coupling of the nonlocal term, so it has neither of its own.
//!
//! Contract: forces and stress need the bands and the state's local potential
//! ([`State::local_potential`]); without either the term gives none.

use super::term::{Share, State, Term};
use crate::augmentation::{becsum, AugmentationCharges, Becsum};
use crate::bands::BandScalar;
use num_complex::Complex64;
use std::sync::Arc;

/// The augmentation term (present only with ultrasoft species).
pub struct Augmentation {
    charges: Arc<AugmentationCharges>,
}

impl Augmentation {
    /// The term of a model's charges on its basis (shared with the SCF's density).
    pub fn new(charges: Arc<AugmentationCharges>) -> Self {
        Self { charges }
    }
}

impl<T: BandScalar> Term<T> for Augmentation {
    fn name(&self) -> &'static str {
        "augmentation"
    }

    fn forces(&self, s: &State<'_, T>) -> Option<Share<Vec<[f64; 3]>>> {
        let (v_g, b) = self.inputs(s)?;
        Some(Share::Whole(
            self.charges.forces(s.model, s.basis, &v_g, &b),
        ))
    }

    fn stress(&self, s: &State<'_, T>) -> Option<Share<[[f64; 3]; 3]>> {
        let (v_g, b) = self.inputs(s)?;
        Some(Share::Whole(
            self.charges.stress(s.model, s.basis, &v_g, &b),
        ))
    }
}

impl Augmentation {
    /// The local potential on the density sphere and the bands' becsum of `s` (None
    /// without bands or potential). Collective.
    fn inputs<T: BandScalar>(&self, s: &State<'_, T>) -> Option<(Vec<Vec<Complex64>>, Becsum)> {
        let (bands, v) = (s.bands?, s.local_potential?);
        let fields: Vec<&[f64]> = v.iter().map(Vec::as_slice).collect();
        let v_g = s.basis.rho_to_sphere_many(&fields);
        let b = becsum(
            s.model,
            s.basis,
            &self.charges,
            bands.psi,
            bands.weights,
            |_, _| None,
        );
        Some((v_g, b))
    }
}
