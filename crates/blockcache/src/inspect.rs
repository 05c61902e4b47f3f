//! A read-only look at a cache device's metadata: what `shingled cache check` and `stats` print.

use crate::device::open::scan;
use crate::device::CachedDevice;
use crate::layout::State;
use crate::CacheSetup;
use serde::{Deserialize, Serialize};
use shingled_stl::{BlockDevice, Result, StlError, BLOCK};
use std::path::Path;

/// What a cache device's superblock and slot records say (the data slots are not read).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Inspection {
    /// `attached` or `detached`.
    pub state: String,
    /// Chosen at format.
    pub cache_id: u64,
    /// Mode, policy and their parameters.
    pub setup: CacheSetup,
    /// Backing device capacity, blocks.
    pub backing_blocks: u64,
    /// Blocks the policy manages.
    pub capacity: u32,
    /// Physical slots.
    pub slots: u32,
    /// Record blocks.
    pub record_blocks: u64,
    /// Slots whose record names a block.
    pub used_records: u64,
    /// Blocks a reopen would cache (the newest record of each block).
    pub cached_blocks: u64,
    /// Of them, dirty: their newest flushed data is on the cache device only.
    pub dirty_blocks: u64,
    /// Older records of a block that has a newer one (a reopen frees them).
    pub stale_records: u64,
    /// The highest epoch recorded.
    pub newest_epoch: u64,
}

impl<C: BlockDevice, B: BlockDevice> CachedDevice<C, B> {
    /// What the cache device's committed metadata says ([`crate::inspect`]), read through this
    /// handle: the look `shingled cache stats` gives, for a cache that is open here (and so
    /// locked against a second handle).
    pub fn inspect(&mut self) -> Result<Inspection> {
        inspect(self.devices_mut().0)
    }
}

/// Reads the superblock and every record of `dev`, checking their magic, CRCs, ranges, that no
/// two records of a block share an epoch, and that the device holds the whole layout the
/// superblock describes (a truncated device fails here as open would); fails naming the first
/// problem.
pub fn inspect<M: BlockDevice + ?Sized>(dev: &mut M) -> Result<Inspection> {
    let s = scan(dev)?;
    let l = s.sb.layout;
    let need = l.data_start + l.slots as u64;
    if dev.capacity_blocks() < need {
        return Err(StlError::Corrupt {
            device: dev.name(),
            what: format!(
                "truncated: the superblock's layout (records in blocks {}..{}, {} data slots from block {}) \
                 needs {need} blocks ({} bytes) but the device holds {} blocks; open and flush refuse it",
                l.record_start,
                l.data_start,
                l.slots,
                l.data_start,
                need * BLOCK as u64,
                dev.capacity_blocks()
            ),
        });
    }
    let used = s.used;
    let dirty = s.winners.iter().filter(|&&p| s.record(p).is_some_and(|r| r.1)).count() as u64;
    Ok(Inspection {
        state: match s.sb.state {
            State::Attached => "attached",
            State::Detached => "detached",
        }
        .into(),
        cache_id: s.sb.cache_id,
        setup: s.sb.setup.clone(),
        backing_blocks: s.sb.backing_blocks,
        capacity: s.sb.capacity,
        slots: s.sb.layout.slots,
        record_blocks: s.sb.layout.record_blocks,
        used_records: used,
        cached_blocks: s.winners.len() as u64,
        dirty_blocks: dirty,
        stale_records: used - s.winners.len() as u64,
        newest_epoch: s.newest_epoch,
    })
}

/// What would stop an open of the attached cache `i` over the backing device its superblock
/// records (`None` when nothing would, or no path is recorded): the device is missing, is not a
/// file or block device, or holds another number of blocks than the cache was formatted for.
/// A translation layer's file is only checked to exist (its capacity is known after recovery).
pub fn check_recorded_backing(i: &Inspection) -> Option<String> {
    if i.state != "attached" {
        return None;
    }
    let path = Path::new(i.setup.backing_path.as_deref()?);
    if !path.exists() {
        return Some(format!(
            "the backing device {} recorded in the superblock does not exist (open and flush need it; name it \
             with --backing if it moved)",
            path.display()
        ));
    }
    if let (Some(recorded), Ok(now)) = (&i.setup.backing_id, crate::identity::BackingId::of(path)) {
        if !recorded.matches(&now) {
            return Some(format!(
                "{} is not the backing device this cache was created over ({recorded}; this is {now}); open \
                 refuses it unless told it moved (--backing-moved)",
                path.display()
            ));
        }
    }
    if std::fs::metadata(path).is_ok_and(|m| m.is_file()) && shingled_stl::detect(path).is_ok() {
        return None;
    }
    use std::os::unix::fs::FileTypeExt;
    let t = std::fs::metadata(path).map(|m| m.file_type());
    if !t.as_ref().is_ok_and(|t| t.is_file() || t.is_block_device()) {
        return Some(format!(
            "the backing device {} recorded in the superblock is not a regular file or a block device",
            path.display()
        ));
    }
    // Its size by seeking to its end (a file or a block device alike), without opening it for
    // writing: the check writes nothing and takes nothing a server holds.
    use std::io::{Seek, SeekFrom};
    let size = std::fs::File::open(path).and_then(|mut f| f.seek(SeekFrom::End(0)));
    match size {
        Err(e) => Some(format!("the backing device {} cannot be read: {e}", path.display())),
        Ok(bytes) if bytes / BLOCK as u64 != i.backing_blocks => Some(format!(
            "the backing device {} holds {} blocks but the cache was formatted for {} blocks; open refuses it",
            path.display(),
            bytes / BLOCK as u64,
            i.backing_blocks
        )),
        Ok(_) => None,
    }
}
