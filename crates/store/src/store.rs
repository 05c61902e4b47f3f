//! The engine: chunk index, zone state machine and pools, write/read paths, journal,
//! checkpoints and recovery.

use crate::format::{
    self, align_up, check_payload, check_slice, data_fits, decode_data_prefix, decode_header, encode_record,
    record_len, AlignedBuf, DataPrefix, Header, PreparedRecords, Reader, RecordType, BLOCK, DATA_SLICES_AT,
    FOOTER_LEN, HEADER_LEN, SLICE, SLICE_STRIDE,
};
use crate::{ChunkId, Durability, Placement, Result, StoreConfig, StoreError, StreamType};
use shingled_zoned::{DeviceInfo, ZoneOp, ZonedDevice, SECTOR_SIZE};
use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::time::{Duration, Instant};

mod fsck;
mod scan;
pub use fsck::{FsckProblem, FsckReport};
use scan::ZoneScan;

/// On-disk format version written in the superzone.
pub const FORMAT_VERSION: u32 = 2;

/// Pool key of the zone GC writes into (never used by foreground placement).
const GC_POOL: u8 = 3;

/// The GC emergency threshold: with this many free datazones or fewer, an append first runs
/// GC unthrottled (one zone stays for the GC zone to migrate into).
pub const GC_HARD_MIN_FREE: usize = 1;

/// Datazones kept free (or garbage) for GC to copy into: foreground placement never takes the
/// last of them, so that GC can always migrate a victim and give a zone back while any dead
/// data exists. One suffices: a victim with dead data holds less than a zone of live data, so
/// it fits in an empty GC zone, and its reset returns a zone before the next victim needs one.
/// Counted out of the usable capacity ([`StoreStats::usable_bytes`]). With GC off
/// (`gc_free_zones = 0`) nothing is reserved.
pub const GC_RESERVE_ZONES: usize = 1;

/// A periodic checkpoint being written piece by piece into the current metazone: the table
/// as it was at its start (a copy), and how much of it is written.
#[derive(Clone, Debug)]
struct IncCkpt {
    sub: u32,
    body: Vec<u8>,
    pos: usize,
    pieces: u32,
}

/// A victim being migrated step by step: its zone and the (chunk, record start) spans left.
#[derive(Clone, Debug)]
struct GcJob {
    victim: usize,
    spans: VecDeque<(ChunkId, u64)>,
}

/// What one [`Store::gc_step`] did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct GcStep {
    /// The victim being migrated (device zone), if any.
    pub victim: Option<u64>,
    /// Live user bytes migrated by this step.
    pub migrated: u64,
    /// The zone reset by this step (a garbage zone, or the victim once emptied).
    pub reclaimed: Option<u64>,
}

/// Most bytes [`Store::append`] hands the device in one write: consecutive records of one
/// append that go to the same zone are encoded into one buffer and written together, up to
/// this (a single record may be larger, with a `max_record` above it). The buffer stays with
/// the store for the next append. [`Store::append_prepared`] writes as many of its records at
/// once as the zone takes (the caller chose their size).
pub const WRITE_BATCH: usize = 8 << 20;

/// Largest sequence number recovery accepts (a store writing a billion records a second
/// needs 146 years to reach it); beyond it, a record is damage, so counting on never wraps.
const MAX_SEQ: u64 = 1 << 62;

/// Longest chunk: slice footers carry a 32-bit chunk offset.
const MAX_CHUNK_LEN: u64 = u32::MAX as u64;

/// The store's view of a datazone (SMRSTORE §4.4), on top of the device's condition.
///
/// `Free` → `Opened` (taken into a stream's pool; the device zone is EMPTY) → `Activated`
/// (written; device OPEN or CLOSED) → `Full` (no room for another record; device FULL, the
/// store FINISHes zones it stops writing) → `Garbage` (full and without live data) → `Free` (a
/// journaled RESET).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum ZoneState {
    /// Empty and unassigned.
    Free,
    /// In a pool, nothing written yet.
    Opened,
    /// In a pool, partly written.
    Activated,
    /// Written to the end (or finished); read-only until reset.
    Full,
    /// Full and every record in it dead: can be reset.
    Garbage,
}

impl ZoneState {
    fn code(self) -> u8 {
        self as u8
    }
    fn from_code(c: u8) -> Option<ZoneState> {
        use ZoneState::*;
        [Free, Opened, Activated, Full, Garbage].get(c as usize).copied()
    }
}

/// One datazone's table entry (serialized in checkpoints: 26 bytes).
#[derive(Clone, Copy, Debug)]
struct DZone {
    state: ZoneState,
    /// Pool key of the stream the zone serves.
    pool: u8,
    /// Bytes written from the zone start (a multiple of [`BLOCK`]).
    written: u64,
    /// User bytes of live records (derived, not stored).
    live: u64,
    /// User bytes of every record written into the zone since its reset (live or dead).
    stored: u64,
    /// Records with a sequence number at or below this predate the zone's last reset.
    min_seq: u64,
    /// Header CRC of the zone's last record (0 when empty): the next record links to it.
    last_hcrc: u32,
}

/// Where one record starts: 8 bytes (the paper's record index).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct RecordIndex {
    /// Chunk offset of the record's first user byte.
    chunk_off: u32,
    /// 4 KiB block of the zone where the record starts.
    block: u32,
}

/// The records of a chunk in one datazone, in chunk-offset order.
#[derive(Clone, Debug)]
struct IndexGroup {
    zone: u32,
    records: Vec<RecordIndex>,
}

#[derive(Clone, Debug)]
struct Chunk {
    stream: StreamType,
    sealed: bool,
    create_seq: u64,
    len: u64,
    groups: Vec<IndexGroup>,
    /// The zone the chunk appends to now (not persisted: chosen again after a restart).
    cur_zone: Option<u32>,
}

#[derive(Clone, Debug, Default)]
struct Pool {
    zones: Vec<u32>,
    next: usize,
    target: usize,
}

/// A chunk's public description.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ChunkInfo {
    /// Id.
    pub id: ChunkId,
    /// Stream type given at create.
    pub stream: StreamType,
    /// Bytes appended.
    pub len: u64,
    /// Whether it is sealed (no more appends).
    pub sealed: bool,
    /// Data records holding it.
    pub records: usize,
    /// Index groups (runs of records in one datazone).
    pub groups: usize,
}

/// Counters and zone census.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct StoreStats {
    /// Chunks.
    pub chunks: u64,
    /// Sealed chunks.
    pub sealed_chunks: u64,
    /// User bytes in live chunks.
    pub live_bytes: u64,
    /// Data records indexed.
    pub records: u64,
    /// Datazones in total.
    pub datazones: u64,
    /// User bytes the store can hold ([`Store::usable_bytes`]: every datazone but the GC
    /// reserve).
    pub usable_bytes: u64,
    /// Datazones kept for GC to copy into ([`GC_RESERVE_ZONES`]).
    pub gc_reserve_zones: u64,
    /// Datazones per state: free, opened, activated, full, garbage.
    pub zones_by_state: [u64; 5],
    /// Appends since open.
    pub appends: u64,
    /// Bytes written to the device since open (records with headers, footers and padding).
    pub device_bytes_written: u64,
    /// Device flushes since open.
    pub flushes: u64,
    /// Checkpoints written since open (including the one that ends recovery).
    pub checkpoints: u64,
    /// Journal records written since open.
    pub journal_records: u64,
    /// Datazones reset since open.
    pub zone_resets: u64,
    /// Data records recovery found after the checkpoint and indexed.
    pub recovered_records: u64,
    /// Data records recovery found but did not index (never acknowledged, of deleted chunks,
    /// or GC copies made before a crash).
    pub ignored_records: u64,
    /// Zones emptied by GC migration since open.
    pub gc_migrations: u64,
    /// Live user bytes GC migrated since open.
    pub gc_bytes_migrated: u64,
    /// Zones GC reset since open (garbage zones and emptied victims).
    pub gc_zones_reclaimed: u64,
    /// GC steps that migrated data.
    pub gc_steps: u64,
    /// Background GC steps held back because the bandwidth credit did not cover them.
    pub gc_throttled_steps: u64,
    /// Unthrottled GC rounds run by the emergency path (at most one free datazone).
    pub gc_emergency_rounds: u64,
    /// Periodic checkpoints completed piece by piece (also counted in `checkpoints`).
    pub incremental_checkpoints: u64,
    /// CkptBody pieces written by periodic checkpoints.
    pub checkpoint_pieces: u64,
}

/// Memory the index uses (SMRSTORE §4.2 states ~200 B per chunk and 8 B per record index).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MemoryUse {
    /// Bytes per chunk, not counting its record indexes: the table entry (key, [`Chunk`] with
    /// one index group) plus the B-tree's per-entry overhead (estimated at 16 bytes).
    pub per_chunk: usize,
    /// Bytes per record index.
    pub per_record: usize,
    /// Estimate for the current contents: chunks × per_chunk + extra groups + records × 8.
    pub total: usize,
}

/// What the last [`Store::open`] did, step by step (SMRSTORE §5.2's recovery phases), with the
/// wall-clock time of each step.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RecoveryReport {
    /// Reading and checking the superzone record.
    pub superzone_read: Duration,
    /// Finding the newest complete checkpoint (metazone headers, parsing metazones) and
    /// loading its tables.
    pub checkpoint_load: Duration,
    /// Replaying the journal records after the checkpoint.
    pub journal_replay: Duration,
    /// Scanning the datazones written since the checkpoint.
    pub datazone_scan: Duration,
    /// Indexing the records found, deriving live bytes, zone states and pools, and writing the
    /// checkpoint that ends recovery.
    pub index_build: Duration,
    /// The whole of `open`.
    pub total: Duration,
    /// Bytes of the checkpoint body loaded.
    pub checkpoint_bytes: u64,
    /// Generation of the checkpoint loaded.
    pub checkpoint_generation: u64,
    /// Journal records replayed.
    pub journal_records: u64,
    /// Datazones scanned (written past their checkpointed end).
    pub zones_scanned: u64,
    /// Valid data records found by the scan.
    pub records_scanned: u64,
    /// Device bytes the datazone scan covered.
    pub bytes_scanned: u64,
    /// Chunks in the store after recovery.
    pub chunks_recovered: u64,
    /// Data records the scan found written completely but damaged afterwards (valid header,
    /// payload failing its CRC): indexed all the same, so reads of their bad slices fail with
    /// [`StoreError::CorruptData`] naming chunk and offset instead of the data vanishing.
    pub damaged_records: u64,
}

/// Configuration stored in the superzone.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
/// The superzone record's payload (docs/store-format.md), field by field.
pub(crate) struct SuperInfo {
    pub(crate) version: u32,
    pub(crate) time: u64,
    pub(crate) nr_metazones: u32,
    zone_sectors: u64,
    nr_zones: u64,
    /// GC, data, metadata.
    pub(crate) pools: [u32; 3],
    pub(crate) placement: Placement,
    pub(crate) metadata_chunk_limit: u64,
    pub(crate) max_record: u32,
}

enum Tail {
    /// Nothing valid after the last good record: a clean end or a torn last write.
    Clean,
    /// A valid record follows an invalid one: damage, not a crash.
    Corrupt { offset: u64, what: String },
}

struct Parsed {
    h: Header,
    /// A data record whose header is valid and whose payload fails its CRC although it lies
    /// wholly below the write pointer: written completely, then damaged (`parse_zone` with
    /// `salvage`). What failed.
    damaged: Option<String>,
    /// Byte offset in the zone.
    off: u64,
    /// The payload (for data records only the prefix).
    payload: Vec<u8>,
}

/// A chunk store on one zoned device. See the crate docs.
#[derive(Debug)]
pub struct Store<D: ZonedDevice> {
    dev: D,
    info: DeviceInfo,
    cfg: StoreConfig,
    super_zone: u64,
    data_first: u64,
    chunks: BTreeMap<ChunkId, Chunk>,
    zones: Vec<DZone>,
    /// Per datazone: unsealed chunks whose `cur_zone` it is (placement rule 3).
    appenders: Vec<u32>,
    pools: BTreeMap<u8, Pool>,
    /// Index of the current metazone (0..nr_metazones), its generation and write offset.
    meta: u32,
    meta_gen: u64,
    meta_wp: u64,
    seq: u64,
    since_ckpt: u64,
    gc_zone: Option<usize>,
    gc_job: Option<GcJob>,
    /// The periodic checkpoint in progress, and the number of the last checkpoint started in
    /// the current metazone (0: the one that opened it).
    inc_ckpt: Option<IncCkpt>,
    ckpt_sub: u32,
    gc_active: bool,
    gc_credit: u64,
    /// GC may take any full zone with dead data as its victim, not only one a quarter dead
    /// (explicit and emergency GC).
    gc_any_dead: bool,
    poisoned: bool,
    stats: StoreStats,
    recovery: Option<RecoveryReport>,
    /// Opened with [`Store::open_read_only`]: nothing is ever written to the device.
    read_only: bool,
    /// Read-only only: datazones whose reset was journaled but not carried out before a crash
    /// (old contents below the write pointer, free in the tables); `open` would reset them.
    unreset: BTreeSet<usize>,
    /// Where data records are encoded before they are written.
    wbuf: AlignedBuf,
}

