//! Per-class communication statistics.
//!
//! Contract: every call of a [`Communicator`](crate::Communicator) back end records, under the
//! [`CommClass`] it was tagged with, one call, the bytes this rank sent (for in-place reductions
//! and broadcasts: the buffer size), the wall-clock seconds spent in the call and the part of
//! them spent blocked waiting for peers. The `Threads` back end measures waiting exactly (time
//! blocked on its mailbox); the MPI back end cannot see inside a blocking MPI call and reports
//! as waiting the time of calls that only wait (barriers, blocking receives, the wait phase
//! of exchanges, of the non-blocking all-to-all-v and of requests), a lower bound (see the
//! `mpi` module doc). The node-aggregated all-to-all-v with a shared window records its node
//! barriers as waiting. One [`Stats`] is shared
//! by a rank's world communicator and every communicator split from it, so a run can report
//! communication per level at the end.
//!
//! Each call is also filed under the [`Operation`] the rank is doing when it makes the call
//! (the transposes, overlap reductions, the subspace solution, ring passes, density and
//! potential work), set by the caller for a stretch of code with [`Stats::operation`]; the
//! innermost stretch wins, and calls outside any are [`Operation::Other`]. So a run can also
//! say which operation of a level its communication time goes to.

use crate::communicator::CommClass;
use std::fmt;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// What a rank is doing when it communicates (the second axis of [`Stats`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Operation {
    /// The transposes of distributed 3-D FFTs (bands and density grids).
    Transpose,
    /// Sums of overlap matrices, projections and other reduced quantities of the band algebra.
    Overlap,
    /// Solving the subspace eigenproblems: broadcasts and waits for the solution.
    Subspace,
    /// Passing orbitals around the band-group ring (exact exchange).
    Ring,
    /// Density and potential grids (their sums and gathers), and the sums of the blocks'
    /// shares (density, forces, stress) over band and k-point groups.
    Density,
    /// Anything else (set-up, agreement checks, I/O).
    Other,
}

impl Operation {
    /// All operations, in report order.
    pub const ALL: [Operation; 6] = [
        Operation::Transpose,
        Operation::Overlap,
        Operation::Subspace,
        Operation::Ring,
        Operation::Density,
        Operation::Other,
    ];
    /// Index into [`Operation::ALL`].
    pub fn index(self) -> usize {
        self as usize
    }
    /// Short name for reports.
    pub fn name(self) -> &'static str {
        match self {
            Operation::Transpose => "transposes",
            Operation::Overlap => "overlaps",
            Operation::Subspace => "subspace",
            Operation::Ring => "ring",
            Operation::Density => "density",
            Operation::Other => "other",
        }
    }
}

const NOPS: usize = Operation::ALL.len();
const NCLASSES: usize = CommClass::ALL.len();

/// Totals for one class.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct ClassStats {
    /// Number of calls.
    pub calls: u64,
    /// Bytes sent by this rank.
    pub bytes: u64,
    /// Seconds spent inside the calls.
    pub seconds: f64,
    /// Seconds of those spent blocked waiting for peers.
    pub wait_seconds: f64,
}

impl ClassStats {
    const ZERO: ClassStats = ClassStats {
        calls: 0,
        bytes: 0,
        seconds: 0.0,
        wait_seconds: 0.0,
    };
}

impl ClassStats {
    fn add(&mut self, o: &ClassStats) {
        self.calls += o.calls;
        self.bytes += o.bytes;
        self.seconds += o.seconds;
        self.wait_seconds += o.wait_seconds;
    }
}

/// Thread-safe accumulator of [`ClassStats`] per [`CommClass`] and [`Operation`].
#[derive(Debug)]
pub struct Stats {
    cells: Mutex<[[ClassStats; NOPS]; NCLASSES]>,
    current: AtomicUsize,
    measure_waiting: AtomicBool,
}

/// The stretch of code during which a rank's calls are filed under one [`Operation`]
/// (from [`Stats::operation`]); dropping it restores the operation before it.
#[must_use = "the operation lasts only while the scope is alive"]
pub struct OperationScope {
    stats: Arc<Stats>,
    previous: usize,
}

impl Drop for OperationScope {
    fn drop(&mut self) {
        self.stats.current.store(self.previous, Ordering::Relaxed);
    }
}

impl Default for Stats {
    fn default() -> Self {
        Self::new()
    }
}

impl Stats {
    /// Empty statistics.
    pub const fn new() -> Self {
        Stats {
            cells: Mutex::new([[ClassStats::ZERO; NOPS]; NCLASSES]),
            current: AtomicUsize::new(NOPS - 1),
            measure_waiting: AtomicBool::new(false),
        }
    }

    /// Ask back ends that cannot see waiting inside a collective (MPI) to measure it: each
    /// data-moving collective then starts with a barrier whose time is recorded as waiting
    /// (one extra latency per call, so a diagnostic). Every rank of a run must ask alike.
    pub fn set_measure_waiting(&self, on: bool) {
        self.measure_waiting.store(on, Ordering::Relaxed);
    }

