//! Benchmarks of the chunk store after SMRSTORE §6 (`../shared/papers/smrstore-paper.txt`):
//! write and random-read throughput against the raw zoned device and a file-per-chunk baseline
//! (Figs. 14, 16), the multi-stream macro benchmark with deletions and GC (Table 3, Figs. 19,
//! 20), recovery time (Fig. 21), index memory and CPU cost (§6.5).
//!
//! Every bench is a function taking [`BenchOptions`] and returning a [`BenchReport`]: a
//! printable [`Table`], plots, notes that say which device, sizes and clock were used, and the
//! typed rows ([`BenchResult`], serde) for tools and the Python layer. Nothing is hard-coded:
//! every number comes from running the workload. Two clocks appear and each row names its own:
//!
//! - **wall**: elapsed time on this machine (a device file on the local file system, possibly
//!   `O_DIRECT`; files on the same file system for the baseline);
//! - **modelled**: the [`Timed`] decorator's clock over a [`MemZoned`] device, i.e. what an
//!   HM-SMR drive's mechanics would take (seeks, rotation, media rate, zone open/close/reset).
//!
//! The workload generators are seeded; modelled results are deterministic for a seed.

use crate::format::{self, RecordType, BLOCK, DATA_PREFIX, HEADER_LEN};
use crate::{ChunkId, Durability, Placement, Store, StoreConfig, StreamType, ZoneState};
use serde::Serialize;
use shingled_zoned::{
    DeviceInfo, FileOptions, FileZoned, MemZoned, Timed, TimingConfig, ZoneOp, ZonedConfig, ZonedDevice,
    SECTOR_SIZE,
};
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::time::Instant;

/// The benches, with one line each.
pub const BENCHES: &[(&str, &str)] = &[
    ("write", "Fig. 14: append throughput by I/O size, engine vs raw zoned device vs file-per-chunk"),
    ("read", "Fig. 16: random-read throughput by I/O size, same three systems"),
    (
        "macro",
        "Table 3, Figs. 19/20: mixed streams at 80% utilisation with deletions and GC, placement ablation",
    ),
    ("recovery", "Fig. 21: Store::open time vs data written and chunk count"),
    ("memory", "§6.5: index bytes per chunk and per record index"),
    ("cpu", "§6.5: CPU seconds per GB written, engine vs raw device"),
];

/// The I/O sizes of Figs. 14 and 16.
pub const IO_SIZES: [usize; 5] = [4 << 10, 16 << 10, 64 << 10, 256 << 10, 1 << 20];

const MIB: u64 = 1 << 20;

/// Options shared by the benches.
#[derive(Clone, Debug)]
pub struct BenchOptions {
    /// Fraction of the documented sizes (1 = the sizes in `docs/benchmarks.md`; tests use
    /// ~0.01). Bounds: > 0.
    pub scale: f64,
    /// Seed of every random choice.
    pub seed: u64,
    /// Chunks appended concurrently (interleaved round-robin in one thread) in `write`, `read`
    /// and `cpu`. Default 8.
    pub streams: usize,
    /// Directory for device files and baseline files (default: the system temp dir). It should
    /// be on the file system you want to measure.
    pub dir: Option<PathBuf>,
}

impl Default for BenchOptions {
    fn default() -> Self {
        BenchOptions { scale: 1.0, seed: 1, streams: 8, dir: None }
    }
}

impl BenchOptions {
    fn n(&self, full: f64, min: u64) -> u64 {
        ((full * self.scale).round() as u64).max(min)
    }
    fn tempdir(&self) -> std::io::Result<tempfile::TempDir> {
        match &self.dir {
            Some(d) => {
                std::fs::create_dir_all(d)?;
                tempfile::Builder::new().prefix("store-bench-").tempdir_in(d)
            }
            None => tempfile::Builder::new().prefix("store-bench-").tempdir(),
        }
    }
}

/// A bench failure.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum BenchError {
    /// No bench of that name.
    #[error("unknown store bench {0:?} (try: write, read, macro, recovery, memory, cpu)")]
    Unknown(String),
    /// The store failed.
    #[error("{what}: {source}")]
    Store {
        /// What the bench was doing.
        what: String,
        /// The error.
        source: crate::StoreError,
    },
    /// The device failed.
    #[error("{what}: {source}")]
    Device {
        /// What the bench was doing.
        what: String,
        /// The error.
        source: shingled_zoned::ZonedError,
    },
    /// A file operation failed.
    #[error("{what}: {source}")]
    Io {
        /// What the bench was doing.
        what: String,
        /// The error.
        source: std::io::Error,
    },
}

/// Result alias of this module.
pub type BResult<T> = std::result::Result<T, BenchError>;

fn se(what: impl Into<String>) -> impl FnOnce(crate::StoreError) -> BenchError {
    let what = what.into();
    move |source| BenchError::Store { what, source }
}
fn de(what: impl Into<String>) -> impl FnOnce(shingled_zoned::ZonedError) -> BenchError {
    let what = what.into();
    move |source| BenchError::Device { what, source }
}
fn ioe(what: impl Into<String>) -> impl FnOnce(std::io::Error) -> BenchError {
    let what = what.into();
    move |source| BenchError::Io { what, source }
}

// ----- reports --------------------------------------------------------------------------

/// A printable table.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Table {
    /// Column names.
    pub columns: Vec<String>,
    /// Cells, row by row.
    pub rows: Vec<Vec<String>>,
}

impl Table {
    fn new(columns: &[&str]) -> Table {
        Table { columns: columns.iter().map(|s| s.to_string()).collect(), rows: Vec::new() }
    }

    /// Aligned text, one row per line.
    pub fn to_text(&self) -> String {
        let mut w: Vec<usize> = self.columns.iter().map(|c| c.len()).collect();
        for r in &self.rows {
            for (i, c) in r.iter().enumerate() {
                w[i] = w[i].max(c.chars().count());
            }
        }
        let line = |cells: &[String]| {
            let mut s = String::new();
            for (i, c) in cells.iter().enumerate() {
                let pad = w[i] - c.chars().count();
                if i == 0 {
                    s += c;
                    s += &" ".repeat(pad);
                } else {
                    s += "  ";
                    s += &" ".repeat(pad);
                    s += c;
                }
            }
            s.trim_end().to_string() + "\n"
        };
        let mut out = line(&self.columns);
        out += &line(&w.iter().map(|&n| "-".repeat(n)).collect::<Vec<_>>());
        for r in &self.rows {
            out += &line(r);
        }
        out
    }

    /// CSV (cells containing commas or quotes are quoted).
    pub fn to_csv(&self) -> String {
        let cell = |c: &String| {
            if c.contains([',', '"', '\n']) {
                format!("\"{}\"", c.replace('"', "\"\""))
            } else {
                c.clone()
            }
        };
        let mut out = self.columns.iter().map(cell).collect::<Vec<_>>().join(",") + "\n";
        for r in &self.rows {
            out += &(r.iter().map(cell).collect::<Vec<_>>().join(",") + "\n");
        }
        out
    }
}

/// One curve of a line plot, or one series of a bar plot (`x` = category index).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Curve {
    /// Legend name.
    pub name: String,
    /// Points.
    pub points: Vec<(f64, f64)>,
}

/// A figure people would rather look at than read.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Plot {
    /// File-name suffix (`write-wall`, `macro-throughput`, ...).
    pub key: String,
    /// Title.
    pub title: String,
    /// Axis label.
    pub x_label: String,
    /// Axis label.
    pub y_label: String,
    /// Bar categories (bar plots: a curve's point `(i, y)` is category `i`); empty for lines.
    pub categories: Vec<String>,
    /// Curves.
    pub curves: Vec<Curve>,
}

/// What a bench produced.
#[derive(Clone, Debug, Serialize)]
pub struct BenchReport {
    /// Bench name.
    pub bench: String,
    /// Title (the paper figure it follows).
    pub title: String,
    /// Device, sizes, durability, clock: what a reader needs to interpret the numbers.
    pub notes: Vec<String>,
    /// The main table.
    pub table: Table,
    /// Further tables (name, table).
    pub extra: Vec<(String, Table)>,
    /// Plots.
    pub plots: Vec<Plot>,
    /// Typed results.
    pub result: BenchResult,
}

impl BenchReport {
    /// Title, notes and tables as text.
    pub fn to_text(&self) -> String {
        let mut s = format!("{}\n", self.title);
        for n in &self.notes {
            s += &format!("  * {n}\n");
        }
        s += "\n";
        s += &self.table.to_text();
        for (name, t) in &self.extra {
            s += &format!("\n{name}\n{}", t.to_text());
        }
        s
    }
}

/// Typed results of each bench.
#[derive(Clone, Debug, Serialize)]
#[serde(tag = "kind", content = "rows", rename_all = "kebab-case")]
pub enum BenchResult {
    /// `write` and `read`.
    Io(Vec<IoRow>),
    /// `macro`.
    Macro(Vec<MacroRun>),
    /// `recovery`.
    Recovery(Vec<RecoveryRow>),
    /// `memory`.
    Memory(Vec<MemoryRow>),
    /// `cpu`.
    Cpu(Vec<CpuRow>),
}

/// Runs the bench `name`.
pub fn run(name: &str, opts: &BenchOptions) -> BResult<BenchReport> {
    match name {
        "write" => write_bench(opts),
        "read" => read_bench(opts),
        "macro" => macro_bench(opts),
        "recovery" => recovery_bench(opts),
        "memory" => memory_bench(opts),
        "cpu" => cpu_bench(opts),
        _ => Err(BenchError::Unknown(name.to_string())),
    }
}

// ----- small helpers --------------------------------------------------------------------

/// SplitMix64: small, seeded, good enough for workload choices.
#[derive(Clone, Debug)]
struct Rng(u64);

impl Rng {
    fn new(seed: u64) -> Rng {
        Rng(seed ^ 0x9e37_79b9_7f4a_7c15)
    }
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: u64) -> u64 {
        if n == 0 {
            0
        } else {
            self.next() % n
        }
    }
    fn f64(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
}

fn payload(len: usize, seed: u64) -> Vec<u8> {
    let mut r = Rng::new(seed);
    let mut v = Vec::with_capacity(len + 8);
    while v.len() < len {
        v.extend_from_slice(&r.next().to_le_bytes());
    }
    v.truncate(len);
    v
}

fn size_label(b: u64) -> String {
    if b >= MIB && b.is_multiple_of(MIB) {
        format!("{}MiB", b / MIB)
    } else if b >= 1024 && b.is_multiple_of(1024) {
        format!("{}KiB", b / 1024)
    } else {
        format!("{b}B")
    }
}

fn mb(b: u64) -> f64 {
    b as f64 / 1e6
}

fn f(v: f64, d: usize) -> String {
    format!("{v:.d$}")
}

fn modelled<D: ZonedDevice>(t: &Timed<D>) -> f64 {
    t.now().as_secs_f64()
}

/// CPU time of the calling thread in seconds (`/proc/thread-self/schedstat`: nanoseconds on
/// CPU, user and system), falling back to the process's `utime + stime` from
/// `/proc/self/stat` at 100 ticks per second. `None` where neither exists.
pub fn thread_cpu_seconds() -> Option<f64> {
    if let Ok(s) = std::fs::read_to_string("/proc/thread-self/schedstat") {
        if let Some(ns) = s.split_whitespace().next().and_then(|x| x.parse::<u64>().ok()) {
            return Some(ns as f64 / 1e9);
        }
    }
    let s = std::fs::read_to_string("/proc/self/stat").ok()?;
    let rest = &s[s.rfind(')')? + 2..];
    let v: Vec<&str> = rest.split_whitespace().collect();
    let ticks = v.get(11)?.parse::<u64>().ok()? + v.get(12)?.parse::<u64>().ok()?;
    Some(ticks as f64 / 100.0)
}

