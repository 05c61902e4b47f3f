//! SAC, the SMR-Aware Co-design cache algorithm (Sun & Chai, ASPLOS '20), and the machinery
//! MOST+CDC ([`super::most_cdc`]) is built on.
//!
//! # What is implemented (paper sections)
//!
//! - **Clean and dirty apart** (§4.1, Fig. 7): clean blocks in one LRU queue, dirty blocks in one
//!   LRU list per band. SAC assumes fixed-size bands ([`SacConfig::band_size`], §5.2
//!   "Alternative Bands Division", 20 MB in the authors' implementation) and never looks at the
//!   drive's true band map.
//! - **CDW, Cycle-Driven Writeback** (§4.2). Write-backs happen in cycles. At a cycle's start TBS
//!   picks its *target bands*; only dirty blocks of target bands are written back during the
//!   cycle.
//!   - Rule 1: at most `max(1, cycle_length / band_blocks)` targets, so their total size does not
//!     exceed the cycle length and hence the PB capacity (the artifact's `max_n_zones`).
//!   - Rule 2: the cycle length defaults to the PB capacity ([`CycleLength::OfPb`] `1pb`). Other
//!     multiples (Fig. 16 sweeps 0.5×–10×) are allowed; above 1× Rules 1 and 2 are deliberately
//!     violated, which is the point of that experiment.
//!   - Rule 3: a cycle ends when no dirty block of its target bands is left in the cache. That
//!     includes blocks dirtied during the cycle (the artifact drains them too). The alternative
//!     reading of §4.2's definition of cycle length ("the total size of cache blocks that the
//!     cycle is allowed to evict") also ends it after `cycle_length` write-backs:
//!     [`SacConfig::end_cycle_at_length`], off by default because Rule 3 names only the first
//!     condition and the artifact has the length test commented out.
//!   - Rule 4: active cycles must not share target bands. A band that was a target is not
//!     eligible for the next [`SacConfig::cooldown_cycles`] cycles (default 1, as the artifact:
//!     with cycle length = PB at most the current and the previous cycle can have blocks in the
//!     PB, Fig. 8). If every band holding dirty blocks is cooling down, the new cycle selects
//!     nothing and ends at once (Rule 3 holds trivially); the next one may pick the cooled bands.
//!     So Rule 4 is never broken, at the price of empty cycles in [`Sac::cycles`].
//!   - Victims within a cycle: among the target bands that still hold dirty blocks, the one whose
//!     LRU tail is oldest, up to `batch` blocks from that tail (the artifact's "frozen zone",
//!     64 at a time).
//! - **TBS, Target Bands Selection** (§4.3, Eq. 1). Candidates are the bands holding dirty
//!   blocks that are not cooling down, ranked by [`Tbs`]:
//!   `ARS(B) = |S_B| − Σ_{x∈S_B} P(x)` where `S_B` are B's cached dirty blocks and `P(x) = 1` when
//!   `x` was accessed within the last `hot_window` accesses (`clock − last_access < hot_window`,
//!   the artifact's "out-of-date" test with its 0.8 × cache-capacity threshold), else 0. So ARS is
//!   the number of the band's *cold* dirty blocks. Ties go to the lower band number.
//! - **CDC, Clean/Dirty Comparator** (§4.4, Eq. 2–5). When both clean and dirty blocks are cached
//!   and no decision is in force, compare `Cost(S) = Time(S) / ARS(S)`:
//!   - `S_clean` = the `clean_scan` blocks at the clean LRU tail; `ARS` = its cold blocks;
//!     `Time = read_ms × (|S_clean| − ARS)` (Eq. 3).
//!   - `S_dirty` = the dirty blocks of the current cycle's target bands (the next cycle is
//!     started first if none is running); `ARS = Σ ARS(B)`, `Time = Σ_B R(|S_B|)` with
//!     `R = SmrCosts::rmw_ms` (Eq. 4–5).
//!   - Eq. 2 divides by zero when nothing is cold; the default guard is `max(ARS, 1)` (exactly
//!     Eq. 2 whenever it is defined); [`CostGuard::PlusOne`] is the artifact's `ARS + 1`.
//!   - The cheaper side is evicted; a tie evicts dirty (the artifact's `<`). A clean decision
//!     lasts `clean_phase` clean evictions (the artifact's 100,000) but never more than the clean
//!     blocks cached when it is taken, then CDC decides again; a dirty decision lasts until the
//!     current cycle ends. With no clean block cached SAC is pure CDW (the write-only mode), with
//!     no dirty block a clean LRU.
//!   - The cycle CDC started to price the dirty side runs even when CDC chooses clean: its
//!     targets stay selected (and count for Rule 4) until they have been drained, as in the
//!     artifact, which marks them when it evaluates the cost.
//!   - `cdc = false` ([`Comparator::Recency`]) replaces the cost model by a popularity-only
//!     balance: each batch comes from whichever is older, the clean LRU tail or the tail of the
//!     dirty band CDW would write next.
//!
//! A block the caller marks clean behind the policy's back ([`crate::Cache::mark_clean`]) stays
//! in its band's list and leaves with that band's write-back (as a clean victim).
//!
//! # Cost
//!
//! Per request O(1): a block's coldness is tracked incrementally (blocks only become cold when
//! the clock passes them, and a hit makes them hot), so every band's ARS and the clean side's
//! cold count are counters, never walks. The clock's passing is followed on a ring of the slots
//! accessed at each of the last `hot_window` ticks: the slot accessed at tick `u` turns cold when
//! the clock reaches `u + hot_window` if `u` is still its latest access. That is a sequential
//! walk whose per-slot lookups are independent, so they overlap (a global recency list walked
//! from a cold boundary gives the same set, but as a chain of dependent cache misses, the
//! bottleneck of large caches). A cycle start ranks the candidate bands (O(n log k) for n bands
//! holding dirty blocks, plus one walk over the candidates' dirty blocks for [`Tbs::Pd`]); the
//! oldest target tail comes from a lazily updated heap. Memory: 12 bytes per cache slot, plus 4
//! bytes per tick of the window (3.2 per slot at the default 0.8), plus one entry per band
//! holding dirty blocks.

