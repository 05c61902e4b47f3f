//! The drive-managed SMR drive of the PORE and SAC papers: a persistent buffer (PB) managed as a
//! FIFO log in front of shingled bands, cleaned by band read-modify-write (RMW).
//!
//! # Semantics
//!
//! The PB is a FIFO log of `pb_size / 4096` slots of 4 KiB. Every host write of a block goes to
//! the PB:
//!
//! - a block without a valid PB copy is appended at the tail;
//! - a block that already has a valid PB copy is, with [`PbFlavour::AppendOnly`] (SAC's emulator,
//!   `emulator_v2.c`), appended again and its old copy invalidated; with [`PbFlavour::InPlace`]
//!   (PORE's `smr-simulator.c`), updated where it is: no new slot, its FIFO position unchanged,
//!   counted in [`DriveStats::pb_rewrites_in_place`].
//!
//! **Cleaning.** When a write needs a slot and the PB is full, the drive takes the oldest valid
//! PB block (stale entries at the head are dropped on the way), and cleans its band: it reads the
//! whole band, merges every valid PB block of that band, and writes the band back. That is one
//! RMW: `rmws += 1`, `band_bytes_read` and `band_bytes_written` grow by the band's size,
//! `pb_blocks_cleaned` by the number of merged blocks, and those blocks leave the PB. This repeats
//! until a slot is free. Write amplification is `band_bytes_written / (pb_blocks_cleaned × 4096)`
//! ([`DriveStats::write_amplification`]).
//!
//! **High watermark** ([`DmSmrConfig::pb_clean_high_watermark`], off by default): cleaning
//! starts when a write needs a slot and the slot occupancy is at or above `ceil(w × slots)`
//! instead of only when every slot is taken, and goes on until it is below (SMaRT §5.1 runs its
//! Skylight drive with "an on-demand GC ... triggered when the persistent cache space is 80%
//! full"). The PB then never holds more than that share. Off (or 1.0) is the behaviour above.
//!
//! **Batch cleaning** ([`DmSmrConfig::pb_clean_low_watermark`], off by default): once cleaning
//! is forced, it goes on in the same FIFO order until the slot occupancy and the live entries
//! are both at or below the watermark's fraction of their limits; the write that found the PB
//! full waits for all of it. A stall of many RMWs, then writes at PB speed again.
//!
//! When a slot counts as free depends on [`PbFree`]:
//!
//! - [`PbFree::Immediate`]: the slots of merged or superseded blocks are reusable at once; the
//!   occupancy is the number of valid blocks. An idealised log, and the reading of the papers'
//!   text ("a FIFO queue" of blocks).
//! - [`PbFree::AtHead`]: the log is a ring; a hole left in its middle (a superseded copy, or a
//!   block merged by cleaning another block's band) keeps occupying a slot until the head passes
//!   it; the occupancy is the ring length including holes. That is how both artifacts behave
//!   (SAC: `invalidDespInFIFO` only advances the head over *leading* invalid slots,
//!   github.com/dcstrange/sac `src/smr-emulator/emulator_v2.c` lines 267–278; PORE: the cleaner
//!   frees one head slot at a time, so slots invalidated by an RMW free up one per append when
//!   the head reaches them, github.com/wcl14/smr-ssd-cache `src/smr-simulator/smr-simulator.c`,
//!   `freeStrategySSD`).
//!
//! | flavour / free | what it models |
//! |---|---|
//! | `append-only` + `immediate` | the default: a log-structured PB with ideal space reuse |
//! | `append-only` + `at-head` | SAC's emulator as implemented (`sac-emulator` profile) and our reading of a real drive's on-disk log (`st5000as0011`) |
//! | `in-place` + `at-head` | PORE's emulator as implemented (`pore-emulator`) |
//! | `in-place` + `immediate` | PORE's in-place FIFO with ideal space reuse |
//!
//! One ordering detail matters for append-only rewrites in `at-head` mode: the new copy's slot
//! is obtained first (which may clean, and may merge the old copy with its band), and only then
//! is a still-valid old copy invalidated. That follows SAC's `simu_smr_write`, which takes a slot
//! (cleaning inside `getFIFODesp` if the log is full) before invalidating the old copy
//! (github.com/dcstrange/sac, `src/smr-emulator/emulator_v2.c`, lines 222 and 237–246).
//!
//! Reads: a block whose latest copy is in the PB is read from its PB slot (`pb_reads`), every
//! other block from its band. A multi-block request is split into runs of physically contiguous
//! blocks from the same region; each run is one mechanism access, and the number of runs is the
//! read's pieces ([`crate::StlStats::read_pieces`], SMaRT Figs. 6–9).
//!
//! **SMaRT's terms** ([`crate::StlStats`]): a cleaning forced by a write is an on-demand GC, an
//! idle-time cleaning a background GC, and a write request that forced one is an "amplified
//! write" (SMaRT §5.5.3). The I/O requests of a cleaning (SMaRT Figs. 11–13's overhead for
//! Skylight, "the total number of I/O requests needed for a single GC operation") are counted as
//! one read per merged PB block plus the band read and the band write (choice: the model charges
//! the merged blocks by bandwidth as one sweep, but an implementation with a block-level PB map,
//! as SMaRT's DiskSim one, issues a request per block; counting contiguous runs instead would
//! need a walk over the band's PB blocks that the O(1) cleaning avoids).
//!
//! # Timing
//!
//! PORE's Eq. 1, second case: the PB is on the outer tracks and shares the heads with the bands,
//! so PB and band times add. Physical layout on the [`Mechanism`]: the PB occupies bytes
//! `[0, pb)` at the outer diameter, slot `i` at `i × 4096`; LBA block `b` lives at
//! `pb + b × 4096`. Appends go to consecutive slots, so a burst of appends streams (no seek, no
//! rotation after the first); an in-place update or a PB read seeks to its slot. An RMW is charged
//! to the write that triggered it (and summed into `clean_time`):
//!
//! 1. read the merged PB copies: `merged × 4096 / PB-region rate` (Eq. 1's `S / B_rbuf`; charged by
//!    bandwidth only, as if the drive read them in one sorted sweep);
//! 2. position to the band and read it (seek + rotation + transfer at the band's rate);
//! 3. write it back: re-position to the band start (the mechanism model gives the seek back over
//!    the band and the rotational wait, about one revolution) and transfer again.
//!
//! The mechanism keeps one head position and one busy-until clock for all of it.
//!
//! # Cost
//!
//! O(1) amortised per block and O(1) per cleaning, whatever the number of blocks merged. The
//! log is a fixed ring of `(sequence number, block)` entries, each at a stable position (with
//! [`PbFree::AtHead`] the position is the physical slot); a compact open-addressing index maps
//! each block to the position of its latest copy in the log, its key read back from the entry
//! (`dm_smr/index.rs`); per band, a count of valid PB blocks and a "cleaned at sequence" mark. A
//! PB entry is valid iff it is its block's latest copy and its sequence number is at or above
//! its band's mark, so cleaning a band only sets the mark; the merged entries are recognised as
//! stale lazily, when they reach the head or are looked up. A write's one probe finds the block's
//! previous copy and where the block goes in the index, and its append points the index there
//! (the probe is redone only if making room removed an entry on its path) and marks the previous
//! entry superseded, so the head is judged from the entry and its band's mark alone; a latest copy
//! leaves the index when it leaves the log. With [`PbFree::Immediate`] superseded and merged
//! entries stay in the ring until the head reaches them, so the ring (twice the capacity) is
//! compacted when full: at most `cap` entries survive, re-indexed at their new positions, so a
//! compaction comes at most once per `cap` appends. No allocation per operation and no rehash:
//! the index is allocated whole (8 B buckets, twice the ring's positions rounded up to a power
//! of two), the ring as it first fills. Memory per PB slot: 32 to 48 B with `AtHead` (16 B of
//! ring, 16 to 32 B of index: 36 B at a 3.2 GiB PB), 64 to 96 B with `Immediate`, plus 12 B per
//! band. PBs of up to 2^30 slots (4 TiB).
//!
//! # Operation log
//!
//! Off by default. [`DmSmr::record_ops`] turns on a log of what a layer doing the I/O for real
//! must do, in order ([`DmSmrOp`]): a host block appended to a PB slot, a block updated in place
//! in its slot, a band cleaned. The model decides, the layer executes, as a translation layer on
//! real storage does with the SMaRT model's track operations. A cleaning names only its band:
//! the blocks it merges are those whose latest copy the layer holds in the PB. Dropping stale
//! entries at the log's head needs no I/O and is not logged. The slot an append names is
//! `sequence number mod slots`: with [`PbFree::AtHead`] it never holds a valid copy when
//! reused; with [`PbFree::Immediate`] (an idealised log whose occupancy counts valid blocks
//! only) it may, so that mode has no physical placement a layer could follow.
//!
//! # Capacity
//!
//! The host-visible capacity is `capacity` (bands cover exactly `[0, capacity)`). Building fails
//! if the PB and the bands do not fit on the mechanism. At run time a request reaching beyond the
//! capacity is served for its in-range part only and the rest counted in
//! [`DriveStats::out_of_range_blocks`]; the replay engine validates the trace's range with
//! [`Drive::check_range`] / [`Drive::capacity_blocks`] before replay, so this never happens in a
//! valid run.

use crate::envelope;
use crate::error::{invalid, DeviceError, Result};
use crate::hdd::{HddConfig, Mechanism};
use crate::{BuildContext, Drive, DriveStats};
use rustc_hash::FxHashMap;
use serde::{Deserialize, Serialize};
use shingled_core::{BandConfig, BandMap, BlockNo, ByteSize, Nanos, SizeSpec, BLOCK_SIZE};
use std::collections::VecDeque;

mod index;
use index::{PosIndex, Probe, Ring};

/// What a rewrite of a block that is already in the persistent buffer does.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum PbFlavour {
    /// Append a new copy at the tail and invalidate the old one (SAC's emulator).
    #[default]
    AppendOnly,
    /// Update the existing copy where it is, keeping its FIFO position (PORE's emulator).
    InPlace,
}

