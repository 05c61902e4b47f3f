//! SAC and MOST+CDC: hand-checked traces and property tests of CDW's rules, TBS and CDC.
//!
//! The policies are built from their configurations and run inside a [`Cache`]; a small wrapper
//! shares the concrete policy with the test so its cycles, targets and decisions can be
//! inspected, and (in the property tests) checked against brute-force recomputations at every
//! victim selection.

use proptest::prelude::*;
use shingled_cache::policy::most_cdc::{MostCdc, MostCdcConfig};
use shingled_cache::policy::sac::{Comparator, CostGuard, CycleLength, Sac, SacConfig, Side, Tbs};
use shingled_cache::{BlockTable, Cache, Policy, PolicyConfig, PolicyContext, PolicyError, Slot, SmrCosts};
use shingled_core::{BlockNo, ByteSize};
use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Mutex};

/// Gives access to the SAC machinery of a policy.
trait HasSac: Policy {
    fn sac(&self) -> &Sac;
    fn sac_mut(&mut self) -> &mut Sac;
}
impl HasSac for Sac {
    fn sac(&self) -> &Sac {
        self
    }
    fn sac_mut(&mut self) -> &mut Sac {
        self
    }
}
impl HasSac for MostCdc {
    fn sac(&self) -> &Sac {
        self.machinery()
    }
    fn sac_mut(&mut self) -> &mut Sac {
        self.machinery_mut()
    }
}

/// What the property tests check at each victim selection.
#[derive(Clone, Copy, Debug, Default)]
struct Checks {
    /// Brute-force the targets of every new cycle with this TBS strategy and cooldown.
    tbs: Option<(Tbs, u64)>,
    /// Brute-force CDC's cost evaluation (clean_scan, guard, costs).
    cdc: Option<(u64, CostGuard, SmrCosts)>,
}

struct State<P> {
    policy: P,
    checks: Checks,
    errors: Vec<String>,
}

/// A policy shared between the cache and the test.
struct Shared<P>(Arc<Mutex<State<P>>>);

impl<P: HasSac + Send + 'static> Policy for Shared<P> {
    fn name(&self) -> &'static str {
        self.0.lock().unwrap().policy.name()
    }
    fn on_insert(&mut self, table: &BlockTable, slot: Slot) {
        self.0.lock().unwrap().policy.on_insert(table, slot)
    }
    fn on_hit(&mut self, table: &BlockTable, slot: Slot, became_dirty: bool) {
        self.0.lock().unwrap().policy.on_hit(table, slot, became_dirty)
    }
    fn select_victims(&mut self, table: &BlockTable, incoming: BlockNo, victims: &mut Vec<Slot>) {
        let mut st = self.0.lock().unwrap();
        let (cycles, evals) = (st.policy.sac().cycles(), st.policy.sac().evaluations());
        let start = victims.len();
        st.policy.select_victims(table, incoming, victims);
        let st = &mut *st;
        let sac = st.policy.sac();
        let mut errs = Vec::new();
        // CDW: dirty blocks are written back only for the (latest) cycle's target bands, and one
        // batch is one kind of block.
        for &v in &victims[start..] {
            let m = table.meta(v);
            if m.dirty && !sac.target_bands().contains(&sac.band_of(m.block)) {
                errs.push(format!(
                    "dirty block {} (band {}) written back outside targets {:?}",
                    m.block,
                    sac.band_of(m.block),
                    sac.target_bands()
                ));
            }
            let side = if m.dirty { Side::Dirty } else { Side::Clean };
            if Some(side) != sac.last_decision() {
                errs.push(format!("victim {} is {side:?}, decision {:?}", m.block, sac.last_decision()));
            }
        }
        // A batch is the LRU end of the clean list, or of the target band whose LRU tail is the
        // oldest dirty block of all target bands.
        let chosen: Vec<Slot> = victims[start..].to_vec();
        let mut pool: Vec<Slot> = match sac.last_decision() {
            Some(Side::Clean) => table.used_slots().filter(|&s| !table.meta(s).dirty).collect(),
            _ => {
                let targets = sac.target_bands();
                let dirty =
                    |s: &Slot| table.meta(*s).dirty && targets.contains(&sac.band_of(table.meta(*s).block));
                let oldest = table.used_slots().filter(dirty).min_by_key(|&s| table.meta(s).last_access);
                let band = oldest.map(|s| sac.band_of(table.meta(s).block));
                table
                    .used_slots()
                    .filter(|s| dirty(s) && Some(sac.band_of(table.meta(*s).block)) == band)
                    .collect()
            }
        };
        pool.sort_by_key(|&s| table.meta(s).last_access);
        pool.truncate(chosen.len());
        if pool != chosen {
            errs.push(format!("{:?} victims {chosen:?}, expected the LRU end {pool:?}", sac.last_decision()));
        }
        if let Some((tbs, cooldown)) = st.checks.tbs {
            if sac.cycles() == cycles + 1 {
                let expect = brute_targets(sac, table, tbs, cooldown);
                if expect != sac.target_bands() {
                    errs.push(format!(
                        "cycle {} targets {:?}, brute force {:?}",
                        sac.cycles(),
                        sac.target_bands(),
                        expect
                    ));
                }
            }
        }
        if let Some((scan, guard, costs)) = st.checks.cdc {
            if sac.evaluations() == evals + 1 {
                if let Err(e) = brute_cdc(sac, table, scan, guard, costs) {
                    errs.push(e);
                }
            }
        }
        st.errors.extend(errs);
    }
    fn on_remove(&mut self, table: &BlockTable, slot: Slot) {
        self.0.lock().unwrap().policy.on_remove(table, slot)
    }
}

