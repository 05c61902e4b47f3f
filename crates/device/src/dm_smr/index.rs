//! The persistent buffer's bookkeeping: its log of appends as a fixed ring of entries, and a
//! compact block → ring position index whose keys are read back from the ring.
//!
//! **Log.** A `Vec` of entries used as a ring (head position and length, wrapped by hand, no
//! reallocation once it has reached its size). A position names a physical entry until that
//! entry leaves the log, so an index can point at it.
//!
//! **Index.** Open addressing with linear probing over `u64` buckets: the top 32 bits of the
//! key's hash (the tag) and the position + 1 (0 marks an empty bucket). A lookup compares tags
//! and asks the caller whether the entry at a matching position holds the key, so a miss reads
//! one bucket line and a hit two (the bucket's and the log entry's, which the caller reads
//! anyway). A removal shifts the following entries of its cluster back (no tombstones), so the
//! table never degrades or rehashes under churn and its memory is fixed: twice the positions,
//! rounded up to a power of two, so 16 to 32 bytes per position. The home bucket is the hash's
//! top bits (and the next bucket a mask away: no division, no wrap branch); the hash is an odd
//! multiplication (a bijection), so distinct blocks share a tag with probability 2⁻³² per
//! comparison. The same design as the cache's block index, for positions instead of slots.
//!
//! When the drive is told the span its blocks lie in ([`PosIndex::with_span`]) and a direct
//! array over it is small enough, a block below the span has its position + 1 (or 0) in that
//! array, indexed by the block number: one access, no probing, no key to check. Blocks beyond the
//! span use the hash table, which is then allocated at the first such block.

use shingled_core::BlockNo;

/// Fibonacci hashing: the product with 2⁶⁴/φ, whose top bits depend on every bit of the block.
#[inline]
fn hash(block: BlockNo) -> u64 {
    block.wrapping_mul(0x9e37_79b9_7f4a_7c15)
}

#[inline]
fn tag(h: u64) -> u64 {
    h & !0xffff_ffff
}

/// Block → log position, for at most `capacity` entries (fixed at construction).
#[derive(Clone, Debug)]
pub(super) struct PosIndex {
    /// A power of two of them, so that a bucket's home is the hash's top bits and the next
    /// bucket a mask away.
    buckets: Vec<u64>,
    /// `64 - log2(buckets.len())`: a hash's home is `h >> shift`.
    shift: u32,
    len: u32,
    capacity: u32,
    /// Counts removals (a clear counts two): a [`Probe`] taken before stays usable while this is
    /// unchanged, or after one removal that changed no bucket of its path (only a removal can
    /// open an empty bucket on a path or move an entry along it).
    removals: u64,
    /// The buckets the latest removal changed: `touch_last + 1` of them from `touch_from`,
    /// cyclically.
    touch_from: usize,
    touch_last: usize,
    /// Position + 1 (0: none) of each block below its length; those blocks never enter the
    /// buckets. Removals here do not count in `removals`: they change no bucket.
    dense: Vec<u32>,
    /// Whether `buckets` has its full size (it starts at 8 when `dense` is there).
    hash_sized: bool,
}

/// Where [`PosIndex::probe`] found a key, or the empty bucket where it would go: reusable by
/// [`PosIndex::set`] for that key while no entry has been removed and no other key inserted.
#[derive(Clone, Copy, Debug)]
pub(super) struct Probe {
    bucket: usize,
    /// The tag of the key's hash.
    tag: u64,
    /// The key's home bucket, and the distance from it to `bucket`: the path read.
    /// `usize::MAX` for a key in the dense array (`bucket` is then the block number).
    home: usize,
    steps: usize,
    /// The position found, if the key is there.
    pub(super) found: Option<u32>,
    /// [`PosIndex::removals`] when probed.
    removals: u64,
}

impl PosIndex {
    /// An index for up to `capacity` entries (positions below `capacity`): 2 to 4 buckets each
    /// (twice the capacity, rounded up to a power of two), so at most half of them are used.
    pub(super) fn with_capacity(capacity: u32) -> Self {
        Self::with_span(capacity, 0)
    }

