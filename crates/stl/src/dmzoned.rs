//! [`DmZoned`]: a dm-zoned-style block device over any [`ZonedDevice`] — `MemZoned`, `FileZoned`
//! and, with the zoned crate's `blkdev` feature, a real host-managed SMR drive. It is the
//! "what Linux gives you" baseline: the same zone-level indirection, conventional-zone write
//! buffering, reclaim thresholds and two-set metadata as Linux's dm-zoned target (facts from
//! Linux's `Documentation/admin-guide/device-mapper/dm-zoned.rst` and
//! `drivers/md/dm-zoned-reclaim.c`, and github.com/westerndigitalcorporation/dm-zoned-tools'
//! README; no kernel code was used).
//!
//! # Layout
//!
//! The device exposes 4 KiB blocks. Zones are used as follows (`bpz` = zone capacity / 4 KiB):
//!
//! - **Metadata zones**: the first `meta_zones` conventional zones hold two metadata sets, the
//!   primary (set 0) and the secondary (set 1), each `set_blocks` blocks: a superblock (magic,
//!   version, set index, **generation**, the geometry, the reserve, the chunk count, and a
//!   CRC32C over the CRC32Cs of the other blocks; its own CRC32C in the last 4 bytes), the
//!   **chunk mapping table** (8 bytes per chunk: data zone id and buffer zone id, `u32`
//!   little-endian, `u32::MAX` for none; sized for every usable sequential zone) and the
//!   **validity bitmaps** (`bpz` bits for every zone of the device, packed). The set size
//!   depends on the geometry only, so set 1 is found even when set 0 is unreadable.
//! - **Random (buffer) zones**: the other conventional zones. A chunk's buffer zone takes the
//!   writes that cannot go to its data zone; block `k` of the chunk lives at block `k` of the
//!   buffer (written in place).
//! - **Sequential zones**: data zones of chunks, plus the free ones. `reserved_seq` of them
//!   (dm-zoned's `--seq`, default `seq_zones / 100` clamped to 1..=16) are not exposed.
//!
//! **Capacity**, exactly: `(usable sequential zones − reserved_seq) × bpz` blocks, where a runt
//! last zone is not usable. Random zones only buffer; they add no capacity. See
//! [`DmZonedGeometry::plan`].
//!
//! # Data path
//!
//! Logical block `lba` is block `k = lba % bpz` of chunk `c = lba / bpz`. A chunk is unmapped
//! (reads zeros), or mapped to a sequential **data zone** and/or a conventional **buffer
//! zone**; the bitmaps say, per block, whether it is valid in the data zone or in the buffer
//! (never both). Reads take each block from where it is valid, zeros otherwise.
//!
//! Writes of chunk `c`, block `k`:
//! - unmapped chunk: `k == 0` maps a free sequential zone as the data zone; otherwise a free
//!   random zone becomes the chunk's only zone (dm-zoned's "buffer as primary" form);
//! - data zone present and `k` equal to its write pointer: written **directly**, invalidating
//!   the block in the buffer;
//! - otherwise into the **buffer zone** at block `k` (allocating one), invalidating the block
//!   in the data zone.
//!
//! A zone left with no valid block is released (a buffer whose data zone emptied becomes the
//! chunk's only zone, as in dm-zoned). Discards only clear bits.
//!
//! # Reclaim
//!
//! Reclaiming a buffered chunk either **appends** the buffer's valid blocks to the data zone
//! (possible when they all lie at or after its write pointer; gaps are written as zeros and
//! stay invalid), or **copies** every valid block of buffer and data zone, in chunk order, to a
//! free sequential zone (gaps zero-filled, as dm-zoned does for sequential destinations) and
//! remaps the chunk to it. The victim is the least recently written buffered chunk (dm-zoned
//! reclaims LRU buffer zones). Triggers ([`ReclaimPolicy`]):
//!
//! - **busy**: before each write, if the share of unmapped random zones is `<= low_pct` (30%)
//!   reclaim starts, one chunk per write, and goes on until the share is `>= high_pct` (50%);
//! - **forced**: a write that needs a buffer when none is free reclaims (LRU, never the chunk
//!   being written) until one is;
//! - **idle**: [`DmZoned::idle`] accumulates idle time; after `idle_period` (10 s) without I/O,
//!   every buffered chunk is reclaimed; [`DmZoned::reclaim`] reclaims one on demand (as
//!   `dmsetup message <dev> 0 reclaim`).
//!
//! **Progress, not deadlock.** Every mapped chunk owns at most one sequential zone, and there
//! are `reserved_seq >= 1` more usable sequential zones than chunks, so when reclaim (or a new
//! chunk) needs a sequential zone, at least one is unmapped; if it is still waiting for a
//! commit (below), a metadata commit frees it. A write needing a buffer finds a free random
//! zone, or one waiting for a commit (commit), or a buffered chunk other than itself (at least
//! one random zone exists and the writer owns none): reclaiming that chunk releases its buffer
//! (free at once, or after one more commit). Each step frees a zone, so the loop is bounded
//! (and returns
//! [`StlError::NoSpace`] instead of spinning if a broken device ever breaks the count). This is
//! the hang dm-zoned had with only 2–3 cache zones, whose percentage trigger missed it.
//!
//! # Durability and the crash argument
//!
//! A **commit** ([`BlockDevice::flush`], or an allocation that finds no free zone while released
//! ones wait for a commit; also format and repair at open) is: flush the device (every
//! data write so far is durable and covered by its write pointer); write the changed metadata
//! blocks and a superblock with generation `g + 1` to the **secondary** set; flush; write the
//! same to the **primary** set; flush. Both sets hold the same state after a commit, which is
//! what lets each commit write only the changed blocks. A set is valid when its superblock
//! verifies and the CRCs of its blocks match the one the superblock carries, so a set torn by a
//! crash is invalid; only the set being written can be torn, so the other one is valid.
//! [`DmZoned::open`] takes the valid set with the highest generation and, if the two sets
//! differ, rewrites both in full (the stale one first).
//!
//! Claim: after a crash, the newest valid set `M` describes data that is on the device. Proof
//! sketch, by the rules the code keeps:
//!
//! 1. *Data before metadata.* The commit that wrote `M` flushed the device first, so every
//!    block `M` marks valid was durable, and below the durable write pointer of its sequential
//!    zone, before `M` was written.
//! 2. *Never overwrite what `M` points to, except in place of the same block.* New data goes
//!    (a) to a sequential zone at its write pointer, above every block `M` marks valid there
//!    (write pointers only grow until a reset); (b) to a buffer block `k` of the chunk that owns
//!    the buffer — if `M` marks that block valid, this *is* an overwrite of logical block `k`
//!    written after the flush, which may read old or new (torn at the device's write atomicity,
//!    as with dm-zoned); (c) to zones `M` does not reference at all.
//! 3. *No reuse before the commit that forgets.* A zone the last commit references is never
//!    given to another chunk or reset when it is released: it waits on a pending list until a
//!    commit that no longer references it completes **in both sets**; only then is it free (and
//!    reset, lazily, when next allocated). Reclaim therefore runs copy → remap → (a later)
//!    commit of the new mapping → reuse of the old zones, never in another order.
//! 4. Between the two halves of a commit, set `g + 1` (secondary) and set `g` (primary) both
//!    describe data still on the device by 3, so whichever survives is consistent.
//!
//! So every block acknowledged before the last completed flush reads back (it was in `M` or in
//! a later commit), and blocks written since read old or new. Writes between flushes are
//! durable at the latest at the next commit; a commit can come earlier (an allocation), which
//! only strengthens the guarantee. "Old or new" is per block only as far as the device writes a
//! block atomically: an overwrite in place (rule 2b) torn by a power cut can mix sectors of the
//! two versions on a device that tears 512-byte sectors (the crash tests' `SimStorage` does; a
//! 4Kn drive does not), exactly as under Linux's dm-zoned; every other write is out of place,
//! so a torn one is never seen after recovery. A failed device operation in a write, discard, reclaim or commit
//! puts the layer in a failed state (every later call fails with [`StlError::Failed`]): reopen
//! it, as one restarts a dm target.
//!
//! # What is not modelled
//!
//! Multiple zoned devices or a regular cache device (Linux ≥ 5.8), asynchronous reclaim with a
//! copy throttle (reclaim here runs in the caller's thread), on-demand loading of bitmaps (all
//! bitmaps of mapped zones are in memory: `bpz / 8` bytes per mapped zone), and devices with an
//! active-zone limit (ZNS-like: every partly written data zone stays active).

