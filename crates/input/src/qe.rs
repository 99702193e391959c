//! Quantum ESPRESSO `pw.x` input reader.
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
//! * `ecutwfc` (Ry) -> `ecut` = ecutwfc/2 Ha; `ecutrho` must be absent or 4*ecutwfc
//!   (norm-conserving only).
//! * `input_dft`: pz, lda -> lda_pz; pw -> lda_pw; sla+vwn, vwn -> lda_vwn; pbe -> pbe;
//!   pbe0 and hse -> pbe with exact exchange ([`super::RunSpec::hybrid`]; hse with the erfc
//!   kernel and `screening_parameter`, default 0.106 1/bohr).
//!   Absent: lda_pz (note: QE itself would take the functional from the pseudopotentials).
//! * With pbe0 or hse (`qe_hybrid.rs`): `exx_fraction` (default 0.25), `x_gamma_extrapolation`
//!   (default true), `exxdiv_treatment` 'gygi-baldereschi' only, `nqx1..3` (a sub-grid of the
//!   k grid, checked at set-up),
//!   `ecutfock` = ecutrho only, `ecutvcut` = 0, `localization_thr` = 0, `ace` = true; these
//!   keys without a hybrid, `screening_parameter` with pbe0, and `tstress` are errors.
//! * `occupations` fixed | smearing; `smearing` gaussian/gauss,
//!   methfessel-paxton/m-p/mp, marzari-vanderbilt/cold/m-v/mv, fermi-dirac/f-d/fd
//!   (QE default gaussian); `degauss` (Ry) -> width/2 Ha.
//! * `nspin` 1 | 2; `tot_magnetization`; `starting_magnetization(i)` per species.
//! * `nbnd`, `tot_charge` (same sign convention as [`super::RunSpec::charge`]), `nosym`.
//! * `nr1, nr2, nr3` (all three or none) -> [`super::RunSpec::fft_grid`].
//! * `conv_thr` (Ry, QE default 1e-6) -> energy_tolerance = conv_thr/2 Ha and
//!   density_tolerance = sqrt(energy_tolerance / 10): the energy error of a density residual R is
//!   second order, about 10 R^2 Ha for small cells, so this stops where QE's estimate would.
//! * `mixing_beta`, `mixing_ndim`, `electron_maxstep`; `mixing_mode` must be plain
//!   (planewave's Kerker preconditioner with its default q0 is used regardless).
//! * `diagonalization`: david, rmm-davidson -> davidson; cg, ppcg, paro, rmm-paro ->
//!   lobpcg; absent -> davidson (QE's default too). `diago_david_ndim` -> the Davidson
//!   search space (planewave's default is 3, QE's 2).
//! * `pseudo_dir` relative to the input file's folder (default: that folder).
//! * `calculation` 'scf' | 'relax' | 'vc-relax' (the last two run a relaxation);
//!   `tprnfor`, `tstress` (forces are always computed; stress with tstress or vc-relax);
//!   `forc_conv_thr` (Ry/bohr), `press` and `press_conv_thr` (kbar), `nstep`,
//!   `ion_dynamics` 'bfgs' | 'fire', `cell_dofree` 'all' (only).
//! * Accepted and ignored (no physics): prefix (-> title),
//!   outdir, wfcdir, disk_io, verbosity, wf_collect, iprint, etot_conv_thr,
//!   lkpoint_dir, title, startingwfc (not 'file'), startingpot (not 'file'),
//!   scf_must_converge, diago_full_acc, and &ions/&cell keys
//!   that only matter for relaxations.
//! * Any other key is an error naming it.
//! * ibrav 0 (CELL_PARAMETERS bohr | angstrom | alat) and every Bravais lattice of pw.x (1-14,
//!   -3, -5, -9, 91, -12, -13; [`super::qe_lattice`]) from celldm(1..6) or A, B, C (angstrom)
//!   with cosAB, cosAC, cosBC.
//! * K_POINTS automatic | gamma | crystal (list) | tpiba (list, the default option).

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use super::error::did_you_mean;
use super::qe_lattice;
use super::units::{BOHR_PER_ANGSTROM, HARTREE_PER_RYDBERG};
use super::validate::{cart_to_frac, is_singular, validate, Lines, QE_KEYS};
use super::{
    base_dir, stem, AtomSpec, InputError, InputFormat, Kpoints, Properties, RelaxAlgorithm,
    RelaxSpec, RunSpec, ScfSpec, Smearing, SpeciesSpec, Spin, GPA_IN_HA_PER_BOHR3,
};

#[path = "qe_hybrid.rs"]
mod hybrid;

/// One `key = value` of a namelist.
#[derive(Debug, Clone)]
struct Entry {
    namelist: String,
    /// Lower-case key with its index, spaces removed, e.g. `celldm(1)`.
    key: String,
    /// Lower-case key without index.
    base: String,
    index: Option<usize>,
    value: String,
    line: usize,
}

/// One card with its rows (comments stripped, blank rows dropped).
#[derive(Debug, Clone)]
struct Card {
    name: String,
    option: String,
    line: usize,
    rows: Vec<(usize, String)>,
}

const SUPPORTED_CARDS: &[&str] = &[
    "ATOMIC_SPECIES",
    "ATOMIC_POSITIONS",
    "CELL_PARAMETERS",
    "K_POINTS",
];
const OTHER_CARDS: &[&str] = &[
    "OCCUPATIONS",
    "CONSTRAINTS",
    "ATOMIC_FORCES",
    "ATOMIC_VELOCITIES",
    "ADDITIONAL_K_POINTS",
    "SOLVENTS",
    "HUBBARD",
    "TOTAL_CHARGE",
];

fn strip_comment(s: &str) -> &str {
    // Outside quotes only.
    let mut quote: Option<char> = None;
    for (i, c) in s.char_indices() {
        match quote {
            Some(q) if c == q => quote = None,
            Some(_) => {}
            None if c == '\'' || c == '"' => quote = Some(c),
            None if c == '!' || c == '#' => return &s[..i],
            None => {}
        }
    }
    s
}

/// What [`lex`] returns: entries, namelists with their line, cards.
type Lexed = (Vec<Entry>, Vec<(String, usize)>, Vec<Card>);

