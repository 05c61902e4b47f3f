//! Tests of the synthetic MSR profiles. Debug-mode friendly: small scales.
//!
//! How `scale` maps the footprint: the accessed range, the written range and the distinct-block
//! target are all multiplied by `scale` (the page count too), while extents (256 KiB), cells
//! (4 MiB), heat clusters (32 MiB) and the 17–36 MB bands of the drive keep their physical
//! size. So a scaled trace has proportionally fewer bands: band-coverage figures are only
//! meaningful once the range spans a good number of bands (scale ≥ 0.1 for the small volumes
//! puts 14+ bands in the range), while page counts, write shares, distinct blocks and hit
//! ratios of range-relative caches hold at any scale down to about 0.02.

use super::*;
use crate::Request;
use shingled_core::{BandConfig, BandMap, ByteSize, Op};
use std::collections::{HashMap, HashSet, VecDeque};

fn all(spec: &str) -> (SynthTargets, Vec<Request>) {
    let mut t = SynthTrace::from_spec(spec).unwrap();
    let tg = t.targets().clone();
    let mut v = Vec::new();
    while let Some(r) = t.next_req() {
        v.push(r);
    }
    (tg, v)
}

fn pages(r: &Request) -> u64 {
    r.blocks().end - r.blocks().start
}

#[test]
fn same_seed_same_trace_other_seed_differs() {
    let (_, a) = all("wdev,scale=0.02,seed=7");
    let (_, b) = all("wdev,scale=0.02,seed=7");
    let (_, c) = all("wdev,scale=0.02,seed=8");
    assert_eq!(a, b);
    assert_ne!(a[..1000], c[..1000]);
    // Same seed, other profile: unrelated.
    let (_, d) = all("ts,scale=0.02,seed=7");
    assert_ne!(a[..1000], d[..1000]);
    // The reader trait yields the same stream as the inherent method.
    let mut boxed = open_spec("wdev,scale=0.02,seed=7").unwrap();
    assert_eq!(boxed.format_name(), "synth");
    let mut n = 0;
    while let Some(r) = boxed.next_request().unwrap() {
        assert_eq!(r, a[n]);
        n += 1;
    }
    assert_eq!(n, a.len());
}

#[test]
fn every_profile_page_count_write_share_and_bounds() {
    for p in profiles() {
        let (tg, reqs) = all(&format!("{},scale=0.02,seed=3", p.name));
        let expect = (p.page_requests as f64 * 0.02).round() as u64;
        assert_eq!(tg.pages, expect, "{}", p.name);
        let total: u64 = reqs.iter().map(pages).sum();
        assert!((total as f64 / expect as f64 - 1.0).abs() <= 0.01, "{}: {total} pages vs {expect}", p.name);
        let written: u64 = reqs.iter().filter(|r| r.op == Op::Write).map(pages).sum();
        let wpct = written as f64 * 100.0 / total as f64;
        assert!((wpct - p.write_pct).abs() <= 2.0, "{}: {wpct:.2}% writes vs {}%", p.name, p.write_pct);
        let mut last = 0;
        for r in &reqs {
            assert!(r.len > 0 && r.len % 512 == 0 && r.offset % 512 == 0, "{}: {r:?}", p.name);
            assert!(
                r.offset + r.len as u64 <= tg.accessed_range_bytes,
                "{}: {r:?} outside the range",
                p.name
            );
            if r.op == Op::Write {
                assert!(r.offset + r.len as u64 <= tg.written_range_bytes, "{}: write {r:?} outside", p.name);
            }
            assert!(r.time_ns >= last, "{}: time goes back at {r:?}", p.name);
            last = r.time_ns;
            assert_eq!(r.volume, 0);
        }
    }
}

