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
    // Offline policies need the whole trace's future: curves refuse them (tested below).
    let policies: Vec<String> = shingled_cache::PolicyConfig::NAMES
        .iter()
        .filter(|s| !shingled_sim::is_offline(s))
        .map(|s| s.to_string())
        .collect();
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

/// A curve form of an experiment at rate 1 is its full-run twin at every shared point: the same
/// counters (so every column of the table), from the same plan.
#[test]
fn a_curve_experiment_at_rate_one_is_the_full_run_grid_at_the_shared_points() {
    use shingled_sim::experiments::{plan, run_curve_experiment, run_experiment, ExperimentOptions};
    for (curve_form, full_form) in
        [("pore-ssd-size-curve", "pore-ssd-size"), ("sac-write-only-curve", "sac-write-only")]
    {
        let opts = ExperimentOptions {
            base: SimConfig::default(),
            traces: vec!["synth:wdev,scale=0.02".into()],
            mode: None,
            paper_setup: true,
        };
        let mut curve_plan = plan(curve_form, &opts).unwrap();
        curve_plan.curve.as_mut().expect("a curve form").rate = Rate::Fixed(1.0);
        let curves = run_curve_experiment(curve_plan, 2, &|_| {}, &never()).unwrap();
        let full = run_experiment(plan(full_form, &opts).unwrap(), 2, &|_| {}).unwrap();
        assert_eq!(curves.curves.len(), 1);
        let c = &curves.curves[0];
        assert_eq!((c.rate, c.points.len()), (1.0, curves.runs.len()));
        let mut shared = 0;
        for (cell, r) in full.experiment.cells.iter().zip(&full.runs) {
            let i = curves.experiment.cells.iter().position(|c| c.label == cell.label).unwrap();
            let ours = &curves.runs[i];
            assert_eq!(ours.total.counters, r.total.counters, "{curve_form} {}", cell.label);
            assert_eq!(ours.total.total_time_s, r.total.total_time_s, "{curve_form} {}", cell.label);
            assert_eq!(ours.total.write_amplification, r.total.write_amplification);
            // The after-warm-up window too (the default warm-up: the cache first full).
            let after = |r: &shingled_sim::RunReport| r.after_warmup.as_ref().map(|m| m.counters.clone());
            assert!(after(r).is_some(), "{}", cell.label);
            assert_eq!(after(ours), after(r), "{curve_form} {} after warm-up", cell.label);
            assert_eq!(c.points[i].method, Method::Full);
            // LRU's exact hit ratio beside its point, equal to the full run's.
            if cell.label.starts_with("lru ") {
                assert_eq!(c.points[i].exact_hit_ratio, r.total.hit_ratio, "{}", cell.label);
                assert_eq!(c.points[i].policy, "lru");
            }
            shared += 1;
        }
        assert_eq!(shared, full.runs.len());
        assert!(curves.runs.len() > full.runs.len(), "the curve form has more points");
        // The paper's figures are checked on the curve form as on its twin.
        assert_eq!(curves.paper.len(), full.paper.len(), "{curve_form}");
    }
}

/// A sampled curve experiment scales each point back to the full trace and validates.
#[test]
fn a_sampled_curve_experiment_validates_against_full_runs() {
    use shingled_sim::experiments::{plan, run_curve_experiment, ExperimentOptions};
    let opts = ExperimentOptions {
        base: SimConfig::default(),
        traces: vec!["synth:prn,scale=0.1".into()],
        mode: None,
        paper_setup: true,
    };
    let mut p = plan("sac-write-only-curve", &opts).unwrap();
    let o = p.curve.as_mut().unwrap();
    o.rate = Rate::Fixed(0.25);
    o.validate = 2;
    let r = run_curve_experiment(p, 2, &|_| {}, &never()).unwrap();
    let c = &r.curves[0];
    assert_eq!(c.rate, 0.25);
    assert!(c.units_sampled < c.units_touched);
    let validated: Vec<usize> = (0..c.points.len()).filter(|&i| c.points[i].full.is_some()).collect();
    assert_eq!(validated.len(), 2);
    for i in validated {
        let (run, full) = (&r.runs[i], c.points[i].full.as_ref().unwrap());
        // The run holds the sampled estimate (counts rounded), not the full run's figures.
        let (ours, est) = (run.total.hit_ratio.unwrap(), c.points[i].metrics.hit_ratio.unwrap());
        assert!((ours - est).abs() < 1e-5, "{ours} vs {est}");
        assert_ne!(Some(ours), full.hit_ratio);
        let (s, f) = (run.total.counters.requests as f64, full.requests.unwrap());
        assert!(s > 0.5 * f && s < 2.0 * f, "requests {s} vs {f}");
    }
    assert!(c.errors.iter().all(|e| e.points == 2));
}

