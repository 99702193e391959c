//! Structural relaxation: positions back to the diamond sites, and a cell relaxation against an
//! E(V) fit of the same code (Birch–Murnaghan: E cubic in V^{-2/3}).

use planewave::core::input::{self, RunSpec};
use planewave::core::relax::{self, Observer, StepInfo};
use planewave::core::scf::{self, IterationInfo};
use planewave::core::setup;
use std::path::PathBuf;

fn load(rel: &str) -> RunSpec {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/relax")
        .join(rel);
    input::load(&path).unwrap_or_else(|e| panic!("{e}"))
}

struct Print;
impl Observer for Print {
    fn scf_iteration(&mut self, _: usize, _: &IterationInfo) {}
    fn ionic_step(&mut self, i: &StepInfo, _: &[String]) {
        println!(
            "step {:2} E = {:.10} max|F| = {:.2e} P = {:?} V = {:.4}",
            i.step, i.energy, i.max_force, i.pressure, i.volume
        );
    }
}

#[test]
fn displaced_si8_returns_to_the_diamond_sites() {
    let spec = load("si8_displaced.toml");
    let opts = spec.relax.clone();
    let r = relax::run(spec, &opts, &mut Print).expect("relaxation runs");
    assert!(r.converged, "not converged in {} steps", r.steps.len());
    assert!(r.forces.max_norm() < 1e-4, "{}", r.forces.max_norm());
    // Diamond sites of the conventional cube, up to one rigid translation of the crystal.
    let ideal = [
        [0.0, 0.0, 0.0],
        [0.25, 0.25, 0.25],
        [0.0, 0.5, 0.5],
        [0.25, 0.75, 0.75],
        [0.5, 0.0, 0.5],
        [0.75, 0.25, 0.75],
        [0.5, 0.5, 0.0],
        [0.75, 0.75, 0.25],
    ];
    let c = &r.setup.model.crystal;
    let shift: [f64; 3] = [0, 1, 2].map(|k| {
        let d: f64 = c
            .atoms
            .iter()
            .zip(&ideal)
            .map(|(a, i)| {
                let x = a.frac[k] - i[k];
                x - x.round()
            })
            .sum();
        d / ideal.len() as f64
    });
    let a = c.lattice[0][0];
    for (atom, i) in c.atoms.iter().zip(&ideal) {
        for k in 0..3 {
            let d = atom.frac[k] - i[k] - shift[k];
            let d = (d - d.round()) * a;
            assert!(d.abs() < 1e-3, "atom off its site by {d:.2e} bohr");
        }
    }
    assert!(
        r.steps.len() > 3,
        "the start was displaced, relaxation must take steps"
    );
    // Energies decrease along the way (no damped step needed here).
    let e0 = r.steps[0].energy;
    assert!(r.steps.last().unwrap().energy < e0 - 1e-3);
}

/// Lattice constant (bohr) at the minimum of E(a) from a Birch–Murnaghan fit: E as a cubic
/// polynomial in x = V^{-2/3} (least squares), V = a^3/4 (fcc primitive cell).
fn birch_murnaghan_a0(points: &[(f64, f64)]) -> f64 {
    // Normal equations for E = c0 + c1 x + c2 x^2 + c3 x^3 (x scaled for conditioning).
    let xs: Vec<f64> = points
        .iter()
        .map(|(a, _)| (a * a * a / 4.0).powf(-2.0 / 3.0))
        .collect();
    let (xm, xw) = (xs.iter().sum::<f64>() / xs.len() as f64, 1e-3);
    let t: Vec<f64> = xs.iter().map(|x| (x - xm) / xw).collect();
    let mut m = [[0.0; 5]; 4];
    for (ti, (_, e)) in t.iter().zip(points) {
        let p = [1.0, *ti, ti * ti, ti * ti * ti];
        for r in 0..4 {
            for c in 0..4 {
                m[r][c] += p[r] * p[c];
            }
            m[r][4] += p[r] * e;
        }
    }
    for col in 0..4 {
        let piv = (col..4)
            .max_by(|&a, &b| m[a][col].abs().total_cmp(&m[b][col].abs()))
            .unwrap();
        m.swap(col, piv);
        for r in 0..4 {
            if r != col {
                let f = m[r][col] / m[col][col];
                let row = m[col];
                for (c, v) in m[r].iter_mut().enumerate() {
                    *v -= f * row[c];
                }
            }
        }
    }
    let c: Vec<f64> = (0..4).map(|i| m[i][4] / m[i][i]).collect();
    // dE/dt = c1 + 2 c2 t + 3 c3 t^2 = 0: the root with positive curvature.
    let (qa, qb, qc) = (3.0 * c[3], 2.0 * c[2], c[1]);
    let disc = (qb * qb - 4.0 * qa * qc).sqrt();
    let t0 = [(-qb + disc) / (2.0 * qa), (-qb - disc) / (2.0 * qa)]
        .into_iter()
        .find(|t| 2.0 * c[2] + 6.0 * c[3] * t > 0.0)
        .expect("a minimum");
    let v0 = (xm + xw * t0).powf(-1.5);
    (4.0 * v0).cbrt()
}

#[test]
fn strained_si2_cell_relaxes_to_the_equation_of_state_minimum() {
    let spec = load("si2_strained.toml");
    // E(a) with the same cutoff, k-points and pseudopotential.
    let mut points = Vec::new();
    for a in [10.12, 10.16, 10.20, 10.24, 10.28] {
        let mut sp = spec.clone();
        let h = a / 2.0;
        sp.lattice = [[0.0, h, h], [h, 0.0, h], [h, h, 0.0]];
        let s = setup::build(sp).unwrap();
        let r = scf::run(&s.model, &s.basis, &s.params, |_| {}).unwrap();
        assert!(r.converged);
        println!("a = {a:.2} bohr: E = {:.10} Ha", r.energies.total());
        points.push((a, r.energies.total()));
    }
    let a_fit = birch_murnaghan_a0(&points);
    let opts = spec.relax.clone();
    let r = relax::run(spec, &opts, &mut Print).expect("relaxation runs");
    assert!(r.converged);
    let a_relaxed = (4.0 * r.setup.model.crystal.volume).cbrt();
    println!("E(V) fit a0 = {a_fit:.5} bohr, relaxed a0 = {a_relaxed:.5} bohr");
    assert!(
        (a_relaxed - a_fit).abs() < 1e-3,
        "relaxed {a_relaxed} vs E(V) {a_fit}"
    );
    // The cell stays fcc (symmetrised stress keeps the cubic symmetry).
    let l = &r.setup.model.crystal.lattice;
    assert!((l[0][0]).abs() < 1e-10 && (l[0][1] - l[0][2]).abs() < 1e-10);
    let p = r.stress.as_ref().unwrap().pressure();
    assert!(p.abs() < 0.002 / 29421.0157, "pressure {p}");
}
