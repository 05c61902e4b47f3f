//! Simulation configuration: one set of serde structs read from TOML files and built from CLI
//! flags alike, and the named set-ups (a paper's drive, CMR-only drive and I/O unit) whose
//! first is the default.

use crate::controller::Mode;
use crate::engine::{IoUnit, Replay};
use crate::error::{ParseError, SimError};
use serde::{Deserialize, Deserializer, Serialize};
use shingled_cache::{PolicyConfig, PolicyError};
use shingled_core::{ByteSize, SizeSpec};
use shingled_device::{DriveConfig, SsdConfig};

/// Where the requests come from.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TraceSpec {
    /// A trace file (any supported format, `.gz` allowed) or `synth:<profile>[,key=value…]`.
    pub path: String,
    /// Format name; detected from the content when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub format: Option<String>,
    /// Format parameters in libCacheSim's `-t` spelling (`obj-id-col=2,time-col=1,…` for `csv`,
    /// `op=write` for `oracleGeneral`; see `docs/trace-format.md`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub params: Option<String>,
    /// Keep only this volume / disk number.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub volume: Option<u32>,
    /// Count and skip malformed lines instead of stopping at the first.
    #[serde(default)]
    pub skip_bad_lines: bool,
    /// Replay at most this many trace requests (before mode filtering).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit: Option<u64>,
    /// Multiply every request's offset by this (SMaRT Table 1's LBA scale factors, so a trace
    /// covers a larger drive).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lba_scale: Option<u64>,
    /// Then take offsets modulo this many bytes (SMaRT §5.4: folded into the drive's used
    /// range).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fold: Option<ByteSize>,
    /// Then spread the folded range's 4 MiB cells evenly over this many bytes (SMaRT's grid: the
    /// HDD and Skylight place `[0, fold)` over the same surface SMaRT lays it out on).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spread: Option<ByteSize>,
}

impl Default for TraceSpec {
    fn default() -> Self {
        TraceSpec {
            path: DEFAULT_TRACE.to_string(),
            format: None,
            params: None,
            volume: None,
            skip_bad_lines: false,
            limit: None,
            lba_scale: None,
            fold: None,
            spread: None,
        }
    }
}

/// The trace `shingled compare` uses when given none: the synthetic prn profile (PORE Table I:
/// 17.6 M page requests, 80.2% writes, 20.2 GB written range), sized so that comparing every
/// scheme takes about a minute on two cores.
pub const DEFAULT_TRACE: &str = "synth:prn";

/// When the "after warm-up" window starts.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub enum Warmup {
    /// No warm-up window is reported.
    None,
    /// When the cache is first full (the SAC artifact resets its statistics at the first
    /// eviction); for runs without a cache, no window.
    #[default]
    CacheFull,
    /// After this many processed requests.
    Requests(u64),
    /// After this fraction of the trace's requests.
    Fraction(f64),
}

impl std::str::FromStr for Warmup {
    type Err = ParseError;
    fn from_str(s: &str) -> Result<Self, ParseError> {
        let t = s.trim();
        match t {
            "none" => Ok(Warmup::None),
            "cache-full" => Ok(Warmup::CacheFull),
            _ => {
                if let Some(p) = t.strip_suffix('%') {
                    let f: f64 = p.parse().map_err(|_| ParseError::WarmupPercent(s.into()))?;
                    if !(0.0..100.0).contains(&f) {
                        return Err(ParseError::WarmupRange(s.into()));
                    }
                    return Ok(Warmup::Fraction(f / 100.0));
                }
                t.parse::<u64>().map(Warmup::Requests).map_err(|_| ParseError::Warmup(s.into()))
            }
        }
    }
}

impl std::fmt::Display for Warmup {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Warmup::None => f.write_str("none"),
            Warmup::CacheFull => f.write_str("cache-full"),
            Warmup::Requests(n) => write!(f, "{n}"),
            Warmup::Fraction(x) => write!(f, "{}%", x * 100.0),
        }
    }
}

impl Serialize for Warmup {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.to_string())
    }
}

