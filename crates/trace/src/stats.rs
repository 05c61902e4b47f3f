//! Trace statistics: the PORE paper's Table I row (requests, write ratio, written and accessed
//! LBA range) and the footprint figures the simulator sizes caches and persistent buffers from.
//!
//! Counting conventions (DESIGN.md, "Units and defaults"):
//! * *requests* are the trace's own requests; *pages* are the 4 KiB blocks each touches
//!   (unaligned requests are widened to whole blocks, as [`crate::Request::blocks`] does), which is how
//!   the papers count "total requests";
//! * the *written LBA range* and *accessed LBA range* are given two ways: distinct bytes (distinct
//!   4 KiB blocks × 4096) and covered-band bytes (total size of the bands holding at least one
//!   written, resp. accessed, block — PORE Table I's definition). Both band figures use one band
//!   layout built over `[0, highest accessed block]`, so the last band may be cut short there.

use crate::{TraceError, TraceReader};
use rustc_hash::FxHashMap;
use serde::Serialize;
use shingled_core::{blocks_of, BandConfig, BandMap, BlockNo, ByteSize, BLOCK_SIZE};
use std::collections::BTreeMap;

/// Chunks (of 512 blocks, 2 MiB of LBA space) below this one are found through a directory
/// indexed by chunk number, grown on demand up to 4 bytes × this (16 MiB, for 8 TiB of LBA
/// space); chunks past it through a hash map. (Tests use a small directory, so that their
/// ranges cross its end cheaply.)
const DENSE_CHUNKS: u64 = if cfg!(test) { 1 << 12 } else { 1 << 22 };

/// Highest LBA range (in blocks, 2^36 × 4 KiB = 256 TiB) for which a variable band layout is
/// built: its table costs about 12 bytes per band, so this bounds it near 200 MB.
const MAX_TABLE_BLOCKS: u64 = 1 << 36;

/// 512 blocks of `L` bitmaps ("lanes"), word by word: `words[i][l]` holds blocks
/// `64 i .. 64 i + 64` of lane `l`, so the lanes of one block share a cache line.
#[derive(Clone, Copy, Debug)]
#[repr(C, align(64))]
struct Chunk<const L: usize> {
    words: [[u64; L]; 8],
}

impl<const L: usize> Chunk<L> {
    const EMPTY: Self = Chunk { words: [[0; L]; 8] };
}

/// Chunks per segment of a [`Pool`] (256 KiB of two-lane chunks; tests use small segments,
/// so that their sets cross segment edges).
const SEGMENT: usize = if cfg!(test) { 4 } else { 2048 };

/// The chunks of a [`Lanes`], in segments of [`SEGMENT`] that never move: growing it allocates
/// a segment instead of copying every chunk into a larger vector (on traces with random
/// offsets, where the pool grows to megabytes, that copy and the page faults of its new pages
/// were a fifth of `trace stats`' time).
#[derive(Clone, Debug)]
struct Pool<const L: usize> {
    segments: Vec<Vec<Chunk<L>>>,
    len: usize,
}

impl<const L: usize> Default for Pool<L> {
    fn default() -> Self {
        Pool { segments: Vec::new(), len: 0 }
    }
}

impl<const L: usize> Pool<L> {
    #[inline]
    fn len(&self) -> usize {
        self.len
    }
    #[inline]
    fn get(&self, i: usize) -> &Chunk<L> {
        &self.segments[i / SEGMENT][i % SEGMENT]
    }
    #[inline]
    fn get_mut(&mut self, i: usize) -> &mut Chunk<L> {
        &mut self.segments[i / SEGMENT][i % SEGMENT]
    }
    /// Appends an empty chunk.
    fn push_empty(&mut self) {
        if self.len.is_multiple_of(SEGMENT) {
            self.segments.push(Vec::with_capacity(SEGMENT));
        }
        self.segments[self.len / SEGMENT].push(Chunk::EMPTY);
        self.len += 1;
    }
    fn iter(&self) -> impl Iterator<Item = &Chunk<L>> {
        self.segments.iter().flatten()
    }
}

/// `L` sparse sets of 4 KiB block numbers sharing one index: 512-block chunks, each holding
/// the `L` sets' bits for its blocks side by side, found through a directory indexed by chunk
/// number (chunks below [`DENSE_CHUNKS`]) or a hash map (beyond).
///
/// Adding a range to several sets at once costs one lookup and touches one cache line per 64
/// blocks. Sizes are counted when asked for ([`Lanes::len`] scans the bitmaps), not on every
/// insertion. Memory is 64 × `L` bytes per touched 2 MiB of LBA space plus 4 bytes per 2 MiB
/// of directory up to the highest chunk touched below 8 TiB.
#[derive(Clone, Debug)]
pub(crate) struct Lanes<const L: usize> {
    /// Chunk number → index in `pool` + 1, 0 when the chunk is absent.
    dir: Vec<u32>,
    /// Chunk number (≥ [`DENSE_CHUNKS`]) → index in `pool`.
    far: FxHashMap<u64, u32>,
    pool: Pool<L>,
    /// One past the highest block added to any lane; 0 when nothing was.
    end: u64,
}

