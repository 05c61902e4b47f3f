//! Ghost lists: bounded, oldest-first-evicted lists of remembered (evicted, no longer cached)
//! block numbers, ARC's B1 and B2 and S3-FIFO's ghost queue G.
//!
//! A ghost list only ever gains blocks at its MRU end and loses them at its LRU end (trimming) or
//! anywhere (a ghost hit), so each list is a FIFO ring of block numbers in push order: pushes and
//! trims walk memory sequentially. A ghost hit does not unlink anything: it overwrites its ring
//! entry with a tombstone, which a trim skips when it reaches it; when a ring holds more dead
//! entries than live ones (and more than a few) it is compacted (amortised O(1) per hit), so a
//! ring never holds more than twice its live ghosts plus 32 entries.
//!
//! Each entry has a stamp, implicit in its position: entry `i` of list `l` has stamp
//! `base[l] + i` (wrapping `u32`), where `base[l]` is the stamp of the ring's oldest entry. A
//! hash table maps a block to its list and stamp, so the table and the rings are the only
//! memory a ghost touches. The table follows [`crate::BlockIndex`]: 8-byte buckets, open
//! addressing with linear probing from a home bucket computed from the hash's top bits,
//! backward-shift removal (no tombstones, no rehash, fixed at construction), load ≤ 1/4 (5/8 for
//! the largest). A bucket holds 30 bits of the block's hash (the tag), the list and the stamp;
//! the key itself is read from the ring only when a tag matches (the ring entry a ghost hit
//! overwrites anyway). A trim knows its block's list and stamp, so it removes the bucket whose
//! contents equal them exactly, without reading anything else. So a trim touches one bucket line
//! (prefetched when the previous trim ended), a push one, and a lookup one.
//!
//! When the blocks' span is known and small ([`Ghosts::with_span`]), a block below it has its
//! list and stamp in a direct array indexed by the block number instead (30 bits of the stamp:
//! a ring never holds 2³⁰ entries there), so that a lookup, push or trim is one array access
//! with no probing and no key to check.

use shingled_core::mem::prefetch;
use shingled_core::BlockNo;
use std::collections::VecDeque;

/// Marks a ring entry whose ghost left from the middle. A real block may carry this number too:
/// then [`Ghosts::tomb_live`] says so and the table decides (see [`Ghosts::is_live`]).
const TOMB: BlockNo = BlockNo::MAX;

/// A dense entry: 0 for none, else 1 + the list (bit 30) and the stamp's low 30 bits.
const DENSE_STAMP: u32 = (1 << 30) - 1;

/// Dense arrays serve ghost tables of fewer than this many ghosts (their rings stay below 2³⁰
/// entries: at most twice the live ghosts plus [`MIN_DEAD_TO_COMPACT`]).
const DENSE_MAX_CAPACITY: u32 = 1 << 28;

#[inline]
fn dense_entry(l: usize, stamp: u32) -> u32 {
    1 + (((l as u32) << 30) | (stamp & DENSE_STAMP))
}

/// Rings compact when their dead entries exceed both their live ones and this.
const MIN_DEAD_TO_COMPACT: usize = 32;

/// Bits of a bucket: the tag (top 30 bits of the hash), an occupied flag, the list, the stamp.
const TAG_SHIFT: u32 = 34;
const OCCUPIED: u64 = 1 << 33;
const LIST_BIT: u64 = 1 << 32;
const TAG_MASK: u64 = !((1 << TAG_SHIFT) - 1);

/// Tables of up to this many entries keep their load at 1/4, larger ones at 5/8. A miss probes
/// the ghosts as well as the block index and an eviction both removes and inserts a ghost, so
/// short probes pay more here than in the block index: at 1/4 rather than 1/2, ARC on synth:hm
/// at 2% took 8% less CPU (docs/benchmarks.md, "The block index's load").
const SMALL: usize = 1 << 24;

