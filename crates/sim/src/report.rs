//! Human tables, CSV rows and JSON for run and comparison reports.

pub use crate::column::{column_value, stl_value};
pub use crate::format::human_bytes;
use crate::format::{num, pct, secs, secs0, table};
use crate::metrics::Metrics;
use crate::run::{CompareReport, RunReport};
use std::fmt::Write;

pub mod series;

/// Which optional lines a run's table shows (decided on the whole run, so both windows have the
/// same lines).
#[derive(Clone, Copy)]
struct Lines {
    /// SMaRT's causes (update reads, GC).
    smart: bool,
    /// Foreground causes that ran at once (see [`overlap_s`]).
    overlap: bool,
}

/// The metrics of one window as (name, value) lines.
fn metric_rows(m: &Metrics) -> Vec<(&'static str, String)> {
    let c = &m.counters;
    let t = &c.drive.time;
    let (f, b) = (c.drive.foreground(), c.drive.background);
    vec![
        ("requests (trace)", c.requests.to_string()),
        ("  reads / writes", format!("{} / {}", c.read_requests, c.write_requests)),
        ("  skipped by mode", c.skipped_requests.to_string()),
        ("block requests (4 KiB)", (c.blocks_read + c.blocks_written).to_string()),
        ("  reads / writes", format!("{} / {}", c.blocks_read, c.blocks_written)),
        ("read hit ratio", pct(m.read_hit_ratio)),
        ("write hit ratio", pct(m.write_hit_ratio)),
        ("hit ratio", pct(m.hit_ratio)),
        ("SSD blocks read / written", format!("{} / {}", c.ssd_blocks_read, c.ssd_blocks_written)),
        ("drive blocks read / written", format!("{} / {}", c.drive_blocks_read, c.drive_blocks_written)),
        ("evictions dirty / clean", format!("{} / {}", c.dirty_evictions, c.clean_evictions)),
        ("PB writes (blocks)", c.drive.pb_writes.to_string()),
        ("PB reads (blocks)", c.drive.pb_reads.to_string()),
        ("RMWs", c.drive.rmws.to_string()),
        (
            "band bytes read / written",
            format!("{} / {}", c.drive.band_bytes_read, c.drive.band_bytes_written),
        ),
        ("PB blocks cleaned", c.drive.pb_blocks_cleaned.to_string()),
        ("WA (band bytes written / PB bytes cleaned)", num(m.write_amplification, 2)),
        ("media bytes written", c.drive.media_bytes_written.to_string()),
        ("dev WA (media bytes / application bytes written)", num(m.device_write_amplification, 2)),
        ("time SSD read (s)", secs(m.ssd_read_time_s)),
        ("time SSD write (s)", secs(m.ssd_write_time_s)),
        ("time drive read (s)", secs(m.drive_read_time_s)),
        ("time drive write (s)", secs(m.drive_write_time_s)),
        ("total I/O time (s)", secs(m.total_time_s)),
        ("drive foreground by cause (s), adds up to drive read + write:", String::new()),
        (
            "  waiting / media reads / PB reads",
            format!("{} / {} / {}", secs(s_of(f.host_wait)), secs(s_of(f.host_read)), secs(s_of(f.pb_read))),
        ),
        ("  media writes / PB writes", format!("{} / {}", secs(s_of(f.host_write)), secs(s_of(f.pb_write)))),
        ("  write cache / destage", format!("{} / {}", secs(s_of(f.cache)), secs(s_of(f.destage)))),
        (
            "  RMW band read / merge / write",
            format!(
                "{} / {} / {}",
                secs(s_of(f.clean_band_read)),
                secs(s_of(f.clean_merge)),
                secs(s_of(f.clean_band_write))
            ),
        ),
        ("  SMaRT update reads / GC", format!("{} / {}", secs(s_of(f.update_read)), secs(s_of(f.gc())))),
        (
            "  overlap (two causes at once, counted in both)",
            secs0(m.drive_read_time_s + m.drive_write_time_s - s_of(f.causes())),
        ),
        ("drive background (s), in no request's time:", String::new()),
        (
            "  destage / RMW band read, merge, write / GC",
            format!("{} / {} / {}", secs(s_of(b.destage)), secs(s_of(b.clean())), secs(s_of(b.gc()))),
        ),
        (
            "mechanism (s), fg + bg: seek / rotation / transfer / overhead",
            format!(
                "{} / {} / {} / {}",
                secs(s_of(t.seek)),
                secs(s_of(t.rotation)),
                secs(s_of(t.transfer)),
                secs(s_of(t.overhead))
            ),
        ),
        ("latency mean / p50 (ms)", format!("{:.3} / {:.3}", m.latency.mean_ms, m.latency.p50_ms)),
        (
            "latency p99 / p99.9 / max (ms)",
            format!("{:.3} / {:.3} / {:.3}", m.latency.p99_ms, m.latency.p999_ms, m.latency.max_ms),
        ),
    ]
}