use crate::{
    BlockTable, Links, List, Policy, PolicyBuilder, PolicyContext, PolicyError, Slot, SmrCosts, NIL,
};
use rustc_hash::FxHashMap;
use serde::{Deserialize, Serialize};
use shingled_core::{BlockNo, ByteSize, BLOCK_SIZE};
use std::cmp::{Ordering, Reverse};
use std::collections::BinaryHeap;
use std::fmt;

/// The artifact's zone: 5000 blocks = 20,480,000 bytes ("20 MB", §5.2).
pub const DEFAULT_BAND_SIZE: ByteSize = ByteSize(5000 * BLOCK_SIZE);

/// SAC's cycle length: blocks or a multiple of the PB ([`crate::PbLength`]).
pub type CycleLength = crate::PbLength;

/// How TBS ranks candidate bands (§4.3; the three strategies of §6.4, Fig. 15).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Tbs {
    /// Actually Released Space (Eq. 1): most cold dirty blocks first. SAC's default.
    #[default]
    Ars,
    /// P-Decided: lowest popularity first, popularity being the mean access count
    /// ([`crate::BlockMeta::hits`]) of the band's cached dirty blocks.
    Pd,
    /// A-Decided: most cached dirty blocks first, like MOST.
    Ad,
}

/// How the clean-or-dirty choice is made when both kinds are cached.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Comparator {
    /// CDC's cost model (§4.4, Eq. 2–5), decided per phase.
    #[default]
    Cost,
    /// Per batch, the older of the clean LRU tail and the tail of the dirty band CDW would write
    /// next (the SAC artifact's `MOST_CDC`, `most_cdc.c`).
    Recency,
}

/// The guard against Eq. 2's division by zero when no block of a group is cold.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum CostGuard {
    /// `Time / max(ARS, 1)`: Eq. 2 exactly whenever it is defined.
    #[default]
    #[serde(rename = "max1")]
    Max1,
    /// `Time / (ARS + 1)`: the artifact's smoothing (`sac.c`).
    #[serde(rename = "plus1")]
    PlusOne,
}

impl CostGuard {
    #[inline]
    fn denominator(self, ars: u64) -> f64 {
        match self {
            CostGuard::Max1 => ars.max(1) as f64,
            CostGuard::PlusOne => ars as f64 + 1.0,
        }
    }
}

/// Which kind of block a batch of victims was.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Side {
    /// Clean blocks, dropped.
    Clean,
    /// Dirty blocks, written back.
    Dirty,
}

/// One evaluation of CDC's cost model (§4.4), for inspection.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CdcEvaluation {
    /// `|S_clean|`: clean blocks considered from the clean LRU tail.
    pub clean_scanned: u64,
    /// `ARS(S_clean)`: the cold ones among them.
    pub clean_cold: u64,
    /// `Time(S_clean)`, ms (Eq. 3).
    pub clean_time_ms: f64,
    /// `Cost(S_clean)`, ms per released block.
    pub clean_cost: f64,
    /// Target bands of the cycle holding dirty blocks.
    pub dirty_bands: u64,
    /// `|S_dirty|`: dirty blocks of the target bands.
    pub dirty_blocks: u64,
    /// `ARS(S_dirty)`: the cold ones among them.
    pub dirty_cold: u64,
    /// `Time(S_dirty) = Σ R(|S_B|)`, ms (Eq. 4–5); infinite when the cycle has no target.
    pub dirty_time_ms: f64,
    /// `Cost(S_dirty)`; infinite when the cycle has no target.
    pub dirty_cost: f64,
    /// The side chosen.
    pub side: Side,
}

/// One cycle's record, kept when [`Sac::record_cycles`] is on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CycleRecord {
    /// The cycle's number (1 for the first).
    pub number: u64,
    /// Its target bands, in TBS rank order.
    pub targets: Vec<u64>,
    /// Dirty blocks chosen as victims during the cycle (final once the cycle has ended).
    pub writebacks: u64,
}

/// SAC's configuration (policy `sac`). Defaults follow the paper and, where it is silent, the
/// authors' artifact (`dcstrange/sac`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct SacConfig {
    /// Assumed band size; every band is this big (§5.2). Default 20.48 MB = 5000 blocks (the
    /// artifact's "20 MB" zone). At least 4 KiB; rounded down to whole 4 KiB blocks.
    pub band_size: ByteSize,
    /// Cycle length (§4.2 Rule 2, §6.5): `1pb` (default) = the PB capacity; a PB multiple such as
    /// `0.5pb`…`10pb` (Fig. 16), or absolute blocks / a size. PB multiples in (0, 1000], or at
    /// least 1 block. Also sets Rule 1's target count `max(1, cycle_length / band_blocks)`.
    pub cycle_length: CycleLength,
    /// Also end a cycle after `cycle_length` write-backs, not only when its target bands are
    /// drained (Rule 3). Default `false` (the paper's Rule 3 and the artifact).
    pub end_cycle_at_length: bool,
    /// Cycles after its own during which a former target band cannot be a target (Rule 4).
    /// Default 1 (the artifact); 0..=1000.
    pub cooldown_cycles: u32,
    /// Victims per eviction, from one band's (or the clean list's) LRU tail. Default 64 (the
    /// artifact); 1..=4096.
    pub batch: u32,
    /// The popularity window of Eq. 1 as a fraction of the cache capacity: a block accessed
    /// within the last `hot_window × capacity` accesses is hot (P = 1). Default 0.8 (the
    /// artifact's out-of-date threshold); (0, 4] (the policy keeps 4 bytes per tick of the
    /// window).
    pub hot_window: f64,
    /// Target band selection strategy (§4.3, §6.4): `ars` (default), `pd` or `ad`.
    pub tbs: Tbs,
    /// Use CDC's cost model to balance clean and dirty blocks (default `true`); `false` takes
    /// each batch from the side with the older LRU tail instead.
    pub cdc: bool,
    /// Clean blocks CDC considers from the clean LRU tail. Default 100,000 (the artifact);
    /// at least 1.
    pub clean_scan: u64,
    /// Clean evictions a clean decision lasts (capped by the clean blocks cached when it is
    /// taken). Default 100,000 (the artifact); at least 1.
    pub clean_phase: u64,
    /// Eq. 2's guard against zero ARS: `max1` (default) or `plus1` (the artifact).
    pub cost_guard: CostGuard,
}

