//! planewave-comm: communicators for planewave.
//!
//! Contract: every distributed algorithm in planewave talks to its peers only through the
//! [`Communicator`] trait. This crate currently ships the single-process back end [`Solo`];
//! the `Threads(n)` and MPI back ends, the process topology and the collective strategies plug in
//! behind the same trait (see DESIGN.md and the comm issue).

mod communicator;
mod solo;

pub use communicator::{CommClass, Communicator};
pub use solo::Solo;
