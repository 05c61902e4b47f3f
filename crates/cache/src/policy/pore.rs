//! PORE: Partially Open Region for Eviction (Wang, Wang, Chai, Wang and Sun, "Larger, Cheaper,
//! but Faster: SSD-SMR Hybrid Storage Boosted by a New SMR-oriented Cache Framework").
//!
//! The drive's LBA space is cut into fixed-size zones (`zone_size`; PORE assumes it cannot see
//! the drive's bands, §IV-B2). At every *region division* some zones become the Open Region and
//! all others the Forbidden Region; a victim is the least recently used block that is clean or
//! lies in an open zone, so the dirty blocks written back during a period stay within a small
//! LBA range and the drive's write amplification stays near `S_or / S_wb` (§IV-B3, Eq. 2). See
//! [`Pore`] for the algorithm and [`PoreConfig`] for the readings this implementation chose
//! where the paper leaves a choice open.
//!
//! `zones = bands` ([`PoreZones::Bands`], `--policy pore:zones=bands`) is not the paper's PORE:
//! it is our extension, after SAC §5's probe (SAC §5.2 detects a drive-managed drive's band
//! division). Each zone is then one band of the drive's band map ([`PolicyContext::bands`]), so
//! zones differ in size and every coverage rate divides by its own zone's size. Unlike
//! fixed-size zones, no zone straddles two bands.

use crate::{BlockTable, Links, List, Policy, PolicyBuilder, PolicyContext, PolicyError, Slot};
use serde::{Deserialize, Serialize};
use shingled_core::{BandMap, BlockNo, ByteSize};
use std::cmp::{Ordering, Reverse};
use std::collections::BinaryHeap;
use std::sync::Arc;

/// The base replacement order that ranks blocks inside the framework.
///
/// PORE "is not a specific cache replacement scheme, but an open cache framework. Any other
/// cache replacement algorithms can be used in PORE" (§IV-B); the paper evaluates it on LRU
/// (§V-C3: "we only adopt a simple LRU queue to manage all the dirty and clean blocks
/// together"). Only LRU is implemented; the field exists so that others can be added.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum PoreBase {
    /// One global recency queue of clean and dirty blocks.
    #[default]
    Lru,
}

/// How zones are ranked when the Open Region is chosen (§IV-C3).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum PoreScheme {
    /// Coverage First: descending coverage rate (cached dirty blocks / zone size), i.e.
    /// descending cached dirty blocks when all zones have the same size (`zones = size`).
    Cf,
    /// Popularity First: ascending average access count per block.
    Pf,
    /// BaLancing: ascending average access count per block divided by the coverage rate — the
    /// paper's default (§V-D: "BL is chosen as the default open-zone selecting scheme").
    #[default]
    Bl,
}

/// What "the average access count per block" of a zone is computed over (PF and BL).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum PorePopularity {
    /// The access counts ([`crate::BlockMeta::hits`], accesses since insertion) of the zone's
    /// currently cached dirty blocks, averaged over those blocks (§IV-C3, PF: "sort all the
    /// zones by the average access count per block"). The default.
    #[default]
    SinceInsert,
    /// Accesses during the period that just ended, per block referenced in it (§IV-B3: "choose
    /// some zones … according to the access records of all the zones in the last period").
    /// Approximated with per-zone counters reset at each division: the accesses that left a
    /// block of the zone dirty (dirty insertions, write hits, hits on dirty blocks), divided by
    /// the number of distinct cached blocks so accessed. The PORE artifact's history is not a
    /// record of the last period alone: it holds an entry, with its hit count, for every block
    /// referenced in the period *and* every block still cached (a division frees only the
    /// entries of blocks no longer cached), so a zone whose cached dirty blocks were not
    /// accessed in the period keeps their counts there, where it has popularity 0 here; and a
    /// block evicted and re-inserted within one period counts twice here, once there. BL's
    /// coverage rate stays cached dirty blocks / zone size (the artifact's score, hits /
    /// pages², uses the history's page count instead).
    LastPeriod,
}

/// Which events advance the region-division period.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum PoreCount {
    /// Blocks that become dirty in the cache: write misses (dirty insertions) and write hits on
    /// clean blocks (§IV-B3: "the count of dirty blocks written into SSD cache"). Rewrites of
    /// blocks that are already dirty add no dirty block and do not count. The default.
    #[default]
    NewlyDirty,
    /// Write misses only (the artifact's `HotDivSizeWriteOnly` counts write-miss insertions).
    WriteMisses,
}

