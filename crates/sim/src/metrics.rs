//! What a replay measures, and the derived figures reports print.

use crate::histogram::{Histogram, LatencySummary};
use serde::{Deserialize, Serialize};
use shingled_core::Nanos;
use shingled_device::DriveStats;

/// Raw counters of a replay window. Block counts are 4 KiB blocks; request counts are trace
/// requests. All are cumulative; [`Counters::since`] gives a window.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Counters {
    /// Trace requests processed (not counting skipped ones).
    pub requests: u64,
    /// Read requests processed.
    pub read_requests: u64,
    /// Write requests processed.
    pub write_requests: u64,
    /// Requests dropped by the mode (reads in write-only mode).
    pub skipped_requests: u64,
    /// Block reads requested by the host.
    pub blocks_read: u64,
    /// Block writes requested by the host.
    pub blocks_written: u64,
    /// Block reads served by the SSD cache.
    pub read_hits: u64,
    /// Block writes that found their block already cached.
    pub write_hits: u64,
    /// Blocks read from the SSD (hits and write-back reads).
    pub ssd_blocks_read: u64,
    /// Blocks written to the SSD (fills and cached writes).
    pub ssd_blocks_written: u64,
    /// Blocks the host side read from the drive (misses, pass-through reads).
    pub drive_blocks_read: u64,
    /// Blocks the host side wrote to the drive (write-backs, pass-through writes).
    pub drive_blocks_written: u64,
    /// Dirty blocks evicted (each written back to the drive).
    pub dirty_evictions: u64,
    /// Clean blocks evicted (dropped).
    pub clean_evictions: u64,
    /// Modelled time of SSD reads.
    pub ssd_read_time: Nanos,
    /// Modelled time of SSD writes.
    pub ssd_write_time: Nanos,
    /// Modelled time of drive reads.
    pub drive_read_time: Nanos,
    /// Modelled time of drive writes, including the persistent-buffer cleaning they wait for.
    pub drive_write_time: Nanos,
    /// What happened inside the drive (PB writes, RMWs, band bytes).
    pub drive: DriveStats,
    /// Open loop: time I/Os waited for the SSD to be free (0 in closed loop).
    #[serde(default)]
    pub ssd_queue_time: Nanos,
    /// Open loop: time I/Os waited for the drive to be free (0 in closed loop).
    #[serde(default)]
    pub drive_queue_time: Nanos,
    /// When the window's first request arrived (closed loop: started).
    #[serde(default)]
    pub first_arrival: Nanos,
    /// When the last request completed so far.
    #[serde(default)]
    pub last_completion: Nanos,
}

impl Counters {
    /// `self - earlier`.
    pub fn since(&self, e: &Counters) -> Counters {
        Counters {
            requests: self.requests - e.requests,
            read_requests: self.read_requests - e.read_requests,
            write_requests: self.write_requests - e.write_requests,
            skipped_requests: self.skipped_requests - e.skipped_requests,
            blocks_read: self.blocks_read - e.blocks_read,
            blocks_written: self.blocks_written - e.blocks_written,
            read_hits: self.read_hits - e.read_hits,
            write_hits: self.write_hits - e.write_hits,
            ssd_blocks_read: self.ssd_blocks_read - e.ssd_blocks_read,
            ssd_blocks_written: self.ssd_blocks_written - e.ssd_blocks_written,
            drive_blocks_read: self.drive_blocks_read - e.drive_blocks_read,
            drive_blocks_written: self.drive_blocks_written - e.drive_blocks_written,
            dirty_evictions: self.dirty_evictions - e.dirty_evictions,
            clean_evictions: self.clean_evictions - e.clean_evictions,
            ssd_read_time: self.ssd_read_time - e.ssd_read_time,
            ssd_write_time: self.ssd_write_time - e.ssd_write_time,
            drive_read_time: self.drive_read_time - e.drive_read_time,
            drive_write_time: self.drive_write_time - e.drive_write_time,
            drive: self.drive.since(&e.drive),
            ssd_queue_time: self.ssd_queue_time - e.ssd_queue_time,
            drive_queue_time: self.drive_queue_time - e.drive_queue_time,
            // The window starts where the earlier snapshot's last request completed.
            first_arrival: e.last_completion,
            last_completion: self.last_completion,
        }
    }

