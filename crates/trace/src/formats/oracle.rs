//! libCacheSim's binary trace format, oracleGeneral (`libCacheSim/traceReader/customizedReader/
//! oracle/oracleGeneralBin.h`), read and written.
//!
//! No header; packed little-endian records of 24 bytes:
//!
//! ```text
//! 0..4   u32 clock time (seconds)
//! 4..12  u64 object id
//! 12..16 u32 object size (bytes)
//! 16..24 i64 next access: the 1-based position in the file of the object's next request,
//!            -1 when there is none (libCacheSim's traceConv convention)
//! ```
//!
//! libCacheSim's objects are ids, ours are byte addresses: object `id` is the 4 KiB block `id`,
//! i.e. the request `offset = id × 4096, len = 4096`, whatever the size field says (libCacheSim's
//! `--ignore-obj-size 1`). The format has no op: requests read as reads unless
//! [`OpenOptions::oracle_op`](crate::OpenOptions) says otherwise. Writing goes the other way:
//! one record per 4 KiB block of every request, time = `time_ns / 10^9` (truncated to 32 bits),
//! size 4096, and the next access worked out in a backward pass over the written records
//! (memory: one hash map entry per distinct block, plus one chunk of records).

use crate::records::{u32_at, u64_at, RecordSource};
use crate::{Request, TraceError, TraceReader};
use rustc_hash::FxHashMap;
use shingled_core::Op;
use std::fs::{File, OpenOptions as FsOpen};
use std::io::{BufWriter, Read, Seek, SeekFrom, Write};
use std::path::Path;

/// Size of one record.
pub const RECORD_SIZE: usize = 24;
/// The block an object id stands for.
pub const BLOCK: u64 = 4096;

/// Reads oracleGeneral records as 4 KiB block requests.
pub(crate) struct OracleReader {
    src: RecordSource,
    op: Op,
}

impl OracleReader {
    pub(crate) fn new(src: RecordSource, op: Op) -> Self {
        OracleReader { src, op }
    }
}

/// One record decoded: (time, id, size, next access).
pub(crate) fn decode(r: &[u8]) -> (u32, u64, u32, i64) {
    (u32_at(r, 0), u64_at(r, 4), u32_at(r, 12), u64_at(r, 16) as i64)
}

impl TraceReader for OracleReader {
    fn next_request(&mut self) -> Result<Option<Request>, TraceError> {
        let Some(at) = self.src.next(RECORD_SIZE)? else { return Ok(None) };
        let (t, id, _size, _next) = decode(&self.src.buf[at..at + RECORD_SIZE]);
        let offset = id.checked_mul(BLOCK).filter(|o| o.checked_add(BLOCK).is_some()).ok_or_else(|| {
            TraceError::Parse {
                path: self.src.path.clone(),
                line: self.src.taken,
                field: "obj_id",
                value: id.to_string(),
                reason: "object id too large: id × 4096 overflows a 64-bit byte offset".into(),
            }
        })?;
        Ok(Some(Request {
            time_ns: t as u64 * 1_000_000_000,
            volume: 0,
            op: self.op,
            offset,
            len: BLOCK as u32,
        }))
    }
    fn format_name(&self) -> &'static str {
        "oracleGeneral"
    }
}

/// What [`write_oracle_general`] wrote.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OracleSummary {
    /// Requests read.
    pub requests: u64,
    /// Records written (4 KiB blocks).
    pub records: u64,
    /// Distinct blocks (objects).
    pub objects: u64,
}

