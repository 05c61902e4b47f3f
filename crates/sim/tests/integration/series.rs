//! Metrics over time: windows of a hand-checked replay, seconds of trace time, and the errors.

use shingled_sim::{Interval, SimConfig, SimError, Window};

/// A run of `trace` (written to a file named `name`) in `hand_checked`'s set-up: LRU in
/// write-only mode, 3 blocks, above a DM-SMR drive with a 4-block PB (append-only, immediate
/// free) and bands of 4 blocks.
fn run(name: &str, trace: &str, interval: &str) -> Result<shingled_sim::RunReport, SimError> {
    simulate(&config(&tempfile::tempdir().unwrap(), name, trace, interval))
}

fn simulate(cfg: &SimConfig) -> Result<shingled_sim::RunReport, SimError> {
    shingled_sim::simulate(cfg)
}

/// The configuration of [`run`], its trace written into `dir`.
fn config(dir: &tempfile::TempDir, name: &str, trace: &str, interval: &str) -> SimConfig {
    let path = dir.path().join(name);
    std::fs::write(&path, trace).unwrap();
    let mut cfg = SimConfig::from_toml(
        "mode = \"write-only\"\nwarmup = \"none\"\n[cache]\nsize = \"3blocks\"\npolicy = \"lru\"\n\
         [drive]\nmodel = \"dm-smr\"\ncapacity = \"1GiB\"\npb_size = \"4blocks\"\n\
         pb_flavour = \"append-only\"\npb_free = \"immediate\"\n[drive.bands]\nkind = \"fixed\"\nsize = \"16KiB\"\n",
    )
    .unwrap();
    cfg.trace.path = path.to_string_lossy().into_owned();
    cfg.interval = Some(interval.parse().unwrap());
    cfg
}

/// The writes of `hand_checked::lru_write_only_above_tiny_smr`, in the SAC artifact's text
/// format (`1 0 <block>`: a write of one block; no timestamps).
const TWELVE_WRITES: &str =
    "1 0 0\n1 0 1\n1 0 4\n1 0 0\n1 0 8\n1 0 12\n1 0 1\n1 0 5\n1 0 9\n1 0 4\n1 0 13\n1 0 2\n";

/// Windows of 4 requests over `hand_checked`'s table:
///
/// ```text
/// window  requests           write hits  evicted (to the PB)  RMWs  PB at the end (of 4 slots)
/// 0       w0 w1 w4 w0        1 (w0)      -                    0     empty          0
/// 1       w8 w12 w1 w5       0           1 4 0 8              0     [1 4 0 8]      1
/// 2       w9 w4 w13 w2       0           12 1 5 9             3     [12 1 5 9]     1
/// ```
/// Window 2's cleanings rewrite 3 bands of 16 KiB and merge 2 + 1 + 1 PB blocks: WA 3.0.
/// Cumulative hit ratios: 1/4, 1/8, 1/12.
#[test]
fn windows_of_four_requests_match_the_hand_checked_replay() {
    let dir = tempfile::tempdir().unwrap();
    let r = simulate(&config(&dir, "twelve.sac", TWELVE_WRITES, "4")).unwrap();
    let s = r.series.as_ref().expect("a series when an interval is set");
    assert_eq!(s.len(), 3);
    let col = |f: fn(&Window) -> u64| s.iter().map(f).collect::<Vec<_>>();
    assert_eq!(col(|w| w.index), [0, 1, 2]);
    assert_eq!(col(|w| w.first_request), [1, 5, 9]);
    assert_eq!(col(|w| w.last_request), [4, 8, 12]);
    assert_eq!(col(|w| w.requests), [4, 4, 4]);
    assert_eq!(col(|w| w.write_hits), [1, 0, 0]);
    assert_eq!(col(|w| w.rmws), [0, 0, 3]);
    let ratios = |f: fn(&Window) -> Option<f64>| s.iter().map(f).collect::<Vec<_>>();
    assert_eq!(ratios(|w| w.pb_fill), [Some(0.0), Some(1.0), Some(1.0)]);
    assert_eq!(ratios(|w| w.hit_ratio), [Some(0.25), Some(0.0), Some(0.0)]);
    assert_eq!(ratios(|w| w.read_hit_ratio), [None, None, None], "write-only: no reads");
    assert_eq!(ratios(|w| w.cumulative_hit_ratio), [Some(0.25), Some(0.125), Some(1.0 / 12.0)]);
    assert_eq!(ratios(|w| w.write_amplification), [None, None, Some(3.0)]);
    assert_eq!(ratios(|w| w.first_time_s), [None, None, None], "sac has no timestamps");
    // The windows add up to the run.
    let t = &r.total.counters;
    assert_eq!(col(|w| w.rmws).iter().sum::<u64>(), t.drive.rmws);
    let time: f64 = s.iter().map(|w| w.time_s).sum();
    assert!((time - r.total.total_time_s).abs() < 1e-9, "{time} vs {}", r.total.total_time_s);
    // Without an interval there is no series, and the JSON has no field for it.
    let mut plain = r.config.clone();
    plain.interval = None;
    let p = simulate(&plain).unwrap();
    assert!(p.series.is_none());
    assert!(serde_json::to_value(&p).unwrap().get("series").is_none());
    assert_eq!(p.total, r.total, "recording windows changes no count");
}

