//! `shingled._core.BlockCache`: the SSD block cache (`shingled-blockcache`) from Python — a
//! cache device in a file in front of a backing file, block device or translation layer, as a
//! byte-addressed device (partial blocks are read-modified-written); plus the read-only
//! inspection, the loss report and the data-path replay of a simulation configuration.
//!
//! Reports cross as JSON text, as everywhere in this crate; the Python layer
//! (`python/shingled/blockcache.py`) parses it.

use crate::device::Device;
use pyo3::create_exception;
use pyo3::prelude::*;
use pyo3::types::PyBytes;
use shingled_blockcache::files::{self, FileCache};
use shingled_blockcache::replay::{self, ReplayError, ReplayOptions};
use shingled_blockcache::{CacheOptions, CacheSetup, Loss, Mode};
use shingled_cache::PolicyConfig;
use shingled_core::{BandConfig, ByteSize};
use shingled_stl::{BlockDevice, FileBlock, StlError};
use std::path::PathBuf;
use std::sync::atomic::Ordering;

create_exception!(
    shingled,
    BlockCacheError,
    crate::errors::ShingledError,
    "The block cache (shingled.blockcache) failed: bad parameters, a corrupt or detached cache \
     device, an I/O error, a replay whose data path read wrong bytes."
);

fn err(e: StlError) -> PyErr {
    BlockCacheError::new_err(e.to_string())
}

/// A replay error: configuration and trace errors keep the simulator's exception classes.
fn replay_err(e: ReplayError) -> PyErr {
    match e {
        ReplayError::Sim(e) => crate::errors::sim_err(e),
        e => BlockCacheError::new_err(e.to_string()),
    }
}

/// A cache device in a file (or on a block device) in front of a backing device.
#[pyclass(module = "shingled._core")]
pub struct BlockCache {
    dev: Device<FileCache>,
}

impl BlockCache {
    fn new(c: FileCache) -> BlockCache {
        BlockCache { dev: Device::new(c, BlockCacheError::new_err, "the block cache is closed") }
    }
}

#[pymethods]
impl BlockCache {
    /// Formats `cache_path` as a cache of `backing_path` (`shingled cache create`). A missing
    /// cache file is created with `size` bytes; an existing one is used whole, and refused when
    /// it already holds a cache unless `force`.
    #[allow(clippy::too_many_arguments)]
    #[staticmethod]
    #[pyo3(signature = (cache_path, backing_path, size=None, mode="read-write", policy="lru", capacity=None,
                        reserve=None, sequential_cutoff=None, pb_blocks=None, band_size=None, force=false))]
    fn create(
        py: Python<'_>,
        cache_path: PathBuf,
        backing_path: PathBuf,
        size: Option<u64>,
        mode: &str,
        policy: &str,
        capacity: Option<u32>,
        reserve: Option<u32>,
        sequential_cutoff: Option<u64>,
        pb_blocks: Option<u64>,
        band_size: Option<u64>,
        force: bool,
    ) -> PyResult<BlockCache> {
        let mode = mode.parse::<Mode>().map_err(|e| BlockCacheError::new_err(e.to_string()))?;
        let policy = policy.parse::<PolicyConfig>().map_err(|e| BlockCacheError::new_err(e.to_string()))?;
        let opts = CacheOptions {
            setup: CacheSetup {
                mode,
                policy,
                bands: band_size.map(|b| BandConfig::Fixed { size: ByteSize(b) }),
                pb_blocks,
                sequential_cutoff,
                ..CacheSetup::default()
            },
            capacity,
            reserve,
            slots: None,
        };
        let c = py.detach(|| files::create(&cache_path, &backing_path, size, &opts, force)).map_err(err)?;
        Ok(BlockCache::new(c))
    }

    /// Opens (and after a crash recovers) the cache at `cache_path` over `backing_path`, or over
    /// the backing device its superblock records; `backing_moved` accepts a backing device
    /// other than the one the cache was created over.
    #[staticmethod]
    #[pyo3(signature = (cache_path, backing_path=None, backing_moved=false))]
    fn open(
        py: Python<'_>,
        cache_path: PathBuf,
        backing_path: Option<PathBuf>,
        backing_moved: bool,
    ) -> PyResult<BlockCache> {
        let c =
            py.detach(|| files::open(&cache_path, backing_path.as_deref(), backing_moved)).map_err(err)?;
        Ok(BlockCache::new(c))
    }

    /// Size of the cached device (the backing device's) in bytes.
    fn size(&self, py: Python<'_>) -> PyResult<u64> {
        self.dev.with(py, |d| Ok(d.size()))
    }

    /// The cache mode's name (`read-write`, …).
    fn mode(&self, py: Python<'_>) -> PyResult<&'static str> {
        self.dev.with(py, |d| Ok(d.inner().mode().name()))
    }

    /// The policy's name.
    fn policy(&self, py: Python<'_>) -> PyResult<&'static str> {
        self.dev.with(py, |d| Ok(d.inner().policy_name()))
    }

    /// Blocks the policy manages.
    fn capacity(&self, py: Python<'_>) -> PyResult<u32> {
        self.dev.with(py, |d| Ok(d.inner().capacity()))
    }

    /// Reads `length` bytes at byte `offset`.
    fn read<'py>(&self, py: Python<'py>, offset: u64, length: usize) -> PyResult<Bound<'py, PyBytes>> {
        self.dev.read(py, offset, length)
    }

    /// Writes `data` at byte `offset`.
    fn write(&self, py: Python<'_>, offset: u64, data: Vec<u8>) -> PyResult<()> {
        self.dev.write(py, offset, &data)
    }

    /// Commits: every write before it survives a crash of either device's power.
    fn flush(&self, py: Python<'_>) -> PyResult<()> {
        self.dev.flush(py)
    }

    /// Forgets whole 4 KiB blocks `offset .. offset + length` (both multiples of 4096).
    fn discard(&self, py: Python<'_>, offset: u64, length: u64) -> PyResult<()> {
        self.dev.discard(py, offset, length)
    }

    /// The cache's counters (`shingled_blockcache::Stats`) as JSON text.
    fn stats_json(&self, py: Python<'_>) -> PyResult<String> {
        self.dev.with(py, |d| Ok(crate::config::to_json(&d.inner().stats())))
    }

    /// What the committed metadata says (`shingled cache stats`), read through this handle, as
    /// JSON text.
    fn inspect_json(&self, py: Python<'_>) -> PyResult<String> {
        self.dev.with(py, |d| d.inner().inspect().map(|i| crate::config::to_json(&i)))
    }

    /// The cached dirty blocks, ascending.
    fn dirty_blocks(&self, py: Python<'_>) -> PyResult<Vec<u64>> {
        self.dev.with(py, |d| Ok(d.inner().dirty_blocks()))
    }

    /// Writes back every dirty block and commits them clean; returns the blocks written back.
    fn clean(&self, py: Python<'_>) -> PyResult<u64> {
        self.dev.with(py, |d| d.inner().clean())
    }

    /// Cleans, then marks the cache device detached: the backing device alone holds every
    /// block, and the cache device opens no more until formatted again. Closes this object.
    fn detach(&self, py: Python<'_>) -> PyResult<()> {
        let r = self.dev.take(py, |d| {
            let (mut backing, _cache) = d.into_inner().detach()?;
            backing.flush()
        })?;
        r.ok_or_else(|| self.dev.closed_err())
    }

    /// Flushes (commits) and closes, the cache staying attached; later calls raise.
    fn close(&self, py: Python<'_>) -> PyResult<()> {
        self.dev.take(py, |d| d.into_inner().close().map(drop)).map(drop)
    }

    /// Whether the cache is closed (closed, or detached).
    #[getter]
    fn closed(&self) -> bool {
        self.dev.is_closed()
    }
}

