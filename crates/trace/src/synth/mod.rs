//! Synthetic traces whose profiles mimic the MSR Cambridge volumes used by the PORE and SAC
//! papers (`src`, `prn`, `ts`, `wdev`, `mds`, `stg`, `hm`, `web`, `usr`, `rsrch`), and `proj`
//! (SMaRT's fourth volume).
//!
//! A specification is `NAME[,key=value...]`, the text after `synth:` in [`crate`]'s `open`:
//!
//! | key      | meaning                                                              | default |
//! |----------|----------------------------------------------------------------------|---------|
//! | `scale`  | float in (0, 100]: multiplies the page-request count *and* the range | 1       |
//! | `pages`  | page-request count; overrides the scaled count, not the footprint    | scaled  |
//! | `seed`   | u64; the same seed gives the same trace                              | 0       |
//! | `volume` | u32 written into [`crate::Request::volume`]                          | 0       |
//! | `span`   | `max` or a size: spread the trace over `[0, span)` (below)             | none    |
//!
//! ```
//! use shingled_trace::synth::SynthTrace;
//! let mut t = SynthTrace::from_spec("wdev,scale=0.01,seed=7")?;
//! let first = t.next_req().unwrap();
//! assert!(first.offset < t.targets().accessed_range_bytes);
//! # Ok::<(), shingled_trace::TraceError>(())
//! ```
//!
//! # What a trace reproduces
//!
//! Exactly: the page-request count (4 KiB blocks touched, summed over requests). Closely: the
//! write share of pages (a feedback loop keeps it within a fraction of a point), the accessed
//! and written LBA ranges measured as total size of touched 17–36 MB bands, and the distinct
//! block footprint chosen for the profile. By construction: a request-size mix with the
//! volume's mean read and write sizes (4 KiB and 8 KiB most common, tail to 128 KiB, a few
//! 512-byte-aligned requests), Zipf-like popularity clustered in the LBA space (hot bands and
//! many cold ones), sequential streams, re-references of recent requests (read-after-write,
//! overwrites), and bursty timestamps with the volume's mean request rate.
//!
//! # The model, in brief
//!
//! The accessed range is `[0, accessed)`, the first `written/accessed` of it writable, the rest
//! read-only. Both parts are tiled with 4 MiB cells, each holding a random subset of 256 KiB
//! *live extents* (at least one per cell, `density` of them on average): the live blocks are
//! the footprint. Extents are ranked by the random rank of their 32 MiB heat cluster (plus
//! jitter) and get Zipf mass `(r+1)^(1-a) - r^(1-a)` over the normalised rank, so heat is
//! grouped at band scale. Every request is one of:
//!
//! - a *first touch*: walks the live extents cluster by cluster, each front to back, paced to
//!   cover the whole footprint by 95% of the trace;
//! - a *re-reference* of one of the recent requests (recency-skewed; read-after-write,
//!   overwrite);
//! - a step of one of four *sequential streams*;
//! - a *popular* request: one of eight active clusters per op (the *phase model*: each
//!   request swaps a slot for a fresh popularity-weighted cluster with a small probability,
//!   so writes in a short window concentrate in a few bands, as PORE §III-A's SMR-only
//!   write-amplification figures require), then an alias-sampled extent inside it and a
//!   uniform position.
//!
//! Sizes come from per-op lookup tables steered to the volume's mean read and write sizes;
//! the write share of pages is steered the same way. Scaling multiplies the page count, the
//! range, the phase clusters and the phase lengths, and keeps every ratio (`density`,
//! re-reference window relative to the footprint, Zipf over normalised rank), so hit ratios of
//! caches sized relative to the range keep their meaning (from scale 0.05 up); extents, cells,
//! heat clusters and the drive's bands keep their physical size.
//!
//! **Span.** By default the accessed range is dense, `[0, accessed)`: PORE's "accessed LBA
//! range" is the total size of the bands a volume touches. A volume's addresses really spread
//! further (mds_0's highest sector is at 36 GB, SMaRT Table 1). `span=BYTES` (or `span=max`:
//! SMaRT Table 1's MAX LBA × scale, for `mds`, `proj`, `stg`, `rsrch`) spreads the trace's 4 MiB
//! cells evenly over `[0, span)`, in order, keeping everything inside a cell (and so every
//! request that does not cross a cell) as it was; the gaps between cells are never touched.
//!
//! `docs/synthetic-traces.md` documents every parameter, its source or rationale, and measured
//! figures.
//!
//! # Constructed generators
//!
//! [`GENERATORS`] are workload families rather than volumes, with their own keys: `bursts`
//! ([`BurstTrace`]: cold write bursts plus a scattered single-block trickle, the workload
//! on which PORE beats LRU-band) varies the trickle share, the rewrite rate of burst regions,
//! burst and request sizes and the range one at a time. [`open_spec`] opens both kinds;
//! [`SynthSpec`] and [`SynthTrace`] are the MSR profiles only, [`BurstSpec`] and [`BurstTrace`]
//! the `bursts` generator.

