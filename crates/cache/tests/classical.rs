//! The classical reference policies (FIFO, ARC, S3-FIFO): hand-checked traces, their structural
//! invariants, literal models of the papers' pseudo-code, and scan sanity checks against LRU.

use proptest::prelude::*;
use rand_pcg::rand_core::{RngCore, SeedableRng};
use shingled_cache::policy::arc::{ArcConfig, ArcPolicy, ArcSizes};
use shingled_cache::policy::fifo::FifoConfig;
use shingled_cache::policy::lru::LruConfig;
use shingled_cache::policy::s3fifo::{S3Fifo, S3FifoConfig, S3FifoSizes};
use shingled_cache::{
    BlockMeta, BlockTable, Cache, Policy, PolicyBuilder, PolicyConfig, PolicyContext, PolicyError, Slot,
};
use shingled_core::BlockNo;
use std::collections::{BTreeSet, VecDeque};
use std::sync::{Arc, Mutex};

fn ctx(capacity: u32) -> PolicyContext {
    PolicyContext { capacity_blocks: capacity, ..Default::default() }
}

fn cache_from(cfg: &dyn PolicyBuilder, capacity: u32) -> Cache {
    Cache::new(capacity, cfg.build(&ctx(capacity)).unwrap())
}

/// A policy shared between a [`Cache`] and the test, so the test can inspect its structures.
struct Shared<P>(Arc<Mutex<P>>);

impl<P: Policy + 'static> Policy for Shared<P> {
    fn name(&self) -> &'static str {
        self.0.lock().unwrap().name()
    }
    fn on_insert(&mut self, t: &BlockTable, s: Slot) {
        self.0.lock().unwrap().on_insert(t, s)
    }
    fn on_hit(&mut self, t: &BlockTable, s: Slot, d: bool) {
        self.0.lock().unwrap().on_hit(t, s, d)
    }
    fn select_victims(&mut self, t: &BlockTable, incoming: BlockNo, v: &mut Vec<Slot>) {
        self.0.lock().unwrap().select_victims(t, incoming, v)
    }
    fn single_victim(&mut self, t: &BlockTable, incoming: BlockNo) -> Option<Slot> {
        self.0.lock().unwrap().single_victim(t, incoming)
    }
    fn replace_victim(&mut self, t: &BlockTable, s: Slot) -> bool {
        self.0.lock().unwrap().replace_victim(t, s)
    }
    fn on_remove(&mut self, t: &BlockTable, s: Slot) {
        self.0.lock().unwrap().on_remove(t, s)
    }
    fn heap_bytes(&self) -> usize {
        self.0.lock().unwrap().heap_bytes()
    }
}

fn inspectable<P: Policy + 'static>(policy: P, capacity: u32) -> (Cache, Arc<Mutex<P>>) {
    let p = Arc::new(Mutex::new(policy));
    (Cache::new(capacity, Box::new(Shared(p.clone()))), p)
}

/// One access, write-back/write-allocate and read-allocate: `Ok(())` on a hit, else the
/// evicted blocks as (block, dirty).
fn step(cache: &mut Cache, b: BlockNo, w: bool) -> Result<(), Vec<(BlockNo, bool)>> {
    if cache.access(b, w).is_some() {
        return Ok(());
    }
    let mut ev: Vec<BlockMeta> = Vec::new();
    cache.insert(b, w, &mut ev);
    Err(ev.iter().map(|m| (m.block, m.dirty)).collect())
}

/// Replays `ops`; returns the hits and all evictions in order.
fn replay(cache: &mut Cache, ops: &[(BlockNo, bool)]) -> (u64, Vec<(BlockNo, bool)>) {
    let (mut hits, mut all) = (0, Vec::new());
    for &(b, w) in ops {
        match step(cache, b, w) {
            Ok(()) => hits += 1,
            Err(ev) => all.extend(ev),
        }
    }
    (hits, all)
}

fn contents(cache: &Cache) -> BTreeSet<BlockNo> {
    cache.table().used_slots().map(|s| cache.table().meta(s).block).collect()
}

fn dirty(cache: &Cache) -> BTreeSet<BlockNo> {
    let t = cache.table();
    t.used_slots().filter(|&s| t.meta(s).dirty).map(|s| t.meta(s).block).collect()
}

// ---------------------------------------------------------------------------------------------
// FIFO

