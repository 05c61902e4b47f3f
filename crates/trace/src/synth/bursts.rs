//! `bursts`: cold write bursts plus a scattered trickle, the one kind of workload on which PORE
//! beats LRU-band both in the authors' published code and in ours: with a 10% trickle of single
//! blocks it wins; with no trickle, a 20–40% trickle, or burst regions rewritten soon, LRU-band
//! wins again. Each parameter moves one property of that workload, so an experiment can map
//! where the ranking flips.
//!
//! [`BurstTrace`] describes the model; `docs/synthetic-traces.md` the parameters and defaults.

use super::{bad_value, for_each_pair, parse_pages, parse_scale, synth_err};
use crate::{Request, TraceError};
use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64Mcg;
use shingled_core::{ByteSize, Op, BLOCK_SIZE};

/// The generator's name in specifications: `synth:bursts[,key=value...]`.
pub const BURSTS: &str = "bursts";

/// Keys a `bursts` specification may set.
pub const BURST_KEYS: &[&str] = &[
    "scale", "pages", "seed", "volume", "range", "burst", "request", "trickle", "rewrite", "hot", "reads",
    "gap", "idle",
];

/// Default `range`: 8 GiB, the range of the artifact's constructed trace and Zipf stream.
pub const DEFAULT_RANGE_BYTES: u64 = 8 << 30;
/// Default page count at scale 1: one default range's worth of blocks (8 GiB of traffic), so at
/// the default `trickle` the bursts cover about nine tenths of the regions once and none is
/// written twice unless `rewrite` says so.
pub const DEFAULT_PAGES: u64 = DEFAULT_RANGE_BYTES / BLOCK_SIZE;
/// Default `burst`: 2048 blocks (8 MiB).
pub const DEFAULT_BURST_BLOCKS: u64 = 2048;
/// Most regions a range may hold (the fresh-region order keeps 4 bytes per region).
pub const MAX_REGIONS: u64 = 1 << 24;
/// Largest `request`, in blocks (256 MiB; a request's length is a 32-bit byte count).
pub const MAX_REQUEST_BLOCKS: u64 = 1 << 16;
/// Largest `hot`.
pub const MAX_HOT: u32 = 1 << 16;
/// Largest `gap` and `idle`, ms (one hour).
pub const MAX_MS: f64 = 3_600_000.0;

/// A parsed `bursts` specification. [`BurstSpec::default`] holds the defaults.
#[derive(Clone, Debug, PartialEq)]
pub struct BurstSpec {
    /// `scale`, in (0, 100]: multiplies the page count and the range (not `burst`). Default 1.
    pub scale: f64,
    /// `pages`: page requests (4 KiB blocks, reads included); overrides the scaled count.
    pub pages: Option<u64>,
    /// `seed`. Default 0.
    pub seed: u64,
    /// `volume` written into every request. Default 0.
    pub volume: u32,
    /// `range` in bytes, before `scale`. Default 8 GiB.
    pub range_bytes: u64,
    /// `burst`: blocks per burst, the region size. Default 2048 (8 MiB).
    pub burst_blocks: u64,
    /// `request`: blocks per request of a burst (and per read), `1..=burst`. Default 1.
    pub request_blocks: u64,
    /// `trickle`: share of written blocks that are scattered single blocks, `[0, 1]`. Default 0.1.
    pub trickle: f64,
    /// `rewrite`: probability that a burst rewrites a hot region, `[0, 1]`. Default 0.
    pub rewrite: f64,
    /// `hot`: how many of the most recently fresh regions are hot, `1..=65536` and at most the
    /// region count. Default 8.
    pub hot: u32,
    /// `reads`: share of all blocks that are reads, `[0, 1]`. Default 0 (write-only).
    pub reads: f64,
    /// `gap`: mean gap between requests, ms, `[0, 3600000]`. Default 1.
    pub gap_ms: f64,
    /// `idle`: mean extra idle time after each burst, ms, `[0, 3600000]`. Default 0.
    pub idle_ms: f64,
}

