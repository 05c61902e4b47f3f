//! Argument types and parsers shared by several commands (simulation flags, trace input,
//! band layouts, `--jobs`, the numeric parsers). Imports no command module: the command
//! modules and `args` (the top-level `Cli`) import it.

use anyhow::{bail, Context, Result};
use clap::Args;
use shingled_core::{BandConfig, ByteSize, SizeSpec};
use shingled_sim::{CacheConfig, SimConfig};
use std::path::PathBuf;

/// Flags shared by `sim`, `compare` and `config`. Each overrides the same field of `--config`.
#[derive(Args, Clone, Debug, Default)]
pub struct SimArgs {
    /// A TOML configuration file (see `shingled config`); flags override its fields.
    #[arg(long, short = 'c')]
    pub config: Option<PathBuf>,
    /// A paper's set-up: its drive, CMR-only drive and I/O unit (pore, sac or generic; default
    /// pore, and an experiment's own paper for `experiment`). Applied before the other drive
    /// flags.
    #[arg(long)]
    pub setup: Option<String>,
    /// The drive's volatile write cache: on or off (a DM-SMR drive's sits in front of its
    /// persistent buffer).
    #[arg(long)]
    pub write_cache: Option<String>,
    /// How a request's blocks reach the drive: request (contiguous blocks merged into one
    /// command) or block (every 4 KiB block alone, as the papers' prototypes replay).
    #[arg(long)]
    pub io_unit: Option<String>,
    /// When requests are issued: closed (each when the previous one ends: the papers' total
    /// I/O time; default) or open (each at its trace timestamp, waiting while a device is busy:
    /// response times with queueing, and idle gaps reach the drive for background cleaning).
    #[arg(long)]
    pub replay: Option<String>,
    /// Open loop: multiply the gaps between trace timestamps by this (0.5 doubles the load).
    #[arg(long)]
    pub time_scale: Option<f64>,
    /// Trace file (MSR CSV, .gz/.zst, SAC text, blkparse, DiskSim, vscsi, Alibaba, bin, oracleGeneral, csv) or
    /// synth:<profile>[,scale=X,seed=N] (see `shingled trace profiles`).
    #[arg(long, short)]
    pub trace: Option<String>,
    /// Trace format (detected when absent; see `shingled trace formats`).
    #[arg(long)]
    pub format: Option<String>,
    /// Format parameters as libCacheSim's -t: obj-id-col=N,time-col=N,obj-size-col=N,op-col=N,
    /// has-header=B,delimiter=C for csv; op=write for oracleGeneral.
    #[arg(long)]
    pub trace_params: Option<String>,
    /// Keep only this volume / disk number of the trace.
    #[arg(long)]
    pub volume: Option<u32>,
    /// Count and skip malformed trace lines instead of stopping.
    #[arg(long)]
    pub skip_bad_lines: bool,
    /// Replay at most this many trace requests.
    #[arg(long)]
    pub limit: Option<u64>,
    /// Multiply every request's offset by this (SMaRT Table 1: 5 to 12, so a trace covers a
    /// larger drive).
    #[arg(long)]
    pub lba_scale: Option<u64>,
    /// Then take offsets modulo this size (SMaRT §5.4: folded into the drive's used range),
    /// e.g. 42.6GB.
    #[arg(long)]
    pub fold: Option<String>,
    /// Cache mode: read-write, write-only, read-only or write-cache.
    #[arg(long)]
    pub mode: Option<String>,
    /// After-warm-up window: none, cache-full, a request count, or a percentage of the trace.
    #[arg(long)]
    pub warmup: Option<String>,
    /// Metrics over time: a window every N trace requests (10000 or 10000r) or every N seconds
    /// of trace time (60s); each run's report gets a row per window (hit ratio, WA, RMWs, PB
    /// fill, modelled time): after the table, in the JSON, and with --series FILE as CSV or a
    /// chart.
    #[arg(long, value_name = "N", allow_hyphen_values = true)]
    pub interval: Option<String>,
    /// Cache replacement policy (see `shingled policies`); `sim` takes a comma-separated list
    /// (`lru,sac,pore:scheme=cf,zone_size=10MiB`) and runs each.
    #[arg(long, short)]
    pub policy: Option<String>,
    /// No SSD cache: replay straight onto the drive.
    #[arg(long, conflicts_with_all = ["policy", "cache_size"])]
    pub no_cache: bool,
    /// Cache size: absolute (4GiB, 5000blocks) or a fraction of the trace's accessed range
    /// (written range in write-only/write-cache modes): 2%, 1/50. `sim` takes a comma-separated
    /// list (`1%,2%,4%`) and runs each size with each policy.
    #[arg(long)]
    pub cache_size: Option<String>,
    /// Where SAC's and PORE's drive costs come from: fitted (measured on the drive model over
    /// the trace's accessed range before the run; the default) or paper (the SAC paper's
    /// constants, which need no measuring pass).
    #[arg(long, value_parser = ["fitted", "paper"])]
    pub costs: Option<String>,
    /// Drive profile (see `shingled drives`).
    #[arg(long, short)]
    pub drive: Option<String>,
    /// A drive configuration file (TOML, the fields of a `[drive]` table, as `shingled probe
    /// --drive-file` writes them); replaces --drive.
    #[arg(long, conflicts_with = "drive")]
    pub drive_file: Option<PathBuf>,
    /// DM-SMR persistent-buffer size: absolute, or a fraction of the written range (1/256).
    #[arg(long)]
    pub pb_size: Option<String>,
    /// DM-SMR persistent-buffer flavour: append-only (SAC's emulator) or in-place (PORE's).
    #[arg(long)]
    pub pb_flavour: Option<String>,
    /// DM-SMR band layout: fixed:SIZE, uniform:MIN:MAX[:SEED] or lba:OUTER:INNER.
    #[arg(long)]
    pub bands: Option<String>,
    /// Drive capacity (the trace must fit).
    #[arg(long)]
    pub drive_capacity: Option<String>,
    /// SSD profile: nvme or sata.
    #[arg(long)]
    pub ssd: Option<String>,
}

