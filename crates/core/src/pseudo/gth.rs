//! Analytic Goedecker-Teter-Hutter / Hartwigsen-Goedecker-Hutter / Krack
//! pseudopotentials: parsers for the CP2K block format and the ABINIT
//! `pspcod = 10` format, and the exact (closed form, no radial grid) Fourier
//! transforms of the local part and of the projectors.
//!
//! Contract:
//! * Both parsers return the same [`GthParsed`] for the same parameters (the
//!   k_ij spin-orbit rows of the ABINIT format are read and discarded).
//! * V_loc(r) = -Z/r erf(r/(sqrt2 rloc)) + exp(-x^2/2) [C1 + C2 x^2 + C3 x^4 + C4 x^6],
//!   x = r/rloc.
//! * p_i^l(r) = sqrt2 r^(l+2(i-1)) exp(-r^2/(2 r_l^2)) / (r_l^(l+(4i-1)/2) sqrt(Gamma(l+(4i-1)/2))).
//! * Fourier convention: f(q) = 4 pi int r^2 f(r) j_l(q r) dr (for the local part
//!   this equals int d^3r V(r) e^{-i q.r}).

#[cfg(test)]
use super::radial::sph_bessel;
use super::{element_symbol, normalize_symbol, parse_f64, PseudoError};
use std::f64::consts::PI;

/// One angular-momentum channel of a GTH potential.
#[derive(Debug, Clone, PartialEq)]
pub struct GthChannel {
    /// Projector radius r_l (bohr).
    pub r: f64,
    /// Symmetric coupling matrix h^l_ij (Hartree), nproj x nproj.
    pub h: Vec<Vec<f64>>,
}

/// Analytic GTH parameters.
#[derive(Debug, Clone, PartialEq)]
pub struct GthData {
    pub rloc: f64,
    /// C1..C4 (missing ones are zero).
    pub c: [f64; 4],
    /// Channels l = 0, 1, ... (a channel may have zero projectors).
    pub channels: Vec<GthChannel>,
}

/// Result of parsing either GTH text format.
#[derive(Debug, Clone, PartialEq)]
pub struct GthParsed {
    pub symbol: String,
    pub z_valence: f64,
    pub functional_hint: Option<String>,
    pub data: GthData,
}

/// Token reader over "records" that may continue over several lines; text after
/// the last number a record needs is a comment (discarded by `end_record`), a
/// non-number where a number is needed is an error.
struct Reader<'a> {
    path: &'a str,
    lines: Vec<(usize, Vec<&'a str>)>,
    li: usize,
    ti: usize,
}

impl<'a> Reader<'a> {
    fn new(text: &'a str, path: &'a str, skip_first_line: bool) -> Self {
        let lines = text
            .lines()
            .enumerate()
            .skip(usize::from(skip_first_line))
            .map(|(i, l)| (i + 1, l.split_whitespace().collect::<Vec<_>>()))
            .filter(|(_, t)| !t.is_empty() && !t[0].starts_with('#'))
            .collect();
        Reader {
            path,
            lines,
            li: 0,
            ti: 0,
        }
    }

    fn err(&self, line: Option<usize>, msg: String) -> PseudoError {
        PseudoError::new(self.path, line, msg)
    }

    fn current_line(&self) -> Option<usize> {
        self.lines
            .get(self.li)
            .or_else(|| self.lines.last())
            .map(|l| l.0)
    }

    /// Next whole line as tokens (starts a new record).
    fn next_line(&mut self, what: &str) -> Result<(usize, Vec<&'a str>), PseudoError> {
        self.end_record();
        match self.lines.get(self.li) {
            Some(l) => {
                self.li += 1;
                Ok(l.clone())
            }
            None => Err(self.err(
                self.current_line(),
                format!("unexpected end of file while reading {what}"),
            )),
        }
    }

