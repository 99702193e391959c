//! `planewave bench qe`: this planewave against Quantum ESPRESSO's `pw.x` on one pw.x input,
//! runs alternated, on the same cores; prints every run and the median time and peak-memory
//! ratios.
//!
//! Contract: both programs run in the input's folder (so its `pseudo_dir` resolves the same),
//! QE as `ranks` MPI processes of one thread (`mpirun` when more than one), planewave as
//! `ranks` MPI processes (its MPI build; one process otherwise) of `threads` rayon threads.
//! Wall time is measured around each command; peak memory is the largest process's maximum
//! resident set (`wait4`'s `ru_maxrss`, which for `mpirun` covers the ranks it waited for).
//! Without `pw.x` on the PATH planewave is timed alone. A failed run stops the benchmark with
//! its exit status and the end of its output.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

/// What `bench qe` runs.
pub struct QeBench {
    /// The pw.x input.
    pub input: PathBuf,
    /// Alternated runs of each program.
    pub runs: usize,
    /// MPI ranks of each program.
    pub ranks: usize,
    /// rayon threads per planewave rank.
    pub threads: usize,
    /// Extra pw.x arguments (e.g. `-nk 2`).
    pub qe_args: Vec<String>,
    /// Extra `planewave run` arguments.
    pub pw_args: Vec<String>,
}

/// One timed run: wall seconds and the largest process's peak RSS (MiB, None where unknown).
struct Timed {
    seconds: f64,
    peak_mib: Option<f64>,
}

/// Run the benchmark and return its report.
pub fn run(b: &QeBench) -> Result<String, String> {
    let dir = b
        .input
        .parent()
        .map(Path::to_path_buf)
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or_else(|| PathBuf::from("."));
    let name = b
        .input
        .file_name()
        .ok_or_else(|| format!("error: {}: not a file", b.input.display()))?;
    if !b.input.is_file() {
        return Err(format!("error: {}: no such input file", b.input.display()));
    }
    let json = std::env::temp_dir().join(format!("planewave-bench-qe-{}.json", std::process::id()));
    let me = std::env::current_exe().map_err(|e| format!("error: this program's path: {e}"))?;
    let mut ours: Vec<String> = vec![me.display().to_string(), "run".into()];
    ours.push(name.to_string_lossy().into_owned());
    ours.extend(["-q".into(), "--json".into(), json.display().to_string()]);
    ours.extend(b.pw_args.iter().cloned());
    let qe = find_on_path("pw.x").map(|pw| {
        let mut c = vec![pw.display().to_string()];
        c.extend(b.qe_args.iter().cloned());
        c.extend(["-in".into(), name.to_string_lossy().into_owned()]);
        c
    });
    let mut out = String::new();
    if qe.is_none() {
        out.push_str("pw.x is not on the PATH: timing planewave alone\n");
    }
    let (mut ratios, mut mem_ratios, mut times) = (Vec::new(), Vec::new(), Vec::new());
    for i in 1..=b.runs {
        let q = match &qe {
            Some(cmd) => Some(timed(&launch(cmd, b.ranks), &dir, &qe_env())?),
            None => None,
        };
        let threads = b.threads.to_string();
        let p = timed(
            &launch(&ours, b.ranks),
            &dir,
            &[("RAYON_NUM_THREADS", threads.as_str())],
        )?;
        let it = iterations(&json);
        times.push(p.seconds);
        let mut line = format!(
            "run {i}: planewave {:.2} s ({}, {it} SCF iterations)",
            p.seconds,
            mib(p.peak_mib)
        );
        if let Some(q) = q {
            let r = p.seconds / q.seconds;
            ratios.push(r);
            if let (Some(pm), Some(qm)) = (p.peak_mib, q.peak_mib) {
                mem_ratios.push(pm / qm);
            }
            line = format!(
                "run {i}: QE {:.2} s ({}), planewave {:.2} s ({}, {it} SCF iterations), ratio {r:.3}",
                q.seconds,
                mib(q.peak_mib),
                p.seconds,
                mib(p.peak_mib)
            );
        }
        out.push_str(&line);
        out.push('\n');
    }
    let _ = std::fs::remove_file(&json);
    let layout = format!("{} rank(s) x {} thread(s)", b.ranks, b.threads);
    if ratios.is_empty() {
        out.push_str(&format!(
            "{}: planewave {layout}: median {:.2} s\n",
            b.input.display(),
            median(&mut times)
        ));
    } else {
        out.push_str(&format!(
            "{}: QE {} rank(s) {} vs planewave {layout} {}: median time ratio planewave/QE = {:.3}, peak RSS per process ratio = {}\n",
            b.input.display(),
            b.ranks,
            b.qe_args.join(" "),
            b.pw_args.join(" "),
            median(&mut ratios),
            if mem_ratios.is_empty() {
                "unknown".to_string()
            } else {
                format!("{:.2}", median(&mut mem_ratios))
            }
        ));
    }
    Ok(out)
}