impl Default for SacConfig {
    fn default() -> Self {
        SacConfig {
            band_size: DEFAULT_BAND_SIZE,
            cycle_length: CycleLength::default(),
            end_cycle_at_length: false,
            cooldown_cycles: 1,
            batch: 64,
            hot_window: 0.8,
            tbs: Tbs::Ars,
            cdc: true,
            clean_scan: 100_000,
            clean_phase: 100_000,
            cost_guard: CostGuard::Max1,
        }
    }
}

pub(crate) fn field_error(
    policy: &'static str,
    field: &'static str,
    value: impl fmt::Display,
    reason: &str,
) -> PolicyError {
    PolicyError::Field { policy, field, value: value.to_string(), reason: reason.into() }
}

/// Validates the fields SAC and MOST+CDC share and returns (band blocks, hot window in accesses).
pub(crate) fn check_common(
    policy: &'static str,
    ctx: &PolicyContext,
    band_size: ByteSize,
    batch: u32,
    hot_window: f64,
    clean_scan: u64,
    clean_phase: u64,
) -> Result<(u64, u64), PolicyError> {
    if band_size.0 < BLOCK_SIZE {
        return Err(field_error(policy, "band_size", band_size, "must be at least 4KiB"));
    }
    if !(1..=4096).contains(&batch) {
        return Err(field_error(policy, "batch", batch, "must be between 1 and 4096"));
    }
    if !(hot_window.is_finite() && hot_window > 0.0 && hot_window <= 4.0) {
        return Err(field_error(
            policy,
            "hot_window",
            hot_window,
            "must be a fraction of the capacity in (0, 4]",
        ));
    }
    if clean_scan == 0 {
        return Err(field_error(policy, "clean_scan", clean_scan, "must be at least 1"));
    }
    if clean_phase == 0 {
        return Err(field_error(policy, "clean_phase", clean_phase, "must be at least 1"));
    }
    let c = ctx.costs;
    if ![c.read_ms, c.rmw_fixed_ms, c.rmw_per_block_ms].iter().all(|v| v.is_finite() && *v >= 0.0) {
        return Err(PolicyError::Unsupported {
            policy,
            reason: format!(
                "drive costs must be finite and non-negative, got read {} ms, RMW {} ms + {} ms per block",
                c.read_ms, c.rmw_fixed_ms, c.rmw_per_block_ms
            ),
        });
    }
    let window = ((hot_window * ctx.capacity_blocks as f64).round() as u64).max(1);
    Ok((band_size.blocks(), window))
}

impl SacConfig {
    /// Validates the configuration and builds the concrete policy (for inspection in tests and
    /// tools; [`PolicyBuilder::build`] boxes it).
    pub fn build_sac(&self, ctx: &PolicyContext) -> Result<Sac, PolicyError> {
        const P: &str = "sac";
        let (band_blocks, window) = check_common(
            P,
            ctx,
            self.band_size,
            self.batch,
            self.hot_window,
            self.clean_scan,
            self.clean_phase,
        )?;
        self.cycle_length.check(P, "cycle_length")?;
        if self.cooldown_cycles > 1000 {
            return Err(field_error(P, "cooldown_cycles", self.cooldown_cycles, "must be at most 1000"));
        }
        let cycle_length = self.cycle_length.resolve(ctx, P, "cycle_length")?;
        let params = Params {
            name: P,
            band_blocks,
            cycle_length,
            max_targets: (cycle_length / band_blocks).clamp(1, u32::MAX as u64) as usize,
            cycle_cap: self.end_cycle_at_length.then_some(cycle_length),
            cooldown: self.cooldown_cycles as u64,
            batch: self.batch,
            hot_window: window,
            tbs: self.tbs,
            comparator: if self.cdc { Comparator::Cost } else { Comparator::Recency },
            clean_scan: self.clean_scan,
            clean_phase: self.clean_phase,
            guard: self.cost_guard,
            costs: ctx.costs,
        };
        Ok(Sac::with_params(ctx.capacity_blocks, params))
    }
}

impl PolicyBuilder for SacConfig {
    fn build(&self, ctx: &PolicyContext) -> Result<Box<dyn Policy>, PolicyError> {
        Ok(Box::new(self.build_sac(ctx)?))
    }
    /// CDC's cost model weighs the drive's read and RMW costs.
    fn needs_costs(&self) -> bool {
        self.cdc
    }
}

/// Resolved parameters of the SAC machinery.
#[derive(Clone, Debug)]
pub(crate) struct Params {
    pub name: &'static str,
    pub band_blocks: u64,
    pub cycle_length: u64,
    pub max_targets: usize,
    pub cycle_cap: Option<u64>,
    pub cooldown: u64,
    pub batch: u32,
    pub hot_window: u64,
    pub tbs: Tbs,
    pub comparator: Comparator,
    pub clean_scan: u64,
    pub clean_phase: u64,
    pub guard: CostGuard,
    pub costs: SmrCosts,
}

/// Owner marker of a slot in the clean list.
const CLEAN: u32 = u32::MAX >> 1;
/// The bit of an `owner` entry that marks its slot cold (one array read tells both).
const COLD: u32 = 1 << 31;

/// One band holding dirty blocks, a target, or cooling down.
#[derive(Clone, Debug)]
struct Band {
    number: u64,
    dirty: List,
    /// Sum of the access counts of its dirty blocks (PD's popularity numerator), kept
    /// incrementally so a cycle start need not walk the lists.
    hits: u64,
    cold: u32,
    /// Position in `dirty_bands`, or NIL.
    pos: u32,
    is_target: bool,
    cooling: bool,
    /// Last cycle in which it may not be a target.
    cooling_until: u64,
}

impl Band {
    fn new(number: u64) -> Self {
        Band {
            number,
            dirty: List::default(),
            hits: 0,
            cold: 0,
            pos: NIL,
            is_target: false,
            cooling: false,
            cooling_until: 0,
        }
    }
}

/// The clean-or-dirty decision in force (cost comparator).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    Undecided,
    Clean { remaining: u64 },
    Dirty,
}

/// A ranked TBS candidate.
#[derive(Clone, Copy, Debug)]
struct Candidate {
    /// ARS, dirty count, or the hit sum (PD).
    score: u64,
    /// PD: dirty count (the mean's denominator).
    count: u64,
    number: u64,
    idx: u32,
}