    /// An index for up to `capacity` entries whose blocks below `dense_span` are kept in a
    /// direct array (0: none are).
    pub(super) fn with_span(capacity: u32, dense_span: u64) -> Self {
        assert!(capacity < u32::MAX, "index capacity out of range");
        let dense = dense_span as usize;
        let n = if dense > 0 { 8 } else { Self::buckets_for(capacity) };
        PosIndex {
            buckets: vec![0; n],
            shift: 64 - n.trailing_zeros(),
            len: 0,
            capacity,
            removals: 0,
            touch_from: 0,
            touch_last: 0,
            dense: vec![0; dense],
            hash_sized: dense == 0,
        }
    }

    /// The hash table's bucket count for `capacity` entries.
    fn buckets_for(capacity: u32) -> usize {
        let n = (2 * capacity as usize).max(8).next_power_of_two();
        // A home never reaches below the tag's 32 bits into the position's.
        assert!(n <= 1 << 32, "index capacity out of range");
        n
    }

    /// Bytes of the hash table an index of `capacity` entries has without a dense array.
    pub(super) fn hash_bytes_for(capacity: u32) -> usize {
        Self::buckets_for(capacity) * std::mem::size_of::<u64>()
    }

    /// Sizes the hash table fully before its first entry (no entry is in it yet).
    #[inline]
    fn hash_room(&mut self) {
        if !self.hash_sized {
            let n = Self::buckets_for(self.capacity);
            self.buckets = vec![0; n];
            self.shift = 64 - n.trailing_zeros();
            self.removals += 2;
            self.hash_sized = true;
        }
    }

    /// Whether `block` is kept in the dense array.
    #[inline]
    fn is_dense(&self, block: BlockNo) -> bool {
        block < self.dense.len() as u64
    }

    /// Entries it can hold.
    pub(super) fn capacity(&self) -> u32 {
        self.capacity
    }

    /// Entries held.
    #[cfg(test)]
    pub(super) fn len(&self) -> u32 {
        self.len
    }

    /// Heap bytes of the table.
    pub(super) fn heap_bytes(&self) -> usize {
        self.buckets.len() * std::mem::size_of::<u64>() + self.dense.len() * 4
    }

    #[inline]
    fn home(&self, h: u64) -> usize {
        (h >> self.shift) as usize
    }

    /// `buckets.len() - 1` (a power of two less one).
    #[inline]
    fn mask(&self) -> usize {
        self.buckets.len() - 1
    }

    #[inline]
    fn next(&self, i: usize) -> usize {
        (i + 1) & self.mask()
    }

    /// Prefetches the bucket line where `block`'s probe starts (changes nothing).
    #[inline]
    pub(super) fn prefetch(&self, block: BlockNo) {
        if self.is_dense(block) {
            shingled_core::mem::prefetch(&self.dense, block as usize);
        } else {
            shingled_core::mem::prefetch(&self.buckets, self.home(hash(block)));
        }
    }

    /// The position stored for `block`; `is_key(p)` tells whether position `p` holds `block` (it
    /// is asked only for positions whose tag matches).
    #[inline]
    pub(super) fn find(&self, block: BlockNo, is_key: impl Fn(u32) -> bool) -> Option<u32> {
        if self.is_dense(block) {
            return self.dense[block as usize].checked_sub(1);
        }
        let h = hash(block);
        let t = tag(h);
        let mut i = self.home(h);
        loop {
            let b = self.buckets[i];
            if b == 0 {
                return None;
            }
            if tag(b) == t {
                let p = (b as u32).wrapping_sub(1);
                if is_key(p) {
                    return Some(p);
                }
            }
            i = self.next(i);
        }
    }

