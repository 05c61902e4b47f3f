//! Several drives behind one chunk API (SMRSTORE §2.1: a chunkserver owns a storage server of
//! 60 HDDs, §6.3 runs SMRSTORE on all of them; here one [`Store`] per drive).
//!
//! [`StoreFront`] owns one [`Store`] per drive and keeps a chunk → drive map in memory. It
//! stores nothing of its own on the devices: each drive is a complete store, and the map is
//! rebuilt at [`StoreFront::open`] by listing every drive. So the drives may be given in any
//! order (the order only decides where *new* chunks go), and a drive left out simply hides its
//! chunks. An id found on two drives is an error at open ([`FrontError::Duplicate`]).
//!
//! **Placement** ("power of two choices", Mitzenmacher): a chunk id hashes (FNV-1a, 64 bits,
//! over its 24 bytes) to two distinct candidate drives,
//! `a = h mod n` and `b = (a + 1 + (h >> 32) mod (n − 1)) mod n`; the chunk goes to the one with
//! more free datazones, then fewer live bytes; a full tie goes to `a`. Hashing keeps placement
//! spread and deterministic without any shared state; the second choice keeps drives within a
//! few zones of each other even when chunk sizes vary a lot, which plain consistent hashing
//! does not. [`StoreFront::create_on`] places a chunk explicitly.
//!
//! Operations on one chunk go to its drive; [`StoreFront::sync`], [`StoreFront::gc`] and
//! [`StoreFront::checkpoint`] visit every drive. With `D: Send`,
//! [`StoreFront::sync_parallel`] and [`StoreFront::append_batch`] run the drives' work on one
//! thread per drive (`std::thread::scope`): drives are independent devices, so their flushes
//! overlap.

use crate::{
    ChunkId, ChunkInfo, FsckReport, PreparedRecords, Result, Store, StoreConfig, StoreError, StoreStats,
    StreamType,
};
use serde::ser::{SerializeMap, Serializer};
use serde::Serialize;
use shingled_zoned::ZonedDevice;
use std::collections::BTreeMap;

/// Errors of the front: a drive's store error tagged with the drive, or a routing problem.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum FrontError {
    /// Drive `drive`'s store failed.
    #[error("drive {drive}: {source}")]
    Drive {
        /// Index of the drive (position in the device list given to format/open).
        drive: usize,
        /// The store's error.
        #[source]
        source: StoreError,
    },
    /// No drive holds this chunk.
    #[error("no chunk {0}")]
    NoSuchChunk(ChunkId),
    /// `create` of an id that exists on some drive.
    #[error("chunk {id} already exists on drive {drive}")]
    ChunkExists {
        /// The chunk.
        id: ChunkId,
        /// Drive holding it.
        drive: usize,
    },
    /// The same chunk id is stored on two drives.
    #[error("chunk {id} is on drive {first} and on drive {second}")]
    Duplicate {
        /// The chunk.
        id: ChunkId,
        /// First drive (lower index) holding it.
        first: usize,
        /// Second drive holding it.
        second: usize,
    },
    /// A drive index out of range, or no drive at all.
    #[error("{0}")]
    Drives(String),
}

impl FrontError {
    /// The store error inside, if this is one drive's error.
    pub fn store_error(&self) -> Option<&StoreError> {
        match self {
            FrontError::Drive { source, .. } => Some(source),
            _ => None,
        }
    }

    fn on(drive: usize) -> impl FnOnce(StoreError) -> FrontError {
        move |source| FrontError::Drive { drive, source }
    }
}

/// Result alias of the front.
pub type FrontResult<T> = std::result::Result<T, FrontError>;

/// One drive's counters: the store's own statistics plus what the front counted since open.
/// Serialized as Python's `StoreFront.stats()` entries: the front's counters and a subset of
/// the store's, in one object.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct FrontDriveStats {
    /// User bytes appended through the front since open (what the drive accepted).
    pub bytes_appended: u64,
    /// User bytes read through the front since open.
    pub bytes_read: u64,
    /// Free datazones now.
    pub free_zones: u64,
    /// The drive's [`Store::stats`] (chunks, live bytes, device bytes written, zone census,
    /// GC bytes migrated and zones reclaimed, …).
    #[serde(flatten, serialize_with = "front_store_fields")]
    pub store: StoreStats,
}

/// The store counters a [`FrontDriveStats`] shows.
fn front_store_fields<S: Serializer>(s: &StoreStats, ser: S) -> std::result::Result<S::Ok, S::Error> {
    let mut m = ser.serialize_map(None)?;
    m.serialize_entry("chunks", &s.chunks)?;
    m.serialize_entry("sealed_chunks", &s.sealed_chunks)?;
    m.serialize_entry("live_bytes", &s.live_bytes)?;
    m.serialize_entry("records", &s.records)?;
    m.serialize_entry("datazones", &s.datazones)?;
    m.serialize_entry("device_bytes_written", &s.device_bytes_written)?;
    m.serialize_entry("flushes", &s.flushes)?;
    m.serialize_entry("gc_bytes_migrated", &s.gc_bytes_migrated)?;
    m.serialize_entry("gc_zones_reclaimed", &s.gc_zones_reclaimed)?;
    m.end()
}

