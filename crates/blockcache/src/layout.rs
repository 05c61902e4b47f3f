//! The on-cache-device format: a superblock, the slot-record area, the data slots.
//!
//! All integers are little-endian; CRCs are CRC32C. Block = 4096 bytes.
//!
//! ```text
//! block 0                      superblock
//! blocks 1 .. 1+R              record blocks, 127 slot records each (R = ceil(slots / 127))
//! blocks 1+R .. 1+R+slots      data slots, one 4 KiB cached block each
//! ```
//!
//! Superblock:
//!
//! ```text
//! offset size field
//! 0      8    magic "SHBCACHE"
//! 8      4    format version (1)
//! 12     4    state: 1 attached, 2 detached (every dirty block written back, no record used)
//! 16     8    cache id: chosen at format; record blocks carry it
//! 24     8    backing device capacity in blocks (must match at open)
//! 32     4    physical slots
//! 36     4    policy capacity (blocks the policy manages; the rest is the free-slot reserve)
//! 40     8    first record block (1)
//! 48     8    record blocks
//! 56     8    first data slot block
//! 64     4    length L of the setup JSON
//! 68     L    setup JSON: mode, policy, band layout, PB size, seed, costs, sequential cutoff
//! 4092   4    CRC32C of bytes 0..4092
//! ```
//!
//! Record block `i` (slots `127·i .. 127·i+127`):
//!
//! ```text
//! 0      4    magic "SHBR"
//! 4      4    record block index i
//! 8      8    cache id
//! 16+32k 32   record of slot 127·i+k: block u64, epoch u64, flags u32 (bit 0 used, bit 1
//!             dirty), zero u32, zero u64
//! 4080   12   zero
//! 4092   4    CRC32C of bytes 0..4092
//! ```
//!
//! A record block of zeros (never written since the format discarded the area), or one with a
//! valid CRC but another cache id (left by an earlier format), holds only free records. Any
//! other block whose magic, index or CRC does not check is corrupt.

use crate::CacheSetup;
use shingled_stl::{Result, StlError, BLOCK};

/// Superblock magic.
pub const MAGIC: &[u8; 8] = b"SHBCACHE";
/// Format version.
pub const VERSION: u32 = 1;
/// Record block magic.
pub const RECORD_MAGIC: &[u8; 4] = b"SHBR";
/// Slot records per record block.
pub const RECORDS_PER_BLOCK: u32 = 127;
const RECORD_BYTES: usize = 32;
const RECORD_HEADER: usize = 16;
const CRC_AT: usize = BLOCK - 4;

/// The persistent record of one physical slot.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Record {
    /// The cached block (meaningful when `used`).
    pub block: u64,
    /// The commit that wrote this content (meaningful when `used`): of two records naming the
    /// same block, the higher epoch is the newer.
    pub epoch: u64,
    /// The slot holds a cached block.
    pub used: bool,
    /// The slot's copy is newer than the backing device's.
    pub dirty: bool,
}

impl Record {
    /// A free slot.
    pub const FREE: Record = Record { block: 0, epoch: 0, used: false, dirty: false };

    /// Same content (block and state), whatever the epoch.
    pub fn same(&self, o: &Record) -> bool {
        self.used == o.used && (!self.used || (self.block == o.block && self.dirty == o.dirty))
    }
}

/// Whether the cache is in use or was detached.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum State {
    /// In use: records may name dirty blocks.
    Attached,
    /// Detached: every dirty block was written back and flushed; the backing device alone is
    /// consistent.
    Detached,
}

/// Where things are on the cache device.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Layout {
    /// Physical data slots.
    pub slots: u32,
    /// First record block.
    pub record_start: u64,
    /// Number of record blocks.
    pub record_blocks: u64,
    /// First data slot.
    pub data_start: u64,
}

impl Layout {
    /// The layout with `slots` slots (or as many as fit) on a cache device of `device_blocks`.
    pub fn new(device_blocks: u64, slots: Option<u32>) -> Result<Layout> {
        let need = |n: u64| 1 + n.div_ceil(RECORDS_PER_BLOCK as u64) + n;
        let n = match slots {
            Some(n) => n as u64,
            None => {
                let mut n = device_blocks.saturating_sub(1) * RECORDS_PER_BLOCK as u64 / 128;
                while n > 0 && need(n) > device_blocks {
                    n -= 1;
                }
                while need(n + 1) <= device_blocks {
                    n += 1;
                }
                n.min(u32::MAX as u64 - 1)
            }
        };
        if n < 2 || need(n) > device_blocks || n >= u32::MAX as u64 {
            return Err(shingled_stl::invalid(
                "cache slots",
                n,
                format!(
                    "the cache device holds {device_blocks} blocks: room for the superblock, the records \
                     and at least 2 slots is needed ({} blocks for {n} slots)",
                    need(n)
                ),
            ));
        }
        let record_blocks = n.div_ceil(RECORDS_PER_BLOCK as u64);
        Ok(Layout { slots: n as u32, record_start: 1, record_blocks, data_start: 1 + record_blocks })
    }

