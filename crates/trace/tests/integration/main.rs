//! Integration tests of `shingled-trace`, compiled as one binary (STYLE.md). Fixtures live in
//! `tests/data/traces/` at the workspace root; `tests/data/traces/README.md` lists what each
//! one holds.

mod ahead;
mod binary;
mod detect;
mod errors;
mod formats;
mod fuzz;
mod mix;
mod oracle;
mod real;
mod stats;

use shingled_core::Op;
use shingled_trace::{open, OpenOptions, Request, TraceReader};
use std::path::{Path, PathBuf};

/// Path of a committed fixture.
pub fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/data/traces").join(name)
}

/// Every request of a reader, then its skipped and filtered counts.
pub fn drain(r: &mut dyn TraceReader) -> (Vec<Request>, u64, u64) {
    let mut v = Vec::new();
    while let Some(q) = r.next_request().unwrap() {
        v.push(q);
    }
    (v, r.skipped(), r.filtered())
}

/// Opens `path` with `opts` and reads it all.
pub fn read_all(path: &Path, opts: &OpenOptions) -> (Vec<Request>, u64, u64) {
    let mut r = open(path.to_str().unwrap(), opts).unwrap();
    drain(&mut *r)
}

/// Shorthand for a request.
pub fn req(time_ns: u64, volume: u32, op: Op, offset: u64, len: u32) -> Request {
    Request { time_ns, volume, op, offset, len }
}

/// Writes `content` to a file called `name` in a fresh temporary directory.
pub fn temp_file(name: &str, content: &[u8]) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join(name);
    std::fs::write(&p, content).unwrap();
    (dir, p)
}

/// Options with only the format set.
pub fn with_format(f: shingled_trace::Format) -> OpenOptions {
    OpenOptions { format: Some(f), ..OpenOptions::default() }
}
