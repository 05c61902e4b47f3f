//! Metrics over time: one run's counters cut into windows of an [`Interval`] (trace requests or
//! seconds of trace time), one row per window, so that warm-up, phases and cleaning bursts show.

use crate::config::{Interval, SimConfig};
use crate::engine::Engine;
use crate::metrics::Counters;
use crate::SimError;
use serde::{Deserialize, Serialize};
use shingled_trace::{Request, TraceStats};

/// At most this many windows per run (one row of about 200 bytes each): an interval that would
/// cut a run into more is refused.
pub const MAX_WINDOWS: u64 = 1_000_000;

/// One window of a run's metrics over time. Counts are those of the window alone (they add up
/// to the run's totals over all windows); ratios are defined as in [`crate::Metrics`].
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Window {
    /// Which window: with `Interval::Requests(n)`, requests `index·n + 1 ..= (index+1)·n`;
    /// with `Interval::Seconds(s)`, trace time `[index·s, (index+1)·s)` after the first request
    /// (a span in which no request arrives has no window: its index is skipped).
    pub index: u64,
    /// The window's first trace request, numbered from 1 in the order read (requests the mode
    /// skips included).
    pub first_request: u64,
    /// The window's last trace request.
    pub last_request: u64,
    /// Trace time of the first request, seconds after the trace's first request (`None`
    /// without timestamps).
    pub first_time_s: Option<f64>,
    /// Trace time of the last request, likewise.
    pub last_time_s: Option<f64>,
    /// Requests processed (those the mode skips not counted).
    pub requests: u64,
    /// Block reads requested by the host.
    pub blocks_read: u64,
    /// Block writes requested by the host.
    pub blocks_written: u64,
    /// Block reads served by the cache.
    pub read_hits: u64,
    /// Block writes that found their block cached.
    pub write_hits: u64,
    /// Read hits / block reads in the window.
    pub read_hit_ratio: Option<f64>,
    /// Write hits / block writes in the window.
    pub write_hit_ratio: Option<f64>,
    /// All hits / all block accesses in the window.
    pub hit_ratio: Option<f64>,
    /// All hits / all block accesses from the start of the run to the window's end.
    pub cumulative_hit_ratio: Option<f64>,
    /// WA of the window's cleanings (band bytes written / bytes cleaned out of the PB).
    pub write_amplification: Option<f64>,
    /// Device WA of the window (media bytes written / application bytes written).
    pub device_write_amplification: Option<f64>,
    /// Band cleanings (RMWs) in the window.
    pub rmws: u64,
    /// Blocks whose latest copy is in the persistent buffer at the window's end, as a fraction
    /// of its slots (`None` for drives without one).
    pub pb_fill: Option<f64>,
    /// Modelled foreground I/O time of the window in seconds (as `Metrics::total_time_s`).
    pub time_s: f64,
}

fn ratio(a: u64, b: u64) -> Option<f64> {
    (b > 0).then(|| a as f64 / b as f64)
}

/// Cuts a replay into windows: [`Recorder::before`] is given each request before it is
/// replayed, [`Recorder::finish`] closes the last window.
pub(crate) struct Recorder {
    interval: Interval,
    /// `Interval::Seconds` in nanoseconds (at least 1).
    window_ns: u64,
    timed: bool,
    /// Trace requests seen so far.
    read: u64,
    /// The trace's first timestamp.
    t0: Option<u64>,
    /// Whether a window is open (it holds at least one request).
    open: bool,
    index: u64,
    first_request: u64,
    first_time: u64,
    last_time: u64,
    /// The counters when the open window began.
    start: Counters,
    windows: Vec<Window>,
}

impl Recorder {
    /// The recorder `cfg.interval` asks for (`None` without one). `format` is the reader's
    /// format name; `stats`, when the trace was measured, refuses too many windows up front.
    pub(crate) fn new(
        cfg: &SimConfig,
        stats: Option<&TraceStats>,
        format: &str,
    ) -> Result<Option<Recorder>, SimError> {
        let Some(interval) = cfg.interval else { return Ok(None) };
        let timed = shingled_trace::has_timestamps(format, cfg.trace.params.as_deref());
        let window_ns = match interval {
            Interval::Seconds(s) => {
                if !timed {
                    return Err(SimError::Config {
                        field: "interval",
                        reason: format!(
                            "{interval}: the trace {} ({format}) has no timestamps (its requests are numbered); \
                             give the interval in requests (e.g. 10000)",
                            cfg.trace.path
                        ),
                    });
                }
                ((s * 1e9).round() as u64).max(1)
            }
            Interval::Requests(_) => 0,
        };
        let too_many = |windows: u64| SimError::Config {
            field: "interval",
            reason: format!(
                "{interval} cuts the run into {windows} windows, more than the {MAX_WINDOWS} a run keeps; \
                 give a longer interval"
            ),
        };
        if let Some(st) = stats {
            let windows = match interval {
                Interval::Requests(n) => st.requests.div_ceil(n),
                Interval::Seconds(_) => st.requests.min(st.duration_ns / window_ns + 1),
            };
            if windows > MAX_WINDOWS {
                return Err(too_many(windows));
            }
        }
        Ok(Some(Recorder {
            interval,
            window_ns,
            timed,
            read: 0,
            t0: None,
            open: false,
            index: 0,
            first_request: 0,
            first_time: 0,
            last_time: 0,
            start: Counters::default(),
            windows: Vec::new(),
        }))
    }