/// Fibonacci hashing (see [`crate::BlockIndex`]): a bijection whose top bits depend on every
/// bit of the block number.
#[inline]
fn hash(block: BlockNo) -> u64 {
    block.wrapping_mul(0x9e37_79b9_7f4a_7c15)
}

/// The bucket contents of the ghost of `block` in list `l` with stamp `stamp`.
#[inline]
fn bucket(block: BlockNo, l: usize, stamp: u32) -> u64 {
    (hash(block) & TAG_MASK) | OCCUPIED | ((l as u64) << 32) | stamp as u64
}

/// One list's ring: the block numbers in push order, oldest first, dead ones as [`TOMB`].
#[derive(Debug, Default)]
struct Ring {
    blocks: VecDeque<BlockNo>,
    /// Stamp of `blocks[0]`.
    base: u32,
    /// Live entries.
    live: u32,
}

/// What [`Ghosts::find`] found: where the ghost's bucket is, its list and its stamp.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Found {
    /// The hash bucket, or `usize::MAX` for a block in the dense array.
    bucket: usize,
    /// The list remembering the block.
    pub(crate) list: usize,
    stamp: u32,
}

/// Up to two ghost lists sharing room for `capacity` ghosts: ARC's B1 and B2, S3-FIFO's G
/// (list 0 only). Every operation is O(1) (amortised for a ghost hit: compaction).
#[derive(Debug)]
pub(crate) struct Ghosts {
    capacity: u32,
    rings: [Ring; 2],
    /// The hash table: 0 for an empty bucket, else [`bucket`] of a live ghost. Blocks below
    /// `dense.len()` are in `dense` instead.
    buckets: Vec<u64>,
    /// Per block below its length: 0, or [`dense_entry`] of its ghost.
    dense: Vec<u32>,
    /// Whether `buckets` has its full size (it starts small when `dense` is there).
    hash_sized: bool,
    /// A live ghost has block number [`TOMB`].
    tomb_live: bool,
}

impl Ghosts {
    /// Room for `capacity` ghosts in all lists together.
    #[cfg(test)]
    pub(crate) fn new(capacity: u32) -> Self {
        Self::with_span(capacity, None)
    }

    /// Room for `capacity` ghosts, of blocks mostly below `span`: with a span small enough
    /// (as [`crate::BlockTable::dense_pays`] decides for the block table) those blocks go to a
    /// direct array, the others to the hash table.
    pub(crate) fn with_span(capacity: u32, span: Option<u64>) -> Self {
        let dense = span
            .filter(|&s| capacity < DENSE_MAX_CAPACITY && crate::BlockTable::dense_pays(capacity, s))
            .unwrap_or(0) as usize;
        Ghosts {
            capacity,
            rings: Default::default(),
            buckets: vec![0; if dense > 0 { 8 } else { Self::buckets_for(capacity) }],
            dense: vec![0; dense],
            hash_sized: dense == 0,
            tomb_live: false,
        }
    }

    /// Whether `block` is held in the dense array.
    #[inline]
    fn is_dense(&self, block: BlockNo) -> bool {
        block < self.dense.len() as u64
    }

    /// The hash table at its full size (it starts at 8 buckets when a dense array serves the
    /// expected blocks; a block beyond them grows it once, before it holds anything).
    #[inline]
    fn hash_room(&mut self) {
        if !self.hash_sized {
            self.buckets = vec![0; Self::buckets_for(self.capacity)];
            self.hash_sized = true;
        }
    }

    /// The full stamp of a dense entry of list `l` (its ring holds fewer than 2³⁰ entries).
    #[inline]
    fn dense_stamp(&self, l: usize, low: u32) -> u32 {
        let base = self.rings[l].base;
        base.wrapping_add(low.wrapping_sub(base) & DENSE_STAMP)
    }

    /// Buckets of a table for `capacity` ghosts.
    fn buckets_for(capacity: u32) -> usize {
        let c = capacity as usize;
        if c <= SMALL {
            (4 * c).max(8)
        } else {
            (c * 8).div_ceil(5)
        }
    }