#[test]
fn request_sizes_and_timing_look_like_the_volume() {
    let (tg, reqs) = all("wdev,scale=0.05,seed=1");
    let mut by_size: HashMap<u32, u64> = HashMap::new();
    for r in &reqs {
        *by_size.entry(r.len).or_default() += 1;
    }
    let mut common: Vec<(u32, u64)> = by_size.into_iter().collect();
    common.sort_by_key(|c| std::cmp::Reverse(c.1));
    assert_eq!(common[0].0, 4096, "4 KiB most common: {common:?}");
    assert_eq!(common[1].0, 8192, "then 8 KiB: {common:?}");
    let unaligned = reqs.iter().filter(|r| r.offset % 4096 != 0 || r.len % 4096 != 0).count();
    let share = unaligned as f64 / reqs.len() as f64;
    assert!((0.005..0.05).contains(&share), "unaligned share {share}");
    // Mean pages per request close to the original's (2,654,824 pages / 1,143,261 requests).
    let mean = tg.pages as f64 / reqs.len() as f64;
    assert!((mean / 2.3222 - 1.0).abs() < 0.05, "mean pages per request {mean}");
    // Mean gap close to one week / 1,143,261 requests.
    let gap = reqs.last().unwrap().time_ns as f64 / reqs.len() as f64;
    assert!(
        (gap / tg.mean_interarrival_ns - 1.0).abs() < 0.1,
        "mean gap {gap} ns vs {}",
        tg.mean_interarrival_ns
    );
    assert!((tg.mean_interarrival_ns / 1e9 - 604_800.0 / 1_143_261.0).abs() < 1e-6);
    // Sequential runs exist: a good share of requests start where a recent one ended.
    let mut ends = VecDeque::new();
    let mut seq = 0;
    for r in &reqs {
        if ends.contains(&r.offset) {
            seq += 1;
        }
        ends.push_back(r.offset + r.len as u64);
        if ends.len() > 16 {
            ends.pop_front();
        }
    }
    let seq = seq as f64 / reqs.len() as f64;
    assert!(seq > 0.1, "sequential share {seq}");
}

/// Distinct blocks, covered bytes of written and of accessed bands (default 17–36 MB map).
fn footprint(tg: &SynthTargets, reqs: &[Request]) -> (u64, u64, u64, Vec<u64>) {
    let map = BandMap::build(&BandConfig::default(), ByteSize(tg.accessed_range_bytes)).unwrap();
    let mut blocks = HashSet::new();
    let mut wband = vec![false; map.len()];
    let mut aband = vec![false; map.len()];
    let mut band_writes = vec![0u64; map.len()];
    for r in reqs {
        for b in r.blocks() {
            blocks.insert(b);
            let band = map.band_of(b) as usize;
            aband[band] = true;
            if r.op == Op::Write {
                wband[band] = true;
                band_writes[band] += 1;
            }
        }
    }
    let bytes = |v: &[bool]| (0..v.len()).filter(|&i| v[i]).map(|i| map.band_bytes(i as u32)).sum::<u64>();
    (blocks.len() as u64, bytes(&wband), bytes(&aband), band_writes)
}

