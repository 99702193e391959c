//! Reading the user's input into a validated [`RunSpec`].
//!
//! Two input formats are understood; [`load`] tells them apart by content:
//! a line starting with `&control` or `&system` (any case) or `ATOMIC_SPECIES`
//! means a Quantum ESPRESSO `pw.x` input, anything else is read as TOML.
//!
//! Inside planewave everything is in Hartree atomic units: energies in Ha,
//! lengths in bohr. Every unit in the input is named below; energies given as a
//! bare number are in Ha, energies given as a string carry a unit
//! (`"30 Ry"`, `"408 eV"`, `"15 Ha"`; 1 Ry = 0.5 Ha, 1 eV = 1/27.211386245988 Ha),
//! and 1 angstrom = 1/0.529177210903 bohr.
//!
//! # TOML format
//!
//! ```toml
//! title = "Si diamond"              # optional; default: the file stem
//!
//! [structure]
//! lattice = [[0.0, 5.13, 5.13], [5.13, 0.0, 5.13], [5.13, 5.13, 0.0]]  # rows a1, a2, a3
//! lattice_unit = "bohr"             # "bohr" (default) | "angstrom"
//! # poscar = "POSCAR"               # instead of lattice + atoms: a VASP 5 POSCAR
//! #                                 # (species line required; Direct or Cartesian;
//! #                                 # negative scale = cell volume in A^3), path
//! #                                 # relative to this file's folder
//! positions = "fractional"          # "fractional" (default) | "cartesian" (in lattice_unit)
//! atoms = [ { species = "Si", position = [0.0, 0.0, 0.0] },
//!           { species = "Si", position = [0.25, 0.25, 0.25], magnetization = 0.0 } ]
//! # magnetization (optional, per atom): starting magnetisation, fraction of the
//! # atom's valence charge in [-1, 1] like QE; only with spin = "collinear"
//!
//! [species.Si]
//! pseudo = "pseudos/Si-q4.lda.cp2k"  # relative to this file's folder
//! # magnetization = 0.5             # default starting magnetisation for atoms of
//! #                                 # this species (a per-atom value overrides it)
//!
//! [model]
//! functional = "lda_pz"   # lda_pz (default) | lda_pw | lda_vwn | pbe | pbe0 | hse; aliases:
//!                         # lda, pz -> lda_pz; pw -> lda_pw; vwn, svwn, sla+vwn -> lda_vwn;
//!                         # hse06 -> hse. pbe0, hse: hybrids (25% exact exchange; [hybrid])
//! smearing = "none"       # none (default) | gaussian | fermi-dirac | methfessel-paxton
//!                         # | marzari-vanderbilt; aliases gauss, fd, f-d, mp, m-p,
//!                         # cold, mv, m-v
//! smearing_width = 0.01   # Ha, or "0.02 Ry" / "0.27 eV" / "0.01 Ha"; required with smearing
//! spin = "none"           # none (default) | collinear
//! total_magnetization = 1.0  # optional, only with spin = "collinear" (fixed moment, in mu_B)
//! charge = 0.0            # QE tot_charge convention: charge > 0 REMOVES electrons
//! symmetry = true         # default true; false = QE nosym = .true.
//!
//! [basis]
//! ecut = 15.0             # wavefunction cutoff: Ha, or "30 Ry" / "408 eV" / "15 Ha"
//! kpoints = { grid = [4, 4, 4], shift = [0, 0, 0] }  # shift entries 0 or 1 (half a grid
//!                                                    # step); default 0 = Gamma-centred
//! # kpoints = "gamma"                                # Gamma point only
//! # kpoints = { list = [[0.0, 0.0, 0.0, 1.0], [0.5, 0.0, 0.0, 2.0]] }
//! #                       # fractional k + weight (weight may be left out = 1);
//! #                       # weights are normalised to sum 1
//! nbands = 8              # optional
//! # fft_grid = [32, 32, 32]  # optional: FFT points along a1, a2, a3 (QE nr1, nr2, nr3);
//! #                       # must hold the density sphere; default: the smallest such grid
//! #                       # with factors 2, 3, 5, 7
//!
//! [scf]                   # everything optional; defaults shown
//! energy_tolerance = 1e-8 # Ha
//! density_tolerance = 1e-7
//! max_iterations = 100
//! mixing = { beta = 0.7, depth = 8, kerker_q0 = 0.8 }  # kerker_q0 in 1/bohr (0 = no Kerker;
//!                                                   # omitted: 0.8, or 0 for an isolated system)
//! eigensolver = "davidson"  # davidson | lobpcg
//! davidson_dim = 3        # Davidson search space / bands (QE diago_david_ndim), 2..=8
//! seed = 42
//!
//! [properties]            # what follows the SCF; defaults shown
//! forces = true
//! stress = true           # default false (and refused) for hybrids
//!
//! [output]                # files after a converged SCF; default: none
//! density = ["cube"]      # cube | xsf | chgcar: <stem>.density.cube (bohr, electrons/bohr^3),
//!                         # <stem>.density.xsf (angstrom, electrons/bohr^3), <stem>.CHGCAR
//!                         # (VASP: density x cell volume); with collinear spin also the spin
//!                         # density (<stem>.spin.cube / .xsf; CHGCAR: its second block)
//!
//! [hybrid]                # optional, only with functional = "pbe0" | "hse"; QE's defaults
//! exx_fraction = 0.25     # the exact-exchange fraction (QE exx_fraction)
//! x_gamma_extrapolation = true  # QE x_gamma_extrapolation
//! q_grid = [1, 1, 1]      # QE nqx1..3; only [1, 1, 1] so far
//! divergence = "gygi-baldereschi"  # QE exxdiv_treatment; the only one
//! screening = 0.106       # HSE only: ω (1/bohr) of the Fock and the semilocal part
//!
//! [relax]                 # used by `planewave relax`; everything optional, defaults shown
//! cell = false            # also relax the lattice (like QE vc-relax / VASP ISIF = 3)
//! pressure = 0.0          # target pressure, GPa (with cell = true)
//! force_tolerance = 5e-4  # Ha/bohr: stop when every atom's |F| is below this
//! stress_tolerance = 0.05 # GPa: with cell = true, also |sigma + pressure| below this
//! max_steps = 50
//! algorithm = "bfgs"      # bfgs | fire
//!
//! [parallel]              # optional: the layout over MPI ranks (checked against the rank count)
//! kpoint_groups = 1       # default: chosen by a cost model
//! band_groups = 1
//! rank_order = "g"        # "g" (consecutive ranks share a band's G-vectors, VASP) | "band" (CASTEP)
//! alltoallv = "native"    # native | p2p | node | pairwise | nonblocking | auto
//! kpoint_sum = "allreduce" # sum over k-point groups: allreduce | reduce_scatter | auto
//! device = "cpu"          # "gpu": the local part of H on an NVIDIA GPU (a `cuda` build)
//!
//! [bands]                 # used by `planewave bands`: eigenvalues along a path, density fixed
//! nbands = 12             # default: the SCF's
//! path = [ { label = "L", k = [0.5, 0.5, 0.5], points = 17 },  # k: fractional (b1, b2, b3)
//!          { label = "G", k = [0.0, 0.0, 0.0], points = 20 },  # points: to the next vertex
//!          { label = "X", k = [0.5, 0.0, 0.5] } ]              # (QE crystal_b; default 20;
//!                                                              # 1 = jump to the next vertex)
//!
//! [dos]                   # used by `planewave dos`; everything optional, defaults shown
//! kpoints = { grid = [8, 8, 8] }  # as basis.kpoints; default: the SCF's grid doubled
//! method = "gaussian"     # gaussian | tetrahedra_opt (QE's optimised) | tetrahedra (linear);
//!                         # tetrahedra need a grid of at least 2 points a side
//! width = "0.01 Ry"       # Gaussian broadening s (energy, as ecut)
//! step = "0.01 eV"        # energy step of the output
//! nbands = 12             # default: the SCF's
//! ```
//!
//! Unknown keys anywhere are errors (with a "did you mean" suggestion).
//! Tables `[structure]`, `[species.*]` and `[basis]` (with `ecut` and `kpoints`) are
//! required; `[model]`, `[scf]`, `[properties]`, `[relax]`, `[parallel]`, `[hybrid]`, `[bands]`,
//! `[dos]` and `[output]` are optional.
//!
//! # Quantum ESPRESSO `pw.x` format
//!
//! Namelists `&control`, `&system`, `&electrons` (and `&ions`, `&cell` holding only
//! keys without effect on an SCF), cards `ATOMIC_SPECIES`, `CELL_PARAMETERS`
//! (`bohr | angstrom | alat`), `ATOMIC_POSITIONS` (`crystal | bohr | angstrom | alat`),
//! `K_POINTS` (`automatic | gamma | crystal | tpiba`). `ibrav` = 0, 1, 2 or 3.
//! Every key that changes the physics and is not supported is an error, never
//! silently ignored. See `qe.rs` for the mapping of each key.
//!
//! # How it is read
//!
//! - The TOML schema is a set of typed serde structs (`toml.rs`, unknown keys refused). Names
//!   and units are read as values are deserialised (`named.rs`: functionals, smearing kinds,
//!   energies with units, ...), every key's line comes from the document (`toml_lines.rs`),
//!   and serde's errors are turned into messages that name the key, its table and a fix,
//!   with the tables' key lists asked of the structs themselves (`toml_errors.rs`).
//! - The pw.x reader (`qe.rs`) tokenises namelists and cards and maps QE's keys.
//! - Both end in the same checks (`validate.rs`) and the same [`RunSpec`].

