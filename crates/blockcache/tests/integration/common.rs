//! Shared test helpers: block patterns, a device that records unflushed writes and can be cut
//! at any operation, and formatting shortcuts.

use rand::{RngCore, SeedableRng};
use shingled_blockcache::{CacheOptions, CacheSetup, CachedDevice, Mode};
use shingled_stl::{BlockDevice, MemBlock, Result, StlError, BLOCK};
use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;

/// The content of block `b` written by write number `id` (id 0: zeros, never written).
pub fn pattern(id: u64, b: u64) -> Vec<u8> {
    if id == 0 {
        return vec![0u8; BLOCK];
    }
    let mut v = vec![(id.wrapping_mul(31).wrapping_add(b) % 251) as u8; BLOCK];
    v[0..8].copy_from_slice(&id.to_le_bytes());
    v[8..16].copy_from_slice(&b.to_le_bytes());
    v
}

/// The write id of a block read back, checking the whole block (panics on torn or foreign
/// data, naming `ctx`).
pub fn decode(data: &[u8], b: u64, ctx: &str) -> u64 {
    let id = u64::from_le_bytes(data[0..8].try_into().unwrap());
    assert!(
        data == pattern(id, b).as_slice(),
        "{ctx}: block {b} holds neither zeros nor a whole write (id field {id})"
    );
    id
}

/// Contiguous blocks `lba..lba+n`, each with its own id from `ids`.
pub fn data_of(lba: u64, ids: &[u64]) -> Vec<u8> {
    ids.iter().enumerate().flat_map(|(i, &id)| pattern(id, lba + i as u64)).collect()
}

/// Reads block `b` of `dev`.
pub fn read_block(dev: &mut dyn BlockDevice, b: u64) -> Vec<u8> {
    let mut v = vec![0u8; BLOCK];
    dev.read(b, &mut v).unwrap();
    v
}

/// The id held by block `b` of `dev`.
pub fn read_id(dev: &mut dyn BlockDevice, b: u64, ctx: &str) -> u64 {
    decode(&read_block(dev, b), b, ctx)
}

/// Options for a small cache: `capacity` blocks for the policy, `slots` physical slots.
pub fn options(mode: Mode, policy: &str, capacity: u32, slots: u32) -> CacheOptions {
    let mut setup = CacheSetup::new(mode, policy).unwrap();
    // SMR-aware policies get 4-block bands and an 8-block persistent buffer.
    setup.bands = Some(shingled_core::BandConfig::Fixed { size: shingled_core::ByteSize(4 * 4096) });
    setup.pb_blocks = Some(8);
    CacheOptions { setup, slots: Some(slots), capacity: Some(capacity), reserve: None }
}

/// The policy specs the model-based tests run: plain names plus SMR-aware policies with zone and
/// band sizes that act on small devices.
pub const POLICIES: &[&str] = &[
    "lru",
    "fifo",
    "arc",
    "s3-fifo",
    "lru-band",
    "most",
    "pore:scheme=bl,zone_size=16KiB",
    "pore:scheme=cf,zone_size=16KiB",
    "sac:band_size=16KiB",
    "most-cdc:band_size=16KiB",
];

/// Blocks the cache device needs for `slots` slots.
pub fn cache_blocks_for(slots: u32) -> u64 {
    1 + (slots as u64).div_ceil(127) + slots as u64
}

/// A cached device over two `MemBlock`s.
pub fn mem_cache(opts: &CacheOptions, backing_blocks: u64) -> CachedDevice<MemBlock, MemBlock> {
    let slots = opts.slots.unwrap();
    CachedDevice::format(MemBlock::new(cache_blocks_for(slots)), MemBlock::new(backing_blocks), opts).unwrap()
}

// ------------------------------------------------------------------ the cut device

/// One device's blocks: what is durable, what reads see, and every version written since the
/// last flush (`None`: discarded, zeros).
#[derive(Clone, Default)]
pub struct Store {
    durable: HashMap<u64, Rc<[u8]>>,
    current: HashMap<u64, Rc<[u8]>>,
    versions: HashMap<u64, Vec<Option<Rc<[u8]>>>>,
}

/// How a power cut treats the writes since the last flush, block by block (4 KiB granularity:
/// a multi-block write can be torn between blocks).
#[derive(Clone, Copy, Debug)]
pub enum Cut {
    /// None survives.
    DropAll,
    /// All survive (the newest version of each block).
    KeepAll,
    /// Each block independently: its durable content or any version written since (not
    /// necessarily the newest: the device may reorder).
    Random(u64),
}

impl Store {
    /// What survives a power cut.
    pub fn cut(&self, how: Cut) -> Store {
        let mut rng = rand_pcg::Pcg64Mcg::seed_from_u64(match how {
            Cut::Random(s) => s,
            _ => 0,
        });
        let mut next = || rng.next_u64();
        let mut durable = self.durable.clone();
        let mut keys: Vec<u64> = self.versions.keys().copied().collect();
        keys.sort_unstable();
        for b in keys {
            let vs = &self.versions[&b];
            let pick = match how {
                Cut::DropAll => 0,
                Cut::KeepAll => vs.len(),
                Cut::Random(_) => (next() % (vs.len() as u64 + 1)) as usize,
            };
            if pick > 0 {
                match &vs[pick - 1] {
                    Some(d) => durable.insert(b, d.clone()),
                    None => durable.remove(&b),
                };
            }
        }
        Store { current: durable.clone(), durable, versions: HashMap::new() }
    }

