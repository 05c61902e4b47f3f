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

use crate::error::{invalid, Result};
use crate::{Drive, DriveStats};
use serde::{Deserialize, Serialize};
use shingled_core::{BlockNo, ByteSize, Nanos, BLOCK_SIZE};

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

impl Default for HddConfig {
    fn default() -> Self {
        HddConfig::cmr_7200_500g()
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
        Ok(Mechanism::from_geometry(Geometry::new(self)?))
    }
}

/// Everything derived from an [`HddConfig`]; built once, read on every access.
#[derive(Clone, Debug)]
struct Geometry {
    capacity: u64,
    surfaces: f64,
    rev_ns: f64,
    /// Bytes per cylinder at `c = 0`.
    k0: f64,
    /// Decrease of bytes per cylinder per cylinder (`(k_outer − k_inner) / C`).
    slope: f64,
    /// `1 / slope`, or 0 when the rate is constant (then `c = B / k0`).
    inv_slope: f64,
    /// `1 / k0`.
    inv_k0: f64,
    /// `1 / revolution`, per ns.
    inv_rev_ns: f64,
    /// Continuous cylinder count `C`.
    cylinders: f64,
    /// Transfer time of one cylinder: `surfaces × revolution`.
    xfer_ns_per_cyl: f64,
    overhead_ns: f64,
    settle_ns: f64,
    head_switch_ns: f64,
    cyl_switch_ns: f64,
    /// The switches in revolutions (the skew they add to the sector angle).
    head_switch_rev: f64,
    cyl_switch_rev: f64,
    seek: SeekCurve,
}

impl Geometry {
    fn new(cfg: &HddConfig) -> Result<Geometry> {
        let finite_in = |field: &str, v: f64, lo: f64, hi: f64, lo_open: bool, what: &str| {
            let ok = v.is_finite() && v <= hi && if lo_open { v > lo } else { v >= lo };
            if ok {
                Ok(())
            } else {
                Err(invalid(field, v, what.to_string()))
            }
        };
        if !(1000..=20000).contains(&cfg.rpm) {
            return Err(invalid("rpm", cfg.rpm, "expected 1000 ..= 20000 revolutions per minute"));
        }
        if !(1..=64).contains(&cfg.surfaces) {
            return Err(invalid("surfaces", cfg.surfaces, "expected 1 ..= 64"));
        }
        finite_in(
            "outer_rate_mb_s",
            cfg.outer_rate_mb_s,
            0.0,
            10_000.0,
            true,
            "expected MB/s in (0, 10000]",
        )?;
        finite_in(
            "inner_rate_mb_s",
            cfg.inner_rate_mb_s,
            0.0,
            cfg.outer_rate_mb_s,
            true,
            "expected MB/s in (0, outer_rate_mb_s]: zoned bit recording stores fewer bytes per \
             inner track",
        )?;
        finite_in("full_stroke_ms", cfg.full_stroke_ms, 0.0, 1000.0, true, "expected ms in (0, 1000]")?;
        finite_in(
            "track_to_track_ms",
            cfg.track_to_track_ms,
            0.0,
            cfg.full_stroke_ms,
            true,
            "expected ms in (0, full_stroke_ms)",
        )?;
        if cfg.track_to_track_ms >= cfg.full_stroke_ms {
            return Err(invalid("track_to_track_ms", cfg.track_to_track_ms, "must be below full_stroke_ms"));
        }
        finite_in(
            "command_overhead_ms",
            cfg.command_overhead_ms,
            0.0,
            100.0,
            false,
            "expected ms in 0 ..= 100",
        )?;
        finite_in("write_settle_ms", cfg.write_settle_ms, 0.0, 100.0, false, "expected ms in 0 ..= 100")?;
        let rev_ms = 60e3 / cfg.rpm as f64;
        for (field, v) in
            [("head_switch_ms", cfg.head_switch_ms), ("cylinder_switch_ms", cfg.cylinder_switch_ms)]
        {
            finite_in(field, v, 0.0, 100.0, false, "expected ms in 0 ..= 100")?;
            if v >= rev_ms {
                return Err(invalid(
                    field,
                    v,
                    format!("must be below one revolution ({rev_ms:.3} ms at {} rpm)", cfg.rpm),
                ));
            }
        }
        cfg.write_cache.validate()?;
        if cfg.capacity.0 > 1 << 60 {
            return Err(invalid("capacity", cfg.capacity, "at most 2^60 bytes"));
        }

        let rev_ns = 60e9 / cfg.rpm as f64;
        let surfaces = cfg.surfaces as f64;
        let k = |mb_s: f64| surfaces * (rev_ns * 1e-9) * mb_s * 1e6;
        let (k0, k1) = (k(cfg.outer_rate_mb_s), k(cfg.inner_rate_mb_s));
        let cylinders = 2.0 * cfg.capacity.0 as f64 / (k0 + k1);
        if cylinders < 16.0 {
            return Err(invalid(
                "capacity",
                cfg.capacity,
                format!(
                    "gives only {cylinders:.1} cylinders with these rates and surfaces; at least 16 needed"
                ),
            ));
        }
        let d_max = (cylinders.floor() - 1.0).max(1.0);
        let ns = |ms: f64| ms * 1e6;
        let seek =
            SeekCurve::fit(ns(cfg.track_to_track_ms), ns(cfg.average_seek_ms), ns(cfg.full_stroke_ms), d_max)
                .map_err(|(lo, hi)| {
                    invalid(
                        "average_seek_ms",
                        cfg.average_seek_ms,
                        format!(
                            "with track_to_track_ms = {} and full_stroke_ms = {} the average must lie in \
                         [{:.3}, {:.3}] (between a linear and a square-root seek curve)",
                            cfg.track_to_track_ms,
                            cfg.full_stroke_ms,
                            lo / 1e6,
                            hi / 1e6
                        ),
                    )
                })?;
        Ok(Geometry {
            capacity: cfg.capacity.0,
            surfaces,
            rev_ns,
            k0,
            slope: (k0 - k1) / cylinders,
            // Below this relative slope the quadratic is numerically flat: use B / k0.
            inv_slope: if (k0 - k1) / k0 > 1e-9 { cylinders / (k0 - k1) } else { 0.0 },
            inv_k0: 1.0 / k0,
            inv_rev_ns: 1.0 / rev_ns,
            cylinders,
            xfer_ns_per_cyl: surfaces * rev_ns,
            overhead_ns: ns(cfg.command_overhead_ms),
            settle_ns: ns(cfg.write_settle_ms),
            head_switch_ns: ns(cfg.head_switch_ms),
            cyl_switch_ns: ns(cfg.cylinder_switch_ms),
            head_switch_rev: ns(cfg.head_switch_ms) / rev_ns,
            cyl_switch_rev: ns(cfg.cylinder_switch_ms) / rev_ns,
            seek,
        })
    }