/// The geometry the wall-clock and modelled I/O benches share: 256 MiB zones (SMRSTORE's
/// drive), `zones` of them, 1 conventional, ZBC, max_open 128.
fn hm_smr_geometry(zones: u64) -> ZonedConfig {
    ZonedConfig::hm_smr(zones)
}

fn file_device(dir: &Path, name: &str, cfg: &ZonedConfig) -> BResult<FileZoned> {
    let path = dir.join(name);
    let _ = std::fs::remove_file(&path);
    FileZoned::create(&path, cfg, FileOptions::default()).map_err(de(format!("creating {}", path.display())))
}

fn timed_device(cfg: &ZonedConfig) -> BResult<Timed<MemZoned>> {
    let mem = MemZoned::new(cfg).map_err(de("building the in-memory device"))?;
    Timed::new(mem, TimingConfig::default()).map_err(de("timing the in-memory device"))
}

/// A data record as [`Tap`] saw it written: owner, its stream's pool key, user bytes.
#[derive(Clone, Copy, Debug)]
struct TapRec {
    chunk: ChunkId,
    len: u32,
    pool: u8,
}

/// A pass-through device under [`Timed`] that decodes the data records written to each zone
/// (no reads, no modelled time) and, when a zone is reset, logs what it held. The macro bench
/// uses it to see inside the zones GC picks without touching the store or the clock.
#[derive(Debug)]
struct Tap<D: ZonedDevice> {
    inner: D,
    info: DeviceInfo,
    zones: Vec<Vec<TapRec>>,
    resets: std::cell::RefCell<Vec<(u64, Vec<TapRec>)>>,
}

impl<D: ZonedDevice> Tap<D> {
    fn new(inner: D) -> Tap<D> {
        let info = inner.info();
        Tap { inner, info, zones: vec![Vec::new(); info.nr_zones as usize], resets: Default::default() }
    }

    /// Takes the log of resets since the last call: `(zone, records it held)`.
    fn take_resets(&self) -> Vec<(u64, Vec<TapRec>)> {
        std::mem::take(&mut *self.resets.borrow_mut())
    }
}

impl<D: ZonedDevice> ZonedDevice for Tap<D> {
    fn info(&self) -> DeviceInfo {
        self.inner.info()
    }
    fn report_zones(
        &self,
        sector: u64,
        nr_sectors: u64,
        opt: shingled_zoned::ReportOption,
    ) -> shingled_zoned::Result<Vec<shingled_zoned::Zone>> {
        self.inner.report_zones(sector, nr_sectors, opt)
    }
    fn read(&mut self, sector: u64, buf: &mut [u8]) -> shingled_zoned::Result<()> {
        self.inner.read(sector, buf)
    }
    fn write(&mut self, sector: u64, data: &[u8]) -> shingled_zoned::Result<()> {
        self.inner.write(sector, data)?;
        // The engine writes whole records, one or several consecutive ones per command
        // (write_run), so a header is at the start and after each record.
        let mut at = 0usize;
        while data.len() >= at + HEADER_LEN + DATA_PREFIX && sector < self.info.capacity_sectors {
            let Ok(h) = format::decode_header(&data[at..at + HEADER_LEN]) else { break };
            if h.rtype != RecordType::Data {
                break;
            }
            let p = &data[at + HEADER_LEN..at + HEADER_LEN + DATA_PREFIX];
            if let Ok(d) = format::decode_data_prefix(p, h.payload_len as usize) {
                let z = self.info.zone_of(sector) as usize;
                self.zones[z].push(TapRec { chunk: d.chunk, len: d.len, pool: d.pool });
            }
            at += h.record_len() as usize;
        }
        Ok(())
    }
    fn zone_mgmt(&mut self, op: ZoneOp, sector: u64, nr_sectors: u64) -> shingled_zoned::Result<()> {
        self.inner.zone_mgmt(op, sector, nr_sectors)?;
        if op == ZoneOp::Reset && sector < self.info.capacity_sectors {
            let first = self.info.zone_of(sector);
            let last =
                self.info.zone_of((sector + nr_sectors.max(1) - 1).min(self.info.capacity_sectors - 1));
            for z in first..=last {
                let recs = std::mem::take(&mut self.zones[z as usize]);
                self.resets.borrow_mut().push((z, recs));
            }
        }
        Ok(())
    }
    fn flush(&mut self) -> shingled_zoned::Result<()> {
        self.inner.flush()
    }
    fn set_zone_cond(&mut self, zone: u64, cond: shingled_zoned::ZoneCond) -> shingled_zoned::Result<()> {
        self.inner.set_zone_cond(zone, cond)
    }
    fn metadata_damage(&self) -> Vec<shingled_zoned::MetaDamage> {
        self.inner.metadata_damage()
    }
}

// ----- write / read (Figs. 14, 16) ------------------------------------------------------

/// One measured cell of `write` or `read`.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct IoRow {
    /// `engine`, `raw-zoned` or `cs-files` (file per chunk on the local file system).
    pub system: String,
    /// Device under the system (`file` = FileZoned device file, `timed-mem` = MemZoned in
    /// Timed, `fs` = local file system).
    pub device: String,
    /// `wall` or `modelled`.
    pub clock: String,
    /// `every-append` (flush per I/O) or `batched` (flush every `batch` I/Os and at the end);
    /// reads: `-`.
    pub durability: String,
    /// I/O size in bytes.
    pub io_size: u64,
    /// I/Os.
    pub ops: u64,
    /// User bytes written or read.
    pub bytes: u64,
    /// Bytes the system wrote or read on its device (engine: records with headers, footers
    /// and padding; files: the user bytes).
    pub device_bytes: u64,
    /// Seconds (wall or modelled).
    pub seconds: f64,
    /// User MB/s (10^6 bytes).
    pub mb_s: f64,
    /// I/Os per second.
    pub ops_s: f64,
    /// `mb_s` over the raw device's with the same I/O size, clock, device and durability.
    pub vs_raw: Option<f64>,
}

struct IoSpec {
    io_size: usize,
    ops: u64,
    streams: usize,
    chunk_len: u64,
    /// Sync every `batch` I/Os (1 = every append).
    batch: u64,
}

fn row(system: &str, device: &str, clock: &str, dur: &str, s: &IoSpec, dev_bytes: u64, secs: f64) -> IoRow {
    let bytes = s.ops * s.io_size as u64;
    let secs = secs.max(1e-9);
    IoRow {
        system: system.into(),
        device: device.into(),
        clock: clock.into(),
        durability: dur.into(),
        io_size: s.io_size as u64,
        ops: s.ops,
        bytes,
        device_bytes: dev_bytes,
        seconds: secs,
        mb_s: mb(bytes) / secs,
        ops_s: s.ops as f64 / secs,
        vs_raw: None,
    }
}

/// Appends `s.ops` I/Os of `s.io_size` bytes round-robin over `s.streams` OSS-data chunks
/// (a chunk is sealed at `chunk_len` and replaced). Returns (device bytes, seconds by `clock`).
fn engine_writes<D: ZonedDevice>(
    store: &mut Store<D>,
    s: &IoSpec,
    seed: u64,
    next_id: &mut u128,
    clock: impl Fn(&Store<D>) -> f64,
) -> BResult<(u64, f64)> {
    let data = payload(s.io_size, seed);
    let mut chunks: Vec<(ChunkId, u64)> = Vec::new();
    let dev0 = store.stats().device_bytes_written;
    let t0 = clock(store);
    for i in 0..s.ops {
        let k = (i % s.streams as u64) as usize;
        if k >= chunks.len() || chunks[k].1 + s.io_size as u64 > s.chunk_len {
            if k < chunks.len() {
                store.seal(chunks[k].0).map_err(se("sealing a chunk"))?;
            }
            *next_id += 1;
            let id = ChunkId::from_u128(*next_id);
            store.create(id, StreamType::DATA).map_err(se("creating a chunk"))?;
            if k < chunks.len() {
                chunks[k] = (id, 0);
            } else {
                chunks.push((id, 0));
            }
        }
        store.append(chunks[k].0, &data).map_err(se(format!("appending {} bytes", s.io_size)))?;
        chunks[k].1 += s.io_size as u64;
        if s.batch > 1 && (i + 1) % s.batch == 0 {
            store.sync().map_err(se("syncing"))?;
        }
    }
    store.sync().map_err(se("syncing"))?;
    Ok((store.stats().device_bytes_written - dev0, clock(store) - t0))
}

/// Sequential writes of `s.io_size` straight to the device, one zone after another from the
/// first sequential zone (the raw device's best case), flushing as the engine does.
fn raw_writes<D: ZonedDevice>(
    dev: &mut D,
    s: &IoSpec,
    seed: u64,
    clock: impl Fn(&D) -> f64,
) -> BResult<(u64, f64)> {
    let info = dev.info();
    let data = payload(s.io_size, seed);
    let mut zone = info.nr_conv;
    let mut wp = 0u64;
    let t0 = clock(dev);
    for i in 0..s.ops {
        let cap = info.zone_cap(zone) * SECTOR_SIZE;
        if wp + s.io_size as u64 > cap {
            dev.zone_mgmt(ZoneOp::Finish, info.zone_start(zone), info.zone_len(zone))
                .map_err(de("finishing a zone"))?;
            zone += 1;
            wp = 0;
        }
        dev.write(info.zone_start(zone) + wp / SECTOR_SIZE, &data).map_err(de("raw write"))?;
        wp += s.io_size as u64;
        if (i + 1) % s.batch == 0 {
            dev.flush().map_err(de("raw flush"))?;
        }
    }
    dev.flush().map_err(de("raw flush"))?;
    Ok((s.ops * s.io_size as u64, clock(dev) - t0))
}

/// The CS-Ext4 stand-in: each chunk a file in `dir`, appended with `write_all`; durability by
/// `sync_data` of the file after each append, or of every file written since the last sync
/// every `batch` appends.
fn file_writes(dir: &Path, s: &IoSpec, seed: u64, direct: bool) -> BResult<(u64, f64)> {
    // O_DIRECT wants 4 KiB-aligned memory: take an aligned window of a larger buffer.
    let mut buf = vec![0u8; s.io_size + 4096];
    let at = buf.as_ptr().align_offset(4096).min(4096);
    buf[at..at + s.io_size].copy_from_slice(&payload(s.io_size, seed));
    let data = &buf[at..at + s.io_size];
    let mut files: Vec<(File, u64, bool)> = Vec::new();
    let mut n = 0u64;
    let t0 = Instant::now();
    let open = |n: u64| {
        let p = dir.join(format!("chunk-{n}"));
        let mut o = OpenOptions::new();
        o.create(true).append(true);
        if direct {
            o.custom_flags(libc::O_DIRECT);
        }
        o.open(&p).map_err(ioe(format!("creating {}", p.display())))
    };
    for i in 0..s.ops {
        let k = (i % s.streams as u64) as usize;
        if k >= files.len() || files[k].1 + s.io_size as u64 > s.chunk_len {
            n += 1;
            let fl = open(n)?;
            if k < files.len() {
                if files[k].2 {
                    files[k].0.sync_data().map_err(ioe("sync_data"))?;
                }
                files[k] = (fl, 0, false);
            } else {
                files.push((fl, 0, false));
            }
        }
        let fe = &mut files[k];
        fe.0.write_all(data).map_err(ioe("appending to a chunk file"))?;
        fe.1 += s.io_size as u64;
        fe.2 = true;
        if s.batch == 1 {
            fe.0.sync_data().map_err(ioe("sync_data"))?;
            fe.2 = false;
        } else if (i + 1) % s.batch == 0 {
            for fe in files.iter_mut().filter(|x| x.2) {
                fe.0.sync_data().map_err(ioe("sync_data"))?;
                fe.2 = false;
            }
        }
    }
    for fe in files.iter_mut().filter(|x| x.2) {
        fe.0.sync_data().map_err(ioe("sync_data"))?;
    }
    Ok((s.ops * s.io_size as u64, t0.elapsed().as_secs_f64()))
}

