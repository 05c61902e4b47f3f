//! [`FileZoned`]: an emulated zoned device in a (sparse) file whose zone state survives
//! restarts and crashes. The format is described byte by byte in `docs/zoned-file-format.md`;
//! the constants here are its single source of truth.
//!
//! Crash-safety rules, in the order the code relies on them:
//!
//! 1. Data goes straight to the data region; the zone table is **not** touched by a write.
//! 2. A flush first makes the data durable (`fdatasync`), then writes the table pages whose
//!    zones changed, then `fdatasync` again. So a table entry never describes a write pointer
//!    whose data is not durable.
//! 3. Every 4 KiB table page exists in two copies. A page's new version (generation `g + 1`)
//!    overwrites the copy that does *not* hold the newest durable version `g`; a torn page write
//!    therefore leaves version `g` intact, and open picks, per page, the valid copy (magic, index,
//!    CRC32C, generation parity) with the highest generation.
//! 4. RESET and FINISH flush before returning: a reset that could be forgotten after a crash
//!    would let old write pointers cover newer data.
//! 5. On open, open zones come back CLOSED (EMPTY when nothing was written); the table never
//!    records the open conditions.

use crate::config::{DeviceInfo, ZonedConfig};
use crate::error::{Result, ZonedError};
use crate::mem::sectors_of;
use crate::state::{ZoneSet, ZoneState};
use crate::storage::{FileStorage, IoMode, Storage};
use crate::types::{
    Dialect, MetaDamage, ReadAboveWp, ReportOption, Zone, ZoneCond, ZoneOp, ZonedModel, SECTOR_SIZE,
};
use crate::ZonedDevice;
use std::path::Path;

/// Magic at byte 0 of the header.
pub const HEADER_MAGIC: [u8; 8] = *b"SHZONED\0";
/// Format version in the header.
pub const FORMAT_VERSION: u32 = 1;
/// Size of the header and of every table page; the last 4 bytes of each are a CRC32C of the
/// rest.
pub const BLOCK: usize = 4096;
/// Magic at byte 0 of every zone-table page.
pub const PAGE_MAGIC: [u8; 4] = *b"ZTBL";
/// Bytes of a page before its first entry.
pub const PAGE_HEADER: usize = 32;
/// Bytes per zone entry.
pub const ENTRY_SIZE: usize = 24;
/// Zone entries per table page: `(4096 − 4 − 32) / 24`.
pub const ENTRIES_PER_PAGE: usize = (BLOCK - 4 - PAGE_HEADER) / ENTRY_SIZE;
/// The data region starts at a multiple of this (1 MiB), so zones are aligned for `O_DIRECT`.
pub const DATA_ALIGN: u64 = 1 << 20;

/// How to open the file.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FileOptions {
    /// Data writes: `O_DIRECT` or buffered (default: `O_DIRECT` when the filesystem allows).
    pub io_mode: IoMode,
}

/// Counters of the work a [`FileZoned`] did on its storage.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct FileStats {
    /// `fdatasync` calls made to make data durable before a table update.
    pub data_syncs: u64,
    /// Table pages written.
    pub table_pages_written: u64,
    /// `fdatasync` calls made after table writes.
    pub table_syncs: u64,
}

/// A zoned device emulated in a file: a 4 KiB header, two copies of the zone table, and the
/// data region with zone `i` at `data_offset + i × zone_size` (sparse: unwritten zones take no
/// space). See the module docs for the crash-safety rules and `docs/zoned-file-format.md` for
/// the bytes.
///
/// Generic over the [`Storage`] so crash tests can run it on [`crate::SimStorage`].
#[derive(Debug)]
pub struct FileZoned<S: Storage = FileStorage> {
    storage: S,
    set: ZoneSet,
    data_offset: u64,
    table_offset: u64,
    nr_pages: u64,
    /// Generation of the newest durable version of each page.
    gens: Vec<u64>,
    dirty: Vec<bool>,
    data_unsynced: bool,
    stats: FileStats,
    /// Bad copies of duplicated metadata that open found and did not use.
    damage: Vec<MetaDamage>,
}

impl FileZoned<FileStorage> {
    /// Creates the file `path` (which must not exist) as a fresh device described by `cfg`.
    pub fn create(path: &Path, cfg: &ZonedConfig, opts: FileOptions) -> Result<Self> {
        let st = FileStorage::create(path, opts.io_mode)
            .map_err(|e| ZonedError::io(format!("creating {}", path.display()), e))?;
        FileZoned::create_with(st, cfg).inspect_err(|_| {
            let _ = std::fs::remove_file(path);
        })
    }

