//! Drive models on a virtual clock.
//!
//! Every model answers the same question: "this I/O starts at modelled time `now`; how long does
//! it take, and what did it do inside the drive?" The answer is a [`Nanos`] service time plus
//! counters accumulated in [`DriveStats`]. Models never sleep and never touch real devices.
//!
//! - [`ssd`]: flash cache device, per-request latency plus bandwidth.
//! - [`hdd`]: conventional (CMR) disk mechanics: seek by distance, rotational position from a
//!   platter phase that advances with the clock, transfer rate falling from outer to inner tracks.
//! - [`dm_smr`]: the drive-managed SMR drive of the PORE and SAC papers: a persistent buffer
//!   (PB) managed as a FIFO log over shingled bands, cleaned by band read-modify-write (RMW).
//!
//! [`DriveConfig`] is the serde-tagged registry of models; [`DriveConfig::build`] turns one into
//! a `Box<dyn Drive>`, and [`profile`] / [`ssd_profile`] name ready-made configurations.
//! `docs/drive-models.md` lists every default with its source.
//!
//! ```
//! use shingled_core::{ByteSize, Nanos};
//! use shingled_device::{profile, BuildContext};
//!
//! let cfg = profile("st5000as0011").unwrap();
//! let ctx = BuildContext { written_range: ByteSize::gb(10), accessed_range: ByteSize::gb(12) };
//! let mut drive = cfg.build(&ctx).unwrap();
//! let t = drive.write(Nanos(0), 1234, 2);
//! assert!(t > Nanos(0));
//! assert_eq!(drive.stats().pb_writes, 2);
//! ```

pub mod bench;
pub mod config;
pub mod dm_smr;
pub mod error;
pub mod hdd;
pub mod ssd;

pub use config::{profile, profile_names, ssd_profile, ssd_profile_names, BuildContext, DriveConfig};
pub use dm_smr::{DmSmr, DmSmrConfig, FlashPbConfig, PbFlavour, PbFree, PbMedium};
pub use error::{DeviceError, Result};
pub use hdd::{AccessTiming, Hdd, HddConfig, Mechanism, WriteCacheConfig};
pub use ssd::{Ssd, SsdConfig};

use serde::{Deserialize, Serialize};
use shingled_core::{BandMap, BlockNo, Nanos};

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

    /// Host-visible capacity in 4 KiB blocks. Requests must stay below it; a model serves only
    /// the in-range part of a request that does not, and counts the rest in
    /// [`DriveStats::out_of_range_blocks`] (results are then not meaningful). Default: unbounded.
    fn capacity_blocks(&self) -> u64 {
        u64::MAX
    }

    /// `Ok` if `[block, block + nblocks)` lies within [`Drive::capacity_blocks`]; the replay
    /// engine calls this (or compares the trace's range once) before replaying.
    fn check_range(&self, block: BlockNo, nblocks: u32) -> Result<()> {
        let end = block.saturating_add(nblocks as u64);
        let cap = self.capacity_blocks();
        if end > cap {
            return Err(DeviceError::OutOfRange { start: block, end, capacity_blocks: cap });
        }
        Ok(())
    }

    /// The true band layout of a shingled drive, for policies allowed to know it (LRU-band).
    /// `None` for drives without bands.
    fn band_map(&self) -> Option<&BandMap> {
        None
    }

    /// Tells the drive that the host issues nothing between `now` and `until` (an open-loop
    /// replay calls it for every gap between requests; a closed-loop replay never does). The
    /// drive may use the time for background work: a DM-SMR drive with an idle window cleans
    /// bands ([`DmSmrConfig::idle_window_ms`]), a CMR drive with a write cache destages it.
    /// Background work that has started is not interrupted, so it may run past `until` and
    /// delay the next request. Default: nothing. `until <= now` does nothing.
    fn idle(&mut self, now: Nanos, until: Nanos) {
        let _ = (now, until);
    }
}