    /// Track boundaries (`floor(surfaces × c)`) and cylinder boundaries (`floor(c)`) below `c`.
    #[inline]
    fn boundaries(&self, c: f64) -> (f64, f64) {
        (((c * self.surfaces) as i64) as f64, (c as i64) as f64)
    }

    /// Angular position (in revolutions, not reduced) of cylinder coordinate `c`: the position
    /// within its track plus the skew accumulated by every switch before it.
    #[inline]
    fn angle(&self, c: f64) -> f64 {
        let (tracks, cyls) = self.boundaries(c);
        c * self.surfaces + (tracks - cyls) * self.head_switch_rev + cyls * self.cyl_switch_rev
    }

    /// Transfer time from `c0` to `c1` (`c1 >= c0`): whole revolutions per track plus the switches.
    #[inline]
    fn transfer_ns(&self, c0: f64, c1: f64) -> f64 {
        if c1 <= c0 {
            return 0.0;
        }
        let mut t = (c1 - c0) * self.xfer_ns_per_cyl;
        if self.head_switch_ns > 0.0 || self.cyl_switch_ns > 0.0 {
            let (t0, y0) = self.boundaries(c0);
            let (t1, y1) = self.boundaries(c1);
            let (tracks, cyls) = (t1 - t0, y1 - y0);
            t += (tracks - cyls) * self.head_switch_ns + cyls * self.cyl_switch_ns;
        }
        t
    }

    /// Continuous cylinder coordinate of physical byte `b` (clamped to the capacity).
    #[inline]
    fn cyl_of(&self, b: u64) -> f64 {
        let b = b.min(self.capacity) as f64;
        if self.inv_slope == 0.0 {
            return b * self.inv_k0;
        }
        // The root of B(c) = k0·c − slope·c²/2: c = (k0 − √(k0² − 2·slope·B)) / slope. The
        // subtraction cancels near the outer edge, but its absolute error (an ulp of k0) divided
        // by the slope stays below 1e-9 cylinder for any plausible geometry, which is all the
        // angle and transfer computations need; a multiplication is cheaper than the
        // cancellation-free 2B / (k0 + √…) division on the hot path.
        let disc = (self.k0 * self.k0 - 2.0 * self.slope * b).max(0.0);
        ((self.k0 - disc.sqrt()) * self.inv_slope).max(0.0)
    }
}

/// The piecewise seek curve `a + β√x` (x ≤ x_b), `c + ε·x` (x > x_b), with `x = d / D`.
#[derive(Clone, Debug)]
struct SeekCurve {
    inv_d_max: f64,
    xb: f64,
    a: f64,
    beta: f64,
    c: f64,
    eps: f64,
}

