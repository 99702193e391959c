//! The position of a Miller index in a list of them, looked up in a dense box.
//!
//! Contract: [`MillerLookup::get`] gives the position in the list of any index it holds and
//! None for any other (outside the list's bounding box included). The box spans the list's
//! extent along each axis, which for a sphere of G-vectors is at most the FFT grid: one `u32`
//! per grid point, built in one pass, where a hash map of the same keys cost set-up a few
//! percent of a run (water's density sphere).

/// Positions of a list of Miller indices, by index.
#[derive(Clone, Debug, Default)]
pub(crate) struct MillerLookup {
    /// The smallest index along each axis.
    lo: [i32; 3],
    /// The box's extent along each axis.
    dims: [usize; 3],
    /// Position + 1 at each point of the box, 0 where no index of the list lies.
    slots: Vec<u32>,
}

impl MillerLookup {
    /// The lookup of `millers` (distinct indices, fewer than 2^32 - 1).
    pub(crate) fn new(millers: &[[i32; 3]]) -> Self {
        let Some(first) = millers.first() else {
            return Self::default();
        };
        let (mut lo, mut hi) = (*first, *first);
        for m in millers {
            for a in 0..3 {
                lo[a] = lo[a].min(m[a]);
                hi[a] = hi[a].max(m[a]);
            }
        }
        let dims = [0, 1, 2].map(|a| (hi[a] - lo[a] + 1) as usize);
        let mut slots = vec![0u32; dims.iter().product()];
        let mut lookup = Self {
            lo,
            dims,
            slots: Vec::new(),
        };
        for (i, m) in millers.iter().enumerate() {
            let at = lookup.slot(m).expect("inside its own box");
            slots[at] = u32::try_from(i + 1).expect("fewer than 2^32 - 1 Miller indices");
        }
        lookup.slots = slots;
        lookup
    }

    /// Where `m` lies in the box, if it does.
    fn slot(&self, m: &[i32; 3]) -> Option<usize> {
        let mut at = 0;
        for ((&m, &lo), &n) in m.iter().zip(&self.lo).zip(&self.dims) {
            let d = usize::try_from(m - lo).ok().filter(|&d| d < n)?;
            at = at * n + d;
        }
        Some(at)
    }

    /// The position of `m` in the list, if it is there.
    pub(crate) fn get(&self, m: &[i32; 3]) -> Option<usize> {
        let s = *self.slots.get(self.slot(m)?)?;
        (s > 0).then(|| s as usize - 1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_every_index_and_nothing_else() {
        let millers: Vec<[i32; 3]> = (-3..=3)
            .flat_map(|a| (-2..=4).flat_map(move |b| (-1..=1).map(move |c| [a, b, c])))
            .filter(|m| (m[0] + 2 * m[1] - m[2]) % 3 != 0)
            .collect();
        let lookup = MillerLookup::new(&millers);
        for (i, m) in millers.iter().enumerate() {
            assert_eq!(lookup.get(m), Some(i));
        }
        for a in -5..=5 {
            for b in -5..=6 {
                for c in -3..=3 {
                    let m = [a, b, c];
                    assert_eq!(lookup.get(&m), millers.iter().position(|x| *x == m));
                }
            }
        }
        assert_eq!(MillerLookup::new(&[]).get(&[0, 0, 0]), None);
    }
}
