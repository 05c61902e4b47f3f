//! Running simulations: sizing from the trace footprint, building the models, replaying,
//! and comparing schemes.

use crate::config::{CacheConfig, SimConfig, TraceSpec, Warmup};
use crate::engine::Engine;
use crate::histogram::Histogram;
use crate::metrics::{Counters, Metrics};
use crate::SimError;
use serde::{Deserialize, Serialize};
use shingled_cache::{Cache, PolicyContext};
use shingled_core::{BandConfig, ByteSize, SizeSpec, BLOCK_SIZE};
use shingled_device::{BuildContext, DriveConfig};
use shingled_trace::{TraceReader, TraceStats};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Instant;

/// How often (in trace requests) progress callbacks fire.
pub const PROGRESS_EVERY: u64 = 1 << 16;

/// Opens the configured trace.
pub fn open_trace(spec: &TraceSpec) -> Result<Box<dyn TraceReader>, SimError> {
    let format = match &spec.format {
        Some(f) => Some(f.parse().map_err(|e: shingled_trace::UnknownFormat| SimError::Config {
            field: "trace.format",
            reason: e.to_string(),
        })?),
        None => None,
    };
    let opts = shingled_trace::OpenOptions {
        format,
        volume: spec.volume,
        skip_bad_lines: spec.skip_bad_lines,
        params: spec.params.clone(),
        ..Default::default()
    };
    let reader = shingled_trace::open(&spec.path, &opts)?;
    if spec.lba_scale.is_none() && spec.fold.is_none() && spec.spread.is_none() {
        return Ok(reader);
    }
    let bad = |e: shingled_trace::TraceError| SimError::Config {
        field: "trace.lba_scale/fold/spread",
        reason: e.to_string(),
    };
    let mut r = shingled_trace::Rescaled::new(reader, spec.lba_scale.unwrap_or(1), spec.fold.map(|f| f.0))
        .map_err(bad)?;
    if let Some(s) = spec.spread {
        r = r.with_spread(s.0).map_err(bad)?;
    }
    Ok(Box::new(r))
}

/// [`open_trace`] for one pass through the whole trace: a text, compressed or generated trace is
/// decoded on another thread while the caller works ([`shingled_trace::decode_ahead`]: the same
/// requests, errors and counts).
pub fn open_trace_ahead(spec: &TraceSpec) -> Result<Box<dyn TraceReader>, SimError> {
    Ok(shingled_trace::decode_ahead(open_trace(spec)?))
}

/// One pass over the trace for its footprint (PORE Table I figures), which sizes the cache and
/// the persistent buffer. Honours `limit`. A `bin` trace's statistics are kept beside it
/// ([`crate::stats_file`]): read from there when current, written there after a pass.
pub fn measure(spec: &TraceSpec, bands: &BandConfig) -> Result<TraceStats, SimError> {
    measure_until(spec, bands, &std::sync::atomic::AtomicBool::new(false))
}

/// [`measure`] that stops with [`SimError::Cancelled`] once `stop` is set.
pub fn measure_until(
    spec: &TraceSpec,
    bands: &BandConfig,
    stop: &std::sync::atomic::AtomicBool,
) -> Result<TraceStats, SimError> {
    // A bad band layout is a configuration error, not a trace error (it is checked here because
    // measuring the trace's covered bands is its first use).
    bands.validate().map_err(|e| SimError::Config { field: "drive.bands", reason: e.to_string() })?;
    if let Some(s) = crate::stats_file::load(spec, bands) {
        return Ok(s);
    }
    let reader = open_trace_ahead(spec)?;
    let mut limited = Limited { inner: reader, left: spec.limit.unwrap_or(u64::MAX) };
    match shingled_trace::trace_stats(&mut shingled_trace::Interruptible::new(&mut limited, stop), bands) {
        Ok(s) => {
            crate::stats_file::save(spec, bands, &s);
            Ok(s)
        }
        Err(shingled_trace::TraceError::Interrupted { requests }) => Err(SimError::Cancelled { requests }),
        Err(e) => Err(e.into()),
    }
}

/// Stops a reader after `left` requests.
pub(crate) struct Limited {
    pub(crate) inner: Box<dyn TraceReader>,
    pub(crate) left: u64,
}

