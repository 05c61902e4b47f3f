//! The generator: a static layout of live extents built once per trace, and a per-request state
//! machine (first-touch frontier, Zipf popularity, recent re-references, sequential streams).
//!
//! Memory is bounded by the layout: about 32 bytes per live 256 KiB extent (about twice that
//! while building), a re-reference ring of 16 bytes per entry (2% of the live blocks' worth of
//! requests, at most 2^20 entries) and 48 KiB of size tables. Nothing grows with the trace
//! length.

use super::profiles::Profile;
use super::{SynthSpec, SynthTargets};
use crate::Request;
use rand::{Rng, RngCore, SeedableRng};
use rand_pcg::Pcg64Mcg;
use shingled_core::{Op, BLOCK_SIZE};

/// Blocks per extent, the unit of popularity (64 × 4 KiB = 256 KiB).
const EXTENT_BLOCKS: u64 = 64;
/// Extents per layout cell (4 MiB); every cell holds at least one live extent.
const CELL_EXTENTS: u64 = 16;
/// Blocks per heat cluster (32 MiB, a little more than one 17–36 MB band): popularity ranks are
/// drawn per heat cluster, so heat is grouped at band scale whatever the trace scale. Phase
/// clusters (the unit of the active set) are this size times the scale, so that the active set
/// covers the same share of the range at every scale and hit ratios stay put; at scale 1 the
/// two coincide.
const CLUSTER_BLOCKS: u64 = 8192;
/// How many clusters' worth of rank an extent's heat key may be jittered by.
const CLUSTER_JITTER: f64 = 1.5;
/// Request sizes of the size mix, in 4 KiB pages (4 KiB … 128 KiB).
const SIZE_PAGES: [u32; 7] = [1, 2, 3, 4, 8, 16, 32];
/// Base shape of the size mix before it is tilted to a profile's mean: 4 KiB most common, then
/// 8 KiB, then a tail up to 128 KiB.
const SIZE_BASE: [f64; 7] = [0.44, 0.25, 0.05, 0.10, 0.09, 0.05, 0.02];
/// Resolution of the size lookup table (probabilities are quantised to 1/1024).
const SIZE_TABLE: usize = 1024;
/// Size tables per op, tilted to `SIZE_MULT_LO · SIZE_MULT_STEP^i` times the op's mean; a
/// feedback loop picks the level that makes the realised mean match (re-references repeat old
/// sizes and streams stop at extent ends, so the fresh requests must compensate).
const SIZE_LEVELS: usize = 24;
const SIZE_MULT_LO: f64 = 0.6;
const SIZE_MULT_STEP: f64 = 1.06;
/// Number of concurrent sequential streams.
const STREAMS: usize = 4;
/// Clusters in the active set of each op (the phase model): popular requests go to one of
/// them; each request replaces one with probability `Profile::swap`.
const ACTIVE: usize = 8;
/// Share of short gaps in the two-phase hyper-exponential inter-arrival law.
const BURST_SHARE: f64 = 0.9;
/// Mean of a short gap relative to the overall mean.
const BURST_MEAN: f64 = 0.2;
/// The frontier (first touches) is paced to finish at this fraction of the trace.
const FRONTIER_FINISH: f64 = 0.95;
/// At most this share of a trace's pages are first touches (matters only with `pages=`).
const FRONTIER_CAP: f64 = 0.6;
/// Pages of frontier lag at which a frontier request becomes (almost) certain.
const FRONTIER_LAG: f64 = 32.0;
/// Gain of the write-fraction feedback.
const WRITE_GAIN: f64 = 32.0;

/// Walker/Vose alias table: O(1) sampling from a discrete distribution with one `u64`.
#[derive(Clone, Debug)]
struct Alias {
    /// (acceptance threshold on the low 32 bits, alias index)
    slots: Vec<(u32, u32)>,
}

