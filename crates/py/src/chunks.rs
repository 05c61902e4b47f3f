//! [`Chunks`]: the chunk API shared by a store (`shingled_store::Store`) and a front over
//! several (`shingled_store::StoreFront`), on any zoned device, with errors as Python
//! exceptions and reports as JSON: what `store::ChunkApi` calls, one implementation per Rust
//! type instead of one per Python class and device type.

use crate::errors::{front_err, store_err};
use pyo3::prelude::*;
use serde_json::Value;
use shingled_store::{ChunkId, ChunkInfo, Store, StoreConfig, StoreFront, StreamType};
use shingled_zoned::ZonedDevice;

/// What a GC round reclaimed: the zone of a store (`None`: nothing), or of every drive of a
/// front. Converts to `Optional[int]` or `List[Optional[int]]`.
#[derive(IntoPyObject)]
pub(crate) enum Reclaimed {
    One(Option<u64>),
    Each(Vec<Option<u64>>),
}

/// The chunk API of a store or a front, type-erased over its devices (`Box<dyn Chunks>`).
/// Chunks of a front carry their drive; those of a store have none.
pub(crate) trait Chunks: Send {
    /// Creates chunk `id`; the drive it went to (a front) or `None` (a store).
    fn create(&mut self, id: ChunkId, stream: StreamType) -> PyResult<Option<usize>>;
    fn append(&mut self, id: ChunkId, data: &[u8]) -> PyResult<()>;
    fn read(&mut self, id: ChunkId, offset: u64, len: u64) -> PyResult<Vec<u8>>;
    fn seal(&mut self, id: ChunkId) -> PyResult<()>;
    fn delete(&mut self, id: ChunkId) -> PyResult<()>;
    /// Makes every append durable (a front: one thread per drive).
    fn sync(&mut self) -> PyResult<()>;
    fn checkpoint(&mut self) -> PyResult<()>;
    /// What `close` writes: sync, then checkpoint.
    fn sync_and_checkpoint(&mut self) -> PyResult<()>;
    fn gc(&mut self) -> PyResult<Reclaimed>;
    /// Chunk `id` with its drive, or None.
    fn chunk(&self, id: ChunkId) -> Option<(Option<usize>, ChunkInfo)>;
    /// The drive holding chunk `id` (0 for a store), or None.
    fn drive_of(&self, id: ChunkId) -> Option<usize>;
    /// Every chunk with its drive, in id order.
    fn list(&self) -> Vec<(Option<usize>, ChunkInfo)>;
    /// Statistics as JSON text.
    fn stats(&self) -> String;
    /// The consistency check as JSON text (a front: a list, one report per drive).
    fn fsck(&mut self) -> PyResult<String>;
    /// Drops the store without syncing (what a crash leaves) and recovers it from its devices.
    fn reopen(self: Box<Self>, cfg: StoreConfig, read_only: bool) -> PyResult<Box<dyn Chunks>>;
}

impl<D: ZonedDevice + Send + 'static> Chunks for Store<D> {
    fn create(&mut self, id: ChunkId, stream: StreamType) -> PyResult<Option<usize>> {
        Store::create(self, id, stream).map(|()| None).map_err(store_err)
    }
    fn append(&mut self, id: ChunkId, data: &[u8]) -> PyResult<()> {
        Store::append(self, id, data).map_err(store_err)
    }
    fn read(&mut self, id: ChunkId, offset: u64, len: u64) -> PyResult<Vec<u8>> {
        Store::read(self, id, offset, len).map_err(store_err)
    }
    fn seal(&mut self, id: ChunkId) -> PyResult<()> {
        Store::seal(self, id).map_err(store_err)
    }
    fn delete(&mut self, id: ChunkId) -> PyResult<()> {
        Store::delete(self, id).map_err(store_err)
    }
    fn sync(&mut self) -> PyResult<()> {
        Store::sync(self).map_err(store_err)
    }
    fn checkpoint(&mut self) -> PyResult<()> {
        Store::checkpoint(self).map_err(store_err)
    }
    fn sync_and_checkpoint(&mut self) -> PyResult<()> {
        Store::sync(self).and_then(|()| Store::checkpoint(self)).map_err(store_err)
    }
    fn gc(&mut self) -> PyResult<Reclaimed> {
        Store::gc(self).map(Reclaimed::One).map_err(store_err)
    }
    fn chunk(&self, id: ChunkId) -> Option<(Option<usize>, ChunkInfo)> {
        Store::chunk(self, id).map(|c| (None, c))
    }
    fn drive_of(&self, id: ChunkId) -> Option<usize> {
        Store::chunk(self, id).map(|_| 0)
    }
    fn list(&self) -> Vec<(Option<usize>, ChunkInfo)> {
        Store::list(self).into_iter().map(|c| (None, c)).collect()
    }
    fn stats(&self) -> String {
        stats_json(self).to_string()
    }
    fn fsck(&mut self) -> PyResult<String> {
        Store::fsck(self).map(|r| to_json(&r).to_string()).map_err(store_err)
    }
    fn reopen(self: Box<Self>, cfg: StoreConfig, read_only: bool) -> PyResult<Box<dyn Chunks>> {
        let dev = self.into_device();
        let st = if read_only { Store::open_read_only(dev, cfg) } else { Store::open(dev, cfg) };
        Ok(Box::new(st.map_err(store_err)?))
    }
}

