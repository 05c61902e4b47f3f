//! `shingled replay`'s checks, with hand-worked expectations: every request issued once, in
//! order, with its blocks; open loop at the scaled trace times (an injected clock whose sleeps
//! advance it and whose target takes a fixed time); reads checked against the writes before
//! them; bad targets refused before anything is written.

use shingled_core::Op;
use shingled_replay::{replay, replay_target, Clock, Loop, ReplayError, ReplayOptions, Target};
use shingled_sim::TraceSpec;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::Duration;

const BLOCK: usize = 4096;

/// An MSR CSV trace of `(ms since start, op, byte offset, bytes)`.
fn trace(dir: &Path, reqs: &[(u64, &str, u64, u64)]) -> PathBuf {
    let p = dir.join("t.csv");
    let base = 128_166_372_000_000_000u64; // Windows FILETIME, 100 ns units
    let lines: Vec<String> = reqs
        .iter()
        .map(|(ms, op, off, len)| format!("{},t,0,{op},{off},{len},100", base + ms * 10_000))
        .collect();
    std::fs::write(&p, lines.join("\n") + "\n").unwrap();
    p
}

fn opts(t: &Path) -> ReplayOptions {
    ReplayOptions {
        trace: TraceSpec { path: t.display().to_string(), ..TraceSpec::default() },
        ..Default::default()
    }
}

/// Options for the counting target, which starts zeroed: `force` skips the check of what the
/// target holds, a read of its first blocks that would show in the log.
fn counting_opts(t: &Path) -> ReplayOptions {
    ReplayOptions { force: true, ..opts(t) }
}

/// A clock that moves only when slept on or when the target works.
#[derive(Default)]
struct FakeClock(AtomicU64);

impl Clock for FakeClock {
    fn now(&self) -> Duration {
        Duration::from_nanos(self.0.load(Ordering::SeqCst))
    }
    fn sleep_until(&self, t: Duration) {
        self.0.fetch_max(t.as_nanos() as u64, Ordering::SeqCst);
    }
}

/// An in-memory target that logs every request (op, block, blocks, issue time) and takes
/// `service` of the fake clock for each; `lose` drops writes to that block.
struct Counting<'c> {
    data: Mutex<Vec<u8>>,
    log: Mutex<Vec<(Op, u64, u64, Duration)>>,
    clock: &'c FakeClock,
    service: Duration,
    lose: Option<u64>,
    path: PathBuf,
}

impl<'c> Counting<'c> {
    fn new(blocks: usize, clock: &'c FakeClock, service_us: u64) -> Self {
        Counting {
            data: Mutex::new(vec![0; blocks * BLOCK]),
            log: Mutex::new(Vec::new()),
            clock,
            service: Duration::from_micros(service_us),
            lose: None,
            path: PathBuf::from("counting"),
        }
    }
    fn note(&self, op: Op, block: u64, len: usize) {
        self.log.lock().unwrap().push((op, block, (len / BLOCK) as u64, self.clock.now()));
        self.clock.0.fetch_add(self.service.as_nanos() as u64, Ordering::SeqCst);
    }
    fn log(&self) -> Vec<(Op, u64, u64)> {
        self.log.lock().unwrap().iter().map(|x| (x.0, x.1, x.2)).collect()
    }
}

impl Target for Counting<'_> {
    fn capacity_blocks(&self) -> u64 {
        (self.data.lock().unwrap().len() / BLOCK) as u64
    }
    fn read(&self, block: u64, buf: &mut [u8]) -> Result<(), String> {
        self.note(Op::Read, block, buf.len());
        let d = self.data.lock().unwrap();
        let at = block as usize * BLOCK;
        buf.copy_from_slice(&d[at..at + buf.len()]);
        Ok(())
    }
    fn write(&self, block: u64, data: &[u8]) -> Result<(), String> {
        self.note(Op::Write, block, data.len());
        let mut d = self.data.lock().unwrap();
        for (i, b) in data.chunks_exact(BLOCK).enumerate() {
            if Some(block + i as u64) != self.lose {
                let at = (block as usize + i) * BLOCK;
                d[at..at + BLOCK].copy_from_slice(b);
            }
        }
        Ok(())
    }
    fn flush(&self) -> Result<(), String> {
        Ok(())
    }
    fn concurrent(&self) -> bool {
        false
    }
    fn direct(&self) -> bool {
        false
    }
    fn kind(&self) -> String {
        "counting".into()
    }
    fn path(&self) -> &Path {
        &self.path
    }
}

fn run(
    t: &dyn Target,
    o: &ReplayOptions,
    c: &dyn Clock,
) -> Result<shingled_replay::ReplayReport, ReplayError> {
    replay_target(t, o, c, &|_, _| {}, &AtomicBool::new(false))
}