    /// [`PosIndex::find`] that also remembers where the key is or would go, for a later
    /// [`PosIndex::set`].
    #[inline]
    pub(super) fn probe(&self, block: BlockNo, is_key: impl Fn(u32) -> bool) -> Probe {
        if self.is_dense(block) {
            let found = self.dense[block as usize].checked_sub(1);
            let (bucket, removals) = (block as usize, self.removals);
            return Probe { bucket, tag: 0, home: usize::MAX, steps: 0, found, removals };
        }
        let h = hash(block);
        let t = tag(h);
        let home = self.home(h);
        let mut i = home;
        let mut steps = 0;
        let probe =
            |bucket, steps, found| Probe { bucket, tag: t, home, steps, found, removals: self.removals };
        loop {
            let b = self.buckets[i];
            if b == 0 {
                return probe(i, steps, None);
            }
            if tag(b) == t {
                let p = (b as u32).wrapping_sub(1);
                if is_key(p) {
                    return probe(i, steps, Some(p));
                }
            }
            i = self.next(i);
            steps += 1;
        }
    }

    /// Whether `probe` still describes the table: no entry removed since it was taken, or one
    /// whose changed buckets and the probe's path are disjoint (cyclic intervals that do not
    /// meet: neither starts inside the other). The caller inserts no other key in between.
    #[inline]
    pub(super) fn still(&self, probe: &Probe) -> bool {
        if probe.home == usize::MAX {
            return self.dense[probe.bucket].checked_sub(1) == probe.found;
        }
        if !self.hash_sized {
            // Taken on the placeholder table: the key goes through `upsert`, which sizes it.
            return false;
        }
        match self.removals - probe.removals {
            0 => true,
            1 => {
                let dist = |from: usize, to: usize| to.wrapping_sub(from) & self.mask();
                dist(self.touch_from, probe.home) > self.touch_last
                    && dist(probe.home, self.touch_from) > probe.steps
            }
            _ => false,
        }
    }

    /// Stores `pos` for the key `probe` was taken for, where it found it or in the empty bucket
    /// that ended it; returns the position replaced, as [`PosIndex::upsert`]. `probe` must be
    /// [`PosIndex::still`] valid.
    ///
    /// # Panics
    /// If the key is new and the index is full, or `pos` is out of range.
    #[inline]
    pub(super) fn set(&mut self, probe: Probe, pos: u32) -> Option<u32> {
        assert!(pos < self.capacity, "index position out of range");
        debug_assert!(self.still(&probe), "a stale probe");
        if probe.found.is_none() {
            assert!(self.len < self.capacity, "index full ({} entries)", self.capacity);
            self.len += 1;
        }
        if probe.home == usize::MAX {
            self.dense[probe.bucket] = pos + 1;
        } else {
            self.buckets[probe.bucket] = probe.tag | (pos as u64 + 1);
        }
        probe.found
    }

    /// Stores `pos` for `block` and returns the position it replaces, if `block` had one: one
    /// probe for the lookup and the insertion. `is_key` as for [`PosIndex::find`].
    ///
    /// # Panics
    /// If `block` is new and the index is full, or `pos` is out of range.
    #[inline]
    pub(super) fn upsert(&mut self, block: BlockNo, pos: u32, is_key: impl Fn(u32) -> bool) -> Option<u32> {
        assert!(pos < self.capacity, "index position out of range");
        if self.is_dense(block) {
            let old = self.dense[block as usize].checked_sub(1);
            if old.is_none() {
                assert!(self.len < self.capacity, "index full ({} entries)", self.capacity);
                self.len += 1;
            }
            self.dense[block as usize] = pos + 1;
            return old;
        }
        self.hash_room();
        let h = hash(block);
        let t = tag(h);
        let mut i = self.home(h);
        loop {
            let b = self.buckets[i];
            if b == 0 {
                assert!(self.len < self.capacity, "index full ({} entries)", self.capacity);
                self.buckets[i] = t | (pos as u64 + 1);
                self.len += 1;
                return None;
            }
            if tag(b) == t {
                let p = (b as u32).wrapping_sub(1);
                if is_key(p) {
                    self.buckets[i] = t | (pos as u64 + 1);
                    return Some(p);
                }
            }
            i = self.next(i);
        }
    }

