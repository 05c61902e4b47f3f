//! The SSD cache as a real block device: a write-back block cache over two
//! [`BlockDevice`]s — a *cache device* holding 4 KiB slots and their records, and a *backing
//! device* (a DM-SMR drive in real use, a translation layer, a file, or [`MemBlock`] in tests).
//!
//! [`BlockDevice`]: shingled_stl::BlockDevice
//! [`MemBlock`]: shingled_stl::MemBlock
//!
//! # One implementation of the decisions
//!
//! Every block of a request goes through [`shingled_sim::controller::Controller::block`], the
//! code the simulator's replay engine runs, with a [`shingled_cache::Cache`] built from the same
//! [`shingled_cache::PolicyConfig`] and [`shingled_cache::PolicyContext`]. Hits, insertions,
//! victims and their write-back order are therefore the simulator's; this crate only executes
//! them with bytes (`Io::ssd_write` stores the host's data or what `Io::drive_read` just read;
//! a dirty victim's bytes are read by `Io::ssd_read` before `Io::drive_write` sends them to the
//! backing device). The policy is wrapped in a transparent observer that logs removals (the
//! controller names clean victims and invalidations to nobody), so the data path can free
//! their slots. Modes are the simulator's [`Mode`]s: read-write (write-back, read- and
//! write-allocate), write-only (writes cached; reads are served — from a cached copy or the
//! backing device — but, as the simulator drops them, the policy does not see them),
//! read-only (write-around, a written block's cached copy invalidated) and write-cache (writes
//! cached, reads served from the cache when cached, else passed through).
//!
//! Operator features: [`CachedDevice::clean`] (write back every dirty block, flush; dm-cache's
//! cleaner policy "writes back all dirty blocks in a cache to decommission it",
//! Documentation/device-mapper/cache-policies.txt), [`CachedDevice::detach`] (clean, then mark
//! the cache device detached, returning the backing device, which alone holds every block),
//! sequential bypass above a size threshold ([`CacheSetup::sequential_cutoff`], off by default
//! for paper fidelity; bcache's `sequential_cutoff`), [`lost_blocks`] after the loss of the
//! cache device, and [`Stats`].
//!
//! # Physical slots are not the policy's slots
//!
//! The [`shingled_cache::BlockTable`] numbers its slots `0..capacity` and hands a victim's slot
//! to the block inserted next. On the device that reuse would be unsafe: until the victim's
//! free record is durable, a power cut would make its record name the new block's bytes. So
//! the device has `slots` physical slots, `capacity` of them for the policy and at least one
//! as a *reserve*, and maps blocks to physical slots itself. A freed physical slot stays
//! untouched ("pending") until a commit has written its free record; when no slot is ready, a
//! commit is forced (dm-writecache similarly commits by itself after `autocommit_blocks`
//! writes without a flush). With the default reserve of 1/64 of the slots, forced commits are
//! rare.
//!
//! # Layout
//!
//! See [`layout`]: block 0 superblock (geometry, cache id, backing capacity, setup JSON, CRC);
//! then record blocks of 127 32-byte slot records (block, epoch, used, dirty) with magic, index,
//! cache id and CRC; then the data slots. An *epoch* is the number of the commit that last wrote
//! a record's block (a commit stamps every used record of a block it writes; a retirement
//! stamps the records it rewrites with the last commit's number); of two records naming the same
//! block, the higher epoch is newer. Restamping never reorders two records of one block: between
//! commits the durable records name each block at most once, and a newer record of a block is
//! written by a later commit.
//!
//! # Memory
//!
//! Formatting writes the record area in chunks and holds nothing per slot. An open cache keeps
//! one `u64` per physical slot (the block and the flags of its `mem` and `disk` records: they
//! never name two blocks), a `u32` per policy slot mapping it to its physical slot (the policy's
//! block table is the only block index), and the policy's [`shingled_cache::Cache`]: about
//! 61 B per slot with LRU for a 1 TiB cache. [`memory::serving_cost`] computes it before
//! allocating; a cache whose index exceeds the machine's memory is refused with its cost.
//!
//! # States of a physical slot
//!
//! `mem` is the record the slot should have, `disk` the one the last commit (or retirement)
//! made durable.
//!
//! ```text
//!                alloc: data written                       commit: backing flush, cache
//!  +-----------+ (mem (V,d), disk free) +-------------+   flush, record, cache flush  +-------------+
//!  | READY     | ---------------------> | USED        | ----------------------------> | USED        |
//!  | mem free  |                        | uncommitted |                               | committed   |
//!  | disk free | <--------------------- | mem (V,d)   |                               | mem (V,d)   |
//!  +-----------+  removed before any    | disk free   |                               | disk (V,d') |
//!     ^     ^     commit: nothing       +-------------+                               +-------------+
//!     |     |     durable names it                                                       |
//!     |     |                                       evicted, invalidated, or moved       |
//!     |     |      +-------------------------+      (copy on write)                      |
//!     |     +----- | PENDING                 | <-----------------------------------------+
//!     |   retire   | mem free, disk (V,d')   |
//!     |   (d'      | data left untouched     |
//!     |   clean)   +-------------------------+
//!     |                  |
//!     +------------------+  commit: backing flush, free record, cache flush
//! ```
//!
//! A write hit on a committed slot overwrites it in place when `disk` says (V, dirty), and
//! moves to a fresh slot (copy on write) when it says (V, clean); an uncommitted slot is
//! overwritten in place. *Retire*: written when V is about to be written to the backing device
//! (below).
//!
//! # Ordering rules
//!
//! 1. **Commit** (every host flush with something to commit, and when no slot is ready):
//!    queued backing writes issued, backing device flushed; cache device flushed (slot data
//!    before the records that name it); changed record blocks written; cache device flushed.
//!    Then `disk = mem` and pending slots are ready.
//! 2. Slot data is written only into a slot whose durable record is free, or names the same
//!    block as dirty (an in-place overwrite of a dirty copy: the old and the new bytes are both
//!    acceptable values of that block, and a single 4 KiB write is atomic by the
//!    [`BlockDevice`](shingled_stl::BlockDevice) contract). A write hit on a block whose durable
//!    record says clean goes to a fresh slot (copy on write).
//! 3. A slot's durable record changes only at a commit (or a retirement, below), so a record
//!    naming block V as *clean* is durable only after the backing flush that made V's bytes
//!    durable there, and a record freeing a slot whose block was written back is durable only
//!    after that write-back was flushed.
//! 4. **Retirement**: before any backing write of block V (a write-back, a write-around, a
//!    bypassed or discarded block, the cleaner), every pending slot whose durable record names
//!    V as clean gets a free record, durably (record write, cache flush). Otherwise a power
//!    cut would leave a "clean" copy that differs from the backing device: V would read the
//!    old bytes, then the new ones once the clean copy is dropped.
//!
//! The write-back of a dirty victim, step by step:
//!
//! ```text
//! host writes V        data -> slot P                      mem P=(V,dirty)   disk P free
//! host flush           [backing flush] cache flush, record P, cache flush    disk P=(V,dirty,e)
//! V evicted (W comes)  read P, write V to the backing dev. P pending: its bytes stay
//! W stored             data -> a ready slot Q (never P)    mem Q=(W,..)
//! next commit          backing flush (V durable there), cache flush (Q's bytes),
//!                      records P free + Q=(W,..,e+1), cache flush             P ready
//! ```
//!
//! # Why a power cut loses nothing flushed
//!
//! *Invariant (I1)*: a durable record (V, clean) in slot P implies P's bytes equal V's durable
//! bytes on the backing device — by rule 3 when the record is written, and rule 4 (plus
//! invalidation before a write-around, bypass of uncached blocks only, write-back of dirty
//! blocks only) afterwards. *Invariant (I2)*: the bytes of a slot named by a durable record
//! (V, d) are a value V had at or after the commit that wrote the record (rule 2, rule 1's
//! data flush). *Invariant (I3)*: a pending slot is reused only after its free record is
//! durable, and that free record is durable only after either a backing flush of V's newest
//! bytes (eviction, invalidation) or a newer durable record of V (copy on write: the move and
//! the free record go in the same commit; if the commit tears and only the free record lands,
//! V's record was clean and the backing device holds the same bytes, I1).
//!
//! Recovery reads every record and, per block, takes the record with the highest epoch (two
//! durable records of one block never share an epoch: one commit writes one record per block,
//! and a block's older records are freed by the commit that writes its newer one or earlier).
//! After a completed flush F, `disk = mem` and the backing device is flushed, so each block V
//! is either named by exactly one record (with F's bytes, I2) or by none (the backing device
//! holds F's bytes). Every later change to the device is a slot write allowed by rule 2, a
//! commit or retirement whose records name bytes written after F, or a backing write of bytes
//! written after F (a write-back copies a slot, which holds F's value or a later one). So
//! whatever subset of the unflushed writes of either device survives, the newest durable
//! record of V, or the backing device when none remains, holds F's value of V or a later one;
//! and by I1 a recovered clean copy equals the backing device, so the value read is stable
//! until V is written again.
//!
//! Recovery then frees (durably, before serving any request) every record that is not the
//! newest of its block, and, should more blocks be named than the policy holds (a commit torn
//! between a new record and an evicted block's free record), writes back the oldest dirty ones
//! and frees them. The policy's internal order — recency lists, hit counts, ghost lists,
//! PORE's period, SAC's cycle — is not persisted: after a power cut (or a reopen) the policy
//! starts afresh with the recovered blocks inserted oldest record first.
//!
//! # Loss of the cache device
//!
//! With no dirty record the backing device alone is consistent. Otherwise the dirty records
//! (newest per block) name exactly the blocks whose flushed data only the cache device held:
//! [`lost_blocks`] reads them from the metadata area alone (the superblock and the records,
//! never a data slot) and reports ranges. Without the metadata nothing can be known
//! ([`Loss::Unknown`]).