impl TraceReader for Limited {
    fn next_request(&mut self) -> Result<Option<shingled_trace::Request>, shingled_trace::TraceError> {
        if self.left == 0 {
            return Ok(None);
        }
        self.left -= 1;
        self.inner.next_request()
    }
    fn skipped(&self) -> u64 {
        self.inner.skipped()
    }
    fn filtered(&self) -> u64 {
        self.inner.filtered()
    }
    fn format_name(&self) -> &'static str {
        self.inner.format_name()
    }
}

/// The sizes a run resolved from its configuration and the trace footprint.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Sizing {
    /// Written LBA range (covered-band bytes) the fractions refer to; `None` when the run read
    /// the trace once, without measuring it first (every size absolute: [`needs_footprint`]).
    pub written_range: Option<ByteSize>,
    /// Accessed LBA range (covered-band bytes); `None` as for `written_range`.
    pub accessed_range: Option<ByteSize>,
    /// Cache capacity in 4 KiB blocks (0 without a cache).
    pub cache_blocks: u64,
    /// Persistent-buffer capacity in blocks, for DM-SMR drives.
    pub pb_blocks: Option<u64>,
    /// Drive costs given to the policy (fitted on the drive model unless configured).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub costs: Option<shingled_cache::SmrCosts>,
}

/// The result of one simulation.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct RunReport {
    /// Label (scheme name).
    pub label: String,
    /// Cache mode name.
    pub mode: String,
    /// Policy name, absent without a cache.
    pub policy: Option<String>,
    /// Drive model name.
    pub drive: String,
    /// Resolved sizes.
    pub sizing: Sizing,
    /// The whole run.
    pub total: Metrics,
    /// From the end of warm-up to the end (absent when no warm-up window applies).
    pub after_warmup: Option<Metrics>,
    /// Requests processed before the warm-up window began.
    pub warmup_requests: Option<u64>,
    /// Dirty blocks still in the cache at the end.
    pub dirty_left: u64,
    /// Malformed lines skipped (with `skip_bad_lines`).
    pub skipped_lines: u64,
    /// Host wall-clock seconds of the replay.
    pub wall_time_s: f64,
    /// Simulation speed: block requests replayed per wall-clock second.
    pub block_requests_per_s: f64,
    /// The distribution of request latency over the whole run (open loop: response time,
    /// queueing included), as CDF points `[ms, fraction]`: the upper edge of each non-empty
    /// histogram bucket (1/16 of its magnitude wide) and the fraction of requests at or below
    /// it. Enough to plot SMaRT's Figs. 3–5.
    #[serde(default)]
    pub latency_cdf: Vec<(f64, f64)>,
    /// The offline RMW bound for this trace, cache and PB (docs/bounds.md): computed by the
    /// pre-pass an offline policy's run makes, absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub offline_bound: Option<crate::bound::OfflineBound>,
    /// The configuration that produced this report.
    pub config: SimConfig,
    /// Metrics over time, one row per window of `config.interval` (absent without one).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub series: Option<Vec<crate::series::Window>>,
}

/// Requests read from the trace per call.
const READ_BATCH: usize = 64;
/// Look-ahead distances in requests: the index lines of the request this far ahead of the one
/// being replayed are prefetched ([`Engine::prefetch_far`]) …
const LOOK_FAR: usize = 8;
/// … and the request this far ahead is looked up, its hits' lines prefetched
/// ([`Engine::prefetch_near`]).
const LOOK_NEAR: usize = 3;

/// Sizes a run from its configuration and the trace footprint.
pub fn sizing(cfg: &SimConfig, stats: &TraceStats) -> Result<Sizing, SimError> {
    let written = stats.written_band_bytes.max(BLOCK_SIZE);
    let accessed = stats.accessed_band_bytes.max(written);
    let cache_blocks = match &cfg.cache {
        None => 0,
        Some(CacheConfig { size, .. }) => {
            if matches!(size, SizeSpec::Absolute(b) if b.0 < BLOCK_SIZE) {
                return Err(SimError::Config {
                    field: "cache.size",
                    reason: format!(
                        "{size} holds no 4 KiB block; give at least 4KiB (or run without a cache: --no-cache)"
                    ),
                });
            }
            let base = if cfg.mode.sized_by_written_range() { written } else { accessed };
            if let SizeSpec::Fraction(f) = size {
                if !(*f > 0.0 && *f <= 1.0) {
                    let range = if cfg.mode.sized_by_written_range() { "written" } else { "accessed" };
                    return Err(SimError::Config {
                        field: "cache.size",
                        reason: format!(
                            "{size} of the {range} range: a relative cache size is in (0%, 100%] (a cache \
                             larger than the whole range holds nothing more); give an absolute size for more"
                        ),
                    });
                }
            }
            size.resolve(base).blocks()
        }
    };
    if cache_blocks >= u32::MAX as u64 {
        return Err(SimError::Config {
            field: "cache.size",
            reason: format!("{cache_blocks} blocks is more than the 2^32-1 this build supports"),
        });
    }
    Ok(Sizing {
        written_range: Some(ByteSize(written)),
        accessed_range: Some(ByteSize(accessed)),
        cache_blocks,
        pb_blocks: cfg.drive.pb_blocks(ByteSize(written)),
        costs: None,
    })
}