impl Default for BurstSpec {
    fn default() -> BurstSpec {
        BurstSpec {
            scale: 1.0,
            pages: None,
            seed: 0,
            volume: 0,
            range_bytes: DEFAULT_RANGE_BYTES,
            burst_blocks: DEFAULT_BURST_BLOCKS,
            request_blocks: 1,
            trickle: 0.1,
            rewrite: 0.0,
            hot: 8,
            reads: 0.0,
            gap_ms: 1.0,
            idle_ms: 0.0,
        }
    }
}

/// A share in `[0, 1]`.
fn parse_share(spec: &str, key: &str, value: &str) -> Result<f64, TraceError> {
    let bad = || bad_value(spec, key, value, "a share from 0 to 1, e.g. 0.1");
    let v: f64 = value.parse().map_err(|_| bad())?;
    if !(0.0..=1.0).contains(&v) {
        return Err(bad());
    }
    Ok(v)
}

/// Blocks: a whole number of 4 KiB blocks, or a size that is a multiple of 4 KiB; at least 1.
fn parse_blocks(spec: &str, key: &str, value: &str) -> Result<u64, TraceError> {
    let bad = || bad_value(spec, key, value, "a whole number of 4 KiB blocks >= 1, or a size such as 8MiB");
    let n = match value.replace('_', "").parse::<u64>() {
        Ok(n) => n,
        Err(_) => {
            let b: ByteSize = value.parse().map_err(|_| bad())?;
            if !b.0.is_multiple_of(BLOCK_SIZE) {
                return Err(bad_value(spec, key, value, "a multiple of 4 KiB"));
            }
            b.0 / BLOCK_SIZE
        }
    };
    if n == 0 {
        return Err(bad());
    }
    Ok(n)
}

/// Milliseconds in `[0, MAX_MS]`.
fn parse_ms(spec: &str, key: &str, value: &str) -> Result<f64, TraceError> {
    let bad = || bad_value(spec, key, value, "milliseconds from 0 to 3600000, e.g. 1 or 0.25");
    let v: f64 = value.parse().map_err(|_| bad())?;
    if !(0.0..=MAX_MS).contains(&v) {
        return Err(bad());
    }
    Ok(v)
}

impl BurstSpec {
    /// Parses `bursts[,key=value...]`. Errors quote the specification and name the key and value
    /// (both keys when two disagree, e.g. `request` larger than `burst`).
    pub fn parse(spec: &str) -> Result<BurstSpec, TraceError> {
        let mut parts = spec.split(',').map(str::trim);
        let name = parts.next().unwrap_or("");
        if !name.eq_ignore_ascii_case(BURSTS) {
            return Err(synth_err(spec, format!("{name:?} is not the {BURSTS} generator")));
        }
        let mut out = BurstSpec::default();
        for_each_pair(spec, parts, BURST_KEYS, |key, value| {
            let bad = |what: &str| bad_value(spec, key, value, what);
            match key {
                "scale" => out.scale = parse_scale(spec, value)?,
                "pages" => out.pages = Some(parse_pages(spec, value)?),
                "seed" => out.seed = value.parse().map_err(|_| bad("an unsigned 64-bit integer"))?,
                "volume" => out.volume = value.parse().map_err(|_| bad("an unsigned 32-bit integer"))?,
                "range" => {
                    let b: ByteSize = value.parse().map_err(|_| bad("a size such as 8GiB or 64GB"))?;
                    if b.0 < BLOCK_SIZE {
                        return Err(bad("a size of at least one 4 KiB block, e.g. 8GiB"));
                    }
                    out.range_bytes = b.0;
                }
                "burst" => out.burst_blocks = parse_blocks(spec, key, value)?,
                "request" => {
                    out.request_blocks = parse_blocks(spec, key, value)?;
                    if out.request_blocks > MAX_REQUEST_BLOCKS {
                        return Err(bad(&format!("at most {MAX_REQUEST_BLOCKS} blocks (256 MiB)")));
                    }
                }
                "trickle" => out.trickle = parse_share(spec, key, value)?,
                "rewrite" => out.rewrite = parse_share(spec, key, value)?,
                "reads" => out.reads = parse_share(spec, key, value)?,
                "hot" => {
                    let h: u32 =
                        value.parse().map_err(|_| bad(&format!("a whole number from 1 to {MAX_HOT}")))?;
                    if !(1..=MAX_HOT).contains(&h) {
                        return Err(bad(&format!("a whole number from 1 to {MAX_HOT}")));
                    }
                    out.hot = h;
                }
                "gap" => out.gap_ms = parse_ms(spec, key, value)?,
                "idle" => out.idle_ms = parse_ms(spec, key, value)?,
                _ => unreachable!("every key in BURST_KEYS is handled"),
            }
            Ok(())
        })?;
        out.check(spec)?;
        Ok(out)
    }

