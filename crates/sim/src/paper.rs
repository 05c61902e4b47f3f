//! The papers' headline time figures beside ours, with a verdict computed from the numbers.
//!
//! Each experiment (and a comparison in a paper's set-up) lists the claims of its paper that its
//! runs can check: the paper's value, ours, and a verdict by fixed rules (see [`Claim`]). None of
//! our constants is fitted to these figures; where we disagree, the output says so.

use crate::experiments::ExperimentReport;
use crate::run::{CompareReport, RunReport};
use serde::{Deserialize, Serialize};

/// One headline figure of a paper and ours.
///
/// Verdicts: a ratio *agrees* when ours is within a factor 1.25 of the paper's; otherwise it is
/// *same direction* (both above 1 or both below: the same scheme is faster, by a different
/// factor) or *disagrees* (the other scheme is faster). A range agrees when every value of ours
/// lies inside the paper's; *overlaps* when some do. A set of traces agrees when it is the same
/// set.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Claim {
    /// Where the paper says it.
    pub source: String,
    /// What is compared.
    pub claim: String,
    /// The paper's value.
    pub paper: String,
    /// Ours.
    pub ours: String,
    /// The verdict (rules above).
    pub verdict: String,
}

/// Verdict on a ratio.
pub fn ratio_verdict(paper: f64, ours: f64) -> String {
    if !(ours.is_finite() && ours > 0.0) {
        return "no value".into();
    }
    let q = ours / paper;
    if (0.8..=1.25).contains(&q) {
        "agrees (within x1.25)".into()
    } else if (paper > 1.0) == (ours > 1.0) {
        format!("same direction, ours {}", if q < 1.0 { "smaller" } else { "larger" })
    } else {
        "DISAGREES (the other scheme is faster)".into()
    }
}

fn range_verdict(lo: f64, hi: f64, ours: &[f64]) -> String {
    if ours.is_empty() {
        return "no value".into();
    }
    let inside = ours.iter().filter(|x| (lo..=hi).contains(*x)).count();
    if inside == ours.len() {
        "agrees (all inside)".into()
    } else if inside > 0 {
        format!("overlaps ({inside} of {} inside)", ours.len())
    } else if ours.iter().all(|&x| (x > 1.0) == (lo > 1.0)) {
        "same direction, outside the range".into()
    } else {
        "DISAGREES".into()
    }
}

/// Runs grouped by trace, in order of first appearance.
fn by_trace<'a>(cells: impl Iterator<Item = (&'a str, &'a RunReport)>) -> Vec<(&'a str, Vec<&'a RunReport>)> {
    let mut out: Vec<(&str, Vec<&RunReport>)> = Vec::new();
    for (t, r) in cells {
        match out.iter_mut().find(|(n, _)| *n == t) {
            Some((_, v)) => v.push(r),
            None => out.push((t, vec![r])),
        }
    }
    out
}

fn find<'a>(g: &[&'a RunReport], labels: &[&str]) -> Option<&'a RunReport> {
    labels.iter().find_map(|l| g.iter().find(|r| r.label == *l).copied())
}

fn total(r: &RunReport) -> f64 {
    r.total.total_time_s
}

fn drive_time(r: &RunReport) -> f64 {
    r.total.drive_read_time_s + r.total.drive_write_time_s
}

/// Mean over traces of `metric(a) / metric(b)`, with the per-trace values.
fn mean_ratio(
    groups: &[(&str, Vec<&RunReport>)],
    a: &[&str],
    b: &[&str],
    metric: fn(&RunReport) -> f64,
) -> Option<(f64, Vec<f64>)> {
    let v: Vec<f64> = groups
        .iter()
        .filter_map(|(_, g)| {
            let (x, y) = (find(g, a)?, find(g, b)?);
            (metric(y) > 0.0).then(|| metric(x) / metric(y))
        })
        .collect();
    (!v.is_empty()).then(|| (v.iter().sum::<f64>() / v.len() as f64, v))
}

