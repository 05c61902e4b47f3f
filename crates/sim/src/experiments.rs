//! The papers' experiments, one function each: a grid of simulations and the rows and columns
//! the paper prints.
//!
//! Each experiment runs on a list of traces (by default synthetic profiles of the MSR volumes
//! the paper used) and prints, per trace, one row per scheme or parameter value with the
//! paper's metrics. Configurations start from a base [`SimConfig`] (drive, SSD, sizes), so a
//! user's configuration file and flags apply to every run.

use crate::run::{scheme_config, RunReport};
use crate::{Mode, SimConfig, SimError};
use serde::{Deserialize, Serialize};
use shingled_core::SizeSpec;
use shingled_trace::TraceStats;

/// A metric column of an experiment table.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Column {
    /// Total modelled I/O time, s.
    TotalTime,
    /// SSD time (read + write), s.
    SsdTime,
    /// Drive read time, s.
    DriveReadTime,
    /// Drive write time, s.
    DriveWriteTime,
    /// Speed-up against the row labelled `smr-only` of the same trace.
    VsSmrOnly,
    /// Speed-up against `cmr-only`.
    VsCmrOnly,
    /// Speed-up against `lru`.
    VsLru,
    /// All hits / block accesses.
    HitRatio,
    /// 1 − hit ratio.
    MissRatio,
    /// Read hit ratio.
    ReadHit,
    /// Write hit ratio.
    WriteHit,
    /// Write amplification.
    Wa,
    /// RMW count.
    Rmws,
    /// Clean blocks evicted.
    CleanEvictions,
    /// Dirty blocks evicted.
    DirtyEvictions,
}

impl Column {
    /// Header text.
    pub fn header(self) -> &'static str {
        match self {
            Column::TotalTime => "total time (s)",
            Column::SsdTime => "SSD (s)",
            Column::DriveReadTime => "drive read (s)",
            Column::DriveWriteTime => "drive write (s)",
            Column::VsSmrOnly => "vs SMR-only",
            Column::VsCmrOnly => "vs CMR-only",
            Column::VsLru => "vs LRU",
            Column::HitRatio => "hit ratio",
            Column::MissRatio => "miss ratio",
            Column::ReadHit => "read hit",
            Column::WriteHit => "write hit",
            Column::Wa => "WA",
            Column::Rmws => "RMWs",
            Column::CleanEvictions => "clean evicted",
            Column::DirtyEvictions => "dirty evicted",
        }
    }
}

/// One simulation of an experiment: the trace group it belongs to and its row label.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Cell {
    /// The trace (group of rows).
    pub trace: String,
    /// Row label: scheme or parameter value.
    pub label: String,
    /// The configuration.
    pub config: SimConfig,
}

/// A planned experiment.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Experiment {
    /// Command name, e.g. `pore-overall`.
    pub name: String,
    /// What the paper shows.
    pub title: String,
    /// The runs.
    pub cells: Vec<Cell>,
    /// The columns printed.
    pub columns: Vec<Column>,
    /// The set-up the runs use ([`crate::setup::describe`]).
    #[serde(default)]
    pub setup: String,
}

/// A finished experiment.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ExperimentReport {
    /// The plan.
    pub experiment: Experiment,
    /// One report per cell, in order.
    pub runs: Vec<RunReport>,
    /// Statistics of each distinct trace.
    pub traces: Vec<TraceStats>,
    /// The paper's headline numbers for this experiment beside ours.
    #[serde(default)]
    pub paper: Vec<crate::paper::Claim>,
}

/// What the user chose for an experiment.
#[derive(Clone, Debug)]
pub struct ExperimentOptions {
    /// Base configuration (drive, SSD, warm-up, cache size, costs).
    pub base: SimConfig,
    /// Traces (paths or `synth:` specs); empty = the experiment's default profiles.
    pub traces: Vec<String>,
    /// Mode override; `None` = the experiment's (the paper's) mode.
    pub mode: Option<Mode>,
    /// Run in the paper's set-up (its drive, CMR-only drive and I/O unit: `pore` for PORE's
    /// experiments, `sac` for SAC's), replacing the base's. `false` keeps the base's drive as
    /// the user configured it.
    pub paper_setup: bool,
}

/// Every experiment: name, paper reference, default mode and traces.
pub const EXPERIMENTS: &[(&str, &str)] = &[
    ("pore-overall", "PORE Figs. 11-13: SMR-only, CMR-only, LRU, LRU-band, PORE-BL (read-write; --mode write-only for Fig. 13)"),
    ("pore-schemes", "PORE Fig. 14: LRU vs PORE-CF, PORE-PF, PORE-BL (write-only)"),
    ("pore-zone-size", "PORE Fig. 15a-c: zone size 2-50 MB for CF, PF, BL on wdev (write-only)"),
    ("pore-period", "PORE Fig. 15d-f: period 0.1x-10x the PB size for CF, PF, BL on wdev (write-only)"),
    ("pore-ssd-size", "PORE Fig. 16: SSD size 1-5% for LRU, LRU-band, PORE-BL (write-only)"),
    ("sac-write-only", "SAC Figs. 13-14: LRU, MOST, SAC over cache sizes (write-only)"),
    ("sac-rw", "SAC Table 5: LRU, MOST, MOST+CDC, SAC in read/write-mixed mode"),
    ("sac-tbs", "SAC Fig. 15: target band selection PD, AD, ARS (write-only)"),
    ("sac-cycle", "SAC Fig. 16: cycle length 0.5x-10x the PB size (write-only)"),
    ("sac-band-size", "SAC Fig. 17: assumed band size 2-600 MB (write-only)"),
];

