//! Throughput of the DM-SMR model, in 4 KiB block operations per second of wall time, timing
//! model included. Run in release:
//!
//! ```text
//! cargo bench -p shingled-device --bench dm_smr
//! ```
//!
//! Prints one row per case; results, with the machine and command, are kept in
//! `docs/drive-models.md`. Single-block requests, closed loop (each issued at the previous
//! completion), addresses from an inline SplitMix64 so the generator costs ~1 ns.

use shingled_core::{BandConfig, ByteSize, Nanos, SizeSpec, BLOCK_SIZE};
use shingled_device::{BuildContext, DmSmrConfig, Drive, HddConfig, PbFlavour, PbFree};
use std::hint::black_box;
use std::time::Instant;

struct Case {
    name: &'static str,
    cfg: DmSmrConfig,
    /// Random addresses are drawn from `[0, span)` blocks.
    span: u64,
    /// Percentage of reads.
    read_pct: u64,
    ops: u64,
}

fn case(
    name: &'static str,
    span_blocks: u64,
    pb_blocks: u64,
    bands: BandConfig,
    (flavour, free): (PbFlavour, PbFree),
    read_pct: u64,
    ops: u64,
) -> Case {
    let cfg = DmSmrConfig {
        capacity: ByteSize::gb(1000),
        pb_size: SizeSpec::Absolute(ByteSize(pb_blocks * BLOCK_SIZE)),
        pb_flavour: flavour,
        pb_free: free,
        bands,
        mechanism: HddConfig::archive_5900_5tb(),
        ..DmSmrConfig::default()
    };
    Case { name, cfg, span: span_blocks, read_pct, ops }
}

fn main() {
    let mib20 = BandConfig::Fixed { size: ByteSize(20_480_000) };
    let uniform = BandConfig::UniformRandom { min: ByteSize::mb(17), max: ByteSize::mb(36), seed: 1 };
    let lba = BandConfig::LbaDependent { outer: ByteSize::mb(36), inner: ByteSize::mb(17) };
    let (ao, ip) = (PbFlavour::AppendOnly, PbFlavour::InPlace);
    let (imm, head) = (PbFree::Immediate, PbFree::AtHead);
    // PORE Table I scale: a 20 GB written range (prn), PB = 1/256 of it = 19,073 slots.
    let gb20 = ByteSize::gb(20).blocks();
    let pb20 = gb20 / 256;
    // PORE §V-G scale: a 1 TB written range, PB 1/256 = 953,674 slots (3.9 GB).
    let tb1 = ByteSize::gb(1000).blocks() - 1;
    let pb1t = tb1 / 256;
    let cases = [
        // Writes that never clean: 16 Ki blocks rewritten inside a PB of 19 Ki slots.
        case(
            "write, no cleaning, append-only/immediate",
            16_384,
            pb20,
            uniform.clone(),
            (ao, imm),
            0,
            40_000_000,
        ),
        case(
            "write, no cleaning, in-place/at-head",
            16_384,
            pb20,
            uniform.clone(),
            (ip, head),
            0,
            40_000_000,
        ),
        // Random writes over 20 GB with PB = 1/256: one RMW every 20 (at-head) to 50 writes.
        case(
            "write, 20 GB range, PB 1/256, append-only/immediate",
            gb20,
            pb20,
            uniform.clone(),
            (ao, imm),
            0,
            20_000_000,
        ),
        case(
            "write, 20 GB range, PB 1/256, append-only/at-head",
            gb20,
            pb20,
            mib20.clone(),
            (ao, head),
            0,
            20_000_000,
        ),
        case(
            "write, 20 GB range, PB 1/256, in-place/at-head",
            gb20,
            pb20,
            mib20.clone(),
            (ip, head),
            0,
            20_000_000,
        ),
        case(
            "70% write / 30% read, 20 GB, PB 1/256, LBA-dependent",
            gb20,
            pb20,
            lba.clone(),
            (ao, head),
            30,
            20_000_000,
        ),
        case("read only, 20 GB range", gb20, pb20, uniform.clone(), (ao, imm), 100, 20_000_000),
        // Cleaning-heavy: PB = 1/4096 of the range, one RMW every 2 writes.
        case("write, 20 GB range, PB 1/4096", gb20, gb20 / 4096, mib20, (ao, head), 0, 5_000_000),
        // A large PB whose tables do not fit in cache: memory-latency bound.
        case("write, 1 TB range, PB 1/256 (3.9 GB)", tb1, pb1t, lba, (ao, imm), 0, 10_000_000),
    ];

    // `cargo bench -p shingled-device --bench dm_smr -- <text>` runs the cases whose name
    // contains <text>.
    let filter: Option<String> = std::env::args().skip(1).find(|a| !a.starts_with('-'));
    println!("| case | block ops | wall s | M block ops/s | RMWs | WA | modelled s |");
    println!("|---|---:|---:|---:|---:|---:|---:|");
    for c in cases {
        if filter.as_ref().is_some_and(|f| !c.name.contains(f.as_str())) {
            continue;
        }
        let mut d = c.cfg.build(&BuildContext::default()).expect("bench config builds");
        // Fill the PB first, so that every case is measured in its steady state.
        let mut rng = shingled_core::SplitMix64::new(42);
        let mut now = Nanos(0);
        for _ in 0..d.pb_capacity_blocks() * 2 {
            now += d.write(now, (rng.next_u64() >> 8) % c.span, 1);
        }
        let before = d.stats();
        let t0 = Instant::now();
        for _ in 0..c.ops {
            let r = rng.next_u64();
            let block = (r >> 8) % c.span;
            let t = if (r & 0xff) * 100 < c.read_pct * 256 {
                d.read(now, block, 1)
            } else {
                d.write(now, block, 1)
            };
            now += t;
        }
        let wall = t0.elapsed().as_secs_f64();
        let s = black_box(d.stats()).since(&before);
        let wa = s.write_amplification().map_or("-".to_string(), |w| format!("{w:.1}"));
        println!(
            "| {} | {} | {:.2} | {:.1} | {} | {} | {:.0} |",
            c.name,
            c.ops,
            wall,
            c.ops as f64 / wall / 1e6,
            s.rmws,
            wa,
            (s.read_time + s.write_time).as_secs_f64()
        );
    }
}
