//! One replay: a pass over the trace to size and check it (nothing is written before it ends),
//! then every request issued to the target — closed loop (each request when the previous one
//! ended, or `queue_depth` of them in flight) or open loop (at the trace's timestamps ×
//! `time_scale`) — and its wall-clock latency recorded; beside it, optionally, the same
//! requests' time on a drive model.

use crate::clock::{Clock, RealClock};
use crate::error::{ReplayError, Result};
use crate::model::{Model, ModelReport};
use crate::stats::{OpStats, Recorder};
use crate::target::{holds_data, open_target, AlignedBuf, Target};
use rustc_hash::FxHashMap;
use serde::{Deserialize, Serialize};
use shingled_blockcache::pattern::{describe, fill};
use shingled_core::{Nanos, Op};
use shingled_sim::TraceSpec;
use shingled_stl::BLOCK;
use shingled_trace::Request;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::Duration;

/// When requests are issued.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Loop {
    /// Each request when one in flight ends (the papers' total I/O time at queue depth 1).
    Closed,
    /// At the trace's timestamps (relative to its first request) × `time_scale`; a request's
    /// latency counts from that time, so time spent waiting for the target is in it.
    Open,
}

/// How to replay.
#[derive(Clone, Debug)]
pub struct ReplayOptions {
    /// The trace (a file in any supported format, or `synth:…`), with its limit and filters.
    pub trace: TraceSpec,
    /// Drop the trace's reads (the papers' write-only mode).
    pub write_only: bool,
    /// Closed or open loop.
    pub loop_: Loop,
    /// Open loop: trace time is multiplied by this (0.5 issues twice as fast).
    pub time_scale: f64,
    /// Requests in flight at most (a file or block device; an in-process device serves one).
    pub queue_depth: u32,
    /// Requests issued first and not measured.
    pub warmup: u64,
    /// Bypass the page cache (O_DIRECT) on a file or block device.
    pub direct: bool,
    /// Fold offsets beyond the target's end back into it (modulo its size) instead of refusing.
    pub fold: bool,
    /// Allow writing over data the replay did not write (a file system, a `shingled` format,
    /// anything non-zero in the first MiB): it is destroyed.
    pub force: bool,
    /// Write blocks that name themselves and a version, and check every read of a block this
    /// replay wrote (queue depth 1).
    pub verify: bool,
    /// Also time the same requests on this drive profile's model (`shingled drives`).
    pub model_drive: Option<String>,
    /// Keep each latency histogram's CDF in the report.
    pub cdf: bool,
}

impl Default for ReplayOptions {
    fn default() -> Self {
        ReplayOptions {
            trace: TraceSpec::default(),
            write_only: false,
            loop_: Loop::Closed,
            time_scale: 1.0,
            queue_depth: 1,
            warmup: 0,
            direct: true,
            fold: false,
            force: false,
            verify: false,
            model_drive: None,
            cdf: false,
        }
    }
}

/// What a replay measured.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ReplayReport {
    /// The trace as given.
    pub trace: String,
    /// The target's path.
    pub target: String,
    /// What the target is: "file", "block device", "block cache (in process)", ….
    pub target_kind: String,
    /// Its size.
    pub target_bytes: u64,
    /// Whether requests bypassed the page cache.
    pub direct: bool,
    /// `closed` or `open`.
    #[serde(rename = "loop")]
    pub loop_: Loop,
    /// Open loop's time scale.
    pub time_scale: f64,
    /// Requests in flight at most.
    pub queue_depth: u32,
    /// Whether the trace's reads were dropped.
    pub write_only: bool,
    /// Requests issued and measured (after the warm-up).
    pub requests: u64,
    /// Requests issued first and not measured.
    pub warmup_requests: u64,
    /// Requests whose offset was folded into the target (with `fold`).
    pub folded_requests: u64,
    /// Requests of no block (length 0), not issued.
    pub empty_requests: u64,
    /// Reads checked against the last version this replay wrote (with `verify`).
    pub verified_reads: u64,
    /// Wall-clock time of the measured requests, first issue to last completion, seconds.
    pub wall_s: f64,
    /// The final flush, seconds (not in `wall_s`).
    pub flush_s: f64,
    /// Measured requests per second of `wall_s`.
    pub iops: f64,
    /// Measured bytes per second of `wall_s`, in MB/s.
    pub mb_s: f64,
    /// Every measured request.
    pub all: OpStats,
    /// Measured reads.
    pub reads: OpStats,
    /// Measured writes.
    pub writes: OpStats,
    /// The same requests on a drive model, when one was named.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<ModelReport>,
}

