//! Human-readable output: the set-up, one line per SCF iteration, and the final summary.

use crate::launch::Placement;
use planewave_core::efficiency::ParallelReport;
use planewave_core::forces::Forces;
use planewave_core::input::units::BOHR_PER_ANGSTROM;
use planewave_core::model::SpinMode;
use planewave_core::relax::StepInfo;
use planewave_core::scf::{ExxStepInfo, IterationInfo, ScfResult};
use planewave_core::setup::Setup;
use planewave_core::stress::{Stress, HA_PER_BOHR3_IN_GPA};
use std::path::Path;

const EV: f64 = 27.211_386_245_988;

/// Print the parsed set-up (also the whole output of `planewave check`).
pub fn setup(s: &Setup) {
    let m = &s.model;
    let b = &s.basis;
    outln!(
        "planewave {}  input: {}",
        env!("CARGO_PKG_VERSION"),
        s.spec.source.display()
    );
    outln!("cell (bohr), volume {:.4} bohr^3:", m.crystal.volume);
    for a in &m.crystal.lattice {
        outln!("  {:14.8} {:14.8} {:14.8}", a[0], a[1], a[2]);
    }
    outln!("atoms (fractional):");
    for a in &m.crystal.atoms {
        let f = a.frac;
        outln!(
            "  {:<3} {:12.8} {:12.8} {:12.8}",
            m.species[a.species].symbol,
            f[0],
            f[1],
            f[2]
        );
    }
    for sp in &m.species {
        let kind = match (sp.pseudo.paw(), sp.pseudo.augmentation()) {
            (Some(_), _) => "PAW",
            (None, Some(_)) => "ultrasoft",
            _ => "norm-conserving",
        };
        outln!(
            "species {:<3} {kind}  Z_val = {}  projectors = {}  NLCC = {}  ({})",
            sp.symbol,
            sp.pseudo.z_valence,
            sp.pseudo.projectors.len(),
            sp.pseudo.has_core_correction(),
            sp.path.display()
        );
    }
    let spin = match &m.spin {
        SpinMode::None => "none".to_string(),
        SpinMode::Collinear {
            total_magnetization: Some(x),
        } => format!("collinear, fixed moment {x}"),
        SpinMode::Collinear {
            total_magnetization: None,
        } => "collinear, free moment".to_string(),
    };
    outln!(
        "functional {}  smearing {} ({} Ha)  spin {}  electrons {}  bands {}",
        m.functional.name(),
        m.smearing.name(),
        m.smearing.width(),
        spin,
        m.n_electrons,
        s.params.nbands
    );
    if let Some(h) = &m.hybrid {
        outln!(
            "hybrid: {:.0}% exact exchange ({} kernel; x_gamma extrapolation {}; q grid {}x{}x{}), the rest {}; semilocal SCF first, then outer steps with the compressed exchange operator",
            100.0 * h.fraction,
            h.kernel.screening.map_or("Coulomb".to_string(), |w| format!("erfc, screening {w} 1/bohr")),
            if h.kernel.x_gamma_extrapolation { "on" } else { "off" },
            h.kernel.q_grid[0],
            h.kernel.q_grid[1],
            h.kernel.q_grid[2],
            m.functional.name()
        );
    }
    outln!(
        "symmetry operations {}  k-points {} ({} before symmetry)",
        m.symmetries.len(),
        b.kpoints.len(),
        s.nk_full
    );
    let npw: Vec<usize> = b.kpoints.iter().map(|k| k.npw_global()).collect();
    let dims = |d: [usize; 3]| format!("{}x{}x{}", d[0], d[1], d[2]);
    let bands_grid = (b.wfc.as_ref()).map_or(String::new(), |w| {
        format!(" (bands on {})", dims(w.grid.dims))
    });
    outln!(
        "ecut {} Ha ({} Ry), density {} Ha  FFT grid {}{bands_grid}  plane waves per k: {}..{}  density G-vectors {}",
        b.ecut,
        2.0 * b.ecut,
        b.ecut_rho,
        dims(b.grid.dims),
        npw.iter().min().unwrap_or(&0),
        npw.iter().max().unwrap_or(&0),
        b.rho_global_len()
    );
    outln!(
        "parallel layout on {} rank(s): {}",
        b.parallel.world().size(),
        b.parallel.layout()
    );
    outln!(
        "estimated memory {:.1} MiB per rank: {}",
        s.memory_estimate / 1048576.0,
        memory_parts(s)
    );
    for n in &s.notes {
        outln!("note: {n}");
    }
    for w in &s.warnings {
        outln!("warning: {w}");
    }
}