impl SeekCurve {
    /// The coefficients for boundary `xb` that honour `seek(1) = t2t`, `seek(D) = full` and a
    /// continuous value and slope at `xb`.
    fn with_boundary(t2t: f64, full: f64, d_max: f64, xb: f64) -> SeekCurve {
        let sx = xb.sqrt();
        let inv_sd = 1.0 / d_max.sqrt();
        let beta = (full - t2t) / (sx / 2.0 + 1.0 / (2.0 * sx) - inv_sd);
        let a = t2t - beta * inv_sd;
        SeekCurve { inv_d_max: 1.0 / d_max, xb, a, beta, c: a + beta * sx / 2.0, eps: beta / (2.0 * sx) }
    }

    /// Mean over uniformly random start and end positions: ∫ s(x)·2(1 − x) dx on [0, 1].
    fn mean(&self) -> f64 {
        let x = self.xb;
        let (x2, x3) = (x * x, x * x * x);
        self.a * (2.0 * x - x2)
            + self.beta * (4.0 / 3.0 * x.powf(1.5) - 4.0 / 5.0 * x.powf(2.5))
            + self.c * (1.0 - x) * (1.0 - x)
            + self.eps * (1.0 / 3.0 - x2 + 2.0 / 3.0 * x3)
    }

    /// Fits the boundary to the average; `Err((lowest, highest))` feasible average if it cannot.
    fn fit(t2t: f64, avg: f64, full: f64, d_max: f64) -> std::result::Result<SeekCurve, (f64, f64)> {
        let lo_x = (1.0 / d_max).min(1.0);
        let lo = SeekCurve::with_boundary(t2t, full, d_max, lo_x);
        let hi = SeekCurve::with_boundary(t2t, full, d_max, 1.0);
        let (m_lo, m_hi) = (lo.mean(), hi.mean());
        if !(avg.is_finite() && avg >= m_lo && avg <= m_hi) {
            return Err((m_lo, m_hi));
        }
        // The mean grows with the boundary (more of the stroke on the concave square-root part).
        let (mut x0, mut x1) = (lo_x, 1.0);
        for _ in 0..100 {
            let mid = 0.5 * (x0 + x1);
            if SeekCurve::with_boundary(t2t, full, d_max, mid).mean() < avg {
                x0 = mid;
            } else {
                x1 = mid;
            }
        }
        Ok(SeekCurve::with_boundary(t2t, full, d_max, 0.5 * (x0 + x1)))
    }

    /// Seek time in ns for a distance of `d` cylinders (`d` beyond the stroke is clamped).
    #[inline]
    fn eval(&self, d: u64) -> f64 {
        if d == 0 {
            return 0.0;
        }
        let x = (d as f64 * self.inv_d_max).min(1.0);
        if x <= self.xb {
            self.a + self.beta * x.sqrt()
        } else {
            self.c + self.eps * x
        }
    }
}

// Float-to-integer helpers for non-negative values. `f64::floor`, `ceil`, `round` and `fract`
// are library calls on the x86-64 baseline (no SSE4.1); casts are single instructions.

// Values here are below 2^63, so the conversion goes through i64 (one cvttsd2si; a u64
// conversion is a branchy sequence).

/// Fractional part of a non-negative `x` below 2^63.
#[inline]
fn frac(x: f64) -> f64 {
    x - (x as i64) as f64
}

/// `ceil(x)` for a non-negative `x` below 2^63.
#[inline]
pub(crate) fn ceil_u64(x: f64) -> u64 {
    let i = x as i64;
    (if (i as f64) < x { i + 1 } else { i }) as u64
}

/// `round(x)` for a non-negative `x` below 2^63 (halves up).
#[inline]
fn round_u64(x: f64) -> u64 {
    (x + 0.5) as i64 as u64
}

/// Where one access spent its time. `total` is measured from the `now` the access was issued at
/// and is what [`Mechanism::access`] returns; the parts are rounded separately, so their sum may
/// differ from `total` by a few nanoseconds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct AccessTiming {
    /// Waiting for the previous access to finish.
    pub queued: Nanos,
    /// Command overhead.
    pub overhead: Nanos,
    /// Arm movement.
    pub seek: Nanos,
    /// Write settle after a seek.
    pub settle: Nanos,
    /// Rotational latency, always below one revolution.
    pub rotation: Nanos,
    /// Media transfer.
    pub transfer: Nanos,
    /// The access continued exactly where the previous one ended (no seek, no rotation).
    pub sequential: bool,
    /// Completion time minus `now`.
    pub total: Nanos,
}

/// The parts of one access, before rounding.
struct Parts {
    start: u64,
    seek: f64,
    settle: f64,
    rotation: f64,
    transfer: f64,
    sequential: bool,
    done: u64,
}

/// A disk mechanism on the virtual clock: head position, platter phase and a busy-until time.
///
/// What must stay true: `busy_until` never decreases; the head sits where the last transfer
/// ended; the platter phase is a pure function of the clock, so two accesses issued at the same
/// time to the same place cost the same.
#[derive(Clone, Debug)]
pub struct Mechanism {
    g: Geometry,
    /// Continuous cylinder coordinate of the head.
    head_cyl: f64,
    /// Physical byte where the last transfer ended (`u64::MAX`: the next access repositions).
    last_end: u64,
    busy_until: u64,
    /// Running totals of every access's parts, ns: overhead, seek + settle, rotation, transfer.
    parts: [f64; 4],
}