    /// Opens the device file `path`; open zones of the last session come back CLOSED.
    pub fn open(path: &Path, opts: FileOptions) -> Result<Self> {
        let st = FileStorage::open(path, opts.io_mode)
            .map_err(|e| ZonedError::io(format!("opening {}", path.display()), e))?;
        FileZoned::open_with(st)
    }

    /// Whether data writes use `O_DIRECT` (see [`IoMode::Auto`]).
    pub fn is_direct(&self) -> bool {
        self.storage.is_direct()
    }

    /// A second handle on the same open device file, holding the same lock
    /// ([`FileStorage::try_clone`]), with a copy of this handle's zone state: for reading
    /// beside it (`store get`'s second reader). The two states are apart from here on, so
    /// neither handle may write while the other is used.
    pub fn try_clone_for_reading(&self) -> Result<Self> {
        let name = self.storage.name();
        let storage =
            self.storage.try_clone().map_err(|e| ZonedError::io(format!("opening {name} again"), e))?;
        Ok(FileZoned {
            storage,
            set: self.set.clone(),
            data_offset: self.data_offset,
            table_offset: self.table_offset,
            nr_pages: self.nr_pages,
            gens: self.gens.clone(),
            // Nothing for this handle to write back: the first one owns any pending metadata.
            dirty: vec![false; self.dirty.len()],
            data_unsynced: false,
            stats: FileStats::default(),
            damage: self.damage.clone(),
        })
    }
}

/// Where the backup copy of the header lives: the last 4 KiB before the data region, when the
/// second table copy leaves it free (it does unless that copy ends exactly 4 KiB below a MiB
/// boundary: tables of `128m − 1` pages).
fn backup_header_offset(table_offset: u64, nr_pages: u64, data_offset: u64) -> Option<u64> {
    let tables_end = table_offset + 2 * nr_pages * BLOCK as u64;
    (data_offset >= tables_end + BLOCK as u64).then(|| data_offset - BLOCK as u64)
}

/// How far open looks for a backup header when the header itself is unreadable: the slot
/// before every MiB boundary up to this many MiB (tables of the largest devices take 4 MiB).
const BACKUP_SEARCH_MIB: u64 = 64;

fn layout(info: &DeviceInfo) -> (u64, u64, u64) {
    let nr_pages = info.nr_zones.div_ceil(ENTRIES_PER_PAGE as u64);
    let table_offset = BLOCK as u64;
    let data_offset = (table_offset + 2 * nr_pages * BLOCK as u64).next_multiple_of(DATA_ALIGN);
    (table_offset, nr_pages, data_offset)
}

impl<S: Storage> FileZoned<S> {
    /// Formats `storage` as a fresh device described by `cfg`: table copy 0 with every page at
    /// generation 0, copy 1 left invalid, then the header; each followed by a sync.
    pub fn create_with(mut storage: S, cfg: &ZonedConfig) -> Result<Self> {
        let (info, _) = cfg.sanitize()?;
        let (table_offset, nr_pages, data_offset) = layout(&info);
        let mut dev = FileZoned {
            set: ZoneSet::new(info),
            data_offset,
            table_offset,
            nr_pages,
            gens: vec![0; nr_pages as usize],
            dirty: vec![false; nr_pages as usize],
            data_unsynced: false,
            stats: FileStats::default(),
            damage: Vec::new(),
            storage: {
                let name = storage.name();
                // Only the metadata is sized: the data region grows as zones are written, so a
                // zone filled in order is appended to the file. (Writing into a hole inside the
                // file's size makes ext4 convert unwritten extents at every O_DIRECT write,
                // which halved the append throughput.) Reads past the end return zeros.
                storage.set_len(data_offset).map_err(|e| ZonedError::io(format!("sizing {name}"), e))?;
                storage
            },
        };
        for p in 0..nr_pages {
            let page = dev.encode_page(p, 0);
            dev.write_meta(dev.page_offset(p, 0), &page)?;
        }
        dev.sync_meta()?;
        let header = encode_header(&info, table_offset, nr_pages, data_offset);
        // The backup first: until the header itself is written the file is not a device.
        if let Some(at) = backup_header_offset(table_offset, nr_pages, data_offset) {
            dev.write_meta(at, &header)?;
        }
        dev.write_meta(0, &header)?;
        dev.sync_meta()?;
        Ok(dev)
    }

