//! Traces: footprints, conversion, mixing, and a streaming reader of packed records.

use crate::config::{from_json, to_json};
use crate::errors::{sim_err, trace_err};
use crate::sim::interruptible;
use pyo3::prelude::*;
use pyo3::types::PyBytes;
use shingled_core::BandConfig;
use shingled_sim::TraceSpec;
use shingled_trace::TraceReader;
use std::sync::Mutex;

/// The footprint of a trace (PORE Table I row) for a `TraceSpec` JSON and optional bands JSON.
#[pyfunction]
#[pyo3(signature = (spec, bands=None))]
pub(crate) fn trace_stats(py: Python<'_>, spec: &str, bands: Option<&str>) -> PyResult<String> {
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
pub(crate) fn convert(py: Python<'_>, input: &str, out: std::path::PathBuf) -> PyResult<u64> {
    interruptible(py, |stop| {
        shingled_sim::stats_file::convert_keeping_stats(input, &Default::default(), &out, stop)
    })?
    .map(|s| s.requests)
    .map_err(trace_err)
}

/// Builds a mixed trace (`shingled trace mix`); returns the summary as JSON.
#[pyfunction]
pub(crate) fn mix(
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
pub(crate) const RECORD: usize = 25;

/// A streaming trace reader handing out packed records in chunks.
#[pyclass(module = "shingled._core")]
pub(crate) struct Reader {
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