/// When the slot of a PB entry that is no longer valid can be reused.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum PbFree {
    /// At once: occupancy = valid blocks.
    #[default]
    Immediate,
    /// When the ring's head passes it: occupancy = ring length including holes (both artifacts).
    AtHead,
}

/// Where the persistent buffer lives (PORE Eq. 1's two cases).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum PbMedium {
    /// Outer tracks of the platters, sharing the heads with the bands: PB and band times add
    /// (Eq. 1, second case; the ST5000AS0011 per Skylight).
    #[default]
    Disk,
    /// A built-in flash buffer: PB I/O runs on its own timeline, in parallel with band I/O, so
    /// an RMW's merge reads overlap its band read (Eq. 1, first case: `max()`).
    Flash,
}

/// `FromStr` and `Display` with the same kebab-case names serde uses, listed once per enum.
macro_rules! text_names {
    ($ty:ident, $what:literal, $($variant:ident = $name:literal),+) => {
        impl std::str::FromStr for $ty {
            type Err = DeviceError;
            fn from_str(s: &str) -> std::result::Result<Self, DeviceError> {
                match s.trim() {
                    $($name => Ok($ty::$variant),)+
                    other => Err(DeviceError::UnknownName {
                        what: $what,
                        name: other.into(),
                        expected: text_names!(@list $($name),+),
                    }),
                }
            }
        }
        impl std::fmt::Display for $ty {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(match self { $($ty::$variant => $name,)+ })
            }
        }
    };
    (@list $first:literal $(, $rest:literal)*) => { concat!($first $(, " or ", $rest)*) };
}

text_names!(PbFlavour, "PB flavour", AppendOnly = "append-only", InPlace = "in-place");
text_names!(PbFree, "PB free mode", Immediate = "immediate", AtHead = "at-head");
text_names!(PbMedium, "PB medium", Disk = "disk", Flash = "flash");

/// One operation of the [operation log](DmSmr#operation-log): what a layer doing real I/O must
/// do, in the order the model did it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DmSmrOp {
    /// Host block `block` written to PB slot `slot` (its byte offset in the PB is
    /// `slot × 4096`), at the log's tail; the block's previous PB copy, if any, is dead.
    Append {
        /// The host block.
        block: BlockNo,
        /// The PB slot.
        slot: u64,
    },
    /// Host block `block` rewritten where its PB copy is, in slot `slot` ([`PbFlavour::InPlace`]).
    InPlace {
        /// The host block.
        block: BlockNo,
        /// The PB slot holding its copy.
        slot: u64,
    },
    /// One RMW of band `band`: read the band, merge every block of it whose latest copy is in
    /// the PB, write the whole band; those PB copies are dead afterwards. `idle` if idle-time
    /// cleaning did it.
    Clean {
        /// The band.
        band: u32,
        /// Done by idle-time cleaning.
        idle: bool,
    },
}

/// Timing of a flash persistent buffer (`pb_medium = "flash"`): `latency + bytes / bandwidth`
/// per access, one access at a time. The defaults are a SATA-class flash device (Intel DC S4500
/// product specification: 110 / 52 µs random read / write latency, 500 / 490 MB/s sequential),
/// as no drive-managed SMR product documents its flash buffer.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct FlashPbConfig {
    /// Read latency per access, µs. Default 110; bounds 0 ..= 100000.
    pub read_latency_us: f64,
    /// Write latency per access, µs. Default 52; bounds 0 ..= 100000.
    pub write_latency_us: f64,
    /// Read bandwidth, MB/s. Default 500; bounds (0, 100000].
    pub read_mb_s: f64,
    /// Write bandwidth, MB/s. Default 490; bounds (0, 100000].
    pub write_mb_s: f64,
}

impl Default for FlashPbConfig {
    fn default() -> Self {
        FlashPbConfig { read_latency_us: 110.0, write_latency_us: 52.0, read_mb_s: 500.0, write_mb_s: 490.0 }
    }
}

impl FlashPbConfig {
    fn validate(&self) -> Result<()> {
        for (field, v) in [
            ("pb_flash.read_latency_us", self.read_latency_us),
            ("pb_flash.write_latency_us", self.write_latency_us),
        ] {
            if !(v.is_finite() && (0.0..=100_000.0).contains(&v)) {
                return Err(invalid(field, v, "expected microseconds in 0 ..= 100000"));
            }
        }
        for (field, v) in [("pb_flash.read_mb_s", self.read_mb_s), ("pb_flash.write_mb_s", self.write_mb_s)] {
            if !(v.is_finite() && v > 0.0 && v <= 100_000.0) {
                return Err(invalid(field, v, "expected MB/s in (0, 100000]"));
            }
        }
        Ok(())
    }
}

/// Parameters of the [`DmSmr`] model. The default is an ST5000AS0011-like drive with PORE's
/// uniform 17–36 MB bands and a PB of 1/256 of the written range.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct DmSmrConfig {
    /// Host-visible capacity (the band region); requests must stay below it. Default 5 TB;
    /// bounds 4 KiB ..= 2^60 B, and `pb + capacity <= mechanism.capacity`.
    pub capacity: ByteSize,
    /// Persistent-buffer size: absolute (`"20GB"`) or a fraction of the written LBA range given
    /// at build time (`"1/256"`, PORE §V-A: 20 GB / 5 TB). Default `1/256`; bounds: at least one
    /// 4 KiB block, fractions in (0, 1]. Rounded down to whole blocks, never below one.
    pub pb_size: SizeSpec,
    /// Rewrite of a block already in the PB. Default `append-only`.
    pub pb_flavour: PbFlavour,
    /// When a dead PB slot becomes reusable. Default `immediate`.
    pub pb_free: PbFree,
    /// Band layout over `[0, capacity)`. Default uniform 17–36 MB, seed 0 (PORE §V-A).
    pub bands: BandConfig,
    /// The disk mechanics underneath; its `capacity` is the physical one and must hold the PB
    /// (on disk) and the bands. Default [`HddConfig::archive_5900_5tb`]. Its `write_cache`, when
    /// enabled, is the drive's volatile DRAM cache in front of the persistent buffer (see
    /// docs/drive-models.md, "Write cache"); it needs `pb_medium = "disk"`.
    pub mechanism: HddConfig,
    /// Most PB entries (mapping records) the drive keeps: one per host write extent appended to
    /// the PB, freed when none of its blocks is still valid in the PB. The PB is full when its
    /// slots *or* its entries run out (SAC §5.1: data area or metadata area; Table 3: the
    /// capacity found grows with the write size, 720 MB at 4 KB, 1450 MB at 8 KB, i.e. about
    /// 184 k entries). Default none: only slots count (the papers' emulators). Bounds ≥ 1.
    pub pb_max_entries: Option<u64>,
    /// Cost of merging one PB block during an RMW, ms. Default 0.41 (calibrated): SAC §4.4 fits
    /// 0.728 ms per block to the whole write-back, of which a PB append is 0.317 ms (Table 3:
    /// 3156 IOPS). `None` (written `"bandwidth"` in TOML and JSON): the block is read at the PB
    /// medium's bandwidth only (Eq. 1's `S / B_rbuf`). Bounds 0 ..= 1000.
    #[serde(with = "merge_cost")]
    pub pb_merge_ms_per_block: Option<f64>,
    /// Where the PB lives. Default `disk`.
    pub pb_medium: PbMedium,
    /// Flash timing, used when `pb_medium = "flash"`.
    pub pb_flash: FlashPbConfig,
    /// Idle-time cleaning: when the host leaves the drive idle for longer than this window (ms),
    /// the drive cleans bands in FIFO order until the next request (Skylight: aggressive idle
    /// cleaning; SMaRT §5.1 configures its Skylight drive with a 1242 ms window, and §5.5.4 uses
    /// the same window for SMaRT's own background GC). Only an open-loop replay calling
    /// [`Drive::idle`] triggers it. Default none; bounds 0 ..= 10^7.
    pub idle_window_ms: Option<f64>,
    /// High watermark: a write that needs a PB slot cleans bands (in FIFO order) while the slot
    /// occupancy (by the [`PbFree`] rule) is at or above `ceil(w × slots)`, so the PB is never
    /// fuller than that (SMaRT §5.1's Skylight: 0.8). Default none: clean only when every slot
    /// is taken (the same as 1.0). Bounds `0 < w <= 1`, and above `pb_clean_low_watermark`.
    pub pb_clean_high_watermark: Option<f64>,
    /// Batch cleaning: once a write finds the PB full (slots or entries), the drive keeps
    /// cleaning bands in FIFO order until the slot occupancy (by the [`PbFree`] rule) is at most
    /// `floor(w × slots)` **and** the live entries at most `floor(w × pb_max_entries)`, so one
    /// forced cleaning is a stall of many RMWs, after which writes are absorbed at PB speed
    /// again (storj/storj#3854: the drive freezes for "a few dozen seconds"; SAC Table 2's
    /// 869.6% RSD of 4 KB random writes, i.e. writes landing in ~1% of the seconds). Default
    /// none: clean one band at a time, only until the write fits (the papers' emulators).
    /// Bounds `0 <= w < 1`.
    pub pb_clean_low_watermark: Option<f64>,
}

/// Merge cost of one PB block in an RMW, ms: SAC §4.4's fitted `R(x) = 0.728x + 436` ms counts
/// 0.728 ms per block for the whole write-back, of which one PB append is 1/3156 s = 0.317 ms
/// (SAC Table 3); the rest, 0.41 ms, is the merge. The default of
/// [`DmSmrConfig::pb_merge_ms_per_block`]; the calibrated profiles ([`crate::profiles`]) use it too.
pub const MERGE_MS_PER_BLOCK: f64 = 0.41;