impl<const L: usize> Default for Lanes<L> {
    fn default() -> Self {
        Lanes { dir: Vec::new(), far: FxHashMap::default(), pool: Pool::default(), end: 0 }
    }
}

impl<const L: usize> Lanes<L> {
    /// Adds the blocks `start..end` (`start < end`) to each lane `l` whose `lanes[l]` is all
    /// ones (and to none whose `lanes[l]` is 0).
    #[inline]
    pub(crate) fn insert(&mut self, start: BlockNo, end: BlockNo, lanes: [u64; L]) {
        debug_assert!(start < end);
        self.end = self.end.max(end);
        let (first, last) = (start >> 6, (end - 1) >> 6);
        let head = !0u64 << (start & 63);
        let tail = !0u64 >> (63 - ((end - 1) & 63));
        if first == last {
            // The common case: the range lies in one 64-block word.
            let word = &mut self.chunk_mut(first >> 3).words[(first & 7) as usize];
            for l in 0..L {
                word[l] |= head & tail & lanes[l];
            }
        } else {
            self.insert_words(first, last, head, tail, lanes);
        }
    }

    /// [`Lanes::insert`] of a range over several words: `head` masks word `first`, `tail`
    /// word `last`.
    fn insert_words(&mut self, first: u64, last: u64, head: u64, tail: u64, lanes: [u64; L]) {
        let mut w = first;
        loop {
            let stop = last.min(w | 7);
            let chunk = self.chunk_mut(w >> 3);
            for x in w..=stop {
                let mut m = !0u64;
                if x == first {
                    m &= head;
                }
                if x == last {
                    m &= tail;
                }
                let word = &mut chunk.words[(x & 7) as usize];
                for l in 0..L {
                    word[l] |= m & lanes[l];
                }
            }
            if stop == last {
                return;
            }
            w = stop + 1;
        }
    }

    /// The chunk `key`, added empty if absent.
    #[inline]
    fn chunk_mut(&mut self, key: u64) -> &mut Chunk<L> {
        if key < self.dir.len() as u64 {
            let i = self.dir[key as usize];
            if i != 0 {
                return self.pool.get_mut(i as usize - 1);
            }
        }
        let i = self.add_chunk(key);
        self.pool.get_mut(i)
    }

    /// The pool index of chunk `key`, which the directory does not hold: looked up in the hash
    /// map past the directory, else added (growing the directory if need be).
    #[inline(never)]
    fn add_chunk(&mut self, key: u64) -> usize {
        let next = self.pool.len();
        let index = u32::try_from(next).ok().filter(|&i| i < u32::MAX).expect("fewer than 2^32 - 1 chunks");
        if key < DENSE_CHUNKS {
            let k = key as usize;
            if k >= self.dir.len() {
                // A zeroed allocation: the pages of the directory that are never touched are
                // never made resident.
                let len = (k + 1).next_power_of_two().clamp(1024, DENSE_CHUNKS as usize);
                let mut dir = vec![0u32; len];
                dir[..self.dir.len()].copy_from_slice(&self.dir);
                self.dir = dir;
            }
            debug_assert_eq!(self.dir[k], 0, "chunk {key} is present");
            self.dir[k] = index + 1;
        } else {
            match self.far.entry(key) {
                std::collections::hash_map::Entry::Occupied(e) => return *e.get() as usize,
                std::collections::hash_map::Entry::Vacant(e) => {
                    e.insert(index);
                }
            }
        }
        self.pool.push_empty();
        next
    }

    /// Starts bringing the word holding `block` into the cache (if its chunk is in the
    /// directory), so that a later [`Lanes::insert`] does not wait for it.
    #[inline]
    pub(crate) fn prefetch(&self, block: BlockNo) {
        let key = block >> 9;
        if key < self.dir.len() as u64 {
            let i = self.dir[key as usize];
            if i != 0 {
                shingled_core::mem::prefetch(&self.pool.get(i as usize - 1).words, (block >> 6 & 7) as usize);
            }
        }
    }

    /// The chunk `key`, if present.
    fn chunk(&self, key: u64) -> Option<&Chunk<L>> {
        if key < DENSE_CHUNKS {
            match self.dir.get(key as usize) {
                Some(&i) if i != 0 => Some(self.pool.get(i as usize - 1)),
                _ => None,
            }
        } else {
            self.far.get(&key).map(|&i| self.pool.get(i as usize))
        }
    }