    fn take_f64(&mut self, what: &str) -> Result<f64, PseudoError> {
        loop {
            let Some((lineno, toks)) = self.lines.get(self.li) else {
                return Err(self.err(
                    self.current_line(),
                    format!("unexpected end of file while reading {what}"),
                ));
            };
            if self.ti >= toks.len() {
                self.li += 1;
                self.ti = 0;
                continue;
            }
            let tok = toks[self.ti];
            match parse_f64(tok) {
                Some(v) if v.is_finite() => {
                    self.ti += 1;
                    return Ok(v);
                }
                Some(_) => {
                    return Err(self.err(
                        Some(*lineno),
                        format!("non-finite value '{tok}' for {what}"),
                    ))
                }
                None => {
                    return Err(self.err(
                        Some(*lineno),
                        format!("expected a number for {what}, found '{tok}'"),
                    ))
                }
            }
        }
    }

    fn take_count(&mut self, what: &str, max: usize) -> Result<usize, PseudoError> {
        let line = self.lines.get(self.li).map(|l| l.0);
        let v = self.take_f64(what)?;
        if v < 0.0 || v.fract() != 0.0 || v > max as f64 {
            return Err(self.err(
                line.or(self.current_line()),
                format!("invalid {what} '{v}' (expected an integer in 0..={max})"),
            ));
        }
        Ok(v as usize)
    }

    /// Discard the rest of the current line.
    fn end_record(&mut self) {
        if self.ti > 0 {
            self.li += 1;
            self.ti = 0;
        }
    }
}

const MAX_NPROJ: usize = 3;
const MAX_CHANNELS: usize = 4;

/// Reads "r_l nproj h11 h12 .." and the rest of the h upper triangle. CP2K layout: the numbers
/// may run on over lines. ABINIT layout (`abinit`): each row of h starts a new line, and for
/// l > 0 the rows of the spin-orbit k matrix follow (skipped), each on its own line; text after
/// a row's numbers is ignored (labels such as `rp, nprj, hp`), as ABINIT and QE read it.
#[allow(clippy::needless_range_loop)]
fn read_channel(r: &mut Reader, l: usize, abinit: bool) -> Result<GthChannel, PseudoError> {
    r.end_record();
    let line = r.current_line();
    let rl = r.take_f64(&format!("r_l of channel l={l}"))?;
    let n = r.take_count(&format!("number of projectors of channel l={l}"), MAX_NPROJ)?;
    if n > 0 && rl <= 0.0 {
        return Err(r.err(
            line,
            format!("r_l of channel l={l} must be positive, got {rl}"),
        ));
    }
    let mut h = vec![vec![0.0; n]; n];
    for i in 0..n {
        if abinit && i > 0 {
            r.end_record();
        }
        for j in i..n {
            let v = r.take_f64(&format!("h^{l}_{}{}", i + 1, j + 1))?;
            h[i][j] = v;
            h[j][i] = v;
        }
    }
    if abinit && l > 0 {
        for i in 0..n {
            r.end_record();
            for j in i..n {
                r.take_f64(&format!("k^{l}_{}{} (spin-orbit)", i + 1, j + 1))?;
            }
        }
    }
    r.end_record();
    Ok(GthChannel { r: rl, h })
}

fn read_local(r: &mut Reader) -> Result<(f64, [f64; 4]), PseudoError> {
    r.end_record();
    let line = r.current_line();
    let rloc = r.take_f64("rloc")?;
    if rloc <= 0.0 {
        return Err(r.err(line, format!("rloc must be positive, got {rloc}")));
    }
    let nloc = r.take_count("nloc (number of local coefficients)", 4)?;
    let mut c = [0.0; 4];
    for (k, ck) in c.iter_mut().enumerate().take(nloc) {
        *ck = r.take_f64(&format!("local coefficient C{}", k + 1))?;
    }
    r.end_record();
    Ok((rloc, c))
}

