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
    /// WA: band bytes written / bytes cleaned out of the PB (PORE §V-C).
    Wa,
    /// Device-level write amplification: media bytes written / bytes the application wrote.
    DevWa,
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
            Column::DevWa => "dev WA",
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
    /// A curve form ([`Definition::curve_of`]): how its cells are sampled (the grid's policies
    /// and sizes are the cells'; only the sampling settings, validation, jobs and window of
    /// these options apply). `None`: full simulations.
    #[serde(default)]
    pub curve: Option<crate::curve::CurveOptions>,
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
    /// A curve form's curves, one per trace (in the order of the cells' traces): the rate, the
    /// sample, LRU's exact hit ratios, the validated points and their errors. The runs hold
    /// each point's estimate.
    #[serde(default)]
    pub curves: Vec<crate::curve::CurveReport>,
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
}

/// The set-up an experiment's runs are planned in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Setup {
    /// A paper's set-up ([`crate::setup::setup`]: `pore` or `sac`), applied to the base
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
        crate::setup::setup(setup)?.apply(&mut based.base);
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
    if exp.curve.is_some() {
        let progress = |p: crate::curve::CurveProgress| {
            progress(crate::Progress {
                requests: p.requests,
                requests_total: p.requests_total,
                runs_done: p.runs_done,
                runs: p.runs,
            })
        };
        return run_curve_experiment(exp, jobs, &progress, &std::sync::atomic::AtomicBool::new(false));
    }
    let configs: Vec<SimConfig> = exp.cells.iter().map(|c| c.config.clone()).collect();
    let (runs, traces) = crate::run_all_with(&configs, jobs, progress)?;
    Ok(ExperimentReport::new(exp, runs, traces))
}

/// Runs a curve form ([`Experiment::curve`]; full simulations without one): per trace, every
/// cell from the same samples ([`crate::curve::curve_configs`]), `jobs` simulations at a time.
/// Each run holds its point's estimates over the whole replay and after warm-up (as a full
/// run's report does), counts scaled back to the full trace (no latency distribution: a
/// sample's is not the trace's), or at rate 1 the full run's counters; [`ExperimentReport::curves`] holds the curves.
pub fn run_curve_experiment(
    exp: Experiment,
    jobs: usize,
    progress: &(dyn Fn(crate::curve::CurveProgress) + Sync),
    stop: &std::sync::atomic::AtomicBool,
) -> Result<ExperimentReport, SimError> {
    let Some(mut opts) = exp.curve.clone() else {
        let configs: Vec<SimConfig> = exp.cells.iter().map(|c| c.config.clone()).collect();
        let (runs, traces) = crate::run_all(&configs, jobs, &|_| {})?;
        return Ok(ExperimentReport::new(exp, runs, traces));
    };
    opts.jobs = jobs.max(1);
    let mut traces: Vec<&str> = Vec::new();
    for c in &exp.cells {
        if !traces.contains(&c.trace.as_str()) {
            traces.push(&c.trace);
        }
    }
    let mut runs: Vec<Option<RunReport>> = vec![None; exp.cells.len()];
    let mut stats = Vec::new();
    let mut curves = Vec::new();
    for t in traces {
        let at: Vec<usize> = (0..exp.cells.len()).filter(|&i| exp.cells[i].trace == t).collect();
        // Each point's series: its label without the cache size (`lru 1.5%` is on `lru`).
        let configs: Vec<(String, SimConfig)> = at
            .iter()
            .map(|&i| {
                let c = &exp.cells[i];
                let size = c.config.cache.as_ref().map(|k| crate::curve::size_label(&k.size));
                let name = match (c.label.rsplit_once(' '), size) {
                    (Some((name, last)), Some(size)) if last == size => name.to_string(),
                    _ => c.label.clone(),
                };
                (name, c.config.clone())
            })
            .collect();
        let (curve, estimates) = crate::curve::curve_configs(&configs, &opts, progress, stop)?;
        for ((&i, point), counters) in at.iter().zip(&curve.points).zip(estimates) {
            let cfg = &exp.cells[i].config;
            runs[i] = Some(RunReport {
                label: exp.cells[i].label.clone(),
                mode: cfg.mode.name().to_string(),
                policy: cfg.cache.as_ref().map(|c| c.policy.name().to_string()),
                drive: cfg.drive.short_name().to_string(),
                sizing: crate::sizing(cfg, &curve.stats)?,
                total: crate::metrics::Metrics::new(counters.total.unwrap_or_default(), &Default::default()),
                after_warmup: counters
                    .after_warmup
                    .map(|c| crate::metrics::Metrics::new(c, &Default::default())),
                warmup_requests: None,
                dirty_left: 0,
                skipped_lines: 0,
                wall_time_s: point.wall_s,
                block_requests_per_s: 0.0,
                latency_cdf: Vec::new(),
                config: cfg.clone(),
            });
        }
        stats.push(curve.stats.clone());
        curves.push(curve);
    }
    let runs = runs.into_iter().map(|r| r.expect("every cell belongs to a trace")).collect();
    let mut report = ExperimentReport::new(exp, runs, stats);
    report.curves = curves;
    Ok(report)
}

