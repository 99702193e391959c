//! Parsers for norm-conserving pseudopotentials in the Unified Pseudopotential
//! Format, version 1 (`<PP_HEADER>` free-format lines) and version 2
//! (`<UPF version="2.0.1">`, XML-like with attributes).
//!
//! Contract: the result [`UpfParsed`] is in Hartree atomic units (the file's
//! Rydberg quantities V_loc and D_ij are divided by 2; beta functions are
//! unit-free and kept as r*beta(r)). Every array is checked for its length and
//! for finite numbers; truncated or garbled files give a [`PseudoError`] with the
//! path and the line, never a panic. Spin-orbit files are rejected.
//!
//! Ultrasoft and PAW files (UPF v2) are read with their augmentation charges
//! ([`UpfAugmentation`]: `PP_Q` and the `PP_QIJL` / `PP_QIJ` functions, unit-free);
//! their kind is in [`UpfParsed::kind`]. PAW files add their partial waves, all-electron core
//! and occupations ([`UpfPaw`]: `PP_FULL_WFC` and `PP_PAW`; `PP_AE_VLOC` is not read, the
//! one-centre terms do not need it). UPF v1 reads norm-conserving files only.

use super::{normalize_symbol, parse_f64, PseudoError};

/// One projector as stored in the file.
#[derive(Debug, Clone, PartialEq)]
pub struct UpfBeta {
    pub l: usize,
    /// cutoff_radius_index (number of points used by QE), <= mesh.
    pub kbeta: usize,
    /// r * beta(r) on the full mesh (zero-padded).
    pub rbeta: Vec<f64>,
}

/// The kind of pseudopotential a UPF file holds (its header's `pseudo_type`, or the
/// `is_ultrasoft` / `is_paw` flags).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UpfKind {
    /// `NC` or `SL`.
    NormConserving,
    /// `US` or `USPP`.
    Ultrasoft,
    /// `PAW`.
    Paw,
}

impl UpfKind {
    /// The kind of `pseudo_type` (upper case), the header's flags overriding it as in QE
    /// (`is_paw` makes PAW, `is_ultrasoft` at least ultrasoft). None for another type.
    fn of(pseudo_type: &str, is_ultrasoft: bool, is_paw: bool) -> Option<Self> {
        let kind = match pseudo_type {
            "NC" | "SL" => UpfKind::NormConserving,
            "US" | "USPP" => UpfKind::Ultrasoft,
            "PAW" => UpfKind::Paw,
            _ => return None,
        };
        Some(if is_paw {
            UpfKind::Paw
        } else if is_ultrasoft && kind == UpfKind::NormConserving {
            UpfKind::Ultrasoft
        } else {
            kind
        })
    }
}

/// One augmentation function of `PP_AUGMENTATION`: r^2 Q_ij(r) (of angular momentum `l` when
/// the file has `q_with_l`), unit-free.
#[derive(Debug, Clone, PartialEq)]
pub struct QFunction {
    /// 0-based projector indices, `i <= j`.
    pub i: usize,
    pub j: usize,
    /// The angular momentum of a `PP_QIJL` function; None for `PP_QIJ` (one function for
    /// every l).
    pub l: Option<usize>,
    /// r^2 Q_ij(r) as in the file on the full mesh (zero-padded; for PAW zero beyond the
    /// augmentation sphere's `cutoff_r_index`, as QE sets it).
    pub r2q: Vec<f64>,
}

/// The augmentation charges of an ultrasoft / PAW file (`PP_AUGMENTATION`).
#[derive(Debug, Clone, PartialEq)]
pub struct UpfAugmentation {
    /// Whether the file gives one function per l (`PP_QIJL`) or one for all l (`PP_QIJ`).
    pub q_with_l: bool,
    /// Number of angular momenta of the Q functions (QE's `nqlc`: l = 0..nqlc-1 are used).
    pub nqlc: usize,
    /// `PP_Q`: q_ij = int Q_ij(r) d^3r, nbeta x nbeta (a charge, no unit conversion).
    pub q: Vec<Vec<f64>>,
    /// Every needed function, i <= j (and, with `q_with_l`, l from |l_i - l_j| to
    /// l_i + l_j in steps of 2), in file order.
    pub qfunc: Vec<QFunction>,
    /// Number of mesh points the Q functions are integrated over (QE's `kkbeta`): the largest
    /// `cutoff_radius_index` of the betas, for PAW at least the augmentation `cutoff_r_index`.
    pub kkbeta: usize,
}

/// The PAW data of a UPF v2 file (`PP_FULL_WFC` and `PP_PAW`), on the file's mesh.
#[derive(Debug, Clone, PartialEq)]
pub struct UpfPaw {
    /// r φ_i(r): the all-electron partial wave of each beta (`PP_AEWFC.i`), full mesh.
    pub ae_wfc: Vec<Vec<f64>>,
    /// r φ̃_i(r): the pseudo partial wave of each beta (`PP_PSWFC.i`), full mesh.
    pub ps_wfc: Vec<Vec<f64>>,
    /// The all-electron core density ρ_c(r) (`PP_AE_NLCC`, not times 4π r²).
    pub ae_core: Vec<f64>,
    /// Electrons in each partial wave in the atom (`PP_OCCUPATIONS`).
    pub occupations: Vec<f64>,
    /// The core's energy (Ha), `core_energy` of `PP_PAW` (0 when absent).
    pub core_energy: f64,
    /// Mesh points inside the augmentation sphere (`cutoff_r_index` of `PP_AUGMENTATION`).
    pub iraug: usize,
    /// Highest l of the one-centre densities (the header's `l_max_rho`, default 2 l_max).
    pub lmax_rho: usize,
}