mod check;
mod meta;

pub use check::CheckReport;

use crate::block::{check_request, BlockDevice, BLOCK};
use crate::error::{invalid, Result, StlError};
use meta::{Layout, Super, BITS_PER_BLOCK, ENTRIES_PER_BLOCK, NONE, SPB};
use serde::Serialize;
use shingled_zoned::{DeviceInfo, ReportOption, ZoneCond, ZoneOp, ZonedDevice};
use std::collections::BTreeSet;
use std::time::Duration;

/// When reclaim runs (dm-zoned's constants by default).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct ReclaimPolicy {
    /// Reclaim starts when unmapped random zones are at most this share, in percent (30).
    pub low_pct: u32,
    /// Started reclaim goes on, one chunk per write, until the share reaches this (50).
    pub high_pct: u32,
    /// Idle time after which [`DmZoned::idle`] reclaims every buffered chunk (10 s).
    pub idle_period: Duration,
}

impl Default for ReclaimPolicy {
    fn default() -> Self {
        ReclaimPolicy { low_pct: 30, high_pct: 50, idle_period: Duration::from_secs(10) }
    }
}

/// How to format.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DmZonedConfig {
    /// Sequential zones reserved for reclaim (dm-zoned's `--seq`); `None`: the usable
    /// sequential zones / 100, clamped to 1..=16 (dm-zoned's default is 16, minimum 1).
    pub reserved_seq: Option<u64>,
    /// Reclaim policy of the returned device (not stored on the device).
    pub policy: ReclaimPolicy,
}

/// How a device is divided (see the module docs).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct DmZonedGeometry {
    /// Bytes per block (4096).
    pub block_bytes: u64,
    /// Blocks per zone, i.e. per chunk.
    pub blocks_per_zone: u64,
    /// Zones of the device.
    pub nr_zones: u64,
    /// Conventional zones holding the two metadata sets (zones `0..meta_zones`).
    pub meta_zones: u64,
    /// Conventional zones used as buffers (`meta_zones..nr_conv`).
    pub random_zones: u64,
    /// First sequential zone (= the device's conventional zone count).
    pub first_seq_zone: u64,
    /// Sequential zones with the full capacity.
    pub seq_zones: u64,
    /// Zones not used: a runt last zone.
    pub unused_zones: u64,
    /// Sequential zones reserved for reclaim.
    pub reserved_seq: u64,
    /// Chunks exposed: `seq_zones − reserved_seq`.
    pub nr_chunks: u64,
    /// Capacity in blocks: `nr_chunks × blocks_per_zone`.
    pub capacity_blocks: u64,
    /// Blocks of one metadata set.
    pub set_blocks: u64,
    /// Mapping-table blocks per set.
    pub map_blocks: u64,
    /// Bitmap blocks per set.
    pub bitmap_blocks: u64,
}

impl DmZonedGeometry {
    /// The geometry `format` would give `info` with `reserved_seq` (see [`DmZonedConfig`]).
    pub fn plan(info: &DeviceInfo, reserved_seq: Option<u64>) -> Result<DmZonedGeometry> {
        let lay = Layout::new(info).map_err(|(f, v, why)| invalid(f, v, why))?;
        DmZonedGeometry::from_layout(info, &lay, reserved_seq)
    }

    fn from_layout(info: &DeviceInfo, lay: &Layout, reserved_seq: Option<u64>) -> Result<DmZonedGeometry> {
        if info.max_active != 0 {
            return Err(invalid(
                "max_active",
                info.max_active,
                "dm-zoned keeps every partly written data zone active; devices with an active-zone limit \
                 (ZNS-like) are not supported",
            ));
        }
        if info.nr_conv < lay.meta_zones + 1 {
            return Err(invalid(
                "nr_conv",
                info.nr_conv,
                format!(
                    "need at least {} conventional zones: {} for the two metadata sets ({} blocks each) and \
                     one more as a write buffer",
                    lay.meta_zones + 1,
                    lay.meta_zones,
                    lay.set_blocks
                ),
            ));
        }
        if lay.seq_usable < 2 {
            return Err(invalid(
                "sequential zones",
                lay.seq_usable,
                "need at least 2 (one chunk and one reserved for reclaim)",
            ));
        }
        let reserved = reserved_seq.unwrap_or((lay.seq_usable / 100).clamp(1, 16));
        if reserved == 0 || reserved >= lay.seq_usable {
            return Err(invalid(
                "reserved_seq",
                reserved,
                format!("between 1 and {} (the usable sequential zones less one)", lay.seq_usable - 1),
            ));
        }
        let nr_chunks = lay.seq_usable - reserved;
        Ok(DmZonedGeometry {
            block_bytes: BLOCK as u64,
            blocks_per_zone: lay.bpz,
            nr_zones: lay.nr_zones,
            meta_zones: lay.meta_zones,
            random_zones: info.nr_conv - lay.meta_zones,
            first_seq_zone: info.nr_conv,
            seq_zones: lay.seq_usable,
            unused_zones: info.nr_seq() - lay.seq_usable,
            reserved_seq: reserved,
            nr_chunks,
            capacity_blocks: nr_chunks * lay.bpz,
            set_blocks: lay.set_blocks,
            map_blocks: lay.map_blocks,
            bitmap_blocks: lay.bitmap_blocks,
        })
    }

    /// Capacity in bytes.
    pub fn capacity_bytes(&self) -> u64 {
        self.capacity_blocks * self.block_bytes
    }
}

/// Counters and the current shape of the layer.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct DmZonedStats {
    /// Chunks exposed.
    pub chunks: u64,
    /// Chunks mapped to at least one zone.
    pub chunks_mapped: u64,
    /// Random zones in use as buffers (or as a chunk's only zone).
    pub buffer_zones_in_use: u64,
    /// Random zones free (allocatable now).
    pub free_random_zones: u64,
    /// Sequential zones free (allocatable now).
    pub free_seq_zones: u64,
    /// Zones released but still referenced by the last commit (free after the next one).
    pub pending_zones: u64,
    /// Chunks reclaimed.
    pub reclaims: u64,
    /// Reclaims that appended the buffer to the data zone (no new zone).
    pub reclaim_appends: u64,
    /// Valid blocks copied by reclaim.
    pub reclaim_blocks_copied: u64,
    /// Gap blocks reclaim wrote as zeros to keep a sequential zone sequential.
    pub reclaim_zero_blocks: u64,
    /// Reclaims forced by a write that found no free buffer.
    pub forced_reclaims: u64,
    /// Metadata commits (flushes with changes, allocations waiting for released zones, format,
    /// repair at open).
    pub metadata_commits: u64,
    /// Metadata blocks written (both sets, superblocks included).
    pub metadata_blocks_written: u64,
    /// Commit generation of the newest metadata set.
    pub generation: u64,
    /// Blocks written directly at a data zone's write pointer.
    pub direct_blocks: u64,
    /// Blocks written to buffer zones.
    pub buffered_blocks: u64,
    /// Zone resets issued (reuse of a freed sequential zone).
    pub zone_resets: u64,
    /// Bytes of memory held by the mapping, bitmaps and zone tables.
    pub map_memory_bytes: u64,
}

