//! The dm-zoned-style layer: hand-checked placements, a model-based random test against
//! `MemBlock`, crash tests on `FileZoned` over `SimStorage` (power cut after every k-th storage
//! operation) and on `Faulty`, and damaged metadata.

use shingled_core::SplitMix64;
use shingled_stl::{
    BlockDevice, CheckReport, ChunkMapping, DmZoned, DmZonedConfig, DmZonedGeometry, DmZonedStats, MemBlock,
    ReclaimPolicy, StlError, BLOCK,
};
use shingled_zoned::{
    Dialect, FaultPlan, Faulty, FileZoned, MemZoned, SimStorage, Survivors, ZonedConfig, ZonedDevice,
};
use std::time::Duration;

/// `zones` zones of `zone_kib` KiB, `conv` conventional, 4 KiB logical blocks, ZBC.
fn zcfg(zones: u64, zone_kib: u64, conv: u64) -> ZonedConfig {
    let mut c = ZonedConfig::small(zones, zone_kib, Dialect::Zbc);
    c.nr_conv = conv;
    c.lba_size = 4096;
    c
}

fn mem(zones: u64, zone_kib: u64, conv: u64) -> MemZoned {
    MemZoned::new(&zcfg(zones, zone_kib, conv)).unwrap()
}

/// Block contents for (lba, version): every 512-byte sector starts with lba, version and its
/// index, then bytes derived from them, so a read names what it returned; version 0 is zeros.
fn content(lba: u64, ver: u64) -> Vec<u8> {
    let mut b = vec![0u8; BLOCK];
    if ver == 0 {
        return b;
    }
    for s in 0..8u64 {
        let sec = &mut b[s as usize * 512..(s as usize + 1) * 512];
        sec[0..8].copy_from_slice(&lba.to_le_bytes());
        sec[8..16].copy_from_slice(&ver.to_le_bytes());
        sec[16..24].copy_from_slice(&s.to_le_bytes());
        let mut r = SplitMix64::new(lba.wrapping_mul(0x1000_0000_01b3) ^ ver.rotate_left(17) ^ s);
        for x in sec[24..].chunks_mut(8) {
            let v = r.next_u64().to_le_bytes();
            x.copy_from_slice(&v[..x.len()]);
        }
    }
    b
}

fn data(lba: u64, n: u64, ver: u64) -> Vec<u8> {
    let mut out = Vec::with_capacity(n as usize * BLOCK);
    for l in lba..lba + n {
        out.extend_from_slice(&content(l, ver));
    }
    out
}

/// The version each sector of `got` (a block read at `lba`) holds, or `None` if a sector is
/// neither zeros nor a version of this block.
fn sector_versions(lba: u64, got: &[u8]) -> Option<Vec<u64>> {
    let mut out = Vec::with_capacity(8);
    let mut cache: Option<(u64, Vec<u8>)> = None;
    for s in 0..8usize {
        let sec = &got[s * 512..(s + 1) * 512];
        if sec.iter().all(|&x| x == 0) {
            out.push(0);
            continue;
        }
        let ver = u64::from_le_bytes(sec[8..16].try_into().unwrap());
        if cache.as_ref().is_none_or(|(v, _)| *v != ver) {
            cache = Some((ver, content(lba, ver)));
        }
        let want = &cache.as_ref().expect("just set").1;
        if want[s * 512..(s + 1) * 512] != *sec {
            return None;
        }
        out.push(ver);
    }
    Some(out)
}

fn assert_clean(r: &CheckReport, ctx: &str) {
    assert!(r.is_clean(), "{ctx}: check found {:#?}", r.problems);
}

fn read_all<B: BlockDevice>(d: &mut B) -> Vec<u8> {
    let mut buf = vec![0u8; d.capacity_blocks() as usize * BLOCK];
    d.read(0, &mut buf).unwrap();
    buf
}

fn map(data: Option<u64>, buffer: Option<u64>) -> ChunkMapping {
    ChunkMapping { data, buffer }
}

// ---------------------------------------------------------------- geometry

/// 16 zones of 64 KiB (16 blocks), 4 conventional: one set is a superblock, one mapping block
/// and one bitmap block (3 blocks), so both sets fit in zone 0; zones 1-3 buffer; zones 4-15
/// are sequential, one reserved: 11 chunks of 16 blocks.
#[test]
fn geometry_is_stated_exactly() {
    let d = DmZoned::format(mem(16, 64, 4), &DmZonedConfig::default()).unwrap();
    let g = d.geometry();
    assert_eq!(
        (g.blocks_per_zone, g.set_blocks, g.meta_zones, g.random_zones, g.first_seq_zone, g.seq_zones),
        (16, 3, 1, 3, 4, 12)
    );
    assert_eq!((g.reserved_seq, g.nr_chunks, g.capacity_blocks, d.capacity_blocks()), (1, 11, 176, 176));

    // A 74508-zone HM-SMR drive of 256 MiB zones (SMRSTORE's Seagate; 745 conventional zones):
    // 65536 blocks per zone; mapping 145 blocks (73763 chunks of 8 B); bitmaps 74508 × 65536
    // bits = 149016 blocks; a set is 149162 blocks, two sets take 5 zones; 740 buffer zones;
    // the default reserve is min(73763 / 100, 16) = 16: 73747 chunks.
    let (info, _) = ZonedConfig::hm_smr(74508).sanitize().unwrap();
    let g = DmZonedGeometry::plan(&info, None).unwrap();
    assert_eq!((g.map_blocks, g.bitmap_blocks, g.set_blocks, g.meta_zones), (145, 149016, 149162, 5));
    assert_eq!((g.random_zones, g.seq_zones, g.reserved_seq, g.nr_chunks), (740, 73763, 16, 73747));
    assert_eq!(g.capacity_bytes(), 73747 * (256 << 20));
    eprintln!(
        "hm_smr(74508): capacity {} of {} bytes ({:.2}% of raw)",
        g.capacity_bytes(),
        info.capacity_bytes(),
        100.0 * g.capacity_bytes() as f64 / info.capacity_bytes() as f64
    );

    // Refusals, typed.
    let e = DmZoned::format(mem(16, 64, 1), &DmZonedConfig::default()).err().unwrap();
    assert!(matches!(&e, StlError::Invalid { field, .. } if field == "nr_conv"), "{e}");
    let e = DmZoned::format(mem(16, 64, 4), &DmZonedConfig { reserved_seq: Some(12), ..Default::default() })
        .err()
        .unwrap();
    assert!(matches!(&e, StlError::Invalid { field, .. } if field == "reserved_seq"), "{e}");
    let mut z = zcfg(16, 64, 4);
    z.max_active = 4;
    let e = DmZoned::format(MemZoned::new(&z).unwrap(), &DmZonedConfig::default()).err().unwrap();
    assert!(matches!(&e, StlError::Invalid { field, .. } if field == "max_active"), "{e}");
}

