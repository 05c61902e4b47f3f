//! `shingled._core.ChunkStore` and `shingled._core.StoreFront`: a chunk store on one zoned
//! device and a front over several, as the Python package's `ChunkStore` and `StoreFront`.
//!
//! Both extend one base class, [`ChunkApi`] (`_core._ChunkApi`, as `shingled.store._ChunkApi`
//! is the base of the Python classes): it holds the open store or front as a
//! `Box<dyn Chunks>` ([`crate::chunks`]), whatever its devices (files or memory), and carries
//! every method the two share. The subclasses add their constructors and their own methods.

use crate::chunks::{info_json, Chunks, Reclaimed};
use crate::errors::{front_err, store_err, zoned_err, ConfigError, StoreError};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict};
use pyo3::PyClass;
use shingled_core::ByteSize;
use shingled_store::{read_format, ChunkId, Durability, Placement, Store, StoreConfig, StreamType};
use shingled_zoned::{Dialect, FileOptions, FileZoned, IoMode, MemZoned, ZonedConfig};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

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

fn durability_name(d: Durability) -> &'static str {
    match d {
        Durability::EveryAppend => "every-append",
        Durability::Batched => "batched",
    }
}

fn file_opts() -> FileOptions {
    FileOptions { io_mode: IoMode::Buffered }
}

/// Most zones a device made from Python may have: the zone tables are allocated when the
/// device is made, so a mistyped count must be refused before, not abort the interpreter.
const MAX_ZONES: u64 = 1 << 24;
/// Most drives of an in-memory `StoreFront`.
const MAX_DRIVES: usize = 4096;

/// Refuses a zone count above [`MAX_ZONES`] and a `zones × zone_size` that overflows.
fn check_geometry(zones: u64, zone_size: u64) -> PyResult<u64> {
    if zones > MAX_ZONES {
        return Err(PyValueError::new_err(format!("zones = {zones}: at most {MAX_ZONES} zones")));
    }
    zones.checked_mul(zone_size).ok_or_else(|| {
        PyValueError::new_err(format!("zones = {zones} × zone_size = {zone_size} overflows 64 bits"))
    })
}

/// `n` in-memory devices of `zones` zones of `zone_size` bytes (a positive multiple of 1024).
fn mem_devices(n: usize, zones: u64, zone_size: u64) -> PyResult<Vec<MemZoned>> {
    if zone_size == 0 || !zone_size.is_multiple_of(1024) {
        return Err(PyValueError::new_err(format!("zone_size {zone_size}: a positive multiple of 1024")));
    }
    check_geometry(zones, zone_size)?;
    if n > MAX_DRIVES {
        return Err(PyValueError::new_err(format!("drives = {n}: at most {MAX_DRIVES}")));
    }
    (0..n)
        .map(|_| MemZoned::new(&ZonedConfig::small(zones, zone_size / 1024, Dialect::Zbc)))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| PyValueError::new_err(format!("device geometry: {e}")))
}

/// Opens device file `path` and recovers the store on it, with the configuration it was
/// formatted with (its superzone record) unless `config` overrides it; returns the store and
/// that configuration.
fn open_store_file(
    py: Python<'_>,
    path: &Path,
    config: Option<&Bound<'_, PyDict>>,
    read_only: bool,
) -> PyResult<(Store<FileZoned>, StoreConfig)> {
    let mut dev = py.detach(|| FileZoned::open(path, file_opts())).map_err(zoned_err)?;
    let stored = py.detach(|| read_format(&mut dev)).map_err(store_err)?;
    let cfg = store_config(stored.config, config)?;
    let c = cfg.clone();
    let st = py
        .detach(move || if read_only { Store::open_read_only(dev, c) } else { Store::open(dev, c) })
        .map_err(store_err)?;
    Ok((st, cfg))
}

/// What `ChunkStore` and `StoreFront` share: the open store or front (None once closed), the
/// configuration it reopens with, and the chunk API.
#[pyclass(subclass, name = "_ChunkApi", module = "shingled._core")]
pub(crate) struct ChunkApi {
    inner: Mutex<Option<Box<dyn Chunks>>>,
    cfg: StoreConfig,
    /// Opened read-only (`Store::open_read_only`): reopen stays read-only, close writes nothing.
    read_only: bool,
    /// The message of the `StoreError` raised once closed.
    closed: &'static str,
}

