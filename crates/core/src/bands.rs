//! The band layout of a drive-managed SMR drive: which 4 KiB blocks share a band.
//!
//! Both the drive model (which rewrites whole bands) and the SMR-aware cache policies that are
//! allowed to know the true layout (LRU-band) read the same [`BandMap`], so it lives here.

use crate::{BlockNo, ByteSize, BLOCK_SIZE};
use rand::{Rng, SeedableRng};
use serde::{Deserialize, Serialize};

/// How band sizes are laid out over the LBA range.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case", deny_unknown_fields)]
pub enum BandConfig {
    /// Every band has the same size (the SAC artifact uses 20.48 MB below 260 GB, the PORE
    /// artifact 18 MiB in practice).
    Fixed {
        /// Band size.
        size: ByteSize,
    },
    /// Each band's size drawn uniformly from `[min, max]` with a seeded generator (PORE §V-A:
    /// "band sizes ranging from 17 MB to 36 MB ... in a uniform distribution").
    UniformRandom {
        /// Smallest band.
        min: ByteSize,
        /// Largest band.
        max: ByteSize,
        /// Seed of the generator; the same seed gives the same layout.
        #[serde(default)]
        seed: u64,
    },
    /// Band size falling linearly from `outer` at LBA 0 to `inner` at the end of the drive, as
    /// Skylight measured on the ST5000AS0011 (36 MB at the outer diameter to 17 MB inner).
    LbaDependent {
        /// Band size at LBA 0.
        outer: ByteSize,
        /// Band size at the last LBA.
        inner: ByteSize,
    },
}

/// The `--bands` syntax: `fixed:SIZE`, `uniform:MIN:MAX:SEED`, `lba:OUTER:INNER`.
impl std::fmt::Display for BandConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            BandConfig::Fixed { size } => write!(f, "fixed:{size}"),
            BandConfig::UniformRandom { min, max, seed } => write!(f, "uniform:{min}:{max}:{seed}"),
            BandConfig::LbaDependent { outer, inner } => write!(f, "lba:{outer}:{inner}"),
        }
    }
}

impl Default for BandConfig {
    /// PORE's emulator: uniform 17–36 MB.
    fn default() -> Self {
        BandConfig::UniformRandom { min: ByteSize::mb(17), max: ByteSize::mb(36), seed: 0 }
    }
}

/// A band layout that cannot be built.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum BandError {
    /// A band size below one 4 KiB block.
    #[error("band {what} {size} is smaller than one 4 KiB block")]
    TooSmall {
        /// Which size: `size`, `min`, `max`, `outer size`, `inner size`.
        what: &'static str,
        /// The size given.
        size: ByteSize,
    },
    /// A uniform layout whose smallest band is larger than its largest.
    #[error("band min {min} is larger than max {max}")]
    MinAboveMax {
        /// The smallest band size given.
        min: ByteSize,
        /// The largest band size given.
        max: ByteSize,
    },
    /// More bands than a band id can number.
    #[error("{count} bands is more than this build supports")]
    TooMany {
        /// Bands the layout would have.
        count: u64,
    },
}

impl BandConfig {
    /// Checks the sizes: every band at least one block, `min <= max`.
    pub fn validate(&self) -> Result<(), BandError> {
        let ok = |b: ByteSize, what: &'static str| {
            if b.0 < BLOCK_SIZE {
                Err(BandError::TooSmall { what, size: b })
            } else {
                Ok(())
            }
        };
        match self {
            BandConfig::Fixed { size } => ok(*size, "size"),
            BandConfig::UniformRandom { min, max, .. } => {
                ok(*min, "min")?;
                ok(*max, "max")?;
                if min > max {
                    return Err(BandError::MinAboveMax { min: *min, max: *max });
                }
                Ok(())
            }
            BandConfig::LbaDependent { outer, inner } => {
                ok(*outer, "outer size")?;
                ok(*inner, "inner size")
            }
        }
    }
}

/// The band index of a block.
pub type BandId = u32;

