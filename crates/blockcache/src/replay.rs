//! `shingled cache replay`: a block trace driven through the real data path — a
//! [`CachedDevice`] moving real bytes between a cache device and a backing device — where both
//! devices are [`Modelled`]: the cache device an SSD model, the backing device the simulator's
//! drive model (an emulated DM-SMR drive by default). Every written block carries a pattern
//! naming the block and its version; every read is checked against it.
//!
//! The run is set up exactly as [`shingled_sim::run`] sets up its engine (same drive, SSD,
//! cache size, policy context and costs), and reports a [`RunReport`] counted on the data path,
//! so the two can be compared field by field ([`differences`]). They agree when the simulator's
//! numbers describe the running system: same hits, evictions and write-backs (one policy
//! implementation, `shingled_sim::controller::Controller`), and the same drive commands (the
//! data path unplugs its backing device where the engine issues its drive runs), hence the same
//! RMWs and modelled drive time. What the data path does and the engine does not — writing slot
//! records, flushing — is reported apart ([`DataPath`]): metadata time is on the SSD's clock
//! but not in the report's SSD time.

use crate::modelled::{ModelClock, ModelTime, Modelled};
use crate::pattern::{describe, fill};
use crate::{CacheOptions, CacheSetup, CachedDevice, Stats};
use rustc_hash::FxHashMap;
use serde::{Deserialize, Serialize};
use shingled_core::{BandConfig, BandMap, ByteSize, Nanos};
use shingled_device::{BuildContext, DriveStats};
use shingled_sim::{
    Counters, Histogram, Metrics, Mode, Replay, RunReport, SimConfig, SimError, Warmup, PROGRESS_EVERY,
};
use shingled_stl::{BlockDevice, MemBlock, StlError, BLOCK};
use shingled_trace::TraceStats;
use std::time::Instant;

/// Why a replay failed.
#[derive(Debug, thiserror::Error)]
pub enum ReplayError {
    /// The configuration or the trace (as `shingled sim` reports it).
    #[error(transparent)]
    Sim(#[from] SimError),
    /// A device request failed.
    #[error("request {request} of the trace: {source}")]
    Device {
        /// 1-based request number in the trace (0: after the trace).
        request: u64,
        /// What failed.
        source: StlError,
    },
    /// A read returned bytes other than the last ones written.
    #[error("request {request} of the trace: block {block} read back {got}, expected {expected}")]
    Mismatch {
        /// 1-based request number (0: in a check after the trace).
        request: u64,
        /// The block.
        block: u64,
        /// What the bytes say (`version N of block B`, `zeros`, or `unrecognised bytes`).
        got: String,
        /// What they should say.
        expected: String,
    },
    /// What the data path cannot run.
    #[error("{0}")]
    Unsupported(String),
}

/// How to replay.
#[derive(Clone, Debug)]
pub struct ReplayOptions {
    /// Slots kept out of the policy's capacity (default: 1/64 of it, at least 1).
    pub reserve: Option<u32>,
    /// Flush the cached device every this many requests (`None`: never; commits happen only
    /// when the free-slot reserve runs out).
    pub flush_every: Option<u64>,
    /// After the trace: read every written block back through the cache, then write back every
    /// dirty block (the cleaner) and read every written block from the backing device alone.
    pub final_check: bool,
    /// Whether the cache's metadata I/O (slot records) advances the modelled clock (default).
    /// It shifts when later drive commands start, hence the disk's rotational position and the
    /// drive's modelled times by a little; off, every modelled time equals the simulator's and
    /// metadata time is reported apart only.
    pub metadata_on_clock: bool,
}

impl Default for ReplayOptions {
    fn default() -> Self {
        ReplayOptions { reserve: None, flush_every: None, final_check: true, metadata_on_clock: true }
    }
}

/// What the data path did beyond the simulator's counters.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct DataPath {
    /// The cached device's own counters (absent without a cache).
    pub stats: Option<Stats>,
    /// Physical slots on the cache device (policy capacity + reserve).
    pub slots: u32,
    /// Modelled clock at the end of the trace: the report's total time plus metadata time.
    pub modelled_time_s: f64,
    /// Modelled SSD time of metadata (slot records, superblock).
    pub metadata_time_s: f64,
    /// Cache-device time by kind.
    pub cache_time: ModelTime,
    /// Blocks whose bytes were checked on the trace's reads.
    pub verified_blocks: u64,
    /// Host flushes issued (`flush_every`).
    pub flushes: u64,
    /// The check after the trace, when asked for.
    pub final_check: Option<FinalCheck>,
    /// Host wall-clock seconds of the replay (without the final check).
    pub wall_time_s: f64,
}

