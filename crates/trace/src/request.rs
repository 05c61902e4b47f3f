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

    /// Appends up to `max` requests to `out` and returns how many; 0 means the end. The same
    /// requests and errors as `max` calls of [`TraceReader::next_request`] (after an error,
    /// the requests appended before it are the caller's to drop or use). Readers that can decode
    /// several at once override it: one call per batch instead of one per request.
    fn next_batch(&mut self, out: &mut Vec<Request>, max: usize) -> Result<usize, crate::TraceError> {
        let before = out.len();
        while out.len() - before < max {
            match self.next_request()? {
                Some(r) => out.push(r),
                None => break,
            }
        }
        Ok(out.len() - before)
    }
}

impl<T: TraceReader + ?Sized> TraceReader for Box<T> {
    fn next_request(&mut self) -> Result<Option<Request>, crate::TraceError> {
        (**self).next_request()
    }
    fn next_batch(&mut self, out: &mut Vec<Request>, max: usize) -> Result<usize, crate::TraceError> {
        (**self).next_batch(out, max)
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

/// Rescales a trace's addresses as SMaRT §5.4 does to cover a drive: every offset is multiplied
/// by `factor`, then, with `fold`, taken modulo `fold` bytes ("trimmed with modular operation
/// to fit in the accessed LBA range"). A request that would cross the fold's end is moved back
/// to end there (sizes never change). `fold` is rounded down to whole 4 KiB blocks. With
/// `spread`, the folded range's 4 MiB cells are then placed evenly, in order, over
/// `[0, spread)` (cell `c` of `n` → `⌊c·m/n⌋` of `m`), so a drive that lays `[0, fold)` out over
/// its whole surface (SMaRT at utilisation U) and one that does not see the same positions.
pub struct Rescaled<R: TraceReader> {
    inner: R,
    factor: u64,
    fold: Option<u64>,
    /// `(n, m)`: the fold's cells and the spread's.
    spread: Option<(u64, u64)>,
}

/// Cells that a spread keeps together ([`Rescaled`]'s, and a synthetic trace's `span`).
pub const SPREAD_CELL: u64 = 4 << 20;

/// The cells (`n`, `m`) that spread `[0, from)` over `[0, to)`: `None` when `to` has no more
/// whole cells than `from` needs (nothing to spread).
pub(crate) fn spread_cells(from: u64, to: u64) -> Option<(u64, u64)> {
    let (n, m) = (from.div_ceil(SPREAD_CELL), to / SPREAD_CELL);
    (m > n).then_some((n, m))
}

/// `off` spread by `(n, m)`: its cell `c` moves to `⌊c·m/n⌋`, its place inside the cell stays.
#[inline]
pub(crate) fn spread_offset(off: u64, (n, m): (u64, u64)) -> u64 {
    off / SPREAD_CELL * m / n * SPREAD_CELL + off % SPREAD_CELL
}

impl<R: TraceReader> Rescaled<R> {
    /// Wraps `inner`. `factor` ≥ 1; `fold`, when given, at least 1 MiB.
    pub fn new(inner: R, factor: u64, fold: Option<u64>) -> Result<Self, crate::TraceError> {
        if factor == 0 {
            return Err(crate::TraceError::Invalid("LBA scale factor 0: expected 1 or more".into()));
        }
        let fold = fold.map(|f| f / 4096 * 4096);
        if fold.is_some_and(|f| f < 1 << 20) {
            return Err(crate::TraceError::Invalid(format!(
                "fold {} bytes: expected at least 1 MiB",
                fold.unwrap_or(0)
            )));
        }
        Ok(Rescaled { inner, factor, fold, spread: None })
    }

    /// Spreads the folded range over `[0, spread)` (needs a fold no larger than `spread`).
    pub fn with_spread(mut self, spread: u64) -> Result<Self, crate::TraceError> {
        let Some(fold) = self.fold else {
            return Err(crate::TraceError::Invalid("a spread needs a fold (the range it spreads)".into()));
        };
        if spread < fold {
            return Err(crate::TraceError::Invalid(format!(
                "spread {spread} bytes is smaller than the fold {fold} it spreads"
            )));
        }
        self.spread = spread_cells(fold, spread);
        Ok(self)
    }
}

impl<R: TraceReader> TraceReader for Rescaled<R> {
    #[inline]
    fn next_request(&mut self) -> Result<Option<Request>, crate::TraceError> {
        let Some(mut q) = self.inner.next_request()? else { return Ok(None) };
        let mut off = q.offset.saturating_mul(self.factor);
        if let Some(f) = self.fold {
            off %= f;
            let len = (q.len as u64).min(f);
            if off + len > f {
                off = (f - len) / 512 * 512;
            }
        }
        if let Some(nm) = self.spread {
            off = spread_offset(off, nm);
        }
        q.offset = off;
        Ok(Some(q))
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

#[cfg(test)]
mod rescale_tests {
    use super::*;
    use shingled_core::Op;

    struct List(std::vec::IntoIter<Request>);
    impl TraceReader for List {
        fn next_request(&mut self) -> Result<Option<Request>, crate::TraceError> {
            Ok(self.0.next())
        }
        fn format_name(&self) -> &'static str {
            "list"
        }
    }

    /// Offsets × 5, modulo 4 MiB; a request that would cross the end moves back to end there.
    #[test]
    fn offsets_are_scaled_then_folded() {
        let q = |offset: u64, len: u32| Request { time_ns: 0, volume: 0, op: Op::Write, offset, len };
        let mib = 1u64 << 20;
        let input = vec![q(0, 4096), q(512, 512), q(mib, 8192), q(mib - 4096, 8192), q(mib + 4096, 65536)];
        let mut r = Rescaled::new(List(input.into_iter()), 5, Some(4 * mib)).unwrap();
        let mut got = Vec::new();
        while let Some(x) = r.next_request().unwrap() {
            got.push((x.offset, x.len));
        }
        // 0; 2560; 5 MiB mod 4 MiB = 1 MiB; 5 MiB − 20 KiB → 1 MiB − 20 KiB; 5 MiB + 20 KiB →
        // 1 MiB + 20 KiB. Sizes unchanged.
        assert_eq!(got, vec![(0, 4096), (2560, 512), (mib, 8192), (mib - 20480, 8192), (mib + 20480, 65536)]);
        let near_end = q(4 * mib / 5 - 512, 4096); // × 5 = 4 MiB − 2560: would cross the end
        let mut r = Rescaled::new(List(vec![near_end].into_iter()), 5, Some(4 * mib)).unwrap();
        assert_eq!(r.next_request().unwrap().unwrap().offset, 4 * mib - 4096);
        // Spread over twice the fold: 4 MiB cells move to every other cell, contents kept.
        let input = vec![q(0, 4096), q(mib, 4096), q(4 * mib + 512, 4096), q(7 * mib, 4096)];
        let mut r =
            Rescaled::new(List(input.into_iter()), 1, Some(8 * mib)).unwrap().with_spread(16 * mib).unwrap();
        let mut got = Vec::new();
        while let Some(x) = r.next_request().unwrap() {
            got.push(x.offset);
        }
        assert_eq!(got, vec![0, mib, 8 * mib + 512, 11 * mib]);
        assert!(Rescaled::new(List(vec![].into_iter()), 1, Some(8 * mib)).unwrap().with_spread(mib).is_err());
        assert!(Rescaled::new(List(vec![].into_iter()), 0, None).is_err());
        assert!(Rescaled::new(List(vec![].into_iter()), 2, Some(4096)).is_err());
    }
}