/// Division by a fixed `d >= 1` without a divide instruction (a 64-bit `div` takes tens of
/// cycles; band lookups run once or twice per block request). With `m = ⌊2⁶⁴/d⌋ + 1 = (2⁶⁴ +
/// e)/d`, `0 < e <= d`, and `n = qd + r`: `n·m/2⁶⁴ = q + (r + n·e/2⁶⁴)/d`, whose floor is `q`
/// whenever `n·e < 2⁶⁴`, so for every `n <= (2⁶⁴ − 1)/d`. Larger `n` divide; powers of two shift.
#[derive(Clone, Copy, Debug)]
struct FixedDiv {
    d: u64,
    /// `⌊2⁶⁴/d⌋ + 1`, or 0 for a power of two.
    m: u64,
    shift: u32,
    /// Largest `n` the multiply-shift is exact for.
    limit: u64,
}

impl FixedDiv {
    fn new(d: u64) -> Self {
        assert!(d > 0, "division by zero");
        if d.is_power_of_two() {
            FixedDiv { d, m: 0, shift: d.trailing_zeros(), limit: u64::MAX }
        } else {
            // `d` is not a power of two, so ⌊(2⁶⁴ − 1)/d⌋ = ⌊2⁶⁴/d⌋.
            FixedDiv { d, m: u64::MAX / d + 1, shift: 0, limit: u64::MAX / d }
        }
    }

    #[inline]
    fn div(&self, n: u64) -> u64 {
        if self.m == 0 {
            n >> self.shift
        } else if n <= self.limit {
            ((n as u128 * self.m as u128) >> 64) as u64
        } else {
            n / self.d
        }
    }
}

/// A concrete band layout covering `[0, capacity)` blocks.
///
/// Band lookups are O(1): a multiply-shift for fixed layouts, one direct-indexed table entry
/// and a comparison for variable layouts.
#[derive(Clone, Debug)]
pub struct BandMap {
    kind: Kind,
    capacity_blocks: u64,
}

#[derive(Clone, Debug)]
enum Kind {
    Fixed {
        size: u64,
        count: u64,
        /// `block / size` as a multiply-shift: see [`FixedDiv`].
        div: FixedDiv,
    },
    Table {
        /// Start block of every band, then one past the end: `starts.len() == bands + 1`.
        starts: Vec<u64>,
        /// For each granule of `1 << shift` blocks (no larger than the smallest band, so it meets
        /// at most two bands): the band holding its first block in the high 32 bits, and in the
        /// low 32 the offset within the granule where the next band starts (`1 << shift` if none
        /// does). A lookup reads one entry and compares.
        coarse: Vec<u64>,
        shift: u32,
    },
}

impl BandMap {
    /// Builds the layout for a drive of `capacity` bytes (rounded up to whole blocks). The last
    /// band may be shorter than the configured size.
    pub fn build(cfg: &BandConfig, capacity: ByteSize) -> Result<BandMap, BandError> {
        cfg.validate()?;
        let capacity_blocks = capacity.0.div_ceil(BLOCK_SIZE).max(1);
        let blocks = |b: ByteSize| (b.0 / BLOCK_SIZE).max(1);
        let kind = match cfg {
            BandConfig::Fixed { size } => {
                let size = blocks(*size);
                Kind::Fixed { size, count: capacity_blocks.div_ceil(size), div: FixedDiv::new(size) }
            }
            BandConfig::UniformRandom { min, max, seed } => {
                let (lo, hi) = (blocks(*min), blocks(*max));
                let mut rng = rand_pcg::Pcg64Mcg::seed_from_u64(*seed);
                Self::table(capacity_blocks, |_| rng.random_range(lo..=hi))
            }
            BandConfig::LbaDependent { outer, inner } => {
                let (o, i) = (blocks(*outer) as f64, blocks(*inner) as f64);
                let cap = capacity_blocks as f64;
                Self::table(capacity_blocks, |start| {
                    (o + (i - o) * (start as f64 / cap)).round().max(1.0) as u64
                })
            }
        };
        if let Kind::Fixed { count, .. } = &kind {
            if *count > BandId::MAX as u64 {
                return Err(BandError::TooMany { count: *count });
            }
        }
        Ok(BandMap { kind, capacity_blocks })
    }

