//! `shingled._core.TranslationLayer`: SMaRT, the dm-zoned-style layer or an emulated DM-SMR
//! drive in a file, as a block
//! device from Python (byte offsets; partial blocks are read-modified-written).

use crate::device::Device;
use pyo3::create_exception;
use pyo3::prelude::*;
use pyo3::types::PyBytes;
use shingled_core::ByteSize;
use shingled_stl::{DmSmrFileSpec, DmZonedFileSpec, SmartFileSpec, SmartStlConfig, Stl, StlError};

create_exception!(
    shingled,
    TranslationLayerError,
    crate::errors::ShingledError,
    "A translation layer (shingled.stl) failed: bad parameters, a corrupt file, an I/O error."
);

fn err(e: StlError) -> PyErr {
    TranslationLayerError::new_err(e.to_string())
}

/// A translation layer opened from a file.
#[pyclass(module = "shingled._core")]
pub struct TranslationLayer {
    dev: Device<Stl>,
}

impl TranslationLayer {
    fn new(s: Stl) -> TranslationLayer {
        TranslationLayer {
            dev: Device::new(s, TranslationLayerError::new_err, "the translation layer is closed"),
        }
    }
}

#[pymethods]
impl TranslationLayer {
    /// Creates `path` as a shingled medium and formats SMaRT on it (Python keyword arguments).
    #[allow(clippy::too_many_arguments)]
    #[staticmethod]
    #[pyo3(signature = (path, size, track_size=1 << 20, zones=4, head_width=2, utilisation=0.9, staging_tracks=8))]
    fn format_smart(
        py: Python<'_>,
        path: std::path::PathBuf,
        size: u64,
        track_size: u32,
        zones: u32,
        head_width: u32,
        utilisation: f64,
        staging_tracks: u32,
    ) -> PyResult<TranslationLayer> {
        let spec = SmartFileSpec {
            size: ByteSize(size),
            track_bytes: track_size,
            zones,
            head_width,
            config: SmartStlConfig { utilisation, staging_tracks, ..SmartStlConfig::default() },
        };
        let s = py.detach(|| Stl::format_smart(&path, &spec)).map_err(err)?;
        Ok(TranslationLayer::new(s))
    }

    /// Creates `path` as a zoned device and formats the dm-zoned-style layer on it.
    #[staticmethod]
    #[pyo3(signature = (path, size, zone_size=16 << 20, conventional=8, reserved_seq=None))]
    fn format_dm_zoned(
        py: Python<'_>,
        path: std::path::PathBuf,
        size: u64,
        zone_size: u64,
        conventional: u64,
        reserved_seq: Option<u64>,
    ) -> PyResult<TranslationLayer> {
        let spec = DmZonedFileSpec {
            size: ByteSize(size),
            zone_bytes: ByteSize(zone_size),
            conventional,
            reserved_seq,
        };
        let s = py.detach(|| Stl::format_dmzoned(&path, &spec)).map_err(err)?;
        Ok(TranslationLayer::new(s))
    }

    /// Creates `path` as an emulated DM-SMR drive: the DM-SMR model of the drive profile `drive`
    /// (PB, bands, cleaning) with its PB appends and band RMWs done for real in the file.
    /// `pb_size`: bytes, or a fraction of the capacity as text (`"1/256"`); default the
    /// profile's.
    #[staticmethod]
    #[pyo3(signature = (path, size, drive="st5000as0011-scaled", pb_size=None))]
    fn format_dm_smr(
        py: Python<'_>,
        path: std::path::PathBuf,
        size: u64,
        drive: &str,
        pb_size: Option<String>,
    ) -> PyResult<TranslationLayer> {
        let pb_size = pb_size
            .map(|p| {
                p.parse::<shingled_core::SizeSpec>()
                    .map_err(|e| TranslationLayerError::new_err(format!("invalid pb_size = {p:?}: {e}")))
            })
            .transpose()?;
        let spec = DmSmrFileSpec { size: ByteSize(size), drive: drive.to_string(), pb_size, bands: None };
        let s = py.detach(|| Stl::format_dm_smr(&path, &spec)).map_err(err)?;
        Ok(TranslationLayer::new(s))
    }

    /// Opens `path` (recovering after a crash).
    #[staticmethod]
    fn open(py: Python<'_>, path: std::path::PathBuf) -> PyResult<TranslationLayer> {
        let s = py.detach(|| Stl::open(&path)).map_err(err)?;
        Ok(TranslationLayer::new(s))
    }

    /// `"smart"`, `"dm-zoned"` or `"dm-smr"`.
    fn layer(&self, py: Python<'_>) -> PyResult<String> {
        self.dev.with(py, |d| Ok(d.inner().kind().to_string()))
    }

    /// Capacity in bytes.
    fn capacity(&self, py: Python<'_>) -> PyResult<u64> {
        self.dev.with(py, |d| Ok(d.size()))
    }

    /// Reads `length` bytes at byte `offset`.
    fn read<'py>(&self, py: Python<'py>, offset: u64, length: usize) -> PyResult<Bound<'py, PyBytes>> {
        self.dev.read(py, offset, length)
    }

    /// Writes `data` at byte `offset`.
    fn write(&self, py: Python<'_>, offset: u64, data: Vec<u8>) -> PyResult<()> {
        self.dev.write(py, offset, &data)
    }

    /// Makes every write before it durable.
    fn flush(&self, py: Python<'_>) -> PyResult<()> {
        self.dev.flush(py)
    }

    /// Forgets whole 4 KiB blocks `offset .. offset + length` (both multiples of 4096).
    fn discard(&self, py: Python<'_>, offset: u64, length: u64) -> PyResult<()> {
        self.dev.discard(py, offset, length)
    }

    /// Background work for an idle period of `seconds`.
    fn idle(&self, py: Python<'_>, seconds: f64) -> PyResult<()> {
        let dur = std::time::Duration::try_from_secs_f64(seconds)
            .map_err(|e| pyo3::exceptions::PyValueError::new_err(format!("idle({seconds}): {e}")))?;
        self.dev.with(py, |d| d.inner().idle(dur))
    }

    /// Statistics as JSON text.
    fn stats_json(&self, py: Python<'_>) -> PyResult<String> {
        self.dev.with(py, |d| Ok(d.inner().stats_json().to_string()))
    }

    /// The consistency check: one string per problem.
    fn check(&self, py: Python<'_>) -> PyResult<Vec<String>> {
        self.dev.with(py, |d| d.inner().check())
    }

    /// Flushes and closes; later calls raise.
    fn close(&self, py: Python<'_>) -> PyResult<()> {
        self.dev.take(py, |mut d| d.flush()).map(drop)
    }
}

/// Checks `path` without writing: `(layer, problems, statistics JSON)`.
#[pyfunction]
pub fn stl_inspect(py: Python<'_>, path: std::path::PathBuf) -> PyResult<(String, Vec<String>, String)> {
    let (k, p, s) = py.detach(|| shingled_stl::inspect(&path)).map_err(err)?;
    Ok((k.to_string(), p, s.to_string()))
}