/// Splits the input into namelist entries and cards.
fn lex(text: &str, file: &Path) -> Result<Lexed, InputError> {
    let mut entries = Vec::new();
    let mut namelists: Vec<(String, usize)> = Vec::new();
    let mut cards: Vec<Card> = Vec::new();
    let mut current: Option<String> = None;
    for (idx, raw) in text.lines().enumerate() {
        let ln = idx + 1;
        let mut rest: &str = raw;
        if current.is_none() {
            let t = strip_comment(raw).trim();
            if t.is_empty() {
                continue;
            }
            if let Some(after) = t.strip_prefix('&') {
                let name_len = after
                    .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                    .unwrap_or(after.len());
                let name = after[..name_len].to_ascii_lowercase();
                if name.is_empty() || name == "end" {
                    return Err(InputError::new(
                        file,
                        "`&` without a namelist name, or a stray &end",
                    )
                    .at_line(Some(ln)));
                }
                if namelists.iter().any(|(n, _)| *n == name) {
                    return Err(
                        InputError::new(file, format!("namelist &{name} appears twice"))
                            .with_key(format!("&{name}"))
                            .at_line(Some(ln)),
                    );
                }
                if !cards.is_empty() {
                    return Err(
                        InputError::new(file, format!("namelist &{name} after the cards"))
                            .with_key(format!("&{name}"))
                            .at_line(Some(ln))
                            .with_hint(
                                "all namelists come before ATOMIC_SPECIES and the other cards",
                            ),
                    );
                }
                namelists.push((name.clone(), ln));
                current = Some(name);
                // The rest of the line after the name is namelist body.
                let off = raw.find('&').map(|p| p + 1 + name_len).unwrap_or(raw.len());
                rest = &raw[off.min(raw.len())..];
            } else {
                let first = t
                    .split_whitespace()
                    .next()
                    .unwrap_or("")
                    .to_ascii_uppercase();
                let first_word: String = first.split(['{', '(']).next().unwrap_or("").to_string();
                if SUPPORTED_CARDS.contains(&first_word.as_str()) {
                    if cards.iter().any(|c| c.name == first_word) {
                        return Err(InputError::new(
                            file,
                            format!("card {first_word} appears twice"),
                        )
                        .with_key(first_word)
                        .at_line(Some(ln)));
                    }
                    let option = t[first_word.len().min(t.len())..]
                        .trim()
                        .trim_matches(|c| c == '{' || c == '}' || c == '(' || c == ')')
                        .trim()
                        .to_ascii_lowercase();
                    cards.push(Card {
                        name: first_word,
                        option,
                        line: ln,
                        rows: Vec::new(),
                    });
                } else if OTHER_CARDS.contains(&first_word.as_str()) {
                    return Err(InputError::new(file, format!("card {first_word} is not supported by planewave"))
                        .with_key(first_word)
                        .at_line(Some(ln))
                        .with_hint("remove it; supported cards: ATOMIC_SPECIES, ATOMIC_POSITIONS, CELL_PARAMETERS, K_POINTS"));
                } else if let Some(card) = cards.last_mut() {
                    card.rows.push((ln, t.to_string()));
                } else {
                    return Err(InputError::new(
                        file,
                        format!("unexpected text `{t}` outside any namelist or card"),
                    )
                    .at_line(Some(ln))
                    .with_hint("namelists start with &name and end with a line holding `/`"));
                }
                continue;
            }
        }
        // Inside a namelist: scan `rest`.
        let Some(nl) = current.clone() else { continue };
        let chars: Vec<char> = rest.chars().collect();
        let mut p = 0;
        loop {
            while p < chars.len() && (chars[p].is_whitespace() || chars[p] == ',') {
                p += 1;
            }
            if p >= chars.len() || chars[p] == '!' || chars[p] == '#' {
                break;
            }
            if chars[p] == '/' {
                let tail: String = chars[p + 1..].iter().collect();
                if !strip_comment(&tail).trim().is_empty() {
                    return Err(InputError::new(
                        file,
                        format!("unexpected text `{}` after the end of &{nl}", tail.trim()),
                    )
                    .at_line(Some(ln)));
                }
                current = None;
                break;
            }
            let remaining: String = chars[p..].iter().collect();
            if remaining.to_ascii_lowercase().starts_with("&end") {
                current = None;
                break;
            }
            // Key up to '='.
            let eq = chars[p..].iter().position(|&c| c == '=');
            let Some(eq) = eq else {
                return Err(InputError::new(
                    file,
                    format!("expected `key = value` in &{nl}, found `{}`", remaining.trim()),
                )
                .at_line(Some(ln))
                .with_hint("one value per key (array values must be written celldm(1)=..., celldm(2)=...); end the namelist with `/`"));
            };
            let key_raw: String = chars[p..p + eq]
                .iter()
                .filter(|c| !c.is_whitespace())
                .collect();
            let key = key_raw.to_ascii_lowercase();
            let (base, index) = split_index(&key).ok_or_else(|| {
                InputError::new(file, format!("`{}` is not a valid key in &{nl}", key_raw))
                    .at_line(Some(ln))
            })?;
            p += eq + 1;
            while p < chars.len() && chars[p].is_whitespace() {
                p += 1;
            }
            if p >= chars.len() {
                return Err(
                    InputError::new(file, format!("missing value after `{key} =`"))
                        .with_key(key)
                        .at_line(Some(ln)),
                );
            }
            let value = if chars[p] == '\'' || chars[p] == '"' {
                let q = chars[p];
                p += 1;
                let mut v = String::new();
                loop {
                    if p >= chars.len() {
                        return Err(InputError::new(file, "unterminated quoted string")
                            .with_key(key)
                            .at_line(Some(ln)));
                    }
                    if chars[p] == q {
                        if p + 1 < chars.len() && chars[p + 1] == q {
                            v.push(q);
                            p += 2;
                            continue;
                        }
                        p += 1;
                        break;
                    }
                    v.push(chars[p]);
                    p += 1;
                }
                v
            } else {
                let start = p;
                while p < chars.len()
                    && !chars[p].is_whitespace()
                    && !matches!(chars[p], ',' | '/' | '!' | '#')
                {
                    p += 1;
                }
                chars[start..p].iter().collect()
            };
            if value.is_empty() {
                return Err(
                    InputError::new(file, format!("missing value after `{key} =`"))
                        .with_key(key)
                        .at_line(Some(ln)),
                );
            }
            entries.push(Entry {
                namelist: nl.clone(),
                key,
                base,
                index,
                value,
                line: ln,
            });
        }
    }
    if let Some(nl) = current {
        let line = namelists.iter().find(|(n, _)| *n == nl).map(|(_, l)| *l);
        return Err(
            InputError::new(file, format!("namelist &{nl} is not closed"))
                .with_key(format!("&{nl}"))
                .at_line(line)
                .with_hint("end each namelist with a line holding `/`"),
        );
    }
    Ok((entries, namelists, cards))
}

