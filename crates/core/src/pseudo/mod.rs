//! Pseudopotentials (norm-conserving, ultrasoft and PAW) for the plane-wave code (Hartree
//! atomic units).
//!
//! Contract:
//! * [`Pseudopotential::from_file`] / [`Pseudopotential::from_str`] detect the format
//!   from the content: UPF v2 (`<UPF version=`), UPF v1 (`<PP_HEADER>` without a
//!   version attribute), ABINIT pspcod 10 (HGH/GTH; third line starts with `10`) and the
//!   CP2K GTH block. Errors name the path and (where known) the line.
//! * Form factors use the conventions below (all radial, real):
//!   - `local_fourier(q)` = int d^3r V_loc(r) e^{-iq.r} (includes -4 pi Z/q^2 tail),
//!   - `local_fourier_g0()` = int d^3r (V_loc(r) + Z/r),
//!   - `projector_fourier(i, q)` = 4 pi int r^2 beta_i(r) j_l(qr) dr,
//!   - `core_density_fourier(q)` = 4 pi int r^2 rho_core j0(qr) dr,
//!   - `atomic_density_fourier(q)` = 4 pi int r^2 rho_at j0(qr) dr (= z_valence at q = 0).
//! * The nonlocal energy is E = sum_ij D_ij <psi|beta_i><beta_j|psi> with `dij` in Hartree.
//! * GTH potentials are evaluated analytically; UPF potentials on their radial grid with
//!   Quantum ESPRESSO 6.7 integration conventions (see `numeric.rs`).
//! * Ultrasoft and PAW UPF v2 files come with their augmentation charges Q_ij
//!   ([`augmentation`], [`Pseudopotential::augmentation`]); PAW files also with their
//!   one-centre data ([`Pseudopotential::paw`], [`crate::paw`]).

pub mod atom;
pub mod augmentation;
mod gth;
mod numeric;
mod psp8;
pub mod radial;
mod upf;

pub use upf::{QFunction, UpfAugmentation, UpfKind, UpfPaw};

#[cfg(test)]
mod tests;

use std::fmt;
use std::path::Path;

/// A nonlocal projector (the radial function is reached through the
/// [`Pseudopotential`] form-factor methods by its index).
#[derive(Debug, Clone, PartialEq)]
pub struct Projector {
    /// Angular momentum.
    pub l: usize,
}

/// Error while reading a pseudopotential file.
#[derive(Debug, Clone, PartialEq)]
pub struct PseudoError {
    pub path: String,
    pub line: Option<usize>,
    pub message: String,
}

impl PseudoError {
    fn new(path: &str, line: Option<usize>, message: String) -> Self {
        PseudoError {
            path: path.to_string(),
            line,
            message,
        }
    }
}

impl fmt::Display for PseudoError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.line {
            Some(l) => write!(f, "{}:{}: {}", self.path, l, self.message),
            None => write!(f, "{}: {}", self.path, self.message),
        }
    }
}

impl std::error::Error for PseudoError {}

/// The representation behind a pseudopotential.
#[derive(Debug, Clone, PartialEq)]
enum Kind {
    /// Analytic GTH; `proj` maps projector index -> (l, i 1-based within channel l).
    Gth {
        data: gth::GthData,
        proj: Vec<(usize, usize)>,
    },
    Numeric(Box<numeric::NumericData>),
}

/// A pseudopotential: norm-conserving, ultrasoft or PAW.
#[derive(Debug, Clone, PartialEq)]
pub struct Pseudopotential {
    pub symbol: String,
    pub z_valence: f64,
    /// Highest angular momentum of the nonlocal part (-1 if none).
    pub lmax: i32,
    pub projectors: Vec<Projector>,
    /// nproj x nproj coupling matrix (Hartree), symmetric, block diagonal in l.
    pub dij: Vec<Vec<f64>>,
    /// "LDA"/"PBE"/... for GTH files, the UPF `functional` string for UPF files.
    pub functional_hint: Option<String>,
    kind: Kind,
    /// The augmentation charges of an ultrasoft or PAW file (None: norm-conserving).
    augmentation: Option<Box<augmentation::Augmentation>>,
    /// The one-centre data of a PAW file.
    paw: Option<Box<crate::paw::PawSpecies>>,
    /// Length L of the Gaussian guess density z exp(-q^2 L^2) (used when the file has none).
    density_decay_length: f64,
}

