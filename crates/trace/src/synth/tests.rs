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
