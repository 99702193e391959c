//! Opens the GPU and checks and times the back end at si64-like sizes, one line each:
//! the device; the local operator on 72^3 and 108^3 grids (64 bands) against the host
//! reference; ZGEMM A^H B at 11924 x 384 x 384; ZHEEVD at 384 and 1296 against faer.
//! Exit code 2 when the GPU cannot be opened (the message says why and what to do).

use faer::{Mat, Side};
use planewave_gpu::index_map::sphere_millers;
use planewave_gpu::reference;
use planewave_gpu::testing::{relative_error, Lcg};
use planewave_gpu::{
    max_batch, zgemm, DeviceMatrix, Gpu, GpuError, HermitianEigensolver, IndexMap, LocalOperator,
    Op, C64,
};
use std::time::Instant;

const NB: usize = 64;
/// Bands checked against the host reference (it is slow on 108^3).
const HOST_BANDS: usize = 2;
const REPS: usize = 5;

fn main() {
    let t0 = Instant::now();
    let gpu = match Gpu::open(0) {
        Ok(g) => g,
        Err(e) => {
            eprintln!("gpu_check: {e}");
            std::process::exit(2);
        }
    };
    if let Err(e) = run(&gpu) {
        eprintln!("gpu_check: {e}");
        std::process::exit(1);
    }
    println!("total {:.1} s", t0.elapsed().as_secs_f64());
}

fn run(gpu: &Gpu) -> Result<(), GpuError> {
    let (free, total) = gpu.memory()?;
    let gib = |b: usize| b as f64 / (1u64 << 30) as f64;
    println!(
        "device: {}, memory {:.1} GiB free of {:.1} GiB",
        gpu.name()?,
        gib(free),
        gib(total)
    );
    // |m|^2 <= 200: 11 837 plane waves (si64's 11 924 at Gamma); 450 on 108^3 (the same ratio).
    local_operator(gpu, [72, 72, 72], 200)?;
    local_operator(gpu, [108, 108, 108], 450)?;
    gemm(gpu, 11924, 384)?;
    eigh(gpu, 384)?;
    eigh(gpu, 1296)?;
    Ok(())
}

/// Seconds of `f` run `REPS` times after one warm-up, synchronised.
fn time(gpu: &Gpu, mut f: impl FnMut() -> Result<(), GpuError>) -> Result<f64, GpuError> {
    f()?;
    gpu.synchronize()?;
    let t = Instant::now();
    for _ in 0..REPS {
        f()?;
    }
    gpu.synchronize()?;
    Ok(t.elapsed().as_secs_f64() / REPS as f64)
}

fn local_operator(gpu: &Gpu, dims: [usize; 3], r2: i32) -> Result<(), GpuError> {
    let millers = sphere_millers(r2);
    let map = IndexMap::from_millers(dims, &millers).expect("sphere fits the grid");
    let (ng, n) = (map.len(), map.grid_len());
    let kin: Vec<f64> = millers
        .iter()
        .map(|m| 0.5 * (m[0] * m[0] + m[1] * m[1] + m[2] * m[2]) as f64)
        .collect();
    let mut rng = Lcg::new(3);
    let v: Vec<f64> = (0..n).map(|_| rng.next_f64()).collect();
    let psi = rng.complex(ng * NB);
    let batch = max_batch(n, gpu.memory()?.0 / 2).min(NB);
    let mut op = LocalOperator::new(gpu, &map, &kin, &v, batch)?;
    let dpsi = DeviceMatrix::upload(gpu, ng, NB, &psi)?;
    let mut out = DeviceMatrix::zeros(gpu, ng, NB)?;
    let dt = time(gpu, || op.apply(gpu, &dpsi, &mut out))?;
    let got = out.download(gpu)?;
    let want = reference::apply_local(&map, &kin, &v, &psi[..HOST_BANDS * ng]);
    let err = relative_error(&got[..HOST_BANDS * ng], &want);
    println!(
        "local operator {}^3, {ng} plane waves x {NB} bands (batch {batch}): \
         error {err:.1e} ({HOST_BANDS} bands vs host), {:.1} us per band",
        dims[0],
        dt / NB as f64 * 1e6
    );
    Ok(())
}