    /// Called with each trace request before the engine replays it: a request that belongs to
    /// a later window than the open one closes it first. A timestamp earlier than the open
    /// window's (a trace not in time order) keeps the request in the open window.
    #[inline]
    pub(crate) fn before(&mut self, engine: &Engine, req: &Request) -> Result<(), SimError> {
        let t0 = *self.t0.get_or_insert(req.time_ns);
        let slot = match self.interval {
            Interval::Requests(n) => self.read / n,
            Interval::Seconds(_) => req.time_ns.saturating_sub(t0) / self.window_ns,
        };
        if self.open && slot > self.index {
            self.close(engine)?;
        }
        if !self.open {
            self.open = true;
            self.index = slot;
            self.first_request = self.read + 1;
            self.first_time = req.time_ns;
        }
        self.read += 1;
        self.last_time = req.time_ns;
        Ok(())
    }

    fn close(&mut self, engine: &Engine) -> Result<(), SimError> {
        if self.windows.len() as u64 >= MAX_WINDOWS {
            return Err(SimError::Config {
                field: "interval",
                reason: format!(
                    "{} cuts the run into more than the {MAX_WINDOWS} windows a run keeps; give a longer interval",
                    self.interval
                ),
            });
        }
        let now = engine.counters();
        let c = now.since(&self.start);
        let t0 = self.t0.unwrap_or(0);
        let secs = |t: u64| self.timed.then(|| t.saturating_sub(t0) as f64 / 1e9);
        self.windows.push(Window {
            index: self.index,
            first_request: self.first_request,
            last_request: self.read,
            first_time_s: secs(self.first_time),
            last_time_s: secs(self.last_time),
            requests: c.requests,
            blocks_read: c.blocks_read,
            blocks_written: c.blocks_written,
            read_hits: c.read_hits,
            write_hits: c.write_hits,
            read_hit_ratio: ratio(c.read_hits, c.blocks_read),
            write_hit_ratio: ratio(c.write_hits, c.blocks_written),
            hit_ratio: ratio(c.read_hits + c.write_hits, c.blocks_read + c.blocks_written),
            cumulative_hit_ratio: ratio(now.read_hits + now.write_hits, now.blocks_read + now.blocks_written),
            write_amplification: c.drive.write_amplification(),
            device_write_amplification: c
                .drive
                .device_write_amplification(c.blocks_written * shingled_core::BLOCK_SIZE),
            rmws: c.drive.rmws,
            pb_fill: engine.pb_fill().and_then(|(valid, slots)| ratio(valid, slots)),
            time_s: c.total_time().as_secs_f64(),
        });
        self.start = now;
        self.open = false;
        Ok(())
    }

