//! The replacement-policy interface.

use crate::{BlockTable, Slot};
use shingled_core::{BandMap, BlockNo};
use std::sync::Arc;

/// What a policy may know about its surroundings when it is built.
#[derive(Clone, Debug, Default)]
pub struct PolicyContext {
    /// Cache capacity in 4 KiB blocks.
    pub capacity_blocks: u32,
    /// The drive's true band layout, when the drive has bands and the experiment lets policies
    /// know it (LRU-band and MOST do; PORE and SAC deliberately assume their own zone size
    /// instead, except PORE with `zones = bands`, our extension).
    pub bands: Option<Arc<BandMap>>,
    /// The drive's persistent-buffer capacity in blocks, when known (PORE's default period and
    /// SAC's default cycle length).
    pub pb_blocks: Option<u64>,
    /// Seed for any random choice a policy makes.
    pub seed: u64,
    /// Drive I/O costs that cost-aware policies (SAC's Clean/Dirty Comparator) weigh. The
    /// simulator fits them on the drive model; [`SmrCosts::PAPER`] holds the SAC paper's.
    pub costs: SmrCosts,
    /// The blocks' span, when known (every block number, or nearly every, below it: the
    /// trace's statistics or the device's size): structures keyed by block number may then be
    /// direct arrays ([`crate::BlockTable::dense_pays`]). Blocks beyond it are still served.
    pub block_span: Option<u64>,
}

/// The drive costs a cost-aware policy uses to compare evicting clean and dirty blocks
/// (SAC §4.4): a random read, and a band write-back (RMW) as a linear function of the number of
/// the band's blocks written back, `R(x) = rmw_fixed_ms + rmw_per_block_ms · x`.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct SmrCosts {
    /// Mean time of one random 4 KiB read from the drive, ms (`L_read`).
    pub read_ms: f64,
    /// Fixed part of writing back one band, ms.
    pub rmw_fixed_ms: f64,
    /// Per written-back block part of writing back one band, ms.
    pub rmw_per_block_ms: f64,
}

impl SmrCosts {
    /// The SAC paper's figures for its ST8000AS0002 drive: R(x) = 0.728x + 436 ms (§4.4,
    /// Fig. 10; the artifact's `sac.c` uses 435.833 ms + 0.728 ms per block) and 14 ms per
    /// random read (the artifact's constant).
    pub const PAPER: SmrCosts = SmrCosts { read_ms: 14.0, rmw_fixed_ms: 436.0, rmw_per_block_ms: 0.728 };

    /// `R(x)` in ms for `x` blocks of one band.
    #[inline]
    pub fn rmw_ms(&self, blocks: u64) -> f64 {
        self.rmw_fixed_ms + self.rmw_per_block_ms * blocks as f64
    }
}

impl Default for SmrCosts {
    fn default() -> Self {
        SmrCosts::PAPER
    }
}

/// An error building a policy from its configuration.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum PolicyError {
    /// A configuration field is out of range.
    #[error("policy {policy}: field {field}: {reason} (value {value})")]
    Field {
        /// Policy name.
        policy: &'static str,
        /// Field name.
        field: &'static str,
        /// Offending value.
        value: String,
        /// What is allowed.
        reason: String,
    },
    /// The policy needs something the experiment does not provide.
    #[error("policy {policy}: {reason}")]
    Unsupported {
        /// Policy name.
        policy: &'static str,
        /// What is missing.
        reason: String,
    },
    /// A policy specification (`name`, an alias, or `name:field=value,…`) that does not parse.
    #[error("{0}")]
    Spec(String),
    /// A policy's structures disagree with the block table: what the slow self-checks for
    /// tests (`Pore::validate`, `Sac::check`) found.
    #[error("{0}")]
    Inconsistent(String),
}