mod bursts;
mod gen;
mod profiles;
#[cfg(test)]
mod tests;

pub use bursts::{BurstSpec, BurstTrace, BURSTS, BURST_KEYS};
pub use gen::SynthTrace;
pub use profiles::FigureSource;

use crate::{TraceError, TraceReader};
use profiles::{Profile, PROFILES, TRACE_SECONDS};
use shingled_core::BLOCK_SIZE;
use std::str::FromStr;

/// Keys a specification may set.
pub const SPEC_KEYS: &[&str] = &["scale", "pages", "seed", "volume", "span"];

/// Cells of this many bytes keep their contents together when `span` spreads a trace.
pub const SPAN_CELL: u64 = crate::request::SPREAD_CELL;

/// Largest accepted `scale` (memory grows with the footprint: about 160 KiB per GB of live
/// footprint).
pub const MAX_SCALE: f64 = 100.0;

/// A profile as the CLI lists it: the published figures a trace of scale 1 reproduces.
#[derive(Clone, Debug, PartialEq)]
pub struct ProfileInfo {
    /// Name used in specifications, e.g. `wdev`.
    pub name: &'static str,
    /// Server function as the papers give it, e.g. `Test web server`.
    pub description: &'static str,
    /// The SNIA MSR Cambridge file the figures most probably describe (e.g. `wdev_0`), inferred
    /// from the page counts; the papers name only the server.
    pub msr_volume: &'static str,
    /// Where the figures come from.
    pub source: FigureSource,
    /// 4 KiB page requests of the whole trace.
    pub page_requests: u64,
    /// Write share of page requests, in percent.
    pub write_pct: f64,
    /// Written LBA range: total size of the SMR bands receiving writes, decimal GB.
    pub written_range_gb: f64,
    /// Accessed LBA range: written range plus the range of reads, decimal GB.
    pub accessed_range_gb: f64,
    /// Distinct 4 KiB blocks touched, as a share of the accessed range (a model assumption,
    /// not a published figure).
    pub density: f64,
    /// Mean gap between requests in the original one-week trace, seconds (derived).
    pub mean_interarrival_s: f64,
}

/// The ten profiles, PORE Table I order then `rsrch`.
pub fn profiles() -> Vec<ProfileInfo> {
    PROFILES
        .iter()
        .map(|p| ProfileInfo {
            name: p.name,
            description: p.server,
            msr_volume: p.msr_volume,
            source: p.source,
            page_requests: p.pages,
            write_pct: p.write_pct,
            written_range_gb: p.written_gb,
            accessed_range_gb: p.accessed_gb,
            density: p.density,
            mean_interarrival_s: TRACE_SECONDS / p.orig_requests as f64,
        })
        .collect()
}

/// A constructed generator as the CLI may list it: not a volume, a workload family whose
/// parameters are varied one at a time.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GeneratorInfo {
    /// Name used in specifications, e.g. `bursts`.
    pub name: &'static str,
    /// What the generated traces model, in one line.
    pub description: &'static str,
    /// Keys its specification accepts.
    pub keys: &'static [&'static str],
}

/// The constructed generators (`docs/synthetic-traces.md`, "Constructed workloads").
pub const GENERATORS: &[GeneratorInfo] = &[GeneratorInfo {
    name: BURSTS,
    description: "cold write bursts (dense runs into fresh regions) plus a scattered single-block trickle",
    keys: BURST_KEYS,
}];

/// The constructed generators; [`profiles`] lists the MSR volumes.
pub fn generators() -> &'static [GeneratorInfo] {
    GENERATORS
}

/// A parsed specification.
#[derive(Clone, Debug, PartialEq)]
pub struct SynthSpec {
    /// Profile name (canonical lower case).
    pub profile: &'static str,
    /// Footprint and page-count multiplier, > 0.
    pub scale: f64,
    /// Page-request count overriding the scaled count.
    pub pages: Option<u64>,
    /// Seed of every random choice.
    pub seed: u64,
    /// Volume number written into each request.
    pub volume: u32,
    /// Spread the trace over `[0, span)` bytes (see the module docs); `None`: dense.
    pub span: Option<Span>,
}

/// The `span` key.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Span {
    /// SMaRT Table 1's MAX LBA of the profile, times the scale.
    Max,
    /// This many bytes.
    Bytes(u64),
}

