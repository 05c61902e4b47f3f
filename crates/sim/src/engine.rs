//! The replay engine: requests → SSD cache (policy) → drive, on a virtual clock, closed loop
//! (each request when the previous one ends: the PORE/SAC "total I/O time") or open loop (each
//! request at its trace time, waiting while a device is busy: response times with queueing, as
//! SMaRT §5.5.1 measures them).

use crate::controller::{Controller, Io, Mode};
use crate::error::ParseError;
use crate::histogram::Histogram;
use crate::metrics::Counters;
use serde::{Deserialize, Serialize};
use shingled_cache::Cache;
use shingled_core::{BlockNo, Nanos, Op};
use shingled_device::{Drive, Ssd};
use shingled_trace::Request;

/// Blocks of one request that look-ahead prefetches ([`Engine::prefetch_far`],
/// [`Engine::prefetch_near`]): a larger request's first blocks (the rest are found by the replay
/// itself; fetching hundreds of lines for one request would evict what the others fetched).
const LOOK_AHEAD_BLOCKS: u64 = 32;

/// The blocks of `req` look-ahead prefetches: its first [`LOOK_AHEAD_BLOCKS`].
#[inline]
fn first_blocks(req: &Request) -> std::ops::Range<BlockNo> {
    let r = req.blocks();
    r.start..r.end.min(r.start + LOOK_AHEAD_BLOCKS)
}

/// How the blocks of a trace request reach the drive.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum IoUnit {
    /// Contiguous blocks going to the drive within one request are merged into one drive
    /// command (what a block layer does with a multi-block request).
    #[default]
    Request,
    /// Every 4 KiB block is its own drive command, as the PORE and SAC prototypes replay their
    /// traces (one 4 KiB page per line, each a separate `pread`/`pwrite`).
    Block,
}

impl std::str::FromStr for IoUnit {
    type Err = ParseError;
    fn from_str(s: &str) -> Result<Self, ParseError> {
        match s {
            "request" => Ok(IoUnit::Request),
            "block" => Ok(IoUnit::Block),
            _ => Err(ParseError::IoUnit(s.into())),
        }
    }
}

impl IoUnit {
    /// The unit's name.
    pub fn name(self) -> &'static str {
        match self {
            IoUnit::Request => "request",
            IoUnit::Block => "block",
        }
    }
}

/// When requests are issued.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Replay {
    /// Each request starts when the previous one has finished; its latency is the sum of the
    /// I/Os it causes (the papers' "total I/O time"). Trace timestamps are ignored, and the
    /// drive never sees idle time.
    #[default]
    Closed,
    /// Each request arrives at its trace timestamp (relative to the first request's, times the
    /// time scale). Every device (the SSD, the drive) serves its I/Os in arrival order, one at
    /// a time; an I/O waits while its device is busy. A request's I/Os run one after another,
    /// and its response time is completion − arrival, queueing included (SMaRT §5.5.1). Every
    /// gap in which the drive has nothing to do reaches it as [`Drive::idle`], so idle-time
    /// cleaning and background GC happen.
    Open,
}

