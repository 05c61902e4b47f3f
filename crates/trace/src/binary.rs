//! The `bin` trace format: a 32-byte header and fixed 24-byte little-endian records, so that
//! replaying a converted trace costs no parsing at all. `docs/trace-format.md` describes it
//! byte by byte; the constants below are the normative values.
//!
//! ```text
//! header  0..8   magic  89 53 48 47 54 52 43 0a  ("\x89SHGTRC\n")
//!         8..12  u32    format version (1)
//!         12..16 u32    flags (bit 0: time_ns holds the request index, not a time)
//!         16..24 u64    number of records, or 0 when unknown (streaming writer not finished)
//!         24..32 u64    reserved, written as 0, ignored by readers
//! record  0..8   u64    time_ns
//!         8..16  u64    offset in bytes (bits 0..63) | op in bit 63 (1 = write)
//!         16..20 u32    len in bytes
//!         20..24 u32    volume
//! ```
//!
//! Folding the op into the offset's top bit keeps a full 32-bit volume (blkparse volumes are
//! `major << 20 | minor` and need all 32 bits) in 24 bytes; byte offsets stay below 2^63
//! (8 EiB), far beyond any device.

use crate::records::{u32_at, u64_at, RecordSource};
use crate::{Request, TraceError, TraceReader};
use shingled_core::output::{Output, OutputError};
use shingled_core::Op;
use std::fs::File;
use std::io::{Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

/// The first 8 bytes of every `bin` trace. The leading non-ASCII byte keeps it from ever
/// being taken for text, and the trailing newline catches text-mode transfers.
pub const MAGIC: [u8; 8] = *b"\x89SHGTRC\n";
/// The format version this build writes and reads.
pub const VERSION: u32 = 1;
/// Size of the header in bytes.
pub const HEADER_SIZE: usize = 32;
/// Size of one record in bytes.
pub const RECORD_SIZE: usize = 24;
/// Header flag: `time_ns` is the request's index in the trace, not a time (set by `mix`).
pub const FLAG_TIME_IS_INDEX: u32 = 1;
/// Largest byte offset a record can hold (bit 63 carries the op).
pub const MAX_OFFSET: u64 = (1 << 63) - 1;

const KNOWN_FLAGS: u32 = FLAG_TIME_IS_INDEX;
const WRITE_BIT: u64 = 1 << 63;
const COUNT_AT: u64 = 16;
/// Records buffered by the writer before one `write` call.
const WRITE_BATCH: usize = 16 * 1024;

/// The decoded header of a `bin` trace.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BinaryHeader {
    /// Format version (always [`VERSION`] for files this build accepts).
    pub version: u32,
    /// Flags, e.g. [`FLAG_TIME_IS_INDEX`].
    pub flags: u32,
    /// Number of records, `None` when the writer did not finish (read to the end of file).
    pub count: Option<u64>,
}

impl BinaryHeader {
    fn encode(&self) -> [u8; HEADER_SIZE] {
        let mut h = [0u8; HEADER_SIZE];
        h[0..8].copy_from_slice(&MAGIC);
        h[8..12].copy_from_slice(&self.version.to_le_bytes());
        h[12..16].copy_from_slice(&self.flags.to_le_bytes());
        h[16..24].copy_from_slice(&self.count.unwrap_or(0).to_le_bytes());
        h
    }

    fn decode(b: &[u8], path: &Path) -> Result<BinaryHeader, TraceError> {
        let fail = |reason: String| TraceError::Format { path: path.to_path_buf(), reason };
        if b.len() < HEADER_SIZE {
            return Err(fail(format!("truncated bin header: {} of {HEADER_SIZE} bytes", b.len())));
        }
        if b[0..8] != MAGIC {
            return Err(fail("not a shingled bin trace (bad magic)".into()));
        }
        let version = u32_at(b, 8);
        if version != VERSION {
            return Err(fail(format!("bin format version {version}; this build reads version {VERSION}")));
        }
        let flags = u32_at(b, 12);
        if flags & !KNOWN_FLAGS != 0 {
            return Err(fail(format!("unknown bin header flags {flags:#x}")));
        }
        let count = u64_at(b, 16);
        Ok(BinaryHeader { version, flags, count: (count != 0).then_some(count) })
    }
}