    /// Every chunk with its number, in block order.
    fn chunks_in_order(&self) -> impl Iterator<Item = (u64, &Chunk<L>)> {
        let mut far: Vec<(u64, u32)> = self.far.iter().map(|(&k, &i)| (k, i)).collect();
        far.sort_unstable();
        let dense = self
            .dir
            .iter()
            .enumerate()
            .filter(|&(_, &i)| i != 0)
            .map(|(k, &i)| (k as u64, self.pool.get(i as usize - 1)));
        dense.chain(far.into_iter().map(|(k, i)| (k, self.pool.get(i as usize))))
    }

    /// Adds every block of every lane of `other` to the same lane here.
    pub(crate) fn union(&mut self, other: &Lanes<L>) {
        for (key, theirs) in other.chunks_in_order() {
            let ours = self.chunk_mut(key);
            for (o, t) in ours.words.iter_mut().zip(&theirs.words) {
                for l in 0..L {
                    o[l] |= t[l];
                }
            }
        }
        self.end = self.end.max(other.end);
    }

    /// Whether `block` is in lane `lane`.
    pub(crate) fn contains(&self, lane: usize, block: BlockNo) -> bool {
        let off = block & 511;
        self.chunk(block >> 9).is_some_and(|c| c.words[(off >> 6) as usize][lane] >> (off & 63) & 1 == 1)
    }

    /// Number of distinct blocks in lane `lane` (counted from the bitmaps).
    pub(crate) fn len(&self, lane: usize) -> u64 {
        self.pool.iter().flat_map(|c| &c.words).map(|w| w[lane].count_ones() as u64).sum()
    }

    /// The highest block added to any lane.
    pub(crate) fn max_block(&self) -> Option<BlockNo> {
        self.end.checked_sub(1)
    }

    /// The bands of `map` holding at least one block of lane `lane`: their number and total
    /// bytes.
    ///
    /// Visits chunks in block order and jumps to the end of each band found, so the cost is
    /// one band lookup per covered band plus a scan of the bitmaps.
    pub(crate) fn covered_bands(&self, lane: usize, map: &BandMap) -> (u64, u64) {
        let (mut bands, mut bytes) = (0u64, 0u64);
        let mut covered_to: BlockNo = 0; // every block below this is in a counted band
        for (k, chunk) in self.chunks_in_order() {
            let base = k << 9;
            if covered_to >= base + 512 {
                continue;
            }
            for (i, word) in chunk.words.iter().enumerate() {
                let wbase = base + 64 * i as u64;
                let mut bits = word[lane];
                loop {
                    if covered_to >= wbase + 64 {
                        break;
                    }
                    if covered_to > wbase {
                        bits &= !0u64 << (covered_to - wbase);
                    }
                    if bits == 0 {
                        break;
                    }
                    let block = wbase + bits.trailing_zeros() as u64;
                    let (start, n) = map.band_range(map.band_of(block));
                    bands += 1;
                    bytes += n * BLOCK_SIZE;
                    // A block past the map's capacity lands in the last band; never loop on it.
                    covered_to = (start + n).max(block + 1);
                }
            }
        }
        (bands, bytes)
    }
}

/// A sparse set of 4 KiB block numbers: 512-block chunks of bits, found through a directory
/// indexed by chunk number below 8 TiB of LBA space and through a hash map beyond.
///
/// Memory is about 64 bytes per touched 2 MiB of LBA space (plus a directory of 4 bytes per
/// 2 MiB up to the highest chunk touched below 8 TiB), so it follows a trace's footprint, not
/// its LBA span: a multi-TB range touched sparsely costs little. [`BlockSet::len`] counts the
/// bits, so it costs a scan of the set.
#[derive(Clone, Debug, Default)]
pub struct BlockSet {
    lanes: Lanes<1>,
}

impl BlockSet {
    /// An empty set.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds every block of `blocks` (an empty range adds nothing).
    pub fn insert_range(&mut self, blocks: std::ops::Range<BlockNo>) {
        if blocks.start < blocks.end {
            self.lanes.insert(blocks.start, blocks.end, [!0]);
        }
    }

    /// Whether `block` is in the set.
    pub fn contains(&self, block: BlockNo) -> bool {
        self.lanes.contains(0, block)
    }

    /// Number of distinct blocks (a scan of the set's bitmaps).
    pub fn len(&self) -> u64 {
        self.lanes.len(0)
    }

    /// Whether the set is empty.
    pub fn is_empty(&self) -> bool {
        self.lanes.end == 0
    }

