//! From a validated [`RunSpec`] to a [`Model`], a [`Basis`] and SCF parameters: reads the
//! pseudopotentials, counts electrons, finds the symmetries, reduces the k-points, chooses the
//! number of bands, and refuses set-ups that cannot run (with the key to change).

use crate::basis::{Basis, Cutoffs};
use crate::crystal::{Atom, Crystal};
use crate::device::GpuMemory;
use crate::eigensolver::Eigensolver;
use crate::input::{InputError, InputFormat, Kpoints, RunSpec, Spin, KERKER_Q0};
use crate::model::{Model, Species, SpinMode};
use crate::parallel::{agree_on, Parallel};
use crate::pseudo::Pseudopotential;
use crate::scf::policies::{AndersonKerker, Policies};
use crate::scf::ScfParams;
use crate::smearing::Smearing;
use crate::symmetry::{find_symmetries, monkhorst_pack, reduce_kpoints, SymOp};
use crate::terms::nonlocal::STORED_PROJECTORS_MAX;
use crate::vacuum::Vacuum;
use crate::xc::Functional;
use planewave_comm::topology::ProblemSize;
use planewave_comm::{Communicator, Layout, Solo};
use planewave_fft::{Decomposition, DistFftOptions};
use std::sync::Arc;

/// A run ready to start.
#[derive(Debug)]
pub struct Setup {
    /// The input it came from.
    pub spec: RunSpec,
    /// The physical system.
    pub model: Model,
    /// The discretisation.
    pub basis: Basis,
    /// SCF parameters.
    pub params: ScfParams,
    /// Number of k-points before symmetry reduction.
    pub nk_full: usize,
    /// Estimated peak memory (bytes).
    pub memory_estimate: f64,
    /// The estimate by part (without the MPI library's share).
    pub memory_parts: MemoryParts,
    /// One rank's GPU memory for the local part of H, were the run on a GPU.
    pub gpu_memory: GpuMemory,
    /// Non-fatal remarks for the user.
    pub warnings: Vec<String>,
    /// What the set-up did that the user should know (printed as notes).
    pub notes: Vec<String>,
}

/// An error at `key` (named as in the input's format), with the line where the input wrote it.
fn err(spec: &RunSpec, key: &str, msg: impl Into<String>, hint: impl Into<String>) -> InputError {
    InputError::new(&spec.source, msg)
        .with_key(key)
        .at_line(spec.line_of(key))
        .with_hint(hint)
}

/// What ultrasoft and PAW species cannot do yet, refused by the key that asks for it: hybrid
/// functionals.
fn refuse_with_ultrasoft(spec: &RunSpec, model: &Model) -> Result<(), InputError> {
    let Some(sp) = model
        .species
        .iter()
        .find(|s| s.pseudo.augmentation().is_some())
    else {
        return Ok(());
    };
    if spec.hybrid.is_some() {
        let file = sp.path.display();
        let kind = if sp.pseudo.paw().is_some() {
            "PAW"
        } else {
            "ultrasoft"
        };
        let msg =
            format!("hybrid functionals with {kind} pseudopotentials ({file}) are not implemented");
        return Err(err(
            spec,
            spec.key_names().functional,
            msg,
            "use a norm-conserving pseudopotential for hybrids",
        ));
    }
    Ok(())
}

/// Build the model, basis and parameters of `spec` for one process.
pub fn build(spec: RunSpec) -> Result<Setup, InputError> {
    build_on(spec, Arc::new(Solo))
}

/// Build the run of `spec` on the ranks of `world` (collective: every rank calls it with the
/// same input). An error any rank meets (a pseudopotential file one node cannot read) is every
/// rank's error; the layout comes from `spec.parallel`, what it leaves out from the cost model.
pub fn build_on(spec: RunSpec, world: Arc<dyn Communicator>) -> Result<Setup, InputError> {
    build_following(spec, world, None)
}

/// As [`build_on`], keeping `previous`'s deal of the (spin, k) blocks to k-point groups when it
/// has the same shape (a relaxation keeps each block on the group that holds its bands).
///
/// The steps: the species (read on every rank, errors agreed), the crystal, the electrons and
/// bands, the symmetry and k-points, the model; then the plan from the problem's sizes (FFT
/// grid, layout, memory), and only then the basis, built on that layout.
pub fn build_following(
    spec: RunSpec,
    world: Arc<dyn Communicator>,
    previous: Option<&Parallel>,
) -> Result<Setup, InputError> {
    let mut warnings = Vec::new();
    let mut notes = Vec::new();
    check_cutoffs(&spec)?;
    let species = species_on(&spec, world.as_ref(), &mut warnings)?;
    let crystal = crystal_of(&spec, &species)?;
    let functional = functional_of(&spec, &species)?;
    let zsum: f64 = (crystal.atoms.iter())
        .map(|a| species[a.species].pseudo.z_valence)
        .sum();
    let n_electrons = zsum - spec.charge;
    if n_electrons <= 0.0 {
        let msg = format!("the cell has {n_electrons} electrons");
        let hint = "the net charge must leave at least one electron";
        return Err(err(&spec, spec.key_names().charge, msg, hint));
    }
    let (spin, starting_magnetization) = match &spec.spin {
        Spin::None => (SpinMode::None, vec![0.0; crystal.atoms.len()]),
        Spin::Collinear {
            starting_magnetization,
            total_magnetization,
        } => (
            SpinMode::Collinear {
                total_magnetization: *total_magnetization,
            },
            starting_magnetization.clone(),
        ),
    };
    let nbands = band_count(&spec, &spin, n_electrons)?;
    let Sampling {
        symmetries,
        nk_full,
        kpoints,
    } = kpoints_by_symmetry(
        &spec,
        &crystal,
        &starting_magnetization,
        &mut warnings,
        &mut notes,
    );
    let model = Model {
        crystal,
        species,
        functional,
        smearing: spec.smearing,
        spin,
        starting_magnetization,
        n_electrons,
        symmetries,
        hybrid: spec.hybrid,
    };
    check_q_grid(&spec, &model, &kpoints)?;
    refuse_with_ultrasoft(&spec, &model)?;
    let plan = Plan::make(&spec, world.as_ref(), &model, kpoints.len(), nbands)?;
    let gpu_memory = GpuMemory::estimate(
        &plan.memory,
        plan.grid.dims.iter().product(),
        plan.layout.band_groups,
        matches!(spec.kpoints, Kpoints::Gamma),
    );
    let device = crate::device::open(
        spec.parallel.device,
        world.as_ref(),
        plan.layout.gvector_groups,
        gpu_memory,
    )
    .map_err(|m| {
        InputError::new(&spec.source, m)
            .with_key("parallel.device")
            .at_line(spec.line_of("parallel.device"))
            .with_hint("or run on the CPU: --device cpu, [parallel] device = \"cpu\"")
    })?;
    let basis = plan.basis(&spec, world, &model, &kpoints, previous)?;
    let kerker_q0 = kerker_of(&spec, &model, &basis, &mut notes);
    let params = ScfParams {
        nbands,
        energy_tolerance: spec.scf.energy_tolerance,
        density_tolerance: spec.scf.density_tolerance,
        max_iterations: spec.scf.max_iterations,
        tuning: Default::default(),
        device,
        policies: Policies::standard(AndersonKerker {
            beta: spec.scf.mixing.beta,
            depth: spec.scf.mixing.depth,
            kerker_q0,
        }),
        seed: spec.scf.seed,
        start: spec.scf.start,
        eigensolver: plan.eigensolver,
        checkpoint: None,
        stop: None,
    };
    Ok(Setup {
        nk_full,
        spec,
        model,
        basis,
        params,
        memory_estimate: plan.memory_estimate,
        memory_parts: plan.memory,
        gpu_memory,
        warnings,
        notes,
    })
}

