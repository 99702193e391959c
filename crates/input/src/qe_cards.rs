//! The cards of a pw.x input: ATOMIC_SPECIES, ATOMIC_POSITIONS and K_POINTS (CELL_PARAMETERS
//! is read with the lattice, in `qe_cell.rs`).

use std::path::Path;

use super::{AtomSpec, InputError, Kpoints, Reader, SpeciesSpec};
use crate::bands::{BandsSpec, PathVertex};
use crate::qe_syntax::{number, Card};
use crate::units::BOHR_PER_ANGSTROM;
use crate::validate::{cart_to_frac, is_singular, Lines};

impl Reader<'_> {
    /// An error about card `card`, at line `ln`.
    pub(super) fn card_err(&self, card: &Card, ln: usize, msg: impl Into<String>) -> InputError {
        InputError::new(self.file, msg)
            .with_key(card.name.clone())
            .at_line(Some(ln))
    }

    /// Card `name`, which the input must have.
    pub(super) fn card(&self, name: &str, hint: &str) -> Result<&Card, InputError> {
        self.doc.card(name).ok_or_else(|| {
            InputError::new(self.file, format!("missing card {name}"))
                .with_key(name)
                .with_hint(hint)
        })
    }

    /// ATOMIC_SPECIES: one `label mass pseudo_file` row per species.
    pub(super) fn species(
        &self,
        ntyp: usize,
        pseudo_dir: &Path,
        lines: &mut Lines,
    ) -> Result<Vec<SpeciesSpec>, InputError> {
        let card = self.card(
            "ATOMIC_SPECIES",
            "one line per species: label mass pseudo_file",
        )?;
        if card.rows.len() != ntyp {
            let msg = format!("{} species lines but ntyp = {ntyp}", card.rows.len());
            return Err(self.card_err(card, card.line, msg));
        }
        let mut species = Vec::new();
        for (ln, row) in &card.rows {
            let toks: Vec<&str> = row.split_whitespace().collect();
            let (label, mass, file) = match toks[..] {
                [label, mass, file, ..] => (label, mass, file),
                _ => {
                    return Err(self.card_err(
                        card,
                        *ln,
                        format!("expected `label mass pseudo_file`, found `{row}`"),
                    ))
                }
            };
            if number(mass).is_none() {
                return Err(self.card_err(card, *ln, format!("mass `{mass}` is not a number")));
            }
            lines.species.entry(label.to_string()).or_insert(*ln);
            species.push(SpeciesSpec {
                symbol: label.to_string(),
                pseudo: pseudo_dir.join(file),
            });
        }
        Ok(species)
    }

    /// ATOMIC_POSITIONS {crystal | bohr | angstrom | alat}: `label x y z`, optionally followed by
    /// three 0/1 flags.
    pub(super) fn atoms(
        &self,
        nat: usize,
        lattice: &[[f64; 3]; 3],
        alat: f64,
        lines: &mut Lines,
    ) -> Result<Vec<AtomSpec>, InputError> {
        let card = self.card("ATOMIC_POSITIONS", "one line per atom: label x y z")?;
        if card.rows.len() != nat {
            let msg = format!("{} atom lines but nat = {nat}", card.rows.len());
            return Err(self
                .card_err(card, card.line, msg)
                .with_hint("nat in &system must equal the number of ATOMIC_POSITIONS lines"));
        }
        let scale = match card.option.as_str() {
            "crystal" => None,
            "bohr" => Some(1.0),
            "angstrom" => Some(BOHR_PER_ANGSTROM),
            "alat" | "" => Some(alat),
            other => {
                return Err(self
                    .card_err(
                        card,
                        card.line,
                        format!("ATOMIC_POSITIONS unit `{other}` is not supported"),
                    )
                    .with_hint("use crystal, bohr, angstrom or alat"))
            }
        };
        if scale.is_some() && is_singular(lattice) {
            return Err(InputError::new(
                self.file,
                "the lattice vectors are (nearly) linearly dependent",
            )
            .with_key("CELL_PARAMETERS")
            .at_line(lines.keys.get("CELL_PARAMETERS").copied()));
        }
        let mut atoms = Vec::with_capacity(nat);
        for (ln, row) in &card.rows {
            let (label, rest) = row.split_once(char::is_whitespace).unwrap_or((row, ""));
            let rest = rest.split_whitespace().collect::<Vec<_>>().join(" ");
            let p = self.three(card, *ln, &rest)?;
            let extra: Vec<&str> = rest.split_whitespace().skip(3).collect();
            if !(extra.is_empty()
                || (extra.len() == 3 && extra.iter().all(|t| *t == "0" || *t == "1")))
            {
                return Err(self
                    .card_err(
                        card,
                        *ln,
                        format!("unexpected `{}` after the coordinates", extra.join(" ")),
                    )
                    .with_hint("expected `label x y z` optionally followed by three 0/1 flags"));
            }
            let frac = match scale {
                None => p,
                Some(s) => cart_to_frac(lattice, p.map(|x| x * s)),
            };
            atoms.push(AtomSpec {
                species: label.to_string(),
                frac,
            });
            lines.atoms.push(Some(*ln));
        }
        Ok(atoms)
    }

    /// K_POINTS automatic | gamma | crystal | tpiba (the default).
    pub(super) fn kpoints(
        &self,
        lattice: &[[f64; 3]; 3],
        alat: f64,
    ) -> Result<Kpoints, InputError> {
        let hint = "e.g. `K_POINTS automatic` then `4 4 4 0 0 0`";
        let kc = self.card("K_POINTS", hint)?;
        match kc.option.as_str() {
            "gamma" => Ok(Kpoints::Gamma),
            "automatic" => self.monkhorst_pack(kc),
            "crystal" | "tpiba" | "" => {
                let rows = self.kpoint_rows(kc, lattice, alat)?;
                let list = rows.into_iter().map(|(_, k, w)| (k, w)).collect();
                crate::kpoints::normalise_weights(list).map_err(|m| self.card_err(kc, kc.line, m))
            }
            "crystal_b" | "tpiba_b" => Err(self
                .card_err(
                    kc,
                    kc.line,
                    format!("K_POINTS {} is a band path, for calculation = 'bands'", kc.option),
                )
                .with_hint("set calculation = 'bands' (after the SCF of the same prefix and outdir), or use `planewave bands` on the SCF's input")),
            other => Err(self
                .card_err(kc, kc.line, format!("K_POINTS {other} is not supported"))
                .with_hint("use automatic, gamma, crystal, tpiba, or crystal_b / tpiba_b for a band path")),
        }
    }

    /// K_POINTS crystal_b | tpiba_b: the vertices of a band path, each row's weight the points
    /// from it to the next, labelled by the row's comment (`! X`) when it has one; None for
    /// the other kinds of K_POINTS. `text` is the input, for the comments.
    pub(super) fn band_path(
        &self,
        lattice: &[[f64; 3]; 3],
        alat: f64,
        text: &str,
    ) -> Result<Option<BandsSpec>, InputError> {
        let Some(kc) = self.doc.card("K_POINTS") else {
            return Ok(None);
        };
        if !matches!(kc.option.as_str(), "crystal_b" | "tpiba_b") {
            return Ok(None);
        }
        let lines: Vec<&str> = text.lines().collect();
        let label = |ln: usize| {
            let raw = lines.get(ln.wrapping_sub(1)).copied().unwrap_or_default();
            raw.split_once(['!', '#'])
                .map_or("", |(_, c)| c.trim())
                .to_string()
        };
        let mut path = Vec::new();
        for (ln, k, w) in self.kpoint_rows(kc, lattice, alat)? {
            if w.fract() != 0.0 || w < 0.0 {
                let msg = format!("a band path's weight is the number of points to the next vertex, a whole number; got {w}");
                return Err(self.card_err(kc, ln, msg));
            }
            path.push(PathVertex {
                label: label(ln),
                k,
                points: w as usize,
            });
        }
        BandsSpec::checked(path, None)
            .map(Some)
            .map_err(|r| self.card_err(kc, kc.line, r.message).with_hint(r.hint))
    }

    /// The `kx ky kz weight` rows of a K_POINTS list after its count, in fractional
    /// coordinates (tpiba: units of 2 pi / alat), with their lines.
    fn kpoint_rows(
        &self,
        kc: &Card,
        lattice: &[[f64; 3]; 3],
        alat: f64,
    ) -> Result<Vec<(usize, [f64; 3], f64)>, InputError> {
        let err = |ln: usize, msg: String| self.card_err(kc, ln, msg);
        let Some((ln, first)) = kc.rows.first() else {
            return Err(err(
                kc.line,
                "K_POINTS list needs the number of points".into(),
            ));
        };
        let nks = first.trim().parse::<usize>().map_err(|_| {
            err(
                *ln,
                format!("expected the number of k-points, found `{first}`"),
            )
        })?;
        if kc.rows.len() - 1 != nks {
            return Err(err(
                *ln,
                format!("{} k-point lines but {nks} announced", kc.rows.len() - 1),
            ));
        }
        let mut list = Vec::with_capacity(nks);
        for (ln, row) in &kc.rows[1..] {
            let nums: Option<Vec<f64>> = row.split_whitespace().map(number).collect();
            let Some(&[x, y, z, w]) = nums.as_deref() else {
                return Err(err(
                    *ln,
                    format!("expected `kx ky kz weight`, found `{row}`"),
                ));
            };
            // tpiba: k = (2 pi / alat) t, and its fractional coordinates are t . a_i / alat.
            let frac = match kc.option.as_str() {
                "crystal" | "crystal_b" => [x, y, z],
                _ => lattice.map(|a| (a[0] * x + a[1] * y + a[2] * z) / alat),
            };
            list.push((*ln, frac, w));
        }
        Ok(list)
    }

    /// K_POINTS automatic: `nk1 nk2 nk3 sk1 sk2 sk3`.
    fn monkhorst_pack(&self, kc: &Card) -> Result<Kpoints, InputError> {
        let err = |ln: usize, msg: String| self.card_err(kc, ln, msg);
        let Some((ln, row)) = kc.rows.first() else {
            return Err(err(
                kc.line,
                "K_POINTS automatic needs a line `nk1 nk2 nk3 sk1 sk2 sk3`".into(),
            ));
        };
        let nums: Option<Vec<i64>> = row.split_whitespace().map(|t| t.parse().ok()).collect();
        let Some(&[n1, n2, n3, s1, s2, s3]) = nums.as_deref() else {
            return Err(err(
                *ln,
                format!("expected 6 integers `nk1 nk2 nk3 sk1 sk2 sk3`, found `{row}`"),
            ));
        };
        if let Some((ln, _)) = kc.rows.get(1) {
            return Err(err(*ln, "K_POINTS automatic takes a single line".into()));
        }
        let mut grid = [0usize; 3];
        for (g, n) in grid.iter_mut().zip([n1, n2, n3]) {
            *g = usize::try_from(n).map_err(|_| err(*ln, format!("negative k-grid entry {n}")))?;
        }
        let mut shift = [false; 3];
        for (s, n) in shift.iter_mut().zip([s1, s2, s3]) {
            *s = match n {
                0 | 1 => n == 1,
                _ => return Err(err(*ln, format!("k-grid shift must be 0 or 1, got {n}"))),
            };
        }
        Ok(Kpoints::MonkhorstPack { grid, shift })
    }

    /// Three numbers at the start of `row`.
    pub(super) fn three(&self, card: &Card, ln: usize, row: &str) -> Result<[f64; 3], InputError> {
        let bad = || {
            self.card_err(
                card,
                ln,
                format!("expected 3 numbers, found `{}`", row.trim()),
            )
        };
        let nums: Vec<Option<f64>> = row.split_whitespace().take(3).map(number).collect();
        match nums[..] {
            [Some(x), Some(y), Some(z)] => Ok([x, y, z]),
            _ => Err(bad()),
        }
    }
}
