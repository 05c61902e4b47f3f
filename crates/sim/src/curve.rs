//! Whole curves — hit ratio, write amplification, RMWs, I/O time — over cache sizes and PB sizes,
//! for any policy, from small sampled simulations (MiniSim, Waldspurger et al., USENIX ATC '17,
//! with band-preserving spatial sampling after SHARDS, Waldspurger et al., FAST '15).
//!
//! How a point is computed (docs/curves.md says the same for users):
//!
//! 1. The full trace is measured once ([`crate::measure`]); relative sizes (`2%`, `1/256`)
//!    resolve against the *full* footprint, as a full run would.
//! 2. The trace is read once per sample (a rate `r` and a seed) through [`Sampled`]: whole units
//!    (the drive's bands by default, or fixed zones) are kept with probability `r`, every block
//!    of a kept unit stays, LBAs do not move. The sample is held in memory (at rate 1 there is
//!    none: every point streams the trace as a full run does).
//! 3. Each grid point replays the sample with its sizes scaled by `r`: cache blocks, PB blocks
//!    and PB entries, a warm-up request count, and PORE's period or SAC's cycle when given in
//!    blocks (given relative to the PB, the default, they follow the scaled PB), each rounded and
//!    at least 1. The drive, its band map and SAC's fitted costs are those of the full run.
//! 4. Counts (requests, blocks, evictions, PB writes, RMWs, band bytes) and modelled times are
//!    divided by `r` (times the number of samples averaged); ratios (hit ratios, WA) are taken
//!    from the summed counts as measured.
//!
//! Where this is exact and where it is an estimate:
//! - At `r = 1` a sampled point *is* the full simulation (nothing is cut or scaled).
//! - The hit ratio of LRU is exact over all sizes from [`StackDistances`] (one pass, no
//!   sampling); a sampled LRU point is an estimate of it whose error shrinks with the number of
//!   sampled bands (SHARDS' argument holds for any stack algorithm, applied per unit).
//! - Band-aware policies (MOST, SAC, PORE's zones), the PB's FIFO cleaning order, WA, RMWs and
//!   modelled time are estimates: a scaled PB holds the same share of each sampled band's
//!   blocks, but which bands compete for it and when the drive cleans change with the sample.
//!   The modelled time also carries per-request costs (seeks between sampled bands are longer).
//!   [`CurveOptions::validate`] measures the error against full simulations; docs/benchmarks.md
//!   records it per policy, metric and rate.
//!
//! Only closed-loop replays are sampled: open-loop arrivals (queueing, idle-time cleaning)
//! depend on the load, which sampling thins.

use crate::config::{SimConfig, Warmup};
use crate::metrics::Counters;
use crate::parallel::parallel;
use crate::run::{open_trace_ahead, sizing, Limited, PROGRESS_EVERY};
use crate::sample::{InMemory, Sampled, Selector, Units};
use crate::stack::StackDistances;
use crate::{CostModel, ParseError, Replay, SimError};
use serde::{Deserialize, Serialize};
use shingled_cache::PolicyConfig;
use shingled_core::{BandMap, ByteSize, SizeSpec, BLOCK_SIZE};
use shingled_device::{BuildContext, DriveConfig};
use shingled_trace::{Request, TraceStats};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Instant;

mod options;
mod points;
mod sampling;
#[cfg(test)]
mod tests;

pub use options::*;
pub use points::*;
use sampling::*;

/// One cell of the grid before it runs.
struct Cell {
    policy: String,
    cache_size: SizeSpec,
    pb_size: Option<SizeSpec>,
    /// The full-size configuration.
    full: SimConfig,
    cache_blocks: u64,
    pb_blocks: Option<u64>,
}

fn bad(field: &'static str, reason: impl Into<String>) -> SimError {
    SimError::Config { field, reason: reason.into() }
}

/// Most samples averaged per point (`--samples`).
pub const MAX_SAMPLES: u32 = 64;

/// Checks the options against `base`; every error names the option.
fn check(base: &SimConfig, o: &CurveOptions) -> Result<(), SimError> {
    if let Rate::Fixed(r) = o.rate {
        if !(r > 0.0 && r <= 1.0) {
            return Err(bad("curve.rate", format!("{r}: must be in (0, 1]")));
        }
    }
    if o.samples == 0 {
        return Err(bad("curve.samples", "at least one sample per point"));
    }
    if o.samples > MAX_SAMPLES {
        // Every sample is held in memory while the points replay it.
        return Err(bad(
            "curve.samples",
            format!("{}: at most {MAX_SAMPLES} samples per point (each is held in memory)", o.samples),
        ));
    }
    if base.replay != Replay::Closed {
        return Err(bad(
            "replay",
            "curves sample closed-loop replays only: open-loop queueing and idle time depend on the load, \
             which sampling thins",
        ));
    }
    if !o.pb_sizes.is_empty() && !matches!(base.drive, DriveConfig::DmSmr(_)) {
        return Err(bad("curve.pb_sizes", "PB sizes need a DM-SMR drive"));
    }
    if let Unit::Zone(z) = o.unit {
        if z.0 < BLOCK_SIZE {
            return Err(bad("curve.unit", format!("zone:{z} holds no 4 KiB block")));
        }
    }
    Ok(())
}

