//! The cell of a pw.x input: `ibrav` with celldm(1..6) or A, B, C and the cosines, or
//! `ibrav = 0` with CELL_PARAMETERS {bohr | angstrom | alat}.

use super::{InputError, Reader, System};
use crate::qe_lattice;
use crate::units::BOHR_PER_ANGSTROM;

impl Reader<'_> {
    /// The lattice vectors (rows, bohr) and the lattice parameter alat (bohr).
    pub(super) fn lattice(
        &self,
        sys: &System,
        ibrav: i64,
    ) -> Result<([[f64; 3]; 3], f64), InputError> {
        if let Some(&i) = sys.celldm.keys().find(|i| !(1..=6).contains(*i)) {
            let key = self.indexed("celldm", Some(&i));
            return Err(self.err(&key, "celldm has the indices 1 to 6"));
        }
        let alat = match (sys.celldm.get(&1), sys.a) {
            (Some(_), Some(_)) => return Err(self.err("a", "give either celldm(1) or A, not both")),
            (Some(&x), None) => Some(("celldm(1)", x)),
            (None, Some(x)) => Some(("a", x * BOHR_PER_ANGSTROM)),
            (None, None) => None,
        };
        if let Some((key, _)) = alat.filter(|(_, x)| x.is_nan() || *x <= 0.0) {
            return Err(self.err(key, "the lattice parameter must be positive"));
        }
        let alat = alat.map(|(_, x)| x);
        let shape = shape_keys(sys);
        if ibrav == 0 {
            if let Some((key, _)) = shape.iter().find(|(_, x)| x.is_some()) {
                return Err(self
                    .err(key, format!("`{key}` is not used by ibrav = 0"))
                    .with_hint("the cell comes from CELL_PARAMETERS; remove the key, or choose the ibrav that reads it"));
            }
            return self.cell_parameters(alat);
        }
        let ibrav_err = |msg: String| self.err("ibrav", msg);
        if !qe_lattice::known(ibrav) {
            return Err(
                ibrav_err(format!("ibrav = {ibrav} is not a Bravais lattice of pw.x")).with_hint(
                    format!("use one of {} (0: CELL_PARAMETERS)", qe_lattice::SUPPORTED),
                ),
            );
        }
        if let Some(c) = self.doc.card("CELL_PARAMETERS") {
            return Err(self
                .card_err(
                    c,
                    c.line,
                    format!("CELL_PARAMETERS given with ibrav = {ibrav}"),
                )
                .with_hint("use ibrav = 0 with CELL_PARAMETERS, or remove the card"));
        }
        let a = alat.ok_or_else(|| {
            ibrav_err(format!(
                "ibrav = {ibrav} needs celldm(1) (bohr) or A (angstrom)"
            ))
        })?;
        let celldm = self.lattice_parameters(&shape, ibrav, a, sys.a.is_some())?;
        let lattice = qe_lattice::bravais(ibrav, &celldm).map_err(|m| {
            ibrav_err(m).with_hint("see pw.x's INPUT_PW (ibrav) for what each lattice reads")
        })?;
        Ok((lattice, a))
    }

    /// celldm(1..6) of lattice `ibrav` whose parameter `a` (bohr) is known: from celldm(2..6),
    /// or from `B, C, cosAB, cosAC, cosBC` when the lattice was given by `A` (`by_abc`); the
    /// two styles cannot be mixed.
    fn lattice_parameters(
        &self,
        shape: &[(String, Option<f64>); 10],
        ibrav: i64,
        a: f64,
        by_abc: bool,
    ) -> Result<qe_lattice::Celldm, InputError> {
        let (celldm, abc) = shape.split_at(5);
        let (wrong, other) = if by_abc {
            (celldm, "A")
        } else {
            (abc, "celldm(1)")
        };
        if let Some((key, _)) = wrong.iter().find(|(_, x)| x.is_some()) {
            return Err(self
                .err(key, format!("`{key}` cannot be combined with {other}"))
                .with_hint("give the cell either as celldm(1..6) (bohr, ratios, cosines) or as A, B, C (angstrom) and cosAB, cosAC, cosBC"));
        }
        let v: Vec<f64> = shape.iter().map(|(_, x)| x.unwrap_or(0.0)).collect();
        if !by_abc {
            return Ok([a, v[0], v[1], v[2], v[3], v[4]]);
        }
        let ratio = |x: f64| x * BOHR_PER_ANGSTROM / a;
        Ok(qe_lattice::from_abc(
            ibrav,
            a,
            ratio(v[5]),
            ratio(v[6]),
            [v[7], v[8], v[9]],
        ))
    }

    /// The cell of ibrav = 0 from CELL_PARAMETERS {bohr | angstrom | alat}.
    fn cell_parameters(&self, alat: Option<f64>) -> Result<([[f64; 3]; 3], f64), InputError> {
        let hint = "ibrav = 0 needs CELL_PARAMETERS {bohr|angstrom|alat} with 3 rows a1, a2, a3";
        let c = self
            .card("CELL_PARAMETERS", hint)
            .map_err(|e| e.at_line(self.doc.entry("ibrav").map(|e| e.line)))?;
        if c.rows.len() != 3 {
            let msg = format!("CELL_PARAMETERS needs 3 rows, found {}", c.rows.len());
            return Err(self.card_err(c, c.line, msg));
        }
        let mut rows = [[0.0; 3]; 3];
        for (r, (ln, row)) in rows.iter_mut().zip(&c.rows) {
            *r = self.three(c, *ln, row)?;
        }
        let scale = match (c.option.as_str(), alat) {
            ("bohr", _) | ("", None) => Some(1.0),
            ("angstrom", _) => Some(BOHR_PER_ANGSTROM),
            ("alat", _) | ("", Some(_)) => None,
            (other, _) => {
                return Err(self
                    .card_err(c, c.line, format!("unknown CELL_PARAMETERS unit `{other}`"))
                    .with_hint("use bohr, angstrom or alat"))
            }
        };
        let (factor, alat) = match (scale, alat) {
            (Some(_), Some(_)) => {
                let msg = format!("CELL_PARAMETERS {} together with celldm(1)/A: the lattice parameter is given twice", c.option);
                return Err(self
                    .card_err(c, c.line, msg)
                    .with_hint("remove celldm(1)/A, or use CELL_PARAMETERS alat"));
            }
            (Some(s), None) => (s, s * rows[0].iter().map(|x| x * x).sum::<f64>().sqrt()),
            (None, Some(a)) => (a, a),
            (None, None) => {
                let msg = "CELL_PARAMETERS alat needs celldm(1) or A in &system";
                return Err(self.card_err(c, c.line, msg));
            }
        };
        Ok((rows.map(|r| r.map(|x| x * factor)), alat))
    }
}

/// The keys that shape a Bravais lattice besides its parameter: celldm(2..6), then B, C,
/// cosAB, cosAC, cosBC, with their values when given.
fn shape_keys(sys: &System) -> [(String, Option<f64>); 10] {
    let celldm = |i: usize| (format!("celldm({i})"), sys.celldm.get(&i).copied());
    [
        celldm(2),
        celldm(3),
        celldm(4),
        celldm(5),
        celldm(6),
        ("b".into(), sys.b),
        ("c".into(), sys.c),
        ("cosab".into(), sys.cosab),
        ("cosac".into(), sys.cosac),
        ("cosbc".into(), sys.cosbc),
    ]
}