/// Whether a run of `cfg` must know the trace's footprint before it starts: a cache or
/// persistent-buffer size relative to the written or accessed range, a warm-up given as a fraction
/// of the trace, or SMR costs fitted on the drive over the accessed range (SAC, PORE with the
/// default cost model). Otherwise [`run_once`] reads the trace once.
pub fn needs_footprint(cfg: &SimConfig) -> bool {
    let cache = cfg.cache.as_ref().is_some_and(|c| {
        !matches!(c.size, SizeSpec::Absolute(_))
            || (c.policy.needs_costs() && matches!(c.costs, crate::CostModel::Fitted))
    });
    let pb = matches!(cfg.drive, DriveConfig::DmSmr(_)) && cfg.drive.pb_blocks(ByteSize(0)).is_none();
    cache || pb || matches!(cfg.warmup, Warmup::Fraction(_))
}

/// The footprint a run of `cfg` should be given: measured (or read from the statistics kept
/// beside a `bin` trace) when [`needs_footprint`], otherwise the kept statistics if there are
/// any, else `None`: run it with [`run_once`], which reads the trace once.
pub fn footprint_for(
    cfg: &SimConfig,
    stop: &std::sync::atomic::AtomicBool,
) -> Result<Option<TraceStats>, SimError> {
    let bands = cfg.drive.bands_or_default();
    if needs_footprint(cfg) {
        return measure_until(&cfg.trace, &bands, stop).map(Some);
    }
    bands.validate().map_err(|e| SimError::Config { field: "drive.bands", reason: e.to_string() })?;
    Ok(crate::stats_file::load(&cfg.trace, &bands))
}

/// A run's footprint ([`footprint_keeping`]) and, when measuring it meant parsing a text (or
/// otherwise costly) trace, the requests as parsed, kept for the replay.
pub struct Footprint {
    /// The trace's statistics.
    pub stats: TraceStats,
    kept: Option<KeptTrace>,
}

impl Footprint {
    /// Whether the replay will read the requests kept by the measuring pass rather than the
    /// trace itself.
    pub fn is_kept(&self) -> bool {
        self.kept.is_some()
    }
}

/// The requests of a trace as its measuring pass parsed them, in the `bin` format in a temporary
/// file that is unlinked as soon as it is created (so nothing is left behind, whatever happens).
struct KeptTrace {
    file: std::fs::File,
    format: &'static str,
    skipped: u64,
    filtered: u64,
}

/// Hands each request the statistics read to a `bin` writer; a failed write (a full temporary
/// folder) stops the copy, not the measuring.
struct Tee<'a> {
    inner: &'a mut dyn TraceReader,
    out: Option<shingled_trace::BinaryWriter<std::io::BufWriter<std::fs::File>>>,
}

impl TraceReader for Tee<'_> {
    fn next_request(&mut self) -> Result<Option<shingled_trace::Request>, shingled_trace::TraceError> {
        let r = self.inner.next_request()?;
        if let (Some(r), Some(w)) = (&r, self.out.as_mut()) {
            if w.write(r).is_err() {
                self.out = None;
            }
        }
        Ok(r)
    }
    fn skipped(&self) -> u64 {
        self.inner.skipped()
    }
    fn filtered(&self) -> u64 {
        self.inner.filtered()
    }
    fn format_name(&self) -> &'static str {
        self.inner.format_name()
    }
}

/// A temporary file in the temporary folder, already unlinked.
fn anonymous_file() -> Option<std::fs::File> {
    tempfile::tempfile().ok()
}