/// The grid's cells at full size.
fn cells(base: &SimConfig, o: &CurveOptions, stats: &TraceStats) -> Result<Vec<Cell>, SimError> {
    let base_cache = base.cache.clone().unwrap_or_default();
    let sizes = if o.cache_sizes.is_empty() { vec![base_cache.size] } else { o.cache_sizes.clone() };
    let pbs: Vec<Option<SizeSpec>> = match &base.drive {
        DriveConfig::DmSmr(d) if o.pb_sizes.is_empty() => vec![Some(d.pb_size)],
        DriveConfig::DmSmr(_) => o.pb_sizes.iter().copied().map(Some).collect(),
        _ => vec![None],
    };
    let mut out = Vec::new();
    for p in &o.policies {
        let policy: PolicyConfig =
            p.parse().map_err(|e: shingled_cache::PolicyError| bad("curve.policies", e.to_string()))?;
        for size in &sizes {
            for pb in &pbs {
                let mut cfg = base.clone();
                cfg.cache =
                    Some(crate::CacheConfig { size: *size, policy: policy.clone(), ..base_cache.clone() });
                if let (Some(pb), DriveConfig::DmSmr(d)) = (pb, &mut cfg.drive) {
                    d.pb_size = *pb;
                }
                cfg.label = Some(p.clone());
                let s = sizing(&cfg, stats)?;
                out.push(Cell {
                    policy: p.clone(),
                    cache_size: *size,
                    pb_size: *pb,
                    full: cfg,
                    cache_blocks: s.cache_blocks,
                    pb_blocks: s.pb_blocks,
                });
            }
        }
    }
    Ok(out)
}

/// A size as people write it: a relative size as a percentage of at most four decimals
/// (`3.5%`, not `3.5000000000000004%`), else as one N-th (`1/256`) when it is one, else as a
/// percentage.
pub fn size_label(s: &SizeSpec) -> String {
    match *s {
        SizeSpec::Fraction(x) => {
            let pct = format!("{:.6}", x * 100.0);
            let pct = pct.trim_end_matches('0').trim_end_matches('.');
            let inv = 1.0 / x;
            let decimals = pct.split('.').nth(1).map_or(0, str::len);
            if decimals > 4 && (inv - inv.round()).abs() < 1e-9 {
                format!("1/{}", inv.round() as u64)
            } else {
                format!("{pct}%")
            }
        }
        SizeSpec::Absolute(_) => s.to_string(),
    }
}

/// `x × r` rounded, at least 1.
fn scaled(x: u64, r: f64) -> u64 {
    ((x as f64 * r).round() as u64).max(1)
}

/// How a sample relates to the full trace: the factors sizes and counts are scaled by. Each is
/// the nominal rate in expectation; measuring them on the sample (SHARDS' adjustment) removes
/// the error of having kept more or fewer, larger or smaller, busier or quieter units than `r`.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Scale {
    /// The sample's share of the distinct blocks the cache is sized by (accessed blocks; written
    /// blocks in the write-caching modes): multiplies cache sizes and cache-relative lengths.
    pub cache: f64,
    /// The sample's share of the distinct written blocks: multiplies PB sizes and PB-like lengths.
    pub pb: f64,
    /// The sample's share of the block requests: divides counts and times, multiplies warm-up
    /// request counts.
    pub traffic: f64,
}

impl Scale {
    /// The same factor for everything (no adjustment).
    pub fn uniform(r: f64) -> Scale {
        Scale { cache: r, pb: r, traffic: r }
    }
}