impl Replay {
    /// All replay modes with their names.
    pub const ALL: [(Replay, &'static str); 2] = [(Replay::Closed, "closed"), (Replay::Open, "open")];

    /// The mode's name.
    pub fn name(self) -> &'static str {
        match self {
            Replay::Closed => "closed",
            Replay::Open => "open",
        }
    }
}

impl std::str::FromStr for Replay {
    type Err = ParseError;
    fn from_str(s: &str) -> Result<Self, ParseError> {
        Replay::ALL.iter().find(|(_, n)| *n == s).map(|(m, _)| *m).ok_or_else(|| ParseError::Replay(s.into()))
    }
}

/// A pending run of contiguous drive blocks of one kind, issued as one drive I/O.
#[derive(Clone, Copy)]
struct Run {
    write: bool,
    start: BlockNo,
    len: u32,
}

/// One replay: the cache (absent for the no-cache baselines), the SSD model, the drive model,
/// the counters and the virtual clock.
///
/// Closed loop (default): each request starts when the previous one ends, and its latency is
/// the sum of the I/Os it causes, issued one after another (the papers' "total I/O time").
/// Open loop ([`Engine::with_replay`]): see [`Replay::Open`]. Either way contiguous blocks that
/// go to the drive within one request are merged into one drive I/O.
pub struct Engine {
    ctl: Controller,
    t: Timing,
}

/// What executes the controller's decisions in the engine: the device models and the clocks.
struct Timing {
    /// The SSD model: always [`Ssd`], held as itself so that its per-block cost (a constant)
    /// is inlined into every cache I/O.
    ssd: Ssd,
    drive: Box<dyn Drive>,
    /// [`Drive::wants_write_hints`], asked once.
    write_hints: bool,
    counters: Counters,
    latency: Histogram,
    /// Closed loop: the end of the last request. Open loop: the latest completion so far.
    clock: Nanos,
    /// When the current request started: closed loop, the end of the previous one; open loop,
    /// its arrival.
    start: Nanos,
    /// Time spent so far in the current request (waits included).
    elapsed: Nanos,
    /// Open loop: arrivals are `(trace time − first trace time) × time_scale`.
    open: Option<OpenLoop>,
    /// The run gathered so far; none while its `len` is 0.
    pending: Run,
    /// Largest run issued as one drive command: 1 for [`IoUnit::Block`].
    max_run: u32,
}

impl std::fmt::Debug for Engine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Engine")
            .field("mode", &self.ctl.mode())
            .field("cache", &self.ctl.cache())
            .field("clock", &self.t.clock)
            .finish()
    }
}

impl Engine {
    /// A replay with `cache` (or none, for the SMR-only / CMR-only baselines).
    pub fn new(mode: Mode, cache: Option<Cache>, ssd: Ssd, drive: Box<dyn Drive>) -> Self {
        Engine {
            ctl: Controller::new(mode, cache),
            t: Timing {
                ssd,
                write_hints: drive.wants_write_hints(),
                drive,
                counters: Counters::default(),
                latency: Histogram::default(),
                clock: Nanos::ZERO,
                start: Nanos::ZERO,
                elapsed: Nanos::ZERO,
                open: None,
                pending: Run { write: false, start: 0, len: 0 },
                max_run: u32::MAX,
            },
        }
    }

    /// Sets how request blocks are issued to the drive (default [`IoUnit::Request`]).
    pub fn with_io_unit(mut self, unit: IoUnit) -> Self {
        self.t.max_run = match unit {
            IoUnit::Request => u32::MAX,
            IoUnit::Block => 1,
        };
        self
    }

    /// Sets when requests are issued (default [`Replay::Closed`]). `time_scale` multiplies the
    /// gaps between trace timestamps in open loop (0.5: arrivals twice as dense); it must be
    /// finite and positive.
    pub fn with_replay(mut self, replay: Replay, time_scale: f64) -> Self {
        self.t.open = match replay {
            Replay::Closed => None,
            Replay::Open => Some(OpenLoop {
                time_scale,
                first_trace_time: None,
                last_arrival: Nanos::ZERO,
                ssd_free: Nanos::ZERO,
                drive_free: Nanos::ZERO,
            }),
        };
        self
    }

    /// The cache, if any.
    pub fn cache(&self) -> Option<&Cache> {
        self.ctl.cache()
    }

    /// Counters so far, with the drive's internal statistics filled in.
    pub fn counters(&self) -> Counters {
        let mut c = self.t.counters.clone();
        c.drive = self.t.drive.stats();
        c
    }

    /// The drive's persistent buffer now, `(valid blocks, slots)`; `None` without one.
    pub fn pb_fill(&self) -> Option<(u64, u64)> {
        self.t.drive.pb_fill()
    }

