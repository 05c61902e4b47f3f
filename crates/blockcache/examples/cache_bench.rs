//! Wall-clock benchmark of the block cache's data path: throughput (MiB/s, IOPS) of four
//! workloads on a plain file device ([`FileBlock`]) and on a [`CachedDevice`] over two of
//! them (a cache file and a backing file), for a few policies.
//!
//! ```text
//! cargo run --release -p shingled-blockcache --example cache_bench -- [--dir DIR]
//!     [--backing 1GiB] [--cache 256MiB] [--working-set 512MiB] [--policies lru,pore,sac]
//!     [--mode read-write] [--pb SIZE] [--ops 200000] [--max-seconds 10] [--seed 1] [--no-bare]
//!     [--json]
//! ```
//!
//! The cache is formatted with [`CachedDevice::format`] and default [`CacheOptions`] (as many
//! slots as the cache file holds, 1/64 of them kept as the reserve); the SMR-aware policies
//! (PORE, SAC) are given the simulator's default drive layout: uniform 17–36 MB bands and a
//! persistent buffer of 1/256 of the working set (`--pb`).
//!
//! Per target (the bare backing file, then a cached device per policy), on freshly created
//! sparse files in a temporary directory under `--dir` (default: `$TMPDIR`, else `/tmp`),
//! removed at the end, in this order:
//!
//! 1. `seq-write-1M`: the working set `[0, --working-set)` written once in 1 MiB requests;
//!    this is also the prefill that makes the later reads read real data;
//! 2. `seq-read-1M`: the working set read once in 1 MiB requests;
//! 3. `rand-read-4K`: `--ops` uniformly random 4 KiB reads over the working set;
//! 4. `rand-write-4K`: `--ops` uniformly random 4 KiB writes over the working set.
//!
//! A write phase ends with [`BlockDevice::flush`] (`fdatasync` of the files; a metadata commit
//! of the cache), and its time counts in the throughput (shown separately too). A random phase
//! stops early after `--max-seconds`. Every block written carries its block number in its first
//! 8 bytes and every read checks it, so a read that returns wrong data stops the run. The
//! random sequence is the same for every target (`--seed`). Hit ratios come from
//! [`CachedDevice::stats`] (hits / (hits + misses) over the phase's blocks), and so is the
//! `commits` column: metadata commits in the phase, the closing flush's and those the cache
//! forced when its free-slot reserve ran out (each with `fdatasync`s of both files), which is
//! why a cached write phase's closing flush can be short.
//!
//! The files are ordinary buffered files: reads and writes are served by the page cache, so
//! apart from the flushes (which do reach the disk under `--dir`) the figures measure this
//! code's CPU and system-call overhead over the page cache, not a disk or an SSD.

use clap::Parser;
use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64;
use serde::Serialize;
use shingled_blockcache::{CacheOptions, CacheSetup, CachedDevice, Mode, Stats};
use shingled_core::{BandConfig, ByteSize};
use shingled_stl::{BlockDevice, FileBlock, BLOCK};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

type Res<T> = std::result::Result<T, Box<dyn std::error::Error>>;

const MIB: u64 = 1 << 20;

/// Wall-clock throughput of the block cache's data path over buffered files.
#[derive(Parser, Debug)]
#[command(name = "cache_bench")]
struct Args {
    /// Directory for the temporary cache and backing files (default: $TMPDIR, else /tmp).
    #[arg(long)]
    dir: Option<PathBuf>,
    /// Size of the backing device.
    #[arg(long, default_value = "1GiB")]
    backing: ByteSize,
    /// Size of the cache device (slots and their records).
    #[arg(long, default_value = "256MiB")]
    cache: ByteSize,
    /// Blocks the workloads address, from block 0 (written once, then read, sequentially;
    /// the random phases pick blocks uniformly in it).
    #[arg(long, default_value = "512MiB")]
    working_set: ByteSize,
    /// Cache policies, comma separated (names as `CacheSetup::new` takes them).
    #[arg(long, value_delimiter = ',', default_value = "lru,pore,sac")]
    policies: Vec<String>,
    /// Persistent-buffer size given to the SMR-aware policies (PORE's period, SAC's cycle);
    /// default: 1/256 of the working set, as the simulator's default DM-SMR drive sizes its PB
    /// by the written range. The backing file has no PB: this only parameterises the policies.
    #[arg(long)]
    pb: Option<ByteSize>,
    /// Cache mode: read-write, write-only, read-only or write-cache.
    #[arg(long, default_value = "read-write")]
    mode: Mode,
    /// 4 KiB requests per random phase.
    #[arg(long, default_value_t = 200_000)]
    ops: u64,
    /// A random phase stops after this many seconds even if it has not issued --ops requests.
    #[arg(long, default_value_t = 10.0)]
    max_seconds: f64,
    /// Seed of the random block numbers.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Skip the bare backing file.
    #[arg(long)]
    no_bare: bool,
    /// Print JSON instead of the table.
    #[arg(long)]
    json: bool,
}