/// "bands 1.2 (8 (spin, k) blocks), ... MiB" for the estimate's parts (exchange and the MPI
/// library's share only when there are any).
fn memory_parts(s: &Setup) -> String {
    let p = &s.memory_parts;
    let mib = |x: f64| x / 1048576.0;
    let mut parts = vec![
        format!(
            "bands {:.1} ({} (spin, k) blocks)",
            mib(p.kpoint_bands),
            p.blocks
        ),
        format!(
            "eigensolver workspace and projectors {:.1}",
            mib(p.working_set)
        ),
        format!("density grids {:.1}", mib(p.grids)),
    ];
    if p.exchange > 0.0 {
        parts.push(format!("exact exchange {:.1}", mib(p.exchange)));
    }
    if p.augmentation > 0.0 {
        parts.push(format!("augmentation charges {:.1}", mib(p.augmentation)));
    }
    parts.push(format!("program and libraries {:.1}", mib(p.base)));
    let mpi = s.memory_estimate - p.total();
    if mpi > 0.0 {
        parts.push(format!("MPI library {:.1}", mib(mpi)));
    }
    format!("{} MiB", parts.join(", "))
}

/// Ranks, threads and nodes of the run.
pub fn placement(s: &Setup, p: &Placement) {
    let par = &s.basis.parallel;
    let topo = par.topology();
    outln!(
        "ranks {} ({}) x threads {} on {} node(s) with {} cores each; sum over k-point groups: {}",
        topo.world.size(),
        topo.world.backend(),
        p.threads,
        topo.nodes,
        p.cores,
        par.sum_algorithm()
    );
    if let Some(d) = &s.params.device {
        outln!(
            "local part of H (the bands' FFTs) on {}; estimated GPU memory {} per rank",
            d.describe(),
            s.gpu_memory.describe()
        );
    }
}

/// The parallel efficiency report and the time projection.
pub fn parallel(r: &ParallelReport) {
    outln!();
    if r.ranks == 1 && r.threads_per_rank == 1 {
        outln!("serial run (1 rank x 1 thread): {}", projection(r));
        for a in &r.advice {
            outln!("advice: {a}");
        }
        return;
    }
    outln!(
        "parallel efficiency ({} rank(s) x {} thread(s), {}, {} node(s)):",
        r.ranks,
        r.threads_per_rank,
        r.backend,
        r.nodes
    );
    for l in &r.levels {
        let head = format!(
            "  {:<9}({}-way): {:>4.0}%",
            l.level,
            l.ways,
            100.0 * l.efficiency
        );
        if l.ways > 1 || l.level == "k-point" {
            outln!(
                "{head}   computation {:.2} s  communication {:.3} s  waiting {:.3} s   {}",
                l.computation_s,
                l.communication_s,
                l.waiting_s,
                l.note
            );
        } else {
            outln!("{head}   {}", l.note);
        }
    }
    outln!("  overall: {:.0}%", 100.0 * r.overall_efficiency);
    operations(r);
    let c = &r.compute_per_rank;
    outln!(
        "  computation per rank (block work less its band and G-vector communication): {:.2} s (rank {}) to {:.2} s (rank {})",
        c.min_s, c.min_rank, c.max_s, c.max_rank
    );
    outln!("{}", projection(r));
    for a in &r.advice {
        outln!("advice: {a}");
    }
}

