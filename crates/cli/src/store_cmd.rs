//! `shingled store`: the SMRSTORE chunk store (`shingled_store`) on emulated zoned device
//! files (`shingled zone create`, docs/zoned-file-format.md).
//!
//! Every command opens the store (recovery included), does its work, and leaves the store
//! synced and checkpointed, so the next command's recovery has nothing to scan — except the
//! commands that only look (`get`, `ls`, `info`, `fsck`): they open the store read-only
//! (`Store::open_read_only`: recovery into memory, nothing written to the device file). Several
//! devices (`DEV --device MORE …`) make a multi-drive front (`shingled_store::StoreFront`):
//! the drives may be listed in any order, new chunks are placed by hashing their id.
//!
//! The configuration chosen at `store format` (pools, placement, metazones, limits) is read
//! back from each device's superzone record (docs/store-format.md) at every open.

mod chunks;
mod format;
mod ids;
mod info;
mod maintain;
mod put;

use crate::output::OutputArgs;
use anyhow::{anyhow, bail, Context, Result};
use chunks::{get, ls, rm};
use clap::{Args, Subcommand, ValueEnum};
use format::format;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use info::info;
use maintain::{fsck, gc};
use put::put;
use shingled_core::ByteSize;
use shingled_store::{read_format, Durability, Placement, StoreError, StoreFront, StoredFormat, StreamType};
use shingled_zoned::{FileOptions, FileZoned, IoMode};
use std::io::IsTerminal;
use std::path::{Path, PathBuf};

/// Chunk store commands.
#[derive(Subcommand, Debug)]
pub enum StoreCommand {
    /// Format device files as empty chunk stores (optionally creating them).
    Format(FormatArgs),
    /// Configuration, zone states, chunks, bytes and index memory of a store.
    Info(InfoArgs),
    /// Store files as chunks (8 MiB appends, then sealed); prints each chunk id.
    Put(PutArgs),
    /// Write a chunk's bytes to stdout or a file.
    Get(GetArgs),
    /// List chunks: id, stream, length, sealed, records (and drive with several devices).
    Ls(LsArgs),
    /// Delete chunks.
    Rm(RmArgs),
    /// Check every record (headers, CRCs, slice footers) and the index against the device;
    /// prints each problem with zone, offset and chunk; exits non-zero when there is any.
    Fsck(FsckArgs),
    /// Run garbage collection until no zone can be reclaimed (or --rounds).
    Gc(GcArgs),
    /// Benchmarks of the chunk store (SMRSTORE Figs. 14, 16, 19–21, Table 3).
    Bench(crate::store_bench_cmd::StoreBenchArgs),
}

/// The device files of a store: `DEV` is drive 0, each `--device` adds a drive.
#[derive(Args, Debug)]
pub struct Devices {
    /// The zoned device file (`shingled zone create`, or `store format --create`).
    pub dev: PathBuf,
    /// Another device file of a multi-drive store (repeatable; any order).
    #[arg(long = "device", short = 'd', value_name = "DEV")]
    pub more: Vec<PathBuf>,
}

impl Devices {
    /// Every device path, drive 0 first. A file given twice would be two stores writing one
    /// device: refused.
    fn all(&self) -> Result<Vec<PathBuf>> {
        let v: Vec<PathBuf> = std::iter::once(self.dev.clone()).chain(self.more.iter().cloned()).collect();
        let key = |p: &PathBuf| std::fs::canonicalize(p).unwrap_or_else(|_| p.clone());
        // The same file under two names (hard links) too: compare device and inode.
        let inode = |p: &PathBuf| {
            use std::os::unix::fs::MetadataExt;
            std::fs::metadata(p).ok().map(|m| (m.dev(), m.ino()))
        };
        for (i, p) in v.iter().enumerate() {
            if let Some(q) =
                v[..i].iter().find(|q| inode(q).is_some() && inode(q) == inode(p) && key(q) != key(p))
            {
                bail!(
                    "{} and {} are the same file (hard links): give each device once",
                    q.display(),
                    p.display()
                );
            }
            if let Some(q) = v[..i].iter().find(|q| key(q) == key(p)) {
                bail!("device {} is given twice (as {} and {})", key(p).display(), q.display(), p.display());
            }
        }
        Ok(v)
    }
}