#[test]
fn footprint_and_band_ranges_match_the_scaled_table() {
    // wdev: dense, written ≈ accessed; web: 15% read-only range; rsrch: sparse (12% of the
    // range distinct, spread over every band).
    for (name, scale) in [("wdev", 0.1), ("web", 0.05), ("rsrch", 0.1)] {
        let (tg, reqs) = all(&format!("{name},scale={scale}"));
        let info = profiles().into_iter().find(|p| p.name == name).unwrap();
        let (distinct, wbytes, abytes, band_writes) = footprint(&tg, &reqs);
        let within = |got: f64, want: f64| (got / want - 1.0).abs() <= 0.15;
        assert!(
            within(distinct as f64, tg.distinct_blocks as f64),
            "{name}: {distinct} distinct vs {}",
            tg.distinct_blocks
        );
        let want_w = info.written_range_gb * 1e9 * scale;
        let want_a = info.accessed_range_gb * 1e9 * scale;
        assert!(within(wbytes as f64, want_w), "{name}: written bands {wbytes} vs {want_w}");
        assert!(within(abytes as f64, want_a), "{name}: accessed bands {abytes} vs {want_a}");
        // Band-level skew: the hottest tenth of the bands takes far more than a tenth of the
        // writes, and the colder half takes far less than half.
        let mut bw = band_writes;
        bw.sort_unstable_by(|a, b| b.cmp(a));
        let total: u64 = bw.iter().sum();
        let top: u64 = bw.iter().take(bw.len().div_ceil(10)).sum();
        let cold: u64 = bw.iter().skip(bw.len() / 2).sum();
        assert!(top as f64 > 0.25 * total as f64, "{name}: top 10% of bands get {top} of {total} writes");
        assert!(
            (cold as f64) < 0.3 * total as f64,
            "{name}: cold half of bands get {cold} of {total} writes"
        );
    }
}

/// LRU of `cap` blocks: hash map of last-use stamps plus a queue with lazy deletion.
fn lru_hit_ratio(reqs: &[Request], cap: usize) -> f64 {
    let mut stamp_of: HashMap<u64, u64> = HashMap::new();
    let mut queue: VecDeque<(u64, u64)> = VecDeque::new();
    let (mut stamp, mut hits, mut total) = (0u64, 0u64, 0u64);
    for r in reqs {
        for b in r.blocks() {
            total += 1;
            stamp += 1;
            if stamp_of.insert(b, stamp).is_some() {
                hits += 1;
            }
            queue.push_back((b, stamp));
            while stamp_of.len() > cap {
                let (old, s) = queue.pop_front().unwrap();
                if stamp_of.get(&old) == Some(&s) {
                    stamp_of.remove(&old);
                }
            }
        }
    }
    hits as f64 / total as f64
}

#[test]
fn lru_of_two_percent_of_the_range_gets_a_plausible_hit_ratio() {
    // Calibrated to about 0.85 × (1 − SAC Table 1 miss ratio): wdev ≈ 0.49, usr ≈ 0.54 at
    // scale 1; from scale 0.05 up the figures stay within a few points of that.
    for (name, lo, hi) in [("wdev", 0.38, 0.60), ("usr", 0.42, 0.65)] {
        let (tg, reqs) = all(&format!("{name},scale=0.05,seed=11"));
        let cap = (tg.accessed_range_bytes / 4096) as usize / 50;
        let h = lru_hit_ratio(&reqs, cap);
        assert!((lo..=hi).contains(&h), "{name}: LRU hit ratio {h:.3} outside [{lo}, {hi}]");
    }
}

#[test]
fn pages_override_volume_and_tiny_scales() {
    let (tg, reqs) = all("usr,pages=5000,volume=3,seed=2");
    assert_eq!(tg.pages, 5000);
    assert_eq!(reqs.iter().map(pages).sum::<u64>(), 5000);
    assert!(reqs.iter().all(|r| r.volume == 3));
    // Footprint follows scale (1 here), not pages.
    assert_eq!(tg.accessed_range_bytes, SynthSpec::parse("usr").unwrap().targets().accessed_range_bytes);
    let (_, none) = all("wdev,pages=0");
    assert!(none.is_empty());
    for p in profiles() {
        let (tg, reqs) = all(&format!("{},scale=1e-9", p.name));
        assert_eq!(tg.pages, 1);
        assert_eq!(reqs.iter().map(pages).sum::<u64>(), 1);
        assert!(reqs.iter().all(|r| r.offset + r.len as u64 <= tg.accessed_range_bytes));
        let (tg, reqs) = all(&format!("{},scale=0.0002,pages=3000", p.name));
        assert_eq!(reqs.iter().map(pages).sum::<u64>(), 3000);
        assert!(reqs.iter().all(|r| r.offset + r.len as u64 <= tg.accessed_range_bytes));
    }
}