#[allow(clippy::too_many_arguments)]
fn speedup_claim(
    out: &mut Vec<Claim>,
    source: &str,
    groups: &[(&str, Vec<&RunReport>)],
    what: (&str, &[&str]),
    base: (&str, &[&str]),
    paper: f64,
    metric: fn(&RunReport) -> f64,
    metric_name: &str,
) {
    // Speed-up of `what` over `base` = base's time / what's time.
    if let Some((mean, per)) = mean_ratio(groups, base.1, what.1, metric) {
        let n = per.len();
        out.push(Claim {
            source: source.into(),
            claim: format!(
                "{} {metric_name} vs {}: speed-up{}",
                what.0,
                base.0,
                if n > 1 { format!(" (mean of {n} traces)") } else { String::new() }
            ),
            paper: format!("{paper:.2}x"),
            ours: if n > 1 {
                format!(
                    "{mean:.2}x ({})",
                    per.iter().map(|x| format!("{x:.2}")).collect::<Vec<_>>().join(", ")
                )
            } else {
                format!("{mean:.2}x")
            },
            verdict: ratio_verdict(paper, mean),
        });
    }
}

const PORE: (&str, &[&str]) = ("PORE", &["pore-bl", "pore"]);

/// PORE Figs. 11 and 13: PORE's speed-ups and the baselines' write times.
fn pore_overall(out: &mut Vec<Claim>, groups: &[(&str, Vec<&RunReport>)], write_only: bool) {
    let (fig, vs) = if write_only {
        ("PORE §V-C2, Fig. 13a", [34.9, 10.2, 4.60, 2.02])
    } else {
        ("PORE §V-C1, Fig. 11", [11.83, 3.26, 2.84, 1.63])
    };
    for ((name, labels), paper) in [
        ("SMR-only", &["smr-only"][..]),
        ("CMR-only", &["cmr-only"]),
        ("LRU", &["lru"]),
        ("LRU-band", &["lru-band"]),
    ]
    .into_iter()
    .zip(vs)
    {
        speedup_claim(out, fig, groups, PORE, (name, labels), paper, total, "total I/O time");
    }
    if write_only {
        return;
    }
    let write = |r: &RunReport| r.total.drive_write_time_s;
    let ratios = |a: &str, skip: &[&str]| -> Vec<(String, f64)> {
        groups
            .iter()
            .filter(|(t, _)| !skip.iter().any(|s| t.contains(s)))
            .filter_map(|(t, g)| {
                let (x, c) = (find(g, &[a])?, find(g, &["cmr-only"])?);
                (write(c) > 0.0).then(|| (t.to_string(), write(x) / write(c)))
            })
            .collect()
    };
    let show =
        |v: &[(String, f64)]| v.iter().map(|(t, x)| format!("{t} {x:.2}")).collect::<Vec<_>>().join(", ");
    let smr = ratios("smr-only", &[]);
    if !smr.is_empty() {
        let v: Vec<f64> = smr.iter().map(|x| x.1).collect();
        out.push(Claim {
            source: "PORE §V-C1".into(),
            claim: "SMR-only write time / CMR-only write time".into(),
            paper: "3.65-6.86".into(),
            ours: show(&smr),
            verdict: range_verdict(3.65, 6.86, &v),
        });
    }
    let lru = ratios("lru", &["ts"]);
    if !lru.is_empty() {
        let v: Vec<f64> = lru.iter().map(|x| x.1).collect();
        out.push(Claim {
            source: "PORE §V-C1".into(),
            claim: "LRU write time / CMR-only write time (ts excluded)".into(),
            paper: "1.04-2.01".into(),
            ours: show(&lru),
            verdict: range_verdict(1.04, 2.01, &v),
        });
    }
    let slower: Vec<&str> = groups
        .iter()
        .filter_map(|(t, g)| {
            let (l, c) = (find(g, &["lru"])?, find(g, &["cmr-only"])?);
            (total(l) > total(c)).then_some(*t)
        })
        .collect();
    let known =
        groups.iter().filter(|(_, g)| find(g, &["lru"]).is_some() && find(g, &["cmr-only"]).is_some());
    let names: Vec<&str> = known.map(|(t, _)| *t).collect();
    if names.len() == 4 && names.iter().all(|t| ["wdev", "mds", "ts", "usr"].iter().any(|v| t.contains(v))) {
        let same = slower.len() == 2 && slower.iter().all(|t| t.contains("wdev") || t.contains("mds"));
        out.push(Claim {
            source: "PORE §V-C1".into(),
            claim: "traces on which LRU's total time exceeds CMR-only's".into(),
            paper: "wdev, mds".into(),
            ours: if slower.is_empty() { "none".into() } else { slower.join(", ") },
            verdict: if same { "agrees".into() } else { "differs".into() },
        });
    }
}

