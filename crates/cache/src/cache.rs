//! A cache = block table + policy, with the find / insert / evict / remove vocabulary.

use crate::{BlockMeta, BlockTable, Policy, Slot};
use shingled_core::BlockNo;

/// Caches from this many slots (64 MiB) up look ahead at their next victims
/// ([`Policy::peek_victims`]): their block table outgrows the CPU's second-level cache, so a
/// victim's meta and index entry are misses worth starting early (measured: −10% CPU for LRU at
/// 44,872 slots; docs/benchmarks.md). Smaller tables stay in the CPU's caches.
pub const LOOK_AHEAD_MIN_SLOTS: u32 = 1 << 14;

/// The metadata of an SSD cache of 4 KiB blocks under one replacement policy.
///
/// It decides hits and victims; it does not move data or model time. The replay engine (or a
/// real data path) does the I/O the outcomes call for: writing dirty victims back, filling
/// missed blocks.
pub struct Cache {
    table: BlockTable,
    policy: Box<dyn Policy>,
    victims: Vec<Slot>,
}

impl std::fmt::Debug for Cache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Cache")
            .field("policy", &self.policy.name())
            .field("len", &self.table.len())
            .field("capacity", &self.table.capacity())
            .finish()
    }
}

impl Cache {
    /// An empty cache of `capacity` blocks managed by `policy`.
    pub fn new(capacity: u32, policy: Box<dyn Policy>) -> Self {
        Cache { table: BlockTable::new(capacity), policy, victims: Vec::with_capacity(64) }
    }

    /// The block table (read-only).
    #[inline]
    pub fn table(&self) -> &BlockTable {
        &self.table
    }

    /// The policy's name.
    pub fn policy_name(&self) -> &'static str {
        self.policy.name()
    }

    /// Looks `block` up without touching anything.
    #[inline]
    pub fn peek(&self, block: BlockNo) -> Option<&BlockMeta> {
        self.table.slot_of(block).map(|s| self.table.meta(s))
    }

    /// Accesses `block`: on a hit updates its state (a write makes it dirty), tells the policy,
    /// and returns whether it was dirty before this access. `None` on a miss (nothing changes).
    #[inline]
    pub fn access(&mut self, block: BlockNo, write: bool) -> Option<bool> {
        let slot = self.table.slot_of(block)?;
        let was_dirty = self.table.meta(slot).dirty;
        let became_dirty = self.table.touch(slot, write);
        self.policy.on_hit(&self.table, slot, became_dirty);
        Some(was_dirty)
    }

    /// Inserts `block` (not cached) as clean or dirty, first evicting as the policy decides when
    /// the cache is full. Evicted blocks' final states are appended to `evicted`, in the order
    /// the policy chose them.
    ///
    /// # Panics
    /// If the policy returns no victim, or a free or repeated slot, for a full cache: that is a
    /// policy bug, not an input error.
    pub fn insert(&mut self, block: BlockNo, dirty: bool, evicted: &mut Vec<BlockMeta>) {
        debug_assert!(self.table.slot_of(block).is_none(), "block {block} already cached");
        if self.table.is_full() {
            self.evict(block, evicted);
        }
        let slot = self.table.insert(block, dirty);
        self.policy.on_insert(&self.table, slot);
    }

    /// Asks the policy for victims and removes them.
    fn evict(&mut self, incoming: BlockNo, evicted: &mut Vec<BlockMeta>) {
        self.victims.clear();
        self.policy.select_victims(&self.table, incoming, &mut self.victims);
        assert!(!self.victims.is_empty(), "policy {} chose no victim for a full cache", self.policy.name());
        let look_ahead = self.table.capacity() >= LOOK_AHEAD_MIN_SLOTS;
        if look_ahead && self.victims.len() > 1 {
            // A batch (SAC, MOST, …): fetch every victim's meta, then touch their index entries,
            // so that the misses of the batch overlap instead of coming one removal at a time.
            for &s in &self.victims {
                self.table.prefetch_meta(s);
            }
            for &s in &self.victims {
                if self.table.is_used(s) {
                    self.table.warm_remove(s);
                }
            }
        }
        for i in 0..self.victims.len() {
            let s = self.victims[i];
            if !self.table.is_used(s) {
                self.bad_victim(s);
            }
            self.policy.on_remove(&self.table, s);
            evicted.push(self.table.remove(s));
        }
        if look_ahead {
            // The next victim's index entry is touched now and the one after's meta is
            // prefetched, so that the coldest blocks' cache misses overlap with the requests
            // served until then instead of stalling the next eviction.
            let mut ahead = [0; 2];
            let n = self.policy.peek_victims(&self.table, &mut ahead);
            if n >= 2 {
                self.table.prefetch_meta(ahead[1]);
            }
            if n >= 1 {
                self.table.warm_remove(ahead[0]);
            }
        }
    }

    #[cold]
    #[inline(never)]
    fn bad_victim(&self, s: Slot) -> ! {
        panic!("policy {} chose free or repeated slot {s}", self.policy.name())
    }

    /// Removes `block` if cached (e.g. a write that bypasses the cache), returning its state.
    pub fn invalidate(&mut self, block: BlockNo) -> Option<BlockMeta> {
        let slot = self.table.slot_of(block)?;
        self.policy.on_remove(&self.table, slot);
        Some(self.table.remove(slot))
    }

    /// Marks a cached block clean after the caller wrote it to the drive without evicting it.
    /// The policy is told ([`Policy::on_clean`]) and sees it through the meta afterwards.
    pub fn mark_clean(&mut self, block: BlockNo) {
        if let Some(slot) = self.table.slot_of(block) {
            if self.table.meta(slot).dirty {
                self.policy.on_clean(&self.table, slot);
            }
            self.table.mark_clean(slot);
        }
    }

    /// Approximate heap bytes of the table and the policy structures.
    pub fn heap_bytes(&self) -> usize {
        BlockTable::heap_bytes_for(self.table.capacity()) + self.policy.heap_bytes()
    }
}
