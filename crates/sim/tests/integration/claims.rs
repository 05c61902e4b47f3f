//! Hand-checked paper claims: runs with metrics set by hand, the verdicts worked out by hand from
//! the rules in `shingled_sim::paper::verdict` (a tally agrees when every case holds, is partly
//! when some do, disagrees when none; a ratio agrees within ×1.25, is close within ×2), and only
//! on the paper's own traces.

use shingled_sim::paper::{claims_of, Claim, INDEPENDENT, TUNED_HIT, TUNED_SMR_WA};
use shingled_sim::{RunReport, SimConfig};
use std::path::PathBuf;

/// A real report of the tiny golden trace, used as a template whose metrics are overwritten.
fn template() -> RunReport {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/data/golden");
    let mut cfg = SimConfig::from_toml(&std::fs::read_to_string(dir.join("tiny.toml")).unwrap()).unwrap();
    cfg.trace.path = dir.join("tiny.csv").to_string_lossy().into_owned();
    shingled_sim::simulate(&cfg).unwrap()
}

/// A run labelled `label` with total time `t` s, hit ratio `h`, WA `wa` and `rmws` RMWs.
fn run(t: &RunReport, label: &str, time: f64, h: f64, wa: f64, rmws: u64) -> RunReport {
    let mut r = t.clone();
    r.label = label.into();
    r.total.total_time_s = time;
    r.total.hit_ratio = Some(h);
    r.total.write_amplification = Some(wa);
    r.total.counters.drive.rmws = rmws;
    r
}

fn claim<'a>(claims: &'a [Claim], text: &str) -> &'a Claim {
    claims.iter().find(|c| c.claim.starts_with(text)).unwrap_or_else(|| {
        panic!("no claim {text:?} in {:#?}", claims.iter().map(|c| &c.claim).collect::<Vec<_>>())
    })
}

#[test]
fn sac_tbs_orderings() {
    let t = template();
    // wdev: PD lowest miss (hit 0.5), largest WA, most RMWs, slowest; AD highest miss, lowest
    // WA; ARS fewest RMWs, fastest: every claim holds.
    let wdev = [
        run(&t, "PD", 300.0, 0.50, 60.0, 900),
        run(&t, "AD", 200.0, 0.30, 20.0, 500),
        run(&t, "ARS", 100.0, 0.45, 22.0, 400),
    ];
    // hm: ARS has the lowest miss ratio (0.6 hit) and PD the fewest RMWs and the least time.
    let hm = [
        run(&t, "PD", 100.0, 0.50, 60.0, 100),
        run(&t, "AD", 200.0, 0.30, 20.0, 500),
        run(&t, "ARS", 150.0, 0.60, 22.0, 400),
    ];
    let groups = vec![("synth:wdev", wdev.iter().collect()), ("synth:hm", hm.iter().collect())];
    let c = claims_of("sac-tbs", true, &groups);
    assert_eq!(c.len(), 8);
    let lowest_miss = claim(&c, "PD has the lowest miss ratio");
    assert_eq!((lowest_miss.ours.as_str(), lowest_miss.verdict.as_str()), ("1 of 2 (not: hm)", "partly"));
    assert_eq!(lowest_miss.basis, TUNED_HIT);
    assert_eq!(claim(&c, "PD has the largest WA").verdict, "agrees");
    assert_eq!(claim(&c, "PD has the most RMWs").ours, "1 of 2 (not: hm)");
    assert_eq!(claim(&c, "PD takes the most time").ours, "1 of 2 (not: hm)");
    assert_eq!(claim(&c, "AD has the highest miss ratio").verdict, "agrees");
    assert_eq!(claim(&c, "AD has the lowest WA").verdict, "agrees");
    let fastest = claim(&c, "ARS takes the least time");
    assert_eq!((fastest.ours.as_str(), fastest.verdict.as_str()), ("1 of 2 (not: hm)", "partly"));
    assert_eq!(fastest.basis, INDEPENDENT);
}

