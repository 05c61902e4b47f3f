//! The cached block device: the controller's decisions executed with real bytes, and the
//! slot records that make them survive a power cut (see the crate documentation for the design
//! and the ordering argument).

use crate::layout::{self, Layout, Record, State, Superblock};
use crate::observe::{Observed, RemovalLog};
use crate::seq::SeqDetector;
use crate::{CacheOptions, CacheSetup, Stats};
use rustc_hash::FxHashMap;
use shingled_cache::{Cache, PolicyContext};
use shingled_core::{BandMap, BlockNo, ByteSize, SplitMix64};
use shingled_sim::controller::{Controller, Io};
use shingled_sim::Mode;
use shingled_stl::invalid;
use shingled_stl::{check_request, BlockDevice, Result, StlError, BLOCK};
use std::collections::BTreeSet;
use std::sync::Arc;

/// Longest run of contiguous backing writes issued as one write.
const MAX_RUN_BLOCKS: usize = 256;
/// Record blocks read or written at once.
const RECORD_CHUNK: u64 = 64;

/// Where a physical slot stands (see the state diagram in the crate documentation).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum SlotState {
    /// Free in memory and on the device: its data may be overwritten.
    Ready,
    /// Holds a cached block.
    Used,
    /// Free in memory, but its durable record still names a block: its data must stay until a
    /// commit (or a retirement) has written the free record.
    Pending,
}

/// A write-back block cache over a cache device `C` and a backing device `B`, itself a
/// [`BlockDevice`] of the backing device's capacity.
///
/// Every block of a request goes through [`Controller::block`], the simulator's per-block
/// decisions, with the policy named at format; an [`Io`] implementation moves the bytes. Flush
/// is the durability barrier: after [`BlockDevice::flush`] returns, every write acknowledged
/// before it survives a power cut of either device. Dropping the device without a flush is a
/// power cut.
pub struct CachedDevice<C: BlockDevice, B: BlockDevice> {
    ctl: Controller,
    core: Core<C, B>,
    seq: SeqDetector,
    cutoff: Option<u64>,
    vbuf: Vec<u8>,
}

