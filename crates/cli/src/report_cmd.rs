//! `shingled report`: the tables and figures of one experiment or comparison, as a Markdown or
//! HTML page with PNG bar charts beside it.
//!
//! The report runs the experiment (`--experiment NAME [--on TRACE]...`) or the comparison (the
//! default, like `shingled compare`), or reads the JSON that `shingled experiment|compare
//! --output json` wrote (`--from FILE`). It writes into `--out DIR`: `report.md` or
//! `report.html`, `results.json` (what was run, to regenerate the report with `--from`) and
//! `total_time.png`, `hit_ratio.png`, `wa.png`, `rmws.png`: one bar per row, grouped by trace.

use crate::common_args::SimArgs;
use crate::plot::{BarSeries, Figure, PanelKind};
use anyhow::{bail, Context, Result};
use clap::{Args, ValueEnum};
use shingled_sim::experiments::{self, Cell, Column, Experiment, ExperimentReport};
use shingled_sim::paper::{claims_rows, CLAIMS_HEADER, CLAIMS_RULES};
use shingled_sim::report::{breakdown_sections, column_value, human_bytes};
use shingled_sim::{CompareReport, RunReport};
use std::fmt::Write;
use std::path::{Path, PathBuf};

#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, ValueEnum)]
pub enum ReportFormat {
    /// Markdown (GitHub tables, images linked).
    #[default]
    Md,
    /// A standalone HTML page (images linked).
    Html,
}

#[derive(Args, Debug)]
pub struct ReportCmd {
    /// Run this experiment (`shingled experiment list`); default: compare the schemes on --trace.
    #[arg(long, conflicts_with = "from")]
    pub experiment: Option<String>,
    /// Traces of the experiment (repeatable); default: the experiment's synthetic profiles.
    #[arg(long = "on", value_name = "TRACE", requires = "experiment")]
    pub on: Vec<String>,
    /// Comma-separated schemes of the comparison (as `shingled compare --schemes`).
    #[arg(long, conflicts_with_all = ["experiment", "from"])]
    pub schemes: Option<String>,
    /// Report on this JSON (`shingled experiment|compare --output json`) instead of running.
    #[arg(long, value_name = "FILE")]
    pub from: Option<PathBuf>,
    /// Simulations run in parallel (default: the number of cores).
    #[arg(long, short)]
    pub jobs: Option<usize>,
    /// Page format (`--format` is the trace format, as in `sim`).
    #[arg(long = "report-format", value_enum, default_value_t = ReportFormat::Md)]
    pub report_format: ReportFormat,
    /// Directory to write the report and its figures into (created if missing): results.json,
    /// report.md or report.html, and total_time.png, hit_ratio.png, wa.png, rmws.png for the
    /// metrics some run has. Each file written is printed on stderr.
    #[arg(long, short)]
    pub out: PathBuf,
    /// Curve forms of experiments (`--experiment NAME-curve`): how the points are sampled and
    /// checked, as for `shingled curve`.
    #[command(flatten)]
    pub sampling: crate::curve_cmd::SamplingArgs,
    /// The run's configuration, as for `shingled compare` (ignored with --from).
    #[command(flatten)]
    pub sim: SimArgs,
}

/// The figures: file name, title, y axis, and the value plotted per run.
type Metric = fn(&RunReport) -> Option<f64>;
const FIGURES: &[(&str, &str, &str, Metric)] = &[
    ("total_time.png", "Total I/O time", "seconds", |r| Some(r.total.total_time_s)),
    ("hit_ratio.png", "Hit ratio", "hits / block accesses", |r| r.total.hit_ratio),
    ("wa.png", "Write amplification", "WA", |r| r.total.write_amplification),
    ("rmws.png", "Band read-modify-writes", "RMWs", |r| Some(r.total.counters.drive.rmws as f64)),
];

/// The comparison's columns (those of `shingled compare`).
const COMPARE_COLUMNS: &[Column] = &[
    Column::TotalTime,
    Column::SsdTime,
    Column::DriveReadTime,
    Column::DriveWriteTime,
    Column::VsSmrOnly,
    Column::VsCmrOnly,
    Column::VsLru,
    Column::ReadHit,
    Column::WriteHit,
    Column::Wa,
    Column::DevWa,
    Column::Rmws,
];

