//! The devices under the cache and the slot bookkeeping: slot states and records, the backing
//! write queue, clean-slot retirement and the commit.

use super::{internal, MAX_RUN_BLOCKS, RECORD_CHUNK};
use crate::layout::{self, Layout, Record, Superblock};
use crate::observe::RemovalLog;
use crate::Stats;
use rustc_hash::FxHashMap;
use shingled_core::BlockNo;
use shingled_stl::{BlockDevice, Result, StlError, BLOCK};
use std::collections::BTreeSet;

/// Where a physical slot stands (see the state diagram in the crate documentation).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum SlotState {
    /// Free in memory and on the device: its data may be overwritten.
    Ready,
    /// Holds a cached block.
    Used,
    /// Free in memory, but its durable record still names a block: its data must stay until a
    /// commit (or a retirement) has written the free record.
    Pending,
}

/// The devices and the slot bookkeeping, apart from the controller (so that an
/// [`Io`](shingled_sim::controller::Io) can borrow it while the controller runs).
pub(super) struct Core<C, B> {
    pub(super) cache: C,
    pub(super) backing: B,
    pub(super) sb: Superblock,
    /// Slot records as they should be (committed by the next commit).
    pub(super) mem: Vec<Record>,
    /// Slot records as the last commit (or retirement) left them on the device.
    pub(super) disk: Vec<Record>,
    pub(super) state: Vec<SlotState>,
    /// Ready slots, the next to use last.
    pub(super) ready: Vec<u32>,
    /// Pending slots (may hold stale entries: check `state`).
    pub(super) pending: Vec<u32>,
    /// Pending slots whose durable record names a block as clean, by block: released early
    /// before that block is written to the backing device.
    pub(super) pending_clean: FxHashMap<BlockNo, Vec<u32>>,
    /// Cached block → slot (mirrors the controller's block table between requests).
    pub(super) loc: FxHashMap<BlockNo, u32>,
    /// Record blocks where `mem` may differ from `disk`.
    pub(super) changed: BTreeSet<u64>,
    /// The epoch the next commit writes.
    pub(super) epoch: u64,
    pub(super) backing_unflushed: bool,
    pub(super) cache_unflushed: bool,
    /// Queued contiguous backing writes from `run_start`.
    pub(super) run_start: u64,
    pub(super) run: Vec<u8>,
    pub(super) stats: Stats,
    pub(super) removed: RemovalLog,
    pub(super) drained: Vec<BlockNo>,
    /// Blocks removed during the current controller call and their slots (a dirty victim is
    /// read after the policy removed it).
    pub(super) recent: Vec<(BlockNo, u32)>,
    pub(super) failed: Option<String>,
}

impl<C: BlockDevice, B: BlockDevice> Core<C, B> {
    pub(super) fn new(cache: C, backing: B, sb: Superblock, disk: Vec<Record>, removed: RemovalLog) -> Self {
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

    /// Sets slot `p`'s in-memory record (a new content gets the current epoch).
    pub(super) fn set_rec(&mut self, p: u32, rec: Record) {
        let rec = if rec.used { Record { epoch: self.epoch, ..rec } } else { Record::FREE };
        if !self.mem[p as usize].same(&rec) {
            self.mem[p as usize] = rec;
            self.changed.insert(Layout::record_block_of(p));
        }
    }

    pub(super) fn read_slot(&mut self, p: u32, buf: &mut [u8]) -> Result<()> {
        self.cache.read(self.sb.layout.slot_lba(p), buf)?;
        self.stats.cache_blocks_read += 1;
        Ok(())
    }

    pub(super) fn write_slot(&mut self, p: u32, data: &[u8]) -> Result<()> {
        debug_assert!(
            !self.disk[p as usize].used || self.disk[p as usize].dirty,
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

    /// A ready slot, committing first when none is left.
    pub(super) fn alloc(&mut self) -> Result<u32> {
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
    pub(super) fn release(&mut self, p: u32) {
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
    pub(super) fn process_removed(&mut self) {
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
    pub(super) fn store(&mut self, b: BlockNo, data: &[u8], dirty: bool) -> Result<()> {
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

    /// Writes free records for the pending slots whose durable record names `b` as clean, and
    /// flushes the cache device: from then on no record can make `b` read its old copy.
    pub(super) fn retire_clean(&mut self, b: BlockNo) -> Result<()> {
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
    pub(super) fn commit(&mut self) -> Result<()> {
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
