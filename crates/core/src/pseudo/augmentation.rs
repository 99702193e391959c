//! Augmentation charges Q_ij of ultrasoft / PAW pseudopotentials in reciprocal space.
//!
//! Contract (unit-free charges, lengths in bohr, q in 1/bohr):
//! * [`Augmentation`] is built from a file's [`UpfAugmentation`], the l of its betas and its
//!   radial mesh (`r`, `rab`).
//! * Projector components `(beta, m)` run over the betas in file order and, within a beta of
//!   angular momentum l, over the `2l+1` indices `m + l` of [`crate::special::real_ylm`]: the
//!   column order of the nonlocal term's projector matrix, whose projectors are
//!   `beta_i(r) Y_lm(r^)` in real space (`(-i)^l Y_lm(G^) beta_i(|G|)` in reciprocal space,
//!   `terms/nonlocal.rs`).
//! * In real space `Q_{ih jh}(r) = sum_L Q^L_ij(r) sum_M ap[L M; l_i m_i; l_j m_j] Y_LM(r^)`,
//!   with `r^2 Q^L_ij(r)` the file's functions ([`crate::clebsch_gordan`] for `ap`).
//! * [`Augmentation::qrad`]`(L, i, j, q)` = `int_0^{r(kkbeta)} r^2 Q^L_ij(r) j_L(q r) dr` by QE's
//!   Simpson rule over the first `kkbeta` mesh points; 0 unless L is one of |l_i - l_j|, ...,
//!   l_i + l_j (steps of 2) and below the file's `nqlc` (as QE's `init_us_1`). Without
//!   `q_with_l` the one function of (i, j) serves every L.
//! * [`Augmentation::q_of_g`]`(ih, jh, G)` = `int Q_{ih jh}(r) e^{-i G.r} d^3r`
//!   = `4 pi sum_{L M} (-i)^L Y_LM(G^) ap[L M; ih; jh] qrad(L, i, j, |G|)`, with no 1/Omega
//!   (QE's `qvan2` folds 1/Omega into its table). At G = 0 it is the file's `PP_Q` integral
//!   q_ij for equal (l, m) and 0 otherwise; Q(-G) = conj Q(G).
//! * [`Augmentation::tabulate`] makes later `qrad` values come from the 4-point Lagrange
//!   table of `numeric.rs` (step 0.005/bohr, ~1e-10 relative) up to its `qmax`; beyond, and
//!   before any tabulation, they are integrated directly.

use super::numeric::QTable;
use super::radial::{simpson_weights, sph_bessel};
use super::upf::{self, UpfAugmentation};
use super::PseudoError;
use crate::clebsch_gordan::{product_ls, real_ylm_upto6, YlmProducts, LMAX_PRODUCT};
use num_complex::Complex64;
use std::f64::consts::PI;
use std::path::Path;

/// One projector component: beta index, its l, and the index `m + l` of `real_ylm`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Component {
    pub beta: usize,
    pub l: usize,
    pub m: usize,
}

/// One radial integral: the file function `func` against j_l.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Channel {
    func: usize,
    l: usize,
}

/// The augmentation charges of one species (see the module doc).
#[derive(Debug, Clone, PartialEq)]
pub struct Augmentation {
    components: Vec<Component>,
    nbeta: usize,
    /// r on the first kkbeta points.
    r: Vec<f64>,
    /// Per file function: Simpson weight times r^2 Q(r), first kkbeta points.
    weighted: Vec<Vec<f64>>,
    channels: Vec<Channel>,
    /// Channel of (i, j, L) at `(i * nbeta + j) * (LMAX_PRODUCT + 1) + L`.
    index: Vec<Option<usize>>,
    table: Option<QTable>,
    /// `q_ij = ∫ Q_ij(r) d³r` between betas of equal l (0 otherwise), from the functions
    /// (QE's `qq_nt`, not the file's `PP_Q`, which can differ in the 6th digit).
    q: Vec<Vec<f64>>,
}