mod device;
pub mod files;
pub mod identity;
mod inspect;
pub mod layout;
mod loss;
pub mod memory;
mod modelled;
mod observe;
pub mod pattern;
pub mod replay;
mod seq;
mod stats;

pub use device::CachedDevice;
pub use inspect::{check_recorded_backing, inspect, Inspection};
pub use loss::{lost_blocks, Loss};
pub use modelled::{ModelClock, ModelTime, Modelled};
pub use shingled_sim::Mode;
pub use stats::Stats;

use serde::{Deserialize, Serialize};
use shingled_cache::{PolicyConfig, PolicyError, SmrCosts};
use shingled_core::BandConfig;

/// What the cache does and how its policy is built: stored in the superblock at format, so
/// [`CachedDevice::open`] rebuilds the same policy.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CacheSetup {
    /// Cache mode.
    pub mode: Mode,
    /// The replacement policy.
    pub policy: PolicyConfig,
    /// The backing drive's band layout, for policies allowed to know it
    /// ([`shingled_cache::PolicyContext::bands`]); built over the backing device's capacity.
    #[serde(default)]
    pub bands: Option<BandConfig>,
    /// The backing drive's persistent-buffer size in blocks, when known (PORE's and SAC's
    /// default period and cycle length).
    #[serde(default)]
    pub pb_blocks: Option<u64>,
    /// Seed of the policy's random choices.
    #[serde(default)]
    pub seed: u64,
    /// Drive costs for cost-aware policies (SAC's CDC).
    #[serde(default)]
    pub costs: SmrCosts,
    /// Requests in a sequential stream that has moved at least this many bytes bypass the cache
    /// (`None`: never, the default).
    #[serde(default)]
    pub sequential_cutoff: Option<u64>,
    /// Where the backing device was when the cache was created (absolute path), so tools can
    /// open the pair from the cache device alone; its capacity is checked at every open.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub backing_path: Option<String>,
    /// What identifies the backing device (inode, disk serial), checked at every open of a
    /// cache in a file ([`files::open`]); `None` for caches over devices without a path.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub backing_id: Option<identity::BackingId>,
}