/// The open-loop figures of one window: response time (queueing included) and queueing.
fn open_rows(m: &Metrics) -> Vec<(&'static str, String)> {
    let l = &m.latency;
    let per_req = |s: f64| if m.counters.requests == 0 { 0.0 } else { s * 1e3 / m.counters.requests as f64 };
    vec![
        ("response mean / p50 / p90 (ms)", format!("{:.3} / {:.3} / {:.3}", l.mean_ms, l.p50_ms, l.p90_ms)),
        ("response p99 / p99.9 / max (ms)", format!("{:.3} / {:.3} / {:.3}", l.p99_ms, l.p999_ms, l.max_ms)),
        (
            "queueing SSD / drive (ms per request)",
            format!("{:.3} / {:.3}", per_req(m.ssd_queue_time_s), per_req(m.drive_queue_time_s)),
        ),
        ("span, first arrival to last completion (s)", secs(m.span_s)),
    ]
}

/// A translation layer's figures in SMaRT's terms (§5.5): GC counts and cost, amplified writes,
/// update kinds, read fragmentation, map size.
fn stl_rows(m: &Metrics) -> Vec<(&'static str, String)> {
    use crate::experiments::Column::*;
    let d = &m.counters.drive;
    let s = &d.stl;
    let v = |c| stl_value(c, d).map_or_else(|| "-".into(), |x| format!("{x:.1}"));
    let mut rows = vec![
        ("GC on-demand / background", format!("{} / {}", s.gc_ondemand, s.gc_background)),
        ("  per 1M drive writes", format!("{} / {}", v(GcOnDemandPerM), v(GcBackgroundPerM))),
        ("  writes that ran a GC (%)", v(AmplifiedWritePct)),
        (
            "  on-demand GC cost p50 / share 1 / <10 (%)",
            format!("{} / {} / {}", v(GcCostMedian), v(GcCostOnePct), v(GcCostUnder10Pct)),
        ),
        ("fragmented reads (%) / pieces per one", format!("{} / {}", v(FragmentedReadPct), v(FragmentRatio))),
    ];
    if s.physical_tracks > 0 {
        // Track-level figures: SMaRT only (a DM-SMR drive counts its cleanings above).
        rows.extend([
            ("tracks moved by GC", s.gc_tracks_moved.to_string()),
            (
                "track updates in place / out of place / new",
                format!("{} / {} / {}", s.in_place_updates, s.out_of_place_updates, s.new_tracks),
            ),
            (
                "map (MiB) / used of physical tracks",
                format!("{} / {} of {}", v(MapMib), s.used_tracks, s.physical_tracks),
            ),
        ]);
    }
    rows
}

/// A human-readable report of one run: the whole run and the after-warm-up window side by side.
pub fn run_table(r: &RunReport) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{} | mode {} | drive {} | cache {} blocks ({}){}",
        r.label,
        r.mode,
        r.drive,
        r.sizing.cache_blocks,
        human_bytes(r.sizing.cache_blocks * 4096),
        r.sizing.pb_blocks.map(|p| format!(" | PB {p} blocks")).unwrap_or_default()
    );
    match (r.sizing.written_range, r.sizing.accessed_range) {
        (Some(w), Some(a)) => {
            let _ = writeln!(
                out,
                "written range {} | accessed range {} (bands {})",
                human_bytes(w.0),
                human_bytes(a.0),
                r.config.drive.bands_or_default()
            );
        }
        _ => {
            let _ = writeln!(out, "written and accessed ranges not measured (every size absolute: one pass)");
        }
    }
    let _ = writeln!(out, "{}\n", crate::setup::describe(&r.config));
    let open = r.config.replay == crate::Replay::Open;
    let stl = open || r.drive == "smart";
    let lines = Lines {
        smart: r.drive == "smart",
        overlap: (r.total.drive_read_time_s + r.total.drive_write_time_s
            - s_of(r.total.counters.drive.foreground().causes()))
        .abs()
            >= 0.0005,
    };
    let rows_of = |m: &Metrics| {
        let mut rows = metric_rows(m);
        rows.retain(|(k, _)| {
            (lines.smart || !k.starts_with("  SMaRT")) && (lines.overlap || !k.starts_with("  overlap"))
        });
        if open {
            // Open loop: a request's latency is its response time, shown once with queueing.
            rows.retain(|(k, _)| !k.starts_with("latency "));
            rows.extend(open_rows(m));
        }
        if stl && !m.counters.drive.stl.is_empty() {
            rows.extend(stl_rows(m));
        }
        rows
    };
    let total = rows_of(&r.total);
    let after = r.after_warmup.as_ref().map(rows_of);
    let warm_head = match r.warmup_requests {
        Some(n) => format!("after warm-up ({n} req)"),
        None => "after warm-up".to_string(),
    };
    let rows: Vec<Vec<String>> = total
        .iter()
        .enumerate()
        .map(|(i, (k, v))| {
            let mut row = vec![k.to_string(), v.clone()];
            if let Some(a) = &after {
                row.push(a[i].1.clone());
            }
            row
        })
        .collect();
    if after.is_some() {
        out.push_str(&table(&["metric", "whole run", &warm_head], &rows));
    } else {
        out.push_str(&table(&["metric", "whole run"], &rows));
    }
    out.push('\n');
    out.push_str(WA_FOOTER);
    if after.is_none() {
        let why = match r.config.warmup {
            crate::Warmup::None => "warm-up `none` asks for none".to_string(),
            crate::Warmup::CacheFull if r.config.cache.is_none() => {
                "warm-up `cache-full` ends when the cache is first full, and this run has no cache"
                    .to_string()
            }
            crate::Warmup::CacheFull => "the cache never filled (warm-up `cache-full`)".to_string(),
            _ => "the trace ended before the warm-up did".to_string(),
        };
        let _ = writeln!(out, "no after-warm-up column: {why}");
    }
    if r.dirty_left > 0 {
        let _ = writeln!(
            out,
            "\n{} dirty blocks remain in the cache at the end (not written back).",
            r.dirty_left
        );
    }
    if r.skipped_lines > 0 {
        let _ = writeln!(out, "{} malformed trace lines were skipped.", r.skipped_lines);
    }
    if let Some(b) = &r.offline_bound {
        let _ = writeln!(
            out,
            "\noffline RMW bound (no policy cleans fewer bands with this cache and PB; docs/bounds.md): {}; \
             this run's RMWs: {} ({})",
            b.rmw_lower_bound,
            r.total.counters.drive.rmws,
            over_bound(r.total.counters.drive.rmws, b.rmw_lower_bound)
        );
    }
    out.push_str(&series::tables(&[r]));
    out
}