impl Mechanism {
    /// Validates `cfg` and builds a mechanism with the head at cylinder 0, idle at time 0.
    pub fn new(cfg: &HddConfig) -> Result<Mechanism> {
        cfg.mechanism()
    }

    fn from_geometry(g: Geometry) -> Mechanism {
        Mechanism { g, head_cyl: 0.0, last_end: u64::MAX, busy_until: 0, parts: [0.0; 4] }
    }

    /// Transfers `bytes` at physical byte `offset`, issued at `now`; returns the time from `now`
    /// to completion (including any wait for the previous access). Never zero. Offsets beyond the
    /// capacity are clamped to it (callers check ranges; this only keeps a bad request from
    /// panicking).
    #[inline]
    pub fn access(&mut self, now: Nanos, offset: u64, bytes: u64, is_write: bool) -> Nanos {
        let p = self.step(now, offset, bytes, is_write);
        Nanos(p.done - now.0.min(p.done))
    }

    /// [`Mechanism::access`] with the time broken down.
    pub fn access_timed(&mut self, now: Nanos, offset: u64, bytes: u64, is_write: bool) -> AccessTiming {
        let p = self.step(now, offset, bytes, is_write);
        let n = |x: f64| Nanos(round_u64(x));
        AccessTiming {
            queued: Nanos(p.start - now.0.min(p.start)),
            overhead: n(self.g.overhead_ns),
            seek: n(p.seek),
            settle: n(p.settle),
            rotation: n(p.rotation),
            transfer: n(p.transfer),
            sequential: p.sequential,
            total: Nanos(p.done - now.0.min(p.done)),
        }
    }

    /// One access: moves the head, advances the clock, returns the parts (ns, unrounded).
    #[inline(always)]
    fn step(&mut self, now: Nanos, offset: u64, bytes: u64, is_write: bool) -> Parts {
        let g = &self.g;
        let offset = offset.min(g.capacity);
        let end = offset.saturating_add(bytes).min(g.capacity);
        let start = now.0.max(self.busy_until);
        let mut t = start as f64 + g.overhead_ns;
        let sequential = offset == self.last_end;
        let (c0, seek, settle, rotation) = if sequential {
            (self.head_cyl, 0.0, 0.0, 0.0)
        } else {
            let c0 = g.cyl_of(offset);
            // Cylinder coordinates are non-negative, so truncation is floor.
            let d = (c0 as i64).abs_diff(self.head_cyl as i64);
            let seek = g.seek.eval(d);
            let settle = if is_write && d > 0 { g.settle_ns } else { 0.0 };
            t += seek + settle;
            let angle = frac(g.angle(c0));
            let phase = frac(t * g.inv_rev_ns);
            let mut wait = angle - phase;
            if wait < 0.0 {
                wait += 1.0;
            }
            if wait >= 1.0 {
                // Rounding of a tiny negative difference; the sector is under the head.
                wait = 0.0;
            }
            (c0, seek, settle, wait * g.rev_ns)
        };
        t += rotation;
        let c1 = if end > offset { g.cyl_of(end) } else { c0 };
        let transfer = g.transfer_ns(c0, c1);
        t += transfer;
        let done = ceil_u64(t).max(start + 1);
        self.busy_until = done;
        self.head_cyl = c1;
        self.last_end = end;
        self.parts[0] += g.overhead_ns;
        self.parts[1] += seek + settle;
        self.parts[2] += rotation;
        self.parts[3] += transfer;
        Parts { start, seek, settle, rotation, transfer, sequential, done }
    }

    /// Keeps the mechanism busy for `ns` nanoseconds without moving the head (work the model
    /// charges by bandwidth only, such as merging persistent-buffer blocks). The next access
    /// repositions. Returns the time from `now` to the end of that work.
    pub fn occupy(&mut self, now: Nanos, ns: f64) -> Nanos {
        let start = now.0.max(self.busy_until);
        self.busy_until = start + ceil_u64(ns.max(0.0));
        self.last_end = u64::MAX;
        Nanos(self.busy_until - now.0.min(self.busy_until))
    }

    /// Copies the running totals of every access's command overhead, seek (with settle),
    /// rotational latency and transfer into `t`'s component fields.
    pub fn fill_components(&self, t: &mut crate::TimeBreakdown) {
        let n = |x: f64| Nanos(round_u64(x));
        t.overhead = n(self.parts[0]);
        t.seek = n(self.parts[1]);
        t.rotation = n(self.parts[2]);
        t.transfer = n(self.parts[3]);
    }

    /// When the current work ends.
    pub fn busy_until(&self) -> Nanos {
        Nanos(self.busy_until)
    }

