//! Drive micro-benchmarks on the modelled clock: the papers' drive measurements, repeated on the
//! calibrated profiles and printed beside the published numbers.
//!
//! | name | what | paper |
//! |---|---|---|
//! | `fig3` | 8 KB random writes over a growing written range, after the PB is full | PORE Fig. 3 / §II-B |
//! | `sac-table2` | 4 KB uniform random reads and writes over 0–10 GB, mean and RSD over 1 s windows | SAC Table 2 |
//! | `fig10` | time to write back a band vs its coverage, and the fitted line `R(x)` | SAC §4.4, Fig. 10 |
//! | `timeline` | IOPS per second of 4 KB random writes across the PB cliff | SAC Table 3, Fig. 1 / Fig. 11 |
//!
//! Every row carries a [`Provenance`]: several profile constants were fitted to some of these
//! very figures, and a fitted row's agreement is a regression check, not evidence that the
//! model is right (docs/drive-models.md, "Micro-benchmarks"). That file's bench tables are
//! generated from `shingled drive bench <name> --json` by `scripts/drive_models_tables.py`
//! (`--check` tells whether they are current).
//!
//! Everything runs on the virtual clock, so a bench is deterministic and takes a fraction of a
//! second to a few seconds of real time in a release build. [`DriveBenchOptions::scale`] shortens
//! the measurement windows (not the drives) for tests. Units follow fio's convention, which the
//! papers' tables appear to use: KB/s = 1024 B/s, MB/s = 1024² B/s.
//!
//! The R(x) measurement (`rmw_points`, `read_latency_ms`, `fit_line`) stays in the drive crate
//! ([`shingled_device::measure`]): the simulator fits SAC's cost model on the drive it runs with
//! it (`shingled_sim::fit_costs`).

mod fig10;
mod fig3;
mod sac_table2;
mod timeline;

pub use fig10::fig10;
pub use fig3::fig3;
pub use sac_table2::sac_table2;
pub use timeline::timeline;

use serde::Serialize;
use shingled_core::{ByteSize, Nanos};
use shingled_device::{BuildContext, DeviceError, Drive, DriveConfig, Result};

/// Shorthand for [`DeviceError::InvalidField`].
fn invalid(field: &str, value: impl std::fmt::Display, reason: impl Into<String>) -> DeviceError {
    DeviceError::InvalidField { field: field.to_string(), value: value.to_string(), reason: reason.into() }
}

/// The benches, with a one-line description each.
pub const BENCHES: &[(&str, &str)] = &[
    ("fig3", "PORE Fig. 3: 8 KB random-write throughput vs written range, SMR vs CMR"),
    ("sac-table2", "SAC Table 2: 4 KB random read/write bandwidth over 0-10 GB, mean and RSD"),
    ("fig10", "SAC Fig. 10: band write-back time vs coverage and the fitted R(x)"),
    ("timeline", "SAC Table 3 / Fig. 11: IOPS over time across the PB cliff (ST8000AS0002, 4 KB)"),
];

/// Options shared by the benches.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct DriveBenchOptions {
    /// Fraction of the full measurement windows (1.0 = the documented sizes; tests use less).
    /// Bounds (0, 10].
    pub scale: f64,
    /// Seed of the random offsets.
    pub seed: u64,
    /// The range `C` of SAC §5.1's random writes. `None` = [`DEFAULT_HISTORY_RANGE`].
    /// `timeline` writes over it; `sac-table2` preconditions its SMR write run with it (the
    /// state SAC §5.1's detection leaves the drive in). SAC states neither, and both results
    /// scale with it (docs/drive-models.md, "Misses and why").
    pub range: Option<ByteSize>,
    /// `pb_clean_low_watermark` of `st8000as0002` in `sac-table2` and `timeline`. `None` = the
    /// profile's [`shingled_device::profiles::ST8000AS0002_CLEAN_LOW_WATERMARK`] (0.985, fitted with the
    /// range to SAC Table 2). Another value is a sensitivity run (docs/drive-models.md, "Misses
    /// and why"). Bounds `0 <= w < 1`, as the drive configuration's.
    pub low_watermark: Option<f64>,
}