#[test]
fn sac_cycle_tolerances() {
    let t = template();
    // WA 10.0 at 0.5x, 10.4 at 1x (4% apart: close), 11.5 at 2x (+10.6%: steep); fewest RMWs at
    // 2x, not 1x.
    let runs: Vec<RunReport> = [("0.5x", 10.0, 500), ("1x", 10.4, 450), ("2x", 11.5, 440), ("4x", 12.0, 460)]
        .iter()
        .chain(&[("6x", 12.0, 470), ("8x", 12.5, 480), ("10x", 13.0, 490)])
        .map(|(x, wa, rmws)| run(&t, &format!("{x} PB"), 1.0, 0.5, *wa, *rmws))
        .collect();
    let groups = vec![("synth:wdev", runs.iter().collect())];
    let c = claims_of("sac-cycle", true, &groups);
    assert_eq!(claim(&c, "WA close at 0.5x and 1x").verdict, "agrees");
    assert_eq!(claim(&c, "WA rises steeply at 2x").verdict, "agrees");
    let fewest = claim(&c, "fewest RMWs at 1x");
    assert_eq!((fewest.ours.as_str(), fewest.verdict.as_str()), ("0 of 1 (not: wdev)", "DISAGREES"));
}

#[test]
fn sac_band_size_flatness() {
    let t = template();
    // Times 100, 110, 114 over 20-100 MB: max/min 1.14, flat. WA 10, 12, 11.6: 1.2, not flat.
    let runs: Vec<RunReport> = [("2 MB", 300.0, 30.0), ("10 MB", 150.0, 15.0), ("20 MB", 100.0, 10.0)]
        .iter()
        .chain(&[
            ("50 MB", 110.0, 12.0),
            ("100 MB", 114.0, 11.6),
            ("200 MB", 120.0, 12.0),
            ("600 MB", 130.0, 14.0),
        ])
        .map(|(l, time, wa)| run(&t, l, *time, 0.5, *wa, 100))
        .collect();
    let groups = vec![("synth:stg", runs.iter().collect())];
    let c = claims_of("sac-band-size", true, &groups);
    assert_eq!(claim(&c, "time flat over 20-100 MB").verdict, "agrees");
    assert_eq!(claim(&c, "WA flat over 20-100 MB").verdict, "DISAGREES");
    assert_eq!(claim(&c, "RMWs flat over 20-100 MB").verdict, "agrees");
}