/// A comparison as a one-trace experiment, so that both render alike.
pub fn from_compare(c: CompareReport) -> ExperimentReport {
    let cells = c
        .runs
        .iter()
        .map(|r| Cell { trace: c.trace_path.clone(), label: r.label.clone(), config: r.config.clone() })
        .collect();
    ExperimentReport {
        experiment: Experiment {
            name: "compare".into(),
            title: format!("Comparison of cache schemes on {}", c.trace_path),
            cells,
            columns: COMPARE_COLUMNS.to_vec(),
            setup: c.setup,
            curve: None,
            winners: false,
        },
        runs: c.runs,
        traces: vec![c.trace],
        paper: c.paper,
        curves: Vec::new(),
        winners: Vec::new(),
    }
}

/// Reads an experiment or comparison report written with `--output json`.
pub fn load(path: &Path) -> Result<ExperimentReport> {
    let text = std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    let v: serde_json::Value =
        serde_json::from_str(&text).with_context(|| format!("{}: not JSON", path.display()))?;
    if v.get("experiment").is_some() {
        serde_json::from_value(v).with_context(|| format!("{}: not an experiment report", path.display()))
    } else if v.get("trace_path").is_some() {
        let c: CompareReport = serde_json::from_value(v)
            .with_context(|| format!("{}: not a comparison report", path.display()))?;
        Ok(from_compare(c))
    } else {
        bail!(
            "{}: neither `shingled experiment --output json` nor `shingled compare --output json`",
            path.display()
        )
    }
}

/// The distinct traces in order of first appearance, each with its runs.
fn groups(e: &ExperimentReport) -> Vec<(&str, Vec<&RunReport>)> {
    let mut out: Vec<(&str, Vec<&RunReport>)> = Vec::new();
    for (cell, run) in e.experiment.cells.iter().zip(&e.runs) {
        match out.iter_mut().find(|(t, _)| *t == cell.trace) {
            Some((_, runs)) => runs.push(run),
            None => out.push((&cell.trace, vec![run])),
        }
    }
    out
}

/// The columns of the report's tables: the experiment's, then those of the charts it lacks
/// (hit ratio, WA, RMWs), so every charted number is in a table too.
fn columns(e: &ExperimentReport) -> Vec<Column> {
    let mut cols = e.experiment.columns.clone();
    for c in [Column::TotalTime, Column::HitRatio, Column::Wa, Column::DevWa, Column::Rmws] {
        if !cols.contains(&c) {
            cols.push(c);
        }
    }
    cols
}

/// Header and rows of the table of one trace (the columns of `shingled experiment`, and the
/// charted ones).
fn table(e: &ExperimentReport, runs: &[&RunReport]) -> (Vec<String>, Vec<Vec<String>>) {
    let cols = columns(e);
    let mut header = vec!["scheme".to_string()];
    header.extend(cols.iter().map(|c| c.header().to_string()));
    let rows = runs
        .iter()
        .map(|r| {
            let mut row = vec![r.label.clone()];
            row.extend(cols.iter().map(|&c| column_value(c, r, runs)));
            row
        })
        .collect();
    (header, rows)
}

fn md_cell(s: &str) -> String {
    s.replace('|', "\\|")
}