// ---------------------------------------------------------------- hand-checked placements

/// Same device as above: buffers are zones 1, 2, 3; sequential zones 4..=15; the allocator
/// takes the lowest free zone. Every placement below is worked out by hand.
#[test]
fn hand_checked_placements_and_reclaim() {
    let mut d = DmZoned::format(mem(16, 64, 4), &DmZonedConfig::default()).unwrap();
    let mut o = MemBlock::new(d.capacity_blocks());
    let mut w = |d: &mut DmZoned<MemZoned>, lba: u64, n: u64, ver: u64| {
        d.write(lba, &data(lba, n, ver)).unwrap();
        o.write(lba, &data(lba, n, ver)).unwrap();
        let mut want = vec![0u8; o.capacity_blocks() as usize * BLOCK];
        o.read(0, &mut want).unwrap();
        assert!(read_all(d) == want, "after writing {n} blocks at {lba}");
        assert_clean(&d.check().unwrap(), &format!("after writing {n} blocks at {lba}"));
    };
    assert_eq!(d.stats().generation, 1);

    // 1. Blocks 0-1 of chunk 0, in order: chunk 0 gets data zone 4, written directly (wp 2).
    w(&mut d, 0, 2, 1);
    assert_eq!(d.mapping(0), Some(map(Some(4), None)));
    assert_eq!((d.zone_wp_block(4), d.zone_valid_blocks(4)), (2, 2));
    // 2. Block 5: not at the write pointer: buffer zone 1, block 5.
    w(&mut d, 5, 1, 2);
    assert_eq!(d.mapping(0), Some(map(Some(4), Some(1))));
    assert!(d.is_valid(1, 5) && !d.is_valid(4, 5));
    // 3. Block 2: at the write pointer: direct to zone 4 (wp 3).
    w(&mut d, 2, 1, 3);
    assert_eq!(d.zone_wp_block(4), 3);
    // 4. Block 0 again: below the write pointer: buffer zone 1 block 0, invalid in zone 4.
    w(&mut d, 0, 1, 4);
    assert!(d.is_valid(1, 0) && !d.is_valid(4, 0) && d.is_valid(4, 1) && d.is_valid(4, 2));
    // 5. Chunk 1 block 3 (lba 19), chunk unmapped and not at block 0: random zone 2 becomes its
    //    only zone.
    w(&mut d, 19, 1, 5);
    assert_eq!(d.mapping(1), Some(map(None, Some(2))));
    // 6. Chunk 2 block 0 (lba 32): data zone 5.
    w(&mut d, 32, 1, 6);
    assert_eq!(d.mapping(2), Some(map(Some(5), None)));
    let s = d.stats();
    assert_eq!(
        (s.direct_blocks, s.buffered_blocks, s.buffer_zones_in_use, s.free_random_zones),
        (4, 3, 2, 1)
    );

    d.flush().unwrap();
    assert_eq!(d.stats().generation, 2);

    // 7. Reclaim takes the least recently written buffered chunk: chunk 0 (step 4) before
    //    chunk 1 (step 5). Its buffer holds block 0, below zone 4's write pointer, so it is
    //    copied: blocks 0..=5 into the lowest free sequential zone, 6: 0 from buffer 1, 1-2 from
    //    zone 4, 3-4 zeros, 5 from buffer 1. Zones 4 and 1 are referenced by generation 2: they
    //    wait for the next commit (here the flush: generation 3), then they are free.
    assert!(d.reclaim().unwrap());
    assert_eq!(d.mapping(0), Some(map(Some(6), None)));
    assert_eq!((d.zone_wp_block(6), d.zone_valid_blocks(6)), (6, 4));
    assert!(d.is_valid(6, 0) && d.is_valid(6, 5) && !d.is_valid(6, 3));
    let s = d.stats();
    assert_eq!((s.reclaims, s.reclaim_blocks_copied, s.reclaim_zero_blocks, s.generation), (1, 4, 2, 2));
    assert_eq!((s.free_random_zones, s.free_seq_zones, s.pending_zones), (1, 9, 2));
    assert_clean(&d.check().unwrap(), "after reclaiming chunk 0");
    d.flush().unwrap();
    let s = d.stats();
    assert_eq!((s.free_random_zones, s.free_seq_zones, s.pending_zones, s.generation), (2, 10, 0, 3));

    // 8. Next victim: chunk 1 (buffer only, block 3). Copied to the lowest free sequential
    //    zone, zone 4 again: it still holds old data (wp 3), so it is reset first. Zone 2
    //    waits for a commit.
    assert!(d.reclaim().unwrap());
    assert_eq!(d.mapping(1), Some(map(Some(4), None)));
    assert_eq!((d.zone_wp_block(4), d.zone_valid_blocks(4), d.stats().zone_resets), (4, 1, 1));
    assert!(!d.reclaim().unwrap(), "nothing buffered");

    // 9. Chunk 2 (zone 5, wp 1): blocks 4 and 6 go to buffer zone 1. Both are at or after the
    //    write pointer, so reclaim appends them to zone 5: blocks 1-3 and 5 as zeros, 4 and 6
    //    copied; zone 5 ends at wp 7. Buffer 1 was allocated after the last commit: free at
    //    once.
    w(&mut d, 36, 1, 7);
    w(&mut d, 38, 1, 8);
    assert_eq!(d.mapping(2), Some(map(Some(5), Some(1))));
    assert!(d.reclaim().unwrap());
    assert_eq!(d.mapping(2), Some(map(Some(5), None)));
    assert_eq!((d.zone_wp_block(5), d.zone_valid_blocks(5)), (7, 3));
    let s = d.stats();
    assert_eq!(
        (s.reclaim_appends, s.reclaim_blocks_copied, s.reclaim_zero_blocks),
        (1, 4 + 1 + 2, 2 + 3 + 4)
    );
    assert_eq!((s.free_random_zones, s.pending_zones, s.metadata_commits), (2, 1, 3));
    // 10. Chunk 0 block 6 is at zone 6's write pointer: direct.
    w(&mut d, 6, 1, 9);
    assert_eq!((d.mapping(0), d.zone_wp_block(6)), (Some(map(Some(6), None)), 7));
    d.flush().unwrap();

    // 11. Discarding chunk 1 entirely releases zone 4, which generation 4 references: it waits
    //     for the next flush.
    d.discard(16, 16).unwrap();
    o.discard(16, 16).unwrap();
    assert_eq!((d.mapping(1), d.stats().pending_zones), (Some(map(None, None)), 1));
    assert_clean(&d.check().unwrap(), "after the discard");
    d.flush().unwrap();
    assert_eq!((d.stats().pending_zones, d.stats().generation), (0, 5));

    // Reopen: same placement, same data.
    let want = read_all(&mut d);
    let mut d = DmZoned::open(d.into_device()).unwrap();
    assert_eq!((d.mapping(0), d.mapping(2)), (Some(map(Some(6), None)), Some(map(Some(5), None))));
    assert!(read_all(&mut d) == want);
    assert_clean(&d.check().unwrap(), "after reopen");
}