impl Augmentation {
    /// From a file's augmentation section, the l of its betas (file order) and its mesh.
    ///
    /// Panics if `aug` names a beta beyond `beta_ls` or an l above 3 (programming error: the
    /// UPF parser never gives such data).
    pub fn new(aug: &UpfAugmentation, beta_ls: &[usize], r: &[f64], rab: &[f64]) -> Self {
        let nbeta = beta_ls.len();
        let kkbeta = aug.kkbeta.min(r.len()).min(rab.len());
        let w = simpson_weights(rab, kkbeta);
        let weighted = aug
            .qfunc
            .iter()
            .map(|f| w.iter().zip(&f.r2q).map(|(w, q)| w * q).collect())
            .collect();
        let mut channels = Vec::new();
        let mut index = vec![None; nbeta * nbeta * (LMAX_PRODUCT + 1)];
        for (func, f) in aug.qfunc.iter().enumerate() {
            let ls: Vec<usize> = match f.l {
                Some(l) => vec![l],
                None => product_ls(beta_ls[f.i], beta_ls[f.j]).collect(),
            };
            for l in ls.into_iter().filter(|&l| l < aug.nqlc) {
                index[(f.i * nbeta + f.j) * (LMAX_PRODUCT + 1) + l] = Some(channels.len());
                index[(f.j * nbeta + f.i) * (LMAX_PRODUCT + 1) + l] = Some(channels.len());
                channels.push(Channel { func, l });
            }
        }
        let mut out = Augmentation {
            components: components(beta_ls),
            nbeta,
            r: r[..kkbeta].to_vec(),
            weighted,
            channels,
            index,
            table: None,
            q: Vec::new(),
        };
        out.q = (0..nbeta)
            .map(|i| {
                (0..nbeta)
                    .map(|j| {
                        let same_l = beta_ls[i] == beta_ls[j];
                        if same_l {
                            out.qrad(0, i, j, 0.0)
                        } else {
                            0.0
                        }
                    })
                    .collect()
            })
            .collect();
        out
    }

    /// The integrals `q_ij` between betas (see the field's doc): S's coupling.
    pub fn q_integrals(&self) -> &Vec<Vec<f64>> {
        &self.q
    }

    /// Read a UPF v2 ultrasoft / PAW file (`path` for messages) and build its augmentation; a
    /// norm-conserving file is an error.
    pub fn from_upf_str(text: &str, path: &str) -> Result<Self, PseudoError> {
        let u = upf::parse_v2(text, path)?;
        let aug = u.augmentation.as_ref().ok_or_else(|| {
            PseudoError::new(
                path,
                upf::header_line(text),
                "a norm-conserving pseudopotential has no augmentation charges".into(),
            )
        })?;
        let ls: Vec<usize> = u.betas.iter().map(|b| b.l).collect();
        Ok(Self::new(aug, &ls, &u.r, &u.rab))
    }

    /// [`Self::from_upf_str`] on the content of a file.
    pub fn from_file(path: &Path) -> Result<Self, PseudoError> {
        let p = path.display().to_string();
        let bytes = std::fs::read(path)
            .map_err(|e| PseudoError::new(&p, None, format!("cannot read file: {e}")))?;
        Self::from_upf_str(&String::from_utf8_lossy(&bytes), &p)
    }

    /// The projector components (beta, l, m) in the order of the indices `ih`, `jh`.
    pub fn components(&self) -> &[Component] {
        &self.components
    }

    /// Tabulate every radial integral up to `qmax` (1/bohr), as the numeric projectors' table
    /// is made (`QTable::bessel_integrals`: the Bessel functions j_L(q r) once per q and L for
    /// every channel of that L, 13 channels of 3 L's for a species).
    pub fn tabulate(&mut self, qmax: f64) {
        let funcs: Vec<(usize, &[f64])> = (self.channels.iter())
            .map(|c| (c.l, self.weighted[c.func].as_slice()))
            .collect();
        self.table = Some(QTable::bessel_integrals(&self.r, &funcs, 1.0, qmax));
    }