/// Parsed UPF content in Hartree units.
#[derive(Debug, Clone, PartialEq)]
pub struct UpfParsed {
    pub kind: UpfKind,
    /// The PAW data of a PAW file read with its augmentation (None otherwise).
    pub paw: Option<UpfPaw>,
    /// The augmentation charges of an ultrasoft / PAW file (None for norm-conserving ones,
    /// and when read by [`parse_v2_without_augmentation`]).
    pub augmentation: Option<UpfAugmentation>,
    pub symbol: String,
    pub z_valence: f64,
    pub lmax: i32,
    pub functional: Option<String>,
    pub r: Vec<f64>,
    pub rab: Vec<f64>,
    /// V_loc(r) in Hartree.
    pub vloc: Vec<f64>,
    pub betas: Vec<UpfBeta>,
    /// D_ij in Hartree.
    pub dij: Vec<Vec<f64>>,
    /// rho_core(r) (not multiplied by 4 pi r^2).
    pub nlcc: Option<Vec<f64>>,
    /// 4 pi r^2 rho_atom(r).
    pub rho_atom: Option<Vec<f64>>,
    /// The pseudo-atomic wavefunctions of `PP_PSWFC` with a non-negative occupation (QE's
    /// `natomwfc`), in file order.
    pub chi: Vec<UpfChi>,
}

/// One pseudo-atomic wavefunction of `PP_PSWFC`.
#[derive(Debug, Clone, PartialEq)]
pub struct UpfChi {
    /// Its label in the file ("3S"), or its l as a letter when the file gives none.
    pub label: String,
    pub l: usize,
    /// Electrons in it in the pseudo-atom.
    pub occupation: f64,
    /// r * chi(r) on the full mesh (zero-padded).
    pub rchi: Vec<f64>,
}

/// Byte offset -> 1-based line number.
struct Lines {
    starts: Vec<usize>,
}

impl Lines {
    fn new(text: &str) -> Self {
        let mut starts = vec![0];
        starts.extend(text.match_indices('\n').map(|(i, _)| i + 1));
        Lines { starts }
    }
    fn line(&self, offset: usize) -> usize {
        match self.starts.binary_search(&offset) {
            Ok(i) => i + 1,
            Err(i) => i,
        }
    }
}

struct Ctx<'a> {
    text: &'a str,
    path: &'a str,
    lines: Lines,
}

/// A located tag `<NAME attrs>body</NAME>` (body empty when self-closing).
struct Tag {
    /// offset of '<'
    start: usize,
    attrs: Vec<(String, String)>,
    body_start: usize,
    body_end: usize,
    /// offset just after the closing tag (or after '/>')
    end: usize,
}

impl Tag {
    fn attr(&self, key: &str) -> Option<&str> {
        self.attrs
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(key))
            .map(|(_, v)| v.trim())
    }
}

fn parse_bool(s: &str) -> Option<bool> {
    let t = s.trim().trim_start_matches('.').to_ascii_lowercase();
    match t.chars().next() {
        Some('t') => Some(true),
        Some('f') => Some(false),
        _ => None,
    }
}

impl<'a> Ctx<'a> {
    fn new(text: &'a str, path: &'a str) -> Self {
        Ctx {
            text,
            path,
            lines: Lines::new(text),
        }
    }

    fn err_at(&self, offset: usize, msg: String) -> PseudoError {
        PseudoError::new(self.path, Some(self.lines.line(offset)), msg)
    }

    fn err_eof(&self, msg: String) -> PseudoError {
        PseudoError::new(self.path, Some(self.lines.line(self.text.len())), msg)
    }

    /// Find the next opening tag `<name` (followed by whitespace, '>' or '/') at or after `from`.
    fn find_open(&self, name: &str, from: usize) -> Option<usize> {
        let pat = format!("<{name}");
        let bytes = self.text.as_bytes();
        let mut pos = from;
        while let Some(i) = self.text.get(pos..)?.find(&pat) {
            let at = pos + i;
            let next = bytes.get(at + pat.len()).copied();
            match next {
                Some(c) if c.is_ascii_whitespace() || c == b'>' || c == b'/' => return Some(at),
                _ => pos = at + pat.len(),
            }
        }
        None
    }

    /// Locate `<name ...>...</name>` starting the search at `from`.
    fn tag(&self, name: &str, from: usize) -> Result<Option<Tag>, PseudoError> {
        let Some(start) = self.find_open(name, from) else {
            return Ok(None);
        };
        let bytes = self.text.as_bytes();
        let mut i = start + 1 + name.len();
        let mut attrs = Vec::new();
        let self_closing;
        // attributes
        loop {
            while i < bytes.len() && bytes[i].is_ascii_whitespace() {
                i += 1;
            }
            if i >= bytes.len() {
                return Err(self.err_at(
                    start,
                    format!("unterminated <{name}> tag (file truncated?)"),
                ));
            }
            if bytes[i] == b'>' {
                self_closing = false;
                i += 1;
                break;
            }
            if bytes[i] == b'/' && bytes.get(i + 1) == Some(&b'>') {
                self_closing = true;
                i += 2;
                break;
            }
            let key_start = i;
            while i < bytes.len()
                && !bytes[i].is_ascii_whitespace()
                && bytes[i] != b'='
                && bytes[i] != b'>'
                && bytes[i] != b'/'
            {
                i += 1;
            }
            let key = &self.text[key_start..i];
            while i < bytes.len() && bytes[i].is_ascii_whitespace() {
                i += 1;
            }
            if key.is_empty() || i >= bytes.len() || bytes[i] != b'=' {
                return Err(self.err_at(
                    key_start.min(bytes.len().saturating_sub(1)),
                    format!("malformed attribute '{key}' in <{name}>"),
                ));
            }
            i += 1;
            while i < bytes.len() && bytes[i].is_ascii_whitespace() {
                i += 1;
            }
            let quote = bytes.get(i).copied();
            let value = match quote {
                Some(q @ (b'"' | b'\'')) => {
                    let vs = i + 1;
                    let Some(len) = self.text[vs..].find(q as char) else {
                        return Err(self
                            .err_at(start, format!("unterminated attribute '{key}' in <{name}>")));
                    };
                    i = vs + len + 1;
                    &self.text[vs..vs + len]
                }
                _ => {
                    let vs = i;
                    while i < bytes.len() && !bytes[i].is_ascii_whitespace() && bytes[i] != b'>' {
                        i += 1;
                    }
                    &self.text[vs..i]
                }
            };
            attrs.push((key.to_string(), value.to_string()));
        }
        if self_closing {
            return Ok(Some(Tag {
                start,
                attrs,
                body_start: i,
                body_end: i,
                end: i,
            }));
        }
        let close = format!("</{name}");
        let Some(rel) = self.text[i..].find(&close) else {
            return Err(self.err_at(
                start,
                format!("<{name}> opened here is never closed (file truncated?)"),
            ));
        };
        let body_end = i + rel;
        let end = self.text[body_end..]
            .find('>')
            .map(|k| body_end + k + 1)
            .unwrap_or(self.text.len());
        Ok(Some(Tag {
            start,
            attrs,
            body_start: i,
            body_end,
            end,
        }))
    }

