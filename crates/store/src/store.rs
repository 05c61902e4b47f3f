//! The engine: the `Store` struct, its public API (format, open, create, append, read, seal,
//! delete, sync, listings and statistics), the chunk index and the zone state machine. The rest
//! lives in one file per concern under `store/`: `placement.rs` (zone pools and placement),
//! `write.rs` (the write path), `gc.rs` (garbage collection), `checkpoint.rs` (journal and
//! checkpoints), `recovery.rs` (recovery, step by step), `superzone.rs` (the superzone record),
//! `scan.rs` (windowed zone reads) and `fsck.rs` (the read-only check).

use crate::format::{self, encode_record, AlignedBuf, PreparedRecords, RecordType, BLOCK};
use crate::{ChunkId, Durability, Placement, Result, StoreConfig, StoreError, StreamType};
use serde::{Serialize, Serializer};
use shingled_zoned::{DeviceInfo, ZoneOp, ZonedDevice, SECTOR_SIZE};
use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::time::{Duration, Instant};

mod checkpoint;
mod fsck;
mod gc;
mod placement;
mod read;
mod recovery;
mod scan;
mod superzone;
mod write;
pub use fsck::{FsckProblem, FsckReport};
pub use read::ChunkPiece;
use scan::ZoneScan;
use superzone::{layout, placement_code, read_super, super_copy};
pub use superzone::{read_format, StoredFormat};

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

impl DZone {
    /// An empty zone after a reset whose journal record has sequence number `min_seq`.
    fn free(min_seq: u64) -> DZone {
        DZone { state: ZoneState::Free, pool: 0, written: 0, live: 0, stored: 0, min_seq, last_hcrc: 0 }
    }
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

/// A chunk's public description. Serialized as the CLI's and Python's chunk objects: the id
/// as hex, the stream type as its number, `len` as `length`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ChunkInfo {
    /// Id.
    #[serde(serialize_with = "id_string")]
    pub id: ChunkId,
    /// Stream type given at create.
    #[serde(serialize_with = "stream_number")]
    pub stream: StreamType,
    /// Bytes appended.
    #[serde(rename = "length")]
    pub len: u64,
    /// Whether it is sealed (no more appends).
    pub sealed: bool,
    /// Data records holding it.
    pub records: usize,
    /// Index groups (runs of records in one datazone).
    pub groups: usize,
}

/// Counters and zone census. Serialized as Python's `ChunkStore.stats()` (which adds
/// `free_zones` and `memory`): the zone census by state name; the capacity fields and the
/// incremental-checkpoint counters are left out.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
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
    #[serde(skip)]
    pub usable_bytes: u64,
    /// Datazones kept for GC to copy into ([`GC_RESERVE_ZONES`]).
    #[serde(skip)]
    pub gc_reserve_zones: u64,
    /// Datazones per state: free, opened, activated, full, garbage.
    #[serde(serialize_with = "zones_by_state_names")]
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
    #[serde(skip)]
    pub incremental_checkpoints: u64,
    /// CkptBody pieces written by periodic checkpoints.
    #[serde(skip)]
    pub checkpoint_pieces: u64,
}