    /// The highest block, if any.
    pub fn max_block(&self) -> Option<BlockNo> {
        self.lanes.max_block()
    }

    /// Adds every block of `other`.
    pub fn union(&mut self, other: &BlockSet) {
        self.lanes.union(&other.lanes);
    }

    /// The bands of `map` holding at least one block of the set: their number and total bytes.
    ///
    /// Visits chunks in block order and jumps to the end of each band found, so the cost is
    /// one band lookup per covered band plus a scan of the bitmaps.
    pub fn covered_bands(&self, map: &BandMap) -> (u64, u64) {
        self.lanes.covered_bands(0, map)
    }
}

/// Lane of [`Tally::sets`] holding every accessed block.
const ACCESSED: usize = 0;
/// Lane of [`Tally::sets`] holding the written blocks.
const WRITTEN: usize = 1;

/// The running totals of [`trace_stats`] over part of a trace. Every figure is a sum, a minimum,
/// a maximum or a set union, so tallies of the parts of a trace, [`Tally::merge`]d in any order,
/// give exactly the tally of the whole.
#[derive(Clone, Debug)]
pub(crate) struct Tally {
    sets: Lanes<2>,
    requests: u64,
    write_requests: u64,
    pages: u64,
    write_pages: u64,
    bytes: u64,
    write_bytes: u64,
    max_offset: u64,
    max_end: u64,
    first: u64,
    last: u64,
    /// Requests of each volume below [`SMALL_VOLUMES`] (MSR disk numbers and the like).
    small_volumes: Box<[u64; SMALL_VOLUMES]>,
    /// Requests of the other volumes, except those of the current run.
    volumes: BTreeMap<u32, u64>,
    /// Requests of volume `run_volume` (at least [`SMALL_VOLUMES`]) not yet counted in
    /// `volumes`: the current run of requests of one such volume.
    run: u64,
    run_volume: u32,
}

/// Volumes counted in an array rather than a map by [`Tally`].
const SMALL_VOLUMES: usize = 256;

impl Default for Tally {
    fn default() -> Self {
        Tally {
            sets: Lanes::default(),
            requests: 0,
            write_requests: 0,
            pages: 0,
            write_pages: 0,
            bytes: 0,
            write_bytes: 0,
            max_offset: 0,
            max_end: 0,
            first: u64::MAX,
            last: 0,
            small_volumes: Box::new([0; SMALL_VOLUMES]),
            volumes: BTreeMap::new(),
            run: 0,
            run_volume: u32::MAX,
        }
    }
}

impl Tally {
    /// Counts one request (the fields of a [`crate::Request`]).
    #[inline(always)]
    pub(crate) fn add(&mut self, time_ns: u64, offset: u64, write: bool, len: u32, volume: u32) {
        let blocks = blocks_of(offset, len as u64);
        let pages = blocks.end - blocks.start;
        let w = 0u64.wrapping_sub(write as u64); // all ones for a write
        self.requests += 1;
        self.write_requests += write as u64;
        self.pages += pages;
        self.write_pages += pages & w;
        self.bytes += len as u64;
        self.write_bytes += len as u64 & w;
        if pages != 0 {
            self.sets.insert(blocks.start, blocks.end, [!0, w]);
        }
        self.max_offset = self.max_offset.max(offset);
        self.max_end = self.max_end.max(offset.saturating_add(len as u64));
        self.first = self.first.min(time_ns);
        self.last = self.last.max(time_ns);
        if (volume as usize) < SMALL_VOLUMES {
            self.small_volumes[volume as usize] += 1;
        } else if volume == self.run_volume {
            self.run += 1;
        } else {
            self.new_run(volume);
        }
    }

    /// Prefetches the set word the request at `offset` will update first.
    #[inline(always)]
    pub(crate) fn prefetch(&self, offset: u64) {
        self.sets.prefetch(offset / BLOCK_SIZE)
    }

    /// Counts the current run of one volume's requests and starts one of `volume`.
    #[inline(never)]
    fn new_run(&mut self, volume: u32) {
        if self.run > 0 {
            *self.volumes.entry(self.run_volume).or_insert(0) += self.run;
        }
        self.run_volume = volume;
        self.run = 1;
    }

    /// Moves every count into `volumes`.
    fn flush_volumes(&mut self) {
        if self.run > 0 {
            *self.volumes.entry(self.run_volume).or_insert(0) += self.run;
            self.run = 0;
        }
        self.run_volume = u32::MAX;
        for (v, n) in self.small_volumes.iter_mut().enumerate() {
            if *n > 0 {
                *self.volumes.entry(v as u32).or_insert(0) += std::mem::take(n);
            }
        }
    }