impl Default for CacheSetup {
    fn default() -> Self {
        CacheSetup {
            mode: Mode::ReadWrite,
            policy: PolicyConfig::default(),
            bands: None,
            pb_blocks: None,
            seed: 0,
            costs: SmrCosts::PAPER,
            sequential_cutoff: None,
            backing_path: None,
            backing_id: None,
        }
    }
}

impl CacheSetup {
    /// A setup in `mode` with the policy named `policy` (a name, an alias such as `pore-bl`, or
    /// `name:field=value,…`).
    pub fn new(mode: Mode, policy: &str) -> std::result::Result<CacheSetup, PolicyError> {
        Ok(CacheSetup { mode, policy: policy.parse()?, ..CacheSetup::default() })
    }
}

/// How to format a cache device.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct CacheOptions {
    /// Mode and policy.
    pub setup: CacheSetup,
    /// Physical slots (default: as many as the cache device holds).
    pub slots: Option<u32>,
    /// Blocks the policy manages (default: the slots less the reserve).
    pub capacity: Option<u32>,
    /// Slots kept out of the policy's capacity so that freed slots can wait for their free
    /// record to be committed (default: 1/64 of the slots, at least 1). Ignored when
    /// `capacity` is set.
    pub reserve: Option<u32>,
}

#[allow(dead_code)]
fn _assert_send() {
    fn is_send<T: Send>() {}
    is_send::<CachedDevice<shingled_stl::MemBlock, shingled_stl::MemBlock>>();
}