    /// `int_0^{r(kkbeta)} r^2 Q^L_ij(r) j_L(q r) dr` for betas `i`, `j` (see the module doc).
    pub fn qrad(&self, l: usize, i: usize, j: usize, q: f64) -> f64 {
        let Some(c) = self.channel(l, i, j) else {
            return 0.0;
        };
        self.table
            .as_ref()
            .and_then(|t| t.get(c, q))
            .unwrap_or_else(|| self.qrad_direct(c, q))
    }

    /// `int Q_{ih jh}(r) e^{-i G.r} d^3r` for components `ih`, `jh` (see the module doc).
    pub fn q_of_g(&self, ih: usize, jh: usize, g: [f64; 3]) -> Complex64 {
        let (a, b) = (self.components[ih], self.components[jh]);
        let q = (g[0] * g[0] + g[1] * g[1] + g[2] * g[2]).sqrt();
        let ap = YlmProducts::shared();
        let mut ylm = [0.0; 2 * LMAX_PRODUCT + 1];
        let mut sum = Complex64::new(0.0, 0.0);
        for big in product_ls(a.l, b.l) {
            let radial = self.qrad(big, a.beta, b.beta, q);
            if radial == 0.0 {
                continue;
            }
            real_ylm_upto6(big, g, &mut ylm);
            let angular: f64 = (0..2 * big + 1)
                .map(|mm| ap.ap((big, mm), (a.l, a.m), (b.l, b.m)) * ylm[mm])
                .sum();
            sum += minus_i_pow(big) * (radial * angular);
        }
        4.0 * PI * sum
    }

    fn channel(&self, l: usize, i: usize, j: usize) -> Option<usize> {
        if l > LMAX_PRODUCT || i >= self.nbeta || j >= self.nbeta {
            return None;
        }
        self.index[(i * self.nbeta + j) * (LMAX_PRODUCT + 1) + l]
    }

    fn qrad_direct(&self, c: usize, q: f64) -> f64 {
        let Channel { func, l } = self.channels[c];
        self.weighted[func]
            .iter()
            .zip(&self.r)
            .map(|(w, r)| w * sph_bessel(l, q * r))
            .sum()
    }
}

/// The components of betas of angular momenta `ls`, in the nonlocal term's order.
fn components(ls: &[usize]) -> Vec<Component> {
    ls.iter()
        .enumerate()
        .flat_map(|(beta, &l)| (0..2 * l + 1).map(move |m| Component { beta, l, m }))
        .collect()
}

