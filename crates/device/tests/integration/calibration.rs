//! The calibration features (PB entry limit, flash PB, idle cleaning) on hand-checked cases (the
//! papers' benches at reduced size are tested in `crates/bench/tests/drive.rs`).

use shingled_core::{BandConfig, ByteSize, Nanos, SizeSpec, BLOCK_SIZE};
use shingled_device::{BuildContext, DeviceError, DmSmr, DmSmrConfig, Drive, PbFlavour, PbFree, PbMedium};

fn drive(pb_slots: u64, entries: Option<u64>, medium: PbMedium, idle: Option<f64>) -> DmSmr {
    DmSmrConfig {
        capacity: ByteSize(64 * BLOCK_SIZE),
        pb_size: SizeSpec::Absolute(ByteSize(pb_slots * BLOCK_SIZE)),
        pb_flavour: PbFlavour::AppendOnly,
        pb_free: PbFree::AtHead,
        bands: BandConfig::Fixed { size: ByteSize(4 * BLOCK_SIZE) },
        pb_max_entries: entries,
        pb_medium: medium,
        idle_window_ms: idle,
        ..DmSmrConfig::default()
    }
    .build(&BuildContext::default())
    .unwrap()
}

#[test]
fn entry_limit_cleans_when_the_entries_run_out() {
    // 100 slots (never full), at most 2 entries, bands of 4 blocks (Bk = blocks 4k..4k+3).
    let mut d = drive(100, Some(2), PbMedium::Disk, None);
    let mut now = Nanos(0);
    let mut w = |d: &mut DmSmr, b: u64, n: u32| now += d.write(now, b, n);
    w(&mut d, 0, 2); // A = {0, 1} in B0                      entries 1
    w(&mut d, 8, 1); // B = {8} in B2                          entries 2
    assert_eq!((d.stats().rmws, d.pb_entries()), (0, Some(2)));
    w(&mut d, 4, 1); // needs an entry: head s0:0 → RMW#1 B0 {0, 1} frees A; C = {4}
    assert_eq!((d.stats().rmws, d.stats().pb_blocks_cleaned, d.pb_entries()), (1, 2, Some(2)));
    w(&mut d, 9, 1); // head s0, s1 merged (dropped); s2:8 → RMW#2 B2 {8} frees B; D = {9}
    assert_eq!((d.stats().rmws, d.stats().pb_blocks_cleaned), (2, 3));
    w(&mut d, 5, 2); // head s3:4 → RMW#3 B1 {4} frees C; E = {5, 6}
    let s = d.stats();
    assert_eq!((s.rmws, s.pb_blocks_cleaned, d.pb_entries()), (3, 4, Some(2)));
    let in_pb: Vec<u64> = (0..64).filter(|&b| d.pb_contains(b)).collect();
    assert_eq!(in_pb, vec![5, 6, 9]);
    // Without the limit the same writes never clean: 100 slots hold them all.
    let mut free = drive(100, None, PbMedium::Disk, None);
    let mut now = Nanos(0);
    for (b, n) in [(0, 2), (8, 1), (4, 1), (9, 1), (5, 2)] {
        now += free.write(now, b, n);
    }
    assert_eq!((free.stats().rmws, free.pb_entries()), (0, None));
}

#[test]
fn an_entry_lives_until_all_its_blocks_leave_the_pb() {
    // One write spanning B0 and B1 is one entry; cleaning B0 alone does not free it.
    let mut d = drive(100, Some(2), PbMedium::Disk, None);
    let mut now = Nanos(0);
    now += d.write(now, 3, 2); // A = {3 (B0), 4 (B1)}
    now += d.write(now, 12, 1); // B = {12 (B3)}
    now += d.write(now, 0, 1); // full: head s0:3 → RMW B0 {3}; A still holds 4 → RMW B1 {4}
    assert_eq!(d.stats().rmws, 2, "both bands of the oldest entry were cleaned");
    assert_eq!(d.pb_entries(), Some(2));
    // A rewrite needs its new entry before the old copy is invalidated (SAC's order: room
    // first): entries are full (C = {0}, B = {12}), so the head B3 {12} is cleaned first (RMW 3),
    // which frees B, and the new copy of 12 is a new valid block in a new entry.
    now += d.write(now, 12, 1);
    assert_eq!((d.stats().rmws, d.pb_entries()), (3, Some(2)));
    assert_eq!(d.pb_valid_blocks(), 2);
    // Rewriting 0 now: room first cleans B0 {0} (RMW 4), then 0 gets a new entry.
    now += d.write(now, 0, 1);
    assert_eq!((d.stats().rmws, d.pb_entries(), d.pb_valid_blocks()), (4, Some(2), 2));
    let _ = now;
}