/// How the LBA space is cut into zones.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum PoreZones {
    /// Zones of `zone_size` each, aligned from LBA 0 (`zone = block / zone_blocks`): the paper's
    /// PORE, which assumes it cannot see the bands (§IV-B2). The default.
    #[default]
    Size,
    /// Each zone is one band of the drive's band map ([`PolicyContext::bands`]; `zone_size` is
    /// not used). Not the paper's PORE: our extension, after SAC §5's probe of the band
    /// division. Needs a drive with a band map.
    Bands,
}

impl PoreZones {
    fn is_size(&self) -> bool {
        *self == PoreZones::Size
    }
}

/// PORE's period length: blocks or a multiple of the PB ([`PbLength`]).
pub type PorePeriod = crate::PbLength;

/// Configuration of [`Pore`]. Build it with [`PolicyBuilder::build`] (or
/// [`PoreConfig::build_pore`] for the concrete type).
///
/// Readings chosen where the paper leaves room (section of the paper in brackets; the
/// alternative, where a user could want it, is a field):
///
/// - Victims are single blocks: the least recently used block that is clean or lies in an open
///   zone; forbidden dirty blocks are skipped [§IV-A, §IV-B1].
/// - Zones are `zone_size`-aligned ranges of LBA counted from 0 (`zone = block / zone_blocks`);
///   the drive's true band map is deliberately ignored [§IV-B2]. Not the paper's PORE: our
///   extension, after SAC §5's probe, `zones = bands` makes each zone one band of the drive's
///   band map instead, zones of unequal sizes (coverage rates then divide by each zone's own
///   size).
/// - Before the first division every zone counts as open (no victim is needed then anyway); the
///   first division happens when the cache first becomes full [§IV-B3].
/// - The period is counted in blocks that become dirty in the cache (`period_counts`), and a new
///   division happens as soon as the count reaches the period length [§IV-B3]. Its default
///   length is the persistent buffer [§IV-B3, §V-E].
/// - A division sorts the zones that have cached dirty blocks and opens them in order until
///   their cached dirty blocks reach the period length, at least one zone; every other zone is
///   forbidden, including zones that get their first dirty block during the period [§IV-C1].
///   Ties are broken by ascending zone number.
/// - Coverage rate = cached dirty blocks / the zone's blocks [§IV-C2]; popularity per
///   `popularity`.
/// - Not in the paper: when every cached block is a forbidden dirty block (nothing is
///   evictable), a new division starts at once and restarts the period count. The PORE artifact
///   (github.com/wcl14/smr-ssd-cache, `maxcold.c`, line 581: MaxCold dereferences the emptied
///   Now-LRU) has no such guard and crashes there.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PoreConfig {
    /// Base replacement order. Default `lru`, the only one so far.
    #[serde(default)]
    pub base: PoreBase,
    /// Open-zone selection scheme: `cf`, `pf` or `bl`. Default `bl` (§V-D).
    #[serde(default)]
    pub scheme: PoreScheme,
    /// Zone size, the unit of the Open Region; at least one 4 KiB block. Default 20 MiB (the
    /// paper's "20MB", §V-E; the authors' scripts pass 20,971,520 bytes).
    #[serde(default = "default_zone_size")]
    pub zone_size: ByteSize,
    /// How zones are cut: `size` (default), zones of `zone_size` each, the paper's; or `bands`,
    /// each zone one band of the drive's band map, zones of unequal sizes, and `zone_size`
    /// unused. `bands` is not the paper's PORE: our extension, after SAC §5's probe (the
    /// paper's PORE assumes it cannot see the bands, §IV-B2). It needs a drive with a band map.
    #[serde(default, skip_serializing_if = "PoreZones::is_size")]
    pub zones: PoreZones,
    /// Region-division period length: blocks (`6731`, `20GiB`) or relative to the persistent
    /// buffer (`100%`, `1/10`). Default `100%`, the PB size, best per §IV-B3 and §V-E; relative
    /// values need a drive with a PB.
    #[serde(default)]
    pub period: PorePeriod,
    /// What advances the period: `newly-dirty` (default) or `write-misses` (the artifact).
    #[serde(default)]
    pub period_counts: PoreCount,
    /// Popularity of a zone for PF and BL: `since-insert` (default) or `last-period`.
    #[serde(default)]
    pub popularity: PorePopularity,
}

fn default_zone_size() -> ByteSize {
    ByteSize::mib(20)
}

impl Default for PoreConfig {
    fn default() -> Self {
        PoreConfig {
            base: PoreBase::Lru,
            scheme: PoreScheme::Bl,
            zone_size: default_zone_size(),
            zones: PoreZones::Size,
            period: PorePeriod::default(),
            period_counts: PoreCount::NewlyDirty,
            popularity: PorePopularity::SinceInsert,
        }
    }
}

