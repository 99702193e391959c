//! Si2 from examples/si.toml at 8 Ha and 2×2×2 k-points: the arrays against the results.

use super::*;
use ndarray::{array, Array2};
use planewave_core::input::{self, Kpoints};
use planewave_core::scf::IterationInfo;
use planewave_core::setup::{self, Setup};
use planewave_core::workflow::{self, Calculation};
use std::path::Path;

/// The lattice constant of examples/si.toml's cell (bohr).
const A_BOHR: f64 = 2.0 * 5.13;

fn si_spec() -> RunSpec {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/si.toml");
    let mut spec = input::load(&path).expect("examples/si.toml loads");
    spec.ecut = 8.0;
    spec.kpoints = Kpoints::MonkhorstPack {
        grid: [2, 2, 2],
        shift: [false; 3],
    };
    spec.scf.density_tolerance = 1e-10;
    spec.properties.forces = true;
    spec.properties.stress = true;
    spec
}

fn run(spec: RunSpec) -> (Setup, Calculation) {
    let s = setup::build(spec).expect("the set-up builds");
    let c = workflow::run(&s, None, |_: &IterationInfo| {}).expect("the SCF runs");
    assert!(c.scf.converged);
    (s, c)
}

/// Si2 with the second atom pushed off its site (nonzero forces), given as arrays.
fn displaced_si() -> (Setup, Calculation) {
    let cell = array![[0.0, 5.13, 5.13], [5.13, 0.0, 5.13], [5.13, 5.13, 0.0]];
    let frac = array![[0.0, 0.0, 0.0], [0.26, 0.25, 0.24]];
    let st = Structure::from_arrays(
        cell.view(),
        LengthUnit::Bohr,
        frac.view(),
        Positions::Fractional,
    );
    let mut spec = si_spec();
    st.unwrap().set_in(&mut spec, &["Si", "Si"]).unwrap();
    run(spec)
}

#[test]
fn density_view_integrates_to_the_electron_count() {
    let (s, c) = run(si_spec());
    let rho = density(&s.basis, &c.scf.density, 0);
    assert!(rho.is_view());
    let (n1, n2, n3) = grid_shape(&s.basis);
    assert_eq!(rho.dim(), (n1, n2, n3));
    assert_eq!(rho[[1, 2, 3]], c.scf.density.r[0][(n2 + 2) * n3 + 3]);
    // Element [i, j, k] is rho at (i/n1, j/n2, k/n3): the Fourier sum of the sphere there.
    let x = [1.0 / n1 as f64, 2.0 / n2 as f64, 3.0 / n3 as f64];
    let at_x: Complex64 = (s.basis.rho_millers.iter().zip(&c.scf.density.g[0]))
        .map(|(m, g)| {
            g * Complex64::cis(2.0 * PI * (0..3).map(|i| m[i] as f64 * x[i]).sum::<f64>())
        })
        .sum();
    assert!(
        (rho[[1, 2, 3]] - at_x.re).abs() < 1e-12,
        "{} vs {at_x}",
        rho[[1, 2, 3]]
    );
    let electrons = rho.sum() * s.basis.volume / s.basis.grid_len() as f64;
    assert!((electrons - 8.0).abs() < 1e-8, "{electrons} electrons");
}

#[test]
fn forces_and_stress_arrays_equal_the_calculation() {
    let (_, c) = displaced_si();
    let (f, st) = (c.forces.as_ref().unwrap(), c.stress.as_ref().unwrap());
    let (fa, sa) = (forces(f), stress(st));
    assert_eq!(fa.dim(), (2, 3));
    for (a, row) in f.total.iter().enumerate() {
        for (x, v) in row.iter().enumerate() {
            assert_eq!(fa[[a, x]], *v);
        }
    }
    assert!(fa[[1, 0]].abs() > 1e-3, "a displaced atom feels a force");
    let sum = fa.sum_axis(ndarray::Axis(0));
    assert!(sum.iter().all(|x| x.abs() < 1e-6), "forces sum to {sum}");
    assert_eq!(Array2::from_shape_fn((3, 3), |(i, j)| st.total[i][j]), sa);
}

#[test]
fn band_coefficients_equal_the_faer_matrix() {
    let (s, c) = run(si_spec());
    let Wavefunctions::Complex(psi) = &c.scf.wavefunctions else {
        panic!("k-points give complex bands")
    };
    let k = 1;
    let m = &psi[0][k];
    let coef = band_coefficients(&c.scf, &s.basis, 0, k);
    assert_eq!(coef.dim(), (s.basis.kpoints[k].npw(), s.params.nbands));
    for ((i, j), z) in coef.indexed_iter() {
        assert_eq!(*z, m[(i, j)]);
    }
    let b = band(&c.scf, 0, k, 3).unwrap();
    assert_eq!(b, coef.column(3));
    let norm: f64 = b.iter().map(|z| z.norm_sqr()).sum();
    assert!((norm - 1.0).abs() < 1e-10, "|psi|^2 = {norm}");
}