fn io_store_config(durability: Durability) -> StoreConfig {
    StoreConfig { durability, gc_free_zones: 0, ..StoreConfig::default() }
}

/// Zones for a device holding `bytes` of writes with room for the store's metadata.
/// At least 256 zones (64 GiB, sparse) whatever the cell size, so that the store's pools
/// keep their configured sizes (40/10/5 open zones fit) and every cell sees the same placement.
fn zones_for(bytes: u64) -> u64 {
    (bytes.div_ceil(256 * MIB) * 2 + 16).max(256)
}

fn set_ratios(rows: &mut [IoRow]) {
    let raw: Vec<IoRow> = rows.iter().filter(|r| r.system == "raw-zoned").cloned().collect();
    for r in rows.iter_mut() {
        if let Some(b) = raw.iter().find(|b| {
            b.io_size == r.io_size
                && b.clock == r.clock
                && b.durability == r.durability
                && b.device == r.device
        }) {
            r.vs_raw = Some(r.mb_s / b.mb_s.max(1e-12));
        }
    }
    // The file-per-chunk baseline has no zoned device: compare it with the wall-clock raw
    // device file under the same durability.
    for r in rows.iter_mut().filter(|r| r.system == "cs-files") {
        if let Some(b) = raw.iter().find(|b| {
            b.io_size == r.io_size && b.clock == "wall" && b.durability == r.durability && b.device == "file"
        }) {
            r.vs_raw = Some(r.mb_s / b.mb_s.max(1e-12));
        }
    }
}

fn io_table(rows: &[IoRow]) -> Table {
    let mut t = Table::new(&[
        "system",
        "device",
        "clock",
        "durability",
        "io size",
        "ops",
        "MB",
        "device MB",
        "seconds",
        "MB/s",
        "ops/s",
        "vs raw",
    ]);
    for r in rows {
        t.rows.push(vec![
            r.system.clone(),
            r.device.clone(),
            r.clock.clone(),
            r.durability.clone(),
            size_label(r.io_size),
            r.ops.to_string(),
            f(mb(r.bytes), 1),
            f(mb(r.device_bytes), 1),
            f(r.seconds, 3),
            f(r.mb_s, 1),
            f(r.ops_s, 0),
            r.vs_raw.map(|v| f(v, 2)).unwrap_or_else(|| "-".into()),
        ]);
    }
    t
}

fn io_plots(rows: &[IoRow], what: &str) -> Vec<Plot> {
    let cats: Vec<String> = IO_SIZES.iter().map(|&s| size_label(s as u64)).collect();
    let mut plots = Vec::new();
    for clock in ["wall", "modelled"] {
        let mut curves: Vec<Curve> = Vec::new();
        for r in rows.iter().filter(|r| r.clock == clock) {
            let name = if r.durability == "-" {
                format!("{} ({})", r.system, r.device)
            } else {
                format!("{} ({}, {})", r.system, r.device, r.durability)
            };
            let i = IO_SIZES.iter().position(|&s| s as u64 == r.io_size).unwrap_or(0) as f64;
            match curves.iter_mut().find(|c| c.name == name) {
                Some(c) => c.points.push((i, r.mb_s)),
                None => curves.push(Curve { name, points: vec![(i, r.mb_s)] }),
            }
        }
        if !curves.is_empty() {
            plots.push(Plot {
                key: format!("{what}-{clock}"),
                title: format!(
                    "{what} throughput ({})",
                    if clock == "wall" { "wall-clock, this machine" } else { "modelled HM-SMR drive" }
                ),
                x_label: "I/O size".into(),
                y_label: "MB/s".into(),
                categories: cats.clone(),
                curves,
            });
        }
    }
    plots
}

/// The write bench's sizes at `scale`: ops per I/O size and the chunk length.
fn write_ops(opts: &BenchOptions, io: usize) -> u64 {
    // 1 GiB per cell, at most 8192 I/Os (fsync-bound small writes), at least 8.
    let by_bytes = opts.n(1024.0 * MIB as f64, 1) / io as u64;
    by_bytes.min(opts.n(8192.0, 8)).max(8)
}

/// Fig. 14: appends of each I/O size over `streams` concurrent chunks.
pub fn write_bench(opts: &BenchOptions) -> BResult<BenchReport> {
    let dir = opts.tempdir().map_err(ioe("creating the bench directory"))?;
    let streams = opts.streams.max(1);
    let batch = 64u64;
    let chunk_len = 64 * MIB;
    let mut rows = Vec::new();
    let mut direct = None;
    let mut next_id = 0u128;
    for (k, &io) in IO_SIZES.iter().enumerate() {
        let ops = write_ops(opts, io);
        let zones = zones_for(ops * io as u64 * 2);
        let geo = hm_smr_geometry(zones);
        let seed = opts.seed.wrapping_add(k as u64);
        for (dur, b) in [("every-append", 1u64), ("batched", batch)] {
            let spec = IoSpec { io_size: io, ops, streams, chunk_len, batch: b };
            let durability = if b == 1 { Durability::EveryAppend } else { Durability::Batched };
            // (a) engine on a device file, wall-clock.
            let dev = file_device(dir.path(), "engine.zdev", &geo)?;
            direct = Some(dev.is_direct());
            let mut st = Store::format(dev, io_store_config(durability)).map_err(se("formatting"))?;
            let t0 = Instant::now();
            let (db, secs) =
                engine_writes(&mut st, &spec, seed, &mut next_id, |_| t0.elapsed().as_secs_f64())?;
            rows.push(row("engine", "file", "wall", dur, &spec, db, secs));
            drop(st);
            let _ = std::fs::remove_file(dir.path().join("engine.zdev"));
            // (b) raw device file, wall-clock.
            let mut dev = file_device(dir.path(), "raw.zdev", &geo)?;
            let t0 = Instant::now();
            let (db, secs) = raw_writes(&mut dev, &spec, seed, |_| t0.elapsed().as_secs_f64())?;
            rows.push(row("raw-zoned", "file", "wall", dur, &spec, db, secs));
            drop(dev);
            let _ = std::fs::remove_file(dir.path().join("raw.zdev"));
            // (c) file per chunk, wall-clock.
            let fdir = dir.path().join("files");
            std::fs::create_dir_all(&fdir).map_err(ioe("creating the files directory"))?;
            let (db, secs) = file_writes(&fdir, &spec, seed, false)?;
            rows.push(row("cs-files", "fs", "wall", dur, &spec, db, secs));
            let _ = std::fs::remove_dir_all(&fdir);
            // (a') and (b') in modelled time.
            let mut st =
                Store::format(timed_device(&geo)?, io_store_config(durability)).map_err(se("formatting"))?;
            let (db, secs) = engine_writes(&mut st, &spec, seed, &mut next_id, |s| modelled(s.device()))?;
            rows.push(row("engine", "timed-mem", "modelled", dur, &spec, db, secs));
            let mut dev = timed_device(&geo)?;
            let (db, secs) = raw_writes(&mut dev, &spec, seed, modelled)?;
            rows.push(row("raw-zoned", "timed-mem", "modelled", dur, &spec, db, secs));
        }
    }
    set_ratios(&mut rows);
    let notes = vec![
        format!(
            "{streams} chunks appended concurrently, interleaved round-robin in one thread; OSS-data chunks sealed at {}; store pools 40/10/5, guided placement",
            size_label(chunk_len)
        ),
        format!(
            "per I/O size: min(1 GiB, 8192 I/Os) x scale {}, at least 8 I/Os; devices: HM-SMR geometry (256 MiB zones, ZBC, at least 256 zones so the pools keep 40/10/5 open zones and each of the chunks gets a zone of its own), fresh per cell",
            opts.scale
        ),
        format!(
            "durability: every-append = the engine's EveryAppend (device flush per append), raw flush per write, files write_all + sync_data per append; batched = flush/sync every {batch} I/Os and at the end (engine Batched + Store::sync)"
        ),
        format!(
            "wall = elapsed time on this machine: device file in {} (O_DIRECT: {}), files on the same file system; modelled = Timed over MemZoned (20 TB HM-SMR mechanics, zones spread over the platter, open 20 ms / close 24 ms / reset 22 ms)",
            opts.dir.as_deref().map(|p| p.display().to_string()).unwrap_or_else(|| "the system temp dir".into()),
            direct.map(|d| if d { "yes" } else { "no (buffered)" }).unwrap_or("-")
        ),
        "raw-zoned = sequential writes of the same size into one zone after another (the device's best case); vs raw = MB/s over raw-zoned's on the same device, clock and durability (cs-files: over the raw device file's)".into(),
    ];
    Ok(BenchReport {
        bench: "write".into(),
        title: "store bench write (SMRSTORE Fig. 14: high-concurrency write)".into(),
        notes,
        table: io_table(&rows),
        extra: Vec::new(),
        plots: io_plots(&rows, "write"),
        result: BenchResult::Io(rows),
    })
}

/// Random reads of `s.io_size` at 4 KiB-aligned random offsets of random chunks.
fn engine_reads<D: ZonedDevice>(
    store: &mut Store<D>,
    ids: &[ChunkId],
    chunk_len: u64,
    s: &IoSpec,
    rng: &mut Rng,
    clock: impl Fn(&Store<D>) -> f64,
) -> BResult<f64> {
    let t0 = clock(store);
    let slots = (chunk_len - s.io_size as u64) / BLOCK + 1;
    for _ in 0..s.ops {
        let id = ids[rng.below(ids.len() as u64) as usize];
        let off = rng.below(slots) * BLOCK;
        let d = store.read(id, off, s.io_size as u64).map_err(se("reading"))?;
        debug_assert_eq!(d.len(), s.io_size);
    }
    Ok(clock(store) - t0)
}

/// Random reads of the raw device inside the first `zones` sequential zones' written bytes.
fn raw_reads<D: ZonedDevice>(
    dev: &mut D,
    written: u64,
    s: &IoSpec,
    rng: &mut Rng,
    clock: impl Fn(&D) -> f64,
) -> BResult<f64> {
    let info = dev.info();
    let zb = info.zone_cap(info.nr_conv) * SECTOR_SIZE;
    let mut buf = vec![0u8; s.io_size];
    let slots = (written - s.io_size as u64) / BLOCK + 1;
    let t0 = clock(dev);
    for _ in 0..s.ops {
        let off = rng.below(slots) * BLOCK;
        let (z, o) = (info.nr_conv + off / zb, off % zb);
        let o = o.min(zb - s.io_size as u64) / BLOCK * BLOCK;
        dev.read(info.zone_start(z) + o / SECTOR_SIZE, &mut buf).map_err(de("raw read"))?;
    }
    Ok(clock(dev) - t0)
}

