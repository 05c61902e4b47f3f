//! Curves: rate 1 is the full simulation, LRU's exact curve is the full LRU simulation, sampled
//! points scale back, and bad options are errors.

use shingled_core::{BandConfig, ByteSize, SizeSpec};
use shingled_device::{DmSmrConfig, DriveConfig};
use shingled_sim::curve::{curve, CurveOptions, Method, Rate, Sampling, Unit};
use shingled_sim::stack::StackDistances;
use shingled_sim::{measure, run, sizing, Mode, SimConfig, SimError};
use std::path::PathBuf;
use std::sync::atomic::AtomicBool;

fn golden(name: &str) -> String {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/data/golden")
        .join(name)
        .to_string_lossy()
        .into()
}

/// A small generated trace above a 64 GiB DM-SMR drive with 1 MiB bands, so that a small trace
/// touches a few hundred bands.
fn synth(mode: Mode) -> SimConfig {
    let mut cfg = SimConfig::default();
    cfg.trace.path = "synth:wdev,scale=0.02".into();
    cfg.mode = mode;
    cfg.drive = DriveConfig::DmSmr(DmSmrConfig {
        capacity: ByteSize::gib(64),
        bands: BandConfig::UniformRandom { min: ByteSize::kib(512), max: ByteSize::kib(1536), seed: 1 },
        ..DmSmrConfig::default()
    });
    cfg
}

/// The golden tests' tiny trace and configuration (16 KiB bands, 4-block PB).
fn tiny() -> SimConfig {
    let mut cfg = SimConfig::from_toml(&std::fs::read_to_string(golden("tiny.toml")).unwrap()).unwrap();
    cfg.trace.path = golden("tiny.csv");
    cfg
}

fn never() -> AtomicBool {
    AtomicBool::new(false)
}

#[test]
fn rate_one_reproduces_the_full_simulation_of_every_policy_exactly() {
    let base = synth(Mode::ReadWrite);
    let policies: Vec<String> = shingled_cache::PolicyConfig::NAMES.iter().map(|s| s.to_string()).collect();
    let sizes = vec![SizeSpec::Fraction(0.01), SizeSpec::Fraction(0.04)];
    let o = CurveOptions {
        policies: policies.clone(),
        cache_sizes: sizes.clone(),
        rate: Rate::Fixed(1.0),
        jobs: 2,
        ..Default::default()
    };
    let c = curve(&base, &o, &|_| {}, &never()).unwrap();
    assert_eq!(c.points.len(), policies.len() * sizes.len());
    let stats = measure(&base.trace, &base.drive.bands_or_default()).unwrap();
    for p in &c.points {
        assert_eq!(p.method, Method::Full);
        let mut cfg = base.clone();
        cfg.cache = Some(shingled_sim::CacheConfig {
            size: p.cache_size.parse().unwrap(),
            policy: p.policy.parse().unwrap(),
            ..Default::default()
        });
        let full = run(&cfg, &stats, &mut |_| {}).unwrap().total;
        let k = &full.counters;
        let m = &p.metrics;
        let what = format!("{} at {}", p.policy, p.cache_size);
        assert_eq!(m.hit_ratio, full.hit_ratio, "{what}");
        assert_eq!(m.write_amplification, full.write_amplification, "{what}");
        assert_eq!(m.rmws, Some(k.drive.rmws as f64), "{what}");
        assert_eq!(m.pb_writes, Some(k.drive.pb_writes as f64), "{what}");
        assert_eq!(m.dirty_evictions, Some(k.dirty_evictions as f64), "{what}");
        assert_eq!(m.requests, Some(k.requests as f64), "{what}");
        assert_eq!(m.total_time_s, Some(full.total_time_s), "{what}");
    }
}

