//! `shingled._core`: the PyO3 layer under the `shingled` Python package.
//!
//! The layer is thin on purpose: configurations and reports cross the boundary as the same
//! serde JSON the CLI prints (`--output json`), so every metric the CLI reports reaches Python
//! and the Python package (`python/shingled/`) builds plain objects from it.
//!
//! Long runs release the GIL. The calling thread waits on a channel of progress events from
//! the simulation threads and takes the GIL back only when an event arrives (every
//! [`shingled_sim::PROGRESS_EVERY`] trace requests per run) or every [`POLL`] at the latest, to
//! run Python's signal handlers and the progress callback. A `KeyboardInterrupt` (or an
//! exception from the callback) sets the runs' cancel flag; the runs stop within
//! `PROGRESS_EVERY` requests and the exception propagates.

use pyo3::create_exception;
use pyo3::exceptions::PyException;
use pyo3::prelude::*;
use pyo3::types::PyBytes;
use shingled_cache::PolicyConfig;
use shingled_core::BandConfig;
use shingled_sim::experiments::{self, Experiment, ExperimentOptions, ExperimentReport};
use shingled_sim::{CompareReport, Mode, RunReport, SimConfig, SimError, TraceSpec};
use shingled_trace::{TraceReader, TraceStats};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc;
use std::sync::Mutex;
use std::time::Duration;

/// Longest wait between two checks of Python signals while simulations run.
const POLL: Duration = Duration::from_millis(200);

create_exception!(_core, ShingledError, PyException, "Base class of every error shingled raises.");
create_exception!(_core, TraceError, ShingledError, "A trace could not be opened or parsed.");
create_exception!(
    _core,
    ConfigError,
    ShingledError,
    "A configuration is invalid (the message names the field)."
);
create_exception!(_core, DeviceError, ShingledError, "A drive or SSD configuration is invalid.");
create_exception!(_core, PolicyError, ShingledError, "A cache policy name or setting is invalid.");
create_exception!(_core, Cancelled, ShingledError, "A simulation was cancelled.");

/// The Python exception of a simulation error, with the Rust message unchanged.
fn sim_err(e: SimError) -> PyErr {
    let msg = e.to_string();
    match e {
        SimError::Trace(_) => TraceError::new_err(msg),
        SimError::Device(_) => DeviceError::new_err(msg),
        SimError::Policy(_) => PolicyError::new_err(msg),
        SimError::Cancelled { .. } => Cancelled::new_err(msg),
        SimError::Config { .. } => ConfigError::new_err(msg),
        _ => ShingledError::new_err(msg),
    }
}

fn trace_err(e: shingled_trace::TraceError) -> PyErr {
    TraceError::new_err(e.to_string())
}

fn to_json<T: serde::Serialize>(v: &T) -> String {
    serde_json::to_string(v).expect("reports and configurations serialize")
}

fn parse_config(json: &str) -> PyResult<SimConfig> {
    serde_json::from_str(json).map_err(|e| ConfigError::new_err(e.to_string()))
}

/// The default configuration (what `shingled config` prints), as JSON.
#[pyfunction]
fn config_default() -> String {
    to_json(&SimConfig::default())
}

/// Parses CLI TOML configuration text; returns it as JSON.
#[pyfunction]
fn config_from_toml(text: &str) -> PyResult<String> {
    SimConfig::from_toml(text).map(|c| to_json(&c)).map_err(ConfigError::new_err)
}

/// Validates a JSON configuration and returns it normalised (defaults filled in).
#[pyfunction]
fn config_normalize(json: &str) -> PyResult<String> {
    parse_config(json).map(|c| to_json(&c))
}

/// A JSON configuration as the CLI's TOML.
#[pyfunction]
fn config_to_toml(json: &str) -> PyResult<String> {
    parse_config(json).map(|c| c.to_toml())
}