impl<D: ZonedDevice> Store<D> {
    /// Formats `dev` as an empty store: resets every sequential zone, writes the superzone
    /// record (then FINISHes the superzone) and a first checkpoint into metazone 0.
    pub fn format(mut dev: D, cfg: StoreConfig) -> Result<Self> {
        cfg.sanitize()?;
        let info = dev.info();
        let (super_zone, data_first) = layout(&info, cfg.nr_metazones)?;
        dev.zone_mgmt_all(ZoneOp::Reset).map_err(StoreError::dev("resetting all zones to format"))?;
        let time = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_secs())
            .unwrap_or(0);
        let mut p = Vec::new();
        p.extend_from_slice(&FORMAT_VERSION.to_le_bytes());
        p.extend_from_slice(&time.to_le_bytes());
        p.extend_from_slice(&cfg.nr_metazones.to_le_bytes());
        p.extend_from_slice(&info.zone_sectors.to_le_bytes());
        p.extend_from_slice(&info.nr_zones.to_le_bytes());
        p.extend_from_slice(&[cfg.pool_gc, cfg.pool_data, cfg.pool_metadata].map(u32::to_le_bytes).concat());
        p.push(placement_code(cfg.placement));
        p.extend_from_slice(&cfg.metadata_chunk_limit.to_le_bytes());
        p.extend_from_slice(&(cfg.max_record as u32).to_le_bytes());
        let rec = encode_record(RecordType::Super, 0, &p);
        let zs = info.zone_start(super_zone);
        // Two copies: one flipped bit in a single record made the whole store unopenable.
        let mut both = rec.clone();
        both.extend_from_slice(&rec);
        dev.write(zs, &both).map_err(StoreError::dev("writing the superzone"))?;
        dev.zone_mgmt(ZoneOp::Finish, zs, info.zone_len(super_zone))
            .map_err(StoreError::dev("finishing the superzone"))?;
        let mut st = Store::empty(dev, info, cfg, super_zone, data_first);
        st.meta = st.cfg.nr_metazones - 1;
        st.seq = 1;
        st.checkpoint()?;
        Ok(st)
    }

    fn empty(dev: D, info: DeviceInfo, cfg: StoreConfig, super_zone: u64, data_first: u64) -> Self {
        let nr_data = info.nr_zones - data_first;
        let zones = vec![
            DZone {
                state: ZoneState::Free,
                pool: 0,
                written: 0,
                live: 0,
                stored: 0,
                min_seq: 0,
                last_hcrc: 0
            };
            nr_data as usize
        ];
        let mut st = Store {
            dev,
            info,
            cfg,
            super_zone,
            data_first,
            chunks: BTreeMap::new(),
            zones,
            appenders: vec![0; nr_data as usize],
            pools: BTreeMap::new(),
            meta: 0,
            meta_gen: 0,
            meta_wp: 0,
            seq: 1,
            since_ckpt: 0,
            gc_zone: None,
            gc_job: None,
            inc_ckpt: None,
            ckpt_sub: 0,
            gc_active: false,
            gc_credit: 0,
            gc_any_dead: false,
            poisoned: false,
            stats: StoreStats { datazones: nr_data, ..Default::default() },
            recovery: None,
            read_only: false,
            unreset: BTreeSet::new(),
            wbuf: AlignedBuf::default(),
        };
        st.size_pools();
        st
    }

    /// Opens a formatted device and recovers (SMRSTORE §5.2): reads the superzone, finds the
    /// newest complete checkpoint through the metazone headers, loads it, replays the journal
    /// after it, scans every datazone written since (keeping the data records whose CRCs verify
    /// and that continue their chunk exactly), and ends with a fresh checkpoint.
    ///
    /// `cfg` supplies the run-time settings (pools, placement, durability); `nr_metazones`
    /// comes from the superzone. Damage that a crash cannot explain (a valid record after an
    /// invalid one, a broken checkpoint that was completed) is an error naming zone and offset.
    pub fn open(dev: D, cfg: StoreConfig) -> Result<Self> {
        Store::open_with(dev, cfg, false)
    }

    /// Opens a formatted device read-only: the same recovery as [`Store::open`] (checkpoint,
    /// journal replay, datazone scan, with the same checks), into memory only. Nothing is
    /// written to the device, ever: no closing checkpoint, no FINISH of a zone ending in a torn
    /// record, no RESET of a zone whose journaled reset a crash interrupted, no flush. Reads,
    /// listings, [`Store::fsck`] and the statistics work; the calls that change the store
    /// (`create`, `append`, `seal`, `delete`, `sync`, `checkpoint`, `gc`, `gc_step`) return
    /// [`StoreError::ReadOnly`]. For checkers and inspection tools.
    pub fn open_read_only(dev: D, cfg: StoreConfig) -> Result<Self> {
        Store::open_with(dev, cfg, true)
    }

    fn open_with(mut dev: D, cfg: StoreConfig, read_only: bool) -> Result<Self> {
        let t0 = Instant::now();
        let info = dev.info();
        if info.nr_zones <= info.nr_conv {
            return Err(StoreError::NotFormatted("the device has no sequential zones".into()));
        }
        let super_zone = info.nr_conv;
        let sup = read_super(&mut dev, &info, super_zone)?;
        if sup.zone_sectors != info.zone_sectors || sup.nr_zones != info.nr_zones {
            return Err(StoreError::NotFormatted(format!(
                "superzone describes {} zones of {} sectors, the device has {} of {}",
                sup.nr_zones, sup.zone_sectors, info.nr_zones, info.zone_sectors
            )));
        }
        let cfg = StoreConfig { nr_metazones: sup.nr_metazones, ..cfg };
        cfg.sanitize()?;
        let (super_zone, data_first) = layout(&info, cfg.nr_metazones)?;
        let mut st = Store::empty(dev, info, cfg, super_zone, data_first);
        st.read_only = read_only;
        let mut rep = RecoveryReport { superzone_read: t0.elapsed(), ..Default::default() };
        st.recover(&mut rep)?;
        rep.chunks_recovered = st.chunks.len() as u64;
        rep.total = t0.elapsed();
        st.recovery = Some(rep);
        Ok(st)
    }

    fn meta_zone(&self, m: u32) -> u64 {
        self.super_zone + 1 + m as u64
    }

    fn zone_no(&self, d: usize) -> u64 {
        self.data_first + d as u64
    }

    /// Usable bytes of device zone `z` (its capacity, rounded down to [`BLOCK`]).
    fn cap_bytes(&self, z: u64) -> u64 {
        self.info.zone_cap(z) * SECTOR_SIZE / BLOCK * BLOCK
    }

    fn wp_bytes(&self, z: u64) -> Result<u64> {
        let r = self.dev.report_zone(z).map_err(StoreError::dev(format!("reporting zone {z}")))?;
        Ok(r.written() * SECTOR_SIZE)
    }

    fn pool_key(&self, stream: StreamType) -> u8 {
        match self.cfg.placement {
            Placement::OneZone => 0,
            Placement::Guided { separate_streams: false, .. } => 0,
            Placement::Guided { separate_streams: true, .. } => match stream {
                StreamType::METADATA => 1,
                StreamType::GC => 2,
                _ => 0,
            },
        }
    }

    /// Pool targets from the configuration, scaled down to the device's open/active limit
    /// (less one zone for the metazone) and to half the datazones.
    fn size_pools(&mut self) {
        let c = &self.cfg;
        let mut t: Vec<(u8, u64)> = match c.placement {
            Placement::OneZone => vec![(0, 1)],
            Placement::Guided { separate_streams, round_robin, .. } => {
                let v = if separate_streams {
                    vec![(0, c.pool_data as u64), (1, c.pool_metadata as u64), (2, c.pool_gc as u64)]
                } else {
                    vec![(0, (c.pool_data + c.pool_metadata + c.pool_gc) as u64)]
                };
                if round_robin {
                    v
                } else {
                    v.into_iter().map(|(k, _)| (k, 1)).collect()
                }
            }
        };
        let lim = [self.info.max_open, self.info.max_active].into_iter().filter(|&x| x > 0).min();
        let mut budget = (self.zones.len() as u64 / 2).max(1);
        if let Some(l) = lim {
            budget = budget.min((l as u64).saturating_sub(1).max(1));
        }
        let total: u64 = t.iter().map(|x| x.1).sum();
        if total > budget {
            for x in &mut t {
                x.1 = (x.1 * budget / total).max(1);
            }
        }
        for (k, n) in t {
            self.pools.entry(k).or_default().target = n as usize;
        }
    }

    fn check_usable(&self) -> Result<()> {
        if self.poisoned {
            Err(StoreError::Poisoned)
        } else {
            Ok(())
        }
    }

    /// For the calls that change the store: usable, and not opened read-only.
    fn check_writable(&self) -> Result<()> {
        self.check_usable()?;
        if self.read_only {
            Err(StoreError::ReadOnly)
        } else {
            Ok(())
        }
    }

    /// Whether the store was opened with [`Store::open_read_only`].
    pub fn is_read_only(&self) -> bool {
        self.read_only
    }

    /// Marks the store poisoned when `r` is a device error (the on-device state is uncertain).
    fn guard<T>(&mut self, r: Result<T>) -> Result<T> {
        if let Err(StoreError::Device { .. }) = &r {
            self.poisoned = true;
        }
        r
    }

    fn next_seq(&mut self) -> u64 {
        let s = self.seq;
        self.seq += 1;
        s
    }

    fn flush(&mut self) -> Result<()> {
        self.stats.flushes += 1;
        self.dev.flush().map_err(StoreError::dev("flushing the device"))
    }

    // ----- public API -------------------------------------------------------------------

    /// Creates an empty chunk of `stream`. Durable (journaled and flushed) when it returns.
    pub fn create(&mut self, id: ChunkId, stream: StreamType) -> Result<()> {
        self.check_writable()?;
        if self.chunks.contains_key(&id) {
            return Err(StoreError::ChunkExists(id));
        }
        let mut p = id.0.to_vec();
        p.push(stream.0);
        let r = self.journal(RecordType::JCreate, &p);
        let seq = self.guard(r)?;
        self.chunks.insert(
            id,
            Chunk { stream, sealed: false, create_seq: seq, len: 0, groups: Vec::new(), cur_zone: None },
        );
        self.after_op()
    }

    /// Appends `data` to chunk `id`. With [`Durability::EveryAppend`] the data is on the device
    /// (flushed) when this returns; with [`Durability::Batched`] after the next [`Store::sync`].
    /// Large appends are split into records of at most `max_record` bytes; if the call fails,
    /// a prefix of the data (whole records) may survive a restart, never anything else.
    pub fn append(&mut self, id: ChunkId, data: &[u8]) -> Result<()> {
        self.append_with(id, data.len() as u64, |st| st.append_inner(id, data))
    }

    /// [`Store::append`] of the user bytes of `p`, whose records were encoded ahead of time
    /// ([`PreparedRecords`]): the store writes each record's header and prefix into `p`'s
    /// buffer and writes the buffer as it is, so the user bytes are not copied again. The same
    /// records reach the device as with `append`, with the same durability. When `p` was laid
    /// out for another chunk, another chunk offset than the chunk's length or another
    /// `max_record`, or was not finished, its user bytes are appended with `append`.
    pub fn append_prepared(&mut self, id: ChunkId, p: &mut PreparedRecords) -> Result<()> {
        let (chunk, offset, len) = p.chunk();
        let usable = chunk == id
            && p.is_finished()
            && p.max_record() == self.cfg.max_record
            && self.chunks.get(&id).is_some_and(|c| c.len == offset);
        if !usable {
            let data = p.user_bytes(0);
            return self.append(id, &data);
        }
        self.append_with(id, len as u64, |st| {
            let mut written = Vec::new();
            let mut done = 0usize;
            let r = st.write_prepared(id, offset, p, &mut written, &mut done);
            st.index_written(id, written, done);
            r
        })
    }

    /// An append of `len` bytes that `write` carries out: the checks, GC around it, durability
    /// and checkpoints.
    fn append_with(
        &mut self,
        id: ChunkId,
        len: u64,
        write: impl FnOnce(&mut Self) -> Result<()>,
    ) -> Result<()> {
        self.check_writable()?;
        let c = self.chunks.get(&id).ok_or(StoreError::NoSuchChunk(id))?;
        if c.sealed {
            return Err(StoreError::Sealed(id));
        }
        let limit = self.chunk_limit(c.stream);
        let would_be = c.len + len;
        if would_be > limit {
            return Err(StoreError::ChunkTooLarge { chunk: id, would_be, limit });
        }
        self.gc_background(len, true)?;
        let r = write(self);
        self.guard(r)?;
        self.stats.appends += 1;
        self.since_ckpt += len;
        if self.cfg.durability == Durability::EveryAppend {
            let r = self.flush();
            self.guard(r)?;
        }
        self.after_op()?;
        self.gc_background(len, false)
    }

    fn cfg_checkpoint_bytes(&self) -> u64 {
        match self.cfg.checkpoint_every_bytes {
            // A checkpoint per 16 zones' worth of appends bounds the recovery scan.
            0 => 16 * self.info.zone_capacity_sectors * SECTOR_SIZE,
            n => n,
        }
    }

    /// After a foreground operation: start a periodic checkpoint when due, and write the next
    /// piece of the one in progress.
    fn after_op(&mut self) -> Result<()> {
        if self.inc_ckpt.is_none() && self.since_ckpt >= self.cfg_checkpoint_bytes() {
            let r = self.start_inc_checkpoint();
            self.guard(r)?;
        }
        let r = self.inc_checkpoint_step();
        self.guard(r)
    }

    /// Most user bytes a chunk of `stream` may hold (rule 2, checked by [`Store::append`]):
    /// with the chunk-limit rule on, what fits in one zone's capacity once record headers,
    /// slice footers and padding are counted, for a chunk written from the start of an empty
    /// zone as records of `max_record` user bytes ([`format::chunk_fits`]); metadata chunks at
    /// most [`StoreConfig::metadata_chunk_limit`] as well. Without the rule (and for one-zone
    /// placement) the format's bound on a chunk's length.
    pub fn chunk_limit(&self, stream: StreamType) -> u64 {
        match self.cfg.placement {
            Placement::Guided { chunk_limit: true, .. } => {
                let zone =
                    format::chunk_fits(self.info.zone_capacity_sectors * SECTOR_SIZE, self.cfg.max_record);
                if stream == StreamType::METADATA {
                    zone.min(self.cfg.metadata_chunk_limit)
                } else {
                    zone
                }
            }
            _ => MAX_CHUNK_LEN,
        }
        .min(MAX_CHUNK_LEN)
    }

    fn append_inner(&mut self, id: ChunkId, data: &[u8]) -> Result<()> {
        let off = self.chunks[&id].len;
        let mut written = Vec::new();
        let mut done = 0usize;
        let r = self.write_run(id, off, data, false, &mut written, &mut done);
        self.index_written(id, written, done);
        r
    }

    /// Indexes the records an append wrote, `done` user bytes, even on failure (e.g. out of
    /// space after some records): it is what recovery would find, so memory and disk agree.
    fn index_written(&mut self, id: ChunkId, written: Vec<(u32, RecordIndex)>, done: usize) {
        let c = self.chunks.get_mut(&id).expect("checked by the caller");
        for (d, ri) in written {
            push_record(c, d, ri);
        }
        c.len += done as u64;
    }

    /// [`Store::write_run`] for the records of `p` (user bytes of chunk `id` from chunk offset
    /// `off`): each run of records that the zone takes as `p` cut them gets its headers and
    /// one device write straight from `p`'s buffer; where the zone's end cuts them otherwise,
    /// the rest is copied out and written by `write_run`.
    fn write_prepared(
        &mut self,
        id: ChunkId,
        off: u64,
        p: &mut PreparedRecords,
        out: &mut Vec<(u32, RecordIndex)>,
        done: &mut usize,
    ) -> Result<()> {
        let recs: Vec<(usize, usize)> = p.records().collect();
        let total = p.chunk().2;
        let (mut r, mut buf_at) = (0usize, 0usize);
        while r < recs.len() {
            let d = self.zone_for(id)?;
            let z = self.zone_no(d);
            let cap = self.cap_bytes(z);
            let start = self.zones[d].written;
            // The records the zone takes as they were cut.
            let (mut j, mut at, mut user, mut end) = (r, start, *done, buf_at);
            while j < recs.len() {
                let (n, len) = recs[j];
                if data_fits(cap - at).min(total - user).min(self.cfg.max_record) != n {
                    break;
                }
                (j, at, user, end) = (j + 1, at + len as u64, user + n, end + len);
            }
            if j == r {
                if data_fits(cap - start) == 0 {
                    self.finish_zone(d)?;
                    continue;
                }
                // The zone's end cuts the next record shorter: the rest as `append` cuts it.
                let rest = p.user_bytes(*done);
                let mut more = 0;
                let res = self.write_run(id, off + *done as u64, &rest, false, out, &mut more);
                *done += more;
                return res;
            }
            let (pool, mut link) = (self.zones[d].pool, self.zones[d].last_hcrc);
            let (mut b, mut u) = (buf_at, *done);
            for (i, &(n, len)) in recs.iter().enumerate().take(j).skip(r) {
                let seq = self.next_seq();
                link = p.seal_record(i, b, u, seq, pool, link);
                (b, u) = (b + len, u + n);
            }
            self.dev.write(self.info.zone_start(z) + start / SECTOR_SIZE, p.encoded(buf_at, end)).map_err(
                StoreError::dev(format!(
                    "writing chunk {id} offset {} in zone {z} at byte {start}",
                    off + *done as u64
                )),
            )?;
            self.stats.device_bytes_written += (end - buf_at) as u64;
            let zs = &mut self.zones[d];
            let (mut rat, mut u) = (start, *done);
            for &(n, len) in &recs[r..j] {
                zs.live += n as u64;
                zs.stored += n as u64;
                out.push((
                    d as u32,
                    RecordIndex { chunk_off: (off + u as u64) as u32, block: (rat / BLOCK) as u32 },
                ));
                (rat, u) = (rat + len as u64, u + n);
            }
            zs.written = at;
            zs.last_hcrc = link;
            zs.state = ZoneState::Activated;
            (*done, r, buf_at) = (user, j, end);
            if cap - self.zones[d].written < BLOCK {
                self.finish_zone(d)?;
            }
        }
        Ok(())
    }

    /// Writes `data` of chunk `id` from chunk offset `off` as data records, into the chunk's
    /// placement zone (or the GC zone), finishing zones as they fill. Pushes the new records
    /// to `out` and counts the user bytes written in `done` (both valid on failure too); the
    /// caller indexes them.
    ///
    /// Consecutive records that go to the same zone are encoded one after the other into one
    /// 4 KiB-aligned buffer (the store's, reused) and written with one device call of at most
    /// [`WRITE_BATCH`] bytes: the same bytes at the same places as one call per record, so a
    /// torn write still leaves a prefix of whole records, but fewer and larger writes, and an
    /// `O_DIRECT` device file takes the buffer without copying it again. A failed write
    /// indexes none of its records (recovery may still find a prefix of them, as for any
    /// append that returned an error).
    fn write_run(
        &mut self,
        id: ChunkId,
        off: u64,
        data: &[u8],
        gc: bool,
        out: &mut Vec<(u32, RecordIndex)>,
        done: &mut usize,
    ) -> Result<()> {
        while *done < data.len() {
            let d = if gc { self.gc_zone()? } else { self.zone_for(id)? };
            let z = self.zone_no(d);
            let cap = self.cap_bytes(z);
            let start = self.zones[d].written;
            // The records of this batch: (zone byte offset, chunk offset, user bytes, bytes).
            let mut batch: Vec<(u64, u64, usize, usize)> = Vec::new();
            let (mut at, mut user, mut used) = (start, *done, 0usize);
            while user < data.len() {
                let n = data_fits(cap - at).min(data.len() - user).min(self.cfg.max_record);
                let len = record_len(format::data_payload_len(n)) as usize;
                if n == 0 || (used > 0 && used + len > WRITE_BATCH) {
                    break;
                }
                batch.push((at, off + user as u64, n, len));
                (at, user, used) = (at + len as u64, user + n, used + len);
            }
            if batch.is_empty() {
                self.finish_zone(d)?;
                continue;
            }
            // The pool key travels in the data prefix so recovery knows a new zone's stream;
            // the link chains the zone's records (docs/store-format.md, "Acknowledged tails").
            let (pool, mut link) = (self.zones[d].pool, self.zones[d].last_hcrc);
            let buf = self.wbuf.get(used);
            let mut pos = 0;
            for &(_, at_off, n, len) in &batch {
                let u = (at_off - off) as usize;
                let seq = self.seq;
                self.seq += 1;
                let r = &mut buf[pos..pos + len];
                format::encode_data_into(r, &id, at_off, &data[u..u + n], seq, pool, link);
                link = format::header_crc(r);
                pos += len;
            }
            let first_off = batch.first().map_or(off, |b| b.1);
            self.dev.write(self.info.zone_start(z) + start / SECTOR_SIZE, &buf[..used]).map_err(
                StoreError::dev(format!("writing chunk {id} offset {first_off} in zone {z} at byte {start}")),
            )?;
            self.stats.device_bytes_written += used as u64;
            let zs = &mut self.zones[d];
            zs.written = at;
            zs.last_hcrc = link;
            zs.state = ZoneState::Activated;
            for (rat, at_off, n, _) in batch {
                zs.live += n as u64;
                zs.stored += n as u64;
                out.push((d as u32, RecordIndex { chunk_off: at_off as u32, block: (rat / BLOCK) as u32 }));
            }
            *done = user;
            if cap - self.zones[d].written < BLOCK {
                self.finish_zone(d)?;
            }
        }
        Ok(())
    }

    /// The zone GC migrates into (opened only for GC, pool key [`GC_POOL`]).
    fn gc_zone(&mut self) -> Result<usize> {
        if let Some(d) = self.gc_zone {
            if matches!(self.zones[d].state, ZoneState::Opened | ZoneState::Activated) {
                return Ok(d);
            }
        }
        let d = self.allocate_zone(GC_POOL)?;
        self.gc_zone = Some(d);
        Ok(d)
    }

    /// Free datazones (the GC watermark compares against this).
    pub fn free_zones(&self) -> usize {
        self.zones.iter().filter(|z| z.state == ZoneState::Free).count()
    }

    /// One round of greedy GC (SMRSTORE §4.5), unthrottled: finishes the victim in progress if
    /// any; else resets a garbage zone if there is one; else migrates the whole best victim
    /// (see [`Store::gc_step`]). Returns the zone reclaimed, or `None` when there is nothing
    /// to reclaim.
    pub fn gc(&mut self) -> Result<Option<u64>> {
        loop {
            let s = self.gc_step(u64::MAX)?;
            if s.reclaimed.is_some() || s.victim.is_none() {
                return Ok(s.reclaimed);
            }
        }
    }

    /// One round of GC like [`Store::gc`], but any full zone with dead data may be the victim
    /// (the one with the most dead bytes), not only one at least a quarter dead: what an explicit
    /// `store gc`, and a store running short of free zones, do. Returns the zone reclaimed.
    pub fn gc_any(&mut self) -> Result<Option<u64>> {
        self.gc_any_dead = true;
        let r = self.gc();
        self.gc_any_dead = false;
        r
    }

    /// Free or garbage datazones: what placement may still take (the GC reserve among them).
    pub fn spare_zones(&self) -> usize {
        self.zones.iter().filter(|z| matches!(z.state, ZoneState::Free | ZoneState::Garbage)).count()
    }

    /// Datazones kept for GC ([`GC_RESERVE_ZONES`], or none with GC off).
    pub fn gc_reserve_zones(&self) -> usize {
        if self.cfg.gc_free_zones == 0 {
            0
        } else {
            GC_RESERVE_ZONES.min(self.zones.len().saturating_sub(1))
        }
    }

    /// User bytes the store can hold: the datazones but the GC reserve, each holding what one
    /// chunk of full records fills it with ([`format::chunk_fits`]). Appends in small pieces
    /// (each its own record, padded to 4 KiB) fit less.
    pub fn usable_bytes(&self) -> u64 {
        let per_zone = format::chunk_fits(self.info.zone_capacity_sectors * SECTOR_SIZE, self.cfg.max_record);
        (self.zones.len() - self.gc_reserve_zones()) as u64 * per_zone
    }

    fn out_of_space(&self) -> StoreError {
        let live: u64 = self.chunks.values().map(|c| c.len).sum();
        StoreError::NoSpace(format!(
            "no free datazone left outside the GC reserve and no dead data to reclaim: {live} live user bytes, \
             usable capacity {} bytes ({} datazones, {} kept for GC); delete chunks to make room",
            self.usable_bytes(),
            self.zones.len(),
            self.gc_reserve_zones()
        ))
    }

    /// One step of incremental greedy GC (SMRSTORE §4.5), migrating at most `budget` live user
    /// bytes (whole records; a single record larger than `budget` only when `budget` is at
    /// least [`StoreConfig::gc_step_bytes`]):
    ///
    /// 1. With no victim in progress, a garbage zone (full, no live data) is reset first
    ///    (journaled, then RESET) and the step ends. Otherwise the victim becomes the full zone
    ///    with the most dead user bytes (`stored − live`; ties: the lowest zone), if at least a
    ///    quarter of its user bytes are dead.
    /// 2. The victim's live records are copied, in chunk-id then chunk-offset order, into the
    ///    GC zone (each slice verified on the way) and the index is pointed at the copies.
    /// 3. When the victim holds nothing live any more, the store flushes and checkpoints, then
    ///    journals and performs the victim's reset.
    ///
    /// Crash safety: the victim is only reset after a checkpoint that indexes the copies;
    /// until then the previous checkpoint (pointing at the intact victim) is the recovery
    /// point and recovery ignores the copies, which do not continue their chunks. Foreground
    /// operations between steps are journaled or scanned as usual.
    pub fn gc_step(&mut self, budget: u64) -> Result<GcStep> {
        self.check_writable()?;
        let r = self.gc_step_inner(budget);
        self.guard(r)
    }

    fn gc_step_inner(&mut self, budget: u64) -> Result<GcStep> {
        let mut step = GcStep::default();
        if self.gc_job.is_none() {
            if let Some(g) = self.zones.iter().position(|z| z.state == ZoneState::Garbage) {
                self.reset_zone(g)?;
                self.stats.gc_zones_reclaimed += 1;
                step.reclaimed = Some(self.zone_no(g));
                return Ok(step);
            }
            let Some(v) = self.gc_victim() else { return Ok(step) };
            let spans: VecDeque<(ChunkId, u64)> = self
                .chunks
                .iter()
                .flat_map(|(id, c)| record_spans(c).filter(|s| s.0 as usize == v).map(move |s| (*id, s.2)))
                .collect();
            self.gc_job = Some(GcJob { victim: v, spans });
        }
        let v = self.gc_job.as_ref().map(|j| j.victim).expect("set above");
        step.victim = Some(self.zone_no(v));
        while let Some(&(id, rs)) = self.gc_job.as_ref().and_then(|j| j.spans.front()) {
            // The span may be gone (chunk deleted) since the job was planned.
            let cur = self
                .chunks
                .get(&id)
                .and_then(|c| record_spans(c).find(|s| s.0 as usize == v && s.2 == rs).map(|s| s.3));
            let Some(re) = cur else {
                self.gc_job.as_mut().expect("running").spans.pop_front();
                continue;
            };
            let n = re - rs;
            let alone = step.migrated == 0 && budget >= self.cfg.gc_step_bytes;
            if step.migrated + n > budget && !alone {
                break;
            }
            self.gc_move_span(v, id, rs, re)?;
            self.gc_job.as_mut().expect("running").spans.pop_front();
            step.migrated += n;
            self.stats.gc_bytes_migrated += n;
        }
        let done = self.gc_job.as_ref().is_some_and(|j| j.spans.is_empty());
        if done {
            self.gc_job = None;
            self.zones[v].state = ZoneState::Garbage;
            self.write_checkpoint()?;
            self.reset_zone(v)?;
            self.stats.gc_migrations += 1;
            self.stats.gc_zones_reclaimed += 1;
            step.reclaimed = Some(self.zone_no(v));
        }
        if step.migrated > 0 {
            self.stats.gc_steps += 1;
        }
        Ok(step)
    }

    /// The greedy victim: the full zone with the most dead user bytes, if at least a quarter
    /// of what was written into it is dead.
    fn gc_victim(&self) -> Option<usize> {
        (0..self.zones.len())
            .filter(|&d| {
                let z = &self.zones[d];
                z.state == ZoneState::Full
                    && if self.gc_any_dead { z.live < z.stored } else { z.live * 4 <= z.stored * 3 }
            })
            .max_by_key(|&d| (self.zones[d].stored.saturating_sub(self.zones[d].live), std::cmp::Reverse(d)))
    }

    /// Copies the record of chunk `id` at `[rs, re)` out of victim `v` into the GC zone and
    /// points the index at the copies.
    fn gc_move_span(&mut self, v: usize, id: ChunkId, rs: u64, re: u64) -> Result<()> {
        let data = self.read(id, rs, re - rs)?;
        let (mut new, mut done) = (Vec::new(), 0);
        // On failure the copies made so far stay unindexed: the victim still holds them.
        self.write_run(id, rs, &data, true, &mut new, &mut done)?;
        let c = self.chunks.get_mut(&id).expect("checked by the caller");
        let mut flat: Vec<(u32, RecordIndex)> =
            c.groups.iter().flat_map(|g| g.records.iter().map(move |r| (g.zone, *r))).collect();
        let at =
            flat.iter().position(|x| x.0 as usize == v && x.1.chunk_off as u64 == rs).expect("span of c");
        flat.splice(at..at + 1, new);
        c.groups.clear();
        for (d, r) in flat {
            push_record(c, d, r);
        }
        self.zones[v].live -= re - rs;
        Ok(())
    }

    /// Background GC around an append of `len` bytes (`before`: ahead of it). Before: the
    /// emergency path (at most one free datazone: unthrottled rounds until more are free or
    /// nothing can be reclaimed) and the low watermark. After: earn credit, and run one step
    /// when it covers the step (else count a throttled step); stop at the high watermark.
    fn gc_background(&mut self, len: u64, before: bool) -> Result<()> {
        if self.cfg.gc_free_zones == 0 {
            return Ok(());
        }
        if before {
            // Emergency: before the append starts (GC never runs in the middle of one), make
            // sure the zones it may open exist outside the GC reserve, reclaiming any dead data.
            let cap = self.info.zone_capacity_sectors * SECTOR_SIZE;
            let need = len.div_ceil(cap.max(1)) as usize + 1;
            while self.free_zones() <= GC_HARD_MIN_FREE
                || self.spare_zones() <= self.gc_reserve_zones() + need
            {
                match self.gc_any() {
                    Ok(Some(_)) => self.stats.gc_emergency_rounds += 1,
                    Ok(None) | Err(StoreError::NoSpace(_)) => break,
                    Err(e) => return Err(e),
                }
            }
            if self.free_zones() < self.cfg.gc_free_zones as usize {
                self.gc_active = true;
            }
            return Ok(());
        }
        if !self.gc_active {
            return Ok(());
        }
        let step = self.cfg.gc_step_bytes.max(1);
        self.gc_credit =
            (self.gc_credit + len.saturating_mul(self.cfg.gc_max_bandwidth as u64) / 100).min(step);
        let garbage = self.zones.iter().any(|z| z.state == ZoneState::Garbage);
        if self.gc_job.is_some() || !garbage {
            // Plan the victim (free) so the credit can be compared with its next step.
            if self.gc_job.is_none() {
                if let Some(v) = self.gc_victim() {
                    let spans = self
                        .chunks
                        .iter()
                        .flat_map(|(id, c)| {
                            record_spans(c).filter(|s| s.0 as usize == v).map(move |s| (*id, s.2))
                        })
                        .collect();
                    self.gc_job = Some(GcJob { victim: v, spans });
                }
            }
        }
        let need = match &self.gc_job {
            // Resets cost no bandwidth.
            None => 0,
            Some(j) => {
                let v = j.victim;
                let next = j.spans.iter().find_map(|(id, rs)| {
                    self.chunks.get(id).and_then(|c| {
                        record_spans(c).find(|s| s.0 as usize == v && s.2 == *rs).map(|s| s.3 - s.2)
                    })
                });
                next.unwrap_or(0).min(step)
            }
        };
        if self.gc_job.is_none() && !garbage {
            self.gc_active =
                self.free_zones() < self.cfg.gc_stop_free_zones.max(self.cfg.gc_free_zones) as usize;
            return Ok(());
        }
        if self.gc_credit < need {
            self.stats.gc_throttled_steps += 1;
            return Ok(());
        }
        let budget = if need >= step { step } else { self.gc_credit };
        let r = match self.gc_step(budget) {
            Err(StoreError::NoSpace(_)) => return Ok(()),
            r => r?,
        };
        self.gc_credit = self.gc_credit.saturating_sub(r.migrated);
        if self.gc_job.is_none()
            && self.free_zones() >= self.cfg.gc_stop_free_zones.max(self.cfg.gc_free_zones) as usize
        {
            self.gc_active = false;
        }
        Ok(())
    }

    /// Stops writing datazone `d`: FINISH on the device, state Full.
    /// Read-only (recovery only): the state changes, the device is not touched, and `written`
    /// stays at the write pointer (nothing is above it to read).
    fn finish_zone(&mut self, d: usize) -> Result<()> {
        let z = self.zone_no(d);
        let wp = self.wp_bytes(z)?;
        let full = wp >= self.info.zone_cap(z) * SECTOR_SIZE;
        if !full && !self.read_only {
            self.dev
                .zone_mgmt(ZoneOp::Finish, self.info.zone_start(z), self.info.zone_len(z))
                .map_err(StoreError::dev(format!("finishing zone {z}")))?;
        }
        let cap = self.cap_bytes(z);
        let written = if self.read_only { (wp / BLOCK * BLOCK).min(cap) } else { cap };
        let zs = &mut self.zones[d];
        zs.state = if zs.live == 0 { ZoneState::Garbage } else { ZoneState::Full };
        zs.written = written;
        let key = zs.pool;
        if let Some(p) = self.pools.get_mut(&key) {
            p.zones.retain(|&x| x as usize != d);
        }
        for c in self.chunks.values_mut() {
            if c.cur_zone == Some(d as u32) {
                c.cur_zone = None;
            }
        }
        self.appenders[d] = 0;
        Ok(())
    }

    /// The datazone chunk `id` appends to next (placement, SMRSTORE §4.3).
    ///
    /// With rule 3 (round-robin), a chunk that needs a zone (new, or its zone filled) takes, in
    /// round-robin order over its pool: an empty zone no other unsealed chunk appends to (so a
    /// chunk of one zone's worth fills one zone by itself, SMRSTORE Fig. 13(b)); else a fresh
    /// zone while the pool is under its target; else the unowned pool zone with the least
    /// written (the room a short chunk left, shared by the same stream type, §5.4 rule 2); else
    /// the next pool zone in turn, shared with the chunks appending to it.
    fn zone_for(&mut self, id: ChunkId) -> Result<usize> {
        let c = &self.chunks[&id];
        if let Some(d) = c.cur_zone {
            if matches!(self.zones[d as usize].state, ZoneState::Opened | ZoneState::Activated) {
                return Ok(d as usize);
            }
            self.set_cur_zone(id, None);
        }
        let key = self.pool_key(self.chunks[&id].stream);
        let (len, target) = {
            let p = self.pools.entry(key).or_default();
            (p.zones.len(), p.target.max(1))
        };
        let rr = matches!(self.cfg.placement, Placement::Guided { round_robin: true, .. });
        let d = if rr && len > 0 {
            let p = &self.pools[&key];
            let n = p.zones.len();
            let order: Vec<u32> = (0..n).map(|i| p.zones[(p.next + i) % n]).collect();
            let free: Vec<u32> = order.iter().copied().filter(|&d| !self.appended_to(d as usize)).collect();
            // A new zone while the pool is under target, unless only the GC reserve is left:
            // then the pool's own zones.
            let fresh = if free.iter().any(|&d| self.zones[d as usize].written == 0) || len >= target {
                None
            } else {
                match self.allocate_zone(key) {
                    Ok(d) => Some(d),
                    Err(StoreError::NoSpace(_)) => None,
                    Err(e) => return Err(e),
                }
            };
            if let Some(&d) = free.iter().find(|&&d| self.zones[d as usize].written == 0) {
                d
            } else if let Some(d) = fresh {
                self.pools.get_mut(&key).expect("created above").zones.push(d as u32);
                d as u32
            } else if let Some(&d) = free.iter().min_by_key(|&&d| self.zones[d as usize].written) {
                d
            } else {
                order[0]
            }
        } else {
            if len < target {
                match self.allocate_zone(key) {
                    Ok(d) => self.pools.get_mut(&key).expect("created above").zones.push(d as u32),
                    // Only the GC reserve is left: the pool's own zones, if it has any, else
                    // the room left in the GC zone.
                    Err(StoreError::NoSpace(_)) if len > 0 => {}
                    Err(StoreError::NoSpace(why)) => {
                        let d = self.gc_zone_with_room().ok_or(StoreError::NoSpace(why))?;
                        self.set_cur_zone(id, Some(d as u32));
                        return Ok(d);
                    }
                    Err(e) => return Err(e),
                }
            }
            let p = &self.pools[&key];
            p.zones[p.next % p.zones.len()]
        };
        let p = self.pools.get_mut(&key).expect("created above");
        p.next = p.next.wrapping_add(1);
        self.set_cur_zone(id, Some(d));
        Ok(d as usize)
    }

    /// The GC zone, if it is open with room for a record: where foreground appends go when
    /// every other zone is full and only the GC reserve is free (the reserve is then what GC
    /// takes when its zone fills).
    fn gc_zone_with_room(&self) -> Option<usize> {
        let d = self.gc_zone?;
        let z = &self.zones[d];
        (matches!(z.state, ZoneState::Opened | ZoneState::Activated)
            && self.cap_bytes(self.zone_no(d)) - z.written >= BLOCK)
            .then_some(d)
    }

    /// Points chunk `id` (unsealed) at zone `to`, keeping `appenders` in step.
    fn set_cur_zone(&mut self, id: ChunkId, to: Option<u32>) {
        let c = self.chunks.get_mut(&id).expect("checked by the caller");
        if let Some(old) = std::mem::replace(&mut c.cur_zone, to) {
            self.appenders[old as usize] -= 1;
        }
        if let Some(d) = to {
            self.appenders[d as usize] += 1;
        }
    }

    /// Whether an unsealed chunk appends to datazone `d`.
    fn appended_to(&self, d: usize) -> bool {
        debug_assert_eq!(
            self.appenders[d] as usize,
            self.chunks.values().filter(|c| !c.sealed && c.cur_zone == Some(d as u32)).count(),
            "appender count of datazone {d}"
        );
        self.appenders[d] > 0
    }

    /// Takes a free datazone for pool `key`, resetting a garbage zone when none is free.
    /// Foreground pools never take the last [`Store::gc_reserve_zones`] spare zones; GC may.
    fn allocate_zone(&mut self, key: u8) -> Result<usize> {
        if key != GC_POOL && self.spare_zones() <= self.gc_reserve_zones() {
            return Err(self.out_of_space());
        }
        let d = match self.zones.iter().position(|z| z.state == ZoneState::Free) {
            Some(d) => d,
            None => {
                let g = self.zones.iter().position(|z| z.state == ZoneState::Garbage);
                let g = g.ok_or_else(|| StoreError::NoSpace("no free or garbage datazone left".into()))?;
                self.reset_zone(g)?;
                g
            }
        };
        let z = self.zone_no(d);
        if self.wp_bytes(z)? != 0 {
            // Left over from a reset that was journaled but not carried out before a crash.
            self.dev
                .zone_mgmt(ZoneOp::Reset, self.info.zone_start(z), self.info.zone_len(z))
                .map_err(StoreError::dev(format!("resetting zone {z}")))?;
        }
        let zs = &mut self.zones[d];
        zs.state = ZoneState::Opened;
        zs.pool = key;
        zs.written = 0;
        zs.live = 0;
        zs.stored = 0;
        zs.last_hcrc = 0;
        Ok(d)
    }

    /// Journals, then carries out, the reset of garbage datazone `d`.
    fn reset_zone(&mut self, d: usize) -> Result<()> {
        if self.gc_job.as_ref().is_some_and(|j| j.victim == d) {
            // A GC victim emptied by deletes before its job ended: the last checkpoint may
            // still point at records it holds that were migrated since.
            self.gc_job = None;
            self.write_checkpoint()?;
            self.stats.gc_migrations += 1;
        }
        let z = self.zone_no(d);
        let seq = self.journal(RecordType::JZoneReset, &z.to_le_bytes())?;
        self.dev
            .zone_mgmt(ZoneOp::Reset, self.info.zone_start(z), self.info.zone_len(z))
            .map_err(StoreError::dev(format!("resetting zone {z}")))?;
        self.zones[d] = DZone {
            state: ZoneState::Free,
            pool: 0,
            written: 0,
            live: 0,
            stored: 0,
            min_seq: seq,
            last_hcrc: 0,
        };
        self.stats.zone_resets += 1;
        Ok(())
    }

    /// Reads `len` bytes of chunk `id` from `offset`. Each 4 KiB slice touched is verified
    /// against its footer (CRC, chunk id, chunk offset); damage is [`StoreError::CorruptData`].
    pub fn read(&mut self, id: ChunkId, offset: u64, len: u64) -> Result<Vec<u8>> {
        let c = self.chunks.get(&id).ok_or(StoreError::NoSuchChunk(id))?;
        let end = offset.checked_add(len).filter(|&e| e <= c.len);
        let end = end.ok_or(StoreError::OutOfRange { chunk: id, offset, len, chunk_len: c.len })?;
        // Bounded: `len` is the caller's, checked only against the chunk length.
        let mut out = Vec::with_capacity(len.min(1 << 24) as usize);
        let mut pos = offset;
        while pos < end {
            let (zone, block, rs, re) = locate(c, pos);
            let z = self.data_first + zone as u64;
            let upto = end.min(re);
            let (i, j) = ((pos - rs) / SLICE as u64, (upto - 1 - rs) / SLICE as u64);
            let slice_len = |s: u64| (re - rs - s * SLICE as u64).min(SLICE as u64) as usize;
            let rec_at = block as u64 * BLOCK;
            let lo = rec_at + DATA_SLICES_AT as u64 + i * SLICE_STRIDE as u64;
            let hi =
                rec_at + DATA_SLICES_AT as u64 + j * SLICE_STRIDE as u64 + (slice_len(j) + FOOTER_LEN) as u64;
            let (alo, ahi) = (lo / BLOCK * BLOCK, align_up(hi));
            let mut buf = vec![0u8; (ahi - alo) as usize];
            self.dev
                .read(self.info.zone_start(z) + alo / SECTOR_SIZE, &mut buf)
                .map_err(StoreError::dev(format!("reading chunk {id} at offset {pos} in zone {z}")))?;
            for s in i..=j {
                let sl = slice_len(s);
                let at = (rec_at + DATA_SLICES_AT as u64 + s * SLICE_STRIDE as u64 - alo) as usize;
                let soff = rs + s * SLICE as u64;
                check_slice(&buf[at..at + sl + FOOTER_LEN], &id, soff).map_err(|what| {
                    StoreError::CorruptData {
                        chunk: id,
                        offset: soff,
                        zone: z,
                        zone_offset: at as u64 + alo,
                        what,
                    }
                })?;
                let a = pos.max(soff) - soff;
                let b = upto.min(soff + sl as u64) - soff;
                out.extend_from_slice(&buf[at + a as usize..at + b as usize]);
            }
            pos = upto;
        }
        Ok(out)
    }

    /// Seals chunk `id`: no more appends. Durable when it returns, together with every append
    /// before it (also when the chunk was already sealed).
    pub fn seal(&mut self, id: ChunkId) -> Result<()> {
        self.check_writable()?;
        let c = self.chunks.get(&id).ok_or(StoreError::NoSuchChunk(id))?;
        let sealed = c.sealed;
        if self.cfg.durability == Durability::Batched || sealed {
            // A sealed chunk's length must not shrink after a crash; and sealing again still
            // promises that everything before it is durable.
            let r = self.flush();
            self.guard(r)?;
        }
        if sealed {
            return Ok(());
        }
        let r = self.journal(RecordType::JSeal, &id.0);
        self.guard(r)?;
        let was = self.chunks[&id].cur_zone;
        self.set_cur_zone(id, None);
        self.chunks.get_mut(&id).expect("checked").sealed = true;
        // Rule 3: a zone its chunk leaves with less than 1/16 of its capacity free, and that no
        // other chunk appends to, is finished, so the next chunk starts in an empty zone
        // instead of putting its head into the remnant.
        if let (Some(d), Placement::Guided { round_robin: true, .. }) = (was, self.cfg.placement) {
            let d = d as usize;
            let z = self.zone_no(d);
            let open = matches!(self.zones[d].state, ZoneState::Opened | ZoneState::Activated);
            let room = self.cap_bytes(z) - self.zones[d].written;
            if open && room * 16 < self.cap_bytes(z) && !self.appended_to(d) {
                let r = self.finish_zone(d);
                self.guard(r)?;
            }
        }
        self.after_op()
    }

    /// Deletes chunk `id`; its records become garbage. Durable when it returns.
    pub fn delete(&mut self, id: ChunkId) -> Result<()> {
        self.check_writable()?;
        if !self.chunks.contains_key(&id) {
            return Err(StoreError::NoSuchChunk(id));
        }
        let r = self.journal(RecordType::JDelete, &id.0);
        self.guard(r)?;
        self.set_cur_zone(id, None);
        let c = self.chunks.remove(&id).expect("checked");
        for (zone, _, rs, re) in record_spans(&c) {
            let zs = &mut self.zones[zone as usize];
            zs.live -= re - rs;
            if zs.live == 0 && zs.state == ZoneState::Full {
                zs.state = ZoneState::Garbage;
            }
        }
        self.after_op()
    }

    /// Makes every acknowledged-so-far append durable (a device flush).
    pub fn sync(&mut self) -> Result<()> {
        self.check_writable()?;
        let r = self.flush();
        self.guard(r)
    }

    /// Every chunk, in id order.
    pub fn list(&self) -> Vec<ChunkInfo> {
        self.chunks
            .iter()
            .map(|(id, c)| ChunkInfo {
                id: *id,
                stream: c.stream,
                len: c.len,
                sealed: c.sealed,
                records: c.groups.iter().map(|g| g.records.len()).sum(),
                groups: c.groups.len(),
            })
            .collect()
    }

    /// One chunk's description.
    pub fn chunk(&self, id: ChunkId) -> Option<ChunkInfo> {
        let c = self.chunks.get(&id)?;
        Some(ChunkInfo {
            id,
            stream: c.stream,
            len: c.len,
            sealed: c.sealed,
            records: c.groups.iter().map(|g| g.records.len()).sum(),
            groups: c.groups.len(),
        })
    }

    /// Counters and the zone census.
    pub fn stats(&self) -> StoreStats {
        let mut s = self.stats.clone();
        s.chunks = self.chunks.len() as u64;
        s.sealed_chunks = self.chunks.values().filter(|c| c.sealed).count() as u64;
        s.live_bytes = self.chunks.values().map(|c| c.len).sum();
        s.records = self.chunks.values().flat_map(|c| &c.groups).map(|g| g.records.len() as u64).sum();
        s.zones_by_state = [0; 5];
        for z in &self.zones {
            s.zones_by_state[z.state as usize] += 1;
        }
        s.usable_bytes = self.usable_bytes();
        s.gc_reserve_zones = self.gc_reserve_zones() as u64;
        s
    }

    /// The datazone states, in zone order (for tools and tests).
    pub fn zone_states(&self) -> Vec<(u64, ZoneState)> {
        self.zones.iter().enumerate().map(|(d, z)| (self.zone_no(d), z.state)).collect()
    }

    /// Bytes of memory the index uses (see [`MemoryUse`]).
    pub fn memory(&self) -> MemoryUse {
        let per_chunk = std::mem::size_of::<ChunkId>()
            + std::mem::size_of::<Chunk>()
            + std::mem::size_of::<IndexGroup>()
            + 16;
        let per_record = std::mem::size_of::<RecordIndex>();
        let groups: usize = self.chunks.values().map(|c| c.groups.len().saturating_sub(1)).sum();
        let records: usize = self.chunks.values().flat_map(|c| &c.groups).map(|g| g.records.len()).sum();
        MemoryUse {
            per_chunk,
            per_record,
            total: self.chunks.len() * per_chunk
                + groups * std::mem::size_of::<IndexGroup>()
                + records * per_record,
        }
    }

    /// The device (read-only access for tools and tests).
    pub fn device(&self) -> &D {
        &self.dev
    }

    /// The device, mutably: for fault injection in tests. Writing through it behind the
    /// store's back breaks the store.
    pub fn device_mut(&mut self) -> &mut D {
        &mut self.dev
    }

    /// Gives the device back without any further I/O (what a crash leaves).
    pub fn into_device(self) -> D {
        self.dev
    }

    /// What recovery did and how long each step took: `Some` for a store from [`Store::open`],
    /// `None` for one from [`Store::format`].
    pub fn recovery_report(&self) -> Option<RecoveryReport> {
        self.recovery.clone()
    }

    /// The configuration in force (`nr_metazones` from the superzone).
    pub fn config(&self) -> &StoreConfig {
        &self.cfg
    }

    // ----- journal and checkpoints -------------------------------------------------------

    /// Writes a journal record into the current metazone and flushes; returns its sequence
    /// number. A full metazone is first replaced by a checkpoint in the next one.
    fn journal(&mut self, rtype: RecordType, payload: &[u8]) -> Result<u64> {
        let seq = self.meta_append(rtype, payload)?;
        self.stats.journal_records += 1;
        self.since_ckpt += format::record_len(payload.len());
        self.flush()?;
        Ok(seq)
    }

    /// Appends a record to the current metazone (not flushed); returns its sequence number.
    /// A full metazone is first replaced by a (blocking) checkpoint in the next one.
    fn meta_append(&mut self, rtype: RecordType, payload: &[u8]) -> Result<u64> {
        let len = format::record_len(payload.len());
        if self.meta_wp + len > self.cap_bytes(self.meta_zone(self.meta)) {
            self.write_checkpoint()?;
            if rtype == RecordType::CkptBody || rtype == RecordType::CkptEnd {
                // The checkpoint just written supersedes the periodic one in progress.
                return Ok(0);
            }
        }
        let seq = self.next_seq();
        let rec = encode_record(rtype, seq, payload);
        let z = self.meta_zone(self.meta);
        self.dev.write(self.info.zone_start(z) + self.meta_wp / SECTOR_SIZE, &rec).map_err(
            StoreError::dev(format!("writing {rtype:?} in metazone {z} at byte {}", self.meta_wp)),
        )?;
        self.meta_wp += len;
        self.stats.device_bytes_written += len;
        Ok(seq)
    }

    /// Starts a periodic checkpoint in the current metazone: flushes, copies the tables (the
    /// snapshot) and writes CkptStart; the pieces follow after foreground operations. When
    /// the checkpoint and some room for the journal do not fit in the metazone, writes a
    /// blocking checkpoint into the next metazone instead.
    fn start_inc_checkpoint(&mut self) -> Result<()> {
        self.flush()?;
        let body = self.encode_tables();
        let step = self.cfg.ckpt_step_bytes as usize;
        let pieces = body.len().div_ceil(step).max(1) as u64;
        let need = pieces * format::record_len(step) + 2 * BLOCK;
        let cap = self.cap_bytes(self.meta_zone(self.meta));
        if self.meta_wp + need + cap / 8 > cap {
            return self.write_checkpoint();
        }
        self.ckpt_sub += 1;
        let sub = self.ckpt_sub;
        self.meta_append(RecordType::CkptStart, &format::ckpt_start_payload(self.meta_gen, sub))?;
        self.inc_ckpt = Some(IncCkpt { sub, body, pos: 0, pieces: 0 });
        self.since_ckpt = 0;
        Ok(())
    }

    /// Writes the next piece (at most `ckpt_step_bytes`) of the periodic checkpoint in
    /// progress; after the last piece, flushes and writes CkptEnd.
    fn inc_checkpoint_step(&mut self) -> Result<()> {
        let Some(inc) = self.inc_ckpt.as_mut() else { return Ok(()) };
        let end = (inc.pos + self.cfg.ckpt_step_bytes as usize).min(inc.body.len());
        let piece = inc.body[inc.pos..end].to_vec();
        inc.pos = end;
        inc.pieces += 1;
        let done = end == inc.body.len();
        self.meta_append(RecordType::CkptBody, &piece)?;
        if self.inc_ckpt.is_none() {
            return Ok(());
        }
        self.stats.checkpoint_pieces += 1;
        if done {
            let inc = self.inc_ckpt.take().expect("checked");
            self.flush()?;
            let p = format::ckpt_end_payload(self.meta_gen, inc.sub, inc.pieces, &inc.body);
            if self.meta_append(RecordType::CkptEnd, &p)? != 0 {
                self.flush()?;
                self.stats.checkpoints += 1;
                self.stats.incremental_checkpoints += 1;
            }
        }
        Ok(())
    }

    /// Writes a checkpoint of the chunk and zone tables into the next metazone (after
    /// resetting it): metazone header, checkpoint start, body, end; flushes; then finishes the
    /// previous metazone. Until the flush, the previous metazone's checkpoint and journal are
    /// the recovery point. The store checkpoints by itself (at open, when the metazone fills,
    /// after every 16 zones' worth of appends, after each GC migration); calling this bounds
    /// the next recovery's scan.
    pub fn checkpoint(&mut self) -> Result<()> {
        self.check_writable()?;
        let r = self.write_checkpoint();
        self.guard(r)
    }

    fn write_checkpoint(&mut self) -> Result<()> {
        self.flush()?;
        let next = (self.meta + 1) % self.cfg.nr_metazones;
        let gen = self.meta_gen + 1;
        let z = self.meta_zone(next);
        let zs = self.info.zone_start(z);
        self.dev
            .zone_mgmt(ZoneOp::Reset, zs, self.info.zone_len(z))
            .map_err(StoreError::dev(format!("resetting metazone {z} for checkpoint {gen}")))?;
        let mut buf = Vec::new();
        let mut h = gen.to_le_bytes().to_vec();
        h.extend_from_slice(&next.to_le_bytes());
        let s1 = self.next_seq();
        buf.extend(encode_record(RecordType::MetaHeader, s1, &h));
        let s2 = self.next_seq();
        buf.extend(encode_record(RecordType::CkptStart, s2, &format::ckpt_start_payload(gen, 0)));
        let body = self.encode_tables();
        let s3 = self.next_seq();
        buf.extend(encode_record(RecordType::CkptBody, s3, &body));
        let s4 = self.next_seq();
        buf.extend(encode_record(RecordType::CkptEnd, s4, &format::ckpt_end_payload(gen, 0, 1, &body)));
        if buf.len() as u64 > self.cap_bytes(z) / 2 {
            return Err(StoreError::NoSpace(format!(
                "checkpoint of {} bytes does not fit half of metazone {z}",
                buf.len()
            )));
        }
        self.dev
            .write(zs, &buf)
            .map_err(StoreError::dev(format!("writing checkpoint {gen} in metazone {z}")))?;
        self.flush()?;
        let old = self.meta_zone(self.meta);
        if old != z && self.meta_gen > 0 {
            let w = self.wp_bytes(old)?;
            if w > 0 && w < self.info.zone_cap(old) * SECTOR_SIZE {
                self.dev
                    .zone_mgmt(ZoneOp::Finish, self.info.zone_start(old), self.info.zone_len(old))
                    .map_err(StoreError::dev(format!("finishing metazone {old}")))?;
            }
        }
        self.meta = next;
        self.meta_gen = gen;
        self.meta_wp = buf.len() as u64;
        self.since_ckpt = 0;
        self.inc_ckpt = None;
        self.ckpt_sub = 0;
        self.stats.device_bytes_written += buf.len() as u64;
        self.stats.checkpoints += 1;
        Ok(())
    }

    /// The checkpoint body: chunk table then zone table (`docs/store-format.md`).
    fn encode_tables(&self) -> Vec<u8> {
        let mut b = Vec::new();
        b.extend_from_slice(&(self.chunks.len() as u64).to_le_bytes());
        for (id, c) in &self.chunks {
            b.extend_from_slice(&id.0);
            b.push(c.stream.0);
            b.push(c.sealed as u8);
            b.extend_from_slice(&c.create_seq.to_le_bytes());
            b.extend_from_slice(&c.len.to_le_bytes());
            b.extend_from_slice(&(c.groups.len() as u32).to_le_bytes());
            for g in &c.groups {
                b.extend_from_slice(&g.zone.to_le_bytes());
                b.extend_from_slice(&(g.records.len() as u32).to_le_bytes());
                for r in &g.records {
                    b.extend_from_slice(&r.chunk_off.to_le_bytes());
                    b.extend_from_slice(&r.block.to_le_bytes());
                }
            }
        }
        b.extend_from_slice(&(self.zones.len() as u64).to_le_bytes());
        for z in &self.zones {
            b.push(z.state.code());
            b.push(z.pool);
            b.extend_from_slice(&z.written.to_le_bytes());
            b.extend_from_slice(&z.stored.to_le_bytes());
            b.extend_from_slice(&z.min_seq.to_le_bytes());
            b.extend_from_slice(&z.last_hcrc.to_le_bytes());
        }
        b
    }

    fn decode_tables(&mut self, body: &[u8], zone: u64, off: u64) -> Result<()> {
        let bad = |what: String| StoreError::CorruptMeta { structure: "checkpoint", zone, offset: off, what };
        let mut r = Reader::new(body);
        let n = r.u64().map_err(bad)?;
        let mut chunks = BTreeMap::new();
        for _ in 0..n {
            let id = r.id().map_err(bad)?;
            let stream = StreamType(r.u8().map_err(bad)?);
            let sealed = r.u8().map_err(bad)? != 0;
            let create_seq = r.u64().map_err(bad)?;
            let len = r.u64().map_err(bad)?;
            let ng = r.u32().map_err(bad)?;
            let mut groups = Vec::new();
            let mut prev: Option<u32> = None;
            for _ in 0..ng {
                let gz = r.u32().map_err(bad)?;
                if gz as usize >= self.zones.len() {
                    return Err(bad(format!(
                        "chunk {id}: index group in datazone {gz} of {}",
                        self.zones.len()
                    )));
                }
                let nr = r.u32().map_err(bad)?;
                let mut records = Vec::new();
                for _ in 0..nr {
                    let chunk_off = r.u32().map_err(bad)?;
                    let block = r.u32().map_err(bad)?;
                    if prev.is_some_and(|p| chunk_off <= p) || chunk_off as u64 >= len {
                        return Err(bad(format!(
                            "chunk {id}: record index at chunk offset {chunk_off} out of order"
                        )));
                    }
                    prev = Some(chunk_off);
                    records.push(RecordIndex { chunk_off, block });
                }
                if records.is_empty() {
                    return Err(bad(format!("chunk {id}: empty index group")));
                }
                groups.push(IndexGroup { zone: gz, records });
            }
            if (len > 0) != prev.is_some()
                || prev.is_some_and(|p| p != 0 && groups[0].records[0].chunk_off != 0)
            {
                return Err(bad(format!("chunk {id}: length {len} disagrees with its index")));
            }
            chunks.insert(id, Chunk { stream, sealed, create_seq, len, groups, cur_zone: None });
        }
        let nz = r.u64().map_err(bad)?;
        if nz != self.zones.len() as u64 {
            return Err(bad(format!("zone table of {nz} datazones, the layout has {}", self.zones.len())));
        }
        for d in 0..self.zones.len() {
            let st = r.u8().map_err(bad)?;
            let state = ZoneState::from_code(st).ok_or_else(|| bad(format!("datazone {d}: state {st}")))?;
            let pool = r.u8().map_err(bad)?;
            let written = r.u64().map_err(bad)?;
            let stored = r.u64().map_err(bad)?;
            let min_seq = r.u64().map_err(bad)?;
            if written % BLOCK != 0 || written > self.cap_bytes(self.zone_no(d)) {
                return Err(bad(format!("datazone {d}: written {written}")));
            }
            let last_hcrc = r.u32().map_err(bad)?;
            self.zones[d] = DZone { state, pool, written, live: 0, stored, min_seq, last_hcrc };
        }
        if !r.done() {
            return Err(bad("trailing bytes after the zone table".into()));
        }
        // Every record must lie in the written part of its zone and hold no more than a zone
        // can (so no read sizes a buffer from a forged length).
        for (id, c) in &chunks {
            if c.len > MAX_CHUNK_LEN {
                return Err(bad(format!("chunk {id}: length {} beyond the limit {MAX_CHUNK_LEN}", c.len)));
            }
            for (zone, block, rs, re) in record_spans(c) {
                let written = self.zones[zone as usize].written;
                let room = written.saturating_sub(block as u64 * BLOCK);
                if room < BLOCK || re - rs > data_fits(room) as u64 {
                    return Err(bad(format!(
                        "chunk {id}: record of {} bytes at block {block} of datazone {zone} beyond its \
                         {written} written bytes",
                        re - rs
                    )));
                }
            }
        }
        self.chunks = chunks;
        Ok(())
    }

    // ----- recovery ---------------------------------------------------------------------

    fn recover(&mut self, rep: &mut RecoveryReport) -> Result<()> {
        let mut t = Instant::now();
        let lap = |t: &mut Instant| {
            let e = t.elapsed();
            *t = Instant::now();
            e
        };
        // 1. The newest complete checkpoint, through the metazone headers.
        let mut cands = Vec::new();
        for m in 0..self.cfg.nr_metazones {
            let z = self.meta_zone(m);
            let w = self.wp_bytes(z)?;
            if w == 0 {
                continue;
            }
            let mut b = vec![0u8; BLOCK as usize];
            self.dev
                .read(self.info.zone_start(z), &mut b)
                .map_err(StoreError::dev(format!("reading metazone {z}")))?;
            match decode_header(&b) {
                Ok(h) if h.rtype == RecordType::MetaHeader && h.payload_len == 12 => {
                    let p = &b[HEADER_LEN..HEADER_LEN + 12];
                    if check_payload(&h, p).is_ok() && format::u32_at(p, 8) == m {
                        cands.push((format::u64_at(p, 0), m));
                        continue;
                    }
                }
                _ => {}
            }
            // Not a valid header: a reset-then-crash leaves an empty zone; anything valid
            // after it means damage.
            let (_, _, tail) = self.parse_zone(z, 0, w, false)?;
            if let Tail::Corrupt { offset, what } = tail {
                return Err(StoreError::CorruptMeta { structure: "metazone header", zone: z, offset, what });
            }
        }
        cands.sort_unstable_by(|a, b| b.cmp(a));
        let mut chosen = None;
        for &(gen, m) in &cands {
            let z = self.meta_zone(m);
            let w = self.wp_bytes(z)?;
            let (recs, _, tail) = self.parse_zone(z, 0, w, false)?;
            let ck = find_checkpoints(&recs, gen);
            if let Tail::Corrupt { offset, what } = tail {
                let structure = if ck.first_complete { "journal" } else { "checkpoint" };
                return Err(StoreError::CorruptMeta { structure, zone: z, offset, what });
            }
            if ck.first_complete {
                chosen = Some((gen, m, recs, ck));
                break;
            }
            // A checkpoint torn by a crash: the previous metazone is still the recovery point.
        }
        let (gen, m, recs, ck) = chosen.ok_or_else(|| StoreError::CorruptMeta {
            structure: "checkpoint",
            zone: self.meta_zone(0),
            offset: 0,
            what: "no complete checkpoint in any metazone".into(),
        })?;
        let z = self.meta_zone(m);
        let (start, body, body_off) = ck.last.expect("the first checkpoint is complete");
        self.decode_tables(&body, z, body_off)?;
        rep.checkpoint_bytes = body.len() as u64;
        rep.checkpoint_generation = gen;
        rep.checkpoint_load = lap(&mut t);
        let mut last_seq = recs[start].h.seq;
        // 2. Replay the journal: every journal record after the loaded checkpoint's start
        // (also those written while its pieces were, which its snapshot does not hold).
        for r in &recs[start + 1..] {
            if matches!(r.h.rtype, RecordType::CkptStart | RecordType::CkptBody | RecordType::CkptEnd) {
                continue;
            }
            rep.journal_records += 1;
            let bad =
                |what: String| StoreError::CorruptMeta { structure: "journal", zone: z, offset: r.off, what };
            if r.h.seq <= last_seq {
                return Err(bad(format!("sequence {} after {last_seq}", r.h.seq)));
            }
            last_seq = r.h.seq;
            let mut rd = Reader::new(&r.payload);
            match r.h.rtype {
                RecordType::JCreate => {
                    let id = rd.id().map_err(bad)?;
                    let stream = StreamType(rd.u8().map_err(bad)?);
                    self.chunks.insert(
                        id,
                        Chunk {
                            stream,
                            sealed: false,
                            create_seq: r.h.seq,
                            len: 0,
                            groups: Vec::new(),
                            cur_zone: None,
                        },
                    );
                }
                RecordType::JSeal => {
                    let id = rd.id().map_err(bad)?;
                    if let Some(c) = self.chunks.get_mut(&id) {
                        c.sealed = true;
                    }
                }
                RecordType::JDelete => {
                    let id = rd.id().map_err(bad)?;
                    self.chunks.remove(&id);
                }
                RecordType::JZoneReset => {
                    let zz = rd.u64().map_err(bad)?;
                    let d = zz.checked_sub(self.data_first).filter(|&d| d < self.zones.len() as u64);
                    let d = d.ok_or_else(|| bad(format!("reset of zone {zz}, not a datazone")))? as usize;
                    self.zones[d] = DZone {
                        state: ZoneState::Free,
                        pool: 0,
                        written: 0,
                        live: 0,
                        stored: 0,
                        min_seq: r.h.seq,
                        last_hcrc: 0,
                    };
                }
                t => return Err(bad(format!("{t:?} record in the journal"))),
            }
        }
        self.meta = m;
        self.meta_gen = gen;
        if let Some(r) = recs.iter().find(|r| r.h.seq > MAX_SEQ) {
            let what = format!("sequence number {} beyond the bound {MAX_SEQ}", r.h.seq);
            return Err(StoreError::CorruptMeta { structure: "journal", zone: z, offset: r.off, what });
        }
        last_seq = recs.iter().map(|r| r.h.seq).max().unwrap_or(0).max(last_seq);
        rep.journal_replay = lap(&mut t);
        // 3. Scan the datazones written since the checkpoint.
        let mut found: Vec<(u64, u32, u32, DataPrefix)> = Vec::new();
        for d in 0..self.zones.len() {
            let zs = self.zones[d];
            if matches!(zs.state, ZoneState::Full | ZoneState::Garbage) {
                continue;
            }
            let z = self.zone_no(d);
            let w = self.wp_bytes(z)?;
            if w < zs.written {
                return Err(StoreError::CorruptMeta {
                    structure: "zone table",
                    zone: z,
                    offset: w,
                    what: format!(
                        "device write pointer at byte {w}, the checkpoint says {} were written",
                        zs.written
                    ),
                });
            }
            if w == zs.written {
                continue;
            }
            let (recs, end, tail) = self.parse_zone(z, zs.written, w, true)?;
            rep.zones_scanned += 1;
            rep.records_scanned += recs.len() as u64;
            rep.bytes_scanned += w - zs.written;
            if recs.first().is_some_and(|r| r.h.seq <= zs.min_seq) && zs.written == 0 {
                // Old contents of a zone whose reset was journaled but not carried out.
                if self.read_only {
                    self.unreset.insert(d);
                } else {
                    self.dev
                        .zone_mgmt(ZoneOp::Reset, self.info.zone_start(z), self.info.zone_len(z))
                        .map_err(StoreError::dev(format!("resetting zone {z}")))?;
                }
                continue;
            }
            if let Tail::Corrupt { offset, what } = tail {
                return Err(StoreError::CorruptMeta { structure: "data record", zone: z, offset, what });
            }
            let mut pool = None;
            let mut last = zs.min_seq;
            let mut link = if zs.written == 0 { 0 } else { zs.last_hcrc };
            for r in &recs {
                let bad = |what: String| StoreError::CorruptMeta {
                    structure: "data record",
                    zone: z,
                    offset: r.off,
                    what,
                };
                if r.h.seq > MAX_SEQ {
                    return Err(bad(format!("sequence number {} beyond the bound {MAX_SEQ}", r.h.seq)));
                }
                if r.h.rtype != RecordType::Data || r.h.seq <= last {
                    return Err(bad(format!(
                        "{:?} record with sequence {} after {last}",
                        r.h.rtype, r.h.seq
                    )));
                }
                last = r.h.seq;
                if r.h.link != link {
                    return Err(bad(format!(
                        "record links to header CRC {:#010x}, the zone's previous record has {link:#010x}",
                        r.h.link
                    )));
                }
                link = r.h.hcrc;
                if r.damaged.is_some() {
                    rep.damaged_records += 1;
                }
                let pre = decode_data_prefix(&r.payload, r.h.payload_len as usize).map_err(bad)?;
                pool.get_or_insert(pre.pool);
                self.zones[d].stored += pre.len as u64;
                found.push((r.h.seq, d as u32, (r.off / BLOCK) as u32, pre));
            }
            let zs = &mut self.zones[d];
            if let Some(p) = pool {
                if zs.state == ZoneState::Free {
                    zs.pool = p;
                }
            }
            zs.written = end;
            zs.last_hcrc = link;
            if end > 0 && zs.state == ZoneState::Free {
                zs.state = ZoneState::Activated;
            }
            if end != w {
                // A torn last record (or a whole one whose padding runs past the write
                // pointer): nothing more goes into this zone.
                self.finish_zone(d)?;
            } else if end > 0 {
                self.zones[d].state = ZoneState::Activated;
            }
        }
        rep.datazone_scan = lap(&mut t);
        found.sort_unstable_by_key(|f| f.0);
        for (seq, d, block, pre) in found {
            let ok = self.chunks.get_mut(&pre.chunk).filter(|c| {
                seq > c.create_seq && pre.offset == c.len && c.len + pre.len as u64 <= MAX_CHUNK_LEN
            });
            match ok {
                Some(c) => {
                    push_record(c, d, RecordIndex { chunk_off: pre.offset as u32, block });
                    c.len += pre.len as u64;
                    self.stats.recovered_records += 1;
                }
                None => self.stats.ignored_records += 1,
            }
            last_seq = last_seq.max(seq);
        }
        self.seq = last_seq + 1;
        // 4. Derived state: live bytes, garbage zones, pools.
        for z in &mut self.zones {
            z.live = 0;
        }
        for c in self.chunks.values() {
            for (zone, _, rs, re) in record_spans(c) {
                self.zones[zone as usize].live += re - rs;
            }
        }
        for d in 0..self.zones.len() {
            let z = self.zone_no(d);
            let zs = &mut self.zones[d];
            if zs.written >= self.info.zone_cap(z) * SECTOR_SIZE / BLOCK * BLOCK
                && zs.state == ZoneState::Activated
            {
                zs.state = ZoneState::Full;
            }
            if zs.state == ZoneState::Full && zs.live == 0 {
                zs.state = ZoneState::Garbage;
            }
            if zs.state == ZoneState::Garbage && zs.live > 0 {
                zs.state = ZoneState::Full;
            }
        }
        for p in self.pools.values_mut() {
            p.zones.clear();
        }
        for d in 0..self.zones.len() {
            let zs = self.zones[d];
            if matches!(zs.state, ZoneState::Opened | ZoneState::Activated) {
                if zs.pool == GC_POOL {
                    if self.gc_zone.is_none() {
                        self.gc_zone = Some(d);
                    } else {
                        // Only one GC zone is written at a time; close the others.
                        self.finish_zone(d)?;
                    }
                } else {
                    self.pools.entry(zs.pool).or_default().zones.push(d as u32);
                }
            }
        }
        // 5. A fresh recovery point: the old metazone may end in a torn record. Read-only: the
        // loaded metazone stays the current one, written up to its write pointer.
        if self.read_only {
            self.meta_wp = self.wp_bytes(self.meta_zone(m))? / BLOCK * BLOCK;
        } else {
            self.write_checkpoint()?;
        }
        rep.index_build = lap(&mut t);
        Ok(())
    }

    /// Parses the records of zone `z` in `[from, to)` bytes, `to` being the device's write
    /// pointer. Stops at the first record that is not valid and classifies it
    /// (`docs/store-format.md`, "Acknowledged tails"):
    ///
    /// - a record whose header is valid but which runs past the write pointer is a write torn
    ///   by a crash (never acknowledged): the end of the zone's data ([`Tail::Clean`]) — unless a
    ///   valid record follows (probed), which is damage;
    /// - an all-zero block in a zone the device reports FULL is the end of the data of a
    ///   FINISHed zone ([`Tail::Clean`], probed likewise);
    /// - anything else lies wholly below the write pointer, so it was written completely and
    ///   damaged afterwards: [`Tail::Corrupt`] — except, with `salvage`, a data record whose
    ///   header is valid and whose prefix agrees with one of its slice footers: it is returned
    ///   with `damaged` set (indexed by recovery; reads of its bad slices fail) and parsing
    ///   goes on.
    fn parse_zone(&mut self, z: u64, from: u64, to: u64, salvage: bool) -> Result<(Vec<Parsed>, u64, Tail)> {
        let zs = self.info.zone_start(z);
        let full = self.dev.report_zone(z).map_err(StoreError::dev(format!("reporting zone {z}")))?.cond
            == shingled_zoned::ZoneCond::Full;
        let mut out = Vec::new();
        let mut off = from;
        // One sequential pass up to the write pointer in windows of `scan_buffer_bytes`.
        let mut scan = ZoneScan::new(z, zs, to, self.cfg.scan_buffer_bytes);
        let (stop, probe_from, what) = loop {
            if off >= to {
                return Ok((out, off, Tail::Clean));
            }
            let hb = scan.get(&mut self.dev, off, BLOCK as usize, "reading")?;
            let h = match decode_header(hb) {
                Ok(h) => h,
                Err(_) if full && hb.iter().all(|&b| b == 0) => {
                    break (off, off + BLOCK, "zeros after the data of a finished zone".to_string())
                }
                Err(e) => {
                    let what = format!("invalid record header below the write pointer ({to}): {e}");
                    return Ok((out, off, Tail::Corrupt { offset: off, what }));
                }
            };
            let len = h.record_len();
            // A data record whose header and payload are below the write pointer and only its
            // zero padding is not (a crash kept all of it but the padding's sectors) is whole:
            // collected if its payload checks, and it ends the zone (the caller FINISHes it,
            // after which the padding reads as zeros and `fsck` sees a complete record).
            let body = off + (HEADER_LEN as u64) + h.payload_len as u64;
            let short = off + len > to && salvage && h.rtype == RecordType::Data && body <= to;
            let torn = || format!("record of {len} bytes runs past the write pointer at {to}");
            if off + len > to && !short {
                break (off, off + len, torn());
            }
            let rec = scan.get(&mut self.dev, off, if short { to - off } else { len } as usize, "reading")?;
            let payload = &rec[HEADER_LEN..HEADER_LEN + h.payload_len as usize];
            if short && check_payload(&h, payload).is_err() {
                break (off, off + len, torn());
            }
            let mut damaged = None;
            if let Err(e) = check_payload(&h, payload) {
                let what = format!("{:?} record below the write pointer ({to}): {e}", h.rtype);
                if !(salvage && h.rtype == RecordType::Data && prefix_confirmed(rec, &h)) {
                    return Ok((out, off, Tail::Corrupt { offset: off, what }));
                }
                damaged = Some(what);
            }
            let keep = if h.rtype == RecordType::Data {
                payload.len().min(format::DATA_PREFIX)
            } else {
                payload.len()
            };
            out.push(Parsed { h, damaged, off, payload: payload[..keep].to_vec() });
            off += len;
        };
        let mut at = probe_from;
        while at < to {
            let hb = scan.get(&mut self.dev, at, BLOCK as usize, "reading")?;
            if let Ok(h) = decode_header(hb) {
                let len = h.record_len();
                if at + len <= to {
                    let rec = scan.get(&mut self.dev, at, len as usize, "reading")?;
                    if check_payload(&h, &rec[HEADER_LEN..HEADER_LEN + h.payload_len as usize]).is_ok() {
                        return Ok((
                            out,
                            stop,
                            Tail::Corrupt {
                                offset: stop,
                                what: format!("{what}, yet a valid record follows at byte {at}"),
                            },
                        ));
                    }
                }
            }
            at += BLOCK;
        }
        Ok((out, stop, Tail::Clean))
    }
}