/// The papers' comparison: total I/O time per scheme and speed-ups against SMR-only, CMR-only
/// and LRU (the time of the reference divided by the scheme's; > 1 means faster).
pub fn compare_table(c: &CompareReport) -> String {
    let mut out = String::new();
    let t = &c.trace;
    let (written, accessed, bands) = ranges(&c.runs.iter().collect::<Vec<_>>(), t);
    let _ = writeln!(
        out,
        "trace {} | {} requests ({} 4 KiB) | writes {:.1}% of pages | written range {} | accessed range {} (bands {bands})\n",
        c.trace_path,
        t.requests,
        t.pages,
        t.write_pct_pages,
        human_bytes(written),
        human_bytes(accessed),
    );
    if !c.setup.is_empty() {
        let _ = writeln!(out, "{}", c.setup);
    }
    if let Some(line) = sizing_line(c) {
        let _ = writeln!(out, "{line}");
    }
    out.push('\n');
    let header = [
        "scheme",
        "total time (s)",
        "SSD (s)",
        "drive read (s)",
        "drive write (s)",
        "vs SMR-only",
        "vs CMR-only",
        "vs LRU",
        "read hit",
        "write hit",
        "WA",
        "dev WA",
        "RMWs",
    ];
    let rows: Vec<Vec<String>> = c
        .runs
        .iter()
        .map(|r| {
            let m = &r.total;
            let sp =
                |base: &str| c.speedup_vs(base, r).map(|x| format!("{x:.2}x")).unwrap_or_else(|| "-".into());
            vec![
                r.label.clone(),
                secs(m.total_time_s),
                secs(m.ssd_read_time_s + m.ssd_write_time_s),
                secs(m.drive_read_time_s),
                secs(m.drive_write_time_s),
                sp("smr-only"),
                sp("cmr-only"),
                sp("lru"),
                pct(m.read_hit_ratio),
                pct(m.write_hit_ratio),
                num(m.write_amplification, 2),
                num(m.device_write_amplification, 2),
                m.counters.drive.rmws.to_string(),
            ]
        })
        .collect();
    out.push_str(&table(&header, &rows));
    out.push_str(&bounds_table(&c.runs.iter().collect::<Vec<_>>()));
    if c.runs.iter().any(|r| r.config.replay == crate::Replay::Open) {
        out.push_str("\nopen loop: response time per request (completion − arrival, queueing included)\n");
        let header = [
            "scheme",
            "mean (ms)",
            "p50 (ms)",
            "p90 (ms)",
            "p99 (ms)",
            "p99.9 (ms)",
            "max (ms)",
            "queued (s)",
        ];
        let rows: Vec<Vec<String>> = c
            .runs
            .iter()
            .map(|r| {
                let (m, l) = (&r.total, &r.total.latency);
                vec![
                    r.label.clone(),
                    format!("{:.3}", l.mean_ms),
                    format!("{:.3}", l.p50_ms),
                    format!("{:.3}", l.p90_ms),
                    format!("{:.3}", l.p99_ms),
                    format!("{:.3}", l.p999_ms),
                    format!("{:.3}", l.max_ms),
                    secs(m.ssd_queue_time_s + m.drive_queue_time_s),
                ]
            })
            .collect();
        out.push_str(&table(&header, &rows));
    }
    out.push('\n');
    out.push_str(WA_FOOTER);
    out.push_str(&slower_than_no_cache(&c.runs.iter().collect::<Vec<_>>()));
    out.push_str("\nwhere the time went\n");
    out.push_str(&breakdown_table(&c.runs.iter().collect::<Vec<_>>()));
    if !c.paper.is_empty() {
        out.push('\n');
        out.push_str(crate::paper::CLAIMS_PREAMBLE);
        out.push('\n');
        out.push_str(&crate::paper::claims_table(&c.paper));
    }
    out.push_str(&series::tables(&c.runs.iter().collect::<Vec<_>>()));
    out
}

