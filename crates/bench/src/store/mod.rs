//! Benchmarks of the chunk store after SMRSTORE §6 (Zhou et al., FAST '23):
//! write and random-read throughput against the raw zoned device and a file-per-chunk baseline
//! (Figs. 14, 16), the multi-stream macro benchmark with deletions and GC (Table 3, Figs. 19,
//! 20), recovery time (Fig. 21), index memory and CPU cost (§6.5).
//!
//! Every bench is a function taking [`StoreBenchOptions`] and returning a [`StoreBenchReport`]: a
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

use serde::Serialize;
use shingled_store::format::{self, RecordType, BLOCK, DATA_PREFIX, HEADER_LEN};
use shingled_store::{ChunkId, Durability, Placement, Store, StoreConfig, StreamType, ZoneState};
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

mod cpu;
mod macro_;
mod memory;
mod read;
mod recovery;
#[cfg(test)]
mod tests;
mod write;

pub use cpu::{cpu_bench, CpuRow};
pub use macro_::{
    cdf_points, macro_bench, macro_bench_with, macro_placements, macro_streams, MacroRun, StreamSpec, Window,
};
pub use memory::{memory_bench, MemoryRow};
pub use read::read_bench;
pub use recovery::{recovery_bench, RecoveryRow};
pub use write::write_bench;

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
pub struct StoreBenchOptions {
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

impl Default for StoreBenchOptions {
    fn default() -> Self {
        StoreBenchOptions { scale: 1.0, seed: 1, streams: 8, dir: None }
    }
}

impl StoreBenchOptions {
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
        source: shingled_store::StoreError,
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

fn se(what: impl Into<String>) -> impl FnOnce(shingled_store::StoreError) -> BenchError {
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

    /// Aligned text, one row per line: the first column left-aligned, the rest right-aligned,
    /// trailing spaces trimmed ([`shingled_core::table`]).
    pub fn to_text(&self) -> String {
        use shingled_core::table::{first_left_rest_right, render, Measure, Rule, Style};
        let header: Vec<&str> = self.columns.iter().map(String::as_str).collect();
        let style = Style { measure: Measure::Chars, trim_end: true, rule: Rule::PerColumn };
        render(&first_left_rest_right(header.len()), &header, &self.rows, &style)
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
pub struct StoreBenchReport {
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

impl StoreBenchReport {
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
pub fn run(name: &str, opts: &StoreBenchOptions) -> BResult<StoreBenchReport> {
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

/// The workspace's SplitMix64: small, seeded, good enough for workload choices.
#[derive(Clone, Debug)]
struct Rng(shingled_core::SplitMix64);

impl Rng {
    fn new(seed: u64) -> Rng {
        Rng(shingled_core::SplitMix64::new(seed ^ shingled_core::SplitMix64::GAMMA))
    }
    fn next(&mut self) -> u64 {
        self.0.next_u64()
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

fn shingled_zoned_bytes(b: u64) -> shingled_core::ByteSize {
    shingled_core::ByteSize(b)
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
