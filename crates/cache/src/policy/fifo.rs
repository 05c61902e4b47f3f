//! First In, First Out.

use crate::{BlockTable, Links, List, Policy, PolicyBuilder, PolicyContext, PolicyError, Slot};
use serde::{Deserialize, Serialize};
use shingled_core::BlockNo;

/// FIFO has nothing to configure: one queue in insertion order, clean and dirty blocks together.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FifoConfig {}

impl PolicyBuilder for FifoConfig {
    fn build(&self, ctx: &PolicyContext) -> Result<Box<dyn Policy>, PolicyError> {
        Ok(Box::new(Fifo::new(ctx.capacity_blocks)))
    }
}

/// First In, First Out: evicts the block that entered the cache earliest; hits change nothing.
///
/// The oldest replacement policy and the floor every other one should beat; also what a cache
/// that writes its blocks as a log and reclaims it in order does (CacheLib's region FIFO, a
/// circular SSD log). Its victims follow insertion order, so above a DM-SMR drive they scatter
/// over the LBA range just as LRU's do. Do not use it when hits should protect a block (any
/// workload with a hot set that outlives one pass through the cache): use LRU, ARC or S3-FIFO.
#[derive(Debug)]
pub struct Fifo {
    links: Links,
    queue: List,
}

impl Fifo {
    /// A FIFO for `capacity` slots.
    pub fn new(capacity: u32) -> Self {
        Fifo { links: Links::with_capacity(capacity as usize), queue: List::default() }
    }
}

impl Policy for Fifo {
    fn name(&self) -> &'static str {
        "fifo"
    }
    #[inline]
    fn on_insert(&mut self, _: &BlockTable, slot: Slot) {
        self.links.push_front(&mut self.queue, slot);
    }
    #[inline]
    fn on_hit(&mut self, _: &BlockTable, _: Slot, _: bool) {}
    #[inline]
    fn select_victims(&mut self, _: &BlockTable, _incoming: BlockNo, victims: &mut Vec<Slot>) {
        victims.extend(self.queue.back());
    }
    #[inline]
    fn on_remove(&mut self, _: &BlockTable, slot: Slot) {
        self.links.remove(&mut self.queue, slot);
    }
    fn heap_bytes(&self) -> usize {
        self.links.heap_bytes()
    }
}