/// One workload on one target.
#[derive(Clone, Debug, Serialize)]
struct Row {
    target: String,
    workload: &'static str,
    request_bytes: usize,
    requests: u64,
    bytes: u64,
    /// Seconds, the closing flush included.
    seconds: f64,
    /// Seconds of the closing flush (0 for reads).
    flush_seconds: f64,
    mib_per_s: f64,
    iops: f64,
    /// Cached targets: hits / (hits + misses) over the phase's blocks.
    hit_ratio: Option<f64>,
    /// Cached targets: what the cache did during the phase.
    cache: Option<PhaseStats>,
}

/// Counters of [`Stats`] over one phase.
#[derive(Clone, Debug, Default, Serialize)]
struct PhaseStats {
    read_hits: u64,
    read_misses: u64,
    write_hits: u64,
    write_misses: u64,
    clean_evictions: u64,
    dirty_evictions: u64,
    cache_blocks_read: u64,
    cache_blocks_written: u64,
    metadata_blocks_written: u64,
    backing_blocks_read: u64,
    backing_blocks_written: u64,
    commits: u64,
    forced_commits: u64,
}

impl PhaseStats {
    fn between(a: &Stats, b: &Stats) -> PhaseStats {
        PhaseStats {
            read_hits: b.read_hits - a.read_hits,
            read_misses: b.read_misses - a.read_misses,
            write_hits: b.write_hits - a.write_hits,
            write_misses: b.write_misses - a.write_misses,
            clean_evictions: b.clean_evictions - a.clean_evictions,
            dirty_evictions: b.dirty_evictions - a.dirty_evictions,
            cache_blocks_read: b.cache_blocks_read - a.cache_blocks_read,
            cache_blocks_written: b.cache_blocks_written - a.cache_blocks_written,
            metadata_blocks_written: b.metadata_blocks_written - a.metadata_blocks_written,
            backing_blocks_read: b.backing_blocks_read - a.backing_blocks_read,
            backing_blocks_written: b.backing_blocks_written - a.backing_blocks_written,
            commits: b.commits - a.commits,
            forced_commits: b.forced_commits - a.forced_commits,
        }
    }

    fn hit_ratio(&self) -> Option<f64> {
        let hits = self.read_hits + self.write_hits;
        let all = hits + self.read_misses + self.write_misses;
        (all > 0).then(|| hits as f64 / all as f64)
    }
}

enum Target {
    Bare(FileBlock),
    Cached(Box<CachedDevice<FileBlock, FileBlock>>),
}

impl Target {
    fn dev(&mut self) -> &mut dyn BlockDevice {
        match self {
            Target::Bare(d) => d,
            Target::Cached(d) => &mut **d,
        }
    }

    fn stats(&self) -> Option<Stats> {
        match self {
            Target::Bare(_) => None,
            Target::Cached(d) => Some(d.stats()),
        }
    }
}

#[derive(Clone, Copy, PartialEq)]
enum Workload {
    SeqWrite,
    SeqRead,
    RandRead,
    RandWrite,
}

impl Workload {
    const ALL: [Workload; 4] =
        [Workload::SeqWrite, Workload::SeqRead, Workload::RandRead, Workload::RandWrite];

    fn name(self) -> &'static str {
        match self {
            Workload::SeqWrite => "seq-write-1M",
            Workload::SeqRead => "seq-read-1M",
            Workload::RandRead => "rand-read-4K",
            Workload::RandWrite => "rand-write-4K",
        }
    }

    fn request_bytes(self) -> usize {
        match self {
            Workload::SeqWrite | Workload::SeqRead => MIB as usize,
            Workload::RandRead | Workload::RandWrite => BLOCK,
        }
    }

    fn writes(self) -> bool {
        matches!(self, Workload::SeqWrite | Workload::RandWrite)
    }
}