    /// Opens a formatted `storage`: validates the header, picks the newest valid copy of every
    /// table page, and brings open zones back CLOSED or EMPTY.
    pub fn open_with(mut storage: S) -> Result<Self> {
        let name = storage.name();
        let corrupt = |detail: String| ZonedError::Corrupt { path: name.clone(), detail };
        let mut header = vec![0u8; BLOCK];
        storage
            .read_at(0, &mut header)
            .map_err(|e| ZonedError::io(format!("reading the header of {name}"), e))?;
        let mut damage = Vec::new();
        let (info, table_offset, nr_pages, data_offset) = match decode_header(&header) {
            Ok(h) => {
                check_backup_header(&mut storage, &h, &mut damage);
                h
            }
            // The header is damaged: use its backup (the file's layout is in it), and say so
            // if there is none.
            Err(why) => match find_backup_header(&mut storage) {
                Some((h, at)) => {
                    damage.push(MetaDamage {
                        what: format!(
                            "the header (byte 0) is damaged ({why}); opened from its backup at byte {at}"
                        ),
                        after_crash: false,
                    });
                    h
                }
                None if header.iter().all(|&b| b == 0) => {
                    return Err(ZonedError::NotADevice {
                        path: name.clone(),
                        detail: "it is empty or starts with zeros; make one with `shingled zone create` or \
                                 `shingled store format --create`"
                            .into(),
                    })
                }
                None if header[0..8] != HEADER_MAGIC => {
                    return Err(ZonedError::NotADevice {
                        path: name.clone(),
                        detail: format!("{why}, and no backup header (or both are damaged)"),
                    })
                }
                None => {
                    return Err(corrupt(format!(
                        "damaged zoned device file: {why}, and no valid backup header (do not reformat it: \
                         its zones may still hold data)"
                    )))
                }
            },
        };
        if (table_offset, nr_pages, data_offset) != layout(&info) {
            return Err(corrupt(format!(
                "header layout (table at {table_offset}, {nr_pages} pages, data at {data_offset}) does not \
                 match its geometry"
            )));
        }
        let copy_bytes = (nr_pages as usize) * BLOCK;
        let mut copies = [vec![0u8; copy_bytes], vec![0u8; copy_bytes]];
        for (k, buf) in copies.iter_mut().enumerate() {
            storage
                .read_at(table_offset + (k * copy_bytes) as u64, buf)
                .map_err(|e| ZonedError::io(format!("reading zone table copy {k} of {name}"), e))?;
        }
        let mut gens = vec![0u64; nr_pages as usize];
        let mut states = Vec::with_capacity(info.nr_zones as usize);
        for p in 0..nr_pages as usize {
            let mut best: Option<(u64, &[u8])> = None;
            let mut why = Vec::new();
            for (k, copy) in copies.iter().enumerate() {
                let page = &copy[p * BLOCK..(p + 1) * BLOCK];
                match check_page(page, p as u64, k as u64, &info) {
                    Ok(g) if best.is_none_or(|(bg, _)| g > bg) => best = Some((g, page)),
                    Ok(_) => {}
                    Err(e) => why.push(format!("copy {k}: {e}")),
                }
            }
            let Some((g, page)) = best else {
                return Err(corrupt(format!("zone table page {p}: no valid copy ({})", why.join("; "))));
            };
            // One copy did not verify: the other (older) one is in use. Never written (zeros)
            // is not damage; a page write torn by a crash during a flush looks the same as a
            // damaged newest copy, so say both.
            for (k, copy) in copies.iter().enumerate() {
                let bytes = &copy[p * BLOCK..(p + 1) * BLOCK];
                if check_page(bytes, p as u64, k as u64, &info).is_err() && bytes.iter().any(|&b| b != 0) {
                    let first = p * ENTRIES_PER_PAGE;
                    let last = (first + ENTRIES_PER_PAGE).min(info.nr_zones as usize) - 1;
                    damage.push(MetaDamage {
                        what: format!(
                            "zone table page {p} (zones {first}-{last}): copy {k} does not verify ({}); copy {} \
                             (generation {g}) is in use. A crash during a flush leaves this; otherwise the \
                             newest state of those zones was lost",
                            why.join("; ").trim_start_matches(&format!("copy {k}: ")),
                            1 - k
                        ),
                        after_crash: true,
                    });
                }
            }
            gens[p] = g;
            let first = p * ENTRIES_PER_PAGE;
            let n = (info.nr_zones as usize - first).min(ENTRIES_PER_PAGE);
            for e in 0..n {
                let at = PAGE_HEADER + e * ENTRY_SIZE;
                states.push(decode_entry(&page[at..at + ENTRY_SIZE]).map_err(|d| {
                    corrupt(format!("zone table page {p} (generation {g}), zone {}: {d}", first + e))
                })?);
            }
        }
        let set = ZoneSet::restore(info, states).map_err(|d| corrupt(format!("zone table: {d}")))?;
        Ok(FileZoned {
            storage,
            set,
            data_offset,
            table_offset,
            nr_pages,
            gens,
            dirty: vec![false; nr_pages as usize],
            data_unsynced: false,
            stats: FileStats::default(),
            damage,
        })
    }

