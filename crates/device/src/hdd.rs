//! Conventional (CMR) disk mechanics on a virtual clock, and the CMR-only baseline drive.
//!
//! [`Mechanism`] answers "how long does it take to transfer these physical bytes, starting at
//! modelled time `now`": `T = wait + T_cmd + T_seek(d) (+ T_settle for writes) + T_rot + T_xfer`
//! (the service-time model of DiskSim and ublk-disksim). The DM-SMR model ([`crate::dm_smr`]) drives the same mechanism with
//! the physical offsets of its persistent buffer and bands; [`Hdd`] drives it with host LBAs.
//!
//! # Geometry
//!
//! Zoned bit recording: the media rate falls linearly with the cylinder index, from
//! `outer_rate_mb_s` at cylinder 0 (outer diameter, LBA 0) to `inner_rate_mb_s` at the last
//! cylinder. A track holds `rate × revolution` bytes, a cylinder `surfaces` tracks, so the
//! cylinder count is derived: `C = 2·capacity / (k_outer + k_inner)` with `k = surfaces ×
//! revolution × rate`. Positions are kept as a continuous cylinder coordinate `c`; inverting the
//! cumulative capacity `B(c) = k_outer·c − (k_outer − k_inner)·c²/(2C)` gives `c` from a byte
//! offset in O(1). Two consequences that the code relies on:
//!
//! - transferring from `c0` to `c1` takes exactly `surfaces × revolution × (c1 − c0)`, whatever
//!   the rate there (each cylinder is `surfaces` full revolutions), and
//! - the angular position of a byte is `frac(surfaces × c)`: sector angle from the position
//!   within the track.
//!
//! A transfer that crosses a track boundary pays a head switch (`head_switch_ms`), and one that
//! crosses a cylinder boundary a cylinder switch (`cylinder_switch_ms`) instead: the time the
//! formatter's track and cylinder skew leaves for the switch (DiskSim's "head switch time" and
//! the skews of its layout model). The sector angle includes the accumulated skew, so a transfer
//! that streams across a boundary arrives exactly at the next track's first sector and never
//! waits a revolution. With both switches at 0 the media rate is the sustained rate; with them,
//! the sustained rate is `rate × revolution / (revolution + switch)`. A track's surfaces are read
//! one after another (no parallel heads).
//!
//! # Rotation
//!
//! The platter phase is `frac(t / revolution)` of the virtual clock. After the command overhead,
//! seek and settle, the head waits until the target angle passes under it:
//! `wait = frac(angle − phase(t)) × revolution`, so `0 ≤ wait < revolution`. An access that starts
//! exactly where the previous one ended (a sequential continuation) pays no seek and no rotational
//! wait: real drives stream it from read-ahead or write-back buffers.
//!
//! # Seek curve
//!
//! Three datasheet numbers (track-to-track, average, full stroke) fix a curve with Ruemmler and
//! Wilkes' shape (DiskSim's "HPL" seek equation): `a + b·√d` for short seeks up to a boundary
//! distance `d_b`, `c + e·d` beyond it. We choose `d_b` and the four coefficients so that the
//! curve passes through the track-to-track time at `d = 1` and the full-stroke time at the
//! maximum distance, is continuous with a continuous slope at `d_b`, and its mean over uniformly
//! random start and end cylinders equals the average seek time (distance density `2(1 − x)`,
//! the convention datasheets use). Solved by bisection on `d_b` when the mechanism is built. The
//! mean of such curves lies between `t2t + (full − t2t)/3` (a straight line) and
//! `t2t + (full − t2t)·8/15` (a pure square root, the ublk-disksim form); an average outside that
//! range is rejected by [`HddConfig::validate`]. `seek(0) = 0`; head switches are free.
//!
//! # Queueing
//!
//! The mechanism serves one access at a time: an access issued at `now` before the previous one
//! has finished starts when it finishes, and the returned service time (from `now`) includes that
//! wait. A closed-loop replay that issues each request at the previous completion never waits.
//!
//! # Write cache ([`WriteCacheConfig`], off by default)
//!
//! Both papers measure with `O_DIRECT` and SMRSTORE turns the drive's volatile cache off, so the
//! default drive writes through. Yet a drive's random writes can beat its random reads only if
//! the drive acknowledges writes from its DRAM and destages them in an order it chooses (SAC
//! Table 2's CMR: 588.8 KB/s random write against 247.5 KB/s random read; PORE Fig. 3's CMR:
//! 8 KB random writes at 5.6 ms each, below a rotation plus a seek). With the cache on, [`Hdd`]
//! behaves like this:
//!
//! - a write is acknowledged after the command overhead plus its transfer over the interface
//!   (`interface_mb_s`), as long as the cache has room (`max_extents` extents and `capacity`
//!   bytes); a rewrite of a cached extent is absorbed;
//! - the mechanism destages whenever it has nothing else to do, one extent at a time, choosing the
//!   extent with the shortest positioning time from where the head is (SPTF, DiskSim's and
//!   ublk-disksim's scheduler for a write-back cache); the background work is caught up lazily
//!   when the next request arrives, so its start times are exact as long as requests arrive in
//!   time order;
//! - a write that finds the cache full waits until a destage frees room;
//! - a read served entirely by a cached extent costs the command overhead and the interface
//!   transfer; any other read waits for the destage in progress (reads have priority over the
//!   queued destages) and then goes to the platters.
//!
//! [`Drive::idle`] lets the cache drain during an idle period.