mod bands;
mod dos;
mod error;
mod hybrid;
mod kpoints;
mod named;
mod poscar;
mod qe;
mod qe_lattice;
mod qe_post;
mod qe_syntax;
mod qe_workflow;
mod smearing;
mod toml;
mod toml_errors;
mod toml_lines;
pub mod units;
mod validate;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

pub use self::bands::{BandsSpec, PathPoints, PathVertex};
pub use self::dos::{DosMethod, DosSpec};
pub use self::error::InputError;
pub use self::hybrid::{Hybrid, KernelSpec};
pub use self::kpoints::Kpoints;
pub use self::qe_post::{
    read as read_post_input, BandsX, DosX, PlotFormat, PlotQuantity, PostInput, PpX, ProjwfcX,
    SaveRef,
};
pub use self::qe_workflow::{save_dir_of, NonScf, QeRun};
pub use self::validate::KeyNames;

/// A validated description of one SCF run, in Hartree atomic units.
#[derive(Debug, Clone, PartialEq)]
pub struct RunSpec {
    /// The input file.
    pub source: PathBuf,
    /// TOML `title`, else QE `prefix`, else the input file's stem.
    pub title: String,
    /// Lattice vectors in bohr: ROWS are a1, a2, a3. A left-handed cell
    /// (negative determinant) is valid.
    pub lattice: [[f64; 3]; 3],
    /// The atoms, in input order.
    pub atoms: Vec<AtomSpec>,
    /// The species, each listed once. For TOML: in order of first use by an
    /// atom, then unused species alphabetically; for QE: ATOMIC_SPECIES order.
    pub species: Vec<SpeciesSpec>,
    /// One of `"lda_pz"` (default), `"lda_pw"`, `"lda_vwn"`, `"pbe"`.
    pub functional: String,
    /// The exact-exchange part when the functional is a hybrid (`functional` is then its
    /// semilocal base, e.g. PBE0 on "pbe").
    pub hybrid: Option<Hybrid>,
    /// Occupation smearing; widths in Ha.
    pub smearing: Smearing,
    /// Spin treatment.
    pub spin: Spin,
    /// Net charge of the cell in units of the elementary charge, QE `tot_charge`
    /// convention: `charge > 0` REMOVES electrons (a cation), `charge < 0` adds them.
    pub charge: f64,
    /// Wavefunction kinetic-energy cutoff in Ha.
    pub ecut: f64,
    /// Density kinetic-energy cutoff in Ha, when given (else 4 `ecut`, enough for
    /// norm-conserving pseudopotentials; ultrasoft and PAW files want more).
    pub ecut_rho: Option<f64>,
    /// Brillouin-zone sampling.
    pub kpoints: Kpoints,
    /// Number of bands, when the user fixed it.
    pub nbands: Option<usize>,
    /// FFT grid (points along a1, a2, a3), when the user fixed it (QE `nr1, nr2, nr3`).
    pub fft_grid: Option<[usize; 3]>,
    /// SCF controls.
    pub scf: ScfSpec,
    /// Whether crystal symmetry may be used (false for QE `nosym=.true.` or
    /// TOML `[model] symmetry = false`).
    pub use_symmetry: bool,
    /// What to compute after the SCF (forces, stress).
    pub properties: Properties,
    /// Structural relaxation controls (used by `planewave relax`, or by `planewave run` when the
    /// input asks for a relaxation: QE `calculation = 'relax' | 'vc-relax'`).
    pub relax: RelaxSpec,
    /// Requested parallel layout (TOML `[parallel]`; checked against the rank count at set-up).
    pub parallel: ParallelSpec,
    /// The band-structure path of `planewave bands` (TOML `[bands]`), when given.
    pub bands: Option<BandsSpec>,
    /// The density of states of `planewave dos` (TOML `[dos]`; defaults without it).
    pub dos: DosSpec,
    /// Files written after the SCF (TOML `[output]`).
    pub output: OutputSpec,
    /// A pw.x input's workflow keys: where its state is kept (`outdir`, `prefix`) and the
    /// non-SCF step it asks for; None for TOML.
    pub qe: Option<QeRun>,
    /// Where the input wrote things, so that later stages (set-up) can point at
    /// the key and line in the user's own format.
    pub origin: Origin,
}

