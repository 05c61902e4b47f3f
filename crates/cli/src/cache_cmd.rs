//! `shingled cache`: the SSD cache as a real block device — a cache device (a file, an SSD or
//! a partition) in front of a backing device (a DM-SMR drive, a file, or a translation layer's
//! file), driven by the simulator's policies: create, serve (FUSE file or ublk), stats, check,
//! flush (write back), detach, lost (what the backing device lacks without the cache), and
//! replay (a trace through the real data path on modelled devices, compared with `sim`).

use crate::common_args::SimArgs;
use crate::json::sorted;
use crate::output::{Output, OutputArgs};
use crate::{progress, report};
use anyhow::{bail, Context, Result};
use clap::{Args, Subcommand, ValueEnum};
use serde::Serialize;
use shingled_blockcache::files::{self, FileCache};
use shingled_blockcache::replay::{differences, Difference, ReplayOptions, ReplayReport};
use shingled_blockcache::{CacheOptions, CacheSetup, Inspection, Loss, Mode};
use shingled_core::{BandConfig, ByteSize};
use shingled_stl::{BlockDevice, BLOCK};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

// The JSON reports below keep the keys in alphabetical order, as when they were built with
// `serde_json::json!`: fields declared alphabetically, library types through `sorted`.

/// `cache check -O json`: the inspection of a sound cache, or the problem found.
#[derive(Serialize)]
struct CheckReport<'a> {
    #[serde(skip_serializing_if = "Option::is_none", serialize_with = "sorted")]
    inspection: Option<&'a Inspection>,
    problems: Vec<String>,
}

/// `cache lost -O json` when the metadata names the dirty blocks.
#[derive(Serialize)]
struct LossReport<'a> {
    backing: &'a Path,
    detached: bool,
    lost_blocks: u64,
    /// Block ranges as `[start, end)` pairs.
    ranges: Vec<[u64; 2]>,
}

/// `cache replay -O json`.
#[derive(Serialize)]
struct ReplayJson<'a> {
    #[serde(serialize_with = "sorted")]
    differences: &'a [Difference],
    #[serde(serialize_with = "sorted")]
    replay: &'a ReplayReport,
    #[serde(serialize_with = "sorted")]
    sim: Option<&'a shingled_sim::RunReport>,
}

/// The block cache: create, serve, stats, check, flush, detach, lost, replay.
#[derive(Subcommand, Debug)]
#[allow(clippy::large_enum_variant)] // parsed once per run
pub enum CacheCommand {
    /// Format a cache device (created as a file of --size when missing) in front of a backing
    /// device (a file, a block device, or a `shingled stl` file). Nothing is written to the
    /// backing device; its path is kept in the cache's superblock.
    Create(CreateArgs),
    /// Serve the cached device as one file on a FUSE mount (with a live `stats` file beside it)
    /// or with `--ublk` as /dev/ublkbN, until SIGTERM or Ctrl-C; then flush and print the
    /// session's statistics as JSON. After a crash, serving again recovers.
    Serve(ServeArgs),
    /// What the cache device's metadata says (read-only): mode, policy, sizes, cached and
    /// dirty blocks. The session counters (hits, write-backs, …) are printed when `serve`
    /// stops and live in the mount's `stats` file; they are not persisted.
    Stats(InfoArgs),
    /// Check the cache device's superblock and slot records (read-only); exit status 1 on a
    /// problem.
    Check(InfoArgs),
    /// Write back every dirty block (dm-cache's cleaner) and flush; the cache stays attached,
    /// its blocks clean.
    Flush(OpenArgs),
    /// Write back every dirty block, free every slot and mark the cache detached: the backing
    /// device alone then holds every block.
    Detach(OpenArgs),
    /// Which blocks the backing device alone lacks (the dirty blocks only the cache device
    /// holds), from the cache device's metadata: what is lost if the cache device dies now.
    Lost(LostArgs),
    /// Replay a trace through the real data path (real bytes, every read checked) on modelled
    /// devices — an SSD model under the cache device, the simulator's drive model (an emulated
    /// DM-SMR drive by default) under the backing device — and compare its counts with `shingled
    /// sim` on the same configuration. Exit status 1 when a count differs.
    Replay(ReplayArgs),
}

