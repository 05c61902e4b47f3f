//! The CMR drive's volatile write cache: cached extents, SPTF destaging in the mechanism's idle
//! time, and the cached read and write paths of [`Hdd`] (the policy is documented on the parent
//! module).

use super::mechanism::ceil_u64;
use super::{Hdd, WriteCacheConfig};
use shingled_core::Nanos;

/// The state of an enabled write cache.
#[derive(Clone, Debug)]
pub(super) struct WriteCache {
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
    /// An empty cache of `wc`'s size.
    pub(super) fn new(wc: &WriteCacheConfig) -> WriteCache {
        WriteCache {
            max_extents: wc.max_extents as usize,
            capacity: wc.capacity.0,
            ns_per_byte: 1e3 / wc.interface_mb_s,
            dirty: Vec::with_capacity(wc.max_extents as usize),
            dirty_bytes: 0,
        }
    }

    /// When the earliest cached extent arrived.
    fn first_arrival(&self) -> Option<u64> {
        self.dirty.iter().map(|e| e.2).min()
    }
}

impl Hdd {
    /// Extents waiting in the write cache (0 when it is off).
    pub fn cached_extents(&self) -> usize {
        self.cache.as_ref().map_or(0, |c| c.dirty.len())
    }

    /// Destages the cached extent with the shortest positioning time, starting no earlier than
    /// `at`. Returns `false` if the cache is empty.
    pub(super) fn destage_one(&mut self, at: u64) -> bool {
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
        let before = self.stats.time;
        while let Some(first) = self.cache.as_ref().and_then(WriteCache::first_arrival) {
            let at = self.mech.busy_until().0.max(first);
            if at >= now {
                break;
            }
            self.destage_one(at);
        }
        // Started before the request arrived: background work, in no request's time.
        self.stats.background = self.stats.background.plus(&self.stats.time.since(&before));
    }

    /// A write through the cache; returns the completion time.
    pub(super) fn cached_write(&mut self, now: u64, offset: u64, bytes: u64) -> u64 {
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
            let arrived = ceil_u64(ready as f64 + self.mech.overhead_ns() + bytes as f64 * c.ns_per_byte);
            c.dirty.push((offset, bytes, arrived));
            c.dirty_bytes += bytes;
        } else {
            self.stats.cache_write_hits += 1;
        }
        let c = self.cache.as_mut().expect("cache on");
        let done =
            ceil_u64(ready as f64 + self.mech.overhead_ns() + bytes as f64 * c.ns_per_byte).max(ready + 1);
        self.stats.time.cache += Nanos(done - ready);
        self.stats.time.host_wait += Nanos(start - now);
        self.host_free = done;
        done
    }

    /// A read with the cache on; returns the completion time.
    pub(super) fn cached_read(&mut self, now: u64, offset: u64, bytes: u64) -> u64 {
        self.catch_up(now);
        let start = now.max(self.host_free);
        let c = self.cache.as_ref().expect("cache on");
        let hit = c.dirty.iter().any(|&(o, b, _)| o <= offset && offset + bytes <= o + b);
        self.stats.time.host_wait += Nanos(start - now);
        let done = if hit {
            self.stats.cache_read_hits += 1;
            let done = ceil_u64(start as f64 + self.mech.overhead_ns() + bytes as f64 * c.ns_per_byte)
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
}

#[cfg(test)]
mod tests {
    use crate::hdd::{Hdd, HddConfig, WriteCacheConfig};
    use crate::Drive;
    use shingled_core::Nanos;

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
        let fg_destage = d.stats().time.destage;
        d.idle(now, now + Nanos(1_000_000_000));
        assert_eq!(d.cached_extents(), 0);
        // 25 distinct 4 KiB writes reached the platters once each; the absorbed rewrite did not.
        assert_eq!(d.stats().media_bytes_written, 25 * 4096);
        // The idle destages are background work, in no request's time.
        let s = d.stats();
        assert!(s.background.destage > Nanos::ZERO);
        assert!(s.time.destage - s.background.destage <= fg_destage, "{s:?}");
        assert_eq!(s.foreground().causes(), s.read_time + s.write_time);
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
}
