//! A cache = block table + policy, with the find / insert / evict / remove vocabulary.

use crate::policy::{arc::ArcPolicy, lru::Lru, s3fifo::S3Fifo};
use crate::{BlockMeta, BlockTable, Foresight, Policy, Slot, NIL};
use shingled_core::BlockNo;
use std::ops::Range;

/// Requests are looked up ahead when the cache's structures exceed this many times the core's
/// second-level cache ([`Cache::looks_ahead_at_requests`]).
const REQUESTS_AHEAD_L2_MULTIPLE: usize = 2;

/// In a batch of victims, how many removals ahead a victim's meta is prefetched …
const BATCH_META_AHEAD: usize = 16;
/// … and its index line.
const BATCH_INDEX_AHEAD: usize = 8;

/// The metadata of an SSD cache of 4 KiB blocks under one replacement policy.
///
/// It decides hits and victims; it does not move data or model time. The replay engine (or a
/// real data path) does the I/O the outcomes call for: writing dirty victims back, filling
/// missed blocks.
pub struct Cache {
    table: BlockTable,
    policy: Held,
    victims: Vec<Slot>,
    /// The next victim the policy named at the latest eviction ([`Cache::next_victim`]), or
    /// [`NIL`].
    next_victim: Slot,
}

/// The policy, held as its own type when it is one whose per-request work is a few list
/// operations (LRU, ARC, S3-FIFO): the cache's request paths are then compiled for it, with its
/// calls inlined, instead of calling through a vtable four or five times per miss.
enum Held {
    Lru(Box<Lru>),
    Arc(Box<ArcPolicy>),
    S3Fifo(Box<S3Fifo>),
    Other(Box<dyn Policy>),
}

/// Runs `$body` with `$p` bound to the held policy as its own type (one copy of the body per
/// type, each with the policy's calls inlined).
macro_rules! with_policy {
    ($held:expr, $p:ident => $body:expr) => {
        match $held {
            Held::Lru($p) => $body,
            Held::Arc($p) => $body,
            Held::S3Fifo($p) => $body,
            Held::Other($p) => $body,
        }
    };
}

impl Held {
    fn new(policy: Box<dyn Policy>) -> Held {
        let any = policy.as_any();
        if any.is::<Lru>() {
            Held::Lru(policy.into_any().downcast().expect("checked type"))
        } else if any.is::<ArcPolicy>() {
            Held::Arc(policy.into_any().downcast().expect("checked type"))
        } else if any.is::<S3Fifo>() {
            Held::S3Fifo(policy.into_any().downcast().expect("checked type"))
        } else {
            Held::Other(policy)
        }
    }

    fn get(&self) -> &dyn Policy {
        with_policy!(self, p => &**p)
    }

    fn get_mut(&mut self) -> &mut dyn Policy {
        with_policy!(self, p => &mut **p)
    }
}

impl std::fmt::Debug for Cache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Cache")
            .field("policy", &self.policy.get().name())
            .field("len", &self.table.len())
            .field("capacity", &self.table.capacity())
            .finish()
    }
}

impl Cache {
    /// An empty cache of `capacity` blocks managed by `policy`.
    pub fn new(capacity: u32, policy: Box<dyn Policy>) -> Self {
        Self::with_span(capacity, policy, None)
    }

    /// An empty cache of `capacity` blocks managed by `policy`, for blocks below `span` (known
    /// from the trace's statistics or the drive's size): a table over a small enough span
    /// finds a block by its number alone. Blocks beyond `span` are still cached.
    pub fn with_span(capacity: u32, policy: Box<dyn Policy>, span: Option<u64>) -> Self {
        Cache {
            table: BlockTable::with_span(capacity, span),
            policy: Held::new(policy),
            victims: Vec::with_capacity(64),
            next_victim: NIL,
        }
    }

    /// Whether a replay should look its requests up ahead of serving them
    /// ([`Cache::prefetch_lookups`], [`Cache::prefetch_hits`]): when the cache's structures
    /// ([`Cache::heap_bytes`]) are more than twice the core's second-level cache
    /// ([`shingled_core::mem::l2_cache_bytes`]). Smaller ones are mostly served from the
    /// core's own caches, where the look-ahead's second lookup of every block only costs time
    /// (docs/benchmarks.md: on the Intel VM, 2 MiB of L2, LRU on a 2.3 MB table took a fifth
    /// more CPU with it; on the AMD VM a 5 MB one took a third less).
    ///
    /// A table with a direct block array ([`crate::BlockTable::dense_pays`]) looks ahead only when
    /// its structures outgrow the last-level cache, where that size is known: its lookups are
    /// one line each, mostly served from there (on the Intel VM, 260 MiB of L3, LRU took 6–12%
    /// less CPU without the look-ahead on synth:hm, synth:prn and prn3s at 1 GiB, 11 to 70 MB of
    /// structures, and 8% more at a 32 GiB cache, 430 MB).
    pub fn looks_ahead_at_requests(&self) -> bool {
        let bytes = self.heap_bytes();
        match shingled_core::mem::l3_cache_bytes() {
            Some(l3) if self.table.is_dense() => bytes > l3,
            _ => bytes > REQUESTS_AHEAD_L2_MULTIPLE * shingled_core::mem::l2_cache_bytes(),
        }
    }