/// SAC (Sun & Chai, "SAC: A Co-Design Cache Algorithm for Emerging SMR-based High-Density
/// Disks", ASPLOS '20, §4): clean blocks in an LRU queue; dirty blocks per assumed band, written
/// back in PB-sized cycles to a few target bands at a time (CDW, §4.2) chosen by how much space
/// they actually release (TBS, Eq. 1, §4.3); a cost model weighing a read miss against a band's
/// RMW decides whether clean or dirty blocks go (CDC, Eq. 2–5, §4.4). The readings taken where
/// the paper leaves a choice are listed in the [module documentation](self).
///
/// The same machinery runs MOST+CDC ([`super::most_cdc::MostCdc`]).
#[derive(Debug)]
pub struct Sac {
    p: Params,
    /// Clean LRU and per-band dirty lists (a slot is in exactly one).
    links: Links,
    clean: List,
    /// Band index of a dirty slot, or [`CLEAN`]; with [`COLD`] set when the slot is counted as
    /// cold (accessed before the popularity window).
    owner: Vec<u32>,
    /// The slot accessed at tick `u` of the table's clock is at `ticks[u % ticks.len()]`, for
    /// the last `hot_window + 1` ticks; NIL once the slot has left the cache unjudged.
    ticks: Vec<Slot>,
    /// Ticks up to this one have been judged: their slots are cold unless accessed since.
    cold_until: u64,
    /// `(cold_until + 1) % ticks.len()`.
    judge_pos: usize,
    /// The latest tick [`Sac::record_tick`] recorded and its place in `ticks`, so that the next
    /// tick's place is found without a division.
    rec_tick: u64,
    rec_pos: usize,
    /// Cached blocks (one per slot in use).
    cached: u64,
    cold_clean: u64,
    dirty_total: u64,
    bands: Vec<Band>,
    band_index: FxHashMap<u64, u32>,
    /// The band [`Sac::band_idx`] found last, as (number, index); number `u64::MAX` when none.
    /// Writes come in runs of blocks of one band, so most lookups are answered here.
    last_band: (u64, u32),
    free_bands: Vec<u32>,
    /// Bands holding dirty blocks (TBS's candidates before the cooldown filter).
    dirty_bands: Vec<u32>,
    /// Former targets still cooling down.
    cooling: Vec<u32>,
    cycles: u64,
    cycle_live: bool,
    targets: Vec<u32>,
    target_numbers: Vec<u64>,
    targets_dirty: u64,
    targets_nonempty: u64,
    targets_cold: u64,
    writebacks: u64,
    /// Min-heap of (tail stamp, band) over the targets; entries may be stale (tails only get
    /// younger) and are fixed when they surface.
    tails: BinaryHeap<Reverse<(u64, u32)>>,
    phase: Phase,
    last_side: Option<Side>,
    last_eval: Option<CdcEvaluation>,
    evaluations: u64,
    scratch: Vec<Candidate>,
    history: Option<Vec<CycleRecord>>,
    /// Look-ahead along the list the next batch will probably come from (the one the latest
    /// batch came from): the slot reached, and how many more to reach. Each insertion steps
    /// along it and prefetches the next slot's links, so that the next batch's walk (a chain of
    /// dependent loads, one per victim) finds them in the CPU's caches. A hint only: a list
    /// changed since (a hit, a removal) sends it astray, and nothing depends on where it goes.
    walk: Slot,
    walk_left: u32,
}

impl Sac {
    pub(crate) fn with_params(capacity: u32, p: Params) -> Self {
        let cap = capacity as usize;
        Sac {
            links: Links::with_capacity(cap),
            clean: List::default(),
            owner: vec![CLEAN; cap],
            ticks: vec![NIL; p.hot_window as usize + 1],
            cold_until: 0,
            judge_pos: 1 % (p.hot_window as usize + 1),
            rec_tick: 0,
            rec_pos: 0,
            cached: 0,
            cold_clean: 0,
            dirty_total: 0,
            bands: Vec::new(),
            band_index: FxHashMap::default(),
            last_band: (u64::MAX, 0),
            free_bands: Vec::new(),
            dirty_bands: Vec::new(),
            cooling: Vec::new(),
            cycles: 0,
            cycle_live: false,
            targets: Vec::new(),
            target_numbers: Vec::new(),
            targets_dirty: 0,
            targets_nonempty: 0,
            targets_cold: 0,
            writebacks: 0,
            tails: BinaryHeap::new(),
            phase: Phase::Undecided,
            last_side: None,
            last_eval: None,
            evaluations: 0,
            scratch: Vec::new(),
            history: None,
            walk: NIL,
            walk_left: 0,
            p,
        }
    }

    // ---- inspection -------------------------------------------------------------------------

    /// The assumed band of `block`: `block / band_blocks`.
    #[inline]
    pub fn band_of(&self, block: BlockNo) -> u64 {
        block / self.p.band_blocks
    }
    /// The assumed band size in blocks.
    pub fn band_blocks(&self) -> u64 {
        self.p.band_blocks
    }
    /// The cycle length in blocks.
    pub fn cycle_length(&self) -> u64 {
        self.p.cycle_length
    }
    /// Rule 1's maximum number of target bands per cycle.
    pub fn max_targets(&self) -> usize {
        self.p.max_targets
    }
    /// The popularity window in accesses (Eq. 1's P(x) = 1 within it).
    pub fn hot_window(&self) -> u64 {
        self.p.hot_window
    }
    /// Cycles started so far (including empty ones, see the module documentation).
    pub fn cycles(&self) -> u64 {
        self.cycles
    }
    /// `true` while the latest cycle still has dirty blocks of its targets to write back.
    pub fn cycle_live(&self) -> bool {
        self.cycle_live
    }
    /// Target bands of the latest cycle (live or ended), in TBS rank order.
    pub fn target_bands(&self) -> &[u64] {
        &self.target_numbers
    }
    /// Dirty victims chosen in the latest cycle.
    pub fn cycle_writebacks(&self) -> u64 {
        self.writebacks
    }
    /// The kind of the latest batch of victims.
    pub fn last_decision(&self) -> Option<Side> {
        self.last_side
    }
    /// The latest CDC cost evaluation.
    pub fn last_evaluation(&self) -> Option<&CdcEvaluation> {
        self.last_eval.as_ref()
    }
    /// CDC cost evaluations so far.
    pub fn evaluations(&self) -> u64 {
        self.evaluations
    }
    /// Cached dirty blocks of `band` that were cold at the latest victim selection (its ARS).
    pub fn ars_of(&self, band: u64) -> u32 {
        self.band_index.get(&band).map_or(0, |&i| self.bands[i as usize].cold)
    }
    /// Cached dirty blocks of `band`.
    pub fn dirty_in(&self, band: u64) -> u32 {
        self.band_index.get(&band).map_or(0, |&i| self.bands[i as usize].dirty.len())
    }
    /// Clean blocks that were cold at the latest victim selection.
    pub fn cold_clean(&self) -> u64 {
        self.cold_clean
    }
    /// Starts (or stops) keeping a [`CycleRecord`] per cycle.
    pub fn record_cycles(&mut self, on: bool) {
        self.history = on.then(Vec::new);
    }
    /// The cycles recorded since [`Sac::record_cycles`] was turned on.
    pub fn cycle_history(&self) -> &[CycleRecord] {
        self.history.as_deref().unwrap_or(&[])
    }

