//! The run's [`Tuning`] from the environment: the CLI is the one place that reads these
//! variables (README, "Environment variables"); a value it cannot use is an error that names
//! the variable and what it takes.

use planewave_core::tuning::Tuning;

/// Band groups' product algorithm.
const BAND_ALGORITHM: &str = "PLANEWAVE_BAND_ALGORITHM";
/// Checkpoint transport strategy.
const CHECKPOINT_TRANSPORT: &str = "PLANEWAVE_CHECKPOINT_TRANSPORT";
/// Checkpoint block size in MiB.
const CHECKPOINT_BLOCK_MIB: &str = "PLANEWAVE_CHECKPOINT_BLOCK_MIB";

/// The value of `name` when set and not blank.
fn var(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.trim().is_empty())
}

/// The tuning the environment asks for (the defaults where it says nothing).
pub fn from_env() -> Result<Tuning, String> {
    let mut t = Tuning::default();
    if let Some(v) = var(BAND_ALGORITHM) {
        t.band_algorithm = v
            .trim()
            .parse()
            .map_err(|e| format!("{BAND_ALGORITHM}: {e}"))?;
    }
    if let Some(v) = var(CHECKPOINT_TRANSPORT) {
        t.checkpoint.transport = v
            .parse()
            .map_err(|e| format!("{CHECKPOINT_TRANSPORT} = {e}"))?;
    }
    if let Some(v) = var(CHECKPOINT_BLOCK_MIB) {
        let mib = v
            .trim()
            .parse::<f64>()
            .ok()
            .filter(|m| *m > 0.0 && m.is_finite())
            .ok_or_else(|| {
                format!("{CHECKPOINT_BLOCK_MIB} = '{v}': give a positive size in MiB, such as 1")
            })?;
        t.checkpoint.block_bytes = ((mib * 1048576.0) as usize).max(16);
    }
    Ok(t)
}