impl PoreConfig {
    /// Validates the configuration against the context and builds the concrete policy (for
    /// callers that want its inspection methods).
    pub fn build_pore(&self, ctx: &PolicyContext) -> Result<Pore, PolicyError> {
        match self.zones {
            PoreZones::Size => {
                let zone_blocks = self.zone_size.blocks();
                if zone_blocks == 0 {
                    return Err(PolicyError::Field {
                        policy: "pore",
                        field: "zone_size",
                        value: self.zone_size.to_string(),
                        reason: "must be at least one 4 KiB block".into(),
                    });
                }
                let period = self.period.resolve(ctx, "pore", "period")?;
                Ok(Pore::new(ctx.capacity_blocks, zone_blocks, period, self))
            }
            PoreZones::Bands => {
                let bands = ctx.bands.clone().ok_or_else(|| PolicyError::Field {
                    policy: "pore",
                    field: "zones",
                    value: "bands".into(),
                    reason: "the drive has no band map; use a drive with bands (dm-smr) or zones=size".into(),
                })?;
                let period = self.period.resolve(ctx, "pore", "period")?;
                Ok(Pore::with_bands(ctx.capacity_blocks, bands, period, self))
            }
        }
    }
}

impl PolicyBuilder for PoreConfig {
    fn build(&self, ctx: &PolicyContext) -> Result<Box<dyn Policy>, PolicyError> {
        Ok(Box::new(self.build_pore(ctx)?))
    }
}

/// Per-slot flag: the slot's block is accounted as dirty in its zone's statistics, and the slot
/// is in its zone's dirty list (otherwise it is in the clean list).
const COUNTED: u8 = 1;

/// Per-zone statistics, kept up to date in O(1) per access.
#[derive(Clone, Copy, Debug, Default)]
struct Zone {
    /// Σ [`crate::BlockMeta::hits`] over the zone's cached dirty blocks.
    hit_sum: u64,
    /// Accesses in period `p_epoch` that left a block of the zone dirty (last-period popularity).
    p_acc: u64,
    /// Cached dirty blocks of the zone.
    dirty: u32,
    /// Index in `Pore::dirty_zones` while `dirty > 0`.
    set_pos: u32,
    /// Distinct blocks counted in `p_acc` (last-period popularity).
    p_blocks: u32,
    /// The period `p_acc` and `p_blocks` belong to; stale counters read as zero.
    p_epoch: u32,
    /// In the current Open Region.
    open: bool,
    /// The zone's counted dirty blocks, most recently used first.
    list: List,
}

/// A zone's average access count per block as a fraction `num / den` (`den >= 1`).
#[derive(Clone, Copy, Debug)]
struct Popularity {
    num: u64,
    den: u64,
}

/// PORE, Partially Open Region for Eviction, over an LRU base order.
///
/// The victim is the least recently used block that is clean or lies in an open zone. Instead of
/// one global recency queue with an evictable sublist rebuilt at every division, the blocks are
/// kept in recency lists that never need rebuilding (every operation O(1) per access, O(log z)
/// per victim for z open zones; no allocation in steady state):
/// - one LRU list of the clean blocks;
/// - one LRU list per zone of its cached dirty blocks (a dense vector of zones indexed by zone
///   number, `block / zone_blocks` or the block's band, grown on demand), beside the zone's
///   statistics: cached dirty blocks, the sum of their access counts, last-period counters and
///   the open flag; plus the set of zones with cached dirty blocks, so a division sorts only
///   those;
/// - a min-heap of the open zones by the last access of their list's tail (entries go stale as
///   tails get younger and are fixed when they surface).
///
/// Since every block's last access is distinct, the victim — the oldest of the clean list's tail
/// and the open zones' tails — is exactly the tail of the paper's "additional linked list for
/// all the cache blocks in Open Region" (§IV-B1) kept in global recency order. A division
/// flips the open flags of the zones it opens or closes and refills the heap: O(dirty zones),
/// not O(cache).
///
/// A block made clean by [`crate::Cache::mark_clean`] (which the policy is not told about) is
/// noticed at its next access, or at the next victim selection or division, which then moves
/// every such block from its zone's list into the clean list at its recency position
/// (O(cache), only after such a call).
///
/// Memory: 9 bytes per slot (a link pair and a flag byte; 13 with last-period popularity) plus
/// 56 bytes per zone up to the highest zone touched.
#[derive(Debug)]
pub struct Pore {
    scheme: PoreScheme,
    popularity: PorePopularity,
    counts: PoreCount,
    /// Blocks per zone (fixed-size zones; unused with band zones).
    zone_blocks: u64,
    /// Band zones: zone = the block's band. `None`: zone = `block / zone_blocks`. Decided when
    /// the policy is built.
    bands: Option<Arc<BandMap>>,
    period: u64,
    /// Links of the clean list and of every zone's dirty list (a slot is in exactly one).
    links: Links,
    clean: List,
    flags: Vec<u8>,
    /// Last-period popularity only: the period in which the slot's block was last counted in
    /// `Zone::p_blocks` (0 = never).
    seen: Vec<u32>,
    zones: Vec<Zone>,
    dirty_zones: Vec<u64>,
    open: Vec<u64>,
    /// Cached dirty blocks of the open zones (the evictable dirty blocks after a division).
    open_dirty: u64,
    /// Min-heap of (last access of the zone list's tail, zone) over the open zones holding
    /// dirty blocks; entries may be stale (the tail only gets younger) or of zones since closed
    /// or emptied, and are fixed or dropped when they surface.
    tails: BinaryHeap<Reverse<(u64, u64)>>,
    scratch: Vec<u64>,
    divided: bool,
    divisions: u64,
    epoch: u32,
    progress: u64,
    counted: u64,
}

