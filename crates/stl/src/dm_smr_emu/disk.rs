//! The emulated drive's on-disk structures: the layout, the header, the checkpoints, the PB
//! map records, and reading them all back on opening.

use super::{
    check_supported, DmSmrEmuCounts, B, BAND_ENTRY, BAND_TABLE_AT, CKPT_AT, CKPT_MAGIC, HEADER_BYTES, MAGIC,
    NCOUNTS, RECORD, VERSION,
};
use crate::block::BLOCK;
use crate::error::{io, Result, StlError};
use serde::{Deserialize, Serialize};
use shingled_core::{BandMap, ByteSize, SizeSpec};
use shingled_device::DmSmrConfig;
use shingled_zoned::Storage;
use std::collections::{BTreeMap, HashMap};

/// Where everything is, in bytes, and how big.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(super) struct Layout {
    pub(super) size: u64,
    pub(super) nbands: u64,
    pub(super) slots: u64,
    pub(super) capacity_blocks: u64,
    pub(super) records_at: u64,
    pub(super) pb_at: u64,
    pub(super) bands_at: u64,
}

impl Layout {
    pub(super) fn new(size: u64, nbands: u64, slots: u64, capacity_blocks: u64) -> Layout {
        let records_at = BAND_TABLE_AT + (nbands * BAND_ENTRY).div_ceil(B) * B;
        let pb_at = records_at + (slots * RECORD).div_ceil(B) * B;
        let bands_at = pb_at + slots * B;
        Layout { size, nbands, slots, capacity_blocks, records_at, pb_at, bands_at }
    }
    pub(super) fn end(&self) -> u64 {
        self.bands_at + self.capacity_blocks * B
    }
}

/// The header's contents.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct Header {
    pub(super) drive: String,
    pub(super) layout: Layout,
    pub(super) config: DmSmrConfig,
}

/// A PB map record.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Record {
    pub(super) block: u64,
    pub(super) seq: u64,
    pub(super) epoch: u64,
    pub(super) data_crc: u32,
}

impl Record {
    pub(super) fn encode(&self, out: &mut [u8]) {
        out[0..8].copy_from_slice(&self.block.to_le_bytes());
        out[8..16].copy_from_slice(&self.seq.to_le_bytes());
        out[16..24].copy_from_slice(&self.epoch.to_le_bytes());
        out[24..28].copy_from_slice(&self.data_crc.to_le_bytes());
        let crc = crc32c::crc32c(&out[0..28]);
        out[28..32].copy_from_slice(&crc.to_le_bytes());
    }
    pub(super) fn decode(b: &[u8]) -> Option<Record> {
        let u = |i: usize| u64::from_le_bytes(b[i..i + 8].try_into().expect("8 bytes"));
        let crc = u32::from_le_bytes(b[28..32].try_into().expect("4 bytes"));
        (crc32c::crc32c(&b[0..28]) == crc && u(16) != 0).then(|| Record {
            block: u(0),
            seq: u(8),
            epoch: u(16),
            data_crc: u32::from_le_bytes(b[24..28].try_into().expect("4 bytes")),
        })
    }
}

/// A file opened read-only with a shared lock (inspection).
pub(super) struct ReadOnly {
    pub(super) file: std::fs::File,
    pub(super) path: std::path::PathBuf,
}

impl Storage for ReadOnly {
    fn read_at(&mut self, offset: u64, buf: &mut [u8]) -> std::io::Result<()> {
        use std::os::unix::fs::FileExt;
        let mut done = 0;
        while done < buf.len() {
            match self.file.read_at(&mut buf[done..], offset + done as u64)? {
                0 => {
                    buf[done..].fill(0);
                    break;
                }
                n => done += n,
            }
        }
        Ok(())
    }
    fn write_at(&mut self, _: u64, _: &[u8]) -> std::io::Result<()> {
        Err(std::io::Error::other("opened read-only"))
    }
    fn sync(&mut self) -> std::io::Result<()> {
        Ok(())
    }
    fn size(&mut self) -> std::io::Result<u64> {
        use std::os::unix::fs::FileTypeExt;
        let m = self.file.metadata()?;
        if m.file_type().is_block_device() {
            return crate::file_block::block_device_size(&self.file);
        }
        Ok(m.len())
    }
    fn set_len(&mut self, _: u64) -> std::io::Result<()> {
        Err(std::io::Error::other("opened read-only"))
    }
    fn name(&self) -> String {
        self.path.display().to_string()
    }
}