#[inline]
fn encode(r: &Request, out: &mut Vec<u8>) {
    let op = if r.op.is_write() { WRITE_BIT } else { 0 };
    out.extend_from_slice(&r.time_ns.to_le_bytes());
    out.extend_from_slice(&(r.offset | op).to_le_bytes());
    out.extend_from_slice(&r.len.to_le_bytes());
    out.extend_from_slice(&r.volume.to_le_bytes());
}

#[inline]
fn decode(b: &[u8]) -> Request {
    let off = u64_at(b, 8);
    Request {
        time_ns: u64_at(b, 0),
        offset: off & !WRITE_BIT,
        op: if off & WRITE_BIT != 0 { Op::Write } else { Op::Read },
        len: u32_at(b, 16),
        volume: u32_at(b, 20),
    }
}

/// Writes a `bin` trace as a stream; [`BinaryWriter::finish`] patches the record count into
/// the header. A writer dropped without `finish` still flushes its records (best effort) and
/// leaves the count 0, which readers take as "read to the end".
pub struct BinaryWriter<W: Write = File> {
    /// `None` only after `finish`.
    out: Option<W>,
    path: PathBuf,
    buf: Vec<u8>,
    flags: u32,
    count: u64,
}

impl BinaryWriter<File> {
    /// Creates (or truncates) `path` and writes the header.
    pub fn create(path: &Path) -> Result<Self, TraceError> {
        Self::create_with_flags(path, 0)
    }

    /// Like [`BinaryWriter::create`] with header flags (e.g. [`FLAG_TIME_IS_INDEX`]).
    pub fn create_with_flags(path: &Path, flags: u32) -> Result<Self, TraceError> {
        let f = File::create(path).map_err(|source| TraceError::Io { path: path.to_path_buf(), source })?;
        BinaryWriter::new(f, path.to_path_buf(), flags)
    }
}

impl<W: Write> BinaryWriter<W> {
    /// Writes the header to `out` at its current position, which must be the start. `path`
    /// names the destination in errors.
    pub fn new(mut out: W, path: PathBuf, flags: u32) -> Result<Self, TraceError> {
        if flags & !KNOWN_FLAGS != 0 {
            return Err(TraceError::Invalid(format!("unknown bin header flags {flags:#x}")));
        }
        let h = BinaryHeader { version: VERSION, flags, count: None };
        out.write_all(&h.encode()).map_err(|source| TraceError::Io { path: path.clone(), source })?;
        Ok(BinaryWriter {
            out: Some(out),
            path,
            buf: Vec::with_capacity(WRITE_BATCH * RECORD_SIZE),
            flags,
            count: 0,
        })
    }

    /// Appends one request. Offsets above [`MAX_OFFSET`] are refused.
    #[inline]
    pub fn write(&mut self, r: &Request) -> Result<(), TraceError> {
        if r.offset > MAX_OFFSET {
            return Err(TraceError::Invalid(format!(
                "{}: request {} has offset {} beyond the bin format's limit of 2^63 - 1",
                self.path.display(),
                self.count + 1,
                r.offset
            )));
        }
        encode(r, &mut self.buf);
        self.count += 1;
        if self.buf.len() >= WRITE_BATCH * RECORD_SIZE {
            self.flush_buf()?;
        }
        Ok(())
    }

    /// Records written so far.
    pub fn count(&self) -> u64 {
        self.count
    }

    /// The header flags this writer was created with.
    pub fn flags(&self) -> u32 {
        self.flags
    }

    fn flush_buf(&mut self) -> Result<(), TraceError> {
        if let Some(out) = self.out.as_mut() {
            out.write_all(&self.buf).map_err(|source| TraceError::Io { path: self.path.clone(), source })?;
        }
        self.buf.clear();
        Ok(())
    }

