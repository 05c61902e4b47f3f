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
    /// Mean response time (open loop: completion − arrival), ms.
    RespMean,
    /// Median response time, ms.
    RespP50,
    /// 90th percentile response time, ms.
    RespP90,
    /// 99th percentile response time, ms.
    RespP99,
    /// On-demand GCs (SMaRT) or write-forced band cleanings (Skylight) per million drive
    /// write requests (SMaRT Table 2's GC_F).
    GcOnDemandPerM,
    /// Background GCs / idle cleanings per million drive write requests (Table 2's GC_B).
    GcBackgroundPerM,
    /// Share of drive write requests that ran an on-demand GC, % (SMaRT Fig. 10).
    AmplifiedWritePct,
    /// Median cost of an on-demand GC: tracks moved (SMaRT) or I/O requests (Skylight).
    GcCostMedian,
    /// Share of on-demand GCs costing 1 (one track; SMaRT §5.5.4), %.
    GcCostOnePct,
    /// Share of on-demand GCs costing under 10, %.
    GcCostUnder10Pct,
    /// Share of on-demand GCs costing under 100, %.
    GcCostUnder100Pct,
    /// Share of read requests split into several physical reads, % (SMaRT Fig. 6).
    FragmentedReadPct,
    /// Mean physical reads per fragmented read (SMaRT Figs. 7–9's fragmentation ratio).
    FragmentRatio,
    /// Share of fragmented reads split into at most 3 pieces, %.
    FragmentAtMost3Pct,
    /// Share of track updates written in place, % (SMaRT).
    InPlacePct,
    /// The translation layer's map, MiB (SMaRT: 8 B per mapped track, §4.1).
    MapMib,
    /// Space gain (SMaRT Table 3): the bytes the layout can give the host (at full utilisation)
    /// over the mechanism's raw bytes, %: the RAZ and a media cache cost space, guard tracks
    /// do not (they exist only below 50% utilisation).
    SpaceGainPct,
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
            Column::RespMean => "resp mean (ms)",
            Column::RespP50 => "p50 (ms)",
            Column::RespP90 => "p90 (ms)",
            Column::RespP99 => "p99 (ms)",
            Column::GcOnDemandPerM => "GC_F /1M wr",
            Column::GcBackgroundPerM => "GC_B /1M wr",
            Column::AmplifiedWritePct => "amplified wr %",
            Column::GcCostMedian => "GC_F cost p50",
            Column::GcCostOnePct => "cost 1 %",
            Column::GcCostUnder10Pct => "cost <10 %",
            Column::GcCostUnder100Pct => "cost <100 %",
            Column::FragmentedReadPct => "fragmented rd %",
            Column::FragmentRatio => "pieces/frag rd",
            Column::FragmentAtMost3Pct => "<=3 pieces %",
            Column::InPlacePct => "in place %",
            Column::MapMib => "map (MiB)",
            Column::SpaceGainPct => "space gain %",
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
    ("smart-response", "SMaRT Figs. 3-5: response time of HDD, SMaRT, Skylight at 30/60/90% utilisation (open loop; --cdf for the CDFs)"),
    ("smart-gc", "SMaRT Table 2, Figs. 10-13: GC per 1M writes, amplified writes, GC overhead"),
    ("smart-fragmentation", "SMaRT Figs. 6-9: fragmented reads and fragmentation ratio"),
    ("smart-summary", "SMaRT Table 3: response, metadata size, in-place updates"),
    ("cache-open-loop", "PORE's and SAC's caches above the DM-SMR drive in open loop: response times with queueing and idle cleaning (no paper figure; read-write)"),
];

/// SMaRT Table 1: the four MSR volumes it replays (synthetic stand-ins spread over the volume's
/// MAX LBA), with the factor their LBAs are multiplied by.
pub const SMART_TRACES: &[(&str, &str, u64)] = &[
    ("mds_0", "synth:mds,span=max", 5),
    ("proj_0", "synth:proj,span=max", 10),
    ("stg_0", "synth:stg,span=max", 12),
    ("rsrch_0", "synth:rsrch,span=max", 10),
];

/// SMaRT §5.4's utilisations.
pub const SMART_UTILISATIONS: [f64; 3] = [0.3, 0.6, 0.9];

/// SMaRT §5.1's three schemes on one 15k rpm mechanism: label and drive profile.
pub const SMART_SCHEMES: [(&str, &str); 3] =
    [("hdd", "cheetah-15k5"), ("smart", "smart-cheetah"), ("skylight", "skylight-cheetah")];

/// Table 1's LBA factor of a trace, recognised by its volume name (`mds`, `proj`, `stg`,
/// `rsrch`); 1 for any other trace.
pub fn smart_lba_factor(trace: &str) -> u64 {
    let name = trace.rsplit('/').next().unwrap_or(trace).to_ascii_lowercase();
    let name = name.trim_start_matches("synth:");
    SMART_TRACES
        .iter()
        .find(|(vol, _, _)| {
            let short = vol.trim_end_matches("_0");
            name.starts_with(vol) || name.starts_with(&format!("{short},")) || name == short
        })
        .map_or(1, |t| t.2)
}

