//! Golden reports for a tiny committed trace: any change to the numbers or the layout shows up
//! as a diff. Regenerate with `SHINGLED_BLESS=1 cargo test -p shingled-sim golden`.

use shingled_sim::{compare, report, SimConfig};
use std::path::PathBuf;

fn data(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/data/golden").join(name)
}

fn check(name: &str, got: &str) {
    let path = data(name);
    if std::env::var_os("SHINGLED_BLESS").is_some() {
        std::fs::write(&path, got).unwrap();
        return;
    }
    let want = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{}: {e} (run with SHINGLED_BLESS=1 to create it)", path.display()));
    assert_eq!(
        got,
        want,
        "{} differs; if the change is intended, rerun with SHINGLED_BLESS=1",
        path.display()
    );
}

fn config() -> SimConfig {
    let text = std::fs::read_to_string(data("tiny.toml")).unwrap();
    let mut cfg = SimConfig::from_toml(&text).unwrap();
    cfg.trace.path = data("tiny.csv").to_string_lossy().into_owned();
    cfg
}

#[test]
fn golden_compare_table_and_csv() {
    let cfg = config();
    let r = compare(&cfg, 1, &|_| {}).unwrap();
    let mut table = report::compare_table(&r);
    // the trace path differs between machines
    table = table.replace(&cfg.trace.path, "tiny.csv");
    check("tiny-compare.txt", &table);
    let mut csv = String::from(report::CSV_HEADER);
    csv.push('\n');
    for run in &r.runs {
        csv.push_str(&report::csv_rows(run));
    }
    check("tiny-compare.csv", &csv);
}

#[test]
fn golden_run_table() {
    let mut cfg = config();
    cfg.label = Some("lru".into());
    let stats = shingled_sim::measure(&cfg.trace, &cfg.drive.bands_or_default()).unwrap();
    let r = shingled_sim::run(&cfg, &stats, &mut |_| {}).unwrap();
    let table = report::run_table(&r);
    check("tiny-sim-lru.txt", &table);
    // Every size is absolute here, so `simulate` reads the trace once: the same table but for
    // the ranges, which nothing measured.
    let once = report::run_table(&shingled_sim::simulate(&cfg).unwrap());
    let ranges = table.lines().nth(1).unwrap();
    assert!(ranges.starts_with("written range "), "{ranges}");
    assert_eq!(
        once,
        table.replace(ranges, "written and accessed ranges not measured (every size absolute: one pass)")
    );
}

#[test]
fn config_round_trips_through_toml() {
    let cfg = config();
    let again = SimConfig::from_toml(&cfg.to_toml()).unwrap();
    assert_eq!(cfg, again);
    let default = SimConfig::default();
    assert_eq!(SimConfig::from_toml(&default.to_toml()).unwrap(), default);
}

#[test]
fn config_errors_name_the_field() {
    let e = SimConfig::from_toml("mode = \"sideways\"").unwrap_err().to_string();
    assert!(e.contains("sideways"), "{e}");
    let e = SimConfig::from_toml("[cache]\npolicy = \"nope\"").unwrap_err().to_string();
    assert!(e.contains("nope") && e.contains("lru"), "{e}");
    let e = SimConfig::from_toml("[cache]\nsize = \"12XB\"").unwrap_err().to_string();
    assert!(e.contains("12XB"), "{e}");
    let e = SimConfig::from_toml("bogus = 1").unwrap_err().to_string();
    assert!(e.contains("bogus"), "{e}");
}

/// Hit, eviction, RMW and WA figures of every registered policy at several cache sizes and both
/// main modes on a small committed trace (`small.csv`, 400 requests over 1 MiB, 16 KiB bands,
/// an 8-block persistent buffer). Any change to a policy's decisions shows up here.
#[test]
fn golden_policy_numbers() {
    use shingled_cache::PolicyConfig;
    use shingled_core::{ByteSize, SizeSpec};
    use std::fmt::Write;
    let mut base = config();
    base.trace.path = data("small.csv").to_string_lossy().into_owned();
    if let shingled_device::DriveConfig::DmSmr(d) = &mut base.drive {
        d.pb_size = SizeSpec::Absolute(ByteSize(8 * 4096));
    }
    let mut out = String::from(
        "policy      mode        cache  rd-hits  wr-hits  clean-ev  dirty-ev  PB-writes  RMWs     WA\n",
    );
    for &name in PolicyConfig::NAMES {
        for mode in [shingled_sim::Mode::ReadWrite, shingled_sim::Mode::WriteOnly] {
            for blocks in [8u64, 24, 64] {
                // Policies that assume their own zone or band size get the trace's 16 KiB bands,
                // so that they act on a trace of 1 MiB.
                let spec = match name {
                    "pore" => "pore:zone_size=16KiB".to_string(),
                    "sac" | "most-cdc" => format!("{name}:band_size=16KiB"),
                    _ => name.to_string(),
                };
                let mut cfg = shingled_sim::scheme_config(&base, &spec).unwrap();
                cfg.mode = mode;
                cfg.cache.as_mut().unwrap().size = SizeSpec::Absolute(ByteSize(blocks * 4096));
                cfg.cache.as_mut().unwrap().costs = shingled_sim::CostModel::Paper;
                let r = shingled_sim::simulate(&cfg).unwrap();
                let c = &r.total.counters;
                let _ = writeln!(
                    out,
                    "{:<11} {:<11} {:>5}  {:>7}  {:>7}  {:>8}  {:>8}  {:>9}  {:>4}  {:>5}",
                    name,
                    mode.name(),
                    blocks,
                    c.read_hits,
                    c.write_hits,
                    c.clean_evictions,
                    c.dirty_evictions,
                    c.drive.pb_writes,
                    c.drive.rmws,
                    r.total.write_amplification.map(|w| format!("{w:.2}")).unwrap_or_else(|| "-".into())
                );
            }
        }
    }
    check("policies.txt", &out);
}

#[test]
fn a_run_can_be_cancelled_from_its_progress_callback() {
    use std::sync::atomic::{AtomicBool, Ordering};
    let mut cfg = shingled_sim::SimConfig::default();
    cfg.trace.path = "synth:wdev,scale=0.2".into();
    let stats = shingled_sim::measure(&cfg.trace, &cfg.drive.bands_or_default()).unwrap();
    assert!(stats.requests > 2 * shingled_sim::PROGRESS_EVERY);
    let cancel = AtomicBool::new(false);
    let r =
        shingled_sim::run_with(&cfg, &stats, &mut |_| cancel.store(true, Ordering::Relaxed), Some(&cancel));
    match r {
        Err(shingled_sim::SimError::Cancelled { requests }) => {
            assert_eq!(requests, shingled_sim::PROGRESS_EVERY)
        }
        other => panic!("expected a cancellation, got {other:?}"),
    }
}
