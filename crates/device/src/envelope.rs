//! The envelope of a request that the translating models (DM-SMR, SMaRT) put around their own
//! work in [`Drive::read`](crate::Drive::read) and [`Drive::write`](crate::Drive::write): the
//! op and block counts, the split of the request at the capacity, the reject of a request with
//! nothing in range, the read-pieces statistics and the service time. The models' own parts
//! (the wait bookkeeping, the translation) stay in each model.
//!
//! Plain functions over the fields they touch, `#[inline]` where every request passes through
//! them: no allocation, no dynamic dispatch, nothing per block (the write path of DM-SMR is the
//! simulator's hottest loop).

use crate::hdd::Mechanism;
use crate::DriveStats;
use shingled_core::{BlockNo, Nanos};

/// Counts a read of `nblocks` at `block` on a drive of `capacity_blocks`, and the blocks beyond
/// the capacity; returns the in-range block count.
#[inline]
pub(crate) fn admit_read(stats: &mut DriveStats, capacity_blocks: u64, block: BlockNo, nblocks: u32) -> u64 {
    stats.read_ops += 1;
    stats.blocks_read += nblocks as u64;
    in_range(stats, capacity_blocks, block, nblocks)
}

/// [`admit_read`] for a write.
#[inline]
pub(crate) fn admit_write(stats: &mut DriveStats, capacity_blocks: u64, block: BlockNo, nblocks: u32) -> u64 {
    stats.write_ops += 1;
    stats.blocks_written += nblocks as u64;
    in_range(stats, capacity_blocks, block, nblocks)
}

/// Splits a request into its in-range block count, counting the rest.
#[inline]
fn in_range(stats: &mut DriveStats, capacity_blocks: u64, block: BlockNo, nblocks: u32) -> u64 {
    let n_in = capacity_blocks.saturating_sub(block).min(nblocks as u64);
    stats.out_of_range_blocks += nblocks as u64 - n_in;
    n_in
}

/// Service time of a request with nothing to transfer: the command is still parsed.
pub(crate) fn reject(mech: &mut Mechanism, now: Nanos) -> Nanos {
    let ns = mech.command_overhead().0.max(1) as f64;
    mech.occupy(now, ns)
}

/// Records how many physical pieces a read took (more than one: a fragmented read).
#[inline]
pub(crate) fn read_pieces(stats: &mut DriveStats, pieces: u64) {
    stats.stl.read_pieces.record(pieces);
    if pieces > 1 {
        stats.stl.fragmented_reads += 1;
    }
}

/// Service time of a request issued at `now` and done at `done` (ns), at least 1 ns.
#[inline]
pub(crate) fn service_time(now: Nanos, done: u64) -> Nanos {
    Nanos((done - now.0).max(1))
}
