//! Tests of the xc module: reference values (independent 30-digit evaluation of
//! the same published formulas with QE's constants), finite-difference checks
//! of every potential, spin consistency, thresholds and special cases.

use super::*;

fn rel_close(a: f64, b: f64, rtol: f64, atol: f64) -> bool {
    (a - b).abs() <= rtol * a.abs().max(b.abs()) + atol
}

#[track_caller]
fn assert_close(a: f64, b: f64, rtol: f64, atol: f64, what: &str) {
    assert!(
        rel_close(a, b, rtol, atol),
        "{what}: {a:.17e} vs {b:.17e} (diff {:.3e})",
        a - b
    );
}

/// Density giving Wigner-Seitz radius `rs` with QE's `PI34`.
fn rho_of_rs(rs: f64) -> f64 {
    (PI34 / rs).powi(3)
}

// ---------------------------------------------------------------- reference values

/// (rs, eps_x, eps_c PZ, PW, VWN) unpolarised.
const REF_UNPOL: [(f64, f64, f64, f64, f64); 4] = [
    (
        0.5,
        -0.916_330_586_566_285_3,
        -0.076_050_024_495_974_24,
        -0.076_619_029_223_376_2,
        -0.077_063_307_023_447_19,
    ),
    (
        1.0,
        -0.458_165_293_283_142_7,
        -0.059_632_066_378_912_96,
        -0.059_773_864_184_404_09,
        -0.060_018_686_442_541_09,
    ),
    (
        2.0,
        -0.229_082_646_641_571_3,
        -0.045_091_213_633_848_35,
        -0.044_759_590_030_785_96,
        -0.044_782_788_614_621_83,
    ),
    (
        5.0,
        -0.091_633_058_656_628_53,
        -0.028_338_958_789_361_36,
        -0.028_216_261_068_973_75,
        -0.028_133_762_289_731_4,
    ),
];

/// (rs, ferro PZ, PW, VWN, zeta = 0.4 PZ, PW, VWN).
const REF_POL: [(f64, [f64; 3], [f64; 3]); 4] = [
    (
        0.5,
        [
            -0.040_321_040_170_903_13,
            -0.040_189_033_582_465_89,
            -0.040_118_271_842_584_05,
        ],
        [
            -0.071_086_027_958_656_05,
            -0.072_510_976_359_462_32,
            -0.072_967_701_619_747_27,
        ],
    ),
    (
        1.0,
        [
            -0.031_701_263_537_906_14,
            -0.031_592_478_127_710_37,
            -0.031_528_061_292_613_49,
        ],
        [
            -0.055_751_508_025_341_6,
            -0.056_481_349_797_304_43,
            -0.056_774_554_869_985_46,
        ],
    ),
    (
        2.0,
        [
            -0.024_089_761_492_606_18,
            -0.023_909_364_291_508_08,
            -0.023_857_184_837_738,
        ],
        [
            -0.042_173_382_699_745_18,
            -0.042_224_770_023_135_94,
            -0.042_329_220_993_196_93,
        ],
    ),
    (
        5.0,
        [
            -0.015_519_869_684_165_72,
            -0.015_446_861_803_601_68,
            -0.015_434_386_179_887_88,
        ],
        [
            -0.026_557_942_196_479_58,
            -0.026_578_890_979_337_61,
            -0.026_583_277_689_643_62,
        ],
    ),
];

