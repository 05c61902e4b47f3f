//! `shingled._core`: the PyO3 layer under the `shingled` Python package.
//!
//! The layer is thin on purpose: configurations and reports cross the boundary as the same
//! serde JSON the CLI prints (`--output json`), so every metric the CLI reports reaches Python
//! and the Python package (`python/shingled/`) builds plain objects from it. Long runs release
//! the GIL and stay interruptible (see [`sim`]).
//!
//! One module per topic: [`errors`] (the exceptions), [`config`], [`sim`], [`trace`], the chunk
//! store ([`store`] over [`chunks`]), its benches ([`bench`]), the translation layers ([`stl`]),
//! the block cache ([`blockcache`], both over [`device`]) and the drive probes ([`probe`]). This
//! file registers them.

use pyo3::prelude::*;

mod bench;
mod blockcache;
mod chunks;
mod config;
mod device;
mod errors;
mod probe;
mod replay;
mod sim;
mod stl;
mod store;
mod trace;

/// Large tables on transparent huge pages, as in the `shingled` binary (`shingled_core::mem`).
#[global_allocator]
static ALLOC: shingled_core::mem::HugePageAlloc = shingled_core::mem::HugePageAlloc;

/// The `shingled._core` extension module.
#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    use errors::*;
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
    m.add("ZonedError", py.get_type::<ZonedError>())?;
    m.add("ProbeError", py.get_type::<ProbeError>())?;
    m.add("PROGRESS_EVERY", shingled_sim::PROGRESS_EVERY)?;
    m.add("RECORD_BYTES", trace::RECORD)?;
    m.add_class::<trace::Reader>()?;
    m.add_class::<store::ChunkApi>()?;
    m.add_class::<store::ChunkStore>()?;
    m.add_class::<store::StoreFront>()?;
    m.add_class::<stl::TranslationLayer>()?;
    m.add("TranslationLayerError", py.get_type::<stl::TranslationLayerError>())?;
    m.add_function(wrap_pyfunction!(stl::stl_inspect, m)?)?;
    m.add_class::<blockcache::BlockCache>()?;
    m.add("BlockCacheError", py.get_type::<blockcache::BlockCacheError>())?;
    m.add_function(wrap_pyfunction!(blockcache::cache_inspect, m)?)?;
    m.add_function(wrap_pyfunction!(blockcache::cache_lost_blocks, m)?)?;
    m.add_function(wrap_pyfunction!(blockcache::cache_replay, m)?)?;
    m.add("ReplayTargetError", py.get_type::<replay::ReplayTargetError>())?;
    m.add_function(wrap_pyfunction!(replay::replay, m)?)?;
    m.add_function(wrap_pyfunction!(config::config_default, m)?)?;
    m.add_function(wrap_pyfunction!(config::config_from_toml, m)?)?;
    m.add_function(wrap_pyfunction!(config::config_normalize, m)?)?;
    m.add_function(wrap_pyfunction!(config::config_to_toml, m)?)?;
    m.add_function(wrap_pyfunction!(config::config_label, m)?)?;
    m.add_function(wrap_pyfunction!(config::scheme_config, m)?)?;
    m.add_function(wrap_pyfunction!(config::policies, m)?)?;
    m.add_function(wrap_pyfunction!(config::parse_policy, m)?)?;
    m.add_function(wrap_pyfunction!(config::drive_profiles, m)?)?;
    m.add_function(wrap_pyfunction!(config::drive_profile, m)?)?;
    m.add_function(wrap_pyfunction!(config::apply_setup, m)?)?;
    m.add_function(wrap_pyfunction!(config::setups_list, m)?)?;
    m.add_function(wrap_pyfunction!(sim::simulate, m)?)?;
    m.add_function(wrap_pyfunction!(sim::run_configs, m)?)?;
    m.add_function(wrap_pyfunction!(sim::compare, m)?)?;
    m.add_function(wrap_pyfunction!(sim::experiments_list, m)?)?;
    m.add_function(wrap_pyfunction!(sim::experiment_fixed, m)?)?;
    m.add_function(wrap_pyfunction!(sim::experiment, m)?)?;
    m.add_function(wrap_pyfunction!(sim::curve, m)?)?;
    m.add_function(wrap_pyfunction!(sim::curve_merge, m)?)?;
    m.add_function(wrap_pyfunction!(sim::curve_spread, m)?)?;
    m.add_function(wrap_pyfunction!(trace::trace_stats, m)?)?;
    m.add_function(wrap_pyfunction!(trace::convert, m)?)?;
    m.add_function(wrap_pyfunction!(trace::mix, m)?)?;
    m.add_function(wrap_pyfunction!(bench::store_benches, m)?)?;
    m.add_function(wrap_pyfunction!(bench::store_bench, m)?)?;
    m.add_function(wrap_pyfunction!(probe::probe, m)?)?;
    Ok(())
}
