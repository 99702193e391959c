//! Radial numerics shared by the pseudopotential form factors.
//!
//! Contract: everything here is pure and deterministic, takes plain slices and
//! never panics on finite input.
//! * [`simpson_weights`] reproduces Quantum ESPRESSO's `simpson` routine exactly
//!   (weights `rab(i)/3 * {1,4,2,...}`; with an even number of points the last
//!   point gets weight 0, as in QE).
//! * [`qe_msh`] reproduces QE's `msh` cut-off (first point with r > 10 bohr,
//!   forced odd).
//! * [`sph_bessel`] is the spherical Bessel function j_l(x) for any l >= 0,
//!   accurate to ~1e-15 relative (power series for small x, closed forms or
//!   stable upward recurrence otherwise).
//! * `erf` is the error function to ~1e-16 (std has none).

/// QE's radial cut-off radius (bohr) used to define `msh`.
pub const QE_RCUT: f64 = 10.0;

/// Simpson integration weights as in QE's `simpson(mesh, func, rab, asum)`:
/// `sum_i w[i] * f[i]` equals QE's result for the first `n` points.
pub fn simpson_weights(rab: &[f64], n: usize) -> Vec<f64> {
    let n = n.min(rab.len());
    let mut w = vec![0.0; n];
    let r12 = 1.0 / 3.0;
    // QE loop (1-based): do i = 2, mesh-1, 2: f(i-1) + 4 f(i) + f(i+1)
    let mut i = 1;
    while i + 1 < n {
        w[i - 1] += r12 * rab[i - 1];
        w[i] += 4.0 * r12 * rab[i];
        w[i + 1] += r12 * rab[i + 1];
        i += 2;
    }
    w
}

/// QE-style Simpson integral of `f` (first `f.len()` points of the mesh).
pub fn simpson(f: &[f64], rab: &[f64]) -> f64 {
    simpson_weights(rab, f.len())
        .iter()
        .zip(f)
        .map(|(w, v)| w * v)
        .sum()
}

/// QE's `msh`: number of mesh points used for radial integrals of the local
/// potential, core and atomic densities: index (1-based) of the first point
/// with r > 10 bohr (or the whole mesh), then forced to be odd.
pub fn qe_msh(r: &[f64]) -> usize {
    let mut msh = r.len();
    for (i, &ri) in r.iter().enumerate() {
        if ri > QE_RCUT {
            msh = i + 1;
            break;
        }
    }
    // Fortran: msh = 2*((msh+1)/2) - 1 with integer division
    let forced = 2 * msh.div_ceil(2);
    forced.saturating_sub(1).max(1).min(r.len())
}

/// Double factorial (2l+1)!! as f64.
fn odd_double_factorial(l: usize) -> f64 {
    (0..=l).map(|k| (2 * k + 1) as f64).product()
}

/// Power series j_l(x) = x^l/(2l+1)!! sum_k (-x^2/2)^k / (k! (2l+3)(2l+5)...(2l+2k+1)).
/// The divisors of the terms do not depend on x: for l <= [`SERIES_TABLE_L`] their reciprocals
/// come from a table, so the terms' chain is of multiplications only.
fn sph_bessel_series(l: usize, x: f64) -> f64 {
    let x2h = -0.5 * x * x;
    let table = (l <= SERIES_TABLE_L).then(|| &series_table()[l]);
    let mut term = 1.0;
    let mut sum = 1.0;
    for k in 1..SERIES_TERMS {
        term *= match table {
            Some(t) => x2h * t.reciprocals[k],
            None => x2h / (k as f64 * (2 * l + 2 * k + 1) as f64),
        };
        sum += term;
        if term.abs() <= 1e-17 * sum.abs() {
            break;
        }
    }
    let scale = table.map_or_else(|| 1.0 / odd_double_factorial(l), |t| t.scale);
    x.powi(l as i32) * scale * sum
}

/// Most terms of [`sph_bessel_series`] (the series stops before them at the x it is used at).
const SERIES_TERMS: usize = 60;
/// Highest l whose series coefficients are tabulated: above it the series runs to x = 2l,
/// where its terms cancel to a few digits and the divisions' rounding is kept (j_6(11.5)
/// moved by 2e-13 relative with reciprocals).
const SERIES_TABLE_L: usize = 3;

/// The series coefficients of one l: `1 / (k (2l+2k+1))` and `1 / (2l+1)!!`.
struct SeriesCoefficients {
    reciprocals: [f64; SERIES_TERMS],
    scale: f64,
}

/// [`SeriesCoefficients`] of l = 0..=[`SERIES_TABLE_L`], formed once per process.
fn series_table() -> &'static [SeriesCoefficients] {
    static TABLE: std::sync::OnceLock<Vec<SeriesCoefficients>> = std::sync::OnceLock::new();
    TABLE.get_or_init(|| {
        (0..=SERIES_TABLE_L)
            .map(|l| SeriesCoefficients {
                reciprocals: std::array::from_fn(|k| {
                    1.0 / (k.max(1) as f64 * (2 * l + 2 * k + 1) as f64)
                }),
                scale: 1.0 / odd_double_factorial(l),
            })
            .collect()
    })
}

/// Spherical Bessel function of the first kind j_l(x), x >= 0 (odd/even
/// symmetry is applied for x < 0).
pub fn sph_bessel(l: usize, x: f64) -> f64 {
    if x < 0.0 {
        let v = sph_bessel(l, -x);
        return if l.is_multiple_of(2) { v } else { -v };
    }
    sph_bessel_with(l, x, || x.sin_cos())
}

/// [`sph_bessel`] at x >= 0, with `sin_cos` giving `(sin x, cos x)` where the closed forms
/// need them (not called where the power series serves): a caller that steps x through a
/// uniform grid can hand in a rotated pair instead of calling the sine again.
pub fn sph_bessel_with(l: usize, x: f64, sin_cos: impl FnOnce() -> (f64, f64)) -> f64 {
    // The series is used where the closed forms suffer from cancellation.
    let series_limit = match l {
        0 => 0.05,
        1..=3 => (l as f64).max(1.0),
        _ => 2.0 * l as f64,
    };
    if x < series_limit {
        return sph_bessel_series(l, x);
    }
    let (s, c) = sin_cos();
    match l {
        0 => s / x,
        1 => (s / x - c) / x,
        2 => ((3.0 / (x * x) - 1.0) * s - 3.0 * c / x) / x,
        3 => ((15.0 / (x * x * x) - 6.0 / x) * s - (15.0 / (x * x) - 1.0) * c) / x,
        _ => {
            // upward recurrence is stable for x >= 2l
            let mut jm1 = s / x;
            let mut j = (s / x - c) / x;
            for n in 1..l {
                let jp1 = (2 * n + 1) as f64 / x * j - jm1;
                jm1 = j;
                j = jp1;
            }
            j
        }
    }
}
