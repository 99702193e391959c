//! planewave-comm: communicators, process topology and collective strategies for planewave.
//!
//! Contract: every distributed algorithm in planewave talks to its peers only through the
//! object-safe [`Communicator`] trait (typed helpers in [`CommExt`]). Back ends: [`Solo`] (one
//! process), [`Threads`] (n ranks as threads with real message passing, for tests and as an
//! embedded parallel back end) and `Mpi` (rsmpi, cargo feature `mpi`). On top of them:
//! [`Topology`] (k-point × band × G-vector groups plus node groups), the all-to-all-v
//! [`strategies`], [`reduce_scatter`], [`sum`] and [`ring`] algorithms, per-class [`stats`], the
//! communication benchmark [`bench`](mod@bench), the cross-back-end [`selfcheck`] and the launcher
//! detection [`launch`]. See `DESIGN.md`, "The parallel model".

mod communicator;
mod element;
mod ext;
mod request;
mod solo;
mod threads;

pub mod bench;
pub mod launch;
pub mod links;
#[cfg(feature = "mpi")]
pub mod mpi;
pub mod reduce_scatter;
pub mod ring;
pub mod selfcheck;
pub mod stats;
pub mod strategies;
pub mod sum;
pub mod topology;

pub use communicator::{CommClass, Communicator, SharedMemory};
pub use element::{displacements, Element, Kind, Payload, ReduceOp, Slice, SliceMut};
pub use ext::CommExt;
pub use launch::{foreign_launcher_ranks, ForeignLaunch};
pub use request::{wait_all, Pending, Request};
pub use solo::Solo;
pub use stats::{ClassStats, Operation, OperationScope, Stats, StatsSnapshot};
pub use strategies::{AlltoallvAlgorithm, AlltoallvStrategy};
pub use threads::{panic_message, RankFailure, ThreadComm, Threads, ThreadsBuilder};
pub use topology::{
    Layout, LayoutError, LayoutRequest, Placement, ProblemSize, RankOrder, Topology,
};
