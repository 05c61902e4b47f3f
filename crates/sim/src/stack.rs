//! The exact hit-ratio curve of LRU, for every cache size at once, from one pass over the trace
//! (Mattson et al.'s stack distances).
//!
//! LRU is a stack algorithm: a cache of `C` blocks holds exactly the `C` most recently accessed
//! blocks, so an access hits in it iff fewer than `C` distinct other blocks were accessed since
//! the block's previous access (its *stack distance* is at most `C`). Distances are counted with a
//! Fenwick tree over access times in which only each block's latest access is marked: the
//! distance of an access is the number of marks after the block's previous access, plus one.
//! O(log n) per block access; memory O(distinct blocks) (times are renumbered when they reach
//! twice the number of distinct blocks).
//!
//! This is exact for the engine's LRU (`lru` with `batch = 1`) in `read-write` mode (every block
//! a read or write touches is looked up, and inserted on a miss) and in `write-only` mode (reads
//! are dropped, every write is looked up and inserted). In `read-only` mode a write invalidates
//! the cached copy, and in `write-cache` mode a read miss is not inserted: the cache of `C` blocks
//! is then no longer the top `C` of one stack, so [`StackDistances::new`] refuses those modes.

use crate::controller::Mode;
use crate::SimError;
use rustc_hash::FxHashMap;
use shingled_core::Op;
use shingled_trace::{Request, TraceReader};

/// Stack-distance histograms of a trace, separately for reads and writes.
#[derive(Clone, Debug, Default)]
pub struct StackDistances {
    mode: Mode,
    /// `reads[d]`: read block accesses at stack distance `d + 1`.
    reads: Vec<u64>,
    /// `writes[d]`: write block accesses at stack distance `d + 1`.
    writes: Vec<u64>,
    /// Block reads and writes counted (cold misses included).
    blocks_read: u64,
    blocks_written: u64,
    // The pass's state.
    last: FxHashMap<u64, u32>,
    marks: Fenwick,
    now: u32,
}

/// Hits of an LRU cache of one size, from [`StackDistances::hits`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LruHits {
    /// Block reads served by the cache.
    pub read_hits: u64,
    /// Block writes that found their block cached.
    pub write_hits: u64,
    /// Block reads looked up.
    pub blocks_read: u64,
    /// Block writes looked up.
    pub blocks_written: u64,
}

impl LruHits {
    /// All hits over all block accesses (`None` without any).
    pub fn hit_ratio(&self) -> Option<f64> {
        let n = self.blocks_read + self.blocks_written;
        (n > 0).then(|| (self.read_hits + self.write_hits) as f64 / n as f64)
    }
}

impl StackDistances {
    /// An empty pass for `mode`; an error for the modes in which LRU is not a stack algorithm.
    pub fn new(mode: Mode) -> Result<StackDistances, SimError> {
        if !matches!(mode, Mode::ReadWrite | Mode::WriteOnly) {
            return Err(SimError::Config {
                field: "mode",
                reason: format!(
                    "the exact LRU curve needs read-write or write-only mode; in {} mode LRU is not a \
                     stack algorithm (a write invalidates, or a read miss is not cached)",
                    mode.name()
                ),
            });
        }
        Ok(StackDistances { mode, marks: Fenwick::new(1 << 16), ..Default::default() })
    }

    /// Reads `reader` to the end (at most `limit` requests), counting every block access.
    pub fn read(mode: Mode, reader: &mut dyn TraceReader, limit: u64) -> Result<StackDistances, SimError> {
        let mut s = StackDistances::new(mode)?;
        let mut n = 0u64;
        while n < limit {
            let Some(r) = reader.next_request()? else { break };
            s.request(&r);
            n += 1;
        }
        Ok(s)
    }

    /// Counts one request's blocks, as the engine looks them up.
    pub fn request(&mut self, r: &Request) {
        let write = r.op == Op::Write;
        if !write && self.mode == Mode::WriteOnly {
            return;
        }
        for b in r.blocks() {
            self.access(b, write);
        }
    }

    fn access(&mut self, block: u64, write: bool) {
        if write {
            self.blocks_written += 1;
        } else {
            self.blocks_read += 1;
        }
        if self.now as usize == self.marks.len() {
            self.renumber();
        }
        let t = self.now;
        self.now += 1;
        let marked = self.last.len() as i64; // every block's latest access, all before `t`
        if let Some(prev) = self.last.insert(block, t) {
            // Marks after `prev` are the distinct blocks accessed since: the distance is one more.
            let d = (marked - self.marks.prefix(prev + 1)) as usize;
            let h = if write { &mut self.writes } else { &mut self.reads };
            if h.len() <= d {
                h.resize(d + 1, 0);
            }
            h[d] += 1;
            self.marks.add(prev, -1);
        }
        self.marks.add(t, 1);
    }

