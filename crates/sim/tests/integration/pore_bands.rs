//! PORE with band zones (`pore:zones=bands`, not the paper's PORE: our extension) through the
//! simulator: on uniform bands it counts exactly as zones of the band size; on unequal bands it
//! runs; without a band map it is refused naming the field.

use shingled_core::{BandConfig, ByteSize, SizeSpec};
use shingled_device::{DriveConfig, HddConfig};
use shingled_sim::{Mode, SimConfig};
use std::path::PathBuf;

fn data(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/data/golden").join(name)
}

/// The golden policy table's set-up: `small.csv` (400 requests over 1 MiB), 16 KiB bands, an
/// 8-block persistent buffer.
fn base() -> SimConfig {
    let mut cfg = SimConfig::from_toml(&std::fs::read_to_string(data("tiny.toml")).unwrap()).unwrap();
    cfg.trace.path = data("small.csv").to_string_lossy().into_owned();
    if let DriveConfig::DmSmr(d) = &mut cfg.drive {
        d.pb_size = SizeSpec::Absolute(ByteSize(8 * 4096));
    }
    cfg
}

fn run(base: &SimConfig, policy: &str, mode: Mode, blocks: u64) -> shingled_sim::RunReport {
    let mut cfg = shingled_sim::scheme_config(base, policy).unwrap();
    cfg.mode = mode;
    cfg.cache.as_mut().unwrap().size = SizeSpec::Absolute(ByteSize(blocks * 4096));
    shingled_sim::simulate(&cfg).unwrap_or_else(|e| panic!("{policy}: {e}"))
}

#[test]
fn band_zones_on_uniform_bands_count_as_zones_of_the_band_size() {
    let base = base();
    for mode in [Mode::ReadWrite, Mode::WriteOnly] {
        for blocks in [8u64, 24, 64] {
            let sized = run(&base, "pore:zone_size=16KiB", mode, blocks);
            let banded = run(&base, "pore:zones=bands", mode, blocks);
            assert_eq!(banded.total.counters, sized.total.counters, "{mode:?} {blocks} blocks");
            assert!(sized.total.counters.drive.rmws > 0);
        }
    }
}

#[test]
fn band_zones_on_unequal_bands_run_and_need_a_band_map() {
    let mut base = base();
    if let DriveConfig::DmSmr(d) = &mut base.drive {
        d.bands = BandConfig::UniformRandom { min: ByteSize(8 << 10), max: ByteSize(40 << 10), seed: 3 };
    }
    let r = run(&base, "pore:zones=bands", Mode::WriteOnly, 24);
    let c = &r.total.counters;
    assert_eq!(c.requests, c.write_requests);
    assert!(c.requests > 0 && c.drive.rmws > 0, "{c:?}");

    base.drive = DriveConfig::Cmr(HddConfig::default());
    let mut cfg = shingled_sim::scheme_config(&base, "pore:zones=bands").unwrap();
    cfg.cache.as_mut().unwrap().size = SizeSpec::Absolute(ByteSize(24 * 4096));
    let e = shingled_sim::simulate(&cfg).expect_err("a CMR drive has no band map").to_string();
    assert!(e.contains("zones") && e.contains("band map"), "{e}");
}
