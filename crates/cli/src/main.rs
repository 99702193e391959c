//! `planewave`: the command-line program.
//!
//! `planewave run INPUT` runs an SCF (TOML or Quantum ESPRESSO pw.x input, recognised by content),
//! printing one line per iteration, a summary, forces and stress, and writes a results JSON; a QE
//! input with `calculation = 'relax' | 'vc-relax'` is relaxed instead.
//! `planewave relax INPUT` relaxes the structure (positions; the cell too with `[relax] cell`).
//! `planewave check INPUT` validates the input and prints the set-up without running.
//! `planewave bench comm` times the collective strategies of the communication layer.

mod report;

use clap::{Parser, Subcommand};
use planewave_core::relax::{self, Observer, StepInfo};
use planewave_core::scf::IterationInfo;
use planewave_core::{forces, input, scf, setup, stress};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// Plane-wave pseudopotential Kohn–Sham DFT.
///
/// Inputs are TOML files (see examples/si.toml) or Quantum ESPRESSO pw.x inputs. Energies are
/// printed in Hartree (Ha) and eV, lengths in bohr, forces in Ha/bohr and eV/Å, stress in
/// Ha/bohr^3 and GPa. Exit codes: 0 success, 1 SCF or relaxation not converged, 2 bad input or
/// set-up.
#[derive(Parser)]
#[command(name = "planewave", version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run a self-consistent calculation, then forces and stress ([properties] in the input).
    ///
    /// Example: planewave run examples/si.toml
    Run {
        /// Input file (TOML or QE pw.x input).
        input: PathBuf,
        /// Where to write the results JSON (default: next to the input, `<stem>.json`).
        #[arg(long)]
        json: Option<PathBuf>,
        /// Print nothing but errors.
        #[arg(long, short)]
        quiet: bool,
    },
    /// Relax atomic positions (and the cell with `[relax] cell = true`) by BFGS or FIRE.
    ///
    /// Writes `<stem>.json` (final state and one entry per ionic step), `<stem>.relaxed.vasp`
    /// (final structure, POSCAR) and `<stem>.traj.xyz` (extended XYZ, one frame per step, Å/eV,
    /// readable by ASE). Example: planewave relax examples/si8_displaced.toml
    Relax {
        /// Input file (TOML or QE pw.x input).
        input: PathBuf,
        /// Where to write the results JSON (default: next to the input, `<stem>.json`).
        #[arg(long)]
        json: Option<PathBuf>,
        /// Print only the ionic steps and the final structure (no SCF iterations).
        #[arg(long, short)]
        quiet: bool,
    },
    /// Validate an input and print the set-up (cell, k-points, FFT grid, plane waves, memory).
    Check {
        /// Input file (TOML or QE pw.x input).
        input: PathBuf,
    },
    /// Benchmarks of the parallel layers.
    Bench {
        #[command(subcommand)]
        what: BenchCommand,
    },
}

#[derive(Subcommand)]
enum BenchCommand {
    /// Time every all-to-all-v strategy against the native one, 64 B to 16 MiB per rank pair,
    /// on the in-process Threads back end (ranks as threads; under mpirun use the MPI build of
    /// planewave-comm's `mpi_check --bench`).
    Comm {
        /// Number of ranks.
        #[arg(long, default_value_t = 4)]
        ranks: usize,
        /// Ranks per emulated node (for the node-aggregated strategy).
        #[arg(long, default_value_t = 2)]
        ranks_per_node: usize,
    },
    /// GFLOP/s of the subspace kernels (overlap, rotation, triangular rotation, Cholesky
    /// orthonormalisation; npw 2000/20000 x bands 64/256/1024) and of band-distributed products
    /// (systolic ring in both neighbour orders vs gather, on 2 Threads ranks). faer vs OpenBLAS
    /// needs planewave-linalg's `lapack` feature (`cargo run --release -p planewave-linalg
    /// --features lapack --example linalg_bench`).
    Linalg {
        /// A small subset (npw 2000, bands 64 and 256).
        #[arg(long)]
        quick: bool,
    },
    /// Time serial 3-D FFTs (full complex, sphere-restricted, r2c; 24^3 to 120x120x90) in ms and
    /// GFLOP/s, and the distributed slab/pencil transform (Threads ranks) for every transpose
    /// strategy and band-block size. The FFTW ratios need a build with planewave-fft's `fftw`
    /// feature (`cargo run --release -p planewave-fft --features fftw --example fft_bench`).
    Fft {
        /// rayon thread counts of the serial transforms, comma separated (FFTW runs at 1 only).
        #[arg(long, default_value = "1,2", value_delimiter = ',')]
        threads: Vec<usize>,
        /// Rank counts of the distributed runs, comma separated (empty: skip them).
        #[arg(long, default_value = "4", value_delimiter = ',')]
        ranks: Vec<usize>,
    },
}

