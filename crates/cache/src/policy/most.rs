//! MOST: evict the band with the most cached dirty blocks.

use crate::buckets::MaxBuckets;
use crate::{BlockTable, Policy, PolicyBuilder, PolicyContext, PolicyError, Slot};
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
/// Each band's cached slots are kept in a vector of their own, in no order (a removal moves the
/// last one into the hole): taking a band's victims reads one array, where a linked list would
/// be a chain of dependent loads across the cache's memory. A band's vector is freed when it
/// empties, as it does when the band is evicted, so the vectors hold about 4 bytes per cached
/// block plus 4 of position per slot.
#[derive(Debug)]
pub struct Most {
    bands: BandOf,
    score: MostScore,
    /// Each band's cached slots, in no order.
    members: Vec<Vec<Slot>>,
    /// Each cached slot's index in its band's `members`.
    pos: Vec<u32>,
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
            members: Vec::new(),
            pos: vec![0; capacity as usize],
            dirty: MaxBuckets::new(),
            cached: MaxBuckets::new(),
            twin: true,
        }
    }

    #[inline]
    fn band(&mut self, block: BlockNo) -> u32 {
        let b = self.bands.of(block);
        if b as usize >= self.members.len() {
            self.members.resize((b as usize + 1).max(self.members.len() * 2), Vec::new());
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
        let members = &mut self.members[b as usize];
        self.pos[slot as usize] = members.len() as u32;
        members.push(slot);
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
        victims.extend_from_slice(&self.members[b as usize]);
        t.sort_by_block(&mut victims[start..]);
    }
    fn on_remove(&mut self, t: &BlockTable, slot: Slot) {
        let m = *t.meta(slot);
        let b = self.band(m.block);
        let members = &mut self.members[b as usize];
        let i = self.pos[slot as usize] as usize;
        debug_assert_eq!(members.get(i), Some(&slot), "MOST: slot {slot} not where its band holds it");
        members.swap_remove(i);
        if let Some(&moved) = members.get(i) {
            self.pos[moved as usize] = i as u32;
        }
        if members.is_empty() {
            // The band was evicted: give its room back (a band refills from empty).
            *members = Vec::new();
        }
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
        // As when the cache is full: a position and a member entry per slot (the vectors'
        // growth room not counted), and the bands' vector headers.
        self.pos.capacity() * (std::mem::size_of::<u32>() + std::mem::size_of::<Slot>())
            + self.members.capacity() * std::mem::size_of::<Vec<Slot>>()
            + self.dirty.heap_bytes()
            + self.cached.heap_bytes()
    }
}
