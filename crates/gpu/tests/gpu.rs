//! Device tests: each compares a GPU result with a host computation. Without a GPU each prints
//! `skipped: no GPU (<reason>)` and passes, unless `PLANEWAVE_REQUIRE_GPU=1` (then it fails).

use planewave_gpu::index_map::sphere_millers;
use planewave_gpu::reference::{self, HostFft3d};
use planewave_gpu::testing::{gpu_or_skip, relative_error, Lcg};
use planewave_gpu::{
    zgemm, BatchedFft, DeviceMatrix, HermitianEigensolver, IndexMap, LocalOperator, Op, C64,
};

const TOL: f64 = 1e-12;

#[test]
fn fft_batch_matches_rustfft_both_ways() {
    let Some(gpu) = gpu_or_skip() else { return };
    let (dims, nb) = ([12, 10, 18], 3);
    let n: usize = dims.iter().product();
    let x = Lcg::new(11).complex(n * nb);
    let fft = BatchedFft::new(&gpu, dims, nb).unwrap();
    let mut d = DeviceMatrix::upload(&gpu, n, nb, &x).unwrap();
    fft.backward(&mut d).unwrap();
    let got = d.download(&gpu).unwrap();
    let host = HostFft3d::new(dims);
    let mut want = x.clone();
    want.chunks_exact_mut(n).for_each(|f| host.backward(f));
    let e = relative_error(&got, &want);
    assert!(e <= TOL, "backward: relative error {e:.2e}");
    fft.forward_unnormalized(&mut d).unwrap();
    let back: Vec<C64> = d
        .download(&gpu)
        .unwrap()
        .iter()
        .map(|v| v / n as f64)
        .collect();
    let e = relative_error(&back, &x);
    assert!(e <= TOL, "round trip: relative error {e:.2e}");
}

#[test]
fn fft_backward_puts_a_plane_wave_with_the_plus_sign() {
    let Some(gpu) = gpu_or_skip() else { return };
    let dims = [8, 6, 10];
    let n: usize = dims.iter().product();
    let m = [-3, 2, 1];
    let mut x = vec![C64::new(0.0, 0.0); n];
    x[planewave_gpu::index_map::grid_index(dims, m)] = C64::new(1.0, 0.0);
    let mut d = DeviceMatrix::upload(&gpu, n, 1, &x).unwrap();
    BatchedFft::new(&gpu, dims, 1)
        .unwrap()
        .backward(&mut d)
        .unwrap();
    let got = d.download(&gpu).unwrap();
    for (i, v) in got.iter().enumerate() {
        let r = [i / 60, (i / 10) % 6, i % 10];
        let ph: f64 = (0..3)
            .map(|a| m[a] as f64 * r[a] as f64 / dims[a] as f64)
            .sum();
        let want = C64::from_polar(1.0, 2.0 * std::f64::consts::PI * ph);
        assert!((v - want).norm() < 1e-13, "point {i}: {v} vs {want}");
    }
}

/// `op(M)` entry `(i, j)` of column-major `m` (`rows` rows).
fn entry(m: &[C64], rows: usize, op: Op, i: usize, j: usize) -> C64 {
    match op {
        Op::N => m[i + j * rows],
        Op::C => m[j + i * rows].conj(),
    }
}

#[test]
fn zgemm_matches_a_host_sum_for_each_op() {
    let Some(gpu) = gpu_or_skip() else { return };
    let (m, n, k) = (37, 23, 301);
    let (alpha, beta) = (C64::new(0.5, -1.25), C64::new(-0.75, 0.5));
    let mut rng = Lcg::new(5);
    for (op_a, op_b) in [
        (Op::C, Op::N),
        (Op::N, Op::N),
        (Op::N, Op::C),
        (Op::C, Op::C),
    ] {
        let ar = if op_a == Op::N { m } else { k };
        let br = if op_b == Op::N { k } else { n };
        let (a, b, c0) = (rng.complex(m * k), rng.complex(k * n), rng.complex(m * n));
        let da = DeviceMatrix::upload(&gpu, ar, m * k / ar, &a).unwrap();
        let db = DeviceMatrix::upload(&gpu, br, k * n / br, &b).unwrap();
        let mut dc = DeviceMatrix::upload(&gpu, m, n, &c0).unwrap();
        zgemm(&gpu, alpha, op_a, &da, op_b, &db, beta, &mut dc).unwrap();
        let got = dc.download(&gpu).unwrap();
        let want: Vec<C64> = (0..m * n)
            .map(|ij| {
                let (i, j) = (ij % m, ij / m);
                let s: C64 = (0..k)
                    .map(|l| entry(&a, ar, op_a, i, l) * entry(&b, br, op_b, l, j))
                    .sum();
                alpha * s + beta * c0[ij]
            })
            .collect();
        let e = relative_error(&got, &want);
        assert!(e <= TOL, "{op_a:?} {op_b:?}: relative error {e:.2e}");
    }
}