/// What the metadata of the cache at `cache_path` says (`Inspection`), as JSON; writes nothing.
#[pyfunction]
pub fn cache_inspect(py: Python<'_>, cache_path: PathBuf) -> PyResult<String> {
    py.detach(|| files::inspect_file(&cache_path)).map(|i| crate::config::to_json(&i)).map_err(err)
}

/// What `backing_path` alone lacks without its cache device, from the metadata of
/// `cache_path` when given (`shingled_blockcache::lost_blocks`), as JSON
/// `{"known", "detached", "ranges": [[start, end], …], "blocks"}` (blocks, end exclusive).
#[pyfunction]
#[pyo3(signature = (backing_path, cache_path=None))]
pub fn cache_lost_blocks(
    py: Python<'_>,
    backing_path: PathBuf,
    cache_path: Option<PathBuf>,
) -> PyResult<String> {
    let loss = py
        .detach(|| {
            let backing = files::open_device(&backing_path)?;
            match &cache_path {
                Some(p) => {
                    let mut meta = FileBlock::open_read_only(p)?;
                    shingled_blockcache::lost_blocks(&backing, Some(&mut meta))
                }
                None => shingled_blockcache::lost_blocks::<_, FileBlock>(&backing, None),
            }
        })
        .map_err(err)?;
    let v = match loss {
        Loss::Unknown => serde_json::json!({
            "known": false, "detached": false, "ranges": [], "blocks": null,
        }),
        Loss::Known { detached, ranges, blocks } => serde_json::json!({
            "known": true,
            "detached": detached,
            "ranges": ranges.iter().map(|r| [r.start, r.end]).collect::<Vec<_>>(),
            "blocks": blocks,
        }),
    };
    Ok(v.to_string())
}

/// Replays the trace of configuration `config` (JSON) through the real data path
/// (`shingled cache replay`) and, with `compare`, runs the simulator on it too; returns JSON
/// `{"replay": ReplayReport, "sim": RunReport or null, "differences": [Difference, …]}`. The
/// GIL is released; Ctrl-C stops the trace measurement and the simulator run, the replay itself
/// only when it ends.
#[pyfunction]
#[pyo3(signature = (config, reserve=None, flush_every=None, final_check=true, metadata_on_clock=true, compare=true))]
pub fn cache_replay(
    py: Python<'_>,
    config: &str,
    reserve: Option<u32>,
    flush_every: Option<u64>,
    final_check: bool,
    metadata_on_clock: bool,
    compare: bool,
) -> PyResult<String> {
    let cfg = crate::config::parse_config(config)?;
    let opts = ReplayOptions { reserve, flush_every, final_check, metadata_on_clock };
    crate::sim::interruptible(py, |stop| -> Result<String, ReplayError> {
        let stats = shingled_sim::measure_until(&cfg.trace, &cfg.drive.bands_or_default(), stop)?;
        let rep = replay::replay(&cfg, &stats, &opts, &mut |_| {})?;
        if stop.load(Ordering::Relaxed) {
            return Err(shingled_sim::SimError::Cancelled { requests: 0 }.into());
        }
        let (sim, diffs) = if compare {
            let sim = shingled_sim::run_with(&cfg, &stats, &mut |_| {}, Some(stop))?;
            let d = replay::differences(&sim, &rep.run);
            (Some(sim), d)
        } else {
            (None, Vec::new())
        };
        Ok(serde_json::json!({ "replay": rep, "sim": sim, "differences": diffs }).to_string())
    })?
    .map_err(replay_err)
}