    /// Stores `pos` for `block`, which must not be in the index (no key check).
    #[inline]
    pub(super) fn insert_new(&mut self, block: BlockNo, pos: u32) {
        assert!(pos < self.capacity, "index position out of range");
        assert!(self.len < self.capacity, "index full ({} entries)", self.capacity);
        if self.is_dense(block) {
            debug_assert_eq!(self.dense[block as usize], 0, "block {block} indexed twice");
            self.dense[block as usize] = pos + 1;
            self.len += 1;
            return;
        }
        self.hash_room();
        let h = hash(block);
        let mut i = self.home(h);
        while self.buckets[i] != 0 {
            i = self.next(i);
        }
        self.buckets[i] = tag(h) | (pos as u64 + 1);
        self.len += 1;
    }

    /// Removes the entry of `block` at position `pos`; `false` if there is none.
    #[inline(always)]
    pub(super) fn remove(&mut self, block: BlockNo, pos: u32) -> bool {
        if self.is_dense(block) {
            let v = &mut self.dense[block as usize];
            if *v != pos + 1 {
                return false;
            }
            *v = 0;
            self.len -= 1;
            return true;
        }
        self.remove_hashed(block, pos)
    }

    /// [`PosIndex::remove`] of a block in the hash table (kept out of line: the array's removal
    /// above is what a direct index inlines).
    #[inline(never)]
    fn remove_hashed(&mut self, block: BlockNo, pos: u32) -> bool {
        let h = hash(block);
        let want = tag(h) | (pos as u64 + 1);
        let mut hole = self.home(h);
        loop {
            let b = self.buckets[hole];
            if b == 0 {
                return false;
            }
            if b == want {
                break;
            }
            hole = self.next(hole);
        }
        // Backward shift: a later entry of the cluster moves into the hole when the hole lies on
        // its probe path (cyclically between its home and its bucket).
        // `gap` is the distance from the hole to `j`, kept as `j` advances; `steps` from the
        // first hole.
        let first = hole;
        let mut j = hole;
        let mut gap = 0;
        let mut steps = 0;
        loop {
            j = self.next(j);
            gap += 1;
            steps += 1;
            let b = self.buckets[j];
            if b == 0 {
                break;
            }
            let home = self.home(b);
            let from_home = j.wrapping_sub(home) & self.mask();
            if from_home >= gap {
                self.buckets[hole] = b;
                hole = j;
                gap = 0;
            }
        }
        self.buckets[hole] = 0;
        self.len -= 1;
        self.removals += 1;
        // Changed: buckets from the first hole up to the one before the empty that ended the
        // cluster.
        self.touch_from = first;
        self.touch_last = steps - 1;
        true
    }

    /// Removes every entry, given every block that may have one (a superset): only their dense
    /// entries are cleared, not the whole array.
    pub(super) fn clear_blocks(&mut self, blocks: impl Iterator<Item = BlockNo>) {
        if !self.dense.is_empty() {
            for b in blocks {
                if let Some(v) = self.dense.get_mut(b as usize) {
                    *v = 0;
                }
            }
            debug_assert!(self.dense.iter().all(|&v| v == 0), "a block with a dense entry was not named");
        }
        self.buckets.fill(0);
        self.len = 0;
        self.removals += 2;
    }
}

/// A ring of `T` of fixed size: the log's entries oldest first, each at a stable position.
#[derive(Clone, Debug)]
pub(super) struct Ring<T> {
    /// Grows to `size` on the first pass, then is reused in place.
    slots: Vec<T>,
    size: usize,
    head: usize,
    len: usize,
}

impl<T: Copy> Ring<T> {
    /// An empty ring of `size` positions (memory is taken as the ring first fills).
    pub(super) fn new(size: usize) -> Self {
        assert!(size > 0, "a ring needs a position");
        Ring { slots: Vec::new(), size, head: 0, len: 0 }
    }

    #[inline]
    pub(super) fn len(&self) -> usize {
        self.len
    }

    /// Positions the ring has.
    pub(super) fn size(&self) -> usize {
        self.size
    }

    /// Heap bytes taken so far.
    pub(super) fn heap_bytes(&self) -> usize {
        self.slots.capacity() * std::mem::size_of::<T>()
    }

    #[inline]
    fn wrap(&self, i: usize) -> usize {
        if i >= self.size {
            i - self.size
        } else {
            i
        }
    }

