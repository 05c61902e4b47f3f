//! SMaRT's evaluation grid (§5.2–5.4) as experiments: the plan, the LBA factors and folding,
//! the verdict rules, and a small run whose structural facts hold whatever the trace.

use shingled_sim::experiments::{plan, run_experiment, smart_lba_factor, ExperimentOptions, SMART_TRACES};
use shingled_sim::paper::count_verdict;
use shingled_sim::{IoUnit, Replay, SimConfig};

fn opts(traces: &[&str]) -> ExperimentOptions {
    ExperimentOptions {
        base: SimConfig::default(),
        traces: traces.iter().map(|t| t.to_string()).collect(),
        mode: None,
        paper_setup: true,
    }
}

#[test]
fn the_grid_is_three_schemes_by_three_utilisations_by_four_traces() {
    let e = plan("smart-gc", &opts(&[])).unwrap();
    assert_eq!(e.cells.len(), 36);
    for c in &e.cells {
        let cfg = &c.config;
        assert!(cfg.cache.is_none() && cfg.replay == Replay::Open && cfg.io_unit == IoUnit::Request);
        let (_, _, factor) = SMART_TRACES.iter().find(|t| cfg.trace.path == t.1).expect("a Table 1 volume");
        assert_eq!(cfg.trace.lba_scale, Some(*factor));
        // Folded into the SMaRT drive's host capacity at the group's utilisation, for all three.
        let u: f64 =
            c.trace.rsplit_once("U=").unwrap().1.trim_end_matches('%').parse::<f64>().unwrap() / 100.0;
        let mut smart = shingled_device::profile("smart-cheetah").unwrap();
        smart.smart_mut().unwrap().utilisation = u;
        assert_eq!(cfg.trace.fold, smart.capacity());
        if c.label == "smart" {
            assert_eq!(cfg.drive.smart().unwrap().utilisation, u);
            assert_eq!(cfg.trace.spread, None, "SMaRT lays the range out itself");
        } else {
            // The others see the range spread over the same 142 GB SMaRT lays it out on.
            assert_eq!(cfg.trace.spread, smart.smart().unwrap().shingled_size);
        }
        assert!(cfg.drive.capacity().unwrap() >= cfg.trace.fold.unwrap(), "{}", c.label);
    }
    let labels: Vec<&str> = e.cells.iter().take(3).map(|c| c.label.as_str()).collect();
    assert_eq!(labels, ["hdd", "smart", "skylight"]);
}

#[test]
fn table_1_factors_by_volume_name() {
    assert_eq!(smart_lba_factor("synth:mds,span=max"), 5);
    assert_eq!(smart_lba_factor("/data/msr/proj_0.csv.gz"), 10);
    assert_eq!(smart_lba_factor("stg_0.csv"), 12);
    assert_eq!(smart_lba_factor("synth:rsrch"), 10);
    assert_eq!(smart_lba_factor("synth:wdev"), 1);
    assert_eq!(smart_lba_factor("mdsx.csv"), 1);
}

#[test]
fn count_verdicts() {
    assert_eq!(count_verdict(0.0, 0.0).text, "agrees (both 0)");
    assert!(count_verdict(0.0, 3.0).text.starts_with("DISAGREES"));
    assert_eq!(count_verdict(100.0, 120.0).text, "agrees (ours ×1.20)");
    assert_eq!(count_verdict(100.0, 180.0).text, "close (ours ×1.80)");
    assert_eq!(count_verdict(100.0, 500.0).text, "DISAGREES (ours ×5.00)");
    assert_eq!(count_verdict(100.0, 500.0).factor, Some(5.0));
}

/// A small run: SMaRT at 30% does no GC at all (guard tracks and R stay high: structural, SMaRT
/// §5.5.4), the HDD has no translation-layer figures, and the paper's Table 2 rows come back
/// beside ours.
#[test]
fn a_small_grid_runs_and_checks_the_papers_claims() {
    let e = plan("smart-gc", &opts(&["synth:mds,scale=0.01,span=max"])).unwrap();
    let r = run_experiment(e, 2, &|_| {}).unwrap();
    assert_eq!(r.runs.len(), 9);
    for (cell, run) in r.experiment.cells.iter().zip(&r.runs) {
        let stl = &run.total.counters.drive.stl;
        match cell.label.as_str() {
            "hdd" => assert!(stl.is_empty()),
            "smart" if cell.trace.ends_with("U=30%") => {
                assert_eq!((stl.gc_ondemand, stl.gc_background), (0, 0), "{}", cell.trace)
            }
            _ => {}
        }
        assert!(run.total.latency.count > 0 && run.total.counters.drive.out_of_range_blocks == 0);
    }
    let t2: Vec<_> = r.paper.iter().filter(|c| c.source.contains("Table 2")).collect();
    assert_eq!(t2.len(), 12, "4 figures x 3 utilisations for mds_0");
    assert!(r
        .paper
        .iter()
        .any(|c| c.claim.starts_with("SMaRT does no GC at 30% utilisation") && c.verdict == "agrees"));
}

/// The caches in open loop: every cell replays open loop, read-write, in PORE's set-up.
#[test]
fn cache_open_loop_plan() {
    let e = plan("cache-open-loop", &opts(&["synth:wdev,scale=0.01"])).unwrap();
    assert_eq!(e.cells.len(), 6);
    assert!(e
        .cells
        .iter()
        .all(|c| c.config.replay == Replay::Open && c.config.mode == shingled_sim::Mode::ReadWrite));
    let r = run_experiment(e, 2, &|_| {}).unwrap();
    let lru = r.runs.iter().find(|x| x.label == "lru").unwrap();
    assert!(lru.total.latency.count > 0 && lru.total.hit_ratio.unwrap() > 0.0);
}