/// A write that crosses a data zone's write pointer: the part below goes to the buffer, the
/// rest directly. A buffer whose data zone empties becomes the chunk's only zone.
#[test]
fn a_write_across_the_write_pointer_splits() {
    let mut d = DmZoned::format(mem(16, 64, 4), &DmZonedConfig::default()).unwrap();
    d.write(0, &data(0, 3, 1)).unwrap(); // zone 4, wp 3
    d.write(1, &data(1, 5, 2)).unwrap(); // 1-2 to buffer zone 1, 3-5 direct
    assert_eq!(d.mapping(0), Some(map(Some(4), Some(1))));
    assert_eq!((d.zone_wp_block(4), d.zone_valid_blocks(4), d.zone_valid_blocks(1)), (6, 4, 2));
    // Overwrite blocks 0 and 3-5 (below the wp): everything valid in zone 4 moves to the
    // buffer, zone 4 is released and the buffer is the chunk's only zone.
    d.write(0, &data(0, 1, 3)).unwrap();
    d.write(3, &data(3, 3, 3)).unwrap();
    assert_eq!(d.mapping(0), Some(map(None, Some(1))));
    let mut got = vec![0u8; 6 * BLOCK];
    d.read(0, &mut got).unwrap();
    let want: Vec<u8> = [data(0, 1, 3), data(1, 2, 2), data(3, 3, 3)].into_iter().flatten().collect();
    assert!(got == want);
    assert_clean(&d.check().unwrap(), "split write");
}

// ---------------------------------------------------------------- model-based

/// Counters summed over the sessions of a run (they restart at every open).
#[derive(Clone, Copy, Debug, Default)]
struct Totals {
    reclaims: u64,
    reclaim_appends: u64,
    forced_reclaims: u64,
    reclaim_blocks_copied: u64,
    reclaim_zero_blocks: u64,
    direct_blocks: u64,
    buffered_blocks: u64,
    metadata_commits: u64,
}

impl Totals {
    fn add(&mut self, s: &DmZonedStats) {
        self.reclaims += s.reclaims;
        self.reclaim_appends += s.reclaim_appends;
        self.forced_reclaims += s.forced_reclaims;
        self.reclaim_blocks_copied += s.reclaim_blocks_copied;
        self.reclaim_zero_blocks += s.reclaim_zero_blocks;
        self.direct_blocks += s.direct_blocks;
        self.buffered_blocks += s.buffered_blocks;
        self.metadata_commits += s.metadata_commits;
    }
}