/// What the pass before the replay found.
struct Scan {
    requests: u64,
    writes: u64,
    empty: u64,
    /// Requests folded into the target.
    folded: u64,
    /// The largest block end (exclusive) of any request, and the first request reaching it
    /// past `capacity` (1-based), if any.
    past_end: Option<(u64, u64, u64)>,
}

fn blocks_of(r: &Request) -> (u64, u64) {
    let range = r.blocks();
    (range.start, range.end - range.start)
}

/// `r` with its first block folded into `cap` blocks (modulo), its length clipped at the end;
/// `None` when it needs no fold.
fn fold(r: &Request, cap: u64) -> Option<Request> {
    let (first, blocks) = blocks_of(r);
    if blocks == 0 || first + blocks <= cap {
        return None;
    }
    let at = first % cap;
    let blocks = blocks.min(cap - at);
    Some(Request { offset: at * BLOCK as u64, len: (blocks * BLOCK as u64) as u32, ..*r })
}

fn scan(spec: &TraceSpec, write_only: bool, folding: bool, capacity: u64, stop: &AtomicBool) -> Result<Scan> {
    let mut reader = shingled_sim::open_trace(spec)?;
    let limit = spec.limit.unwrap_or(u64::MAX);
    let mut s = Scan { requests: 0, writes: 0, empty: 0, folded: 0, past_end: None };
    let mut n = 0u64;
    while n < limit {
        let Some(r) = reader.next_request().map_err(shingled_sim::SimError::from)? else { break };
        n += 1;
        if n.is_multiple_of(1 << 16) && stop.load(Ordering::Relaxed) {
            return Err(ReplayError::Cancelled(0));
        }
        if write_only && r.op == Op::Read {
            continue;
        }
        let (first, blocks) = blocks_of(&r);
        if blocks == 0 {
            s.empty += 1;
            continue;
        }
        s.requests += 1;
        s.writes += (r.op == Op::Write) as u64;
        if folding {
            s.folded += (first + blocks > capacity) as u64;
        } else if first + blocks > capacity && s.past_end.is_none() {
            s.past_end = Some((n, first, blocks));
        }
    }
    Ok(s)
}

/// Per-block versions this replay wrote (with `verify`).
#[derive(Default)]
struct Versions(FxHashMap<u64, u64>);

/// Replays `opts.trace` against the target at `path`. `progress(done, total)` is called every
/// few requests; `stop` cancels.
pub fn replay(
    path: &Path,
    opts: &ReplayOptions,
    progress: &(dyn Fn(u64, u64) + Sync),
    stop: &AtomicBool,
) -> Result<ReplayReport> {
    check_options(opts)?;
    // Opened for writing only if the trace writes: a first pass over the trace tells, before
    // anything is opened for writing.
    let probe = open_target(path, opts.direct, false);
    let capacity_hint = probe.as_ref().map(|t| t.capacity_blocks()).ok();
    drop(probe);
    let s = scan(&opts.trace, opts.write_only, opts.fold, capacity_hint.unwrap_or(u64::MAX), stop)?;
    let target = open_target(path, opts.direct, s.writes > 0)?;
    if opts.fold && Some(target.capacity_blocks()) != capacity_hint {
        return Err(ReplayError::Target {
            path: path.to_path_buf(),
            reason: "changed size while the trace was read".into(),
        });
    }
    replay_on(&*target, &opts.trace, opts, s, &RealClock::new(), progress, stop)
}

fn check_options(opts: &ReplayOptions) -> Result<()> {
    let bad = |option, reason: String| Err(ReplayError::Option { option, reason });
    if opts.queue_depth == 0 || opts.queue_depth > 1024 {
        return bad("queue_depth", format!("{} is out of range: 1 to 1024", opts.queue_depth));
    }
    if !(opts.time_scale.is_finite() && opts.time_scale >= 0.0) {
        return bad("time_scale", format!("{} must be a finite number >= 0", opts.time_scale));
    }
    if opts.verify && opts.queue_depth > 1 {
        return bad("verify", "checks reads in trace order, so it needs queue depth 1".into());
    }
    Ok(())
}