    /// Whether [`set_measure_waiting`](Self::set_measure_waiting) is on.
    pub fn measures_waiting(&self) -> bool {
        self.measure_waiting.load(Ordering::Relaxed)
    }

    /// File this rank's calls under `op` until the returned scope is dropped.
    pub fn operation(self: &Arc<Self>, op: Operation) -> OperationScope {
        let previous = self.current.swap(op.index(), Ordering::Relaxed);
        OperationScope {
            stats: self.clone(),
            previous,
        }
    }

    fn cell<R>(&self, class: CommClass, f: impl FnOnce(&mut ClassStats) -> R) -> R {
        let op = self.current.load(Ordering::Relaxed);
        let mut g = self.cells.lock().unwrap_or_else(|e| e.into_inner());
        f(&mut g[class.index()][op])
    }

    /// Add one call.
    pub fn record(&self, class: CommClass, bytes: usize, elapsed: Duration, waited: Duration) {
        self.cell(class, |s| {
            s.calls += 1;
            s.bytes += bytes as u64;
            s.seconds += elapsed.as_secs_f64();
            s.wait_seconds += waited.as_secs_f64();
        })
    }

    /// Add waiting time (and the same time spent) to a class without counting a call
    /// (used by the `wait` of non-blocking requests).
    pub fn record_wait(&self, class: CommClass, waited: Duration) {
        self.cell(class, |s| {
            s.seconds += waited.as_secs_f64();
            s.wait_seconds += waited.as_secs_f64();
        })
    }

    /// Totals of one class, over all operations.
    pub fn get(&self, class: CommClass) -> ClassStats {
        let g = self.cells.lock().unwrap_or_else(|e| e.into_inner());
        let mut t = ClassStats::ZERO;
        g[class.index()].iter().for_each(|c| t.add(c));
        t
    }

    /// Totals of one class and one operation.
    pub fn get_operation(&self, class: CommClass, op: Operation) -> ClassStats {
        self.cells.lock().unwrap_or_else(|e| e.into_inner())[class.index()][op.index()]
    }

    /// Copy of all totals.
    pub fn snapshot(&self) -> StatsSnapshot {
        StatsSnapshot {
            rows: CommClass::ALL.map(|c| (c, self.get(c))),
        }
    }

    /// Reset all totals to zero.
    pub fn reset(&self) {
        *self.cells.lock().unwrap_or_else(|e| e.into_inner()) =
            [[ClassStats::ZERO; NOPS]; NCLASSES];
    }
}

/// A copy of the totals, printable as a table.
#[derive(Clone, Debug, PartialEq)]
pub struct StatsSnapshot {
    /// One row per class, in the order of [`CommClass::ALL`].
    pub rows: [(CommClass, ClassStats); 4],
}

impl StatsSnapshot {
    /// Sum over all classes.
    pub fn total(&self) -> ClassStats {
        let mut t = ClassStats::default();
        self.rows.iter().for_each(|(_, s)| t.add(s));
        t
    }
}

impl fmt::Display for StatsSnapshot {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "{:<8} {:>10} {:>14} {:>12} {:>12}",
            "class", "calls", "bytes", "seconds", "waiting"
        )?;
        for (c, s) in &self.rows {
            writeln!(
                f,
                "{:<8} {:>10} {:>14} {:>12.6} {:>12.6}",
                c.name(),
                s.calls,
                s.bytes,
                s.seconds,
                s.wait_seconds
            )?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn calls_are_filed_under_the_innermost_operation() {
        let stats = Arc::new(Stats::new());
        let ms = Duration::from_millis(1);
        stats.record(CommClass::GVector, 8, ms, Duration::ZERO);
        {
            let _t = stats.operation(Operation::Transpose);
            stats.record(CommClass::GVector, 16, ms, ms);
            {
                let _o = stats.operation(Operation::Overlap);
                stats.record(CommClass::GVector, 32, ms, Duration::ZERO);
            }
            stats.record(CommClass::Band, 64, ms, Duration::ZERO);
        }
        stats.record(CommClass::GVector, 128, ms, Duration::ZERO);
        let cell = |c, o| stats.get_operation(c, o).bytes;
        assert_eq!(cell(CommClass::GVector, Operation::Other), 136);
        assert_eq!(cell(CommClass::GVector, Operation::Transpose), 16);
        assert_eq!(cell(CommClass::GVector, Operation::Overlap), 32);
        assert_eq!(cell(CommClass::Band, Operation::Transpose), 64);
        let g = stats.get(CommClass::GVector);
        assert_eq!((g.calls, g.bytes), (4, 184));
        assert_eq!(
            stats
                .get_operation(CommClass::GVector, Operation::Transpose)
                .wait_seconds,
            1e-3
        );
    }
}