/// [`measure_until`] that also keeps the requests it parsed when the trace is neither a `bin`
/// file (cheap to read again) nor synthetic (cheap to generate again), so that the replay need
/// not parse the trace a second time. Without a writable temporary folder the copy is skipped
/// and the replay reads the trace again.
fn measure_keeping(
    spec: &TraceSpec,
    bands: &BandConfig,
    stop: &std::sync::atomic::AtomicBool,
) -> Result<Footprint, SimError> {
    bands.validate().map_err(|e| SimError::Config { field: "drive.bands", reason: e.to_string() })?;
    if let Some(s) = crate::stats_file::load(spec, bands) {
        return Ok(Footprint { stats: s, kept: None });
    }
    let reader = open_trace_ahead(spec)?;
    let format = reader.format_name();
    let costly = !matches!(format, "bin" | "synth");
    let mut file = if costly { anonymous_file() } else { None };
    let out = match file.as_mut().map(|f| f.try_clone()) {
        Some(Ok(f)) => shingled_trace::BinaryWriter::new(
            std::io::BufWriter::with_capacity(1 << 20, f),
            std::path::PathBuf::from("(kept copy)"),
            0,
        )
        .ok(),
        _ => None,
    };
    let mut limited = Limited { inner: reader, left: spec.limit.unwrap_or(u64::MAX) };
    let mut tee = Tee { inner: &mut limited, out };
    let stats =
        match shingled_trace::trace_stats(&mut shingled_trace::Interruptible::new(&mut tee, stop), bands) {
            Ok(s) => s,
            Err(shingled_trace::TraceError::Interrupted { requests }) => {
                return Err(SimError::Cancelled { requests })
            }
            Err(e) => return Err(e.into()),
        };
    crate::stats_file::save(spec, bands, &stats);
    let written = tee.out.take().map(|w| w.finish_unsized());
    let flushed = match written {
        Some(Ok((buf, n))) => n == stats.requests && buf.into_inner().is_ok(),
        _ => false,
    };
    let kept = match file {
        Some(mut f) if flushed => {
            use std::io::Seek;
            f.rewind().ok().map(|_| KeptTrace {
                file: f,
                format,
                skipped: stats.skipped,
                filtered: stats.filtered,
            })
        }
        _ => None,
    };
    Ok(Footprint { stats, kept })
}

/// The kept requests as a reader that reports the original trace's skipped and filtered
/// counts.
struct KeptReader {
    inner: Box<dyn TraceReader>,
    skipped: u64,
    filtered: u64,
    format: &'static str,
}

impl TraceReader for KeptReader {
    fn next_request(&mut self) -> Result<Option<shingled_trace::Request>, shingled_trace::TraceError> {
        self.inner.next_request()
    }
    fn next_batch(
        &mut self,
        out: &mut Vec<shingled_trace::Request>,
        max: usize,
    ) -> Result<usize, shingled_trace::TraceError> {
        self.inner.next_batch(out, max)
    }
    fn skipped(&self) -> u64 {
        self.skipped
    }
    fn filtered(&self) -> u64 {
        self.filtered
    }
    fn format_name(&self) -> &'static str {
        self.format
    }
}

/// [`footprint_for`] that reads a text trace once: when the run needs the footprint and it is
/// not kept beside the trace, the measuring pass keeps the parsed requests (in the `bin` format,
/// in an unlinked temporary file) and [`run_footprint`] replays them instead of parsing the
/// trace again. `None` when the run needs no footprint and none is kept: [`run_footprint`] then
/// reads the trace once, during the replay.
pub fn footprint_keeping(
    cfg: &SimConfig,
    stop: &std::sync::atomic::AtomicBool,
) -> Result<Option<Footprint>, SimError> {
    if needs_footprint(cfg) {
        return measure_keeping(&cfg.trace, &cfg.drive.bands_or_default(), stop).map(Some);
    }
    Ok(footprint_for(cfg, stop)?.map(|stats| Footprint { stats, kept: None }))
}