#[test]
fn known_values_unpolarised_lda() {
    for &(rs, ex, pz, pw, vwn) in &REF_UNPOL {
        assert_close(slater::slater(rs).0, ex, 1e-13, 0.0, "slater");
        assert_close(pz81::pz(rs).0, pz, 1e-13, 0.0, "pz");
        assert_close(pw92::pw(rs).0, pw, 1e-13, 0.0, "pw");
        assert_close(vwn::vwn(rs).0, vwn, 1e-13, 0.0, "vwn");
        // and through the public driver (rs != 1 for PZ: branch switch at rs = 1)
        let rho = [rho_of_rs(rs)];
        for (f, ec) in [
            (Functional::LdaPz, pz),
            (Functional::LdaPw, pw),
            (Functional::LdaVwn, vwn),
        ] {
            if f == Functional::LdaPz && rs == 1.0 {
                continue;
            }
            let out = evaluate(f, &[&rho], &[]);
            assert_close(out.e[0] / rho[0], ex + ec, 1e-12, 0.0, f.name());
            assert!(out.vsigma.is_empty());
        }
    }
    // Literature: eps_c(rs = 2) = -0.0451 (PZ81), -0.04476 (PW92), -0.04478 (VWN5) Ha.
    assert!((pz81::pz(2.0).0 + 0.0451).abs() < 1e-4);
    assert!((pw92::pw(2.0).0 + 0.04476).abs() < 1e-5);
    assert!((vwn::vwn(2.0).0 + 0.04478).abs() < 1e-5);
}

/// Polarised correlation kernel `(rs, zeta) -> (eps, v_up, v_dw)`.
type SpinCorr = fn(f64, f64) -> (f64, f64, f64);

#[test]
fn known_values_polarised_lda() {
    for &(rs, ferro, z04) in &REF_POL {
        let fns: [SpinCorr; 3] = [pz81::pz_spin, pw92::pw_spin, vwn::vwn_spin];
        for (k, f) in fns.iter().enumerate() {
            assert_close(f(rs, 1.0).0, ferro[k], 1e-12, 0.0, "ferro");
            assert_close(f(rs, 0.4).0, z04[k], 1e-12, 0.0, "zeta=0.4");
        }
    }
    // slater_spin at rho = 0.3, zeta = 0.4
    assert_close(
        slater::slater_spin(0.3, 0.4).0,
        -0.512_269_938_182_808_2,
        1e-13,
        0.0,
        "slater_spin",
    );
}

#[test]
fn known_values_pbe() {
    // (rho, sigma, e_x^LDA, e_c^LDA, sx, sc, sc_spin(zeta = 0.4)) per volume
    let refs = [
        (
            0.05,
            0.01,
            -0.013_604_368_794_741_78,
            -0.002_414_967_277_350_102,
            -0.001_899_742_008_672_342,
            0.001_314_373_177_011_742,
            0.001_267_977_309_534_843,
        ),
        (
            0.3,
            0.2,
            -0.148_324_672_136_449_5,
            -0.018_462_119_814_332_17,
            -0.004_073_334_188_825_351,
            0.003_465_364_983_356_644,
            0.003_378_707_269_840_806,
        ),
        (
            2.0,
            1.5,
            -1.861_051_472_698_199,
            -0.154_021_855_386_988_7,
            -0.002_516_684_264_110_094,
            0.002_471_130_463_683_873,
            0.002_423_403_727_730_334,
        ),
    ];
    for (rho, sig, lx, lc, sx, sc, scs) in refs {
        assert_close(pbe::pbex(rho, sig).0, sx, 1e-12, 0.0, "pbex");
        assert_close(pbe::pbec(rho, sig).0, sc, 1e-12, 0.0, "pbec");
        assert_close(
            pbe::pbec_spin(rho, 0.4, sig).0,
            scs,
            1e-12,
            0.0,
            "pbec_spin",
        );
        let out = evaluate(Functional::Pbe, &[&[rho]], &[&[sig]]);
        assert_close(out.e[0], lx + lc + sx + sc, 1e-12, 0.0, "pbe total");
    }
}

// ---------------------------------------------------------------- finite differences

fn e_at(f: Functional, rho: &[f64], sigma: &[f64]) -> f64 {
    let r: Vec<[f64; 1]> = rho.iter().map(|&x| [x]).collect();
    let s: Vec<[f64; 1]> = sigma.iter().map(|&x| [x]).collect();
    let rr: Vec<&[f64]> = r.iter().map(|x| &x[..]).collect();
    let ss: Vec<&[f64]> = s.iter().map(|x| &x[..]).collect();
    evaluate(f, &rr, &ss).e[0]
}