    fn table(capacity_blocks: u64, mut next_size: impl FnMut(u64) -> u64) -> Kind {
        let mut starts = vec![0u64];
        let mut min_size = u64::MAX;
        let mut at = 0u64;
        while at < capacity_blocks {
            let size = next_size(at).max(1);
            min_size = min_size.min(size);
            at = (at + size).min(capacity_blocks);
            starts.push(at);
        }
        // Granules no larger than the smallest band, so a granule spans at most two bands (a
        // band after the first lies wholly inside only if it is the last, cut short by the
        // capacity); at most 2^31 blocks, so an offset within one fits the entry's low half.
        let shift = (63 - min_size.max(1).leading_zeros()).min(31);
        let granule = 1u64 << shift;
        let granules = capacity_blocks.div_ceil(granule) as usize;
        let mut coarse = Vec::with_capacity(granules);
        let mut band = 0usize;
        for g in 0..granules as u64 {
            let first = g << shift;
            while starts[band + 1] <= first {
                band += 1;
            }
            // The last band runs on past the capacity (its end is no next band's start).
            let split =
                if band + 2 < starts.len() { (starts[band + 1] - first).min(granule) } else { granule };
            coarse.push((band as u64) << 32 | split);
        }
        Kind::Table { starts, coarse, shift }
    }

    /// Capacity covered, in blocks.
    pub fn capacity_blocks(&self) -> u64 {
        self.capacity_blocks
    }

    /// Number of bands.
    pub fn len(&self) -> usize {
        match &self.kind {
            Kind::Fixed { count, .. } => *count as usize,
            Kind::Table { starts, .. } => starts.len() - 1,
        }
    }

    /// `true` if there are no bands (never, for a built map).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The band holding `block`. Blocks beyond the capacity map to the last band's successors
    /// for fixed layouts and to the last band for table layouts; callers size the map to cover
    /// every block they use.
    #[inline]
    pub fn band_of(&self, block: BlockNo) -> BandId {
        match &self.kind {
            Kind::Fixed { div, .. } => div.div(block) as BandId,
            Kind::Table { starts, coarse, shift } => {
                let Some(&c) = coarse.get((block >> shift) as usize) else {
                    return (starts.len() - 2) as BandId;
                };
                let offset = block & ((1u64 << shift) - 1);
                (c >> 32) as BandId + (offset >= c & 0xffff_ffff) as BandId
            }
        }
    }

    /// First block and number of blocks of `band`.
    #[inline]
    pub fn band_range(&self, band: BandId) -> (BlockNo, u64) {
        match &self.kind {
            Kind::Fixed { size, .. } => {
                let start = band as u64 * size;
                (start, (*size).min(self.capacity_blocks.saturating_sub(start)).max(1))
            }
            Kind::Table { starts, .. } => {
                let b = band as usize;
                (starts[b], starts[b + 1] - starts[b])
            }
        }
    }