/// The paper claims an experiment's runs can check.
pub fn experiment_claims(r: &ExperimentReport) -> Vec<Claim> {
    let groups = by_trace(r.experiment.cells.iter().zip(&r.runs).map(|(c, run)| (c.trace.as_str(), run)));
    let write_only = r.experiment.cells.first().is_some_and(|c| c.config.mode == crate::Mode::WriteOnly);
    let mut out = Vec::new();
    match r.experiment.name.as_str() {
        "pore-overall" => pore_overall(&mut out, &groups, write_only),
        "sac-rw" => {
            for ((name, label), paper) in [("LRU", "lru"), ("MOST", "most"), ("MOST+CDC", "most-cdc")]
                .into_iter()
                .zip([119.3 / 40.8, 60.7 / 40.8, 50.4 / 40.8])
            {
                speedup_claim(
                    &mut out,
                    "SAC §6.3, Table 5",
                    &groups,
                    ("SAC", &["sac"]),
                    (name, &[label]),
                    paper,
                    total,
                    "total I/O time",
                );
            }
            speedup_claim(
                &mut out,
                "SAC §6.3, Table 5",
                &groups,
                ("SAC", &["sac"]),
                ("LRU", &["lru"]),
                69.6 / 3.2,
                |r| r.total.drive_write_time_s,
                "SMR write time",
            );
        }
        "sac-write-only" => {
            let src = "SAC §6.2, Fig. 13 (ours: the 5% cache rows)";
            speedup_claim(
                &mut out,
                src,
                &groups,
                ("SAC", &["sac 5%"]),
                ("LRU", &["lru 5%"]),
                7.5,
                total,
                "total I/O time",
            );
            speedup_claim(
                &mut out,
                src,
                &groups,
                ("SAC", &["sac 5%"]),
                ("LRU", &["lru 5%"]),
                11.4,
                drive_time,
                "SMR I/O time",
            );
            speedup_claim(
                &mut out,
                src,
                &groups,
                ("SAC", &["sac 5%"]),
                ("MOST", &["most 5%"]),
                1.4,
                total,
                "total I/O time",
            );
            speedup_claim(
                &mut out,
                src,
                &groups,
                ("SAC", &["sac 5%"]),
                ("MOST", &["most 5%"]),
                1.6,
                drive_time,
                "SMR I/O time",
            );
        }
        _ => {}
    }
    out
}

/// The paper claims a comparison can check: PORE's headline speed-ups when it ran in PORE's
/// set-up (one trace here; the paper's figures are means over wdev, mds, ts and usr).
pub fn compare_claims(c: &CompareReport) -> Vec<Claim> {
    let Some(first) = c.runs.first() else { return Vec::new() };
    if crate::setup::setup_of(&first.config).map(|s| s.name) != Some("pore") {
        return Vec::new();
    }
    let groups = vec![(c.trace_path.as_str(), c.runs.iter().collect::<Vec<_>>())];
    let mut out = Vec::new();
    let write_only = first.config.mode == crate::Mode::WriteOnly;
    if write_only || first.config.mode == crate::Mode::ReadWrite {
        pore_overall(&mut out, &groups, write_only);
    }
    for claim in &mut out {
        claim.source.push_str(" (paper: mean of wdev, mds, ts, usr)");
    }
    out
}

/// The claims as a table (empty string when there are none).
pub fn claims_table(claims: &[Claim]) -> String {
    if claims.is_empty() {
        return String::new();
    }
    let rows: Vec<Vec<String>> = claims
        .iter()
        .map(|c| vec![c.claim.clone(), c.paper.clone(), c.ours.clone(), c.verdict.clone(), c.source.clone()])
        .collect();
    crate::report::plain_table(&["the paper's figure", "paper", "ours", "verdict", "source"], &rows)
}