/// `true` if `slot` was accessed outside the popularity window (Eq. 1's P(x) = 0).
fn is_cold(sac: &Sac, table: &BlockTable, slot: Slot) -> bool {
    table.clock() - table.meta(slot).last_access >= sac.hot_window()
}

/// TBS by brute force: rank the eligible bands holding dirty blocks.
fn brute_targets(sac: &Sac, table: &BlockTable, tbs: Tbs, cooldown: u64) -> Vec<u64> {
    let hist = sac.cycle_history();
    let now = sac.cycles();
    let cooling: BTreeSet<u64> = hist
        .iter()
        .filter(|r| r.number < now && r.number + cooldown >= now)
        .flat_map(|r| r.targets.clone())
        .collect();
    // band -> (dirty, cold, hit sum)
    let mut bands: BTreeMap<u64, (u64, u64, u64)> = BTreeMap::new();
    for s in table.used_slots() {
        let m = table.meta(s);
        if m.dirty {
            let e = bands.entry(sac.band_of(m.block)).or_default();
            e.0 += 1;
            e.1 += is_cold(sac, table, s) as u64;
            e.2 += m.hits as u64;
        }
    }
    let mut c: Vec<(u64, (u64, u64, u64))> =
        bands.into_iter().filter(|(b, _)| !cooling.contains(b)).collect();
    c.sort_by(|(na, a), (nb, b)| {
        let p = match tbs {
            Tbs::Ars => b.1.cmp(&a.1),
            Tbs::Ad => b.0.cmp(&a.0),
            Tbs::Pd => (a.2 as u128 * b.0 as u128).cmp(&(b.2 as u128 * a.0 as u128)),
        };
        p.then(na.cmp(nb))
    });
    c.into_iter().take(sac.max_targets()).map(|(b, _)| b).collect()
}

/// CDC's evaluation by brute force (Eq. 2–5).
fn brute_cdc(
    sac: &Sac,
    table: &BlockTable,
    scan: u64,
    guard: CostGuard,
    costs: SmrCosts,
) -> Result<(), String> {
    let e = *sac.last_evaluation().unwrap();
    let mut clean: Vec<Slot> = table.used_slots().filter(|&s| !table.meta(s).dirty).collect();
    clean.sort_by_key(|&s| table.meta(s).last_access);
    clean.truncate(scan as usize);
    let cc = clean.iter().filter(|&&s| is_cold(sac, table, s)).count() as u64;
    let den = |a: u64| match guard {
        CostGuard::Max1 => a.max(1) as f64,
        CostGuard::PlusOne => a as f64 + 1.0,
    };
    let clean_cost = costs.read_ms * (clean.len() as u64 - cc) as f64 / den(cc);
    let mut per: BTreeMap<u64, (u64, u64)> = BTreeMap::new();
    for s in table.used_slots() {
        let m = table.meta(s);
        let b = sac.band_of(m.block);
        if m.dirty && sac.target_bands().contains(&b) {
            let x = per.entry(b).or_default();
            x.0 += 1;
            x.1 += is_cold(sac, table, s) as u64;
        }
    }
    let time: f64 = per.values().map(|&(n, _)| costs.rmw_ms(n)).sum();
    let cold: u64 = per.values().map(|&(_, c)| c).sum();
    let dirty_cost = if per.is_empty() { f64::INFINITY } else { time / den(cold) };
    let close = |a: f64, b: f64| a == b || (a - b).abs() <= 1e-9 * a.abs().max(1.0);
    let side = if clean_cost < dirty_cost { Side::Clean } else { Side::Dirty };
    if e.clean_scanned != clean.len() as u64
        || e.clean_cold != cc
        || !close(e.clean_cost, clean_cost)
        || !close(e.dirty_cost, dirty_cost)
        || e.side != side
    {
        return Err(format!(
            "CDC evaluation {e:?}; brute force clean {}/{cc} cost {clean_cost}, dirty {per:?} cost {dirty_cost}",
            clean.len()
        ));
    }
    Ok(())
}

/// A cache under a shared policy.
struct Rig<P> {
    cache: Cache,
    state: Arc<Mutex<State<P>>>,
}

impl<P: HasSac + Send + 'static> Rig<P> {
    fn new(capacity: u32, policy: P, checks: Checks) -> Self {
        let state = Arc::new(Mutex::new(State { policy, checks, errors: Vec::new() }));
        state.lock().unwrap().policy.sac_mut().record_cycles(true);
        let cache = Cache::new(capacity, Box::new(Shared(state.clone())));
        Rig { cache, state }
    }

    /// One access; returns the blocks evicted by it.
    fn op(&mut self, block: BlockNo, write: bool) -> Vec<BlockNo> {
        let mut ev = Vec::new();
        if self.cache.access(block, write).is_none() {
            self.cache.insert(block, write, &mut ev);
        }
        ev.iter().map(|m| m.block).collect()
    }

    fn with<R>(&self, f: impl FnOnce(&Sac) -> R) -> R {
        f(self.state.lock().unwrap().policy.sac())
    }

    /// Replays `(block, write, expected victims)` steps, checking each step's victims and that a
    /// batch's kind is the policy's reported decision.
    fn replay(&mut self, steps: &[(BlockNo, bool, &[BlockNo])]) {
        for (i, &(b, w, want)) in steps.iter().enumerate() {
            let got = self.op(b, w);
            assert_eq!(got, want, "step {} ({}{b})", i + 1, if w { "w" } else { "r" });
            self.check();
        }
    }

    fn check(&self) {
        let st = self.state.lock().unwrap();
        st.policy.sac().check(self.cache.table()).unwrap();
        assert!(st.errors.is_empty(), "{:?}", st.errors);
    }

    fn history(&self) -> History {
        self.with(|s| s.cycle_history().iter().map(|r| (r.number, r.targets.clone(), r.writebacks)).collect())
    }
}

