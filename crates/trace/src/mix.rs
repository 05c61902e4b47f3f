//! The papers' "long/mix" trace: several volumes (and copies of them) laid side by side in one
//! LBA space and interleaved at random, as PORE and SAC build their large mixed workloads.
//!
//! * Pass 1 reads each input once to learn its request count and extent (`max(offset + len)`).
//! * Every copy `k` of input `i` becomes a *stream* with its own LBA range. Streams are laid
//!   out input by input, copies of an input next to each other (stream order
//!   `(0,0), (0,1), …, (1,0), …`); each range is the input's extent rounded up to 1 GiB (at
//!   least 1 GiB), and a stream's base is the sum of the ranges before it. Every request is
//!   shifted by its stream's base, so copies never overlap.
//! * Pass 2 interleaves the streams: each output request comes from a stream picked with
//!   probability proportional to the requests it has left (a seeded PCG generator), and every
//!   stream keeps its own order. The result is a `bin` trace.
//!
//! Output times are renumbered: `time_ns` is the request's index in the mixed trace (the header
//! carries [`crate::binary::FLAG_TIME_IS_INDEX`]), because the inputs' clocks are unrelated and
//! the replay that uses mixes is closed-loop. Volumes are all set to 0: the mix is one volume.

use crate::binary::{FLAG_TIME_IS_INDEX, MAX_OFFSET};
use crate::{open, OpenOptions, TraceError, TraceReader};
use rand::{Rng, SeedableRng};
use serde::Serialize;
use std::path::{Path, PathBuf};

/// LBA ranges of streams are whole multiples of this.
pub const RANGE_ALIGN: u64 = 1 << 30;

/// One stream of a mix: a copy of one input.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct MixStream {
    /// The input as given.
    pub input: String,
    /// Which copy (0-based).
    pub copy: u32,
    /// Requests in the stream.
    pub requests: u64,
    /// The input's extent, `max(offset + len)` in bytes.
    pub max_end: u64,
    /// Byte offset added to every request of this stream.
    pub base: u64,
    /// Bytes of LBA space reserved for the stream (extent rounded up to 1 GiB, at least 1 GiB).
    pub range: u64,
}

/// What [`mix`] wrote.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct MixSummary {
    /// The streams in layout order.
    pub streams: Vec<MixStream>,
    /// Requests written.
    pub requests: u64,
    /// Total LBA space of all streams (the end of the last range).
    pub lba_span: u64,
    /// The output file.
    pub out: PathBuf,
}

