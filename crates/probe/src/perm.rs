//! A seeded random permutation of `0..n` in O(1) memory, for "write the range in random order"
//! over ranges of millions of blocks: a balanced Feistel network over the smallest even number of
//! bits that covers `n`, with cycle walking to stay below `n`. Keys and round function come from
//! SplitMix64's finaliser ([`SplitMix64::mix`]).

use shingled_core::SplitMix64;

/// A bijection on `0..n` chosen by a seed. [`Permutation::get`] is O(1) expected (cycle walking
/// takes at most 4 rounds of the network on average, since the network's domain is below `4n`).
#[derive(Clone, Debug)]
pub struct Permutation {
    n: u64,
    half_bits: u32,
    mask: u64,
    keys: [u64; 4],
}

impl Permutation {
    /// A permutation of `0..n` (`n` may be 0 or 1).
    pub fn new(n: u64, seed: u64) -> Permutation {
        let bits = 64 - n.saturating_sub(1).leading_zeros();
        let half_bits = bits.div_ceil(2).max(1);
        let mut s = SplitMix64::mix(seed ^ 0x5eed_5eed_5eed_5eed);
        let keys = std::array::from_fn(|_| {
            s = SplitMix64::mix(s.wrapping_add(SplitMix64::GAMMA));
            s
        });
        Permutation { n, half_bits, mask: (1 << half_bits) - 1, keys }
    }

    /// Number of elements.
    pub fn len(&self) -> u64 {
        self.n
    }

    /// `true` for a permutation of nothing.
    pub fn is_empty(&self) -> bool {
        self.n == 0
    }

    fn network(&self, x: u64) -> u64 {
        let (mut l, mut r) = (x >> self.half_bits, x & self.mask);
        for k in self.keys {
            let f = SplitMix64::mix(r ^ k) & self.mask;
            (l, r) = (r, l ^ f);
        }
        (l << self.half_bits) | r
    }

    /// The `i`-th element (`i < n`).
    pub fn get(&self, i: u64) -> u64 {
        debug_assert!(i < self.n, "index {i} of a permutation of {}", self.n);
        let mut x = i;
        loop {
            x = self.network(x);
            if x < self.n {
                return x;
            }
        }
    }

    /// The elements in permutation order.
    pub fn iter(&self) -> impl Iterator<Item = u64> + '_ {
        (0..self.n).map(|i| self.get(i))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn is_a_bijection_for_awkward_sizes() {
        for n in [0u64, 1, 2, 3, 5, 16, 17, 1000, 4097] {
            let p = Permutation::new(n, n * 7 + 1);
            let mut seen = vec![false; n as usize];
            for x in p.iter() {
                assert!(!seen[x as usize], "n={n}: {x} twice");
                seen[x as usize] = true;
            }
            assert!(seen.iter().all(|&s| s), "n={n}");
        }
    }

    #[test]
    fn seeds_differ_and_order_looks_random() {
        let a: Vec<u64> = Permutation::new(1000, 1).iter().collect();
        let b: Vec<u64> = Permutation::new(1000, 2).iter().collect();
        assert_ne!(a, b);
        // Not close to the identity: few fixed points, few ascending neighbours.
        let fixed = a.iter().enumerate().filter(|(i, &x)| *i as u64 == x).count();
        let asc = a.windows(2).filter(|w| w[1] == w[0] + 1).count();
        assert!(fixed < 10 && asc < 10, "{fixed} {asc}");
    }
}
