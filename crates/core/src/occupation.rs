//! Occupations from eigenvalues: aufbau filling for insulators and fixed moments, a Fermi level by
//! bisection for smeared metals (one per spin channel when the total moment is fixed).

use crate::model::{Model, SpinMode};
use crate::smearing::Smearing;
use crate::smearing::SmearingFunction;

/// Occupations of every (spin, k, band), the Fermi level(s) and the smearing energy.
#[derive(Debug, Clone)]
pub struct Occupations {
    /// `occ[spin][k][band]`, including the spin factor (0..2 without spin, 0..1 with).
    pub occ: Vec<Vec<Vec<f64>>>,
    /// Fermi level per spin channel (both equal unless the moment is fixed); None without smearing.
    pub fermi: Option<Vec<f64>>,
    /// The smearing term -TS (Ha), 0 without smearing.
    pub minus_ts: f64,
    /// Highest occupied / lowest unoccupied level (integer occupations only).
    pub homo: Option<f64>,
    /// Lowest unoccupied level, when an empty band exists.
    pub lumo: Option<f64>,
}

/// Electrons per spin channel when the channels are filled separately, or None for a common level.
fn channel_electrons(model: &Model) -> Result<Option<Vec<f64>>, String> {
    let n = model.n_electrons;
    Ok(match model.spin {
        SpinMode::None => None,
        SpinMode::Collinear {
            total_magnetization: Some(m),
        } => Some(vec![(n + m) / 2.0, (n - m) / 2.0]),
        SpinMode::Collinear {
            total_magnetization: None,
        } => {
            if model.smearing == Smearing::None {
                return Err(
                    "collinear spin without smearing needs a fixed total magnetization (set total_magnetization or a smearing)"
                        .into(),
                );
            }
            None
        }
    })
}

/// Compute occupations for eigenvalues `eig[spin][k][band]` and k-point weights.
pub fn compute(
    model: &Model,
    eig: &[Vec<Vec<f64>>],
    weights: &[f64],
) -> Result<Occupations, String> {
    let fmax = model.max_occupation();
    let nspin = eig.len();
    let nbands = eig[0][0].len();
    let channels = channel_electrons(model)?;
    let mut occ: Vec<Vec<Vec<f64>>> = eig
        .iter()
        .map(|s| s.iter().map(|k| vec![0.0; k.len()]).collect())
        .collect();
    if model.smearing == Smearing::None {
        // Integer filling per channel.
        let per_channel: Vec<f64> = match &channels {
            Some(c) => c.clone(),
            None => vec![model.n_electrons / fmax; nspin],
        };
        let (mut homo, mut lumo) = (f64::NEG_INFINITY, f64::INFINITY);
        for s in 0..nspin {
            let nocc = per_channel[s];
            if (nocc - nocc.round()).abs() > 1e-8 {
                return Err(format!(
                    "{} electrons cannot fill spin channel {} with integer occupations; use smearing",
                    nocc * if channels.is_some() { 1.0 } else { fmax },
                    s + 1
                ));
            }
            let nocc = nocc.round() as usize;
            if nocc > nbands {
                return Err(format!(
                    "{nocc} occupied bands needed but only {nbands} computed"
                ));
            }
            for (k, e) in eig[s].iter().enumerate() {
                occ[s][k][..nocc].fill(fmax);
                if nocc > 0 {
                    homo = homo.max(e[nocc - 1]);
                }
                if nocc < nbands {
                    lumo = lumo.min(e[nocc]);
                }
            }
        }
        return Ok(Occupations {
            occ,
            fermi: None,
            minus_ts: 0.0,
            homo: homo.is_finite().then_some(homo),
            lumo: lumo.is_finite().then_some(lumo),
        });
    }
    let width = model.smearing.width();
    let groups: Vec<(Vec<usize>, f64)> = match &channels {
        Some(c) => (0..nspin).map(|s| (vec![s], c[s])).collect(),
        None => vec![((0..nspin).collect(), model.n_electrons)],
    };
    let mut fermi = vec![0.0; nspin];
    let mut minus_ts = 0.0;
    for (spins, target) in groups {
        let count = |mu: f64| -> f64 {
            spins
                .iter()
                .map(|&s| {
                    eig[s]
                        .iter()
                        .zip(weights)
                        .map(|(e, w)| {
                            w * e
                                .iter()
                                .map(|&x| fmax * model.smearing.occupation((x - mu) / width))
                                .sum::<f64>()
                        })
                        .sum::<f64>()
                })
                .sum()
        };
        let all = spins.iter().flat_map(|&s| eig[s].iter().flatten());
        let (lo0, hi0) = all.fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), &x| {
            (a.min(x), b.max(x))
        });
        let capacity = fmax * nbands as f64 * spins.len() as f64;
        if target > capacity - 1e-9 * capacity {
            return Err(format!(
                "{target} electrons do not fit in {nbands} bands; increase nbands"
            ));
        }
        let (mut lo, mut hi) = (lo0 - 50.0 * width - 1.0, hi0 + 50.0 * width + 1.0);
        for _ in 0..200 {
            let mid = 0.5 * (lo + hi);
            if count(mid) < target {
                lo = mid;
            } else {
                hi = mid;
            }
            if hi - lo < 1e-15 * (1.0 + hi.abs()) {
                break;
            }
        }
        let mu = 0.5 * (lo + hi);
        for &s in &spins {
            fermi[s] = mu;
            for (k, e) in eig[s].iter().enumerate() {
                for (b, &x) in e.iter().enumerate() {
                    let xx = (x - mu) / width;
                    occ[s][k][b] = fmax * model.smearing.occupation(xx);
                    minus_ts -= width * weights[k] * fmax * model.smearing.entropy(xx);
                }
            }
        }
    }
    Ok(Occupations {
        occ,
        fermi: Some(fermi),
        minus_ts,
        homo: None,
        lumo: None,
    })
}
