//! Short traces whose every hit, eviction, RMW and WA is worked out by hand in the comments.

use super::*;
use shingled_device::{PbFlavour, PbFree};

/// LRU cache of 3 blocks in write-only mode above a DM-SMR drive with a 4-block PB
/// (append-only, immediate free) and bands of 4 blocks (band = block / 4).
///
/// ```text
///  #  req  cache (MRU first)  evicted  PB after (oldest first)   cleaning
///  1  w0   [0]
///  2  w1   [1 0]
///  3  w4   [4 1 0]
///  4  w0   [0 4 1]            -  (write hit)
///  5  w8   [8 0 4]            1        [1]
///  6  w12  [12 8 0]           4        [1 4]
///  7  w1   [1 12 8]           0        [1 4 0]
///  8  w5   [5 1 12]           8        [1 4 0 8]                (full)
///  9  w9   [9 5 1]            12       [4 8 12]                 RMW band 0: merges 1 and 0
/// 10  w4   [4 9 5]            1        [4 8 12 1]
/// 11  w13  [13 4 9]           5        [8 12 1 5]               RMW band 1: merges 4
/// 12  w2   [2 13 4]           9        [12 1 5 9]               RMW band 2: merges 8
/// ```
/// Write hits 1 (step 4); dirty evictions 8 = drive blocks written = PB writes; RMWs 3; band
/// bytes written 3 × 16 KiB; blocks cleaned 2 + 1 + 1 = 4; WA = 49152 / (4 × 4096) = 3.0;
/// 3 dirty blocks left (2, 13, 4); SSD writes 12, SSD reads 8 (write-back reads).
/// Media bytes: 8 PB appends × 4096 + 3 band rewrites × 16384 = 32768 + 49152 = 81920; the
/// application wrote 12 × 4096 = 49152, so dev WA = 81920 / 49152 = 5/3 (the cache absorbed one
/// rewrite and still holds 3 blocks, the bands cost 3 × 16 KiB).
#[test]
fn lru_write_only_above_tiny_smr() {
    let drive = tiny_smr(4, 4, PbFlavour::AppendOnly, PbFree::Immediate);
    let mut e = engine(Mode::WriteOnly, "lru", 3, drive);
    let trace = reqs(&[
        ('w', 0),
        ('w', 1),
        ('w', 4),
        ('w', 0),
        ('w', 8),
        ('w', 12),
        ('w', 1),
        ('w', 5),
        ('w', 9),
        ('w', 4),
        ('w', 13),
        ('w', 2),
    ]);
    for r in &trace {
        e.process(r);
    }
    let c = e.counters();
    assert_eq!(c.requests, 12);
    assert_eq!(c.blocks_written, 12);
    assert_eq!(c.write_hits, 1);
    assert_eq!(c.dirty_evictions, 8);
    assert_eq!(c.clean_evictions, 0);
    assert_eq!(c.drive_blocks_written, 8);
    assert_eq!(c.drive.pb_writes, 8);
    assert_eq!(c.drive.rmws, 3);
    assert_eq!(c.drive.band_bytes_written, 3 * 16384);
    assert_eq!(c.drive.band_bytes_read, 3 * 16384);
    assert_eq!(c.drive.pb_blocks_cleaned, 4);
    assert_eq!(c.drive.write_amplification(), Some(3.0));
    assert_eq!(c.drive.media_bytes_written, 81920);
    let m = shingled_sim::Metrics::new(c.clone(), &Default::default());
    assert_eq!(m.device_write_amplification, Some(81920.0 / 49152.0));
    assert_eq!(c.ssd_blocks_written, 12);
    assert_eq!(c.ssd_blocks_read, 8);
    assert_eq!(e.cache().unwrap().table().dirty_len(), 3);
    for b in [2, 13, 4] {
        assert!(e.cache().unwrap().peek(b).unwrap().dirty);
    }
    // Every I/O costs time, and the levels add up to the total.
    assert!(c.ssd_write_time.0 > 0 && c.drive_write_time.0 > 0);
    assert_eq!(c.total_time(), e.clock());
}