    /// Size of `band` in bytes.
    #[inline]
    pub fn band_bytes(&self, band: BandId) -> u64 {
        self.band_range(band).1 * BLOCK_SIZE
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn bad_layouts_are_typed_errors_naming_the_size() {
        let e = BandConfig::Fixed { size: ByteSize(100) }.validate().unwrap_err();
        assert_eq!(e, BandError::TooSmall { what: "size", size: ByteSize(100) });
        assert_eq!(e.to_string(), "band size 100B is smaller than one 4 KiB block");
        let (min, max) = (ByteSize::mb(30), ByteSize::mb(20));
        let e =
            BandMap::build(&BandConfig::UniformRandom { min, max, seed: 1 }, ByteSize::gb(1)).unwrap_err();
        assert_eq!(e, BandError::MinAboveMax { min, max });
    }

    #[test]
    fn fixed_layout() {
        let m = BandMap::build(&BandConfig::Fixed { size: ByteSize(4 * 4096) }, ByteSize(10 * 4096)).unwrap();
        assert_eq!(m.len(), 3);
        assert_eq!(m.band_of(0), 0);
        assert_eq!(m.band_of(3), 0);
        assert_eq!(m.band_of(4), 1);
        assert_eq!(m.band_range(2), (8, 2), "last band is short");
    }

    #[test]
    fn lba_dependent_shrinks() {
        let cfg = BandConfig::LbaDependent { outer: ByteSize::mb(36), inner: ByteSize::mb(17) };
        let m = BandMap::build(&cfg, ByteSize::gb(10)).unwrap();
        let first = m.band_bytes(0);
        let last = m.band_bytes(m.len() as BandId - 2);
        assert!(first > 35_000_000 && first <= 36_000_000, "{first}");
        assert!((17_000_000..18_000_000).contains(&last), "{last}");
    }

    #[test]
    fn uniform_random_is_seeded_and_in_range() {
        let cfg = BandConfig::default();
        let a = BandMap::build(&cfg, ByteSize::gb(2)).unwrap();
        let b = BandMap::build(&cfg, ByteSize::gb(2)).unwrap();
        for band in 0..a.len() as BandId - 1 {
            assert_eq!(a.band_range(band), b.band_range(band));
            let s = a.band_bytes(band);
            assert!((17_000_000 - 4096..=36_000_000).contains(&s), "{s}");
        }
        let c = BandMap::build(
            &BandConfig::UniformRandom { min: ByteSize::mb(17), max: ByteSize::mb(36), seed: 9 },
            ByteSize::gb(2),
        )
        .unwrap();
        assert_ne!(
            (0..20).map(|i| a.band_bytes(i)).collect::<Vec<_>>(),
            (0..20).map(|i| c.band_bytes(i)).collect::<Vec<_>>()
        );
    }

    #[test]
    fn rejects_bad_configs() {
        assert!(BandMap::build(&BandConfig::Fixed { size: ByteSize(10) }, ByteSize::gb(1)).is_err());
        assert!(BandMap::build(
            &BandConfig::UniformRandom { min: ByteSize::mb(30), max: ByteSize::mb(20), seed: 0 },
            ByteSize::gb(1)
        )
        .is_err());
    }

    #[test]
    fn fixed_division_is_exact_at_the_edges() {
        for d in
            [1u64, 2, 3, 5, 7, 4096, 4999, 5000, 65_537, (1 << 32) + 1, u64::MAX / 3, u64::MAX - 1, u64::MAX]
        {
            let f = FixedDiv::new(d);
            let mut ns = vec![0u64, 1, d - 1, d, d.saturating_add(1), u64::MAX, u64::MAX - 1, f.limit];
            for k in [1u64, 2, 3, 1000, 1 << 20, 1 << 40] {
                ns.push(d.saturating_mul(k));
                ns.push(d.saturating_mul(k).saturating_sub(1));
            }
            ns.push(f.limit.saturating_add(1));
            ns.push(f.limit.saturating_sub(1));
            for n in ns {
                assert_eq!(f.div(n), n / d, "{n} / {d}");
            }
        }
    }

    proptest! {
        #[test]
        fn fixed_division_matches_div(d in 1u64.., n in any::<u64>(), small in 0u64..(1 << 40)) {
            let f = FixedDiv::new(d);
            prop_assert_eq!(f.div(n), n / d);
            prop_assert_eq!(f.div(small), small / d);
            let near = f.limit.wrapping_sub(small % 1000);
            prop_assert_eq!(f.div(near), near / d);
        }
    }

    proptest! {
        #[test]
        fn lookup_matches_linear_search(min in 1u64..50, extra in 0u64..60, seed in 0u64..1000, cap in 1u64..5000, probes in proptest::collection::vec(0u64..5000, 1..50)) {
            let cfg = BandConfig::UniformRandom { min: ByteSize(min * 4096), max: ByteSize((min + extra) * 4096), seed };
            let m = BandMap::build(&cfg, ByteSize(cap * 4096)).unwrap();
            // bands tile [0, cap) exactly
            let mut at = 0;
            for b in 0..m.len() as BandId {
                let (s, n) = m.band_range(b);
                prop_assert_eq!(s, at);
                prop_assert!(n >= 1);
                at = s + n;
            }
            prop_assert_eq!(at, cap);
            for p in probes {
                let p = p % cap;
                let b = m.band_of(p);
                let (s, n) = m.band_range(b);
                prop_assert!(s <= p && p < s + n);
            }
            // beyond the capacity: the last band
            for p in [cap, cap + 1, cap + 4999, u64::MAX] {
                prop_assert_eq!(m.band_of(p), m.len() as BandId - 1);
            }
        }
    }
}