#[derive(Copy, Clone, Debug, ValueEnum)]
pub enum PlacementArg {
    /// SMRSTORE guided placement: all three rules.
    Guided,
    /// Everything appends to one zone at a time (F2FS-like).
    OneZone,
    /// Guided without rule 1: streams share zones.
    NoSeparateStreams,
    /// Guided without rule 2: no per-chunk size limit.
    NoChunkLimit,
    /// Guided without rule 3: every chunk of a pool shares its first zone.
    NoRoundRobin,
}

impl PlacementArg {
    fn placement(self) -> Placement {
        let g = |s, c, r| Placement::Guided { separate_streams: s, chunk_limit: c, round_robin: r };
        match self {
            PlacementArg::Guided => Placement::default(),
            PlacementArg::OneZone => Placement::OneZone,
            PlacementArg::NoSeparateStreams => g(false, true, true),
            PlacementArg::NoChunkLimit => g(true, false, true),
            PlacementArg::NoRoundRobin => g(true, true, false),
        }
    }
}

#[derive(Copy, Clone, Debug, ValueEnum)]
pub enum StreamArg {
    /// OSS-data: object data (large, cold).
    Data,
    /// OSS-metadata: index and log chunks (small, hot).
    Metadata,
    /// OSS-GC: data rewritten by the object store's GC.
    Gc,
}

impl StreamArg {
    fn stream(self) -> StreamType {
        match self {
            StreamArg::Data => StreamType::DATA,
            StreamArg::Metadata => StreamType::METADATA,
            StreamArg::Gc => StreamType::GC,
        }
    }
}

#[derive(Args, Debug)]
pub struct FormatArgs {
    #[command(flatten)]
    pub devices: Devices,
    /// Zone pool sizes asked for: GC,DATA,METADATA open zones (scaled down to the device's
    /// open/active limits).
    #[arg(long, value_name = "GC,DATA,META", default_value = "40,10,5")]
    pub pools: String,
    /// Metazones (checkpoints and journal), at least 2.
    #[arg(long, default_value_t = 4)]
    pub metazones: u32,
    /// Chunk placement.
    #[arg(long, value_enum, default_value_t = PlacementArg::Guided)]
    pub placement: PlacementArg,
    /// Largest OSS-metadata chunk.
    #[arg(long, default_value = "64MiB")]
    pub metadata_chunk_limit: ByteSize,
    /// Format even if a device already holds a store (its chunks are lost).
    #[arg(long, short = 'f')]
    pub force: bool,
    /// Create the device files first (they must not exist); give --zones.
    #[arg(long)]
    pub create: bool,
    /// With --create: zones per device.
    #[arg(long, short = 'n', requires = "create")]
    pub zones: Option<u64>,
    /// With --create: zone size (a power of two).
    #[arg(long, short = 'z', default_value = "256MiB", requires = "create")]
    pub zone_size: ByteSize,
    /// With --create: conventional zones at the start.
    #[arg(long, short = 'c', default_value_t = 1, requires = "create")]
    pub conventional: u64,
    /// With --create: maximum open zones (0 = no limit).
    #[arg(long, default_value_t = 128, requires = "create")]
    pub max_open: u32,
}

#[derive(Args, Debug)]
pub struct InfoArgs {
    #[command(flatten)]
    pub devices: Devices,
    /// The report (`-O` is short for `--output`).
    #[command(flatten)]
    pub output: OutputArgs,
}

#[derive(Args, Debug)]
pub struct PutArgs {
    #[command(flatten)]
    pub devices: Devices,
    /// Files to store, one chunk each (`-`: standard input).
    #[arg(required = true, value_name = "FILE")]
    pub files: Vec<PathBuf>,
    /// Stream type of the new chunks.
    #[arg(long, value_enum, default_value_t = StreamArg::Data)]
    pub stream: StreamArg,
    /// Chunk id (48 hex digits; one file only). Default: a fresh unique id.
    #[arg(long, conflicts_with = "name")]
    pub id: Option<String>,
    /// Name the chunk after the file: the id is the file name's bytes (at most 24),
    /// zero-padded; `get`, `rm` accept it as `name:FILE_NAME`.
    #[arg(long)]
    pub name: bool,
    /// Leave the chunks unsealed (further appends allowed).
    #[arg(long)]
    pub no_seal: bool,
}