/// The Kerker wave vector (1/bohr): the input's; else none when vacuum isolates the atoms
/// ([`Vacuum`]), with a note, and [`KERKER_Q0`] otherwise. Collective on the G-vector group.
fn kerker_of(spec: &RunSpec, model: &Model, basis: &Basis, notes: &mut Vec<String>) -> f64 {
    if let Some(q0) = spec.scf.mixing.kerker_q0 {
        return q0;
    }
    let vacuum = Vacuum::of(model, basis);
    if !vacuum.isolated() {
        return KERKER_Q0;
    }
    let force = match spec.origin.format {
        InputFormat::Toml => "[scf] mixing = { kerker_q0 = 0.8 }",
        InputFormat::QuantumEspresso => "mixing_mode = 'TF'",
    };
    notes.push(format!(
        "mixing without Kerker's preconditioner: vacuum planes along every lattice direction \
         ({} of them) isolate the atoms; {force} keeps it",
        vacuum.describe()
    ));
    0.0
}

/// Every species' pseudopotential, read on every rank; one rank's failure is every rank's
/// error, and says so when the others could read the file.
/// The input's functional; for [`crate::input::FUNCTIONAL_OF_PSEUDOPOTENTIALS`], the one every
/// pseudopotential file names (an error when they differ or name none planewave knows).
fn functional_of(spec: &RunSpec, species: &[Species]) -> Result<Functional, InputError> {
    let key = spec.key_names().functional;
    if spec.functional != crate::input::FUNCTIONAL_OF_PSEUDOPOTENTIALS {
        return Functional::from_name(&spec.functional).ok_or_else(|| {
            let msg = format!("unknown functional {}", spec.functional);
            err(spec, key, msg, "use lda_pz, lda_pw, lda_vwn or pbe")
        });
    }
    let named: Vec<(String, Option<Functional>)> = (species.iter())
        .map(|s| {
            let hint = s.pseudo.functional_hint.clone().unwrap_or_default();
            let f = Functional::of_pseudopotential(&hint);
            (format!("{} ('{hint}')", s.path.display()), f)
        })
        .collect();
    let hint = "give input_dft, e.g. input_dft = 'pbe'";
    if let Some((file, _)) = named.iter().find(|(_, f)| f.is_none()) {
        let msg = format!("the pseudopotential {file} names a functional planewave does not know");
        return Err(err(spec, key, msg, hint));
    }
    let first = named[0].1;
    if let Some((file, _)) = named.iter().find(|(_, f)| *f != first) {
        let msg = format!(
            "the pseudopotentials name different functionals: {} and {file}",
            named[0].0
        );
        return Err(err(spec, key, msg, hint));
    }
    Ok(first.expect("checked above"))
}

fn species_on(
    spec: &RunSpec,
    world: &dyn Communicator,
    warnings: &mut Vec<String>,
) -> Result<Vec<Species>, InputError> {
    agree_on(world, read_species(spec, world.rank(), warnings)).map_err(|e| {
        let mut error = e.error;
        if e.failed < world.size() {
            error.message = format!(
                "{} (on rank {} of {}; the others read it: is the file on every node?)",
                error.message,
                e.rank,
                world.size()
            );
        }
        error
    })
}

/// The crystal of `spec`, its atoms pointing at `species`.
fn crystal_of(spec: &RunSpec, species: &[Species]) -> Result<Crystal, InputError> {
    let names = spec.key_names();
    let mut atoms = Vec::new();
    for a in &spec.atoms {
        let Some(i) = species.iter().position(|s| s.symbol == a.species) else {
            let msg = format!("atom species {} has no pseudopotential", a.species);
            let hint = format!(
                "give species {} a pseudopotential in {}",
                a.species, names.species
            );
            return Err(err(spec, names.atoms, msg, hint));
        };
        atoms.push(Atom {
            species: i,
            frac: a.frac,
        });
    }
    Crystal::new(spec.lattice, atoms)
        .map_err(|m| err(spec, names.lattice, m, "check the lattice vectors"))
}

