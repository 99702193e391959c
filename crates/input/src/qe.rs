//! Quantum ESPRESSO `pw.x` input reader.
//!
//! Layout: `qe_syntax.rs` splits the text into namelists and cards; this file reads each
//! namelist into a typed struct (`deny_unknown_fields`, so an unknown key is refused with the
//! nearest known one) and maps the structs to a [`super::RunSpec`]; `qe_cell.rs` reads the
//! lattice (`qe_lattice.rs` holds pw.x's Bravais formulas), `qe_cards.rs` the other cards and
//! `qe_hybrid.rs` the exact-exchange keys.
//!
//! Syntax: namelists `&name ... /` of `key = value` pairs separated by commas or
//! newlines; keys are case-insensitive and may be indexed (`celldm(1)`,
//! `starting_magnetization(2)`, index = species order in ATOMIC_SPECIES);
//! values are quoted strings ('..' or ".."), Fortran numbers (`1.0d-10`) or
//! logicals (`.true.`, `.false.`, `T`, `F`); `!` and `#` start comments. Cards
//! follow the namelists: a card name (any case) with an optional option in
//! `{}`/`()` or bare, then its rows.
//!
//! Mapping (QE energies are in Ry; planewave's in Ha):
//! * `ecutwfc` (Ry) -> `ecut` = ecutwfc/2 Ha; `ecutrho` (Ry) -> `ecut_rho`, at least 4*ecutwfc
//!   (norm-conserving only).
//! * `input_dft`: pz, lda -> lda_pz; pw -> lda_pw; sla+vwn, vwn -> lda_vwn; pbe -> pbe;
//!   pbe0 and hse -> pbe with exact exchange ([`super::RunSpec::hybrid`]; hse with the erfc
//!   kernel and `screening_parameter`, default 0.106 1/bohr).
//!   Absent: the functional the pseudopotential files name, as QE does
//!   ([`crate::FUNCTIONAL_OF_PSEUDOPOTENTIALS`]).
//! * With pbe0 or hse (`qe_hybrid.rs`): `exx_fraction` (default 0.25), `x_gamma_extrapolation`
//!   (default true), `exxdiv_treatment` 'gygi-baldereschi' only, `nqx1..3` (a sub-grid of the
//!   k grid, checked at set-up),
//!   `ecutfock` = ecutrho only, `ecutvcut` = 0, `localization_thr` = 0, `ace` = true; these
//!   keys without a hybrid, `screening_parameter` with pbe0, and `tstress` are errors.
//! * `occupations` fixed | smearing (tetrahedra, tetrahedra_lin, tetrahedra_opt in an nscf step:
//!   the method of its density of states); `smearing` gaussian/gauss,
//!   methfessel-paxton/m-p/mp, marzari-vanderbilt/cold/m-v/mv, fermi-dirac/f-d/fd
//!   (QE default gaussian); `degauss` (Ry) -> width/2 Ha.
//! * `nspin` 1 | 2; `tot_magnetization`; `starting_magnetization(i)` per species.
//! * `nbnd`, `tot_charge` (same sign convention as [`super::RunSpec::charge`]), `nosym`.
//! * `nr1, nr2, nr3` (all three or none) -> [`super::RunSpec::fft_grid`].
//! * `conv_thr` (Ry, QE default 1e-6) -> energy_tolerance = conv_thr/2 Ha and
//!   density_tolerance = sqrt(energy_tolerance / 10): the energy error of a density residual R is
//!   second order, about 10 R^2 Ha for small cells, so this stops where QE's estimate would.
//! * `mixing_beta`, `mixing_ndim`, `electron_maxstep`. `mixing_mode`: plain (QE's default)
//!   -> planewave's own choice of preconditioner (Kerker's with q0 = 0.8/bohr, none for an
//!   isolated molecule or atom); TF or local-TF -> Kerker's always, the nearest planewave has.
//! * `diagonalization`: david, rmm-davidson -> davidson; cg, ppcg, paro, rmm-paro ->
//!   lobpcg; absent -> davidson (QE's default too). `diago_david_ndim` -> the Davidson
//!   search space (planewave's default is 3, QE's 2).
//! * `pseudo_dir` relative to the input file's folder (default: that folder).
//! * `calculation` 'scf' | 'relax' | 'vc-relax' (the last two run a relaxation) | 'bands' |
//!   'nscf' (fixed-density steps after the SCF of the same `prefix` and `outdir`,
//!   [`super::QeRun`]);
//!   `tprnfor`, `tstress` (forces are always computed; stress with tstress or vc-relax);
//!   `forc_conv_thr` (Ry/bohr), `press` and `press_conv_thr` (kbar), `nstep`,
//!   `ion_dynamics` 'bfgs' | 'fire', `cell_dofree` 'all' (only).
//! * `prefix` (-> title) and `outdir` name the save folder of a QE workflow ([`super::QeRun`]).
//! * Accepted and ignored (no physics): wfcdir, disk_io (but 'none' keeps no save folder), disk_io, verbosity, wf_collect, iprint, etot_conv_thr,
//!   lkpoint_dir, title, startingwfc (not 'file'), startingpot (not 'file'),
//!   scf_must_converge, diago_full_acc, and &ions/&cell keys
//!   that only matter for relaxations.
//! * Any other key is an error naming it.
//! * ibrav 0 (CELL_PARAMETERS bohr | angstrom | alat) and every Bravais lattice of pw.x (1-14,
//!   -3, -5, -9, 91, -12, -13; [`super::qe_lattice`]) from celldm(1..6) or A, B, C (angstrom)
//!   with cosAB, cosAC, cosBC.
//! * K_POINTS automatic | gamma | crystal (list) | tpiba (list, the default option); crystal_b
//!   and tpiba_b (a band path, `calculation = 'bands'` only; each row's weight is the points to
//!   the next vertex, its `! label` comment the vertex's name).

use std::collections::BTreeMap;
use std::path::Path;

use serde::de::DeserializeOwned;
use serde::Deserialize;

use super::error::did_you_mean;
use super::qe_syntax::{self, Document, Refused};
use super::units::HARTREE_PER_RYDBERG;
use super::validate::{validate, Lines, QE_KEYS};
use super::{
    base_dir, stem, AtomSpec, DosMethod, DosSpec, InputError, InputFormat, Kpoints, NonScf,
    Properties, QeRun, RelaxAlgorithm, RelaxSpec, RunSpec, ScfSpec, Smearing, SpeciesSpec, Spin,
    GPA_IN_HA_PER_BOHR3,
};

#[path = "qe_cards.rs"]
mod cards;
#[path = "qe_cell.rs"]
mod cell;
#[path = "qe_hybrid.rs"]
mod hybrid;

/// One kbar in Ha/bohr^3.
const KBAR: f64 = 0.1 * GPA_IN_HA_PER_BOHR3;

/// The namelists planewave reads, and the keys of each accepted without effect.
const NAMELISTS: [(&str, &[&str]); 5] = [
    (
        "control",
        &["title", "verbosity", "wfcdir", "iprint", "etot_conv_thr"],
    ),
    ("system", &[]),
    ("electrons", &[]),
    (
        "ions",
        &[
            "ion_positions",
            "pot_extrapolation",
            "wfc_extrapolation",
            "ion_temperature",
            "tempw",
            "upscale",
            "bfgs_ndim",
            "trust_radius_max",
            "trust_radius_min",
            "trust_radius_ini",
        ],
    ),
    ("cell", &["cell_dynamics", "wmass", "cell_factor"]),
];