/// The format of an input and the lines its reader recorded.
#[derive(Debug, Clone, PartialEq)]
pub struct Origin {
    /// TOML or QE.
    pub format: InputFormat,
    /// Line of each key, by its name in that format (`basis.nbands`, `nbnd`, ...).
    pub lines: BTreeMap<String, usize>,
    /// Line of each species entry (`[species.Si]`, or its ATOMIC_SPECIES line).
    pub species_lines: BTreeMap<String, usize>,
}

impl RunSpec {
    /// The key names of the input's format.
    pub fn key_names(&self) -> &'static KeyNames {
        match self.origin.format {
            InputFormat::Toml => &validate::TOML_KEYS,
            InputFormat::QuantumEspresso => &validate::QE_KEYS,
        }
    }

    /// The line where `key` (named as in [`Self::key_names`]) was written, if recorded.
    pub fn line_of(&self, key: &str) -> Option<usize> {
        self.origin.lines.get(key).copied()
    }

    /// The key that names the pseudopotential of species `symbol`, and its line.
    pub fn pseudo_key(&self, symbol: &str) -> (String, Option<usize>) {
        let line = self.origin.species_lines.get(symbol).copied();
        match self.origin.format {
            InputFormat::Toml => (format!("species.{symbol}.pseudo"), line),
            InputFormat::QuantumEspresso => ("ATOMIC_SPECIES".to_string(), line),
        }
    }
}