fn ctx(capacity: u32, pb: Option<u64>, costs: SmrCosts) -> PolicyContext {
    PolicyContext { capacity_blocks: capacity, bands: None, pb_blocks: pb, seed: 1, costs, block_span: None }
}

/// 4-block bands.
const BAND4: ByteSize = ByteSize(4 * 4096);

/// Easy costs: a read costs 10 ms, a band write-back R(x) = 50 + x ms.
const COSTS: SmrCosts = SmrCosts { read_ms: 10.0, rmw_fixed_ms: 50.0, rmw_per_block_ms: 1.0 };

const W: bool = true;
const R: bool = false;

/// SAC write-only = pure CDW. Capacity 8, 4-block bands (band = block / 4), PB 8 → cycle length
/// 8 → Rule 1 allows 2 targets; batch 2; hot window 0.5 × 8 = 4 accesses (cold ⇔ clock −
/// last_access ≥ 4); cooldown 1. "c" is the clock (accesses so far) at the selection, cold
/// blocks have last access ≤ c − 4. Stamps in parentheses.
///
/// - 1–9: w0 w1 w4 w8 w9 w10 w12, hit w0 (stamp 8), w5 → cache full: 0(8) 1(2) 4(3) 8(4) 9(5)
///   10(6) 12(7) 5(9).
/// - 10 w16, c 9: cold ≤ 5: 1, 4, 8, 9. ARS b0 1, b1 1, b2 2, b3 0 → cycle 1 targets [2, 0]
///   (b0 beats b1 on band number). Oldest tail: b0's 1 (2) vs b2's 8 (4) → evict 1, 0.
/// - 11 w17 fills the slot.
/// - 12 w2, c 11: b0 is empty → b2's tail: evict 8, 9. Block 2 lands in target b0 (dirtied
///   during the cycle).
/// - 13 w3 (b0, target).
/// - 14 w18: tails b2 10 (6) vs b0 2 (12) → evict 10 (b2 has no more).
/// - 15 w19: only b0 left: evict 2, 3 → targets drained → cycle 1 ends (Rule 3) after 7
///   write-backs, including the two blocks dirtied during it.
/// - 16 w1 (b0) fills; 17–20 hit 19 18 17 16 (stamps 17–20) → 1 (16) becomes cold by c 20.
/// - 21 w9, c 20: cold ≤ 16: 4(3) 12(7) 5(9) 1(16). ARS b0 1, b1 2, b3 1, b4 0. b0 and b2 were
///   cycle 1's targets: cooling (Rule 4) → cycle 2 targets [1, 3] (without the cooldown: [1, 0]).
///   Tails b1 4 (3) vs b3 12 (7) → evict 4, 5.
/// - 22 w13 (b3, target) fills.
/// - 23 w20, c 22: b3's tail 12 (7) → evict 12, 13 → cycle 2 ends (4 write-backs).
/// - 24 w21 fills.
/// - 25 w22, c 24: cold ≤ 20: 1(16) 19(17) 18(18) 17(19) 16(20). ARS b0 1, b2 0 (9 is hot), b4 4,
///   b5 0. b0's cooldown is over (cycle 3 > 1 + 1) → targets [4, 0]. Tails b4 19 (17) vs b0 1
///   (16) → evict 1.
#[test]
fn sac_write_only_is_cycle_driven() {
    let cfg = SacConfig { band_size: BAND4, batch: 2, hot_window: 0.5, ..Default::default() };
    let sac = cfg.build_sac(&ctx(8, Some(8), COSTS)).unwrap();
    assert_eq!((sac.cycle_length(), sac.max_targets(), sac.hot_window()), (8, 2, 4));
    let mut rig = Rig::new(8, sac, Checks::default());
    rig.replay(&[
        (0, W, &[]),
        (1, W, &[]),
        (4, W, &[]),
        (8, W, &[]),
        (9, W, &[]),
        (10, W, &[]),
        (12, W, &[]),
        (0, W, &[]),
        (5, W, &[]),
        (16, W, &[1, 0]),
    ]);
    rig.with(|s| {
        assert_eq!(s.target_bands(), &[2, 0]);
        assert_eq!((s.ars_of(0), s.ars_of(1), s.ars_of(2), s.ars_of(3)), (0, 1, 2, 0), "after 1, 0 left");
        assert_eq!(s.last_decision(), Some(Side::Dirty));
    });
    rig.replay(&[(17, W, &[]), (2, W, &[8, 9]), (3, W, &[]), (18, W, &[10]), (19, W, &[2, 3])]);
    rig.with(|s| assert!(!s.cycle_live() && s.cycles() == 1));
    rig.replay(&[(1, W, &[]), (19, W, &[]), (18, W, &[]), (17, W, &[]), (16, W, &[]), (9, W, &[4, 5])]);
    rig.with(|s| {
        assert_eq!(s.target_bands(), &[1, 3]);
        assert_eq!((s.ars_of(0), s.ars_of(3), s.ars_of(4)), (1, 1, 0));
    });
    rig.replay(&[(13, W, &[]), (20, W, &[12, 13]), (21, W, &[]), (22, W, &[1])]);
    assert_eq!(rig.history(), vec![(1, vec![2, 0], 7), (2, vec![1, 3], 4), (3, vec![4, 0], 1)]);
    rig.with(|s| assert_eq!((s.ars_of(4), s.evaluations()), (4, 0), "write-only: CDC never runs"));
}