/// Parse a CP2K `GTH_POTENTIALS` block (only the first block of the text).
pub fn parse_cp2k(text: &str, path: &str) -> Result<GthParsed, PseudoError> {
    let mut r = Reader::new(text, path, false);
    let (line1, names) = r.next_line("element line")?;
    let symbol = normalize_symbol(names[0]).ok_or_else(|| {
        r.err(
            Some(line1),
            format!("unknown element symbol '{}'", names[0]),
        )
    })?;
    let (line2, counts) = r.next_line("electron counts per l")?;
    let mut z = 0.0;
    for tok in &counts {
        match parse_f64(tok) {
            Some(v) if v.is_finite() && v >= 0.0 && v.fract() == 0.0 => z += v,
            _ => {
                return Err(r.err(
                    Some(line2),
                    format!("invalid electron count '{tok}' (expected non-negative integers)"),
                ))
            }
        }
    }
    if z <= 0.0 {
        return Err(r.err(Some(line2), "valence charge must be positive".into()));
    }
    let (rloc, c) = read_local(&mut r)?;
    r.end_record();
    let nnl = r.take_count("number of nonlocal channels", MAX_CHANNELS)?;
    r.end_record();
    let mut channels = Vec::with_capacity(nnl);
    for l in 0..nnl {
        channels.push(read_channel(&mut r, l, false)?);
    }
    let upper = names[1..].join(" ").to_ascii_uppercase();
    let functional_hint = if upper.contains("PBE") {
        Some("PBE".to_string())
    } else if upper.contains("PADE") || upper.contains("LDA") {
        Some("LDA".to_string())
    } else if upper.contains("BLYP") {
        Some("BLYP".to_string())
    } else {
        names.get(1).map(|s| s.to_string())
    };
    Ok(GthParsed {
        symbol,
        z_valence: z,
        functional_hint,
        data: GthData { rloc, c, channels },
    })
}

/// Parse an ABINIT `pspcod = 10` (HGH/GTH) file.
pub fn parse_abinit10(text: &str, path: &str) -> Result<GthParsed, PseudoError> {
    if text.lines().next().is_none() {
        return Err(PseudoError::new(path, None, "empty file".into()));
    }
    let mut r = Reader::new(text, path, true);
    r.end_record();
    let line2 = r.current_line();
    let zatom = r.take_f64("zatom")?;
    let zion = r.take_f64("zion")?;
    r.end_record();
    let symbol = if zatom.fract() == 0.0 && zatom >= 1.0 {
        element_symbol(zatom as usize)
    } else {
        None
    }
    .ok_or_else(|| r.err(line2, format!("invalid atomic number zatom = {zatom}")))?;
    if zion <= 0.0 || zion > zatom {
        return Err(r.err(line2, format!("invalid valence charge zion = {zion}")));
    }
    let line3 = r.current_line();
    let pspcod = r.take_f64("pspcod")?;
    if pspcod != 10.0 {
        return Err(r.err(
            line3,
            format!("pspcod = {pspcod}, only pspcod 10 (HGH/GTH) is supported"),
        ));
    }
    let pspxc = r.take_f64("pspxc")?;
    r.end_record();
    let (rloc, c) = read_local(&mut r)?;
    let nnl = r.take_count("number of nonlocal channels (nnonloc)", MAX_CHANNELS)?;
    r.end_record();
    let mut channels = Vec::with_capacity(nnl);
    for l in 0..nnl {
        channels.push(read_channel(&mut r, l, true)?);
    }
    let functional_hint = match pspxc as i64 {
        1..=9 | -1012 | -1009 | -20 => Some("LDA".to_string()),
        11 | -101130 | -130101 => Some("PBE".to_string()),
        other => Some(format!("pspxc={other}")),
    };
    Ok(GthParsed {
        symbol: symbol.to_string(),
        z_valence: zion,
        functional_hint,
        data: GthData { rloc, c, channels },
    })
}

/// Gamma(m + 1/2) for integer m >= 0.
fn gamma_half(m: usize) -> f64 {
    // Gamma(1/2) = sqrt(pi), Gamma(x+1) = x Gamma(x)
    let mut g = PI.sqrt();
    for k in 0..m {
        g *= k as f64 + 0.5;
    }
    g
}