/// The configuration of `cell`'s mini-simulation on a sample scaled by `k` (costs already
/// fixed).
fn scaled_config(cell: &Cell, k: Scale) -> Result<SimConfig, SimError> {
    let mut cfg = cell.full.clone();
    cfg.trace.limit = None; // the sample was cut at the limit already
                            // A sample's windows would not be the trace's: a mini-simulation records no series.
    cfg.interval = None;
    let cache = cfg.cache.as_mut().expect("every cell has a cache");
    cache.size = SizeSpec::Absolute(ByteSize(scaled(cell.cache_blocks, k.cache) * BLOCK_SIZE));
    let mut policy = serde_json::to_value(&cache.policy).expect("policies serialize");
    if let Some(map) = policy.as_object_mut() {
        for (f, r) in SCALED_FIELDS.iter().zip([k.pb, k.pb, k.cache, k.cache]) {
            if let Some(n) = map.get(*f).and_then(|v| v.as_u64()) {
                map.insert(f.to_string(), scaled(n, r).into());
            }
        }
    }
    cache.policy = serde_json::from_value(policy).map_err(|e| bad("cache.policy", e.to_string()))?;
    if let (Some(pb), DriveConfig::DmSmr(d)) = (cell.pb_blocks, &mut cfg.drive) {
        d.pb_size = SizeSpec::Absolute(ByteSize(scaled(pb, k.pb) * BLOCK_SIZE));
        d.pb_max_entries = d.pb_max_entries.map(|e| scaled(e, k.pb));
    }
    if let Warmup::Requests(n) = cfg.warmup {
        cfg.warmup = Warmup::Requests((n as f64 * k.traffic).round() as u64);
    }
    Ok(cfg)
}

/// The sampling units of `base`'s drive.
fn units_of(base: &SimConfig, unit: Unit) -> Result<Units, SimError> {
    Ok(match unit {
        Unit::Zone(z) => Units::Zones(z.blocks().max(1)),
        Unit::Band => {
            let cap = base.drive.capacity().unwrap_or(ByteSize(1 << 40));
            let map = BandMap::build(&base.drive.bands_or_default(), cap)
                .map_err(|e| bad("drive.bands", e.to_string()))?;
            Units::Bands(Arc::new(map))
        }
    })
}

/// Units the full trace touches: its bands (counted when it was measured), or for zones an
/// estimate from its covered-band bytes.
fn units_touched(stats: &TraceStats, units: &Units) -> u64 {
    match units {
        Units::Bands(_) => stats.accessed_bands.max(1),
        Units::Zones(z) => {
            ((stats.accessed_band_bytes as f64 / (z * BLOCK_SIZE) as f64).round() as u64).max(1)
        }
    }
}

/// The rate of `o` for a trace touching `touched` units whose smallest cache is `min_cache`
/// blocks.
pub fn resolve_rate(rate: Rate, touched: u64, min_cache: u64) -> f64 {
    match rate {
        Rate::Fixed(r) => r,
        Rate::Auto => (AUTO_MIN_UNITS / touched.max(1) as f64)
            .max(AUTO_MIN_CACHE_BLOCKS / min_cache.max(1) as f64)
            .clamp(AUTO_MIN_RATE, 1.0),
    }
}

/// Where a curve stands, for progress displays.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CurveProgress {
    /// What is being done: `measuring` (the footprint pass), `counting` (each unit's traffic,
    /// stratified sampling), `sampling` (reading the samples), `simulating` (the
    /// mini-simulations, the validated full runs and the exact LRU pass).
    pub phase: &'static str,
    /// Trace requests the phase has read or replayed so far, over all its passes and
    /// simulations.
    pub requests: u64,
    /// Requests the phase reads or replays in all (0 while unknown: `measuring`).
    pub requests_total: u64,
    /// Simulations finished.
    pub runs_done: usize,
    /// Simulations in all.
    pub runs: usize,
}

/// Requests of a phase counted from many threads, reported as they go.
struct Ticker<'a> {
    phase: &'static str,
    requests: std::sync::atomic::AtomicU64,
    requests_total: u64,
    runs_done: AtomicUsize,
    runs: usize,
    progress: &'a (dyn Fn(CurveProgress) + Sync),
}

impl<'a> Ticker<'a> {
    fn new(
        phase: &'static str,
        requests_total: u64,
        runs: usize,
        progress: &'a (dyn Fn(CurveProgress) + Sync),
    ) -> Ticker<'a> {
        let t = Ticker {
            phase,
            requests: Default::default(),
            requests_total,
            runs_done: AtomicUsize::new(0),
            runs,
            progress,
        };
        t.report();
        t
    }

    fn report(&self) {
        (self.progress)(CurveProgress {
            phase: self.phase,
            requests: self.requests.load(Ordering::Relaxed),
            requests_total: self.requests_total,
            runs_done: self.runs_done.load(Ordering::Relaxed),
            runs: self.runs,
        });
    }

    /// `n` more requests read.
    fn add(&self, n: u64) {
        self.requests.fetch_add(n, Ordering::Relaxed);
        self.report();
    }

    /// One more simulation finished.
    fn run_done(&self) {
        self.runs_done.fetch_add(1, Ordering::Relaxed);
        self.report();
    }
}