#[test]
fn every_request_is_issued_once_in_order_as_its_whole_blocks() {
    let dir = tempfile::tempdir().unwrap();
    // Offsets in bytes: 135168 = block 33; 17408+512 lies in block 4; 53248+12288 = blocks
    // 13..16; 8191+2 straddles blocks 1 and 2; a 0-byte request touches nothing.
    let t = trace(
        dir.path(),
        &[
            (0, "Read", 135_168, 4096),
            (1, "Write", 17_408, 512),
            (2, "Write", 53_248, 12_288),
            (3, "Read", 8191, 2),
            (4, "Write", 0, 0),
        ],
    );
    let clock = FakeClock::default();
    let target = Counting::new(64, &clock, 100);
    let r = run(&target, &counting_opts(&t), &clock).unwrap();
    assert_eq!(target.log(), [(Op::Read, 33, 1), (Op::Write, 4, 1), (Op::Write, 13, 3), (Op::Read, 1, 2)]);
    assert_eq!((r.requests, r.empty_requests, r.reads.requests, r.writes.requests), (4, 1, 2, 2));
    assert_eq!((r.reads.bytes, r.writes.bytes), (3 * 4096, 4 * 4096));
    // Closed loop on a target taking 100 µs each: four requests, 400 µs.
    assert!((r.wall_s - 400e-6).abs() < 1e-9, "{}", r.wall_s);
    assert!((r.all.latency.mean_ms - 0.1).abs() < 1e-9);
    assert_eq!(r.loop_, Loop::Closed);
}

#[test]
fn open_loop_issues_at_the_scaled_trace_times_and_counts_the_wait() {
    let dir = tempfile::tempdir().unwrap();
    // Trace times 0, 10, 20, 21 ms at scale 0.5: due at 0, 5, 10, 10.5 ms. The target takes
    // 1 ms: the fourth is due while the third is being served (10-11 ms), so it starts at 11
    // and its latency from its due time is 1.5 ms.
    let t = trace(
        dir.path(),
        &[(0, "Write", 0, 4096), (10, "Write", 4096, 4096), (20, "Read", 0, 4096), (21, "Read", 4096, 4096)],
    );
    let clock = FakeClock::default();
    let target = Counting::new(16, &clock, 1000);
    let o = ReplayOptions { loop_: Loop::Open, time_scale: 0.5, ..counting_opts(&t) };
    let r = run(&target, &o, &clock).unwrap();
    let issued: Vec<u64> = target.log.lock().unwrap().iter().map(|x| x.3.as_micros() as u64).collect();
    assert_eq!(issued, [0, 5000, 10_000, 11_000]);
    assert_eq!(r.all.latency.max_ms, 1.5);
    assert!((r.all.total_latency_s - 4.5e-3).abs() < 1e-9, "{}", r.all.total_latency_s);
    // First due (0) to last completion (12 ms).
    assert!((r.wall_s - 12e-3).abs() < 1e-9);
}

#[test]
fn warm_up_requests_are_issued_but_not_measured() {
    let dir = tempfile::tempdir().unwrap();
    let t = trace(dir.path(), &[(0, "Write", 0, 4096), (1, "Write", 4096, 4096), (2, "Read", 0, 8192)]);
    let clock = FakeClock::default();
    let target = Counting::new(16, &clock, 100);
    let r = run(&target, &ReplayOptions { warmup: 2, ..counting_opts(&t) }, &clock).unwrap();
    assert_eq!(target.log().len(), 3);
    assert_eq!((r.requests, r.warmup_requests, r.writes.requests, r.reads.requests), (1, 2, 0, 1));
}

