//! Where the DM-SMR drive's time goes, case by case: each test replays by hand, on a fresh copy
//! of the mechanism, the exact accesses the drive must make (which region, which offset, in
//! which order, what is cached), and checks the drive's service times and its
//! [`TimeBreakdown`](shingled_device::TimeBreakdown) against them. The parts that need no
//! mechanism are checked as numbers: a cached write is the command overhead plus 4096 B over
//! the 600 MB/s interface (295,000 + 6,826.7 ns, rounded up: 301,827 ns on the archive
//! mechanism); a merge is 0.41 ms per PB block.
//!
//! Layout (docs/drive-models.md): the PB occupies physical bytes `[0, pb)`, slot `i` at
//! `i × 4096`; LBA block `b` lives at `pb + b × 4096`.

use crate::common::fixed;
use shingled_core::{BandConfig, ByteSize, Nanos, SizeSpec, BLOCK_SIZE};
use shingled_device::{BuildContext, DmSmr, DmSmrConfig, Drive, HddConfig, Mechanism, PbFlavour, PbFree};

/// A drive of 1 Mi blocks (4 GiB) with a PB of `pb` slots and fixed bands of `band` blocks on the
/// default archive mechanism, its write cache (1 MiB, 4 extents) on or off.
fn drive(pb: u64, band: u64, cache: bool) -> DmSmr {
    let mut mechanism = HddConfig::archive_5900_5tb();
    mechanism.write_cache.enabled = cache;
    mechanism.write_cache.capacity = ByteSize::mib(1);
    mechanism.write_cache.max_extents = 4;
    DmSmrConfig {
        capacity: ByteSize((1 << 20) * BLOCK_SIZE),
        pb_size: SizeSpec::Absolute(ByteSize(pb * BLOCK_SIZE)),
        pb_flavour: PbFlavour::AppendOnly,
        pb_free: PbFree::Immediate,
        bands: fixed(band),
        mechanism,
        ..DmSmrConfig::default()
    }
    .build(&BuildContext::default())
    .unwrap()
}

/// A fresh copy of the mechanism the drives above run on.
fn replica() -> Mechanism {
    HddConfig::archive_5900_5tb().mechanism().unwrap()
}

/// Command overhead (0.295 ms) + 4096 B at 600 MB/s (1000/600 ns per byte), rounded up.
const CACHED_4K_NS: u64 = 301_827;

/// A PB append right after a read in the band region: without a write cache the write seeks
/// back to the PB at the outer diameter (overhead + seek + settle + rotation + transfer); with
/// one it is acknowledged from DRAM (301,827 ns) and the head stays where the read left it, so
/// the next read of the following block only pays overhead + transfer.
#[test]
fn a_pb_append_after_a_read_seeks_back_unless_the_write_cache_takes_it() {
    let pb = 8 * BLOCK_SIZE;
    let far = 500_000; // a block 2 GB into the band region
                       // Without a write cache.
    let mut d = drive(8, 256, false);
    let mut m = replica();
    let r = d.read(Nanos(0), far, 1);
    let er = m.access_timed(Nanos(0), pb + far * BLOCK_SIZE, BLOCK_SIZE, false);
    assert_eq!(r, er.total);
    let w = d.write(r, 7, 1);
    let ew = m.access_timed(r, 0, BLOCK_SIZE, true);
    assert_eq!(w, ew.total);
    assert!(ew.seek > Nanos(1_000_000) && ew.settle == Nanos(500_000), "{ew:?}");
    let t = d.stats().time;
    assert_eq!((t.host_read, t.pb_write, t.cache, t.destage), (er.total, ew.total, Nanos(0), Nanos(0)));
    assert_eq!(t.seek, er.seek + ew.seek + ew.settle);
    assert_eq!(t.overhead, Nanos(2 * 295_000));

    // With the write cache.
    let mut d = drive(8, 256, true);
    let mut m = replica();
    let r = d.read(Nanos(0), far, 1);
    assert_eq!(r, m.access_timed(Nanos(0), pb + far * BLOCK_SIZE, BLOCK_SIZE, false).total);
    let w = d.write(r, 7, 1);
    assert_eq!(w, Nanos(CACHED_4K_NS));
    let next = d.read(r + w, far + 1, 1);
    let en = m.access_timed(r + w, pb + (far + 1) * BLOCK_SIZE, BLOCK_SIZE, false);
    assert!(en.sequential && en.seek == Nanos(0) && en.rotation == Nanos(0));
    assert_eq!(next, en.total);
    let s = d.stats();
    assert_eq!((s.time.cache, s.time.pb_write, s.time.destage), (Nanos(CACHED_4K_NS), Nanos(0), Nanos(0)));
    assert_eq!(s.pb_writes, 1, "the PB's counts do not depend on the cache");
}

