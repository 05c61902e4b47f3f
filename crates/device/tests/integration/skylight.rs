//! The DM-SMR drive as SMaRT §5.1 configures Skylight: on-demand cleaning at a high watermark
//! (80%), cleanings counted as on-demand and background GCs with their I/O requests, and read
//! pieces. With the watermark left at its default nothing changes.

use crate::common::{fixed, ALL_MODES};
use proptest::prelude::*;
use shingled_core::{ByteSize, Nanos, SizeSpec, BLOCK_SIZE};
use shingled_device::{BuildContext, DmSmrConfig, Drive, PbFlavour, PbFree};

fn drive(pb: u64, band_blocks: u64, high: Option<f64>, (flavour, free): (PbFlavour, PbFree)) -> DmSmrConfig {
    DmSmrConfig {
        capacity: ByteSize(64 * BLOCK_SIZE),
        pb_size: SizeSpec::Absolute(ByteSize(pb * BLOCK_SIZE)),
        pb_flavour: flavour,
        pb_free: free,
        bands: fixed(band_blocks),
        pb_clean_high_watermark: high,
        ..DmSmrConfig::default()
    }
}

/// PB of 10 slots, one block per band, distinct blocks: at 80% the ninth write finds 8 slots
/// taken (≥ ceil(0.8 × 10)) and cleans the oldest block's band first; without the watermark the
/// first cleaning is at the eleventh write, when all 10 are taken.
#[test]
fn cleaning_starts_at_the_high_watermark() {
    for mode in ALL_MODES {
        for (high, first_clean_at) in [(Some(0.8), 9u64), (None, 11), (Some(1.0), 11), (Some(0.5), 6)] {
            let mut d = drive(10, 1, high, mode).build(&BuildContext::default()).unwrap();
            let mut now = Nanos(0);
            for k in 0..20u64 {
                now += d.write(now, k, 1);
                let rmws = d.stats().rmws;
                let want = (k + 2).saturating_sub(first_clean_at);
                assert_eq!(rmws, want, "{mode:?} high {high:?}: after write {}", k + 1);
                let cap = (high.unwrap_or(1.0) * 10.0f64).ceil() as u64;
                assert!(d.pb_occupancy() <= cap, "{mode:?} {high:?}: occupancy {}", d.pb_occupancy());
            }
            let s = d.stats().stl;
            assert_eq!((s.gc_ondemand, s.writes_triggering_gc), (d.stats().rmws, d.stats().rmws));
        }
    }
}

/// Cleanings in SMaRT's terms: PB of 4 slots, bands of 4 blocks. Writes 0, 1, 4, 8 fill it; 12
/// cleans band 0 (two merged blocks: 2 PB reads + band read + band write = 4 I/O requests), an
/// on-demand GC and an amplified write. Idle time then cleans bands 1, 2, 3 (3 requests each):
/// three background GCs.
#[test]
fn cleanings_are_counted_as_smart_counts_gcs() {
    let cfg = DmSmrConfig { idle_window_ms: Some(100.0), ..drive(4, 4, None, ALL_MODES[0]) };
    let mut d = cfg.build(&BuildContext::default()).unwrap();
    let mut now = Nanos(0);
    for b in [0, 1, 4, 8, 12] {
        now += d.write(now, b, 1);
    }
    let s = d.stats();
    assert_eq!((s.rmws, s.stl.gc_ondemand, s.stl.writes_triggering_gc), (1, 1, 1));
    assert_eq!(s.stl.gc_cost.bucket_count(4), 1);
    d.idle(now, now + Nanos(10_000_000_000));
    let s = d.stats();
    assert_eq!((s.rmws, s.idle_rmws, s.stl.gc_background, s.stl.gc_ondemand), (4, 3, 3, 1));
    assert_eq!(s.stl.gc_cost_background.bucket_count(3), 3);
    assert!(s.stl.read_pieces.is_empty() && s.stl.map_bytes == 0);
}