/// With `end_cycle_at_length` (and a 2-block cycle, one target per cycle, batch 2) a cycle ends
/// after 2 write-backs even though its band still holds dirty blocks.
///
/// Capacity 4, hot window 1 × 4 = 4 accesses, cooldown 1.
/// - 1–4: w0 w1 w2 w4 (stamps 1–4).
/// - 5 w5, c 4: nothing cold; ARS all 0 → lowest band: cycle 1 targets [0] → evict 0, 1 →
///   length reached: cycle 1 ends with b0 still holding block 2.
/// - 6 w6 fills.
/// - 7 w8, c 6: b0 cools down → cycle 2 = [1] → evict 4, 5 → length reached.
/// - 8 w9 fills.
/// - 9 w12, c 8: cold ≤ 4: 2. b1 cools down; b0 (ARS 1) beats b2 (0) → cycle 3 = [0] → evict 2
///   → b0 drained (Rule 3) after 1 write-back.
#[test]
fn sac_cycle_can_end_at_its_length() {
    let cfg = SacConfig {
        band_size: BAND4,
        batch: 2,
        hot_window: 1.0,
        cycle_length: CycleLength::Blocks(2),
        end_cycle_at_length: true,
        ..Default::default()
    };
    let mut rig = Rig::new(4, cfg.build_sac(&ctx(4, None, COSTS)).unwrap(), Checks::default());
    rig.replay(&[
        (0, W, &[]),
        (1, W, &[]),
        (2, W, &[]),
        (4, W, &[]),
        (5, W, &[0, 1]),
        (6, W, &[]),
        (8, W, &[4, 5]),
        (9, W, &[]),
        (12, W, &[2]),
    ]);
    assert_eq!(rig.history(), vec![(1, vec![0], 2), (2, vec![1], 2), (3, vec![0], 1)]);
}

/// SAC read/write: CDC first chooses clean, later dirty. Capacity 8, 4-block bands, PB 8 (2
/// targets), batch 1, hot window 4; costs read 10 ms, R(x) = 50 + x ms.
///
/// - 1–8: r0 r1 r2 r3 (clean, stamps 1–4), w8 w9 w12 w13 (dirty b2, b3, stamps 5–8).
/// - 9 r20, c 8: cold ≤ 4: the four clean blocks. Cycle 1 starts to price the dirty side:
///   ARS b2 0, b3 0 → targets [2, 3].
///   Clean: |S| 4, ARS 4 → Time 10 × 0 = 0 → Cost 0.
///   Dirty: 4 blocks in 2 bands, ARS 0 → Time 2 × 50 + 4 = 104 → Cost 104 / max(0, 1) = 104.
///   → clean, for min(100,000, 4 clean blocks) = 4 evictions: evict 0.
/// - 10–12 r21 r22 r23: evict 1, 2, 3 (phase over).
/// - 13 r24, c 12: cold ≤ 8: all four dirty blocks; clean 20–23 (9–12) hot.
///   Clean: 4, ARS 0 → Time 40 → Cost 40. Dirty (cycle 1 still running): 104 / 4 = 26 → dirty,
///   until cycle 1 ends. Tails b2 8 (5) vs b3 12 (7) → evict 8.
/// - 14–16 r25 r26 r27: evict 9, 12, 13 → cycle 1 ends.
/// - 17 r28: no dirty block → clean LRU: evict 20.
#[test]
fn sac_cdc_chooses_clean_then_dirty() {
    let cfg = SacConfig { band_size: BAND4, batch: 1, hot_window: 0.5, ..Default::default() };
    let mut rig = Rig::new(8, cfg.build_sac(&ctx(8, Some(8), COSTS)).unwrap(), Checks::default());
    rig.replay(&[
        (0, R, &[]),
        (1, R, &[]),
        (2, R, &[]),
        (3, R, &[]),
        (8, W, &[]),
        (9, W, &[]),
        (12, W, &[]),
        (13, W, &[]),
        (20, R, &[0]),
    ]);
    rig.with(|s| {
        let e = s.last_evaluation().unwrap();
        assert_eq!((e.clean_scanned, e.clean_cold, e.clean_cost), (4, 4, 0.0));
        assert_eq!(
            (e.dirty_bands, e.dirty_blocks, e.dirty_cold, e.dirty_time_ms, e.dirty_cost),
            (2, 4, 0, 104.0, 104.0)
        );
        assert_eq!((e.side, s.target_bands(), s.cycles()), (Side::Clean, &[2u64, 3][..], 1));
    });
    rig.replay(&[(21, R, &[1]), (22, R, &[2]), (23, R, &[3]), (24, R, &[8])]);
    rig.with(|s| {
        let e = s.last_evaluation().unwrap();
        assert_eq!((e.clean_scanned, e.clean_cold, e.clean_time_ms, e.clean_cost), (4, 0, 40.0, 40.0));
        assert_eq!((e.dirty_cold, e.dirty_cost, e.side), (4, 26.0, Side::Dirty));
        assert_eq!((s.evaluations(), s.cycles()), (2, 1));
    });
    rig.replay(&[(25, R, &[9]), (26, R, &[12]), (27, R, &[13]), (28, R, &[20])]);
    rig.with(|s| {
        assert_eq!((s.cycle_live(), s.last_decision(), s.evaluations()), (false, Some(Side::Clean), 2));
    });
    assert_eq!(rig.history(), vec![(1, vec![2, 3], 4)]);

    // The artifact's guard, ARS + 1, changes the first decision's dirty cost to 104 / 1 (same)
    // and the second's to 104 / 5 = 20.8: the same victims here.
    let cfg = SacConfig { cost_guard: CostGuard::PlusOne, ..cfg };
    let mut rig = Rig::new(8, cfg.build_sac(&ctx(8, Some(8), COSTS)).unwrap(), Checks::default());
    for b in [0, 1, 2, 3] {
        rig.op(b, R);
    }
    for b in [8, 9, 12, 13] {
        rig.op(b, W);
    }
    for b in 20..25 {
        rig.op(b, R);
    }
    rig.with(|s| assert_eq!(s.last_evaluation().unwrap().dirty_cost, 20.8));

    // Free I/O: both costs are 0, and a tie evicts dirty (the artifact's `cost_clean <
    // cost_dirty` test): step 9 writes back 8 (b2's tail, older than b3's 12) instead of
    // dropping 0.
    let free = SmrCosts { read_ms: 0.0, rmw_fixed_ms: 0.0, rmw_per_block_ms: 0.0 };
    let cfg = SacConfig { cost_guard: CostGuard::Max1, ..cfg };
    let mut rig = Rig::new(8, cfg.build_sac(&ctx(8, Some(8), free)).unwrap(), Checks::default());
    for b in [0, 1, 2, 3] {
        rig.op(b, R);
    }
    for b in [8, 9, 12, 13] {
        rig.op(b, W);
    }
    assert_eq!(rig.op(20, R), vec![8]);
    rig.with(|s| {
        assert_eq!(
            s.last_evaluation().map(|e| (e.clean_cost, e.dirty_cost, e.side)),
            Some((0.0, 0.0, Side::Dirty))
        )
    });
}