#[derive(Copy, Clone, Debug, ValueEnum)]
pub enum ModeArg {
    /// Write-back, read- and write-allocate.
    ReadWrite,
    /// Writes cached; reads served (from the cache when cached) without telling the policy.
    WriteOnly,
    /// Reads cached; writes go around the cache.
    ReadOnly,
    /// Writes cached; reads from the cache when cached, else passed through.
    WriteCache,
}

impl From<ModeArg> for Mode {
    fn from(m: ModeArg) -> Mode {
        match m {
            ModeArg::ReadWrite => Mode::ReadWrite,
            ModeArg::WriteOnly => Mode::WriteOnly,
            ModeArg::ReadOnly => Mode::ReadOnly,
            ModeArg::WriteCache => Mode::WriteCache,
        }
    }
}

#[derive(Args, Debug)]
pub struct CreateArgs {
    /// The cache device: a file (created when missing; give --size) or a block device.
    pub cache: PathBuf,
    /// The backing device: a file, a block device, or a `shingled stl format` file.
    #[arg(long)]
    pub backing: PathBuf,
    /// Size of the cache file to create. Formatting takes no memory per slot; serving the
    /// cache takes about 58.5 B per 4 KiB slot with LRU at 1 TiB (15.6 GB; the policy's block
    /// table and list, 8 B of slot state, 4 B of slot map; more with SAC, PORE or MOST, see
    /// docs/block-cache.md). A cache whose serving index would exceed this machine's physical
    /// memory is refused, with its cost.
    #[arg(long)]
    pub size: Option<ByteSize>,
    /// Cache mode.
    #[arg(long, value_enum, default_value = "read-write")]
    pub mode: ModeArg,
    /// Replacement policy (`shingled policies`; `name:field=value,…` for parameters). PORE,
    /// SAC and LRU-band need the drive's bands (--band-size) and PORE/SAC its persistent-buffer
    /// size (--pb-size), as a probe finds them (`shingled probe`).
    #[arg(long, default_value = "lru")]
    pub policy: String,
    /// The backing drive's band size (fixed bands), for band-aware policies.
    #[arg(long)]
    pub band_size: Option<ByteSize>,
    /// The backing drive's persistent-buffer size (PORE's period, SAC's cycle).
    #[arg(long)]
    pub pb_size: Option<ByteSize>,
    /// Blocks the policy manages (default: the slots less the reserve).
    #[arg(long)]
    pub capacity: Option<u32>,
    /// Slots kept free for copy-on-write and retirement (default: 1/64 of the slots).
    #[arg(long)]
    pub reserve: Option<u32>,
    /// Requests in a sequential stream past this many bytes bypass the cache (bcache's
    /// sequential_cutoff; default off, as in the papers).
    #[arg(long)]
    pub sequential_cutoff: Option<ByteSize>,
    /// Seed of the policy's random choices.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Format even if the cache device already holds something: an attached cache (its dirty
    /// blocks are lost), another format, a file system, a partition table, or any non-zero
    /// byte in its first MiB. A detached cache or a device of zeros needs no --force.
    #[arg(long)]
    pub force: bool,
}

#[derive(Args, Debug)]
pub struct OpenArgs {
    /// The cache device.
    pub cache: PathBuf,
    /// The backing device (default: the one recorded at create).
    #[arg(long)]
    pub backing: Option<PathBuf>,
    /// Accept a backing device other than the one the cache was created over (it was moved,
    /// copied or renumbered on purpose) and record it as the cache's backing device. Without it
    /// another device — even of the same size — is refused: the dirty blocks belong to the
    /// recorded one.
    #[arg(long)]
    pub backing_moved: bool,
}

#[derive(Args, Debug)]
pub struct ServeArgs {
    #[command(flatten)]
    pub open: OpenArgs,
    /// Where to mount (an existing directory); not with `--ublk`.
    #[arg(required_unless_present = "ublk", conflicts_with = "ublk")]
    pub mountpoint: Option<PathBuf>,
    /// Name of the served file (FUSE): one file name, not `stats`.
    #[arg(long, default_value = "disk", value_parser = crate::served::file_name)]
    pub name: String,
    /// Serve /dev/ublkbN through the kernel's ublk driver instead (Linux ≥ 6.0, `ublk_drv`,
    /// root, a `shingled` built with the `ublk` feature).
    #[arg(long)]
    pub ublk: bool,
    /// Override the sequential-bypass threshold for this session (`0`: off).
    #[arg(long)]
    pub sequential_cutoff: Option<ByteSize>,
}