/// What a drive did. All counters are cumulative; subtract two snapshots to get an interval.
///
/// Block counts are 4 KiB blocks; `*_ops` count requests.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
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
    /// DM-SMR: host blocks written into the persistent buffer (appended, or updated in place).
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
    /// DM-SMR: time the mechanism spent on host accesses to the persistent buffer (appends,
    /// in-place updates and PB reads), part of `read_time` + `write_time`; with `clean_time`
    /// it splits the drive's time as PORE Fig. 4 does (write buffer vs bands).
    pub pb_time: Nanos,
    /// Blocks of requests beyond the drive's capacity, not served (see
    /// [`Drive::capacity_blocks`]). Non-zero means the run's results are not meaningful.
    pub out_of_range_blocks: u64,
    /// DM-SMR: RMWs done by idle-time cleaning (also counted in `rmws`).
    pub idle_rmws: u64,
    /// DM-SMR: time spent in idle-time cleaning (not part of `write_time`; a request that
    /// arrives during it waits, and that wait is in its own time).
    pub idle_clean_time: Nanos,
    /// Write cache: extents destaged to the platters.
    pub cache_destages: u64,
    /// Write cache: writes absorbed by an extent already cached.
    pub cache_write_hits: u64,
    /// Write cache: reads served from the cache.
    pub cache_read_hits: u64,
    /// Where the drive's time went, by cause and by mechanical component.
    pub time: TimeBreakdown,
}

/// Where a drive's modelled time went.
///
/// The *cause* fields are the time the mechanism (or a flash PB, or the host interface of the
/// write cache) was busy for that cause, whether a host request waited for it or not. Work done
/// in the background (destages while the host was busy elsewhere, idle-time cleaning) is counted
/// under its cause but is not part of the drive's read/write time; `host_wait` is the part of
/// the read/write time spent waiting for work that started before the request arrived (also
/// counted under that work's cause). So `read_time + write_time` = (foreground causes) +
/// `host_wait`, within a nanosecond of rounding per access; with no background work the
/// foreground causes are all of them.
///
/// The *component* fields split the mechanism's accesses (every cause above but `clean_merge`
/// and `cache`) into command overhead, seek (with write settle), rotational latency and media
/// transfer (with head and cylinder switches).
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct TimeBreakdown {
    /// Host reads from the media outside the persistent buffer (DM-SMR: the band region; CMR:
    /// any read that missed the write cache).
    pub host_read: Nanos,
    /// Host writes straight to the media (a CMR drive without a write cache).
    pub host_write: Nanos,
    /// DM-SMR: host reads of blocks whose latest copy is in the persistent buffer.
    pub pb_read: Nanos,
    /// DM-SMR: host writes into the persistent buffer, written through (no write cache).
    pub pb_write: Nanos,
    /// Host data moved to or from the volatile write cache over the interface (command overhead
    /// included).
    pub cache: Nanos,
    /// Cached writes moved to the platters (CMR: to their LBAs; DM-SMR: appended to the
    /// persistent buffer).
    pub destage: Nanos,
    /// DM-SMR cleaning: reading bands (positioning included).
    pub clean_band_read: Nanos,
    /// DM-SMR cleaning: merging the band's persistent-buffer blocks.
    pub clean_merge: Nanos,
    /// DM-SMR cleaning: writing bands back (positioning included).
    pub clean_band_write: Nanos,
    /// Time host requests waited for work that started before they arrived (a destage or an
    /// idle-time cleaning in progress).
    pub host_wait: Nanos,
    /// Mechanism: command overhead of every access.
    pub overhead: Nanos,
    /// Mechanism: arm movement, write settle included.
    pub seek: Nanos,
    /// Mechanism: rotational latency.
    pub rotation: Nanos,
    /// Mechanism: media transfer, head and cylinder switches included.
    pub transfer: Nanos,
}

impl TimeBreakdown {
    /// All cleaning (band reads, merges, band writes).
    pub fn clean(&self) -> Nanos {
        self.clean_band_read + self.clean_merge + self.clean_band_write
    }

