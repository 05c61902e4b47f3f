//! What a replay records per kind of request: latency histograms, bytes, and their summary.

use serde::{Deserialize, Serialize};
use shingled_core::{Nanos, Op};
use shingled_sim::{Histogram, LatencySummary};
use shingled_stl::BLOCK;

/// Requests, bytes and latencies of one kind of request.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct OpStats {
    /// Requests.
    pub requests: u64,
    /// Bytes moved (whole 4 KiB blocks).
    pub bytes: u64,
    /// Sum of the latencies, seconds.
    pub total_latency_s: f64,
    /// Latency percentiles, milliseconds.
    pub latency: LatencySummary,
    /// The latency CDF as `(ms, fraction)` points (with `cdf`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cdf: Vec<(f64, f64)>,
}

/// Latency histograms of reads and writes, and their bytes.
#[derive(Clone, Debug, Default)]
pub(crate) struct Recorder {
    pub(crate) reads: Histogram,
    pub(crate) writes: Histogram,
    pub(crate) read_bytes: u64,
    pub(crate) write_bytes: u64,
}

impl Recorder {
    pub(crate) fn record(&mut self, op: Op, blocks: u64, latency: Nanos) {
        let bytes = blocks * BLOCK as u64;
        match op {
            Op::Read => {
                self.reads.record(latency);
                self.read_bytes += bytes;
            }
            Op::Write => {
                self.writes.record(latency);
                self.write_bytes += bytes;
            }
        }
    }

    pub(crate) fn merge(&mut self, o: &Recorder) {
        self.reads.merge(&o.reads);
        self.writes.merge(&o.writes);
        self.read_bytes += o.read_bytes;
        self.write_bytes += o.write_bytes;
    }

    pub(crate) fn stats(&self, cdf: bool) -> [OpStats; 3] {
        let mut all = self.reads.clone();
        all.merge(&self.writes);
        let one = |h: &Histogram, bytes: u64| {
            let latency = h.summary();
            OpStats {
                requests: h.count(),
                bytes,
                total_latency_s: latency.mean_ms * h.count() as f64 / 1e3,
                latency,
                cdf: if cdf && h.count() > 0 { h.cdf() } else { Vec::new() },
            }
        };
        [
            one(&all, self.read_bytes + self.write_bytes),
            one(&self.reads, self.read_bytes),
            one(&self.writes, self.write_bytes),
        ]
    }
}