/// Random reads, writes, discards, flushes, reclaims and reopens against `MemBlock`, with full
/// capacity overwrites to force reclaim. Returns the final stats line for the log.
fn model_run(zones: u64, zone_kib: u64, conv: u64, reserve: Option<u64>, seed: u64, steps: usize) -> String {
    let cfg = DmZonedConfig { reserved_seq: reserve, ..Default::default() };
    let mut d = DmZoned::format(mem(zones, zone_kib, conv), &cfg).unwrap();
    let cap = d.capacity_blocks();
    let bpz = d.geometry().blocks_per_zone;
    let mut o = MemBlock::new(cap);
    let mut rng = SplitMix64::new(seed);
    let mut ver = 1u64;
    let mut seq_cursor = 0u64;
    let mut total = Totals::default();
    for step in 0..steps {
        let r = rng.next_u64();
        let ctx = format!("seed {seed} step {step}");
        match r % 100 {
            0..=44 => {
                // random write, biased to a hot region of four chunks
                let n = 1 + (r >> 8) % 8;
                let span = if (r >> 16).is_multiple_of(3) { cap } else { (4 * bpz).min(cap) };
                let lba = (r >> 24) % (span - n.min(span - 1));
                let n = n.min(cap - lba);
                let b = data(lba, n, ver);
                ver += 1;
                d.write(lba, &b).unwrap_or_else(|e| panic!("{ctx}: write: {e}"));
                o.write(lba, &b).unwrap();
            }
            45..=59 => {
                // a sequential stream
                let n = 1 + (r >> 8) % 16;
                let lba = if seq_cursor + n > cap { 0 } else { seq_cursor };
                let n = n.min(cap - lba);
                let b = data(lba, n, ver);
                ver += 1;
                d.write(lba, &b).unwrap();
                o.write(lba, &b).unwrap();
                seq_cursor = lba + n;
            }
            60..=74 => {
                let n = 1 + (r >> 8) % 40;
                let lba = (r >> 24) % cap;
                let n = n.min(cap - lba);
                let mut got = vec![0u8; n as usize * BLOCK];
                let mut want = got.clone();
                d.read(lba, &mut got).unwrap();
                o.read(lba, &mut want).unwrap();
                assert!(got == want, "{ctx}: read of {n} blocks at {lba} differs");
            }
            75..=80 => {
                let n = 1 + (r >> 8) % (2 * bpz);
                let lba = (r >> 24) % cap;
                let n = n.min(cap - lba);
                d.discard(lba, n).unwrap();
                o.discard(lba, n).unwrap();
            }
            81..=88 => d.flush().unwrap(),
            89..=91 => {
                d.reclaim().unwrap();
            }
            92 => {
                d.idle(Duration::from_secs(4)).unwrap();
            }
            93 => {
                // full-capacity random overwrite: every block once, in a random order
                let mut order: Vec<u64> = (0..cap).collect();
                for i in (1..order.len()).rev() {
                    let j = (rng.next_u64() % (i as u64 + 1)) as usize;
                    order.swap(i, j);
                }
                for lba in order {
                    let b = data(lba, 1, ver);
                    d.write(lba, &b).unwrap_or_else(|e| panic!("{ctx}: overwrite: {e}"));
                    o.write(lba, &b).unwrap();
                }
                ver += 1;
            }
            94 => {
                d.flush().unwrap();
                total.add(&d.stats());
                d = DmZoned::open(d.into_device()).unwrap_or_else(|e| panic!("{ctx}: reopen: {e}"));
            }
            _ => {
                let rep = d.check().unwrap();
                assert_clean(&rep, &ctx);
            }
        }
    }
    let mut want = vec![0u8; cap as usize * BLOCK];
    o.read(0, &mut want).unwrap();
    assert!(read_all(&mut d) == want, "seed {seed}: final contents differ");
    assert_clean(&d.check().unwrap(), &format!("seed {seed} at the end"));
    d.flush().unwrap();
    total.add(&d.stats());
    let mut d = DmZoned::open(d.into_device()).unwrap();
    assert!(read_all(&mut d) == want, "seed {seed}: contents differ after reopen");
    let s = total;
    assert!(s.reclaims > 0, "seed {seed}: no reclaim: {s:?}");
    format!(
        "reclaims {} (appends {}, forced {}), copied {} + {} zero blocks, {} direct / {} buffered blocks, {} commits",
        s.reclaims,
        s.reclaim_appends,
        s.forced_reclaims,
        s.reclaim_blocks_copied,
        s.reclaim_zero_blocks,
        s.direct_blocks,
        s.buffered_blocks,
        s.metadata_commits
    )
}

#[test]
fn model_based_random_ops_match_memblock() {
    for seed in 1..=4 {
        // 40 zones of 16 blocks: 5 buffers, 34 sequential, 2 reserved.
        let s = model_run(40, 64, 6, Some(2), seed, 700);
        eprintln!("model 40x16 seed {seed}: {s}");
    }
    // Bigger zones (64 blocks), default reserve, a runt last zone left out.
    let s = model_run(20, 256, 4, None, 9, 500);
    eprintln!("model 20x64 seed 9: {s}");
}

/// The dm-zoned hang: sustained random writes with a single buffer zone and one reserved
/// sequential zone. Every write that needs a buffer must reclaim one, and always can.
#[test]
fn one_buffer_zone_never_hangs() {
    for seed in [3, 4] {
        let s = model_run(12, 64, 2, Some(1), seed, 600);
        eprintln!("one buffer zone seed {seed}: {s}");
    }
    let mut d = DmZoned::format(mem(12, 64, 2), &DmZonedConfig::default()).unwrap();
    assert_eq!(d.geometry().random_zones, 1);
    let cap = d.capacity_blocks();
    let mut rng = SplitMix64::new(77);
    let mut o = MemBlock::new(cap);
    for i in 0..4 * cap {
        let lba = rng.next_u64() % cap;
        d.write(lba, &data(lba, 1, i + 1)).unwrap();
        o.write(lba, &data(lba, 1, i + 1)).unwrap();
    }
    let mut want = vec![0u8; cap as usize * BLOCK];
    o.read(0, &mut want).unwrap();
    assert!(read_all(&mut d) == want);
    let s = d.stats();
    assert!(s.forced_reclaims + s.reclaims > cap, "{s:?}");
    assert_clean(&d.check().unwrap(), "one buffer zone");
}