/// [`replay`] on an open target with a given clock (tests inject theirs). `s` is the trace
/// pass's result for `spec`.
fn replay_on(
    target: &dyn Target,
    spec: &TraceSpec,
    opts: &ReplayOptions,
    s: Scan,
    clock: &dyn Clock,
    progress: &(dyn Fn(u64, u64) + Sync),
    stop: &AtomicBool,
) -> Result<ReplayReport> {
    check_options(opts)?;
    let path = target.path().to_path_buf();
    let cap = target.capacity_blocks();
    if let Some((n, first, blocks)) = s.past_end {
        if first + blocks > cap {
            return Err(ReplayError::Target {
                path,
                reason: format!(
                    "request {n} of the trace reaches block {} (offset {} bytes), past the target's end \
                     ({cap} blocks, {} bytes); replay with --fold to fold offsets into the target, or use \
                     a larger target. Nothing was written",
                    first + blocks - 1,
                    first * BLOCK as u64,
                    cap * BLOCK as u64
                ),
            });
        }
    }
    if s.writes > 0 && !opts.force {
        if let Some(what) = holds_data(target)? {
            return Err(ReplayError::Target {
                path,
                reason: format!(
                    "holds {what}; the trace's {} writes would destroy it. Replay with --force \
                     (force=True in Python) to overwrite it. Nothing was written",
                    s.writes
                ),
            });
        }
    }
    if opts.queue_depth > 1 && !target.concurrent() {
        return Err(ReplayError::Option {
            option: "queue_depth",
            reason: format!(
                "{} serves one request at a time in process; replay it at queue depth 1, or replay the \
                 device it serves (`shingled cache serve` / `stl serve`, then its loop device)",
                target.kind()
            ),
        });
    }
    let mut model = match &opts.model_drive {
        Some(name) => Some(Model::new(name, spec)?),
        None => None,
    };
    let folded = s.folded;
    let total = s.requests;
    let issuer = Issuer {
        target,
        verify: opts.verify,
        versions: Mutex::new(Versions::default()),
        verified: AtomicU64::new(0),
    };
    let mut reader = shingled_sim::open_trace(spec)?;
    let limit = spec.limit.unwrap_or(u64::MAX);
    // The trace's requests in order, numbered as in the trace (1-based), reads dropped in
    // write-only mode, empty requests skipped.
    let mut n = 0u64;
    let mut pull = || -> Result<Option<(u64, Request)>> {
        loop {
            if n >= limit {
                return Ok(None);
            }
            let Some(r) = reader.next_request().map_err(shingled_sim::SimError::from)? else {
                return Ok(None);
            };
            n += 1;
            if opts.write_only && r.op == Op::Read {
                continue;
            }
            if r.blocks().is_empty() {
                continue;
            }
            let r = if opts.fold { fold(&r, cap).unwrap_or(r) } else { r };
            return Ok(Some((n, r)));
        }
    };
    let scale = opts.time_scale;
    let mut measured = Recorder::default();
    let mut issued = 0u64;
    let mut t0_trace: Option<u64> = None;
    let mut wall_start: Option<Duration> = None;
    let mut wall_end = Duration::ZERO;
    if opts.queue_depth == 1 {
        let mut buf = AlignedBuf::default();
        let mut origin = clock.now();
        while let Some((num, r)) = pull()? {
            if issued.is_multiple_of(4096) {
                if stop.load(Ordering::Relaxed) {
                    return Err(ReplayError::Cancelled(issued));
                }
                progress(issued, total);
            }
            let warm = issued < opts.warmup;
            let t_trace = *t0_trace.get_or_insert(r.time_ns);
            let due = match opts.loop_ {
                Loop::Closed => None,
                Loop::Open => {
                    let at = origin
                        + Duration::from_nanos(((r.time_ns.saturating_sub(t_trace)) as f64 * scale) as u64);
                    clock.sleep_until(at);
                    Some(at)
                }
            };
            let start = clock.now();
            if !warm && wall_start.is_none() {
                wall_start = Some(due.unwrap_or(start).min(start));
            }
            issuer.issue(num, &r, &mut buf)?;
            let end = clock.now();
            let from = due.unwrap_or(start);
            let (first, blocks) = blocks_of(&r);
            if let Some(m) = model.as_mut() {
                let arrival = Nanos(from.saturating_sub(origin).as_nanos() as u64);
                m.issue(r.op, first, blocks, arrival, opts.loop_ == Loop::Open, warm);
            }
            if !warm {
                measured.record(r.op, blocks, Nanos(end.saturating_sub(from).as_nanos() as u64));
                wall_end = end;
            }
            issued += 1;
            if warm && issued == opts.warmup && opts.loop_ == Loop::Closed {
                origin = clock.now();
            }
        }
    } else {
        let (rec, start, end, count) =
            run_queue(&issuer, &mut pull, opts, clock, progress, total, stop, &mut model)?;
        measured = rec;
        wall_start = start;
        wall_end = end;
        issued = count;
    }
    progress(issued, total);
    let flush_start = clock.now();
    target.flush().map_err(|reason| ReplayError::Io {
        path: path.clone(),
        request: 0,
        op: "flush",
        block: 0,
        blocks: 0,
        reason,
    })?;
    let flush_s = clock.now().saturating_sub(flush_start).as_secs_f64();
    let wall_s = wall_start.map_or(0.0, |s| wall_end.saturating_sub(s).as_secs_f64());
    let [all, reads, writes] = measured.stats(opts.cdf);
    let per_s = |x: f64| if wall_s > 0.0 { x / wall_s } else { 0.0 };
    Ok(ReplayReport {
        trace: opts.trace.path.clone(),
        target: path.display().to_string(),
        target_kind: target.kind(),
        target_bytes: cap * BLOCK as u64,
        direct: target.direct(),
        loop_: opts.loop_,
        time_scale: scale,
        queue_depth: opts.queue_depth,
        write_only: opts.write_only,
        requests: all.requests,
        warmup_requests: issued - all.requests,
        folded_requests: folded,
        empty_requests: s.empty,
        verified_reads: issuer.verified.load(Ordering::Relaxed),
        wall_s,
        flush_s,
        iops: per_s(all.requests as f64),
        mb_s: per_s(all.bytes as f64) / 1e6,
        all,
        reads,
        writes,
        model: model.map(|m| m.report(wall_s, opts.cdf)),
    })
}

