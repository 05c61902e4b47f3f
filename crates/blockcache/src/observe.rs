//! A transparent wrapper around the policy that tells the data path which blocks leave the
//! cache.
//!
//! The controller reports a clean victim only as `Io::evicted(false)`, without its block, and an
//! invalidation not at all; the data path must know both to free the block's slot. Every removal
//! goes through [`Policy::on_remove`] with the meta still readable, so the wrapper logs the block
//! there and delegates every call unchanged: the policy decides exactly as in the simulator.

use shingled_cache::{BlockTable, Policy, Slot};
use shingled_core::BlockNo;
use std::sync::{Arc, Mutex};

/// The blocks removed from the cache since the log was last drained, in removal order.
pub(crate) type RemovalLog = Arc<Mutex<Vec<BlockNo>>>;

/// `inner`, logging removals.
pub(crate) struct Observed {
    pub inner: Box<dyn Policy>,
    pub log: RemovalLog,
}

impl Policy for Observed {
    fn name(&self) -> &'static str {
        self.inner.name()
    }
    fn on_insert(&mut self, table: &BlockTable, slot: Slot) {
        self.inner.on_insert(table, slot)
    }
    fn on_hit(&mut self, table: &BlockTable, slot: Slot, became_dirty: bool) {
        self.inner.on_hit(table, slot, became_dirty)
    }
    fn select_victims(&mut self, table: &BlockTable, incoming: BlockNo, victims: &mut Vec<Slot>) {
        self.inner.select_victims(table, incoming, victims)
    }
    fn on_remove(&mut self, table: &BlockTable, slot: Slot) {
        self.log.lock().expect("removal log").push(table.meta(slot).block);
        self.inner.on_remove(table, slot)
    }
    fn on_clean(&mut self, table: &BlockTable, slot: Slot) {
        self.inner.on_clean(table, slot)
    }
    fn heap_bytes(&self) -> usize {
        self.inner.heap_bytes()
    }
}