/// Fourth-order central difference of `g` at step `h`, with the roundoff
/// allowance `20 eps |e| / h` (the energy per volume `e` is dominated by the
/// LDA part, so tiny gradient corrections cannot be differenced more precisely).
fn fd4(g: impl Fn(f64) -> f64, h: f64, e_scale: f64) -> (f64, f64) {
    let d = (-g(2.0 * h) + 8.0 * g(h) - 8.0 * g(-h) + g(-2.0 * h)) / (12.0 * h);
    (d, 20.0 * f64::EPSILON * e_scale.abs() / h)
}

/// Checks all potentials of one point against central differences
/// (relative tolerance 1e-6, plus roundoff allowance).
fn check_fd(f: Functional, rho: &[f64], sigma: &[f64]) {
    let rr: Vec<[f64; 1]> = rho.iter().map(|&x| [x]).collect();
    let ss: Vec<[f64; 1]> = sigma.iter().map(|&x| [x]).collect();
    let rr_: Vec<&[f64]> = rr.iter().map(|x| &x[..]).collect();
    let ss_: Vec<&[f64]> = ss.iter().map(|x| &x[..]).collect();
    let out = evaluate(f, &rr_, &ss_);
    let e0 = out.e[0];
    let ctx = format!("{} rho={rho:?} sigma={sigma:?}", f.name());
    for s in 0..rho.len() {
        let shifted = |dh: f64| {
            let mut p = rho.to_vec();
            p[s] += dh;
            e_at(f, &p, sigma)
        };
        let (fd, atol) = fd4(shifted, 1e-3 * rho[s], e0);
        assert_close(out.vrho[s][0], fd, 1e-6, atol, &format!("vrho[{s}] {ctx}"));
    }
    if f.is_gga() {
        for j in 0..sigma.len() {
            // diagonal sigmas: relative step (they must stay positive); the
            // off-diagonal one: step relative to the diagonal ones.
            let base = if j == 1 {
                sigma[1].abs().max(1e-2 * (sigma[0] + sigma[2]))
            } else {
                sigma[j]
            };
            let shifted = |dh: f64| {
                let mut p = sigma.to_vec();
                p[j] += dh;
                e_at(f, rho, &p)
            };
            let (fd, atol) = fd4(shifted, 1e-2 * base, e0);
            assert_close(
                out.vsigma[j][0],
                fd,
                1e-6,
                atol,
                &format!("vsigma[{j}] {ctx}"),
            );
        }
    }
}

const FD_RHOS: [f64; 4] = [0.002, 0.03, 0.4, 5.0];
/// sigma = c rho^(8/3): reduced gradient s = sqrt(c / 38.3) ~ 0.04 .. 2.3.
const FD_C: [f64; 4] = [0.05, 1.0, 10.0, 200.0];

#[test]
fn potentials_match_finite_differences_unpolarised() {
    for f in Functional::ALL {
        for rho in FD_RHOS {
            for c in FD_C {
                check_fd(f, &[rho], &[c * rho.powf(8.0 / 3.0)]);
            }
        }
    }
}

/// Spin densities and libxc sigmas for total `rho`, polarisation `zeta` and gradient strength `c`.
fn spin_point(rho: f64, zeta: f64, c: f64) -> ([f64; 2], [f64; 3]) {
    let u = 0.5 * rho * (1.0 + zeta);
    let d = 0.5 * rho * (1.0 - zeta);
    let e1 = [1.0, 0.2, 0.0];
    let e2 = [0.3, -0.5, 0.1];
    let n1 = e1.iter().map(|x| x * x).sum::<f64>().sqrt();
    let n2 = e2.iter().map(|x| x * x).sum::<f64>().sqrt();
    let gu: Vec<f64> = e1
        .iter()
        .map(|x| x / n1 * (c * u.powf(8.0 / 3.0)).sqrt())
        .collect();
    let gd: Vec<f64> = e2
        .iter()
        .map(|x| x / n2 * (c * d.powf(8.0 / 3.0)).sqrt())
        .collect();
    let dot = |a: &[f64], b: &[f64]| a.iter().zip(b).map(|(x, y)| x * y).sum::<f64>();
    ([u, d], [dot(&gu, &gu), dot(&gu, &gd), dot(&gd, &gd)])
}