/// What an offline scheme is, for the line under a table that shows one.
pub const OFFLINE_NOTE: &str = "offline schemes know the trace's future: belady (Belady's MIN) has the most hits any \
policy can have on these accesses; band-min is an oracle policy for RMWs (a heuristic, not an optimum); the RMW \
bound is the fewest band cleanings any policy can have with this cache and PB (proof: docs/bounds.md)\n";

/// Whether two runs replayed the same accesses on the same cache and PB sizes (an offline
/// run's bounds then hold for the other).
fn same_sizes(a: &RunReport, b: &RunReport) -> bool {
    a.mode == b.mode
        && a.sizing.cache_blocks == b.sizing.cache_blocks
        && a.sizing.pb_blocks == b.sizing.pb_blocks
        && a.config.trace == b.config.trace
}

/// The distance of every cached run of a group (a comparison, or one trace's rows of an
/// experiment) to the offline bounds of its own sizes: hits below Belady's MIN (when it ran)
/// and RMWs over the offline RMW bound (when an offline scheme's pre-pass computed it). Empty
/// when neither is there.
pub fn bounds_table(runs: &[&RunReport]) -> String {
    let belady_of = |r: &RunReport| {
        runs.iter().copied().find(|b| b.policy.as_deref() == Some("belady") && same_sizes(b, r))
    };
    let bound_of = |r: &RunReport| {
        runs.iter().copied().filter(|b| same_sizes(b, r)).find_map(|b| b.offline_bound.as_ref())
    };
    let cached: Vec<&RunReport> = runs.iter().copied().filter(|r| r.policy.is_some()).collect();
    let any_belady = cached.iter().any(|r| belady_of(r).is_some());
    let any_bound = cached.iter().any(|r| bound_of(r).is_some());
    if !any_belady && !any_bound {
        return String::new();
    }
    let hits = |r: &RunReport| r.total.counters.read_hits + r.total.counters.write_hits;
    let mut header = vec!["scheme", "hits"];
    if any_belady {
        header.push("below MIN");
    }
    header.push("RMWs");
    if any_bound {
        header.extend(["RMW bound", "over bound"]);
    }
    let rows: Vec<Vec<String>> = cached
        .iter()
        .map(|r| {
            let mut row = vec![r.label.clone(), hits(r).to_string()];
            if any_belady {
                row.push(match belady_of(r).map(hits) {
                    Some(0) | None => "-".into(),
                    Some(best) => format!(
                        "{} ({:.1}%)",
                        best as i64 - hits(r) as i64,
                        100.0 * (best as f64 - hits(r) as f64) / best as f64
                    ),
                });
            }
            let rmws = r.total.counters.drive.rmws;
            row.push(rmws.to_string());
            if any_bound {
                match bound_of(r) {
                    Some(b) => {
                        row.push(b.rmw_lower_bound.to_string());
                        row.push(over_bound(rmws, b.rmw_lower_bound));
                    }
                    None => row.extend(["-".to_string(), "-".to_string()]),
                }
            }
            row
        })
        .collect();
    let mut out = String::from("\ndistance to the offline bounds (whole run)\n");
    out.push_str(&table(&header, &rows));
    out.push_str(OFFLINE_NOTE);
    out
}

/// `rmws` against the bound `lb`: the ratio and the excess.
pub fn over_bound(rmws: u64, lb: u64) -> String {
    if lb == 0 {
        format!("+{rmws}")
    } else {
        format!("{:.2}x (+{})", rmws as f64 / lb as f64, rmws.saturating_sub(lb))
    }
}

/// One line per cached scheme slower than SMR-only (the drive with no cache) in `group`, saying
/// where its time went: the two kinds of work that took it longer than SMR-only, with their
/// seconds on both sides (and the RMW counts when cleaning is one). Empty when none is slower
/// or SMR-only is not in the group.
pub fn slower_than_no_cache(group: &[&RunReport]) -> String {
    let Some(base) = group.iter().find(|r| r.label == "smr-only") else { return String::new() };
    let kinds: [Part; 8] = [
        ("band cleaning (RMW reads, merges, writes)", |r| s_of(r.total.counters.drive.foreground().clean())),
        ("SSD I/O", |r| r.total.ssd_read_time_s + r.total.ssd_write_time_s),
        ("PB writes", |r| s_of(r.total.counters.drive.foreground().pb_write)),
        ("PB reads", |r| s_of(r.total.counters.drive.foreground().pb_read)),
        ("media reads", |r| s_of(r.total.counters.drive.foreground().host_read)),
        ("media writes", |r| s_of(r.total.counters.drive.foreground().host_write)),
        ("write cache and destages", |r| {
            let f = r.total.counters.drive.foreground();
            s_of(f.cache + f.destage)
        }),
        ("waits for earlier work", |r| s_of(r.total.counters.drive.foreground().host_wait)),
    ];
    let mut out = String::new();
    for r in group.iter().filter(|r| r.config.cache.is_some()) {
        let (t, b) = (r.total.total_time_s, base.total.total_time_s);
        if t <= b || t <= 0.0 {
            continue;
        }
        let mut more: Vec<(f64, String)> = kinds
            .iter()
            .filter_map(|(name, f)| {
                let (x, y) = (f(r), f(base));
                (x - y >= 0.0005).then(|| {
                    let mut part = format!("{name} {x:.3} s vs {y:.3} s");
                    if name.starts_with("band cleaning") {
                        let _ = write!(
                            part,
                            " ({} RMWs vs {})",
                            r.total.counters.drive.rmws, base.total.counters.drive.rmws
                        );
                    }
                    (x - y, part)
                })
            })
            .collect();
        more.sort_by(|a, b| b.0.total_cmp(&a.0));
        let parts: Vec<String> = more.into_iter().take(2).map(|p| p.1).collect();
        let _ = writeln!(
            out,
            "{} is slower than smr-only ({:.2}x, {:.3} s vs {:.3} s): {}",
            r.label,
            b / t,
            t,
            b,
            if parts.is_empty() {
                "no single kind of work took longer".to_string()
            } else {
                parts.join("; ")
            }
        );
    }
    out
}

