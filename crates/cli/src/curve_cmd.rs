//! `shingled curve`: hit ratio, WA, RMWs and I/O time over cache (and PB) sizes, from sampled
//! mini-simulations (`shingled_sim::curve`), with LRU's exact hit-ratio curve and optional
//! validation against full simulations.

use crate::common_args::{split_policies, SimArgs};
use crate::output::{Output, OutputArgs};
use anyhow::{bail, Context, Result};
use clap::Args;
use shingled_core::{SizeSpec, BLOCK_SIZE};
use shingled_sim::curve::{CurveOptions, CurvePoint, CurveReport, PointMetrics};
use std::path::PathBuf;

/// The cache sizes of a curve given no `--cache-size` (and no `--pb-size` list): PORE's and
/// SAC's studies go from a fraction of a percent to ten percent of the footprint.
pub const DEFAULT_SIZES: &str = "0.25%,0.5%,1%,1.5%,2%,3%,4%,6%,8%,10%";

#[derive(Args, Debug)]
pub struct CurveCmd {
    /// Trace, drive, mode and the other simulation flags, as for `sim`. `--policy`,
    /// `--cache-size` and `--pb-size` take comma-separated lists: every policy gets every
    /// combination of sizes. Default sizes: 0.25% to 10% of the footprint. `--warmup W` reports
    /// every point (and the validated full runs) after warm-up W, as `sim`'s after-warmup
    /// window; without it, over the whole replay.
    #[command(flatten)]
    pub sim: SimArgs,
    #[command(flatten)]
    pub sampling: SamplingArgs,
    /// Simulations run in parallel (default: the number of cores).
    #[arg(long, short)]
    pub jobs: Option<usize>,
    #[command(flatten)]
    pub report: OutputArgs,
    /// Also draw the curves as one PNG at exactly FILE: a panel for the hit ratio and, above a
    /// DM-SMR drive, panels for WA, RMWs and I/O time, under a title naming the trace, mode and
    /// set-up. Validated points (full runs) are hollow squares. The file written is printed on
    /// stderr.
    #[arg(long)]
    pub png: Option<PathBuf>,
}

/// How a curve's points are sampled and checked (`shingled curve`, and the curve forms of
/// `shingled experiment`).
#[derive(Args, Debug, Clone, Default)]
pub struct SamplingArgs {
    /// Sampling rate: a fraction of the bands (0.1, 10%) or auto (the smallest rate keeping a
    /// few hundred bands and a cache of 4096 blocks). 1 runs every point in full. Default auto.
    #[arg(long)]
    pub rate: Option<String>,
    /// Sampling unit: band (the drive's bands) or zone:SIZE (aligned zones, e.g. zone:20MiB).
    /// Default band.
    #[arg(long)]
    pub unit: Option<String>,
    /// How bands are chosen: stratified (every 1/rate-th band in order of traffic, from a seeded
    /// offset; one more pass over the trace) or hash (SHARDS' seeded hash of the band). Default
    /// stratified.
    #[arg(long)]
    pub sampling: Option<String>,
    /// Samples averaged per point: the best-balanced distinct stratified samples (hash: seeds
    /// seed, seed+1, …). Default 1.
    #[arg(long)]
    pub samples: Option<u32>,
    /// Seed of the first sample. Default 0.
    #[arg(long)]
    pub seed: Option<u64>,
    /// Also run the full simulation at this many points spread over the grid and print each
    /// metric's error. Default 0.
    #[arg(long)]
    pub validate: Option<usize>,
}

impl SamplingArgs {
    /// The flags given, as the user wrote them.
    pub fn given(&self) -> Vec<&'static str> {
        let a = self;
        [
            (a.rate.is_some(), "--rate"),
            (a.unit.is_some(), "--unit"),
            (a.sampling.is_some(), "--sampling"),
            (a.samples.is_some(), "--samples"),
            (a.seed.is_some(), "--seed"),
            (a.validate.is_some(), "--validate"),
        ]
        .into_iter()
        .filter_map(|(g, f)| g.then_some(f))
        .collect()
    }

    /// Sets the sampling fields of `o` the flags give.
    pub fn apply(&self, o: &mut CurveOptions) -> Result<()> {
        if let Some(r) = &self.rate {
            o.rate = r.parse().map_err(|e| anyhow::anyhow!("--rate: {e}"))?;
        }
        if let Some(u) = &self.unit {
            o.unit = u.parse().map_err(|e| anyhow::anyhow!("--unit: {e}"))?;
        }
        if let Some(s) = &self.sampling {
            o.sampling = s.parse().map_err(|e| anyhow::anyhow!("--sampling: {e}"))?;
        }
        if let Some(n) = self.samples {
            if n == 0 {
                bail!("--samples must be at least 1");
            }
            o.samples = n;
        }
        if let Some(s) = self.seed {
            o.seed = s;
        }
        if let Some(v) = self.validate {
            o.validate = v;
        }
        Ok(())
    }
}

