//! Checkpoints: the SCF state in a portable file that any layout can continue from.
//!
//! What is stored (see [`mod@format`] for the framing and the README for the whole format):
//! - `density/millers` (i32x3) and `density/<s>` (c64): the density to continue from, on the
//!   density sphere, per spin channel, keyed by Miller index;
//! - `kpoint/<k>/millers` (i32x3): the plane waves of k-point k, sorted, and
//!   `bands/<s>/<k>` (c64): its bands one after the other, each a coefficient per plane wave
//!   in that order: the plain plane-wave coefficients c(G), also for Γ-real runs, which store
//!   one G of each +-G pair (c(-G) = c(G)*, `gamma_real` in the metadata);
//! - the footer's [`Meta`]: structure, cutoff, k-points, eigenvalues, occupations, Fermi level,
//!   iteration, energy, and a digest of the physics input (functional, smearing, spin,
//!   electrons, pseudopotential files).
//!
//! Contract:
//! - [`write()`] and [`read()`] are collective on the world communicator (every rank calls them
//!   at the same point). World rank 0 does all file I/O; bands travel in blocks of at most
//!   [`Transfer::block_bytes`] (1 MiB by default), so no rank ever holds more than one block of another rank's bands.
//! - The file does not depend on the layout that wrote it (plane waves sorted by Miller index),
//!   and [`read()`] maps it onto any layout, cutoff or cell by Miller index (plane waves missing
//!   from the file start at zero, those not in the current sphere are dropped), through an
//!   index map built once per k-point. Bands beyond the file's keep the random start.
//! - A file that fails its checks (framing, checksums, version, another digest or another list
//!   of atoms) is refused on every rank with one message naming the file and the problem; the
//!   file is only read.

pub mod format;
mod read;
pub mod transport;
mod write;

pub use read::{read, read_fixed_density, read_meta, Restart};
pub use transport::{Transfer, Transport};
pub use write::{write, Snapshot};

use crate::model::Model;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

/// Largest block of bands moved to or from the writer at once (bytes of coefficients) by
/// default ([`Transfer::block_bytes`]). Measured on si64 Γ (28.6 MiB file, 1 and 2 ranks): writes took
/// 0.08-0.11 s with 1 MiB blocks against 0.11-0.17 s with 16 MiB, and 64 MiB blocks raised rank
/// 0's peak memory by 19 MB at 2 ranks.
pub const BLOCK_BYTES: usize = 1 << 20;

/// A k-point of the file.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct KpointMeta {
    /// Fractional reciprocal coordinates.
    pub frac: [f64; 3],
    /// Brillouin-zone weight.
    pub weight: f64,
    /// Plane waves stored (the half sphere for Γ-real runs).
    pub npw: usize,
}

/// The footer's description of the run a checkpoint comes from.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Meta {
    /// Always "planewave checkpoint".
    pub format: String,
    /// The program that wrote it.
    pub program: String,
    /// Always "little-endian".
    pub byte_order: String,
    /// SHA-256 of the physics input (see [`input_digest`]).
    pub digest: String,
    /// SHA-256 of what the density's meaning depends on (see [`density_digest`]); absent in
    /// files written before the QE bands and nscf steps existed (such files cannot start one).
    #[serde(default)]
    pub density_digest: Option<String>,
    /// Lattice vectors (rows, bohr).
    pub lattice_bohr: [[f64; 3]; 3],
    /// Species symbols.
    pub species: Vec<String>,
    /// (species index, fractional position) of every atom.
    pub atoms: Vec<(usize, [f64; 3])>,
    /// Wavefunction cutoff (Ha).
    pub ecut_ha: f64,
    /// Spin channels.
    pub nspin: usize,
    /// Bands per (spin, k).
    pub nbands: usize,
    /// Γ-point real wavefunctions (half sphere stored).
    pub gamma_real: bool,
    /// The k-points, in order.
    pub kpoints: Vec<KpointMeta>,
    /// Entries of the density sphere.
    pub density_g: usize,
    /// SCF iterations done when written.
    pub iteration: usize,
    /// Whether the SCF had converged.
    pub converged: bool,
    /// Free energy of the last iteration (Ha; far from convergence with a GGA functional, the
    /// first-order estimate of [`crate::scf::EXACT_ENERGY_RESIDUALS`]).
    pub energy_ha: f64,
    /// Fermi level per spin channel (Ha; None without smearing).
    pub fermi_level_ha: Option<Vec<f64>>,
    /// `eigenvalues[s][k][band]` (Ha).
    pub eigenvalues_ha: Vec<Vec<Vec<f64>>>,
    /// `occupations[s][k][band]`.
    pub occupations: Vec<Vec<Vec<f64>>>,
}

