//! `planewave`: the command-line program.
//!
//! `planewave run INPUT` runs an SCF (TOML or Quantum ESPRESSO pw.x input, recognised by content),
//! printing one line per iteration, a summary, forces and stress, and writes a results JSON; a QE
//! input with `calculation = 'relax' | 'vc-relax'` is relaxed instead, one with `'bands' | 'nscf'`
//! starts from the SCF state of its save folder ([`qe_workflow`]), and a dos.x, bands.x or
//! pp.x input writes that program's files ([`qe_post`]).
//! `planewave relax INPUT` relaxes the structure (positions; the cell too with `[relax] cell`).
//! `planewave bands INPUT` runs the SCF, then the band structure along the input's `[bands]` path.
//! `planewave dos INPUT` runs the SCF, then the density of states on a denser grid.
//! `planewave check INPUT` validates the input and prints the set-up without running.
//! `planewave advise INPUT --ranks N` ranks the parallel layouts of a run by predicted time.
//! `planewave bench comm|linalg|fft` time the parallel building blocks; `planewave bench qe INPUT`
//! times this program against Quantum ESPRESSO's pw.x on the same input.
//!
//! `run` and `relax` run on one process, on `--ranks N` in-process ranks, or on the MPI ranks of
//! mpirun/srun (build with `--features mpi`); rank 0 prints and writes every file. Both write a
//! checkpoint with `--checkpoint FILE`, continue from one with `--restart FILE` (any layout), and
//! stop cleanly (checkpoint, exit code 3) on SIGTERM/SIGINT/SIGUSR1 or `--time-limit`.

#[macro_use]
mod stdout;
mod advise;
mod band_plot;
mod bands;
mod bench_comm;
mod bench_qe;
mod comm_model;
mod dos;
mod dos_plot;
mod grid_files;
mod heap;
mod launch;
mod picture;
mod qe_post;
mod qe_projwfc;
mod qe_workflow;
mod report;
mod tuning_env;

use clap::{Parser, Subcommand};
use comm_model::CommModel;
use planewave_core::efficiency::{ParallelReport, Projection};
use planewave_core::relax::{self, Observer, StepInfo};
use planewave_core::scf::IterationInfo;
use planewave_core::tuning::Tuning;
use planewave_core::{input, kpath, scf, setup, stress, workflow};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Instant;

/// Plane-wave pseudopotential Kohn–Sham DFT.
///
/// Inputs are TOML files (see examples/si.toml) or Quantum ESPRESSO pw.x inputs. Energies are
/// printed in Hartree (Ha) and eV, lengths in bohr, forces in Ha/bohr and eV/Å, stress in
/// Ha/bohr^3 and GPa. Exit codes: 0 success, 1 SCF or relaxation not converged, 2 bad input or
/// set-up, 3 stopped cleanly by a signal (SIGTERM, SIGINT, SIGUSR1) or --time-limit with a
/// checkpoint to resume from.
#[derive(Parser)]
#[command(name = "planewave", version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

/// Parallel options of `run` and `relax`.
#[derive(clap::Args, Clone, Debug, Default)]
struct ParallelArgs {
    /// Run on N in-process ranks (threads with message passing; no MPI needed). Under
    /// mpirun/srun the launcher's ranks are used instead.
    #[arg(long, value_name = "N")]
    ranks: Option<usize>,
    /// k-point groups (QE -nk, VASP KPAR); overrides [parallel] kpoint_groups. Default: as many
    /// as divide the ranks and have (spin, k) blocks to work on.
    #[arg(long, value_name = "N")]
    kpoint_groups: Option<usize>,
    /// Band groups (QE -nb, VASP NPAR); overrides [parallel] band_groups. The bands of each
    /// k-point are dealt round-robin over the band groups of its k-point group; the ranks of a
    /// band group share its G-vectors. Default 1 (needs the Davidson eigensolver above 1).
    #[arg(long, value_name = "N")]
    band_groups: Option<usize>,
    /// Which ranks are neighbours in the band x G grid of a k-point group; overrides
    /// [parallel] rank_order. `g`: consecutive ranks share a band group's G-vectors (VASP's
    /// order; the FFT transposes stay on a node), `band`: consecutive ranks hold different
    /// band groups (CASTEP's; the band ring stays on a node). Default g.
    #[arg(long, value_enum, value_name = "ORDER")]
    rank_order: Option<RankOrderArg>,
    /// Where the local part of H (the FFTs of the bands) runs; overrides [parallel] device.
    /// `gpu` needs a build with `--features cuda` and an NVIDIA GPU (CUDA 13 libraries found
    /// at run time); each rank takes its node rank's GPU, and a band's plane waves are never
    /// split over ranks there. Default cpu.
    #[arg(long, value_enum, value_name = "DEVICE")]
    device: Option<DeviceArg>,
    /// Stop the SCF after N iterations (overrides scf.max_iterations); the report still
    /// projects the time of a converged run.
    #[arg(long, value_name = "N")]
    max_iterations: Option<usize>,
}

/// Checkpoint options of `run`.
#[derive(clap::Args, Clone, Debug, Default)]
struct CheckpointArgs {
    /// Write the SCF state (density, bands, occupations) to FILE at the end of the SCF, replacing
    /// it atomically; `--restart FILE` continues from it on any number of ranks and any layout.
    #[arg(long, value_name = "FILE")]
    checkpoint: Option<PathBuf>,
    /// Also write the checkpoint every N SCF iterations (needs --checkpoint).
    #[arg(long, value_name = "N", requires = "checkpoint")]
    checkpoint_every: Option<usize>,
    /// Start the SCF from the density and bands of checkpoint FILE (written by --checkpoint with
    /// the same functional, pseudopotentials and atoms; cutoff, cell, positions, band count and
    /// layout may differ) instead of the atomic guess and random bands.
    #[arg(long, value_name = "FILE")]
    restart: Option<PathBuf>,
    /// Stop cleanly before this wall time has passed (e.g. 2h, 90m, 1h30m, 600s; also from
    /// SLURM_JOB_END_TIME when set): the SCF finishes its iteration, writes the checkpoint
    /// (--checkpoint, default <stem>.ckpt next to the input), prints how to resume, and exits
    /// with code 3. SIGTERM, SIGINT and SIGUSR1 do the same at any time (with OpenMPI's mpirun
    /// send SIGUSR1, which it forwards to every rank; one rank receiving it stops all).
    #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
    time_limit: Option<std::time::Duration>,
}