#[test]
fn spec_parsing_and_errors() {
    let s = SynthSpec::parse(" WDEV , scale = 0.5, seed=7 ,pages=1_000,volume=2").unwrap();
    assert_eq!(
        s,
        SynthSpec { profile: "wdev", scale: 0.5, pages: Some(1000), seed: 7, volume: 2, span: None }
    );
    assert_eq!("usr".parse::<SynthSpec>().unwrap().scale, 1.0);

    let msg = |spec: &str| match SynthSpec::parse(spec) {
        Err(e @ TraceError::Synth { .. }) => {
            let text = e.to_string();
            assert!(text.contains(&format!("{spec:?}")), "error must name the spec: {text}");
            text
        }
        other => panic!("{spec}: expected a Synth error, got {other:?}"),
    };
    let m = msg("wdevv");
    assert!(
        m.contains("unknown profile") && m.contains("src, prn, ts, wdev, mds, stg, hm, web, usr, rsrch"),
        "{m}"
    );
    assert!(msg("").contains("valid profiles"));
    let m = msg("wdev,scael=2");
    assert!(m.contains("unknown key") && m.contains("scale, pages, seed, volume"), "{m}");
    assert!(msg("wdev,scale").contains("not key=value"));
    for bad in ["scale=0", "scale=-1", "scale=abc", "scale=nan", "scale=inf", "scale=1000"] {
        assert!(msg(&format!("wdev,{bad}")).contains("expected a number"), "{bad}");
    }
    assert!(msg("wdev,pages=1.5").contains("whole number"));
    assert!(msg("wdev,seed=-1").contains("unsigned 64-bit"));
    assert!(msg("wdev,volume=5000000000").contains("unsigned 32-bit"));
    assert!(msg("wdev,seed=1,seed=2").contains("twice"));
    assert!(open_spec("nope").is_err());
}

#[test]
fn profile_listing_matches_the_papers() {
    let ps = profiles();
    assert_eq!(ps.len(), 11);
    let names: Vec<_> = ps.iter().map(|p| p.name).collect();
    assert_eq!(names, ["src", "prn", "ts", "wdev", "mds", "stg", "hm", "web", "usr", "rsrch", "proj"]);
    // proj_0: SMaRT Table 1's mean request size (76 sectors) and write share (87.52%).
    let proj = &ps[10];
    assert_eq!(proj.source, FigureSource::SmartTable1);
    let bytes_per_req = proj.page_requests as f64 * 4096.0 / 4_224_524.0;
    assert!((bytes_per_req / 512.0 - 76.0).abs() < 0.5, "{bytes_per_req}");
    let wdev = &ps[3];
    assert_eq!(
        (wdev.page_requests, wdev.write_pct, wdev.written_range_gb, wdev.accessed_range_gb),
        (2_654_824, 72.7, 4.71, 4.73)
    );
    assert_eq!(wdev.description, "Test web server");
    let rsrch = &ps[9];
    assert_eq!(rsrch.source, FigureSource::SacTable4);
    assert_eq!((rsrch.page_requests, rsrch.write_pct), (3_200_000, 88.8));
    for p in &ps {
        assert!(p.written_range_gb <= p.accessed_range_gb);
        assert!(p.density > 0.0 && p.density < 1.0);
        assert!(!p.description.is_empty() && !p.msr_volume.is_empty());
    }
}