mod mechanism;
mod write_cache;

pub(crate) use mechanism::ceil_u64;
use mechanism::Geometry;
pub use mechanism::{AccessTiming, Mechanism};

use crate::error::{invalid, Result};
use crate::{Drive, DriveStats};
use serde::{Deserialize, Serialize};
use shingled_core::{BlockNo, ByteSize, Nanos, BLOCK_SIZE};
use write_cache::WriteCache;

/// Parameters of a disk mechanism (a CMR drive, or the mechanics under a DM-SMR drive).
///
/// The default is [`HddConfig::cmr_7200_500g`]. The named constructors, the calibrated
/// mechanisms of the drive profiles, are in [`crate::profiles`], every value with its source.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct HddConfig {
    /// Spindle speed in revolutions per minute. Default 7200; bounds 1000 ..= 20000.
    pub rpm: u32,
    /// Physical capacity of the platters (for DM-SMR: persistent buffer + bands + spare).
    /// Default 500 GB; bounds: large enough for 16 cylinders, at most 2^60 bytes.
    pub capacity: ByteSize,
    /// Recording surfaces (heads). Only the cylinder count depends on it. Default 2;
    /// bounds 1 ..= 64.
    pub surfaces: u32,
    /// Media transfer rate at the outer diameter (LBA 0), MB/s (10^6 B/s). Default 150;
    /// bounds (0, 10000].
    pub outer_rate_mb_s: f64,
    /// Media transfer rate at the inner diameter (last LBA), MB/s. Default 75; bounds
    /// (0, `outer_rate_mb_s`].
    pub inner_rate_mb_s: f64,
    /// Single-cylinder seek time, ms. Default 1.0; bounds (0, `full_stroke_ms`).
    pub track_to_track_ms: f64,
    /// Average seek time over uniformly random start and end positions, ms. Default 8.5;
    /// bounds: between `t2t + (full − t2t)/3` and `t2t + (full − t2t)·8/15` (see the module docs).
    pub average_seek_ms: f64,
    /// Full-stroke seek time, ms. Default 16; bounds (`track_to_track_ms`, 1000].
    pub full_stroke_ms: f64,
    /// Fixed controller overhead per command, ms, paid by every access including sequential
    /// continuations. Default 0.2; bounds 0 ..= 100.
    pub command_overhead_ms: f64,
    /// Extra settle time of a write after a seek (writes need a tighter track lock), ms.
    /// Default 0.5; bounds 0 ..= 100.
    pub write_settle_ms: f64,
    /// Time a transfer loses when it continues on the next surface of the same cylinder (track
    /// skew), ms. Default 0.5; bounds 0 ..= 100 and below one revolution.
    pub head_switch_ms: f64,
    /// Time a transfer loses when it continues on the next cylinder (cylinder skew: a
    /// single-cylinder seek plus settle), ms. Default 1.0; bounds 0 ..= 100 and below one
    /// revolution.
    pub cylinder_switch_ms: f64,
    /// The drive's volatile write cache (used by the CMR drive [`Hdd`]; a DM-SMR drive rejects
    /// it). Default off.
    pub write_cache: WriteCacheConfig,
}

