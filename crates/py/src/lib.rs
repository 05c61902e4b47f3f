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
use pyo3::exceptions::{PyException, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict};
use shingled_cache::PolicyConfig;
use shingled_core::BandConfig;
use shingled_core::ByteSize;
use shingled_device::{DmSmrConfig, HddConfig};
use shingled_sim::experiments::{self, Experiment, ExperimentOptions, ExperimentReport};
use shingled_sim::{CompareReport, Mode, RunReport, SimConfig, SimError, TraceSpec};

/// Large tables on transparent huge pages, as in the `shingled` binary (`shingled_core::mem`).
#[global_allocator]
static ALLOC: shingled_core::mem::HugePageAlloc = shingled_core::mem::HugePageAlloc;
use shingled_store::{
    read_format, ChunkId, Durability, FrontError, Placement, Store, StoreConfig, StoreFront, StreamType,
};
use shingled_trace::{TraceReader, TraceStats};
use shingled_zoned::{Dialect, FileOptions, FileZoned, IoMode, MemZoned, ZonedConfig};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc;
use std::sync::Mutex;
use std::time::Duration;

mod blockcache;
mod device;
mod stl;

/// Longest wait between two checks of Python signals while simulations run.
const POLL: Duration = Duration::from_millis(200);

// The exceptions' module is `shingled` (which re-exports them), so that `pickle` finds them by
// name: errors cross process pools and Ray workers, and `except shingled.ShingledError` catches
// a failing sweep point's error there too.
create_exception!(shingled, ShingledError, PyException, "Base class of every error shingled raises.");
create_exception!(shingled, TraceError, ShingledError, "A trace could not be opened or parsed.");
create_exception!(
    shingled,
    ConfigError,
    ShingledError,
    "A configuration is invalid (the message names the field)."
);
create_exception!(shingled, DeviceError, ShingledError, "A drive or SSD configuration is invalid.");
create_exception!(shingled, PolicyError, ShingledError, "A cache policy name or setting is invalid.");
create_exception!(shingled, Cancelled, ShingledError, "A simulation was cancelled.");

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

