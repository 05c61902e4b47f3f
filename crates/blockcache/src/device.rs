//! The cached block device: the controller's decisions executed with real bytes, and the
//! slot records that make them survive a power cut (see the crate documentation for the design
//! and the ordering argument).

mod data_io;
pub(crate) mod open;
mod slots;

use crate::layout::{Layout, State};
use crate::seq::SeqDetector;
use crate::{CacheSetup, Stats};
use data_io::DataIo;
use shingled_cache::Cache;
use shingled_core::BlockNo;
use shingled_sim::controller::Controller;
use shingled_sim::Mode;
use shingled_stl::{check_request, BlockDevice, Result, StlError, BLOCK};
use slots::Core;

/// Longest run of contiguous backing writes issued as one write.
const MAX_RUN_BLOCKS: usize = 256;
/// Record blocks read or written at once.
const RECORD_CHUNK: u64 = 64;

/// A write-back block cache over a cache device `C` and a backing device `B`, itself a
/// [`BlockDevice`] of the backing device's capacity.
///
/// Every block of a request goes through [`Controller::block`], the simulator's per-block
/// decisions, with the policy named at format; an [`Io`](shingled_sim::controller::Io)
/// implementation moves the bytes. Flush is the durability barrier: after
/// [`BlockDevice::flush`] returns, every write acknowledged before it survives a power cut of
/// either device. Dropping the device without a flush is a power cut.
pub struct CachedDevice<C: BlockDevice, B: BlockDevice> {
    ctl: Controller,
    core: Core<C, B>,
    seq: SeqDetector,
    cutoff: Option<u64>,
    vbuf: Vec<u8>,
}

/// The host buffer of one request (or one block of it).
enum Buf<'a> {
    Read(&'a mut [u8]),
    Write(&'a [u8]),
}

impl Buf<'_> {
    fn sub(&mut self, i: u64) -> Buf<'_> {
        let r = i as usize * BLOCK..(i as usize + 1) * BLOCK;
        match self {
            Buf::Read(b) => Buf::Read(&mut b[r]),
            Buf::Write(d) => Buf::Write(&d[r]),
        }
    }
}

fn internal(what: impl Into<String>) -> StlError {
    StlError::Corrupt {
        device: "block cache".into(),
        what: format!("internal inconsistency: {}", what.into()),
    }
}

impl<C: BlockDevice, B: BlockDevice> CachedDevice<C, B> {
    fn assemble(core: Core<C, B>, meta: Cache) -> Self {
        let cutoff = core.sb.setup.sequential_cutoff;
        CachedDevice {
            ctl: Controller::new(core.sb.setup.mode, Some(meta)),
            core,
            seq: SeqDetector::default(),
            cutoff,
            vbuf: vec![0u8; BLOCK],
        }
    }

    /// The cache's mode.
    pub fn mode(&self) -> Mode {
        self.core.sb.setup.mode
    }

    /// The setup the cache was formatted with.
    pub fn setup(&self) -> &CacheSetup {
        &self.core.sb.setup
    }

