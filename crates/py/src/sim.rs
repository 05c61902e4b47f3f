//! Simulations: one configuration, many, a comparison of schemes, the papers' experiments.
//!
//! Long runs release the GIL. The calling thread waits on a channel of progress events from
//! the simulation threads and takes the GIL back only when an event arrives (every
//! [`shingled_sim::PROGRESS_EVERY`] trace requests per run) or every [`POLL`] at the latest, to
//! run Python's signal handlers and the progress callback. A `KeyboardInterrupt` (or an
//! exception from the callback) sets the runs' cancel flag; the runs stop within
//! `PROGRESS_EVERY` requests and the exception propagates.

use crate::config::{parse_config, to_json};
use crate::errors::{sim_err, ConfigError, ShingledError};
use pyo3::prelude::*;
use shingled_sim::experiments::{self, Experiment, ExperimentOptions, ExperimentReport};
use shingled_sim::{CompareReport, Mode, RunReport, SimConfig, SimError};
use shingled_trace::TraceStats;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc;
use std::sync::Mutex;
use std::time::Duration;

/// Longest wait between two checks of Python signals while simulations run.
const POLL: Duration = Duration::from_millis(200);

/// Runs `work` on another thread with the GIL released, checking for signals (Ctrl-C) every
/// [`POLL`]: on one, sets the flag `work` watches, waits for it to stop (it checks every few
/// thousand requests) and raises the signal's exception (`KeyboardInterrupt`).
pub(crate) fn interruptible<T: Send>(
    py: Python<'_>,
    work: impl FnOnce(&AtomicBool) -> T + Send,
) -> PyResult<T> {
    let stop = AtomicBool::new(false);
    let (tx, rx) = mpsc::channel();
    let rx = Mutex::new(rx);
    std::thread::scope(|s| {
        let stop = &stop;
        s.spawn(move || {
            let _ = tx.send(work(stop));
        });
        let mut signal: Option<PyErr> = None;
        loop {
            match py.detach(|| rx.lock().unwrap().recv_timeout(POLL)) {
                Ok(v) => return signal.map_or(Ok(v), Err),
                Err(mpsc::RecvTimeoutError::Timeout) => {}
                Err(mpsc::RecvTimeoutError::Disconnected) => {
                    return Err(ShingledError::new_err(
                        "internal error: the worker thread stopped without a result",
                    ))
                }
            }
            if signal.is_none() {
                if let Err(e) = py.check_signals() {
                    stop.store(true, Ordering::Relaxed);
                    signal = Some(e);
                }
            }
        }
    })
}

/// [`interruptible`] for a curve: `work` gets a progress sink; the latest
/// [`shingled_sim::curve::CurveProgress`] is handed to `progress(phase, requests, requests_total,
/// runs_done, runs)` on the calling thread at most every [`POLL`] (and once at the end).
pub(crate) fn interruptible_curve<T: Send>(
    py: Python<'_>,
    progress: Option<&Bound<'_, PyAny>>,
    work: impl FnOnce(&AtomicBool, &(dyn Fn(shingled_sim::curve::CurveProgress) + Sync)) -> T + Send,
) -> PyResult<T> {
    use shingled_sim::curve::CurveProgress;
    let latest: Mutex<Option<CurveProgress>> = Mutex::new(None);
    let stop = AtomicBool::new(false);
    let (tx, rx) = mpsc::channel();
    let rx = Mutex::new(rx);
    let tell = |p: &Mutex<Option<CurveProgress>>| -> PyResult<()> {
        let Some(cb) = progress else { return Ok(()) };
        if let Some(p) = p.lock().unwrap().take() {
            cb.call1((p.phase, p.requests, p.requests_total, p.runs_done, p.runs))?;
        }
        Ok(())
    };
    std::thread::scope(|s| {
        let (stop, latest) = (&stop, &latest);
        s.spawn(move || {
            let sink = |p: CurveProgress| *latest.lock().unwrap() = Some(p);
            let _ = tx.send(work(stop, &sink));
        });
        let mut failed: Option<PyErr> = None;
        loop {
            match py.detach(|| rx.lock().unwrap().recv_timeout(POLL)) {
                Ok(v) => {
                    if failed.is_none() {
                        tell(latest)?;
                    }
                    return failed.map_or(Ok(v), Err);
                }
                Err(mpsc::RecvTimeoutError::Timeout) => {}
                Err(mpsc::RecvTimeoutError::Disconnected) => {
                    return Err(ShingledError::new_err(
                        "internal error: the worker thread stopped without a result",
                    ))
                }
            }
            if failed.is_none() {
                // A signal (Ctrl-C) or an exception in the callback stops the work.
                if let Err(e) = py.check_signals().and_then(|_| tell(latest)) {
                    stop.store(true, Ordering::Relaxed);
                    failed = Some(e);
                }
            }
        }
    })
}