/// Where a chunk lives.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct ChunkMapping {
    /// The sequential data zone.
    pub data: Option<u64>,
    /// The conventional buffer zone (or the chunk's only zone when `data` is `None`).
    pub buffer: Option<u64>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Meta,
    Random,
    Seq,
    Unused,
}

impl std::fmt::Display for Kind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Kind::Meta => "metadata",
            Kind::Random => "random (buffer)",
            Kind::Seq => "sequential",
            Kind::Unused => "unused",
        })
    }
}

/// A dm-zoned-style block device over a zoned device (see the module docs).
pub struct DmZoned<D: ZonedDevice> {
    dev: D,
    info: DeviceInfo,
    lay: Layout,
    geo: DmZonedGeometry,
    policy: ReclaimPolicy,
    /// Per chunk: (data zone, buffer zone).
    map: Vec<(u32, u32)>,
    /// Per zone: the chunk it belongs to.
    owner: Vec<u32>,
    /// Per zone: write pointer in blocks (sequential zones).
    wp: Vec<u32>,
    /// Per zone: validity bitmap (None: no valid block).
    bits: Vec<Option<Box<[u64]>>>,
    /// Per zone: valid blocks.
    valid: Vec<u32>,
    /// Per zone: referenced by the last commit.
    committed: Vec<bool>,
    /// Per zone: read-only or offline at open (never allocated).
    bad: Vec<bool>,
    free_rnd: BTreeSet<u32>,
    free_seq: BTreeSet<u32>,
    pending_rnd: BTreeSet<u32>,
    pending_seq: BTreeSet<u32>,
    /// Per chunk: tick of its last write (LRU).
    last_use: Vec<u64>,
    tick: u64,
    generation: u64,
    /// Per payload block: CRC32C of its committed content (kept current at commits).
    block_crc: Vec<u32>,
    dirty: Vec<bool>,
    dirty_count: usize,
    /// Both sets hold generation `generation`.
    synced: bool,
    /// When not synced: the set holding the newest valid state.
    newest: u32,
    reclaiming: bool,
    idle_for: Duration,
    failed: Option<String>,
    stats: DmZonedStats,
    /// What open found wrong with the metadata sets ([`DmZoned::metadata_damage`]).
    damage: Vec<String>,
}

fn dev_err(what: impl std::fmt::Display) -> impl FnOnce(shingled_zoned::ZonedError) -> StlError {
    move |e| StlError::Failed { device: "dm-zoned".into(), detail: format!("{what}: {e}") }
}

impl<D: ZonedDevice> DmZoned<D> {
    /// Formats `dev`: resets every sequential zone and writes both metadata sets (generation 1,
    /// nothing mapped). Everything on the device is lost.
    pub fn format(mut dev: D, cfg: &DmZonedConfig) -> Result<DmZoned<D>> {
        let info = dev.info();
        let lay = Layout::new(&info).map_err(|(f, v, why)| invalid(f, v, why))?;
        let geo = DmZonedGeometry::from_layout(&info, &lay, cfg.reserved_seq)?;
        dev.zone_mgmt_all(ZoneOp::Reset).map_err(dev_err("resetting every zone to format"))?;
        let mut d = DmZoned::empty(dev, info, lay, geo, cfg.policy);
        let zones = d.dev.report_zones(0, 0, ReportOption::All)?;
        for z in d.seq_range() {
            let zone = &zones[z as usize];
            if matches!(zone.cond, ZoneCond::ReadOnly | ZoneCond::Offline) {
                d.bad[z as usize] = true;
            } else {
                d.free_seq.insert(z);
            }
        }
        for z in d.rnd_range() {
            d.free_rnd.insert(z);
        }
        d.block_crc = vec![0; lay.payload_blocks() as usize];
        d.synced = false;
        d.newest = 0;
        d.commit().inspect_err(|e| d.failed = Some(e.to_string()))?;
        Ok(d)
    }

    /// Opens a formatted device with the default [`ReclaimPolicy`].
    pub fn open(dev: D) -> Result<DmZoned<D>> {
        DmZoned::open_with(dev, ReclaimPolicy::default())
    }

    /// Opens a formatted device: loads the valid metadata set with the highest generation,
    /// checks it against the zones, and rewrites the sets if they differ (recovery after a crash
    /// during a commit). Metadata that does not verify is [`StlError::Corrupt`].
    pub fn open_with(dev: D, policy: ReclaimPolicy) -> Result<DmZoned<D>> {
        DmZoned::load_sets(dev, policy, true)
    }

    /// Loads a formatted device as [`DmZoned::open`] does but writes nothing, for checks: a
    /// commit a crash cut in half is left as it is (and named by
    /// [`DmZoned::metadata_damage`]); the device it returns must not be written.
    pub fn inspect(dev: D) -> Result<DmZoned<D>> {
        DmZoned::load_sets(dev, ReclaimPolicy::default(), false)
    }

    /// Bad or stale copies of the duplicated metadata found at open (a metadata set that does
    /// not verify, or the two sets at different generations), one line each naming the set
    /// and the one in use; recovery at a read-write open rewrites both sets.
    pub fn metadata_damage(&self) -> &[String] {
        &self.damage
    }

    fn load_sets(mut dev: D, policy: ReclaimPolicy, recover: bool) -> Result<DmZoned<D>> {
        let info = dev.info();
        let corrupt = |what: String| StlError::Corrupt { device: "dm-zoned".into(), what };
        let lay = Layout::new(&info).map_err(|(f, v, why)| {
            corrupt(format!("not a dm-zoned device: its {f} {v} cannot hold one: {why}"))
        })?;
        let a = meta::read_set(&mut dev, &lay, &info, 0)?;
        let b = meta::read_set(&mut dev, &lay, &info, 1)?;
        let name =
            |set: u32| if set == 0 { "metadata set 0 (primary)" } else { "metadata set 1 (secondary)" };
        let mut damage = Vec::new();
        let bad = |set: u32, why: &str, img: &meta::SetImage| {
            format!(
                "{} does not verify ({why}); {} (generation {}) is in use (a crash during a commit leaves this; \
                 opening the device read-write rewrites it)",
                name(set),
                name(img.sup.set),
                img.sup.generation
            )
        };
        let (img, other_ok) = match (a, b) {
            (Ok(x), Ok(y)) if x.sup.generation != y.sup.generation => {
                let (new, old) = if y.sup.generation > x.sup.generation { (y, x) } else { (x, y) };
                damage.push(format!(
                    "{} holds generation {}, {} generation {}: a commit cut by a crash (opening the device \
                     read-write completes it)",
                    name(old.sup.set),
                    old.sup.generation,
                    name(new.sup.set),
                    new.sup.generation
                ));
                (new, false)
            }
            (Ok(x), Ok(_)) => (x, true),
            (Ok(x), Err(e)) => {
                damage.push(bad(1, &e.why, &x));
                (x, false)
            }
            (Err(e), Ok(y)) => {
                damage.push(bad(0, &e.why, &y));
                (y, false)
            }
            (Err(x), Err(y)) => {
                if x.blank && y.blank {
                    // Say what the device is instead: a chunk store and a blank device from
                    // `shingled zone create` are zoned device files too.
                    let written = dev
                        .report_zones(0, info.capacity_sectors, shingled_zoned::ReportOption::All)
                        .map(|zs| {
                            zs.iter()
                                .filter(|z| {
                                    z.zone_type != shingled_zoned::ZoneType::Conventional && z.wp > z.start
                                })
                                .count()
                        })
                        .unwrap_or(0);
                    return Err(corrupt(if written > 0 {
                        format!(
                            "not a dm-zoned translation layer: a zoned device file whose dm-zoned superblocks are \
                             zeros while {written} of its sequential zones hold data written by something else \
                             (a chunk store made by `shingled store format`? `shingled store info FILE` reads one)"
                        )
                    } else {
                        "not a dm-zoned translation layer: a blank zoned device file (made by `shingled zone \
                         create`?); `shingled stl format dm-zoned NEW_FILE` makes a translation layer"
                            .into()
                    }));
                }
                return Err(corrupt(format!(
                    "no valid metadata set: primary: {}; secondary: {}",
                    x.why, y.why
                )));
            }
        };
        let geo = DmZonedGeometry::from_layout(&info, &lay, Some(img.sup.reserved_seq))
            .map_err(|e| corrupt(format!("metadata generation {}: {e}", img.sup.generation)))?;
        let mut d = DmZoned::empty(dev, info, lay, geo, policy);
        d.generation = img.sup.generation;
        d.synced = other_ok;
        d.newest = img.sup.set;
        d.block_crc = img.crcs.clone();
        let problems = d.load(&img.payload)?;
        if !problems.is_empty() {
            return Err(corrupt(format!(
                "metadata generation {} (set {}) is inconsistent: {}",
                img.sup.generation,
                img.sup.set,
                summarize(&problems)
            )));
        }
        d.stats.generation = d.generation;
        d.damage = damage;
        if recover && !d.synced {
            d.commit().inspect_err(|e| d.failed = Some(e.to_string()))?;
        }
        Ok(d)
    }