#[derive(Args, Debug)]
pub struct InfoArgs {
    /// The cache device.
    pub cache: PathBuf,
    #[command(flatten)]
    pub output: OutputArgs,
}

#[derive(Args, Debug)]
pub struct LostArgs {
    /// The cache device (or a copy of its metadata area).
    pub cache: PathBuf,
    /// The backing device (default: the one recorded at create).
    #[arg(long)]
    pub backing: Option<PathBuf>,
    #[command(flatten)]
    pub output: OutputArgs,
}

#[derive(Args, Debug)]
pub struct ReplayArgs {
    /// The simulation's configuration (the trace, drive, SSD, cache size and policy), as for
    /// `shingled sim`.
    #[command(flatten)]
    pub sim: SimArgs,
    /// Slots kept out of the policy's capacity (default: 1/64 of it).
    #[arg(long)]
    pub reserve: Option<u32>,
    /// Flush (commit) the cached device every this many requests (default: never; commits
    /// happen when the free-slot reserve runs out).
    #[arg(long)]
    pub flush_every: Option<u64>,
    /// Skip the check after the trace (every written block read back through the cache, then
    /// cleaned and read from the backing device alone).
    #[arg(long)]
    pub no_final_check: bool,
    /// Keep the cache's metadata I/O off the modelled clock: every modelled time then equals the
    /// simulator's (metadata time is still reported apart).
    #[arg(long)]
    pub metadata_off_clock: bool,
    /// Do not run the simulator for comparison.
    #[arg(long)]
    pub no_compare: bool,
    /// The report (`--output csv`: one row of the JSON report's fields).
    #[command(flatten)]
    pub output: OutputArgs,
}

/// Runs `shingled cache ...`.
pub fn run(cmd: CacheCommand) -> Result<()> {
    match cmd {
        CacheCommand::Create(a) => create(a),
        CacheCommand::Serve(a) => serve(a),
        CacheCommand::Stats(a) => stats(a),
        CacheCommand::Check(a) => check(a),
        CacheCommand::Flush(a) => flush(a),
        CacheCommand::Detach(a) => detach(a),
        CacheCommand::Lost(a) => lost(a),
        CacheCommand::Replay(a) => replay(a),
    }
}

fn create(a: CreateArgs) -> Result<()> {
    let mut setup = CacheSetup::new(a.mode.into(), &a.policy)
        .map_err(|e| anyhow::anyhow!("--policy {}: {e}", a.policy))?;
    setup.bands = a.band_size.map(|size| BandConfig::Fixed { size });
    setup.pb_blocks = a.pb_size.map(|b| b.0 / BLOCK as u64);
    setup.seed = a.seed;
    setup.sequential_cutoff = a.sequential_cutoff.map(|b| b.0).filter(|&b| b > 0);
    let opts = CacheOptions { setup, slots: None, capacity: a.capacity, reserve: a.reserve };
    let f = files::format(&a.cache, &a.backing, a.size.map(|s| s.0), &opts, a.force).map_err(|e| {
        let hint = if e.to_string().contains("already holds") {
            " (pass --force to format it anyway)"
        } else if e.to_string().contains("persistent buffer") {
            " (give the drive's persistent-buffer size with --pb-size, and its bands with --band-size)"
        } else if e.to_string().contains("band") {
            " (give the drive's band size with --band-size)"
        } else {
            ""
        };
        anyhow::Error::new(e).context(format!(
            "creating the cache {} over {}{hint}",
            a.cache.display(),
            a.backing.display()
        ))
    })?;
    let l = f.layout;
    println!(
        "created cache {} over {} ({}): {} slots of 4 KiB = {}, policy {} holds {} blocks, mode {}; \
         serving it takes about {} of memory ({:.1} B per slot)",
        a.cache.display(),
        a.backing.display(),
        ByteSize(f.backing_blocks * BLOCK as u64),
        l.slots,
        ByteSize(l.slots as u64 * BLOCK as u64),
        f.policy,
        f.capacity,
        f.setup.mode.name(),
        ByteSize(f.cost.bytes),
        f.cost.per_slot()
    );
    Ok(())
}