/// A forced destage: 4 extents of 1 block each at scattered PB slots cannot happen with
/// appends (they are contiguous and extend one extent), so fill the cache by bytes instead: 256
/// single-block appends fill 1 MiB exactly (one extent, slots 0..255); the 257th write must
/// first write that extent to the PB (one positioning + 1 MiB of transfer), then is cached.
#[test]
fn a_full_write_cache_destages_its_oldest_run_as_one_sequential_pb_write() {
    let mut d = drive(1024, 256, true);
    let mut m = replica();
    let mut now = Nanos(0);
    for i in 0..256 {
        let t = d.write(now, 10_000 + 300 * i, 1);
        assert_eq!(t, Nanos(CACHED_4K_NS), "write {i}");
        now += t;
    }
    assert_eq!(d.stats().cache_destages, 0);
    let t = d.write(now, 999_000, 1);
    let destage = m.access_timed(now, 0, 256 * BLOCK_SIZE, true);
    assert_eq!(t, destage.total + Nanos(CACHED_4K_NS));
    let s = d.stats();
    assert_eq!((s.cache_destages, s.time.destage), (1, destage.total));
    assert_eq!(s.time.cache, Nanos(257 * CACHED_4K_NS));
    assert_eq!(s.time.transfer, destage.transfer);
    // An idle period drains the rest (the 257th block, slot 256) as soon as it starts.
    let at = now + t;
    d.idle(at, at + Nanos(1_000_000_000));
    let drained = m.access_timed(at, 256 * BLOCK_SIZE, BLOCK_SIZE, true);
    assert!(drained.sequential, "slot 256 continues the destaged run");
    assert_eq!(d.stats().time.destage, destage.total + drained.total);
}

/// The extent limit: an in-place PB (a rewrite goes to its block's slot) with the cache holding
/// 4 runs at most. 256 appends fill the cache by bytes (one extent, slots 0..255), the 257th
/// destages it and is cached alone (slot 256); rewrites of blocks 10, 20 and 30 (slots 10, 20,
/// 30) each open an extent (4 in all, 16 KiB), and the rewrite of block 40 finds no extent free:
/// the oldest (slot 256, which continues the first destage's run) goes to the PB first.
#[test]
fn a_write_cache_at_its_extent_limit_destages_its_oldest_run() {
    let mut mechanism = HddConfig::archive_5900_5tb();
    mechanism.write_cache.enabled = true;
    mechanism.write_cache.capacity = ByteSize::mib(1);
    mechanism.write_cache.max_extents = 4;
    let mut d = DmSmrConfig {
        capacity: ByteSize((1 << 20) * BLOCK_SIZE),
        pb_size: SizeSpec::Absolute(ByteSize(1024 * BLOCK_SIZE)),
        pb_flavour: PbFlavour::InPlace,
        pb_free: PbFree::AtHead,
        bands: fixed(256),
        mechanism,
        ..DmSmrConfig::default()
    }
    .build(&BuildContext::default())
    .unwrap();
    let mut m = replica();
    let mut now = Nanos(0);
    for b in 0..256 {
        now += d.write(now, b, 1);
    }
    let t = d.write(now, 256, 1);
    assert_eq!(t, m.access_timed(now, 0, 256 * BLOCK_SIZE, true).total + Nanos(CACHED_4K_NS));
    now += t;
    for b in [10, 20, 30] {
        let t = d.write(now, b, 1);
        assert_eq!(t, Nanos(CACHED_4K_NS), "rewrite of block {b}: a new extent, no destage");
        now += t;
    }
    assert_eq!((d.stats().cache_destages, d.stats().pb_rewrites_in_place), (1, 3));
    let t = d.write(now, 40, 1);
    let destage = m.access_timed(now, 256 * BLOCK_SIZE, BLOCK_SIZE, true);
    assert!(destage.sequential, "slot 256 continues the first destage");
    assert_eq!(t, destage.total + Nanos(CACHED_4K_NS));
    assert_eq!(d.stats().cache_destages, 2);
}