    fn empty(
        dev: D,
        info: DeviceInfo,
        lay: Layout,
        geo: DmZonedGeometry,
        policy: ReclaimPolicy,
    ) -> DmZoned<D> {
        let nz = lay.nr_zones as usize;
        let nc = geo.nr_chunks as usize;
        DmZoned {
            dev,
            info,
            lay,
            geo,
            policy,
            map: vec![(NONE, NONE); nc],
            owner: vec![NONE; nz],
            wp: vec![0; nz],
            bits: (0..nz).map(|_| None).collect(),
            valid: vec![0; nz],
            committed: vec![false; nz],
            bad: vec![false; nz],
            free_rnd: BTreeSet::new(),
            free_seq: BTreeSet::new(),
            pending_rnd: BTreeSet::new(),
            pending_seq: BTreeSet::new(),
            last_use: vec![0; nc],
            tick: 0,
            generation: 0,
            block_crc: Vec::new(),
            dirty: vec![false; lay.payload_blocks() as usize],
            dirty_count: 0,
            synced: false,
            newest: 0,
            reclaiming: false,
            idle_for: Duration::ZERO,
            failed: None,
            stats: DmZonedStats { chunks: geo.nr_chunks, ..Default::default() },
            damage: Vec::new(),
        }
    }

    /// Builds the in-memory state from a verified payload and the zones; returns the
    /// inconsistencies found (open refuses the device if there is any).
    fn load(&mut self, payload: &[u8]) -> Result<Vec<String>> {
        let mut problems = Vec::new();
        let (map, bitmaps) = payload.split_at((self.lay.map_blocks as usize) * BLOCK);
        for c in 0..self.lay.seq_usable {
            let e = &map[c as usize * 8..c as usize * 8 + 8];
            let (dz, bz) = (meta::u32_at(e, 0), meta::u32_at(e, 4));
            if c >= self.geo.nr_chunks {
                if (dz, bz) != (NONE, NONE) {
                    problems
                        .push(format!("mapping entry {c} beyond the {} chunks is used", self.geo.nr_chunks));
                }
                continue;
            }
            for (z, want, role) in [(dz, Kind::Seq, "data"), (bz, Kind::Random, "buffer")] {
                if z == NONE {
                    continue;
                }
                if (z as u64) >= self.lay.nr_zones || self.kind(z) != want {
                    problems.push(format!("chunk {c}: {role} zone {z} is not a {want} zone"));
                } else if self.owner[z as usize] != NONE {
                    problems.push(format!(
                        "zone {z} is mapped twice (chunk {} and chunk {c})",
                        self.owner[z as usize]
                    ));
                } else {
                    self.owner[z as usize] = c as u32;
                }
            }
            let dz = if dz != NONE && self.owner.get(dz as usize) == Some(&(c as u32)) { dz } else { NONE };
            let bz = if bz != NONE && self.owner.get(bz as usize) == Some(&(c as u32)) { bz } else { NONE };
            self.map[c as usize] = (dz, bz);
        }
        let bpz = self.lay.bpz;
        let words = bpz.div_ceil(64) as usize;
        for z in 0..self.lay.nr_zones {
            let (g0, g1) = (z * bpz, (z + 1) * bpz);
            if bitmaps[(g0 / 8) as usize..g1.div_ceil(8) as usize].iter().all(|&x| x == 0) {
                continue;
            }
            let mut bm = vec![0u64; words].into_boxed_slice();
            if bpz.is_multiple_of(8) {
                // Byte-aligned zone bitmaps (any zone of a multiple of 32 KiB): copy bytes.
                for (i, &x) in bitmaps[(g0 / 8) as usize..(g1 / 8) as usize].iter().enumerate() {
                    bm[i / 8] |= (x as u64) << (8 * (i % 8));
                }
            } else {
                for k in 0..bpz {
                    if meta::bit(bitmaps, g0 + k) {
                        bm[(k / 64) as usize] |= 1 << (k % 64);
                    }
                }
            }
            let n: u32 = bm.iter().map(|w| w.count_ones()).sum();
            if n == 0 {
                continue;
            }
            if self.owner[z as usize] == NONE {
                problems.push(format!("zone {z} is not mapped but has {n} valid blocks"));
                continue;
            }
            self.bits[z as usize] = Some(bm);
            self.valid[z as usize] = n;
        }
        for c in 0..self.geo.nr_chunks as usize {
            let (dz, bz) = self.map[c];
            if dz != NONE && bz != NONE {
                if let (Some(a), Some(b)) = (&self.bits[dz as usize], &self.bits[bz as usize]) {
                    let both: u32 = a.iter().zip(b.iter()).map(|(x, y)| (x & y).count_ones()).sum();
                    if both > 0 {
                        problems
                            .push(format!("chunk {c}: {both} blocks valid in both zone {dz} and zone {bz}"));
                    }
                }
            }
        }
        let zones = self.dev.report_zones(0, 0, ReportOption::All)?;
        for z in self.seq_range() {
            let zone = &zones[z as usize];
            let zi = z as usize;
            let badcond = matches!(zone.cond, ZoneCond::ReadOnly | ZoneCond::Offline);
            let written = zone.written().min(zone.capacity);
            // A write pointer inside a block (not written by this layer): treat as full, so no
            // direct write is attempted there until the zone is reset.
            self.wp[zi] = if written % SPB == 0 { (written / SPB) as u32 } else { bpz as u32 };
            if self.owner[zi] != NONE {
                if badcond {
                    problems.push(format!("data zone {z} is {}", zone.cond));
                }
                if let Some(last) = self.last_valid(z) {
                    if last >= self.wp[zi] as u64 {
                        problems.push(format!(
                            "zone {z}: block {last} is marked valid but the write pointer is at block {}",
                            self.wp[zi]
                        ));
                    }
                }
            } else if badcond {
                self.bad[zi] = true;
            } else {
                self.free_seq.insert(z);
            }
        }
        for z in self.rnd_range() {
            if self.owner[z as usize] == NONE {
                self.free_rnd.insert(z);
            }
        }
        for z in 0..self.lay.nr_zones as usize {
            self.committed[z] = self.owner[z] != NONE;
        }
        if problems.is_empty() {
            // A mapped zone with no valid block is harmless but useless: release it (it waits
            // for the next commit, as the loaded generation references it).
            for c in 0..self.geo.nr_chunks {
                self.settle(c);
            }
        }
        Ok(problems)
    }