/// Stamps each block of `buf` (starting at block `lba`) with its block number.
fn stamp(buf: &mut [u8], lba: u64) {
    for (i, b) in buf.chunks_exact_mut(BLOCK).enumerate() {
        b[..8].copy_from_slice(&(lba + i as u64).to_le_bytes());
    }
}

/// Checks the stamps [`stamp`] wrote.
fn check(buf: &[u8], lba: u64, target: &str) -> Res<()> {
    for (i, b) in buf.chunks_exact(BLOCK).enumerate() {
        let want = lba + i as u64;
        let got = u64::from_le_bytes(b[..8].try_into().expect("8 bytes"));
        if got != want {
            return Err(format!("{target}: block {want} read back the stamp of block {got}").into());
        }
    }
    Ok(())
}

fn run_phase(t: &mut Target, name: &str, w: Workload, args: &Args, buf: &mut [u8]) -> Res<Row> {
    let ws_blocks = args.working_set.blocks();
    let req = w.request_bytes();
    let req_blocks = (req / BLOCK) as u64;
    let buf = &mut buf[..req];
    let before = t.stats();
    let limit = Duration::from_secs_f64(args.max_seconds);
    let mut rng = Pcg64::seed_from_u64(args.seed ^ w as u64);
    let mut requests = 0u64;
    let start = Instant::now();
    match w {
        Workload::SeqWrite | Workload::SeqRead => {
            let mut lba = 0;
            while lba < ws_blocks {
                let n = req_blocks.min(ws_blocks - lba);
                let b = &mut buf[..n as usize * BLOCK];
                if w == Workload::SeqWrite {
                    stamp(b, lba);
                    t.dev().write(lba, b)?;
                } else {
                    t.dev().read(lba, b)?;
                    check(b, lba, name)?;
                }
                lba += n;
                requests += 1;
            }
        }
        Workload::RandRead | Workload::RandWrite => {
            while requests < args.ops {
                let lba = rng.random_range(0..ws_blocks);
                if w == Workload::RandWrite {
                    stamp(buf, lba);
                    t.dev().write(lba, buf)?;
                } else {
                    t.dev().read(lba, buf)?;
                    check(buf, lba, name)?;
                }
                requests += 1;
                if requests.is_multiple_of(1024) && start.elapsed() >= limit {
                    break;
                }
            }
        }
    }
    let mut flush_seconds = 0.0;
    if w.writes() {
        let f = Instant::now();
        t.dev().flush()?;
        flush_seconds = f.elapsed().as_secs_f64();
    }
    let seconds = start.elapsed().as_secs_f64();
    let bytes = match w {
        Workload::SeqWrite | Workload::SeqRead => ws_blocks * BLOCK as u64,
        _ => requests * req as u64,
    };
    let cache = before.zip(t.stats()).map(|(a, b)| PhaseStats::between(&a, &b));
    Ok(Row {
        target: name.to_string(),
        workload: w.name(),
        request_bytes: req,
        requests,
        bytes,
        seconds,
        flush_seconds,
        mib_per_s: bytes as f64 / MIB as f64 / seconds,
        iops: requests as f64 / seconds,
        hit_ratio: cache.as_ref().and_then(PhaseStats::hit_ratio),
        cache,
    })
}

fn create_target(dir: &Path, policy: Option<&str>, args: &Args) -> Res<Target> {
    for f in ["backing.img", "cache.img"] {
        let p = dir.join(f);
        if p.exists() {
            std::fs::remove_file(&p)?;
        }
    }
    let backing = FileBlock::create(&dir.join("backing.img"), args.backing.bytes())?;
    let Some(policy) = policy else { return Ok(Target::Bare(backing)) };
    let cache = FileBlock::create(&dir.join("cache.img"), args.cache.bytes())?;
    let mut setup = CacheSetup::new(args.mode, policy).map_err(|e| format!("policy {policy:?}: {e}"))?;
    // The simulator's default DM-SMR layout: uniform 17-36 MB bands.
    setup.bands = Some(BandConfig::default());
    setup.pb_blocks = Some(pb_blocks(args));
    let opts = CacheOptions { setup, ..Default::default() };
    Ok(Target::Cached(Box::new(CachedDevice::format(cache, backing, &opts)?)))
}