#[test]
fn potentials_match_finite_differences_polarised() {
    for f in Functional::ALL {
        for rho in FD_RHOS {
            for zeta in [0.0, 0.3, -0.6, 0.95] {
                for c in FD_C {
                    let (r, s) = spin_point(rho, zeta, c);
                    check_fd(f, &r, &s);
                }
            }
        }
    }
}

// ---------------------------------------------------------------- spin consistency

#[test]
fn polarised_at_zeta_zero_equals_unpolarised() {
    for f in Functional::ALL {
        // QE's pbec_spin uses gamma = 0.031091 instead of (1 - ln 2)/pi^2: ~1e-5
        // relative difference in H only, hence the looser PBE tolerance.
        let tol = if f.is_gga() { 1e-6 } else { 1e-13 };
        for rho in FD_RHOS {
            for c in FD_C {
                let sig = c * rho.powf(8.0 / 3.0);
                let unp = evaluate(f, &[&[rho]], &[&[sig]]);
                let q = 0.25 * sig;
                let h = 0.5 * rho;
                let pol = evaluate(f, &[&[h], &[h]], &[&[q], &[q], &[q]]);
                assert_close(pol.e[0], unp.e[0], tol, 0.0, f.name());
                assert_close(pol.vrho[0][0], unp.vrho[0][0], tol, 0.0, f.name());
                assert_close(pol.vrho[1][0], unp.vrho[0][0], tol, 0.0, f.name());
                if f.is_gga() {
                    // d e / d sigma = sum_j vsigma_j d sigma_j / d sigma
                    let vs = 0.25 * (pol.vsigma[0][0] + pol.vsigma[1][0] + pol.vsigma[2][0]);
                    assert_close(vs, unp.vsigma[0][0], 2e-4, 0.0, "vsigma");
                    // with QE's unpolarised gamma the spin formula reduces exactly
                    let (sc, v1, _, v2) = pbe::pbec_spin_gamma(rho, 0.0, sig, pbe::GAMMA_UNPOL);
                    let (sc0, v10, v20) = pbe::pbec(rho, sig);
                    assert_close(sc, sc0, 1e-12, 0.0, "pbec_spin(gamma_unpol)");
                    assert_close(v1, v10, 1e-12, 0.0, "pbec_spin(gamma_unpol) v1");
                    assert_close(v2, v20, 1e-12, 0.0, "pbec_spin(gamma_unpol) v2");
                    // exchange part alone is exact
                    let x = pbe_x_spin_point(h, h, q, q, None);
                    let (sx, v1, v2) = pbe::pbex(rho, sig);
                    assert_close(x.e, sx, 1e-13, 0.0, "pbex spin");
                    assert_close(x.vu, v1, 1e-13, 0.0, "pbex spin v1");
                    assert_close(0.25 * (x.vuu + x.vdd), v2, 1e-13, 0.0, "pbex spin v2");
                }
            }
        }
    }
}

/// Unpolarised exchange (LDA + PBE correction) at (rho, sigma): (e, v, vsigma).
fn ex_unpol(rho: f64, sigma: f64) -> (f64, f64, f64) {
    let (ex, vx) = slater::slater(PI34 / rho.cbrt());
    let (sx, v1, v2) = pbe::pbex(rho, sigma);
    (rho * ex + sx, vx + v1, v2)
}

#[test]
fn exchange_spin_scaling() {
    for rho in FD_RHOS {
        for zeta in [0.0, 0.3, -0.6, 0.95, 1.0] {
            for c in FD_C {
                let ([u, d], [suu, _, sdd]) = spin_point(rho, zeta, c);
                let (exs, vxu, vxd) = slater::slater_spin(u + d, (u - d) / (u + d));
                let gc = pbe_x_spin_point(u, d, suu, sdd, None);
                let e_spin = (u + d) * exs + gc.e;
                let (eu, vu, wu) = ex_unpol(2.0 * u, 4.0 * suu);
                let (ed, vd, wd) = if d > 0.0 {
                    ex_unpol(2.0 * d, 4.0 * sdd)
                } else {
                    (0.0, 0.0, 0.0)
                };
                assert_close(e_spin, 0.5 * (eu + ed), 1e-13, 1e-300, "e_x scaling");
                assert_close(vxu + gc.vu, vu, 1e-13, 0.0, "v_x up scaling");
                assert_close(vxd + gc.vd, vd, 1e-13, 1e-300, "v_x dw scaling");
                assert_close(gc.vuu, 2.0 * wu, 1e-13, 0.0, "vsigma_uu scaling");
                assert_close(gc.vdd, 2.0 * wd, 1e-13, 1e-300, "vsigma_dd scaling");
            }
        }
    }
}