    /// Adds the tally of another part of the trace.
    pub(crate) fn merge(&mut self, mut other: Tally) {
        // The larger set absorbs the smaller.
        if other.sets.pool.len() > self.sets.pool.len() {
            std::mem::swap(&mut self.sets, &mut other.sets);
        }
        self.sets.union(&other.sets);
        self.requests += other.requests;
        self.write_requests += other.write_requests;
        self.pages += other.pages;
        self.write_pages += other.write_pages;
        self.bytes += other.bytes;
        self.write_bytes += other.write_bytes;
        self.max_offset = self.max_offset.max(other.max_offset);
        self.max_end = self.max_end.max(other.max_end);
        self.first = self.first.min(other.first);
        self.last = self.last.max(other.last);
        self.flush_volumes();
        other.flush_volumes();
        for (v, n) in other.volumes {
            *self.volumes.entry(v).or_insert(0) += n;
        }
    }

    /// The statistics, with bands laid out by `bands` (already validated).
    pub(crate) fn finish(
        mut self,
        format: &str,
        skipped: u64,
        filtered: u64,
        bands: &BandConfig,
    ) -> Result<TraceStats, TraceError> {
        self.flush_volumes();
        let mut s = TraceStats {
            format: format.to_string(),
            requests: self.requests,
            read_requests: self.requests - self.write_requests,
            write_requests: self.write_requests,
            pages: self.pages,
            read_pages: self.pages - self.write_pages,
            write_pages: self.write_pages,
            bytes: self.bytes,
            read_bytes: self.bytes - self.write_bytes,
            write_bytes: self.write_bytes,
            max_offset: self.max_offset,
            max_end: self.max_end,
            volumes: self.volumes,
            skipped,
            filtered,
            ..TraceStats::default()
        };
        if s.requests > 0 {
            s.first_time_ns = Some(self.first);
            s.last_time_ns = Some(self.last);
            s.duration_ns = self.last - self.first;
            s.write_pct_requests = 100.0 * s.write_requests as f64 / s.requests as f64;
            s.mean_request_bytes = s.bytes as f64 / s.requests as f64;
        }
        if s.pages > 0 {
            s.write_pct_pages = 100.0 * s.write_pages as f64 / s.pages as f64;
        }
        s.written_distinct_bytes = self.sets.len(WRITTEN) * BLOCK_SIZE;
        s.accessed_distinct_bytes = self.sets.len(ACCESSED) * BLOCK_SIZE;
        if let Some(max) = self.sets.max_block() {
            let capacity_blocks = max + 1;
            if !matches!(bands, BandConfig::Fixed { .. }) && capacity_blocks > MAX_TABLE_BLOCKS {
                return Err(TraceError::Invalid(format!(
                    "the trace touches {} bytes of LBA space, beyond the 256 TiB a variable band layout is built for; use a fixed band size",
                    capacity_blocks.saturating_mul(BLOCK_SIZE)
                )));
            }
            let map = BandMap::build(bands, ByteSize(capacity_blocks.saturating_mul(BLOCK_SIZE)))
                .map_err(|e| TraceError::Invalid(e.to_string()))?;
            (s.written_bands, s.written_band_bytes) = self.sets.covered_bands(WRITTEN, &map);
            (s.accessed_bands, s.accessed_band_bytes) = self.sets.covered_bands(ACCESSED, &map);
        }
        Ok(s)
    }
}

/// The footprint figures cache and persistent-buffer sizing start from.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Footprint {
    /// Distinct written 4 KiB blocks × 4096.
    pub written_bytes: u64,
    /// Distinct accessed (read or written) 4 KiB blocks × 4096.
    pub accessed_bytes: u64,
    /// Total size of the bands holding at least one written block (PORE's written LBA range).
    pub written_band_bytes: u64,
    /// Total size of the bands holding at least one accessed block (PORE's accessed LBA range).
    pub accessed_band_bytes: u64,
    /// One past the highest byte any request touches (`max(offset + len)`).
    pub max_end: u64,
}