    /// Turns looking ahead at the next victims on or off (by default on from
    /// [`crate::LOOK_AHEAD_MIN_SLOTS`] slots): it only prefetches, so either way every outcome is the
    /// same; for tests that check so, and for benchmarks.
    pub fn set_look_ahead(&mut self, on: bool) {
        self.table.set_look_ahead(on);
        if !on {
            self.next_victim = NIL;
        }
    }

    /// The block table (read-only).
    #[inline]
    pub fn table(&self) -> &BlockTable {
        &self.table
    }

    /// The policy's name.
    pub fn policy_name(&self) -> &'static str {
        self.policy.get().name()
    }

    /// Looks `block` up without touching anything.
    #[inline]
    pub fn peek(&self, block: BlockNo) -> Option<&BlockMeta> {
        self.table.slot_of(block).map(|s| self.table.meta(s))
    }

    /// Prefetches the lines the lookups of `blocks` read first: the block table's index lines
    /// and the policy's own (ghosts). The first stage of look-ahead over requests about to be
    /// replayed; changes nothing.
    #[inline]
    pub fn prefetch_lookups(&self, blocks: Range<BlockNo>) {
        let table = &self.table;
        with_policy!(&self.policy, p => {
            for b in blocks {
                table.prefetch_lookup(b);
                p.prefetch_lookup(b);
            }
        });
    }

    /// Prefetches what hits on `blocks` will touch (each cached block's meta and the policy's
    /// state for its slot). The second stage of look-ahead, for a request whose index lines
    /// [`Cache::prefetch_lookups`] fetched a few requests earlier: the slot is found by the
    /// hash tag alone, without reading the meta. Changes nothing.
    #[inline]
    pub fn prefetch_hits(&self, blocks: Range<BlockNo>) {
        let table = &self.table;
        with_policy!(&self.policy, p => {
            for b in blocks {
                if let Some(s) = table.likely_slot(b) {
                    table.prefetch_meta(s);
                    p.prefetch_slot(s);
                }
            }
        });
    }

    /// Accesses `block`: on a hit updates its state (a write makes it dirty), tells the policy,
    /// and returns whether it was dirty before this access. `None` on a miss (nothing changes).
    #[inline(always)]
    pub fn access(&mut self, block: BlockNo, write: bool) -> Option<bool> {
        let slot = self.table.slot_of(block)?;
        let was_dirty = self.table.meta(slot).dirty;
        let became_dirty = self.table.touch(slot, write);
        let table = &self.table;
        with_policy!(&mut self.policy, p => p.on_hit(table, slot, became_dirty));
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
        if let Some(v) = self.insert_one(block, dirty, evicted) {
            evicted.push(v);
        }
    }

    /// [`Cache::insert`], except that when the policy evicts exactly one block
    /// ([`Policy::single_victim`]) its final state is returned instead of appended to `evicted`
    /// (which is then left as it was): the replay's common case, without the vector.
    #[inline]
    pub fn insert_one(
        &mut self,
        block: BlockNo,
        dirty: bool,
        evicted: &mut Vec<BlockMeta>,
    ) -> Option<BlockMeta> {
        debug_assert!(self.table.slot_of(block).is_none(), "block {block} already cached");
        let Cache { table, policy, victims, next_victim } = self;
        with_policy!(policy, p => insert_with(table, &mut **p, victims, next_victim, block, dirty, evicted))
    }

    /// The state of the block the policy named, at the latest eviction, as its next victim
    /// (caches of at least [`crate::LOOK_AHEAD_MIN_SLOTS`] slots; `None` below, before the first
    /// eviction, or when the slot is free). A hint for look-ahead: a hit since may have moved
    /// it away from the victims' end.
    #[inline]
    pub fn next_victim(&self) -> Option<&BlockMeta> {
        (self.next_victim != NIL && self.table.is_used(self.next_victim))
            .then(|| self.table.meta(self.next_victim))
    }

    /// Removes `block` if cached (e.g. a write that bypasses the cache), returning its state.
    pub fn invalidate(&mut self, block: BlockNo) -> Option<BlockMeta> {
        let slot = self.table.slot_of(block)?;
        self.policy.get_mut().on_remove(&self.table, slot);
        Some(self.table.remove(slot))
    }

    /// Marks a cached block clean after the caller wrote it to the drive without evicting it.
    /// The policy is told ([`Policy::on_clean`]) and sees it through the meta afterwards.
    pub fn mark_clean(&mut self, block: BlockNo) {
        if let Some(slot) = self.table.slot_of(block) {
            if self.table.meta(slot).dirty {
                self.policy.get_mut().on_clean(&self.table, slot);
            }
            self.table.mark_clean(slot);
        }
    }

    /// Tells an offline policy the future of the block about to be accessed
    /// ([`Policy::foresee`]); the replay calls it before every block when the policy needs it.
    pub fn foresee(&mut self, f: &Foresight) {
        self.policy.get_mut().foresee(f);
    }

    /// Approximate heap bytes of the table and the policy structures.
    pub fn heap_bytes(&self) -> usize {
        self.table.heap_bytes() + self.policy.get().heap_bytes()
    }
}

