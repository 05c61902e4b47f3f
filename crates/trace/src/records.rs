//! Fixed-size binary records read a big chunk at a time (shared by `vscsi` and `bin`).

use crate::text::{read_some, BUF_SIZE};
use crate::TraceError;
use std::io::Read;
use std::path::PathBuf;

/// A buffered source of fixed-size records. Records are handed out as offsets into `buf` so
/// decoding reads straight from the chunk without copying.
pub(crate) struct RecordSource {
    inner: Box<dyn Read + Send>,
    pub(crate) buf: Vec<u8>,
    pub(crate) start: usize,
    pub(crate) end: usize,
    eof: bool,
    /// Records handed out so far; the next one is record `taken + 1` (1-based, as errors say).
    pub(crate) taken: u64,
    pub(crate) path: PathBuf,
}

impl RecordSource {
    pub(crate) fn new(prefix: Vec<u8>, inner: Box<dyn Read + Send>, path: PathBuf) -> RecordSource {
        let end = prefix.len();
        let mut buf = prefix;
        if buf.len() < BUF_SIZE {
            buf.resize(BUF_SIZE, 0);
        }
        RecordSource { inner, buf, start: 0, end, eof: false, taken: 0, path }
    }

    /// Makes at least `n` bytes available in `buf[start..end]` unless the input ends first;
    /// returns how many are available.
    pub(crate) fn fill(&mut self, n: usize) -> Result<usize, TraceError> {
        while self.end - self.start < n && !self.eof {
            if self.start > 0 {
                self.buf.copy_within(self.start..self.end, 0);
                self.end -= self.start;
                self.start = 0;
            }
            if self.end == self.buf.len() {
                let grow = self.buf.len().max(n);
                self.buf.resize(grow * 2, 0);
            }
            let got = read_some(&mut *self.inner, &mut self.buf[self.end..], &self.path)?;
            if got == 0 {
                self.eof = true;
            }
            self.end += got;
        }
        Ok(self.end - self.start)
    }

    /// Offset in `buf` of the next record of `size` bytes; `None` at a clean end of input. A
    /// partial record at the end is an error naming it.
    #[inline]
    pub(crate) fn next(&mut self, size: usize) -> Result<Option<usize>, TraceError> {
        if self.end - self.start < size {
            let have = self.fill(size)?;
            if have == 0 {
                return Ok(None);
            }
            if have < size {
                return Err(self.truncated(size, have));
            }
        }
        let at = self.start;
        self.start += size;
        self.taken += 1;
        Ok(Some(at))
    }

    #[cold]
    fn truncated(&self, size: usize, have: usize) -> TraceError {
        TraceError::Parse {
            path: self.path.clone(),
            line: self.taken + 1,
            field: "record",
            value: format!("{have} bytes"),
            reason: format!("truncated record: the file ends {have} bytes into a {size}-byte record"),
        }
    }

    /// Whether the input has no more bytes.
    pub(crate) fn at_eof(&mut self) -> Result<bool, TraceError> {
        Ok(self.fill(1)? == 0)
    }
}

#[inline]
pub(crate) fn u16_at(b: &[u8], at: usize) -> u16 {
    u16::from_le_bytes([b[at], b[at + 1]])
}

#[inline]
pub(crate) fn u32_at(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(b[at..at + 4].try_into().expect("4 bytes"))
}

#[inline]
pub(crate) fn u64_at(b: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(b[at..at + 8].try_into().expect("8 bytes"))
}