impl FrontDriveStats {
    fn add(&mut self, o: &FrontDriveStats) {
        self.bytes_appended += o.bytes_appended;
        self.bytes_read += o.bytes_read;
        self.free_zones += o.free_zones;
        let (s, t) = (&mut self.store, &o.store);
        s.chunks += t.chunks;
        s.sealed_chunks += t.sealed_chunks;
        s.live_bytes += t.live_bytes;
        s.records += t.records;
        s.datazones += t.datazones;
        for (a, b) in s.zones_by_state.iter_mut().zip(t.zones_by_state) {
            *a += b;
        }
        s.appends += t.appends;
        s.device_bytes_written += t.device_bytes_written;
        s.flushes += t.flushes;
        s.checkpoints += t.checkpoints;
        s.journal_records += t.journal_records;
        s.zone_resets += t.zone_resets;
        s.recovered_records += t.recovered_records;
        s.ignored_records += t.ignored_records;
        s.gc_migrations += t.gc_migrations;
        s.gc_bytes_migrated += t.gc_bytes_migrated;
        s.gc_zones_reclaimed += t.gc_zones_reclaimed;
        s.gc_steps += t.gc_steps;
        s.gc_throttled_steps += t.gc_throttled_steps;
        s.gc_emergency_rounds += t.gc_emergency_rounds;
    }
}

/// Per-drive statistics and their sums.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct FrontStats {
    /// One entry per drive, in drive order.
    pub drives: Vec<FrontDriveStats>,
    /// Field-wise sums over the drives.
    pub total: FrontDriveStats,
}

/// A chunk store over several drives. See the module docs.
#[derive(Debug)]
pub struct StoreFront<D: ZonedDevice> {
    stores: Vec<Store<D>>,
    /// Chunk → drive.
    map: BTreeMap<ChunkId, usize>,
    /// Live bytes per drive (sum of its chunks' lengths), kept up to date for placement.
    live: Vec<u64>,
    appended: Vec<u64>,
    read: Vec<u64>,
}

/// FNV-1a over the id's bytes.
fn fnv1a(id: &ChunkId) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in id.0 {
        h ^= b as u64;
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h
}

/// The two candidate drives of `id` among `n` (equal when `n == 1`). See the module docs.
pub fn candidates(id: &ChunkId, n: usize) -> (usize, usize) {
    assert!(n > 0, "no drives");
    let h = fnv1a(id);
    let a = (h % n as u64) as usize;
    if n == 1 {
        return (0, 0);
    }
    let b = (a + 1 + ((h >> 32) % (n as u64 - 1)) as usize) % n;
    (a, b)
}

/// What [`Store::format`] wrote into a device's superzone record (docs/store-format.md).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StoredFormat {
    /// Format version.
    pub version: u32,
    /// Format time, seconds since the Unix epoch.
    pub time: u64,
    /// The configuration given to `format`: metazones, pools, placement, metadata chunk limit
    /// and record size as stored; the run-time-only fields (durability, GC settings) at their
    /// defaults.
    pub config: StoreConfig,
}

/// Reads the superzone record of a formatted device without opening the store, so a tool
/// can reopen a store with the pools and placement it was formatted with ([`Store::open`]
/// takes them from the caller). A device without a valid superzone header is
/// [`StoreError::NotFormatted`]; a payload failing its CRC is [`StoreError::CorruptMeta`].
pub fn read_format<D: ZonedDevice>(dev: &mut D) -> Result<StoredFormat> {
    let info = dev.info();
    if info.nr_zones <= info.nr_conv {
        return Err(StoreError::NotFormatted("the device has no sequential zones".into()));
    }
    let sup = crate::store::read_super_record(dev, &info, info.nr_conv)?;
    let config = StoreConfig {
        nr_metazones: sup.nr_metazones,
        pool_gc: sup.pools[0],
        pool_data: sup.pools[1],
        pool_metadata: sup.pools[2],
        placement: sup.placement,
        metadata_chunk_limit: sup.metadata_chunk_limit,
        max_record: sup.max_record as usize,
        ..StoreConfig::default()
    };
    Ok(StoredFormat { version: sup.version, time: sup.time, config })
}

impl<D: ZonedDevice> StoreFront<D> {
    /// Formats every device as an empty store with `cfg`.
    pub fn format(devs: Vec<D>, cfg: StoreConfig) -> FrontResult<Self> {
        let stores = devs
            .into_iter()
            .enumerate()
            .map(|(i, d)| Store::format(d, cfg.clone()).map_err(FrontError::on(i)))
            .collect::<FrontResult<Vec<_>>>()?;
        Self::from_stores(stores)
    }

    /// Opens (and recovers) every device, then rebuilds the chunk → drive map.
    pub fn open(devs: Vec<D>, cfg: StoreConfig) -> FrontResult<Self> {
        let stores = devs
            .into_iter()
            .enumerate()
            .map(|(i, d)| Store::open(d, cfg.clone()).map_err(FrontError::on(i)))
            .collect::<FrontResult<Vec<_>>>()?;
        Self::from_stores(stores)
    }