/// The checkpoints found in a metazone's records.
struct Checkpoints {
    /// The metazone's first checkpoint (records 1.., written in one go) is complete.
    first_complete: bool,
    /// The last complete checkpoint: index of its CkptStart in the records, its body, and the
    /// byte offset of its first piece.
    last: Option<(usize, Vec<u8>, u64)>,
}

/// Finds the complete checkpoints of metazone generation `gen` in `recs`: a CkptStart, then
/// CkptBody pieces (journal records may come between them), then a CkptEnd naming the same
/// checkpoint whose piece count, body length and body CRC match the pieces.
fn find_checkpoints(recs: &[Parsed], gen: u64) -> Checkpoints {
    let mut out = Checkpoints { first_complete: false, last: None };
    let mut cur: Option<(u32, usize, Vec<usize>)> = None;
    if recs.first().map(|r| r.h.rtype) != Some(RecordType::MetaHeader) {
        return out;
    }
    for (i, r) in recs.iter().enumerate().skip(1) {
        match r.h.rtype {
            RecordType::CkptStart => {
                cur = (r.payload.len() == 12 && format::u64_at(&r.payload, 0) == gen)
                    .then(|| (format::u32_at(&r.payload, 8), i, Vec::new()));
            }
            RecordType::CkptBody => {
                if let Some(c) = cur.as_mut() {
                    c.2.push(i);
                }
            }
            RecordType::CkptEnd => {
                let Some((sub, start, pieces)) = cur.take() else { continue };
                let body: Vec<u8> = pieces.iter().flat_map(|&k| recs[k].payload.iter().copied()).collect();
                let want = format::ckpt_end_payload(gen, sub, pieces.len() as u32, &body);
                if r.payload == want && !pieces.is_empty() {
                    if start == 1 && sub == 0 {
                        out.first_complete = true;
                    }
                    if out.first_complete {
                        out.last = Some((start, body, recs[pieces[0]].off));
                    }
                }
            }
            _ => {}
        }
    }
    out
}