/// The devices and the slot bookkeeping, apart from the controller (so that an [`Io`] can
/// borrow it while the controller runs).
struct Core<C, B> {
    cache: C,
    backing: B,
    sb: Superblock,
    /// Slot records as they should be (committed by the next commit).
    mem: Vec<Record>,
    /// Slot records as the last commit (or retirement) left them on the device.
    disk: Vec<Record>,
    state: Vec<SlotState>,
    /// Ready slots, the next to use last.
    ready: Vec<u32>,
    /// Pending slots (may hold stale entries: check `state`).
    pending: Vec<u32>,
    /// Pending slots whose durable record names a block as clean, by block: released early
    /// before that block is written to the backing device.
    pending_clean: FxHashMap<BlockNo, Vec<u32>>,
    /// Cached block → slot (mirrors the controller's block table between requests).
    loc: FxHashMap<BlockNo, u32>,
    /// Record blocks where `mem` may differ from `disk`.
    changed: BTreeSet<u64>,
    /// The epoch the next commit writes.
    epoch: u64,
    backing_unflushed: bool,
    cache_unflushed: bool,
    /// Queued contiguous backing writes from `run_start`.
    run_start: u64,
    run: Vec<u8>,
    stats: Stats,
    removed: RemovalLog,
    drained: Vec<BlockNo>,
    /// Blocks removed during the current controller call and their slots (a dirty victim is
    /// read after the policy removed it).
    recent: Vec<(BlockNo, u32)>,
    failed: Option<String>,
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

/// A cache id for a new format: the time and the process, mixed.
fn new_cache_id() -> u64 {
    use std::sync::atomic::{AtomicU64, Ordering};
    static COUNT: AtomicU64 = AtomicU64::new(0);
    let t = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(0);
    let x = t
        ^ (std::process::id() as u64) << 32
        ^ COUNT.fetch_add(1, Ordering::Relaxed).wrapping_mul(SplitMix64::GAMMA);
    SplitMix64::mix(x).max(1)
}

/// Builds the cache metadata (block table + policy, the policy wrapped to log removals) the
/// superblock describes.
fn build_cache(sb: &Superblock, log: &RemovalLog) -> Result<Cache> {
    let s = &sb.setup;
    let bands = match &s.bands {
        Some(cfg) => Some(Arc::new(
            BandMap::build(cfg, ByteSize(sb.backing_blocks * BLOCK as u64))
                .map_err(|e| invalid("bands", format!("{cfg:?}"), e.to_string()))?,
        )),
        None => None,
    };
    let ctx = PolicyContext {
        capacity_blocks: sb.capacity,
        bands,
        pb_blocks: s.pb_blocks,
        seed: s.seed,
        costs: s.costs,
    };
    let policy = s.policy.build(&ctx).map_err(|e| invalid("policy", s.policy.name(), e.to_string()))?;
    Ok(Cache::new(sb.capacity, Box::new(Observed { inner: policy, log: log.clone() })))
}

/// What the metadata area says: the superblock, every slot record, and the slots holding the
/// newest record of their block ("winners"), oldest first.
pub(crate) struct Scan {
    pub sb: Superblock,
    pub disk: Vec<Record>,
    pub winners: Vec<u32>,
}

/// Reads the superblock and the record area of `dev` (never the data slots).
pub(crate) fn scan<M: BlockDevice + ?Sized>(dev: &mut M) -> Result<Scan> {
    let name = dev.name();
    let mut b = vec![0u8; BLOCK];
    dev.read(0, &mut b)?;
    let sb = Superblock::decode(&name, &b)?;
    let l = sb.layout;
    if dev.capacity_blocks() < l.data_start {
        return Err(StlError::Corrupt {
            device: name,
            what: format!(
                "the record area ends at block {} but the device holds {} blocks",
                l.data_start,
                dev.capacity_blocks()
            ),
        });
    }
    let mut disk = vec![Record::FREE; l.slots as usize];
    let mut rb = 0u64;
    let mut buf = vec![0u8; RECORD_CHUNK as usize * BLOCK];
    while rb < l.record_blocks {
        let n = RECORD_CHUNK.min(l.record_blocks - rb);
        dev.read(l.record_start + rb, &mut buf[..n as usize * BLOCK])?;
        for k in 0..n {
            let r = l.slots_of_block(rb + k);
            let img = &buf[k as usize * BLOCK..(k as usize + 1) * BLOCK];
            layout::decode_records(
                &name,
                rb + k,
                sb.cache_id,
                img,
                &mut disk[r.start as usize..r.end as usize],
            )?;
        }
        rb += n;
    }
    let mut best: FxHashMap<BlockNo, u32> = FxHashMap::default();
    for (p, r) in disk.iter().enumerate() {
        if !r.used {
            continue;
        }
        if r.block >= sb.backing_blocks {
            return Err(StlError::Corrupt {
                device: name,
                what: format!(
                    "slot {p} records block {} beyond the backing device's {} blocks",
                    r.block, sb.backing_blocks
                ),
            });
        }
        match best.get(&r.block) {
            None => {
                best.insert(r.block, p as u32);
            }
            Some(&q) => {
                let e = disk[q as usize].epoch;
                if r.epoch == e {
                    return Err(StlError::Corrupt {
                        device: name,
                        what: format!("slots {q} and {p} both record block {} at epoch {e}", r.block),
                    });
                }
                if r.epoch > e {
                    best.insert(r.block, p as u32);
                }
            }
        }
    }
    let mut winners: Vec<u32> = best.into_values().collect();
    winners.sort_by_key(|&p| (disk[p as usize].epoch, p));
    Ok(Scan { sb, disk, winners })
}

impl<C: BlockDevice, B: BlockDevice> Core<C, B> {
    fn new(cache: C, backing: B, sb: Superblock, disk: Vec<Record>, removed: RemovalLog) -> Self {
        let slots = sb.layout.slots as usize;
        debug_assert_eq!(disk.len(), slots);
        let state: Vec<SlotState> =
            disk.iter().map(|r| if r.used { SlotState::Used } else { SlotState::Ready }).collect();
        let ready = (0..slots as u32).rev().filter(|&p| state[p as usize] == SlotState::Ready).collect();
        let epoch = disk.iter().map(|r| r.epoch).max().unwrap_or(0) + 1;
        Core {
            cache,
            backing,
            sb,
            mem: disk.clone(),
            disk,
            state,
            ready,
            pending: Vec::new(),
            pending_clean: FxHashMap::default(),
            loc: FxHashMap::default(),
            changed: BTreeSet::new(),
            epoch,
            backing_unflushed: false,
            cache_unflushed: false,
            run_start: 0,
            run: Vec::new(),
            stats: Stats::default(),
            removed,
            drained: Vec::new(),
            recent: Vec::new(),
            failed: None,
        }
    }

