//! Command-line flags, kept apart from the validated configuration they produce: the top-level
//! `Cli` and `Command`, and the flags of the commands `main` runs itself. Each command module
//! defines its own flags; the types several commands share are in `common_args` and `output`
//! (which import no command module), so imports only go one way: `args` -> command modules ->
//! `common_args`/`output`.

use crate::common_args::{BandArgs, InputArgs, SimArgs};
use crate::output::OutputArgs;
use clap::{Args, Parser, Subcommand};
use std::path::PathBuf;

/// Simulate SSD caches above shingled (SMR) drives, and inspect block I/O traces.
#[derive(Parser, Debug)]
#[command(name = "shingled", version)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
    /// Progress of long commands on stderr: a bar on a terminal and a line every 10 s otherwise
    /// (auto), always a bar, always lines, or none.
    #[arg(long, global = true, value_enum, default_value_t = crate::progress::ProgressMode::Auto)]
    pub progress: crate::progress::ProgressMode,
}

/// What the metrics these commands print mean (docs/metrics.md has every one).
const METRICS_HELP: &str = shingled_sim::report::WA_FOOTER;

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Replay a trace through one configuration and report every metric.
    #[command(after_help = METRICS_HELP)]
    Sim(SimCmd),
    /// Compare cache schemes (and the no-cache baselines) on one trace: total I/O time and
    /// speed-ups against SMR-only, CMR-only and LRU. With no arguments, runs on a generated
    /// MSR-like trace (synth:prn).
    #[command(after_help = METRICS_HELP)]
    Compare(CompareCmd),
    /// Curves over cache sizes (and PB sizes) for one or more policies on one trace: hit ratio,
    /// write amplification, RMWs and I/O time from sampled mini-simulations (whole bands kept at
    /// a rate), LRU's exact hit-ratio curve, and `--validate N` full runs for the error.
    #[command(after_help = METRICS_HELP)]
    Curve(crate::curve_cmd::CurveCmd),
    /// Run one of the papers' experiments (`shingled experiment list` names them) and print the
    /// paper's rows and columns.
    #[command(after_help = METRICS_HELP)]
    Experiment(ExperimentCmd),
    /// Trace tools: statistics, conversion, mixing, formats, synthetic profiles.
    #[command(subcommand)]
    Trace(TraceCommand),
    /// List the cache policies.
    Policies,
    /// List the named drive profiles.
    Drives,
    /// Drive models: micro-benchmarks beside the papers' measurements (`shingled drive bench
    /// fig3`), profiles.
    #[command(subcommand)]
    Drive(crate::drive_cmd::DriveCommand),
    /// Print the configuration the given flags produce, as TOML (a starting point for --config).
    Config(ConfigCmd),
    /// Emulated zoned (host-managed SMR) device files, like `blkzone`: create, report, reset,
    /// open, close, finish.
    #[command(subcommand)]
    Zone(crate::zone_cmd::ZoneCommand),
    /// Detect a DM-SMR drive's persistent-buffer capacity and band sizes (SAC §5, after
    /// Skylight) on a drive model or a real device, and write them as a drive profile.
    Probe(crate::probe_cmd::ProbeCmd),
    /// Write a Markdown or HTML report (tables and PNG bar charts) of an experiment
    /// (`--experiment NAME`), a comparison (default) or a saved `--output json` (`--from FILE`).
    Report(crate::report_cmd::ReportCmd),
    /// The SMRSTORE chunk store on an emulated zoned device file: format, info, put/get files
    /// as chunks, fsck, bench.
    #[command(subcommand)]
    Store(crate::store_cmd::StoreCommand),
    /// Translation layers that make a shingled device an ordinary block device (SMaRT on a
    /// shingled medium, dm-zoned on a zoned device), in a file: format, check, stats, serve
    /// over FUSE for losetup and mkfs.
    #[command(subcommand)]
    Stl(crate::stl_cmd::StlCommand),
    /// The SSD cache as a real block device: a cache device (file, SSD, partition) in front of
    /// a backing device (DM-SMR drive, file, translation layer), driven by PORE, SAC, LRU, …:
    /// create, serve over FUSE/ublk, stats, check, flush, detach, lost; and replay a trace
    /// through the real data path on an emulated DM-SMR drive, compared with `sim`.
    #[command(subcommand)]
    Cache(crate::cache_cmd::CacheCommand),
    /// Real I/O: issue a trace's requests against a file, a block device, a block cache or a
    /// translation layer and time them by the wall clock (closed or open loop, a queue depth),
    /// beside a drive model's time for the same requests (--model-drive).
    Replay(crate::replay_cmd::ReplayArgs),
}

/// Where and how `sim`, `compare` and `experiment` print their report: the output convention
/// (`crate::output`) and `--cdf`.
#[derive(Args, Debug)]
pub struct EmitArgs {
    #[command(flatten)]
    pub report: OutputArgs,
    /// Also write each run's request-latency CDF (open loop: response time, queueing included)
    /// here: CSV `group,label,latency_ms,fraction`, or, when the name ends in .png, one chart at
    /// exactly this path (a panel per group of runs: an experiment's trace or utilisation). The
    /// file written is printed on stderr.
    #[arg(long)]
    pub cdf: Option<PathBuf>,
    /// With --interval: also write every run's metrics over time here: CSV, one row per run
    /// and window (`group,label,index,first_request,…`: docs/metrics.md), or, when the name
    /// ends in .png, one chart at exactly this path (hit ratio, RMWs, PB fill and modelled time
    /// per window, a line per run; a row of panels per group of runs: an experiment's trace).
    /// The file written is printed on stderr.
    #[arg(long, value_name = "FILE")]
    pub series: Option<PathBuf>,
}