    // ---- geometry helpers ----

    fn kind(&self, z: u32) -> Kind {
        let z = z as u64;
        if z < self.lay.meta_zones {
            Kind::Meta
        } else if z < self.lay.nr_conv {
            Kind::Random
        } else if z < self.lay.nr_conv + self.lay.seq_usable {
            Kind::Seq
        } else {
            Kind::Unused
        }
    }

    fn rnd_range(&self) -> std::ops::Range<u32> {
        self.lay.meta_zones as u32..self.lay.nr_conv as u32
    }

    fn seq_range(&self) -> std::ops::Range<u32> {
        self.lay.nr_conv as u32..(self.lay.nr_conv + self.lay.seq_usable) as u32
    }

    fn sector(&self, z: u32, k: u64) -> u64 {
        self.info.zone_start(z as u64) + k * SPB
    }

    // ---- accessors ----

    /// The geometry (capacity, zones by role).
    pub fn geometry(&self) -> DmZonedGeometry {
        self.geo
    }

    /// Counters and the current shape.
    pub fn stats(&self) -> DmZonedStats {
        let mut s = self.stats;
        s.chunks_mapped = self.map.iter().filter(|m| **m != (NONE, NONE)).count() as u64;
        s.buffer_zones_in_use = self.rnd_range().filter(|&z| self.owner[z as usize] != NONE).count() as u64;
        s.free_random_zones = self.free_rnd.len() as u64;
        s.free_seq_zones = self.free_seq.len() as u64;
        s.pending_zones = (self.pending_rnd.len() + self.pending_seq.len()) as u64;
        s.generation = self.generation;
        s.map_memory_bytes = self.memory_bytes();
        s
    }

    fn memory_bytes(&self) -> u64 {
        let nz = self.lay.nr_zones;
        let nc = self.geo.nr_chunks;
        let bitmap_words = self.bits.iter().flatten().map(|b| b.len() as u64 * 8).sum::<u64>();
        let sets =
            (self.free_rnd.len() + self.free_seq.len() + self.pending_rnd.len() + self.pending_seq.len())
                as u64
                * 4;
        nc * (8 + 8) // map + LRU ticks
            + nz * (4 + 4 + 4 + 1 + 1 + std::mem::size_of::<Option<Box<[u64]>>>() as u64)
            + bitmap_words
            + self.block_crc.len() as u64 * 5
            + sets
    }

    /// The reclaim policy.
    pub fn policy(&self) -> ReclaimPolicy {
        self.policy
    }

    /// Replaces the reclaim policy.
    pub fn set_policy(&mut self, policy: ReclaimPolicy) {
        self.policy = policy;
    }

    /// Where chunk `chunk` lives (`None` beyond the chunk count).
    pub fn mapping(&self, chunk: u64) -> Option<ChunkMapping> {
        let &(d, b) = self.map.get(chunk as usize)?;
        let z = |x: u32| (x != NONE).then_some(x as u64);
        Some(ChunkMapping { data: z(d), buffer: z(b) })
    }

    /// Valid blocks of zone `zone`.
    pub fn zone_valid_blocks(&self, zone: u64) -> u64 {
        self.valid.get(zone as usize).copied().unwrap_or(0) as u64
    }

    /// Whether block `block` of zone `zone` is valid.
    pub fn is_valid(&self, zone: u64, block: u64) -> bool {
        zone < self.lay.nr_zones && block < self.lay.bpz && self.bit(zone as u32, block)
    }

    /// Write pointer of sequential zone `zone`, in blocks from its start, as this layer tracks it.
    pub fn zone_wp_block(&self, zone: u64) -> u64 {
        self.wp.get(zone as usize).copied().unwrap_or(0) as u64
    }

    /// The zoned device.
    pub fn device(&self) -> &D {
        &self.dev
    }

    /// The zoned device, mutably (for crash tests: arming a fault). Changing zones under the
    /// layer corrupts it.
    pub fn device_mut(&mut self) -> &mut D {
        &mut self.dev
    }

    /// Unwraps, without a flush.
    pub fn into_device(self) -> D {
        self.dev
    }

    /// The reason the layer stopped, if a device operation failed.
    pub fn failure(&self) -> Option<&str> {
        self.failed.as_deref()
    }

    // ---- bitmaps ----

    fn bit(&self, z: u32, k: u64) -> bool {
        self.bits[z as usize].as_ref().is_some_and(|b| b[(k / 64) as usize] & (1 << (k % 64)) != 0)
    }

    fn mark_dirty(&mut self, i: u64) {
        let d = &mut self.dirty[i as usize];
        if !*d {
            *d = true;
            self.dirty_count += 1;
        }
    }

    fn set_bit(&mut self, z: u32, k: u64) {
        let words = self.lay.bpz.div_ceil(64) as usize;
        let bm = self.bits[z as usize].get_or_insert_with(|| vec![0u64; words].into_boxed_slice());
        let (w, m) = ((k / 64) as usize, 1u64 << (k % 64));
        if bm[w] & m == 0 {
            bm[w] |= m;
            self.valid[z as usize] += 1;
            let i = self.lay.bitmap_block_of(z as u64, k);
            self.mark_dirty(i);
        }
    }

    fn clear_bit(&mut self, z: u32, k: u64) {
        let Some(bm) = self.bits[z as usize].as_mut() else { return };
        let (w, m) = ((k / 64) as usize, 1u64 << (k % 64));
        if bm[w] & m != 0 {
            bm[w] &= !m;
            self.valid[z as usize] -= 1;
            if self.valid[z as usize] == 0 {
                self.bits[z as usize] = None;
            }
            let i = self.lay.bitmap_block_of(z as u64, k);
            self.mark_dirty(i);
        }
    }

    fn first_valid(&self, z: u32) -> Option<u64> {
        let b = self.bits[z as usize].as_ref()?;
        b.iter().enumerate().find(|(_, w)| **w != 0).map(|(i, w)| i as u64 * 64 + w.trailing_zeros() as u64)
    }

    fn last_valid(&self, z: u32) -> Option<u64> {
        let b = self.bits[z as usize].as_ref()?;
        b.iter()
            .enumerate()
            .rev()
            .find(|(_, w)| **w != 0)
            .map(|(i, w)| i as u64 * 64 + 63 - w.leading_zeros() as u64)
    }

    // ---- mapping ----

    fn set_map(&mut self, c: u64, d: u32, b: u32) {
        if self.map[c as usize] != (d, b) {
            self.map[c as usize] = (d, b);
            let i = self.lay.map_block_of(c);
            self.mark_dirty(i);
        }
        for z in [d, b] {
            if z != NONE {
                self.owner[z as usize] = c as u32;
            }
        }
    }

    /// Gives zone `z` up: free now if the last commit does not reference it, else pending until
    /// the next commit (crash argument, rule 3).
    fn release(&mut self, z: u32) {
        if let Some(bm) = self.bits[z as usize].take() {
            for (w, word) in bm.iter().enumerate() {
                let mut x = *word;
                while x != 0 {
                    let k = w as u64 * 64 + x.trailing_zeros() as u64;
                    x &= x - 1;
                    let i = self.lay.bitmap_block_of(z as u64, k);
                    self.mark_dirty(i);
                }
            }
            self.valid[z as usize] = 0;
        }
        self.owner[z as usize] = NONE;
        let committed = self.committed[z as usize];
        let list = match (self.kind(z), committed) {
            (Kind::Random, false) => &mut self.free_rnd,
            (Kind::Random, true) => &mut self.pending_rnd,
            (_, false) => &mut self.free_seq,
            (_, true) => &mut self.pending_seq,
        };
        list.insert(z);
    }