    /// Flushes and returns the underlying writer and the number of records, leaving the
    /// header's count "unknown" (the reader reads to the end): for a destination that cannot
    /// seek back to the header (a FIFO, a device).
    pub fn finish_unsized(mut self) -> Result<(W, u64), TraceError> {
        self.flush_buf()?;
        let mut out = self.out.take().expect("present until finish");
        out.flush().map_err(|source| TraceError::Io { path: self.path.clone(), source })?;
        Ok((out, self.count))
    }
}

impl<W: Write + Seek> BinaryWriter<W> {
    /// Flushes, records the count in the header, and returns the underlying writer and the
    /// number of records.
    pub fn finish(mut self) -> Result<(W, u64), TraceError> {
        self.flush_buf()?;
        let mut out = self.out.take().expect("present until finish");
        let io = |source| TraceError::Io { path: self.path.clone(), source };
        let end = out.stream_position().map_err(io)?;
        out.seek(SeekFrom::Start(COUNT_AT)).map_err(io)?;
        out.write_all(&self.count.to_le_bytes()).map_err(io)?;
        out.seek(SeekFrom::Start(end)).map_err(io)?;
        out.flush().map_err(io)?;
        Ok((out, self.count))
    }
}

impl<W: Write> Drop for BinaryWriter<W> {
    fn drop(&mut self) {
        if self.out.is_some() {
            let _ = self.flush_buf();
            if let Some(out) = self.out.as_mut() {
                let _ = out.flush();
            }
        }
    }
}

/// Reads a `bin` trace, decoding straight out of large chunks.
pub struct BinaryReader {
    src: RecordSource,
    header: BinaryHeader,
    /// Records still expected when the header declares a count.
    remaining: u64,
    volume: Option<u32>,
    filtered: u64,
}

impl BinaryReader {
    /// Opens a `bin` trace file (uncompressed; use [`crate::open`] for `.gz`).
    pub fn open(path: &Path) -> Result<Self, TraceError> {
        let f = File::open(path).map_err(|source| TraceError::Io { path: path.to_path_buf(), source })?;
        Self::from_source(RecordSource::new(Vec::new(), Box::new(f), path.to_path_buf()), None)
    }

    pub(crate) fn from_source(mut src: RecordSource, volume: Option<u32>) -> Result<Self, TraceError> {
        let have = src.fill(HEADER_SIZE)?;
        let header = BinaryHeader::decode(&src.buf[src.start..src.start + have.min(HEADER_SIZE)], &src.path)?;
        src.start += HEADER_SIZE;
        Ok(BinaryReader { src, header, remaining: header.count.unwrap_or(u64::MAX), volume, filtered: 0 })
    }

    /// The file's header.
    pub fn header(&self) -> &BinaryHeader {
        &self.header
    }

    /// Appends up to `max` requests to `out` (after the volume filter) and returns how many;
    /// 0 means the end. Decodes whole buffered chunks in one loop, so it is the fastest way to
    /// read a `bin` trace when the caller can work in batches.
    pub fn next_batch(&mut self, out: &mut Vec<Request>, max: usize) -> Result<usize, TraceError> {
        let before = out.len();
        while out.len() - before < max {
            let want = (max - (out.len() - before)) as u64;
            let buffered = ((self.src.end - self.src.start) / RECORD_SIZE) as u64;
            let n = want.min(buffered).min(self.remaining) as usize;
            if n == 0 {
                // Nothing whole in the buffer (or the declared count reached): one record the
                // slow way refills the buffer and handles the end of the trace.
                match self.next_request()? {
                    Some(r) => out.push(r),
                    None => break,
                }
                continue;
            }
            let bytes = &self.src.buf[self.src.start..self.src.start + n * RECORD_SIZE];
            out.reserve(n);
            match self.volume {
                None => out.extend(bytes.chunks_exact(RECORD_SIZE).map(decode)),
                Some(v) => {
                    let kept = out.len();
                    out.extend(bytes.chunks_exact(RECORD_SIZE).map(decode).filter(|r| r.volume == v));
                    self.filtered += (n - (out.len() - kept)) as u64;
                }
            }
            self.src.start += n * RECORD_SIZE;
            self.src.taken += n as u64;
            if self.header.count.is_some() {
                self.remaining -= n as u64;
            }
        }
        Ok(out.len() - before)
    }