    fn name(&self) -> String {
        format!("cache {} over {}", self.cache.name(), self.backing.name())
    }

    fn check_ok(&self) -> Result<()> {
        match &self.failed {
            None => Ok(()),
            Some(why) => Err(StlError::Failed {
                device: self.name(),
                detail: format!("an earlier error stopped the cache ({why}); open it again"),
            }),
        }
    }

    fn fail(&mut self, e: &StlError) {
        if self.failed.is_none() {
            self.failed = Some(e.to_string());
        }
    }

    /// Sets slot `p`'s in-memory record (a new content gets the current epoch).
    fn set_rec(&mut self, p: u32, rec: Record) {
        let rec = if rec.used { Record { epoch: self.epoch, ..rec } } else { Record::FREE };
        if !self.mem[p as usize].same(&rec) {
            self.mem[p as usize] = rec;
            self.changed.insert(Layout::record_block_of(p));
        }
    }

    fn read_slot(&mut self, p: u32, buf: &mut [u8]) -> Result<()> {
        self.cache.read(self.sb.layout.slot_lba(p), buf)?;
        self.stats.cache_blocks_read += 1;
        Ok(())
    }

    fn write_slot(&mut self, p: u32, data: &[u8]) -> Result<()> {
        debug_assert!(
            !self.disk[p as usize].used || self.disk[p as usize].dirty,
            "slot {p}: data written under a durable clean record"
        );
        self.cache.write(self.sb.layout.slot_lba(p), data)?;
        self.cache_unflushed = true;
        self.stats.cache_blocks_written += 1;
        Ok(())
    }

    fn cache_flush(&mut self) -> Result<()> {
        self.cache.flush()?;
        self.cache_unflushed = false;
        self.stats.cache_flushes += 1;
        Ok(())
    }

    /// A ready slot, committing first when none is left.
    fn alloc(&mut self) -> Result<u32> {
        if self.ready.is_empty() {
            self.stats.forced_commits += 1;
            self.commit()?;
        }
        let p = self.ready.pop().ok_or_else(|| internal("no free slot after a commit"))?;
        debug_assert!(self.state[p as usize] == SlotState::Ready && !self.disk[p as usize].used);
        self.state[p as usize] = SlotState::Used;
        Ok(p)
    }

    /// Frees slot `p` in memory: ready at once if its durable record is free, else pending.
    fn release(&mut self, p: u32) {
        self.set_rec(p, Record::FREE);
        let d = self.disk[p as usize];
        if !d.used {
            self.state[p as usize] = SlotState::Ready;
            self.ready.push(p);
        } else {
            self.state[p as usize] = SlotState::Pending;
            self.pending.push(p);
            if !d.dirty {
                self.pending_clean.entry(d.block).or_default().push(p);
            }
        }
    }

    /// Frees the slots of the blocks the policy removed since the last call.
    fn process_removed(&mut self) {
        {
            let mut log = self.removed.lock().expect("removal log");
            if log.is_empty() {
                return;
            }
            std::mem::swap(&mut *log, &mut self.drained);
        }
        let drained = std::mem::take(&mut self.drained);
        for &b in &drained {
            match self.loc.remove(&b) {
                Some(p) => {
                    self.recent.push((b, p));
                    self.release(p);
                }
                None => debug_assert!(false, "removed block {b} was not cached"),
            }
        }
        self.drained = drained;
        self.drained.clear();
    }