/// FIFO by hand. Capacity 3; queue written newest first:
///
/// ```text
///  1 w1   [1]          dirty {1}
///  2 w2   [2 1]        dirty {1,2}
///  3 r3   [3 2 1]
///  4 r1   hit: no reordering (LRU would protect 1 now)
///  5 r4   evict oldest 1 (dirty)        [4 3 2]
///  6 w3   hit: 3 becomes dirty
///  7 r5   evict 2 (dirty)               [5 4 3]
///  8 r4   hit
///  9 r6   evict 3 (dirty since step 6)  [6 5 4]
/// 10 w7   evict 4 (clean)               [7 6 5]
/// 11 r1   evict 5 (clean)               [1 7 6]
/// 12 w6   hit: 6 becomes dirty
/// ```
/// Evictions 1d 2d 3d 4c 5c; hits 4 (steps 4, 6, 8, 12); cached {1,6,7}, dirty {6,7}.
#[test]
fn fifo_by_hand() {
    let mut c = cache_from(&FifoConfig::default(), 3);
    assert_eq!(c.policy_name(), "fifo");
    let ops = [
        (1, true),
        (2, true),
        (3, false),
        (1, false),
        (4, false),
        (3, true),
        (5, false),
        (4, false),
        (6, false),
        (7, true),
        (1, false),
        (6, true),
    ];
    let (hits, ev) = replay(&mut c, &ops);
    assert_eq!(ev, vec![(1, true), (2, true), (3, true), (4, false), (5, false)]);
    assert_eq!(hits, 4);
    assert_eq!(contents(&c), BTreeSet::from([1, 6, 7]));
    assert_eq!(dirty(&c), BTreeSet::from([6, 7]));
}

/// An invalidated block leaves the queue; the others keep their order.
#[test]
fn fifo_invalidation_keeps_order() {
    let mut c = cache_from(&FifoConfig::default(), 3);
    replay(&mut c, &[(1, false), (2, false), (3, false)]);
    assert!(c.invalidate(1).is_some());
    let (_, ev) = replay(&mut c, &[(4, false), (5, false), (6, false)]);
    // 4 takes the free slot; 5 evicts 2, 6 evicts 3.
    assert_eq!(ev, vec![(2, false), (3, false)]);
}

// ---------------------------------------------------------------------------------------------
// ARC

/// ARC by hand, c = 4. Lists written MRU first; `p` is the target size of T1.
///
/// ```text
///  # op   case                                               victim  T1       T2        B1      B2        p
///  1 w1   IV, free slot                                      -       [1]      []        []      []        0
///  2 w2                                                      -       [2 1]
///  3 r3                                                      -       [3 2 1]
///  4 r1   I: T1 → T2                                         -       [3 2]    [1]
///  5 r4   IV, free slot                                      -       [4 3 2]  [1]                         full
///  6 r5   IV-B (|L1|=3<4, total 4<8); REPLACE: |T1|=3>p=0
///         → T1's LRU                                         2d      [5 4 3]  [1]       [2]     []        0
///  7 r2   II: 2∈B1, |B1|=1≥|B2|=0 → δ=1, p=1; REPLACE:
///         |T1|=3>1 → T1's LRU; 2 → T2                        3c      [5 4]    [2 1]     [3]     []        1
///  8 w4   I: T1 → T2, 4 dirty                                -       [5]      [4 2 1]
///  9 r6   IV-B (|L1|=2, total 5); |T1|=1 ≯ p=1 → T2's LRU     1d      [6 5]    [4 2]     [3]     [1]       1
/// 10 r1   III: 1∈B2, |B2|=1≥|B1|=1 → δ=1, p=0; |T1|=2>0       5c      [6]      [1 4 2]   [5 3]   []        0
/// 11 r6   I                                                  -       []       [6 1 4 2]
/// 12 r7   IV-B (|L1|=2, total 6); T1 empty → T2's LRU         2c      [7]      [6 1 4]   [5 3]   [2]       0
/// 13 r7   I                                                  -       []       [7 6 1 4]
/// 14 r8   IV-B (|L1|=2, total 7) → T2's LRU                   4d      [8]      [7 6 1]   [5 3]   [4 2]     0
/// 15 r5   II: |B1|=2≥|B2|=2 → δ=1, p=1; |T1|=1≯1 → T2         1c      [8]      [5 7 6]   [3]     [1 4 2]   1
/// 16 r3   II: |B1|=1<|B2|=3 → δ=|B2|/|B1|=3, p=4; → T2        6c      [8]      [3 5 7]   []      [6 1 4 2] 4
/// 17 r6   III: |B2|=4≥|B1|=0 → δ=1, p=3; |T1|=1≠3 → T2        7c      [8]      [6 3 5]   []      [7 1 4 2] 3
/// 18 w9   IV-B, total 8=2c: forget B2's LRU 2; → T2's LRU     5c      [9 8]    [6 3]     []      [5 7 1 4] 3
/// 19 r1   III: δ=1, p=2; tie-break: 1∈B2 and |T1|=2=p
///         → T1's LRU (T2's 3 without the tie-break)          8c      [9]      [1 6 3]   [8]     [5 7 4]   2
/// 20 w3   I, 3 dirty                                         -       [9]      [3 1 6]
/// 21 r12  IV-B, total 8: forget 4; |T1|=1≯2 → T2's LRU        6c      [12 9]   [3 1]     [8]     [6 5 7]   2
/// ```
/// Final: cached {1,3,9,12}, dirty {3,9}; |T1|=2 |T2|=2 |B1|=1 |B2|=3, p=2.
#[test]
fn arc_by_hand() {
    type Row = (BlockNo, bool, Option<(BlockNo, bool)>, f64);
    let rows: [Row; 21] = [
        (1, true, None, 0.0),
        (2, true, None, 0.0),
        (3, false, None, 0.0),
        (1, false, None, 0.0),
        (4, false, None, 0.0),
        (5, false, Some((2, true)), 0.0),
        (2, false, Some((3, false)), 1.0),
        (4, true, None, 1.0),
        (6, false, Some((1, true)), 1.0),
        (1, false, Some((5, false)), 0.0),
        (6, false, None, 0.0),
        (7, false, Some((2, false)), 0.0),
        (7, false, None, 0.0),
        (8, false, Some((4, true)), 0.0),
        (5, false, Some((1, false)), 1.0),
        (3, false, Some((6, false)), 4.0),
        (6, false, Some((7, false)), 3.0),
        (9, true, Some((5, false)), 3.0),
        (1, false, Some((8, false)), 2.0),
        (3, true, None, 2.0),
        (12, false, Some((6, false)), 2.0),
    ];
    // Once through the registry's way of building (victims and contents) …
    let mut built = cache_from(&ArcConfig::default(), 4);
    assert_eq!(built.policy_name(), "arc");
    // … and once inspectable (p and list sizes).
    let (mut c, arc) = inspectable(ArcPolicy::new(4), 4);
    for (i, &(b, w, victim, p)) in rows.iter().enumerate() {
        let n = i + 1;
        let got = step(&mut c, b, w);
        assert_eq!(step(&mut built, b, w), got, "step {n}: built and inspectable ARC differ");
        let got_victim = got.err().and_then(|ev| {
            assert!(ev.len() <= 1, "step {n}: ARC evicts one block at a time");
            ev.first().copied()
        });
        assert_eq!(got_victim, victim, "step {n} ({b}): victim");
        assert_eq!(arc.lock().unwrap().debug_sizes().p, p, "step {n} ({b}): p");
    }
    assert_eq!(contents(&c), BTreeSet::from([1, 3, 9, 12]));
    assert_eq!(dirty(&c), BTreeSet::from([3, 9]));
    assert_eq!(arc.lock().unwrap().debug_sizes(), ArcSizes { t1: 2, t2: 2, b1: 1, b2: 3, p: 2.0 });
    assert_eq!(contents(&built), contents(&c));
}