/// The label reports would use for this configuration.
#[pyfunction]
fn config_label(json: &str) -> PyResult<String> {
    parse_config(json).map(|c| c.display_label())
}

/// The configuration of a scheme (`smr-only`, `cmr-only` or a policy) derived from a base.
#[pyfunction]
fn scheme_config(json: &str, scheme: &str) -> PyResult<String> {
    let base = parse_config(json)?;
    shingled_sim::scheme_config(&base, scheme).map(|c| to_json(&c)).map_err(sim_err)
}

/// Policy names known to the registry.
#[pyfunction]
fn policies() -> Vec<&'static str> {
    PolicyConfig::NAMES.to_vec()
}

/// A policy given as `name` or `name:field=value,…`, as its JSON table.
#[pyfunction]
fn parse_policy(spec: &str) -> PyResult<String> {
    spec.parse::<PolicyConfig>().map(|p| to_json(&p)).map_err(PolicyError::new_err)
}

/// Drive profile names.
#[pyfunction]
fn drive_profiles() -> Vec<&'static str> {
    shingled_device::profile_names().to_vec()
}

/// The drive configuration of a named profile, as JSON.
#[pyfunction]
fn drive_profile(name: &str) -> PyResult<String> {
    shingled_device::profile(name).map(|d| to_json(&d)).ok_or_else(|| {
        DeviceError::new_err(format!(
            "unknown drive profile {name:?}; known: {}",
            shingled_device::profile_names().join(", ")
        ))
    })
}