/// Whether [`run_many`] measures every trace first (a comparison or an experiment reports the
/// trace's statistics, as the CLI's do) or only when a size depends on it (`simulate`, sweeps:
/// as `shingled sim`).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Measure {
    Always,
    WhenNeeded,
}

/// What the simulation threads tell the waiting Python thread.
enum Event {
    /// The traces are measured: all runs together will read this many trace requests.
    Total(u64),
    /// More trace requests were read (delta).
    Progress(u64),
    /// Run `i` finished.
    Done(usize, Box<Result<RunReport, SimError>>),
    /// A trace could not be measured; nothing runs.
    Failed(SimError),
}

/// Measures each distinct trace once, then runs every configuration, `jobs` at a time, with
/// the GIL released. `progress(total_requests)` and `on_result(index, report_json)` are
/// called on the calling thread. Returns the reports in order and the statistics of each
/// distinct trace in order of first appearance (as `shingled_sim::run_all`).
/// With `Measure::WhenNeeded` a trace whose every run has absolute sizes is not measured first
/// (unless its statistics are kept beside it): those runs read it once, as `shingled sim` does,
/// and the trace is missing from the returned statistics.
fn run_many(
    py: Python<'_>,
    configs: &[SimConfig],
    jobs: usize,
    progress: Option<&Bound<'_, PyAny>>,
    on_result: Option<&Bound<'_, PyAny>>,
    measure: Measure,
) -> PyResult<(Vec<RunReport>, Vec<TraceStats>)> {
    let cancel = AtomicBool::new(false);
    let (tx, rx) = mpsc::channel::<Event>();
    let rx = Mutex::new(rx);
    let stats: Mutex<Vec<TraceStats>> = Mutex::new(Vec::new());
    let mut reports: Vec<Option<RunReport>> = configs.iter().map(|_| None).collect();
    let mut pending: Option<PyErr> = None;
    let jobs = jobs.clamp(1, configs.len().max(1));
    std::thread::scope(|s| {
        let (cancel, stats) = (&cancel, &stats);
        s.spawn(move || {
            // Measure each distinct trace (and band layout) once, as `run_all` does.
            let all_keys: Vec<String> =
                configs.iter().map(|c| to_json(&(&c.trace, c.drive.bands_or_default()))).collect();
            let mut keys: Vec<String> = Vec::new();
            let mut distinct: Vec<Option<TraceStats>> = Vec::new();
            let mut which = Vec::with_capacity(configs.len());
            for (c, k) in configs.iter().zip(&all_keys) {
                let k = k.clone();
                match keys.iter().position(|x| *x == k) {
                    Some(i) => which.push(i),
                    None => {
                        let mut alike =
                            configs.iter().zip(&all_keys).filter(|(_, o)| **o == k).map(|(o, _)| o);
                        let footprint = match measure {
                            Measure::WhenNeeded if alike.all(|o| !shingled_sim::needs_footprint(o)) => {
                                shingled_sim::footprint_for(c, cancel)
                            }
                            _ => shingled_sim::measure_until(&c.trace, &c.drive.bands_or_default(), cancel)
                                .map(Some),
                        };
                        match footprint {
                            Ok(st) => {
                                distinct.push(st);
                                keys.push(k);
                                which.push(distinct.len() - 1);
                            }
                            Err(e) => {
                                let _ = tx.send(Event::Failed(e));
                                return;
                            }
                        }
                    }
                }
                if cancel.load(Ordering::Relaxed) {
                    let _ = tx.send(Event::Failed(SimError::Cancelled { requests: 0 }));
                    return;
                }
            }
            *stats.lock().unwrap() = distinct.iter().flatten().cloned().collect();
            // A trace read once has no known length: it adds nothing to the total.
            let expected: u64 = configs
                .iter()
                .zip(&which)
                .filter_map(|(c, &w)| {
                    distinct[w].as_ref().map(|d| c.trace.limit.map_or(d.requests, |l| l.min(d.requests)))
                })
                .sum();
            let _ = tx.send(Event::Total(expected));
            let next = AtomicUsize::new(0);
            std::thread::scope(|w| {
                for _ in 0..jobs {
                    let tx = tx.clone();
                    let (next, distinct, which) = (&next, &distinct, &which);
                    w.spawn(move || loop {
                        let i = next.fetch_add(1, Ordering::Relaxed);
                        if i >= configs.len() {
                            break;
                        }
                        let mut last = 0u64;
                        let mut progress = |n: u64| {
                            let _ = tx.send(Event::Progress(n - last));
                            last = n;
                        };
                        let r = match &distinct[which[i]] {
                            Some(d) => shingled_sim::run_with(&configs[i], d, &mut progress, Some(cancel)),
                            None => shingled_sim::run_once(&configs[i], &mut progress, Some(cancel)),
                        };
                        let _ = tx.send(Event::Done(i, Box::new(r)));
                    });
                }
            });
        });
        let mut total = 0u64;
        let mut reported = u64::MAX;
        loop {
            let ev = py.detach(|| rx.lock().unwrap().recv_timeout(POLL));
            match ev {
                Ok(Event::Progress(d)) => total += d,
                Ok(Event::Total(n)) => {
                    // A progress object that wants the total (the tqdm bar of `progress="tqdm"`)
                    // has `set_total`; a plain callback gets request counts only.
                    if let (Some(cb), None) = (progress, &pending) {
                        if cb.hasattr("set_total").unwrap_or(false) {
                            if let Err(e) = cb.call_method1("set_total", (n,)) {
                                cancel.store(true, Ordering::Relaxed);
                                pending = Some(e);
                            }
                        }
                    }
                }
                Ok(Event::Done(i, r)) => match *r {
                    Ok(rep) => {
                        if let (Some(cb), None) = (on_result, &pending) {
                            if let Err(e) = cb.call1((i, to_json(&rep))) {
                                cancel.store(true, Ordering::Relaxed);
                                pending = Some(e);
                            }
                        }
                        reports[i] = Some(rep);
                    }
                    Err(e) => {
                        cancel.store(true, Ordering::Relaxed);
                        if pending.is_none() {
                            pending = Some(sim_err(e));
                        }
                    }
                },
                Ok(Event::Failed(e)) => {
                    if pending.is_none() {
                        pending = Some(sim_err(e));
                    }
                }
                Err(mpsc::RecvTimeoutError::Timeout) => {}
                Err(mpsc::RecvTimeoutError::Disconnected) => break,
            }
            if let Err(e) = py.check_signals() {
                cancel.store(true, Ordering::Relaxed);
                pending = Some(e);
            }
            if let (Some(cb), None) = (progress, &pending) {
                if total != reported {
                    reported = total;
                    if let Err(e) = cb.call1((total,)) {
                        cancel.store(true, Ordering::Relaxed);
                        pending = Some(e);
                    }
                }
            }
        }
    });
    if let Some(e) = pending {
        return Err(e);
    }
    let reports = reports.into_iter().map(|r| r.expect("every configuration ran")).collect();
    Ok((reports, stats.into_inner().unwrap()))
}

