//! The mechanism: geometry, seek curve, rotation and queueing of one disk, as the parent module
//! documents them. Building the geometry validates an [`HddConfig`].

use super::HddConfig;
use crate::error::{invalid, Result};
use shingled_core::Nanos;

/// Everything derived from an [`HddConfig`]; built once, read on every access.
#[derive(Clone, Debug)]
pub(super) struct Geometry {
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
    pub(super) fn new(cfg: &HddConfig) -> Result<Geometry> {
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
    /// Bytes written to the platters by every write access.
    written: u64,
}

impl Mechanism {
    /// Validates `cfg` and builds a mechanism with the head at cylinder 0, idle at time 0.
    pub fn new(cfg: &HddConfig) -> Result<Mechanism> {
        let g = Geometry::new(cfg)?;
        Ok(Mechanism { g, head_cyl: 0.0, last_end: u64::MAX, busy_until: 0, parts: [0.0; 4], written: 0 })
    }

    /// Command overhead per access, unrounded (what the write cache charges beside the
    /// interface transfer).
    pub(super) fn overhead_ns(&self) -> f64 {
        self.g.overhead_ns
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
        if is_write {
            self.written += end - offset;
        }
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

    /// Bytes written to the platters so far (every write access, host or internal).
    pub fn bytes_written(&self) -> u64 {
        self.written
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hdd::WriteCacheConfig;
    use shingled_core::ByteSize;

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
}