    /// Ghosts in list `l`.
    #[inline]
    pub(crate) fn len(&self, l: usize) -> u32 {
        self.rings[l].live
    }

    /// Ghosts in all lists.
    #[inline]
    pub(crate) fn total(&self) -> u32 {
        self.rings[0].live + self.rings[1].live
    }

    /// The home bucket of a hash or of a bucket's contents (only the tag bits count).
    #[inline]
    fn home(&self, h: u64) -> usize {
        (((h >> TAG_SHIFT) * self.buckets.len() as u64) >> (64 - TAG_SHIFT)) as usize
    }

    #[inline]
    fn next(&self, i: usize) -> usize {
        if i + 1 == self.buckets.len() {
            0
        } else {
            i + 1
        }
    }

    /// The bucket whose contents are exactly `want`.
    #[inline]
    fn position_exact(&self, want: u64) -> Option<usize> {
        let mut i = self.home(want);
        loop {
            let b = self.buckets[i];
            if b == want {
                return Some(i);
            }
            if b == 0 {
                return None;
            }
            i = self.next(i);
        }
    }

    /// Empties bucket `hole`, shifting later entries of its cluster back (they keep reaching
    /// their homes without crossing an empty bucket).
    #[inline]
    fn remove_at(&mut self, mut hole: usize) {
        let n = self.buckets.len();
        let dist = |from: usize, to: usize| if to >= from { to - from } else { to + n - from };
        let mut j = hole;
        loop {
            j = self.next(j);
            let b = self.buckets[j];
            if b == 0 {
                break;
            }
            if dist(self.home(b), j) >= dist(hole, j) {
                self.buckets[hole] = b;
                hole = j;
            }
        }
        self.buckets[hole] = 0;
    }

    /// The ring entry of stamp `stamp` in list `l` (which must be in the ring).
    #[inline]
    fn entry(&self, l: usize, stamp: u32) -> BlockNo {
        let r = &self.rings[l];
        r.blocks[stamp.wrapping_sub(r.base) as usize]
    }

    /// The ghost remembering `block`, if any.
    #[inline]
    pub(crate) fn find(&self, block: BlockNo) -> Option<Found> {
        if self.is_dense(block) {
            let v = self.dense[block as usize].checked_sub(1)?;
            let list = (v >> 30) as usize;
            return Some(Found { bucket: usize::MAX, list, stamp: self.dense_stamp(list, v) });
        }
        let h = hash(block);
        let tag = (h & TAG_MASK) | OCCUPIED;
        let mut i = self.home(h);
        loop {
            let b = self.buckets[i];
            if b == 0 {
                return None;
            }
            if b & (TAG_MASK | OCCUPIED) == tag {
                let (list, stamp) = (((b & LIST_BIT) != 0) as usize, b as u32);
                if self.entry(list, stamp) == block {
                    return Some(Found { bucket: i, list, stamp });
                }
            }
            i = self.next(i);
        }
    }

    /// Whether the ring entry `block` of list `l` with stamp `stamp` is a live ghost.
    #[inline]
    fn is_live(&self, block: BlockNo, l: usize, stamp: u32) -> bool {
        block != TOMB || (self.tomb_live && self.position_exact(bucket(TOMB, l, stamp)).is_some())
    }

    /// Drops the dead entries at the old end of ring `l` (its oldest entry is then live, or the
    /// ring empty) and prefetches the bucket of the oldest live one, which the next
    /// [`Ghosts::pop_back`] of the list removes.
    #[inline]
    fn settle_front(&mut self, l: usize) {
        while let Some(&b) = self.rings[l].blocks.front() {
            if self.is_live(b, l, self.rings[l].base) {
                self.prefetch_push(b);
                return;
            }
            let r = &mut self.rings[l];
            r.blocks.pop_front();
            r.base = r.base.wrapping_add(1);
        }
    }

