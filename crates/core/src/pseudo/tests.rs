//! Tests of the pseudopotential module: parsing of every test file, format twins
//! (CP2K == ABINIT, UPF v1 == v2), analytic GTH transforms against quadrature,
//! HGH-on-a-grid against analytic GTH, and error reporting on broken files.

use super::gth::{gaussian_radial_ft, numeric_radial_ft, GthChannel, GthData};
use super::radial::{qe_msh, simpson, simpson_weights, sph_bessel};
use super::*;
use crate::special::erf;
use std::f64::consts::PI;
use std::path::PathBuf;

fn data(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/data/pseudos")
        .join(name)
}

fn load(name: &str) -> Pseudopotential {
    let p = data(name);
    match Pseudopotential::from_file(&p) {
        Ok(v) => v,
        Err(e) => panic!("{e}"),
    }
}

fn gth_files(ext: &str) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(data("gth"))
        .expect("testdata/gth")
        .map(|e| e.expect("dir entry").path())
        .filter(|p| p.extension().and_then(|e| e.to_str()) == Some(ext))
        .collect();
    v.sort();
    v
}

const UPF_FILES: [&str; 5] = [
    "Si.sg15.upf",
    "Si.dojo.pbe.upf",
    "Si.dojo.lda.upf",
    "Si.pz-hgh.UPF",
    "Si.pz-hgh.v1.UPF",
];

#[test]
fn special_functions() {
    // erf reference values (Abramowitz-Stegun / mpmath)
    let refs = [
        (0.0, 0.0),
        (0.1, 0.1124629160182849),
        (0.5, 0.5204998778130465),
        (1.0, 0.8427007929497149),
        (2.0, 0.9953222650189527),
        (2.9, 0.9999589021219005),
        (3.0, 0.9999779095030014),
        (4.0, 0.9999999845827421),
    ];
    for (x, e) in refs {
        assert!((erf(x) - e).abs() < 5e-16, "erf({x}) = {} vs {e}", erf(x));
        assert!((erf(-x) + e).abs() < 5e-16);
    }
    // j_l: series and closed forms agree around the switch points, and known values
    let closed = |l: usize, x: f64| -> f64 {
        let (s, c) = x.sin_cos();
        match l {
            0 => s / x,
            1 => s / (x * x) - c / x,
            2 => (3.0 / (x * x) - 1.0) * s / x - 3.0 * c / (x * x),
            _ => (15.0 / x.powi(4) - 6.0 / (x * x)) * s - (15.0 / x.powi(3) - 1.0 / x) * c,
        }
    };
    for l in 0..4 {
        for &x in &[0.3, 0.9, 0.999, 1.001, 2.0, 5.0, 17.3, 80.0] {
            let a = sph_bessel(l, x);
            let b = closed(l, x);
            assert!(
                (a - b).abs() < 1e-12 * (1.0 + b.abs()) * 1e2 / x.min(1.0).powi(4),
                "j{l}({x}) {a} {b}"
            );
        }
        // small-x limit x^l/(2l+1)!!
        let x = 1e-4;
        let df = [1.0, 3.0, 15.0, 105.0][l];
        assert!((sph_bessel(l, x) / (x.powi(l as i32) / df) - 1.0).abs() < 1e-8);
    }
    assert_eq!(sph_bessel(0, 0.0), 1.0);
    assert_eq!(sph_bessel(2, 0.0), 0.0);
    // reference values from mpmath (both sides of the series/recurrence switch at x = 2l)
    let refs = [
        (4, 8.0, 0.020880191012225997),
        (4, 7.5, 0.07928459239497931),
        (5, 10.0, -0.05553451162145218),
        (5, 9.5, -0.013688737180120973),
        (6, 12.0, -0.0851848030914177),
        (6, 11.5, -0.06862943344999928),
        (4, 10.0, -0.10558928511769167),
        (4, 30.3, -0.02346729729433342),
        (6, 2.0, 0.0004140409734273241),
        (3, 0.7, 0.003178724856331369),
        (3, 2.9, 0.1424073357017368),
        (2, 0.9, 0.050945154668579684),
        (1, 0.5, 0.16253703063606656),
    ];
    for (l, x, e) in refs {
        let v = sph_bessel(l, x);
        // l <= 3 (what the code needs): 1e-14; l >= 4 (series up to x = 2l): ~1e-13
        let tol = if l <= 3 { 1e-14 } else { 1e-13 };
        assert!(
            (v - e).abs() < tol * e.abs() + 2e-15,
            "j{l}({x}) = {v} vs {e}"
        );
    }
}