    /// `self - earlier`, field by field.
    pub fn since(&self, e: &TimeBreakdown) -> TimeBreakdown {
        TimeBreakdown {
            host_read: self.host_read - e.host_read,
            host_write: self.host_write - e.host_write,
            pb_read: self.pb_read - e.pb_read,
            pb_write: self.pb_write - e.pb_write,
            cache: self.cache - e.cache,
            destage: self.destage - e.destage,
            clean_band_read: self.clean_band_read - e.clean_band_read,
            clean_merge: self.clean_merge - e.clean_merge,
            clean_band_write: self.clean_band_write - e.clean_band_write,
            host_wait: self.host_wait - e.host_wait,
            overhead: self.overhead - e.overhead,
            seek: self.seek - e.seek,
            rotation: self.rotation - e.rotation,
            transfer: self.transfer - e.transfer,
        }
    }

    /// Named `(field, seconds)` pairs in a fixed order, for tables and CSV.
    pub fn fields_s(&self) -> [(&'static str, f64); 14] {
        let s = |n: Nanos| n.as_secs_f64();
        [
            ("host_read", s(self.host_read)),
            ("host_write", s(self.host_write)),
            ("pb_read", s(self.pb_read)),
            ("pb_write", s(self.pb_write)),
            ("cache", s(self.cache)),
            ("destage", s(self.destage)),
            ("clean_band_read", s(self.clean_band_read)),
            ("clean_merge", s(self.clean_merge)),
            ("clean_band_write", s(self.clean_band_write)),
            ("host_wait", s(self.host_wait)),
            ("overhead", s(self.overhead)),
            ("seek", s(self.seek)),
            ("rotation", s(self.rotation)),
            ("transfer", s(self.transfer)),
        ]
    }
}

impl DriveStats {
    /// Write amplification: band bytes written / bytes cleaned out of the PB (PORE §V-C: "the I/O
    /// amount written to SMR bands divided by that evicted from the SMR persistent write
    /// buffer"). `None` before the first cleaning.
    pub fn write_amplification(&self) -> Option<f64> {
        (self.pb_blocks_cleaned > 0).then(|| {
            self.band_bytes_written as f64 / (self.pb_blocks_cleaned * shingled_core::BLOCK_SIZE) as f64
        })
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
            pb_time: self.pb_time - earlier.pb_time,
            out_of_range_blocks: self.out_of_range_blocks - earlier.out_of_range_blocks,
            idle_rmws: self.idle_rmws - earlier.idle_rmws,
            idle_clean_time: self.idle_clean_time - earlier.idle_clean_time,
            cache_destages: self.cache_destages - earlier.cache_destages,
            cache_write_hits: self.cache_write_hits - earlier.cache_write_hits,
            cache_read_hits: self.cache_read_hits - earlier.cache_read_hits,
            time: self.time.since(&earlier.time),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn since_subtracts_every_field_and_wa_uses_cleaned_blocks() {
        let a =
            DriveStats { rmws: 1, band_bytes_written: 16384, pb_blocks_cleaned: 2, ..DriveStats::default() };
        let b = DriveStats {
            rmws: 4,
            band_bytes_written: 65536,
            pb_blocks_cleaned: 4,
            pb_time: Nanos(7),
            out_of_range_blocks: 3,
            ..a
        };
        let d = b.since(&a);
        assert_eq!((d.rmws, d.band_bytes_written, d.pb_blocks_cleaned), (3, 49152, 2));
        assert_eq!((d.pb_time, d.out_of_range_blocks), (Nanos(7), 3));
        assert_eq!(d.write_amplification(), Some(6.0));
        assert_eq!(DriveStats::default().write_amplification(), None);
        // Fields added later deserialize from older snapshots.
        let old = r#"{"read_ops":1}"#;
        assert_eq!(serde_json::from_str::<DriveStats>(old).unwrap().read_ops, 1);
    }
}