    /// The storage underneath (crash tests take its image from here).
    pub fn storage(&self) -> &S {
        &self.storage
    }

    /// The storage underneath, mutably (to arm a [`crate::SimStorage`] crash point).
    pub fn storage_mut(&mut self) -> &mut S {
        &mut self.storage
    }

    /// The state machine.
    pub fn zone_set(&self) -> &ZoneSet {
        &self.set
    }

    /// Work done on the storage so far.
    pub fn stats(&self) -> FileStats {
        self.stats
    }

    /// Byte offset of the data region.
    pub fn data_offset(&self) -> u64 {
        self.data_offset
    }

    fn page_offset(&self, page: u64, copy: u64) -> u64 {
        self.table_offset + (copy * self.nr_pages + page) * BLOCK as u64
    }

    fn write_meta(&mut self, off: u64, buf: &[u8]) -> Result<()> {
        let name = self.storage.name();
        self.storage.write_at(off, buf).map_err(|e| ZonedError::io(format!("writing metadata of {name}"), e))
    }

    fn sync_meta(&mut self) -> Result<()> {
        let name = self.storage.name();
        self.storage.sync().map_err(|e| ZonedError::io(format!("syncing {name}"), e))
    }

    fn mark(&mut self, zone: u64) {
        self.dirty[zone as usize / ENTRIES_PER_PAGE] = true;
    }

    fn encode_page(&self, page: u64, generation: u64) -> Vec<u8> {
        let mut b = vec![0u8; BLOCK];
        b[0..4].copy_from_slice(&PAGE_MAGIC);
        b[4..8].copy_from_slice(&(page as u32).to_le_bytes());
        b[8..16].copy_from_slice(&generation.to_le_bytes());
        let first = page * ENTRIES_PER_PAGE as u64;
        let n = (self.set.info().nr_zones - first).min(ENTRIES_PER_PAGE as u64);
        b[16..24].copy_from_slice(&first.to_le_bytes());
        b[24..28].copy_from_slice(&(n as u32).to_le_bytes());
        for e in 0..n {
            let s = self.set.persisted_state(first + e);
            let at = PAGE_HEADER + e as usize * ENTRY_SIZE;
            encode_entry(&s, &mut b[at..at + ENTRY_SIZE]);
        }
        seal(&mut b);
        b
    }

    /// Makes all completed writes and zone changes durable (module docs, rule 2).
    fn persist(&mut self) -> Result<()> {
        let name = self.storage.name();
        if self.data_unsynced {
            self.storage.sync().map_err(|e| ZonedError::io(format!("syncing data of {name}"), e))?;
            self.data_unsynced = false;
            self.stats.data_syncs += 1;
        }
        let pages: Vec<u64> = (0..self.nr_pages).filter(|&p| self.dirty[p as usize]).collect();
        if pages.is_empty() {
            return Ok(());
        }
        for &p in &pages {
            // Generations advance only after the sync below: a retried flush rewrites the same
            // copy and never the one holding the newest durable version.
            let g = self.gens[p as usize] + 1;
            let page = self.encode_page(p, g);
            self.write_meta(self.page_offset(p, g % 2), &page)?;
            self.stats.table_pages_written += 1;
        }
        self.sync_meta()?;
        self.stats.table_syncs += 1;
        for p in pages {
            self.gens[p as usize] += 1;
            self.dirty[p as usize] = false;
        }
        Ok(())
    }
}

impl<S: Storage> ZonedDevice for FileZoned<S> {
    fn info(&self) -> DeviceInfo {
        *self.set.info()
    }

    fn metadata_damage(&self) -> Vec<MetaDamage> {
        self.damage.clone()
    }

    fn report_zones(&self, sector: u64, nr_sectors: u64, opt: ReportOption) -> Result<Vec<Zone>> {
        let mut out = Vec::new();
        self.set.report(sector, nr_sectors, opt, &mut out)?;
        Ok(out)
    }

    fn read(&mut self, sector: u64, buf: &mut [u8]) -> Result<()> {
        let nr = sectors_of("read", sector, buf.len())?;
        for seg in self.set.read_plan(sector, nr)? {
            let a = ((seg.sector - sector) * SECTOR_SIZE) as usize;
            let out = &mut buf[a..a + (seg.nr * SECTOR_SIZE) as usize];
            if seg.data {
                let name = self.storage.name();
                self.storage
                    .read_at(self.data_offset + seg.sector * SECTOR_SIZE, out)
                    .map_err(|e| ZonedError::io(format!("reading sector {} of {name}", seg.sector), e))?;
            } else {
                out.fill(0);
            }
        }
        Ok(())
    }

