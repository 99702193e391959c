//! A density of states as the input declares it (TOML `[dos]`; QE's `nscf` + `dos.x`).
//!
//! Contract: the k-points of the non-self-consistent step (a denser grid than the SCF's,
//! reduced by the crystal's symmetry), the method, the Gaussian width (unused by tetrahedra)
//! and the energy step, in Ha. The TOML table is read here.

use serde::Deserialize;

use crate::kpoints::KpointsValue;
use crate::named::Energy;
use crate::toml::Doc;
use crate::units::{EV_PER_HARTREE, HARTREE_PER_RYDBERG};
use crate::{InputError, Kpoints};

/// How the k-point sum becomes a density of states.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum DosMethod {
    /// Gaussian broadening of every eigenvalue (dos.x's `bz_sum = 'smearing'`, `ngauss = 0`).
    #[default]
    Gaussian,
    /// The linear tetrahedron method on the grid (dos.x's `bz_sum = 'tetrahedra'` and
    /// `'tetrahedra_lin'`).
    Tetrahedra,
    /// The optimised tetrahedron method (Kawamura et al.; dos.x's `'tetrahedra_opt'`).
    TetrahedraOpt,
    /// Methfessel–Paxton broadening of first order (dos.x's `ngauss = 1`).
    MethfesselPaxton,
    /// Marzari–Vanderbilt cold broadening (dos.x's `ngauss = -1`).
    MarzariVanderbilt,
    /// Fermi–Dirac broadening, the width as k_B T (dos.x's `ngauss = -99`).
    FermiDirac,
}

impl DosMethod {
    /// Whether the method broadens each eigenvalue (by `width`) rather than integrating by
    /// tetrahedra.
    pub fn broadens(self) -> bool {
        !matches!(self, DosMethod::Tetrahedra | DosMethod::TetrahedraOpt)
    }

    /// The broadening of a smearing method of width `width` (Ha) as a smearing kind; None for
    /// tetrahedra.
    pub fn smearing(self, width: f64) -> Option<crate::Smearing> {
        use crate::Smearing as S;
        Some(match self {
            DosMethod::Gaussian => S::Gaussian(width),
            DosMethod::MethfesselPaxton => S::MethfesselPaxton(width),
            DosMethod::MarzariVanderbilt => S::MarzariVanderbilt(width),
            DosMethod::FermiDirac => S::FermiDirac(width),
            DosMethod::Tetrahedra | DosMethod::TetrahedraOpt => return None,
        })
    }

    /// dos.x's and projwfc.x's `ngauss`: 0, 1, -1 or -99.
    pub fn of_ngauss(ngauss: i64) -> Option<Self> {
        Some(match ngauss {
            0 => DosMethod::Gaussian,
            1 => DosMethod::MethfesselPaxton,
            -1 => DosMethod::MarzariVanderbilt,
            -99 => DosMethod::FermiDirac,
            _ => return None,
        })
    }
}

/// What `planewave dos` computes after the SCF.
#[derive(Debug, Clone, PartialEq)]
pub struct DosSpec {
    /// The k-points of the fixed-density step (default: the SCF's grid, doubled).
    pub kpoints: Option<Kpoints>,
    /// Gaussian broadening or tetrahedra (which need a grid of at least 2 points a side).
    pub method: DosMethod,
    /// Gaussian broadening: the width s of exp(-((E - e)/s)^2) / (s sqrt(pi)), Ha (default
    /// 0.01 Ry, dos.x's `degauss` of the reference runs).
    pub width: f64,
    /// Energy step of the output grid, Ha (default 0.01 eV, dos.x's `DeltaE`).
    pub step: f64,
    /// Bands per k-point (default: the SCF's).
    pub nbands: Option<usize>,
}

impl Default for DosSpec {
    fn default() -> Self {
        DosSpec {
            kpoints: None,
            method: DosMethod::Gaussian,
            width: 0.01 * HARTREE_PER_RYDBERG,
            step: 0.01 / EV_PER_HARTREE,
            nbands: None,
        }
    }
}

/// The TOML `[dos]` table.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct DosTable {
    kpoints: Option<KpointsValue>,
    method: Option<String>,
    width: Option<Energy>,
    step: Option<Energy>,
    nbands: Option<i64>,
}

impl DosTable {
    pub(crate) fn read(self, doc: &Doc) -> Result<DosSpec, InputError> {
        let method = match self
            .method
            .as_deref()
            .map(|m| m.trim().to_ascii_lowercase())
        {
            None => DosMethod::Gaussian,
            Some(m) => match m.replace('-', "_").as_str() {
                "gaussian" => DosMethod::Gaussian,
                "methfessel_paxton" | "mp" => DosMethod::MethfesselPaxton,
                "marzari_vanderbilt" | "cold" | "mv" => DosMethod::MarzariVanderbilt,
                "fermi_dirac" | "fd" => DosMethod::FermiDirac,
                "tetrahedra" | "tetrahedra_lin" => DosMethod::Tetrahedra,
                "tetrahedra_opt" => DosMethod::TetrahedraOpt,
                other => {
                    let msg = format!("unknown DOS method `{other}`");
                    let hint = "use \"gaussian\", \"methfessel-paxton\", \"marzari-vanderbilt\", \"fermi-dirac\", \"tetrahedra_opt\" (QE's optimised tetrahedra) or \"tetrahedra\" (linear)";
                    return Err(doc.err("dos.method", msg, hint));
                }
            },
        };
        let kpoints = self.kpoints.map(|k| k.0);
        if !method.broadens() {
            if let Some(k) = kpoints.as_ref().filter(|k| !matches!(k, Kpoints::MonkhorstPack { grid, .. } if grid.iter().all(|&n| n >= 2))) {
                let msg = format!("tetrahedra need a k-point grid of at least 2 points a side, got {k:?}");
                return Err(doc.err("dos.kpoints", msg, "e.g. kpoints = { grid = [12, 12, 12] }"));
            }
        }
        let d = DosSpec::default();
        let positive = |key: &str, e: Option<Energy>, default: f64| match e {
            None => Ok(default),
            Some(Energy(x)) if x > 0.0 && x.is_finite() => Ok(x),
            Some(Energy(x)) => Err(doc.err(
                key,
                format!("must be positive, got {x} Ha"),
                "e.g. \"0.01 Ry\"",
            )),
        };
        Ok(DosSpec {
            kpoints,
            method,
            width: positive("dos.width", self.width, d.width)?,
            step: positive("dos.step", self.step, d.step)?,
            nbands: self
                .nbands
                .map(|n| doc.count("dos.nbands", n))
                .transpose()?,
        })
    }
}
