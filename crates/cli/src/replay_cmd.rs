//! `shingled replay`: a trace's requests as real I/O against a file, a block device, a block
//! cache or a translation layer (in process), timed by the wall clock (`shingled_replay`).

use crate::common_args::InputArgs;
use crate::output::OutputArgs;
use crate::{out, plot, progress};
use anyhow::{Context, Result};
use clap::Args;
use shingled_replay::{Loop, OpStats, ReplayOptions, ReplayReport};
use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

#[derive(Args, Debug)]
pub struct ReplayArgs {
    #[command(flatten)]
    pub input: InputArgs,
    /// Where the requests go: a file or block device (written with O_DIRECT), a `shingled
    /// cache create` cache device (run in process over its backing device, the code `cache
    /// serve` runs), or a `shingled stl format` file (run in process). It must exist.
    #[arg(long, value_name = "PATH")]
    pub target: PathBuf,
    /// Replay at most this many trace requests.
    #[arg(long)]
    pub limit: Option<u64>,
    /// Drop the trace's reads (the papers' write-only mode).
    #[arg(long)]
    pub write_only: bool,
    /// Issue requests at the trace's timestamps × --time-scale (open loop) instead of each
    /// when the previous one ends (closed loop, the papers' total I/O time).
    #[arg(long)]
    pub open_loop: bool,
    /// Open loop: multiply trace time by this (0.5 issues twice as fast).
    #[arg(long, default_value_t = 1.0)]
    pub time_scale: f64,
    /// Requests in flight at most (files and block devices; an in-process cache or layer
    /// serves one at a time).
    #[arg(long, default_value_t = 1)]
    pub queue_depth: u32,
    /// Requests issued first and not measured.
    #[arg(long, default_value_t = 0)]
    pub warmup: u64,
    /// Go through the page cache (no O_DIRECT), e.g. on a file system without O_DIRECT.
    #[arg(long)]
    pub buffered: bool,
    /// Fold requests past the target's end into it (offset modulo its size) instead of refusing.
    #[arg(long)]
    pub fold: bool,
    /// Write over whatever the target holds (a file system, a `shingled` format, data): it is
    /// destroyed. Without it, a target holding anything but zeros or an earlier replay's blocks
    /// is refused.
    #[arg(long)]
    pub force: bool,
    /// Write blocks that name themselves and a version, and check every read of a block this
    /// replay wrote (queue depth 1).
    #[arg(long)]
    pub verify: bool,
    /// Also time the same requests on this drive profile's model (`shingled drives`), with no
    /// cache: measured beside modelled.
    #[arg(long, value_name = "PROFILE")]
    pub model_drive: Option<String>,
    /// Write the latency CDFs here: CSV `series,latency_ms,fraction`, or a chart when the name
    /// ends in .png.
    #[arg(long, value_name = "FILE")]
    pub cdf: Option<PathBuf>,
    #[command(flatten)]
    pub output: OutputArgs,
}

pub fn run(a: ReplayArgs) -> Result<()> {
    a.output.start()?;
    let opts = ReplayOptions {
        trace: shingled_sim::TraceSpec {
            path: a.input.path.clone(),
            format: a.input.format.clone(),
            params: a.input.trace_params.clone(),
            volume: a.input.volume,
            skip_bad_lines: a.input.skip_bad_lines,
            limit: a.limit,
            ..Default::default()
        },
        write_only: a.write_only,
        loop_: if a.open_loop { Loop::Open } else { Loop::Closed },
        time_scale: a.time_scale,
        queue_depth: a.queue_depth,
        warmup: a.warmup,
        direct: !a.buffered,
        fold: a.fold,
        force: a.force,
        verify: a.verify,
        model_drive: a.model_drive.clone(),
        cdf: a.cdf.is_some(),
    };
    let stop = Arc::new(AtomicBool::new(false));
    for sig in [signal_hook::consts::SIGTERM, signal_hook::consts::SIGINT] {
        signal_hook::flag::register(sig, Arc::clone(&stop)).context("installing the signal handlers")?;
    }
    // The total is known once the trace has been counted, before the first request.
    let bar = progress::Reporter::runs(&format!("replay {} on {}", a.input.path, a.target.display()));
    let r = shingled_replay::replay(&a.target, &opts, &|done, total| bar.set_of(done, total), &stop);
    bar.finish();
    let r = r?;
    if r.folded_requests > 0 {
        eprintln!(
            "note: {} requests reached past the target's end ({} bytes) and were folded into it",
            r.folded_requests, r.target_bytes
        );
    }
    if let Some(path) = &a.cdf {
        write_cdf(path, &r)?;
    }
    a.output.emit_value(&r, || table(&r))
}

fn ms(x: f64) -> String {
    format!("{x:.3}")
}