/// A drive's volatile write-back cache (see the module documentation for the policy).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct WriteCacheConfig {
    /// Whether writes are acknowledged from the cache. Default `false` (the papers measure with
    /// `O_DIRECT`; SMRSTORE disables the cache).
    pub enabled: bool,
    /// Cached write extents (one per host write command) the cache holds at most: the drive's
    /// command queue for destaging, and the calibration knob of the SPTF gain. Default 16;
    /// bounds 1 ..= 65536.
    pub max_extents: u32,
    /// Bytes the cache holds at most. Default 16 MiB; bounds 4 KiB ..= 4 GiB.
    pub capacity: ByteSize,
    /// Host interface rate for data moved to or from the cache, MB/s. Default 600 (SATA
    /// 6 Gb/s, 8b/10b); bounds (0, 100000].
    pub interface_mb_s: f64,
}

impl Default for WriteCacheConfig {
    fn default() -> Self {
        WriteCacheConfig {
            enabled: false,
            max_extents: 16,
            capacity: ByteSize::mib(16),
            interface_mb_s: 600.0,
        }
    }
}

impl WriteCacheConfig {
    /// Checks every field against its documented bounds (field names relative to this table).
    pub fn validate(&self) -> Result<()> {
        if !(1..=65536).contains(&self.max_extents) {
            return Err(invalid("write_cache.max_extents", self.max_extents, "expected 1 ..= 65536"));
        }
        if self.capacity.0 < BLOCK_SIZE || self.capacity.0 > 1 << 32 {
            return Err(invalid("write_cache.capacity", self.capacity, "expected 4 KiB ..= 4 GiB"));
        }
        let r = self.interface_mb_s;
        if !(r.is_finite() && r > 0.0 && r <= 100_000.0) {
            return Err(invalid("write_cache.interface_mb_s", r, "expected MB/s in (0, 100000]"));
        }
        Ok(())
    }
}

impl HddConfig {
    /// Checks every field against its documented bounds, including the feasibility of the seek
    /// curve. Field names in errors are relative to this table.
    pub fn validate(&self) -> Result<()> {
        Geometry::new(self).map(|_| ())
    }

    /// Validates and builds the mechanism.
    pub fn mechanism(&self) -> Result<Mechanism> {
        Mechanism::new(self)
    }
}

impl Default for HddConfig {
    fn default() -> Self {
        HddConfig::cmr_7200_500g()
    }
}

/// The CMR-only baseline: host LBAs mapped one to one onto a [`Mechanism`], optionally behind a
/// volatile write cache ([`WriteCacheConfig`]).
#[derive(Clone, Debug)]
pub struct Hdd {
    mech: Mechanism,
    capacity_blocks: u64,
    cache: Option<WriteCache>,
    /// When the host interface is free again (the drive takes one command at a time).
    host_free: u64,
    stats: DriveStats,
}

impl Hdd {
    /// Validates `cfg` and builds the drive. Its capacity is `cfg.capacity` rounded down to
    /// whole 4 KiB blocks.
    pub fn new(cfg: &HddConfig) -> Result<Hdd> {
        let mech = cfg.mechanism()?;
        let wc = &cfg.write_cache;
        let cache = wc.enabled.then(|| WriteCache::new(wc));
        Ok(Hdd {
            capacity_blocks: cfg.capacity.0 / BLOCK_SIZE,
            mech,
            cache,
            host_free: 0,
            stats: DriveStats::default(),
        })
    }