/// The figures a trace is built to reproduce, after scaling.
#[derive(Clone, Debug, PartialEq)]
pub struct SynthTargets {
    /// Page requests the trace yields (exact).
    pub pages: u64,
    /// Write share of pages, 0..1.
    pub write_fraction: f64,
    /// Accessed LBA range in bytes (whole blocks): every request lies in `[0, this)`.
    pub accessed_range_bytes: u64,
    /// Written LBA range in bytes: writes lie in `[0, this)` (the papers' figure is the size
    /// of the bands receiving writes; the covered bands come out close to it).
    pub written_range_bytes: u64,
    /// Distinct blocks the profile's footprint should have (`density` × range blocks).
    pub distinct_blocks: u64,
    /// Mean gap between requests, ns (the original trace's request rate).
    pub mean_interarrival_ns: f64,
    /// Every request lies in `[0, this)`: the accessed range, or the `span` it is spread over.
    pub span_bytes: u64,
}

fn synth_err(spec: &str, reason: impl Into<String>) -> TraceError {
    TraceError::Synth { spec: spec.to_string(), reason: reason.into() }
}

/// The MSR profiles, then the constructed generators, for error messages.
fn profile_names() -> String {
    let profiles = PROFILES.iter().map(|p| p.name).collect::<Vec<_>>().join(", ");
    let generators = GENERATORS.iter().map(|g| g.name).collect::<Vec<_>>().join(", ");
    format!("{profiles}; generators: {generators}")
}

/// Whether `name` (case-insensitive) names one of [`GENERATORS`] rather than an MSR profile.
fn is_generator(name: &str) -> bool {
    GENERATORS.iter().any(|g| g.name.eq_ignore_ascii_case(name))
}

/// The error for a value that does not fit its key: `key="value": expected WHAT`.
fn bad_value(spec: &str, key: &str, value: &str, what: &str) -> TraceError {
    synth_err(spec, format!("{key}={value:?}: expected {what}"))
}

/// Walks the `key=value` parts after the name: keys are matched case-insensitively against
/// `keys` and handed to `f` in their canonical spelling, each at most once. Errors (a part
/// that is not `key=value`, an unknown or repeated key, or `f`'s) come in the order of the
/// parts.
fn for_each_pair<'a>(
    spec: &str,
    parts: impl Iterator<Item = &'a str>,
    keys: &[&'static str],
    mut f: impl FnMut(&'static str, &'a str) -> Result<(), TraceError>,
) -> Result<(), TraceError> {
    let mut seen: Vec<&str> = Vec::new();
    for part in parts {
        if part.is_empty() {
            continue;
        }
        let Some((key, value)) = part.split_once('=') else {
            return Err(synth_err(
                spec,
                format!("{part:?} is not key=value; valid keys: {}", keys.join(", ")),
            ));
        };
        let (key, value) = (key.trim(), value.trim());
        let key_lc = key.to_ascii_lowercase();
        let Some(&canon) = keys.iter().find(|k| **k == key_lc) else {
            return Err(synth_err(spec, format!("unknown key {key:?}; valid keys: {}", keys.join(", "))));
        };
        if seen.contains(&canon) {
            return Err(synth_err(spec, format!("key {canon:?} given twice")));
        }
        seen.push(canon);
        f(canon, value)?;
    }
    Ok(())
}

/// `scale`: a number in (0, [`MAX_SCALE`]].
fn parse_scale(spec: &str, value: &str) -> Result<f64, TraceError> {
    let bad = |what: &str| bad_value(spec, "scale", value, what);
    let s: f64 = value.parse().map_err(|_| bad("a number > 0, e.g. 0.1"))?;
    if !(s.is_finite() && s > 0.0 && s <= MAX_SCALE) {
        return Err(bad(&format!("a number > 0 and <= {MAX_SCALE}, e.g. 0.1")));
    }
    Ok(s)
}

/// `pages`: a whole number, `_` separators allowed.
fn parse_pages(spec: &str, value: &str) -> Result<u64, TraceError> {
    value
        .replace('_', "")
        .parse()
        .map_err(|_| bad_value(spec, "pages", value, "a whole number of 4 KiB page requests"))
}

