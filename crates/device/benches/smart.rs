//! Throughput of the SMaRT model (`smart-cheetah` profile: Cheetah 15K.5, 14 zones, 142 GB
//! shingled), in 4 KiB block requests per second of wall time, timing model included. Run in
//! release:
//!
//! ```text
//! cargo bench -p shingled-device --bench smart
//! ```
//!
//! One row per case; results, with the machine and command, are kept in
//! `docs/drive-models.md`. Closed loop (each request issued at the previous completion),
//! addresses from an inline SplitMix64.

use shingled_core::Nanos;
use shingled_device::{profile, BuildContext, DriveConfig};
use std::hint::black_box;
use std::time::Instant;

struct Case {
    name: &'static str,
    utilisation: f64,
    /// Random addresses in the first `span` of the capacity (fraction).
    span: f64,
    /// Share of the requests (percent) that go to the first 20% of the span (0: uniform).
    hot_pct: u64,
    read_pct: u64,
    /// Blocks per request.
    len: u32,
    sequential: bool,
    ops: u64,
}

fn main() {
    let filter: Option<String> = std::env::args().skip(1).find(|a| !a.starts_with('-'));
    let cases = [
        Case {
            name: "random 1-block writes, U 0.3",
            utilisation: 0.3,
            span: 1.0,
            hot_pct: 0,
            read_pct: 0,
            len: 1,
            sequential: false,
            ops: 4_000_000,
        },
        Case {
            name: "random 1-block writes, U 0.6",
            utilisation: 0.6,
            span: 1.0,
            hot_pct: 0,
            read_pct: 0,
            len: 1,
            sequential: false,
            ops: 4_000_000,
        },
        Case {
            name: "random 1-block writes, U 0.9",
            utilisation: 0.9,
            span: 1.0,
            hot_pct: 0,
            read_pct: 0,
            len: 1,
            sequential: false,
            ops: 2_000_000,
        },
        Case {
            name: "70% write / 30% read, 1 block, U 0.6",
            utilisation: 0.6,
            span: 1.0,
            hot_pct: 0,
            read_pct: 30,
            len: 1,
            sequential: false,
            ops: 4_000_000,
        },
        Case {
            name: "80% of 1-block writes to 20% of the space, U 0.6",
            utilisation: 0.6,
            span: 1.0,
            hot_pct: 80,
            read_pct: 0,
            len: 1,
            sequential: false,
            ops: 4_000_000,
        },
        Case {
            name: "80/20 skew, 70% write / 30% read, 8 blocks, U 0.6",
            utilisation: 0.6,
            span: 1.0,
            hot_pct: 80,
            read_pct: 30,
            len: 8,
            sequential: false,
            ops: 1_000_000,
        },
        Case {
            name: "random 1-block writes in 1% of the space, U 0.6",
            utilisation: 0.6,
            span: 0.01,
            hot_pct: 0,
            read_pct: 0,
            len: 1,
            sequential: false,
            ops: 4_000_000,
        },
        Case {
            name: "random 1-block reads, U 0.6",
            utilisation: 0.6,
            span: 1.0,
            hot_pct: 0,
            read_pct: 100,
            len: 1,
            sequential: false,
            ops: 4_000_000,
        },
        Case {
            name: "sequential 64-block writes, U 0.6",
            utilisation: 0.6,
            span: 1.0,
            hot_pct: 0,
            read_pct: 0,
            len: 64,
            sequential: true,
            ops: 200_000,
        },
    ];
    println!(
        "{:<48} {:>10} {:>12} {:>10} {:>10} {:>9} {:>9}",
        "case", "requests", "M blk req/s", "GC_F", "moved", "in place", "out"
    );
    for c in &cases {
        if filter.as_deref().is_some_and(|f| !c.name.contains(f)) {
            continue;
        }
        let mut cfg = profile("smart-cheetah").expect("profile");
        if let DriveConfig::Smart(s) = &mut cfg {
            s.utilisation = c.utilisation;
        }
        let mut d = cfg.build(&BuildContext::default()).expect("builds");
        let cap = d.capacity_blocks();
        let span = ((cap as f64 * c.span) as u64).max(c.len as u64 + 1);
        let mut rng = shingled_core::SplitMix64::new(1);
        let mut now = Nanos(0);
        let mut seq = 0u64;
        let t0 = Instant::now();
        for _ in 0..c.ops {
            let x = rng.next_u64();
            let b = if c.sequential {
                seq = (seq + c.len as u64) % (span - c.len as u64);
                seq
            } else {
                let hot = (x >> 8) % 100 < c.hot_pct;
                let range = if hot { (span / 5).max(c.len as u64 + 1) } else { span };
                (x >> 16) % (range - c.len as u64)
            };
            now += if x % 100 < c.read_pct { d.read(now, b, c.len) } else { d.write(now, b, c.len) };
        }
        let secs = t0.elapsed().as_secs_f64();
        black_box(now);
        let s = d.stats();
        let blk_reqs = c.ops as f64 * c.len as f64;
        println!(
            "{:<48} {:>10} {:>12.2} {:>10} {:>10} {:>9} {:>9}",
            c.name,
            c.ops,
            blk_reqs / secs / 1e6,
            s.stl.gc_ondemand,
            s.stl.gc_tracks_moved,
            s.stl.in_place_updates,
            s.stl.out_of_place_updates
        );
    }
}