#[test]
fn a_last_window_holds_what_is_left_and_one_window_holds_a_short_run() {
    let r = run("twelve.sac", TWELVE_WRITES, "5r").unwrap();
    let s = r.series.unwrap();
    assert_eq!(
        s.iter().map(|w| (w.first_request, w.last_request)).collect::<Vec<_>>(),
        [(1, 5), (6, 10), (11, 12)]
    );
    let r = run("twelve.sac", TWELVE_WRITES, "1000").unwrap();
    assert_eq!(r.series.unwrap().len(), 1);
}

/// MSR timestamps (100 ns ticks) at 0, 0.5, 1.2, 1.3 and 3.5 s: with 1 s windows, requests
/// fall in windows 0, 0, 1, 1 and 3; no request arrives in [2 s, 3 s), so window 2 has no row.
#[test]
fn seconds_of_trace_time_cut_windows_by_timestamp() {
    let t0 = 128_166_372_000_000_000u64;
    let line = |s: f64, b: u64| format!("{},h,0,Write,{},4096,0\n", t0 + (s * 1e7) as u64, b * 4096);
    let trace: String =
        [(0.0, 0), (0.5, 1), (1.2, 4), (1.3, 0), (3.5, 8)].iter().map(|&(s, b)| line(s, b)).collect();
    let r = run("timed.csv", &trace, "1s").unwrap();
    let s = r.series.unwrap();
    assert_eq!(s.iter().map(|w| (w.index, w.requests)).collect::<Vec<_>>(), [(0, 2), (1, 2), (3, 1)]);
    let times = s.iter().map(|w| (w.first_time_s.unwrap(), w.last_time_s.unwrap())).collect::<Vec<_>>();
    for ((a, b), (x, y)) in times.iter().zip([(0.0, 0.5), (1.2, 1.3), (3.5, 3.5)]) {
        assert!((a - x).abs() < 1e-6 && (b - y).abs() < 1e-6, "{times:?}");
    }
    assert_eq!(s.iter().map(|w| w.write_hits).collect::<Vec<_>>(), [0, 1, 0]);
    // A request interval on a timed trace reports the times too.
    let r = run("timed.csv", &trace, "2").unwrap();
    assert_eq!(r.series.unwrap()[1].first_time_s.map(|x| (x * 10.0).round()), Some(12.0));
}

#[test]
fn seconds_on_a_trace_without_timestamps_is_refused_naming_the_trace() {
    let e = run("twelve.sac", TWELVE_WRITES, "60s").unwrap_err().to_string();
    assert!(e.contains("interval") && e.contains("twelve.sac") && e.contains("no timestamps"), "{e}");
}

#[test]
fn an_interval_is_also_accepted_as_a_value() {
    let cfg = SimConfig { interval: Some(Interval::Requests(3)), ..Default::default() };
    assert_eq!(serde_json::to_value(&cfg).unwrap()["interval"], "3");
}