fn read_preload<D: ZonedDevice>(
    store: &mut Store<D>,
    n: usize,
    chunk_len: u64,
    seed: u64,
) -> BResult<Vec<ChunkId>> {
    let spec =
        IoSpec { io_size: MIB as usize, ops: n as u64 * chunk_len / MIB, streams: n, chunk_len, batch: 64 };
    let mut next = 1000u128;
    engine_writes(store, &spec, seed, &mut next, |_| 0.0)?;
    let mut ids: Vec<ChunkId> = store.list().into_iter().map(|c| c.id).collect();
    ids.sort();
    Ok(ids)
}

/// Fig. 16: random reads of each I/O size over chunks written beforehand.
pub fn read_bench(opts: &BenchOptions) -> BResult<BenchReport> {
    let dir = opts.tempdir().map_err(ioe("creating the bench directory"))?;
    let n = opts.streams.max(1);
    let chunk_len = (opts.n(64.0 * MIB as f64, 2 * MIB) / MIB).max(2) * MIB;
    let total = n as u64 * chunk_len;
    let geo = hm_smr_geometry(zones_for(total * 2));
    let batched = StoreConfig { durability: Durability::Batched, ..io_store_config(Durability::Batched) };
    // Preload once per system.
    let dev = file_device(dir.path(), "engine.zdev", &geo)?;
    let direct = dev.is_direct();
    let mut fst = Store::format(dev, batched.clone()).map_err(se("formatting"))?;
    let fids = read_preload(&mut fst, n, chunk_len, opts.seed)?;
    let mut raw = file_device(dir.path(), "raw.zdev", &geo)?;
    let pre = IoSpec { io_size: MIB as usize, ops: total / MIB, streams: 1, chunk_len: total, batch: 64 };
    raw_writes(&mut raw, &pre, opts.seed, |_| 0.0)?;
    let fdir = dir.path().join("files");
    std::fs::create_dir_all(&fdir).map_err(ioe("creating the files directory"))?;
    let pre_f = IoSpec { io_size: MIB as usize, ops: total / MIB, streams: n, chunk_len, batch: 64 };
    file_writes(&fdir, &pre_f, opts.seed, direct)?;
    let files: Vec<File> = (1..=n as u64)
        .map(|i| File::open(fdir.join(format!("chunk-{i}"))).map_err(ioe("opening a chunk file")))
        .collect::<BResult<_>>()?;
    let mut tst = Store::format(timed_device(&geo)?, batched).map_err(se("formatting"))?;
    let tids = read_preload(&mut tst, n, chunk_len, opts.seed)?;
    let mut traw = timed_device(&geo)?;
    raw_writes(&mut traw, &pre, opts.seed, modelled)?;

    let mut rows = Vec::new();
    for (k, &io) in IO_SIZES.iter().enumerate() {
        let ops = (opts.n(256.0 * MIB as f64, 1) / io as u64).min(opts.n(16384.0, 16)).max(16);
        let spec = IoSpec { io_size: io, ops, streams: n, chunk_len, batch: 1 };
        let seed = opts.seed.wrapping_add(100 + k as u64);
        let t0 = Instant::now();
        let secs = engine_reads(&mut fst, &fids, chunk_len, &spec, &mut Rng::new(seed), |_| {
            t0.elapsed().as_secs_f64()
        })?;
        rows.push(row("engine", "file", "wall", "-", &spec, 0, secs));
        let t0 = Instant::now();
        let secs = raw_reads(&mut raw, total, &spec, &mut Rng::new(seed), |_| t0.elapsed().as_secs_f64())?;
        rows.push(row("raw-zoned", "file", "wall", "-", &spec, spec.ops * io as u64, secs));
        let mut rng = Rng::new(seed);
        let mut buf = vec![0u8; io];
        let slots = (chunk_len - io as u64) / BLOCK + 1;
        let t0 = Instant::now();
        for _ in 0..ops {
            let fl = &files[rng.below(n as u64) as usize];
            fl.read_exact_at(&mut buf, rng.below(slots) * BLOCK).map_err(ioe("reading a chunk file"))?;
        }
        rows.push(row("cs-files", "fs", "wall", "-", &spec, ops * io as u64, t0.elapsed().as_secs_f64()));
        let r0 = tst.device().stats().bytes_read;
        let secs =
            engine_reads(&mut tst, &tids, chunk_len, &spec, &mut Rng::new(seed), |s| modelled(s.device()))?;
        let db = tst.device().stats().bytes_read - r0;
        rows.push(row("engine", "timed-mem", "modelled", "-", &spec, db, secs));
        let secs = raw_reads(&mut traw, total, &spec, &mut Rng::new(seed), modelled)?;
        rows.push(row("raw-zoned", "timed-mem", "modelled", "-", &spec, ops * io as u64, secs));
        // Wall-clock engine device bytes: the same reads cost the same bytes as on the timed
        // device (identical layout and offsets), so copy them.
        let n_rows = rows.len();
        rows[n_rows - 5].device_bytes = db;
    }
    set_ratios(&mut rows);
    let notes = vec![
        format!(
            "{n} OSS-data chunks of {} each written first (1 MiB appends, batched); reads at 4 KiB-aligned random offsets of random chunks, one at a time (queue depth 1)",
            size_label(chunk_len)
        ),
        format!("per I/O size: min(256 MiB, 16384 reads) x scale {}, at least 16 reads", opts.scale),
        format!(
            "wall = elapsed time on this machine (device file and chunk files both written with O_DIRECT: {direct}, so neither starts in the page cache; both are then read with buffered reads, so repeated reads of the same blocks hit the page cache alike); modelled = Timed over MemZoned (20 TB HM-SMR mechanics)"
        ),
        "raw-zoned = reads of the same sizes at random aligned offsets of the written zones; engine device MB = bytes read from the device (whole slices with footers, 4 KiB aligned)".into(),
    ];
    drop(fst);
    drop(raw);
    Ok(BenchReport {
        bench: "read".into(),
        title: "store bench read (SMRSTORE Fig. 16: high-concurrency random read)".into(),
        notes,
        table: io_table(&rows),
        extra: Vec::new(),
        plots: io_plots(&rows, "read"),
        result: BenchResult::Io(rows),
    })
}

// ----- macro (Table 3, Figs. 19, 20) ----------------------------------------------------

/// One stream of the macro workload (a row of SMRSTORE Table 3, scaled).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct StreamSpec {
    /// Table 3's name.
    pub name: String,
    /// Stream type of its chunks.
    pub stream: u8,
    /// Smallest and largest append (uniform in 4 KiB steps).
    pub io: (u64, u64),
    /// Chunk size when the chunk-size rule is on (big chunks: what fits in one zone).
    pub chunk: u64,
    /// Chunk size when the rule is off (the paper's no-optimisation 64 MB of 256 MB zones).
    pub chunk_no_limit: u64,
    /// Share of the bytes written: Table 3's per-job rate times its numjobs (8 × 400, 8 × 20,
    /// 3 × 200, 1 × 80 MB/s = 4.04 GB/s, the macrobenchmark's stable 4 GB/s of §3.1; GC streams
    /// 83% of the bytes and metadata 2%, as §2.1 states for the capacity used).
    pub rate: f64,
    /// Chunks written concurrently.
    pub concurrent: usize,
}

/// One throughput window of a macro run.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Window {
    /// Modelled seconds at the window's end.
    pub t: f64,
    /// User bytes written so far / datazone capacity.
    pub written: f64,
    /// User MB/s in the window (modelled).
    pub mb_s: f64,
    /// Device bytes GC wrote in the window.
    pub gc_bytes: u64,
    /// Whether deletions had started.
    pub deleting: bool,
}

/// One placement configuration's macro run.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct MacroRun {
    /// `guided (1+2+3)`, `one-zone`, `none`, `+1`, `+1+2`.
    pub name: String,
    /// User bytes appended.
    pub user_bytes: u64,
    /// Device bytes written (records, journal, checkpoints, GC copies).
    pub device_bytes: u64,
    /// Device bytes written by GC rounds (copies plus their checkpoints and journal).
    pub gc_bytes: u64,
    /// Zones migrated by GC.
    pub gc_migrations: u64,
    /// Zone resets.
    pub zone_resets: u64,
    /// Modelled seconds in GC.
    pub gc_seconds: f64,
    /// `device_bytes / user_bytes`.
    pub write_amplification: f64,
    /// `(device_bytes) / (device_bytes - gc_bytes)`: what GC adds on top of the foreground.
    pub gc_write_amplification: f64,
    /// Chunks deleted.
    pub deletions: u64,
    /// Mean user MB/s (modelled) before deletions start.
    pub mb_s_fill: f64,
    /// Mean user MB/s (modelled) after deletions start.
    pub mb_s_steady: f64,
    /// Appends refused for lack of space (the run stops at the first).
    pub out_of_space: bool,
    /// Throughput windows.
    pub windows: Vec<Window>,
    /// Valid-data fraction of each full datazone at the end, sorted (Fig. 20's CDF).
    pub zone_utilisation: Vec<f64>,
}

/// One zone a macro run's GC reclaimed, as it was when GC picked it (seen through [`Tap`]).
#[derive(Clone, Debug, PartialEq)]
struct Victim {
    /// Pool key of its records (store: 0 data, 1 metadata, 2 GC streams, 3 GC copies; 0 for
    /// everything without rule 1).
    pool: u8,
    /// Bit `i` set: stream `i` of [`macro_streams`] has records in it.
    streams: u8,
    /// Chunks with records in it, and how many of those are live.
    chunks: usize,
    live_chunks: usize,
    /// Chunks with records in it that also have bytes elsewhere.
    split_chunks: usize,
    /// Live user bytes in it at GC time.
    live_bytes: u64,
    /// User bytes written into it.
    stored_bytes: u64,
    /// Whether GC copied data out (false: it was garbage already and only reset).
    migrated: bool,
}

/// The macro workload at `zone` bytes per zone: Table 3 with every size multiplied by
/// `zone / 256 MiB` (at least 4 KiB). Table 3's `rate` is per fio job: the four processes
/// together must make §3.1's "stable 4GB/s", which only `numjobs × rate` does (3200 + 160 +
/// 600 + 80 = 4040 MB/s; the bare rates sum to 700 MB/s), and only that split matches §2.1
/// (OSS GC chunks > 80% of the capacity used, metadata ~2%).
pub fn macro_streams(zone: u64) -> Vec<StreamSpec> {
    let k = |b: u64| (b * zone / (256 * MIB)).max(BLOCK) / BLOCK * BLOCK;
    // Big chunks under rule 2: the most 1 MiB-scaled appends whose records fit in one zone.
    let io_big = k(MIB).max(64 << 10);
    let per_zone = zone / format::record_len(format::data_payload_len(io_big as usize));
    let fit = per_zone * io_big;
    let spec = |name: &str, st: StreamType, io: (u64, u64), chunk: u64, nl: u64, rate: f64, c: usize| {
        StreamSpec { name: name.into(), stream: st.0, io, chunk, chunk_no_limit: nl, rate, concurrent: c }
    };
    vec![
        spec("OSS GC Wr 1", StreamType::GC, (io_big, io_big), fit, k(64 * MIB), 8.0 * 400.0, 2),
        spec("OSS GC Wr 2", StreamType::GC, (io_big, io_big), k(64 * MIB), k(64 * MIB), 8.0 * 20.0, 1),
        spec("OSS Data Wr", StreamType::DATA, (io_big, io_big), fit, k(64 * MIB), 3.0 * 200.0, 2),
        spec(
            "OSS Meta Wr",
            StreamType::METADATA,
            (k(4 << 10), k(128 << 10)),
            k(4 * MIB),
            k(4 * MIB),
            80.0,
            8,
        ),
    ]
}