    /// Checks the internal structures against `table` (slow: for tests). Cold counts are checked
    /// as of the latest victim selection's window.
    pub fn check(&self, table: &BlockTable) -> Result<(), PolicyError> {
        self.check_structures(table).map_err(PolicyError::Inconsistent)
    }

    fn check_structures(&self, table: &BlockTable) -> Result<(), String> {
        let mut clean = 0u64;
        let mut dirty = 0u64;
        for s in table.used_slots() {
            let m = table.meta(s);
            let o = self.owner_of(s);
            if m.dirty != (o != CLEAN) {
                return Err(format!("slot {s} block {} dirty {} but owner {o}", m.block, m.dirty));
            }
            if o == CLEAN {
                clean += 1;
            } else {
                dirty += 1;
                let b = &self.bands[o as usize];
                if b.number != self.band_of(m.block) {
                    return Err(format!("block {} in band list {}", m.block, b.number));
                }
            }
        }
        if clean != self.clean.len() as u64 || dirty != self.dirty_total || clean + dirty != self.cached {
            return Err(format!(
                "counts: clean {clean}/{} dirty {dirty}/{}",
                self.clean.len(),
                self.dirty_total
            ));
        }
        // a block is cold iff its latest access is at or before the judged ticks; the counters
        // agree with the flags
        let mut cc = 0u64;
        let mut per_band: FxHashMap<u32, u32> = FxHashMap::default();
        for s in table.used_slots() {
            let old = table.meta(s).last_access <= self.cold_until;
            if self.is_cold(s) != old {
                return Err(format!(
                    "slot {s} cold {} but last access {}",
                    self.is_cold(s),
                    table.meta(s).last_access
                ));
            }
            if old {
                match self.owner_of(s) {
                    CLEAN => cc += 1,
                    o => *per_band.entry(o).or_default() += 1,
                }
            }
        }
        if cc != self.cold_clean {
            return Err(format!("cold clean {cc} != {}", self.cold_clean));
        }
        let mut tdirty = 0u64;
        let mut tcold = 0u64;
        let mut tne = 0u64;
        for &i in &self.dirty_bands {
            let b = &self.bands[i as usize];
            if b.cold != per_band.get(&i).copied().unwrap_or(0) {
                return Err(format!("band {} cold {} wrong", b.number, b.cold));
            }
            if b.dirty.is_empty() {
                return Err(format!("empty band {} in the dirty set", b.number));
            }
        }
        for &i in &self.targets {
            let b = &self.bands[i as usize];
            if !b.is_target {
                return Err(format!("target {} not flagged", b.number));
            }
            tdirty += b.dirty.len() as u64;
            tcold += b.cold as u64;
            tne += (!b.dirty.is_empty()) as u64;
        }
        if (tdirty, tcold, tne) != (self.targets_dirty, self.targets_cold, self.targets_nonempty) {
            return Err(format!(
                "target sums ({tdirty},{tcold},{tne}) != ({},{},{})",
                self.targets_dirty, self.targets_cold, self.targets_nonempty
            ));
        }
        if self.cycle_live != (self.targets_dirty > 0) {
            return Err("cycle_live disagrees with the targets' dirty blocks".into());
        }
        Ok(())
    }

    // ---- bands ------------------------------------------------------------------------------

    #[inline]
    fn band_idx(&mut self, number: u64) -> u32 {
        if self.last_band.0 == number {
            return self.last_band.1;
        }
        let i = self.band_idx_lookup(number);
        self.last_band = (number, i);
        i
    }

    fn band_idx_lookup(&mut self, number: u64) -> u32 {
        if let Some(&i) = self.band_index.get(&number) {
            return i;
        }
        let i = match self.free_bands.pop() {
            Some(i) => {
                self.bands[i as usize] = Band::new(number);
                i
            }
            None => {
                assert!(self.bands.len() < CLEAN as usize, "{}: too many bands", self.p.name);
                self.bands.push(Band::new(number));
                (self.bands.len() - 1) as u32
            }
        };
        self.band_index.insert(number, i);
        i
    }

    fn free_band(&mut self, i: u32) {
        let b = &self.bands[i as usize];
        debug_assert!(b.dirty.is_empty() && !b.is_target && !b.cooling && b.pos == NIL);
        self.band_index.remove(&b.number);
        if self.last_band.0 == b.number {
            self.last_band = (u64::MAX, 0);
        }
        self.free_bands.push(i);
    }

    fn add_dirty(&mut self, table: &BlockTable, i: u32, slot: Slot) {
        self.set_owner(slot, i);
        self.dirty_total += 1;
        let b = &mut self.bands[i as usize];
        let was_empty = b.dirty.is_empty();
        b.hits += table.meta(slot).hits as u64;
        self.links.push_front(&mut b.dirty, slot);
        if was_empty {
            b.pos = self.dirty_bands.len() as u32;
            self.dirty_bands.push(i);
        }
        if b.is_target {
            self.targets_dirty += 1;
            if was_empty {
                self.targets_nonempty += 1;
                self.tails.push(Reverse((table.meta(slot).last_access, i)));
            }
        }
    }