/// `2h`, `90m`, `1h30m`, `45s` or plain seconds.
fn parse_duration(text: &str) -> Result<std::time::Duration, String> {
    let bad = || format!("'{text}' is not a duration: write e.g. 2h, 90m, 1h30m or 600s");
    if let Ok(s) = text.trim().parse::<f64>() {
        return (s.is_finite() && s > 0.0)
            .then(|| std::time::Duration::from_secs_f64(s))
            .ok_or_else(bad);
    }
    let (mut total, mut number) = (0.0, String::new());
    for c in text.trim().chars() {
        let unit = match c {
            '0'..='9' | '.' => {
                number.push(c);
                continue;
            }
            'h' => 3600.0,
            'm' => 60.0,
            's' => 1.0,
            _ => return Err(bad()),
        };
        total += number.parse::<f64>().map_err(|_| bad())? * unit;
        number.clear();
    }
    if !number.is_empty() || total <= 0.0 {
        return Err(bad());
    }
    Ok(std::time::Duration::from_secs_f64(total))
}

impl CheckpointArgs {
    /// The checkpoint of a run of `input`: written at the end with --checkpoint, and on a
    /// clean stop in any case (to <stem>.ckpt without --checkpoint).
    fn plan(&self, input: &Path) -> scf::CheckpointPlan {
        scf::CheckpointPlan {
            path: self
                .checkpoint
                .clone()
                .unwrap_or_else(|| sibling(input, "ckpt")),
            every: self.checkpoint_every,
            at_end: self.checkpoint.is_some(),
        }
    }

    /// The checkpoint to start from: --restart, else `<stem>.ckpt` when the input asks for a
    /// restart (QE `restart_mode = 'restart'`), which must then exist.
    fn restart_file(&self, input: &Path, input_restart: bool) -> Result<Option<PathBuf>, String> {
        if self.restart.is_some() || !input_restart {
            return Ok(self.restart.clone());
        }
        let f = sibling(input, "ckpt");
        if !f.exists() {
            return Err(format!(
                "error: {}: restart_mode = 'restart' continues from the checkpoint {}, which does not exist: run with --checkpoint first, give --restart FILE, or use restart_mode = 'from_scratch'",
                input.display(),
                f.display()
            ));
        }
        Ok(Some(f))
    }

    /// When to stop cleanly: on the signals of [`install_stop_signals`], and before the
    /// earliest of --time-limit (from `t0`; else QE's `max_seconds`) and SLURM_JOB_END_TIME.
    fn stop_when(
        &self,
        t0: Instant,
        max_seconds: Option<f64>,
    ) -> Result<planewave_core::stop::StopWhen, String> {
        let limit = self
            .time_limit
            .or(max_seconds.map(std::time::Duration::from_secs_f64));
        let mut deadline = limit.map(|d| t0 + d);
        if let Ok(end) = std::env::var("SLURM_JOB_END_TIME") {
            let end: u64 = end.trim().parse().map_err(|_| {
                format!("error: SLURM_JOB_END_TIME = '{end}' is not a Unix time in seconds")
            })?;
            let now = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_secs());
            let slurm = Instant::now() + std::time::Duration::from_secs(end.saturating_sub(now));
            deadline = Some(deadline.map_or(slurm, |d| d.min(slurm)));
        }
        Ok(planewave_core::stop::StopWhen {
            signal: install_stop_signals(),
            deadline,
        })
    }
}

/// SIGTERM, SIGINT and SIGUSR1 store their number for the SCF to stop after its iteration; the
/// same signal a second time ends the process at once (exit code 128 + signal).
fn install_stop_signals() -> Arc<std::sync::atomic::AtomicUsize> {
    use signal_hook::consts::{SIGINT, SIGTERM, SIGUSR1};
    use signal_hook::flag;
    let number = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    for sig in [SIGTERM, SIGINT, SIGUSR1] {
        let again = Arc::new(std::sync::atomic::AtomicBool::new(false));
        // Registration fails only for forbidden signals; these three are allowed.
        let _ = flag::register_conditional_shutdown(sig, 128 + sig, Arc::clone(&again));
        let _ = flag::register(sig, again);
        let _ = flag::register_usize(sig, Arc::clone(&number), sig as usize);
    }
    number
}

/// A format of `export --density`.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
enum FormatArg {
    /// Gaussian cube.
    Cube,
    /// XCrySDen XSF.
    Xsf,
    /// VASP CHGCAR.
    Chgcar,
}

/// `--device`.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
enum DeviceArg {
    /// The CPU's batched FFTs.
    Cpu,
    /// An NVIDIA GPU.
    Gpu,
}

/// `--rank-order`.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
enum RankOrderArg {
    /// Consecutive ranks share a band group's G-vectors.
    G,
    /// Consecutive ranks hold different band groups.
    Band,
}

impl ParallelArgs {
    /// Refuse counts of zero.
    fn check(&self) -> Result<(), String> {
        for (flag, v) in [
            ("--ranks", self.ranks),
            ("--kpoint-groups", self.kpoint_groups),
            ("--band-groups", self.band_groups),
        ] {
            if v == Some(0) {
                return Err(format!("error: {flag} must be at least 1"));
            }
        }
        Ok(())
    }