/// A trace's written and accessed ranges as every report prints them: the bytes of the bands
/// holding a written (accessed) block (PORE Table I), over the band layout of the SMR drive the
/// runs use (the ranges its PB and the cache are sized by), else as `t` measured them over the
/// default layout; with that layout, which the figures depend on.
pub fn ranges(runs: &[&RunReport], t: &shingled_trace::TraceStats) -> (u64, u64, String) {
    runs.iter()
        .filter(|r| r.config.drive.dm_smr().is_some())
        .find_map(|r| {
            Some((
                r.sizing.written_range?.0,
                r.sizing.accessed_range?.0,
                r.config.drive.bands_or_default().to_string(),
            ))
        })
        .unwrap_or_else(|| {
            (t.written_band_bytes, t.accessed_band_bytes, shingled_core::BandConfig::default().to_string())
        })
}

/// The cache and PB sizes and the mode of a comparison, with what they were derived from.
fn sizing_line(c: &CompareReport) -> Option<String> {
    let cached = c.runs.iter().find(|r| r.config.cache.is_some());
    let smr = c.runs.iter().find(|r| r.sizing.pb_blocks.is_some());
    let mode = c.runs.first()?.mode.clone();
    let mut parts = vec![format!("mode {mode}")];
    if let Some(r) = cached {
        let spec = &r.config.cache.as_ref().expect("cached").size;
        let of = if r.config.mode.sized_by_written_range() { "written" } else { "accessed" };
        let rel = match spec {
            shingled_core::SizeSpec::Fraction(_) => format!(" ({spec} of the {of} range)"),
            _ => String::new(),
        };
        parts.push(format!(
            "SSD cache {} blocks = {}{rel}",
            r.sizing.cache_blocks,
            human_bytes(r.sizing.cache_blocks * 4096)
        ));
    }
    if let (Some(r), Some(pb)) = (smr, smr.and_then(|r| r.sizing.pb_blocks)) {
        let rel = match r.config.drive.dm_smr() {
            Some(d) if matches!(d.pb_size, shingled_core::SizeSpec::Fraction(_)) => {
                format!(" ({} of the written range)", d.pb_size)
            }
            _ => String::new(),
        };
        parts.push(format!("PB {pb} blocks = {}{rel}", human_bytes(pb * 4096)));
    }
    Some(parts.join(" | "))
}

/// The definitions printed under every table that shows WA (docs/metrics.md has them all).
pub const WA_FOOTER: &str = "\
WA = band bytes written / bytes cleaned out of the PB (PORE §V-C): what band cleanings (RMWs)
  rewrote per PB byte they merged; '-' without cleanings. It measures how well cleanings are
  batched, not how much the drive wrote.
