//! `shingled._core.replay`: a trace's requests as real I/O against a file, a block device, a
//! block cache or a translation layer (`shingled-replay`), the report as JSON text (parsed by
//! `python/shingled/replay.py`). The GIL is released; Ctrl-C stops the replay.

use pyo3::create_exception;
use pyo3::prelude::*;
use shingled_replay::{Loop, ReplayError, ReplayOptions};
use std::path::PathBuf;

create_exception!(
    shingled,
    ReplayTargetError,
    crate::errors::ShingledError,
    "A replay could not use its target or options (a directory, a FIFO, read-only, too small, \
     holding data without force, a queue depth it cannot serve), a request to the target failed, \
     or a read returned bytes other than the replay wrote. Nothing was written when the target \
     or options were refused."
);

fn replay_err(e: ReplayError) -> PyErr {
    match e {
        ReplayError::Trace(e) => crate::errors::sim_err(e),
        ReplayError::Cancelled(n) => {
            crate::errors::Cancelled::new_err(format!("replay cancelled after {n} requests"))
        }
        e => ReplayTargetError::new_err(e.to_string()),
    }
}

/// Replays `trace` against `target`; returns the report as JSON text.
#[pyfunction]
#[pyo3(signature = (trace, target, limit=None, write_only=false, open_loop=false, time_scale=1.0, queue_depth=1, warmup=0, direct=true, fold=false, force=false, verify=false, model_drive=None, cdf=false))]
#[allow(clippy::too_many_arguments)]
pub fn replay(
    py: Python<'_>,
    trace: String,
    target: PathBuf,
    limit: Option<u64>,
    write_only: bool,
    open_loop: bool,
    time_scale: f64,
    queue_depth: u32,
    warmup: u64,
    direct: bool,
    fold: bool,
    force: bool,
    verify: bool,
    model_drive: Option<String>,
    cdf: bool,
) -> PyResult<String> {
    let opts = ReplayOptions {
        trace: shingled_sim::TraceSpec { path: trace, limit, ..Default::default() },
        write_only,
        loop_: if open_loop { Loop::Open } else { Loop::Closed },
        time_scale,
        queue_depth,
        warmup,
        direct,
        fold,
        force,
        verify,
        model_drive,
        cdf,
    };
    crate::sim::interruptible(py, |stop| shingled_replay::replay(&target, &opts, &|_, _| {}, stop))?
        .map_err(replay_err)
        .map(|r| serde_json::to_string(&r).expect("a report serialises"))
}
