//! Loss of the cache device: which blocks the backing device alone does not hold.

use crate::device::open::scan;
use crate::layout::State;
use shingled_stl::invalid;
use shingled_stl::{BlockDevice, Result};
use std::ops::Range;

/// What the backing device alone is missing after the cache device is lost.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Loss {
    /// No metadata to read: which blocks were dirty cannot be known. Unless the cache was
    /// cleaned (or detached) after its last write, any block written through it may be stale
    /// on the backing device.
    Unknown,
    /// The metadata names the dirty blocks: their newest flushed data was on the cache device
    /// only (a write-back that completed just before the loss may have saved some of them). An
    /// empty list: the backing device alone is consistent.
    Known {
        /// The cache was detached: nothing can be missing.
        detached: bool,
        /// Dirty block ranges, ascending and disjoint.
        ranges: Vec<Range<u64>>,
        /// Blocks in `ranges`.
        blocks: u64,
    },
}

impl Loss {
    /// `true` when the backing device alone is known to be consistent.
    pub fn backing_consistent(&self) -> bool {
        matches!(self, Loss::Known { blocks: 0, .. })
    }
}

/// Reports what `backing` lacks without its cache device, from the cache's metadata area when
/// it is still readable (`metadata`: the cache device, or a copy of its first
/// [`Layout::data_start`](crate::layout::Layout::data_start) blocks; only the superblock and the slot
/// records are read). A block is lost when the newest record naming it, as recovery would
/// choose, says dirty.
pub fn lost_blocks<B: BlockDevice + ?Sized, M: BlockDevice + ?Sized>(
    backing: &B,
    metadata: Option<&mut M>,
) -> Result<Loss> {
    let Some(meta) = metadata else { return Ok(Loss::Unknown) };
    let s = scan(meta)?;
    if s.sb.backing_blocks != backing.capacity_blocks() {
        return Err(invalid(
            "backing device",
            backing.name(),
            format!(
                "it holds {} blocks but the cache metadata belongs to a backing device of {} blocks",
                backing.capacity_blocks(),
                s.sb.backing_blocks
            ),
        ));
    }
    let detached = s.sb.state == State::Detached;
    let mut dirty: Vec<u64> = if detached {
        Vec::new()
    } else {
        s.winners.iter().filter_map(|&p| s.record(p)).filter(|r| r.1).map(|r| r.0).collect()
    };
    dirty.sort_unstable();
    let mut ranges: Vec<Range<u64>> = Vec::new();
    for b in dirty.iter().copied() {
        match ranges.last_mut() {
            Some(r) if r.end == b => r.end += 1,
            _ => ranges.push(b..b + 1),
        }
    }
    Ok(Loss::Known { detached, ranges, blocks: dirty.len() as u64 })
}
