//! A chunk store directly on a zoned (host-managed SMR) device, after SMRSTORE (Zhou et al.,
//! "SMRSTORE: A Storage Engine for Cloud Object Storage on HM-SMR Drives", FAST '23, §2–§6).
//!
//! Applications (an object store's chunk servers) keep data in **chunks**: append-only objects
//! named by a 24-byte id, created with a **stream type** ([`StreamType`]) that says what they
//! hold. The store maps chunks straight onto the zones of a [`shingled_zoned::ZonedDevice`], with no file system
//! in between:
//!
//! - **Layout** (`docs/store-format.md`): one superzone (format version, time, configuration),
//!   a fixed set of metazones (checkpoints and journal), and datazones. Everything on the device
//!   is a 4 KiB-aligned record with a CRC'd header ([`format`]); user data travels in 4096-byte
//!   slices, each with a 32-byte footer, so a 4 KiB read touches at most two slices and verifies
//!   them alone.
//! - **Index** in memory: chunk table → index groups (one per run of records in one datazone)
//!   → 8-byte record indexes ([`Store::memory`]).
//! - **Zones**: a state machine over the device's conditions ([`ZoneState`]), pools of open zones
//!   per stream type, and the paper's placement rules, each switchable ([`Placement`]).
//! - **Durability**: create, seal, delete and zone resets are journaled in the metazone;
//!   appends are not — recovery scans the datazones written since the last checkpoint and
//!   keeps the records whose CRCs verify ([`Store::open`]). An append is acknowledged after
//!   its data is flushed ([`Durability::EveryAppend`]) or at the next [`Store::sync`]
//!   ([`Durability::Batched`]).
//!
//! ```
//! use shingled_store::{ChunkId, Store, StoreConfig, StreamType};
//! use shingled_zoned::{Dialect, MemZoned, ZonedConfig};
//!
//! let dev = MemZoned::new(&ZonedConfig::small(16, 256, Dialect::Zbc)).unwrap();
//! let mut store = Store::format(dev, StoreConfig::small()).unwrap();
//! let id = ChunkId::from_u128(7);
//! store.create(id, StreamType::DATA).unwrap();
//! store.append(id, b"hello, zones").unwrap(); // durable when it returns
//! let dev = store.into_device(); // "crash" and restart
//! let mut store = Store::open(dev, Default::default()).unwrap();
//! assert_eq!(store.read(id, 7, 5).unwrap(), b"zones");
//! ```

pub mod error;
pub mod format;
pub mod front;
mod store;

pub use error::{Result, StoreError};
pub use format::PreparedRecords;
pub use front::{FrontDriveStats, FrontError, FrontResult, FrontStats, StoreFront};
pub use store::{
    read_format, ChunkInfo, ChunkPiece, FsckProblem, FsckReport, GcStep, MemoryUse, RecoveryReport, Store,
    StoreStats, StoredFormat, ZoneState, FORMAT_VERSION, GC_HARD_MIN_FREE, GC_RESERVE_ZONES, WRITE_BATCH,
};

use std::fmt;

/// A chunk's 24-byte id (UUID-like; the paper's chunk ids).
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct ChunkId(pub [u8; 24]);

impl ChunkId {
    /// An id whose last 16 bytes are `n` (big-endian), for tests and tools.
    pub fn from_u128(n: u128) -> ChunkId {
        let mut b = [0u8; 24];
        b[8..].copy_from_slice(&n.to_be_bytes());
        ChunkId(b)
    }
}

impl fmt::Display for ChunkId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for b in self.0 {
            write!(f, "{b:02x}")?;
        }
        Ok(())
    }
}

impl fmt::Debug for ChunkId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "ChunkId({self})")
    }
}

/// What a chunk holds (the paper's Table 1). Extensible: any byte is a stream type; the
/// constants are the ones SMRSTORE names.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
pub struct StreamType(pub u8);

impl StreamType {
    /// OSS-data: object data written by users (large, cold).
    pub const DATA: StreamType = StreamType(0);
    /// OSS-metadata: index and log chunks of the object store (small, hot, short-lived).
    pub const METADATA: StreamType = StreamType(1);
    /// OSS-GC: data rewritten by the object store's own garbage collection (cold).
    pub const GC: StreamType = StreamType(2);
}

/// When an append is acknowledged durable.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Durability {
    /// Every append flushes the device before returning (the default).
    #[default]
    EveryAppend,
    /// Appends return once written; they are durable after the next [`Store::sync`].
    Batched,
}

/// Where chunks go (SMRSTORE §4.3; each rule switchable for experiments).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Placement {
    /// SMRSTORE's guided placement.
    Guided {
        /// Rule 1: chunks of different stream types never share a zone.
        separate_streams: bool,
        /// Rule 2: a chunk is at most what fits in one zone: the user bytes that fill one
        /// zone's capacity as data records of `max_record` user bytes, headers, footers and
        /// padding counted ([`Store::chunk_limit`], docs/store-format.md "Chunk limit");
        /// metadata chunks at most [`StoreConfig::metadata_chunk_limit`] as well. An append
        /// past it fails with [`StoreError::ChunkTooLarge`].
        chunk_limit: bool,
        /// Rule 3: new chunks go round-robin over the stream's pool of open zones, each to an
        /// empty zone no other chunk appends to when there is one (a fresh zone while the pool
        /// is under its target), so a zone-sized chunk fills a zone by itself; a zone its
        /// chunk leaves with less than 1/16 free is finished at seal (off: all chunks of a pool
        /// share its first zone).
        round_robin: bool,
    },
    /// Everything appends to one zone at a time, mixed (F2FS-like; for comparison).
    OneZone,
}