fn main() -> ExitCode {
    if let Some(launch) = planewave_comm::foreign_launcher_ranks() {
        // Without the MPI back end every rank would run the whole calculation on its own.
        if launch.rank.unwrap_or(0) == 0 {
            eprintln!(
                "error: started by {} as {} ranks, but planewave runs a calculation in one process (this would run {} independent copies)\n  hint: run it without the launcher; it uses the node's cores through threads (RAYON_NUM_THREADS limits them)",
                launch.launcher, launch.ranks, launch.ranks
            );
        }
        return ExitCode::from(2);
    }
    let cli = Cli::parse();
    match cli.command {
        Command::Check { input } => match prepare(&input) {
            Ok(s) => {
                report::setup(&s);
                ExitCode::SUCCESS
            }
            Err(e) => fail(&e),
        },
        Command::Run { input, json, quiet } => {
            let spec = match input::load(&input) {
                Ok(s) => s,
                Err(e) => return fail(&e.to_string()),
            };
            if spec.relax.requested {
                return run_relax(spec, &input, json, quiet);
            }
            run_scf(spec, &input, json, quiet)
        }
        Command::Relax { input, json, quiet } => match input::load(&input) {
            Ok(spec) => run_relax(spec, &input, json, quiet),
            Err(e) => fail(&e.to_string()),
        },
        Command::Bench {
            what: BenchCommand::Linalg { quick },
        } => {
            let opts = if quick {
                planewave_linalg::bench::BenchOptions::quick()
            } else {
                planewave_linalg::bench::BenchOptions::full()
            };
            print!("{}", planewave_linalg::bench::run_linalg_bench(&opts));
            ExitCode::SUCCESS
        }
        Command::Bench {
            what: BenchCommand::Fft { threads, ranks },
        } => {
            if threads.contains(&0) || ranks.contains(&0) {
                return fail("error: --threads and --ranks must be at least 1");
            }
            let opts = planewave_fft::bench::FftBenchOptions {
                threads,
                dist_ranks: ranks,
                ..Default::default()
            };
            match planewave_fft::bench::run_fft_bench(&opts) {
                Ok(t) => {
                    print!("{t}");
                    ExitCode::SUCCESS
                }
                Err(e) => fail(&format!("error: {e}")),
            }
        }
        Command::Bench {
            what:
                BenchCommand::Comm {
                    ranks,
                    ranks_per_node,
                },
        } => {
            if ranks == 0 || ranks_per_node == 0 {
                return fail("error: --ranks and --ranks-per-node must be at least 1");
            }
            let sizes = planewave_comm::bench::DEFAULT_SIZES;
            println!(
                "all-to-all-v strategies, Threads back end, {ranks} ranks, {ranks_per_node} per emulated node (time per call, ratio to native)"
            );
            let tables = planewave_comm::Threads::builder(ranks)
                .ranks_per_node(ranks_per_node)
                .run(|c| planewave_comm::bench::run_comm_bench(c.into_arc(), &sizes));
            println!("{}", tables[0]);
            ExitCode::SUCCESS
        }
    }
}

fn run_scf(spec: input::RunSpec, input: &Path, json: Option<PathBuf>, quiet: bool) -> ExitCode {
    let s = match setup::build(spec) {
        Ok(s) => s,
        Err(e) => return fail(&e.to_string()),
    };
    if !quiet {
        report::setup(&s);
        report::iteration_header();
    }
    let result = scf::run(&s.model, &s.basis, &s.params, |it| {
        if !quiet {
            report::iteration(it);
        }
    });
    let r = match result {
        Ok(r) => r,
        Err(e) => return fail(&format!("error: {}: {e}", input.display())),
    };
    if !quiet {
        report::summary(&s, &r);
    }
    let f = s
        .spec
        .properties
        .forces
        .then(|| forces::compute(&s.model, &s.basis, &r));
    let st = s
        .spec
        .properties
        .stress
        .then(|| stress::compute(&s.model, &s.basis, &r));
    if !quiet {
        if let Some(f) = &f {
            report::forces(&s, f);
        }
        if let Some(st) = &st {
            report::stress(st);
        }
    }
    let path = json.unwrap_or_else(|| sibling(input, "json"));
    let doc = planewave_core::results::to_json(&s, &r, f.as_ref(), st.as_ref());
    let text = serde_json::to_string_pretty(&doc).expect("results serialise");
    if let Err(e) = write_atomically(&path, &text) {
        return fail(&format!(
            "error: cannot write results {}: {e}",
            path.display()
        ));
    }
    if !quiet {
        println!("results written to {}", path.display());
    }
    if r.converged {
        ExitCode::SUCCESS
    } else {
        eprintln!(
            "warning: SCF not converged in {} iterations; raise scf.max_iterations or lower scf.mixing.beta",
            r.iterations
        );
        ExitCode::from(1)
    }
}

