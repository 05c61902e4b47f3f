//! A transparent wrapper around the policy that tells the data path which blocks leave the
//! cache, and in which of the policy's slots the block being accessed sits.
//!
//! The controller reports a clean victim only as `Io::evicted(false)`, without its block, and an
//! invalidation not at all; the data path must know both to free the block's slot. Every removal
//! goes through [`Policy::on_remove`] with the meta still readable, so the wrapper logs the block
//! and its policy slot there. Every access goes through [`Policy::on_hit`] or
//! [`Policy::on_insert`], so the wrapper notes the accessed block's policy slot: the data path
//! maps policy slots to physical slots with a dense array instead of a second block index.
//! Every call is delegated unchanged: the policy decides exactly as in the simulator.

use shingled_cache::{BlockTable, Policy, Slot};
use shingled_core::BlockNo;
use std::sync::{Arc, Mutex};

/// What the wrapper saw since the data path last looked.
#[derive(Debug, Default)]
pub(crate) struct Seen {
    /// Blocks removed from the cache and the policy slots they had, in removal order.
    pub removed: Vec<(BlockNo, Slot)>,
    /// The block last hit or inserted, and its policy slot.
    pub current: Option<(BlockNo, Slot)>,
}

/// Shared between the wrapper (inside the controller) and the data path.
pub(crate) type RemovalLog = Arc<Mutex<Seen>>;

/// `inner`, logging removals and accesses.
pub(crate) struct Observed {
    pub inner: Box<dyn Policy>,
    pub log: RemovalLog,
}

impl Policy for Observed {
    fn name(&self) -> &'static str {
        self.inner.name()
    }
    fn on_insert(&mut self, table: &BlockTable, slot: Slot) {
        self.log.lock().expect("removal log").current = Some((table.meta(slot).block, slot));
        self.inner.on_insert(table, slot)
    }
    fn on_hit(&mut self, table: &BlockTable, slot: Slot, became_dirty: bool) {
        self.log.lock().expect("removal log").current = Some((table.meta(slot).block, slot));
        self.inner.on_hit(table, slot, became_dirty)
    }
    fn select_victims(&mut self, table: &BlockTable, incoming: BlockNo, victims: &mut Vec<Slot>) {
        self.inner.select_victims(table, incoming, victims)
    }
    fn on_remove(&mut self, table: &BlockTable, slot: Slot) {
        self.log.lock().expect("removal log").removed.push((table.meta(slot).block, slot));
        self.inner.on_remove(table, slot)
    }
    fn on_clean(&mut self, table: &BlockTable, slot: Slot) {
        self.inner.on_clean(table, slot)
    }
    fn peek_victims(&self, table: &BlockTable, ahead: &mut [Slot; 2]) -> usize {
        self.inner.peek_victims(table, ahead)
    }
    fn heap_bytes(&self) -> usize {
        self.inner.heap_bytes()
    }
}