/// Runs one simulation on what [`footprint_keeping`] returned: the kept requests if any, else
/// the trace (sized by the footprint when there is one, else read once by [`run_once`]).
pub fn run_footprint(
    cfg: &SimConfig,
    footprint: Option<Footprint>,
    progress: &mut dyn FnMut(u64),
    cancel: Option<&std::sync::atomic::AtomicBool>,
) -> Result<RunReport, SimError> {
    match footprint {
        None => run_once(cfg, progress, cancel),
        Some(Footprint { stats, kept: None }) => run_with(cfg, &stats, progress, cancel),
        Some(Footprint { stats, kept: Some(k) }) => {
            let opts = shingled_trace::OpenOptions {
                format: Some(shingled_trace::Format::Bin),
                ..Default::default()
            };
            let name = std::path::PathBuf::from(format!("{} (kept copy)", cfg.trace.path));
            let inner = shingled_trace::open_stream(Box::new(k.file), &name, &opts)?;
            let reader = KeptReader { inner, skipped: k.skipped, filtered: k.filtered, format: k.format };
            replay(cfg, Some(&stats), progress, cancel, Some(Box::new(reader)))
        }
    }
}

/// Runs one simulation. `stats` is the trace footprint from [`measure`] (pass it in so that a
/// comparison measures once); `progress` receives the number of trace requests read so far,
/// every [`PROGRESS_EVERY`] requests.
pub fn run(
    cfg: &SimConfig,
    stats: &TraceStats,
    progress: &mut dyn FnMut(u64),
) -> Result<RunReport, SimError> {
    run_with(cfg, stats, progress, None)
}

/// [`run`] that stops with [`SimError::Cancelled`] soon after `cancel` becomes true (it is
/// checked every [`PROGRESS_EVERY`] requests, right after the progress callback, so a callback
/// can set it — e.g. on Ctrl-C).
pub fn run_with(
    cfg: &SimConfig,
    stats: &TraceStats,
    progress: &mut dyn FnMut(u64),
    cancel: Option<&std::sync::atomic::AtomicBool>,
) -> Result<RunReport, SimError> {
    replay(cfg, Some(stats), progress, cancel, None)
}

/// [`run_with`] replaying `reader` instead of opening `cfg.trace` (a sample held in memory:
/// [`crate::curve`]). `stats` sizes the run as for [`run`]; `cfg.trace.limit` still applies.
pub(crate) fn run_reader_with(
    cfg: &SimConfig,
    stats: &TraceStats,
    reader: Box<dyn TraceReader>,
    progress: &mut dyn FnMut(u64),
    cancel: Option<&std::sync::atomic::AtomicBool>,
) -> Result<RunReport, SimError> {
    replay(cfg, Some(stats), progress, cancel, Some(reader))
}

/// [`run_with`] without a footprint: the trace is read once, by the replay itself. For
/// configurations whose every size is absolute ([`needs_footprint`] is false; otherwise a
/// [`SimError::Config`] says which size needs it). The report's written and accessed ranges are
/// then `None` (not measured), and a request beyond the drive's capacity stops the run when it
/// is read.
pub fn run_once(
    cfg: &SimConfig,
    progress: &mut dyn FnMut(u64),
    cancel: Option<&std::sync::atomic::AtomicBool>,
) -> Result<RunReport, SimError> {
    if needs_footprint(cfg) {
        return Err(SimError::Config {
            field: "cache.size",
            reason: "a relative cache or PB size, a fractional warm-up or fitted SMR costs need the \
                     trace's footprint; measure it first (run_with)"
                .into(),
        });
    }
    replay(cfg, None, progress, cancel, None)
}

/// The sizes of a run whose sizes are all absolute (no footprint).
fn absolute_sizing(cfg: &SimConfig) -> Result<Sizing, SimError> {
    let mut s = sizing(cfg, &TraceStats::default())?;
    s.written_range = None;
    s.accessed_range = None;
    Ok(s)
}

