//! [`FileMedium`]: a shingled medium in a file (or any [`Storage`]) whose poison flags survive
//! restarts and power cuts.
//!
//! # Format
//!
//! All integers little-endian; every metadata block ends with a CRC32C of the rest of it.
//!
//! | bytes | what |
//! |---|---|
//! | `0 .. 16 KiB` | header slot 0 ([`HEADER_SLOT`] bytes) |
//! | `16 KiB .. 32 KiB` | header slot 1: a backup copy of slot 0 |
//! | `32 KiB ..` | flag table copy 0, then copy 1, each `table_blocks` blocks of 4 KiB |
//! | `data_offset ..` | the tracks, laid out flat ([`Geometry::track_offset`]); `data_offset` is the end of the tables rounded up to 1 MiB |
//!
//! Header slot: magic `SHSTLMED` (byte 0), version (8), slot size (12), `head_width` (16),
//! `unshingled_tracks` (20), tracks (24), data bytes (32), table offset (40), table blocks (48),
//! data offset (56), zones (64), runs (68), then from byte 80 the zones as runs of equal zones,
//! 12 bytes each (count, tracks, bytes per track), and the CRC32C in the last 4 bytes.
//!
//! Flag table block: magic `STFL` (0), block index (4), generation (8), first track (16),
//! entries (24), then from byte 32 one byte per track: 0 for a readable track, `d` (1 to 15)
//! for a track poisoned by a write of the track `d` before it; CRC32C in the last 4 bytes.
//! Generation `g` of a block lives in copy `g mod 2`, so a new version never overwrites the
//! newest durable one; open takes, per block, the valid copy with the higher generation.
//!
//! Only the metadata is sized at creation: the data region grows as tracks are written (reads
//! past the end of the file are zeros, like never-written tracks).
//!
//! # Crash consistency
//!
//! Two copies of the flags exist: `flags`, the truth reads obey, and `table`, what the flag
//! table may say on disk. They differ only by *heals* (whole-track writes that make a poisoned
//! track readable) whose data is not yet known durable: a heal clears `flags` at once but
//! `table` only after a sync that covers the healing write. The rules:
//!
//! 1. **Poison barrier.** A write that destroys a track `v` whose `table` entry says readable
//!    first sets the entry, writes the changed table blocks (to their other copy) and syncs;
//!    only then is the write's data issued. So whenever a destroying write's bytes can be in
//!    the file (durable, in flight, torn), its victims are already durably poisoned.
//! 2. **Heals after data.** A table block is only ever written with heals whose data a
//!    completed sync made durable, so a durable "readable" entry never covers a track whose
//!    new contents may have been lost or torn.
//! 3. **Flush.** `flush` syncs the data (which lets the pending heals into `table`), writes
//!    the table blocks that changed, and syncs again.
//! 4. **Torn table blocks** fall back to the other copy: the older version is as sound as the
//!    newer (the poison it lacks belongs to a write not yet issued, the heals it lacks only
//!    keep a track poisoned).
//!
//! A power cut therefore leaves no track readable whose contents a later write (acknowledged,
//! or in flight and issued) destroyed: its flag was durable before that write's bytes could
//! reach the file, and it is cleared durably only after a whole rewrite is durable. And every
//! write acknowledged before the last successful flush reads back intact (unless a later write
//! destroyed it): its data and the heal it made are durable.
//!
//! Destroyed tracks are also filled with [`POISON`](crate::medium::POISON) (written after the destroying write, like
//! the physical overlap), so the file looks like the medium; the flag table alone decides
//! what is readable, and open trusts it (a track holding the pattern is not taken as poisoned:
//! a client may write that pattern as data).
//!
//! A storage error during a write or a flush leaves the medium **failed**: every later
//! operation returns [`StlError::Failed`] until the file is opened again (what a drive that
//! lost power does; the in-memory state may be ahead of the disk).

use crate::error::{invalid, io, Result, StlError};
use crate::medium::{fill_poison, Geometry, MediumStats, MediumZone, TrackMedium};
use serde::{Deserialize, Serialize};
use shingled_zoned::{FileStorage, IoMode, Storage};
use std::path::Path;

