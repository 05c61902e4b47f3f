//! The Python exceptions of `shingled` and the conversions of the Rust errors into them (the
//! Rust message unchanged). `TranslationLayerError` and `BlockCacheError` live with their
//! classes (`stl.rs`, `blockcache.rs`).
//!
//! The exceptions' module is `shingled` (which re-exports them), so that `pickle` finds them by
//! name: errors cross process pools and Ray workers, and `except shingled.ShingledError` catches
//! a failing sweep point's error there too.

use pyo3::create_exception;
use pyo3::exceptions::PyException;
use pyo3::PyErr;
use shingled_sim::SimError;
use shingled_store::FrontError;

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
create_exception!(
    shingled,
    ProbeError,
    ShingledError,
    "A PB-capacity or band probe failed (shingled_probe::ProbeError): an unknown drive profile or one \
     without a persistent buffer, a parameter out of bounds, no cliff or no band found."
);
create_exception!(
    shingled,
    ZonedError,
    StoreError,
    "The zoned device under a chunk store failed (shingled_zoned::ZonedError): a file that is not \
     an emulated zoned device or whose header is corrupt, a refused zone command, an I/O error. \
     A StoreError, as these errors were before they had their own class."
);

/// The Python exception of a simulation error.
pub(crate) fn sim_err(e: SimError) -> PyErr {
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

pub(crate) fn trace_err(e: shingled_trace::TraceError) -> PyErr {
    TraceError::new_err(e.to_string())
}

/// The Python exception of a store error, carrying `msg`.
pub(crate) fn store_exc(e: &shingled_store::StoreError, msg: String) -> PyErr {
    use shingled_store::StoreError as E;
    match e {
        E::NoSuchChunk(_) => NoSuchChunk::new_err(msg),
        E::CorruptData { .. } | E::CorruptMeta { .. } => CorruptionError::new_err(msg),
        E::Config(_) => ConfigError::new_err(msg),
        E::ReadOnly => ReadOnlyError::new_err(msg),
        E::Device { .. } => ZonedError::new_err(msg),
        _ => StoreError::new_err(msg),
    }
}

pub(crate) fn store_err(e: shingled_store::StoreError) -> PyErr {
    store_exc(&e, e.to_string())
}

pub(crate) fn zoned_err(e: shingled_zoned::ZonedError) -> PyErr {
    ZonedError::new_err(e.to_string())
}

/// A front error as the exception of the store error inside (message naming the drive).
pub(crate) fn front_err(e: FrontError) -> PyErr {
    let msg = e.to_string();
    match &e {
        FrontError::Drive { source, .. } => store_exc(source, msg),
        FrontError::NoSuchChunk(_) => NoSuchChunk::new_err(msg),
        _ => StoreError::new_err(msg),
    }
}

pub(crate) fn probe_err(e: shingled_probe::ProbeError) -> PyErr {
    ProbeError::new_err(e.to_string())
}