/// Computes the curve of `o` on `base`'s trace, drive and mode. `progress` hears where each
/// phase stands ([`CurveProgress`]); `stop` cancels.
pub fn curve(
    base: &SimConfig,
    o: &CurveOptions,
    progress: &(dyn Fn(CurveProgress) + Sync),
    stop: &AtomicBool,
) -> Result<CurveReport, SimError> {
    check(base, o)?;
    if o.policies.is_empty() {
        return Err(bad("curve.policies", "no policy given"));
    }
    progress(CurveProgress { phase: "measuring", ..Default::default() });
    let bands = base.drive.bands_or_default();
    let stats = crate::measure_until(&base.trace, &bands, stop)?;
    let cells = cells(base, o, &stats)?;
    Ok(curve_cells(base, o, stats, cells, progress, stop)?.0)
}

/// The curve of arbitrary full-size configurations `configs` (an experiment's grid), each one
/// point on the series it names ([`CurvePoint::policy`]), in their order; `o`'s sampling settings apply (its policies and sizes are not used).
/// Every configuration must replay the same trace in the same mode on a drive with the same
/// bands, with a cache; they may differ in anything else (policy, cache size, PB size). Returns
/// the report and, per point, its counters in both windows ([`Estimate`]).
pub fn curve_configs(
    configs: &[(String, SimConfig)],
    o: &CurveOptions,
    progress: &(dyn Fn(CurveProgress) + Sync),
    stop: &AtomicBool,
) -> Result<(CurveReport, Vec<Estimate>), SimError> {
    let Some((_, base)) = configs.first() else {
        return Err(bad("curve.points", "no configuration to compute"));
    };
    check(base, o)?;
    let same = |c: &SimConfig| {
        c.trace == base.trace
            && c.mode == base.mode
            && c.drive.bands_or_default() == base.drive.bands_or_default()
    };
    if let Some((_, c)) = configs.iter().find(|(_, c)| !same(c)) {
        return Err(bad(
            "curve.points",
            format!(
                "{} differs from {} in its trace, mode or bands: a curve samples one trace in one mode",
                c.display_label(),
                base.display_label()
            ),
        ));
    }
    if let Some((_, c)) = configs.iter().find(|(_, c)| c.cache.is_none() || c.replay != Replay::Closed) {
        return Err(bad(
            "curve.points",
            format!("{}: a curve's points need an SSD cache and a closed-loop replay", c.display_label()),
        ));
    }
    progress(CurveProgress { phase: "measuring", ..Default::default() });
    let stats = crate::measure_until(&base.trace, &base.drive.bands_or_default(), stop)?;
    let mut cells = Vec::with_capacity(configs.len());
    for (name, c) in configs {
        let s = sizing(c, &stats)?;
        let cache = c.cache.as_ref().expect("checked");
        cells.push(Cell {
            policy: name.clone(),
            cache_size: cache.size,
            pb_size: match &c.drive {
                DriveConfig::DmSmr(d) => Some(d.pb_size),
                _ => None,
            },
            full: c.clone(),
            cache_blocks: s.cache_blocks,
            pb_blocks: s.pb_blocks,
        });
    }
    curve_cells(base, o, stats, cells, progress, stop)
}

/// A point's counters, per window, as a run's report would hold them: scaled back to the full
/// trace for a sampled point (counts rounded; only the fields a curve reads), the run's own at
/// rate 1. `None` where the window does not exist (a warm-up that never ended).
#[derive(Clone, Debug, Default)]
pub struct Estimate {
    /// The whole replay.
    pub total: Option<Counters>,
    /// From the end of the base configuration's warm-up.
    pub after_warmup: Option<Counters>,
}

/// The total and after-warm-up windows of one simulation.
type Windows = [Option<Counters>; 2];

/// The counters of the window a curve reports: the whole run, or from the end of warm-up
/// (`None` when the run's warm-up never ended).
fn window(r: &crate::RunReport, after_warmup: bool) -> Option<Counters> {
    if after_warmup {
        r.after_warmup.as_ref().map(|m| m.counters.clone())
    } else {
        Some(r.total.counters.clone())
    }
}

