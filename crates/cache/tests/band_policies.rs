//! Hand-checked cases for the band-evicting policies: LRU-band and MOST.

use shingled_cache::policy::most::{MostConfig, MostScore};
use shingled_cache::{BlockMeta, Cache, PolicyConfig, PolicyContext};
use shingled_core::{BandConfig, BandMap, BlockNo, ByteSize};
use std::sync::Arc;

/// Bands of 4 blocks: band = block / 4.
fn ctx(capacity: u32) -> PolicyContext {
    let bands = BandMap::build(&BandConfig::Fixed { size: ByteSize(4 * 4096) }, ByteSize(1 << 30)).unwrap();
    PolicyContext { capacity_blocks: capacity, bands: Some(Arc::new(bands)), ..Default::default() }
}

/// Replays `ops` ('w'/'r', block) with write-allocate and read-allocate; returns each eviction
/// batch as (block, dirty) pairs.
fn batches(cache: &mut Cache, ops: &[(char, BlockNo)]) -> Vec<Vec<(BlockNo, bool)>> {
    let mut out = Vec::new();
    let mut ev: Vec<BlockMeta> = Vec::new();
    for &(op, b) in ops {
        let w = op == 'w';
        if cache.access(b, w).is_none() {
            ev.clear();
            cache.insert(b, w, &mut ev);
            if !ev.is_empty() {
                out.push(ev.iter().map(|m| (m.block, m.dirty)).collect());
            }
        }
    }
    out
}

/// LRU-band, capacity 5, bands of 4 blocks.
///
/// ```text
/// w0 w1 r5 w8 w2     cache MRU→LRU [2 8 5 1 0]  (5 clean, others dirty)
/// w9   full: LRU = 0, band 0 → evict {0,1,2} (all dirty)        cache [9 8 5]
/// r4   insert clean                                              [4 9 8 5]
/// w12  insert                                                    [12 4 9 8 5]
/// r8   hit                                                       [8 12 4 9 5]
/// w16  full: LRU = 5, band 1 → evict {4,5} (both clean)          [16 8 12 9]
/// w13  insert                                                    [13 16 8 12 9]
/// w20  full: LRU = 9, band 2 → evict {8,9} (both dirty)          [20 13 16 12]
/// ```
#[test]
fn lru_band_by_hand() {
    let p = "lru-band".parse::<PolicyConfig>().unwrap().build(&ctx(5)).unwrap();
    let mut c = Cache::new(5, p);
    let got = batches(
        &mut c,
        &[
            ('w', 0),
            ('w', 1),
            ('r', 5),
            ('w', 8),
            ('w', 2),
            ('w', 9),
            ('r', 4),
            ('w', 12),
            ('r', 8),
            ('w', 16),
            ('w', 13),
            ('w', 20),
        ],
    );
    assert_eq!(
        got,
        vec![vec![(0, true), (1, true), (2, true)], vec![(4, false), (5, false)], vec![(8, true), (9, true)],]
    );
    let mut left: Vec<BlockNo> = c.table().used_slots().map(|s| c.table().meta(s).block).collect();
    left.sort();
    assert_eq!(left, vec![12, 13, 16, 20]);
}

/// MOST (dirty score), capacity 5, bands of 4 blocks. Ties between bands of equal count go to
/// the band that reached that count most recently.
///
/// ```text
/// w0 w1 w4 r8 w5   dirty per band: b0 = 2 (0,1), b1 = 2 (4,5; reached 2 last), b2 = 0 (8 clean)
/// w12  full: max dirty tie b0/b1 → b1 (most recent) → evict {4,5}; insert 12   b3 = 1
/// w13  insert (4 of 5 used → 5)                                                 b3 = 2 (latest)
/// w2   full: tie b0 = 2 / b3 = 2 → b3 → evict {12,13}; insert 2                 b0 = 3
/// w9   insert                                                                   b2: 8 clean, 9 dirty
/// w16  full: max dirty b0 = 3 → evict {0,1,2}
/// ```
#[test]
fn most_by_hand() {
    let p = "most".parse::<PolicyConfig>().unwrap().build(&ctx(5)).unwrap();
    let mut c = Cache::new(5, p);
    let got = batches(
        &mut c,
        &[
            ('w', 0),
            ('w', 1),
            ('w', 4),
            ('r', 8),
            ('w', 5),
            ('w', 12),
            ('w', 13),
            ('w', 2),
            ('w', 9),
            ('w', 16),
        ],
    );
    assert_eq!(
        got,
        vec![vec![(4, true), (5, true)], vec![(12, true), (13, true)], vec![(0, true), (1, true), (2, true)]]
    );
}