    /// The record block holding slot `slot`'s record (index from 0).
    #[inline]
    pub fn record_block_of(slot: u32) -> u64 {
        (slot / RECORDS_PER_BLOCK) as u64
    }

    /// The cache-device block of data slot `slot`.
    #[inline]
    pub fn slot_lba(&self, slot: u32) -> u64 {
        self.data_start + slot as u64
    }

    /// The slots whose records are in record block `rb`.
    pub fn slots_of_block(&self, rb: u64) -> std::ops::Range<u32> {
        let start = rb as u32 * RECORDS_PER_BLOCK;
        start..(start + RECORDS_PER_BLOCK).min(self.slots)
    }
}

/// The superblock's content.
#[derive(Clone, Debug, PartialEq)]
pub struct Superblock {
    /// Attached or detached.
    pub state: State,
    /// Chosen at format.
    pub cache_id: u64,
    /// Backing device capacity in blocks.
    pub backing_blocks: u64,
    /// Blocks the policy manages.
    pub capacity: u32,
    /// Where things are.
    pub layout: Layout,
    /// Mode, policy and their parameters.
    pub setup: CacheSetup,
}

fn u32_at(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(b[at..at + 4].try_into().expect("4 bytes"))
}
fn u64_at(b: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(b[at..at + 8].try_into().expect("8 bytes"))
}

fn corrupt(device: &str, what: String) -> StlError {
    StlError::Corrupt { device: device.to_string(), what }
}

impl Superblock {
    /// Encodes into one block.
    pub fn encode(&self) -> Result<Vec<u8>> {
        let mut b = vec![0u8; BLOCK];
        b[0..8].copy_from_slice(MAGIC);
        b[8..12].copy_from_slice(&VERSION.to_le_bytes());
        let state: u32 = match self.state {
            State::Attached => 1,
            State::Detached => 2,
        };
        b[12..16].copy_from_slice(&state.to_le_bytes());
        b[16..24].copy_from_slice(&self.cache_id.to_le_bytes());
        b[24..32].copy_from_slice(&self.backing_blocks.to_le_bytes());
        b[32..36].copy_from_slice(&self.layout.slots.to_le_bytes());
        b[36..40].copy_from_slice(&self.capacity.to_le_bytes());
        b[40..48].copy_from_slice(&self.layout.record_start.to_le_bytes());
        b[48..56].copy_from_slice(&self.layout.record_blocks.to_le_bytes());
        b[56..64].copy_from_slice(&self.layout.data_start.to_le_bytes());
        let json = serde_json::to_vec(&self.setup).expect("the setup serializes");
        if json.len() > CRC_AT - 68 {
            return Err(shingled_stl::invalid(
                "cache setup",
                format!("{} bytes of JSON", json.len()),
                format!("at most {} bytes fit in the superblock", CRC_AT - 68),
            ));
        }
        b[64..68].copy_from_slice(&(json.len() as u32).to_le_bytes());
        b[68..68 + json.len()].copy_from_slice(&json);
        let crc = crc32c::crc32c(&b[..CRC_AT]);
        b[CRC_AT..].copy_from_slice(&crc.to_le_bytes());
        Ok(b)
    }

    /// Decodes block 0 of `device`.
    pub fn decode(device: &str, b: &[u8]) -> Result<Superblock> {
        if &b[0..8] != MAGIC {
            return Err(corrupt(device, "block 0 is not a shingled block-cache superblock (no SHBCACHE magic); format the cache device first".into()));
        }
        if crc32c::crc32c(&b[..CRC_AT]) != u32_at(b, CRC_AT) {
            return Err(corrupt(device, "the superblock (block 0) fails its CRC".into()));
        }
        let version = u32_at(b, 8);
        if version != VERSION {
            return Err(corrupt(
                device,
                format!("superblock format version {version}; this build reads {VERSION}"),
            ));
        }
        let state = match u32_at(b, 12) {
            1 => State::Attached,
            2 => State::Detached,
            s => {
                return Err(corrupt(
                    device,
                    format!("superblock state {s} is neither 1 (attached) nor 2 (detached)"),
                ))
            }
        };
        let layout = Layout {
            slots: u32_at(b, 32),
            record_start: u64_at(b, 40),
            record_blocks: u64_at(b, 48),
            data_start: u64_at(b, 56),
        };
        let capacity = u32_at(b, 36);
        if layout.record_blocks != (layout.slots as u64).div_ceil(RECORDS_PER_BLOCK as u64)
            || layout.data_start != layout.record_start + layout.record_blocks
            || capacity == 0
            || capacity >= layout.slots
        {
            return Err(corrupt(
                device,
                format!(
                    "superblock layout of {} slots, {} record blocks from block {}, data from block {}, \
                     with capacity {capacity}, is impossible",
                    layout.slots, layout.record_blocks, layout.record_start, layout.data_start
                ),
            ));
        }
        let len = u32_at(b, 64) as usize;
        if len > CRC_AT - 68 {
            return Err(corrupt(device, format!("superblock setup length {len} is too large")));
        }
        let setup: CacheSetup = serde_json::from_slice(&b[68..68 + len])
            .map_err(|e| corrupt(device, format!("superblock setup JSON: {e}")))?;
        Ok(Superblock {
            state,
            cache_id: u64_at(b, 16),
            backing_blocks: u64_at(b, 24),
            capacity,
            layout,
            setup,
        })
    }
}