impl Alias {
    fn new(weights: &[f64]) -> Alias {
        let n = weights.len();
        assert!(n > 0 && n <= u32::MAX as usize);
        let sum: f64 = weights.iter().sum();
        debug_assert!(sum > 0.0 && sum.is_finite(), "alias weights must have a positive sum");
        let mut scaled: Vec<f64> = weights.iter().map(|w| w * n as f64 / sum).collect();
        let mut slots = vec![(u32::MAX, 0u32); n];
        let (mut small, mut large): (Vec<usize>, Vec<usize>) = (0..n).partition(|&i| scaled[i] < 1.0);
        while let (Some(s), Some(&l)) = (small.pop(), large.last()) {
            slots[s] = (((scaled[s] * 4_294_967_296.0) as u64).min(u32::MAX as u64) as u32, l as u32);
            scaled[l] -= 1.0 - scaled[s];
            if scaled[l] < 1.0 {
                large.pop();
                small.push(l);
            }
        }
        // Leftovers (rounding): always accept, unless the weight is zero (then never).
        let fallback = (0..n).max_by(|&a, &b| weights[a].total_cmp(&weights[b])).unwrap_or(0) as u32;
        for i in small.into_iter().chain(large) {
            slots[i] = if weights[i] > 0.0 { (u32::MAX, i as u32) } else { (0, fallback) };
        }
        Alias { slots }
    }

    #[inline(always)]
    fn sample(&self, r: u64) -> usize {
        Alias::sample_in(&self.slots, r)
    }

    /// Samples from a table stored as a slice (the per-cluster tables share one vector).
    #[inline(always)]
    fn sample_in(slots: &[(u32, u32)], r: u64) -> usize {
        let i = (((r >> 32) * slots.len() as u64) >> 32) as usize;
        let (p, a) = slots[i];
        if (r as u32) < p {
            i
        } else {
            a as usize
        }
    }
}