/// Inserts into free slots (after an invalidation) still adapt `p` on a ghost hit, and an
/// invalidated block is forgotten rather than remembered. c = 2:
///
/// ```text
/// r1 r2        T1 [2 1]
/// r3           IV-A: |L1| = 2 = c and |T1| = c → T1's LRU 1 leaves, no ghost    T1 [3 2]
/// r2           hit → T2                                   T1 [3]  T2 [2]
/// r4           IV-B; |T1| = 1 > p = 0 → evict 3 → B1       T1 [4]  T2 [2]  B1 [3]
/// invalidate 4                                             T1 []   T2 [2]  B1 [3]
/// r3           free slot, ghost hit in B1: p = 1, → T2    T2 [3 2]               p = 1
/// r4           not a ghost: IV-B; |T1| = 0 → T2's LRU 2 → B2    T1 [4] T2 [3] B2 [2]
/// ```
#[test]
fn arc_ghost_hit_into_free_slot_and_invalidation() {
    let (mut c, arc) = inspectable(ArcPolicy::new(2), 2);
    let sizes = |arc: &Arc<Mutex<ArcPolicy>>| arc.lock().unwrap().debug_sizes();
    assert_eq!(step(&mut c, 1, false), Err(vec![]));
    assert_eq!(step(&mut c, 2, false), Err(vec![]));
    assert_eq!(step(&mut c, 3, false), Err(vec![(1, false)]));
    assert_eq!(sizes(&arc), ArcSizes { t1: 2, t2: 0, b1: 0, b2: 0, p: 0.0 });
    assert_eq!(step(&mut c, 2, false), Ok(()));
    assert_eq!(step(&mut c, 4, false), Err(vec![(3, false)]));
    assert_eq!(sizes(&arc), ArcSizes { t1: 1, t2: 1, b1: 1, b2: 0, p: 0.0 });
    assert!(c.invalidate(4).is_some());
    assert_eq!(sizes(&arc), ArcSizes { t1: 0, t2: 1, b1: 1, b2: 0, p: 0.0 });
    assert_eq!(step(&mut c, 3, false), Err(vec![]), "a free slot: no eviction");
    assert_eq!(sizes(&arc), ArcSizes { t1: 0, t2: 2, b1: 0, b2: 0, p: 1.0 });
    assert_eq!(step(&mut c, 4, false), Err(vec![(2, false)]));
    assert_eq!(sizes(&arc), ArcSizes { t1: 1, t2: 1, b1: 0, b2: 1, p: 1.0 });
}

/// A literal transcription of the paper's Fig. 4 over `VecDeque`s (front = MRU), for reads and
/// no invalidations. Returns whether `x` hit and the block evicted, if any.
struct ArcModel {
    c: usize,
    p: f64,
    t1: VecDeque<BlockNo>,
    t2: VecDeque<BlockNo>,
    b1: VecDeque<BlockNo>,
    b2: VecDeque<BlockNo>,
}

fn take(q: &mut VecDeque<BlockNo>, x: BlockNo) -> bool {
    match q.iter().position(|&y| y == x) {
        Some(i) => {
            q.remove(i);
            true
        }
        None => false,
    }
}