fn row(what: &str, s: &OpStats) -> Vec<String> {
    vec![
        what.to_string(),
        s.requests.to_string(),
        format!("{:.1}", s.bytes as f64 / 1e6),
        format!("{:.3}", s.total_latency_s),
        ms(s.latency.mean_ms),
        ms(s.latency.p50_ms),
        ms(s.latency.p90_ms),
        ms(s.latency.p99_ms),
        ms(s.latency.p999_ms),
        ms(s.latency.max_ms),
    ]
}

/// The report for people: one line of set-up, a latency table (measured, and modelled when a
/// drive was named), totals.
pub fn table(r: &ReplayReport) -> String {
    let loop_ = match r.loop_ {
        Loop::Closed => "closed loop".to_string(),
        Loop::Open => format!("open loop, time scale {}", r.time_scale),
    };
    let mut out = format!(
        "replay of {} on {} ({}, {:.1} MB{}), {loop_}, queue depth {}{}\n",
        r.trace,
        r.target,
        r.target_kind,
        r.target_bytes as f64 / 1e6,
        if r.direct { ", O_DIRECT" } else { ", through the page cache" },
        r.queue_depth,
        if r.write_only { ", write-only" } else { "" },
    );
    out.push_str(&format!(
        "{} requests measured ({} warm-up, {} folded, {} empty skipped){}\n\n",
        r.requests,
        r.warmup_requests,
        r.folded_requests,
        r.empty_requests,
        if r.verified_reads > 0 { format!(", {} reads verified", r.verified_reads) } else { String::new() }
    ));
    let header = [
        "",
        "requests",
        "MB",
        "latency sum s",
        "mean ms",
        "p50 ms",
        "p90 ms",
        "p99 ms",
        "p99.9 ms",
        "max ms",
    ];
    let mut rows = vec![
        row("measured: all", &r.all),
        row("measured: reads", &r.reads),
        row("measured: writes", &r.writes),
    ];
    if let Some(m) = &r.model {
        rows.push(row(&format!("model {}: all", m.drive), &m.all));
        rows.push(row(&format!("model {}: reads", m.drive), &m.reads));
        rows.push(row(&format!("model {}: writes", m.drive), &m.writes));
    }
    let cols = shingled_core::table::first_left_rest_right(header.len());
    out.push_str(&shingled_core::table::render(
        &cols,
        &header,
        &rows,
        &shingled_core::table::Style::default(),
    ));
    out.push_str(&format!(
        "\nwall time {:.3} s ({:.0} requests/s, {:.2} MB/s); final flush {:.3} s\n",
        r.wall_s, r.iops, r.mb_s, r.flush_s
    ));
    if let Some(m) = &r.model {
        out.push_str(&format!(
            "modelled time on {} {:.3} s: measured / modelled = {:.2} (RMWs {}, no cache on either side)\n",
            m.drive, m.total_time_s, m.measured_over_modelled, m.drive_stats.rmws
        ));
    }
    out
}

fn write_cdf(path: &std::path::Path, r: &ReplayReport) -> Result<()> {
    let mut series: Vec<(String, &Vec<(f64, f64)>)> =
        vec![("measured reads".into(), &r.reads.cdf), ("measured writes".into(), &r.writes.cdf)];
    if let Some(m) = &r.model {
        series.push((format!("model {} reads", m.drive), &m.reads.cdf));
        series.push((format!("model {} writes", m.drive), &m.writes.cdf));
    }
    series.retain(|(_, p)| !p.is_empty());
    if path.extension().is_some_and(|e| e.eq_ignore_ascii_case("png")) {
        let x = match r.loop_ {
            Loop::Closed => "request latency (ms)",
            Loop::Open => "response time (ms)",
        };
        let lines = series
            .iter()
            .map(|(name, p)| shingled_bench::Series {
                name: name.clone(),
                x_label: x.into(),
                y_label: "fraction of requests".into(),
                points: (*p).clone(),
                paper: Vec::new(),
                paper_fitted: false,
            })
            .collect();
        let fig = plot::Figure {
            title: format!("Replay latency CDF: {} on {}", r.trace, r.target),
            subtitle: vec![format!(
                "{}, queue depth {}{}",
                r.target_kind,
                r.queue_depth,
                if r.direct { ", O_DIRECT" } else { "" }
            )],
            notes: Vec::new(),
            cols: 1,
            panels: vec![plot::Panel::lines("latency", lines, true, false)],
        };
        plot::draw(path, &fig).with_context(|| format!("--cdf {}", path.display()))?;
        plot::wrote(path, "latency CDF chart");
        return Ok(());
    }
    let mut text = String::from("series,latency_ms,fraction\n");
    for (name, p) in &series {
        for (ms, f) in p.iter() {
            text.push_str(&format!("{name},{ms},{f}\n"));
        }
    }
    out::file(path, text)?;
    plot::wrote(path, "latency CDFs as CSV");
    Ok(())
}