    fn require(&self, name: &str, from: usize) -> Result<Tag, PseudoError> {
        self.tag(name, from)?
            .ok_or_else(|| self.err_eof(format!("missing <{name}> section")))
    }

    /// All numbers in the body of `tag`.
    fn numbers(&self, tag: &Tag, name: &str) -> Result<Vec<f64>, PseudoError> {
        self.numbers_in(tag.body_start, tag.body_end, name)
    }

    fn numbers_in(&self, from: usize, to: usize, name: &str) -> Result<Vec<f64>, PseudoError> {
        let mut out = Vec::new();
        for (off, tok) in tokens(self.text, from, to) {
            match parse_f64(tok) {
                Some(v) if v.is_finite() => out.push(v),
                Some(_) => {
                    return Err(self.err_at(off, format!("non-finite value '{tok}' in <{name}>")))
                }
                None => {
                    return Err(
                        self.err_at(off, format!("expected a number in <{name}>, found '{tok}'"))
                    )
                }
            }
        }
        Ok(out)
    }

    /// Numbers of a mesh array; the count must match `size` (if given) and be <= mesh
    /// (exactly mesh when `exact`). Zero-padded to mesh.
    fn mesh_array(
        &self,
        tag: &Tag,
        name: &str,
        mesh: usize,
        exact: bool,
    ) -> Result<Vec<f64>, PseudoError> {
        let mut v = self.numbers(tag, name)?;
        if let Some(sz) = tag.attr("size") {
            let sz: usize = sz.parse().map_err(|_| {
                self.err_at(tag.start, format!("invalid size=\"{sz}\" in <{name}>"))
            })?;
            if sz != v.len() {
                return Err(self.err_at(
                    tag.body_end,
                    format!(
                        "<{name}> declares size {sz} but contains {} numbers (file truncated?)",
                        v.len()
                    ),
                ));
            }
        }
        if (exact && v.len() != mesh) || v.len() > mesh {
            return Err(self.err_at(
                tag.body_end,
                format!(
                    "<{name}> has {} values, expected {mesh} (mesh size)",
                    v.len()
                ),
            ));
        }
        v.resize(mesh, 0.0);
        Ok(v)
    }
}

/// Whitespace-separated tokens of text[from..to] with their byte offsets.
fn tokens(text: &str, from: usize, to: usize) -> impl Iterator<Item = (usize, &str)> {
    let s = &text[from..to];
    let mut pos = 0;
    std::iter::from_fn(move || {
        let rest = &s[pos..];
        let skip = rest.len() - rest.trim_start().len();
        let start = pos + skip;
        if start >= s.len() {
            return None;
        }
        let len = s[start..]
            .find(|c: char| c.is_whitespace())
            .unwrap_or(s.len() - start);
        pos = start + len;
        Some((from + start, &s[start..start + len]))
    })
}

fn check_mesh(ctx: &Ctx, r: &[f64], rab: &[f64], at: usize) -> Result<(), PseudoError> {
    if r.len() < 3 {
        return Err(ctx.err_at(at, format!("radial mesh too small ({} points)", r.len())));
    }
    if r.windows(2).any(|w| w[1] <= w[0]) || r[0] < 0.0 {
        return Err(ctx.err_at(
            at,
            "radial mesh PP_R is not strictly increasing and non-negative".into(),
        ));
    }
    if rab.iter().any(|&x| x < 0.0) {
        return Err(ctx.err_at(at, "PP_RAB has negative entries".into()));
    }
    Ok(())
}

/// Parse UPF version 2, with the augmentation charges of an ultrasoft / PAW file.
pub fn parse_v2(text: &str, path: &str) -> Result<UpfParsed, PseudoError> {
    parse_v2_impl(text, path, true)
}

/// Parse UPF version 2 but leave `PP_AUGMENTATION` and the PAW data unread (`augmentation`
/// and `paw` are None whatever the kind): the first look at a file, whose kind then says
/// whether the rest is read ([`parse_v2`]).
pub fn parse_v2_without_augmentation(text: &str, path: &str) -> Result<UpfParsed, PseudoError> {
    parse_v2_impl(text, path, false)
}

/// The 1-based line of the `<PP_HEADER` tag of a UPF text, if it has one.
pub fn header_line(text: &str) -> Option<usize> {
    let at = text.find("<PP_HEADER")?;
    Some(text[..at].matches('\n').count() + 1)
}