    /// The policy's name.
    pub fn policy_name(&self) -> &'static str {
        self.meta().policy_name()
    }

    /// Blocks the policy manages.
    pub fn capacity(&self) -> u32 {
        self.core.sb.capacity
    }

    /// Where things are on the cache device.
    pub fn layout(&self) -> Layout {
        self.core.sb.layout
    }

    /// The cache metadata (block table and policy) the controller decides with.
    pub fn meta(&self) -> &Cache {
        self.ctl.cache().expect("a cached device has a cache")
    }

    /// The physical slot caching block `b`, if cached.
    pub fn slot_of(&self, b: BlockNo) -> Option<u32> {
        let s = self.meta().table().slot_of(b)?;
        self.core.phys_of(s, b)
    }

    /// The cached dirty blocks, ascending.
    pub fn dirty_blocks(&self) -> Vec<BlockNo> {
        let mut v: Vec<BlockNo> = self.core.cached_blocks().filter(|x| x.2).map(|x| x.0).collect();
        v.sort_unstable();
        v
    }

    /// Heap bytes of the serving index: the policy's block table and structures
    /// ([`Cache::heap_bytes`]) and the data path's slot bookkeeping.
    pub fn heap_bytes(&self) -> usize {
        self.meta().heap_bytes() + self.core.heap_bytes()
    }

    /// Counters, with the current occupancy.
    pub fn stats(&self) -> Stats {
        let mut s = self.core.stats.clone();
        s.cached_blocks = self.meta().table().len() as u64;
        s.dirty_blocks = self.meta().table().dirty_len() as u64;
        s
    }

    /// Sets the sequential bypass threshold in bytes for this session (`None`: off, the
    /// default for paper fidelity). The superblock keeps the one given at format.
    pub fn set_sequential_cutoff(&mut self, cutoff: Option<u64>) {
        self.cutoff = cutoff;
    }

    /// The two devices, for inspection (writing through them breaks the cache).
    pub fn devices_mut(&mut self) -> (&mut C, &mut B) {
        (&mut self.core.cache, &mut self.core.backing)
    }

    /// Writes back every dirty block (ascending block order, contiguous blocks merged), flushes
    /// the backing device, then commits the records as clean. The blocks stay cached, marked
    /// clean in the policy's block table ([`Cache::mark_clean`]); the policy keeps its order,
    /// counts and ghost lists. Returns the blocks written back.
    pub fn clean(&mut self) -> Result<u64> {
        self.core.check_ok()?;
        let r = self.clean_inner();
        if let Err(e) = &r {
            self.core.fail(e);
        }
        r
    }

    fn clean_inner(&mut self) -> Result<u64> {
        // slots only (4 bytes each), in block order
        let mut dirty: Vec<u32> = self.core.cached_blocks().filter(|x| x.2).map(|x| x.1).collect();
        let block = |core: &slots::Core<C, B>, p: u32| core.cached(p).map_or(0, |x| x.0);
        dirty.sort_unstable_by_key(|&p| block(&self.core, p));
        let mut buf = vec![0u8; BLOCK];
        for &p in &dirty {
            let b = block(&self.core, p);
            self.core.read_slot(p, &mut buf)?;
            self.core.queue_backing_write(b, &buf)?;
        }
        self.core.unplug()?;
        for &p in &dirty {
            let b = block(&self.core, p);
            self.core.set_rec(p, Some((b, false)));
        }
        self.core.stats.cleaner_writebacks += dirty.len() as u64;
        self.core.commit()?;
        let meta = self.ctl.cache_mut().ok_or_else(|| internal("a cached device without a cache"))?;
        for &p in &dirty {
            meta.mark_clean(block(&self.core, p));
        }
        Ok(dirty.len() as u64)
    }

    /// The cleaner, then detach: every dirty block written back and flushed, every record
    /// freed, the superblock marked detached and flushed. Returns the backing device (which now
    /// holds every block) and the cache device (which [`CachedDevice::open`] refuses until it is
    /// formatted again).
    pub fn detach(mut self) -> Result<(B, C)> {
        self.core.check_ok()?;
        self.clean_inner()?;
        for p in 0..self.core.slots() {
            if self.core.cached(p).is_some() {
                self.core.release(p);
            }
        }
        self.core.commit()?;
        self.core.sb.state = State::Detached;
        let b = self.core.sb.encode()?;
        self.core.cache.write(0, &b)?;
        self.core.cache_flush()?;
        Ok((self.core.backing, self.core.cache))
    }

    /// The cache device.
    pub fn cache_device(&self) -> &C {
        &self.core.cache
    }

    /// The backing device.
    pub fn backing(&self) -> &B {
        &self.core.backing
    }

    /// Flushes (commits) and returns the devices, still attached: [`CachedDevice::open`] takes
    /// them back.
    pub fn close(mut self) -> Result<(C, B)> {
        self.flush()?;
        Ok((self.core.cache, self.core.backing))
    }

    /// The devices as they are, without a flush (what a power cut leaves, once the devices
    /// drop their unflushed writes).
    pub fn into_devices(self) -> (C, B) {
        (self.core.cache, self.core.backing)
    }

    /// One block through the controller.
    fn block(&mut self, write: bool, b: BlockNo, buf: Buf<'_>) -> Result<()> {
        self.core.recent.clear();
        let mut io = DataIo {
            core: &mut self.core,
            buf,
            block: b,
            victim: None,
            vbuf: &mut self.vbuf,
            err: None,
            hit: false,
        };
        self.ctl.block(write, b, &mut io);
        let (err, hit) = (io.err.take(), io.hit);
        self.core.process_removed();
        if let Some(e) = err {
            return Err(e);
        }
        let s = &mut self.core.stats;
        match (write, hit) {
            (false, true) => s.read_hits += 1,
            (false, false) => s.read_misses += 1,
            (true, true) => s.write_hits += 1,
            (true, false) => s.write_misses += 1,
        }
        Ok(())
    }

    fn request(&mut self, write: bool, lba: u64, mut buf: Buf<'_>) -> Result<()> {
        self.core.check_ok()?;
        let len = match &buf {
            Buf::Read(b) => b.len(),
            Buf::Write(d) => d.len(),
        };
        let cap = self.capacity_blocks();
        let n = (len / BLOCK) as u64;
        if !len.is_multiple_of(BLOCK) || lba.checked_add(n).is_none_or(|end| end > cap) {
            // the error, naming the device (built only when needed)
            check_request(&self.name(), if write { "write" } else { "read" }, lba, len, cap)?;
        }
        if n == 0 {
            return Ok(());
        }
        let r = if !write && self.ctl.skips(false) {
            self.read_unaccounted(lba, n, &mut buf)
        } else if self.seq.observe(write, lba, n, self.cutoff) {
            self.bypass(write, lba, n, &mut buf)
        } else {
            (0..n).try_for_each(|i| self.block(write, lba + i, buf.sub(i)))
        };
        let r = r.and_then(|_| self.core.unplug());
        if let Err(e) = &r {
            self.core.fail(e);
        }
        r
    }

    /// Runs of blocks from `lba` that are cached (`true`) or not, as `(start, len, cached)`.
    fn runs(&self, lba: u64, n: u64) -> Vec<(u64, u64, bool)> {
        let mut out: Vec<(u64, u64, bool)> = Vec::new();
        for i in 0..n {
            let c = self.slot_of(lba + i).is_some();
            match out.last_mut() {
                Some(r) if r.2 == c && !c => r.1 += 1,
                _ => out.push((i, 1, c)),
            }
        }
        out
    }

    /// A read in write-only mode: served from the cache or the backing device without telling
    /// the policy (the simulator drops read requests in this mode).
    fn read_unaccounted(&mut self, lba: u64, n: u64, buf: &mut Buf<'_>) -> Result<()> {
        let Buf::Read(out) = buf else { return Err(internal("unaccounted write")) };
        for (i, len, cached) in self.runs(lba, n) {
            let dst = &mut out[i as usize * BLOCK..(i + len) as usize * BLOCK];
            if cached {
                let p = self.slot_of(lba + i).ok_or_else(|| internal("a cached block without a slot"))?;
                self.core.read_slot(p, dst)?;
            } else {
                self.core.backing_read(lba + i, dst)?;
            }
        }
        self.core.stats.unaccounted_reads += n;
        Ok(())
    }

    /// A bypassed request: its cached blocks go through the controller (the cache stays
    /// authoritative for them), the others straight to or from the backing device.
    fn bypass(&mut self, write: bool, lba: u64, n: u64, buf: &mut Buf<'_>) -> Result<()> {
        for (i, len, cached) in self.runs(lba, n) {
            if cached {
                self.block(write, lba + i, buf.sub(i))?;
                continue;
            }
            match buf {
                Buf::Read(out) => self
                    .core
                    .backing_read(lba + i, &mut out[i as usize * BLOCK..(i + len) as usize * BLOCK])?,
                Buf::Write(d) => {
                    for k in i..i + len {
                        self.core
                            .queue_backing_write(lba + k, &d[k as usize * BLOCK..(k + 1) as usize * BLOCK])?;
                    }
                }
            }
            self.core.stats.bypassed_blocks += len;
        }
        self.core.stats.bypassed_requests += 1;
        Ok(())
    }

    fn discard_inner(&mut self, lba: u64, blocks: u64) -> Result<()> {
        let end = lba + blocks;
        let mut cached: Vec<BlockNo> = if blocks <= self.core.used() {
            (lba..end).filter(|&b| self.slot_of(b).is_some()).collect()
        } else {
            self.core.cached_blocks().map(|x| x.0).filter(|b| (lba..end).contains(b)).collect()
        };
        cached.sort_unstable();
        // Cached blocks: a write of zeros through the controller (a hit; write-around in
        // read-only mode).
        let zero = vec![0u8; BLOCK];
        for &b in &cached {
            self.block(true, b, Buf::Write(&zero))?;
        }
        for b in self.core.pending_clean_in(lba..end) {
            self.core.retire_clean(b)?;
        }
        self.core.flush_run()?;
        let mut start = lba;
        for &b in cached.iter().chain(std::iter::once(&end)) {
            if b > start {
                self.core.backing.discard(start, b - start)?;
                self.core.backing_unflushed = true;
            }
            start = b + 1;
        }
        self.core.stats.discarded_blocks += blocks;
        Ok(())
    }
}