    fn remove_dirty(&mut self, i: u32, slot: Slot, hits: u32) {
        self.dirty_total -= 1;
        let b = &mut self.bands[i as usize];
        b.hits -= hits as u64;
        self.links.remove(&mut b.dirty, slot);
        let empty = b.dirty.is_empty();
        let target = b.is_target;
        if target {
            self.targets_dirty -= 1;
            self.targets_nonempty -= empty as u64;
        }
        if empty {
            let pos = b.pos as usize;
            b.pos = NIL;
            let free = !b.is_target && !b.cooling;
            self.dirty_bands.swap_remove(pos);
            if let Some(&moved) = self.dirty_bands.get(pos) {
                self.bands[moved as usize].pos = pos as u32;
            }
            if free {
                self.free_band(i);
            }
        }
        if target && self.targets_dirty == 0 && self.cycle_live {
            // Rule 3: nothing of the targets is left to write back.
            self.end_cycle();
        }
    }

    // ---- coldness ---------------------------------------------------------------------------

    #[inline]
    fn set_cold(&mut self, slot: Slot, on: bool) {
        let o = &mut self.owner[slot as usize];
        *o = if on { *o | COLD } else { *o & !COLD };
        match *o & !COLD {
            CLEAN => {
                if on {
                    self.cold_clean += 1
                } else {
                    self.cold_clean -= 1
                }
            }
            o => {
                let b = &mut self.bands[o as usize];
                if on {
                    b.cold += 1;
                    self.targets_cold += b.is_target as u64;
                } else {
                    b.cold -= 1;
                    self.targets_cold -= b.is_target as u64;
                }
            }
        }
    }

    /// The band index owning `slot`, or [`CLEAN`].
    #[inline]
    fn owner_of(&self, slot: Slot) -> u32 {
        self.owner[slot as usize] & !COLD
    }

    /// Sets `slot`'s owner, keeping its cold mark.
    #[inline]
    fn set_owner(&mut self, slot: Slot, owner: u32) {
        let o = &mut self.owner[slot as usize];
        *o = (*o & COLD) | owner;
    }

    #[inline]
    fn is_cold(&self, slot: Slot) -> bool {
        self.owner[slot as usize] & COLD != 0
    }

    #[inline]
    fn uncold(&mut self, slot: Slot) {
        if self.is_cold(slot) {
            self.set_cold(slot, false);
        }
    }

    /// Judges the ticks up to `until`: the slot accessed at each turns cold if that was its
    /// latest access (a slot that left the cache unjudged was taken off the ring, and a reused
    /// one has a later access). Amortised O(1): one tick per access.
    #[inline]
    fn judge_ticks(&mut self, table: &BlockTable, until: u64) {
        /// Ticks ahead whose slot's state is prefetched, so that the lookups overlap.
        const AHEAD: usize = 16;
        let n = self.ticks.len();
        while self.cold_until < until {
            let u = self.cold_until + 1;
            self.cold_until = u;
            let pos = self.judge_pos;
            self.judge_pos = if pos + 1 == n { 0 } else { pos + 1 };
            if AHEAD < n {
                let a = if pos + AHEAD >= n { pos + AHEAD - n } else { pos + AHEAD };
                let ahead = self.ticks[a];
                if ahead != NIL {
                    table.prefetch_meta(ahead);
                    shingled_core::mem::prefetch(&self.owner, ahead as usize);
                }
            }
            let s = self.ticks[pos];
            if s != NIL && table.meta(s).last_access == u {
                debug_assert!(table.is_used(s) && !self.is_cold(s), "slot {s} judged twice");
                self.set_cold(s, true);
            }
        }
    }

    /// Marks every block accessed before the popularity window cold.
    fn refresh_cold(&mut self, table: &BlockTable) {
        self.judge_ticks(table, table.clock().saturating_sub(self.p.hot_window));
    }

    /// Records the access at the table's current tick to `slot`, first judging the tick whose
    /// place in the ring it takes.
    #[inline]
    fn record_tick(&mut self, table: &BlockTable, slot: Slot) {
        let t = table.clock();
        let n = self.ticks.len();
        self.judge_ticks(table, t.saturating_sub(n as u64));
        let pos = if t == self.rec_tick.wrapping_add(1) {
            let p = self.rec_pos + 1;
            if p == n {
                0
            } else {
                p
            }
        } else {
            (t % n as u64) as usize
        };
        debug_assert_eq!(pos as u64, t % n as u64);
        self.rec_tick = t;
        self.rec_pos = pos;
        self.ticks[pos] = slot;
    }

    /// Steps the look-ahead walk ([`Sac::walk`]) one slot on: reads the links of the slot
    /// reached (prefetched one step before) and prefetches the next one's. A batch of `batch`
    /// victims is followed by `batch` insertions, one step each: one dependent load per
    /// insertion, overlapping with the rest of its request, instead of `batch` of them in a row.
    #[inline]
    fn advance_walk(&mut self) {
        if self.walk_left == 0 {
            return;
        }
        match self.links.prev(self.walk) {
            Some(p) => {
                self.links.prefetch(p);
                self.walk = p;
                self.walk_left -= 1;
            }
            None => self.walk_left = 0,
        }
    }

    // ---- cycles -----------------------------------------------------------------------------