impl ArcModel {
    fn new(c: usize) -> Self {
        ArcModel {
            c,
            p: 0.0,
            t1: VecDeque::new(),
            t2: VecDeque::new(),
            b1: VecDeque::new(),
            b2: VecDeque::new(),
        }
    }

    fn replace(&mut self, x_in_b2: bool) -> BlockNo {
        let t1 = self.t1.len() as f64;
        if !self.t1.is_empty() && (t1 > self.p || (x_in_b2 && t1 == self.p)) {
            let v = self.t1.pop_back().unwrap();
            self.b1.push_front(v);
            v
        } else {
            let v = self.t2.pop_back().unwrap();
            self.b2.push_front(v);
            v
        }
    }

    fn access(&mut self, x: BlockNo) -> (bool, Option<BlockNo>) {
        let c = self.c as f64;
        if take(&mut self.t1, x) || take(&mut self.t2, x) {
            self.t2.push_front(x);
            return (true, None);
        }
        if self.b1.contains(&x) {
            let (b1, b2) = (self.b1.len() as f64, self.b2.len() as f64);
            self.p = (self.p + if b1 >= b2 { 1.0 } else { b2 / b1 }).min(c);
            let v = self.replace(false);
            take(&mut self.b1, x);
            self.t2.push_front(x);
            return (false, Some(v));
        }
        if self.b2.contains(&x) {
            let (b1, b2) = (self.b1.len() as f64, self.b2.len() as f64);
            self.p = (self.p - if b2 >= b1 { 1.0 } else { b1 / b2 }).max(0.0);
            let v = self.replace(true);
            take(&mut self.b2, x);
            self.t2.push_front(x);
            return (false, Some(v));
        }
        let mut v = None;
        if self.t1.len() + self.b1.len() == self.c {
            if self.t1.len() < self.c {
                self.b1.pop_back();
                v = Some(self.replace(false));
            } else {
                v = self.t1.pop_back();
            }
        } else {
            let total = self.t1.len() + self.t2.len() + self.b1.len() + self.b2.len();
            if total >= self.c {
                if total == 2 * self.c {
                    self.b2.pop_back();
                }
                v = Some(self.replace(false));
            }
        }
        self.t1.push_front(x);
        (false, v)
    }
}

/// A literal S3-FIFO over `VecDeque`s (front = head), for reads and no invalidations.
struct S3Model {
    c: usize,
    small_target: usize,
    ghost_cap: usize,
    threshold: u8,
    s: VecDeque<(BlockNo, u8)>,
    m: VecDeque<(BlockNo, u8)>,
    g: VecDeque<BlockNo>,
}

impl S3Model {
    fn access(&mut self, x: BlockNo) -> (bool, Option<BlockNo>) {
        for q in [&mut self.s, &mut self.m] {
            if let Some(e) = q.iter_mut().find(|e| e.0 == x) {
                e.1 = (e.1 + 1).min(3);
                return (true, None);
            }
        }
        let mut victim = None;
        if self.s.len() + self.m.len() == self.c {
            while victim.is_none() {
                if !self.s.is_empty() && (self.s.len() >= self.small_target || self.m.is_empty()) {
                    let (b, f) = self.s.pop_back().unwrap();
                    if f >= self.threshold {
                        self.m.push_front((b, 0));
                    } else {
                        if self.ghost_cap > 0 {
                            if self.g.len() == self.ghost_cap {
                                self.g.pop_back();
                            }
                            self.g.push_front(b);
                        }
                        victim = Some(b);
                    }
                } else {
                    let (b, f) = self.m.pop_back().unwrap();
                    if f > 0 {
                        self.m.push_front((b, f - 1));
                    } else {
                        victim = Some(b);
                    }
                }
            }
        }
        if take(&mut self.g, x) {
            self.m.push_front((x, 0));
        } else {
            self.s.push_front((x, 0));
        }
        (false, victim)
    }
}