/// Each level's communication by operation, dearest first: "G-vector: transposes 1.20 s
/// (0.10 waiting, 340 calls, 12.5 MiB), overlaps ...".
fn operations(r: &ParallelReport) {
    if r.operations.is_empty() {
        return;
    }
    outln!("  communication by operation (seconds per rank; waiting, calls and data sent in brackets):");
    for level in ["k-point", "band", "G-vector", "other"] {
        let mut ops: Vec<_> = r.operations.iter().filter(|o| o.level == level).collect();
        if ops.is_empty() {
            continue;
        }
        ops.sort_by(|a, b| b.seconds.total_cmp(&a.seconds));
        let cells: Vec<String> = ops
            .iter()
            .map(|o| {
                format!(
                    "{} {:.3} s ({:.3} waiting, {:.0} calls, {:.1} MiB)",
                    o.operation, o.seconds, o.waiting_s, o.calls, o.mebibytes
                )
            })
            .collect();
        outln!("    {level:<9} {}", cells.join(", "));
    }
}

/// "time projection: t_init + N x t_iter + t_post; N = ...".
fn projection(r: &ParallelReport) -> String {
    let p = &r.projection;
    let n = match (p.iterations_to_converge, p.t_total_s) {
        (Some(n), Some(t)) if n == p.iterations => {
            format!("N = {n} (this run): t_total = {t:.2} s")
        }
        (Some(n), Some(t)) => format!("N = {n} (projected to convergence): t_total = {t:.2} s"),
        _ => "N unknown (the residual did not fall)".to_string(),
    };
    format!(
        "time projection: t_init {:.2} s + N x t_iter {:.3} s + t_post {:.2} s; {n}",
        p.t_init_s, p.t_iter_s, p.t_post_s
    )
}

/// Header of the iteration table.
pub fn iteration_header() {
    outln!(
        "      {:>5} {:>20} {:>12} {:>11} {:>8} {:>6}",
        "iter",
        "energy (Ha)",
        "dE (Ha)",
        "residual",
        "time(s)",
        "eig-it"
    );
}

/// One line per SCF iteration; `~` after the energy marks a first-order estimate (GGA far
/// from convergence, [`planewave_core::scf::EXACT_ENERGY_RESIDUALS`]).
pub fn iteration(it: &IterationInfo) {
    let de = if it.delta_e.is_nan() {
        "".to_string()
    } else {
        format!("{:.3e}", it.delta_e)
    };
    let mark = if it.estimated { "~" } else { " " };
    outln!(
        "scf   {:>5} {:>20.10}{mark}{:>12} {:>11.3e} {:>8.2} {:>6.1}",
        it.iteration,
        it.energy,
        de,
        it.residual,
        it.seconds,
        it.eigensolver_iterations
    );
}

/// One line per outer step of a hybrid run (after its inner SCF loop).
pub fn exx_step(x: &ExxStepInfo) {
    outln!(
        "exx   step {:>3}: energy {:.10} Ha  Fock energy {:.10} Ha  dexx {:.3e} Ha  ({} inner iterations, {:.2} s)",
        x.step, x.energy, x.fock_energy, x.dexx, x.inner_iterations, x.seconds
    );
}