impl<'de> Deserialize<'de> for Warmup {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        use shingled_core::de::NumberOrString as N;
        match N::deserialize(d)? {
            N::Number(n) => Ok(Warmup::Requests(n)),
            N::Float(x) => Err(serde::de::Error::custom(format!(
                "invalid warm-up {x}: use none, cache-full, a request count or a percentage"
            ))),
            N::Text(s) => s.parse().map_err(serde::de::Error::custom),
        }
    }
}

/// The windows of a run's metrics over time ([`crate::Window`]): every so many trace requests,
/// or every so many seconds of trace time (the requests' own timestamps).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Interval {
    /// A window every this many trace requests (> 0).
    Requests(u64),
    /// A window every this many seconds of trace time (finite, > 0).
    Seconds(f64),
}

impl std::str::FromStr for Interval {
    type Err = ParseError;
    /// `10000` or `10000r`: requests; `60s` or `0.5s`: seconds of trace time.
    fn from_str(s: &str) -> Result<Self, ParseError> {
        let t = s.trim();
        let bad = || ParseError::Interval(s.into());
        let zero = || ParseError::IntervalZero(s.into());
        if let Some(x) = t.strip_suffix('s') {
            let x: f64 = x.trim().parse().map_err(|_| bad())?;
            if !x.is_finite() || x < 0.0 {
                return Err(bad());
            }
            // Below a nanosecond no two timestamps differ.
            if x < 1e-9 {
                return Err(zero());
            }
            return Ok(Interval::Seconds(x));
        }
        let n: u64 = t.strip_suffix('r').unwrap_or(t).trim().parse().map_err(|_| bad())?;
        if n == 0 {
            return Err(zero());
        }
        Ok(Interval::Requests(n))
    }
}

impl std::fmt::Display for Interval {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Interval::Requests(n) => write!(f, "{n}"),
            Interval::Seconds(x) => write!(f, "{x}s"),
        }
    }
}

impl Serialize for Interval {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.to_string())
    }
}

impl<'de> Deserialize<'de> for Interval {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        use shingled_core::de::NumberOrString as N;
        let text = match N::deserialize(d)? {
            N::Number(n) => n.to_string(),
            N::Float(x) => {
                return Err(serde::de::Error::custom(format!(
                    "invalid interval {x}: a request count is whole; give seconds of trace time as a string (\"{x}s\")"
                )))
            }
            N::Text(t) => t,
        };
        text.parse().map_err(serde::de::Error::custom)
    }
}

/// The SSD cache: its size and its policy.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CacheConfig {
    /// Absolute (`1GiB`) or relative to the trace: a fraction of the accessed LBA range in
    /// read-write and read-only modes, of the written LBA range in write-only and write-cache
    /// modes (PORE §V-C; default `2%`). Ranges are covered-band bytes, as in PORE Table I.
    #[serde(default = "default_cache_size")]
    pub size: SizeSpec,
    /// The replacement policy: a name (`"lru"`) or a table with `policy = "<name>"` and the
    /// policy's own fields.
    #[serde(default, deserialize_with = "policy_name_or_table")]
    pub policy: PolicyConfig,
    /// Drive costs for cost-aware policies (SAC's Clean/Dirty Comparator): `fitted` on the
    /// configured drive model (default), `paper` (SAC's constants), or
    /// `{ custom = { read_ms = …, rmw_fixed_ms = …, rmw_per_block_ms = … } }`.
    #[serde(default)]
    pub costs: crate::CostModel,
}

fn default_cache_size() -> SizeSpec {
    SizeSpec::Fraction(0.02)
}

impl Default for CacheConfig {
    fn default() -> Self {
        CacheConfig { size: default_cache_size(), policy: PolicyConfig::default(), costs: Default::default() }
    }
}

fn policy_name_or_table<'de, D: Deserializer<'de>>(d: D) -> Result<PolicyConfig, D::Error> {
    // Through a JSON value rather than an untagged enum, so that an error in a policy table
    // names its field and value instead of "data did not match any variant".
    match serde_json::Value::deserialize(d)? {
        serde_json::Value::String(n) => n.parse().map_err(serde::de::Error::custom),
        v => serde_json::from_value(v).map_err(|e| serde::de::Error::custom(format!("cache.policy: {e}"))),
    }
}