#[test]
fn pore_schemes_and_overall_orderings() {
    let t = template();
    let on = |lru: f64, cf: f64, pf: f64, bl: f64| {
        vec![
            run(&t, "lru", lru, 0.40, 60.0, 900),
            run(&t, "pore-cf", cf, 0.38, 26.0, 450),
            run(&t, "pore-pf", pf, 0.52, 59.0, 800),
            run(&t, "pore-bl", bl, 0.42, 27.0, 440),
        ]
    };
    // BL fastest on wdev; CF fastest on usr. PF's hit ratio (0.52) is above LRU's (0.40) on both:
    // as the paper has it on wdev, not on usr (the paper: lower there).
    let (wdev, usr) = (on(400.0, 250.0, 350.0, 240.0), on(700.0, 480.0, 630.0, 490.0));
    let groups = vec![("synth:wdev", wdev.iter().collect()), ("synth:usr", usr.iter().collect())];
    let c = claims_of("pore-schemes", true, &groups);
    let fastest = claim(&c, "BL takes the least total time");
    assert_eq!((fastest.ours.as_str(), fastest.verdict.as_str()), ("1 of 2 (not: usr)", "partly"));
    assert_eq!(claim(&c, "PF's hit ratio vs LRU's").ours, "1 of 2 (not: usr)");
    assert_eq!(claim(&c, "CF's and BL's WA below PF's and LRU's").verdict, "agrees");

    // PORE Fig. 11 on one trace, wdev: the paper's figures are means over wdev, mds, ts and usr
    // (no wdev figure of its own), so the speed-ups are context without a verdict; the figures
    // holding on each of the four traces (SMR-only the slowest) are judged on wdev.
    let runs = [
        run(&t, "smr-only", 400.0, 0.0, 60.0, 1000),
        run(&t, "cmr-only", 200.0, 0.0, 0.0, 0),
        run(&t, "lru", 250.0, 0.5, 70.0, 900),
        run(&t, "lru-band", 90.0, 0.5, 25.0, 300),
        run(&t, "pore-bl", 100.0, 0.5, 20.0, 280),
    ];
    let groups = vec![("synth:wdev", runs.iter().collect())];
    let c = claims_of("pore-overall", false, &groups);
    let smr = claim(&c, "PORE total I/O time vs SMR-only: speed-up");
    assert_eq!(
        (smr.paper.as_str(), smr.paper_covers.as_str(), smr.ours.as_str(), smr.ours_covers.as_str()),
        ("11.83x", "mean of wdev, mds, ts, usr", "4.00x", "synth:wdev")
    );
    assert_eq!((smr.verdict.as_str(), smr.factor), ("no verdict: not the paper's traces", None));
    assert_eq!(smr.basis, TUNED_SMR_WA);
    let wa = claim(&c, "PORE WA vs SMR-only: reduction");
    assert_eq!(wa.paper_covers, "mean of src, prn, ts, wdev, mds, stg, hm, web, usr");
    assert!(wa.verdict.starts_with("no verdict"));
    let slowest = claim(&c, "SMR-only is the slowest scheme");
    assert_eq!((slowest.verdict.as_str(), slowest.paper_covers.as_str()), ("agrees", "wdev, mds, ts, usr"));
    // Write-only: PORE is not the fastest (LRU-band is).
    let c = claims_of("pore-overall", true, &groups);
    let fastest = claim(&c, "PORE is the fastest scheme");
    assert_eq!(
        (fastest.ours.as_str(), fastest.ours_covers.as_str(), fastest.verdict.as_str()),
        ("0 of 1", "synth:wdev; not: synth:wdev", "DISAGREES")
    );
}

/// The five schemes of PORE Fig. 11 with PORE `speedup` times faster than SMR-only.
fn fig11(t: &RunReport, speedup: f64) -> Vec<RunReport> {
    vec![
        run(t, "smr-only", 100.0 * speedup, 0.0, 60.0, 1000),
        run(t, "cmr-only", 200.0, 0.0, 0.0, 0),
        run(t, "lru", 250.0, 0.5, 70.0, 900),
        run(t, "lru-band", 90.0, 0.5, 25.0, 300),
        run(t, "pore-bl", 100.0, 0.5, 20.0, 280),
    ]
}

#[test]
fn a_run_on_other_traces_gets_no_mean_of_four_verdict() {
    let t = template();
    // prn: the paper's Fig. 11 has no prn figure; its mean covers wdev, mds, ts and usr.
    let prn = fig11(&t, 11.83);
    let groups = vec![("synth:prn", prn.iter().collect())];
    let c = claims_of("pore-overall", false, &groups);
    for text in ["PORE total I/O time vs SMR-only", "PORE total I/O time vs CMR-only", "PORE WA vs LRU"] {
        let x = claim(&c, text);
        assert_eq!((x.verdict.as_str(), x.factor), ("no verdict: not the paper's traces", None), "{text}");
        assert_eq!(x.ours_covers, "synth:prn");
    }
    // Even an exact match of the number is no verdict: it is not the same traces.
    assert_eq!(claim(&c, "PORE total I/O time vs SMR-only").ours, "11.83x");
    // The ranges and orderings the paper states on its four traces are context too.
    for x in c.iter() {
        assert!(x.verdict.starts_with("no verdict"), "{x:?}");
    }
    // Three of the four traces are not the four either.
    let (w, m, u) = (fig11(&t, 4.0), fig11(&t, 4.0), fig11(&t, 4.0));
    let groups = vec![
        ("synth:wdev", w.iter().collect()),
        ("synth:mds", m.iter().collect()),
        ("synth:usr", u.iter().collect()),
    ];
    let c = claims_of("pore-overall", false, &groups);
    assert!(claim(&c, "PORE total I/O time vs SMR-only").verdict.starts_with("no verdict"));
}

