//! The real data path describes the simulator's numbers: a trace replayed through a
//! `CachedDevice` over modelled devices (real bytes, every read checked) gives the same hits,
//! evictions, write-backs, drive commands, RMWs and modelled SSD/drive time as
//! `shingled_sim::run` on the same configuration — every policy and mode, on the committed small
//! trace, on synthetic profiles, and on the real sample traces when they are present.

use shingled_blockcache::replay::{differences, replay, ReplayOptions, ReplayReport};
use shingled_core::{ByteSize, SizeSpec};
use shingled_sim::{Mode, SimConfig};
use std::path::{Path, PathBuf};

fn golden(name: &str) -> String {
    format!("{}/../../tests/data/golden/{name}", env!("CARGO_MANIFEST_DIR"))
}

/// The real sample traces' folder (`SHINGLED_SHARED_TRACES`, else `../shared/traces` beside the
/// workspace), or `None` after saying why nothing is checked. The folder is optional and kept
/// out of the repository (licences): small public real traces (libCacheSim's CloudPhysics sample,
/// MSR Cambridge `hm_0`'s first 1,000 records, MQSim's TPC-C and WebSearch excerpts). Without it
/// these tests skip their checks and pass.
fn shared(file: &str) -> Option<PathBuf> {
    if let Some(dir) = std::env::var_os("SHINGLED_SHARED_TRACES").map(PathBuf::from) {
        let p = dir.join(file);
        assert!(p.is_file(), "SHINGLED_SHARED_TRACES={} lacks {}", dir.display(), p.display());
        return Some(p);
    }
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/traces").join(file);
    if p.is_file() {
        Some(p)
    } else {
        eprintln!("skipped: {} not found (set SHINGLED_SHARED_TRACES)", p.display());
        None
    }
}

/// The policy spec for a configuration whose bands are `band` (PORE's zones and SAC's bands
/// follow the drive's).
fn spec(name: &str, band: Option<&str>) -> String {
    match (name, band) {
        ("pore", Some(b)) => format!("pore:zone_size={b}"),
        ("sac" | "most-cdc", Some(b)) => format!("{name}:band_size={b}"),
        _ => name.to_string(),
    }
}

/// Runs the simulator and the data path on `cfg`: with metadata off the clock every counter
/// and modelled time is the simulator's; with metadata on it (the default) every count still
/// is, and each modelled time is within 1% (the metadata writes shift the disk's rotational
/// position). Panics with the differences.
fn same(cfg: &SimConfig, ctx: &str) -> ReplayReport {
    let stats = shingled_sim::measure(&cfg.trace, &cfg.drive.bands_or_default()).unwrap();
    let sim = shingled_sim::run(cfg, &stats, &mut |_| {}).unwrap();
    let apart = ReplayOptions { metadata_on_clock: false, ..ReplayOptions::default() };
    let r = replay(cfg, &stats, &apart, &mut |_| {}).unwrap_or_else(|e| panic!("{ctx}: {e}"));
    let d = differences(&sim, &r.run);
    assert!(d.is_empty(), "{ctx}: the data path differs from the simulator: {d:#?}");
    let on_clock = ReplayOptions { final_check: false, ..ReplayOptions::default() };
    let r2 = replay(cfg, &stats, &on_clock, &mut |_| {}).unwrap_or_else(|e| panic!("{ctx}: {e}"));
    let d = differences(&sim, &r2.run);
    assert!(d.iter().all(|x| x.time), "{ctx}: a count differs from the simulator's: {d:#?}");
    let (t_sim, t_dp) = (sim.total.total_time_s, r2.run.total.total_time_s);
    assert!((t_sim - t_dp).abs() <= 0.01 * t_sim, "{ctx}: total time {t_dp} s vs the simulator's {t_sim} s");
    let fc = r.data_path.final_check.as_ref().unwrap();
    assert_eq!(fc.read_through_cache, fc.written_blocks, "{ctx}");
    assert_eq!(fc.read_from_backing, fc.written_blocks, "{ctx}");
    // (reading back through a read-allocating cache may have evicted some dirty blocks first)
    assert!(fc.cleaned <= r.run.dirty_left, "{ctx}: the cleaner wrote back more than the dirty blocks left");
    r
}

/// Every policy and mode, and no cache, with `cfg` as the base.
fn every_policy_and_mode(base: &SimConfig, band: Option<&str>, sizes: &[SizeSpec], what: &str) -> (u64, u64) {
    let (mut runs, mut rmws) = (0, 0);
    for (mode, _) in Mode::ALL {
        let mut none = base.clone();
        none.cache = None;
        none.mode = mode;
        same(&none, &format!("{what} no cache {}", mode.name()));
    }
    for name in crate::common::online_policies() {
        for (mode, _) in Mode::ALL {
            for size in sizes {
                let mut cfg = shingled_sim::scheme_config(base, &spec(name, band)).unwrap();
                cfg.mode = mode;
                cfg.cache.as_mut().unwrap().size = *size;
                let r = same(&cfg, &format!("{what} {name} {} {size}", mode.name()));
                assert!(
                    r.data_path.verified_blocks > 0 || mode == Mode::WriteOnly,
                    "{what}: no read checked"
                );
                rmws += r.run.total.counters.drive.rmws;
                runs += 1;
            }
        }
    }
    (runs, rmws)
}

