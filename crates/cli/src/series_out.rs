//! `--series FILE`: every run's metrics over time (`RunReport::series`) as CSV, one row per run
//! and window, or, for a `.png` name, one chart at exactly FILE: a row of panels per group of
//! runs (hit ratio, RMWs, PB fill and modelled time per window), a line per run.

use crate::plot;
use anyhow::{Context, Result};
use shingled_sim::{Interval, RunReport, Window};
use std::path::PathBuf;

/// Writes `--series FILE` for `runs` (group, label, report), under a title naming `what` ran and
/// the `context` lines (set-up); prints the line naming the file written.
pub fn write(
    path: &Option<PathBuf>,
    runs: &[(String, String, &RunReport)],
    what: &str,
    context: &[String],
) -> Result<()> {
    let Some(path) = path else { return Ok(()) };
    let windows: usize = runs.iter().map(|(_, _, r)| r.series.as_ref().map_or(0, Vec::len)).sum();
    if !path.extension().is_some_and(|e| e.eq_ignore_ascii_case("png")) {
        let mut text = String::from(shingled_sim::report::series::CSV_HEADER);
        text.push('\n');
        for (group, label, r) in runs {
            let mut r = (*r).clone();
            r.label = label.clone();
            text.push_str(&shingled_sim::report::series::csv_rows(group, &r));
        }
        crate::out::file(path, text)?;
        plot::wrote(path, &format!("metrics over time of {} run(s), {windows} windows, as CSV", runs.len()));
        return Ok(());
    }
    let mut groups: Vec<&str> = Vec::new();
    for (g, _, _) in runs {
        if !groups.contains(&g.as_str()) {
            groups.push(g);
        }
    }
    let interval = runs.iter().find_map(|(_, _, r)| r.config.interval);
    // Each window at its end: seconds of trace time, or the number of its last request.
    let seconds = match interval {
        Some(Interval::Seconds(s)) => Some(s),
        _ => None,
    };
    let x_label = if seconds.is_some() { "trace time (s)" } else { "trace requests" };
    let x_of = |w: &Window| seconds.map_or(w.last_request as f64, |s| (w.index + 1) as f64 * s);
    type Metric = (&'static str, &'static str, fn(&Window) -> Option<f64>);
    let metrics: [Metric; 4] = [
        ("hit ratio per window", "hit ratio", |w| w.hit_ratio),
        ("RMWs per window", "RMWs", |w| Some(w.rmws as f64)),
        ("PB fill at the window's end", "valid blocks / PB slots", |w| w.pb_fill),
        ("modelled time per window", "I/O time (s)", |w| Some(w.time_s)),
    ];
    let mut panels = Vec::new();
    for g in &groups {
        for (title, y_label, value) in &metrics {
            let series: Vec<shingled_bench::Series> = runs
                .iter()
                .filter(|(rg, _, _)| rg == g)
                .map(|(_, label, r)| shingled_bench::Series {
                    name: label.clone(),
                    x_label: x_label.into(),
                    y_label: y_label.to_string(),
                    points: r
                        .series
                        .iter()
                        .flatten()
                        .filter_map(|w| value(w).map(|y| (x_of(w), y)))
                        .collect(),
                    paper: Vec::new(),
                    paper_fitted: false,
                })
                .collect();
            // A run without points here (no PB: PB fill) keeps its place, so that each run has
            // the same colour in every panel.
            if series.iter().all(|s| s.points.is_empty()) {
                continue;
            }
            let title = if g.is_empty() { title.to_string() } else { format!("{g}: {title}") };
            panels.push(plot::Panel::lines(title, series, false, false));
        }
    }
    let every = match interval {
        Some(Interval::Seconds(s)) => format!("a window every {s} s of trace time"),
        Some(Interval::Requests(n)) => format!("a window every {n} requests"),
        None => String::new(),
    };
    let mut subtitle = vec![every];
    subtitle.extend(context.iter().cloned());
    let n = panels.len();
    let fig = plot::Figure {
        title: format!("Metrics over time: {what}"),
        subtitle,
        notes: Vec::new(),
        // One group: the four panels two by two; several: a row of panels per group.
        cols: if groups.len() == 1 { 2 } else { metrics.len() },
        panels,
    };
    plot::draw(path, &fig).with_context(|| format!("--series {}", path.display()))?;
    plot::wrote(path, &format!("metrics over time of {} run(s), {n} panels", runs.len()));
    Ok(())
}
