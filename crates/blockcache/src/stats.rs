//! What the cache has done.

use serde::{Deserialize, Serialize};

/// Counters since the device was formatted or opened (they are not persisted), plus the
/// current occupancy.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Stats {
    /// Blocks read from the cache on a read request (the policy saw a hit).
    pub read_hits: u64,
    /// Blocks of read requests that missed (read from the backing device; cached in the
    /// read-allocating modes).
    pub read_misses: u64,
    /// Blocks of write requests that hit a cached block.
    pub write_hits: u64,
    /// Blocks of write requests that missed (inserted dirty, or written around in read-only
    /// mode).
    pub write_misses: u64,
    /// Clean blocks the policy evicted (dropped).
    pub clean_evictions: u64,
    /// Dirty blocks the policy evicted: each written back to the backing device.
    pub dirty_evictions: u64,
    /// Dirty blocks written back by [`clean`](crate::CachedDevice::clean) (and detach).
    pub cleaner_writebacks: u64,
    /// Requests the sequential bypass sent around the cache.
    pub bypassed_requests: u64,
    /// Blocks those requests moved between host and backing device directly (their cached
    /// blocks went through the cache and are not counted here).
    pub bypassed_blocks: u64,
    /// Read blocks served without telling the policy: write-only mode, where the simulator drops
    /// read requests from the workload.
    pub unaccounted_reads: u64,
    /// Blocks discarded.
    pub discarded_blocks: u64,
    /// Data blocks read from cache slots.
    pub cache_blocks_read: u64,
    /// Data blocks written to cache slots.
    pub cache_blocks_written: u64,
    /// Record blocks written (commits, retirements).
    pub metadata_blocks_written: u64,
    /// Blocks read from the backing device.
    pub backing_blocks_read: u64,
    /// Blocks written to the backing device.
    pub backing_blocks_written: u64,
    /// Metadata commits (host flushes with something to commit, and commits forced when the
    /// free-slot reserve ran out).
    pub commits: u64,
    /// Commits forced by an empty free-slot reserve.
    pub forced_commits: u64,
    /// Early releases of a slot whose durable clean record named a block about to be written
    /// to the backing device.
    pub retirements: u64,
    /// Flushes issued to the cache device.
    pub cache_flushes: u64,
    /// Flushes issued to the backing device.
    pub backing_flushes: u64,
    /// Blocks cached now.
    pub cached_blocks: u64,
    /// Dirty blocks cached now.
    pub dirty_blocks: u64,
}

impl Stats {
    /// Hits of either kind.
    pub fn hits(&self) -> u64 {
        self.read_hits + self.write_hits
    }
    /// Misses of either kind.
    pub fn misses(&self) -> u64 {
        self.read_misses + self.write_misses
    }
    /// Every write-back: dirty evictions and the cleaner's.
    pub fn write_backs(&self) -> u64 {
        self.dirty_evictions + self.cleaner_writebacks
    }
}
