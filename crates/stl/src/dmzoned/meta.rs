//! The on-device metadata of [`super::DmZoned`]: where the two metadata sets live, the
//! superblock, the chunk mapping table and the validity bitmaps, and how a set is read back and
//! validated.
//!
//! A set is `set_blocks` 4 KiB blocks: block 0 is the superblock, then `map_blocks` blocks of
//! the mapping table, then `bitmap_blocks` blocks of bitmaps. Set 0 (the primary) starts at
//! block 0 of the conventional area, set 1 (the secondary) right after it, at block
//! `set_blocks`; metadata block `g` of that area is block `g % bpz` of conventional zone
//! `g / bpz` (blocks beyond a zone's capacity are never used). `set_blocks` depends on the
//! device geometry only, so either set can be found when the other one is damaged.

use crate::block::BLOCK;
use shingled_zoned::{DeviceInfo, ZonedDevice, ZonedError};

/// "No zone" in a mapping entry (and in the in-memory tables).
pub(super) const NONE: u32 = u32::MAX;
/// Magic at byte 0 of a superblock.
pub(super) const MAGIC: [u8; 8] = *b"SHDMZON\0";
/// Format version.
pub(super) const VERSION: u32 = 1;
/// 512-byte sectors per 4 KiB block.
pub(super) const SPB: u64 = BLOCK as u64 / 512;
/// Mapping entries (8 bytes: data zone, buffer zone, little-endian u32 each) per block.
pub(super) const ENTRIES_PER_BLOCK: u64 = (BLOCK / 8) as u64;
/// Bitmap bits per block.
pub(super) const BITS_PER_BLOCK: u64 = BLOCK as u64 * 8;

/// Where everything is, computed from the device geometry alone.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Layout {
    /// Blocks per zone (zone capacity / 4 KiB): the chunk size.
    pub bpz: u64,
    /// Zones of the device.
    pub nr_zones: u64,
    /// Conventional zones (at the start).
    pub nr_conv: u64,
    /// Sequential zones with the full zone capacity (a runt last zone is left out).
    pub seq_usable: u64,
    /// Mapping-table blocks: room for `seq_usable` chunks, whatever the reserve.
    pub map_blocks: u64,
    /// Bitmap blocks: `bpz` bits for every zone of the device.
    pub bitmap_blocks: u64,
    /// Blocks of one set: 1 + `map_blocks` + `bitmap_blocks`.
    pub set_blocks: u64,
    /// Conventional zones the two sets occupy.
    pub meta_zones: u64,
}

impl Layout {
    /// The layout of `info`, or why the geometry cannot hold one.
    pub fn new(info: &DeviceInfo) -> Result<Layout, (&'static str, String, String)> {
        let zcap = info.zone_capacity_sectors;
        if zcap == 0 || !zcap.is_multiple_of(SPB) {
            return Err((
                "zone_capacity",
                format!("{} sectors", zcap),
                "dm-zoned maps 4 KiB blocks: the zone capacity must be a non-zero multiple of 4 KiB".into(),
            ));
        }
        if info.nr_zones >= NONE as u64 {
            return Err(("nr_zones", info.nr_zones.to_string(), "zone ids are 32-bit on the device".into()));
        }
        let bpz = zcap / SPB;
        let last = info.nr_zones - 1;
        let runt = last >= info.nr_conv && info.zone_cap(last) != zcap;
        let seq_usable = info.nr_seq() - runt as u64;
        let map_blocks = seq_usable.div_ceil(ENTRIES_PER_BLOCK).max(1);
        let bitmap_blocks = (info.nr_zones * bpz).div_ceil(BITS_PER_BLOCK).max(1);
        let set_blocks = 1 + map_blocks + bitmap_blocks;
        let meta_zones = (2 * set_blocks).div_ceil(bpz);
        Ok(Layout {
            bpz,
            nr_zones: info.nr_zones,
            nr_conv: info.nr_conv,
            seq_usable,
            map_blocks,
            bitmap_blocks,
            set_blocks,
            meta_zones,
        })
    }

    /// Payload blocks of a set (everything but the superblock).
    pub fn payload_blocks(&self) -> u64 {
        self.set_blocks - 1
    }