/// A cache replacement policy: decides which cached blocks leave when room is needed.
///
/// The [`crate::Cache`] owns the [`BlockTable`] and calls the policy after every change, so a
/// policy only keeps its own ordering structures (usually [`crate::Links`] lists indexed by slot).
/// Calls arrive in this order and under these promises:
///
/// - [`Policy::on_insert`] right after a block entered `slot` (meta already set: `hits == 1`,
///   `dirty` as inserted).
/// - [`Policy::on_hit`] after each access to a cached block (meta already updated: `hits`
///   incremented, `last_access` set, `dirty` set when a write made it dirty — then
///   `became_dirty` is `true`).
/// - [`Policy::select_victims`] when the cache is full and block `incoming` (not cached) must
///   enter. The policy pushes one or more distinct used slots to `victims` (a batch, e.g. a
///   whole band). It may reorganise its structures for other blocks while searching (e.g.
///   S3-FIFO promotes, PORE starts a new period) but must keep the victims in them; the cache
///   then calls [`Policy::on_remove`] for each victim, then [`Policy::on_insert`] for `incoming`.
///   Clean victims are dropped; dirty ones are written back by the caller.
/// - [`Policy::on_remove`] just before `slot` is freed (after selection, or when the caller
///   invalidates a block); the meta is still readable.
/// - [`Policy::on_clean`] just before the caller marks a dirty cached block clean (a cleaner
///   wrote it back without evicting it).
pub trait Policy: Send + IntoAny {
    /// Short name as used in reports (`lru`, `pore-bl` …).
    fn name(&self) -> &'static str;
    /// A block entered `slot`.
    fn on_insert(&mut self, table: &BlockTable, slot: Slot);
    /// A cached block in `slot` was accessed.
    fn on_hit(&mut self, table: &BlockTable, slot: Slot, became_dirty: bool);
    /// Chooses at least one victim among the used slots (the cache is full; `incoming` is the
    /// block about to be inserted).
    fn select_victims(&mut self, table: &BlockTable, incoming: BlockNo, victims: &mut Vec<Slot>);
    /// The one victim of this eviction, for a policy that evicts exactly one block here and can
    /// name it without the victims vector: the slot [`Policy::select_victims`] would choose, with
    /// the same effects on the policy's state. The cache then reuses the slot for `incoming` in
    /// place. `None`: the cache asks [`Policy::select_victims`]. Default: `None`.
    #[inline]
    fn single_victim(&mut self, _table: &BlockTable, _incoming: BlockNo) -> Option<Slot> {
        None
    }
    /// The victim [`Policy::single_victim`] named, `slot`, is about to take the incoming block in
    /// place: a policy whose [`Policy::on_remove`] of it and [`Policy::on_insert`] of the new
    /// block depend on neither block may do both here, in one step, and return `true` (the
    /// cache then calls neither). Default: `false` (the cache calls `on_remove` now and
    /// `on_insert` once the table holds the new block).
    #[inline]
    fn replace_victim(&mut self, table: &BlockTable, slot: Slot) -> bool {
        let _ = (table, slot);
        false
    }
    /// `slot` is about to be freed.
    fn on_remove(&mut self, table: &BlockTable, slot: Slot);
    /// The dirty block in `slot` is about to be marked clean by the caller, who wrote it to the
    /// drive without evicting it ([`crate::Cache::mark_clean`]: a cleaner); the meta still says
    /// dirty. A policy that counts dirty blocks updates here; default: nothing.
    fn on_clean(&mut self, table: &BlockTable, slot: Slot) {
        let _ = (table, slot);
    }
    /// The slots it would choose as its next victims, most imminent first, written to `ahead`
    /// (the number written is returned), after prefetching its own state for them
    /// ([`shingled_core::mem::prefetch`]). A hint for look-ahead in caches far larger than
    /// the CPU's (the next victim's table entries are touched before it is evicted); it must
    /// change nothing. Default: none.
    fn peek_victims(&self, table: &BlockTable, ahead: &mut [Slot; 2]) -> usize {
        let _ = (table, ahead);
        0
    }
    /// Prefetches the line of the policy's own state a miss on `block` will read first (ARC's
    /// and S3-FIFO's ghost lookup), for look-ahead over requests about to be replayed; it must
    /// change nothing. Default: nothing.
    fn prefetch_lookup(&self, block: BlockNo) {
        let _ = block;
    }
    /// Prefetches the lines of the policy's own state a hit on or a removal of `slot` will read
    /// first (a list node, a frequency byte), for look-ahead over requests about to be replayed
    /// and over a batch of victims; it must change nothing. Default: nothing.
    fn prefetch_slot(&self, slot: Slot) {
        let _ = slot;
    }
    /// Heap bytes the policy's own structures use (for the memory-per-block figure).
    fn heap_bytes(&self) -> usize {
        0
    }
    /// What the trace holds for the block about to be accessed: called before every block the
    /// cache is asked about, hit or miss, read or write, when the replay knows the trace's
    /// future (only for a policy whose builder says [`PolicyBuilder::needs_future`]; the
    /// offline policies). Default: nothing.
    fn foresee(&mut self, f: &Foresight) {
        let _ = f;
    }
}

/// The future of one block access, from a pass over the whole trace before the replay: what an
/// offline policy (Belady's MIN, the band-level oracle) knows and an online one cannot.
///
/// Times are positions in the sequence of block accesses the cache is asked about (every 4 KiB
/// block of every request the mode keeps, in trace order, counted from 0); [`Foresight::NEVER`]
/// when there is none.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Foresight {
    /// This access's position.
    pub now: u64,
    /// The block accessed.
    pub block: BlockNo,
    /// Whether the access writes it.
    pub write: bool,
    /// When the block is next of use to a cache: its next access, or [`Foresight::NEVER`] when
    /// there is none or when the mode drops a cached copy at that access (a write in read-only
    /// mode invalidates the block, so keeping it until then gains nothing).
    pub next_use: u64,
    /// When any block of this block's band is next written (after `now`), or
    /// [`Foresight::NEVER`] (also when the drive has no bands).
    pub band_next_write: u64,
}

impl Foresight {
    /// "Never again".
    pub const NEVER: u64 = u64::MAX;
}

/// What lets [`crate::Cache`] recognise the policies it serves without a virtual call (LRU,
/// ARC, S3-FIFO, whose per-request work is small enough that the calls would be a large part
/// of it): every `'static` policy has it through the blanket implementation.
pub trait IntoAny {
    /// The policy as `Any`, to ask its type.
    fn as_any(&self) -> &dyn std::any::Any;
    /// The boxed policy as `Any`, to take it out as its type.
    fn into_any(self: Box<Self>) -> Box<dyn std::any::Any>;
}

impl<T: std::any::Any> IntoAny for T {
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
    fn into_any(self: Box<Self>) -> Box<dyn std::any::Any> {
        self
    }
}

/// Builds a policy from its configuration.
pub trait PolicyBuilder {
    /// Validates the configuration against the context and builds the policy.
    fn build(&self, ctx: &PolicyContext) -> Result<Box<dyn Policy>, PolicyError>;

    /// Whether the policy reads [`PolicyContext::costs`] (then the simulator fits them on the
    /// drive model before building it).
    fn needs_costs(&self) -> bool {
        false
    }

    /// Whether the policy is offline: it needs the trace's future ([`Policy::foresee`] before
    /// every block), which only a replay of a whole trace known in advance can give (the
    /// simulator; not a block device serving live requests, not a sampled curve).
    fn needs_future(&self) -> bool {
        false
    }
}