impl SynthSpec {
    /// Parses `NAME[,key=value...]`. Errors name the specification and list the valid
    /// profiles or keys.
    pub fn parse(spec: &str) -> Result<SynthSpec, TraceError> {
        let mut parts = spec.split(',').map(str::trim);
        let name = parts.next().unwrap_or("");
        if name.is_empty() {
            return Err(synth_err(spec, format!("no profile name; valid profiles: {}", profile_names())));
        }
        if is_generator(name) {
            return Err(synth_err(
                spec,
                format!(
                    "{name:?} is a constructed generator, not an MSR profile: open it with `open_spec` \
                     (or `BurstSpec`/`BurstTrace`); its keys are {}",
                    BURST_KEYS.join(", ")
                ),
            ));
        }
        let profile = profiles::find(name).ok_or_else(|| {
            synth_err(spec, format!("unknown profile {name:?}; valid profiles: {}", profile_names()))
        })?;
        let mut out =
            SynthSpec { profile: profile.name, scale: 1.0, pages: None, seed: 0, volume: 0, span: None };
        for_each_pair(spec, parts, SPEC_KEYS, |canon, value| {
            let bad = |what: &str| bad_value(spec, canon, value, what);
            match canon {
                "scale" => out.scale = parse_scale(spec, value)?,
                "pages" => out.pages = Some(parse_pages(spec, value)?),
                "seed" => out.seed = value.parse().map_err(|_| bad("an unsigned 64-bit integer"))?,
                "volume" => out.volume = value.parse().map_err(|_| bad("an unsigned 32-bit integer"))?,
                "span" if value.eq_ignore_ascii_case("max") => {
                    if !profiles::SMART_MAX_LBA.iter().any(|(n, _)| *n == profile.name) {
                        return Err(bad(
                            "a size: `max` is SMaRT Table 1's MAX LBA, known for mds, proj, stg and rsrch",
                        ));
                    }
                    out.span = Some(Span::Max);
                }
                "span" => {
                    let b: shingled_core::ByteSize =
                        value.parse().map_err(|_| bad("a size such as 40GB, or max"))?;
                    out.span = Some(Span::Bytes(b.0));
                }
                _ => unreachable!("every key in SPEC_KEYS is handled"),
            }
            Ok(())
        })?;
        let t = out.targets();
        if t.span_bytes < t.accessed_range_bytes {
            return Err(synth_err(
                spec,
                format!(
                    "span {} bytes is below the trace's accessed range ({} bytes at this scale); give at least that",
                    t.span_bytes, t.accessed_range_bytes
                ),
            ));
        }
        Ok(out)
    }

    fn profile_data(&self) -> &'static Profile {
        profiles::find(self.profile).expect("SynthSpec::profile is always a known profile")
    }

    /// The figures a trace of this specification reproduces.
    pub fn targets(&self) -> SynthTargets {
        self.targets_for(self.profile_data())
    }

    fn targets_for(&self, p: &Profile) -> SynthTargets {
        // The range shrinks with the scale but never below 64 blocks (256 KiB).
        let span = ((p.accessed_gb * 1e9 * self.scale / BLOCK_SIZE as f64).round() as u64).max(64);
        let written = ((span as f64 * p.written_gb / p.accessed_gb).round() as u64).clamp(1, span);
        let pages = self.pages.unwrap_or_else(|| ((p.pages as f64 * self.scale).round() as u64).max(1));
        SynthTargets {
            pages,
            write_fraction: p.write_pct / 100.0,
            accessed_range_bytes: span * BLOCK_SIZE,
            written_range_bytes: written * BLOCK_SIZE,
            distinct_blocks: (p.density * span as f64).round() as u64,
            mean_interarrival_ns: TRACE_SECONDS * 1e9 / p.orig_requests as f64,
            span_bytes: match self.span {
                None => span * BLOCK_SIZE,
                Some(Span::Bytes(b)) => b / BLOCK_SIZE * BLOCK_SIZE,
                Some(Span::Max) => {
                    let sectors =
                        profiles::SMART_MAX_LBA.iter().find(|(n, _)| *n == p.name).map_or(0, |x| x.1);
                    ((sectors as f64 * 512.0 * self.scale) as u64 / BLOCK_SIZE * BLOCK_SIZE)
                        .max(span * BLOCK_SIZE)
                }
            },
        }
    }
}

impl FromStr for SynthSpec {
    type Err = TraceError;
    fn from_str(s: &str) -> Result<Self, TraceError> {
        SynthSpec::parse(s)
    }
}

impl SynthTrace {
    /// Builds the trace of a parsed specification (allocates the layout, generates nothing).
    pub fn new(spec: &SynthSpec) -> SynthTrace {
        SynthTrace::build(spec, spec.profile_data())
    }

    /// Parses `spec` (the text after `synth:`) and builds the trace.
    pub fn from_spec(spec: &str) -> Result<SynthTrace, TraceError> {
        Ok(SynthTrace::new(&SynthSpec::parse(spec)?))
    }
}

/// Opens a synthetic trace from the text after `synth:`: an MSR profile (for example
/// `wdev,scale=0.1,seed=7`) or a constructed generator (`bursts,trickle=0.2`).
pub fn open_spec(spec: &str) -> Result<Box<dyn TraceReader>, TraceError> {
    let name = spec.split(',').next().unwrap_or("").trim();
    if name.eq_ignore_ascii_case(BURSTS) {
        return Ok(Box::new(BurstTrace::from_spec(spec)?));
    }
    Ok(Box::new(SynthTrace::from_spec(spec)?))
}