/// Access (`Some(write)`) or invalidation (`None`) of a block.
fn arb_ops(blocks: u64) -> impl Strategy<Value = Vec<(BlockNo, Option<bool>)>> {
    let op = prop_oneof![8 => any::<bool>().prop_map(Some), 1 => Just(None)];
    proptest::collection::vec((0..blocks, op), 1..500)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 128, ..ProptestConfig::default() })]

    /// ARC's bounds hold after every access and invalidation: |T1|+|T2| is the cache's
    /// occupancy (≤ c), |T1|+|B1| ≤ c, |T1|+|T2|+|B1|+|B2| ≤ 2c, at most c ghosts, 0 ≤ p ≤ c.
    #[test]
    fn arc_bounds(c in 1u32..24, ops in arb_ops(64)) {
        let (mut cache, arc) = inspectable(ArcPolicy::new(c), c);
        let mut ev = Vec::new();
        // What is cached, from the outcomes alone: a remembered (ghost) block never answers a
        // lookup as cached, and an eviction or invalidation names a cached block.
        let mut cached = std::collections::HashSet::new();
        for (b, op) in ops {
            match op {
                Some(w) => {
                    let hit = cache.access(b, w).is_some();
                    prop_assert_eq!(hit, cached.contains(&b), "block {}", b);
                    if !hit {
                        ev.clear();
                        cache.insert(b, w, &mut ev);
                        prop_assert!(ev.len() <= 1);
                        for e in &ev {
                            prop_assert!(cached.remove(&e.block), "evicted {} was not cached", e.block);
                        }
                        cached.insert(b);
                    }
                }
                None => {
                    let was = cache.invalidate(b).is_some();
                    prop_assert_eq!(was, cached.remove(&b), "invalidated block {}", b);
                }
            }
            for x in 0..64 {
                prop_assert_eq!(cache.peek(x).is_some(), cached.contains(&x), "block {}", x);
            }
            let s = arc.lock().unwrap().debug_sizes();
            prop_assert_eq!(s.t1 + s.t2, cache.table().len());
            prop_assert!(s.t1 + s.b1 <= c, "{:?}", s);
            prop_assert!(s.t1 + s.t2 + s.b1 + s.b2 <= 2 * c, "{:?}", s);
            prop_assert!(s.b1 + s.b2 <= c, "{:?}", s);
            prop_assert!(0.0 <= s.p && s.p <= c as f64, "{:?}", s);
        }
    }

    /// Without invalidations ARC makes exactly the paper's decisions: same hits, same victims,
    /// same p, same list sizes as the literal model.
    #[test]
    fn arc_matches_paper_model(c in 1u32..16, blocks in proptest::collection::vec(0u64..40, 1..400)) {
        let (mut cache, arc) = inspectable(ArcPolicy::new(c), c);
        let mut model = ArcModel::new(c as usize);
        for (i, &b) in blocks.iter().enumerate() {
            let got = match step(&mut cache, b, false) {
                Ok(()) => (true, None),
                Err(ev) => (false, ev.first().map(|e| e.0)),
            };
            prop_assert_eq!(got, model.access(b), "access {} of block {}", i, b);
            let s = arc.lock().unwrap().debug_sizes();
            let m = ArcSizes {
                t1: model.t1.len() as u32,
                t2: model.t2.len() as u32,
                b1: model.b1.len() as u32,
                b2: model.b2.len() as u32,
                p: model.p,
            };
            prop_assert_eq!(s, m);
        }
    }

    /// S3-FIFO's ghost never exceeds M's share of the capacity, S and M together hold exactly
    /// the cached blocks, and S3-FIFO evicts one block per miss, under accesses and invalidations.
    #[test]
    fn s3fifo_bounds(c in 1u32..40, ratio in 0.01f64..0.99, ops in arb_ops(100)) {
        let cfg = S3FifoConfig { small_ratio: ratio, ..Default::default() };
        let (mut cache, s3) = inspectable(S3Fifo::new(c, &cfg).unwrap(), c);
        let mut ev = Vec::new();
        for (b, op) in ops {
            match op {
                Some(w) => {
                    if cache.access(b, w).is_none() {
                        ev.clear();
                        cache.insert(b, w, &mut ev);
                        prop_assert!(ev.len() <= 1);
                    }
                }
                None => { cache.invalidate(b); }
            }
            let s = s3.lock().unwrap().debug_sizes();
            prop_assert_eq!(s.small + s.main, cache.table().len());
            prop_assert!(s.ghost <= s.ghost_capacity, "{:?}", s);
            prop_assert_eq!(s.ghost_capacity, c - s.small_target);
            prop_assert!(s.small_target >= 1 && s.small_target <= c);
        }
    }

    /// Without invalidations S3-FIFO makes the same decisions as a literal queue model.
    #[test]
    fn s3fifo_matches_model(
        c in 1u32..24,
        ratio in 0.01f64..0.99,
        threshold in 1u8..=3,
        blocks in proptest::collection::vec(0u64..48, 1..400),
    ) {
        let cfg = S3FifoConfig { small_ratio: ratio, move_threshold: threshold };
        let (mut cache, s3) = inspectable(S3Fifo::new(c, &cfg).unwrap(), c);
        let sizes = s3.lock().unwrap().debug_sizes();
        let mut model = S3Model {
            c: c as usize,
            small_target: sizes.small_target as usize,
            ghost_cap: sizes.ghost_capacity as usize,
            threshold,
            s: VecDeque::new(),
            m: VecDeque::new(),
            g: VecDeque::new(),
        };
        for (i, &b) in blocks.iter().enumerate() {
            let got = match step(&mut cache, b, false) {
                Ok(()) => (true, None),
                Err(ev) => (false, ev.first().map(|e| e.0)),
            };
            prop_assert_eq!(got, model.access(b), "access {} of block {}", i, b);
            let s = s3.lock().unwrap().debug_sizes();
            prop_assert_eq!(
                (s.small, s.main, s.ghost),
                (model.s.len() as u32, model.m.len() as u32, model.g.len() as u32)
            );
        }
    }
}

// ---------------------------------------------------------------------------------------------
// S3-FIFO