fn parse<T: std::str::FromStr>(flag: &str, v: &str) -> Result<T>
where
    T::Err: std::fmt::Display,
{
    v.parse::<T>().map_err(|e| anyhow::anyhow!("--{flag} {v:?}: {e}"))
}

/// `--jobs`: the number given (at least 1), or the number of cores.
pub fn jobs(j: Option<usize>) -> anyhow::Result<usize> {
    match j {
        Some(0) => {
            anyhow::bail!("--jobs 0: at least 1 (simulations run in parallel; 1 runs them one at a time)")
        }
        Some(n) => Ok(n),
        None => Ok(std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1)),
    }
}

/// An error naming `flag` and the item if a list names the same item twice (`--policy lru,lru`
/// would run the same configuration twice and print two rows of one name).
pub fn no_duplicates(flag: &str, items: &[String]) -> anyhow::Result<()> {
    for (i, x) in items.iter().enumerate() {
        if items[..i].iter().any(|y| y.eq_ignore_ascii_case(x)) {
            anyhow::bail!("{flag} names {x:?} twice; give each once");
        }
    }
    Ok(())
}

/// Splits a comma-separated list of policy specs, keeping `field=value` parameters with the
/// policy they follow: `lru,pore:scheme=cf,zone_size=10MiB` is `lru` and
/// `pore:scheme=cf,zone_size=10MiB`.
pub fn split_policies(v: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for part in v.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        match out.last_mut() {
            Some(prev) if part.contains('=') && !part.contains(':') && prev.contains(':') => {
                prev.push(',');
                prev.push_str(part);
            }
            _ => out.push(part.to_string()),
        }
    }
    out
}

/// Parses `fixed:SIZE`, `uniform:MIN:MAX[:SEED]` or `lba:OUTER:INNER`.
pub fn parse_bands(v: &str) -> Result<BandConfig> {
    let parts: Vec<&str> = v.split(':').collect();
    let size = |s: &str| parse::<ByteSize>("bands", s);
    let cfg = match parts.as_slice() {
        ["fixed", s] => BandConfig::Fixed { size: size(s)? },
        ["uniform", a, b] => BandConfig::UniformRandom { min: size(a)?, max: size(b)?, seed: 0 },
        ["uniform", a, b, seed] => {
            BandConfig::UniformRandom { min: size(a)?, max: size(b)?, seed: parse("bands", seed)? }
        }
        ["lba", o, i] => BandConfig::LbaDependent { outer: size(o)?, inner: size(i)? },
        _ => bail!("--bands {v:?}: expected fixed:SIZE, uniform:MIN:MAX[:SEED] or lba:OUTER:INNER"),
    };
    cfg.validate().map_err(|e| anyhow::anyhow!("--bands {v:?}: {e}"))?;
    Ok(cfg)
}

impl SimArgs {
    /// Whether the user chose the drive (a set-up, a configuration file or a drive flag), so
    /// that an experiment keeps it instead of running in its paper's set-up.
    pub fn chose_drive(&self) -> bool {
        self.setup.is_some()
            || self.config.is_some()
            || self.drive.is_some()
            || self.drive_file.is_some()
            || self.pb_size.is_some()
            || self.pb_flavour.is_some()
            || self.bands.is_some()
            || self.drive_capacity.is_some()
            || self.write_cache.is_some()
            || self.io_unit.is_some()
    }

