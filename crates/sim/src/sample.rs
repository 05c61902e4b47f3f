//! Band-preserving spatial sampling of a trace (SHARDS, Waldspurger et al., FAST '15, applied to
//! whole bands instead of single blocks).
//!
//! A *unit* is a drive band (from the drive's [`BandMap`], whose bands may differ in size) or a
//! fixed-size zone (e.g. PORE's 20 MiB zone). Unit `u` is selected when
//! `hash(seed, u) < rate · 2^64`, with a seeded 64-bit mixer, so the choice is independent of the
//! unit's position and the same for every reader of the same trace. A sampled unit keeps *all*
//! its blocks: what SMR cares about (how many cached dirty blocks share a band, which band the
//! PB cleans, how much of it is rewritten) is kept inside every sampled band.
//!
//! [`Sampled`] clips each request to the blocks of selected units. Adjacent selected units stay
//! one piece, so a request is only split where it leaves the sample; every piece keeps the
//! request's time, volume and operation, and LBAs are not moved (the drive and band-aware
//! policies see the same band geometry). At rate 1 every unit is selected and the reader yields
//! the trace unchanged.

use shingled_core::{BandMap, BlockNo, SplitMix64, BLOCK_SIZE};
use shingled_trace::{Request, TraceError, TraceReader};
use std::sync::Arc;

/// What a sampling decision is made for.
#[derive(Clone, Debug)]
pub enum Units {
    /// The drive's bands (variable sizes allowed).
    Bands(Arc<BandMap>),
    /// Aligned zones of this many 4 KiB blocks, counted from LBA 0.
    Zones(u64),
}

impl Units {
    /// The unit holding `block`.
    #[inline]
    pub fn unit_of(&self, block: BlockNo) -> u64 {
        match self {
            Units::Bands(m) => {
                // Past the map's end a band map answers its last band; count on in blocks so
                // that blocks beyond it are still decided per block-sized unit, never all at once.
                if block >= m.capacity_blocks() {
                    m.len() as u64 + (block - m.capacity_blocks())
                } else {
                    m.band_of(block) as u64
                }
            }
            Units::Zones(z) => block / z,
        }
    }

    /// One past the last block of unit `u`.
    #[inline]
    pub fn end_of(&self, u: u64) -> BlockNo {
        match self {
            Units::Bands(m) if u < m.len() as u64 => {
                let (start, len) = m.band_range(u as shingled_core::BandId);
                start + len
            }
            Units::Bands(m) => m.capacity_blocks() + (u - m.len() as u64) + 1,
            Units::Zones(z) => (u + 1) * z,
        }
    }
}

/// Offsets [`Selector::stratified`] weighs to balance a sample.
pub const BALANCE_CANDIDATES: usize = 32;

/// Which units a sample keeps.
#[derive(Clone, Debug, PartialEq)]
pub enum Selector {
    /// SHARDS' rule: unit `u` is kept when a seeded hash of `u` falls below `rate · 2^64`
    /// (`None`: rate 1, every unit). Each unit is kept independently, so the number kept, and
    /// how many of the busy ones, vary between seeds.
    Hash {
        /// The hash threshold, `None` at rate 1.
        threshold: Option<u64>,
        /// The mixed seed.
        seed: u64,
    },
    /// Exactly these units ([`Selector::stratified`]).
    Set(Arc<rustc_hash::FxHashSet<u64>>),
}

impl Selector {
    /// A hash selector keeping a fraction `rate` of the units; `None` unless `0 < rate <= 1`.
    pub fn new(rate: f64, seed: u64) -> Option<Selector> {
        if !(rate > 0.0 && rate <= 1.0) {
            return None;
        }
        // 2^64 · rate, computed in f64: exact enough (53 bits) for any rate anyone samples at.
        let threshold = (rate < 1.0).then(|| ((rate * 2f64.powi(64)) as u64).max(1));
        Some(Selector::Hash { threshold, seed: SplitMix64::mix(seed) })
    }