impl Meta {
    /// Put the checkpoint's cell and atomic positions into `spec` (a relaxation continues from
    /// the structure it reached); refused when the atoms differ. `path` names the file in errors.
    pub fn apply_structure(
        &self,
        spec: &mut crate::input::RunSpec,
        path: &std::path::Path,
    ) -> Result<(), String> {
        let mine: Vec<&str> = spec.atoms.iter().map(|a| a.species.as_str()).collect();
        let theirs: Vec<&str> = self
            .atoms
            .iter()
            .map(|(s, _)| self.species[*s].as_str())
            .collect();
        if mine != theirs {
            return Err(format!(
                "checkpoint {} holds another structure: {} atoms ({}) against this input's {} ({})",
                path.display(),
                theirs.len(),
                theirs.join(" "),
                mine.len(),
                mine.join(" ")
            ));
        }
        spec.lattice = self.lattice_bohr;
        for (a, (_, frac)) in spec.atoms.iter_mut().zip(&self.atoms) {
            a.frac = *frac;
        }
        Ok(())
    }
}

/// SHA-256 (hex) of what must not change across a restart: functional, smearing, spin mode,
/// starting magnetisation, electron count, and each species' symbol and pseudopotential file
/// (its bytes; its parsed form when the file cannot be read again).
pub fn input_digest(model: &Model) -> String {
    let head = format!(
        "{:?}|{:?}|{:?}|{:?}|{}",
        model.functional,
        model.smearing,
        model.spin,
        model.starting_magnetization,
        model.n_electrons
    );
    digest(model, &head)
}

/// SHA-256 (hex) of what a converged density means to a fixed-density step (QE's bands and
/// nscf): functional, spin channels, electron count and the pseudopotentials, but not the
/// smearing or starting moments, which only steered the SCF.
pub fn density_digest(model: &Model) -> String {
    let head = format!(
        "density|{:?}|{}|{}",
        model.functional,
        model.nspin(),
        model.n_electrons
    );
    digest(model, &head)
}

/// SHA-256 (hex) of `head` and each species' symbol and pseudopotential file.
fn digest(model: &Model, head: &str) -> String {
    let mut h = Sha256::new();
    h.update(head.as_bytes());
    for s in &model.species {
        h.update(s.symbol.as_bytes());
        match std::fs::read(&s.path) {
            Ok(bytes) => h.update(&bytes),
            Err(_) => h.update(format!("{:?}", s.pseudo).as_bytes()),
        }
    }
    h.finalize().iter().map(|b| format!("{b:02x}")).collect()
}

/// The structure part of the metadata.
struct Structure {
    lattice: [[f64; 3]; 3],
    species: Vec<String>,
    atoms: Vec<(usize, [f64; 3])>,
}

/// The structure of `model`.
fn structure(model: &Model) -> Structure {
    Structure {
        lattice: model.crystal.lattice,
        species: model.species.iter().map(|s| s.symbol.clone()).collect(),
        atoms: model
            .crystal
            .atoms
            .iter()
            .map(|a| (a.species, a.frac))
            .collect(),
    }
}

/// Section names.
fn density_section(s: usize) -> String {
    format!("density/{s}")
}
fn kpoint_section(k: usize) -> String {
    format!("kpoint/{k}/millers")
}
fn bands_section(s: usize, k: usize) -> String {
    format!("bands/{s}/{k}")
}

/// Bands per block of `block_bytes` for plane waves of `npw` coefficients.
fn block_bands(npw: usize, block_bytes: usize) -> usize {
    (block_bytes / (16 * npw.max(1))).max(1)
}