/// A Hermitian positive matrix `A^H A / k + shift` (column-major `n x n`) from the host.
fn hermitian(n: usize, seed: u64) -> Vec<C64> {
    let k = 2 * n;
    let a = Lcg::new(seed).complex(k * n);
    let mut h = vec![C64::new(0.0, 0.0); n * n];
    for j in 0..n {
        for i in 0..n {
            let s: C64 = (0..k).map(|l| a[l + i * k].conj() * a[l + j * k]).sum();
            h[i + j * n] = s / k as f64
                + if i == j {
                    C64::new(0.1, 0.0)
                } else {
                    C64::new(0.0, 0.0)
                };
        }
    }
    h
}

#[test]
fn zheevd_eigenpairs_satisfy_the_host_checks() {
    let Some(gpu) = gpu_or_skip() else { return };
    let n = 96;
    let h = hermitian(n, 9);
    let mut d = DeviceMatrix::upload(&gpu, n, n, &h).unwrap();
    let mut solver = HermitianEigensolver::new(&gpu, n).unwrap();
    let w = solver.solve(&gpu, &mut d).unwrap();
    let v = d.download(&gpu).unwrap();
    assert!(
        w.windows(2).all(|p| p[0] <= p[1]),
        "eigenvalues not ascending"
    );
    let trace: f64 = (0..n).map(|i| h[i + i * n].re).sum();
    let sum: f64 = w.iter().sum();
    assert!(
        (sum - trace).abs() <= TOL * trace.abs(),
        "sum {sum} vs trace {trace}"
    );
    let hnorm = h.iter().map(|z| z.norm()).fold(0.0, f64::max);
    for j in 0..n {
        for i in 0..n {
            let hv: C64 = (0..n).map(|l| h[i + l * n] * v[l + j * n]).sum();
            let r = (hv - v[i + j * n] * w[j]).norm();
            assert!(r <= 1e-11 * hnorm, "residual ({i}, {j}) {r:.2e}");
        }
    }
    for j in 0..n {
        let norm: f64 = (0..n).map(|l| v[l + j * n].norm_sqr()).sum();
        assert!((norm - 1.0).abs() < 1e-12, "column {j} norm {norm}");
    }
    // A second solve with the same workspace gives the same eigenvalues.
    let mut d2 = DeviceMatrix::upload(&gpu, n, n, &h).unwrap();
    let w2 = solver.solve(&gpu, &mut d2).unwrap();
    assert!(w.iter().zip(&w2).all(|(a, b)| (a - b).abs() <= TOL * trace));
}

#[test]
fn local_operator_matches_the_host_reference() {
    let Some(gpu) = gpu_or_skip() else { return };
    let dims = [24, 24, 24];
    let millers = sphere_millers(24);
    let map = IndexMap::from_millers(dims, &millers).unwrap();
    let (ng, n, nb) = (map.len(), map.grid_len(), 8);
    assert!((400..700).contains(&ng), "{ng} plane waves");
    let kin: Vec<f64> = millers
        .iter()
        .map(|m| 0.5 * (m[0] * m[0] + m[1] * m[1] + m[2] * m[2]) as f64)
        .collect();
    let mut rng = Lcg::new(21);
    let v: Vec<f64> = (0..n).map(|_| rng.next_f64()).collect();
    let psi = rng.complex(ng * nb);
    let want = reference::apply_local(&map, &kin, &v, &psi);
    // Batches of 3: two full batches and a short one (two plans).
    let mut op = LocalOperator::new(&gpu, &map, &kin, &v, 3).unwrap();
    let dpsi = DeviceMatrix::upload(&gpu, ng, nb, &psi).unwrap();
    let mut out = DeviceMatrix::zeros(&gpu, ng, nb).unwrap();
    op.apply(&gpu, &dpsi, &mut out).unwrap();
    let e = relative_error(&out.download(&gpu).unwrap(), &want);
    assert!(e <= TOL, "relative error {e:.2e}");
    // A new potential, all bands in one batch.
    let v2: Vec<f64> = v.iter().map(|x| 1.0 - 2.0 * x).collect();
    let want2 = reference::apply_local(&map, &kin, &v2, &psi);
    let mut op = LocalOperator::new(&gpu, &map, &kin, &v, nb).unwrap();
    op.set_potential(&gpu, &v2).unwrap();
    op.apply(&gpu, &dpsi, &mut out).unwrap();
    let e = relative_error(&out.download(&gpu).unwrap(), &want2);
    assert!(e <= TOL, "new potential: relative error {e:.2e}");
}
