//! Detection of a foreign parallel launcher (mpirun, mpiexec, srun).
//!
//! Contract: [`foreign_launcher_ranks`] looks at the environment variables that launchers set
//! in every process they start (OpenMPI `OMPI_COMM_WORLD_SIZE`, MPICH/Intel MPI/hydra
//! `PMI_SIZE`, PMIx `PMIX_SIZE`... , Slurm `SLURM_STEP_NUM_TASKS` for a task of an `srun` step)
//! and returns the launch only when it started more than one rank. A binary built without the
//! `mpi` feature uses it to refuse to run N independent copies of the same calculation.

/// A parallel launch found in the environment.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ForeignLaunch {
    /// Which launcher (by the variables it set): "OpenMPI", "PMI", "PMIx", "Slurm srun".
    pub launcher: &'static str,
    /// Number of ranks it started.
    pub ranks: usize,
    /// This process's rank, when the launcher says it.
    pub rank: Option<usize>,
}

impl std::fmt::Display for ForeignLaunch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "started by {} as {} ranks, but this binary was built without the `mpi` feature \
             (it would run {} independent copies); rebuild with `--features mpi` or run it \
             without the launcher",
            self.launcher, self.ranks, self.ranks
        )
    }
}

/// The launch of this process by mpirun/srun with more than one rank, if any.
pub fn foreign_launcher_ranks() -> Option<ForeignLaunch> {
    foreign_launcher_ranks_from(|name| std::env::var(name).ok())
}

/// [`foreign_launcher_ranks`] with an explicit environment lookup (for tests).
pub fn foreign_launcher_ranks_from(env: impl Fn(&str) -> Option<String>) -> Option<ForeignLaunch> {
    let num = |name: &str| env(name).and_then(|v| v.trim().parse::<usize>().ok());
    const CANDIDATES: [(&str, &str, &[&str]); 5] = [
        ("OpenMPI", "OMPI_COMM_WORLD_SIZE", &["OMPI_COMM_WORLD_RANK"]),
        ("PMI", "PMI_SIZE", &["PMI_RANK"]),
        ("PMIx", "PMIX_SIZE", &["PMIX_RANK"]),
        ("MPICH", "MPI_LOCALNRANKS", &["MPI_LOCALRANKID"]),
        ("Slurm srun", "SLURM_STEP_NUM_TASKS", &["SLURM_PROCID"]),
    ];
    for (launcher, size_var, rank_vars) in CANDIDATES {
        if let Some(ranks) = num(size_var) {
            if ranks > 1 {
                let rank = rank_vars.iter().find_map(|v| num(v));
                return Some(ForeignLaunch {
                    launcher,
                    ranks,
                    rank,
                });
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn env(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let m: HashMap<String, String> = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        move |k| m.get(k).cloned()
    }

    #[test]
    fn detects_openmpi_pmi_and_srun() {
        let l = foreign_launcher_ranks_from(env(&[
            ("OMPI_COMM_WORLD_SIZE", "4"),
            ("OMPI_COMM_WORLD_RANK", "2"),
        ]))
        .unwrap();
        assert_eq!((l.launcher, l.ranks, l.rank), ("OpenMPI", 4, Some(2)));
        let l = foreign_launcher_ranks_from(env(&[("PMI_SIZE", "8")])).unwrap();
        assert_eq!((l.launcher, l.ranks, l.rank), ("PMI", 8, None));
        let l = foreign_launcher_ranks_from(env(&[
            ("SLURM_STEP_NUM_TASKS", "16"),
            ("SLURM_PROCID", "0"),
        ]))
        .unwrap();
        assert_eq!(l.ranks, 16);
        assert!(l.to_string().contains("--features mpi"));
    }

    #[test]
    fn single_rank_or_batch_script_is_not_a_parallel_launch() {
        assert_eq!(foreign_launcher_ranks_from(env(&[])), None);
        assert_eq!(
            foreign_launcher_ranks_from(env(&[("OMPI_COMM_WORLD_SIZE", "1")])),
            None
        );
        // sbatch sets SLURM_NTASKS for the whole allocation, but the batch script is one task.
        assert_eq!(
            foreign_launcher_ranks_from(env(&[("SLURM_NTASKS", "64")])),
            None
        );
    }
}