/// Supported file formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PseudoFormat {
    UpfV2,
    UpfV1,
    Abinit10,
    /// ABINIT pspcod 8 (ONCVPSP, PseudoDojo).
    Psp8,
    Cp2k,
}

/// Detect the format from the file content.
pub fn detect_format(text: &str) -> Option<PseudoFormat> {
    if text.contains("<UPF version=") || text.contains("<UPF version =") {
        return Some(PseudoFormat::UpfV2);
    }
    if text.contains("<PP_HEADER>") {
        return Some(PseudoFormat::UpfV1);
    }
    if text.contains("<PP_HEADER") || text.contains("<UPF") || text.contains("<qe_pp:pseudo") {
        return None;
    }
    let mut lines = text.lines();
    let l3 = lines.nth(2)?;
    match l3.split_whitespace().next() {
        Some("10") => return Some(PseudoFormat::Abinit10),
        Some("8") => return Some(PseudoFormat::Psp8),
        _ => {}
    }
    let first = text
        .lines()
        .find(|l| !l.trim().is_empty() && !l.trim_start().starts_with('#'))?;
    let tok = first.split_whitespace().next()?;
    normalize_symbol(tok).map(|_| PseudoFormat::Cp2k)
}

impl Pseudopotential {
    /// Read and parse a pseudopotential file (format detected from its content).
    pub fn from_file(path: &Path) -> Result<Self, PseudoError> {
        let p = path.display().to_string();
        let bytes = std::fs::read(path)
            .map_err(|e| PseudoError::new(&p, None, format!("cannot read file: {e}")))?;
        let text = String::from_utf8_lossy(&bytes);
        Self::from_str(&text, &p)
    }

    /// Parse a pseudopotential from text; `path_for_messages` is used in errors.
    #[allow(clippy::should_implement_trait)]
    pub fn from_str(text: &str, path_for_messages: &str) -> Result<Self, PseudoError> {
        let path = path_for_messages;
        match detect_format(text) {
            Some(PseudoFormat::UpfV2) => {
                let mut u = upf::parse_v2_without_augmentation(text, path)?;
                if u.kind != upf::UpfKind::NormConserving {
                    u = upf::parse_v2(text, path)?;
                }
                Ok(Self::from_upf(u))
            }
            Some(PseudoFormat::UpfV1) => Ok(Self::from_upf(upf::parse_v1(text, path)?)),
            Some(PseudoFormat::Abinit10) => Ok(Self::from_gth(gth::parse_abinit10(text, path)?)),
            Some(PseudoFormat::Psp8) => Ok(Self::from_upf(psp8::parse(text, path)?)),
            Some(PseudoFormat::Cp2k) => Ok(Self::from_gth(gth::parse_cp2k(text, path)?)),
            None => Err(PseudoError::new(
                path,
                None,
                "unrecognised pseudopotential format (expected UPF v1/v2, ABINIT psp8 or pspcod 10, or a CP2K GTH block)".into(),
            )),
        }
    }

    fn from_gth(p: gth::GthParsed) -> Self {
        let mut projectors = Vec::new();
        let mut proj = Vec::new();
        for (l, ch) in p.data.channels.iter().enumerate() {
            for i in 0..ch.h.len() {
                projectors.push(Projector { l });
                proj.push((l, i + 1));
            }
        }
        let n = projectors.len();
        let mut dij = vec![vec![0.0; n]; n];
        for a in 0..n {
            for b in 0..n {
                let ((la, ia), (lb, ib)) = (proj[a], proj[b]);
                if la == lb {
                    dij[a][b] = p.data.channels[la].h[ia - 1][ib - 1];
                }
            }
        }
        let lmax = p.data.channels.len() as i32 - 1;
        let density_decay_length = decay_length(&p.symbol, p.z_valence, Some(p.data.rloc));
        Pseudopotential {
            symbol: p.symbol,
            z_valence: p.z_valence,
            lmax,
            projectors,
            dij,
            functional_hint: p.functional_hint,
            kind: Kind::Gth { data: p.data, proj },
            augmentation: None,
            paw: None,
            density_decay_length,
        }
    }