    /// Position of the oldest entry.
    #[inline]
    pub(super) fn head_pos(&self) -> usize {
        self.head
    }

    /// Position the next [`Ring::push_back`] fills.
    #[inline]
    pub(super) fn tail_pos(&self) -> usize {
        self.wrap(self.head + self.len)
    }

    /// The oldest entry.
    #[inline]
    pub(super) fn front(&self) -> Option<T> {
        (self.len > 0).then(|| self.slots[self.head])
    }

    /// The `i`-th entry from the oldest.
    #[inline]
    pub(super) fn get(&self, i: usize) -> Option<T> {
        (i < self.len).then(|| self.slots[self.wrap(self.head + i)])
    }

    /// Prefetches the line of the `i`-th entry from the oldest (look-ahead; changes nothing).
    #[inline]
    pub(super) fn prefetch(&self, i: usize) {
        if i < self.len {
            shingled_core::mem::prefetch(&self.slots, self.wrap(self.head + i));
        }
    }

    /// Whether position `pos` holds an entry of the log.
    #[inline]
    pub(super) fn holds(&self, pos: usize) -> bool {
        pos < self.size
            && (if pos >= self.head { pos - self.head } else { pos + self.size - self.head }) < self.len
    }

    /// The entry at position `pos` (which must hold one).
    #[inline]
    pub(super) fn at(&self, pos: usize) -> T {
        debug_assert!(self.holds(pos), "position {pos} outside the log");
        self.slots[pos]
    }

    /// The entry at position `pos`, to change in place.
    #[inline]
    pub(super) fn at_mut(&mut self, pos: usize) -> &mut T {
        debug_assert!(self.holds(pos), "position {pos} outside the log");
        &mut self.slots[pos]
    }

    /// Appends `e` at [`Ring::tail_pos`] and returns that position.
    ///
    /// # Panics
    /// If the ring is full.
    #[inline]
    pub(super) fn push_back(&mut self, e: T) -> usize {
        assert!(self.len < self.size, "ring full ({} positions)", self.size);
        let pos = self.tail_pos();
        if pos == self.slots.len() {
            if self.slots.capacity() == 0 {
                // The first pass writes positions in order: take the whole ring once, so it is
                // never copied (pages are touched only as it fills).
                self.slots.reserve_exact(self.size);
            }
            self.slots.push(e);
        } else {
            self.slots[pos] = e;
        }
        self.len += 1;
        pos
    }

