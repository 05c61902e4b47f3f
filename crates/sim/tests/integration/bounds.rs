//! The offline schemes and the offline RMW bound: Belady's MIN worked out by hand and never
//! beaten on random traces; the RMW bound never above any policy's RMWs; and, on tiny traces, an
//! exhaustive search over every choice of victims (any non-empty set of cached blocks, dirty
//! ones written back in any order) on the DM-SMR model itself, which finds the fewest RMWs
//! possible and checks the bound below it and band-min above it.

use super::properties::{arb_mode, arb_trace};
use super::*;
use proptest::prelude::*;
use shingled_core::SplitMix64;
use shingled_device::DmSmr;
use shingled_sim::future::{prepass_reader, Sizes};
use shingled_sim::sample::InMemory;
use std::collections::HashMap;

/// A DM-SMR drive of `blocks` blocks in bands of `band` blocks with a PB of `pb` blocks.
fn small_smr(blocks: u64, pb: u64, band: u64, flavour: PbFlavour, free: PbFree) -> DmSmr {
    DmSmrConfig {
        capacity: ByteSize(blocks * 4096),
        pb_size: SizeSpec::Absolute(ByteSize(pb * 4096)),
        pb_flavour: flavour,
        pb_free: free,
        bands: BandConfig::Fixed { size: ByteSize(band * 4096) },
        ..DmSmrConfig::default()
    }
    .build(&BuildContext::whole_drive(ByteSize(blocks * 4096)))
    .unwrap()
}

/// What a replay of `reqs` under `policy` counts: (hits, dirty evictions, RMWs), and the
/// offline bound its pre-pass computed (offline policies only).
fn replay(
    mode: Mode,
    policy: &str,
    capacity: u32,
    drive: DmSmr,
    pb: u64,
    reqs: &[Request],
) -> ((u64, u64, u64), Option<shingled_sim::OfflineBound>) {
    let cfg = PolicyConfig::default_for(policy).unwrap();
    let bands = drive.band_map().cloned();
    let ctx = PolicyContext {
        block_span: None,
        capacity_blocks: capacity,
        bands: bands.clone().map(Arc::new),
        pb_blocks: Some(pb),
        seed: 0,
        costs: Default::default(),
    };
    let cache = Cache::new(capacity, cfg.build(&ctx).unwrap());
    let mut engine = Engine::new(mode, Some(cache), SsdConfig::default().build().unwrap(), Box::new(drive));
    let mut bound = None;
    if cfg.needs_future() {
        let reader = Box::new(InMemory::new(Arc::new(reqs.to_vec()), "test"));
        let sizes = Sizes { cache_blocks: capacity as u64, pb_blocks: Some(pb), warm_at: None };
        let p = prepass_reader(reader, None, mode, bands.as_ref(), sizes).unwrap();
        bound = p.bound;
        engine = engine.with_future(Box::new(p.future));
    }
    for r in reqs {
        engine.process(r);
    }
    let c = engine.counters();
    ((c.read_hits + c.write_hits, c.dirty_evictions, c.drive.rmws), bound)
}

fn big_smr() -> DmSmr {
    small_smr(1024, 8, 4, PbFlavour::AppendOnly, PbFree::Immediate)
}

#[test]
fn belady_hand_checked() {
    // Reads of 0 1 2 0 1, two slots. MIN: 2 evicts 1 (next used at 4, 0 at 3); 0 hits; 1 evicts
    // 2 (never used again). One hit. LRU: 2 evicts 0, 0 evicts 1, 1 evicts 2: none.
    let r = reqs(&[('r', 0), ('r', 1), ('r', 2), ('r', 0), ('r', 1)]);
    assert_eq!(replay(Mode::ReadWrite, "belady", 2, big_smr(), 8, &r).0, (1, 0, 0));
    assert_eq!(replay(Mode::ReadWrite, "lru", 2, big_smr(), 8, &r).0, (0, 0, 0));
    // Writes of 0 1 2 0 1 0. MIN: 2 evicts 1 (next at 4; 0 at 3), written back; 0 hits; 1
    // evicts 2 (never again), written back; 0 hits. Two hits, two write-backs. LRU: 2 evicts 0,
    // 0 evicts 1, 1 evicts 2, 0 hits: one hit, three write-backs.
    let w = reqs(&[('w', 0), ('w', 1), ('w', 2), ('w', 0), ('w', 1), ('w', 0)]);
    assert_eq!(replay(Mode::ReadWrite, "belady", 2, big_smr(), 8, &w).0, (2, 2, 0));
    assert_eq!(replay(Mode::ReadWrite, "lru", 2, big_smr(), 8, &w).0, (1, 3, 0));
    // Read-only mode: a write drops the cached copy (and a block whose next access is a write
    // is of no use to keep). Reads 0 1, write 0 (drops 0), reads 2 (free slot) 1 (hit) 0 (full:
    // 1 is read again at 6, 2 never: 2 goes) 1 (hit): two hits.
    let ro = reqs(&[('r', 0), ('r', 1), ('w', 0), ('r', 2), ('r', 1), ('r', 0), ('r', 1)]);
    assert_eq!(replay(Mode::ReadOnly, "belady", 2, big_smr(), 8, &ro).0 .0, 2);
}