/// The bands per k-point and spin: the input's, checked to hold the electrons, or all the
/// occupied ones (20% and at least 4 more with smearing).
fn band_count(spec: &RunSpec, spin: &SpinMode, n_electrons: f64) -> Result<usize, InputError> {
    let smearing = spec.smearing;
    let occupied = occupied_per_channel(spec, spin, n_electrons)?;
    let nbands = spec.nbands.unwrap_or_else(|| {
        if smearing == Smearing::None {
            occupied.ceil() as usize
        } else {
            let half = n_electrons / 2.0;
            ((1.2 * half).round() as usize).max(half.round() as usize + 4)
        }
    });
    // Bands per spin channel: all occupied ones, plus at least one more with smearing.
    let needed = occupied.ceil() as usize + usize::from(smearing != Smearing::None);
    if nbands < needed {
        let more = if smearing == Smearing::None {
            ""
        } else {
            ", one more than occupied for smearing"
        };
        let msg =
            format!("{nbands} bands cannot hold {n_electrons} electrons ({needed} needed{more})");
        let hint = format!("use at least {needed} bands, or leave it out to let planewave choose");
        return Err(err(spec, spec.key_names().nbands, msg, hint));
    }
    Ok(nbands)
}

/// Electrons in the fuller spin channel (half of them without spin), refusing occupations that
/// cannot be integer without smearing.
fn occupied_per_channel(
    spec: &RunSpec,
    spin: &SpinMode,
    n_electrons: f64,
) -> Result<f64, InputError> {
    let names = spec.key_names();
    let fractional = |x: f64| (x - x.round()).abs() > 1e-8;
    match (spin, spec.smearing) {
        (SpinMode::None, Smearing::None) if fractional(n_electrons / 2.0) => {
            let hint = match spec.origin.format {
                InputFormat::Toml => "set a smearing in [model] (e.g. smearing = \"gaussian\", smearing_width = 0.01), or spin = \"collinear\" with total_magnetization = 1",
                InputFormat::QuantumEspresso => "set occupations = 'smearing' with degauss, or nspin = 2 with tot_magnetization",
            };
            let msg = format!("an odd number of electrons ({n_electrons}) cannot fill doubly occupied bands without smearing");
            Err(err(spec, names.smearing, msg, hint))
        }
        (
            SpinMode::Collinear {
                total_magnetization: Some(m),
            },
            smearing,
        ) => {
            let (up, dn) = ((n_electrons + m) / 2.0, (n_electrons - m) / 2.0);
            if dn < -1e-8 {
                let msg = format!(
                    "a moment of {m} needs more than the {n_electrons} electrons of the cell"
                );
                return Err(err(
                    spec,
                    names.total_magnetization,
                    msg,
                    "lower total_magnetization",
                ));
            }
            if smearing == Smearing::None && (fractional(up) || fractional(dn)) {
                let msg = format!("{n_electrons} electrons with moment {m} give fractional spin-channel occupations");
                let hint = "choose a moment with the parity of the electron count, or use smearing";
                return Err(err(spec, names.total_magnetization, msg, hint));
            }
            Ok(up.max(dn))
        }
        (
            SpinMode::Collinear {
                total_magnetization: None,
            },
            Smearing::None,
        ) => Err(err(
            spec,
            names.spin,
            "collinear spin without smearing needs a fixed total magnetization",
            "set total_magnetization, or a smearing to let the moment relax",
        )),
        _ => Ok(n_electrons / 2.0),
    }
}

/// The crystal's symmetry operations (with the atoms' starting moments telling atoms apart)
/// and the k-points they leave.
fn kpoints_by_symmetry(
    spec: &RunSpec,
    crystal: &Crystal,
    starting_magnetization: &[f64],
    warnings: &mut Vec<String>,
    notes: &mut Vec<String>,
) -> Sampling {
    let mut symmetries = vec![SymOp::identity()];
    if spec.use_symmetry {
        let types: Vec<usize> = (crystal.atoms.iter().zip(starting_magnetization))
            .map(|(a, m)| a.species * 1000 + ((m * 100.0).round() as i64 + 500) as usize)
            .collect();
        let frac: Vec<[f64; 3]> = crystal.atoms.iter().map(|a| a.frac).collect();
        match find_symmetries(&crystal.lattice, &frac, &types, 1e-5) {
            Ok(ops) => symmetries = ops,
            Err(e) => warnings.push(format!(
                "symmetry search failed ({e}); running without symmetry"
            )),
        }
    }
    let (nk_full, mut kpoints) = match &spec.kpoints {
        Kpoints::Gamma => (1, vec![([0.0; 3], 1.0)]),
        Kpoints::MonkhorstPack { grid, shift } => {
            let kfull = monkhorst_pack(*grid, *shift);
            let set = reduce_kpoints(&kfull, &symmetries, true);
            (
                kfull.len(),
                set.kpoints.into_iter().zip(set.weights).collect(),
            )
        }
        // An explicit list is taken as irreducible points (pw.x's reading): the density, forces
        // and stress are symmetrised with the crystal's operations, the weights normalised.
        Kpoints::Explicit(list) => {
            notes.push(if symmetries.len() > 1 {
                format!(
                    "the {} listed k-points are taken as irreducible points: the density, forces and stress are symmetrised with the crystal's {} operations and the weights normalised to 1, as pw.x does (symmetry = false / nosym = .true. uses the list as it is)",
                    list.len(),
                    symmetries.len()
                )
            } else {
                format!(
                    "the {} listed k-points are used as they are (weights normalised to 1; no symmetrisation)",
                    list.len()
                )
            });
            (list.len(), list.clone())
        }
    };
    let wsum: f64 = kpoints.iter().map(|k| k.1).sum();
    for k in &mut kpoints {
        k.1 /= wsum;
    }
    Sampling {
        symmetries,
        nk_full,
        kpoints,
    }
}

