//! Block devices with modelled time: real bytes in a store, and every request also charged to
//! a device model of `shingled_device` (an SSD, a CMR drive, a DM-SMR drive) on a clock shared
//! by the devices of one experiment. This is how `shingled cache replay` runs the real data path
//! against an emulated DM-SMR drive: the bytes are real and verified, the time and the drive's
//! inner work (persistent-buffer writes, band read-modify-writes) are the model's.
//!
//! A modelled device charges requests the way the replay engine issues drive commands
//! ([`shingled_sim::Engine`]): with merging on, contiguous requests of the same direction are
//! gathered into one command until the host [`unplug`](BlockDevice::unplug)s, the direction
//! changes, the next request is not contiguous, or the command reaches the longest run
//! allowed (the engine's I/O unit: unbounded per request, or one block). With merging off,
//! every request is one command (the engine charges the SSD block by block, and the cache's
//! slot I/Os are single blocks). A flush is not a command: the models have no volatile state to
//! drain in a closed-loop replay, and the engine never flushes.

use shingled_core::Nanos;
use shingled_device::{Drive, DriveStats};
use shingled_stl::{BlockDevice, Result, BLOCK};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// The modelled clock of one experiment, shared by its devices: closed loop, each command
/// starts when the previous one (on any device) has ended.
#[derive(Clone, Debug, Default)]
pub struct ModelClock(Arc<AtomicU64>);

impl ModelClock {
    /// A clock at zero.
    pub fn new() -> ModelClock {
        ModelClock::default()
    }

    /// The time now.
    pub fn now(&self) -> Nanos {
        Nanos(self.0.load(Ordering::Relaxed))
    }

    fn advance(&self, by: Nanos) {
        self.0.fetch_add(by.0, Ordering::Relaxed);
    }
}

/// Modelled time a device spent, split by kind.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ModelTime {
    /// Reads of data blocks (at or above the metadata boundary).
    pub data_read: Nanos,
    /// Writes of data blocks.
    pub data_write: Nanos,
    /// Reads below the metadata boundary (a cache device's superblock and records).
    pub meta_read: Nanos,
    /// Writes below the metadata boundary.
    pub meta_write: Nanos,
    /// Blocks read below the metadata boundary.
    pub meta_blocks_read: u64,
    /// Blocks written below the metadata boundary.
    pub meta_blocks_written: u64,
}

/// A pending merged command.
#[derive(Clone, Copy, Debug)]
struct Run {
    write: bool,
    start: u64,
    len: u32,
}

/// A [`BlockDevice`] whose bytes live in `S` and whose time comes from a device model.
pub struct Modelled<S> {
    store: S,
    model: Box<dyn Drive>,
    clock: ModelClock,
    /// Longest merged command, blocks (`None`: no merging).
    max_run: Option<u32>,
    pending: Option<Run>,
    /// Blocks below this are metadata (timed apart).
    meta_below: u64,
    time: ModelTime,
    /// Off: requests move bytes without being charged (verification passes).
    accounting: bool,
    /// Whether metadata commands advance the shared clock.
    meta_on_clock: bool,
}

impl<S: BlockDevice> Modelled<S> {
    /// `store` timed by `model` on `clock`. `max_run`: `Some(n)` merges contiguous requests
    /// into commands of at most `n` blocks between unplugs (a drive behind a block layer);
    /// `None` charges every request as it comes (an SSD).
    pub fn new(store: S, model: Box<dyn Drive>, clock: ModelClock, max_run: Option<u32>) -> Modelled<S> {
        Modelled {
            store,
            model,
            clock,
            max_run: max_run.map(|n| n.max(1)),
            pending: None,
            meta_below: 0,
            time: ModelTime::default(),
            accounting: true,
            meta_on_clock: true,
        }
    }

    /// Times requests below block `blocks` apart, as metadata; `on_clock`: whether their time
    /// advances the shared clock (off: the other devices see the clock as if metadata took no
    /// time — the replay engine's accounting, which has no metadata).
    pub fn with_metadata_below(mut self, blocks: u64, on_clock: bool) -> Self {
        self.meta_below = blocks;
        self.meta_on_clock = on_clock;
        self
    }

    /// Turns the charging of requests on or off (a pending command is charged first).
    pub fn set_accounting(&mut self, on: bool) {
        self.issue();
        self.accounting = on;
    }

    /// The model's counters (a pending merged command is not in them until it is issued).
    pub fn model_stats(&self) -> DriveStats {
        self.model.stats()
    }

    /// The model.
    pub fn model(&self) -> &dyn Drive {
        self.model.as_ref()
    }

    /// Modelled time spent so far.
    pub fn time(&self) -> ModelTime {
        self.time
    }

    /// The clock.
    pub fn clock(&self) -> &ModelClock {
        &self.clock
    }

    /// The byte store.
    pub fn store(&self) -> &S {
        &self.store
    }

    /// The byte store, mutably (requests through it are not charged).
    pub fn store_mut(&mut self) -> &mut S {
        &mut self.store
    }

    /// Charges a pending merged command.
    fn issue(&mut self) {
        if let Some(r) = self.pending.take() {
            self.charge(r.write, r.start, r.len);
        }
    }

    fn charge(&mut self, write: bool, start: u64, len: u32) {
        let now = self.clock.now();
        let t = if write { self.model.write(now, start, len) } else { self.model.read(now, start, len) };
        let meta = start < self.meta_below;
        if !meta || self.meta_on_clock {
            self.clock.advance(t);
        }
        match (meta, write) {
            (false, false) => self.time.data_read += t,
            (false, true) => self.time.data_write += t,
            (true, false) => {
                self.time.meta_read += t;
                self.time.meta_blocks_read += len as u64;
            }
            (true, true) => {
                self.time.meta_write += t;
                self.time.meta_blocks_written += len as u64;
            }
        }
    }