/// Busy thresholds and idle reclaim.
#[test]
fn reclaim_thresholds_and_idle() {
    // 10 buffer zones (2 conventional for metadata? no: one set of 3 blocks ×2 fits zone 0).
    let mut d = DmZoned::format(mem(40, 64, 11), &DmZonedConfig::default()).unwrap();
    assert_eq!(d.geometry().random_zones, 10);
    // Buffer 7 chunks (block 1 of chunks 0..7 after block 0... write block 3 of each chunk).
    for c in 0..7u64 {
        d.write(c * 16, &data(c * 16, 1, 1)).unwrap();
        d.write(c * 16 + 3, &data(c * 16 + 3, 1, 1)).unwrap();
    }
    // 7 of 10 buffers in use: 30% unmapped, at the low mark. The next write reclaims one (LRU:
    // chunk 0), and reclaim goes on one chunk per write until 50% are unmapped.
    assert_eq!(d.stats().buffer_zones_in_use, 7);
    assert_eq!(d.stats().reclaims, 0);
    d.write(100, &data(100, 1, 2)).unwrap(); // chunk 6, block 4: its buffer
    assert_eq!((d.stats().reclaims, d.mapping(0).unwrap().buffer), (1, None));
    d.write(101, &data(101, 1, 2)).unwrap();
    d.write(102, &data(102, 1, 2)).unwrap();
    // 40%, 50%: stopped.
    assert_eq!((d.stats().reclaims, d.stats().buffer_zones_in_use), (2, 5));
    d.write(103, &data(103, 1, 2)).unwrap();
    assert_eq!(d.stats().reclaims, 2, "no reclaim at 50% free");
    // Idle: nothing before the idle period, everything after it; I/O restarts the clock.
    assert_eq!(d.idle(Duration::from_secs(6)).unwrap(), 0);
    let mut b = vec![0u8; BLOCK];
    d.read(0, &mut b).unwrap();
    assert_eq!(d.idle(Duration::from_secs(6)).unwrap(), 0);
    assert_eq!(d.idle(Duration::from_secs(4)).unwrap(), 5);
    assert_eq!(d.stats().buffer_zones_in_use, 0);
    assert_clean(&d.check().unwrap(), "after idle reclaim");
    // A custom policy: never busy-reclaim.
    d.set_policy(ReclaimPolicy { low_pct: 0, high_pct: 0, idle_period: Duration::from_secs(1) });
    for c in 0..9u64 {
        d.write(c * 16 + 9, &data(c * 16 + 9, 1, 3)).unwrap();
    }
    assert_eq!(d.stats().reclaims, 7);
}

// ---------------------------------------------------------------- crash tests

/// One step of a scripted workload.
#[derive(Clone, Copy, Debug)]
enum Op {
    Write(u64, u64),
    Discard(u64, u64),
    Flush,
    Reclaim,
}

/// A workload on a device of `cap` blocks in chunks of `bpz`: writes biased to two hot chunks,
/// sequential runs, discards, a flush every few operations, explicit reclaims.
fn script(seed: u64, cap: u64, bpz: u64, steps: usize) -> Vec<Op> {
    let mut rng = SplitMix64::new(seed);
    let mut cursor = 0;
    let mut out = Vec::new();
    for _ in 0..steps {
        let r = rng.next_u64();
        out.push(match r % 20 {
            0..=8 => {
                let n = 1 + (r >> 8) % 3;
                let span = if (r >> 12).is_multiple_of(2) { 2 * bpz } else { cap };
                let lba = (r >> 16) % (span - n);
                Op::Write(lba, n)
            }
            9..=12 => {
                let n = 1 + (r >> 8) % 6;
                if cursor + n > cap {
                    cursor = 0;
                }
                cursor += n;
                Op::Write(cursor - n, n)
            }
            13 => {
                let lba = (r >> 16) % cap;
                Op::Discard(lba, (1 + (r >> 8) % bpz).min(cap - lba))
            }
            14..=17 => Op::Flush,
            _ => Op::Reclaim,
        });
    }
    out.push(Op::Flush);
    out
}

/// What may be read back: per block, the version at the last completed flush and every
/// version (0 = discarded) issued since, including the operation that failed.
#[derive(Clone, Debug)]
struct Oracle {
    durable: Vec<u64>,
    since: Vec<Vec<u64>>,
}

impl Oracle {
    fn new(cap: u64) -> Oracle {
        Oracle { durable: vec![0; cap as usize], since: vec![Vec::new(); cap as usize] }
    }

    /// Runs `ops` (versions = index + `base`); stops at the first error. Returns whether all
    /// ran.
    fn run<B: Reclaim>(&mut self, d: &mut B, ops: &[Op], base: u64) -> bool {
        for (i, op) in ops.iter().enumerate() {
            let ver = base + i as u64;
            let r = match *op {
                Op::Write(lba, n) => {
                    (lba..lba + n).for_each(|l| self.since[l as usize].push(ver));
                    d.write(lba, &data(lba, n, ver))
                }
                Op::Discard(lba, n) => {
                    (lba..lba + n).for_each(|l| self.since[l as usize].push(0));
                    d.discard(lba, n)
                }
                Op::Flush => d.flush().map(|_| {
                    for (dur, s) in self.durable.iter_mut().zip(self.since.iter_mut()) {
                        if let Some(&last) = s.last() {
                            *dur = last;
                        }
                        s.clear();
                    }
                }),
                Op::Reclaim => d.reclaim_now(),
            };
            if r.is_err() {
                return false;
            }
        }
        true
    }