/// Memory the index uses (SMRSTORE §4.2 states ~200 B per chunk and 8 B per record index).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
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
/// wall-clock time of each step. Serialized as `shingled store info`'s `recovery` object: the
/// total time as `total_s` (seconds), the counters; the step times and `chunks_recovered` are
/// left out.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct RecoveryReport {
    /// Reading and checking the superzone record.
    #[serde(skip)]
    pub superzone_read: Duration,
    /// Finding the newest complete checkpoint (metazone headers, parsing metazones) and
    /// loading its tables.
    #[serde(skip)]
    pub checkpoint_load: Duration,
    /// Replaying the journal records after the checkpoint.
    #[serde(skip)]
    pub journal_replay: Duration,
    /// Scanning the datazones written since the checkpoint.
    #[serde(skip)]
    pub datazone_scan: Duration,
    /// Indexing the records found, deriving live bytes, zone states and pools, and writing the
    /// checkpoint that ends recovery.
    #[serde(skip)]
    pub index_build: Duration,
    /// The whole of `open`.
    #[serde(rename = "total_s", serialize_with = "seconds")]
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
    #[serde(skip)]
    pub chunks_recovered: u64,
    /// Data records the scan found written completely but damaged afterwards (valid header,
    /// payload failing its CRC): indexed all the same, so reads of their bad slices fail with
    /// [`StoreError::CorruptData`] naming chunk and offset instead of the data vanishing.
    pub damaged_records: u64,
    /// Empty when recovery loaded the newest checkpoint. Otherwise what it stepped over: each
    /// byte range of a metazone that did not verify and could only have held checkpoint
    /// records, and which older checkpoint it loaded instead before replaying the journal
    /// (docs/store-format.md, "Recovery", step 3).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub checkpoint_fallback: Vec<String>,
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
        let zones = vec![DZone::free(0); nr_data as usize];
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

    /// Free datazones (the GC watermark compares against this).
    pub fn free_zones(&self) -> usize {
        self.zones.iter().filter(|z| z.state == ZoneState::Free).count()
    }

    /// User bytes the store can hold: the datazones but the GC reserve, each holding what one
    /// chunk of full records fills it with ([`format::chunk_fits`]). Appends in small pieces
    /// (each its own record, padded to 4 KiB) fit less.
    pub fn usable_bytes(&self) -> u64 {
        let per_zone = format::chunk_fits(self.info.zone_capacity_sectors * SECTOR_SIZE, self.cfg.max_record);
        (self.zones.len() - self.gc_reserve_zones()) as u64 * per_zone
    }

    /// Reads `len` bytes of chunk `id` from `offset`. Each 4 KiB slice touched is verified
    /// against its footer (CRC, chunk id, chunk offset); damage is [`StoreError::CorruptData`].
    /// (A caller reading much should reuse a [`ChunkPiece`] with [`Store::read_raw`].)
    pub fn read(&mut self, id: ChunkId, offset: u64, len: u64) -> Result<Vec<u8>> {
        let mut piece = ChunkPiece::new();
        self.read_raw(id, offset, len, &mut piece)?;
        piece.verify()?;
        // `len` fits in the chunk (read_raw checked it).
        let mut out = Vec::with_capacity(piece.len() as usize);
        for b in piece.user_bytes() {
            out.extend_from_slice(b);
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

/// Serializes a chunk id as its hex string.
pub(crate) fn id_string<S: Serializer>(id: &ChunkId, s: S) -> std::result::Result<S::Ok, S::Error> {
    s.collect_str(id)
}

/// Serializes an optional chunk id as its hex string or null.
pub(crate) fn opt_id_string<S: Serializer>(
    id: &Option<ChunkId>,
    s: S,
) -> std::result::Result<S::Ok, S::Error> {
    match id {
        Some(id) => s.collect_str(id),
        None => s.serialize_none(),
    }
}

fn stream_number<S: Serializer>(t: &StreamType, s: S) -> std::result::Result<S::Ok, S::Error> {
    s.serialize_u8(t.0)
}

/// The zone census as an object keyed by state name (`ZoneState`'s order).
fn zones_by_state_names<S: Serializer>(z: &[u64; 5], s: S) -> std::result::Result<S::Ok, S::Error> {
    use serde::ser::SerializeMap;
    let mut m = s.serialize_map(Some(5))?;
    for (k, v) in ["free", "opened", "activated", "full", "garbage"].iter().zip(z) {
        m.serialize_entry(k, v)?;
    }
    m.end()
}

fn seconds<S: Serializer>(d: &Duration, s: S) -> std::result::Result<S::Ok, S::Error> {
    s.serialize_f64(d.as_secs_f64())
}