/// The keys of &control that planewave reads.
#[derive(Deserialize, Default)]
#[serde(default, deny_unknown_fields)]
struct Control {
    calculation: Option<String>,
    restart_mode: Option<String>,
    pseudo_dir: Option<String>,
    prefix: Option<String>,
    outdir: Option<String>,
    disk_io: Option<String>,
    tstress: Option<bool>,
    tprnfor: Option<bool>,
    max_seconds: Option<f64>,
    forc_conv_thr: Option<f64>,
    nstep: Option<f64>,
    /// Checked to be a logical, then ignored.
    #[serde(rename = "wf_collect")]
    _wf_collect: Option<bool>,
    #[serde(rename = "lkpoint_dir")]
    _lkpoint_dir: Option<bool>,
}

/// The keys of &system; the exact-exchange ones are read in `qe_hybrid.rs`.
#[derive(Deserialize, Default)]
#[serde(default, deny_unknown_fields)]
struct System {
    ibrav: Option<i64>,
    celldm: BTreeMap<usize, f64>,
    a: Option<f64>,
    b: Option<f64>,
    c: Option<f64>,
    cosab: Option<f64>,
    cosac: Option<f64>,
    cosbc: Option<f64>,
    nat: Option<i64>,
    ntyp: Option<i64>,
    nbnd: Option<i64>,
    tot_charge: Option<f64>,
    tot_magnetization: Option<f64>,
    starting_magnetization: BTreeMap<usize, f64>,
    ecutwfc: Option<f64>,
    ecutrho: Option<f64>,
    nosym: Option<bool>,
    occupations: Option<String>,
    degauss: Option<f64>,
    smearing: Option<String>,
    nspin: Option<i64>,
    input_dft: Option<String>,
    nr1: Option<i64>,
    nr2: Option<i64>,
    nr3: Option<i64>,
    ecutfock: Option<f64>,
    exx_fraction: Option<f64>,
    screening_parameter: Option<f64>,
    exxdiv_treatment: Option<String>,
    x_gamma_extrapolation: Option<bool>,
    ecutvcut: Option<f64>,
    nqx1: Option<i64>,
    nqx2: Option<i64>,
    nqx3: Option<i64>,
    localization_thr: Option<f64>,
    ace: Option<bool>,
}

/// The keys of &electrons.
#[derive(Deserialize, Default)]
#[serde(default, deny_unknown_fields)]
struct Electrons {
    electron_maxstep: Option<i64>,
    conv_thr: Option<f64>,
    mixing_mode: Option<String>,
    mixing_beta: Option<f64>,
    mixing_ndim: Option<i64>,
    diagonalization: Option<String>,
    startingwfc: Option<String>,
    startingpot: Option<String>,
    diago_david_ndim: Option<i64>,
    /// Checked to be logicals, then ignored.
    #[serde(rename = "scf_must_converge")]
    _scf_must_converge: Option<bool>,
    #[serde(rename = "diago_full_acc")]
    _diago_full_acc: Option<bool>,
}

/// The keys of &ions and &cell that planewave reads.
#[derive(Deserialize, Default)]
#[serde(default, deny_unknown_fields)]
struct Ions {
    ion_dynamics: Option<String>,
}

#[derive(Deserialize, Default)]
#[serde(default, deny_unknown_fields)]
struct Cell {
    press: Option<f64>,
    press_conv_thr: Option<f64>,
    cell_dofree: Option<String>,
}

/// Parses QE pw.x text and validates it.
pub(crate) fn parse(text: &str, source: &Path) -> Result<RunSpec, InputError> {
    let r = Reader {
        file: source,
        doc: qe_syntax::read(text, source)?,
    };
    r.check_namelists()?;
    let control: Control = r.namelist("control")?;
    let sys: System = r.namelist("system")?;
    let electrons: Electrons = r.namelist("electrons")?;
    let (relax, properties, non_scf) =
        r.relax(&control, &r.namelist("ions")?, &r.namelist("cell")?)?;
    let ibrav = r.required("ibrav", sys.ibrav)?;
    let nat = r.count("nat", r.required("nat", sys.nat)?)?;
    let ntyp = r.count("ntyp", r.required("ntyp", sys.ntyp)?)?;
    let ecutwfc = r.required("ecutwfc", sys.ecutwfc)?;
    let dft = sys.input_dft.as_deref().map(lower).unwrap_or_default();
    let functional = r.functional(&dft)?;
    let hybrid = hybrid::parse(&r, &dft, &sys, sys.ecutrho.unwrap_or(4.0 * ecutwfc))?;
    if hybrid.is_some() && properties.stress {
        let key = ["tstress", "calculation"]
            .into_iter()
            .find(|k| r.doc.entry(k).is_some());
        let e = r.err(
            key.unwrap_or(""),
            "the stress is not implemented for hybrid functionals",
        );
        return Err(e.with_hint("set tstress = .false. (and use calculation = 'scf' or 'relax')"));
    }
    let (smearing, dos_method) = r.smearing(&sys, non_scf)?;
    let magnetisation = r.magnetisation(&sys, ntyp)?;
    let mut lines = r.lines(ibrav);
    let dir = base_dir(source);
    let pseudo_dir = (control.pseudo_dir.as_deref()).map_or(dir.clone(), |p| dir.join(p.trim()));
    let species = r.species(ntyp, &pseudo_dir, &mut lines)?;
    let (lattice, alat) = r.lattice(&sys, ibrav)?;
    let atoms = r.atoms(nat, &lattice, alat, &mut lines)?;
    let band_path = r.band_path(&lattice, alat, text)?;
    if band_path.is_some() && non_scf != Some(NonScf::Bands) {
        r.kpoints(&lattice, alat)?;
    }
    let spin = magnetisation.map_or(Spin::None, |(by_species, total)| Spin::Collinear {
        starting_magnetization: atoms
            .iter()
            .map(|a| {
                let i = species.iter().position(|s| s.symbol == a.species);
                i.and_then(|i| by_species.get(&(i + 1)).copied())
                    .unwrap_or(0.0)
            })
            .collect(),
        total_magnetization: total,
    });
    let spec = RunSpec {
        source: source.to_path_buf(),
        title: (control.prefix.as_deref())
            .map(|p| p.trim().to_string())
            .filter(|s| !s.is_empty())
            .unwrap_or_else(|| stem(source)),
        kpoints: match &band_path {
            Some(p) => {
                let list = p.kpoints().kpoints;
                let w = 1.0 / list.len() as f64;
                Kpoints::Explicit(list.into_iter().map(|k| (k, w)).collect())
            }
            None => r.kpoints(&lattice, alat)?,
        },
        lattice,
        atoms,
        species,
        functional,
        hybrid,
        smearing,
        spin,
        charge: sys.tot_charge.unwrap_or(0.0),
        ecut: ecutwfc * HARTREE_PER_RYDBERG,
        ecut_rho: sys.ecutrho.map(|x| x * HARTREE_PER_RYDBERG),
        nbands: sys.nbnd.map(|n| r.count("nbnd", n)).transpose()?,
        fft_grid: r.fft_grid(&sys)?,
        scf: r.scf(&control, &electrons)?,
        use_symmetry: !sys.nosym.unwrap_or(false),
        properties,
        relax,
        parallel: Default::default(),
        bands: band_path,
        dos: DosSpec {
            method: dos_method.unwrap_or_default(),
            ..Default::default()
        },
        output: Default::default(),
        origin: lines.origin(InputFormat::QuantumEspresso),
        qe: Some(QeRun {
            prefix: (control.prefix.as_deref().map(str::trim))
                .filter(|p| !p.is_empty())
                .unwrap_or("pwscf")
                .to_string(),
            outdir: control.outdir.as_deref().map(|o| dir.join(o.trim())),
            folder: dir.clone(),
            alat,
            non_scf,
            keep: control.disk_io.as_deref().map(lower).as_deref() != Some("none"),
        }),
    };
    validate(&spec, &QE_KEYS, &lines)?;
    if dos_method.is_some() {
        r.tetrahedron_grid(&spec.kpoints)?;
    }
    Ok(spec)
}