#[test]
fn simpson_matches_qe_rule() {
    // odd number of points: exact for cubics on a uniform grid
    let n = 101;
    let h = 0.01;
    let r: Vec<f64> = (0..n).map(|i| i as f64 * h).collect();
    let rab = vec![h; n];
    let f: Vec<f64> = r.iter().map(|x| x * x * x - 2.0 * x).collect();
    assert!((simpson(&f, &rab) - (0.25 - 1.0)).abs() < 1e-14);
    // even number of points: last point dropped (QE behaviour)
    let w = simpson_weights(&rab, 4);
    assert_eq!(w[3], 0.0);
    // msh: first r > 10, forced odd
    let r: Vec<f64> = (0..2000).map(|i| i as f64 * 0.01).collect();
    assert_eq!(qe_msh(&r), 1001); // r[1000]=10.0 is not > 10; first is index 1001 -> 1002 -> odd 1001
    let r2: Vec<f64> = (0..500).map(|i| i as f64 * 0.01).collect();
    assert_eq!(qe_msh(&r2), 499);
}

#[test]
fn parse_all_test_files() {
    for f in gth_files("cp2k").into_iter().chain(gth_files("gth")) {
        let p = Pseudopotential::from_file(&f).unwrap_or_else(|e| panic!("{e}"));
        assert!(p.z_valence > 0.0);
        assert!(p.is_analytic());
        assert_eq!(p.dij.len(), p.projectors.len());
        let zname = f
            .file_name()
            .and_then(|s| s.to_str())
            .unwrap_or_default()
            .to_string();
        let zq: f64 = zname
            .split("-q")
            .nth(1)
            .and_then(|s| s.split('.').next())
            .and_then(|s| s.parse().ok())
            .unwrap_or(-1.0);
        assert_eq!(p.z_valence, zq, "{zname}");
        assert!(
            zname.starts_with(&format!("{}-", p.symbol)),
            "{zname} {}",
            p.symbol
        );
    }
    let si = load("gth/Si-q4.lda.cp2k");
    assert_eq!(si.symbol, "Si");
    assert_eq!(si.lmax, 1);
    assert_eq!(
        si.projectors,
        vec![Projector { l: 0 }, Projector { l: 0 }, Projector { l: 1 }]
    );
    assert_eq!(si.dij[0], vec![5.90692831, -1.26189397, 0.0]);
    assert_eq!(si.dij[1], vec![-1.26189397, 3.25819622, 0.0]);
    assert_eq!(si.dij[2], vec![0.0, 0.0, 2.72701346]);
    assert_eq!(si.functional_hint.as_deref(), Some("LDA"));
    let cu = load("gth/Cu-q11.pbe.gth");
    assert_eq!(cu.projectors.len(), 3 + 2 + 1);
    assert_eq!(cu.lmax, 2);
    assert_eq!(cu.dij[0][2], 1.93595215);
    assert_eq!(cu.dij[2][1], -4.99860696);
    assert_eq!(cu.functional_hint.as_deref(), Some("PBE"));
    let h = load("gth/H-q1.lda.gth");
    assert_eq!(h.lmax, -1);
    assert!(h.projectors.is_empty());
    let c = load("gth/C-q4.lda.cp2k");
    assert_eq!(c.lmax, 1);
    assert_eq!(c.projectors.len(), 1);

    for f in UPF_FILES {
        let p = load(f);
        assert_eq!(p.symbol, "Si");
        assert_eq!(p.z_valence, 4.0);
        assert!(!p.is_analytic());
        for (i, pi) in p.projectors.iter().enumerate() {
            for (j, pj) in p.projectors.iter().enumerate() {
                assert_eq!(p.dij[i][j], p.dij[j][i]);
                if pi.l != pj.l {
                    assert_eq!(p.dij[i][j], 0.0);
                }
            }
        }
    }
    let sg = load("Si.sg15.upf");
    assert_eq!(sg.projectors.len(), 4);
    assert_eq!(sg.lmax, 1);
    assert!(!sg.has_core_correction());
    assert_eq!(sg.core_density_fourier(1.0), 0.0);
    assert_eq!(sg.functional_hint.as_deref(), Some("PBE"));
    let dj = load("Si.dojo.pbe.upf");
    assert_eq!(dj.projectors.len(), 6);
    assert_eq!(dj.lmax, 2);
    assert!(dj.has_core_correction());
    // D_11 = 10.337930497 Ry
    assert!((dj.dij[0][0] - 10.337930497 / 2.0).abs() < 1e-12);
    assert!(load("Si.dojo.lda.upf").has_core_correction());
}