#[derive(Args, Debug)]
pub struct GetArgs {
    #[command(flatten)]
    pub devices: Devices,
    /// Chunk id: 48 hex digits or a prefix of them that only one chunk has (as `git` takes
    /// abbreviated commits), or name:NAME for a chunk put with --name.
    pub id: String,
    /// Write to this file instead of stdout.
    #[arg(long, short = 'o')]
    pub out: Option<PathBuf>,
}

#[derive(Args, Debug)]
pub struct LsArgs {
    #[command(flatten)]
    pub devices: Devices,
    /// The report (`-O` is short for `--output`).
    #[command(flatten)]
    pub output: OutputArgs,
}

#[derive(Args, Debug)]
pub struct RmArgs {
    #[command(flatten)]
    pub devices: Devices,
    /// Chunk ids (48 hex digits or a unique prefix, or name:NAME).
    #[arg(required = true)]
    pub ids: Vec<String>,
}

#[derive(Args, Debug)]
pub struct FsckArgs {
    #[command(flatten)]
    pub devices: Devices,
    /// The report (`-O` is short for `--output`).
    #[command(flatten)]
    pub output: OutputArgs,
}

#[derive(Args, Debug)]
pub struct GcArgs {
    #[command(flatten)]
    pub devices: Devices,
    /// At most this many rounds per drive (default: until nothing is reclaimable).
    #[arg(long)]
    pub rounds: Option<u32>,
}

pub fn run(cmd: StoreCommand) -> Result<()> {
    match cmd {
        StoreCommand::Format(a) => format(a),
        StoreCommand::Info(a) => info(a),
        StoreCommand::Put(a) => put(a),
        StoreCommand::Get(a) => get(a),
        StoreCommand::Ls(a) => ls(a),
        StoreCommand::Rm(a) => rm(a),
        StoreCommand::Fsck(a) => fsck(a),
        StoreCommand::Gc(a) => gc(a),
        StoreCommand::Bench(a) => crate::store_bench_cmd::run(a),
    }
}

type Front = StoreFront<FileZoned>;

/// The device file's I/O mode: `O_DIRECT` writes where the file system allows them (as `dd
/// oflag=direct`: the data goes from the store's aligned buffer to the disk, with no copy into
/// the page cache and no write-back later), buffered when only reading. Durability is the same
/// either way: the store's flushes are `fdatasync`s.
fn io_mode(writing: bool) -> IoMode {
    if writing {
        IoMode::Auto
    } else {
        IoMode::Buffered
    }
}

fn open_dev(p: &Path, writing: bool) -> Result<FileZoned> {
    // The device error names the file and the OS error already.
    FileZoned::open(p, FileOptions { io_mode: io_mode(writing) }).map_err(|e| {
        if p.exists() {
            anyhow!("{e}")
        } else {
            anyhow!("{e} (to make a store there: shingled store format {} --create)", p.display())
        }
    })
}

/// The format configuration of `p` from its superzone record, with the CLI's run-time
/// settings: appends are made durable by the sync each command ends with.
fn read_super(p: &Path, dev: &mut FileZoned) -> Result<StoredFormat> {
    match read_format(dev) {
        Ok(mut f) => {
            f.config.durability = Durability::Batched;
            Ok(f)
        }
        Err(StoreError::NotFormatted(why)) => Err(anyhow!(
            "{} is not a shingled store: {why} (a zoned device file is formatted with: shingled store format {})",
            p.display(),
            p.display()
        )),
        Err(e) => Err(anyhow!("{}: {e}", p.display())),
    }
}

/// Opens the store on `devices` with each device's format configuration; `read_only`: with
/// `Store::open_read_only`, so that nothing is written to the files.
fn open_front(devices: &Devices, read_only: bool) -> Result<(Front, Vec<StoredFormat>)> {
    let paths = devices.all()?;
    let (devs, supers) = open_devs(&paths, read_only)?;
    Ok((front_on(devs, &supers, &paths, read_only, true)?, supers))
}

/// Opens every device file of the store and reads its format back.
fn open_devs(paths: &[PathBuf], read_only: bool) -> Result<(Vec<FileZoned>, Vec<StoredFormat>)> {
    let mut devs = Vec::new();
    let mut supers = Vec::new();
    for p in paths {
        let mut d = open_dev(p, !read_only)?;
        supers.push(read_super(p, &mut d)?);
        devs.push(d);
    }
    Ok((devs, supers))
}