    /// Systematic sampling of units ordered by traffic, balanced: `traffic` lists every unit
    /// the trace touches with its block accesses and block writes; sorted busiest first, every
    /// `1/rate`-th unit is kept from an offset in `[0, 1/rate)`. Of [`BALANCE_CANDIDATES`]
    /// offsets (evenly spaced, shifted by the seed), the one whose sample's shares of the
    /// accesses and of the writes are closest to `rate` is taken. A sample then holds its
    /// share of busy and of quiet units, and when a few units carry much of the traffic (the
    /// busiest band of a volume can hold a sixth of its accesses) it is not the one sample in
    /// `1/rate` that holds the busiest, nor the one that holds none of the busy ones.
    /// `None` unless `0 < rate <= 1`.
    pub fn stratified(traffic: &[(u64, u64, u64)], rate: f64, seed: u64) -> Option<Selector> {
        Selector::stratified_many(traffic, rate, seed, 1).map(|mut v| v.remove(0))
    }

    /// [`Selector::stratified`]'s `count` best-balanced *distinct* samples, best first: the
    /// samples a curve averages (`--samples`). Different seeds alone would mostly pick the same
    /// best offset, so averaging them would repeat one sample. Fewer than `count` (at least one)
    /// when the candidate offsets give fewer distinct samples (at rate 1/2 there are two).
    /// `None` unless `0 < rate <= 1`.
    pub fn stratified_many(
        traffic: &[(u64, u64, u64)],
        rate: f64,
        seed: u64,
        count: usize,
    ) -> Option<Vec<Selector>> {
        if !(rate > 0.0 && rate <= 1.0) {
            return None;
        }
        let mut order: Vec<(u64, u64, u64)> = traffic.to_vec();
        // Busiest first; ties by writes, then by unit, so the order is the same on every run.
        order.sort_unstable_by(|a, b| b.1.cmp(&a.1).then(b.2.cmp(&a.2)).then(a.0.cmp(&b.0)));
        let step = 1.0 / rate;
        let shift = (SplitMix64::mix(seed) >> 11) as f64 / (1u64 << 53) as f64;
        let (all, writes) = order.iter().fold((0u64, 0u64), |(a, w), u| (a + u.1, w + u.2));
        let n = order.len();
        let kept = |offset: f64| {
            let mut at = offset;
            std::iter::from_fn(move || {
                let i = at as usize;
                at += step;
                (i < n).then_some(i)
            })
        };
        let miss = |offset: f64| {
            let (a, w) = kept(offset).fold((0u64, 0u64), |(a, w), i| (a + order[i].1, w + order[i].2));
            let off = |x: u64, of: u64| if of == 0 { 0.0 } else { (x as f64 / of as f64 / rate - 1.0).abs() };
            off(a, all) + off(w, writes)
        };
        let offsets = (0..BALANCE_CANDIDATES).map(|k| (k as f64 + shift) / BALANCE_CANDIDATES as f64 * step);
        let mut ranked: Vec<(f64, f64)> = offsets.map(|o| (miss(o), o)).collect();
        // Stable: equally balanced offsets keep their order, so the choice is reproducible.
        ranked.sort_by(|a, b| a.0.total_cmp(&b.0));
        let mut chosen: Vec<Vec<usize>> = Vec::new();
        for (_, o) in ranked {
            // An offset past the last unit (fewer units than 1/rate) keeps none: never a sample
            // while a non-empty one exists.
            let set: Vec<usize> = kept(o).collect();
            if !set.is_empty() && !chosen.contains(&set) {
                chosen.push(set);
            }
            if chosen.len() == count.max(1) {
                break;
            }
        }
        if chosen.is_empty() {
            chosen.push(Vec::new()); // no unit at all: the caller reports the empty sample
        }
        Some(
            chosen
                .into_iter()
                .map(|set| Selector::Set(Arc::new(set.into_iter().map(|i| order[i].0).collect())))
                .collect(),
        )
    }

    /// Whether unit `u` is in the sample.
    #[inline]
    pub fn keeps(&self, u: u64) -> bool {
        match self {
            Selector::Hash { threshold: None, .. } => true,
            Selector::Hash { threshold: Some(t), seed } => {
                SplitMix64::mix(seed ^ u.wrapping_mul(SplitMix64::GAMMA)) < *t
            }
            Selector::Set(s) => s.contains(&u),
        }
    }
}

/// A [`TraceReader`] yielding only the parts of requests that fall in selected units.
pub struct Sampled<R: TraceReader> {
    inner: R,
    units: Units,
    select: Selector,
    /// Pieces of the current request not yet returned, last piece first.
    pending: Vec<Request>,
}

impl<R: TraceReader> Sampled<R> {
    /// Samples `inner`'s requests by `units` and `select`.
    pub fn new(inner: R, units: Units, select: Selector) -> Self {
        Sampled { inner, units, select, pending: Vec::new() }
    }

