//! The papers' experiments as plans: each one's definition ([`REGISTRY`]) and the grid of
//! simulations it runs ([`plan`]), with the rows and columns the paper prints. Running a plan,
//! and putting the paper's figures beside ours, is `experiments`'.
//!
//! Each experiment runs on a list of traces (by default synthetic profiles of the MSR volumes
//! the paper used) and prints, per trace, one row per scheme or parameter value with the
//! paper's metrics. Configurations start from a base [`SimConfig`] (drive, SSD, sizes), so a
//! user's configuration file and flags apply to every run.

use crate::column::Column;
use crate::config::scheme_config;
use crate::run::RunReport;
use crate::{Mode, SimConfig, SimError};
use serde::{Deserialize, Serialize};
use shingled_core::SizeSpec;
use shingled_trace::TraceStats;

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
    /// A curve form ([`Definition::curve_of`]): how its cells are sampled (the grid's policies
    /// and sizes are the cells'; only the sampling settings, validation, jobs and window of
    /// these options apply). `None`: full simulations.
    #[serde(default)]
    pub curve: Option<crate::curve::CurveOptions>,
    /// Whether the report names, per trace, the cached scheme with the fewest RMWs, the lowest
    /// WA and the least time, and its margin over the runner-up ([`Definition::winners`]).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub winners: bool,
}

impl Experiment {
    /// The traces (groups of rows) its cells name, in the order they first appear.
    pub fn traces(&self) -> Vec<&str> {
        let mut out: Vec<&str> = Vec::new();
        for c in &self.cells {
            if !out.contains(&c.trace.as_str()) {
                out.push(&c.trace);
            }
        }
        out
    }
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
    pub paper: Vec<crate::claim::Claim>,
    /// A curve form's curves, one per trace (in the order of the cells' traces): the rate, the
    /// sample, LRU's exact hit ratios, the validated points and their errors. The runs hold
    /// each point's estimate.
    #[serde(default)]
    pub curves: Vec<crate::curve::CurveReport>,
    /// Per trace and metric, the cached scheme that wins and by how much (experiments whose
    /// definition asks for it, [`Experiment::winners`]; empty otherwise).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub winners: Vec<Winner>,
}

/// The cached scheme with the lowest value of one metric among one trace's runs of an
/// experiment, and the runner-up.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Winner {
    /// The trace (group of rows).
    pub trace: String,
    /// `rmws`, `wa` (write amplification) or `time` (total I/O time, s).
    pub metric: String,
    /// The winning row's label.
    pub scheme: String,
    /// Its value.
    pub value: f64,
    /// The next-best row's label (`None` with one cached run).
    pub runner_up: Option<String>,
    /// Its value.
    pub runner_up_value: Option<f64>,
    /// Runner-up's value / the winner's (at least 1; `None` without a runner-up or when the
    /// winner's value is 0).
    pub margin: Option<f64>,
}

/// A metric [`winners`] ranks: its value for a run (lower is better).
pub type WinnerMetric = fn(&RunReport) -> Option<f64>;

/// The metrics [`winners`] ranks, by name.
pub const WINNER_METRICS: [(&str, WinnerMetric); 3] = [
    ("rmws", |r| Some(r.total.counters.drive.rmws as f64)),
    ("wa", |r| r.total.write_amplification),
    ("time", |r| Some(r.total.total_time_s)),
];