/// Writes every 4 KiB block of every request of `reader` to `out` as oracleGeneral records,
/// next-access times included; `out` ending in `.zst` is zstd-compressed (level 3). Writes go
/// to a temporary file beside `out`, renamed over it at the end, so a failure leaves `out` as it
/// was.
pub fn write_oracle_general(reader: &mut dyn TraceReader, out: &Path) -> Result<OracleSummary, TraceError> {
    let zst = out.extension().is_some_and(|e| e.eq_ignore_ascii_case("zst"));
    // Beside the output (so the final rename is atomic), unless the output is a device or FIFO
    // (/dev/null), whose directory may not be writable.
    let special = std::fs::metadata(out).is_ok_and(|m| !m.is_file());
    let tmp_dir = std::env::temp_dir();
    let dir = match out.parent().filter(|p| !p.as_os_str().is_empty()) {
        _ if special => tmp_dir.as_path(),
        Some(p) => p,
        None => Path::new("."),
    };
    let name = out.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let io = |p: &Path| {
        let p = p.to_path_buf();
        move |source| TraceError::Io { path: p.clone(), source }
    };
    let raw_path = dir.join(format!(".{name}.{}.raw", std::process::id()));
    let res = (|| {
        let f = FsOpen::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(true)
            .open(&raw_path)
            .map_err(io(&raw_path))?;
        let mut w = BufWriter::with_capacity(1 << 20, f);
        let (mut requests, mut records) = (0u64, 0u64);
        let mut rec = [0u8; RECORD_SIZE];
        rec[12..16].copy_from_slice(&(BLOCK as u32).to_le_bytes());
        rec[16..24].copy_from_slice(&(-1i64).to_le_bytes());
        while let Some(q) = reader.next_request()? {
            requests += 1;
            rec[0..4].copy_from_slice(&((q.time_ns / 1_000_000_000) as u32).to_le_bytes());
            for b in q.blocks() {
                rec[4..12].copy_from_slice(&b.to_le_bytes());
                w.write_all(&rec).map_err(io(&raw_path))?;
                records += 1;
            }
        }
        let mut f = w.into_inner().map_err(|e| io(&raw_path)(e.into_error()))?;
        let objects = fill_next_access(&mut f, records, &raw_path)?;
        f.seek(SeekFrom::Start(0)).map_err(io(&raw_path))?;
        if special {
            // A device or FIFO (/dev/null, a pipe) is written into, never replaced.
            let o = FsOpen::new().write(true).open(out).map_err(io(out))?;
            copy_out(&mut f, o, zst, out)?;
            let _ = std::fs::remove_file(&raw_path);
        } else if zst {
            let tmp = dir.join(format!(".{name}.{}.tmp", std::process::id()));
            let r = File::create(&tmp)
                .map_err(io(&tmp))
                .and_then(|o| copy_out(&mut f, o, true, &tmp))
                .and_then(|()| std::fs::rename(&tmp, out).map_err(io(out)));
            if r.is_err() {
                let _ = std::fs::remove_file(&tmp);
            }
            r?;
            let _ = std::fs::remove_file(&raw_path);
        } else {
            std::fs::rename(&raw_path, out).map_err(io(out))?;
        }
        Ok(OracleSummary { requests, records, objects })
    })();
    if res.is_err() {
        let _ = std::fs::remove_file(&raw_path);
    }
    res
}

/// Copies the finished records to `o`, zstd-compressed (level 3) when `zst`.
fn copy_out(f: &mut File, mut o: File, zst: bool, path: &Path) -> Result<(), TraceError> {
    let io = |source| TraceError::Io { path: path.to_path_buf(), source };
    if zst {
        let mut enc = zstd::stream::write::Encoder::new(o, 3).map_err(io)?;
        std::io::copy(f, &mut enc).map_err(io)?;
        o = enc.finish().map_err(io)?;
    } else {
        std::io::copy(f, &mut o).map_err(io)?;
    }
    o.flush().map_err(io)
}

/// Records per chunk of the backward pass.
const CHUNK: u64 = 64 * 1024;

/// Fills the next-access field of the `n` records in `f` (written with -1): reads the file
/// backwards a chunk at a time, remembering each object's latest-seen (i.e. next) position.
/// Returns the number of distinct objects.
fn fill_next_access(f: &mut File, n: u64, path: &Path) -> Result<u64, TraceError> {
    let io = |source| TraceError::Io { path: path.to_path_buf(), source };
    let mut next: FxHashMap<u64, u64> = FxHashMap::default();
    let mut buf = vec![0u8; (CHUNK as usize) * RECORD_SIZE];
    let mut end = n;
    while end > 0 {
        let start = end.saturating_sub(CHUNK);
        let bytes = &mut buf[..((end - start) as usize) * RECORD_SIZE];
        f.seek(SeekFrom::Start(start * RECORD_SIZE as u64)).map_err(io)?;
        f.read_exact(bytes).map_err(io)?;
        for i in (0..(end - start) as usize).rev() {
            let r = &mut bytes[i * RECORD_SIZE..(i + 1) * RECORD_SIZE];
            let id = u64_at(r, 4);
            // 1-based position of this record, as libCacheSim's vtime counts.
            let pos = start + i as u64 + 1;
            let nx = next.insert(id, pos).map_or(-1i64, |p| p as i64);
            r[16..24].copy_from_slice(&nx.to_le_bytes());
        }
        f.seek(SeekFrom::Start(start * RECORD_SIZE as u64)).map_err(io)?;
        f.write_all(bytes).map_err(io)?;
        end = start;
    }
    f.flush().map_err(io)?;
    Ok(next.len() as u64)
}