    /// Checks every block against what may be there; returns the blocks read and how many were
    /// torn (sectors of different allowed versions), which `torn_ok` permits.
    fn verify<B: BlockDevice>(&self, d: &mut B, torn_ok: bool, ctx: &str) -> (Vec<u8>, u64) {
        let all = read_all(d);
        let mut torn = 0;
        for (lba, got) in all.chunks(BLOCK).enumerate() {
            let allowed: Vec<u64> =
                std::iter::once(self.durable[lba]).chain(self.since[lba].iter().copied()).collect();
            let Some(vers) = sector_versions(lba as u64, got) else {
                panic!("{ctx}: block {lba} holds garbage (allowed versions {allowed:?})");
            };
            for v in &vers {
                assert!(
                    allowed.contains(v),
                    "{ctx}: block {lba} has version {v}, allowed {allowed:?} (sectors {vers:?})"
                );
            }
            if vers.iter().any(|v| *v != vers[0]) {
                assert!(torn_ok, "{ctx}: block {lba} torn {vers:?}");
                assert!(!self.since[lba].is_empty(), "{ctx}: flushed block {lba} not rewritten is torn");
                torn += 1;
            }
        }
        (all, torn)
    }
}

/// A block device the workload can also ask to reclaim.
trait Reclaim: BlockDevice {
    fn reclaim_now(&mut self) -> shingled_stl::Result<()>;
}

impl<D: ZonedDevice> Reclaim for DmZoned<D> {
    fn reclaim_now(&mut self) -> shingled_stl::Result<()> {
        self.reclaim().map(|_| ())
    }
}

/// 24 zones of 16 blocks, 4 conventional: 3 buffer zones, 20 sequential, 1 reserved: 19 chunks
/// (304 blocks). Few buffers, so writes force reclaims and commits all the time.
fn crash_zcfg() -> ZonedConfig {
    zcfg(24, 64, 4)
}

/// A freshly formatted device, from an image made once: the storage is grown to its full size
/// up front (zeros past the data region's written part change nothing: the zones are empty),
/// so crash points do not spend their time growing it.
fn fresh_file() -> DmZoned<FileZoned<SimStorage>> {
    use shingled_zoned::Storage;
    thread_local! {
        static IMAGE: SimStorage = {
            let mut dev = FileZoned::create_with(SimStorage::new(), &crash_zcfg()).unwrap();
            let end = dev.data_offset() + dev.info().capacity_bytes();
            dev.storage_mut().write_at(end - 512, &[0u8; 512]).unwrap();
            dev.storage_mut().sync().unwrap();
            let d = DmZoned::format(dev, &DmZonedConfig::default()).unwrap();
            d.into_device().storage().power_cut(Survivors::None)
        };
    }
    let img = IMAGE.with(|i| i.power_cut(Survivors::None));
    DmZoned::open(FileZoned::open_with(img).unwrap()).unwrap()
}

/// Storage operations of the whole workload (the crash-point space).
fn total_ops(ops: &[Op]) -> u64 {
    let mut d = fresh_file();
    let base = d.device().storage().ops();
    let cap = d.capacity_blocks();
    assert!(Oracle::new(cap).run(&mut d, ops, 1));
    d.device().storage().ops() - base
}

/// Freeze the storage after `n` operations of the workload, cut power (`cut` 0: only synced
/// data survives; 1: everything written; else a random subset, torn at 512 bytes), reopen,
/// check, verify; then go on working, flush, restart, and verify exactly. Returns torn blocks.
fn crash_at(ops: &[Op], n: u64, cut: u64) -> u64 {
    let ctx = format!("crash at storage op {n} cut {cut}");
    let mut d = fresh_file();
    let cap = d.capacity_blocks();
    d.device_mut().storage_mut().fail_after(n);
    let mut o = Oracle::new(cap);
    o.run(&mut d, ops, 1);
    let survivors = match cut {
        0 => Survivors::None,
        1 => Survivors::All,
        s => Survivors::Random { seed: s },
    };
    let img = d.into_device().storage().power_cut(survivors);
    let dev = FileZoned::open_with(img).unwrap_or_else(|e| panic!("{ctx}: zoned device reopen: {e}"));
    let mut d = DmZoned::open(dev).unwrap_or_else(|e| panic!("{ctx}: open after the crash: {e}"));
    assert_clean(&d.check().unwrap(), &ctx);
    let (seen, torn) = o.verify(&mut d, cut > 1, &ctx);
    // The recovered state is the new baseline; keep working on it.
    let mut m = MemBlock::new(cap);
    m.write(0, &seen).unwrap();
    let more = script(n ^ 0x5eed, cap, d.geometry().blocks_per_zone, 25);
    for (i, op) in more.iter().enumerate() {
        let ver = 1_000_000 + i as u64;
        match *op {
            Op::Write(lba, k) => {
                d.write(lba, &data(lba, k, ver)).unwrap();
                m.write(lba, &data(lba, k, ver)).unwrap();
            }
            Op::Discard(lba, k) => {
                d.discard(lba, k).unwrap();
                m.discard(lba, k).unwrap();
            }
            Op::Flush => d.flush().unwrap(),
            Op::Reclaim => {
                d.reclaim().unwrap();
            }
        }
    }
    d.flush().unwrap();
    let img = d.into_device().storage().power_cut(Survivors::None);
    let mut d = DmZoned::open(FileZoned::open_with(img).unwrap()).unwrap();
    assert!(read_all(&mut d) == read_all(&mut m), "{ctx}: after recovery, work, flush and restart");
    assert_clean(&d.check().unwrap(), &format!("{ctx}, second restart"));
    torn
}