/// Runs `work` on another thread with the GIL released, checking for signals (Ctrl-C) every
/// [`POLL`]: on one, sets the flag `work` watches, waits for it to stop (it checks every few
/// thousand requests) and raises the signal's exception (`KeyboardInterrupt`).
fn interruptible<T: Send>(py: Python<'_>, work: impl FnOnce(&AtomicBool) -> T + Send) -> PyResult<T> {
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

fn to_json<T: serde::Serialize>(v: &T) -> String {
    serde_json::to_string(v).expect("reports and configurations serialize")
}

fn parse_config(json: &str) -> PyResult<SimConfig> {
    from_json(json, "configuration")
}

/// Parses JSON that the Python layer built from the user's values: an error names the field
/// by its path (`cache.policy.zone_size`), not by a position in JSON the user never saw.
fn from_json<T: serde::de::DeserializeOwned>(json: &str, what: &str) -> PyResult<T> {
    serde_path_to_error::deserialize(&mut serde_json::Deserializer::from_str(json)).map_err(|e| {
        let msg = e.inner().to_string();
        // serde_json ends its messages with " at line L column C".
        let msg = match msg.rfind(" at line ") {
            Some(i) if msg[i + 9..].split(" column ").all(|n| n.bytes().all(|b| b.is_ascii_digit())) => {
                &msg[..i]
            }
            _ => &msg[..],
        };
        let path = e.path().to_string();
        // A drive is a tagged enum, which serde buffers: the path stops at the drive. Parse
        // the drive's table again as its model's struct to find the field inside it.
        let (path, msg) = drive_field(json, &path).unwrap_or((path, msg.to_string()));
        match path.as_str() {
            "." | "" => ConfigError::new_err(format!("{what}: {msg}")),
            path => ConfigError::new_err(format!("{what} field {path}: {msg}")),
        }
    })
}

/// For an error at `path` that names a drive table (`drive`, `compare.cmr_drive`, or the
/// whole document): the path and message of the failing field inside it.
fn drive_field(json: &str, path: &str) -> Option<(String, String)> {
    let mut v: serde_json::Value = serde_json::from_str(json).ok()?;
    if path != "." {
        for key in path.split('.') {
            v = v.get_mut(key)?.take();
        }
    }
    let obj = v.as_object_mut()?;
    let model = obj.remove("model")?;
    let body = serde_json::Value::Object(std::mem::take(obj));
    let inner = match model.as_str()? {
        "cmr" => serde_path_to_error::deserialize::<_, HddConfig>(body).err()?,
        "dm-smr" => serde_path_to_error::deserialize::<_, DmSmrConfig>(body).err()?,
        "smart" => serde_path_to_error::deserialize::<_, shingled_device::SmartConfig>(body).err()?,
        _ => return None,
    };
    let at = inner.path().to_string();
    let full = if path == "." { at } else { format!("{path}.{at}") };
    Some((full, inner.inner().to_string()))
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
                    None => {
                        match shingled_sim::measure_until(&c.trace, &c.drive.bands_or_default(), cancel) {
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
            *stats.lock().unwrap() = distinct.clone();
            let expected: u64 = configs
                .iter()
                .zip(&which)
                .map(|(c, &w)| c.trace.limit.map_or(distinct[w].requests, |l| l.min(distinct[w].requests)))
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
    Ok(to_json(&CompareReport::new(trace, &base, runs)))
}

/// The configuration JSON `config` with set-up `name` applied (drive, CMR-only drive, I/O unit).
#[pyfunction]
fn apply_setup(config: &str, name: &str) -> PyResult<String> {
    let mut cfg = parse_config(config)?;
    shingled_sim::setup(name).map_err(sim_err)?.apply(&mut cfg);
    Ok(to_json(&cfg))
}

/// `(name, summary)` of every set-up.
#[pyfunction]
fn setups_list() -> Vec<(&'static str, &'static str)> {
    shingled_sim::SETUPS.iter().map(|s| (s.name, s.summary)).collect()
}

/// Names and titles of the papers' experiments.
#[pyfunction]
fn experiments_list() -> Vec<(&'static str, &'static str)> {
    experiments::EXPERIMENTS.to_vec()
}

/// Plans and runs experiment `name`; returns the `ExperimentReport` JSON.
#[pyfunction]
#[pyo3(signature = (name, config, traces, mode=None, jobs=None, progress=None, paper_setup=true))]
#[allow(clippy::too_many_arguments)]
fn experiment(
    py: Python<'_>,
    name: &str,
    config: &str,
    traces: Vec<String>,
    mode: Option<String>,
    jobs: Option<usize>,
    progress: Option<Bound<'_, PyAny>>,
    paper_setup: bool,
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
        experiments::plan(name, &ExperimentOptions { base, traces, mode, paper_setup }).map_err(sim_err)?;
    let cfgs: Vec<SimConfig> = plan.cells.iter().map(|c| c.config.clone()).collect();
    let (runs, stats) = run_many(py, &cfgs, jobs.unwrap_or_else(default_jobs), progress.as_ref(), None)?;
    Ok(to_json(&ExperimentReport::new(plan, runs, stats)))
}

/// The footprint of a trace (PORE Table I row) for a `TraceSpec` JSON and optional bands JSON.
#[pyfunction]
#[pyo3(signature = (spec, bands=None))]
fn trace_stats(py: Python<'_>, spec: &str, bands: Option<&str>) -> PyResult<String> {
    let spec: TraceSpec = from_json(spec, "trace")?;
    let bands: BandConfig = match bands {
        Some(b) => from_json(b, "bands")?,
        None => BandConfig::default(),
    };
    interruptible(py, |stop| shingled_sim::measure_until(&spec, &bands, stop))?
        .map(|s| to_json(&s))
        .map_err(sim_err)
}

/// Writes trace `input` (path or `synth:` spec) to `out` in the binary format; returns the
/// number of requests written.
#[pyfunction]
fn convert(py: Python<'_>, input: &str, out: std::path::PathBuf) -> PyResult<u64> {
    interruptible(py, |stop| {
        shingled_sim::stats_file::convert_keeping_stats(input, &Default::default(), &out, stop)
    })?
    .map(|s| s.requests)
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
        let spec: TraceSpec = from_json(spec, "trace")?;
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

// ----- chunk store ----------------------------------------------------------------------------

create_exception!(
    shingled,
    StoreError,
    ShingledError,
    "The chunk store failed (the message names the chunk, zone or offset)."
);
create_exception!(shingled, NoSuchChunk, StoreError, "No chunk with this id.");
create_exception!(
    shingled,
    ReadOnlyError,
    StoreError,
    "A call that would change a store opened read-only (create, append, seal, delete, sync, checkpoint, gc)."
);
create_exception!(
    shingled,
    CorruptionError,
    StoreError,
    "Stored data or metadata failed its checks (CRC, chunk id, offset); never wrong bytes."
);

/// The Python exception of a store error, carrying `msg`.
fn store_exc(e: &shingled_store::StoreError, msg: String) -> PyErr {
    use shingled_store::StoreError as E;
    match e {
        E::NoSuchChunk(_) => NoSuchChunk::new_err(msg),
        E::CorruptData { .. } | E::CorruptMeta { .. } => CorruptionError::new_err(msg),
        E::Config(_) => ConfigError::new_err(msg),
        E::ReadOnly => ReadOnlyError::new_err(msg),
        _ => StoreError::new_err(msg),
    }
}

fn store_err(e: shingled_store::StoreError) -> PyErr {
    store_exc(&e, e.to_string())
}

fn zoned_err(e: shingled_zoned::ZonedError) -> PyErr {
    StoreError::new_err(e.to_string())
}

/// A chunk id from `bytes` (24) or a `str` of 48 hex digits.
fn chunk_id(obj: &Bound<'_, PyAny>) -> PyResult<ChunkId> {
    if let Ok(b) = obj.cast::<PyBytes>() {
        let b = b.as_bytes();
        let a: [u8; 24] = b
            .try_into()
            .map_err(|_| PyValueError::new_err(format!("chunk id: expected 24 bytes, got {}", b.len())))?;
        return Ok(ChunkId(a));
    }
    if let Ok(s) = obj.extract::<String>() {
        let t = s.trim();
        if t.len() != 48 || !t.bytes().all(|c| c.is_ascii_hexdigit()) {
            return Err(PyValueError::new_err(format!("chunk id {s:?}: expected 48 hex digits")));
        }
        let mut a = [0u8; 24];
        for (i, x) in a.iter_mut().enumerate() {
            *x = u8::from_str_radix(&t[2 * i..2 * i + 2], 16).expect("checked hex");
        }
        return Ok(ChunkId(a));
    }
    Err(PyTypeError::new_err(format!(
        "chunk id must be bytes (24) or a hex str (48 digits), not {}",
        obj.get_type().name()?
    )))
}

/// `base` with a dict of overrides (keys as the Rust fields, `placement` and `durability` as
/// names).
fn store_config(base: StoreConfig, cfg: Option<&Bound<'_, PyDict>>) -> PyResult<StoreConfig> {
    let mut c = base;
    let Some(d) = cfg else { return Ok(c) };
    for (k, v) in d.iter() {
        let key: String = k.extract()?;
        let bad = |e: PyErr| ConfigError::new_err(format!("store configuration field {key}: {e}"));
        match key.as_str() {
            "nr_metazones" | "metazones" => c.nr_metazones = v.extract().map_err(bad)?,
            "pool_gc" => c.pool_gc = v.extract().map_err(bad)?,
            "pool_data" => c.pool_data = v.extract().map_err(bad)?,
            "pool_metadata" => c.pool_metadata = v.extract().map_err(bad)?,
            "metadata_chunk_limit" => c.metadata_chunk_limit = v.extract().map_err(bad)?,
            "gc_free_zones" => c.gc_free_zones = v.extract().map_err(bad)?,
            "gc_stop_free_zones" => c.gc_stop_free_zones = v.extract().map_err(bad)?,
            "gc_step_bytes" => c.gc_step_bytes = v.extract().map_err(bad)?,
            "gc_max_bandwidth" => c.gc_max_bandwidth = v.extract().map_err(bad)?,
            "checkpoint_every_bytes" => c.checkpoint_every_bytes = v.extract().map_err(bad)?,
            "ckpt_step_bytes" => c.ckpt_step_bytes = v.extract().map_err(bad)?,
            "max_record" => c.max_record = v.extract().map_err(bad)?,
            "scan_buffer_bytes" => c.scan_buffer_bytes = v.extract().map_err(bad)?,
            "placement" => {
                let s: String = v.extract().map_err(bad)?;
                let g = |a, b, r| Placement::Guided { separate_streams: a, chunk_limit: b, round_robin: r };
                c.placement = match s.as_str() {
                    "guided" => Placement::default(),
                    "one-zone" => Placement::OneZone,
                    "no-separate-streams" => g(false, true, true),
                    "no-chunk-limit" => g(true, false, true),
                    "no-round-robin" => g(true, true, false),
                    _ => {
                        return Err(ConfigError::new_err(format!(
                            "store configuration field placement: {s:?}; known: guided, one-zone, \
                             no-separate-streams, no-chunk-limit, no-round-robin"
                        )))
                    }
                };
            }
            "durability" => {
                let s: String = v.extract().map_err(bad)?;
                c.durability = match s.as_str() {
                    "every-append" => Durability::EveryAppend,
                    "batched" => Durability::Batched,
                    _ => {
                        return Err(ConfigError::new_err(format!(
                            "store configuration field durability: {s:?}; known: every-append, batched"
                        )))
                    }
                };
            }
            _ => return Err(ConfigError::new_err(format!("unknown store configuration field {key:?}"))),
        }
    }
    c.sanitize().map_err(store_err)?;
    Ok(c)
}

fn placement_name(p: Placement) -> &'static str {
    match p {
        Placement::OneZone => "one-zone",
        Placement::Guided { separate_streams: false, chunk_limit: true, round_robin: true } => {
            "no-separate-streams"
        }
        Placement::Guided { separate_streams: true, chunk_limit: false, round_robin: true } => {
            "no-chunk-limit"
        }
        Placement::Guided { separate_streams: true, chunk_limit: true, round_robin: false } => {
            "no-round-robin"
        }
        Placement::Guided { separate_streams: true, chunk_limit: true, round_robin: true } => "guided",
        Placement::Guided { .. } => "guided (custom)",
    }
}

enum AnyStore {
    File(Store<FileZoned>),
    Mem(Store<MemZoned>),
}

/// Runs `$body` with `$s` bound to the open store (either device type), GIL released.
macro_rules! with_store {
    ($self:ident, $py:ident, |$s:ident| $body:expr) => {
        $py.detach(|| {
            let mut g = $self.inner.lock().unwrap();
            match g.as_mut() {
                None => Err(StoreError::new_err("the chunk store is closed")),
                Some(AnyStore::File($s)) => $body,
                Some(AnyStore::Mem($s)) => $body,
            }
        })
    };
}

/// A chunk store (`shingled_store::Store`) on an emulated zoned device file or in memory.
#[pyclass(module = "shingled._core")]
struct ChunkStore {
    inner: Mutex<Option<AnyStore>>,
    cfg: StoreConfig,
    /// Opened with `Store::open_read_only` (reopen stays read-only; close writes nothing).
    read_only: bool,
}

fn info_json(c: &shingled_store::ChunkInfo) -> serde_json::Value {
    serde_json::json!({
        "id": c.id.to_string(), "stream": c.stream.0, "length": c.len, "sealed": c.sealed,
        "records": c.records, "groups": c.groups,
    })
}

fn stats_json<D: shingled_zoned::ZonedDevice>(st: &Store<D>) -> String {
    let s = st.stats();
    let m = st.memory();
    serde_json::json!({
        "chunks": s.chunks, "sealed_chunks": s.sealed_chunks, "live_bytes": s.live_bytes,
        "records": s.records, "datazones": s.datazones, "free_zones": st.free_zones(),
        "zones_by_state": {
            "free": s.zones_by_state[0], "opened": s.zones_by_state[1], "activated": s.zones_by_state[2],
            "full": s.zones_by_state[3], "garbage": s.zones_by_state[4],
        },
        "appends": s.appends, "device_bytes_written": s.device_bytes_written, "flushes": s.flushes,
        "checkpoints": s.checkpoints, "journal_records": s.journal_records, "zone_resets": s.zone_resets,
        "recovered_records": s.recovered_records, "ignored_records": s.ignored_records,
        "gc_migrations": s.gc_migrations, "gc_bytes_migrated": s.gc_bytes_migrated,
        "gc_zones_reclaimed": s.gc_zones_reclaimed, "gc_steps": s.gc_steps,
        "gc_throttled_steps": s.gc_throttled_steps, "gc_emergency_rounds": s.gc_emergency_rounds,
        "memory": { "per_chunk": m.per_chunk, "per_record": m.per_record, "total": m.total },
    })
    .to_string()
}

fn fsck_json(r: &shingled_store::FsckReport) -> String {
    serde_json::json!({
        "clean": r.is_clean(), "zones_checked": r.zones_checked, "records_checked": r.records_checked,
        "bytes_checked": r.bytes_checked, "chunks_checked": r.chunks_checked, "torn_tails": r.torn_tails,
        "problems": r.problems.iter().map(|q| serde_json::json!({
            "zone": q.zone, "offset": q.offset, "chunk": q.chunk.map(|c| c.to_string()),
            "chunk_offset": q.chunk_offset, "what": q.what,
        })).collect::<Vec<_>>(),
        "device_metadata": r.device,
    })
    .to_string()
}

fn file_opts() -> FileOptions {
    FileOptions { io_mode: IoMode::Buffered }
}

#[pymethods]
impl ChunkStore {
    /// Creates device file `path` (`zones` zones of `zone_size` bytes, the first
    /// `conventional` conventional) and formats it.
    #[staticmethod]
    #[pyo3(signature = (path, zones, zone_size, conventional=1, max_open=128, config=None))]
    fn create_file(
        py: Python<'_>,
        path: std::path::PathBuf,
        zones: u64,
        zone_size: u64,
        conventional: u64,
        max_open: u32,
        config: Option<Bound<'_, PyDict>>,
    ) -> PyResult<ChunkStore> {
        let cfg = store_config(StoreConfig::default(), config.as_ref())?;
        let zc = ZonedConfig {
            capacity: ByteSize(
                zones
                    .checked_mul(zone_size)
                    .ok_or_else(|| PyValueError::new_err("zones × zone_size overflows"))?,
            ),
            zone_size: ByteSize(zone_size),
            nr_conv: conventional,
            max_open,
            lba_size: 4096,
            ..ZonedConfig::small(zones, 1, Dialect::Zbc)
        };
        zc.sanitize().map_err(|e| PyValueError::new_err(format!("device geometry: {e}")))?;
        let c = cfg.clone();
        let st = py.detach(move || {
            let dev = FileZoned::create(&path, &zc, file_opts()).map_err(zoned_err)?;
            Store::format(dev, c).map_err(store_err)
        })?;
        Ok(ChunkStore { inner: Mutex::new(Some(AnyStore::File(st))), cfg, read_only: false })
    }

    /// Formats the existing device file `path` (every chunk on it is lost).
    #[staticmethod]
    #[pyo3(signature = (path, config=None))]
    fn format_file(
        py: Python<'_>,
        path: std::path::PathBuf,
        config: Option<Bound<'_, PyDict>>,
    ) -> PyResult<ChunkStore> {
        let cfg = store_config(StoreConfig::default(), config.as_ref())?;
        let c = cfg.clone();
        let st = py.detach(move || {
            let dev = FileZoned::open(&path, file_opts()).map_err(zoned_err)?;
            Store::format(dev, c).map_err(store_err)
        })?;
        Ok(ChunkStore { inner: Mutex::new(Some(AnyStore::File(st))), cfg, read_only: false })
    }

    /// Opens (and recovers) the store on device file `path`, with the pools and placement it
    /// was formatted with (its superzone record) unless `config` overrides them. `read_only`:
    /// `Store::open_read_only` (recovery into memory, nothing ever written to the file; the
    /// calls that change the store raise ReadOnlyError).
    #[staticmethod]
    #[pyo3(signature = (path, config=None, read_only=false))]
    fn open_file(
        py: Python<'_>,
        path: std::path::PathBuf,
        config: Option<Bound<'_, PyDict>>,
        read_only: bool,
    ) -> PyResult<ChunkStore> {
        let mut dev = py.detach(|| FileZoned::open(&path, file_opts())).map_err(zoned_err)?;
        let stored = py.detach(|| read_format(&mut dev)).map_err(store_err)?;
        let cfg = store_config(stored.config, config.as_ref())?;
        let c = cfg.clone();
        let st = py
            .detach(move || if read_only { Store::open_read_only(dev, c) } else { Store::open(dev, c) })
            .map_err(store_err)?;
        Ok(ChunkStore { inner: Mutex::new(Some(AnyStore::File(st))), cfg, read_only })
    }

    /// Whether the store was opened read-only.
    #[getter]
    fn read_only(&self) -> bool {
        self.read_only
    }

    /// The configuration in force, as JSON.
    fn config(&self) -> String {
        let c = &self.cfg;
        serde_json::json!({
            "nr_metazones": c.nr_metazones, "pool_gc": c.pool_gc, "pool_data": c.pool_data,
            "pool_metadata": c.pool_metadata, "placement": placement_name(c.placement),
            "durability": match c.durability { Durability::EveryAppend => "every-append", Durability::Batched => "batched" },
            "metadata_chunk_limit": c.metadata_chunk_limit, "gc_free_zones": c.gc_free_zones,
            "gc_stop_free_zones": c.gc_stop_free_zones, "gc_step_bytes": c.gc_step_bytes,
            "gc_max_bandwidth": c.gc_max_bandwidth, "max_record": c.max_record,
            "checkpoint_every_bytes": c.checkpoint_every_bytes, "ckpt_step_bytes": c.ckpt_step_bytes,
            "scan_buffer_bytes": c.scan_buffer_bytes,
        })
        .to_string()
    }

    /// A formatted store on an in-memory device (`zones` zones of `zone_size` bytes).
    #[staticmethod]
    #[pyo3(signature = (zones, zone_size, config=None))]
    fn in_memory(zones: u64, zone_size: u64, config: Option<Bound<'_, PyDict>>) -> PyResult<ChunkStore> {
        let cfg = store_config(StoreConfig::default(), config.as_ref())?;
        if zone_size == 0 || !zone_size.is_multiple_of(1024) {
            return Err(PyValueError::new_err(format!("zone_size {zone_size}: a positive multiple of 1024")));
        }
        let dev = MemZoned::new(&ZonedConfig::small(zones, zone_size / 1024, Dialect::Zbc))
            .map_err(|e| PyValueError::new_err(format!("device geometry: {e}")))?;
        let st = Store::format(dev, cfg.clone()).map_err(store_err)?;
        Ok(ChunkStore { inner: Mutex::new(Some(AnyStore::Mem(st))), cfg, read_only: false })
    }

    /// Creates an empty chunk of stream type `stream` (0 data, 1 metadata, 2 GC, …).
    fn create(&self, py: Python<'_>, id: &Bound<'_, PyAny>, stream: u8) -> PyResult<()> {
        let id = chunk_id(id)?;
        with_store!(self, py, |s| s.create(id, StreamType(stream)).map_err(store_err))
    }

    /// Appends `data` to chunk `id`.
    fn append(&self, py: Python<'_>, id: &Bound<'_, PyAny>, data: &[u8]) -> PyResult<()> {
        let id = chunk_id(id)?;
        with_store!(self, py, |s| s.append(id, data).map_err(store_err))
    }

    /// `length` bytes of chunk `id` from `offset` (to the end when `length` is None).
    #[pyo3(signature = (id, offset=0, length=None))]
    fn read<'py>(
        &self,
        py: Python<'py>,
        id: &Bound<'py, PyAny>,
        offset: u64,
        length: Option<u64>,
    ) -> PyResult<Bound<'py, PyBytes>> {
        let id = chunk_id(id)?;
        let v = with_store!(self, py, |s| {
            let len = match length {
                Some(l) => l,
                None => s
                    .chunk(id)
                    .ok_or_else(|| store_err(shingled_store::StoreError::NoSuchChunk(id)))?
                    .len
                    .saturating_sub(offset),
            };
            s.read(id, offset, len).map_err(store_err)
        })?;
        Ok(PyBytes::new(py, &v))
    }

    /// Seals chunk `id` (no more appends).
    fn seal(&self, py: Python<'_>, id: &Bound<'_, PyAny>) -> PyResult<()> {
        let id = chunk_id(id)?;
        with_store!(self, py, |s| s.seal(id).map_err(store_err))
    }

    /// Deletes chunk `id`.
    fn delete(&self, py: Python<'_>, id: &Bound<'_, PyAny>) -> PyResult<()> {
        let id = chunk_id(id)?;
        with_store!(self, py, |s| s.delete(id).map_err(store_err))
    }

    /// Makes every append so far durable.
    fn sync(&self, py: Python<'_>) -> PyResult<()> {
        with_store!(self, py, |s| s.sync().map_err(store_err))
    }

    /// Writes a checkpoint (bounds the next recovery's scan).
    fn checkpoint(&self, py: Python<'_>) -> PyResult<()> {
        with_store!(self, py, |s| s.checkpoint().map_err(store_err))
    }

    /// One GC round; the zone reclaimed, or None.
    fn gc(&self, py: Python<'_>) -> PyResult<Option<u64>> {
        with_store!(self, py, |s| s.gc().map_err(store_err))
    }

    /// Every chunk (id order) as a JSON list of objects.
    fn list(&self, py: Python<'_>) -> PyResult<String> {
        with_store!(self, py, |s| Ok(serde_json::Value::from(
            s.list().iter().map(info_json).collect::<Vec<_>>()
        )
        .to_string()))
    }

    /// One chunk as JSON, or None.
    fn chunk(&self, py: Python<'_>, id: &Bound<'_, PyAny>) -> PyResult<Option<String>> {
        let id = chunk_id(id)?;
        with_store!(self, py, |s| Ok(s.chunk(id).map(|c| info_json(&c).to_string())))
    }

    /// Counters, zone census and index memory as JSON.
    fn stats(&self, py: Python<'_>) -> PyResult<String> {
        with_store!(self, py, |s| Ok(stats_json(s)))
    }

    /// `Store::fsck` as JSON (problems name zone, offset, chunk and chunk offset).
    fn fsck(&self, py: Python<'_>) -> PyResult<String> {
        with_store!(self, py, |s| s.fsck().map(|r| fsck_json(&r)).map_err(store_err))
    }

    /// Drops the store without syncing (what a crash leaves) and opens it again: recovery.
    fn reopen(&self, py: Python<'_>) -> PyResult<()> {
        let cfg = self.cfg.clone();
        py.detach(|| {
            let mut g = self.inner.lock().unwrap();
            let st = g.take().ok_or_else(|| StoreError::new_err("the chunk store is closed"))?;
            let r = match (st, self.read_only) {
                (AnyStore::File(s), false) => Store::open(s.into_device(), cfg).map(AnyStore::File),
                (AnyStore::File(s), true) => Store::open_read_only(s.into_device(), cfg).map(AnyStore::File),
                (AnyStore::Mem(s), false) => Store::open(s.into_device(), cfg).map(AnyStore::Mem),
                (AnyStore::Mem(s), true) => Store::open_read_only(s.into_device(), cfg).map(AnyStore::Mem),
            };
            *g = Some(r.map_err(store_err)?);
            Ok(())
        })
    }

    /// Syncs, checkpoints and releases the device (read-only: only releases it). Further
    /// calls raise StoreError.
    fn close(&self, py: Python<'_>) -> PyResult<()> {
        py.detach(|| {
            let mut g = self.inner.lock().unwrap();
            let r = match g.as_mut() {
                None => return Ok(()),
                Some(_) if self.read_only => Ok(()),
                Some(AnyStore::File(s)) => s.sync().and_then(|()| s.checkpoint()),
                Some(AnyStore::Mem(s)) => s.sync().and_then(|()| s.checkpoint()),
            };
            *g = None;
            r.map_err(store_err)
        })
    }

    /// Whether the store is closed.
    #[getter]
    fn closed(&self) -> bool {
        self.inner.lock().unwrap().is_none()
    }
}

// ----- multi-drive front ------------------------------------------------------------------

/// A front error as the exception of the store error inside (message naming the drive).
fn front_err(e: FrontError) -> PyErr {
    let msg = e.to_string();
    match &e {
        FrontError::Drive { source, .. } => store_exc(source, msg),
        FrontError::NoSuchChunk(_) => NoSuchChunk::new_err(msg),
        _ => StoreError::new_err(msg),
    }
}

enum AnyFront {
    File(StoreFront<FileZoned>),
    Mem(StoreFront<MemZoned>),
}

/// Runs `$body` with `$f` bound to the open front (either device type), GIL released.
macro_rules! with_front {
    ($self:ident, $py:ident, |$f:ident| $body:expr) => {
        $py.detach(|| {
            let mut g = $self.inner.lock().unwrap();
            match g.as_mut() {
                None => Err(StoreError::new_err("the store front is closed")),
                Some(AnyFront::File($f)) => $body,
                Some(AnyFront::Mem($f)) => $body,
            }
        })
    };
}

fn drive_stats_json(d: &shingled_store::DriveStats) -> serde_json::Value {
    let s = &d.store;
    serde_json::json!({
        "bytes_appended": d.bytes_appended, "bytes_read": d.bytes_read, "free_zones": d.free_zones,
        "chunks": s.chunks, "sealed_chunks": s.sealed_chunks, "live_bytes": s.live_bytes, "records": s.records,
        "datazones": s.datazones, "device_bytes_written": s.device_bytes_written, "flushes": s.flushes,
        "gc_bytes_migrated": s.gc_bytes_migrated, "gc_zones_reclaimed": s.gc_zones_reclaimed,
    })
}

/// Several chunk stores, one per drive, behind one chunk API (`shingled_store::StoreFront`).
#[pyclass(module = "shingled._core")]
struct ChunkFront {
    inner: Mutex<Option<AnyFront>>,
    cfg: StoreConfig,
    /// Opened with `StoreFront::open_read_only`.
    read_only: bool,
}

#[pymethods]
impl ChunkFront {
    /// Opens (and recovers) the stores on device files `paths` (any order), each with the
    /// configuration it was formatted with unless `config` overrides it.
    /// `read_only`: every drive with `Store::open_read_only` (nothing written to the files).
    #[staticmethod]
    #[pyo3(signature = (paths, config=None, read_only=false))]
    fn open_files(
        py: Python<'_>,
        paths: Vec<std::path::PathBuf>,
        config: Option<Bound<'_, PyDict>>,
        read_only: bool,
    ) -> PyResult<ChunkFront> {
        let key = |p: &std::path::PathBuf| std::fs::canonicalize(p).unwrap_or_else(|_| p.clone());
        for (i, p) in paths.iter().enumerate() {
            if paths[..i].iter().any(|q| key(q) == key(p)) {
                return Err(PyValueError::new_err(format!("device {} is given twice", p.display())));
            }
        }
        let mut stores = Vec::new();
        let mut cfg0 = None;
        for p in &paths {
            let mut dev = py.detach(|| FileZoned::open(p, file_opts())).map_err(zoned_err)?;
            let stored = py.detach(|| read_format(&mut dev)).map_err(store_err)?;
            let cfg = store_config(stored.config, config.as_ref())?;
            let c = cfg.clone();
            let st = py
                .detach(move || if read_only { Store::open_read_only(dev, c) } else { Store::open(dev, c) });
            stores.push(st.map_err(store_err)?);
            cfg0.get_or_insert(cfg);
        }
        let f = StoreFront::from_stores(stores).map_err(front_err)?;
        Ok(ChunkFront {
            inner: Mutex::new(Some(AnyFront::File(f))),
            cfg: cfg0.unwrap_or_default(),
            read_only,
        })
    }

    /// `drives` formatted in-memory devices of `zones` zones of `zone_size` bytes.
    #[staticmethod]
    #[pyo3(signature = (drives, zones, zone_size, config=None))]
    fn in_memory(
        drives: usize,
        zones: u64,
        zone_size: u64,
        config: Option<Bound<'_, PyDict>>,
    ) -> PyResult<ChunkFront> {
        let cfg = store_config(StoreConfig::default(), config.as_ref())?;
        if zone_size == 0 || !zone_size.is_multiple_of(1024) {
            return Err(PyValueError::new_err(format!("zone_size {zone_size}: a positive multiple of 1024")));
        }
        let devs = (0..drives)
            .map(|_| MemZoned::new(&ZonedConfig::small(zones, zone_size / 1024, Dialect::Zbc)))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| PyValueError::new_err(format!("device geometry: {e}")))?;
        let f = StoreFront::format(devs, cfg.clone()).map_err(front_err)?;
        Ok(ChunkFront { inner: Mutex::new(Some(AnyFront::Mem(f))), cfg, read_only: false })
    }

    /// Creates chunk `id` on the drive placement picks; returns the drive.
    fn create(&self, py: Python<'_>, id: &Bound<'_, PyAny>, stream: u8) -> PyResult<usize> {
        let id = chunk_id(id)?;
        with_front!(self, py, |f| f.create(id, StreamType(stream)).map_err(front_err))
    }

    fn append(&self, py: Python<'_>, id: &Bound<'_, PyAny>, data: &[u8]) -> PyResult<()> {
        let id = chunk_id(id)?;
        with_front!(self, py, |f| f.append(id, data).map_err(front_err))
    }

    #[pyo3(signature = (id, offset=0, length=None))]
    fn read<'py>(
        &self,
        py: Python<'py>,
        id: &Bound<'py, PyAny>,
        offset: u64,
        length: Option<u64>,
    ) -> PyResult<Bound<'py, PyBytes>> {
        let id = chunk_id(id)?;
        let v = with_front!(self, py, |f| {
            let len = match length {
                Some(l) => l,
                None => f
                    .chunk(id)
                    .ok_or_else(|| front_err(FrontError::NoSuchChunk(id)))?
                    .1
                    .len
                    .saturating_sub(offset),
            };
            f.read(id, offset, len).map_err(front_err)
        })?;
        Ok(PyBytes::new(py, &v))
    }

    fn seal(&self, py: Python<'_>, id: &Bound<'_, PyAny>) -> PyResult<()> {
        let id = chunk_id(id)?;
        with_front!(self, py, |f| f.seal(id).map_err(front_err))
    }

    fn delete(&self, py: Python<'_>, id: &Bound<'_, PyAny>) -> PyResult<()> {
        let id = chunk_id(id)?;
        with_front!(self, py, |f| f.delete(id).map_err(front_err))
    }

    /// The drive holding chunk `id`, or None.
    fn drive_of(&self, py: Python<'_>, id: &Bound<'_, PyAny>) -> PyResult<Option<usize>> {
        let id = chunk_id(id)?;
        with_front!(self, py, |f| Ok(f.drive_of(id)))
    }

    /// Syncs every drive, one thread per drive.
    fn sync(&self, py: Python<'_>) -> PyResult<()> {
        with_front!(self, py, |f| f.sync_parallel().map_err(front_err))
    }

    /// One GC round per drive: the zone each reclaimed.
    fn gc(&self, py: Python<'_>) -> PyResult<Vec<Option<u64>>> {
        with_front!(self, py, |f| f.gc().map_err(front_err))
    }

    /// Every chunk with its drive (id order), as JSON.
    fn list(&self, py: Python<'_>) -> PyResult<String> {
        with_front!(self, py, |f| {
            let v: Vec<serde_json::Value> = f
                .list()
                .iter()
                .map(|(d, c)| {
                    let mut j = info_json(c);
                    j["drive"] = (*d).into();
                    j
                })
                .collect();
            Ok(serde_json::Value::from(v).to_string())
        })
    }

    /// Per-drive statistics and totals, as JSON.
    fn stats(&self, py: Python<'_>) -> PyResult<String> {
        with_front!(self, py, |f| {
            let s = f.stats();
            let drives: Vec<_> = s.drives.iter().map(drive_stats_json).collect();
            Ok(serde_json::json!({ "drives": drives, "total": drive_stats_json(&s.total) }).to_string())
        })
    }

    /// `Store::fsck` of every drive, as a JSON list.
    fn fsck(&self, py: Python<'_>) -> PyResult<String> {
        with_front!(self, py, |f| {
            let reps = f.fsck().map_err(front_err)?;
            let v: Vec<serde_json::Value> =
                reps.iter().map(|r| serde_json::from_str(&fsck_json(r)).expect("valid JSON")).collect();
            Ok(serde_json::Value::from(v).to_string())
        })
    }

    /// Drops every store without syncing and recovers them (the map is rebuilt by listing).
    fn reopen(&self, py: Python<'_>) -> PyResult<()> {
        let cfg = self.cfg.clone();
        py.detach(|| {
            let mut g = self.inner.lock().unwrap();
            let f = g.take().ok_or_else(|| StoreError::new_err("the store front is closed"))?;
            let r = match (f, self.read_only) {
                (AnyFront::File(f), false) => StoreFront::open(f.into_devices(), cfg).map(AnyFront::File),
                (AnyFront::File(f), true) => {
                    StoreFront::open_read_only(f.into_devices(), cfg).map(AnyFront::File)
                }
                (AnyFront::Mem(f), false) => StoreFront::open(f.into_devices(), cfg).map(AnyFront::Mem),
                (AnyFront::Mem(f), true) => {
                    StoreFront::open_read_only(f.into_devices(), cfg).map(AnyFront::Mem)
                }
            };
            *g = Some(r.map_err(front_err)?);
            Ok(())
        })
    }

    /// Syncs, checkpoints and releases the devices.
    fn close(&self, py: Python<'_>) -> PyResult<()> {
        py.detach(|| {
            let mut g = self.inner.lock().unwrap();
            let r = match g.as_mut() {
                None => return Ok(()),
                Some(_) if self.read_only => Ok(()),
                Some(AnyFront::File(f)) => f.sync().and_then(|()| f.checkpoint()),
                Some(AnyFront::Mem(f)) => f.sync().and_then(|()| f.checkpoint()),
            };
            *g = None;
            r.map_err(front_err)
        })
    }

    #[getter]
    fn closed(&self) -> bool {
        self.inner.lock().unwrap().is_none()
    }
}