/// SMaRT's evaluation grid (§5.2–5.4): every trace × utilisation × scheme, no SSD cache, open
/// loop, a request's blocks as one command; LBAs multiplied by Table 1's factor and folded
/// modulo the SMaRT drive's host capacity at that utilisation (U × its shingled space), the
/// same range for all three schemes. SMaRT lays that range over its whole shingled space (U of
/// every zone's tracks), so for the HDD and Skylight it is spread over the same 142 GB
/// (`trace.spread`): the three see the same arm positions, not SMaRT the whole stroke and the
/// others its outer U. Row groups are "trace U=x%".
fn plan_smart(p: &mut Planner, opts: &ExperimentOptions) -> Result<(), SimError> {
    let traces: Vec<String> = if opts.traces.is_empty() {
        SMART_TRACES.iter().map(|t| t.1.to_string()).collect()
    } else {
        opts.traces.clone()
    };
    for t in &traces {
        for u in SMART_UTILISATIONS {
            let mut smart = shingled_device::profile("smart-cheetah").expect("a built-in profile");
            smart.smart_mut().expect("a SMaRT drive").utilisation = u;
            let fold = smart.capacity().ok_or_else(|| SimError::Config {
                field: "drive",
                reason: "the SMaRT profile's host capacity cannot be computed".into(),
            })?;
            let group = format!("{t} U={:.0}%", u * 100.0);
            for (label, profile) in SMART_SCHEMES {
                let mut cfg = opts.base.clone();
                cfg.trace.path = t.clone();
                cfg.trace.lba_scale = Some(smart_lba_factor(t));
                cfg.trace.fold = Some(fold);
                cfg.cache = None;
                cfg.mode = Mode::ReadWrite;
                cfg.replay = crate::Replay::Open;
                cfg.io_unit = crate::IoUnit::Request;
                cfg.drive = if label == "smart" {
                    smart.clone()
                } else {
                    shingled_device::profile(profile).expect("a built-in profile")
                };
                if label != "smart" {
                    cfg.trace.spread = smart.smart().and_then(|c| c.shingled_size);
                }
                cfg.label = Some(label.to_string());
                p.cells.push(Cell { trace: group.clone(), label: label.to_string(), config: cfg });
            }
        }
    }
    Ok(())
}

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
    let default_mode = if matches!(name, "pore-overall" | "sac-rw" | "cache-open-loop") {
        Mode::ReadWrite
    } else {
        Mode::WriteOnly
    };
    let mut based = opts.clone();
    if opts.paper_setup && !name.starts_with("smart") {
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
        "smart-response" | "smart-gc" | "smart-fragmentation" | "smart-summary" => {
            plan_smart(&mut p, opts)?;
            columns = match name {
                "smart-response" => vec![RespMean, RespP50, RespP90, RespP99],
                "smart-gc" => vec![
                    GcOnDemandPerM,
                    GcBackgroundPerM,
                    AmplifiedWritePct,
                    GcCostMedian,
                    GcCostOnePct,
                    GcCostUnder10Pct,
                    GcCostUnder100Pct,
                ],
                "smart-fragmentation" => vec![FragmentedReadPct, FragmentRatio, FragmentAtMost3Pct],
                _ => vec![
                    RespMean,
                    RespP99,
                    InPlacePct,
                    MapMib,
                    SpaceGainPct,
                    GcOnDemandPerM,
                    FragmentedReadPct,
                ],
            };
        }
        "cache-open-loop" => {
            for t in traces_or(opts, PORE_TRACES) {
                for s in ["smr-only", "cmr-only", "lru", "lru-band", "pore-bl", "sac"] {
                    p.add(&t, s, s, |c| c.replay = crate::Replay::Open)?;
                }
            }
            columns = vec![RespMean, RespP50, RespP90, RespP99, TotalTime, HitRatio, Wa, Rmws];
        }
        _ => unreachable!("checked above"),
    }
    let title = if name.starts_with("smart") {
        format!("{title} [open loop, no SSD cache]")
    } else {
        format!("{title} [mode {}]", p.mode.name())
    };
    let setup = if name.starts_with("smart") {
        let line =
            |p: &str| crate::setup::drive_line(&shingled_device::profile(p).expect("a built-in profile"));
        format!(
            "set-up SMaRT §5.1-5.4: hdd {} | smart {} | skylight {} | LBAs x Table 1 factor, folded into the SMaRT drive's host capacity at U | open loop, time scale {}, a request's blocks as one command",
            line("cheetah-15k5"),
            {
                // The utilisation is per row group, not the profile's.
                let smart = shingled_device::profile("smart-cheetah").expect("a built-in profile");
                let u = smart.smart().map_or(0.0, |c| c.utilisation);
                line("smart-cheetah").replace(&format!("utilisation {:.0}%, ", u * 100.0), "")
            },
            line("skylight-cheetah"),
            opts.base.time_scale
        )
    } else {
        crate::setup::describe(&opts.base)
    };
    Ok(Experiment { name: name.to_string(), title, cells: p.cells, columns, setup })
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
