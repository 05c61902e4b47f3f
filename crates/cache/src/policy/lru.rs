//! Least Recently Used.

use crate::{BlockTable, Links, List, Policy, PolicyBuilder, PolicyContext, PolicyError, Slot};
use serde::{Deserialize, Serialize};

/// LRU has nothing to configure; clean and dirty blocks share one recency queue, as in both
/// papers' LRU baselines (PORE §V-C: "we only adopt a simple LRU queue to manage all the dirty
/// and clean blocks together"; the SAC artifact's `lru_private.c` likewise).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LruConfig {
    /// Victims taken from the LRU end per eviction (the SAC artifact evicts 64 at a time;
    /// default 1, the textbook policy). Bounds: 1..=4096.
    #[serde(default = "one")]
    pub batch: u32,
}

fn one() -> u32 {
    1
}

impl Default for LruConfig {
    fn default() -> Self {
        LruConfig { batch: 1 }
    }
}

impl PolicyBuilder for LruConfig {
    fn build(&self, ctx: &PolicyContext) -> Result<Box<dyn Policy>, PolicyError> {
        if !(1..=4096).contains(&self.batch) {
            return Err(PolicyError::Field {
                policy: "lru",
                field: "batch",
                value: self.batch.to_string(),
                reason: "must be between 1 and 4096".into(),
            });
        }
        Ok(Box::new(Lru::new(ctx.capacity_blocks, self.batch)))
    }
}

/// Least Recently Used: evicts the blocks whose latest access is oldest, ignoring where they
/// live on the drive. The baseline every SMR-aware policy is measured against; above a DM-SMR
/// drive its victims scatter over the whole LBA range, so its write amplification is close to or
/// above that of no cache at all (PORE Fig. 12c, SAC Fig. 3).
#[derive(Debug)]
pub struct Lru {
    links: Links,
    queue: List,
    batch: u32,
}

impl Lru {
    /// An LRU for `capacity` slots evicting `batch` blocks at a time.
    pub fn new(capacity: u32, batch: u32) -> Self {
        Lru { links: Links::with_capacity(capacity as usize), queue: List::default(), batch: batch.max(1) }
    }
}

impl Policy for Lru {
    fn name(&self) -> &'static str {
        "lru"
    }
    #[inline]
    fn on_insert(&mut self, _: &BlockTable, slot: Slot) {
        self.links.push_front(&mut self.queue, slot);
    }
    #[inline]
    fn on_hit(&mut self, _: &BlockTable, slot: Slot, _: bool) {
        self.links.move_to_front(&mut self.queue, slot);
    }
    #[inline]
    fn select_victims(&mut self, _: &BlockTable, _incoming: shingled_core::BlockNo, victims: &mut Vec<Slot>) {
        if self.batch == 1 {
            // The common case, without the iterator's reservation.
            victims.extend(self.queue.back());
        } else {
            victims.extend(self.links.iter_back(&self.queue).take(self.batch as usize));
        }
    }
    #[inline]
    fn single_victim(&mut self, _: &BlockTable, _incoming: shingled_core::BlockNo) -> Option<Slot> {
        if self.batch == 1 {
            self.queue.back()
        } else {
            None
        }
    }
    #[inline]
    fn replace_victim(&mut self, _: &BlockTable, slot: Slot) -> bool {
        // The back slot (the only victim `single_victim` names) to the front: its removal and
        // the new block's insertion at once.
        self.links.back_to_front(&mut self.queue, slot);
        true
    }
    #[inline]
    fn on_remove(&mut self, _: &BlockTable, slot: Slot) {
        self.links.remove(&mut self.queue, slot);
    }
    #[inline]
    fn peek_victims(&self, _: &BlockTable, ahead: &mut [Slot; 2]) -> usize {
        let Some(first) = self.queue.back() else { return 0 };
        ahead[0] = first;
        let Some(second) = self.links.prev(first) else { return 1 };
        ahead[1] = second;
        self.links.prefetch(second);
        2
    }
    #[inline]
    fn prefetch_slot(&self, slot: Slot) {
        self.links.prefetch(slot);
    }
    fn heap_bytes(&self) -> usize {
        self.links.heap_bytes()
    }
}
