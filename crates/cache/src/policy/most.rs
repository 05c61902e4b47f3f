//! MOST: evict the band with the most cached dirty blocks.

use crate::buckets::MaxBuckets;
use crate::{BlockTable, Links, List, Policy, PolicyBuilder, PolicyContext, PolicyError, Slot};
use serde::{Deserialize, Serialize};
use shingled_core::{BandMap, BlockNo, ByteSize, BLOCK_SIZE};
use std::sync::Arc;

/// What MOST counts per band to choose its victim band.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum MostScore {
    /// Cached dirty blocks (SAC §2.2: "the band that contains the most dirty blocks"); when no
    /// dirty block is cached, cached blocks.
    #[default]
    Dirty,
    /// All cached blocks, clean and dirty (the SAC artifact's `most.c` scores zones so).
    Cached,
}

/// Configuration of [`Most`].
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MostConfig {
    /// Band size MOST assumes. Absent (the default): the drive's true band layout, as MOST was
    /// designed with knowledge of the band distribution (Ma et al., cited by SAC as [11]); set it
    /// (e.g. `20480000`, the SAC artifact's 20.48 MB zones) to compare with SAC on SAC's terms.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub band_size: Option<ByteSize>,
    /// What decides the victim band. Default `dirty`.
    #[serde(default)]
    pub score: MostScore,
}

impl PolicyBuilder for MostConfig {
    fn build(&self, ctx: &PolicyContext) -> Result<Box<dyn Policy>, PolicyError> {
        let bands = match (self.band_size, &ctx.bands) {
            (Some(b), _) if b.0 < BLOCK_SIZE => {
                return Err(PolicyError::Field {
                    policy: "most",
                    field: "band_size",
                    value: b.to_string(),
                    reason: "must be at least one 4 KiB block".into(),
                })
            }
            (Some(b), _) => BandOf::Fixed(b.0 / BLOCK_SIZE),
            (None, Some(map)) => BandOf::Map(map.clone()),
            (None, None) => {
                return Err(PolicyError::Unsupported {
                    policy: "most",
                    reason: "the drive has no band map; set band_size".into(),
                })
            }
        };
        Ok(Box::new(Most::new(ctx.capacity_blocks, bands, self.score)))
    }
}

/// How blocks map to bands.
#[derive(Clone, Debug)]
pub enum BandOf {
    /// The drive's true layout.
    Map(Arc<BandMap>),
    /// Fixed-size bands of this many blocks.
    Fixed(u64),
}

impl BandOf {
    /// The band of `block`.
    #[inline]
    pub fn of(&self, block: BlockNo) -> u32 {
        match self {
            BandOf::Map(m) => m.band_of(block),
            BandOf::Fixed(n) => (block / n) as u32,
        }
    }
}

/// MOST (Ma et al., "MOST: a high performance hybrid shingled write disk system", cited by SAC
/// §2.2 and PORE's artifact): not considering popularity at all, it picks the band holding the
/// most cached dirty blocks and evicts every cached block of that band at once. It gets the
/// lowest write amplification of the classic schemes and the most misses (SAC Figs. 3 and 5).
///
/// Band choice is O(1) (counters bucketed by count); victims are returned in block order.
/// Ties between bands of equal count go to the band that reached the count most recently.
#[derive(Debug)]
pub struct Most {
    bands: BandOf,
    score: MostScore,
    links: Links,
    band_lists: Vec<List>,
    dirty: MaxBuckets,
    /// Cached blocks per band; not kept while `twin` (it would equal `dirty`).
    cached: MaxBuckets,
    /// Every cached block has been dirty since the policy was built, so `cached` would have had
    /// exactly `dirty`'s increments and decrements, in the same order: its state (counts and
    /// tie order) is `dirty`'s, and one structure is updated instead of two (the write-only
    /// mode). The first clean block copies `dirty` into `cached`.
    twin: bool,
}

impl Most {
    /// MOST over `capacity` slots.
    pub fn new(capacity: u32, bands: BandOf, score: MostScore) -> Self {
        Most {
            bands,
            score,
            links: Links::with_capacity(capacity as usize),
            band_lists: Vec::new(),
            dirty: MaxBuckets::new(),
            cached: MaxBuckets::new(),
            twin: true,
        }
    }

    #[inline]
    fn band(&mut self, block: BlockNo) -> u32 {
        let b = self.bands.of(block);
        if b as usize >= self.band_lists.len() {
            self.band_lists.resize((b as usize + 1).max(self.band_lists.len() * 2), List::default());
        }
        b
    }

    /// The band MOST would evict now.
    pub fn victim_band(&self) -> Option<u32> {
        match (self.score, self.dirty.max()) {
            (MostScore::Dirty, Some((b, _))) => Some(b),
            _ => self.cached().max().map(|(b, _)| b),
        }
    }

    /// Cached blocks per band.
    fn cached(&self) -> &MaxBuckets {
        if self.twin {
            &self.dirty
        } else {
            &self.cached
        }
    }

    /// A block is or becomes clean: from now on `cached` is kept apart from `dirty`.
    fn split_twin(&mut self) {
        if self.twin {
            self.cached = self.dirty.clone();
            self.twin = false;
        }
    }
}

impl Policy for Most {
    fn name(&self) -> &'static str {
        "most"
    }
    fn on_insert(&mut self, t: &BlockTable, slot: Slot) {
        let m = *t.meta(slot);
        let b = self.band(m.block);
        self.links.push_front(&mut self.band_lists[b as usize], slot);
        if !m.dirty {
            self.split_twin();
        }
        if !self.twin {
            self.cached.inc(b);
        }
        if m.dirty {
            self.dirty.inc(b);
        }
    }
    fn on_hit(&mut self, t: &BlockTable, slot: Slot, became_dirty: bool) {
        if became_dirty {
            let b = self.band(t.meta(slot).block);
            self.dirty.inc(b);
        }
    }
    fn select_victims(&mut self, t: &BlockTable, _incoming: BlockNo, victims: &mut Vec<Slot>) {
        let Some(b) = self.victim_band() else { return };
        let start = victims.len();
        victims.extend(self.links.iter_back(&self.band_lists[b as usize]));
        t.sort_by_block(&mut victims[start..]);
    }
    fn on_remove(&mut self, t: &BlockTable, slot: Slot) {
        let m = *t.meta(slot);
        let b = self.band(m.block);
        self.links.remove(&mut self.band_lists[b as usize], slot);
        if !self.twin {
            self.cached.dec(b);
        }
        if m.dirty {
            self.dirty.dec(b);
        }
    }
    fn on_clean(&mut self, t: &BlockTable, slot: Slot) {
        // the band keeps the block; it no longer counts as dirty
        self.split_twin();
        let b = self.band(t.meta(slot).block);
        self.dirty.dec(b);
    }
    fn heap_bytes(&self) -> usize {
        self.links.heap_bytes()
            + self.band_lists.len() * std::mem::size_of::<List>()
            + self.dirty.heap_bytes()
            + self.cached.heap_bytes()
    }
}