    fn write(&mut self, sector: u64, data: &[u8]) -> Result<()> {
        let nr = sectors_of("write", sector, data.len())?;
        let plan = self.set.write_check(sector, nr)?;
        let name = self.storage.name();
        self.storage
            .write_at(self.data_offset + sector * SECTOR_SIZE, data)
            .map_err(|e| ZonedError::io(format!("writing sector {sector} of {name}"), e))?;
        self.data_unsynced = true;
        self.set.write_apply(plan, sector, nr);
        if !plan.conventional {
            self.mark(plan.zone);
        }
        Ok(())
    }

    fn zone_mgmt(&mut self, op: ZoneOp, sector: u64, nr_sectors: u64) -> Result<()> {
        let mut changed: Vec<(u64, ZoneState)> = Vec::new();
        let r = self.set.zone_mgmt(op, sector, nr_sectors, &mut changed);
        let mut durable_change = false;
        for &(z, before) in &changed {
            if before.persisted() != self.set.persisted_state(z) {
                self.mark(z);
                durable_change = true;
            }
        }
        if durable_change && matches!(op, ZoneOp::Reset | ZoneOp::Finish) {
            self.persist()?;
        }
        r
    }

    fn flush(&mut self) -> Result<()> {
        self.persist()
    }

    fn set_zone_cond(&mut self, zone: u64, cond: ZoneCond) -> Result<()> {
        self.set.set_cond(zone, cond)?;
        self.mark(zone);
        self.persist()
    }
}

/// Fills the last 4 bytes of a 4 KiB block with the CRC32C of the rest.
fn seal(b: &mut [u8]) {
    let crc = crc32c::crc32c(&b[..BLOCK - 4]);
    b[BLOCK - 4..].copy_from_slice(&crc.to_le_bytes());
}

fn crc_ok(b: &[u8]) -> bool {
    crate::table::crc_ok(&b[..BLOCK])
}

use crate::table::{u32_at, u64_at};

/// Checks the backup copy of a good header: damaged, or not matching the header, is damage;
/// zeros are a file made before backups existed (or with no room for one), not damage.
fn check_backup_header<S: Storage>(
    storage: &mut S,
    h: &(DeviceInfo, u64, u64, u64),
    damage: &mut Vec<MetaDamage>,
) {
    let Some(at) = backup_header_offset(h.1, h.2, h.3) else { return };
    let mut b = vec![0u8; BLOCK];
    if storage.read_at(at, &mut b).is_err() || b.iter().all(|&x| x == 0) {
        return;
    }
    let what = match decode_header(&b) {
        Ok(bh) if bh == *h => return,
        Ok(_) => "it describes another geometry than the header".to_string(),
        Err(e) => e,
    };
    damage.push(MetaDamage {
        what: format!("the backup header (byte {at}) is damaged ({what}); the header is in use"),
        after_crash: false,
    });
}

/// The first valid backup header (one whose layout puts it where it was found), and where.
fn find_backup_header<S: Storage>(storage: &mut S) -> Option<((DeviceInfo, u64, u64, u64), u64)> {
    let mut b = vec![0u8; BLOCK];
    for mib in 1..=BACKUP_SEARCH_MIB {
        let at = mib * DATA_ALIGN - BLOCK as u64;
        if storage.read_at(at, &mut b).is_err() {
            continue;
        }
        if let Ok(h) = decode_header(&b) {
            if backup_header_offset(h.1, h.2, h.3) == Some(at) && (h.1, h.2, h.3) == layout(&h.0) {
                return Some((h, at));
            }
        }
    }
    None
}

fn encode_header(info: &DeviceInfo, table_offset: u64, nr_pages: u64, data_offset: u64) -> Vec<u8> {
    let mut b = vec![0u8; BLOCK];
    b[0..8].copy_from_slice(&HEADER_MAGIC);
    b[8..12].copy_from_slice(&FORMAT_VERSION.to_le_bytes());
    b[12..16].copy_from_slice(&(BLOCK as u32).to_le_bytes());
    b[16..24].copy_from_slice(&info.capacity_sectors.to_le_bytes());
    b[24..32].copy_from_slice(&info.zone_sectors.to_le_bytes());
    b[32..40].copy_from_slice(&info.zone_capacity_sectors.to_le_bytes());
    b[40..48].copy_from_slice(&info.nr_zones.to_le_bytes());
    b[48..56].copy_from_slice(&info.nr_conv.to_le_bytes());
    b[56..60].copy_from_slice(&info.max_open.to_le_bytes());
    b[60..64].copy_from_slice(&info.max_active.to_le_bytes());
    b[64..68].copy_from_slice(&info.lba_size.to_le_bytes());
    b[68] = match info.dialect {
        Dialect::Zbc => 0,
        Dialect::Zns => 1,
    };
    b[69] = match info.model {
        ZonedModel::HostManaged => 0,
        ZonedModel::HostAware => 1,
    };
    b[70] = match info.read_above_wp {
        ReadAboveWp::Zeros => 0,
        ReadAboveWp::Fail => 1,
    };
    b[72..80].copy_from_slice(&table_offset.to_le_bytes());
    b[80..88].copy_from_slice(&nr_pages.to_le_bytes());
    b[88..96].copy_from_slice(&data_offset.to_le_bytes());
    seal(&mut b);
    b
}