impl Default for DmSmrConfig {
    fn default() -> Self {
        DmSmrConfig {
            capacity: ByteSize(5_000_000_000_000),
            pb_size: SizeSpec::Fraction(1.0 / 256.0),
            pb_flavour: PbFlavour::AppendOnly,
            pb_free: PbFree::Immediate,
            bands: BandConfig::default(),
            mechanism: HddConfig::archive_5900_5tb(),
            pb_max_entries: None,
            pb_merge_ms_per_block: Some(MERGE_MS_PER_BLOCK),
            pb_medium: PbMedium::Disk,
            pb_flash: FlashPbConfig::default(),
            idle_window_ms: None,
            pb_clean_high_watermark: None,
            pb_clean_low_watermark: None,
        }
    }
}

/// `pb_merge_ms_per_block` on the wire: a number of ms, or `"bandwidth"` for `None` (a plain
/// `None` would be left out, and reading it back would give the default instead).
mod merge_cost {
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(v: &Option<f64>, s: S) -> Result<S::Ok, S::Error> {
        match v {
            Some(ms) => s.serialize_f64(*ms),
            None => s.serialize_str("bandwidth"),
        }
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<f64>, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Raw {
            Ms(f64),
            Word(String),
        }
        match Raw::deserialize(d)? {
            Raw::Ms(ms) => Ok(Some(ms)),
            Raw::Word(w) if w == "bandwidth" => Ok(None),
            Raw::Word(w) => Err(serde::de::Error::custom(format!(
                "pb_merge_ms_per_block = {w:?}: expected a number of ms or \"bandwidth\""
            ))),
        }
    }
}

/// Upper bound on the number of bands, so per-band tables stay allocatable (12 B each).
const MAX_BANDS: usize = 1 << 28;

/// Upper bound on the PB's slots (a 4 TiB PB): the log's positions are indexed as `u32`.
const MAX_PB_SLOTS: u64 = 1 << 30;

impl DmSmrConfig {
    /// Checks every field that can be checked without a build context.
    pub fn validate(&self) -> Result<()> {
        if self.capacity.0 < BLOCK_SIZE || self.capacity.0 > 1 << 60 {
            return Err(invalid("capacity", self.capacity, "expected 4 KiB ..= 2^60 bytes"));
        }
        match self.pb_size {
            SizeSpec::Absolute(b) if b.0 < BLOCK_SIZE => {
                return Err(invalid(
                    "pb_size",
                    self.pb_size,
                    "the persistent buffer needs at least one 4 KiB block",
                ))
            }
            SizeSpec::Fraction(f) if !(f > 0.0 && f <= 1.0) => {
                return Err(invalid(
                    "pb_size",
                    self.pb_size,
                    "a fraction of the written range must be in (0, 1]",
                ))
            }
            _ => {}
        }
        self.bands.validate().map_err(|e| invalid("bands", format!("{:?}", self.bands), e.to_string()))?;
        self.mechanism.validate().map_err(|e| e.within("mechanism"))?;
        if self.mechanism.write_cache.enabled && self.pb_medium == PbMedium::Flash {
            return Err(invalid(
                "mechanism.write_cache.enabled",
                true,
                "the volatile write cache sits in front of a persistent buffer on the platters; \
                 with pb_medium = \"flash\" turn it off",
            ));
        }
        if self.pb_max_entries == Some(0) {
            return Err(invalid("pb_max_entries", 0, "at least one entry (or leave it out for no limit)"));
        }
        if let Some(m) = self.pb_merge_ms_per_block {
            if !(m.is_finite() && (0.0..=1000.0).contains(&m)) {
                return Err(invalid("pb_merge_ms_per_block", m, "expected ms in 0 ..= 1000"));
            }
        }
        if let Some(w) = self.idle_window_ms {
            if !(w.is_finite() && (0.0..=1e7).contains(&w)) {
                return Err(invalid("idle_window_ms", w, "expected ms in 0 ..= 10000000"));
            }
        }
        if let Some(w) = self.pb_clean_low_watermark {
            if !(w.is_finite() && (0.0..1.0).contains(&w)) {
                return Err(invalid(
                    "pb_clean_low_watermark",
                    w,
                    "expected a fraction of the PB in 0 ..< 1 (or leave it out to clean one band at a time)",
                ));
            }
        }
        if let Some(w) = self.pb_clean_high_watermark {
            if !(w.is_finite() && w > 0.0 && w <= 1.0) {
                return Err(invalid(
                    "pb_clean_high_watermark",
                    w,
                    "expected a fraction of the PB in (0, 1] (or leave it out to clean when full)",
                ));
            }
            if let Some(low) = self.pb_clean_low_watermark {
                if low >= w {
                    return Err(invalid(
                        "pb_clean_high_watermark",
                        w,
                        format!("must be above pb_clean_low_watermark = {low}"),
                    ));
                }
            }
        }
        self.pb_flash.validate()?;
        if let SizeSpec::Absolute(pb) = self.pb_size {
            self.check_pb_slots(pb)?;
            self.check_fits(pb.0)?;
        }
        Ok(())
    }

    fn check_pb_slots(&self, pb: ByteSize) -> Result<()> {
        if pb.0 / BLOCK_SIZE > MAX_PB_SLOTS {
            return Err(invalid("pb_size", pb, "at most 4 TiB (2^30 blocks of 4 KiB) is supported"));
        }
        Ok(())
    }

    fn check_fits(&self, pb: u64) -> Result<()> {
        // A flash PB takes no room on the platters.
        let pb = if self.pb_medium == PbMedium::Flash { 0 } else { pb };
        if pb.saturating_add(self.capacity.0) > self.mechanism.capacity.0 {
            return Err(DeviceError::LayoutDoesNotFit {
                pb: ByteSize(pb),
                capacity: self.capacity,
                mechanism: self.mechanism.capacity,
            });
        }
        Ok(())
    }

    /// The PB size in bytes for this build context (a multiple of 4 KiB, at least one block).
    pub fn resolve_pb(&self, ctx: &BuildContext) -> Result<ByteSize> {
        match self.pb_size {
            SizeSpec::Absolute(_) => Ok(self.pb_size.resolve(0)),
            SizeSpec::Fraction(_) if ctx.written_range.0 == 0 => {
                Err(DeviceError::MissingWrittenRange { spec: self.pb_size.to_string() })
            }
            SizeSpec::Fraction(_) => Ok(self.pb_size.resolve(ctx.written_range.0)),
        }
    }

    /// Validates, resolves the PB size against `ctx` and builds the drive.
    pub fn build(&self, ctx: &BuildContext) -> Result<DmSmr> {
        self.validate()?;
        let pb = self.resolve_pb(ctx)?;
        self.check_pb_slots(pb)?;
        self.check_fits(pb.0)?;
        let bands = BandMap::build(&self.bands, self.capacity)
            .map_err(|e| invalid("bands", format!("{:?}", self.bands), e.to_string()))?;
        if bands.len() > MAX_BANDS {
            return Err(invalid(
                "bands",
                format!("{:?}", self.bands),
                format!("gives {} bands over {}; at most {MAX_BANDS} supported", bands.len(), self.capacity),
            ));
        }
        let mech = self.mechanism.mechanism().map_err(|e| e.within("mechanism"))?;
        Ok(DmSmr::new(self, pb.0 / BLOCK_SIZE, bands, mech))
    }
}

/// One PB log entry: the `seq`-th append, holding `block`. With [`PbFree::AtHead`] a later
/// append of the same block marks the entry superseded (the top bit of `seq`), so the log's head
/// is judged without a map lookup.
#[derive(Clone, Copy, Debug)]
struct Entry {
    seq: u64,
    block: BlockNo,
}

/// The flag bit of a superseded [`Entry`] (sequence numbers never reach it).
const SUPERSEDED: u64 = 1 << 63;

impl Entry {
    #[inline]
    fn seq(self) -> u64 {
        self.seq & !SUPERSEDED
    }
    #[inline]
    fn superseded(self) -> bool {
        self.seq & SUPERSEDED != 0
    }
}

/// The sequence number of `block`'s latest copy in the log `ring` indexed by `loc`, if any.
#[inline]
fn latest_seq(loc: &PosIndex, ring: &Ring<Entry>, block: BlockNo) -> Option<u64> {
    loc.find(block, |p| ring.at(p as usize).block == block).map(|p| ring.at(p as usize).seq())
}

/// A pending run of physically contiguous blocks, issued as one mechanism access.
#[derive(Clone, Copy, Debug, Default)]
struct Run {
    start: u64,
    bytes: u64,
    is_write: bool,
    in_pb: bool,
}

/// PB entry (mapping record) accounting, kept only when `pb_max_entries` is set.
///
/// An extent is the run of consecutive sequence numbers one host write appended. Each keeps a
/// count of its blocks still valid in the PB; `live` counts extents with a non-zero count.
/// Cleaning a band walks the appends logged for that band since its last cleaning (each append
/// is walked once, so this stays O(1) amortised per block).
#[derive(Clone, Debug, Default)]
struct Extents {
    max: u64,
    /// `(first sequence number, valid blocks)`, oldest first; the front has id `front_id`.
    q: VecDeque<(u64, u32)>,
    live: u64,
    /// The current host write already opened an extent (the back of `q`).
    open: bool,
    /// Per band: `(seq, block)` of every append since the band's last cleaning.
    band_log: FxHashMap<u32, Vec<(u64, BlockNo)>>,
}

impl Extents {
    fn index_of(&self, seq: u64) -> usize {
        self.q.partition_point(|e| e.0 <= seq).saturating_sub(1)
    }

    fn dec(&mut self, seq: u64) {
        let i = self.index_of(seq);
        if let Some(e) = self.q.get_mut(i) {
            if e.1 > 0 {
                e.1 -= 1;
                if e.1 == 0 {
                    self.live -= 1;
                }
            }
        }
    }

    fn inc_back(&mut self) {
        if let Some(e) = self.q.back_mut() {
            if e.1 == 0 {
                self.live += 1;
            }
            e.1 += 1;
        }
    }

    /// Opens a new extent starting at `seq`, dropping dead extents from the front.
    fn open_at(&mut self, seq: u64) {
        while self.q.front().is_some_and(|e| e.1 == 0) {
            self.q.pop_front();
        }
        self.q.push_back((seq, 0));
        self.open = true;
    }
}