/// The same drive with no cache (SMR-only): the 12 writes all go to the PB.
///
/// ```text
/// writes: 0 1 4 0 8 12 1 5 9 4 13 2   (append-only: a rewrite appends and invalidates)
///  1-4  PB [0 1 4 0']  (0' replaces 0: the old copy is invalid and, immediate, frees its slot)
///       → PB valid {1,4,0'} = 3 slots used
///  5 w8  PB [1 4 0' 8] full (4 valid)
///  6 w12 clean oldest valid = 1 (band 0): merges 1, 0' → RMW 1 (2 blocks); PB [4 8 12]
///  7 w1  PB [4 8 12 1] full
///  8 w5  clean 4 (band 1): merges 4 → RMW 2 (1); PB [8 12 1 5]
///  9 w9  clean 8 (band 2): merges 8 → RMW 3 (1); PB [12 1 5 9]
/// 10 w4  clean 12 (band 3): merges 12 → RMW 4 (1); PB [1 5 9 4]
/// 11 w13 clean 1 (band 0): merges 1 → RMW 5 (1); PB [5 9 4 13]
/// 12 w2  clean 5 (band 1): merges 5, 4 → RMW 6 (2); PB [9 13 2]
/// ```
/// RMWs 6, blocks cleaned 2+1+1+1+1+2 = 8, band bytes 6 × 16 KiB, WA = 98304 / 32768 = 3.0.
/// Media bytes: 12 PB appends × 4096 + 98304 = 147456 over 49152 written: dev WA = 3.0.
#[test]
fn smr_only_tiny() {
    let drive = tiny_smr(4, 4, PbFlavour::AppendOnly, PbFree::Immediate);
    let ssd = SsdConfig::default().build().unwrap();
    let mut e = Engine::new(Mode::ReadWrite, None, ssd, drive);
    for r in &reqs(&[
        ('w', 0),
        ('w', 1),
        ('w', 4),
        ('w', 0),
        ('w', 8),
        ('w', 12),
        ('w', 1),
        ('w', 5),
        ('w', 9),
        ('w', 4),
        ('w', 13),
        ('w', 2),
    ]) {
        e.process(r);
    }
    let c = e.counters();
    assert_eq!(c.drive.pb_writes, 12);
    assert_eq!(c.drive.rmws, 6);
    assert_eq!(c.drive.pb_blocks_cleaned, 8);
    assert_eq!(c.drive.band_bytes_written, 6 * 16384);
    assert_eq!(c.drive.write_amplification(), Some(3.0));
    assert_eq!(c.drive.media_bytes_written, 147456);
    let m = shingled_sim::Metrics::new(c.clone(), &Default::default());
    assert_eq!(m.device_write_amplification, Some(3.0));
    assert_eq!(c.ssd_blocks_read + c.ssd_blocks_written, 0);
}

/// Read-write LRU, capacity 2, with reads: clean victims are dropped, reads of blocks still in
/// the PB are served from the PB.
///
/// ```text
/// #  req  result                          cache (MRU first)
/// 1  w0   write miss, insert dirty        [0]
/// 2  r1   read miss: drive read 1 (band), fill clean   [1 0]
/// 3  r0   read hit                        [0 1]
/// 4  w2   write miss: evict 1 (clean, dropped)         [2 0]
/// 5  r3   read miss: drive read 3; evict 0 (dirty → written back to PB)  [3 2]
/// 6  r0   read miss: drive read 0 — served from the PB; evict 2 (dirty → PB)  [0 3]
/// ```
/// read hits 1 of 4 block reads; write hits 0 of 2; evictions: 1 clean, 2 dirty;
/// drive blocks read 3 (1, 3, 0); PB reads 1 (block 0); PB writes 2; no RMW (PB of 8).
#[test]
fn lru_read_write_clean_and_dirty() {
    let drive = tiny_smr(8, 4, PbFlavour::AppendOnly, PbFree::Immediate);
    let mut e = engine(Mode::ReadWrite, "lru", 2, drive);
    for r in &reqs(&[('w', 0), ('r', 1), ('r', 0), ('w', 2), ('r', 3), ('r', 0)]) {
        e.process(r);
    }
    let c = e.counters();
    assert_eq!((c.blocks_read, c.read_hits), (4, 1));
    assert_eq!((c.blocks_written, c.write_hits), (2, 0));
    assert_eq!((c.clean_evictions, c.dirty_evictions), (1, 2));
    assert_eq!(c.drive_blocks_read, 3);
    assert_eq!(c.drive.pb_reads, 1);
    assert_eq!(c.drive.pb_writes, 2);
    assert_eq!(c.drive.rmws, 0);
    // fills of 3 read misses + 2 write inserts go to the SSD; 1 hit + 2 write-backs read it.
    assert_eq!(c.ssd_blocks_written, 5);
    assert_eq!(c.ssd_blocks_read, 3);
}

