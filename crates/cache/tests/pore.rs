//! PORE: hand-checked traces for CF, PF and BL, the early division, the period-count and
//! popularity options, band zones (`zones = bands`, our extension), configuration parsing, and
//! properties checked against a slow reference.
//!
//! The hand-checked traces use zones of 4 blocks (zone z = blocks 4z..4z+3), a cache of 4 or 6
//! blocks and a period of a few blocks. "LRU" lists the cached blocks from the LRU end to the
//! MRU end; "h" is a block's access count since insertion; "d" / "c" mark a dirty / clean
//! victim; "progress" is the newly dirty blocks counted in the current period.

use proptest::prelude::*;
use shingled_cache::policy::pore::{
    Pore, PoreConfig, PoreCount, PorePeriod, PorePopularity, PoreScheme, PoreZones,
};
use shingled_cache::{
    BlockMeta, BlockTable, Cache, Policy, PolicyBuilder, PolicyConfig, PolicyContext, PolicyError, Slot,
};
use shingled_core::{BandConfig, BandMap, BlockNo, ByteSize};
use std::sync::{Arc, Mutex};

fn ctx(capacity: u32) -> PolicyContext {
    PolicyContext { capacity_blocks: capacity, pb_blocks: Some(8), ..Default::default() }
}

fn config(scheme: PoreScheme, zone_blocks: u64, period: u64) -> PoreConfig {
    PoreConfig {
        scheme,
        zone_size: ByteSize(zone_blocks * 4096),
        period: PorePeriod::Blocks(period),
        ..Default::default()
    }
}

/// What the probe saw go wrong.
#[derive(Default)]
struct Log {
    violations: Vec<String>,
    /// (divisions, open zones) after the previous callback.
    last: (u64, Vec<u64>),
    /// Victims chosen, with how many forbidden dirty blocks the reference skipped before it.
    skipped: Vec<(BlockNo, usize)>,
    /// Check the structures after every insert and hit (off when blocks are marked clean
    /// behind the policy's back, which it notices only later).
    validate: bool,
}

/// A policy that forwards to a shared [`Pore`] and checks every call: the victim is the least
/// recently used evictable block (found by a slow scan of the table by recency), never a dirty
/// block of a forbidden zone, and the open set changes only when the division count does.
struct Probe {
    pore: Arc<Mutex<Pore>>,
    log: Arc<Mutex<Log>>,
}

impl Probe {
    fn after(&self, table: &BlockTable, what: &str, validate: bool) {
        let pore = self.pore.lock().unwrap();
        let mut log = self.log.lock().unwrap();
        let now = (pore.divisions(), pore.open_zones());
        if now.0 == log.last.0 && now.1 != log.last.1 {
            let msg = format!("{what}: open set changed {:?} -> {:?} without a division", log.last.1, now.1);
            log.violations.push(msg);
        }
        if now.0 < log.last.0 {
            log.violations.push(format!("{what}: division count went down"));
        }
        log.last = now;
        if validate && log.validate {
            if let Err(e) = pore.validate(table) {
                log.violations.push(format!("{what}: {e}"));
            }
        }
    }
}

/// The slow reference: the least recently used block that is clean or in an open zone, and the
/// number of forbidden dirty blocks before it.
fn reference_victim(pore: &Pore, table: &BlockTable) -> Option<(Slot, usize)> {
    let mut by_recency: Vec<Slot> = table.used_slots().collect();
    by_recency.sort_by_key(|&s| table.meta(s).last_access);
    let evictable = |s: Slot| {
        let m = table.meta(s);
        !m.dirty || pore.is_open_zone(pore.zone_of(m.block))
    };
    let skipped = by_recency.iter().take_while(|&&s| !evictable(s)).count();
    by_recency.get(skipped).map(|&s| (s, skipped))
}

impl Policy for Probe {
    fn name(&self) -> &'static str {
        "pore-probe"
    }
    fn on_insert(&mut self, table: &BlockTable, slot: Slot) {
        self.pore.lock().unwrap().on_insert(table, slot);
        self.after(table, "insert", true);
    }
    fn on_hit(&mut self, table: &BlockTable, slot: Slot, became_dirty: bool) {
        self.pore.lock().unwrap().on_hit(table, slot, became_dirty);
        self.after(table, "hit", true);
    }
    fn select_victims(&mut self, table: &BlockTable, incoming: BlockNo, victims: &mut Vec<Slot>) {
        let before = victims.len();
        self.pore.lock().unwrap().select_victims(table, incoming, victims);
        self.after(table, "select", true);
        let pore = self.pore.lock().unwrap();
        let mut log = self.log.lock().unwrap();
        if victims.len() != before + 1 {
            log.violations.push(format!("{} victims, expected 1", victims.len() - before));
            return;
        }
        let v = victims[before];
        let m = table.meta(v);
        if m.dirty && !pore.is_open_zone(pore.zone_of(m.block)) {
            log.violations.push(format!(
                "evicted dirty block {} of forbidden zone {}",
                m.block,
                pore.zone_of(m.block)
            ));
        }
        match reference_victim(&pore, table) {
            Some((s, skipped)) if s == v => log.skipped.push((m.block, skipped)),
            r => log.violations.push(format!(
                "victim {} but the reference says {:?}",
                m.block,
                r.map(|(s, _)| table.meta(s).block)
            )),
        }
    }
    fn on_remove(&mut self, table: &BlockTable, slot: Slot) {
        self.pore.lock().unwrap().on_remove(table, slot);
        self.after(table, "remove", false);
    }
}

/// A cache under a probed PORE.
struct Probed {
    cache: Cache,
    pore: Arc<Mutex<Pore>>,
    log: Arc<Mutex<Log>>,
}

impl Probed {
    fn new(cfg: &PoreConfig, capacity: u32) -> Self {
        Probed::in_ctx(cfg, &ctx(capacity))
    }

    /// Under `ctx` (e.g. one with a band map).
    fn in_ctx(cfg: &PoreConfig, ctx: &PolicyContext) -> Self {
        let capacity = ctx.capacity_blocks;
        let pore = Arc::new(Mutex::new(cfg.build_pore(ctx).unwrap()));
        let log = Arc::new(Mutex::new(Log { validate: true, ..Default::default() }));
        let probe = Probe { pore: pore.clone(), log: log.clone() };
        Probed { cache: Cache::new(capacity, Box::new(probe)), pore, log }
    }