/// A class over [`ChunkApi`]: `ChunkStore` or `StoreFront`.
trait ChunkClass: PyClass<BaseType = ChunkApi> + Default {
    /// The message of the `StoreError` raised once it is closed.
    const CLOSED: &'static str;
}

/// The Python object of class `T` over the open store or front `c`.
fn wrap<T: ChunkClass>(
    py: Python<'_>,
    c: impl Chunks + 'static,
    cfg: StoreConfig,
    read_only: bool,
) -> PyResult<Py<T>> {
    let base = ChunkApi { inner: Mutex::new(Some(Box::new(c))), cfg, read_only, closed: T::CLOSED };
    Py::new(py, PyClassInitializer::from(base).add_subclass(T::default()))
}

impl ChunkApi {
    /// Runs `f` on the open store or front with the GIL released.
    fn with<R: Send>(
        &self,
        py: Python<'_>,
        f: impl FnOnce(&mut dyn Chunks) -> PyResult<R> + Send,
    ) -> PyResult<R> {
        py.detach(|| match self.inner.lock().unwrap().as_deref_mut() {
            None => Err(StoreError::new_err(self.closed)),
            Some(c) => f(c),
        })
    }
}

#[pymethods]
impl ChunkApi {
    /// Creates an empty chunk of stream type `stream` (0 data, 1 metadata, 2 GC, …); a front
    /// returns the drive placement picked.
    fn create(&self, py: Python<'_>, id: &Bound<'_, PyAny>, stream: u8) -> PyResult<Option<usize>> {
        let id = chunk_id(id)?;
        self.with(py, |c| c.create(id, StreamType(stream)))
    }

    /// Appends `data` to chunk `id`.
    fn append(&self, py: Python<'_>, id: &Bound<'_, PyAny>, data: &[u8]) -> PyResult<()> {
        let id = chunk_id(id)?;
        self.with(py, |c| c.append(id, data))
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
        let v = self.with(py, |c| {
            let len = match length {
                Some(l) => l,
                None => c
                    .chunk(id)
                    .ok_or_else(|| store_err(shingled_store::StoreError::NoSuchChunk(id)))?
                    .1
                    .len
                    .saturating_sub(offset),
            };
            c.read(id, offset, len)
        })?;
        Ok(PyBytes::new(py, &v))
    }

    /// Seals chunk `id` (no more appends).
    fn seal(&self, py: Python<'_>, id: &Bound<'_, PyAny>) -> PyResult<()> {
        let id = chunk_id(id)?;
        self.with(py, |c| c.seal(id))
    }

    /// Deletes chunk `id`.
    fn delete(&self, py: Python<'_>, id: &Bound<'_, PyAny>) -> PyResult<()> {
        let id = chunk_id(id)?;
        self.with(py, |c| c.delete(id))
    }

    /// Makes every append so far durable (a front: every drive, one thread per drive).
    fn sync(&self, py: Python<'_>) -> PyResult<()> {
        self.with(py, |c| c.sync())
    }

    /// One GC round: the zone reclaimed or None (a front: one per drive).
    fn gc(&self, py: Python<'_>) -> PyResult<Reclaimed> {
        self.with(py, |c| c.gc())
    }

    /// Every chunk (id order) as a JSON list of objects (a front: with its `drive`).
    fn list(&self, py: Python<'_>) -> PyResult<String> {
        self.with(py, |c| {
            let v: Vec<serde_json::Value> = c.list().iter().map(|(d, i)| info_json(*d, i)).collect();
            Ok(serde_json::Value::from(v).to_string())
        })
    }

    /// Statistics as JSON (a store: counters, zone census and index memory; a front: per-drive
    /// counters and totals).
    fn stats(&self, py: Python<'_>) -> PyResult<String> {
        self.with(py, |c| Ok(c.stats()))
    }

    /// `Store::fsck` as JSON (problems name zone, offset, chunk and chunk offset; a front: a
    /// list, one report per drive).
    fn fsck(&self, py: Python<'_>) -> PyResult<String> {
        self.with(py, |c| c.fsck())
    }