impl<C: BlockDevice, B: BlockDevice> BlockDevice for CachedDevice<C, B> {
    fn capacity_blocks(&self) -> u64 {
        self.core.sb.backing_blocks
    }

    fn read(&mut self, lba: u64, buf: &mut [u8]) -> Result<()> {
        self.request(false, lba, Buf::Read(buf))
    }

    fn write(&mut self, lba: u64, data: &[u8]) -> Result<()> {
        self.request(true, lba, Buf::Write(data))
    }

    fn flush(&mut self) -> Result<()> {
        self.core.check_ok()?;
        let r = self.core.commit();
        if let Err(e) = &r {
            self.core.fail(e);
        }
        r
    }

    fn discard(&mut self, lba: u64, blocks: u64) -> Result<()> {
        self.core.check_ok()?;
        if lba.checked_add(blocks).is_none_or(|e| e > self.capacity_blocks()) {
            return Err(StlError::Range {
                what: format!("{}: discard at block {lba}", self.name()),
                detail: format!(
                    "{blocks} blocks reach past the capacity of {} blocks",
                    self.capacity_blocks()
                ),
            });
        }
        if blocks == 0 {
            return Ok(());
        }
        let r = self.discard_inner(lba, blocks).and_then(|_| self.core.unplug());
        if let Err(e) = &r {
            self.core.fail(e);
        }
        r
    }

    fn name(&self) -> String {
        self.core.name()
    }
}