fn list(v: &Option<String>) -> Vec<String> {
    v.as_deref()
        .map(|s| s.split(',').map(|x| x.trim().to_string()).filter(|x| !x.is_empty()).collect())
        .unwrap_or_default()
}

fn sizes(flag: &str, v: &[String]) -> Result<Vec<SizeSpec>> {
    v.iter().map(|s| s.parse::<SizeSpec>().map_err(|e| anyhow::anyhow!("--{flag} {s:?}: {e}"))).collect()
}

pub fn run(a: CurveCmd) -> Result<()> {
    a.report.check()?;
    if let Some(p) = &a.png {
        crate::plot::png_output(p).map_err(|e| anyhow::anyhow!("--png {e}"))?;
    }
    if a.sim.no_cache {
        bail!("curve: --no-cache has no cache to size; give --policy (default lru)");
    }
    if a.sim.interval.is_some() {
        bail!("curve: --interval applies to full runs (its points are sampled); use `shingled sim` or `compare`");
    }
    if a.sim.policy.as_deref().is_some_and(|p| split_policies(p).is_empty()) {
        bail!("--policy names no policy");
    }
    let given = |v: &Option<String>| v.is_some() && list(v).is_empty();
    if given(&a.sim.cache_size) {
        bail!("--cache-size names no size");
    }
    if given(&a.sim.pb_size) {
        bail!("--pb-size names no size");
    }
    let policies = a.sim.policy.as_deref().map(split_policies).unwrap_or_else(|| vec!["lru".into()]);
    let pb_sizes = list(&a.sim.pb_size);
    let mut cache_sizes = list(&a.sim.cache_size);
    crate::common_args::no_duplicates("--policy", &policies)?;
    crate::common_args::no_duplicates("--cache-size", &cache_sizes)?;
    crate::common_args::no_duplicates("--pb-size", &pb_sizes)?;
    if cache_sizes.is_empty() && pb_sizes.len() <= 1 {
        cache_sizes = DEFAULT_SIZES.split(',').map(String::from).collect();
    }
    let mut bare = a.sim.clone();
    bare.policy = None;
    bare.cache_size = None;
    bare.pb_size = pb_sizes.first().filter(|_| pb_sizes.len() == 1).cloned();
    let base = bare.to_config()?;
    let mut opts = CurveOptions {
        policies,
        cache_sizes: sizes("cache-size", &cache_sizes)?,
        pb_sizes: if pb_sizes.len() > 1 { sizes("pb-size", &pb_sizes)? } else { Vec::new() },
        jobs: crate::common_args::jobs(a.jobs)?,
        after_warmup: a.sim.warmup.is_some(),
        ..CurveOptions::default()
    };
    a.sampling.apply(&mut opts)?;
    let bar = crate::progress::Reporter::curve(&format!("curve on {}", base.trace.path));
    let stop = std::sync::atomic::AtomicBool::new(false);
    let report = shingled_sim::curve(&base, &opts, &|p| bar.update_curve(p), &stop)
        .with_context(|| format!("curve on {}", base.trace.path))?;
    bar.finish();
    let text = match a.report.format() {
        Output::Table => table(&report),
        Output::Json => serde_json::to_string_pretty(&report)? + "\n",
        Output::Csv => csv(&report),
    };
    a.report.emit(&text)?;
    if let Some(p) = &a.png {
        charts(&report, p)?;
    }
    Ok(())
}

fn gib(blocks: u64) -> f64 {
    (blocks * BLOCK_SIZE) as f64 / (1u64 << 30) as f64
}

fn opt(v: Option<f64>, f: impl Fn(f64) -> String) -> String {
    v.map(f).unwrap_or_else(|| "-".into())
}

fn pct(v: Option<f64>) -> String {
    opt(v, |x| format!("{:.2}", x * 100.0))
}

fn num(v: Option<f64>) -> String {
    opt(v, |x| format!("{x:.0}"))
}