/// Per trace of `exp` (in the order the cells name them) and per [`WINNER_METRICS`] metric, the
/// cached run with the lowest value and the runner-up; ties go to the earlier row. Runs without
/// a cache (SMR-only, CMR-only) are not ranked.
pub fn winners(exp: &Experiment, runs: &[RunReport]) -> Vec<Winner> {
    let traces = exp.traces();
    let mut out = Vec::new();
    for t in traces {
        let group: Vec<&RunReport> = exp
            .cells
            .iter()
            .zip(runs)
            .filter(|(c, r)| c.trace == t && r.config.cache.is_some())
            .map(|(_, r)| r)
            .collect();
        for (metric, value) in WINNER_METRICS {
            let mut ranked: Vec<(usize, f64)> =
                group.iter().enumerate().filter_map(|(i, r)| value(r).map(|v| (i, v))).collect();
            // Stable: equal values keep row order.
            ranked.sort_by(|a, b| a.1.total_cmp(&b.1));
            let Some(&(wi, wv)) = ranked.first() else { continue };
            let second = ranked.get(1).copied();
            out.push(Winner {
                trace: t.to_string(),
                metric: metric.to_string(),
                scheme: group[wi].label.clone(),
                value: wv,
                runner_up: second.map(|(i, _)| group[i].label.clone()),
                runner_up_value: second.map(|(_, v)| v),
                margin: second.and_then(|(_, v)| (wv > 0.0).then(|| v / wv)),
            });
        }
    }
    out
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

/// One experiment as registered: everything the planner, the CLI and Python need to know about
/// it. [`REGISTRY`] holds them all.
#[derive(Clone, Copy, Debug)]
pub struct Definition {
    /// Command name, e.g. `pore-overall`.
    pub name: &'static str,
    /// What the paper shows: `<paper> <figure or table>: <what the runs are>`.
    pub title: &'static str,
    /// The set-up its runs use.
    pub setup: Setup,
    /// The cache mode of its runs unless the user gives one (`--mode`): the paper's.
    pub mode: Mode,
    /// The columns its table prints.
    pub columns: &'static [Column],
    /// What it sets in every run itself, beyond the trace and the policy (which every
    /// experiment sets): a user's value for these would be ignored, so the CLI refuses it.
    pub fixed: &'static [Fixed],
    /// Adds the cells: traces × schemes × parameter values.
    grid: fn(&mut Planner) -> Result<(), SimError>,
    /// A curve form: the name of the full-run experiment whose sweep this one draws as curves
    /// (its cells are computed by sampled mini-simulations, [`crate::curve::curve_configs`],
    /// with LRU's exact hit ratio beside; the paper's figures are checked as for that
    /// experiment). `None`: every cell is a full simulation.
    pub curve_of: Option<&'static str>,
    /// Whether its report adds, per trace, which cached scheme wins on RMWs, WA and time and by
    /// how much ([`Experiment::winners`]).
    pub winners: bool,
}

/// The set-up an experiment's runs are planned in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Setup {
    /// A paper's set-up ([`crate::setup`]: `pore` or `sac`), applied to the base
    /// configuration unless the user chose the drive ([`ExperimentOptions::paper_setup`]).
    Paper(&'static str),
    /// SMaRT's evaluation grid (§5.1–5.4): each run's drive, replay, I/O unit and trace
    /// rescaling are the grid's ([`SMART_SCHEMES`]), without an SSD cache.
    SmartGrid,
}

/// A part of every run's configuration that an experiment sets itself (see
/// [`Definition::fixed`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fixed {
    /// The cache size: swept, or there is no cache.
    CacheSize,
    /// The cache mode.
    Mode,
    /// Closed or open loop.
    Replay,
    /// How requests reach the drive.
    IoUnit,
    /// The drive: set-up, profile or file, persistent buffer, bands, write cache, capacity.
    Drive,
    /// The trace's LBA scaling and folding.
    TraceScaling,
    /// No SSD cache: neither an SSD nor a cache warm-up.
    NoCache,
}

impl Definition {
    /// Whether the experiment sets `part` of every run itself.
    pub fn fixes(&self, part: Fixed) -> bool {
        self.fixed.contains(&part)
    }
}

use Column::*;

/// What SMaRT's grid sets in every run.
const SMART_FIXED: &[Fixed] = &[
    Fixed::CacheSize,
    Fixed::Mode,
    Fixed::Replay,
    Fixed::IoUnit,
    Fixed::Drive,
    Fixed::TraceScaling,
    Fixed::NoCache,
];

