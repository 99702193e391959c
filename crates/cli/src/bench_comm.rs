//! `planewave bench comm`: the all-to-all-v strategies against native, and with `--save` the
//! machine's links as a calibration for `planewave advise --comm-model`.
//!
//! Contract: under mpirun (an MPI build) every rank of the MPI world takes part; otherwise
//! `--ranks` in-process ranks on emulated nodes of `--ranks-per-node`. Rank 0 prints the
//! strategies' table (without `--save`), the fitted links ([`planewave_comm::links`]) and with
//! `--save` writes the [`Calibration`] JSON. A file that cannot be written is one error, exit 2.

use crate::comm_model::{Calibration, CommModel};
use crate::{fail, launch};
use planewave_comm::bench::{run_comm_bench, DEFAULT_SIZES};
use planewave_comm::links::{measure_links, Link, Links};
use planewave_comm::Communicator;
use std::path::Path;
use std::process::ExitCode;
use std::sync::Arc;

/// Run the benchmark (module doc).
pub fn run(ranks: usize, ranks_per_node: usize, save: Option<&Path>) -> ExitCode {
    if planewave_comm::foreign_launcher_ranks().is_some() {
        return launch::run_ranks(None, |world, _| on_world(&world, save));
    }
    if ranks == 0 || ranks_per_node == 0 {
        return fail("error: --ranks and --ranks-per-node must be at least 1");
    }
    let codes = planewave_comm::Threads::builder(ranks)
        .ranks_per_node(ranks_per_node)
        .run(|c| on_world(&c.into_arc(), save));
    codes.into_iter().next().unwrap_or(ExitCode::SUCCESS)
}

/// The collective part: time (the strategies' table only without `save`: it moves up to
/// 16 MiB per rank pair), fit, and report on rank 0.
fn on_world(world: &Arc<dyn Communicator>, save: Option<&Path>) -> ExitCode {
    let table = save
        .is_none()
        .then(|| run_comm_bench(world.clone(), &DEFAULT_SIZES));
    let links = measure_links(world);
    if world.rank() != 0 {
        return ExitCode::SUCCESS;
    }
    if let Some(table) = table {
        outln!("all-to-all-v strategies (time per call, ratio to native)");
        outln!("{table}");
    }
    outln!("{}", describe(&links));
    let Some(path) = save else {
        return ExitCode::SUCCESS;
    };
    if links.backend != "mpi" {
        outln!(
            "  (in-process ranks, not your MPI library: calibrate with the MPI build under mpirun for advise)"
        );
    }
    let text = serde_json::to_string_pretty(&Calibration::from(&links))
        .expect("a calibration is plain numbers and strings");
    match std::fs::write(path, text + "\n") {
        Ok(()) => {
            outln!(
                "calibration written to {}: use it with planewave advise INPUT --ranks N --nodes M --comm-model {}",
                path.display(),
                path.display()
            );
            if links.inter.is_none() {
                outln!(
                    "  (one node: the inter-node link stays built in; run this under mpirun across two nodes to measure it)"
                );
            }
            ExitCode::SUCCESS
        }
        Err(e) => fail(&format!("error: cannot write {}: {e}", path.display())),
    }
}

/// The fitted links, one line each, and what stays built in.
fn describe(links: &Links) -> String {
    let line = |name: &str, l: Option<Link>, why: &str| match l {
        Some(l) => format!("  {name}: {l}"),
        None => format!("  {name}: not measured ({why})"),
    };
    format!(
        "links ({} {} rank(s) over {} node(s); t = (p - 1)(latency + bytes / bandwidth) fitted to native all-to-all-v):\n{}\n{}\n  built in (advise without --comm-model): {}",
        links.ranks,
        links.backend,
        links.nodes,
        line("intra-node", links.intra, "one rank per node"),
        line("inter-node", links.inter, "one node"),
        CommModel::built_in().describe()
    )
}
