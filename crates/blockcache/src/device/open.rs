//! Formatting a cache device, and opening one: the scan of its superblock and slot records,
//! and the recovery of the cached blocks they name.

use super::slots::{word_of, Core, DISK_DIRTY, DISK_USED};
use super::{internal, CachedDevice, RECORD_CHUNK};
use crate::layout::{self, Layout, Record, State, Superblock};
use crate::observe::{Observed, RemovalLog};
use crate::CacheOptions;
use shingled_cache::{Cache, PolicyContext};
use shingled_core::{BandMap, BlockNo, ByteSize, SplitMix64};
use shingled_stl::invalid;
use shingled_stl::{BlockDevice, Result, StlError, BLOCK};
use std::sync::Arc;

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
        block_span: None,
        capacity_blocks: sb.capacity,
        bands,
        pb_blocks: s.pb_blocks,
        seed: s.seed,
        costs: s.costs,
    };
    let policy = s.policy.build(&ctx).map_err(|e| invalid("policy", s.policy.name(), e.to_string()))?;
    Ok(Cache::new(sb.capacity, Box::new(Observed { inner: policy, log: log.clone() })))
}

/// What the metadata area says: the superblock, every slot's durable record as a slot word,
/// and the slots holding the newest record of their block ("winners"), oldest first.
pub(crate) struct Scan {
    pub sb: Superblock,
    pub words: Vec<u64>,
    pub winners: Vec<u32>,
    /// Slots whose record is used.
    pub used: u64,
    /// The highest epoch recorded (0: none).
    pub newest_epoch: u64,
}

impl Scan {
    /// The durable record of slot `p` as `(block, dirty)`, if used.
    pub fn record(&self, p: u32) -> Option<(BlockNo, bool)> {
        let w = self.words[p as usize];
        (w & DISK_USED != 0).then_some((w & ((1 << 56) - 1), w & DISK_DIRTY != 0))
    }
}

/// Calls `f(slot, record)` for every used record of the record area, in slot order.
fn each_record<M: BlockDevice + ?Sized>(
    dev: &mut M,
    sb: &Superblock,
    mut f: impl FnMut(u32, &Record) -> Result<()>,
) -> Result<()> {
    let name = dev.name();
    let l = sb.layout;
    let mut recs = vec![Record::FREE; layout::RECORDS_PER_BLOCK as usize];
    let mut rb = 0u64;
    let mut buf = vec![0u8; RECORD_CHUNK as usize * BLOCK];
    while rb < l.record_blocks {
        let n = RECORD_CHUNK.min(l.record_blocks - rb);
        dev.read(l.record_start + rb, &mut buf[..n as usize * BLOCK])?;
        for k in 0..n {
            let r = l.slots_of_block(rb + k);
            let img = &buf[k as usize * BLOCK..(k as usize + 1) * BLOCK];
            let recs = &mut recs[..r.len()];
            layout::decode_records(&name, rb + k, sb.cache_id, img, recs)?;
            for (i, rec) in recs.iter().enumerate() {
                if rec.used {
                    f(r.start + i as u32, rec)?;
                }
            }
        }
        rb += n;
    }
    Ok(())
}

/// The exact epoch of slot `p`'s record (read again: the scan keeps 32 bits of it).
fn epoch_of<M: BlockDevice + ?Sized>(dev: &mut M, sb: &Superblock, p: u32) -> Result<u64> {
    let rb = Layout::record_block_of(p);
    let r = sb.layout.slots_of_block(rb);
    let mut b = vec![0u8; BLOCK];
    dev.read(sb.layout.record_start + rb, &mut b)?;
    let mut recs = vec![Record::FREE; r.len()];
    layout::decode_records(&dev.name(), rb, sb.cache_id, &b, &mut recs)?;
    Ok(recs[(p - r.start) as usize].epoch)
}

/// Reads the superblock of `dev` (block 0) alone.
pub(crate) fn superblock<M: BlockDevice + ?Sized>(dev: &mut M) -> Result<Superblock> {
    let mut b = vec![0u8; BLOCK];
    dev.read(0, &mut b)?;
    Superblock::decode(&dev.name(), &b)
}

/// Reads the superblock and the record area of `dev` (never the data slots), in bounded
/// memory: 8 bytes per slot for the records, 4 more per slot while the newest record of each
/// block is found.
pub(crate) fn scan<M: BlockDevice + ?Sized>(dev: &mut M) -> Result<Scan> {
    let name = dev.name();
    let sb = superblock(dev)?;
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
    let mut words = vec![0u64; l.slots as usize];
    // Epochs as 32 bits, exact below 2^32 - 1 (they are only compared; duplicates are
    // resolved with the exact epochs, read again).
    let mut epochs = vec![0u32; l.slots as usize];
    let mut newest = 0u64;
    let mut used = 0u64;
    each_record(dev, &sb, |p, r| {
        if r.block >= sb.backing_blocks {
            return Err(StlError::Corrupt {
                device: name.clone(),
                what: format!(
                    "slot {p} records block {} beyond the backing device's {} blocks",
                    r.block, sb.backing_blocks
                ),
            });
        }
        words[p as usize] = word_of(r);
        epochs[p as usize] = r.epoch.min(u32::MAX as u64) as u32;
        newest = newest.max(r.epoch);
        used += 1;
        Ok(())
    })?;
    if newest >= u32::MAX as u64 {
        // Keep the newest 2^32 - 1 epochs apart; older ones tie at 0.
        let base = newest - (u32::MAX as u64 - 1);
        each_record(dev, &sb, |p, r| {
            epochs[p as usize] = r.epoch.saturating_sub(base) as u32;
            Ok(())
        })?;
    }
    let block = |p: u32| words[p as usize] & ((1 << 56) - 1);
    let mut by_block: Vec<u32> = (0..l.slots).filter(|&p| words[p as usize] & DISK_USED != 0).collect();
    by_block.sort_unstable_by_key(|&p| (block(p), std::cmp::Reverse(epochs[p as usize]), p));
    let mut winners: Vec<u32> = Vec::with_capacity(by_block.len());
    let mut i = 0;
    while i < by_block.len() {
        let b = block(by_block[i]);
        let mut j = i + 1;
        while j < by_block.len() && block(by_block[j]) == b {
            j += 1;
        }
        if j == i + 1 {
            winners.push(by_block[i]);
        } else {
            // Records of one block (a torn commit): the highest exact epoch wins.
            let mut best: Option<(u64, u32)> = None;
            for &p in &by_block[i..j] {
                let e = epoch_of(dev, &sb, p)?;
                match best {
                    Some((be, q)) if be == e => {
                        return Err(StlError::Corrupt {
                            device: name,
                            what: format!("slots {q} and {p} both record block {b} at epoch {e}"),
                        })
                    }
                    Some((be, _)) if be > e => {}
                    _ => best = Some((e, p)),
                }
            }
            winners.push(best.expect("a run has a record").1);
        }
        i = j;
    }
    drop(by_block);
    winners.sort_unstable_by_key(|&p| (epochs[p as usize], p));
    Ok(Scan { sb, words, winners, used, newest_epoch: newest })
}

