//! planewave's TOML input: the serde schema (unknown keys rejected) and its
//! conversion into a [`RunSpec`]. The schema is documented in the module doc of
//! `input`.

use std::collections::BTreeMap;
use std::path::Path;

use ::toml::{Spanned, Value};
use serde::Deserialize;

use super::error::{did_you_mean, line_of_offset};
use super::units::{parse_energy, LengthUnit};
use super::validate::{cart_to_frac, is_singular, validate, Lines, TOML_KEYS};
use super::{
    base_dir, stem, AtomSpec, InputError, InputFormat, Kpoints, MixingSpec, ParallelSpec,
    Properties, RelaxAlgorithm, RelaxSpec, RunSpec, ScfSpec, Smearing, SpeciesSpec, Spin,
    GPA_IN_HA_PER_BOHR3,
};

// ---------------------------------------------------------------- schema

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct TomlInput {
    title: Option<String>,
    structure: Option<Spanned<TomlStructure>>,
    #[serde(default)]
    species: BTreeMap<String, Spanned<TomlSpecies>>,
    model: Option<TomlModel>,
    basis: Option<Spanned<TomlBasis>>,
    scf: Option<TomlScf>,
    properties: Option<TomlProperties>,
    relax: Option<TomlRelax>,
    parallel: Option<TomlParallel>,
    hybrid: Option<Spanned<TomlHybrid>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct TomlHybrid {
    exx_fraction: Option<Spanned<f64>>,
    x_gamma_extrapolation: Option<bool>,
    q_grid: Option<Spanned<Vec<i64>>>,
    divergence: Option<Spanned<String>>,
    screening: Option<Spanned<f64>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct TomlParallel {
    kpoint_groups: Option<Spanned<i64>>,
    band_groups: Option<Spanned<i64>>,
    rank_order: Option<Spanned<String>>,
    alltoallv: Option<Spanned<String>>,
    kpoint_sum: Option<Spanned<String>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct TomlProperties {
    forces: Option<bool>,
    stress: Option<bool>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct TomlRelax {
    cell: Option<bool>,
    pressure: Option<Spanned<f64>>,
    force_tolerance: Option<Spanned<f64>>,
    stress_tolerance: Option<Spanned<f64>>,
    max_steps: Option<Spanned<i64>>,
    algorithm: Option<Spanned<String>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct TomlStructure {
    lattice: Option<Spanned<Vec<Vec<f64>>>>,
    lattice_unit: Option<Spanned<String>>,
    poscar: Option<Spanned<String>>,
    positions: Option<Spanned<String>>,
    atoms: Option<Spanned<Vec<Spanned<TomlAtom>>>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct TomlAtom {
    species: String,
    position: Vec<f64>,
    magnetization: Option<f64>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct TomlSpecies {
    pseudo: String,
    magnetization: Option<f64>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct TomlModel {
    functional: Option<Spanned<String>>,
    smearing: Option<Spanned<String>>,
    smearing_width: Option<Spanned<Value>>,
    spin: Option<Spanned<String>>,
    total_magnetization: Option<Spanned<f64>>,
    charge: Option<Spanned<f64>>,
    symmetry: Option<bool>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct TomlBasis {
    ecut: Spanned<Value>,
    kpoints: Spanned<Value>,
    nbands: Option<Spanned<i64>>,
    fft_grid: Option<Spanned<Vec<i64>>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct TomlScf {
    energy_tolerance: Option<Spanned<f64>>,
    density_tolerance: Option<Spanned<f64>>,
    max_iterations: Option<Spanned<i64>>,
    mixing: Option<Spanned<TomlMixing>>,
    eigensolver: Option<Spanned<String>>,
    davidson_dim: Option<Spanned<i64>>,
    seed: Option<u64>,
    start: Option<Spanned<String>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct TomlMixing {
    beta: Option<Spanned<f64>>,
    depth: Option<Spanned<i64>>,
    kerker_q0: Option<Spanned<f64>>,
}

/// Known keys of each table: (table as shown to the user, keys).
const TABLES: &[(&str, &[&str])] = &[
    (
        "the top level",
        &[
            "title",
            "structure",
            "species",
            "model",
            "basis",
            "scf",
            "properties",
            "relax",
            "parallel",
            "hybrid",
        ],
    ),
    (
        "[structure]",
        &["lattice", "lattice_unit", "poscar", "positions", "atoms"],
    ),
    (
        "an entry of structure.atoms",
        &["species", "position", "magnetization"],
    ),
    ("[species.*]", &["pseudo", "magnetization"]),
    (
        "[model]",
        &[
            "functional",
            "smearing",
            "smearing_width",
            "spin",
            "total_magnetization",
            "charge",
            "symmetry",
        ],
    ),
    ("[basis]", &["ecut", "kpoints", "nbands"]),
    (
        "[scf]",
        &[
            "energy_tolerance",
            "density_tolerance",
            "max_iterations",
            "mixing",
            "eigensolver",
            "davidson_dim",
            "seed",
            "start",
        ],
    ),
    ("scf.mixing", &["beta", "depth", "kerker_q0"]),
    ("[properties]", &["forces", "stress"]),
    (
        "[hybrid]",
        &[
            "exx_fraction",
            "x_gamma_extrapolation",
            "q_grid",
            "divergence",
        ],
    ),
    (
        "[parallel]",
        &[
            "kpoint_groups",
            "band_groups",
            "rank_order",
            "alltoallv",
            "kpoint_sum",
        ],
    ),
    (
        "[relax]",
        &[
            "cell",
            "pressure",
            "force_tolerance",
            "stress_tolerance",
            "max_steps",
            "algorithm",
        ],
    ),
];

const KPOINT_KEYS: &[&str] = &["grid", "shift", "list"];

// ---------------------------------------------------------------- errors

/// Context for building errors while converting.
struct Ctx<'a> {
    text: &'a str,
    file: &'a Path,
}

impl Ctx<'_> {
    fn line(&self, span: std::ops::Range<usize>) -> Option<usize> {
        Some(line_of_offset(self.text, span.start))
    }
    fn e(
        &self,
        key: &str,
        span: Option<std::ops::Range<usize>>,
        msg: impl Into<String>,
    ) -> InputError {
        InputError::new(self.file, msg)
            .with_key(key)
            .at_line(span.and_then(|s| self.line(s)))
    }
    fn err<T>(
        &self,
        key: &str,
        span: Option<std::ops::Range<usize>>,
        msg: impl Into<String>,
    ) -> Result<T, InputError> {
        Err(InputError::new(self.file, msg)
            .with_key(key)
            .at_line(span.and_then(|s| self.line(s))))
    }
}

/// All back-quoted words in `s`.
fn backquoted(s: &str) -> Vec<String> {
    s.split('`')
        .skip(1)
        .step_by(2)
        .map(str::to_string)
        .collect()
}

/// The user-facing name of the table whose key list is `expected`.
fn table_for_expected(expected: &[String], text: &str, line: Option<usize>) -> String {
    for (name, keys) in TABLES {
        if keys.len() == expected.len() && keys.iter().all(|k| expected.iter().any(|e| e == k)) {
            if *name == "[species.*]" {
                if let Some(h) = header_before(text, line) {
                    if h.starts_with("[species.") {
                        return h;
                    }
                }
            }
            return (*name).to_string();
        }
    }
    header_before(text, line).unwrap_or_else(|| "the top level".to_string())
}

/// The last `[table]` header at or before `line`.
fn header_before(text: &str, line: Option<usize>) -> Option<String> {
    let line = line?;
    text.lines()
        .take(line)
        .filter_map(|l| {
            let t = l.trim();
            if t.starts_with('[') {
                t.find(']').map(|e| t[..=e].to_string())
            } else {
                None
            }
        })
        .last()
}

/// Dotted key prefix for a user-facing table name.
fn key_prefix(table: &str) -> String {
    if table.starts_with('[') {
        format!("{}.", table.trim_matches(|c| c == '[' || c == ']'))
    } else if table == "scf.mixing" {
        "scf.mixing.".to_string()
    } else if table.contains("structure.atoms") {
        "structure.atoms[].".to_string()
    } else {
        String::new()
    }
}

/// The key assigned on `line` (text before `=`), if any.
fn key_on_line(text: &str, line: Option<usize>) -> Option<String> {
    let l = text.lines().nth(line?.checked_sub(1)?)?;
    let (k, _) = l.split_once('=')?;
    let k = k.trim().trim_start_matches('{').trim();
    if k.is_empty() || k.contains(['[', '"', '\'']) {
        None
    } else {
        Some(k.to_string())
    }
}

fn unknown_key_error(
    file: &Path,
    text: &str,
    unknown: &str,
    expected: &[String],
    line: Option<usize>,
) -> InputError {
    let table = table_for_expected(expected, text, line);
    let prefix = key_prefix(&table);
    let mut hint = did_you_mean(unknown, expected.iter().map(String::as_str));
    if hint.is_none() {
        for (name, keys) in TABLES {
            if keys.contains(&unknown) && *name != table && name.starts_with('[') {
                hint = Some(format!("`{unknown}` belongs in {name}"));
                break;
            }
        }
    }
    let hint = hint.unwrap_or_else(|| {
        if expected.is_empty() {
            format!("{table} takes no keys")
        } else {
            format!("known keys in {table}: {}", expected.join(", "))
        }
    });
    InputError::new(file, format!("unknown key `{unknown}` in {table}"))
        .with_key(format!("{prefix}{unknown}"))
        .at_line(line)
        .with_hint(hint)
}

/// Replaces our internal schema type names (`struct TomlSpecies`) in serde messages.
fn tidy_type_names(msg: &str) -> String {
    let mut out = String::new();
    let mut rest = msg;
    while let Some(pos) = rest.find("struct Toml") {
        out.push_str(&rest[..pos]);
        let after = &rest[pos + "struct Toml".len()..];
        let end = after
            .find(|c: char| !c.is_ascii_alphanumeric())
            .unwrap_or(after.len());
        out.push_str("a table");
        rest = &after[end..];
    }
    out.push_str(rest);
    out
}

/// Turns a toml/serde error into ours.
fn map_de_error(e: &::toml::de::Error, text: &str, file: &Path) -> InputError {
    let msg = e.message().trim().to_string();
    let line = e.span().map(|s| line_of_offset(text, s.start));
    if let Some(rest) = msg.strip_prefix("unknown field ") {
        let words = backquoted(rest);
        if let Some((unknown, expected)) = words.split_first() {
            return unknown_key_error(file, text, unknown, expected, line);
        }
    }
    if let Some(rest) = msg.strip_prefix("unexpected keys in table: ") {
        if let Some((unk, avail)) = rest.split_once(", available keys: ") {
            let unknown = unk.split(", ").next().unwrap_or(unk).trim();
            let expected: Vec<String> = avail.split(", ").map(|s| s.trim().to_string()).collect();
            return unknown_key_error(file, text, unknown, &expected, line);
        }
    }
    if let Some(rest) = msg.strip_prefix("missing field ") {
        let field = backquoted(rest).into_iter().next().unwrap_or_default();
        let table = TABLES
            .iter()
            .find(|(_, keys)| keys.contains(&field.as_str()))
            .map(|(n, _)| (*n).to_string())
            .unwrap_or_else(|| "a table".to_string());
        let table = if table == "[species.*]" {
            header_before(text, line)
                .filter(|h| h.starts_with("[species."))
                .unwrap_or(table)
        } else {
            table
        };
        return InputError::new(file, format!("missing required key `{field}` in {table}"))
            .with_key(format!("{}{field}", key_prefix(&table)))
            .at_line(line);
    }
    let one_line = msg
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join("; ");
    let one_line = tidy_type_names(&one_line);
    let mut err = InputError::new(file, format!("invalid value: {one_line}")).at_line(line);
    if let Some(k) = key_on_line(text, line) {
        let full = match header_before(text, line) {
            Some(h) => format!("{}.{k}", h.trim_matches(|c| c == '[' || c == ']')),
            None => k,
        };
        err = err.with_key(full);
    }
    err
}

// ---------------------------------------------------------------- conversion

/// Parses TOML text (see the `input` module doc) and validates it.
pub(crate) fn parse(text: &str, source: &Path) -> Result<RunSpec, InputError> {
    let file = source;
    if let Err(e) = text.parse::<::toml::Table>() {
        let msg = e
            .message()
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .collect::<Vec<_>>()
            .join("; ");
        let line = e.span().map(|s| line_of_offset(text, s.start));
        let mut err = InputError::new(file, format!("malformed TOML: {msg}")).at_line(line);
        if msg.contains("duplicate key") {
            err = err.with_hint("each key (and each [species.X] table) may appear only once");
        } else {
            err = err.with_hint("see the TOML schema in the planewave documentation (or is this a QE input missing &control/&system?)");
        }
        return Err(err);
    }
    let input: TomlInput = ::toml::from_str(text).map_err(|e| map_de_error(&e, text, file))?;
    let ctx = Ctx { text, file };
    let mut lines = Lines::default();
    let dir = base_dir(source);

    // ---- model (needed early for spin checks)
    let model = input.model.unwrap_or(TomlModel {
        functional: None,
        smearing: None,
        smearing_width: None,
        spin: None,
        total_magnetization: None,
        charge: None,
        symmetry: None,
    });
    let hybrid_name = model.functional.as_ref().and_then(|f| {
        let name = f.get_ref().trim().to_ascii_lowercase();
        matches!(name.as_str(), "pbe0" | "hse" | "hse06").then_some(name)
    });
    let hybrid = hybrid_of(&ctx, hybrid_name.as_deref(), input.hybrid.as_ref())?;
    let functional = match &model.functional {
        None => "lda_pz".to_string(),
        Some(_) if hybrid.is_some() => "pbe".to_string(),
        Some(f) => match functional_name(f.get_ref()) {
            Some(n) => n.to_string(),
            None => {
                let e = ctx.e(
                    "model.functional",
                    Some(f.span()),
                    format!("unknown functional `{}`", f.get_ref()),
                );
                return Err(e.with_hint(
                    did_you_mean(
                        f.get_ref(),
                        ["lda_pz", "lda_pw", "lda_vwn", "pbe", "pbe0", "hse"],
                    )
                        .unwrap_or_else(|| {
                            "supported: lda_pz (lda, pz), lda_pw (pw), lda_vwn (vwn, svwn), pbe, pbe0, hse (hse06)"
                                .to_string()
                        }),
                ));
            }
        },
    };

    for (key, span) in [
        (
            "model.functional",
            model.functional.as_ref().map(|v| v.span()),
        ),
        ("model.smearing", model.smearing.as_ref().map(|v| v.span())),
        ("model.spin", model.spin.as_ref().map(|v| v.span())),
    ] {
        if let Some(span) = span {
            lines
                .keys
                .insert(key.to_string(), line_of_offset(text, span.start));
        }
    }
    let smearing_kind = match &model.smearing {
        None => SmearKind::None,
        Some(s) => match smearing_kind(s.get_ref()) {
            Some(k) => k,
            None => {
                return Err(ctx.e("model.smearing", Some(s.span()), format!("unknown smearing `{}`", s.get_ref()))
                    .with_hint("supported: none, gaussian, fermi-dirac, methfessel-paxton, marzari-vanderbilt (cold)"))
            }
        },
    };
    let width = match &model.smearing_width {
        None => None,
        Some(w) => Some(energy_value(&ctx, "model.smearing_width", w)?),
    };
    if let Some(w) = &model.smearing_width {
        lines.keys.insert(
            "model.smearing_width".into(),
            line_of_offset(text, w.span().start),
        );
    } else if let Some(s) = &model.smearing {
        lines.keys.insert(
            "model.smearing_width".into(),
            line_of_offset(text, s.span().start),
        );
    }
    let smearing = match (smearing_kind, width) {
        (SmearKind::None, None) => Smearing::None,
        (SmearKind::None, Some(_)) => {
            return Err(ctx
                .e(
                    "model.smearing_width",
                    model.smearing_width.as_ref().map(|w| w.span()),
                    "smearing_width is given but smearing is off",
                )
                .with_hint(
                    "set smearing = \"gaussian\" (or another kind), or remove smearing_width",
                ))
        }
        (_, None) => {
            return Err(ctx
                .e(
                    "model.smearing_width",
                    model.smearing.as_ref().map(|s| s.span()),
                    "smearing is on but smearing_width is missing",
                )
                .with_hint("e.g. smearing_width = 0.01 (Ha) or \"0.02 Ry\""))
        }
        (SmearKind::Gaussian, Some(w)) => Smearing::Gaussian(w),
        (SmearKind::FermiDirac, Some(w)) => Smearing::FermiDirac(w),
        (SmearKind::MethfesselPaxton, Some(w)) => Smearing::MethfesselPaxton(w),
        (SmearKind::MarzariVanderbilt, Some(w)) => Smearing::MarzariVanderbilt(w),
    };

    let collinear = match &model.spin {
        None => false,
        Some(s) => match s.get_ref().trim().to_ascii_lowercase().as_str() {
            "none" | "unpolarized" | "unpolarised" => false,
            "collinear" => true,
            other => {
                return Err(ctx
                    .e(
                        "model.spin",
                        Some(s.span()),
                        format!("unknown spin treatment `{other}`"),
                    )
                    .with_hint("use \"none\" or \"collinear\""))
            }
        },
    };
    if let Some(t) = &model.total_magnetization {
        lines.keys.insert(
            "model.total_magnetization".into(),
            line_of_offset(text, t.span().start),
        );
        if !collinear {
            return Err(ctx
                .e(
                    "model.total_magnetization",
                    Some(t.span()),
                    "total_magnetization is given but spin = \"none\"",
                )
                .with_hint("set spin = \"collinear\" in [model], or remove total_magnetization"));
        }
    }
    let charge = match &model.charge {
        None => 0.0,
        Some(c) => {
            lines
                .keys
                .insert("model.charge".into(), line_of_offset(text, c.span().start));
            *c.get_ref()
        }
    };

    // ---- structure
    let structure = match input.structure {
        Some(s) => s,
        None => {
            return Err(InputError::new(file, "missing table [structure]")
                .with_key("structure")
                .with_hint("give [structure] with lattice and atoms (or poscar)"))
        }
    };
    let structure_span = structure.span();
    let structure = structure.into_inner();
    let mut atom_mags: Vec<Option<f64>> = Vec::new();
    let (lattice, atoms) = if let Some(poscar) = &structure.poscar {
        for (name, present) in [
            ("lattice", structure.lattice.is_some()),
            ("atoms", structure.atoms.is_some()),
            ("lattice_unit", structure.lattice_unit.is_some()),
            ("positions", structure.positions.is_some()),
        ] {
            if present {
                return Err(ctx.e(
                        &format!("structure.{name}"),
                        Some(poscar.span()),
                        format!("`{name}` cannot be combined with `poscar` (the POSCAR defines the structure)"),
                    )
                    .with_hint(format!("remove `{name}` or `poscar`")));
            }
        }
        let path = dir.join(poscar.get_ref());
        let ptext = std::fs::read_to_string(&path).map_err(|e| {
            InputError::new(
                file,
                format!("cannot read POSCAR `{}`: {e}", path.display()),
            )
            .with_key("structure.poscar")
            .at_line(Some(line_of_offset(text, poscar.span().start)))
            .with_hint("the path is relative to the input file's folder")
        })?;
        let p = super::poscar::parse_poscar(&ptext, &path)?;
        let pl = line_of_offset(text, poscar.span().start);
        lines.keys.insert("structure.lattice".into(), pl);
        lines.keys.insert("structure.atoms".into(), pl);
        lines.atoms = vec![Some(pl); p.atoms.len()];
        atom_mags = vec![None; p.atoms.len()];
        (p.lattice, p.atoms)
    } else {
        let unit = match &structure.lattice_unit {
            None => LengthUnit::Bohr,
            Some(u) => match u.get_ref().trim().to_ascii_lowercase().as_str() {
                "bohr" => LengthUnit::Bohr,
                "angstrom" => LengthUnit::Angstrom,
                other => {
                    return Err(ctx
                        .e(
                            "structure.lattice_unit",
                            Some(u.span()),
                            format!("unknown length unit `{other}`"),
                        )
                        .with_hint("use \"bohr\" or \"angstrom\""))
                }
            },
        };
        let lat = match &structure.lattice {
            Some(l) => l,
            None => return Err(InputError::new(file, "missing `lattice` in [structure]")
                .with_key("structure.lattice")
                .at_line(Some(line_of_offset(text, structure_span.start)))
                .with_hint(
                    "give lattice = [[..], [..], [..]] (rows a1, a2, a3) or poscar = \"POSCAR\"",
                )),
        };
        lines.keys.insert(
            "structure.lattice".into(),
            line_of_offset(text, lat.span().start),
        );
        let rows = lat.get_ref();
        if rows.len() != 3 || rows.iter().any(|r| r.len() != 3) {
            return ctx.err(
                "structure.lattice",
                Some(lat.span()),
                "the lattice must be 3 rows (a1, a2, a3) of 3 numbers",
            );
        }
        let mut lattice = [[0.0; 3]; 3];
        for i in 0..3 {
            for k in 0..3 {
                lattice[i][k] = unit.to_bohr(rows[i][k]);
            }
        }
        let cartesian = match &structure.positions {
            None => false,
            Some(p) => match p.get_ref().trim().to_ascii_lowercase().as_str() {
                "fractional" | "crystal" | "direct" => false,
                "cartesian" => true,
                other => {
                    return Err(ctx
                        .e(
                            "structure.positions",
                            Some(p.span()),
                            format!("unknown positions mode `{other}`"),
                        )
                        .with_hint("use \"fractional\" or \"cartesian\" (in lattice_unit)"))
                }
            },
        };
        if cartesian && is_singular(&lattice) {
            return ctx.err(
                "structure.lattice",
                Some(lat.span()),
                "the lattice vectors are (nearly) linearly dependent",
            );
        }
        let list = match &structure.atoms {
            Some(a) => a,
            None => {
                return Err(
                    InputError::new(file, "no atoms given: missing `atoms` in [structure]")
                        .with_key("structure.atoms")
                        .at_line(Some(line_of_offset(text, structure_span.start)))
                        .with_hint("atoms = [ { species = \"Si\", position = [0.0, 0.0, 0.0] } ]"),
                )
            }
        };
        lines.keys.insert(
            "structure.atoms".into(),
            line_of_offset(text, list.span().start),
        );
        let mut atoms = Vec::new();
        for (i, a) in list.get_ref().iter().enumerate() {
            let aline = line_of_offset(text, a.span().start);
            lines.atoms.push(Some(aline));
            let a_ref = a.get_ref();
            if a_ref.position.len() != 3 {
                return ctx.err(
                    "structure.atoms",
                    Some(a.span()),
                    format!(
                        "atom {} ({}): position must have 3 numbers",
                        i + 1,
                        a_ref.species
                    ),
                );
            }
            let p = [a_ref.position[0], a_ref.position[1], a_ref.position[2]];
            let frac = if cartesian {
                cart_to_frac(
                    &lattice,
                    [unit.to_bohr(p[0]), unit.to_bohr(p[1]), unit.to_bohr(p[2])],
                )
            } else {
                p
            };
            atoms.push(AtomSpec {
                species: a_ref.species.clone(),
                frac,
            });
            atom_mags.push(a_ref.magnetization);
        }
        (lattice, atoms)
    };

    // ---- species
    let mut species: Vec<SpeciesSpec> = Vec::new();
    let mut order: Vec<&String> = Vec::new();
    for a in &atoms {
        if let Some((k, _)) = input.species.get_key_value(&a.species) {
            if !order.contains(&k) {
                order.push(k);
            }
        }
    }
    for k in input.species.keys() {
        if !order.contains(&k) {
            order.push(k);
        }
    }
    for sym in order {
        let Some(sp) = input.species.get(sym) else {
            continue;
        };
        let sline = line_of_offset(text, sp.span().start);
        lines.species.insert(sym.clone(), sline);
        if sp.get_ref().pseudo.trim().is_empty() {
            return ctx.err(
                &format!("species.{sym}.pseudo"),
                Some(sp.span()),
                "empty pseudopotential path",
            );
        }
        species.push(SpeciesSpec {
            symbol: sym.clone(),
            pseudo: dir.join(sp.get_ref().pseudo.trim()),
        });
    }
    if let Some((_, first)) = input.species.iter().next() {
        lines
            .keys
            .insert("species".into(), line_of_offset(text, first.span().start));
    }

    // ---- spin
    let any_species_mag = input
        .species
        .iter()
        .find(|(_, s)| s.get_ref().magnetization.is_some());
    let any_atom_mag = atom_mags.iter().position(Option::is_some);
    let spin = if collinear {
        let mut mags = Vec::with_capacity(atoms.len());
        for (i, a) in atoms.iter().enumerate() {
            let m = atom_mags
                .get(i)
                .copied()
                .flatten()
                .or_else(|| {
                    input
                        .species
                        .get(&a.species)
                        .and_then(|s| s.get_ref().magnetization)
                })
                .unwrap_or(0.0);
            mags.push(m);
        }
        Spin::Collinear {
            starting_magnetization: mags,
            total_magnetization: model.total_magnetization.as_ref().map(|t| *t.get_ref()),
        }
    } else {
        if let Some(i) = any_atom_mag {
            return Err(InputError::new(
                file,
                format!("atom {} has a magnetization but spin = \"none\"", i + 1),
            )
            .with_key("structure.atoms[].magnetization")
            .at_line(lines.atoms.get(i).copied().flatten())
            .with_hint("set spin = \"collinear\" in [model], or remove the magnetization"));
        }
        if let Some((sym, s)) = any_species_mag {
            return Err(ctx
                .e(
                    &format!("species.{sym}.magnetization"),
                    Some(s.span()),
                    "a magnetization is given but spin = \"none\"",
                )
                .with_hint("set spin = \"collinear\" in [model], or remove the magnetization"));
        }
        Spin::None
    };

    // ---- basis
    let basis = match input.basis {
        Some(b) => b.into_inner(),
        None => {
            return Err(InputError::new(file, "missing table [basis]")
                .with_key("basis")
                .with_hint(
                    "[basis] needs ecut (e.g. 15.0 Ha) and kpoints (e.g. { grid = [4, 4, 4] })",
                ))
        }
    };
    lines.keys.insert(
        "basis.ecut".into(),
        line_of_offset(text, basis.ecut.span().start),
    );
    lines.keys.insert(
        "basis.kpoints".into(),
        line_of_offset(text, basis.kpoints.span().start),
    );
    let ecut = energy_value(&ctx, "basis.ecut", &basis.ecut)?;
    let kpoints = kpoints_value(&ctx, &basis.kpoints)?;
    let nbands = match &basis.nbands {
        None => None,
        Some(n) => {
            lines
                .keys
                .insert("basis.nbands".into(), line_of_offset(text, n.span().start));
            let v = *n.get_ref();
            if v < 0 {
                return ctx.err(
                    "basis.nbands",
                    Some(n.span()),
                    format!("the number of bands must be at least 1, got {v}"),
                );
            }
            Some(usize::try_from(v).unwrap_or(usize::MAX))
        }
    };
    let fft_grid = match &basis.fft_grid {
        None => None,
        Some(g) => {
            lines.keys.insert(
                "basis.fft_grid".into(),
                line_of_offset(text, g.span().start),
            );
            match g.get_ref().as_slice() {
                [a, b, c] if [a, b, c].iter().all(|&&n| n >= 1) => {
                    Some([*a, *b, *c].map(|n| usize::try_from(n).unwrap_or(usize::MAX)))
                }
                other => {
                    return ctx.err(
                        "basis.fft_grid",
                        Some(g.span()),
                        format!("expected three positive point counts [n1, n2, n3], got {other:?}"),
                    )
                }
            }
        }
    };

    // ---- scf
    let mut scf = ScfSpec::default();
    if let Some(s) = &input.scf {
        let mut put = |key: &str, span: std::ops::Range<usize>| {
            lines
                .keys
                .insert(key.to_string(), line_of_offset(text, span.start));
        };
        if let Some(v) = &s.energy_tolerance {
            put("scf.energy_tolerance", v.span());
            scf.energy_tolerance = *v.get_ref();
        }
        if let Some(v) = &s.density_tolerance {
            put("scf.density_tolerance", v.span());
            scf.density_tolerance = *v.get_ref();
        }
        if let Some(v) = &s.max_iterations {
            put("scf.max_iterations", v.span());
            scf.max_iterations = nonneg(&ctx, "scf.max_iterations", v)?;
        }
        if let Some(m) = &s.mixing {
            let m = m.get_ref();
            let mut mix = MixingSpec::default();
            if let Some(v) = &m.beta {
                put("scf.mixing.beta", v.span());
                mix.beta = *v.get_ref();
            }
            if let Some(v) = &m.depth {
                put("scf.mixing.depth", v.span());
                mix.depth = nonneg(&ctx, "scf.mixing.depth", v)?;
            }
            if let Some(v) = &m.kerker_q0 {
                put("scf.mixing.kerker_q0", v.span());
                mix.kerker_q0 = *v.get_ref();
            }
            scf.mixing = mix;
        }
        if let Some(e) = &s.eigensolver {
            scf.eigensolver = match e.get_ref().trim().to_ascii_lowercase().as_str() {
                "lobpcg" => "lobpcg".to_string(),
                "davidson" | "david" => "davidson".to_string(),
                other => {
                    return Err(ctx
                        .e(
                            "scf.eigensolver",
                            Some(e.span()),
                            format!("unknown eigensolver `{other}`"),
                        )
                        .with_hint("use \"davidson\" or \"lobpcg\""))
                }
            };
        }
        if let Some(v) = &s.davidson_dim {
            scf.davidson_dim = super::davidson_dim(*v.get_ref())
                .or_else(|msg| ctx.err("scf.davidson_dim", Some(v.span()), msg))?;
        }
        if let Some(seed) = s.seed {
            scf.seed = seed;
        }
        if let Some(v) = &s.start {
            scf.start = v
                .get_ref()
                .parse()
                .or_else(|msg| ctx.err("scf.start", Some(v.span()), msg))?;
        }
    }

    // ---- properties and relaxation
    // Hybrids have no stress: off unless asked for (and then refused).
    let mut properties = Properties {
        stress: hybrid.is_none(),
        ..Properties::default()
    };
    if let Some(p) = &input.properties {
        properties.forces = p.forces.unwrap_or(true);
        properties.stress = p.stress.unwrap_or(properties.stress);
        if hybrid.is_some() && properties.stress {
            return ctx.err(
                "properties.stress",
                None,
                "the stress is not implemented for hybrid functionals",
            );
        }
    }
    let mut relax = RelaxSpec::default();
    if let Some(r) = &input.relax {
        let mut put = |key: &str, span: std::ops::Range<usize>| {
            lines
                .keys
                .insert(key.to_string(), line_of_offset(text, span.start));
        };
        relax.cell = r.cell.unwrap_or(false);
        if let Some(v) = &r.pressure {
            put("relax.pressure", v.span());
            relax.pressure = *v.get_ref() * GPA_IN_HA_PER_BOHR3;
        }
        for (key, value, target, scale) in [
            (
                "relax.force_tolerance",
                &r.force_tolerance,
                &mut relax.force_tolerance,
                1.0,
            ),
            (
                "relax.stress_tolerance",
                &r.stress_tolerance,
                &mut relax.stress_tolerance,
                GPA_IN_HA_PER_BOHR3,
            ),
        ] {
            if let Some(v) = value {
                put(key, v.span());
                if v.get_ref().is_nan() || *v.get_ref() <= 0.0 {
                    return Err(ctx
                        .e(
                            key,
                            Some(v.span()),
                            format!("the tolerance must be positive, got {}", v.get_ref()),
                        )
                        .with_hint(if scale == 1.0 {
                            "give it in Ha/bohr, e.g. 5e-4"
                        } else {
                            "give it in GPa, e.g. 0.05"
                        }));
                }
                *target = *v.get_ref() * scale;
            }
        }
        if let Some(v) = &r.max_steps {
            put("relax.max_steps", v.span());
            relax.max_steps = nonneg(&ctx, "relax.max_steps", v)?;
            if relax.max_steps == 0 {
                return Err(ctx
                    .e(
                        "relax.max_steps",
                        Some(v.span()),
                        "max_steps must be at least 1",
                    )
                    .with_hint("use e.g. max_steps = 50"));
            }
        }
        if let Some(a) = &r.algorithm {
            relax.algorithm = match a.get_ref().trim().to_ascii_lowercase().as_str() {
                "bfgs" => RelaxAlgorithm::Bfgs,
                "fire" => RelaxAlgorithm::Fire,
                other => {
                    return Err(ctx
                        .e(
                            "relax.algorithm",
                            Some(a.span()),
                            format!("unknown relaxation algorithm `{other}`"),
                        )
                        .with_hint("use \"bfgs\" or \"fire\""))
                }
            };
        }
    }

    // ---- parallel layout
    let mut parallel = ParallelSpec::default();
    if let Some(p) = &input.parallel {
        for (key, value, target) in [
            (
                "parallel.kpoint_groups",
                &p.kpoint_groups,
                &mut parallel.kpoint_groups,
            ),
            (
                "parallel.band_groups",
                &p.band_groups,
                &mut parallel.band_groups,
            ),
        ] {
            if let Some(v) = value {
                lines
                    .keys
                    .insert(key.to_string(), line_of_offset(text, v.span().start));
                let n = nonneg(&ctx, key, v)?;
                if n == 0 {
                    return Err(ctx
                        .e(key, Some(v.span()), "a group count must be at least 1")
                        .with_hint("leave it out to let planewave choose"));
                }
                *target = Some(n);
            }
        }
        if let Some(o) = &p.rank_order {
            parallel.band_consecutive = match o.get_ref().trim().to_ascii_lowercase().as_str() {
                "g" | "g-consecutive" => false,
                "band" | "band-consecutive" => true,
                other => {
                    return Err(ctx
                        .e(
                            "parallel.rank_order",
                            Some(o.span()),
                            format!("unknown rank order `{other}`"),
                        )
                        .with_hint("use \"g\" (VASP's order) or \"band\" (CASTEP's)"))
                }
            };
        }
        if let Some(a) = &p.alltoallv {
            if let Err(e) = a
                .get_ref()
                .parse::<planewave_comm::strategies::AlltoallvChoice>()
            {
                return Err(ctx
                    .e("parallel.alltoallv", Some(a.span()), e)
                    .with_hint("use native, p2p, node, pairwise, nonblocking or auto"));
            }
            parallel.alltoallv = Some(a.get_ref().trim().to_string());
        }
        if let Some(a) = &p.kpoint_sum {
            if let Err(e) = a.get_ref().parse::<planewave_comm::sum::SumChoice>() {
                return Err(ctx
                    .e("parallel.kpoint_sum", Some(a.span()), e)
                    .with_hint("use allreduce, reduce_scatter or auto"));
            }
            parallel.kpoint_sum = Some(a.get_ref().trim().to_string());
        }
    }

    let spec = RunSpec {
        source: source.to_path_buf(),
        title: input.title.clone().unwrap_or_else(|| stem(source)),
        lattice,
        atoms,
        species,
        functional,
        hybrid,
        smearing,
        spin,
        charge,
        ecut,
        kpoints,
        nbands,
        fft_grid,
        scf,
        use_symmetry: model.symmetry.unwrap_or(true),
        properties,
        relax,
        parallel,
        origin: lines.origin(InputFormat::Toml),
    };
    validate(&spec, &TOML_KEYS, &lines)?;
    Ok(spec)
}

fn nonneg(ctx: &Ctx<'_>, key: &str, v: &Spanned<i64>) -> Result<usize, InputError> {
    usize::try_from(*v.get_ref()).or_else(|_| {
        ctx.err(
            key,
            Some(v.span()),
            format!("must be a non-negative integer, got {}", v.get_ref()),
        )
    })
}

/// The exact-exchange part of a hybrid `functional` ("pbe0", "hse" or "hse06") from the
/// `[hybrid]` table, with QE's defaults; the table without a hybrid functional, and what
/// planewave does not have, are errors.
fn hybrid_of(
    ctx: &Ctx<'_>,
    functional: Option<&str>,
    table: Option<&Spanned<TomlHybrid>>,
) -> Result<Option<crate::Hybrid>, InputError> {
    use crate::KernelSpec;
    let Some(functional) = functional else {
        return match table {
            Some(t) => Err(ctx
                .e(
                    "hybrid",
                    Some(t.span()),
                    "[hybrid] is for hybrid functionals, and model.functional is not one",
                )
                .with_hint("set model.functional = \"pbe0\" or \"hse\", or remove [hybrid]")),
            None => Ok(None),
        };
    };
    let hse = functional != "pbe0";
    let mut h = crate::Hybrid {
        fraction: 0.25,
        kernel: KernelSpec {
            screening: hse.then_some(0.106),
            x_gamma_extrapolation: true,
            q_grid: [1, 1, 1],
        },
    };
    let Some(t) = table.map(Spanned::get_ref) else {
        return Ok(Some(h));
    };
    if let Some(a) = &t.exx_fraction {
        if !(*a.get_ref() > 0.0 && *a.get_ref() <= 1.0) {
            return ctx.err(
                "hybrid.exx_fraction",
                Some(a.span()),
                format!("must be in (0, 1], got {}", a.get_ref()),
            );
        }
        h.fraction = *a.get_ref();
    }
    h.kernel.x_gamma_extrapolation = t.x_gamma_extrapolation.unwrap_or(true);
    if let Some(w) = &t.screening {
        if !hse {
            return Err(ctx
                .e(
                    "hybrid.screening",
                    Some(w.span()),
                    "screening is for HSE, and model.functional is \"pbe0\"",
                )
                .with_hint("remove it, or use functional = \"hse\""));
        }
        if !(*w.get_ref() > 0.0 && w.get_ref().is_finite()) {
            return ctx.err(
                "hybrid.screening",
                Some(w.span()),
                format!("must be positive (1/bohr), got {}", w.get_ref()),
            );
        }
        h.kernel.screening = Some(*w.get_ref());
    }
    if let Some(q) = &t.q_grid {
        if q.get_ref() != &[1, 1, 1] {
            return Err(ctx
                .e("hybrid.q_grid", Some(q.span()), format!("q grid {:?}: planewave's exact exchange has only the q grid [1, 1, 1] so far (every k-point pairs with itself)", q.get_ref()))
                .with_hint("remove q_grid or set it to [1, 1, 1]"));
        }
    }
    if let Some(d) = &t.divergence {
        if !d.get_ref().eq_ignore_ascii_case("gygi-baldereschi") {
            return Err(ctx
                .e(
                    "hybrid.divergence",
                    Some(d.span()),
                    format!("divergence treatment `{}` is not supported", d.get_ref()),
                )
                .with_hint("use \"gygi-baldereschi\" (the default)"));
        }
    }
    Ok(Some(h))
}

/// Canonical functional name for a user spelling (TOML aliases).
fn functional_name(s: &str) -> Option<&'static str> {
    match s.trim().to_ascii_lowercase().as_str() {
        "lda_pz" | "lda" | "pz" | "lda-pz" => Some("lda_pz"),
        "lda_pw" | "pw" | "lda-pw" => Some("lda_pw"),
        "lda_vwn" | "vwn" | "svwn" | "sla+vwn" | "lda-vwn" => Some("lda_vwn"),
        "pbe" | "gga_pbe" => Some("pbe"),
        _ => None,
    }
}

#[derive(Clone, Copy)]
enum SmearKind {
    None,
    Gaussian,
    FermiDirac,
    MethfesselPaxton,
    MarzariVanderbilt,
}

fn smearing_kind(s: &str) -> Option<SmearKind> {
    match s.trim().to_ascii_lowercase().replace('_', "-").as_str() {
        "none" | "fixed" => Some(SmearKind::None),
        "gaussian" | "gauss" => Some(SmearKind::Gaussian),
        "fermi-dirac" | "fd" | "f-d" => Some(SmearKind::FermiDirac),
        "methfessel-paxton" | "mp" | "m-p" => Some(SmearKind::MethfesselPaxton),
        "marzari-vanderbilt" | "cold" | "mv" | "m-v" => Some(SmearKind::MarzariVanderbilt),
        _ => None,
    }
}

/// An energy: a number (Ha) or a string with a unit.
fn energy_value(ctx: &Ctx<'_>, key: &str, v: &Spanned<Value>) -> Result<f64, InputError> {
    match v.get_ref() {
        Value::Integer(i) => Ok(*i as f64),
        Value::Float(f) => Ok(*f),
        Value::String(s) => parse_energy(s).or_else(|m| {
            ctx.err::<f64>(key, Some(v.span()), m)
                .map_err(|e| e.with_hint("e.g. 15.0 (Ha), \"30 Ry\", \"408 eV\""))
        }),
        other => ctx.err(
            key,
            Some(v.span()),
            format!(
                "expected an energy (a number in Ha or a string like \"30 Ry\"), got {}",
                other.type_str()
            ),
        ),
    }
}

fn as_f64(v: &Value) -> Option<f64> {
    match v {
        Value::Integer(i) => Some(*i as f64),
        Value::Float(f) => Some(*f),
        _ => None,
    }
}

fn kpoints_value(ctx: &Ctx<'_>, v: &Spanned<Value>) -> Result<Kpoints, InputError> {
    let key = "basis.kpoints";
    let span = Some(v.span());
    let grid_of = |a: &Value, what: &str| -> Result<[usize; 3], InputError> {
        let arr = a.as_array().filter(|a| a.len() == 3);
        let mut g = [0usize; 3];
        let Some(arr) = arr else {
            return ctx.err(key, span.clone(), format!("{what} must be 3 integers"));
        };
        for (k, x) in arr.iter().enumerate() {
            match x.as_integer().and_then(|i| usize::try_from(i).ok()) {
                Some(n) => g[k] = n,
                None => {
                    return ctx.err(
                        key,
                        span.clone(),
                        format!("{what} must be 3 non-negative integers, got {x}"),
                    )
                }
            }
        }
        Ok(g)
    };
    match v.get_ref() {
        Value::String(s) if s.trim().eq_ignore_ascii_case("gamma") => Ok(Kpoints::Gamma),
        Value::String(s) => Err(ctx
            .e(key, span, format!("unknown k-point setting `{s}`"))
            .with_hint("use \"gamma\", { grid = [4, 4, 4] } or { list = [[kx, ky, kz, w], ...] }")),
        Value::Array(_) => Ok(Kpoints::MonkhorstPack {
            grid: grid_of(v.get_ref(), "kpoints")?,
            shift: [false; 3],
        }),
        Value::Table(t) => {
            for k in t.keys() {
                if !KPOINT_KEYS.contains(&k.as_str()) {
                    let hint = did_you_mean(k, KPOINT_KEYS.iter().copied()).unwrap_or_else(|| {
                        "known keys in basis.kpoints: grid, shift, list".to_string()
                    });
                    return Err(ctx
                        .e(
                            &format!("basis.kpoints.{k}"),
                            span,
                            format!("unknown key `{k}` in basis.kpoints"),
                        )
                        .with_hint(hint));
                }
            }
            match (t.get("grid"), t.get("list")) {
                (Some(_), Some(_)) => ctx.err(key, span, "give either `grid` or `list`, not both"),
                (None, None) => Err(ctx
                    .e(key, span, "kpoints needs `grid` or `list`")
                    .with_hint("e.g. kpoints = { grid = [4, 4, 4] }")),
                (Some(g), None) => {
                    let grid = grid_of(g, "grid")?;
                    let mut shift = [false; 3];
                    if let Some(s) = t.get("shift") {
                        let arr = s.as_array().filter(|a| a.len() == 3);
                        let Some(arr) = arr else {
                            return ctx.err(key, span, "shift must be 3 entries, each 0 or 1");
                        };
                        for (k, x) in arr.iter().enumerate() {
                            shift[k] = match x {
                                Value::Integer(0) | Value::Boolean(false) => false,
                                Value::Integer(1) | Value::Boolean(true) => true,
                                other => {
                                    return ctx.err(
                                        key,
                                        span,
                                        format!("shift entries must be 0 or 1, got {other}"),
                                    )
                                }
                            };
                        }
                    }
                    Ok(Kpoints::MonkhorstPack { grid, shift })
                }
                (None, Some(l)) => {
                    if t.contains_key("shift") {
                        return ctx.err(key, span, "`shift` only applies to `grid`");
                    }
                    let Some(arr) = l.as_array() else {
                        return ctx.err(key, span, "list must be an array of [kx, ky, kz, weight]");
                    };
                    let mut out = Vec::with_capacity(arr.len());
                    for (n, e) in arr.iter().enumerate() {
                        let nums: Option<Vec<f64>> = e
                            .as_array()
                            .map(|a| a.iter().map(as_f64).collect::<Option<Vec<f64>>>())
                            .unwrap_or(None);
                        match nums.as_deref() {
                            Some([x, y, z]) => out.push(([*x, *y, *z], 1.0)),
                            Some([x, y, z, w]) => out.push(([*x, *y, *z], *w)),
                            _ => {
                                return ctx.err(
                                    key,
                                    span,
                                    format!("k-point {} must be [kx, ky, kz] or [kx, ky, kz, weight] numbers", n + 1),
                                )
                            }
                        }
                    }
                    normalise_weights(out).map_err(|m| ctx.e(key, span, m))
                }
            }
        }
        other => ctx.err(
            key,
            span,
            format!("expected \"gamma\" or a table, got {}", other.type_str()),
        ),
    }
}

/// Normalises explicit k-point weights to sum 1.
pub(crate) fn normalise_weights(mut list: Vec<([f64; 3], f64)>) -> Result<Kpoints, String> {
    if list.is_empty() {
        return Err("the k-point list is empty".to_string());
    }
    if list
        .iter()
        .any(|(k, w)| !w.is_finite() || *w < 0.0 || k.iter().any(|x| !x.is_finite()))
    {
        return Err("k-point weights must be finite and >= 0, coordinates finite".to_string());
    }
    let sum: f64 = list.iter().map(|(_, w)| w).sum();
    if !sum.is_finite() || sum <= 0.0 {
        return Err("k-point weights sum to zero".to_string());
    }
    for (_, w) in list.iter_mut() {
        *w /= sum;
    }
    Ok(Kpoints::Explicit(list))
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    pub(crate) const SI_TOML: &str = r#"title = "Si diamond"
[structure]
lattice = [[0.0, 5.13, 5.13], [5.13, 0.0, 5.13], [5.13, 5.13, 0.0]]
atoms = [ { species = "Si", position = [0, 0, 0] },
          { species = "Si", position = [0.25, 0.25, 0.25] } ]

[species.Si]
pseudo = "pseudos/Si-q4.lda.cp2k"

[model]
functional = "lda"

[basis]
ecut = "30 Ry"
kpoints = { grid = [4, 4, 4], shift = [0, 0, 0] }
nbands = 8

[scf]
energy_tolerance = 5e-11
max_iterations = 200
"#;

    const AL_TOML: &str = r#"
[structure]
lattice = [[0.0, 3.825, 3.825], [3.825, 0.0, 3.825], [3.825, 3.825, 0.0]]
atoms = [ { species = "Al", position = [0.0, 0.0, 0.0] } ]
[species.Al]
pseudo = "pp/Al-q3.lda.gth"
[model]
smearing = "gaussian"
smearing_width = "0.02 Ry"
[basis]
ecut = 15
kpoints = { grid = [6, 6, 6] }
nbands = 8
"#;

    const H_TOML: &str = r#"
[structure]
lattice = [[10, 0, 0], [0, 10, 0], [0, 0, 10]]
atoms = [ { species = "H", position = [0.0, 0.0, 0.0], magnetization = 0.5 } ]
[species.H]
pseudo = "pp/H-q1.lda.gth"
[model]
spin = "collinear"
total_magnetization = 1.0
[basis]
ecut = "15 Ha"
kpoints = { grid = [1, 1, 1] }
nbands = 2
"#;

    fn p(text: &str) -> Result<RunSpec, InputError> {
        parse(text, Path::new("/runs/x/in.toml"))
    }

    fn fails(text: &str, key: &str, msg: &str) -> InputError {
        super::super::expect_error(p(text), key, msg)
    }

    /// The physics of two specs agree (everything but source, title, pseudo folders, scf).
    fn same_physics(a: &RunSpec, b: &RunSpec) {
        for i in 0..3 {
            for k in 0..3 {
                assert!((a.lattice[i][k] - b.lattice[i][k]).abs() < 1e-12);
            }
        }
        assert_eq!(a.atoms, b.atoms);
        assert_eq!(a.functional, b.functional);
        assert_eq!(a.smearing, b.smearing);
        assert_eq!(a.spin, b.spin);
        assert_eq!(a.charge, b.charge);
        assert_eq!(a.ecut, b.ecut);
        assert_eq!(a.kpoints, b.kpoints);
        assert_eq!(a.nbands, b.nbands);
        let names = |s: &RunSpec| {
            s.species
                .iter()
                .map(|x| (x.symbol.clone(), x.pseudo.file_name().map(|f| f.to_owned())))
                .collect::<Vec<_>>()
        };
        assert_eq!(names(a), names(b));
    }

    #[test]
    fn si_al_h_match_qe() {
        let si = p(SI_TOML).unwrap();
        assert_eq!(si.title, "Si diamond");
        assert_eq!(
            si.species[0].pseudo,
            Path::new("/runs/x/pseudos/Si-q4.lda.cp2k")
        );
        assert_eq!(si.scf.max_iterations, 200);
        assert_eq!(si.scf.mixing, MixingSpec::default());
        let qe = super::super::qe::tests::SI2.replace("Si-q4.lda.gth", "Si-q4.lda.cp2k");
        same_physics(
            &si,
            &super::super::parse_qe_str(&qe, Path::new("/q/pw.in")).unwrap(),
        );
        let al = p(AL_TOML).unwrap();
        assert_eq!(al.smearing, Smearing::Gaussian(0.01));
        assert_eq!(al.title, "in");
        same_physics(
            &al,
            &super::super::parse_qe_str(super::super::qe::tests::AL1, Path::new("/q/pw.in"))
                .unwrap(),
        );
        let h = p(H_TOML).unwrap();
        same_physics(
            &h,
            &super::super::parse_qe_str(super::super::qe::tests::H1, Path::new("/q/pw.in"))
                .unwrap(),
        );
    }

    #[test]
    fn davidson_dim_is_read_and_checked() {
        let with = |n: &str| SI_TOML.replace("[scf]", &format!("[scf]\ndavidson_dim = {n}"));
        assert_eq!(p(&with("2")).unwrap().scf.davidson_dim, 2);
        fails(&with("1"), "scf.davidson_dim", "2 to 8 times the bands");
        fails(&with("-3"), "scf.davidson_dim", "got -3");
    }

    #[test]
    fn defaults_and_options() {
        let s = p(SI_TOML).unwrap();
        assert!(s.use_symmetry);
        assert_eq!(s.scf.eigensolver, "davidson");
        assert_eq!(s.scf.seed, 42);
        assert_eq!(s.scf.density_tolerance, 1e-7);
        assert_eq!(s.charge, 0.0);
        let t = SI_TOML.replace(
            "kpoints = { grid = [4, 4, 4], shift = [0, 0, 0] }",
            "kpoints = \"gamma\"",
        );
        assert_eq!(p(&t).unwrap().kpoints, Kpoints::Gamma);
        let t = SI_TOML.replace("shift = [0, 0, 0]", "shift = [1, 0, true]");
        assert_eq!(
            p(&t).unwrap().kpoints,
            Kpoints::MonkhorstPack {
                grid: [4, 4, 4],
                shift: [true, false, true]
            }
        );
        let t = SI_TOML.replace(
            "kpoints = { grid = [4, 4, 4], shift = [0, 0, 0] }",
            "kpoints = { list = [[0.0, 0.0, 0.0, 1.0], [0.5, 0.0, 0.0, 3]] }",
        );
        assert_eq!(
            p(&t).unwrap().kpoints,
            Kpoints::Explicit(vec![([0.0; 3], 0.25), ([0.5, 0.0, 0.0], 0.75)])
        );
        let t = SI_TOML.replace("[scf]", "[scf]\nmixing = { beta = 0.3, depth = 4, kerker_q0 = 0.0 }\neigensolver = \"davidson\"\nseed = 7")
            .replace("[model]", "[model]\nsymmetry = false\ncharge = 1.5");
        let s = p(&t).unwrap();
        assert_eq!(
            s.scf.mixing,
            MixingSpec {
                beta: 0.3,
                depth: 4,
                kerker_q0: 0.0
            }
        );
        assert_eq!(
            (
                s.scf.eigensolver.as_str(),
                s.scf.seed,
                s.use_symmetry,
                s.charge
            ),
            ("davidson", 7, false, 1.5)
        );
        for (alias, canon) in [
            ("pz", "lda_pz"),
            ("PW", "lda_pw"),
            ("svwn", "lda_vwn"),
            ("sla+vwn", "lda_vwn"),
            ("pbe", "pbe"),
        ] {
            let t = SI_TOML.replace("functional = \"lda\"", &format!("functional = \"{alias}\""));
            assert_eq!(p(&t).unwrap().functional, canon);
        }
        for (alias, want) in [
            ("cold", Smearing::MarzariVanderbilt(0.01)),
            ("mp", Smearing::MethfesselPaxton(0.01)),
            ("fd", Smearing::FermiDirac(0.01)),
            ("Fermi-Dirac", Smearing::FermiDirac(0.01)),
        ] {
            let t = AL_TOML.replace("\"gaussian\"", &format!("\"{alias}\""));
            assert_eq!(p(&t).unwrap().smearing, want);
        }
        let t = AL_TOML.replace("\"0.02 Ry\"", "\"0.27211386245988 eV\"");
        let w = p(&t).unwrap().smearing.width();
        assert!((w - 0.01).abs() < 1e-15);
        // Species-level magnetisation, atom value overriding.
        let t = H_TOML.replace(", magnetization = 0.5", "").replace(
            "pseudo = \"pp/H-q1.lda.gth\"",
            "pseudo = \"pp/H-q1.lda.gth\"\nmagnetization = -0.25",
        );
        let Spin::Collinear {
            starting_magnetization,
            ..
        } = p(&t).unwrap().spin
        else {
            panic!()
        };
        assert_eq!(starting_magnetization, vec![-0.25]);
    }

    #[test]
    fn angstrom_and_cartesian() {
        let t = SI_TOML
            .replace("lattice = [[0.0, 5.13, 5.13], [5.13, 0.0, 5.13], [5.13, 5.13, 0.0]]", "lattice = [[0.0, 2.715, 2.715], [2.715, 0.0, 2.715], [2.715, 2.715, 0.0]]\nlattice_unit = \"angstrom\"\npositions = \"cartesian\"")
            .replace("position = [0.25, 0.25, 0.25]", "position = [1.3575, 1.3575, 1.3575]");
        let s = p(&t).unwrap();
        assert!((s.lattice[0][1] - 2.715 / 0.529177210903).abs() < 1e-12);
        for x in s.atoms[1].frac {
            assert!((x - 0.25).abs() < 1e-12);
        }
    }

    #[test]
    fn poscar_files() {
        let dir = std::env::temp_dir().join(format!("pw_input_poscar_{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(
            dir.join("POSCAR"),
            super::super::poscar::tests::POSCAR_DIRECT,
        )
        .unwrap();
        let text = "[structure]\nposcar = \"POSCAR\"\n[species.Si]\npseudo = \"Si.upf\"\n[basis]\necut = 15\nkpoints = \"gamma\"\n";
        let s = parse(text, &dir.join("in.toml")).unwrap();
        assert_eq!(s.atoms.len(), 2);
        assert_eq!(s.atoms[1].frac, [0.25, 0.25, 0.25]);
        assert!((s.lattice[0][1] - 5.13).abs() < 1e-3);
        std::fs::write(
            dir.join("POSCAR_cart"),
            super::super::poscar::tests::POSCAR_CART,
        )
        .unwrap();
        let text2 = text.replace("\"POSCAR\"", "\"POSCAR_cart\"").replace(
            "[species.Si]\npseudo = \"Si.upf\"",
            "[species.Na]\npseudo = \"Na.upf\"\n[species.Cl]\npseudo = \"Cl.upf\"",
        );
        let s = parse(&text2, &dir.join("in.toml")).unwrap();
        assert_eq!(s.species[0].symbol, "Na");
        assert_eq!(s.atoms[1].frac, [0.5, 0.5, 0.5]);
        let e = parse(
            &text.replace("\"POSCAR\"", "\"nope\""),
            &dir.join("in.toml"),
        )
        .unwrap_err();
        assert_eq!(e.key.as_deref(), Some("structure.poscar"));
        let e = parse(
            &text.replace(
                "poscar = \"POSCAR\"",
                "poscar = \"POSCAR\"\nlattice = [[1,0,0],[0,1,0],[0,0,1]]",
            ),
            &dir.join("in.toml"),
        )
        .unwrap_err();
        assert_eq!(e.key.as_deref(), Some("structure.lattice"));
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn unknown_keys_suggest() {
        let e = fails(
            &SI_TOML.replace("ecut =", "ecutt ="),
            "basis.ecutt",
            "unknown key `ecutt` in [basis]",
        );
        assert_eq!(e.hint.as_deref(), Some("did you mean `ecut`?"));
        assert_eq!(e.line, Some(14));
        assert!(
            e.to_string()
                .starts_with("error: /runs/x/in.toml:14: basis.ecutt: unknown key"),
            "{e}"
        );
        let e = fails(
            &SI_TOML.replace("pseudo =", "psuedo ="),
            "species.Si.psuedo",
            "[species.Si]",
        );
        assert_eq!(e.hint.as_deref(), Some("did you mean `pseudo`?"));
        let e = fails(
            &SI_TOML.replace("max_iterations = 200", "mixing = { beta = 0.5, dpeth = 3 }"),
            "scf.mixing.dpeth",
            "scf.mixing",
        );
        assert_eq!(e.hint.as_deref(), Some("did you mean `depth`?"));
        let e = fails(
            &SI_TOML.replace("title = ", "ecut = 3\ntitle = "),
            "ecut",
            "the top level",
        );
        assert_eq!(e.hint.as_deref(), Some("`ecut` belongs in [basis]"));
        fails(
            &SI_TOML.replace(
                "species = \"Si\", position = [0, 0, 0]",
                "species = \"Si\", positon = [0, 0, 0]",
            ),
            "structure.atoms[].positon",
            "structure.atoms",
        );
        fails(
            &SI_TOML.replace("shift = [0, 0, 0]", "shfit = [0, 0, 0]"),
            "basis.kpoints.shfit",
            "unknown key",
        );
        fails(
            &SI_TOML.replace("functional = \"lda\"", "functionl = \"lda\""),
            "model.functionl",
            "[model]",
        );
        fails(
            &SI_TOML.replace("[model]", "[modle]"),
            "modle",
            "the top level",
        );
    }

    #[test]
    fn fft_grid_is_read_and_checked() {
        let s = p(&SI_TOML.replace("nbands = 8", "nbands = 8\nfft_grid = [36, 32, 30]")).unwrap();
        assert_eq!(s.fft_grid, Some([36, 32, 30]));
        assert_eq!(p(SI_TOML).unwrap().fft_grid, None);
        for bad in ["[36, 32]", "[36, 0, 30]", "[36, -2, 30]"] {
            fails(
                &SI_TOML.replace("nbands = 8", &format!("nbands = 8\nfft_grid = {bad}")),
                "basis.fft_grid",
                "three positive",
            );
        }
    }

    #[test]
    fn malformed_and_types() {
        let e = p("[basis\necut = 1\n").unwrap_err();
        assert!(e.message.starts_with("malformed TOML"), "{e}");
        assert_eq!(e.line, Some(1));
        let e = p(&SI_TOML.replace("nbands = 8", "nbands = 8 8")).unwrap_err();
        assert_eq!(e.line, Some(16));
        let e =
            p(&SI_TOML.replace("[model]", "[species.Si]\npseudo = \"x\"\n[model]")).unwrap_err();
        assert!(
            e.message.contains("duplicate") || e.message.contains("redefin"),
            "{e}"
        );
        let e = fails(
            &SI_TOML.replace("nbands = 8", "nbands = \"eight\""),
            "basis.nbands",
            "invalid value",
        );
        assert_eq!(e.line, Some(16));
        let e2 = fails(
            &SI_TOML
                .replace("pseudo = \"pseudos/Si-q4.lda.cp2k\"", "")
                .replace("[species.Si]", "[species]\nSi = 3"),
            "species.Si",
            "expected a table",
        );
        assert!(!e2.message.contains("Toml"));
        fails(
            &SI_TOML.replace("ecut = \"30 Ry\"", "ecut = \"30 kJ\""),
            "basis.ecut",
            "unknown energy unit",
        );
        fails(
            &SI_TOML.replace("ecut = \"30 Ry\"", "ecut = true"),
            "basis.ecut",
            "expected an energy",
        );
        fails(
            &SI_TOML.replace("ecut = \"30 Ry\"\n", ""),
            "basis.ecut",
            "missing required key `ecut`",
        );
        fails(
            &SI_TOML.replace("pseudo = \"pseudos/Si-q4.lda.cp2k\"", ""),
            "species.Si.pseudo",
            "missing required key `pseudo`",
        );
        fails(
            &SI_TOML.replace("functional = \"lda\"", "functional = \"b3lyp\""),
            "model.functional",
            "b3lyp",
        );
    }

    #[test]
    fn pbe0_and_its_table() {
        let pbe0 = SI_TOML.replace("functional = \"lda\"", "functional = \"PBE0\"");
        let s = p(&pbe0).unwrap();
        assert_eq!(s.functional, "pbe");
        let h = s.hybrid.expect("a hybrid");
        assert_eq!((h.fraction, h.kernel.x_gamma_extrapolation), (0.25, true));
        assert!(!s.properties.stress, "no stress for hybrids by default");
        let table = |t: &str| format!("{pbe0}\n[hybrid]\n{t}\n");
        let h = p(&table(
            "exx_fraction = 0.3\nx_gamma_extrapolation = false\nq_grid = [1, 1, 1]",
        ))
        .unwrap()
        .hybrid
        .unwrap();
        assert_eq!((h.fraction, h.kernel.x_gamma_extrapolation), (0.3, false));
        fails(&table("q_grid = [2, 2, 2]"), "hybrid.q_grid", "[1, 1, 1]");
        fails(
            &table("divergence = \"vcut_ws\""),
            "hybrid.divergence",
            "vcut_ws",
        );
        fails(&table("exx_fraction = 0"), "hybrid.exx_fraction", "(0, 1]");
        fails(&table("ecutfock = 3"), "hybrid.ecutfock", "unknown key");
        fails(&table("screening = 0.11"), "hybrid.screening", "HSE");
        let hse = SI_TOML.replace("functional = \"lda\"", "functional = \"HSE06\"");
        let h = p(&hse).unwrap().hybrid.unwrap();
        assert_eq!(h.kernel.screening, Some(0.106));
        let h = p(&format!("{hse}\n[hybrid]\nscreening = 0.11\n"))
            .unwrap()
            .hybrid
            .unwrap();
        assert_eq!(h.kernel.screening, Some(0.11));
        fails(
            &format!("{SI_TOML}\n[hybrid]\nexx_fraction = 0.3\n"),
            "hybrid",
            "not one",
        );
        fails(
            &format!("{pbe0}\n[properties]\nstress = true\n"),
            "properties.stress",
            "hybrid",
        );
    }

    #[test]
    fn validation_errors() {
        // singular lattice
        let e = fails(
            &SI_TOML.replace("[5.13, 5.13, 0.0]]", "[5.13, 5.13, 10.26]]"),
            "structure.lattice",
            "linearly dependent",
        );
        assert_eq!(e.line, Some(3));
        // left-handed is fine
        assert!(p(&SI_TOML.replace(
            "[[0.0, 5.13, 5.13], [5.13, 0.0, 5.13]",
            "[[5.13, 0.0, 5.13], [0.0, 5.13, 5.13]"
        ))
        .is_ok());
        // close atoms, across the boundary
        let e = fails(
            &SI_TOML.replace("[0.25, 0.25, 0.25]", "[0.99, 0.0, 0.0]"),
            "structure.atoms",
            "atoms 1 (Si) and 2 (Si) are 0.07",
        );
        assert_eq!(e.line, Some(5));
        fails(
            &SI_TOML.replace("ecut = \"30 Ry\"", "ecut = 0"),
            "basis.ecut",
            "positive",
        );
        fails(
            &SI_TOML.replace("ecut = \"30 Ry\"", "ecut = -3.0"),
            "basis.ecut",
            "positive",
        );
        let e = fails(
            &SI_TOML.replace("ecut = \"30 Ry\"", "ecut = 20000"),
            "basis.ecut",
            "absurd",
        );
        assert_eq!(e.line, Some(14));
        fails(
            &SI_TOML.replace("grid = [4, 4, 4]", "grid = [4, 0, 4]"),
            "basis.kpoints",
            "zero",
        );
        fails(
            &SI_TOML.replace("grid = [4, 4, 4]", "grid = [4, -1, 4]"),
            "basis.kpoints",
            "non-negative",
        );
        fails(
            &AL_TOML.replace("\"0.02 Ry\"", "0.0"),
            "model.smearing_width",
            "positive",
        );
        fails(
            &AL_TOML.replace("\"0.02 Ry\"", "-0.01"),
            "model.smearing_width",
            "positive",
        );
        fails(
            &AL_TOML.replace("smearing_width = \"0.02 Ry\"", ""),
            "model.smearing_width",
            "missing",
        );
        fails(
            &AL_TOML.replace("smearing = \"gaussian\"", ""),
            "model.smearing_width",
            "smearing is off",
        );
        fails(
            &H_TOML.replace("spin = \"collinear\"", ""),
            "model.total_magnetization",
            "spin = \"none\"",
        );
        fails(
            &H_TOML.replace("spin = \"collinear\"\ntotal_magnetization = 1.0", ""),
            "structure.atoms[].magnetization",
            "spin = \"none\"",
        );
        fails(
            &SI_TOML.replace(
                "pseudo = \"pseudos/Si-q4.lda.cp2k\"",
                "pseudo = \"x\"\nmagnetization = 0.3",
            ),
            "species.Si.magnetization",
            "spin = \"none\"",
        );
        let e = fails(
            &H_TOML.replace("magnetization = 0.5", "magnetization = 1.5"),
            "magnetization",
            "outside [-1, 1]",
        );
        assert!(e.message.contains("atom 1 (H)"));
        let e = fails(
            &SI_TOML.replace(
                "species = \"Si\", position = [0.25",
                "species = \"Ge\", position = [0.25",
            ),
            "structure.atoms",
            "without a pseudo",
        );
        assert_eq!(e.line, Some(5));
        fails(&SI_TOML.replace("atoms = [ { species = \"Si\", position = [0, 0, 0] },\n          { species = \"Si\", position = [0.25, 0.25, 0.25] } ]", "atoms = []"), "structure.atoms", "no atoms");
        fails(&SI_TOML.replace("atoms = [ { species = \"Si\", position = [0, 0, 0] },\n          { species = \"Si\", position = [0.25, 0.25, 0.25] } ]", ""), "structure.atoms", "no atoms");
        fails(
            &SI_TOML.replace("nbands = 8", "nbands = 0"),
            "basis.nbands",
            "at least 1",
        );
        fails(
            &SI_TOML.replace("max_iterations = 200", "max_iterations = 0"),
            "scf.max_iterations",
            "at least 1",
        );
        fails(
            &SI_TOML.replace("max_iterations = 200", "mixing = { beta = 1.5 }"),
            "scf.mixing.beta",
            "(0, 1]",
        );
        fails(
            &SI_TOML.replace("energy_tolerance = 5e-11", "energy_tolerance = -1.0"),
            "scf.energy_tolerance",
            "positive",
        );
        fails(
            &SI_TOML.replace(
                "kpoints = { grid = [4, 4, 4], shift = [0, 0, 0] }",
                "kpoints = { list = [[0.0, 0.0, 0.0, 0.0]] }",
            ),
            "basis.kpoints",
            "zero",
        );
    }

    #[test]
    fn garbage_never_panics() {
        for g in [
            "", "\0", "[[[", "=", "a = ", "[structure]\nlattice = 1", "[structure]\nlattice = [[1]]",
            "[structure]\natoms = [1, 2]", "[basis]\necut = nan\nkpoints = \"gamma\"", "[basis]\necut = inf\nkpoints = [1, 2]",
            "species = 3", "[species]\nSi = 3", "[basis]\nkpoints = { list = [[1]] }", "title = 5", "\u{feff}title = \"x\"",
            "[structure]\nlattice = [[0,0,0],[0,0,0],[0,0,0]]\npositions = \"cartesian\"\natoms = [{species = \"X\", position = [0,0,0]}]",
        ] {
            assert!(p(g).is_err(), "accepted {g:?}");
        }
    }
}