/// The crystal's symmetry and the k-points it leaves to compute.
struct Sampling {
    symmetries: Vec<SymOp>,
    /// k-points before reduction.
    nk_full: usize,
    /// The k-points to compute and their weights (summing to 1).
    kpoints: Vec<([f64; 3], f64)>,
}

/// What the run's sizes decide before any plane wave is made: the FFT grid, the layout of the
/// ranks, the eigensolver and the memory (checked against the machine on every rank).
struct Plan {
    grid: planewave_fft::FftGrid,
    nbands: usize,
    layout: Layout,
    eigensolver: Eigensolver,
    memory: MemoryParts,
    memory_estimate: f64,
}

impl Plan {
    /// The plan of `model` with `nk` irreducible k-points and `nbands` bands on `world`
    /// (collective: the memory check is agreed).
    fn make(
        spec: &RunSpec,
        world: &dyn Communicator,
        model: &Model,
        nk: usize,
        nbands: usize,
    ) -> Result<Self, InputError> {
        let nspin = model.nspin();
        let grid = fft_grid(spec, model)?;
        let problem = ProblemSize {
            kpoints: nk * nspin,
            bands: nbands,
            fft_planes: grid.dims[2],
        };
        let layout = parallel_layout(spec, world.size(), problem)?;
        let eigensolver = Eigensolver::from_name(&spec.scf.eigensolver, spec.scf.davidson_dim)
            .ok_or_else(|| {
                let msg = format!("unknown eigensolver \"{}\"", spec.scf.eigensolver);
                err(
                    spec,
                    "scf.eigensolver",
                    msg,
                    "use \"davidson\" or \"lobpcg\"",
                )
            })?;
        let memory = memory_parts(
            model,
            cutoffs(spec),
            ((nk * nspin).div_ceil(layout.kpoint_groups), nk * nspin),
            nbands,
            (layout.band_groups, layout.gvector_groups),
            matches!(spec.kpoints, Kpoints::Gamma),
            eigensolver,
        );
        let mpi_share = if world.backend() == "mpi" {
            MPI_LIBRARY_SHARE
        } else {
            0.0
        };
        let fits = check_memory(spec, &memory, mpi_share, available_memory());
        agree_on(world, fits).map_err(|e| e.error)?;
        Ok(Plan {
            grid,
            nbands,
            layout,
            eigensolver,
            memory_estimate: mpi_share + memory.total(),
            memory,
        })
    }

    /// The basis of `kpoints` on the planned layout (collective): the ranks' topology, the deal
    /// of the (spin, k) blocks (`previous`'s when it fits) and each G-vector group's share.
    fn basis(
        &self,
        spec: &RunSpec,
        world: Arc<dyn Communicator>,
        model: &Model,
        kpoints: &[([f64; 3], f64)],
        previous: Option<&Parallel>,
    ) -> Result<Basis, InputError> {
        let (nspin, gamma) = (model.nspin(), matches!(spec.kpoints, Kpoints::Gamma));
        let kpoints = if gamma {
            &[([0.0; 3], 1.0)][..]
        } else {
            kpoints
        };
        let mut basis = Basis::with_grid(model, cutoffs(spec), kpoints, self.grid, gamma);
        let mut par = distribute(spec, world, self.layout, &basis, nspin, self.nbands)?;
        if let Some(prev) = previous {
            par.keep_deal_of(prev);
        }
        let options = transform_options(spec, &par, &basis)?;
        basis
            .distribute(&model.crystal, par, nspin, &options)
            .map_err(|e| {
                err(
                    spec,
                    "parallel",
                    e,
                    "run with fewer ranks per k-point group",
                )
            })?;
        Ok(basis)
    }
}

/// Read and tabulate every species' pseudopotential (a rank-local step: files are read by
/// every rank).
fn read_species(
    spec: &RunSpec,
    rank: usize,
    warnings: &mut Vec<String>,
) -> Result<Vec<Species>, InputError> {
    let mut species = Vec::new();
    for s in &spec.species {
        let (key, line) = spec.pseudo_key(&s.symbol);
        let pseudo_err = |msg: String, hint: &str| {
            InputError::new(&spec.source, msg)
                .with_key(key.as_str())
                .at_line(line)
                .with_hint(hint)
        };
        if !s.pseudo.is_file() {
            let what = if s.pseudo.exists() {
                "is not a file"
            } else {
                "not found"
            };
            let hint = match spec.origin.format {
                InputFormat::Toml => "pseudo paths are relative to the input file's folder",
                InputFormat::QuantumEspresso => {
                    "pseudo files are looked for in pseudo_dir (relative to the input file's folder; default: that folder)"
                }
            };
            return Err(pseudo_err(
                format!(
                    "pseudopotential file {} for species {} {what}",
                    s.pseudo.display(),
                    s.symbol
                ),
                hint,
            ));
        }
        let mut pseudo = Pseudopotential::from_file(&s.pseudo).map_err(|e| {
            pseudo_err(
                format!("cannot read the pseudopotential of species {}: {e}", s.symbol),
                "use a complete UPF (v1/v2), CP2K GTH or ABINIT pspcod-10 file (a truncated download or a file of another format will not do)",
            )
        })?;
        if !pseudo.symbol.eq_ignore_ascii_case(&s.symbol)
            && crate::pseudo::atomic_number(&s.symbol).is_some()
        {
            warnings.push(format!(
                "species {} uses a pseudopotential for element {} ({})",
                s.symbol,
                pseudo.symbol,
                s.pseudo.display()
            ));
        }
        // Every |k+G| of the run lies below sqrt(2 ecut) plus one reciprocal-cell diagonal;
        // the margin covers moderate cell changes in a relaxation (beyond it: direct integrals).
        let bmax: f64 = crate::crystal::Crystal::new(spec.lattice, Vec::new())
            .map(|c| c.recip.iter().map(crate::crystal::norm).sum())
            .unwrap_or(0.0);
        pseudo.tabulate_projectors(1.2 * (2.0 * spec.ecut).sqrt() + bmax);
        pseudo.tabulate_augmentation(1.2 * (2.0 * cutoffs(spec).rho).sqrt());
        species.push(Species {
            symbol: s.symbol.clone(),
            pseudo,
            path: s.pseudo.clone(),
        });
    }
    if crate::parallel::injected(crate::parallel::FAIL_RANK_ENV, rank) {
        return Err(InputError::new(
            &spec.source,
            format!(
                "injected failure ({}={rank}): this rank pretends it cannot read its pseudopotential files",
                crate::parallel::FAIL_RANK_ENV
            ),
        ));
    }
    Ok(species)
}