    /// Drops the store without syncing (what a crash leaves) and opens it again: recovery (a
    /// front rebuilds its chunk → drive map by listing the drives).
    fn reopen(&self, py: Python<'_>) -> PyResult<()> {
        py.detach(|| {
            let mut g = self.inner.lock().unwrap();
            let c = g.take().ok_or_else(|| StoreError::new_err(self.closed))?;
            *g = Some(c.reopen(self.cfg.clone(), self.read_only)?);
            Ok(())
        })
    }

    /// Syncs, checkpoints and releases the devices (read-only: only releases them). Further
    /// calls raise StoreError.
    fn close(&self, py: Python<'_>) -> PyResult<()> {
        py.detach(|| {
            let mut g = self.inner.lock().unwrap();
            let r = match g.as_deref_mut() {
                None => return Ok(()),
                Some(_) if self.read_only => Ok(()),
                Some(c) => c.sync_and_checkpoint(),
            };
            *g = None;
            r
        })
    }

    /// Whether the store is closed.
    #[getter]
    fn closed(&self) -> bool {
        self.inner.lock().unwrap().is_none()
    }
}

/// A chunk store (`shingled_store::Store`) on an emulated zoned device file or in memory.
#[pyclass(extends = ChunkApi, module = "shingled._core")]
#[derive(Default)]
pub(crate) struct ChunkStore;

impl ChunkClass for ChunkStore {
    const CLOSED: &'static str = "the chunk store is closed";
}