impl Pore {
    /// PORE for `capacity` slots with zones of `zone_blocks` blocks and a period of
    /// `period_blocks` newly dirty blocks; the other settings from `cfg` (whose `zone_size` and
    /// `period` are ignored here).
    pub fn new(capacity: u32, zone_blocks: u64, period_blocks: u64, cfg: &PoreConfig) -> Self {
        let cap = capacity as usize;
        Pore {
            scheme: cfg.scheme,
            popularity: cfg.popularity,
            counts: cfg.period_counts,
            zone_blocks: zone_blocks.max(1),
            bands: None,
            period: period_blocks.max(1),
            links: Links::with_capacity(cap),
            clean: List::default(),
            flags: vec![0; cap],
            seen: if cfg.popularity == PorePopularity::LastPeriod { vec![0; cap] } else { Vec::new() },
            zones: Vec::new(),
            dirty_zones: Vec::new(),
            open: Vec::new(),
            open_dirty: 0,
            tails: BinaryHeap::new(),
            scratch: Vec::new(),
            divided: false,
            divisions: 0,
            epoch: 1,
            progress: 0,
            counted: 0,
        }
    }

    /// PORE for `capacity` slots whose zones are the bands of `bands` (`zones = bands`, our
    /// extension) and a period of `period_blocks` newly dirty blocks; the other settings from
    /// `cfg` (whose `zone_size`, `zones` and `period` are ignored here).
    pub fn with_bands(capacity: u32, bands: Arc<BandMap>, period_blocks: u64, cfg: &PoreConfig) -> Self {
        Pore { bands: Some(bands), ..Pore::new(capacity, 1, period_blocks, cfg) }
    }

    /// The zone of `block`.
    #[inline]
    pub fn zone_of(&self, block: BlockNo) -> u64 {
        self.zone_idx(block) as u64
    }

    /// Blocks per zone with fixed-size zones; `None` with band zones, whose sizes differ (see
    /// [`Pore::zone_len`]).
    pub fn zone_blocks(&self) -> Option<u64> {
        match self.bands {
            None => Some(self.zone_blocks),
            Some(_) => None,
        }
    }

    /// Blocks of `zone`: the common zone size, or the band's length with band zones.
    #[inline]
    pub fn zone_len(&self, zone: u64) -> u64 {
        match &self.bands {
            None => self.zone_blocks,
            Some(m) => m.band_range(zone as u32).1,
        }
    }

    /// The period length in newly dirty blocks (resolved against the PB).
    pub fn period_blocks(&self) -> u64 {
        self.period
    }

    /// Blocks counted toward the current period so far.
    pub fn period_progress(&self) -> u64 {
        self.progress
    }

    /// The open-zone selection scheme.
    pub fn scheme(&self) -> PoreScheme {
        self.scheme
    }

    /// Region divisions so far (including early ones).
    pub fn divisions(&self) -> u64 {
        self.divisions
    }

    /// Whether dirty blocks of `zone` may be evicted now. Every zone is open before the first
    /// division.
    #[inline]
    pub fn is_open_zone(&self, zone: u64) -> bool {
        !self.divided || self.zones.get(zone as usize).is_some_and(|z| z.open)
    }

    /// The zones of the current Open Region, ascending (empty before the first division, when
    /// every zone counts as open).
    pub fn open_zones(&self) -> Vec<u64> {
        let mut v = self.open.clone();
        v.sort_unstable();
        v
    }

    /// Cached dirty blocks of `zone`, as the policy accounts them.
    pub fn zone_dirty(&self, zone: u64) -> u32 {
        self.zones.get(zone as usize).map_or(0, |z| z.dirty)
    }