fn replay(
    cfg: &SimConfig,
    stats: Option<&TraceStats>,
    progress: &mut dyn FnMut(u64),
    cancel: Option<&std::sync::atomic::AtomicBool>,
    source: Option<Box<dyn TraceReader>>,
) -> Result<RunReport, SimError> {
    let mut sizing = match stats {
        Some(stats) => sizing(cfg, stats)?,
        None => absolute_sizing(cfg)?,
    };
    if !(cfg.time_scale.is_finite() && cfg.time_scale > 0.0) {
        return Err(SimError::Config {
            field: "time_scale",
            reason: format!(
                "{}: expected a finite number > 0 (1 replays the trace's own timing)",
                cfg.time_scale
            ),
        });
    }
    let capacity = cfg.drive.capacity();
    let beyond = |end: u64| match capacity {
        Some(cap) if end > cap.0 => Err(SimError::Config {
            field: "drive.capacity",
            reason: format!("the trace reaches byte {end} but the drive holds {cap}; raise drive.capacity"),
        }),
        _ => Ok(()),
    };
    if let Some(stats) = stats {
        beyond(stats.max_end)?;
    }
    let ctx = BuildContext {
        written_range: sizing.written_range.unwrap_or_default(),
        accessed_range: sizing.accessed_range.unwrap_or_default(),
    };
    let mut drive = cfg.drive.build(&ctx)?;
    // Every block lies below the trace's end (checked above against the drive) and the drive's
    // capacity; either bound lets block-keyed structures be direct arrays. Not where the
    // statistics show a sparse span (under a quarter of its blocks accessed): an array's pages
    // would be touched all over for few blocks, the memory and first touches outweighing what
    // it saves (CloudPhysics sample: 3% of an 8.2 M-block span accessed, peak RSS 13 → 67 MB
    // and no faster with the arrays).
    let dense_enough = stats.is_none_or(|s| s.accessed_distinct_bytes.saturating_mul(4) >= s.max_end);
    let span = [stats.map(|s| s.max_end), capacity.map(|c| c.0)]
        .into_iter()
        .flatten()
        .min()
        .filter(|_| dense_enough)
        .map(|end| end.div_ceil(shingled_core::BLOCK_SIZE));
    if let Some(span) = span {
        drive.expect_span(span);
    }
    let ssd = cfg.ssd.build()?;
    let cache = match &cfg.cache {
        None => None,
        Some(c) => {
            let costs = match c.costs {
                crate::CostModel::Fitted if !c.policy.needs_costs() => shingled_cache::SmrCosts::PAPER,
                crate::CostModel::Fitted => crate::fit_costs(&cfg.drive, &ctx)?,
                crate::CostModel::Paper => shingled_cache::SmrCosts::PAPER,
                crate::CostModel::Custom(x) => x,
            };
            if c.policy.needs_costs() {
                sizing.costs = Some(costs);
            }
            let pctx = PolicyContext {
                block_span: span,
                capacity_blocks: sizing.cache_blocks as u32,
                bands: drive.band_map().cloned().map(Arc::new),
                pb_blocks: sizing.pb_blocks,
                seed: 0,
                costs,
            };
            Some(Cache::with_span(sizing.cache_blocks as u32, c.policy.build(&pctx)?, span))
        }
    };
    let has_cache = cache.is_some();
    let warm_at = match cfg.warmup {
        Warmup::Requests(n) => Some(n),
        Warmup::Fraction(f) => Some((stats.map_or(0, |s| s.requests) as f64 * f) as u64),
        _ => None,
    };
    // An offline policy: the trace's future from a pass over it first (the same trace, limit
    // and mode), with the offline RMW bound computed on the way.
    let prepass = match &cfg.cache {
        Some(c) if c.policy.needs_future() => {
            let sizes = crate::future::Sizes {
                cache_blocks: sizing.cache_blocks,
                pb_blocks: sizing.pb_blocks,
                warm_at,
            };
            Some(crate::future::prepass_reader(
                open_trace_ahead(&cfg.trace)?,
                cfg.trace.limit,
                cfg.mode,
                drive.band_map(),
                sizes,
            )?)
        }
        _ => None,
    };
    let (future, offline_bound) = match prepass {
        Some(p) => (Some(p.future), p.bound),
        None => (None, None),
    };
    let future_status = future.as_ref().map(|f| f.status());
    let mut engine = Engine::new(cfg.mode, cache, ssd, drive)
        .with_io_unit(cfg.io_unit)
        .with_replay(cfg.replay, cfg.time_scale);
    if let Some(f) = future {
        engine = engine.with_future(Box::new(f));
    }
    let mut reader = match source {
        Some(r) => r,
        None => open_trace_ahead(&cfg.trace)?,
    };
    let limit = cfg.trace.limit.unwrap_or(u64::MAX);
    let mut warm: Option<(u64, Counters, Histogram)> = None;
    let mut series = crate::series::Recorder::new(cfg, stats, reader.format_name())?;
    let started = Instant::now();
    let mut read = 0u64;
    // Requests are read a batch at a time and looked up ahead of their replay in two stages
    // (`Engine::prefetch_far`, `Engine::prefetch_near`), so that their cache misses overlap
    // with the replay of the requests before them instead of stalling it; only where the cache
    // outgrows the core's caches (`Engine::looks_ahead_at_requests`).
    let mut buf: Vec<shingled_trace::Request> = Vec::with_capacity(READ_BATCH + LOOK_FAR);
    let mut next = 0usize;
    let mut fetched = 0u64;
    let mut at_end = false;
    let look_ahead = engine.looks_ahead_at_requests();
    loop {
        if !at_end && buf.len() - next <= LOOK_FAR {
            buf.drain(..next);
            next = 0;
            // One call per batch (a `bin` trace decodes it in one loop), up to the limit.
            let want = (READ_BATCH as u64).min(limit - fetched) as usize;
            let got = if want > 0 { reader.next_batch(&mut buf, want)? } else { 0 };
            if stats.is_none() {
                let fresh = &buf[buf.len() - got..];
                beyond(fresh.iter().map(|r| r.offset.saturating_add(r.len as u64)).max().unwrap_or(0))?;
            }
            fetched += got as u64;
            at_end = got == 0;
        }
        let Some(&req) = buf.get(next) else { break };
        if look_ahead {
            if let Some(r) = buf.get(next + LOOK_FAR) {
                engine.prefetch_far(r);
            }
            if let Some(r) = buf.get(next + LOOK_NEAR) {
                engine.prefetch_near(r);
            }
        }
        next += 1;
        read += 1;
        if let Some(s) = series.as_mut() {
            s.before(&engine, &req)?;
        }
        engine.process(&req);
        if warm.is_none() {
            let done = match (cfg.warmup, warm_at) {
                (_, Some(n)) => engine.counters_requests() >= n,
                (Warmup::CacheFull, None) => has_cache && engine.cache().is_some_and(|c| c.table().is_full()),
                _ => false,
            };
            if done {
                warm = Some((engine.counters_requests(), engine.counters(), engine.latency().clone()));
            }
        }
        if read.is_multiple_of(PROGRESS_EVERY) {
            progress(read);
            if cancel.is_some_and(|c| c.load(Ordering::Relaxed)) {
                return Err(SimError::Cancelled { requests: read });
            }
        }
    }
    progress(read);
    if let Some(s) = &future_status {
        s.check()?;
    }
    let wall = started.elapsed().as_secs_f64();
    let total_c = engine.counters();
    let blocks = total_c.blocks_read + total_c.blocks_written;
    let after = warm.as_ref().map(|(_, c, h)| Metrics::new(total_c.since(c), &engine.latency().since(h)));
    Ok(RunReport {
        label: cfg.display_label(),
        mode: cfg.mode.name().to_string(),
        policy: cfg.cache.as_ref().map(|c| c.policy.name().to_string()),
        drive: cfg.drive.short_name().to_string(),
        sizing,
        total: Metrics::new(total_c, engine.latency()),
        after_warmup: after,
        warmup_requests: warm.map(|(n, _, _)| n),
        dirty_left: engine.cache().map(|c| c.table().dirty_len() as u64).unwrap_or(0),
        skipped_lines: reader.skipped(),
        wall_time_s: wall,
        block_requests_per_s: if wall > 0.0 { blocks as f64 / wall } else { 0.0 },
        latency_cdf: engine.latency().cdf(),
        offline_bound,
        config: cfg.clone(),
        series: series.map(|s| s.finish(&engine)).transpose()?,
    })
}