/// The check after the trace.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct FinalCheck {
    /// Distinct blocks the trace wrote.
    pub written_blocks: u64,
    /// Of them, read back through the cached device with the right bytes.
    pub read_through_cache: u64,
    /// Dirty blocks the cleaner wrote back.
    pub cleaned: u64,
    /// Written blocks read from the backing device alone with the right bytes.
    pub read_from_backing: u64,
}

/// A replay's result: the run as the simulator reports it, counted on the data path, and what
/// the data path did beyond it.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ReplayReport {
    /// Counted on the data path, in the simulator's terms.
    pub run: RunReport,
    /// The data path's own figures.
    pub data_path: DataPath,
}

/// A field where the data path and the simulator differ.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Difference {
    /// The counter.
    pub field: String,
    /// A modelled time (`true`) or a count.
    pub time: bool,
    /// The simulator's value.
    pub sim: String,
    /// The data path's value.
    pub data_path: String,
}

fn expected(b: u64, v: u64) -> String {
    if v == 0 {
        "zeros".into()
    } else {
        format!("version {v} of block {b}")
    }
}

/// Writes, reads and checks blocks through a device, remembering each block's version.
struct Checker {
    versions: FxHashMap<u64, u64>,
    next: u64,
    buf: Vec<u8>,
    want: Vec<u8>,
    verified: u64,
}

impl Checker {
    fn new() -> Checker {
        Checker {
            versions: FxHashMap::default(),
            next: 1,
            buf: Vec::new(),
            want: vec![0u8; BLOCK],
            verified: 0,
        }
    }

    fn write(
        &mut self,
        dev: &mut dyn BlockDevice,
        lba: u64,
        n: u64,
        request: u64,
    ) -> Result<(), ReplayError> {
        self.buf.resize(n as usize * BLOCK, 0);
        for i in 0..n {
            let v = self.next;
            self.next += 1;
            self.versions.insert(lba + i, v);
            fill(lba + i, v, &mut self.buf[i as usize * BLOCK..(i as usize + 1) * BLOCK]);
        }
        dev.write(lba, &self.buf).map_err(|source| ReplayError::Device { request, source })
    }

    fn read(&mut self, dev: &mut dyn BlockDevice, lba: u64, n: u64, request: u64) -> Result<(), ReplayError> {
        self.buf.resize(n as usize * BLOCK, 0);
        dev.read(lba, &mut self.buf).map_err(|source| ReplayError::Device { request, source })?;
        for i in 0..n {
            let b = lba + i;
            let got = &self.buf[i as usize * BLOCK..(i as usize + 1) * BLOCK];
            let v = self.versions.get(&b).copied().unwrap_or(0);
            if v == 0 {
                self.want.fill(0);
            } else {
                fill(b, v, &mut self.want);
            }
            if got != self.want.as_slice() {
                return Err(ReplayError::Mismatch {
                    request,
                    block: b,
                    got: describe(got),
                    expected: expected(b, v),
                });
            }
        }
        self.verified += n;
        Ok(())
    }

    /// Reads every written block back (in runs of contiguous blocks).
    fn read_all(&mut self, dev: &mut dyn BlockDevice) -> Result<u64, ReplayError> {
        let mut blocks: Vec<u64> = self.versions.keys().copied().collect();
        blocks.sort_unstable();
        let mut i = 0;
        while i < blocks.len() {
            let mut j = i + 1;
            while j < blocks.len() && blocks[j] == blocks[j - 1] + 1 && j - i < 256 {
                j += 1;
            }
            self.read(dev, blocks[i], (j - i) as u64, 0)?;
            i = j;
        }
        Ok(blocks.len() as u64)
    }
}