    /// The entries, oldest first.
    pub(super) fn iter(&self) -> impl Iterator<Item = T> + '_ {
        (0..self.len).map(move |i| self.slots[self.wrap(self.head + i)])
    }

    /// Drops the oldest entry.
    #[inline]
    pub(super) fn pop_front(&mut self) -> Option<T> {
        let e = self.front()?;
        self.head = self.wrap(self.head + 1);
        self.len -= 1;
        Some(e)
    }

    /// Keeps the entries `keep` accepts, in order, moving them to positions `0, 1, …` (in place:
    /// a wrapped ring is first rotated straight); `moved(e, new)` is told each kept entry's new
    /// position.
    pub(super) fn compact(&mut self, mut keep: impl FnMut(T) -> bool, mut moved: impl FnMut(T, usize)) {
        if self.head + self.len > self.slots.len() {
            // Wrapped, so the first pass is over and every position is filled.
            self.slots.rotate_left(self.head);
            self.head = 0;
        }
        let mut n = 0;
        for i in self.head..self.head + self.len {
            let e = self.slots[i];
            if keep(e) {
                // `n <= i`: an entry is moved only to a position already read.
                self.slots[n] = e;
                moved(e, n);
                n += 1;
            }
        }
        self.head = 0;
        self.len = n;
        // The first pass resumes right after the kept entries.
        if self.slots.len() < self.size {
            self.slots.truncate(n);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::{HashMap, VecDeque};

    #[test]
    fn hash_is_a_bijection_on_small_ranges() {
        let mut seen = std::collections::HashSet::new();
        for b in 0..100_000u64 {
            assert!(seen.insert(hash(b)));
        }
    }

    #[test]
    fn colliding_homes_wrap_and_survive_removal() {
        // Keys sharing the last bucket as home: every probe walks a cluster that wraps.
        let mut ix = PosIndex::with_capacity(6);
        let n = ix.buckets.len();
        let keys: Vec<u64> = (0..1_000_000u64).filter(|&b| ix.home(hash(b)) == n - 1).take(6).collect();
        for (p, &k) in keys.iter().enumerate() {
            assert_eq!(ix.upsert(k, p as u32, |x| keys[x as usize] == k), None);
        }
        for (p, &k) in keys.iter().enumerate() {
            assert_eq!(ix.find(k, |x| keys[x as usize] == k), Some(p as u32));
        }
        assert!(ix.remove(keys[0], 0));
        assert!(!ix.remove(keys[0], 0));
        for (p, &k) in keys.iter().enumerate().skip(1) {
            assert_eq!(ix.find(k, |x| keys[x as usize] == k), Some(p as u32));
        }
        assert_eq!(ix.find(keys[0], |x| keys[x as usize] == keys[0]), None);
        ix.insert_new(keys[0], 0);
        assert_eq!(ix.find(keys[0], |x| keys[x as usize] == keys[0]), Some(0));
        ix.clear_blocks(keys.iter().copied());
        assert_eq!(ix.len(), 0);
        assert_eq!(ix.find(keys[1], |x| keys[x as usize] == keys[1]), None);
    }

    #[test]
    fn ring_wraps_and_keeps_positions() {
        let mut r: Ring<u64> = Ring::new(4);
        for v in 0..4 {
            assert_eq!(r.push_back(v), v as usize);
        }
        assert_eq!(r.pop_front(), Some(0));
        assert_eq!(r.pop_front(), Some(1));
        assert_eq!(r.push_back(4), 0, "wraps to the start");
        assert_eq!(r.push_back(5), 1);
        assert_eq!(r.tail_pos(), 2);
        assert_eq!((0..4).map(|i| r.get(i).unwrap()).collect::<Vec<_>>(), vec![2, 3, 4, 5]);
        assert_eq!(r.get(4), None);
        assert!(r.holds(0) && r.holds(3) && r.holds(2));
        assert_eq!(r.at(3), 3);
        r.pop_front();
        assert!(!r.holds(2) && r.holds(3) && r.holds(1));
        // compaction of a wrapped ring: rotated straight, kept entries from position 0
        let mut moved = Vec::new();
        r.compact(|v| v != 4, |v, p| moved.push((v, p)));
        assert_eq!(moved, vec![(3, 0), (5, 1)]);
        assert_eq!((r.len(), r.head_pos(), r.tail_pos()), (2, 0, 2));
        assert_eq!(r.push_back(6), 2);
    }

    #[test]
    fn ring_compaction_in_the_first_pass_resumes_after_the_kept() {
        let mut r: Ring<u64> = Ring::new(8);
        for v in 0..5 {
            r.push_back(v);
        }
        r.pop_front();
        r.compact(|v| v % 2 == 1, |_, _| {});
        assert_eq!((r.len(), r.tail_pos()), (2, 2));
        assert_eq!(r.push_back(9), 2);
        assert_eq!((0..3).map(|i| r.get(i).unwrap()).collect::<Vec<_>>(), vec![1, 3, 9]);
    }

    proptest! {
        /// A ring and its index under appends (a block's new copy replaces its old one), pops
        /// (the popped copy leaves the index if it was its block's latest) and compactions
        /// agree with a `VecDeque` and a `HashMap`, across wrap-arounds.
        #[test]
        fn ring_and_index_match_a_model(
            span in prop_oneof![Just(0u64), Just(20u64), Just(1u64 << 16)],
            ops in proptest::collection::vec((0u8..10, 0u64..40), 0..600),
        ) {
            const SIZE: usize = 16;
            let mut ring: Ring<(u64, bool)> = Ring::new(SIZE); // (block, superseded)
            // Blocks below `span` (some of the small ones, or all small ones) in the direct array.
            let mut ix = PosIndex::with_span(SIZE as u32, span);
            let mut model_ring: VecDeque<(u64, bool)> = VecDeque::new();
            let mut model_latest: HashMap<u64, usize> = HashMap::new(); // block -> index in model_ring
            for (op, k) in ops {
                // spread keys: small numbers and large block numbers alike
                let block = if k % 2 == 0 { k } else { k.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 16 };
                match op {
                    0..=5 | 9 if ring.len() < SIZE || op == 9 => {
                        // 9: probe first, drop the head (a removal may invalidate the probe),
                        // then store through the probe if it is still valid.
                        let probe = ix.probe(block, |p| ring.holds(p as usize) && ring.at(p as usize).0 == block);
                        let pops = if op == 9 && (ring.len() == SIZE || k % 3 == 0) { 1 + k % 2 } else { 0 };
                        for _ in 0..pops {
                            let hp = ring.head_pos();
                            if let Some((b, sup)) = ring.pop_front() {
                                if !sup {
                                    prop_assert!(ix.remove(b, hp as u32));
                                }
                                let (_, msup) = model_ring.pop_front().unwrap();
                                if !msup {
                                    model_latest.remove(&b);
                                }
                                for v in model_latest.values_mut() {
                                    *v -= 1;
                                }
                            }
                        }
                        let pos = ring.push_back((block, false));
                        let prev = if op == 9 && ix.still(&probe) {
                            ix.set(probe, pos as u32)
                        } else {
                            if op != 9 {
                                prop_assert_eq!(probe.found.is_some(), model_latest.contains_key(&block));
                            }
                            ix.upsert(block, pos as u32, |p| ring.holds(p as usize) && ring.at(p as usize).0 == block)
                        };
                        if let Some(p) = prev {
                            ring.at_mut(p as usize).1 = true;
                        }
                        let mi = model_ring.len();
                        model_ring.push_back((block, false));
                        if let Some(old) = model_latest.insert(block, mi) {
                            model_ring[old].1 = true;
                        }
                        prop_assert_eq!(prev.is_some(), model_ring.iter().filter(|e| e.0 == block).count() > 1);
                    }
                    6..=7 => {
                        let pos = ring.head_pos();
                        if let Some((b, sup)) = ring.pop_front() {
                            if !sup {
                                prop_assert!(ix.remove(b, pos as u32));
                            }
                            let (mb, msup) = model_ring.pop_front().unwrap();
                            prop_assert_eq!((b, sup), (mb, msup));
                            if !msup {
                                model_latest.remove(&mb);
                            }
                            for v in model_latest.values_mut() {
                                *v -= 1;
                            }
                        }
                    }
                    8 => {
                        // drop superseded entries and every third block's latest copy
                        let drop_latest = |b: u64| b.is_multiple_of(3);
                        ix.clear_blocks(ring.iter().map(|e| e.0));
                        ring.compact(|e| !e.1 && !drop_latest(e.0), |e, p| ix.insert_new(e.0, p as u32));
                        model_ring.retain(|e| !e.1 && !drop_latest(e.0));
                        model_latest = model_ring.iter().enumerate().map(|(i, e)| (e.0, i)).collect();
                    }
                    _ => {}
                }
                prop_assert_eq!(ring.len(), model_ring.len());
                prop_assert_eq!(ix.len() as usize, model_latest.len());
                for (i, e) in model_ring.iter().enumerate() {
                    prop_assert_eq!(ring.get(i).unwrap(), *e);
                }
                for k in 0u64..40 {
                    let block = if k % 2 == 0 { k } else { k.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 16 };
                    let found = ix.find(block, |p| ring.holds(p as usize) && ring.at(p as usize).0 == block);
                    match model_latest.get(&block) {
                        Some(&mi) => {
                            let p = found.expect("latest copy indexed") as usize;
                            prop_assert_eq!(ring.at(p), model_ring[mi]);
                            prop_assert_eq!(p, (ring.head_pos() + mi) % SIZE);
                        }
                        None => prop_assert_eq!(found, None),
                    }
                }
            }
        }
    }
}