/// Placement configurations of the macro bench: Fig. 19's ablation and one-zone.
pub fn macro_placements() -> Vec<(&'static str, Placement)> {
    let g = |a, b, c| Placement::Guided { separate_streams: a, chunk_limit: b, round_robin: c };
    vec![
        ("guided (1+2+3)", g(true, true, true)),
        ("one-zone", Placement::OneZone),
        ("none", g(false, false, false)),
        ("+1", g(true, false, false)),
        ("+1+2", g(true, true, false)),
    ]
}

struct Live {
    id: ChunkId,
    len: u64,
    /// Device bytes of its records.
    footprint: u64,
    sealed: bool,
}

/// Valid-data fraction of each full datazone: scans the zone's records and counts the user
/// bytes of records whose chunk still exists (no crash happened, so every record of a
/// live chunk is its only copy: GC resets the zone it copied from).
fn zone_utilisation<D: ZonedDevice>(store: &mut Store<D>) -> BResult<Vec<f64>> {
    let live: BTreeSet<ChunkId> = store.list().into_iter().map(|c| c.id).collect();
    let info: DeviceInfo = store.device().info();
    let full: Vec<u64> =
        store.zone_states().into_iter().filter(|z| z.1 == ZoneState::Full).map(|z| z.0).collect();
    let mut out = Vec::new();
    for z in full {
        let cap = info.zone_cap(z) * SECTOR_SIZE;
        let mut buf = vec![0u8; cap as usize];
        store.device_mut().read(info.zone_start(z), &mut buf).map_err(de(format!("scanning zone {z}")))?;
        let (mut off, mut valid) = (0usize, 0u64);
        while off + BLOCK as usize <= buf.len() {
            let Ok(h) = format::decode_header(&buf[off..off + HEADER_LEN]) else { break };
            let len = h.record_len() as usize;
            if h.rtype == RecordType::Data && off + HEADER_LEN + DATA_PREFIX <= buf.len() {
                let p = &buf[off + HEADER_LEN..off + HEADER_LEN + DATA_PREFIX];
                if let Ok(d) = format::decode_data_prefix(p, h.payload_len as usize) {
                    if live.contains(&d.chunk) {
                        valid += d.len as u64;
                    }
                }
            }
            if len == 0 {
                break;
            }
            off += len;
        }
        out.push(valid as f64 / cap as f64);
    }
    out.sort_by(f64::total_cmp);
    Ok(out)
}

/// Runs the macro workload once with `placement`.
fn macro_run(
    name: &str,
    placement: Placement,
    opts: &BenchOptions,
    geo: &ZonedConfig,
    util: f64,
    turnover: f64,
) -> BResult<(MacroRun, Vec<Victim>)> {
    let mut cfg = StoreConfig {
        placement,
        nr_metazones: 4,
        pool_gc: 3,
        pool_data: 2,
        pool_metadata: 1,
        gc_free_zones: 0,
        ..StoreConfig::default()
    };
    let zone = geo.zone_size.0;
    cfg.metadata_chunk_limit = (64 * MIB * zone / (256 * MIB)).max(BLOCK);
    let mem = MemZoned::new(geo).map_err(de("building the in-memory device"))?;
    let dev =
        Timed::new(Tap::new(mem), TimingConfig::default()).map_err(de("timing the in-memory device"))?;
    let mut store = Store::format(dev, cfg).map_err(se("formatting"))?;
    let datazones = store.stats().datazones;
    let cap = datazones * zone;
    let target = (util * cap as f64) as u64;
    let total = target + (turnover * cap as f64) as u64;
    let window = (cap / 20).max(MIB);
    let streams = macro_streams(zone);
    // One-zone writes Table 3's chunk sizes (those of rule 2); only the ablation's runs
    // without rule 2 get the no-optimisation size.
    let limit = matches!(placement, Placement::Guided { chunk_limit: true, .. } | Placement::OneZone);
    let wsum: f64 = streams.iter().map(|s| s.rate).sum();
    let mut rng = Rng::new(opts.seed);
    let data = payload(128 * MIB as usize / 16, opts.seed);
    let mut open: Vec<Vec<Option<(ChunkId, u64)>>> =
        streams.iter().map(|s| vec![None; s.concurrent]).collect();
    let mut chunks: Vec<Live> = Vec::new();
    let (mut next_id, mut live, mut user) = (0u128, 0u64, 0u64);
    let (mut gc_bytes, mut gc_secs, mut deletions) = (0u64, 0.0f64, 0u64);
    let (mut w_start_t, mut w_start_b, mut w_gc) = (0.0f64, 0u64, 0u64);
    let mut windows = Vec::new();
    let mut deleting = false;
    let mut out_of_space = false;
    // Every chunk ever created: stream index, bytes appended, live.
    let mut registry: HashMap<ChunkId, (usize, u64, bool)> = HashMap::new();
    let mut victims = Vec::new();
    while user < total {
        // Stream by its share of bytes.
        let mut x = rng.f64() * wsum;
        let si = streams.iter().position(|s| {
            x -= s.rate;
            x < 0.0
        });
        let si = si.unwrap_or(streams.len() - 1);
        let s = &streams[si];
        let slot = rng.below(s.concurrent as u64) as usize;
        let steps = (s.io.1 - s.io.0) / BLOCK + 1;
        let io = s.io.0 + rng.below(steps) * BLOCK;
        let chunk_len = if limit { s.chunk } else { s.chunk_no_limit };
        if open[si][slot].is_none() {
            next_id += 1;
            let id = ChunkId::from_u128(next_id);
            store.create(id, StreamType(s.stream)).map_err(se("creating a chunk"))?;
            chunks.push(Live { id, len: 0, footprint: 0, sealed: false });
            registry.insert(id, (si, 0, true));
            open[si][slot] = Some((id, chunks.len() as u64 - 1));
        }
        let (id, _) = open[si][slot].expect("set above");
        // GC as the store's automatic round would (watermark 2 free zones), counted apart.
        while store.free_zones() < 2 {
            let (b0, t0) = (store.stats().device_bytes_written, modelled(store.device()));
            let m0 = store.stats().gc_migrations;
            store.device().inner().take_resets();
            match store.gc() {
                Ok(Some(z)) => {
                    let resets = store.device().inner().take_resets();
                    if let Some((_, recs)) = resets.iter().rev().find(|r| r.0 == z) {
                        let migrated = store.stats().gc_migrations > m0;
                        victims.push(victim(recs, &registry, migrated));
                    }
                    gc_bytes += store.stats().device_bytes_written - b0;
                    w_gc += store.stats().device_bytes_written - b0;
                    gc_secs += modelled(store.device()) - t0;
                }
                Ok(None) | Err(crate::StoreError::NoSpace(_)) => break,
                Err(e) => return Err(se("garbage collection")(e)),
            }
        }
        let k = chunks.iter().rposition(|c| c.id == id).expect("open chunk is listed");
        let n = io.min(chunk_len - chunks[k].len) as usize;
        match store.append(id, &data[..n]) {
            Ok(()) => {}
            Err(crate::StoreError::NoSpace(_)) => {
                out_of_space = true;
                break;
            }
            Err(e) => return Err(se("appending")(e)),
        }
        let rec = format::record_len(format::data_payload_len(n));
        chunks[k].len += n as u64;
        chunks[k].footprint += rec;
        registry.get_mut(&id).expect("registered at create").1 += n as u64;
        live += rec;
        user += n as u64;
        if chunks[k].len >= chunk_len {
            store.seal(id).map_err(se("sealing"))?;
            chunks[k].sealed = true;
            open[si][slot] = None;
        }
        if live >= target {
            deleting = true;
        }
        // Random deletions of sealed chunks keep utilisation at the target.
        while deleting && live > target {
            let sealed = chunks.iter().filter(|c| c.sealed).count() as u64;
            if sealed == 0 {
                break;
            }
            let mut pick = rng.below(sealed);
            let k = chunks
                .iter()
                .position(|c| {
                    if !c.sealed {
                        return false;
                    }
                    if pick == 0 {
                        return true;
                    }
                    pick -= 1;
                    false
                })
                .expect("counted");
            let c = chunks.swap_remove(k);
            store.delete(c.id).map_err(se("deleting"))?;
            registry.get_mut(&c.id).expect("registered at create").2 = false;
            live -= c.footprint;
            deletions += 1;
        }
        if user - w_start_b >= window {
            let t = modelled(store.device());
            windows.push(Window {
                t,
                written: user as f64 / cap as f64,
                mb_s: mb(user - w_start_b) / (t - w_start_t).max(1e-12),
                gc_bytes: w_gc,
                deleting,
            });
            (w_start_t, w_start_b, w_gc) = (t, user, 0);
        }
    }
    let st = store.stats();
    let mean = |del: bool| {
        let w: Vec<&Window> = windows.iter().filter(|w| w.deleting == del).collect();
        if w.is_empty() {
            0.0
        } else {
            w.iter().map(|w| w.mb_s).sum::<f64>() / w.len() as f64
        }
    };
    let (mb_s_fill, mb_s_steady) = (mean(false), mean(true));
    let zone_utilisation = zone_utilisation(&mut store)?;
    let run = MacroRun {
        name: name.into(),
        user_bytes: user,
        device_bytes: st.device_bytes_written,
        gc_bytes,
        gc_migrations: st.gc_migrations,
        zone_resets: st.zone_resets,
        gc_seconds: gc_secs,
        write_amplification: st.device_bytes_written as f64 / user.max(1) as f64,
        gc_write_amplification: st.device_bytes_written as f64
            / (st.device_bytes_written - gc_bytes).max(1) as f64,
        deletions,
        mb_s_fill,
        mb_s_steady,
        out_of_space,
        windows,
        zone_utilisation,
    };
    Ok((run, victims))
}

/// What a reclaimed zone held when GC picked it: `recs` as [`Tap`] logged them at its reset,
/// liveness from the bench's own registry (no deletions happen inside a GC round).
fn victim(recs: &[TapRec], registry: &HashMap<ChunkId, (usize, u64, bool)>, migrated: bool) -> Victim {
    let mut per: BTreeMap<ChunkId, u64> = BTreeMap::new();
    let mut v = Victim {
        pool: recs.first().map_or(0, |r| r.pool),
        streams: 0,
        chunks: 0,
        live_chunks: 0,
        split_chunks: 0,
        live_bytes: 0,
        stored_bytes: 0,
        migrated,
    };
    for r in recs {
        *per.entry(r.chunk).or_default() += r.len as u64;
        v.stored_bytes += r.len as u64;
    }
    for (id, b) in &per {
        let Some(&(si, len, live)) = registry.get(id) else { continue };
        v.streams |= 1 << si;
        v.chunks += 1;
        if live {
            v.live_chunks += 1;
            v.live_bytes += b;
        }
        if *b < len {
            v.split_chunks += 1;
        }
    }
    v
}

