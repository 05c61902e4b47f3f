//! MOST+CDC (SAC paper §6.3, Table 5): MOST manages the dirty blocks, LRU the clean ones, and
//! SAC's Clean/Dirty Comparator balances the two.
//!
//! Built on the SAC machinery ([`super::sac`]): a cycle has exactly one target band, the band
//! with the most cached dirty blocks (TBS's `ad` strategy, no ARS ranking), and no cooldown
//! (MOST knows nothing of the PB). The target band is written back from its LRU tail `batch`
//! blocks at a time until it holds no dirty block (MOST evicts "all the cached blocks located in
//! this band", §2.2); then the next band is chosen.
//!
//! The clean-or-dirty choice is CDC's cost model by default (§6.3: "the Clean/Dirty Comparator
//! (CDC) model of SAC are utilized to balance"), pricing the target band's write-back with
//! `R(x)` and its cold blocks (Eq. 2–5). The SAC authors' `MOST_CDC` code does something else,
//! available as `comparator = "recency"`: per 64-block batch it evicts whichever is older, the
//! clean LRU tail or the target band's LRU tail (`most_cdc.c`), and it also ends a band's cycle
//! after `Cycle_Length` (= PB) write-backs, which `cycle_length = "1pb"` reproduces. (That code
//! segfaults in read/write mode when no open zone has dirty blocks; this one starts the next
//! cycle instead.)

use super::sac::{check_common, Comparator, CostGuard, CycleLength, Params, Sac, Tbs};
use crate::{BlockTable, Policy, PolicyBuilder, PolicyContext, PolicyError, Slot};
use serde::{Deserialize, Serialize};
use shingled_core::{BlockNo, ByteSize};

/// MOST+CDC's configuration (policy `most-cdc`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct MostCdcConfig {
    /// Assumed band size (as SAC, §5.2). Default 20.48 MB = 5000 blocks; at least 4 KiB, rounded
    /// down to whole blocks.
    pub band_size: ByteSize,
    /// Dirty or clean victims per eviction. Default 64 (the artifact); 1..=4096.
    pub batch: u32,
    /// `cost` (default: CDC's cost model, §4.4) or `recency` (the artifact's `MOST_CDC` rule:
    /// per batch, the older LRU tail of the clean list and the target band goes).
    pub comparator: Comparator,
    /// End a band's cycle after this many write-backs even if it still holds dirty blocks
    /// (the artifact's `MOST_CDC` uses `1pb`). Default none: the band is drained, as MOST does.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cycle_length: Option<CycleLength>,
    /// CDC's popularity window as a fraction of the cache capacity (Eq. 1's P(x)). Default 0.8;
    /// (0, 4].
    pub hot_window: f64,
    /// Clean blocks CDC considers from the clean LRU tail. Default 100,000; at least 1.
    pub clean_scan: u64,
    /// Clean evictions a clean decision lasts (capped by the clean blocks cached when it is
    /// taken). Default 100,000; at least 1.
    pub clean_phase: u64,
    /// Eq. 2's guard against zero ARS: `max1` (default) or `plus1` (the SAC artifact).
    pub cost_guard: CostGuard,
}

impl Default for MostCdcConfig {
    fn default() -> Self {
        MostCdcConfig {
            band_size: super::sac::DEFAULT_BAND_SIZE,
            batch: 64,
            comparator: Comparator::Cost,
            cycle_length: None,
            hot_window: 0.8,
            clean_scan: 100_000,
            clean_phase: 100_000,
            cost_guard: CostGuard::Max1,
        }
    }
}

impl MostCdcConfig {
    /// Validates the configuration and builds the concrete policy (for inspection).
    pub fn build_most_cdc(&self, ctx: &PolicyContext) -> Result<MostCdc, PolicyError> {
        const P: &str = "most-cdc";
        let (band_blocks, window) = check_common(
            P,
            ctx,
            self.band_size,
            self.batch,
            self.hot_window,
            self.clean_scan,
            self.clean_phase,
        )?;
        let cap = match &self.cycle_length {
            None => None,
            Some(c) => Some(c.resolve(ctx, P, "cycle_length")?),
        };
        let params = Params {
            name: P,
            band_blocks,
            cycle_length: cap.unwrap_or(band_blocks),
            max_targets: 1,
            cycle_cap: cap,
            cooldown: 0,
            batch: self.batch,
            hot_window: window,
            tbs: Tbs::Ad,
            comparator: self.comparator,
            clean_scan: self.clean_scan,
            clean_phase: self.clean_phase,
            guard: self.cost_guard,
            costs: ctx.costs,
        };
        Ok(MostCdc { inner: Sac::with_params(ctx.capacity_blocks, params) })
    }
}

impl PolicyBuilder for MostCdcConfig {
    fn build(&self, ctx: &PolicyContext) -> Result<Box<dyn Policy>, PolicyError> {
        Ok(Box::new(self.build_most_cdc(ctx)?))
    }
    /// The cost comparator weighs the drive's read and RMW costs.
    fn needs_costs(&self) -> bool {
        self.comparator == Comparator::Cost
    }
}

/// MOST+CDC (SAC paper §6.3, Table 5): the dirty blocks are managed by MOST (Ma et al. 2016,
/// SAC §2.2 Fig. 4: write back the band holding the most cached dirty blocks), the clean blocks
/// by LRU, and SAC's CDC (§4.4) decides which side is evicted. See the
/// [module documentation](self) for the artifact's variant.
#[derive(Debug)]
pub struct MostCdc {
    inner: Sac,
}

impl MostCdc {
    /// The SAC machinery underneath, for inspection (`target_bands`, `last_decision` …; one
    /// target per cycle).
    pub fn machinery(&self) -> &Sac {
        &self.inner
    }
    /// Mutable access to the machinery (e.g. [`Sac::record_cycles`]).
    pub fn machinery_mut(&mut self) -> &mut Sac {
        &mut self.inner
    }
}

impl Policy for MostCdc {
    fn name(&self) -> &'static str {
        self.inner.name()
    }
    #[inline]
    fn on_insert(&mut self, table: &BlockTable, slot: Slot) {
        self.inner.on_insert(table, slot)
    }
    #[inline]
    fn on_hit(&mut self, table: &BlockTable, slot: Slot, became_dirty: bool) {
        self.inner.on_hit(table, slot, became_dirty)
    }
    fn select_victims(&mut self, table: &BlockTable, incoming: BlockNo, victims: &mut Vec<Slot>) {
        self.inner.select_victims(table, incoming, victims)
    }
    #[inline]
    fn on_remove(&mut self, table: &BlockTable, slot: Slot) {
        self.inner.on_remove(table, slot)
    }
    fn on_clean(&mut self, table: &BlockTable, slot: Slot) {
        self.inner.on_clean(table, slot)
    }
    fn heap_bytes(&self) -> usize {
        self.inner.heap_bytes()
    }
}
