//! The store benchmarks' error.

/// A bench failure.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum BenchError {
    /// No bench of that name.
    #[error("unknown store bench {0:?} (try: write, read, macro, recovery, memory, cpu)")]
    Unknown(String),
    /// The store failed.
    #[error("{what}: {source}")]
    Store {
        /// What the bench was doing.
        what: String,
        /// The error.
        source: shingled_store::StoreError,
    },
    /// The device failed.
    #[error("{what}: {source}")]
    Device {
        /// What the bench was doing.
        what: String,
        /// The error.
        source: shingled_zoned::ZonedError,
    },
    /// A file operation failed.
    #[error("{what}: {source}")]
    Io {
        /// What the bench was doing.
        what: String,
        /// The error.
        source: std::io::Error,
    },
}

/// Result alias of this module.
pub type BResult<T> = std::result::Result<T, BenchError>;

pub(super) fn se(what: impl Into<String>) -> impl FnOnce(shingled_store::StoreError) -> BenchError {
    let what = what.into();
    move |source| BenchError::Store { what, source }
}
pub(super) fn de(what: impl Into<String>) -> impl FnOnce(shingled_zoned::ZonedError) -> BenchError {
    let what = what.into();
    move |source| BenchError::Device { what, source }
}
pub(super) fn ioe(what: impl Into<String>) -> impl FnOnce(std::io::Error) -> BenchError {
    let what = what.into();
    move |source| BenchError::Io { what, source }
}