/// One simulation: a trace, a mode, an optional SSD cache, the SSD model and the drive model.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SimConfig {
    /// Name shown in reports; derived from the scheme when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
    /// The workload.
    #[serde(default)]
    pub trace: TraceSpec,
    /// How the cache treats reads and writes.
    #[serde(default)]
    pub mode: Mode,
    /// When the "after warm-up" window starts.
    #[serde(default)]
    pub warmup: Warmup,
    /// Metrics over time: a window every so many requests or seconds of trace time
    /// (`RunReport::series`); none by default.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interval: Option<Interval>,
    /// The SSD cache; absent for the no-cache baselines (SMR-only, CMR-only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache: Option<CacheConfig>,
    /// The SSD model of the cache device.
    #[serde(default)]
    pub ssd: SsdConfig,
    /// The drive below the cache. Default: the `pore` set-up's drive (`pore-prototype`).
    #[serde(default = "default_drive")]
    pub drive: DriveConfig,
    /// How a request's blocks reach the drive: `request` merges contiguous blocks into one
    /// command, `block` issues each 4 KiB block alone, as the papers' prototypes did. Default:
    /// the `pore` set-up's, `block`.
    #[serde(default = "default_io_unit")]
    pub io_unit: IoUnit,
    /// When requests are issued: `closed` (each when the previous one ends; the PORE/SAC total
    /// I/O time) or `open` (each at its trace time, with queueing; SMaRT's response time).
    #[serde(default)]
    pub replay: Replay,
    /// Open loop: multiplies the gaps between trace timestamps (0.5: twice the load; 1: as
    /// traced). Ignored in closed loop.
    #[serde(default = "default_time_scale")]
    pub time_scale: f64,
    /// Settings used by `shingled compare`.
    #[serde(default)]
    pub compare: CompareOptions,
}

impl Default for SimConfig {
    fn default() -> Self {
        SimConfig {
            label: None,
            trace: TraceSpec::default(),
            mode: Mode::default(),
            warmup: Warmup::default(),
            interval: None,
            cache: Some(CacheConfig::default()),
            ssd: SsdConfig::default(),
            drive: default_drive(),
            io_unit: default_io_unit(),
            replay: Replay::default(),
            time_scale: default_time_scale(),
            compare: CompareOptions::default(),
        }
    }
}

/// A TOML configuration that does not parse, or does not describe a [`SimConfig`]: the message
/// names the field, its value and the line ([`toml_error`]).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct ConfigTomlError {
    /// What is wrong and where.
    pub message: String,
}

impl SimConfig {
    /// Parses a TOML configuration; errors name the field and line.
    pub fn from_toml(text: &str) -> Result<SimConfig, ConfigTomlError> {
        toml::from_str(text).map_err(|e| ConfigTomlError { message: toml_error(text, &e) })
    }

    /// The configuration as TOML.
    pub fn to_toml(&self) -> String {
        toml::to_string_pretty(self).expect("configuration serializes")
    }

    /// The label reports use: the explicit label or the scheme name.
    pub fn display_label(&self) -> String {
        if let Some(l) = &self.label {
            return l.clone();
        }
        match &self.cache {
            Some(c) => c.policy.name().to_string(),
            None => format!("{}-only", self.drive.short_name()),
        }
    }
}

/// What `shingled compare` runs: scheme names and the CMR drive of the CMR-only baseline.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CompareOptions {
    /// Schemes: `smr-only`, `cmr-only` or a policy name (cached above the configured drive).
    #[serde(default = "default_schemes")]
    pub schemes: Vec<String>,
    /// The drive of the `cmr-only` baseline.
    #[serde(default = "default_cmr")]
    pub cmr_drive: DriveConfig,
}

/// No cache, the CMR drive, and every online policy (the offline ones are asked for by name).
fn default_schemes() -> Vec<String> {
    let mut v = vec!["smr-only".to_string(), "cmr-only".to_string()];
    v.extend(PolicyConfig::NAMES.iter().filter(|s| !is_offline(s)).map(|s| s.to_string()));
    v
}

