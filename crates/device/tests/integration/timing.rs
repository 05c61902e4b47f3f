//! Timing invariants of the mechanism and the drives built on it, and plausibility of the
//! default profiles against the published figures docs/drive-models.md cites (datasheets,
//! DiskSim's seek curves) and SAC Table 3.

use crate::common::{fixed, smr};
use proptest::prelude::*;
use shingled_core::{ByteSize, Nanos, BLOCK_SIZE};
use shingled_device::{
    profile, profile_names, ssd_profile, ssd_profile_names, BuildContext, Drive, HddConfig, Mechanism,
    PbFlavour, PbFree,
};

fn mechanisms() -> Vec<(&'static str, Mechanism)> {
    vec![
        ("cmr-7200-500g", HddConfig::cmr_7200_500g().mechanism().unwrap()),
        ("archive-5900-5tb", HddConfig::archive_5900_5tb().mechanism().unwrap()),
        ("archive-5980-8tb", HddConfig::archive_5980_8tb().mechanism().unwrap()),
    ]
}

#[test]
fn seek_time_is_monotone_in_distance() {
    for (name, m) in mechanisms() {
        let max = m.cylinders();
        let mut prev = Nanos(0);
        let mut d = 0u64;
        while d <= max {
            let s = m.seek_time(d);
            assert!(s >= prev, "{name}: seek({d}) = {s} < {prev}");
            prev = s;
            d = if d < 1000 { d + 1 } else { d + d / 100 };
        }
    }
}

#[test]
fn random_reads_and_sequential_throughput_are_plausible() {
    for (name, mut m) in mechanisms() {
        let cap = m.capacity() / BLOCK_SIZE;
        let mut rng = shingled_core::SplitMix64::new(7);
        let mut now = Nanos(0);
        let n = 4000;
        for _ in 0..n {
            now += m.access(now, (rng.next_u64() % cap) * BLOCK_SIZE, BLOCK_SIZE, false);
        }
        let random_ms = now.as_millis_f64() / n as f64;
        assert!((12.0..=17.0).contains(&random_ms), "{name}: random 4 KiB read {random_ms:.2} ms");

        // 1 MiB sequential reads at the outer diameter.
        let start = now;
        let total = 256u64 << 20;
        let mut off = 0;
        while off < total {
            now += m.access(now, off, 1 << 20, false);
            off += 1 << 20;
        }
        let mb_s = total as f64 / (now - start).as_secs_f64() / 1e6;
        assert!((100.0..=190.0).contains(&mb_s), "{name}: sequential {mb_s:.1} MB/s");
        let random_mb_s = BLOCK_SIZE as f64 / (random_ms / 1e3) / 1e6;
        assert!(mb_s > 100.0 * random_mb_s);
    }
}

#[test]
fn outer_tracks_are_faster_than_inner() {
    for (name, mut m) in mechanisms() {
        let cap = m.capacity();
        let t_outer = m.transfer_time(0, 64 << 20);
        let t_inner = m.transfer_time(cap - (64 << 20), 64 << 20);
        assert!(t_inner.0 as f64 > 1.9 * t_outer.0 as f64, "{name}: {t_outer} vs {t_inner}");
        let a = m.access(Nanos(0), 0, 1 << 20, false);
        assert!(a > Nanos(0));
    }
}

proptest! {
    #[test]
    fn rotation_is_below_one_revolution(
        which in 0usize..3,
        accesses in prop::collection::vec((any::<u64>(), 1u64..512, any::<bool>(), 0u64..50_000_000), 1..60),
    ) {
        let (_, mut m) = mechanisms().swap_remove(which);
        let rev = m.revolution();
        let cap_blocks = m.capacity() / BLOCK_SIZE;
        let mut now = Nanos(0);
        for (off, blocks, w, gap) in accesses {
            now += Nanos(gap);
            let t = m.access_timed(now, (off % cap_blocks) * BLOCK_SIZE, blocks * BLOCK_SIZE, w);
            prop_assert!(t.rotation < rev, "rotation {} >= revolution {}", t.rotation, rev);
            prop_assert!(t.total > Nanos(0));
            prop_assert!(t.total >= t.queued + t.overhead);
            prop_assert_eq!(m.busy_until(), now + t.total);
            now += t.total;
        }
    }

    /// Every drive and SSD profile (the model index wraps around both lists, so a profile added
    /// to either is covered).
    #[test]
    fn every_cost_is_positive(
        model in 0usize..256,
        ops in prop::collection::vec((any::<bool>(), any::<u64>(), 1u32..64), 1..200),
    ) {
        let ctx = BuildContext { written_range: ByteSize::gb(4), accessed_range: ByteSize::gb(4) };
        let (drives, ssds) = (profile_names(), ssd_profile_names());
        let model = model % (drives.len() + ssds.len());
        let mut drive: Box<dyn Drive> = match drives.get(model) {
            Some(name) => profile(name).unwrap().build(&ctx).unwrap(),
            None => Box::new(ssd_profile(ssds[model - drives.len()]).unwrap().build().unwrap()),
        };
        // Confine the blocks to 4 GB so the PB fills and cleans on the DM-SMR profiles.
        let span = ByteSize::gb(4).blocks();
        let mut now = Nanos(0);
        for (w, b, n) in ops {
            let b = b % span;
            let t = if w { drive.write(now, b, n) } else { drive.read(now, b, n) };
            prop_assert!(t > Nanos(0), "{}: zero cost", drive.kind());
            now += t;
        }
        let s = drive.stats();
        prop_assert_eq!(s.read_time + s.write_time, now, "{}: time accounted", drive.kind());
        prop_assert!(s.clean_time <= s.write_time);
        prop_assert!(s.pb_time <= s.read_time + s.write_time);
    }
}