    /// The pieces of `r` in selected units, in LBA order, appended to `out`. A zero-length
    /// request is kept when the unit of its offset is selected.
    pub fn clip(units: &Units, select: &Selector, r: &Request, out: &mut Vec<Request>) {
        let blocks = r.blocks();
        if blocks.is_empty() {
            if select.keeps(units.unit_of(r.offset / BLOCK_SIZE)) {
                out.push(*r);
            }
            return;
        }
        let end_byte = r.offset + r.len as u64;
        // The current run of selected blocks: [start, b).
        let mut run: Option<BlockNo> = None;
        let mut b = blocks.start;
        let push = |out: &mut Vec<Request>, from: BlockNo, to: BlockNo| {
            let lo = (from * BLOCK_SIZE).max(r.offset);
            let hi = (to * BLOCK_SIZE).min(end_byte);
            out.push(Request { offset: lo, len: (hi - lo) as u32, ..*r });
        };
        while b < blocks.end {
            let u = units.unit_of(b);
            let next = units.end_of(u).min(blocks.end);
            match (select.keeps(u), run) {
                (true, None) => run = Some(b),
                (false, Some(s)) => {
                    push(out, s, b);
                    run = None;
                }
                _ => {}
            }
            b = next;
        }
        if let Some(s) = run {
            push(out, s, blocks.end);
        }
    }
}