    /// Writes since the last flush.
    pub fn unflushed(&self) -> usize {
        self.versions.values().map(Vec::len).sum()
    }
}

/// Called at every operation of either device with both stores (a write already applied, a
/// flush not yet) and the number of operations so far.
pub type Hook = Rc<dyn Fn(&[Store; 2], u64)>;

/// Two devices (0: cache, 1: backing) that share a power supply.
#[derive(Default)]
pub struct World {
    pub stores: [Store; 2],
    pub ops: u64,
    pub hook: Option<Hook>,
    /// After this many operations every operation fails (a dead device).
    pub fail_after: Option<u64>,
}

/// A block device of a [`World`].
pub struct CutDev {
    world: Rc<RefCell<World>>,
    id: usize,
    capacity: u64,
}

impl CutDev {
    /// The cache (0) and backing (1) devices of a new world holding `stores`.
    pub fn pair(stores: [Store; 2], caps: [u64; 2]) -> (CutDev, CutDev, Rc<RefCell<World>>) {
        let world = Rc::new(RefCell::new(World { stores, ..Default::default() }));
        (
            CutDev { world: world.clone(), id: 0, capacity: caps[0] },
            CutDev { world: world.clone(), id: 1, capacity: caps[1] },
            world,
        )
    }

    fn op(&mut self, apply_first: bool, f: impl FnOnce(&mut Store)) -> Result<()> {
        let hook = {
            let mut w = self.world.borrow_mut();
            if w.fail_after.is_some_and(|n| w.ops >= n) {
                return Err(StlError::Failed { device: self.name(), detail: "power cut".into() });
            }
            w.ops += 1;
            if apply_first {
                f(&mut w.stores[self.id]);
                w.hook.clone().map(|h| (h, w.stores.clone(), w.ops))
            } else {
                let snap = w.hook.clone().map(|h| (h, w.stores.clone(), w.ops));
                f(&mut w.stores[self.id]);
                snap
            }
        };
        if let Some((h, stores, ops)) = hook {
            h(&stores, ops);
        }
        Ok(())
    }
}

impl BlockDevice for CutDev {
    fn capacity_blocks(&self) -> u64 {
        self.capacity
    }

    fn read(&mut self, lba: u64, buf: &mut [u8]) -> Result<()> {
        let n = shingled_stl::check_request("cut", "read", lba, buf.len(), self.capacity)?;
        let w = self.world.borrow();
        if w.fail_after.is_some_and(|f| w.ops >= f) {
            return Err(StlError::Failed { device: self.name(), detail: "power cut".into() });
        }
        for i in 0..n as usize {
            let dst = &mut buf[i * BLOCK..(i + 1) * BLOCK];
            match w.stores[self.id].current.get(&(lba + i as u64)) {
                Some(d) => dst.copy_from_slice(d),
                None => dst.fill(0),
            }
        }
        Ok(())
    }

    fn write(&mut self, lba: u64, data: &[u8]) -> Result<()> {
        let n = shingled_stl::check_request("cut", "write", lba, data.len(), self.capacity)?;
        self.op(true, |s| {
            for i in 0..n as usize {
                let d: Rc<[u8]> = data[i * BLOCK..(i + 1) * BLOCK].into();
                let b = lba + i as u64;
                s.current.insert(b, d.clone());
                s.versions.entry(b).or_default().push(Some(d));
            }
        })
    }

    fn flush(&mut self) -> Result<()> {
        self.op(false, |s| {
            s.durable = s.current.clone();
            s.versions.clear();
        })
    }

    fn discard(&mut self, lba: u64, blocks: u64) -> Result<()> {
        if lba + blocks > self.capacity {
            return Err(StlError::Range { what: "cut: discard".into(), detail: "past the end".into() });
        }
        self.op(true, |s| {
            for b in lba..lba + blocks {
                if s.current.remove(&b).is_some() || s.durable.contains_key(&b) {
                    s.versions.entry(b).or_default().push(None);
                }
            }
        })
    }

    fn name(&self) -> String {
        format!("cut{}", self.id)
    }
}

/// Reads of a device below `limit` only (the metadata area of a cache device whose data slots
/// are gone).
pub struct Limited<D> {
    pub inner: D,
    pub limit: u64,
}

impl<D: BlockDevice> BlockDevice for Limited<D> {
    fn capacity_blocks(&self) -> u64 {
        self.inner.capacity_blocks()
    }
    fn read(&mut self, lba: u64, buf: &mut [u8]) -> Result<()> {
        if lba + (buf.len() / BLOCK) as u64 > self.limit {
            return Err(StlError::Failed {
                device: "limited".into(),
                detail: format!("block {lba} is unreadable"),
            });
        }
        self.inner.read(lba, buf)
    }
    fn write(&mut self, _: u64, _: &[u8]) -> Result<()> {
        Err(StlError::Failed { device: "limited".into(), detail: "read-only".into() })
    }
    fn flush(&mut self) -> Result<()> {
        Ok(())
    }
    fn discard(&mut self, _: u64, _: u64) -> Result<()> {
        Err(StlError::Failed { device: "limited".into(), detail: "read-only".into() })
    }
    fn name(&self) -> String {
        "limited".into()
    }
}

/// Every online policy: the data path refuses the offline ones (they need the trace's future),
/// which `replay::offline_policies_are_refused` checks.
pub fn online_policies() -> Vec<&'static str> {
    shingled_cache::PolicyConfig::NAMES.iter().copied().filter(|n| !shingled_sim::is_offline(n)).collect()
}