#[test]
fn four_traces_are_compared_to_the_papers_mean_over_the_same_four() {
    let t = template();
    // Speed-ups over SMR-only 3, 4, 5, 4 on the four traces and 20 on prn: the mean over the
    // paper's four is 4.00 (prn left out), ×0.34 of 11.83: same direction.
    let runs: Vec<(&str, Vec<RunReport>)> = [("synth:wdev", 3.0), ("synth:mds", 4.0), ("synth:prn", 20.0)]
        .into_iter()
        .chain([("synth:ts", 5.0), ("synth:usr", 4.0)])
        .map(|(n, x)| (n, fig11(&t, x)))
        .collect();
    let groups: Vec<(&str, Vec<&RunReport>)> = runs.iter().map(|(n, r)| (*n, r.iter().collect())).collect();
    let c = claims_of("pore-overall", false, &groups);
    let smr = claim(&c, "PORE total I/O time vs SMR-only: speed-up");
    assert_eq!(smr.ours, "4.00x");
    assert_eq!(smr.ours_covers, "mean of synth:wdev 3.00, synth:mds 4.00, synth:ts 5.00, synth:usr 4.00");
    assert_eq!(smr.paper_covers, "mean of wdev, mds, ts, usr");
    assert_eq!(smr.verdict, "same direction, ours smaller (ours ×0.34)");
    assert!((smr.factor.unwrap() - 4.0 / 11.83).abs() < 1e-12);
    // LRU-band 90 s against PORE's 100 s on every trace: 0.90x, the other scheme wins.
    let band = claim(&c, "PORE total I/O time vs LRU-band");
    assert_eq!(band.verdict, "DISAGREES: the other scheme wins (ours ×0.55)");
    // Fig. 12c's WA reductions are means over nine traces: five of ours are not those nine.
    assert!(claim(&c, "PORE WA vs SMR-only").verdict.starts_with("no verdict"));
    // SMR-only write time / CMR-only's: judged on the four only (prn left out of the row).
    let range = claim(&c, "SMR-only write time / CMR-only write time");
    assert!(!range.ours.contains("prn"), "{}", range.ours);
    // A real trace file's name stands for its volume as well.
    let files: Vec<(&str, Vec<RunReport>)> = ["/d/wdev_0.csv", "/d/mds_0.csv", "/d/ts_0.csv", "/d/usr_0.csv"]
        .into_iter()
        .map(|n| (n, fig11(&t, 12.0)))
        .collect();
    let groups: Vec<(&str, Vec<&RunReport>)> = files.iter().map(|(n, r)| (*n, r.iter().collect())).collect();
    let c = claims_of("pore-overall", false, &groups);
    let smr = claim(&c, "PORE total I/O time vs SMR-only: speed-up");
    assert_eq!(
        (smr.verdict.as_str(), smr.ours_covers.starts_with("mean of wdev_0 12.00")),
        ("agrees (ours ×1.01)", true)
    );
}

#[test]
fn a_claim_line_says_once_what_each_side_covers() {
    let t = template();
    let prn = fig11(&t, 2.0);
    let groups = vec![("synth:prn", prn.iter().collect())];
    let c = claims_of("pore-overall", false, &groups);
    let rows = shingled_sim::paper::claims_rows(&c);
    let smr = rows.iter().find(|r| r[0].starts_with("PORE total I/O time vs SMR-only")).unwrap();
    assert_eq!(smr[1], "11.83x (mean of wdev, mds, ts, usr)");
    assert_eq!(smr[2], "2.00x (synth:prn)");
    assert_eq!(smr[4], "PORE §V-C1, Fig. 11");
    for r in &rows {
        let line = r.join(" | ");
        assert!(line.matches("mean of").count() <= 1, "{line}");
        assert!(!line.contains("nine traces") || !line.contains("wdev, mds, ts, usr"), "{line}");
    }
    let table = shingled_sim::paper::claims_table(&c);
    assert!(table.trim_end().ends_with(shingled_sim::paper::CLAIMS_RULES), "{table}");
    assert!(table.contains("docs/reproduction.md#how-verdicts-are-decided"));
}