    /// Releases the zones of chunk `c` that hold no valid block.
    fn settle(&mut self, c: u64) {
        let (mut d, mut b) = self.map[c as usize];
        if d != NONE && self.valid[d as usize] == 0 {
            self.release(d);
            d = NONE;
        }
        if b != NONE && self.valid[b as usize] == 0 {
            self.release(b);
            b = NONE;
        }
        self.set_map(c, d, b);
    }

    // ---- allocation ----

    fn alloc_seq(&mut self) -> Result<u32> {
        if self.free_seq.is_empty() && !self.pending_seq.is_empty() {
            self.commit()?;
        }
        let Some(z) = self.free_seq.pop_first() else {
            return Err(StlError::NoSpace {
                device: "dm-zoned".into(),
                detail: "no free sequential zone (zones went offline or read-only?)".into(),
            });
        };
        if self.wp[z as usize] != 0 {
            let (s, n) = (self.info.zone_start(z as u64), self.info.zone_len(z as u64));
            self.dev.zone_mgmt(ZoneOp::Reset, s, n).map_err(dev_err(format!("resetting zone {z}")))?;
            self.wp[z as usize] = 0;
            self.stats.zone_resets += 1;
        }
        Ok(z)
    }

    /// A free random zone for chunk `c`: commit to free pending ones, or reclaim another
    /// chunk's buffer. Bounded: every round frees a zone.
    fn alloc_rnd(&mut self, c: u64) -> Result<u32> {
        for _ in 0..self.geo.random_zones + 3 {
            if let Some(z) = self.free_rnd.pop_first() {
                return Ok(z);
            }
            if !self.pending_rnd.is_empty() {
                self.commit()?;
                continue;
            }
            if !self.reclaim_one(Some(c))? {
                break;
            }
            self.stats.forced_reclaims += 1;
        }
        Err(StlError::NoSpace {
            device: "dm-zoned".into(),
            detail: "no random zone can be freed for a buffer".into(),
        })
    }

    // ---- I/O ----

    fn guard(&self) -> Result<()> {
        match &self.failed {
            Some(why) => Err(StlError::Failed {
                device: "dm-zoned".into(),
                detail: format!("stopped after an earlier device failure ({why}); reopen the device"),
            }),
            None => Ok(()),
        }
    }

    fn poison<T>(&mut self, r: Result<T>) -> Result<T> {
        if let Err(e) = &r {
            self.failed = Some(e.to_string());
        }
        r
    }

    fn source(&self, d: u32, b: u32, k: u64) -> u32 {
        if b != NONE && self.bit(b, k) {
            b
        } else if d != NONE && self.bit(d, k) {
            d
        } else {
            NONE
        }
    }

    fn read_chunk(&mut self, c: u64, k: u64, out: &mut [u8]) -> Result<()> {
        let (d, b) = self.map[c as usize];
        let n = (out.len() / BLOCK) as u64;
        let mut i = 0;
        while i < n {
            let src = self.source(d, b, k + i);
            let mut j = i + 1;
            while j < n && self.source(d, b, k + j) == src {
                j += 1;
            }
            let part = &mut out[i as usize * BLOCK..j as usize * BLOCK];
            if src == NONE {
                part.fill(0);
            } else {
                let s = self.sector(src, k + i);
                self.dev.read(s, part).map_err(dev_err(format!("reading zone {src} block {}", k + i)))?;
            }
            i = j;
        }
        Ok(())
    }

    fn write_chunk(&mut self, c: u64, mut k: u64, data: &[u8]) -> Result<()> {
        self.tick += 1;
        self.last_use[c as usize] = self.tick;
        let total = (data.len() / BLOCK) as u64;
        let mut off = 0u64;
        while off < total {
            let rem = total - off;
            let (d, b) = self.map[c as usize];
            if d == NONE && b == NONE {
                if k == 0 {
                    let z = self.alloc_seq()?;
                    self.set_map(c, z, NONE);
                } else {
                    let z = self.alloc_rnd(c)?;
                    self.set_map(c, NONE, z);
                }
                continue;
            }
            let part = |n: u64| &data[off as usize * BLOCK..(off + n) as usize * BLOCK];
            if d != NONE && k == self.wp[d as usize] as u64 {
                let s = self.sector(d, k);
                self.dev.write(s, part(rem)).map_err(dev_err(format!("writing zone {d} block {k}")))?;
                self.wp[d as usize] += rem as u32;
                for i in k..k + rem {
                    self.set_bit(d, i);
                    if b != NONE {
                        self.clear_bit(b, i);
                    }
                }
                self.stats.direct_blocks += rem;
                break;
            }
            if b == NONE {
                let z = self.alloc_rnd(c)?;
                self.set_map(c, d, z);
                continue;
            }
            let n = if d != NONE && k < self.wp[d as usize] as u64 {
                rem.min(self.wp[d as usize] as u64 - k)
            } else {
                rem
            };
            let s = self.sector(b, k);
            self.dev.write(s, part(n)).map_err(dev_err(format!("writing buffer zone {b} block {k}")))?;
            for i in k..k + n {
                self.set_bit(b, i);
                if d != NONE {
                    self.clear_bit(d, i);
                }
            }
            self.stats.buffered_blocks += n;
            off += n;
            k += n;
        }
        self.settle(c);
        Ok(())
    }

    /// Splits `[lba, lba + n)` into (chunk, block in chunk, blocks, offset in blocks).
    fn pieces(&self, lba: u64, n: u64) -> Vec<(u64, u64, u64, u64)> {
        let bpz = self.lay.bpz;
        let mut out = Vec::new();
        let mut done = 0;
        while done < n {
            let l = lba + done;
            let (c, k) = (l / bpz, l % bpz);
            let m = (bpz - k).min(n - done);
            out.push((c, k, m, done));
            done += m;
        }
        out
    }

    // ---- reclaim ----

    fn unmapped_random_pct(&self) -> u64 {
        let total = self.geo.random_zones.max(1);
        (self.free_rnd.len() + self.pending_rnd.len()) as u64 * 100 / total
    }

    /// Busy-time reclaim before a write to chunk `writing`: start at `low_pct`, one chunk per
    /// write until `high_pct`. The chunk being written is not reclaimed for its own write (it
    /// would be copied out after every request of a sequential overwrite).
    fn maybe_reclaim(&mut self, writing: Option<u64>) -> Result<()> {
        let pct = self.unmapped_random_pct();
        if pct <= self.policy.low_pct as u64 {
            self.reclaiming = true;
        }
        if pct >= self.policy.high_pct as u64 {
            self.reclaiming = false;
        }
        if self.reclaiming && !self.reclaim_one(writing)? {
            self.reclaiming = false;
        }
        Ok(())
    }

    /// Reclaims the least recently written buffered chunk other than `exclude`; `false` when
    /// there is none.
    fn reclaim_one(&mut self, exclude: Option<u64>) -> Result<bool> {
        let victim = self
            .rnd_range()
            .filter_map(|z| {
                let c = self.owner[z as usize];
                (c != NONE && Some(c as u64) != exclude).then(|| (self.last_use[c as usize], c))
            })
            .min();
        let Some((_, c)) = victim else { return Ok(false) };
        self.reclaim_chunk(c as u64)?;
        Ok(true)
    }