/// What the MPI and PMIx libraries add to a rank's peak RSS (bytes; si8 at two MPI ranks
/// against one process, 2026-11-23).
pub const MPI_LIBRARY_SHARE: f64 = 12.0 * 1048576.0;

/// Estimated peak memory of one rank (bytes) holding its share of `blocks.0` of the run's
/// `blocks.1` (spin, k) blocks of `nbands` bands dealt over `groups.0` band groups whose plane waves are dealt over `groups.1`
/// ranks; `gamma_real` when the bands are real (Γ point: 8 bytes per coefficient instead of
/// 16).
///
/// Terms: the bands of every block and their projectors, plus one workspace of `eigensolver`
/// ([`Eigensolver::workspace_blocks`] blocks of nbands vectors, and two more for the blocks in
/// flight in the band ring when bands are dealt), all divided over the G-vector group, the
/// bands and the workspace also over the band groups; density-sized arrays, one density
/// grid's worth that does not shrink with the group (whole-sphere index lists, the dense
/// kernels' packing buffers) and 1.4 that do (densities, potentials, the transforms' buffers),
/// plus the mixer's history and a gradient functional's grids (`density_work_bytes`, since
/// 2026-11-28: the fit had the history inside it on norm-conserving cases, so these now
/// overestimate them by about 10%, the safe side); the augmentation's Y_LM table; a fixed base
/// (program, libraries, thread stacks).
///
/// Calibration (2026-11-23, with projectors built block by block above
/// `STORED_PROJECTORS_MAX` and one k-point's P kept whole at a time below it, the 1 MiB mmap
/// threshold of the CLI, the density plan's buffers freed between uses and products in slabs
/// of at most 4 MiB of A; `RAYON_NUM_THREADS=1`, peak RSS; [`MPI_LIBRARY_SHARE`] added under
/// MPI by the caller): si64_lda_gth_gamma one rank 245 MiB (this gives 252; 289 MiB since
/// 2026-11-28 with the Davidson space kept between calls, one more block: 275), two MPI ranks
/// 159 MiB each (160); si8_lda_gth_displaced one rank 48 MiB (45), two MPI k-point groups
/// 54 MiB each (52); examples/si.toml 21 MiB (23). Hybrids (2026-11-24, with the exchange
/// term): h2o_pbe0_gth_gamma one rank 97 MiB (90); si2_pbe0_sg15 one rank 27 MiB (28) with the
/// k + q orbitals dealt by band group and built one share at a time (52 MiB when every
/// image's orbitals were held at once). Since `density_work_bytes` (2026-11-28): si64 one rank
/// 289 MiB (322), si2_pbe_dojo 19 (26), h2o_pbe_us_paw_gamma 224 (213; with LDA 174 / 166).
pub fn memory_per_rank(
    model: &Model,
    ecut: f64,
    blocks: (usize, usize),
    nbands: usize,
    groups: (usize, usize),
    gamma_real: bool,
    eigensolver: Eigensolver,
) -> f64 {
    memory_parts(model, ecut, blocks, nbands, groups, gamma_real, eigensolver).total()
}

/// [`memory_per_rank`] by what it holds, so that a refusal can name what dominates.
#[derive(Debug, Clone, Copy)]
pub struct MemoryParts {
    /// The bands and phases of this rank's (spin, k) blocks (bytes): they grow with the
    /// k-points.
    pub kpoint_bands: f64,
    /// One block's working set (bytes): the eigensolver workspace and the projectors.
    pub working_set: f64,
    /// Density-sized arrays (bytes).
    pub grids: f64,
    /// A hybrid's exchange (bytes; 0 otherwise).
    pub exchange: f64,
    /// Ultrasoft augmentation charges (bytes; 0 otherwise): the table of Y_LM on the density
    /// sphere, L up to twice the projectors' largest l.
    pub augmentation: f64,
    /// Program, libraries and thread stacks (bytes).
    pub base: f64,
    /// (Spin, k) blocks held by this rank.
    pub blocks: usize,
    /// Bands per block.
    pub nbands: usize,
    /// Plane waves per band, estimated from the cutoff and the cell (whole sphere).
    pub plane_waves: f64,
}

impl MemoryParts {
    /// Bytes in all.
    pub fn total(&self) -> f64 {
        self.kpoint_bands
            + self.working_set
            + self.grids
            + self.exchange
            + self.augmentation
            + self.base
    }
}

