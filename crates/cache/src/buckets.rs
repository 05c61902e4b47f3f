//! Counters with O(1) increment, decrement and arg-max: the structure behind MOST's "band with
//! the most cached blocks".

use crate::{Links, List};

/// Non-negative counts for keys `0..n` (grown on demand) with the key of the largest count
/// available in O(1). Counts change by one at a time; keys of equal count are kept in a list per
/// count (the most recently changed first), so ties break deterministically.
#[derive(Clone, Debug, Default)]
pub struct MaxBuckets {
    counts: Vec<u32>,
    links: Links,
    /// `buckets[c]` lists the keys whose count is `c` (`c >= 1`; index 0 unused).
    buckets: Vec<List>,
    max: u32,
}

impl MaxBuckets {
    /// Empty counters.
    pub fn new() -> Self {
        MaxBuckets::default()
    }

    fn ensure_key(&mut self, key: u32) {
        let need = key as usize + 1;
        if need > self.counts.len() {
            let n = need.max(self.counts.len() * 2);
            self.counts.resize(n, 0);
            self.links.grow(n);
        }
    }

    /// The count of `key`.
    #[inline]
    pub fn get(&self, key: u32) -> u32 {
        self.counts.get(key as usize).copied().unwrap_or(0)
    }

    /// Adds one to `key`.
    pub fn inc(&mut self, key: u32) {
        self.ensure_key(key);
        let c = self.counts[key as usize];
        if c > 0 {
            self.links.remove(&mut self.buckets[c as usize], key);
        }
        let c = c + 1;
        self.counts[key as usize] = c;
        if self.buckets.len() <= c as usize {
            self.buckets.resize(c as usize + 1, List::default());
        }
        self.links.push_front(&mut self.buckets[c as usize], key);
        self.max = self.max.max(c);
    }

    /// Subtracts one from `key`, whose count must be positive.
    pub fn dec(&mut self, key: u32) {
        let c = self.counts[key as usize];
        debug_assert!(c > 0, "decrementing a zero count");
        self.links.remove(&mut self.buckets[c as usize], key);
        self.counts[key as usize] = c - 1;
        if c > 1 {
            self.links.push_front(&mut self.buckets[c as usize - 1], key);
        }
        while self.max > 0 && self.buckets[self.max as usize].is_empty() {
            self.max -= 1;
        }
    }

    /// The key with the largest positive count and that count (among equals, the one that
    /// reached it most recently).
    #[inline]
    pub fn max(&self) -> Option<(u32, u32)> {
        (self.max > 0)
            .then(|| (self.buckets[self.max as usize].front().expect("non-empty max bucket"), self.max))
    }

    /// Heap bytes used.
    pub fn heap_bytes(&self) -> usize {
        self.counts.len() * 4 + self.links.heap_bytes() + self.buckets.len() * std::mem::size_of::<List>()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn max_matches_a_scan(ops in proptest::collection::vec((0u32..20, any::<bool>()), 0..300)) {
            let mut b = MaxBuckets::new();
            let mut model = [0u32; 20];
            for (k, up) in ops {
                if up { b.inc(k); model[k as usize] += 1; }
                else if model[k as usize] > 0 { b.dec(k); model[k as usize] -= 1; }
                let best = *model.iter().max().unwrap();
                match b.max() {
                    None => prop_assert_eq!(best, 0),
                    Some((key, c)) => { prop_assert_eq!(c, best); prop_assert_eq!(model[key as usize], best); }
                }
                for (i, &m) in model.iter().enumerate() { prop_assert_eq!(b.get(i as u32), m); }
            }
        }
    }
}
