//! The CRC'd table blocks both emulated device files keep in two copies (the zone table of
//! [`crate::FileZoned`], the poison-flag table of `shingled_stl::file_medium::FileMedium`): the
//! checks a block must pass before its generation counts.
//!
//! A block is 4 KiB or more: magic (4 bytes), block index (u32), generation (u64), first entry
//! (u64), entry count (u32) at bytes 0..28, the entries after, the CRC32C of everything before
//! it in the last 4 bytes. Copy `k` only ever holds even (`k = 0`) or odd (`k = 1`) generations.

use crate::error::{Result, ZonedError};

/// Whether the last 4 bytes of `b` are the CRC32C of the rest.
pub fn crc_ok(b: &[u8]) -> bool {
    let n = b.len() - 4;
    crc32c::crc32c(&b[..n]).to_le_bytes() == b[n..]
}

/// Little-endian u32 at `at`.
pub fn u32_at(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(b[at..at + 4].try_into().expect("4 bytes"))
}

/// Little-endian u64 at `at`.
pub fn u64_at(b: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(b[at..at + 8].try_into().expect("8 bytes"))
}

/// What a table holds, for messages: `("page", "zone")`, `("block", "track")`.
pub type Names = (&'static str, &'static str);

/// Validates table block `index` found in copy `copy` of a table of `total` entries,
/// `per_block` to a block; returns its generation, or what is wrong (a `Table…` error).
pub fn check_block(
    b: &[u8],
    magic: [u8; 4],
    index: u64,
    copy: u64,
    per_block: u64,
    total: u64,
    (block, entry): Names,
) -> Result<u64> {
    if b[0..4] != magic {
        return Err(ZonedError::TableMagic { block });
    }
    if !crc_ok(b) {
        return Err(ZonedError::TableCrc);
    }
    let g = u64_at(b, 8);
    let first = index * per_block;
    let n = total.saturating_sub(first).min(per_block);
    if u32_at(b, 4) as u64 != index || u64_at(b, 16) != first || u32_at(b, 24) as u64 != n {
        return Err(ZonedError::TableHeader {
            block,
            entry,
            index: u32_at(b, 4),
            first: u64_at(b, 16),
            count: u32_at(b, 24),
        });
    }
    if g % 2 != copy {
        return Err(ZonedError::TableGeneration { generation: g, copy });
    }
    Ok(g)
}