/// The curve of `cells` on `base`'s trace, measured as `stats`.
fn curve_cells(
    base: &SimConfig,
    o: &CurveOptions,
    stats: TraceStats,
    mut cells: Vec<Cell>,
    progress: &(dyn Fn(CurveProgress) + Sync),
    stop: &AtomicBool,
) -> Result<(CurveReport, Vec<Estimate>), SimError> {
    let units = units_of(base, o.unit)?;
    let touched = units_touched(&stats, &units);
    let min_cache = cells.iter().map(|c| c.cache_blocks).min().unwrap_or(1);
    let rate = resolve_rate(o.rate, touched, min_cache);
    // SAC's and PORE's costs are fitted once per full-size drive, so that a scaled PB does not
    // change what the policy weighs.
    let ctx = BuildContext {
        written_range: ByteSize(stats.written_band_bytes.max(BLOCK_SIZE)),
        accessed_range: ByteSize(stats.accessed_band_bytes.max(stats.written_band_bytes).max(BLOCK_SIZE)),
    };
    let mut fitted: Vec<(DriveConfig, shingled_cache::SmrCosts)> = Vec::new();
    for c in &mut cells {
        let cache = c.full.cache.as_mut().expect("every cell has a cache");
        if cache.policy.needs_future() {
            return Err(SimError::Config {
                field: "cache.policy",
                reason: format!(
                    "{} is offline (it needs the whole trace's future); a curve replays samples: run \
                     it with `shingled sim` or `shingled compare` at each size",
                    cache.policy.name()
                ),
            });
        }
        if cache.policy.needs_costs() && matches!(cache.costs, CostModel::Fitted) {
            let costs = match fitted.iter().find(|(d, _)| *d == c.full.drive) {
                Some((_, k)) => *k,
                None => {
                    let k = crate::fit_costs(&c.full.drive, &ctx)?;
                    fitted.push((c.full.drive.clone(), k));
                    k
                }
            };
            cache.costs = CostModel::Custom(costs);
        }
    }
    // The exact LRU pass over the reported window: from the start, or from a warm-up's request
    // (the cache-full warm-up ends at a different request for every size: no exact curve).
    // `--warmup none` has no after-warm-up window: the whole replay is the window.
    let after_warmup = o.after_warmup && base.warmup != Warmup::None;
    let warm_at = match (after_warmup, base.warmup) {
        (false, _) | (true, Warmup::None) => Some(None),
        (true, Warmup::Requests(n)) => Some(Some(n)),
        (true, Warmup::Fraction(f)) => Some(Some((stats.requests as f64 * f) as u64)),
        (true, Warmup::CacheFull) => None,
    };
    let exact_lru = cells.iter().any(|c| is_plain_lru(&c.full))
        && StackDistances::new(base.mode).is_ok()
        && warm_at.is_some();
    let warm_at = warm_at.flatten();
    let validated = if o.validate_points.is_empty() {
        spread(cells.len(), o.validate)
    } else {
        let mut v = o.validate_points.clone();
        v.sort_unstable();
        v.dedup();
        if let Some(&i) = v.iter().find(|&&i| i >= cells.len()) {
            return Err(bad(
                "curve.validate_points",
                format!("point {i} is beyond the grid's {}", cells.len()),
            ));
        }
        v
    };
    let sampled = rate < 1.0;
    let samples = if sampled { o.samples } else { 1 };
    let full_requests = base.trace.limit.map_or(stats.requests, |l| l.min(stats.requests));

    // The samples, each read once (in parallel when several), then every cell × sample.
    let counting = Instant::now();
    let traffic = match o.sampling {
        Sampling::Stratified if sampled => {
            let t = Ticker::new("counting", full_requests, 0, progress);
            unit_traffic(base, &units, &|n| t.add(n), stop)?
        }
        _ => Vec::new(),
    };
    let traffic_cost_s = counting.elapsed().as_secs_f64();
    // Several stratified samples are the best-balanced distinct ones (seeds alone would mostly
    // repeat the best); hashed samples use seeds `seed`, `seed + 1`, ….
    let selectors: Vec<Selector> = match o.sampling {
        Sampling::Stratified if sampled => {
            Selector::stratified_many(&traffic, rate, o.seed, samples as usize).expect("rate checked")
        }
        _ => (0..samples)
            .map(|i| Selector::new(rate, o.seed.wrapping_add(i as u64)).expect("rate checked"))
            .collect(),
    };
    let samples = selectors.len() as u32;
    // At rate 1 nothing is read here: every point streams the trace itself, as a full run does
    // (a sample of the whole trace would hold it in memory, 32 bytes a request).
    let read: Vec<Result<Sample, SimError>> = if !sampled {
        Vec::new()
    } else {
        let t = Ticker::new("sampling", full_requests * selectors.len() as u64, 0, progress);
        parallel(selectors.len(), o.jobs, |i| {
            read_sample(base, &units, selectors[i].clone(), &|n| t.add(n), stop)
        })
    };
    let read: Vec<Sample> = read.into_iter().collect::<Result<_, _>>()?;
    let sample_stats: Vec<TraceStats> =
        read.iter().map(|s| TraceStats { requests: s.requests.len() as u64, ..stats.clone() }).collect();
    // At rate 1 the sample is the trace: scaling by 1 exactly keeps every size as it is.
    let scales: Vec<Scale> = if sampled {
        read.iter().map(|s| s.scale(&stats, base.mode)).collect::<Result<_, _>>()?
    } else {
        vec![Scale::uniform(1.0)]
    };
    let n = cells.len();
    let configs: Vec<SimConfig> = (0..n * samples as usize)
        .map(|j| {
            let mut cfg = scaled_config(&cells[j % n], scales[j / n])?;
            if !sampled {
                cfg.trace.limit = base.trace.limit; // streamed: the replay cuts it
            }
            Ok(cfg)
        })
        .collect::<Result<_, SimError>>()?;
    // Every simulation of the last phase, and the requests each replays.
    let per_sample: u64 =
        if sampled { read.iter().map(|s| s.requests.len() as u64).sum::<u64>() } else { full_requests };
    let sim_requests: u64 =
        per_sample * n as u64 + full_requests * (validated.len() + exact_lru as usize) as u64;
    let t = Ticker::new(
        "simulating",
        sim_requests,
        n * samples as usize + validated.len() + exact_lru as usize,
        progress,
    );
    // A simulation's progress callback gives its requests so far; the ticker adds the difference.
    let counted = |last: &mut u64, now: u64| {
        t.add(now.saturating_sub(*last));
        *last = now;
    };
    let mini: Vec<Result<(Windows, f64), SimError>> = parallel(n * samples as usize, o.jobs, |j| {
        let s = j / n;
        let mut last = 0u64;
        let r = match read.get(s) {
            Some(sample) => crate::run::run_reader_with(
                &configs[j],
                &sample_stats[s],
                Box::new(InMemory::new(sample.requests.clone(), sample.format)),
                &mut |k| counted(&mut last, k),
                Some(stop),
            ),
            None => crate::run::run_with(&configs[j], &stats, &mut |k| counted(&mut last, k), Some(stop)),
        };
        t.run_done();
        r.map(|r| ([window(&r, false), window(&r, true)], r.wall_time_s))
    });
    let mini: Vec<(Windows, f64)> = mini.into_iter().collect::<Result<_, _>>()?;

    // The exact LRU curve and the full runs of the validated points, side by side.
    let exact_job = validated.len();
    let extra: Vec<Result<Extra, SimError>> = parallel(validated.len() + exact_lru as usize, o.jobs, |j| {
        let mut last = 0u64;
        let r = if j == exact_job {
            exact_pass(base, warm_at, &mut |k| counted(&mut last, k), stop).map(|(s, w)| Extra::Exact(s, w))
        } else {
            crate::run::run_with(
                &cells[validated[j]].full,
                &stats,
                &mut |k| counted(&mut last, k),
                Some(stop),
            )
            .map(|r| {
                // `None` when the run has no such window (its warm-up never ended): not validated.
                let m = window(&r, after_warmup).map(|c| PointMetrics::from_counters(&c, 1.0));
                Extra::Full(m, r.wall_time_s)
            })
        };
        t.run_done();
        r
    });
    let mut full: Vec<Option<(PointMetrics, f64)>> = vec![None; n];
    let mut exact: Option<(Option<StackDistances>, f64)> = None;
    for (j, e) in extra.into_iter().enumerate() {
        match e? {
            Extra::Full(m, w) => full[validated[j]] = m.map(|m| (m, w)),
            Extra::Exact(s, w) => exact = Some((s, w)),
        }
    }

    let mut points = Vec::with_capacity(n);
    let mut estimates = Vec::with_capacity(n);
    let traffic_sum = scales.iter().map(|k| k.traffic).sum::<f64>();
    for (i, c) in cells.iter().enumerate() {
        // Each window summed over the samples (`None` when a sample's warm-up never ended),
        // then scaled back; at rate 1 the run's own counters, every field.
        let mut wall = 0.0;
        let mut est: Windows = [None, None];
        let mut sums: Windows = [Some(Counters::default()), Some(Counters::default())];
        for s in 0..samples as usize {
            let (k, w) = &mini[s * n + i];
            wall += w;
            for (sum, k) in sums.iter_mut().zip(k) {
                match (sum.as_mut(), k) {
                    (Some(sum), Some(k)) => add(sum, k),
                    _ => *sum = None,
                }
            }
        }
        for (e, (sum, own)) in est.iter_mut().zip(sums.iter().zip(&mini[i].0)) {
            *e = if sampled {
                sum.as_ref().map(|s| scale_counters(s, 1.0 / traffic_sum))
            } else {
                own.clone()
            };
        }
        let sum = &sums[after_warmup as usize];
        let exact_hit_ratio = match &exact {
            Some((Some(s), _)) if is_plain_lru(&c.full) => s.hits(c.cache_blocks).hit_ratio(),
            _ => None,
        };
        let metrics =
            sum.as_ref().map(|s| PointMetrics::from_counters(s, 1.0 / traffic_sum)).unwrap_or_default();
        estimates.push(Estimate { total: est[0].take(), after_warmup: est[1].take() });
        points.push(CurvePoint {
            policy: c.policy.clone(),
            cache_size: size_label(&c.cache_size),
            cache_blocks: c.cache_blocks,
            pb_size: c.pb_size.as_ref().map(size_label),
            pb_blocks: c.pb_blocks,
            method: if sampled { Method::Sampled } else { Method::Full },
            metrics,
            exact_hit_ratio,
            full: full[i].as_ref().map(|(m, _)| m.clone()),
            wall_s: wall,
            full_wall_s: full[i].as_ref().map(|(_, w)| *w),
        });
    }
    let (units_sampled, blocks_sampled) = match read.first() {
        Some(first) => (first.units, first.blocks),
        None => (touched, stats.pages),
    };
    let report = CurveReport {
        trace: base.trace.path.clone(),
        mode: base.mode.name().to_string(),
        rate,
        rate_auto: o.rate == Rate::Auto,
        unit: o.unit.to_string(),
        sampling: o.sampling,
        window: if after_warmup { format!("after-warmup ({})", base.warmup) } else { "total".into() },
        units_touched: touched,
        units_sampled,
        samples,
        scale: scales[0],
        blocks_full: stats.pages,
        blocks_sampled,
        errors: Vec::new(),
        sampled_cost_s: traffic_cost_s
            + read.iter().map(|s| s.cost_s).sum::<f64>()
            + mini.iter().map(|(_, w)| w).sum::<f64>(),
        exact_cost_s: exact.as_ref().map_or(0.0, |(_, w)| *w),
        full_cost_s: None,
        points,
        stats,
        base: base.clone(),
    };
    // The errors and the full-run cost estimate, computed as for merged parts.
    Ok((CurveReport::merge(vec![report]).expect("one part"), estimates))
}