// ---------------------------------------------------------------- thresholds / special cases

fn all_finite(o: &XcOutput) -> bool {
    o.e.iter()
        .chain(o.vrho.iter().flatten())
        .chain(o.vsigma.iter().flatten())
        .all(|x| x.is_finite())
}

#[test]
fn thresholds_give_exact_zero_and_no_nan() {
    for f in Functional::ALL {
        // unpolarised: rho = 0, below LDA threshold, below GGA thresholds
        let rho = [0.0, 1e-10, 5e-11, 0.0, 5e-7, 0.1, 0.1];
        let sig = [0.0, 0.0, 1.0, 1.0, 1e-3, 1e-10, 0.0];
        let o = evaluate(f, &[&rho], &[&sig]);
        assert!(all_finite(&o), "{}", f.name());
        for i in 0..4 {
            assert_eq!(o.e[i], 0.0);
            assert_eq!(o.vrho[0][i], 0.0);
        }
        if f.is_gga() {
            let lda = evaluate(Functional::LdaPw, &[&rho], &[]);
            for i in 0..rho.len() {
                // every point here is below a GGA threshold: pure LDA (PW92)
                assert_eq!(o.e[i], lda.e[i]);
                assert_eq!(o.vrho[0][i], lda.vrho[0][i]);
                assert_eq!(o.vsigma[0][i], 0.0);
            }
        }
        // polarised
        let up = [0.0, 6e-11, 0.3, 0.3, 0.0, 1e-11, 5e-7];
        let dw = [0.0, 3e-11, 0.0, 0.0, 0.2, 0.2, 4e-7];
        let suu = [0.0, 1.0, 0.5, 0.0, 0.0, 1e-3, 1.0];
        let sud = [0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0];
        let sdd = [0.0, 1.0, 0.0, 0.0, 0.3, 0.5, 1.0];
        let o = evaluate(f, &[&up, &dw], &[&suu, &sud, &sdd]);
        assert!(all_finite(&o), "{}", f.name());
        assert_eq!(o.e[0], 0.0);
        assert_eq!(o.e[1], 0.0); // |rho_t| = 9e-11 <= 1e-10
        assert!(o.e[2] < 0.0 && o.e[4] < 0.0); // fully polarised points are fine
        if f.is_gga() {
            // point 3: sigma = 0 everywhere -> pure LSDA
            let lsda = evaluate(Functional::LdaPw, &[&up, &dw], &[]);
            assert_eq!(o.e[3], lsda.e[3]);
            assert_eq!(
                (o.vsigma[0][3], o.vsigma[1][3], o.vsigma[2][3]),
                (0.0, 0.0, 0.0)
            );
            // point 6: rho_t = 9e-7 <= 1e-6: no correlation GC, exchange GC present
            assert_eq!(o.vsigma[1][6], 0.0);
            assert!(o.vsigma[0][6] != 0.0);
            // point 5: rho_up = 1e-11 <= 1e-10: up exchange channel dropped, so
            // vsigma_uu is the correlation part only (= vsigma_ud / 2)
            assert_eq!(o.vsigma[0][5], 0.5 * o.vsigma[1][5]);
            // fully polarised with gradients (point 2): zeta clipped to 1 - 1e-6
            let c = pbe_c_spin_point(0.3, 0.0, 0.5, 0.0, 0.0);
            let (sc, ..) = pbe::pbec_spin(0.3, 1.0 - 1e-6, 0.5);
            assert_eq!(c.e, sc);
        }
    }
}