    /// Apply the overrides to the input.
    fn apply(&self, spec: &mut input::RunSpec) {
        if let Some(k) = self.kpoint_groups {
            spec.parallel.kpoint_groups = Some(k);
        }
        if let Some(b) = self.band_groups {
            spec.parallel.band_groups = Some(b);
        }
        if let Some(o) = self.rank_order {
            spec.parallel.band_consecutive = o == RankOrderArg::Band;
        }
        if let Some(d) = self.device {
            spec.parallel.device = match d {
                DeviceArg::Cpu => input::Device::Cpu,
                DeviceArg::Gpu => input::Device::Gpu,
            };
        }
        if let Some(m) = self.max_iterations {
            spec.scf.max_iterations = m;
        }
    }
}

/// The input and options of every calculation command.
#[derive(clap::Args, Debug)]
struct CalcArgs {
    /// Input file (TOML or QE pw.x input).
    input: PathBuf,
    /// Where to write the results JSON (default: next to the input, `<stem>.json`).
    #[arg(long)]
    json: Option<PathBuf>,
    /// Print nothing but errors (`relax`: only the ionic steps and the final structure).
    #[arg(long, short)]
    quiet: bool,
    #[command(flatten)]
    parallel: ParallelArgs,
    #[command(flatten)]
    checkpoint: CheckpointArgs,
}

#[derive(Subcommand)]
enum Command {
    /// Run a self-consistent calculation, then forces and stress ([properties] in the input).
    ///
    /// A QE workflow runs with pw.x, bands.x, dos.x and pp.x replaced by `planewave run`: a
    /// pw.x SCF keeps its state in <outdir>/<prefix>.save, where a later pw.x
    /// calculation='bands' or 'nscf' input of the same prefix and outdir starts its
    /// fixed-density step, and bands.x (&bands), dos.x (&dos) and pp.x (&inputpp, &plot)
    /// inputs write those programs' files.
    /// Example: planewave run examples/si.toml
    Run(CalcArgs),
    /// Relax atomic positions (and the cell with `[relax] cell = true`) by BFGS or FIRE.
    ///
    /// Writes `<stem>.json` (final state and one entry per ionic step), `<stem>.relaxed.vasp`
    /// (final structure, POSCAR) and `<stem>.traj.xyz` (extended XYZ, one frame per step, Å/eV,
    /// readable by ASE). Example: planewave relax examples/si8_displaced.toml
    Relax(CalcArgs),
    /// Run the SCF, then the band structure with the density held fixed, along the input's
    /// [bands] path or, without one, the high-symmetry path of the crystal's lattice
    /// (Setyawan-Curtarolo; cubic, tetragonal, orthorhombic, hexagonal, rhombohedral).
    ///
    /// Writes what `run` writes, `<stem>.bands.json` (k-points, path length, labels,
    /// eigenvalues in Ha, band edges or Fermi level) and the picture as `<stem>.bands.svg` and
    /// `.png` (eV from the valence maximum or the Fermi level).
    /// Example: planewave bands examples/si.toml
    Bands(CalcArgs),
    /// Run the SCF, then the density of states on a denser k-point grid with the density held
    /// fixed ([dos] in the input; defaults without it).
    ///
    /// Writes what `run` writes, `<stem>.dos.json` (energies in eV, states/eV per cell,
    /// electrons per cell up to each energy, per spin) and `<stem>.dos.svg` and `.png`.
    /// Example: planewave dos examples/si.toml
    Dos(CalcArgs),
    /// Write the density, potential and orbital files of a finished run from its checkpoint,
    /// without an SCF.
    ///
    /// The checkpoint is --from FILE, else the SCF state of a pw.x input's save folder
    /// (<outdir>/<prefix>.save), else <stem>.ckpt (written by `run --checkpoint`); it must be
    /// of the input's crystal, functional and cutoff. Writes what [output] density writes:
    /// <stem>.density.cube / .xsf, <stem>.spin.cube / .xsf with spin, <stem>.CHGCAR.
    /// Example: planewave export examples/si.toml --density cube,xsf
    Export {
        /// Input file (TOML or QE pw.x input) of the run that wrote the checkpoint.
        input: PathBuf,
        /// Formats, comma separated: cube (bohr), xsf (Å), chgcar (VASP). Default: the
        /// input's [output] density.
        #[arg(long, value_enum, value_delimiter = ',', value_name = "FORMATS")]
        density: Vec<FormatArg>,
        /// Also |psi|^2 of this band (1/bohr^3, one electron), as K,BAND or K,BAND,SPIN
        /// counted from 1 (k-points in the run's order, see its results JSON); repeat for
        /// more. Written as <stem>.orbital_k<K>_b<BAND>.cube / .xsf.
        #[arg(long, value_name = "K,BAND[,SPIN]")]
        orbital: Vec<grid_files::OrbitalPick>,
        /// Also the local potential V_loc + V_H + V_xc in Ha (VASP's LOCPOT, QE's pp.x
        /// plot_num 1 in Ry), per spin channel: <stem>.potential.cube / .xsf.
        #[arg(long)]
        potential: bool,
        /// The checkpoint to read.
        #[arg(long, value_name = "FILE")]
        from: Option<PathBuf>,
    },
    /// Validate an input and print the set-up (cell, k-points, FFT grid, plane waves, memory).
    ///
    /// With --ranks N the set-up is made on N in-process ranks: the layout, the plane waves
    /// each rank of a G-vector group holds, and the memory estimate per rank.
    Check {
        /// Input file (TOML or QE pw.x input).
        input: PathBuf,
        /// Set up on this many in-process ranks (default 1).
        #[arg(long)]
        ranks: Option<usize>,
        /// k-point groups (the other ranks of a group share its plane waves).
        #[arg(long)]
        kpoint_groups: Option<usize>,
        /// Estimate the GPU memory per rank of a run with `--device gpu` (the GPU is not
        /// opened; an input's `[parallel] device = "gpu"` does the same).
        #[arg(long, value_enum)]
        device: Option<DeviceArg>,
    },
    /// Rank the parallel layouts of a run on N ranks by predicted time per SCF iteration,
    /// with memory per rank, and say why the first wins.
    ///
    /// Example: planewave advise examples/si.toml --ranks 4
    Advise {
        /// Input file (TOML or QE pw.x input).
        input: PathBuf,
        /// Number of ranks (MPI processes or --ranks).
        #[arg(long, default_value_t = 2)]
        ranks: usize,
        /// Threads per rank (default: this machine's cores divided among a node's ranks).
        #[arg(long)]
        threads: Option<usize>,
        /// Rank every ranks x threads split of this many cores (all nodes together) instead
        /// of one number of ranks.
        #[arg(long, conflicts_with_all = ["ranks", "threads"])]
        cores: Option<usize>,
        /// Nodes the ranks fill in order (equal shares): messages between nodes pay the
        /// network's latency and share each node's network card.
        #[arg(long, default_value_t = 1)]
        nodes: usize,
        /// The links measured by `planewave bench comm --save FILE` on the target machine
        /// (default: built in; the report names which).
        #[arg(long)]
        comm_model: Option<PathBuf>,
    },
    /// Benchmarks of the parallel layers.
    Bench {
        #[command(subcommand)]
        what: BenchCommand,
    },
}