/// Write-cache mode: reads pass through unless the block is cached (dirty); read-only mode:
/// writes go around the cache and invalidate a cached copy.
#[test]
fn write_cache_and_read_only_modes() {
    let drive = tiny_smr(8, 4, PbFlavour::AppendOnly, PbFree::Immediate);
    let mut e = engine(Mode::WriteCache, "lru", 4, drive);
    // w5 cached; r5 hit (dirty in cache); r6 miss passes through and is not cached.
    for r in &reqs(&[('w', 5), ('r', 5), ('r', 6), ('r', 6)]) {
        e.process(r);
    }
    let c = e.counters();
    assert_eq!((c.read_hits, c.blocks_read), (1, 3));
    assert_eq!(c.drive_blocks_read, 2);
    assert!(e.cache().unwrap().peek(6).is_none());

    let drive = tiny_smr(8, 4, PbFlavour::AppendOnly, PbFree::Immediate);
    let mut e = engine(Mode::ReadOnly, "lru", 4, drive);
    // r7 miss fills; w7 goes to the drive and drops the cached copy; r7 misses again.
    for r in &reqs(&[('r', 7), ('w', 7), ('r', 7)]) {
        e.process(r);
    }
    let c = e.counters();
    assert_eq!(c.read_hits, 0);
    assert_eq!(c.drive_blocks_written, 1);
    assert_eq!(c.drive_blocks_read, 2);
    assert_eq!(c.drive.pb_reads, 1, "the second read of 7 finds it in the PB");
    assert_eq!(e.cache().unwrap().table().dirty_len(), 0);

    // write-only mode drops reads entirely
    let drive = tiny_smr(8, 4, PbFlavour::AppendOnly, PbFree::Immediate);
    let mut e = engine(Mode::WriteOnly, "lru", 4, drive);
    for r in &reqs(&[('r', 1), ('w', 1), ('r', 1)]) {
        e.process(r);
    }
    let c = e.counters();
    assert_eq!((c.requests, c.skipped_requests, c.blocks_read), (1, 2, 0));
}

/// A multi-block request is split into 4 KiB blocks, and contiguous drive blocks of one request
/// become one drive I/O.
#[test]
fn requests_split_into_blocks_and_merge_at_the_drive() {
    let drive = tiny_smr(64, 4, PbFlavour::AppendOnly, PbFree::Immediate);
    let ssd = SsdConfig::default().build().unwrap();
    let mut e = Engine::new(Mode::ReadWrite, None, ssd, drive);
    // 10 KiB at offset 2 KiB touches blocks 0, 1, 2.
    e.process(&Request { time_ns: 0, volume: 0, op: Op::Write, offset: 2048, len: 10240 });
    let c = e.counters();
    assert_eq!(c.blocks_written, 3);
    assert_eq!(c.drive.pb_writes, 3);
    assert_eq!(c.drive.write_ops, 1, "one drive I/O for the contiguous run");
}