/// The kind of a GC victim, for the breakdown table.
fn victim_kind(v: &Victim, streams: &[StreamSpec]) -> String {
    if !v.migrated {
        return "garbage (reset only)".into();
    }
    if v.pool == 3 {
        return "GC destination zone (copies)".into();
    }
    let names: Vec<&str> = streams
        .iter()
        .enumerate()
        .filter(|(i, _)| v.streams & (1 << i) != 0)
        .map(|(_, s)| s.name.trim_start_matches("OSS "))
        .collect();
    names.join(" + ")
}

/// Table 3 / Figs. 19–20: the multi-stream workload on a timed in-memory HM-SMR device,
/// filled to 80% and then kept there by random deletions while writes go on, once per
/// placement configuration.
pub fn macro_bench(opts: &BenchOptions) -> BResult<BenchReport> {
    macro_bench_with(opts, &macro_placements())
}

/// [`macro_bench`] over chosen placements.
pub fn macro_bench_with(opts: &BenchOptions, placements: &[(&str, Placement)]) -> BResult<BenchReport> {
    // 16 MiB zones (SMRSTORE's 256 MiB / 16) and 96 zones (1.5 GiB) at scale 1; below it
    // the zones shrink (a power of two, at least 2 MiB) so that every size in Table 3 shrinks
    // with them, and the count stays at 48 or more (the pools and GC need free zones).
    let zone = (16.0 * MIB as f64 * opts.scale.clamp(1.0 / 8.0, 1.0)) as u64;
    let zone = 1u64 << (63 - zone.leading_zeros());
    let nr = opts.n(96.0, 48);
    let geo = ZonedConfig {
        capacity: shingled_zoned_bytes(nr * zone),
        zone_size: shingled_zoned_bytes(zone),
        ..hm_smr_geometry(nr)
    };
    // Twice the capacity of writes after the fill at scale >= 1/4, less below (tests).
    let (util, turnover) = (0.8, (8.0 * opts.scale).clamp(0.5, 2.0));
    let mut runs = Vec::new();
    let mut vt = Table::new(&[
        "placement",
        "victim zones hold",
        "zones",
        "chunks/zone",
        "live chunks/zone",
        "zones with a split chunk",
        "live at GC",
        "MB copied",
    ]);
    let zone_cap = {
        let info = MemZoned::new(&geo).map_err(de("building the in-memory device"))?.info();
        info.zone_cap(info.nr_conv) * SECTOR_SIZE
    };
    for (name, p) in placements {
        let (run, victims) = macro_run(name, *p, opts, &geo, util, turnover)?;
        let streams = macro_streams(zone);
        let mut kinds: BTreeMap<String, Vec<&Victim>> = BTreeMap::new();
        for v in &victims {
            kinds.entry(victim_kind(v, &streams)).or_default().push(v);
        }
        let mut rows: Vec<(String, Vec<&Victim>)> = kinds.into_iter().collect();
        rows.sort_by_key(|r| std::cmp::Reverse(r.1.len()));
        for (kind, vs) in rows {
            let n = vs.len() as f64;
            let mean = |g: &dyn Fn(&Victim) -> f64| vs.iter().map(|v| g(v)).sum::<f64>() / n;
            vt.rows.push(vec![
                name.to_string(),
                kind,
                vs.len().to_string(),
                f(mean(&|v| v.chunks as f64), 1),
                f(mean(&|v| v.live_chunks as f64), 1),
                vs.iter().filter(|v| v.split_chunks > 0).count().to_string(),
                f(mean(&|v| v.live_bytes as f64 / zone_cap as f64) * 100.0, 0) + "%",
                f(mb(vs.iter().filter(|v| v.migrated).map(|v| v.live_bytes).sum()), 0),
            ]);
        }
        runs.push(run);
    }
    let mut t = Table::new(&[
        "placement",
        "user MB",
        "device MB",
        "WA",
        "GC MB",
        "GC WA",
        "GC zones",
        "resets",
        "GC s",
        "deleted",
        "MB/s fill",
        "MB/s steady",
        "steady/fill",
        "zones<50%",
        "median util",
    ]);
    for r in &runs {
        let low = r.zone_utilisation.iter().filter(|&&u| u < 0.5).count();
        let med = r.zone_utilisation.get(r.zone_utilisation.len() / 2).copied().unwrap_or(0.0);
        t.rows.push(vec![
            r.name.clone() + if r.out_of_space { " (out of space)" } else { "" },
            f(mb(r.user_bytes), 0),
            f(mb(r.device_bytes), 0),
            f(r.write_amplification, 2),
            f(mb(r.gc_bytes), 0),
            f(r.gc_write_amplification, 2),
            r.gc_migrations.to_string(),
            r.zone_resets.to_string(),
            f(r.gc_seconds, 1),
            r.deletions.to_string(),
            f(r.mb_s_fill, 1),
            f(r.mb_s_steady, 1),
            f(r.mb_s_steady / r.mb_s_fill.max(1e-12), 2),
            format!("{low}/{}", r.zone_utilisation.len()),
            f(med * 100.0, 0) + "%",
        ]);
    }
    let mut st = Table::new(&[
        "stream (Table 3)",
        "type",
        "append",
        "chunk (rule 2 on)",
        "chunk (off)",
        "share",
        "concurrent",
    ]);
    let streams = macro_streams(zone);
    let wsum: f64 = streams.iter().map(|s| s.rate).sum();
    for s in &streams {
        st.rows.push(vec![
            s.name.clone(),
            s.stream.to_string(),
            if s.io.0 == s.io.1 {
                size_label(s.io.0)
            } else {
                format!("{}..{}", size_label(s.io.0), size_label(s.io.1))
            },
            size_label(s.chunk),
            size_label(s.chunk_no_limit),
            f(s.rate / wsum * 100.0, 0) + "%",
            s.concurrent.to_string(),
        ]);
    }
    // Figs. 17 and 18 compare SMRSTORE with the one-zone layout, Figs. 19 and 20 the
    // ablation: one plot each, at most four curves (the palette's distinct colours).
    let one_zone = |r: &&MacroRun| r.name == "one-zone" || r.name.starts_with("guided");
    let ablation = |r: &&MacroRun| r.name != "one-zone";
    let throughput = |key: &str, title: &str, pick: &dyn Fn(&&MacroRun) -> bool| Plot {
        key: key.into(),
        title: title.into(),
        x_label: "modelled time (s)".into(),
        y_label: "MB/s".into(),
        categories: Vec::new(),
        curves: runs
            .iter()
            .filter(pick)
            .map(|r| Curve {
                name: r.name.clone(),
                points: r.windows.iter().map(|w| (w.t, w.mb_s)).collect(),
            })
            .collect(),
    };
    let cdf = |key: &str, title: &str, pick: &dyn Fn(&&MacroRun) -> bool| Plot {
        key: key.into(),
        title: title.into(),
        x_label: "zone utilisation (%)".into(),
        y_label: "fraction of full zones".into(),
        categories: Vec::new(),
        curves: runs
            .iter()
            .filter(pick)
            .map(|r| Curve { name: r.name.clone(), points: cdf_points(&r.zone_utilisation) })
            .collect(),
    };
    let plots = vec![
        throughput(
            "macro-throughput",
            "macro: user throughput per window, guided vs one-zone (modelled)",
            &one_zone,
        ),
        throughput(
            "macro-ablation",
            "macro: user throughput per window, placement rules (Fig. 19, modelled)",
            &ablation,
        ),
        cdf(
            "macro-zone-cdf",
            "macro: valid data in full zones at the end, guided vs one-zone (CDF)",
            &one_zone,
        ),
        cdf(
            "macro-ablation-cdf",
            "macro: valid data in full zones at the end, placement rules (Fig. 20)",
            &ablation,
        ),
    ];
    let notes = vec![
        format!("device: MemZoned in Timed (20 TB HM-SMR mechanics), {nr} zones of {} (SMRSTORE's 256 MiB / {}), 1 conventional; all times modelled, deterministic for seed {}", size_label(zone), 256 * MIB / zone, opts.seed),
        format!("workload: Table 3's four streams with every size x zone/256 MiB (table below), stream chosen per append by its share of Table 3's numjobs x rate (4.04 GB/s in all), chunk slot uniformly among its concurrent chunks; fill to {:.0}% of datazone capacity (device bytes of the live chunks' data records), then keep it there by deleting uniformly random sealed chunks while writing {turnover}x the capacity more", util * 100.0),
        "store: pools 3 (GC) / 2 (data) / 1 (metadata) open zones, one per concurrent big chunk as in the paper (pools of 40/10/5 for its 25/25/300 files spread over 8/3 jobs), 4 metazones, EveryAppend durability; metadata chunk limit 64 MiB scaled; the bench runs Store::gc whenever fewer than 2 zones are free (the automatic watermark) so GC's device bytes and time are counted apart".into(),
        "rule 2 (chunk_limit) on, and one-zone: big chunks sealed at what fits in one zone (Table 3's 256 MB chunk in a 256 MB zone); off: the paper's no-optimisation 64 MB (scaled); rule 3 off: a pool's chunks share its first zone (the paper's no-optimisation spreads them randomly over 55 open zones)".into(),
        "WA = device bytes / user bytes (record headers, footers, padding, journal, checkpoints, GC); GC WA = device bytes / device bytes outside GC; zone utilisation = user bytes of live chunks' records / zone capacity, over full zones at the end".into(),
    ];
    Ok(BenchReport {
        bench: "macro".into(),
        title: "store bench macro (SMRSTORE Table 3, Figs. 17/19/20: mixed streams at 80% with deletions)"
            .into(),
        notes,
        table: t,
        extra: vec![("streams".into(), st), ("gc victims".into(), vt)],
        plots,
        result: BenchResult::Macro(runs),
    })
}

fn shingled_zoned_bytes(b: u64) -> shingled_core::ByteSize {
    shingled_core::ByteSize(b)
}

/// `(x = utilisation %, y = fraction of zones at or below)` for sorted `u`.
pub fn cdf_points(u: &[f64]) -> Vec<(f64, f64)> {
    let n = u.len() as f64;
    u.iter().enumerate().map(|(i, &v)| (v * 100.0, (i + 1) as f64 / n)).collect()
}

// ----- recovery (Fig. 21) ---------------------------------------------------------------

/// One recovery measurement.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct RecoveryRow {
    /// User bytes written before the restart.
    pub data_bytes: u64,
    /// Chunks.
    pub chunks: u64,
    /// Size of each chunk.
    pub chunk_bytes: u64,
    /// Records indexed.
    pub records: u64,
    /// `checkpointed` (Store::checkpoint just before the stop: recovery loads it) or `crash`
    /// (no checkpoint after the writes: recovery also scans the zones written since the last
    /// automatic one).
    pub mode: String,
    /// Wall seconds of `Store::open` on the device file.
    pub wall_seconds: f64,
    /// Modelled seconds of the same open (Timed over the file: what an HM-SMR drive would
    /// take for the same I/O).
    pub modelled_seconds: f64,
    /// Bytes `Store::open` read from the device.
    pub bytes_read: u64,
    /// Read commands.
    pub reads: u64,
    /// Records recovery found after the checkpoint.
    pub recovered_records: u64,
    /// `Store::recovery_report()`: superzone read, wall seconds.
    pub superzone_seconds: f64,
    /// Finding and loading the checkpoint, wall seconds.
    pub checkpoint_load_seconds: f64,
    /// Journal replay, wall seconds.
    pub journal_replay_seconds: f64,
    /// Datazone scan, wall seconds.
    pub datazone_scan_seconds: f64,
    /// Index build and the closing checkpoint, wall seconds.
    pub index_build_seconds: f64,
    /// Checkpoint body bytes loaded.
    pub checkpoint_bytes: u64,
    /// Journal records replayed.
    pub journal_records: u64,
    /// Datazones scanned.
    pub zones_scanned: u64,
    /// Device bytes the scan covered.
    pub bytes_scanned: u64,
}

