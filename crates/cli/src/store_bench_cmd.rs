//! `shingled store bench <name>`: the chunk store benchmarks of `shingled_bench::store`
//! (SMRSTORE Figs. 14, 16, 19–21, Table 3, §6.5), printed as a table, CSV or JSON, with PNG
//! plots on request.

use crate::output::{Output, OutputArgs};
use crate::plot;
use anyhow::{bail, Context, Result};
use clap::Args;
use shingled_bench::store::{self as bench, StoreBenchOptions, StoreBenchReport};
use shingled_bench::Series;
use std::path::{Path, PathBuf};

/// Store benchmark arguments.
#[derive(Args, Debug)]
pub struct StoreBenchArgs {
    /// Bench: write, read, macro, recovery, memory, cpu, all (or `list`).
    pub name: String,
    /// Fraction of the documented sizes (1 = docs/benchmarks.md; 0.01 for a quick look).
    #[arg(long, default_value_t = 1.0)]
    pub scale: f64,
    /// Seed of every random choice.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Chunks appended concurrently (interleaved in one thread) in write, read and cpu.
    #[arg(long, default_value_t = 8)]
    pub streams: usize,
    /// Directory for the device files and chunk files (default: the system temp dir). Put it
    /// on the file system you mean to measure.
    #[arg(long, value_name = "DIR")]
    pub dir: Option<PathBuf>,
    /// Rounds of every wall-clock cell of `write` (engine, raw device and files interleaved in
    /// each); each cell reports its median time. 1 to 1000.
    #[arg(long, default_value_t = 1)]
    pub rounds: u32,
    /// The report (`--output csv`: the main table of each bench).
    #[command(flatten)]
    pub report: OutputArgs,
    /// Draw the plots as one PNG at FILE (a .png name): one panel per plot of every bench run,
    /// under a title naming the benches and their set-up. The file written is printed.
    #[arg(long, value_name = "FILE")]
    pub png: Option<PathBuf>,
}

/// Runs `shingled store bench`.
pub fn run(a: StoreBenchArgs) -> Result<()> {
    if a.name == "list" {
        for (name, what) in bench::BENCHES {
            println!("{name:<10} {what}");
        }
        return Ok(());
    }
    if !(1..=1000).contains(&a.rounds) {
        bail!("--rounds {} is out of range: 1 to 1000", a.rounds);
    }
    if !(a.scale > 0.0 && a.scale.is_finite()) {
        bail!("--scale {} must be a positive number", a.scale);
    }
    a.report.check()?;
    if let Some(p) = &a.png {
        plot::png_output(p).map_err(|e| anyhow::anyhow!("--png {e}"))?;
    }
    let opts = StoreBenchOptions {
        scale: a.scale,
        seed: a.seed,
        streams: a.streams,
        dir: a.dir.clone(),
        rounds: a.rounds as usize,
    };
    let names: Vec<&str> =
        if a.name == "all" { bench::BENCHES.iter().map(|b| b.0).collect() } else { vec![a.name.as_str()] };
    let mut reports = Vec::new();
    for name in names {
        eprintln!("running store bench {name} (scale {})...", a.scale);
        let r = bench::run(name, &opts).with_context(|| format!("store bench {name}"))?;
        reports.push(r);
    }
    if let Some(file) = &a.png {
        plots(&reports, file, a.scale)?;
    }
    let text = match a.report.format() {
        Output::Table => reports.iter().map(StoreBenchReport::to_text).collect::<Vec<_>>().join("\n"),
        Output::Csv => reports.iter().map(|r| r.table.to_csv()).collect::<Vec<_>>().join("\n"),
        Output::Json => {
            let v = if reports.len() == 1 {
                serde_json::to_string_pretty(&reports[0])?
            } else {
                serde_json::to_string_pretty(&reports)?
            };
            v + "\n"
        }
    };
    a.report.emit(&text)
}

/// Draws every plot of `reports` as one PNG at `file`: one panel per plot (lines, or grouped
/// bars over categories), the benches' titles and first notes (device, sizes) above.
fn plots(reports: &[StoreBenchReport], file: &Path, scale: f64) -> Result<()> {
    let mut panels = Vec::new();
    for r in reports {
        for p in &r.plots {
            if p.curves.iter().all(|c| c.points.is_empty()) {
                continue;
            }
            let kind = if p.categories.is_empty() {
                let series: Vec<Series> = p
                    .curves
                    .iter()
                    .map(|c| Series {
                        name: c.name.clone(),
                        x_label: p.x_label.clone(),
                        y_label: p.y_label.clone(),
                        points: c.points.clone(),
                        paper: Vec::new(),
                        paper_fitted: false,
                    })
                    .collect();
                plot::PanelKind::Lines {
                    series,
                    validated: Vec::new(),
                    overlay: Vec::new(),
                    log_x: false,
                    log_y: false,
                }
            } else {
                let series: Vec<plot::BarSeries> = p
                    .curves
                    .iter()
                    .map(|c| {
                        let mut values = vec![None; p.categories.len()];
                        for &(i, y) in &c.points {
                            if let Some(v) = values.get_mut(i as usize) {
                                *v = Some(y);
                            }
                        }
                        plot::BarSeries { name: c.name.clone(), values }
                    })
                    .collect();
                plot::PanelKind::Bars { y_label: p.y_label.clone(), categories: p.categories.clone(), series }
            };
            panels.push(plot::Panel { title: format!("{}: {}", r.bench, p.title), kind });
        }
    }
    if panels.is_empty() {
        bail!("--png {}: the bench drew no plot", file.display());
    }
    let names: Vec<&str> = reports.iter().map(|r| r.bench.as_str()).collect();
    let mut subtitle: Vec<String> = reports.iter().map(|r| r.title.clone()).collect();
    if let Some(first) = reports.first().and_then(|r| r.notes.first()) {
        subtitle.push(first.clone());
    }
    let n = panels.len();
    let fig = plot::Figure {
        title: format!("store bench {} (scale {scale})", names.join(", ")),
        subtitle,
        notes: Vec::new(),
        cols: n.min(2),
        panels,
    };
    plot::draw(file, &fig).with_context(|| format!("plotting {}", file.display()))?;
    plot::wrote(file, &format!("{n} panel(s)"));
    Ok(())
}