/// Whether the prefix of data record `rec` (valid header `h`, payload failing its CRC) can be
/// trusted: it decodes, agrees with the header's payload length, and names the same chunk and
/// chunk offset as the footer of one of its slices (whatever that slice's CRC), so a flipped
/// prefix is not taken for another chunk's data.
fn prefix_confirmed(rec: &[u8], h: &Header) -> bool {
    let payload = &rec[HEADER_LEN..HEADER_LEN + h.payload_len as usize];
    let Ok(pre) = decode_data_prefix(payload, payload.len()) else { return false };
    let n = pre.len as usize;
    (0..n.div_ceil(SLICE)).any(|i| {
        let sl = (n - i * SLICE).min(SLICE);
        let f = DATA_SLICES_AT + i * SLICE_STRIDE + sl;
        rec[f..f + 24] == pre.chunk.0
            && format::u32_at(rec, f + 24) == (pre.offset + (i * SLICE) as u64) as u32
    })
}

fn push_record(c: &mut Chunk, zone: u32, r: RecordIndex) {
    match c.groups.last_mut() {
        Some(g) if g.zone == zone => g.records.push(r),
        _ => c.groups.push(IndexGroup { zone, records: vec![r] }),
    }
}

/// Every record of `c` as (datazone, block, chunk start, chunk end), in chunk order.
fn record_spans(c: &Chunk) -> impl Iterator<Item = (u32, u32, u64, u64)> + '_ {
    let flat: Vec<(u32, RecordIndex)> =
        c.groups.iter().flat_map(|g| g.records.iter().map(move |r| (g.zone, *r))).collect();
    let n = flat.len();
    (0..n).map(move |i| {
        let end = if i + 1 < n { flat[i + 1].1.chunk_off as u64 } else { c.len };
        (flat[i].0, flat[i].1.block, flat[i].1.chunk_off as u64, end)
    })
}

