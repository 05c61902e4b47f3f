//! Shingled translation layers as block devices an ordinary file system can live on.
//!
//! - A raw shingled medium, track by track ([`TrackMedium`]), whose emulators ([`MemMedium`],
//!   [`file_medium::FileMedium`]) poison the tracks a write overlaps, so translation-layer bugs
//!   read poison, not stale data.
//! - An emulated drive-managed SMR drive on real storage ([`DmSmrEmu`]): the DM-SMR model
//!   decides, the layer does its PB appends and band RMWs for real.
//! - The [`BlockDevice`] interface (4 KiB blocks, flush as the durability barrier), a
//!   byte-addressed front end with read-modify-write of partial blocks ([`ByteDevice`]), and a
//!   flat in-memory device used as the oracle of the tests ([`MemBlock`]).

mod block;
mod dm_smr_emu;
mod dmzoned;
mod error;
mod file_block;
pub mod file_medium;
mod medium;
mod open;
mod smart;
mod timed;

pub use block::{check_request, BlockDevice, ByteDevice, MemBlock, BLOCK};
pub use dm_smr_emu::{DmSmrEmu, DmSmrEmuCounts, DmSmrEmuStats, DmSmrFileSpec, EmuFile};
pub use dmzoned::{
    CheckReport, ChunkMapping, DmZoned, DmZonedConfig, DmZonedGeometry, DmZonedStats, ReclaimPolicy,
};
pub use error::{invalid, Result, StlError};
pub use file_block::FileBlock;
pub use medium::{Geometry, MediumStats, MediumZone, MemMedium, TrackMedium, POISON};
pub use open::{detect, inspect, DmZonedFileSpec, LayerKind, SmartFileSpec, Stl};
pub use smart::{raz_tracks_needed, SmartStl, SmartStlConfig, SmartStlStats};
pub use timed::{Timed, TimedStats};