#[test]
fn cp2k_and_abinit_twins_identical() {
    let cp2k = gth_files("cp2k");
    assert!(cp2k.len() >= 30);
    for f in cp2k {
        let twin = f.with_extension("gth");
        let a = Pseudopotential::from_file(&f).unwrap_or_else(|e| panic!("{e}"));
        let b = Pseudopotential::from_file(&twin).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(a, b, "{} vs {}", f.display(), twin.display());
    }
}

fn rel_close(a: &[f64], b: &[f64], tol: f64, what: &str) {
    let scale = b.iter().fold(0.0f64, |m, x| m.max(x.abs()));
    for (k, (x, y)) in a.iter().zip(b).enumerate() {
        assert!(
            (x - y).abs() <= tol * scale,
            "{what} [{k}]: {x} vs {y} (scale {scale})"
        );
    }
}

#[test]
fn gth_projectors_analytic_vs_quadrature() {
    let qs = [0.0, 0.3, 1.0, 2.5, 5.0, 9.0, 15.0];
    for l in 0..3 {
        for (k, rl) in [0.25, 0.42273813, 0.7].iter().enumerate() {
            let mut channels = vec![GthChannel { r: 1.0, h: vec![] }; l];
            channels.push(GthChannel {
                r: *rl,
                h: vec![vec![0.0; 3]; 3],
            });
            let g = GthData {
                rloc: 0.4,
                c: [0.0; 4],
                channels,
            };
            for i in 1..=3 {
                let ana: Vec<f64> = qs.iter().map(|&q| g.projector_fourier(l, i, q)).collect();
                let num: Vec<f64> = qs
                    .iter()
                    .map(|&q| {
                        numeric_radial_ft(|r| g.projector_real(l, i, r), l, q, 14.0 * rl, 20000)
                    })
                    .collect();
                rel_close(&ana, &num, 1e-10, &format!("p_{i}^{l} rl#{k}"));
                // normalisation: int r^2 p^2 dr = 1
                let norm = numeric_radial_ft(
                    |r| g.projector_real(l, i, r).powi(2),
                    0,
                    0.0,
                    14.0 * rl,
                    20000,
                ) / (4.0 * PI);
                assert!((norm - 1.0).abs() < 1e-10, "norm p_{i}^{l} = {norm}");
            }
        }
    }
}

#[test]
fn gth_local_analytic_vs_quadrature() {
    for f in [
        "gth/Si-q4.lda.cp2k",
        "gth/C-q4.pbe.cp2k",
        "gth/Fe-q16.lda.gth",
        "gth/H-q1.lda.cp2k",
    ] {
        let p = load(f);
        let Kind::Gth { data, .. } = &p.kind else {
            panic!("not gth")
        };
        let qs = [0.0, 0.1, 0.7, 1.5, 3.0, 6.0, 12.0];
        let ana: Vec<f64> = qs.iter().map(|&q| data.local_short_fourier(q)).collect();
        let num: Vec<f64> = qs
            .iter()
            .map(|&q| {
                numeric_radial_ft(|r| data.local_short_real(r), 0, q, 16.0 * data.rloc, 20000)
            })
            .collect();
        rel_close(&ana, &num, 1e-10, f);
        // explicit HGH polynomial form
        let s = data.rloc;
        for &q in &qs[1..] {
            let y = (q * s).powi(2);
            let c = data.c;
            let poly = c[0]
                + c[1] * (3.0 - y)
                + c[2] * (15.0 - 10.0 * y + y * y)
                + c[3] * (105.0 - 105.0 * y + 21.0 * y * y - y * y * y);
            let hgh = -4.0 * PI * p.z_valence / (q * q) * (-y / 2.0).exp()
                + (2.0 * PI).powf(1.5) * s.powi(3) * (-y / 2.0).exp() * poly;
            let v = p.local_fourier(q);
            assert!(
                (v - hgh).abs() < 1e-12 * (1.0 + hgh.abs()),
                "{f} q={q}: {v} vs {hgh}"
            );
        }
        // G=0 limit: v(q) + 4 pi Z / q^2 -> g0
        let q = 1e-4;
        let lim = p.local_fourier(q) + 4.0 * PI * p.z_valence / (q * q);
        assert!(
            (lim - p.local_fourier_g0()).abs() < 1e-6 * (1.0 + lim.abs()),
            "{f} g0"
        );
    }
    // the generic Gaussian transform at l=0,n=0: (2 pi)^{3/2} s^3 exp(-q^2 s^2/2)
    let (s, q) = (0.6f64, 1.7f64);
    let e = (2.0 * PI).powf(1.5) * s.powi(3) * (-(q * s) * (q * s) / 2.0).exp();
    assert!((gaussian_radial_ft(0, 0, s, q) - e).abs() < 1e-14 * e);
}

