//! Band-level MIN: an offline oracle policy for the DM-SMR drive's RMWs.

use crate::{BlockTable, Foresight, Policy, PolicyBuilder, PolicyContext, PolicyError, Slot};
use rustc_hash::FxHashMap;
use serde::{Deserialize, Serialize};
use shingled_core::{BandMap, BlockNo};
use std::collections::BTreeSet;
use std::sync::Arc;

/// Band-level MIN's one setting. It is offline (the simulator gives it the trace's future)
/// and needs the drive's true band map.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BandMinConfig {
    /// The distance (in block accesses) to a band's next write beyond which it counts the same
    /// (a band never written again counts as this far). Default (absent): 128, the best of 60,
    /// 120, 240 and 800 on `synth:wdev` and `synth:mds` at scale 0.2 (write-only and
    /// read-write, PORE's set-up): a tuned constant, not derived. Bounds: at least 1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub horizon: Option<u64>,
}

impl PolicyBuilder for BandMinConfig {
    fn build(&self, ctx: &PolicyContext) -> Result<Box<dyn Policy>, PolicyError> {
        let bands = ctx.bands.clone().ok_or_else(|| PolicyError::Unsupported {
            policy: "band-min",
            reason: "needs the drive's band map; use a dm-smr drive".into(),
        })?;
        if self.horizon == Some(0) {
            return Err(PolicyError::Field {
                policy: "band-min",
                field: "horizon",
                value: "0".into(),
                reason: "must be at least 1 access".into(),
            });
        }
        let horizon = self.horizon.unwrap_or(DEFAULT_HORIZON);
        Ok(Box::new(BandMin::new(ctx.capacity_blocks, bands, horizon)))
    }
    fn needs_future(&self) -> bool {
        true
    }
}

/// How many bands of each order (most dirty blocks; next written farthest away) are scored.
const SCAN: usize = 64;
/// [`BandMinConfig::horizon`]'s default.
const DEFAULT_HORIZON: u64 = 128;

/// Band-level MIN, an oracle *policy* (a heuristic with the future known, not an optimum).
///
/// - Clean blocks go first, the one next used farthest in the future first (Belady's MIN among
///   clean blocks): a clean eviction costs the drive nothing.
/// - With none left, every cached dirty block of one band is written back together, so one RMW
///   merges them all (as MOST does), choosing the band by its dirty blocks times the accesses
///   until its next write, capped at a horizon (128 by default): a large batch that is not
///   rewritten soon (Belady's "farthest next use" weighed by what one RMW merges).
///
/// What it does not do, and an optimum might: evict a dirty block while clean ones remain,
/// write back part of a band, or time write-backs to the drive's FIFO cleaning.
#[derive(Debug)]
pub struct BandMin {
    bands: Arc<BandMap>,
    horizon: u64,
    current: Foresight,
    /// Per slot: the block's band and its next use (the key of a clean block in `clean`).
    band: Vec<u32>,
    next_use: Vec<u64>,
    /// `(next use, slot)` of every clean cached block; the last is the clean victim.
    clean: BTreeSet<(u64, Slot)>,
    /// Per band with cached dirty blocks: their slots.
    dirty: FxHashMap<u32, Vec<Slot>>,
    /// Per band written so far: when it is next written ([`Foresight::band_next_write`] of its
    /// latest write).
    band_next: FxHashMap<u32, u64>,
    /// Per band in `dirty`: its keys `(next write, dirty blocks)`.
    band_key: FxHashMap<u32, (u64, u32)>,
    /// `(next write, band)` and `(dirty blocks, band)` of every band with cached dirty blocks.
    by_next: BTreeSet<(u64, u32)>,
    by_count: BTreeSet<(u32, u32)>,
}

impl BandMin {
    /// A band-level MIN cache of `capacity` slots over `bands`, distances capped at `horizon`
    /// accesses.
    pub fn new(capacity: u32, bands: Arc<BandMap>, horizon: u64) -> Self {
        BandMin {
            bands,
            horizon,
            current: Foresight::default(),
            band: vec![0; capacity as usize],
            next_use: vec![Foresight::NEVER; capacity as usize],
            clean: BTreeSet::new(),
            dirty: FxHashMap::default(),
            band_next: FxHashMap::default(),
            band_key: FxHashMap::default(),
            by_next: BTreeSet::new(),
            by_count: BTreeSet::new(),
        }
    }

    fn foreseen_use(&self, block: BlockNo) -> u64 {
        if block == self.current.block {
            self.current.next_use
        } else {
            Foresight::NEVER
        }
    }