    /// The per-request latency histogram so far.
    pub fn latency(&self) -> &Histogram {
        &self.t.latency
    }

    /// The virtual clock: the end of the last request (open loop: the latest completion).
    pub fn clock(&self) -> Nanos {
        self.t.clock
    }

    /// Whether the replay should look requests up ahead ([`Engine::prefetch_far`],
    /// [`Engine::prefetch_near`]): with a cache whose structures outgrow the core's caches
    /// ([`Cache::looks_ahead_at_requests`]).
    pub fn looks_ahead_at_requests(&self) -> bool {
        self.ctl.cache().is_some_and(|c| c.looks_ahead_at_requests())
    }

    /// Look-ahead's first stage, for a request a few places ahead of the one being replayed:
    /// prefetches the index lines (and the policy's ghost lines) its blocks' lookups will read.
    /// A hint and a hash per block, no wait; changes nothing.
    #[inline]
    pub fn prefetch_far(&self, req: &Request) {
        if let Some(c) = self.ctl.cache() {
            c.prefetch_lookups(first_blocks(req));
        }
    }

    /// Look-ahead's second stage, for a request closer to its replay, whose index lines
    /// [`Engine::prefetch_far`] fetched: looks its blocks up and prefetches what a hit will
    /// touch (the slot's meta, the policy's state for it), so that these misses too overlap
    /// with the replay of the requests before it. Lookups only; changes nothing.
    #[inline]
    pub fn prefetch_near(&self, req: &Request) {
        if let Some(c) = self.ctl.cache() {
            c.prefetch_hits(first_blocks(req));
        }
    }

    /// Gives an offline policy the trace's future ([`Controller::with_future`]).
    pub fn with_future(mut self, future: Box<dyn crate::controller::Foreknowledge>) -> Self {
        let ctl = std::mem::replace(&mut self.ctl, Controller::new(Mode::ReadWrite, None));
        self.ctl = ctl.with_future(future);
        self
    }

    /// Replays one request.
    #[inline]
    pub fn process(&mut self, req: &Request) {
        let write = req.op == Op::Write;
        let t = &mut self.t;
        // Open loop: the arrival, from the trace time (never before the previous arrival: a
        // trace whose clock steps back keeps its order).
        let arrival = t.open.as_mut().map(|o| {
            let first = *o.first_trace_time.get_or_insert(req.time_ns);
            let at = Nanos((req.time_ns.saturating_sub(first) as f64 * o.time_scale) as u64);
            o.last_arrival = o.last_arrival.max(at);
            o.last_arrival
        });
        if self.ctl.skips(write) {
            t.counters.skipped_requests += 1;
            return;
        }
        let blocks = req.blocks();
        let n = blocks.end - blocks.start;
        t.counters.requests += 1;
        if write {
            t.counters.write_requests += 1;
            t.counters.blocks_written += n;
        } else {
            t.counters.read_requests += 1;
            t.counters.blocks_read += n;
        }
        t.start = arrival.unwrap_or(t.clock);
        if t.counters.requests == 1 {
            t.counters.first_arrival = t.start;
        }
        t.elapsed = Nanos::ZERO;
        for b in blocks {
            self.ctl.block(write, b, t);
        }
        t.flush_run();
        t.latency.record(t.elapsed);
        t.clock = t.clock.max(t.start + t.elapsed);
        t.counters.last_completion = t.clock;
    }
}

