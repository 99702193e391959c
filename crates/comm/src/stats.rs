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

use crate::communicator::CommClass;
use std::fmt;
use std::sync::Mutex;
use std::time::Duration;

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

/// Thread-safe accumulator of [`ClassStats`] per [`CommClass`].
#[derive(Debug)]
pub struct Stats {
    per_class: Mutex<[ClassStats; 4]>,
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
            per_class: Mutex::new([ClassStats::ZERO; 4]),
        }
    }

    /// Add one call.
    pub fn record(&self, class: CommClass, bytes: usize, elapsed: Duration, waited: Duration) {
        let mut g = self.per_class.lock().unwrap_or_else(|e| e.into_inner());
        let s = &mut g[class.index()];
        s.calls += 1;
        s.bytes += bytes as u64;
        s.seconds += elapsed.as_secs_f64();
        s.wait_seconds += waited.as_secs_f64();
    }

    /// Add waiting time (and the same time spent) to a class without counting a call
    /// (used by the `wait` of non-blocking requests).
    pub fn record_wait(&self, class: CommClass, waited: Duration) {
        let mut g = self.per_class.lock().unwrap_or_else(|e| e.into_inner());
        let s = &mut g[class.index()];
        s.seconds += waited.as_secs_f64();
        s.wait_seconds += waited.as_secs_f64();
    }

    /// Totals of one class.
    pub fn get(&self, class: CommClass) -> ClassStats {
        self.per_class.lock().unwrap_or_else(|e| e.into_inner())[class.index()]
    }

    /// Copy of all totals.
    pub fn snapshot(&self) -> StatsSnapshot {
        let g = self.per_class.lock().unwrap_or_else(|e| e.into_inner());
        StatsSnapshot {
            rows: CommClass::ALL.map(|c| (c, g[c.index()])),
        }
    }

    /// Reset all totals to zero.
    pub fn reset(&self) {
        *self.per_class.lock().unwrap_or_else(|e| e.into_inner()) = [ClassStats::ZERO; 4];
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
        for (_, s) in &self.rows {
            t.calls += s.calls;
            t.bytes += s.bytes;
            t.seconds += s.seconds;
            t.wait_seconds += s.wait_seconds;
        }
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