    /// Closes the open window (if any request came) and returns the windows.
    pub(crate) fn finish(mut self, engine: &Engine) -> Result<Vec<Window>, SimError> {
        if self.open {
            self.close(engine)?;
        }
        Ok(self.windows)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sample::InMemory;
    use proptest::prelude::*;
    use shingled_core::Op;
    use std::sync::Arc;

    fn config(interval: Interval, mode: crate::Mode, policy: &str) -> SimConfig {
        let mut cfg = SimConfig::from_toml(&format!(
            "warmup = \"none\"\n[cache]\nsize = \"16blocks\"\npolicy = \"{policy}\"\n\
             [drive]\nmodel = \"dm-smr\"\ncapacity = \"1GiB\"\npb_size = \"8blocks\"\n\
             [drive.bands]\nkind = \"fixed\"\nsize = \"32KiB\"\n"
        ))
        .unwrap();
        cfg.mode = mode;
        cfg.interval = Some(interval);
        cfg
    }

    #[test]
    fn an_interval_giving_too_many_windows_is_refused_before_the_run() {
        let stats =
            TraceStats { requests: 2 * MAX_WINDOWS + 1, duration_ns: 10_000_000_000, ..Default::default() };
        let cfg = config(Interval::Requests(2), crate::Mode::ReadWrite, "lru");
        let e = Recorder::new(&cfg, Some(&stats), "msr").err().unwrap().to_string();
        assert!(e.contains("interval") && e.contains("1000001 windows"), "{e}");
        assert!(Recorder::new(&config(Interval::Requests(3), cfg.mode, "lru"), Some(&stats), "msr").is_ok());
        // 10 s in 1 µs windows is 10^7 windows, but there are only 2 000 001 requests to fill them.
        let e = Recorder::new(&config(Interval::Seconds(1e-6), cfg.mode, "lru"), Some(&stats), "msr");
        assert!(e.err().unwrap().to_string().contains("2000001 windows"));
        assert!(Recorder::new(&config(Interval::Seconds(2e-5), cfg.mode, "lru"), Some(&stats), "msr").is_ok());
    }

    fn arb_trace() -> impl Strategy<Value = Vec<Request>> {
        proptest::collection::vec((any::<bool>(), 0u64..96, 1u32..4, 0u64..3_000_000), 1..200).prop_map(|v| {
            let mut t = 1_000u64;
            v.into_iter()
                .map(|(w, b, n, gap)| {
                    t += gap;
                    Request {
                        time_ns: t,
                        volume: 0,
                        op: if w { Op::Write } else { Op::Read },
                        offset: b * 4096,
                        len: n * 4096,
                    }
                })
                .collect()
        })
    }

    fn arb_interval() -> impl Strategy<Value = Interval> {
        prop_oneof![
            (1u64..40).prop_map(Interval::Requests),
            (1u64..50).prop_map(|ms| Interval::Seconds(ms as f64 / 1e3))
        ]
    }

    fn arb_mode() -> impl Strategy<Value = crate::Mode> {
        use crate::Mode::*;
        prop_oneof![Just(ReadWrite), Just(WriteOnly), Just(ReadOnly), Just(WriteCache)]
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

        /// The windows tile the trace in order, and their counts add up to the run's totals.
        #[test]
        fn windows_add_up_to_the_run(
            trace in arb_trace(),
            interval in arb_interval(),
            mode in arb_mode(),
            policy in prop_oneof![Just("lru"), Just("pore"), Just("sac")],
        ) {
            let cfg = config(interval, mode, policy);
            let n = trace.len() as u64;
            let reader = Box::new(InMemory::new(Arc::new(trace), "synth"));
            let r = crate::run::run_reader_with(&cfg, &TraceStats::default(), reader, &mut |_| {}, None).unwrap();
            let s = r.series.unwrap();
            let t = &r.total.counters;
            let sum = |f: fn(&Window) -> u64| s.iter().map(f).sum::<u64>();
            prop_assert_eq!(sum(|w| w.requests), t.requests);
            prop_assert_eq!(sum(|w| w.blocks_read), t.blocks_read);
            prop_assert_eq!(sum(|w| w.blocks_written), t.blocks_written);
            prop_assert_eq!(sum(|w| w.read_hits), t.read_hits);
            prop_assert_eq!(sum(|w| w.write_hits), t.write_hits);
            prop_assert_eq!(sum(|w| w.rmws), t.drive.rmws);
            prop_assert_eq!(sum(|w| w.last_request - w.first_request + 1), n);
            let time: f64 = s.iter().map(|w| w.time_s).sum();
            prop_assert!((time - r.total.total_time_s).abs() <= 1e-9 * (1.0 + time), "{} vs {}", time, r.total.total_time_s);
            prop_assert_eq!(s.first().map(|w| w.first_request), Some(1));
            prop_assert_eq!(s.last().map(|w| w.last_request), Some(n));
            prop_assert_eq!(s.last().unwrap().cumulative_hit_ratio, r.total.hit_ratio);
            for p in s.windows(2) {
                prop_assert!(p[1].index > p[0].index);
                prop_assert_eq!(p[1].first_request, p[0].last_request + 1);
                if let Interval::Requests(k) = interval {
                    prop_assert_eq!(p[1].index, p[0].index + 1);
                    prop_assert_eq!(p[0].last_request - p[0].first_request + 1, k);
                }
            }
            for w in &s {
                prop_assert!(w.pb_fill.is_some_and(|f| (0.0..=1.0).contains(&f)));
                if let (Interval::Seconds(x), Some(a), Some(b)) = (interval, w.first_time_s, w.last_time_s) {
                    // Every request of window k arrived in [k·x, (k+1)·x) after the first.
                    let k = w.index as f64;
                    prop_assert!(a >= k * x - 1e-9 && b < (k + 1.0) * x + 1e-9, "{:?}", w);
                }
            }
        }
    }
}
