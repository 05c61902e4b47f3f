//! The cache's block table: which 4 KiB blocks are cached, in which slot, and their state.

use crate::{BlockIndex, Slot};
use shingled_core::BlockNo;

/// The block number a free slot's meta holds (no trace reaches it: block numbers are byte
/// offsets / 4096), so that whether a slot is used is read from the meta a policy touches anyway.
pub(crate) const FREE: BlockNo = BlockNo::MAX;

/// Caches from this many slots (64 MiB) up look ahead at their next victims
/// ([`crate::Policy::peek_victims`]): their block table outgrows the CPU's second-level cache, so a
/// victim's meta and index entry are misses worth starting early (measured: −10% CPU for LRU at
/// 44,872 slots; docs/benchmarks.md). Smaller tables stay in the CPU's caches.
pub const LOOK_AHEAD_MIN_SLOTS: u32 = 1 << 14;

/// Per-slot state every policy may read.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct BlockMeta {
    /// The cached block.
    pub block: BlockNo,
    /// Logical time (the table's access counter) of the latest access.
    pub last_access: u64,
    /// Accesses since the block entered the cache (the inserting access counts as 1).
    pub hits: u32,
    /// The cached copy is newer than the drive's.
    pub dirty: bool,
}

/// Maps cached blocks to dense slots `0..capacity` and keeps their [`BlockMeta`].
///
/// The table changes only through [`crate::Cache`]; policies get `&BlockTable` and read it.
/// Memory per slot: 24 bytes of meta (a free slot holds block number `u64::MAX`), a free-list entry, and the index
/// ([`BlockIndex`]: 8-byte buckets holding a hash tag and the slot, 3 per slot, 8/5 beyond 2^24 slots),
/// whose keys are read from the meta — a block number is stored once.
///
/// When the blocks' span is known and small enough ([`BlockTable::dense_pays`]), blocks below
/// it are found in a direct array of `u32` (slot + 1, or 0) indexed by the block number: one
/// load, no hashing, no probing, no key to compare, and a request's consecutive blocks share a
/// cache line. Blocks beyond the span still go to the hash index, so the span is a hint, never
/// a limit.
#[derive(Debug)]
pub struct BlockTable {
    /// Slot + 1 of each block below `dense.len()` (0: not cached), when the blocks' span is known
    /// and small enough; those blocks never enter `index`.
    dense: Vec<u32>,
    /// Blocks at or beyond `dense.len()`. Allocated at its full size on the first such block.
    index: BlockIndex,
    meta: Vec<BlockMeta>,
    free: Vec<Slot>,
    capacity: u32,
    dirty: u32,
    clock: u64,
    /// Whether the cache and its policy look ahead at their next victims (see
    /// [`LOOK_AHEAD_MIN_SLOTS`]).
    look_ahead: bool,
}

impl BlockTable {
    /// An empty table of `capacity` slots (`1 <= capacity < u32::MAX`).
    pub fn new(capacity: u32) -> Self {
        Self::with_span(capacity, None)
    }

    /// An empty table of `capacity` slots for blocks mostly below `span`.
    pub fn with_span(capacity: u32, span: Option<u64>) -> Self {
        assert!((1..Slot::MAX).contains(&capacity), "cache capacity {capacity} out of range");
        let dense_len = span.filter(|&s| Self::dense_pays(capacity, s)).unwrap_or(0) as usize;
        BlockTable {
            dense: vec![0; dense_len],
            index: BlockIndex::with_capacity(if dense_len > 0 { 0 } else { capacity }),
            meta: vec![BlockMeta { block: FREE, ..BlockMeta::default() }; capacity as usize],
            free: (0..capacity).rev().collect(),
            capacity,
            dirty: 0,
            clock: 0,
            look_ahead: capacity >= LOOK_AHEAD_MIN_SLOTS,
        }
    }

    /// Whether the cache and its policy look ahead at their next victims: on from
    /// [`LOOK_AHEAD_MIN_SLOTS`] slots unless set otherwise ([`crate::Cache::set_look_ahead`]).
    /// Looking ahead only prefetches: it changes no outcome.
    #[inline]
    pub fn look_ahead(&self) -> bool {
        self.look_ahead
    }

    pub(crate) fn set_look_ahead(&mut self, on: bool) {
        self.look_ahead = on;
    }

    /// Heap bytes of a table of `capacity` slots (what [`BlockTable::new`] allocates), computed
    /// without allocating it.
    pub fn heap_bytes_for(capacity: u32) -> usize {
        let cap = capacity as usize;
        let meta = cap * (std::mem::size_of::<BlockMeta>() + std::mem::size_of::<Slot>());
        BlockIndex::heap_bytes_for(capacity) + meta
    }