impl Default for Placement {
    fn default() -> Self {
        Placement::Guided { separate_streams: true, chunk_limit: true, round_robin: true }
    }
}

/// Store configuration. Fields marked *format* are fixed at [`Store::format`] and stored in the
/// superzone; the others may change at every [`Store::open`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StoreConfig {
    /// *format*. Metazones after the superzone. Default 4; at least 2 (a checkpoint is written
    /// into the next metazone while the previous one still holds the last complete one).
    pub nr_metazones: u32,
    /// Open zones kept for OSS-GC chunks. Default 40 (paper). All pools are scaled down
    /// together to fit the device's open/active zone limits.
    pub pool_gc: u32,
    /// Open zones for OSS-data chunks (and any other stream type). Default 10.
    pub pool_data: u32,
    /// Open zones for OSS-metadata chunks. Default 5.
    pub pool_metadata: u32,
    /// Placement rules. Default: all three guided rules.
    pub placement: Placement,
    /// Size limit (user bytes) of OSS-metadata chunks when the chunk-limit rule is on, applied
    /// on top of the one-zone limit ([`Store::chunk_limit`]). Default 64 MiB.
    pub metadata_chunk_limit: u64,
    /// When appends are acknowledged. Default: every append.
    pub durability: Durability,
    /// GC low watermark: background GC starts when fewer datazones than this are free.
    /// Default 3; 0 turns automatic GC off (then only [`Store::gc`] and [`Store::gc_step`]
    /// collect). Whatever the watermarks, when at most one datazone is free GC runs
    /// unthrottled before an append (the emergency path), so appends do not fail for lack of
    /// space while garbage exists.
    pub gc_free_zones: u32,
    /// GC high watermark: background GC stops (after finishing its current victim) once at
    /// least this many datazones are free. Default 5; raised to `gc_free_zones` if lower.
    pub gc_stop_free_zones: u32,
    /// Most live user bytes one background GC step migrates. Default 4 MiB. A step is whole
    /// records, so a single record larger than this is still migrated in one step.
    pub gc_step_bytes: u64,
    /// Background GC bandwidth as a ratio to the foreground: GC user bytes migrated per 100
    /// user bytes appended (percent). Default 100 (1:1). Every append earns
    /// `len × gc_max_bandwidth / 100` bytes of GC credit (capped at one step); a step runs
    /// after an append only when the credit covers it, else it is counted as throttled. A
    /// ratio to foreground bytes rather than bytes per second: the engine is closed-loop and
    /// single-threaded, so the share of device writes, not wall time, is what GC takes from
    /// the foreground. 0 leaves only the emergency path and explicit calls.
    pub gc_max_bandwidth: u32,
    /// Most user bytes in one data record (larger appends are split). Default 1 MiB; at least
    /// 4096.
    pub max_record: usize,
    /// A periodic checkpoint starts once this many bytes (user bytes appended plus journal
    /// bytes) were written since the last one, bounding recovery's journal replay and
    /// datazone scan. Default 0: sixteen zones' worth of the device.
    pub checkpoint_every_bytes: u64,
    /// Periodic checkpoints are incremental: after each foreground operation (create, append,
    /// seal, delete) at most this many bytes of the checkpoint's table are written. Default
    /// 64 KiB; at least 64.
    pub ckpt_step_bytes: u64,
    /// Most bytes one device read of recovery's datazone scan and of [`Store::fsck`] covers:
    /// zones are read sequentially in windows of this size (up to the write pointer) and the
    /// records parsed out of them; a record longer than the window is read on its own. Default
    /// 8 MiB; at least 4096.
    pub scan_buffer_bytes: usize,
}

impl Default for StoreConfig {
    fn default() -> Self {
        StoreConfig {
            nr_metazones: 4,
            pool_gc: 40,
            pool_data: 10,
            pool_metadata: 5,
            placement: Placement::default(),
            metadata_chunk_limit: 64 << 20,
            durability: Durability::EveryAppend,
            gc_free_zones: 3,
            gc_stop_free_zones: 5,
            gc_step_bytes: 4 << 20,
            gc_max_bandwidth: 100,
            max_record: 1 << 20,
            checkpoint_every_bytes: 0,
            ckpt_step_bytes: 64 << 10,
            scan_buffer_bytes: 8 << 20,
        }
    }
}

impl StoreConfig {
    /// Small pools (2/2/1) and 2 metazones, for small test devices.
    pub fn small() -> Self {
        StoreConfig { nr_metazones: 2, pool_gc: 1, pool_data: 2, pool_metadata: 1, ..Default::default() }
    }

    /// Checks bounds (see each field).
    pub fn sanitize(&self) -> Result<()> {
        if self.nr_metazones < 2 {
            return Err(StoreError::Config(format!("nr_metazones {} < 2", self.nr_metazones)));
        }
        if self.pool_gc == 0 || self.pool_data == 0 || self.pool_metadata == 0 {
            return Err(StoreError::Config("every zone pool needs at least one zone".into()));
        }
        if self.max_record < 4096 {
            return Err(StoreError::Config(format!("max_record {} < 4096", self.max_record)));
        }
        if self.ckpt_step_bytes < 64 {
            return Err(StoreError::Config(format!("ckpt_step_bytes {} < 64", self.ckpt_step_bytes)));
        }
        if self.scan_buffer_bytes < 4096 {
            return Err(StoreError::Config(format!("scan_buffer_bytes {} < 4096", self.scan_buffer_bytes)));
        }
        Ok(())
    }
}