    /// Opens every device read-only ([`Store::open_read_only`]: recovery into memory, nothing
    /// written), then rebuilds the chunk → drive map. Reads, listings and fsck work; the calls
    /// that change a drive fail with [`StoreError::ReadOnly`] (as [`FrontError::Drive`]).
    pub fn open_read_only(devs: Vec<D>, cfg: StoreConfig) -> FrontResult<Self> {
        let stores = devs
            .into_iter()
            .enumerate()
            .map(|(i, d)| Store::open_read_only(d, cfg.clone()).map_err(FrontError::on(i)))
            .collect::<FrontResult<Vec<_>>>()?;
        Self::from_stores(stores)
    }

    /// A front over stores already open.
    pub fn from_stores(stores: Vec<Store<D>>) -> FrontResult<Self> {
        if stores.is_empty() {
            return Err(FrontError::Drives("a store front needs at least one drive".into()));
        }
        let n = stores.len();
        let mut map = BTreeMap::new();
        let mut live = vec![0; n];
        for (d, st) in stores.iter().enumerate() {
            for c in st.list() {
                if let Some(first) = map.insert(c.id, d) {
                    return Err(FrontError::Duplicate { id: c.id, first, second: d });
                }
                live[d] += c.len;
            }
        }
        Ok(StoreFront { stores, map, live, appended: vec![0; n], read: vec![0; n] })
    }

    /// Number of drives.
    pub fn drives(&self) -> usize {
        self.stores.len()
    }

    /// Drive `i`'s store.
    pub fn drive(&self, i: usize) -> Option<&Store<D>> {
        self.stores.get(i)
    }

    /// Drive `i`'s store, mutably (for tools and fault injection; creating or deleting chunks
    /// through it behind the front's back makes the map stale until the next open).
    pub fn drive_mut(&mut self, i: usize) -> Option<&mut Store<D>> {
        self.stores.get_mut(i)
    }

    /// The drive holding chunk `id`.
    pub fn drive_of(&self, id: ChunkId) -> Option<usize> {
        self.map.get(&id).copied()
    }

    /// The drive a new chunk `id` would go to now (see the module docs).
    pub fn place(&self, id: ChunkId) -> usize {
        let (a, b) = candidates(&id, self.stores.len());
        let score = |d: usize| (self.stores[d].free_zones(), std::cmp::Reverse(self.live[d]));
        if score(b) > score(a) {
            b
        } else {
            a
        }
    }

    /// Gives the devices back without further I/O (what a crash leaves), in drive order.
    pub fn into_devices(self) -> Vec<D> {
        self.stores.into_iter().map(Store::into_device).collect()
    }

    fn routed(&self, id: ChunkId) -> FrontResult<usize> {
        self.drive_of(id).ok_or(FrontError::NoSuchChunk(id))
    }

    /// Creates chunk `id` on the drive [`StoreFront::place`] picks; returns the drive.
    pub fn create(&mut self, id: ChunkId, stream: StreamType) -> FrontResult<usize> {
        let d = self.place(id);
        self.create_on(d, id, stream)?;
        Ok(d)
    }

    /// Creates chunk `id` on drive `drive`.
    pub fn create_on(&mut self, drive: usize, id: ChunkId, stream: StreamType) -> FrontResult<()> {
        if drive >= self.stores.len() {
            return Err(FrontError::Drives(format!("drive {drive} out of range (0..{})", self.stores.len())));
        }
        if let Some(d) = self.drive_of(id) {
            return Err(FrontError::ChunkExists { id, drive: d });
        }
        self.stores[drive].create(id, stream).map_err(FrontError::on(drive))?;
        self.map.insert(id, drive);
        Ok(())
    }

    /// Appends to chunk `id` on its drive (see [`Store::append`]).
    pub fn append(&mut self, id: ChunkId, data: &[u8]) -> FrontResult<()> {
        let d = self.routed(id)?;
        let (r, grew) = append_counted(&mut self.stores[d], id, data);
        self.live[d] += grew;
        self.appended[d] += grew;
        r.map_err(FrontError::on(d))
    }

    /// Appends the user bytes of `p` to chunk `id` on its drive (see [`Store::append_prepared`]).
    pub fn append_prepared(&mut self, id: ChunkId, p: &mut PreparedRecords) -> FrontResult<()> {
        let d = self.routed(id)?;
        let st = &mut self.stores[d];
        let before = st.chunk(id).map_or(0, |c| c.len);
        let r = st.append_prepared(id, p);
        let grew = st.chunk(id).map_or(before, |c| c.len).saturating_sub(before);
        self.live[d] += grew;
        self.appended[d] += grew;
        r.map_err(FrontError::on(d))
    }

    /// Reads `len` bytes of chunk `id` from `offset` (see [`Store::read`]).
    pub fn read(&mut self, id: ChunkId, offset: u64, len: u64) -> FrontResult<Vec<u8>> {
        let d = self.routed(id)?;
        let v = self.stores[d].read(id, offset, len).map_err(FrontError::on(d))?;
        self.read[d] += v.len() as u64;
        Ok(v)
    }

    /// Seals chunk `id` (see [`Store::seal`]).
    pub fn seal(&mut self, id: ChunkId) -> FrontResult<()> {
        let d = self.routed(id)?;
        self.stores[d].seal(id).map_err(FrontError::on(d))
    }

