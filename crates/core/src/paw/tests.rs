//! The one-centre coupling is the derivative of the one-centre energy, for the two PAW files
//! of tests/data/uspp, with LDA and PBE, without and with spin; and the atoms' own band sums
//! hold their occupations.

use super::*;
use crate::pseudo::Pseudopotential;
use crate::rng::SplitMix64;

fn species(name: &str) -> PawSpecies {
    let path = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/data/uspp")
        .join(name);
    let p = Pseudopotential::from_file(&path).unwrap();
    p.paw().expect("a PAW file").clone()
}

/// The atoms' own band sums plus a small random part on every pair (a state with no
/// symmetry, so that every angular channel is exercised).
fn perturbed(p: &PawSpecies, nspin: usize, seed: u64) -> Vec<Vec<f64>> {
    let mut rng = SplitMix64::new(seed);
    p.atomic_becsum(nspin, 0.3)
        .into_iter()
        .map(|c| {
            c.into_iter()
                .map(|v| v + 0.05 * rng.next_centered())
                .collect()
        })
        .collect()
}

/// Largest |D - dE/dbecsum| (central differences) over the pairs, relative to max |D|.
fn derivative_error(p: &PawSpecies, f: Functional, nspin: usize) -> f64 {
    let b = perturbed(p, nspin, 11);
    let (_, d) = p.one_centre(f, &b);
    let scale = d.iter().flatten().fold(0.0f64, |m, v| m.max(v.abs()));
    let h = 1e-5;
    let mut worst = 0.0f64;
    for s in 0..nspin {
        for q in 0..b[s].len() {
            let energy = |x: f64| {
                let mut c = b.clone();
                c[s][q] += x;
                p.one_centre(f, &c).0.total()
            };
            let fd = (energy(h) - energy(-h)) / (2.0 * h);
            worst = worst.max((fd - d[s][q]).abs() / scale);
        }
    }
    worst
}

#[test]
fn the_coupling_is_the_energy_s_derivative() {
    for (name, f, nspin) in [
        ("H.pbe-kjpaw.UPF", Functional::Pbe, 1),
        ("C.pbe-n-kjpaw_psl.0.1.UPF", Functional::Pbe, 1),
        ("C.pbe-n-kjpaw_psl.0.1.UPF", Functional::LdaPz, 2),
        ("C.pbe-n-kjpaw_psl.0.1.UPF", Functional::Pbe, 2),
    ] {
        let err = derivative_error(&species(name), f, nspin);
        assert!(err < 1e-6, "{name} {f:?} nspin {nspin}: {err:.2e}");
    }
}

#[test]
fn the_atoms_own_band_sums_hold_their_occupations() {
    let p = species("C.pbe-n-kjpaw_psl.0.1.UPF");
    // pslibrary C: 2s² 2p², one partial wave each occupied; 4 betas, 8 components.
    assert_eq!(p.components(), 8);
    for (nspin, m0) in [(1, 0.0), (2, 0.5)] {
        let b = p.atomic_becsum(nspin, m0);
        let diag: Vec<f64> = (0..nspin)
            .map(|s| {
                pairs(8)
                    .zip(&b[s])
                    .filter(|((i, j), _)| i == j)
                    .map(|(_, v)| v)
                    .sum()
            })
            .collect();
        assert!((diag.iter().sum::<f64>() - 4.0).abs() < 1e-12, "{diag:?}");
        if nspin == 2 {
            assert!((diag[0] - diag[1] - 4.0 * m0).abs() < 1e-12, "{diag:?}");
        }
    }
}

#[test]
fn a_spherical_spin_balanced_state_splits_evenly() {
    // Equal channels: the energy of the total with nspin = 1 equals the split one's with
    // nspin = 2 (LDA: the same functional at zero polarisation).
    let p = species("C.pbe-n-kjpaw_psl.0.1.UPF");
    let one = p.atomic_becsum(1, 0.0);
    let half: Vec<Vec<f64>> = vec![one[0].iter().map(|v| 0.5 * v).collect(); 2];
    let (e1, d1) = p.one_centre(Functional::LdaPz, &one);
    let (e2, d2) = p.one_centre(Functional::LdaPz, &half);
    assert!((e1.total() - e2.total()).abs() < 1e-10, "{e1:?} vs {e2:?}");
    for (a, b) in d1[0].iter().zip(&d2[0]) {
        assert!((a - b).abs() < 1e-9, "{a} vs {b}");
    }
}

#[test]
fn the_parts_add_up_to_the_whole() {
    let p = species("C.pbe-n-kjpaw_psl.0.1.UPF");
    let b = perturbed(&p, 2, 5);
    let (e, d) = p.one_centre(Functional::Pbe, &b);
    for count in [2, 3, 64] {
        let (mut sum_e, mut sum_d) = (0.0, vec![vec![0.0; d[0].len()]; 2]);
        for index in 0..count {
            let (ei, di) = p.one_centre_part(Functional::Pbe, &b, (index, count), true);
            let (alone, none) = p.one_centre_part(Functional::Pbe, &b, (index, count), false);
            assert!(none.is_empty());
            assert_eq!(
                alone.total(),
                ei.total(),
                "the energy alone is the same energy"
            );
            sum_e += ei.total();
            for (o, v) in sum_d.iter_mut().flatten().zip(di.iter().flatten()) {
                *o += v;
            }
        }
        assert!(
            (sum_e - e.total()).abs() < 1e-12,
            "{count}: {sum_e} vs {}",
            e.total()
        );
        for (a, b) in sum_d.iter().flatten().zip(d.iter().flatten()) {
            assert!((a - b).abs() < 1e-12, "{count}: {a} vs {b}");
        }
    }
}