/// S3-FIFO by hand, c = 4 with the defaults: S's target max(1, ⌊0.1·4⌋) = 1, G holds 4 − 1 = 3
/// block numbers, a block moves S→M when hit at least once in S. Queues written head first,
/// `b:f` = block b with frequency f.
///
/// ```text
///  # op   what happens                                             victim  S        M                  G
///  1 w1   insert into S                                            -       [1:0]
///  2 w2                                                            -       [2 1]
///  3 r3                                                            -       [3 2 1]
///  4 r1   hit                                                      -       [3 2 1:1]
///  5 r4   free slot                                                -       [4 3 2 1:1]                 (full)
///  6 r5   |S|=4≥1: tail 1:1 → M (freq 0) [promotion]; tail 2:0 → victim, 2 → G
///                                                                  2d      [5 4 3]  [1:0]              [2]
///  7 r2   tail 3:0 victim → G; then 2 ∈ G → M [ghost re-insertion] 3c      [5 4]    [2:0 1:0]          [3]
///  8 r1   hit                                                      -                [2:0 1:1]
///  9 w2   hit, 2 dirty                                             -                [2:1 1:1]
/// 10 r1   hit                                                      -                [2:1 1:2]
/// 11 r6   tail 4:0 victim → G                                      4c      [6 5]    [2:1 1:2]          [4 3]
/// 12 r5   hit                                                      -       [6 5:1]
/// 13 r7   tail 5:1 → M; |S|=1≥1: tail 6:0 victim → G               6c      [7]      [5:0 2:1 1:2]      [6 4 3]
/// 14 r7   hit                                                      -       [7:1]
/// 15 r8   tail 7:1 → M; S empty → M: tail 1:2 → head as 1:1, tail 2:1 → head as 2:0
///         [second chance]; tail 5:0 victim (from M: no ghost)      5c      [8]      [2:0 1:1 7:0]      [6 4 3]
/// 16 r4   tail 8:0 victim → G (full: forget 3); 4 ∈ G → M         8c      []       [4:0 2:0 1:1 7:0]  [8 6]
/// 17 w9   S empty → M: tail 7:0 victim                             7c      [9:0]    [4:0 2:0 1:1]      [8 6]
/// 18 r3   tail 9:0 victim → G [quick demotion]; 3 was forgotten → S
///                                                                  9d      [3]      [4 2 1]            [9 8 6]
/// 19 r6   tail 3:0 victim → G, full: forgets 6 *before* the lookup (Algorithm 1 evicts, then
///         checks G), so 6 enters S                                 3c      [6]      [4 2 1]            [3 9 8]
/// 20 r2   hit                                                      -                [4:0 2:1 1:1]
/// ```
/// Final: cached {1,2,4,6}, dirty {1,2}; |S|=1 |M|=3 |G|=3.
#[test]
fn s3fifo_by_hand() {
    type Row = (BlockNo, bool, Option<(BlockNo, bool)>, (u32, u32, u32));
    let rows: [Row; 20] = [
        (1, true, None, (1, 0, 0)),
        (2, true, None, (2, 0, 0)),
        (3, false, None, (3, 0, 0)),
        (1, false, None, (3, 0, 0)),
        (4, false, None, (4, 0, 0)),
        (5, false, Some((2, true)), (3, 1, 1)),
        (2, false, Some((3, false)), (2, 2, 1)),
        (1, false, None, (2, 2, 1)),
        (2, true, None, (2, 2, 1)),
        (1, false, None, (2, 2, 1)),
        (6, false, Some((4, false)), (2, 2, 2)),
        (5, false, None, (2, 2, 2)),
        (7, false, Some((6, false)), (1, 3, 3)),
        (7, false, None, (1, 3, 3)),
        (8, false, Some((5, false)), (1, 3, 3)),
        (4, false, Some((8, false)), (0, 4, 2)),
        (9, true, Some((7, false)), (1, 3, 2)),
        (3, false, Some((9, true)), (1, 3, 3)),
        (6, false, Some((3, false)), (1, 3, 3)),
        (2, false, None, (1, 3, 3)),
    ];
    let mut built = cache_from(&S3FifoConfig::default(), 4);
    assert_eq!(built.policy_name(), "s3-fifo");
    let (mut c, s3) = inspectable(S3Fifo::new(4, &S3FifoConfig::default()).unwrap(), 4);
    let s = s3.lock().unwrap().debug_sizes();
    assert_eq!((s.small_target, s.ghost_capacity), (1, 3));
    for (i, &(b, w, victim, (small, main, ghost))) in rows.iter().enumerate() {
        let n = i + 1;
        let got = step(&mut c, b, w);
        assert_eq!(step(&mut built, b, w), got, "step {n}: built and inspectable S3-FIFO differ");
        let got_victim = got.err().and_then(|ev| {
            assert!(ev.len() <= 1, "step {n}: S3-FIFO evicts one block at a time");
            ev.first().copied()
        });
        assert_eq!(got_victim, victim, "step {n} ({b}): victim");
        let s = s3.lock().unwrap().debug_sizes();
        assert_eq!((s.small, s.main, s.ghost), (small, main, ghost), "step {n} ({b}): |S| |M| |G|");
    }
    assert_eq!(contents(&c), BTreeSet::from([1, 2, 4, 6]));
    assert_eq!(dirty(&c), BTreeSet::from([1, 2]));
    let s = s3.lock().unwrap().debug_sizes();
    assert_eq!(s, S3FifoSizes { small: 1, main: 3, ghost: 3, small_target: 1, ghost_capacity: 3 });
    assert_eq!(contents(&built), contents(&c));
}