fn parse_v2_impl(
    text: &str,
    path: &str,
    read_augmentation: bool,
) -> Result<UpfParsed, PseudoError> {
    let ctx = Ctx::new(text, path);
    // skip PP_INFO (free text) if present
    let mut from = 0;
    if let Some(info) = ctx.tag("PP_INFO", 0)? {
        from = info.end;
    }
    let header = ctx.require("PP_HEADER", from)?;
    let hat = header.start;
    let get = |k: &str| -> Result<&str, PseudoError> {
        header
            .attr(k)
            .ok_or_else(|| ctx.err_at(hat, format!("PP_HEADER lacks the attribute {k}")))
    };
    let get_num = |k: &str| -> Result<f64, PseudoError> {
        let s = get(k)?;
        match parse_f64(s) {
            Some(v) if v.is_finite() => Ok(v),
            _ => Err(ctx.err_at(
                hat,
                format!("PP_HEADER attribute {k}=\"{s}\" is not a number"),
            )),
        }
    };
    let get_int = |k: &str| -> Result<i64, PseudoError> {
        let v = get_num(k)?;
        if v.fract() != 0.0 || v.abs() > 1e8 {
            return Err(ctx.err_at(hat, format!("PP_HEADER attribute {k} is not an integer")));
        }
        Ok(v as i64)
    };
    let get_bool = |k: &str| -> Result<bool, PseudoError> {
        match header.attr(k) {
            None => Ok(false),
            Some(s) => parse_bool(s).ok_or_else(|| {
                ctx.err_at(
                    hat,
                    format!("PP_HEADER attribute {k}=\"{s}\" is not a logical"),
                )
            }),
        }
    };
    let ptype = get("pseudo_type")?.to_ascii_uppercase();
    let kind =
        UpfKind::of(&ptype, get_bool("is_ultrasoft")?, get_bool("is_paw")?).ok_or_else(|| {
            ctx.err_at(
                hat,
                format!(
                    "pseudo_type \"{ptype}\": not a type planewave knows (NC, SL, US, USPP or PAW)"
                ),
            )
        })?;
    if get_bool("has_so")? {
        return Err(ctx.err_at(
            hat,
            "fully-relativistic (spin-orbit) pseudopotentials are not supported".into(),
        ));
    }
    if get_bool("is_coulomb")? {
        return Err(ctx.err_at(
            hat,
            "bare Coulomb potentials (is_coulomb) are not supported".into(),
        ));
    }
    let el = get("element")?;
    let symbol =
        normalize_symbol(el).ok_or_else(|| ctx.err_at(hat, format!("unknown element \"{el}\"")))?;
    let z_valence = get_num("z_valence")?;
    if z_valence <= 0.0 {
        return Err(ctx.err_at(hat, format!("z_valence must be positive, got {z_valence}")));
    }
    let nlcc_flag = get_bool("core_correction")?;
    let lmax = get_int("l_max").unwrap_or(-1) as i32;
    let mesh = get_int("mesh_size")?;
    let nproj = get_int("number_of_proj")?;
    if !(3..=1_000_000).contains(&mesh) {
        return Err(ctx.err_at(hat, format!("invalid mesh_size {mesh}")));
    }
    if !(0..=64).contains(&nproj) {
        return Err(ctx.err_at(hat, format!("invalid number_of_proj {nproj}")));
    }
    let (mesh, nproj) = (mesh as usize, nproj as usize);
    let functional = header.attr("functional").map(|s| s.trim().to_string());
    let after = header.end;

    let mesh_tag = ctx.require("PP_MESH", after)?;
    let rt = ctx.require("PP_R", mesh_tag.start)?;
    let r = ctx.mesh_array(&rt, "PP_R", mesh, true)?;
    let rabt = ctx.require("PP_RAB", mesh_tag.start)?;
    let rab = ctx.mesh_array(&rabt, "PP_RAB", mesh, true)?;
    check_mesh(&ctx, &r, &rab, rt.start)?;

    let lt = ctx.require("PP_LOCAL", after)?;
    let vloc: Vec<f64> = ctx
        .mesh_array(&lt, "PP_LOCAL", mesh, true)?
        .into_iter()
        .map(|v| 0.5 * v)
        .collect();

    let mut betas = Vec::with_capacity(nproj);
    let mut dij = vec![vec![0.0; nproj]; nproj];
    let mut augmentation = None;
    let mut paw = None;
    if nproj == 0 && read_augmentation && kind != UpfKind::NormConserving {
        return Err(ctx.err_at(
            hat,
            "number_of_proj is 0: an ultrasoft or PAW file needs its projectors".into(),
        ));
    }
    if nproj > 0 {
        let nl = ctx.require("PP_NONLOCAL", after)?;
        for i in 1..=nproj {
            let name = format!("PP_BETA.{i}");
            let bt = ctx.tag(&name, nl.start)?.ok_or_else(|| {
                ctx.err_at(
                    nl.start,
                    format!("missing <{name}> (number_of_proj = {nproj})"),
                )
            })?;
            let l = bt
                .attr("angular_momentum")
                .and_then(|s| s.parse::<usize>().ok())
                .ok_or_else(|| {
                    ctx.err_at(bt.start, format!("<{name}> lacks a valid angular_momentum"))
                })?;
            check_projector_l(&ctx, bt.start, &name, l)?;
            let kbeta = match bt.attr("cutoff_radius_index") {
                None => mesh,
                Some(s) => s
                    .parse::<usize>()
                    .ok()
                    .filter(|&k| k <= mesh)
                    .ok_or_else(|| {
                        ctx.err_at(
                            bt.start,
                            format!("<{name}> has an invalid cutoff_radius_index \"{s}\""),
                        )
                    })?,
            };
            let kbeta = if kbeta == 0 { mesh } else { kbeta };
            let rbeta = ctx.mesh_array(&bt, &name, mesh, false)?;
            betas.push(UpfBeta { l, kbeta, rbeta });
        }
        let dt = ctx
            .tag("PP_DIJ", nl.start)?
            .ok_or_else(|| ctx.err_at(nl.start, "missing <PP_DIJ>".into()))?;
        let d = ctx.numbers(&dt, "PP_DIJ")?;
        if d.len() != nproj * nproj {
            return Err(ctx.err_at(
                dt.body_end,
                format!(
                    "<PP_DIJ> has {} values, expected {} (number_of_proj^2)",
                    d.len(),
                    nproj * nproj
                ),
            ));
        }
        for i in 0..nproj {
            for j in 0..nproj {
                dij[i][j] = 0.5 * d[i * nproj + j];
            }
        }
        check_dij(&ctx, dt.start, &mut dij, &betas)?;
        if read_augmentation && kind != UpfKind::NormConserving {
            let nqlc = 2 * lmax.max(0) as usize + 1; // QE's default
            augmentation = Some(augmentation_v2(&ctx, &nl, kind, &betas, mesh, nqlc)?);
            if kind == UpfKind::Paw {
                let lmax_rho = match header.attr("l_max_rho") {
                    None => 2 * lmax.max(0) as usize,
                    Some(_) => get_int("l_max_rho")?.max(0) as usize,
                };
                paw = Some(paw_v2(&ctx, &nl, after, nproj, mesh, lmax_rho)?);
            }
        }
    }

    let nlcc = if nlcc_flag {
        let t = ctx.require("PP_NLCC", after)?;
        Some(ctx.mesh_array(&t, "PP_NLCC", mesh, false)?)
    } else {
        None
    };
    let rho_atom = match ctx.tag("PP_RHOATOM", after)? {
        Some(t) => Some(ctx.mesh_array(&t, "PP_RHOATOM", mesh, false)?),
        None => None,
    };
    let nwfc = header
        .attr("number_of_wfc")
        .map_or(Ok(0), |_| get_int("number_of_wfc"))?;
    let chi = chi_v2(&ctx, after, nwfc.clamp(0, 64) as usize, mesh)?;
    Ok(UpfParsed {
        kind,
        augmentation,
        paw,
        symbol,
        z_valence,
        lmax,
        functional,
        r,
        rab,
        vloc,
        betas,
        dij,
        nlcc,
        rho_atom,
        chi,
    })
}