    /// First sector of block `i` of set `set`.
    pub fn block_sector(&self, info: &DeviceInfo, set: u32, i: u64) -> u64 {
        let g = set as u64 * self.set_blocks + i;
        info.zone_start(g / self.bpz) + (g % self.bpz) * SPB
    }

    /// Whether set blocks `i` and `i + 1` are adjacent on the device (same zone).
    pub fn contiguous(&self, set: u32, i: u64) -> bool {
        let g = set as u64 * self.set_blocks + i;
        !(g + 1).is_multiple_of(self.bpz)
    }

    /// Payload index of the mapping block holding chunk `c`.
    pub fn map_block_of(&self, c: u64) -> u64 {
        c / ENTRIES_PER_BLOCK
    }

    /// Payload index of the bitmap block holding block `k` of zone `z`.
    pub fn bitmap_block_of(&self, z: u64, k: u64) -> u64 {
        self.map_blocks + (z * self.bpz + k) / BITS_PER_BLOCK
    }
}

/// The superblock fields that vary.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Super {
    /// Which set this superblock heads (0 primary, 1 secondary).
    pub set: u32,
    /// Commit generation.
    pub generation: u64,
    /// Sequential zones reserved for reclaim.
    pub reserved_seq: u64,
    /// Chunks exposed.
    pub nr_chunks: u64,
    /// CRC32C over the little-endian CRC32C of every payload block, in order.
    pub payload_crc: u32,
}

fn put_u64(b: &mut [u8], at: usize, v: u64) {
    b[at..at + 8].copy_from_slice(&v.to_le_bytes());
}

pub(super) fn u64_at(b: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(b[at..at + 8].try_into().expect("8 bytes"))
}

pub(super) fn u32_at(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(b[at..at + 4].try_into().expect("4 bytes"))
}

/// The superblock of `s` (CRC32C of bytes 0..4092 in the last 4 bytes).
pub(super) fn encode_super(lay: &Layout, info: &DeviceInfo, s: &Super) -> Vec<u8> {
    let mut b = vec![0u8; BLOCK];
    b[0..8].copy_from_slice(&MAGIC);
    b[8..12].copy_from_slice(&VERSION.to_le_bytes());
    b[12..16].copy_from_slice(&s.set.to_le_bytes());
    put_u64(&mut b, 16, s.generation);
    put_u64(&mut b, 24, info.zone_sectors);
    put_u64(&mut b, 32, info.nr_zones);
    put_u64(&mut b, 40, info.nr_conv);
    put_u64(&mut b, 48, lay.bpz);
    put_u64(&mut b, 56, lay.meta_zones);
    put_u64(&mut b, 64, s.reserved_seq);
    put_u64(&mut b, 72, s.nr_chunks);
    put_u64(&mut b, 80, lay.set_blocks);
    put_u64(&mut b, 88, lay.map_blocks);
    put_u64(&mut b, 96, lay.bitmap_blocks);
    b[104..108].copy_from_slice(&s.payload_crc.to_le_bytes());
    let crc = crc32c::crc32c(&b[..BLOCK - 4]);
    b[BLOCK - 4..].copy_from_slice(&crc.to_le_bytes());
    b
}