/// The three TBS strategies of Fig. 15 on one write-only trace pick three different bands.
/// Capacity 6, 4-block bands, cycle length 4 blocks → 1 target, batch 2, hot window 0.5 × 6 = 3.
///
/// 1–4: w0 w1, hit 0, hit 1 (b0: stamps 3, 4, 2 accesses each). 5–10: w8 w9 w10, hits 8 9 10
/// (b2: stamps 8–10, 2 accesses each). 11: w4 (b1: stamp 11, 1 access). 12 w16, c 11: cold ≤ 8:
/// 0, 1, 8.
/// - ARS: b0 2, b1 0, b2 1 → b0: evict its tail 0, 1.
/// - PD (mean accesses): b0 2, b1 1, b2 2 → b1: evict 4.
/// - AD (dirty blocks): b0 2, b1 1, b2 3 → b2: evict 8, 9.
#[test]
fn tbs_strategies_pick_different_targets() {
    let trace = [(0, W), (1, W), (0, W), (1, W), (8, W), (9, W), (10, W), (8, W), (9, W), (10, W), (4, W)];
    for (tbs, band, victims) in [(Tbs::Ars, 0, vec![0, 1]), (Tbs::Pd, 1, vec![4]), (Tbs::Ad, 2, vec![8, 9])] {
        let cfg = SacConfig {
            band_size: BAND4,
            batch: 2,
            hot_window: 0.5,
            cycle_length: CycleLength::Blocks(4),
            tbs,
            ..Default::default()
        };
        let mut rig = Rig::new(6, cfg.build_sac(&ctx(6, None, COSTS)).unwrap(), Checks::default());
        for &(b, w) in &trace {
            assert!(rig.op(b, w).is_empty());
        }
        assert_eq!(rig.op(16, W), victims, "{tbs:?}");
        rig.with(|s| assert_eq!(s.target_bands(), &[band], "{tbs:?}"));
    }
}