    /// Moves chunk `c` out of its buffer zone (module docs, "Reclaim"). The zones it leaves wait
    /// for the next commit if the last one references them.
    fn reclaim_chunk(&mut self, c: u64) -> Result<()> {
        let (d, b) = self.map[c as usize];
        debug_assert!(b != NONE, "reclaim of an unbuffered chunk");
        let append = d != NONE && self.first_valid(b).is_none_or(|f| f >= self.wp[d as usize] as u64);
        if append {
            if let Some(last) = self.last_valid(b) {
                let from = self.wp[d as usize] as u64;
                self.copy_into(d, from, last, NONE, b)?;
            }
            self.release(b);
            self.set_map(c, d, NONE);
            self.stats.reclaim_appends += 1;
        } else {
            let n = self.alloc_seq()?;
            let last = [self.last_valid(b), if d != NONE { self.last_valid(d) } else { None }]
                .into_iter()
                .flatten()
                .max();
            if let Some(last) = last {
                self.copy_into(n, 0, last, d, b)?;
            }
            self.set_map(c, n, NONE);
            for z in [d, b] {
                if z != NONE {
                    self.release(z);
                }
            }
        }
        self.stats.reclaims += 1;
        Ok(())
    }

    /// Writes blocks `from..=last` of the chunk to sequential zone `dst` at its write pointer
    /// (`from`), each from the buffer `b` or data zone `d` where it is valid, zeros otherwise.
    fn copy_into(&mut self, dst: u32, from: u64, last: u64, d: u32, b: u32) -> Result<()> {
        debug_assert_eq!(self.wp[dst as usize] as u64, from);
        const RUN: u64 = 256;
        let mut buf = vec![0u8; RUN as usize * BLOCK];
        let mut k = from;
        while k <= last {
            let end = (k + RUN).min(last + 1);
            let out = &mut buf[..(end - k) as usize * BLOCK];
            let mut i = k;
            let mut copied = Vec::new();
            while i < end {
                let src = self.source(d, b, i);
                let mut j = i + 1;
                while j < end && self.source(d, b, j) == src {
                    j += 1;
                }
                let part = &mut out[(i - k) as usize * BLOCK..(j - k) as usize * BLOCK];
                if src == NONE {
                    part.fill(0);
                    self.stats.reclaim_zero_blocks += j - i;
                } else {
                    let s = self.sector(src, i);
                    self.dev
                        .read(s, part)
                        .map_err(dev_err(format!("reclaim: reading zone {src} block {i}")))?;
                    copied.extend((i..j).map(|x| (x, src)));
                }
                i = j;
            }
            let s = self.sector(dst, k);
            self.dev.write(s, out).map_err(dev_err(format!("reclaim: writing zone {dst} block {k}")))?;
            self.wp[dst as usize] = end as u32;
            for (x, src) in copied {
                self.clear_bit(src, x);
                self.set_bit(dst, x);
                self.stats.reclaim_blocks_copied += 1;
            }
            k = end;
        }
        Ok(())
    }

    /// Reclaims the least recently written buffered chunk (as `dmsetup message <dev> 0
    /// reclaim`); `false` if no chunk is buffered.
    pub fn reclaim(&mut self) -> Result<bool> {
        self.guard()?;
        let r = self.reclaim_one(None);
        self.poison(r)
    }

    /// Tells the layer `elapsed` passed without I/O. Once the idle time since the last request
    /// reaches the policy's `idle_period`, every buffered chunk is reclaimed (dm-zoned reclaims
    /// whenever a random zone is mapped when idle). Returns the chunks reclaimed.
    pub fn idle(&mut self, elapsed: Duration) -> Result<u64> {
        self.guard()?;
        // Saturating: `elapsed` comes from callers (Python's `idle(seconds)`), and idle time
        // past any period means the same as the period.
        self.idle_for = self.idle_for.saturating_add(elapsed);
        if self.idle_for < self.policy.idle_period {
            return Ok(0);
        }
        let mut n = 0;
        loop {
            let r = self.reclaim_one(None);
            match self.poison(r)? {
                true => n += 1,
                false => break,
            }
        }
        Ok(n)
    }

    // ---- metadata ----

    fn encode_payload(&self, i: u64) -> Vec<u8> {
        let mut b = vec![0u8; BLOCK];
        if i < self.lay.map_blocks {
            for e in 0..ENTRIES_PER_BLOCK {
                let c = i * ENTRIES_PER_BLOCK + e;
                let (d, z) = self.map.get(c as usize).copied().unwrap_or((NONE, NONE));
                let at = e as usize * 8;
                b[at..at + 4].copy_from_slice(&d.to_le_bytes());
                b[at + 4..at + 8].copy_from_slice(&z.to_le_bytes());
            }
        } else {
            let bpz = self.lay.bpz;
            let g0 = (i - self.lay.map_blocks) * BITS_PER_BLOCK;
            let g1 = (g0 + BITS_PER_BLOCK).min(self.lay.nr_zones * bpz);
            if g0 < g1 {
                for z in g0 / bpz..=(g1 - 1) / bpz {
                    let Some(bm) = &self.bits[z as usize] else { continue };
                    let zs = z * bpz;
                    if bpz.is_multiple_of(8) {
                        // Byte-aligned: copy the bytes of the zone's words that fall here.
                        let (lo, hi) = (zs.max(g0), (zs + bpz).min(g1));
                        for gb in lo / 8..hi / 8 {
                            let i = (gb - zs / 8) as usize;
                            b[(gb - g0 / 8) as usize] = (bm[i / 8] >> (8 * (i % 8))) as u8;
                        }
                        continue;
                    }
                    for (w, word) in bm.iter().enumerate() {
                        let mut x = *word;
                        while x != 0 {
                            let k = w as u64 * 64 + x.trailing_zeros() as u64;
                            x &= x - 1;
                            let g = z * bpz + k;
                            if (g0..g1).contains(&g) {
                                let off = g - g0;
                                b[(off / 8) as usize] |= 1 << (off % 8);
                            }
                        }
                    }
                }
            }
        }
        b
    }

    /// Writes payload blocks `idx` (sorted) of set `set`, coalescing adjacent ones.
    fn write_payload(&mut self, set: u32, idx: &[u64], fresh: bool) -> Result<()> {
        let mut i = 0;
        while i < idx.len() {
            let mut j = i + 1;
            while j < idx.len() && j - i < 64 && idx[j] == idx[j - 1] + 1 && self.lay.contiguous(set, idx[j])
            {
                j += 1;
            }
            let mut buf = Vec::with_capacity((j - i) * BLOCK);
            for &p in &idx[i..j] {
                let blk = self.encode_payload(p);
                if fresh {
                    self.block_crc[p as usize] = crc32c::crc32c(&blk);
                }
                buf.extend_from_slice(&blk);
            }
            let s = self.lay.block_sector(&self.info, set, idx[i] + 1);
            self.dev.write(s, &buf).map_err(dev_err(format!("writing metadata set {set}")))?;
            self.stats.metadata_blocks_written += (j - i) as u64;
            i = j;
        }
        Ok(())
    }

    /// The commit (module docs, "Durability"): data flush, secondary set, flush, primary set,
    /// flush; then zones the new generation no longer references become free.
    fn commit(&mut self) -> Result<()> {
        self.dev.flush().map_err(dev_err("flushing data before a metadata commit"))?;
        let full = !self.synced;
        let idx: Vec<u64> = if full {
            (0..self.lay.payload_blocks()).collect()
        } else {
            (0..self.lay.payload_blocks()).filter(|&i| self.dirty[i as usize]).collect()
        };
        let generation = self.generation + 1;
        let order = if full { [1 - self.newest, self.newest] } else { [1, 0] };
        let mut first = true;
        for set in order {
            self.write_payload(set, &idx, first)?;
            let sup = Super {
                set,
                generation,
                reserved_seq: self.geo.reserved_seq,
                nr_chunks: self.geo.nr_chunks,
                payload_crc: meta::payload_crc(&self.block_crc),
            };
            let sb = meta::encode_super(&self.lay, &self.info, &sup);
            let s = self.lay.block_sector(&self.info, set, 0);
            self.dev.write(s, &sb).map_err(dev_err(format!("writing superblock of set {set}")))?;
            self.stats.metadata_blocks_written += 1;
            self.dev.flush().map_err(dev_err(format!("flushing metadata set {set}")))?;
            first = false;
        }
        self.generation = generation;
        self.synced = true;
        self.newest = 0;
        self.dirty.iter_mut().for_each(|d| *d = false);
        self.dirty_count = 0;
        for z in 0..self.lay.nr_zones as usize {
            self.committed[z] = self.owner[z] != NONE;
        }
        self.free_rnd.append(&mut self.pending_rnd);
        self.free_seq.append(&mut self.pending_seq);
        self.stats.metadata_commits += 1;
        Ok(())
    }