/// A flash PB's timeline.
#[derive(Clone, Debug)]
struct Flash {
    read_ns: f64,
    write_ns: f64,
    read_ns_per_byte: f64,
    write_ns_per_byte: f64,
    busy_until: u64,
    /// Bytes written to the flash.
    written: u64,
}

impl Flash {
    /// One access issued at `now`; returns its completion time.
    fn access(&mut self, now: u64, bytes: u64, is_write: bool) -> u64 {
        let start = now.max(self.busy_until);
        let t = if is_write {
            self.written += bytes;
            self.write_ns + bytes as f64 * self.write_ns_per_byte
        } else {
            self.read_ns + bytes as f64 * self.read_ns_per_byte
        };
        self.busy_until = start + (t.ceil() as u64).max(1);
        self.busy_until
    }
}

/// The volatile write cache in front of a disk PB: persistent-buffer writes not yet on the
/// platters, as runs of physically contiguous PB bytes, oldest first.
#[derive(Clone, Debug)]
struct PbCache {
    max_extents: usize,
    capacity: u64,
    /// Interface time per byte, ns.
    ns_per_byte: f64,
    /// The mechanism's command overhead, whole ns (rounded once, not per access).
    overhead_ns: f64,
    /// A one-block transfer's time below [`PbCache::block_exact_below`]: the overhead plus the
    /// ceiling of one block's interface time (`BLOCK_SIZE × ns_per_byte`), whole ns.
    block_done_ns: u64,
    /// `(physical offset, bytes)`, oldest first.
    extents: VecDeque<(u64, u64)>,
    bytes: u64,
    /// The highest end of a cached extent (0 when empty): a run ending above it is in none, so
    /// an append at the PB's tail is told apart without a scan.
    max_end: u64,
    /// When the host interface is free again.
    host_free: u64,
    /// Below this `ready` time a one-block transfer ends at exactly `ready + block_done_ns`
    /// ([`PbCache::block_exact_below`]), without the float round trip.
    block_exact_below: u64,
}

impl PbCache {
    fn new(wc: &crate::hdd::WriteCacheConfig, overhead_ns: u64) -> PbCache {
        let ns_per_byte = 1e3 / wc.interface_mb_s;
        let block_ns = BLOCK_SIZE as f64 * ns_per_byte;
        let block_ns_ceil = crate::hdd::ceil_u64(block_ns);
        PbCache {
            max_extents: wc.max_extents as usize,
            capacity: wc.capacity.0,
            ns_per_byte,
            overhead_ns: overhead_ns as f64,
            block_done_ns: overhead_ns + block_ns_ceil,
            extents: VecDeque::with_capacity(wc.max_extents as usize),
            bytes: 0,
            max_end: 0,
            host_free: 0,
            block_exact_below: Self::block_exact_below(block_ns, overhead_ns),
        }
    }

    /// The `ready` times below which `ceil(ready + overhead + block_ns)` in f64 (`ready` and
    /// `overhead` whole ns) equals `ready + overhead + ceil(block_ns)`. `ready + overhead` is an
    /// exact integer `I` below 2⁵³, and the real sum `I + block_ns` has `block_ns`'s fraction
    /// `f`. Below 2^k the sum's rounding error is at most 2^(k−54): with `f = 0` there is none
    /// (k = 53); otherwise, while 2^(k−54) is below `f`'s distance to the nearest integer, the
    /// rounded sum stays strictly between the same two integers, so its ceiling is `I +
    /// ceil(block_ns)`.
    fn block_exact_below(block_ns: f64, overhead_ns: u64) -> u64 {
        let f = block_ns - (block_ns as u64) as f64;
        let dist = f.min(1.0 - f);
        let mut k = 53;
        if f != 0.0 {
            while k > 0 && 2f64.powi(k - 54) >= dist {
                k -= 1;
            }
        }
        (1u64 << k).saturating_sub(overhead_ns).saturating_sub(crate::hdd::ceil_u64(block_ns))
    }

    /// When a transfer of `bytes` through the interface, ready to start at `ready`, ends.
    #[inline]
    fn transfer_done(&self, ready: u64, bytes: u64) -> u64 {
        if bytes == BLOCK_SIZE && ready < self.block_exact_below {
            (ready + self.block_done_ns).max(ready + 1)
        } else {
            crate::hdd::ceil_u64(ready as f64 + self.overhead_ns + bytes as f64 * self.ns_per_byte)
                .max(ready + 1)
        }
    }

    /// Whether `[start, start + bytes)` lies inside one cached extent.
    #[inline]
    fn holds(&self, start: u64, bytes: u64) -> bool {
        start + bytes <= self.max_end
            && self.extents.iter().any(|&(o, b)| o <= start && start + bytes <= o + b)
    }

    /// Takes the run `[start, start + bytes)` in, extending the newest extent if it continues it,
    /// if it fits without destaging (within the byte capacity, a run larger than it alone, and
    /// within the extent limit unless it extends the newest); `false`, with nothing changed, if not.
    #[inline(always)]
    fn take_if_room(&mut self, start: u64, bytes: u64) -> bool {
        if self.bytes + bytes > self.capacity.max(bytes) {
            return false;
        }
        match self.extents.back_mut() {
            Some(last) if last.0 + last.1 == start => last.1 += bytes,
            _ => {
                if self.extents.len() >= self.max_extents {
                    return false;
                }
                self.extents.push_back((start, bytes));
            }
        }
        self.bytes += bytes;
        self.max_end = self.max_end.max(start + bytes);
        true
    }

    /// Removes the oldest extent.
    fn pop_oldest(&mut self) -> Option<(u64, u64)> {
        let e = self.extents.pop_front()?;
        self.bytes -= e.1;
        self.max_end = self.extents.iter().map(|&(o, b)| o + b).max().unwrap_or(0);
        Some(e)
    }
}

/// Persistent buffers of at least this many slots (16 MiB) look the blocks at their log's head
/// up ahead of dropping them from the map ([`LOOK_AHEAD`] entries on); smaller ones' maps stay
/// in the CPU's caches, even beside a cache's tables.
const LOOK_AHEAD_MIN_SLOTS: u64 = 1 << 12;
/// How far ahead in the log.
const LOOK_AHEAD: usize = 8;

/// [`DmSmr::waiting`] bits: the mechanism, the flash PB, the write cache's interface.
const WAIT_MECH: u8 = 1;
const WAIT_FLASH: u8 = 2;
const WAIT_IFACE: u8 = 4;

/// The drive-managed SMR model. Build it with [`DmSmrConfig::build`] or
/// [`crate::DriveConfig::build`].
#[derive(Clone, Debug)]
pub struct DmSmr {
    bands: BandMap,
    flavour: PbFlavour,
    free: PbFree,
    capacity_blocks: u64,
    /// PB capacity in slots.
    cap_slots: u64,
    /// Slot occupancy at which a write needing a slot cleans (`cap_slots` without a high
    /// watermark).
    high_slots: u64,
    /// Cleanings in idle time (for counting background GCs in SMaRT's terms).
    in_idle: bool,
    /// Read runs issued so far (a read's pieces are the difference).
    read_runs: u64,
    pb_bytes: u64,
    /// Bytes the PB occupies on the platters (`pb_bytes`, or 0 for a flash PB): the band region
    /// starts here.
    band_base: u64,
    extents: Option<Extents>,
    flash: Option<Flash>,
    cache: Option<PbCache>,
    idle_window_ns: Option<u64>,
    /// Batch cleaning targets (`pb_clean_low_watermark`): `(slots, entries)` to clean down to
    /// once cleaning is forced.
    low_watermark: Option<(u64, u64)>,
    /// Neither an entry limit nor a low watermark: room for a write is made by
    /// [`DmSmr::make_slot`] (resolved at build).
    simple_room: bool,
    /// `simple_room` with [`PbFlavour::AppendOnly`] and [`PbFree::AtHead`]: every write makes
    /// room for a slot, so it does so before looking its block up (resolved at build).
    slot_first: bool,
    /// Completion time of the request being served (max over its accesses).
    req_done: u64,
    /// What the request being served has not yet touched ([`WAIT_MECH`], [`WAIT_FLASH`],
    /// [`WAIT_IFACE`] bits): its first touch of each counts the wait, since `wait_since` (its
    /// arrival), for work already under way there.
    waiting: u8,
    wait_since: u64,
    /// The bits a request starts with: the mechanism, and the flash PB and the write cache's
    /// interface where the drive has them (resolved at build, not per request).
    wait_all: u8,
    /// The log, oldest first. `AtHead`: `cap_slots` positions, so an entry's position is its
    /// physical slot. `Immediate`: twice as many, compacted when full.
    ring: Ring<Entry>,
    /// Block → position of its latest copy in the log (an entry not marked superseded); the
    /// copy may be stale (merged by a cleaning of its band: then its sequence number is below
    /// the band's `cleaned_at`). An entry leaves the index when its copy leaves the log.
    loc: PosIndex,
    /// Per band: valid PB blocks.
    valid: Vec<u32>,
    /// Per band: copies with a sequence number below this were merged by the last cleaning.
    cleaned_at: Vec<u64>,
    valid_total: u64,
    next_seq: u64,
    /// Physical slot of `next_seq` (`next_seq % cap_slots`, kept incrementally).
    tail_slot: u64,
    mech: Mechanism,
    /// Bandwidth charge for reading one merged PB block during cleaning, ns.
    merge_ns_per_block: f64,
    run: Run,
    /// Issue time of the host request being served.
    now: Nanos,
    stats: DriveStats,
    /// The operation log, when on ([`DmSmr::record_ops`]).
    ops: Option<Vec<DmSmrOp>>,
}