    #[cold]
    fn at_end(&mut self, clean_eof: bool) -> Result<Option<Request>, TraceError> {
        let path = self.src.path.clone();
        match self.header.count {
            Some(n) if !clean_eof => Err(TraceError::Format {
                path,
                reason: format!("trailing bytes after the {n} records the header declares"),
            }),
            Some(n) if self.remaining != 0 => Err(TraceError::Parse {
                path,
                line: self.src.taken + 1,
                field: "record",
                value: format!("{} of {n} records", self.src.taken),
                reason: "the file ends before the record count its header declares".into(),
            }),
            _ => Ok(None),
        }
    }
}

impl TraceReader for BinaryReader {
    fn next_batch(&mut self, out: &mut Vec<Request>, max: usize) -> Result<usize, TraceError> {
        BinaryReader::next_batch(self, out, max)
    }
    #[inline]
    fn next_request(&mut self) -> Result<Option<Request>, TraceError> {
        loop {
            if self.remaining == 0 {
                let eof = self.src.at_eof()?;
                return self.at_end(eof);
            }
            let Some(at) = self.src.next(RECORD_SIZE)? else { return self.at_end(true) };
            if self.header.count.is_some() {
                self.remaining -= 1;
            }
            let r = decode(&self.src.buf[at..at + RECORD_SIZE]);
            if self.volume.is_some_and(|v| v != r.volume) {
                self.filtered += 1;
                continue;
            }
            return Ok(Some(r));
        }
    }
    fn filtered(&self) -> u64 {
        self.filtered
    }
    fn format_name(&self) -> &'static str {
        "bin"
    }
}

/// Requests whose set words are prefetched together before they are counted.
const PREFETCH_GROUP: usize = 32;

/// The number of records of the `bin` trace file `f` (at `path`), if its header is valid and
/// its size matches it (a whole number of records, as many as the header declares if it does);
/// `None` otherwise (its reader reports the problem).
pub(crate) fn whole_records(f: &File, path: &Path) -> Option<u64> {
    use std::os::unix::fs::FileExt;
    let size = f.metadata().ok()?.len();
    let mut head = [0u8; HEADER_SIZE];
    f.read_exact_at(&mut head, 0).ok()?;
    let header = BinaryHeader::decode(&head, path).ok()?;
    let data = size.checked_sub(HEADER_SIZE as u64)?;
    let records = data / RECORD_SIZE as u64;
    (data % RECORD_SIZE as u64 == 0 && header.count.is_none_or(|n| n == records)).then_some(records)
}

/// Byte offset of record `i` (0-based) in a `bin` file.
pub(crate) fn record_at(i: u64) -> u64 {
    HEADER_SIZE as u64 + i * RECORD_SIZE as u64
}

/// Adds the whole records in `bytes` to `t`, keeping only `volume`'s if given; returns the
/// number of records filtered out.
pub(crate) fn tally_records(bytes: &[u8], t: &mut crate::stats::Tally, volume: Option<u32>) -> u64 {
    let mut filtered = 0u64;
    for group in bytes.chunks(PREFETCH_GROUP * RECORD_SIZE) {
        // First prefetch the set words this group of requests will update, all at once, so
        // their cache misses overlap; then count the requests.
        for rec in group.chunks_exact(RECORD_SIZE) {
            t.prefetch(u64_at(rec, 8) & !WRITE_BIT);
        }
        for rec in group.chunks_exact(RECORD_SIZE) {
            let off = u64_at(rec, 8);
            let vol = u32_at(rec, 20);
            if volume.is_some_and(|v| v != vol) {
                filtered += 1;
                continue;
            }
            t.add(u64_at(rec, 0), off & !WRITE_BIT, off & WRITE_BIT != 0, u32_at(rec, 16), vol);
        }
    }
    filtered
}