    /// Forgets the ghost `found` describes (no other change since [`Ghosts::find`] returned it).
    pub(crate) fn remove_found(&mut self, found: Found) {
        let Found { bucket: i, list: l, stamp } = found;
        if i == usize::MAX {
            let block = self.entry(l, stamp);
            debug_assert_eq!(self.dense[block as usize], dense_entry(l, stamp));
            self.dense[block as usize] = 0;
        } else {
            debug_assert_eq!(self.buckets[i], bucket(self.entry(l, stamp), l, stamp));
            self.remove_at(i);
        }
        let r = &mut self.rings[l];
        let pos = stamp.wrapping_sub(r.base) as usize;
        if r.blocks[pos] == TOMB {
            self.tomb_live = false;
        }
        r.blocks[pos] = TOMB;
        r.live -= 1;
        if pos == 0 {
            self.settle_front(l);
        }
        self.bound_dead(l);
    }

    /// Compacts ring `l` when its dead entries exceed both its live ones and
    /// [`MIN_DEAD_TO_COMPACT`]: after every operation a ring holds at most
    /// `2 · live + MIN_DEAD_TO_COMPACT` entries. Each compaction costs O(dead) and every dead
    /// entry since the last one came from a ghost hit: amortised O(1) per hit.
    #[inline]
    fn bound_dead(&mut self, l: usize) {
        let r = &self.rings[l];
        let dead = r.blocks.len() - r.live as usize;
        if dead > MIN_DEAD_TO_COMPACT && dead > r.live as usize {
            self.compact(l);
        }
    }

    /// Forgets `block`; returns the list it was in.
    pub(crate) fn remove(&mut self, block: BlockNo) -> Option<usize> {
        let found = self.find(block)?;
        self.remove_found(found);
        Some(found.list)
    }

    /// Drops ring `l`'s dead entries, restamping the live ones that move.
    #[cold]
    fn compact(&mut self, l: usize) {
        let mut blocks = std::mem::take(&mut self.rings[l].blocks);
        let base = self.rings[l].base;
        let slice = blocks.make_contiguous();
        let mut kept = 0;
        for i in 0..slice.len() {
            let b = slice[i];
            let stamp = base.wrapping_add(i as u32);
            if !self.is_live(b, l, stamp) {
                continue;
            }
            if kept != i {
                let new = base.wrapping_add(kept as u32);
                if self.is_dense(b) {
                    self.dense[b as usize] = dense_entry(l, new);
                } else {
                    let at = self.position_exact(bucket(b, l, stamp)).expect("a live ghost is in the table");
                    self.buckets[at] = bucket(b, l, new);
                }
                slice[kept] = b;
            }
            kept += 1;
        }
        blocks.truncate(kept);
        // Give back memory a past peak left behind (keeping room to grow without reallocating at
        // once).
        if blocks.capacity() > 4 * kept.max(MIN_DEAD_TO_COMPACT) {
            blocks.shrink_to(2 * kept.max(MIN_DEAD_TO_COMPACT));
        }
        self.rings[l].blocks = blocks;
        debug_assert_eq!(self.rings[l].live as usize, kept);
    }

    /// Remembers `block` (not remembered yet) at the MRU end of list `l`. Returns `false`, and
    /// remembers nothing, when `capacity` ghosts are remembered: the caller trims first.
    #[inline]
    pub(crate) fn push_front(&mut self, l: usize, block: BlockNo) -> bool {
        debug_assert!(self.find(block).is_none(), "ghost {block} remembered twice");
        if self.total() >= self.capacity {
            return false;
        }
        if self.rings[l].blocks.len() >= u32::MAX as usize {
            // Stamps are u32 offsets from the ring's base: keep them distinct. A ring this long
            // holds dead entries, as live ones are fewer than `capacity` < 2³².
            self.compact(l);
        }
        let r = &mut self.rings[l];
        let stamp = r.base.wrapping_add(r.blocks.len() as u32);
        r.blocks.push_back(block);
        r.live += 1;
        if self.is_dense(block) {
            self.dense[block as usize] = dense_entry(l, stamp);
            return true;
        }
        self.hash_room();
        let want = bucket(block, l, stamp);
        let mut i = self.home(want);
        while self.buckets[i] != 0 {
            i = self.next(i);
        }
        self.buckets[i] = want;
        if block == TOMB {
            self.tomb_live = true;
        }
        true
    }