#[test]
fn verify_checks_every_read_of_a_written_block_and_names_a_lost_write() {
    let dir = tempfile::tempdir().unwrap();
    let t = trace(
        dir.path(),
        &[
            (0, "Write", 0, 8192),
            (1, "Read", 0, 8192),
            (2, "Write", 4096, 4096),
            (3, "Read", 4096, 4096),
            (4, "Read", 40_960, 4096),
        ],
    );
    let clock = FakeClock::default();
    let good = Counting::new(16, &clock, 10);
    let r = run(&good, &ReplayOptions { verify: true, ..counting_opts(&t) }, &clock).unwrap();
    // Block 10 was never written by this replay: its read is issued, not checked.
    assert_eq!(r.verified_reads, 2);
    let mut bad = Counting::new(16, &clock, 10);
    bad.lose = Some(1);
    match run(&bad, &ReplayOptions { verify: true, ..counting_opts(&t) }, &clock) {
        Err(ReplayError::Mismatch { request, block, got, expected, .. }) => {
            // Request 2 reads blocks 0-1; block 1's write was lost: it reads zeros.
            assert_eq!(
                (request, block, got.as_str(), expected.as_str()),
                (2, 1, "zeros", "version 1 of block 1")
            );
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_request_past_the_end_is_refused_before_anything_is_written_or_folded() {
    let dir = tempfile::tempdir().unwrap();
    let t = trace(dir.path(), &[(0, "Write", 0, 4096), (1, "Write", 20 * 4096, 4096)]);
    let clock = FakeClock::default();
    let target = Counting::new(16, &clock, 10);
    let e = run(&target, &counting_opts(&t), &clock).unwrap_err().to_string();
    assert!(e.contains("request 2 of the trace reaches block 20") && e.contains("--fold"), "{e}");
    assert!(target.log().is_empty(), "nothing issued");
    let r = run(&target, &ReplayOptions { fold: true, ..counting_opts(&t) }, &clock).unwrap();
    assert_eq!(target.log(), [(Op::Write, 0, 1), (Op::Write, 4, 1)]);
    assert_eq!(r.folded_requests, 1);
}

#[test]
fn options_that_cannot_work_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let t = trace(dir.path(), &[(0, "Write", 0, 4096)]);
    let clock = FakeClock::default();
    let target = Counting::new(16, &clock, 10);
    for (o, want) in [
        (ReplayOptions { queue_depth: 0, ..counting_opts(&t) }, "queue_depth"),
        (ReplayOptions { queue_depth: 4, verify: true, ..counting_opts(&t) }, "verify"),
        (ReplayOptions { queue_depth: 4, ..counting_opts(&t) }, "one request at a time"),
        (ReplayOptions { time_scale: f64::NAN, ..counting_opts(&t) }, "time_scale"),
    ] {
        let e = run(&target, &o, &clock).unwrap_err().to_string();
        assert!(e.contains(want), "{e}");
    }
    assert!(target.log().is_empty());
}

// --- real files ---------------------------------------------------------------------------

fn no_progress(_: u64, _: u64) {}

fn replay_file(target: &Path, o: &ReplayOptions) -> Result<shingled_replay::ReplayReport, ReplayError> {
    replay(target, o, &no_progress, &AtomicBool::new(false))
}

#[test]
fn a_file_holding_data_is_refused_without_force_and_left_untouched() {
    let dir = tempfile::tempdir().unwrap();
    let t = trace(dir.path(), &[(0, "Write", 0, 4096), (1, "Read", 0, 4096)]);
    let f = dir.path().join("disk.img");
    let mut bytes = vec![0u8; 64 * BLOCK];
    bytes[100..105].copy_from_slice(b"hello");
    std::fs::write(&f, &bytes).unwrap();
    // Buffered: the temporary directory's file system may not take O_DIRECT.
    let o = ReplayOptions { direct: false, verify: true, ..opts(&t) };
    let e = replay_file(&f, &o).unwrap_err().to_string();
    assert!(e.contains("holds data") && e.contains("--force") && e.contains("Nothing was written"), "{e}");
    assert_eq!(std::fs::read(&f).unwrap(), bytes, "untouched");
    let r = replay_file(&f, &ReplayOptions { force: true, ..o.clone() }).unwrap();
    assert_eq!((r.writes.requests, r.verified_reads, r.target_kind.as_str()), (1, 1, "file"));
    // What a replay wrote is its own: the next replay needs no force.
    replay_file(&f, &o).unwrap();
}

#[test]
fn bad_targets_get_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let t = trace(dir.path(), &[(0, "Write", 0, 4096)]);
    let o = ReplayOptions { direct: false, ..opts(&t) };
    let e = replay_file(dir.path(), &o).unwrap_err().to_string();
    assert!(e.contains("is a directory"), "{e}");
    let e = replay_file(&dir.path().join("missing.img"), &o).unwrap_err().to_string();
    assert!(e.contains("does not exist"), "{e}");
    let fifo = dir.path().join("fifo");
    assert!(std::process::Command::new("mkfifo").arg(&fifo).status().unwrap().success());
    let e = replay_file(&fifo, &o).unwrap_err().to_string();
    assert!(e.contains("FIFO"), "{e}");
    let small = dir.path().join("small.img");
    std::fs::write(&small, [0u8; 100]).unwrap();
    let e = replay_file(&small, &o).unwrap_err().to_string();
    assert!(e.contains("less than one 4 KiB block"), "{e}");
}

#[test]
fn queue_depth_four_on_a_file_issues_every_request() {
    let dir = tempfile::tempdir().unwrap();
    let reqs: Vec<(u64, &str, u64, u64)> =
        (0..200).map(|i| (i, if i % 3 == 0 { "Read" } else { "Write" }, (i % 50) * 4096, 4096)).collect();
    let t = trace(dir.path(), &reqs);
    let f = dir.path().join("disk.img");
    std::fs::write(&f, vec![0u8; 64 * BLOCK]).unwrap();
    let r = replay_file(&f, &ReplayOptions { direct: false, queue_depth: 4, ..opts(&t) }).unwrap();
    assert_eq!((r.requests, r.reads.requests, r.writes.requests, r.queue_depth), (200, 67, 133, 4));
}
