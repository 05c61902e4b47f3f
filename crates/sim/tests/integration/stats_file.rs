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