fn default_jobs() -> usize {
    std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1)
}

/// Runs one configuration (JSON); returns the `RunReport` JSON.
#[pyfunction]
#[pyo3(signature = (config, progress=None))]
pub(crate) fn simulate(py: Python<'_>, config: &str, progress: Option<Bound<'_, PyAny>>) -> PyResult<String> {
    let cfg = parse_config(config)?;
    let (mut runs, _) =
        run_many(py, std::slice::from_ref(&cfg), 1, progress.as_ref(), None, Measure::WhenNeeded)?;
    Ok(to_json(&runs.remove(0)))
}

/// Runs several configurations (JSON each), `jobs` at a time; returns `RunReport` JSONs in
/// order. `on_result(index, json)` is called as each finishes.
#[pyfunction]
#[pyo3(signature = (configs, jobs=None, progress=None, on_result=None))]
pub(crate) fn run_configs(
    py: Python<'_>,
    configs: Vec<String>,
    jobs: Option<usize>,
    progress: Option<Bound<'_, PyAny>>,
    on_result: Option<Bound<'_, PyAny>>,
) -> PyResult<Vec<String>> {
    let cfgs = configs.iter().map(|c| parse_config(c)).collect::<PyResult<Vec<_>>>()?;
    let (runs, _) = run_many(
        py,
        &cfgs,
        jobs.unwrap_or_else(default_jobs),
        progress.as_ref(),
        on_result.as_ref(),
        Measure::WhenNeeded,
    )?;
    Ok(runs.iter().map(to_json).collect())
}