/// Builds a mixed trace at `out` from `inputs` (paths or `synth:` specs, opened with `opts`),
/// `copies` copies of each, interleaved with `seed`. See the module documentation.
pub fn mix(
    inputs: &[String],
    opts: &OpenOptions,
    copies: u32,
    seed: u64,
    out: &Path,
) -> Result<MixSummary, TraceError> {
    if inputs.is_empty() {
        return Err(TraceError::Invalid("mix needs at least one input trace".into()));
    }
    if copies == 0 {
        return Err(TraceError::Invalid("copies = 0: mix needs at least one copy of each input".into()));
    }
    // Each stream keeps an open reader: bound them, so no argument can make the process abort
    // on an allocation.
    const MAX_STREAMS: u64 = 1 << 16;
    let streams_asked = inputs.len() as u64 * copies as u64;
    if streams_asked > MAX_STREAMS {
        return Err(TraceError::Invalid(format!(
            "mix: {} inputs x {copies} copies = {streams_asked} streams; at most {MAX_STREAMS} (each keeps a reader open)",
            inputs.len()
        )));
    }
    crate::binary::refuse_same_file(&inputs.iter().map(String::as_str).collect::<Vec<_>>(), out)?;
    let mut streams = Vec::with_capacity(inputs.len() * copies as usize);
    let mut base = 0u64;
    for input in inputs {
        let (requests, max_end) = measure(&mut *open(input, opts)?)?;
        let range = max_end.div_ceil(RANGE_ALIGN).max(1).saturating_mul(RANGE_ALIGN);
        for copy in 0..copies {
            streams.push(MixStream { input: input.clone(), copy, requests, max_end, base, range });
            base = base.checked_add(range).filter(|&b| b <= MAX_OFFSET).ok_or_else(|| {
                TraceError::Invalid(format!(
                    "mix: the shifted LBA ranges exceed the 2^63-byte limit at {input} copy {copy}"
                ))
            })?;
        }
    }
    let lba_span = base;

    let mut readers = Vec::with_capacity(streams.len());
    for s in &streams {
        readers.push(open(&s.input, opts)?);
    }
    let mut remaining = Fenwick::new(streams.iter().map(|s| s.requests));
    let mut rng = rand_pcg::Pcg64Mcg::seed_from_u64(seed);
    let total = remaining.total();
    let requests = crate::binary::write_atomically(out, FLAG_TIME_IS_INDEX, |w| {
        for index in 0..total {
            let pick = rng.random_range(0..remaining.total());
            let i = remaining.find(pick);
            remaining.sub_one(i);
            let s = &streams[i];
            let Some(mut r) = readers[i].next_request()? else {
                return Err(TraceError::Invalid(format!(
                    "mix: {} ended before the {} requests counted in the first pass (did it change?)",
                    s.input, s.requests
                )));
            };
            if r.offset.saturating_add(r.len as u64) > s.range {
                return Err(TraceError::Invalid(format!(
                    "mix: {} has a request beyond the extent measured in the first pass (did it change?)",
                    s.input
                )));
            }
            r.offset += s.base;
            r.time_ns = index;
            r.volume = 0;
            w.write(&r)?;
        }
        Ok(())
    })?;
    Ok(MixSummary { streams, requests, lba_span, out: out.to_path_buf() })
}

/// Request count and extent of a trace.
fn measure(r: &mut dyn TraceReader) -> Result<(u64, u64), TraceError> {
    let (mut n, mut max_end) = (0u64, 0u64);
    while let Some(q) = r.next_request()? {
        n += 1;
        max_end = max_end.max(q.offset.saturating_add(q.len as u64));
    }
    Ok((n, max_end))
}

/// A Fenwick (binary indexed) tree of per-stream remaining counts: weighted picks and
/// decrements in O(log streams), so mixing hundreds of volume copies stays cheap.
struct Fenwick {
    tree: Vec<u64>,
    total: u64,
}

impl Fenwick {
    fn new(weights: impl Iterator<Item = u64>) -> Self {
        let w: Vec<u64> = weights.collect();
        let mut tree = vec![0u64; w.len() + 1];
        let mut total = 0;
        for (i, &x) in w.iter().enumerate() {
            total += x;
            let mut j = i + 1;
            while j < tree.len() {
                tree[j] += x;
                j += j & j.wrapping_neg();
            }
        }
        Fenwick { tree, total }
    }

    fn total(&self) -> u64 {
        self.total
    }

    /// The index `i` whose cumulative range `[sum(..i), sum(..=i))` holds `target` (< total).
    fn find(&self, mut target: u64) -> usize {
        let n = self.tree.len() - 1;
        let mut pos = 0usize;
        let mut step = if n == 0 { 0 } else { 1usize << (usize::BITS - 1 - n.leading_zeros()) };
        while step > 0 {
            let next = pos + step;
            if next <= n && self.tree[next] <= target {
                pos = next;
                target -= self.tree[next];
            }
            step >>= 1;
        }
        pos
    }

    fn sub_one(&mut self, i: usize) {
        self.total -= 1;
        let mut j = i + 1;
        while j < self.tree.len() {
            self.tree[j] -= 1;
            j += j & j.wrapping_neg();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fenwick_picks_by_cumulative_weight() {
        let mut f = Fenwick::new([2u64, 0, 3, 1].into_iter());
        let picks: Vec<usize> = (0..6).map(|t| f.find(t)).collect();
        assert_eq!(picks, vec![0, 0, 2, 2, 2, 3]);
        f.sub_one(2);
        assert_eq!(f.total(), 5);
        let picks: Vec<usize> = (0..5).map(|t| f.find(t)).collect();
        assert_eq!(picks, vec![0, 0, 2, 2, 3]);
    }
}