#[test]
fn sequential_throughput_beats_random_on_every_drive() {
    let ctx = BuildContext { written_range: ByteSize::gb(100), accessed_range: ByteSize::gb(100) };
    for name in ["cmr-7200-500g", "st5000as0011"] {
        let time = |sequential: bool| {
            let mut d = profile(name).unwrap().build(&ctx).unwrap();
            let mut rng = shingled_core::SplitMix64::new(3);
            let mut now = Nanos(0);
            for i in 0..2000u64 {
                let b =
                    if sequential { 1_000_000 + i * 16 } else { rng.next_u64() % ByteSize::gb(100).blocks() };
                now += d.read(now, b, 16);
            }
            now
        };
        let (seq, rnd) = (time(true), time(false));
        assert!(seq.0 * 10 < rnd.0, "{name}: sequential {seq} vs random {rnd}");
    }
}

#[test]
fn rmw_time_grows_with_band_size() {
    let mut last = Nanos(0);
    for band_blocks in [256u64, 1024, 4096, 8192] {
        let mut d = smr(1 << 22, 8, fixed(band_blocks), PbFlavour::AppendOnly, PbFree::Immediate);
        let mut now = Nanos(0);
        // Nine writes to distinct bands: the ninth cleans exactly one band.
        for i in 0..9u64 {
            now += d.write(now, i * 8192 + 17, 1);
        }
        let s = d.stats();
        assert_eq!(s.rmws, 1);
        assert!(s.clean_time > last, "band {band_blocks} blocks: {} <= {}", s.clean_time, last);
        last = s.clean_time;
    }
}

/// Fitted: regression check, not evidence. SAC Table 3: 4 KB random writes at queue depth 1
/// run at 3156 IOPS while the PB absorbs them; the archive mechanism's command overhead
/// (0.295 ms) was fitted to that figure, and PB appends stream, so this only checks the fit
/// still holds.
#[test]
fn pb_absorbs_small_writes_sac_table_3_regression() {
    let mut d = profile("sac-emulator").unwrap().build(&BuildContext::default()).unwrap();
    let mut rng = shingled_core::SplitMix64::new(11);
    let mut now = Nanos(0);
    d.write(now, 0, 1);
    now = Nanos(0) + d.stats().write_time;
    let n = 20_000;
    let start = now;
    for _ in 0..n {
        now += d.write(now, rng.next_u64() % d.capacity_blocks(), 1);
    }
    let iops = n as f64 / (now - start).as_secs_f64();
    assert!((2800.0..=3500.0).contains(&iops), "{iops:.0} IOPS");
    assert_eq!(d.stats().rmws, 0);
}

/// The Cheetah 15K.5 mechanism against its datasheet figures (the sources are in
/// `HddConfig::cheetah_15k5`'s doc): random 4 KiB reads ≈ 0.2 overhead + 3.5 seek + 2.0
/// rotation ≈ 5.7 ms; sustained 125 MB/s at the outer diameter and 73 MB/s at the inner
/// (ours: 130 and 78, the media rates less the head and cylinder switches).
#[test]
fn cheetah_15k5_matches_its_datasheet() {
    let mut m = HddConfig::cheetah_15k5().mechanism().unwrap();
    assert_eq!(m.revolution(), Nanos(4_000_000));
    let cap = m.capacity() / BLOCK_SIZE;
    let mut rng = shingled_core::SplitMix64::new(3);
    let mut now = Nanos(0);
    let n = 4000;
    for _ in 0..n {
        now += m.access(now, (rng.next_u64() % cap) * BLOCK_SIZE, BLOCK_SIZE, false);
    }
    let random_ms = now.as_millis_f64() / n as f64;
    assert!((5.2..=6.2).contains(&random_ms), "random 4 KiB read {random_ms:.2} ms");
    let mut rate = |at: u64| {
        let start = now;
        let total = 64u64 << 20;
        let mut off = at;
        while off < at + total {
            now += m.access(now, off, 1 << 20, false);
            off += 1 << 20;
        }
        total as f64 / (now - start).as_secs_f64() / 1e6
    };
    let outer = rate(0);
    let cap_bytes = HddConfig::cheetah_15k5().capacity.0;
    let inner = rate(cap_bytes - (65 << 20));
    assert!((120.0..=135.0).contains(&outer), "outer {outer:.1} MB/s");
    assert!((70.0..=82.0).contains(&inner), "inner {inner:.1} MB/s");
    // The outer media rate is 1200 sectors per 4 ms revolution: 600 kB within the first track
    // take 600,000 / 153.6 MB/s.
    let t = m.transfer_time(0, 600_000).0 as f64;
    assert!((t / (600_000.0 / 153.6e6 * 1e9) - 1.0).abs() < 1e-3, "{t}");
}
