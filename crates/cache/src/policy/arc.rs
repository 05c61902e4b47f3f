//! ARC: Adaptive Replacement Cache (Megiddo & Modha, FAST'03).

use crate::ghosts::Ghosts;
use crate::{BlockTable, Links, List, Policy, PolicyBuilder, PolicyContext, PolicyError, Slot};
use serde::{Deserialize, Serialize};
use shingled_core::BlockNo;

/// ARC has nothing to configure: it tunes its only parameter, the target size `p` of its
/// recency list, online (that is its point: "self-tuning, low overhead").
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ArcConfig {}

impl PolicyBuilder for ArcConfig {
    fn build(&self, ctx: &PolicyContext) -> Result<Box<dyn Policy>, PolicyError> {
        Ok(Box::new(ArcPolicy::with_span(ctx.capacity_blocks, ctx.block_span)))
    }
}

/// Ghost list indices in [`Ghosts`].
const B1: usize = 0;
const B2: usize = 1;

/// ARC (N. Megiddo and D. S. Modha, "ARC: A Self-Tuning, Low Overhead Replacement Cache",
/// FAST'03, Fig. 4), for a cache of `c` blocks.
///
/// Cached blocks live in T1 (seen once since entering) or T2 (seen again while cached or while
/// remembered); evicted block numbers are remembered in the ghost lists B1 (evicted from T1) and
/// B2 (evicted from T2), with |T1| + |B1| ≤ c and |T1| + |T2| + |B1| + |B2| ≤ 2c. A miss on a
/// block in B1 raises the target size `p` of T1 (by 1, or |B2|/|B1| when B2 is larger), a miss
/// in B2 lowers it likewise; REPLACE evicts T1's LRU block while |T1| exceeds `p` (or equals it
/// and the missed block is in B2), T2's otherwise. So ARC balances recency against frequency by
/// itself and resists one-pass scans, which only ever churn T1.
///
/// Victim choice is O(1); `p` is a real number as in the paper. Memory: besides the cached
/// blocks' links (8 bytes a slot) and a T2 bit per slot, up to `c` remembered block numbers:
/// a hash table of 32 bytes per ghost of room and rings of 8 to 32 bytes per ghost. Dirty
/// victims are written back by the caller like any other; ARC ignores dirtiness, so above a
/// DM-SMR drive its write-backs scatter like LRU's. Do not use it where evicting a dirty block
/// costs much more than a clean one (SMR-aware policies weigh that), nor expect it to help on a
/// loop slightly larger than the cache: with nothing reused while cached, T1 fills the cache,
/// B1 stays empty and ARC behaves exactly like LRU (S3-FIFO's ghost does help there).
///
/// Mapped onto [`Policy`]: a miss on a full cache is the paper's cases II–IV in
/// [`Policy::select_victims`] (the incoming block is known there), which also remembers the
/// outcome for the [`Policy::on_insert`] that follows; an insert into a cache with free slots
/// (before it first fills, or after invalidations) still adapts `p` on a ghost hit and trims the
/// ghosts, but evicts nothing. An invalidated block is forgotten, not remembered as a ghost.
#[derive(Debug)]
pub struct ArcPolicy {
    c: u32,
    /// Target size of T1, `0 ≤ p ≤ c`.
    p: f64,
    links: Links,
    t1: List,
    t2: List,
    /// One bit per slot: set while the slot is in T2 (clear: T1). A bitset rather than a byte
    /// per slot so that it stays in the CPU's caches (a 64 MiB cache's is 2 KiB).
    in_t2: Vec<u64>,
    ghosts: Ghosts,
    /// The victim chosen by the last `select_victims` and the ghost list its block enters when
    /// it is removed (`None`: forgotten, case IV-A with a full T1).
    victim: Option<(Slot, Option<usize>)>,
    /// The block `select_victims` made room for and whether it was a ghost hit (→ T2).
    incoming: Option<(BlockNo, bool)>,
}

/// The sizes of ARC's lists and its target `p` (for tests and reports).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ArcSizes {
    /// Cached blocks seen once.
    pub t1: u32,
    /// Cached blocks seen at least twice.
    pub t2: u32,
    /// Ghosts of blocks evicted from T1.
    pub b1: u32,
    /// Ghosts of blocks evicted from T2.
    pub b2: u32,
    /// Target size of T1.
    pub p: f64,
}

impl ArcPolicy {
    /// An ARC for a cache of `capacity` slots.
    pub fn new(capacity: u32) -> Self {
        Self::with_span(capacity, None)
    }