/// Magic at byte 0 of both header slots.
pub const MAGIC: [u8; 8] = *b"SHSTLMED";
/// Format version.
pub const FORMAT_VERSION: u32 = 1;
/// Bytes of one header slot; the backup slot follows the first.
pub const HEADER_SLOT: usize = 16 * 1024;
/// Bytes of a flag-table block.
pub const TABLE_BLOCK: usize = 4096;
/// Magic at byte 0 of every flag-table block.
pub const TABLE_MAGIC: [u8; 4] = *b"STFL";
/// Bytes of a table block before its first entry.
pub const TABLE_HEADER: usize = 32;
/// Track flags per table block.
pub const FLAGS_PER_BLOCK: usize = TABLE_BLOCK - TABLE_HEADER - 4;
/// The data region starts at a multiple of this (1 MiB), so tracks are aligned for `O_DIRECT`.
pub const DATA_ALIGN: u64 = 1 << 20;
/// Byte of the header where the zone runs start.
const RUNS_AT: usize = 80;
/// Bytes per zone run.
const RUN_SIZE: usize = 12;
/// Runs of equal zones that fit the header.
pub const MAX_RUNS: usize = (HEADER_SLOT - RUNS_AT - 4) / RUN_SIZE;
/// Most tracks a file medium may have (a 256 MiB flag table per copy).
pub const MAX_TRACKS: u64 = 1 << 28;
/// Most recording zones a file medium may have.
pub const MAX_ZONES: u64 = 1 << 24;

/// Where the tables and the data are.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Layout {
    table_offset: u64,
    table_blocks: u64,
    data_offset: u64,
}

fn layout(tracks: u64) -> Layout {
    let table_blocks = tracks.div_ceil(FLAGS_PER_BLOCK as u64);
    let table_offset = 2 * HEADER_SLOT as u64;
    let data_offset = (table_offset + 2 * table_blocks * TABLE_BLOCK as u64).next_multiple_of(DATA_ALIGN);
    Layout { table_offset, table_blocks, data_offset }
}

/// Counters of the metadata work a [`FileMedium`] did on its storage.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileMediumStats {
    /// Syncs of the storage.
    pub syncs: u64,
    /// Flag-table blocks written.
    pub table_blocks_written: u64,
    /// Writes that waited for a table sync before their data (rule 1 of the module docs).
    pub poison_barriers: u64,
}

/// A shingled medium in a [`Storage`]: tracks laid out flat after a header and a flag table
/// that survive power cuts (see the module docs for the format and the crash argument).
#[derive(Debug)]
pub struct FileMedium<S: Storage = FileStorage> {
    storage: S,
    name: String,
    geometry: Geometry,
    layout: Layout,
    /// The truth reads obey: 0 readable, `d` poisoned by the track `d` before.
    flags: Vec<u8>,
    /// What the flag table may say on disk: `flags` without the heals not yet durable.
    table: Vec<u8>,
    /// Generation of the newest durable version of each table block.
    gens: Vec<u64>,
    /// Table blocks whose `table` contents are newer than their newest durable version.
    dirty: Vec<bool>,
    /// Tracks healed by a whole write since the last sync.
    healed: Vec<u64>,
    /// Storage writes since the last sync.
    unsynced: bool,
    failed: Option<String>,
    stats: MediumStats,
    fstats: FileMediumStats,
    damage: Vec<String>,
    /// One track of the poison pattern, as long as the longest track.
    poison: Vec<u8>,
}

impl FileMedium<FileStorage> {
    /// Creates the file `path` (which must not exist) as an empty medium of this layout, with
    /// `O_DIRECT` data writes when the filesystem allows ([`IoMode::Auto`]).
    pub fn create_file(path: &Path, geometry: Geometry) -> Result<Self> {
        FileMedium::create_file_with(path, geometry, IoMode::Auto)
    }

    /// [`FileMedium::create_file`] with an explicit [`IoMode`].
    pub fn create_file_with(path: &Path, geometry: Geometry, mode: IoMode) -> Result<Self> {
        geometry.validate()?;
        let st =
            FileStorage::create(path, mode).map_err(|e| io(format!("creating {}", path.display()), e))?;
        FileMedium::create(st, geometry).inspect_err(|_| {
            let _ = std::fs::remove_file(path);
        })
    }