/// Issues requests to the target, with the data and checks `verify` asks for.
struct Issuer<'a> {
    target: &'a dyn Target,
    verify: bool,
    versions: Mutex<Versions>,
    verified: AtomicU64,
}

impl Issuer<'_> {
    /// Issues request `num` (1-based) `r` with `buf` as its data buffer (the caller times it).
    fn issue(&self, num: u64, r: &Request, buf: &mut AlignedBuf) -> Result<()> {
        let (first, blocks) = blocks_of(r);
        // A request folded to the end of the target may reach past it: clipped to the end.
        let blocks = blocks.min(self.target.capacity_blocks().saturating_sub(first));
        let len = blocks as usize * BLOCK;
        let resized = buf.len() < len;
        buf.ensure(len);
        let io_err = |op, reason| ReplayError::Io {
            path: self.target.path().to_path_buf(),
            request: num,
            op,
            block: first,
            blocks,
            reason,
        };
        match r.op {
            Op::Write => {
                if self.verify {
                    let mut v = self.versions.lock().expect("not poisoned");
                    let data = buf.bytes();
                    for i in 0..blocks {
                        let e = v.0.entry(first + i).or_insert(0);
                        *e += 1;
                        fill(first + i, *e, &mut data[i as usize * BLOCK..(i as usize + 1) * BLOCK]);
                    }
                } else if resized {
                    // Any bytes will do; blocks naming themselves (version 0) cost nothing per request.
                    let data = buf.bytes();
                    for (i, b) in data.chunks_exact_mut(BLOCK).enumerate() {
                        fill(i as u64, 0, b);
                    }
                }
                self.target.write(first, buf.bytes()).map_err(|e| io_err("write", e))
            }
            Op::Read => {
                self.target.read(first, buf.bytes()).map_err(|e| io_err("read", e))?;
                if self.verify {
                    let v = self.versions.lock().expect("not poisoned");
                    let data = buf.bytes();
                    let mut want = vec![0u8; BLOCK];
                    let mut checked = false;
                    for i in 0..blocks {
                        let Some(&ver) = v.0.get(&(first + i)) else { continue };
                        checked = true;
                        fill(first + i, ver, &mut want);
                        let got = &data[i as usize * BLOCK..(i as usize + 1) * BLOCK];
                        if got != want.as_slice() {
                            return Err(ReplayError::Mismatch {
                                path: self.target.path().to_path_buf(),
                                request: num,
                                block: first + i,
                                got: describe(got),
                                expected: format!("version {ver} of block {}", first + i),
                            });
                        }
                    }
                    self.verified.fetch_add(checked as u64, Ordering::Relaxed);
                }
                Ok(())
            }
        }
    }
}

type Pulled = (Recorder, Option<Duration>, Duration, u64);