/// Namelist `name` of `doc` read into its struct (the default when it is absent), the keys
/// `ignored` accepted without effect; a refusal names the key and its line in `file`.
pub(crate) fn namelist_of<T: DeserializeOwned + Default>(
    file: &Path,
    doc: &Document,
    name: &str,
    ignored: &[&str],
) -> Result<T, InputError> {
    let Some(nl) = doc.namelist(name) else {
        return Ok(T::default());
    };
    nl.deserialize(ignored).map_err(|(refused, entry)| {
        let key = entry.map_or(format!("&{name}"), |e| e.key.clone());
        let line = entry.map_or(nl.line, |e| e.line);
        let err = InputError::new(file, "").with_key(key.clone()).at_line(Some(line));
        let (message, hint) = match refused {
            Refused::Unknown(known) => {
                let physics = if name == "system" { " (it changes the physics)" } else { "" };
                let base = entry.map_or("", |e| e.name.as_str());
                let hint = did_you_mean(base, known.iter().chain(ignored).copied())
                    .unwrap_or_else(|| "remove it (planewave cannot honour it), or write the run in planewave's TOML format".into());
                let message =
                    format!("QE key `{key}` in &{name} is not supported by planewave{physics}");
                (message, Some(hint))
            }
            Refused::Value(m, hint) => (m, hint.map(str::to_string)),
        };
        InputError { message, hint, ..err }
    })
}

/// `s` trimmed and in lower case.
fn lower(s: &str) -> String {
    s.trim().to_ascii_lowercase()
}

/// The split input, and errors that point into it.
struct Reader<'a> {
    file: &'a Path,
    doc: Document,
}

