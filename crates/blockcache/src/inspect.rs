//! A read-only look at a cache device's metadata: what `shingled cache check` and `stats` print.

use crate::device::open::scan;
use crate::layout::State;
use crate::CacheSetup;
use serde::{Deserialize, Serialize};
use shingled_stl::{BlockDevice, Result};

/// What a cache device's superblock and slot records say (the data slots are not read).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Inspection {
    /// `attached` or `detached`.
    pub state: String,
    /// Chosen at format.
    pub cache_id: u64,
    /// Mode, policy and their parameters.
    pub setup: CacheSetup,
    /// Backing device capacity, blocks.
    pub backing_blocks: u64,
    /// Blocks the policy manages.
    pub capacity: u32,
    /// Physical slots.
    pub slots: u32,
    /// Record blocks.
    pub record_blocks: u64,
    /// Slots whose record names a block.
    pub used_records: u64,
    /// Blocks a reopen would cache (the newest record of each block).
    pub cached_blocks: u64,
    /// Of them, dirty: their newest flushed data is on the cache device only.
    pub dirty_blocks: u64,
    /// Older records of a block that has a newer one (a reopen frees them).
    pub stale_records: u64,
    /// The highest epoch recorded.
    pub newest_epoch: u64,
}

/// Reads the superblock and every record of `dev`, checking their magic, CRCs, ranges and that
/// no two records of a block share an epoch; fails naming the first problem.
pub fn inspect<M: BlockDevice + ?Sized>(dev: &mut M) -> Result<Inspection> {
    let s = scan(dev)?;
    let used = s.used;
    let dirty = s.winners.iter().filter(|&&p| s.record(p).is_some_and(|r| r.1)).count() as u64;
    Ok(Inspection {
        state: match s.sb.state {
            State::Attached => "attached",
            State::Detached => "detached",
        }
        .into(),
        cache_id: s.sb.cache_id,
        setup: s.sb.setup.clone(),
        backing_blocks: s.sb.backing_blocks,
        capacity: s.sb.capacity,
        slots: s.sb.layout.slots,
        record_blocks: s.sb.layout.record_blocks,
        used_records: used,
        cached_blocks: s.winners.len() as u64,
        dirty_blocks: dirty,
        stale_records: used - s.winners.len() as u64,
        newest_epoch: s.newest_epoch,
    })
}