/// LRU's exact hit ratios (one pass of stack distances) over the window a curve reports: the
/// whole replay, or from where a warm-up of `warm_at` processed requests ends (as the engine
/// ends it: after the request at which that many were processed, reads dropped by write-only
/// mode not counted). `None` when the warm-up never ended: there is no such window.
fn exact_pass(
    base: &SimConfig,
    warm_at: Option<u64>,
    progress: &mut dyn FnMut(u64),
    stop: &AtomicBool,
) -> Result<(Option<StackDistances>, f64), SimError> {
    use shingled_trace::TraceReader;
    let started = Instant::now();
    let mut reader =
        Limited { inner: open_trace_ahead(&base.trace)?, left: base.trace.limit.unwrap_or(u64::MAX) };
    let mut s = StackDistances::new(base.mode)?;
    let (mut n, mut processed, mut warm) = (0u64, 0u64, warm_at.is_none());
    while let Some(r) = reader.next_request()? {
        s.request(&r);
        processed += !(r.op != shingled_core::Op::Write && base.mode == crate::Mode::WriteOnly) as u64;
        if !warm && processed >= warm_at.unwrap_or(0) {
            s.reset_counts();
            warm = true;
        }
        n += 1;
        if n.is_multiple_of(PROGRESS_EVERY) {
            progress(n);
            if stop.load(Ordering::Relaxed) {
                return Err(SimError::Cancelled { requests: n });
            }
        }
    }
    progress(n);
    Ok((warm.then_some(s), started.elapsed().as_secs_f64()))
}