/// Fig. 21: `Store::open` after writing a data set, by data size and by chunk count, with and
/// without a checkpoint right before the stop.
pub fn recovery_bench(opts: &BenchOptions) -> BResult<BenchReport> {
    let dir = opts.tempdir().map_err(ioe("creating the bench directory"))?;
    let base = opts.n(256.0 * MIB as f64, 4 * MIB) / MIB * MIB;
    // (data, chunk size): data grows at a fixed 16 MiB chunk, then chunks shrink at fixed data.
    let mut cases: Vec<(u64, u64)> = vec![(base / 4, 16 * MIB), (base, 16 * MIB), (base * 4, 16 * MIB)];
    cases.extend([(base, MIB), (base, 64 << 10)]);
    let mut rows = Vec::new();
    let mut direct = None;
    for (i, &(data, chunk)) in cases.iter().enumerate() {
        let chunk = chunk.min(data);
        for mode in ["checkpointed", "crash"] {
            let geo = hm_smr_geometry(zones_for(data * 2));
            let path = dir.path().join(format!("rec-{i}-{mode}.zdev"));
            let dev = file_device(
                dir.path(),
                path.file_name().and_then(|n| n.to_str()).unwrap_or("rec.zdev"),
                &geo,
            )?;
            direct = Some(dev.is_direct());
            let cfg =
                StoreConfig { durability: Durability::Batched, gc_free_zones: 0, ..StoreConfig::default() };
            let mut st = Store::format(dev, cfg.clone()).map_err(se("formatting"))?;
            let io = (64 << 10).min(chunk as usize);
            let spec =
                IoSpec { io_size: io, ops: data / io as u64, streams: 8, chunk_len: chunk, batch: 256 };
            let mut next = 0u128;
            engine_writes(&mut st, &spec, opts.seed, &mut next, |_| 0.0)?;
            if mode == "checkpointed" {
                st.checkpoint().map_err(se("checkpointing"))?;
            }
            let (chunks, records) = (st.stats().chunks, st.stats().records);
            drop(st.into_device());
            let dev =
                FileZoned::open(&path, FileOptions::default()).map_err(de("reopening the device file"))?;
            let dev = Timed::new(dev, TimingConfig::default()).map_err(de("timing the device file"))?;
            let t0 = Instant::now();
            let st = Store::open(dev, cfg).map_err(se("recovering"))?;
            let wall = t0.elapsed().as_secs_f64();
            let ts = st.device().stats();
            let rr = st.recovery_report().unwrap_or_default();
            rows.push(RecoveryRow {
                data_bytes: spec.ops * io as u64,
                chunks,
                chunk_bytes: chunk,
                records,
                mode: mode.into(),
                wall_seconds: wall,
                modelled_seconds: modelled(st.device()),
                bytes_read: ts.bytes_read,
                reads: ts.reads,
                recovered_records: st.stats().recovered_records,
                superzone_seconds: rr.superzone_read.as_secs_f64(),
                checkpoint_load_seconds: rr.checkpoint_load.as_secs_f64(),
                journal_replay_seconds: rr.journal_replay.as_secs_f64(),
                datazone_scan_seconds: rr.datazone_scan.as_secs_f64(),
                index_build_seconds: rr.index_build.as_secs_f64(),
                checkpoint_bytes: rr.checkpoint_bytes,
                journal_records: rr.journal_records,
                zones_scanned: rr.zones_scanned,
                bytes_scanned: rr.bytes_scanned,
            });
            assert_eq!(st.stats().chunks, chunks, "recovery lost chunks");
            drop(st);
            let _ = std::fs::remove_file(&path);
        }
    }
    let mut t = Table::new(&[
        "data",
        "chunks",
        "records",
        "mode",
        "open wall s",
        "super",
        "ckpt load",
        "journal",
        "scan",
        "index",
        "ckpt MB",
        "zones scanned",
        "MB scanned",
        "modelled s",
        "MB read",
        "reads",
    ]);
    for r in &rows {
        t.rows.push(vec![
            size_label(r.data_bytes),
            r.chunks.to_string(),
            r.records.to_string(),
            r.mode.clone(),
            f(r.wall_seconds, 4),
            f(r.superzone_seconds, 4),
            f(r.checkpoint_load_seconds, 4),
            f(r.journal_replay_seconds, 4),
            f(r.datazone_scan_seconds, 4),
            f(r.index_build_seconds, 4),
            f(mb(r.checkpoint_bytes), 3),
            r.zones_scanned.to_string(),
            f(mb(r.bytes_scanned), 1),
            f(r.modelled_seconds, 3),
            f(mb(r.bytes_read), 2),
            r.reads.to_string(),
        ]);
    }
    let curve = |mode: &str| Curve {
        name: format!("{mode} (wall)"),
        points: rows
            .iter()
            .filter(|r| r.mode == mode && r.chunk_bytes == 16 * MIB)
            .map(|r| (mb(r.data_bytes), r.wall_seconds))
            .collect(),
    };
    let plots = vec![Plot {
        key: "recovery".into(),
        title: "recovery: Store::open wall time vs data written (16 MiB chunks)".into(),
        x_label: "data written (MB)".into(),
        y_label: "seconds".into(),
        categories: Vec::new(),
        curves: vec![curve("checkpointed"), curve("crash")],
    }];
    let notes = vec![
        format!("device file (FileZoned, HM-SMR geometry: 256 MiB zones; O_DIRECT: {}), data appended in 64 KiB appends over 8 concurrent OSS-data chunks, batched durability, synced before the stop; then Store::open on the reopened file", direct.map(|d| d.to_string()).unwrap_or_default()),
        "wall = Store::open elapsed on this machine (page cache warm: the file was just written); modelled = the same open's I/O on Timed (HM-SMR mechanics); MB read and reads counted by Timed".into(),
        "breakdown (wall seconds) from Store::recovery_report(): superzone read, checkpoint find + load, journal replay, datazone scan, index build + the closing checkpoint; open wall s is timed around Store::open by the bench".into(),
    ];
    Ok(BenchReport {
        bench: "recovery".into(),
        title: "store bench recovery (SMRSTORE Fig. 21)".into(),
        notes,
        table: t,
        extra: Vec::new(),
        plots,
        result: BenchResult::Recovery(rows),
    })
}

// ----- memory and CPU (§6.5) ------------------------------------------------------------

/// Index memory at one chunk count and record count.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct MemoryRow {
    /// Chunks.
    pub chunks: u64,
    /// Records per chunk.
    pub records_per_chunk: u64,
    /// User bytes per record.
    pub record_bytes: u64,
    /// `Store::memory().per_chunk` (the engine's size_of-based figure).
    pub per_chunk: usize,
    /// `Store::memory().per_record`.
    pub per_record: usize,
    /// `Store::memory().total`.
    pub total: usize,
    /// `total / chunks`.
    pub total_per_chunk: f64,
}

/// Index bytes per chunk and per record index at several sizes.
pub fn memory_bench(opts: &BenchOptions) -> BResult<BenchReport> {
    let c = |n: f64| opts.n(n, 16);
    let cases = [
        (c(1000.0), 1u64),
        (c(1000.0), 16),
        (c(8000.0), 1),
        (c(8000.0), 8),
        (c(32000.0), 1),
        (c(32000.0), 2),
    ];
    let record = 4096u64;
    let mut rows = Vec::new();
    for &(chunks, recs) in &cases {
        let bytes = chunks * recs * 2 * BLOCK;
        let zone = 64 * MIB;
        let nr = bytes.div_ceil(zone) * 2 + 12;
        let geo = ZonedConfig {
            capacity: shingled_zoned_bytes(nr * zone),
            zone_size: shingled_zoned_bytes(zone),
            ..hm_smr_geometry(nr)
        };
        let dev = MemZoned::new(&geo).map_err(de("building the device"))?;
        let cfg = StoreConfig {
            durability: Durability::Batched,
            gc_free_zones: 0,
            pool_data: 4,
            ..StoreConfig::default()
        };
        let mut st = Store::format(dev, cfg).map_err(se("formatting"))?;
        let data = payload(record as usize, opts.seed);
        for i in 0..chunks {
            let id = ChunkId::from_u128(i as u128 + 1);
            st.create(id, StreamType::DATA).map_err(se("creating"))?;
            for _ in 0..recs {
                st.append(id, &data).map_err(se("appending"))?;
            }
        }
        st.sync().map_err(se("syncing"))?;
        let m = st.memory();
        rows.push(MemoryRow {
            chunks,
            records_per_chunk: recs,
            record_bytes: record,
            per_chunk: m.per_chunk,
            per_record: m.per_record,
            total: m.total,
            total_per_chunk: m.total as f64 / chunks as f64,
        });
    }
    let mut t = Table::new(&[
        "chunks",
        "records/chunk",
        "record",
        "B/chunk",
        "B/record index",
        "total",
        "total/chunk",
    ]);
    for r in &rows {
        t.rows.push(vec![
            r.chunks.to_string(),
            r.records_per_chunk.to_string(),
            size_label(r.record_bytes),
            r.per_chunk.to_string(),
            r.per_record.to_string(),
            r.total.to_string(),
            f(r.total_per_chunk, 1),
        ]);
    }
    let notes = vec![
        "Store on MemZoned (64 MiB zones), OSS-data chunks, 4 KiB appends (one record each), pools 40/4/5".into(),
        "B/chunk, B/record index and total are Store::memory() (sizes of the index structures + 16 B B-tree overhead per entry, as the engine computes them; paper §6.5: ~200 B per chunk, 8 B per record index)".into(),
        "not measured: the process's heap (RSS deltas were tried and dropped: the in-memory device's buffers and reused freed memory swamp the index)".into(),
    ];
    Ok(BenchReport {
        bench: "memory".into(),
        title: "store bench memory (SMRSTORE §6.5: index memory)".into(),
        notes,
        table: t,
        extra: Vec::new(),
        plots: Vec::new(),
        result: BenchResult::Memory(rows),
    })
}

/// CPU cost of writing through the engine or straight to the device.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct CpuRow {
    /// `engine` or `raw-zoned`.
    pub system: String,
    /// `mem` (MemZoned: no I/O, the CPU the code itself needs) or `file` (FileZoned: system
    /// calls and page cache included).
    pub device: String,
    /// Append size.
    pub io_size: u64,
    /// User bytes written.
    pub bytes: u64,
    /// CPU seconds of the thread.
    pub cpu_seconds: f64,
    /// Wall seconds.
    pub wall_seconds: f64,
    /// CPU seconds per GB (10^9 bytes) written.
    pub cpu_s_per_gb: f64,
}

