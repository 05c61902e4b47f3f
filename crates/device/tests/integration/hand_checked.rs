//! Small DM-SMR cases worked out by hand: a PB of 4 blocks, fixed bands of 4 blocks (16 KiB),
//! a 64-block drive, single-block writes.
//!
//! Notation in the comments: `sN:b` is the N-th append (sequence number N) holding block `b`;
//! `x` marks an entry that is no longer valid (superseded, or merged by a cleaning); `Bk` is band
//! k (blocks 4k .. 4k+3). "occ" is the occupancy by the mode's rule: valid blocks (immediate) or
//! ring length including holes (at-head).

use crate::common::{fixed, smr};
use shingled_core::{Nanos, BLOCK_SIZE};
use shingled_device::{DmSmr, Drive, PbFlavour, PbFree};

const BAND_BYTES: u64 = 4 * BLOCK_SIZE;

/// Twelve writes touching four bands, with one rewrite (block 0) while it is in the PB and one
/// rewrite (block 5) after its band was cleaned.
const W1: [u64; 12] = [0, 5, 1, 9, 0, 13, 2, 6, 5, 10, 3, 14];

/// Ten writes, rewrite-heavy: block 0 four times, block 4 twice; every block in its own band.
const W2: [u64; 10] = [0, 4, 8, 0, 12, 0, 4, 16, 0, 20];

struct Expect {
    rmws: u64,
    cleaned: u64,
    in_place: u64,
    occupancy: u64,
    pb: &'static [u64],
}

fn run(writes: &[u64], flavour: PbFlavour, free: PbFree) -> DmSmr {
    let mut d = smr(64, 4, fixed(4), flavour, free);
    let mut now = Nanos(0);
    for &b in writes {
        now += d.write(now, b, 1);
    }
    d
}

fn check(d: &DmSmr, writes: &[u64], e: &Expect) {
    let s = d.stats();
    assert_eq!(s.rmws, e.rmws, "rmws");
    assert_eq!(s.pb_blocks_cleaned, e.cleaned, "pb_blocks_cleaned");
    assert_eq!(s.pb_rewrites_in_place, e.in_place, "pb_rewrites_in_place");
    assert_eq!(s.band_bytes_read, e.rmws * BAND_BYTES, "band_bytes_read");
    assert_eq!(s.band_bytes_written, e.rmws * BAND_BYTES, "band_bytes_written");
    assert_eq!(s.pb_writes, writes.len() as u64, "pb_writes");
    assert_eq!((s.write_ops, s.blocks_written), (writes.len() as u64, writes.len() as u64));
    assert_eq!(d.pb_occupancy(), e.occupancy, "occupancy");
    assert_eq!(d.pb_valid_blocks(), e.pb.len() as u64, "valid blocks");
    let in_pb: Vec<u64> = (0..64).filter(|&b| d.pb_contains(b)).collect();
    let mut want = e.pb.to_vec();
    want.sort();
    assert_eq!(in_pb, want, "PB contents");
    let wa = s.write_amplification().expect("cleaned at least once");
    let want_wa = (e.rmws * BAND_BYTES) as f64 / (e.cleaned * BLOCK_SIZE) as f64;
    assert!((wa - want_wa).abs() < 1e-12, "WA {wa} vs {want_wa}");
    assert!(s.clean_time > Nanos(0) && s.clean_time < s.write_time);
}

#[test]
fn w1_append_only_immediate() {
    //  1 w0  new              s0:0                         occ 1
    //  2 w5  new              s1:5                         occ 2
    //  3 w1  new              s2:1                         occ 3
    //  4 w9  new              s3:9                         occ 4
    //  5 w0  rewrite: s0x, s4:0; occupancy unchanged (4), no cleaning
    //  6 w13 new, full: drop s0x; head s1:5 valid -> RMW#1 B1 {5} (1 merged); s5:13
    //  7 w2  new, full: drop s1x; head s2:1 -> RMW#2 B0 {1, 0} (2 merged, total 3); s6:2
    //  8 w6  new, occ 3 -> s7:6                             valid {9, 13, 2, 6}
    //  9 w5  (its copy s1 was merged) new, full: drop s2x; head s3:9 -> RMW#3 B2 {9} (4); s8:5
    // 10 w10 new, full: drop s3x, s4x (0 merged at #2); head s5:13 -> RMW#4 B3 {13} (5); s9:10
    // 11 w3  new, full: drop s5x; head s6:2 -> RMW#5 B0 {2} (6); s10:3
    // 12 w14 new, full: drop s6x; head s7:6 -> RMW#6 B1 {6, 5} (8); s11:14
    // => 6 RMWs, 8 blocks cleaned, WA = 6 × 16 KiB / (8 × 4 KiB) = 3.0; PB {10, 3, 14}, occ 3.
    let d = run(&W1, PbFlavour::AppendOnly, PbFree::Immediate);
    check(&d, &W1, &Expect { rmws: 6, cleaned: 8, in_place: 0, occupancy: 3, pb: &[10, 3, 14] });
    assert_eq!(d.stats().write_amplification(), Some(3.0));
}

