//! The store's error type: every variant names what it is about (chunk, offset, zone).

use crate::ChunkId;
use shingled_zoned::ZonedError;

/// Result alias of the store.
pub type Result<T> = std::result::Result<T, StoreError>;

/// Everything the store can report. Corruption is always an error naming where it was found,
/// never wrong data and never a panic.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StoreError {
    /// The zoned device failed.
    #[error("device error while {what}: {source}")]
    Device {
        /// What the store was doing.
        what: String,
        /// The device's error.
        #[source]
        source: ZonedError,
    },
    /// A data slice failed its footer check on read (CRC, chunk id or chunk offset).
    #[error("corrupt data of chunk {chunk} at chunk offset {offset} (zone {zone}, byte {zone_offset} of the zone): {what}")]
    CorruptData {
        /// The chunk read.
        chunk: ChunkId,
        /// Chunk offset of the slice that failed.
        offset: u64,
        /// Datazone holding it.
        zone: u64,
        /// Byte offset of the slice in that zone.
        zone_offset: u64,
        /// What did not match.
        what: String,
    },
    /// A metadata structure (superzone, checkpoint, journal) is damaged beyond what recovery
    /// can fall back from.
    #[error("corrupt {structure} in zone {zone} at byte {offset}: {what}")]
    CorruptMeta {
        /// Which structure.
        structure: &'static str,
        /// Zone holding it.
        zone: u64,
        /// Byte offset in the zone.
        offset: u64,
        /// What was wrong.
        what: String,
    },
    /// The device does not hold a store (no valid superzone record).
    #[error("not a shingled store: {0}")]
    NotFormatted(String),
    /// The device or the configuration cannot host a store.
    #[error("invalid store configuration: {0}")]
    Config(String),
    /// No chunk with this id.
    #[error("no chunk {0}")]
    NoSuchChunk(ChunkId),
    /// `create` of an id that exists.
    #[error("chunk {0} already exists")]
    ChunkExists(ChunkId),
    /// Append to a sealed chunk.
    #[error("chunk {0} is sealed")]
    Sealed(ChunkId),
    /// A read outside the chunk's data.
    #[error("read of chunk {chunk} at offset {offset} length {len} is beyond its length {chunk_len}")]
    OutOfRange {
        /// The chunk.
        chunk: ChunkId,
        /// Requested offset.
        offset: u64,
        /// Requested length.
        len: u64,
        /// Current length of the chunk.
        chunk_len: u64,
    },
    /// The append would make the chunk longer than its stream's size limit.
    #[error("chunk {chunk} would grow to {would_be} bytes, beyond its limit of {limit}")]
    ChunkTooLarge {
        /// The chunk.
        chunk: ChunkId,
        /// Length after the append.
        would_be: u64,
        /// The limit: user bytes that fit in one zone ([`Store::chunk_limit`](crate::Store::chunk_limit)),
        /// or the stream's limit.
        limit: u64,
    },
    /// No free datazone (or no room in the metazones) for the operation.
    #[error("out of space: {0}")]
    NoSpace(String),
    /// An earlier device failure left the in-memory state uncertain; reopen the store.
    #[error("store is poisoned by an earlier device failure; reopen it to recover")]
    Poisoned,
    /// A call that would change the store, on a store opened with
    /// [`Store::open_read_only`](crate::Store::open_read_only).
    #[error("store is open read-only")]
    ReadOnly,
}

impl StoreError {
    pub(crate) fn dev(what: impl Into<String>) -> impl FnOnce(ZonedError) -> StoreError {
        let what = what.into();
        move |source| StoreError::Device { what, source }
    }
}