impl DmSmr {
    fn new(cfg: &DmSmrConfig, cap_slots: u64, bands: BandMap, mech: Mechanism) -> DmSmr {
        let cap_slots = cap_slots.max(1);
        let nbands = bands.len();
        // Immediate mode lets superseded entries pile up in the log; compacting at 2× the
        // capacity keeps it bounded, and since at most `cap` entries survive, a compaction (one
        // index insertion per survivor) comes at most once per `cap` appends.
        let ring_size = match cfg.pb_free {
            PbFree::AtHead => cap_slots,
            PbFree::Immediate => (2 * cap_slots).max(32),
        } as usize;
        // Every index entry names a copy in the log, so the log's size bounds the index.
        let loc = PosIndex::with_capacity(ring_size as u32);
        let flash = (cfg.pb_medium == PbMedium::Flash).then(|| {
            let f = &cfg.pb_flash;
            Flash {
                read_ns: f.read_latency_us * 1e3,
                write_ns: f.write_latency_us * 1e3,
                read_ns_per_byte: 1e3 / f.read_mb_s,
                write_ns_per_byte: 1e3 / f.write_mb_s,
                busy_until: 0,
                written: 0,
            }
        });
        let merge_ns_per_block = match (cfg.pb_merge_ms_per_block, &flash) {
            (Some(ms), _) => ms * 1e6,
            (None, Some(f)) => BLOCK_SIZE as f64 * f.read_ns_per_byte,
            (None, None) => BLOCK_SIZE as f64 / mech.rate_at(0) * 1e9,
        };
        let pb_bytes = cap_slots * BLOCK_SIZE;
        let wc = &cfg.mechanism.write_cache;
        let cache = (wc.enabled && flash.is_none()).then(|| PbCache::new(wc, mech.command_overhead().0));
        let wait_all = WAIT_MECH
            | if flash.is_some() { WAIT_FLASH } else { 0 }
            | if cache.is_some() { WAIT_IFACE } else { 0 };
        DmSmr {
            capacity_blocks: cfg.capacity.0 / BLOCK_SIZE,
            flavour: cfg.pb_flavour,
            free: cfg.pb_free,
            cap_slots,
            high_slots: cfg
                .pb_clean_high_watermark
                .map_or(cap_slots, |w| ((w * cap_slots as f64).ceil() as u64).clamp(1, cap_slots)),
            in_idle: false,
            read_runs: 0,
            pb_bytes,
            band_base: if flash.is_some() { 0 } else { pb_bytes },
            extents: cfg.pb_max_entries.map(|max| Extents { max, ..Extents::default() }),
            flash,
            cache,
            idle_window_ns: cfg.idle_window_ms.map(|ms| (ms * 1e6).round() as u64),
            simple_room: cfg.pb_max_entries.is_none() && cfg.pb_clean_low_watermark.is_none(),
            slot_first: cfg.pb_max_entries.is_none()
                && cfg.pb_clean_low_watermark.is_none()
                && cfg.pb_flavour == PbFlavour::AppendOnly
                && cfg.pb_free == PbFree::AtHead,
            low_watermark: cfg.pb_clean_low_watermark.map(|w| {
                let entries = cfg.pb_max_entries.map_or(u64::MAX, |e| (w * e as f64).floor() as u64);
                ((w * cap_slots as f64).floor() as u64, entries)
            }),
            req_done: 0,
            waiting: 0,
            wait_since: 0,
            wait_all,
            ring: Ring::new(ring_size),
            loc,
            valid: vec![0; nbands],
            cleaned_at: vec![0; nbands],
            valid_total: 0,
            next_seq: 0,
            tail_slot: 0,
            mech,
            merge_ns_per_block,
            run: Run::default(),
            now: Nanos::ZERO,
            stats: DriveStats::default(),
            ops: None,
            bands,
        }
    }

    /// Turns the [operation log](DmSmr#operation-log) on (an empty log) or off.
    pub fn record_ops(&mut self, on: bool) {
        self.ops = on.then(Vec::new);
    }

    /// The operations logged since the last call, oldest first, moved into `out` (cleared
    /// first); none when the log is off.
    pub fn take_ops(&mut self, out: &mut Vec<DmSmrOp>) {
        out.clear();
        if let Some(log) = self.ops.as_mut() {
            std::mem::swap(log, out);
        }
    }

    /// PB capacity in 4 KiB slots.
    pub fn pb_capacity_blocks(&self) -> u64 {
        self.cap_slots
    }

    /// PB size in bytes (the physical region `[0, pb)` of the mechanism).
    pub fn pb_bytes(&self) -> u64 {
        self.pb_bytes
    }

    /// Slots in use by the rule of [`PbFree`]: valid blocks (`Immediate`) or ring length
    /// including holes (`AtHead`). Never above [`DmSmr::pb_capacity_blocks`]. In `AtHead` mode
    /// stale entries at the head are reclaimed lazily, when a slot is needed; that gives the same
    /// cleaning decisions as dropping them eagerly, but this number can include them.
    pub fn pb_occupancy(&self) -> u64 {
        match self.free {
            PbFree::Immediate => self.valid_total,
            PbFree::AtHead => self.ring.len() as u64,
        }
    }

    /// Heap bytes of the PB bookkeeping (the log and its index) taken so far; the index is
    /// allocated whole, the log as it first fills.
    pub fn pb_bookkeeping_bytes(&self) -> usize {
        self.ring.heap_bytes() + self.loc.heap_bytes()
    }

    /// Blocks whose latest copy is in the PB.
    pub fn pb_valid_blocks(&self) -> u64 {
        self.valid_total
    }

    /// PB entries (host write extents with a valid block in the PB), if the entry limit is on.
    pub fn pb_entries(&self) -> Option<u64> {
        self.extents.as_ref().map(|e| e.live)
    }

    /// `true` if `block`'s latest copy is in the PB (not yet merged into its band).
    pub fn pb_contains(&self, block: BlockNo) -> bool {
        block < self.capacity_blocks && self.valid_seq(block, self.bands.band_of(block) as usize).is_some()
    }

    /// The PB log's logical state, oldest entry first: a valid copy as its block, a dead entry
    /// that still takes a slot ([`PbFree::AtHead`]) as `None`; dead entries that take none
    /// ([`PbFree::Immediate`]) are left out. Two drives (of one configuration, without an entry
    /// limit or a write cache) with equal states clean the same bands for the same writes from
    /// then on: what a search over write orders compares states by.
    pub fn pb_log_state(&self) -> Vec<Option<BlockNo>> {
        (0..self.ring.len())
            .filter_map(|i| {
                let e = self.ring.get(i)?;
                let band = self.bands.band_of(e.block) as usize;
                let valid = !e.superseded()
                    && self.latest_seq(e.block) == Some(e.seq())
                    && e.seq() >= self.cleaned_at[band];
                match (valid, self.free) {
                    (true, _) => Some(Some(e.block)),
                    (false, PbFree::AtHead) => Some(None),
                    (false, PbFree::Immediate) => None,
                }
            })
            .collect()
    }

    /// Valid PB blocks of `band`.
    pub fn pb_blocks_of_band(&self, band: shingled_core::BandId) -> u32 {
        self.valid.get(band as usize).copied().unwrap_or(0)
    }

    /// The mechanism underneath (head position, clock).
    pub fn mechanism(&self) -> &Mechanism {
        &self.mech
    }

    /// The sequence number of `block`'s latest copy in the log, if any (valid or merged).
    #[inline]
    fn latest_seq(&self, block: BlockNo) -> Option<u64> {
        latest_seq(&self.loc, &self.ring, block)
    }

    /// The sequence number of `block`'s valid PB copy, if any.
    #[inline]
    fn valid_seq(&self, block: BlockNo, band: usize) -> Option<u64> {
        self.latest_seq(block).filter(|&s| s >= self.cleaned_at[band])
    }

    #[inline]
    fn slot_phys(&self, seq: u64) -> u64 {
        (seq % self.cap_slots) * BLOCK_SIZE
    }

    /// Adds a block to the pending run, issuing the previous run if this one does not continue it.
    #[inline]
    fn push_run(&mut self, phys: u64, is_write: bool, in_pb: bool) {
        let r = &mut self.run;
        if r.bytes > 0 && r.start + r.bytes == phys && r.is_write == is_write && r.in_pb == in_pb {
            r.bytes += BLOCK_SIZE;
            return;
        }
        self.flush_run();
        self.run = Run { start: phys, bytes: BLOCK_SIZE, is_write, in_pb };
    }

    /// Issues the pending run, if any: the check inlined, the issue not (most calls, at the end
    /// of a request whose run was already issued, find nothing).
    #[inline]
    fn flush_run(&mut self) {
        if self.run.bytes != 0 {
            self.issue_run();
        }
    }

    /// [`DmSmr::flush_run`] at the end of a host write, whose last block went to the PB (every
    /// block does, appended or rewritten in place, and a cleaning issues the run before it):
    /// the write into the volatile write cache (every write-back's, with the cache on) inlined.
    /// A cache means no flash PB, so there is no flash wait to count.
    #[inline(always)]
    fn flush_write_run(&mut self) {
        debug_assert!(
            self.run.bytes != 0 && self.run.is_write && self.run.in_pb,
            "a host write left no PB run"
        );
        if self.cache.is_some() {
            let r = Run { start: self.run.start, bytes: self.run.bytes, is_write: true, in_pb: true };
            self.run.bytes = 0;
            self.cached_write(r);
        } else {
            self.flush_run();
        }
    }

    #[inline(never)]
    fn issue_run(&mut self) {
        // Field by field, as `push_run` wrote them (a copy of the whole run would wait for those
        // stores to complete).
        let r = Run {
            start: self.run.start,
            bytes: self.run.bytes,
            is_write: self.run.is_write,
            in_pb: self.run.in_pb,
        };
        self.run.bytes = 0;
        if !r.is_write {
            self.read_runs += 1;
        }
        if r.in_pb {
            self.flash_wait();
            if let Some(f) = self.flash.as_mut() {
                let before = self.now.0.max(f.busy_until);
                let done = f.access(self.now.0, r.bytes, r.is_write);
                let spent = Nanos(done - before);
                self.stats.pb_time += spent;
                if r.is_write {
                    self.stats.time.pb_write += spent;
                } else {
                    self.stats.time.pb_read += spent;
                }
                self.req_done = self.req_done.max(done);
                return;
            }
            if self.cache.is_some()
                && (r.is_write || self.cache.as_ref().is_some_and(|c| c.holds(r.start, r.bytes)))
            {
                self.cached(r);
                return;
            }
        }
        self.mech_wait();
        let before = self.now.max(self.mech.busy_until());
        self.mech.access(self.now, r.start, r.bytes, r.is_write);
        let spent = self.mech.busy_until() - before;
        match (r.in_pb, r.is_write) {
            (true, true) => self.stats.time.pb_write += spent,
            (true, false) => self.stats.time.pb_read += spent,
            (false, _) => self.stats.time.host_read += spent,
        }
        if r.in_pb {
            self.stats.pb_time += spent;
        }
        self.req_done = self.req_done.max(self.mech.busy_until().0);
    }