    /// An ARC for a cache of `capacity` slots whose ghosts are of blocks mostly below `span`
    /// ([`crate::PolicyContext::block_span`]).
    pub fn with_span(capacity: u32, span: Option<u64>) -> Self {
        ArcPolicy {
            c: capacity,
            p: 0.0,
            links: Links::with_capacity(capacity as usize),
            t1: List::default(),
            t2: List::default(),
            in_t2: vec![0; (capacity as usize).div_ceil(64)],
            ghosts: Ghosts::with_span(capacity, span),
            victim: None,
            incoming: None,
        }
    }

    /// The current list sizes and `p`.
    pub fn debug_sizes(&self) -> ArcSizes {
        ArcSizes {
            t1: self.t1.len(),
            t2: self.t2.len(),
            b1: self.ghosts.len(B1),
            b2: self.ghosts.len(B2),
            p: self.p,
        }
    }

    #[inline]
    fn is_in_t2(&self, slot: Slot) -> bool {
        self.in_t2[slot as usize / 64] & (1 << (slot % 64)) != 0
    }

    #[inline]
    fn set_in_t2(&mut self, slot: Slot, t2: bool) {
        let w = &mut self.in_t2[slot as usize / 64];
        let bit = 1 << (slot % 64);
        if t2 {
            *w |= bit;
        } else {
            *w &= !bit;
        }
    }

    /// ADAPTATION on a miss of a block in ghost list `b` (still in it).
    fn adapt(&mut self, b: usize) {
        let (b1, b2) = (self.ghosts.len(B1) as f64, self.ghosts.len(B2) as f64);
        let c = self.c as f64;
        if b == B1 {
            let delta = if b1 >= b2 { 1.0 } else { b2 / b1 };
            self.p = (self.p + delta).min(c);
        } else {
            let delta = if b2 >= b1 { 1.0 } else { b1 / b2 };
            self.p = (self.p - delta).max(0.0);
        }
    }

    /// REPLACE(x, p): the victim and the ghost list its block will enter.
    fn replace(&self, incoming_in_b2: bool) -> (Slot, usize) {
        let t1 = self.t1.len();
        let t1_f = t1 as f64;
        let from_t1 = t1 > 0 && (t1_f > self.p || (incoming_in_b2 && t1_f == self.p));
        match (from_t1, self.t1.back(), self.t2.back()) {
            (true, Some(s), _) | (false, Some(s), None) => (s, B1),
            (false, _, Some(s)) => (s, B2),
            _ => unreachable!("ARC asked to replace in an empty cache"),
        }
    }

    /// The bookkeeping of a miss on `block` when a free slot is available: adapt `p` on a ghost
    /// hit, else trim the ghosts so the bounds survive the insertion (case IV without REPLACE).
    /// Returns whether the block enters T2.
    fn admit_into_free_slot(&mut self, block: BlockNo) -> bool {
        if let Some(found) = self.ghosts.find(block) {
            self.adapt(found.list);
            self.ghosts.remove_found(found);
            return true;
        }
        let (t1, t2) = (self.t1.len(), self.t2.len());
        let (b1, b2) = (self.ghosts.len(B1), self.ghosts.len(B2));
        if t1 + b1 >= self.c {
            // |T1| < c here (a slot is free), so B1 is not empty.
            self.ghosts.pop_back(B1);
        } else if t1 + t2 + b1 + b2 >= 2 * self.c {
            self.ghosts.pop_back(B2);
        }
        false
    }

    /// The victim of an eviction for `incoming` (Megiddo and Modha's cases II–IV), with the
    /// ghost it leaves and the adaptation of `p`, remembered for [`Policy::on_remove`] and
    /// [`Policy::on_insert`].
    #[inline]
    fn choose(&mut self, _: &BlockTable, incoming: BlockNo) -> Slot {
        debug_assert_eq!(
            self.t1.len() + self.t2.len(),
            self.c,
            "ARC: select_victims on a cache that is not full"
        );
        let (t1, t2) = (self.t1.len(), self.t2.len());
        let (b1, b2) = (self.ghosts.len(B1), self.ghosts.len(B2));
        let (victim, ghost, ghost_hit) = match self.ghosts.find(incoming) {
            // Cases II and III: adapt p, REPLACE, and the block will go to T2.
            Some(found) => {
                let b = found.list;
                self.adapt(b);
                self.ghosts.remove_found(found);
                let (v, g) = self.replace(b == B2);
                (v, Some(g), true)
            }
            // Case IV-A: L1 = T1 ∪ B1 holds c blocks.
            None if t1 + b1 >= self.c => {
                if t1 < self.c {
                    self.ghosts.pop_back(B1);
                    let (v, g) = self.replace(false);
                    (v, Some(g), false)
                } else {
                    // B1 is empty: T1's LRU block leaves without a ghost.
                    (self.t1.back().expect("T1 holds c blocks"), None, false)
                }
            }
            // Case IV-B: L1 holds fewer than c blocks (L1 ∪ L2 holds at least c: the cache is
            // full).
            None => {
                if t1 + t2 + b1 + b2 >= 2 * self.c {
                    self.ghosts.pop_back(B2);
                }
                let (v, g) = self.replace(false);
                (v, Some(g), false)
            }
        };
        self.victim = Some((victim, ghost));
        self.incoming = Some((incoming, ghost_hit));
        victim
    }
}