/// Whether `cfg` caches with textbook LRU (one victim per eviction), the policy whose hit ratio
/// [`StackDistances`] gives exactly.
fn is_plain_lru(cfg: &SimConfig) -> bool {
    cfg.cache.as_ref().is_some_and(|c| c.policy == PolicyConfig::default())
}

enum Extra {
    Full(Option<PointMetrics>, f64),
    Exact(Option<StackDistances>, f64),
}

/// `k` indices spread evenly over `0..n` (first and last included), at most `n`.
pub fn spread(n: usize, k: usize) -> Vec<usize> {
    let k = k.min(n);
    let mut v: Vec<usize> = match k {
        0 => Vec::new(),
        1 => vec![n / 2],
        _ => (0..k).map(|i| (i * (n - 1) + (k - 1) / 2) / (k - 1)).collect(),
    };
    v.dedup();
    v
}

/// `c` scaled by `k` (counts rounded): the full-trace estimate of a sample's counters, for the
/// fields [`add`] sums (the others stay 0).
fn scale_counters(c: &Counters, k: f64) -> Counters {
    let n = |x: u64| (x as f64 * k).round() as u64;
    let t = |x: shingled_core::Nanos| shingled_core::Nanos(n(x.0));
    let drive = shingled_device::DriveStats {
        rmws: n(c.drive.rmws),
        pb_writes: n(c.drive.pb_writes),
        pb_reads: n(c.drive.pb_reads),
        band_bytes_read: n(c.drive.band_bytes_read),
        band_bytes_written: n(c.drive.band_bytes_written),
        pb_blocks_cleaned: n(c.drive.pb_blocks_cleaned),
        media_bytes_written: n(c.drive.media_bytes_written),
        ..Default::default()
    };
    Counters {
        requests: n(c.requests),
        read_requests: n(c.read_requests),
        write_requests: n(c.write_requests),
        skipped_requests: n(c.skipped_requests),
        blocks_read: n(c.blocks_read),
        blocks_written: n(c.blocks_written),
        read_hits: n(c.read_hits),
        write_hits: n(c.write_hits),
        ssd_blocks_read: n(c.ssd_blocks_read),
        ssd_blocks_written: n(c.ssd_blocks_written),
        drive_blocks_read: n(c.drive_blocks_read),
        drive_blocks_written: n(c.drive_blocks_written),
        dirty_evictions: n(c.dirty_evictions),
        clean_evictions: n(c.clean_evictions),
        ssd_read_time: t(c.ssd_read_time),
        ssd_write_time: t(c.ssd_write_time),
        drive_read_time: t(c.drive_read_time),
        drive_write_time: t(c.drive_write_time),
        drive,
        ..Default::default()
    }
}