    /// Opens the medium file `path` ([`IoMode::Auto`]).
    pub fn open_file(path: &Path) -> Result<Self> {
        FileMedium::open_file_with(path, IoMode::Auto)
    }

    /// [`FileMedium::open_file`] with an explicit [`IoMode`].
    pub fn open_file_with(path: &Path, mode: IoMode) -> Result<Self> {
        let st = FileStorage::open(path, mode).map_err(|e| io(format!("opening {}", path.display()), e))?;
        FileMedium::open(st)
    }

    /// Whether data writes use `O_DIRECT`.
    pub fn is_direct(&self) -> bool {
        self.storage.is_direct()
    }
}

impl<S: Storage> FileMedium<S> {
    /// Formats `storage` as an empty medium of this layout: flag table copy 0 (every block at
    /// generation 0, every track readable), sync, then the backup header and the header, sync.
    /// Until the header is written the storage is not a medium.
    pub fn create(mut storage: S, geometry: Geometry) -> Result<Self> {
        geometry.validate()?;
        let runs = zone_runs(&geometry.zones);
        if runs.len() > MAX_RUNS {
            return Err(invalid(
                "zones",
                geometry.zones.len(),
                format!("{} runs of equal zones; the header holds {MAX_RUNS}", runs.len()),
            ));
        }
        let tracks = geometry.tracks();
        if tracks > MAX_TRACKS {
            return Err(invalid("zones", format!("{tracks} tracks"), format!("at most {MAX_TRACKS} tracks")));
        }
        if geometry.zones.len() as u64 > MAX_ZONES {
            return Err(invalid("zones", geometry.zones.len(), format!("at most {MAX_ZONES} zones")));
        }
        let name = storage.name();
        let lay = layout(tracks);
        storage.set_len(lay.data_offset).map_err(|e| io(format!("sizing {name}"), e))?;
        let blocks = lay.table_blocks as usize;
        let mut m = FileMedium::assemble(storage, geometry, lay, vec![0; tracks as usize], vec![0; blocks]);
        for b in 0..lay.table_blocks {
            let block = m.encode_block(b, 0);
            m.write_meta(m.block_offset(b, 0), &block, "flag table")?;
        }
        m.sync()?;
        let header = encode_header(&m.geometry, &lay);
        m.write_meta(HEADER_SLOT as u64, &header, "backup header")?;
        m.write_meta(0, &header, "header")?;
        m.sync()?;
        m.fstats = FileMediumStats::default();
        Ok(m)
    }