#[test]
fn the_exact_lru_curve_equals_the_full_lru_simulation_at_every_size() {
    for (base, sizes) in [
        (synth(Mode::ReadWrite), vec!["0.1%", "0.5%", "2%", "10%", "50%"]),
        (synth(Mode::WriteOnly), vec!["0.2%", "1%", "5%"]),
        (tiny(), vec!["1blocks", "3blocks", "6blocks", "20blocks"]),
    ] {
        let stats = measure(&base.trace, &base.drive.bands_or_default()).unwrap();
        let mut reader = shingled_sim::open_trace(&base.trace).unwrap();
        let exact = StackDistances::read(base.mode, &mut reader, u64::MAX).unwrap();
        for size in sizes {
            let mut cfg = base.clone();
            cfg.cache.as_mut().unwrap().size = size.parse().unwrap();
            cfg.cache.as_mut().unwrap().policy = "lru".parse().unwrap();
            let blocks = sizing(&cfg, &stats).unwrap().cache_blocks;
            let full = run(&cfg, &stats, &mut |_| {}).unwrap().total;
            let h = exact.hits(blocks);
            let what = format!("{} {} at {size}", base.trace.path, base.mode.name());
            assert_eq!(h.read_hits, full.counters.read_hits, "{what}");
            assert_eq!(h.write_hits, full.counters.write_hits, "{what}");
            assert_eq!(h.hit_ratio(), full.hit_ratio, "{what}");
        }
    }
}

#[test]
fn a_curve_reports_lru_exactly_beside_its_sampled_points_and_validates() {
    let base = synth(Mode::ReadWrite);
    let o = CurveOptions {
        policies: vec!["lru".into(), "most".into()],
        cache_sizes: vec![SizeSpec::Fraction(0.01), SizeSpec::Fraction(0.05)],
        rate: Rate::Fixed(0.25),
        validate: 4,
        jobs: 2,
        ..Default::default()
    };
    let c = curve(&base, &o, &|_| {}, &never()).unwrap();
    assert_eq!(c.rate, 0.25);
    assert!(
        c.units_sampled > 0 && c.units_sampled < c.units_touched,
        "{} of {}",
        c.units_sampled,
        c.units_touched
    );
    // Every point validated (4 of 4), exact hit ratio on LRU points only, equal to the full run.
    for p in &c.points {
        assert_eq!(p.method, Method::Sampled);
        let full = p.full.as_ref().expect("validated");
        assert_eq!(p.exact_hit_ratio.is_some(), p.policy == "lru");
        if let Some(x) = p.exact_hit_ratio {
            assert_eq!(Some(x), full.hit_ratio);
        }
        // Scaled-back counts are of the full trace's order (a quarter of the bands × 4).
        let (s, f) = (p.metrics.requests.unwrap(), full.requests.unwrap());
        assert!(s > 0.5 * f && s < 2.0 * f, "{} requests {s} vs {f}", p.policy);
    }
    let hit = c.errors.iter().find(|e| e.metric == "hit_ratio").unwrap();
    assert_eq!(hit.points, 4);
    assert!(hit.mean_abs.unwrap() < 10.0, "{:?}", hit);
    assert!(c.full_cost_s.is_some());
}

#[test]
fn zone_units_and_several_samples_run() {
    let base = synth(Mode::WriteOnly);
    let o = CurveOptions {
        policies: vec!["sac".into(), "pore".into()],
        cache_sizes: vec![SizeSpec::Fraction(0.02)],
        pb_sizes: vec![SizeSpec::Fraction(1.0 / 512.0), SizeSpec::Fraction(1.0 / 128.0)],
        rate: Rate::Fixed(0.5),
        samples: 2,
        unit: Unit::Zone(ByteSize::mib(2)),
        sampling: Sampling::Hash,
        jobs: 2,
        ..Default::default()
    };
    let c = curve(&base, &o, &|_| {}, &never()).unwrap();
    assert_eq!(c.points.len(), 4);
    assert_eq!((c.samples, c.sampling), (2, Sampling::Hash));
    for p in &c.points {
        assert!(p.metrics.write_amplification.is_some(), "{} cleans its PB", p.policy);
        assert!(p.exact_hit_ratio.is_none());
    }
    // PB sizes resolve against the full trace's written range: 1/128 is four times 1/512.
    let (small, large) = (c.points[0].pb_blocks.unwrap(), c.points[1].pb_blocks.unwrap());
    assert!((4 * small).abs_diff(large) <= 4, "{small} {large}");
}