// ----- store benchmarks -----------------------------------------------------------------------

/// Names and one-line descriptions of the store benches (`shingled store bench list`).
#[pyfunction]
fn store_benches() -> Vec<(&'static str, &'static str)> {
    shingled_store::bench::BENCHES.to_vec()
}

/// The Python exception of a store bench failure: an unknown name is a configuration error,
/// the store's own errors keep their classes, device and file errors are `StoreError`s.
fn bench_err(e: shingled_store::bench::BenchError) -> PyErr {
    use shingled_store::bench::BenchError as B;
    let msg = e.to_string();
    match &e {
        B::Unknown(_) => ConfigError::new_err(msg),
        B::Store { source, .. } => store_exc(source, msg),
        _ => StoreError::new_err(msg),
    }
}

/// Runs store bench `name` (`shingled store bench NAME --output json`); returns the
/// `BenchReport` JSON. The GIL is released for the whole run; the bench has no cancel point, so
/// Ctrl-C takes effect when it returns.
#[pyfunction]
#[pyo3(signature = (name, scale=1.0, seed=1, streams=8, dir=None))]
fn store_bench(
    py: Python<'_>,
    name: &str,
    scale: f64,
    seed: u64,
    streams: usize,
    dir: Option<std::path::PathBuf>,
) -> PyResult<String> {
    if !shingled_store::bench::BENCHES.iter().any(|(n, _)| *n == name) {
        return Err(bench_err(shingled_store::bench::BenchError::Unknown(name.to_string())));
    }
    if !(scale > 0.0 && scale.is_finite()) {
        return Err(ConfigError::new_err(format!(
            "store bench {name}: scale {scale} must be a positive number"
        )));
    }
    if streams == 0 {
        return Err(ConfigError::new_err(format!("store bench {name}: streams 0 must be at least 1")));
    }
    let opts = shingled_store::bench::BenchOptions { scale, seed, streams, dir };
    py.detach(|| shingled_store::bench::run(name, &opts)).map(|r| to_json(&r)).map_err(bench_err)
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
    m.add("StoreError", py.get_type::<StoreError>())?;
    m.add("NoSuchChunk", py.get_type::<NoSuchChunk>())?;
    m.add("ReadOnlyError", py.get_type::<ReadOnlyError>())?;
    m.add("CorruptionError", py.get_type::<CorruptionError>())?;
    m.add("PROGRESS_EVERY", shingled_sim::PROGRESS_EVERY)?;
    m.add("RECORD_BYTES", RECORD)?;
    m.add_class::<Reader>()?;
    m.add_class::<ChunkStore>()?;
    m.add_class::<stl::TranslationLayer>()?;
    m.add("TranslationLayerError", py.get_type::<stl::TranslationLayerError>())?;
    m.add_function(wrap_pyfunction!(stl::stl_inspect, m)?)?;
    m.add_class::<blockcache::BlockCache>()?;
    m.add("BlockCacheError", py.get_type::<blockcache::BlockCacheError>())?;
    m.add_function(wrap_pyfunction!(blockcache::cache_inspect, m)?)?;
    m.add_function(wrap_pyfunction!(blockcache::cache_lost_blocks, m)?)?;
    m.add_function(wrap_pyfunction!(blockcache::cache_replay, m)?)?;
    m.add_class::<ChunkFront>()?;
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
    m.add_function(wrap_pyfunction!(apply_setup, m)?)?;
    m.add_function(wrap_pyfunction!(setups_list, m)?)?;
    m.add_function(wrap_pyfunction!(experiment, m)?)?;
    m.add_function(wrap_pyfunction!(trace_stats, m)?)?;
    m.add_function(wrap_pyfunction!(convert, m)?)?;
    m.add_function(wrap_pyfunction!(mix, m)?)?;
    m.add_function(wrap_pyfunction!(store_benches, m)?)?;
    m.add_function(wrap_pyfunction!(store_bench, m)?)?;
    Ok(())
}