#[derive(Subcommand)]
enum BenchCommand {
    /// This planewave against Quantum ESPRESSO's pw.x on one pw.x input, runs alternated on the
    /// same cores (QE as --ranks MPI processes of one thread, planewave as --ranks processes of
    /// --threads threads, both under mpirun above one rank): every run's wall time and peak
    /// RSS, then the median ratios. Without pw.x on the PATH, planewave alone.
    ///
    /// Example: planewave bench qe tests/data/qe/si8_lda_gth_displaced/pw.in --ranks 2
    /// --qe-args="-nk 2"
    Qe {
        /// The pw.x input (both programs run in its folder).
        input: PathBuf,
        /// Alternated runs of each program.
        #[arg(long, default_value_t = 3)]
        runs: usize,
        /// MPI ranks of each program.
        #[arg(long, default_value_t = 1)]
        ranks: usize,
        /// rayon threads per planewave rank.
        #[arg(long, default_value_t = 1)]
        threads: usize,
        /// Extra pw.x arguments, one string (e.g. --qe-args="-nk 2").
        #[arg(long, default_value = "", allow_hyphen_values = true)]
        qe_args: String,
        /// Extra `planewave run` arguments, one string (e.g. --pw-args="--kpoint-groups 2").
        #[arg(long, default_value = "", allow_hyphen_values = true)]
        pw_args: String,
    },
    /// Time every all-to-all-v strategy against the native one, 64 B to 16 MiB per rank pair,
    /// and fit the machine's links (latency and bandwidth inside a node and between nodes).
    /// Under mpirun (MPI build) on the MPI world, otherwise on in-process ranks.
    ///
    /// Example: mpirun -np 32 planewave bench comm --save comm.json (two nodes of 16), then
    /// planewave advise INPUT --ranks 256 --nodes 16 --comm-model comm.json
    Comm {
        /// Number of in-process ranks (ignored under mpirun).
        #[arg(long, default_value_t = 4)]
        ranks: usize,
        /// Ranks per emulated node of the in-process ranks (under mpirun:
        /// PLANEWAVE_MPI_RANKS_PER_NODE).
        #[arg(long, default_value_t = 2)]
        ranks_per_node: usize,
        /// Write the fitted links to this JSON file, for `planewave advise --comm-model`.
        #[arg(long)]
        save: Option<PathBuf>,
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
    heap::return_large_blocks();
    let launch = planewave_comm::foreign_launcher_ranks();
    if let Some(l) = &launch {
        if !cfg!(feature = "mpi") {
            // Without the MPI back end every rank would run the whole calculation on its own.
            if l.rank.unwrap_or(0) == 0 {
                eprintln!(
                    "error: started by {} as {} ranks, but this planewave was built without MPI (it would run {} independent copies)\n  hint: rebuild with `cargo build --release --features mpi` (or `cargo install --path crates/cli --features mpi`), or run without the launcher: `planewave run INPUT --ranks {}` uses in-process ranks",
                    l.launcher, l.ranks, l.ranks, l.ranks
                );
            }
            return ExitCode::from(2);
        }
    }
    let cli = Cli::parse();
    // Commands other than run/relax/bands/dos are serial: under a launcher, rank 0 alone does
    // them.
    let serial_elsewhere = launch.as_ref().is_some_and(|l| l.rank.unwrap_or(0) != 0);
    match cli.command {
        Command::Run(args) => calculation(args, Mode::Scf),
        Command::Relax(args) => calculation(args, Mode::Relax),
        Command::Bands(args) => calculation(args, Mode::Bands),
        Command::Dos(args) => calculation(args, Mode::Dos),
        Command::Bench {
            what:
                BenchCommand::Comm {
                    ranks,
                    ranks_per_node,
                    save,
                },
        } => bench_comm::run(ranks, ranks_per_node, save.as_deref()),
        _ if serial_elsewhere => ExitCode::SUCCESS,
        Command::Export {
            input: path,
            density,
            orbital,
            potential,
            from,
        } => {
            let formats: Vec<input::GridFormat> = (density.iter())
                .map(|f| match f {
                    FormatArg::Cube => input::GridFormat::Cube,
                    FormatArg::Xsf => input::GridFormat::Xsf,
                    FormatArg::Chgcar => input::GridFormat::Chgcar,
                })
                .collect();
            match grid_files::export(&path, &formats, (&orbital, potential), from) {
                Ok(paths) => {
                    let names: Vec<String> =
                        paths.iter().map(|p| p.display().to_string()).collect();
                    outln!("written: {}", names.join(", "));
                    ExitCode::SUCCESS
                }
                Err(e) => fail(&e),
            }
        }
        Command::Check {
            input,
            ranks,
            kpoint_groups,
            device,
        } => check(&input, ranks.unwrap_or(1), kpoint_groups, device),
        Command::Advise {
            input,
            ranks,
            threads,
            cores,
            nodes,
            comm_model,
        } => {
            if ranks == 0 || threads == Some(0) || nodes == 0 || cores == Some(0) {
                return fail("error: --ranks, --threads, --cores and --nodes must be at least 1");
            }
            let (count, what) = cores.map_or((ranks, "--ranks"), |c| (c, "--cores"));
            if !count.is_multiple_of(nodes) {
                return fail(&format!(
                    "error: {what} {count} do not fill --nodes {nodes} equally: give a multiple of {nodes}"
                ));
            }
            let shape = match cores {
                Some(c) => advise::Shape::Cores(c),
                None => advise::Shape::Ranks { ranks, threads },
            };
            let model = match comm_model.as_deref().map(CommModel::load) {
                None => CommModel::built_in(),
                Some(Ok(m)) => m,
                Some(Err(e)) => return fail(&format!("error: {e}")),
            };
            let machine = advise::Machine {
                nodes,
                model: &model,
            };
            match prepare(&input) {
                Ok(s) => {
                    out!("{}", advise::advise(&s, shape, &machine));
                    ExitCode::SUCCESS
                }
                Err(e) => fail(&e),
            }
        }
        Command::Bench {
            what:
                BenchCommand::Qe {
                    input,
                    runs,
                    ranks,
                    threads,
                    qe_args,
                    pw_args,
                },
        } => {
            if runs == 0 || ranks == 0 || threads == 0 {
                return fail("error: --runs, --ranks and --threads must be at least 1");
            }
            let words = |s: &str| s.split_whitespace().map(str::to_string).collect();
            let b = bench_qe::QeBench {
                input,
                runs,
                ranks,
                threads,
                qe_args: words(&qe_args),
                pw_args: words(&pw_args),
            };
            match bench_qe::run(&b) {
                Ok(t) => {
                    out!("{t}");
                    ExitCode::SUCCESS
                }
                Err(e) => fail(&e),
            }
        }
        Command::Bench {
            what: BenchCommand::Linalg { quick },
        } => {
            let opts = if quick {
                planewave_linalg::bench::BenchOptions::quick()
            } else {
                planewave_linalg::bench::BenchOptions::full()
            };
            out!("{}", planewave_linalg::bench::run_linalg_bench(&opts));
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
                    out!("{t}");
                    ExitCode::SUCCESS
                }
                Err(e) => fail(&format!("error: {e}")),
            }
        }
    }
}