/// Compares the schemes of `config.compare.schemes`; returns the `CompareReport` JSON.
#[pyfunction]
#[pyo3(signature = (config, jobs=None, progress=None))]
pub(crate) fn compare(
    py: Python<'_>,
    config: &str,
    jobs: Option<usize>,
    progress: Option<Bound<'_, PyAny>>,
) -> PyResult<String> {
    let base = parse_config(config)?;
    if base.compare.schemes.is_empty() {
        return Err(ConfigError::new_err("configuration field compare.schemes: names no scheme"));
    }
    let cfgs = base
        .compare
        .schemes
        .iter()
        .map(|s| shingled_sim::scheme_config(&base, s))
        .collect::<Result<Vec<_>, _>>()
        .map_err(sim_err)?;
    let (runs, mut stats) =
        run_many(py, &cfgs, jobs.unwrap_or_else(default_jobs), progress.as_ref(), None, Measure::Always)?;
    let trace = stats.pop().unwrap_or_default();
    Ok(to_json(&CompareReport::new(trace, &base, runs)))
}

/// Names and titles of the papers' experiments.
#[pyfunction]
pub(crate) fn experiments_list() -> Vec<(&'static str, &'static str)> {
    experiments::EXPERIMENTS.to_vec()
}

/// The parts of every run's configuration experiment `name` sets itself (what
/// `shingled experiment NAME` refuses flags for): `cache-size`, `mode`, `replay`, `io-unit`,
/// `drive`, `trace-scaling`, `no-cache`. Empty for an unknown name.
#[pyfunction]
pub(crate) fn experiment_fixed(name: &str) -> Vec<&'static str> {
    use experiments::Fixed;
    let Some(d) = experiments::definition(name) else { return Vec::new() };
    [
        (Fixed::CacheSize, "cache-size"),
        (Fixed::Mode, "mode"),
        (Fixed::Replay, "replay"),
        (Fixed::IoUnit, "io-unit"),
        (Fixed::Drive, "drive"),
        (Fixed::TraceScaling, "trace-scaling"),
        (Fixed::NoCache, "no-cache"),
    ]
    .into_iter()
    .filter(|&(f, _)| d.fixes(f))
    .map(|(_, n)| n)
    .collect()
}