/// One atom.
#[derive(Debug, Clone, PartialEq)]
pub struct AtomSpec {
    /// Species label; matches a [`SpeciesSpec::symbol`].
    pub species: String,
    /// Fractional (crystal) coordinates with respect to the lattice rows.
    pub frac: [f64; 3],
}

/// One species and its pseudopotential.
#[derive(Debug, Clone, PartialEq)]
pub struct SpeciesSpec {
    /// Species label as written in the input (e.g. `Si`, `Fe1`).
    pub symbol: String,
    /// Pseudopotential file, resolved relative to the input file's folder
    /// (not checked for existence here).
    pub pseudo: PathBuf,
}

/// Occupation smearing (the model's type; widths in Ha).
pub use self::smearing::Smearing;

/// Spin treatment.
#[derive(Debug, Clone, PartialEq)]
pub enum Spin {
    /// Spin-unpolarised.
    None,
    /// Collinear spin polarisation.
    Collinear {
        /// Starting magnetisation per atom (same order as `RunSpec::atoms`),
        /// as a fraction of the atom's valence charge in [-1, 1] (QE convention).
        starting_magnetization: Vec<f64>,
        /// Fixed total magnetisation (n_up - n_down, in mu_B per cell), if any.
        total_magnetization: Option<f64>,
    },
}

/// How an SCF that does not continue from bands starts them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum BandStart {
    /// Every atom's pseudo-atomic orbitals, reduced to the lowest Ritz vectors of their span
    /// when they outnumber the bands, completed by random vectors when fewer (the default;
    /// random where no species has orbitals, and with band groups).
    #[default]
    Atomic,
    /// Seeded random vectors.
    Random,
}

impl std::str::FromStr for BandStart {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s.trim().to_ascii_lowercase().as_str() {
            "atomic" | "atomic+random" => Ok(BandStart::Atomic),
            "random" => Ok(BandStart::Random),
            other => Err(format!(
                "unknown start `{other}`: use \"atomic\" or \"random\""
            )),
        }
    }
}

/// Davidson's default search space in multiples of the bands (QE `diago_david_ndim`).
pub const DEFAULT_DAVIDSON_DIM: usize = 3;

/// The functional name that stands for "the one the pseudopotential files name" (QE's
/// behaviour without `input_dft`); the set-up resolves it from the files.
pub const FUNCTIONAL_OF_PSEUDOPOTENTIALS: &str = "of the pseudopotentials";