    /// The checks that involve two keys.
    fn check(&self, spec: &str) -> Result<(), TraceError> {
        if self.burst_blocks == 0 || self.request_blocks == 0 || self.hot == 0 {
            return Err(synth_err(spec, "burst, request and hot must be at least 1"));
        }
        let (burst, blocks) = (self.burst_blocks, self.range_blocks());
        if self.request_blocks > burst {
            return Err(synth_err(
                spec,
                format!("request={} blocks is larger than burst={burst} blocks", self.request_blocks),
            ));
        }
        if blocks < burst {
            return Err(synth_err(
                spec,
                format!(
                    "range={} bytes (times scale={}: {blocks} blocks) is smaller than one burst={burst} blocks",
                    self.range_bytes, self.scale
                ),
            ));
        }
        let regions = self.regions();
        if regions > MAX_REGIONS {
            return Err(synth_err(
                spec,
                format!(
                    "range={} bytes holds {regions} regions of burst={burst} blocks; at most {MAX_REGIONS}: \
                     raise burst or lower range",
                    self.range_bytes
                ),
            ));
        }
        if self.hot as u64 > regions {
            return Err(synth_err(
                spec,
                format!(
                    "hot={} is more than the range holds: {regions} regions of burst={burst} blocks",
                    self.hot
                ),
            ));
        }
        Ok(())
    }

    /// Blocks of the scaled range: every request lies in `[0, this × 4 KiB)`.
    pub fn range_blocks(&self) -> u64 {
        if self.scale == 1.0 {
            self.range_bytes / BLOCK_SIZE
        } else {
            (self.range_bytes as f64 * self.scale / BLOCK_SIZE as f64) as u64
        }
    }

    /// Regions of `burst` blocks in the range (a partial region at the top is only trickled on).
    pub fn regions(&self) -> u64 {
        self.range_blocks() / self.burst_blocks
    }

    /// Page requests of the trace (exact): `pages`, or 2,097,152 × `scale`.
    pub fn total_pages(&self) -> u64 {
        self.pages.unwrap_or_else(|| ((DEFAULT_PAGES as f64 * self.scale).round() as u64).max(1))
    }
}

/// Seeds of the independent random streams, XORed with the seed.
const SALT_REGION: u64 = 0xb0a5_7c01_d3e6_1a01;
const SALT_REWRITE: u64 = 0x5e71_94f2_0c8b_2a02;
const SALT_TRICKLE: u64 = 0x71c4_1e3d_9b05_3a03;
const SALT_READ: u64 = 0x4ead_0b6f_2e91_4a04;
const SALT_TIME: u64 = 0x7193_c0de_a5f8_5a05;

/// Standard exponential variate.
fn exp1(rng: &mut Pcg64Mcg) -> f64 {
    -(1.0 - rng.random::<f64>()).ln()
}