    fn flush_inner(&mut self) -> Result<()> {
        if self.dirty_count > 0
            || !self.synced
            || !self.pending_rnd.is_empty()
            || !self.pending_seq.is_empty()
        {
            self.commit()
        } else {
            self.dev.flush().map_err(dev_err("flushing the device"))
        }
    }

    fn discard_inner(&mut self, lba: u64, blocks: u64) {
        for (c, k, n, _) in self.pieces(lba, blocks) {
            let (d, b) = self.map[c as usize];
            if (d, b) == (NONE, NONE) {
                continue;
            }
            for i in k..k + n {
                if d != NONE {
                    self.clear_bit(d, i);
                }
                if b != NONE {
                    self.clear_bit(b, i);
                }
            }
            self.settle(c);
        }
    }
}

fn summarize(problems: &[String]) -> String {
    let mut s = problems.iter().take(5).cloned().collect::<Vec<_>>().join("; ");
    if problems.len() > 5 {
        s.push_str(&format!("; and {} more", problems.len() - 5));
    }
    s
}

impl<D: ZonedDevice> BlockDevice for DmZoned<D> {
    fn capacity_blocks(&self) -> u64 {
        self.geo.capacity_blocks
    }

    fn read(&mut self, lba: u64, buf: &mut [u8]) -> Result<()> {
        let n = check_request("dm-zoned", "read", lba, buf.len(), self.geo.capacity_blocks)?;
        self.guard()?;
        self.idle_for = Duration::ZERO;
        for (c, k, m, off) in self.pieces(lba, n) {
            self.read_chunk(c, k, &mut buf[off as usize * BLOCK..(off + m) as usize * BLOCK])?;
        }
        Ok(())
    }

    fn write(&mut self, lba: u64, data: &[u8]) -> Result<()> {
        let n = check_request("dm-zoned", "write", lba, data.len(), self.geo.capacity_blocks)?;
        self.guard()?;
        self.idle_for = Duration::ZERO;
        let r = (|| {
            let first = self.pieces(lba, n).first().map(|p| p.0);
            self.maybe_reclaim(first)?;
            for (c, k, m, off) in self.pieces(lba, n) {
                self.write_chunk(c, k, &data[off as usize * BLOCK..(off + m) as usize * BLOCK])?;
            }
            Ok(())
        })();
        self.poison(r)
    }

    fn flush(&mut self) -> Result<()> {
        self.guard()?;
        self.idle_for = Duration::ZERO;
        let r = self.flush_inner();
        self.poison(r)
    }

    fn discard(&mut self, lba: u64, blocks: u64) -> Result<()> {
        check_request("dm-zoned", "discard", lba, 0, self.geo.capacity_blocks)?;
        if lba.checked_add(blocks).is_none_or(|e| e > self.geo.capacity_blocks) {
            return Err(StlError::Range {
                what: format!("dm-zoned: discard at block {lba}"),
                detail: format!(
                    "{blocks} blocks reach past the capacity of {} blocks",
                    self.geo.capacity_blocks
                ),
            });
        }
        self.guard()?;
        self.idle_for = Duration::ZERO;
        self.discard_inner(lba, blocks);
        Ok(())
    }

    fn name(&self) -> String {
        "dm-zoned".into()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};
    use shingled_zoned::{Dialect, MemZoned, ZonedConfig};

    fn dev(zones: u64, zone_kib: u64, cap_kib: u64, conv: u64) -> MemZoned {
        let mut c = ZonedConfig::small(zones, zone_kib, Dialect::Zbc);
        c.nr_conv = conv;
        c.lba_size = 4096;
        c.zone_capacity = shingled_core::ByteSize::kib(cap_kib);
        MemZoned::new(&c).unwrap()
    }

    fn blk(v: u8) -> Vec<u8> {
        vec![v; BLOCK]
    }

    /// Commits a state the code would never produce, with valid CRCs, and reopens.
    fn reopen_after(f: impl FnOnce(&mut DmZoned<MemZoned>)) -> StlError {
        let mut d = DmZoned::format(dev(16, 64, 0, 4), &DmZonedConfig::default()).unwrap();
        d.write(0, &blk(1)).unwrap(); // chunk 0: zone 4
        d.write(16 + 5, &blk(2)).unwrap(); // chunk 1: buffer zone 1 only
        d.write(32, &blk(3)).unwrap(); // chunk 2: zone 5
        d.flush().unwrap();
        f(&mut d);
        d.synced = false; // a full commit: every block, whatever changed
        d.commit().unwrap();
        DmZoned::open(d.into_device()).err().expect("open must refuse")
    }

    #[test]
    fn consistent_crc_but_inconsistent_metadata_is_refused() {
        let e = reopen_after(|d| d.map[2] = d.map[0]);
        assert!(e.to_string().contains("mapped twice"), "{e}");
        let e = reopen_after(|d| d.map[0] = (1, NONE));
        assert!(e.to_string().contains("data zone 1 is not a sequential zone"), "{e}");
        let e = reopen_after(|d| {
            d.set_bit(4, 9); // above zone 4's write pointer (1)
        });
        assert!(e.to_string().contains("block 9 is marked valid but the write pointer is at block 1"), "{e}");
        let e = reopen_after(|d| {
            d.set_bit(7, 0); // zone 7 is not mapped
        });
        assert!(e.to_string().contains("zone 7 is not mapped but has 1 valid blocks"), "{e}");
        let e = reopen_after(|d| {
            d.set_bit(1, 0);
            d.set_bit(4, 0);
            d.map[0] = (4, 1);
            d.map[1] = (NONE, NONE);
        });
        assert!(e.to_string().contains("valid in both"), "{e}");
    }

    /// Zones of 3 blocks (12 KiB capacity in 16 KiB zones): bitmaps not byte-aligned, and
    /// metadata sets spread over several conventional zones.
    #[test]
    fn unaligned_bitmaps_and_multi_zone_metadata_round_trip() {
        let mut d = DmZoned::format(dev(32, 16, 12, 8), &DmZonedConfig::default()).unwrap();
        let g = d.geometry();
        assert_eq!((g.blocks_per_zone, g.set_blocks, g.meta_zones, g.random_zones), (3, 3, 2, 6));
        let cap = d.capacity_blocks();
        assert_eq!(cap, 3 * (24 - 1));
        let mut want = vec![0u8; cap as usize * BLOCK];
        let mut rng = rand_pcg::Pcg64Mcg::seed_from_u64(7);
        for i in 0..200u64 {
            let lba = rng.random_range(0..cap);
            let v = (i % 250) as u8 + 1;
            d.write(lba, &blk(v)).unwrap();
            want[lba as usize * BLOCK..(lba as usize + 1) * BLOCK].fill(v);
            if i % 17 == 0 {
                d.flush().unwrap();
            }
        }
        d.flush().unwrap();
        assert!(d.check().unwrap().is_clean(), "{:?}", d.check().unwrap().problems);
        let mut d = DmZoned::open(d.into_device()).unwrap();
        let mut got = vec![0u8; cap as usize * BLOCK];
        d.read(0, &mut got).unwrap();
        assert!(got == want);
        assert!(d.check().unwrap().is_clean());
    }
}