/// SCF controls.
#[derive(Debug, Clone, PartialEq)]
pub struct ScfSpec {
    /// Energy change between iterations to stop at, Ha (default 1e-8).
    pub energy_tolerance: f64,
    /// Density residual to stop at (default 1e-7).
    pub density_tolerance: f64,
    /// Maximum number of SCF iterations (default 100).
    pub max_iterations: usize,
    /// Density mixing.
    pub mixing: MixingSpec,
    /// `"davidson"` (default; block Davidson, QE's default) or `"lobpcg"`.
    pub eigensolver: String,
    /// Davidson's search space in multiples of the bands (QE `diago_david_ndim`; default 3,
    /// at least 2).
    pub davidson_dim: usize,
    /// Seed for random initial wavefunctions (default 42).
    pub seed: u64,
    /// Starting bands: atomic orbitals (default) or random (QE `startingwfc`).
    pub start: BandStart,
    /// Continue from a checkpoint (QE `restart_mode = 'restart'`; the file is `--restart FILE`
    /// or `<stem>.ckpt` next to the input).
    pub restart: bool,
    /// Stop cleanly before this many seconds of wall time (QE `max_seconds`; `--time-limit`
    /// overrides it).
    pub max_seconds: Option<f64>,
}

/// Properties computed after the SCF.
#[derive(Debug, Clone, PartialEq)]
pub struct Properties {
    /// Forces on the atoms (default true; QE: `tprnfor`, default true here as well).
    pub forces: bool,
    /// Stress tensor (default true for TOML; QE: `tstress`, default false as in pw.x, and
    /// always on for `vc-relax`).
    pub stress: bool,
}

/// A file format for fields on the FFT grid.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GridFormat {
    /// Gaussian cube (bohr; VESTA, Ovito, ASE, VMD, QE pp.x `output_format = 6`).
    Cube,
    /// XCrySDen XSF (Å; VESTA, Ovito, ASE, XCrySDen, QE pp.x `output_format = 5`).
    Xsf,
    /// VASP CHGCAR (Å, the density times the cell volume; pymatgen, VESTA, Bader tools).
    Chgcar,
}

/// Files written after a converged SCF (TOML `[output]`).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct OutputSpec {
    /// The formats of the valence density (and, with collinear spin, the spin density).
    pub density: Vec<GridFormat>,
}

impl Default for Properties {
    fn default() -> Self {
        Properties {
            forces: true,
            stress: true,
        }
    }
}

/// The parallel layout asked for by the input; what is left out is chosen by the cost model of
/// [`planewave_comm::topology`].
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ParallelSpec {
    /// Number of k-point groups.
    pub kpoint_groups: Option<usize>,
    /// Number of band groups per k-point group.
    pub band_groups: Option<usize>,
    /// Consecutive ranks in one band group (CASTEP's order) instead of one G-vector group
    /// (VASP's, the default).
    pub band_consecutive: bool,
    /// All-to-all-v strategy: native | p2p | node | pairwise | nonblocking | auto (default:
    /// `PLANEWAVE_ALLTOALLV`, else native).
    pub alltoallv: Option<String>,
    /// Sum over k-point groups: allreduce | reduce_scatter | auto (default:
    /// `PLANEWAVE_KPOINT_SUM`, else allreduce).
    pub kpoint_sum: Option<String>,
    /// Where the local part of H runs (default: the CPU).
    pub device: Device,
}

/// Where the local part of H runs: TOML `[parallel] device`, CLI `--device`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Device {
    /// The CPU's batched FFTs.
    #[default]
    Cpu,
    /// An NVIDIA GPU (a build with the `cuda` feature).
    Gpu,
}

/// Ionic-step algorithm of a relaxation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RelaxAlgorithm {
    /// Quasi-Newton BFGS with a trust radius (default).
    Bfgs,
    /// Fast inertial relaxation engine.
    Fire,
}

/// Structural relaxation controls, in Hartree atomic units.
#[derive(Debug, Clone, PartialEq)]
pub struct RelaxSpec {
    /// The input itself asks for a relaxation (QE `calculation = 'relax' | 'vc-relax'`).
    pub requested: bool,
    /// Relax the cell too (QE `vc-relax`; TOML `[relax] cell = true`).
    pub cell: bool,
    /// Target pressure, Ha/bohr^3 (TOML in GPa, QE `press` in kbar; default 0).
    pub pressure: f64,
    /// Stop when every force component's atom has |F| below this, Ha/bohr (default 5e-4 =
    /// QE's forc_conv_thr 1e-3 Ry/bohr).
    pub force_tolerance: f64,
    /// With `cell`: stop when |sigma - (-p) 1| is below this in every component, Ha/bohr^3
    /// (default 0.05 GPa = QE's press_conv_thr 0.5 kbar).
    pub stress_tolerance: f64,
    /// Maximum number of ionic steps (default 50; QE `nstep`).
    pub max_steps: usize,
    /// BFGS (default) or FIRE.
    pub algorithm: RelaxAlgorithm,
}