/// CPU seconds per GB written: engine vs raw device, in memory and on a device file.
pub fn cpu_bench(opts: &BenchOptions) -> BResult<BenchReport> {
    let dir = opts.tempdir().map_err(ioe("creating the bench directory"))?;
    let mut rows = Vec::new();
    let streams = opts.streams.max(1);
    for io in [64usize << 10, 1 << 20] {
        for device in ["mem", "file"] {
            let total = opts.n(if device == "mem" { 512.0 } else { 256.0 } * MIB as f64, 4 * MIB);
            let spec =
                IoSpec { io_size: io, ops: total / io as u64, streams, chunk_len: 64 * MIB, batch: 64 };
            let geo = hm_smr_geometry(zones_for(total * 2));
            for system in ["engine", "raw-zoned"] {
                let cfg = io_store_config(Durability::Batched);
                let c0 = thread_cpu_seconds();
                let t0 = Instant::now();
                let mut next = 0u128;
                match (system, device) {
                    ("engine", "mem") => {
                        let mut st = Store::format(MemZoned::new(&geo).map_err(de("device"))?, cfg)
                            .map_err(se("formatting"))?;
                        engine_writes(&mut st, &spec, opts.seed, &mut next, |_| 0.0)?;
                    }
                    ("engine", _) => {
                        let mut st = Store::format(file_device(dir.path(), "cpu.zdev", &geo)?, cfg)
                            .map_err(se("formatting"))?;
                        engine_writes(&mut st, &spec, opts.seed, &mut next, |_| 0.0)?;
                    }
                    (_, "mem") => {
                        let mut d = MemZoned::new(&geo).map_err(de("device"))?;
                        raw_writes(&mut d, &spec, opts.seed, |_| 0.0)?;
                    }
                    _ => {
                        let mut d = file_device(dir.path(), "cpu.zdev", &geo)?;
                        raw_writes(&mut d, &spec, opts.seed, |_| 0.0)?;
                    }
                }
                let wall = t0.elapsed().as_secs_f64();
                let cpu = match (c0, thread_cpu_seconds()) {
                    (Some(a), Some(b)) => b - a,
                    _ => f64::NAN,
                };
                let _ = std::fs::remove_file(dir.path().join("cpu.zdev"));
                let bytes = spec.ops * io as u64;
                rows.push(CpuRow {
                    system: system.into(),
                    device: device.into(),
                    io_size: io as u64,
                    bytes,
                    cpu_seconds: cpu,
                    wall_seconds: wall,
                    cpu_s_per_gb: cpu / (bytes as f64 / 1e9),
                });
            }
        }
    }
    let mut t =
        Table::new(&["system", "device", "io size", "MB", "CPU s", "wall s", "CPU s/GB", "engine/raw"]);
    for r in &rows {
        let raw =
            rows.iter().find(|b| b.system == "raw-zoned" && b.device == r.device && b.io_size == r.io_size);
        t.rows.push(vec![
            r.system.clone(),
            r.device.clone(),
            size_label(r.io_size),
            f(mb(r.bytes), 0),
            f(r.cpu_seconds, 3),
            f(r.wall_seconds, 3),
            f(r.cpu_s_per_gb, 3),
            raw.map(|b| f(r.cpu_s_per_gb / b.cpu_s_per_gb.max(1e-12), 2)).unwrap_or_default(),
        ]);
    }
    let notes = vec![
        format!("{streams} OSS-data chunks interleaved in one thread (engine, batched durability: sync every 64 appends) vs sequential zone writes (raw, flush every 64); the write buffers are prepared before timing"),
        "CPU = this thread's time on CPU, user + system (/proc/thread-self/schedstat); mem = MemZoned (memcpy into the emulator, no I/O), file = FileZoned device file (system calls, page cache or O_DIRECT)".into(),
        "the engine's CPU covers record encoding (CRC32C per 4 KiB slice and per record), the index, the zone state machine and the emulator's copy; paper §6.5 reports cores for a 60-drive server, not CPU per GB".into(),
    ];
    Ok(BenchReport {
        bench: "cpu".into(),
        title: "store bench cpu (SMRSTORE §6.5: CPU per GB written)".into(),
        notes,
        table: t,
        extra: Vec::new(),
        plots: Vec::new(),
        result: BenchResult::Cpu(rows),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tiny() -> BenchOptions {
        BenchOptions { scale: 0.001, seed: 7, streams: 3, dir: None }
    }

    fn io_rows(r: &BenchReport) -> &[IoRow] {
        match &r.result {
            BenchResult::Io(rows) => rows,
            _ => panic!("not an I/O bench"),
        }
    }

    fn table_is_rectangular(t: &Table) {
        assert!(t.rows.iter().all(|r| r.len() == t.columns.len()));
        assert_eq!(t.to_csv().lines().count(), t.rows.len() + 1);
        assert_eq!(t.to_text().lines().count(), t.rows.len() + 2);
    }

    #[test]
    fn write_bench_writes_what_it_says() {
        let r = write_bench(&tiny()).unwrap();
        let rows = io_rows(&r);
        // 5 systems x 2 durabilities x 5 sizes.
        assert_eq!(rows.len(), 50);
        for row in rows {
            assert_eq!(row.bytes, row.ops * row.io_size, "{row:?}");
            assert!(row.ops >= 8);
            if row.system == "engine" {
                // Headers, footers and padding: never fewer device bytes than user bytes.
                assert!(row.device_bytes > row.bytes, "{row:?}");
            } else {
                assert_eq!(row.device_bytes, row.bytes);
            }
            assert!(row.seconds > 0.0 && row.mb_s.is_finite() && row.mb_s > 0.0, "{row:?}");
            let v = row.vs_raw.expect("every row has a raw reference");
            assert!(v > 0.0 && v.is_finite(), "{row:?}");
            if row.system == "raw-zoned" {
                assert_eq!(v, 1.0);
            }
        }
        table_is_rectangular(&r.table);
        assert_eq!(r.plots.len(), 2);
    }

    #[test]
    fn modelled_write_results_are_deterministic() {
        let a = write_bench(&tiny()).unwrap();
        let b = write_bench(&tiny()).unwrap();
        let m = |r: &BenchReport| -> Vec<(u64, u64)> {
            io_rows(r)
                .iter()
                .filter(|x| x.clock == "modelled")
                .map(|x| (x.device_bytes, x.seconds.to_bits()))
                .collect()
        };
        assert_eq!(m(&a), m(&b));
    }

    #[test]
    fn read_bench_reads_what_it_says() {
        let r = read_bench(&tiny()).unwrap();
        let rows = io_rows(&r);
        assert_eq!(rows.len(), 25);
        for row in rows {
            assert_eq!(row.bytes, row.ops * row.io_size);
            assert!(row.mb_s > 0.0 && row.mb_s.is_finite());
            let v = row.vs_raw.unwrap();
            assert!(v > 0.0 && v.is_finite());
            if row.system == "engine" {
                // Whole slices with footers, aligned to 4 KiB.
                assert!(row.device_bytes >= row.bytes, "{row:?}");
            }
        }
        table_is_rectangular(&r.table);
    }

    #[test]
    fn macro_one_zone_moves_at_least_as_much_as_guided() {
        let opts = BenchOptions { scale: 0.01, ..tiny() };
        let p = macro_placements();
        let r = macro_bench_with(&opts, &p[..2]).unwrap();
        let BenchResult::Macro(runs) = &r.result else { panic!() };
        let (g, o) = (&runs[0], &runs[1]);
        for run in runs {
            assert!(!run.out_of_space, "{}", run.name);
            assert!(
                run.deletions > 0 && run.zone_resets > 0,
                "{}: deletions and resets must happen",
                run.name
            );
            assert!(run.device_bytes > run.user_bytes && run.gc_bytes < run.device_bytes);
            assert!(run.write_amplification > 1.0 && run.write_amplification.is_finite());
            assert!(run.gc_write_amplification >= 1.0);
            assert!(run.windows.iter().all(|w| w.mb_s > 0.0 && w.mb_s.is_finite()));
            assert!(run.windows.windows(2).all(|w| w[0].t < w[1].t), "time moves forward");
            assert!(run.windows.iter().any(|w| w.deleting) && run.windows.iter().any(|w| !w.deleting));
            assert!(run.zone_utilisation.iter().all(|&u| (0.0..=1.0).contains(&u)));
            let cdf = cdf_points(&run.zone_utilisation);
            assert!(cdf.windows(2).all(|w| w[0].0 <= w[1].0 && w[0].1 < w[1].1), "CDF is monotone");
            assert_eq!(cdf.last().map(|p| p.1), Some(1.0));
        }
        // The same writes and deletions (same seed): mixing streams in one zone leaves more
        // live data in GC victims.
        assert_eq!(g.user_bytes, o.user_bytes);
        assert!(o.gc_bytes >= g.gc_bytes, "one-zone GC {} < guided {}", o.gc_bytes, g.gc_bytes);
        assert!(o.gc_migrations > 0, "one-zone mixes every stream in one zone: GC must migrate");
        table_is_rectangular(&r.table);
        // The victim breakdown accounts for every zone GC migrated, per placement.
        let (_, vt) = r.extra.iter().find(|(n, _)| n == "gc victims").expect("victim table");
        table_is_rectangular(vt);
        for run in runs {
            let zones: u64 = vt
                .rows
                .iter()
                .filter(|row| row[0] == run.name && row[1] != "garbage (reset only)")
                .map(|row| row[2].parse::<u64>().unwrap())
                .sum();
            assert_eq!(zones, run.gc_migrations, "{}", run.name);
        }
    }

    #[test]
    fn recovery_bench_finds_every_chunk() {
        let r = recovery_bench(&tiny()).unwrap();
        let BenchResult::Recovery(rows) = &r.result else { panic!() };
        assert_eq!(rows.len(), 10);
        for row in rows {
            assert!(row.chunks > 0 && row.records > 0 && row.bytes_read > 0 && row.modelled_seconds > 0.0);
            let steps = row.superzone_seconds
                + row.checkpoint_load_seconds
                + row.journal_replay_seconds
                + row.datazone_scan_seconds
                + row.index_build_seconds;
            assert!(steps <= row.wall_seconds * 1.0001 + 1e-6, "{row:?}");
            if row.mode == "checkpointed" {
                assert_eq!(row.zones_scanned, 0, "{row:?}");
            } else {
                assert!(row.zones_scanned > 0 && row.bytes_scanned >= row.data_bytes, "{row:?}");
            }
        }
        table_is_rectangular(&r.table);
    }

    #[test]
    fn memory_bench_counts_index_bytes() {
        let r = memory_bench(&tiny()).unwrap();
        let BenchResult::Memory(rows) = &r.result else { panic!() };
        for row in rows {
            assert_eq!(row.per_record, 8);
            // One index group per chunk here: total = chunks x per_chunk + records x 8.
            assert_eq!(
                row.total as u64,
                row.chunks * row.per_chunk as u64 + row.chunks * row.records_per_chunk * 8
            );
        }
        table_is_rectangular(&r.table);
    }

    #[test]
    fn cpu_bench_reports_positive_costs() {
        let r = cpu_bench(&tiny()).unwrap();
        let BenchResult::Cpu(rows) = &r.result else { panic!() };
        assert_eq!(rows.len(), 8);
        for row in rows {
            assert!(row.bytes > 0 && row.wall_seconds > 0.0);
            assert!(row.cpu_seconds >= 0.0 && row.cpu_s_per_gb.is_finite(), "{row:?}");
        }
        table_is_rectangular(&r.table);
    }

    #[test]
    fn unknown_bench_is_an_error() {
        assert!(matches!(run("nope", &tiny()), Err(BenchError::Unknown(_))));
    }
}