    /// The mechanism underneath (for inspection).
    pub fn mechanism(&self) -> &Mechanism {
        &self.mech
    }

    /// Serves the in-range part of a request; the rest is counted in `out_of_range_blocks`.
    fn serve(&mut self, now: Nanos, block: BlockNo, nblocks: u32, is_write: bool) -> Nanos {
        let n_in = self.capacity_blocks.saturating_sub(block).min(nblocks as u64);
        self.stats.out_of_range_blocks += nblocks as u64 - n_in;
        if n_in == 0 {
            // Nothing to transfer: the drive still parses and rejects the command.
            let ns = self.mech.overhead_ns().max(1.0);
            if self.cache.is_some() {
                let start = now.0.max(self.host_free);
                self.host_free = start + ceil_u64(ns);
                return Nanos(self.host_free - now.0);
            }
            return self.mech.occupy(now, ns);
        }
        let (offset, bytes) = (block * BLOCK_SIZE, n_in * BLOCK_SIZE);
        if self.cache.is_some() {
            let done = if is_write {
                self.cached_write(now.0, offset, bytes)
            } else {
                self.cached_read(now.0, offset, bytes)
            };
            return Nanos((done - now.0.min(done)).max(1));
        }
        let busy = self.mech.busy_until().0;
        let t = self.mech.access(now, offset, bytes, is_write);
        let start = now.0.max(busy);
        self.stats.time.host_wait += Nanos(start - now.0);
        let spent = Nanos(self.mech.busy_until().0 - start);
        if is_write {
            self.stats.time.host_write += spent;
        } else {
            self.stats.time.host_read += spent;
        }
        t
    }
}

impl Drive for Hdd {
    fn read(&mut self, now: Nanos, block: BlockNo, nblocks: u32) -> Nanos {
        let t = self.serve(now, block, nblocks, false);
        self.stats.read_ops += 1;
        self.stats.blocks_read += nblocks as u64;
        self.stats.read_time += t;
        t
    }

    fn write(&mut self, now: Nanos, block: BlockNo, nblocks: u32) -> Nanos {
        let t = self.serve(now, block, nblocks, true);
        self.stats.write_ops += 1;
        self.stats.blocks_written += nblocks as u64;
        self.stats.write_time += t;
        t
    }

    /// Destages the write cache while the host is idle (nothing else to do on a CMR drive).
    fn idle(&mut self, now: Nanos, until: Nanos) {
        if self.cache.is_none() {
            return;
        }
        let mut at = now.0.max(self.host_free);
        let before = self.stats.time;
        while at < until.0 && self.destage_one(at) {
            at = self.mech.busy_until().0;
        }
        self.stats.background = self.stats.background.plus(&self.stats.time.since(&before));
    }

    fn stats(&self) -> DriveStats {
        let mut s = self.stats;
        self.mech.fill_components(&mut s.time);
        s.media_bytes_written = self.mech.bytes_written();
        s
    }

    fn kind(&self) -> &'static str {
        "cmr"
    }

    fn capacity_blocks(&self) -> u64 {
        self.capacity_blocks
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hdd_drive_counts_and_clamps() {
        let mut d = Hdd::new(&HddConfig::cmr_7200_500g()).unwrap();
        let cap = d.capacity_blocks();
        let t = d.write(Nanos(0), cap - 1, 3);
        assert!(t > Nanos(0));
        let t2 = d.read(t, cap + 10, 1);
        assert!(t2 > Nanos(0));
        let s = d.stats();
        assert_eq!(s.out_of_range_blocks, 3);
        assert_eq!((s.write_ops, s.read_ops, s.blocks_written, s.blocks_read), (1, 1, 3, 1));
        assert!(d.check_range(cap - 1, 2).is_err());
        assert!(d.check_range(cap - 2, 2).is_ok());
    }
}