fn sweep(seed: u64, steps: usize, stride: u64) -> (u64, u64, u64) {
    let d = fresh_file();
    let (cap, bpz) = (d.capacity_blocks(), d.geometry().blocks_per_zone);
    let ops = script(seed, cap, bpz, steps);
    let total = total_ops(&ops);
    let (mut points, mut torn) = (0, 0);
    let mut n = 0;
    while n <= total {
        torn += crash_at(&ops, n, n % 4);
        points += 1;
        n += stride;
    }
    (points, total, torn)
}

#[test]
fn crash_after_every_storage_op() {
    let (points, total, torn) = sweep(11, 120, 1);
    eprintln!(
        "dm-zoned crash, seed 11: {points} crash points (every storage op of {total}), {torn} torn blocks"
    );
    assert!(points >= 300, "{points} crash points over {total} ops");
}

#[test]
fn crash_sweep_more_workloads() {
    let mut points = 0;
    for seed in [21, 22, 23] {
        let d = fresh_file();
        let ops = script(seed, d.capacity_blocks(), d.geometry().blocks_per_zone, 160);
        let total = total_ops(&ops);
        let (p, t, torn) = sweep(seed, 160, (total / 150).max(1));
        eprintln!("dm-zoned crash, seed {seed}: {p} crash points over {t} storage ops, {torn} torn blocks");
        points += p;
    }
    assert!(points >= 450, "{points}");
}

/// Every storage operation of six more workloads.
#[test]
#[ignore = "long: every crash point of 6 workloads (run with --ignored)"]
fn crash_every_op_long() {
    let mut points = 0;
    for seed in 30..36 {
        let (p, total, torn) = sweep(seed, 200, 1);
        eprintln!(
            "dm-zoned crash, seed {seed}: {p} crash points over {total} storage ops, {torn} torn blocks"
        );
        points += p;
    }
    eprintln!("long: {points} crash points");
}

/// Faulty over MemZoned (4 KiB logical blocks, written whole): a failed write, a torn write or
/// a failed flush at the Nth call, then a power cut keeping a random subset. Blocks are never
/// torn here: every block reads one whole allowed version.
#[test]
fn faulty_writes_tears_and_flush_failures() {
    let mut points = 0;
    let probe = DmZoned::format(
        Faulty::new(mem(24, 64, 4), FaultPlan::default()).unwrap(),
        &DmZonedConfig::default(),
    )
    .unwrap();
    let (cap, bpz) = (probe.capacity_blocks(), probe.geometry().blocks_per_zone);
    for n in 1..90u64 {
        for kind in 0..3 {
            let ops = script(100 + n, cap, bpz, 100);
            let f = Faulty::new(mem(24, 64, 4), FaultPlan::default()).unwrap();
            let mut d = DmZoned::format(f, &DmZonedConfig::default()).unwrap();
            let (w, fl, _) = d.device().counts();
            let plan = match kind {
                0 => FaultPlan { fail_write: Some(w + n), ..Default::default() },
                1 => FaultPlan { tear_write: Some((w + n, 8 * (n % 3))), ..Default::default() },
                _ => FaultPlan { fail_flush: Some(fl + n / 3 + 1), ..Default::default() },
            };
            let ctx = format!("{plan:?}");
            d.device_mut().set_plan(plan);
            let mut o = Oracle::new(cap);
            if o.run(&mut d, &ops, 1) {
                continue;
            }
            assert!(d.failure().is_some(), "{ctx}: the layer did not stop");
            let mut again = vec![0u8; BLOCK];
            assert!(matches!(d.read(0, &mut again), Err(StlError::Failed { .. })), "{ctx}");
            let mut f = d.into_device();
            f.power_cut(Survivors::Random { seed: n }).unwrap();
            f.set_plan(FaultPlan::default());
            let mut d = DmZoned::open(f).unwrap_or_else(|e| panic!("{ctx}: open after the fault: {e}"));
            assert_clean(&d.check().unwrap(), &ctx);
            let (_, torn) = o.verify(&mut d, false, &ctx);
            assert_eq!(torn, 0);
            points += 1;
        }
    }
    eprintln!("dm-zoned faulty: {points} fault points");
    assert!(points >= 150, "{points} fault points");
}

// ---------------------------------------------------------------- damaged metadata

/// Overwrites byte `at` of metadata block `g` (of the conventional area) with `f(old)`.
fn poke<D: ZonedDevice>(dev: &mut D, bpz: u64, g: u64, at: usize, f: impl Fn(u8) -> u8) {
    let info = dev.info();
    let sector = info.zone_start(g / bpz) + (g % bpz) * 8;
    let mut b = vec![0u8; BLOCK];
    dev.read(sector, &mut b).unwrap();
    b[at] = f(b[at]);
    dev.write(sector, &b).unwrap();
}