    /// Number of blocks currently eligible as victims: the clean blocks and the dirty blocks of
    /// open zones (every cached block before the first division).
    pub fn evictable_len(&self) -> u32 {
        if self.divided {
            self.clean.len() + self.open_dirty as u32
        } else {
            self.clean.len() + self.counted as u32
        }
    }

    /// Checks the policy's structures against `table` in O(cache + zones): the clean list holds
    /// exactly the clean blocks and each zone's list exactly its dirty blocks, each in recency
    /// order; the per-zone statistics and the open zones' dirty count match. For tests; call it
    /// only when no block was marked clean behind the policy's back.
    pub fn validate(&self, table: &BlockTable) -> Result<(), PolicyError> {
        self.validate_structures(table).map_err(PolicyError::Inconsistent)
    }

    fn validate_structures(&self, table: &BlockTable) -> Result<(), String> {
        let in_order = |what: String, slots: &[Slot]| -> Result<(), String> {
            for w in slots.windows(2) {
                if table.meta(w[0]).last_access >= table.meta(w[1]).last_access {
                    return Err(format!("{what} out of recency order at slots {} {}", w[0], w[1]));
                }
            }
            Ok(())
        };
        let clean: Vec<Slot> = self.links.iter_back(&self.clean).collect();
        in_order("clean list".into(), &clean)?;
        let mut listed = clean.len();
        for &s in &clean {
            if table.meta(s).dirty || self.flags[s as usize] & COUNTED != 0 {
                return Err(format!("slot {s} in the clean list is dirty or counted"));
            }
        }
        let mut dirty = vec![0u32; self.zones.len()];
        let mut hits = vec![0u64; self.zones.len()];
        for s in table.used_slots() {
            let m = table.meta(s);
            if m.dirty {
                let z = self.zone_of(m.block) as usize;
                if z >= dirty.len() {
                    return Err(format!("zone {z} of dirty block {} not tracked", m.block));
                }
                dirty[z] += 1;
                hits[z] += m.hits as u64;
            }
        }
        let mut open_dirty = 0u64;
        for (z, zone) in self.zones.iter().enumerate() {
            let slots: Vec<Slot> = self.links.iter_back(&zone.list).collect();
            in_order(format!("zone {z}'s list"), &slots)?;
            for &s in &slots {
                let m = table.meta(s);
                if !m.dirty || self.zone_of(m.block) != z as u64 || self.flags[s as usize] & COUNTED == 0 {
                    return Err(format!("slot {s} (block {}) wrongly in zone {z}'s list", m.block));
                }
            }
            listed += slots.len();
            if zone.dirty != dirty[z] || zone.hit_sum != hits[z] || zone.list.len() != zone.dirty {
                return Err(format!(
                    "zone {z}: dirty {} (listed {}) hits {}, expected {} {}",
                    zone.dirty,
                    zone.list.len(),
                    zone.hit_sum,
                    dirty[z],
                    hits[z]
                ));
            }
            let member = zone.dirty > 0 && self.dirty_zones.get(zone.set_pos as usize) == Some(&(z as u64));
            if member != (zone.dirty > 0) {
                return Err(format!("zone {z}: dirty-zone set membership wrong"));
            }
            if zone.open {
                open_dirty += zone.dirty as u64;
            }
        }
        if listed != table.len() as usize {
            return Err(format!("lists hold {listed} slots, table {}", table.len()));
        }
        if self.divided && open_dirty != self.open_dirty {
            return Err(format!("open zones hold {open_dirty} dirty blocks, counted {}", self.open_dirty));
        }
        if self.dirty_zones.len() != dirty.iter().filter(|&&d| d > 0).count() {
            return Err("dirty-zone set has extra entries".into());
        }
        if self.divided && self.progress >= self.period {
            return Err(format!(
                "period progress {} reached {} without a division",
                self.progress, self.period
            ));
        }
        Ok(())
    }

    #[inline]
    fn zone_idx(&self, block: BlockNo) -> usize {
        match &self.bands {
            None => (block / self.zone_blocks) as usize,
            Some(m) => m.band_of(block) as usize,
        }
    }

    /// Accounts one more cached dirty block, `slot`, with `hits` accesses in zone `z`, at the
    /// front of the zone's list.
    #[inline]
    fn add_dirty(&mut self, table: &BlockTable, z: usize, slot: Slot, hits: u64) {
        if z >= self.zones.len() {
            self.zones.resize(z + 1, Zone::default());
        }
        let zone = &mut self.zones[z];
        zone.dirty += 1;
        zone.hit_sum += hits;
        self.links.push_front(&mut zone.list, slot);
        if zone.dirty == 1 {
            zone.set_pos = self.dirty_zones.len() as u32;
            self.dirty_zones.push(z as u64);
            if zone.open && self.divided {
                self.tails.push(Reverse((table.meta(slot).last_access, z as u64)));
            }
        }
        if zone.open {
            self.open_dirty += 1;
        }
        self.counted += 1;
    }