/// Encodes record block `rb` holding `recs` (at most 127 records, slot order).
pub fn encode_records(rb: u64, cache_id: u64, recs: &[Record], out: &mut [u8]) {
    debug_assert!(recs.len() <= RECORDS_PER_BLOCK as usize && out.len() == BLOCK);
    out.fill(0);
    out[0..4].copy_from_slice(RECORD_MAGIC);
    out[4..8].copy_from_slice(&(rb as u32).to_le_bytes());
    out[8..16].copy_from_slice(&cache_id.to_le_bytes());
    for (k, r) in recs.iter().enumerate() {
        if !r.used {
            continue;
        }
        let at = RECORD_HEADER + k * RECORD_BYTES;
        out[at..at + 8].copy_from_slice(&r.block.to_le_bytes());
        out[at + 8..at + 16].copy_from_slice(&r.epoch.to_le_bytes());
        let flags = 1u32 | (r.dirty as u32) << 1;
        out[at + 16..at + 20].copy_from_slice(&flags.to_le_bytes());
    }
    let crc = crc32c::crc32c(&out[..CRC_AT]);
    out[CRC_AT..].copy_from_slice(&crc.to_le_bytes());
}

/// Decodes record block `rb` into `recs` (its slots' records).
pub fn decode_records(device: &str, rb: u64, cache_id: u64, b: &[u8], recs: &mut [Record]) -> Result<()> {
    recs.fill(Record::FREE);
    if b.iter().all(|&x| x == 0) {
        return Ok(());
    }
    let at_block = rb + 1;
    if &b[0..4] != RECORD_MAGIC || crc32c::crc32c(&b[..CRC_AT]) != u32_at(b, CRC_AT) {
        return Err(corrupt(
            device,
            format!("record block {rb} (device block {at_block}) fails its magic or CRC"),
        ));
    }
    if u64_at(b, 8) != cache_id {
        return Ok(()); // left by an earlier format of this device
    }
    if u32_at(b, 4) as u64 != rb {
        return Err(corrupt(device, format!("record block {rb} claims to be record block {}", u32_at(b, 4))));
    }
    for (k, r) in recs.iter_mut().enumerate() {
        let at = RECORD_HEADER + k * RECORD_BYTES;
        let flags = u32_at(b, at + 16);
        if flags & !3 != 0 {
            return Err(corrupt(
                device,
                format!("record block {rb} slot record {k}: unknown flags {flags:#x}"),
            ));
        }
        if flags & 1 == 1 {
            *r = Record { block: u64_at(b, at), epoch: u64_at(b, at + 8), used: true, dirty: flags & 2 != 0 };
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layout_fits_the_device() {
        for blocks in [4u64, 5, 130, 131, 1000, 1 << 20] {
            let l = Layout::new(blocks, None).unwrap();
            assert!(l.data_start + l.slots as u64 <= blocks);
            assert!(Layout::new(blocks, Some(l.slots + 1)).is_err(), "{blocks}: one more slot would fit");
        }
        assert!(Layout::new(3, None).is_err());
    }

    #[test]
    fn records_round_trip() {
        let recs: Vec<Record> = (0..127)
            .map(|i| {
                if i % 3 == 0 {
                    Record::FREE
                } else {
                    Record { block: i * 7, epoch: i, used: true, dirty: i % 2 == 0 }
                }
            })
            .collect();
        let mut b = vec![0u8; BLOCK];
        encode_records(5, 99, &recs, &mut b);
        let mut back = vec![Record::FREE; 127];
        decode_records("t", 5, 99, &b, &mut back).unwrap();
        assert_eq!(recs, back);
        decode_records("t", 5, 98, &b, &mut back).unwrap();
        assert!(back.iter().all(|r| !r.used), "another cache id: free");
        assert!(decode_records("t", 4, 99, &b, &mut back).is_err());
        b[100] ^= 1;
        assert!(decode_records("t", 5, 99, &b, &mut back).is_err());
    }
}
