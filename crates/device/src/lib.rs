//! Drive models on a virtual clock.
//!
//! Every model answers the same question: "this I/O starts at modelled time `now`; how long does
//! it take, and what did it do inside the drive?" The answer is a [`Nanos`] service time plus
//! counters accumulated in [`DriveStats`]. Models never sleep and never touch real devices.
//!
//! - [`ssd`]: flash cache device, per-4 KiB latency plus bandwidth.
//! - [`hdd`]: conventional (CMR) disk mechanics: seek by distance, rotational position from a
//!   platter phase that advances with the clock, transfer rate falling from outer to inner tracks.
//! - [`dm_smr`]: the drive-managed SMR drive of the PORE and SAC papers: a persistent buffer
//!   (PB) managed as a FIFO log over shingled bands, cleaned by band read-modify-write (RMW).
//!
//! [`DriveConfig`] is the serde-tagged registry of models; [`DriveConfig::build`] turns one into
//! a `Box<dyn Drive>`.

use shingled_core::{BlockNo, Nanos};
use serde::{Deserialize, Serialize};

/// A block device model.
pub trait Drive: Send {
    /// Reads `nblocks` 4 KiB blocks starting at `block`, issued at modelled time `now`.
    /// Returns the service time (from `now` until the data is delivered). `nblocks >= 1`.
    fn read(&mut self, now: Nanos, block: BlockNo, nblocks: u32) -> Nanos;

    /// Writes `nblocks` 4 KiB blocks starting at `block`, issued at `now`; returns the service
    /// time, including any internal work the write forces before it can complete (for DM-SMR,
    /// the persistent-buffer cleaning it waits for). `nblocks >= 1`.
    fn write(&mut self, now: Nanos, block: BlockNo, nblocks: u32) -> Nanos;

    /// Counters accumulated since creation.
    fn stats(&self) -> DriveStats;

    /// Short model name for reports (`ssd`, `cmr`, `dm-smr`).
    fn kind(&self) -> &'static str;
}

/// What a drive did. All counters are cumulative; subtract two snapshots to get an interval.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct DriveStats {
    /// Read operations issued to the drive.
    pub read_ops: u64,
    /// Write operations issued to the drive.
    pub write_ops: u64,
    /// 4 KiB blocks read by the host.
    pub blocks_read: u64,
    /// 4 KiB blocks written by the host.
    pub blocks_written: u64,
    /// Modelled time spent serving reads.
    pub read_time: Nanos,
    /// Modelled time spent serving writes (including cleaning charged to them).
    pub write_time: Nanos,
    /// DM-SMR: host blocks written into the persistent buffer.
    pub pb_writes: u64,
    /// DM-SMR: host blocks read from the persistent buffer.
    pub pb_reads: u64,
    /// DM-SMR: rewrites absorbed in place by an in-place PB (no new slot used).
    pub pb_rewrites_in_place: u64,
    /// DM-SMR: band read-modify-write operations.
    pub rmws: u64,
    /// DM-SMR: bytes read from bands by RMWs.
    pub band_bytes_read: u64,
    /// DM-SMR: bytes written to bands by RMWs.
    pub band_bytes_written: u64,
    /// DM-SMR: PB blocks merged into bands by cleaning (the "bytes cleaned out of the PB" / 4 KiB).
    pub pb_blocks_cleaned: u64,
    /// DM-SMR: time spent in cleaning (RMWs), part of `write_time`.
    pub clean_time: Nanos,
}

impl DriveStats {
    /// Write amplification: band bytes written / bytes cleaned out of the PB. `None` before the
    /// first cleaning.
    pub fn write_amplification(&self) -> Option<f64> {
        (self.pb_blocks_cleaned > 0)
            .then(|| self.band_bytes_written as f64 / (self.pb_blocks_cleaned * shingled_core::BLOCK_SIZE) as f64)
    }

    /// `self - earlier`, field by field.
    pub fn since(&self, earlier: &DriveStats) -> DriveStats {
        DriveStats {
            read_ops: self.read_ops - earlier.read_ops,
            write_ops: self.write_ops - earlier.write_ops,
            blocks_read: self.blocks_read - earlier.blocks_read,
            blocks_written: self.blocks_written - earlier.blocks_written,
            read_time: self.read_time - earlier.read_time,
            write_time: self.write_time - earlier.write_time,
            pb_writes: self.pb_writes - earlier.pb_writes,
            pb_reads: self.pb_reads - earlier.pb_reads,
            pb_rewrites_in_place: self.pb_rewrites_in_place - earlier.pb_rewrites_in_place,
            rmws: self.rmws - earlier.rmws,
            band_bytes_read: self.band_bytes_read - earlier.band_bytes_read,
            band_bytes_written: self.band_bytes_written - earlier.band_bytes_written,
            pb_blocks_cleaned: self.pb_blocks_cleaned - earlier.pb_blocks_cleaned,
            clean_time: self.clean_time - earlier.clean_time,
        }
    }
}