/// The human table: one row per point, then the errors and the cost.
pub fn table(r: &CurveReport) -> String {
    let validated = r.points.iter().any(|p| p.full.is_some());
    let mut header = vec![
        "policy",
        "cache",
        "GiB",
        "PB",
        "method",
        "hit %",
        "exact hit %",
        "WA",
        "dev WA",
        "RMWs",
        "time s",
    ];
    if validated {
        header.extend(["full hit %", "full WA", "full RMWs", "full time s"]);
    }
    let rows: Vec<Vec<String>> = r
        .points
        .iter()
        .map(|p| {
            let m = &p.metrics;
            let mut row = vec![
                p.policy.clone(),
                p.cache_size.clone(),
                format!("{:.2}", gib(p.cache_blocks)),
                p.pb_size.clone().unwrap_or_else(|| "-".into()),
                format!("{:?}", p.method).to_lowercase(),
                pct(m.hit_ratio),
                pct(p.exact_hit_ratio),
                opt(m.write_amplification, |x| format!("{x:.2}")),
                opt(m.device_write_amplification, |x| format!("{x:.2}")),
                num(m.rmws),
                opt(m.total_time_s, |x| format!("{x:.1}")),
            ];
            if validated {
                let f = p.full.clone().unwrap_or_default();
                let shown = p.full.is_some();
                let g = |s: String| if shown { s } else { String::new() };
                row.extend([
                    g(pct(f.hit_ratio)),
                    g(opt(f.write_amplification, |x| format!("{x:.2}"))),
                    g(num(f.rmws)),
                    g(opt(f.total_time_s, |x| format!("{x:.1}"))),
                ]);
            }
            row
        })
        .collect();
    use shingled_core::table::{first_left_rest_right, render, Style};
    let mut out = format!(
        "curve on {} ({} mode, window {}): {} points, {}, {} of {} blocks), {} sample(s)\n",
        r.trace,
        r.mode,
        r.window,
        r.points.len(),
        r.sampling_text(),
        r.blocks_sampled,
        r.blocks_full,
        r.samples
    );
    out.push_str(&render(&first_left_rest_right(header.len()), &header, &rows, &Style::default()));
    out.push('\n');
    out.push_str(shingled_sim::report::WA_FOOTER);
    if validated {
        out.push_str("\nerror of the sampled points against full simulations:\n");
        for e in &r.errors {
            out.push_str(&format!("  {}\n", e.describe()));
        }
    }
    out.push_str(&format!(
        "\ncost: {:.1} s sampled (reading samples and every mini-simulation)",
        r.sampled_cost_s
    ));
    if r.exact_cost_s > 0.0 {
        out.push_str(&format!(", {:.1} s exact LRU curve", r.exact_cost_s));
    }
    if let Some(full) = r.full_cost_s {
        out.push_str(&format!(
            "; full simulations of every point ~{full:.1} s (from the validated runs): {:.1}x cheaper",
            full / r.sampled_cost_s.max(1e-9)
        ));
    }
    out.push('\n');
    out
}

/// One row per point: sizes, method, rate, every metric, the exact hit ratio and the full run's
/// metrics where validated.
pub fn csv(r: &CurveReport) -> String {
    let mut head = vec!["policy", "cache_size", "cache_blocks", "pb_size", "pb_blocks", "method", "rate"]
        .into_iter()
        .map(String::from)
        .collect::<Vec<_>>();
    head.extend(PointMetrics::FIELDS.iter().map(|(n, _)| n.to_string()));
    head.push("exact_hit_ratio".into());
    head.extend(PointMetrics::FIELDS.iter().map(|(n, _)| format!("full_{n}")));
    let mut out = head.join(",") + "\n";
    let f = |v: Option<f64>| v.map(|x| x.to_string()).unwrap_or_default();
    for p in &r.points {
        let quoted = if p.policy.contains(',') { format!("\"{}\"", p.policy) } else { p.policy.clone() };
        let mut row = vec![
            quoted,
            p.cache_size.clone(),
            p.cache_blocks.to_string(),
            p.pb_size.clone().unwrap_or_default(),
            p.pb_blocks.map(|b| b.to_string()).unwrap_or_default(),
            format!("{:?}", p.method).to_lowercase(),
            r.rate.to_string(),
        ];
        row.extend(PointMetrics::FIELDS.iter().map(|(_, g)| f(g(&p.metrics))));
        row.push(f(p.exact_hit_ratio));
        row.extend(PointMetrics::FIELDS.iter().map(|(_, g)| f(p.full.as_ref().and_then(g))));
        out.push_str(&(row.join(",") + "\n"));
    }
    out
}

/// The x value of a point: its cache size in GiB, or its PB size when only PB sizes vary.
fn x_of(r: &CurveReport, p: &CurvePoint) -> f64 {
    let caches: std::collections::BTreeSet<u64> = r.points.iter().map(|p| p.cache_blocks).collect();
    if caches.len() == 1 && p.pb_blocks.is_some() {
        gib(p.pb_blocks.unwrap_or(0))
    } else {
        gib(p.cache_blocks)
    }
}

