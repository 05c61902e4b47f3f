//! [`Timed`]: a decorator that times every track operation of a medium on a disk
//! [`Mechanism`] (seek by distance, rotational position from the clock, transfer at the media
//! rate of the radius), so translation layers can be measured in modelled time.
//!
//! **Placement.** The medium's bytes are laid out flat ([`Geometry::track_offset`]) at the
//! start of the mechanism: byte `b` of the medium is physical byte `b` of the platter. A medium
//! smaller than the mechanism therefore occupies its outer (fastest) part, and seeks across it
//! are short; a medium larger than the mechanism is refused. Writes cost the same as reads of
//! the same bytes (plus the write settle after a seek): the destruction of the overlapped
//! tracks is a side effect of the wide head and costs nothing.
//!
//! The decorator never sleeps: the modelled clock is [`Timed::elapsed`]. Every operation is
//! issued at that clock, which then advances by its service time ([`Timed::last`]). A request
//! outside the medium or one the medium fails costs the command overhead; a read of a poisoned
//! track costs a full access (the head reads the track before the poison is found).

use crate::error::{invalid, Result, StlError};
use crate::medium::{Geometry, TrackMedium};
use serde::{Deserialize, Serialize};
use shingled_core::{ByteSize, Nanos};
use shingled_device::{HddConfig, Mechanism};

/// What a [`Timed`] medium spent, in modelled time.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TimedStats {
    /// Reads (including failed ones).
    pub reads: u64,
    /// Writes (including failed ones).
    pub writes: u64,
    /// Flushes.
    pub flushes: u64,
    /// Bytes of successful reads.
    pub bytes_read: u64,
    /// Bytes of successful writes.
    pub bytes_written: u64,
    /// Time in reads.
    pub read_time: Nanos,
    /// Time in writes.
    pub write_time: Nanos,
    /// Time in flushes.
    pub flush_time: Nanos,
}

/// A [`TrackMedium`] whose operations take modelled time on a disk [`Mechanism`].
#[derive(Debug)]
pub struct Timed<M: TrackMedium> {
    inner: M,
    mech: Mechanism,
    now: Nanos,
    last: Nanos,
    stats: TimedStats,
}

impl<M: TrackMedium> Timed<M> {
    /// Wraps `inner` on the mechanism `hdd` describes; the clock starts at 0. Fails if `hdd`
    /// is invalid or smaller than the medium.
    pub fn new(inner: M, hdd: &HddConfig) -> Result<Timed<M>> {
        let mech = hdd.mechanism().map_err(|e| invalid("hdd", "…", e.to_string()))?;
        Timed::with_mechanism(inner, mech)
    }

    /// Wraps `inner` on `mech` (whose clock and head position are kept).
    pub fn with_mechanism(inner: M, mech: Mechanism) -> Result<Timed<M>> {
        let bytes = inner.geometry().bytes();
        if bytes > mech.capacity() {
            return Err(invalid(
                "hdd.capacity",
                ByteSize(mech.capacity()),
                format!("smaller than the medium {} ({})", inner.name(), ByteSize(bytes)),
            ));
        }
        Ok(Timed { inner, mech, now: Nanos::ZERO, last: Nanos::ZERO, stats: TimedStats::default() })
    }

    /// The modelled clock: when the next operation is issued (the sum of all service times and
    /// idle time given to [`Timed::advance_to`]).
    pub fn elapsed(&self) -> Nanos {
        self.now
    }

    /// Moves the clock forward to `t` (idle time); earlier times are ignored.
    pub fn advance_to(&mut self, t: Nanos) {
        self.now = self.now.max(t);
    }

    /// Service time of the last operation.
    pub fn last(&self) -> Nanos {
        self.last
    }

    /// Accumulated counters.
    pub fn stats(&self) -> TimedStats {
        self.stats
    }

    /// The mechanism.
    pub fn mechanism(&self) -> &Mechanism {
        &self.mech
    }

    /// The wrapped medium.
    pub fn inner(&self) -> &M {
        &self.inner
    }

    /// The wrapped medium, mutably (operations through it are not timed).
    pub fn inner_mut(&mut self) -> &mut M {
        &mut self.inner
    }