#[test]
fn upf_v1_equals_v2() {
    let a = load("Si.pz-hgh.UPF");
    let b = load("Si.pz-hgh.v1.UPF");
    assert_eq!(a.projectors, b.projectors);
    assert_eq!(a.dij, b.dij);
    assert_eq!(a.lmax, b.lmax);
    assert_eq!(a.local_fourier_g0(), b.local_fourier_g0());
    for q in [0.0, 0.5, 1.0, 3.0, 7.0] {
        assert_eq!(a.local_fourier(q), b.local_fourier(q));
        assert_eq!(a.atomic_density_fourier(q), b.atomic_density_fourier(q));
        for i in 0..a.projectors.len() {
            // v1 stores only the first kbeta points of each beta (as QE reads them), v2 the
            // whole mesh: tiny tails between kbeta_i and kkbeta differ
            let (x, y) = (a.projector_fourier(i, q), b.projector_fourier(i, q));
            assert!(
                (x - y).abs() < 1e-10 * (1.0 + x.abs()),
                "beta_{i}({q}) {x} vs {y}"
            );
        }
    }
    assert_eq!(a.functional_hint.as_deref(), Some("SLA-PZ-NOGX-NOGC"));
    assert_eq!(b.functional_hint.as_deref(), Some("SLA PZ NOGX NOGC"));
}

#[test]
fn hgh_upf_matches_analytic_gth() {
    let u = load("Si.pz-hgh.UPF");
    let g = load("gth/Si-q4.lda.gth");
    assert_eq!(u.projectors, g.projectors);
    let qs: Vec<f64> = (0..=95).map(|k| 0.5 + 0.1 * k as f64).collect();
    for &q in &qs {
        let (a, b) = (u.local_fourier(q), g.local_fourier(q));
        assert!((a - b).abs() < 1e-5 * b.abs(), "local q={q}: {a} vs {b}");
    }
    let (a0, b0) = (u.local_fourier_g0(), g.local_fourier_g0());
    assert!((a0 - b0).abs() < 1e-4 * b0.abs(), "g0 {a0} vs {b0}");
    // the UPF tabulates beta = 2 p_GTH and stores D (Ry) = h/2, i.e. D (Ha) = h/4
    let scale = 1e-5 * g.projector_fourier(0, 0.0).abs();
    for &q in qs.iter().chain([0.0, 0.1].iter()) {
        for i in 0..3 {
            let (a, b) = (u.projector_fourier(i, q), g.projector_fourier(i, q));
            assert!(
                (a - 2.0 * b).abs() < 2.0 * scale,
                "beta_{i}({q}): {a} vs 2*{b}"
            );
        }
    }
    for i in 0..3 {
        for j in 0..3 {
            assert!((u.dij[i][j] - g.dij[i][j] / 4.0).abs() < 1e-8, "D_{i}{j}");
        }
    }
    // the nonlocal kernel sum_ij beta_i(q) D_ij beta_j(q') is the same
    for &(q, qp) in &[(0.5, 1.0), (2.0, 2.0), (4.0, 7.5)] {
        let k = |p: &Pseudopotential| -> f64 {
            let mut s = 0.0;
            for i in 0..3 {
                for j in 0..3 {
                    s += p.projector_fourier(i, q) * p.dij[i][j] * p.projector_fourier(j, qp);
                }
            }
            s
        };
        assert!((k(&u) - k(&g)).abs() < 1e-5 * k(&g).abs());
    }
}

