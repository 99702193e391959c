//! Handles of non-blocking point-to-point operations.
//!
//! Contract: a [`Request`] owns its buffer (so no borrow outlives the call that started it).
//! [`Request::wait`] completes it and returns the received data for a receive (`None` for a
//! send). Dropping a request that was not waited for waits for it (a message is never lost and
//! a buffer is never freed while the transport uses it). Time spent in `wait` is recorded as
//! waiting time of the request's class.

use crate::communicator::CommClass;
use crate::element::{Element, Payload};
use crate::stats::Stats;
use std::sync::Arc;
use std::time::Instant;

/// What a back end must do to complete a non-blocking operation.
pub trait Pending {
    /// Block until done; the received data for a receive.
    fn complete(self: Box<Self>) -> Option<Payload>;
}

/// An operation that completed when it was started (or a ready result).
pub(crate) struct Ready(pub(crate) Option<Payload>);

impl Pending for Ready {
    fn complete(self: Box<Self>) -> Option<Payload> {
        self.0
    }
}

/// A non-blocking operation in flight.
pub struct Request {
    pending: Option<Box<dyn Pending>>,
    stats: Arc<Stats>,
    class: CommClass,
}

impl Request {
    /// Wrap a back end's pending operation.
    pub fn new(pending: Box<dyn Pending>, stats: Arc<Stats>, class: CommClass) -> Self {
        Request {
            pending: Some(pending),
            stats,
            class,
        }
    }

    /// Complete the operation; the received data for a receive; for a send, the sent buffer
    /// where the back end gives it back (MPI), `None` otherwise.
    pub fn wait(mut self) -> Option<Payload> {
        self.finish()
    }

    /// Complete a receive and return its elements; panics for a send or a kind mismatch.
    pub fn wait_data<T: Element>(self) -> Vec<T> {
        let p = self
            .wait()
            .expect("planewave-comm: wait_data called on a send request");
        T::from_payload(p)
    }

    fn finish(&mut self) -> Option<Payload> {
        let p = self.pending.take()?;
        let t0 = Instant::now();
        let out = p.complete();
        self.stats.record_wait(self.class, t0.elapsed());
        out
    }
}

impl Drop for Request {
    fn drop(&mut self) {
        if self.pending.is_some() && !std::thread::panicking() {
            self.finish();
        }
    }
}

/// Wait for every request, in order; what each [`Request::wait`] returns.
pub fn wait_all(requests: Vec<Request>) -> Vec<Option<Payload>> {
    requests.into_iter().map(Request::wait).collect()
}