#[test]
fn pore_sweeps_trends() {
    let t = template();
    // Period: CF fastest at 1x with its lowest WA there; WA at 10x 5% above 5x.
    let periods = [("0.1x", 300.0, 30.0), ("0.5x", 260.0, 26.0), ("1x", 250.0, 25.0)];
    let more = [("2x", 280.0, 34.0), ("5x", 400.0, 58.0), ("10x", 410.0, 60.9)];
    let runs: Vec<RunReport> = periods
        .iter()
        .chain(&more)
        .map(|(x, time, wa)| run(&t, &format!("cf period {x} PB"), *time, 0.4, *wa, 100))
        .collect();
    let groups = vec![("synth:wdev", runs.iter().collect())];
    let c = claims_of("pore-period", true, &groups);
    assert_eq!(claim(&c, "the PB-sized period takes the least time").ours, "1 of 1");
    assert_eq!(claim(&c, "time follows WA").verdict, "agrees");
    assert_eq!(claim(&c, "WA at 10x the PB no worse than at 5x").verdict, "agrees");

    // SSD size on wdev: PORE's time 25% of LRU's at 1% (4.00x, paper 1/0.245 = 4.08x: agrees);
    // hit ratios rise for every scheme; LRU-band's WA does not fall from 4% to 5%.
    let mut runs = Vec::new();
    for (i, pct) in ["1%", "2%", "3%", "4%", "5%"].iter().enumerate() {
        let h = 0.40 + 0.02 * i as f64;
        runs.push(run(&t, &format!("lru {pct}"), 400.0, h, 60.0, 900));
        let band_wa = [30.0, 25.0, 20.0, 15.0, 16.0][i];
        runs.push(run(&t, &format!("lru-band {pct}"), 150.0 - 10.0 * i as f64, h, band_wa, 300));
        runs.push(run(&t, &format!("pore-bl {pct}"), 100.0 - 10.0 * i as f64, h, 20.0 - i as f64, 200));
    }
    let groups = vec![("synth:wdev", runs.iter().collect())];
    let c = claims_of("pore-ssd-size", true, &groups);
    assert_eq!(claim(&c, "hit ratios rise with the SSD size").ours, "3 of 3");
    let falls = claim(&c, "LRU-band's and PORE's WA fall");
    assert_eq!((falls.ours.as_str(), falls.verdict.as_str()), ("1 of 2 (not: wdev lru-band)", "partly"));
    assert_eq!(claim(&c, "PORE faster than LRU and LRU-band").ours, "5 of 5");
    let at1 = claim(&c, "PORE at 1% total I/O time vs LRU: speed-up");
    assert_eq!((at1.ours.as_str(), at1.verdict.as_str()), ("4.00x", "agrees (ours ×0.98)"));
    assert_eq!((at1.paper_covers.as_str(), at1.ours_covers.as_str()), ("wdev", "synth:wdev"));
}

