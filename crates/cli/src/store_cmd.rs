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

use anyhow::{anyhow, bail, Context, Result};
use clap::{Args, Subcommand, ValueEnum};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use shingled_core::ByteSize;
use shingled_store::{
    read_format, ChunkId, Durability, Placement, PreparedRecords, StoreConfig, StoreError, StoreFront,
    StoredFormat, StreamType,
};
use shingled_zoned::{
    Dialect, FileOptions, FileZoned, IoMode, ReadAboveWp, ZonedConfig, ZonedDevice, ZonedModel, SECTOR_SIZE,
};
use std::io::{IoSliceMut, IsTerminal, Read, Write};
use std::path::{Path, PathBuf};

/// Bytes per read of `get`.
const PIECE: usize = 1 << 20;

/// Bytes per append of `put` (rounded down to a multiple of the store's `max_record`, so that
/// a part fills its zone as the chunk limit assumes): the store writes the records of one
/// append to a zone with one device call (`shingled_store::WRITE_BATCH`).
const PUT_PIECE: usize = 8 << 20;

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

#[derive(Copy, Clone, Debug, ValueEnum, PartialEq, Eq)]
pub enum OutputArg {
    Table,
    Json,
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
    /// Output format.
    #[arg(long, short = 'O', value_enum, default_value_t = OutputArg::Table)]
    pub output: OutputArg,
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
    /// Output format.
    #[arg(long, short = 'O', value_enum, default_value_t = OutputArg::Table)]
    pub output: OutputArg,
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
    /// Output format.
    #[arg(long, short = 'O', value_enum, default_value_t = OutputArg::Table)]
    pub output: OutputArg,
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
    let mut devs = Vec::new();
    let mut supers = Vec::new();
    for p in &paths {
        let mut d = open_dev(p, !read_only)?;
        supers.push(read_super(p, &mut d)?);
        devs.push(d);
    }
    let mut stores = Vec::new();
    for ((p, d), s) in paths.iter().zip(devs).zip(&supers) {
        let st = if read_only {
            shingled_store::Store::open_read_only(d, s.config.clone())
        } else {
            shingled_store::Store::open(d, s.config.clone())
        };
        stores.push(st.with_context(|| format!("opening the store on {}", p.display()))?);
    }
    let front = StoreFront::from_stores(stores).map_err(|e| with_paths(e, &paths))?;
    Ok((front, supers))
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

fn parse_pools(s: &str) -> Result<(u32, u32, u32)> {
    let v: Vec<&str> = s.split(',').map(str::trim).collect();
    let bad = || anyhow!("--pools {s:?}: expected three zone counts GC,DATA,METADATA such as 40,10,5");
    if v.len() != 3 {
        return Err(bad());
    }
    let n = |x: &str| x.parse::<u32>().ok().filter(|&n| n > 0).ok_or_else(bad);
    Ok((n(v[0])?, n(v[1])?, n(v[2])?))
}

fn format(a: FormatArgs) -> Result<()> {
    // With --create, a format that fails leaves no device file behind (a retry would otherwise
    // meet "File exists").
    let created: Vec<PathBuf> =
        if a.create { a.devices.all()?.into_iter().filter(|p| !p.exists()).collect() } else { Vec::new() };
    let r = format_inner(a);
    if r.is_err() {
        for p in &created {
            let _ = std::fs::remove_file(p);
        }
    }
    r
}

fn format_inner(a: FormatArgs) -> Result<()> {
    let (pool_gc, pool_data, pool_metadata) = parse_pools(&a.pools)?;
    let cfg = StoreConfig {
        nr_metazones: a.metazones,
        pool_gc,
        pool_data,
        pool_metadata,
        placement: a.placement.placement(),
        metadata_chunk_limit: a.metadata_chunk_limit.0,
        ..StoreConfig::default()
    };
    cfg.sanitize().context("store configuration")?;
    if a.metadata_chunk_limit.0 < 4096 {
        bail!(
            "--metadata-chunk-limit {}: a metadata chunk must hold at least 4 KiB (every metadata put would fail)",
            a.metadata_chunk_limit
        );
    }
    let paths = a.devices.all()?;
    let mut devs = Vec::new();
    for p in &paths {
        if a.create {
            let n = a.zones.ok_or_else(|| anyhow!("--create needs --zones N"))?;
            let zs = a.zone_size.0;
            let zcfg = ZonedConfig {
                capacity: ByteSize(n.checked_mul(zs).context("--zones × --zone-size overflows")?),
                zone_size: a.zone_size,
                zone_capacity: ByteSize(0),
                nr_conv: a.conventional,
                max_open: a.max_open,
                max_active: 0,
                dialect: Dialect::Zbc,
                model: ZonedModel::HostManaged,
                lba_size: 4096,
                read_above_wp: ReadAboveWp::Zeros,
            };
            zcfg.sanitize().with_context(|| format!("device geometry for {}", p.display()))?;
            let d = FileZoned::create(p, &zcfg, FileOptions { io_mode: io_mode(true) })
                .with_context(|| format!("creating device file {}", p.display()))?;
            devs.push(d);
        } else {
            let mut d = open_dev(p, true)?;
            if !a.force && read_super(p, &mut d).is_ok() {
                bail!(
                    "{} already holds a store; --force formats it anyway (its chunks are lost)",
                    p.display()
                );
            }
            devs.push(d);
        }
    }
    let mut stores = Vec::new();
    for (p, d) in paths.iter().zip(devs) {
        let st = shingled_store::Store::format(d, cfg.clone())
            .with_context(|| format!("formatting {}", p.display()))?;
        let i = st.device().info();
        println!(
            "{}: store formatted: {} datazones of {} ({} metazones), placement {}",
            p.display(),
            st.stats().datazones,
            ByteSize(i.zone_capacity_sectors * SECTOR_SIZE),
            cfg.nr_metazones,
            placement_name(cfg.placement)
        );
        stores.push(st);
    }
    let mut front = StoreFront::from_stores(stores).map_err(|e| with_paths(e, &paths))?;
    close(&mut front, &paths)
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

/// The first line of a parts manifest: a file larger than a chunk is stored as part chunks and
/// a manifest chunk (metadata stream) under the id `put` prints, which `get` joins and `rm`
/// removes whole.
const PARTS_MAGIC: &[u8] = b"shingled-parts 1\n";

/// The manifest of a file stored in `parts` of `lens` bytes: the magic line, the total length,
/// then one `id length` line per part.
fn parts_manifest(parts: &[ChunkId], lens: &[u64]) -> Vec<u8> {
    let mut m = PARTS_MAGIC.to_vec();
    m.extend_from_slice(format!("length {}\n", lens.iter().sum::<u64>()).as_bytes());
    for (p, l) in parts.iter().zip(lens) {
        m.extend_from_slice(format!("{p} {l}\n").as_bytes());
    }
    m
}

/// A part of a file stored in parts, and its length.
type Part = (ChunkId, u64);

/// The parts of chunk `id` if it is a parts manifest (checked to add up to its length line).
fn parts_of(front: &mut Front, id: ChunkId, paths: &[PathBuf]) -> Result<Option<Vec<Part>>> {
    let Some((_, c)) = front.chunk(id) else { return Ok(None) };
    if c.stream != StreamType::METADATA || c.len < PARTS_MAGIC.len() as u64 || c.len > 1 << 20 {
        return Ok(None);
    }
    let text = front.read(id, 0, c.len).map_err(|e| with_paths(e, paths))?;
    let Some(body) = text.strip_prefix(PARTS_MAGIC) else { return Ok(None) };
    let body =
        std::str::from_utf8(body).map_err(|_| anyhow!("chunk {id}: a parts manifest that is not text"))?;
    let mut lines = body.lines();
    let total = lines
        .next()
        .and_then(|l| l.strip_prefix("length "))
        .and_then(|n| n.parse::<u64>().ok())
        .ok_or_else(|| anyhow!("chunk {id}: parts manifest without its length line"))?;
    let mut parts = Vec::new();
    for (i, l) in lines.enumerate() {
        let (p, n) =
            l.split_once(' ').ok_or_else(|| anyhow!("chunk {id}: parts manifest line {}: {l:?}", i + 3))?;
        let n = n
            .parse::<u64>()
            .map_err(|_| anyhow!("chunk {id}: parts manifest line {}: length {n:?}", i + 3))?;
        parts.push((parse_id(p)?, n));
    }
    if parts.iter().map(|p| p.1).sum::<u64>() != total {
        bail!("chunk {id}: parts manifest lengths do not add up to {total}");
    }
    Ok(Some(parts))
}

/// The chunk `s` names in `front`: a full id or `name:NAME` (as [`parse_id`]), or a prefix of
/// the hex id that exactly one chunk has (as git accepts abbreviated commits).
fn resolve_id(front: &Front, s: &str, paths: &[PathBuf]) -> Result<ChunkId> {
    let t = s.trim();
    if t.starts_with("name:") || t.len() == 48 {
        return parse_id(t);
    }
    if t.is_empty() || !t.bytes().all(|b| b.is_ascii_hexdigit()) {
        bail!("chunk id {s:?}: expected hex digits (the id or a unique prefix of it) or name:NAME");
    }
    let want = t.to_ascii_lowercase();
    let hits: Vec<ChunkId> =
        front.list().into_iter().map(|(_, c)| c.id).filter(|id| id.to_string().starts_with(&want)).collect();
    match hits.as_slice() {
        [one] => Ok(*one),
        [] => bail!("no chunk id starts with {t} in {}", list_paths(paths)),
        many => bail!(
            "chunk id prefix {t} is ambiguous: {} chunks start with it ({}{}); give more digits",
            many.len(),
            many.iter().take(4).map(|i| i.to_string()).collect::<Vec<_>>().join(", "),
            if many.len() > 4 { ", ..." } else { "" }
        ),
    }
}

/// Parses `48 hex digits` or `name:NAME`.
pub fn parse_id(s: &str) -> Result<ChunkId> {
    if let Some(name) = s.strip_prefix("name:") {
        return name_id(name);
    }
    let t = s.trim();
    if t.len() != 48 || !t.bytes().all(|b| b.is_ascii_hexdigit()) {
        bail!("chunk id {s:?}: expected 48 hex digits (24 bytes) or name:NAME");
    }
    let mut id = [0u8; 24];
    for (i, b) in id.iter_mut().enumerate() {
        *b = u8::from_str_radix(&t[2 * i..2 * i + 2], 16).expect("checked hex");
    }
    Ok(ChunkId(id))
}

fn name_id(name: &str) -> Result<ChunkId> {
    let b = name.as_bytes();
    if b.is_empty() || b.len() > 24 {
        bail!("chunk name {name:?}: must be 1 to 24 bytes");
    }
    let mut id = [0u8; 24];
    id[..b.len()].copy_from_slice(b);
    Ok(ChunkId(id))
}

/// A fresh id: a hash of the file path, process and counter, then the time in nanoseconds
/// (unique per put).
fn fresh_id(path: &Path, n: u64) -> ChunkId {
    let t =
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_nanos()).unwrap_or(0);
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    let salt = (u64::from(std::process::id()) << 32 | n).to_le_bytes();
    for b in path.as_os_str().as_encoded_bytes().iter().chain(&salt) {
        h = (h ^ *b as u64).wrapping_mul(0x0100_0000_01b3);
    }
    let mut id = [0u8; 24];
    id[..8].copy_from_slice(&h.to_be_bytes());
    id[8..].copy_from_slice(&t.to_be_bytes());
    ChunkId(id)
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

fn put(a: PutArgs) -> Result<()> {
    if a.id.is_some() && a.files.len() != 1 {
        bail!("--id names one chunk; {} files were given", a.files.len());
    }
    let stdin = |f: &PathBuf| f.as_os_str() == "-";
    if a.files.iter().filter(|f| stdin(f)).count() > 1 {
        bail!("standard input (-) can be stored once per put");
    }
    if a.name && a.files.iter().any(stdin) {
        bail!("--name takes the chunk name from the file name; standard input (-) has none (give --id)");
    }
    let mut sizes = Vec::new();
    for f in &a.files {
        if stdin(f) {
            continue;
        }
        let m = std::fs::metadata(f).with_context(|| format!("reading {}", f.display()))?;
        if !m.is_file() {
            bail!("{} is not a regular file", f.display());
        }
        sizes.push(m.len());
    }
    let ids = a
        .files
        .iter()
        .enumerate()
        .map(|(i, f)| match (&a.id, a.name) {
            (Some(s), _) => parse_id(s),
            (None, true) => {
                let n = f
                    .file_name()
                    .and_then(|n| n.to_str())
                    .ok_or_else(|| anyhow!("{}: no file name", f.display()))?;
                name_id(n)
            }
            (None, false) => Ok(fresh_id(f, i as u64)),
        })
        .collect::<Result<Vec<_>>>()?;
    for (i, id) in ids.iter().enumerate() {
        if let Some(j) = ids[..i].iter().position(|x| x == id) {
            bail!("{} and {} would both be chunk {id}", a.files[j].display(), a.files[i].display());
        }
    }
    let paths = a.devices.all()?;
    let (mut front, _) = open_front(&a.devices, false)?;
    for id in &ids {
        if let Some((d, _)) = front.chunk(*id) {
            bail!("chunk {id} already exists (on {})", paths[d].display());
        }
    }
    // The largest chunk any drive takes in this stream: a bigger file is stored in parts.
    let limit = (0..front.drives())
        .filter_map(|i| front.drive(i).map(|st| st.chunk_limit(a.stream.stream())))
        .min()
        .unwrap_or(u64::MAX);
    // Appends of PUT_PIECE bytes, a whole number of records of every drive.
    let max_record = (0..front.drives())
        .filter_map(|i| front.drive(i).map(|st| st.config().max_record))
        .max()
        .unwrap_or(1);
    let piece = (PUT_PIECE / max_record).max(1) * max_record;
    let bar = bytes_bar(sizes.iter().sum(), "put");
    let mut result = Ok(());
    let mut size_of = sizes.iter();
    let mut leftovers: Vec<ChunkId> = Vec::new();
    for (fi, (f, id)) in a.files.iter().zip(&ids).enumerate() {
        let size = if stdin(f) { None } else { size_of.next().copied() };
        let split = size.is_some_and(|n| n > limit);
        if split && a.no_seal {
            result = Err(anyhow!(
                "{} ({} bytes) is larger than a chunk ({limit} bytes) and is stored in parts, which are sealed; \
                 drop --no-seal",
                f.display(),
                size.unwrap_or(0)
            ));
            break;
        }
        // The chunks this file goes into: itself, or its parts then the manifest `id`.
        let parts: Vec<ChunkId> = if split {
            let n = size.unwrap_or(0).div_ceil(limit);
            (0..n).map(|k| fresh_id(f, (fi as u64) << 32 | (k + 1))).collect()
        } else {
            vec![*id]
        };
        result = (|| -> Result<()> {
            let file: Box<dyn Read + Send> = if stdin(f) {
                Box::new(std::io::stdin())
            } else {
                Box::new(std::fs::File::open(f).with_context(|| format!("reading {}", f.display()))?)
            };
            let cap = if split { limit } else { u64::MAX };
            let pieces = ReadAhead::start(file, cap, parts.clone(), piece, max_record);
            let mut lens = Vec::with_capacity(parts.len());
            for (k, part) in parts.iter().enumerate() {
                front.create(*part, a.stream.stream()).map_err(|e| with_paths(e, &paths))?;
                let mut len = 0u64;
                while let Some(p) = pieces.next() {
                    let (mut buf, n, last) = p.with_context(|| format!("reading {}", f.display()))?;
                    if k == 0
                        && len == 0
                        && matches!(a.stream, StreamArg::Metadata)
                        && buf.slices_mut().first().is_some_and(|s| s.starts_with(PARTS_MAGIC))
                    {
                        bail!(
                            "{} begins like a parts manifest ({:?}); store it in another stream",
                            f.display(),
                            String::from_utf8_lossy(PARTS_MAGIC)
                        );
                    }
                    if n > 0 {
                        front
                            .append_prepared(*part, &mut buf)
                            .map_err(|e| with_paths(e, &paths))
                            .with_context(|| format!("storing {} as chunk {part}", f.display()))?;
                    }
                    pieces.give_back(buf);
                    bar.inc(n as u64);
                    len += n as u64;
                    if last {
                        break;
                    }
                }
                lens.push(len);
                if !a.no_seal {
                    front.seal(*part).map_err(|e| with_paths(e, &paths))?;
                }
            }
            if split {
                let manifest = parts_manifest(&parts, &lens);
                front.create(*id, StreamType::METADATA).map_err(|e| with_paths(e, &paths))?;
                front.append(*id, &manifest).map_err(|e| with_paths(e, &paths))?;
                front.seal(*id).map_err(|e| with_paths(e, &paths))?;
            }
            Ok(())
        })();
        if result.is_err() {
            // No half-stored file stays behind. A device error leaves the store refusing
            // further changes, so what it cannot delete now is deleted after reopening it.
            for c in parts.iter().chain(split.then_some(id)) {
                if front.chunk(*c).is_some() && front.delete(*c).is_err() {
                    leftovers.push(*c);
                }
            }
            break;
        }
        if a.no_seal {
            // Sealing synced the others; an unsealed chunk's id is printed once it is durable.
            if let Err(e) = front.sync() {
                return Err(with_paths(e, &paths));
            }
        }
        let (d, c) = front.chunk(*id).expect("just stored");
        let len = if split { size.unwrap_or(0) } else { c.len };
        let how = if split { format!("  in {} parts", parts.len()) } else { String::new() };
        bar.suspend(|| {
            if paths.len() > 1 {
                println!("{id}  {}  {len} bytes{how}  {}", f.display(), paths[d].display());
            } else {
                println!("{id}  {}  {len} bytes{how}", f.display());
            }
        });
    }
    bar.finish_and_clear();
    // Whatever was stored before a failure is made durable too.
    let closed = close(&mut front, &paths);
    if !leftovers.is_empty() {
        drop(front);
        let cleaned = (|| -> Result<()> {
            let (mut again, _) = open_front(&a.devices, false)?;
            for c in &leftovers {
                if again.chunk(*c).is_some() {
                    again.delete(*c).map_err(|e| with_paths(e, &paths))?;
                }
            }
            close(&mut again, &paths)
        })();
        if let Err(e) = cleaned {
            let ids: Vec<String> = leftovers.iter().map(|c| c.to_string()).collect();
            return result.and(closed).and(Err(e)).with_context(|| {
                format!(
                    "the failed put left chunk(s) {} behind; remove them with `shingled store rm`",
                    ids.join(" ")
                )
            });
        }
    }
    result.and(closed)
}

/// One piece read by [`ReadAhead`]: its records (the user bytes read, encoded), the bytes
/// read, and whether it is the last piece of its part (the part is full, or the input ended).
type Piece = std::io::Result<(PreparedRecords, usize, bool)>;

/// Reads `put`'s input in a thread of its own, up to [`READ_AHEAD`] pieces ahead of the
/// appends, straight into the slices of the data records (`PreparedRecords`: one `readv` per
/// up to 1024 slices, then the slice footers and CRCs), so that reading and encoding overlap
/// the store's writes instead of taking turns with them, and the user bytes are copied once
/// (by the kernel, from the file) before the device writes them. The pieces are those the
/// appends need: `piece` bytes at a time, each part (`cap` bytes, the last one less) ending
/// with a piece of its own, so a part's appends are whole records until its last.
struct ReadAhead {
    pieces: std::sync::mpsc::Receiver<Piece>,
    free: std::sync::mpsc::Sender<PreparedRecords>,
}

/// Pieces `put` reads ahead of the appends.
const READ_AHEAD: usize = 2;

impl ReadAhead {
    /// Starts reading `file` as the `parts` (chunk ids) of `cap` bytes in pieces of `piece`
    /// bytes, laid out as records of `max_record` bytes. The thread ends at the end of the
    /// input or of the last part, at a read error (sent as the last piece), or when the
    /// `ReadAhead` is dropped (it is not joined: a read of standard input may block for ever).
    fn start(
        mut file: Box<dyn Read + Send>,
        cap: u64,
        parts: Vec<ChunkId>,
        piece: usize,
        max_record: usize,
    ) -> ReadAhead {
        let (piece_tx, pieces) = std::sync::mpsc::channel::<Piece>();
        let (free, free_rx) = std::sync::mpsc::channel::<PreparedRecords>();
        for _ in 0..READ_AHEAD + 1 {
            let _ = free.send(PreparedRecords::new());
        }
        std::thread::spawn(move || {
            for part in parts {
                let mut len = 0u64;
                loop {
                    let want = (cap - len).min(piece as u64) as usize;
                    let Ok(mut p) = free_rx.recv() else { return };
                    p.layout(part, len, want, max_record);
                    let mut io: Vec<IoSliceMut> = p.slices_mut().into_iter().map(IoSliceMut::new).collect();
                    let n = match read_full_vectored(&mut file, &mut io) {
                        Ok(n) => n,
                        Err(e) => {
                            let _ = piece_tx.send(Err(e));
                            return;
                        }
                    };
                    drop(io);
                    p.truncate(n);
                    p.finish();
                    len += n as u64;
                    let (eof, full) = (n < want, len == cap);
                    if piece_tx.send(Ok((p, n, eof || full))).is_err() || eof {
                        return;
                    }
                    if full {
                        break;
                    }
                }
            }
        });
        ReadAhead { pieces, free }
    }

    /// The next piece, or `None` once the input has ended (every later part is empty).
    fn next(&self) -> Option<Piece> {
        self.pieces.recv().ok()
    }

    /// Returns a piece's buffer for the next read.
    fn give_back(&self, p: PreparedRecords) {
        let _ = self.free.send(p);
    }
}

/// Fills `bufs` from `f` up to the end of the input; returns the bytes read.
fn read_full_vectored(f: &mut impl Read, mut bufs: &mut [IoSliceMut]) -> std::io::Result<usize> {
    let mut n = 0;
    while !bufs.is_empty() {
        match f.read_vectored(bufs) {
            Ok(0) => break,
            Ok(k) => {
                n += k;
                IoSliceMut::advance_slices(&mut bufs, k);
            }
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(n)
}

fn get(a: GetArgs) -> Result<()> {
    let paths = a.devices.all()?;
    let (mut front, _) = open_front(&a.devices, true)?;
    let id = resolve_id(&front, &a.id, &paths)?;
    let (_, c) = front.chunk(id).ok_or_else(|| anyhow!("no chunk {id} in {}", list_paths(&paths)))?;
    // A file stored in parts is its parts, joined.
    let pieces: Vec<Part> = match parts_of(&mut front, id, &paths)? {
        Some(parts) => {
            for (p, n) in &parts {
                match front.chunk(*p) {
                    Some((_, pc)) if pc.len == *n => {}
                    Some((_, pc)) => {
                        bail!("part {p} of chunk {id} holds {} bytes, the manifest says {n}", pc.len)
                    }
                    None => bail!("part {p} of chunk {id} is missing from {}", list_paths(&paths)),
                }
            }
            parts
        }
        None => vec![(id, c.len)],
    };
    let mut out: Box<dyn Write> = match &a.out {
        Some(p) => Box::new(std::io::BufWriter::new(
            std::fs::File::create(p).with_context(|| format!("creating {}", p.display()))?,
        )),
        None => Box::new(std::io::stdout().lock()),
    };
    for (part, len) in pieces {
        let mut pos = 0;
        while pos < len {
            let n = (len - pos).min(PIECE as u64);
            let v = front.read(part, pos, n).map_err(|e| with_paths(e, &paths))?;
            out.write_all(&v).context("writing the chunk's bytes")?;
            pos += n;
        }
    }
    out.flush().context("writing the chunk's bytes")?;
    Ok(())
}

fn list_paths(p: &[PathBuf]) -> String {
    p.iter().map(|p| p.display().to_string()).collect::<Vec<_>>().join(", ")
}

fn ls(a: LsArgs) -> Result<()> {
    let paths = a.devices.all()?;
    let (front, _) = open_front(&a.devices, true)?;
    let l = front.list();
    if a.output == OutputArg::Json {
        let v: Vec<serde_json::Value> = l
            .iter()
            .map(|(d, c)| {
                // The chunk's serde form, its stream type by name, and where it is.
                let mut j = serde_json::to_value(c)?;
                j["stream"] = stream_name(c.stream).into();
                j["drive"] = (*d).into();
                j["device"] = serde_json::to_value(&paths[*d])?;
                Ok(j)
            })
            .collect::<Result<_>>()?;
        println!("{}", serde_json::to_string_pretty(&v)?);
        return Ok(());
    }
    let multi = paths.len() > 1;
    println!(
        "{:<48}  {:<8}  {:>12}  {:<6}  {:>7}{}",
        "id",
        "stream",
        "length",
        "sealed",
        "records",
        if multi { "  drive" } else { "" }
    );
    for (d, c) in &l {
        println!(
            "{:<48}  {:<8}  {:>12}  {:<6}  {:>7}{}",
            c.id.to_string(),
            stream_name(c.stream),
            c.len,
            if c.sealed { "yes" } else { "no" },
            c.records,
            if multi { format!("  {d}") } else { String::new() }
        );
    }
    Ok(())
}

fn rm(a: RmArgs) -> Result<()> {
    let paths = a.devices.all()?;
    let (mut front, _) = open_front(&a.devices, false)?;
    let ids = a.ids.iter().map(|s| resolve_id(&front, s, &paths)).collect::<Result<Vec<_>>>()?;
    for id in &ids {
        if front.chunk(*id).is_none() {
            bail!("no chunk {id} in {}", list_paths(&paths));
        }
    }
    for id in &ids {
        // A file stored in parts goes whole: its parts first, then the manifest.
        let parts = parts_of(&mut front, *id, &paths)?;
        if let Some(parts) = &parts {
            for (p, _) in parts {
                if front.chunk(*p).is_some() {
                    front.delete(*p).map_err(|e| with_paths(e, &paths))?;
                }
            }
        }
        front.delete(*id).map_err(|e| with_paths(e, &paths))?;
        // Said only once it is durable: a crash after the line cannot bring the chunk back.
        front.sync().map_err(|e| with_paths(e, &paths))?;
        match parts {
            Some(parts) => println!("deleted {id} and its {} parts", parts.len()),
            None => println!("deleted {id}"),
        }
    }
    close(&mut front, &paths)
}

/// Opening recovers the store read-only (nothing is written: a checker does not change what it
/// checks); damage recovery cannot pass is an error naming zone and offset. Then every drive
/// is checked.
fn fsck(a: FsckArgs) -> Result<()> {
    let paths = a.devices.all()?;
    let (mut front, _) = open_front(&a.devices, true)?;
    let reps = front.fsck().map_err(|e| with_paths(e, &paths))?;
    let problems: usize = reps.iter().map(|r| r.problem_count()).sum();
    if a.output == OutputArg::Json {
        let v: Vec<serde_json::Value> = paths
            .iter()
            .zip(&reps)
            .map(|(p, r)| {
                // The report's serde form and the device file it is of.
                let mut j = serde_json::to_value(r)?;
                j["device"] = serde_json::to_value(p)?;
                Ok(j)
            })
            .collect::<Result<_>>()?;
        println!("{}", serde_json::to_string_pretty(&v)?);
    } else {
        for (p, r) in paths.iter().zip(&reps) {
            for d in &r.device {
                let kind = if d.after_crash { "warning" } else { "problem" };
                println!("{}: device metadata {kind}: {}", p.display(), d.what);
            }
            for q in &r.problems {
                let chunk = match (q.chunk, q.chunk_offset) {
                    (Some(c), Some(o)) => format!(", chunk {c} at chunk offset {o}"),
                    (Some(c), None) => format!(", chunk {c}"),
                    _ => String::new(),
                };
                println!("{}: zone {} byte {}{chunk}: {}", p.display(), q.zone, q.offset, q.what);
            }
            println!(
                "{}: {}: {} zones, {} records, {} chunks checked ({} read), {} torn tails, {} problems",
                p.display(),
                if r.is_clean() { "clean" } else { "DAMAGED" },
                r.zones_checked,
                r.records_checked,
                r.chunks_checked,
                ByteSize(r.bytes_checked),
                r.torn_tails,
                r.problem_count()
            );
        }
    }
    if problems > 0 {
        bail!("fsck found {problems} problems in {}", list_paths(&paths));
    }
    Ok(())
}

fn gc(a: GcArgs) -> Result<()> {
    let paths = a.devices.all()?;
    let (mut front, _) = open_front(&a.devices, false)?;
    for (d, path) in paths.iter().enumerate() {
        let mut rounds = 0;
        let st = front.drive_mut(d).expect("one store per path");
        while a.rounds.is_none_or(|r| rounds < r) {
            // An explicit GC reclaims any dead data, not only zones a quarter dead.
            match st.gc_any().with_context(|| format!("GC on {}", path.display()))? {
                Some(z) => println!("{}: reclaimed zone {z}", path.display()),
                None => break,
            }
            rounds += 1;
        }
        println!(
            "{}: {rounds} zones reclaimed, {} user bytes migrated, {} free datazones",
            path.display(),
            st.stats().gc_bytes_migrated,
            st.free_zones()
        );
    }
    close(&mut front, &paths)
}

fn info(a: InfoArgs) -> Result<()> {
    let paths = a.devices.all()?;
    let (front, supers) = open_front(&a.devices, true)?;
    let stats = front.stats();
    let mut drives = Vec::new();
    for (d, (p, s)) in paths.iter().zip(&supers).enumerate() {
        let st = front.drive(d).expect("in range");
        let i = st.device().info();
        let ds = &stats.drives[d].store;
        let mem = st.memory();
        let written: u64 = st
            .zone_states()
            .iter()
            .map(|&(z, _)| {
                st.device().report_zone(z).map(|zz| zz.wp.saturating_sub(zz.start).min(zz.capacity))
            })
            .collect::<std::result::Result<Vec<_>, _>>()
            .with_context(|| format!("reporting zones of {}", p.display()))?
            .iter()
            .sum::<u64>()
            * SECTOR_SIZE;
        // The census order is ZoneState's.
        let states = ["free", "opened", "activated", "full", "garbage"];
        let by_state: serde_json::Map<String, serde_json::Value> =
            states.iter().zip(ds.zones_by_state).map(|(k, v)| (k.to_string(), v.into())).collect();
        drives.push(serde_json::json!({
            "device": p,
            "geometry": {
                "zones": i.nr_zones, "conventional": i.nr_conv, "zone_bytes": i.zone_bytes(),
                "zone_capacity_bytes": i.zone_capacity_sectors * SECTOR_SIZE,
                "max_open": i.max_open, "max_active": i.max_active,
            },
            "superzone": {
                "format_version": s.version, "format_time": s.time,
                "metazones": s.config.nr_metazones,
                "pools": { "gc": s.config.pool_gc, "data": s.config.pool_data, "metadata": s.config.pool_metadata },
                "placement": placement_name(s.config.placement),
                "metadata_chunk_limit": s.config.metadata_chunk_limit,
                "max_record": s.config.max_record,
            },
            "datazones": ds.datazones,
            "gc_reserve_zones": ds.gc_reserve_zones,
            "usable_bytes": ds.usable_bytes,
            "chunk_limit": st.chunk_limit(shingled_store::StreamType::DATA),
            "zones_by_state": by_state,
            "chunks": ds.chunks, "sealed_chunks": ds.sealed_chunks, "records": ds.records,
            "live_bytes": ds.live_bytes,
            "written_datazone_bytes": written,
            "not_live_bytes": written.saturating_sub(ds.live_bytes),
            "memory": mem,
            "recovery": st.recovery_report(),
        }));
    }
    let t = &stats.total;
    let total = serde_json::json!({
        "drives": paths.len(), "datazones": t.store.datazones, "free_zones": t.free_zones,
        "chunks": t.store.chunks, "sealed_chunks": t.store.sealed_chunks, "records": t.store.records,
        "live_bytes": t.store.live_bytes,
    });
    if a.output == OutputArg::Json {
        println!(
            "{}",
            serde_json::to_string_pretty(&serde_json::json!({ "drives": drives, "total": total }))?
        );
        return Ok(());
    }
    for v in &drives {
        let g = &v["geometry"];
        let s = &v["superzone"];
        let z = &v["zones_by_state"];
        println!("{}", v["device"].as_str().unwrap_or_default());
        println!(
            "  device      {} zones of {} ({} conventional), zone capacity {}",
            g["zones"],
            ByteSize(g["zone_bytes"].as_u64().unwrap_or(0)),
            g["conventional"],
            ByteSize(g["zone_capacity_bytes"].as_u64().unwrap_or(0))
        );
        println!(
            "  superzone   format v{}, {} metazones, pools gc/data/metadata {}/{}/{}, placement {}, \
             metadata chunk limit {}, max record {}",
            s["format_version"],
            s["metazones"],
            s["pools"]["gc"],
            s["pools"]["data"],
            s["pools"]["metadata"],
            s["placement"].as_str().unwrap_or_default(),
            ByteSize(s["metadata_chunk_limit"].as_u64().unwrap_or(0)),
            ByteSize(s["max_record"].as_u64().unwrap_or(0))
        );
        println!(
            "  datazones   {} (free {}, opened {}, activated {}, full {}, garbage {})",
            v["datazones"], z["free"], z["opened"], z["activated"], z["full"], z["garbage"]
        );
        println!(
            "  capacity    usable {} user bytes ({} datazone(s) kept for GC), chunk limit {} bytes",
            v["usable_bytes"], v["gc_reserve_zones"], v["chunk_limit"]
        );
        println!("  chunks      {} ({} sealed), {} records", v["chunks"], v["sealed_chunks"], v["records"]);
        println!(
            "  bytes       live {}, written in datazones {}, not live (garbage, headers, padding) {}",
            v["live_bytes"], v["written_datazone_bytes"], v["not_live_bytes"]
        );
        println!(
            "  memory      {} B per chunk, {} B per record index, {} B in total",
            v["memory"]["per_chunk"], v["memory"]["per_record"], v["memory"]["total"]
        );
        let r = &v["recovery"];
        if !r.is_null() {
            println!(
                "  recovery    {:.1} ms: checkpoint {} ({} B), {} journal records, {} zones scanned, \
                 {} records found, {} damaged",
                r["total_s"].as_f64().unwrap_or(0.0) * 1e3,
                r["checkpoint_generation"],
                r["checkpoint_bytes"],
                r["journal_records"],
                r["zones_scanned"],
                r["records_scanned"],
                r["damaged_records"]
            );
        }
    }
    if paths.len() > 1 {
        println!(
            "total: {} drives, {} datazones ({} free), {} chunks ({} sealed), {} records, {} live bytes",
            total["drives"],
            total["datazones"],
            total["free_zones"],
            total["chunks"],
            total["sealed_chunks"],
            total["records"],
            total["live_bytes"]
        );
    }
    Ok(())
}