/// Plans and runs experiment `name`; returns the `ExperimentReport` JSON.
#[pyfunction]
#[pyo3(signature = (name, config, traces, mode=None, jobs=None, progress=None, paper_setup=true, curve=None, offline=false))]
#[allow(clippy::too_many_arguments)]
pub(crate) fn experiment(
    py: Python<'_>,
    name: &str,
    config: &str,
    traces: Vec<String>,
    mode: Option<String>,
    jobs: Option<usize>,
    progress: Option<Bound<'_, PyAny>>,
    paper_setup: bool,
    curve: Option<String>,
    offline: bool,
) -> PyResult<String> {
    let base = parse_config(config)?;
    let mode = match mode {
        None => None,
        Some(m) => Some(
            serde_json::from_value::<Mode>(serde_json::Value::String(m.clone()))
                .map_err(|e| ConfigError::new_err(format!("configuration field mode: {m:?}: {e}")))?,
        ),
    };
    let mut plan: Experiment =
        experiments::plan(name, &ExperimentOptions { base, traces, mode, paper_setup }).map_err(sim_err)?;
    if offline {
        experiments::add_offline(&mut plan).map_err(sim_err)?;
    }
    // A curve form's sampling settings: a JSON object of `CurveOptions` fields laid over the plan's.
    let given = match curve.as_deref() {
        None => serde_json::Map::new(),
        Some(c) => match serde_json::from_str::<serde_json::Value>(c) {
            Ok(serde_json::Value::Object(m)) => m,
            _ => {
                return Err(ConfigError::new_err(format!(
                    "experiment {name}: curve options {c:?}: not a JSON object"
                )))
            }
        },
    };
    let jobs = jobs.unwrap_or_else(default_jobs);
    if let Some(opts) = &mut plan.curve {
        let mut v = serde_json::to_value(&*opts).expect("options serialize");
        for (k, x) in given {
            v[k.as_str()] = x;
        }
        *opts = crate::config::from_json(&v.to_string(), &format!("experiment {name}: curve option"))?;
        if let shingled_sim::curve::Rate::Fixed(r) = opts.rate {
            if !(r > 0.0 && r <= 1.0) {
                return Err(ConfigError::new_err(format!("experiment {name}: rate {r}: must be in (0, 1]")));
            }
        }
        let report = interruptible_curve(py, progress.as_ref(), |stop, tell| {
            experiments::run_curve_experiment(plan, jobs, tell, stop)
        })?
        .map_err(sim_err)?;
        return Ok(to_json(&report));
    }
    if !given.is_empty() {
        let curves: Vec<&str> =
            experiments::REGISTRY.iter().filter(|d| d.curve_of.is_some()).map(|d| d.name).collect();
        return Err(ConfigError::new_err(format!(
            "experiment {name}: {} apply to the curve forms of experiments ({}) only",
            given.keys().cloned().collect::<Vec<_>>().join(", "),
            curves.join(", ")
        )));
    }
    let cfgs: Vec<SimConfig> = plan.cells.iter().map(|c| c.config.clone()).collect();
    let (runs, stats) = run_many(py, &cfgs, jobs, progress.as_ref(), None, Measure::Always)?;
    Ok(to_json(&ExperimentReport::new(plan, runs, stats)))
}

/// Computes a curve (`shingled_sim::curve`): `config` is the base `SimConfig` JSON, `options`
/// the `CurveOptions` JSON; returns the `CurveReport` JSON. Runs with the GIL released; Ctrl-C
/// cancels.
/// `progress(phase, requests, requests_total, runs_done, runs)`, if given, hears where the curve
/// stands (`CurveProgress`) on the calling thread.
#[pyfunction]
#[pyo3(signature = (config, options, progress=None))]
pub(crate) fn curve(
    py: Python<'_>,
    config: &str,
    options: &str,
    progress: Option<Bound<'_, PyAny>>,
) -> PyResult<String> {
    let base = parse_config(config)?;
    // errors name the option (`curve option field seed: invalid value: integer `-1`, expected u64`)
    let opts: shingled_sim::CurveOptions = crate::config::from_json(options, "curve option")?;
    let r = interruptible_curve(py, progress.as_ref(), |stop, tell| {
        shingled_sim::curve(&base, &opts, tell, stop)
    })?
    .map_err(sim_err)?;
    Ok(to_json(&r))
}

/// Merges `CurveReport` JSONs of parts of one grid (`CurveReport::merge`).
#[pyfunction]
pub(crate) fn curve_merge(parts: Vec<String>) -> PyResult<String> {
    let parts = parts
        .iter()
        .map(|p| serde_json::from_str(p).map_err(|e| ConfigError::new_err(format!("curve report: {e}"))))
        .collect::<PyResult<Vec<shingled_sim::CurveReport>>>()?;
    shingled_sim::CurveReport::merge(parts)
        .map(|r| to_json(&r))
        .ok_or_else(|| ConfigError::new_err("curve_merge: no part to merge"))
}

/// `k` grid indices spread evenly over `0..n` (the points `validate = k` runs in full).
#[pyfunction]
pub(crate) fn curve_spread(n: usize, k: usize) -> Vec<usize> {
    shingled_sim::curve::spread(n, k)
}
