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

// The benches and helpers below share these imports through `use super::*`.
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
mod error;
mod helpers;
mod io;
mod macro_;
mod memory;
mod read;
mod recovery;
mod tap;
#[cfg(test)]
mod tests;
mod write;

pub use cpu::{cpu_bench, CpuRow};
pub use error::{BResult, BenchError};
pub use helpers::thread_cpu_seconds;
pub use io::IoRow;
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
    /// Rounds of every wall-clock cell of `write` (the engine, the raw device and the files
    /// interleaved in each round); the cell reports the median time. Default 1; 0 counts as 1.
    pub rounds: usize,
}

impl Default for StoreBenchOptions {
    fn default() -> Self {
        StoreBenchOptions { scale: 1.0, seed: 1, streams: 8, dir: None, rounds: 1 }
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