    /// Opens a formatted `storage`: validates the header (falling back to its backup), takes
    /// the newest valid copy of every flag-table block and checks every flag. A damaged or
    /// truncated medium fails with [`StlError::Corrupt`] naming the storage and the field.
    pub fn open(mut storage: S) -> Result<Self> {
        let name = storage.name();
        let corrupt = |what: String| StlError::Corrupt { device: name.clone(), what };
        let mut slots = [vec![0u8; HEADER_SLOT], vec![0u8; HEADER_SLOT]];
        for (k, s) in slots.iter_mut().enumerate() {
            storage
                .read_at((k * HEADER_SLOT) as u64, s)
                .map_err(|e| io(format!("reading header slot {k} of {name}"), e))?;
        }
        let mut damage = Vec::new();
        let (geometry, lay) = match (decode_header(&slots[0]), decode_header(&slots[1])) {
            (Ok(a), Ok(b)) => {
                if a != b {
                    damage.push(format!(
                        "the backup header (byte {HEADER_SLOT}) describes another medium than the header; the \
                         header is in use"
                    ));
                }
                a
            }
            (Ok(a), Err(why)) => {
                damage.push(format!(
                    "the backup header (byte {HEADER_SLOT}) is damaged ({why}); the header is in use"
                ));
                a
            }
            (Err(why), Ok(b)) => {
                damage.push(format!("the header (byte 0) is damaged ({why}); opened from its backup"));
                b
            }
            (Err(w0), Err(w1)) => {
                if slots.iter().all(|s| s.iter().all(|&b| b == 0)) {
                    return Err(corrupt(
                        "not a shingled medium file: it is empty or starts with zeros (no header at byte 0 or \
                         its backup at byte 16384)"
                            .into(),
                    ));
                }
                return Err(corrupt(format!(
                    "damaged medium file: header (byte 0): {w0}; backup header (byte {HEADER_SLOT}): {w1}"
                )));
            }
        };
        let copy_bytes = lay.table_blocks as usize * TABLE_BLOCK;
        let size = storage.size().map_err(|e| io(format!("sizing {name}"), e))?;
        if size < lay.table_offset + copy_bytes as u64 {
            return Err(corrupt(format!(
                "truncated: {size} bytes, but flag table copy 0 ends at byte {}",
                lay.table_offset + copy_bytes as u64
            )));
        }
        let mut copies = [vec![0u8; copy_bytes], vec![0u8; copy_bytes]];
        for (k, c) in copies.iter_mut().enumerate() {
            storage
                .read_at(lay.table_offset + (k * copy_bytes) as u64, c)
                .map_err(|e| io(format!("reading flag table copy {k} of {name}"), e))?;
        }
        let tracks = geometry.tracks();
        let mut flags = Vec::with_capacity(tracks as usize);
        let mut gens = vec![0u64; lay.table_blocks as usize];
        for b in 0..lay.table_blocks as usize {
            let mut best: Option<(u64, &[u8])> = None;
            let mut why = Vec::new();
            for (k, c) in copies.iter().enumerate() {
                let block = &c[b * TABLE_BLOCK..(b + 1) * TABLE_BLOCK];
                match check_block(block, b as u64, k as u64, tracks) {
                    Ok(g) if best.is_none_or(|(bg, _)| g > bg) => best = Some((g, block)),
                    Ok(_) => {}
                    Err(e) => why.push(format!("copy {k}: {e}")),
                }
            }
            let first = b as u64 * FLAGS_PER_BLOCK as u64;
            let n = (tracks - first).min(FLAGS_PER_BLOCK as u64);
            let Some((g, block)) = best else {
                return Err(corrupt(format!(
                    "flag table block {b} (tracks {first}-{}): no valid copy ({})",
                    first + n - 1,
                    why.join("; ")
                )));
            };
            for (k, c) in copies.iter().enumerate() {
                let bytes = &c[b * TABLE_BLOCK..(b + 1) * TABLE_BLOCK];
                if check_block(bytes, b as u64, k as u64, tracks).is_err() && bytes.iter().any(|&x| x != 0) {
                    damage.push(format!(
                        "flag table block {b}: copy {k} does not verify; copy {} (generation {g}) is in use (a \
                         crash during a table write leaves this)",
                        1 - k
                    ));
                }
            }
            gens[b] = g;
            for (i, &d) in block[TABLE_HEADER..TABLE_HEADER + n as usize].iter().enumerate() {
                let t = first + i as u64;
                if d != 0 && (d as u64 > t || !geometry.overlapped(t - d as u64).contains(&t)) {
                    return Err(corrupt(format!(
                        "flag table block {b} (generation {g}), track {t}: flag {d} names no track whose write \
                         overlaps it"
                    )));
                }
                flags.push(d);
            }
        }
        let mut m = FileMedium::assemble(storage, geometry, lay, flags, gens);
        m.damage = damage;
        Ok(m)
    }

    fn assemble(storage: S, geometry: Geometry, layout: Layout, flags: Vec<u8>, gens: Vec<u64>) -> Self {
        let blocks = layout.table_blocks as usize;
        let longest = geometry.zones.iter().map(|z| z.track_bytes).max().unwrap_or(0) as usize;
        let mut poison = vec![0u8; longest];
        fill_poison(&mut poison);
        FileMedium {
            name: storage.name(),
            storage,
            geometry,
            layout,
            table: flags.clone(),
            flags,
            gens,
            dirty: vec![false; blocks],
            healed: Vec::new(),
            unsynced: false,
            failed: None,
            stats: MediumStats::default(),
            fstats: FileMediumStats::default(),
            damage: Vec::new(),
            poison,
        }
    }