    /// Accounts one cached dirty block, `slot`, with `hits` accesses of zone `z` fewer and takes
    /// it off the zone's list.
    #[inline]
    fn sub_dirty(&mut self, z: usize, slot: Slot, hits: u64) {
        let zone = &mut self.zones[z];
        zone.dirty -= 1;
        zone.hit_sum = zone.hit_sum.saturating_sub(hits);
        self.links.remove(&mut zone.list, slot);
        if zone.open {
            self.open_dirty -= 1;
        }
        if zone.dirty == 0 {
            zone.hit_sum = 0;
            let pos = zone.set_pos as usize;
            self.dirty_zones.swap_remove(pos);
            if let Some(&moved) = self.dirty_zones.get(pos) {
                self.zones[moved as usize].set_pos = pos as u32;
            }
        }
        self.counted -= 1;
    }

    /// Last-period popularity: an access left `slot`'s block (zone `z`, tracked) dirty.
    #[inline]
    fn note_period(&mut self, slot: Slot, z: usize) {
        if let Some(seen) = self.seen.get_mut(slot as usize) {
            let zone = &mut self.zones[z];
            if zone.p_epoch != self.epoch {
                zone.p_epoch = self.epoch;
                zone.p_acc = 0;
                zone.p_blocks = 0;
            }
            zone.p_acc += 1;
            if *seen != self.epoch {
                *seen = self.epoch;
                zone.p_blocks = zone.p_blocks.saturating_add(1);
            }
        }
    }

    /// One more block toward the period; divides when the period is complete.
    #[inline]
    fn count_dirty(&mut self, table: &BlockTable) {
        self.progress += 1;
        if self.divided && self.progress >= self.period {
            self.divide(table);
        }
    }

    fn popularity_of(&self, zone: &Zone) -> Popularity {
        match self.popularity {
            PorePopularity::SinceInsert => Popularity { num: zone.hit_sum, den: zone.dirty.max(1) as u64 },
            PorePopularity::LastPeriod if zone.p_epoch == self.epoch && zone.p_blocks > 0 => {
                Popularity { num: zone.p_acc, den: zone.p_blocks as u64 }
            }
            PorePopularity::LastPeriod => Popularity { num: 0, den: 1 },
        }
    }

    /// Orders zones `a` and `b` by the scheme (the one to open first is `Less`), ties by zone.
    fn rank(&self, a: u64, b: u64) -> Ordering {
        let (za, zb) = (&self.zones[a as usize], &self.zones[b as usize]);
        // Each zone's own size (the same for every zone unless the zones are bands).
        let (sa, sb) = (self.zone_len(a), self.zone_len(b));
        let by_key = match self.scheme {
            // Descending dirty/size: dirty_b·size_a against dirty_a·size_b (u32·u64 fits u128).
            PoreScheme::Cf => cmp_scaled(zb.dirty as u128, sa, za.dirty as u128, sb),
            PoreScheme::Pf => {
                let (pa, pb) = (self.popularity_of(za), self.popularity_of(zb));
                (pa.num as u128 * pb.den as u128).cmp(&(pb.num as u128 * pa.den as u128))
            }
            PoreScheme::Bl => {
                // Ascending (num/den) / (dirty/size) = num·size / (den·dirty): compares
                // num_a·den_b·dirty_b·size_a with num_b·den_a·dirty_a·size_b. num < 2^64 and
                // den·dirty < 2^64, so num·den·dirty fits u128; the size factor is multiplied in
                // exactly (a 192-bit product) unless both sizes are equal (fixed-size zones),
                // when it is common to both sides and dropped.
                let (pa, pb) = (self.popularity_of(za), self.popularity_of(zb));
                let da = pa.den as u128 * za.dirty as u128;
                let db = pb.den as u128 * zb.dirty as u128;
                cmp_scaled(pa.num as u128 * db, sa, pb.num as u128 * da, sb)
            }
        };
        by_key.then(a.cmp(&b))
    }