    /// Makes `data` block `b`'s cached copy (`dirty`: it is the host's write).
    fn store(&mut self, b: BlockNo, data: &[u8], dirty: bool) -> Result<()> {
        match self.loc.get(&b).copied() {
            Some(p) => {
                let d = self.disk[p as usize];
                let dirty = dirty || self.mem[p as usize].dirty;
                if !d.used || (d.block == b && d.dirty) {
                    // Overwrite in place: the durable record is free, or names this block dirty
                    // (either copy is then an acceptable value of the block).
                    self.write_slot(p, data)?;
                    self.set_rec(p, Record { block: b, epoch: 0, used: true, dirty });
                } else {
                    // The durable record says clean: the old copy must stay readable until a
                    // commit names the new slot (copy on write).
                    let q = self.alloc()?;
                    self.write_slot(q, data)?;
                    self.set_rec(q, Record { block: b, epoch: 0, used: true, dirty });
                    self.loc.insert(b, q);
                    self.release(p);
                }
            }
            None => {
                let q = self.alloc()?;
                self.write_slot(q, data)?;
                self.set_rec(q, Record { block: b, epoch: 0, used: true, dirty });
                self.loc.insert(b, q);
            }
        }
        Ok(())
    }

    /// Queues a backing write of block `b`, merging contiguous blocks. First releases, durably,
    /// any pending slot whose durable record names `b` as clean (after this write it would be
    /// stale).
    fn queue_backing_write(&mut self, b: BlockNo, data: &[u8]) -> Result<()> {
        self.retire_clean(b)?;
        let n = self.run.len() / BLOCK;
        if n > 0 && (self.run_start + n as u64 != b || n >= MAX_RUN_BLOCKS) {
            self.flush_run()?;
        }
        if self.run.is_empty() {
            self.run_start = b;
        }
        self.run.extend_from_slice(data);
        if self.backing.merges_requests() {
            // the device gathers runs itself, and must see each write when it is made
            self.flush_run()?;
        }
        Ok(())
    }

    /// Issues the queued backing writes.
    fn flush_run(&mut self) -> Result<()> {
        if self.run.is_empty() {
            return Ok(());
        }
        let n = (self.run.len() / BLOCK) as u64;
        let r = self.backing.write(self.run_start, &self.run);
        self.run.clear();
        r?;
        self.backing_unflushed = true;
        self.stats.backing_blocks_written += n;
        Ok(())
    }

    /// Issues the queued backing writes and ends the backing device's batch: the points where
    /// the replay engine issues its pending drive run (a barrier of the controller, the end of
    /// a request), so that a modelled backing device merges exactly the blocks the engine
    /// merges.
    fn unplug(&mut self) -> Result<()> {
        self.flush_run()?;
        self.backing.unplug()
    }

    fn backing_read(&mut self, lba: u64, buf: &mut [u8]) -> Result<()> {
        self.flush_run()?;
        self.backing.read(lba, buf)?;
        self.stats.backing_blocks_read += (buf.len() / BLOCK) as u64;
        Ok(())
    }

    /// Writes free records for the pending slots whose durable record names `b` as clean, and
    /// flushes the cache device: from then on no record can make `b` read its old copy.
    fn retire_clean(&mut self, b: BlockNo) -> Result<()> {
        if self.pending_clean.is_empty() {
            return Ok(());
        }
        let Some(ps) = self.pending_clean.remove(&b) else { return Ok(()) };
        let ps: Vec<u32> = ps
            .into_iter()
            .filter(|&p| {
                let d = self.disk[p as usize];
                self.state[p as usize] == SlotState::Pending && d.used && d.block == b && !d.dirty
            })
            .collect();
        if ps.is_empty() {
            return Ok(());
        }
        let mut rbs: Vec<u64> = ps.iter().map(|&p| Layout::record_block_of(p)).collect();
        rbs.sort_unstable();
        rbs.dedup();
        let mut buf = vec![0u8; BLOCK];
        for rb in rbs {
            let r = self.sb.layout.slots_of_block(rb);
            let mut img: Vec<Record> = self.disk[r.start as usize..r.end as usize].to_vec();
            for &p in &ps {
                if r.contains(&p) {
                    img[(p - r.start) as usize] = Record::FREE;
                }
            }
            layout::encode_records(rb, self.sb.cache_id, &img, &mut buf);
            self.cache.write(self.sb.layout.record_start + rb, &buf)?;
            self.stats.metadata_blocks_written += 1;
        }
        self.cache_flush()?;
        for p in ps {
            self.disk[p as usize] = Record::FREE;
            self.state[p as usize] = SlotState::Ready;
            self.ready.push(p);
        }
        self.stats.retirements += 1;
        Ok(())
    }