/// `span` spreads the 4 MiB cells over a wider range, in order, and changes nothing else: the
/// same requests, sizes, times and positions inside their cells.
#[test]
fn span_spreads_cells_and_keeps_everything_else() {
    let dense: Vec<Request> = SynthTrace::from_spec("mds,scale=0.05").unwrap().collect();
    let spec = SynthSpec::parse("mds,scale=0.05,span=max").unwrap();
    let t = spec.targets();
    // SMaRT Table 1: mds_0's MAX LBA is 71,127,264 sectors.
    assert_eq!(t.span_bytes, (71_127_264f64 * 512.0 * 0.05) as u64 / 4096 * 4096);
    let spread: Vec<Request> = SynthTrace::new(&spec).collect();
    assert_eq!(dense.len(), spread.len());
    let cell = SPAN_CELL;
    let mut last_cell = (0, 0);
    for (d, s) in dense.iter().zip(&spread) {
        assert_eq!((d.time_ns, d.op, d.len, d.offset % cell), (s.time_ns, s.op, s.len, s.offset % cell));
        assert!(s.offset + s.len as u64 <= t.span_bytes);
        // Cells keep their order.
        let (dc, sc) = (d.offset / cell, s.offset / cell);
        if dc > last_cell.0 {
            assert!(sc > last_cell.1);
        }
        last_cell = (dc, sc);
    }
    let top = spread.iter().map(|r| r.offset).max().unwrap();
    assert!(top > t.accessed_range_bytes * 5, "spread over the span: {top}");
    let msg = |s: &str| SynthSpec::parse(s).unwrap_err().to_string();
    assert!(msg("wdev,span=max").contains("known for mds, proj, stg and rsrch"));
    assert!(msg("mds,span=1MB").contains("below the trace's accessed range"));
    assert!(msg("mds,span=lots").contains("a size such as 40GB"));
}

// ---- `bursts`: cold write bursts plus a scattered trickle ----

fn bursts(spec: &str) -> (BurstTrace, Vec<Request>) {
    let mut t = BurstTrace::from_spec(spec).unwrap();
    let mut v = Vec::new();
    while let Some(r) = t.next_req() {
        v.push(r);
    }
    (t, v)
}

/// Region (of `burst` blocks) of every request that is a whole region, in order: with
/// `request` = `burst`, the bursts.
fn whole_regions(reqs: &[Request], burst: u64) -> Vec<u64> {
    let bytes = burst * 4096;
    reqs.iter().filter(|r| r.op == Op::Write && r.len as u64 == bytes).map(|r| r.offset / bytes).collect()
}

#[test]
fn bursts_defaults_units_and_dispatch() {
    let s = BurstSpec::parse("bursts").unwrap();
    assert_eq!(s, BurstSpec::default());
    assert_eq!((s.range_blocks(), s.regions(), s.total_pages()), (2_097_152, 1024, 2_097_152));
    assert_eq!(
        (s.burst_blocks, s.request_blocks, s.trickle, s.rewrite, s.hot, s.reads, s.gap_ms, s.idle_ms),
        (2048, 1, 0.1, 0.0, 8, 0.0, 1.0, 0.0)
    );
    // Sizes or block counts; `scale` shrinks the range and the page count, not the burst.
    let s = BurstSpec::parse(" BURSTS , Scale=0.5, burst=4MiB, request=32KiB, range=1GiB").unwrap();
    assert_eq!(
        (s.range_blocks(), s.burst_blocks, s.request_blocks, s.regions(), s.total_pages()),
        (131_072, 1024, 8, 128, 1_048_576)
    );
    let s = BurstSpec::parse("bursts,burst=1_024,pages=1_000,seed=9,volume=4").unwrap();
    assert_eq!((s.burst_blocks, s.total_pages(), s.seed, s.volume), (1024, 1000, 9, 4));
    // `synth:` hands the name to the right generator.
    let mut r = open_spec("bursts,pages=10,volume=2").unwrap();
    assert_eq!(r.format_name(), "synth");
    let mut n = 0;
    while let Some(q) = r.next_request().unwrap() {
        assert_eq!((q.volume, q.len), (2, 4096));
        n += 1;
    }
    assert_eq!(n, 10);
    assert_eq!(generators().iter().map(|g| g.name).collect::<Vec<_>>(), ["bursts"]);
    assert_eq!(generators()[0].keys, BURST_KEYS);
}