/// A cleaning the write waits for. PB of 2 slots, bands of 4 blocks (16 KiB):
///
/// ```text
/// w0  -> slot 0            (PB {0})
/// w4  -> slot 1            (PB {0, 4}: full)
/// w8  -> clean band 0 (oldest valid block 0, merges 1 block): 0.41 ms of merge, read band 0
///        (position from the end of slot 1 to the band + 16 KiB), write it back (re-position
///        about one revolution + 16 KiB), then append 8 at slot 0 (seek back to the PB)
/// ```
/// The third write's time is all four, in that order, on one mechanism.
#[test]
fn a_write_that_finds_the_pb_full_waits_for_merge_band_read_band_write_then_its_append() {
    let mut d = drive(2, 4, false);
    let mut m = replica();
    let pb = 2 * BLOCK_SIZE;
    let t1 = d.write(Nanos(0), 0, 1);
    assert_eq!(t1, m.access_timed(Nanos(0), 0, BLOCK_SIZE, true).total);
    let t2 = d.write(t1, 4, 1);
    let a2 = m.access_timed(t1, BLOCK_SIZE, BLOCK_SIZE, true);
    assert!(a2.sequential, "the second append streams");
    assert_eq!(t2, a2.total);
    let before = d.stats();
    let now = t1 + t2;
    let t3 = d.write(now, 8, 1);
    let merged = m.occupy(now, 410_000.0);
    assert_eq!(merged, Nanos(410_000));
    let b1 = m.busy_until();
    m.access(now, pb, 4 * BLOCK_SIZE, false);
    let b2 = m.busy_until();
    m.access(now, pb, 4 * BLOCK_SIZE, true);
    let b3 = m.busy_until();
    m.access(now, 0, BLOCK_SIZE, true);
    let b4 = m.busy_until();
    assert_eq!(t3, b4 - now);
    let s = d.stats().since(&before);
    assert_eq!(s.rmws, 1);
    assert_eq!(s.time.clean_merge, Nanos(410_000));
    assert_eq!(s.time.clean_band_read, b2 - b1);
    assert_eq!(s.time.clean_band_write, b3 - b2);
    assert_eq!(s.time.pb_write, b4 - b3);
    assert_eq!(s.clean_time, b3 - now);
    // Writing a band back re-positions over it: about a revolution more than its transfer.
    let rev = m.revolution();
    assert!(s.time.clean_band_write > Nanos(rev.0 / 2), "{} vs revolution {rev}", s.time.clean_band_write);
}

/// With an idle window, a request arriving while an idle-time RMW runs waits for it; the wait
/// is counted as `host_wait` and the RMW as background cleaning.
#[test]
fn a_read_arriving_during_idle_cleaning_waits_for_it() {
    let cfg = DmSmrConfig {
        capacity: ByteSize((1 << 20) * BLOCK_SIZE),
        pb_size: SizeSpec::Absolute(ByteSize(4 * BLOCK_SIZE)),
        pb_flavour: PbFlavour::AppendOnly,
        bands: BandConfig::Fixed { size: ByteSize(256 * BLOCK_SIZE) },
        idle_window_ms: Some(100.0),
        ..DmSmrConfig::default()
    };
    let mut d = cfg.build(&BuildContext::default()).unwrap();
    let t = d.write(Nanos(0), 1000, 1);
    // Idle from t for 100 ms + 1 ns: the RMW starts at t + 100 ms and takes well over 1 ns.
    let start = t + Nanos(100_000_000);
    d.idle(t, start + Nanos(1));
    let s = d.stats();
    assert_eq!(s.idle_rmws, 1);
    let busy = d.mechanism().busy_until();
    assert!(busy > start + Nanos(1));
    let r = d.read(start + Nanos(1), 5000, 1);
    let s = d.stats();
    assert_eq!(s.time.host_wait, busy - (start + Nanos(1)));
    assert!(r > s.time.host_wait);
    assert!(s.time.clean() > Nanos(0) && s.clean_time == Nanos(0), "idle cleaning is not charged to writes");
}