/// What the simulation threads tell the waiting Python thread.
enum Event {
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
fn run_many(
    py: Python<'_>,
    configs: &[SimConfig],
    jobs: usize,
    progress: Option<&Bound<'_, PyAny>>,
    on_result: Option<&Bound<'_, PyAny>>,
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
            let key = |c: &SimConfig| to_json(&(&c.trace, c.drive.bands_or_default()));
            let mut keys: Vec<String> = Vec::new();
            let mut distinct: Vec<TraceStats> = Vec::new();
            let mut which = Vec::with_capacity(configs.len());
            for c in configs {
                let k = key(c);
                match keys.iter().position(|x| *x == k) {
                    Some(i) => which.push(i),
                    None => match shingled_sim::measure(&c.trace, &c.drive.bands_or_default()) {
                        Ok(st) => {
                            distinct.push(st);
                            keys.push(k);
                            which.push(distinct.len() - 1);
                        }
                        Err(e) => {
                            let _ = tx.send(Event::Failed(e));
                            return;
                        }
                    },
                }
                if cancel.load(Ordering::Relaxed) {
                    let _ = tx.send(Event::Failed(SimError::Cancelled { requests: 0 }));
                    return;
                }
            }
            *stats.lock().unwrap() = distinct.clone();
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
                        let r = shingled_sim::run_with(
                            &configs[i],
                            &distinct[which[i]],
                            &mut |n| {
                                let _ = tx.send(Event::Progress(n - last));
                                last = n;
                            },
                            Some(cancel),
                        );
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
fn simulate(py: Python<'_>, config: &str, progress: Option<Bound<'_, PyAny>>) -> PyResult<String> {
    let cfg = parse_config(config)?;
    let (mut runs, _) = run_many(py, std::slice::from_ref(&cfg), 1, progress.as_ref(), None)?;
    Ok(to_json(&runs.remove(0)))
}

/// Runs several configurations (JSON each), `jobs` at a time; returns `RunReport` JSONs in
/// order. `on_result(index, json)` is called as each finishes.
#[pyfunction]
#[pyo3(signature = (configs, jobs=None, progress=None, on_result=None))]
fn run_configs(
    py: Python<'_>,
    configs: Vec<String>,
    jobs: Option<usize>,
    progress: Option<Bound<'_, PyAny>>,
    on_result: Option<Bound<'_, PyAny>>,
) -> PyResult<Vec<String>> {
    let cfgs = configs.iter().map(|c| parse_config(c)).collect::<PyResult<Vec<_>>>()?;
    let (runs, _) =
        run_many(py, &cfgs, jobs.unwrap_or_else(default_jobs), progress.as_ref(), on_result.as_ref())?;
    Ok(runs.iter().map(to_json).collect())
}

/// Compares the schemes of `config.compare.schemes`; returns the `CompareReport` JSON.
#[pyfunction]
#[pyo3(signature = (config, jobs=None, progress=None))]
fn compare(
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
    let (runs, mut stats) = run_many(py, &cfgs, jobs.unwrap_or_else(default_jobs), progress.as_ref(), None)?;
    let trace = stats.pop().unwrap_or_default();
    Ok(to_json(&CompareReport { trace, trace_path: base.trace.path.clone(), runs }))
}

/// Names and titles of the papers' experiments.
#[pyfunction]
fn experiments_list() -> Vec<(&'static str, &'static str)> {
    experiments::EXPERIMENTS.to_vec()
}

/// Plans and runs experiment `name`; returns the `ExperimentReport` JSON.
#[pyfunction]
#[pyo3(signature = (name, config, traces, mode=None, jobs=None, progress=None))]
fn experiment(
    py: Python<'_>,
    name: &str,
    config: &str,
    traces: Vec<String>,
    mode: Option<String>,
    jobs: Option<usize>,
    progress: Option<Bound<'_, PyAny>>,
) -> PyResult<String> {
    let base = parse_config(config)?;
    let mode = match mode {
        None => None,
        Some(m) => Some(
            serde_json::from_value::<Mode>(serde_json::Value::String(m.clone()))
                .map_err(|e| ConfigError::new_err(format!("configuration field mode: {m:?}: {e}")))?,
        ),
    };
    let plan: Experiment =
        experiments::plan(name, &ExperimentOptions { base, traces, mode }).map_err(sim_err)?;
    let cfgs: Vec<SimConfig> = plan.cells.iter().map(|c| c.config.clone()).collect();
    let (runs, stats) = run_many(py, &cfgs, jobs.unwrap_or_else(default_jobs), progress.as_ref(), None)?;
    Ok(to_json(&ExperimentReport { experiment: plan, runs, traces: stats }))
}

/// The footprint of a trace (PORE Table I row) for a `TraceSpec` JSON and optional bands JSON.
#[pyfunction]
#[pyo3(signature = (spec, bands=None))]
fn trace_stats(py: Python<'_>, spec: &str, bands: Option<&str>) -> PyResult<String> {
    let spec: TraceSpec = serde_json::from_str(spec).map_err(|e| ConfigError::new_err(e.to_string()))?;
    let bands: BandConfig = match bands {
        Some(b) => serde_json::from_str(b)
            .map_err(|e| ConfigError::new_err(format!("configuration field bands: {e}")))?,
        None => BandConfig::default(),
    };
    py.detach(|| shingled_sim::measure(&spec, &bands)).map(|s| to_json(&s)).map_err(sim_err)
}

/// Writes trace `input` (path or `synth:` spec) to `out` in the binary format; returns the
/// number of requests written.
#[pyfunction]
fn convert(py: Python<'_>, input: &str, out: std::path::PathBuf) -> PyResult<u64> {
    py.detach(|| {
        let mut r = shingled_trace::open(input, &Default::default())?;
        shingled_trace::convert(&mut r, &out).map(|s| s.requests)
    })
    .map_err(trace_err)
}

/// Builds a mixed trace (`shingled trace mix`); returns the summary as JSON.
#[pyfunction]
fn mix(
    py: Python<'_>,
    inputs: Vec<String>,
    out: std::path::PathBuf,
    copies: u32,
    seed: u64,
) -> PyResult<String> {
    py.detach(|| shingled_trace::mix(&inputs, &Default::default(), copies, seed, &out))
        .map(|s| to_json(&s))
        .map_err(trace_err)
}

/// Bytes per record of [`Reader::read`]: time_ns u64, offset u64, len u32, volume u32,
/// is_write u8 (little-endian, packed).
const RECORD: usize = 25;

/// A streaming trace reader handing out packed records in chunks.
#[pyclass(module = "shingled._core")]
struct Reader {
    inner: Mutex<Box<dyn TraceReader>>,
}

#[pymethods]
impl Reader {
    #[new]
    #[pyo3(signature = (spec))]
    fn new(spec: &str) -> PyResult<Reader> {
        let spec: TraceSpec = serde_json::from_str(spec).map_err(|e| ConfigError::new_err(e.to_string()))?;
        let r = shingled_sim::open_trace(&spec).map_err(sim_err)?;
        Ok(Reader { inner: Mutex::new(r) })
    }

    /// Up to `n` requests as packed records (empty at the end of the trace).
    fn read<'py>(&self, py: Python<'py>, n: usize) -> PyResult<Bound<'py, PyBytes>> {
        let buf = py.detach(|| {
            let mut r = self.inner.lock().unwrap();
            let mut buf = Vec::with_capacity(n.min(1 << 20) * RECORD);
            for _ in 0..n {
                let Some(q) = r.next_request()? else { break };
                buf.extend_from_slice(&q.time_ns.to_le_bytes());
                buf.extend_from_slice(&q.offset.to_le_bytes());
                buf.extend_from_slice(&q.len.to_le_bytes());
                buf.extend_from_slice(&q.volume.to_le_bytes());
                buf.push(q.op.is_write() as u8);
            }
            Ok::<_, shingled_trace::TraceError>(buf)
        });
        Ok(PyBytes::new(py, &buf.map_err(trace_err)?))
    }