fn gemm(gpu: &Gpu, m: usize, k: usize) -> Result<(), GpuError> {
    let mut rng = Lcg::new(4);
    let (a, b) = (rng.complex(m * k), rng.complex(m * k));
    let da = DeviceMatrix::upload(gpu, m, k, &a)?;
    let db = DeviceMatrix::upload(gpu, m, k, &b)?;
    let mut dc = DeviceMatrix::zeros(gpu, k, k)?;
    let (one, zero) = (C64::new(1.0, 0.0), C64::new(0.0, 0.0));
    let dt = time(gpu, || {
        zgemm(gpu, one, Op::C, &da, Op::N, &db, zero, &mut dc)
    })?;
    let c = dc.download(gpu)?;
    // 64 entries against a host sum.
    let (mut got, mut want) = (Vec::new(), Vec::new());
    for _ in 0..64 {
        let i = ((rng.next_f64() + 0.5) * k as f64) as usize % k;
        let j = ((rng.next_f64() + 0.5) * k as f64) as usize % k;
        got.push(c[i + j * k]);
        want.push((0..m).map(|l| a[l + i * m].conj() * b[l + j * m]).sum());
    }
    let flops = 8.0 * (m * k * k) as f64;
    println!(
        "zgemm {m}x{k}x{k} (A^H B): error {:.1e} (64 entries), {:.3} ms, {:.1} TFLOP/s",
        relative_error(&got, &want),
        dt * 1e3,
        flops / dt / 1e12
    );
    Ok(())
}

fn eigh(gpu: &Gpu, n: usize) -> Result<(), GpuError> {
    // H = A^H A / m, m = 2n: Hermitian positive definite, built on the device.
    let m = 2 * n;
    let a = DeviceMatrix::upload(gpu, m, n, &Lcg::new(n as u64).complex(m * n))?;
    let mut h = DeviceMatrix::zeros(gpu, n, n)?;
    let (s, zero) = (C64::new(1.0 / m as f64, 0.0), C64::new(0.0, 0.0));
    zgemm(gpu, s, Op::C, &a, Op::N, &a, zero, &mut h)?;
    let hh = h.download(gpu)?;
    let mut solver = HermitianEigensolver::new(gpu, n)?;
    let mut work = DeviceMatrix::upload(gpu, n, n, &hh)?;
    solver.solve(gpu, &mut work)?;
    let mut work = DeviceMatrix::upload(gpu, n, n, &hh)?;
    gpu.synchronize()?;
    let t = Instant::now();
    let w = solver.solve(gpu, &mut work)?;
    let dt = t.elapsed().as_secs_f64();
    let hm = Mat::from_fn(n, n, |i, j| hh[i + j * n]);
    let t = Instant::now();
    let evd = hm
        .self_adjoint_eigen(Side::Lower)
        .expect("faer eigensolver");
    let dt_host = t.elapsed().as_secs_f64();
    let s = evd.S().column_vector();
    let mut w_host: Vec<f64> = (0..n).map(|i| s[i].re).collect();
    w_host.sort_by(f64::total_cmp);
    let scale = w_host.iter().fold(0.0f64, |x, y| x.max(y.abs()));
    let err = w
        .iter()
        .zip(&w_host)
        .map(|(x, y)| (x - y).abs())
        .fold(0.0, f64::max)
        / scale;
    println!(
        "zheevd {n}: {:.2} ms (second call), faer self_adjoint_eigen {:.1} ms, \
         eigenvalue difference {err:.1e}",
        dt * 1e3,
        dt_host * 1e3
    );
    Ok(())
}