    /// Track counters.
    pub fn stats(&self) -> MediumStats {
        self.stats
    }

    /// Metadata counters.
    pub fn file_stats(&self) -> FileMediumStats {
        self.fstats
    }

    /// Bad copies of duplicated metadata (header, table blocks) found at open and not used.
    pub fn metadata_damage(&self) -> &[String] {
        &self.damage
    }

    /// Why the medium stopped accepting operations, if it did.
    pub fn failure(&self) -> Option<&str> {
        self.failed.as_deref()
    }

    /// The storage underneath (crash tests take its image from here).
    pub fn storage(&self) -> &S {
        &self.storage
    }

    /// The storage underneath, mutably (to arm a [`shingled_zoned::SimStorage`] crash point).
    pub fn storage_mut(&mut self) -> &mut S {
        &mut self.storage
    }

    /// Unwraps.
    pub fn into_storage(self) -> S {
        self.storage
    }

    /// Byte offset of the data region (track `t` is at `data_offset + track_offset(t)`).
    pub fn data_offset(&self) -> u64 {
        self.layout.data_offset
    }

    fn alive(&self) -> Result<()> {
        match &self.failed {
            Some(why) => Err(StlError::Failed { device: self.name.clone(), detail: why.clone() }),
            None => Ok(()),
        }
    }

    /// Records a storage failure: the medium refuses everything from now on.
    fn fail(&mut self, what: String, e: std::io::Error) -> StlError {
        self.failed = Some(format!("{what} failed ({e}); reopen the medium"));
        io(format!("{}: {what}", self.name), e)
    }

    fn write_meta(&mut self, off: u64, buf: &[u8], what: &str) -> Result<()> {
        match self.storage.write_at(off, buf) {
            Ok(()) => {
                self.unsynced = true;
                Ok(())
            }
            Err(e) => Err(self.fail(format!("writing the {what} at byte {off}"), e)),
        }
    }

    /// Syncs; then the heals whose data the sync made durable enter `table`.
    fn sync(&mut self) -> Result<()> {
        if let Err(e) = self.storage.sync() {
            return Err(self.fail("sync".into(), e));
        }
        self.fstats.syncs += 1;
        self.unsynced = false;
        for t in std::mem::take(&mut self.healed) {
            let t = t as usize;
            if self.flags[t] == 0 && self.table[t] != 0 {
                self.table[t] = 0;
                self.dirty[t / FLAGS_PER_BLOCK] = true;
            }
        }
        Ok(())
    }

    /// Writes every dirty table block (each to the copy not holding its newest durable
    /// version) and syncs.
    fn write_table(&mut self) -> Result<()> {
        let mut written = Vec::new();
        for b in 0..self.dirty.len() {
            if !self.dirty[b] {
                continue;
            }
            let g = self.gens[b] + 1;
            let block = self.encode_block(b as u64, g);
            self.write_meta(self.block_offset(b as u64, g % 2), &block, &format!("flag table block {b}"))?;
            self.fstats.table_blocks_written += 1;
            self.dirty[b] = false;
            written.push((b, g));
        }
        self.sync()?;
        for (b, g) in written {
            self.gens[b] = g;
        }
        Ok(())
    }

    fn block_offset(&self, block: u64, copy: u64) -> u64 {
        self.layout.table_offset + (copy * self.layout.table_blocks + block) * TABLE_BLOCK as u64
    }

    fn encode_block(&self, block: u64, generation: u64) -> Vec<u8> {
        let mut b = vec![0u8; TABLE_BLOCK];
        let first = block * FLAGS_PER_BLOCK as u64;
        let n = (self.table.len() as u64 - first).min(FLAGS_PER_BLOCK as u64);
        b[0..4].copy_from_slice(&TABLE_MAGIC);
        b[4..8].copy_from_slice(&(block as u32).to_le_bytes());
        b[8..16].copy_from_slice(&generation.to_le_bytes());
        b[16..24].copy_from_slice(&first.to_le_bytes());
        b[24..28].copy_from_slice(&(n as u32).to_le_bytes());
        b[TABLE_HEADER..TABLE_HEADER + n as usize]
            .copy_from_slice(&self.table[first as usize..(first + n) as usize]);
        seal(&mut b);
        b
    }