/// Builds a 1024-entry lookup table of request sizes (pages) whose mean is `mean` pages (or as
/// close as the 4 KiB … 128 KiB range allows).
fn size_table(mean: f64) -> Box<[u8; SIZE_TABLE]> {
    let mix = |t: f64| -> Vec<f64> {
        let w: Vec<f64> = SIZE_BASE.iter().zip(SIZE_PAGES).map(|(b, k)| b * (k as f64).powf(t)).collect();
        let s: f64 = w.iter().sum();
        w.into_iter().map(|x| x / s).collect()
    };
    let mean_of = |p: &[f64]| p.iter().zip(SIZE_PAGES).map(|(p, k)| p * k as f64).sum::<f64>();
    let (mut lo, mut hi) = (-8.0f64, 8.0f64);
    for _ in 0..60 {
        let mid = 0.5 * (lo + hi);
        if mean_of(&mix(mid)) < mean {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    let p = mix(0.5 * (lo + hi));
    // Largest-remainder quantisation to SIZE_TABLE slots.
    let exact: Vec<f64> = p.iter().map(|x| x * SIZE_TABLE as f64).collect();
    let mut counts: Vec<usize> = exact.iter().map(|x| x.floor() as usize).collect();
    let mut short = SIZE_TABLE - counts.iter().sum::<usize>();
    let mut order: Vec<usize> = (0..p.len()).collect();
    order.sort_by(|&a, &b| (exact[b] - exact[b].floor()).total_cmp(&(exact[a] - exact[a].floor())));
    for &i in order.iter().cycle() {
        if short == 0 {
            break;
        }
        counts[i] += 1;
        short -= 1;
    }
    let mut table = Box::new([1u8; SIZE_TABLE]);
    let mut at = 0;
    for (i, c) in counts.into_iter().enumerate() {
        for slot in &mut table[at..at + c] {
            *slot = SIZE_PAGES[i] as u8;
        }
        at += c;
    }
    table
}

/// Mean pages of a size table.
fn table_mean(t: &[u8; SIZE_TABLE]) -> f64 {
    t.iter().map(|&k| k as f64).sum::<f64>() / SIZE_TABLE as f64
}

/// Table-driven standard exponential variate from 48 random bits: `-ln u` with `u = m·2^-(z+1)`,
/// `z` the leading zeros (exact: geometric) and `ln m`, `m` in [1, 2), interpolated in a
/// 256-entry table (absolute error below 2e-6). About five times cheaper than `f64::ln`.
#[derive(Clone, Debug)]
struct LnTable(Box<[f64; 257]>);

impl LnTable {
    fn new() -> LnTable {
        let mut t = Box::new([0.0; 257]);
        for (i, v) in t.iter_mut().enumerate() {
            *v = (1.0 + i as f64 / 256.0).ln();
        }
        LnTable(t)
    }

    #[inline(always)]
    fn exp1(&self, x48: u64) -> f64 {
        if x48 == 0 {
            return 48.0 * std::f64::consts::LN_2;
        }
        let z = x48.leading_zeros() - 16; // 0..=47
        let frac = x48.checked_shl(z + 17).unwrap_or(0); // bits below the leading one, left aligned
        let i = (frac >> 56) as usize;
        let t = ((frac >> 40) & 0xFFFF) as f64 * (1.0 / 65536.0);
        let ln_m = self.0[i] + t * (self.0[i + 1] - self.0[i]);
        (z + 1) as f64 * std::f64::consts::LN_2 - ln_m
    }
}

#[derive(Clone, Copy, Debug, Default)]
struct Stream {
    /// Next block of the stream.
    next: u64,
    /// End of the stream's extent (exclusive); 0 when the slot is inactive.
    end: u64,
    /// Pages per request.
    pages: u32,
    /// Requests left.
    left: u32,
    /// Write stream (else read).
    write: bool,
}

/// The synthetic trace; see the [module documentation](super) for the model.
#[derive(Clone, Debug)]
pub struct SynthTrace {
    rng: Pcg64Mcg,
    volume: u32,
    targets: SynthTargets,
    // progress
    total_pages: u64,
    emitted: u64,
    written: u64,
    requests: u64,
    time_ns: u64,
    // op choice
    write_frac: f64,
    q0: f64,
    /// Current write probability of free-op requests, on 16 bits.
    q16: u32,
    // layout: extents sorted by start block; extents with index < n_written are writable
    ext_start: Vec<u64>,
    ext_len: Vec<u32>,
    n_written: u32,
    written_end_byte: u64,
    /// First extent of every phase cluster (extents are in LBA order), plus `n` at the end.
    cl_start: Vec<u32>,
    /// Cluster popularity `[reads: all extents, writes: writable extents]`.
    cl_pop: Box<[Alias; 2]>,
    /// Per-cluster extent alias tables, concatenated in cluster order so that cluster `c`'s
    /// table starts at `cl_start[c]`: `[reads, writes]` (the write tables cover only the
    /// writable prefix `..n_written` of each cluster).
    local: Box<[Vec<(u32, u32)>; 2]>,
    /// The active clusters, `[reads, writes]`.
    active: [[u32; ACTIVE]; 2],
    /// Probability (16 bits) that a popular request first swaps its active slot.
    swap: u32,
    // frontier
    front_order: Vec<u32>,
    front_pos: usize,
    front_cursor: u64,
    front_write: bool,
    front_consumed: u64,
    front_total: u64,
    /// `span`: dense 4 MiB cells `n` spread over `m` cells (cell `c` → `c·m/n`); `None`: dense.
    spread: Option<(u64, u64)>,
    front_rate: f64,
    front_p_write: u32,
    // modes (thresholds on 16 random bits, cumulative)
    t_reref: u32,
    t_stream: u32,
    unaligned: u32,
    streams: [Stream; STREAMS],
    // re-reference ring
    hist: Vec<(u64, u32)>,
    hist_head: usize,
    hist_len: usize,
    hist_bits: u32,
    /// Re-reference window in requests (<= ring size).
    window: usize,
    // sizes
    /// Size lookup tables, `[read, write][level]`.
    sizes: Box<[[[u8; SIZE_TABLE]; SIZE_LEVELS]; 2]>,
    /// Current level per op, `[read, write]`.
    size_level: [usize; 2],
    /// Target mean pages per request, `[read, write]`.
    size_target: [f64; 2],
    /// Requests and pages so far per op, `[read, write]`.
    op_requests: [u64; 2],
    op_pages: [u64; 2],
    // timing
    burst_thresh: u32,
    /// Means of the short (burst) and long (idle) gaps.
    mean_ns: [f64; 2],
    ln_table: LnTable,
}

/// A 64-bit mix of the profile name, so that the same seed gives unrelated streams for two
/// profiles.
fn name_hash(name: &str) -> u64 {
    name.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| (h ^ b as u64).wrapping_mul(0x0100_0000_01b3))
}

/// Lays live extents over `[lo, hi)`: cells of 16 extents, each holding a random subset whose
/// size follows `density` with ±50% cell-to-cell variation and at least one extent per cell.
fn tile(lo: u64, hi: u64, ext: u64, density: f64, rng: &mut Pcg64Mcg, out: &mut Vec<(u64, u32)>) {
    let cell = ext * CELL_EXTENTS;
    let mut carry: f64 = rng.random();
    let mut s = lo;
    let mut idx: Vec<u64> = Vec::with_capacity(CELL_EXTENTS as usize);
    while s < hi {
        let ce = (s + cell).min(hi);
        let n = (ce - s).div_ceil(ext);
        let want = density * n as f64 * (0.5 + rng.random::<f64>()) + carry;
        let k = (want.floor() as u64).clamp(1, n);
        carry = (want - k as f64).clamp(-1.0, 1.0);
        idx.clear();
        idx.extend(0..n);
        for i in 0..k as usize {
            let j = rng.random_range(i..n as usize);
            idx.swap(i, j);
        }
        let chosen = &mut idx[..k as usize];
        chosen.sort_unstable();
        for &i in chosen.iter() {
            let start = s + i * ext;
            out.push((start, (ext.min(ce - start)) as u32));
        }
        s = ce;
    }
}

impl SynthTrace {
    pub(crate) fn build(spec: &SynthSpec, p: &'static Profile) -> SynthTrace {
        let targets = spec.targets_for(p);
        let seed = spec.seed ^ name_hash(p.name);
        let mut lrng = Pcg64Mcg::seed_from_u64(seed ^ 0x5eed_1a70_u64);
        let rng = Pcg64Mcg::seed_from_u64(seed.rotate_left(17) ^ 0x0123_4567_89ab_cdef);

        // ---- layout ----
        let span = targets.accessed_range_bytes / BLOCK_SIZE;
        let wr = targets.written_range_bytes / BLOCK_SIZE;
        let ext = EXTENT_BLOCKS.min((span / CELL_EXTENTS).max(1));
        let mut extents: Vec<(u64, u32)> = Vec::new();
        tile(0, wr, ext, p.density, &mut lrng, &mut extents);
        let n_written = extents.len() as u32;
        tile(wr, span, ext, p.density, &mut lrng, &mut extents);
        let n = extents.len();

        // Heat: clusters ranked at random; extents ordered by cluster rank plus jitter, then
        // Zipf over the normalised rank.
        let n_heat = span.div_ceil(CLUSTER_BLOCKS).max(1) as usize;
        let mut cluster_rank: Vec<u32> = (0..n_heat as u32).collect();
        for i in (1..n_heat).rev() {
            let j = lrng.random_range(0..=i);
            cluster_rank.swap(i, j);
        }
        let mut keyed: Vec<(f64, u32)> = extents
            .iter()
            .enumerate()
            .map(|(i, &(s, _))| {
                let c = (s / CLUSTER_BLOCKS) as usize;
                (cluster_rank[c] as f64 + CLUSTER_JITTER * lrng.random::<f64>(), i as u32)
            })
            .collect();
        keyed.sort_by(|a, b| a.0.total_cmp(&b.0));
        let mut weight = vec![0.0f64; n];
        // Exact mass of rank r under the continuous density (1-a)·x^-a on (0, 1]: the top
        // fraction c of extents gets c^(1-a) of the accesses at every scale.
        // Reads follow the ranking over all live extents; writes follow the same order
        // restricted to the writable extents, re-ranked among themselves so that the write skew
        // does not depend on where the read-only clusters happen to rank.
        let zipf_mass = |r: usize, of: usize| {
            let cdf = |r: usize| (r as f64 / of as f64).powf(1.0 - p.zipf);
            cdf(r + 1) - cdf(r)
        };
        // `tile` puts at least one extent in every non-empty area and the written area is never
        // empty, so `n_written >= 1`.
        let mut weight_w = vec![0.0f64; n_written as usize];
        let mut rank_w = 0;
        for (rank, &(_, i)) in keyed.iter().enumerate() {
            // Popularity per block: extents may be short at area ends.
            let len_share = extents[i as usize].1 as f64 / ext as f64;
            weight[i as usize] = zipf_mass(rank, n) * len_share;
            if i < n_written {
                weight_w[i as usize] = zipf_mass(rank_w, n_written as usize) * len_share;
                rank_w += 1;
            }
        }
        // Phase model: per-cluster tables and cluster weights. A cluster's share of accesses is
        // (its chance to enter the active set) x (its stay, the same for all), so the long-run
        // popularity of every extent stays exactly its Zipf weight.
        let cluster = ((CLUSTER_BLOCKS as f64 * spec.scale).round() as u64).max(ext);
        let n_clusters = span.div_ceil(cluster).max(1) as usize;
        let mut cl_start = Vec::with_capacity(n_clusters + 1);
        let mut at = 0usize;
        for c in 0..n_clusters as u64 {
            while at < n && extents[at].0 < c * cluster {
                at += 1;
            }
            cl_start.push(at as u32);
        }
        cl_start.push(n as u32);
        let mut local: [Vec<(u32, u32)>; 2] = [Vec::with_capacity(n), Vec::with_capacity(n_written as usize)];
        let mut cw = [vec![0.0f64; n_clusters], vec![0.0f64; n_clusters]];
        for c in 0..n_clusters {
            let (lo, hi) = (cl_start[c] as usize, cl_start[c + 1] as usize);
            if lo < hi {
                local[0].extend(Alias::new(&weight[lo..hi]).slots);
                cw[0][c] = weight[lo..hi].iter().sum();
            }
            let hw = hi.min(n_written as usize);
            if lo < hw {
                local[1].extend(Alias::new(&weight_w[lo..hw]).slots);
                cw[1][c] = weight_w[lo..hw].iter().sum();
            }
        }
        let cl_pop = Box::new([Alias::new(&cw[0]), Alias::new(&cw[1])]);
        let mut active = [[0u32; ACTIVE]; 2];
        for (op, slots) in active.iter_mut().enumerate() {
            for a in slots.iter_mut() {
                *a = cl_pop[op].sample(lrng.next_u64()) as u32;
            }
        }

        // First touches: clusters in random order, extents in LBA order inside each (data is
        // allocated, and first written or read, region by region).
        let mut cl_order: Vec<usize> = (0..n_clusters).collect();
        for i in (1..n_clusters).rev() {
            let j = lrng.random_range(0..=i);
            cl_order.swap(i, j);
        }
        let front_order: Vec<u32> = cl_order.iter().flat_map(|&c| cl_start[c]..cl_start[c + 1]).collect();
        let live: u64 = extents.iter().map(|e| e.1 as u64).sum();

        // ---- sizes and op mix ----
        let (mw, mr) = p.mean_pages();
        let mut sizes = Box::new([[[1u8; SIZE_TABLE]; SIZE_LEVELS]; 2]);
        for (op, mean) in [(0, mr), (1, mw)] {
            for (i, t) in sizes[op].iter_mut().enumerate() {
                *t = *size_table(mean * SIZE_MULT_LO * SIZE_MULT_STEP.powi(i as i32));
            }
        }
        let unit_level = ((1.0 / SIZE_MULT_LO).ln() / SIZE_MULT_STEP.ln()).round() as usize;
        let (tw, tr) = (table_mean(&sizes[1][unit_level]), table_mean(&sizes[0][unit_level]));
        let f = p.write_pct / 100.0;
        let q0 = f * tr / (f * tr + (1.0 - f) * tw);

        // ---- re-reference ring: window in pages → requests ----
        let mean_req = f * tw + (1.0 - f) * tr;
        let window_req = (p.reref_window * live as f64 / mean_req).clamp(16.0, (1u64 << 20) as f64);
        let hist_bits = (window_req.log2().ceil() as u32).clamp(4, 20);

        let total_pages = targets.pages;
        let front_total = live.min((FRONTIER_CAP * total_pages as f64) as u64);
        let front_rate = front_total as f64 / (FRONTIER_FINISH * total_pages as f64).max(1.0);

        let mean_ns = targets.mean_interarrival_ns;
        let mean_short_ns = BURST_MEAN * mean_ns;
        let mean_long_ns = (mean_ns - BURST_SHARE * mean_short_ns) / (1.0 - BURST_SHARE);
        let p16 = |x: f64| (x.clamp(0.0, 1.0) * 65536.0) as u32;

        let (ext_start, ext_len): (Vec<u64>, Vec<u32>) = extents.into_iter().unzip();
        let spread = crate::request::spread_cells(targets.accessed_range_bytes, targets.span_bytes);
        SynthTrace {
            spread,
            rng,
            volume: spec.volume,
            targets,
            total_pages,
            emitted: 0,
            written: 0,
            requests: 0,
            time_ns: 0,
            write_frac: f,
            q0,
            q16: p16(q0),
            written_end_byte: wr * BLOCK_SIZE,
            ext_start,
            ext_len,
            n_written,
            cl_start,
            cl_pop,
            local: Box::new(local),
            active,
            // Stays in the active set last `ACTIVE / swap` requests: proportional to the scale,
            // like the trace, so each visit re-touches its (scaled) cluster equally densely.
            swap: p16(p.swap / spec.scale),
            front_order,
            front_pos: 0,
            front_cursor: 0,
            front_write: false,
            front_consumed: 0,
            front_total,
            front_rate,
            front_p_write: p16(0.5 + 0.5 * f),
            t_reref: p16(p.p_reref),
            t_stream: p16(p.p_reref + p.p_stream),
            unaligned: p16(p.unaligned),
            streams: [Stream::default(); STREAMS],
            hist: vec![(0, 0); 1 << hist_bits],
            hist_head: 0,
            hist_len: 0,
            hist_bits,
            window: window_req as usize,
            sizes,
            size_level: [unit_level; 2],
            size_target: [mr, mw],
            op_requests: [0; 2],
            op_pages: [0; 2],
            burst_thresh: p16(BURST_SHARE),
            mean_ns: [mean_short_ns, mean_long_ns],
            ln_table: LnTable::new(),
        }
    }

    /// What this trace is built to reproduce (scaled figures and model targets).
    pub fn targets(&self) -> &SynthTargets {
        &self.targets
    }

    /// Live blocks of the layout: the distinct-block footprint once every first touch is done.
    pub fn live_blocks(&self) -> u64 {
        self.ext_len.iter().map(|&l| l as u64).sum()
    }

    /// Requests generated so far.
    pub fn requests(&self) -> u64 {
        self.requests
    }

    /// The next request, `None` after the last page. The infallible form of
    /// [`crate::TraceReader::next_request`].
    #[inline]
    pub fn next_req(&mut self) -> Option<Request> {
        let remaining = self.total_pages - self.emitted;
        if remaining == 0 {
            return None;
        }
        let r = self.rng.next_u64();
        let (write, mut offset, mut len) = if self.front_wants(r) {
            self.frontier()
        } else {
            let m = ((r >> 16) & 0xFFFF) as u32;
            let want_write = self.choose_write(r);
            if m < self.t_reref && self.hist_len > 0 {
                self.reref(want_write)
            } else if m < self.t_stream {
                self.stream(r, want_write)
            } else {
                self.popular(want_write).0
            }
        };
        // Truncate the last request so that the page total is exact.
        let first = offset / BLOCK_SIZE;
        let mut pages = (offset + len as u64).div_ceil(BLOCK_SIZE) - first;
        if pages > remaining {
            len = ((first + remaining) * BLOCK_SIZE - offset) as u32;
            pages = remaining;
        }
        if len == 0 {
            // Cannot happen (every request has at least 512 bytes), but keep the count exact.
            len = 512;
            offset = first * BLOCK_SIZE;
        }
        self.emitted += pages;
        if write {
            self.written += pages;
        }
        self.op_requests[write as usize] += 1;
        self.op_pages[write as usize] += pages;
        self.hist[self.hist_head] = (offset, len);
        self.hist_head = (self.hist_head + 1) & ((1 << self.hist_bits) - 1);
        self.hist_len = (self.hist_len + 1).min(1 << self.hist_bits);
        self.requests += 1;
        self.time_ns += self.gap_ns();
        if let Some(nm) = self.spread {
            offset = crate::request::spread_offset(offset, nm);
        }
        Some(Request {
            time_ns: self.time_ns,
            volume: self.volume,
            op: if write { Op::Write } else { Op::Read },
            offset,
            len,
        })
    }

    #[inline(always)]
    fn front_wants(&self, r: u64) -> bool {
        if self.front_consumed >= self.front_total {
            return false;
        }
        let desired = self.emitted as f64 * self.front_rate;
        let lag = desired - self.front_consumed as f64;
        lag > 0.0 && ((r & 0xFFFF) as f64) < (lag * (65536.0 / FRONTIER_LAG)).min(62000.0)
    }

    /// Feedback, every 32 requests: the write probability of free-op requests from the write
    /// share so far, and each op's size level from its mean size so far.
    #[inline(never)]
    fn steer(&mut self) {
        let seen = self.emitted.max(1) as f64;
        let err = self.write_frac - self.written as f64 / seen;
        self.q16 = ((self.q0 + WRITE_GAIN * err).clamp(0.0, 1.0) * 65536.0) as u32;
        for op in 0..2 {
            let want = self.size_target[op] * self.op_requests[op] as f64;
            let got = self.op_pages[op] as f64;
            let l = &mut self.size_level[op];
            if got < want {
                *l = (*l + 1).min(SIZE_LEVELS - 1);
            } else if got > want {
                *l = l.saturating_sub(1);
            }
        }
    }

    #[inline(always)]
    fn choose_write(&mut self, r: u64) -> bool {
        if self.requests & 31 == 0 {
            self.steer();
        }
        (((r >> 32) & 0xFFFF) as u32) < self.q16
    }

    #[inline(always)]
    fn size_pages(&self, write: bool, r: u64) -> u64 {
        let op = write as usize;
        self.sizes[op][self.size_level[op]][(r as usize) & (SIZE_TABLE - 1)] as u64
    }

    /// First touch: walk the live extents in a random order, each front to back.
    fn frontier(&mut self) -> (bool, u64, u32) {
        let e = self.front_order[self.front_pos] as usize;
        let r = self.rng.next_u64();
        if self.front_cursor == 0 {
            self.front_write = (e as u32) < self.n_written && ((r >> 48) as u32) < self.front_p_write;
        }
        let write = self.front_write;
        let (start, elen) = (self.ext_start[e], self.ext_len[e] as u64);
        let k = self.size_pages(write, r).min(elen - self.front_cursor);
        let block = start + self.front_cursor;
        self.front_cursor += k;
        self.front_consumed += k;
        if self.front_cursor >= elen {
            self.front_cursor = 0;
            self.front_pos += 1;
            if self.front_pos == self.front_order.len() {
                self.front_total = self.front_consumed;
            }
        }
        (write, block * BLOCK_SIZE, (k * BLOCK_SIZE) as u32)
    }

    /// Zipf-popular extent, uniform position inside it. Returns the request and the block range
    /// end of its extent (for seeding a stream).
    #[inline(always)]
    fn popular(&mut self, write: bool) -> ((bool, u64, u32), u64) {
        let op = write as usize;
        let r = self.rng.next_u64();
        let slot = (r >> 61) as usize & (ACTIVE - 1);
        if ((r >> 40) & 0xFFFF) < self.swap as u64 {
            self.active[op][slot] = self.cl_pop[op].sample(self.rng.next_u64()) as u32;
        }
        let c = self.active[op][slot] as usize;
        let lo = self.cl_start[c] as usize;
        let hi =
            if write { (self.cl_start[c + 1]).min(self.n_written) } else { self.cl_start[c + 1] } as usize;
        let e = lo + Alias::sample_in(&self.local[op][lo..hi], self.rng.next_u64());
        let r = self.rng.next_u64();
        let (start, elen) = (self.ext_start[e], self.ext_len[e] as u64);
        let end = start + elen;
        let k = self.size_pages(write, r).min(elen);
        let block = start + ((((r >> 10) & 0xFFFF_FFFF) * (elen - k + 1)) >> 32);
        if ((r >> 42) & 0xFFFF) < self.unaligned as u64 {
            // 512-byte aligned, 512 B .. 4 KiB long, starting inside `block`.
            let j = 1 + ((r >> 58) % 7); // 1..=7 sectors into the block
            let mut sectors = 1 + ((r >> 61) & 7); // 1..=8 sectors
            if j + sectors > 8 && block + 1 >= end {
                sectors = 8 - j;
            }
            return ((write, block * BLOCK_SIZE + j * 512, (sectors * 512) as u32), end);
        }
        ((write, block * BLOCK_SIZE, (k * BLOCK_SIZE) as u32), end)
    }

    /// Continue one of the sequential streams, or start it from a popular request.
    #[inline(always)]
    fn stream(&mut self, r: u64, write: bool) -> (bool, u64, u32) {
        let slot = ((r >> 48) as usize) & (STREAMS - 1);
        let s = self.streams[slot];
        if s.end != 0 {
            let k = (s.pages as u64).min(s.end - s.next);
            let st = &mut self.streams[slot];
            st.next += k;
            st.left -= 1;
            if st.next >= st.end || st.left == 0 {
                st.end = 0;
            }
            return (s.write, s.next * BLOCK_SIZE, (k * BLOCK_SIZE) as u32);
        }
        let ((w, off, len), end) = self.popular(write);
        let next = (off + len as u64).div_ceil(BLOCK_SIZE);
        if off % BLOCK_SIZE == 0 && next < end {
            self.streams[slot] = Stream {
                next,
                end,
                pages: len / BLOCK_SIZE as u32,
                left: 2 + ((r >> 50) & 15) as u32,
                write: w,
            };
        }
        (w, off, len)
    }

    /// Repeat a recent request (same bytes), as a read or a write.
    #[inline(always)]
    fn reref(&mut self, write: bool) -> (bool, u64, u32) {
        let r = self.rng.next_u64();
        // Product of two uniforms: recent entries are re-referenced more often.
        // u1·u2 on 32 bits, scaled to the filled part of the window.
        let j = ((((r & 0xFFFF_FFFF) * (r >> 32)) >> 32) * self.hist_len.min(self.window) as u64) >> 32;
        let j = j as usize;
        let mask = (1usize << self.hist_bits) - 1;
        let (offset, len) = self.hist[(self.hist_head + mask - j) & mask];
        (write && offset < self.written_end_byte, offset, len)
    }

    /// Inter-arrival gap: two-phase hyper-exponential (bursts and idle periods).
    #[inline(always)]
    fn gap_ns(&mut self) -> u64 {
        let r = self.rng.next_u64();
        let mean = self.mean_ns[(((r & 0xFFFF) as u32) >= self.burst_thresh) as usize];
        (self.ln_table.exp1(r >> 16) * mean) as u64
    }
}

impl Iterator for SynthTrace {
    type Item = Request;
    #[inline]
    fn next(&mut self) -> Option<Request> {
        self.next_req()
    }
}

impl crate::TraceReader for SynthTrace {
    fn next_request(&mut self) -> Result<Option<Request>, crate::TraceError> {
        Ok(self.next_req())
    }
    fn format_name(&self) -> &'static str {
        "synth"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn alias_samples_in_proportion() {
        let w = [1.0, 0.0, 3.0, 6.0];
        let a = Alias::new(&w);
        let mut rng = Pcg64Mcg::seed_from_u64(1);
        let mut n = [0u32; 4];
        for _ in 0..100_000 {
            n[a.sample(rng.next_u64())] += 1;
        }
        assert_eq!(n[1], 0);
        for (i, &wi) in w.iter().enumerate() {
            let p = n[i] as f64 / 100_000.0;
            assert!((p - wi / 10.0).abs() < 0.01, "{i}: {p}");
        }
    }

    #[test]
    fn table_exponential_matches_ln() {
        let t = LnTable::new();
        let mut rng = Pcg64Mcg::seed_from_u64(2);
        let mut sum = 0.0;
        for _ in 0..100_000 {
            let x = rng.next_u64() >> 16;
            let exact = -(((x as f64) + 0.5) / 281_474_976_710_656.0).ln();
            let fast = t.exp1(x);
            assert!((fast - exact).abs() < 1e-5, "{x}: {fast} vs {exact}");
            sum += fast;
        }
        assert!((sum / 100_000.0 - 1.0).abs() < 0.02);
        assert!(t.exp1(0) > 30.0 && t.exp1(1) > 30.0);
    }

    #[test]
    fn size_tables_hit_their_mean_and_favour_small_sizes() {
        for mean in [1.9, 2.3, 3.2, 6.0, 10.3] {
            let t = size_table(mean);
            assert!((table_mean(&t) / mean - 1.0).abs() < 0.02, "{mean}: {}", table_mean(&t));
        }
        let t = size_table(2.3);
        let count = |k: u8| t.iter().filter(|&&x| x == k).count();
        assert!(count(1) > count(2) && count(2) > count(4) && count(4) > count(32));
    }
}