#[test]
fn band_min_hand_checked() {
    // Write-only, three slots, bands of 4 blocks (0-3 band 0, 4-7 band 1, 8-11 band 2), PB of 2,
    // horizon 128. Writes 0 1 4 8 5 0 1 at times 0..6. At 8 (time 3) the cache {0, 1, 4} is all
    // dirty: band 0 scores 2 blocks × 2 accesses to its next write (time 5) = 4, band 1 1 × 1:
    // 0 and 1 are written back together. 5 fills the free slot. At 0 (time 5): band 1 (4, 5;
    // never written again: 2 × 128) beats band 2 (8: 1 × 128): 4 and 5 go, and the PB, full
    // with 0 and 1, cleans band 0 (one RMW). 1 fills the free slot. No hit, four write-backs,
    // one RMW.
    let w = reqs(&[('w', 0), ('w', 1), ('w', 4), ('w', 8), ('w', 5), ('w', 0), ('w', 1)]);
    let drive = small_smr(64, 2, 4, PbFlavour::AppendOnly, PbFree::Immediate);
    let ((hits, wb, rmws), bound) = replay(Mode::WriteOnly, "band-min", 3, drive, 2, &w);
    assert_eq!((hits, wb, rmws), (0, 4, 1));
    // C + P = 5 and five distinct blocks are written: the bound is 0.
    assert_eq!(bound.unwrap().rmw_lower_bound, 0);
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 40, ..ProptestConfig::default() })]

    /// No policy gets more hits than Belady's MIN, and none cleans fewer bands than the
    /// offline bound, in any mode.
    #[test]
    fn belady_and_the_rmw_bound_hold(trace in arb_trace(), mode in arb_mode(), capacity in 2u32..12, pb in 1u64..6) {
        let drive = || small_smr(256, pb, 4, PbFlavour::AppendOnly, PbFree::AtHead);
        let ((best, _, _), bound) = replay(mode, "belady", capacity, drive(), pb, &trace);
        let lb = bound.unwrap().rmw_lower_bound;
        for &policy in PolicyConfig::NAMES {
            let ((hits, _, rmws), _) = replay(mode, policy, capacity, drive(), pb, &trace);
            prop_assert!(hits <= best, "{policy} {hits} hits, belady {best}");
            prop_assert!(rmws >= lb, "{policy} {rmws} RMWs, bound {lb}");
        }
    }
}

/// What two states of the search are merged by: the cache and the PB log.
type StateKey = (Vec<(u64, bool)>, Vec<Option<u64>>);

/// A state of the search: the cache (block → dirty, in block order) and the drive.
#[derive(Clone)]
struct State {
    cache: Vec<(u64, bool)>,
    drive: DmSmr,
    rmws: u64,
}

/// The fewest RMWs any choice of victims gives on `accesses` (block, write) in write-caching
/// (read-write) mode: a breadth-first search over every non-empty set of cached blocks evicted
/// at each miss of a full cache, its dirty blocks written back in every order, states merged
/// when their cache and PB log are equal (keeping the fewest RMWs).
fn fewest_rmws(accesses: &[(u64, bool)], capacity: usize, drive: DmSmr) -> u64 {
    let mut states = vec![State { cache: Vec::new(), drive, rmws: 0 }];
    let mut now = 0u64;
    for &(block, write) in accesses {
        now += 1_000_000_000;
        let mut next: HashMap<StateKey, State> = HashMap::new();
        let mut keep = |s: State| {
            let key = (s.cache.clone(), s.drive.pb_log_state());
            match next.get(&key) {
                Some(old) if old.rmws <= s.rmws => {}
                _ => {
                    next.insert(key, s);
                }
            }
        };
        for s in states {
            if let Some(i) = s.cache.iter().position(|&(b, _)| b == block) {
                let mut s = s;
                s.cache[i].1 |= write;
                keep(s);
                continue;
            }
            if s.cache.len() < capacity {
                let mut s = s;
                s.cache.push((block, write));
                s.cache.sort_unstable();
                keep(s);
                continue;
            }
            for set in 1u32..(1 << s.cache.len()) {
                let victims: Vec<(u64, bool)> = s
                    .cache
                    .iter()
                    .enumerate()
                    .filter(|(i, _)| set & (1 << i) != 0)
                    .map(|(_, &v)| v)
                    .collect();
                let dirty: Vec<u64> = victims.iter().filter(|v| v.1).map(|v| v.0).collect();
                for order in permutations(&dirty) {
                    let mut t = s.clone();
                    for b in order {
                        t.drive.write(shingled_core::Nanos(now), b, 1);
                    }
                    t.rmws = t.drive.stats().rmws;
                    t.cache.retain(|v| !victims.contains(v));
                    t.cache.push((block, write));
                    t.cache.sort_unstable();
                    keep(t);
                }
            }
        }
        states = next.into_values().collect();
    }
    states.iter().map(|s| s.rmws).min().unwrap_or(0)
}

