//! A binary trace's statistics kept beside it (`TRACE.stats.json`), so that a run whose sizes
//! are relative (cache 2% of the accessed range, PB 1/256 of the written range) needs no
//! measuring pass over the trace. `shingled trace convert` writes them in the pass that writes
//! the file; [`crate::measure`] reads them, and adds what it measured for another band layout
//! or trace option.
//!
//! An entry is used only while the trace file has the size and modification time it had when
//! the entry was written, and only for the same trace options (format, volume, limit, LBA
//! scaling) and band layout. Only `bin` traces get a statistics file (a text trace may live in
//! a folder that is not ours); failing to write one is not an error.

use crate::TraceSpec;
use serde::{Deserialize, Serialize};
use shingled_core::BandConfig;
use shingled_trace::TraceStats;
use std::path::{Path, PathBuf};

/// The format version of the statistics file.
const VERSION: u32 = 1;

#[derive(Serialize, Deserialize)]
struct StatsFile {
    version: u32,
    /// The trace file's size and modification time (ns since the epoch) when written.
    trace_bytes: u64,
    trace_mtime_ns: u64,
    entries: Vec<Entry>,
}

#[derive(Serialize, Deserialize)]
struct Entry {
    /// The trace options (the path left out) and the band layout.
    key: serde_json::Value,
    stats: TraceStats,
}

/// Where the statistics of the trace at `path` are kept.
pub fn stats_path(path: &str) -> PathBuf {
    PathBuf::from(format!("{path}.stats.json"))
}

fn key(spec: &TraceSpec, bands: &BandConfig) -> serde_json::Value {
    let mut s = spec.clone();
    s.path = String::new();
    serde_json::json!({ "spec": s, "bands": bands })
}

/// Size and modification time of a `bin` trace file; `None` for anything else.
fn identity(path: &str) -> Option<(u64, u64)> {
    if path.starts_with("synth:") {
        return None;
    }
    let p = Path::new(path);
    let m = std::fs::metadata(p).ok().filter(|m| m.is_file())?;
    if shingled_trace::detect_format(p).ok()? != shingled_trace::Format::Bin {
        return None;
    }
    let mtime = m.modified().ok()?.duration_since(std::time::UNIX_EPOCH).ok()?.as_nanos() as u64;
    Some((m.len(), mtime))
}

fn read(path: &str, id: (u64, u64)) -> Option<StatsFile> {
    let text = std::fs::read(stats_path(path)).ok()?;
    let f: StatsFile = serde_json::from_slice(&text).ok()?;
    (f.version == VERSION && (f.trace_bytes, f.trace_mtime_ns) == id).then_some(f)
}

/// The kept statistics of `spec`'s trace over `bands`, if a current entry exists.
pub fn load(spec: &TraceSpec, bands: &BandConfig) -> Option<TraceStats> {
    let id = identity(&spec.path)?;
    let k = key(spec, bands);
    read(&spec.path, id)?.entries.into_iter().find(|e| e.key == k).map(|e| e.stats)
}

/// Keeps `stats` of `spec`'s trace over `bands` beside a `bin` trace (replacing an entry with
/// the same key, dropping entries of an older version of the file). Returns whether it did.
pub fn save(spec: &TraceSpec, bands: &BandConfig, stats: &TraceStats) -> bool {
    let Some(id) = identity(&spec.path) else { return false };
    let mut f = read(&spec.path, id).unwrap_or(StatsFile {
        version: VERSION,
        trace_bytes: id.0,
        trace_mtime_ns: id.1,
        entries: Vec::new(),
    });
    let k = key(spec, bands);
    f.entries.retain(|e| e.key != k);
    f.entries.push(Entry { key: k, stats: stats.clone() });
    let Ok(text) = serde_json::to_vec_pretty(&f) else { return false };
    // the one output writer: atomic beside a regular file, and a unique temporary per call (runs
    // on several threads may measure the same trace)
    shingled_core::output::write_output(&stats_path(&spec.path), &text).is_ok()
}

/// Converts the trace at `input` to a `bin` trace at `out` and keeps its statistics beside it
/// (over the default drive's band layout, measured in the same pass), so that runs on `out`
/// with relative sizes read it once. Stops with `TraceError::Interrupted` once `stop` is set.
pub fn convert_keeping_stats(
    input: &str,
    opts: &shingled_trace::OpenOptions,
    out: &Path,
    stop: &std::sync::atomic::AtomicBool,
) -> Result<shingled_trace::ConvertSummary, shingled_trace::TraceError> {
    shingled_trace::refuse_same_file(&[input], out)?;
    let mut reader = shingled_trace::open(input, opts)?;
    let bands = crate::SimConfig::default().drive.bands_or_default();
    let (summary, stats) = shingled_trace::convert_with_stats(
        &mut shingled_trace::Interruptible::new(&mut *reader, stop),
        out,
        &bands,
    )?;
    let spec = TraceSpec { path: out.to_string_lossy().into_owned(), ..TraceSpec::default() };
    save(&spec, &bands, &stats);
    Ok(summary)
}
