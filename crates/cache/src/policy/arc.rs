//! ARC: Adaptive Replacement Cache (Megiddo & Modha, FAST'03), and the bounded ghost lists it
//! and S3-FIFO keep of recently evicted block numbers.

use crate::{BlockTable, Links, List, Policy, PolicyBuilder, PolicyContext, PolicyError, Slot};
use rustc_hash::FxHashMap;
use serde::{Deserialize, Serialize};
use shingled_core::BlockNo;

/// ARC has nothing to configure: it tunes its only parameter, the target size `p` of its
/// recency list, online (that is its point: "self-tuning, low overhead").
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ArcConfig {}

impl PolicyBuilder for ArcConfig {
    fn build(&self, ctx: &PolicyContext) -> Result<Box<dyn Policy>, PolicyError> {
        Ok(Box::new(ArcPolicy::new(ctx.capacity_blocks)))
    }
}

/// Which list holds a cached block: T1 (seen once recently) or T2 (seen at least twice).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Resident {
    T1,
    T2,
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
/// blocks' links, up to `c` remembered block numbers. Dirty victims are written back by the
/// caller like any other; ARC ignores dirtiness, so above a DM-SMR drive its write-backs scatter
/// like LRU's. Do not use it where evicting a dirty block costs much more than a clean one
/// (SMR-aware policies weigh that), nor expect it to help on a loop slightly larger than the
/// cache: with nothing reused while cached, T1 fills the cache, B1 stays empty and ARC behaves
/// exactly like LRU (S3-FIFO's ghost does help there).
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
    resident: Vec<Resident>,
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
        ArcPolicy {
            c: capacity,
            p: 0.0,
            links: Links::with_capacity(capacity as usize),
            t1: List::default(),
            t2: List::default(),
            resident: vec![Resident::T1; capacity as usize],
            ghosts: Ghosts::new(capacity),
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
        if let Some(b) = self.ghosts.find(block) {
            self.adapt(b);
            self.ghosts.remove(block);
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
            self.resident[slot as usize] = Resident::T2;
        } else {
            self.links.push_front(&mut self.t1, slot);
            self.resident[slot as usize] = Resident::T1;
        }
    }

    /// Case I: move to the MRU end of T2.
    fn on_hit(&mut self, _: &BlockTable, slot: Slot, _: bool) {
        match self.resident[slot as usize] {
            Resident::T1 => {
                self.links.remove(&mut self.t1, slot);
                self.links.push_front(&mut self.t2, slot);
                self.resident[slot as usize] = Resident::T2;
            }
            Resident::T2 => self.links.move_to_front(&mut self.t2, slot),
        }
    }

    fn select_victims(&mut self, _: &BlockTable, incoming: BlockNo, victims: &mut Vec<Slot>) {
        debug_assert_eq!(
            self.t1.len() + self.t2.len(),
            self.c,
            "ARC: select_victims on a cache that is not full"
        );
        let (t1, t2) = (self.t1.len(), self.t2.len());
        let (b1, b2) = (self.ghosts.len(B1), self.ghosts.len(B2));
        let (victim, ghost, ghost_hit) = match self.ghosts.find(incoming) {
            // Cases II and III: adapt p, REPLACE, and the block will go to T2.
            Some(b) => {
                self.adapt(b);
                self.ghosts.remove(incoming);
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
        victims.push(victim);
        self.victim = Some((victim, ghost));
        self.incoming = Some((incoming, ghost_hit));
    }

    fn on_remove(&mut self, table: &BlockTable, slot: Slot) {
        match self.resident[slot as usize] {
            Resident::T1 => self.links.remove(&mut self.t1, slot),
            Resident::T2 => self.links.remove(&mut self.t2, slot),
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

    fn heap_bytes(&self) -> usize {
        self.links.heap_bytes()
            + self.resident.capacity() * std::mem::size_of::<Resident>()
            + self.ghosts.heap_bytes()
    }
}

/// Up to two LRU-ordered lists of remembered (evicted, no longer cached) block numbers sharing
/// `capacity` nodes: ARC's B1 and B2, S3-FIFO's ghost queue G (list 0 only).
///
/// Nodes are a slab indexed by `u32` with their order (and the free nodes) in [`Links`], and a
/// block → node hash map, so every operation is O(1) and the memory never exceeds what
/// `capacity` ghosts need. The slab grows as ghosts appear, never beyond `capacity` nodes.
#[derive(Debug)]
pub(crate) struct Ghosts {
    capacity: u32,
    links: Links,
    lists: [List; 2],
    /// Released nodes, linked through the same `links`.
    free: List,
    /// Node → its block and its list.
    nodes: Vec<(BlockNo, u8)>,
    map: FxHashMap<BlockNo, u32>,
}

impl Ghosts {
    /// Room for `capacity` ghosts in all lists together.
    pub(crate) fn new(capacity: u32) -> Self {
        Ghosts {
            capacity,
            links: Links::with_capacity(capacity as usize),
            lists: [List::default(); 2],
            free: List::default(),
            nodes: Vec::new(),
            map: FxHashMap::default(),
        }
    }

    /// Ghosts in list `l`.
    #[inline]
    pub(crate) fn len(&self, l: usize) -> u32 {
        self.lists[l].len()
    }

    /// Ghosts in all lists.
    #[inline]
    pub(crate) fn total(&self) -> u32 {
        self.map.len() as u32
    }

    /// The list remembering `block`, if any.
    #[inline]
    pub(crate) fn find(&self, block: BlockNo) -> Option<usize> {
        self.map.get(&block).map(|&n| self.nodes[n as usize].1 as usize)
    }

    /// Forgets `block`; returns the list it was in.
    pub(crate) fn remove(&mut self, block: BlockNo) -> Option<usize> {
        let n = self.map.remove(&block)?;
        let l = self.nodes[n as usize].1 as usize;
        self.links.remove(&mut self.lists[l], n);
        self.links.push_front(&mut self.free, n);
        Some(l)
    }

    /// Remembers `block` (not remembered yet) at the MRU end of list `l`. Returns `false`, and
    /// remembers nothing, when all `capacity` nodes are in use: the caller trims first.
    pub(crate) fn push_front(&mut self, l: usize, block: BlockNo) -> bool {
        debug_assert!(!self.map.contains_key(&block), "ghost {block} remembered twice");
        let n = match self.links.pop_back(&mut self.free) {
            Some(n) => n,
            None if self.nodes.len() < self.capacity as usize => {
                if self.nodes.len() == self.nodes.capacity() {
                    // Double, but never past `capacity` nodes.
                    let room = self.capacity as usize - self.nodes.len();
                    self.nodes.reserve_exact(self.nodes.len().max(8).min(room));
                }
                self.nodes.push((0, 0));
                (self.nodes.len() - 1) as u32
            }
            None => return false,
        };
        self.nodes[n as usize] = (block, l as u8);
        self.links.push_front(&mut self.lists[l], n);
        self.map.insert(block, n);
        true
    }

    /// Forgets the LRU ghost of list `l`, returning its block.
    pub(crate) fn pop_back(&mut self, l: usize) -> Option<BlockNo> {
        let n = self.links.pop_back(&mut self.lists[l])?;
        let block = self.nodes[n as usize].0;
        self.map.remove(&block);
        self.links.push_front(&mut self.free, n);
        Some(block)
    }

    /// Heap bytes: links, node slab and hash map.
    pub(crate) fn heap_bytes(&self) -> usize {
        self.links.heap_bytes()
            + self.nodes.capacity() * std::mem::size_of::<(BlockNo, u8)>()
            + hash_map_heap_bytes(&self.map)
    }
}

/// Heap bytes of a hashbrown-backed map: one `(K, V)` pair and one control byte per bucket, plus
/// a group of trailing control bytes.
fn hash_map_heap_bytes<K, V>(map: &FxHashMap<K, V>) -> usize {
    let cap = map.capacity();
    let buckets = match cap {
        0 => return 0,
        1..=7 => cap + 1,
        _ => cap / 7 * 8,
    };
    buckets * (std::mem::size_of::<(K, V)>() + 1) + 16
}