    /// The commit: backing writes issued and flushed, slot data flushed, changed record blocks
    /// written, cache device flushed; then pending slots are ready.
    fn commit(&mut self) -> Result<()> {
        self.flush_run()?;
        let l = self.sb.layout;
        let blocks: Vec<u64> = self
            .changed
            .iter()
            .copied()
            .filter(|&rb| {
                let r = l.slots_of_block(rb);
                let r = r.start as usize..r.end as usize;
                self.mem[r.clone()] != self.disk[r]
            })
            .collect();
        self.changed.clear();
        if self.backing_unflushed {
            self.backing.flush()?;
            self.backing_unflushed = false;
            self.stats.backing_flushes += 1;
        }
        if !blocks.is_empty() {
            if self.cache_unflushed {
                // slot data before the records that name it
                self.cache_flush()?;
            }
            let mut i = 0;
            while i < blocks.len() {
                let mut j = i + 1;
                while j < blocks.len() && blocks[j] == blocks[j - 1] + 1 && ((j - i) as u64) < RECORD_CHUNK {
                    j += 1;
                }
                let mut buf = vec![0u8; (j - i) * BLOCK];
                for (k, &rb) in blocks[i..j].iter().enumerate() {
                    let r = l.slots_of_block(rb);
                    layout::encode_records(
                        rb,
                        self.sb.cache_id,
                        &self.mem[r.start as usize..r.end as usize],
                        &mut buf[k * BLOCK..(k + 1) * BLOCK],
                    );
                }
                self.cache.write(l.record_start + blocks[i], &buf)?;
                self.stats.metadata_blocks_written += (j - i) as u64;
                i = j;
            }
            self.cache_unflushed = true;
        }
        if self.cache_unflushed {
            self.cache_flush()?;
        }
        for &rb in &blocks {
            let r = l.slots_of_block(rb);
            let r = r.start as usize..r.end as usize;
            self.disk[r.clone()].copy_from_slice(&self.mem[r]);
        }
        for p in std::mem::take(&mut self.pending) {
            if self.state[p as usize] == SlotState::Pending {
                debug_assert!(!self.disk[p as usize].used);
                self.state[p as usize] = SlotState::Ready;
                self.ready.push(p);
            }
        }
        self.pending_clean.clear();
        if !blocks.is_empty() {
            self.epoch += 1;
            self.stats.commits += 1;
        }
        Ok(())
    }
}

/// The [`Io`] of the data path: executes one block's decisions with its bytes.
struct DataIo<'a, C, B> {
    core: &'a mut Core<C, B>,
    buf: Buf<'a>,
    block: BlockNo,
    /// The dirty victim just read into `vbuf`.
    victim: Option<BlockNo>,
    vbuf: &'a mut Vec<u8>,
    err: Option<StlError>,
    hit: bool,
}

impl<C: BlockDevice, B: BlockDevice> DataIo<'_, C, B> {
    /// Runs `f` unless an earlier call failed (then the rest of the block is skipped).
    fn run(&mut self, f: impl FnOnce(&mut Self) -> Result<()>) {
        if self.err.is_none() {
            if let Err(e) = f(self) {
                self.err = Some(e);
            }
        }
    }
}