/// What a calculation command does after the set-up.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    /// The SCF, forces and stress (`run`).
    Scf,
    /// A relaxation (`relax`).
    Relax,
    /// The SCF, then the band structure (`bands`).
    Bands,
    /// The SCF, then the density of states (`dos`).
    Dos,
}

/// `run` (a relaxation when the input asks for one), `relax`, `bands` or `dos` on the ranks of
/// the launch.
fn calculation(args: CalcArgs, mode: Mode) -> ExitCode {
    let CalcArgs {
        input,
        json,
        quiet,
        parallel,
        checkpoint,
    } = args;
    let (input, parallel, checkpoint) = (input.as_path(), &parallel, &checkpoint);
    if let Err(e) = parallel.check() {
        return fail(&e);
    }
    if checkpoint.checkpoint_every == Some(0) {
        return fail("error: --checkpoint-every must be at least 1");
    }
    let env = tuning_env::set_linalg_defaults()
        .and_then(|()| tuning_env::from_env())
        .and_then(|t| Ok((t, tuning_env::strategies()?)))
        .and_then(|t| Ok((t, tuning_env::measure_waiting()?)));
    let ((tuning, strategies), measure_waiting) = match env {
        Ok(t) => t,
        Err(e) => {
            return fail(&format!(
                "error: {e}\n  hint: unset it for the default (README, \"Environment variables\")"
            ))
        }
    };
    match read_post_input(input) {
        Ok(Some(post)) if mode == Mode::Scf => {
            // QE's post-processing programs are serial: under a launcher rank 0 runs them.
            let root = planewave_comm::foreign_launcher_ranks().is_none_or(|l| l.rank.unwrap_or(0) == 0);
            return if root { qe_post::run(&post) } else { ExitCode::SUCCESS };
        }
        Ok(Some(_)) => {
            return fail(&format!(
                "error: {}: this is an input of QE's dos.x, bands.x or pp.x: run it with `planewave run {}`",
                input.display(),
                input.display()
            ))
        }
        Ok(None) => {}
        Err(e) => return fail(&e),
    }
    let run = (checkpoint, tuning);
    launch::run_ranks(parallel.ranks, |world, place| {
        let out = Output::new(world.as_ref(), quiet);
        tuning_env::apply_measure_waiting(world.as_ref(), measure_waiting);
        let mut spec = match input::load(input) {
            Ok(s) => s,
            Err(e) => return out.fail(&e.to_string()),
        };
        parallel.apply(&mut spec);
        tuning_env::apply_strategies(&mut spec, &strategies);
        if mode == Mode::Bands && spec.bands.as_ref().is_none_or(|b| b.path.is_empty()) {
            if let Err(e) = kpath::of_input(&spec) {
                return out.fail(&format!("error: {}: {e}", spec.source.display()));
            }
        }
        if spec.qe.as_ref().is_some_and(|q| q.non_scf.is_some()) {
            if mode != Mode::Scf {
                return out.fail(&format!("error: {}: a pw.x calculation = 'bands' or 'nscf' input runs with `planewave run {}` (after the SCF of the same prefix and outdir)", input.display(), input.display()));
            }
            return qe_workflow::run_non_scf(spec, (input, json.clone()), tuning, &out, world);
        }
        match mode {
            Mode::Relax => run_relax(spec, input, json.clone(), run, &out, world, place),
            _ if spec.relax.requested && mode == Mode::Scf => {
                run_relax(spec, input, json.clone(), run, &out, world, place)
            }
            _ => run_scf(spec, (input, mode), json.clone(), run, &out, world, place),
        }
    })
}