/// The `<PP_AUGMENTATION>` section inside `nl` (`<PP_NONLOCAL>`) of an ultrasoft / PAW file;
/// `nqlc_default` is QE's default of `nqlc` (2 l_max + 1).
fn augmentation_v2(
    ctx: &Ctx,
    nl: &Tag,
    kind: UpfKind,
    betas: &[UpfBeta],
    mesh: usize,
    nqlc_default: usize,
) -> Result<UpfAugmentation, PseudoError> {
    let aug = ctx
        .tag("PP_AUGMENTATION", nl.start)?
        .filter(|t| t.start < nl.body_end)
        .ok_or_else(|| {
            ctx.err_at(
                nl.start,
                "missing <PP_AUGMENTATION> in <PP_NONLOCAL> (an ultrasoft/PAW file needs it)"
                    .into(),
            )
        })?;
    let q_with_l = match aug.attr("q_with_l") {
        None => false,
        Some(s) => parse_bool(s).ok_or_else(|| {
            ctx.err_at(
                aug.start,
                format!("<PP_AUGMENTATION> attribute q_with_l=\"{s}\" is not a logical"),
            )
        })?,
    };
    if aug_count(ctx, &aug, "nqf", 0)? > 0 {
        return Err(ctx.err_at(
            aug.start,
            "nqf > 0 (Q_ij pseudised near the origin by PP_QFCOEF/PP_RINNER) is not supported"
                .into(),
        ));
    }
    let nqlc = aug_count(ctx, &aug, "nqlc", nqlc_default)?;
    let mut kkbeta = betas.iter().map(|b| b.kbeta).max().unwrap_or(0);
    // PAW: QE zeroes the Q functions beyond the augmentation sphere and integrates up to it.
    let iraug = if kind == UpfKind::Paw {
        let iraug = aug_count(ctx, &aug, "cutoff_r_index", mesh)?.min(mesh);
        kkbeta = kkbeta.max(iraug);
        Some(iraug)
    } else {
        None
    };
    let q = q_matrix(ctx, &aug, betas.len())?;
    let mut qfunc = q_functions(ctx, &aug, betas, q_with_l, mesh)?;
    if let Some(iraug) = iraug {
        qfunc.iter_mut().for_each(|f| f.r2q[iraug..].fill(0.0));
    }
    Ok(UpfAugmentation {
        q_with_l,
        nqlc,
        q,
        qfunc,
        kkbeta: kkbeta.min(mesh),
    })
}

/// The PAW data of a PAW file: the partial waves of `<PP_FULL_WFC>` and the core density,
/// occupations and core energy of `<PP_PAW>`; `nl` is `<PP_NONLOCAL>` (for the augmentation
/// sphere's radius index) and `lmax_rho` the header's.
fn paw_v2(
    ctx: &Ctx,
    nl: &Tag,
    after: usize,
    nbeta: usize,
    mesh: usize,
    lmax_rho: usize,
) -> Result<UpfPaw, PseudoError> {
    let aug = ctx.require("PP_AUGMENTATION", nl.start)?;
    let iraug = aug_count(ctx, &aug, "cutoff_r_index", mesh)?.min(mesh);
    if iraug == 0 {
        return Err(ctx.err_at(
            aug.start,
            "<PP_AUGMENTATION> cutoff_r_index is 0: a PAW file's augmentation sphere is empty"
                .into(),
        ));
    }
    let missing = |name: &str, within: &Tag, of: &str| {
        ctx.err_at(
            within.start,
            format!("missing <{name}> in <{of}> (a PAW file needs it)"),
        )
    };
    let full = ctx.tag("PP_FULL_WFC", after)?.ok_or_else(|| {
        ctx.err_eof("missing <PP_FULL_WFC> section (a PAW file needs its partial waves)".into())
    })?;
    let waves = |prefix: &str| -> Result<Vec<Vec<f64>>, PseudoError> {
        (1..=nbeta)
            .map(|i| {
                let name = format!("{prefix}.{i}");
                let t = ctx
                    .tag(&name, full.body_start)?
                    .filter(|t| t.start < full.body_end)
                    .ok_or_else(|| missing(&name, &full, "PP_FULL_WFC"))?;
                ctx.mesh_array(&t, &name, mesh, false)
            })
            .collect()
    };
    let (ae_wfc, ps_wfc) = (waves("PP_AEWFC")?, waves("PP_PSWFC")?);
    let pt = ctx.tag("PP_PAW", after)?.ok_or_else(|| {
        ctx.err_eof("missing <PP_PAW> section (a PAW file needs its core density)".into())
    })?;
    let core_energy = match pt.attr("core_energy") {
        None => 0.0,
        Some(s) => {
            0.5 * parse_f64(s).filter(|v| v.is_finite()).ok_or_else(|| {
                ctx.err_at(
                    pt.start,
                    format!("<PP_PAW> attribute core_energy=\"{s}\" is not a number"),
                )
            })?
        }
    };
    let inside = |name: &str| -> Result<Tag, PseudoError> {
        ctx.tag(name, pt.body_start)?
            .filter(|t| t.start < pt.body_end)
            .ok_or_else(|| missing(name, &pt, "PP_PAW"))
    };
    let ae_core = ctx.mesh_array(&inside("PP_AE_NLCC")?, "PP_AE_NLCC", mesh, false)?;
    let occupations = ctx.numbers(&inside("PP_OCCUPATIONS")?, "PP_OCCUPATIONS")?;
    if occupations.len() != nbeta {
        return Err(ctx.err_at(
            pt.start,
            format!(
                "<PP_OCCUPATIONS> has {} values, expected {nbeta} (number_of_proj)",
                occupations.len()
            ),
        ));
    }
    Ok(UpfPaw {
        ae_wfc,
        ps_wfc,
        ae_core,
        occupations,
        core_energy,
        iraug,
        lmax_rho,
    })
}