    /// Renumbers the marked times `0..k` in order and makes room for as many again.
    fn renumber(&mut self) {
        let mut live: Vec<(u32, u64)> = self.last.iter().map(|(&b, &t)| (t, b)).collect();
        live.sort_unstable();
        for (i, (_, b)) in live.iter().enumerate() {
            self.last.insert(*b, i as u32);
        }
        let k = live.len();
        self.marks = Fenwick::ones(k, (2 * k).max(1 << 16));
        self.now = k as u32;
    }

    /// Forgets the accesses counted so far but not the stack: the hits counted from here on are
    /// those of a cache warmed by everything before (a replay's after-warm-up window).
    pub fn reset_counts(&mut self) {
        self.reads.iter_mut().for_each(|x| *x = 0);
        self.writes.iter_mut().for_each(|x| *x = 0);
        self.blocks_read = 0;
        self.blocks_written = 0;
    }

    /// The hits of an LRU cache of `capacity` blocks.
    pub fn hits(&self, capacity: u64) -> LruHits {
        let upto = |h: &[u64]| h.iter().take(capacity as usize).sum::<u64>();
        LruHits {
            read_hits: upto(&self.reads),
            write_hits: upto(&self.writes),
            blocks_read: self.blocks_read,
            blocks_written: self.blocks_written,
        }
    }

    /// Distinct blocks accessed.
    pub fn distinct_blocks(&self) -> u64 {
        self.last.len() as u64
    }
}

/// A Fenwick (binary indexed) tree of counts over positions `0..len`.
#[derive(Clone, Debug, Default)]
struct Fenwick {
    tree: Vec<i32>,
}

impl Fenwick {
    fn new(len: usize) -> Fenwick {
        Fenwick { tree: vec![0; len + 1] }
    }

    /// Positions `0..k` set to 1, room for `len`.
    fn ones(k: usize, len: usize) -> Fenwick {
        let mut f = Fenwick::new(len);
        for i in 1..=len {
            f.tree[i] += (i <= k) as i32;
            let j = i + (i & i.wrapping_neg());
            if j <= len {
                f.tree[j] += f.tree[i];
            }
        }
        f
    }

    fn len(&self) -> usize {
        self.tree.len().saturating_sub(1)
    }

    fn add(&mut self, pos: u32, v: i32) {
        let mut i = pos as usize + 1;
        while i < self.tree.len() {
            self.tree[i] += v;
            i += i & i.wrapping_neg();
        }
    }

    /// The sum over positions `0..end`.
    fn prefix(&self, end: u32) -> i64 {
        let mut i = end as usize;
        let mut s = 0i64;
        while i > 0 {
            s += self.tree[i] as i64;
            i -= i & i.wrapping_neg();
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rq(op: Op, block: u64, blocks: u32) -> Request {
        Request { time_ns: 0, volume: 0, op, offset: block * 4096, len: blocks * 4096 }
    }

    #[test]
    fn hand_checked_distances() {
        // Blocks: a b c a b d a (writes). Distances: a 3 (b, c since), b 3 (c, a), a 3 (b, d).
        let mut s = StackDistances::new(Mode::ReadWrite).unwrap();
        for b in [1, 2, 3, 1, 2, 4, 1] {
            s.request(&rq(Op::Write, b, 1));
        }
        assert_eq!(s.hits(2).write_hits, 0);
        assert_eq!(s.hits(3).write_hits, 3);
        assert_eq!(s.hits(100), LruHits { read_hits: 0, write_hits: 3, blocks_read: 0, blocks_written: 7 });
        assert_eq!(s.distinct_blocks(), 4);
    }

    #[test]
    fn write_only_mode_drops_reads_and_read_only_is_refused() {
        let mut s = StackDistances::new(Mode::WriteOnly).unwrap();
        s.request(&rq(Op::Write, 5, 2));
        s.request(&rq(Op::Read, 5, 2));
        s.request(&rq(Op::Write, 6, 1));
        // Block 6 at distance 1 (nothing since: the reads do not count).
        assert_eq!(s.hits(1), LruHits { read_hits: 0, write_hits: 1, blocks_read: 0, blocks_written: 3 });
        for m in [Mode::ReadOnly, Mode::WriteCache] {
            let e = StackDistances::new(m).unwrap_err().to_string();
            assert!(e.contains("read-write or write-only"), "{e}");
        }
    }

    #[test]
    fn renumbering_keeps_the_distances() {
        // Far more accesses than the first tree holds: a cyclic scan over 1000 blocks then a
        // re-reference of each: every re-reference is at distance exactly 1000.
        let mut s = StackDistances::new(Mode::ReadWrite).unwrap();
        for round in 0..200u64 {
            for b in 0..1000u64 {
                s.request(&rq(if round % 2 == 0 { Op::Read } else { Op::Write }, b, 1));
            }
        }
        let h = s.hits(1000);
        assert_eq!(h.read_hits + h.write_hits, 199_000);
        assert_eq!(s.hits(999).read_hits + s.hits(999).write_hits, 0);
    }
}
