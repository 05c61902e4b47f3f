//! Belady's MIN: the offline optimum for hits.

use crate::{BlockTable, Foresight, Policy, PolicyBuilder, PolicyContext, PolicyError, Slot};
use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;

/// Belady's MIN has nothing to configure. It is offline: the simulator gives it every block's
/// next use from a pass over the whole trace before the replay.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BeladyConfig {}

impl PolicyBuilder for BeladyConfig {
    fn build(&self, ctx: &PolicyContext) -> Result<Box<dyn Policy>, PolicyError> {
        Ok(Box::new(Belady::new(ctx.capacity_blocks)))
    }
    fn needs_future(&self) -> bool {
        true
    }
}

/// Belady's MIN (Belady 1966; Mattson et al. 1970 proved it optimal): when room is needed,
/// evict the cached block whose next use lies farthest in the future. Among caches that must
/// take in every block they are asked to (as every policy here does: write-allocate, and
/// read-allocate where the mode caches reads), no choice of victims gives more hits on the same
/// accesses; it is the bound a report's hit ratios are measured against. It ignores the drive:
/// its write-backs are wherever the future puts them, so its RMWs are no bound.
///
/// Blocks never used again tie; the clean ones go first (no write-back), then the highest slot.
#[derive(Debug)]
pub struct Belady {
    /// Per slot: its key in `order`.
    key: Vec<(u64, bool)>,
    /// `(next use, clean, slot)` of every cached block; the last is the victim.
    order: BTreeSet<(u64, bool, Slot)>,
    current: Foresight,
}

impl Belady {
    /// A MIN cache of `capacity` slots.
    pub fn new(capacity: u32) -> Self {
        Belady {
            key: vec![(0, false); capacity as usize],
            order: BTreeSet::new(),
            current: Foresight::default(),
        }
    }

    /// The next use of the block in `slot` as [`Policy::foresee`] told it: the block being
    /// accessed now. A block the replay did not tell of (no foresight given) counts as never
    /// used again.
    fn next_use(&self, t: &BlockTable, slot: Slot) -> u64 {
        if t.meta(slot).block == self.current.block {
            self.current.next_use
        } else {
            Foresight::NEVER
        }
    }

    fn place(&mut self, slot: Slot, key: (u64, bool)) {
        self.order.remove(&(self.key[slot as usize].0, self.key[slot as usize].1, slot));
        self.key[slot as usize] = key;
        self.order.insert((key.0, key.1, slot));
    }
}

impl Policy for Belady {
    fn name(&self) -> &'static str {
        "belady"
    }
    fn on_insert(&mut self, t: &BlockTable, slot: Slot) {
        let key = (self.next_use(t, slot), !t.meta(slot).dirty);
        self.key[slot as usize] = key;
        self.order.insert((key.0, key.1, slot));
    }
    fn on_hit(&mut self, t: &BlockTable, slot: Slot, _: bool) {
        let key = (self.next_use(t, slot), !t.meta(slot).dirty);
        self.place(slot, key);
    }
    fn select_victims(&mut self, _: &BlockTable, _incoming: shingled_core::BlockNo, victims: &mut Vec<Slot>) {
        victims.extend(self.order.last().map(|&(_, _, s)| s));
    }
    fn on_remove(&mut self, _: &BlockTable, slot: Slot) {
        let (next, clean) = self.key[slot as usize];
        self.order.remove(&(next, clean, slot));
    }
    fn on_clean(&mut self, _: &BlockTable, slot: Slot) {
        let next = self.key[slot as usize].0;
        self.place(slot, (next, true));
    }
    fn foresee(&mut self, f: &Foresight) {
        self.current = *f;
    }
    fn heap_bytes(&self) -> usize {
        // A B-tree entry is about its key plus a share of node overhead; two words is a fair
        // figure for the memory-per-block report.
        self.key.capacity() * std::mem::size_of::<(u64, bool)>() + self.order.len() * 32
    }
}