impl EmitArgs {
    /// Checks `--out`, `--cdf` and `--series` before any run, so a mistyped output fails at
    /// once (and `--series` without an interval: `interval` is the configuration's).
    pub fn check(&self, interval: Option<shingled_sim::Interval>) -> anyhow::Result<()> {
        self.report.check()?;
        for (flag, path) in [("--cdf", &self.cdf), ("--series", &self.series)] {
            let Some(p) = path else { continue };
            if p.extension().is_some_and(|e| e.eq_ignore_ascii_case("png")) {
                crate::plot::png_output(p).map_err(|e| anyhow::anyhow!("{flag} {e}"))?;
            } else {
                crate::out::check(flag, p)?;
            }
        }
        if self.series.is_some() && interval.is_none() {
            anyhow::bail!(
                "--series writes metrics over time: give --interval N (requests, or 60s of trace time)"
            );
        }
        Ok(())
    }
}

#[derive(Args, Debug)]
pub struct SimCmd {
    #[command(flatten)]
    pub sim: SimArgs,
    #[command(flatten)]
    pub emit: EmitArgs,
}

#[derive(Args, Debug)]
pub struct CompareCmd {
    #[command(flatten)]
    pub sim: SimArgs,
    /// Comma-separated schemes: smr-only, cmr-only and policy names (see `shingled policies`).
    /// Default: the baselines and every policy.
    #[arg(long)]
    pub schemes: Option<String>,
    /// Schemes run in parallel (default: the number of cores).
    #[arg(long, short)]
    pub jobs: Option<usize>,
    #[command(flatten)]
    pub emit: EmitArgs,
}

#[derive(Args, Debug)]
pub struct ExperimentCmd {
    /// Experiment name, or `list`.
    pub name: String,
    /// Traces to run on (repeatable); default: synthetic profiles of the volumes the paper used.
    #[arg(long = "on", value_name = "TRACE")]
    pub on: Vec<String>,
    /// Simulations run in parallel (default: the number of cores).
    #[arg(long, short)]
    pub jobs: Option<usize>,
    #[command(flatten)]
    pub emit: EmitArgs,
    /// Curve forms (`NAME-curve`): how the points are sampled and checked, as for `shingled
    /// curve`. Refused by the other experiments.
    #[command(flatten)]
    pub sampling: crate::curve_cmd::SamplingArgs,
    /// Curve forms: also draw the curves as one PNG at exactly FILE: a row of panels per trace
    /// (hit ratio and, above a DM-SMR drive, WA, RMWs and I/O time), validated points marked,
    /// under a title naming the experiment, traces, mode and set-up. The file written is
    /// printed on stderr.
    #[arg(long, value_name = "FILE")]
    pub png: Option<std::path::PathBuf>,
    /// Also run the offline schemes (Belady's MIN, band-min) for each set-up of the
    /// experiment's runs, and show every scheme's distance to the offline bounds under each
    /// trace's table (docs/bounds.md). They take no part in the paper's claims or the winners.
    #[arg(long)]
    pub offline: bool,
    /// Base configuration for every run (drive, SSD, cache size, …); flags an experiment sets
    /// itself (--trace: use --on; --policy; --no-cache; a swept --cache-size) are refused.
    #[command(flatten)]
    pub sim: SimArgs,
}

#[derive(Args, Debug)]
pub struct ConfigCmd {
    #[command(flatten)]
    pub sim: SimArgs,
}

#[derive(Subcommand, Debug)]
pub enum TraceCommand {
    /// Print the PORE Table I row of a trace: requests and 4 KiB pages, write %, written and
    /// accessed LBA ranges, mean request size, duration.
    Stats(StatsCmd),
    /// Convert a trace into the compact binary format.
    Convert(ConvertCmd),
    /// Build a long/mix trace: shift each input (and each copy) into its own LBA range and
    /// interleave them randomly.
    Mix(MixCmd),
    /// List the trace formats.
    Formats,
    /// List the synthetic generator profiles.
    Profiles,
}

#[derive(Args, Debug)]
pub struct StatsCmd {
    #[command(flatten)]
    pub input: InputArgs,
    #[command(flatten)]
    pub bands: BandArgs,
    #[command(flatten)]
    pub report: OutputArgs,
    /// The former spelling of `--output json`.
    #[arg(long, hide = true, conflicts_with = "output")]
    pub json: bool,
}

#[derive(Args, Debug)]
pub struct ConvertCmd {
    #[command(flatten)]
    pub input: InputArgs,
    /// The trace to write (`--output` is the former spelling): our `bin` format, or
    /// libCacheSim's oracleGeneral when the name contains `oracleGeneral` (zstd-compressed when
    /// it ends in `.zst`) or `--to oracleGeneral` says so.
    #[arg(long = "out", short = 'o', alias = "output", value_name = "FILE")]
    pub output: PathBuf,
    /// The format to write: `bin` or `oracleGeneral` (default: from the output's name, else bin).
    #[arg(long, value_name = "FORMAT")]
    pub to: Option<String>,
}

#[derive(Args, Debug)]
pub struct MixCmd {
    /// Input traces (each may be synth:...).
    #[arg(required = true)]
    pub inputs: Vec<String>,
    /// Copies of each input, each in its own LBA range.
    #[arg(long, default_value_t = 1)]
    pub copies: u32,
    /// Seed of the interleaving.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Count and skip malformed lines.
    #[arg(long)]
    pub skip_bad_lines: bool,
    /// The binary trace to write (`--output` is the former spelling).
    #[arg(long = "out", short = 'o', alias = "output", value_name = "FILE")]
    pub output: PathBuf,
}