/// Final summary.
pub fn summary(s: &Setup, r: &ScfResult) {
    let e = &r.energies;
    outln!();
    outln!(
        "{} after {} iterations",
        if r.converged {
            "SCF converged"
        } else {
            "SCF NOT converged"
        },
        r.iterations
    );
    outln!("energy terms (Ha):");
    for t in e.terms() {
        outln!("  {:<16} {:20.10}", t.label, t.value);
    }
    outln!("  {:<16} {:20.10}", "one-electron", e.one_electron());
    outln!("internal energy E      = {:20.10} Ha", e.internal());
    outln!(
        "! total energy F = E-TS = {:19.10} Ha = {:.8} eV",
        e.total(),
        e.total() * EV
    );
    if let Some(core) = s.model.core_energy() {
        outln!(
            "total all-electron energy = {:17.10} Ha (PAW: the total energy with the cores')",
            e.total() + core
        );
    }
    if let Some(f) = &r.occupations.fermi {
        for (i, mu) in f.iter().enumerate() {
            outln!(
                "Fermi level{} = {:.6} Ha = {:.4} eV",
                if f.len() > 1 {
                    format!(" (spin {})", i + 1)
                } else {
                    String::new()
                },
                mu,
                mu * EV
            );
        }
    }
    if let Some(h) = r.occupations.homo {
        out!("HOMO = {:.6} Ha ({:.4} eV)", h, h * EV);
        if let Some(l) = r.occupations.lumo {
            out!(
                "  LUMO = {:.6} Ha ({:.4} eV)  gap {:.4} eV",
                l,
                l * EV,
                (l - h) * EV
            );
        }
        outln!();
    }
    if s.model.nspin() == 2 {
        outln!(
            "total magnetization {:.4}  absolute {:.4} (Bohr mag/cell)",
            r.magnetization.0,
            r.magnetization.1
        );
    }
    outln!("eigenvalues (eV):");
    for (sp, es) in r.eigenvalues.iter().enumerate() {
        for (k, ek) in es.iter().enumerate() {
            let kp = &s.basis.kpoints[k];
            let spin = if s.model.nspin() == 2 {
                format!(" spin {}", sp + 1)
            } else {
                String::new()
            };
            outln!(
                "  k {:3} ({:7.4} {:7.4} {:7.4}){spin}:",
                k + 1,
                kp.frac[0],
                kp.frac[1],
                kp.frac[2]
            );
            let line: Vec<String> = ek.iter().map(|x| format!("{:9.4}", x * EV)).collect();
            for chunk in line.chunks(8) {
                outln!("    {}", chunk.join(" "));
            }
        }
    }
    let t = &r.timings;
    let hybrid = |label: &str, x: f64| {
        s.model
            .hybrid
            .map_or_else(String::new, |_| format!("{label}{x:.2}"))
    };
    outln!(
        "timings (s): setup {:.2}  eigensolver {:.2} (H local {:.2}, nonlocal {:.2}{}, subspace solves {:.2}, the rest dense algebra)  density {:.2}  potentials {:.2}  mixing {:.2}{}  total {:.2}",
        t.setup,
        t.eigensolver,
        t.h_local,
        t.h_nonlocal,
        hybrid(", exchange ", t.h_exchange),
        t.subspace,
        t.density,
        t.potentials,
        t.mixing,
        hybrid("  exchange ", t.exchange),
        t.total
    );
}

/// Forces per atom in Ha/bohr and eV/Å.
pub fn forces(s: &Setup, f: &Forces) {
    outln!("forces (Ha/bohr | eV/Å):");
    let to_ev_a = EV * BOHR_PER_ANGSTROM;
    for (i, (x, a)) in f.total.iter().zip(&s.model.crystal.atoms).enumerate() {
        outln!(
            "  {:4} {:<3} {:14.8} {:14.8} {:14.8} | {:12.6} {:12.6} {:12.6}",
            i + 1,
            s.model.species[a.species].symbol,
            x[0],
            x[1],
            x[2],
            x[0] * to_ev_a,
            x[1] * to_ev_a,
            x[2] * to_ev_a
        );
    }
    outln!(
        "  max |F| = {:.3e} Ha/bohr   ({})",
        f.max_norm(),
        term_seconds(&f.seconds)
    );
}