    /// Unwraps.
    pub fn into_inner(self) -> M {
        self.inner
    }

    /// The physical byte of byte `offset` of `track` on the platter.
    pub fn physical(&self, track: u64, offset: u32) -> u64 {
        self.inner.geometry().track_offset(track) + offset as u64
    }

    fn charge(&mut self, t: Nanos) -> Nanos {
        self.now += t;
        self.last = t;
        t
    }

    fn overhead(&mut self) -> Nanos {
        let ns = self.mech.command_overhead().0 as f64;
        self.mech.occupy(self.now, ns)
    }

    /// The mechanism moved only for requests inside the medium that reached it.
    fn reached(r: &Result<()>) -> bool {
        matches!(r, Ok(()) | Err(StlError::Poisoned { .. }))
    }
}

impl<M: TrackMedium> TrackMedium for Timed<M> {
    fn geometry(&self) -> &Geometry {
        self.inner.geometry()
    }

    fn read(&mut self, track: u64, offset: u32, buf: &mut [u8]) -> Result<()> {
        let r = self.inner.read(track, offset, buf);
        let t = if Self::reached(&r) {
            let p = self.physical(track, offset);
            self.mech.access(self.now, p, buf.len() as u64, false)
        } else {
            self.overhead()
        };
        if r.is_ok() {
            self.stats.bytes_read += buf.len() as u64;
        }
        let t = self.charge(t);
        self.stats.reads += 1;
        self.stats.read_time += t;
        r
    }

    fn write(&mut self, track: u64, offset: u32, data: &[u8]) -> Result<()> {
        let r = self.inner.write(track, offset, data);
        let t = if r.is_ok() {
            self.stats.bytes_written += data.len() as u64;
            let p = self.physical(track, offset);
            self.mech.access(self.now, p, data.len() as u64, true)
        } else {
            self.overhead()
        };
        let t = self.charge(t);
        self.stats.writes += 1;
        self.stats.write_time += t;
        r
    }

    fn flush(&mut self) -> Result<()> {
        let r = self.inner.flush();
        let t = self.overhead();
        let t = self.charge(t);
        self.stats.flushes += 1;
        self.stats.flush_time += t;
        r
    }

    fn is_poisoned(&self, track: u64) -> bool {
        self.inner.is_poisoned(track)
    }

    fn name(&self) -> String {
        self.inner.name()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::medium::{MediumZone, MemMedium};

    #[test]
    fn a_sequential_continuation_streams_and_the_clock_sums_the_service_times() {
        let g = Geometry {
            zones: vec![MediumZone { tracks: 8, track_bytes: 1 << 20 }],
            head_width: 2,
            unshingled_tracks: 0,
        };
        let mut m = Timed::new(MemMedium::new(g).unwrap(), &HddConfig::cmr_7200_500g()).unwrap();
        let buf = vec![1u8; 1 << 20];
        m.write(0, 0, &buf).unwrap();
        m.write(1, 0, &buf).unwrap();
        // 1 MiB at 150 MB/s ≈ 7 ms + 0.2 ms overhead, no seek or rotation
        let streaming = m.last().as_millis_f64();
        assert!(streaming < 8.0, "{streaming}");
        let mut small = [0u8; 4096];
        assert!(m.read(2, 0, &mut small).is_err(), "poisoned");
        assert!(m.read(99, 0, &mut small).is_err(), "out of range");
        assert!(m.last().as_millis_f64() < 0.3, "overhead only");
        m.flush().unwrap();
        let s = m.stats();
        assert_eq!((s.reads, s.writes, s.flushes, s.bytes_written), (2, 2, 1, 2 << 20));
        assert_eq!(m.elapsed(), s.read_time + s.write_time + s.flush_time);
        let small_hdd = HddConfig { capacity: ByteSize::gb(1), ..HddConfig::cmr_7200_500g() };
        let big = Geometry {
            zones: vec![MediumZone { tracks: 2000, track_bytes: 1 << 20 }],
            ..m.geometry().clone()
        };
        let e = Timed::new(MemMedium::new(big).unwrap(), &small_hdd).unwrap_err().to_string();
        assert!(e.contains("hdd.capacity") && e.contains("smaller than the medium"), "{e}");
    }
}
