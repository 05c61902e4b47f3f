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
//! - [`smart`]: SMaRT (He & Du, FAST '17), a track-level shingled translation layer: a
//!   track map, hybrid in-place / out-of-place updates and space-element garbage collection.
//!
//! [`DriveConfig`] is the serde-tagged registry of models; [`DriveConfig::build`] turns one into
//! a `Box<dyn Drive>`, and [`profile`] / [`ssd_profile`] name ready-made configurations, one
//! table each in [`profiles`] with every calibrated number and its source.
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

pub mod config;
pub mod dm_smr;
mod envelope;
pub mod error;
pub mod hdd;
pub mod measure;
pub mod profiles;
pub mod smart;
pub mod ssd;

pub use config::DriveConfig;
pub use dm_smr::{DmSmr, DmSmrConfig, DmSmrOp, FlashPbConfig, PbFlavour, PbFree, PbMedium};
pub use error::{DeviceError, Result};
pub use hdd::{AccessTiming, Hdd, HddConfig, Mechanism, WriteCacheConfig};
pub use profiles::{profile, profile_names, ssd_profile, ssd_profile_names, Profile, PROFILES, SSD_PROFILES};
pub use smart::{GcMove, IdleAfter, RecordingZone, Smart, SmartConfig, TrackOp};
pub use ssd::{Ssd, SsdConfig};

use serde::{Deserialize, Serialize};
use shingled_core::{BandMap, BlockNo, ByteSize, Nanos};

/// What the trace tells the drive builder. Sizes relative to the trace (a PB of "1/256") are
/// resolved against these.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct BuildContext {
    /// Written LBA range: total size of the bands that receive writes (PORE Table I). The DM-SMR
    /// PB size is resolved against it. 0 = unknown (a relative PB size then fails to build).
    pub written_range: ByteSize,
    /// Accessed LBA range: the written range plus the range of reads (PORE Table I). No drive
    /// model reads it today; it is here so cache sizes and future models share one context.
    pub accessed_range: ByteSize,
}

impl BuildContext {
    /// A context for a run without a trace (probes, micro-benchmarks): both ranges = `capacity`.
    pub fn whole_drive(capacity: ByteSize) -> BuildContext {
        BuildContext { written_range: capacity, accessed_range: capacity }
    }
}

/// A block device model.
pub trait Drive: Send {
    /// Reads `nblocks` 4 KiB blocks starting at `block`, issued at modelled time `now`.
    /// Returns the service time (from `now` until the data is delivered). `nblocks >= 1`.
    fn read(&mut self, now: Nanos, block: BlockNo, nblocks: u32) -> Nanos;

    /// Writes `nblocks` 4 KiB blocks starting at `block`, issued at `now`; returns the service
    /// time, including any internal work the write forces before it can complete (for DM-SMR,
    /// the persistent-buffer cleaning it waits for). `nblocks >= 1`.
    fn write(&mut self, now: Nanos, block: BlockNo, nblocks: u32) -> Nanos;

    /// A hint that `block` will probably be written soon (the cache's next victim, dirty):
    /// a model may prefetch the lines of its own state that write will read, so that their
    /// misses overlap with the requests replayed until then. Changes nothing. Default: nothing.
    fn prefetch_write(&self, block: BlockNo) {
        let _ = block;
    }

    /// Whether [`Drive::prefetch_write`] does anything for this drive, asked once when a replay
    /// starts (a drive whose state fits the CPU's caches is not worth a call per write-back).
    /// Default: `false`.
    fn wants_write_hints(&self) -> bool {
        false
    }

    /// A hint, before the first request, that every block (or nearly every) will lie below
    /// `span`: a model may then keep per-block state in direct arrays
    /// ([`shingled_core::mem::direct_array_pays`]). Blocks beyond it are still served alike.
    /// Default: nothing.
    fn expect_span(&mut self, _span: u64) {}

    /// Counters accumulated since creation.
    fn stats(&self) -> DriveStats;

    /// Short model name for reports (`ssd`, `cmr`, `dm-smr`, `smart`).
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

    /// A DM-SMR drive's persistent buffer now: `(blocks whose latest copy is in it, its slots)`.
    /// `None` for drives without one. Default: `None`.
    fn pb_fill(&self) -> Option<(u64, u64)> {
        None
    }