impl Io for Timing {
    #[inline]
    fn ssd_read(&mut self, b: BlockNo) {
        self.ssd_io(false, b)
    }
    #[inline]
    fn ssd_write(&mut self, b: BlockNo) {
        self.ssd_io(true, b)
    }
    #[inline]
    fn drive_read(&mut self, b: BlockNo) {
        self.drive_io(false, b)
    }
    #[inline]
    fn drive_write(&mut self, b: BlockNo) {
        self.drive_io(true, b)
    }
    fn barrier(&mut self) {
        self.flush_run()
    }
    fn read_hit(&mut self) {
        self.counters.read_hits += 1;
    }
    fn write_hit(&mut self) {
        self.counters.write_hits += 1;
    }
    #[inline]
    fn next_write_back(&mut self, b: BlockNo) {
        self.drive.prefetch_write(b);
    }
    #[inline]
    fn wants_write_hints(&self) -> bool {
        self.write_hints
    }
    fn evicted(&mut self, dirty: bool) {
        if dirty {
            self.counters.dirty_evictions += 1;
        } else {
            self.counters.clean_evictions += 1;
        }
    }
}

impl Timing {
    #[inline]
    fn ssd_io(&mut self, write: bool, b: BlockNo) {
        let mut now = self.start + self.elapsed;
        if let Some(o) = &mut self.open {
            // FCFS: the I/O starts when the SSD is free.
            let begin = now.max(o.ssd_free);
            self.counters.ssd_queue_time += begin - now;
            now = begin;
        }
        let t = if write { self.ssd.write(now, b, 1) } else { self.ssd.read(now, b, 1) };
        if let Some(o) = &mut self.open {
            o.ssd_free = now + t;
        }
        if write {
            self.counters.ssd_blocks_written += 1;
            self.counters.ssd_write_time += t;
        } else {
            self.counters.ssd_blocks_read += 1;
            self.counters.ssd_read_time += t;
        }
        self.elapsed = now + t - self.start;
    }

    /// Queues one block for the drive, merging it with the pending run when contiguous.
    #[inline]
    fn drive_io(&mut self, write: bool, b: BlockNo) {
        let r = &mut self.pending;
        if r.len != 0 {
            if r.write == write && r.start + r.len as u64 == b && r.len < self.max_run {
                r.len += 1;
                return;
            }
            self.flush_run();
        }
        self.pending = Run { write, start: b, len: 1 };
    }

    /// Issues the pending run, if any. Most calls find none (a barrier around a write-back, the
    /// end of a request served by the cache): that check is inlined, the issue is not.
    #[inline]
    fn flush_run(&mut self) {
        if self.pending.len != 0 {
            self.issue();
        }
    }

    /// Issues the pending run (its fields read one by one, as they were written: a copy of the
    /// whole run would wait for the stores that just wrote them).
    #[inline]
    fn issue(&mut self) {
        let (write, start, len) = (self.pending.write, self.pending.start, self.pending.len);
        self.pending.len = 0;
        let mut now = self.start + self.elapsed;
        if let Some(o) = &mut self.open {
            // FCFS: the I/O starts when the drive is free; a gap before it is idle time the
            // drive may use (cleaning, GC, destaging).
            let begin = now.max(o.drive_free);
            self.counters.drive_queue_time += begin - now;
            if begin > o.drive_free {
                self.drive.idle(o.drive_free, begin);
            }
            now = begin;
        }
        let t = if write { self.drive.write(now, start, len) } else { self.drive.read(now, start, len) };
        if write {
            self.counters.drive_blocks_written += len as u64;
            self.counters.drive_write_time += t;
        } else {
            self.counters.drive_blocks_read += len as u64;
            self.counters.drive_read_time += t;
        }
        if let Some(o) = &mut self.open {
            o.drive_free = now + t;
        }
        self.elapsed = now + t - self.start;
    }
}

/// Open-loop state: the arrival clock and when each device is next free.
#[derive(Clone, Copy, Debug)]
struct OpenLoop {
    time_scale: f64,
    first_trace_time: Option<u64>,
    last_arrival: Nanos,
    ssd_free: Nanos,
    drive_free: Nanos,
}

impl Engine {
    /// Trace requests processed so far (excluding skipped ones).
    pub fn counters_requests(&self) -> u64 {
        self.t.counters.requests
    }
}