/// The store on opened devices, read-only or not; `notes`: say on stderr where recovery stepped
/// over damage to load an older checkpoint (every command says so once, on stderr, so that its
/// output stays what it was).
fn front_on(
    devs: Vec<FileZoned>,
    supers: &[StoredFormat],
    paths: &[PathBuf],
    read_only: bool,
    notes: bool,
) -> Result<Front> {
    let mut stores = Vec::new();
    for ((p, d), s) in paths.iter().zip(devs).zip(supers) {
        let st = if read_only {
            shingled_store::Store::open_read_only(d, s.config.clone())
        } else {
            shingled_store::Store::open(d, s.config.clone())
        };
        let st = st.with_context(|| format!("opening the store on {}", p.display()))?;
        if notes {
            for note in st.recovery_report().map(|r| r.checkpoint_fallback).unwrap_or_default() {
                eprintln!("{}: recovery: {note}", p.display());
            }
        }
        stores.push(st);
    }
    StoreFront::from_stores(stores).map_err(|e| with_paths(e, paths))
}

/// A read-only front for reading, and `spares` more handles on the same device files (the
/// same locks, [`FileZoned::try_clone_for_reading`]), each set to be opened as another
/// read-only front ([`front_on`]) for a reader beside the first. Nothing writes through any.
fn open_readers(devices: &Devices, spares: usize) -> Result<(Front, Vec<Vec<FileZoned>>, Vec<StoredFormat>)> {
    let paths = devices.all()?;
    let (devs, supers) = open_devs(&paths, true)?;
    let mut sets = Vec::new();
    for _ in 0..spares {
        let set = devs.iter().map(|d| d.try_clone_for_reading().map_err(|e| anyhow!("{e}")));
        sets.push(set.collect::<Result<Vec<_>>>()?);
    }
    Ok((front_on(devs, &supers, &paths, true, true)?, sets, supers))
}

/// A front error with the drive number replaced by its device path.
fn with_paths(e: shingled_store::FrontError, paths: &[PathBuf]) -> anyhow::Error {
    use shingled_store::FrontError as F;
    match e {
        F::Drive { drive, source } => anyhow!("{}: {source}", paths[drive].display()),
        F::ChunkExists { id, drive } => anyhow!("chunk {id} already exists (on {})", paths[drive].display()),
        F::Duplicate { id, first, second } => {
            anyhow!("chunk {id} is on {} and on {}", paths[first].display(), paths[second].display())
        }
        e => anyhow!(e),
    }
}

/// Makes everything durable and checkpoints, so that a later recovery scans nothing (and a
/// later `fsck` sees every record as indexed data, not as a possibly torn tail).
fn close(front: &mut Front, paths: &[PathBuf]) -> Result<()> {
    front.sync().map_err(|e| with_paths(e, paths))?;
    front.checkpoint().map_err(|e| with_paths(e, paths))
}

fn placement_name(p: Placement) -> String {
    match p {
        Placement::OneZone => "one-zone".into(),
        Placement::Guided { separate_streams: true, chunk_limit: true, round_robin: true } => "guided".into(),
        Placement::Guided { separate_streams, chunk_limit, round_robin } => format!(
            "guided (separate streams {separate_streams}, chunk limit {chunk_limit}, round robin {round_robin})"
        ),
    }
}

fn stream_name(s: StreamType) -> String {
    match s {
        StreamType::DATA => "data".into(),
        StreamType::METADATA => "metadata".into(),
        StreamType::GC => "gc".into(),
        StreamType(n) => format!("stream-{n}"),
    }
}

fn bytes_bar(total: u64, msg: &str) -> ProgressBar {
    let target = if std::io::stderr().is_terminal() {
        ProgressDrawTarget::stderr()
    } else {
        ProgressDrawTarget::hidden()
    };
    let b = ProgressBar::with_draw_target(Some(total), target);
    b.set_style(
        ProgressStyle::with_template("{msg} [{bar:40}] {bytes}/{total_bytes} ({bytes_per_sec}, eta {eta})")
            .expect("valid template")
            .progress_chars("=> "),
    );
    b.set_message(msg.to_string());
    b
}

fn list_paths(p: &[PathBuf]) -> String {
    p.iter().map(|p| p.display().to_string()).collect::<Vec<_>>().join(", ")
}