    /// A PB run through the volatile write cache: a write is taken into the cache (destaging the
    /// oldest cached runs first while it does not fit), a read of cached bytes is served from it;
    /// either costs the command overhead plus the interface transfer.
    fn cached(&mut self, r: Run) {
        if r.is_write {
            return self.cached_write(r);
        }
        let start = self.interface_start();
        self.stats.cache_read_hits += 1;
        self.cache_transfer(start, r.bytes);
    }

    /// When the interface can take the request's next transfer (counting the request's wait
    /// for it at its first).
    #[inline(always)]
    fn interface_start(&mut self) -> u64 {
        let start = self.now.0.max(self.cache.as_ref().expect("cache on").host_free);
        if self.waiting & WAIT_IFACE != 0 {
            // The interface still busy with an earlier request's transfer.
            self.waiting &= !WAIT_IFACE;
            self.stats.time.host_wait += Nanos(start.saturating_sub(self.wait_since));
        }
        start
    }

    /// [`DmSmr::cached`] for a write.
    #[inline(always)]
    fn cached_write(&mut self, r: Run) {
        let mut ready = self.interface_start();
        let c = self.cache.as_mut().expect("cache on");
        if c.holds(r.start, r.bytes) {
            self.stats.cache_write_hits += 1;
        } else if !c.take_if_room(r.start, r.bytes) {
            ready = self.destage_for(r, ready);
        }
        self.cache_transfer(ready, r.bytes);
    }

    /// Destages the oldest cached runs until write run `r` fits, and takes it in; returns when
    /// the interface can take its transfer (`ready` or later).
    #[inline(never)]
    fn destage_for(&mut self, r: Run, mut ready: u64) -> u64 {
        while !self.cache.as_mut().expect("cache on").take_if_room(r.start, r.bytes) {
            let at = Nanos(ready.max(self.now.0));
            self.destage_oldest(at);
            ready = ready.max(self.mech.busy_until().0);
        }
        ready
    }

    /// The interface transfer of a cached run of `bytes`, ready at `ready`.
    #[inline(always)]
    fn cache_transfer(&mut self, ready: u64, bytes: u64) {
        let c = self.cache.as_mut().expect("cache on");
        let done = c.transfer_done(ready, bytes);
        c.host_free = done;
        self.stats.time.cache += Nanos(done - ready);
        self.req_done = self.req_done.max(done);
    }

    /// Writes the oldest cached run to the persistent buffer on the platters, starting no
    /// earlier than `at`. Returns `false` if the cache is empty.
    fn destage_oldest(&mut self, at: Nanos) -> bool {
        let Some(c) = self.cache.as_mut() else { return false };
        let Some((off, bytes)) = c.pop_oldest() else { return false };
        self.mech_wait();
        let before = at.max(self.mech.busy_until());
        self.mech.access(at, off, bytes, true);
        self.stats.time.destage += self.mech.busy_until() - before;
        self.stats.cache_destages += 1;
        true
    }

    /// Makes room for one more PB slot (`need_slot`) and/or one more PB entry (`need_entry`),
    /// cleaning bands in FIFO order as needed. The time is charged to the write being served.
    /// With a low watermark, a forced cleaning goes on until the PB is down to it.
    fn make_room(&mut self, need_slot: bool, need_entry: bool) {
        let mut forced = false;
        loop {
            let occupied = match self.free {
                PbFree::Immediate => self.valid_total,
                PbFree::AtHead => self.ring.len() as u64,
            };
            let live = self.extents.as_ref().map_or(0, |e| e.live);
            let slots_ok = !need_slot || occupied < self.high_slots;
            let entries_ok = !need_entry || self.extents.as_ref().is_none_or(|e| e.live < e.max);
            let done = match (forced, self.low_watermark) {
                (true, Some((slots, entries))) => occupied <= slots && live <= entries,
                _ => slots_ok && entries_ok,
            };
            if done {
                return;
            }
            forced = true;
            match self.clean_head() {
                Some(t) => self.stats.clean_time += t,
                None => return,
            }
        }
    }

    /// [`DmSmr::make_room`] for one slot when there is neither an entry limit nor a low
    /// watermark (every profile): the same cleanings and head drops in the same order, without
    /// the general loop's checks, and a superseded head is dropped without finding its band.
    #[inline(always)]
    fn make_slot(&mut self) {
        loop {
            let occupied = match self.free {
                PbFree::Immediate => self.valid_total,
                PbFree::AtHead => self.ring.len() as u64,
            };
            if occupied < self.high_slots {
                return;
            }
            let Some(head) = self.ring.front() else { return };
            let latest = !head.superseded();
            if latest {
                let band = self.bands.band_of(head.block) as usize;
                if head.seq() >= self.cleaned_at[band] {
                    let t = self.clean(band);
                    self.stats.clean_time += t;
                    continue;
                }
            }
            self.drop_head(head.block, latest);
        }
    }

    /// Drops the stale entry at the ring's head (of `block`; `latest` if no later append
    /// superseded it).
    #[inline(always)]
    fn drop_head(&mut self, block: BlockNo, latest: bool) {
        if self.cap_slots >= LOOK_AHEAD_MIN_SLOTS {
            // An index far larger than the CPU's caches: fetch the bucket of a head a few
            // entries on, so that its miss overlaps with the work until it is reached.
            if let Some(e) = self.ring.get(LOOK_AHEAD) {
                if !e.superseded() {
                    self.loc.prefetch(e.block);
                }
            }
            // … whose own line was fetched further on still.
            self.ring.prefetch(4 * LOOK_AHEAD);
        }
        // A latest copy (merged by a cleaning of its band) leaves the index with the log.
        let pos = self.ring.head_pos() as u32;
        self.ring.pop_front();
        if latest {
            let removed = self.loc.remove(block, pos);
            debug_assert!(removed, "a latest copy missing from the index");
        }
    }

    /// Drops stale entries at the ring's head until a valid one is there, then cleans its band.
    /// Returns the cleaning's time, or `None` if the ring is empty (nothing to clean). In
    /// `AtHead` mode dropping stale heads alone may free the slot asked for; the caller checks.
    fn clean_head(&mut self) -> Option<Nanos> {
        loop {
            let head = self.ring.front()?;
            let band = self.bands.band_of(head.block) as usize;
            // The entry knows whether a later append superseded it: no index lookup.
            let latest = !head.superseded();
            if latest && head.seq() >= self.cleaned_at[band] {
                return Some(self.clean(band));
            }
            self.drop_head(head.block, latest);
            if self.free == PbFree::AtHead && (self.ring.len() as u64) < self.high_slots {
                // A slot was freed without cleaning; let the caller re-check.
                let entries_full = self.extents.as_ref().is_some_and(|e| e.live >= e.max);
                if !entries_full {
                    return Some(Nanos::ZERO);
                }
            }
        }
    }

    /// One RMW of `band`: merges all its valid PB blocks. O(1) without an entry limit (the
    /// merged entries become stale through the band's mark), O(appends to the band since its
    /// last cleaning) with one. Returns the time it took (from the later of `now` and the end of
    /// the previous work). Not inlined: it runs once per many writes, and the write path's
    /// registers stay its own.
    #[inline(never)]
    fn clean(&mut self, band: usize) -> Nanos {
        self.flush_run();
        let merged = self.valid[band] as u64;
        debug_assert!(merged > 0, "cleaning a band without valid PB blocks");
        if let Some(ext) = self.extents.as_mut() {
            if let Some(log) = ext.band_log.remove(&(band as u32)) {
                for (seq, block) in log {
                    if latest_seq(&self.loc, &self.ring, block) == Some(seq) && seq >= self.cleaned_at[band] {
                        ext.dec(seq);
                    }
                }
            }
        }
        self.valid[band] = 0;
        self.valid_total -= merged;
        self.cleaned_at[band] = self.next_seq;

        let (start, len) = self.bands.band_range(band as shingled_core::BandId);
        let bytes = len * BLOCK_SIZE;
        // SMaRT's terms: one GC, of (merged PB reads + band read + band write) I/O requests.
        if self.in_idle {
            self.stats.stl.gc_background += 1;
            self.stats.stl.gc_cost_background.record(merged + 2);
        } else {
            self.stats.stl.gc_ondemand += 1;
            self.stats.stl.gc_cost.record(merged + 2);
        }
        self.stats.rmws += 1;
        if let Some(log) = self.ops.as_mut() {
            log.push(DmSmrOp::Clean { band: band as u32, idle: self.in_idle });
        }
        self.stats.band_bytes_read += bytes;
        self.stats.band_bytes_written += bytes;
        self.stats.pb_blocks_cleaned += merged;

        self.mech_wait();
        self.flash_wait();
        let before = self.now.max(self.mech.busy_until());
        let merge_ns = merged as f64 * self.merge_ns_per_block;
        let phys = self.band_base + start * BLOCK_SIZE;
        let write_at = if let Some(f) = self.flash.as_mut() {
            // Eq. 1, first case: the merge reads run on the flash while the band is read.
            let fstart = self.now.0.max(f.busy_until);
            f.busy_until = fstart + merge_ns.ceil() as u64;
            let merged_at = f.busy_until;
            self.stats.time.clean_merge += Nanos(merged_at - fstart);
            self.mech.access(self.now, phys, bytes, false);
            self.stats.time.clean_band_read += self.mech.busy_until() - before;
            Nanos(merged_at.max(self.now.0))
        } else {
            self.mech.occupy(self.now, merge_ns);
            let merged_at = self.mech.busy_until();
            self.stats.time.clean_merge += merged_at - before;
            self.mech.access(self.now, phys, bytes, false);
            self.stats.time.clean_band_read += self.mech.busy_until() - merged_at;
            self.now
        };
        let read_done = self.mech.busy_until().max(write_at);
        self.mech.access(write_at, phys, bytes, true);
        let end = self.mech.busy_until();
        self.stats.time.clean_band_write += end - read_done;
        self.req_done = self.req_done.max(end.0);
        end - before
    }