dev WA = bytes the drive wrote to its media (host writes or PB appends, destages, band rewrites,
  GC moves) / bytes the application wrote (the trace's writes). Definitions: docs/metrics.md.
";

/// One part of the time breakdown: a title saying what it covers, its header and one row per run.
#[derive(Clone, Debug, PartialEq)]
pub struct BreakdownSection {
    /// What the part covers and what its total column adds up to.
    pub title: String,
    /// Column names, `scheme` first.
    pub header: Vec<String>,
    /// One row per run, seconds with three decimals.
    pub rows: Vec<Vec<String>>,
}

/// A column of the breakdown: its header and its seconds for one run.
type Part = (&'static str, fn(&RunReport) -> f64);

fn s_of(n: shingled_core::Nanos) -> f64 {
    n.as_secs_f64()
}

/// The foreground causes: the parts of the requests' service times at the drive.
const FOREGROUND: [Part; 12] = [
    ("wait", |r| s_of(r.total.counters.drive.foreground().host_wait)),
    ("media rd", |r| s_of(r.total.counters.drive.foreground().host_read)),
    ("PB rd", |r| s_of(r.total.counters.drive.foreground().pb_read)),
    ("media wr", |r| s_of(r.total.counters.drive.foreground().host_write)),
    ("PB wr", |r| s_of(r.total.counters.drive.foreground().pb_write)),
    ("cache", |r| s_of(r.total.counters.drive.foreground().cache)),
    ("destage", |r| s_of(r.total.counters.drive.foreground().destage)),
    ("RMW rd", |r| s_of(r.total.counters.drive.foreground().clean_band_read)),
    ("merge", |r| s_of(r.total.counters.drive.foreground().clean_merge)),
    ("RMW wr", |r| s_of(r.total.counters.drive.foreground().clean_band_write)),
    ("upd rd", |r| s_of(r.total.counters.drive.foreground().update_read)),
    ("GC", |r| s_of(r.total.counters.drive.foreground().gc())),
];

/// The background causes: drive work no request waited for.
const BACKGROUND: [Part; 5] = [
    ("destage", |r| s_of(r.total.counters.drive.background.destage)),
    ("RMW rd", |r| s_of(r.total.counters.drive.background.clean_band_read)),
    ("merge", |r| s_of(r.total.counters.drive.background.clean_merge)),
    ("RMW wr", |r| s_of(r.total.counters.drive.background.clean_band_write)),
    ("GC", |r| s_of(r.total.counters.drive.background.gc())),
];

/// The mechanical components: all of the arm's and platters' work, foreground and background.
const MECHANISM: [Part; 4] = [
    ("seek", |r| s_of(r.total.counters.drive.time.seek)),
    ("rotation", |r| s_of(r.total.counters.drive.time.rotation)),
    ("transfer", |r| s_of(r.total.counters.drive.time.transfer)),
    ("overhead", |r| s_of(r.total.counters.drive.time.overhead)),
];

/// The drive's share of a run's total time: its read and write service times.
fn drive_time_s(r: &RunReport) -> f64 {
    r.total.drive_read_time_s + r.total.drive_write_time_s
}

/// `drive − the sum of its foreground causes`, seconds: zero where the causes follow one
/// another, negative by the time two causes ran at once and were counted in both (a DM-SMR
/// drive's write cache taking data over the interface while the mechanism cleans or destages).
pub fn overlap_s(r: &RunReport) -> f64 {
    drive_time_s(r) - s_of(r.total.counters.drive.foreground().causes())
}

/// Three decimals: the sums are checked at this precision.
fn s3(x: f64) -> String {
    secs0(x)
}

/// Where the time went, in three parts that each add up: the foreground (the requests' service
/// times: SSD, and the drive's causes, summing to the total time), the background (drive work
/// between requests, in no request's time) and the mechanism (its components, foreground and
/// background together). Columns zero for every run are left out, except the totals.
pub fn breakdown_sections(runs: &[&RunReport]) -> Vec<BreakdownSection> {
    let keep = |parts: &[Part]| -> Vec<Part> {
        parts.iter().copied().filter(|(_, f)| runs.iter().any(|r| f(r) >= 0.0005)).collect()
    };
    let section = |title: String, parts: &[Part], tail: &[Part]| {
        let mut header = vec!["scheme".to_string()];
        header.extend(parts.iter().map(|p| p.0.to_string()));
        header.extend(tail.iter().map(|p| p.0.to_string()));
        let rows = runs
            .iter()
            .map(|r| {
                let mut row = vec![r.label.clone()];
                row.extend(parts.iter().map(|p| s3(p.1(r))));
                row.extend(tail.iter().map(|p| s3(p.1(r))));
                row
            })
            .collect();
        BreakdownSection { title, header, rows }
    };
    let fg = keep(&FOREGROUND);
    let other = runs.iter().any(|r| overlap_s(r).abs() >= 0.0005);
    let mut fg_tail: Vec<Part> = Vec::new();
    if other {
        fg_tail.push(("overlap", overlap_s));
    }
    fg_tail.push(("drive", drive_time_s));
    fg_tail.push(("SSD", |r| r.total.ssd_read_time_s + r.total.ssd_write_time_s));
    fg_tail.push(("total", |r| r.total.total_time_s));
    let mut out = vec![section(
        format!(
            "foreground (s): the requests' service times; the drive's causes{} add up to `drive`, and `drive` + `SSD` = `total` (the total time)",
            if other {
                " and `overlap` (minus the time two causes ran at once: the write cache's transfers beside the mechanism's work)"
            } else {
                ""
            }
        ),
        &fg,
        &fg_tail,
    )];
    let bg = keep(&BACKGROUND);
    let bg_total: fn(&RunReport) -> f64 = |r| s_of(r.total.counters.drive.background.causes());
    out.push(section(
        "background (s): drive work between requests (write-cache destages, idle cleaning and GC), in no request's time; not in the total time"
            .to_string(),
        &bg,
        &[("total", bg_total)],
    ));
    let mech_total: fn(&RunReport) -> f64 = |r| s_of(r.total.counters.drive.time.mechanical());
    out.push(section(
        "mechanism (s): the arm's and platters' busy time by component, foreground and background together"
            .to_string(),
        &MECHANISM,
        &[("total", mech_total)],
    ));
    out
}

/// [`breakdown_sections`] as text: each part's title, then its table.
pub fn breakdown_table(runs: &[&RunReport]) -> String {
    let mut out = String::new();
    for (i, sec) in breakdown_sections(runs).iter().enumerate() {
        if i > 0 {
            out.push('\n');
        }
        let _ = writeln!(out, "{}", sec.title);
        let header: Vec<&str> = sec.header.iter().map(String::as_str).collect();
        out.push_str(&table(&header, &sec.rows));
    }
    out
}

/// CSV header for [`csv_rows`].
pub const CSV_HEADER: &str = "label,window,mode,policy,drive,cache_blocks,pb_blocks,requests,read_requests,write_requests,skipped_requests,blocks_read,blocks_written,read_hits,write_hits,read_hit_ratio,write_hit_ratio,ssd_blocks_read,ssd_blocks_written,drive_blocks_read,drive_blocks_written,dirty_evictions,clean_evictions,pb_writes,pb_reads,rmws,band_bytes_read,band_bytes_written,pb_blocks_cleaned,write_amplification,ssd_read_time_s,ssd_write_time_s,drive_read_time_s,drive_write_time_s,total_time_s,latency_mean_ms,latency_p99_ms,time_host_read_s,time_host_write_s,time_pb_read_s,time_pb_write_s,time_cache_s,time_destage_s,time_clean_band_read_s,time_clean_merge_s,time_clean_band_write_s,time_host_wait_s,time_overhead_s,time_seek_s,time_rotation_s,time_transfer_s,setup,io_unit,replay,time_scale,latency_p50_ms,latency_p90_ms,latency_p999_ms,latency_max_ms,ssd_queue_time_s,drive_queue_time_s,span_s,device_write_amplification,media_bytes_written,time_background_destage_s,time_background_clean_s,time_background_gc_s,rmw_lower_bound";

/// One CSV row per window (`total`, and `after-warmup` when present), without header.
pub fn csv_rows(r: &RunReport) -> String {
    let mut out = String::new();
    let opt = |x: Option<f64>| x.map(|v| format!("{v}")).unwrap_or_default();
    let mut row = |window: &str, m: &Metrics| {
        let c = &m.counters;
        let _ = writeln!(
            out,
            "{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}",
            csv_field(&r.label),
            window,
            r.mode,
            r.policy.as_deref().unwrap_or(""),
            r.drive,
            r.sizing.cache_blocks,
            r.sizing.pb_blocks.map(|p| p.to_string()).unwrap_or_default(),
            c.requests,
            c.read_requests,
            c.write_requests,
            c.skipped_requests,
            c.blocks_read,
            c.blocks_written,
            c.read_hits,
            c.write_hits,
            opt(m.read_hit_ratio),
            opt(m.write_hit_ratio),
            c.ssd_blocks_read,
            c.ssd_blocks_written,
            c.drive_blocks_read,
            c.drive_blocks_written,
            c.dirty_evictions,
            c.clean_evictions,
            c.drive.pb_writes,
            c.drive.pb_reads,
            c.drive.rmws,
            c.drive.band_bytes_read,
            c.drive.band_bytes_written,
            c.drive.pb_blocks_cleaned,
            opt(m.write_amplification),
            m.ssd_read_time_s,
            m.ssd_write_time_s,
            m.drive_read_time_s,
            m.drive_write_time_s,
            m.total_time_s,
            m.latency.mean_ms,
            m.latency.p99_ms,
        );
        // The time breakdown, in the order of `TimeBreakdown::fields_s`.
        out.pop();
        for (_, v) in c.drive.time.fields_s() {
            let _ = write!(out, ",{v}");
        }
        let setup = crate::setup::setup_of(&r.config).map_or("custom", |s| s.name);
        let l = &m.latency;
        let b = &c.drive.background;
        let _ = writeln!(
            out,
            ",{setup},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}",
            r.config.io_unit.name(),
            r.config.replay.name(),
            r.config.time_scale,
            l.p50_ms,
            l.p90_ms,
            l.p999_ms,
            l.max_ms,
            m.ssd_queue_time_s,
            m.drive_queue_time_s,
            m.span_s,
            opt(m.device_write_amplification),
            c.drive.media_bytes_written,
            s_of(b.destage),
            s_of(b.clean()),
            s_of(b.gc()),
            match (window, &r.offline_bound) {
                ("total", Some(b)) => b.rmw_lower_bound.to_string(),
                (_, Some(b)) => b.rmw_lower_bound_after_warmup.map(|x| x.to_string()).unwrap_or_default(),
                _ => String::new(),
            },
        );
    };
    row("total", &r.total);
    if let Some(a) = &r.after_warmup {
        row("after-warmup", a);
    }
    out
}

fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// An experiment's tables: one per trace, one row per run, the experiment's columns.
pub fn experiment_table(e: &crate::experiments::ExperimentReport) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "{}: {}", e.experiment.name, e.experiment.title);
    if !e.experiment.setup.is_empty() {
        let _ = writeln!(out, "{}", e.experiment.setup);
    }
    out.push('\n');
    let traces = e.experiment.traces();
    for t in traces {
        let group: Vec<&RunReport> =
            e.experiment.cells.iter().zip(&e.runs).filter(|(c, _)| c.trace == t).map(|(_, r)| r).collect();
        // The cache sizes of the cached runs: one figure, or the range and a column per row.
        let sizes: Vec<u64> =
            group.iter().filter(|r| r.config.cache.is_some()).map(|r| r.sizing.cache_blocks).collect();
        let (lo, hi) = (sizes.iter().min().copied(), sizes.iter().max().copied());
        let per_row = lo != hi;
        if let Some(first) = group.first() {
            let cache = match (lo, hi) {
                (Some(l), Some(h)) if l == h => format!("cache {l} blocks"),
                (Some(l), Some(h)) => format!("cache {l}–{h} blocks (each row's in `cache blocks`)"),
                _ => "no cache".to_string(),
            };
            let pbs: Vec<u64> = group.iter().filter_map(|r| r.sizing.pb_blocks).collect();
            let pb = match (pbs.iter().min(), pbs.iter().max()) {
                (Some(l), Some(h)) if l == h => format!("{l} blocks"),
                (Some(l), Some(h)) => format!("{l}–{h} blocks"),
                _ => "-".into(),
            };
            let _ = first;
            let _ = writeln!(out, "trace {t} | {cache} | PB {pb}");
        }
        let mut header = vec!["scheme"];
        if per_row {
            header.push("cache blocks");
        }
        header.extend(e.experiment.columns.iter().map(|c| c.header()));
        let rows: Vec<Vec<String>> = group
            .iter()
            .map(|r| {
                let mut row = vec![r.label.clone()];
                if per_row {
                    row.push(if r.config.cache.is_some() {
                        r.sizing.cache_blocks.to_string()
                    } else {
                        "-".into()
                    });
                }
                row.extend(e.experiment.columns.iter().map(|&c| column_value(c, r, &group)));
                row
            })
            .collect();
        out.push_str(&table(&header, &rows));
        out.push_str(&slower_than_no_cache(&group));
        out.push_str(&bounds_table(&group));
        out.push('\n');
    }
    if e.experiment
        .columns
        .iter()
        .any(|c| matches!(c, crate::experiments::Column::Wa | crate::experiments::Column::DevWa))
    {
        out.push_str(WA_FOOTER);
        out.push('\n');
    }
    for c in &e.curves {
        out.push_str(&curve_summary(c));
        out.push('\n');
    }
    if !e.winners.is_empty() {
        out.push_str(&winners_table(&e.winners));
        out.push('\n');
    }
    if !e.paper.is_empty() {
        out.push_str(crate::paper::CLAIMS_PREAMBLE);
        out.push('\n');
        out.push_str(&crate::paper::claims_table(&e.paper));
    }
    out.push_str(&series::tables(&e.runs.iter().collect::<Vec<_>>()));
    out
}