#[test]
fn numeric_form_factor_sanity() {
    for f in UPF_FILES {
        let p = load(f);
        // atomic density integrates to z_valence (HGH file has zero RHOATOM -> Gaussian guess)
        assert!((p.atomic_density_fourier(0.0) - 4.0).abs() < 1e-12, "{f}");
        assert!(p.atomic_density_fourier(3.0).abs() < 4.0);
        // G=0 limit of the erf trick: v(q) + 4 pi Z/q^2 -> g0 (pi Z from the erf part)
        let q = 1e-3;
        let lim = p.local_fourier(q) + 4.0 * PI * 4.0 / (q * q);
        assert!(
            (lim - p.local_fourier_g0()).abs() < 1e-4,
            "{f}: {lim} vs {}",
            p.local_fourier_g0()
        );
        // continuity of projectors at q -> 0
        for i in 0..p.projectors.len() {
            let (a, b) = (p.projector_fourier(i, 0.0), p.projector_fourier(i, 1e-9));
            assert!((a - b).abs() < 1e-8 * (1.0 + a.abs()));
            if p.projectors[i].l > 0 {
                assert_eq!(a, 0.0);
            }
        }
    }
    let d = load("Si.dojo.pbe.upf");
    let c0 = d.core_density_fourier(0.0);
    assert!(c0 > 0.1 && c0.is_finite());
    assert!(d.core_density_fourier(5.0).abs() < c0);
    // core density at q=0 equals the direct QE integral 4 pi sum w r^2 rho_c
    let Kind::Numeric(n) = &d.kind else { panic!() };
    assert!(n.msh() % 2 == 1);
    // GTH guess: Gaussian with DFTK's decay length (Si: 10 core, 4 valence -> 1.1 bohr)
    let g = load("gth/Si-q4.lda.cp2k");
    assert_eq!(g.density_decay_length(), 1.1);
    assert!((g.atomic_density_fourier(1.0) - 4.0 * (-1.21f64).exp()).abs() < 1e-14);
    assert!(!g.has_core_correction());
    assert_eq!(g.core_density_fourier(0.0), 0.0);
    // batch helpers
    let qs = [0.5, 1.0];
    assert_eq!(
        d.local_fourier_many(&qs),
        vec![d.local_fourier(0.5), d.local_fourier(1.0)]
    );
    assert_eq!(
        d.projector_fourier_many(1, &qs)[1],
        d.projector_fourier(1, 1.0)
    );
}

fn expect_err(text: &str, path: &str, needle: &str) -> PseudoError {
    match Pseudopotential::from_str(text, path) {
        Ok(_) => panic!("{path}: expected an error containing '{needle}'"),
        Err(e) => {
            let s = e.to_string();
            assert!(s.starts_with(path), "{s}");
            assert!(s.contains(needle), "'{s}' lacks '{needle}'");
            e
        }
    }
}

