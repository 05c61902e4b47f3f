//! A binary trace's statistics kept beside it: written by the converting pass, equal to a
//! fresh measurement, used only while the trace file and the options are the same.

use shingled_core::{BandConfig, ByteSize};
use shingled_sim::{stats_file, SimConfig, TraceSpec};
use std::sync::atomic::AtomicBool;

fn measure_fresh(spec: &TraceSpec, bands: &BandConfig) -> shingled_trace::TraceStats {
    let mut r = shingled_sim::open_trace(spec).unwrap();
    shingled_trace::trace_stats(&mut *r, bands).unwrap()
}

#[test]
fn convert_keeps_the_stats_measure_would_find() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("t.bin");
    let stop = AtomicBool::new(false);
    let s =
        stats_file::convert_keeping_stats("synth:hm,scale=0.01", &Default::default(), &out, &stop).unwrap();
    assert!(s.requests > 0);
    let path = out.to_string_lossy().into_owned();
    assert!(stats_file::stats_path(&path).is_file(), "convert wrote no statistics file");
    let spec = TraceSpec { path: path.clone(), ..TraceSpec::default() };
    let bands = SimConfig::default().drive.bands_or_default();
    let kept = stats_file::load(&spec, &bands).expect("a current entry");
    assert_eq!(kept, measure_fresh(&spec, &bands), "kept statistics differ from a fresh pass");
    assert_eq!(shingled_sim::measure(&spec, &bands).unwrap(), kept);

    // Another band layout or a limit: not that entry; measure adds one.
    let other = BandConfig::Fixed { size: ByteSize::mib(8) };
    assert!(stats_file::load(&spec, &other).is_none());
    let m = shingled_sim::measure(&spec, &other).unwrap();
    assert_eq!(m, measure_fresh(&spec, &other));
    assert_eq!(stats_file::load(&spec, &other).as_ref(), Some(&m));
    let limited = TraceSpec { limit: Some(100), ..spec.clone() };
    assert!(stats_file::load(&limited, &bands).is_none());
    assert_eq!(shingled_sim::measure(&limited, &bands).unwrap().requests, 100);
    assert!(stats_file::load(&spec, &bands).is_some(), "the first entry is kept beside the new ones");

    // The trace changes (another trace written in its place): the statistics are stale.
    std::thread::sleep(std::time::Duration::from_millis(20));
    stats_file::convert_keeping_stats(
        "synth:wdev,scale=0.01",
        &Default::default(),
        &dir.path().join("u.bin"),
        &stop,
    )
    .unwrap();
    std::fs::rename(dir.path().join("u.bin"), &out).unwrap();
    assert!(stats_file::load(&spec, &bands).is_none(), "stale statistics used");
    assert_eq!(shingled_sim::measure(&spec, &bands).unwrap(), measure_fresh(&spec, &bands));

    // A damaged statistics file is ignored (and replaced by the next measurement).
    std::fs::write(stats_file::stats_path(&path), b"{not json").unwrap();
    assert!(stats_file::load(&spec, &bands).is_none());
    assert_eq!(shingled_sim::measure(&spec, &bands).unwrap(), measure_fresh(&spec, &bands));
    assert!(stats_file::load(&spec, &bands).is_some());
}

#[test]
fn text_traces_and_synthetic_specs_get_no_statistics_file() {
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("t.csv");
    std::fs::write(&csv, "0,h,0,Write,0,4096,0\n10,h,0,Read,8192,4096,0\n").unwrap();
    let spec = TraceSpec { path: csv.to_string_lossy().into_owned(), ..TraceSpec::default() };
    let bands = BandConfig::default();
    shingled_sim::measure(&spec, &bands).unwrap();
    assert!(!stats_file::stats_path(&spec.path).exists());
    let synth = TraceSpec { path: "synth:hm,scale=0.001".into(), ..TraceSpec::default() };
    assert!(!stats_file::save(&synth, &bands, &shingled_sim::measure(&synth, &bands).unwrap()));
}

fn absolute(policy: &str, trace: &str) -> SimConfig {
    let mut cfg = SimConfig::from_toml(&format!(
        "[trace]\npath = \"{trace}\"\n[cache]\npolicy = \"{policy}\"\nsize = \"8MiB\"\n\
         [drive]\nmodel = \"dm-smr\"\npb_size = \"4MiB\"\n"
    ))
    .unwrap();
    cfg.warmup = shingled_sim::Warmup::None;
    cfg
}