type Backing = Modelled<MemBlock>;
type Cached = CachedDevice<Modelled<MemBlock>, Backing>;

/// The device the trace runs on: the cached device, or the backing device alone (no cache).
enum Target {
    Cached(Box<Cached>),
    Bare(Backing),
}

impl Target {
    fn dev(&mut self) -> &mut dyn BlockDevice {
        match self {
            Target::Cached(c) => c.as_mut(),
            Target::Bare(b) => b,
        }
    }

    fn backing(&self) -> &Backing {
        match self {
            Target::Cached(c) => c.backing(),
            Target::Bare(b) => b,
        }
    }

    /// Ends a request: the bare backing device issues its pending command (the cached device
    /// does so itself).
    fn end_request(&mut self, request: u64) -> Result<(), ReplayError> {
        if let Target::Bare(b) = self {
            b.unplug().map_err(|source| ReplayError::Device { request, source })?;
        }
        Ok(())
    }
}

/// The simulator's counters, from the data path's devices and cache.
#[derive(Default)]
struct Tally {
    requests: u64,
    read_requests: u64,
    write_requests: u64,
    skipped_requests: u64,
    blocks_read: u64,
    blocks_written: u64,
}

fn counters(t: &Tally, target: &Target, clock: &ModelClock) -> Counters {
    let backing = target.backing();
    let bt = backing.time();
    let drive: DriveStats = backing.model_stats();
    let (read_hits, write_hits, ssd_r, ssd_w, drive_r, drive_w, dirty_ev, clean_ev, st) = match target {
        Target::Cached(c) => {
            let s = c.stats();
            let st = c.cache_device().time();
            (
                s.read_hits,
                s.write_hits,
                s.cache_blocks_read,
                s.cache_blocks_written,
                s.backing_blocks_read,
                s.backing_blocks_written,
                s.dirty_evictions,
                s.clean_evictions,
                st,
            )
        }
        // without a cache every block goes to the backing device
        Target::Bare(_) => (0, 0, 0, 0, t.blocks_read, t.blocks_written, 0, 0, ModelTime::default()),
    };
    Counters {
        requests: t.requests,
        read_requests: t.read_requests,
        write_requests: t.write_requests,
        skipped_requests: t.skipped_requests,
        blocks_read: t.blocks_read,
        blocks_written: t.blocks_written,
        read_hits,
        write_hits,
        ssd_blocks_read: ssd_r,
        ssd_blocks_written: ssd_w,
        drive_blocks_read: drive_r,
        drive_blocks_written: drive_w,
        dirty_evictions: dirty_ev,
        clean_evictions: clean_ev,
        ssd_read_time: st.data_read,
        ssd_write_time: st.data_write,
        drive_read_time: bt.data_read,
        drive_write_time: bt.data_write,
        drive,
        ssd_queue_time: Nanos::ZERO,
        drive_queue_time: Nanos::ZERO,
        first_arrival: Nanos::ZERO,
        last_completion: clock.now(),
    }
}

