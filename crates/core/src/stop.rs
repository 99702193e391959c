//! Clean stops: a signal or a wall-time limit ends the SCF after the current iteration, with
//! its state written to the checkpoint.
//!
//! Contract: [`StopWhen::agreed`] is collective on the world communicator and returns the same
//! answer on every rank: a stop is agreed when any rank received a signal (so a signal delivered
//! to one rank stops all) or when the next iteration would not finish before the deadline with
//! room for the checkpoint (two of the slowest iterations so far).

use planewave_comm::{CommClass, CommExt, Communicator, ReduceOp};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Instant;

/// Why an SCF stopped before converging.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StopReason {
    /// A signal (its number) reached one of the ranks.
    Signal(usize),
    /// The wall-time limit was near.
    TimeLimit,
}

impl std::fmt::Display for StopReason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            StopReason::Signal(n) => write!(f, "signal {}", signal_name(*n)),
            StopReason::TimeLimit => write!(f, "the time limit"),
        }
    }
}

/// The usual name of signal `n` (Linux numbering).
pub fn signal_name(n: usize) -> String {
    match n {
        1 => "SIGHUP".into(),
        2 => "SIGINT".into(),
        10 => "SIGUSR1".into(),
        12 => "SIGUSR2".into(),
        15 => "SIGTERM".into(),
        _ => format!("{n}"),
    }
}

/// When to stop: the number of a received signal (0: none; set by a signal handler) and the
/// wall-clock deadline.
#[derive(Clone, Debug, Default)]
pub struct StopWhen {
    /// A signal handler stores the signal's number here.
    pub signal: Arc<AtomicUsize>,
    /// Stop before the iteration that would end after this instant.
    pub deadline: Option<Instant>,
}

impl StopWhen {
    /// Whether (and why) to stop now, given the slowest iteration so far (seconds). Collective
    /// on `world`.
    pub fn agreed(&self, world: &dyn Communicator, slowest_iteration: f64) -> Option<StopReason> {
        let signal = self.signal.load(Ordering::Relaxed) as u64;
        let late = self.deadline.is_some_and(|d| {
            let left = d.saturating_duration_since(Instant::now()).as_secs_f64();
            left < 2.0 * slowest_iteration
        });
        let mut v = [signal, u64::from(late)];
        world.allreduce(&mut v, ReduceOp::Max, CommClass::Other);
        match v {
            [0, 0] => None,
            [0, _] => Some(StopReason::TimeLimit),
            [s, _] => Some(StopReason::Signal(s as usize)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use planewave_comm::Threads;
    use std::time::Duration;

    #[test]
    fn a_signal_on_one_rank_stops_every_rank() {
        let out = Threads::run(3, |c| {
            let w = StopWhen::default();
            if c.rank() == 1 {
                w.signal.store(15, Ordering::Relaxed);
            }
            w.agreed(&c, 0.1)
        });
        assert!(out.iter().all(|r| *r == Some(StopReason::Signal(15))));
        assert_eq!(StopReason::Signal(15).to_string(), "signal SIGTERM");
    }

    #[test]
    fn the_deadline_stops_before_an_iteration_that_would_not_fit() {
        let solo = planewave_comm::Solo;
        let w = StopWhen {
            deadline: Some(Instant::now() + Duration::from_secs(10)),
            ..Default::default()
        };
        assert_eq!(w.agreed(&solo, 1.0), None);
        assert_eq!(w.agreed(&solo, 6.0), Some(StopReason::TimeLimit));
        assert_eq!(StopWhen::default().agreed(&solo, 1e9), None);
    }
}