    /// The pseudopotential of a parsed UPF / psp8 file: norm-conserving, ultrasoft (with its
    /// augmentation) or PAW (with its one-centre data too).
    fn from_upf(u: upf::UpfParsed) -> Self {
        let ls: Vec<usize> = u.betas.iter().map(|b| b.l).collect();
        let paw = match (&u.paw, &u.augmentation) {
            (Some(p), Some(a)) => Some(Box::new(crate::paw::PawSpecies::new(
                p,
                a,
                &ls,
                (&u.r, &u.rab),
                u.nlcc.as_deref(),
            ))),
            _ => None,
        };
        let augmentation = u
            .augmentation
            .as_ref()
            .map(|a| Box::new(augmentation::Augmentation::new(a, &ls, &u.r, &u.rab)));
        let projectors: Vec<Projector> = u.betas.iter().map(|b| Projector { l: b.l }).collect();
        let lmax = projectors
            .iter()
            .map(|p| p.l as i32)
            .max()
            .unwrap_or(-1)
            .max(u.lmax.min(6));
        let density_decay_length = decay_length(&u.symbol, u.z_valence, None);
        let data = numeric::NumericData::new(&u);
        Pseudopotential {
            symbol: u.symbol,
            z_valence: u.z_valence,
            lmax,
            projectors,
            dij: u.dij,
            functional_hint: u.functional,
            kind: Kind::Numeric(Box::new(data)),
            augmentation,
            paw,
            density_decay_length,
        }
    }

    /// True for analytic (GTH/HGH) potentials.
    pub fn is_analytic(&self) -> bool {
        matches!(self.kind, Kind::Gth { .. })
    }

    /// v(q) = int d^3r V_loc(r) e^{-iq.r} (Ha bohr^3) for q > 0, including the
    /// -4 pi Z/q^2 Coulomb tail. For q <= 0 returns [`Self::local_fourier_g0`].
    pub fn local_fourier(&self, q: f64) -> f64 {
        if q <= 0.0 {
            return self.local_fourier_g0();
        }
        match &self.kind {
            Kind::Gth { data, .. } => data.local_fourier(self.z_valence, q),
            Kind::Numeric(d) => d.local_fourier(q),
        }
    }

    /// Batch version of [`Self::local_fourier`].
    pub fn local_fourier_many(&self, qs: &[f64]) -> Vec<f64> {
        qs.iter().map(|&q| self.local_fourier(q)).collect()
    }

    /// int d^3r (V_loc(r) + Z/r) (Ha bohr^3), the "alpha Z" constant.
    pub fn local_fourier_g0(&self) -> f64 {
        match &self.kind {
            Kind::Gth { data, .. } => data.local_g0(self.z_valence),
            Kind::Numeric(d) => d.local_g0(),
        }
    }

    /// beta_i(q) = 4 pi int r^2 beta_i(r) j_l(qr) dr (valid at q = 0).
    ///
    /// Panics if `i >= self.projectors.len()` (programming error).
    pub fn projector_fourier(&self, i: usize, q: f64) -> f64 {
        match &self.kind {
            Kind::Gth { data, proj } => {
                let (l, n) = proj[i];
                data.projector_fourier(l, n, q)
            }
            Kind::Numeric(d) => d.projector_fourier(i, q),
        }
    }

    /// Batch version of [`Self::projector_fourier`].
    pub fn projector_fourier_many(&self, i: usize, qs: &[f64]) -> Vec<f64> {
        qs.iter().map(|&q| self.projector_fourier(i, q)).collect()
    }

