//! Formatting a cache device, and opening one: the scan of its superblock and slot records,
//! and the recovery of the cached blocks they name.

use super::slots::Core;
use super::{internal, CachedDevice, RECORD_CHUNK};
use crate::layout::{self, Layout, Record, State, Superblock};
use crate::observe::{Observed, RemovalLog};
use crate::CacheOptions;
use rustc_hash::FxHashMap;
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
}