#[test]
fn negative_density_follows_qe() {
    for f in Functional::ALL {
        let rho = [0.2, -0.2];
        let sig = [0.05, 0.05];
        let o = evaluate(f, &[&rho], &[&sig]);
        assert_close(o.e[1], -o.e[0], 1e-15, 0.0, "e(-rho) = -e(rho)");
        assert_eq!(o.vrho[0][1], o.vrho[0][0]);
        if f.is_gga() {
            assert_eq!(o.vsigma[0][1], o.vsigma[0][0]);
        }
    }
}

#[test]
fn evaluate_into_reuses_buffers_and_matches() {
    let n = 1000;
    let rho: Vec<f64> = (0..n).map(|i| 1e-4 + 1e-2 * i as f64).collect();
    let sig: Vec<f64> = rho.iter().map(|r| 0.7 * r.powf(8.0 / 3.0)).collect();
    let dw: Vec<f64> = rho.iter().map(|r| 0.3 * r).collect();
    for f in Functional::ALL {
        let mut out = XcOutput::default();
        evaluate_into(f, &[&rho], &[&sig], &mut out);
        let ptr = out.e.as_ptr();
        evaluate_into(f, &[&rho], &[&sig], &mut out);
        assert_eq!(ptr, out.e.as_ptr());
        assert_eq!(out, evaluate(f, &[&rho], &[&sig]));
        // switching nspin in place
        evaluate_into(f, &[&rho, &dw], &[&sig, &sig, &sig], &mut out);
        assert_eq!(out.vrho.len(), 2);
        assert_eq!(out.vsigma.len(), if f.is_gga() { 3 } else { 0 });
        assert_eq!(out, evaluate(f, &[&rho, &dw], &[&sig, &sig, &sig]));
        // chunked slice API equals the full evaluation
        let (mut e, mut vu, mut vd) = (vec![0.0; n], vec![0.0; n], vec![0.0; n]);
        let nsig = n_sigma(f, 2);
        let mut vs = vec![vec![0.0; n]; nsig];
        for lo in (0..n).step_by(300) {
            let hi = (lo + 300).min(n);
            let sg = [&sig[lo..hi], &sig[lo..hi], &sig[lo..hi]];
            let mut vsc: Vec<&mut [f64]> = vs.iter_mut().map(|v| &mut v[lo..hi]).collect();
            evaluate_slices(
                f,
                &[&rho[lo..hi], &dw[lo..hi]],
                &sg[..nsig],
                &mut e[lo..hi],
                &mut [&mut vu[lo..hi], &mut vd[lo..hi]],
                &mut vsc,
            );
        }
        assert_eq!(
            (e, vec![vu, vd], vs),
            (out.e.clone(), out.vrho.clone(), out.vsigma.clone())
        );
        // pointwise equals batched
        for i in [0, 17, 999] {
            assert_eq!(e_at(f, &[rho[i], dw[i]], &[sig[i]; 3]), out.e[i]);
        }
    }
}

#[test]
fn names_roundtrip() {
    for f in Functional::ALL {
        assert_eq!(Functional::from_name(f.name()), Some(f));
    }
    assert_eq!(Functional::from_name("PBE"), Some(Functional::Pbe));
    assert_eq!(Functional::from_name("lda"), None);
    assert!(Functional::Pbe.is_gga() && !Functional::LdaVwn.is_gga());
}

#[test]
#[should_panic]
fn gga_without_sigma_panics() {
    evaluate(Functional::Pbe, &[&[0.1]], &[]);
}

#[test]
fn pseudopotential_files_name_their_functional() {
    let name = |h: &str| Functional::of_pseudopotential(h).map(|f| f.name());
    for pbe in ["PBE", "SLA PW PBX PBC", "SLA-PW-PBE-PBE", "GGA_PBE"] {
        assert_eq!(name(pbe), Some("pbe"), "{pbe}");
    }
    for (hint, lda) in [
        ("SLA-PZ-NOGX-NOGC", "lda_pz"),
        ("LDA", "lda_pz"),
        ("SLA PW NOGX NOGC", "lda_pw"),
        ("SLA VWN", "lda_vwn"),
    ] {
        assert_eq!(name(hint), Some(lda), "{hint}");
    }
    for unknown in ["PBESOL", "BLYP", "SLA PW PSX PSC", "", "pspxc=17"] {
        assert_eq!(name(unknown), None, "{unknown}");
    }
}