/// What was found on opening: the state to start from and the PB's surviving copies.
pub(super) struct Loaded {
    pub(super) header: Header,
    pub(super) epoch: u64,
    pub(super) gen: u64,
    pub(super) counts: DmSmrEmuCounts,
    /// Per band: the surviving PB copies `(block, slot)` of its blocks.
    pub(super) pending: BTreeMap<u32, Vec<(u64, u64)>>,
    pub(super) damage: Vec<String>,
}

pub(super) fn write_checkpoint<S: Storage>(
    st: &mut S,
    gen: u64,
    epoch: u64,
    counts: DmSmrEmuCounts,
) -> std::io::Result<()> {
    let mut b = vec![0u8; BLOCK];
    b[0..8].copy_from_slice(CKPT_MAGIC);
    b[8..16].copy_from_slice(&gen.to_le_bytes());
    b[16..24].copy_from_slice(&epoch.to_le_bytes());
    for (i, c) in counts.to_array().iter().enumerate() {
        b[24 + 8 * i..32 + 8 * i].copy_from_slice(&c.to_le_bytes());
    }
    let end = 24 + 8 * NCOUNTS;
    let crc = crc32c::crc32c(&b[..end]);
    b[end..end + 4].copy_from_slice(&crc.to_le_bytes());
    st.write_at(CKPT_AT + (gen % 2) * B, &b)
}

pub(super) fn read_checkpoint(b: &[u8]) -> std::result::Result<(u64, u64, DmSmrEmuCounts), String> {
    if &b[0..8] != CKPT_MAGIC {
        return Err("no checkpoint magic".into());
    }
    let end = 24 + 8 * NCOUNTS;
    let crc = u32::from_le_bytes(b[end..end + 4].try_into().expect("4 bytes"));
    if crc32c::crc32c(&b[..end]) != crc {
        return Err("bad CRC".into());
    }
    let u = |i: usize| u64::from_le_bytes(b[i..i + 8].try_into().expect("8 bytes"));
    Ok((u(8), u(16), DmSmrEmuCounts::from_array(std::array::from_fn(|i| u(24 + 8 * i)))))
}

pub(super) fn parse_header(b: &[u8]) -> std::result::Result<Header, String> {
    if &b[0..8] != MAGIC {
        return Err(format!("magic {:?}, expected SHDMSMR", String::from_utf8_lossy(&b[0..8])));
    }
    let version = u32::from_le_bytes(b[8..12].try_into().expect("4 bytes"));
    if version != VERSION {
        return Err(format!("version {version}, this build reads version {VERSION}"));
    }
    let len = u32::from_le_bytes(b[12..16].try_into().expect("4 bytes")) as usize;
    if len > b.len() - 20 {
        return Err(format!("configuration length {len} beyond the header"));
    }
    let crc = u32::from_le_bytes(b[16..20].try_into().expect("4 bytes"));
    let json = &b[20..20 + len];
    if crc32c::crc32c(json) != crc {
        return Err("bad CRC".into());
    }
    serde_json::from_slice(json).map_err(|e| format!("configuration: {e}"))
}