impl Default for DriveBenchOptions {
    fn default() -> Self {
        DriveBenchOptions { scale: 1.0, seed: 1, range: None, low_watermark: None }
    }
}

/// Whether a row's agreement with the paper is evidence.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Provenance {
    /// A model constant was chosen to reproduce this figure (or the figure follows from
    /// constants fitted to the same table; [`BenchRow::fitted_to`] says which): agreement is a
    /// regression check, not evidence.
    Fitted,
    /// Compared with the paper, nothing tuned to it: real evidence (of agreement or of a miss).
    Validated,
    /// The paper gives no value to compare with.
    NotCompared,
}

impl Provenance {
    /// The serialized name: `fitted`, `validated`, `not-compared`.
    pub fn as_str(self) -> &'static str {
        match self {
            Provenance::Fitted => "fitted",
            Provenance::Validated => "validated",
            Provenance::NotCompared => "not-compared",
        }
    }
}

/// The line printed under every table that has a fitted row.
pub const FITTED_NOTE: &str = "fitted: a model constant was chosen to reproduce that paper figure \
(fitted_to in --csv/--json): a regression check, not evidence; validated: nothing tuned to it.";

/// One compared figure.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct BenchRow {
    /// What is measured (e.g. `SMR 56 GB`).
    pub label: String,
    /// Unit of `ours` and `paper`.
    pub unit: String,
    /// Our modelled value.
    pub ours: f64,
    /// The paper's value, where it gives one.
    pub paper: Option<f64>,
    /// Where the paper's value comes from, or a remark.
    pub source: String,
    /// Whether a model constant was fitted to `paper` ([`Provenance`]).
    pub provenance: Provenance,
    /// For a fitted row: which constant of which profile was fitted (or which fitted constants
    /// determine the figure).
    pub fitted_to: Option<String>,
}

impl BenchRow {
    fn new(label: String, unit: &str, ours: f64, paper: Option<f64>, source: &str) -> BenchRow {
        let provenance = if paper.is_some() { Provenance::Validated } else { Provenance::NotCompared };
        BenchRow { label, unit: unit.into(), ours, paper, source: source.into(), provenance, fitted_to: None }
    }

    /// Marks the row as fitted: `to` names the constant(s) chosen to reproduce its figure.
    fn fitted(mut self, to: &str) -> BenchRow {
        self.provenance = Provenance::Fitted;
        self.fitted_to = Some(to.into());
        self
    }

    /// `(ours − paper) / paper` in percent.
    pub fn diff_pct(&self) -> Option<f64> {
        self.paper.filter(|p| *p != 0.0).map(|p| (self.ours - p) / p * 100.0)
    }
}

/// A curve (for CSV and plots).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Series {
    /// Legend name.
    pub name: String,
    /// Axis labels.
    pub x_label: String,
    /// Axis labels.
    pub y_label: String,
    /// `(x, y)` points.
    pub points: Vec<(f64, f64)>,
    /// The paper's points for the same curve, if any.
    pub paper: Vec<(f64, f64)>,
    /// Whether a model constant was fitted to some of `paper` (plots label them "(paper,
    /// fitted)").
    pub paper_fitted: bool,
}

/// What a bench produces.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct DriveBenchReport {
    /// Bench name.
    pub name: String,
    /// Title (the paper's figure or table).
    pub title: String,
    /// Compared figures.
    pub rows: Vec<BenchRow>,
    /// Curves.
    pub series: Vec<Series>,
    /// Remarks printed under the table.
    pub notes: Vec<String>,
}