/// (-i)^l.
fn minus_i_pow(l: usize) -> Complex64 {
    match l % 4 {
        0 => Complex64::new(1.0, 0.0),
        1 => Complex64::new(0.0, -1.0),
        2 => Complex64::new(-1.0, 0.0),
        _ => Complex64::new(0.0, 1.0),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::clebsch_gordan::sphere_quadrature;
    use crate::pseudo::{Pseudopotential, UpfKind};
    use crate::rng::SplitMix64;
    use crate::special::real_ylm;
    use std::path::PathBuf;

    const FILES: [&str; 4] = [
        "Si.pbe-nl-rrkjus_psl.1.0.0.UPF",
        "O.pbe-rrkjus.UPF",
        "C.pbe-n-kjpaw_psl.0.1.UPF",
        "H.pbe-kjpaw.UPF",
    ];

    fn data(name: &str) -> PathBuf {
        PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("../../tests/data/uspp")
            .join(name)
    }

    fn text(name: &str) -> String {
        std::fs::read_to_string(data(name)).expect("read test file")
    }

    fn parsed(name: &str) -> upf::UpfParsed {
        upf::parse_v2(&text(name), name).unwrap_or_else(|e| panic!("{e}"))
    }

    fn built(name: &str) -> Augmentation {
        Augmentation::from_file(&data(name)).unwrap_or_else(|e| panic!("{e}"))
    }

    #[test]
    fn parsed_numbers_of_the_ultrasoft_files() {
        let si = parsed("Si.pbe-nl-rrkjus_psl.1.0.0.UPF");
        assert_eq!(si.kind, UpfKind::Ultrasoft);
        assert_eq!(si.betas.len(), 4);
        let a = si.augmentation.as_ref().expect("Si augmentation");
        assert_eq!((a.kkbeta, a.q_with_l, a.nqlc), (829, true, 5));
        assert_eq!(a.qfunc.len(), 13);
        let f = &a.qfunc[0];
        assert_eq!((f.i, f.j, f.l), (0, 0, Some(0)));
        assert_eq!(f.r2q.len(), 1141);
        assert_eq!(f.r2q[0], 6.377052468491163e-10);
        assert_eq!(a.q[0][0], -7.715564686177517e-2);
        assert_eq!(a.q[2][3], -2.494353452940189e-2);

        let o = parsed("O.pbe-rrkjus.UPF");
        assert_eq!(o.kind, UpfKind::Ultrasoft);
        assert_eq!(o.betas.len(), 4);
        let a = o.augmentation.as_ref().expect("O augmentation");
        assert_eq!((a.kkbeta, a.q_with_l, a.nqlc), (865, false, 5));
        assert_eq!(a.qfunc.len(), 10);
        assert_eq!((a.qfunc[0].i, a.qfunc[0].j, a.qfunc[0].l), (0, 0, None));
        // the file's -1.715226490310000e-7 and -1.022495913510000e-1
        assert_eq!(a.qfunc[0].r2q[0], -1.715_226_490_31e-7);
        assert_eq!(a.q[0][0], -1.022_495_913_51e-1);
    }

    #[test]
    fn parsed_numbers_of_the_paw_files() {
        // PAW: kkbeta is at least the augmentation sphere's cutoff_r_index (QE's read_upf).
        for (name, nbeta, kkbeta, nqf) in [
            ("C.pbe-n-kjpaw_psl.0.1.UPF", 4, 753, 13),
            ("H.pbe-kjpaw.UPF", 2, 579, 3),
        ] {
            let u = parsed(name);
            assert_eq!(u.kind, UpfKind::Paw, "{name}");
            assert_eq!(u.betas.len(), nbeta, "{name}");
            let a = u.augmentation.as_ref().expect("augmentation");
            assert!(a.q_with_l);
            assert_eq!((a.kkbeta, a.qfunc.len()), (kkbeta, nqf), "{name}");
        }
    }

    #[test]
    fn the_scf_reader_takes_ultrasoft_and_paw_files_with_their_charges() {
        for name in FILES {
            let p =
                Pseudopotential::from_file(&data(name)).unwrap_or_else(|e| panic!("{name}: {e}"));
            assert_eq!(
                p.paw().is_some(),
                parsed(name).kind == UpfKind::Paw,
                "{name}"
            );
            let q = p
                .augmentation()
                .expect("an ultrasoft or PAW file has charges")
                .q_integrals();
            let file_q = &parsed(name).augmentation.expect("augmentation").q;
            for (a, b) in q.iter().flatten().zip(file_q.iter().flatten()) {
                assert!(
                    (a - b).abs() < 1e-5 * b.abs().max(1e-3),
                    "{name}: {a} vs {b}"
                );
            }
        }
    }

    /// Largest deviation of Q(G = 0) from PP_Q (relative to max |q_ij|) and the largest
    /// relative deviation of a q_ij above 1e-3 of that.
    fn g0_deviation(name: &str) -> (f64, f64) {
        let u = parsed(name);
        let q = &u.augmentation.as_ref().expect("augmentation").q;
        let aug = built(name);
        let scale = q.iter().flatten().fold(0.0f64, |m, v| m.max(v.abs()));
        let (mut abs, mut rel) = (0.0f64, 0.0f64);
        for (ih, a) in aug.components().iter().enumerate() {
            for (jh, b) in aug.components().iter().enumerate() {
                let v = aug.q_of_g(ih, jh, [0.0; 3]);
                let same = a.l == b.l && a.m == b.m;
                let want = if same { q[a.beta][b.beta] } else { 0.0 };
                assert_eq!(v.im, 0.0);
                abs = abs.max((v.re - want).abs() / scale);
                if want.abs() > 1e-3 * scale {
                    rel = rel.max(((v.re - want) / want).abs());
                }
            }
        }
        (abs, rel)
    }

    #[test]
    fn q_at_g0_is_pp_q() {
        for name in FILES {
            let (abs, rel) = g0_deviation(name);
            eprintln!("{name}: Q(G=0) vs PP_Q: {abs:.2e} of max |q|, {rel:.2e} relative");
            assert!(abs < 1e-6 && rel < 1e-5, "{name}: {abs:e} {rel:e}");
        }
    }

    /// The matrix of the rotation `rot` on the real harmonics of l:
    /// Y_lm(rot r) = sum_m' D[m][m'] Y_lm'(r).
    fn ylm_rotation(l: usize, rot: impl Fn([f64; 3]) -> [f64; 3]) -> Vec<Vec<f64>> {
        let n = 2 * l + 1;
        let mut d = vec![vec![0.0; n]; n];
        let (mut yr, mut y) = ([0.0; 7], [0.0; 7]);
        for (r, w) in sphere_quadrature() {
            real_ylm(l, rot(r), &mut yr);
            real_ylm(l, r, &mut y);
            for (row, a) in d.iter_mut().zip(&yr) {
                for (x, b) in row.iter_mut().zip(&y) {
                    *x += w * a * b;
                }
            }
        }
        d
    }

    /// Q(R G)_ab = sum_a'b' D_aa' D_bb' Q(G)_a'b' for a cubic rotation R, and Q(-G) = Q(G)*.
    fn check_symmetries(name: &str) -> (f64, f64) {
        let mut aug = built(name);
        aug.tabulate(12.0);
        let comps = aug.components().to_vec();
        let rots: [fn([f64; 3]) -> [f64; 3]; 2] = [|r| [r[1], r[2], r[0]], |r| [-r[1], r[0], r[2]]];
        let mut rng = SplitMix64::new(3);
        let (mut rot_err, mut conj_err) = (0.0f64, 0.0f64);
        for rot in rots {
            let d: Vec<Vec<Vec<f64>>> = (0..4).map(|l| ylm_rotation(l, rot)).collect();
            for _ in 0..4 {
                let g = [0.0; 3].map(|_: f64| 8.0 * rng.next_centered());
                let qg = |h: usize, k: usize, g| aug.q_of_g(h, k, g);
                for (ih, a) in comps.iter().enumerate() {
                    for (jh, b) in comps.iter().enumerate() {
                        let mut want = Complex64::new(0.0, 0.0);
                        for (ih2, a2) in comps.iter().enumerate() {
                            for (jh2, b2) in comps.iter().enumerate() {
                                if a2.beta == a.beta && b2.beta == b.beta {
                                    let f = d[a.l][a.m][a2.m] * d[b.l][b.m][b2.m];
                                    want += f * qg(ih2, jh2, g);
                                }
                            }
                        }
                        rot_err = rot_err.max((qg(ih, jh, rot(g)) - want).norm());
                        let minus = qg(ih, jh, g.map(|x| -x));
                        conj_err = conj_err.max((minus - qg(ih, jh, g).conj()).norm());
                    }
                }
            }
        }
        (rot_err, conj_err)
    }

    #[test]
    fn q_of_g_obeys_rotations_and_inversion() {
        for name in [
            "Si.pbe-nl-rrkjus_psl.1.0.0.UPF",
            "C.pbe-n-kjpaw_psl.0.1.UPF",
        ] {
            let (rot, conj) = check_symmetries(name);
            eprintln!("{name}: rotation {rot:.2e}, Q(-G) - conj Q(G) {conj:.2e}");
            assert!(rot < 1e-12 && conj < 1e-14, "{name}: {rot:e} {conj:e}");
        }
    }

    #[test]
    fn tabulated_qrad_matches_direct_integration() {
        for name in FILES {
            let direct = built(name);
            let mut tab = direct.clone();
            tab.tabulate(10.0);
            let n = direct.nbeta;
            let mut worst = 0.0f64;
            for k in 0..997 {
                let q = 10.0 * k as f64 / 997.0;
                for (i, j, l) in (0..n * n * 7).map(|x| (x / (7 * n), (x / 7) % n, x % 7)) {
                    let (a, b) = (direct.qrad(l, i, j, q), tab.qrad(l, i, j, q));
                    worst = worst.max((a - b).abs() / direct.qrad(0, i, i, 0.0).abs().max(1e-3));
                }
            }
            eprintln!("{name}: table vs direct qrad {worst:.2e}");
            assert!(worst < 1e-8, "{name}: {worst:e}");
        }
    }

    fn expect_err(text: &str, path: &str, needle: &str) -> PseudoError {
        let e = upf::parse_v2(text, path).expect_err(needle);
        let s = e.to_string();
        assert!(s.starts_with(path) && e.line.is_some(), "{s}");
        assert!(s.contains(needle), "'{s}' lacks '{needle}'");
        let again = Augmentation::from_upf_str(text, path).expect_err(needle);
        assert_eq!(again, e);
        e
    }

    /// 1-based line of the first `pat` in `text`.
    fn line_of(text: &str, pat: &str) -> usize {
        let at = text.find(pat).expect("pattern");
        text[..at].matches('\n').count() + 1
    }

    #[test]
    fn broken_augmentation_sections_give_errors() {
        let si = text("Si.pbe-nl-rrkjus_psl.1.0.0.UPF");
        // a PP_QIJL block one line (4 values) short
        let start = si.find("<PP_QIJL.1.2.0").expect("block");
        let first = start + si[start..].find('\n').expect("line") + 1;
        let second = first + si[first..].find('\n').expect("line") + 1;
        let short = format!("{}{}", &si[..first], &si[second..]);
        let e = expect_err(&short, "short.upf", "<PP_QIJL.1.2.0> has 1137 values");
        assert_eq!(e.line, Some(line_of(&short, "</PP_QIJL.1.2.0")));
        // PP_Q missing
        let noq = si.replace("<PP_Q>", "<PP_X>").replace("</PP_Q>", "</PP_X>");
        let e = expect_err(&noq, "noq.upf", "missing <PP_Q>");
        assert_eq!(e.line, Some(line_of(&noq, "<PP_AUGMENTATION")));
        // a whole PP_QIJL block missing
        let nol = si.replace("PP_QIJL.3.4.2", "PP_QIJL.3.4.9");
        let e = expect_err(&nol, "nol.upf", "missing <PP_QIJL.3.4.2>");
        assert_eq!(e.line, Some(line_of(&nol, "<PP_AUGMENTATION")));
        // non-finite number
        let nan = si.replacen("6.377052468491163e-10", "NaN", 1);
        let e = expect_err(&nan, "nan.upf", "non-finite value 'NaN' in <PP_QIJL.1.1.0>");
        assert_eq!(e.line, Some(line_of(&si, "6.377052468491163e-10")));
        // pseudised Q near the origin
        let nqf = si.replacen("nqf=\"0\"", "nqf=\"8\"", 1);
        expect_err(&nqf, "nqf.upf", "nqf > 0");
        // PP_Q of the wrong size, and a PP_QIJ file truncated inside a block
        let o = text("O.pbe-rrkjus.UPF");
        let bad_q = o.replacen("3.564535442600000e-1\n", "\n", 1);
        expect_err(&bad_q, "q15.upf", "<PP_Q> has 15 values, expected 16");
        let cut = o.find("</PP_QIJ.2.3>").expect("block") - 200;
        expect_err(&o[..cut], "cut.upf", "never closed");
    }

    #[test]
    fn norm_conserving_files_have_no_augmentation() {
        let p = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("../../tests/data/pseudos/Si.dojo.pbe.upf");
        let nc = std::fs::read_to_string(&p).expect("read");
        let u = upf::parse_v2(&nc, "nc.upf").expect("parse");
        assert_eq!(
            (u.kind, u.augmentation.is_none()),
            (UpfKind::NormConserving, true)
        );
        let e = Augmentation::from_upf_str(&nc, "nc.upf").expect_err("NC");
        assert!(e.message.contains("no augmentation"), "{e}");
    }
}