/// Every experiment, in the order `shingled experiment list` prints them. Adding one = one entry
/// here (and, if the paper states figures its runs can check, their rules in [`crate::paper`]).
pub const REGISTRY: &[Definition] = &[
    Definition {
        name: "pore-overall",
        title: "PORE Figs. 11-13: SMR-only, CMR-only, LRU, LRU-band, PORE-BL (read-write; --mode \
                write-only for Fig. 13)",
        setup: Setup::Paper("pore"),
        mode: Mode::ReadWrite,
        columns: &[
            TotalTime,
            DriveReadTime,
            DriveWriteTime,
            VsSmrOnly,
            VsCmrOnly,
            VsLru,
            ReadHit,
            WriteHit,
            Wa,
            DevWa,
            Rmws,
        ],
        fixed: &[],
        grid: |p| {
            for t in p.traces(PORE_TRACES) {
                for s in ["smr-only", "cmr-only", "lru", "lru-band", "pore-bl"] {
                    p.add(&t, s, s, |_| {})?;
                }
            }
            Ok(())
        },
        curve_of: None,
        winners: false,
    },
    Definition {
        name: "pore-schemes",
        title: "PORE Fig. 14: LRU vs PORE-CF, PORE-PF, PORE-BL (write-only)",
        setup: Setup::Paper("pore"),
        mode: Mode::WriteOnly,
        columns: &[TotalTime, VsLru, HitRatio, Wa, DevWa, Rmws],
        fixed: &[],
        grid: |p| {
            for t in p.traces(PORE_TRACES) {
                for s in ["lru", "pore-cf", "pore-pf", "pore-bl"] {
                    p.add(&t, s, s, |_| {})?;
                }
            }
            Ok(())
        },
        curve_of: None,
        winners: false,
    },
    Definition {
        name: "pore-zone-size",
        title: "PORE Fig. 15a-c: zone size 2-50 MB for CF, PF, BL on wdev (write-only)",
        setup: Setup::Paper("pore"),
        mode: Mode::WriteOnly,
        columns: &[TotalTime, HitRatio, Wa, DevWa, Rmws],
        fixed: &[],
        grid: |p| {
            for t in p.traces(&["synth:wdev"]) {
                for scheme in ["cf", "pf", "bl"] {
                    for mb in [2, 10, 20, 30, 50] {
                        let spec = format!("pore:scheme={scheme},zone_size={mb}MiB");
                        p.add(&t, &format!("{scheme} zone {mb} MiB"), &spec, |_| {})?;
                    }
                }
            }
            Ok(())
        },
        curve_of: None,
        winners: false,
    },
    Definition {
        name: "pore-period",
        title: "PORE Fig. 15d-f: period 0.1x-10x the PB size for CF, PF, BL on wdev (write-only)",
        setup: Setup::Paper("pore"),
        mode: Mode::WriteOnly,
        columns: &[TotalTime, HitRatio, Wa, DevWa, Rmws],
        fixed: &[],
        grid: |p| {
            for t in p.traces(&["synth:wdev"]) {
                for scheme in ["cf", "pf", "bl"] {
                    for (x, pct) in
                        [("0.1", 10), ("0.5", 50), ("1", 100), ("2", 200), ("5", 500), ("10", 1000)]
                    {
                        let spec = format!("pore:scheme={scheme},period={pct}%");
                        p.add(&t, &format!("{scheme} period {x}x PB"), &spec, |_| {})?;
                    }
                }
            }
            Ok(())
        },
        curve_of: None,
        winners: false,
    },
    Definition {
        name: "pore-ssd-size",
        title: "PORE Fig. 16: SSD size 1-5% for LRU, LRU-band, PORE-BL (write-only)",
        setup: Setup::Paper("pore"),
        mode: Mode::WriteOnly,
        columns: &[TotalTime, HitRatio, Wa, DevWa, Rmws],
        fixed: &[Fixed::CacheSize],
        grid: |p| pore_ssd_size(p, &PAPER_SIZES),
        curve_of: None,
        winners: false,
    },
    Definition {
        name: "pore-ssd-size-curve",
        title: "PORE Fig. 16's grid as curves (no paper values plotted: its text gives ratios at 1% and \
                5% only): SSD size 0.5-5% for LRU, LRU-band, PORE-BL by sampled mini-simulations, LRU's \
                exact hit ratio beside (write-only)",
        setup: Setup::Paper("pore"),
        mode: Mode::WriteOnly,
        columns: &[TotalTime, HitRatio, Wa, DevWa, Rmws],
        fixed: &[Fixed::CacheSize, Fixed::Replay],
        grid: |p| pore_ssd_size(p, &CURVE_SIZES),
        curve_of: Some("pore-ssd-size"),
        winners: false,
    },
    Definition {
        name: "sac-write-only",
        title: "SAC Figs. 13-14: LRU, MOST, SAC over cache sizes (write-only)",
        setup: Setup::Paper("sac"),
        mode: Mode::WriteOnly,
        columns: &[TotalTime, DriveWriteTime, MissRatio, Wa, DevWa, Rmws],
        fixed: &[Fixed::CacheSize],
        grid: |p| sac_write_only(p, &PAPER_SIZES),
        curve_of: None,
        winners: false,
    },
    Definition {
        name: "sac-write-only-curve",
        title: "SAC Figs. 13-14's grid as curves (no paper values plotted: the paper gives none per \
                size): LRU, MOST, SAC over cache sizes 0.5-5% by sampled mini-simulations, LRU's exact hit \
                ratio beside (write-only)",
        setup: Setup::Paper("sac"),
        mode: Mode::WriteOnly,
        columns: &[TotalTime, DriveWriteTime, MissRatio, Wa, DevWa, Rmws],
        fixed: &[Fixed::CacheSize, Fixed::Replay],
        grid: |p| sac_write_only(p, &CURVE_SIZES),
        curve_of: Some("sac-write-only"),
        winners: false,
    },
    Definition {
        name: "sac-rw",
        title: "SAC Table 5: LRU, MOST, MOST+CDC, SAC in read/write-mixed mode",
        setup: Setup::Paper("sac"),
        mode: Mode::ReadWrite,
        columns: &[
            HitRatio,
            ReadHit,
            WriteHit,
            CleanEvictions,
            DirtyEvictions,
            TotalTime,
            SsdTime,
            DriveReadTime,
            DriveWriteTime,
        ],
        fixed: &[Fixed::CacheSize],
        grid: |p| {
            for t in p.traces(SAC_TRACES) {
                for (s, spec) in
                    [("lru", "lru"), ("most", SAC_MOST), ("most-cdc", "most-cdc"), ("sac", "sac")]
                {
                    p.add(&t, s, spec, |c| cache_size(c, 0.05))?;
                }
            }
            Ok(())
        },
        curve_of: None,
        winners: false,
    },
    Definition {
        name: "sac-tbs",
        title: "SAC Fig. 15: target band selection PD, AD, ARS (write-only)",
        setup: Setup::Paper("sac"),
        mode: Mode::WriteOnly,
        columns: &[TotalTime, MissRatio, Wa, DevWa, Rmws],
        fixed: &[],
        grid: |p| {
            for t in p.traces(SAC_TRACES) {
                for (label, spec) in [("PD", "sac:tbs=pd"), ("AD", "sac:tbs=ad"), ("ARS", "sac:tbs=ars")] {
                    p.add(&t, label, spec, |_| {})?;
                }
            }
            Ok(())
        },
        curve_of: None,
        winners: false,
    },
    Definition {
        name: "sac-cycle",
        title: "SAC Fig. 16: cycle length 0.5x-10x the PB size (write-only)",
        setup: Setup::Paper("sac"),
        mode: Mode::WriteOnly,
        columns: &[TotalTime, MissRatio, Wa, DevWa, Rmws],
        fixed: &[],
        grid: |p| {
            for t in p.traces(SAC_TRACES) {
                for x in ["0.5", "1", "2", "4", "6", "8", "10"] {
                    p.add(&t, &format!("{x}x PB"), &format!("sac:cycle_length={x}x"), |_| {})?;
                }
            }
            Ok(())
        },
        curve_of: None,
        winners: false,
    },
    Definition {
        name: "sac-band-size",
        title: "SAC Fig. 17: assumed band size 2-600 MB (write-only)",
        setup: Setup::Paper("sac"),
        mode: Mode::WriteOnly,
        columns: &[TotalTime, MissRatio, Wa, DevWa, Rmws],
        fixed: &[],
        grid: |p| {
            for t in p.traces(SAC_TRACES) {
                for mb in [2, 10, 20, 50, 100, 200, 600] {
                    p.add(&t, &format!("{mb} MB"), &format!("sac:band_size={mb}MB"), |_| {})?;
                }
            }
            Ok(())
        },
        curve_of: None,
        winners: false,
    },
    Definition {
        name: "smart-response",
        title: "SMaRT Figs. 3-5: response time of HDD, SMaRT, Skylight at 30/60/90% utilisation (open \
                loop; --cdf for the CDFs)",
        setup: Setup::SmartGrid,
        mode: Mode::ReadWrite,
        columns: &[RespMean, RespP50, RespP90, RespP99],
        fixed: SMART_FIXED,
        grid: plan_smart,
        curve_of: None,
        winners: false,
    },
    Definition {
        name: "smart-gc",
        title: "SMaRT Table 2, Figs. 10-13: GC per 1M writes, amplified writes, GC overhead",
        setup: Setup::SmartGrid,
        mode: Mode::ReadWrite,
        columns: &[
            GcOnDemandPerM,
            GcBackgroundPerM,
            AmplifiedWritePct,
            GcCostMedian,
            GcCostOnePct,
            GcCostUnder10Pct,
            GcCostUnder100Pct,
        ],
        fixed: SMART_FIXED,
        grid: plan_smart,
        curve_of: None,
        winners: false,
    },
    Definition {
        name: "smart-fragmentation",
        title: "SMaRT Figs. 6-9: fragmented reads and fragmentation ratio",
        setup: Setup::SmartGrid,
        mode: Mode::ReadWrite,
        columns: &[FragmentedReadPct, FragmentRatio, FragmentAtMost3Pct],
        fixed: SMART_FIXED,
        grid: plan_smart,
        curve_of: None,
        winners: false,
    },
    Definition {
        name: "smart-summary",
        title: "SMaRT Table 3: response, metadata size, in-place updates",
        setup: Setup::SmartGrid,
        mode: Mode::ReadWrite,
        columns: &[RespMean, RespP99, InPlacePct, MapMib, SpaceGainPct, GcOnDemandPerM, FragmentedReadPct],
        fixed: SMART_FIXED,
        grid: plan_smart,
        curve_of: None,
        winners: false,
    },
    Definition {
        name: "pore-regimes",
        title: "When does each scheme win? LRU, LRU-band, MOST, PORE-CF/PF/BL, PORE on the drive's \
                bands (our extension) and SAC over generated families that vary one property at a \
                time: trickle share, rewrite rate, hot set, request size, set-up (synth:hm,seed=1 \
                in SAC's), zones against bands (synth:bursts,seed=1 on fixed 18 MiB bands) \
                (write-only; no paper figure)",
        setup: Setup::Paper("pore"),
        mode: Mode::WriteOnly,
        columns: &[TotalTime, VsLru, HitRatio, Wa, DevWa, Rmws],
        fixed: &[],
        grid: plan_regimes,
        curve_of: None,
        winners: true,
    },
    Definition {
        name: "cache-open-loop",
        title: "PORE's and SAC's caches above the DM-SMR drive in open loop: response times with \
                queueing and idle cleaning (no paper figure; read-write)",
        setup: Setup::Paper("pore"),
        mode: Mode::ReadWrite,
        columns: &[RespMean, RespP50, RespP90, RespP99, TotalTime, HitRatio, Wa, DevWa, Rmws],
        fixed: &[Fixed::Replay],
        grid: |p| {
            for t in p.traces(PORE_TRACES) {
                for s in ["smr-only", "cmr-only", "lru", "lru-band", "pore-bl", "sac"] {
                    p.add(&t, s, s, |c| c.replay = crate::Replay::Open)?;
                }
            }
            Ok(())
        },
        curve_of: None,
        winners: false,
    },
];