/// A comparison of schemes on one trace.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct CompareReport {
    /// The trace's footprint.
    pub trace: TraceStats,
    /// The trace path or synthetic spec.
    pub trace_path: String,
    /// One report per scheme, in the order asked.
    pub runs: Vec<RunReport>,
    /// The set-up the comparison ran in ([`crate::setup::describe`]).
    #[serde(default)]
    pub setup: String,
    /// The paper's headline figures beside ours, when the comparison ran in a paper's set-up.
    #[serde(default)]
    pub paper: Vec<crate::claim::Claim>,
}

impl CompareReport {
    /// The run labelled `label`.
    pub fn run(&self, label: &str) -> Option<&RunReport> {
        self.runs.iter().find(|r| r.label == label)
    }

    /// Total I/O time of `label` divided by that of each run: the speed-up of each run against
    /// `label` (`None` when `label` is absent).
    pub fn speedup_vs(&self, label: &str, of: &RunReport) -> Option<f64> {
        let base = self.run(label)?.total.total_time_s;
        (of.total.total_time_s > 0.0).then(|| base / of.total.total_time_s)
    }
}

/// Where a batch of runs stands, for progress displays.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Progress {
    /// Trace requests read so far, over all runs.
    pub requests: u64,
    /// Trace requests all runs will read (known once the traces are measured; 0 before).
    pub requests_total: u64,
    /// Runs finished.
    pub runs_done: usize,
    /// Runs in all.
    pub runs: usize,
}

