//! `Solo`: the single-process communicator (one rank; every collective is the identity).

use crate::communicator::{CommClass, Communicator};
use num_complex::Complex64;

/// A communicator with exactly one rank.
#[derive(Clone, Copy, Debug, Default)]
pub struct Solo;

impl Communicator for Solo {
    fn rank(&self) -> usize {
        0
    }
    fn size(&self) -> usize {
        1
    }
    fn barrier(&self, _class: CommClass) {}
    fn allreduce_sum_f64(&self, _data: &mut [f64], _class: CommClass) {}
    fn allreduce_sum_c64(&self, _data: &mut [Complex64], _class: CommClass) {}
    fn allreduce_max_f64(&self, _data: &mut [f64], _class: CommClass) {}
    fn broadcast_f64(&self, _data: &mut [f64], root: usize, _class: CommClass) {
        debug_assert_eq!(root, 0, "Solo has only rank 0");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn solo_is_one_rank_and_reductions_keep_data() {
        let c = Solo;
        assert_eq!((c.rank(), c.size()), (0, 1));
        assert!(c.is_root());
        let mut x = [1.5, -2.0];
        c.allreduce_sum_f64(&mut x, CommClass::GVector);
        assert_eq!(x, [1.5, -2.0]);
    }
}
