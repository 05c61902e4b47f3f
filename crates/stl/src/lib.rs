//! Shingled translation layers as block devices an ordinary file system can live on.
//!
//! - [`medium`]: a raw shingled medium, track by track ([`TrackMedium`]), whose emulators
//!   poison the tracks a write overlaps, so translation-layer bugs read poison, not stale data.
//! - [`block`]: the [`BlockDevice`] interface (4 KiB blocks, flush as the durability barrier),
//!   a byte-addressed front end with read-modify-write of partial blocks, and a flat in-memory
//!   device used as the oracle of the tests.
//! - [`smart`]: SMaRT as a block device over a track medium, executing the simulator's SMaRT
//!   model's decisions, with footers, checkpoints, staged GC moves and recovery.

pub mod block;
pub mod error;
pub mod medium;
pub mod smart;

pub use block::{check_request, BlockDevice, ByteDevice, MemBlock, BLOCK};
pub use error::{Result, StlError};
pub use medium::{Geometry, MediumStats, MediumZone, MemMedium, TrackMedium, POISON};
pub use smart::{raz_tracks_needed, SmartStl, SmartStlConfig, SmartStlStats};