    /// The interval of metrics over time: `--interval`, else the configuration file's.
    pub fn interval(&self) -> Result<Option<shingled_sim::Interval>> {
        if let Some(i) = &self.interval {
            return Ok(Some(parse("interval", i)?));
        }
        let Some(p) = &self.config else { return Ok(None) };
        let text = std::fs::read_to_string(p).with_context(|| format!("reading {}", p.display()))?;
        Ok(SimConfig::from_toml(&text).map_err(|e| anyhow::anyhow!("{}: {e}", p.display()))?.interval)
    }

    /// The configuration: the file (or defaults) with every given flag applied.
    pub fn to_config(&self) -> Result<SimConfig> {
        let mut cfg = match &self.config {
            Some(p) => {
                let text = std::fs::read_to_string(p).with_context(|| format!("reading {}", p.display()))?;
                SimConfig::from_toml(&text).map_err(|e| anyhow::anyhow!("{}: {e}", p.display()))?
            }
            None => SimConfig::default(),
        };
        if let Some(s) = &self.setup {
            shingled_sim::setup(s).map_err(|e| anyhow::anyhow!("--setup {s:?}: {e}"))?.apply(&mut cfg);
        }
        if let Some(t) = &self.trace {
            cfg.trace.path = t.clone();
        }
        if let Some(f) = &self.format {
            parse::<shingled_trace::Format>("format", f)?;
            cfg.trace.format = Some(f.clone());
        }
        if let Some(p) = &self.trace_params {
            cfg.trace.params = Some(p.clone());
        }
        if self.volume.is_some() {
            cfg.trace.volume = self.volume;
        }
        if self.skip_bad_lines {
            cfg.trace.skip_bad_lines = true;
        }
        if let Some(k) = self.lba_scale {
            if k == 0 {
                anyhow::bail!("--lba-scale 0: expected 1 or more");
            }
            cfg.trace.lba_scale = Some(k);
        }
        if let Some(f) = &self.fold {
            let b: ByteSize = parse("fold", f)?;
            if b.0 < 1 << 20 {
                anyhow::bail!("--fold {f}: expected at least 1MiB");
            }
            cfg.trace.fold = Some(b);
        }
        if self.limit.is_some() {
            cfg.trace.limit = self.limit;
        }
        if let Some(m) = &self.mode {
            cfg.mode = parse("mode", m)?;
        }
        if let Some(w) = &self.warmup {
            cfg.warmup = parse("warmup", w)?;
        }
        if let Some(i) = &self.interval {
            cfg.interval = Some(parse("interval", i)?);
        }
        if self.no_cache {
            cfg.cache = None;
        }
        if let Some(p) = &self.policy {
            cfg.cache.get_or_insert_with(CacheConfig::default).policy = parse("policy", p)?;
        }
        if let Some(s) = &self.cache_size {
            cfg.cache.get_or_insert_with(CacheConfig::default).size = parse::<SizeSpec>("cache-size", s)?;
        }
        if let Some(c) = &self.costs {
            cfg.cache.get_or_insert_with(CacheConfig::default).costs = match c.as_str() {
                "paper" => shingled_sim::CostModel::Paper,
                _ => shingled_sim::CostModel::Fitted,
            };
        }
        if let Some(d) = &self.drive {
            cfg.drive = shingled_device::profile(d).with_context(|| {
                format!(
                    "--drive {d:?}: unknown profile; known: {}",
                    shingled_device::profile_names().join(", ")
                )
            })?;
        }
        if let Some(p) = &self.drive_file {
            let text = std::fs::read_to_string(p).with_context(|| format!("reading {}", p.display()))?;
            cfg.drive = toml::from_str(&text)
                .map_err(|e| anyhow::anyhow!("{}: {}", p.display(), shingled_sim::toml_error(&text, &e)))?;
        }
        if let Some(s) = &self.pb_size {
            let spec = parse::<SizeSpec>("pb-size", s)?;
            cfg.drive.dm_smr_mut().context("--pb-size applies to a dm-smr drive")?.pb_size = spec;
        }
        if let Some(f) = &self.pb_flavour {
            let flavour = parse("pb-flavour", f)?;
            cfg.drive.dm_smr_mut().context("--pb-flavour applies to a dm-smr drive")?.pb_flavour = flavour;
        }
        if let Some(b) = &self.bands {
            let bands = parse_bands(b)?;
            cfg.drive.dm_smr_mut().context("--bands applies to a dm-smr drive")?.bands = bands;
        }
        if let Some(c) = &self.drive_capacity {
            cfg.drive.set_capacity(parse("drive-capacity", c)?);
        }
        if let Some(w) = &self.write_cache {
            let on = match w.as_str() {
                "on" => true,
                "off" => false,
                _ => bail!("--write-cache {w:?}: expected on or off"),
            };
            cfg.drive.mechanism_mut().write_cache.enabled = on;
            cfg.drive.validate().map_err(|e| anyhow::anyhow!("--write-cache {w}: {e}"))?;
        }
        if let Some(u) = &self.io_unit {
            cfg.io_unit = parse("io-unit", u)?;
        }
        if let Some(r) = &self.replay {
            cfg.replay = parse("replay", r)?;
        }
        if let Some(x) = self.time_scale {
            if !(x.is_finite() && x > 0.0) {
                anyhow::bail!(
                    "--time-scale {x}: expected a finite number > 0 (1 replays the trace's own timing)"
                );
            }
            cfg.time_scale = x;
        }
        if let Some(s) = &self.ssd {
            cfg.ssd = shingled_device::ssd_profile(s).with_context(|| {
                format!(
                    "--ssd {s:?}: unknown SSD profile ({})",
                    shingled_device::ssd_profile_names().join(", ")
                )
            })?;
        }
        Ok(cfg)
    }
}