/// [`memory_per_rank`] by part.
pub fn memory_parts(
    model: &Model,
    cutoffs: impl Into<Cutoffs>,
    (blocks, all_blocks): (usize, usize),
    nbands: usize,
    groups: (usize, usize),
    gamma_real: bool,
    eigensolver: Eigensolver,
) -> MemoryParts {
    let (band_groups, gvector_ranks) = groups;
    let Cutoffs { wfc: ecut, rho } = cutoffs.into();
    let npw_est = sphere_size(model, ecut);
    let nproj: f64 = model
        .crystal
        .atoms
        .iter()
        .map(|a| {
            model.species[a.species]
                .pseudo
                .projectors
                .iter()
                .map(|p| (2 * p.l + 1) as f64)
                .sum::<f64>()
        })
        .sum();
    let natoms = model.crystal.atoms.len() as f64;
    let word = if gamma_real { 8.0 } else { 16.0 };
    let grid_est = 8.0 * 8.0 * npw_est * 16.0 * (rho / (4.0 * ecut)).powf(1.5);
    let blocks = blocks as f64;
    let nb = nbands as f64;
    let g = gvector_ranks.max(1) as f64;
    let (ring, bg) = match band_groups.max(1) {
        1 => (0.0, 1.0),
        b => (2.0, b as f64),
    };
    let workspace = (eigensolver.workspace_blocks() as f64 + ring) * nb / bg;
    // Per block one phase per plane wave and atom; P of the k-point being solved when small
    // enough to be kept whole.
    let p_bytes = word * npw_est / g * nproj;
    let whole = if p_bytes <= STORED_PROJECTORS_MAX as f64 {
        nproj
    } else {
        0.0
    };
    let kpoint_bands = word * npw_est / g * blocks * (nb / bg + natoms);
    let working_set = word * npw_est / g * (whole + workspace);
    let grids = (1.0 + 1.4 / g) * grid_est + density_work_bytes(model, rho) / g;
    let base = 20.0 * 1048576.0;
    // One grid field of the exchange: about 16 npw points (the FFT box of the density sphere),
    // real on the Γ path.
    let field = word * 16.0 * npw_est / g;
    let exchange = exchange_bytes(
        model,
        (field, word * npw_est / g, 16.0 * npw_est),
        (nb, bg),
        (blocks, all_blocks as f64),
    );
    MemoryParts {
        kpoint_bands,
        working_set,
        grids,
        exchange,
        augmentation: augmentation_bytes(model, rho) / g,
        base,
        blocks: blocks as usize,
        nbands,
        plane_waves: npw_est,
    }
}

/// The plane waves of `model`'s cell in the sphere |G|²/2 ≤ `ecut` (Ha), estimated from the
/// sphere's volume.
fn sphere_size(model: &Model, ecut: f64) -> f64 {
    model.crystal.volume * (2.0 * ecut).powf(1.5) / (6.0 * std::f64::consts::PI.powi(2))
}

/// The SCF's work on the density beyond the fitted grids (bytes, the whole sphere of `ecut_rho`):
/// the mixer's history, the default depth's pairs of sphere vectors per spin channel, and a
/// gradient functional's fields, about [`GGA_FIELDS`] real grids of the FFT box (2.2 points
/// per sphere entry). h2o_pbe_us_paw_gamma (80³ box, 233577 entries) peaked at
/// 224 MiB with PBE and 174 MiB with LDA against an estimate of 109 MiB without them.
fn density_work_bytes(model: &Model, ecut_rho: f64) -> f64 {
    let sphere = sphere_size(model, ecut_rho);
    let depth = planewave_input::MixingSpec::default().depth as f64;
    let mixer = 2.0 * depth * model.nspin() as f64 * sphere * 16.0;
    let gga = if model.functional.is_gga() {
        GGA_FIELDS * 2.2 * sphere * 8.0
    } else {
        0.0
    };
    mixer + gga
}

/// Real grid fields a gradient functional holds at once (measured: PBE's peak is 50 MiB above
/// LDA's on an 80³ box, 12 fields of 4 MiB).
const GGA_FIELDS: f64 = 12.0;

/// The augmentation charges' memory (bytes, the whole density sphere of `ecut_rho`): the
/// Y_LM table of the pairs' largest L (twice the projectors' largest l). The density and the
/// screening work in blocks of the sphere.
fn augmentation_bytes(model: &Model, ecut_rho: f64) -> f64 {
    let Some(lmax) = (model.species.iter())
        .filter(|s| s.pseudo.augmentation().is_some())
        .flat_map(|s| s.pseudo.projectors.iter().map(|p| 2 * p.l))
        .max()
    else {
        return 0.0;
    };
    let sphere = sphere_size(model, ecut_rho);
    sphere * ((lmax + 1).pow(2) * 8) as f64
}

/// Share of this machine's memory a run may plan to use; the rest is the margin for the
/// system, other processes and the estimate's error.
const MEMORY_SHARE: f64 = 0.8;

/// Refuse a run whose estimate (`parts`, plus `mpi_share` bytes of the MPI library) is above
/// [`MEMORY_SHARE`] of `available` bytes, naming the part that dominates and the key that
/// sets it.
fn check_memory(
    spec: &RunSpec,
    parts: &MemoryParts,
    mpi_share: f64,
    available: f64,
) -> Result<(), InputError> {
    let total = mpi_share + parts.total();
    if total <= MEMORY_SHARE * available {
        return Ok(());
    }
    let names = spec.key_names();
    let gib = |x: f64| x / 2f64.powi(30);
    let what = format!(
        "{} bands of about {:.0} plane waves each at a cutoff of {} Ha",
        parts.nbands, parts.plane_waves, spec.ecut
    );
    let candidates = [
        (
            parts.kpoint_bands,
            names.kpoints,
            format!(
                "the bands of the {} (spin, k) blocks this rank holds ({what})",
                parts.blocks
            ),
            "use a coarser k-point grid, or more ranks as k-point groups (each holds fewer blocks)",
        ),
        (
            parts.working_set,
            if spec.nbands.is_some() {
                names.nbands
            } else {
                names.ecut
            },
            format!("one k-point's eigensolver workspace and projectors ({what})"),
            "lower ecut or nbands, or share the plane waves over more ranks (G-vector groups)",
        ),
        (
            parts.grids,
            if spec.fft_grid.is_some() {
                names.fft_grid
            } else {
                names.ecut
            },
            format!(
                "the density-sized arrays on the FFT grid of a cutoff of {} Ha",
                spec.ecut
            ),
            "lower ecut (it sets the grid), or share the grid over more ranks (G-vector groups)",
        ),
        (
            parts.exchange,
            names.functional,
            "the exact exchange (occupied orbitals and pair densities on the grid)".to_string(),
            "use more ranks as band groups or G-vector groups, or a semilocal functional",
        ),
    ];
    let (part, key, what, hint) = candidates
        .into_iter()
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .expect("four parts");
    Err(err(
        spec,
        key,
        format!(
            "this run needs about {:.1} GiB per rank, more than the {:.1} GiB a run may plan on ({:.0}% of this machine's {:.1} GiB, the rest kept as a margin); most of it, {:.1} GiB, is {what}",
            gib(total),
            gib(MEMORY_SHARE * available),
            100.0 * MEMORY_SHARE,
            gib(available),
            gib(part),
        ),
        format!("{hint}, or run on a machine with more memory"),
    ))
}