    /// Modelled time from the window's first arrival to its last completion (closed loop: the
    /// total I/O time; open loop: the replay's span, idle gaps included).
    pub fn span(&self) -> Nanos {
        self.last_completion - self.first_arrival.min(self.last_completion)
    }

    /// Total modelled I/O time: the four levels added (closed loop, one I/O at a time).
    pub fn total_time(&self) -> Nanos {
        self.ssd_read_time + self.ssd_write_time + self.drive_read_time + self.drive_write_time
    }
}

/// Counters plus the derived figures, as reports print them.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Metrics {
    /// The raw counters.
    #[serde(flatten)]
    pub counters: Counters,
    /// Read hits / block reads (`None` without reads).
    pub read_hit_ratio: Option<f64>,
    /// Write hits / block writes.
    pub write_hit_ratio: Option<f64>,
    /// All hits / all block accesses.
    pub hit_ratio: Option<f64>,
    /// WA, PORE §V-C's write amplification: band bytes written / bytes cleaned out of the PB,
    /// i.e. bytes each cleaning rewrote per PB byte it merged (`None` before any cleaning or
    /// without an SMR drive). It measures how well cleanings are batched, not the drive's
    /// total writing: see `device_write_amplification`.
    pub write_amplification: Option<f64>,
    /// Device-level write amplification: bytes the drive wrote to its media (host writes or PB
    /// appends, destages, band rewrites, GC moves: `drive.media_bytes_written`) / bytes the
    /// application wrote (the trace's write requests, 4 KiB blocks × 4096). A cache lowers it
    /// by absorbing rewrites (and by the dirty blocks it still holds at the end). `None`
    /// without writes.
    #[serde(default)]
    pub device_write_amplification: Option<f64>,
    /// Total modelled I/O time in seconds.
    pub total_time_s: f64,
    /// SSD read time in seconds.
    pub ssd_read_time_s: f64,
    /// SSD write time in seconds.
    pub ssd_write_time_s: f64,
    /// Drive read time in seconds.
    pub drive_read_time_s: f64,
    /// Drive write time in seconds.
    pub drive_write_time_s: f64,
    /// Per-request latency (open loop: response time, completion − arrival, queueing included).
    pub latency: LatencySummary,
    /// Open loop: seconds I/Os waited for the SSD.
    #[serde(default)]
    pub ssd_queue_time_s: f64,
    /// Open loop: seconds I/Os waited for the drive.
    #[serde(default)]
    pub drive_queue_time_s: f64,
    /// Seconds from the first arrival to the last completion.
    #[serde(default)]
    pub span_s: f64,
}

fn ratio(a: u64, b: u64) -> Option<f64> {
    (b > 0).then(|| a as f64 / b as f64)
}

impl Metrics {
    /// Derives the figures from counters and the request-latency histogram of the same window.
    pub fn new(c: Counters, latency: &Histogram) -> Metrics {
        Metrics {
            read_hit_ratio: ratio(c.read_hits, c.blocks_read),
            write_hit_ratio: ratio(c.write_hits, c.blocks_written),
            hit_ratio: ratio(c.read_hits + c.write_hits, c.blocks_read + c.blocks_written),
            write_amplification: c.drive.write_amplification(),
            device_write_amplification: c
                .drive
                .device_write_amplification(c.blocks_written * shingled_core::BLOCK_SIZE),
            total_time_s: c.total_time().as_secs_f64(),
            ssd_read_time_s: c.ssd_read_time.as_secs_f64(),
            ssd_write_time_s: c.ssd_write_time.as_secs_f64(),
            drive_read_time_s: c.drive_read_time.as_secs_f64(),
            drive_write_time_s: c.drive_write_time.as_secs_f64(),
            latency: latency.summary(),
            ssd_queue_time_s: c.ssd_queue_time.as_secs_f64(),
            drive_queue_time_s: c.drive_queue_time.as_secs_f64(),
            span_s: c.span().as_secs_f64(),
            counters: c,
        }
    }
}