/// Adds the counters a curve reads.
fn add(sum: &mut Counters, c: &Counters) {
    sum.read_requests += c.read_requests;
    sum.write_requests += c.write_requests;
    sum.skipped_requests += c.skipped_requests;
    sum.ssd_blocks_read += c.ssd_blocks_read;
    sum.ssd_blocks_written += c.ssd_blocks_written;
    sum.drive_blocks_read += c.drive_blocks_read;
    sum.drive.pb_reads += c.drive.pb_reads;
    sum.drive.band_bytes_read += c.drive.band_bytes_read;
    sum.requests += c.requests;
    sum.blocks_read += c.blocks_read;
    sum.blocks_written += c.blocks_written;
    sum.read_hits += c.read_hits;
    sum.write_hits += c.write_hits;
    sum.dirty_evictions += c.dirty_evictions;
    sum.clean_evictions += c.clean_evictions;
    sum.drive_blocks_written += c.drive_blocks_written;
    sum.ssd_read_time += c.ssd_read_time;
    sum.ssd_write_time += c.ssd_write_time;
    sum.drive_read_time += c.drive_read_time;
    sum.drive_write_time += c.drive_write_time;
    sum.drive.rmws += c.drive.rmws;
    sum.drive.pb_writes += c.drive.pb_writes;
    sum.drive.band_bytes_written += c.drive.band_bytes_written;
    sum.drive.pb_blocks_cleaned += c.drive.pb_blocks_cleaned;
    sum.drive.media_bytes_written += c.drive.media_bytes_written;
}

/// Per-metric errors of the sampled figures against the full runs (and of LRU's exact hit ratio,
/// which must be 0).
fn errors(points: &[CurvePoint]) -> Vec<MetricError> {
    [("hit_ratio", "pp"), ("write_amplification", "%"), ("rmws", "%"), ("total_time_s", "%")]
        .iter()
        .map(|&(name, unit)| {
            let get = PointMetrics::field(name).expect("a metric");
            let errs: Vec<f64> = points
                .iter()
                .filter_map(|p| {
                    let (s, f) = (get(&p.metrics)?, get(p.full.as_ref()?)?);
                    if unit == "pp" {
                        Some((s - f).abs() * 100.0)
                    } else if f != 0.0 {
                        Some((s - f).abs() / f.abs() * 100.0)
                    } else {
                        (s == 0.0).then_some(0.0)
                    }
                })
                .collect();
            MetricError {
                metric: name.to_string(),
                unit: unit.to_string(),
                mean_abs: (!errs.is_empty()).then(|| errs.iter().sum::<f64>() / errs.len() as f64),
                max_abs: errs.iter().copied().reduce(f64::max),
                points: errs.len(),
            }
        })
        .collect()
}