impl<C: BlockDevice, B: BlockDevice> Io for DataIo<'_, C, B> {
    fn ssd_read(&mut self, b: BlockNo) {
        self.run(|io| {
            if b == io.block {
                let p = *io
                    .core
                    .loc
                    .get(&b)
                    .ok_or_else(|| internal(format!("read hit on uncached block {b}")))?;
                match &mut io.buf {
                    Buf::Read(buf) => io.core.read_slot(p, buf),
                    Buf::Write(_) => Err(internal(format!("cache read of block {b} being written"))),
                }
            } else {
                // a dirty victim, about to be written back
                let p = io
                    .core
                    .loc
                    .get(&b)
                    .copied()
                    .or_else(|| io.core.recent.iter().rev().find(|(x, _)| *x == b).map(|&(_, p)| p))
                    .ok_or_else(|| internal(format!("victim {b} has no slot")))?;
                io.core.read_slot(p, io.vbuf)?;
                io.victim = Some(b);
                Ok(())
            }
        })
    }

    fn ssd_write(&mut self, b: BlockNo) {
        self.run(|io| {
            io.core.process_removed();
            if b != io.block {
                return Err(internal(format!("cache write of block {b} during a request for {}", io.block)));
            }
            let (data, dirty): (&[u8], bool) = match &io.buf {
                Buf::Read(buf) => (buf, false),
                Buf::Write(d) => (d, true),
            };
            io.core.store(b, data, dirty)
        })
    }

    fn drive_read(&mut self, b: BlockNo) {
        self.run(|io| match &mut io.buf {
            Buf::Read(buf) if b == io.block => io.core.backing_read(b, buf),
            _ => Err(internal(format!("backing read of block {b} outside its read request"))),
        })
    }

    fn drive_write(&mut self, b: BlockNo) {
        self.run(|io| {
            if io.victim == Some(b) {
                io.victim = None;
                return io.core.queue_backing_write(b, io.vbuf);
            }
            io.core.process_removed();
            match &io.buf {
                Buf::Write(d) if b == io.block => io.core.queue_backing_write(b, d),
                _ => Err(internal(format!("backing write of block {b} with no data"))),
            }
        })
    }

    fn barrier(&mut self) {
        self.run(|io| io.core.unplug())
    }

    fn read_hit(&mut self) {
        self.hit = true;
    }

    fn write_hit(&mut self) {
        self.hit = true;
    }

    fn evicted(&mut self, dirty: bool) {
        if dirty {
            self.core.stats.dirty_evictions += 1;
        } else {
            self.core.stats.clean_evictions += 1;
        }
    }
}

impl<C: BlockDevice, B: BlockDevice> CachedDevice<C, B> {
    /// Formats `cache` as a cache of `backing` and returns the (empty) cached device. Nothing is
    /// written to `backing`. The records area is discarded (or, when the device cannot discard,
    /// written with zeros: free records) and the superblock written, each followed by a flush.
    pub fn format(mut cache: C, backing: B, opts: &CacheOptions) -> Result<Self> {
        let layout = Layout::new(cache.capacity_blocks(), opts.slots)?;
        let slots = layout.slots;
        let capacity = match (opts.capacity, opts.reserve) {
            (Some(c), _) => c,
            (None, Some(r)) => slots.saturating_sub(r),
            (None, None) => slots - (slots / 64).max(1),
        };
        if capacity == 0 || capacity >= slots {
            return Err(invalid(
                "cache capacity",
                capacity,
                format!(
                    "must be 1 to {} blocks: the {slots} slots less at least one reserve slot",
                    slots - 1
                ),
            ));
        }
        let sb = Superblock {
            state: State::Attached,
            cache_id: new_cache_id(),
            backing_blocks: backing.capacity_blocks(),
            capacity,
            layout,
            setup: opts.setup.clone(),
        };
        let removed = RemovalLog::default();
        let meta = build_cache(&sb, &removed)?; // the policy builds before anything is written
        let sb_block = sb.encode()?;
        if cache.discard(layout.record_start, layout.record_blocks).is_err() {
            // no discard: zeros written instead
            let zeros = vec![0u8; RECORD_CHUNK as usize * BLOCK];
            let mut rb = 0;
            while rb < layout.record_blocks {
                let n = RECORD_CHUNK.min(layout.record_blocks - rb);
                cache.write(layout.record_start + rb, &zeros[..n as usize * BLOCK])?;
                rb += n;
            }
        }
        cache.flush()?;
        cache.write(0, &sb_block)?;
        cache.flush()?;
        let core = Core::new(cache, backing, sb, vec![Record::FREE; slots as usize], removed);
        Ok(Self::assemble(core, meta))
    }

