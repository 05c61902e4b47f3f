//! Shingled translation layers as block devices an ordinary file system can live on.
//!
//! - [`medium`]: a raw shingled medium, track by track ([`TrackMedium`]), whose emulators
//!   poison the tracks a write overlaps, so translation-layer bugs read poison, not stale data.
//! - [`block`]: the [`BlockDevice`] interface (4 KiB blocks, flush as the durability barrier),
//!   a byte-addressed front end with read-modify-write of partial blocks, and a flat in-memory
//!   device used as the oracle of the tests.

pub mod block;
pub mod dmzoned;
pub mod error;
pub mod file_block;
pub mod file_medium;
pub mod medium;
pub mod open;
pub mod smart;
pub mod timed;

pub use block::{check_request, BlockDevice, ByteDevice, MemBlock, BLOCK};
pub use dmzoned::{ChunkMapping, DmZoned, DmZonedConfig, DmZonedGeometry, DmZonedStats, ReclaimPolicy};
pub use error::{Result, StlError};
pub use file_block::FileBlock;
pub use file_medium::{FileMedium, FileMediumStats};
pub use medium::{Geometry, MediumStats, MediumZone, MemMedium, TrackMedium, POISON};
pub use open::{detect, inspect, DmZonedFileSpec, LayerKind, SmartFileSpec, Stl};
pub use smart::{raz_tracks_needed, SmartStl, SmartStlConfig, SmartStlStats};
pub use timed::{Timed, TimedStats};