/// MOST+CDC: capacity 8, 4-block bands, batch 2, hot window 4, costs read 10, R(x) = 50 + x.
///
/// - 1–8: r0 r1 r8 r9 (clean, stamps 1–4), w4 w5 w6 (b1, 5–7), r12 (8).
/// - 9 r13, c 8: cold ≤ 4: 0 1 8 9. MOST: cycle 1 target = most dirty blocks = [1].
///   Clean: 5 blocks, ARS 4 → Time 10 → 2.5. Dirty: R(3) = 53, ARS 0 → 53. → clean for
///   min(100,000, 5) = 5 evictions: evict 0, 1.
/// - 10 r14 fills. 11 r15: evict 8, 9. 12 r16 fills. 13 r17: evict 12 (the phase's 5th).
/// - 14 r18, c 13: cold ≤ 9: 4 5 6 and 13. Clean: 5, ARS 1 → 40 / 1 = 40. Dirty: 53 / 3 = 17.7
///   → dirty: evict 4, 5 (b1's tail).
/// - 15 w7 (b1, dirtied during the cycle) fills. 16 r19: evict 6, 7 → b1 drained → cycle 1 ends.
/// - 17 w4 fills. 18 w5, c 17: cold ≤ 13: clean 13–17. Cycle 2: b1 again (MOST has no
///   cooldown). Clean: 7, ARS 5 → 20 / 5 = 4. Dirty: R(1) = 51 / 1 → clean: evict 13, 14.
///
/// The artifact's comparator (`recency`) on the same trace takes each batch from the older tail:
/// 9: clean 0 (1) vs b1's 4 (5) → 0, 1; 11: 8 (3) vs 4 → 8, 9; 13: 12 (8) vs 4 (5) → 4, 5;
/// 14 fills; 15 w7, c 14: 12 vs 6 (7) → 6 → cycle 1 ends; 16 r19: cycle 2 = [1] (block 7,
/// stamp 15) vs 12 → 12, 13; 17 fills; 18: 14 (10) vs 7 (15) → 14, 15.
#[test]
fn most_cdc_by_hand() {
    let trace = [
        (0, R),
        (1, R),
        (8, R),
        (9, R),
        (4, W),
        (5, W),
        (6, W),
        (12, R),
        (13, R),
        (14, R),
        (15, R),
        (16, R),
        (17, R),
        (18, R),
        (7, W),
        (19, R),
        (4, W),
        (5, W),
    ];
    let cost: [&[BlockNo]; 18] = [
        &[],
        &[],
        &[],
        &[],
        &[],
        &[],
        &[],
        &[],
        &[0, 1],
        &[],
        &[8, 9],
        &[],
        &[12],
        &[4, 5],
        &[],
        &[6, 7],
        &[],
        &[13, 14],
    ];
    let recency: [&[BlockNo]; 18] = [
        &[],
        &[],
        &[],
        &[],
        &[],
        &[],
        &[],
        &[],
        &[0, 1],
        &[],
        &[8, 9],
        &[],
        &[4, 5],
        &[],
        &[6],
        &[12, 13],
        &[],
        &[14, 15],
    ];
    for (comparator, want, cycles) in [
        (Comparator::Cost, cost, vec![(1, vec![1], 4), (2, vec![1], 0)]),
        (Comparator::Recency, recency, vec![(1, vec![1], 3), (2, vec![1], 0)]),
    ] {
        let cfg =
            MostCdcConfig { band_size: BAND4, batch: 2, hot_window: 0.5, comparator, ..Default::default() };
        let mut rig = Rig::new(8, cfg.build_most_cdc(&ctx(8, None, COSTS)).unwrap(), Checks::default());
        let steps: Vec<(BlockNo, bool, &[BlockNo])> =
            trace.iter().zip(want).map(|(&(b, w), v)| (b, w, v)).collect();
        rig.replay(&steps);
        assert_eq!(rig.history(), cycles, "{comparator:?}");
        rig.with(|s| assert_eq!(s.max_targets(), 1));
        if comparator == Comparator::Cost {
            rig.with(|s| {
                let e = s.last_evaluation().unwrap();
                assert_eq!((e.clean_scanned, e.clean_cold, e.clean_cost, e.dirty_cost), (7, 5, 4.0, 51.0));
                assert_eq!(s.evaluations(), 3);
            });
        }
    }
}

/// `cdc = false`: the recency comparator inside SAC.
#[test]
fn sac_without_cdc_compares_tails() {
    let cfg = SacConfig { band_size: BAND4, batch: 1, hot_window: 0.5, cdc: false, ..Default::default() };
    let mut rig = Rig::new(4, cfg.build_sac(&ctx(4, Some(8), COSTS)).unwrap(), Checks::default());
    // r0 (1) w4 (2) r1 (3) w5 (4); r2: clean tail 0 (1) older than b1's 4 (2) → 0; r3: b1's 4
    // (2) older than clean 1 (3) → 4.
    rig.replay(&[(0, R, &[]), (4, W, &[]), (1, R, &[]), (5, W, &[]), (2, R, &[0]), (3, R, &[4])]);
    rig.with(|s| assert_eq!((s.evaluations(), s.last_decision()), (0, Some(Side::Dirty))));
}