/// With `move_threshold = 2` (Algorithm 1's `freq > 1`), one hit in S is not enough. c = 4:
/// w1 w2 w3 w4, r1 (1:1), r5 → S's tail 1:1 < 2 is evicted (as in step 6 of the default case it
/// would have moved to M).
#[test]
fn s3fifo_move_threshold_two() {
    let cfg = S3FifoConfig { move_threshold: 2, ..Default::default() };
    let mut c = cache_from(&cfg, 4);
    let (hits, ev) = replay(&mut c, &[(1, true), (2, true), (3, true), (4, true), (1, false), (5, false)]);
    assert_eq!((hits, ev), (1, vec![(1, true)]));
    let mut d = cache_from(&S3FifoConfig::default(), 4);
    let (_, ev) = replay(&mut d, &[(1, true), (2, true), (3, true), (4, true), (1, false), (5, false)]);
    assert_eq!(ev, vec![(2, true)]);
}

#[test]
fn s3fifo_rejects_bad_fields() {
    for (cfg, field) in [
        (S3FifoConfig { small_ratio: 0.0, ..Default::default() }, "small_ratio"),
        (S3FifoConfig { small_ratio: 1.0, ..Default::default() }, "small_ratio"),
        (S3FifoConfig { small_ratio: f64::NAN, ..Default::default() }, "small_ratio"),
        (S3FifoConfig { move_threshold: 0, ..Default::default() }, "move_threshold"),
        (S3FifoConfig { move_threshold: 4, ..Default::default() }, "move_threshold"),
    ] {
        match cfg.build(&ctx(8)) {
            Err(PolicyError::Field { policy, field: f, .. }) => assert_eq!((policy, f), ("s3-fifo", field)),
            other => panic!("{cfg:?}: expected a field error, got {:?}", other.map(|p| p.name())),
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Registry and configuration

#[test]
fn registered_with_names_and_parameters() {
    for name in ["fifo", "arc", "s3-fifo"] {
        assert!(PolicyConfig::NAMES.contains(&name), "{name} not registered");
        let p = name.parse::<PolicyConfig>().unwrap().build(&ctx(4)).unwrap();
        assert_eq!(p.name(), name);
        assert!(p.heap_bytes() > 0, "{name}: heap bytes");
    }
    let p: PolicyConfig = "s3-fifo:small_ratio=0.25,move_threshold=2".parse().unwrap();
    assert_eq!(p.name(), "s3-fifo");
    let json = serde_json::to_string(&p).unwrap();
    assert!(json.contains("\"small_ratio\":0.25") && json.contains("\"move_threshold\":2"), "{json}");
    for bad in ["fifo:batch=2", "arc:p=1", "s3-fifo:bogus=1"] {
        let e = bad.parse::<PolicyConfig>().unwrap_err().to_string();
        assert!(e.contains("unknown field"), "{bad}: {e}");
    }
    let e = "s3-fifo:small_ratio=1.5".parse::<PolicyConfig>().unwrap().build(&ctx(4)).err().unwrap();
    assert!(e.to_string().contains("small_ratio") && e.to_string().contains("1.5"), "{e}");
}

/// Ghost memory is bounded: after a long scan ARC's and S3-FIFO's heap stays what `c` ghosts need.
#[test]
fn heap_bytes_stay_bounded() {
    let c = 64;
    for cfg in [&ArcConfig::default() as &dyn PolicyBuilder, &S3FifoConfig::default()] {
        let mut cache = cache_from(cfg, c);
        replay(&mut cache, &(0..1000).map(|b| (b, false)).collect::<Vec<_>>());
        let after_first = cache.heap_bytes();
        replay(&mut cache, &(1000..100_000).map(|b| (b, false)).collect::<Vec<_>>());
        assert_eq!(cache.heap_bytes(), after_first, "{}", cache.policy_name());
    }
}

// ---------------------------------------------------------------------------------------------
// Scans

fn hits_of(cfg: &dyn PolicyBuilder, capacity: u32, ops: &[(BlockNo, bool)]) -> u64 {
    replay(&mut cache_from(cfg, capacity), ops).0
}

/// A loop over c + 1 blocks, as the papers predict:
/// - FIFO and LRU never hit (each block is evicted just before its reuse);
/// - ARC never hits either: nothing is reused while cached, so T1 holds all c blocks, B1 stays
///   empty (|T1| + |B1| ≤ c) and case IV-A drops T1's LRU block without a ghost. No ghost hit
///   ever happens and ARC degenerates to LRU: the recency side has no memory beyond c;
/// - S3-FIFO remembers S's victims in G (up to c − 1 of them), so looping blocks come back
///   through G into M, where the second-chance FIFO keeps most of the loop resident.
#[test]
fn looping_scan_larger_than_the_cache() {
    let c = 8u32;
    let ops: Vec<(BlockNo, bool)> = (0..50).flat_map(|_| 0..=c as BlockNo).map(|b| (b, false)).collect();
    assert_eq!(hits_of(&FifoConfig::default(), c, &ops), 0);
    assert_eq!(hits_of(&LruConfig::default(), c, &ops), 0);
    assert_eq!(hits_of(&ArcConfig::default(), c, &ops), 0);
    let s3 = hits_of(&S3FifoConfig::default(), c, &ops);
    let n = ops.len() as u64;
    assert!(s3 > n / 2, "S3-FIFO hits {s3} of {n}");
}

/// A hot set of 4 blocks, each read twice in a row, polluted every round by 6 blocks read once
/// and never again; c = 8. Per round 10 distinct blocks > c, so LRU and FIFO lose every hot
/// block before its next round and hit only on the immediate repeats: 4 per round. ARC keeps the
/// hot set in T2 (scan blocks churn T1 only, p stays 0); S3-FIFO promotes it to M (hit in S)
/// while scan blocks leave through S. Both hit 4 times in round 1, 8 times in every later round.
#[test]
fn arc_and_s3fifo_resist_scan_pollution() {
    let (c, rounds) = (8u32, 20u64);
    let mut ops = Vec::new();
    for r in 0..rounds {
        for h in 0..4 {
            ops.extend([(h, false), (h, false)]);
        }
        ops.extend((0..6).map(|i| (1000 + r * 6 + i, false)));
    }
    assert_eq!(hits_of(&LruConfig::default(), c, &ops), 4 * rounds);
    assert_eq!(hits_of(&FifoConfig::default(), c, &ops), 4 * rounds);
    assert_eq!(hits_of(&ArcConfig::default(), c, &ops), 4 + 8 * (rounds - 1));
    assert_eq!(hits_of(&S3FifoConfig::default(), c, &ops), 4 + 8 * (rounds - 1));
}

/// A cache of `LOOK_AHEAD_MIN_SLOTS` slots or more looks ahead at its next victims (`Policy::peek_victims`,
/// prefetches only): its LRU must still evict exactly as a literal LRU does.
#[test]
fn lru_with_look_ahead_evicts_like_a_literal_lru() {
    let capacity = shingled_cache::LOOK_AHEAD_MIN_SLOTS;
    let mut cache = cache_from(&LruConfig::default(), capacity);
    // A literal LRU: block → last use, and use → block, oldest first.
    let mut last: std::collections::HashMap<BlockNo, u64> = Default::default();
    let mut order: std::collections::BTreeMap<u64, BlockNo> = Default::default();
    let mut rng = rand_pcg::Pcg64Mcg::seed_from_u64(0x5eed);
    let mut evicted = Vec::new();
    for t in 0..(3 * capacity as u64) {
        let b = rng.next_u64() % (capacity as u64 * 3 / 2);
        evicted.clear();
        let hit = cache.access(b, false).is_some();
        assert_eq!(hit, last.contains_key(&b), "hit of block {b} at access {t}");
        if !hit {
            cache.insert(b, false, &mut evicted);
        }
        if let Some(old) = last.insert(b, t) {
            order.remove(&old);
        }
        order.insert(t, b);
        if last.len() > capacity as usize {
            let (_, victim) = order.pop_first().unwrap();
            last.remove(&victim);
            assert_eq!(evicted.iter().map(|m| m.block).collect::<Vec<_>>(), vec![victim], "at access {t}");
        } else {
            assert!(evicted.is_empty());
        }
    }
}

/// A batch of victims in a cache of `LOOK_AHEAD_MIN_SLOTS` slots or more has its metas and index
/// lines prefetched a few removals ahead (prefetches only): LRU evicting 64 at a time must still
/// evict exactly the 64 least recently used blocks, oldest first, and keep every other block.
#[test]
fn batched_lru_with_look_ahead_evicts_like_a_literal_batched_lru() {
    let capacity = shingled_cache::LOOK_AHEAD_MIN_SLOTS;
    let mut cache = cache_from(&LruConfig { batch: 64 }, capacity);
    let mut last: std::collections::HashMap<BlockNo, u64> = Default::default();
    let mut order: std::collections::BTreeMap<u64, BlockNo> = Default::default();
    let mut rng = rand_pcg::Pcg64Mcg::seed_from_u64(0xba7c);
    let mut evicted = Vec::new();
    let mut batches = 0;
    for t in 0..(3 * capacity as u64) {
        let b = rng.next_u64() % (capacity as u64 * 3 / 2);
        evicted.clear();
        let hit = cache.access(b, t % 3 == 0).is_some();
        assert_eq!(hit, last.contains_key(&b), "hit of block {b} at access {t}");
        let mut expected = Vec::new();
        if !hit {
            if last.len() == capacity as usize {
                for _ in 0..64 {
                    let (_, victim) = order.pop_first().unwrap();
                    last.remove(&victim);
                    expected.push(victim);
                }
                batches += 1;
            }
            cache.insert(b, t % 3 == 0, &mut evicted);
        }
        if let Some(old) = last.insert(b, t) {
            order.remove(&old);
        }
        order.insert(t, b);
        assert_eq!(evicted.iter().map(|m| m.block).collect::<Vec<_>>(), expected, "at access {t}");
    }
    assert!(batches > 100, "only {batches} batches evicted");
}