    fn start_cycle(&mut self, table: &BlockTable) {
        debug_assert!(!self.cycle_live && self.targets.is_empty());
        self.cycles += 1;
        let now = self.cycles;
        let mut k = 0;
        while k < self.cooling.len() {
            let i = self.cooling[k];
            if now > self.bands[i as usize].cooling_until {
                self.cooling.swap_remove(k);
                let b = &mut self.bands[i as usize];
                b.cooling = false;
                if b.dirty.is_empty() && !b.is_target {
                    self.free_band(i);
                }
            } else {
                k += 1;
            }
        }
        let mut cands = std::mem::take(&mut self.scratch);
        cands.clear();
        for &i in &self.dirty_bands {
            let b = &self.bands[i as usize];
            if b.cooling {
                continue;
            }
            let (score, count) = match self.p.tbs {
                Tbs::Ars => (b.cold as u64, 0),
                Tbs::Ad => (b.dirty.len() as u64, 0),
                Tbs::Pd => (b.hits, b.dirty.len() as u64),
            };
            cands.push(Candidate { score, count, number: b.number, idx: i });
        }
        let tbs = self.p.tbs;
        let rank = move |a: &Candidate, b: &Candidate| -> Ordering {
            let primary = match tbs {
                Tbs::Ars | Tbs::Ad => b.score.cmp(&a.score),
                // lower mean first: a.sum / a.n vs b.sum / b.n
                Tbs::Pd => (a.score as u128 * b.count as u128).cmp(&(b.score as u128 * a.count as u128)),
            };
            primary.then(a.number.cmp(&b.number))
        };
        let k = self.p.max_targets;
        if cands.len() > k {
            cands.select_nth_unstable_by(k - 1, rank);
            cands.truncate(k);
        }
        cands.sort_unstable_by(rank);
        self.target_numbers.clear();
        self.writebacks = 0;
        for c in &cands {
            let b = &mut self.bands[c.idx as usize];
            b.is_target = true;
            b.cooling_until = now + self.p.cooldown;
            self.targets.push(c.idx);
            self.target_numbers.push(b.number);
            self.targets_dirty += b.dirty.len() as u64;
            self.targets_nonempty += 1;
            self.targets_cold += b.cold as u64;
            let tail = b.dirty.back().expect("candidates hold dirty blocks");
            self.tails.push(Reverse((table.meta(tail).last_access, c.idx)));
        }
        self.scratch = cands;
        if let Some(h) = &mut self.history {
            h.push(CycleRecord { number: now, targets: self.target_numbers.clone(), writebacks: 0 });
        }
        self.cycle_live = self.targets_dirty > 0;
        if !self.cycle_live {
            self.end_cycle();
        }
    }

    fn end_cycle(&mut self) {
        for k in 0..self.targets.len() {
            let i = self.targets[k];
            let b = &mut self.bands[i as usize];
            b.is_target = false;
            if self.p.cooldown > 0 {
                b.cooling = true;
                self.cooling.push(i);
            } else if b.dirty.is_empty() {
                self.free_band(i);
            }
        }
        self.targets.clear();
        self.targets_dirty = 0;
        self.targets_nonempty = 0;
        self.targets_cold = 0;
        self.tails.clear();
        self.cycle_live = false;
        if self.phase == Phase::Dirty {
            self.phase = Phase::Undecided;
        }
        if let Some(r) = self.history.as_mut().and_then(|h| h.last_mut()) {
            r.writebacks = self.writebacks;
        }
    }

    /// The target band holding dirty blocks whose LRU tail is oldest.
    fn frozen_band(&mut self, table: &BlockTable) -> Option<u32> {
        let bands = &self.bands;
        let fresh = super::fresh_min(&mut self.tails, |i| {
            let b = &bands[i as usize];
            let tail = b.dirty.back().filter(|_| b.is_target)?;
            Some((table.meta(tail).last_access, ()))
        });
        fresh.map(|(_, i, ())| i)
    }

    // ---- victims ----------------------------------------------------------------------------

    fn take_clean(&mut self, victims: &mut Vec<Slot>) {
        let mut n = self.p.batch as u64;
        if let Phase::Clean { remaining } = self.phase {
            n = n.min(remaining);
        }
        let before = victims.len();
        victims.extend(self.links.iter_back(&self.clean).take(n as usize));
        let taken = (victims.len() - before) as u64;
        if let Phase::Clean { remaining } = &mut self.phase {
            *remaining -= taken.min(*remaining);
            if *remaining == 0 {
                self.phase = Phase::Undecided;
            }
        }
    }

    fn take_dirty(&mut self, table: &BlockTable, victims: &mut Vec<Slot>) {
        let mut starts = 0;
        while !self.cycle_live {
            // Empty cycles can only come from every dirty band cooling down; they expire.
            assert!(
                starts <= self.p.cooldown + 1,
                "{}: no eligible target band for dirty blocks",
                self.p.name
            );
            self.start_cycle(table);
            starts += 1;
        }
        let i = self.frozen_band(table).expect("a live cycle has a target with dirty blocks");
        let mut n = self.p.batch as u64;
        if let Some(cap) = self.p.cycle_cap {
            n = n.min(cap.saturating_sub(self.writebacks).max(1));
        }
        let before = victims.len();
        victims.extend(self.links.iter_back(&self.bands[i as usize].dirty).take(n as usize));
        self.writebacks += (victims.len() - before) as u64;
        if let Some(r) = self.history.as_mut().and_then(|h| h.last_mut()) {
            r.writebacks = self.writebacks;
        }
        if self.p.cycle_cap.is_some_and(|cap| self.writebacks >= cap) {
            self.end_cycle();
        }
    }

    /// CDC's cost model (§4.4): keeps the decision in force or takes a new one.
    fn cost_side(&mut self, table: &BlockTable) -> Side {
        match self.phase {
            Phase::Clean { remaining } if remaining > 0 => return Side::Clean,
            Phase::Dirty if self.cycle_live => return Side::Dirty,
            _ => {}
        }
        if !self.cycle_live {
            self.start_cycle(table);
        }
        let clean = self.clean.len() as u64;
        let scanned = clean.min(self.p.clean_scan);
        let clean_cold = self.cold_clean.min(scanned);
        let clean_time = self.p.costs.read_ms * (scanned - clean_cold) as f64;
        let clean_cost = clean_time / self.p.guard.denominator(clean_cold);
        let (dirty_time, dirty_cost) = if self.cycle_live {
            // Σ_B R(|S_B|) with R linear (SmrCosts::rmw_ms)
            let t = self.p.costs.rmw_fixed_ms * self.targets_nonempty as f64
                + self.p.costs.rmw_per_block_ms * self.targets_dirty as f64;
            (t, t / self.p.guard.denominator(self.targets_cold))
        } else {
            (f64::INFINITY, f64::INFINITY)
        };
        let side = if clean_cost < dirty_cost { Side::Clean } else { Side::Dirty };
        self.phase = match side {
            Side::Clean => Phase::Clean { remaining: self.p.clean_phase.min(clean) },
            Side::Dirty => Phase::Dirty,
        };
        self.evaluations += 1;
        self.last_eval = Some(CdcEvaluation {
            clean_scanned: scanned,
            clean_cold,
            clean_time_ms: clean_time,
            clean_cost,
            dirty_bands: self.targets_nonempty,
            dirty_blocks: self.targets_dirty,
            dirty_cold: self.targets_cold,
            dirty_time_ms: dirty_time,
            dirty_cost,
            side,
        });
        side
    }