/// The record of `c` holding chunk offset `pos` (< len): (datazone, block, start, end).
fn locate(c: &Chunk, pos: u64) -> (u32, u32, u64, u64) {
    let gi = c.groups.partition_point(|g| g.records[0].chunk_off as u64 <= pos) - 1;
    let g = &c.groups[gi];
    let ri = g.records.partition_point(|r| r.chunk_off as u64 <= pos) - 1;
    let end = if ri + 1 < g.records.len() {
        g.records[ri + 1].chunk_off as u64
    } else if gi + 1 < c.groups.len() {
        c.groups[gi + 1].records[0].chunk_off as u64
    } else {
        c.len
    };
    (g.zone, g.records[ri].block, g.records[ri].chunk_off as u64, end)
}

fn placement_code(p: Placement) -> u8 {
    match p {
        Placement::OneZone => 0x80,
        Placement::Guided { separate_streams, chunk_limit, round_robin } => {
            separate_streams as u8 | (chunk_limit as u8) << 1 | (round_robin as u8) << 2
        }
    }
}

/// (superzone, first datazone) for a device, checking it can host a store.
fn layout(info: &DeviceInfo, nr_meta: u32) -> Result<(u64, u64)> {
    if !BLOCK.is_multiple_of(info.lba_size as u64) {
        return Err(StoreError::Config(format!("logical block size {} does not divide 4096", info.lba_size)));
    }
    if info.zone_capacity_sectors * SECTOR_SIZE < 8 * BLOCK {
        return Err(StoreError::Config("zones must hold at least 32 KiB".into()));
    }
    let super_zone = info.nr_conv;
    let data_first = super_zone + 1 + nr_meta as u64;
    if data_first + 2 > info.nr_zones {
        return Err(StoreError::Config(format!(
            "{} sequential zones cannot hold a superzone, {nr_meta} metazones and two datazones",
            info.nr_seq()
        )));
    }
    Ok((super_zone, data_first))
}