/// 1 GPa in Ha/bohr^3.
pub const GPA_IN_HA_PER_BOHR3: f64 = 1.0 / 29_421.015_697_2;

impl Default for RelaxSpec {
    fn default() -> Self {
        RelaxSpec {
            requested: false,
            cell: false,
            pressure: 0.0,
            force_tolerance: 5e-4,
            stress_tolerance: 0.05 * GPA_IN_HA_PER_BOHR3,
            max_steps: 50,
            algorithm: RelaxAlgorithm::Bfgs,
        }
    }
}

/// The Kerker wave vector of a run that does not set one and is not isolated (1/bohr).
pub const KERKER_Q0: f64 = 0.8;

/// Density mixing (Anderson/Pulay with Kerker preconditioning).
#[derive(Debug, Clone, PartialEq)]
pub struct MixingSpec {
    /// Mixing parameter in (0, 1] (default 0.7).
    pub beta: f64,
    /// History depth (default 8).
    pub depth: usize,
    /// Kerker wave vector in 1/bohr (0 disables Kerker). None (the default): the run chooses,
    /// [`KERKER_Q0`] unless the atoms are isolated by vacuum in every direction, then none.
    pub kerker_q0: Option<f64>,
}

impl Default for MixingSpec {
    fn default() -> Self {
        MixingSpec {
            beta: 0.7,
            depth: 8,
            kerker_q0: None,
        }
    }
}

impl Default for ScfSpec {
    fn default() -> Self {
        ScfSpec {
            energy_tolerance: 1e-8,
            density_tolerance: 1e-7,
            max_iterations: 100,
            mixing: MixingSpec::default(),
            eigensolver: "davidson".to_string(),
            davidson_dim: DEFAULT_DAVIDSON_DIM,
            seed: 42,
            start: Default::default(),
            restart: false,
            max_seconds: None,
        }
    }
}

/// The Davidson search-space factor `n` (QE `diago_david_ndim`, TOML `scf.davidson_dim`),
/// checked: 2 to 8 (below 2 there is no room for new directions; above 8 the workspace costs
/// more memory than it saves iterations).
fn davidson_dim(n: i64) -> Result<usize, String> {
    match usize::try_from(n) {
        Ok(d @ 2..=8) => Ok(d),
        _ => Err(format!(
            "the Davidson search space must be 2 to 8 times the bands, got {n}"
        )),
    }
}

/// The input format, as told by [`detect_format`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InputFormat {
    /// planewave's TOML format.
    Toml,
    /// Quantum ESPRESSO `pw.x` input.
    QuantumEspresso,
}

/// Tells the format by content: a line starting (after blanks) with `&control` or
/// `&system` (any case) or `ATOMIC_SPECIES` means QE, anything else TOML.
pub fn detect_format(text: &str) -> InputFormat {
    for line in text.lines() {
        let t = line.trim_start();
        let lower: String = t.chars().take(16).collect::<String>().to_ascii_lowercase();
        if lower.starts_with("&control")
            || lower.starts_with("&system")
            || lower.starts_with("atomic_species")
        {
            return InputFormat::QuantumEspresso;
        }
    }
    InputFormat::Toml
}

/// Reads `path`, decides TOML vs QE `pw.x` by content (see [`detect_format`]),
/// parses and validates it.
pub fn load(path: &Path) -> Result<RunSpec, InputError> {
    let bytes = std::fs::read(path)
        .map_err(|e| {
            let hint = if e.kind() == std::io::ErrorKind::NotFound {
                "check the path (relative paths start from the current folder); INPUT is a planewave TOML or QE pw.x file"
            } else {
                "check that INPUT is a readable file (a planewave TOML or QE pw.x input)"
            };
            InputError::new(path, format!("cannot read the input file: {e}")).with_hint(hint)
        })?;
    let text = String::from_utf8(bytes).map_err(|e| {
        InputError::new(
            path,
            format!(
                "the input file is not valid UTF-8 text (bad byte at offset {})",
                e.utf8_error().valid_up_to()
            ),
        )
    })?;
    match detect_format(&text) {
        InputFormat::QuantumEspresso => parse_qe_str(&text, path),
        InputFormat::Toml => parse_toml_str(&text, path),
    }
}

/// Parses and validates planewave TOML input. `source` is the file it came from:
/// used in messages, for the default title, and to resolve relative paths
/// (pseudopotentials, `poscar`) against its folder.
pub fn parse_toml_str(text: &str, source: &Path) -> Result<RunSpec, InputError> {
    self::toml::parse(text, source)
}