/// "computed in 0.42 s: set-up 0.10, local 0.02, nonlocal 0.29, ewald 0.01" (this rank).
fn term_seconds(per_term: &[(&'static str, f64)]) -> String {
    let total: f64 = per_term.iter().map(|(_, t)| t).sum();
    let parts: Vec<String> = (per_term.iter())
        .map(|(n, t)| format!("{n} {t:.2}"))
        .collect();
    format!("computed in {total:.2} s: {}", parts.join(", "))
}

/// The stress tensor in Ha/bohr^3 and GPa, with the pressure (QE sign).
pub fn stress(st: &Stress) {
    outln!("stress (Ha/bohr^3 | GPa; negative = the cell wants to shrink):");
    for row in &rounding_noise_as_zero(&st.total) {
        outln!(
            "  {:14.6e} {:14.6e} {:14.6e} | {:10.4} {:10.4} {:10.4}",
            row[0],
            row[1],
            row[2],
            row[0] * HA_PER_BOHR3_IN_GPA,
            row[1] * HA_PER_BOHR3_IN_GPA,
            row[2] * HA_PER_BOHR3_IN_GPA
        );
    }
    outln!(
        "  pressure = {:.6e} Ha/bohr^3 = {:.4} GPa   ({})",
        st.pressure(),
        st.pressure() * HA_PER_BOHR3_IN_GPA,
        term_seconds(&st.seconds)
    );
}

/// Components below `NOISE` of the largest, as 0 (QE prints the tensor in fixed point, where they
/// vanish too); the JSON keeps the exact values.
fn rounding_noise_as_zero(t: &[[f64; 3]; 3]) -> [[f64; 3]; 3] {
    /// Relative size below which a stress component is rounding noise.
    const NOISE: f64 = 1e-12;
    let largest = t.iter().flatten().fold(0.0f64, |m, x| m.max(x.abs()));
    t.map(|row| row.map(|x| if x.abs() < NOISE * largest { 0.0 } else { x }))
}

/// Header of the ionic-step table.
pub fn ionic_header() {
    outln!(
        "      {:>5} {:>20} {:>12} {:>12} {:>12} {:>6} {:>8}",
        "step",
        "enthalpy (Ha)",
        "max|F| Ha/b",
        "P (GPa)",
        "V (bohr^3)",
        "scf",
        "time(s)"
    );
}

/// One line per ionic step.
pub fn ionic_step(i: &StepInfo) {
    let p = i
        .pressure
        .map(|p| format!("{:.4}", p * HA_PER_BOHR3_IN_GPA))
        .unwrap_or_default();
    outln!(
        "relax {:>5} {:>20.10} {:>12.3e} {:>12} {:>12.4} {:>6} {:>8.2}{}",
        i.step,
        i.enthalpy,
        i.max_force,
        p,
        i.volume,
        i.scf_iterations,
        i.seconds,
        i.note
            .as_ref()
            .map(|n| format!("  ({n})"))
            .unwrap_or_default()
    );
}

/// What a restart took from its checkpoint.
pub fn restart(file: &Path, r: &planewave_core::checkpoint::Restart, seconds: f64) {
    let m = &r.meta;
    outln!(
        "restart from {} ({}): iteration {} of the run that wrote it ({}), E = {:.10} Ha, {} bands",
        file.display(),
        file_size_and_time(file, seconds),
        m.iteration,
        if m.converged {
            "converged"
        } else {
            "not converged"
        },
        m.energy_ha,
        m.nbands
    );
    for n in &r.notes {
        outln!("  note: {n}");
    }
}

/// "12.3 MiB in 0.05 s" (the size as the file system reports it).
pub fn file_size_and_time(file: &Path, seconds: f64) -> String {
    let mib = std::fs::metadata(file).map_or(0.0, |m| m.len() as f64 / 1048576.0);
    format!("{mib:.1} MiB in {seconds:.2} s")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stress_rounding_noise_prints_as_zero() {
        let t = [
            [-6.798474e-5, -2.541099e-21, 3.0e-17],
            [-2.541099e-21, -6.798474e-5, 1.0e-14],
            [3.0e-17, 1.0e-14, -6.798474e-5],
        ];
        let shown = rounding_noise_as_zero(&t);
        assert_eq!(shown[0], [-6.798474e-5, 0.0, 0.0]);
        // 1e-14 is 1.5e-10 of the largest: a value, not noise.
        assert_eq!(shown[1], [0.0, -6.798474e-5, 1.0e-14]);
        assert_eq!(rounding_noise_as_zero(&[[0.0; 3]; 3]), [[0.0; 3]; 3]);
    }
}