    /// One access, write-back/write-allocate and read-allocate; returns the evictions.
    fn access(&mut self, block: BlockNo, write: bool) -> Vec<BlockMeta> {
        let mut ev = Vec::new();
        if self.cache.access(block, write).is_none() {
            self.cache.insert(block, write, &mut ev);
        }
        ev
    }

    fn violations(&self) -> Vec<String> {
        self.log.lock().unwrap().violations.clone()
    }
}

/// One step of a hand-checked trace: the access, the victim it causes (block, dirty), and the
/// division count and open zones after it.
type Step = (BlockNo, bool, Option<(BlockNo, bool)>, u64, &'static [u64]);

const R: bool = false;
const W: bool = true;

/// Replays `steps` and checks every expectation, plus the probe's checks.
fn check_steps(cfg: &PoreConfig, capacity: u32, steps: &[Step]) -> Probed {
    check_steps_in(cfg, &ctx(capacity), steps)
}

/// [`check_steps`] under `ctx`.
fn check_steps_in(cfg: &PoreConfig, ctx: &PolicyContext, steps: &[Step]) -> Probed {
    let mut p = Probed::in_ctx(cfg, ctx);
    for (i, &(block, write, victim, divisions, open)) in steps.iter().enumerate() {
        let ev = p.access(block, write);
        let got = ev.first().map(|m| (m.block, m.dirty));
        let n = i + 1;
        assert!(ev.len() <= 1, "step {n}: {} victims", ev.len());
        assert_eq!(got, victim, "step {n} ({}{block}): victim", if write { "W" } else { "R" });
        let pore = p.pore.lock().unwrap();
        assert_eq!(pore.divisions(), divisions, "step {n}: divisions");
        if divisions > 0 {
            assert_eq!(pore.open_zones(), open, "step {n}: open zones");
        }
    }
    assert_eq!(p.violations(), Vec::<String>::new());
    p
}

/// CF by hand. Cache 6, zones of 4, period 3 newly dirty blocks.
///
///  1-6  W0 W1 W4 R8 W12 W13: the cache is full after step 6 → division 1. Cached dirty per
///       zone: z0 {0,1}=2, z1 {4}=1, z3 {12,13}=2 (8 is clean). CF, descending, ties by zone:
///       z0(2) z3(2) z1(1): z0 → 2 < 3, z3 → 4 ≥ 3. Open {0,3}. LRU 0 1 4 8 12 13.
///  7    R0 hit. LRU 1 4 8 12 13 0.
///  8    W5 miss: the LRU block 1 is dirty in open z0 → evict 1(d). 5 enters forbidden z1;
///       progress 1. LRU 4 8 12 13 0 5.
///  9    R16 miss: 4 (z1 forbidden dirty) skipped, 8 clean → evict 8(c). LRU 4 12 13 0 5 16.
/// 10    W16 hit: clean → dirty in forbidden z4, leaves the evictable list; progress 2.
/// 11    W9 miss: 4 skipped, 12 (open z3) → evict 12(d). 9 enters z2; progress 3 → division 2.
///       Cached 4 13 0 5 16 9, all dirty: z1 {4,5}=2, z0 z2 z3 z4 = 1 each. CF: z1 → 2,
///       then z0 (smallest of the ties) → 3. Open {0,1}.
/// 12    W17 miss: 4 (z1, open now) → evict 4(d). progress 1. LRU 13 0 5 16 9 17.
/// 13    R20 miss: 13 (z3) skipped, 0 (z0) → evict 0(d). LRU 13 5 16 9 17 20.
/// 14    R20 hit.
/// 15    W6 miss: 13 skipped, 5 (z1) → evict 5(d). 6 enters open z1; progress 2.
///       LRU 13 16 9 17 20 6.
/// 16    W7 miss: 13 16 9 17 all forbidden dirty, skipped; 20 clean → evict 20(c); progress 3
///       → division 3. Cached 13 16 9 17 6 7 (dirty): z1 {6,7}=2, z4 {16,17}=2, z2=1, z3=1.
///       CF: z1 → 2, z4 → 4. Open {1,4}. LRU 13 16 9 17 6 7.
/// 17    W13 hit on a dirty block: no progress. LRU 16 9 17 6 7 13.
/// 18    W2 miss: 16 (z4) → evict 16(d); 2 enters forbidden z0; progress 1.
/// 19    W10 miss: 9 (z2) skipped, 17 (z4) → evict 17(d); progress 2.
/// 20    W11 miss: 9 skipped, 6 (z1) → evict 6(d); progress 3 → division 4. Cached 9 7 13 2 10
///       11: z2 {9,10,11}=3 reaches the period alone. Open {2}.
#[test]
fn cf_by_hand() {
    let steps: &[Step] = &[
        (0, W, None, 0, &[]),
        (1, W, None, 0, &[]),
        (4, W, None, 0, &[]),
        (8, R, None, 0, &[]),
        (12, W, None, 0, &[]),
        (13, W, None, 1, &[0, 3]),
        (0, R, None, 1, &[0, 3]),
        (5, W, Some((1, true)), 1, &[0, 3]),
        (16, R, Some((8, false)), 1, &[0, 3]),
        (16, W, None, 1, &[0, 3]),
        (9, W, Some((12, true)), 2, &[0, 1]),
        (17, W, Some((4, true)), 2, &[0, 1]),
        (20, R, Some((0, true)), 2, &[0, 1]),
        (20, R, None, 2, &[0, 1]),
        (6, W, Some((5, true)), 2, &[0, 1]),
        (7, W, Some((20, false)), 3, &[1, 4]),
        (13, W, None, 3, &[1, 4]),
        (2, W, Some((16, true)), 3, &[1, 4]),
        (10, W, Some((17, true)), 3, &[1, 4]),
        (11, W, Some((6, true)), 4, &[2]),
    ];
    let p = check_steps(&config(PoreScheme::Cf, 4, 3), 6, steps);
    // Forbidden dirty blocks skipped before each victim, as worked out above.
    let skipped = p.log.lock().unwrap().skipped.clone();
    assert_eq!(
        skipped,
        vec![(1, 0), (8, 1), (12, 1), (4, 0), (0, 1), (5, 1), (20, 4), (16, 0), (17, 1), (6, 1)]
    );
}

/// The accesses of the PF and BL traces. Cache 6, zones of 4, period 3.
const PF_BL_OPS: [(BlockNo, bool); 20] = [
    (0, W),
    (0, W),
    (0, W),
    (4, W),
    (5, W),
    (8, W),
    (12, W),
    (16, R),
    (20, W),
    (5, R),
    (9, W),
    (21, W),
    (1, W),
    (20, R),
    (24, W),
    (22, W),
    (2, R),
    (2, W),
    (25, W),
    (3, W),
];

/// A step's expectations without the access.
type Expect = (Option<(BlockNo, bool)>, u64, &'static [u64]);

fn with_ops(expect: &[Expect]) -> Vec<Step> {
    PF_BL_OPS.iter().zip(expect).map(|(&(b, w), &(v, d, o))| (b, w, v, d, o)).collect()
}

/// PF by hand (ascending average access count per cached dirty block, since insertion).
///
///  1-8  W0 W0 W0 (0: h3) W4 W5 W8 W12 R16: full → division 1. Averages: z0 3, z1 {4,5} 1,
///       z2 1, z3 1. PF: z1 → 2, z2 → 3. Open {1,2}. LRU 0 4 5 8 12 16.
///  9    W20 miss: 0 (z0) skipped, 4 (z1) → evict 4(d); progress 1. LRU 0 5 8 12 16 20.
/// 10    R5 hit (h2). LRU 0 8 12 16 20 5.
/// 11    W9 miss: 0 skipped, 8 (z2) → evict 8(d); 9 enters open z2; progress 2.
/// 12    W21 miss: 0, 12 (z3) skipped, 16 clean → evict 16(c); progress 3 → division 2.
///       Cached 0(h3) 12 20 5(h2) 9 21: averages z0 3, z1 2, z2 1, z3 1, z5 {20,21} 1.
///       PF: z2 → 1, z3 → 2, z5 → 4. Open {2,3,5}. LRU 0 12 20 5 9 21.
/// 13    W1 miss: 0 skipped, 12 (z3) → evict 12(d); 1 enters forbidden z0; progress 1.
/// 14    R20 hit (h2). LRU 0 5 9 21 1 20.
/// 15    W24 miss: 0, 5 (z1) skipped, 9 (z2) → evict 9(d); progress 2.
/// 16    W22 miss: 0, 5 skipped, 21 (z5) → evict 21(d); progress 3 → division 3. Cached 0(h3)
///       5(h2) 1 20(h2) 24 22: z0 4/2=2, z1 2, z5 3/2=1.5, z6 1. PF: z6 → 1, z5 → 3.
///       Open {5,6}. LRU 0 5 1 20 24 22.
/// 17    R2 miss: 0 5 1 skipped, 20 (z5) → evict 20(d). LRU 0 5 1 24 22 2.
/// 18    W2 hit: clean → dirty in forbidden z0; progress 1.
/// 19    W25 miss: 0 5 1 skipped, 24 (z6) → evict 24(d); progress 2.
/// 20    W3 miss: 0 5 1 skipped (2 too is forbidden but more recent), 22 (z5) → evict 22(d);
///       progress 3 → division 4. z0 {0,1,2,3} 7/4=1.75, z1 2, z6 1. PF: z6 → 1, z0 → 5.
///       Open {0,6}.
#[test]
fn pf_by_hand() {
    let steps = with_ops(&[
        (None, 0, &[]),
        (None, 0, &[]),
        (None, 0, &[]),
        (None, 0, &[]),
        (None, 0, &[]),
        (None, 0, &[]),
        (None, 0, &[]),
        (None, 1, &[1, 2]),
        (Some((4, true)), 1, &[1, 2]),
        (None, 1, &[1, 2]),
        (Some((8, true)), 1, &[1, 2]),
        (Some((16, false)), 2, &[2, 3, 5]),
        (Some((12, true)), 2, &[2, 3, 5]),
        (None, 2, &[2, 3, 5]),
        (Some((9, true)), 2, &[2, 3, 5]),
        (Some((21, true)), 3, &[5, 6]),
        (Some((20, true)), 3, &[5, 6]),
        (None, 3, &[5, 6]),
        (Some((24, true)), 3, &[5, 6]),
        (Some((22, true)), 4, &[0, 6]),
    ]);
    let p = check_steps(&config(PoreScheme::Pf, 4, 3), 6, &steps);
    let skipped = p.log.lock().unwrap().skipped.clone();
    assert_eq!(skipped, vec![(4, 1), (8, 1), (16, 2), (12, 1), (9, 2), (21, 2), (20, 3), (24, 3), (22, 3)]);
}

/// BL by hand (ascending average access count / coverage = Σhits·4 / dirty²), same accesses.
///
///  1-12 As PF up to division 2 (division 1: keys z0 3/1, z1 2/4, z2 1, z3 1 → z1, z2, the same
///       choice). Division 2 after step 12: cached 0(h3) 12 20 5(h2) 9 21; keys Σhits/dirty²:
///       z0 3, z1 2, z2 1, z3 1, z5 2/4 = 0.5. BL: z5 → 2, z2 → 3. Open {2,5}.
///       LRU 0 12 20 5 9 21.
/// 13    W1 miss: 0 (z0), 12 (z3, forbidden now) skipped, 20 (z5) → evict 20(d); progress 1.
///       LRU 0 12 5 9 21 1.
/// 14    R20 miss: 0 12 5 skipped, 9 (z2) → evict 9(d); 20 re-enters clean.
/// 15    W24 miss: 0 12 5 skipped, 21 (z5) → evict 21(d); progress 2. LRU 0 12 5 1 20 24.
/// 16    W22 miss: 0 12 5 1 skipped, 20 clean → evict 20(c); progress 3 → division 3.
///       Cached 0(h3) 12 5(h2) 1 24 22: keys z0 4/4=1, z1 2, z3 1, z5 1, z6 1. BL: z0 → 2,
///       z3 → 3. Open {0,3}. LRU 0 12 5 1 24 22.
/// 17    R2 miss: 0 (z0) → evict 0(d).
/// 18    W2 hit: clean → dirty in open z0, stays evictable; progress 1.
/// 19    W25 miss: 12 (z3) → evict 12(d); progress 2. LRU 5 1 24 22 2 25.
/// 20    W3 miss: 5 (z1) skipped, 1 (z0) → evict 1(d); progress 3 → division 4. Cached 5(h2)
///       24 22 2(h2) 25 3: keys z0 3/4, z1 2, z5 1, z6 2/4. BL: z6 → 2, z0 → 4. Open {0,6}.
#[test]
fn bl_by_hand() {
    let steps = with_ops(&[
        (None, 0, &[]),
        (None, 0, &[]),
        (None, 0, &[]),
        (None, 0, &[]),
        (None, 0, &[]),
        (None, 0, &[]),
        (None, 0, &[]),
        (None, 1, &[1, 2]),
        (Some((4, true)), 1, &[1, 2]),
        (None, 1, &[1, 2]),
        (Some((8, true)), 1, &[1, 2]),
        (Some((16, false)), 2, &[2, 5]),
        (Some((20, true)), 2, &[2, 5]),
        (Some((9, true)), 2, &[2, 5]),
        (Some((21, true)), 2, &[2, 5]),
        (Some((20, false)), 3, &[0, 3]),
        (Some((0, true)), 3, &[0, 3]),
        (None, 3, &[0, 3]),
        (Some((12, true)), 3, &[0, 3]),
        (Some((1, true)), 4, &[0, 6]),
    ]);
    let p = check_steps(&config(PoreScheme::Bl, 4, 3), 6, &steps);
    let skipped = p.log.lock().unwrap().skipped.clone();
    assert_eq!(
        skipped,
        vec![(4, 1), (8, 1), (16, 2), (20, 2), (9, 3), (21, 3), (20, 4), (0, 0), (12, 0), (1, 1)]
    );
    // The default scheme is BL: the registered default replays the same victims.
    let default_scheme =
        PoreConfig { zone_size: ByteSize(4 * 4096), period: PorePeriod::Blocks(3), ..Default::default() };
    let mut c = Cache::new(6, config(PoreScheme::Bl, 4, 3).build(&ctx(6)).unwrap());
    let mut d = Cache::new(6, default_scheme.build(&ctx(6)).unwrap());
    assert_eq!(replay(&mut c, &PF_BL_OPS), replay(&mut d, &PF_BL_OPS));
}

fn replay(cache: &mut Cache, ops: &[(BlockNo, bool)]) -> Vec<(BlockNo, bool)> {
    let mut all = Vec::new();
    let mut ev = Vec::new();
    for &(b, w) in ops {
        if cache.access(b, w).is_none() {
            ev.clear();
            cache.insert(b, w, &mut ev);
            all.extend(ev.iter().map(|m| (m.block, m.dirty)));
        }
    }
    all
}

/// The evictable list empties and forces an early division. Cache 4, zones of 4, period 5, CF.
///
///  1-4  W0 W1 W4 W8: full → division 1. Dirty z0 2, z1 1, z2 1: together 4 < 5, so all three
///       are open. LRU 0 1 4 8.
///  5-6  R12 miss → evict 0(d); W12 hit: 12 becomes dirty in forbidden z3 (progress 1).
///  7-8  R13 → evict 1(d); W13 (progress 2).
///  9-10 R14 → evict 4(d); W14 (progress 3).
/// 11-12 R15 → evict 8(d); W15 (progress 4). Now 12 13 14 15 are all dirty in forbidden z3:
///       nothing is evictable, and the period (5) is not complete.
/// 13    R16 miss: the evictable list is empty → division 2 now: z3 (4 dirty) opens; victim
///       12(d); the period count restarts at 0.
/// 14    R17 miss → evict 13(d).
#[test]
fn empty_evictable_list_forces_an_early_division() {
    let steps: &[Step] = &[
        (0, W, None, 0, &[]),
        (1, W, None, 0, &[]),
        (4, W, None, 0, &[]),
        (8, W, None, 1, &[0, 1, 2]),
        (12, R, Some((0, true)), 1, &[0, 1, 2]),
        (12, W, None, 1, &[0, 1, 2]),
        (13, R, Some((1, true)), 1, &[0, 1, 2]),
        (13, W, None, 1, &[0, 1, 2]),
        (14, R, Some((4, true)), 1, &[0, 1, 2]),
        (14, W, None, 1, &[0, 1, 2]),
        (15, R, Some((8, true)), 1, &[0, 1, 2]),
        (15, W, None, 1, &[0, 1, 2]),
        (16, R, Some((12, true)), 2, &[3]),
        (17, R, Some((13, true)), 2, &[3]),
    ];
    let mut p = Probed::new(&config(PoreScheme::Cf, 4, 5), 4);
    for (i, &(b, w, v, d, o)) in steps.iter().enumerate() {
        let ev = p.access(b, w);
        assert_eq!(ev.first().map(|m| (m.block, m.dirty)), v, "step {}", i + 1);
        let pore = p.pore.lock().unwrap();
        assert_eq!((pore.divisions(), pore.open_zones()), (d, o.to_vec()), "step {}", i + 1);
        if i + 1 == 12 {
            assert_eq!(pore.evictable_len(), 0, "all cached blocks are forbidden dirty");
            assert_eq!(pore.period_progress(), 4);
        }
        if i + 1 == 13 {
            assert_eq!(pore.period_progress(), 0, "the early division restarts the period");
        }
    }
    assert_eq!(p.violations(), Vec::<String>::new());
}

/// `period_counts`: cache 4, zones of 4, period 2, CF.
///
///  1-4  W0 W1 W4 W8 → division 1: z0 (2 dirty) reaches the period alone. Open {0}.
///  5-6  R12 → evict 0(d); W12: 12 dirty in forbidden z3.
///  7-8  R13 → evict 1(d); W13: 13 dirty in forbidden z3.
///       newly-dirty: steps 6 and 8 count, so division 2 happens at step 8: dirty z1 1, z2 1,
///       z3 2 → CF opens z3.
///       write-misses (the artifact): hits do not count, the period is not complete; 4 8 12 13
///       are all forbidden dirty.
///  9    R5 → newly-dirty: evict 12(d) from open z3. write-misses: nothing evictable → early
///       division 2 (z3 opens) and the same victim 12.
#[test]
fn period_counts_newly_dirty_or_write_misses() {
    let ops = [(0, W), (1, W), (4, W), (8, W), (12, R), (12, W), (13, R), (13, W), (5, R)];
    for (counts, division_step) in [(PoreCount::NewlyDirty, 8), (PoreCount::WriteMisses, 9)] {
        let cfg = PoreConfig { period_counts: counts, ..config(PoreScheme::Cf, 4, 2) };
        let mut p = Probed::new(&cfg, 4);
        let mut victims = Vec::new();
        for (i, &(b, w)) in ops.iter().enumerate() {
            victims.extend(p.access(b, w).iter().map(|m| m.block));
            let pore = p.pore.lock().unwrap();
            let expect = if i + 1 >= division_step {
                (2, vec![3])
            } else if i + 1 >= 4 {
                (1, vec![0])
            } else {
                (0, vec![])
            };
            assert_eq!((pore.divisions(), pore.open_zones()), expect, "{counts:?} step {}", i + 1);
        }
        assert_eq!(victims, vec![0, 1, 12], "{counts:?}");
        assert_eq!(p.violations(), Vec::<String>::new());
    }
}

/// `popularity`: PF, cache 4, zones of 4, period 2.
///
///  1-7  W0 ×4 (0: h4), W4, W8, W12: full → division 1. Both readings agree: z0 4, z1 z2 z3 1
///       → open {1,2}.
///  8-9  W4 W4 (4: h3; both accesses fall in period 2).
/// 10    W16 miss: 0 (z0) skipped, 8 (z2) → evict 8(d); progress 1. LRU 0 12 4 16.
/// 11    W17 miss: 0, 12 (z3) skipped, 4 (z1) → evict 4(d); progress 2 → division 2. Cached
///       0(h4) 12(h1) 16 17.
///       since-insert: averages z0 4, z3 1, z4 1 → z3 → 1, z4 → 3: open {3,4}.
///       last-period: only z4 was accessed in period 2 (2 accesses / 2 blocks = 1); z0 and z3
///       have 0 → z0 → 1, z3 → 2: open {0,3}.
/// 12    W20 miss: since-insert evicts 12(d) (0 is forbidden); last-period evicts 0(d).
#[test]
fn popularity_since_insert_or_last_period() {
    let ops =
        [(0, W), (0, W), (0, W), (0, W), (4, W), (8, W), (12, W), (4, W), (4, W), (16, W), (17, W), (20, W)];
    for (pop, open, last) in
        [(PorePopularity::SinceInsert, vec![3, 4], 12), (PorePopularity::LastPeriod, vec![0, 3], 0)]
    {
        let cfg = PoreConfig { popularity: pop, ..config(PoreScheme::Pf, 4, 2) };
        let mut p = Probed::new(&cfg, 4);
        let mut victims = Vec::new();
        for (i, &(b, w)) in ops.iter().enumerate() {
            victims.extend(p.access(b, w).iter().map(|m| m.block));
            if i + 1 == 7 {
                assert_eq!(p.pore.lock().unwrap().open_zones(), vec![1, 2], "{pop:?}");
            }
            if i + 1 == 11 {
                assert_eq!(p.pore.lock().unwrap().open_zones(), open, "{pop:?}");
            }
        }
        assert_eq!(victims, vec![8, 4, last], "{pop:?}");
        assert_eq!(p.violations(), Vec::<String>::new());
    }
}

/// Nothing is divided or evicted before the cache is first full; then exactly one division.
#[test]
fn first_division_when_the_cache_is_first_full() {
    let mut p = Probed::new(&config(PoreScheme::Bl, 4, 100), 5);
    for b in 0..4 {
        assert!(p.access(b * 4, true).is_empty());
        assert_eq!(p.pore.lock().unwrap().divisions(), 0);
        assert!(p.pore.lock().unwrap().is_open_zone(b), "every zone is open before the first division");
    }
    p.access(100, false);
    assert_eq!(p.pore.lock().unwrap().divisions(), 1);
    assert_eq!(
        p.pore.lock().unwrap().open_zones(),
        vec![0, 1, 2, 3],
        "4 dirty blocks < period 100: all open"
    );
    assert!(!p.pore.lock().unwrap().is_open_zone(25), "zones without dirty blocks are forbidden");
    assert_eq!(p.violations(), Vec::<String>::new());
}

#[test]
fn configuration_parses_validates_and_round_trips() {
    let p: PolicyConfig = "pore".parse().unwrap();
    assert_eq!(p, PolicyConfig::default_for("pore").unwrap());
    let PolicyConfig::Pore(d) = p else { panic!("not pore") };
    assert_eq!(d, PoreConfig::default());
    assert_eq!(d.scheme, PoreScheme::Bl);
    assert_eq!(d.zone_size, ByteSize::mib(20));
    assert_eq!(d.period, PorePeriod::OfPb(1.0));
    for (alias, scheme) in
        [("pore-cf", PoreScheme::Cf), ("pore-pf", PoreScheme::Pf), ("pore-bl", PoreScheme::Bl)]
    {
        let PolicyConfig::Pore(c) = alias.parse::<PolicyConfig>().unwrap() else { panic!("{alias}") };
        assert_eq!(c, PoreConfig { scheme, ..Default::default() }, "{alias}");
    }
    let PolicyConfig::Pore(c) =
        "pore:scheme=pf,zone_size=10MiB,period=50%,period_counts=write-misses,popularity=last-period"
            .parse::<PolicyConfig>()
            .unwrap()
    else {
        panic!()
    };
    assert_eq!(c.scheme, PoreScheme::Pf);
    assert_eq!(c.zone_size, ByteSize::mib(10));
    assert_eq!(c.period, PorePeriod::OfPb(0.5));
    assert_eq!(c.period_counts, PoreCount::WriteMisses);
    assert_eq!(c.popularity, PorePopularity::LastPeriod);
    let period = |s: &str| match s.parse::<PolicyConfig>() {
        Ok(PolicyConfig::Pore(c)) => Ok(c.period),
        Ok(_) => panic!(),
        Err(e) => Err(e.to_string()),
    };
    assert_eq!(period("pore:period=6731"), Ok(PorePeriod::Blocks(6731)));
    assert_eq!(period("pore:period=8blocks"), Ok(PorePeriod::Blocks(8)));
    assert_eq!(period("pore:period=20MiB"), Ok(PorePeriod::Blocks(5120)));
    assert_eq!(period("pore:period=1/10"), Ok(PorePeriod::OfPb(0.1)));
    assert_eq!(period("pore:period=500%"), Ok(PorePeriod::OfPb(5.0)));
    assert!(period("pore:period=0.5").unwrap_err().contains("0.5pb"));
    assert_eq!(period("pore:period=0.5pb"), Ok(PorePeriod::OfPb(0.5)));
    assert!("pore:scheme=xx".parse::<PolicyConfig>().is_err());
    assert!("pore:bogus=1".parse::<PolicyConfig>().is_err());

    // JSON round trip of a non-default configuration.
    let json = serde_json::to_string(&PolicyConfig::Pore(c.clone())).unwrap();
    assert_eq!(serde_json::from_str::<PolicyConfig>(&json).unwrap(), PolicyConfig::Pore(c));
    let blocks = PolicyConfig::Pore(PoreConfig { period: PorePeriod::Blocks(77), ..Default::default() });
    let json = serde_json::to_string(&blocks).unwrap();
    assert!(json.contains("\"period\":77"), "{json}");
    assert_eq!(serde_json::from_str::<PolicyConfig>(&json).unwrap(), blocks);

    // Resolution and validation against the context.
    let pore = PoreConfig::default().build_pore(&ctx(10)).unwrap();
    assert_eq!((pore.zone_blocks(), pore.period_blocks()), (Some(5120), 8));
    let half =
        PoreConfig { period: PorePeriod::OfPb(0.5), ..Default::default() }.build_pore(&ctx(10)).unwrap();
    assert_eq!(half.period_blocks(), 4);
    let no_pb = PolicyContext { capacity_blocks: 10, ..Default::default() };
    assert!(PoreConfig::default().build(&no_pb).is_err(), "a PB-relative period needs a PB");
    assert!(PoreConfig { period: PorePeriod::Blocks(9), ..Default::default() }.build(&no_pb).is_ok());
    assert!(PoreConfig { period: PorePeriod::Blocks(0), ..Default::default() }.build(&ctx(10)).is_err());
    assert!(PoreConfig { zone_size: ByteSize(4095), ..Default::default() }.build(&ctx(10)).is_err());
    assert_eq!(PoreConfig::default().build(&ctx(10)).unwrap().name(), "pore");
}

fn arb_config() -> impl Strategy<Value = PoreConfig> {
    (0u8..3, 1u64..6, 1u64..9, any::<bool>(), any::<bool>()).prop_map(|(s, zone, period, wm, lp)| {
        PoreConfig {
            scheme: [PoreScheme::Cf, PoreScheme::Pf, PoreScheme::Bl][s as usize],
            zone_size: ByteSize(zone * 4096),
            period: PorePeriod::Blocks(period),
            period_counts: if wm { PoreCount::WriteMisses } else { PoreCount::NewlyDirty },
            popularity: if lp { PorePopularity::LastPeriod } else { PorePopularity::SinceInsert },
            ..Default::default()
        }
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    /// On any trace, under any configuration: every victim is the least recently used block
    /// that is clean or in an open zone (slow reference), so no dirty block of a forbidden
    /// zone is ever evicted; the open set changes only at divisions; the structures match the
    /// table after every access; the probe changes nothing; and replays are deterministic.
    #[test]
    fn victims_match_the_slow_reference(
        cfg in arb_config(),
        capacity in 1u32..14,
        ops in proptest::collection::vec((0u64..48, any::<bool>()), 1..400),
    ) {
        let mut p = Probed::new(&cfg, capacity);
        let mut probed = Vec::new();
        let mut history = Vec::new();
        for &(b, w) in &ops {
            probed.extend(p.access(b, w).iter().map(|m| (m.block, m.dirty)));
            let pore = p.pore.lock().unwrap();
            history.push((pore.divisions(), pore.open_zones()));
            prop_assert!(pore.period_progress() < pore.period_blocks() || pore.divisions() == 0);
        }
        prop_assert_eq!(p.violations(), Vec::<String>::new());
        // Divisions only ever add up; the open set is constant between them.
        for w in history.windows(2) {
            prop_assert!(w[1].0 >= w[0].0);
            if w[1].0 == w[0].0 {
                prop_assert_eq!(&w[1].1, &w[0].1);
            }
        }
        let mut a = Cache::new(capacity, cfg.build(&ctx(capacity)).unwrap());
        let mut b = Cache::new(capacity, cfg.build(&ctx(capacity)).unwrap());
        let ra = replay(&mut a, &ops);
        prop_assert_eq!(&ra, &replay(&mut b, &ops), "not deterministic");
        prop_assert_eq!(&ra, &probed, "the probe changed the behaviour");
    }

    /// Blocks marked clean behind the policy's back (`Cache::mark_clean`) and invalidated
    /// blocks: victims still match the reference and no dirty block is lost.
    #[test]
    fn mark_clean_and_invalidate_are_absorbed(
        cfg in arb_config(),
        capacity in 1u32..10,
        ops in proptest::collection::vec((0u64..32, 0u8..6), 1..300),
    ) {
        let mut p = Probed::new(&cfg, capacity);
        p.log.lock().unwrap().validate = false;
        let mut dirty: std::collections::BTreeSet<BlockNo> = Default::default();
        for &(b, op) in &ops {
            match op {
                4 => { p.cache.mark_clean(b); dirty.remove(&b); }
                5 => {
                    if let Some(m) = p.cache.invalidate(b) {
                        prop_assert_eq!(m.dirty, dirty.remove(&b));
                    }
                }
                _ => {
                    let w = op < 2;
                    for m in p.access(b, w) {
                        prop_assert_eq!(m.dirty, dirty.remove(&m.block), "block {}", m.block);
                    }
                    if w { dirty.insert(b); }
                }
            }
            prop_assert_eq!(p.cache.table().dirty_len() as usize, dirty.len());
        }
        prop_assert_eq!(p.violations(), Vec::<String>::new());
    }
}

/// Zones far out in the LBA space grow the zone table on demand; a division only looks at the
/// zones holding dirty blocks.
#[test]
fn sparse_zones_far_apart() {
    let cfg =
        PoreConfig { zone_size: ByteSize::mib(20), period: PorePeriod::Blocks(2), ..Default::default() };
    let mut p = Probed::new(&cfg, 3);
    let far = 5u64 << 40 >> 12; // the last blocks of a 5 TB drive
    for (b, w) in [(0, W), (far - 1, W), (far / 2, W), (7, W), (far - 2, W), (3, R)] {
        p.access(b, w);
    }
    let pore = p.pore.lock().unwrap();
    assert!(pore.divisions() >= 2);
    assert_eq!(pore.zone_of(far - 1), (far - 1) / 5120);
    drop(pore);
    assert_eq!(p.violations(), Vec::<String>::new());
}

// ---- band zones (`zones = bands`): not the paper's PORE, our extension ----------------------

/// A context with a band map of `bands` and a PB of 8 blocks.
fn ctx_bands(capacity: u32, bands: BandMap) -> PolicyContext {
    PolicyContext { bands: Some(Arc::new(bands)), ..ctx(capacity) }
}

/// Bands of 4, 8 and 4 blocks: b0 = 0..3, b1 = 4..11, b2 = 12..15 (a band size falling
/// linearly from 4 blocks at LBA 0 toward 20 at the end of a 16-block drive: 4 at block 0, 8 at
/// block 4, 16 at block 12, cut to 4 by the capacity).
fn bands_4_8_4() -> BandMap {
    let cfg = BandConfig::LbaDependent { outer: ByteSize(4 * 4096), inner: ByteSize(20 * 4096) };
    let map = BandMap::build(&cfg, ByteSize(16 * 4096)).unwrap();
    let ranges: Vec<(BlockNo, u64)> = (0..map.len() as u32).map(|b| map.band_range(b)).collect();
    assert_eq!(ranges, vec![(0, 4), (4, 8), (12, 4)], "the layout the hand-checked trace assumes");
    map
}

fn banded(scheme: PoreScheme, period: u64) -> PoreConfig {
    PoreConfig { scheme, zones: PoreZones::Bands, period: PorePeriod::Blocks(period), ..Default::default() }
}

/// Band zones of unequal sizes by hand, against fixed zones of 4 blocks on the same accesses.
/// Cache 5, period 2, BL (and CF, which chooses the same here: every block has h1, so BL's key
/// Σhits/dirty ÷ dirty/size is size/dirty, ascending, i.e. CF's descending coverage).
/// Fixed zones: z0 0..3, z1 4..7, z2 8..11, z3 12..15. Bands: b0 0..3, b1 4..11, b2 12..15.
///
///  1-5  W4 W5 W6 W12 W13: full → division 1. LRU 4 5 6 12 13.
///       fixed: z1 {4,5,6} key 4/3, z3 {12,13} key 4/2 = 2 → z1 first, 3 ≥ 2 alone: open {1}.
///       bands: b1 {4,5,6} key 8/3 (coverage 3/8 only), b2 {12,13} key 4/2 = 2 → b2 first,
///       2 ≥ 2 alone: open {2}.
///  6    W0 miss. fixed: 4 (open z1) → evict 4(d). bands: 4 5 6 (b1 forbidden) skipped, 12 (open
///       b2) → evict 12(d). 0 enters forbidden zone 0 in both; progress 1.
///  7    W8 miss. fixed: 5 (z1) → evict 5(d). bands: 4 5 6 skipped, 13 (b2) → evict 13(d).
///       8 enters z2 / b1; progress 2 → division 2.
///       fixed: cached 6 12 13 0 8: keys z0 z1 z2 4 each, z3 {12,13} 2 → open {3}.
///       bands: cached 4 5 6 0 8: b0 {0} 4, b1 {4,5,6,8} 8/4 = 2 → open {1}.
///  8    W1 miss. fixed: 6 (z1 forbidden now) skipped, 12 (z3) → evict 12(d). bands: 4 (b1) →
///       evict 4(d). Progress 1.
#[test]
fn band_zones_of_unequal_sizes_by_hand() {
    let ops = [(4, W), (5, W), (6, W), (12, W), (13, W), (0, W), (8, W), (1, W)];
    type Expect = (Option<(BlockNo, bool)>, u64, &'static [u64]);
    let fixed: [Expect; 8] = [
        (None, 0, &[]),
        (None, 0, &[]),
        (None, 0, &[]),
        (None, 0, &[]),
        (None, 1, &[1]),
        (Some((4, true)), 1, &[1]),
        (Some((5, true)), 2, &[3]),
        (Some((12, true)), 2, &[3]),
    ];
    let bands: [Expect; 8] = [
        (None, 0, &[]),
        (None, 0, &[]),
        (None, 0, &[]),
        (None, 0, &[]),
        (None, 1, &[2]),
        (Some((12, true)), 1, &[2]),
        (Some((13, true)), 2, &[1]),
        (Some((4, true)), 2, &[1]),
    ];
    let steps = |expect: &[Expect]| -> Vec<Step> {
        ops.iter().zip(expect).map(|(&(b, w), &(v, d, o))| (b, w, v, d, o)).collect()
    };
    for scheme in [PoreScheme::Bl, PoreScheme::Cf] {
        let p = check_steps(&config(scheme, 4, 2), 5, &steps(&fixed));
        let skipped = p.log.lock().unwrap().skipped.clone();
        assert_eq!(skipped, vec![(4, 0), (5, 0), (12, 1)], "{scheme:?} fixed");

        let p = check_steps_in(&banded(scheme, 2), &ctx_bands(5, bands_4_8_4()), &steps(&bands));
        let skipped = p.log.lock().unwrap().skipped.clone();
        assert_eq!(skipped, vec![(12, 3), (13, 3), (4, 0)], "{scheme:?} bands");
        let pore = p.pore.lock().unwrap();
        assert_eq!(pore.zone_blocks(), None, "band zones have no common size");
        assert_eq!((0..3).map(|z| pore.zone_len(z)).collect::<Vec<_>>(), vec![4, 8, 4]);
        assert_eq!([3, 4, 11, 12].map(|b| pore.zone_of(b)), [0, 1, 1, 2]);
    }
}

/// xorshift64*: a fixed, seeded stream without another dependency.
fn stream(seed: u64, len: usize, blocks: u64, write_pct: u64) -> Vec<(BlockNo, bool)> {
    let mut x = seed | 1;
    (0..len)
        .map(|_| {
            x ^= x >> 12;
            x ^= x << 25;
            x ^= x >> 27;
            let r = x.wrapping_mul(0x2545_f491_4f6c_dd1d);
            ((r >> 8) % blocks, (r >> 40) % 100 < write_pct)
        })
        .collect()
}

/// With uniform bands of B blocks, `zones = bands` makes exactly the choices of
/// `zone_size = B blocks`: the same victims, divisions and open zones after every access, under
/// every scheme and popularity, on a fixed seeded stream of mostly writes.
#[test]
fn uniform_bands_choose_as_zones_of_the_band_size() {
    for band in [3u64, 4, 7] {
        let blocks = band * 30;
        let map = BandMap::build(&BandConfig::Fixed { size: ByteSize(band * 4096) }, ByteSize(blocks * 4096))
            .unwrap();
        let ops = stream(band, 3000, blocks, 85);
        for scheme in [PoreScheme::Cf, PoreScheme::Pf, PoreScheme::Bl] {
            for popularity in [PorePopularity::SinceInsert, PorePopularity::LastPeriod] {
                let sized = PoreConfig { popularity, ..config(scheme, band, 5) };
                let zoned =
                    PoreConfig { zones: PoreZones::Bands, zone_size: ByteSize::mib(20), ..sized.clone() };
                let mut a = Probed::new(&sized, 16);
                let mut b = Probed::in_ctx(&zoned, &ctx_bands(16, map.clone()));
                for (i, &(blk, w)) in ops.iter().enumerate() {
                    let (ea, eb) = (a.access(blk, w), b.access(blk, w));
                    let what = format!("B={band} {scheme:?} {popularity:?} access {}", i + 1);
                    assert_eq!(
                        ea.iter().map(|m| (m.block, m.dirty)).collect::<Vec<_>>(),
                        eb.iter().map(|m| (m.block, m.dirty)).collect::<Vec<_>>(),
                        "{what}: victims"
                    );
                    let (pa, pb) = (a.pore.lock().unwrap(), b.pore.lock().unwrap());
                    assert_eq!(
                        (pa.divisions(), pa.open_zones(), pa.period_progress()),
                        (pb.divisions(), pb.open_zones(), pb.period_progress()),
                        "{what}: divisions"
                    );
                }
                assert!(a.pore.lock().unwrap().divisions() > 100, "the stream divides often");
                assert_eq!(a.violations(), Vec::<String>::new());
                assert_eq!(b.violations(), Vec::<String>::new());
            }
        }
    }
}

/// `zones = bands` on a drive without a band map is an error naming the field.
#[test]
fn band_zones_need_a_band_map() {
    let cfg = banded(PoreScheme::Bl, 4);
    let e = cfg.build(&ctx(10)).err().expect("no band map: an error");
    assert!(matches!(e, PolicyError::Field { policy: "pore", field: "zones", .. }), "{e:?}");
    let msg = e.to_string();
    assert!(msg.contains("zones") && msg.contains("band map"), "{msg}");
    // With a map it builds, and `zone_size` is not used (not even checked).
    let map = BandMap::build(&BandConfig::Fixed { size: ByteSize(4 * 4096) }, ByteSize(1 << 20)).unwrap();
    let odd = PoreConfig { zone_size: ByteSize(1), ..cfg };
    assert_eq!(odd.build(&ctx_bands(10, map)).unwrap().name(), "pore");
}

#[test]
fn zones_field_parses_and_round_trips() {
    let parse = |s: &str| match s.parse::<PolicyConfig>() {
        Ok(PolicyConfig::Pore(c)) => Ok(c),
        Ok(p) => panic!("{p:?}"),
        Err(e) => Err(e.to_string()),
    };
    assert_eq!(PoreConfig::default().zones, PoreZones::Size);
    assert_eq!(
        parse("pore:zones=bands").unwrap(),
        PoreConfig { zones: PoreZones::Bands, ..Default::default() }
    );
    let c = parse("pore:zones=size,zone_size=18MiB").unwrap();
    assert_eq!((c.zones, c.zone_size), (PoreZones::Size, ByteSize::mib(18)));
    assert_eq!(parse("pore:zone_size=18MiB").unwrap(), c);
    let c = parse("pore:scheme=cf,zones=bands").unwrap();
    assert_eq!((c.scheme, c.zones), (PoreScheme::Cf, PoreZones::Bands));
    let e = parse("pore:zones=band").unwrap_err();
    assert!(e.contains("band") && e.contains("size") && e.contains("bands"), "{e}");
    // The default is not written out, so configurations written before the field read and
    // write the same; `bands` is.
    let json = serde_json::to_string(&PolicyConfig::Pore(PoreConfig::default())).unwrap();
    assert!(!json.contains("zones"), "{json}");
    let bands = PolicyConfig::Pore(PoreConfig { zones: PoreZones::Bands, ..Default::default() });
    let json = serde_json::to_string(&bands).unwrap();
    assert!(json.contains(r#""zones":"bands""#), "{json}");
    assert_eq!(serde_json::from_str::<PolicyConfig>(&json).unwrap(), bands);
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 128, ..ProptestConfig::default() })]

    /// Band zones of random unequal sizes: every victim is the least recently used block that
    /// is clean or in an open band, and the structures match the table after every access.
    #[test]
    fn band_zones_match_the_slow_reference(
        cfg in arb_config(),
        min in 1u64..4,
        spread in 0u64..7,
        seed in any::<u64>(),
        capacity in 1u32..14,
        ops in proptest::collection::vec((0u64..48, any::<bool>()), 1..400),
    ) {
        let layout = BandConfig::UniformRandom {
            min: ByteSize(min * 4096),
            max: ByteSize((min + spread) * 4096),
            seed,
        };
        let map = BandMap::build(&layout, ByteSize(48 * 4096)).unwrap();
        let cfg = PoreConfig { zones: PoreZones::Bands, ..cfg };
        let mut p = Probed::in_ctx(&cfg, &ctx_bands(capacity, map));
        for &(b, w) in &ops {
            p.access(b, w);
        }
        prop_assert_eq!(p.violations(), Vec::<String>::new());
    }
}
