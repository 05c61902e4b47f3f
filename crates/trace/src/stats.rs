//! Trace statistics: the PORE paper's Table I row (requests, write ratio, written and accessed
//! LBA range) and the footprint figures the simulator sizes caches and persistent buffers from.
//!
//! Counting conventions (DESIGN.md, "Units and defaults"):
//! * *requests* are the trace's own requests; *pages* are the 4 KiB blocks each touches
//!   (unaligned requests are widened to whole blocks, as [`Request::blocks`] does), which is how
//!   the papers count "total requests";
//! * the *written LBA range* and *accessed LBA range* are given two ways: distinct bytes (distinct
//!   4 KiB blocks × 4096) and covered-band bytes (total size of the bands holding at least one
//!   written, resp. accessed, block — PORE Table I's definition). Both band figures use one band
//!   layout built over `[0, highest accessed block]`, so the last band may be cut short there.

use crate::{Request, TraceError, TraceReader};
use rustc_hash::FxHashMap;
use serde::Serialize;
use shingled_core::{BandConfig, BandMap, BlockNo, ByteSize, BLOCK_SIZE};
use std::collections::BTreeMap;

/// Blocks per chunk of a [`BlockSet`]: 512 blocks = 2 MiB of LBA space in 64 bytes of bits.
const CHUNK_BLOCKS: u64 = 512;
const CHUNK_SHIFT: u32 = 9;

/// Highest LBA range (in blocks, 2^36 × 4 KiB = 256 TiB) for which a variable band layout is
/// built: its table costs about 12 bytes per band, so this bounds it near 200 MB.
const MAX_TABLE_BLOCKS: u64 = 1 << 36;

/// A sparse set of 4 KiB block numbers: a hash map from 512-block chunks to 512-bit bitmaps.
///
/// Memory is about 80 bytes per touched 2 MiB of LBA space, so it follows a trace's footprint,
/// not its LBA span: a multi-TB range touched sparsely costs little.
#[derive(Clone, Debug, Default)]
pub struct BlockSet {
    chunks: FxHashMap<u64, [u64; 8]>,
    len: u64,
    max: Option<BlockNo>,
}

impl BlockSet {
    /// An empty set.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds every block of `blocks` (an empty range adds nothing).
    pub fn insert_range(&mut self, blocks: std::ops::Range<BlockNo>) {
        if blocks.is_empty() {
            return;
        }
        self.max = Some(self.max.map_or(blocks.end - 1, |m| m.max(blocks.end - 1)));
        let mut b = blocks.start;
        while b < blocks.end {
            let chunk = b >> CHUNK_SHIFT;
            let base = chunk << CHUNK_SHIFT;
            let stop = blocks.end.min(base + CHUNK_BLOCKS);
            let words = self.chunks.entry(chunk).or_insert([0; 8]);
            let (mut x, e) = (b - base, stop - base);
            while x < e {
                let bit = x & 63;
                let n = (64 - bit).min(e - x);
                let mask = if n == 64 { !0 } else { ((1u64 << n) - 1) << bit };
                let w = &mut words[(x >> 6) as usize];
                self.len += (mask & !*w).count_ones() as u64;
                *w |= mask;
                x += n;
            }
            b = stop;
        }
    }

    /// Whether `block` is in the set.
    pub fn contains(&self, block: BlockNo) -> bool {
        let off = block & (CHUNK_BLOCKS - 1);
        self.chunks
            .get(&(block >> CHUNK_SHIFT))
            .is_some_and(|w| w[(off >> 6) as usize] >> (off & 63) & 1 == 1)
    }

    /// Number of distinct blocks.
    pub fn len(&self) -> u64 {
        self.len
    }

    /// Whether the set is empty.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The highest block, if any.
    pub fn max_block(&self) -> Option<BlockNo> {
        self.max
    }

    /// The bands of `map` holding at least one block of the set: their number and total bytes.
    ///
    /// Visits chunks in block order and jumps to the end of each band found, so the cost is
    /// one band lookup per covered band plus a scan of the bitmaps.
    pub fn covered_bands(&self, map: &BandMap) -> (u64, u64) {
        let mut keys: Vec<u64> = self.chunks.keys().copied().collect();
        keys.sort_unstable();
        let (mut bands, mut bytes) = (0u64, 0u64);
        let mut covered_to: BlockNo = 0; // every block below this is in a counted band
        for k in keys {
            let base = k << CHUNK_SHIFT;
            if covered_to >= base + CHUNK_BLOCKS {
                continue;
            }
            let words = &self.chunks[&k];
            for (i, &word) in words.iter().enumerate() {
                let wbase = base + 64 * i as u64;
                let mut bits = word;
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
/// have no such limit.
pub fn trace_stats(reader: &mut dyn TraceReader, bands: &BandConfig) -> Result<TraceStats, TraceError> {
    bands.validate().map_err(TraceError::Invalid)?;
    let mut s = TraceStats { format: reader.format_name().to_string(), ..TraceStats::default() };
    let mut written = BlockSet::new();
    let mut accessed = BlockSet::new();
    let (mut first, mut last) = (u64::MAX, 0u64);
    while let Some(r) = reader.next_request()? {
        add(&mut s, &r, &mut written, &mut accessed);
        first = first.min(r.time_ns);
        last = last.max(r.time_ns);
    }
    s.skipped = reader.skipped();
    s.filtered = reader.filtered();
    if s.requests > 0 {
        s.first_time_ns = Some(first);
        s.last_time_ns = Some(last);
        s.duration_ns = last - first;
        s.write_pct_requests = 100.0 * s.write_requests as f64 / s.requests as f64;
        s.mean_request_bytes = s.bytes as f64 / s.requests as f64;
    }
    if s.pages > 0 {
        s.write_pct_pages = 100.0 * s.write_pages as f64 / s.pages as f64;
    }
    s.written_distinct_bytes = written.len() * BLOCK_SIZE;
    s.accessed_distinct_bytes = accessed.len() * BLOCK_SIZE;
    if let Some(max) = accessed.max_block() {
        let capacity_blocks = max + 1;
        if !matches!(bands, BandConfig::Fixed { .. }) && capacity_blocks > MAX_TABLE_BLOCKS {
            return Err(TraceError::Invalid(format!(
                "the trace touches {} bytes of LBA space, beyond the 256 TiB a variable band layout is built for; use a fixed band size",
                capacity_blocks.saturating_mul(BLOCK_SIZE)
            )));
        }
        let map = BandMap::build(bands, ByteSize(capacity_blocks.saturating_mul(BLOCK_SIZE)))
            .map_err(TraceError::Invalid)?;
        (s.written_bands, s.written_band_bytes) = written.covered_bands(&map);
        (s.accessed_bands, s.accessed_band_bytes) = accessed.covered_bands(&map);
    }
    Ok(s)
}

#[inline]
fn add(s: &mut TraceStats, r: &Request, written: &mut BlockSet, accessed: &mut BlockSet) {
    let blocks = r.blocks();
    let pages = blocks.end - blocks.start;
    s.requests += 1;
    s.pages += pages;
    s.bytes += r.len as u64;
    if r.op.is_write() {
        s.write_requests += 1;
        s.write_pages += pages;
        s.write_bytes += r.len as u64;
        written.insert_range(blocks.clone());
    } else {
        s.read_requests += 1;
        s.read_pages += pages;
        s.read_bytes += r.len as u64;
    }
    accessed.insert_range(blocks);
    s.max_offset = s.max_offset.max(r.offset);
    s.max_end = s.max_end.max(r.offset.saturating_add(r.len as u64));
    *s.volumes.entry(r.volume).or_insert(0) += 1;
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
