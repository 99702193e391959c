//! VASP POSCAR reader (VASP 5 format: the species line is required).
//!
//! Layout: comment; scale (one number: positive = multiplier, negative = target
//! cell volume in A^3; or three positive per-axis multipliers); three lattice
//! rows in A; species names; counts; optional `Selective dynamics`;
//! `Direct` or `Cartesian` (first letter D, or C/K); one position per atom
//! (selective-dynamics flags after the coordinates are ignored). Cartesian
//! positions are in A and scaled like the lattice.

use std::path::Path;

use super::units::BOHR_PER_ANGSTROM;
use super::validate::{cart_to_frac, det3, is_singular};
use super::{AtomSpec, InputError};

/// A structure read from a POSCAR, in bohr and fractional coordinates.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Poscar {
    /// Rows a1, a2, a3 in bohr.
    pub lattice: [[f64; 3]; 3],
    /// Atoms with fractional coordinates.
    pub atoms: Vec<AtomSpec>,
    /// 1-based line of each atom in the POSCAR.
    pub atom_lines: Vec<usize>,
}

fn perr(file: &Path, line: usize, msg: impl Into<String>) -> InputError {
    InputError::new(file, msg)
        .at_line(Some(line))
        .with_key("POSCAR")
}

fn parse_floats(
    file: &Path,
    line_no: usize,
    line: &str,
    n: usize,
    what: &str,
) -> Result<Vec<f64>, InputError> {
    let toks: Vec<&str> = line.split_whitespace().collect();
    if toks.len() < n {
        return Err(perr(
            file,
            line_no,
            format!(
                "expected {n} numbers for the {what}, found `{}`",
                line.trim()
            ),
        ));
    }
    toks[..n]
        .iter()
        .map(|t| {
            t.parse::<f64>()
                .ok()
                .filter(|x| x.is_finite())
                .ok_or_else(|| {
                    perr(
                        file,
                        line_no,
                        format!("`{t}` is not a number (in the {what})"),
                    )
                })
        })
        .collect()
}