    /// Tells the drive that the host issues nothing between `now` and `until` (an open-loop
    /// replay calls it for every gap between requests; a closed-loop replay never does). The
    /// drive may use the time for background work: a DM-SMR drive with an idle window cleans
    /// bands ([`DmSmrConfig::idle_window_ms`]), a CMR drive with a write cache destages it, a
    /// SMaRT drive runs background GC ([`SmartConfig::idle_window_ms`]; by default its window
    /// counts from the last write, so reads between two calls do not restart it).
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
    /// DM-SMR: time spent in cleaning (RMWs), part of `write_time`. SMaRT: time of the
    /// on-demand garbage collections writes waited for (part of `write_time`).
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
    /// DM-SMR: time spent in idle-time cleaning; SMaRT: time of background garbage collection
    /// (neither is part of `write_time`; a request that arrives during it waits, and that wait
    /// is in its own time).
    pub idle_clean_time: Nanos,
    /// Write cache: extents destaged to the platters.
    pub cache_destages: u64,
    /// Write cache: writes absorbed by an extent already cached.
    pub cache_write_hits: u64,
    /// Write cache: reads served from the cache.
    pub cache_read_hits: u64,
    /// Where the drive's time went, by cause and by mechanical component.
    pub time: TimeBreakdown,
    /// The part of `time`'s causes spent on background work: work that started while no host
    /// request was waiting for it (write-cache destages between requests, idle-time cleaning
    /// and garbage collection). It is in no request's service time, so `time`'s causes minus
    /// these add up to `read_time + write_time`. The mechanical components stay zero here (the
    /// ones in `time` cover all of the mechanism's work).
    pub background: TimeBreakdown,
    /// Bytes the drive wrote to its media: every write the heads made on the platters (host
    /// writes, PB appends, write-cache destages, band rewrites, GC moves) and a flash PB's
    /// writes. The numerator of the device-level write amplification.
    pub media_bytes_written: u64,
    /// Shingled-translation-layer counters in SMaRT's terms (SMaRT §5.5: GC counts, GC
    /// overhead, amplified writes, read fragmentation): filled by the SMaRT drive and, for the
    /// parts that apply, by the DM-SMR drive. All zero (and left out of serialized output) for
    /// the other models.
    #[serde(skip_serializing_if = "StlStats::is_empty")]
    pub stl: StlStats,
}

/// Number of buckets of a [`Hist`].
pub const HIST_BUCKETS: usize = 64;

/// A small fixed-size histogram of non-negative integers, `Copy` so that it can live in
/// [`DriveStats`].
///
/// Buckets: the values 0 ..= 15 each have their own bucket (exact); above, every power of two
/// `[2^k, 2^(k+1))` is split into four equal buckets, up to 2^16; the last bucket holds
/// everything from 57,344 on. So counts of a few tracks or requests (SMaRT's GC overhead, read
/// fragments) are exact, and larger ones are known within 25%.
///
/// Serialized as a list of `[low, high, count]` for the non-empty buckets (`low` inclusive,
/// `high` exclusive; the last bucket's `high` is `u64::MAX`).
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct Hist {
    counts: [u64; HIST_BUCKETS],
}

impl Default for Hist {
    fn default() -> Self {
        Hist { counts: [0; HIST_BUCKETS] }
    }
}

impl std::fmt::Debug for Hist {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.buckets()).finish()
    }
}

impl Hist {
    /// The bucket holding `v`.
    #[inline]
    pub fn bucket_of(v: u64) -> usize {
        if v < 16 {
            return v as usize;
        }
        let k = 63 - v.leading_zeros() as usize; // floor(log2 v) >= 4
        let sub = ((v >> (k - 2)) & 3) as usize;
        (16 + (k - 4) * 4 + sub).min(HIST_BUCKETS - 1)
    }

    /// `[low, high)` of bucket `i` (`high = u64::MAX` for the last bucket).
    pub fn bucket_range(i: usize) -> (u64, u64) {
        assert!(i < HIST_BUCKETS, "bucket {i} of {HIST_BUCKETS}");
        if i < 16 {
            return (i as u64, i as u64 + 1);
        }
        let k = (i - 16) / 4 + 4;
        let sub = ((i - 16) % 4) as u64;
        let step = 1u64 << (k - 2);
        let low = (1u64 << k) + sub * step;
        (low, if i == HIST_BUCKETS - 1 { u64::MAX } else { low + step })
    }