impl Policy for ArcPolicy {
    fn name(&self) -> &'static str {
        "arc"
    }

    fn on_insert(&mut self, table: &BlockTable, slot: Slot) {
        let block = table.meta(slot).block;
        let to_t2 = match self.incoming.take() {
            Some((b, ghost_hit)) if b == block => ghost_hit,
            _ => self.admit_into_free_slot(block),
        };
        if to_t2 {
            self.links.push_front(&mut self.t2, slot);
        } else {
            self.links.push_front(&mut self.t1, slot);
        }
        self.set_in_t2(slot, to_t2);
    }

    /// Case I: move to the MRU end of T2.
    fn on_hit(&mut self, _: &BlockTable, slot: Slot, _: bool) {
        if self.is_in_t2(slot) {
            self.links.move_to_front(&mut self.t2, slot);
        } else {
            self.links.remove(&mut self.t1, slot);
            self.links.push_front(&mut self.t2, slot);
            self.set_in_t2(slot, true);
        }
    }

    fn select_victims(&mut self, table: &BlockTable, incoming: BlockNo, victims: &mut Vec<Slot>) {
        let v = self.choose(table, incoming);
        victims.push(v);
    }

    #[inline]
    fn single_victim(&mut self, table: &BlockTable, incoming: BlockNo) -> Option<Slot> {
        Some(self.choose(table, incoming))
    }

    fn on_remove(&mut self, table: &BlockTable, slot: Slot) {
        if self.is_in_t2(slot) {
            self.links.remove(&mut self.t2, slot);
        } else {
            self.links.remove(&mut self.t1, slot);
        }
        match self.victim {
            Some((v, ghost)) if v == slot => {
                self.victim = None;
                if let Some(g) = ghost {
                    let pushed = self.ghosts.push_front(g, table.meta(slot).block);
                    debug_assert!(pushed, "ARC: more than c ghosts");
                }
            }
            // An invalidation: forget the block.
            _ => {}
        }
    }

    /// The tail REPLACE would pick if the next miss were on no ghost, and the block before it in
    /// the same list. A ghost hit moves `p` (and one in B2 tips a tie toward T1), and ARC keeps
    /// |T1| close to `p`, so the other list's tail is as likely a victim: both tails get their
    /// look-ahead (the ghost bucket their block would enter, their index line, their
    /// predecessor's links and meta), the likely one through the cache.
    fn peek_victims(&self, table: &BlockTable, ahead: &mut [Slot; 2]) -> usize {
        let t1 = self.t1.len();
        let from_t1 = t1 > 0 && (t1 as f64 > self.p || self.t2.is_empty());
        let (likely, other) = if from_t1 { (&self.t1, &self.t2) } else { (&self.t2, &self.t1) };
        if let Some(o) = other.back() {
            self.ghosts.prefetch_push(table.meta(o).block);
            table.warm_remove(o);
            if let Some(s) = self.links.prev(o) {
                table.prefetch_meta(s);
                self.links.prefetch(s);
            }
        }
        let Some(first) = likely.back() else { return 0 };
        ahead[0] = first;
        self.ghosts.prefetch_push(table.meta(first).block);
        let Some(second) = self.links.prev(first) else { return 1 };
        ahead[1] = second;
        self.links.prefetch(second);
        2
    }

    #[inline]
    fn prefetch_lookup(&self, block: BlockNo) {
        self.ghosts.prefetch_push(block);
    }

    #[inline]
    fn prefetch_slot(&self, slot: Slot) {
        self.links.prefetch(slot);
    }
    fn heap_bytes(&self) -> usize {
        self.links.heap_bytes()
            + self.in_t2.capacity() * std::mem::size_of::<u64>()
            + self.ghosts.heap_bytes()
    }
}
