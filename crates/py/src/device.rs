//! The plumbing shared by the Python block devices (`stl::TranslationLayer`,
//! `blockcache::BlockCache`): a [`ByteDevice`] behind a lock, gone once closed, used with the
//! GIL released; byte reads and writes, flush and discard.

use pyo3::prelude::*;
use pyo3::types::PyBytes;
use shingled_stl::{BlockDevice, ByteDevice, StlError, BLOCK};
use std::sync::Mutex;

/// Most bytes one `read` returns (1 GiB): larger reads are refused before allocating.
pub(crate) const MAX_READ: usize = 1 << 30;

/// An open (or closed) block device from Python.
pub(crate) struct Device<D> {
    inner: Mutex<Option<ByteDevice<D>>>,
    /// Makes the class's exception (`TranslationLayerError`, `BlockCacheError`).
    error: fn(String) -> PyErr,
    /// The message of that exception when the device is used after it was closed.
    closed: &'static str,
}

impl<D: BlockDevice + Send> Device<D> {
    /// `dev`, open; errors raise `error`, and `closed` once closed.
    pub(crate) fn new(dev: D, error: fn(String) -> PyErr, closed: &'static str) -> Device<D> {
        Device { inner: Mutex::new(Some(ByteDevice::new(dev))), error, closed }
    }

    /// The exception for `e`.
    pub(crate) fn err(&self, e: StlError) -> PyErr {
        (self.error)(e.to_string())
    }

    /// The exception for a device used after it was closed.
    pub(crate) fn closed_err(&self) -> PyErr {
        (self.error)(self.closed.to_string())
    }

    /// Runs `f` on the open device with the GIL released.
    pub(crate) fn with<R: Send>(
        &self,
        py: Python<'_>,
        f: impl FnOnce(&mut ByteDevice<D>) -> Result<R, StlError> + Send,
    ) -> PyResult<R> {
        py.detach(|| {
            let mut g = self.inner.lock().unwrap_or_else(|e| e.into_inner());
            match g.as_mut() {
                None => Err(self.closed_err()),
                Some(d) => f(d).map_err(|e| self.err(e)),
            }
        })
    }

    /// Takes the device out and runs `f` on it, the GIL released; the device is closed
    /// afterwards, whatever `f` returns. `None` when it was closed already.
    pub(crate) fn take<R: Send>(
        &self,
        py: Python<'_>,
        f: impl FnOnce(ByteDevice<D>) -> Result<R, StlError> + Send,
    ) -> PyResult<Option<R>> {
        py.detach(|| {
            let mut g = self.inner.lock().unwrap_or_else(|e| e.into_inner());
            match g.take() {
                None => Ok(None),
                Some(d) => f(d).map(Some).map_err(|e| self.err(e)),
            }
        })
    }

    /// Whether the device was closed.
    pub(crate) fn is_closed(&self) -> bool {
        self.inner.lock().unwrap_or_else(|e| e.into_inner()).is_none()
    }

    /// `length` bytes at byte `offset`.
    pub(crate) fn read<'py>(
        &self,
        py: Python<'py>,
        offset: u64,
        length: usize,
    ) -> PyResult<Bound<'py, PyBytes>> {
        let buf = self.with(py, |d| {
            // Before allocating: a length past the device (or beyond any sane single read)
            // must raise, not abort the interpreter on a failed allocation.
            let size = d.size();
            if offset.checked_add(length as u64).is_none_or(|end| end > size) {
                return Err(StlError::Range {
                    what: format!("read(offset={offset}, length={length})"),
                    detail: format!("the range reaches past the size of {size} bytes"),
                });
            }
            if length > MAX_READ {
                return Err(StlError::Range {
                    what: format!("read(offset={offset}, length={length})"),
                    detail: format!(
                        "length is more than one read returns ({MAX_READ} bytes); read in pieces"
                    ),
                });
            }
            let mut b = vec![0u8; length];
            d.read_at(offset, &mut b)?;
            Ok(b)
        })?;
        Ok(PyBytes::new(py, &buf))
    }

    /// Writes `data` at byte `offset`.
    pub(crate) fn write(&self, py: Python<'_>, offset: u64, data: &[u8]) -> PyResult<()> {
        self.with(py, |d| d.write_at(offset, data))
    }

    /// The durability barrier.
    pub(crate) fn flush(&self, py: Python<'_>) -> PyResult<()> {
        self.with(py, |d| d.flush())
    }

    /// Forgets whole blocks `offset .. offset + length` (bytes, both multiples of 4096; a
    /// `ValueError` otherwise).
    pub(crate) fn discard(&self, py: Python<'_>, offset: u64, length: u64) -> PyResult<()> {
        let b = BLOCK as u64;
        if !offset.is_multiple_of(b) || !length.is_multiple_of(b) {
            return Err(pyo3::exceptions::PyValueError::new_err(format!(
                "discard({offset}, {length}): offset and length must be multiples of {b}"
            )));
        }
        self.with(py, |d| {
            let size = d.size();
            if offset.checked_add(length).is_none_or(|end| end > size) {
                return Err(StlError::Range {
                    what: format!("discard(offset={offset}, length={length})"),
                    detail: format!("the range reaches past the size of {size} bytes"),
                });
            }
            d.inner().discard(offset / b, length / b)
        })
    }
}