#[test]
fn polarised_pbe_kernel_gives_the_scalar_path_bit_for_bit() {
    // Densities on both sides of every threshold (1e-10, 1e-6), negative ones, full
    // polarisation; gradients likewise (1e-20, 1e-12 on the sums).
    let dens = [
        0.0, 5e-11, 1e-10, 3e-10, 5e-7, 1e-6, 2e-6, 1e-3, 0.1, 2.0, -1e-3, -3e-7,
    ];
    let sigs: [f64; 7] = [0.0, 5e-21, 2e-20, 5e-13, 2e-12, 1e-4, 0.3];
    let (mut up, mut dw, mut s) = (vec![], vec![], [vec![], vec![], vec![]]);
    for &u in &dens {
        for &d in &dens {
            for (k, &a) in sigs.iter().enumerate() {
                let b = sigs[(k + 3) % sigs.len()];
                let c = -0.5 * (a * b).sqrt() * (k % 2) as f64;
                up.push(u);
                dw.push(d);
                s[0].push(a);
                s[1].push(c);
                s[2].push(b);
            }
        }
    }
    let n = up.len();
    let sig = [s[0].as_slice(), &s[1], &s[2]];
    let mut kernel = [(); 6].map(|_| vec![0.0; n]);
    let [ke, kvu, kvd, kuu, kud, kdd] = &mut kernel;
    pbe_polarised::evaluate(0.75, [&up, &dw], sig, (ke, [kvu, kvd], [kuu, kud, kdd]));
    let mut scalar = [(); 6].map(|_| vec![0.0; n]);
    let [se, svu, svd, suu, sud, sdd] = &mut scalar;
    lsda(pw92::pw_spin, 0.75, [&up, &dw], se, svu, svd);
    pbe_polarised(
        (0.75, None),
        [&up, &dw],
        sig,
        se,
        [svu, svd],
        [suu, sud, sdd],
    );
    for (c, (k, s)) in kernel.iter().zip(&scalar).enumerate() {
        for i in 0..n {
            assert_eq!(
                k[i].to_bits(),
                s[i].to_bits(),
                "output {c} at up {} down {} sigma {:?}: {} vs {}",
                up[i],
                dw[i],
                [sig[0][i], sig[1][i], sig[2][i]],
                k[i],
                s[i]
            );
        }
    }
}

/// The LDA loops give the same bits in their AVX2 copy (taken on this CPU where it has AVX2)
/// as in the baseline one, on both sides of the threshold and of PZ's `rs = 1` switch, for
/// negative densities too.
#[test]
fn lda_kernels_give_the_same_bits_in_both_copies() {
    let rho: Vec<f64> = (0..2000)
        .map(|i| (i as f64 * 0.37).sin() * 10f64.powi(1 - (i % 13)))
        .collect();
    type Kernel = fn(f64, &[f64], &mut [f64], &mut [f64]);
    let pairs: [(Kernel, Kernel); 2] = [(lda_pz, lda_pz_points), (lda_pw, lda_pw_points)];
    for (dispatched, baseline) in pairs {
        let [mut e1, mut v1, mut e2, mut v2] = [0; 4].map(|_| vec![f64::NAN; rho.len()]);
        dispatched(0.75, &rho, &mut e1, &mut v1);
        baseline(0.75, &rho, &mut e2, &mut v2);
        for i in 0..rho.len() {
            assert_eq!(e1[i].to_bits(), e2[i].to_bits(), "e at rho = {}", rho[i]);
            assert_eq!(v1[i].to_bits(), v2[i].to_bits(), "v at rho = {}", rho[i]);
            assert!(e1[i].is_finite() && v1[i].is_finite(), "rho = {}", rho[i]);
        }
    }
}