/// With no dirty block cached, MOST falls back to the band with the most cached blocks; with
/// `score = cached` it counts clean blocks too, so a band of clean blocks can go before a band
/// with fewer, dirty ones.
#[test]
fn most_scores() {
    // r0 r1 r2 r8 → all clean; r12: full (4): max cached band 0 (3 blocks) → evict {0,1,2}
    let p = "most".parse::<PolicyConfig>().unwrap().build(&ctx(4)).unwrap();
    let mut c = Cache::new(4, p);
    assert_eq!(
        batches(&mut c, &[('r', 0), ('r', 1), ('r', 2), ('r', 8), ('r', 12)]),
        vec![vec![(0, false), (1, false), (2, false)]]
    );
    // r0 r1 r2 w8 → dirty score picks band 2 ({8}); cached score picks band 0 ({0,1,2})
    let ops = [('r', 0), ('r', 1), ('r', 2), ('w', 8), ('r', 12)];
    let p = "most".parse::<PolicyConfig>().unwrap().build(&ctx(4)).unwrap();
    assert_eq!(batches(&mut Cache::new(4, p), &ops), vec![vec![(8, true)]]);
    let cfg = MostConfig { band_size: None, score: MostScore::Cached };
    let p = PolicyConfig::Most(cfg).build(&ctx(4)).unwrap();
    assert_eq!(batches(&mut Cache::new(4, p), &ops), vec![vec![(0, false), (1, false), (2, false)]]);
}

/// MOST with an assumed band size ignores the true bands; LRU-band and MOST without one need a
/// band map.
#[test]
fn band_sources() {
    // assumed 8-block bands: 0..8 is one band, so w0 w5 w9 r12 w16 (cap 4): band 0 has 2 dirty
    let cfg = MostConfig { band_size: Some(ByteSize(8 * 4096)), score: MostScore::Dirty };
    let p = PolicyConfig::Most(cfg).build(&ctx(4)).unwrap();
    assert_eq!(
        batches(&mut Cache::new(4, p), &[('w', 0), ('w', 5), ('w', 9), ('r', 12), ('w', 16)]),
        vec![vec![(0, true), (5, true)]]
    );
    let no_bands = PolicyContext { capacity_blocks: 4, ..Default::default() };
    for name in ["lru-band", "most"] {
        let e = name.parse::<PolicyConfig>().unwrap().build(&no_bands).err().expect("needs bands");
        assert!(e.to_string().contains("band"), "{e}");
    }
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig { cases: 128, ..Default::default() })]

    /// MOST against a model of what is cached: every eviction takes exactly the cached blocks of
    /// one band, in block order, and that band holds the most cached dirty blocks (the most
    /// cached blocks when none is dirty, or always with `score = cached`); invalidations (writes
    /// around the cache) remove single blocks from their band.
    #[test]
    fn most_evicts_whole_bands_of_the_highest_score(
        capacity in 1u32..12,
        cached_score in proptest::bool::ANY,
        ops in proptest::collection::vec((0u64..40, 0u8..10), 1..300),
    ) {
        let cfg = MostConfig { band_size: None, score: if cached_score { MostScore::Cached } else { MostScore::Dirty } };
        let mut c = Cache::new(capacity, PolicyConfig::Most(cfg).build(&ctx(capacity)).unwrap());
        let mut model = std::collections::BTreeMap::<BlockNo, bool>::new();
        let mut ev: Vec<BlockMeta> = Vec::new();
        for (b, op) in ops {
            if op == 0 {
                proptest::prop_assert_eq!(c.invalidate(b).is_some(), model.remove(&b).is_some());
                continue;
            }
            let w = op % 2 == 0;
            if c.access(b, w).is_some() {
                proptest::prop_assert!(model.contains_key(&b), "hit on {} not cached", b);
                *model.get_mut(&b).unwrap() |= w;
                continue;
            }
            proptest::prop_assert!(!model.contains_key(&b), "miss on cached {}", b);
            let score = |band: u64, m: &std::collections::BTreeMap<BlockNo, bool>, dirty_only: bool| {
                m.iter().filter(|&(&k, &d)| k / 4 == band && (d || !dirty_only)).count()
            };
            let full = model.len() as u32 == capacity;
            let any_dirty = model.values().any(|&d| d);
            let dirty_only = !cached_score && any_dirty;
            let best = (0..10).map(|band| score(band, &model, dirty_only)).max().unwrap();
            ev.clear();
            c.insert(b, w, &mut ev);
            proptest::prop_assert_eq!(ev.is_empty(), !full);
            if let Some(first) = ev.first() {
                let band = first.block / 4;
                let expected: Vec<(BlockNo, bool)> =
                    model.iter().filter(|&(&k, _)| k / 4 == band).map(|(&k, &d)| (k, d)).collect();
                let got: Vec<(BlockNo, bool)> = ev.iter().map(|m| (m.block, m.dirty)).collect();
                proptest::prop_assert_eq!(&got, &expected, "band {}", band);
                proptest::prop_assert_eq!(score(band, &model, dirty_only), best, "band {} is not a best band", band);
                for (k, _) in expected {
                    model.remove(&k);
                }
            }
            model.insert(b, w);
        }
    }
}