#[test]
fn broken_files_give_errors() {
    let v2 = std::fs::read_to_string(data("Si.dojo.pbe.upf")).expect("read");
    // cut in half (mid PP_BETA/PP_DIJ region)
    let half = &v2[..v2.len() / 2];
    let e = expect_err(half, "half.upf", "missing <PP_NLCC>");
    assert!(e.line.is_some());
    // cut mid PP_LOCAL array and closing tags removed
    let cut = v2.find("-5.3050397540E-01").expect("marker");
    expect_err(&v2[..cut], "cut.upf", "never closed");
    // every truncation point gives an error, never a panic
    for k in (0..v2.len()).step_by(v2.len() / 97) {
        if let Some(part) = v2.get(..k) {
            assert!(
                Pseudopotential::from_str(part, "t.upf").is_err(),
                "truncated at {k} parsed"
            );
        }
    }
    // non-number in PP_LOCAL, with the right line
    let lt = v2.find("<PP_LOCAL").expect("local");
    let first = lt + v2[lt..].find("-9.5328633012E+00").expect("value");
    let garbled = format!("{}-9.53X8E+00{}", &v2[..first], &v2[first + 17..]);
    let e = expect_err(
        &garbled,
        "garbled.upf",
        "expected a number in <PP_LOCAL>, found '-9.53X8E+00'",
    );
    assert_eq!(e.line, Some(478));
    let nan = format!("{}NaN{}", &v2[..first], &v2[first + 17..]);
    expect_err(&nan, "nan.upf", "non-finite");
    // wrong count
    let short = v2.replacen(
        "-5.3050397540E-01   -5.3015241545E-01",
        "-5.3050397540E-01",
        1,
    );
    expect_err(&short, "short.upf", "declares size 1510 but contains 1509");
    // missing tag
    let nodij = v2.replace("PP_DIJ", "PP_XIJ");
    expect_err(&nodij, "nodij.upf", "missing <PP_DIJ>");
    // a file called ultrasoft without augmentation charges
    let us = v2.replacen("pseudo_type=\"NC\"", "pseudo_type=\"US\"", 1);
    expect_err(&us, "us.upf", "missing <PP_AUGMENTATION>");
    // UPF v1 truncated / garbled
    let v1 = std::fs::read_to_string(data("Si.pz-hgh.v1.UPF")).expect("read");
    expect_err(&v1[..v1.len() / 2], "half1.upf", "never closed");
    let g1 = v1.replacen("6.513442611103688E-005", "abc", 1);
    expect_err(&g1, "g1.upf", "expected a number in <PP_R>");
    for k in (0..v1.len()).step_by(v1.len() / 53) {
        if let Some(part) = v1.get(..k) {
            let _ = Pseudopotential::from_str(part, "t1.upf");
        }
    }
    // GTH truncated / garbled
    let g = std::fs::read_to_string(data("gth/Cu-q11.lda.gth")).expect("read");
    for k in 0..g.len() {
        if let Some(part) = g.get(..k) {
            let _ = Pseudopotential::from_str(part, "cu.gth");
        }
    }
    let cut = g.rfind("0.26614275").expect("marker");
    expect_err(&g[..cut], "cu.gth", "unexpected end of file");
    let c = std::fs::read_to_string(data("gth/Cu-q11.lda.cp2k")).expect("read");
    expect_err(
        &c.replace("-1.44262198", "x1.44"),
        "cu.cp2k",
        "expected a number",
    );
    for k in 0..c.len() {
        if let Some(part) = c.get(..k) {
            let _ = Pseudopotential::from_str(part, "cu.cp2k");
        }
    }
    expect_err(
        "hello world\nthis is not\na pseudopotential\n",
        "junk.txt",
        "unrecognised",
    );
    expect_err("", "empty", "unrecognised");
    let e = Pseudopotential::from_file(&data("does-not-exist.upf")).expect_err("missing file");
    assert!(e.to_string().contains("cannot read file"));
}

#[test]
fn projectors_above_l3_are_refused_with_the_file_and_reason() {
    // UPF v2: the first projector of the SG15 file turned into l = 4.
    let v2 = std::fs::read_to_string(data("Si.sg15.upf")).expect("read");
    let at = v2.find("<PP_BETA.1").expect("first projector");
    let l_at = at + v2[at..].find("angular_momentum=\"0\"").expect("its l");
    let g = format!(
        "{}angular_momentum=\"4\"{}",
        &v2[..l_at],
        &v2[l_at + "angular_momentum=\"0\"".len()..]
    );
    let e = expect_err(&g, "g.upf", "l = 4");
    assert!(e.to_string().contains("up to l = 3"), "{e}");
    // UPF v1: "1    0   Beta L" -> l = 5.
    let v1 = std::fs::read_to_string(data("Si.pz-hgh.v1.UPF")).expect("read");
    let h = v1.replacen(
        "    1    0             Beta    L",
        "    1    5             Beta    L",
        1,
    );
    assert_ne!(h, v1, "the v1 projector line was found");
    expect_err(&h, "h.upf", "l = 5");
}

#[test]
fn abinit_gth_rows_with_trailing_labels_read_like_without() {
    // QE's and DFTK's copies of the pspcod-10 files end every line with a label
    // ("rp, nprj, hp", "k11, k12", ...): the numbers of each row are read, the rest ignored.
    let files = gth_files("gth");
    assert!(files.len() >= 30);
    for f in files {
        let text = std::fs::read_to_string(&f).expect("read");
        let labelled: String = text
            .lines()
            .enumerate()
            .map(|(i, l)| {
                if i == 0 {
                    format!("{l}\n")
                } else {
                    format!("{l}    rp, nprj, hp, kp (label {i})\n")
                }
            })
            .collect();
        let name = f.display().to_string();
        let a = Pseudopotential::from_str(&text, &name).unwrap_or_else(|e| panic!("{e}"));
        let b = Pseudopotential::from_str(&labelled, &name).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(a, b, "{name}: labels changed what was read");
    }
}

