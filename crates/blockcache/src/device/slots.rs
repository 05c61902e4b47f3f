//! The devices under the cache and the slot bookkeeping: slot states and records, the backing
//! write queue, clean-slot retirement and the commit.
//!
//! # The serving index
//!
//! One `u64` per physical slot holds both of its records — the one it should have (`mem`) and
//! the one the last commit or retirement made durable (`disk`) — because they never name two
//! different blocks: a slot is allocated only when both are free, its `mem` is set only to the
//! block it caches, and its `disk` only to its `mem` (a commit) or to free (a commit or a
//! retirement). So the word keeps one block number and the used/dirty flags of each side. No
//! epoch is kept: a commit stamps every used record of a record block it writes with its own
//! number, a retirement with the last commit's (see [`Core::retire_clean`]).
//!
//! A dense array maps each of the policy's slots to its physical slot; the policy's block
//! table is the only block index. Free slots are a stack of recycled slots plus a range of
//! never-used ones at the top.

use super::{internal, MAX_RUN_BLOCKS, RECORD_CHUNK};
use crate::layout::{self, Layout, Record, Superblock};
use crate::observe::RemovalLog;
use crate::Stats;
use rustc_hash::FxHashMap;
use shingled_cache::Slot;
use shingled_core::BlockNo;
use shingled_stl::{BlockDevice, Result, StlError, BLOCK};
use std::collections::BTreeSet;

/// The block number's bits in a slot word.
const BLOCK_BITS: u64 = (1 << 56) - 1;
/// `mem` names the block (the slot is in use).
const MEM_USED: u64 = 1 << 56;
/// `mem` names it dirty.
const MEM_DIRTY: u64 = 1 << 57;
/// `disk` names the block.
pub(super) const DISK_USED: u64 = 1 << 58;
/// `disk` names it dirty.
pub(super) const DISK_DIRTY: u64 = 1 << 59;
/// Free in memory, durable record still used: the data stays until a commit or retirement
/// frees the record (the slot is then ready).
const PENDING: u64 = 1 << 60;

/// No physical slot (a policy slot never filled).
const NO_SLOT: u32 = u32::MAX;

/// A slot word for a durable record (as read at open): `mem` equal to `disk`.
pub(super) fn word_of(r: &Record) -> u64 {
    if !r.used {
        return 0;
    }
    let mut w = (r.block & BLOCK_BITS) | MEM_USED | DISK_USED;
    if r.dirty {
        w |= MEM_DIRTY | DISK_DIRTY;
    }
    w
}

/// The devices and the slot bookkeeping, apart from the controller (so that an
/// [`Io`](shingled_sim::controller::Io) can borrow it while the controller runs).
pub(super) struct Core<C, B> {
    pub(super) cache: C,
    pub(super) backing: B,
    pub(super) sb: Superblock,
    /// Per physical slot: block, `mem` and `disk` flags, pending flag (the constants above).
    words: Vec<u64>,
    /// Policy slot → physical slot (`NO_SLOT` until first filled; stale after a removal until
    /// refilled: always check the slot word).
    phys: Vec<u32>,
    /// Recycled ready slots, the next to use last.
    ready: Vec<u32>,
    /// Slots from here up have never been used since the open and are ready.
    fresh: u32,
    /// Pending slots (may hold stale entries: check the pending flag).
    pending: Vec<u32>,
    /// Pending slots whose durable record names a block as clean, by block: released early
    /// before that block is written to the backing device. Durable records name a block once
    /// (every commit leaves `disk = mem`), so a second entry for a block is kept apart.
    pending_clean: FxHashMap<BlockNo, u32>,
    pending_clean_more: Vec<(BlockNo, u32)>,
    /// Cached blocks (slots whose `mem` is used).
    used: u64,
    /// Record blocks where `mem` may differ from `disk`.
    changed: BTreeSet<u64>,
    /// The epoch the next commit writes.
    pub(super) epoch: u64,
    pub(super) backing_unflushed: bool,
    pub(super) cache_unflushed: bool,
    /// Queued contiguous backing writes from `run_start`.
    pub(super) run_start: u64,
    pub(super) run: Vec<u8>,
    pub(super) stats: Stats,
    pub(super) removed: RemovalLog,
    pub(super) drained: Vec<(BlockNo, Slot)>,
    /// Blocks removed during the current controller call and their slots (a dirty victim is
    /// read after the policy removed it).
    pub(super) recent: Vec<(BlockNo, u32)>,
    pub(super) failed: Option<String>,
}