    fn data_at(&self, track: u64, offset: u32) -> u64 {
        self.layout.data_offset + self.geometry.track_offset(track) + offset as u64
    }
}

impl<S: Storage> TrackMedium for FileMedium<S> {
    fn geometry(&self) -> &Geometry {
        &self.geometry
    }

    fn read(&mut self, track: u64, offset: u32, buf: &mut [u8]) -> Result<()> {
        self.alive()?;
        self.geometry.check(&self.name, "read", track, offset, buf.len())?;
        let d = self.flags[track as usize];
        if d != 0 {
            return Err(StlError::Poisoned { device: self.name.clone(), track, by: track - d as u64 });
        }
        let at = self.data_at(track, offset);
        self.storage
            .read_at(at, buf)
            .map_err(|e| io(format!("{}: reading track {track} at byte {offset}", self.name), e))?;
        self.stats.reads += 1;
        self.stats.bytes_read += buf.len() as u64;
        Ok(())
    }

    fn write(&mut self, track: u64, offset: u32, data: &[u8]) -> Result<()> {
        self.alive()?;
        self.geometry.check(&self.name, "write", track, offset, data.len())?;
        let victims = self.geometry.overlapped(track);
        let mut barrier = false;
        for v in victims.clone() {
            let (vi, d) = (v as usize, (v - track) as u8);
            self.flags[vi] = d;
            if self.table[vi] == 0 {
                barrier = true;
            }
            if self.table[vi] != d {
                self.table[vi] = d;
                self.dirty[vi / FLAGS_PER_BLOCK] = true;
            }
        }
        // Rule 1: the victims are durably poisoned before this write's bytes can reach the file.
        if barrier {
            self.fstats.poison_barriers += 1;
            self.write_table()?;
        }
        let at = self.data_at(track, offset);
        if let Err(e) = self.storage.write_at(at, data) {
            return Err(self.fail(format!("writing track {track} at byte {offset}"), e));
        }
        self.unsynced = true;
        let tb = self.geometry.track_bytes(track) as usize;
        if offset == 0 && data.len() == tb {
            self.flags[track as usize] = 0;
            if self.table[track as usize] != 0 {
                // Rule 2: the table forgets the poison after a sync makes this data durable.
                self.healed.push(track);
            }
        }
        for v in victims {
            let vb = self.geometry.track_bytes(v) as usize;
            let at = self.data_at(v, 0);
            if let Err(e) = self.storage.write_at(at, &self.poison[..vb]) {
                return Err(self.fail(format!("poisoning track {v}"), e));
            }
            self.stats.poisoned += 1;
        }
        self.stats.writes += 1;
        self.stats.bytes_written += data.len() as u64;
        Ok(())
    }

    fn flush(&mut self) -> Result<()> {
        self.alive()?;
        if self.unsynced {
            self.sync()?;
        }
        if self.dirty.iter().any(|&d| d) {
            self.write_table()?;
        }
        self.stats.flushes += 1;
        Ok(())
    }

    fn is_poisoned(&self, track: u64) -> bool {
        self.flags.get(track as usize).is_some_and(|&d| d != 0)
    }

    fn name(&self) -> String {
        self.name.clone()
    }
}

/// The zones as runs of equal zones: `(count, zone)`.
fn zone_runs(zones: &[MediumZone]) -> Vec<(u32, MediumZone)> {
    let mut runs: Vec<(u32, MediumZone)> = Vec::new();
    for z in zones {
        match runs.last_mut() {
            Some((n, last)) if last == z && *n < u32::MAX => *n += 1,
            _ => runs.push((1, *z)),
        }
    }
    runs
}

/// Fills the last 4 bytes of `b` with the CRC32C of the rest.
fn seal(b: &mut [u8]) {
    let n = b.len() - 4;
    let crc = crc32c::crc32c(&b[..n]);
    b[n..].copy_from_slice(&crc.to_le_bytes());
}

use shingled_zoned::table::{crc_ok, u32_at, u64_at};