/// One trace's Table I row and more. Fields that are percentages say so; byte figures are bytes.
#[derive(Clone, Debug, Default, PartialEq, Serialize, serde::Deserialize)]
pub struct TraceStats {
    /// The reader's format name.
    pub format: String,
    /// Requests as the trace has them.
    pub requests: u64,
    /// Read requests.
    pub read_requests: u64,
    /// Write requests.
    pub write_requests: u64,
    /// 4 KiB page requests (each request counts every block it touches).
    pub pages: u64,
    /// Pages read.
    pub read_pages: u64,
    /// Pages written.
    pub write_pages: u64,
    /// Write requests as a percentage of requests (0 for an empty trace).
    pub write_pct_requests: f64,
    /// Written pages as a percentage of pages (0 for an empty trace).
    pub write_pct_pages: f64,
    /// Bytes requested (sum of lengths).
    pub bytes: u64,
    /// Bytes read.
    pub read_bytes: u64,
    /// Bytes written.
    pub write_bytes: u64,
    /// Mean request size in bytes.
    pub mean_request_bytes: f64,
    /// Distinct written blocks × 4096.
    pub written_distinct_bytes: u64,
    /// Distinct accessed blocks × 4096.
    pub accessed_distinct_bytes: u64,
    /// Bands holding at least one written block.
    pub written_bands: u64,
    /// Bands holding at least one accessed block.
    pub accessed_bands: u64,
    /// Total size of the written bands (PORE Table I "written LBA range").
    pub written_band_bytes: u64,
    /// Total size of the accessed bands (PORE Table I "accessed LBA range").
    pub accessed_band_bytes: u64,
    /// The largest request offset.
    pub max_offset: u64,
    /// One past the highest byte touched, `max(offset + len)`.
    pub max_end: u64,
    /// Earliest request time (ns, trace epoch); `None` for an empty trace.
    pub first_time_ns: Option<u64>,
    /// Latest request time.
    pub last_time_ns: Option<u64>,
    /// `last_time_ns - first_time_ns`.
    pub duration_ns: u64,
    /// Requests per volume, in volume order.
    pub volumes: BTreeMap<u32, u64>,
    /// Lines or records the reader skipped.
    pub skipped: u64,
    /// Requests the reader's volume filter dropped.
    pub filtered: u64,
}

impl TraceStats {
    /// The PORE Table I row and the rest, as aligned `name  value` lines for people.
    pub fn to_table(&self) -> String {
        let gb = |b: u64| format!("{:.3} GB ({b} bytes)", b as f64 / 1e9);
        let mut rows: Vec<(String, String)> = vec![
            ("format".into(), self.format.clone()),
            (
                "requests".into(),
                format!("{} ({} reads, {} writes)", self.requests, self.read_requests, self.write_requests),
            ),
            (
                "4 KiB page requests".into(),
                format!("{} ({} reads, {} writes)", self.pages, self.read_pages, self.write_pages),
            ),
            ("write % of requests".into(), format!("{:.1}%", self.write_pct_requests)),
            ("write % of pages".into(), format!("{:.1}%", self.write_pct_pages)),
            (
                "written LBA range (bands)".into(),
                format!("{} in {} bands", gb(self.written_band_bytes), self.written_bands),
            ),
            (
                "accessed LBA range (bands)".into(),
                format!("{} in {} bands", gb(self.accessed_band_bytes), self.accessed_bands),
            ),
            ("written distinct bytes".into(), gb(self.written_distinct_bytes)),
            ("accessed distinct bytes".into(), gb(self.accessed_distinct_bytes)),
            ("mean request size".into(), format!("{:.0} bytes", self.mean_request_bytes)),
            ("highest byte touched".into(), self.max_end.to_string()),
            ("duration".into(), format!("{:.3} s", self.duration_ns as f64 / 1e9)),
        ];
        if self.volumes.len() > 1 {
            let v: Vec<String> = self.volumes.iter().map(|(k, n)| format!("{k}:{n}")).collect();
            rows.push(("requests per volume".into(), v.join(" ")));
        }
        if self.skipped > 0 {
            rows.push(("skipped lines".into(), self.skipped.to_string()));
        }
        if self.filtered > 0 {
            rows.push(("filtered by volume".into(), self.filtered.to_string()));
        }
        let w = rows.iter().map(|(k, _)| k.len()).max().unwrap_or(0);
        rows.iter().map(|(k, v)| format!("{k:<w$}  {v}\n")).collect()
    }

    /// The footprint part.
    pub fn footprint(&self) -> Footprint {
        Footprint {
            written_bytes: self.written_distinct_bytes,
            accessed_bytes: self.accessed_distinct_bytes,
            written_band_bytes: self.written_band_bytes,
            accessed_band_bytes: self.accessed_band_bytes,
            max_end: self.max_end,
        }
    }
}

/// Reads `reader` to the end and computes its statistics, with bands laid out by `bands`.
///
/// Memory grows with the trace's distinct blocks (see [`BlockSet`]), not its length. Variable
/// band layouts are refused (an `Invalid` error) beyond a 256 TiB LBA range; fixed layouts
/// have no such limit. [`crate::trace_stats_file`] computes the same figures faster for a
/// file.
pub fn trace_stats(reader: &mut dyn TraceReader, bands: &BandConfig) -> Result<TraceStats, TraceError> {
    bands.validate().map_err(|e| TraceError::Invalid(e.to_string()))?;
    let mut t = Tally::default();
    while let Some(r) = reader.next_request()? {
        t.add(r.time_ns, r.offset, r.op.is_write(), r.len, r.volume);
    }
    t.finish(reader.format_name(), reader.skipped(), reader.filtered(), bands)
}