#[test]
fn structure_from_arrays_gives_the_toml_energy() {
    let to_ang = |x: f64| x * planewave_core::input::units::ANGSTROM_PER_BOHR;
    let h = to_ang(A_BOHR / 2.0);
    let cell = array![[0.0, h, h], [h, 0.0, h], [h, h, 0.0]];
    let q = to_ang(A_BOHR / 4.0);
    let cart = array![[0.0, 0.0, 0.0], [q, q, q]];
    let st = Structure::from_arrays(
        cell.view(),
        LengthUnit::Angstrom,
        cart.view(),
        Positions::Cartesian,
    );
    let st = st.unwrap();
    assert!((st.frac[1][2] - 0.25).abs() < 1e-14);
    let mut spec = si_spec();
    st.set_in(&mut spec, &["Si", "Si"]).unwrap();
    let (from_arrays, from_toml) = (run(spec).1, run(si_spec()).1);
    let (ea, et) = (
        from_arrays.scf.energies.total(),
        from_toml.scf.energies.total(),
    );
    assert!((ea - et).abs() < 1e-10, "{ea} vs {et} Ha");
    let crystal = st.crystal(&[0, 0]).unwrap();
    assert!((crystal.volume - 2.0 * 5.13f64.powi(3)).abs() < 1e-10);
}

#[test]
fn structure_from_arrays_refuses_bad_shapes() {
    let cell = array![[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]];
    let pos = array![[0.0, 0.0, 0.0]];
    let err = Structure::from_arrays(
        cell.view(),
        LengthUnit::Bohr,
        pos.view(),
        Positions::Fractional,
    );
    assert_eq!(err.unwrap_err(), "cell is 2 × 3, not 3 × 3");
    let cell = Array2::<f64>::eye(3);
    let st = Structure::from_arrays(
        cell.view(),
        LengthUnit::Bohr,
        pos.view(),
        Positions::Fractional,
    );
    assert!(st.unwrap().crystal(&[0, 0]).is_err());
}

#[test]
fn band_energies_are_the_potential_seen_by_the_density() {
    let (s, c) = run(si_spec());
    let (eps, occ) = (eigenvalues(&c.scf), occupations(&c.scf));
    let nk = s.basis.kpoints.len();
    assert_eq!(eps.dim(), (1, nk, s.params.nbands));
    assert_eq!(eps[[0, nk - 1, 2]], c.scf.eigenvalues[0][nk - 1][2]);
    let w = ndarray::Array1::from_iter(s.basis.kpoints.iter().map(|k| k.weight));
    let band_sum = ((&eps * &occ).sum_axis(ndarray::Axis(2)).row(0).to_owned() * &w).sum();
    let v = potential(&s.model, &s.basis, &s.params, &c.scf.density).unwrap();
    let rho = density(&s.basis, &c.scf.density, 0);
    let v_rho = (&v[0] * &rho).sum() * s.basis.dv();
    let e = &c.scf.energies;
    let expected = e.get("kinetic") + e.get("nonlocal") + v_rho;
    assert!(
        (band_sum - expected).abs() < 1e-9,
        "{band_sum} vs {expected} Ha"
    );
}

#[test]
fn gamma_real_bands_give_the_half_sphere_coefficients() {
    let mut spec = si_spec();
    spec.kpoints = Kpoints::Gamma;
    let (s, c) = run(spec);
    assert!(matches!(c.scf.wavefunctions, Wavefunctions::Real(_)));
    assert!(band(&c.scf, 0, 0, 0).is_none());
    let coef = band_coefficients(&c.scf, &s.basis, 0, 0);
    assert_eq!(coef.dim(), (s.basis.kpoints[0].npw(), s.params.nbands));
    assert_eq!(s.basis.kpoints[0].millers[0], [0, 0, 0]);
    for col in coef.columns() {
        // c(0) is real; the stored half holds each +-G pair once: |c(0)|^2 + 2 sum |c(G)|^2 = 1.
        assert_eq!(col[0].im, 0.0);
        let norm = col[0].norm_sqr() + 2.0 * col.iter().skip(1).map(|z| z.norm_sqr()).sum::<f64>();
        assert!((norm - 1.0).abs() < 1e-10, "|psi|^2 = {norm}");
    }
}
