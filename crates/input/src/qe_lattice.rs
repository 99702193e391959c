//! Quantum ESPRESSO's Bravais lattices (`ibrav` 1 to 14 and the negative variants), from
//! `celldm(1..6)`, exactly as pw.x's INPUT_PW documents the vectors (orientation included:
//! positions in `alat` or Cartesian units depend on it).
//!
//! Contract: [`bravais`] takes celldm in QE's meaning (celldm(1) = a in bohr, (2) = b/a,
//! (3) = c/a, (4..6) cosines as the lattice uses them; [`from_abc`] converts `A, B, C, cosAB,
//! cosAC, cosBC` the way pw.x does) and returns the lattice vectors as rows, in bohr, or a
//! message naming the parameter that is missing or out of range. A celldm the lattice does
//! not use must be zero: a stray value is more likely a mistake than an intention.

/// celldm(1..6) as given (index 0 is celldm(1)).
pub type Celldm = [f64; 6];

/// What each lattice reads, for messages: (ibrav, name, celldm indices used, 1-based).
const LATTICES: &[(i64, &str, &[usize])] = &[
    (1, "simple cubic", &[1]),
    (2, "fcc", &[1]),
    (3, "bcc", &[1]),
    (-3, "bcc (symmetric axes)", &[1]),
    (4, "hexagonal", &[1, 3]),
    (5, "trigonal R (3-fold axis c)", &[1, 4]),
    (-5, "trigonal R (3-fold axis <111>)", &[1, 4]),
    (6, "simple tetragonal", &[1, 3]),
    (7, "body-centred tetragonal", &[1, 3]),
    (8, "simple orthorhombic", &[1, 2, 3]),
    (9, "base-centred orthorhombic (C)", &[1, 2, 3]),
    (
        -9,
        "base-centred orthorhombic (C, alternate axes)",
        &[1, 2, 3],
    ),
    (91, "one-face base-centred orthorhombic (A)", &[1, 2, 3]),
    (10, "face-centred orthorhombic", &[1, 2, 3]),
    (11, "body-centred orthorhombic", &[1, 2, 3]),
    (12, "simple monoclinic (unique axis c)", &[1, 2, 3, 4]),
    (-12, "simple monoclinic (unique axis b)", &[1, 2, 3, 5]),
    (13, "base-centred monoclinic (unique axis c)", &[1, 2, 3, 4]),
    (
        -13,
        "base-centred monoclinic (unique axis b)",
        &[1, 2, 3, 5],
    ),
    (14, "triclinic", &[1, 2, 3, 4, 5, 6]),
];

/// The ibrav values [`bravais`] knows, for hints.
pub const SUPPORTED: &str = "0-14, -3, -5, -9, 91, -12, -13";

/// Whether `ibrav` is one of the lattices [`bravais`] builds (0 is the user's cell, not here).
pub fn known(ibrav: i64) -> bool {
    LATTICES.iter().any(|l| l.0 == ibrav)
}

/// celldm from `A, B, C` (angstrom, already converted to bohr by the caller: `a_bohr`, and the
/// ratios b/a, c/a) and the cosines, placed as pw.x's `abc2celldm` places them for `ibrav`.
pub fn from_abc(ibrav: i64, a_bohr: f64, b_over_a: f64, c_over_a: f64, cos: [f64; 3]) -> Celldm {
    let [cos_ab, cos_ac, cos_bc] = cos;
    let (c4, c5, c6) = match ibrav {
        14 => (cos_bc, cos_ac, cos_ab),
        -12 | -13 => (0.0, cos_ac, 0.0),
        5 | -5 | 12 | 13 => (cos_ab, 0.0, 0.0),
        _ => (0.0, 0.0, 0.0),
    };
    [a_bohr, b_over_a, c_over_a, c4, c5, c6]
}