/// Prints SCF iterations (unless quiet) and ionic steps, and saves the trajectory after every
/// ionic step so that an interrupted relaxation keeps what it did.
struct CliObserver {
    quiet: bool,
    trajectory: PathBuf,
    write_error: Option<String>,
}

impl Observer for CliObserver {
    fn scf_iteration(&mut self, _step: usize, info: &IterationInfo) {
        if !self.quiet {
            report::iteration(info);
        }
    }
    fn ionic_step(&mut self, info: &StepInfo, trajectory: &[String]) {
        report::ionic_step(info);
        if let Err(e) = write_atomically(&self.trajectory, &trajectory.concat()) {
            self.write_error
                .get_or_insert(format!("cannot write {}: {e}", self.trajectory.display()));
        }
    }
}

fn run_relax(spec: input::RunSpec, input: &Path, json: Option<PathBuf>, quiet: bool) -> ExitCode {
    let opts = spec.relax.clone();
    match setup::build(spec.clone()) {
        Ok(s) => {
            if !quiet {
                report::setup(&s);
            }
        }
        Err(e) => return fail(&e.to_string()),
    }
    let mut observer = CliObserver {
        quiet,
        trajectory: sibling(input, "traj.xyz"),
        write_error: None,
    };
    println!(
        "relaxation: {}{}, force tolerance {:.1e} Ha/bohr, at most {} steps",
        match opts.algorithm {
            input::RelaxAlgorithm::Bfgs => "BFGS",
            input::RelaxAlgorithm::Fire => "FIRE",
        },
        if opts.cell {
            format!(
                " with the cell at {:.4} GPa (stress tolerance {:.4} GPa)",
                opts.pressure * stress::HA_PER_BOHR3_IN_GPA,
                opts.stress_tolerance * stress::HA_PER_BOHR3_IN_GPA
            )
        } else {
            " of the atomic positions".to_string()
        },
        opts.force_tolerance,
        opts.max_steps
    );
    report::ionic_header();
    let r = match relax::run(spec, &opts, &mut observer) {
        Ok(r) => r,
        Err(e) => return fail(&format!("error: {}: {e}", input.display())),
    };
    if let Some(e) = observer.write_error {
        return fail(&format!("error: {e}"));
    }
    println!();
    println!(
        "{} after {} ionic steps",
        if r.converged {
            "relaxation converged"
        } else {
            "relaxation NOT converged"
        },
        r.steps.len() - 1
    );
    if !quiet {
        report::summary(&r.setup, &r.scf);
    }
    report::forces(&r.setup, &r.forces);
    if let Some(st) = &r.stress {
        report::stress(st);
    }
    let (poscar, _) = relax::files::poscar(&r.setup.model, &r.setup.spec.title);
    let poscar_path = sibling(input, "relaxed.vasp");
    let json_path = json.unwrap_or_else(|| sibling(input, "json"));
    let doc = planewave_core::results::relax_to_json(&r);
    let text = serde_json::to_string_pretty(&doc).expect("results serialise");
    for (path, text) in [(&poscar_path, &poscar), (&json_path, &text)] {
        if let Err(e) = write_atomically(path, text) {
            return fail(&format!("error: cannot write {}: {e}", path.display()));
        }
    }
    println!("final structure (POSCAR, Å):");
    print!("{poscar}");
    println!(
        "written: {} {} {}",
        poscar_path.display(),
        observer.trajectory.display(),
        json_path.display()
    );
    if r.converged {
        ExitCode::SUCCESS
    } else {
        eprintln!(
            "warning: relaxation not converged in {} steps; raise [relax] max_steps or restart from {}",
            r.steps.len() - 1,
            poscar_path.display()
        );
        ExitCode::from(1)
    }
}

fn prepare(path: &Path) -> Result<setup::Setup, String> {
    let spec = input::load(path).map_err(|e| e.to_string())?;
    setup::build(spec).map_err(|e| e.to_string())
}

fn fail(msg: &str) -> ExitCode {
    eprintln!("{msg}");
    ExitCode::from(2)
}

/// `<dir>/<stem>.<ext>` next to the input.
fn sibling(input: &Path, ext: &str) -> PathBuf {
    let stem = input
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "planewave".into());
    input.with_file_name(format!("{stem}.{ext}"))
}

/// Write to a temporary file and rename, so an interrupted run never leaves a truncated file.
fn write_atomically(path: &Path, text: &str) -> std::io::Result<()> {
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(".tmp");
    let tmp = PathBuf::from(tmp);
    std::fs::write(&tmp, text)?;
    std::fs::rename(&tmp, path)
}