#[test]
fn w1_append_only_at_head() {
    // SAC's emulator.
    //  1-4 s0:0 s1:5 s2:1 s3:9                              ring len 4
    //  5 w0  rewrite needs a slot, full, head s0:0 valid -> RMW#1 B0 {0, 1} (2 merged);
    //        head s0 now stale, dropped; the old copy was merged, so s4:0 is a new valid block
    //        ring [s1:5 s2:1x s3:9 s4:0]
    //  6 w13 full, head s1:5 -> RMW#2 B1 {5} (3); drop; s5:13   [s2x s3:9 s4:0 s5:13]
    //  7 w2  full, head s2x dropped (no RMW); s6:2             [s3:9 s4:0 s5:13 s6:2]
    //  8 w6  full, head s3:9 -> RMW#3 B2 {9} (4); s7:6         [s4:0 s5:13 s6:2 s7:6]
    //  9 w5  new (merged at #2), full, head s4:0 -> RMW#4 B0 {0, 2} (6); s8:5
    //        [s5:13 s6x s7:6 s8:5]
    // 10 w10 full, head s5:13 -> RMW#5 B3 {13} (7); s9:10     [s6x s7:6 s8:5 s9:10]
    // 11 w3  full, head s6x dropped; s10:3                     [s7:6 s8:5 s9:10 s10:3]
    // 12 w14 full, head s7:6 -> RMW#6 B1 {6, 5} (9); s11:14   [s8x s9:10 s10:3 s11:14]
    // => 6 RMWs, 9 cleaned, WA = 96 KiB / 36 KiB = 2.667; PB {10, 3, 14}; occ 4 (hole s8).
    let d = run(&W1, PbFlavour::AppendOnly, PbFree::AtHead);
    check(&d, &W1, &Expect { rmws: 6, cleaned: 9, in_place: 0, occupancy: 4, pb: &[10, 3, 14] });
}

#[test]
fn w1_in_place_at_head() {
    // PORE's emulator.
    //  1-4 s0:0 s1:5 s2:1 s3:9
    //  5 w0  in place at s0 (in_place 1)
    //  6 w13 full, head s0:0 -> RMW#1 B0 {0, 1} (2); s4:13      [s1:5 s2x s3:9 s4:13]
    //  7 w2  full, head s1:5 -> RMW#2 B1 {5} (3); s5:2         [s2x s3:9 s4:13 s5:2]
    //  8 w6  full, head s2x dropped; s6:6                      [s3:9 s4:13 s5:2 s6:6]
    //  9 w5  new, full, head s3:9 -> RMW#3 B2 {9} (4); s7:5    [s4:13 s5:2 s6:6 s7:5]
    // 10 w10 full, head s4:13 -> RMW#4 B3 {13} (5); s8:10     [s5:2 s6:6 s7:5 s8:10]
    // 11 w3  full, head s5:2 -> RMW#5 B0 {2} (6); s9:3        [s6:6 s7:5 s8:10 s9:3]
    // 12 w14 full, head s6:6 -> RMW#6 B1 {6, 5} (8); s10:14   [s7x s8:10 s9:3 s10:14]
    // => 6 RMWs, 8 cleaned, 1 in place, WA 3.0; PB {10, 3, 14}; occ 4.
    let d = run(&W1, PbFlavour::InPlace, PbFree::AtHead);
    check(&d, &W1, &Expect { rmws: 6, cleaned: 8, in_place: 1, occupancy: 4, pb: &[10, 3, 14] });
}