    /// Starts a new period: chooses the Open Region and refills the heap of its zones' tails.
    fn divide(&mut self, table: &BlockTable) {
        if self.counted != table.dirty_len() as u64 {
            self.resync(table);
        }
        let mut cand = std::mem::take(&mut self.scratch);
        cand.clear();
        cand.extend_from_slice(&self.dirty_zones);
        cand.sort_unstable_by(|&a, &b| self.rank(a, b));
        for &z in &self.open {
            self.zones[z as usize].open = false;
        }
        self.open.clear();
        self.tails.clear();
        let mut sum = 0u64;
        for &z in &cand {
            if sum >= self.period {
                break;
            }
            let zone = &mut self.zones[z as usize];
            zone.open = true;
            sum += zone.dirty as u64;
            self.open.push(z);
            let tail = zone.list.back().expect("a zone with dirty blocks has a tail");
            self.tails.push(Reverse((table.meta(tail).last_access, z)));
        }
        self.open_dirty = sum;
        self.scratch = cand;
        self.divided = true;
        self.divisions += 1;
        self.epoch = self.epoch.wrapping_add(1).max(1);
        self.progress = 0;
    }

    /// Re-derives the dirty accounting from the table after [`crate::Cache::mark_clean`]: every
    /// counted block now clean leaves its zone's list for the clean list, at its recency
    /// position.
    fn resync(&mut self, table: &BlockTable) {
        let mut moved: Vec<Slot> = Vec::new();
        for k in 0..self.dirty_zones.len() {
            let z = self.dirty_zones[k] as usize;
            moved.extend(self.links.iter_back(&self.zones[z].list).filter(|&s| !table.meta(s).dirty));
        }
        if moved.is_empty() {
            return;
        }
        for &s in &moved {
            let m = table.meta(s);
            self.flags[s as usize] &= !COUNTED;
            let z = self.zone_idx(m.block);
            self.sub_dirty(z, s, m.hits as u64);
        }
        moved.extend(self.links.iter_back(&self.clean));
        moved.sort_unstable_by_key(|&s| table.meta(s).last_access);
        self.clean = List::default();
        for &s in &moved {
            self.links.push_front(&mut self.clean, s);
        }
    }

    /// The open zone whose list's tail is the oldest, and that tail's last access.
    fn oldest_open_tail(&mut self, table: &BlockTable) -> Option<(u64, Slot)> {
        let zones = &self.zones;
        let fresh = super::fresh_min(&mut self.tails, |z| {
            let zone = &zones[z as usize];
            let tail = zone.list.back().filter(|_| zone.open)?;
            Some((table.meta(tail).last_access, tail))
        });
        fresh.map(|(now, _, tail)| (now, tail))
    }
}

/// Compares `x·s` with `y·t` exactly (`s, t >= 1`), as 192-bit products; when `s == t` the
/// common factor is dropped and `x` is compared with `y`.
#[inline]
fn cmp_scaled(x: u128, s: u64, y: u128, t: u64) -> Ordering {
    if s == t {
        return x.cmp(&y);
    }
    mul_wide(x, s).cmp(&mul_wide(y, t))
}

/// `x·s` as (high 64 bits, low 128 bits) of the 192-bit product.
#[inline]
fn mul_wide(x: u128, s: u64) -> (u64, u128) {
    // x·s = hi·2^64 + lo, hi < 2^128; the low 128 bits of the sum, and its carry into the top
    // 64 bits beside hi's own top half.
    let lo = (x as u64 as u128) * s as u128;
    let hi = (x >> 64) * s as u128;
    let (low, carry) = lo.overflowing_add(hi << 64);
    ((hi >> 64) as u64 + carry as u64, low)
}