fn traces_or(opts: &ExperimentOptions, default: &[&str]) -> Vec<String> {
    if opts.traces.is_empty() {
        default.iter().map(|s| s.to_string()).collect()
    } else {
        opts.traces.clone()
    }
}

/// The four traces PORE §V-C runs its time experiments on.
const PORE_TRACES: &[&str] = &["synth:wdev", "synth:mds", "synth:ts", "synth:usr"];
/// Write-heavy volumes standing in for SAC's "long" mix (pass a `shingled trace mix` output with
/// --trace to run on a long trace).
const SAC_TRACES: &[&str] = &["synth:wdev", "synth:hm", "synth:rsrch", "synth:stg"];

/// MOST as the SAC paper ran it: on SAC's assumed 20.48 MB bands (the artifact's `ZONESZ`),
/// not on the drive's true bands.
const SAC_MOST: &str = "most:band_size=20480000";

struct Planner<'a> {
    opts: &'a ExperimentOptions,
    mode: Mode,
    cells: Vec<Cell>,
}

impl Planner<'_> {
    /// Adds a cell: trace `t`, label, scheme name (smr-only, cmr-only or a policy spec), and a
    /// final adjustment.
    fn add(
        &mut self,
        t: &str,
        label: &str,
        scheme: &str,
        adjust: impl FnOnce(&mut SimConfig),
    ) -> Result<(), SimError> {
        let mut base = self.opts.base.clone();
        base.trace.path = t.to_string();
        base.mode = self.mode;
        let mut cfg = scheme_config(&base, scheme)?;
        cfg.label = Some(label.to_string());
        adjust(&mut cfg);
        self.cells.push(Cell { trace: t.to_string(), label: label.to_string(), config: cfg });
        Ok(())
    }
}

