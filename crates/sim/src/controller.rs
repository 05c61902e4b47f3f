//! The cache's decisions for one block, apart from what executes them: which device each
//! block goes to, what is inserted, which victims are written back, and in what order.
//!
//! The replay [`crate::Engine`] executes these decisions on device *models* (modelled time);
//! a data-plane cache executes the same decisions with real bytes on real devices. One
//! implementation, so a policy decides the same in both: the simulator's hit, write-back and
//! RMW counts describe the running system.

use crate::error::ParseError;
use serde::{Deserialize, Serialize};
use shingled_cache::{BlockMeta, Cache, Foresight};
use shingled_core::BlockNo;

/// How the SSD cache treats reads and writes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Mode {
    /// Reads and writes are cached (write-back, write-allocate, read-allocate). Clean victims
    /// are dropped, dirty victims written back. PORE §V-C1's read-write cache.
    #[default]
    ReadWrite,
    /// Read requests are dropped from the workload and the whole SSD caches writes (PORE §V-C2,
    /// SAC §6.2).
    WriteOnly,
    /// Only reads are cached; writes go to the drive, and a cached copy of a written block is
    /// invalidated (write-around, as bcache's `writearound`).
    ReadOnly,
    /// Writes are cached as in write-only mode, but reads stay in the workload: a read is
    /// served from the cache when its block is cached (dirty), otherwise passed through to the
    /// drive without being cached.
    WriteCache,
}

impl Mode {
    /// All modes with their names.
    pub const ALL: [(Mode, &'static str); 4] = [
        (Mode::ReadWrite, "read-write"),
        (Mode::WriteOnly, "write-only"),
        (Mode::ReadOnly, "read-only"),
        (Mode::WriteCache, "write-cache"),
    ];

    /// The mode's name.
    pub fn name(self) -> &'static str {
        Mode::ALL.iter().find(|(m, _)| *m == self).map(|(_, n)| *n).unwrap_or("?")
    }

    /// Whether the cache's size is a fraction of the written range (write-caching modes) rather
    /// than of the accessed range (PORE §V-C).
    pub fn sized_by_written_range(self) -> bool {
        matches!(self, Mode::WriteOnly | Mode::WriteCache)
    }
}

impl std::str::FromStr for Mode {
    type Err = ParseError;
    fn from_str(s: &str) -> Result<Self, ParseError> {
        Mode::ALL.iter().find(|(_, n)| *n == s).map(|(m, _)| *m).ok_or_else(|| ParseError::Mode(s.into()))
    }
}

/// What executes the controller's decisions. Calls come in the order the I/Os must happen:
/// a block read from the drive before it is written into the cache, a victim read from the
/// cache before its slot is reused.
pub trait Io {
    /// Reads block `b` from its cache slot.
    fn ssd_read(&mut self, b: BlockNo);
    /// Writes block `b` (the host's data, or what was just read from the drive) into its slot.
    fn ssd_write(&mut self, b: BlockNo);
    /// Reads block `b` from the backing drive.
    fn drive_read(&mut self, b: BlockNo);
    /// Writes block `b` to the backing drive (the host's data, or a victim just read from the
    /// cache).
    fn drive_write(&mut self, b: BlockNo);
    /// The drive I/Os queued so far must be issued now (a write-back interrupts a run of
    /// reads being gathered). Only timing cares.
    fn barrier(&mut self) {}
    /// A read hit.
    fn read_hit(&mut self) {}
    /// A write hit.
    fn write_hit(&mut self) {}
    /// A victim left the cache; `dirty`: it was written back (after `ssd_read`, `drive_write`).
    fn evicted(&mut self, _dirty: bool) {}
    /// A hint: block `b`, dirty, will probably be written to the drive soon (a victim a few
    /// write-backs on in the batch being written back, or the cache's next victim), so a model
    /// may prefetch its state for it. Nothing to execute.
    fn next_write_back(&mut self, _b: BlockNo) {}
    /// Whether [`Io::next_write_back`] does anything (asked per eviction, so that an executor
    /// without use for the hints spares the controller finding them). Default: `false`.
    fn wants_write_hints(&self) -> bool {
        false
    }
}

/// How many write-backs ahead a batch of victims is announced to the drive
/// ([`Io::next_write_back`]).
const WRITE_BACK_AHEAD: usize = 16;

/// The future of the block accesses, one [`Foresight`] per block the controller is asked about,
/// in order: what an offline policy needs ([`shingled_cache::PolicyBuilder::needs_future`]).
pub trait Foreknowledge: Send + std::fmt::Debug {
    /// The foresight of the next access, which is a read or write of `block`.
    fn next(&mut self, write: bool, block: BlockNo) -> Foresight;
}

/// The cache (if any) and its mode: decides, block by block, what an [`Io`] does.
#[derive(Debug)]
pub struct Controller {
    mode: Mode,
    cache: Option<Cache>,
    evicted: Vec<BlockMeta>,
    future: Option<Box<dyn Foreknowledge>>,
}

impl Controller {
    /// A controller for `cache` in `mode` (`None`: every block goes to the drive).
    pub fn new(mode: Mode, cache: Option<Cache>) -> Controller {
        Controller { mode, cache, evicted: Vec::with_capacity(64), future: None }
    }