/// Parses POSCAR text; `file` is used in messages.
pub(crate) fn parse_poscar(text: &str, file: &Path) -> Result<Poscar, InputError> {
    // (1-based line number, content), blank lines skipped.
    let lines: Vec<(usize, &str)> = text
        .lines()
        .enumerate()
        .map(|(i, l)| (i + 1, l))
        .filter(|(_, l)| !l.trim().is_empty())
        .collect();
    let mut it = lines.iter().copied();
    let eof = |what: &str| {
        InputError::new(file, format!("POSCAR ends before the {what}")).with_key("POSCAR")
    };
    let _comment = it.next().ok_or_else(|| eof("comment line"))?;

    let (sl, sline) = it.next().ok_or_else(|| eof("scale factor"))?;
    let scale_toks: Vec<f64> = sline
        .split_whitespace()
        .take_while(|t| !t.starts_with('!') && !t.starts_with('#'))
        .map(|t| t.parse::<f64>().ok().filter(|x| x.is_finite()))
        .collect::<Option<Vec<f64>>>()
        .ok_or_else(|| {
            perr(
                file,
                sl,
                format!("bad scale factor line `{}`", sline.trim()),
            )
        })?;

    let mut rows = [[0.0; 3]; 3];
    for row in rows.iter_mut() {
        let (ln, l) = it.next().ok_or_else(|| eof("lattice vectors"))?;
        let v = parse_floats(file, ln, l, 3, "lattice vector")?;
        row.copy_from_slice(&v);
    }
    let raw_det = det3(&rows);
    let factors: [f64; 3] = match scale_toks.as_slice() {
        [s] if *s > 0.0 => [*s; 3],
        [s] if *s < 0.0 => {
            if is_singular(&rows) {
                return Err(perr(
                    file,
                    sl,
                    "negative scale (volume) given but the lattice is singular",
                ));
            }
            let f = (s.abs() / raw_det.abs()).cbrt();
            [f; 3]
        }
        [a, b, c] if *a > 0.0 && *b > 0.0 && *c > 0.0 => [*a, *b, *c],
        _ => {
            return Err(perr(
                file,
                sl,
                format!(
                    "bad scale factor `{}`: one non-zero number or three positive numbers",
                    sline.trim()
                ),
            ))
        }
    };
    for row in rows.iter_mut() {
        for k in 0..3 {
            row[k] *= factors[k] * BOHR_PER_ANGSTROM;
        }
    }

    let (nl, names_line) = it.next().ok_or_else(|| eof("species names"))?;
    let names: Vec<String> = names_line
        .split_whitespace()
        .map(|s| s.split('/').next().unwrap_or(s).to_string())
        .collect();
    if names.iter().any(|n| n.parse::<f64>().is_ok()) {
        return Err(perr(
            file,
            nl,
            "this looks like a VASP 4 POSCAR (no species-name line)",
        )
        .with_hint("add a line with the species names (e.g. `Si`) above the line of counts"));
    }
    let (cl, counts_line) = it.next().ok_or_else(|| eof("atom counts"))?;
    let counts: Vec<usize> = counts_line
        .split_whitespace()
        .map(|t| t.parse::<usize>().ok())
        .collect::<Option<Vec<usize>>>()
        .ok_or_else(|| {
            perr(
                file,
                cl,
                format!("bad atom counts `{}`", counts_line.trim()),
            )
        })?;
    if counts.len() != names.len() {
        return Err(perr(
            file,
            cl,
            format!("{} species names but {} counts", names.len(), counts.len()),
        ));
    }
    let mut mode = it.next().ok_or_else(|| eof("Direct/Cartesian line"))?;
    if mode.1.trim_start().starts_with(['s', 'S']) {
        mode = it.next().ok_or_else(|| eof("Direct/Cartesian line"))?;
    }
    let cartesian = match mode.1.trim_start().chars().next() {
        Some('d' | 'D') => false,
        Some('c' | 'C' | 'k' | 'K') => true,
        _ => {
            return Err(perr(
                file,
                mode.0,
                format!(
                    "expected `Direct` or `Cartesian`, found `{}`",
                    mode.1.trim()
                ),
            ))
        }
    };
    if is_singular(&rows) {
        return Err(perr(
            file,
            3,
            "the lattice vectors are (nearly) linearly dependent",
        ));
    }
    let total = counts
        .iter()
        .try_fold(0usize, |a, &c| a.checked_add(c))
        .ok_or_else(|| perr(file, cl, "absurd atom counts"))?;
    let mut atoms = Vec::with_capacity(total.min(1 << 20));
    let mut atom_lines = Vec::new();
    for (name, &count) in names.iter().zip(&counts) {
        for _ in 0..count {
            let (ln, l) = it.next().ok_or_else(|| {
                eof(&format!(
                    "position of atom {} (expected {total})",
                    atoms.len() + 1
                ))
            })?;
            let v = parse_floats(file, ln, l, 3, "atom position")?;
            let p = [v[0], v[1], v[2]];
            let frac = if cartesian {
                let c = [
                    p[0] * factors[0] * BOHR_PER_ANGSTROM,
                    p[1] * factors[1] * BOHR_PER_ANGSTROM,
                    p[2] * factors[2] * BOHR_PER_ANGSTROM,
                ];
                cart_to_frac(&rows, c)
            } else {
                p
            };
            atoms.push(AtomSpec {
                species: name.clone(),
                frac,
            });
            atom_lines.push(ln);
        }
    }
    Ok(Poscar {
        lattice: rows,
        atoms,
        atom_lines,
    })
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    pub(crate) const POSCAR_DIRECT: &str = "Si2 diamond\n1.0\n0.0 2.715 2.715\n2.715 0.0 2.715\n2.715 2.715 0.0\nSi\n2\nDirect\n0.0 0.0 0.0\n0.25 0.25 0.25\n";
    pub(crate) const POSCAR_CART: &str = "NaCl-ish\n  2.0\n 2.0 0.0 0.0\n 0.0 2.0 0.0\n 0.0 0.0 2.0\n Na Cl\n 1 1\nSelective dynamics\nCartesian\n 0.0 0.0 0.0 T T T\n 1.0 1.0 1.0 F F F\n";

    #[test]
    fn direct() {
        let p = parse_poscar(POSCAR_DIRECT, Path::new("POSCAR")).unwrap();
        let a = 2.715 * BOHR_PER_ANGSTROM;
        assert!((p.lattice[0][1] - a).abs() < 1e-12);
        assert_eq!(p.atoms.len(), 2);
        assert_eq!(p.atoms[1].frac, [0.25, 0.25, 0.25]);
        assert_eq!(p.atom_lines, vec![9, 10]);
    }

    #[test]
    fn cartesian_and_selective() {
        let p = parse_poscar(POSCAR_CART, Path::new("POSCAR")).unwrap();
        assert!((p.lattice[2][2] - 4.0 * BOHR_PER_ANGSTROM).abs() < 1e-12);
        assert_eq!(p.atoms[0].species, "Na");
        assert_eq!(p.atoms[1].species, "Cl");
        for x in p.atoms[1].frac {
            assert!((x - 0.5).abs() < 1e-12, "{x}");
        }
    }

    #[test]
    fn negative_scale_is_volume() {
        let t = POSCAR_DIRECT.replacen("1.0", "-40.0", 1);
        let p = parse_poscar(&t, Path::new("POSCAR")).unwrap();
        let vol = det3(&p.lattice).abs() / BOHR_PER_ANGSTROM.powi(3);
        assert!((vol - 40.0).abs() < 1e-9, "{vol}");
    }

    #[test]
    fn errors() {
        let vasp4 = "x\n1.0\n1 0 0\n0 1 0\n0 0 1\n2\nDirect\n0 0 0\n0.5 0.5 0.5\n";
        let e = parse_poscar(vasp4, Path::new("P")).unwrap_err();
        assert!(e.message.contains("VASP 4"), "{e}");
        assert_eq!(e.line, Some(6));
        let short = "x\n1.0\n1 0 0\n0 1 0\n0 0 1\nSi\n2\nDirect\n0 0 0\n";
        assert!(parse_poscar(short, Path::new("P"))
            .unwrap_err()
            .message
            .contains("ends before"));
        let bad = "x\n1.0\n1 0 0\n0 1 0\n0 0 1\nSi\n1\nWhatever\n0 0 0\n";
        assert!(parse_poscar(bad, Path::new("P"))
            .unwrap_err()
            .message
            .contains("Direct"));
        for garbage in ["", "\n\n", "a\nb\nc", "x\n0\n", "x\n1\n1 2\n"] {
            assert!(parse_poscar(garbage, Path::new("P")).is_err());
        }
    }
}