#[test]
fn committed_trace_every_policy_and_mode() {
    let text = std::fs::read_to_string(golden("tiny.toml")).unwrap();
    let mut base = SimConfig::from_toml(&text).unwrap();
    base.trace.path = golden("small.csv");
    if let shingled_device::DriveConfig::DmSmr(d) = &mut base.drive {
        d.pb_size = SizeSpec::Absolute(ByteSize(8 * 4096));
    }
    let sizes = [SizeSpec::Absolute(ByteSize(8 * 4096)), SizeSpec::Absolute(ByteSize(24 * 4096))];
    let (runs, rmws) = every_policy_and_mode(&base, Some("16KiB"), &sizes, "small.csv");
    assert_eq!(runs, crate::common::online_policies().len() as u64 * 8);
    assert!(rmws > 0, "the drive did no RMW: nothing was compared");
}

#[test]
fn block_io_unit_and_warmup_windows_agree_too() {
    let text = std::fs::read_to_string(golden("tiny.toml")).unwrap();
    let mut cfg = SimConfig::from_toml(&text).unwrap();
    cfg.trace.path = golden("small.csv");
    cfg.io_unit = shingled_sim::IoUnit::Block;
    cfg.warmup = shingled_sim::Warmup::Fraction(0.3);
    let stats = shingled_sim::measure(&cfg.trace, &cfg.drive.bands_or_default()).unwrap();
    let sim = shingled_sim::run(&cfg, &stats, &mut |_| {}).unwrap();
    let r = same(&cfg, "block unit");
    let (a, b) = (sim.after_warmup.unwrap(), r.run.after_warmup.unwrap());
    assert_eq!(a.counters.read_hits, b.counters.read_hits);
    assert_eq!(a.counters.drive, b.counters.drive);
    assert_eq!(a.total_time_s, b.total_time_s);
}

#[test]
fn synthetic_profiles_on_the_paper_drive() {
    // The PORE set-up's DM-SMR drive (default bands, PB as a share of the written range), small
    // synthetic volumes: every policy and mode on wdev, the papers' main ones on hm.
    let mut base = SimConfig::default();
    base.trace.path = "synth:wdev,scale=0.005".to_string();
    let (runs, rmws) = every_policy_and_mode(&base, None, &[SizeSpec::Fraction(0.02)], "wdev");
    assert_eq!(runs, crate::common::online_policies().len() as u64 * 4);
    assert!(rmws > 0, "the drive did no RMW: nothing was compared");
    base.trace.path = "synth:hm,scale=0.004".to_string();
    for &name in ["lru", "pore", "sac"].iter() {
        for (mode, _) in [Mode::ALL[0], Mode::ALL[1]] {
            let mut cfg = shingled_sim::scheme_config(&base, name).unwrap();
            cfg.mode = mode;
            same(&cfg, &format!("hm {name} {}", mode.name()));
        }
    }
}

/// The real sample traces: every policy and mode (and no cache) on the three small ones; the
/// CloudPhysics sample (1.1 M page requests) in the ignored long run.
#[test]
fn real_traces_every_policy_and_mode() {
    for file in ["msr-hm_0-head1000.csv", "mqsim-tpcc-small.trace", "mqsim-wsrch-small.trace"] {
        let Some(p) = shared(file) else { continue };
        let mut base = SimConfig::default();
        base.trace.path = p.to_string_lossy().into_owned();
        let (runs, _) = every_policy_and_mode(&base, None, &[SizeSpec::Fraction(0.02)], file);
        assert_eq!(runs, crate::common::online_policies().len() as u64 * 4);
    }
}

#[test]
#[ignore = "long: the CloudPhysics sample, every policy and mode (make check-long)"]
fn cloudphysics_every_policy_and_mode() {
    let Some(p) = shared("cloudphysics-libcachesim-sample.vscsi") else { return };
    let mut base = SimConfig::default();
    base.trace.path = p.to_string_lossy().into_owned();
    every_policy_and_mode(&base, None, &[SizeSpec::Fraction(0.05)], "cloudphysics");
}

/// The offline policies need the trace's future, which the data path has not: it refuses them
/// (naming the policy) rather than run them blind, and so does the serving-cost check every
/// `cache create`/`open` makes.
#[test]
fn offline_policies_are_refused() {
    let text = std::fs::read_to_string(golden("tiny.toml")).unwrap();
    let mut base = SimConfig::from_toml(&text).unwrap();
    base.trace.path = golden("tiny.csv");
    let stats = shingled_sim::measure(&base.trace, &base.drive.bands_or_default()).unwrap();
    for name in ["belady", "band-min"] {
        assert!(shingled_sim::is_offline(name));
        let cfg = shingled_sim::scheme_config(&base, name).unwrap();
        let e = replay(&cfg, &stats, &ReplayOptions::default(), &mut |_| {}).unwrap_err().to_string();
        assert!(e.contains(name) && e.contains("offline"), "{e}");
        let setup = shingled_blockcache::CacheSetup { policy: name.parse().unwrap(), ..Default::default() };
        let e =
            shingled_blockcache::memory::serving_cost(&setup, 1 << 16, 1024, 1000).unwrap_err().to_string();
        assert!(e.contains(name) && e.contains("offline"), "{e}");
    }
}
