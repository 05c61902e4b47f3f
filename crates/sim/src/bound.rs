//! An offline lower bound on the DM-SMR drive's band cleanings (RMWs) for a trace, a cache and
//! a persistent buffer, whatever the cache's policy. The proof is in docs/bounds.md; in short:
//!
//! Take any stretch (window) of the block accesses the cache is asked about, and let `W_b` be
//! the distinct blocks of band `b` written in it. At the window's end, every such block whose
//! band was not cleaned after the block's write is in the cache (it entered dirty at its write;
//! it leaves only by a write-back) or has a valid copy in the PB (a copy leaves the PB only when
//! its band is cleaned). The cache holds at most `C` blocks and the PB at most `P` distinct valid
//! ones, so the bands cleaned in the window must include enough bands that the others' `W_b` add
//! up to at most `C + P`: at least `f(window)` = the fewest bands whose removal leaves at most
//! `C + P` written blocks. Cleanings in disjoint windows are distinct, so the sum of `f` over
//! any partition of the accesses into windows is a lower bound on the RMWs. This module sums it
//! over a few partitions (windows closed when their distinct written blocks pass `m × (C + P)`
//! for `m` = 1, 2, 4, … 1024, and the whole trace as one window) and keeps the largest.

use rustc_hash::FxHashMap;
use serde::{Deserialize, Serialize};
use shingled_core::BlockNo;

/// The window sizes tried, as multiples of `C + P` distinct written blocks (0: the whole trace).
const MULTIPLES: [u64; 12] = [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 0];

/// The offline bounds of one run, shown beside every policy's figures.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct OfflineBound {
    /// No policy's replay of this trace, with this cache size, PB size and band layout, cleans
    /// fewer bands than this (the whole run).
    pub rmw_lower_bound: u64,
    /// The same over the accesses after the warm-up, when the warm-up is a request count.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rmw_lower_bound_after_warmup: Option<u64>,
    /// The windows' size that gave it, in multiples of `C + P` distinct written blocks (0: the
    /// whole run as one window).
    pub window_multiple: u64,
    /// `C + P`: the cache's blocks plus the PB's.
    pub absorb_blocks: u64,
    /// Distinct blocks written (in the accesses the cache is asked about).
    pub distinct_written: u64,
}

/// One partition's running sum.
#[derive(Debug)]
struct Partition {
    /// Close a window once its distinct written blocks exceed this (`u64::MAX`: never).
    close_above: u64,
    /// The write that opened the current window (writes are numbered from 0).
    start: u64,
    /// Distinct blocks written in the current window, in all and per band.
    distinct: u64,
    per_band: FxHashMap<u32, u64>,
    sum: u64,
}

impl Partition {
    fn close(&mut self, absorb: u64, next: u64) {
        self.sum += fewest_bands(&self.per_band, self.distinct, absorb);
        self.per_band.clear();
        self.distinct = 0;
        self.start = next;
    }
}

/// `f`: the fewest bands whose removal leaves at most `absorb` of `total` written blocks.
pub(crate) fn fewest_bands(per_band: &FxHashMap<u32, u64>, total: u64, absorb: u64) -> u64 {
    if total <= absorb {
        return 0;
    }
    let mut counts: Vec<u64> = per_band.values().copied().collect();
    counts.sort_unstable_by(|a, b| b.cmp(a));
    let mut left = total;
    let mut removed = 0;
    for c in counts {
        if left <= absorb {
            break;
        }
        left -= c;
        removed += 1;
    }
    removed
}

/// The bound, fed the accesses in order. Memory: one entry per distinct written block (its
/// latest write, which tells every partition whether a write is its window's first of the
/// block) and, per partition, one per band written in the current window.
#[derive(Debug)]
pub struct RmwBound {
    absorb: u64,
    parts: Vec<Partition>,
    /// The same partitions restarted at the warm-up's end.
    after: Option<Vec<Partition>>,
    last_write: FxHashMap<BlockNo, u64>,
    writes: u64,
}

impl RmwBound {
    /// A bound for a cache of `cache_blocks` above a PB of `pb_blocks`.
    pub fn new(cache_blocks: u64, pb_blocks: u64) -> RmwBound {
        let absorb = cache_blocks + pb_blocks;
        RmwBound {
            absorb,
            parts: partitions(absorb, 0),
            after: None,
            last_write: FxHashMap::default(),
            writes: 0,
        }
    }

    /// The warm-up ends here: the after-warm-up bound counts from the next access on.
    pub fn warm_up_ends(&mut self) {
        self.after = Some(partitions(self.absorb, self.writes));
    }