/// Checks `opts` against a cache device of `device_blocks` and a backing device of
/// `backing_blocks`, and returns the superblock a format would write. Builds the policy at a
/// small capacity to check its parameters, and refuses a cache whose serving index would not
/// fit this machine's memory ([`crate::memory::check_serving`]) — before anything is
/// allocated per slot or written.
pub(crate) fn plan_format(
    device_blocks: u64,
    backing_blocks: u64,
    opts: &CacheOptions,
) -> Result<Superblock> {
    let layout = Layout::new(device_blocks, opts.slots)?;
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
            format!("must be 1 to {} blocks: the {slots} slots less at least one reserve slot", slots - 1),
        ));
    }
    let sb = Superblock {
        state: State::Attached,
        cache_id: new_cache_id(),
        backing_blocks,
        capacity,
        layout,
        setup: opts.setup.clone(),
    };
    crate::memory::check_serving(&sb)?;
    sb.encode()?;
    Ok(sb)
}

/// Writes the format `sb` describes on `cache`: the record area discarded (or, when the device
/// cannot discard, written with zeros in chunks: free records), then the superblock, each
/// followed by a flush. Memory: one chunk of record blocks, whatever the size.
pub(crate) fn write_format<C: BlockDevice + ?Sized>(cache: &mut C, sb: &Superblock) -> Result<()> {
    let layout = sb.layout;
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
    cache.flush()
}

impl<C: BlockDevice, B: BlockDevice> CachedDevice<C, B> {
    /// Formats `cache` as a cache of `backing` and returns the (empty) cached device. Nothing is
    /// written to `backing`. The records area is discarded (or, when the device cannot discard,
    /// written with zeros: free records) and the superblock written, each followed by a flush.
    pub fn format(mut cache: C, backing: B, opts: &CacheOptions) -> Result<Self> {
        let sb = plan_format(cache.capacity_blocks(), backing.capacity_blocks(), opts)?;
        let removed = RemovalLog::default();
        let meta = build_cache(&sb, &removed)?; // the policy builds before anything is written
        write_format(&mut cache, &sb)?;
        let slots = sb.layout.slots as usize;
        // zeroed pages: a fresh cache's slot words cost memory only as slots are used
        let core = Core::new(cache, backing, sb, vec![0u64; slots], 0, removed);
        Ok(Self::assemble(core, meta))
    }

    /// Opens a formatted cache device over its backing device, recovering after a power cut:
    /// every slot whose record holds the newest record of its block is cached again (clean or
    /// dirty as recorded), the others are freed (durably, before any request). The policy
    /// starts afresh: blocks are inserted oldest record first; its order, counts and ghost
    /// lists are not persisted.
    pub fn open(mut cache: C, backing: B) -> Result<Self> {
        let sb = superblock(&mut cache)?;
        crate::memory::check_serving(&sb)?;
        let Scan { sb, words, winners, newest_epoch, .. } = scan(&mut cache)?;
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
        let removed = RemovalLog::default();
        let mut core = Core::new(cache, backing, sb, words, newest_epoch, removed.clone());
        let mut buf = vec![0u8; BLOCK];
        for &p in &winners[..keep_from] {
            if let Some((block, true)) = core.durable(p) {
                core.read_slot(p, &mut buf)?;
                core.queue_backing_write(block, &buf)?;
            }
        }
        // Every used slot that is not kept is freed: mark the kept ones by their place in the
        // winners (sorted by slot, binary search), 4 bytes each.
        let mut kept: Vec<u32> = winners[keep_from..].to_vec();
        kept.sort_unstable();
        for p in 0..core.slots() {
            if core.durable(p).is_some() && kept.binary_search(&p).is_err() {
                core.release(p);
            }
        }
        drop(kept);
        core.commit()?;
        let mut meta = build_cache(&core.sb, &removed)?;
        let mut evicted = Vec::new();
        for &p in &winners[keep_from..] {
            let (block, dirty) = core.durable(p).ok_or_else(|| internal("a kept slot lost its record"))?;
            meta.insert(block, dirty, &mut evicted);
            let s = meta.table().slot_of(block).ok_or_else(|| internal("a recovered block is not cached"))?;
            core.map_policy_slot(s, p);
        }
        if !evicted.is_empty() {
            return Err(internal("recovery evicted a block"));
        }
        Ok(Self::assemble(core, meta))
    }
}
