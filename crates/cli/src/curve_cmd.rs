//! `shingled curve`: hit ratio, WA, RMWs and I/O time over cache (and PB) sizes, from sampled
//! mini-simulations (`shingled_sim::curve`), with LRU's exact hit-ratio curve and optional
//! validation against full simulations.

use crate::args::{split_policies, Output, SimArgs};
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
    /// Output format.
    #[arg(long, value_enum, default_value_t = Output::Table)]
    pub output: Output,
    /// Write the report here instead of stdout.
    #[arg(long, short)]
    pub out: Option<PathBuf>,
    /// Also draw the curves as PNG charts: FILE for the hit ratio and, above a DM-SMR drive,
    /// FILE-wa.png, FILE-rmws.png and FILE-time.png beside it. Validated points (full runs)
    /// are hollow squares.
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
    if let Some(p) = &a.out {
        crate::out::check("--out", p)?;
    }
    if let Some(p) = &a.png {
        crate::plot::png_output(p).map_err(|e| anyhow::anyhow!("--png {e}"))?;
    }
    if a.sim.no_cache {
        bail!("curve: --no-cache has no cache to size; give --policy (default lru)");
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
    crate::args::no_duplicates("--policy", &policies)?;
    crate::args::no_duplicates("--cache-size", &cache_sizes)?;
    crate::args::no_duplicates("--pb-size", &pb_sizes)?;
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
        jobs: crate::args::jobs(a.jobs)?,
        after_warmup: a.sim.warmup.is_some(),
        ..CurveOptions::default()
    };
    a.sampling.apply(&mut opts)?;
    let bar = crate::progress::Reporter::curve(&format!("curve on {}", base.trace.path));
    let stop = std::sync::atomic::AtomicBool::new(false);
    let report = shingled_sim::curve(&base, &opts, &|p| bar.update_curve(p), &stop)
        .with_context(|| format!("curve on {}", base.trace.path))?;
    bar.finish();
    let text = match a.output {
        Output::Table => table(&report),
        Output::Json => serde_json::to_string_pretty(&report)? + "\n",
        Output::Csv => csv(&report),
    };
    crate::emit(&a.out, &text)?;
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

/// The curves of `r` as PNG charts: `path` for the hit ratio and, above a DM-SMR drive,
/// `-wa`, `-rmws` and `-time` charts beside it.
pub fn charts(r: &CurveReport, path: &std::path::Path) -> Result<()> {
    let caches: std::collections::BTreeSet<u64> = r.points.iter().map(|p| p.cache_blocks).collect();
    let x_label = if caches.len() == 1 && r.points.iter().any(|p| p.pb_blocks.is_some()) {
        "PB size (GiB)"
    } else {
        "cache size (GiB)"
    };
    let by_pb = caches.len() > 1
        && r.points.iter().map(|p| &p.pb_size).collect::<std::collections::BTreeSet<_>>().len() > 1;
    let smr = r.points.iter().any(|p| p.metrics.write_amplification.is_some());
    let mut charts: Vec<(PathBuf, &str, shingled_sim::curve::Metric)> =
        vec![(path.to_path_buf(), "hit ratio (%)", |m| m.hit_ratio.map(|x| x * 100.0))];
    if smr {
        let stem = path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
        let beside = |s: &str| path.with_file_name(format!("{stem}-{s}.png"));
        charts.push((beside("wa"), "write amplification", |m| m.write_amplification));
        charts.push((beside("rmws"), "RMWs", |m| m.rmws));
        charts.push((beside("time"), "total I/O time (s)", |m| m.total_time_s));
    }
    for (file, y_label, get) in charts {
        let mut series: Vec<shingled_bench::Series> = Vec::new();
        let name_of = |p: &CurvePoint| {
            if by_pb {
                format!("{} PB {}", p.policy, p.pb_size.as_deref().unwrap_or("-"))
            } else {
                p.policy.clone()
            }
        };
        for p in &r.points {
            let name = name_of(p);
            let Some(y) = get(&p.metrics) else { continue };
            let i = match series.iter().position(|s| s.name == name) {
                Some(i) => i,
                None => {
                    series.push(shingled_bench::Series {
                        name: name.clone(),
                        x_label: x_label.into(),
                        y_label: y_label.into(),
                        points: Vec::new(),
                        paper: Vec::new(),
                        paper_fitted: false,
                    });
                    series.len() - 1
                }
            };
            series[i].points.push((x_of(r, p), y));
        }
        if y_label.starts_with("hit") {
            let exact: Vec<(f64, f64)> =
                r.points.iter().filter_map(|p| Some((x_of(r, p), p.exact_hit_ratio? * 100.0))).collect();
            if !exact.is_empty() {
                series.push(shingled_bench::Series {
                    name: "lru (exact)".into(),
                    x_label: x_label.into(),
                    y_label: y_label.into(),
                    points: exact,
                    paper: Vec::new(),
                    paper_fitted: false,
                });
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
        let title = format!("{y_label} over {}: {}", x_label.split(' ').next().unwrap_or(""), r.trace);
        crate::plot::line_chart_validated(&file, &title, &series, &validated)
            .with_context(|| format!("--png {}", file.display()))?;
    }
    Ok(())
}