    /// Gives an offline policy the trace's future: each block's [`Foresight`] is passed to the
    /// cache ([`Cache::foresee`]) before the block is decided.
    pub fn with_future(mut self, future: Box<dyn Foreknowledge>) -> Controller {
        self.future = Some(future);
        self
    }

    /// The cache mode.
    pub fn mode(&self) -> Mode {
        self.mode
    }

    /// The cache, if any.
    pub fn cache(&self) -> Option<&Cache> {
        self.cache.as_ref()
    }

    /// The cache, mutably: for a data path that changes a block's state outside the per-block
    /// decisions (a cleaner marking written-back blocks clean with [`Cache::mark_clean`]).
    pub fn cache_mut(&mut self) -> Option<&mut Cache> {
        self.cache.as_mut()
    }

    /// Whether a read request is dropped from the workload (write-only mode).
    pub fn skips(&self, write: bool) -> bool {
        !write && self.mode == Mode::WriteOnly
    }

    /// Decides for block `b` of a read or write request.
    #[inline]
    pub fn block<I: Io>(&mut self, write: bool, b: BlockNo, io: &mut I) {
        if let Some(f) = self.future.as_mut() {
            let seen = f.next(write, b);
            if let Some(c) = self.cache.as_mut() {
                c.foresee(&seen);
            }
        }
        if self.cache.is_none() {
            if write {
                io.drive_write(b)
            } else {
                io.drive_read(b)
            }
            return;
        }
        match (write, self.mode) {
            (false, Mode::ReadWrite | Mode::ReadOnly) => self.read_allocate(b, io),
            (false, _) => self.read_pass_through(b, io),
            (true, Mode::ReadOnly) => self.write_around(b, io),
            (true, _) => self.write_back(b, io),
        }
    }

    fn live_cache(&mut self) -> &mut Cache {
        self.cache.as_mut().expect("cached path without a cache")
    }

    /// Read with read-allocate: hit from the cache, miss from the drive then filled in.
    fn read_allocate<I: Io>(&mut self, b: BlockNo, io: &mut I) {
        if self.live_cache().access(b, false).is_some() {
            io.read_hit();
            io.ssd_read(b);
        } else {
            io.drive_read(b);
            self.insert(b, false, io);
            io.ssd_write(b);
        }
    }

    /// Read that is not cached on a miss (write-cache mode).
    fn read_pass_through<I: Io>(&mut self, b: BlockNo, io: &mut I) {
        if self.live_cache().access(b, false).is_some() {
            io.read_hit();
            io.ssd_read(b);
        } else {
            io.drive_read(b);
        }
    }

    /// Write-back, write-allocate.
    fn write_back<I: Io>(&mut self, b: BlockNo, io: &mut I) {
        if self.live_cache().access(b, true).is_some() {
            io.write_hit();
        } else {
            self.insert(b, true, io);
        }
        io.ssd_write(b);
    }

    /// Write around the cache, dropping a stale cached copy.
    fn write_around<I: Io>(&mut self, b: BlockNo, io: &mut I) {
        self.live_cache().invalidate(b);
        io.drive_write(b);
    }

    /// Inserts a block, writing back the dirty victims the policy chose.
    #[inline]
    fn insert<I: Io>(&mut self, b: BlockNo, dirty: bool, io: &mut I) {
        let Controller { cache, evicted, .. } = self;
        evicted.clear();
        let one = cache.as_mut().expect("cached path without a cache").insert_one(b, dirty, evicted);
        let hints = io.wants_write_hints();
        if let Some(v) = one {
            // One victim (LRU, ARC, …): no vector.
            io.barrier();
            write_back(io, &v);
            io.barrier();
        } else if evicted.is_empty() {
            return;
        } else {
            self.write_back_all(io, hints);
        }
        if hints {
            if let Some(next) = self.cache.as_ref().and_then(|c| c.next_victim()) {
                if next.dirty {
                    io.next_write_back(next.block);
                }
            }
        }
    }

    /// Writes back the victims of one eviction in `evicted`, in order, hinting the drive at
    /// the dirty ones [`WRITE_BACK_AHEAD`] ahead when it wants hints.
    fn write_back_all<I: Io>(&self, io: &mut I, hints: bool) {
        let evicted = &self.evicted;
        io.barrier();
        if hints && evicted.len() > 1 {
            // A batch of victims (SAC, MOST, …): the drive is told of the dirty ones a few
            // write-backs ahead, so that the misses on its state for them overlap.
            for v in evicted.iter().take(WRITE_BACK_AHEAD).skip(1) {
                if v.dirty {
                    io.next_write_back(v.block);
                }
            }
            for (i, v) in evicted.iter().enumerate() {
                if let Some(w) = evicted.get(i + WRITE_BACK_AHEAD) {
                    if w.dirty {
                        io.next_write_back(w.block);
                    }
                }
                write_back(io, v);
            }
        } else {
            for v in evicted.iter() {
                write_back(io, v);
            }
        }
        io.barrier();
    }
}

/// Executes the eviction of `v`: a dirty victim is read from the cache and written back.
#[inline(always)]
fn write_back<I: Io>(io: &mut I, v: &BlockMeta) {
    if v.dirty {
        io.ssd_read(v.block);
        io.drive_write(v.block);
    }
    io.evicted(v.dirty);
}