fn placement_from_code(c: u8) -> Placement {
    match c {
        0x80 => Placement::OneZone,
        c => Placement::Guided {
            separate_streams: c & 1 != 0,
            chunk_limit: c & 2 != 0,
            round_robin: c & 4 != 0,
        },
    }
}

/// Reads, CRC-checks and decodes the superzone record of zone `z`, whatever its format version
/// (`read_format` reports the version; [`read_super`] refuses others). The superzone holds two
/// copies of the record (stores formatted before the second copy have one); the first valid
/// copy is used. When none is: "not formatted" if neither copy even has the record magic,
/// else a damaged superzone ([`StoreError::CorruptMeta`]) naming both copies' faults.
pub(crate) fn read_super_record<D: ZonedDevice>(dev: &mut D, info: &DeviceInfo, z: u64) -> Result<SuperInfo> {
    let mut b = vec![0u8; 2 * BLOCK as usize];
    dev.read(info.zone_start(z), &mut b).map_err(StoreError::dev("reading the superzone"))?;
    let mut faults = Vec::new();
    for (k, copy) in b.chunks(BLOCK as usize).enumerate() {
        match super_copy(copy, z) {
            Ok(s) => return Ok(s),
            Err(e) => faults.push((k, e)),
        }
    }
    let magic = b.chunks(BLOCK as usize).any(|c| c[..4] == format::MAGIC.to_le_bytes());
    let why = faults.iter().map(|(k, e)| format!("copy {k}: {e}")).collect::<Vec<_>>().join("; ");
    if !magic {
        return Err(StoreError::NotFormatted(format!("superzone (zone {z}): no superzone record ({why})")));
    }
    Err(StoreError::CorruptMeta {
        structure: "superzone",
        zone: z,
        offset: 0,
        what: format!("both copies of the superzone record are damaged ({why}); the store's data may be intact: do not format it again"),
    })
}