#[test]
fn psp8_reads_the_same_numbers_as_its_upf_twin() {
    // PseudoDojo nc-sr-04 PBE standard Si, as psp8 and as the UPF ONCVPSP wrote with it: the
    // psp8 grid stops at 5.99 bohr (the UPF one at 15.09), where the projectors and the core
    // charge are zero; the UPF's local potential keeps a tail r V + Z ~ -2e-6 beyond it (and
    // the valence density its tail), so those form factors agree less closely.
    let upf = load("Si.dojo.pbe.upf");
    let psp8 = load("Si.dojo.pbe.psp8");
    assert_eq!(
        (psp8.symbol.as_str(), psp8.z_valence, psp8.projectors.len()),
        ("Si", 4.0, 6)
    );
    assert!(psp8.has_core_correction());
    // The valence density (starting guess only) is read and normalised to the valence charge.
    assert!((psp8.atomic_density_fourier(0.0) - 4.0).abs() < 1e-12);
    // The UPF prints 11 significant digits, the psp8 14.
    let close = |a: f64, b: f64, tol: f64, what: &str| {
        assert!(
            (a - b).abs() <= tol * b.abs().max(1e-2),
            "{what}: {a} vs {b}"
        )
    };
    for (a, b) in psp8.dij.iter().flatten().zip(upf.dij.iter().flatten()) {
        close(*a, *b, 1e-9, "D_ij");
    }
    for q in [0.0, 0.3, 1.0, 2.5, 6.0, 11.0] {
        close(psp8.local_fourier(q), upf.local_fourier(q), 1e-4, "local");
        close(
            psp8.core_density_fourier(q),
            upf.core_density_fourier(q),
            1e-9,
            "core",
        );
        // The UPF cuts every projector at r = 1.95 (zero from 1.96 on); the psp8 d projectors
        // go on to 2.01 bohr (3e-5 at 1.96, decaying), a difference of up to 2e-5 in their transforms.
        for i in 0..6 {
            let (a, b) = (psp8.projector_fourier(i, q), upf.projector_fourier(i, q));
            let tol = if i < 4 {
                1e-9 * b.abs().max(1e-3)
            } else {
                3e-5
            };
            assert!((a - b).abs() <= tol, "projector {i} at q = {q}: {a} vs {b}");
        }
    }
}

#[test]
fn broken_psp8_files_are_named_errors() {
    let text = std::fs::read_to_string(data("Si.dojo.pbe.psp8")).expect("read");
    let so = text.replacen(
        "1     1           extension_switch",
        "2     1           extension_switch",
        1,
    );
    expect_err(&so, "so.psp8", "spin-orbit psp8");
    let cut = text.find("\n4\n").expect("the local potential's line");
    let e = expect_err(&text[..cut + 3], "cut.psp8", "the file ends where");
    assert!(e.line.is_some());
    let garbled = text.replacen("3.1595742774954D-02", "3.15957X2774954D-02", 1);
    let e = expect_err(&garbled, "garbled.psp8", "expected 4 numbers");
    assert_eq!(e.line, Some(9));
    // Cutting whole lines anywhere in the data is an error; any cut or byte change never panics.
    let data_end = text.find("<INPUT>").expect("echo");
    for k in (0..data_end).step_by(data_end / 89) {
        let part = &text[..text[..k].rfind('\n').map_or(0, |i| i + 1)];
        assert!(
            Pseudopotential::from_str(part, "t.psp8").is_err(),
            "cut at {k} parsed"
        );
    }
    assert!(text.is_ascii());
    let bytes = text.as_bytes();
    for k in (0..bytes.len()).step_by(bytes.len() / 211) {
        let _ = Pseudopotential::from_str(&text[..k], "t.psp8");
        let mut m = bytes.to_vec();
        m[k] = b"9-.DEx \n"[k % 8];
        let _ = Pseudopotential::from_str(&String::from_utf8_lossy(&m), "m.psp8");
    }
}