    /// Adds one sample.
    #[inline]
    pub fn record(&mut self, v: u64) {
        self.counts[Hist::bucket_of(v)] += 1;
    }

    /// Number of samples.
    pub fn count(&self) -> u64 {
        self.counts.iter().sum()
    }

    /// `true` without samples.
    pub fn is_empty(&self) -> bool {
        self.counts.iter().all(|&c| c == 0)
    }

    /// Samples in bucket `i`.
    pub fn bucket_count(&self, i: usize) -> u64 {
        self.counts[i]
    }

    /// The non-empty buckets as `(low, high, count)`, in increasing order.
    pub fn buckets(&self) -> impl Iterator<Item = (u64, u64, u64)> + '_ {
        self.counts.iter().enumerate().filter(|(_, &c)| c > 0).map(|(i, &c)| {
            let (lo, hi) = Hist::bucket_range(i);
            (lo, hi, c)
        })
    }

    /// Samples below `v`, counting whole buckets: exact when `v` is a bucket boundary (every
    /// value up to 16, and the boundaries listed by [`Hist::buckets`]).
    pub fn count_below(&self, v: u64) -> u64 {
        (0..HIST_BUCKETS).filter(|&i| Hist::bucket_range(i).1 <= v).map(|i| self.counts[i]).sum()
    }

    /// `self - earlier`, bucket by bucket.
    pub fn since(&self, earlier: &Hist) -> Hist {
        let mut h = *self;
        for (c, e) in h.counts.iter_mut().zip(earlier.counts.iter()) {
            *c -= e;
        }
        h
    }
}

impl Serialize for Hist {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        s.collect_seq(self.buckets().map(|(lo, hi, c)| [lo, hi, c]))
    }
}

impl<'de> Deserialize<'de> for Hist {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        let rows = Vec::<[u64; 3]>::deserialize(d)?;
        let mut h = Hist::default();
        for [lo, hi, c] in rows {
            let i = Hist::bucket_of(lo);
            if Hist::bucket_range(i) != (lo, hi) {
                return Err(serde::de::Error::custom(format!(
                    "histogram bucket [{lo}, {hi}) is not one of the fixed buckets"
                )));
            }
            h.counts[i] += c;
        }
        Ok(h)
    }
}

/// Shingled-translation-layer statistics, as SMaRT §5.5 measures its two schemes.
///
/// Counters are cumulative (subtract snapshots with [`StlStats::since`]); the fields marked
/// *gauge* are the state at the snapshot and are kept, not subtracted, by `since`.
///
/// | field | SMaRT drive | DM-SMR drive (Skylight as SMaRT §5.1 configures it) |
/// |---|---|---|
/// | `gc_ondemand`, `gc_background` | GC operations (Table 2's GC_F, GC_B) | band cleanings forced by a write / done in idle time (`rmws − idle_rmws`, `idle_rmws`) |
/// | `gc_cost`, `gc_cost_background` | tracks moved per GC operation (Figs. 11–13) | I/O requests per cleaning: one per merged PB block, plus the band read and the band write |
/// | `writes_triggering_gc` | write requests that ran an on-demand GC (Fig. 10's numerator) | write requests that cleaned a band |
/// | `read_pieces`, `fragmented_reads` | physical reads per read request (Figs. 6–9) | the same (PB and band pieces) |
/// | the rest | SMaRT only | 0 |
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct StlStats {
    /// Garbage collections a write had to wait for (SMaRT: on-demand GCs; DM-SMR: band
    /// cleanings forced by a write).
    pub gc_ondemand: u64,
    /// Garbage collections done in idle time.
    pub gc_background: u64,
    /// Write requests that ran at least one on-demand GC (SMaRT §5.5.3's "amplified writes").
    pub writes_triggering_gc: u64,
    /// SMaRT: tracks moved by garbage collection (on-demand and background).
    pub gc_tracks_moved: u64,
    /// Cost of each on-demand GC: SMaRT tracks moved, DM-SMR I/O requests.
    pub gc_cost: Hist,
    /// Cost of each background GC, in the same unit.
    pub gc_cost_background: Hist,
    /// SMaRT: track updates written in place (the next track was free).
    pub in_place_updates: u64,
    /// SMaRT: track updates written out of place (at the write cursor; the old track freed).
    pub out_of_place_updates: u64,
    /// SMaRT: first writes of a logical track (allocated at the write cursor).
    pub new_tracks: u64,
    /// SMaRT: out-of-place updates of hot tracks that left a guard track after the new copy.
    pub guard_tracks: u64,
    /// SMaRT: old tracks read because an out-of-place update covered only part of the track.
    pub update_reads: u64,
    /// Read requests served by more than one physical read.
    pub fragmented_reads: u64,
    /// Physical reads per read request (1 = not fragmented; 0 = nothing read from the media).
    pub read_pieces: Hist,
    /// SMaRT, gauge: the track map's size as the paper counts it (§4.1: 4 B of LTN + 4 B of PTN
    /// per mapped track).
    pub map_bytes: u64,
    /// SMaRT, gauge: physical tracks holding data.
    pub used_tracks: u64,
    /// SMaRT, gauge: physical tracks of the shingled space.
    pub physical_tracks: u64,
}