/// Replays `cfg`'s trace through the data path. `stats` is the trace footprint
/// ([`shingled_sim::measure`]); `progress` receives the requests read so far, every
/// [`PROGRESS_EVERY`] requests.
pub fn replay(
    cfg: &SimConfig,
    stats: &TraceStats,
    opts: &ReplayOptions,
    progress: &mut dyn FnMut(u64),
) -> Result<ReplayReport, ReplayError> {
    if cfg.replay == Replay::Open {
        return Err(ReplayError::Unsupported(
            "cache replay runs closed loop (each request when the previous one ends); drop --replay open"
                .into(),
        ));
    }
    let mut sizing = shingled_sim::sizing(cfg, stats)?;
    let ctx = BuildContext {
        written_range: sizing.written_range.unwrap_or_default(),
        accessed_range: sizing.accessed_range.unwrap_or_default(),
    };
    let drive = cfg.drive.build(&ctx).map_err(SimError::from)?;
    let end_block = stats.max_end.div_ceil(BLOCK as u64);
    if let Some(cap) = cfg.drive.capacity() {
        if stats.max_end > cap.0 {
            return Err(SimError::Config {
                field: "drive.capacity",
                reason: format!(
                    "the trace reaches byte {} but the drive holds {cap}; raise drive.capacity",
                    stats.max_end
                ),
            }
            .into());
        }
    }
    let backing_blocks = match drive.capacity_blocks() {
        u64::MAX => end_block.max(1),
        c => c,
    };
    let has_bands = drive.band_map().is_some();
    if let Some(map) = drive.band_map() {
        check_same_bands(map, &cfg.drive.bands_or_default(), backing_blocks)?;
    }
    let max_run = match cfg.io_unit {
        shingled_sim::IoUnit::Request => u32::MAX,
        shingled_sim::IoUnit::Block => 1,
    };
    let clock = ModelClock::new();
    let backing = Modelled::new(MemBlock::new(backing_blocks), drive, clock.clone(), Some(max_run));
    let mut target = match &cfg.cache {
        None => Target::Bare(backing),
        Some(c) if c.policy.needs_future() => {
            return Err(ReplayError::Unsupported(format!(
                "policy {} is offline (it needs the trace's future); the data path replays online \
                 policies only: run it in `shingled sim` or `shingled compare`",
                c.policy.name()
            )))
        }
        Some(c) => {
            let costs = match c.costs {
                shingled_sim::CostModel::Fitted if !c.policy.needs_costs() => shingled_cache::SmrCosts::PAPER,
                shingled_sim::CostModel::Fitted => {
                    shingled_sim::fit_costs(&cfg.drive, &ctx).map_err(SimError::from)?
                }
                shingled_sim::CostModel::Paper => shingled_cache::SmrCosts::PAPER,
                shingled_sim::CostModel::Custom(x) => x,
            };
            if c.policy.needs_costs() {
                sizing.costs = Some(costs);
            }
            let capacity = sizing.cache_blocks as u32;
            if capacity == 0 {
                return Err(ReplayError::Unsupported("the cache holds no block".into()));
            }
            let reserve = opts.reserve.unwrap_or((capacity / 64).max(1)).max(1);
            if reserve > capacity {
                // more spare slots than cached blocks buys nothing, and each costs memory
                return Err(ReplayError::Unsupported(format!(
                    "reserve {reserve}: at most the cache's capacity of {capacity} blocks"
                )));
            }
            let slots = capacity.checked_add(reserve).ok_or_else(|| {
                ReplayError::Unsupported(format!(
                    "{capacity} cache blocks + {reserve} reserve slots overflow"
                ))
            })?;
            let layout_blocks = 1 + (slots as u64).div_ceil(crate::layout::RECORDS_PER_BLOCK as u64);
            let setup = CacheSetup {
                mode: cfg.mode,
                policy: c.policy.clone(),
                bands: has_bands.then(|| cfg.drive.bands_or_default()),
                pb_blocks: sizing.pb_blocks,
                seed: 0,
                costs,
                sequential_cutoff: None,
                backing_path: None,
                backing_id: None,
            };
            let ssd = Box::new(cfg.ssd.build().map_err(SimError::from)?);
            let mut cache_dev =
                Modelled::new(MemBlock::new(layout_blocks + slots as u64), ssd, clock.clone(), None)
                    .with_metadata_below(layout_blocks, opts.metadata_on_clock);
            // Formatting is not part of the run: the trace starts at time zero.
            cache_dev.set_accounting(false);
            let copts = CacheOptions { setup, slots: Some(slots), capacity: Some(capacity), reserve: None };
            let mut dev = CachedDevice::format(cache_dev, backing, &copts)
                .map_err(|source| ReplayError::Device { request: 0, source })?;
            dev.devices_mut().0.set_accounting(true);
            Target::Cached(Box::new(dev))
        }
    };
    let t0 = clock.now();
    let base_meta = cache_time(&target);
    let mut reader = shingled_sim::open_trace(&cfg.trace)?;
    let limit = cfg.trace.limit.unwrap_or(u64::MAX);
    let warm_at = match cfg.warmup {
        Warmup::Requests(n) => Some(n),
        Warmup::Fraction(f) => Some((stats.requests as f64 * f) as u64),
        _ => None,
    };
    let mut warm: Option<(u64, Counters, Histogram)> = None;
    let mut latency = Histogram::default();
    let mut checker = Checker::new();
    let mut tally = Tally::default();
    let mut flushes = 0u64;
    let started = Instant::now();
    let mut read = 0u64;
    // as the engine: write-only mode drops reads from the workload, with or without a cache
    let skips_reads = cfg.mode == Mode::WriteOnly;
    while read < limit {
        let Some(req) = reader.next_request().map_err(SimError::from)? else { break };
        read += 1;
        let write = req.op.is_write();
        if !write && skips_reads {
            tally.skipped_requests += 1;
        } else {
            let blocks = req.blocks();
            let (lba, n) = (blocks.start, blocks.end - blocks.start);
            let before = clock.now();
            tally.requests += 1;
            if write {
                tally.write_requests += 1;
                tally.blocks_written += n;
                if n > 0 {
                    checker.write(target.dev(), lba, n, read)?;
                }
            } else {
                tally.read_requests += 1;
                tally.blocks_read += n;
                if n > 0 {
                    checker.read(target.dev(), lba, n, read)?;
                }
            }
            target.end_request(read)?;
            latency.record(clock.now() - before);
            if warm.is_none() {
                let done = match (cfg.warmup, warm_at) {
                    (_, Some(n)) => tally.requests >= n,
                    (Warmup::CacheFull, None) => match &target {
                        Target::Cached(c) => c.meta().table().is_full(),
                        Target::Bare(_) => false,
                    },
                    _ => false,
                };
                if done {
                    warm = Some((tally.requests, counters(&tally, &target, &clock), latency.clone()));
                }
            }
            if opts.flush_every.is_some_and(|k| k > 0 && tally.requests.is_multiple_of(k)) {
                target.dev().flush().map_err(|source| ReplayError::Device { request: read, source })?;
                flushes += 1;
            }
        }
        if read.is_multiple_of(PROGRESS_EVERY) {
            progress(read);
        }
    }
    progress(read);
    let wall = started.elapsed().as_secs_f64();
    let mut total_c = counters(&tally, &target, &clock);
    total_c.last_completion = total_c.last_completion - t0;
    let meta = cache_time(&target);
    let metadata = (meta.meta_read + meta.meta_write) - (base_meta.meta_read + base_meta.meta_write);
    let after = warm.as_ref().map(|(_, c, h)| {
        let mut w = total_c.since(c);
        w.first_arrival = c.last_completion - t0.min(c.last_completion);
        Metrics::new(w, &latency.since(h))
    });
    let blocks = total_c.blocks_read + total_c.blocks_written;
    let dirty_left = match &target {
        Target::Cached(c) => c.meta().table().dirty_len() as u64,
        Target::Bare(_) => 0,
    };
    let modelled = clock.now() - t0;
    let run = RunReport {
        label: cfg.display_label(),
        mode: cfg.mode.name().to_string(),
        policy: cfg.cache.as_ref().map(|c| c.policy.name().to_string()),
        drive: cfg.drive.short_name().to_string(),
        sizing: sizing.clone(),
        total: Metrics::new(total_c, &latency),
        after_warmup: after,
        warmup_requests: warm.as_ref().map(|(n, _, _)| *n),
        dirty_left,
        skipped_lines: reader.skipped(),
        wall_time_s: wall,
        block_requests_per_s: if wall > 0.0 { blocks as f64 / wall } else { 0.0 },
        latency_cdf: latency.cdf(),
        offline_bound: None,
        config: cfg.clone(),
        series: None,
    };
    let mut data_path = DataPath {
        stats: match &target {
            Target::Cached(c) => Some(c.stats()),
            Target::Bare(_) => None,
        },
        slots: match &target {
            Target::Cached(c) => c.layout().slots,
            Target::Bare(_) => 0,
        },
        modelled_time_s: modelled.as_secs_f64(),
        metadata_time_s: metadata.as_secs_f64(),
        cache_time: meta,
        verified_blocks: checker.verified,
        flushes,
        final_check: None,
        wall_time_s: wall,
    };
    if opts.final_check {
        data_path.final_check = Some(final_check(target, &mut checker)?);
    }
    Ok(ReplayReport { run, data_path })
}

