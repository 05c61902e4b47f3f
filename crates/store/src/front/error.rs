//! The front's errors: a drive's store error tagged with the drive, or a routing problem.

use crate::{ChunkId, StoreError};

/// Errors of the front: a drive's store error tagged with the drive, or a routing problem.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum FrontError {
    /// Drive `drive`'s store failed.
    #[error("drive {drive}: {source}")]
    Drive {
        /// Index of the drive (position in the device list given to format/open).
        drive: usize,
        /// The store's error.
        #[source]
        source: StoreError,
    },
    /// No drive holds this chunk.
    #[error("no chunk {0}")]
    NoSuchChunk(ChunkId),
    /// `create` of an id that exists on some drive.
    #[error("chunk {id} already exists on drive {drive}")]
    ChunkExists {
        /// The chunk.
        id: ChunkId,
        /// Drive holding it.
        drive: usize,
    },
    /// The same chunk id is stored on two drives.
    #[error("chunk {id} is on drive {first} and on drive {second}")]
    Duplicate {
        /// The chunk.
        id: ChunkId,
        /// First drive (lower index) holding it.
        first: usize,
        /// Second drive holding it.
        second: usize,
    },
    /// A drive index out of range, or no drive at all.
    #[error("{0}")]
    Drives(String),
}

impl FrontError {
    /// The store error inside, if this is one drive's error.
    pub fn store_error(&self) -> Option<&StoreError> {
        match self {
            FrontError::Drive { source, .. } => Some(source),
            _ => None,
        }
    }

    pub(super) fn on(drive: usize) -> impl FnOnce(StoreError) -> FrontError {
        move |source| FrontError::Drive { drive, source }
    }
}

/// Result alias of the front.
pub type FrontResult<T> = std::result::Result<T, FrontError>;
