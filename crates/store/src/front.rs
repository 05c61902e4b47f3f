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

mod error;
mod stats;
#[cfg(test)]
mod tests;
mod threads;

pub use error::{FrontError, FrontResult};
pub use stats::{FrontDriveStats, FrontStats};

use crate::{
    ChunkId, ChunkInfo, ChunkPiece, FsckReport, PreparedRecords, Result, Store, StoreConfig, StreamType,
};
use shingled_zoned::ZonedDevice;
use std::collections::BTreeMap;

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
    /// that change a drive fail with [`StoreError::ReadOnly`](crate::StoreError::ReadOnly) (as
    /// [`FrontError::Drive`]).
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

    /// Reads the records holding `len` bytes of chunk `id` from `offset` into `piece`,
    /// unverified (see [`Store::read_raw`]; [`ChunkPiece::verify`] before use).
    pub fn read_raw(
        &mut self,
        id: ChunkId,
        offset: u64,
        len: u64,
        piece: &mut ChunkPiece,
    ) -> FrontResult<()> {
        let d = self.routed(id)?;
        self.stores[d].read_raw(id, offset, len, piece).map_err(FrontError::on(d))?;
        self.read[d] += piece.len();
        Ok(())
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
