//! Occupation smearing as the input declares it: its kind and width (Ha). The occupation and
//! entropy functions are the physics crate's (`planewave_core::smearing`).

/// Smearing kind and width (Ha).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Smearing {
    /// No smearing: integer occupations (insulators, fixed moments).
    None,
    /// Gaussian of the given width.
    Gaussian(f64),
    /// Fermi–Dirac at temperature k_B T = width.
    FermiDirac(f64),
    /// Methfessel–Paxton, first order.
    MethfesselPaxton(f64),
    /// Marzari–Vanderbilt cold smearing.
    MarzariVanderbilt(f64),
}

impl Smearing {
    /// Width in Ha (0 for `None`).
    pub fn width(&self) -> f64 {
        match *self {
            Smearing::None => 0.0,
            Smearing::Gaussian(w)
            | Smearing::FermiDirac(w)
            | Smearing::MethfesselPaxton(w)
            | Smearing::MarzariVanderbilt(w) => w,
        }
    }

    /// Name for output.
    pub fn name(&self) -> &'static str {
        match self {
            Smearing::None => "none",
            Smearing::Gaussian(_) => "gaussian",
            Smearing::FermiDirac(_) => "fermi-dirac",
            Smearing::MethfesselPaxton(_) => "methfessel-paxton",
            Smearing::MarzariVanderbilt(_) => "marzari-vanderbilt",
        }
    }
}
