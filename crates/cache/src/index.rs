//! A compact hash index from block numbers to `u32` values (cache slots, ghost nodes) whose
//! keys live elsewhere.
//!
//! Each bucket is one `u64`: 32 bits of the key's hash (the tag) and the value + 1 (0 marks an
//! empty bucket). A lookup reads one bucket line and compares tags; only a tag match asks the
//! caller whether the value's key is the one looked for (a policy reads its slot's meta, which a
//! hit touches anyway), so a miss costs one cache line and a hit two: the bucket's and the
//! meta's. Open addressing with linear probing; a removal shifts the following entries of its
//! cluster back (no tombstones), so probe lengths never degrade under churn and a table of fixed capacity never
//! rehashes. The load stays at or below 1/3 of the buckets (5/8 for the largest tables):
//! linear probing's clusters grow fast with the load (measured: at 3/4, five probes per
//! operation), and every probe beyond the first is a branch the CPU mispredicts often. At 1/3
//! rather than 1/2, LRU above the DM-SMR model took 16% less CPU on synth:prn at 2% (98,925
//! slots) and SAC 17% less at a 1 GiB cache (docs/benchmarks.md, "The block index's load").
//!
//! The home bucket of a key is computed from its tag alone (the tag scaled to the bucket count,
//! so the count need not be a power of two and the table costs 24 bytes per entry, 12.8 in the
//! largest tables), so an entry's home is known from the bucket alone when entries are shifted.
//! The hash is a bijection (an odd multiplication), so distinct blocks never share a full hash;
//! two share a tag with probability 2⁻³² per comparison.

use shingled_core::BlockNo;

/// Fibonacci hashing: the product with 2⁶⁴/φ (odd, so a bijection on u64), whose top bits depend
/// on every bit of the block number and spread consecutive blocks evenly.
#[inline]
fn hash(block: BlockNo) -> u64 {
    block.wrapping_mul(0x9e37_79b9_7f4a_7c15)
}

/// Indexes of up to this many entries (a 64 GiB cache of 4 KiB blocks) keep their load at 1/3,
/// larger ones at 5/8: probes are shorter at 1/3, but a 1 TiB cache's index would then cost
/// 24 bytes per slot instead of 12.8.
const SMALL: usize = 1 << 24;

/// The index. `capacity` entries at most, fixed at construction.
#[derive(Clone, Debug)]
pub struct BlockIndex {
    buckets: Vec<u64>,
    len: u32,
    capacity: u32,
}

impl BlockIndex {
    /// An index for up to `capacity` entries (3 or 8/5 buckets per entry, at least 8).
    pub fn with_capacity(capacity: u32) -> Self {
        BlockIndex { buckets: vec![0; Self::buckets_for(capacity)], len: 0, capacity }
    }

    /// Buckets an index of `capacity` entries allocates.
    pub fn buckets_for(capacity: u32) -> usize {
        let c = capacity as usize;
        if c <= SMALL {
            (3 * c).max(8)
        } else {
            (c * 8).div_ceil(5)
        }
    }

    /// Heap bytes of an index of `capacity` entries, computed without allocating it.
    pub fn heap_bytes_for(capacity: u32) -> usize {
        Self::buckets_for(capacity) * std::mem::size_of::<u64>()
    }

    /// Entries it can hold.
    #[inline]
    pub fn capacity(&self) -> u32 {
        self.capacity
    }

    /// Entries held.
    #[inline]
    pub fn len(&self) -> u32 {
        self.len
    }

    /// `true` when empty.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The home bucket of a hash (or of a bucket's contents: only the top 32 bits count).
    #[inline]
    fn home(&self, h: u64) -> usize {
        (((h >> 32) as u128 * self.buckets.len() as u128) >> 32) as usize
    }

    #[inline]
    fn next(&self, i: usize) -> usize {
        if i + 1 == self.buckets.len() {
            0
        } else {
            i + 1
        }
    }

    #[inline]
    fn tag(h: u64) -> u64 {
        h & !0xffff_ffff
    }

    /// Prefetches the bucket line where `block`'s probe starts (look-ahead; changes nothing).
    #[inline]
    pub fn prefetch(&self, block: BlockNo) {
        shingled_core::mem::prefetch(&self.buckets, self.home(hash(block)));
    }

    /// The bucket holding an entry `matches` accepts, probing from `h`'s home to the first
    /// empty bucket.
    #[inline]
    fn position(&self, h: u64, mut matches: impl FnMut(u64) -> bool) -> Option<usize> {
        let mut i = self.home(h);
        loop {
            let b = self.buckets[i];
            if b == 0 {
                return None;
            }
            if matches(b) {
                return Some(i);
            }
            i = self.next(i);
        }
    }

    /// The value stored for `block`: `is_key(v)` tells whether value `v`'s key is `block` (it is
    /// asked only for values whose tag matches).
    #[inline]
    pub fn find(&self, block: BlockNo, is_key: impl Fn(u32) -> bool) -> Option<u32> {
        let h = hash(block);
        let tag = Self::tag(h);
        self.position(h, |b| b & !0xffff_ffff == tag && is_key((b as u32).wrapping_sub(1)))
            .map(|i| (self.buckets[i] as u32).wrapping_sub(1))
    }

