//! Where the ranks of a run come from, and how many threads each gets.
//!
//! Contract: [`run_ranks`] calls `body(world)` once per rank and returns rank 0's exit code.
//! - One process (`Solo`), unless the program was started by mpirun/srun with more than one
//!   rank (then the MPI back end, in a build with the `mpi` feature; without it the program
//!   refuses before this point) or `--ranks N` asks for N in-process `Threads` ranks.
//! - Threads per rank: `RAYON_NUM_THREADS`, else the node's cores divided among the ranks on
//!   the node (at least one); a warning (printed by rank 0) when ranks × threads exceed the
//!   cores.
//! - A panic on any rank ends every rank with one message and exit code 2: under MPI the
//!   panicking rank prints it and aborts the job; under `Threads` the run unwinds and the
//!   message is printed once here.

use planewave_comm::{Communicator, RankFailure, Threads};
use std::process::ExitCode;
use std::sync::Arc;

/// The ranks and threads of this run (for the report).
#[derive(Clone, Copy, Debug)]
pub struct Placement {
    /// Threads (rayon) per rank.
    pub threads: usize,
    /// Ranks that share this node.
    pub ranks_on_node: usize,
    /// Cores of this node.
    pub cores: usize,
    /// Cores this rank may run on (its affinity mask).
    pub bound: usize,
}

impl Placement {
    /// A warning when the ranks on this node ask for more threads than it has cores, or a
    /// rank runs more threads than the cores it is bound to.
    pub fn oversubscription(&self) -> Option<String> {
        if self.ranks_on_node * self.threads > self.cores {
            Some(format!(
                "{} ranks x {} threads on a node with {} cores: the cores are oversubscribed; set RAYON_NUM_THREADS={} or use fewer ranks",
                self.ranks_on_node,
                self.threads,
                self.cores,
                (self.cores / self.ranks_on_node).max(1)
            ))
        } else if self.threads > self.bound {
            Some(format!(
                "{} threads per rank, but each rank is bound to {} core(s): use mpirun --bind-to none (or --map-by slot:PE={}) or RAYON_NUM_THREADS={}",
                self.threads, self.bound, self.threads, self.bound
            ))
        } else {
            None
        }
    }
}

/// Cores this process may run on (its affinity mask: mpirun may bind a rank to one core).
fn bound_cores() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// Cores of the node: the online CPUs (`/sys/devices/system/cpu/online`, e.g. `0-63`), or the
/// affinity mask when that file cannot be read.
fn node_cores() -> usize {
    let online = std::fs::read_to_string("/sys/devices/system/cpu/online").ok();
    let count = online.as_deref().and_then(|list| {
        list.trim().split(',').try_fold(0usize, |n, range| {
            let mut ends = range.split('-').map(|x| x.trim().parse::<usize>());
            match (ends.next(), ends.next()) {
                (Some(Ok(_)), None) => Some(n + 1),
                (Some(Ok(a)), Some(Ok(b))) if b >= a => Some(n + b - a + 1),
                _ => None,
            }
        })
    });
    count.unwrap_or(0).max(bound_cores())
}

/// Threads for each of `ranks_on_node` ranks: `RAYON_NUM_THREADS`, else a fair share of the
/// node's cores within this rank's affinity mask.
fn placement(ranks_on_node: usize) -> Placement {
    let cores = node_cores();
    let bound = bound_cores();
    let threads = std::env::var("RAYON_NUM_THREADS")
        .ok()
        .and_then(|v| v.trim().parse::<usize>().ok())
        .filter(|&t| t > 0)
        .unwrap_or_else(|| (cores / ranks_on_node.max(1)).clamp(1, bound));
    Placement {
        threads,
        ranks_on_node,
        cores,
        bound,
    }
}

/// Run `body` on every rank (see the module doc); `threads_ranks` is `--ranks`.
pub fn run_ranks<F>(threads_ranks: Option<usize>, body: F) -> ExitCode
where
    F: Fn(Arc<dyn Communicator>, Placement) -> ExitCode + Sync,
{
    if let Some(code) = mpi_run(&body) {
        return code;
    }
    match threads_ranks {
        None | Some(1) => {
            let place = placement(1);
            in_pool(place.threads, || {
                body(Arc::new(planewave_comm::Solo), place)
            })
        }
        Some(n) => threads_run(n, &body),
    }
}

/// Run `f` as a worker of a pool of `threads` rayon threads, so that the calculation's parallel
/// loops start on the calling thread: with one thread they run inline, with no hand-off to
/// another thread and back (on si8 that hand-off cost 15% of a serial run). The main thread's
/// stack size is kept. If the pool cannot start, `f` runs on the global pool.
fn in_pool<R: Send>(threads: usize, f: impl FnOnce() -> R + Send) -> R {
    match rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .stack_size(8 << 20)
        .thread_name(|i| format!("worker-{i}"))
        .build()
    {
        Ok(pool) => pool.install(f),
        Err(_) => f(),
    }
}

fn threads_run<F>(n: usize, body: &F) -> ExitCode
where
    F: Fn(Arc<dyn Communicator>, Placement) -> ExitCode + Sync,
{
    let place = placement(n);
    // The failing rank's panic is reported once below, not by every unwinding thread.
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    let out = Threads::try_run(n, |c| {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(place.threads)
            .thread_name(move |i| format!("rank-worker-{i}"))
            .build()
            .map_err(|e| format!("cannot start the threads of a rank: {e}"))?;
        let world = c.into_arc();
        Ok::<_, String>(pool.install(|| body(world, place)))
    });
    std::panic::set_hook(previous);
    match out {
        Ok(codes) => codes.into_iter().next().unwrap_or(ExitCode::SUCCESS),
        Err(RankFailure::Panic { rank, message }) => {
            eprintln!("error: internal error on rank {rank}: {message}\n  hint: this is a bug in planewave; please report it with the input");
            ExitCode::from(2)
        }
        Err(RankFailure::Error { rank, error }) => {
            eprintln!("error: rank {rank}: {error}");
            ExitCode::from(2)
        }
    }
}

/// Under mpirun/srun with more than one rank (build with `mpi`): run on the MPI world.
#[cfg(feature = "mpi")]
fn mpi_run<F>(body: &F) -> Option<ExitCode>
where
    F: Fn(Arc<dyn Communicator>, Placement) -> ExitCode + Sync,
{
    planewave_comm::foreign_launcher_ranks()?;
    let universe = match planewave_comm::mpi::Mpi::init() {
        Ok(u) => u,
        Err(e) => {
            eprintln!("error: cannot start MPI: {e}");
            return Some(ExitCode::from(2));
        }
    };
    let mpi_world = universe.world();
    // A panic on any rank: one message from that rank, then every rank ends with exit code 2.
    let hook_world = mpi_world.clone();
    std::panic::set_hook(Box::new(move |info| {
        let msg = planewave_comm::panic_message(info.payload());
        let at = info
            .location()
            .map(|l| format!(" at {}:{}", l.file(), l.line()))
            .unwrap_or_default();
        hook_world.fail(&format!(
            "internal error: {msg}{at}\n  hint: this is a bug in planewave; please report it with the input"
        ));
    }));
    let world: Arc<dyn Communicator> = mpi_world;
    let place = placement(world.split_shared().size());
    let code = in_pool(place.threads, || body(world, place));
    drop(universe);
    Some(code)
}

#[cfg(not(feature = "mpi"))]
fn mpi_run<F>(_body: &F) -> Option<ExitCode>
where
    F: Fn(Arc<dyn Communicator>, Placement) -> ExitCode + Sync,
{
    None
}
