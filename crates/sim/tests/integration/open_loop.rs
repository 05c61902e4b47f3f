//! Open-loop replay: queueing and idle time worked out by hand on a drive whose every I/O takes
//! 10 ms, and idle-time cleaning of a DM-SMR drive exactly when a gap exceeds its window.

use super::*;
use shingled_core::{BlockNo, Nanos};
use shingled_device::DriveStats;
use shingled_sim::Replay;
use std::sync::Mutex;

const MS: u64 = 1_000_000;

/// Every I/O takes 10 ms from when it is issued; records the idle calls it gets.
struct TenMs {
    idle: Arc<Mutex<Vec<(u64, u64)>>>,
}

impl Drive for TenMs {
    fn read(&mut self, _now: Nanos, _b: BlockNo, _n: u32) -> Nanos {
        Nanos(10 * MS)
    }
    fn write(&mut self, _now: Nanos, _b: BlockNo, _n: u32) -> Nanos {
        Nanos(10 * MS)
    }
    fn stats(&self) -> DriveStats {
        DriveStats::default()
    }
    fn kind(&self) -> &'static str {
        "ten-ms"
    }
    fn idle(&mut self, now: Nanos, until: Nanos) {
        self.idle.lock().unwrap().push((now.0, until.0));
    }
}

fn at(ms: &[(f64, char, u64)]) -> Vec<Request> {
    ms.iter()
        .map(|&(t, op, b)| Request {
            time_ns: 1_000 * MS + (t * MS as f64) as u64, // the first timestamp is not 0
            volume: 0,
            op: if op == 'w' { Op::Write } else { Op::Read },
            offset: b * 4096,
            len: 4096,
        })
        .collect()
}

fn replay(trace: &[Request], replay: Replay, scale: f64) -> (Engine, Vec<(u64, u64)>) {
    let idle = Arc::new(Mutex::new(Vec::new()));
    let drive = Box::new(TenMs { idle: idle.clone() });
    let ssd = SsdConfig::default().build().unwrap();
    let mut e = Engine::new(Mode::ReadWrite, None, ssd, drive).with_replay(replay, scale);
    for r in trace {
        e.process(r);
    }
    let calls = idle.lock().unwrap().clone();
    (e, calls)
}

/// ```text
///  req  arrival  starts  waits  done  response
///  1      0        0      0     10     10
///  2      5       10      5     20     15
///  3      8       20     12     30     22
///  4    100      100      0    110     10     (the drive was idle from 30 to 100)
/// ```
/// Mean 14.25 ms, drive queueing 17 ms, span 110 ms; one idle call, (30, 100).
#[test]
fn arrivals_closer_than_service_times_queue() {
    let trace = at(&[(0.0, 'w', 1), (5.0, 'r', 7), (8.0, 'w', 3), (100.0, 'w', 9)]);
    let (e, idle) = replay(&trace, Replay::Open, 1.0);
    let c = e.counters();
    assert_eq!(c.drive_queue_time, Nanos(17 * MS));
    assert_eq!(c.ssd_queue_time, Nanos::ZERO);
    assert_eq!(c.span(), Nanos(110 * MS));
    assert_eq!(idle, vec![(30 * MS, 100 * MS)]);
    let h = e.latency();
    assert_eq!(h.count(), 4);
    assert_eq!(h.summary().mean_ms, 14.25);
    assert_eq!(h.summary().max_ms, 22.0);
    assert_eq!(e.clock(), Nanos(110 * MS));
    // Twice the load: arrivals 0, 2.5, 4, 50 → responses 10, 17.5, 26, 10.
    let (e, idle) = replay(&trace, Replay::Open, 0.5);
    assert_eq!(e.counters().drive_queue_time, Nanos(23_500_000));
    assert_eq!(e.latency().summary().mean_ms, 15.875);
    assert_eq!(idle, vec![(30 * MS, 50 * MS)]);
    // Closed loop: one after another, no waits, no idle time; the timestamps do not matter.
    let (e, idle) = replay(&trace, Replay::Closed, 1.0);
    assert_eq!(e.latency().summary().mean_ms, 10.0);
    assert_eq!(e.counters().drive_queue_time, Nanos::ZERO);
    assert_eq!(e.counters().span(), Nanos(40 * MS));
    assert!(idle.is_empty());
}

/// A timestamp that steps back arrives with the previous request (never before it).
#[test]
fn a_trace_clock_stepping_back_keeps_the_order() {
    let trace = at(&[(0.0, 'w', 1), (50.0, 'w', 2), (20.0, 'w', 3)]);
    let (e, _) = replay(&trace, Replay::Open, 1.0);
    // 1: 0→10; 2: 50→60; 3 arrives at 50 (not 20), waits 10, done 70: response 20.
    assert_eq!(e.counters().drive_queue_time, Nanos(10 * MS));
    assert_eq!(e.latency().summary().mean_ms, (10.0 + 10.0 + 20.0) / 3.0);
}

/// A DM-SMR drive with a 100 ms idle window starts cleaning its persistent buffer exactly when
/// the drive's idle gap (from its last completion to the next arrival) exceeds the window: one
/// microsecond more cleans, one less does not. In closed loop it never does.
#[test]
fn idle_cleaning_happens_exactly_when_a_gap_exceeds_the_window() {
    let build = || {
        DriveConfig::DmSmr(DmSmrConfig {
            capacity: ByteSize::gib(1),
            pb_size: SizeSpec::Absolute(ByteSize(64 * 4096)),
            bands: BandConfig::Fixed { size: ByteSize(16 * 4096) },
            idle_window_ms: Some(100.0),
            ..DmSmrConfig::default()
        })
        .build(&BuildContext::whole_drive(ByteSize::gib(1)))
        .unwrap()
    };
    let run = |delta_ns: i64, replay: Replay| {
        let ssd = SsdConfig::default().build().unwrap();
        let mut e = Engine::new(Mode::ReadWrite, None, ssd, build()).with_replay(replay, 1.0);
        // Four writes 1 ms apart into the PB; then one more, window ± delta after the drive's
        // last completion.
        let first = at(&(0..4).map(|i| (i as f64, 'w', 100 * i)).collect::<Vec<_>>());
        for r in &first {
            e.process(r);
        }
        let done = e.counters().last_completion.0; // since the first arrival
        let mut last = first[0];
        last.time_ns = (first[0].time_ns as i64 + done as i64 + 100 * MS as i64 + delta_ns) as u64;
        last.offset = 999 * 4096;
        e.process(&last);
        e.counters().drive
    };
    let short = run(-1_000, Replay::Open);
    assert_eq!((short.idle_rmws, short.rmws), (0, 0), "{short:?}");
    let long = run(1_000, Replay::Open);
    assert_eq!((long.idle_rmws, long.rmws), (1, 1), "one RMW starts in the microsecond: {long:?}");
    assert!(long.idle_clean_time > Nanos::ZERO);
    let closed = run(1_000, Replay::Closed);
    assert_eq!(closed.idle_rmws, 0, "{closed:?}");
}