/// `cmd` as `ranks` MPI processes (`mpirun` when more than one).
fn launch(cmd: &[String], ranks: usize) -> Vec<String> {
    if ranks <= 1 {
        return cmd.to_vec();
    }
    let mut full: Vec<String> = ["mpirun", "--oversubscribe", "--bind-to", "none", "-np"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    full.push(ranks.to_string());
    full.extend(cmd.iter().cloned());
    full
}

/// QE's environment: one OpenMP thread, and OpenBLAS's kernels for this CPU (Debian's
/// OpenBLAS may otherwise pick slow generic ones) unless the user chose.
fn qe_env() -> Vec<(&'static str, &'static str)> {
    let mut env = vec![("OMP_NUM_THREADS", "1")];
    if std::env::var_os("OPENBLAS_CORETYPE").is_none() {
        let flags = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
        let core = if flags.contains(" avx512f") {
            "SkylakeX"
        } else {
            "Haswell"
        };
        env.push(("OPENBLAS_CORETYPE", core));
    }
    env
}

/// Run `cmd` in `dir` with `env` added; its wall time and peak RSS, or the failure.
fn timed(cmd: &[String], dir: &Path, env: &[(&str, &str)]) -> Result<Timed, String> {
    let mut c = Command::new(&cmd[0]);
    c.args(&cmd[1..])
        .current_dir(dir)
        .envs(env.iter().copied())
        .env("OMPI_ALLOW_RUN_AS_ROOT", "1")
        .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    let start = Instant::now();
    let child = c
        .spawn()
        .map_err(|e| format!("error: cannot start {}: {e}", cmd[0]))?;
    let (status, output, peak_mib) = wait_with_peak(child)?;
    let seconds = start.elapsed().as_secs_f64();
    if !status.success() {
        let tail: String = output
            .lines()
            .rev()
            .take(10)
            .collect::<Vec<_>>()
            .into_iter()
            .rev()
            .collect::<Vec<_>>()
            .join("\n");
        return Err(format!(
            "error: `{}` failed ({status}) in {}:\n{tail}",
            cmd.join(" "),
            dir.display()
        ));
    }
    Ok(Timed { seconds, peak_mib })
}

/// Wait for `child`, keeping its output; its exit status, output and peak RSS (MiB).
fn wait_with_peak(
    mut child: std::process::Child,
) -> Result<(std::process::ExitStatus, String, Option<f64>), String> {
    use std::io::Read;
    // Read both pipes on threads so that a chatty child never blocks on a full pipe.
    let mut pipes = [
        child
            .stdout
            .take()
            .map(|p| Box::new(p) as Box<dyn Read + Send>),
        child
            .stderr
            .take()
            .map(|p| Box::new(p) as Box<dyn Read + Send>),
    ];
    let readers: Vec<_> = pipes
        .iter_mut()
        .filter_map(Option::take)
        .map(|mut p| {
            std::thread::spawn(move || {
                let mut s = String::new();
                let _ = p.read_to_string(&mut s);
                s
            })
        })
        .collect();
    let (status, peak) = reap(child)?;
    let output = readers
        .into_iter()
        .map(|r| r.join().unwrap_or_default())
        .collect::<Vec<_>>()
        .join("\n");
    Ok((status, output, peak))
}

/// Wait for `child` and read its peak RSS from `wait4` (Linux, glibc).
#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn reap(child: std::process::Child) -> Result<(std::process::ExitStatus, Option<f64>), String> {
    use std::os::unix::process::ExitStatusExt;
    let pid = child.id() as libc::pid_t;
    let mut status: libc::c_int = 0;
    // SAFETY: `rusage` is plain old data, valid when zeroed.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: `pid` is our own unreaped child (std::process::Child never waits unless asked,
    // and we own `child`, so nothing else reaps it); `status` and `usage` are live, writable
    // locals of the types wait4 expects. After this call the pid is reaped, so `child` is
    // dropped without waiting (dropping a Child never waits or kills).
    let r = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
    drop(child);
    if r != pid {
        return Err(format!(
            "error: waiting for process {pid}: {}",
            std::io::Error::last_os_error()
        ));
    }
    // ru_maxrss is in KiB on Linux.
    Ok((
        std::process::ExitStatus::from_raw(status),
        Some(usage.ru_maxrss as f64 / 1024.0),
    ))
}

/// Wait for `child` (no peak RSS on this platform).
#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
fn reap(mut child: std::process::Child) -> Result<(std::process::ExitStatus, Option<f64>), String> {
    let status = child
        .wait()
        .map_err(|e| format!("error: waiting for a run: {e}"))?;
    Ok((status, None))
}

/// The first `name` on the PATH.
fn find_on_path(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join(name))
        .find(|p| p.is_file())
}

/// SCF iterations from planewave's results JSON ("?" when unreadable).
fn iterations(json: &Path) -> String {
    std::fs::read_to_string(json)
        .ok()
        .and_then(|t| serde_json::from_str::<serde_json::Value>(&t).ok())
        .and_then(|v| v["scf_iterations"].as_u64())
        .map_or_else(|| "?".to_string(), |n| n.to_string())
}

fn mib(m: Option<f64>) -> String {
    m.map_or_else(|| "peak RSS unknown".to_string(), |m| format!("{m:.0} MiB"))
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        0.5 * (v[n / 2 - 1] + v[n / 2])
    }
}