/// Two reads and a write-back, timed: an LRU cache of one block (read-write) above a DM-SMR
/// drive with a PB of 8 slots, bands of 4 blocks and its write cache on (1 MiB, 4 extents).
///
/// ```text
/// w10        miss: cache [10 dirty]                 SSD write 20 µs + 4096 B / 1.05 GB/s = 23,901 ns
/// r20..21    (blocks 200,000 and 200,001, 800 MB into the band region; "20" and "21" below)
///            block 20 misses: the drive read of 20 is issued (from the head at rest: seek,
///            rotation, 4 KiB); inserting 20 evicts 10 (dirty): SSD read 85 µs + 4096 B /
///            3.2 GB/s = 86,280 ns, then the drive write of 10 is taken by the write cache:
///            0.295 ms + 4096 B / 600 MB/s = 301,827 ns; SSD write of 20: 23,901 ns.
///            block 21 misses: inserting it evicts 20 (clean, dropped); the drive read of 21
///            continues where the read of 20 ended (the cached write did not move the head):
///            overhead + transfer only; SSD write of 21: 23,901 ns.
/// ```
/// Without the write cache the write-back goes to the PB at the outer diameter, and the read of
/// 21 must seek back: the same counts, more drive time.
#[test]
fn two_reads_and_a_write_back_timed_cause_by_cause() {
    use shingled_core::{Nanos, BLOCK_SIZE};
    use shingled_device::HddConfig;
    let build = |cache: bool| {
        let mut mechanism = HddConfig::archive_5900_5tb();
        mechanism.write_cache = shingled_device::WriteCacheConfig {
            enabled: cache,
            max_extents: 4,
            capacity: ByteSize::mib(1),
            ..Default::default()
        };
        DriveConfig::DmSmr(DmSmrConfig {
            capacity: ByteSize::gib(1),
            pb_size: SizeSpec::Absolute(ByteSize(8 * 4096)),
            pb_flavour: PbFlavour::AppendOnly,
            pb_free: PbFree::Immediate,
            bands: BandConfig::Fixed { size: ByteSize(4 * 4096) },
            mechanism,
            ..DmSmrConfig::default()
        })
        .build(&BuildContext::whole_drive(ByteSize::gib(1)))
        .unwrap()
    };
    let trace = [
        Request { time_ns: 0, volume: 0, op: Op::Write, offset: 10 * 4096, len: 4096 },
        Request { time_ns: 1, volume: 0, op: Op::Read, offset: 200_000 * 4096, len: 2 * 4096 },
    ];
    let (ssd_w, ssd_r, cached) = (Nanos(23_901), Nanos(86_280), Nanos(301_827));
    let pb = 8 * BLOCK_SIZE;

    let mut e = engine(Mode::ReadWrite, "lru", 1, build(true));
    for r in &trace {
        e.process(r);
    }
    let mut m = HddConfig::archive_5900_5tb().mechanism().unwrap();
    let t0 = ssd_w;
    let read20 = m.access_timed(t0, pb + 200_000 * BLOCK_SIZE, BLOCK_SIZE, false).total;
    let t1 = t0 + read20 + ssd_r + cached + ssd_w;
    let read21 = m.access_timed(t1, pb + 200_001 * BLOCK_SIZE, BLOCK_SIZE, false);
    assert!(read21.sequential);
    assert_eq!(read21.total, Nanos(295_000) + read21.transfer);
    let c = e.counters();
    assert_eq!((c.dirty_evictions, c.clean_evictions, c.drive.pb_writes), (1, 1, 1));
    assert_eq!(c.ssd_write_time, ssd_w + ssd_w + ssd_w);
    assert_eq!(c.ssd_read_time, ssd_r);
    assert_eq!(c.drive_read_time, read20 + read21.total);
    assert_eq!(c.drive_write_time, cached);
    assert_eq!(c.drive.time.cache, cached);
    assert_eq!(c.drive.time.host_read, read20 + read21.total);
    assert_eq!(e.clock(), t1 + read21.total + ssd_w);

    // The same without the write cache: the write-back seeks to the PB, the second read back.
    let mut e = engine(Mode::ReadWrite, "lru", 1, build(false));
    for r in &trace {
        e.process(r);
    }
    let mut m = HddConfig::archive_5900_5tb().mechanism().unwrap();
    let read20 = m.access_timed(t0, pb + 200_000 * BLOCK_SIZE, BLOCK_SIZE, false).total;
    let wb_at = t0 + read20 + ssd_r;
    let wb = m.access_timed(wb_at, 0, BLOCK_SIZE, true);
    let read21 = m.access_timed(wb_at + wb.total + ssd_w, pb + 200_001 * BLOCK_SIZE, BLOCK_SIZE, false);
    assert!(!wb.sequential && !read21.sequential && read21.seek > Nanos(0));
    let c2 = e.counters();
    assert_eq!(c2.drive_write_time, wb.total);
    assert_eq!(c2.drive.time.pb_write, wb.total);
    assert_eq!(c2.drive_read_time, read20 + read21.total);
    assert!(c2.total_time() > c.total_time() + Nanos(1_000_000), "{} vs {}", c2.total_time(), c.total_time());
    assert_eq!(
        (c2.dirty_evictions, c2.drive.pb_writes, c2.drive.rmws),
        (c.dirty_evictions, c.drive.pb_writes, c.drive.rmws)
    );
}

/// `io_unit = block` issues each block of a request as its own drive command (the papers'
/// prototypes); the counts are the same, the commands are not.
#[test]
fn block_io_unit_issues_one_command_per_block() {
    for (unit, ops) in [(shingled_sim::IoUnit::Request, 1), (shingled_sim::IoUnit::Block, 3)] {
        let drive = tiny_smr(64, 4, PbFlavour::AppendOnly, PbFree::Immediate);
        let ssd = SsdConfig::default().build().unwrap();
        let mut e = Engine::new(Mode::ReadWrite, None, ssd, drive).with_io_unit(unit);
        e.process(&Request { time_ns: 0, volume: 0, op: Op::Write, offset: 0, len: 3 * 4096 });
        let c = e.counters();
        assert_eq!((c.drive.pb_writes, c.drive.write_ops), (3, ops), "{unit:?}");
    }
}