/// Decodes and validates a superblock found at the head of set `set`.
pub(super) fn decode_super(b: &[u8], lay: &Layout, info: &DeviceInfo, set: u32) -> Result<Super, String> {
    if b.iter().all(|&x| x == 0) {
        return Err("no superblock (zeros)".into());
    }
    if b[0..8] != MAGIC {
        return Err(format!("bad magic {:02x?}", &b[0..8]));
    }
    if crc32c::crc32c(&b[..BLOCK - 4]) != u32_at(b, BLOCK - 4) {
        return Err("superblock CRC32C mismatch".into());
    }
    let version = u32_at(b, 8);
    if version != VERSION {
        return Err(format!("format version {version} (this build reads {VERSION})"));
    }
    let s = Super {
        set: u32_at(b, 12),
        generation: u64_at(b, 16),
        reserved_seq: u64_at(b, 64),
        nr_chunks: u64_at(b, 72),
        payload_crc: u32_at(b, 104),
    };
    if s.set != set {
        return Err(format!("superblock of set {} found where set {set} lives", s.set));
    }
    let geo = [
        ("zone sectors", u64_at(b, 24), info.zone_sectors),
        ("zones", u64_at(b, 32), info.nr_zones),
        ("conventional zones", u64_at(b, 40), info.nr_conv),
        ("blocks per zone", u64_at(b, 48), lay.bpz),
        ("metadata zones", u64_at(b, 56), lay.meta_zones),
        ("set blocks", u64_at(b, 80), lay.set_blocks),
        ("map blocks", u64_at(b, 88), lay.map_blocks),
        ("bitmap blocks", u64_at(b, 96), lay.bitmap_blocks),
    ];
    for (what, got, want) in geo {
        if got != want {
            return Err(format!("{what} {got} in the superblock, the device has {want}"));
        }
    }
    if s.reserved_seq == 0 || s.reserved_seq >= lay.seq_usable {
        return Err(format!(
            "{} reserved sequential zones (need 1..{} on this device)",
            s.reserved_seq, lay.seq_usable
        ));
    }
    if s.nr_chunks != lay.seq_usable - s.reserved_seq {
        return Err(format!(
            "{} chunks, but {} usable sequential zones less {} reserved make {}",
            s.nr_chunks,
            lay.seq_usable,
            s.reserved_seq,
            lay.seq_usable - s.reserved_seq
        ));
    }
    if s.generation == 0 {
        return Err("generation 0".into());
    }
    Ok(s)
}

/// The combined CRC a superblock carries for the payload blocks with CRCs `crcs`.
pub(super) fn payload_crc(crcs: &[u32]) -> u32 {
    let mut c = 0u32;
    for x in crcs {
        c = crc32c::crc32c_append(c, &x.to_le_bytes());
    }
    c
}

/// A metadata set read back and validated.
pub(super) struct SetImage {
    pub sup: Super,
    /// The payload: `payload_blocks` blocks.
    pub payload: Vec<u8>,
    /// CRC32C of each payload block.
    pub crcs: Vec<u32>,
}

/// Why a set is not usable.
pub(super) struct BadSet {
    pub why: String,
    /// The superblock was all zeros (never written).
    pub blank: bool,
}

/// Reads set `set` and validates it. Device errors are `Err`; a set that does not verify is
/// `Ok(Err(_))`.
pub(super) fn read_set<D: ZonedDevice>(
    dev: &mut D,
    lay: &Layout,
    info: &DeviceInfo,
    set: u32,
) -> Result<Result<SetImage, BadSet>, ZonedError> {
    let mut sb = vec![0u8; BLOCK];
    dev.read(lay.block_sector(info, set, 0), &mut sb)?;
    let sup = match decode_super(&sb, lay, info, set) {
        Ok(s) => s,
        Err(why) => {
            let blank = sb.iter().all(|&x| x == 0);
            return Ok(Err(BadSet { why, blank }));
        }
    };
    let n = lay.payload_blocks();
    let mut payload = vec![0u8; (n as usize) * BLOCK];
    let mut i = 0u64;
    while i < n {
        // A run of blocks adjacent on the device (payload block i is set block i + 1).
        let mut j = i + 1;
        while j < n && j - i < 256 && lay.contiguous(set, j) {
            j += 1;
        }
        let at = lay.block_sector(info, set, i + 1);
        dev.read(at, &mut payload[i as usize * BLOCK..j as usize * BLOCK])?;
        i = j;
    }
    let crcs: Vec<u32> = payload.chunks(BLOCK).map(crc32c::crc32c).collect();
    if payload_crc(&crcs) != sup.payload_crc {
        return Ok(Err(BadSet {
            why: format!(
                "generation {}: the mapping table or bitmaps do not match the superblock's CRC (torn or damaged)",
                sup.generation
            ),
            blank: false,
        }));
    }
    Ok(Ok(SetImage { sup, payload, crcs }))
}

/// Whether bit `i` of a little-endian bitmap is set.
pub(super) fn bit(bytes: &[u8], i: u64) -> bool {
    bytes[(i / 8) as usize] & (1 << (i % 8)) != 0
}
