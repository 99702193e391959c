//! planewave's TOML input (the crate doc lists every key): typed structs that reject unknown
//! keys and read names and units as they go ([`crate::named`]), then the checks that join
//! keys. The structs carry no spans: every key's line comes from the document
//! ([`crate::toml_lines`]), and serde's errors become ours in [`crate::toml_errors`], which
//! takes the tables' key lists from these same structs.

use std::collections::BTreeMap;
use std::path::Path;

use serde::Deserialize;

use crate::bands::{BandsTable, PathVertex};
use crate::dos::{DosSpec, DosTable};
use crate::hybrid::{hybrid_of, HybridTable};
use crate::kpoints::{KpointTable, KpointsValue};
use crate::named::{
    BandConsecutive, Cartesian, Collinear, Eigensolver, Energy, Functional, Pick, SmearingKind,
};
use crate::toml_errors::{fields_of, from_serde, malformed};
use crate::toml_lines::{key_lines, KeyLines};
use crate::units::LengthUnit;
use crate::validate::{cart_to_frac, is_singular, validate, Lines, TOML_KEYS};
use crate::{
    base_dir, stem, AtomSpec, BandStart, GridFormat, InputError, InputFormat, MixingSpec,
    OutputSpec, ParallelSpec, Properties, RelaxAlgorithm, RelaxSpec, RunSpec, ScfSpec, Smearing,
    SpeciesSpec, Spin, GPA_IN_HA_PER_BOHR3,
};