impl ExperimentReport {
    /// The report of `experiment`'s `runs`, with the paper's figures beside ours.
    pub fn new(experiment: Experiment, runs: Vec<RunReport>, traces: Vec<TraceStats>) -> ExperimentReport {
        let mut report = ExperimentReport { experiment, runs, traces, paper: Vec::new(), curves: Vec::new() };
        report.paper = crate::paper::experiment_claims(&report);
        report
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn opts(paper_setup: bool) -> ExperimentOptions {
        ExperimentOptions { base: SimConfig::default(), traces: Vec::new(), mode: None, paper_setup }
    }

    /// Whether the cells' `get` changes when `set` changes the options (the user's drive kept).
    fn follows(
        def: &Definition,
        set: impl Fn(&mut ExperimentOptions, bool),
        get: impl Fn(&SimConfig) -> String,
    ) -> bool {
        let cells = |v| {
            let mut o = opts(false);
            set(&mut o, v);
            plan(def.name, &o).unwrap().cells.iter().map(|c| get(&c.config)).collect::<Vec<_>>()
        };
        cells(false) != cells(true)
    }

    #[test]
    fn every_experiment_plans_as_registered() {
        assert_eq!(EXPERIMENTS.len(), REGISTRY.len());
        for (i, def) in REGISTRY.iter().enumerate() {
            assert!(REGISTRY[..i].iter().all(|d| d.name != def.name), "{} twice", def.name);
            assert_eq!(EXPERIMENTS[i], (def.name, def.title));
            assert_eq!(definition(def.name).map(|d| d.name), Some(def.name));
            for paper_setup in [true, false] {
                let e = plan(def.name, &opts(paper_setup)).unwrap_or_else(|e| panic!("{}: {e}", def.name));
                assert!(!e.cells.is_empty() && e.columns == def.columns, "{}", def.name);
                assert!(e.title.starts_with(def.title), "{}", def.name);
                let mode = e.cells.iter().find(|c| c.config.cache.is_some()).map(|c| c.config.mode);
                assert!(mode.is_none_or(|m| m == def.mode), "{}: runs in its mode", def.name);
            }
        }
        // A curve form draws a full-run experiment's sweep: same set-up, mode and columns.
        for def in REGISTRY.iter().filter(|d| d.curve_of.is_some()) {
            let of = definition(def.curve_of.unwrap()).expect("curve_of names an experiment");
            assert!(of.curve_of.is_none(), "{}", def.name);
            assert_eq!((of.setup, of.mode, of.columns), (def.setup, def.mode, def.columns), "{}", def.name);
            let e = plan(def.name, &opts(true)).unwrap();
            assert!(e.curve.is_some(), "{}", def.name);
            // Its grid holds every cell of the full-run form, with the same label and configuration.
            let full = plan(of.name, &opts(true)).unwrap();
            for c in &full.cells {
                let twin = e.cells.iter().find(|d| d.trace == c.trace && d.label == c.label);
                let twin = twin.unwrap_or_else(|| panic!("{}: no cell {} {}", def.name, c.trace, c.label));
                assert_eq!(format!("{:?}", twin.config), format!("{:?}", c.config), "{}", def.name);
            }
        }
        assert!(definition("nope").is_none());
        let e = plan("nope", &opts(true)).unwrap_err().to_string();
        assert!(REGISTRY.iter().all(|d| e.contains(d.name)), "{e}");
    }

    /// What an entry says it sets itself (so the CLI refuses the flags) is what its plan does
    /// with the user's value: ignores it, and uses it when not listed.
    #[test]
    fn fixed_parts_are_the_ones_the_plan_ignores() {
        use crate::{IoUnit, Replay};
        let debug = |v: &dyn std::fmt::Debug| format!("{v:?}");
        for def in REGISTRY {
            let name = def.name;
            let size = |o: &mut ExperimentOptions, v: bool| {
                o.base.cache.get_or_insert_with(Default::default).size =
                    SizeSpec::Fraction(if v { 0.07 } else { 0.03 })
            };
            let parts: [(Fixed, bool); 6] = [
                (Fixed::CacheSize, follows(def, size, |c| debug(&c.cache.as_ref().map(|c| c.size)))),
                (
                    Fixed::Mode,
                    follows(
                        def,
                        |o, v| o.mode = Some(if v { Mode::ReadWrite } else { Mode::WriteOnly }),
                        |c| debug(&c.mode),
                    ),
                ),
                (
                    Fixed::Replay,
                    follows(
                        def,
                        |o, v| o.base.replay = if v { Replay::Open } else { Replay::Closed },
                        |c| debug(&c.replay),
                    ),
                ),
                (
                    Fixed::IoUnit,
                    follows(
                        def,
                        |o, v| o.base.io_unit = if v { IoUnit::Request } else { IoUnit::Block },
                        |c| debug(&c.io_unit),
                    ),
                ),
                (
                    Fixed::Drive,
                    follows(
                        def,
                        |o, v| {
                            o.base.drive =
                                shingled_device::profile(if v { "pore-emulator" } else { "sac-emulator" })
                                    .unwrap()
                        },
                        |c| debug(&c.drive),
                    ),
                ),
                (
                    Fixed::TraceScaling,
                    follows(
                        def,
                        |o, v| o.base.trace.lba_scale = v.then_some(3),
                        |c| debug(&(c.trace.lba_scale, c.trace.fold)),
                    ),
                ),
            ];
            for (part, follows) in parts {
                assert_eq!(def.fixes(part), !follows, "{name}: {part:?}");
            }
            let cacheless = plan(name, &opts(false)).unwrap().cells.iter().all(|c| c.config.cache.is_none());
            assert_eq!(def.fixes(Fixed::NoCache), cacheless, "{name}: no cache");
        }
    }
}