#[test]
fn bad_options_are_errors_naming_the_option() {
    let base = tiny();
    let err = |o: CurveOptions| match curve(&base, &o, &|_| {}, &never()) {
        Err(SimError::Config { field, reason }) => format!("{field}: {reason}"),
        Err(e) => format!("other error: {e}"),
        Ok(_) => "accepted".into(),
    };
    assert!(err(CurveOptions { rate: Rate::Fixed(0.0), ..Default::default() }).starts_with("curve.rate"));
    assert!(err(CurveOptions { rate: Rate::Fixed(1.5), ..Default::default() }).starts_with("curve.rate"));
    assert!(err(CurveOptions { policies: vec![], ..Default::default() }).starts_with("curve.policies"));
    assert!(
        err(CurveOptions { policies: vec!["nope".into()], ..Default::default() }).contains("unknown policy")
    );
    assert!(err(CurveOptions { samples: 0, ..Default::default() }).starts_with("curve.samples"));
    let mut open = tiny();
    open.replay = shingled_sim::Replay::Open;
    let e = curve(&open, &CurveOptions::default(), &|_| {}, &never()).unwrap_err().to_string();
    assert!(e.contains("closed-loop"), "{e}");
    let mut cmr = tiny();
    cmr.drive =
        shingled_device::DriveConfig::from_profile("cmr").unwrap_or_else(|_| cmr.compare.cmr_drive.clone());
    let e = curve(
        &cmr,
        &CurveOptions { pb_sizes: vec![SizeSpec::Fraction(0.01)], ..Default::default() },
        &|_| {},
        &never(),
    )
    .unwrap_err()
    .to_string();
    assert!(e.contains("DM-SMR"), "{e}");
}

#[test]
fn a_grid_split_by_policy_and_merged_is_the_whole_grid() {
    let base = synth(Mode::ReadWrite);
    let whole = CurveOptions {
        policies: vec!["lru".into(), "sac".into()],
        cache_sizes: vec![SizeSpec::Fraction(0.01), SizeSpec::Fraction(0.03), SizeSpec::Fraction(0.05)],
        rate: Rate::Fixed(0.3),
        validate: 3,
        jobs: 2,
        ..Default::default()
    };
    let c = curve(&base, &whole, &|_| {}, &never()).unwrap();
    // Validated points 0, 3, 5 of 6 (lru 0; sac 3, 5 = its 0, 2): split per policy as the Python
    // Ray backend splits a grid.
    assert_eq!(shingled_sim::curve::spread(6, 3), vec![0, 3, 5]);
    let part = |p: &str, points: Vec<usize>| {
        let o =
            CurveOptions { policies: vec![p.into()], validate: 0, validate_points: points, ..whole.clone() };
        curve(&base, &o, &|_| {}, &never()).unwrap()
    };
    let merged =
        shingled_sim::CurveReport::merge(vec![part("lru", vec![0]), part("sac", vec![0, 2])]).unwrap();
    assert_eq!(merged.points.len(), c.points.len());
    for (a, b) in merged.points.iter().zip(&c.points) {
        assert_eq!((&a.policy, &a.cache_size), (&b.policy, &b.cache_size));
        assert_eq!(a.metrics, b.metrics, "same samples, same mini-simulations");
        assert_eq!(a.full, b.full);
        assert_eq!(a.exact_hit_ratio, b.exact_hit_ratio);
    }
    for (a, b) in merged.errors.iter().zip(&c.errors) {
        assert_eq!((a.points, a.mean_abs), (b.points, b.mean_abs), "{}", a.metric);
    }
    let e = curve(&base, &CurveOptions { validate_points: vec![9], ..whole }, &|_| {}, &never()).unwrap_err();
    assert!(e.to_string().contains("beyond the grid"), "{e}");
}