    /// Puts `band` in the two orders under its present keys (or out, with no dirty blocks).
    fn rekey(&mut self, band: u32) {
        if let Some((next, n)) = self.band_key.remove(&band) {
            self.by_next.remove(&(next, band));
            self.by_count.remove(&(n, band));
        }
        let n = self.dirty.get(&band).map_or(0, |v| v.len() as u32);
        if n > 0 {
            let next = self.band_next.get(&band).copied().unwrap_or(Foresight::NEVER);
            self.band_key.insert(band, (next, n));
            self.by_next.insert((next, band));
            self.by_count.insert((n, band));
        }
    }

    fn add_dirty(&mut self, slot: Slot) {
        let band = self.band[slot as usize];
        self.dirty.entry(band).or_default().push(slot);
        self.rekey(band);
    }

    fn remove_dirty(&mut self, slot: Slot) {
        let band = self.band[slot as usize];
        if let Some(v) = self.dirty.get_mut(&band) {
            if let Some(i) = v.iter().position(|&s| s == slot) {
                v.swap_remove(i);
            }
            if v.is_empty() {
                self.dirty.remove(&band);
            }
        }
        self.rekey(band);
    }

    /// The band whose dirty blocks go: the largest `dirty blocks × accesses until its next
    /// write` (the distance capped at the horizon, "never" counting as the horizon), among the
    /// 64 bands with the most dirty blocks and the 64 next written farthest away; ties to the
    /// higher band number.
    fn dirty_victim(&self) -> Option<u32> {
        let now = self.current.now;
        let cap = self.horizon;
        let score = |b: u32| {
            let (next, n) = self.band_key.get(&b).copied().unwrap_or((0, 0));
            n as u128 * next.saturating_sub(now).min(cap) as u128
        };
        let by_count = self.by_count.iter().rev().take(SCAN).map(|&(_, b)| b);
        let by_next = self.by_next.iter().rev().take(SCAN).map(|&(_, b)| b);
        by_count.chain(by_next).max_by_key(|&b| (score(b), b))
    }
}

impl Policy for BandMin {
    fn name(&self) -> &'static str {
        "band-min"
    }
    fn on_insert(&mut self, t: &BlockTable, slot: Slot) {
        let m = t.meta(slot);
        self.band[slot as usize] = self.bands.band_of(m.block);
        self.next_use[slot as usize] = self.foreseen_use(m.block);
        if m.dirty {
            self.add_dirty(slot);
        } else {
            self.clean.insert((self.next_use[slot as usize], slot));
        }
    }
    fn on_hit(&mut self, t: &BlockTable, slot: Slot, became_dirty: bool) {
        let m = t.meta(slot);
        let old = self.next_use[slot as usize];
        self.next_use[slot as usize] = self.foreseen_use(m.block);
        if became_dirty {
            self.clean.remove(&(old, slot));
            self.add_dirty(slot);
        } else if !m.dirty {
            self.clean.remove(&(old, slot));
            self.clean.insert((self.next_use[slot as usize], slot));
        }
    }
    fn select_victims(&mut self, t: &BlockTable, _incoming: BlockNo, victims: &mut Vec<Slot>) {
        if let Some(&(_, slot)) = self.clean.last() {
            victims.push(slot);
            return;
        }
        if let Some(band) = self.dirty_victim() {
            let start = victims.len();
            victims.extend(self.dirty.get(&band).into_iter().flatten().copied());
            t.sort_by_block(&mut victims[start..]);
        }
    }
    fn on_remove(&mut self, t: &BlockTable, slot: Slot) {
        if t.meta(slot).dirty {
            self.remove_dirty(slot);
        } else {
            self.clean.remove(&(self.next_use[slot as usize], slot));
        }
    }
    fn on_clean(&mut self, _: &BlockTable, slot: Slot) {
        self.remove_dirty(slot);
        self.clean.insert((self.next_use[slot as usize], slot));
    }
    fn foresee(&mut self, f: &Foresight) {
        self.current = *f;
        if f.write {
            let band = self.bands.band_of(f.block);
            self.band_next.insert(band, f.band_next_write);
            if self.dirty.contains_key(&band) {
                self.rekey(band);
            }
        }
    }
    fn heap_bytes(&self) -> usize {
        self.band.capacity() * 4
            + self.next_use.capacity() * 8
            + self.clean.len() * 24
            + self.dirty.len() * 64
    }
}