fn cache_time(t: &Target) -> ModelTime {
    match t {
        Target::Cached(c) => c.cache_device().time(),
        Target::Bare(_) => ModelTime::default(),
    }
}

/// The band map the cache builds from its setup (the band configuration over the backing
/// device) must be the drive model's, or the policy would not see the drive's bands.
fn check_same_bands(drive: &BandMap, cfg: &BandConfig, backing_blocks: u64) -> Result<(), ReplayError> {
    let cache = BandMap::build(cfg, ByteSize(backing_blocks * BLOCK as u64)).map_err(|e| {
        ReplayError::Unsupported(format!(
            "the drive's band layout {cfg} does not build over the backing device: {e}"
        ))
    })?;
    let same = drive.len() == cache.len()
        && drive.capacity_blocks() == cache.capacity_blocks()
        && (0..drive.len()).all(|i| drive.band_range(i as _) == cache.band_range(i as _));
    if same {
        Ok(())
    } else {
        Err(ReplayError::Unsupported(format!(
            "the cache's band map ({} bands over {} blocks) differs from the drive model's ({} bands over {} blocks)",
            cache.len(),
            cache.capacity_blocks(),
            drive.len(),
            drive.capacity_blocks()
        )))
    }
}

/// Reads every written block through the cache, cleans, and reads them from the backing
/// device alone.
fn final_check(target: Target, checker: &mut Checker) -> Result<FinalCheck, ReplayError> {
    let mut out = FinalCheck { written_blocks: checker.versions.len() as u64, ..FinalCheck::default() };
    let verified = checker.verified;
    let mut backing = match target {
        Target::Cached(mut c) => {
            c.devices_mut().1.set_accounting(false);
            out.read_through_cache = checker.read_all(c.as_mut())?;
            out.cleaned = c.clean().map_err(|source| ReplayError::Device { request: 0, source })?;
            c.into_devices().1
        }
        Target::Bare(mut b) => {
            b.set_accounting(false);
            out.read_through_cache = checker.read_all(&mut b)?;
            b
        }
    };
    backing.set_accounting(false);
    out.read_from_backing = checker.read_all(&mut backing)?;
    checker.verified = verified;
    Ok(out)
}