    /// Deletes chunk `id` (see [`Store::delete`]).
    pub fn delete(&mut self, id: ChunkId) -> FrontResult<()> {
        let d = self.routed(id)?;
        let len = self.stores[d].chunk(id).map_or(0, |c| c.len);
        self.stores[d].delete(id).map_err(FrontError::on(d))?;
        self.map.remove(&id);
        self.live[d] -= len;
        Ok(())
    }

    /// One chunk's description and drive.
    pub fn chunk(&self, id: ChunkId) -> Option<(usize, ChunkInfo)> {
        let d = self.drive_of(id)?;
        self.stores[d].chunk(id).map(|c| (d, c))
    }

    /// Every chunk with its drive, in id order.
    pub fn list(&self) -> Vec<(usize, ChunkInfo)> {
        let mut v: Vec<(usize, ChunkInfo)> = self
            .stores
            .iter()
            .enumerate()
            .flat_map(|(d, s)| s.list().into_iter().map(move |c| (d, c)))
            .collect();
        v.sort_by_key(|(_, c)| c.id);
        v
    }

    /// Syncs every drive in order; stops at the first failure.
    pub fn sync(&mut self) -> FrontResult<()> {
        for (d, s) in self.stores.iter_mut().enumerate() {
            s.sync().map_err(FrontError::on(d))?;
        }
        Ok(())
    }

    /// Checkpoints every drive in order; stops at the first failure.
    pub fn checkpoint(&mut self) -> FrontResult<()> {
        for (d, s) in self.stores.iter_mut().enumerate() {
            s.checkpoint().map_err(FrontError::on(d))?;
        }
        Ok(())
    }

    /// One GC round on every drive ([`Store::gc`]); the zone each reclaimed, in drive order.
    pub fn gc(&mut self) -> FrontResult<Vec<Option<u64>>> {
        let mut out = Vec::with_capacity(self.stores.len());
        for (d, s) in self.stores.iter_mut().enumerate() {
            out.push(s.gc().map_err(FrontError::on(d))?);
        }
        Ok(out)
    }

    /// [`Store::fsck`] of every drive, in drive order.
    pub fn fsck(&mut self) -> FrontResult<Vec<FsckReport>> {
        self.stores.iter_mut().enumerate().map(|(d, s)| s.fsck().map_err(FrontError::on(d))).collect()
    }

    /// Per-drive statistics and totals.
    pub fn stats(&self) -> FrontStats {
        let drives: Vec<FrontDriveStats> = self
            .stores
            .iter()
            .enumerate()
            .map(|(d, s)| FrontDriveStats {
                bytes_appended: self.appended[d],
                bytes_read: self.read[d],
                free_zones: s.free_zones() as u64,
                store: s.stats(),
            })
            .collect();
        let mut total = FrontDriveStats::default();
        for d in &drives {
            total.add(d);
        }
        FrontStats { drives, total }
    }
}

/// Appends and returns how much the chunk grew (a failed append may keep whole records).
fn append_counted<D: ZonedDevice>(st: &mut Store<D>, id: ChunkId, data: &[u8]) -> (Result<()>, u64) {
    let before = st.chunk(id).map_or(0, |c| c.len);
    let r = st.append(id, data);
    let after = st.chunk(id).map_or(before, |c| c.len);
    (r, after.saturating_sub(before))
}

impl<D: ZonedDevice + Send> StoreFront<D> {
    /// Syncs every drive, one thread per drive. On failures, the error of the lowest drive.
    pub fn sync_parallel(&mut self) -> FrontResult<()> {
        let results: Vec<Result<()>> = std::thread::scope(|s| {
            let hs: Vec<_> = self.stores.iter_mut().map(|st| s.spawn(move || st.sync())).collect();
            hs.into_iter().map(|h| h.join().expect("sync thread panicked")).collect()
        });
        for (d, r) in results.into_iter().enumerate() {
            r.map_err(FrontError::on(d))?;
        }
        Ok(())
    }