/// What rank 0 prints; every other rank stays silent.
struct Output {
    root: bool,
    quiet: bool,
}

impl Output {
    fn new(world: &dyn planewave_comm::Communicator, quiet: bool) -> Self {
        Output {
            root: world.rank() == 0,
            quiet,
        }
    }
    /// Whether this rank prints the normal output.
    fn talks(&self) -> bool {
        self.root && !self.quiet
    }
    /// An error every rank reached: rank 0 prints it; exit code 2 everywhere.
    fn fail(&self, msg: &str) -> ExitCode {
        if self.root {
            eprintln!("{msg}");
        }
        ExitCode::from(2)
    }
    /// Write `text` to `path` atomically on rank 0.
    fn write(&self, path: &Path, text: &str) -> Result<(), String> {
        if !self.root {
            return Ok(());
        }
        write_atomically(path, text).map_err(|e| format!("cannot write {}: {e}", path.display()))
    }
}

/// Wall-clock seconds since `t`.
fn since(t: Instant) -> f64 {
    t.elapsed().as_secs_f64()
}

/// The SCF of `spec` (then the band structure or the DOS, by `mode`), its report and files.
fn run_scf(
    spec: input::RunSpec,
    (input, mode): (&Path, Mode),
    json: Option<PathBuf>,
    (checkpoint, tuning): (&CheckpointArgs, Tuning),
    out: &Output,
    world: Arc<dyn planewave_comm::Communicator>,
    place: launch::Placement,
) -> ExitCode {
    let t_start = Instant::now();
    let mut s = match setup::build_on(spec, world) {
        Ok(s) => s,
        Err(e) => return out.fail(&e.to_string()),
    };
    let largest = s.basis.kpoints.iter().map(|k| k.dim()).max().unwrap_or(0);
    let word = if matches!(s.spec.kpoints, input::Kpoints::Gamma) {
        8
    } else {
        16
    };
    if heap::fit_to_grid(s.basis.rho_real_len(), largest * s.params.nbands * word) {
        if let Some(d) = &s.basis.rho_dist {
            d.keep_buffers();
        }
    }
    s.warnings.extend(place.oversubscription());
    if out.talks() {
        report::setup(&s);
        report::placement(&s, &place);
    }
    let save = qe_workflow::scf_save(&s.spec);
    let mut plan = checkpoint.plan(input);
    if let (Some(save), None) = (&save, &checkpoint.checkpoint) {
        (plan.path, plan.at_end) = (save.join(qe_workflow::STATE), true);
    }
    if let Some(save) = &save {
        // Rank 0 creates the folder; every rank learns whether it could.
        let made = if out.root {
            qe_workflow::prepare_save(save)
        } else {
            Ok(())
        };
        if let Err(e) = planewave_core::parallel::agree_on(s.basis.parallel.world().as_ref(), made)
        {
            return out.fail(&format!("error: {}: {}", input.display(), e.error));
        }
    }
    s.params.checkpoint = Some(plan.clone());
    s.params.tuning = tuning;
    s.params.stop = match checkpoint.stop_when(t_start, s.spec.scf.max_seconds) {
        Ok(w) => Some(w),
        Err(e) => return out.fail(&e),
    };
    let restart = match checkpoint.restart_file(input, s.spec.scf.restart) {
        Ok(r) => r,
        Err(e) => return out.fail(&e),
    };
    let start = match &restart {
        Some(file) => {
            let t_read = Instant::now();
            let r = planewave_core::checkpoint::read(
                file,
                &s.model,
                &s.basis,
                (s.params.nbands, s.params.seed),
                tuning.checkpoint,
            );
            match r {
                Ok(r) => {
                    if out.talks() {
                        report::restart(file, &r, since(t_read));
                    }
                    Some(r.start)
                }
                Err(e) => return out.fail(&format!("error: {e}")),
            }
        }
        None => None,
    };
    if out.talks() {
        report::iteration_header();
    }
    let t_build = since(t_start);
    let calc = match workflow::run(&s, start, Printer(out, &s)) {
        Ok(c) => c,
        Err(e) => return out.fail(&format!("error: {}: {e}", input.display())),
    };
    let r = &calc.scf;
    if out.talks() {
        if let Some(f) = &calc.forces {
            report::forces(&s, f);
        }
        if let Some(st) = &calc.stress {
            report::stress(st);
        }
    }
    let projection = Projection::new(
        t_build + r.timings.setup,
        &r.history,
        calc.post_seconds,
        r.converged,
        s.params.density_tolerance,
    );
    let mut par = ParallelReport::gather(
        &s.basis.parallel,
        (s.model.nspin(), s.basis.kpoints.len()),
        (place.threads, tuning.band_algorithm),
        projection,
        place.oversubscription().into_iter().collect(),
    );
    par.advice.extend(exchange_advice(r));
    if out.talks() {
        report::parallel(&par);
    }
    let path = json.unwrap_or_else(|| sibling(input, "json"));
    let mut doc = calc.to_json(&s);
    doc["parallel"] = serde_json::to_value(&par).expect("the report serialises");
    let text = serde_json::to_string_pretty(&doc).expect("results serialise");
    if let Err(e) = out.write(&path, &text) {
        return out.fail(&format!("error: {e}"));
    }
    if out.talks() {
        outln!("results written to {}", path.display());
        if plan.at_end && r.stopped.is_none() {
            outln!(
                "checkpoint written to {} ({}; continue with: planewave run {} --restart {})",
                plan.path.display(),
                report::file_size_and_time(&plan.path, r.timings.checkpoint),
                input.display(),
                plan.path.display()
            );
        }
    }
    if let Some(reason) = r.stopped {
        let at = format!("SCF iteration {}", r.iterations);
        return stopped(out, reason, &at, "run", input, checkpoint);
    }
    if !r.converged {
        if out.root {
            eprintln!(
                "warning: SCF not converged in {} iterations; raise scf.max_iterations or lower scf.mixing.beta",
                r.iterations
            );
        }
        return ExitCode::from(1);
    }
    if let Some(save) = &save {
        // Rank 0 copies; every rank learns whether it could, so none is left in a collective.
        let kept = if out.root {
            qe_workflow::keep_scf(&s, save, &plan.path)
        } else {
            Ok(())
        };
        if let Err(e) = planewave_core::parallel::agree_on(s.basis.parallel.world().as_ref(), kept)
        {
            return out.fail(&format!("error: {}", e.error));
        }
        if out.talks() {
            outln!(
                "SCF state kept in {} for the bands, nscf, dos.x, bands.x and pp.x steps",
                save.display()
            );
        }
    }
    if !s.spec.output.density.is_empty() {
        match grid_files::write(&s, &r.density.g, input, out) {
            Ok(paths) if out.talks() => {
                let names: Vec<String> = paths.iter().map(|p| p.display().to_string()).collect();
                outln!("density written to {}", names.join(", "));
            }
            Ok(_) => {}
            Err(e) => return out.fail(&format!("error: {e}")),
        }
    }
    let then = match mode {
        Mode::Bands => bands::run(&s, r, input, out),
        Mode::Dos => dos::run(&s, r, input, out),
        Mode::Scf | Mode::Relax => Ok(()),
    };
    if let Err(e) = then {
        return out.fail(&format!("error: {}: {e}", input.display()));
    }
    ExitCode::SUCCESS
}