/// With `after_warmup`, every point and the validated runs cover the window after the base's
/// warm-up: at rate 1 a point is `sim`'s after-warmup window, and LRU's exact curve counts from
/// the same request.
#[test]
fn a_curve_after_warm_up_is_the_after_warmup_window_of_the_full_run() {
    for (mode, warmup) in [
        (Mode::ReadWrite, shingled_sim::Warmup::Requests(3000)),
        (Mode::WriteOnly, shingled_sim::Warmup::Fraction(0.3)),
        (Mode::WriteOnly, shingled_sim::Warmup::CacheFull),
    ] {
        let mut base = synth(mode);
        base.warmup = warmup;
        let o = CurveOptions {
            policies: vec!["lru".into(), "sac".into()],
            cache_sizes: vec![SizeSpec::Fraction(0.01), SizeSpec::Fraction(0.04)],
            rate: Rate::Fixed(1.0),
            validate: 1,
            after_warmup: true,
            jobs: 2,
            ..Default::default()
        };
        let c = curve(&base, &o, &|_| {}, &never()).unwrap();
        assert!(c.window.starts_with("after-warmup"), "{}", c.window);
        let stats = measure(&base.trace, &base.drive.bands_or_default()).unwrap();
        for p in &c.points {
            let mut cfg = base.clone();
            cfg.cache = Some(shingled_sim::CacheConfig {
                size: p.cache_size.parse().unwrap(),
                policy: p.policy.parse().unwrap(),
                ..Default::default()
            });
            let r = run(&cfg, &stats, &mut |_| {}).unwrap();
            let after = r.after_warmup.expect("the warm-up ends");
            let what = format!("{} at {} after {warmup}", p.policy, p.cache_size);
            assert_ne!(after.counters, r.total.counters, "{what}: a window shorter than the run");
            assert_eq!(p.metrics.hit_ratio, after.hit_ratio, "{what}");
            assert_eq!(p.metrics.rmws, Some(after.counters.drive.rmws as f64), "{what}");
            assert_eq!(p.metrics.total_time_s, Some(after.total_time_s), "{what}");
            if let Some(full) = &p.full {
                assert_eq!(full.hit_ratio, after.hit_ratio, "{what}: the validated run's window");
            }
            // LRU's exact curve over the same window (no single one after a cache-full warm-up).
            match (p.policy.as_str(), warmup) {
                ("lru", shingled_sim::Warmup::CacheFull) => assert_eq!(p.exact_hit_ratio, None, "{what}"),
                ("lru", _) => assert_eq!(p.exact_hit_ratio, after.hit_ratio, "{what}"),
                _ => {}
            }
        }
    }
    // `--warmup none`: no after-warm-up window, so the whole replay.
    let mut base = synth(Mode::ReadWrite);
    base.warmup = shingled_sim::Warmup::None;
    let o = CurveOptions {
        cache_sizes: vec![SizeSpec::Fraction(0.01)],
        rate: Rate::Fixed(1.0),
        after_warmup: true,
        ..Default::default()
    };
    let c = curve(&base, &o, &|_| {}, &never()).unwrap();
    assert_eq!(c.window, "total");
    assert!(
        c.points[0].metrics.hit_ratio.is_some()
            && c.points[0].exact_hit_ratio == c.points[0].metrics.hit_ratio
    );
}

/// At rate 1 the points stream the trace (no sample in memory), and a request limit cuts each
/// replay where the full run cuts it.
#[test]
fn rate_one_streams_the_trace_and_honours_its_limit() {
    let mut base = synth(Mode::WriteOnly);
    base.trace.limit = Some(4000);
    let o = CurveOptions {
        policies: vec!["lru".into(), "most".into()],
        cache_sizes: vec![SizeSpec::Fraction(0.02)],
        rate: Rate::Fixed(1.0),
        ..Default::default()
    };
    let c = curve(&base, &o, &|_| {}, &never()).unwrap();
    let stats = measure(&base.trace, &base.drive.bands_or_default()).unwrap();
    assert_eq!(stats.requests, 4000);
    assert_eq!((c.units_sampled, c.blocks_sampled), (c.units_touched, c.blocks_full));
    for p in &c.points {
        let mut cfg = base.clone();
        cfg.cache = Some(shingled_sim::CacheConfig {
            size: p.cache_size.parse().unwrap(),
            policy: p.policy.parse().unwrap(),
            ..Default::default()
        });
        let full = run(&cfg, &stats, &mut |_| {}).unwrap().total;
        assert_eq!(p.metrics.requests, Some(full.counters.requests as f64), "{}", p.policy);
        assert_eq!(p.metrics.rmws, Some(full.counters.drive.rmws as f64), "{}", p.policy);
        assert_eq!(p.metrics.hit_ratio, full.hit_ratio, "{}", p.policy);
    }
}

/// Averaging several stratified samples averages different samples: the second is another
/// balanced offset, not the first again (which seeds alone would mostly give).
#[test]
fn several_stratified_samples_are_different_samples() {
    let base = synth(Mode::WriteOnly);
    let at = |samples: u32| {
        let o = CurveOptions {
            policies: vec!["lru".into()],
            cache_sizes: vec![SizeSpec::Fraction(0.02)],
            rate: Rate::Fixed(0.2),
            samples,
            jobs: 2,
            ..Default::default()
        };
        curve(&base, &o, &|_| {}, &never()).unwrap()
    };
    let (one, two) = (at(1), at(2));
    assert_eq!((one.samples, two.samples), (1, 2));
    // The first sample is the same; the average differs, so the second sample does.
    assert_eq!(one.units_sampled, two.units_sampled);
    assert_ne!(one.points[0].metrics.hit_ratio, two.points[0].metrics.hit_ratio);
    assert_ne!(one.points[0].metrics.requests, two.points[0].metrics.requests);
}