/// Plans experiment `name`.
pub fn plan(name: &str, opts: &ExperimentOptions) -> Result<Experiment, SimError> {
    use Column::*;
    let title =
        EXPERIMENTS.iter().find(|(n, _)| *n == name).map(|(_, t)| t.to_string()).ok_or_else(|| {
            SimError::Config {
                field: "experiment",
                reason: format!(
                    "unknown experiment {name:?}; known: {}",
                    EXPERIMENTS.iter().map(|(n, _)| *n).collect::<Vec<_>>().join(", ")
                ),
            }
        })?;
    let default_mode =
        if name == "pore-overall" || name == "sac-rw" { Mode::ReadWrite } else { Mode::WriteOnly };
    let mut based = opts.clone();
    if opts.paper_setup {
        let name = if name.starts_with("sac") { "sac" } else { "pore" };
        crate::setup::setup(name)?.apply(&mut based.base);
    }
    let opts = &based;
    let mut p = Planner { opts, mode: opts.mode.unwrap_or(default_mode), cells: Vec::new() };
    let columns;
    match name {
        "pore-overall" => {
            for t in traces_or(opts, PORE_TRACES) {
                for s in ["smr-only", "cmr-only", "lru", "lru-band", "pore-bl"] {
                    p.add(&t, s, s, |_| {})?;
                }
            }
            columns = vec![
                TotalTime,
                DriveReadTime,
                DriveWriteTime,
                VsSmrOnly,
                VsCmrOnly,
                VsLru,
                ReadHit,
                WriteHit,
                Wa,
                Rmws,
            ];
        }
        "pore-schemes" => {
            for t in traces_or(opts, PORE_TRACES) {
                for s in ["lru", "pore-cf", "pore-pf", "pore-bl"] {
                    p.add(&t, s, s, |_| {})?;
                }
            }
            columns = vec![TotalTime, VsLru, HitRatio, Wa, Rmws];
        }
        "pore-zone-size" => {
            for t in traces_or(opts, &["synth:wdev"]) {
                for scheme in ["cf", "pf", "bl"] {
                    for mb in [2, 10, 20, 30, 50] {
                        let spec = format!("pore:scheme={scheme},zone_size={mb}MiB");
                        p.add(&t, &format!("{scheme} zone {mb} MiB"), &spec, |_| {})?;
                    }
                }
            }
            columns = vec![TotalTime, HitRatio, Wa, Rmws];
        }
        "pore-period" => {
            for t in traces_or(opts, &["synth:wdev"]) {
                for scheme in ["cf", "pf", "bl"] {
                    for (x, pct) in
                        [("0.1", 10), ("0.5", 50), ("1", 100), ("2", 200), ("5", 500), ("10", 1000)]
                    {
                        let spec = format!("pore:scheme={scheme},period={pct}%");
                        p.add(&t, &format!("{scheme} period {x}x PB"), &spec, |_| {})?;
                    }
                }
            }
            columns = vec![TotalTime, HitRatio, Wa, Rmws];
        }
        "pore-ssd-size" => {
            for t in traces_or(opts, PORE_TRACES) {
                for s in ["lru", "lru-band", "pore-bl"] {
                    for pct in [1, 2, 3, 4, 5] {
                        p.add(&t, &format!("{s} {pct}%"), s, |c| {
                            if let Some(cache) = &mut c.cache {
                                cache.size = SizeSpec::Fraction(pct as f64 / 100.0);
                            }
                        })?;
                    }
                }
            }
            columns = vec![TotalTime, HitRatio, Wa, Rmws];
        }
        "sac-write-only" => {
            for t in traces_or(opts, SAC_TRACES) {
                for pct in [1, 2, 3, 4, 5] {
                    for (s, spec) in [("lru", "lru"), ("most", SAC_MOST), ("sac", "sac")] {
                        p.add(&t, &format!("{s} {pct}%"), spec, |c| {
                            if let Some(cache) = &mut c.cache {
                                cache.size = SizeSpec::Fraction(pct as f64 / 100.0);
                            }
                        })?;
                    }
                }
            }
            columns = vec![TotalTime, DriveWriteTime, MissRatio, Wa, Rmws];
        }
        "sac-rw" => {
            for t in traces_or(opts, SAC_TRACES) {
                for (s, spec) in
                    [("lru", "lru"), ("most", SAC_MOST), ("most-cdc", "most-cdc"), ("sac", "sac")]
                {
                    p.add(&t, s, spec, |c| {
                        if let Some(cache) = &mut c.cache {
                            cache.size = SizeSpec::Fraction(0.05);
                        }
                    })?;
                }
            }
            columns = vec![
                HitRatio,
                ReadHit,
                WriteHit,
                CleanEvictions,
                DirtyEvictions,
                TotalTime,
                SsdTime,
                DriveReadTime,
                DriveWriteTime,
            ];
        }
        "sac-tbs" => {
            for t in traces_or(opts, SAC_TRACES) {
                for (label, spec) in [("PD", "sac:tbs=pd"), ("AD", "sac:tbs=ad"), ("ARS", "sac:tbs=ars")] {
                    p.add(&t, label, spec, |_| {})?;
                }
            }
            columns = vec![TotalTime, MissRatio, Wa, Rmws];
        }
        "sac-cycle" => {
            for t in traces_or(opts, SAC_TRACES) {
                for x in ["0.5", "1", "2", "4", "6", "8", "10"] {
                    p.add(&t, &format!("{x}x PB"), &format!("sac:cycle_length={x}x"), |_| {})?;
                }
            }
            columns = vec![TotalTime, MissRatio, Wa, Rmws];
        }
        "sac-band-size" => {
            for t in traces_or(opts, SAC_TRACES) {
                for mb in [2, 10, 20, 50, 100, 200, 600] {
                    p.add(&t, &format!("{mb} MB"), &format!("sac:band_size={mb}MB"), |_| {})?;
                }
            }
            columns = vec![TotalTime, MissRatio, Wa, Rmws];
        }
        _ => unreachable!("checked above"),
    }
    Ok(Experiment {
        name: name.to_string(),
        title: format!("{title} [mode {}]", p.mode.name()),
        cells: p.cells,
        columns,
        setup: crate::setup::describe(&opts.base),
    })
}

/// Runs a planned experiment, `jobs` simulations at a time.
pub fn run_experiment(
    exp: Experiment,
    jobs: usize,
    progress: &(dyn Fn(u64) + Sync),
) -> Result<ExperimentReport, SimError> {
    run_experiment_with(exp, jobs, &|p: crate::Progress| progress(p.requests))
}

/// [`run_experiment`] reporting a [`crate::Progress`] (see [`crate::run_all_with`]).
pub fn run_experiment_with(
    exp: Experiment,
    jobs: usize,
    progress: &(dyn Fn(crate::Progress) + Sync),
) -> Result<ExperimentReport, SimError> {
    let configs: Vec<SimConfig> = exp.cells.iter().map(|c| c.config.clone()).collect();
    let (runs, traces) = crate::run_all_with(&configs, jobs, progress)?;
    Ok(ExperimentReport::new(exp, runs, traces))
}

impl ExperimentReport {
    /// The report of `experiment`'s `runs`, with the paper's figures beside ours.
    pub fn new(experiment: Experiment, runs: Vec<RunReport>, traces: Vec<TraceStats>) -> ExperimentReport {
        let mut report = ExperimentReport { experiment, runs, traces, paper: Vec::new() };
        report.paper = crate::paper::experiment_claims(&report);
        report
    }
}