    /// A write of `block` (band `band`) the cache is asked about. Reads change nothing: a clean
    /// block never reaches the PB.
    pub fn write(&mut self, block: BlockNo, band: u32) {
        let at = self.writes;
        self.writes += 1;
        let prev = self.last_write.insert(block, at);
        let absorb = self.absorb;
        for parts in std::iter::once(&mut self.parts).chain(self.after.as_mut()) {
            for p in parts.iter_mut() {
                if prev.is_none_or(|w| w < p.start) {
                    p.distinct += 1;
                    *p.per_band.entry(band).or_default() += 1;
                    if p.distinct > p.close_above {
                        p.close(absorb, at + 1);
                    }
                }
            }
        }
    }

    /// The bound over everything fed.
    pub fn finish(mut self) -> OfflineBound {
        let absorb = self.absorb;
        let end = self.writes;
        let best = |parts: &mut Vec<Partition>| {
            let mut best = (0, MULTIPLES[0]);
            for (p, &m) in parts.iter_mut().zip(MULTIPLES.iter()) {
                p.close(absorb, end);
                if p.sum > best.0 {
                    best = (p.sum, m);
                }
            }
            best
        };
        let (total, m) = best(&mut self.parts);
        let after = self.after.as_mut().map(|a| best(a).0);
        OfflineBound {
            rmw_lower_bound: total,
            rmw_lower_bound_after_warmup: after,
            window_multiple: m,
            absorb_blocks: absorb,
            distinct_written: self.last_write.len() as u64,
        }
    }
}

fn partitions(absorb: u64, start: u64) -> Vec<Partition> {
    MULTIPLES
        .iter()
        .map(|&m| Partition {
            close_above: if m == 0 { u64::MAX } else { m.saturating_mul(absorb) },
            start,
            distinct: 0,
            per_band: FxHashMap::default(),
            sum: 0,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use shingled_core::BandMap;

    fn band_map(band_blocks: u64, bands: u64) -> BandMap {
        BandMap::build(
            &shingled_core::BandConfig::Fixed { size: shingled_core::ByteSize(band_blocks * 4096) },
            shingled_core::ByteSize(band_blocks * bands * 4096),
        )
        .unwrap()
    }

    #[test]
    fn fewest_bands_removes_the_largest_first() {
        let per_band: FxHashMap<u32, u64> = [(0, 5), (1, 1), (2, 3)].into_iter().collect();
        // 9 written, 4 absorbed: removing band 0 (5) leaves 4.
        assert_eq!(fewest_bands(&per_band, 9, 4), 1);
        // 2 absorbed: 0 then 2 leaves 1.
        assert_eq!(fewest_bands(&per_band, 9, 2), 2);
        assert_eq!(fewest_bands(&per_band, 9, 9), 0);
        assert_eq!(fewest_bands(&per_band, 9, 0), 3);
    }

    #[test]
    fn hand_worked_windows() {
        // C + P = 2, bands of 2 blocks: 0-1 band 0, 2-3 band 1, 4-5 band 2.
        let bands = band_map(2, 3);
        let mut b = RmwBound::new(1, 1);
        // Writes 0, 2, 4, 0, 2, 4: distinct per window of m=1 (close above 2): {0,2,4} closes
        // at 4 with f = 1; {0,2,4} again closes with f = 1; sum 2. m=2 (above 4): never
        // closes; final window {0,2,4}: f = 1. Whole trace: {0,2,4} f = 1. Best: 2.
        for blk in [0, 2, 4, 0, 2, 4] {
            b.write(blk, bands.band_of(blk));
        }
        let r = b.finish();
        assert_eq!(r.rmw_lower_bound, 2);
        assert_eq!(r.window_multiple, 1);
        assert_eq!(r.distinct_written, 3);
    }

    #[test]
    fn one_large_window_beats_small_ones_when_bands_are_small() {
        // C + P = 2, every block its own band, six distinct writes: at the end at most two
        // blocks are in the cache or the PB, so four bands were cleaned. Windows of 3 distinct
        // blocks (m = 1) see only 1 + 1; windows of 5 (m = 2) 3 + 0; one window of all six 4.
        let bands = band_map(1, 6);
        let mut b = RmwBound::new(1, 1);
        for blk in 0..6 {
            b.write(blk, bands.band_of(blk));
        }
        let r = b.finish();
        assert_eq!(r.rmw_lower_bound, 4);
        assert_eq!(r.window_multiple, 4, "the first multiple reaching it: no window closes");
    }

    #[test]
    fn rewrites_inside_the_cache_need_nothing() {
        let bands = band_map(2, 3);
        let mut b = RmwBound::new(2, 1);
        for blk in [0, 1, 0, 1, 0, 2, 2, 1] {
            b.write(blk, bands.band_of(blk));
        }
        assert_eq!(b.finish().rmw_lower_bound, 0);
    }
}