impl DriveBenchReport {
    /// An aligned table: ours, the paper's, the difference.
    pub fn to_table(&self) -> String {
        use shingled_core::table::{render, Align, Column, Measure, Rule, Style, Width};
        let mut out = format!("{}\n\n", self.title);
        let w = self.rows.iter().map(|r| r.label.len()).max().unwrap_or(5).max(5);
        let columns = [
            Column { align: Align::Left, width: Width::Fixed(w) },
            Column::right(12),
            Column::right(12),
            Column::right(8),
            Column::left(8),
            Column::left(10),
            Column::left(0),
        ];
        let header = ["what", "ours", "paper", "diff", "unit", "provenance", "source"];
        let rows: Vec<Vec<String>> = self
            .rows
            .iter()
            .map(|r| {
                vec![
                    r.label.clone(),
                    fmt_num(r.ours),
                    r.paper.map_or("-".to_string(), fmt_num),
                    r.diff_pct().map_or("-".to_string(), |d| format!("{d:+.1}%")),
                    r.unit.clone(),
                    match r.provenance {
                        Provenance::NotCompared => "-",
                        p => p.as_str(),
                    }
                    .to_string(),
                    r.source.clone(),
                ]
            })
            .collect();
        let style = Style { measure: Measure::Bytes, trim_end: false, rule: Rule::Dashes(w + 72) };
        out.push_str(&render(&columns, &header, &rows, &style));
        let fitted = self.rows.iter().any(|r| r.provenance == Provenance::Fitted);
        let lines: Vec<&str> =
            fitted.then_some(FITTED_NOTE).into_iter().chain(self.notes.iter().map(String::as_str)).collect();
        for n in &lines {
            out.push_str(&format!("\n{n}"));
        }
        if !lines.is_empty() {
            out.push('\n');
        }
        out
    }

    /// CSV of the rows: `bench,what,unit,ours,paper,diff_pct,source,provenance,fitted_to`.
    pub fn rows_csv(&self) -> String {
        let mut out = String::from("bench,what,unit,ours,paper,diff_pct,source,provenance,fitted_to\n");
        for r in &self.rows {
            out.push_str(&format!(
                "{},{},{},{},{},{},{},{},{}\n",
                self.name,
                csv_field(&r.label),
                csv_field(&r.unit),
                r.ours,
                r.paper.map_or(String::new(), |p| p.to_string()),
                r.diff_pct().map_or(String::new(), |d| format!("{d:.2}")),
                csv_field(&r.source),
                r.provenance.as_str(),
                csv_field(r.fitted_to.as_deref().unwrap_or(""))
            ));
        }
        out
    }

    /// CSV of the curves: `series,x,y` (the paper's points as series `<name> (paper)`).
    pub fn series_csv(&self) -> String {
        let mut out = String::from("series,x,y\n");
        for s in &self.series {
            for (x, y) in &s.points {
                out.push_str(&format!("{},{x},{y}\n", csv_field(&s.name)));
            }
            for (x, y) in &s.paper {
                out.push_str(&format!("{},{x},{y}\n", csv_field(&format!("{} (paper)", s.name))));
            }
        }
        out
    }
}

fn fmt_num(v: f64) -> String {
    if v.abs() >= 100.0 {
        format!("{v:.1}")
    } else if v.abs() >= 1.0 {
        format!("{v:.3}")
    } else {
        format!("{v:.4}")
    }
}

fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// Runs the bench called `name` (see [`BENCHES`]).
pub fn run(name: &str, opts: &DriveBenchOptions) -> Result<DriveBenchReport> {
    if !(opts.scale.is_finite() && opts.scale > 0.0 && opts.scale <= 10.0) {
        return Err(invalid("scale", opts.scale, "expected a fraction in (0, 10]"));
    }
    match name {
        "fig3" => fig3(opts),
        "sac-table2" => sac_table2(opts),
        "fig10" => fig10(opts),
        "timeline" => timeline(opts),
        other => Err(DeviceError::InvalidField {
            field: "bench".into(),
            value: other.into(),
            reason: format!(
                "unknown bench; known: {}",
                BENCHES.iter().map(|b| b.0).collect::<Vec<_>>().join(", ")
            ),
        }),
    }
}

/// A seeded stream of offsets: the workspace's SplitMix64, free of RNG crates' version drift.
struct Mix(shingled_core::SplitMix64);