/// Which cached scheme wins each trace on RMWs, WA and time, with its margin over the runner-up
/// (`×1.37`: the runner-up's value is 1.37 times the winner's).
pub fn winners_table(w: &[crate::plan::Winner]) -> String {
    let mut traces: Vec<&str> = Vec::new();
    for x in w {
        if !traces.contains(&x.trace.as_str()) {
            traces.push(&x.trace);
        }
    }
    let cell = |t: &str, metric: &str| {
        w.iter().find(|x| x.trace == t && x.metric == metric).map_or_else(
            || "-".to_string(),
            |x| match (&x.runner_up, x.margin) {
                (Some(r), Some(m)) => format!("{} (x{m:.2} over {r})", x.scheme),
                _ => x.scheme.clone(),
            },
        )
    };
    let rows: Vec<Vec<String>> =
        traces.iter().map(|t| vec![t.to_string(), cell(t, "rmws"), cell(t, "wa"), cell(t, "time")]).collect();
    let mut out = String::from(
        "winners: per trace, the cached scheme with the fewest RMWs, the lowest WA and the least total \
         I/O time; xN = the runner-up's value / the winner's\n",
    );
    out.push_str(&table(&["trace", "fewest RMWs", "lowest WA", "least time"], &rows));
    out
}

/// How a curve form's figures on one trace were obtained: the sample, LRU's exact hit ratios,
/// and the validated points' errors.
pub fn curve_summary(c: &crate::curve::CurveReport) -> String {
    let mut out = format!(
        "trace {}: {} at {}), {} sample(s), window {}\n",
        c.trace,
        if c.rate < 1.0 { "sampled mini-simulations" } else { "full simulations" },
        c.sampling_text(),
        c.samples,
        c.window
    );
    let exact: Vec<String> = c
        .points
        .iter()
        .filter_map(|p| Some(format!("{} {:.2}%", p.cache_size, p.exact_hit_ratio? * 100.0)))
        .collect();
    if !exact.is_empty() {
        let _ = writeln!(out, "  LRU's exact hit ratio (stack distances): {}", exact.join(", "));
    }
    let validated: Vec<String> = c
        .points
        .iter()
        .filter(|p| p.full.is_some())
        .map(|p| format!("{} {}", p.policy, p.cache_size))
        .collect();
    if !validated.is_empty() {
        let _ = writeln!(out, "  validated against full simulations: {}", validated.join(", "));
        for e in &c.errors {
            let _ = writeln!(out, "  error {}", e.describe());
        }
    }
    let what = if c.rate < 1.0 { "sampled" } else { "of simulations" };
    let _ = write!(out, "  cost {:.1} s {what}", c.sampled_cost_s);
    if c.exact_cost_s > 0.0 {
        let _ = write!(out, ", {:.1} s exact LRU pass", c.exact_cost_s);
    }
    if let Some(full) = c.full_cost_s {
        let _ = write!(out, "; full runs of every point ~{full:.1} s");
    }
    out.push('\n');
    out
}