/// A hybrid's exchange while one block's operator is built: the block's bands and results
/// on the grid, one band group's share of the occupied orbitals at a time on the grid with a
/// pair density each (`field`: bytes of one grid field on this rank), and with a q grid every
/// block's share of the occupied orbitals over its whole sphere (`sphere_vector` bytes each;
/// one more share in flight on the ring); plus the compressed operators of the rank's blocks
/// (`band_vector`: bytes of one band vector on this rank). `nbands` bands per block over
/// `band_groups`; `blocks` = (this rank's, all).
fn exchange_bytes(
    model: &Model,
    (field, band_vector, sphere_vector): (f64, f64, f64),
    (nbands, band_groups): (f64, f64),
    (blocks, all_blocks): (f64, f64),
) -> f64 {
    let Some(h) = &model.hybrid else {
        return 0.0;
    };
    let n_q = h.kernel.q_grid.iter().product::<usize>();
    let share = (model.n_electrons / model.max_occupation() / band_groups).ceil();
    let grids = 2.0 * (share + (nbands / band_groups).ceil()) * field;
    let sources = if n_q > 1 {
        share * sphere_vector * (all_blocks + 1.0)
    } else {
        0.0
    };
    grids + sources + band_vector * nbands * blocks
}

/// The layout of `spec.parallel` on `ranks` ranks. What the input leaves out: one band group,
/// and as many k-point groups as divide the ranks and have blocks to work on (the rest of a
/// group's ranks share its blocks' G-vectors).
fn parallel_layout(
    spec: &RunSpec,
    ranks: usize,
    problem: ProblemSize,
) -> Result<Layout, InputError> {
    use planewave_comm::topology::{resolve_layout, LayoutRequest, RankOrder};
    let band_groups = spec.parallel.band_groups.unwrap_or(1);
    if band_groups > 1 && spec.scf.eigensolver == "lobpcg" {
        return Err(err(
            spec,
            "parallel.band_groups",
            format!("{band_groups} band groups asked for with the LOBPCG eigensolver, which works on whole bands only"),
            "use eigensolver = \"davidson\" (the default) or band_groups = 1",
        ));
    }
    let mut request = LayoutRequest::auto(problem);
    request.band_groups = Some(band_groups);
    request.kpoint_groups = spec.parallel.kpoint_groups.or_else(|| {
        (1..=(ranks / band_groups).min(problem.kpoints))
            .rev()
            .find(|kg| ranks.is_multiple_of(*kg * band_groups))
            .or(Some(1))
    });
    if spec.parallel.band_consecutive {
        request.order = RankOrder::BandConsecutive;
    }
    resolve_layout(ranks, &request).map_err(|e| {
        let hint = match &e.nearest {
            Some(l) if band_groups > 1 => format!(
                "use kpoint_groups = {}, band_groups = {} (or leave them out to let planewave choose)",
                l.kpoint_groups, l.band_groups
            ),
            Some(l) => format!(
                "use kpoint_groups = {} (or leave it out to let planewave choose)",
                l.kpoint_groups
            ),
            None => "leave [parallel] out to let planewave choose".to_string(),
        };
        let key = if e.reason.contains("band group") {
            "parallel.band_groups"
        } else {
            "parallel.kpoint_groups"
        };
        err(spec, key, e.to_string(), hint)
    })
}

/// A hybrid's q grid: one point at Γ (real bands), and a sub-grid of the k grid elsewhere
/// (every k + q a symmetry image of a computed k-point).
fn check_q_grid(
    spec: &RunSpec,
    model: &Model,
    kpoints: &[([f64; 3], f64)],
) -> Result<(), InputError> {
    let Some(h) = &model.hybrid else {
        return Ok(());
    };
    let key = spec.key_names().functional;
    if h.kernel.q_grid == [1, 1, 1] {
        return Ok(());
    }
    if matches!(spec.kpoints, Kpoints::Gamma) {
        return Err(err(
            spec,
            key,
            format!(
                "a q grid of {:?} with the Γ point only (real bands)",
                h.kernel.q_grid
            ),
            "use the q grid 1 x 1 x 1 at Γ (the default), or a k grid",
        ));
    }
    let irreducible: Vec<[f64; 3]> = kpoints.iter().map(|k| k.0).collect();
    for k in &irreducible {
        crate::exx::kq::images(*k, h.kernel.q_grid, &irreducible, &model.symmetries).map_err(
            |e| {
                err(
                    spec,
                    key,
                    e,
                    "choose a q grid that divides the k grid (QE nqx1..3)",
                )
            },
        )?;
    }
    Ok(())
}

/// The process topology of `layout` on `world` (collective) and the deal of the (spin, k)
/// blocks of `basis`, with the k-point sum strategy of the input.
fn distribute(
    spec: &RunSpec,
    world: Arc<dyn Communicator>,
    layout: Layout,
    basis: &Basis,
    nspin: usize,
    nbands: usize,
) -> Result<Parallel, InputError> {
    let sum =
        planewave_comm::sum::sum_choice(spec.parallel.kpoint_sum.as_deref()).map_err(|e| {
            err(
                spec,
                "parallel.kpoint_sum",
                e,
                "use allreduce, reduce_scatter or auto",
            )
        })?;
    let kg = layout.kpoint_groups;
    let bg = layout.band_groups;
    Parallel::over_kpoints(world, kg, bg, layout.order, basis, nspin, nbands, sum)
        .map_err(|e| err(spec, "parallel.kpoint_groups", e.to_string(), ""))
}