#[test]
fn random_mutations_and_cuts_of_every_format_never_panic() {
    // Every reader (CP2K and ABINIT-10 GTH, UPF v1 and v2, psp8): random byte changes,
    // insertions and deletions, and cuts, give Ok or a PseudoError, never a panic.
    let files = [
        "gth/Si-q4.lda.cp2k",
        "gth/Si-q4.lda.gth",
        "Si.pz-hgh.v1.UPF",
        "Si.dojo.pbe.upf",
        "Si.dojo.pbe.psp8",
    ];
    let mut state: u64 = 0x2545_f491_4f6c_dd1d;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state as usize
    };
    let alphabet = b"0123456789.-+eEdD \n<>=\"/abcxyzX";
    for name in files {
        let text = std::fs::read_to_string(data(name)).expect("read");
        for _ in 0..300 {
            let mut bytes = text.clone().into_bytes();
            for _ in 0..1 + next() % 3 {
                let pos = next() % bytes.len();
                match next() % 3 {
                    0 => {
                        bytes.remove(pos);
                    }
                    1 => bytes.insert(pos, alphabet[next() % alphabet.len()]),
                    _ => bytes[pos] = alphabet[next() % alphabet.len()],
                }
            }
            let mutated = String::from_utf8_lossy(&bytes);
            let _ = Pseudopotential::from_str(&mutated, name);
            let cut = next() % (mutated.len() + 1);
            if let Some(part) = mutated.get(..cut) {
                let _ = Pseudopotential::from_str(part, name);
            }
        }
    }
}

/// PseudoDojo's UPF carries its pseudo-atom's 3S and 3P (`PP_PSWFC`): both read, normalised
/// on QE's radial cut-off of 10 bohr (the 3P's tail beyond it holds 3e-4), and the p form factor vanishes at q = 0; a `PP_CHI` without its l
/// is refused by name. SG15 and HGH files have none.
#[test]
fn upf_atomic_wavefunctions_are_read() {
    let dj = load("Si.dojo.pbe.upf");
    let orbitals = dj.atomic_orbitals();
    let labels: Vec<(&str, usize, f64)> = (orbitals.iter())
        .map(|o| (o.label.as_str(), o.l, o.occupation))
        .collect();
    assert_eq!(labels, [("3S", 0, 2.0), ("3P", 1, 2.0)]);
    for o in &orbitals {
        assert!(
            (o.norm2() - 1.0).abs() < 1e-3,
            "{} norm {}",
            o.label,
            o.norm2()
        );
    }
    assert!(orbitals[1].fourier(0.0).abs() < 1e-12);
    assert!(load("Si.sg15.upf").atomic_orbitals().is_empty());
    assert!(load("Si.pz-hgh.UPF").atomic_orbitals().is_empty());
    let text = std::fs::read_to_string(data("Si.dojo.pbe.upf")).unwrap();
    let broken = text.replacen("label=\"3S\"\nl=\"0\"", "label=\"3S\"", 1);
    assert_ne!(broken, text);
    let e = Pseudopotential::from_str(&broken, "Si.dojo.pbe.upf").unwrap_err();
    assert!(e.to_string().contains("PP_CHI.1"), "{e}");
}

/// A UPF v1 `PP_PSWFC` (a `label l occupation` line, then the mesh values) is read as v2's
/// is; a line without its l is refused by name.
#[test]
fn upf_v1_atomic_wavefunctions_are_read() {
    let text = std::fs::read_to_string(data("Si.pz-hgh.v1.UPF")).unwrap();
    let r_start = text.find("<PP_R>").unwrap() + "<PP_R>".len();
    let r_end = text.find("</PP_R>").unwrap();
    let mesh = &text[r_start..r_end];
    let with = |line: &str| {
        text.replacen("    0    3  ", "    1    3  ", 1).replacen(
            "<PP_PSWFC>\n",
            &format!("<PP_PSWFC>\n{line}\n{mesh}\n"),
            1,
        )
    };
    let p = Pseudopotential::from_str(&with("3S    0  2.00  Wavefunction"), "v1").unwrap();
    let o = p.atomic_orbitals();
    assert_eq!(o.len(), 1);
    assert_eq!(
        (o[0].label.as_str(), o[0].l, o[0].occupation),
        ("3S", 0, 2.0)
    );
    let e = Pseudopotential::from_str(&with("3S    s  2.00  Wavefunction"), "v1").unwrap_err();
    assert!(e.to_string().contains("label l occupation"), "{e}");
}