/// What a hybrid run's exchange time says about its layout: the operators' share of the run,
/// and which levels divide it (none when it is small).
fn exchange_advice(r: &scf::ScfResult) -> Option<String> {
    let t = &r.timings;
    (t.exchange > 0.2 * t.total).then(|| {
        format!(
            "exact exchange took {:.0}% of the SCF ({:.2} of {:.2} s, {} operator builds): it divides over k-point groups, band groups and G-vector groups",
            100.0 * t.exchange / t.total,
            t.exchange,
            t.total,
            r.exx_steps.len() + 1
        )
    })
}

/// Prints SCF iterations, a hybrid run's outer steps and the summary of the set-up's SCF (unless
/// quiet).
struct Printer<'a>(&'a Output, &'a setup::Setup);

impl scf::ScfObserver for Printer<'_> {
    fn iteration(&mut self, info: &IterationInfo) {
        if self.0.talks() {
            report::iteration(info);
        }
    }
    fn exx_step(&mut self, info: &scf::ExxStepInfo) {
        if self.0.talks() {
            report::exx_step(info);
        }
    }
    fn finished(&mut self, result: &scf::ScfResult) {
        if self.0.talks() {
            report::summary(self.1, result);
        }
    }
}

/// Prints SCF iterations (unless quiet) and ionic steps, and saves the trajectory after every
/// ionic step so that an interrupted relaxation keeps what it did (rank 0 only).
struct CliObserver<'a> {
    out: &'a Output,
    trajectory: PathBuf,
    write_error: Option<String>,
}

impl Observer for CliObserver<'_> {
    fn scf_iteration(&mut self, _step: usize, info: &IterationInfo) {
        if self.out.talks() {
            report::iteration(info);
        }
    }
    fn ionic_step(&mut self, info: &StepInfo, trajectory: &[String]) {
        if self.out.root {
            report::ionic_step(info);
        }
        if let Err(e) = self.out.write(&self.trajectory, &trajectory.concat()) {
            self.write_error.get_or_insert(e);
        }
    }
}

