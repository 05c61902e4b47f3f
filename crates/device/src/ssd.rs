//! Flash SSD used as the cache device: a fixed access latency plus a bandwidth term per request.
//!
//! Cost of one request of `b` bytes: `latency + b / bandwidth`, with separate read and write
//! figures. The model is stateless: no queueing, no internal parallelism, no garbage collection,
//! no write cliff. That is enough for the papers' question (how much time the cache level adds
//! next to a disk whose operations cost milliseconds); do not use it to study SSD behaviour.
//!
//! Defaults follow an Intel DC P4500 2 TB NVMe drive (Lenovo Press product guide for the Intel
//! P4500, "Technical specifications" table: random 4 KB read latency 85 µs, random write latency
//! 20 µs, sequential read 3.2 GB/s, sequential write 1.05 GB/s), a PCIe data-centre SSD of the
//! class both papers used (PORE: "a 240GB PCIe SSD"; SAC: "an 800GB PCIe SSD").
//! The named SSD profiles (`nvme`, the default, and `sata`) are in [`crate::profiles`].

use crate::error::{invalid, Result};
use crate::{Drive, DriveStats};
use serde::{Deserialize, Serialize};
use shingled_core::{BlockNo, Nanos, BLOCK_SIZE};

/// Parameters of the [`Ssd`] model.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SsdConfig {
    /// Per-request read latency in microseconds. Default 85 (P4500 random 4 KB read);
    /// bounds 0 ..= 100,000.
    pub read_latency_us: f64,
    /// Per-request write latency in microseconds. Default 20 (P4500 random 4 KB write; the
    /// drive's DRAM absorbs it); bounds 0 ..= 100,000.
    pub write_latency_us: f64,
    /// Read bandwidth in MB/s (10^6 bytes per second). Default 3200; bounds (0, 100,000].
    pub read_bandwidth_mb_s: f64,
    /// Write bandwidth in MB/s. Default 1050; bounds (0, 100,000].
    pub write_bandwidth_mb_s: f64,
}

impl Default for SsdConfig {
    fn default() -> Self {
        SsdConfig::nvme()
    }
}

impl SsdConfig {
    /// Checks every field against its documented bounds.
    pub fn validate(&self) -> Result<()> {
        for (field, v) in
            [("read_latency_us", self.read_latency_us), ("write_latency_us", self.write_latency_us)]
        {
            if !(v.is_finite() && (0.0..=100_000.0).contains(&v)) {
                return Err(invalid(field, v, "expected microseconds in 0 ..= 100000"));
            }
        }
        for (field, v) in [
            ("read_bandwidth_mb_s", self.read_bandwidth_mb_s),
            ("write_bandwidth_mb_s", self.write_bandwidth_mb_s),
        ] {
            if !(v.is_finite() && v > 0.0 && v <= 100_000.0) {
                return Err(invalid(field, v, "expected MB/s in (0, 100000]"));
            }
        }
        Ok(())
    }

    /// Validates and builds the model.
    pub fn build(&self) -> Result<Ssd> {
        self.validate().map_err(|e| e.within("ssd"))?;
        Ok(Ssd::new(self))
    }
}

/// The SSD model. Build it with [`SsdConfig::build`].
#[derive(Clone, Debug)]
pub struct Ssd {
    read_latency_ns: f64,
    write_latency_ns: f64,
    /// Nanoseconds per 4 KiB block.
    read_ns_per_block: f64,
    write_ns_per_block: f64,
    /// The costs of one block, the common case (a cache's slot I/O), computed once.
    read_one: Nanos,
    write_one: Nanos,
    stats: DriveStats,
}

impl Ssd {
    fn new(cfg: &SsdConfig) -> Ssd {
        let per_block = |mb_s: f64| BLOCK_SIZE as f64 / (mb_s * 1e6) * 1e9;
        let (read_latency_ns, write_latency_ns) = (cfg.read_latency_us * 1e3, cfg.write_latency_us * 1e3);
        let (read_ns_per_block, write_ns_per_block) =
            (per_block(cfg.read_bandwidth_mb_s), per_block(cfg.write_bandwidth_mb_s));
        Ssd {
            read_latency_ns,
            write_latency_ns,
            read_ns_per_block,
            write_ns_per_block,
            read_one: cost(read_latency_ns, read_ns_per_block, 1),
            write_one: cost(write_latency_ns, write_ns_per_block, 1),
            stats: DriveStats::default(),
        }
    }

    /// Cost of one read of `nblocks` blocks, without recording it.
    #[inline]
    pub fn read_cost(&self, nblocks: u32) -> Nanos {
        if nblocks == 1 {
            return self.read_one;
        }
        cost(self.read_latency_ns, self.read_ns_per_block, nblocks)
    }

    /// Cost of one write of `nblocks` blocks, without recording it.
    #[inline]
    pub fn write_cost(&self, nblocks: u32) -> Nanos {
        if nblocks == 1 {
            return self.write_one;
        }
        cost(self.write_latency_ns, self.write_ns_per_block, nblocks)
    }
}

/// Never zero: a request always takes at least one nanosecond, so "every cost > 0" holds even
/// for a zero-latency configuration.
#[inline]
fn cost(latency: f64, per_block: f64, nblocks: u32) -> Nanos {
    Nanos(((latency + per_block * nblocks as f64).round() as u64).max(1))
}

impl Drive for Ssd {
    #[inline]
    fn read(&mut self, _now: Nanos, _block: BlockNo, nblocks: u32) -> Nanos {
        let t = self.read_cost(nblocks);
        self.stats.read_ops += 1;
        self.stats.blocks_read += nblocks as u64;
        self.stats.read_time += t;
        t
    }

    #[inline]
    fn write(&mut self, _now: Nanos, _block: BlockNo, nblocks: u32) -> Nanos {
        let t = self.write_cost(nblocks);
        self.stats.write_ops += 1;
        self.stats.blocks_written += nblocks as u64;
        self.stats.write_time += t;
        t
    }

    fn stats(&self) -> DriveStats {
        self.stats
    }

    fn kind(&self) -> &'static str {
        "ssd"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cost_is_latency_plus_transfer() {
        let mut s = SsdConfig::default().build().unwrap();
        // 85 µs + 4096 B / 3.2 GB/s = 85,000 + 1,280 ns
        assert_eq!(s.read(Nanos(0), 0, 1), Nanos(86_280));
        // 20 µs + 8 × 4096 B / 1.05 GB/s = 20,000 + 31,208 ns (rounded)
        assert_eq!(s.write(Nanos(0), 0, 8), Nanos(51_208));
        let st = s.stats();
        assert_eq!((st.read_ops, st.write_ops, st.blocks_read, st.blocks_written), (1, 1, 1, 8));
        assert_eq!(st.read_time + st.write_time, Nanos(86_280 + 51_208));
    }

    #[test]
    fn validate_names_the_field() {
        let cfg = SsdConfig { write_bandwidth_mb_s: 0.0, ..SsdConfig::default() };
        let e = cfg.validate().unwrap_err().to_string();
        assert!(e.contains("write_bandwidth_mb_s"), "{e}");
        let cfg = SsdConfig { read_latency_us: f64::NAN, ..SsdConfig::default() };
        assert!(cfg.validate().unwrap_err().to_string().contains("read_latency_us"));
    }
}
