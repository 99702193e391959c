//! Sum-allreduce strategies for large buffers (the density summed over k-point groups).
//!
//! Contract: [`allreduce_sum`] leaves on every rank the element-wise sum over the group, with
//! the same bits on every rank, whatever the algorithm:
//! - [`SumAlgorithm::Allreduce`]: the back end's allreduce (one collective);
//! - [`SumAlgorithm::ReduceScatterAllgather`]: a reduce-scatter of equal shares followed by an
//!   all-gather (Rabenseifner's split; each rank reduces only its share, which pays on long
//!   messages and many ranks).
//!
//! The algorithm is chosen like the all-to-all-v strategies: by the caller (the CLI takes it
//! from the input or `PLANEWAVE_KPOINT_SUM`), or by [`autotune`], which times both on the real message size and
//! lets rank 0 decide for everyone. The two differ only in rounding (1 ulp per element at most).

use crate::communicator::{CommClass, Communicator};
use crate::element::{Element, ReduceOp};
use crate::ext::CommExt;
use std::fmt;
use std::str::FromStr;
use std::time::Instant;

/// How to sum a buffer over a group.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum SumAlgorithm {
    /// One native allreduce.
    #[default]
    Allreduce,
    /// Reduce-scatter of equal shares, then all-gather.
    ReduceScatterAllgather,
}

/// What the input or environment asks for: one algorithm, or the autotuner.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SumChoice {
    /// This algorithm.
    Fixed(SumAlgorithm),
    /// Time both on the real size and keep the faster.
    Auto,
}

impl SumAlgorithm {
    /// Both algorithms.
    pub const ALL: [SumAlgorithm; 2] = [
        SumAlgorithm::Allreduce,
        SumAlgorithm::ReduceScatterAllgather,
    ];
    /// Name as written in inputs and reports.
    pub fn name(self) -> &'static str {
        match self {
            SumAlgorithm::Allreduce => "allreduce",
            SumAlgorithm::ReduceScatterAllgather => "reduce_scatter",
        }
    }
}

impl fmt::Display for SumAlgorithm {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for SumChoice {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        let t = s.trim().to_ascii_lowercase();
        if t == "auto" {
            return Ok(SumChoice::Auto);
        }
        SumAlgorithm::ALL
            .into_iter()
            .find(|a| a.name() == t)
            .map(SumChoice::Fixed)
            .ok_or_else(|| {
                format!("unknown k-point sum strategy '{s}' (allreduce, reduce_scatter, auto)")
            })
    }
}

/// The choice of `config`, else the native allreduce.
pub fn sum_choice(config: Option<&str>) -> Result<SumChoice, String> {
    match config {
        Some(s) => s.parse(),
        None => Ok(SumChoice::Fixed(SumAlgorithm::Allreduce)),
    }
}

/// Sum `data` element-wise over `comm`; every rank gets the same bits.
pub fn allreduce_sum<T: Element>(
    comm: &dyn Communicator,
    algorithm: SumAlgorithm,
    data: &mut [T],
    class: CommClass,
) {
    let n = comm.size();
    if n == 1 {
        return;
    }
    match algorithm {
        SumAlgorithm::Allreduce => comm.allreduce(data, ReduceOp::Sum, class),
        SumAlgorithm::ReduceScatterAllgather => {
            let len = data.len();
            let counts: Vec<usize> = (0..n).map(|r| len / n + usize::from(r < len % n)).collect();
            let mine = comm.reduce_scatter(data, &counts, ReduceOp::Sum, class);
            let mut all = vec![T::default(); len];
            comm.allgatherv_raw(T::slice(&mine), T::slice_mut(&mut all), &counts, class);
            data.copy_from_slice(&all);
        }
    }
}

/// Time both algorithms on `len` doubles (three rounds each, best of) and return the faster,
/// as decided by rank 0 (collective; every rank gets the same answer).
pub fn autotune(comm: &dyn Communicator, len: usize, class: CommClass) -> SumAlgorithm {
    if comm.size() == 1 {
        return SumAlgorithm::Allreduce;
    }
    let mut buf = vec![1.0f64; len];
    let mut best = [f64::INFINITY; 2];
    for _ in 0..3 {
        for (i, a) in SumAlgorithm::ALL.into_iter().enumerate() {
            comm.barrier(class);
            let t = Instant::now();
            allreduce_sum(comm, a, &mut buf, class);
            best[i] = best[i].min(t.elapsed().as_secs_f64());
        }
    }
    let mut pick = [u64::from(best[1] < best[0])];
    comm.broadcast(&mut pick, 0, class);
    SumAlgorithm::ALL[pick[0] as usize]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Threads;

    #[test]
    fn both_algorithms_sum_to_the_same_bits_on_every_rank() {
        for n in 1..=5 {
            let out = Threads::run(n, |c| {
                let base: Vec<f64> = (0..37)
                    .map(|i| (i as f64 + 1.0) * 0.1 + c.rank() as f64)
                    .collect();
                SumAlgorithm::ALL.map(|a| {
                    let mut v = base.clone();
                    allreduce_sum(&c, a, &mut v, CommClass::Kpoint);
                    v
                })
            });
            for r in &out {
                assert_eq!(r, &out[0], "ranks disagree on {n} ranks");
            }
            let expect: Vec<f64> = (0..37)
                .map(|i| (0..n).map(|r| (i as f64 + 1.0) * 0.1 + r as f64).sum())
                .collect();
            for v in &out[0] {
                for (a, b) in v.iter().zip(&expect) {
                    assert!((a - b).abs() < 1e-12, "{a} vs {b}");
                }
            }
        }
    }

    #[test]
    fn choices_parse_and_autotune_agrees() {
        assert_eq!(
            "reduce_scatter".parse::<SumChoice>(),
            Ok(SumChoice::Fixed(SumAlgorithm::ReduceScatterAllgather))
        );
        assert_eq!("AUTO".parse::<SumChoice>(), Ok(SumChoice::Auto));
        assert!("ring".parse::<SumChoice>().is_err());
        let picks = Threads::run(3, |c| autotune(&c, 1000, CommClass::Kpoint));
        assert!(picks.iter().all(|p| *p == picks[0]));
    }
}