/// The metrics a curve is drawn for: the hit ratio and, above a DM-SMR drive, WA, RMWs and
/// total I/O time (short name, axis label, getter).
fn metrics(r: &CurveReport) -> Vec<(&'static str, &'static str, shingled_sim::curve::Metric)> {
    let mut out: Vec<(&str, &str, shingled_sim::curve::Metric)> =
        vec![("hit ratio", "hit ratio (%)", |m| m.hit_ratio.map(|x| x * 100.0))];
    if r.points.iter().any(|p| p.metrics.write_amplification.is_some()) {
        out.push(("WA", "write amplification (WA)", |m| m.write_amplification));
        out.push(("RMWs", "band RMWs", |m| m.rmws));
        out.push(("I/O time", "total I/O time (s)", |m| m.total_time_s));
    }
    out
}

/// One panel per metric of `r` (see [`metrics`]), each caption prefixed with `prefix`: the
/// sampled curve of every policy (and PB size when both sizes vary), LRU's exact hit ratio
/// drawn thin and dashed over its sampled one, the validated points' full runs as squares.
pub fn panels(r: &CurveReport, prefix: &str) -> Vec<crate::plot::Panel> {
    let caches: std::collections::BTreeSet<u64> = r.points.iter().map(|p| p.cache_blocks).collect();
    let x_label = if caches.len() == 1 && r.points.iter().any(|p| p.pb_blocks.is_some()) {
        "PB size (GiB)"
    } else {
        "cache size (GiB)"
    };
    let by_pb = caches.len() > 1
        && r.points.iter().map(|p| &p.pb_size).collect::<std::collections::BTreeSet<_>>().len() > 1;
    let name_of = |p: &CurvePoint| {
        if by_pb {
            format!("{} PB {}", p.policy, p.pb_size.as_deref().unwrap_or("-"))
        } else {
            p.policy.clone()
        }
    };
    let new_series = |name: String, y_label: &str| shingled_bench::Series {
        name,
        x_label: x_label.into(),
        y_label: y_label.into(),
        points: Vec::new(),
        paper: Vec::new(),
        paper_fitted: false,
    };
    let mut out = Vec::new();
    for (short, y_label, get) in metrics(r) {
        let mut series: Vec<shingled_bench::Series> = Vec::new();
        for p in &r.points {
            let name = name_of(p);
            let Some(y) = get(&p.metrics) else { continue };
            let i = match series.iter().position(|s| s.name == name) {
                Some(i) => i,
                None => {
                    series.push(new_series(name, y_label));
                    series.len() - 1
                }
            };
            series[i].points.push((x_of(r, p), y));
        }
        let mut overlay = vec![false; series.len()];
        if short == "hit ratio" {
            let exact: Vec<(f64, f64)> =
                r.points.iter().filter_map(|p| Some((x_of(r, p), p.exact_hit_ratio? * 100.0))).collect();
            if !exact.is_empty() {
                let mut s = new_series("lru (exact, one pass)".into(), y_label);
                s.points = exact;
                series.push(s);
                overlay.push(true);
            }
        }
        for s in &mut series {
            s.points.sort_by(|a, b| a.0.total_cmp(&b.0));
        }
        // The full runs of validated points, on their series.
        let mut validated: Vec<Vec<(f64, f64)>> = vec![Vec::new(); series.len()];
        for p in &r.points {
            let Some(y) = p.full.as_ref().and_then(get) else { continue };
            if let Some(i) = series.iter().position(|s| s.name == name_of(p)) {
                validated[i].push((x_of(r, p), y));
            }
        }
        if series.iter().all(|s| s.points.is_empty()) && validated.iter().all(Vec::is_empty) {
            continue;
        }
        out.push(crate::plot::Panel {
            title: format!("{prefix}{short} over {}", x_label.split(" (").next().unwrap_or(x_label)),
            kind: crate::plot::PanelKind::Lines { series, validated, overlay, log_x: false, log_y: false },
        });
    }
    out
}