/// Queue depth above 1: `queue_depth` threads take the requests in trace order (closed loop: as
/// soon as one is free; open loop: not before its time) and record their latencies.
#[allow(clippy::too_many_arguments)]
fn run_queue(
    issuer: &Issuer<'_>,
    pull: &mut (dyn FnMut() -> Result<Option<(u64, Request)>> + Send),
    opts: &ReplayOptions,
    clock: &dyn Clock,
    progress: &(dyn Fn(u64, u64) + Sync),
    total: u64,
    stop: &AtomicBool,
    model: &mut Option<Model>,
) -> Result<Pulled> {
    struct Shared<'p> {
        pull: &'p mut (dyn FnMut() -> Result<Option<(u64, Request)>> + Send),
        issued: u64,
        t0_trace: Option<u64>,
        failed: Option<ReplayError>,
        model: &'p mut Option<Model>,
    }
    let origin = clock.now();
    let shared = Mutex::new(Shared { pull, issued: 0, t0_trace: None, failed: None, model });
    let results: Vec<(Recorder, Option<Duration>, Duration)> = std::thread::scope(|sc| {
        let handles: Vec<_> = (0..opts.queue_depth)
            .map(|_| {
                sc.spawn(|| {
                    let mut rec = Recorder::default();
                    let mut buf = AlignedBuf::default();
                    let (mut first_start, mut last_end) = (None::<Duration>, Duration::ZERO);
                    loop {
                        let (num, r, warm, due) = {
                            let mut s = shared.lock().expect("not poisoned");
                            if s.failed.is_some() || stop.load(Ordering::Relaxed) {
                                break;
                            }
                            let next = match (s.pull)() {
                                Ok(Some(x)) => x,
                                Ok(None) => break,
                                Err(e) => {
                                    s.failed = Some(e);
                                    break;
                                }
                            };
                            let (num, r) = next;
                            let t0 = *s.t0_trace.get_or_insert(r.time_ns);
                            let warm = s.issued < opts.warmup;
                            if s.issued.is_multiple_of(4096) {
                                progress(s.issued, total);
                            }
                            s.issued += 1;
                            let due = (opts.loop_ == Loop::Open).then(|| {
                                origin
                                    + Duration::from_nanos(
                                        (r.time_ns.saturating_sub(t0) as f64 * opts.time_scale) as u64,
                                    )
                            });
                            if let Some(m) = s.model.as_mut() {
                                let (first, blocks) = blocks_of(&r);
                                let arrival = due.map_or(Nanos::ZERO, |d| {
                                    Nanos(d.saturating_sub(origin).as_nanos() as u64)
                                });
                                m.issue(r.op, first, blocks, arrival, opts.loop_ == Loop::Open, warm);
                            }
                            (num, r, warm, due)
                        };
                        if let Some(at) = due {
                            clock.sleep_until(at);
                        }
                        let start = clock.now();
                        if let Err(e) = issuer.issue(num, &r, &mut buf) {
                            shared.lock().expect("not poisoned").failed.get_or_insert(e);
                            break;
                        }
                        let end = clock.now();
                        if !warm {
                            let from = due.unwrap_or(start);
                            first_start = Some(first_start.map_or(from, |f: Duration| f.min(from)));
                            last_end = last_end.max(end);
                            rec.record(
                                r.op,
                                blocks_of(&r).1,
                                Nanos(end.saturating_sub(from).as_nanos() as u64),
                            );
                        }
                    }
                    (rec, first_start, last_end)
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().expect("a replay thread panicked")).collect()
    });
    let s = shared.into_inner().expect("not poisoned");
    if let Some(e) = s.failed {
        return Err(e);
    }
    if stop.load(Ordering::Relaxed) {
        return Err(ReplayError::Cancelled(s.issued));
    }
    let mut rec = Recorder::default();
    let (mut start, mut end) = (None::<Duration>, Duration::ZERO);
    for (r, s0, e) in results {
        rec.merge(&r);
        if let Some(s0) = s0 {
            start = Some(start.map_or(s0, |x| x.min(s0)));
        }
        end = end.max(e);
    }
    Ok((rec, start, end, s.issued))
}

/// [`replay`] on a target opened by the caller (a device of its own, a counting target in
/// tests) with a clock of its own (tests inject one whose sleeps advance it).
pub fn replay_target(
    target: &dyn Target,
    opts: &ReplayOptions,
    clock: &dyn Clock,
    progress: &(dyn Fn(u64, u64) + Sync),
    stop: &AtomicBool,
) -> Result<ReplayReport> {
    check_options(opts)?;
    let s = scan(&opts.trace, opts.write_only, opts.fold, target.capacity_blocks(), stop)?;
    replay_on(target, &opts.trace, opts, s, clock, progress, stop)
}