fn decode_header(b: &[u8]) -> std::result::Result<(DeviceInfo, u64, u64, u64), String> {
    if b[0..8] != HEADER_MAGIC {
        return Err(format!("bad magic {:02x?} at byte 0 (expected \"SHZONED\\0\")", &b[0..8]));
    }
    let version = u32_at(b, 8);
    if version != FORMAT_VERSION {
        return Err(format!("format version {version} at byte 8 (this build reads {FORMAT_VERSION})"));
    }
    if !crc_ok(b) {
        return Err("header CRC32C mismatch (bytes 4092..4096)".into());
    }
    let pick =
        |v: u8, what: &str| if v <= 1 { Ok(v) } else { Err(format!("bad {what} code {v} in the header")) };
    let info = DeviceInfo {
        capacity_sectors: u64_at(b, 16),
        zone_sectors: u64_at(b, 24),
        zone_capacity_sectors: u64_at(b, 32),
        nr_zones: u64_at(b, 40),
        nr_conv: u64_at(b, 48),
        max_open: u32_at(b, 56),
        max_active: u32_at(b, 60),
        lba_size: u32_at(b, 64),
        dialect: if pick(b[68], "dialect")? == 0 { Dialect::Zbc } else { Dialect::Zns },
        model: if pick(b[69], "model")? == 0 { ZonedModel::HostManaged } else { ZonedModel::HostAware },
        read_above_wp: if pick(b[70], "read_above_wp")? == 0 {
            ReadAboveWp::Zeros
        } else {
            ReadAboveWp::Fail
        },
    };
    // The geometry must be one `ZonedConfig::sanitize` produces unchanged.
    let cfg = ZonedConfig {
        capacity: shingled_core::ByteSize(info.capacity_sectors * SECTOR_SIZE),
        zone_size: shingled_core::ByteSize(info.zone_sectors * SECTOR_SIZE),
        zone_capacity: shingled_core::ByteSize(info.zone_capacity_sectors * SECTOR_SIZE),
        nr_conv: info.nr_conv,
        max_open: info.max_open,
        max_active: info.max_active,
        dialect: info.dialect,
        model: info.model,
        lba_size: info.lba_size,
        read_above_wp: info.read_above_wp,
    };
    match cfg.sanitize() {
        Ok((i, notes)) if i == info && notes.is_empty() => {}
        Ok(_) => return Err("header geometry is not self-consistent".into()),
        Err(e) => return Err(format!("header geometry: {e}")),
    }
    Ok((info, u64_at(b, 72), u64_at(b, 80), u64_at(b, 88)))
}

/// Validates a table page found in copy `copy`; returns its generation.
fn check_page(b: &[u8], page: u64, copy: u64, info: &DeviceInfo) -> Result<u64> {
    crate::table::check_block(
        b,
        PAGE_MAGIC,
        page,
        copy,
        ENTRIES_PER_PAGE as u64,
        info.nr_zones,
        ("page", "zone"),
    )
}

fn encode_entry(s: &ZoneState, b: &mut [u8]) {
    b[0..8].copy_from_slice(&s.wp.to_le_bytes());
    b[8..16].copy_from_slice(&s.data_end.to_le_bytes());
    b[16] = s.cond.code();
    b[17] = s.non_seq as u8;
}

