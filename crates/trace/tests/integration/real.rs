//! The real sample traces kept beside the project (never in it): the folder named by
//! `SHINGLED_SHARED_TRACES`, else `<workspace>/../shared/traces` if that exists. Without
//! either the tests pass after printing why they checked nothing; with the variable set (CI sets
//! it when it found the folder) a missing folder or file is a failure, not a skip.

use shingled_core::BandConfig;
use shingled_trace::{detect_format, open, trace_stats, Format, OpenOptions, TraceStats};
use std::path::{Path, PathBuf};

fn shared(file: &str) -> Option<PathBuf> {
    if let Some(dir) = std::env::var_os("SHINGLED_SHARED_TRACES").map(PathBuf::from) {
        let p = dir.join(file);
        assert!(
            p.is_file(),
            "SHINGLED_SHARED_TRACES={} says the real traces are there, but {} is not",
            dir.display(),
            p.display()
        );
        return Some(p);
    }
    let default = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/traces");
    let Some(dir) = default.is_dir().then_some(default) else {
        eprintln!("skipped: no real sample traces (set SHINGLED_SHARED_TRACES or provide ../shared/traces)");
        return None;
    };
    let p = dir.join(file);
    if p.exists() {
        Some(p)
    } else {
        eprintln!("skipped: {} not found", p.display());
        None
    }
}

fn stats(p: &Path) -> TraceStats {
    let mut r = open(p.to_str().unwrap(), &OpenOptions::default()).unwrap();
    trace_stats(&mut *r, &BandConfig::default()).unwrap()
}

fn pct1(x: f64) -> f64 {
    (x * 10.0).round() / 10.0
}

#[test]
fn msr_hm0_head() {
    let Some(p) = shared("msr-hm_0-head1000.csv") else { return };
    assert_eq!(detect_format(&p).unwrap(), Format::Msr);
    let s = stats(&p);
    assert_eq!((s.requests, s.pages), (1000, 2473));
    // The README's "37.9%" is 936 / 2473 = 37.849%, rounded twice (37.85 → 37.9).
    assert_eq!(s.write_pages, 936);
    assert!((s.write_pct_pages - 37.9).abs() < 0.06, "{}", s.write_pct_pages);
    assert_eq!(s.volumes.keys().copied().collect::<Vec<_>>(), vec![0]);
}

#[test]
fn cloudphysics_vscsi_binary_and_csv() {
    let (Some(bin), Some(csv)) =
        (shared("cloudphysics-libcachesim-sample.vscsi"), shared("cloudphysics-libcachesim-sample.csv"))
    else {
        return;
    };
    assert_eq!(detect_format(&bin).unwrap(), Format::Vscsi);
    assert_eq!(detect_format(&csv).unwrap(), Format::VscsiCsv);
    let b = stats(&bin);
    assert_eq!((b.requests, b.skipped), (113_872, 0), "every record is a READ/WRITE");
    assert_eq!(b.pages, 1_141_869);
    assert_eq!(pct1(b.write_pct_pages), 57.5);
    // README: 0.855 GB distinct written, span 33.6 GB, two hours.
    assert_eq!((b.written_distinct_bytes as f64 / 1e6).round(), 855.0);
    assert_eq!((b.max_end as f64 / 1e8).round(), 336.0);
    assert_eq!(b.duration_ns / 60_000_000_000, 120);
    let c = stats(&csv);
    assert_eq!(
        (c.requests, c.skipped, c.pages, c.write_pages),
        (b.requests, b.skipped, b.pages, b.write_pages)
    );
    assert_eq!((c.written_distinct_bytes, c.max_end), (b.written_distinct_bytes, b.max_end));
    // Same requests in the same order; the CSV's times are whole seconds.
    let mut rb = open(bin.to_str().unwrap(), &OpenOptions::default()).unwrap();
    let mut rc = open(csv.to_str().unwrap(), &OpenOptions::default()).unwrap();
    while let Some(x) = rb.next_request().unwrap() {
        let y = rc.next_request().unwrap().unwrap();
        assert_eq!((x.op, x.offset, x.len), (y.op, y.offset, y.len));
        assert_eq!(x.time_ns / 1_000_000_000, y.time_ns / 1_000_000_000);
    }
    assert!(rc.next_request().unwrap().is_none());
}

#[test]
fn mqsim_samples() {
    for (file, n) in [("mqsim-tpcc-small.trace", 6_999), ("mqsim-wsrch-small.trace", 24_783)] {
        let Some(p) = shared(file) else { continue };
        assert_eq!(detect_format(&p).unwrap(), Format::Mqsim, "{file}");
        let s = stats(&p);
        assert_eq!((s.requests, s.skipped), (n, 0), "{file}");
        if file.contains("wsrch") {
            assert!(s.write_pct_requests < 1.0, "WebSearch is almost read-only: {}", s.write_pct_requests);
        }
    }
}