/// Reads the headers, the checkpoints, the band table and the PB map of `st`.
pub(super) fn load<S: Storage>(st: &mut S) -> Result<Loaded> {
    let name = st.name();
    let e = |what: &str, err| io(format!("{name}: {what}"), err);
    let corrupt = |what: String| StlError::Corrupt { device: name.clone(), what };
    let size = st.size().map_err(|x| e("reading the size", x))?;
    if size < BAND_TABLE_AT {
        return Err(corrupt(format!("{size} bytes, too short for an emulated DM-SMR drive's headers")));
    }
    let mut damage = Vec::new();
    let mut hb = vec![0u8; HEADER_BYTES as usize];
    st.read_at(0, &mut hb).map_err(|x| e("reading the header", x))?;
    let primary = parse_header(&hb);
    st.read_at(HEADER_BYTES, &mut hb).map_err(|x| e("reading the backup header", x))?;
    let backup = parse_header(&hb);
    let header = match (primary, backup) {
        (Ok(h), Ok(_)) => h,
        (Ok(h), Err(why)) => {
            damage.push(format!(
                "the backup header (byte {HEADER_BYTES}) is damaged: {why}; the header is in use"
            ));
            h
        }
        (Err(why), Ok(h)) => {
            damage.push(format!("the header (byte 0) is damaged: {why}; the backup header is in use"));
            h
        }
        (Err(a), Err(b)) => return Err(corrupt(format!("header: {a}; backup header: {b}"))),
    };
    let l = header.layout;
    check_supported(&header.config, &header.drive).map_err(|x| corrupt(format!("header: {x}")))?;
    let expect = Layout::new(l.size, l.nbands, l.slots, l.capacity_blocks);
    if expect != l
        || l.end() > l.size
        || header.config.capacity.0 != l.capacity_blocks * B
        || header.config.pb_size != SizeSpec::Absolute(ByteSize(l.slots * B))
    {
        return Err(corrupt(format!("header: an inconsistent layout {l:?}")));
    }
    if size < l.size {
        return Err(corrupt(format!("{size} bytes, but the header says the drive takes {}", l.size)));
    }
    let mut cb = vec![0u8; 2 * BLOCK];
    st.read_at(CKPT_AT, &mut cb).map_err(|x| e("reading the checkpoints", x))?;
    let cks = [read_checkpoint(&cb[..BLOCK]), read_checkpoint(&cb[BLOCK..])];
    let best = cks.iter().filter_map(|c| c.as_ref().ok()).max_by_key(|c| c.0).copied();
    let Some((gen, epoch, counts)) = best else {
        return Err(corrupt(format!(
            "checkpoint 0: {}; checkpoint 1: {}",
            cks[0].as_ref().err().map_or("", |s| s),
            cks[1].as_ref().err().map_or("", |s| s)
        )));
    };
    for (i, c) in cks.iter().enumerate() {
        if let Err(why) = c {
            // The slot a torn checkpoint write left is rewritten at the next flush.
            damage.push(format!(
                "checkpoint {i} (byte {}) is damaged: {why}; checkpoint {} is in use",
                CKPT_AT + i as u64 * B,
                1 - i
            ));
        }
    }
    let mut table = vec![0u8; (l.records_at - BAND_TABLE_AT) as usize];
    st.read_at(BAND_TABLE_AT, &mut table).map_err(|x| e("reading the band table", x))?;
    let cleaned = |band: u32| -> u64 {
        let i = band as usize * BAND_ENTRY as usize;
        let u = |j: usize| u64::from_le_bytes(table[j..j + 8].try_into().expect("8 bytes"));
        if u(i) == epoch {
            u(i + 8)
        } else {
            0
        }
    };
    let mut recs = vec![0u8; (l.pb_at - l.records_at) as usize];
    st.read_at(l.records_at, &mut recs).map_err(|x| e("reading the PB map", x))?;
    let bands = BandMap::build(&header.config.bands, header.config.capacity)
        .map_err(|x| corrupt(format!("header: bands: {x}")))?;
    // Per block, its candidate copies, newest first.
    let mut cands: HashMap<u64, Vec<(u64, u64, u32)>> = HashMap::new();
    for slot in 0..l.slots {
        let i = (slot * RECORD) as usize;
        let Some(r) = Record::decode(&recs[i..i + RECORD as usize]) else { continue };
        if r.epoch != epoch || r.block >= l.capacity_blocks || r.seq < cleaned(bands.band_of(r.block)) {
            continue;
        }
        cands.entry(r.block).or_default().push((r.seq, slot, r.data_crc));
    }
    let mut pending: BTreeMap<u32, Vec<(u64, u64)>> = BTreeMap::new();
    let mut data = vec![0u8; BLOCK];
    for (block, mut c) in cands {
        c.sort_unstable_by_key(|x| std::cmp::Reverse(x.0));
        for (_, slot, crc) in c {
            st.read_at(l.pb_at + slot * B, &mut data).map_err(|x| e("reading the PB", x))?;
            if crc32c::crc32c(&data) == crc {
                pending.entry(bands.band_of(block)).or_default().push((block, slot));
                break;
            }
        }
    }
    Ok(Loaded { header, epoch, gen, counts, pending, damage })
}