    /// The value of the first entry whose tag is `block`'s, without asking whose key it is: the
    /// entry of `block` when it is there (another block shares the tag with probability 2⁻³²
    /// per entry probed). For look-ahead, which prefetches the value's lines without reading
    /// them.
    #[inline]
    pub fn find_tag(&self, block: BlockNo) -> Option<u32> {
        let h = hash(block);
        let tag = Self::tag(h);
        self.position(h, |b| b & !0xffff_ffff == tag).map(|i| (self.buckets[i] as u32).wrapping_sub(1))
    }

    /// Stores `value` for `block`, which must not be in the index.
    ///
    /// # Panics
    /// If the index holds `capacity` entries already, or `value` is `u32::MAX`.
    #[inline]
    pub fn insert(&mut self, block: BlockNo, value: u32) {
        assert!(self.len < self.capacity, "index full ({} entries)", self.capacity);
        assert!(value != u32::MAX, "index value out of range");
        let h = hash(block);
        let mut i = self.home(h);
        while self.buckets[i] != 0 {
            i = self.next(i);
        }
        self.buckets[i] = Self::tag(h) | (value as u64 + 1);
        self.len += 1;
    }

    /// Removes the entry of `block` whose value is `value`; `false` if there is none.
    #[inline]
    pub fn remove(&mut self, block: BlockNo, value: u32) -> bool {
        let h = hash(block);
        let want = Self::tag(h) | (value as u64 + 1);
        let Some(mut hole) = self.position(h, |b| b == want) else { return false };
        // Backward shift: a later entry of the cluster moves into the hole when the hole lies on
        // its probe path (cyclically between its home and its bucket), that is, unless its home
        // lies cyclically in (hole, j].
        let mut j = hole;
        loop {
            j = self.next(j);
            let b = self.buckets[j];
            if b == 0 {
                break;
            }
            let home = self.home(b);
            let stays = if hole < j { hole < home && home <= j } else { hole < home || home <= j };
            if !stays {
                self.buckets[hole] = b;
                hole = j;
            }
        }
        self.buckets[hole] = 0;
        self.len -= 1;
        true
    }

    /// Changes the value stored for `block` from `old` to `new` in place; `false` if absent.
    pub fn replace(&mut self, block: BlockNo, old: u32, new: u32) -> bool {
        let h = hash(block);
        let want = Self::tag(h) | (old as u64 + 1);
        match self.position(h, |b| b == want) {
            Some(i) => {
                self.buckets[i] = Self::tag(h) | (new as u64 + 1);
                true
            }
            None => false,
        }
    }

    /// Removes every entry.
    pub fn clear(&mut self) {
        self.buckets.fill(0);
        self.len = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::HashMap;

    #[test]
    fn hash_is_a_bijection_on_small_ranges() {
        let mut seen = std::collections::HashSet::new();
        for b in 0..100_000u64 {
            assert!(seen.insert(hash(b)));
        }
    }

    #[test]
    fn a_full_index_of_colliding_homes_still_finds_everything() {
        // Blocks chosen to share home buckets: every probe walks a long cluster that wraps.
        let mut ix = BlockIndex::with_capacity(6);
        let n = ix.buckets.len();
        let keys: Vec<u64> = (0..100_000u64).filter(|&b| ix.home(hash(b)) == n - 1).take(6).collect();
        for (v, &k) in keys.iter().enumerate() {
            ix.insert(k, v as u32);
        }
        for (v, &k) in keys.iter().enumerate() {
            assert_eq!(ix.find(k, |x| keys[x as usize] == k), Some(v as u32));
        }
        assert!(ix.remove(keys[0], 0));
        for (v, &k) in keys.iter().enumerate().skip(1) {
            assert_eq!(ix.find(k, |x| keys[x as usize] == k), Some(v as u32));
        }
        assert_eq!(ix.find(keys[0], |x| keys[x as usize] == keys[0]), None);
    }

    proptest! {
        /// Any sequence of inserts and removals leaves the index agreeing with a HashMap, with
        /// every entry reachable from its home bucket (no hole inside a probe path).
        #[test]
        fn matches_a_hashmap(ops in proptest::collection::vec((any::<bool>(), 0u64..64, any::<u64>()), 0..400)) {
            const CAP: u32 = 24;
            let mut ix = BlockIndex::with_capacity(CAP);
            let mut model: HashMap<u64, u32> = HashMap::new();
            let mut next = 0u32;
            for (ins, k, salt) in ops {
                // spread keys: small ids and large block numbers alike
                let key = if salt % 2 == 0 { k } else { k.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 20 };
                if ins {
                    if !model.contains_key(&key) && (model.len() as u32) < CAP {
                        ix.insert(key, next);
                        model.insert(key, next);
                        next += 1;
                    }
                } else if let Some(v) = model.remove(&key) {
                    prop_assert!(ix.remove(key, v));
                }
                prop_assert_eq!(ix.len() as usize, model.len());
                let owner: HashMap<u32, u64> = model.iter().map(|(&k, &v)| (v, k)).collect();
                for (&k, &v) in &model {
                    prop_assert_eq!(ix.find(k, |x| owner.get(&x) == Some(&k)), Some(v));
                    // These keys' 32-bit tags are distinct: the tag alone finds the entry.
                    prop_assert_eq!(ix.find_tag(k), Some(v));
                }
                for k in (0u64..64).filter(|k| !model.contains_key(k)) {
                    prop_assert_eq!(ix.find(k, |x| owner.get(&x) == Some(&k)), None);
                    prop_assert_eq!(ix.find_tag(k), None);
                }
            }
        }
    }
}