    /// Accounts `n` blocks at `lba`, merging them block by block as the replay engine does.
    fn account(&mut self, write: bool, mut lba: u64, mut n: u64) {
        if !self.accounting || n == 0 {
            return;
        }
        let Some(max) = self.max_run else {
            // one command per request (commands are at most u32::MAX blocks)
            while n > 0 {
                let k = n.min(u32::MAX as u64) as u32;
                self.charge(write, lba, k);
                (lba, n) = (lba + k as u64, n - k as u64);
            }
            return;
        };
        while n > 0 {
            match &mut self.pending {
                Some(r) if r.write == write && r.start + r.len as u64 == lba && r.len < max => {
                    let k = n.min((max - r.len) as u64) as u32;
                    r.len += k;
                    (lba, n) = (lba + k as u64, n - k as u64);
                }
                _ => {
                    self.issue();
                    let k = n.min(max as u64) as u32;
                    self.pending = Some(Run { write, start: lba, len: k });
                    (lba, n) = (lba + k as u64, n - k as u64);
                }
            }
        }
    }
}

impl<S: BlockDevice> BlockDevice for Modelled<S> {
    fn capacity_blocks(&self) -> u64 {
        self.store.capacity_blocks()
    }

    fn read(&mut self, lba: u64, buf: &mut [u8]) -> Result<()> {
        self.store.read(lba, buf)?;
        self.account(false, lba, (buf.len() / BLOCK) as u64);
        Ok(())
    }

    fn write(&mut self, lba: u64, data: &[u8]) -> Result<()> {
        self.store.write(lba, data)?;
        self.account(true, lba, (data.len() / BLOCK) as u64);
        Ok(())
    }

    fn flush(&mut self) -> Result<()> {
        self.store.flush()
    }

    fn discard(&mut self, lba: u64, blocks: u64) -> Result<()> {
        // The models have no discard; a discard is free and ends no command.
        self.store.discard(lba, blocks)
    }

    fn unplug(&mut self) -> Result<()> {
        self.issue();
        self.store.unplug()
    }

    fn merges_requests(&self) -> bool {
        self.max_run.is_some()
    }

    fn name(&self) -> String {
        format!("{} ({} model)", self.store.name(), self.model.kind())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use shingled_device::SsdConfig;
    use shingled_stl::MemBlock;

    /// A model that records the commands it receives.
    struct Recorder(Arc<std::sync::Mutex<Vec<(bool, u64, u32)>>>);

    impl Drive for Recorder {
        fn read(&mut self, _: Nanos, b: u64, n: u32) -> Nanos {
            self.0.lock().unwrap().push((false, b, n));
            Nanos(10)
        }
        fn write(&mut self, _: Nanos, b: u64, n: u32) -> Nanos {
            self.0.lock().unwrap().push((true, b, n));
            Nanos(100)
        }
        fn stats(&self) -> DriveStats {
            DriveStats::default()
        }
        fn kind(&self) -> &'static str {
            "recorder"
        }
    }

    #[test]
    fn merges_contiguous_requests_until_unplug_as_the_engine_does() {
        let log = Arc::new(std::sync::Mutex::new(Vec::new()));
        let clock = ModelClock::new();
        let mut d =
            Modelled::new(MemBlock::new(100), Box::new(Recorder(log.clone())), clock.clone(), Some(4));
        let blk = |n: usize| vec![7u8; n * BLOCK];
        d.write(10, &blk(1)).unwrap();
        d.write(11, &blk(2)).unwrap(); // merged: 10..13
        d.flush().unwrap(); // not a boundary
        d.write(13, &blk(3)).unwrap(); // 13 joins up to 4 blocks, then 14..16 starts a new command
        d.unplug().unwrap();
        d.write(16, &blk(1)).unwrap(); // contiguous but after an unplug: its own command
        let mut r = blk(1);
        d.read(17, &mut r).unwrap(); // direction change
        d.read(30, &mut r).unwrap(); // not contiguous
        d.unplug().unwrap();
        assert_eq!(
            *log.lock().unwrap(),
            vec![(true, 10, 4), (true, 14, 2), (true, 16, 1), (false, 17, 1), (false, 30, 1)]
        );
        // the bytes are the store's
        d.read(12, &mut r).unwrap();
        assert_eq!(r, blk(1));
        assert_eq!(clock.now(), Nanos(3 * 100 + 2 * 10));
        assert_eq!(d.time().data_write, Nanos(300));
    }

    #[test]
    fn unmerged_device_charges_each_request_and_splits_metadata_time() {
        let clock = ModelClock::new();
        let ssd = SsdConfig::default().build().unwrap();
        let cost1 = ssd.write_cost(1);
        let mut d =
            Modelled::new(MemBlock::new(16), Box::new(ssd), clock.clone(), None).with_metadata_below(2, true);
        d.write(0, &[1u8; BLOCK]).unwrap();
        d.write(5, &[1u8; BLOCK]).unwrap();
        d.write(6, &[1u8; BLOCK]).unwrap();
        assert_eq!(d.time().meta_write, cost1);
        assert_eq!(d.time().data_write, cost1 + cost1);
        assert_eq!(d.time().meta_blocks_written, 1);
        assert_eq!(clock.now(), cost1 + cost1 + cost1);
        d.set_accounting(false);
        d.write(7, &[1u8; BLOCK]).unwrap();
        assert_eq!(clock.now(), cost1 + cost1 + cost1);
    }
}