#[test]
fn flash_pb_is_fast_and_overlaps_the_merge_with_the_band_read() {
    let mut flash = drive(4, None, PbMedium::Flash, None);
    // 52 µs + 4096 B / 490 MB/s = 52,000 + 8,359 ns
    assert_eq!(flash.write(Nanos(0), 0, 1), Nanos(60_360));
    assert_eq!(flash.stats().pb_time, Nanos(60_360));
    let mut disk = drive(4, None, PbMedium::Disk, None);
    // Fill both PBs with the same writes and force one RMW of a band with 3 merged blocks.
    let clean = |d: &mut DmSmr| {
        let mut now = Nanos(1_000_000_000);
        for b in [1, 2, 3, 20, 40] {
            now += d.write(now, b, 1);
        }
        d.stats()
    };
    let (f, k) = (clean(&mut flash), clean(&mut disk));
    assert_eq!((f.rmws, k.rmws), (1, 1));
    assert!(f.clean_time <= k.clean_time, "flash {} vs disk {}", f.clean_time, k.clean_time);
    assert!(f.write_time < k.write_time);
    // A PB read is served by the flash: latency + transfer.
    assert_eq!(flash.read(Nanos(10_000_000_000), 40, 1), Nanos(110_000 + 8_192));
}

#[test]
fn idle_cleaning_starts_after_the_window_and_finishes_a_started_rmw() {
    let mut d = drive(100, None, PbMedium::Disk, Some(1242.0));
    let mut now = Nanos(0);
    for b in [0, 4, 8, 12] {
        now += d.write(now, b, 1);
    }
    // Idle for one second: shorter than the window, nothing happens.
    d.idle(now, now + Nanos(1_000_000_000));
    assert_eq!(d.stats().rmws, 0);
    // Idle for 1.3 s: one RMW starts at 1.242 s and runs past the end of the idle period.
    let until = now + Nanos(1_300_000_000);
    d.idle(now, until);
    let s = d.stats();
    assert!(s.idle_rmws >= 1 && s.idle_rmws == s.rmws, "{s:?}");
    assert_eq!(s.clean_time, Nanos(0), "idle cleaning is not charged to writes");
    assert!(s.idle_clean_time > Nanos(0));
    // A long idle period empties the PB.
    d.idle(until, until + Nanos(60_000_000_000));
    assert_eq!(d.pb_valid_blocks(), 0);
    assert_eq!(d.stats().idle_rmws, 4);
    // Without a window nothing happens.
    let mut off = drive(100, None, PbMedium::Disk, None);
    off.write(Nanos(0), 0, 1);
    off.idle(Nanos(0), Nanos(100_000_000_000));
    assert_eq!(off.stats().rmws, 0);
}

fn batch_drive(pb_slots: u64, entries: Option<u64>, free: PbFree, watermark: Option<f64>) -> DmSmr {
    DmSmrConfig {
        capacity: ByteSize(64 * BLOCK_SIZE),
        pb_size: SizeSpec::Absolute(ByteSize(pb_slots * BLOCK_SIZE)),
        pb_flavour: PbFlavour::AppendOnly,
        pb_free: free,
        bands: BandConfig::Fixed { size: ByteSize(4 * BLOCK_SIZE) },
        pb_max_entries: entries,
        pb_clean_low_watermark: watermark,
        ..DmSmrConfig::default()
    }
    .build(&BuildContext::default())
    .unwrap()
}

/// Writes one block at a time; returns the RMWs each write caused.
fn rmws_per_write(d: &mut DmSmr, blocks: &[u64]) -> Vec<u64> {
    let mut now = Nanos(0);
    blocks
        .iter()
        .map(|&b| {
            let before = d.stats().rmws;
            now += d.write(now, b, 1);
            d.stats().rmws - before
        })
        .collect()
}