/// Just the footprint of a trace (reads it to the end), for sizing caches and buffers.
pub fn footprint(reader: &mut dyn TraceReader, bands: &BandConfig) -> Result<Footprint, TraceError> {
    trace_stats(reader, bands).map(|s| s.footprint())
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::BTreeSet;

    #[test]
    fn block_set_counts_distinct_blocks() {
        let mut s = BlockSet::new();
        s.insert_range(0..10);
        s.insert_range(5..700);
        s.insert_range(1 << 40..(1 << 40) + 1);
        assert_eq!(s.len(), 701);
        assert!(s.contains(699) && !s.contains(700) && s.contains(1 << 40));
        assert_eq!(s.max_block(), Some(1 << 40));
    }

    #[test]
    fn covered_bands_fixed() {
        // Bands of 4 blocks over 20 blocks: blocks {1, 2, 9, 19} touch bands 0, 2 and 4.
        let map =
            BandMap::build(&BandConfig::Fixed { size: ByteSize(4 * 4096) }, ByteSize(20 * 4096)).unwrap();
        let mut s = BlockSet::new();
        for b in [1, 2, 9, 19] {
            s.insert_range(b..b + 1);
        }
        assert_eq!(s.covered_bands(&map), (3, 12 * 4096));
    }

    /// Block numbers near the places the structure changes: word and chunk edges, the end of
    /// the directory, and far beyond it (up to 2^51, the last block a `bin` trace can reach).
    fn edge_block() -> impl Strategy<Value = u64> {
        prop_oneof![
            0u64..5000,
            (0u64..64, 0u64..8).prop_map(|(c, d)| c * 512 + 508 + d),
            (0u64..4, 0u64..600).prop_map(|(c, d)| (DENSE_CHUNKS - 2 + c) * 512 - 300 + d),
            (0u64..1 << 51),
            (0u64..3).prop_map(|d| (1u64 << 51) - 2000 + d * 600),
        ]
    }

    proptest! {
        #[test]
        fn lanes_match_btreesets(
            ranges in proptest::collection::vec((edge_block(), 0u64..1300, any::<bool>(), any::<bool>()), 1..40),
            probes in proptest::collection::vec(edge_block(), 0..40),
            band in 1u64..700,
        ) {
            // Lane 0 gets every range, lane 1 the "written" ones, as trace_stats does; the ranges
            // are also split between two sets whose union must be the same.
            let (mut all, mut a, mut b) = (Lanes::<2>::default(), Lanes::<2>::default(), Lanes::<2>::default());
            let mut set = BlockSet::new();
            let mut model = [BTreeSet::new(), BTreeSet::new()];
            for &(start, n, written, first_half) in &ranges {
                let end = start.saturating_add(n).min(1 << 51);
                if start >= end {
                    continue;
                }
                let lanes = [!0, if written { !0 } else { 0 }];
                all.insert(start, end, lanes);
                if first_half { a.insert(start, end, lanes) } else { b.insert(start, end, lanes) }
                set.insert_range(start..end);
                model[0].extend(start..end);
                if written {
                    model[1].extend(start..end);
                }
            }
            a.union(&b);
            for lanes in [&all, &a] {
                for (l, m) in model.iter().enumerate() {
                    prop_assert_eq!(lanes.len(l), m.len() as u64);
                    for &p in probes.iter().chain(m.iter().take(50)) {
                        prop_assert_eq!(lanes.contains(l, p), m.contains(&p), "lane {} block {}", l, p);
                    }
                }
                prop_assert_eq!(lanes.max_block(), model[0].last().copied());
            }
            prop_assert_eq!(set.len(), model[0].len() as u64);
            prop_assert_eq!(set.max_block(), model[0].last().copied());
            prop_assert_eq!(set.is_empty(), model[0].is_empty());
            let Some(&max) = model[0].last() else { return Ok(()) };
            // Small bands over small ranges; big enough ones (fewer than 2^32) over huge ones.
            let band = if max < 1 << 30 { band } else { band << 20 };
            let map = BandMap::build(&BandConfig::Fixed { size: ByteSize(band * 4096) }, ByteSize((max + 1) * 4096)).unwrap();
            for (l, m) in model.iter().enumerate() {
                let bands: BTreeSet<_> = m.iter().map(|&b| map.band_of(b)).collect();
                let bytes: u64 = bands.iter().map(|&b| map.band_bytes(b)).sum();
                prop_assert_eq!(all.covered_bands(l, &map), (bands.len() as u64, bytes));
                prop_assert_eq!(a.covered_bands(l, &map), (bands.len() as u64, bytes));
            }
            let bands: BTreeSet<_> = model[0].iter().map(|&b| map.band_of(b)).collect();
            prop_assert_eq!(set.covered_bands(&map).0, bands.len() as u64);
        }

        #[test]
        fn tallies_of_parts_merge_into_the_whole(
            reqs in proptest::collection::vec(
                (0u64..1 << 40, edge_block(), 0u32..1 << 20, any::<bool>(),
                 prop_oneof![0u32..3, 250u32..260, u32::MAX - 1..=u32::MAX]), 0..60),
            cut in 0usize..60,
        ) {
            let whole = tally_of(&reqs).finish("x", 1, 2, &BandConfig::Fixed { size: ByteSize::mb(20) });
            let cut = cut.min(reqs.len());
            let mut merged = tally_of(&reqs[cut..]);
            merged.merge(tally_of(&reqs[..cut]));
            let merged = merged.finish("x", 1, 2, &BandConfig::Fixed { size: ByteSize::mb(20) });
            prop_assert_eq!(merged.map_err(|e| e.to_string()), whole.as_ref().map_err(|e| e.to_string()).cloned());
            // The whole against a plain model of each figure.
            let s = whole.unwrap();
            let (mut volumes, mut written, mut accessed) = (BTreeMap::new(), BTreeSet::new(), BTreeSet::new());
            let (mut pages, mut write_pages, mut write_bytes, mut max_end) = (0, 0, 0, 0);
            for &(time, block, len, write, volume) in &reqs {
                let offset = offset_of(time, block);
                let blocks = blocks_of(offset, len as u64);
                *volumes.entry(volume).or_insert(0u64) += 1;
                pages += blocks.end - blocks.start;
                accessed.extend(blocks.clone());
                max_end = max_end.max(offset + len as u64);
                if write {
                    write_pages += blocks.end - blocks.start;
                    write_bytes += len as u64;
                    written.extend(blocks);
                }
            }
            prop_assert_eq!(s.volumes, volumes);
            prop_assert_eq!((s.requests, s.write_requests), (reqs.len() as u64, reqs.iter().filter(|r| r.3).count() as u64));
            prop_assert_eq!((s.pages, s.write_pages, s.write_bytes), (pages, write_pages, write_bytes));
            prop_assert_eq!(s.bytes, reqs.iter().map(|r| r.2 as u64).sum::<u64>());
            prop_assert_eq!(s.max_end, max_end);
            prop_assert_eq!(s.max_offset, reqs.iter().map(|r| offset_of(r.0, r.1)).max().unwrap_or(0));
            prop_assert_eq!(s.first_time_ns, reqs.iter().map(|r| r.0).min());
            prop_assert_eq!(s.last_time_ns, reqs.iter().map(|r| r.0).max());
            prop_assert_eq!(s.written_distinct_bytes, written.len() as u64 * 4096);
            prop_assert_eq!(s.accessed_distinct_bytes, accessed.len() as u64 * 4096);
        }
    }

    /// An unaligned offset up to 2^51 bytes (2^39 blocks).
    fn offset_of(time: u64, block: u64) -> u64 {
        (block % (1 << 39)) * 4096 + (time & 4095)
    }

    fn tally_of(reqs: &[(u64, u64, u32, bool, u32)]) -> Tally {
        let mut t = Tally::default();
        for &(time, block, len, write, volume) in reqs {
            t.add(time, offset_of(time, block), write, len, volume);
        }
        t
    }

    proptest! {
        #[test]
        fn block_set_matches_btreeset(ranges in proptest::collection::vec((0u64..5000, 0u64..1200), 1..30), band in 1u64..700) {
            let mut s = BlockSet::new();
            let mut model = BTreeSet::new();
            for (a, n) in ranges {
                s.insert_range(a..a + n);
                model.extend(a..a + n);
            }
            prop_assert_eq!(s.len(), model.len() as u64);
            let Some(&max) = model.iter().next_back() else { return Ok(()) };
            let map = BandMap::build(&BandConfig::Fixed { size: ByteSize(band * 4096) }, ByteSize((max + 1) * 4096)).unwrap();
            let bands: BTreeSet<_> = model.iter().map(|&b| map.band_of(b)).collect();
            let bytes: u64 = bands.iter().map(|&b| map.band_bytes(b)).sum();
            prop_assert_eq!(s.covered_bands(&map), (bands.len() as u64, bytes));
        }
    }
}
