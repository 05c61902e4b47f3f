//! One error type for the translation layers and the media under them.

use std::io;

/// What went wrong, naming the device, the address and the value where there is one.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StlError {
    /// An I/O error of the storage under a medium or a zoned device.
    #[error("{what}: {source}")]
    Io {
        /// What was being done (device, offset).
        what: String,
        /// The error.
        #[source]
        source: io::Error,
    },
    /// An error of the zoned device under a dm-zoned-style layer.
    #[error(transparent)]
    Zoned(#[from] shingled_zoned::ZonedError),
    /// A request outside the device or not aligned as the interface requires.
    #[error("{what}: {detail}")]
    Range {
        /// The operation and the device.
        what: String,
        /// Offset, length, capacity.
        detail: String,
    },
    /// A parameter out of range, naming the field.
    #[error("invalid {field} = {value}: {why}")]
    Invalid {
        /// Field.
        field: String,
        /// Its value.
        value: String,
        /// What is allowed.
        why: String,
    },
    /// A read returned a track a shingled write had overlapped: a translation-layer bug.
    #[error("{device}: read of poisoned track {track} (overlapped by a write of track {by}); a translation-layer bug")]
    Poisoned {
        /// The medium.
        device: String,
        /// The track read.
        track: u64,
        /// The track whose write overlapped it.
        by: u64,
    },
    /// On-medium metadata that does not check out (bad CRC, impossible value).
    #[error("{device}: {what}")]
    Corrupt {
        /// The medium or device.
        device: String,
        /// What is wrong, and where.
        what: String,
    },
    /// No free space left for a write (the layer is full beyond what it can clean).
    #[error("{device}: no space: {detail}")]
    NoSpace {
        /// The device.
        device: String,
        /// Why.
        detail: String,
    },
    /// The medium stopped accepting operations (a simulated power cut or an injected fault).
    #[error("{device}: the medium failed: {detail}")]
    Failed {
        /// The device.
        device: String,
        /// Why.
        detail: String,
    },
}

/// Result of this crate.
pub type Result<T> = std::result::Result<T, StlError>;

/// `StlError::Invalid`.
pub fn invalid(field: &str, value: impl std::fmt::Display, why: impl Into<String>) -> StlError {
    StlError::Invalid { field: field.into(), value: value.to_string(), why: why.into() }
}

/// `StlError::Io` with what was being done.
pub fn io(what: impl Into<String>, source: io::Error) -> StlError {
    StlError::Io { what: what.into(), source }
}

impl From<StlError> for io::Error {
    fn from(e: StlError) -> io::Error {
        match e {
            StlError::Io { source, .. } => io::Error::new(source.kind(), source.to_string()),
            StlError::Range { .. } | StlError::Invalid { .. } => {
                io::Error::new(io::ErrorKind::InvalidInput, e)
            }
            StlError::NoSpace { .. } => io::Error::new(io::ErrorKind::StorageFull, e),
            other => io::Error::other(other),
        }
    }
}