impl<R: TraceReader> TraceReader for Sampled<R> {
    fn next_request(&mut self) -> Result<Option<Request>, TraceError> {
        loop {
            if let Some(p) = self.pending.pop() {
                return Ok(Some(p));
            }
            let Some(r) = self.inner.next_request()? else { return Ok(None) };
            Self::clip(&self.units, &self.select, &r, &mut self.pending);
            self.pending.reverse();
        }
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

/// Requests held in memory, replayed as a trace: a sample is read from the trace once and
/// replayed by every mini-simulation of a curve.
pub struct InMemory {
    requests: Arc<Vec<Request>>,
    at: usize,
    format: &'static str,
}

impl InMemory {
    /// A reader over `requests`, reporting `format` as its format name.
    pub fn new(requests: Arc<Vec<Request>>, format: &'static str) -> Self {
        InMemory { requests, at: 0, format }
    }
}

impl TraceReader for InMemory {
    fn next_request(&mut self) -> Result<Option<Request>, TraceError> {
        let r = self.requests.get(self.at).copied();
        self.at += r.is_some() as usize;
        Ok(r)
    }
    fn format_name(&self) -> &'static str {
        self.format
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use shingled_core::{BandConfig, ByteSize, Op};

    fn req(offset: u64, len: u32) -> Request {
        Request { time_ns: 7, volume: 3, op: Op::Write, offset, len }
    }

    /// A selector that keeps exactly the units in `keep` among `0..n` (found by trying seeds),
    /// so that the hand-checked cases do not depend on which seed happens to pick what.
    fn keeping(keep: &[u64], rate: f64, n: u64) -> Selector {
        (0..100_000u64)
            .map(|s| Selector::new(rate, s).unwrap())
            .find(|s| (0..n).all(|u| s.keeps(u) == keep.contains(&u)))
            .expect("some seed selects exactly these units")
    }

    #[test]
    fn a_request_over_four_bands_keeps_the_pieces_in_sampled_bands_merged_when_adjacent() {
        // Bands of 4 blocks (16 KiB): band 0 = blocks 0..4, band 1 = 4..8, band 2 = 8..12, ...
        let map = Arc::new(
            BandMap::build(&BandConfig::Fixed { size: ByteSize::kib(16) }, ByteSize::mib(1)).unwrap(),
        );
        let units = Units::Bands(map);
        let sel = keeping(&[1, 2], 0.5, 6);
        let mut out = Vec::new();
        // Bytes 2048 .. 2048 + 14 blocks: blocks 0..15 (bands 0, 1, 2, 3), unaligned at both ends.
        Sampled::<InMemory>::clip(&units, &sel, &req(2048, 14 * 4096), &mut out);
        // Bands 1 and 2 are adjacent and both kept: one piece, blocks 4..12.
        assert_eq!(out, vec![req(4 * 4096, 8 * 4096)]);
        // A request inside band 0 only: dropped.
        out.clear();
        Sampled::<InMemory>::clip(&units, &sel, &req(0, 8192), &mut out);
        assert!(out.is_empty());
        // Blocks 6..22 (bands 1 to 5, of which 1 and 2 are kept): blocks 6..12.
        out.clear();
        Sampled::<InMemory>::clip(&units, &sel, &req(6 * 4096, 16 * 4096), &mut out);
        assert_eq!(out, vec![req(6 * 4096, 6 * 4096)]);
        out.clear();
        Sampled::<InMemory>::clip(&units, &sel, &req(6 * 4096 + 100, 4000), &mut out);
        assert_eq!(
            out,
            vec![req(6 * 4096 + 100, 4000)],
            "a sub-block request inside a kept band is unchanged"
        );
    }

    #[test]
    fn separated_kept_bands_become_separate_pieces_with_the_request_time_and_op() {
        let map = Arc::new(
            BandMap::build(&BandConfig::Fixed { size: ByteSize::kib(16) }, ByteSize::mib(1)).unwrap(),
        );
        let sel = keeping(&[0, 2], 0.5, 3);
        let mut out = Vec::new();
        // Blocks 1..11 over bands 0, 1, 2: pieces 1..4 and 8..11.
        Sampled::<InMemory>::clip(&Units::Bands(map), &sel, &req(4096, 10 * 4096), &mut out);
        assert_eq!(out, vec![req(4096, 3 * 4096), req(8 * 4096, 3 * 4096)]);
        assert!(out.iter().all(|p| p.time_ns == 7 && p.volume == 3 && p.op == Op::Write));
    }

    #[test]
    fn variable_bands_are_cut_at_their_own_boundaries() {
        let cfg = BandConfig::UniformRandom { min: ByteSize::kib(8), max: ByteSize::kib(40), seed: 5 };
        let map = Arc::new(BandMap::build(&cfg, ByteSize::mib(1)).unwrap());
        let (s1, l1) = map.band_range(1);
        let (s2, _) = map.band_range(2);
        let sel = keeping(&[1], 0.3, 3);
        let mut out = Vec::new();
        Sampled::<InMemory>::clip(&Units::Bands(map), &sel, &req(0, (s2 as u32 + 1) * 4096), &mut out);
        assert_eq!(out, vec![req(s1 * 4096, l1 as u32 * 4096)]);
    }

    #[test]
    fn zones_are_fixed_aligned_units() {
        let sel = keeping(&[3], 0.2, 5);
        let mut out = Vec::new();
        // Zones of 2 blocks; blocks 5..9 span zones 2, 3, 4: keep 6..8.
        Sampled::<InMemory>::clip(&Units::Zones(2), &sel, &req(5 * 4096, 4 * 4096), &mut out);
        assert_eq!(out, vec![req(6 * 4096, 2 * 4096)]);
    }

    #[test]
    fn rate_one_keeps_everything_and_bad_rates_are_refused() {
        let all = Selector::new(1.0, 9).unwrap();
        assert!((0..10_000).all(|u| all.keeps(u)));
        for bad in [0.0, -0.5, 1.5, f64::NAN, f64::INFINITY] {
            assert!(Selector::new(bad, 0).is_none(), "{bad}");
        }
    }

    #[test]
    fn stratified_keeps_every_step_th_unit_by_traffic_from_a_seeded_offset() {
        // Units 0..10 with traffic 10 × (u + 1): busiest first is 9, 8, …, 0. At rate 1/4 the
        // kept units are positions offset, offset + 4, offset + 8 of that order, offset in [0, 4).
        // Total 550: a quarter is 137.5; {9, 5, 1} = 100 + 60 + 20 = 180, {8, 4, 0} = 150,
        // {7, 3} = 120, {6, 2} = 100: the balanced choice is {8, 4, 0} whatever the seed.
        let traffic: Vec<(u64, u64, u64)> = (0..10).map(|u| (u, 10 * (u + 1), 0)).collect();
        for seed in 0..20 {
            let sel = Selector::stratified(&traffic, 0.25, seed).unwrap();
            let kept: Vec<u64> = (0..10).rev().filter(|&u| sel.keeps(u)).collect();
            assert_eq!(kept, vec![8, 4, 0], "seed {seed}");
        }
        let all = Selector::stratified(&traffic, 1.0, 3).unwrap();
        assert!((0..10).all(|u| all.keeps(u)));
        assert!(Selector::stratified(&traffic, 0.0, 3).is_none());
    }

    #[test]
    fn several_stratified_samples_are_the_best_balanced_distinct_ones() {
        // The example above: the offsets give {8, 4, 0} (150, off by 12.5), {9, 5, 1} (180, off
        // by 42.5), {7, 3} (120, off by 17.5), {6, 2} (100, off by 37.5); the seed would not change
        // the best, so several samples must be the next best, not copies of it.
        let traffic: Vec<(u64, u64, u64)> = (0..10).map(|u| (u, 10 * (u + 1), 0)).collect();
        let kept = |sel: &Selector| (0..10).rev().filter(|&u| sel.keeps(u)).collect::<Vec<u64>>();
        for seed in 0..5 {
            let v = Selector::stratified_many(&traffic, 0.25, seed, 3).unwrap();
            let sets: Vec<Vec<u64>> = v.iter().map(kept).collect();
            assert_eq!(sets, vec![vec![8, 4, 0], vec![7, 3], vec![6, 2]], "seed {seed}");
            assert_eq!(kept(&Selector::stratified(&traffic, 0.25, seed).unwrap()), sets[0]);
        }
        // Only four distinct samples exist at rate 1/4: asking for more gives those four.
        assert_eq!(Selector::stratified_many(&traffic, 0.25, 0, 9).unwrap().len(), 4);
    }

    #[test]
    fn fewer_units_than_one_over_the_rate_never_give_an_empty_sample() {
        // Five units at rate 1/10: half the offsets fall past the last unit and keep nothing;
        // the samples are the five single units, never the empty set.
        let traffic: Vec<(u64, u64, u64)> = (0..5).map(|u| (u, 10 * (u + 1), 0)).collect();
        for count in [1, 5, 8] {
            let v = Selector::stratified_many(&traffic, 0.1, 3, count).unwrap();
            assert_eq!(v.len(), count.min(5), "count {count}");
            for sel in &v {
                assert_eq!((0..5).filter(|&u| sel.keeps(u)).count(), 1, "count {count}");
            }
        }
        // No unit at all: one (empty) sample, which the caller reports.
        let none = Selector::stratified_many(&[], 0.1, 3, 4).unwrap();
        assert_eq!(none.len(), 1);
    }

    #[test]
    fn the_kept_fraction_of_units_is_close_to_the_rate() {
        let sel = Selector::new(0.1, 42).unwrap();
        let kept = (0..100_000u64).filter(|&u| sel.keeps(u)).count();
        assert!((9_400..10_600).contains(&kept), "{kept}");
    }

    proptest! {
        #[test]
        fn kept_blocks_are_exactly_the_blocks_of_selected_units(
            reqs in prop::collection::vec((0u64..4000 * 4096, 0u32..300 * 4096), 1..40),
            rate in 0.05f64..1.0,
            seed in any::<u64>(),
            zone in prop::option::of(1u64..64),
        ) {
            let units = match zone {
                Some(z) => Units::Zones(z),
                None => Units::Bands(Arc::new(BandMap::build(
                    &BandConfig::UniformRandom { min: ByteSize::kib(8), max: ByteSize::kib(200), seed },
                    ByteSize::mib(8),
                ).unwrap())),
            };
            let sel = Selector::new(rate, seed).unwrap();
            let trace: Vec<Request> = reqs.iter().map(|&(o, l)| req(o, l)).collect();
            let read = |s: Selector| {
                let mut r = Sampled::new(InMemory::new(Arc::new(trace.clone()), "mem"), units.clone(), s);
                let mut v = Vec::new();
                while let Some(p) = r.next_request().unwrap() { v.push(p); }
                v
            };
            let got = read(sel.clone());
            prop_assert_eq!(&got, &read(sel.clone()), "deterministic per seed");
            // Block multiset kept == blocks of the trace in selected units; pieces never straddle
            // an unselected unit and stay inside their request's bytes.
            let mut want: Vec<BlockNo> =
                trace.iter().flat_map(|r| r.blocks()).filter(|&b| sel.keeps(units.unit_of(b))).collect();
            let mut have: Vec<BlockNo> = got.iter().flat_map(|r| r.blocks()).collect();
            prop_assert!(have.iter().all(|&b| sel.keeps(units.unit_of(b))));
            want.sort_unstable();
            have.sort_unstable();
            prop_assert_eq!(want, have);
            let bytes_in = |r: &Request| trace.iter().any(|t| t.offset <= r.offset && r.offset + r.len as u64 <= t.offset + t.len as u64);
            prop_assert!(got.iter().filter(|p| p.len > 0).all(bytes_in));
        }
    }
}