/// The density cutoff against the wavefunctions' (the input checks it too; a library caller
/// may have changed either since): at least 4 times it, exactly that with a hybrid.
fn check_cutoffs(spec: &RunSpec) -> Result<(), InputError> {
    let c = cutoffs(spec);
    let four = 4.0 * c.wfc;
    let msg = if c.rho.is_nan() || c.rho < four * (1.0 - 1e-9) {
        format!(
            "the density cutoff {} Ha is below 4 times the wavefunction cutoff, {four} Ha",
            c.rho
        )
    } else if spec.hybrid.is_some() && c.rho > four * (1.0 + 1e-9) {
        format!("a hybrid functional needs the density cutoff at 4 times the wavefunction cutoff ({four} Ha), not {} Ha", c.rho)
    } else {
        return Ok(());
    };
    let hint = "set the density cutoff to 4 times the wavefunction cutoff or leave it out";
    Err(err(spec, spec.key_names().ecut_rho, msg, hint))
}

/// The run's cutoffs: the wavefunctions' and the density's (4 times it unless given).
fn cutoffs(spec: &RunSpec) -> Cutoffs {
    Cutoffs {
        wfc: spec.ecut,
        rho: spec.ecut_rho.unwrap_or(4.0 * spec.ecut),
    }
}

/// The FFT grid: the user's (`[basis] fft_grid`, QE `nr1..3`), checked to hold the density
/// sphere, else the smallest grid that does with factors 2, 3, 5 and 7.
fn fft_grid(spec: &RunSpec, model: &Model) -> Result<planewave_fft::FftGrid, InputError> {
    let auto = crate::basis::fft_grid_for(&model.crystal, cutoffs(spec));
    let Some(dims) = spec.fft_grid else {
        return Ok(auto);
    };
    let need = crate::basis::min_fft_dims(&model.crystal, cutoffs(spec));
    if dims.iter().zip(&need).any(|(d, n)| d < n) {
        return Err(err(
            spec,
            spec.key_names().fft_grid,
            format!(
                "an FFT grid of {}x{}x{} does not hold the density sphere of {} Ha: at least {}x{}x{} points are needed",
                dims[0], dims[1], dims[2], cutoffs(spec).rho, need[0], need[1], need[2]
            ),
            format!(
                "use at least {}x{}x{} (planewave's own choice would be {}x{}x{}), or leave the grid out",
                need[0], need[1], need[2], auto.dims[0], auto.dims[1], auto.dims[2]
            ),
        ));
    }
    // About 20 whole-grid arrays of complex numbers live at once (densities, potentials, work).
    let bytes = 20.0 * 16.0 * dims.iter().map(|&d| d as f64).product::<f64>();
    if bytes > MEMORY_SHARE * available_memory() {
        return Err(err(
            spec,
            spec.key_names().fft_grid,
            format!(
                "an FFT grid of {}x{}x{} needs about {:.1} GiB, more than the {:.0}% of this machine's {:.1} GiB a run may plan on",
                dims[0],
                dims[1],
                dims[2],
                bytes / 2f64.powi(30),
                100.0 * MEMORY_SHARE,
                available_memory() / 2f64.powi(30)
            ),
            format!(
                "leave the grid out (planewave's own choice is {}x{}x{})",
                auto.dims[0], auto.dims[1], auto.dims[2]
            ),
        ));
    }
    Ok(planewave_fft::FftGrid { dims })
}

/// How the plane waves of a G-vector group are transformed: slab or pencil as the grid allows
/// (slab for the Γ-real path, which pairs mirror sticks), and the all-to-all-v algorithm of
/// the transposes from `[parallel] alltoallv` / `PLANEWAVE_ALLTOALLV` (`auto` times every
/// algorithm on this run's exchange sizes; collective on the group).
fn transform_options(
    spec: &RunSpec,
    par: &Parallel,
    basis: &Basis,
) -> Result<DistFftOptions, InputError> {
    use planewave_comm::strategies::{
        alltoallv_choice, autotune::autotune_alltoallv, AlltoallvAlgorithm, AlltoallvChoice,
    };
    let group = par.topology().gvector.clone();
    let choice = alltoallv_choice(spec.parallel.alltoallv.as_deref()).map_err(|e| {
        err(
            spec,
            "parallel.alltoallv",
            e,
            "use native, p2p, node, pairwise, nonblocking or auto",
        )
    })?;
    let gamma_real = basis.kpoints.iter().any(|k| k.is_gamma_real());
    let decomposition = if gamma_real {
        Decomposition::Slab
    } else {
        Decomposition::Auto
    };
    let alltoallv = match choice {
        AlltoallvChoice::Fixed(a) => a,
        AlltoallvChoice::Autotune if group.size() == 1 => AlltoallvAlgorithm::Native,
        AlltoallvChoice::Autotune => {
            // One transpose of a few bands: each rank sends its sticks' share of every other
            // rank's planes.
            let p = group.size();
            let k = &basis.kpoints[0];
            let mut sticks: Vec<(i32, i32)> = k.millers.iter().map(|m| (m[0], m[1])).collect();
            sticks.sort_unstable();
            sticks.dedup();
            let factor = if gamma_real { 2 } else { 1 };
            let per_pair = (factor * sticks.len() * basis.grid.dims[2] * 4).div_ceil(p * p);
            let counts = vec![per_pair; p];
            let (_, report) =
                autotune_alltoallv(&group, &AlltoallvAlgorithm::ALL, &counts, &counts, 3, false);
            report.chosen
        }
    };
    Ok(DistFftOptions {
        decomposition,
        alltoallv,
        pair_mirror_sticks: gamma_real,
    })
}

/// Physical memory of this machine (bytes); a large default when unknown.
fn available_memory() -> f64 {
    std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("MemTotal:"))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|v| v.parse::<f64>().ok())
        })
        .map(|kb| kb * 1024.0)
        .unwrap_or(64.0 * 2f64.powi(30))
}