#[test]
fn pore_regimes_checks_the_papers_margin_on_every_cell() {
    let t = template();
    // trickle=0.1: LRU-band 300 s, PORE-BL 100 s → 3.00x (past the paper's 2.02x);
    // trickle=0.4: 150 s vs 100 s → 1.50x (faster, short of the margin);
    // the zones family names PORE-BL by its zone size: 90 s vs 100 s → 0.90x (LRU-band ahead).
    let a = [run(&t, "lru-band", 300.0, 0.4, 20.0, 900), run(&t, "pore-bl", 100.0, 0.4, 10.0, 300)];
    let b = [run(&t, "lru-band", 150.0, 0.4, 20.0, 900), run(&t, "pore-bl", 100.0, 0.4, 10.0, 300)];
    let z =
        [run(&t, "lru-band", 90.0, 0.4, 20.0, 900), run(&t, "pore-bl zone 20 MiB", 100.0, 0.4, 10.0, 300)];
    let groups = vec![
        ("synth:bursts,trickle=0.1", a.iter().collect()),
        ("synth:bursts,trickle=0.4", b.iter().collect()),
        ("synth:bursts", z.iter().collect()),
    ];
    let c = claims_of("pore-regimes", true, &groups);
    let cells: Vec<(&str, &str)> = c
        .iter()
        .filter(|c| c.claim == "PORE total I/O time vs LRU-band: speed-up")
        .map(|c| (c.ours_covers.as_str(), c.ours.as_str()))
        .collect();
    assert_eq!(
        cells,
        [
            ("synth:bursts,trickle=0.1", "3.00x"),
            ("synth:bursts,trickle=0.4", "1.50x"),
            ("synth:bursts", "0.90x")
        ]
    );
    for x in &c {
        assert_eq!(x.paper_covers, "mean of wdev, mds, ts, usr");
        assert!(x.verdict.starts_with("no verdict"), "constructed traces are context: {x:?}");
    }
    assert_eq!(claim(&c, "PORE faster than LRU-band (cells)").ours, "2 of 3 (not: synth:bursts)");
    assert_eq!(
        claim(&c, "PORE faster than LRU-band by the paper's margin").ours,
        "1 of 3 (not: synth:bursts,trickle=0.4, synth:bursts)"
    );
    // Only the cell where LRU-band is ahead carries the authors'-code evidence.
    let explained: Vec<&str> = c
        .iter()
        .filter(|x| x.evidence == shingled_sim::paper::LRU_BAND_AHEAD)
        .map(|x| x.ours_covers.as_str())
        .collect();
    assert_eq!(explained, ["synth:bursts"]);
}

#[test]
fn pore_overall_explains_lru_band_ahead_and_small_factors() {
    let t = template();
    // Per volume: SMR-only 1000 s, CMR-only 500, LRU 400, LRU-band 100, PORE-BL 125 (LRU-band
    // ahead; PORE 8x SMR-only, below the paper's 34.9x by far).
    let g = [
        run(&t, "smr-only", 1000.0, 0.0, 50.0, 900),
        run(&t, "cmr-only", 500.0, 0.0, 1.0, 0),
        run(&t, "lru", 400.0, 0.4, 60.0, 800),
        run(&t, "lru-band", 100.0, 0.4, 20.0, 300),
        run(&t, "pore-bl", 125.0, 0.4, 25.0, 350),
    ];
    let groups: Vec<(&str, Vec<&RunReport>)> = ["synth:wdev", "synth:mds", "synth:ts", "synth:usr"]
        .iter()
        .map(|v| (*v, g.iter().collect()))
        .collect();
    let c = claims_of("pore-overall", true, &groups);
    let band = claim(&c, "PORE total I/O time vs LRU-band");
    assert_eq!(band.ours, "0.80x");
    assert_eq!(band.evidence, shingled_sim::paper::LRU_BAND_AHEAD);
    assert_eq!(claim(&c, "PORE is the fastest scheme").evidence, shingled_sim::paper::LRU_BAND_AHEAD);
    let smr = claim(&c, "PORE total I/O time vs SMR-only");
    assert_eq!(smr.ours, "8.00x");
    assert_eq!(smr.evidence, shingled_sim::paper::PORE_SMALLER);
    // PORE 3.20x LRU against the paper's 4.60x: ×0.70, well below: explained too.
    assert_eq!(claim(&c, "PORE total I/O time vs LRU:").evidence, shingled_sim::paper::PORE_SMALLER);
}