    /// Forgets the LRU ghost of list `l`, returning its block.
    #[inline]
    pub(crate) fn pop_back(&mut self, l: usize) -> Option<BlockNo> {
        let r = &mut self.rings[l];
        if r.live == 0 {
            return None;
        }
        // The oldest entry is live (`settle_front`).
        let block = r.blocks.pop_front().expect("a ring with live ghosts");
        let stamp = r.base;
        r.base = r.base.wrapping_add(1);
        r.live -= 1;
        if self.is_dense(block) {
            self.dense[block as usize] = 0;
        } else {
            let i = self.position_exact(bucket(block, l, stamp)).expect("a live ghost is in the table");
            self.remove_at(i);
        }
        if block == TOMB {
            self.tomb_live = false;
        }
        self.settle_front(l);
        self.bound_dead(l);
        Some(block)
    }

    /// Prefetches the bucket line a [`Ghosts::push_front`] of `block` probes first (look-ahead;
    /// changes nothing).
    #[inline]
    pub(crate) fn prefetch_push(&self, block: BlockNo) {
        if self.is_dense(block) {
            prefetch(&self.dense, block as usize);
        } else {
            prefetch(&self.buckets, self.home(hash(block)));
        }
    }

    /// Heap bytes: the table and the rings.
    pub(crate) fn heap_bytes(&self) -> usize {
        let ring: usize = self.rings.iter().map(|r| r.blocks.capacity()).sum();
        (self.buckets.len() + ring) * std::mem::size_of::<u64>() + self.dense.len() * 4
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::VecDeque;

    /// The literal model: two queues, MRU at the front.
    #[derive(Default)]
    struct Model {
        lists: [VecDeque<BlockNo>; 2],
    }

    impl Model {
        fn find(&self, b: BlockNo) -> Option<usize> {
            (0..2).find(|&l| self.lists[l].contains(&b))
        }
        fn total(&self) -> usize {
            self.lists[0].len() + self.lists[1].len()
        }
    }

    fn check(g: &Ghosts, m: &Model, keys: &[BlockNo]) -> Result<(), TestCaseError> {
        for l in 0..2 {
            prop_assert_eq!(g.len(l) as usize, m.lists[l].len());
        }
        prop_assert_eq!(g.total() as usize, m.total());
        let occupied =
            g.buckets.iter().filter(|&&b| b != 0).count() + g.dense.iter().filter(|&&v| v != 0).count();
        prop_assert_eq!(occupied, m.total());
        for &k in keys {
            prop_assert_eq!(g.find(k).map(|f| f.list), m.find(k), "block {}", k);
        }
        for l in 0..2 {
            // Bounded: dead entries at most max(live, MIN_DEAD_TO_COMPACT); the oldest live.
            let r = &g.rings[l];
            prop_assert!(r.blocks.len() <= 2 * r.live as usize + MIN_DEAD_TO_COMPACT);
            if let Some(&b) = r.blocks.front() {
                prop_assert!(g.is_live(b, l, r.base));
            }
        }
        Ok(())
    }

    /// Block numbers drawn from a small set including [`TOMB`] itself, 0, and small numbers
    /// (below a dense array's span).
    fn key(k: u8) -> BlockNo {
        match k {
            0 => TOMB,
            1 => 0,
            2..=29 => k as u64,
            k => (k as u64).wrapping_mul(0x1234_5678_9abc) >> 7,
        }
    }

    proptest! {
        /// Any sequence of pushes, ghost hits and trims leaves the ghosts agreeing with the
        /// literal model: the same lists, the same trim order, the same finds.
        #[test]
        fn matches_a_model(
            cap in 0u32..48,
            span in prop_oneof![Just(None), Just(Some(16u64)), Just(Some(1000u64))],
            ops in proptest::collection::vec((0u8..4, 0u8..2, 0u8..80), 0..700),
        ) {
            let mut g = Ghosts::with_span(cap, span);
            prop_assert_eq!(g.dense.len() as u64, span.unwrap_or(0));
            let mut m = Model::default();
            let keys: Vec<BlockNo> = (0..80).map(key).collect();
            for (op, l, k) in ops {
                let (l, b) = (l as usize, key(k));
                match op {
                    // Push (twice as likely: the lists fill and trims come from full lists).
                    0 | 1 => {
                        if m.find(b).is_none() {
                            let room = m.total() < cap as usize;
                            prop_assert_eq!(g.push_front(l, b), room);
                            if room {
                                m.lists[l].push_front(b);
                            }
                        }
                    }
                    2 => {
                        let want = m.find(b);
                        if let Some(ml) = want {
                            m.lists[ml].retain(|&x| x != b);
                        }
                        prop_assert_eq!(g.remove(b), want);
                    }
                    _ => prop_assert_eq!(g.pop_back(l), m.lists[l].pop_back()),
                }
                check(&g, &m, &keys)?;
            }
        }

        /// Many ghost hits in the middle of one long list force compactions; the order stays.
        #[test]
        fn compaction_keeps_order(
            n in 40u64..400,
            span in prop_oneof![Just(None), Just(Some(1500u64))],
            hits in proptest::collection::vec(any::<prop::sample::Index>(), 0..400),
        ) {
            let mut g = Ghosts::with_span(n as u32, span);
            let mut m = Model::default();
            for b in 0..n {
                prop_assert!(g.push_front(1, b * 7 + 3));
                m.lists[1].push_front(b * 7 + 3);
            }
            for h in hits {
                if m.lists[1].is_empty() {
                    break;
                }
                let b = m.lists[1][h.index(m.lists[1].len())];
                m.lists[1].retain(|&x| x != b);
                prop_assert_eq!(g.remove(b), Some(1));
                // Refill at the MRU end now and then, with new numbers.
                if b % 3 == 0 {
                    let nb = b + 1_000_000;
                    prop_assert!(g.push_front(1, nb));
                    m.lists[1].push_front(nb);
                }
            }
            let keys: Vec<BlockNo> = (0..n).map(|b| b * 7 + 3).collect();
            check(&g, &m, &keys)?;
            while let Some(b) = m.lists[1].pop_back() {
                prop_assert_eq!(g.pop_back(1), Some(b));
            }
            prop_assert_eq!(g.pop_back(1), None);
            prop_assert_eq!(g.total(), 0);
        }
    }

    /// A ghost hit on the oldest entry and on the number used as the tombstone.
    #[test]
    fn tombstone_number_is_an_ordinary_block() {
        let mut g = Ghosts::new(4);
        assert!(g.push_front(0, TOMB));
        assert!(g.push_front(0, 5));
        assert!(g.push_front(0, 6));
        assert_eq!(g.remove(5), Some(0));
        assert_eq!(g.find(TOMB).map(|f| f.list), Some(0));
        assert_eq!(g.pop_back(0), Some(TOMB));
        assert_eq!(g.pop_back(0), Some(6));
        assert_eq!(g.pop_back(0), None);
        assert!(g.push_front(1, 9));
        assert!(g.push_front(1, TOMB));
        assert_eq!(g.remove(9), Some(1));
        assert_eq!(g.pop_back(1), Some(TOMB));
        assert_eq!(g.total(), 0);
        assert!(!g.tomb_live);
    }

    #[test]
    fn full_ghosts_refuse_a_push_and_heap_is_fixed_plus_rings() {
        let mut g = Ghosts::new(3);
        let table = g.heap_bytes();
        assert_eq!(table, 4 * 3 * 8, "four 8-byte buckets per ghost of room");
        for b in 0..3 {
            assert!(g.push_front(0, b));
        }
        assert!(!g.push_front(1, 99));
        assert_eq!(g.find(99), None);
        assert!(g.heap_bytes() >= table + 3 * 8);
    }
}