/// A read whose blocks are split between the PB and the band region takes several physical
/// reads: band block 0, PB block 1, band blocks 2–3.
#[test]
fn reads_split_between_pb_and_bands_count_their_pieces() {
    let mut d = drive(8, 4, None, ALL_MODES[0]).build(&BuildContext::default()).unwrap();
    let mut now = d.write(Nanos(0), 1, 1);
    now += d.read(now, 0, 4);
    now += d.read(now, 4, 4);
    assert!(now > Nanos(0));
    let s = d.stats().stl;
    assert_eq!((s.fragmented_reads, s.read_pieces.bucket_count(3), s.read_pieces.bucket_count(1)), (1, 1, 1));
}

#[test]
fn high_watermark_is_validated() {
    for w in [0.0, -0.1, 1.5, f64::NAN] {
        let e = drive(8, 4, Some(w), ALL_MODES[0]).validate().unwrap_err().to_string();
        assert!(e.contains("`pb_clean_high_watermark`"), "{w}: {e}");
    }
    let cfg = DmSmrConfig { pb_clean_low_watermark: Some(0.8), ..drive(8, 4, Some(0.8), ALL_MODES[0]) };
    let e = cfg.validate().unwrap_err().to_string();
    assert!(e.contains("`pb_clean_high_watermark`") && e.contains("pb_clean_low_watermark"), "{e}");
    let cfg = DmSmrConfig { pb_clean_low_watermark: Some(0.5), ..drive(8, 4, Some(0.8), ALL_MODES[0]) };
    cfg.validate().unwrap();
}

#[test]
fn the_skylight_profile_cleans_at_80_percent() {
    let cfg = shingled_device::profile("skylight-cheetah").unwrap();
    let c = cfg.dm_smr().unwrap();
    assert_eq!(c.pb_clean_high_watermark, Some(0.8));
    assert_eq!(c.idle_window_ms, Some(1242.0));
    assert_eq!(c.pb_size, SizeSpec::Absolute(ByteSize::gb(2)));
    assert_eq!(c.capacity, ByteSize::gb(142));
    // The same drive with a 1000-slot PB: the first cleaning comes at the 801st write.
    let small = DmSmrConfig { pb_size: SizeSpec::Absolute(ByteSize(1000 * BLOCK_SIZE)), ..c.clone() };
    let mut d = small.build(&BuildContext::default()).unwrap();
    let band = 40 * 256; // 40 MiB in blocks
    let mut now = Nanos(0);
    for k in 0..801u64 {
        now += d.write(now, k * band, 1);
        assert_eq!(d.stats().rmws, u64::from(k == 800), "write {}", k + 1);
    }
}

#[derive(Clone, Debug)]
enum Op {
    Write(u64, u32),
    Read(u64, u32),
    Idle(u64),
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    /// The knob at its default (none) and at 1.0 give identical stats: today's behaviour.
    #[test]
    fn default_watermark_changes_nothing(
        mode in 0..4usize,
        pb in 1..12u64,
        band in 1..6u64,
        entries in prop::option::of(1..6u64),
        idle in any::<bool>(),
        ops in prop::collection::vec(prop_oneof![
            5 => (0..64u64, 1..6u32).prop_map(|(b, n)| Op::Write(b, n)),
            2 => (0..64u64, 1..6u32).prop_map(|(b, n)| Op::Read(b, n)),
            1 => (0..3000u64).prop_map(Op::Idle),
        ], 1..200),
    ) {
        let run = |high: Option<f64>| {
            let cfg = DmSmrConfig {
                pb_max_entries: entries,
                idle_window_ms: idle.then_some(1242.0),
                ..drive(pb, band, high, ALL_MODES[mode])
            };
            let mut d = cfg.build(&BuildContext::default()).unwrap();
            let mut now = Nanos(0);
            for op in &ops {
                match *op {
                    Op::Write(b, n) => now += d.write(now, b, n.min((64 - b) as u32)),
                    Op::Read(b, n) => now += d.read(now, b, n.min((64 - b) as u32)),
                    Op::Idle(ms) => {
                        let until = now + Nanos(ms * 1_000_000);
                        d.idle(now, until);
                        now = until;
                    }
                }
            }
            d.stats()
        };
        let base = run(None);
        prop_assert_eq!(base, run(Some(1.0)));
        prop_assert_eq!(base.stl.gc_ondemand + base.stl.gc_background, base.rmws);
        prop_assert_eq!(base.stl.gc_background, base.idle_rmws);
        prop_assert_eq!(base.stl.read_pieces.count(), base.read_ops);
    }
}