#[test]
fn w1_in_place_immediate() {
    //  1-4 s0:0 s1:5 s2:1 s3:9; 5 w0 in place
    //  6 w13 full (4 valid), head s0:0 -> RMW#1 B0 {0, 1} (2); 2 valid; s4:13
    //  7 w2  3 valid -> s5:2                                  valid {5, 9, 13, 2}
    //  8 w6  full: drop s0x; head s1:5 -> RMW#2 B1 {5} (3); s6:6
    //  9 w5  new, full: drop s1x, s2x; head s3:9 -> RMW#3 B2 {9} (4); s7:5
    // 10 w10 full: drop s3x; head s4:13 -> RMW#4 B3 {13} (5); s8:10
    // 11 w3  full: drop s4x; head s5:2 -> RMW#5 B0 {2} (6); s9:3
    // 12 w14 full: drop s5x; head s6:6 -> RMW#6 B1 {6, 5} (8); s10:14
    // => 6 RMWs, 8 cleaned, 1 in place, WA 3.0; PB {10, 3, 14}; occ 3.
    let d = run(&W1, PbFlavour::InPlace, PbFree::Immediate);
    check(&d, &W1, &Expect { rmws: 6, cleaned: 8, in_place: 1, occupancy: 3, pb: &[10, 3, 14] });
}

#[test]
fn w2_append_only_immediate() {
    //  1-3 s0:0 s1:4 s2:8
    //  4 w0  rewrite: s0x, s3:0 (3 valid)
    //  5 w12 new: s4:12 (4 valid)
    //  6 w0  rewrite: s3x, s5:0;  7 w4 rewrite: s1x, s6:4   (still 4 valid: 8, 12, 0, 4)
    //  8 w16 full: drop s0x, s1x; head s2:8 -> RMW#1 B2 {8} (1); s7:16
    //  9 w0  rewrite: s5x, s8:0
    // 10 w20 full: drop s2x, s3x; head s4:12 -> RMW#2 B3 {12} (2); s9:20
    // => 2 RMWs, 2 cleaned, WA 4.0; PB {0, 4, 16, 20}; occ 4.
    let d = run(&W2, PbFlavour::AppendOnly, PbFree::Immediate);
    check(&d, &W2, &Expect { rmws: 2, cleaned: 2, in_place: 0, occupancy: 4, pb: &[0, 4, 16, 20] });
}

#[test]
fn w2_append_only_at_head() {
    //  1-3 s0:0 s1:4 s2:8
    //  4 w0  rewrite, len 3 < 4: s0x, s3:0                    [s0x s1:4 s2:8 s3:0]
    //  5 w12 full, head s0x dropped; s4:12                    [s1:4 s2:8 s3:0 s4:12]
    //  6 w0  rewrite, full, head s1:4 -> RMW#1 B1 {4} (1); s3x, s5:0
    //        [s2:8 s3x s4:12 s5:0]
    //  7 w4  new (merged), full, head s2:8 -> RMW#2 B2 {8} (2); s6:4
    //        [s3x s4:12 s5:0 s6:4]
    //  8 w16 full, head s3x dropped; s7:16                    [s4:12 s5:0 s6:4 s7:16]
    //  9 w0  rewrite, full, head s4:12 -> RMW#3 B3 {12} (3); s5x, s8:0
    // 10 w20 full, head s5x dropped; s9:20                    [s6:4 s7:16 s8:0 s9:20]
    // => 3 RMWs (holes force cleaning earlier than in immediate mode), 3 cleaned, WA 4.0.
    let d = run(&W2, PbFlavour::AppendOnly, PbFree::AtHead);
    check(&d, &W2, &Expect { rmws: 3, cleaned: 3, in_place: 0, occupancy: 4, pb: &[4, 16, 0, 20] });
}

#[test]
fn w2_in_place_both_free_modes() {
    //  1-3 s0:0 s1:4 s2:8; 4 w0 in place; 5 w12 s3:12 (full); 6 w0, 7 w4 in place (3 in place)
    //  8 w16 full, head s0:0 -> RMW#1 B0 {0} (1); s4:16
    //  9 w0  new (merged), full, head (at-head: s1:4; immediate: drop s0x, then s1:4)
    //        -> RMW#2 B1 {4} (2); s5:0
    // 10 w20 full, head s2:8 -> RMW#3 B2 {8} (3); s6:20
    // => 3 RMWs, 3 cleaned, 3 in place, WA 4.0; PB {12, 16, 0, 20}; occ 4 in both modes.
    for free in [PbFree::AtHead, PbFree::Immediate] {
        let d = run(&W2, PbFlavour::InPlace, free);
        check(&d, &W2, &Expect { rmws: 3, cleaned: 3, in_place: 3, occupancy: 4, pb: &[12, 16, 0, 20] });
    }
}