/// What [`convert`] did.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct ConvertSummary {
    /// Requests written.
    pub requests: u64,
    /// Lines or records the reader skipped (see [`TraceReader::skipped`]).
    pub skipped: u64,
    /// Requests the reader's volume filter dropped.
    pub filtered: u64,
    /// Size of the output file in bytes.
    pub bytes: u64,
}

/// Writes every request of `reader` to a new `bin` trace at `out`.
pub fn convert(reader: &mut dyn TraceReader, out: &Path) -> Result<ConvertSummary, TraceError> {
    let requests = write_atomically(out, 0, |w| {
        while let Some(r) = reader.next_request()? {
            w.write(&r)?;
        }
        Ok(())
    })?;
    Ok(ConvertSummary {
        requests,
        skipped: reader.skipped(),
        filtered: reader.filtered(),
        bytes: HEADER_SIZE as u64 + requests * RECORD_SIZE as u64,
    })
}

/// [`convert`] that also measures the trace's statistics over `bands` in the same pass (what
/// [`crate::trace_stats`] of the written file returns: format `bin`, nothing skipped or
/// filtered), so they can be kept beside the file and a later run need not read it twice.
pub fn convert_with_stats(
    reader: &mut dyn TraceReader,
    out: &Path,
    bands: &shingled_core::BandConfig,
) -> Result<(ConvertSummary, crate::TraceStats), TraceError> {
    /// Hands each request to the writer as the statistics read it.
    struct Tee<'a, 'w> {
        inner: &'a mut dyn TraceReader,
        w: &'w mut BinaryWriter<Output>,
    }
    impl TraceReader for Tee<'_, '_> {
        fn next_request(&mut self) -> Result<Option<Request>, TraceError> {
            let r = self.inner.next_request()?;
            if let Some(r) = &r {
                self.w.write(r)?;
            }
            Ok(r)
        }
        fn format_name(&self) -> &'static str {
            "bin"
        }
    }
    let mut stats = None;
    let requests = write_atomically(out, 0, |w| {
        stats = Some(crate::trace_stats(&mut Tee { inner: reader, w }, bands)?);
        Ok(())
    })?;
    let mut stats = stats.expect("the statistics were measured");
    (stats.skipped, stats.filtered) = (0, 0);
    let summary = ConvertSummary {
        requests,
        skipped: reader.skipped(),
        filtered: reader.filtered(),
        bytes: HEADER_SIZE as u64 + requests * RECORD_SIZE as u64,
    };
    Ok((summary, stats))
}

/// An error if `out` is one of the `inputs` (by device and inode, so hard and symbolic links
/// count). Synthetic specs and paths that do not exist yet cannot be.
pub fn refuse_same_file(inputs: &[&str], out: &Path) -> Result<(), TraceError> {
    use std::os::unix::fs::MetadataExt;
    let Ok(o) = std::fs::metadata(out) else { return Ok(()) };
    for input in inputs {
        if input.starts_with("synth:") {
            continue;
        }
        if let Ok(i) = std::fs::metadata(input) {
            if i.dev() == o.dev() && i.ino() == o.ino() {
                return Err(TraceError::Invalid(format!(
                    "the output {} is the input {input} (the same file): writing it would destroy the trace; \
                     choose another output path",
                    out.display()
                )));
            }
        }
    }
    Ok(())
}