/// The `bursts` trace: cold write bursts plus a scattered trickle.
///
/// The range `[0, range)` is cut into *regions* of `burst` blocks. Writes are of two kinds:
///
/// - a *burst* writes one whole region front to back in requests of `request` blocks. The region
///   is fresh (cold) — the next one of a random order of all regions, so a region is written
///   again only after every other region has been, one pass later — or, with probability
///   `rewrite` once `hot` fresh regions have been written, one of the `hot` most recently fresh
///   regions, chosen uniformly (a rewrite does not make a region more recent);
/// - a *trickle* write is one block anywhere in `[0, range)`, uniformly.
///
/// The shares are exact by construction, not drawn: a trickle write is issued whenever it keeps
/// the trickle share of written blocks at or below `trickle` (with `request=1` and
/// `trickle=0.25`, every fourth write), and a read (`request` blocks, uniform over the range)
/// whenever it keeps the read share of all blocks at or below `reads`. Requests are spaced by
/// exponential gaps of mean `gap`; the request after a burst's last one waits an extra
/// exponential idle time of mean `idle`.
///
/// Each aspect draws from its own random stream (fresh-region order, rewrite choices, trickle
/// blocks, read offsets, times), so changing one parameter leaves the other choices alone: the
/// same seed gives the same sequence of fresh regions at every `trickle` or `rewrite`.
///
/// ```
/// use shingled_trace::synth::BurstTrace;
/// let mut t = BurstTrace::from_spec("bursts,range=64MiB,pages=4000,trickle=0.25")?;
/// while let Some(r) = t.next_req() {
///     assert!(r.offset + r.len as u64 <= 64 << 20);
/// }
/// assert_eq!(t.trickle_writes(), 1000); // every fourth write: 1-block requests by default
/// # Ok::<(), shingled_trace::TraceError>(())
/// ```
#[derive(Clone, Debug)]
pub struct BurstTrace {
    spec: BurstSpec,
    range_blocks: u64,
    total_pages: u64,
    /// Pages emitted, of writes, of trickle writes and of reads.
    emitted: u64,
    written: u64,
    trickled: u64,
    read: u64,
    requests: u64,
    bursts: u64,
    rewrites: u64,
    /// The open burst: next block and end (exclusive); `next == end` when none is open.
    next: u64,
    end: u64,
    /// Fresh-region order: an incremental Fisher–Yates shuffle, restarted every pass.
    order: Vec<u32>,
    order_pos: usize,
    /// The most recently fresh regions, a ring of at most `hot` entries.
    hot: Vec<u64>,
    hot_head: usize,
    time_ns: u64,
    idle_pending: bool,
    mean_gap_ns: f64,
    mean_idle_ns: f64,
    rng_region: Pcg64Mcg,
    rng_rewrite: Pcg64Mcg,
    rng_trickle: Pcg64Mcg,
    rng_read: Pcg64Mcg,
    rng_time: Pcg64Mcg,
}

impl BurstTrace {
    /// Builds the trace of a parsed specification (allocates the region order, 4 bytes per
    /// region). Panics if a specification built by hand breaks a bound [`BurstSpec::parse`]
    /// checks across keys (`request` ≤ `burst` ≤ range, region count, `hot`).
    pub fn new(spec: &BurstSpec) -> BurstTrace {
        if let Err(e) = spec.check(BURSTS) {
            panic!("{e}");
        }
        let regions = spec.regions();
        let rng = |salt: u64| Pcg64Mcg::seed_from_u64(spec.seed ^ salt);
        BurstTrace {
            range_blocks: spec.range_blocks(),
            total_pages: spec.total_pages(),
            emitted: 0,
            written: 0,
            trickled: 0,
            read: 0,
            requests: 0,
            bursts: 0,
            rewrites: 0,
            next: 0,
            end: 0,
            order: (0..regions as u32).collect(),
            order_pos: 0,
            hot: Vec::with_capacity(spec.hot as usize),
            hot_head: 0,
            time_ns: 0,
            idle_pending: false,
            mean_gap_ns: spec.gap_ms * 1e6,
            mean_idle_ns: spec.idle_ms * 1e6,
            rng_region: rng(SALT_REGION),
            rng_rewrite: rng(SALT_REWRITE),
            rng_trickle: rng(SALT_TRICKLE),
            rng_read: rng(SALT_READ),
            rng_time: rng(SALT_TIME),
            spec: spec.clone(),
        }
    }