impl Mix {
    fn new(seed: u64) -> Mix {
        Mix(shingled_core::SplitMix64::new(seed))
    }

    fn next(&mut self) -> u64 {
        self.0.next_u64()
    }

    /// A uniformly random aligned start of an `n`-block request in `[0, span_blocks)`.
    fn aligned(&mut self, span_blocks: u64, n: u64) -> u64 {
        (self.next() % (span_blocks / n).max(1)) * n
    }
}

fn build(name: &str) -> Result<(DriveConfig, Box<dyn Drive>)> {
    build_with(name, None)
}

/// [`build`], with `st8000as0002`'s batch-cleaning low watermark set to `low_watermark` if given.
fn build_with(name: &str, low_watermark: Option<f64>) -> Result<(DriveConfig, Box<dyn Drive>)> {
    let mut cfg = DriveConfig::from_profile(name)?;
    if let (Some(w), Some(smr)) = (low_watermark, cfg.dm_smr_mut()) {
        smr.pb_clean_low_watermark = Some(w);
    }
    let cap = cfg.capacity().unwrap_or(ByteSize::gb(1000));
    let d = cfg.build(&BuildContext::whole_drive(cap))?;
    Ok((cfg, d))
}

/// For a run whose range `C` or low watermark is not the fitted default: what it used, to
/// append to the fitted rows' `fitted_to` and to the notes. `None` for the defaults.
fn off_fit(opts: &DriveBenchOptions, range: ByteSize) -> Option<String> {
    let w = opts.low_watermark.unwrap_or(shingled_device::profiles::ST8000AS0002_CLEAN_LOW_WATERMARK);
    (range != DEFAULT_HISTORY_RANGE || w != shingled_device::profiles::ST8000AS0002_CLEAN_LOW_WATERMARK).then(
        || {
            format!(
            "this run: C = {:.0} GB, pb_clean_low_watermark = {w} (the fitted values are {:.0} GB and {})",
            range.0 as f64 / 1e9,
            DEFAULT_HISTORY_RANGE.0 as f64 / 1e9,
            shingled_device::profiles::ST8000AS0002_CLEAN_LOW_WATERMARK
        )
        },
    )
}

const KIB: f64 = 1024.0;
const MIB: f64 = 1024.0 * 1024.0;

/// Closed-loop random writes of `n` blocks each over `[0, span)`: returns (bytes, elapsed) for
/// `count` writes starting at `now`, and the new `now`.
fn random_writes(
    d: &mut dyn Drive,
    rng: &mut Mix,
    now: &mut Nanos,
    span_blocks: u64,
    n: u32,
    count: u64,
) -> Nanos {
    let start = *now;
    for _ in 0..count {
        let b = rng.aligned(span_blocks, n as u64);
        *now += d.write(*now, b, n);
    }
    *now - start
}

/// Default range `C` of SAC §5.1's random writes (the detection that leaves the drive in the
/// state `sac-table2` starts from, and `timeline`'s range). SAC states it for neither; SAC
/// Fig. 1 writes over 1 TB. **Fitted**: with [`shingled_device::profiles::ST8000AS0002_CLEAN_LOW_WATERMARK`] it
/// brings SAC Table 2's SMR write mean and RSD within 7% (docs/drive-models.md).
pub const DEFAULT_HISTORY_RANGE: ByteSize = ByteSize::gb(600);

/// SAC §5.1's range `C` from `opts.range` (default [`DEFAULT_HISTORY_RANGE`]), checked
/// against `st8000as0002`.
fn history_range(opts: &DriveBenchOptions) -> Result<ByteSize> {
    let range = opts.range.unwrap_or(DEFAULT_HISTORY_RANGE);
    let (_, d) = build("st8000as0002")?;
    if range.blocks() == 0 || range.blocks() > d.capacity_blocks() {
        return Err(invalid("range", range, "expected 4 KiB ..= the drive's 8 TB"));
    }
    Ok(range)
}