// ---------------------------------------------------------------- schema

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Input {
    title: Option<String>,
    structure: Option<Structure>,
    #[serde(default)]
    species: BTreeMap<String, Species>,
    #[serde(default)]
    model: Model,
    basis: Option<Basis>,
    #[serde(default)]
    scf: Scf,
    properties: Option<PropertiesTable>,
    #[serde(default)]
    relax: Relax,
    #[serde(default)]
    parallel: Parallel,
    hybrid: Option<HybridTable>,
    bands: Option<BandsTable>,
    dos: Option<DosTable>,
    #[serde(default)]
    output: OutputTable,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct OutputTable {
    #[serde(default)]
    density: Vec<Pick<GridFormat>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Structure {
    lattice: Option<Vec<Vec<f64>>>,
    lattice_unit: Option<Pick<LengthUnit>>,
    poscar: Option<String>,
    positions: Option<Pick<Cartesian>>,
    atoms: Option<Vec<Atom>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Atom {
    species: String,
    position: Vec<f64>,
    magnetization: Option<f64>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Species {
    pseudo: String,
    magnetization: Option<f64>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct Model {
    functional: Option<Pick<Functional>>,
    smearing: Option<Pick<SmearingKind>>,
    smearing_width: Option<Energy>,
    spin: Option<Pick<Collinear>>,
    total_magnetization: Option<f64>,
    charge: Option<f64>,
    symmetry: Option<bool>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Basis {
    ecut: Energy,
    ecut_rho: Option<Energy>,
    kpoints: KpointsValue,
    nbands: Option<i64>,
    fft_grid: Option<Vec<i64>>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct Scf {
    energy_tolerance: Option<f64>,
    density_tolerance: Option<f64>,
    max_iterations: Option<i64>,
    mixing: Option<Mixing>,
    eigensolver: Option<Pick<Eigensolver>>,
    davidson_dim: Option<i64>,
    seed: Option<u64>,
    start: Option<Pick<BandStart>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Mixing {
    beta: Option<f64>,
    depth: Option<i64>,
    kerker_q0: Option<f64>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct PropertiesTable {
    forces: Option<bool>,
    stress: Option<bool>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct Relax {
    cell: Option<bool>,
    pressure: Option<f64>,
    force_tolerance: Option<f64>,
    stress_tolerance: Option<f64>,
    max_steps: Option<i64>,
    algorithm: Option<Pick<RelaxAlgorithm>>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct Parallel {
    kpoint_groups: Option<i64>,
    band_groups: Option<i64>,
    rank_order: Option<Pick<BandConsecutive>>,
    alltoallv: Option<String>,
    kpoint_sum: Option<String>,
    device: Option<Pick<crate::Device>>,
}

/// Every table as the user knows it, with its keys from the structs above.
fn schema() -> Vec<(&'static str, &'static [&'static str])> {
    vec![
        ("the top level", fields_of::<Input>()),
        ("[structure]", fields_of::<Structure>()),
        ("an entry of structure.atoms", fields_of::<Atom>()),
        ("[species.*]", fields_of::<Species>()),
        ("[model]", fields_of::<Model>()),
        ("[basis]", fields_of::<Basis>()),
        ("basis.kpoints", fields_of::<KpointTable>()),
        ("[scf]", fields_of::<Scf>()),
        ("scf.mixing", fields_of::<Mixing>()),
        ("[properties]", fields_of::<PropertiesTable>()),
        ("[relax]", fields_of::<Relax>()),
        ("[parallel]", fields_of::<Parallel>()),
        ("[hybrid]", fields_of::<HybridTable>()),
        ("[bands]", fields_of::<BandsTable>()),
        ("an entry of bands.path", fields_of::<PathVertex>()),
        ("[dos]", fields_of::<DosTable>()),
        ("[output]", fields_of::<OutputTable>()),
    ]
}

// ---------------------------------------------------------------- reading

/// Parses TOML text (see the crate doc) and validates it.
pub(crate) fn parse(text: &str, source: &Path) -> Result<RunSpec, InputError> {
    if let Err(e) = text.parse::<toml::Table>() {
        return Err(malformed(&e, text, source));
    }
    let lines = key_lines(text);
    let input: Input =
        toml::from_str(text).map_err(|e| from_serde(&e, text, source, &schema(), &lines))?;
    let doc = Doc {
        file: source,
        lines,
    };
    input.into_spec(&doc)
}

/// The file being read and its keys' lines.
pub(crate) struct Doc<'a> {
    pub file: &'a Path,
    pub lines: KeyLines,
}

impl Doc<'_> {
    /// An error at `key`'s line.
    pub(crate) fn err(
        &self,
        key: &str,
        message: impl Into<String>,
        hint: impl Into<String>,
    ) -> InputError {
        InputError::new(self.file, message)
            .with_key(key)
            .at_line(self.lines.of(key))
            .with_hint(hint)
    }

    /// `v` as a count, at `key`.
    pub(crate) fn count(&self, key: &str, v: i64) -> Result<usize, InputError> {
        usize::try_from(v).map_err(|_| {
            self.err(
                key,
                format!("must be a non-negative integer, got {v}"),
                "give a whole number, 0 or more",
            )
        })
    }
}

impl Input {
    fn into_spec(self, doc: &Doc) -> Result<RunSpec, InputError> {
        let functional = self.model.functional.map_or(Functional("lda_pz"), |f| f.0);
        let hybrid = hybrid_of(doc, functional, self.hybrid.as_ref())?;
        let mut lines = Lines {
            keys: doc.lines.keys.clone(),
            ..Lines::default()
        };
        let structure = self.structure.ok_or_else(|| {
            missing(
                doc,
                "structure",
                "give [structure] with lattice and atoms (or poscar)",
            )
        })?;
        let (lattice, atoms, atom_mags) = structure.read(doc, &mut lines)?;
        let species = species_of(doc, &self.species, &atoms, &mut lines)?;
        let spin = self
            .model
            .spin(doc, &self.species, &atoms, &atom_mags, &lines)?;
        let basis = self.basis.ok_or_else(|| {
            let hint = "[basis] needs ecut (e.g. 15.0 Ha) and kpoints (e.g. { grid = [4, 4, 4] })";
            missing(doc, "basis", hint)
        })?;
        let spec = RunSpec {
            source: doc.file.to_path_buf(),
            title: self.title.clone().unwrap_or_else(|| stem(doc.file)),
            lattice,
            atoms,
            species,
            functional: if hybrid.is_some() {
                "pbe"
            } else {
                functional.0
            }
            .to_string(),
            smearing: self.model.smearing(doc, &mut lines)?,
            spin,
            charge: self.model.charge.unwrap_or(0.0),
            ecut: basis.ecut.0,
            ecut_rho: basis.ecut_rho.map(|e| e.0),
            nbands: basis.nbands.map(|v| bands(doc, v)).transpose()?,
            fft_grid: fft_grid(doc, basis.fft_grid.as_deref())?,
            kpoints: basis.kpoints.0,
            scf: self.scf.read(doc)?,
            use_symmetry: self.model.symmetry.unwrap_or(true),
            properties: properties(doc, self.properties.as_ref(), hybrid.is_some())?,
            relax: self.relax.read(doc)?,
            parallel: self.parallel.read(doc)?,
            hybrid,
            bands: self.bands.map(|b| b.read(doc)).transpose()?,
            dos: self.dos.map_or(Ok(DosSpec::default()), |d| d.read(doc))?,
            output: OutputSpec {
                density: self.output.density.iter().map(|f| f.0).collect(),
            },
            origin: lines.origin(InputFormat::Toml),
            qe: None,
        };
        validate(&spec, &TOML_KEYS, &lines)?;
        Ok(spec)
    }
}

/// `basis.nbands` (0 is refused by the checks).
fn bands(doc: &Doc, v: i64) -> Result<usize, InputError> {
    let msg = || format!("the number of bands must be at least 1, got {v}");
    usize::try_from(v)
        .map_err(|_| doc.err("basis.nbands", msg(), "leave nbands out for the default"))
}

/// A required table that is not there.
fn missing(doc: &Doc, table: &str, hint: &str) -> InputError {
    InputError::new(doc.file, format!("missing table [{table}]"))
        .with_key(table)
        .with_hint(hint)
}

impl Model {
    /// The smearing; without a width, the width's line is the kind's.
    fn smearing(&self, doc: &Doc, lines: &mut Lines) -> Result<Smearing, InputError> {
        if let Some(l) = doc
            .lines
            .of("model.smearing")
            .filter(|_| self.smearing_width.is_none())
        {
            lines.keys.insert("model.smearing_width".into(), l);
        }
        let kind = self.smearing.and_then(|k| k.0 .0);
        match (kind, self.smearing_width) {
            (None, None) => Ok(Smearing::None),
            (None, Some(_)) => Err(doc.err(
                "model.smearing_width",
                "smearing_width is given but smearing is off",
                "set smearing = \"gaussian\" (or another kind), or remove smearing_width",
            )),
            (Some(_), None) => Err(InputError::new(
                doc.file,
                "smearing is on but smearing_width is missing",
            )
            .with_key("model.smearing_width")
            .at_line(doc.lines.of("model.smearing"))
            .with_hint("e.g. smearing_width = 0.01 (Ha) or \"0.02 Ry\"")),
            (Some(kind), Some(w)) => Ok(kind(w.0)),
        }
    }
}

/// The lattice (bohr, rows a1, a2, a3), the atoms and their starting magnetisations.
type Placed = ([[f64; 3]; 3], Vec<AtomSpec>, Vec<Option<f64>>);

impl Structure {
    /// The lattice (bohr), the atoms and their magnetisations.
    fn read(self, doc: &Doc, lines: &mut Lines) -> Result<Placed, InputError> {
        if let Some(poscar) = &self.poscar {
            return self.read_poscar(doc, poscar, lines);
        }
        let unit = self.lattice_unit.map_or(LengthUnit::Bohr, |u| u.0);
        let rows = self.lattice.as_ref().ok_or_else(|| {
            InputError::new(doc.file, "missing `lattice` in [structure]")
                .with_key("structure.lattice")
                .at_line(doc.lines.of("structure"))
                .with_hint(
                    "give lattice = [[..], [..], [..]] (rows a1, a2, a3) or poscar = \"POSCAR\"",
                )
        })?;
        let lattice = three_by_three(rows).ok_or_else(|| {
            doc.err(
                "structure.lattice",
                "the lattice must be 3 rows (a1, a2, a3) of 3 numbers",
                "lattice = [[a1x, a1y, a1z], [a2x, a2y, a2z], [a3x, a3y, a3z]]",
            )
        })?;
        let lattice = lattice.map(|r| r.map(|x| unit.to_bohr(x)));
        let cartesian = self.positions.is_some_and(|p| p.0 .0);
        if cartesian && is_singular(&lattice) {
            return Err(doc.err(
                "structure.lattice",
                "the lattice vectors are (nearly) linearly dependent",
                "check the rows a1, a2, a3",
            ));
        }
        let list = self.atoms.ok_or_else(|| {
            InputError::new(doc.file, "no atoms given: missing `atoms` in [structure]")
                .with_key("structure.atoms")
                .at_line(doc.lines.of("structure"))
                .with_hint("atoms = [ { species = \"Si\", position = [0.0, 0.0, 0.0] } ]")
        })?;
        lines.atoms = doc.lines.atoms.iter().map(|&l| Some(l)).collect();
        let mut atoms = Vec::with_capacity(list.len());
        for (i, a) in list.iter().enumerate() {
            let [x, y, z] = a.position[..] else {
                return Err(InputError::new(
                    doc.file,
                    format!(
                        "atom {} ({}): position must have 3 numbers",
                        i + 1,
                        a.species
                    ),
                )
                .with_key("structure.atoms")
                .at_line(doc.lines.atoms.get(i).copied())
                .with_hint("position = [x, y, z]"));
            };
            let frac = if cartesian {
                cart_to_frac(&lattice, [x, y, z].map(|c| unit.to_bohr(c)))
            } else {
                [x, y, z]
            };
            atoms.push(AtomSpec {
                species: a.species.clone(),
                frac,
            });
        }
        Ok((
            lattice,
            atoms,
            list.iter().map(|a| a.magnetization).collect(),
        ))
    }

    fn read_poscar(
        &self,
        doc: &Doc,
        poscar: &str,
        lines: &mut Lines,
    ) -> Result<Placed, InputError> {
        let line = doc.lines.of("structure.poscar");
        for (name, present) in [
            ("lattice", self.lattice.is_some()),
            ("atoms", self.atoms.is_some()),
            ("lattice_unit", self.lattice_unit.is_some()),
            ("positions", self.positions.is_some()),
        ] {
            if present {
                return Err(InputError::new(
                    doc.file,
                    format!("`{name}` cannot be combined with `poscar` (the POSCAR defines the structure)"),
                )
                .with_key(format!("structure.{name}"))
                .at_line(line)
                .with_hint(format!("remove `{name}` or `poscar`")));
            }
        }
        let path = base_dir(doc.file).join(poscar);
        let text = std::fs::read_to_string(&path).map_err(|e| {
            doc.err(
                "structure.poscar",
                format!("cannot read POSCAR `{}`: {e}", path.display()),
                "the path is relative to the input file's folder",
            )
        })?;
        let p = crate::poscar::parse_poscar(&text, &path)?;
        for key in ["structure.lattice", "structure.atoms"] {
            lines.keys.extend(line.map(|l| (key.to_string(), l)));
        }
        lines.atoms = vec![line; p.atoms.len()];
        let n = p.atoms.len();
        Ok((p.lattice, p.atoms, vec![None; n]))
    }
}

/// Rows of three numbers, three of them.
fn three_by_three(rows: &[Vec<f64>]) -> Option<[[f64; 3]; 3]> {
    let row = |r: &Vec<f64>| <[f64; 3]>::try_from(r.as_slice()).ok();
    match rows {
        [a, b, c] => Some([row(a)?, row(b)?, row(c)?]),
        _ => None,
    }
}

/// The species in order of first use by an atom, then the unused ones alphabetically.
fn species_of(
    doc: &Doc,
    table: &BTreeMap<String, Species>,
    atoms: &[AtomSpec],
    lines: &mut Lines,
) -> Result<Vec<SpeciesSpec>, InputError> {
    let mut order: Vec<&String> = Vec::new();
    let used = atoms
        .iter()
        .filter_map(|a| table.get_key_value(&a.species).map(|(k, _)| k));
    for k in used.chain(table.keys()) {
        if !order.contains(&k) {
            order.push(k);
        }
    }
    let dir = base_dir(doc.file);
    let mut out = Vec::with_capacity(order.len());
    for sym in order {
        let key = format!("species.{sym}");
        if let Some(l) = doc.lines.of(&key) {
            lines.species.insert(sym.clone(), l);
        }
        let pseudo = table[sym].pseudo.trim();
        if pseudo.is_empty() {
            return Err(doc.err(
                &format!("{key}.pseudo"),
                "empty pseudopotential path",
                "pseudo = \"path/to/file\" (relative to the input file's folder)",
            ));
        }
        out.push(SpeciesSpec {
            symbol: sym.clone(),
            pseudo: dir.join(pseudo),
        });
    }
    if let Some(first) = table
        .keys()
        .next()
        .and_then(|s| doc.lines.of(&format!("species.{s}")))
    {
        lines.keys.insert("species".into(), first);
    }
    Ok(out)
}

impl Model {
    /// The spin treatment; when collinear, each atom's starting magnetisation from its own
    /// entry or its species.
    fn spin(
        &self,
        doc: &Doc,
        table: &BTreeMap<String, Species>,
        atoms: &[AtomSpec],
        atom_mags: &[Option<f64>],
        lines: &Lines,
    ) -> Result<Spin, InputError> {
        let hint = "set spin = \"collinear\" in [model], or remove the magnetization";
        if self.spin.is_some_and(|s| s.0 .0) {
            let of_species = |a: &AtomSpec| table.get(&a.species).and_then(|s| s.magnetization);
            let mags = atoms.iter().zip(atom_mags);
            return Ok(Spin::Collinear {
                starting_magnetization: mags
                    .map(|(a, m)| m.or_else(|| of_species(a)).unwrap_or(0.0))
                    .collect(),
                total_magnetization: self.total_magnetization,
            });
        }
        if self.total_magnetization.is_some() {
            let msg = "total_magnetization is given but spin = \"none\"";
            let hint = "set spin = \"collinear\" in [model], or remove total_magnetization";
            return Err(doc.err("model.total_magnetization", msg, hint));
        }
        if let Some(i) = atom_mags.iter().position(Option::is_some) {
            return Err(InputError::new(
                doc.file,
                format!("atom {} has a magnetization but spin = \"none\"", i + 1),
            )
            .with_key("structure.atoms[].magnetization")
            .at_line(lines.atoms.get(i).copied().flatten())
            .with_hint(hint));
        }
        if let Some((sym, _)) = table.iter().find(|(_, s)| s.magnetization.is_some()) {
            let key = format!("species.{sym}.magnetization");
            return Err(doc.err(&key, "a magnetization is given but spin = \"none\"", hint));
        }
        Ok(Spin::None)
    }
}

fn fft_grid(doc: &Doc, grid: Option<&[i64]>) -> Result<Option<[usize; 3]>, InputError> {
    match grid {
        None => Ok(None),
        Some(&[a, b, c]) if a >= 1 && b >= 1 && c >= 1 => Ok(Some([a, b, c].map(|n| n as usize))),
        Some(other) => Err(doc.err(
            "basis.fft_grid",
            format!("expected three positive point counts [n1, n2, n3], got {other:?}"),
            "leave fft_grid out for the smallest grid that holds the density sphere",
        )),
    }
}

impl Scf {
    fn read(&self, doc: &Doc) -> Result<ScfSpec, InputError> {
        let mut scf = ScfSpec::default();
        scf.energy_tolerance = self.energy_tolerance.unwrap_or(scf.energy_tolerance);
        scf.density_tolerance = self.density_tolerance.unwrap_or(scf.density_tolerance);
        if let Some(v) = self.max_iterations {
            scf.max_iterations = doc.count("scf.max_iterations", v)?;
        }
        if let Some(m) = &self.mixing {
            let d = MixingSpec::default();
            scf.mixing = MixingSpec {
                beta: m.beta.unwrap_or(d.beta),
                depth: m
                    .depth
                    .map_or(Ok(d.depth), |v| doc.count("scf.mixing.depth", v))?,
                kerker_q0: m.kerker_q0.or(d.kerker_q0),
            };
        }
        if let Some(e) = self.eigensolver {
            scf.eigensolver = e.0 .0.to_string();
        }
        if let Some(v) = self.davidson_dim {
            scf.davidson_dim = crate::davidson_dim(v).map_err(|m| {
                doc.err(
                    "scf.davidson_dim",
                    m,
                    "use 2 to 8 (QE's default is 2, planewave's 3)",
                )
            })?;
        }
        scf.seed = self.seed.unwrap_or(scf.seed);
        scf.start = self.start.map_or(scf.start, |s| s.0);
        Ok(scf)
    }
}

/// What follows the SCF: forces, and the stress except for hybrids (refused there).
fn properties(
    doc: &Doc,
    table: Option<&PropertiesTable>,
    hybrid: bool,
) -> Result<Properties, InputError> {
    let forces = table.and_then(|p| p.forces).unwrap_or(true);
    let stress = table.and_then(|p| p.stress).unwrap_or(!hybrid);
    if hybrid && stress {
        return Err(doc.err(
            "properties.stress",
            "the stress is not implemented for hybrid functionals",
            "remove stress = true from [properties]",
        ));
    }
    Ok(Properties { forces, stress })
}

impl Relax {
    fn read(&self, doc: &Doc) -> Result<RelaxSpec, InputError> {
        let mut relax = RelaxSpec::default();
        relax.cell = self.cell.unwrap_or(false);
        relax.pressure = self
            .pressure
            .map_or(relax.pressure, |p| p * GPA_IN_HA_PER_BOHR3);
        let tolerance = |key: &str, v: Option<f64>, scale: f64, hint: &str, default: f64| match v {
            None => Ok(default),
            Some(t) if t > 0.0 => Ok(t * scale),
            Some(t) => Err(doc.err(
                key,
                format!("the tolerance must be positive, got {t}"),
                hint,
            )),
        };
        relax.force_tolerance = tolerance(
            "relax.force_tolerance",
            self.force_tolerance,
            1.0,
            "give it in Ha/bohr, e.g. 5e-4",
            relax.force_tolerance,
        )?;
        relax.stress_tolerance = tolerance(
            "relax.stress_tolerance",
            self.stress_tolerance,
            GPA_IN_HA_PER_BOHR3,
            "give it in GPa, e.g. 0.05",
            relax.stress_tolerance,
        )?;
        if let Some(v) = self.max_steps {
            relax.max_steps = doc.count("relax.max_steps", v)?;
            if relax.max_steps == 0 {
                return Err(doc.err(
                    "relax.max_steps",
                    "max_steps must be at least 1",
                    "use e.g. max_steps = 50",
                ));
            }
        }
        relax.algorithm = self.algorithm.map_or(relax.algorithm, |a| a.0);
        Ok(relax)
    }
}

impl Parallel {
    fn read(&self, doc: &Doc) -> Result<ParallelSpec, InputError> {
        let groups = |key: &str, v: Option<i64>| -> Result<Option<usize>, InputError> {
            v.map(|n| match doc.count(key, n)? {
                0 => Err(doc.err(
                    key,
                    "a group count must be at least 1",
                    "leave it out to let planewave choose",
                )),
                n => Ok(n),
            })
            .transpose()
        };
        let alltoallv = self.alltoallv.as_deref().map(str::trim);
        if let Some(Err(e)) =
            alltoallv.map(str::parse::<planewave_comm::strategies::AlltoallvChoice>)
        {
            let hint = "use native, p2p, node, pairwise, nonblocking or auto";
            return Err(doc.err("parallel.alltoallv", e.to_string(), hint));
        }
        let kpoint_sum = self.kpoint_sum.as_deref().map(str::trim);
        if let Some(Err(e)) = kpoint_sum.map(str::parse::<planewave_comm::sum::SumChoice>) {
            return Err(doc.err(
                "parallel.kpoint_sum",
                e.to_string(),
                "use allreduce, reduce_scatter or auto",
            ));
        }
        Ok(ParallelSpec {
            kpoint_groups: groups("parallel.kpoint_groups", self.kpoint_groups)?,
            band_groups: groups("parallel.band_groups", self.band_groups)?,
            band_consecutive: self.rank_order.is_some_and(|o| o.0 .0),
            alltoallv: alltoallv.map(str::to_string),
            kpoint_sum: kpoint_sum.map(str::to_string),
            device: self.device.map_or(crate::Device::Cpu, |d| d.0),
        })
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::Kpoints;

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
                kerker_q0: Some(0.0)
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
    fn bands_path_is_read_and_checked() {
        let with = |t: &str| format!("{SI_TOML}\n[bands]\n{t}\n");
        let s = p(&with("nbands = 12\npath = [ { label = \"G\", k = [0, 0, 0], points = 4 },\n  { label = \"X\", k = [0.5, 0, 0.5] } ]")).unwrap();
        let b = s.bands.expect("a path");
        assert_eq!((b.nbands, b.kpoints().kpoints.len()), (Some(12), 5));
        assert!(p(SI_TOML).unwrap().bands.is_none());
        fails(
            &with("path = [ { label = \"G\", k = [0, 0, 0] } ]"),
            "bands.path",
            "two vertices",
        );
        fails(
            &with("path = [ { lable = \"G\", k = [0, 0, 0] } ]"),
            "bands.path[].lable",
            "unknown key",
        );
        fails(
            &with("nbands = -1\npath = []"),
            "bands.nbands",
            "non-negative",
        );
        // No path: the crystal's own, with its density of points and the bands asked for.
        let b = p(&with("nbands = 12\ndensity = 25"))
            .unwrap()
            .bands
            .unwrap();
        assert_eq!(
            (b.path.len(), b.nbands, b.density),
            (0, Some(12), Some(25.0))
        );
        fails(&with("density = -3"), "bands.density", "positive");
        fails(
            &with("density = 20\npath = [ { label = \"G\", k = [0, 0, 0] }, { label = \"X\", k = [0.5, 0, 0.5] } ]"),
            "bands.density",
            "a path is given",
        );
    }

    #[test]
    fn dos_table_is_read_and_checked() {
        let with = |t: &str| format!("{SI_TOML}\n[dos]\n{t}\n");
        let d = p(&with(
            "kpoints = { grid = [8, 8, 8] }\nwidth = \"0.02 Ry\"\nstep = 0.001",
        ))
        .unwrap()
        .dos;
        assert_eq!(
            d.kpoints,
            Some(Kpoints::MonkhorstPack {
                grid: [8; 3],
                shift: [false; 3]
            })
        );
        assert_eq!((d.width, d.step, d.nbands), (0.01, 0.001, None));
        assert_eq!(p(SI_TOML).unwrap().dos, crate::DosSpec::default());
        let t = p(&with(
            "method = \"tetrahedra\"\nkpoints = { grid = [6, 6, 6] }",
        ))
        .unwrap();
        assert_eq!(t.dos.method, crate::DosMethod::Tetrahedra);
        let opt = p(&with(
            "method = \"tetrahedra_opt\"\nkpoints = { grid = [6, 6, 6] }",
        ))
        .unwrap();
        assert_eq!(opt.dos.method, crate::DosMethod::TetrahedraOpt);
        for (name, method) in [
            ("methfessel-paxton", crate::DosMethod::MethfesselPaxton),
            ("cold", crate::DosMethod::MarzariVanderbilt),
            ("fermi-dirac", crate::DosMethod::FermiDirac),
        ] {
            let d = p(&with(&format!("method = \"{name}\""))).unwrap().dos;
            assert_eq!(d.method, method, "{name}");
        }
        fails(
            &with("method = \"smearing\""),
            "dos.method",
            "unknown DOS method",
        );
        let gamma = with("method = \"tetrahedra\"\nkpoints = \"gamma\"");
        fails(&gamma, "dos.kpoints", "at least 2 points");
        fails(&with("width = -1"), "dos.width", "positive");
        fails(&with("widht = 1"), "dos.widht", "unknown key");
        fails(
            &with("kpoints = { gird = [8, 8, 8] }"),
            "dos.kpoints.gird",
            "in dos.kpoints",
        );
    }

    #[test]
    fn output_table_is_read_and_checked() {
        let with = |t: &str| format!("{SI_TOML}\n[output]\n{t}\n");
        let o = p(&with("density = [\"cube\", \"XSF\", \"chgcar\"]"))
            .unwrap()
            .output;
        assert_eq!(
            o.density,
            [GridFormat::Cube, GridFormat::Xsf, GridFormat::Chgcar]
        );
        assert!(p(SI_TOML).unwrap().output.density.is_empty());
        let e = fails(
            &with("density = [\"cub\"]"),
            "output.density",
            "unknown file format `cub`",
        );
        assert_eq!(e.hint.as_deref(), Some("did you mean `cube`?"));
        fails(
            &with("potential = [\"cube\"]"),
            "output.potential",
            "unknown key",
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