/// Lattice vectors (rows, bohr) of QE lattice `ibrav` with parameters `celldm`.
pub fn bravais(ibrav: i64, celldm: &Celldm) -> Result<[[f64; 3]; 3], String> {
    let Some(&(_, name, used)) = LATTICES.iter().find(|l| l.0 == ibrav) else {
        return Err(format!(
            "ibrav = {ibrav} is not a Bravais lattice of pw.x (supported: {SUPPORTED})"
        ));
    };
    for (i, &x) in celldm.iter().enumerate() {
        if x != 0.0 && !used.contains(&(i + 1)) {
            return Err(format!(
                "celldm({}) is not used by ibrav = {ibrav} ({name}: celldm{}); leave it out",
                i + 1,
                list(used)
            ));
        }
    }
    let a = positive(celldm, 1, ibrav)?;
    let p = Params { a, celldm, ibrav };
    Ok(match ibrav {
        1 => [[a, 0.0, 0.0], [0.0, a, 0.0], [0.0, 0.0, a]],
        2 => scale(
            a / 2.0,
            [[-1.0, 0.0, 1.0], [0.0, 1.0, 1.0], [-1.0, 1.0, 0.0]],
        ),
        3 => scale(
            a / 2.0,
            [[1.0, 1.0, 1.0], [-1.0, 1.0, 1.0], [-1.0, -1.0, 1.0]],
        ),
        -3 => scale(
            a / 2.0,
            [[-1.0, 1.0, 1.0], [1.0, -1.0, 1.0], [1.0, 1.0, -1.0]],
        ),
        4 => {
            let c = p.c()?;
            let s3 = 3f64.sqrt() / 2.0;
            [[a, 0.0, 0.0], [-a / 2.0, a * s3, 0.0], [0.0, 0.0, c]]
        }
        5 | -5 => trigonal(ibrav, a, p.cosine(4, -0.5)?),
        6 => [[a, 0.0, 0.0], [0.0, a, 0.0], [0.0, 0.0, p.c()?]],
        7 => {
            let r = p.c()? / a;
            scale(a / 2.0, [[1.0, -1.0, r], [1.0, 1.0, r], [-1.0, -1.0, r]])
        }
        8 => [[a, 0.0, 0.0], [0.0, p.b()?, 0.0], [0.0, 0.0, p.c()?]],
        9 | -9 => {
            let (h, k, c) = (a / 2.0, p.b()? / 2.0, p.c()?);
            let s = if ibrav == 9 { 1.0 } else { -1.0 };
            [[h, s * k, 0.0], [-s * h, k, 0.0], [0.0, 0.0, c]]
        }
        91 => {
            let (k, l) = (p.b()? / 2.0, p.c()? / 2.0);
            [[a, 0.0, 0.0], [0.0, k, -l], [0.0, k, l]]
        }
        10 => {
            let (h, k, l) = (a / 2.0, p.b()? / 2.0, p.c()? / 2.0);
            [[h, 0.0, l], [h, k, 0.0], [0.0, k, l]]
        }
        11 => {
            let (h, k, l) = (a / 2.0, p.b()? / 2.0, p.c()? / 2.0);
            [[h, k, l], [-h, k, l], [-h, -k, l]]
        }
        12 | 13 => {
            let (b, c, cg) = (p.b()?, p.c()?, p.cosine(4, -1.0)?);
            let v2 = [b * cg, b * (1.0 - cg * cg).sqrt(), 0.0];
            if ibrav == 12 {
                [[a, 0.0, 0.0], v2, [0.0, 0.0, c]]
            } else {
                [[a / 2.0, 0.0, -c / 2.0], v2, [a / 2.0, 0.0, c / 2.0]]
            }
        }
        -12 | -13 => {
            let (b, c, cb) = (p.b()?, p.c()?, p.cosine(5, -1.0)?);
            let v3 = [c * cb, 0.0, c * (1.0 - cb * cb).sqrt()];
            if ibrav == -12 {
                [[a, 0.0, 0.0], [0.0, b, 0.0], v3]
            } else {
                [[a / 2.0, b / 2.0, 0.0], [-a / 2.0, b / 2.0, 0.0], v3]
            }
        }
        _ => triclinic(&p)?,
    })
}