fn open(a: &OpenArgs) -> Result<FileCache> {
    files::open(&a.cache, a.backing.as_deref(), a.backing_moved)
        .with_context(|| format!("opening the cache {}", a.cache.display()))
}

fn serve(a: ServeArgs) -> Result<()> {
    if a.ublk {
        return serve_ublk(a);
    }
    let Some(mountpoint) = a.mountpoint.as_deref() else { bail!("the mount point is missing") };
    shingled_fuse::fuse_available().map_err(|why| anyhow::anyhow!("cannot serve over FUSE here: {why}"))?;
    let t0 = Instant::now();
    let mut dev = open(&a.open)?;
    if let Some(c) = a.sequential_cutoff {
        dev.set_sequential_cutoff(Some(c.0).filter(|&b| b > 0));
    }
    crate::served::serve_fuse(dev, &a.open.cache, mountpoint, &a.name, Duration::MAX, t0)
}

#[cfg(feature = "ublk")]
fn serve_ublk(a: ServeArgs) -> Result<()> {
    crate::ublk::available()?;
    let t0 = Instant::now();
    let mut dev = open(&a.open)?;
    if let Some(c) = a.sequential_cutoff {
        dev.set_sequential_cutoff(Some(c.0).filter(|&b| b > 0));
    }
    crate::ublk::serve(dev, &a.open.cache, t0, Duration::MAX)
}

#[cfg(not(feature = "ublk"))]
fn serve_ublk(_: ServeArgs) -> Result<()> {
    bail!("--ublk: built without the ublk feature: cargo build --features ublk -p shingled-cli")
}

fn stats(a: InfoArgs) -> Result<()> {
    a.output.start()?;
    let i = files::inspect_file(&a.cache).with_context(|| format!("reading {}", a.cache.display()))?;
    match a.output.format() {
        Output::Json | Output::Csv => a.output.print_value(&i)?,
        Output::Table => {
            let s = &i.setup;
            let b = |n: u64| ByteSize(n * BLOCK as u64);
            println!("{}: shingled block cache, {}", a.cache.display(), i.state);
            println!("  backing device       {}", s.backing_path.as_deref().unwrap_or("(not recorded)"));
            println!("  backing capacity     {} ({} blocks)", b(i.backing_blocks), i.backing_blocks);
            println!("  mode                 {}", s.mode.name());
            println!("  policy               {}", s.policy.name());
            println!(
                "  slots                {} ({}), policy capacity {} blocks",
                i.slots,
                b(i.slots as u64),
                i.capacity
            );
            println!("  cached blocks        {}", i.cached_blocks);
            println!("  dirty blocks         {} ({})", i.dirty_blocks, b(i.dirty_blocks));
            println!("  stale records        {}", i.stale_records);
            println!("  newest epoch         {}", i.newest_epoch);
            if let Some(c) = s.sequential_cutoff {
                println!("  sequential cutoff    {}", ByteSize(c));
            }
        }
    }
    Ok(())
}

fn check(a: InfoArgs) -> Result<()> {
    a.output.start()?;
    let r = files::inspect_file(&a.cache);
    // Beyond the cache device's metadata, what else an open would refuse: the recorded backing
    // device missing, or of another size.
    let mut problems: Vec<String> = r.as_ref().err().map(|e| e.to_string()).into_iter().collect();
    problems.extend(r.as_ref().ok().and_then(shingled_blockcache::check_recorded_backing));
    match (&r, a.output.format()) {
        (_, Output::Json | Output::Csv) => {
            a.output.print_line(&CheckReport { inspection: r.as_ref().ok(), problems: problems.clone() })?
        }
        (Ok(i), Output::Table) if problems.is_empty() => println!(
            "{}: consistent ({}, {} cached blocks, {} dirty)",
            a.cache.display(),
            i.state,
            i.cached_blocks,
            i.dirty_blocks
        ),
        (_, Output::Table) => {
            for p in &problems {
                println!("{}: {p}", a.cache.display());
            }
        }
    }
    if !problems.is_empty() {
        crate::out::finish()?;
        std::process::exit(1);
    }
    Ok(())
}