#[pymethods]
impl ChunkStore {
    /// Creates device file `path` (`zones` zones of `zone_size` bytes, the first
    /// `conventional` conventional) and formats it.
    #[staticmethod]
    #[pyo3(signature = (path, zones, zone_size, conventional=1, max_open=128, config=None))]
    fn create_file(
        py: Python<'_>,
        path: PathBuf,
        zones: u64,
        zone_size: u64,
        conventional: u64,
        max_open: u32,
        config: Option<Bound<'_, PyDict>>,
    ) -> PyResult<Py<ChunkStore>> {
        let cfg = store_config(StoreConfig::default(), config.as_ref())?;
        let zc = ZonedConfig {
            capacity: ByteSize(check_geometry(zones, zone_size)?),
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
        wrap(py, st, cfg, false)
    }

    /// Formats the existing device file `path` (every chunk on it is lost).
    #[staticmethod]
    #[pyo3(signature = (path, config=None))]
    fn format_file(
        py: Python<'_>,
        path: PathBuf,
        config: Option<Bound<'_, PyDict>>,
    ) -> PyResult<Py<ChunkStore>> {
        let cfg = store_config(StoreConfig::default(), config.as_ref())?;
        let c = cfg.clone();
        let st = py.detach(move || {
            let dev = FileZoned::open(&path, file_opts()).map_err(zoned_err)?;
            Store::format(dev, c).map_err(store_err)
        })?;
        wrap(py, st, cfg, false)
    }

    /// Opens (and recovers) the store on device file `path`, with the pools and placement it
    /// was formatted with (its superzone record) unless `config` overrides them. `read_only`:
    /// `Store::open_read_only` (recovery into memory, nothing ever written to the file; the
    /// calls that change the store raise ReadOnlyError).
    #[staticmethod]
    #[pyo3(signature = (path, config=None, read_only=false))]
    fn open_file(
        py: Python<'_>,
        path: PathBuf,
        config: Option<Bound<'_, PyDict>>,
        read_only: bool,
    ) -> PyResult<Py<ChunkStore>> {
        let (st, cfg) = open_store_file(py, &path, config.as_ref(), read_only)?;
        wrap(py, st, cfg, read_only)
    }

    /// A formatted store on an in-memory device (`zones` zones of `zone_size` bytes).
    #[staticmethod]
    #[pyo3(signature = (zones, zone_size, config=None))]
    fn in_memory(
        py: Python<'_>,
        zones: u64,
        zone_size: u64,
        config: Option<Bound<'_, PyDict>>,
    ) -> PyResult<Py<ChunkStore>> {
        let cfg = store_config(StoreConfig::default(), config.as_ref())?;
        let dev = mem_devices(1, zones, zone_size)?.remove(0);
        let st = Store::format(dev, cfg.clone()).map_err(store_err)?;
        wrap(py, st, cfg, false)
    }

    /// Whether the store was opened read-only.
    #[getter]
    fn read_only(slf: PyRef<'_, Self>) -> bool {
        slf.as_super().read_only
    }

    /// The configuration in force, as JSON.
    fn config(slf: PyRef<'_, Self>) -> String {
        let c = &slf.as_super().cfg;
        serde_json::json!({
            "nr_metazones": c.nr_metazones, "pool_gc": c.pool_gc, "pool_data": c.pool_data,
            "pool_metadata": c.pool_metadata, "placement": placement_name(c.placement),
            "durability": durability_name(c.durability),
            "metadata_chunk_limit": c.metadata_chunk_limit, "gc_free_zones": c.gc_free_zones,
            "gc_stop_free_zones": c.gc_stop_free_zones, "gc_step_bytes": c.gc_step_bytes,
            "gc_max_bandwidth": c.gc_max_bandwidth, "max_record": c.max_record,
            "checkpoint_every_bytes": c.checkpoint_every_bytes, "ckpt_step_bytes": c.ckpt_step_bytes,
            "scan_buffer_bytes": c.scan_buffer_bytes,
        })
        .to_string()
    }

    /// Writes a checkpoint (bounds the next recovery's scan).
    fn checkpoint(slf: PyRef<'_, Self>, py: Python<'_>) -> PyResult<()> {
        slf.as_super().with(py, |c| c.checkpoint())
    }

    /// One chunk as JSON, or None.
    fn chunk(slf: PyRef<'_, Self>, py: Python<'_>, id: &Bound<'_, PyAny>) -> PyResult<Option<String>> {
        let id = chunk_id(id)?;
        slf.as_super().with(py, |c| Ok(c.chunk(id).map(|(_, i)| info_json(None, &i).to_string())))
    }
}

/// Several chunk stores, one per drive, behind one chunk API (`shingled_store::StoreFront`).
#[pyclass(extends = ChunkApi, module = "shingled._core")]
#[derive(Default)]
pub(crate) struct StoreFront;

impl ChunkClass for StoreFront {
    const CLOSED: &'static str = "the store front is closed";
}

#[pymethods]
impl StoreFront {
    /// Opens (and recovers) the stores on device files `paths` (any order), each with the
    /// configuration it was formatted with unless `config` overrides it.
    /// `read_only`: every drive with `Store::open_read_only` (nothing written to the files).
    #[staticmethod]
    #[pyo3(signature = (paths, config=None, read_only=false))]
    fn open_files(
        py: Python<'_>,
        paths: Vec<PathBuf>,
        config: Option<Bound<'_, PyDict>>,
        read_only: bool,
    ) -> PyResult<Py<StoreFront>> {
        let key = |p: &PathBuf| std::fs::canonicalize(p).unwrap_or_else(|_| p.clone());
        for (i, p) in paths.iter().enumerate() {
            if paths[..i].iter().any(|q| key(q) == key(p)) {
                return Err(PyValueError::new_err(format!("device {} is given twice", p.display())));
            }
        }
        let mut stores = Vec::new();
        let mut cfg0 = None;
        for p in &paths {
            let (st, cfg) = open_store_file(py, p, config.as_ref(), read_only)?;
            stores.push(st);
            cfg0.get_or_insert(cfg);
        }
        let f = shingled_store::StoreFront::from_stores(stores).map_err(front_err)?;
        wrap(py, f, cfg0.unwrap_or_default(), read_only)
    }

    /// `drives` formatted in-memory devices of `zones` zones of `zone_size` bytes.
    #[staticmethod]
    #[pyo3(signature = (drives, zones, zone_size, config=None))]
    fn in_memory(
        py: Python<'_>,
        drives: usize,
        zones: u64,
        zone_size: u64,
        config: Option<Bound<'_, PyDict>>,
    ) -> PyResult<Py<StoreFront>> {
        let cfg = store_config(StoreConfig::default(), config.as_ref())?;
        let devs = mem_devices(drives, zones, zone_size)?;
        let f = shingled_store::StoreFront::format(devs, cfg.clone()).map_err(front_err)?;
        wrap(py, f, cfg, false)
    }

    /// The drive holding chunk `id`, or None.
    fn drive_of(slf: PyRef<'_, Self>, py: Python<'_>, id: &Bound<'_, PyAny>) -> PyResult<Option<usize>> {
        let id = chunk_id(id)?;
        slf.as_super().with(py, |c| Ok(c.drive_of(id)))
    }
}