#[test]
fn bursts_without_trickle_write_whole_fresh_regions_front_to_back() {
    // 1 MiB = 256 blocks = 16 regions of 16 blocks; 4 requests of 4 blocks per burst; 64 pages
    // are 4 bursts of 4 distinct regions.
    let (t, reqs) = bursts("bursts,range=1MiB,burst=16,request=4,trickle=0,pages=64,gap=0");
    assert_eq!(reqs.len(), 16);
    let mut regions = Vec::new();
    for burst in reqs.chunks(4) {
        let start = burst[0].offset;
        assert_eq!(start % (16 * 4096), 0, "a burst starts at a region boundary: {burst:?}");
        for (i, r) in burst.iter().enumerate() {
            assert_eq!((r.op, r.offset, r.len), (Op::Write, start + i as u64 * 16_384, 16_384));
        }
        regions.push(start / (16 * 4096));
    }
    assert_eq!(regions.iter().collect::<HashSet<_>>().len(), 4, "{regions:?}");
    assert_eq!((t.bursts(), t.rewrites(), t.trickle_writes(), t.requests()), (4, 0, 0, 16));
    assert!(reqs.iter().all(|r| r.time_ns == 0), "gap=0 and idle=0: no time passes");
    // Cold: a region comes back only one pass later, after every other region.
    let (_, reqs) = bursts("bursts,range=1MiB,burst=16,request=16,trickle=0,pages=512");
    let seq = whole_regions(&reqs, 16);
    assert_eq!(seq.len(), 32);
    for pass in seq.chunks(16) {
        let mut p = pass.to_vec();
        p.sort_unstable();
        assert_eq!(p, (0..16).collect::<Vec<u64>>());
    }
    assert_ne!(seq[..16], seq[16..], "each pass has its own order");
}

#[test]
fn bursts_trickle_share_is_exact_by_construction() {
    // One-block requests: every fourth write is a trickle write; the other three continue the
    // dense run, 64 contiguous blocks per region.
    let (t, reqs) = bursts("bursts,range=16MiB,burst=64,trickle=0.25,pages=4000,seed=3");
    assert_eq!((reqs.len(), t.trickle_writes()), (4000, 1000));
    let dense: Vec<&Request> = reqs.iter().enumerate().filter(|(i, _)| i % 4 != 3).map(|(_, r)| r).collect();
    assert_eq!(dense.len(), 3000);
    for run in dense.chunks(64) {
        assert_eq!(run[0].offset % (64 * 4096), 0);
        for (i, r) in run.iter().enumerate() {
            assert_eq!((r.offset, r.len), (run[0].offset + i as u64 * 4096, 4096), "{run:?}");
        }
    }
    // The trickle writes scatter over the whole range: 1000 blocks touch most of its 64 regions.
    let trickle_regions: HashSet<u64> =
        reqs.iter().skip(3).step_by(4).map(|r| r.offset / (64 * 4096)).collect();
    assert!(trickle_regions.len() > 56, "{}", trickle_regions.len());
    // Larger requests: the share is of written blocks, within one request of exact.
    for (trickle, request) in [(0.1, 8), (0.25, 8), (0.4, 32), (0.0, 8), (1.0, 8)] {
        let (t, reqs) =
            bursts(&format!("bursts,range=64MiB,trickle={trickle},request={request},pages=100000"));
        let got = t.trickle_writes() as f64;
        assert!((got - trickle * 100_000.0).abs() <= trickle * request as f64 + 1.0, "{trickle}: {got}");
        let singles = reqs[..reqs.len() - 1].iter().filter(|r| r.len == 4096).count() as f64;
        assert!((singles - got).abs() <= 1.0, "{trickle}: {singles} one-block requests vs {got}");
        assert_eq!(reqs.iter().map(pages).sum::<u64>(), 100_000);
    }
}

