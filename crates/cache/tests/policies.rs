//! Invariants every registered policy must keep, checked on random access sequences, plus
//! hand-checked cases per policy.

use proptest::prelude::*;
use shingled_cache::{BlockMeta, Cache, PolicyConfig, PolicyContext};
use shingled_core::{BandConfig, BandMap, BlockNo, ByteSize};
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

/// A context every policy can be built in: tiny bands of 4 blocks, a PB of 8 blocks.
fn context(capacity: u32) -> PolicyContext {
    let bands = BandMap::build(&BandConfig::Fixed { size: ByteSize(4 * 4096) }, ByteSize(1 << 30)).unwrap();
    PolicyContext {
        block_span: None,
        capacity_blocks: capacity,
        bands: Some(Arc::new(bands)),
        pb_blocks: Some(8),
        seed: 1,
        costs: Default::default(),
    }
}

fn cache_for(name: &str, capacity: u32) -> Cache {
    let cfg = PolicyConfig::default_for(name).unwrap();
    Cache::new(capacity, cfg.build(&context(capacity)).unwrap())
}

/// Replays `ops` (block, is_write) write-back/write-allocate and read-allocate; returns the
/// evictions in order.
fn replay(cache: &mut Cache, ops: &[(BlockNo, bool)]) -> Vec<BlockMeta> {
    let mut all = Vec::new();
    let mut ev = Vec::new();
    for &(b, w) in ops {
        if cache.access(b, w).is_none() {
            ev.clear();
            cache.insert(b, w, &mut ev);
            all.extend_from_slice(&ev);
        }
    }
    all
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    /// Capacity is respected, counts add up, no dirty data is lost, and replays are deterministic.
    #[test]
    fn invariants_hold_for_every_policy(
        capacity in 1u32..40,
        ops in proptest::collection::vec((0u64..120, any::<bool>()), 1..600),
    ) {
        for &name in PolicyConfig::NAMES {
            let mut cache = cache_for(name, capacity);
            let mut ev = Vec::new();
            // model: blocks whose newest data exists only in the cache
            let mut dirty_model: BTreeSet<BlockNo> = BTreeSet::new();
            let mut written_back: BTreeMap<BlockNo, u64> = BTreeMap::new();
            let (mut hits, mut misses) = (0u64, 0u64);
            for &(b, w) in &ops {
                match cache.access(b, w) {
                    Some(_) => hits += 1,
                    None => {
                        misses += 1;
                        ev.clear();
                        cache.insert(b, w, &mut ev);
                        let mut seen = BTreeSet::new();
                        for v in &ev {
                            prop_assert!(seen.insert(v.block), "{}: block {} evicted twice in one batch", name, v.block);
                            prop_assert_ne!(v.block, b, "{}: evicted the block being inserted", name);
                            if v.dirty {
                                prop_assert!(dirty_model.remove(&v.block), "{}: block {} written back but was not dirty", name, v.block);
                                *written_back.entry(v.block).or_default() += 1;
                            } else {
                                prop_assert!(!dirty_model.contains(&v.block), "{}: dirty block {} dropped as clean", name, v.block);
                            }
                        }
                    }
                }
                if w { dirty_model.insert(b); }
                let t = cache.table();
                prop_assert!(t.len() <= t.capacity(), "{}: over capacity", name);
                prop_assert_eq!(t.dirty_len() as usize, dirty_model.len(), "{}: dirty count", name);
                prop_assert!(cache.peek(b).is_some(), "{}: just-accessed block not cached", name);
            }
            prop_assert_eq!(hits + misses, ops.len() as u64);
            // every dirty block of the model is still dirty in the cache
            for b in &dirty_model {
                prop_assert!(cache.peek(*b).map(|m| m.dirty).unwrap_or(false), "{}: lost dirty block {}", name, b);
            }
            // determinism
            let mut again = cache_for(name, capacity);
            let mut first = cache_for(name, capacity);
            prop_assert_eq!(replay(&mut first, &ops), replay(&mut again, &ops), "{}: not deterministic", name);
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    /// With a cleaner marking dirty blocks clean behind the decisions (`Cache::mark_clean`, what
    /// the block cache's `clean` does) and invalidations (write-around) mixed in: every policy
    /// still finds a victim, respects the capacity, writes back exactly the blocks still dirty
    /// and drops only clean ones.
    #[test]
    fn mark_clean_and_invalidate_keep_every_policy_consistent(
        capacity in 1u32..40,
        ops in proptest::collection::vec((0u64..120, 0u8..8), 1..600),
    ) {
        for &name in PolicyConfig::NAMES {
            let mut cache = cache_for(name, capacity);
            let mut ev = Vec::new();
            let mut dirty_model: BTreeSet<BlockNo> = BTreeSet::new();
            for &(b, op) in &ops {
                match op {
                    // a cleaner pass over every dirty block
                    6 => {
                        for d in std::mem::take(&mut dirty_model) {
                            cache.mark_clean(d);
                        }
                    }
                    7 => {
                        cache.invalidate(b);
                        dirty_model.remove(&b);
                    }
                    _ => {
                        let w = op % 2 == 1;
                        if cache.access(b, w).is_none() {
                            ev.clear();
                            cache.insert(b, w, &mut ev);
                            for v in &ev {
                                if v.dirty {
                                    prop_assert!(dirty_model.remove(&v.block), "{}: block {} written back but was clean", name, v.block);
                                } else {
                                    prop_assert!(!dirty_model.contains(&v.block), "{}: dirty block {} dropped as clean", name, v.block);
                                }
                            }
                        }
                        if w { dirty_model.insert(b); }
                    }
                }
                let t = cache.table();
                prop_assert!(t.len() <= t.capacity(), "{}: over capacity", name);
                prop_assert_eq!(t.dirty_len() as usize, dirty_model.len(), "{}: dirty count", name);
            }
        }
    }
}

/// LRU by hand. Capacity 3; accesses (block, write):
///   1w 2w 3r       cache [3,2,1] (front first), dirty {1,2}
///   1r             hit;  order [1,3,2]
///   4w             miss, full: victim = LRU = 2 (dirty → write-back); order [4,1,3]
///   3w             hit;  3 becomes dirty; order [3,4,1]
///   5r             miss: victim 1 (dirty); order [5,3,4]
///   6r             miss: victim 4 (dirty); order [6,5,3]
///   5r             hit
///   7w             miss: victim 3 (dirty)
/// Evictions in order: 2(d) 1(d) 4(d) 3(d); hits: 3 (1r, 3w, 5r).
#[test]
fn lru_by_hand() {
    let mut c = cache_for("lru", 3);
    let ops = [
        (1, true),
        (2, true),
        (3, false),
        (1, false),
        (4, true),
        (3, true),
        (5, false),
        (6, false),
        (5, false),
        (7, true),
    ];
    let ev = replay(&mut c, &ops);
    let got: Vec<(BlockNo, bool)> = ev.iter().map(|m| (m.block, m.dirty)).collect();
    assert_eq!(got, vec![(2, true), (1, true), (4, true), (3, true)]);
    let cached: BTreeSet<BlockNo> = c.table().used_slots().map(|s| c.table().meta(s).block).collect();
    assert_eq!(cached, BTreeSet::from([5, 6, 7]));
    assert_eq!(c.table().dirty_len(), 1, "only 7 is dirty");
}

/// Eight times `capacity` accesses: mostly a hot set in clusters of 64 blocks (bands see
/// several blocks each), plus a cold sweep, so that batches, band targets and both clean and dirty
/// victims all occur.
fn churn(capacity: u32, seed: u64) -> Vec<(BlockNo, bool)> {
    use rand_pcg::rand_core::{RngCore, SeedableRng};
    let mut rng = rand_pcg::Pcg64Mcg::seed_from_u64(seed);
    (0..8 * capacity as u64)
        .map(|i| {
            let r = rng.next_u64();
            let b = if r % 4 == 0 { 10 * capacity as u64 + i } else { (r >> 8) % (2 * capacity as u64) };
            (b, (r >> 4) % 3 != 0)
        })
        .collect()
}

/// Looking ahead at the next victims (on by default from `LOOK_AHEAD_MIN_SLOTS` slots: the
/// victims' metas, index lines and policy state prefetched, SAC's walk along its next batch's
/// list) only prefetches: every registered policy evicts the same blocks in the same order with
/// it on and off, over a stream that evicts several times the capacity, writes included.
#[test]
fn looking_ahead_changes_no_eviction() {
    let capacity = shingled_cache::LOOK_AHEAD_MIN_SLOTS;
    let ops = churn(capacity, 0x100c);
    for &name in PolicyConfig::NAMES {
        let mut on = cache_for(name, capacity);
        let mut off = cache_for(name, capacity);
        assert!(on.table().look_ahead(), "{name}: look-ahead should be on at {capacity} slots");
        off.set_look_ahead(false);
        let (a, b) = (replay(&mut on, &ops), replay(&mut off, &ops));
        assert!(a.len() > 4 * capacity as usize, "{name}: only {} evictions", a.len());
        assert_eq!(a.len(), b.len(), "{name}: eviction counts differ");
        if let Some(i) = (0..a.len()).find(|&i| a[i] != b[i]) {
            panic!("{name}: eviction {i} differs: {:?} with look-ahead, {:?} without", a[i], b[i]);
        }
    }
}

/// A cache of every registered policy built with a block span, so that blocks below it are
/// found through direct arrays (the block table's, ARC's and S3-FIFO's ghosts') and the rest
/// through the hash indexes.
fn cache_with_span(name: &str, capacity: u32, span: u64) -> Cache {
    let cfg = PolicyConfig::default_for(name).unwrap();
    let ctx = PolicyContext { block_span: Some(span), ..context(capacity) };
    Cache::with_span(capacity, cfg.build(&ctx).unwrap(), Some(span))
}

/// Replays `ops` and returns, per access, whether it hit, and every eviction in order.
fn replay_outcomes(cache: &mut Cache, ops: &[(BlockNo, bool)]) -> (Vec<bool>, Vec<BlockMeta>) {
    let mut hits = Vec::with_capacity(ops.len());
    let mut all = Vec::new();
    let mut ev = Vec::new();
    for &(b, w) in ops {
        let hit = cache.access(b, w).is_some();
        hits.push(hit);
        if !hit {
            ev.clear();
            cache.insert(b, w, &mut ev);
            all.extend_from_slice(&ev);
        }
    }
    (hits, all)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    /// Where a block is found (a direct array below the span, the hash index beyond it, the
    /// span covering none, some or all of the blocks) changes no outcome of any policy: the
    /// same hits and the same evictions in the same order as without a span.
    #[test]
    fn a_block_span_changes_no_outcome(
        capacity in 1u32..40,
        span in prop_oneof![Just(0u64), 1u64..130, Just(200_000u64)],
        ops in proptest::collection::vec((0u64..120, any::<bool>()), 1..600),
    ) {
        // A few blocks beyond every span (still inside the context's bands).
        let ops: Vec<(BlockNo, bool)> =
            ops.into_iter().map(|(b, w)| (if b % 17 == 16 { 250_000 + b } else { b }, w)).collect();
        for &name in PolicyConfig::NAMES {
            let mut hashed = cache_for(name, capacity);
            let mut dense = cache_with_span(name, capacity, span);
            let (h1, e1) = replay_outcomes(&mut hashed, &ops);
            let (h2, e2) = replay_outcomes(&mut dense, &ops);
            prop_assert_eq!(h1, h2, "{}: hits differ", name);
            prop_assert_eq!(e1, e2, "{}: evictions differ", name);
            for &(b, _) in &ops {
                prop_assert_eq!(hashed.peek(b).copied(), dense.peek(b).copied(), "{}: block {}", name, b);
            }
        }
    }
}

/// The same at a size where the caches look ahead at their victims, over a stream that evicts
/// several times the capacity, with a span covering half the blocks.
#[test]
fn a_block_span_changes_no_eviction_with_look_ahead() {
    let capacity = shingled_cache::LOOK_AHEAD_MIN_SLOTS;
    let ops = churn(capacity, 0x5ba1);
    for &name in PolicyConfig::NAMES {
        let mut hashed = cache_for(name, capacity);
        let mut dense = cache_with_span(name, capacity, capacity as u64);
        let (h1, e1) = replay_outcomes(&mut hashed, &ops);
        let (h2, e2) = replay_outcomes(&mut dense, &ops);
        assert!(e1.len() > 4 * capacity as usize, "{name}: only {} evictions", e1.len());
        assert_eq!(h1, h2, "{name}: hits differ");
        if let Some(i) = (0..e1.len().min(e2.len())).find(|&i| e1[i] != e2[i]) {
            panic!("{name}: eviction {i} differs: {:?} hashed, {:?} dense", e1[i], e2[i]);
        }
        assert_eq!(e1.len(), e2.len(), "{name}: eviction counts differ");
    }
}