#[test]
fn absolute_sizes_read_the_trace_once_with_the_same_counts() {
    for policy in ["lru", "most", "lru-band"] {
        let cfg = absolute(policy, "synth:hm,scale=0.005");
        assert!(!shingled_sim::needs_footprint(&cfg), "{policy}: every size is absolute");
        let stats = shingled_sim::measure(&cfg.trace, &cfg.drive.bands_or_default()).unwrap();
        let two = shingled_sim::run(&cfg, &stats, &mut |_| {}).unwrap();
        let once = shingled_sim::run_once(&cfg, &mut |_| {}, None).unwrap();
        assert_eq!(once.total, two.total, "{policy}");
        assert_eq!((once.sizing.cache_blocks, once.sizing.pb_blocks), (2048, Some(1024)));
        assert_eq!(once.sizing.written_range, None, "a range reported though nothing measured it");
        assert_eq!(two.sizing.written_range.map(|b| b.0 > 0), Some(true));
        // simulate() takes the one-pass path here.
        assert_eq!(shingled_sim::simulate(&cfg).unwrap().sizing.written_range, None);
    }
}

#[test]
fn a_relative_size_or_fitted_costs_need_the_footprint() {
    let mut cfg = absolute("lru", "synth:hm,scale=0.001");
    cfg.cache.as_mut().unwrap().size = "2%".parse().unwrap();
    assert!(shingled_sim::needs_footprint(&cfg));
    assert!(shingled_sim::run_once(&cfg, &mut |_| {}, None).is_err());
    let mut pb = absolute("lru", "synth:hm,scale=0.001");
    pb.drive = SimConfig::from_toml("[drive]\nmodel = \"dm-smr\"\npb_size = \"1/256\"\n").unwrap().drive;
    assert!(shingled_sim::needs_footprint(&pb));
    assert!(shingled_sim::needs_footprint(&absolute("sac", "synth:hm,scale=0.001")), "SAC fits its costs");
    let mut warm = absolute("lru", "synth:hm,scale=0.001");
    warm.warmup = shingled_sim::Warmup::Fraction(0.5);
    assert!(shingled_sim::needs_footprint(&warm));
    // simulate() measures first then, and reports the ranges.
    assert!(shingled_sim::simulate(&pb).unwrap().sizing.written_range.is_some());
}

#[test]
fn one_pass_stops_at_a_request_beyond_the_drive() {
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("far.csv");
    // 9 PB: beyond any default drive.
    std::fs::write(&csv, "0,h,0,Write,0,4096,0\n10,h,0,Write,9000000000000000,4096,0\n").unwrap();
    let cfg = absolute("lru", &csv.to_string_lossy());
    let e = shingled_sim::run_once(&cfg, &mut |_| {}, None).unwrap_err().to_string();
    assert!(e.contains("drive.capacity") && e.contains("9000000000004096"), "{e}");
}

/// An MSR CSV of `n` requests (writes and reads over 64 MiB) plus one malformed line.
fn write_csv(path: &std::path::Path, n: u64) {
    let mut text = String::new();
    let mut x = 12345u64;
    for i in 0..n {
        x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        let block = (x >> 33) % 16384;
        let op = if (x >> 20).is_multiple_of(4) { "Read" } else { "Write" };
        text.push_str(&format!("{},h,0,{op},{},{},0\n", 1000 * i, block * 4096, 4096 * (1 + (x >> 50) % 4)));
        if i == n / 2 {
            text.push_str("not,a,request\n");
        }
    }
    std::fs::write(path, text).unwrap();
}

#[test]
fn a_text_trace_measured_first_is_parsed_once() {
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("t.csv");
    // SAC and MOST+CDC fit their costs on the footprint; LRU here has a relative cache size.
    for policy in ["sac", "most-cdc", "lru"] {
        write_csv(&csv, 20_000);
        let mut cfg = absolute(policy, &csv.to_string_lossy());
        cfg.trace.skip_bad_lines = true;
        if policy == "lru" {
            cfg.cache.as_mut().unwrap().size = "10%".parse().unwrap();
        }
        assert!(shingled_sim::needs_footprint(&cfg), "{policy} needs the footprint");
        // Measured and run the old way: the trace read twice.
        let stats = shingled_sim::measure(&cfg.trace, &cfg.drive.bands_or_default()).unwrap();
        let twice = shingled_sim::run(&cfg, &stats, &mut |_| {}).unwrap();
        let footprint = shingled_sim::footprint_keeping(&cfg, &AtomicBool::new(false)).unwrap().unwrap();
        assert!(footprint.is_kept(), "{policy}: the parsed requests are kept");
        assert_eq!(footprint.stats, stats);
        // The trace is gone: the replay can only read what the measuring pass kept.
        std::fs::remove_file(&csv).unwrap();
        let once = shingled_sim::run_footprint(&cfg, Some(footprint), &mut |_| {}, None).unwrap();
        assert_eq!(once.total, twice.total, "{policy}");
        assert_eq!(once.sizing, twice.sizing, "{policy}");
        assert_eq!((once.skipped_lines, twice.skipped_lines), (1, 1), "{policy}");
        assert_eq!(once.dirty_left, twice.dirty_left, "{policy}");
    }
    // A bin or synthetic trace is cheap to read again: nothing is kept.
    let cfg = absolute("sac", "synth:hm,scale=0.001");
    assert!(!shingled_sim::footprint_keeping(&cfg, &AtomicBool::new(false)).unwrap().unwrap().is_kept());
}