fn flush(a: OpenArgs) -> Result<()> {
    let mut dev = open(&a)?;
    let n = dev.clean().with_context(|| format!("writing back the dirty blocks of {}", a.cache.display()))?;
    dev.close().context("flushing")?;
    println!(
        "{}: wrote back {n} dirty blocks ({}); every cached block is clean",
        a.cache.display(),
        ByteSize(n * BLOCK as u64)
    );
    Ok(())
}

fn detach(a: OpenArgs) -> Result<()> {
    let dev = open(&a)?;
    let dirty = dev.stats().dirty_blocks;
    let (backing, _) = dev.detach().with_context(|| format!("detaching {}", a.cache.display()))?;
    println!(
        "{}: wrote back {dirty} dirty blocks and detached; {} alone holds every block",
        a.cache.display(),
        backing.name()
    );
    Ok(())
}

fn lost(a: LostArgs) -> Result<()> {
    a.output.start()?;
    let backing_path = match &a.backing {
        Some(p) => p.clone(),
        None => files::recorded_backing(&a.cache)
            .with_context(|| format!("reading {}", a.cache.display()))?
            .context("the cache does not record its backing device: give --backing")?,
    };
    let backing =
        files::open_device(&backing_path).with_context(|| format!("opening {}", backing_path.display()))?;
    let mut meta = shingled_stl::FileBlock::open_read_only(&a.cache)
        .with_context(|| format!("opening {}", a.cache.display()))?;
    let loss = shingled_blockcache::lost_blocks(backing.as_ref(), Some(&mut meta))
        .with_context(|| format!("reading the metadata of {}", a.cache.display()))?;
    print_loss(&loss, &backing_path, &a.output)
}

fn print_loss(loss: &Loss, backing: &Path, output: &OutputArgs) -> Result<()> {
    let Loss::Known { detached, ranges, blocks } = loss else {
        println!("unknown: no cache metadata");
        return Ok(());
    };
    match output.format() {
        Output::Json | Output::Csv => {
            let v = LossReport {
                backing,
                detached: *detached,
                lost_blocks: *blocks,
                ranges: ranges.iter().map(|r| [r.start, r.end]).collect(),
            };
            output.print_line(&v)?
        }
        Output::Table => {
            if *blocks == 0 {
                println!(
                    "{}: consistent alone (no dirty block in the cache{})",
                    backing.display(),
                    if *detached { "; detached" } else { "" }
                );
            } else {
                println!(
                    "{}: {blocks} blocks ({}) in {} ranges exist only on the cache device:",
                    backing.display(),
                    ByteSize(blocks * BLOCK as u64),
                    ranges.len()
                );
                for r in ranges {
                    println!(
                        "  blocks {}..{} (bytes {}..{})",
                        r.start,
                        r.end,
                        r.start * BLOCK as u64,
                        r.end * BLOCK as u64
                    );
                }
            }
        }
    }
    Ok(())
}

fn replay(a: ReplayArgs) -> Result<()> {
    a.output.start()?;
    let cfg = a.sim.to_config()?;
    if cfg.interval.is_some() {
        anyhow::bail!(
            "cache replay: --interval (metrics over time) applies to `shingled sim`, `compare` and `experiment`, \
             not to a replay through the block cache"
        );
    }
    let stats = shingled_sim::measure(&cfg.trace, &cfg.drive.bands_or_default())
        .with_context(|| format!("reading trace {}", cfg.trace.path))?;
    let total = cfg.trace.limit.map_or(stats.requests, |l| l.min(stats.requests));
    let opts = ReplayOptions {
        reserve: a.reserve,
        flush_every: a.flush_every,
        final_check: !a.no_final_check,
        metadata_on_clock: !a.metadata_off_clock,
    };
    let sim = if a.no_compare {
        None
    } else {
        let bar = progress::Reporter::requests(&format!("sim {}", cfg.display_label()), total);
        let r = shingled_sim::run(&cfg, &stats, &mut |n| bar.set(n))?;
        bar.finish();
        Some(r)
    };
    let bar = progress::Reporter::requests(&format!("cache replay {}", cfg.display_label()), total);
    let r = shingled_blockcache::replay::replay(&cfg, &stats, &opts, &mut |n| bar.set(n))
        .with_context(|| format!("replaying {} through the data path", cfg.trace.path))?;
    bar.finish();
    let diffs = sim.as_ref().map(|s| differences(s, &r.run)).unwrap_or_default();
    match a.output.format() {
        Output::Json | Output::Csv => {
            let v = ReplayJson { differences: &diffs, replay: &r, sim: sim.as_ref() };
            a.output.print_value(&v)?;
        }
        Output::Table => print!("{}", replay_table(&r, sim.as_ref(), &diffs)),
    }
    if diffs.iter().any(|d| !d.time) {
        crate::out::finish()?;
        std::process::exit(1);
    }
    Ok(())
}