    /// Appends `block` (of `band`) at the log's tail; `probe` is the index probe taken for it
    /// before any room was made: reused if no entry has left the index since, redone otherwise.
    #[inline(always)]
    fn append(&mut self, block: BlockNo, band: usize, probe: Probe) {
        let seq = self.next_seq;
        self.next_seq += 1;
        let phys = self.tail_slot * BLOCK_SIZE;
        if let Some(log) = self.ops.as_mut() {
            log.push(DmSmrOp::Append { block, slot: self.tail_slot });
        }
        self.tail_slot += 1;
        if self.tail_slot == self.cap_slots {
            self.tail_slot = 0;
        }
        let pos = self.ring.push_back(Entry { seq, block });
        debug_assert!(self.free == PbFree::Immediate || pos as u64 == seq % self.cap_slots);
        // The write's probe found the previous copy in the log, if any, and where the block
        // goes in the index; only a removal since (a head dropped to make room) forces another.
        let (loc, ring) = (&mut self.loc, &self.ring);
        let old = if loc.still(&probe) {
            loc.set(probe, pos as u32)
        } else {
            loc.upsert(block, pos as u32, |p| ring.at(p as usize).block == block)
        };
        if let Some(old) = old {
            self.ring.at_mut(old as usize).seq |= SUPERSEDED;
        }
        if let Some(ext) = self.extents.as_mut() {
            if !ext.open {
                ext.open_at(seq);
            }
            ext.inc_back();
            ext.band_log.entry(band as u32).or_default().push((seq, block));
        }
        self.push_run(phys, true, true);
        if self.free == PbFree::Immediate && self.ring.len() == self.ring.size() {
            self.compact();
        }
    }

    /// Drops every stale entry from the log (Immediate mode only; keeps the order) and indexes
    /// the survivors at their new positions.
    fn compact(&mut self) {
        let (loc, cleaned_at, bands) = (&mut self.loc, &self.cleaned_at, &self.bands);
        // Every indexed block has its latest copy in the log.
        loc.clear_blocks(self.ring.iter().map(|e| e.block));
        self.ring.compact(
            |e| !e.superseded() && e.seq() >= cleaned_at[bands.band_of(e.block) as usize],
            |e, pos| loc.insert_new(e.block, pos as u32),
        );
    }

    /// Whether the next append needs a new PB entry (the entry limit is on and this host write
    /// has not opened its extent yet).
    #[inline]
    fn needs_entry(&self) -> bool {
        self.extents.as_ref().is_some_and(|e| !e.open)
    }

    /// Writes `block`, of `band`, to the PB.
    #[inline(always)]
    fn write_block(&mut self, block: BlockNo, band: usize) {
        if self.slot_first {
            // Every write takes a slot whatever the lookup finds, so the slot comes first and the
            // probe after it stays valid for the append. The same outcome as below: a copy still
            // valid after the room was made was valid before and is superseded (its validity
            // passes to the new copy); a copy merged before or by the cleaning, or dropped from
            // the head, leaves the new copy a new valid block.
            self.make_slot();
            let ring = &self.ring;
            let probe = self.loc.probe(block, |p| ring.at(p as usize).block == block);
            let valid = probe.found.is_some_and(|p| ring.at(p as usize).seq() >= self.cleaned_at[band]);
            if !valid {
                self.valid[band] += 1;
                self.valid_total += 1;
            }
            self.append(block, band, probe);
            self.stats.pb_writes += 1;
            return;
        }
        let ring = &self.ring;
        let probe = self.loc.probe(block, |p| ring.at(p as usize).block == block);
        let valid =
            probe.found.map(|p| (p, ring.at(p as usize).seq())).filter(|&(_, s)| s >= self.cleaned_at[band]);
        match (valid, self.flavour) {
            (Some((pos, seq)), PbFlavour::InPlace) => {
                self.stats.pb_rewrites_in_place += 1;
                // `AtHead`: a log position is its physical slot (no division).
                let phys = match self.free {
                    PbFree::AtHead => pos as u64 * BLOCK_SIZE,
                    PbFree::Immediate => self.slot_phys(seq),
                };
                if let Some(log) = self.ops.as_mut() {
                    log.push(DmSmrOp::InPlace { block, slot: phys / BLOCK_SIZE });
                }
                self.push_run(phys, true, true);
            }
            (Some((_, seq)), PbFlavour::AppendOnly) => {
                // Immediate: the old copy's slot is reused at once, so occupancy does not grow.
                let need_entry = self.needs_entry();
                if self.simple_room {
                    if self.free == PbFree::AtHead {
                        self.make_slot();
                    }
                } else if self.free == PbFree::AtHead || need_entry {
                    self.make_room(self.free == PbFree::AtHead, need_entry);
                }
                if seq < self.cleaned_at[band] {
                    // The cleaning just merged the old copy: the new one is a new valid block.
                    self.valid[band] += 1;
                    self.valid_total += 1;
                } else if let Some(ext) = self.extents.as_mut() {
                    // The old copy stops being valid: its entry loses a block.
                    ext.dec(seq);
                }
                self.append(block, band, probe);
            }
            (None, _) => {
                if self.simple_room {
                    self.make_slot();
                } else {
                    let need_entry = self.needs_entry();
                    self.make_room(true, need_entry);
                }
                self.valid[band] += 1;
                self.valid_total += 1;
                self.append(block, band, probe);
            }
        }
        self.stats.pb_writes += 1;
    }

    /// Starts serving a request issued at `now`: the first access to the mechanism and to the
    /// flash PB will count the wait for work already under way there (an idle-time cleaning, a
    /// destage). A request served by the write cache alone waits for neither.
    #[inline]
    fn note_wait(&mut self, now: Nanos) {
        self.waiting = self.wait_all;
        self.wait_since = now.0;
    }

    /// Counts the wait of the request being served for the mechanism, at its first access.
    #[inline]
    fn mech_wait(&mut self) {
        if self.waiting & WAIT_MECH != 0 {
            self.waiting &= !WAIT_MECH;
            self.stats.time.host_wait += Nanos(self.mech.busy_until().0.saturating_sub(self.wait_since));
        }
    }

    /// Counts the wait of the request being served for the flash PB, at its first access.
    #[inline]
    fn flash_wait(&mut self) {
        if self.waiting & WAIT_FLASH != 0 {
            self.waiting &= !WAIT_FLASH;
            if let Some(f) = self.flash.as_ref() {
                self.stats.time.host_wait += Nanos(f.busy_until.saturating_sub(self.wait_since));
            }
        }
    }

    /// The request has been served: nothing more to count.
    #[inline]
    fn served(&mut self) {
        self.waiting = 0;
    }

    /// Starts serving a request issued at `now` with blocks in range.
    #[inline]
    fn start(&mut self, now: Nanos) {
        self.note_wait(now);
        self.now = now;
        self.req_done = now.0;
    }
}

impl Drive for DmSmr {
    #[inline]
    fn prefetch_write(&self, block: BlockNo) {
        self.loc.prefetch(block);
    }

    fn wants_write_hints(&self) -> bool {
        // A smaller PB's map stays in the CPU's caches: a hint would only cost its call.
        self.cap_slots >= LOOK_AHEAD_MIN_SLOTS
    }

    fn expect_span(&mut self, span: u64) {
        // Only before the first write: the index is rebuilt empty.
        let span = span.min(self.capacity_blocks);
        let positions = self.loc.capacity();
        if self.ring.len() == 0
            && shingled_core::mem::direct_array_pays(span, PosIndex::hash_bytes_for(positions))
        {
            self.loc = PosIndex::with_span(positions, span);
        }
    }

    fn read(&mut self, now: Nanos, block: BlockNo, nblocks: u32) -> Nanos {
        let n = envelope::admit_read(&mut self.stats, self.capacity_blocks, block, nblocks);
        let t = if n == 0 {
            envelope::reject(&mut self.mech, now)
        } else {
            self.start(now);
            let runs_before = self.read_runs;
            for b in block..block + n {
                // Most reads miss the PB: look the block up before computing its band.
                let pb_seq = match self.latest_seq(b) {
                    Some(s) if s >= self.cleaned_at[self.bands.band_of(b) as usize] => Some(s),
                    _ => None,
                };
                match pb_seq {
                    Some(s) => {
                        self.stats.pb_reads += 1;
                        self.push_run(self.slot_phys(s), false, true);
                    }
                    None => self.push_run(self.band_base + b * BLOCK_SIZE, false, false),
                }
            }
            self.flush_run();
            self.served();
            envelope::read_pieces(&mut self.stats, self.read_runs - runs_before);
            envelope::service_time(now, self.req_done)
        };
        self.stats.read_time += t;
        t
    }

    fn write(&mut self, now: Nanos, block: BlockNo, nblocks: u32) -> Nanos {
        let n = envelope::admit_write(&mut self.stats, self.capacity_blocks, block, nblocks);
        let t = if n == 0 {
            envelope::reject(&mut self.mech, now)
        } else {
            self.start(now);
            if let Some(ext) = self.extents.as_mut() {
                ext.open = false;
            }
            let gcs_before = self.stats.stl.gc_ondemand;
            // The band is looked up once and followed across band boundaries (the request is in
            // range, and the bands tile it).
            let mut band = self.bands.band_of(block);
            if n == 1 {
                // Every write-back of a cache: one block.
                self.write_block(block, band as usize);
            } else {
                let (start, len) = self.bands.band_range(band);
                let mut band_end = start + len;
                for b in block..block + n {
                    if b == band_end {
                        band += 1;
                        band_end += self.bands.band_range(band).1;
                    }
                    self.write_block(b, band as usize);
                }
            }
            self.flush_write_run();
            self.served();
            if self.stats.stl.gc_ondemand > gcs_before {
                self.stats.stl.writes_triggering_gc += 1;
            }
            envelope::service_time(now, self.req_done)
        };
        self.stats.write_time += t;
        t
    }