fn html_escape(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

/// One line about the trace and the sizes of its runs.
fn trace_line(e: &ExperimentReport, gi: usize, n_groups: usize, runs: &[&RunReport]) -> String {
    let mut s = String::new();
    // Traces are measured once per distinct (trace, band layout); match them only when that is
    // one per group.
    if e.traces.len() == n_groups {
        let t = &e.traces[gi];
        let (written, accessed, bands) = shingled_sim::report::ranges(runs, t);
        let _ = write!(
            s,
            "{} requests ({} 4 KiB pages), writes {:.1}% of pages, written range {}, accessed range {} (bands {bands}). ",
            t.requests,
            t.pages,
            t.write_pct_pages,
            human_bytes(written),
            human_bytes(accessed)
        );
    }
    if let Some(first) = runs.first() {
        let _ = write!(s, "Mode {}, drive {}", first.mode, first.drive);
        let cache = runs.iter().map(|r| r.sizing.cache_blocks).max().unwrap_or(0);
        if cache > 0 {
            let _ = write!(s, ", cache up to {cache} blocks ({})", human_bytes(cache * 4096));
        }
        if let Some(pb) = first.sizing.pb_blocks {
            let _ = write!(s, ", PB {pb} blocks");
        }
        s.push('.');
    }
    s
}

/// Appends one table in `format`.
fn emit_table(out: &mut String, format: ReportFormat, header: &[String], rows: &[Vec<String>]) {
    match format {
        ReportFormat::Md => {
            let _ =
                writeln!(out, "| {} |", header.iter().map(|h| md_cell(h)).collect::<Vec<_>>().join(" | "));
            let rule: Vec<&str> = (0..header.len()).map(|i| if i == 0 { "---" } else { "---:" }).collect();
            let _ = writeln!(out, "|{}|", rule.join("|"));
            for r in rows {
                let _ = writeln!(out, "| {} |", r.iter().map(|c| md_cell(c)).collect::<Vec<_>>().join(" | "));
            }
            out.push('\n');
        }
        ReportFormat::Html => {
            out.push_str("<table>\n<tr>");
            for h in header {
                let _ = write!(out, "<th>{}</th>", html_escape(h));
            }
            out.push_str("</tr>\n");
            for r in rows {
                out.push_str("<tr>");
                for c in r {
                    let _ = write!(out, "<td>{}</td>", html_escape(c));
                }
                out.push_str("</tr>\n");
            }
            out.push_str("</table>\n");
        }
    }
}

/// Appends a heading of level 2 or 3 and a paragraph.
fn emit_heading(out: &mut String, format: ReportFormat, level: u8, title: &str, text: &str) {
    match format {
        ReportFormat::Md => {
            let _ = writeln!(out, "{} {title}\n", "#".repeat(level as usize));
            if !text.is_empty() {
                let _ = writeln!(out, "{text}\n");
            }
        }
        ReportFormat::Html => {
            let _ = writeln!(out, "<h{level}>{}</h{level}>", html_escape(title));
            if !text.is_empty() {
                let _ = writeln!(out, "<p>{}</p>", html_escape(text));
            }
        }
    }
}

/// Renders the page (Markdown or HTML) linking `figures`: per trace, the experiment's table and
/// where the time went; then the paper's figures beside ours, and the charts.
pub fn render(e: &ExperimentReport, format: ReportFormat, figures: &[(&str, &str)]) -> String {
    let groups = groups(e);
    let mut out = String::new();
    let title = format!("shingled report: {}", e.experiment.name);
    let speedups =
        columns(e).iter().any(|c| matches!(c, Column::VsSmrOnly | Column::VsCmrOnly | Column::VsLru));
    let mut intro = format!(
        "{}. Times are modelled I/O times (s) of the whole run{}",
        e.experiment.title,
        if speedups {
            "; a speed-up (vs SMR-only, CMR-only, LRU) is the reference's total time divided by the row's."
        } else {
            "."
        }
    );
    if !e.experiment.setup.is_empty() {
        let _ = write!(intro, " {}.", e.experiment.setup);
    }
    match format {
        ReportFormat::Md => {
            let _ = writeln!(out, "# {title}\n\n{intro}\n");
        }
        ReportFormat::Html => {
            let _ = writeln!(
                out,
                "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>{}</title>\n\
                 <style>body{{font-family:sans-serif;max-width:1200px;margin:2em auto}}\
                 table{{border-collapse:collapse;margin:1em 0}}th,td{{border:1px solid #ccc;padding:4px 8px}}\
                 td{{text-align:right}}td:first-child{{text-align:left}}th{{background:#f3f3f3}}\
                 img{{max-width:100%}}</style>\n</head>\n<body>\n<h1>{}</h1>\n<p>{}</p>",
                html_escape(&title),
                html_escape(&title),
                html_escape(&intro)
            );
        }
    }
    for (gi, (trace, runs)) in groups.iter().enumerate() {
        let heading = match format {
            ReportFormat::Md => format!("Trace `{trace}`"),
            ReportFormat::Html => format!("Trace {trace}"),
        };
        emit_heading(&mut out, format, 2, &heading, &trace_line(e, gi, groups.len(), runs));
        let (header, rows) = table(e, runs);
        emit_table(&mut out, format, &header, &rows);
        // A curve form: how its points were obtained; sampled runs carry no time breakdown.
        if let Some(c) = e.curves.iter().find(|c| c.trace == *trace) {
            let summary = shingled_sim::report::curve_summary(c);
            match format {
                ReportFormat::Md => {
                    let _ = writeln!(out, "```text\n{}```\n", summary);
                }
                ReportFormat::Html => {
                    let _ = writeln!(out, "<pre>{}</pre>", html_escape(&summary));
                }
            }
            if c.rate < 1.0 {
                continue;
            }
        }
        emit_heading(
            &mut out,
            format,
            3,
            "Where the time went (s)",
            "Foreground, background and mechanism, each adding up to its total (docs/metrics.md).",
        );
        for sec in breakdown_sections(runs) {
            match format {
                ReportFormat::Md => {
                    let _ = writeln!(out, "{}\n", md_cell(&sec.title));
                }
                ReportFormat::Html => {
                    let _ = writeln!(out, "<p>{}</p>", html_escape(&sec.title));
                }
            }
            emit_table(&mut out, format, &sec.header, &sec.rows);
        }
    }
    emit_heading(&mut out, format, 2, "Metrics", "");
    match format {
        ReportFormat::Md => {
            let _ = writeln!(out, "```text\n{}```\n", shingled_sim::report::WA_FOOTER);
        }
        ReportFormat::Html => {
            let _ = writeln!(out, "<pre>{}</pre>", html_escape(shingled_sim::report::WA_FOOTER));
        }
    }
    if !e.paper.is_empty() {
        emit_heading(
            &mut out,
            format,
            2,
            "The paper's figures beside ours",
            &format!(
                "Independent checks: none of these figures was used to fit the model (its fits, to \
                 the papers' drive measurements and Table I, are in docs/drive-models.md and \
                 docs/synthetic-traces.md). The {CLAIMS_RULES}."
            ),
        );
        let header: Vec<String> = CLAIMS_HEADER.iter().map(|s| s.to_string()).collect();
        emit_table(&mut out, format, &header, &claims_rows(&e.paper));
    }
    if !figures.is_empty() {
        match format {
            ReportFormat::Md => {
                out.push_str("## Figures\n\n");
                for (file, title) in figures {
                    let _ = writeln!(out, "![{title}]({file})\n");
                }
            }
            ReportFormat::Html => {
                out.push_str("<h2>Figures</h2>\n");
                for (file, title) in figures {
                    let _ = writeln!(
                        out,
                        "<figure><img src=\"{}\" alt=\"{t}\"><figcaption>{t}</figcaption></figure>",
                        html_escape(file),
                        t = html_escape(title)
                    );
                }
            }
        }
    }
    if let ReportFormat::Html = format {
        out.push_str("</body>\n</html>\n");
    }
    out
}

/// What the WA chart's bars are, under it.
const WA_NOTE: &str = "WA (write amplification) = band bytes written / bytes cleaned out of the persistent \
     buffer (PORE §V-C); a scheme whose drive never cleans a band has none.";

/// Draws the figures into `dir`; returns (file, title) of each written (a metric no run has,
/// such as the hit ratio of a comparison of baselines only, is left out).
pub fn figures(e: &ExperimentReport, dir: &Path) -> Result<Vec<(&'static str, &'static str)>> {
    let groups = groups(e);
    let mut categories: Vec<String> = Vec::new();
    for (_, runs) in &groups {
        for r in runs {
            if !categories.contains(&r.label) {
                categories.push(r.label.clone());
            }
        }
    }
    // What every chart ran: its traces, the modes of its runs and the set-up.
    let mut modes: Vec<&str> = Vec::new();
    for r in &e.runs {
        if !modes.contains(&r.config.mode.name()) {
            modes.push(r.config.mode.name());
        }
    }
    let replay =
        if e.runs.iter().any(|r| r.config.replay == shingled_sim::Replay::Open) { "open" } else { "closed" };
    let context = vec![
        format!(
            "trace{} {} | {} mode | {replay} replay",
            if groups.len() == 1 { "" } else { "s" },
            groups.iter().map(|(t, _)| t.to_string()).collect::<Vec<_>>().join(", "),
            modes.join(", ")
        ),
        e.experiment.setup.clone(),
    ];
    let mut written = Vec::new();
    for &(file, title, y_label, metric) in FIGURES {
        let series: Vec<BarSeries> = groups
            .iter()
            .map(|(trace, runs)| BarSeries {
                name: trace.to_string(),
                values: categories
                    .iter()
                    .map(|c| runs.iter().find(|r| &r.label == c).and_then(|r| metric(r)))
                    .collect(),
            })
            .collect();
        if series.iter().all(|s| s.values.iter().all(Option::is_none)) {
            continue;
        }
        let what = if e.experiment.name == "compare" {
            e.experiment.title.clone()
        } else {
            format!("experiment {}: {}", e.experiment.name, e.experiment.title)
        };
        let mut fig = Figure::single(
            format!("{title}: {what}"),
            PanelKind::Bars { y_label: y_label.to_string(), categories: categories.clone(), series },
        );
        fig.subtitle = context.clone();
        if file == "wa.png" {
            fig.notes.push(WA_NOTE.into());
        }
        crate::plot::draw(&dir.join(file), &fig).with_context(|| format!("drawing {file}"))?;
        written.push((file, title));
    }
    Ok(written)
}

fn run_report(a: &ReportCmd) -> Result<ExperimentReport> {
    let sampling = a.sampling.given();
    if let Some(p) = &a.from {
        if !sampling.is_empty() {
            bail!("{} cannot apply to a report read with --from (its runs are done)", sampling.join(", "));
        }
        return load(p);
    }
    let jobs = crate::common_args::jobs(a.jobs)?;
    let sim = &a.sim;
    let base = sim.to_config()?;
    if let Some(name) = &a.experiment {
        let opts = experiments::ExperimentOptions {
            mode: sim.mode.as_ref().map(|_| base.mode),
            paper_setup: !sim.chose_drive(),
            base,
            traces: a.on.clone(),
        };
        let mut plan = experiments::plan(name, &opts)?;
        if let Some(o) = &mut plan.curve {
            a.sampling.apply(o)?;
            let bar = crate::progress::Reporter::curve(name);
            let stop = std::sync::atomic::AtomicBool::new(false);
            let r = experiments::run_curve_experiment(plan, jobs, &|p| bar.update_curve(p), &stop)?;
            bar.finish();
            return Ok(r);
        }
        let given = a.sampling.given();
        if !given.is_empty() {
            bail!("{} applies to the curve forms of experiments (NAME-curve) only", given.join(", "));
        }
        let bar = crate::progress::Reporter::runs(name);
        let r = experiments::run_experiment_with(plan, jobs, &|p| bar.update(p))?;
        bar.finish();
        return Ok(r);
    }
    if !sampling.is_empty() {
        bail!(
            "{} applies to the curve forms of experiments (--experiment NAME-curve) only",
            sampling.join(", ")
        );
    }
    let mut cfg = base;
    if let Some(s) = &a.schemes {
        cfg.compare.schemes = s.split(',').map(|x| x.trim().to_string()).filter(|x| !x.is_empty()).collect();
    }
    if cfg.compare.schemes.is_empty() {
        bail!("--schemes names no scheme");
    }
    let bar = crate::progress::Reporter::runs(&format!("compare on {}", cfg.trace.path));
    let c = shingled_sim::compare_with(&cfg, jobs, &|p| bar.update(p))
        .with_context(|| format!("comparing on {}", cfg.trace.path))?;
    bar.finish();
    Ok(from_compare(c))
}

/// Checks before running that `--out` is (or can be made) a directory whose files can be
/// written, so a mistyped output does not cost the whole experiment.
fn check_out_dir(dir: &std::path::Path) -> Result<()> {
    match std::fs::metadata(dir) {
        Ok(m) if !m.is_dir() => bail!(
            "--out {}: not a directory (the report is written as files into a directory: \
             results.json, the page and its charts)",
            dir.display()
        ),
        _ => {}
    }
    std::fs::create_dir_all(dir)
        .with_context(|| format!("--out {}: creating the directory", dir.display()))?;
    crate::out::check("--out", &dir.join("results.json"))
}

pub fn run(a: ReportCmd) -> Result<()> {
    check_out_dir(&a.out)?;
    let e = run_report(&a)?;
    if e.runs.is_empty() {
        bail!("the report has no runs");
    }
    let json = serde_json::to_string_pretty(&e)? + "\n";
    let json_path = a.out.join("results.json");
    // Regenerating from the directory's own results.json must not truncate it first.
    if a.from.as_deref().map(|p| p.canonicalize().ok() != json_path.canonicalize().ok()).unwrap_or(true) {
        crate::out::file(&json_path, json)?;
    }
    let figs = figures(&e, &a.out)?;
    let (name, page) = match a.report_format {
        ReportFormat::Md => ("report.md", render(&e, ReportFormat::Md, &figs)),
        ReportFormat::Html => ("report.html", render(&e, ReportFormat::Html, &figs)),
    };
    let page_path = a.out.join(name);
    crate::out::file(&page_path, page)?;
    if a.from.as_deref().map(|p| p.canonicalize().ok() != json_path.canonicalize().ok()).unwrap_or(true) {
        crate::plot::wrote(&json_path, &format!("{} runs", e.runs.len()));
    }
    for (file, title) in &figs {
        crate::plot::wrote(&a.out.join(file), title);
    }
    crate::plot::wrote(&page_path, &format!("{} runs, {} figures", e.runs.len(), figs.len()));
    Ok(())
}