#[test]
fn configuration_parsing_and_errors() {
    let c = SacConfig::default();
    assert_eq!(c.band_size, ByteSize(20_480_000));
    assert_eq!((c.batch, c.cooldown_cycles, c.clean_scan, c.clean_phase), (64, 1, 100_000, 100_000));
    assert_eq!((c.hot_window, c.tbs, c.cdc, c.end_cycle_at_length), (0.8, Tbs::Ars, true, false));
    assert_eq!(c.cycle_length, CycleLength::OfPb(1.0));
    // JSON round trip of every field
    let j = serde_json::to_string(&c).unwrap();
    assert_eq!(serde_json::from_str::<SacConfig>(&j).unwrap(), c);
    let m = MostCdcConfig::default();
    assert_eq!(serde_json::from_str::<MostCdcConfig>(&serde_json::to_string(&m).unwrap()).unwrap(), m);

    // registry forms, as the experiments use them
    let p: PolicyConfig = "sac:cycle_length=0.5x,tbs=pd,band_size=10MB".parse().unwrap();
    let PolicyConfig::Sac(s) = p else { panic!("{p:?}") };
    assert_eq!((s.cycle_length, s.tbs, s.band_size), (CycleLength::OfPb(0.5), Tbs::Pd, ByteSize(10_000_000)));
    for (txt, want) in [
        ("2pb", CycleLength::OfPb(2.0)),
        ("51200", CycleLength::Blocks(51200)),
        ("200MiB", CycleLength::Blocks(51200)),
    ] {
        let p: PolicyConfig = format!("sac:cycle_length={txt}").parse().unwrap();
        assert!(matches!(p, PolicyConfig::Sac(ref s) if s.cycle_length == want), "{txt}: {p:?}");
    }
    assert!(matches!("sac-pd".parse::<PolicyConfig>().unwrap(), PolicyConfig::Sac(s) if s.tbs == Tbs::Pd));
    assert!(matches!("sac-ad".parse::<PolicyConfig>().unwrap(), PolicyConfig::Sac(s) if s.tbs == Tbs::Ad));
    let p: PolicyConfig = "most-cdc:comparator=recency,cycle_length=1pb".parse().unwrap();
    assert!(
        matches!(p, PolicyConfig::MostCdc(ref m) if m.comparator == Comparator::Recency && m.cycle_length == Some(CycleLength::OfPb(1.0)))
    );
    let e = "sac:cycle_length=0.5".parse::<PolicyConfig>().unwrap_err().to_string();
    assert!(e.contains("0.5pb"), "{e}");
    let e = "sac:bogus=1".parse::<PolicyConfig>().unwrap_err().to_string();
    assert!(e.contains("bogus"), "{e}");

    // validation
    let c4 = ctx(16, Some(8), COSTS);
    let field = |cfg: SacConfig| match cfg.build_sac(&c4) {
        Err(PolicyError::Field { field, .. }) => field,
        other => panic!("{other:?}"),
    };
    assert_eq!(field(SacConfig { band_size: ByteSize(4095), ..Default::default() }), "band_size");
    assert_eq!(field(SacConfig { batch: 0, ..Default::default() }), "batch");
    assert_eq!(field(SacConfig { hot_window: 0.0, ..Default::default() }), "hot_window");
    assert_eq!(field(SacConfig { hot_window: f64::NAN, ..Default::default() }), "hot_window");
    assert_eq!(field(SacConfig { clean_scan: 0, ..Default::default() }), "clean_scan");
    assert_eq!(field(SacConfig { clean_phase: 0, ..Default::default() }), "clean_phase");
    assert_eq!(field(SacConfig { cooldown_cycles: 1001, ..Default::default() }), "cooldown_cycles");
    assert_eq!(
        field(SacConfig { cycle_length: CycleLength::OfPb(0.0), ..Default::default() }),
        "cycle_length"
    );
    assert_eq!(
        field(SacConfig { cycle_length: CycleLength::Blocks(0), ..Default::default() }),
        "cycle_length"
    );
    match SacConfig::default().build_sac(&ctx(16, None, COSTS)) {
        Err(PolicyError::Unsupported { reason, .. }) => {
            assert!(reason.contains("persistent buffer") && reason.contains("cycle_length"), "{reason}")
        }
        other => panic!("{other:?}"),
    }
    // an absolute cycle length needs no PB
    let s = SacConfig { cycle_length: CycleLength::Blocks(12_000), ..Default::default() }
        .build_sac(&ctx(16, None, COSTS))
        .unwrap();
    assert_eq!((s.cycle_length(), s.max_targets(), s.band_blocks()), (12_000, 2, 5000));
    // Fig. 16's 10× PB: Rule 1 deliberately exceeded, 10 × 8 / 4 = 20 targets
    let s = SacConfig { band_size: BAND4, cycle_length: CycleLength::OfPb(10.0), ..Default::default() }
        .build_sac(&c4)
        .unwrap();
    assert_eq!((s.cycle_length(), s.max_targets()), (80, 20));
    assert!(MostCdcConfig::default().build_most_cdc(&ctx(16, None, COSTS)).is_ok(), "MOST+CDC needs no PB");
    assert!(matches!(
        MostCdcConfig { cycle_length: Some(CycleLength::OfPb(1.0)), ..Default::default() }
            .build_most_cdc(&ctx(16, None, COSTS)),
        Err(PolicyError::Unsupported { .. })
    ));
    let bad = SmrCosts { read_ms: -1.0, ..COSTS };
    assert!(matches!(
        SacConfig::default().build_sac(&ctx(16, Some(8), bad)),
        Err(PolicyError::Unsupported { .. })
    ));
}

/// A random SAC configuration over tiny bands, and the checks that fit it.
fn sac_config() -> impl Strategy<Value = (SacConfig, u64)> {
    (
        1u64..5,
        1u32..4,
        0u32..4,
        prop_oneof![Just(Tbs::Ars), Just(Tbs::Pd), Just(Tbs::Ad)],
        any::<bool>(),
        any::<bool>(),
        prop_oneof![Just(0.25), Just(0.5), Just(0.8), Just(1.5)],
        1u64..12,
        1u64..12,
        prop_oneof![
            Just(CycleLength::OfPb(1.0)),
            Just(CycleLength::OfPb(0.5)),
            Just(CycleLength::OfPb(3.0)),
            Just(CycleLength::Blocks(5))
        ],
        any::<bool>(),
        1u64..20,
    )
        .prop_map(|(band, batch, cooldown, tbs, cdc, at_len, hot, scan, phase, cycle, plus1, pb)| {
            let cfg = SacConfig {
                band_size: ByteSize(band * 4096),
                cycle_length: cycle,
                end_cycle_at_length: at_len,
                cooldown_cycles: cooldown,
                batch,
                hot_window: hot,
                tbs,
                cdc,
                clean_scan: scan,
                clean_phase: phase,
                cost_guard: if plus1 { CostGuard::PlusOne } else { CostGuard::Max1 },
            };
            (cfg, pb)
        })
}

fn ops() -> impl Strategy<Value = Vec<(BlockNo, bool)>> {
    proptest::collection::vec((0u64..48, any::<bool>()), 1..500)
}

