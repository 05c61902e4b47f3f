//! `pore-regimes`: the grid it plans, the winners it names, and one cell's winner per family at
//! a small scale (scale 0.05 of `synth:bursts`: 51 regions of 8 MiB, a cache of about one
//! burst), where the regime boundaries of the full-size run show the same way.

use shingled_device::DriveConfig;
use shingled_sim::experiments::{self, ExperimentOptions, REGIME_SCHEMES, REGIME_TRACES};
use shingled_sim::{Mode, SimConfig};

fn opts() -> ExperimentOptions {
    ExperimentOptions { base: SimConfig::default(), traces: Vec::new(), mode: None, paper_setup: true }
}

/// Write-only RMWs of `policy` on `trace` in the PORE set-up (the experiment's), with `adjust`.
fn rmws(trace: &str, policy: &str, adjust: impl Fn(&mut SimConfig)) -> u64 {
    let mut base = SimConfig::default();
    shingled_sim::setup("pore").unwrap().apply(&mut base);
    base.trace.path = trace.to_string();
    base.mode = Mode::WriteOnly;
    let mut cfg = shingled_sim::scheme_config(&base, policy).unwrap();
    adjust(&mut cfg);
    shingled_sim::simulate(&cfg).unwrap_or_else(|e| panic!("{trace} {policy}: {e}")).total.counters.drive.rmws
}

#[test]
fn the_grid_has_every_family_scheme_and_set_up() {
    let e = experiments::plan("pore-regimes", &opts()).unwrap();
    assert!(e.winners, "the report names the winners");
    let traces = e.traces();
    for c in &e.cells {
        assert_eq!(c.config.mode, Mode::WriteOnly, "{}", c.label);
        assert!(c.config.cache.is_some(), "every cell is cached");
    }
    // 12 generated traces + 2 set-up groups + 2 zone groups.
    assert_eq!(traces.len(), REGIME_TRACES.len() + 4, "{traces:?}");
    for (_, t) in REGIME_TRACES {
        let labels: Vec<&str> = e.cells.iter().filter(|c| c.trace == *t).map(|c| c.label.as_str()).collect();
        assert_eq!(labels, REGIME_SCHEMES.iter().map(|s| s.0).collect::<Vec<_>>(), "{t}");
    }
    // The SAC set-up group runs on SAC's drive, the fixed-bands group on 18 MiB bands.
    let drive_of = |t: &str| e.cells.iter().find(|c| c.trace == t).unwrap().config.drive.clone();
    let sac = shingled_sim::setup("sac").unwrap().drive_config();
    assert_eq!(drive_of("synth:hm,seed=1"), sac);
    assert_ne!(drive_of("synth:hm"), sac);
    match drive_of(experiments::REGIME_FIXED_BANDS_TRACE) {
        DriveConfig::DmSmr(d) => assert_eq!(d.bands.to_string(), "fixed:18MiB"),
        other => panic!("{other:?}"),
    }
    // A user's traces: every scheme on each, nothing else.
    let mut o = opts();
    o.traces = vec!["synth:wdev".into()];
    let mine = experiments::plan("pore-regimes", &o).unwrap();
    assert_eq!(mine.cells.len(), REGIME_SCHEMES.len());
}

#[test]
fn trickle_family_pore_beats_lru_band_at_a_tenth_and_loses_at_two_fifths() {
    let at = |trickle: &str| {
        let t = format!("synth:bursts,trickle={trickle},scale=0.05");
        (rmws(&t, "pore-bl", |_| {}), rmws(&t, "lru-band", |_| {}))
    };
    let (pore, band) = at("0.1");
    assert!(pore < band, "trickle 0.1: PORE-BL {pore} RMWs, LRU-band {band}");
    let (pore, band) = at("0.4");
    assert!(pore > band, "trickle 0.4: PORE-BL {pore} RMWs, LRU-band {band}");
}

#[test]
fn zones_family_band_zones_beat_straddling_zones_on_fixed_bands() {
    let fixed = |c: &mut SimConfig| {
        if let DriveConfig::DmSmr(d) = &mut c.drive {
            d.bands = shingled_core::BandConfig::Fixed { size: shingled_core::ByteSize::mib(18) };
        }
    };
    let t = "synth:bursts,scale=0.05";
    let bands = rmws(t, "pore:zones=bands", fixed);
    let aligned = rmws(t, "pore:scheme=bl,zone_size=18MiB", fixed);
    let straddling = rmws(t, "pore:scheme=bl,zone_size=20MiB", fixed);
    // Zones of the band size are the bands themselves: the same counts.
    assert_eq!(bands, aligned);
    assert!(bands < straddling, "bands {bands} RMWs, 20 MiB zones {straddling}");
}

#[test]
fn winners_are_the_lowest_cached_runs_with_the_runner_up_margin() {
    use shingled_sim::experiments::{Cell, Experiment};
    let data = |n: &str| {
        std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/data/golden").join(n)
    };
    let mut base = SimConfig::from_toml(&std::fs::read_to_string(data("tiny.toml")).unwrap()).unwrap();
    base.trace.path = data("small.csv").to_string_lossy().into_owned();
    // Two traces' worth of groups from one trace: "a" holds SMR-only (never ranked), LRU and
    // LRU-band; "b" holds LRU twice (a tie: the earlier row wins).
    let mut cells = Vec::new();
    let mut runs = Vec::new();
    for (group, label, scheme) in [
        ("a", "smr-only", "smr-only"),
        ("a", "lru", "lru"),
        ("a", "lru-band", "lru-band"),
        ("b", "first", "lru"),
        ("b", "second", "lru"),
    ] {
        let mut cfg = shingled_sim::scheme_config(&base, scheme).unwrap();
        cfg.label = Some(label.into());
        runs.push(shingled_sim::simulate(&cfg).unwrap());
        cells.push(Cell { trace: group.into(), label: label.into(), config: cfg });
    }
    let exp = Experiment {
        name: "t".into(),
        title: "t".into(),
        cells,
        columns: Vec::new(),
        setup: String::new(),
        curve: None,
        winners: true,
    };
    let w = experiments::winners(&exp, &runs);
    assert_eq!(w.len(), 6, "two groups x three metrics");
    let rmws = |i: usize| runs[i].total.counters.drive.rmws as f64;
    let a = w.iter().find(|x| x.trace == "a" && x.metric == "rmws").unwrap();
    let (win, lose) = if rmws(2) < rmws(1) { (2, 1) } else { (1, 2) };
    assert_eq!(a.scheme, runs[win].label);
    assert_eq!(a.value, rmws(win));
    assert_eq!(a.runner_up.as_deref(), Some(runs[lose].label.as_str()));
    assert_eq!(a.margin, (rmws(win) > 0.0).then(|| rmws(lose) / rmws(win)));
    assert!(w.iter().all(|x| x.scheme != "smr-only" && x.runner_up.as_deref() != Some("smr-only")));
    let b = w.iter().find(|x| x.trace == "b" && x.metric == "time").unwrap();
    assert_eq!((b.scheme.as_str(), b.runner_up.as_deref(), b.margin), ("first", Some("second"), Some(1.0)));
}
