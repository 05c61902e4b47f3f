//! The time breakdown adds up: for every scheme of a comparison in each named set-up, the
//! foreground causes sum to the drive's part of the total time, the drive's and the SSD's parts
//! to the total, and the mechanical components to the mechanism's work by cause (foreground and
//! background); the printed tables say the same within their rounding.

use shingled_sim::{compare, report, setup, RunReport, SimConfig};

fn compared(setup_name: &str, replay: &str) -> Vec<RunReport> {
    let mut cfg = SimConfig::default();
    setup(setup_name).unwrap().apply(&mut cfg);
    cfg.trace.path = "synth:wdev,scale=0.01".into();
    cfg.replay = replay.parse().unwrap();
    compare(&cfg, 2, &|_| {}).unwrap().runs
}

/// Seconds of the mechanism's work as causes tell it: every cause but the waits, the interface
/// transfers of the write cache and the merges (charged by bandwidth, no arm movement).
fn mechanism_by_cause(r: &RunReport) -> f64 {
    let t = &r.total.counters.drive.time;
    (t.causes() - t.host_wait - t.cache - t.clean_merge).as_secs_f64()
}

fn check(runs: &[RunReport], what: &str) {
    let names: Vec<&str> = runs.iter().map(|r| r.label.as_str()).collect();
    assert!(names.contains(&"smr-only") && names.contains(&"cmr-only"), "{what}: {names:?}");
    for r in runs {
        let d = &r.total.counters.drive;
        let drive = r.total.drive_read_time_s + r.total.drive_write_time_s;
        let f = d.foreground();
        let fg = f.causes().as_secs_f64();
        // One nanosecond per drive request at most (a service time is never below 1 ns).
        let slack = (d.read_ops + d.write_ops) as f64 * 1e-9 + 1e-9;
        // No time is left unaccounted for; where causes sum to more than the drive's time, they
        // ran at once: the write cache's interface transfers beside the mechanism's work.
        let overlap = fg - drive;
        assert!(overlap >= -slack, "{what} {}: foreground causes {fg} s vs drive {drive} s", r.label);
        let exact = r.label == "cmr-only"
            || r.config.drive.dm_smr().is_some_and(|c| !c.mechanism.write_cache.enabled);
        let bound = if exact { slack } else { f.cache.as_secs_f64() + slack };
        assert!(overlap <= bound, "{what} {}: causes {fg} s, drive {drive} s, bound {bound}", r.label);
        assert!((report::overlap_s(r) + overlap).abs() < 1e-9, "{what} {}", r.label);
        let ssd = r.total.ssd_read_time_s + r.total.ssd_write_time_s;
        assert!((drive + ssd - r.total.total_time_s).abs() < 1e-6, "{what} {}", r.label);
        // Background work is in no request's time, and each cause's background part is within it.
        assert!(d.background.causes() <= d.time.causes(), "{what} {}", r.label);
        let mech = d.time.mechanical().as_secs_f64();
        let by_cause = mechanism_by_cause(r);
        assert!(
            (mech - by_cause).abs() <= 1e-6 * by_cause.max(1.0),
            "{what} {}: components {mech} s vs mechanism's causes {by_cause} s",
            r.label
        );
    }
    // The printed foreground table: the causes and `overlap` add up to `drive`, and `drive` and
    // `SSD` to `total`, within the rounding of three decimals per column.
    let refs: Vec<&RunReport> = runs.iter().collect();
    let sections = report::breakdown_sections(&refs);
    let fg = &sections[0];
    let col = |name: &str| fg.header.iter().position(|h| h == name).unwrap();
    let (drive, ssd, total) = (col("drive"), col("SSD"), col("total"));
    for row in &fg.rows {
        let v = |i: usize| row[i].parse::<f64>().unwrap();
        let parts: f64 = (1..drive).map(v).sum();
        assert!((parts - v(drive)).abs() <= 0.0005 * drive as f64, "{what} {row:?}");
        assert!((v(drive) + v(ssd) - v(total)).abs() <= 0.0015, "{what} {row:?}");
        let run = runs.iter().find(|r| r.label == row[0]).unwrap();
        assert_eq!(row[total], format!("{:.3}", run.total.total_time_s), "{what}");
    }
    let mech = &sections[2];
    for row in &mech.rows {
        let v = |i: usize| row[i].parse::<f64>().unwrap();
        let n = mech.header.len() - 1;
        let parts: f64 = (1..n).map(v).sum();
        assert!((parts - v(n)).abs() <= 0.0005 * n as f64, "{what} {row:?}");
    }
}

#[test]
fn breakdown_adds_up_in_every_setup_closed_loop() {
    for s in ["pore", "sac", "generic"] {
        check(&compared(s, "closed"), s);
    }
}

#[test]
fn breakdown_adds_up_open_loop_with_background_work() {
    let runs = compared("pore", "open");
    // The CMR-only drive's write cache destages between requests: background work that is in
    // no request's time (the old table counted it in its causes beside the total).
    let cmr = runs.iter().find(|r| r.label == "cmr-only").unwrap();
    assert!(cmr.total.counters.drive.background.destage.0 > 0, "{:?}", cmr.total.counters.drive.background);
    check(&runs, "pore open");
}

/// A cached scheme slower than SMR-only gets one line saying where its time went, from its own
/// numbers: here LRU's band cleaning is made to take 1 s longer than SMR-only's.
#[test]
fn a_scheme_slower_than_no_cache_is_explained_from_its_numbers() {
    let mut cfg = SimConfig::default();
    cfg.trace.path = "synth:wdev,scale=0.002".into();
    cfg.compare.schemes = vec!["smr-only".into(), "lru".into()];
    let mut runs = compare(&cfg, 2, &|_| {}).unwrap().runs;
    let base = runs[0].total.clone();
    let refs: Vec<&RunReport> = runs.iter().collect();
    let faster = report::slower_than_no_cache(&refs);
    let lru = &mut runs[1];
    if lru.total.total_time_s <= base.total_time_s {
        assert_eq!(faster, "", "LRU is not slower here");
    }
    // Slow LRU down by a second of RMW band writes.
    let extra = shingled_core::Nanos(1_000_000_000);
    let m = &mut lru.total;
    m.counters.drive.time.clean_band_write = base.counters.drive.time.clean_band_write + extra;
    m.counters.drive.time.clean_band_read = base.counters.drive.time.clean_band_read;
    m.counters.drive.time.clean_merge = base.counters.drive.time.clean_merge;
    m.counters.drive.background = Default::default();
    m.total_time_s = base.total_time_s + 1.5;
    let refs: Vec<&RunReport> = runs.iter().collect();
    let line = report::slower_than_no_cache(&refs);
    let clean_lru = runs[1].total.counters.drive.foreground().clean().as_secs_f64();
    let clean_base = runs[0].total.counters.drive.foreground().clean().as_secs_f64();
    assert!(line.starts_with("lru is slower than smr-only"), "{line}");
    assert!(
        line.contains(&format!(
            "band cleaning (RMW reads, merges, writes) {clean_lru:.3} s vs {clean_base:.3} s"
        )),
        "{line}"
    );
    assert!(
        line.contains(&format!(
            "({} RMWs vs {})",
            runs[1].total.counters.drive.rmws, runs[0].total.counters.drive.rmws
        )),
        "{line}"
    );
    assert_eq!(line.lines().count(), 1, "{line}");
}