fn permutations(v: &[u64]) -> Vec<Vec<u64>> {
    if v.len() <= 1 {
        return vec![v.to_vec()];
    }
    let mut out = Vec::new();
    for i in 0..v.len() {
        let mut rest = v.to_vec();
        let x = rest.remove(i);
        for mut p in permutations(&rest) {
            p.insert(0, x);
            out.push(p);
        }
    }
    out
}

/// The search's figures over `n` random tiny traces: how often the bound and band-min meet
/// the optimum, and their largest distances. Asserts bound ≤ optimum ≤ every policy.
fn search_many(n: usize, seed: u64, len: usize, print: bool) {
    let mut rng = SplitMix64::new(seed);
    let (mut bound_tight, mut oracle_opt, mut total_opt, mut total_bound, mut total_oracle) = (0, 0, 0, 0, 0);
    let mut worst_oracle = 0u64;
    let mut beats: HashMap<&str, usize> = HashMap::new();
    let mut totals: HashMap<&str, u64> = HashMap::new();
    for case in 0..n {
        let capacity = 2 + (rng.next_u64() % 2) as usize;
        let pb = 1 + rng.next_u64() % 3;
        let band = 2 + rng.next_u64() % 2;
        let distinct = 4 + rng.next_u64() % 5;
        let flavour =
            if rng.next_u64().is_multiple_of(2) { PbFlavour::AppendOnly } else { PbFlavour::InPlace };
        let free = if rng.next_u64().is_multiple_of(2) { PbFree::AtHead } else { PbFree::Immediate };
        let accesses: Vec<(u64, bool)> =
            (0..len).map(|_| (rng.next_u64() % distinct, !rng.next_u64().is_multiple_of(4))).collect();
        let drive = || small_smr(64, pb, band, flavour, free);
        let opt = fewest_rmws(&accesses, capacity, drive());
        let ops: Vec<(char, u64)> = accesses.iter().map(|&(b, w)| (if w { 'w' } else { 'r' }, b)).collect();
        let r = reqs(&ops);
        let ((_, _, oracle), bound) = replay(Mode::ReadWrite, "band-min", capacity as u32, drive(), pb, &r);
        let lb = bound.unwrap().rmw_lower_bound;
        assert!(
            lb <= opt,
            "case {case}: bound {lb} above the optimum {opt}: {accesses:?} C={capacity} P={pb} band={band}"
        );
        assert!(oracle >= opt, "case {case}: band-min {oracle} below the optimum {opt}");
        for &policy in PolicyConfig::NAMES {
            let ((_, _, rmws), _) = replay(Mode::ReadWrite, policy, capacity as u32, drive(), pb, &r);
            assert!(rmws >= opt, "case {case}: {policy} {rmws} RMWs below the optimum {opt}: {accesses:?}");
            if rmws < oracle {
                *beats.entry(policy).or_default() += 1;
            }
            *totals.entry(policy).or_default() += rmws;
        }
        bound_tight += (lb == opt) as usize;
        oracle_opt += (oracle == opt) as usize;
        total_opt += opt;
        total_bound += lb;
        total_oracle += oracle;
        worst_oracle = worst_oracle.max(oracle - opt);
    }
    if print {
        let mut beats: Vec<_> = beats.into_iter().collect();
        beats.sort();
        let mut totals: Vec<_> = totals.into_iter().collect();
        totals.sort_by_key(|&(p, t)| (t, p));
        eprintln!(
            "{n} traces of {len} accesses: optimum {total_opt} RMWs in all, bound {total_bound} ({bound_tight} \
             traces equal to the optimum), band-min {total_oracle} ({oracle_opt} equal; at most {worst_oracle} \
             above); RMWs in all per policy: {totals:?}; policies with fewer RMWs than band-min (traces): {beats:?}"
        );
    }
}

#[test]
fn exhaustive_search_confirms_the_bound_and_measures_band_min() {
    search_many(60, 7, 12, true);
}

/// The figures docs/bounds.md quotes: `cargo test -p shingled-sim --release -- --ignored
/// exhaustive_search_figures --nocapture`.
#[test]
#[ignore]
fn exhaustive_search_figures() {
    search_many(500, 2026, 14, true);
}