fn pb_blocks(args: &Args) -> u64 {
    args.pb.map_or(args.working_set.blocks() / 256, |p| p.blocks()).max(1)
}

fn validate(args: &Args) -> Res<()> {
    for (what, s) in
        [("--backing", args.backing), ("--cache", args.cache), ("--working-set", args.working_set)]
    {
        if s.bytes() == 0 || !s.bytes().is_multiple_of(BLOCK as u64) {
            return Err(format!("{what} {s}: must be a positive multiple of 4 KiB").into());
        }
    }
    if args.working_set > args.backing {
        return Err(format!("--working-set {} exceeds --backing {}", args.working_set, args.backing).into());
    }
    if args.ops == 0 || args.max_seconds.is_nan() || args.max_seconds <= 0.0 {
        return Err("--ops and --max-seconds must be positive".into());
    }
    Ok(())
}

fn main() -> Res<()> {
    let args = Args::parse();
    validate(&args)?;
    let base = args.dir.clone().unwrap_or_else(std::env::temp_dir);
    let tmp = tempfile::Builder::new().prefix("cache_bench.").tempdir_in(&base)?;
    let header = format!(
        "cache_bench: backing {} (file), cache {} (file), working set {}, mode {}, {} random \
         requests per phase (at most {} s), seed {}, policies see 17-36 MB bands and a {}-block \
         PB, files in {}\n\
         Buffered files: reads and writes are served by the page cache, so the figures measure \
         this code's CPU and system-call overhead over the page cache, not a disk; only the \
         flushes ending the write phases (included in their time) reach the disk.",
        args.backing,
        args.cache,
        args.working_set,
        args.mode.name(),
        args.ops,
        args.max_seconds,
        args.seed,
        pb_blocks(&args),
        tmp.path().display()
    );
    if !args.json {
        println!("{header}\n");
        println!(
            "{:<14} {:<14} {:>8} {:>9} {:>8} {:>9} {:>10} {:>9} {:>6} {:>8}",
            "target",
            "workload",
            "requests",
            "MiB",
            "seconds",
            "MiB/s",
            "IOPS",
            "flush ms",
            "hit %",
            "commits"
        );
    }
    let mut targets: Vec<(String, Option<&str>)> = Vec::new();
    if !args.no_bare {
        targets.push(("file".into(), None));
    }
    for p in &args.policies {
        targets.push((format!("cached/{p}"), Some(p.as_str())));
    }
    let mut rows = Vec::new();
    let mut buf = vec![0u8; MIB as usize];
    Pcg64::seed_from_u64(!args.seed).fill(&mut buf[..]);
    for (name, policy) in &targets {
        let mut t = create_target(tmp.path(), *policy, &args)?;
        for w in Workload::ALL {
            let row = run_phase(&mut t, name, w, &args, &mut buf)?;
            if !args.json {
                println!(
                    "{:<14} {:<14} {:>8} {:>9.1} {:>8.3} {:>9.1} {:>10.0} {:>9.1} {:>6} {:>8}",
                    row.target,
                    row.workload,
                    row.requests,
                    row.bytes as f64 / MIB as f64,
                    row.seconds,
                    row.mib_per_s,
                    row.iops,
                    row.flush_seconds * 1e3,
                    row.hit_ratio.map_or("-".to_string(), |h| format!("{:.1}", h * 100.0)),
                    row.cache.as_ref().map_or("-".to_string(), |c| c.commits.to_string()),
                );
            }
            rows.push(row);
        }
    }
    if args.json {
        let out = serde_json::json!({
            "note": header,
            "backing_bytes": args.backing.bytes(),
            "cache_bytes": args.cache.bytes(),
            "working_set_bytes": args.working_set.bytes(),
            "mode": args.mode.name(),
            "ops": args.ops,
            "max_seconds": args.max_seconds,
            "seed": args.seed,
            "pb_blocks": pb_blocks(&args),
            "rows": rows,
        });
        println!("{}", serde_json::to_string_pretty(&out)?);
    }
    Ok(())
}