    /// Prepare for evaluations of the projector form factors up to `qmax` (1/bohr): numeric
    /// potentials tabulate them once (interpolated afterwards); analytic ones need nothing.
    pub fn tabulate_projectors(&mut self, qmax: f64) {
        if let Kind::Numeric(d) = &mut self.kind {
            d.tabulate(qmax);
        }
    }

    /// Tabulate the augmentation charges' radial integrals up to `qmax` (1/bohr; the
    /// density sphere's radius); nothing for a norm-conserving file.
    pub fn tabulate_augmentation(&mut self, qmax: f64) {
        if let Some(a) = &mut self.augmentation {
            a.tabulate(qmax);
        }
    }

    /// The augmentation charges of an ultrasoft or PAW file (None: norm-conserving).
    pub fn augmentation(&self) -> Option<&augmentation::Augmentation> {
        self.augmentation.as_deref()
    }

    /// The one-centre data of a PAW file (None otherwise).
    pub fn paw(&self) -> Option<&crate::paw::PawSpecies> {
        self.paw.as_deref()
    }

    pub fn has_core_correction(&self) -> bool {
        match &self.kind {
            Kind::Gth { .. } => false,
            Kind::Numeric(d) => d.has_core(),
        }
    }

    /// rho_core(q) = 4 pi int r^2 rho_core(r) j0(qr) dr (0 without NLCC).
    pub fn core_density_fourier(&self, q: f64) -> f64 {
        match &self.kind {
            Kind::Gth { .. } => 0.0,
            Kind::Numeric(d) => d.core_fourier(q),
        }
    }

    /// Atomic valence density 4 pi int r^2 rho_at(r) j0(qr) dr, equal to z_valence at q = 0.
    ///
    /// UPF with a non-zero PP_RHOATOM: QE's integral over msh points, rescaled to integrate
    /// to z_valence. Otherwise (GTH, or UPF without a usable PP_RHOATOM): the Gaussian
    /// z_valence exp(-(q L)^2) (i.e. z exp(-(q w)^2/2) with w = sqrt2 L), with L the
    /// DFTK/ABINIT `atom_decay_length` table (depends on core and valence electron counts).
    pub fn atomic_density_fourier(&self, q: f64) -> f64 {
        if let Kind::Numeric(d) = &self.kind {
            if let Some(v) = d.atomic_density_fourier(q) {
                return v;
            }
        }
        let x = q * self.density_decay_length;
        self.z_valence * (-x * x).exp()
    }

    /// Length L (bohr) of the Gaussian guess density z exp(-q^2 L^2).
    pub fn density_decay_length(&self) -> f64 {
        self.density_decay_length
    }
}

/// Gaussian guess length from DFTK's `atom_decay_length` (data adapted from ABINIT
/// m_atomdata.F90), by number of core and valence electrons. Falls back to
/// 2.5 rloc (GTH) or 1 bohr when the element is unknown.
fn decay_length(symbol: &str, z_valence: f64, rloc: Option<f64>) -> f64 {
    let Some(z_atom) = atomic_number(symbol) else {
        return rloc.map(|r| 2.5 * r).unwrap_or(1.0);
    };
    let n_core = z_atom as f64 - z_valence;
    let n_val = z_valence.round() as usize;
    if n_val == 0 {
        return rloc.unwrap_or(1.0);
    }
    let data: &[f64] = if n_core < 0.5 {
        &[0.6, 0.4, 0.3, 0.25, 0.2]
    } else if n_core < 2.5 {
        &[1.8, 1.4, 1.0, 0.7, 0.6, 0.5, 0.4, 0.35, 0.3]
    } else if n_core < 10.5 {
        &[2.0, 1.6, 1.25, 1.1, 1.0, 0.9, 0.8, 0.7, 0.7, 0.7, 0.6]
    } else if n_core < 12.5 {
        &[1.9, 1.5, 1.15, 1.0, 0.9, 0.8, 0.7, 0.6, 0.6, 0.6, 0.5]
    } else if n_core < 18.5 {
        &[
            2.0, 1.8, 1.5, 1.2, 1.0, 0.9, 0.85, 0.8, 0.75, 0.7, 0.65, 0.65, 0.6,
        ]
    } else if n_core < 28.5 {
        &[
            1.5, 1.25, 1.15, 1.05, 1.00, 0.95, 0.95, 0.9, 0.9, 0.85, 0.85, 0.80, 0.8, 0.75, 0.7,
        ]
    } else if n_core < 36.5 {
        &[
            2.0, 2.00, 1.60, 1.40, 1.25, 1.10, 1.00, 0.95, 0.90, 0.85, 0.80, 0.75, 0.7,
        ]
    } else {
        &[
            2.0, 2.00, 1.55, 1.25, 1.15, 1.10, 1.05, 1.0, 0.95, 0.9, 0.85, 0.85, 0.8,
        ]
    };
    data[n_val.min(data.len()) - 1]
}