    /// Opens a formatted cache device over its backing device, recovering after a power cut:
    /// every slot whose record holds the newest record of its block is cached again (clean or
    /// dirty as recorded), the others are freed (durably, before any request). The policy
    /// starts afresh: blocks are inserted oldest record first; its order, counts and ghost
    /// lists are not persisted.
    pub fn open(mut cache: C, backing: B) -> Result<Self> {
        let Scan { sb, disk, winners } = scan(&mut cache)?;
        let name = cache.name();
        if sb.state == State::Detached {
            return Err(invalid(
                "cache device",
                name,
                "it was detached from its backing device (the backing device alone holds the data); format it again to reuse it",
            ));
        }
        if sb.backing_blocks != backing.capacity_blocks() {
            return Err(invalid(
                "backing device",
                backing.name(),
                format!(
                    "it holds {} blocks but the cache {name} was formatted for a backing device of {} blocks",
                    backing.capacity_blocks(),
                    sb.backing_blocks
                ),
            ));
        }
        if cache.capacity_blocks() < sb.layout.data_start + sb.layout.slots as u64 {
            return Err(StlError::Corrupt {
                device: name,
                what: format!("the superblock's {} slots do not fit the device", sb.layout.slots),
            });
        }
        // More newest records than the policy holds (a commit torn between a new record and the
        // free record of an evicted block's slot): keep the newest, write back dirty extras.
        let keep_from = winners.len().saturating_sub(sb.capacity as usize);
        let (extra, kept) = winners.split_at(keep_from);
        let (extra, kept) = (extra.to_vec(), kept.to_vec());
        let removed = RemovalLog::default();
        let mut core = Core::new(cache, backing, sb, disk, removed.clone());
        let mut kept_flag = vec![false; core.disk.len()];
        for &p in &kept {
            kept_flag[p as usize] = true;
            core.loc.insert(core.disk[p as usize].block, p);
        }
        let mut buf = vec![0u8; BLOCK];
        for &p in &extra {
            let r = core.disk[p as usize];
            if r.dirty {
                core.read_slot(p, &mut buf)?;
                core.queue_backing_write(r.block, &buf)?;
            }
        }
        for p in 0..core.disk.len() as u32 {
            if core.disk[p as usize].used && !kept_flag[p as usize] {
                core.release(p);
            }
        }
        core.commit()?;
        let mut meta = build_cache(&core.sb, &removed)?;
        let mut evicted = Vec::new();
        for &p in &kept {
            let r = core.disk[p as usize];
            meta.insert(r.block, r.dirty, &mut evicted);
        }
        if !evicted.is_empty() {
            return Err(internal("recovery evicted a block"));
        }
        Ok(Self::assemble(core, meta))
    }

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
        self.core.loc.get(&b).copied()
    }

    /// The cached dirty blocks, ascending.
    pub fn dirty_blocks(&self) -> Vec<BlockNo> {
        let mut v: Vec<BlockNo> =
            self.core.loc.iter().filter(|(_, &p)| self.core.mem[p as usize].dirty).map(|(&b, _)| b).collect();
        v.sort_unstable();
        v
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
        let mut dirty: Vec<(BlockNo, u32)> = self
            .core
            .loc
            .iter()
            .filter(|(_, &p)| self.core.mem[p as usize].dirty)
            .map(|(&b, &p)| (b, p))
            .collect();
        dirty.sort_unstable();
        let mut buf = vec![0u8; BLOCK];
        for &(b, p) in &dirty {
            self.core.read_slot(p, &mut buf)?;
            self.core.queue_backing_write(b, &buf)?;
        }
        self.core.unplug()?;
        for &(b, p) in &dirty {
            self.core.set_rec(p, Record { block: b, epoch: 0, used: true, dirty: false });
        }
        self.core.stats.cleaner_writebacks += dirty.len() as u64;
        self.core.commit()?;
        let meta = self.ctl.cache_mut().ok_or_else(|| internal("a cached device without a cache"))?;
        for &(b, _) in &dirty {
            meta.mark_clean(b);
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
        let slots: Vec<u32> = self.core.loc.drain().map(|(_, p)| p).collect();
        for p in slots {
            self.core.release(p);
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
            let c = self.core.loc.contains_key(&(lba + i));
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
                let p = self.core.loc[&(lba + i)];
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
        let mut cached: Vec<BlockNo> = if blocks <= self.core.loc.len() as u64 {
            (lba..end).filter(|b| self.core.loc.contains_key(b)).collect()
        } else {
            self.core.loc.keys().copied().filter(|b| (lba..end).contains(b)).collect()
        };
        cached.sort_unstable();
        // Cached blocks: a write of zeros through the controller (a hit; write-around in
        // read-only mode).
        let zero = vec![0u8; BLOCK];
        for &b in &cached {
            self.block(true, b, Buf::Write(&zero))?;
        }
        let stale: Vec<BlockNo> =
            self.core.pending_clean.keys().copied().filter(|b| (lba..end).contains(b)).collect();
        for b in stale {
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