/// A non-negative integer attribute of `<PP_AUGMENTATION>` (`default` when absent).
fn aug_count(ctx: &Ctx, aug: &Tag, key: &str, default: usize) -> Result<usize, PseudoError> {
    match aug.attr(key) {
        None => Ok(default),
        Some(s) => s.parse::<usize>().map_err(|_| {
            ctx.err_at(
                aug.start,
                format!("<PP_AUGMENTATION> attribute {key}=\"{s}\" is not a non-negative integer"),
            )
        }),
    }
}

/// `<PP_Q>` of `aug`: the nbeta x nbeta integrals q_ij.
fn q_matrix(ctx: &Ctx, aug: &Tag, nbeta: usize) -> Result<Vec<Vec<f64>>, PseudoError> {
    let t = ctx
        .tag("PP_Q", aug.body_start)?
        .filter(|t| t.start < aug.body_end)
        .ok_or_else(|| ctx.err_at(aug.start, "missing <PP_Q> in <PP_AUGMENTATION>".into()))?;
    let v = ctx.numbers(&t, "PP_Q")?;
    if v.len() != nbeta * nbeta {
        return Err(ctx.err_at(
            t.body_end,
            format!(
                "<PP_Q> has {} values, expected {} (number_of_proj^2)",
                v.len(),
                nbeta * nbeta
            ),
        ));
    }
    Ok(v.chunks(nbeta).map(<[f64]>::to_vec).collect())
}

/// The Q functions of `aug`: `<PP_QIJL.i.j.l>` for every needed l when `q_with_l`, else
/// `<PP_QIJ.i.j>`, for 1 <= i <= j <= nbeta; each must hold exactly `mesh` values.
fn q_functions(
    ctx: &Ctx,
    aug: &Tag,
    betas: &[UpfBeta],
    q_with_l: bool,
    mesh: usize,
) -> Result<Vec<QFunction>, PseudoError> {
    let mut out = Vec::new();
    for (i, bi) in betas.iter().enumerate() {
        for (j, bj) in betas.iter().enumerate().skip(i) {
            let ls: Vec<Option<usize>> = if q_with_l {
                let (lo, hi) = (bi.l.abs_diff(bj.l), bi.l + bj.l);
                (lo..=hi).step_by(2).map(Some).collect()
            } else {
                vec![None]
            };
            for l in ls {
                let name = match l {
                    Some(l) => format!("PP_QIJL.{}.{}.{l}", i + 1, j + 1),
                    None => format!("PP_QIJ.{}.{}", i + 1, j + 1),
                };
                let t = ctx
                    .tag(&name, aug.body_start)?
                    .filter(|t| t.start < aug.body_end)
                    .ok_or_else(|| {
                        ctx.err_at(aug.start, format!("missing <{name}> in <PP_AUGMENTATION>"))
                    })?;
                let r2q = ctx.mesh_array(&t, &name, mesh, true)?;
                out.push(QFunction { i, j, l, r2q });
            }
        }
    }
    Ok(out)
}

/// The `nwfc` blocks `<PP_CHI.i>` of `<PP_PSWFC>` (UPF v2), those of negative occupation left
/// out.
fn chi_v2(ctx: &Ctx, after: usize, nwfc: usize, mesh: usize) -> Result<Vec<UpfChi>, PseudoError> {
    if nwfc == 0 {
        return Ok(Vec::new());
    }
    let ps = ctx.require("PP_PSWFC", after)?;
    let mut out = Vec::with_capacity(nwfc);
    for i in 1..=nwfc {
        let name = format!("PP_CHI.{i}");
        let t = ctx
            .tag(&name, ps.start)?
            .filter(|t| t.start < ps.body_end)
            .ok_or_else(|| {
                ctx.err_at(
                    ps.start,
                    format!("missing <{name}> (number_of_wfc = {nwfc})"),
                )
            })?;
        let number = |key: &str| t.attr(key).and_then(parse_f64).filter(|v| v.is_finite());
        let l = number("l")
            .filter(|l| l.fract() == 0.0 && (0.0..=3.0).contains(l))
            .ok_or_else(|| {
                ctx.err_at(
                    t.start,
                    format!("<{name}> lacks an angular momentum l of 0 to 3"),
                )
            })?;
        let occupation = number("occupation").unwrap_or(0.0);
        let rchi = ctx.mesh_array(&t, &name, mesh, false)?;
        let label = t
            .attr("label")
            .map_or_else(|| l_letter(l as usize), str::to_string);
        if occupation >= 0.0 {
            out.push(UpfChi {
                label,
                l: l as usize,
                occupation,
                rchi,
            });
        }
    }
    Ok(out)
}

/// The `nwfc` wavefunctions of `<PP_PSWFC>` (UPF v1: a line `label l occupation`, then the
/// mesh values), those of negative occupation left out.
fn chi_v1(ctx: &Ctx, after: usize, nwfc: usize, mesh: usize) -> Result<Vec<UpfChi>, PseudoError> {
    if nwfc == 0 {
        return Ok(Vec::new());
    }
    let ps = ctx.require("PP_PSWFC", after)?;
    let mut c = V1Cursor {
        ctx,
        pos: ps.body_start,
        end: ps.body_end,
        name: "PP_PSWFC",
    };
    let mut out = Vec::with_capacity(nwfc);
    for _ in 0..nwfc {
        let (off, line) = c.line("a wavefunction's 'label l occupation' line")?;
        let words: Vec<&str> = line.split_whitespace().collect();
        let l = words
            .get(1)
            .and_then(|w| w.parse::<usize>().ok())
            .filter(|&l| l <= 3);
        let occupation = words.get(2).and_then(|w| parse_f64(w));
        let (Some(l), Some(occupation)) = (l, occupation) else {
            return Err(ctx.err_at(
                off,
                format!(
                    "expected 'label l occupation' with l of 0 to 3, found '{}'",
                    line.trim()
                ),
            ));
        };
        let mut rchi = Vec::with_capacity(mesh);
        for (off, tok) in tokens(ctx.text, c.pos, c.end).take(mesh) {
            match parse_f64(tok) {
                Some(x) if x.is_finite() => rchi.push(x),
                _ => {
                    return Err(ctx.err_at(
                        off,
                        format!("expected a number in <PP_PSWFC>, found '{tok}'"),
                    ))
                }
            }
            c.pos = off + tok.len();
        }
        if rchi.len() < mesh {
            return Err(ctx.err_at(
                ps.body_end,
                format!(
                    "<PP_PSWFC> wavefunction {} has {} values, expected {mesh}",
                    words[0],
                    rchi.len()
                ),
            ));
        }
        if occupation >= 0.0 {
            out.push(UpfChi {
                label: words[0].to_string(),
                l,
                occupation,
                rchi,
            });
        }
    }
    Ok(out)
}