const ELEMENTS: [&str; 118] = [
    "H", "He", "Li", "Be", "B", "C", "N", "O", "F", "Ne", "Na", "Mg", "Al", "Si", "P", "S", "Cl",
    "Ar", "K", "Ca", "Sc", "Ti", "V", "Cr", "Mn", "Fe", "Co", "Ni", "Cu", "Zn", "Ga", "Ge", "As",
    "Se", "Br", "Kr", "Rb", "Sr", "Y", "Zr", "Nb", "Mo", "Tc", "Ru", "Rh", "Pd", "Ag", "Cd", "In",
    "Sn", "Sb", "Te", "I", "Xe", "Cs", "Ba", "La", "Ce", "Pr", "Nd", "Pm", "Sm", "Eu", "Gd", "Tb",
    "Dy", "Ho", "Er", "Tm", "Yb", "Lu", "Hf", "Ta", "W", "Re", "Os", "Ir", "Pt", "Au", "Hg", "Tl",
    "Pb", "Bi", "Po", "At", "Rn", "Fr", "Ra", "Ac", "Th", "Pa", "U", "Np", "Pu", "Am", "Cm", "Bk",
    "Cf", "Es", "Fm", "Md", "No", "Lr", "Rf", "Db", "Sg", "Bh", "Hs", "Mt", "Ds", "Rg", "Cn", "Nh",
    "Fl", "Mc", "Lv", "Ts", "Og",
];

/// Element symbol for atomic number z (1-based).
pub fn element_symbol(z: usize) -> Option<&'static str> {
    ELEMENTS.get(z.checked_sub(1)?).copied()
}

/// Atomic number of an element symbol (case-insensitive).
pub fn atomic_number(symbol: &str) -> Option<usize> {
    ELEMENTS
        .iter()
        .position(|e| e.eq_ignore_ascii_case(symbol.trim()))
        .map(|i| i + 1)
}

/// Canonical capitalisation of an element symbol ("SI" -> "Si"), None if unknown.
fn normalize_symbol(s: &str) -> Option<String> {
    atomic_number(s)
        .and_then(element_symbol)
        .map(str::to_string)
}

/// Parse a real number, accepting Fortran 'D' exponents. Returns non-finite values
/// as they are (callers reject them with a message).
fn parse_f64(tok: &str) -> Option<f64> {
    let t = tok.trim();
    if t.is_empty() {
        return None;
    }
    if let Ok(v) = t.parse::<f64>() {
        return Some(v);
    }
    if t.contains(['d', 'D']) {
        let fixed: String = t
            .chars()
            .map(|c| if c == 'd' || c == 'D' { 'e' } else { c })
            .collect();
        return fixed.parse::<f64>().ok();
    }
    // Fortran may drop the 'E' for 3-digit exponents: "1.0-100"
    if let Some(pos) = t.get(1..).and_then(|s| s.rfind(['+', '-'])) {
        let (m, e) = t.split_at(pos + 1);
        if !m.ends_with(['e', 'E']) {
            if let (Ok(m), Ok(e)) = (m.parse::<f64>(), e.parse::<i32>()) {
                return Some(m * 10f64.powi(e));
            }
        }
    }
    None
}
