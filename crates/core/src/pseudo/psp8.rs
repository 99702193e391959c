//! ABINIT's psp8 format (pspcod 8, ONCVPSP's output; the PseudoDojo norm-conserving tables),
//! read into the same [`UpfParsed`] as a UPF file, so both go through one set of form factors.
//!
//! Layout (Hartree units throughout): a title; `zatom zion pspd`; `pspcod pspxc lmax lloc mmax
//! r2well`; `rchrg fchrg qchrg`; `nproj(0..=4)`; `extension_switch`; then for l = 0..=lmax
//! either the local potential (l = lloc: a line `l`, then mmax lines `i r V(r)`) or, when
//! nproj(l) > 0, a line `l ekb(1..nproj)` and mmax lines `i r (r beta_1) .. (r beta_n)`; the
//! local potential after them when lloc > lmax; with fchrg > 0 the model core charge
//! (mmax lines `i r 4 pi rho_c` and four derivatives); with extension_switch 1 the valence
//! density (mmax lines `i r 4 pi rho_v` and derivatives). Anything after that (ONCVPSP echoes
//! its input) is ignored. Fortran `D` exponents are read.
//!
//! Contract: a file this reader accepts gives the same numbers as the UPF that ONCVPSP writes
//! for the same pseudopotential (projectors r beta as given, D_ii = ekb, rho_core = column /
//! 4 pi, 4 pi r^2 rho_atom = r^2 column); spin-orbit files (extension_switch 2 or 3), other
//! pspcod values, a non-linear grid, a missing or short block and a non-number are errors
//! naming the line.

use super::upf::{UpfBeta, UpfKind, UpfParsed};
use super::{element_symbol, PseudoError};

/// The lines of the file with their 1-based numbers, read one after the other.
struct Reader<'a> {
    lines: std::iter::Enumerate<std::str::Lines<'a>>,
    path: &'a str,
    last: usize,
}

impl<'a> Reader<'a> {
    fn err(&self, line: usize, msg: impl Into<String>) -> PseudoError {
        PseudoError::new(self.path, Some(line), msg.into())
    }

    /// The numbers at the start of the next line (text after them is ignored), at least `n`.
    fn numbers(&mut self, n: usize, what: &str) -> Result<(usize, Vec<f64>), PseudoError> {
        let Some((i, line)) = self.lines.next() else {
            return Err(self.err(
                self.last + 1,
                format!("the file ends where {what} was expected"),
            ));
        };
        self.last = i + 1;
        let values: Vec<f64> = line
            .split_whitespace()
            .map_while(|t| t.replace(['D', 'd'], "E").parse::<f64>().ok())
            .filter(|x| x.is_finite())
            .collect();
        if values.len() < n {
            return Err(self.err(
                i + 1,
                format!("expected {n} numbers for {what}, found `{}`", line.trim()),
            ));
        }
        Ok((i + 1, values))
    }

    /// A non-negative integer read from a number.
    fn count(&self, line: usize, x: f64, what: &str) -> Result<usize, PseudoError> {
        if x >= 0.0 && x.fract() == 0.0 && x < 1e7 {
            Ok(x as usize)
        } else {
            Err(self.err(
                line,
                format!("{what} must be a non-negative integer, found {x}"),
            ))
        }
    }

    /// `mmax` lines `i r v_1 .. v_ncol`: the radii and the columns.
    fn block(
        &mut self,
        mmax: usize,
        ncol: usize,
        what: &str,
    ) -> Result<(Vec<f64>, Vec<Vec<f64>>), PseudoError> {
        let mut r = Vec::with_capacity(mmax);
        let mut cols = vec![Vec::with_capacity(mmax); ncol];
        for _ in 0..mmax {
            let (_, v) = self.numbers(2 + ncol, what)?;
            r.push(v[1]);
            for (c, x) in cols.iter_mut().zip(&v[2..]) {
                c.push(*x);
            }
        }
        Ok((r, cols))
    }
}