/// One copy of the superzone record.
fn super_copy(b: &[u8], z: u64) -> Result<SuperInfo> {
    let h = decode_header(b).map_err(|e| StoreError::NotFormatted(format!("superzone (zone {z}): {e}")))?;
    if h.rtype != RecordType::Super || h.payload_len as usize > b.len() - HEADER_LEN {
        return Err(StoreError::NotFormatted(format!("zone {z} does not start with a superzone record")));
    }
    let p = &b[HEADER_LEN..HEADER_LEN + h.payload_len as usize];
    check_payload(&h, p).map_err(|what| StoreError::CorruptMeta {
        structure: "superzone",
        zone: z,
        offset: 0,
        what,
    })?;
    let bad = |what: String| StoreError::CorruptMeta { structure: "superzone", zone: z, offset: 0, what };
    let mut r = Reader::new(p);
    Ok(SuperInfo {
        version: r.u32().map_err(bad)?,
        time: r.u64().map_err(bad)?,
        nr_metazones: r.u32().map_err(bad)?,
        zone_sectors: r.u64().map_err(bad)?,
        nr_zones: r.u64().map_err(bad)?,
        pools: [r.u32().map_err(bad)?, r.u32().map_err(bad)?, r.u32().map_err(bad)?],
        placement: placement_from_code(r.u8().map_err(bad)?),
        metadata_chunk_limit: r.u64().map_err(bad)?,
        max_record: r.u32().map_err(bad)?,
    })
}

/// [`read_super_record`] for `open`: this build's format version, a sane metazone count.
fn read_super<D: ZonedDevice>(dev: &mut D, info: &DeviceInfo, z: u64) -> Result<SuperInfo> {
    let sup = read_super_record(dev, info, z)?;
    let version = sup.version;
    if version != FORMAT_VERSION {
        return Err(StoreError::NotFormatted(format!(
            "zone {z} holds a store of format version {version}; this build reads only version \
             {FORMAT_VERSION} (version 1 data records carry no zone chain: copy the chunks out with \
             the build that wrote them, or format again)"
        )));
    }
    if !(2..=1024).contains(&sup.nr_metazones) {
        return Err(StoreError::CorruptMeta {
            structure: "superzone",
            zone: z,
            offset: 0,
            what: format!("{} metazones", sup.nr_metazones),
        });
    }
    Ok(sup)
}
