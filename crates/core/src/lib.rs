//! Shared vocabulary of the `shingled` workspace: units (bytes, 4 KiB blocks, nanoseconds of
//! modelled time), the read/write operation, and size specifications that may be absolute or
//! relative to a trace's footprint.
//!
//! Every other crate depends on this one and on nothing above it. Keep it small: a type belongs
//! here only when two or more crates must agree on it.

mod bands;
pub mod de;
pub mod mem;
pub mod numeric;
pub mod output;
mod rng;
mod size;
pub mod table;
mod time;

pub use bands::{BandConfig, BandError, BandId, BandMap};
pub use rng::SplitMix64;
pub use size::{ByteSize, SizeError, SizeSpec};
pub use time::Nanos;

/// The cache block and trace page size used throughout: 4 KiB (both papers, DESIGN.md).
pub const BLOCK_SIZE: u64 = 4096;

/// A 4 KiB block number: byte offset / [`BLOCK_SIZE`].
pub type BlockNo = u64;

/// What a request does to the device.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Op {
    /// Read data.
    Read,
    /// Write data.
    Write,
}

impl Op {
    /// `true` for [`Op::Write`].
    #[inline]
    pub fn is_write(self) -> bool {
        matches!(self, Op::Write)
    }
}

impl std::fmt::Display for Op {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Op::Read => "read",
            Op::Write => "write",
        })
    }
}

/// The 4 KiB blocks touched by the byte range `[offset, offset + len)`, as `first..end`.
///
/// A zero-length request touches no block. Unaligned ranges are widened to whole blocks, so a
/// 512-byte write at offset 4000 touches blocks 0 and 1.
#[inline]
pub fn blocks_of(offset: u64, len: u64) -> std::ops::Range<BlockNo> {
    if len == 0 {
        let b = offset / BLOCK_SIZE;
        return b..b;
    }
    let first = offset / BLOCK_SIZE;
    let last = (offset + len - 1) / BLOCK_SIZE;
    first..last + 1
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_of_splits_and_aligns() {
        assert_eq!(blocks_of(0, 4096), 0..1);
        assert_eq!(blocks_of(0, 4097), 0..2);
        assert_eq!(blocks_of(4000, 512), 0..2);
        assert_eq!(blocks_of(8192, 8192), 2..4);
        assert!(blocks_of(8192, 0).is_empty());
        assert_eq!(blocks_of(4095, 1), 0..1);
    }
}