/// Writes a binary trace through `body` to the output `out` (`shingled_core::output`): a
/// regular file through a temporary beside it renamed over it, so a failure (a bad input line,
/// a full disk) leaves `out` as it was and no temporary behind; a device or FIFO written
/// through (its header declares no count, the reader reads to the end). Returns the number of
/// records.
pub(crate) fn write_atomically(
    out: &Path,
    flags: u32,
    body: impl FnOnce(&mut BinaryWriter<Output>) -> Result<(), TraceError>,
) -> Result<u64, TraceError> {
    let io = |e: OutputError| TraceError::Io { path: e.path, source: e.source };
    let dest = Output::create(out).map_err(io)?;
    let seekable = dest.is_file();
    let mut w = BinaryWriter::new(dest, out.to_path_buf(), flags)?;
    body(&mut w)?;
    let (dest, n) = if seekable { w.finish()? } else { w.finish_unsized()? };
    dest.commit().map_err(io)?;
    Ok(n)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Cursor;

    fn req(i: u64, op: Op) -> Request {
        Request { time_ns: i * 10, volume: i as u32, op, offset: MAX_OFFSET - i, len: i as u32 * 512 }
    }

    fn reader_over(bytes: Vec<u8>) -> BinaryReader {
        BinaryReader::from_source(
            RecordSource::new(Vec::new(), Box::new(Cursor::new(bytes)), "t.bin".into()),
            None,
        )
        .unwrap()
    }

    #[test]
    fn round_trip_in_memory() {
        let mut w = BinaryWriter::new(Cursor::new(Vec::new()), "t.bin".into(), FLAG_TIME_IS_INDEX).unwrap();
        let reqs: Vec<_> = (0..5).map(|i| req(i, if i % 2 == 0 { Op::Write } else { Op::Read })).collect();
        for r in &reqs {
            w.write(r).unwrap();
        }
        let (cur, n) = w.finish().unwrap();
        assert_eq!(n, 5);
        let bytes = cur.into_inner();
        assert_eq!(bytes.len(), HEADER_SIZE + 5 * RECORD_SIZE);
        let mut r = reader_over(bytes);
        assert_eq!(r.header().count, Some(5));
        assert_eq!(r.header().flags, FLAG_TIME_IS_INDEX);
        let mut got = Vec::new();
        r.next_batch(&mut got, 100).unwrap();
        assert_eq!(got, reqs);
    }

    #[test]
    fn count_mismatches_are_errors() {
        let mut w = BinaryWriter::new(Cursor::new(Vec::new()), "t.bin".into(), 0).unwrap();
        w.write(&req(1, Op::Read)).unwrap();
        w.write(&req(2, Op::Read)).unwrap();
        let bytes = w.finish().unwrap().0.into_inner();
        let mut short = bytes.clone();
        short.truncate(HEADER_SIZE + RECORD_SIZE);
        let mut r = reader_over(short);
        r.next_request().unwrap().unwrap();
        let e = r.next_request().unwrap_err().to_string();
        assert!(e.contains("t.bin:2: field record"), "{e}");
        let mut long = bytes;
        long.extend_from_slice(&[0; RECORD_SIZE]);
        let mut r = reader_over(long);
        r.next_request().unwrap().unwrap();
        r.next_request().unwrap().unwrap();
        assert!(r.next_request().unwrap_err().to_string().contains("trailing bytes"));
    }

    #[test]
    fn unfinished_writer_streams_to_eof() {
        let mut buf = Cursor::new(Vec::new());
        {
            let mut w = BinaryWriter::new(&mut buf, "t.bin".into(), 0).unwrap();
            w.write(&req(3, Op::Write)).unwrap();
        }
        let mut r = reader_over(buf.into_inner());
        assert_eq!(r.header().count, None);
        assert_eq!(r.next_request().unwrap(), Some(req(3, Op::Write)));
        assert_eq!(r.next_request().unwrap(), None);
    }

    #[test]
    fn offsets_beyond_the_limit_are_refused() {
        let mut w = BinaryWriter::new(Cursor::new(Vec::new()), "t.bin".into(), 0).unwrap();
        let mut r = req(0, Op::Read);
        r.offset = MAX_OFFSET + 1;
        assert!(matches!(w.write(&r), Err(TraceError::Invalid(_))));
    }

    #[test]
    fn bad_headers() {
        let err = |b: Vec<u8>| {
            BinaryReader::from_source(
                RecordSource::new(Vec::new(), Box::new(Cursor::new(b)), "t.bin".into()),
                None,
            )
            .err()
            .unwrap()
            .to_string()
        };
        assert!(err(MAGIC[..5].to_vec()).contains("truncated bin header"));
        assert!(err(vec![0; 32]).contains("bad magic"));
        let mut h = BinaryHeader { version: 2, flags: 0, count: None }.encode().to_vec();
        assert!(err(h.clone()).contains("version 2"));
        h[8] = 1;
        h[12] = 0x80;
        assert!(err(h).contains("flags"));
    }
}