impl Policy for Pore {
    fn name(&self) -> &'static str {
        "pore"
    }

    fn on_insert(&mut self, table: &BlockTable, slot: Slot) {
        let m = *table.meta(slot);
        let z = self.zone_idx(m.block);
        if let Some(seen) = self.seen.get_mut(slot as usize) {
            *seen = 0;
        }
        if m.dirty {
            self.flags[slot as usize] = COUNTED;
            self.add_dirty(table, z, slot, m.hits as u64);
            self.note_period(slot, z);
        } else {
            self.flags[slot as usize] = 0;
            self.links.push_front(&mut self.clean, slot);
        }
        if !self.divided {
            if m.dirty {
                self.progress += 1;
            }
            if table.is_full() {
                self.divide(table);
            }
        } else if m.dirty {
            self.count_dirty(table);
        }
    }

    fn on_hit(&mut self, table: &BlockTable, slot: Slot, became_dirty: bool) {
        let m = *table.meta(slot);
        let z = self.zone_idx(m.block);
        if self.flags[slot as usize] & COUNTED != 0 {
            if m.dirty {
                let zone = &mut self.zones[z];
                zone.hit_sum += 1;
                self.links.move_to_front(&mut zone.list, slot);
            } else {
                // Marked clean behind the policy's back; its count was hits − 1 before this access.
                self.flags[slot as usize] = 0;
                self.sub_dirty(z, slot, m.hits.saturating_sub(1) as u64);
                self.links.push_front(&mut self.clean, slot);
            }
        } else if m.dirty {
            self.flags[slot as usize] = COUNTED;
            self.links.remove(&mut self.clean, slot);
            self.add_dirty(table, z, slot, m.hits as u64);
        } else {
            self.links.move_to_front(&mut self.clean, slot);
        }
        if m.dirty {
            self.note_period(slot, z);
        }
        if became_dirty && self.counts == PoreCount::NewlyDirty {
            if self.divided {
                self.count_dirty(table);
            } else {
                self.progress += 1;
            }
        }
    }

    fn select_victims(&mut self, table: &BlockTable, _incoming: BlockNo, victims: &mut Vec<Slot>) {
        if !self.divided {
            self.divide(table);
        } else if self.counted != table.dirty_len() as u64 {
            self.resync(table);
        }
        if self.clean.is_empty() && self.open_dirty == 0 {
            // Every cached block is a forbidden dirty block: open a new region now.
            self.divide(table);
        }
        let clean = self.clean.back().map(|s| (table.meta(s).last_access, s));
        let victim = match (clean, self.oldest_open_tail(table)) {
            (Some(c), Some(d)) => c.min(d).1,
            (Some((_, s)), None) | (None, Some((_, s))) => s,
            (None, None) => panic!("PORE: a full cache always has an evictable block after a division"),
        };
        victims.push(victim);
    }

    fn on_remove(&mut self, table: &BlockTable, slot: Slot) {
        let m = table.meta(slot);
        if self.flags[slot as usize] & COUNTED != 0 {
            let z = self.zone_idx(m.block);
            self.sub_dirty(z, slot, m.hits as u64);
        } else {
            self.links.remove(&mut self.clean, slot);
        }
        self.flags[slot as usize] = 0;
    }

    /// The tails of the clean list and of the open zone at the top of the heap (without reading
    /// their metas, which is what the look-ahead prefetches).
    fn peek_victims(&self, _: &BlockTable, ahead: &mut [Slot; 2]) -> usize {
        let dirty = self.tails.peek().and_then(|&Reverse((_, z))| {
            let zone = &self.zones[z as usize];
            zone.open.then(|| zone.list.back()).flatten()
        });
        let (first, second) = match (dirty, self.clean.back()) {
            (Some(d), Some(c)) => (d, Some(c)),
            (Some(s), None) | (None, Some(s)) => (s, self.links.prev(s)),
            (None, None) => return 0,
        };
        ahead[0] = first;
        let Some(second) = second else { return 1 };
        ahead[1] = second;
        self.links.prefetch(second);
        2
    }

    fn heap_bytes(&self) -> usize {
        self.links.heap_bytes()
            + self.flags.capacity()
            + self.seen.capacity() * std::mem::size_of::<u32>()
            + self.zones.capacity() * std::mem::size_of::<Zone>()
            + self.tails.capacity() * std::mem::size_of::<Reverse<(u64, u64)>>()
            + (self.dirty_zones.capacity() + self.open.capacity() + self.scratch.capacity())
                * std::mem::size_of::<u64>()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The 192-bit comparison against u128 arithmetic where that fits, and at the extremes.
    #[test]
    fn scaled_comparison_is_exact() {
        let small = [0u128, 1, 2, 3, 7, 1 << 40, u64::MAX as u128];
        let sizes = [1u64, 2, 3, 4, 8, 5120, 1 << 32];
        for &x in &small {
            for &y in &small {
                for &s in &sizes {
                    for &t in &sizes {
                        assert_eq!(cmp_scaled(x, s, y, t), (x * s as u128).cmp(&(y * t as u128)));
                    }
                }
            }
        }
        let max = u128::MAX;
        // (2^128 − 1)(2^64 − 1) = (2^64 − 2)·2^128 + 2^128 − 2^64 + 1.
        assert_eq!(mul_wide(max, u64::MAX), (u64::MAX - 1, 0u128.wrapping_sub(u64::MAX as u128)));
        assert_eq!(mul_wide(1 << 64, 1 << 63), (0, 1 << 127));
        assert_eq!(mul_wide(1 << 127, 2), (1, 0));
        assert_eq!(cmp_scaled(max, 2, max, 1), Ordering::Greater);
        assert_eq!(cmp_scaled(max, 3, max - 1, 3), Ordering::Greater);
        assert_eq!(cmp_scaled(max / 2, 4, max, 2), Ordering::Less);
        assert_eq!(cmp_scaled(1 << 100, 1 << 40, 1 << 120, 1 << 20), Ordering::Equal);
    }
}