/// Parses and validates Quantum ESPRESSO `pw.x` input. `source` is the file it
/// came from: used in messages, for the default title, and to resolve
/// `pseudo_dir` (default: the file's folder).
pub fn parse_qe_str(text: &str, source: &Path) -> Result<RunSpec, InputError> {
    self::qe::parse(text, source)
}

/// The folder of `source`, for resolving relative paths ("" when it has none).
pub(crate) fn base_dir(source: &Path) -> PathBuf {
    source.parent().map(Path::to_path_buf).unwrap_or_default()
}

/// The file stem of `source`, or `"planewave"`.
pub(crate) fn stem(source: &Path) -> String {
    source
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "planewave".to_string())
}

/// Test helper for the readers: `r` must be an error whose key is `key` and whose message
/// contains `msg`.
#[cfg(test)]
fn expect_error(r: Result<RunSpec, InputError>, key: &str, msg: &str) -> InputError {
    let e = r.expect_err("expected an error");
    assert_eq!(e.key.as_deref(), Some(key), "{e}");
    assert!(
        e.message.contains(msg),
        "message `{}` lacks `{msg}`",
        e.message
    );
    e
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn format_detection() {
        assert_eq!(detect_format("&CONTROL\n/\n"), InputFormat::QuantumEspresso);
        assert_eq!(detect_format("  &system\n"), InputFormat::QuantumEspresso);
        assert_eq!(
            detect_format("ATOMIC_SPECIES\n"),
            InputFormat::QuantumEspresso
        );
        assert_eq!(detect_format("[basis]\necut = 1\n"), InputFormat::Toml);
        assert_eq!(detect_format(""), InputFormat::Toml);
    }

    #[test]
    fn load_missing_file() {
        let e = load(Path::new("/nonexistent/dir/x.toml")).unwrap_err();
        assert!(e.to_string().contains("cannot read"), "{e}");
    }

    #[test]
    fn load_dispatches_by_content() {
        let dir = std::env::temp_dir().join(format!("pw_input_load_{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let qe = dir.join("run.in");
        std::fs::write(&qe, super::qe::tests::SI2).unwrap();
        let spec = load(&qe).unwrap();
        assert_eq!(spec.title, "si2");
        let tm = dir.join("si.toml");
        std::fs::write(&tm, super::toml::tests::SI_TOML).unwrap();
        let spec = load(&tm).unwrap();
        assert_eq!(spec.atoms.len(), 2);
        assert_eq!(spec.species[0].pseudo, dir.join("pseudos/Si-q4.lda.cp2k"));
        let bad = dir.join("bad.bin");
        std::fs::write(&bad, [0xffu8, 0xfe, 0x00]).unwrap();
        assert!(load(&bad).unwrap_err().message.contains("UTF-8"));
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// The QE inputs of the reference runs, copied into the repository (`tests/data/qe/*/pw.in`).
    fn reference_dir() -> PathBuf {
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/data/qe")
    }

    #[test]
    fn reference_inputs_parse() {
        let root = reference_dir();
        let mut n = 0;
        let mut runs: Vec<_> = std::fs::read_dir(&root)
            .unwrap()
            .flatten()
            .map(|e| e.path())
            .collect();
        runs.sort();
        for run in runs {
            {
                let pw = run.join("pw.in");
                if !pw.is_file() {
                    continue;
                }
                let spec = load(&pw).unwrap_or_else(|e| panic!("{e}"));
                n += 1;
                let name = run.file_name().unwrap().to_string_lossy().into_owned();
                assert_eq!(spec.title, name);
                let hybrid = name.contains("pbe0") || name.contains("hse");
                assert_eq!(spec.hybrid.is_some(), hybrid, "{name}");
                if !name.starts_with("h2o") {
                    assert_eq!(spec.ecut, 15.0);
                }
                match name.as_str() {
                    "si2_lda_gth" => {
                        assert_eq!(
                            spec.lattice,
                            [[0.0, 5.13, 5.13], [5.13, 0.0, 5.13], [5.13, 5.13, 0.0]]
                        );
                        assert_eq!(spec.atoms[0].frac, [0.0; 3]);
                        assert_eq!(spec.atoms[1].frac, [0.25; 3]);
                        assert_eq!(
                            spec.kpoints,
                            Kpoints::MonkhorstPack {
                                grid: [4, 4, 4],
                                shift: [false; 3]
                            }
                        );
                        assert!(spec.species[0]
                            .pseudo
                            .ends_with("pseudos/gth/Si-q4.lda.gth"));
                        assert_eq!(
                            spec.species[0].pseudo,
                            run.join("../../pseudos/gth/Si-q4.lda.gth")
                        );
                        assert_eq!(spec.functional, "lda_pz");
                    }
                    "al1_lda_gth" => assert_eq!(spec.smearing, Smearing::Gaussian(0.01)),
                    "h1_lsda_gth_box" => assert!(matches!(
                        spec.spin,
                        Spin::Collinear { total_magnetization: Some(t), .. } if t == 1.0
                    )),
                    "si2_pbe_dojo" | "si2_pbe_sg15" => assert_eq!(spec.functional, "pbe"),
                    "h2o_pbe0_gth_gamma" | "si2_pbe0_gth_nq1" | "si2_pbe0_gth"
                    | "si2_pbe0_sg15" => {
                        assert_eq!(spec.functional, "pbe");
                        let h = spec.hybrid.expect("PBE0");
                        assert_eq!(h.fraction, 0.25);
                        assert_eq!(h.kernel.screening, None);
                        assert!(h.kernel.x_gamma_extrapolation);
                        let q = match name.as_str() {
                            "si2_pbe0_gth" => 2,
                            "si2_pbe0_sg15" | "si2_hse_sg15" => 3,
                            _ => 1,
                        };
                        assert_eq!(h.kernel.q_grid, [q; 3]);
                    }
                    "si64_lda_gth_gamma" => {
                        assert_eq!(spec.kpoints, Kpoints::Gamma);
                        assert_eq!(spec.atoms.len(), 64);
                    }
                    _ => {}
                }
            }
        }
        assert_eq!(
            n,
            15,
            "expected the 15 reference inputs under {}",
            root.display()
        );
    }

    /// Random mutations (and cuts) of valid inputs — pw.x with CELL_PARAMETERS and with a
    /// Bravais lattice, TOML, POSCAR — must give `Ok` or `Err`, never panic.
    #[test]
    fn mutations_never_panic() {
        let mut state: u64 = 0x9e37_79b9_7f4a_7c15;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        let alphabet: Vec<char> = "0123456789.-+eEdD ,=/&!#'\"()[]{}\nabcxyzSi_ \u{e9}"
            .chars()
            .collect();
        const TRIGONAL: &str = "&control\n/\n&system\n ibrav=-5, A=3.5, cosAB=0.45, nat=1, ntyp=1, ecutwfc=10\n/\n&electrons\n/\nATOMIC_SPECIES\n Si 28.1 Si.upf\nATOMIC_POSITIONS alat\n Si 0.1 0.2 0.3\nK_POINTS automatic\n 2 2 2 0 0 0\n";
        let seeds = [
            super::qe::tests::SI2,
            super::qe::tests::H1,
            super::toml::tests::SI_TOML,
            super::poscar::tests::POSCAR_DIRECT,
            super::poscar::tests::POSCAR_CART,
            TRIGONAL,
        ];
        for round in 0..3000 {
            let base = seeds[round % seeds.len()];
            let mut chars: Vec<char> = base.chars().collect();
            for _ in 0..(1 + next() % 4) {
                if chars.is_empty() {
                    break;
                }
                let pos = (next() as usize) % chars.len();
                match next() % 3 {
                    0 => {
                        chars.remove(pos);
                    }
                    1 => chars.insert(pos, alphabet[(next() as usize) % alphabet.len()]),
                    _ => chars[pos] = alphabet[(next() as usize) % alphabet.len()],
                }
            }
            let text: String = chars.into_iter().collect();
            let path = Path::new("fuzz.in");
            let _ = match detect_format(&text) {
                InputFormat::QuantumEspresso => parse_qe_str(&text, path),
                InputFormat::Toml => parse_toml_str(&text, path),
            };
            let _ = parse_qe_str(&text, path);
            let _ = parse_toml_str(&text, path);
            let _ = super::poscar::parse_poscar(&text, path);
            // and every cut of the mutated text
            let cut = (next() as usize) % (text.len() + 1);
            if let Some(part) = text.get(..cut) {
                let _ = parse_qe_str(part, path);
                let _ = super::poscar::parse_poscar(part, path);
            }
        }
        for garbage in [
            "",
            "\0\0",
            "&",
            "&system",
            "/",
            "K_POINTS automatic\n",
            "ATOMIC_SPECIES\nSi\n",
            "&system\n nat=99999999999999999999\n/\n",
        ] {
            let _ = parse_qe_str(garbage, Path::new("g"));
            let _ = parse_toml_str(garbage, Path::new("g"));
        }
    }
}
