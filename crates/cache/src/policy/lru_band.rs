//! LRU-band: LRU that evicts a whole band at a time.

use crate::{BlockTable, Links, List, Policy, PolicyBuilder, PolicyContext, PolicyError, Slot};
use serde::{Deserialize, Serialize};
use shingled_core::{BandMap, BlockNo};
use std::sync::Arc;

/// LRU-band has nothing to configure: it needs the drive's true band map, which the simulator
/// passes when the drive has bands.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LruBandConfig {}

impl PolicyBuilder for LruBandConfig {
    fn build(&self, ctx: &PolicyContext) -> Result<Box<dyn Policy>, PolicyError> {
        let bands = ctx.bands.clone().ok_or_else(|| PolicyError::Unsupported {
            policy: "lru-band",
            reason: "needs the drive's band map; use a dm-smr drive".into(),
        })?;
        Ok(Box::new(LruBand::new(ctx.capacity_blocks, bands)))
    }
}

/// LRU-band (PORE §V-B, the authors' "intuitive optimized cache strategy based on LRU"): keeps
/// one LRU queue of all blocks; when the least recently used block must go, every cached block
/// of the same SMR band goes with it, clean and dirty, so the dirty ones reach the drive's
/// persistent buffer together and one RMW cleans them. It knows the exact band layout (the
/// drive's [`BandMap`]), which PORE does not.
///
/// Victims of one eviction are returned in block order, so contiguous blocks reach the drive as
/// one I/O. Not for drives without bands (it refuses to build), and it evicts hot blocks that
/// merely share a band with a cold one (PORE Fig. 12: lower hit ratios than LRU on some traces).
#[derive(Debug)]
pub struct LruBand {
    bands: Arc<BandMap>,
    global: Links,
    queue: List,
    by_band: Links,
    band_lists: Vec<List>,
}

impl LruBand {
    /// An LRU-band cache of `capacity` slots over `bands`.
    pub fn new(capacity: u32, bands: Arc<BandMap>) -> Self {
        let n = bands.len();
        LruBand {
            bands,
            global: Links::with_capacity(capacity as usize),
            queue: List::default(),
            by_band: Links::with_capacity(capacity as usize),
            band_lists: vec![List::default(); n + 1],
        }
    }

    #[inline]
    fn band(&self, block: BlockNo) -> usize {
        (self.bands.band_of(block) as usize).min(self.band_lists.len() - 1)
    }
}

impl Policy for LruBand {
    fn name(&self) -> &'static str {
        "lru-band"
    }
    fn on_insert(&mut self, t: &BlockTable, slot: Slot) {
        self.global.push_front(&mut self.queue, slot);
        let b = self.band(t.meta(slot).block);
        self.by_band.push_front(&mut self.band_lists[b], slot);
    }
    fn on_hit(&mut self, _: &BlockTable, slot: Slot, _: bool) {
        self.global.move_to_front(&mut self.queue, slot);
    }
    fn select_victims(&mut self, t: &BlockTable, _incoming: BlockNo, victims: &mut Vec<Slot>) {
        let Some(lru) = self.queue.back() else { return };
        let b = self.band(t.meta(lru).block);
        let start = victims.len();
        victims.extend(self.by_band.iter_back(&self.band_lists[b]));
        t.sort_by_block(&mut victims[start..]);
    }
    fn on_remove(&mut self, t: &BlockTable, slot: Slot) {
        self.global.remove(&mut self.queue, slot);
        let b = self.band(t.meta(slot).block);
        self.by_band.remove(&mut self.band_lists[b], slot);
    }
    fn heap_bytes(&self) -> usize {
        self.global.heap_bytes()
            + self.by_band.heap_bytes()
            + self.band_lists.len() * std::mem::size_of::<List>()
    }
}