#[test]
fn low_watermark_cleans_down_to_it_once_cleaning_is_forced() {
    // 8 slots, at-head, bands of 4 blocks (Bk = blocks 4k..4k+3), watermark 0.5: once a write
    // finds the PB full, cleaning goes on until the ring holds at most floor(0.5 × 8) = 4 slots.
    let mut d = batch_drive(8, None, PbFree::AtHead, Some(0.5));
    // s0:0 s1:1 (B0), s2:4 (B1), s3:8 (B2), s4:12 (B3), s5:16, s6:20, s7:24 (B4..B6): full.
    let fill = rmws_per_write(&mut d, &[0, 1, 4, 8, 12, 16, 20, 24]);
    assert_eq!(fill, vec![0; 8]);
    // 28 needs a slot: RMW B0 (merges 0 and 1; s0, s1 leave: 6 slots), RMW B1 (4: 5 slots),
    // RMW B2 (8: 4 slots) = the watermark; 28 is appended (5 slots).
    assert_eq!(rmws_per_write(&mut d, &[28]), vec![3]);
    assert_eq!((d.stats().pb_blocks_cleaned, d.pb_occupancy()), (4, 5));
    // Three more writes fit (8 slots) without cleaning; the fourth cleans B3, B4, B5, B6
    // (12, 16, 20, 24: 8 → 4 slots) and is appended.
    assert_eq!(rmws_per_write(&mut d, &[32, 36, 40, 44]), vec![0, 0, 0, 4]);
    let s = d.stats();
    assert_eq!((s.rmws, s.pb_blocks_cleaned, d.pb_occupancy()), (7, 8, 5));
    let in_pb: Vec<u64> = (0..64).filter(|&b| d.pb_contains(b)).collect();
    assert_eq!(in_pb, vec![28, 32, 36, 40, 44]);
    // The same writes without a watermark (the default) clean only until the write fits: 28
    // cleans B0 (s0 leaves), 32 takes the slot of s1 (merged with B0) at no cost, then one band
    // per write.
    let mut one = batch_drive(8, None, PbFree::AtHead, None);
    let per = rmws_per_write(&mut one, &[0, 1, 4, 8, 12, 16, 20, 24, 28, 32, 36, 40, 44]);
    assert_eq!(per, vec![0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 1, 1, 1]);
    assert_eq!(one.pb_occupancy(), 8);
}

#[test]
fn low_watermark_counts_entries_too() {
    // 100 slots (never full), at most 4 entries, immediate free, watermark 0.5: a forced
    // cleaning goes on until at most floor(0.5 × 4) = 2 entries are live.
    let mut d = batch_drive(100, Some(4), PbFree::Immediate, Some(0.5));
    let mut now = Nanos(0);
    for (b, n) in [(0, 2), (4, 1), (8, 1), (12, 1)] {
        now += d.write(now, b, n); // A = {0, 1} (B0), B = {4}, C = {8}, D = {12}: 4 entries
    }
    assert_eq!((d.stats().rmws, d.pb_entries()), (0, Some(4)));
    // 16 needs an entry: RMW B0 frees A (3 live), RMW B1 frees B (2 live) = the watermark.
    now += d.write(now, 16, 1);
    let s = d.stats();
    assert_eq!((s.rmws, s.pb_blocks_cleaned, d.pb_entries(), d.pb_valid_blocks()), (2, 3, Some(3), 3));
    let _ = now;
}

#[test]
fn low_watermark_is_validated() {
    for w in [1.0, -0.1, f64::NAN, 2.0] {
        let cfg = DmSmrConfig { pb_clean_low_watermark: Some(w), ..DmSmrConfig::default() };
        let e = cfg.validate().unwrap_err();
        assert!(
            matches!(&e, DeviceError::InvalidField { field, .. } if field == "pb_clean_low_watermark"),
            "{w}: {e}"
        );
    }
    let ok = DmSmrConfig { pb_clean_low_watermark: Some(0.0), ..DmSmrConfig::default() };
    assert!(ok.validate().is_ok());
    // TOML / JSON name
    let cfg: DmSmrConfig = serde_json::from_str(r#"{"pb_clean_low_watermark": 0.9}"#).unwrap();
    assert_eq!(cfg.pb_clean_low_watermark, Some(0.9));
}