/// The lines naming what a curve ran: its mode, window and replay, its set-up (drive, CMR-only
/// drive, I/O unit), and how its points were sampled.
pub fn context(r: &CurveReport, with_trace: bool) -> Vec<String> {
    let validated = r.points.iter().filter(|p| p.full.is_some()).count();
    vec![
        format!(
            "{}{} mode | window {} | {} replay",
            if with_trace { format!("trace {} | ", r.trace) } else { String::new() },
            r.mode,
            r.window,
            r.base.replay.name()
        ),
        shingled_sim::describe_setup(&r.base),
        format!(
            "sampled mini-simulations: {}), {} sample(s){}",
            r.sampling_text(),
            r.samples,
            if validated > 0 {
                format!("; {validated} point(s) validated by full runs")
            } else {
                String::new()
            }
        ),
    ]
}

/// What the markers of a curve figure mean.
pub const MARKS: &str = "Dots and solid lines: sampled mini-simulations. Hollow squares: the same points \
     simulated in full (validated). Black dashed line with triangles: LRU's exact hit ratio from one pass \
     over the whole trace.";

/// Draws `r` as one PNG at `path` (one panel per metric, see [`panels`]) and prints the line
/// naming the file.
pub fn charts(r: &CurveReport, path: &std::path::Path) -> Result<()> {
    let panels = panels(r, "");
    let names = panels.iter().map(|p| p.title.clone()).collect::<Vec<_>>();
    let fig = crate::plot::Figure {
        title: format!("shingled curve on {}", r.trace),
        subtitle: context(r, false),
        notes: vec![MARKS.into()],
        cols: 2,
        panels,
    };
    crate::plot::draw(path, &fig).with_context(|| format!("--png {}", path.display()))?;
    crate::plot::wrote(path, &format!("{} panel(s): {}", names.len(), names.join("; ")));
    Ok(())
}

/// What a curve experiment's paper gives for its curves, said under the charts: neither paper
/// states a value per cache size in its text (the figures are drawn only), so no paper point is
/// plotted, and the note names the figures the text does give.
fn paper_note(experiment: &str) -> Option<&'static str> {
    match experiment {
        "sac-write-only-curve" => Some(
            "Paper values: none plotted. The SAC paper gives no values per cache size (Fig. 14 is a \
             chart only); its text gives Fig. 13's miss rates (SAC 14.5%, MOST 21.7%) and speed-ups for \
             its long trace at one cache size (5% of the accessed bands), not for these traces.",
        ),
        "pore-ssd-size-curve" => Some(
            "Paper values: none plotted. The PORE paper gives no values per cache size for Fig. 16 \
             (a chart only); its text gives ratios on wdev only (PORE's I/O time 24.5% and 43.7% of \
             LRU's and LRU-band's at 1%, 5.84% and 18.1% at 5%).",
        ),
        _ => None,
    }
}

/// A trace's short name in a panel caption: `wdev` for `synth:wdev,scale=0.1`, the file name
/// for a path.
fn short_trace(t: &str) -> String {
    let t = t.trim_start_matches("synth:");
    let t = t.rsplit('/').next().unwrap_or(t);
    t.split(',').next().unwrap_or(t).to_string()
}

/// Draws every curve of a curve experiment as one PNG at `path`: a row of panels (one per
/// metric) per trace, under a title naming the experiment and its set-up; prints the line
/// naming the file.
pub fn experiment_charts(
    e: &shingled_sim::experiments::ExperimentReport,
    path: &std::path::Path,
) -> Result<()> {
    let Some(first) = e.curves.first() else {
        bail!("--png: experiment {} drew no curve", e.experiment.name);
    };
    let mut panels = Vec::new();
    let mut cols = 1;
    for c in &e.curves {
        let ps = self::panels(c, &format!("{}: ", short_trace(&c.trace)));
        cols = cols.max(ps.len());
        panels.extend(ps);
    }
    let traces: Vec<String> = e.curves.iter().map(|c| c.trace.clone()).collect();
    let mut subtitle = context(first, false);
    subtitle[0] = format!("traces {} | {}", traces.join(", "), subtitle[0]);
    // Each trace has its own sample (rate and units).
    subtitle.truncate(2);
    for c in &e.curves {
        subtitle.push(format!("{}: {}), {} sample(s)", short_trace(&c.trace), c.sampling_text(), c.samples));
    }
    let mut notes = vec![MARKS.to_string()];
    notes.extend(paper_note(&e.experiment.name).map(String::from));
    let names = panels.len();
    let fig = crate::plot::Figure {
        title: format!("experiment {}: {}", e.experiment.name, e.experiment.title),
        subtitle,
        notes,
        panels,
        cols,
    };
    crate::plot::draw(path, &fig).with_context(|| format!("--png {}", path.display()))?;
    crate::plot::wrote(
        path,
        &format!("{names} panels: {} metric(s) for each of {} trace(s)", cols, e.curves.len()),
    );
    Ok(())
}