/// `name` or `name(i)` -> (name, index). None when malformed.
fn split_index(key: &str) -> Option<(String, Option<usize>)> {
    let valid_name = |s: &str| {
        let mut cs = s.chars();
        matches!(cs.next(), Some(c) if c.is_ascii_alphabetic())
            && cs.all(|c| c.is_ascii_alphanumeric() || c == '_')
    };
    if let Some(open) = key.find('(') {
        let name = &key[..open];
        let inner = key[open + 1..].strip_suffix(')')?;
        if !valid_name(name) {
            return None;
        }
        // Multi-index keys (e.g. Hubbard) keep their raw index and are rejected later.
        let idx = inner.parse::<usize>().ok();
        if idx.is_none() && !inner.split(',').all(|p| p.parse::<usize>().is_ok()) {
            return None;
        }
        Some((name.to_string(), idx.or(Some(0))))
    } else if valid_name(key) {
        Some((key.to_string(), None))
    } else {
        None
    }
}

fn parse_f64(s: &str) -> Option<f64> {
    let t = s.trim().replace(['d', 'D'], "e");
    t.parse::<f64>().ok().filter(|x| x.is_finite())
}

fn parse_bool(s: &str) -> Option<bool> {
    match s.trim().to_ascii_lowercase().as_str() {
        ".true." | ".t." | "t" | "true" => Some(true),
        ".false." | ".f." | "f" | "false" => Some(false),
        _ => None,
    }
}

/// Accessors that turn a bad value into an error naming the key.
struct Vals<'a> {
    file: &'a Path,
}

impl Vals<'_> {
    fn err(&self, e: &Entry, msg: impl Into<String>) -> InputError {
        InputError::new(self.file, msg)
            .with_key(e.key.clone())
            .at_line(Some(e.line))
    }
    fn f64(&self, e: &Entry) -> Result<f64, InputError> {
        parse_f64(&e.value).ok_or_else(|| self.err(e, format!("`{}` is not a number", e.value)))
    }
    fn int(&self, e: &Entry) -> Result<i64, InputError> {
        e.value
            .trim()
            .parse::<i64>()
            .map_err(|_| self.err(e, format!("`{}` is not an integer", e.value)))
    }
    fn bool(&self, e: &Entry) -> Result<bool, InputError> {
        parse_bool(&e.value).ok_or_else(|| {
            self.err(
                e,
                format!("`{}` is not a logical (.true. or .false.)", e.value),
            )
        })
    }
    fn lower(&self, e: &Entry) -> String {
        e.value.trim().to_ascii_lowercase()
    }
}

/// celldm(1..6) of lattice `ibrav` whose parameter a (bohr) is known: from celldm(2..6), or
/// from `B, C, cosAB, cosAC, cosBC` when the lattice was given by `A` (`by_abc`); the two
/// styles cannot be mixed.
fn lattice_parameters<'e>(
    v: &Vals<'_>,
    get: &impl Fn(&str) -> Option<&'e Entry>,
    ibrav: i64,
    a: f64,
    by_abc: bool,
) -> Result<qe_lattice::Celldm, InputError> {
    let number = |k: &str| get(k).map(|e| v.f64(e).map(|x| (e, x))).transpose();
    let (celldm_keys, abc_keys) = (
        [
            "celldm(2)",
            "celldm(3)",
            "celldm(4)",
            "celldm(5)",
            "celldm(6)",
        ],
        ["b", "c", "cosab", "cosac", "cosbc"],
    );
    let (wrong, other) = if by_abc {
        (celldm_keys, "A")
    } else {
        (abc_keys, "celldm(1)")
    };
    if let Some(e) = wrong.iter().find_map(|k| get(k)) {
        return Err(v
            .err(e, format!("`{}` cannot be combined with {other}", e.key))
            .with_hint("give the cell either as celldm(1..6) (bohr, ratios, cosines) or as A, B, C (angstrom) and cosAB, cosAC, cosBC"));
    }
    if !by_abc {
        let mut c = [a, 0.0, 0.0, 0.0, 0.0, 0.0];
        for (slot, k) in c[1..].iter_mut().zip(celldm_keys) {
            *slot = number(k)?.map_or(0.0, |x| x.1);
        }
        return Ok(c);
    }
    let ratio = |k: &str| -> Result<f64, InputError> {
        Ok(number(k)?.map_or(0.0, |(_, x)| x * BOHR_PER_ANGSTROM / a))
    };
    let cos = [
        number("cosab")?.map_or(0.0, |x| x.1),
        number("cosac")?.map_or(0.0, |x| x.1),
        number("cosbc")?.map_or(0.0, |x| x.1),
    ];
    Ok(qe_lattice::from_abc(
        ibrav,
        a,
        ratio("b")?,
        ratio("c")?,
        cos,
    ))
}

/// Keys that are read, or accepted and ignored, per namelist.
const CONTROL_KEYS: &[&str] = &[
    "calculation",
    "title",
    "verbosity",
    "restart_mode",
    "wf_collect",
    "outdir",
    "wfcdir",
    "prefix",
    "disk_io",
    "pseudo_dir",
    "tstress",
    "tprnfor",
    "iprint",
    "max_seconds",
    "etot_conv_thr",
    "forc_conv_thr",
    "nstep",
    "lkpoint_dir",
];
const SYSTEM_KEYS: &[&str] = &[
    "nr1",
    "nr2",
    "nr3",
    "ibrav",
    "celldm",
    "a",
    "b",
    "c",
    "cosab",
    "cosac",
    "cosbc",
    "nat",
    "ntyp",
    "nbnd",
    "tot_charge",
    "tot_magnetization",
    "starting_magnetization",
    "ecutwfc",
    "ecutrho",
    "nosym",
    "occupations",
    "degauss",
    "smearing",
    "nspin",
    "input_dft",
];
const ELECTRONS_KEYS: &[&str] = &[
    "electron_maxstep",
    "scf_must_converge",
    "conv_thr",
    "mixing_mode",
    "mixing_beta",
    "mixing_ndim",
    "diagonalization",
    "startingwfc",
    "startingpot",
    "diago_full_acc",
    "diago_david_ndim",
];
const IONS_KEYS: &[&str] = &[
    "ion_dynamics",
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
];
const CELL_KEYS: &[&str] = &[
    "cell_dynamics",
    "press",
    "wmass",
    "cell_factor",
    "press_conv_thr",
    "cell_dofree",
];