    /// The recency comparator: the older of the clean tail and the next dirty band's tail.
    fn recency_side(&mut self, table: &BlockTable) -> Side {
        if !self.cycle_live {
            self.start_cycle(table);
        }
        if !self.cycle_live {
            return Side::Clean;
        }
        let i = self.frozen_band(table).expect("a live cycle has a target with dirty blocks");
        let dirty_tail = self.bands[i as usize].dirty.back().expect("non-empty");
        let clean_tail = self.clean.back().expect("clean blocks are cached");
        if table.meta(clean_tail).last_access < table.meta(dirty_tail).last_access {
            Side::Clean
        } else {
            Side::Dirty
        }
    }
}

impl Policy for Sac {
    fn name(&self) -> &'static str {
        self.p.name
    }

    #[inline]
    fn on_insert(&mut self, table: &BlockTable, slot: Slot) {
        self.advance_walk();
        self.record_tick(table, slot);
        self.cached += 1;
        self.owner[slot as usize] = CLEAN; // hot, clean until it joins a band
        let m = table.meta(slot);
        if m.dirty {
            let i = self.band_idx(m.block / self.p.band_blocks);
            self.add_dirty(table, i, slot);
        } else {
            self.links.push_front(&mut self.clean, slot);
        }
    }

    #[inline]
    fn on_hit(&mut self, table: &BlockTable, slot: Slot, became_dirty: bool) {
        self.uncold(slot);
        self.record_tick(table, slot);
        match self.owner_of(slot) {
            CLEAN if became_dirty => {
                self.links.remove(&mut self.clean, slot);
                let i = self.band_idx(table.meta(slot).block / self.p.band_blocks);
                self.add_dirty(table, i, slot);
            }
            CLEAN => self.links.move_to_front(&mut self.clean, slot),
            i => {
                let b = &mut self.bands[i as usize];
                b.hits += 1;
                self.links.move_to_front(&mut b.dirty, slot)
            }
        }
    }

    fn select_victims(&mut self, table: &BlockTable, _incoming: BlockNo, victims: &mut Vec<Slot>) {
        self.refresh_cold(table);
        let side = if self.dirty_total == 0 {
            Side::Clean
        } else if self.clean.is_empty() {
            if matches!(self.phase, Phase::Clean { .. }) {
                self.phase = Phase::Undecided;
            }
            Side::Dirty
        } else {
            match self.p.comparator {
                Comparator::Cost => self.cost_side(table),
                Comparator::Recency => self.recency_side(table),
            }
        };
        match side {
            Side::Clean => self.take_clean(victims),
            Side::Dirty => self.take_dirty(table, victims),
        }
        self.last_side = Some(side);
        if table.look_ahead() {
            // The next batch probably continues this one's list: walk it ahead of time from
            // the slot before this batch's last victim (whose links the batch just read).
            self.walk = victims.last().and_then(|&s| self.links.prev(s)).unwrap_or(NIL);
            self.walk_left = 0;
            if self.walk != NIL {
                self.walk_left = self.p.batch;
                self.links.prefetch(self.walk);
            }
        }
    }

    #[inline]
    fn on_remove(&mut self, table: &BlockTable, slot: Slot) {
        self.uncold(slot);
        self.cached -= 1;
        let u = table.meta(slot).last_access;
        if u > self.cold_until {
            // Its latest access is still to be judged: the ring must not judge it after the
            // slot has left (nor when a later block reuses it).
            // Tick `cold_until + 1` is at `judge_pos`, and `u` is less than a ring ahead.
            let n = self.ticks.len();
            let mut at = self.judge_pos + (u - self.cold_until - 1) as usize;
            if at >= n {
                at -= n;
            }
            debug_assert_eq!(at as u64, u % n as u64);
            debug_assert_eq!(self.ticks[at], slot);
            self.ticks[at] = NIL;
        }
        match self.owner_of(slot) {
            CLEAN => self.links.remove(&mut self.clean, slot),
            i => {
                self.set_owner(slot, CLEAN);
                self.remove_dirty(i, slot, table.meta(slot).hits);
            }
        }
    }

    /// The next victims as the current decision would take them: the clean tail, or the tail
    /// of the target band at the top of the heap (the heap may be stale: a hint).
    fn peek_victims(&self, _: &BlockTable, ahead: &mut [Slot; 2]) -> usize {
        let dirty = match self.phase {
            Phase::Clean { .. } => None,
            _ => self.tails.peek().and_then(|&Reverse((_, i))| {
                let b = &self.bands[i as usize];
                b.is_target.then(|| b.dirty.back()).flatten()
            }),
        };
        let Some(first) = dirty.or_else(|| self.clean.back()) else { return 0 };
        ahead[0] = first;
        let Some(second) = self.links.prev(first) else { return 1 };
        ahead[1] = second;
        self.links.prefetch(second);
        2
    }

    #[inline]
    fn prefetch_slot(&self, slot: Slot) {
        // What a hit or a removal of the slot reads first: its owner (and cold mark), its links.
        shingled_core::mem::prefetch(&self.owner, slot as usize);
        self.links.prefetch(slot);
    }

    fn heap_bytes(&self) -> usize {
        use std::mem::size_of;
        self.links.heap_bytes()
            + self.ticks.capacity() * size_of::<Slot>()
            + self.owner.capacity() * size_of::<u32>()
            + self.bands.capacity() * size_of::<Band>()
            + self.band_index.capacity() * (size_of::<(u64, u32)>() + 1)
            + (self.free_bands.capacity()
                + self.dirty_bands.capacity()
                + self.cooling.capacity()
                + self.targets.capacity())
                * size_of::<u32>()
            + self.target_numbers.capacity() * size_of::<u64>()
            + self.tails.capacity() * size_of::<Reverse<(u64, u32)>>()
            + self.scratch.capacity() * size_of::<Candidate>()
    }
}