#[test]
fn bursts_rewrite_goes_back_to_the_hot_regions() {
    // 64 MiB of 16-block regions: 1024 regions, more than the fresh bursts below, so a region
    // seen twice is a rewrite.
    let base = "bursts,range=64MiB,burst=16,request=16,trickle=0";
    let (t, reqs) = bursts(&format!("{base},rewrite=1,hot=4,pages=1600"));
    let seq = whole_regions(&reqs, 16);
    assert_eq!(seq.len(), 100);
    assert_eq!(seq[..4].iter().collect::<HashSet<_>>().len(), 4);
    assert!(seq[4..].iter().all(|r| seq[..4].contains(r)), "{seq:?}");
    assert_eq!(t.rewrites(), 96);
    // rewrite=0.5: half the bursts after the first `hot` go back to one of the last 8 fresh
    // regions; the fresh ones follow the same order as with rewrite=0.
    let (t, reqs) = bursts(&format!("{base},rewrite=0.5,hot=8,pages=32000"));
    let seq = whole_regions(&reqs, 16);
    let mut ring: VecDeque<u64> = VecDeque::new();
    let (mut fresh, mut rewrites) = (Vec::new(), 0);
    for &r in &seq {
        if fresh.contains(&r) {
            assert!(ring.contains(&r), "{r} rewritten but not among the last 8 fresh regions {ring:?}");
            rewrites += 1;
        } else {
            fresh.push(r);
            ring.push_back(r);
            if ring.len() > 8 {
                ring.pop_front();
            }
        }
    }
    assert_eq!(rewrites, t.rewrites());
    let share = rewrites as f64 / (seq.len() - 8) as f64;
    assert!((0.45..0.55).contains(&share), "rewrite share {share}");
    let (_, cold) = bursts(&format!("{base},pages={}", 16 * fresh.len()));
    assert_eq!(whole_regions(&cold, 16), fresh);
}

#[test]
fn bursts_same_seed_same_trace_and_one_stream_per_aspect() {
    let spec = "bursts,range=64MiB,burst=64,request=8,pages=20000,reads=0.1";
    let (_, a) = bursts(&format!("{spec},seed=7"));
    let (_, b) = bursts(&format!("{spec},seed=7"));
    let (_, c) = bursts(&format!("{spec},seed=8"));
    assert_eq!(a, b);
    assert_ne!(a[..1000], c[..1000]);
    // The trickle share changes the trickle, not the order of the bursts.
    let regions = |trickle: f64| {
        let (_, r) = bursts(&format!("bursts,range=64MiB,burst=16,request=16,pages=8000,trickle={trickle}"));
        whole_regions(&r, 16)
    };
    let (none, some) = (regions(0.0), regions(0.3));
    assert!(some.len() < none.len());
    assert_eq!(none[..some.len()], some[..]);
}

#[test]
fn bursts_reads_bounds_and_time() {
    let (t, reqs) = bursts("bursts,range=64MiB,burst=256,request=8,reads=0.25,pages=40000,gap=0.5,idle=100");
    let read: u64 = reqs.iter().filter(|r| r.op == Op::Read).map(pages).sum();
    assert!(read.abs_diff(10_000) <= 8, "{read} read pages");
    let mut last = 0;
    for r in &reqs {
        assert!(r.offset + r.len as u64 <= 64 << 20 && r.offset % 4096 == 0 && r.len > 0, "{r:?}");
        assert!(r.time_ns >= last, "time goes back at {r:?}");
        last = r.time_ns;
    }
    // Gaps: 0.5 ms on average, plus 100 ms after the last request of a burst.
    let (mut after, mut other) = (Vec::new(), Vec::new());
    for w in reqs.windows(2) {
        let gap = (w[1].time_ns - w[0].time_ns) as f64 / 1e6;
        let ends_burst =
            w[0].op == Op::Write && w[0].len == 32_768 && (w[0].offset + 32_768) % (256 * 4096) == 0;
        if ends_burst {
            after.push(gap)
        } else {
            other.push(gap)
        }
    }
    let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len() as f64;
    assert!(after.len() as u64 + 1 >= t.bursts() && after.len() > 50, "{} of {}", after.len(), t.bursts());
    assert!((mean(&other) - 0.5).abs() < 0.05, "{}", mean(&other));
    assert!((60.0..140.0).contains(&mean(&after)), "{}", mean(&after));
}