/// Exact 4 pi int_0^inf r^(2+l+2n) exp(-r^2/(2 s^2)) j_l(q r) dr.
///
/// With a = 1/(2 s^2), u = 1/a: int r^(l+2) e^{-a r^2} j_l(qr) dr
/// = sqrt(pi) q^l / 2^(l+2) u^(l+3/2) e^{-q^2 u/4}; each extra r^2 is -d/da = u^2 d/du,
/// which gives u^(l+3/2+n) e^{-x^2/2} sum_j c_j (x^2/2)^j with x = q s and the
/// recurrence c'_j = (l + 3/2 + m + j) c_j - c_{j-1}.
pub fn gaussian_radial_ft(l: usize, n: usize, s: f64, q: f64) -> f64 {
    let sh = l as f64 + 1.5;
    let mut c = vec![0.0; n + 1];
    c[0] = 1.0;
    for m in 0..n {
        for j in (0..=m + 1).rev() {
            let prev = if j > 0 { c[j - 1] } else { 0.0 };
            c[j] = (sh + (m + j) as f64) * c[j] - prev;
        }
    }
    let u = 2.0 * s * s;
    let y = 0.5 * (q * s) * (q * s);
    let mut poly = 0.0;
    for &cj in c.iter().rev() {
        poly = poly * y + cj;
    }
    4.0 * PI * PI.sqrt() / 2f64.powi(l as i32 + 2)
        * q.powi(l as i32)
        * u.powf(sh + n as f64)
        * (-y).exp()
        * poly
}

impl GthData {
    /// Normalisation constant of p_i^l (i is 1-based).
    fn proj_norm(rl: f64, l: usize, i: usize) -> f64 {
        // l + (4i-1)/2 = (l + 2i - 1) + 1/2
        let m = l + 2 * i - 1;
        2f64.sqrt() / (rl.powf(m as f64 + 0.5) * gamma_half(m).sqrt())
    }

    /// Real-space projector p_i^l(r) (i 1-based).
    #[cfg_attr(not(test), allow(dead_code))]
    pub fn projector_real(&self, l: usize, i: usize, r: f64) -> f64 {
        let rl = self.channels[l].r;
        Self::proj_norm(rl, l, i)
            * r.powi((l + 2 * (i - 1)) as i32)
            * (-r * r / (2.0 * rl * rl)).exp()
    }

    /// 4 pi int r^2 p_i^l(r) j_l(qr) dr, exact (i 1-based).
    pub fn projector_fourier(&self, l: usize, i: usize, q: f64) -> f64 {
        let rl = self.channels[l].r;
        Self::proj_norm(rl, l, i) * gaussian_radial_ft(l, i - 1, rl, q)
    }

    /// Short-range part of V_loc(r): the Gaussian-polynomial term.
    #[cfg_attr(not(test), allow(dead_code))]
    pub fn local_short_real(&self, r: f64) -> f64 {
        let x2 = (r / self.rloc).powi(2);
        (-0.5 * x2).exp() * (self.c[0] + x2 * (self.c[1] + x2 * (self.c[2] + x2 * self.c[3])))
    }

    /// Fourier transform of the short-range part (exact), valid at q = 0.
    pub fn local_short_fourier(&self, q: f64) -> f64 {
        (0..4)
            .filter(|&k| self.c[k] != 0.0)
            .map(|k| {
                self.c[k] * self.rloc.powi(-2 * k as i32) * gaussian_radial_ft(0, k, self.rloc, q)
            })
            .sum()
    }

    /// v(q) for q > 0, including -4 pi Z exp(-(q rloc)^2/2) / q^2.
    pub fn local_fourier(&self, z: f64, q: f64) -> f64 {
        let x = q * self.rloc;
        -4.0 * PI * z * (-0.5 * x * x).exp() / (q * q) + self.local_short_fourier(q)
    }

    /// int d^3r (V_loc + Z/r) = 2 pi Z rloc^2 + short-range part at q = 0.
    pub fn local_g0(&self, z: f64) -> f64 {
        2.0 * PI * z * self.rloc * self.rloc + self.local_short_fourier(0.0)
    }
}

/// Numerical j_l transform used only by tests (kept here so tests can reach it).
#[cfg(test)]
pub fn numeric_radial_ft(f: impl Fn(f64) -> f64, l: usize, q: f64, rmax: f64, n: usize) -> f64 {
    // composite Simpson on a uniform grid (n even)
    let h = rmax / n as f64;
    let mut s = 0.0;
    for k in 0..=n {
        let r = k as f64 * h;
        let w = if k == 0 || k == n {
            1.0
        } else if k % 2 == 1 {
            4.0
        } else {
            2.0
        };
        s += w * r * r * f(r) * sph_bessel(l, q * r);
    }
    4.0 * PI * s * h / 3.0
}