/// The parameters of one lattice, read with checks.
struct Params<'a> {
    a: f64,
    celldm: &'a Celldm,
    ibrav: i64,
}

impl Params<'_> {
    /// b (bohr) from celldm(2) = b/a.
    fn b(&self) -> Result<f64, String> {
        Ok(self.a * positive(self.celldm, 2, self.ibrav)?)
    }

    /// c (bohr) from celldm(3) = c/a.
    fn c(&self) -> Result<f64, String> {
        Ok(self.a * positive(self.celldm, 3, self.ibrav)?)
    }

    /// celldm(i), a cosine strictly between `low` and 1.
    fn cosine(&self, i: usize, low: f64) -> Result<f64, String> {
        let x = self.celldm[i - 1];
        if x.is_finite() && x > low && x < 1.0 {
            Ok(x)
        } else {
            Err(format!(
                "ibrav = {} needs celldm({i}) (a cosine) strictly between {low} and 1, found {x}",
                self.ibrav
            ))
        }
    }
}

/// celldm(i) > 0.
fn positive(celldm: &Celldm, i: usize, ibrav: i64) -> Result<f64, String> {
    let x = celldm[i - 1];
    if x.is_finite() && x > 0.0 {
        Ok(x)
    } else if i == 1 {
        Err(format!(
            "ibrav = {ibrav} needs celldm(1) (bohr) or A (angstrom), positive"
        ))
    } else {
        Err(format!(
            "ibrav = {ibrav} needs celldm({i}) = {}/a (or {}), positive; found {x}",
            ["", "b", "c"][i - 1],
            ["", "B", "C"][i - 1]
        ))
    }
}

/// Trigonal R with cos(gamma) = c between the vectors of length a: 3-fold axis along z
/// (ibrav 5) or along <111> (ibrav -5).
fn trigonal(ibrav: i64, a: f64, c: f64) -> [[f64; 3]; 3] {
    let tx = ((1.0 - c) / 2.0).sqrt();
    let ty = ((1.0 - c) / 6.0).sqrt();
    let tz = ((1.0 + 2.0 * c) / 3.0).sqrt();
    if ibrav == 5 {
        return scale(a, [[tx, -ty, tz], [0.0, 2.0 * ty, tz], [-tx, -ty, tz]]);
    }
    let u = tz - 2.0 * 2f64.sqrt() * ty;
    let v = tz + 2f64.sqrt() * ty;
    scale(a / 3f64.sqrt(), [[u, v, v], [v, u, v], [v, v, u]])
}

/// Triclinic: celldm(4) = cos(alpha) (b, c), (5) = cos(beta) (a, c), (6) = cos(gamma) (a, b).
fn triclinic(p: &Params<'_>) -> Result<[[f64; 3]; 3], String> {
    let (a, b, c) = (p.a, p.b()?, p.c()?);
    let (ca, cb, cg) = (p.cosine(4, -1.0)?, p.cosine(5, -1.0)?, p.cosine(6, -1.0)?);
    let sg = (1.0 - cg * cg).sqrt();
    let vol2 = 1.0 + 2.0 * ca * cb * cg - ca * ca - cb * cb - cg * cg;
    if vol2 <= 0.0 {
        return Err(format!(
            "ibrav = 14: the angles from celldm(4..6) = {ca}, {cb}, {cg} make no cell (zero or negative volume)"
        ));
    }
    Ok([
        [a, 0.0, 0.0],
        [b * cg, b * sg, 0.0],
        [c * cb, c * (ca - cb * cg) / sg, c * vol2.sqrt() / sg],
    ])
}

fn scale(s: f64, m: [[f64; 3]; 3]) -> [[f64; 3]; 3] {
    m.map(|r| r.map(|x| s * x))
}