fn decode_entry(b: &[u8]) -> std::result::Result<ZoneState, String> {
    let cond = ZoneCond::from_code(b[16]).ok_or_else(|| format!("condition code {:#x}", b[16]))?;
    if b[17] > 1 {
        return Err(format!("flags {:#x}", b[17]));
    }
    Ok(ZoneState { wp: u64_at(b, 0), data_end: u64_at(b, 8), cond, non_seq: b[17] == 1 })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::storage::{SimStorage, Survivors};

    fn cfg() -> ZonedConfig {
        let mut c = ZonedConfig::small(400, 64, Dialect::Zbc);
        c.nr_conv = 2;
        c
    }

    /// The typed errors of `ZoneSet::restore` and `table::check_block` say what the strings
    /// before them said, word for word.
    #[test]
    fn restore_and_table_errors_keep_their_messages() {
        let (info, _) = cfg().sanitize().unwrap();
        let st = |cond, data_end| ZoneState { wp: 0, data_end, cond, non_seq: false };
        let e = ZoneSet::restore(info, vec![st(ZoneCond::NotWp, 0); 3]).unwrap_err();
        assert_eq!(e.to_string(), "3 zone states for 400 zones");
        let mut states = vec![st(ZoneCond::Empty, 0); 400];
        states[..2].fill(st(ZoneCond::NotWp, 0));
        states[7] = st(ZoneCond::Empty, 5);
        let e = ZoneSet::restore(info, states).unwrap_err();
        let want = "zone 7: condition empty with write pointer 0 and data end 5 is impossible (length 128, \
                    capacity 128 sectors)";
        assert_eq!((e.to_string().as_str(), e.errno_name()), (want, "EIO"));
        assert!(ZoneSet::new(info).check_invariants().is_ok());

        let check = |b: &[u8], copy| check_page(b, 0, copy, &info).unwrap_err().to_string();
        let mut b = vec![0u8; BLOCK];
        assert_eq!(check(&b, 0), "no page magic");
        b[0..4].copy_from_slice(&PAGE_MAGIC);
        assert_eq!(check(&b, 0), "CRC32C mismatch");
        seal(&mut b);
        assert_eq!(check(&b, 0), "page header says page 0 / first zone 0 / 0 zones");
        b[8..16].copy_from_slice(&3u64.to_le_bytes());
        b[24..28].copy_from_slice(&(ENTRIES_PER_PAGE as u32).to_le_bytes());
        seal(&mut b);
        assert_eq!(check(&b, 0), "generation 3 cannot live in copy 0");
        assert_eq!(check_page(&b, 0, 1, &info).unwrap(), 3);
    }

    /// A second handle for reading shares the first's lock (a third open of the file is still
    /// refused) and reads what was written through the first.
    #[test]
    fn a_second_handle_reads_beside_the_first_under_its_lock() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("dev.zbd");
        let mut d = FileZoned::create(&path, &cfg(), FileOptions::default()).unwrap();
        let z5 = d.report_zone(5).unwrap().start;
        let data: Vec<u8> = (0..8192u32).map(|i| (i * 7 % 251) as u8).collect();
        d.write(z5, &data).unwrap();
        let mut r = d.try_clone_for_reading().unwrap();
        let mut back = vec![0u8; 8192];
        r.read(z5, &mut back).unwrap();
        assert_eq!(back, data);
        assert_eq!(r.report_zone(5).unwrap().wp, d.report_zone(5).unwrap().wp);
        assert!(FileZoned::open(&path, FileOptions::default()).is_err(), "the lock is held");
        drop(d);
        assert!(FileZoned::open(&path, FileOptions::default()).is_err(), "the second handle holds it");
        drop(r);
        FileZoned::open(&path, FileOptions::default()).unwrap();
    }

    #[test]
    fn layout_constants() {
        assert_eq!(ENTRIES_PER_PAGE, 169);
        let (info, _) = cfg().sanitize().unwrap();
        assert_eq!(layout(&info), (4096, 3, 1 << 20));
    }

    #[test]
    fn state_survives_reopen_and_open_zones_come_back_closed() {
        let mut d = FileZoned::create_with(SimStorage::new(), &cfg()).unwrap();
        let z5 = d.report_zone(5).unwrap().start;
        d.write(z5, &[1u8; 4096]).unwrap();
        let z300 = d.report_zone(300).unwrap().start;
        d.zone_mgmt(ZoneOp::Open, z300, 128).unwrap();
        d.zone_mgmt(ZoneOp::Finish, d.report_zone(7).unwrap().start, 128).unwrap();
        d.flush().unwrap();
        let mut d = FileZoned::open_with(d.storage().power_cut(Survivors::None)).unwrap();
        let z = d.report_zone(5).unwrap();
        assert_eq!((z.cond, z.wp - z.start), (ZoneCond::Closed, 8));
        assert_eq!(d.report_zone(300).unwrap().cond, ZoneCond::Empty);
        assert_eq!(d.report_zone(7).unwrap().cond, ZoneCond::Full);
        let mut buf = [0u8; 4096];
        d.read(z5, &mut buf).unwrap();
        assert!(buf.iter().all(|&b| b == 1));
    }

    #[test]
    fn unflushed_writes_are_not_covered_by_the_wp() {
        let mut d = FileZoned::create_with(SimStorage::new(), &cfg()).unwrap();
        let z = d.report_zone(3).unwrap().start;
        d.write(z, &[1u8; 512]).unwrap();
        d.flush().unwrap();
        d.write(z + 1, &[2u8; 512]).unwrap();
        let d2 = FileZoned::open_with(d.storage().power_cut(Survivors::All)).unwrap();
        assert_eq!(d2.report_zone(3).unwrap().wp, z + 1);
    }

    #[test]
    fn torn_table_page_falls_back_to_the_other_copy() {
        let mut d = FileZoned::create_with(SimStorage::new(), &cfg()).unwrap();
        let z = d.report_zone(3).unwrap().start;
        d.write(z, &[1u8; 512]).unwrap();
        d.flush().unwrap(); // page 0 generation 1 in copy 1
        d.write(z + 1, &[1u8; 512]).unwrap();
        // data sync succeeds, the page write (generation 2, copy 0) does not reach the disk
        d.storage_mut().fail_after(1);
        assert!(d.flush().is_err());
        let d2 = FileZoned::open_with(d.storage().power_cut(Survivors::None)).unwrap();
        assert_eq!(d2.report_zone(3).unwrap().wp, z + 1);
        // corrupt both copies of page 1: open names the page
        let mut st = d.storage().power_cut(Survivors::None);
        st.write_at(4096 + 4096 + 100, &[0xff]).unwrap();
        st.write_at(4096 + 3 * 4096 + 4096 + 100, &[0xff]).unwrap();
        let e = FileZoned::open_with(st).unwrap_err().to_string();
        assert!(e.contains("page 1: no valid copy"), "{e}");
    }

    #[test]
    fn a_bad_copy_of_a_table_page_or_header_is_reported() {
        let mut d = FileZoned::create_with(SimStorage::new(), &cfg()).unwrap();
        let fresh = FileZoned::open_with(d.storage().power_cut(Survivors::None)).unwrap();
        assert_eq!(fresh.metadata_damage(), vec![], "a copy never written is not damage");
        let z = d.report_zone(3).unwrap().start;
        d.write(z, &[1u8; 4096]).unwrap();
        d.flush().unwrap(); // page 0 generation 1 in copy 1
        let np = d.nr_pages;
        // The newest copy of page 0 damaged: the older copy (zone 3 EMPTY) is used, and said.
        let mut st = d.storage().power_cut(Survivors::None);
        st.write_at(BLOCK as u64 * (1 + np) + 200, &[0x5a]).unwrap();
        let d2 = FileZoned::open_with(st).unwrap();
        assert_eq!(d2.report_zone(3).unwrap().cond, ZoneCond::Empty);
        let dmg = d2.metadata_damage();
        assert_eq!(dmg.len(), 1, "{dmg:?}");
        assert!(dmg[0].after_crash && dmg[0].what.contains("page 0 (zones 0-168): copy 1"), "{dmg:?}");
        assert!(dmg[0].what.contains("copy 0 (generation 0) is in use"), "{dmg:?}");
        // The header's backup damaged while the header is good.
        let (_, _, data) = layout(d.zone_set().info());
        let backup = backup_header_offset(BLOCK as u64, np, data).expect("room for a backup");
        let mut st = d.storage().power_cut(Survivors::None);
        st.write_at(backup + 40, &[7]).unwrap();
        let dmg = FileZoned::open_with(st).unwrap().metadata_damage();
        assert!(dmg.len() == 1 && !dmg[0].after_crash && dmg[0].what.contains("backup header"), "{dmg:?}");
    }

    #[test]
    fn header_damage_is_reported() {
        let d = FileZoned::create_with(SimStorage::new(), &cfg()).unwrap();
        let (_, np, data) = layout(d.zone_set().info());
        let backup = backup_header_offset(BLOCK as u64, np, data).expect("room for a backup");
        // The header alone damaged: the backup opens the device, same geometry.
        let mut st = d.storage().power_cut(Survivors::None);
        st.write_at(30, &[9]).unwrap();
        let again = FileZoned::open_with(st).unwrap();
        assert_eq!(again.zone_set().info(), d.zone_set().info());
        let dmg = again.metadata_damage();
        assert!(dmg.len() == 1 && dmg[0].what.contains("opened from its backup"), "{dmg:?}");
        // Header and backup damaged: a damaged device, not "not a device".
        let mut st = d.storage().power_cut(Survivors::None);
        st.write_at(30, &[9]).unwrap();
        st.write_at(backup + 30, &[9]).unwrap();
        let e = FileZoned::open_with(st).unwrap_err();
        assert!(
            e.to_string().contains("CRC32C") && e.to_string().contains("damaged zoned device file"),
            "{e}"
        );
        assert_eq!(e.errno(), libc::EIO);
        // Not a device at all (no magic anywhere).
        let mut st = SimStorage::new();
        st.write_at(0, &[0u8; 8192]).unwrap();
        let e = FileZoned::open_with(st).unwrap_err().to_string();
        assert!(e.contains("is not a zoned device file") && e.contains("starts with zeros"), "{e}");
    }
}