#[derive(Args, Debug)]
pub struct InputArgs {
    /// Trace file or synth:<profile>.
    pub path: String,
    /// Format (detected when absent).
    #[arg(long)]
    pub format: Option<String>,
    /// Format parameters as libCacheSim's -t: obj-id-col=N,time-col=N,obj-size-col=N,op-col=N,
    /// has-header=B,delimiter=C for csv; op=write for oracleGeneral.
    #[arg(long)]
    pub trace_params: Option<String>,
    /// Keep only this volume.
    #[arg(long)]
    pub volume: Option<u32>,
    /// Count and skip malformed lines.
    #[arg(long)]
    pub skip_bad_lines: bool,
}

impl InputArgs {
    pub fn options(&self) -> Result<shingled_trace::OpenOptions> {
        Ok(shingled_trace::OpenOptions {
            format: self.format.as_deref().map(|f| parse("format", f)).transpose()?,
            volume: self.volume,
            skip_bad_lines: self.skip_bad_lines,
            params: self.trace_params.clone(),
            ..Default::default()
        })
    }
}

#[derive(Args, Debug)]
pub struct BandArgs {
    /// Band layout for the covered-band ranges: fixed:SIZE, uniform:MIN:MAX[:SEED], lba:OUTER:INNER
    /// (default uniform:17MB:36MB, PORE's emulator).
    #[arg(long)]
    pub bands: Option<String>,
}

impl BandArgs {
    pub fn to_config(&self) -> Result<BandConfig> {
        self.bands.as_deref().map(parse_bands).unwrap_or_else(|| Ok(BandConfig::default()))
    }
}

/// The parser of every unsigned integer option: a whole number in digits within `T`'s range,
/// with an error that says which form and range is expected.
pub fn whole<T>(s: &str) -> Result<T, String>
where
    T: std::str::FromStr + TryFrom<u128> + Copy + std::fmt::Display + num_max::Max,
{
    let t = s.trim();
    let digits = t.strip_prefix('+').unwrap_or(t);
    if !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()) {
        return digits
            .parse::<u128>()
            .ok()
            .and_then(|v| T::try_from(v).ok())
            .ok_or_else(|| format!("{s} is out of range: expected a whole number from 0 to {}", T::MAX));
    }
    if let Some(rest) = t.strip_prefix('-') {
        if rest.parse::<f64>().is_ok() {
            return Err(format!("{s} is out of range: expected a whole number from 0 to {}", T::MAX));
        }
    }
    Err(format!("expected a whole number written in digits (e.g. 42, at most {}), not {s:?}", T::MAX))
}

/// The parser of every decimal option: a finite number (its range is checked by the command).
pub fn finite(s: &str) -> Result<f64, String> {
    match s.trim().parse::<f64>() {
        Ok(v) if v.is_finite() => Ok(v),
        Ok(_) => Err(format!("expected a finite number (e.g. 0.5), not {s:?}")),
        Err(_) => Err(format!("expected a number (e.g. 0.5 or 2), not {s:?}")),
    }
}

/// The largest value of an unsigned integer type, for [`whole`]'s messages.
pub mod num_max {
    /// `Self::MAX` as a trait constant.
    pub trait Max {
        /// The type's largest value.
        const MAX: Self;
    }
    macro_rules! max {
        ($($t:ty),*) => { $(impl Max for $t { const MAX: Self = <$t>::MAX; })* };
    }
    max!(u8, u16, u32, u64, usize);
}