impl Progress {
    /// A one-line summary: runs finished, requests (in millions) and percentage.
    pub fn line(&self) -> String {
        let m = |n: u64| format!("{:.1} M", n as f64 / 1e6);
        let pct = if self.requests_total > 0 {
            format!(" ({:.0}%)", 100.0 * self.requests as f64 / self.requests_total as f64)
        } else {
            String::new()
        };
        format!(
            "{}/{} runs finished, {}/{} requests{pct}",
            self.runs_done,
            self.runs,
            m(self.requests),
            if self.requests_total > 0 { m(self.requests_total) } else { "?".into() }
        )
    }
}

/// Runs every configuration, `jobs` at a time on separate threads, measuring each distinct
/// trace (and band layout) once. Returns the reports in the order of `configs`, and the trace
/// statistics of each distinct trace in order of first appearance. `progress` receives the
/// total trace requests read over all runs so far.
pub fn run_all(
    configs: &[SimConfig],
    jobs: usize,
    progress: &(dyn Fn(u64) + Sync),
) -> Result<(Vec<RunReport>, Vec<TraceStats>), SimError> {
    run_all_with(configs, jobs, &|p: Progress| progress(p.requests))
}

/// [`run_all`] reporting a [`Progress`]: once after the traces are measured (with the total
/// known), then as requests are read and as runs finish.
pub fn run_all_with(
    configs: &[SimConfig],
    jobs: usize,
    progress: &(dyn Fn(Progress) + Sync),
) -> Result<(Vec<RunReport>, Vec<TraceStats>), SimError> {
    let key =
        |c: &SimConfig| serde_json::to_string(&(&c.trace, c.drive.bands_or_default())).expect("serializable");
    let mut keys: Vec<String> = Vec::new();
    let mut stats: Vec<TraceStats> = Vec::new();
    let mut which: Vec<usize> = Vec::with_capacity(configs.len());
    for c in configs {
        let k = key(c);
        match keys.iter().position(|x| *x == k) {
            Some(i) => which.push(i),
            None => {
                stats.push(measure(&c.trace, &c.drive.bands_or_default())?);
                keys.push(k);
                which.push(stats.len() - 1);
            }
        }
    }
    let done = AtomicU64::new(0);
    let runs_done = AtomicUsize::new(0);
    let requests_total: u64 = configs
        .iter()
        .zip(&which)
        .map(|(c, &w)| c.trace.limit.map_or(stats[w].requests, |l| l.min(stats[w].requests)))
        .sum();
    let snapshot = |requests: u64, finished: usize| Progress {
        requests,
        requests_total,
        runs_done: finished,
        runs: configs.len(),
    };
    progress(snapshot(0, 0));
    let results = crate::parallel::parallel(configs.len(), jobs, |i| {
        let mut last = 0u64;
        let r = run(&configs[i], &stats[which[i]], &mut |n| {
            let total = done.fetch_add(n - last, Ordering::Relaxed) + (n - last);
            last = n;
            progress(snapshot(total, runs_done.load(Ordering::Relaxed)));
        });
        let finished = runs_done.fetch_add(1, Ordering::Relaxed) + 1;
        progress(snapshot(done.load(Ordering::Relaxed), finished));
        r
    });
    let runs = results.into_iter().collect::<Result<Vec<_>, _>>()?;
    Ok((runs, stats))
}

/// Convenience for tests and bindings: measure then run, reading the trace's file once
/// ([`footprint_keeping`]).
pub fn simulate(cfg: &SimConfig) -> Result<RunReport, SimError> {
    let footprint = footprint_keeping(cfg, &std::sync::atomic::AtomicBool::new(false))?;
    run_footprint(cfg, footprint, &mut |_| {}, None)
}

#[allow(dead_code)]
fn _assert_send() {
    fn is_send<T: Send>() {}
    is_send::<RunReport>();
    is_send::<DriveConfig>();
}