#[test]
fn reads_come_from_the_pb_or_the_band() {
    // After W1 (append-only, immediate) the PB holds {3, 10, 14}; 0, 2 and 5 were merged.
    let mut d = run(&W1, PbFlavour::AppendOnly, PbFree::Immediate);
    let mut now = d.mechanism().busy_until();
    now += d.read(now, 3, 1);
    assert_eq!(d.stats().pb_reads, 1);
    now += d.read(now, 0, 1);
    assert_eq!(d.stats().pb_reads, 1, "block 0 was merged into its band");
    // Blocks 2, 3, 4: band, PB, band -> three runs, each paying the command overhead.
    let overhead = d.mechanism().command_overhead();
    let t = d.read(now, 2, 3);
    now += t;
    assert_eq!(d.stats().pb_reads, 2);
    assert!(t.0 >= 3 * overhead.0, "{t} for three runs, overhead {overhead}");
    // Blocks 40..43 are all in one band and not in the PB: one run.
    let t = d.read(now, 40, 3);
    assert!(t.0 < 3 * overhead.0 + d.mechanism().revolution().0 + 20_000_000, "{t}");
    let s = d.stats();
    assert_eq!((s.read_ops, s.blocks_read), (4, 8));
    assert!(s.pb_time > Nanos(0));
}

#[test]
fn pb_appends_stream_and_cleaning_is_charged_to_the_trigger() {
    // A big PB: a burst of appends streams after the first positioning.
    let mut d = smr(1 << 20, 1024, fixed(256), PbFlavour::AppendOnly, PbFree::AtHead);
    let first = d.write(Nanos(0), 5000, 8);
    let now = first;
    let second = d.write(now, 777, 8);
    let m = d.mechanism();
    let stream = m.command_overhead() + m.transfer_time(8 * BLOCK_SIZE, 8 * BLOCK_SIZE);
    assert!(second.0.abs_diff(stream.0) <= 2, "second {second} vs streaming {stream}");
    assert!(first > second);

    // Fill the PB, then one more write triggers exactly one RMW of a 1 MiB band.
    let mut now = now + second;
    for i in 0..(1024 - 16) as u64 {
        now += d.write(now, 100_000 + i * 256, 1);
    }
    let before = d.stats();
    assert_eq!(before.rmws, 0);
    let t = d.write(now, 999_999, 1);
    let after = d.stats().since(&before);
    assert_eq!(after.rmws, 1);
    assert!(t >= after.clean_time && after.clean_time > Nanos(0));
    let band_xfer = d.mechanism().transfer_time(d.pb_bytes(), 256 * BLOCK_SIZE);
    assert!(after.clean_time.0 > 2 * band_xfer.0, "{} vs 2 × {}", after.clean_time, band_xfer);
}

#[test]
fn out_of_range_requests_are_counted_not_served() {
    let mut d = smr(64, 4, fixed(4), PbFlavour::AppendOnly, PbFree::Immediate);
    assert_eq!(d.capacity_blocks(), 64);
    assert!(d.check_range(60, 4).is_ok());
    assert!(d.check_range(62, 4).is_err());
    let t = d.write(Nanos(0), 62, 4);
    assert!(t > Nanos(0));
    let t = d.read(t, 100, 2);
    assert!(t > Nanos(0));
    let s = d.stats();
    assert_eq!(s.out_of_range_blocks, 4);
    assert_eq!(s.pb_writes, 2);
    assert!(d.pb_contains(62) && d.pb_contains(63) && !d.pb_contains(64));
}

#[test]
fn band_map_is_exposed() {
    let d = smr(64, 4, fixed(4), PbFlavour::AppendOnly, PbFree::Immediate);
    let m = d.band_map().expect("DM-SMR has bands");
    assert_eq!(m.len(), 16);
    assert_eq!(m.band_of(13), 3);
}
