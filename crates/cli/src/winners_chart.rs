//! `experiment --png FILE` for the experiments that name their winners (`pore-regimes`): one
//! heat map per metric (RMWs, WA, total time), a row per trace and a column per scheme, each cell
//! its value over the row's best cached scheme.

use crate::plot::{Figure, Panel, PanelKind};
use anyhow::{bail, Result};
use shingled_sim::experiments::{ExperimentReport, WINNER_METRICS};
use std::path::Path;

/// The three heat maps of `e` as one PNG at `path`.
pub fn draw(e: &ExperimentReport, path: &Path) -> Result<()> {
    if !e.experiment.winners {
        bail!("--png: experiment {} names no winners to draw", e.experiment.name);
    }
    let rows = e.experiment.traces();
    let mut cols: Vec<&str> = Vec::new();
    for (c, r) in e.experiment.cells.iter().zip(&e.runs) {
        if r.config.cache.is_some() && !cols.contains(&c.label.as_str()) {
            cols.push(&c.label);
        }
    }
    let titles = [("rmws", "RMWs"), ("wa", "write amplification"), ("time", "total I/O time")];
    let mut panels = Vec::new();
    for (metric, value) in WINNER_METRICS {
        let values: Vec<Vec<Option<f64>>> = rows
            .iter()
            .map(|t| {
                let of = |label: &str| {
                    e.experiment
                        .cells
                        .iter()
                        .zip(&e.runs)
                        .find(|(c, r)| c.trace == *t && c.label == label && r.config.cache.is_some())
                        .and_then(|(_, r)| value(r))
                };
                let best = cols.iter().filter_map(|l| of(l)).fold(f64::INFINITY, f64::min);
                cols.iter().map(|l| of(l).map(|v| if best > 0.0 { v / best } else { 1.0 })).collect()
            })
            .collect();
        let name = titles.iter().find(|(m, _)| *m == metric).map_or(metric, |(_, n)| n);
        panels.push(Panel {
            title: format!("{name}: each scheme over its row's best"),
            kind: PanelKind::Heat {
                rows: rows.iter().map(|s| s.to_string()).collect(),
                cols: cols.iter().map(|s| s.to_string()).collect(),
                values,
            },
        });
    }
    let fig = Figure {
        title: format!("experiment {}: {}", e.experiment.name, e.experiment.title),
        subtitle: vec![e.experiment.setup.clone()],
        notes: vec![
            "best = the row's lowest value among the cached schemes; xN = N times it; blank: not run on that trace"
                .to_string(),
        ],
        panels,
        cols: 1,
    };
    crate::plot::draw(path, &fig)?;
    crate::plot::wrote(path, "winners: heat maps of RMWs, WA and time");
    Ok(())
}