/// Whether the policy called `name` is offline ([`PolicyConfig::needs_future`]).
pub fn is_offline(name: &str) -> bool {
    PolicyConfig::default_for(name).is_some_and(|p| p.needs_future())
}

fn default_cmr() -> DriveConfig {
    default_setup().cmr_config()
}

fn default_drive() -> DriveConfig {
    default_setup().drive_config()
}

fn default_time_scale() -> f64 {
    1.0
}

fn default_io_unit() -> IoUnit {
    default_setup().io_unit
}

impl Default for CompareOptions {
    fn default() -> Self {
        CompareOptions { schemes: default_schemes(), cmr_drive: default_cmr() }
    }
}

/// A TOML error as text, pointing at the offending key. A drive is a tagged enum (`model =
/// ...`), which serde reads into a buffer first, so toml can only point at its table header
/// (`[drive]`) for an error inside it (`rpm = -5900`). Then this finds the key the message
/// names (an unknown or missing field, or the one value in the table and its sub-tables that
/// reads as the rejected literal) and names its line and column.
pub fn toml_error(text: &str, e: &toml::de::Error) -> String {
    let Some(span) = e.span() else { return e.to_string() };
    let head = text.get(span.clone()).unwrap_or("").trim();
    if !head.starts_with('[') {
        return e.to_string();
    }
    let table = head.trim_matches(|c| c == '[' || c == ']').trim();
    let msg = e.message();
    // The region: from the header to the next header that is not one of its sub-tables.
    let start = span.end;
    let mut end = text.len();
    let mut at = start;
    for line in text[start..].split_inclusive('\n') {
        let t = line.trim();
        if t.starts_with('[') {
            let name = t.trim_matches(|c| c == '[' || c == ']').trim();
            if !name.starts_with(&format!("{table}.")) {
                end = at;
                break;
            }
        }
        at += line.len();
    }
    let ticked = msg.split('`').nth(1);
    let quoted = msg.split('"').nth(1).map(|q| format!("\"{q}\""));
    let mut hits = Vec::new();
    let mut at = start;
    let mut sub = table.to_string();
    for line in text[start..end].split_inclusive('\n') {
        let t = line.trim();
        if t.starts_with('[') {
            sub = t.trim_matches(|c| c == '[' || c == ']').trim().to_string();
        } else if let Some((k, v)) = t.split_once('=') {
            let (k, v) = (k.trim(), v.split('#').next().unwrap_or("").trim());
            let hit = if msg.starts_with("unknown field") {
                ticked == Some(k)
            } else if msg.starts_with("invalid") {
                ticked == Some(v) || quoted.as_deref() == Some(v)
            } else {
                false
            };
            if hit {
                let col = line.len() - line.trim_start().len();
                hits.push((at + col, format!("{sub}.{k}")));
            }
        }
        at += line.len();
    }
    match hits.as_slice() {
        [(pos, key)] => {
            let line = text[..*pos].matches('\n').count() + 1;
            let col = pos - text[..*pos].rfind('\n').map_or(0, |n| n + 1) + 1;
            format!("TOML error at line {line}, column {col}, field {key}: {msg}")
        }
        _ => e.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// clap and Python print these messages; they are the ones the parsers gave as strings.
    #[test]
    fn text_errors_say_what_was_given_and_what_is_allowed() {
        let e = |r: Result<(), ParseError>| r.unwrap_err().to_string();
        assert_eq!(
            e("rw".parse::<Mode>().map(drop)),
            r#"unknown mode "rw"; use read-write, write-only, read-only or write-cache"#
        );
        assert_eq!(e("page".parse::<IoUnit>().map(drop)), r#"unknown I/O unit "page"; use request or block"#);
        assert_eq!(
            e("sideways".parse::<Replay>().map(drop)),
            r#"unknown replay "sideways"; use closed or open"#
        );
        assert_eq!(e("x%".parse::<Warmup>().map(drop)), r#"invalid warm-up "x%""#);
        assert_eq!(e("100%".parse::<Warmup>().map(drop)), r#"warm-up "100%" must be in [0%, 100%)"#);
        assert_eq!(
            e("soon".parse::<Warmup>().map(drop)),
            r#"invalid warm-up "soon": use none, cache-full, a request count or a percentage"#
        );
    }

    #[test]
    fn an_interval_is_requests_or_seconds_and_a_bad_one_is_named() {
        assert_eq!("10000".parse(), Ok(Interval::Requests(10_000)));
        assert_eq!(" 10000r".parse(), Ok(Interval::Requests(10_000)));
        assert_eq!("60s".parse(), Ok(Interval::Seconds(60.0)));
        assert_eq!("0.5s".parse(), Ok(Interval::Seconds(0.5)));
        let e = |s: &str| s.parse::<Interval>().unwrap_err().to_string();
        let bad = |s: &str| {
            format!("invalid interval {s:?}: use a request count (10000 or 10000r) or seconds of trace time (60s)")
        };
        for s in ["abc", "", "-5", "1.5", "5m", "xs", "-1s", "infs", "NaNs"] {
            assert_eq!(e(s), bad(s), "{s}");
        }
        for s in ["0", "0r", "0s", "0.0s"] {
            assert_eq!(e(s), format!("interval {s:?} must be more than 0"), "{s}");
        }
        for i in [Interval::Requests(7), Interval::Seconds(2.5)] {
            assert_eq!(i.to_string().parse(), Ok(i));
        }
        let w = |t: &str| SimConfig::from_toml(&format!("interval = {t}")).map(|c| c.interval);
        assert_eq!(w("5000"), Ok(Some(Interval::Requests(5000))));
        assert_eq!(w("\"60s\""), Ok(Some(Interval::Seconds(60.0))));
        assert_eq!(SimConfig::from_toml("").unwrap().interval, None);
        assert!(!SimConfig::default().to_toml().contains("interval"), "absent when none");
        let c = SimConfig { interval: Some(Interval::Seconds(60.0)), ..Default::default() };
        assert_eq!(SimConfig::from_toml(&c.to_toml()).unwrap().interval, c.interval);
        for (bad, says) in [
            ("0", "must be more than 0"),
            ("1.5", "invalid interval 1.5"),
            ("\"x\"", "invalid interval \"x\""),
        ] {
            let e = w(bad).unwrap_err().message;
            assert!(e.contains(says) && e.contains("interval"), "{bad}: {e}");
        }
    }

    #[test]
    fn warmup_is_a_count_a_word_or_a_percentage_and_a_bad_one_is_named() {
        let w = |t: &str| SimConfig::from_toml(&format!("warmup = {t}")).map(|c| c.warmup);
        assert_eq!(w("1000"), Ok(Warmup::Requests(1000)));
        assert_eq!(w("\"cache-full\""), Ok(Warmup::CacheFull));
        assert_eq!(w("\"5%\""), Ok(Warmup::Fraction(0.05)));
        for (bad, says) in [
            ("0.5", "invalid warm-up 0.5"),
            ("-3", "-3: a size or count cannot be negative"),
            ("true", "a non-negative whole number or a string"),
            ("\"soon\"", "invalid warm-up \"soon\""),
        ] {
            let e = w(bad).unwrap_err().message;
            assert!(e.contains(says) && !e.contains("untagged"), "{bad}: {e}");
        }
    }
}

/// The configuration of scheme `name` derived from `base`: `smr-only` (no cache, base drive),
/// `cmr-only` (no cache, the compare section's CMR drive) or a policy name (cached, base drive).
pub fn scheme_config(base: &SimConfig, name: &str) -> Result<SimConfig, SimError> {
    let mut cfg = base.clone();
    cfg.label = Some(name.to_string());
    match name {
        "smr-only" => cfg.cache = None,
        "cmr-only" => {
            cfg.cache = None;
            cfg.drive = base.compare.cmr_drive.clone();
        }
        policy => {
            let p = policy.parse().map_err(|e: PolicyError| SimError::Config {
                field: "compare.schemes",
                reason: e.to_string(),
            })?;
            let mut cache = base.cache.clone().unwrap_or_default();
            // A scheme named like the base policy keeps the base's policy settings.
            if cache.policy.name() != policy {
                cache.policy = p;
            }
            cfg.cache = Some(cache);
        }
    }
    Ok(cfg)
}

/// A named set-up.
#[derive(Clone, Copy, Debug)]
pub struct SetUp {
    /// `--setup` name.
    pub name: &'static str,
    /// One line: what it models and where it comes from.
    pub summary: &'static str,
    /// Drive profile of the drive under the cache (and of SMR-only).
    pub drive: &'static str,
    /// Drive profile of the CMR-only baseline.
    pub cmr_drive: &'static str,
    /// How requests reach the drive.
    pub io_unit: IoUnit,
}

/// Every set-up, the default first.
pub const SETUPS: &[SetUp] = &[
    SetUp {
        name: "pore",
        summary: "PORE §V-A/§V-C prototype: emulated DM-SMR (PB 1/256 in-place FIFO, uniform \
                  17-36 MB bands) on a 7200 rpm CMR disk with its write cache on; CMR-only on the \
                  same disk; 4 KiB pages issued one at a time",
        drive: "pore-prototype",
        cmr_drive: "pore-cmr",
        io_unit: IoUnit::Block,
    },
    SetUp {
        name: "sac",
        summary: "SAC §6 testbed: SAC's emulator (append-only PB 1/256, 20.48 MB bands) timed as \
                  the calibrated ST8000AS0002; CMR-only on SAC's 5 TB CMR disk; 4 KiB pages one at \
                  a time",
        drive: "sac-testbed",
        cmr_drive: "sac-cmr",
        io_unit: IoUnit::Block,
    },
    SetUp {
        name: "generic",
        summary: "a generic DM-SMR drive: PB 1/256 append-only log over uniform 17-36 MB bands on \
                  the 5900 rpm ST5000AS0011 mechanics, no write cache; CMR-only on PORE's 7200 rpm \
                  disk; multi-block requests merged",
        drive: "generic-dm-smr",
        cmr_drive: "pore-cmr",
        io_unit: IoUnit::Request,
    },
];

/// The set-up called `name`.
pub fn setup(name: &str) -> Result<&'static SetUp, SimError> {
    SETUPS.iter().find(|s| s.name == name).ok_or_else(|| SimError::Config {
        field: "setup",
        reason: format!(
            "unknown set-up {name:?}; known: {}",
            SETUPS.iter().map(|s| s.name).collect::<Vec<_>>().join(", ")
        ),
    })
}

fn drive(name: &str) -> DriveConfig {
    if name == "generic-dm-smr" {
        return DriveConfig::DmSmr(Default::default());
    }
    shingled_device::profile(name).expect("set-ups name existing profiles")
}

impl SetUp {
    /// The drive under the cache.
    pub fn drive_config(&self) -> DriveConfig {
        drive(self.drive)
    }

    /// The CMR-only baseline's drive.
    pub fn cmr_config(&self) -> DriveConfig {
        drive(self.cmr_drive)
    }

    /// Replaces `cfg`'s drive, CMR-only drive and I/O unit with this set-up's.
    pub fn apply(&self, cfg: &mut SimConfig) {
        cfg.drive = self.drive_config();
        cfg.compare.cmr_drive = self.cmr_config();
        cfg.io_unit = self.io_unit;
    }

    /// Whether `cfg` runs in exactly this set-up (drive, CMR-only drive and I/O unit); the
    /// CMR-only run of a comparison, whose drive is the CMR drive, counts too.
    pub fn matches(&self, cfg: &SimConfig) -> bool {
        let cmr = self.cmr_config();
        (cfg.drive == self.drive_config() || (cfg.cache.is_none() && cfg.drive == cmr))
            && cfg.compare.cmr_drive == cmr
            && cfg.io_unit == self.io_unit
    }
}

/// The default configuration's drive, CMR-only drive and I/O unit: the first set-up's.
pub(crate) fn default_setup() -> &'static SetUp {
    &SETUPS[0]
}