/// [`Cache::insert`] for a policy of type `P`: evicts as the policy decides when the table is
/// full, then inserts.
#[inline(always)]
fn insert_with<P: Policy + ?Sized>(
    table: &mut BlockTable,
    policy: &mut P,
    victims: &mut Vec<Slot>,
    next_victim: &mut Slot,
    block: BlockNo,
    dirty: bool,
    evicted: &mut Vec<BlockMeta>,
) -> Option<BlockMeta> {
    if table.is_full() {
        if let Some(s) = policy.single_victim(table, block) {
            // One victim: its slot takes the new block in place.
            if !table.is_used(s) {
                bad_victim(policy.name(), s);
            }
            let replaced = policy.replace_victim(table, s);
            if !replaced {
                policy.on_remove(table, s);
            }
            let old = table.replace(s, block, dirty);
            if table.look_ahead() {
                look_ahead_at_victims(table, policy, next_victim);
            }
            if !replaced {
                policy.on_insert(table, s);
            }
            return Some(old);
        }
        evict_with(table, policy, victims, next_victim, block, evicted);
    }
    let slot = table.insert(block, dirty);
    policy.on_insert(table, slot);
    None
}

/// Asks the policy for victims and removes them.
#[inline(always)]
fn evict_with<P: Policy + ?Sized>(
    table: &mut BlockTable,
    policy: &mut P,
    victims: &mut Vec<Slot>,
    next_victim: &mut Slot,
    incoming: BlockNo,
    evicted: &mut Vec<BlockMeta>,
) {
    victims.clear();
    policy.select_victims(table, incoming, victims);
    if victims.is_empty() {
        no_victim(policy.name());
    }
    let look_ahead = table.look_ahead();
    let batch = look_ahead && victims.len() > 1;
    if batch {
        // A batch (SAC, MOST, …): each victim's meta and the policy's state for it
        // (`Policy::prefetch_slot`) are fetched BATCH_META_AHEAD removals before its own, and
        // its index line BATCH_INDEX_AHEAD before (from the meta fetched
        // then), so that the batch's misses overlap instead of coming one removal at a time,
        // and no more are in flight than the CPU can track.
        for &s in victims.iter().take(BATCH_META_AHEAD) {
            table.prefetch_meta(s);
            policy.prefetch_slot(s);
        }
        for &s in victims.iter().take(BATCH_INDEX_AHEAD) {
            if table.is_used(s) {
                table.warm_remove(s);
            }
        }
    }
    for (i, &s) in victims.iter().enumerate() {
        if batch {
            if let Some(&m) = victims.get(i + BATCH_META_AHEAD) {
                table.prefetch_meta(m);
                policy.prefetch_slot(m);
            }
            if let Some(&w) = victims.get(i + BATCH_INDEX_AHEAD) {
                if table.is_used(w) {
                    table.warm_remove(w);
                }
            }
        }
        if !table.is_used(s) {
            bad_victim(policy.name(), s);
        }
        policy.on_remove(table, s);
        evicted.push(table.remove(s));
    }
    if look_ahead {
        look_ahead_at_victims(table, policy, next_victim);
    }
}

/// After an eviction: the next victim's index entry is touched now and the one after's meta is
/// prefetched, so that the coldest blocks' cache misses overlap with the requests served until
/// then instead of stalling the next eviction.
#[inline(always)]
fn look_ahead_at_victims<P: Policy + ?Sized>(table: &BlockTable, policy: &P, next_victim: &mut Slot) {
    let mut ahead = [0; 2];
    let n = policy.peek_victims(table, &mut ahead);
    *next_victim = if n >= 1 { ahead[0] } else { NIL };
    if n >= 2 {
        table.prefetch_meta(ahead[1]);
    }
    if n >= 1 {
        table.warm_remove(ahead[0]);
    }
}

/// A policy bug, not an input error: no victim for a full cache.
#[cold]
#[inline(never)]
fn no_victim(policy: &str) -> ! {
    panic!("policy {policy} chose no victim for a full cache")
}

/// A policy bug, not an input error: a free or repeated victim.
#[cold]
#[inline(never)]
fn bad_victim(policy: &str, s: Slot) -> ! {
    panic!("policy {policy} chose free or repeated slot {s}")
}