impl<D: ZonedDevice + Send + 'static> Chunks for StoreFront<D> {
    fn create(&mut self, id: ChunkId, stream: StreamType) -> PyResult<Option<usize>> {
        StoreFront::create(self, id, stream).map(Some).map_err(front_err)
    }
    fn append(&mut self, id: ChunkId, data: &[u8]) -> PyResult<()> {
        StoreFront::append(self, id, data).map_err(front_err)
    }
    fn read(&mut self, id: ChunkId, offset: u64, len: u64) -> PyResult<Vec<u8>> {
        StoreFront::read(self, id, offset, len).map_err(front_err)
    }
    fn seal(&mut self, id: ChunkId) -> PyResult<()> {
        StoreFront::seal(self, id).map_err(front_err)
    }
    fn delete(&mut self, id: ChunkId) -> PyResult<()> {
        StoreFront::delete(self, id).map_err(front_err)
    }
    fn sync(&mut self) -> PyResult<()> {
        self.sync_parallel().map_err(front_err)
    }
    fn checkpoint(&mut self) -> PyResult<()> {
        StoreFront::checkpoint(self).map_err(front_err)
    }
    fn sync_and_checkpoint(&mut self) -> PyResult<()> {
        StoreFront::sync(self).and_then(|()| StoreFront::checkpoint(self)).map_err(front_err)
    }
    fn gc(&mut self) -> PyResult<Reclaimed> {
        StoreFront::gc(self).map(Reclaimed::Each).map_err(front_err)
    }
    fn chunk(&self, id: ChunkId) -> Option<(Option<usize>, ChunkInfo)> {
        StoreFront::chunk(self, id).map(|(d, c)| (Some(d), c))
    }
    fn drive_of(&self, id: ChunkId) -> Option<usize> {
        StoreFront::drive_of(self, id)
    }
    fn list(&self) -> Vec<(Option<usize>, ChunkInfo)> {
        StoreFront::list(self).into_iter().map(|(d, c)| (Some(d), c)).collect()
    }
    fn stats(&self) -> String {
        to_json(&StoreFront::stats(self)).to_string()
    }
    fn fsck(&mut self) -> PyResult<String> {
        let reps = StoreFront::fsck(self).map_err(front_err)?;
        Ok(Value::from(reps.iter().map(to_json).collect::<Vec<_>>()).to_string())
    }
    fn reopen(self: Box<Self>, cfg: StoreConfig, read_only: bool) -> PyResult<Box<dyn Chunks>> {
        let devs = self.into_devices();
        let f = if read_only { StoreFront::open_read_only(devs, cfg) } else { StoreFront::open(devs, cfg) };
        Ok(Box::new(f.map_err(front_err)?))
    }
}

/// A chunk as a JSON object (`drive` too when it has one).
pub(crate) fn info_json(drive: Option<usize>, c: &ChunkInfo) -> Value {
    let mut j = to_json(c);
    if let Some(d) = drive {
        j["drive"] = d.into();
    }
    j
}

fn stats_json<D: ZonedDevice>(st: &Store<D>) -> Value {
    let mut j = to_json(&st.stats());
    j["free_zones"] = st.free_zones().into();
    j["memory"] = to_json(&st.memory());
    j
}

/// A report as JSON (its serde form; keys sorted, as `json!` gives them).
fn to_json<T: serde::Serialize>(v: &T) -> Value {
    serde_json::to_value(v).expect("reports serialize")
}
