//! The request type every reader produces, and the reader trait.

use shingled_core::{blocks_of, BlockNo, Op};

/// One block I/O request as it appears in a trace.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Request {
    /// Issue time in nanoseconds, in the trace's own epoch (MSR: Windows FILETIME × 100). Only
    /// differences are meaningful. Formats without timestamps number requests 0, 1, 2, …
    pub time_ns: u64,
    /// Volume / disk / device number (MSR `DiskNumber`, Alibaba `device_id`, blkparse
    /// `major << 20 | minor`); 0 when the format has none.
    pub volume: u32,
    /// Read or write.
    pub op: Op,
    /// Byte offset on the volume.
    pub offset: u64,
    /// Length in bytes (may be 0; then it touches no block).
    pub len: u32,
}

impl Request {
    /// The 4 KiB blocks this request touches.
    #[inline]
    pub fn blocks(&self) -> std::ops::Range<BlockNo> {
        blocks_of(self.offset, self.len as u64)
    }
}

/// A streaming source of requests.
///
/// Implementations read incrementally (constant memory) and report malformed input as
/// [`crate::TraceError::Parse`] naming file, line and field, unless the reader was opened with
/// `skip_bad_lines`, in which case such lines are counted in [`TraceReader::skipped`] and skipped.
pub trait TraceReader: Send {
    /// The next request, `Ok(None)` at the end of the trace. After an error the reader's state
    /// is unspecified; callers stop.
    fn next_request(&mut self) -> Result<Option<Request>, crate::TraceError>;

    /// Lines or records skipped so far because they were malformed (only with skip_bad_lines)
    /// or filtered out (volume filter, unsupported commands): see [`TraceReader::filtered`].
    fn skipped(&self) -> u64 {
        0
    }

    /// Requests dropped by a volume filter so far.
    fn filtered(&self) -> u64 {
        0
    }

    /// Short name of the format being read (e.g. `msr`).
    fn format_name(&self) -> &'static str;
}

impl<T: TraceReader + ?Sized> TraceReader for Box<T> {
    fn next_request(&mut self) -> Result<Option<Request>, crate::TraceError> {
        (**self).next_request()
    }
    fn skipped(&self) -> u64 {
        (**self).skipped()
    }
    fn filtered(&self) -> u64 {
        (**self).filtered()
    }
    fn format_name(&self) -> &'static str {
        (**self).format_name()
    }
}

/// A reader that stops with [`crate::TraceError::Interrupted`] once `stop` is set (checked every
/// 4096 requests), so a long pass over a trace (measuring, converting) can be cancelled from
/// another thread, e.g. on Ctrl-C in Python.
pub struct Interruptible<'a, R: TraceReader + ?Sized> {
    inner: &'a mut R,
    stop: &'a std::sync::atomic::AtomicBool,
    read: u64,
}

impl<'a, R: TraceReader + ?Sized> Interruptible<'a, R> {
    /// Wraps `inner`; `stop` ends the reading.
    pub fn new(inner: &'a mut R, stop: &'a std::sync::atomic::AtomicBool) -> Self {
        Interruptible { inner, stop, read: 0 }
    }
}

impl<R: TraceReader + ?Sized> TraceReader for Interruptible<'_, R> {
    fn next_request(&mut self) -> Result<Option<Request>, crate::TraceError> {
        if self.read.is_multiple_of(4096) && self.stop.load(std::sync::atomic::Ordering::Relaxed) {
            return Err(crate::TraceError::Interrupted { requests: self.read });
        }
        self.read += 1;
        self.inner.next_request()
    }
    fn skipped(&self) -> u64 {
        self.inner.skipped()
    }
    fn filtered(&self) -> u64 {
        self.inner.filtered()
    }
    fn format_name(&self) -> &'static str {
        self.inner.format_name()
    }
}