/// Parse a psp8 file (`path` for messages).
pub fn parse(text: &str, path: &str) -> Result<UpfParsed, PseudoError> {
    let mut rd = Reader {
        lines: text.lines().enumerate(),
        path,
        last: 0,
    };
    if rd.lines.next().is_none() {
        return Err(rd.err(1, "the file is empty"));
    }
    rd.last = 1;
    let (ln, v) = rd.numbers(2, "zatom zion pspd")?;
    let (zatom, zion) = (v[0], v[1]);
    let symbol = element_symbol(zatom.round() as usize)
        .map(str::to_string)
        .ok_or_else(|| rd.err(ln, format!("zatom = {zatom} is not an element")))?;
    if !(zion > 0.0 && zion <= zatom) {
        return Err(rd.err(ln, format!("zion = {zion} must be in (0, zatom]")));
    }
    let (ln, v) = rd.numbers(5, "pspcod pspxc lmax lloc mmax")?;
    if v[0] != 8.0 {
        return Err(rd.err(ln, format!("pspcod = {} is not 8 (psp8)", v[0])));
    }
    let pspxc = v[1];
    let lmax = rd.count(ln, v[2], "lmax")?;
    let lloc = rd.count(ln, v[3], "lloc")?;
    let mmax = rd.count(ln, v[4], "mmax")?;
    if lmax > 3 || mmax < 2 {
        return Err(rd.err(
            ln,
            format!(
                "lmax = {lmax} (at most 3 supported) or mmax = {mmax} (at least 2) out of range"
            ),
        ));
    }
    let (_, v) = rd.numbers(2, "rchrg fchrg qchrg")?;
    let fchrg = v[1];
    let (ln, v) = rd.numbers(lmax + 1, "nproj(l)")?;
    let nproj: Vec<usize> = (0..=lmax)
        .map(|l| rd.count(ln, v[l], "nproj"))
        .collect::<Result<_, _>>()?;
    let (ln, v) = rd.numbers(1, "extension_switch")?;
    let extension = v[0];
    if extension == 2.0 || extension == 3.0 {
        return Err(rd.err(
            ln,
            "spin-orbit psp8 (extension_switch 2 or 3) is not supported: use the scalar-relativistic (sr) table",
        ));
    }
    let mut vloc = None;
    let mut betas = Vec::new();
    let mut ekb = Vec::new();
    let mut grid = None;
    for l in 0..=lmax.max(lloc) {
        if l == lloc {
            rd.numbers(1, "the local potential's l")?;
            let (r, mut c) = rd.block(mmax, 1, "i r V_loc(r)")?;
            vloc = Some(c.remove(0));
            grid = Some(r);
        } else if l <= lmax && nproj[l] > 0 {
            let (_, head) =
                rd.numbers(1 + nproj[l], &format!("l = {l} and its {} ekb", nproj[l]))?;
            ekb.extend_from_slice(&head[1..=nproj[l]]);
            let (r, cols) = rd.block(mmax, nproj[l], &format!("i r and the l = {l} projectors"))?;
            for rbeta in cols {
                let kbeta = rbeta.iter().rposition(|&x| x != 0.0).map_or(0, |i| i + 1);
                betas.push(UpfBeta { l, kbeta, rbeta });
            }
            grid = Some(r);
        }
    }
    let (Some(vloc), Some(r)) = (vloc, grid) else {
        return Err(rd.err(rd.last, "no local potential block"));
    };
    let nlcc = if fchrg > 0.0 {
        let (_, c) = rd.block(mmax, 1, "i r and the model core charge")?;
        Some(
            c[0].iter()
                .map(|x| x / (4.0 * std::f64::consts::PI))
                .collect(),
        )
    } else {
        None
    };
    let rho_atom = if extension == 1.0 {
        let (_, c) = rd.block(mmax, 1, "i r and the valence density")?;
        Some(c[0].iter().zip(&r).map(|(x, r)| x * r * r).collect())
    } else {
        None
    };
    let dr = r[1] - r[0];
    if r[0] != 0.0
        || dr <= 0.0
        || r.windows(2)
            .any(|w| ((w[1] - w[0]) - dr).abs() > 1e-9 * dr.max(1.0))
    {
        return Err(PseudoError::new(
            path,
            None,
            "the radial grid is not linear from r = 0 (psp8 grids are)".into(),
        ));
    }
    let n = betas.len();
    let dij = (0..n)
        .map(|i| (0..n).map(|j| if i == j { ekb[i] } else { 0.0 }).collect())
        .collect();
    let functional = match pspxc as i64 {
        2 | 3 | -1009 | -1 => Some("PZ"),
        7 | -1012 => Some("PW"),
        11 | -101130 => Some("PBE"),
        _ => None,
    };
    Ok(UpfParsed {
        paw: None,
        kind: UpfKind::NormConserving,
        augmentation: None,
        symbol,
        z_valence: zion,
        lmax: lmax as i32,
        functional: functional.map(str::to_string),
        rab: vec![dr; r.len()],
        r,
        vloc,
        betas,
        dij,
        nlcc,
        rho_atom,
        chi: Vec::new(),
    })
}