fn list(used: &[usize]) -> String {
    let names: Vec<String> = used.iter().map(|i| format!("({i})")).collect();
    names.join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn volume(m: &[[f64; 3]; 3]) -> f64 {
        let [a, b, c] = m;
        a[0] * (b[1] * c[2] - b[2] * c[1]) - a[1] * (b[0] * c[2] - b[2] * c[0])
            + a[2] * (b[0] * c[1] - b[1] * c[0])
    }

    #[test]
    fn volumes_match_the_conventional_cells() {
        let (a, ba, ca) = (7.0, 1.3, 1.7);
        let cases: [(i64, Celldm, f64); 8] = [
            (2, [a, 0.0, 0.0, 0.0, 0.0, 0.0], a.powi(3) / 4.0),
            (-3, [a, 0.0, 0.0, 0.0, 0.0, 0.0], a.powi(3) / 2.0),
            (
                4,
                [a, 0.0, ca, 0.0, 0.0, 0.0],
                a * a * a * ca * 3f64.sqrt() / 2.0,
            ),
            (7, [a, 0.0, ca, 0.0, 0.0, 0.0], a.powi(3) * ca / 2.0),
            (91, [a, ba, ca, 0.0, 0.0, 0.0], a.powi(3) * ba * ca / 2.0),
            (10, [a, ba, ca, 0.0, 0.0, 0.0], a.powi(3) * ba * ca / 4.0),
            (11, [a, ba, ca, 0.0, 0.0, 0.0], a.powi(3) * ba * ca / 2.0),
            (
                -13,
                [a, ba, ca, 0.0, 0.3, 0.0],
                a.powi(3) * ba * ca * 0.91f64.sqrt() / 2.0,
            ),
        ];
        for (ibrav, celldm, v) in cases {
            let m = bravais(ibrav, &celldm).unwrap();
            assert!((volume(&m).abs() - v).abs() < 1e-10 * v, "ibrav {ibrav}");
        }
    }

    #[test]
    fn trigonal_cells_have_the_asked_angle_in_both_orientations() {
        for ibrav in [5, -5] {
            let m = bravais(ibrav, &[6.0, 0.0, 0.0, 0.2, 0.0, 0.0]).unwrap();
            for (i, j) in [(0, 1), (1, 2), (0, 2)] {
                let d: f64 = (0..3).map(|k| m[i][k] * m[j][k]).sum();
                assert!((d / 36.0 - 0.2).abs() < 1e-12, "ibrav {ibrav}");
            }
        }
    }

    #[test]
    fn missing_unused_and_impossible_parameters_are_named() {
        let e = bravais(4, &[6.0, 0.0, 0.0, 0.0, 0.0, 0.0]).unwrap_err();
        assert!(e.contains("celldm(3)"), "{e}");
        let e = bravais(4, &[6.0, 0.0, 1.6, 0.5, 0.0, 0.0]).unwrap_err();
        assert!(e.contains("celldm(4) is not used by ibrav = 4"), "{e}");
        let e = bravais(14, &[6.0, 1.0, 1.0, 0.9, -0.9, 0.9]).unwrap_err();
        assert!(e.contains("no cell"), "{e}");
        let e = bravais(15, &[6.0, 0.0, 0.0, 0.0, 0.0, 0.0]).unwrap_err();
        assert!(e.contains("not a Bravais lattice"), "{e}");
    }

    #[test]
    fn abc_cosines_land_where_pw_x_puts_them() {
        let c = from_abc(14, 5.0, 1.1, 1.2, [0.1, 0.2, 0.3]);
        assert_eq!(c, [5.0, 1.1, 1.2, 0.3, 0.2, 0.1]);
        assert_eq!(from_abc(-12, 5.0, 1.1, 1.2, [0.1, 0.2, 0.3])[4], 0.2);
        assert_eq!(from_abc(12, 5.0, 1.1, 1.2, [0.1, 0.2, 0.3])[3], 0.1);
    }
}