    fn stats(&self) -> DriveStats {
        let mut s = self.stats;
        self.mech.fill_components(&mut s.time);
        s.media_bytes_written = self.mech.bytes_written() + self.flash.as_ref().map_or(0, |f| f.written);
        s
    }

    fn kind(&self) -> &'static str {
        "dm-smr"
    }

    fn capacity_blocks(&self) -> u64 {
        self.capacity_blocks
    }

    fn band_map(&self) -> Option<&BandMap> {
        Some(&self.bands)
    }

    fn pb_fill(&self) -> Option<(u64, u64)> {
        Some((self.pb_valid_blocks(), self.pb_capacity_blocks()))
    }

    /// Idle-time cleaning (with `idle_window_ms` set): once the drive has been idle for the
    /// window, it cleans the band of the oldest PB block, then the next, until the PB is empty or
    /// an RMW would start at or after `until`. An RMW that has started finishes, so the next
    /// request may wait for it (the stall Skylight and storj/storj#3854 report).
    fn idle(&mut self, now: Nanos, until: Nanos) {
        // Everything done here is background work, in no request's time.
        let before = self.stats.time;
        self.idle_work(now, until);
        self.stats.background = self.stats.background.plus(&self.stats.time.since(&before));
    }
}

impl DmSmr {
    /// [`Drive::idle`]'s work: destages, then idle-time cleaning.
    fn idle_work(&mut self, now: Nanos, until: Nanos) {
        // The write cache drains first, as soon as the host is idle.
        while self.cache.as_ref().is_some_and(|c| !c.extents.is_empty()) {
            let at = now.max(self.mech.busy_until());
            if at >= until {
                break;
            }
            self.destage_oldest(at);
        }
        let Some(window) = self.idle_window_ns else { return };
        let busy = self.mech.busy_until().0.max(self.flash.as_ref().map_or(0, |f| f.busy_until));
        let mut t = now.0.max(busy).saturating_add(window);
        self.in_idle = true;
        while t < until.0 && self.valid_total > 0 {
            self.now = Nanos(t);
            self.req_done = t;
            let before = self.stats.rmws;
            let Some(spent) = self.clean_head() else { break };
            if self.stats.rmws > before {
                self.stats.idle_rmws += 1;
                self.stats.idle_clean_time += spent;
            }
            t = self.req_done.max(t);
        }
        self.in_idle = false;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn setting_names_round_trip_and_an_unknown_one_is_named() {
        for f in [PbFlavour::AppendOnly, PbFlavour::InPlace] {
            assert_eq!(f.to_string().parse::<PbFlavour>().unwrap(), f);
        }
        assert_eq!(
            "log".parse::<PbFlavour>().unwrap_err().to_string(),
            r#"unknown PB flavour "log" (append-only or in-place)"#
        );
        assert_eq!(
            "later".parse::<PbFree>().unwrap_err().to_string(),
            r#"unknown PB free mode "later" (immediate or at-head)"#
        );
        assert_eq!(
            "tape".parse::<PbMedium>().unwrap_err().to_string(),
            r#"unknown PB medium "tape" (disk or flash)"#
        );
    }

    fn tiny(flavour: PbFlavour, free: PbFree) -> DmSmr {
        let cfg = DmSmrConfig {
            capacity: ByteSize(64 * BLOCK_SIZE),
            pb_size: SizeSpec::Absolute(ByteSize(4 * BLOCK_SIZE)),
            pb_flavour: flavour,
            pb_free: free,
            bands: BandConfig::Fixed { size: ByteSize(4 * BLOCK_SIZE) },
            ..DmSmrConfig::default()
        };
        cfg.build(&BuildContext::default()).unwrap()
    }

    #[test]
    fn the_operation_log_records_appends_and_cleanings_in_order() {
        let mut d = tiny(PbFlavour::AppendOnly, PbFree::AtHead);
        let mut ops = Vec::new();
        d.write(Nanos(0), 0, 1);
        d.take_ops(&mut ops);
        assert!(ops.is_empty(), "off by default");
        let mut d = tiny(PbFlavour::AppendOnly, PbFree::AtHead);
        d.record_ops(true);
        // Blocks 0..4 fill the 4 slots; block 8 needs one: band 0 (blocks 0..4) is cleaned and
        // its four copies dropped from the head, so block 8 reuses slot 0.
        let mut now = Nanos(0);
        now += d.write(now, 0, 4);
        now += d.write(now, 8, 1);
        // A rewrite of block 1 (merged, so a new valid block) takes slot 1.
        d.write(now, 1, 1);
        d.take_ops(&mut ops);
        use DmSmrOp::*;
        assert_eq!(
            ops,
            [
                Append { block: 0, slot: 0 },
                Append { block: 1, slot: 1 },
                Append { block: 2, slot: 2 },
                Append { block: 3, slot: 3 },
                Clean { band: 0, idle: false },
                Append { block: 8, slot: 0 },
                Append { block: 1, slot: 1 },
            ]
        );
        assert_eq!(d.stats().rmws, 1);
        d.take_ops(&mut ops);
        assert!(ops.is_empty(), "taken");
        let mut d = tiny(PbFlavour::InPlace, PbFree::AtHead);
        d.record_ops(true);
        d.write(Nanos(0), 5, 1);
        d.write(Nanos(0), 5, 1);
        d.take_ops(&mut ops);
        assert_eq!(ops, [Append { block: 5, slot: 0 }, InPlace { block: 5, slot: 0 }]);
    }

    #[test]
    fn pb_fill_counts_the_blocks_whose_latest_copy_is_in_the_pb() {
        let mut d = tiny(PbFlavour::AppendOnly, PbFree::AtHead);
        assert_eq!(Drive::pb_fill(&d), Some((0, 4)));
        let mut now = Nanos(0);
        now += d.write(now, 0, 3);
        // A rewrite appends a new copy and invalidates the old one: still three blocks.
        now += d.write(now, 1, 1);
        assert_eq!(Drive::pb_fill(&d), Some((3, 4)));
        // Block 8 needs a slot: band 0 (blocks 0..4) is cleaned, leaving block 8 alone.
        d.write(now, 8, 1);
        assert_eq!(Drive::pb_fill(&d), Some((1, 4)));
        let cmr: Box<dyn Drive> = crate::DriveConfig::default_cmr().build(&BuildContext::default()).unwrap();
        assert_eq!(cmr.pb_fill(), None);
    }

    #[test]
    fn immediate_ring_stays_bounded_under_rewrites() {
        let mut d = tiny(PbFlavour::AppendOnly, PbFree::Immediate);
        let mut now = Nanos(0);
        d.write(now, 0, 1);
        for _ in 0..10_000 {
            now += d.write(now, 1, 1);
        }
        assert!(d.ring.len() < d.ring.size(), "{}", d.ring.len());
        assert!(d.loc.len() as usize <= d.ring.len());
        assert_eq!(d.pb_valid_blocks(), 2);
        assert_eq!(d.stats().rmws, 0);
    }

    #[test]
    fn one_block_interface_time_matches_the_float_sum() {
        let mut checked = 0;
        for mb_s in [600.0, 300.0, 133.33, 1000.0, 4096.0, 6000.0, 1.0, 7.3, 0.001, 99_999.9] {
            for overhead in [0u64, 1, 500_000, 123_457, 2_000_000] {
                let wc = crate::hdd::WriteCacheConfig { interface_mb_s: mb_s, ..Default::default() };
                let c = PbCache::new(&wc, overhead);
                let slow = |ready: u64| {
                    crate::hdd::ceil_u64(ready as f64 + c.overhead_ns + BLOCK_SIZE as f64 * c.ns_per_byte)
                        .max(ready + 1)
                };
                let lim = c.block_exact_below;
                let mut x = 0x2545_f491_4f6c_dd1d_u64;
                let mut readies = vec![0, 1, lim.saturating_sub(1), lim.saturating_sub(2), lim / 2, 1 << 40];
                for _ in 0..2000 {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    readies.push(x % lim.max(1));
                    readies.push(x % (1 << 45));
                }
                for ready in readies {
                    if ready < lim {
                        assert_eq!(
                            c.transfer_done(ready, BLOCK_SIZE),
                            slow(ready),
                            "{mb_s} MB/s, {overhead}, {ready}"
                        );
                        checked += 1;
                    }
                }
            }
        }
        assert!(checked > 50_000, "{checked}");
        // The default interface: exact for any time below 2^52 ns (52 days).
        let c = PbCache::new(&crate::hdd::WriteCacheConfig::default(), 500_000);
        assert!(c.block_exact_below > 1 << 51, "{}", c.block_exact_below);
    }

    #[test]
    fn fraction_needs_a_written_range() {
        let cfg = DmSmrConfig::default();
        let e = cfg.build(&BuildContext::default()).unwrap_err();
        assert!(matches!(e, DeviceError::MissingWrittenRange { .. }), "{e}");
        let ctx = BuildContext { written_range: ByteSize::gb(256), accessed_range: ByteSize::gb(256) };
        let d = cfg.build(&ctx).unwrap();
        assert_eq!(d.pb_bytes(), 1_000_000_000 / 4096 * 4096, "rounded down to whole blocks");
    }

    #[test]
    fn layout_must_fit_the_mechanism() {
        let cfg = DmSmrConfig { pb_size: SizeSpec::Absolute(ByteSize::gb(30)), ..DmSmrConfig::default() };
        assert!(matches!(cfg.validate(), Err(DeviceError::LayoutDoesNotFit { .. })));
        let cfg = DmSmrConfig {
            mechanism: HddConfig { rpm: 100, ..HddConfig::archive_5900_5tb() },
            ..DmSmrConfig::default()
        };
        let e = cfg.validate().unwrap_err().to_string();
        assert!(e.contains("`mechanism.rpm`"), "{e}");
    }
}