fn encode_header(g: &Geometry, lay: &Layout) -> Vec<u8> {
    let mut b = vec![0u8; HEADER_SLOT];
    let runs = zone_runs(&g.zones);
    b[0..8].copy_from_slice(&MAGIC);
    b[8..12].copy_from_slice(&FORMAT_VERSION.to_le_bytes());
    b[12..16].copy_from_slice(&(HEADER_SLOT as u32).to_le_bytes());
    b[16..20].copy_from_slice(&g.head_width.to_le_bytes());
    b[20..24].copy_from_slice(&g.unshingled_tracks.to_le_bytes());
    b[24..32].copy_from_slice(&g.tracks().to_le_bytes());
    b[32..40].copy_from_slice(&g.bytes().to_le_bytes());
    b[40..48].copy_from_slice(&lay.table_offset.to_le_bytes());
    b[48..56].copy_from_slice(&lay.table_blocks.to_le_bytes());
    b[56..64].copy_from_slice(&lay.data_offset.to_le_bytes());
    b[64..68].copy_from_slice(&(g.zones.len() as u32).to_le_bytes());
    b[68..72].copy_from_slice(&(runs.len() as u32).to_le_bytes());
    for (i, (n, z)) in runs.iter().enumerate() {
        let at = RUNS_AT + i * RUN_SIZE;
        b[at..at + 4].copy_from_slice(&n.to_le_bytes());
        b[at + 4..at + 8].copy_from_slice(&z.tracks.to_le_bytes());
        b[at + 8..at + 12].copy_from_slice(&z.track_bytes.to_le_bytes());
    }
    seal(&mut b);
    b
}

/// Decodes a header slot; the error names the field and its byte.
fn decode_header(b: &[u8]) -> std::result::Result<(Geometry, Layout), String> {
    if b[0..8] != MAGIC {
        return Err(format!("bad magic {:02x?} at byte 0 (expected \"SHSTLMED\")", &b[0..8]));
    }
    let version = u32_at(b, 8);
    if version != FORMAT_VERSION {
        return Err(format!("format version {version} at byte 8 (this build reads {FORMAT_VERSION})"));
    }
    if !crc_ok(b) {
        return Err(format!("header CRC32C mismatch (bytes {}..{HEADER_SLOT})", HEADER_SLOT - 4));
    }
    let slot = u32_at(b, 12);
    if slot as usize != HEADER_SLOT {
        return Err(format!("slot size {slot} at byte 12 (expected {HEADER_SLOT})"));
    }
    let nr_zones = u32_at(b, 64) as u64;
    let nr_runs = u32_at(b, 68) as usize;
    if nr_runs == 0 || nr_runs > MAX_RUNS {
        return Err(format!("zone runs {nr_runs} at byte 68 (1 to {MAX_RUNS})"));
    }
    if nr_zones > MAX_ZONES {
        return Err(format!("zones {nr_zones} at byte 64 (at most {MAX_ZONES})"));
    }
    let mut counted = 0u64;
    let mut tracks = 0u64;
    let mut zones = Vec::new();
    for i in 0..nr_runs {
        let at = RUNS_AT + i * RUN_SIZE;
        let (n, t, tb) = (u32_at(b, at) as u64, u32_at(b, at + 4), u32_at(b, at + 8));
        counted += n;
        tracks += n * t as u64;
        if n == 0 || counted > nr_zones || tracks > MAX_TRACKS {
            return Err(format!(
                "zone run {i} at byte {at} ({n} zones of {t} tracks) does not fit the {nr_zones} zones at byte 64 \
                 or the limit of {MAX_TRACKS} tracks"
            ));
        }
        zones.extend(std::iter::repeat_n(MediumZone { tracks: t, track_bytes: tb }, n as usize));
    }
    if counted != nr_zones {
        return Err(format!("the zone runs hold {counted} zones, byte 64 says {nr_zones}"));
    }
    let g = Geometry { zones, head_width: u32_at(b, 16), unshingled_tracks: u32_at(b, 20) };
    g.validate().map_err(|e| format!("geometry: {e}"))?;
    if g.tracks() != u64_at(b, 24) {
        return Err(format!("tracks {} at byte 24, but the zones hold {}", u64_at(b, 24), g.tracks()));
    }
    if g.bytes() != u64_at(b, 32) {
        return Err(format!("data bytes {} at byte 32, but the zones hold {}", u64_at(b, 32), g.bytes()));
    }
    let lay = layout(g.tracks());
    let found =
        Layout { table_offset: u64_at(b, 40), table_blocks: u64_at(b, 48), data_offset: u64_at(b, 56) };
    if found != lay {
        return Err(format!(
            "layout (table at byte {}, {} blocks, data at byte {}; bytes 40..64) does not match the geometry",
            found.table_offset, found.table_blocks, found.data_offset
        ));
    }
    Ok((g, lay))
}