/// The spectroscopic letter of angular momentum `l` (0 to 3).
fn l_letter(l: usize) -> String {
    ["S", "P", "D", "F"][l.min(3)].to_string()
}

/// D must be symmetric and couple only projectors of equal l; symmetrises it.
fn check_dij(
    ctx: &Ctx,
    at: usize,
    d: &mut [Vec<f64>],
    betas: &[UpfBeta],
) -> Result<(), PseudoError> {
    let n = d.len();
    for i in 0..n {
        for j in 0..i {
            let (a, b) = (d[i][j], d[j][i]);
            if (a - b).abs() > 1e-8 * (1.0 + a.abs().max(b.abs())) {
                return Err(ctx.err_at(
                    at,
                    format!(
                        "PP_DIJ is not symmetric: D({},{}) != D({},{})",
                        i + 1,
                        j + 1,
                        j + 1,
                        i + 1
                    ),
                ));
            }
            if betas[i].l != betas[j].l && (a != 0.0 || b != 0.0) {
                return Err(ctx.err_at(
                    at,
                    format!(
                        "PP_DIJ couples projectors {} and {} of different l",
                        i + 1,
                        j + 1
                    ),
                ));
            }
            let m = 0.5 * (a + b);
            d[i][j] = m;
            d[j][i] = m;
        }
    }
    Ok(())
}

/// Line-oriented cursor over a v1 section body.
struct V1Cursor<'c, 'a> {
    ctx: &'c Ctx<'a>,
    pos: usize,
    end: usize,
    name: &'static str,
}

impl<'c, 'a> V1Cursor<'c, 'a> {
    /// Next non-blank line: (offset, text).
    fn line(&mut self, what: &str) -> Result<(usize, &'a str), PseudoError> {
        let text: &'a str = self.ctx.text;
        while self.pos < self.end {
            let rest = &text[self.pos..self.end];
            let len = rest.find('\n').unwrap_or(rest.len());
            let off = self.pos;
            let line = &rest[..len];
            self.pos += (len + 1).min(rest.len());
            if !line.trim().is_empty() {
                return Ok((off, line));
            }
        }
        Err(self
            .ctx
            .err_at(self.end, format!("<{}> ends before {what}", self.name)))
    }

    fn first_token(&mut self, what: &str) -> Result<(usize, &'a str), PseudoError> {
        let (off, line) = self.line(what)?;
        let tok = line.split_whitespace().next().unwrap_or("");
        Ok((off, tok))
    }

    fn numbers(&mut self, n: usize, what: &str) -> Result<Vec<f64>, PseudoError> {
        let (off, line) = self.line(what)?;
        let mut out = Vec::with_capacity(n);
        for tok in line.split_whitespace().take(n) {
            match parse_f64(tok) {
                Some(v) if v.is_finite() => out.push(v),
                _ => {
                    return Err(self
                        .ctx
                        .err_at(off, format!("expected a number for {what}, found '{tok}'")))
                }
            }
        }
        if out.len() < n {
            return Err(self
                .ctx
                .err_at(off, format!("expected {n} number(s) for {what}")));
        }
        Ok(out)
    }
}

/// Highest projector angular momentum planewave evaluates (f; its spherical harmonics stop
/// there).
const MAX_PROJECTOR_L: usize = 3;

/// A projector of angular momentum `l` must be one planewave can evaluate.
fn check_projector_l(ctx: &Ctx, off: usize, name: &str, l: usize) -> Result<(), PseudoError> {
    if l > MAX_PROJECTOR_L {
        return Err(ctx.err_at(
            off,
            format!(
                "<{name}> has angular momentum l = {l}; planewave evaluates projectors up to l = {MAX_PROJECTOR_L} (s, p, d, f): use a pseudopotential without l > {MAX_PROJECTOR_L} projectors"
            ),
        ));
    }
    Ok(())
}

fn as_count(ctx: &Ctx, off: usize, v: f64, what: &str, max: usize) -> Result<usize, PseudoError> {
    if v < 0.0 || v.fract() != 0.0 || v > max as f64 {
        return Err(ctx.err_at(off, format!("invalid {what}: {v}")));
    }
    Ok(v as usize)
}