fn used_device() -> (MemZoned, Vec<u8>, DmZonedGeometry) {
    let mut d = DmZoned::format(mem(16, 64, 4), &DmZonedConfig::default()).unwrap();
    for (i, lba) in [0u64, 1, 7, 20, 40, 3, 100].into_iter().enumerate() {
        d.write(lba, &data(lba, 2, i as u64 + 1)).unwrap();
    }
    d.flush().unwrap();
    let all = read_all(&mut d);
    let g = d.geometry();
    (d.into_device(), all, g)
}

#[test]
fn damaged_metadata_is_a_typed_error_or_repaired() {
    // Not formatted.
    let e = DmZoned::open(mem(16, 64, 4)).err().unwrap();
    assert!(matches!(&e, StlError::Corrupt { what, .. } if what.contains("a blank zoned device")), "{e}");

    let (dev, want, g) = used_device();
    let s = g.set_blocks;
    // One set damaged (primary superblock, or a secondary bitmap byte): the other one is used,
    // and open rewrites the damaged one.
    for (blk, at) in [(0, 20), (s + 2, 5), (1, 0), (s, 4095)] {
        let mut dev = dev.clone();
        poke(&mut dev, g.blocks_per_zone, blk, at, |x| x ^ 0x40);
        let mut d = DmZoned::open(dev).unwrap_or_else(|e| panic!("block {blk} byte {at}: {e}"));
        assert!(read_all(&mut d) == want, "block {blk} byte {at}");
        assert_clean(&d.check().unwrap(), &format!("repaired after damage to block {blk}"));
    }
    // Both superblocks, or the same mapping block in both sets: Corrupt, naming both sets.
    for blks in [[0, s], [1, s + 1]] {
        let mut dev = dev.clone();
        for b in blks {
            poke(&mut dev, g.blocks_per_zone, b, 9, |x| x ^ 1);
        }
        let e = DmZoned::open(dev).err().unwrap();
        assert!(
            matches!(&e, StlError::Corrupt { what, .. } if what.contains("primary") && what.contains("secondary")),
            "{e}"
        );
    }
}

/// Random bytes anywhere in the metadata area: open fails with `Corrupt` or succeeds (damage
/// in one set only); it never panics, and a device it opens checks clean and reads the data.
#[test]
fn random_metadata_damage_never_panics() {
    let (dev, want, g) = used_device();
    let mut rng = SplitMix64::new(5);
    let (mut ok, mut refused) = (0, 0);
    for _ in 0..300 {
        let mut dev = dev.clone();
        let hits = 1 + rng.next_u64() % 6;
        let mut sets = [false; 2];
        for _ in 0..hits {
            let blk = rng.next_u64() % (2 * g.set_blocks);
            sets[(blk / g.set_blocks) as usize] = true;
            let at = (rng.next_u64() % BLOCK as u64) as usize;
            let v = rng.next_u64() as u8;
            poke(&mut dev, g.blocks_per_zone, blk, at, |x| x ^ v.max(1));
        }
        match DmZoned::open(dev) {
            Ok(mut d) => {
                ok += 1;
                assert!(read_all(&mut d) == want);
                assert_clean(&d.check().unwrap(), "opened after damage");
            }
            Err(e) => {
                assert!(matches!(e, StlError::Corrupt { .. }), "{e}");
                assert!(sets[0] && sets[1], "refused with one set intact: {e}");
                refused += 1;
            }
        }
    }
    eprintln!("random metadata damage: {ok} opened (one set intact), {refused} refused");
    assert!(ok > 0 && refused > 0);
}

/// Measured: device write amplification (user blocks + blocks reclaim wrote, over user
/// blocks) on 1 MiB zones (256 blocks), 8 buffer zones, 38 chunks: a sequential fill; 4 KiB
/// random writes to an empty device (a sixteenth of the capacity); the same after a sequential
/// fill (every reclaim then copies a whole chunk); and 64 KiB random writes to a full device.
#[test]
fn reclaim_cost_figures() {
    for (name, prefill, random, n) in [
        ("sequential fill", false, false, 1u64),
        ("4 KiB random writes, empty device", false, true, 1),
        ("4 KiB random writes, full device", true, true, 1),
        ("64 KiB random writes, full device", true, true, 16),
    ] {
        let mut d = DmZoned::format(mem(48, 1024, 9), &DmZonedConfig::default()).unwrap();
        let cap = d.capacity_blocks();
        if prefill {
            for lba in (0..cap).step_by(64) {
                d.write(lba, &data(lba, 64, 1)).unwrap();
            }
            d.flush().unwrap();
        }
        let before = d.stats();
        let mut rng = SplitMix64::new(1);
        let writes = if random { cap / 16 / n } else { cap };
        for i in 0..writes {
            let lba = if random { rng.next_u64() % (cap / n) * n } else { i };
            d.write(lba, &data(lba, n, i + 2)).unwrap();
        }
        d.flush().unwrap();
        let s = d.stats();
        let user = writes * n;
        let copied = s.reclaim_blocks_copied - before.reclaim_blocks_copied;
        let zeros = s.reclaim_zero_blocks - before.reclaim_zero_blocks;
        let wa = (user + copied + zeros) as f64 / user as f64;
        eprintln!(
            "{name}: {user} user blocks, {} reclaims, {copied} copied + {zeros} zero blocks, device write \
             amplification {wa:.1}, {} commits, {} metadata blocks, map memory {} bytes",
            s.reclaims - before.reclaims,
            s.metadata_commits - before.metadata_commits,
            s.metadata_blocks_written - before.metadata_blocks_written,
            s.map_memory_bytes
        );
        if !random {
            assert_eq!((s.reclaims, s.buffered_blocks), (0, 0), "a sequential fill goes direct");
        }
        assert_clean(&d.check().unwrap(), name);
    }
}