    /// Short name of the format being read.
    fn format_name(&self) -> &'static str {
        self.inner.lock().unwrap().format_name()
    }
}

/// The `shingled._core` extension module.
#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add("ShingledError", py.get_type::<ShingledError>())?;
    m.add("TraceError", py.get_type::<TraceError>())?;
    m.add("ConfigError", py.get_type::<ConfigError>())?;
    m.add("DeviceError", py.get_type::<DeviceError>())?;
    m.add("PolicyError", py.get_type::<PolicyError>())?;
    m.add("Cancelled", py.get_type::<Cancelled>())?;
    m.add("PROGRESS_EVERY", shingled_sim::PROGRESS_EVERY)?;
    m.add("RECORD_BYTES", RECORD)?;
    m.add_class::<Reader>()?;
    m.add_function(wrap_pyfunction!(config_default, m)?)?;
    m.add_function(wrap_pyfunction!(config_from_toml, m)?)?;
    m.add_function(wrap_pyfunction!(config_normalize, m)?)?;
    m.add_function(wrap_pyfunction!(config_to_toml, m)?)?;
    m.add_function(wrap_pyfunction!(config_label, m)?)?;
    m.add_function(wrap_pyfunction!(scheme_config, m)?)?;
    m.add_function(wrap_pyfunction!(policies, m)?)?;
    m.add_function(wrap_pyfunction!(parse_policy, m)?)?;
    m.add_function(wrap_pyfunction!(drive_profiles, m)?)?;
    m.add_function(wrap_pyfunction!(drive_profile, m)?)?;
    m.add_function(wrap_pyfunction!(simulate, m)?)?;
    m.add_function(wrap_pyfunction!(run_configs, m)?)?;
    m.add_function(wrap_pyfunction!(compare, m)?)?;
    m.add_function(wrap_pyfunction!(experiments_list, m)?)?;
    m.add_function(wrap_pyfunction!(experiment, m)?)?;
    m.add_function(wrap_pyfunction!(trace_stats, m)?)?;
    m.add_function(wrap_pyfunction!(convert, m)?)?;
    m.add_function(wrap_pyfunction!(mix, m)?)?;
    Ok(())
}