    /// Appends each `(id, data)`, one thread per drive involved; a drive's appends run in the
    /// order given. Every chunk must exist (checked before anything is written). A drive stops
    /// at its first failure while the others go on; the error returned is that of the lowest
    /// failing drive.
    pub fn append_batch(&mut self, items: &[(ChunkId, &[u8])]) -> FrontResult<()> {
        let n = self.stores.len();
        let mut per: Vec<Vec<(ChunkId, &[u8])>> = vec![Vec::new(); n];
        for &(id, data) in items {
            per[self.routed(id)?].push((id, data));
        }
        let results: Vec<(Result<()>, u64)> = std::thread::scope(|s| {
            let hs: Vec<_> = self
                .stores
                .iter_mut()
                .zip(&per)
                .map(|(st, work)| {
                    s.spawn(move || {
                        let mut grew = 0;
                        for &(id, data) in work {
                            let (r, g) = append_counted(st, id, data);
                            grew += g;
                            if r.is_err() {
                                return (r, grew);
                            }
                        }
                        (Ok(()), grew)
                    })
                })
                .collect();
            hs.into_iter().map(|h| h.join().expect("append thread panicked")).collect()
        });
        let mut first = None;
        for (d, (r, grew)) in results.into_iter().enumerate() {
            self.live[d] += grew;
            self.appended[d] += grew;
            if let (Err(e), None) = (r, &first) {
                first = Some(FrontError::Drive { drive: d, source: e });
            }
        }
        first.map_or(Ok(()), Err)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ZoneState;
    use proptest::prelude::*;
    use shingled_zoned::{Dialect, MemZoned, ZonedConfig};

    /// 16 zones of 256 KiB: superzone, 2 metazones, 13 datazones (StoreConfig::small()).
    fn devs(n: usize) -> Vec<MemZoned> {
        (0..n).map(|_| MemZoned::new(&ZonedConfig::small(16, 256, Dialect::Zbc)).unwrap()).collect()
    }

    fn id(k: u128) -> ChunkId {
        ChunkId::from_u128(k)
    }

    fn pattern(k: u128, n: usize) -> Vec<u8> {
        (0..n).map(|i| (i as u128 * 31 + k * 7) as u8).collect()
    }

    #[test]
    fn candidates_of_small_ids() {
        // FNV-1a of the 24 id bytes, worked out separately (Python) for n = 3.
        let want = [(2, 1), (1, 0), (0, 2), (2, 1), (1, 0), (0, 2), (2, 1), (2, 1), (1, 0), (0, 2)];
        for (k, w) in (1..=10).zip(want) {
            assert_eq!(candidates(&id(k), 3), w, "id {k}");
        }
        assert_eq!(candidates(&id(5), 1), (0, 0));
        for k in 0..200 {
            let (a, b) = candidates(&id(k), 7);
            assert!(a < 7 && b < 7 && a != b);
        }
    }

    /// Three drives, chunk k gets k × 1000 bytes right after its create. By hand, with
    /// score = (free datazones, fewer live bytes) and ties to the first candidate (a chunk's
    /// first append on a drive takes a new zone while the drive's data pool has < 2 zones):
    ///
    /// | k | cands | free (0,1,2) | live (0,1,2)     | → |
    /// |---|-------|--------------|------------------|---|
    /// | 1 | 2,1   | 13,13,13     | 0,0,0            | 2 (tie) |
    /// | 2 | 1,0   | 13,13,12     | 0,0,1000         | 1 (tie) |
    /// | 3 | 0,2   | 13,12,12     | 0,2000,1000      | 0 (free) |
    /// | 4 | 2,1   | 12,12,12     | 3000,2000,1000   | 2 (live) |
    /// | 5 | 1,0   | 12,12,11     | 3000,2000,5000   | 1 (live) |
    /// | 6 | 0,2   | 12,11,11     | 3000,7000,5000   | 0 (free) |
    /// | 7 | 2,1   | 11,11,11     | 9000,7000,5000   | 2 (live) |
    /// | 8 | 2,1   | 11,11,11     | 9000,7000,12000  | 1 (live) |
    /// | 9 | 1,0   | 11,11,11     | 9000,15000,12000 | 0 (live) |
    /// |10 | 0,2   | 11,11,11     | 18000,15000,12000| 2 (live) |
    #[test]
    fn three_drives_ten_chunks_placement_and_stats() {
        let mut f = StoreFront::format(devs(3), StoreConfig::small()).unwrap();
        let want = [2, 1, 0, 2, 1, 0, 2, 1, 0, 2];
        for k in 1..=10u128 {
            let d = f.create(id(k), StreamType::DATA).unwrap();
            assert_eq!(d, want[k as usize - 1], "chunk {k}");
            f.append(id(k), &pattern(k, k as usize * 1000)).unwrap();
        }
        let s = f.stats();
        let per = |g: fn(&FrontDriveStats) -> u64| s.drives.iter().map(g).collect::<Vec<_>>();
        assert_eq!(per(|d| d.store.chunks), [3, 3, 4]);
        assert_eq!(per(|d| d.store.live_bytes), [18_000, 15_000, 22_000]);
        assert_eq!(per(|d| d.bytes_appended), [18_000, 15_000, 22_000]);
        assert_eq!(per(|d| d.free_zones), [11, 11, 11]);
        assert_eq!(per(|d| d.store.records), [3, 3, 4]);
        assert_eq!(per(|d| d.bytes_read), [0, 0, 0]);
        assert_eq!((s.total.store.chunks, s.total.store.live_bytes, s.total.free_zones), (10, 55_000, 33));
        assert_eq!(s.total.store.datazones, 39);
        for k in 1..=10u128 {
            assert_eq!(f.read(id(k), 0, k as u64 * 1000).unwrap(), pattern(k, k as usize * 1000));
        }
        let s = f.stats();
        assert_eq!(s.drives.iter().map(|d| d.bytes_read).collect::<Vec<_>>(), [18_000, 15_000, 22_000]);
        assert_eq!(s.total.bytes_read, 55_000);

        // list: id order, with drives
        let l = f.list();
        assert_eq!(l.iter().map(|(d, _)| *d).collect::<Vec<_>>(), want);
        assert!(l.windows(2).all(|w| w[0].1.id < w[1].1.id));

        // restart: the map comes back from listing the drives, in any device order
        let mut devs = f.into_devices();
        devs.rotate_left(1); // old drive 1 is now drive 0
        let mut f = StoreFront::open(devs, StoreConfig::small()).unwrap();
        for k in 1..=10u128 {
            assert_eq!(f.drive_of(id(k)), Some((want[k as usize - 1] + 2) % 3), "chunk {k}");
            assert_eq!(f.read(id(k), 0, k as u64 * 1000).unwrap(), pattern(k, k as usize * 1000));
        }
        let s = f.stats();
        assert_eq!(s.drives.iter().map(|d| d.store.live_bytes).collect::<Vec<_>>(), [15_000, 22_000, 18_000]);
        assert_eq!(s.total.bytes_appended, 0);

        // delete and errors
        f.delete(id(4)).unwrap();
        assert_eq!(f.stats().drives[1].store.live_bytes, 18_000);
        assert!(matches!(f.read(id(4), 0, 1), Err(FrontError::NoSuchChunk(_))));
        assert!(matches!(f.create(id(5), StreamType::DATA), Err(FrontError::ChunkExists { drive: 0, .. })));
        f.seal(id(5)).unwrap();
        let e = f.append(id(5), b"x").unwrap_err();
        assert!(matches!(e.store_error(), Some(StoreError::Sealed(_))), "{e}");
        assert_eq!(e.to_string(), format!("drive 0: chunk {} is sealed", id(5)));
        assert!(matches!(f.create_on(3, id(99), StreamType::DATA), Err(FrontError::Drives(_))));
        let reps = f.fsck().unwrap();
        assert_eq!(reps.len(), 3);
        assert!(reps.iter().all(|r| r.is_clean()), "{reps:?}");
        assert_eq!(reps.iter().map(|r| r.chunks_checked).sum::<u64>(), 9);
    }

    /// GC statistics per drive, by hand: on drive 0 (one data zone at a time, 256 KiB zones,
    /// datazones from device zone 3) A (10 000 B) and B (200 000 B) share zone 3 and C
    /// (100 000 B) fills it and spills into zone 4. Deleting B and C leaves zone 3 full with
    /// only A live: one GC round migrates A's 10 000 bytes and reclaims zone 3. Drive 1 has
    /// nothing dead: nothing to collect.
    #[test]
    fn gc_bytes_per_drive() {
        let cfg = StoreConfig { pool_data: 1, gc_free_zones: 0, ..StoreConfig::small() };
        let mut f = StoreFront::format(devs(2), cfg).unwrap();
        for (k, n) in [(1, 10_000), (2, 200_000), (3, 100_000)] {
            f.create_on(0, id(k), StreamType::DATA).unwrap();
            f.append(id(k), &pattern(k, n)).unwrap();
        }
        f.create_on(1, id(4), StreamType::DATA).unwrap();
        f.append(id(4), &pattern(4, 50_000)).unwrap();
        f.delete(id(2)).unwrap();
        f.delete(id(3)).unwrap();
        assert_eq!(f.stats().drives[0].store.zones_by_state[ZoneState::Full as usize], 1);
        assert_eq!(f.gc().unwrap(), [Some(3), None]);
        let s = f.stats();
        let per = |g: fn(&FrontDriveStats) -> u64| s.drives.iter().map(g).collect::<Vec<_>>();
        assert_eq!(per(|d| d.store.gc_bytes_migrated), [10_000, 0]);
        assert_eq!(per(|d| d.store.gc_zones_reclaimed), [1, 0]);
        assert_eq!((s.total.store.gc_bytes_migrated, s.total.store.gc_zones_reclaimed), (10_000, 1));
        assert_eq!(f.read(id(1), 0, 10_000).unwrap(), pattern(1, 10_000));
        assert_eq!(f.read(id(4), 0, 50_000).unwrap(), pattern(4, 50_000));
    }

    #[test]
    fn read_format_returns_what_format_stored() {
        let cfg = StoreConfig {
            nr_metazones: 3,
            pool_gc: 1,
            pool_data: 3,
            pool_metadata: 2,
            placement: crate::Placement::Guided {
                separate_streams: false,
                chunk_limit: true,
                round_robin: false,
            },
            metadata_chunk_limit: 1 << 20,
            max_record: 8192,
            durability: crate::Durability::Batched,
            ..StoreConfig::default()
        };
        let st = Store::format(devs(1).remove(0), cfg.clone()).unwrap();
        let mut dev = st.into_device();
        let f = read_format(&mut dev).unwrap();
        assert_eq!(f.version, crate::store::FORMAT_VERSION);
        assert!(f.time > 1_600_000_000);
        assert_eq!(f.config, StoreConfig { durability: crate::Durability::EveryAppend, ..cfg });
        assert!(matches!(read_format(&mut devs(1).remove(0)), Err(StoreError::NotFormatted(_))));
    }

    #[test]
    fn same_id_on_two_drives_is_refused_at_open() {
        let mut a = Store::format(devs(1).remove(0), StoreConfig::small()).unwrap();
        let mut b = Store::format(devs(1).remove(0), StoreConfig::small()).unwrap();
        a.create(id(1), StreamType::DATA).unwrap();
        b.create(id(1), StreamType::DATA).unwrap();
        let e = StoreFront::open(vec![a.into_device(), b.into_device()], StoreConfig::small()).unwrap_err();
        assert!(matches!(e, FrontError::Duplicate { first: 0, second: 1, .. }), "{e}");
        assert!(matches!(
            StoreFront::<MemZoned>::open(vec![], StoreConfig::small()),
            Err(FrontError::Drives(_))
        ));
    }

    #[test]
    fn read_only_front_reads_and_refuses_changes_without_writing() {
        let mut f = StoreFront::format(devs(2), StoreConfig::small()).unwrap();
        for k in 0..4u128 {
            f.create(id(k), StreamType::DATA).unwrap();
            f.append(id(k), &pattern(k, 5000)).unwrap();
        }
        let devices = f.into_devices();
        let before = format!("{devices:?}");
        let mut ro = StoreFront::open_read_only(devices, StoreConfig::small()).unwrap();
        assert_eq!(ro.list().len(), 4);
        assert_eq!(ro.read(id(2), 0, 5000).unwrap(), pattern(2, 5000));
        assert!(ro.fsck().unwrap().iter().all(|r| r.is_clean()));
        let e = ro.create(id(9), StreamType::DATA).unwrap_err();
        assert!(matches!(e, FrontError::Drive { source: StoreError::ReadOnly, .. }), "{e}");
        assert!(matches!(
            ro.append(id(1), b"x"),
            Err(FrontError::Drive { source: StoreError::ReadOnly, .. })
        ));
        assert!(matches!(ro.checkpoint(), Err(FrontError::Drive { source: StoreError::ReadOnly, .. })));
        assert_eq!(format!("{:?}", ro.into_devices()), before);
    }

    #[test]
    fn open_error_names_the_drive() {
        let good = devs(1).remove(0);
        let st = Store::format(good, StoreConfig::small()).unwrap();
        let unformatted = devs(1).remove(0);
        let e = StoreFront::open(vec![st.into_device(), unformatted], StoreConfig::small()).unwrap_err();
        assert!(matches!(e, FrontError::Drive { drive: 1, source: StoreError::NotFormatted(_) }), "{e}");
    }

    #[test]
    fn batch_appends_on_threads_match_sequential_appends() {
        let cfg = StoreConfig { durability: crate::Durability::Batched, ..StoreConfig::small() };
        let mut par = StoreFront::format(devs(4), cfg.clone()).unwrap();
        let mut seq = StoreFront::format(devs(4), cfg.clone()).unwrap();
        for k in 0..12u128 {
            assert_eq!(
                par.create(id(k), StreamType(k as u8 % 3)).unwrap(),
                seq.create(id(k), StreamType(k as u8 % 3)).unwrap()
            );
        }
        let data: Vec<(ChunkId, Vec<u8>)> =
            (0..60u128).map(|i| (id(i % 12), pattern(i, 100 + (i as usize * 977) % 9000))).collect();
        let items: Vec<(ChunkId, &[u8])> = data.iter().map(|(i, d)| (*i, d.as_slice())).collect();
        par.append_batch(&items).unwrap();
        par.sync_parallel().unwrap();
        for (i, d) in &items {
            seq.append(*i, d).unwrap();
        }
        seq.sync().unwrap();
        assert_eq!(par.list(), seq.list());
        let (ps, ss) = (par.stats(), seq.stats());
        assert_eq!(
            ps.drives.iter().map(|d| d.bytes_appended).collect::<Vec<_>>(),
            ss.drives.iter().map(|d| d.bytes_appended).collect::<Vec<_>>()
        );
        let mut par = StoreFront::open(par.into_devices(), cfg).unwrap();
        for k in 0..12u128 {
            let want: Vec<u8> =
                data.iter().filter(|(i, _)| *i == id(k)).flat_map(|(_, d)| d.clone()).collect();
            assert_eq!(par.read(id(k), 0, want.len() as u64).unwrap(), want, "chunk {k}");
        }
        // an unknown chunk is refused before anything is written
        let before = par.stats().total.store.live_bytes;
        assert!(matches!(
            par.append_batch(&[(id(0), b"abc"), (id(77), b"x")]),
            Err(FrontError::NoSuchChunk(_))
        ));
        assert_eq!(par.stats().total.store.live_bytes, before);
    }

    #[derive(Clone, Debug)]
    enum Op {
        Create(u8, u8),
        Append(u8, usize),
        Seal(u8),
        Delete(u8),
        Read(u8, u16, u16),
        /// Appends to up to three chunks at once on per-drive threads.
        Batch(Vec<(u8, usize)>),
        Sync,
        Gc,
        Restart,
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            3 => (0u8..10, 0u8..3).prop_map(|(i, s)| Op::Create(i, s)),
            5 => (0u8..10, 1usize..6000).prop_map(|(i, n)| Op::Append(i, n)),
            1 => (0u8..10).prop_map(Op::Seal),
            1 => (0u8..10).prop_map(Op::Delete),
            3 => (0u8..10, any::<u16>(), any::<u16>()).prop_map(|(i, a, b)| Op::Read(i, a, b)),
            2 => proptest::collection::vec((0u8..10, 1usize..3000), 1..4).prop_map(Op::Batch),
            1 => Just(Op::Sync),
            1 => Just(Op::Gc),
            1 => Just(Op::Restart),
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

        /// Random operations over 1–4 drives against a map of chunks (data, sealed, drive),
        /// with GC rounds, threaded batches and restarts that rebuild the chunk → drive map:
        /// every answer, read and placement agrees.
        #[test]
        fn front_matches_a_map_model(n in 1usize..5, ops in proptest::collection::vec(op(), 1..60)) {
            let cfg = StoreConfig::small();
            let mut f = StoreFront::format(devs(n), cfg.clone()).unwrap();
            let mut m: BTreeMap<ChunkId, (Vec<u8>, bool, usize)> = BTreeMap::new();
            for (step, o) in ops.into_iter().enumerate() {
                match o {
                    Op::Create(i, s) => {
                        let c = id(i as u128);
                        match (f.create(c, StreamType(s)), m.get(&c)) {
                            (Ok(d), None) => { m.insert(c, (Vec::new(), false, d)); }
                            (Err(FrontError::ChunkExists { drive, .. }), Some(x)) => prop_assert_eq!(drive, x.2),
                            (r, x) => prop_assert!(false, "create {:?}: {:?} vs model {:?}", c, r, x),
                        }
                    }
                    Op::Append(i, n) => {
                        let c = id(i as u128);
                        let data = pattern(step as u128, n);
                        match (f.append(c, &data), m.get_mut(&c)) {
                            (Ok(()), Some(x)) if !x.1 => x.0.extend_from_slice(&data),
                            (Err(FrontError::NoSuchChunk(_)), None) => {}
                            (Err(e), Some(x)) if x.1 => prop_assert!(matches!(e.store_error(), Some(StoreError::Sealed(_)))),
                            (r, x) => prop_assert!(false, "append {:?}: {:?} vs model {:?}", c, r, x.map(|x| x.1)),
                        }
                    }
                    Op::Seal(i) => {
                        let c = id(i as u128);
                        match (f.seal(c), m.get_mut(&c)) {
                            (Ok(()), Some(x)) => x.1 = true,
                            (Err(FrontError::NoSuchChunk(_)), None) => {}
                            (r, _) => prop_assert!(false, "seal {:?}: {:?}", c, r),
                        }
                    }
                    Op::Delete(i) => {
                        let c = id(i as u128);
                        match (f.delete(c), m.remove(&c)) {
                            (Ok(()), Some(_)) | (Err(FrontError::NoSuchChunk(_)), None) => {}
                            (r, _) => prop_assert!(false, "delete {:?}: {:?}", c, r),
                        }
                    }
                    Op::Read(i, a, b) => {
                        let c = id(i as u128);
                        match m.get(&c) {
                            None => prop_assert!(matches!(f.read(c, 0, 0), Err(FrontError::NoSuchChunk(_)))),
                            Some(x) => {
                                let len = x.0.len() as u64;
                                let off = if len == 0 { 0 } else { a as u64 % (len + 1) };
                                let n = (b as u64).min(len - off);
                                prop_assert_eq!(f.read(c, off, n).unwrap(), x.0[off as usize..(off + n) as usize].to_vec());
                            }
                        }
                    }
                    Op::Batch(v) => {
                        let data: Vec<(ChunkId, Vec<u8>)> = v
                            .iter()
                            .enumerate()
                            .map(|(j, &(i, len))| (id(i as u128), pattern((step * 4 + j) as u128, len)))
                            .collect();
                        let items: Vec<(ChunkId, &[u8])> = data.iter().map(|(c, d)| (*c, d.as_slice())).collect();
                        let all_open = data.iter().all(|(c, _)| m.get(c).is_some_and(|x| !x.1));
                        let r = f.append_batch(&items);
                        if all_open {
                            prop_assert!(r.is_ok(), "{:?}", r);
                            for (c, d) in &data {
                                m.get_mut(c).unwrap().0.extend_from_slice(d);
                            }
                        } else if data.iter().any(|(c, _)| !m.contains_key(c)) {
                            prop_assert!(matches!(r, Err(FrontError::NoSuchChunk(_))), "{:?}", r);
                        } else {
                            // Some chunk is sealed: each drive stops at its first failure.
                            prop_assert!(r.is_err());
                            let mut stopped = vec![false; n];
                            for (c, d) in &data {
                                let x = m.get_mut(c).unwrap();
                                let drive = x.2;
                                if stopped[drive] {
                                    continue;
                                }
                                if x.1 {
                                    stopped[drive] = true;
                                } else {
                                    x.0.extend_from_slice(d);
                                }
                            }
                        }
                    }
                    Op::Sync => f.sync_parallel().unwrap(),
                    Op::Gc => {
                        f.gc().unwrap();
                    }
                    Op::Restart => f = StoreFront::open(f.into_devices(), cfg.clone()).unwrap(),
                }
                let l = f.list();
                prop_assert_eq!(l.len(), m.len());
                for ((d, c), (mid, (data, sealed, md))) in l.iter().zip(&m) {
                    prop_assert_eq!((c.id, c.len, c.sealed, *d), (*mid, data.len() as u64, *sealed, *md));
                }
                let s = f.stats();
                for (d, ds) in s.drives.iter().enumerate() {
                    let live: u64 = m.values().filter(|x| x.2 == d).map(|x| x.0.len() as u64).sum();
                    prop_assert_eq!(ds.store.live_bytes, live);
                    prop_assert_eq!(f.live[d], live);
                }
            }
        }
    }
}