/// Parse UPF version 1.
pub fn parse_v1(text: &str, path: &str) -> Result<UpfParsed, PseudoError> {
    let ctx = Ctx::new(text, path);
    let header = ctx.require("PP_HEADER", 0)?;
    let mut h = V1Cursor {
        ctx: &ctx,
        pos: header.body_start,
        end: header.body_end,
        name: "PP_HEADER",
    };
    h.line("the version number")?;
    let (eoff, el) = h.first_token("the element")?;
    let symbol = normalize_symbol(el)
        .ok_or_else(|| ctx.err_at(eoff, format!("unknown element \"{el}\"")))?;
    let (toff, ptype) = h.first_token("the pseudopotential type")?;
    if !ptype.eq_ignore_ascii_case("NC") && !ptype.eq_ignore_ascii_case("SL") {
        return Err(ctx.err_at(
            toff,
            format!("pseudopotential type \"{ptype}\": a UPF v1 file must be norm-conserving (NC); convert an ultrasoft or PAW one to UPF v2 with QE's upfconv.x"),
        ));
    }
    let (noff, nlcc_s) = h.first_token("the core-correction flag")?;
    let nlcc_flag = parse_bool(nlcc_s)
        .ok_or_else(|| ctx.err_at(noff, format!("invalid logical \"{nlcc_s}\"")))?;
    let (_, fline) = h.line("the functional")?;
    let fpart: String = fline.chars().take(20).collect();
    let functional =
        Some(fpart.split_whitespace().collect::<Vec<_>>().join(" ")).filter(|s| !s.is_empty());
    let zoff = h.pos;
    let z_valence = h.numbers(1, "z_valence")?[0];
    if z_valence <= 0.0 {
        return Err(ctx.err_at(zoff, format!("z_valence must be positive, got {z_valence}")));
    }
    h.line("the total energy")?;
    h.line("the suggested cutoffs")?;
    let lmax = h.numbers(1, "lmax")?[0] as i32;
    let moff = h.pos;
    let mesh = h.numbers(1, "the mesh size")?[0];
    let mesh = as_count(&ctx, moff, mesh, "mesh size", 1_000_000)?;
    if mesh < 3 {
        return Err(ctx.err_at(moff, format!("mesh size {mesh} too small")));
    }
    let poff = h.pos;
    let nn = h.numbers(2, "number of wavefunctions and projectors")?;
    let nproj = as_count(&ctx, poff, nn[1], "number of projectors", 64)?;

    let mesh_tag = ctx.require("PP_MESH", header.end)?;
    let rt = ctx.require("PP_R", mesh_tag.start)?;
    let r = ctx.mesh_array(&rt, "PP_R", mesh, true)?;
    let rabt = ctx.require("PP_RAB", mesh_tag.start)?;
    let rab = ctx.mesh_array(&rabt, "PP_RAB", mesh, true)?;
    check_mesh(&ctx, &r, &rab, rt.start)?;

    let lt = ctx.require("PP_LOCAL", header.end)?;
    let vloc = ctx
        .mesh_array(&lt, "PP_LOCAL", mesh, true)?
        .into_iter()
        .map(|v| 0.5 * v)
        .collect();

    let mut betas = Vec::with_capacity(nproj);
    let mut dij = vec![vec![0.0; nproj]; nproj];
    if nproj > 0 {
        let nl = ctx.require("PP_NONLOCAL", header.end)?;
        let mut from = nl.body_start;
        for ib in 0..nproj {
            let bt = ctx
                .tag("PP_BETA", from)?
                .filter(|t| t.start < nl.body_end)
                .ok_or_else(|| {
                    ctx.err_at(
                        nl.start,
                        format!("expected {nproj} <PP_BETA> blocks, found {ib}"),
                    )
                })?;
            from = bt.end;
            let mut c = V1Cursor {
                ctx: &ctx,
                pos: bt.body_start,
                end: bt.body_end,
                name: "PP_BETA",
            };
            let loff = c.pos;
            let il = c.numbers(2, "the projector index and l")?;
            let l = as_count(&ctx, loff, il[1], "angular momentum", usize::MAX)?;
            check_projector_l(&ctx, loff, "PP_BETA", l)?;
            let koff = c.pos;
            let kk = c.numbers(1, "the number of points")?[0];
            let kbeta = as_count(&ctx, koff, kk, "number of beta points", mesh)?;
            let all = ctx.numbers_in(c.pos, bt.body_end, "PP_BETA").or_else(|_| {
                // trailing non-numeric text after the data: parse only the first kbeta tokens
                let mut v = Vec::with_capacity(kbeta);
                for (off, tok) in tokens(text, c.pos, bt.body_end).take(kbeta) {
                    match parse_f64(tok) {
                        Some(x) if x.is_finite() => v.push(x),
                        _ => {
                            return Err(ctx.err_at(
                                off,
                                format!("expected a number in <PP_BETA>, found '{tok}'"),
                            ))
                        }
                    }
                }
                Ok(v)
            })?;
            if all.len() < kbeta {
                return Err(ctx.err_at(
                    bt.body_end,
                    format!(
                        "<PP_BETA> number {} has {} values, expected {kbeta}",
                        ib + 1,
                        all.len()
                    ),
                ));
            }
            let mut rbeta = all[..kbeta].to_vec();
            rbeta.resize(mesh, 0.0);
            betas.push(UpfBeta {
                l,
                kbeta: if kbeta == 0 { mesh } else { kbeta },
                rbeta,
            });
        }
        let dt = ctx.require("PP_DIJ", nl.start)?;
        let mut c = V1Cursor {
            ctx: &ctx,
            pos: dt.body_start,
            end: dt.body_end,
            name: "PP_DIJ",
        };
        let noff = c.pos;
        let nd = c.numbers(1, "the number of D_ij")?[0];
        let nd = as_count(&ctx, noff, nd, "number of D_ij", nproj * nproj)?;
        for _ in 0..nd {
            let off = c.pos;
            let v = c.numbers(3, "a D_ij entry 'i j D'")?;
            let i = as_count(&ctx, off, v[0], "D_ij index", nproj)?;
            let j = as_count(&ctx, off, v[1], "D_ij index", nproj)?;
            if i == 0 || j == 0 {
                return Err(ctx.err_at(off, "D_ij index must be >= 1".into()));
            }
            dij[i - 1][j - 1] = 0.5 * v[2];
            dij[j - 1][i - 1] = 0.5 * v[2];
        }
        check_dij(&ctx, dt.start, &mut dij, &betas)?;
    }
    let nlcc = if nlcc_flag {
        let t = ctx.require("PP_NLCC", header.end)?;
        Some(ctx.mesh_array(&t, "PP_NLCC", mesh, false)?)
    } else {
        None
    };
    let rho_atom = match ctx.tag("PP_RHOATOM", header.end)? {
        Some(t) => Some(ctx.mesh_array(&t, "PP_RHOATOM", mesh, false)?),
        None => None,
    };
    let nwfc = as_count(&ctx, poff, nn[0], "number of wavefunctions", 64)?;
    let chi = chi_v1(&ctx, header.end, nwfc, mesh)?;
    Ok(UpfParsed {
        kind: UpfKind::NormConserving,
        augmentation: None,
        paw: None,
        symbol,
        z_valence,
        lmax,
        functional,
        r,
        rab,
        vloc,
        betas,
        dij,
        nlcc,
        rho_atom,
        chi,
    })
}
