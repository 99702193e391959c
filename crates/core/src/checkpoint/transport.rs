//! How a (spin, k) block's arrays travel between world rank 0 (which does the file I/O) and the
//! ranks that hold the block.
//!
//! Two strategies behind one type, chosen by the caller's [`Transfer`] (the CLI reads it from
//! `PLANEWAVE_CHECKPOINT_TRANSPORT`):
//! - `group` (default): only the owning k-point group and rank 0 take part. Writing gathers
//!   over the group to its leader (the group's rank 0), which sends the block to rank 0 in two
//!   messages; reading sends each piece from rank 0 to the leader, which broadcasts it in the
//!   group. Other k-point groups go on to their own blocks.
//! - `world`: every rank takes part in a gather to, or a broadcast from, rank 0 (ranks without
//!   the block send nothing and drop what they receive).
//!
//! Contract: every rank builds the same [`Route`] for a block, and every rank for which
//! [`Route::involved`] holds calls the same sequence of [`Route::gather`] / [`Route::deliver`]
//! (the others skip the block). Per-rank counts and data come back in the order of the
//! strategy's ranks (group ranks or world ranks), the same order for every call of a block.

use crate::parallel::Parallel;
use planewave_comm::{CommClass, CommExt, Communicator, Element};

/// Tag of the point-to-point messages between rank 0 and a group leader.
const TAG: u32 = 0x434b;

/// The strategies.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Transport {
    /// The owning k-point group and rank 0.
    Group,
    /// Every rank.
    World,
}

impl std::str::FromStr for Transport {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s.trim() {
            "group" => Ok(Transport::Group),
            "world" => Ok(Transport::World),
            other => Err(format!("'{other}': use 'group' or 'world'")),
        }
    }
}

/// How a checkpoint's arrays move: the strategy and the largest block of bands moved at once.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Transfer {
    /// The strategy.
    pub transport: Transport,
    /// Largest block of bands moved to or from the writer at once (bytes of coefficients).
    pub block_bytes: usize,
}

impl Default for Transfer {
    fn default() -> Self {
        Self {
            transport: Transport::Group,
            block_bytes: super::BLOCK_BYTES,
        }
    }
}

/// World rank of the leader (rank 0) of every k-point group. Collective on the world.
pub fn group_leaders(par: &Parallel) -> Vec<usize> {
    let world = par.world();
    let t = par.topology();
    let mut mine = vec![0u64; world.size()];
    if par.kgroup_comm().rank() == 0 {
        mine[world.rank()] = t.kpoint_group as u64 + 1;
    }
    world.allreduce_sum(&mut mine, CommClass::Other);
    let groups = t.layout.kpoint_groups;
    (0..groups)
        .map(|g| {
            mine.iter()
                .position(|&x| x == g as u64 + 1)
                .expect("every k-point group has a rank 0")
        })
        .collect()
}

/// The way of one (spin, k) block.
pub struct Route<'a> {
    world: &'a dyn Communicator,
    /// The owning group's communicator, when this rank is in it (Group only).
    group: Option<&'a dyn Communicator>,
    /// World rank of the owning group's leader.
    leader: usize,
    /// Ranks per k-point group.
    group_size: usize,
    kind: Transport,
}

impl<'a> Route<'a> {
    /// The route of block (s, k) (`leaders` from [`group_leaders`]).
    pub fn of_block(
        par: &'a Parallel,
        (s, k): (usize, usize),
        leaders: &[usize],
        kind: Transport,
    ) -> Self {
        let owner = par.owner(s, k);
        Self {
            world: par.world().as_ref(),
            group: par.owns(s, k).then(|| par.kgroup_comm().as_ref()),
            leader: leaders[owner],
            group_size: par.kgroup_comm().size(),
            kind,
        }
    }

    /// A route to every rank (for what every rank needs, such as the density).
    pub fn everyone(world: &'a dyn Communicator) -> Self {
        Self {
            world,
            group: None,
            leader: 0,
            group_size: world.size(),
            kind: Transport::World,
        }
    }

    /// Whether this rank takes part in moving the block.
    pub fn involved(&self) -> bool {
        self.kind == Transport::World || self.group.is_some() || self.world.rank() == 0
    }

    /// This rank's `send` gathered on world rank 0: (count of every rank of the strategy, the
    /// concatenation) there, None elsewhere.
    pub fn gather<T: Element>(&self, send: &[T]) -> Option<(Vec<usize>, Vec<T>)> {
        let class = CommClass::Other;
        let me = self.world.rank();
        let comm = match (self.kind, self.group) {
            (Transport::World, _) => self.world,
            (Transport::Group, Some(g)) => g,
            (Transport::Group, None) => return self.forwarded_by_leader(),
        };
        let counts = comm.allgather_counts(send.len(), class);
        let all = comm.gatherv(send, 0, class);
        let at_root = comm.rank() == 0;
        if self.kind == Transport::World || self.leader == 0 {
            return (at_root && me == 0).then_some((counts, all));
        }
        if at_root {
            // The leader forwards the group's block to rank 0.
            let c: Vec<u64> = counts.iter().map(|&c| c as u64).collect();
            self.world.send(&c, 0, TAG, class);
            self.world.send(&all, 0, TAG, class);
            return None;
        }
        self.forwarded_by_leader()
    }

    /// On rank 0 (when the leader is another rank): the block the leader forwards.
    fn forwarded_by_leader<T: Element>(&self) -> Option<(Vec<usize>, Vec<T>)> {
        if self.world.rank() != 0 || self.leader == 0 {
            return None;
        }
        let class = CommClass::Other;
        let c = self
            .world
            .recv::<u64>(self.group_size, self.leader, TAG, class);
        let counts: Vec<usize> = c.iter().map(|&x| x as usize).collect();
        let data = self
            .world
            .recv::<T>(counts.iter().sum(), self.leader, TAG, class);
        Some((counts, data))
    }

    /// Rank 0's `bytes` (`len` of them; rank 0's argument is used, the others' is a buffer) on
    /// every rank that needs them: Some there, None elsewhere.
    pub fn deliver(&self, mut bytes: Vec<u8>, len: usize) -> Option<Vec<u8>> {
        let class = CommClass::Other;
        let me = self.world.rank();
        bytes.resize(len, 0);
        if self.kind == Transport::World {
            self.world.broadcast(&mut bytes, 0, class);
            return Some(bytes);
        }
        if self.leader != 0 {
            if me == 0 {
                self.world.send(&bytes, self.leader, TAG, class);
            } else if me == self.leader {
                bytes = self.world.recv(len, 0, TAG, class);
            }
        }
        let g = self.group?;
        g.broadcast(&mut bytes, 0, class);
        Some(bytes)
    }
}