impl Reader<'_> {
    /// An error about the entry written `key`, at its line.
    fn err(&self, key: &str, msg: impl Into<String>) -> InputError {
        let line = self.doc.entry(key).map(|e| e.line);
        InputError::new(self.file, msg).with_key(key).at_line(line)
    }

    /// Every namelist is one planewave reads, and &system is there.
    fn check_namelists(&self) -> Result<(), InputError> {
        if let Some(nl) =
            (self.doc.namelists.iter()).find(|nl| !NAMELISTS.iter().any(|(n, _)| *n == nl.name))
        {
            return Err(InputError::new(self.file, format!("namelist &{} is not supported by planewave", nl.name))
                .with_key(format!("&{}", nl.name))
                .at_line(Some(nl.line))
                .with_hint("supported: &control, &system, &electrons (and &ions/&cell without effect on an SCF)"));
        }
        match self.doc.namelist("system") {
            Some(_) => Ok(()),
            None => Err(InputError::new(self.file, "missing namelist &system").with_key("&system")),
        }
    }

    /// Namelist `name` read into its struct (the default when it is absent).
    fn namelist<T: DeserializeOwned + Default>(&self, name: &str) -> Result<T, InputError> {
        let ignored = NAMELISTS
            .iter()
            .find(|(n, _)| *n == name)
            .map_or(&[][..], |n| n.1);
        namelist_of(self.file, &self.doc, name, ignored)
    }

    /// A key &system must give.
    fn required<T>(&self, key: &str, value: Option<T>) -> Result<T, InputError> {
        value.ok_or_else(|| {
            InputError::new(
                self.file,
                format!("missing required key `{key}` in &system"),
            )
            .with_key(key)
            .at_line(self.doc.namelist("system").map(|n| n.line))
        })
    }

    /// A count, which cannot be negative (validation checks the least one).
    fn count(&self, key: &str, n: i64) -> Result<usize, InputError> {
        usize::try_from(n).map_err(|_| self.err(key, format!("{key} cannot be negative, got {n}")))
    }

    /// A number that must be positive.
    fn positive(&self, key: &str, x: Option<f64>) -> Result<Option<f64>, InputError> {
        match x {
            Some(x) if x.is_nan() || x <= 0.0 => {
                Err(self.err(key, format!("{key} must be positive, got {x}")))
            }
            _ => Ok(x),
        }
    }

    /// The line of every key and card, for later stages' messages.
    fn lines(&self, ibrav: i64) -> Lines {
        let mut lines = Lines::default();
        for e in self.doc.namelists.iter().flat_map(|n| &n.entries) {
            lines.keys.entry(e.name.clone()).or_insert(e.line);
        }
        for c in &self.doc.cards {
            lines.keys.insert(c.name.clone(), c.line);
        }
        if let Some(&l) = lines.keys.get("occupations") {
            lines.keys.entry("degauss".into()).or_insert(l);
        }
        if let (Some(&l), true) = (lines.keys.get("ibrav"), ibrav != 0) {
            lines.keys.insert("CELL_PARAMETERS".into(), l);
        }
        lines
    }

    /// The k-points of an nscf step by tetrahedra: a Monkhorst-Pack grid of 2 points a side or
    /// more.
    fn tetrahedron_grid(&self, kpoints: &Kpoints) -> Result<(), InputError> {
        let grid = match kpoints {
            Kpoints::MonkhorstPack { grid, .. } if grid.iter().all(|&n| n >= 2) => return Ok(()),
            Kpoints::MonkhorstPack { grid, .. } => {
                format!("the grid {}x{}x{}", grid[0], grid[1], grid[2])
            }
            _ => "a k-point list".to_string(),
        };
        let line = self.doc.card("K_POINTS").map(|c| c.line);
        let msg = format!("occupations = 'tetrahedra...' integrate over a Monkhorst-Pack grid of at least 2 points a side, and this input gives {grid}");
        Err(InputError::new(self.file, msg)
            .with_key("K_POINTS")
            .at_line(line)
            .with_hint("use K_POINTS automatic, e.g. 12 12 12 0 0 0"))
    }

    /// `calculation` and the relaxation keys of &control, &ions and &cell.
    fn relax(
        &self,
        c: &Control,
        ions: &Ions,
        cell: &Cell,
    ) -> Result<(RelaxSpec, Properties, Option<NonScf>), InputError> {
        let mut relax = RelaxSpec::default();
        let mut non_scf = None;
        match c.calculation.as_deref().map(lower).as_deref() {
            None | Some("scf") => {}
            Some("relax") => relax.requested = true,
            Some("vc-relax") => (relax.requested, relax.cell) = (true, true),
            Some("bands") => non_scf = Some(NonScf::Bands),
            Some("nscf") => non_scf = Some(NonScf::Nscf),
            Some(_) => {
                let msg = format!(
                    "calculation = '{}' is not supported: planewave does 'scf', 'relax', 'vc-relax', 'bands' and 'nscf'",
                    c.calculation.as_deref().unwrap_or_default()
                );
                let hint = "use one of those";
                return Err(self.err("calculation", msg).with_hint(hint));
            }
        }
        let properties = Properties {
            forces: non_scf.is_none() && (c.tprnfor.unwrap_or(true) || relax.requested),
            stress: non_scf.is_none() && (c.tstress.unwrap_or(relax.cell) || relax.cell),
        };
        if let Some(x) = self.positive("forc_conv_thr", c.forc_conv_thr)? {
            relax.force_tolerance = x * HARTREE_PER_RYDBERG;
        }
        relax.pressure = cell.press.map_or(relax.pressure, |p| p * KBAR);
        if let Some(x) = self.positive("press_conv_thr", cell.press_conv_thr)? {
            relax.stress_tolerance = x * KBAR;
        }
        if let Some(x) = c.nstep {
            if x.is_nan() || x < 1.0 || x.fract() != 0.0 {
                let msg = format!("nstep must be a positive integer, got {x}");
                return Err(self.err("nstep", msg));
            }
            relax.max_steps = x as usize;
        }
        relax.algorithm = match ions.ion_dynamics.as_deref().map(lower).as_deref() {
            None => relax.algorithm,
            Some("bfgs") => RelaxAlgorithm::Bfgs,
            Some("fire") => RelaxAlgorithm::Fire,
            Some(other) => {
                let e = self.err(
                    "ion_dynamics",
                    format!("ion_dynamics = '{other}' is not supported"),
                );
                return Err(e.with_hint("use 'bfgs' or 'fire'"));
            }
        };
        if let Some(d) = cell.cell_dofree.as_deref().filter(|d| lower(d) != "all") {
            let e = self.err(
                "cell_dofree",
                format!("cell_dofree = '{d}' is not supported"),
            );
            return Err(e.with_hint("use cell_dofree = 'all' (the default)"));
        }
        Ok((relax, properties, non_scf))
    }

    /// planewave's name of `input_dft` (lower case; empty when absent).
    fn functional(&self, dft: &str) -> Result<String, InputError> {
        let name = match dft {
            "" => crate::FUNCTIONAL_OF_PSEUDOPOTENTIALS,
            "pz" | "lda" | "sla+pz" => "lda_pz",
            "pw" | "sla+pw" => "lda_pw",
            "sla+vwn" | "vwn" => "lda_vwn",
            "pbe" | "pbe0" | "hse" => "pbe",
            other => {
                let e = self.err(
                    "input_dft",
                    format!("input_dft = '{other}' is not supported by planewave"),
                );
                return Err(e.with_hint(
                    "supported: 'pz' (or 'lda'), 'pw', 'vwn' (or 'sla+vwn'), 'pbe', 'pbe0', 'hse'",
                ));
            }
        };
        Ok(name.to_string())
    }

    /// `occupations`, `smearing` and `degauss`; an nscf step's tetrahedra are the method of
    /// its density of states (the occupations stay integer).
    fn smearing(
        &self,
        sys: &System,
        non_scf: Option<NonScf>,
    ) -> Result<(Smearing, Option<DosMethod>), InputError> {
        let width = sys.degauss.unwrap_or(0.0) * HARTREE_PER_RYDBERG;
        match sys.occupations.as_deref().map(lower).as_deref() {
            None | Some("fixed") => return Ok((Smearing::None, None)),
            Some("smearing") => {}
            Some(t @ ("tetrahedra" | "tetrahedra_opt" | "tetrahedra_lin")) => {
                if non_scf != Some(NonScf::Nscf) {
                    let msg = format!("occupations = '{t}' is implemented for the nscf step of a density of states only");
                    let hint = "use 'smearing' for the SCF of a metal, then calculation = 'nscf' with tetrahedra";
                    return Err(self.err("occupations", msg).with_hint(hint));
                }
                let method = match t {
                    "tetrahedra_opt" => DosMethod::TetrahedraOpt,
                    _ => DosMethod::Tetrahedra,
                };
                return Ok((Smearing::None, Some(method)));
            }
            Some(o) => {
                let e = self.err(
                    "occupations",
                    format!("occupations = '{o}' is not supported by planewave"),
                );
                return Err(
                    e.with_hint("use 'fixed' or 'smearing' ('tetrahedra_opt' in an nscf step)")
                );
            }
        }
        let smearing = match sys
            .smearing
            .as_deref()
            .map(lower)
            .as_deref()
            .unwrap_or("gaussian")
        {
            "gaussian" | "gauss" => Ok(Smearing::Gaussian(width)),
            "methfessel-paxton" | "m-p" | "mp" => Ok(Smearing::MethfesselPaxton(width)),
            "marzari-vanderbilt" | "cold" | "m-v" | "mv" => Ok(Smearing::MarzariVanderbilt(width)),
            "fermi-dirac" | "f-d" | "fd" => Ok(Smearing::FermiDirac(width)),
            other => Err(self
                .err("smearing", format!("smearing = '{other}' is not supported"))
                .with_hint("use gaussian, methfessel-paxton, marzari-vanderbilt or fermi-dirac")),
        }?;
        Ok((smearing, None))
    }

    /// With `nspin = 2`: the starting magnetisation by species index (1-based) and the total
    /// magnetisation; None without spin, which must then have neither.
    #[allow(clippy::type_complexity)]
    fn magnetisation(
        &self,
        sys: &System,
        ntyp: usize,
    ) -> Result<Option<(BTreeMap<usize, f64>, Option<f64>)>, InputError> {
        let first = self.indexed(
            "starting_magnetization",
            sys.starting_magnetization.keys().next(),
        );
        for (&i, &m) in &sys.starting_magnetization {
            let key = self.indexed("starting_magnetization", Some(&i));
            if i == 0 || i > ntyp {
                return Err(self.err(
                    &key,
                    format!("species index {i} is outside 1..={ntyp} (ntyp)"),
                ));
            }
            if !(-1.0..=1.0).contains(&m) {
                return Err(self
                    .err(
                        &key,
                        format!("starting magnetisation {m} is outside [-1, 1]"),
                    )
                    .with_hint("it is a fraction of the valence charge of that species"));
            }
        }
        // QE writes -10000 (anything below -9999) for "unset".
        let total = sys.tot_magnetization.filter(|&t| t > -9999.0);
        match sys.nspin.unwrap_or(1) {
            1 if total.is_some() => Err(self
                .err(
                    "tot_magnetization",
                    "tot_magnetization is given but nspin = 1 (no spin polarisation)",
                )
                .with_hint("set nspin = 2, or remove tot_magnetization")),
            1 if !sys.starting_magnetization.is_empty() => Err(self
                .err(
                    &first,
                    "starting_magnetization is given but nspin = 1 (no spin polarisation)",
                )
                .with_hint("set nspin = 2, or remove starting_magnetization")),
            1 => Ok(None),
            2 => Ok(Some((sys.starting_magnetization.clone(), total))),
            other => Err(self
                .err(
                    "nspin",
                    format!(
                        "nspin = {other} is not supported (noncollinear spin is not implemented)"
                    ),
                )
                .with_hint("use nspin = 1 or 2")),
        }
    }

    /// The key as written of `name(i)`.
    fn indexed(&self, name: &str, i: Option<&usize>) -> String {
        let written = self.doc.namelists.iter().flat_map(|n| &n.entries);
        (written
            .filter(|e| e.name == name)
            .find(|e| e.index.as_ref() == i))
        .map_or_else(|| name.to_string(), |e| e.key.clone())
    }

    /// `nr1, nr2, nr3`: all three or none.
    fn fft_grid(&self, sys: &System) -> Result<Option<[usize; 3]>, InputError> {
        let given = [("nr1", sys.nr1), ("nr2", sys.nr2), ("nr3", sys.nr3)];
        match given.iter().filter(|g| g.1.is_some()).count() {
            0 => return Ok(None),
            3 => {}
            _ => {
                let (key, _) = given.iter().find(|g| g.1.is_some()).expect("one is given");
                return Err(self.err(key, "give nr1, nr2 and nr3 together (or none of them)"));
            }
        }
        let mut grid = [0; 3];
        for (n, (key, v)) in grid.iter_mut().zip(given) {
            *n = usize::try_from(v.unwrap_or(0))
                .ok()
                .filter(|&n| n >= 1)
                .ok_or_else(|| self.err(key, "nr1, nr2 and nr3 must be positive"))?;
        }
        Ok(Some(grid))
    }

    /// The SCF controls of &control and &electrons.
    fn scf(&self, c: &Control, el: &Electrons) -> Result<ScfSpec, InputError> {
        let energy_tolerance = el.conv_thr.unwrap_or(1e-6) * HARTREE_PER_RYDBERG;
        let mut scf = ScfSpec {
            energy_tolerance,
            density_tolerance: (energy_tolerance / 10.0).sqrt(),
            ..Default::default()
        };
        match c.restart_mode.as_deref().map(lower).as_deref() {
            None | Some("from_scratch") => {}
            Some("restart") => scf.restart = true,
            Some(other) => {
                let e = self.err(
                    "restart_mode",
                    format!("restart_mode = '{other}' is not supported"),
                );
                return Err(
                    e.with_hint("use 'from_scratch' or 'restart' (with a planewave checkpoint)")
                );
            }
        }
        scf.max_seconds = self.positive("max_seconds", c.max_seconds)?;
        if let Some(n) = el.electron_maxstep {
            scf.max_iterations = self.count("electron_maxstep", n)?;
        }
        scf.mixing.beta = el.mixing_beta.unwrap_or(scf.mixing.beta);
        if let Some(n) = el.mixing_ndim {
            scf.mixing.depth = self.count("mixing_ndim", n)?;
        }
        scf.mixing.kerker_q0 = match el.mixing_mode.as_deref().map(lower).as_deref() {
            None | Some("plain") => None,
            Some("tf" | "local-tf") => Some(crate::KERKER_Q0),
            Some(m) => {
                let e = self.err(
                    "mixing_mode",
                    format!("mixing_mode = '{m}' is not supported"),
                );
                return Err(e.with_hint(
                    "use 'plain' (planewave's choice: Kerker's preconditioner, none for an \
                     isolated system) or 'TF' (Kerker's always)",
                ));
            }
        };
        if let Some(d) = el.diagonalization.as_deref().map(lower) {
            scf.eigensolver = match d.as_str() {
                "david" | "davidson" | "rmm-davidson" => "davidson".to_string(),
                "cg" | "ppcg" | "paro" | "rmm-paro" => "lobpcg".to_string(),
                other => {
                    return Err(self.err(
                        "diagonalization",
                        format!("diagonalization = '{other}' is not known"),
                    ))
                }
            };
        }
        for (key, v) in [
            ("startingwfc", &el.startingwfc),
            ("startingpot", &el.startingpot),
        ] {
            if v.as_deref().map(lower).as_deref() == Some("file") {
                return Err(self.err(
                    key,
                    format!("{key} = 'file' is not supported (no restart files)"),
                ));
            }
        }
        if let Some(w) = &el.startingwfc {
            scf.start = lower(w)
                .parse()
                .map_err(|msg: String| self.err("startingwfc", msg))?;
        }
        if let Some(n) = el.diago_david_ndim {
            scf.davidson_dim =
                super::davidson_dim(n).map_err(|m| self.err("diago_david_ndim", m))?;
        }
        Ok(scf)
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::units::BOHR_PER_ANGSTROM;

    pub(crate) const SI2: &str = "&control
  calculation='scf', prefix='si2', outdir='./qe_tmp', pseudo_dir='../pseudos/gth',
  disk_io='none', verbosity='high',
  tprnfor=.true., tstress=.true.
/
&system
  ibrav=0, nat=2, ntyp=1,
  ecutwfc=30.0, ecutrho=120.0,
  input_dft='pz',
  nbnd=8,
  occupations='fixed',
/
&electrons
  conv_thr=1.000e-10, mixing_beta=0.7, electron_maxstep=200,
  diagonalization='david'
/
ATOMIC_SPECIES
  Si 28.085 Si-q4.lda.gth
CELL_PARAMETERS bohr
  0.0000000000 5.1300000000 5.1300000000
  5.1300000000 0.0000000000 5.1300000000
  5.1300000000 5.1300000000 0.0000000000
ATOMIC_POSITIONS crystal
  Si 0.0000000000 0.0000000000 0.0000000000
  Si 0.2500000000 0.2500000000 0.2500000000
K_POINTS automatic
  4 4 4 0 0 0
";

    pub(crate) const AL1: &str = "&control
  calculation='scf', prefix='al1', pseudo_dir='pp'
/
&system
  ibrav=0, nat=1, ntyp=1, ecutwfc=30.0, ecutrho=120.0, input_dft='pz', nbnd=8,
  occupations='smearing', smearing='gaussian', degauss=0.02,
/
&electrons
  conv_thr=1.000e-10, mixing_beta=0.7, electron_maxstep=200, diagonalization='david'
/
ATOMIC_SPECIES
  Al 26.982 Al-q3.lda.gth
CELL_PARAMETERS bohr
  0.0 3.825 3.825
  3.825 0.0 3.825
  3.825 3.825 0.0
ATOMIC_POSITIONS crystal
  Al 0.0 0.0 0.0
K_POINTS automatic
  6 6 6 0 0 0
";

    pub(crate) const H1: &str = "&control
  calculation='scf', prefix='h1', pseudo_dir='pp'
/
&system
  ibrav=0, nat=1, ntyp=1, ecutwfc=30.0, ecutrho=120.0, input_dft='pz', nbnd=2,
  occupations='fixed', nspin=2, tot_magnetization=1, starting_magnetization(1)=0.5,
/
&electrons
  conv_thr=1.000e-10, mixing_beta=0.7, electron_maxstep=200, diagonalization='david'
/
ATOMIC_SPECIES
  H 1.008 H-q1.lda.gth
CELL_PARAMETERS bohr
  10.0 0.0 0.0
  0.0 10.0 0.0
  0.0 0.0 10.0
ATOMIC_POSITIONS crystal
  H 0.0 0.0 0.0
K_POINTS automatic
  1 1 1 0 0 0
";

    fn p(text: &str) -> Result<RunSpec, InputError> {
        parse(text, Path::new("/runs/x/pw.in"))
    }

    /// Parses, expecting an error whose key and message contain the given parts.
    fn fails(text: &str, key: &str, msg: &str) -> InputError {
        super::super::expect_error(p(text), key, msg)
    }

    #[test]
    fn diago_david_ndim_sets_the_davidson_space() {
        let with = |n: &str| {
            SI2.replace(
                "diagonalization='david'",
                &format!("diagonalization='david', diago_david_ndim={n}"),
            )
        };
        assert_eq!(p(SI2).unwrap().scf.davidson_dim, 3);
        assert_eq!(p(&with("4")).unwrap().scf.davidson_dim, 4);
        fails(&with("1"), "diago_david_ndim", "2 to 8 times the bands");
        fails(&with("40"), "diago_david_ndim", "got 40");
    }

    #[test]
    fn mixing_mode_chooses_the_preconditioner() {
        let with = |m: &str| {
            SI2.replace(
                "mixing_beta=0.7",
                &format!("mixing_beta=0.7, mixing_mode={m}"),
            )
        };
        assert_eq!(p(SI2).unwrap().scf.mixing.kerker_q0, None);
        assert_eq!(p(&with("'plain'")).unwrap().scf.mixing.kerker_q0, None);
        assert_eq!(
            p(&with("'TF'")).unwrap().scf.mixing.kerker_q0,
            Some(crate::KERKER_Q0)
        );
        assert_eq!(
            p(&with("'local-TF'")).unwrap().scf.mixing.kerker_q0,
            Some(crate::KERKER_Q0)
        );
    }

    #[test]
    fn si2() {
        let s = p(SI2).unwrap();
        assert_eq!(s.title, "si2");
        assert_eq!(s.lattice[0], [0.0, 5.13, 5.13]);
        assert_eq!(s.lattice[2], [5.13, 5.13, 0.0]);
        assert_eq!(s.atoms.len(), 2);
        assert_eq!(s.atoms[1].frac, [0.25, 0.25, 0.25]);
        assert_eq!(
            s.kpoints,
            Kpoints::MonkhorstPack {
                grid: [4, 4, 4],
                shift: [false; 3]
            }
        );
        assert_eq!(s.ecut, 15.0);
        assert_eq!(
            s.species[0].pseudo,
            Path::new("/runs/x/../pseudos/gth/Si-q4.lda.gth")
        );
        assert_eq!(s.functional, "lda_pz");
        assert_eq!(s.smearing, Smearing::None);
        assert_eq!(s.spin, Spin::None);
        assert_eq!(s.nbands, Some(8));
        assert_eq!(s.scf.energy_tolerance, 0.5e-10);
        assert_eq!(s.scf.max_iterations, 200);
        assert_eq!(s.scf.eigensolver, "davidson");
        assert!(s.use_symmetry);
    }

    #[test]
    fn restart_mode_and_max_seconds() {
        let with = |extra: &str| {
            p(&SI2.replacen("disk_io='none',", &format!("disk_io='none', {extra}"), 1))
        };
        let s = with("restart_mode='restart', max_seconds=3600").unwrap();
        assert!(s.scf.restart);
        assert_eq!(s.scf.max_seconds, Some(3600.0));
        let s = with("restart_mode='from_scratch'").unwrap();
        assert!(!s.scf.restart && s.scf.max_seconds.is_none());
        let e = with("restart_mode='reset_counters'")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("restart_mode = 'reset_counters' is not supported"),
            "{e}"
        );
        let e = with("max_seconds=-5").unwrap_err().to_string();
        assert!(e.contains("max_seconds must be positive"), "{e}");
    }

    #[test]
    fn al1_and_h1() {
        let a = p(AL1).unwrap();
        assert_eq!(a.smearing, Smearing::Gaussian(0.01));
        let h = p(H1).unwrap();
        assert_eq!(
            h.spin,
            Spin::Collinear {
                starting_magnetization: vec![0.5],
                total_magnetization: Some(1.0)
            }
        );
    }

    #[test]
    fn syntax_variants() {
        let t = SI2
            .replace("&control", "&CONTROL ! comment")
            .replace("conv_thr=1.000e-10", "CONV_THR = 1.0D-10 # c")
            .replace("tprnfor=.true.", "tprnfor = T")
            .replace("prefix='si2'", "prefix=\"si2\"")
            .replace("ATOMIC_POSITIONS crystal", "atomic_positions {crystal}")
            .replace("nbnd=8,", "nbnd=8, nosym=.true.");
        let s = p(&t).unwrap();
        assert_eq!(s.scf.energy_tolerance, 0.5e-10);
        assert!(!s.use_symmetry);
    }

    #[test]
    fn relaxation_keys() {
        let s = p(SI2).unwrap();
        assert!(!s.relax.requested);
        assert!(s.properties.forces && s.properties.stress);
        let t = SI2
            .replace("calculation='scf'", "calculation='vc-relax', forc_conv_thr=2e-4, nstep=7")
            .replace("tstress=.true.", "tstress=.false.")
            .replace("&electrons", "&ions\n ion_dynamics='fire'\n/\n&cell\n press=10.0, press_conv_thr=0.2\n/\n&electrons");
        let s = p(&t).unwrap();
        assert!(s.relax.requested && s.relax.cell);
        // vc-relax needs the stress whatever tstress says.
        assert!(s.properties.stress);
        assert_eq!(s.relax.force_tolerance, 1e-4);
        assert_eq!(s.relax.max_steps, 7);
        assert_eq!(s.relax.algorithm, RelaxAlgorithm::Fire);
        // 10 kbar = 1 GPa
        assert!((s.relax.pressure * 29421.0157 - 1.0).abs() < 1e-6);
        assert!((s.relax.stress_tolerance * 29421.0157 - 0.02).abs() < 1e-8);
    }

    #[test]
    fn ibrav2_alat_and_lists() {
        let t = "&control\n calculation='scf'\n/\n&system\n ibrav=2, celldm(1)=10.26, nat=2, ntyp=1, ecutwfc=30\n/\n&electrons\n/\nATOMIC_SPECIES\nSi 28.0855 Si.upf\nATOMIC_POSITIONS alat\nSi 0.0 0.0 0.0\nSi 0.25 0.25 0.25\nK_POINTS tpiba\n2\n0.0 0.0 0.0 1.0\n1.0 0.0 0.0 3.0\n";
        let s = p(t).unwrap();
        assert_eq!(s.lattice[0], [-5.13, 0.0, 5.13]);
        // QE fcc vectors: (a/4)(1,1,1) = -1/4 a1 + 3/4 a2 - 1/4 a3
        for (x, want) in s.atoms[1].frac.iter().zip([-0.25, 0.75, -0.25]) {
            assert!((x - want).abs() < 1e-12, "{x}");
        }
        let Kpoints::Explicit(list) = &s.kpoints else {
            panic!("{:?}", s.kpoints)
        };
        assert_eq!(list[0].1, 0.25);
        // X = (1,0,0) 2pi/a in fcc: fractional (-1/2, 0, -1/2) . check k.a_i/alat
        assert!(
            (list[1].0[0] + 0.5).abs() < 1e-12
                && list[1].0[1].abs() < 1e-12
                && (list[1].0[2] + 0.5).abs() < 1e-12
        );
        let c = t.replace(
            "K_POINTS tpiba\n2\n0.0 0.0 0.0 1.0\n1.0 0.0 0.0 3.0\n",
            "K_POINTS crystal\n1\n0.5 0.5 0.5 2\n",
        );
        let s = p(&c).unwrap();
        assert_eq!(s.kpoints, Kpoints::Explicit(vec![([0.5, 0.5, 0.5], 1.0)]));
        let g = t.replace(
            "K_POINTS tpiba\n2\n0.0 0.0 0.0 1.0\n1.0 0.0 0.0 3.0\n",
            "K_POINTS {gamma}\n",
        );
        assert_eq!(p(&g).unwrap().kpoints, Kpoints::Gamma);
    }

    #[test]
    fn a_bands_step_reads_its_path_and_an_nscf_step_its_tetrahedra() {
        let path = "K_POINTS crystal_b\n3\n0.5 0.5 0.5 4 ! L\n0 0 0 2 ! G\n0.5 0 0.5 1\n";
        let bands = SI2
            .replace("calculation='scf'", "calculation='bands'")
            .replace("K_POINTS automatic\n  4 4 4 0 0 0", path);
        let s = p(&bands).unwrap();
        let qe = s.qe.as_ref().unwrap();
        assert_eq!(qe.non_scf, Some(NonScf::Bands));
        assert_eq!(qe.prefix, "si2");
        assert!(qe.save_dir(None).ends_with("qe_tmp/si2.save"));
        assert!((qe.alat - 5.13 * 2f64.sqrt()).abs() < 1e-12);
        let b = s.bands.as_ref().unwrap();
        let labels: Vec<&str> = b.path.iter().map(|v| v.label.as_str()).collect();
        assert_eq!(labels, ["L", "G", ""]);
        let Kpoints::Explicit(list) = &s.kpoints else {
            panic!("{:?}", s.kpoints)
        };
        assert_eq!(list.len(), 7);
        assert_eq!(list[4].0, [0.0; 3]);
        assert!(!s.properties.forces && !s.properties.stress);
        let nscf = SI2
            .replace("calculation='scf'", "calculation='nscf'")
            .replace("occupations='fixed'", "occupations='tetrahedra_opt'");
        let s = p(&nscf).unwrap();
        assert_eq!(s.qe.as_ref().unwrap().non_scf, Some(NonScf::Nscf));
        assert_eq!(s.dos.method, DosMethod::TetrahedraOpt);
        assert_eq!(s.smearing, Smearing::None);
        let small = nscf.replace("4 4 4 0 0 0", "1 1 1 0 0 0");
        let e = fails(
            &small,
            "K_POINTS",
            "at least 2 points a side, and this input gives the grid 1x1x1",
        );
        assert!(e.line.is_some());
        let tpiba = bands.replace("crystal_b", "tpiba_b");
        let Kpoints::Explicit(t) = p(&tpiba).unwrap().kpoints else {
            panic!()
        };
        // (0.5, 0.5, 0.5) 2 pi / alat is 0.5 a_i . (1, 1, 1) / alat in reduced units.
        let a = 5.13 * 2f64.sqrt();
        assert!((t[0].0[0] - 0.5 * 2.0 * 5.13 / a).abs() < 1e-12);
    }

    #[test]
    fn cell_alat_and_angstrom() {
        let t = SI2.replace("ibrav=0,", "ibrav=0, celldm(1)=10.26,").replace(
            "CELL_PARAMETERS bohr\n  0.0000000000 5.1300000000 5.1300000000\n  5.1300000000 0.0000000000 5.1300000000\n  5.1300000000 5.1300000000 0.0000000000",
            "CELL_PARAMETERS alat\n 0 0.5 0.5\n 0.5 0 0.5\n 0.5 0.5 0",
        );
        assert_eq!(p(&t).unwrap().lattice[1], [5.13, 0.0, 5.13]);
        let t = SI2.replace("CELL_PARAMETERS bohr", "CELL_PARAMETERS angstrom");
        let s = p(&t).unwrap();
        assert!((s.lattice[0][1] - 5.13 * BOHR_PER_ANGSTROM).abs() < 1e-12);
    }

    #[test]
    fn errors_name_keys() {
        assert_eq!(
            p(&SI2.replace("ecutrho=120.0", "ecutrho=240.0"))
                .unwrap()
                .ecut_rho,
            Some(120.0)
        );
        fails(
            &SI2.replace("ecutrho=120.0", "ecutrho=100.0"),
            "ecutrho",
            "below 4 times the wavefunction cutoff, 60 Ha",
        );
        fails(
            &SI2.replace("input_dft='pz'", "input_dft='b3lyp'"),
            "input_dft",
            "b3lyp",
        );
        fails(
            &SI2.replace("calculation='scf'", "calculation='md'"),
            "calculation",
            "md",
        );
        let e = fails(
            &SI2.replace("occupations='fixed'", "occupations='tetrahedra_opt'"),
            "occupations",
            "nscf step of a density of states only",
        );
        assert!(e.hint.unwrap().contains("calculation = 'nscf'"));
        let path = "K_POINTS crystal_b\n2\n0 0 0 10 ! G\n0.5 0 0.5 1 ! X\n";
        let e = fails(
            &SI2.replace("K_POINTS automatic\n  4 4 4 0 0 0", path),
            "K_POINTS",
            "band path, for calculation = 'bands'",
        );
        assert!(e.hint.unwrap().contains("calculation = 'bands'"));
        let e = fails(
            &SI2.replace("nbnd=8,", "nbnd=8, lda_plus_u=.true.,"),
            "lda_plus_u",
            "&system is not supported",
        );
        assert!(e.message.contains("changes the physics"));
        assert_eq!(e.line, Some(10));
        fails(
            &SI2.replace("nbnd=8,", "nbnd=8, ecutfock=100,"),
            "ecutfock",
            "hybrid",
        );
        // PBE0 and its keys; what planewave does not have is refused by name.
        let pbe0 = SI2
            .replace("input_dft='pz'", "input_dft='PBE0'")
            .replace("tstress=.true.", "tstress=.false.");
        let h = p(&pbe0).unwrap().hybrid.expect("a hybrid");
        assert_eq!((h.fraction, h.kernel.x_gamma_extrapolation), (0.25, true));
        let with = |keys: &str| pbe0.replace("nbnd=8,", &format!("nbnd=8, {keys},"));
        let h = p(&with("exx_fraction=0.4, x_gamma_extrapolation=.false., nqx1=1, ecutfock=120, exxdiv_treatment='gygi-baldereschi', ecutvcut=0"))
            .unwrap()
            .hybrid
            .unwrap();
        assert_eq!((h.fraction, h.kernel.x_gamma_extrapolation), (0.4, false));
        let hse = pbe0.replace("input_dft='PBE0'", "input_dft='hse'");
        let h = p(&hse).unwrap().hybrid.unwrap();
        assert_eq!((h.fraction, h.kernel.screening), (0.25, Some(0.106)));
        let h = p(&hse.replace("nbnd=8,", "nbnd=8, screening_parameter=0.11,"))
            .unwrap()
            .hybrid
            .unwrap();
        assert_eq!(h.kernel.screening, Some(0.11));
        fails(
            &hse.replace("nbnd=8,", "nbnd=8, screening_parameter=0,"),
            "screening_parameter",
            "positive",
        );
        fails(
            &pbe0.replace("tstress=.false.", "tstress=.true."),
            "tstress",
            "stress",
        );
        fails(&with("nqx2=0"), "nqx2", "at least 1");
        assert_eq!(
            p(&with("nqx1=2, nqx2=2, nqx3=2"))
                .unwrap()
                .hybrid
                .unwrap()
                .kernel
                .q_grid,
            [2, 2, 2]
        );
        fails(
            &with("exxdiv_treatment='vcut_ws'"),
            "exxdiv_treatment",
            "vcut_ws",
        );
        fails(&with("ecutfock=80"), "ecutfock", "density sphere");
        fails(&with("exx_fraction=1.5"), "exx_fraction", "(0, 1]");
        fails(
            &with("screening_parameter=0.106"),
            "screening_parameter",
            "HSE",
        );
        fails(&with("ace=.false."), "ace", "compressed");
        fails(
            &with("localization_thr=0.1"),
            "localization_thr",
            "localised",
        );
        let e = fails(
            &SI2.replace("ecutwfc=30.0,", "ecutwf=30.0,"),
            "ecutwf",
            "not supported",
        );
        assert_eq!(e.hint.as_deref(), Some("did you mean `ecutwfc`?"));
        fails(&SI2.replace("nbnd=8", "nbnd=0"), "nbnd", "at least 1");
        fails(
            &SI2.replace("ecutwfc=30.0, ecutrho=120.0", "ecutwfc=-1"),
            "ecutwfc",
            "positive",
        );
        fails(
            &SI2.replace("4 4 4 0 0 0", "4 0 4 0 0 0"),
            "K_POINTS",
            "zero",
        );
        fails(
            &SI2.replace("4 4 4 0 0 0", "4 4 4 0 2 0"),
            "K_POINTS",
            "shift",
        );
        fails(
            &SI2.replace("nat=2", "nat=3"),
            "ATOMIC_POSITIONS",
            "nat = 3",
        );
        fails(
            &SI2.replace("Si 0.2500000000", "Ge 0.2500000000"),
            "ATOMIC_POSITIONS",
            "without a pseudo",
        );
        fails(
            &SI2.replace("0.2500000000 0.2500000000 0.2500000000", "0.01 0.0 0.0"),
            "ATOMIC_POSITIONS",
            "apart",
        );
        fails(
            &SI2.replace("occupations='fixed'", "occupations='smearing'"),
            "degauss",
            "positive",
        );
        fails(
            &SI2.replace("occupations='fixed'", "occupations='tetrahedra'"),
            "occupations",
            "tetrahedra",
        );
        fails(
            &SI2.replace("nbnd=8,", "nbnd=8, tot_magnetization=2,"),
            "tot_magnetization",
            "nspin = 1",
        );
        fails(
            &SI2.replace("nbnd=8,", "nbnd=8, starting_magnetization(1)=0.5,"),
            "starting_magnetization(1)",
            "nspin = 1",
        );
        fails(
            &H1.replace(
                "starting_magnetization(1)=0.5",
                "starting_magnetization(1)=1.5",
            ),
            "starting_magnetization(1)",
            "outside [-1, 1]",
        );
        fails(
            &H1.replace(
                "starting_magnetization(1)=0.5",
                "starting_magnetization(2)=0.5",
            ),
            "starting_magnetization(2)",
            "outside 1..=1",
        );
        fails(&SI2.replace("ibrav=0", "ibrav=15"), "ibrav", "ibrav = 15");
        fails(
            &SI2.replace("ibrav=0", "ibrav=4"),
            "CELL_PARAMETERS",
            "given with ibrav = 4",
        );
        fails(
            &SI2.replace(
                "  Si 28.085 Si-q4.lda.gth\n",
                "  Si 28.085 Si-q4.lda.gth\n  Si 28.085 Si-q4.lda.gth\n",
            )
            .replace("ntyp=1", "ntyp=2"),
            "ATOMIC_SPECIES",
            "more than once",
        );
        fails(
            &SI2.replace(
                "5.1300000000 5.1300000000 0.0000000000",
                "5.1300000000 0.0000000000 5.1300000000",
            ),
            "CELL_PARAMETERS",
            "linearly dependent",
        );
        fails(
            &SI2.replace("mixing_beta=0.7", "mixing_beta=0.7, mixing_mode='broyden'"),
            "mixing_mode",
            "broyden",
        );
        fails(&SI2.replace("nbnd=8", "nbnd=8, nbnd=9"), "nbnd", "twice");
        let e = fails(
            &SI2.replace("ATOMIC_SPECIES", "HUBBARD\nATOMIC_SPECIES"),
            "HUBBARD",
            "not supported",
        );
        assert!(e.line.is_some());
    }

    #[test]
    fn syntax_errors() {
        for bad in [
            SI2.replace("/\n&electrons", "&electrons"),
            SI2.replace("prefix='si2'", "prefix='si2"),
            SI2.replace("ecutwfc=30.0", "ecutwfc="),
            SI2.replace("ecutwfc=30.0", "ecutwfc=abc"),
            SI2.replace("K_POINTS automatic\n  4 4 4 0 0 0\n", ""),
            SI2.replace("&system", "&weird"),
            SI2.replace("ibrav=0,", "celldm=1 2,"),
            "&control\n".to_string(),
            "&system\n/\n".to_string(),
            "ATOMIC_SPECIES\n".to_string(),
            "&\n".to_string(),
            "&system\n nat = 1 /  junk\n".to_string(),
            "&system\n ( = 3\n/\n".to_string(),
            "&system\n starting_magnetization(999999999999999999999)=1\n/\n".to_string(),
            "&system ibrav=0, nat=1, ntyp=1, ecutwfc=10 /\nATOMIC_SPECIES\nX 1 x\nATOMIC_POSITIONS\nX\nK_POINTS gamma\n".to_string(),
            "&system ibrav=0, nat=1, ntyp=1, ecutwfc=10 /\nATOMIC_SPECIES\nX 1 x\nCELL_PARAMETERS\n1 0 0\n0 1 0\n0 0 1\nATOMIC_POSITIONS\nX 0 0 0\nK_POINTS\n1\n".to_string(),
        ] {
            let r = p(&bad);
            assert!(r.is_err(), "accepted:\n{bad}");
        }
    }
}