    /// Whether blocks below a span are found in a direct array ([`BlockTable::dense_pays`]).
    #[inline]
    pub fn is_dense(&self) -> bool {
        !self.dense.is_empty()
    }

    /// Heap bytes of this table.
    pub fn heap_bytes(&self) -> usize {
        let cap = self.capacity as usize;
        let meta = cap * (std::mem::size_of::<BlockMeta>() + std::mem::size_of::<Slot>());
        self.dense.len() * 4 + BlockIndex::heap_bytes_for(self.index.capacity()) + meta
    }

    /// Whether a direct array over `span` blocks is used for a table of `capacity` slots: when
    /// it takes no more memory than the hash index would (4 bytes per block of the span against
    /// 24 per slot), or at most 64 MiB ([`shingled_core::mem::direct_array_pays`]). Measured on
    /// synth:hm at 2% (an array 50 times the slots): LRU above the DM-SMR model took 31% less
    /// CPU, ARC 30% less (docs/benchmarks.md, "A direct block index").
    pub fn dense_pays(capacity: u32, span: u64) -> bool {
        shingled_core::mem::direct_array_pays(span, BlockIndex::heap_bytes_for(capacity))
    }

    /// Number of slots.
    #[inline]
    pub fn capacity(&self) -> u32 {
        self.capacity
    }
    /// Cached blocks.
    #[inline]
    pub fn len(&self) -> u32 {
        self.capacity - self.free.len() as u32
    }
    /// `true` when nothing is cached.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// `true` when every slot is used.
    #[inline]
    pub fn is_full(&self) -> bool {
        self.free.is_empty()
    }
    /// Cached dirty blocks.
    #[inline]
    pub fn dirty_len(&self) -> u32 {
        self.dirty
    }
    /// Cached clean blocks.
    #[inline]
    pub fn clean_len(&self) -> u32 {
        self.len() - self.dirty
    }
    /// The logical clock: number of block accesses (hits and insertions) so far.
    #[inline]
    pub fn clock(&self) -> u64 {
        self.clock
    }
    /// The slot caching `block`, if cached.
    #[inline]
    pub fn slot_of(&self, block: BlockNo) -> Option<Slot> {
        if let Some(&v) = self.dense_entry(block) {
            return v.checked_sub(1);
        }
        let meta = &self.meta;
        self.index.find(block, |s| meta[s as usize].block == block)
    }
    /// The state of `slot`. Meaningful only for used slots.
    #[inline]
    pub fn meta(&self, slot: Slot) -> &BlockMeta {
        &self.meta[slot as usize]
    }
    /// `true` if `slot` holds a block.
    #[inline]
    pub fn is_used(&self, slot: Slot) -> bool {
        self.meta.get(slot as usize).is_some_and(|m| m.block != FREE)
    }
    /// Iterates the used slots in slot order (deterministic).
    pub fn used_slots(&self) -> impl Iterator<Item = Slot> + '_ {
        (0..self.capacity).filter(|&s| self.meta[s as usize].block != FREE)
    }

    /// Sorts `slots` (used, distinct) by block number, reading each meta once rather than at
    /// every comparison. Blocks are distinct, so the order is the only one.
    pub fn sort_by_block(&self, slots: &mut [Slot]) {
        let mut keyed: Vec<(BlockNo, Slot)> =
            slots.iter().map(|&s| (self.meta[s as usize].block, s)).collect();
        keyed.sort_unstable();
        for (d, (_, s)) in slots.iter_mut().zip(keyed) {
            *d = s;
        }
    }

    /// Prefetches `slot`'s meta into the CPU's caches (look-ahead; changes nothing).
    #[inline]
    pub(crate) fn prefetch_meta(&self, slot: Slot) {
        shingled_core::mem::prefetch(&self.meta, slot as usize);
    }

    /// Prefetches the index line [`BlockTable::remove`] will probe when `slot` is evicted
    /// (look-ahead; changes nothing). Its meta should already be in the caches
    /// ([`BlockTable::prefetch_meta`]): the block number is read from it.
    #[inline]
    pub(crate) fn warm_remove(&self, slot: Slot) {
        self.prefetch_lookup(self.meta[slot as usize].block);
    }

    /// The slot `block` is probably cached in (its index entry's, found by the hash tag alone,
    /// without reading the meta), for look-ahead; `None` if it is not cached.
    #[inline]
    pub(crate) fn likely_slot(&self, block: BlockNo) -> Option<Slot> {
        if let Some(&v) = self.dense_entry(block) {
            return v.checked_sub(1);
        }
        self.index.find_tag(block)
    }

    /// Prefetches the index line a lookup of `block` reads first (look-ahead; changes nothing).
    #[inline]
    pub fn prefetch_lookup(&self, block: BlockNo) {
        if block < self.dense.len() as u64 {
            shingled_core::mem::prefetch(&self.dense, block as usize);
        } else {
            self.index.prefetch(block);
        }
    }

    /// Records an access to a cached slot; a write makes it dirty. Returns `true` if it was
    /// clean and became dirty.
    #[inline]
    pub(crate) fn touch(&mut self, slot: Slot, write: bool) -> bool {
        self.clock += 1;
        let m = &mut self.meta[slot as usize];
        m.last_access = self.clock;
        m.hits = m.hits.saturating_add(1);
        let became_dirty = write && !m.dirty;
        if became_dirty {
            m.dirty = true;
            self.dirty += 1;
        }
        became_dirty
    }

    /// Puts `block` into a free slot. The table must not be full and must not hold `block`.
    #[inline]
    pub(crate) fn insert(&mut self, block: BlockNo, dirty: bool) -> Slot {
        assert!(block != FREE, "block number {block} out of range");
        let slot = self.free.pop().expect("insert into a full block table");
        self.clock += 1;
        debug_assert!(self.slot_of(block).is_none(), "block {block} inserted twice");
        self.meta[slot as usize] = BlockMeta { block, last_access: self.clock, hits: 1, dirty };
        self.index_at(block, slot);
        self.dirty += dirty as u32;
        slot
    }

    /// Puts `block` into the used `slot` in place of its block, returning that block's final
    /// state: [`BlockTable::remove`] then [`BlockTable::insert`] (which would take the slot just
    /// freed), without the free list. `block` must not be in the table.
    #[inline(always)]
    pub(crate) fn replace(&mut self, slot: Slot, block: BlockNo, dirty: bool) -> BlockMeta {
        assert!(block != FREE, "block number {block} out of range");
        let old = self.meta[slot as usize];
        debug_assert!(old.block != FREE, "replacing in a free slot {slot}");
        debug_assert!(self.slot_of(block).is_none(), "block {block} inserted twice");
        self.unindex(old.block, slot);
        self.clock += 1;
        self.meta[slot as usize] = BlockMeta { block, last_access: self.clock, hits: 1, dirty };
        self.index_at(block, slot);
        self.dirty = self.dirty - old.dirty as u32 + dirty as u32;
        old
    }

    /// `block`'s entry in the direct array, if it lies below the span.
    #[inline(always)]
    fn dense_entry(&self, block: BlockNo) -> Option<&u32> {
        usize::try_from(block).ok().and_then(|i| self.dense.get(i))
    }

    #[inline(always)]
    fn dense_entry_mut(&mut self, block: BlockNo) -> Option<&mut u32> {
        usize::try_from(block).ok().and_then(|i| self.dense.get_mut(i))
    }

    /// Indexes `block` (not indexed) at `slot`.
    #[inline(always)]
    fn index_at(&mut self, block: BlockNo, slot: Slot) {
        match self.dense_entry_mut(block) {
            Some(v) => *v = slot + 1,
            None => {
                if self.index.capacity() < self.capacity {
                    self.size_index();
                }
                self.index.insert(block, slot)
            }
        }
    }

    /// The hash index at its full size, before its first entry (a block beyond the span).
    #[cold]
    #[inline(never)]
    fn size_index(&mut self) {
        self.index = BlockIndex::with_capacity(self.capacity);
    }

    /// Drops `block`'s index entry (at `slot`).
    #[inline(always)]
    fn unindex(&mut self, block: BlockNo, slot: Slot) {
        match self.dense_entry_mut(block) {
            Some(v) => *v = 0,
            None => {
                self.index.remove(block, slot);
            }
        }
    }

    /// Frees `slot`, returning its final state.
    #[inline]
    pub(crate) fn remove(&mut self, slot: Slot) -> BlockMeta {
        let m = self.meta[slot as usize];
        debug_assert!(m.block != FREE, "removing a free slot {slot}");
        self.unindex(m.block, slot);
        self.meta[slot as usize].block = FREE;
        self.dirty -= m.dirty as u32;
        self.free.push(slot);
        m
    }

    /// Marks a cached block clean (after the caller wrote it back without evicting it).
    #[inline]
    pub(crate) fn mark_clean(&mut self, slot: Slot) {
        let m = &mut self.meta[slot as usize];
        if m.dirty {
            m.dirty = false;
            self.dirty -= 1;
        }
    }
}