#[test]
fn bursts_spec_errors_name_key_and_value() {
    let msg = |spec: &str| match open_spec(spec) {
        Err(e @ TraceError::Synth { .. }) => {
            let text = e.to_string();
            assert!(text.contains(&format!("{spec:?}")), "error must name the spec: {text}");
            text
        }
        Err(e) => panic!("{spec}: expected a Synth error, got {e:?}"),
        Ok(_) => panic!("{spec}: accepted"),
    };
    for (spec, needle) in [
        ("bursts,trickle=1.5", r#"trickle="1.5": expected a share from 0 to 1"#),
        ("bursts,rewrite=-0.1", r#"rewrite="-0.1": expected a share"#),
        ("bursts,reads=most", r#"reads="most": expected a share"#),
        ("bursts,hot=0", r#"hot="0": expected a whole number from 1 to 65536"#),
        ("bursts,burst=0", r#"burst="0": expected a whole number of 4 KiB blocks"#),
        ("bursts,burst=5000B", r#"burst="5000B": expected a multiple of 4 KiB"#),
        ("bursts,request=100000", r#"request="100000": expected at most 65536 blocks"#),
        ("bursts,range=lots", r#"range="lots": expected a size"#),
        ("bursts,range=1KiB", r#"range="1KiB": expected a size of at least one 4 KiB block"#),
        ("bursts,gap=-1", r#"gap="-1": expected milliseconds"#),
        ("bursts,idle=inf", r#"idle="inf": expected milliseconds"#),
        ("bursts,scale=0", r#"scale="0": expected a number > 0"#),
        ("bursts,pages=1.5", r#"pages="1.5": expected a whole number"#),
        ("bursts,request=4096", "request=4096 blocks is larger than burst=2048 blocks"),
        (
            "bursts,range=4MiB",
            "range=4194304 bytes (times scale=1: 1024 blocks) is smaller than one burst=2048",
        ),
        ("bursts,range=64MiB,hot=9", "hot=9 is more than the range holds: 8 regions of burst=2048 blocks"),
        ("bursts,range=128TiB,burst=1", "regions of burst=1 blocks; at most 16777216"),
        ("bursts,span=1GB", "unknown key \"span\"; valid keys: scale, pages, seed, volume, range, burst"),
        ("bursts,trickle=0.1,trickle=0.2", "key \"trickle\" given twice"),
        ("bursts,trickle", "is not key=value"),
        ("wdev,trickle=0.1", "unknown key \"trickle\"; valid keys: scale, pages, seed, volume, span"),
        (
            "wdevv",
            "valid profiles: src, prn, ts, wdev, mds, stg, hm, web, usr, rsrch, proj; generators: bursts",
        ),
    ] {
        let m = msg(spec);
        assert!(m.contains(needle), "{spec}: {m}");
    }
    // The MSR parser points a `bursts` spec at the right entry point.
    let m = SynthSpec::parse("bursts").unwrap_err().to_string();
    assert!(m.contains("constructed generator") && m.contains("open_spec"), "{m}");
    assert!(BurstSpec::parse("wdev").is_err());
}

#[test]
#[should_panic(expected = "request=64 blocks is larger than burst=16 blocks")]
fn bursts_spec_built_by_hand_is_checked() {
    let spec = BurstSpec { burst_blocks: 16, request_blocks: 64, ..BurstSpec::default() };
    BurstTrace::new(&spec);
}