impl<C: BlockDevice, B: BlockDevice> Core<C, B> {
    /// The core over `words` (one per slot, `mem` = `disk`, as [`word_of`] makes them), the
    /// newest epoch recorded being `newest_epoch`.
    pub(super) fn new(
        cache: C,
        backing: B,
        sb: Superblock,
        words: Vec<u64>,
        newest_epoch: u64,
        removed: RemovalLog,
    ) -> Self {
        let slots = sb.layout.slots as usize;
        debug_assert_eq!(words.len(), slots);
        let fresh = words.iter().rposition(|&w| w != 0).map_or(0, |p| p + 1) as u32;
        let ready: Vec<u32> = (0..fresh).rev().filter(|&p| words[p as usize] == 0).collect();
        let used = words.iter().filter(|&&w| w & MEM_USED != 0).count() as u64;
        Core {
            cache,
            backing,
            phys: vec![NO_SLOT; sb.capacity as usize],
            sb,
            words,
            ready,
            fresh,
            pending: Vec::new(),
            pending_clean: FxHashMap::default(),
            pending_clean_more: Vec::new(),
            used,
            changed: BTreeSet::new(),
            epoch: newest_epoch + 1,
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

    /// Heap bytes of the data path's bookkeeping (not the policy's).
    pub(super) fn heap_bytes(&self) -> usize {
        use std::mem::size_of;
        self.words.capacity() * 8
            + self.phys.capacity() * 4
            + (self.ready.capacity() + self.pending.capacity()) * 4
            + self.pending_clean.capacity() * (size_of::<(BlockNo, u32)>() + 1)
            + self.pending_clean_more.capacity() * size_of::<(BlockNo, u32)>()
            + self.changed.len() * 3 * size_of::<u64>()
            + self.run.capacity()
    }

    pub(super) fn name(&self) -> String {
        format!("cache {} over {}", self.cache.name(), self.backing.name())
    }

    pub(super) fn check_ok(&self) -> Result<()> {
        match &self.failed {
            None => Ok(()),
            Some(why) => Err(StlError::Failed {
                device: self.name(),
                detail: format!("an earlier error stopped the cache ({why}); open it again"),
            }),
        }
    }

    pub(super) fn fail(&mut self, e: &StlError) {
        if self.failed.is_none() {
            self.failed = Some(e.to_string());
        }
    }

    /// Physical slots.
    pub(super) fn slots(&self) -> u32 {
        self.words.len() as u32
    }

    /// The block slot `p` caches, if it is in use, and whether it is dirty.
    #[inline]
    pub(super) fn cached(&self, p: u32) -> Option<(BlockNo, bool)> {
        let w = self.words[p as usize];
        (w & MEM_USED != 0).then_some((w & BLOCK_BITS, w & MEM_DIRTY != 0))
    }

    /// The durable record of slot `p`: `(block, dirty)` when used.
    #[inline]
    pub(super) fn durable(&self, p: u32) -> Option<(BlockNo, bool)> {
        let w = self.words[p as usize];
        (w & DISK_USED != 0).then_some((w & BLOCK_BITS, w & DISK_DIRTY != 0))
    }

    /// The physical slot of block `b` held in policy slot `s`, if `b` is cached there.
    #[inline]
    pub(super) fn phys_of(&self, s: Slot, b: BlockNo) -> Option<u32> {
        let p = *self.phys.get(s as usize)?;
        (p != NO_SLOT && self.cached(p).is_some_and(|(x, _)| x == b)).then_some(p)
    }

    /// Records that policy slot `s` holds the block cached in physical slot `p`.
    pub(super) fn map_policy_slot(&mut self, s: Slot, p: u32) {
        self.phys[s as usize] = p;
    }

    /// Iterates the cached blocks and their slots, in slot order.
    pub(super) fn cached_blocks(&self) -> impl Iterator<Item = (BlockNo, u32, bool)> + '_ {
        self.words
            .iter()
            .enumerate()
            .filter(|(_, &w)| w & MEM_USED != 0)
            .map(|(p, &w)| (w & BLOCK_BITS, p as u32, w & MEM_DIRTY != 0))
    }

    /// Number of cached blocks.
    pub(super) fn used(&self) -> u64 {
        self.used
    }

    /// Sets slot `p`'s in-memory record: `Some((block, dirty))` or free.
    pub(super) fn set_rec(&mut self, p: u32, rec: Option<(BlockNo, bool)>) {
        let w = self.words[p as usize];
        let mem = match rec {
            Some((b, dirty)) => {
                debug_assert!(
                    w & DISK_USED == 0 || w & BLOCK_BITS == b,
                    "slot {p}: mem and disk would name two blocks"
                );
                (b & BLOCK_BITS) | MEM_USED | if dirty { MEM_DIRTY } else { 0 }
            }
            None => 0,
        };
        let old = w & (BLOCK_BITS | MEM_USED | MEM_DIRTY);
        if old == mem || (old & MEM_USED == 0 && mem == 0) {
            return;
        }
        if (old & MEM_USED != 0) != (mem != 0) {
            if mem != 0 {
                self.used += 1;
            } else {
                self.used -= 1;
            }
        }
        let keep = w & (DISK_USED | DISK_DIRTY | PENDING);
        let block = if mem != 0 {
            mem & BLOCK_BITS
        } else if keep & DISK_USED != 0 {
            w & BLOCK_BITS
        } else {
            0
        };
        self.words[p as usize] = keep | block | (mem & (MEM_USED | MEM_DIRTY));
        self.changed.insert(Layout::record_block_of(p));
    }

    pub(super) fn read_slot(&mut self, p: u32, buf: &mut [u8]) -> Result<()> {
        self.cache.read(self.sb.layout.slot_lba(p), buf)?;
        self.stats.cache_blocks_read += 1;
        Ok(())
    }

    pub(super) fn write_slot(&mut self, p: u32, data: &[u8]) -> Result<()> {
        debug_assert!(
            self.durable(p).is_none_or(|(_, dirty)| dirty),
            "slot {p}: data written under a durable clean record"
        );
        self.cache.write(self.sb.layout.slot_lba(p), data)?;
        self.cache_unflushed = true;
        self.stats.cache_blocks_written += 1;
        Ok(())
    }

    pub(super) fn cache_flush(&mut self) -> Result<()> {
        self.cache.flush()?;
        self.cache_unflushed = false;
        self.stats.cache_flushes += 1;
        Ok(())
    }

    fn pop_ready(&mut self) -> Option<u32> {
        if let Some(p) = self.ready.pop() {
            return Some(p);
        }
        if self.fresh < self.slots() {
            self.fresh += 1;
            return Some(self.fresh - 1);
        }
        None
    }

    /// A ready slot, committing first when none is left.
    pub(super) fn alloc(&mut self) -> Result<u32> {
        if self.ready.is_empty() && self.fresh == self.slots() {
            self.stats.forced_commits += 1;
            self.commit()?;
        }
        let p = self.pop_ready().ok_or_else(|| internal("no free slot after a commit"))?;
        debug_assert!(self.words[p as usize] == 0, "slot {p} allocated but not ready");
        Ok(p)
    }

    /// Frees slot `p` in memory: ready at once if its durable record is free, else pending.
    pub(super) fn release(&mut self, p: u32) {
        self.set_rec(p, None);
        match self.durable(p) {
            None => {
                self.words[p as usize] = 0;
                self.ready.push(p);
            }
            Some((b, dirty)) => {
                self.words[p as usize] |= PENDING;
                self.pending.push(p);
                if !dirty {
                    if let Some(q) = self.pending_clean.insert(b, p) {
                        self.pending_clean_more.push((b, q));
                    }
                }
            }
        }
    }

    /// Frees the slots of the blocks the policy removed since the last call.
    pub(super) fn process_removed(&mut self) {
        {
            let mut log = self.removed.lock().expect("removal log");
            if log.removed.is_empty() {
                return;
            }
            std::mem::swap(&mut log.removed, &mut self.drained);
        }
        let drained = std::mem::take(&mut self.drained);
        for &(b, s) in &drained {
            match self.phys_of(s, b) {
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

    /// The physical slot of block `b`, being accessed in the current controller call.
    pub(super) fn current_slot(&self, b: BlockNo) -> Option<u32> {
        let cur = self.removed.lock().expect("removal log").current;
        match cur {
            Some((x, s)) if x == b => self.phys_of(s, b),
            _ => None,
        }
    }

    /// Makes `data` block `b`'s cached copy (`dirty`: it is the host's write). `b` is the block
    /// of the current controller call.
    pub(super) fn store(&mut self, b: BlockNo, data: &[u8], dirty: bool) -> Result<()> {
        let s = match self.removed.lock().expect("removal log").current {
            Some((x, s)) if x == b => s,
            _ => return Err(internal(format!("block {b} stored without a policy slot"))),
        };
        match self.phys_of(s, b) {
            Some(p) => {
                let d = self.durable(p);
                let dirty = dirty || self.cached(p).is_some_and(|(_, d)| d);
                if d.is_none_or(|(x, dd)| x == b && dd) {
                    // Overwrite in place: the durable record is free, or names this block dirty
                    // (either copy is then an acceptable value of the block).
                    self.write_slot(p, data)?;
                    self.set_rec(p, Some((b, dirty)));
                } else {
                    // The durable record says clean: the old copy must stay readable until a
                    // commit names the new slot (copy on write).
                    let q = self.alloc()?;
                    self.write_slot(q, data)?;
                    self.set_rec(q, Some((b, dirty)));
                    self.map_policy_slot(s, q);
                    self.release(p);
                }
            }
            None => {
                let q = self.alloc()?;
                self.write_slot(q, data)?;
                self.set_rec(q, Some((b, dirty)));
                self.map_policy_slot(s, q);
            }
        }
        Ok(())
    }

    /// Queues a backing write of block `b`, merging contiguous blocks. First releases, durably,
    /// any pending slot whose durable record names `b` as clean (after this write it would be
    /// stale).
    pub(super) fn queue_backing_write(&mut self, b: BlockNo, data: &[u8]) -> Result<()> {
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
    pub(super) fn flush_run(&mut self) -> Result<()> {
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
    pub(super) fn unplug(&mut self) -> Result<()> {
        self.flush_run()?;
        self.backing.unplug()
    }

    pub(super) fn backing_read(&mut self, lba: u64, buf: &mut [u8]) -> Result<()> {
        self.flush_run()?;
        self.backing.read(lba, buf)?;
        self.stats.backing_blocks_read += (buf.len() / BLOCK) as u64;
        Ok(())
    }

    /// The durable records of record block `rb` (its slots, in order).
    fn disk_records(&self, rb: u64, epoch: u64) -> Vec<Record> {
        let r = self.sb.layout.slots_of_block(rb);
        r.map(|p| match self.durable(p) {
            Some((block, dirty)) => Record { block, epoch, used: true, dirty },
            None => Record::FREE,
        })
        .collect()
    }

    /// Writes free records for the pending slots whose durable record names `b` as clean, and
    /// flushes the cache device: from then on no record can make `b` read its old copy.
    ///
    /// The other records of each record block written keep their content and are stamped with
    /// the last commit's epoch, the newest any durable record can have: durable records name a
    /// block at most once between commits, and a later commit's records carry a higher epoch,
    /// so no comparison of two records of one block changes.
    pub(super) fn retire_clean(&mut self, b: BlockNo) -> Result<()> {
        if self.pending_clean.is_empty() {
            return Ok(());
        }
        let mut ps: Vec<u32> = self.pending_clean.remove(&b).into_iter().collect();
        if !self.pending_clean_more.is_empty() {
            self.pending_clean_more.retain(|&(x, p)| {
                if x == b {
                    ps.push(p);
                }
                x != b
            });
        }
        ps.retain(|&p| self.words[p as usize] & PENDING != 0 && self.durable(p) == Some((b, false)));
        if ps.is_empty() {
            return Ok(());
        }
        let mut rbs: Vec<u64> = ps.iter().map(|&p| Layout::record_block_of(p)).collect();
        rbs.sort_unstable();
        rbs.dedup();
        let mut buf = vec![0u8; BLOCK];
        for rb in rbs {
            let r = self.sb.layout.slots_of_block(rb);
            let mut img = self.disk_records(rb, self.epoch - 1);
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
            self.words[p as usize] = 0;
            self.ready.push(p);
        }
        self.stats.retirements += 1;
        Ok(())
    }

    /// The blocks in `range` that a pending slot's durable record names as clean.
    pub(super) fn pending_clean_in(&self, range: std::ops::Range<BlockNo>) -> Vec<BlockNo> {
        let mut v: Vec<BlockNo> = self
            .pending_clean
            .keys()
            .chain(self.pending_clean_more.iter().map(|(b, _)| b))
            .copied()
            .filter(|b| range.contains(b))
            .collect();
        v.sort_unstable();
        v.dedup();
        v
    }

    /// Whether `mem` differs from `disk` in record block `rb`.
    fn block_changed(&self, rb: u64) -> bool {
        let r = self.sb.layout.slots_of_block(rb);
        self.words[r.start as usize..r.end as usize].iter().any(|&w| {
            let mem_used = w & MEM_USED != 0;
            mem_used != (w & DISK_USED != 0) || (mem_used && (w & MEM_DIRTY != 0) != (w & DISK_DIRTY != 0))
        })
    }

    /// The commit: backing writes issued and flushed, slot data flushed, changed record blocks
    /// written (every used record stamped with this commit's epoch), cache device flushed; then
    /// pending slots are ready.
    pub(super) fn commit(&mut self) -> Result<()> {
        self.flush_run()?;
        let l = self.sb.layout;
        let blocks: Vec<u64> = self.changed.iter().copied().filter(|&rb| self.block_changed(rb)).collect();
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
            let mut img: Vec<Record> = Vec::with_capacity(layout::RECORDS_PER_BLOCK as usize);
            let mut i = 0;
            while i < blocks.len() {
                let mut j = i + 1;
                while j < blocks.len() && blocks[j] == blocks[j - 1] + 1 && ((j - i) as u64) < RECORD_CHUNK {
                    j += 1;
                }
                let mut buf = vec![0u8; (j - i) * BLOCK];
                for (k, &rb) in blocks[i..j].iter().enumerate() {
                    img.clear();
                    img.extend(l.slots_of_block(rb).map(|p| match self.cached(p) {
                        Some((block, dirty)) => Record { block, epoch: self.epoch, used: true, dirty },
                        None => Record::FREE,
                    }));
                    layout::encode_records(rb, self.sb.cache_id, &img, &mut buf[k * BLOCK..(k + 1) * BLOCK]);
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
            for w in &mut self.words[r.start as usize..r.end as usize] {
                let mut x = *w & !(DISK_USED | DISK_DIRTY);
                if x & MEM_USED != 0 {
                    x |= DISK_USED;
                }
                if x & MEM_DIRTY != 0 {
                    x |= DISK_DIRTY;
                }
                if x & MEM_USED == 0 {
                    x &= PENDING; // free on both sides: no block named
                }
                *w = x;
            }
        }
        for p in std::mem::take(&mut self.pending) {
            let w = self.words[p as usize];
            if w & PENDING != 0 {
                debug_assert!(w & (DISK_USED | MEM_USED) == 0, "slot {p} still pending after a commit");
                self.words[p as usize] = 0;
                self.ready.push(p);
            }
        }
        self.pending_clean.clear();
        self.pending_clean_more.clear();
        if !blocks.is_empty() {
            self.epoch += 1;
            self.stats.commits += 1;
        }
        Ok(())
    }
}