/// `(name, title)` of every experiment in [`REGISTRY`], in its order (Python's
/// `shingled.experiments()`).
pub static EXPERIMENTS: [(&str, &str); REGISTRY.len()] = names_and_titles();

const fn names_and_titles() -> [(&'static str, &'static str); REGISTRY.len()] {
    let mut out = [("", ""); REGISTRY.len()];
    let mut i = 0;
    while i < REGISTRY.len() {
        out[i] = (REGISTRY[i].name, REGISTRY[i].title);
        i += 1;
    }
    out
}

/// The experiment called `name`.
pub fn definition(name: &str) -> Option<&'static Definition> {
    REGISTRY.iter().find(|d| d.name == name)
}

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
fn plan_smart(p: &mut Planner) -> Result<(), SimError> {
    let default: Vec<&str> = SMART_TRACES.iter().map(|t| t.1).collect();
    for t in &p.traces(&default) {
        for u in SMART_UTILISATIONS {
            let mut smart = shingled_device::profile("smart-cheetah").expect("a built-in profile");
            smart.smart_mut().expect("a SMaRT drive").utilisation = u;
            let fold = smart.capacity().ok_or_else(|| SimError::Config {
                field: "drive",
                reason: "the SMaRT profile's host capacity cannot be computed".into(),
            })?;
            let group = format!("{t} U={:.0}%", u * 100.0);
            for (label, profile) in SMART_SCHEMES {
                let mut cfg = p.opts.base.clone();
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

/// The set-up line of SMaRT's grid: its three drives, and how the traces reach them.
fn smart_setup(opts: &ExperimentOptions) -> String {
    let line = |p: &str| crate::setup::drive_line(&shingled_device::profile(p).expect("a built-in profile"));
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
}

/// The schemes every cell of `pore-regimes` compares: (label, policy spec).
pub const REGIME_SCHEMES: [(&str, &str); 8] = [
    ("lru", "lru"),
    ("lru-band", "lru-band"),
    ("most", "most"),
    ("pore-cf", "pore-cf"),
    ("pore-pf", "pore-pf"),
    ("pore-bl", "pore-bl"),
    ("pore-bl on bands", "pore:zones=bands"),
    ("sac", "sac"),
];

/// `pore-regimes`' trace families, each varying one property of `synth:bursts` (cold write
/// bursts plus a scattered trickle, docs/synthetic-traces.md) from its defaults (8 MiB bursts in
/// an 8 GiB range, 10% trickle, no rewrites, one-block requests): (family, trace spec).
pub const REGIME_TRACES: &[(&str, &str)] = &[
    ("trickle", "synth:bursts,trickle=0"),
    ("trickle", "synth:bursts,trickle=0.05"),
    ("trickle", "synth:bursts,trickle=0.1"),
    ("trickle", "synth:bursts,trickle=0.2"),
    ("trickle", "synth:bursts,trickle=0.3"),
    ("trickle", "synth:bursts,trickle=0.4"),
    ("rewrite", "synth:bursts,rewrite=0.25"),
    ("rewrite", "synth:bursts,rewrite=0.5"),
    ("rewrite", "synth:bursts,rewrite=1"),
    ("hot set", "synth:bursts,rewrite=0.5,hot=4"),
    ("hot set", "synth:bursts,rewrite=0.5,hot=64"),
    ("request size", "synth:bursts,request=8"),
    ("request size", "synth:bursts,request=64"),
];

/// The zones-against-bands family of `pore-regimes`: PORE-BL's zone sizes (MiB), run on the
/// set-up's uniform 17–36 MB bands (no zone size aligns) and on fixed 18 MiB bands (18 aligns,
/// 20 straddles), with LRU-band, SAC and PORE on the bands beside them.
pub const REGIME_ZONES_MIB: [u64; 6] = [2, 10, 18, 20, 50, 100];

/// The trace of the zones family on fixed 18 MiB bands: `synth:bursts` under another seed (the
/// same workload, a group of its own).
pub const REGIME_FIXED_BANDS_TRACE: &str = "synth:bursts,seed=1";

/// The set-up family of `pore-regimes`: an MSR-like volume in PORE's set-up (the experiment's)
/// and, under another seed (a group of its own), in SAC's (its emulator's append-only PB and
/// 20.48 MB bands on the ST8000AS0002), where SAC's cost model was fitted.
pub const REGIME_SETUP_TRACES: [(&str, &str); 2] = [("synth:hm", "pore"), ("synth:hm,seed=1", "sac")];

fn plan_regimes(p: &mut Planner) -> Result<(), SimError> {
    if !p.opts.traces.is_empty() {
        // The user's traces: every scheme on each.
        for t in p.traces(&[]) {
            for (label, spec) in REGIME_SCHEMES {
                p.add(&t, label, spec, |_| {})?;
            }
        }
        return Ok(());
    }
    for (_, t) in REGIME_TRACES {
        for (label, spec) in REGIME_SCHEMES {
            p.add(t, label, spec, |_| {})?;
        }
    }
    for (t, setup) in REGIME_SETUP_TRACES {
        let set_up = crate::config::setup(setup)?;
        for (label, spec) in REGIME_SCHEMES {
            p.add(t, label, spec, |c| set_up.apply(c))?;
        }
    }
    let fixed = |c: &mut SimConfig| {
        if let shingled_device::DriveConfig::DmSmr(d) = &mut c.drive {
            d.bands = shingled_core::BandConfig::Fixed { size: shingled_core::ByteSize::mib(18) };
        }
    };
    for (t, on_fixed) in [("synth:bursts", false), (REGIME_FIXED_BANDS_TRACE, true)] {
        let adjust = |c: &mut SimConfig| {
            if on_fixed {
                fixed(c)
            }
        };
        for (label, spec) in
            [("lru-band", "lru-band"), ("sac", "sac"), ("pore-bl on bands", "pore:zones=bands")]
        {
            p.add(t, label, spec, adjust)?;
        }
        for mb in REGIME_ZONES_MIB {
            p.add(
                t,
                &format!("pore-bl zone {mb} MiB"),
                &format!("pore:scheme=bl,zone_size={mb}MiB"),
                adjust,
            )?;
        }
    }
    Ok(())
}

/// The four traces PORE §V-C runs its time experiments on.
const PORE_TRACES: &[&str] = &["synth:wdev", "synth:mds", "synth:ts", "synth:usr"];
/// Write-heavy volumes standing in for SAC's "long" mix (pass a `shingled trace mix` output with
/// --trace to run on a long trace).
const SAC_TRACES: &[&str] = &["synth:wdev", "synth:hm", "synth:rsrch", "synth:stg"];

/// MOST as the SAC paper ran it: on SAC's assumed 20.48 MB bands (the artifact's `ZONESZ`),
/// not on the drive's true bands.
const SAC_MOST: &str = "most:band_size=20480000";

/// The cache sizes (percent of the footprint) of PORE Fig. 16 and SAC Figs. 13-14.
const PAPER_SIZES: [f64; 5] = [1.0, 2.0, 3.0, 4.0, 5.0];
/// The same range drawn as curves: twice as many points (a sampled point costs a fraction of a
/// full run), the papers' five among them.
const CURVE_SIZES: [f64; 10] = [0.5, 1.0, 1.5, 2.0, 2.5, 3.0, 3.5, 4.0, 4.5, 5.0];

/// PORE Fig. 16's grid at cache sizes `pcts`: scheme by scheme, size by size.
fn pore_ssd_size(p: &mut Planner, pcts: &[f64]) -> Result<(), SimError> {
    for t in p.traces(PORE_TRACES) {
        for s in ["lru", "lru-band", "pore-bl"] {
            for &pct in pcts {
                let size = SizeSpec::Fraction(pct / 100.0);
                p.add(&t, &format!("{s} {}", crate::curve::size_label(&size)), s, |c| {
                    cache_size(c, pct / 100.0)
                })?;
            }
        }
    }
    Ok(())
}

/// SAC Figs. 13-14's grid at cache sizes `pcts`: size by size, scheme by scheme.
fn sac_write_only(p: &mut Planner, pcts: &[f64]) -> Result<(), SimError> {
    for t in p.traces(SAC_TRACES) {
        for &pct in pcts {
            let size = SizeSpec::Fraction(pct / 100.0);
            for (s, spec) in [("lru", "lru"), ("most", SAC_MOST), ("sac", "sac")] {
                p.add(&t, &format!("{s} {}", crate::curve::size_label(&size)), spec, |c| {
                    cache_size(c, pct / 100.0)
                })?;
            }
        }
    }
    Ok(())
}

/// Sets a cell's cache size to `fraction` (of the trace's range), if it has a cache.
fn cache_size(c: &mut SimConfig, fraction: f64) {
    if let Some(cache) = &mut c.cache {
        cache.size = SizeSpec::Fraction(fraction);
    }
}

/// What an experiment's grid function fills in.
struct Planner<'a> {
    opts: &'a ExperimentOptions,
    mode: Mode,
    cells: Vec<Cell>,
}

impl Planner<'_> {
    /// The user's traces, or the experiment's `default` ones.
    fn traces(&self, default: &[&str]) -> Vec<String> {
        if self.opts.traces.is_empty() {
            default.iter().map(|s| s.to_string()).collect()
        } else {
            self.opts.traces.clone()
        }
    }

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

/// The offline schemes an experiment can add ([`add_offline`]).
pub const OFFLINE_SCHEMES: [&str; 2] = ["belady", "band-min"];

/// Adds the offline schemes (docs/bounds.md) beside an experiment's own: for every distinct
/// set-up among its cached cells (trace, mode, sizes, drive: everything but the policy), a
/// `belady` cell and, on a drive with bands, a `band-min` cell, labelled as the cell they
/// follow with the scheme's name in front (`belady 2%`). Their rows and the RMW bound their
/// runs compute are shown in each trace's table; they take no part in the paper's claims or
/// the winners. A curve form (sampled) refuses them.
pub fn add_offline(exp: &mut Experiment) -> Result<(), SimError> {
    if exp.curve.is_some() {
        return Err(SimError::Config {
            field: "offline",
            reason: format!(
                "{} samples its runs; the offline schemes need the whole trace: use the full-run experiment",
                exp.name
            ),
        });
    }
    let mut seen: Vec<SimConfig> = Vec::new();
    let mut extra = Vec::new();
    for c in &exp.cells {
        let Some(cache) = &c.config.cache else { continue };
        if cache.policy.needs_future() {
            continue;
        }
        let mut key = c.config.clone();
        key.label = None;
        key.cache.as_mut().expect("cached").policy = shingled_cache::PolicyConfig::default();
        if seen.contains(&key) {
            continue;
        }
        seen.push(key);
        let suffix = c.label.split_once(' ').map(|(_, s)| format!(" {s}")).unwrap_or_default();
        let bands = matches!(c.config.drive, shingled_device::DriveConfig::DmSmr(_));
        for name in OFFLINE_SCHEMES.into_iter().filter(|n| bands || *n == "belady") {
            let mut cfg = c.config.clone();
            cfg.cache.as_mut().expect("cached").policy =
                name.parse().map_err(|e: shingled_cache::PolicyError| SimError::Config {
                    field: "offline",
                    reason: e.to_string(),
                })?;
            let label = format!("{name}{suffix}");
            cfg.label = Some(label.clone());
            extra.push(Cell { trace: c.trace.clone(), label, config: cfg });
        }
    }
    exp.cells.extend(extra);
    Ok(())
}

/// Whether a cell runs an offline scheme.
pub(crate) fn is_offline_cell(c: &Cell) -> bool {
    c.config.cache.as_ref().is_some_and(|k| k.policy.needs_future())
}

/// Plans experiment `name` (one of [`REGISTRY`]).
pub fn plan(name: &str, opts: &ExperimentOptions) -> Result<Experiment, SimError> {
    let def = definition(name).ok_or_else(|| SimError::Config {
        field: "experiment",
        reason: format!(
            "unknown experiment {name:?}; known: {}",
            REGISTRY.iter().map(|d| d.name).collect::<Vec<_>>().join(", ")
        ),
    })?;
    let mut based = opts.clone();
    if let (true, Setup::Paper(setup)) = (opts.paper_setup, def.setup) {
        crate::config::setup(setup)?.apply(&mut based.base);
    }
    let opts = &based;
    let mut p = Planner { opts, mode: opts.mode.unwrap_or(def.mode), cells: Vec::new() };
    (def.grid)(&mut p)?;
    let (title, setup) = match def.setup {
        Setup::SmartGrid => (format!("{} [open loop, no SSD cache]", def.title), smart_setup(opts)),
        Setup::Paper(_) => {
            (format!("{} [mode {}]", def.title, p.mode.name()), crate::setup::describe(&opts.base))
        }
    };
    let curve =
        def.curve_of.map(|_| crate::curve::CurveOptions { policies: Vec::new(), ..Default::default() });
    if curve.is_some() {
        // Curves sample closed-loop replays only (open-loop queueing depends on the load).
        for c in &mut p.cells {
            c.config.replay = crate::Replay::Closed;
        }
    }
    Ok(Experiment {
        name: name.to_string(),
        title,
        cells: p.cells,
        columns: def.columns.to_vec(),
        setup,
        curve,
        winners: def.winners,
    })
}
