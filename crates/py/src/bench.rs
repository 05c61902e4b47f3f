//! The chunk store benchmarks (`shingled store bench`).

use crate::config::to_json;
use crate::errors::{store_exc, ConfigError, StoreError, ZonedError};
use pyo3::prelude::*;
use shingled_bench::store::{self as bench, BenchError, StoreBenchOptions, BENCHES};

/// Names and one-line descriptions of the store benches (`shingled store bench list`).
#[pyfunction]
pub(crate) fn store_benches() -> Vec<(&'static str, &'static str)> {
    BENCHES.to_vec()
}

/// The Python exception of a store bench failure: an unknown name is a configuration error,
/// the store's own errors keep their classes, device errors are `ZonedError`s and file errors
/// `StoreError`s.
fn bench_err(e: BenchError) -> PyErr {
    let msg = e.to_string();
    match &e {
        BenchError::Unknown(_) => ConfigError::new_err(msg),
        BenchError::Store { source, .. } => store_exc(source, msg),
        BenchError::Device { .. } => ZonedError::new_err(msg),
        _ => StoreError::new_err(msg),
    }
}

/// Runs store bench `name` (`shingled store bench NAME --output json`); returns the
/// `StoreBenchReport` JSON. The GIL is released for the whole run; the bench has no cancel point, so
/// Ctrl-C takes effect when it returns.
#[pyfunction]
#[pyo3(signature = (name, scale=1.0, seed=1, streams=8, dir=None, rounds=1))]
pub(crate) fn store_bench(
    py: Python<'_>,
    name: &str,
    scale: f64,
    seed: u64,
    streams: usize,
    dir: Option<std::path::PathBuf>,
    rounds: usize,
) -> PyResult<String> {
    if !BENCHES.iter().any(|(n, _)| *n == name) {
        return Err(bench_err(BenchError::Unknown(name.to_string())));
    }
    if !(scale > 0.0 && scale.is_finite()) {
        return Err(ConfigError::new_err(format!(
            "store bench {name}: scale {scale} must be a positive number"
        )));
    }
    if streams == 0 {
        return Err(ConfigError::new_err(format!("store bench {name}: streams 0 must be at least 1")));
    }
    if rounds == 0 {
        return Err(ConfigError::new_err(format!("store bench {name}: rounds 0 must be at least 1")));
    }
    let opts = StoreBenchOptions { scale, seed, streams, dir, rounds };
    py.detach(|| bench::run(name, &opts)).map(|r| to_json(&r)).map_err(bench_err)
}