/// Validates table block `block` found in copy `copy`; returns its generation.
fn check_block(b: &[u8], block: u64, copy: u64, tracks: u64) -> shingled_zoned::Result<u64> {
    shingled_zoned::table::check_block(
        b,
        TABLE_MAGIC,
        block,
        copy,
        FLAGS_PER_BLOCK as u64,
        tracks,
        ("block", "track"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::medium::POISON;
    use shingled_zoned::{SimStorage, Survivors};

    fn geo() -> Geometry {
        Geometry {
            zones: vec![
                MediumZone { tracks: 4, track_bytes: 8192 },
                MediumZone { tracks: 4, track_bytes: 8192 },
                MediumZone { tracks: 3, track_bytes: 4096 },
            ],
            head_width: 2,
            unshingled_tracks: 0,
        }
    }

    #[test]
    fn header_round_trips_with_zone_runs() {
        let g = geo();
        assert_eq!(zone_runs(&g.zones).len(), 2);
        let lay = layout(g.tracks());
        assert_eq!(lay, Layout { table_offset: 32768, table_blocks: 1, data_offset: DATA_ALIGN });
        assert_eq!(decode_header(&encode_header(&g, &lay)).unwrap(), (g, lay));
        assert_eq!(FLAGS_PER_BLOCK, 4060);
    }

    #[test]
    fn the_victims_are_poisoned_in_the_file_and_healed_only_after_a_flush() {
        let mut m = FileMedium::create(SimStorage::new(), geo()).unwrap();
        m.write(0, 0, &[1u8; 8192]).unwrap();
        assert_eq!(m.file_stats().poison_barriers, 1);
        // the victim is filled with the pattern
        let mut raw = vec![0u8; 16];
        let at = m.data_offset() + 8192;
        m.storage_mut().read_at(at, &mut raw).unwrap();
        assert_eq!(&raw[..], &POISON[..]);
        // track 1 is already durably poisoned: healing it and poisoning 2 needs one barrier
        m.write(1, 0, &[2u8; 8192]).unwrap();
        assert_eq!(m.file_stats().poison_barriers, 2);
        // without a flush the heal of track 1 may not be durable: it comes back poisoned
        let again = FileMedium::open(m.storage().power_cut(Survivors::All)).unwrap();
        assert!(again.is_poisoned(1) && again.is_poisoned(2));
        m.flush().unwrap();
        let mut again = FileMedium::open(m.storage().power_cut(Survivors::None)).unwrap();
        assert!(!again.is_poisoned(1) && again.is_poisoned(2));
        let mut buf = [0u8; 8192];
        again.read(1, 0, &mut buf).unwrap();
        assert_eq!(buf, [2u8; 8192]);
        assert!(matches!(again.read(2, 0, &mut buf), Err(StlError::Poisoned { track: 2, by: 1, .. })));
    }

    #[test]
    fn a_storage_failure_fails_the_medium() {
        let mut m = FileMedium::create(SimStorage::new(), geo()).unwrap();
        m.storage_mut().fail_after(0);
        assert!(matches!(m.write(4, 0, &[1u8; 8192]), Err(StlError::Io { .. })));
        assert!(m.failure().is_some());
        let mut buf = [0u8; 4096];
        assert!(matches!(m.read(0, 0, &mut buf), Err(StlError::Failed { .. })));
        assert!(matches!(m.flush(), Err(StlError::Failed { .. })));
    }
}