fn run_relax(
    mut spec: input::RunSpec,
    input: &Path,
    json: Option<PathBuf>,
    (checkpoint, tuning): (&CheckpointArgs, Tuning),
    out: &Output,
    world: Arc<dyn planewave_comm::Communicator>,
    place: launch::Placement,
) -> ExitCode {
    let t_start = Instant::now();
    let restart = match checkpoint.restart_file(input, spec.scf.restart) {
        Ok(r) => r,
        Err(e) => return out.fail(&e),
    };
    if let Some(file) = &restart {
        // The relaxation continues from the structure the checkpoint reached.
        let applied = planewave_core::checkpoint::read_meta(file, world.as_ref())
            .and_then(|m| m.apply_structure(&mut spec, file).map(|()| m));
        match applied {
            Ok(m) if out.root => outln!(
                "relaxation continues from the structure of {} (its SCF iteration {}, E = {:.10} Ha); the optimiser's history starts afresh",
                file.display(),
                m.iteration,
                m.energy_ha
            ),
            Ok(_) => {}
            Err(e) => return out.fail(&format!("error: {e}")),
        }
    }
    let resume = relax::Resume {
        checkpoint: Some(checkpoint.plan(input)),
        stop: match checkpoint.stop_when(t_start, spec.scf.max_seconds) {
            Ok(w) => Some(w),
            Err(e) => return out.fail(&e),
        },
        restart,
        tuning,
    };
    let opts = spec.relax.clone();
    match setup::build_on(spec.clone(), world.clone()) {
        Ok(mut s) => {
            s.warnings.extend(place.oversubscription());
            if out.talks() {
                report::setup(&s);
                report::placement(&s, &place);
            }
        }
        Err(e) => return out.fail(&e.to_string()),
    }
    let mut observer = CliObserver {
        out,
        trajectory: sibling(input, "traj.xyz"),
        write_error: None,
    };
    if out.root {
        outln!(
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
    }
    let r = match relax::run_resumable(spec, world, &opts, &mut observer, resume) {
        Ok(r) => r,
        Err(e) => return out.fail(&format!("error: {}: {e}", input.display())),
    };
    if let Some(e) = observer.write_error {
        return out.fail(&format!("error: {e}"));
    }
    let (poscar, _) = relax::files::poscar(&r.setup.model, &r.setup.spec.title);
    let poscar_path = sibling(input, "relaxed.vasp");
    let json_path = json.unwrap_or_else(|| sibling(input, "json"));
    let doc = planewave_core::results::relax_to_json(&r);
    let text = serde_json::to_string_pretty(&doc).expect("results serialise");
    if let Some(reason) = r.stopped {
        // A stopped relaxation has no relaxed structure to write: the results JSON only.
        if let Err(e) = out.write(&json_path, &text) {
            return out.fail(&format!("error: {e}"));
        }
        let at = format!("ionic step {}", r.steps.len());
        return stopped(out, reason, &at, "relax", input, checkpoint);
    }
    for (path, text) in [(&poscar_path, &poscar), (&json_path, &text)] {
        if let Err(e) = out.write(path, text) {
            return out.fail(&format!("error: {e}"));
        }
    }
    if out.root {
        relax_summary(
            &r,
            out.quiet,
            &poscar,
            &poscar_path,
            &observer.trajectory,
            &json_path,
        );
    }
    if r.converged {
        ExitCode::SUCCESS
    } else {
        if out.root {
            eprintln!(
                "warning: relaxation not converged in {} steps; raise [relax] max_steps or restart from {}",
                r.steps.len() - 1,
                poscar_path.display()
            );
        }
        ExitCode::from(1)
    }
}

/// A clean stop: where, the checkpoint and how to resume (rank 0); exit code 3.
fn stopped(
    out: &Output,
    reason: planewave_core::stop::StopReason,
    at: &str,
    command: &str,
    input: &Path,
    checkpoint: &CheckpointArgs,
) -> ExitCode {
    if out.root {
        let file = checkpoint.plan(input).path;
        eprintln!(
            "stopped by {reason} in {at} (not converged); checkpoint written to {}\n  resume with: planewave {} {} --restart {}",
            file.display(),
            command,
            input.display(),
            file.display()
        );
    }
    ExitCode::from(3)
}

/// The end of a relaxation's output (rank 0).
fn relax_summary(
    r: &relax::RelaxResult,
    quiet: bool,
    poscar: &str,
    poscar_path: &Path,
    trajectory: &Path,
    json_path: &Path,
) {
    outln!();
    outln!(
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
    outln!("final structure (POSCAR, Å):");
    out!("{poscar}");
    outln!(
        "written: {} {} {}",
        poscar_path.display(),
        trajectory.display(),
        json_path.display()
    );
}

/// `planewave check`: the set-up on `ranks` in-process ranks, printed by rank 0.
fn check(
    input: &Path,
    ranks: usize,
    kpoint_groups: Option<usize>,
    device: Option<DeviceArg>,
) -> ExitCode {
    if ranks == 0 || kpoint_groups == Some(0) {
        return fail("error: --ranks and --kpoint-groups must be at least 1");
    }
    let mut spec = match input::load(input) {
        Ok(s) => s,
        Err(e) => return fail(&e.to_string()),
    };
    if kpoint_groups.is_some() {
        spec.parallel.kpoint_groups = kpoint_groups;
    }
    // `check` runs where the GPU may not be (a login node): it estimates, without opening it.
    let asked = std::mem::replace(&mut spec.parallel.device, input::Device::Cpu);
    let on_gpu = device.map_or(asked == input::Device::Gpu, |d| d == DeviceArg::Gpu);
    // Rank 0 prints the set-up; every rank reports how many plane waves it holds.
    let per_rank = planewave_comm::Threads::run(ranks, |c| {
        let root = planewave_comm::Communicator::rank(&c) == 0;
        let s = setup::build_on(spec.clone(), c.into_arc()).map_err(|e| e.to_string())?;
        if root {
            report::setup(&s);
            if on_gpu {
                outln!("estimated GPU memory {} per rank", s.gpu_memory.describe());
                let gvector_ranks = s.basis.parallel.layout().gvector_groups;
                if let Some(why) = planewave_core::device::refused_layout(gvector_ranks) {
                    outln!("warning: --device gpu would refuse this layout: {why}");
                }
                if !cfg!(feature = "cuda") {
                    outln!(
                        "warning: this planewave was built without GPU support: build it with \
                         `cargo build --release --features cuda` to run on the GPU"
                    );
                }
            }
        }
        let npw: Vec<usize> = s.basis.kpoints.iter().map(|k| k.npw()).collect();
        let density = (s.basis.rho_real_len(), s.basis.rho_millers.len());
        Ok::<_, String>((npw, density))
    });
    let per_rank: Vec<(Vec<usize>, (usize, usize))> = match per_rank.into_iter().collect() {
        Ok(v) => v,
        Err(e) => return fail(&e),
    };
    if ranks > 1 {
        outln!("plane waves held per rank (k-points of its group; others whole, unused):");
        for (r, (npw, _)) in per_rank.iter().enumerate() {
            let shown: Vec<String> = npw.iter().take(8).map(|n| n.to_string()).collect();
            let more = if npw.len() > 8 { " ..." } else { "" };
            outln!("  rank {r}: {}{more}", shown.join(" "));
        }
        outln!("density grid held per rank (dealt over each G-vector group):");
        for (r, (_, (points, gvectors))) in per_rank.iter().enumerate() {
            outln!("  on rank {r}: {points} grid points, {gvectors} G-vectors");
        }
    }
    ExitCode::SUCCESS
}

/// The dos.x, bands.x or pp.x input at `path`, None for any other input (which `input::load`
/// reads and judges).
fn read_post_input(path: &Path) -> Result<Option<input::PostInput>, String> {
    let Ok(text) = std::fs::read_to_string(path) else {
        return Ok(None);
    };
    input::read_post_input(&text, path).map_err(|e| e.to_string())
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