/// The replay for people: the run as `sim` prints it, the data path's own figures, and the
/// comparison with the simulator.
fn replay_table(r: &ReplayReport, sim: Option<&shingled_sim::RunReport>, diffs: &[Difference]) -> String {
    let mut out = String::from("Through the real data path (modelled devices, real bytes):\n");
    out.push_str(&report::run_table(&r.run));
    let d = &r.data_path;
    out.push_str("\nData path:\n");
    if let Some(s) = &d.stats {
        out.push_str(&format!(
            "  slots {} | commits {} ({} forced) | metadata blocks written {} | retirements {}\n",
            d.slots, s.commits, s.forced_commits, s.metadata_blocks_written, s.retirements
        ));
    }
    out.push_str(&format!(
        "  modelled time {:.3} s, of which cache metadata {:.3} s | reads checked {} blocks | wall {:.2} s\n",
        d.modelled_time_s, d.metadata_time_s, d.verified_blocks, d.wall_time_s
    ));
    if let Some(f) = &d.final_check {
        out.push_str(&format!(
            "  final check: {} written blocks read back through the cache; cleaner wrote back {}; {} read \
             from the backing device alone — all as last written\n",
            f.read_through_cache, f.cleaned, f.read_from_backing
        ));
    }
    if let Some(s) = sim {
        let counts = diffs.iter().filter(|d| !d.time).count();
        let times = diffs.iter().filter(|d| d.time).count();
        out.push_str("\nAgainst `shingled sim` on the same configuration:\n");
        let (a, b) = (&s.total.counters, &r.run.total.counters);
        for (name, x, y) in [
            ("read hits", a.read_hits, b.read_hits),
            ("write hits", a.write_hits, b.write_hits),
            ("dirty evictions (write-backs)", a.dirty_evictions, b.dirty_evictions),
            ("clean evictions", a.clean_evictions, b.clean_evictions),
            ("drive blocks written", a.drive_blocks_written, b.drive_blocks_written),
            ("drive write commands", a.drive.write_ops, b.drive.write_ops),
            ("RMWs", a.drive.rmws, b.drive.rmws),
        ] {
            out.push_str(&format!(
                "  {name:<30} sim {x:>12}  data path {y:>12}  {}\n",
                if x == y { "equal" } else { "DIFFER" }
            ));
        }
        out.push_str(&format!(
            "  {:<30} sim {:>12.3}  data path {:>12.3}  ({:+.4}%)\n",
            "total I/O time, s",
            s.total.total_time_s,
            r.run.total.total_time_s,
            100.0 * (r.run.total.total_time_s - s.total.total_time_s) / s.total.total_time_s.max(1e-12)
        ));
        if counts == 0 {
            out.push_str(&format!(
                "  every count equal{}\n",
                if times == 0 {
                    ", and every modelled time".to_string()
                } else {
                    format!(
                        "; {times} modelled times differ slightly (the cache's metadata writes shift the disk's \
                         rotational position; --metadata-off-clock removes them)"
                    )
                }
            ));
        } else {
            out.push_str(&format!("  {counts} counts DIFFER:\n"));
            for d in diffs.iter().filter(|d| !d.time) {
                out.push_str(&format!("    {}: sim {} data path {}\n", d.field, d.sim, d.data_path));
            }
        }
    }
    out
}
