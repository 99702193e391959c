//! The run's [`Tuning`] from the environment, and the communication strategies the environment
//! gives where the input leaves them out: the CLI is the one place that reads these variables
//! (README, "Environment variables"); a value it cannot use is an error that names the
//! variable and what it takes.

use planewave_comm::strategies::AlltoallvChoice;
use planewave_comm::sum::SumChoice;
use planewave_core::input::RunSpec;
use planewave_core::tuning::Tuning;

/// Band groups' product algorithm.
const BAND_ALGORITHM: &str = "PLANEWAVE_BAND_ALGORITHM";
/// Checkpoint transport strategy.
const CHECKPOINT_TRANSPORT: &str = "PLANEWAVE_CHECKPOINT_TRANSPORT";
/// Checkpoint block size in MiB.
const CHECKPOINT_BLOCK_MIB: &str = "PLANEWAVE_CHECKPOINT_BLOCK_MIB";
/// All-to-all-v strategy of the transposes, where the input has no `[parallel] alltoallv`.
const ALLTOALLV: &str = "PLANEWAVE_ALLTOALLV";
/// Sum over k-point groups, where the input has no `[parallel] kpoint_sum`.
const KPOINT_SUM: &str = "PLANEWAVE_KPOINT_SUM";
/// Whether small (spin, k) blocks are solved one per thread.
const CONCURRENT_BLOCKS: &str = "PLANEWAVE_CONCURRENT_BLOCKS";
/// Measure the waiting in MPI collectives (a barrier before each).
const MEASURE_WAITING: &str = "PLANEWAVE_MEASURE_WAITING";

/// Whether the environment asks to measure the waiting inside MPI collectives (`1`; `0` or
/// unset: not).
pub fn measure_waiting() -> Result<bool, String> {
    match var(MEASURE_WAITING).as_deref().map(str::trim) {
        None | Some("0") => Ok(false),
        Some("1") => Ok(true),
        Some(v) => Err(format!(
            "{MEASURE_WAITING} = {v:?}: use 1 (measure) or 0 (not)"
        )),
    }
}

/// Turn on [`measure_waiting`] for `world` and every communicator split from it when every
/// rank asks for it (collective: one all-reduce, so ranks that disagree cannot deadlock).
pub fn apply_measure_waiting(world: &dyn planewave_comm::Communicator, asked: bool) {
    use planewave_comm::{CommClass, CommExt, ReduceOp};
    let mut on = [u64::from(asked)];
    world.allreduce(&mut on, ReduceOp::Min, CommClass::Other);
    world.stats().set_measure_waiting(on[0] == 1);
}

/// The strategies the environment names, checked: (all-to-all-v, k-point sum).
pub fn strategies() -> Result<(Option<String>, Option<String>), String> {
    let alltoallv = var(ALLTOALLV);
    if let Some(v) = &alltoallv {
        v.parse::<AlltoallvChoice>()
            .map_err(|e| format!("{ALLTOALLV}: {e}"))?;
    }
    let sum = var(KPOINT_SUM);
    if let Some(v) = &sum {
        v.parse::<SumChoice>()
            .map_err(|e| format!("{KPOINT_SUM}: {e}"))?;
    }
    Ok((alltoallv, sum))
}

/// `spec` with the environment's strategies where the input has none.
pub fn apply_strategies(spec: &mut RunSpec, (alltoallv, sum): &(Option<String>, Option<String>)) {
    if spec.parallel.alltoallv.is_none() {
        spec.parallel.alltoallv.clone_from(alltoallv);
    }
    if spec.parallel.kpoint_sum.is_none() {
        spec.parallel.kpoint_sum.clone_from(sum);
    }
}

/// The dense-kernel back end and the subspace solver the environment names, set as
/// planewave-linalg's process-wide defaults (`PLANEWAVE_LINALG_BACKEND`,
/// `PLANEWAVE_SUBSPACE_SOLVER`).
pub fn set_linalg_defaults() -> Result<(), String> {
    use planewave_linalg::subspace::{set_solver_request, SolverRequest};
    if let Some(b) = planewave_linalg::backend_from_env()? {
        planewave_linalg::set_default_backend(b);
    }
    set_solver_request(SolverRequest::from_env().map_err(|e| e.0)?);
    Ok(())
}

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
    if let Some(v) = var(CONCURRENT_BLOCKS) {
        t.concurrent_blocks = match v.trim() {
            "1" => true,
            "0" => false,
            _ => {
                return Err(format!(
                    "{CONCURRENT_BLOCKS} = '{v}': use 1 (small k-point blocks one per thread, the default) or 0 (one after the other)"
                ))
            }
        };
    }
    Ok(t)
}