/// Where a replay's counters differ from the simulator's run of the same configuration: the
/// request and block counts, hits, evictions, SSD and drive blocks, the drive model's counters
/// (commands, PB writes, RMWs, band bytes, cleaning) and modelled SSD and drive times (marked
/// [`Difference::time`]). Empty when the simulator describes the data path exactly.
pub fn differences(sim: &RunReport, replay: &RunReport) -> Vec<Difference> {
    let (a, b) = (&sim.total.counters, &replay.total.counters);
    let mut out = Vec::new();
    let mut cmp = |field: &str, x: String, y: String| {
        if x != y {
            let time = field.ends_with("time") || field.starts_with("drive.time");
            out.push(Difference { field: field.to_string(), time, sim: x, data_path: y });
        }
    };
    macro_rules! fields {
        ($($f:ident),*) => { $( cmp(stringify!($f), format!("{:?}", a.$f), format!("{:?}", b.$f)); )* };
    }
    fields!(
        requests,
        read_requests,
        write_requests,
        skipped_requests,
        blocks_read,
        blocks_written,
        read_hits,
        write_hits,
        ssd_blocks_read,
        ssd_blocks_written,
        drive_blocks_read,
        drive_blocks_written,
        dirty_evictions,
        clean_evictions,
        ssd_read_time,
        ssd_write_time,
        drive_read_time,
        drive_write_time
    );
    let (da, db) = (
        serde_json::to_value(a.drive).unwrap_or_default(),
        serde_json::to_value(b.drive).unwrap_or_default(),
    );
    if let (Some(da), Some(db)) = (da.as_object(), db.as_object()) {
        for (k, v) in da {
            let w = db.get(k).cloned().unwrap_or_default();
            cmp(&format!("drive.{k}"), v.to_string(), w.to_string());
        }
    }
    cmp("dirty_left", sim.dirty_left.to_string(), replay.dirty_left.to_string());
    cmp("cache_blocks", sim.sizing.cache_blocks.to_string(), replay.sizing.cache_blocks.to_string());
    out
}