    /// Physical capacity in bytes.
    pub fn capacity(&self) -> u64 {
        self.g.capacity
    }

    /// Number of cylinders (derived from capacity, surfaces, rpm and rates).
    pub fn cylinders(&self) -> u64 {
        self.g.cylinders.ceil() as u64
    }

    /// The cylinder holding physical byte `offset`.
    pub fn cylinder_of(&self, offset: u64) -> u64 {
        self.g.cyl_of(offset) as u64
    }

    /// One revolution.
    pub fn revolution(&self) -> Nanos {
        Nanos(self.g.rev_ns.round() as u64)
    }

    /// Command overhead per access.
    pub fn command_overhead(&self) -> Nanos {
        Nanos(self.g.overhead_ns.round() as u64)
    }

    /// Seek time over `distance` cylinders (0 for 0, monotone non-decreasing).
    pub fn seek_time(&self, distance: u64) -> Nanos {
        Nanos(self.g.seek.eval(distance).round() as u64)
    }

    /// Media rate at physical byte `offset`, bytes per second.
    pub fn rate_at(&self, offset: u64) -> f64 {
        let c = self.g.cyl_of(offset);
        (self.g.k0 - self.g.slope * c) / (self.g.surfaces * self.g.rev_ns * 1e-9)
    }

    /// Pure media transfer time of `bytes` starting at `offset`, head and cylinder switches
    /// included (no overhead, no positioning).
    pub fn transfer_time(&self, offset: u64, bytes: u64) -> Nanos {
        let c0 = self.g.cyl_of(offset);
        let c1 = self.g.cyl_of(offset.saturating_add(bytes));
        Nanos(self.g.transfer_ns(c0, c1).round() as u64)
    }

    /// Positioning time (command overhead, seek, settle for a write, rotational wait) an access
    /// to `offset` would need if it started at `at`, without doing it: what an SPTF scheduler
    /// compares. A sequential continuation costs only the overhead.
    pub fn positioning_time(&self, at: Nanos, offset: u64, is_write: bool) -> f64 {
        let g = &self.g;
        let offset = offset.min(g.capacity);
        if offset == self.last_end {
            return g.overhead_ns;
        }
        let c0 = g.cyl_of(offset);
        let d = (c0 as i64).abs_diff(self.head_cyl as i64);
        let mut t = g.overhead_ns + g.seek.eval(d);
        if is_write && d > 0 {
            t += g.settle_ns;
        }
        let start = at.0.max(self.busy_until) as f64 - at.0 as f64;
        let phase = frac((at.0 as f64 + start + t) * g.inv_rev_ns);
        let mut wait = frac(g.angle(c0)) - phase;
        if wait < 0.0 {
            wait += 1.0;
        }
        start + t + wait.min(1.0) * g.rev_ns
    }