/// Parses QE pw.x text and validates it.
pub(crate) fn parse(text: &str, source: &Path) -> Result<RunSpec, InputError> {
    let file = source;
    let v = Vals { file };
    let (entries, namelists, cards) = lex(text, file)?;

    for (name, line) in &namelists {
        if !matches!(
            name.as_str(),
            "control" | "system" | "electrons" | "ions" | "cell"
        ) {
            return Err(InputError::new(file, format!("namelist &{name} is not supported by planewave"))
                .with_key(format!("&{name}"))
                .at_line(Some(*line))
                .with_hint("supported: &control, &system, &electrons (and &ions/&cell without effect on an SCF)"));
        }
    }
    if !namelists.iter().any(|(n, _)| n == "system") {
        return Err(InputError::new(file, "missing namelist &system").with_key("&system"));
    }

    // Index entries; reject duplicates and unknown keys.
    let mut map: HashMap<String, Entry> = HashMap::new();
    for e in &entries {
        let known: &[&str] = match e.namelist.as_str() {
            "control" => CONTROL_KEYS,
            "system" => SYSTEM_KEYS,
            "electrons" => ELECTRONS_KEYS,
            "ions" => IONS_KEYS,
            _ => CELL_KEYS,
        };
        let indexed_ok = matches!(e.base.as_str(), "celldm" | "starting_magnetization");
        let exx = e.namelist == "system" && hybrid::KEYS.contains(&e.base.as_str());
        if !(known.contains(&e.base.as_str()) || exx) || (e.index.is_some() != indexed_ok) {
            let physics = if e.namelist == "system" {
                " (it changes the physics)"
            } else {
                ""
            };
            let mut err = v.err(
                e,
                format!(
                    "QE key `{}` in &{} is not supported by planewave{physics}",
                    e.key, e.namelist
                ),
            );
            err = err.with_hint_opt(Some(
                did_you_mean(&e.base, known.iter().copied())
                    .filter(|_| !known.contains(&e.base.as_str()))
                    .unwrap_or_else(|| "remove it (planewave cannot honour it), or write the run in planewave's TOML format".to_string()),
            ));
            return Err(err);
        }
        if let Some(prev) = map.get(&e.key) {
            return Err(v.err(
                e,
                format!("`{}` is given twice (also on line {})", e.key, prev.line),
            ));
        }
        map.insert(e.key.clone(), e.clone());
    }
    let get = |k: &str| map.get(k);
    let mut lines = Lines::default();

    // &control
    let mut relax = RelaxSpec::default();
    if let Some(e) = get("calculation") {
        match v.lower(e).as_str() {
            "scf" => {}
            "relax" => relax.requested = true,
            "vc-relax" => {
                relax.requested = true;
                relax.cell = true;
            }
            _ => {
                return Err(v
                    .err(
                        e,
                        format!(
                            "calculation = '{}' is not supported: planewave does 'scf', 'relax' and 'vc-relax'",
                            e.value
                        ),
                    )
                    .with_hint("use calculation = 'scf', 'relax' or 'vc-relax'"))
            }
        }
    }
    let mut properties = Properties {
        forces: true,
        stress: relax.cell,
    };
    if let Some(e) = get("tprnfor") {
        properties.forces = v.bool(e)? || relax.requested;
    }
    if let Some(e) = get("tstress") {
        properties.stress = v.bool(e)? || relax.cell;
    }
    if let Some(e) = get("forc_conv_thr") {
        let x = v.f64(e)?;
        if x.is_nan() || x <= 0.0 {
            return Err(v.err(e, format!("forc_conv_thr must be positive, got {x}")));
        }
        relax.force_tolerance = x * HARTREE_PER_RYDBERG;
    }
    if let Some(e) = get("press") {
        // kbar -> Ha/bohr^3
        relax.pressure = v.f64(e)? * 0.1 * GPA_IN_HA_PER_BOHR3;
    }
    if let Some(e) = get("press_conv_thr") {
        let x = v.f64(e)?;
        if x.is_nan() || x <= 0.0 {
            return Err(v.err(e, format!("press_conv_thr must be positive, got {x}")));
        }
        relax.stress_tolerance = x * 0.1 * GPA_IN_HA_PER_BOHR3;
    }
    if let Some(e) = get("nstep") {
        let x = v.f64(e)?;
        if x.is_nan() || x < 1.0 || x.fract() != 0.0 {
            return Err(v.err(
                e,
                format!("nstep must be a positive integer, got {}", e.value),
            ));
        }
        relax.max_steps = x as usize;
    }
    if let Some(e) = get("ion_dynamics") {
        relax.algorithm = match v.lower(e).as_str() {
            "bfgs" => RelaxAlgorithm::Bfgs,
            "fire" => RelaxAlgorithm::Fire,
            other => {
                return Err(v
                    .err(e, format!("ion_dynamics = '{other}' is not supported"))
                    .with_hint("use 'bfgs' or 'fire'"))
            }
        };
    }
    if let Some(e) = get("cell_dofree") {
        if v.lower(e) != "all" {
            return Err(v
                .err(e, format!("cell_dofree = '{}' is not supported", e.value))
                .with_hint("use cell_dofree = 'all' (the default)"));
        }
    }
    for k in [
        "wf_collect",
        "lkpoint_dir",
        "scf_must_converge",
        "diago_full_acc",
    ] {
        if let Some(e) = get(k) {
            v.bool(e)?;
        }
    }
    let dir = base_dir(source);
    let pseudo_dir: PathBuf = match get("pseudo_dir") {
        Some(e) => dir.join(e.value.trim()),
        None => dir.clone(),
    };
    let title = get("prefix")
        .map(|e| e.value.trim().to_string())
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| stem(source));

    // &system: basic sizes
    let required = |k: &str| {
        get(k).ok_or_else(|| {
            InputError::new(file, format!("missing required key `{k}` in &system"))
                .with_key(k)
                .at_line(
                    namelists
                        .iter()
                        .find(|(n, _)| n == "system")
                        .map(|(_, l)| *l),
                )
        })
    };
    let ibrav_e = required("ibrav")?;
    let ibrav = v.int(ibrav_e)?;
    let nat_e = required("nat")?;
    let nat = usize::try_from(v.int(nat_e)?).map_err(|_| v.err(nat_e, "nat must be >= 0"))?;
    let ntyp_e = required("ntyp")?;
    let ntyp = usize::try_from(v.int(ntyp_e)?).map_err(|_| v.err(ntyp_e, "ntyp must be >= 0"))?;
    for k in ["input_dft", "occupations", "nspin"] {
        if let Some(e) = get(k) {
            lines.keys.insert(k.into(), e.line);
        }
    }
    let ecut_e = required("ecutwfc")?;
    let ecutwfc = v.f64(ecut_e)?;
    lines.keys.insert("ecutwfc".into(), ecut_e.line);
    if let Some(e) = get("ecutrho") {
        let rho = v.f64(e)?;
        if (rho - 4.0 * ecutwfc).abs() > 1e-8 * ecutwfc.abs().max(1.0) {
            return Err(v
                .err(e, format!("ecutrho = {rho} Ry differs from 4 * ecutwfc = {} Ry: only norm-conserving pseudopotentials (ecutrho = 4 ecutwfc) are supported", 4.0 * ecutwfc))
                .with_hint("remove ecutrho or set it to 4 * ecutwfc"));
        }
    }

    // Functional
    let dft = get("input_dft").map(|e| v.lower(e));
    let functional = match (get("input_dft"), dft.as_deref()) {
        (_, None) => "lda_pz".to_string(),
        (Some(e), Some(dft)) => match dft {
            "pz" | "lda" | "sla+pz" => "lda_pz".to_string(),
            "pw" | "sla+pw" => "lda_pw".to_string(),
            "sla+vwn" | "vwn" => "lda_vwn".to_string(),
            "pbe" | "pbe0" | "hse" => "pbe".to_string(),
            other => return Err(v
                .err(
                    e,
                    format!("input_dft = '{other}' is not supported by planewave"),
                )
                .with_hint(
                    "supported: 'pz' (or 'lda'), 'pw', 'vwn' (or 'sla+vwn'), 'pbe', 'pbe0', 'hse'",
                )),
        },
        (None, Some(_)) => unreachable!("dft is read from the entry"),
    };
    let hybrid = hybrid::parse(&v, dft.as_deref().unwrap_or(""), get, 4.0 * ecutwfc)?;
    if hybrid.is_some() && properties.stress {
        let e = get("tstress").or_else(|| get("calculation"));
        let msg = "the stress is not implemented for hybrid functionals";
        return Err(match e {
            Some(e) => v.err(e, msg),
            None => InputError::new(file, msg),
        }
        .with_hint("set tstress = .false. (and use calculation = 'scf' or 'relax')"));
    }

    // Smearing
    let occupations = get("occupations").map(|e| (e, v.lower(e)));
    let smearing = match occupations {
        None => Smearing::None,
        Some((_, ref o)) if o == "fixed" => Smearing::None,
        Some((_, ref o)) if o == "smearing" => {
            let width = match get("degauss") {
                Some(e) => {
                    lines.keys.insert("degauss".into(), e.line);
                    v.f64(e)? * HARTREE_PER_RYDBERG
                }
                None => 0.0,
            };
            let kind = get("smearing").map(|e| (e, v.lower(e)));
            match kind.as_ref().map(|(_, s)| s.as_str()).unwrap_or("gaussian") {
                "gaussian" | "gauss" => Smearing::Gaussian(width),
                "methfessel-paxton" | "m-p" | "mp" => Smearing::MethfesselPaxton(width),
                "marzari-vanderbilt" | "cold" | "m-v" | "mv" => Smearing::MarzariVanderbilt(width),
                "fermi-dirac" | "f-d" | "fd" => Smearing::FermiDirac(width),
                other => {
                    let e = kind.as_ref().map(|(e, _)| *e).unwrap_or(ibrav_e);
                    return Err(v
                        .err(e, format!("smearing = '{other}' is not supported"))
                        .with_hint(
                            "use gaussian, methfessel-paxton, marzari-vanderbilt or fermi-dirac",
                        ));
                }
            }
        }
        Some((e, o)) => {
            return Err(v
                .err(
                    e,
                    format!("occupations = '{o}' is not supported by planewave"),
                )
                .with_hint("use 'fixed' or 'smearing'"))
        }
    };
    if let (
        Smearing::Gaussian(_)
        | Smearing::FermiDirac(_)
        | Smearing::MethfesselPaxton(_)
        | Smearing::MarzariVanderbilt(_),
        None,
    ) = (smearing, get("degauss"))
    {
        if let Some((e, _)) = occupations {
            lines.keys.insert("degauss".into(), e.line);
        }
    }

    // Spin
    let nspin = match get("nspin") {
        None => 1,
        Some(e) => v.int(e)?,
    };
    let mut species_mag: HashMap<usize, f64> = HashMap::new();
    for e in entries
        .iter()
        .filter(|e| e.base == "starting_magnetization")
    {
        let i = e.index.unwrap_or(0);
        if i == 0 || i > ntyp {
            return Err(v.err(e, format!("species index {i} is outside 1..={ntyp} (ntyp)")));
        }
        let m = v.f64(e)?;
        if !(-1.0..=1.0).contains(&m) {
            return Err(v
                .err(e, format!("starting magnetisation {m} is outside [-1, 1]"))
                .with_hint("it is a fraction of the valence charge of that species"));
        }
        species_mag.insert(i - 1, m);
    }
    let tot_mag = match get("tot_magnetization") {
        Some(e) => {
            lines.keys.insert("tot_magnetization".into(), e.line);
            let t = v.f64(e)?;
            // QE uses -10000 (or any value < -9999) to mean "unset".
            if t <= -9999.0 {
                None
            } else {
                Some(t)
            }
        }
        None => None,
    };
    match nspin {
        1 => {
            if let Some(e) = get("tot_magnetization").filter(|_| tot_mag.is_some()) {
                return Err(v
                    .err(
                        e,
                        "tot_magnetization is given but nspin = 1 (no spin polarisation)",
                    )
                    .with_hint("set nspin = 2, or remove tot_magnetization"));
            }
            if let Some(e) = entries.iter().find(|e| e.base == "starting_magnetization") {
                return Err(v
                    .err(
                        e,
                        "starting_magnetization is given but nspin = 1 (no spin polarisation)",
                    )
                    .with_hint("set nspin = 2, or remove starting_magnetization"));
            }
        }
        2 => {}
        other => {
            let e = get("nspin").unwrap_or(ibrav_e);
            return Err(v
                .err(
                    e,
                    format!(
                        "nspin = {other} is not supported (noncollinear spin is not implemented)"
                    ),
                )
                .with_hint("use nspin = 1 or 2"));
        }
    }

    // Other &system
    let nbands = match get("nbnd") {
        None => None,
        Some(e) => {
            lines.keys.insert("nbnd".into(), e.line);
            Some(usize::try_from(v.int(e)?).map_err(|_| v.err(e, "nbnd must be >= 1"))?)
        }
    };
    let fft_grid = match (get("nr1"), get("nr2"), get("nr3")) {
        (None, None, None) => None,
        (Some(a), Some(b), Some(c)) => {
            lines.keys.insert("nr1".into(), a.line);
            let mut g = [0usize; 3];
            for (n, e) in g.iter_mut().zip([a, b, c]) {
                *n = usize::try_from(v.int(e)?)
                    .ok()
                    .filter(|&n| n >= 1)
                    .ok_or_else(|| v.err(e, "nr1, nr2 and nr3 must be positive"))?;
            }
            Some(g)
        }
        (a, b, c) => {
            let given = [a, b, c]
                .into_iter()
                .flatten()
                .next()
                .expect("one is given");
            return Err(v.err(given, "give nr1, nr2 and nr3 together (or none of them)"));
        }
    };
    let charge = match get("tot_charge") {
        None => 0.0,
        Some(e) => {
            lines.keys.insert("tot_charge".into(), e.line);
            v.f64(e)?
        }
    };
    let use_symmetry = match get("nosym") {
        None => true,
        Some(e) => !v.bool(e)?,
    };

    // &electrons
    let mut scf = ScfSpec::default();
    let conv_thr = match get("conv_thr") {
        Some(e) => {
            lines.keys.insert("conv_thr".into(), e.line);
            v.f64(e)?
        }
        None => 1e-6,
    };
    scf.energy_tolerance = conv_thr * HARTREE_PER_RYDBERG;
    scf.density_tolerance = (scf.energy_tolerance / 10.0).sqrt();
    if let Some(e) = get("restart_mode") {
        match v.lower(e).as_str() {
            "from_scratch" => {}
            "restart" => scf.restart = true,
            other => {
                return Err(v
                    .err(e, format!("restart_mode = '{other}' is not supported"))
                    .with_hint("use 'from_scratch' or 'restart' (with a planewave checkpoint)"))
            }
        }
    }
    if let Some(e) = get("max_seconds") {
        let t = v.f64(e)?;
        if t.is_nan() || t <= 0.0 {
            return Err(v.err(e, "max_seconds must be positive"));
        }
        scf.max_seconds = Some(t);
    }
    if let Some(e) = get("electron_maxstep") {
        lines.keys.insert("electron_maxstep".into(), e.line);
        scf.max_iterations = usize::try_from(v.int(e)?).map_err(|_| v.err(e, "must be >= 1"))?;
    }
    if let Some(e) = get("mixing_beta") {
        lines.keys.insert("mixing_beta".into(), e.line);
        scf.mixing.beta = v.f64(e)?;
    }
    if let Some(e) = get("mixing_ndim") {
        lines.keys.insert("mixing_ndim".into(), e.line);
        scf.mixing.depth = usize::try_from(v.int(e)?).map_err(|_| v.err(e, "must be >= 1"))?;
    }
    if let Some(e) = get("mixing_mode") {
        if v.lower(e) != "plain" {
            return Err(v
                .err(e, format!("mixing_mode = '{}' is not supported", e.value))
                .with_hint("use 'plain' (planewave always applies its Kerker preconditioner)"));
        }
    }
    if let Some(e) = get("diagonalization") {
        scf.eigensolver = match v.lower(e).as_str() {
            "david" | "davidson" | "rmm-davidson" => "davidson".to_string(),
            "cg" | "ppcg" | "paro" | "rmm-paro" => "lobpcg".to_string(),
            other => return Err(v.err(e, format!("diagonalization = '{other}' is not known"))),
        };
    }
    if let Some(e) = get("startingwfc") {
        if v.lower(e) != "file" {
            scf.start = v.lower(e).parse().map_err(|msg: String| v.err(e, msg))?;
        }
    }
    for k in ["startingwfc", "startingpot"] {
        if let Some(e) = get(k) {
            if v.lower(e) == "file" {
                return Err(v.err(
                    e,
                    format!("{k} = 'file' is not supported (no restart files)"),
                ));
            }
        }
    }
    if let Some(e) = get("diago_david_ndim") {
        scf.davidson_dim = super::davidson_dim(v.int(e)?).map_err(|msg| v.err(e, msg))?;
    }

    // Cards
    let card = |name: &str| cards.iter().find(|c| c.name == name);
    let missing_card = |name: &str, hint: &str| {
        InputError::new(file, format!("missing card {name}"))
            .with_key(name)
            .with_hint(hint)
    };

    // ATOMIC_SPECIES
    let sp_card = card("ATOMIC_SPECIES").ok_or_else(|| {
        missing_card(
            "ATOMIC_SPECIES",
            "one line per species: label mass pseudo_file",
        )
    })?;
    lines.keys.insert("ATOMIC_SPECIES".into(), sp_card.line);
    if sp_card.rows.len() != ntyp {
        return Err(InputError::new(
            file,
            format!("{} species lines but ntyp = {ntyp}", sp_card.rows.len()),
        )
        .with_key("ATOMIC_SPECIES")
        .at_line(Some(sp_card.line)));
    }
    let mut species = Vec::new();
    for (ln, row) in &sp_card.rows {
        let toks: Vec<&str> = row.split_whitespace().collect();
        if toks.len() < 3 {
            return Err(InputError::new(
                file,
                format!("expected `label mass pseudo_file`, found `{row}`"),
            )
            .with_key("ATOMIC_SPECIES")
            .at_line(Some(*ln)));
        }
        if parse_f64(toks[1]).is_none() {
            return Err(
                InputError::new(file, format!("mass `{}` is not a number", toks[1]))
                    .with_key("ATOMIC_SPECIES")
                    .at_line(Some(*ln)),
            );
        }
        lines.species.entry(toks[0].to_string()).or_insert(*ln);
        species.push(SpeciesSpec {
            symbol: toks[0].to_string(),
            pseudo: pseudo_dir.join(toks[2]),
        });
    }

    // Lattice
    let celldm1 = match get("celldm(1)") {
        Some(e) => Some((e, v.f64(e)?)),
        None => None,
    };
    let a_ang = match get("a") {
        Some(e) => Some((e, v.f64(e)? * BOHR_PER_ANGSTROM)),
        None => None,
    };
    let mut alat = match (celldm1, a_ang) {
        (Some(_), Some((e, _))) => return Err(v.err(e, "give either celldm(1) or A, not both")),
        (Some((e, x)), None) | (None, Some((e, x))) => {
            if x.is_nan() || x <= 0.0 {
                return Err(v.err(e, "the lattice parameter must be positive"));
            }
            Some(x)
        }
        (None, None) => None,
    };
    let cell_card = card("CELL_PARAMETERS");
    let lattice: [[f64; 3]; 3] = match ibrav {
        0 => {
            let unused = [
                "celldm(2)",
                "celldm(3)",
                "celldm(4)",
                "celldm(5)",
                "celldm(6)",
            ]
            .into_iter()
            .chain(["b", "c", "cosab", "cosac", "cosbc"])
            .find_map(&get);
            if let Some(e) = unused {
                return Err(v
                    .err(e, format!("`{}` is not used by ibrav = 0", e.key))
                    .with_hint("the cell comes from CELL_PARAMETERS; remove the key, or choose the ibrav that reads it"));
            }
            let c = cell_card.ok_or_else(|| {
                missing_card(
                    "CELL_PARAMETERS",
                    "ibrav = 0 needs CELL_PARAMETERS {bohr|angstrom|alat} with 3 rows a1, a2, a3",
                )
                .at_line(Some(ibrav_e.line))
            })?;
            lines.keys.insert("CELL_PARAMETERS".into(), c.line);
            if c.rows.len() != 3 {
                return Err(InputError::new(
                    file,
                    format!("CELL_PARAMETERS needs 3 rows, found {}", c.rows.len()),
                )
                .with_key("CELL_PARAMETERS")
                .at_line(Some(c.line)));
            }
            let mut rows = [[0.0; 3]; 3];
            for (r, (ln, row)) in rows.iter_mut().zip(&c.rows) {
                *r = three(file, "CELL_PARAMETERS", *ln, row)?;
            }
            let scale = match c.option.as_str() {
                "bohr" => Some(1.0),
                "angstrom" => Some(BOHR_PER_ANGSTROM),
                "alat" => None,
                "" => {
                    if alat.is_some() {
                        None
                    } else {
                        Some(1.0)
                    }
                }
                other => {
                    return Err(InputError::new(
                        file,
                        format!("unknown CELL_PARAMETERS unit `{other}`"),
                    )
                    .with_key("CELL_PARAMETERS")
                    .at_line(Some(c.line))
                    .with_hint("use bohr, angstrom or alat"))
                }
            };
            match scale {
                Some(s) => {
                    if alat.is_some() {
                        return Err(InputError::new(file, format!("CELL_PARAMETERS {} together with celldm(1)/A: the lattice parameter is given twice", c.option))
                            .with_key("CELL_PARAMETERS")
                            .at_line(Some(c.line))
                            .with_hint("remove celldm(1)/A, or use CELL_PARAMETERS alat"));
                    }
                    for r in rows.iter_mut() {
                        for x in r.iter_mut() {
                            *x *= s;
                        }
                    }
                    let n = (rows[0][0].powi(2) + rows[0][1].powi(2) + rows[0][2].powi(2)).sqrt();
                    alat = Some(n);
                }
                None => {
                    let a = alat.ok_or_else(|| {
                        InputError::new(
                            file,
                            "CELL_PARAMETERS alat needs celldm(1) or A in &system",
                        )
                        .with_key("CELL_PARAMETERS")
                        .at_line(Some(c.line))
                    })?;
                    for r in rows.iter_mut() {
                        for x in r.iter_mut() {
                            *x *= a;
                        }
                    }
                }
            }
            rows
        }
        _ => {
            if !qe_lattice::known(ibrav) {
                return Err(v
                    .err(
                        ibrav_e,
                        format!("ibrav = {ibrav} is not a Bravais lattice of pw.x"),
                    )
                    .with_hint(format!(
                        "use one of {} (0: CELL_PARAMETERS)",
                        qe_lattice::SUPPORTED
                    )));
            }
            if let Some(c) = cell_card {
                return Err(InputError::new(
                    file,
                    format!("CELL_PARAMETERS given with ibrav = {ibrav}"),
                )
                .with_key("CELL_PARAMETERS")
                .at_line(Some(c.line))
                .with_hint("use ibrav = 0 with CELL_PARAMETERS, or remove the card"));
            }
            let a = alat.ok_or_else(|| {
                v.err(
                    ibrav_e,
                    format!("ibrav = {ibrav} needs celldm(1) (bohr) or A (angstrom)"),
                )
            })?;
            let celldm = lattice_parameters(&v, &get, ibrav, a, a_ang.is_some())?;
            lines.keys.insert("CELL_PARAMETERS".into(), ibrav_e.line);
            qe_lattice::bravais(ibrav, &celldm).map_err(|m| {
                v.err(ibrav_e, m)
                    .with_hint("see pw.x's INPUT_PW (ibrav) for what each lattice reads")
            })?
        }
    };
    let alat = alat.unwrap_or(1.0);

    // ATOMIC_POSITIONS
    let pos_card = card("ATOMIC_POSITIONS")
        .ok_or_else(|| missing_card("ATOMIC_POSITIONS", "one line per atom: label x y z"))?;
    lines.keys.insert("ATOMIC_POSITIONS".into(), pos_card.line);
    if pos_card.rows.len() != nat {
        return Err(InputError::new(
            file,
            format!("{} atom lines but nat = {nat}", pos_card.rows.len()),
        )
        .with_key("ATOMIC_POSITIONS")
        .at_line(Some(pos_card.line))
        .with_hint("nat in &system must equal the number of ATOMIC_POSITIONS lines"));
    }
    enum PosMode {
        Crystal,
        Cart(f64),
    }
    let mode = match pos_card.option.as_str() {
        "crystal" => PosMode::Crystal,
        "bohr" => PosMode::Cart(1.0),
        "angstrom" => PosMode::Cart(BOHR_PER_ANGSTROM),
        "alat" | "" => PosMode::Cart(alat),
        other => {
            return Err(InputError::new(
                file,
                format!("ATOMIC_POSITIONS unit `{other}` is not supported"),
            )
            .with_key("ATOMIC_POSITIONS")
            .at_line(Some(pos_card.line))
            .with_hint("use crystal, bohr, angstrom or alat"))
        }
    };
    if matches!(mode, PosMode::Cart(_)) && is_singular(&lattice) {
        return Err(
            InputError::new(file, "the lattice vectors are (nearly) linearly dependent")
                .with_key("CELL_PARAMETERS")
                .at_line(lines.keys.get("CELL_PARAMETERS").copied()),
        );
    }
    let mut atoms = Vec::with_capacity(nat);
    for (ln, row) in &pos_card.rows {
        let label = row.split_whitespace().next().unwrap_or("").to_string();
        let rest: String = row.split_whitespace().skip(1).collect::<Vec<_>>().join(" ");
        let p = three(file, "ATOMIC_POSITIONS", *ln, &rest)?;
        let extra: Vec<&str> = rest.split_whitespace().skip(3).collect();
        if !(extra.is_empty() || (extra.len() == 3 && extra.iter().all(|t| *t == "0" || *t == "1")))
        {
            return Err(InputError::new(
                file,
                format!("unexpected `{}` after the coordinates", extra.join(" ")),
            )
            .with_key("ATOMIC_POSITIONS")
            .at_line(Some(*ln))
            .with_hint("expected `label x y z` optionally followed by three 0/1 flags"));
        }
        let frac = match mode {
            PosMode::Crystal => p,
            PosMode::Cart(s) => cart_to_frac(&lattice, [p[0] * s, p[1] * s, p[2] * s]),
        };
        atoms.push(AtomSpec {
            species: label,
            frac,
        });
        lines.atoms.push(Some(*ln));
    }

    // Spin vector per atom.
    let spin = if nspin == 2 {
        let mags = atoms
            .iter()
            .map(|a| {
                species
                    .iter()
                    .position(|s| s.symbol == a.species)
                    .and_then(|i| species_mag.get(&i).copied())
                    .unwrap_or(0.0)
            })
            .collect();
        if let Some(e) = entries.iter().find(|e| e.base == "starting_magnetization") {
            lines.keys.insert("starting_magnetization".into(), e.line);
        }
        Spin::Collinear {
            starting_magnetization: mags,
            total_magnetization: tot_mag,
        }
    } else {
        Spin::None
    };

    // K_POINTS
    let kc = card("K_POINTS")
        .ok_or_else(|| missing_card("K_POINTS", "e.g. `K_POINTS automatic` then `4 4 4 0 0 0`"))?;
    lines.keys.insert("K_POINTS".into(), kc.line);
    let kerr = |ln: usize, msg: String| {
        InputError::new(file, msg)
            .with_key("K_POINTS")
            .at_line(Some(ln))
    };
    let kpoints = match kc.option.as_str() {
        "gamma" => Kpoints::Gamma,
        "automatic" => {
            let (ln, row) = kc.rows.first().ok_or_else(|| {
                kerr(
                    kc.line,
                    "K_POINTS automatic needs a line `nk1 nk2 nk3 sk1 sk2 sk3`".into(),
                )
            })?;
            let toks: Vec<&str> = row.split_whitespace().collect();
            let nums: Option<Vec<i64>> = toks.iter().map(|t| t.parse::<i64>().ok()).collect();
            let nums = nums.filter(|n| n.len() == 6).ok_or_else(|| {
                kerr(
                    *ln,
                    format!("expected 6 integers `nk1 nk2 nk3 sk1 sk2 sk3`, found `{row}`"),
                )
            })?;
            if kc.rows.len() > 1 {
                return Err(kerr(
                    kc.rows[1].0,
                    "K_POINTS automatic takes a single line".into(),
                ));
            }
            let mut grid = [0usize; 3];
            let mut shift = [false; 3];
            for k in 0..3 {
                grid[k] = usize::try_from(nums[k])
                    .map_err(|_| kerr(*ln, format!("negative k-grid entry {}", nums[k])))?;
                shift[k] = match nums[k + 3] {
                    0 => false,
                    1 => true,
                    s => return Err(kerr(*ln, format!("k-grid shift must be 0 or 1, got {s}"))),
                };
            }
            Kpoints::MonkhorstPack { grid, shift }
        }
        "crystal" | "tpiba" | "" => {
            let (ln, first) = kc
                .rows
                .first()
                .ok_or_else(|| kerr(kc.line, "K_POINTS list needs the number of points".into()))?;
            let nks = first.trim().parse::<usize>().map_err(|_| {
                kerr(
                    *ln,
                    format!("expected the number of k-points, found `{first}`"),
                )
            })?;
            if kc.rows.len().checked_sub(1) != Some(nks) {
                return Err(kerr(
                    *ln,
                    format!("{} k-point lines but {nks} announced", kc.rows.len() - 1),
                ));
            }
            let mut list = Vec::with_capacity(nks);
            for (ln, row) in &kc.rows[1..] {
                let nums: Option<Vec<f64>> = row.split_whitespace().map(parse_f64).collect();
                let nums = nums.filter(|n| n.len() == 4).ok_or_else(|| {
                    kerr(*ln, format!("expected `kx ky kz weight`, found `{row}`"))
                })?;
                let k = [nums[0], nums[1], nums[2]];
                let frac = if kc.option == "crystal" {
                    k
                } else {
                    // tpiba: k = (2 pi / alat) kt; fractional_i = k . a_i / (2 pi) = kt . a_i / alat
                    let mut f = [0.0; 3];
                    for (i, fi) in f.iter_mut().enumerate() {
                        *fi = (0..3).map(|j| k[j] * lattice[i][j]).sum::<f64>() / alat;
                    }
                    f
                };
                list.push((frac, nums[3]));
            }
            super::kpoints::normalise_weights(list).map_err(|m| kerr(kc.line, m))?
        }
        other => {
            return Err(kerr(kc.line, format!("K_POINTS {other} is not supported"))
                .with_hint("use automatic, gamma, crystal or tpiba"))
        }
    };

    let spec = RunSpec {
        source: source.to_path_buf(),
        title,
        lattice,
        atoms,
        species,
        functional,
        hybrid,
        smearing,
        spin,
        charge,
        ecut: ecutwfc * HARTREE_PER_RYDBERG,
        kpoints,
        nbands,
        fft_grid,
        scf,
        use_symmetry,
        properties,
        relax,
        parallel: Default::default(),
        bands: None,
        dos: Default::default(),
        output: Default::default(),
        origin: lines.origin(InputFormat::QuantumEspresso),
    };
    validate(&spec, &QE_KEYS, &lines)?;
    Ok(spec)
}

/// Three numbers at the start of `row`.
fn three(file: &Path, key: &str, ln: usize, row: &str) -> Result<[f64; 3], InputError> {
    let toks: Vec<&str> = row.split_whitespace().collect();
    let bad = || {
        InputError::new(file, format!("expected 3 numbers, found `{}`", row.trim()))
            .with_key(key)
            .at_line(Some(ln))
    };
    if toks.len() < 3 {
        return Err(bad());
    }
    let mut out = [0.0; 3];
    for (o, t) in out.iter_mut().zip(&toks) {
        *o = parse_f64(t).ok_or_else(bad)?;
    }
    Ok(out)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

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
        fails(
            &SI2.replace("ecutrho=120.0", "ecutrho=240.0"),
            "ecutrho",
            "norm-conserving",
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
            &SI2.replace("mixing_beta=0.7", "mixing_beta=0.7, mixing_mode='TF'"),
            "mixing_mode",
            "TF",
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