    /// Parses `spec` (the text after `synth:`) and builds the trace.
    pub fn from_spec(spec: &str) -> Result<BurstTrace, TraceError> {
        Ok(BurstTrace::new(&BurstSpec::parse(spec)?))
    }

    /// The specification.
    pub fn spec(&self) -> &BurstSpec {
        &self.spec
    }

    /// Requests generated so far.
    pub fn requests(&self) -> u64 {
        self.requests
    }

    /// Bursts started so far, rewrites included.
    pub fn bursts(&self) -> u64 {
        self.bursts
    }

    /// Bursts so far that rewrote a hot region.
    pub fn rewrites(&self) -> u64 {
        self.rewrites
    }

    /// Trickle (scattered single-block) writes so far.
    pub fn trickle_writes(&self) -> u64 {
        self.trickled
    }

    /// The next region of the current pass of the fresh-region order.
    fn fresh_region(&mut self) -> u64 {
        let (i, n) = (self.order_pos, self.order.len());
        let j = self.rng_region.random_range(i..n);
        self.order.swap(i, j);
        self.order_pos = if i + 1 == n { 0 } else { i + 1 };
        self.order[i] as u64
    }

    /// Opens the next burst: a rewrite of a hot region or a fresh region.
    fn start_burst(&mut self) {
        let cap = self.spec.hot as usize;
        let region = if self.hot.len() == cap {
            // Both draws every time, so the choices do not shift with `rewrite`.
            let u: f64 = self.rng_rewrite.random();
            let pick = self.rng_rewrite.random_range(0..cap);
            if u < self.spec.rewrite {
                self.rewrites += 1;
                Some(self.hot[pick])
            } else {
                None
            }
        } else {
            None
        };
        let region = region.unwrap_or_else(|| {
            let r = self.fresh_region();
            if self.hot.len() < cap {
                self.hot.push(r);
            } else {
                self.hot[self.hot_head] = r;
                self.hot_head = (self.hot_head + 1) % cap;
            }
            r
        });
        self.bursts += 1;
        self.next = region * self.spec.burst_blocks;
        self.end = self.next + self.spec.burst_blocks;
    }

    /// The next request, `None` after the last page.
    pub fn next_req(&mut self) -> Option<Request> {
        let remaining = self.total_pages - self.emitted;
        if remaining == 0 {
            return None;
        }
        let mut gap = self.mean_gap_ns * exp1(&mut self.rng_time);
        if self.idle_pending {
            gap += self.mean_idle_ns * exp1(&mut self.rng_time);
            self.idle_pending = false;
        }
        self.time_ns += gap as u64;

        // A kind is chosen when issuing it keeps its share at or below the target.
        let request = self.spec.request_blocks.min(remaining);
        let is_read = (self.read + request) as f64 <= self.spec.reads * (self.emitted + request) as f64;
        let (op, block, k) = if is_read {
            self.read += request;
            let b = self.rng_read.random_range(0..=self.range_blocks - request);
            (Op::Read, b, request)
        } else if (self.trickled + 1) as f64 <= self.spec.trickle * (self.written + 1) as f64 {
            self.trickled += 1;
            (Op::Write, self.rng_trickle.random_range(0..self.range_blocks), 1)
        } else {
            if self.next == self.end {
                self.start_burst();
            }
            let k = request.min(self.end - self.next);
            let b = self.next;
            self.next += k;
            self.idle_pending = self.next == self.end;
            (Op::Write, b, k)
        };
        if op == Op::Write {
            self.written += k;
        }
        self.emitted += k;
        self.requests += 1;
        Some(Request {
            time_ns: self.time_ns,
            volume: self.spec.volume,
            op,
            offset: block * BLOCK_SIZE,
            len: (k * BLOCK_SIZE) as u32,
        })
    }
}

impl Iterator for BurstTrace {
    type Item = Request;
    fn next(&mut self) -> Option<Request> {
        self.next_req()
    }
}

impl crate::TraceReader for BurstTrace {
    fn next_request(&mut self) -> Result<Option<Request>, TraceError> {
        Ok(self.next_req())
    }
    fn format_name(&self) -> &'static str {
        "synth"
    }
}