    /// Forgets the head's streaming position, so the next access seeks and waits for rotation
    /// even if it continues the last one.
    pub fn break_stream(&mut self) {
        self.last_end = u64::MAX;
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

/// The state of an enabled write cache.
#[derive(Clone, Debug)]
struct WriteCache {
    max_extents: usize,
    capacity: u64,
    /// Interface time per byte, ns.
    ns_per_byte: f64,
    /// Dirty extents: (physical byte offset, bytes, time it was in the cache). A destage
    /// starting at `t` chooses among the extents cached by `t`.
    dirty: Vec<(u64, u64, u64)>,
    dirty_bytes: u64,
}

impl WriteCache {
    /// When the earliest cached extent arrived.
    fn first_arrival(&self) -> Option<u64> {
        self.dirty.iter().map(|e| e.2).min()
    }
}

impl Hdd {
    /// Validates `cfg` and builds the drive. Its capacity is `cfg.capacity` rounded down to
    /// whole 4 KiB blocks.
    pub fn new(cfg: &HddConfig) -> Result<Hdd> {
        let mech = cfg.mechanism()?;
        let wc = &cfg.write_cache;
        let cache = wc.enabled.then(|| WriteCache {
            max_extents: wc.max_extents as usize,
            capacity: wc.capacity.0,
            ns_per_byte: 1e3 / wc.interface_mb_s,
            dirty: Vec::with_capacity(wc.max_extents as usize),
            dirty_bytes: 0,
        });
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

    /// Extents waiting in the write cache (0 when it is off).
    pub fn cached_extents(&self) -> usize {
        self.cache.as_ref().map_or(0, |c| c.dirty.len())
    }

    /// Destages the cached extent with the shortest positioning time, starting no earlier than
    /// `at`. Returns `false` if the cache is empty.
    fn destage_one(&mut self, at: u64) -> bool {
        let Some(c) = self.cache.as_mut() else { return false };
        let Some(first) = c.first_arrival() else { return false };
        let at = Nanos(at.max(first));
        let mut best = (f64::INFINITY, 0usize);
        for (i, &(off, _, arrived)) in c.dirty.iter().enumerate() {
            if arrived > at.0 {
                continue;
            }
            let p = self.mech.positioning_time(at, off, true);
            if p < best.0 {
                best = (p, i);
            }
        }
        let (off, bytes, _) = c.dirty.swap_remove(best.1);
        c.dirty_bytes -= bytes;
        let before = at.max(self.mech.busy_until());
        self.mech.access(at, off, bytes, true);
        self.stats.time.destage += self.mech.busy_until() - before;
        self.stats.cache_destages += 1;
        true
    }

    /// Runs the background destages that start before `now` (the mechanism is idle and the
    /// cache holds dirty extents).
    fn catch_up(&mut self, now: u64) {
        while let Some(first) = self.cache.as_ref().and_then(WriteCache::first_arrival) {
            let at = self.mech.busy_until().0.max(first);
            if at >= now {
                break;
            }
            self.destage_one(at);
        }
    }

    /// A write through the cache; returns the completion time.
    fn cached_write(&mut self, now: u64, offset: u64, bytes: u64) -> u64 {
        self.catch_up(now);
        let start = now.max(self.host_free);
        let c = self.cache.as_mut().expect("cache on");
        let absorbed = c.dirty.iter().any(|&(o, b, _)| o <= offset && offset + bytes <= o + b);
        let mut ready = start;
        if !absorbed {
            loop {
                let c = self.cache.as_ref().expect("cache on");
                if c.dirty.len() < c.max_extents && c.dirty_bytes + bytes <= c.capacity.max(bytes) {
                    break;
                }
                let busy = self.mech.busy_until().0;
                if ready == start && busy > start {
                    // A background destage is in progress: the write waits for it first.
                    self.stats.time.host_wait += Nanos(busy - start);
                }
                let at = busy.max(start);
                if !self.destage_one(at) {
                    break;
                }
                ready = ready.max(self.mech.busy_until().0);
            }
            let c = self.cache.as_mut().expect("cache on");
            let arrived = ceil_u64(ready as f64 + self.mech.g.overhead_ns + bytes as f64 * c.ns_per_byte);
            c.dirty.push((offset, bytes, arrived));
            c.dirty_bytes += bytes;
        } else {
            self.stats.cache_write_hits += 1;
        }
        let c = self.cache.as_mut().expect("cache on");
        let done =
            ceil_u64(ready as f64 + self.mech.g.overhead_ns + bytes as f64 * c.ns_per_byte).max(ready + 1);
        self.stats.time.cache += Nanos(done - ready);
        self.stats.time.host_wait += Nanos(start - now);
        self.host_free = done;
        done
    }

    /// A read with the cache on; returns the completion time.
    fn cached_read(&mut self, now: u64, offset: u64, bytes: u64) -> u64 {
        self.catch_up(now);
        let start = now.max(self.host_free);
        let c = self.cache.as_ref().expect("cache on");
        let hit = c.dirty.iter().any(|&(o, b, _)| o <= offset && offset + bytes <= o + b);
        self.stats.time.host_wait += Nanos(start - now);
        let done = if hit {
            self.stats.cache_read_hits += 1;
            let done = ceil_u64(start as f64 + self.mech.g.overhead_ns + bytes as f64 * c.ns_per_byte)
                .max(start + 1);
            self.stats.time.cache += Nanos(done - start);
            done
        } else {
            let busy = self.mech.busy_until().0;
            self.stats.time.host_wait += Nanos(busy.saturating_sub(start));
            self.mech.access(Nanos(start), offset, bytes, false);
            let done = self.mech.busy_until().0;
            self.stats.time.host_read += Nanos(done - start.max(busy));
            done
        };
        self.host_free = done;
        done
    }

    /// Serves the in-range part of a request; the rest is counted in `out_of_range_blocks`.
    fn serve(&mut self, now: Nanos, block: BlockNo, nblocks: u32, is_write: bool) -> Nanos {
        let n_in = self.capacity_blocks.saturating_sub(block).min(nblocks as u64);
        self.stats.out_of_range_blocks += nblocks as u64 - n_in;
        if n_in == 0 {
            // Nothing to transfer: the drive still parses and rejects the command.
            let ns = self.mech.g.overhead_ns.max(1.0);
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
        while at < until.0 && self.destage_one(at) {
            at = self.mech.busy_until().0;
        }
    }

    fn stats(&self) -> DriveStats {
        let mut s = self.stats;
        self.mech.fill_components(&mut s.time);
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

    fn mech() -> Mechanism {
        HddConfig::cmr_7200_500g().mechanism().unwrap()
    }

    #[test]
    fn geometry_is_plausible() {
        let m = mech();
        // 500 GB / (2 surfaces × 8.33 ms × 112.5 MB/s mean) = 266,667 cylinders
        assert!((266_000..267_500).contains(&m.cylinders()), "{}", m.cylinders());
        assert_eq!(m.revolution(), Nanos(8_333_333));
        assert!((m.rate_at(0) - 150e6).abs() < 1.0);
        assert!((m.rate_at(500_000_000_000) - 75e6).abs() < 1e3);
        // transfer at the outer edge = bytes / outer rate, plus one head switch: a track holds
        // 150 MB/s × 8.33 ms = 1.25 MB, so 1.5 MB crosses one track boundary (0.5 ms)
        let t = m.transfer_time(0, 1_500_000).0 as f64;
        assert!((t - 10_500_000.0).abs() < 20.0, "{t}");
        // within one track: no switch
        let t = m.transfer_time(0, 1_200_000).0 as f64;
        assert!((t - 8_000_000.0).abs() < 20.0, "{t}");
        // the whole disk takes 2 revolutions per cylinder, plus per cylinder one head switch
        // (0.5 ms) and one cylinder switch (1 ms)
        let cyl = m.g.cylinders.floor();
        let whole = m.transfer_time(0, 500_000_000_000).as_secs_f64();
        let want = 500e9 / 112.5e6 + cyl * 1.5e-3;
        assert!((whole - want).abs() < 2e-3, "{whole} vs {want}");
        // without switches the media rate is the sustained rate
        let flat = HddConfig { head_switch_ms: 0.0, cylinder_switch_ms: 0.0, ..HddConfig::cmr_7200_500g() }
            .mechanism()
            .unwrap();
        let whole = flat.transfer_time(0, 500_000_000_000).as_secs_f64();
        assert!((whole - 500e9 / 112.5e6).abs() < 1e-3, "{whole}");
    }

    #[test]
    fn streaming_across_tracks_pays_the_switch_but_no_rotation() {
        // Two accesses back to back across a track boundary cost exactly one uninterrupted
        // transfer: the skew in the sector angle matches the switch time.
        let mut a = mech();
        let one = a.access_timed(Nanos(0), 0, 2_500_000, false);
        let mut b = mech();
        let first = b.access_timed(Nanos(0), 0, 1_000_000, false);
        let second = b.access_timed(first.total, 1_000_000, 1_500_000, false);
        assert!(second.sequential && second.rotation == Nanos(0));
        let two = first.total + second.total;
        // the second access adds only its command overhead
        assert!(two.0.abs_diff(one.total.0 + second.overhead.0) <= 2, "{} vs {}", two, one.total);
        // and a fresh access to the start of the next track from the end of the previous one,
        // issued exactly when the switch is over, waits no rotation either
        assert!(one.transfer > Nanos(2_500_000_000 / 150 + 2 * 500_000 - 10));
    }

    #[test]
    fn switch_costs_are_validated() {
        let cfg = HddConfig { head_switch_ms: 9.0, ..HddConfig::cmr_7200_500g() };
        let e = cfg.validate().unwrap_err().to_string();
        assert!(e.contains("head_switch_ms") && e.contains("revolution"), "{e}");
        let cfg = HddConfig { cylinder_switch_ms: -1.0, ..HddConfig::cmr_7200_500g() };
        assert!(cfg.validate().unwrap_err().to_string().contains("cylinder_switch_ms"));
        let cfg = HddConfig {
            write_cache: WriteCacheConfig { max_extents: 0, ..WriteCacheConfig::default() },
            ..HddConfig::cmr_7200_500g()
        };
        assert!(cfg.validate().unwrap_err().to_string().contains("write_cache.max_extents"));
    }

    fn cached(max_extents: u32) -> Hdd {
        Hdd::new(&HddConfig {
            write_cache: WriteCacheConfig { enabled: true, max_extents, ..WriteCacheConfig::default() },
            ..HddConfig::cmr_7200_500g()
        })
        .unwrap()
    }

    #[test]
    fn write_cache_acknowledges_at_interface_speed_until_full() {
        let mut d = cached(4);
        // 4 KiB: 0.2 ms overhead + 4096 B / 600 MB/s = 6,827 ns → 206,827 ns
        let mut now = Nanos(0);
        for i in 0..5u64 {
            let t = d.write(now, i * 10_000_000, 1);
            assert_eq!(t, Nanos(206_827), "write {i}");
            now += t;
        }
        // The mechanism destaged in the background from the first write on, so 5 fitted.
        assert!(d.stats().cache_destages >= 1);
        // Back-to-back writes now wait for destages: each costs about a positioning.
        let mut slow = Nanos(0);
        for i in 0..20u64 {
            let t = d.write(now, 7 + i * 1_234_567, 1);
            slow += t;
            now += t;
        }
        assert!(slow.as_millis_f64() / 20.0 > 3.0, "{slow}");
        // A read of a cached extent is a cache hit.
        let last = 7 + 19 * 1_234_567;
        let t = d.read(now, last, 1);
        assert_eq!(t, Nanos(206_827));
        assert_eq!(d.stats().cache_read_hits, 1);
        // Rewriting a cached extent is absorbed.
        now += t;
        assert_eq!(d.write(now, last, 1), Nanos(206_827));
        assert_eq!(d.stats().cache_write_hits, 1);
        // Idle time drains the cache.
        d.idle(now, now + Nanos(1_000_000_000));
        assert_eq!(d.cached_extents(), 0);
    }

    #[test]
    fn write_cache_reordering_beats_write_through() {
        // SPTF over a queue of cached writes beats FCFS write-through on random writes.
        let run = |mut d: Hdd| {
            let mut x = 99u64;
            let mut now = Nanos(0);
            for _ in 0..2000 {
                x = x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
                now += d.write(now, (x >> 24) % 100_000_000, 1);
            }
            now
        };
        let through = run(Hdd::new(&HddConfig::cmr_7200_500g()).unwrap());
        let cached16 = run(cached(16));
        let cached4 = run(cached(4));
        assert!(cached16 < cached4 && cached4 < through, "{cached16} {cached4} {through}");
        assert!(cached16.0 * 3 < through.0 * 2, "{cached16} vs {through}");
    }

    #[test]
    fn seek_curve_hits_datasheet_points() {
        let m = mech();
        let d_max = m.cylinders() - 2;
        assert_eq!(m.seek_time(0), Nanos(0));
        assert!((m.seek_time(1).as_millis_f64() - 1.0).abs() < 1e-6);
        assert!((m.seek_time(d_max).as_millis_f64() - 16.0).abs() < 1e-3);
        // mean over the triangular distance density equals the average seek
        let n = 200_000u64;
        let mut sum = 0.0;
        let mut wsum = 0.0;
        for i in 0..n {
            let x = (i as f64 + 0.5) / n as f64;
            let w = 2.0 * (1.0 - x);
            sum += w * m.g.seek.eval((x * d_max as f64).round().max(1.0) as u64);
            wsum += w;
        }
        let mean_ms = sum / wsum / 1e6;
        assert!((mean_ms - 8.5).abs() < 0.01, "{mean_ms}");
    }

    #[test]
    fn infeasible_average_is_rejected_with_range() {
        let cfg = HddConfig { average_seek_ms: 15.0, ..HddConfig::cmr_7200_500g() };
        let e = cfg.validate().unwrap_err().to_string();
        assert!(e.contains("average_seek_ms") && e.contains("15"), "{e}");
        let cfg = HddConfig { average_seek_ms: 3.0, ..HddConfig::cmr_7200_500g() };
        assert!(cfg.validate().is_err());
        let cfg = HddConfig { inner_rate_mb_s: 200.0, ..HddConfig::cmr_7200_500g() };
        assert!(cfg.validate().unwrap_err().to_string().contains("inner_rate_mb_s"));
        let cfg = HddConfig { capacity: ByteSize::mib(1), ..HddConfig::cmr_7200_500g() };
        assert!(cfg.validate().unwrap_err().to_string().contains("capacity"));
        for p in [
            HddConfig::cmr_7200_500g(),
            HddConfig::archive_5900_5tb(),
            HddConfig::archive_5980_8tb(),
            HddConfig::cheetah_15k5(),
        ] {
            p.validate().unwrap();
        }
    }

    #[test]
    fn sequential_continuation_pays_no_positioning() {
        let mut m = mech();
        let first = m.access_timed(Nanos(0), 1 << 30, 65536, false);
        assert!(!first.sequential);
        let now = Nanos(first.total.0);
        let next = m.access_timed(now, (1 << 30) + 65536, 65536, false);
        assert!(next.sequential);
        assert_eq!(next.seek, Nanos(0));
        assert_eq!(next.rotation, Nanos(0));
        assert!(next.total.0.abs_diff(next.overhead.0 + next.transfer.0) <= 1);
    }

    #[test]
    fn rotation_follows_the_clock() {
        // The same target, reached at clock times half a revolution apart, waits times that
        // differ by half a revolution (modulo one).
        let rev = mech().revolution().0 as f64;
        let target = 12_345_678_u64 * 4096;
        let wait_at = |now: u64| {
            let mut m = mech();
            m.access_timed(Nanos(0), target - 8192, 4096, false); // park the head nearby
            m.busy_until = 0;
            m.access_timed(Nanos(now), target, 4096, false).rotation.0 as f64
        };
        let a = wait_at(10_000_000);
        let b = wait_at(10_000_000 + (rev / 2.0) as u64);
        let diff = (a - b).rem_euclid(rev);
        assert!((diff - rev / 2.0).abs() < 10.0, "a {a} b {b} diff {diff}");
    }

    #[test]
    fn busy_mechanism_queues() {
        let mut m = mech();
        let t1 = m.access(Nanos(0), 0, 4096, false);
        let t2 = m.access_timed(Nanos(0), 10 << 30, 4096, false);
        assert_eq!(t2.queued, t1);
        assert!(t2.total > t1);
    }

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