/// (cycle number, targets, write-backs) per cycle.
type History = Vec<(u64, Vec<u64>, u64)>;

/// Replays `ops`; returns the evictions (block, dirty) and the cycle history.
fn run_sac(
    cfg: &SacConfig,
    pb: u64,
    capacity: u32,
    ops: &[(BlockNo, bool)],
) -> Result<(Vec<(BlockNo, bool)>, History), String> {
    let costs = SmrCosts { read_ms: 14.0, rmw_fixed_ms: 30.0, rmw_per_block_ms: 2.0 };
    let sac = cfg.build_sac(&ctx(capacity, Some(pb), costs)).map_err(|e| e.to_string())?;
    let checks = Checks {
        tbs: Some((cfg.tbs, cfg.cooldown_cycles as u64)),
        cdc: cfg.cdc.then_some((cfg.clean_scan, cfg.cost_guard, costs)),
    };
    let mut rig = Rig::new(capacity, sac, checks);
    let mut evicted = Vec::new();
    for &(b, w) in ops {
        let mut ev = Vec::new();
        if rig.cache.access(b, w).is_none() {
            rig.cache.insert(b, w, &mut ev);
        }
        evicted.extend(ev.iter().map(|m| (m.block, m.dirty)));
        let st = rig.state.lock().unwrap();
        st.policy.sac().check(rig.cache.table()).map_err(|e| e.to_string())?;
        if let Some(e) = st.errors.first() {
            return Err(e.clone());
        }
    }
    Ok((evicted, rig.history()))
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

    /// CDW's rules and TBS/CDC hold at every victim selection, and replays are deterministic:
    /// - dirty blocks are written back only for the current cycle's target bands (CDW);
    /// - every new cycle's targets are the brute-force TBS ranking of the eligible bands;
    /// - a band targeted in cycle k is not targeted in cycles k+1 … k+cooldown (Rule 4);
    /// - a cycle has at most max(1, cycle_length / band_blocks) targets (Rule 1) and, with
    ///   `end_cycle_at_length`, writes back at most cycle_length blocks;
    /// - every CDC evaluation matches Eq. 2–5 recomputed from the table;
    /// - the internal counters (ARS per band, cold clean blocks, target sums) match the table.
    #[test]
    fn sac_rules_hold((cfg, pb) in sac_config(), capacity in 1u32..24, ops in ops()) {
        let (ev, hist) = run_sac(&cfg, pb, capacity, &ops).map_err(TestCaseError::fail)?;
        let band_blocks = cfg.band_size.0 / 4096;
        let len = cfg.cycle_length.resolve(&PolicyContext { pb_blocks: Some(pb), ..Default::default() }, "sac", "cycle_length").unwrap();
        let max_targets = (len / band_blocks).max(1) as usize;
        for (i, (n, t, wb)) in hist.iter().enumerate() {
            prop_assert_eq!(*n, i as u64 + 1);
            prop_assert!(t.len() <= max_targets, "cycle {} has {} targets > {}", n, t.len(), max_targets);
            if cfg.end_cycle_at_length {
                prop_assert!(*wb <= len, "cycle {} wrote back {} > {}", n, wb, len);
            }
            let distinct: BTreeSet<_> = t.iter().collect();
            prop_assert_eq!(distinct.len(), t.len());
            for (m, u, _) in hist.iter().skip(i + 1).take(cfg.cooldown_cycles as usize) {
                prop_assert!(t.iter().all(|b| !u.contains(b)), "cycles {} {:?} and {} {:?} share a band", n, t, m, u);
            }
        }
        let again = run_sac(&cfg, pb, capacity, &ops).map_err(TestCaseError::fail)?;
        prop_assert_eq!((ev, hist), again, "not deterministic");
    }

    /// MOST+CDC: one target per cycle, the band with the most cached dirty blocks; CDC's
    /// evaluations match Eq. 2–5; deterministic.
    #[test]
    fn most_cdc_rules_hold(capacity in 1u32..24, ops in ops(), batch in 1u32..4, recency in any::<bool>(), scan in 1u64..12) {
        let costs = SmrCosts { read_ms: 14.0, rmw_fixed_ms: 30.0, rmw_per_block_ms: 2.0 };
        let cfg = MostCdcConfig {
            band_size: BAND4,
            batch,
            comparator: if recency { Comparator::Recency } else { Comparator::Cost },
            clean_scan: scan,
            clean_phase: 3,
            hot_window: 0.5,
            ..Default::default()
        };
        let run = || -> Result<_, String> {
            let p = cfg.build_most_cdc(&ctx(capacity, None, costs)).map_err(|e| e.to_string())?;
            let checks = Checks { tbs: Some((Tbs::Ad, 0)), cdc: (!recency).then_some((scan, CostGuard::Max1, costs)) };
            let mut rig = Rig::new(capacity, p, checks);
            let mut out = Vec::new();
            for &(b, w) in &ops {
                out.extend(rig.op(b, w));
                let st = rig.state.lock().unwrap();
                st.policy.sac().check(rig.cache.table()).map_err(|e| e.to_string())?;
                if let Some(e) = st.errors.first() {
                    return Err(e.clone());
                }
            }
            Ok((out, rig.history()))
        };
        let (ev, hist) = run().map_err(TestCaseError::fail)?;
        for (_, t, _) in &hist {
            prop_assert_eq!(t.len(), 1);
        }
        prop_assert_eq!((ev, hist), run().map_err(TestCaseError::fail)?);
    }
}