impl StlStats {
    /// `true` if nothing was counted (the models without a translation layer).
    pub fn is_empty(&self) -> bool {
        *self == StlStats::default()
    }

    /// `self - earlier` for the counters and histograms; the gauges keep `self`'s value.
    pub fn since(&self, e: &StlStats) -> StlStats {
        StlStats {
            gc_ondemand: self.gc_ondemand - e.gc_ondemand,
            gc_background: self.gc_background - e.gc_background,
            writes_triggering_gc: self.writes_triggering_gc - e.writes_triggering_gc,
            gc_tracks_moved: self.gc_tracks_moved - e.gc_tracks_moved,
            gc_cost: self.gc_cost.since(&e.gc_cost),
            gc_cost_background: self.gc_cost_background.since(&e.gc_cost_background),
            in_place_updates: self.in_place_updates - e.in_place_updates,
            out_of_place_updates: self.out_of_place_updates - e.out_of_place_updates,
            new_tracks: self.new_tracks - e.new_tracks,
            guard_tracks: self.guard_tracks - e.guard_tracks,
            update_reads: self.update_reads - e.update_reads,
            fragmented_reads: self.fragmented_reads - e.fragmented_reads,
            read_pieces: self.read_pieces.since(&e.read_pieces),
            map_bytes: self.map_bytes,
            used_tracks: self.used_tracks,
            physical_tracks: self.physical_tracks,
        }
    }
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
///
/// The SMaRT causes (`update_read`, `gc_read`, `gc_write`) came later than the CSV layout of
/// [`TimeBreakdown::fields_s`], which keeps its 14 columns; read them by name.
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
    /// SMaRT: reading the old copy of a track that an out-of-place update covers only in part.
    pub update_read: Nanos,
    /// SMaRT garbage collection: reading the migrated tracks (positioning included).
    pub gc_read: Nanos,
    /// SMaRT garbage collection: writing the migrated tracks at their destination.
    pub gc_write: Nanos,
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
            update_read: self.update_read - e.update_read,
            gc_read: self.gc_read - e.gc_read,
            gc_write: self.gc_write - e.gc_write,
            overhead: self.overhead - e.overhead,
            seek: self.seek - e.seek,
            rotation: self.rotation - e.rotation,
            transfer: self.transfer - e.transfer,
        }
    }

    /// `self + other`, field by field.
    pub fn plus(&self, o: &TimeBreakdown) -> TimeBreakdown {
        TimeBreakdown {
            host_read: self.host_read + o.host_read,
            host_write: self.host_write + o.host_write,
            pb_read: self.pb_read + o.pb_read,
            pb_write: self.pb_write + o.pb_write,
            cache: self.cache + o.cache,
            destage: self.destage + o.destage,
            clean_band_read: self.clean_band_read + o.clean_band_read,
            clean_merge: self.clean_merge + o.clean_merge,
            clean_band_write: self.clean_band_write + o.clean_band_write,
            host_wait: self.host_wait + o.host_wait,
            update_read: self.update_read + o.update_read,
            gc_read: self.gc_read + o.gc_read,
            gc_write: self.gc_write + o.gc_write,
            overhead: self.overhead + o.overhead,
            seek: self.seek + o.seek,
            rotation: self.rotation + o.rotation,
            transfer: self.transfer + o.transfer,
        }
    }

    /// The causes added (every field but the mechanical components).
    pub fn causes(&self) -> Nanos {
        self.host_read
            + self.host_write
            + self.pb_read
            + self.pb_write
            + self.cache
            + self.destage
            + self.clean()
            + self.host_wait
            + self.update_read
            + self.gc()
    }

    /// The mechanical components added (overhead, seek, rotation, transfer).
    pub fn mechanical(&self) -> Nanos {
        self.overhead + self.seek + self.rotation + self.transfer
    }

    /// SMaRT garbage collection (migration reads and writes).
    pub fn gc(&self) -> Nanos {
        self.gc_read + self.gc_write
    }

    /// Named `(field, seconds)` pairs in a fixed order, for tables and CSV (the 14 original
    /// causes and components; the SMaRT causes are not among them, so the CSV layout is stable).
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

    /// Device-level write amplification over `host_bytes` (the bytes the application wrote):
    /// [`DriveStats::media_bytes_written`] / `host_bytes`. `None` when nothing was written.
    pub fn device_write_amplification(&self, host_bytes: u64) -> Option<f64> {
        (host_bytes > 0).then(|| self.media_bytes_written as f64 / host_bytes as f64)
    }

    /// The drive's time spent serving host requests (`read_time + write_time`) as `time`'s
    /// causes less their background part.
    pub fn foreground(&self) -> TimeBreakdown {
        let mut f = self.time.since(&self.background);
        // The mechanical components are all of the mechanism's work, not split.
        f.overhead = Nanos::ZERO;
        f.seek = Nanos::ZERO;
        f.rotation = Nanos::ZERO;
        f.transfer = Nanos::ZERO;
        f
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
            background: self.background.since(&earlier.background),
            media_bytes_written: self.media_bytes_written - earlier.media_bytes_written,
            stl: self.stl.since(&earlier.stl),
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
        // Models without a translation layer serialize as before (no `stl` key).
        let j = serde_json::to_string(&DriveStats::default()).unwrap();
        assert!(!j.contains("stl"), "{j}");
    }

    #[test]
    fn hist_buckets_are_exact_below_16_and_tile_the_line() {
        for v in 0..16 {
            assert_eq!(Hist::bucket_range(Hist::bucket_of(v)), (v, v + 1));
        }
        // contiguous, increasing, every value in its own bucket's range
        for i in 1..HIST_BUCKETS {
            assert_eq!(Hist::bucket_range(i - 1).1, Hist::bucket_range(i).0, "bucket {i}");
        }
        for v in [16, 17, 19, 20, 31, 32, 99, 100, 1000, 61_439, 61_440, 1 << 20, u64::MAX] {
            let (lo, hi) = Hist::bucket_range(Hist::bucket_of(v));
            assert!(lo <= v && (v < hi || hi == u64::MAX), "{v} in [{lo}, {hi})");
        }
        assert_eq!(Hist::bucket_range(16), (16, 20));
        let mut h = Hist::default();
        for v in [1, 1, 2, 3, 40, 1000] {
            h.record(v);
        }
        assert_eq!((h.count(), h.count_below(2), h.count_below(10)), (6, 2, 4));
        let j = serde_json::to_string(&h).unwrap();
        assert_eq!(j, "[[1,2,2],[2,3,1],[3,4,1],[40,48,1],[896,1024,1]]");
        assert_eq!(serde_json::from_str::<Hist>(&j).unwrap(), h);
        assert!(serde_json::from_str::<Hist>("[[3,5,1]]").is_err());
        let s = StlStats { gc_ondemand: 3, gc_cost: h, map_bytes: 80, ..StlStats::default() };
        let d = s.since(&StlStats { gc_ondemand: 1, map_bytes: 8, ..StlStats::default() });
        assert_eq!((d.gc_ondemand, d.gc_cost.count(), d.map_bytes), (2, 6, 80), "gauges are kept");
    }
}
