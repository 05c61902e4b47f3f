//! Metrics over time as text: a compact table per run with a series, and CSV rows of every
//! window (docs/metrics.md, "Metrics over time").

use crate::format::{num, pct, table};
use crate::run::RunReport;
use crate::series::Window;
use std::fmt::Write;

/// The columns of [`csv_rows`], after `group,label`.
pub const CSV_HEADER: &str = "group,label,index,first_request,last_request,first_time_s,last_time_s,requests,blocks_read,blocks_written,read_hits,write_hits,read_hit_ratio,write_hit_ratio,hit_ratio,cumulative_hit_ratio,write_amplification,device_write_amplification,rmws,pb_fill,time_s";

/// One block per run that has a series: a line naming the run and the interval, then a row per
/// window (hit ratios, WA, RMWs, PB fill, modelled time). Empty when no run has one.
pub fn tables(runs: &[&RunReport]) -> String {
    let mut out = String::new();
    for r in runs {
        let Some(s) = &r.series else { continue };
        let every = r.config.interval.map(|i| match i {
            crate::Interval::Requests(n) => format!("{n} requests"),
            crate::Interval::Seconds(x) => format!("{x} s of trace time"),
        });
        let _ = writeln!(
            out,
            "\nMetrics over time: {} on {} (a window every {}; {} windows)",
            r.label,
            r.config.trace.path,
            every.unwrap_or_default(),
            s.len()
        );
        let timed = s.iter().any(|w| w.first_time_s.is_some());
        let mut header = vec!["window", "requests"];
        if timed {
            header.push("trace s");
        }
        header.extend(["hit", "cum. hit", "WA", "dev WA", "RMWs", "PB fill", "time s"]);
        let rows: Vec<Vec<String>> = s
            .iter()
            .map(|w| {
                let mut row = vec![w.index.to_string(), format!("{}-{}", w.first_request, w.last_request)];
                if timed {
                    row.push(num(w.first_time_s, 3));
                }
                row.extend([
                    pct(w.hit_ratio),
                    pct(w.cumulative_hit_ratio),
                    num(w.write_amplification, 2),
                    num(w.device_write_amplification, 2),
                    w.rmws.to_string(),
                    pct(w.pb_fill),
                    format!("{:.3}", w.time_s),
                ]);
                row
            })
            .collect();
        out.push_str(&table(&header, &rows));
    }
    out
}

fn opt(x: Option<f64>) -> String {
    x.map(|v| v.to_string()).unwrap_or_default()
}

fn row(group: &str, label: &str, w: &Window) -> String {
    let f = |s: &str| super::csv_field(s);
    format!(
        "{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}\n",
        f(group),
        f(label),
        w.index,
        w.first_request,
        w.last_request,
        opt(w.first_time_s),
        opt(w.last_time_s),
        w.requests,
        w.blocks_read,
        w.blocks_written,
        w.read_hits,
        w.write_hits,
        opt(w.read_hit_ratio),
        opt(w.write_hit_ratio),
        opt(w.hit_ratio),
        opt(w.cumulative_hit_ratio),
        opt(w.write_amplification),
        opt(w.device_write_amplification),
        w.rmws,
        opt(w.pb_fill),
        w.time_s,
    )
}

/// The rows of [`CSV_HEADER`] of a run's series, one per window, under `group` (an
/// experiment's trace; empty for a `sim` or a `compare`). Empty without a series.
pub fn csv_rows(group: &str, r: &RunReport) -> String {
    r.series.iter().flatten().map(|w| row(group, &r.label, w)).collect()
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_csv_header_names_every_field_of_a_window_in_order() {
        let w = crate::series::Window {
            index: 0,
            first_request: 1,
            last_request: 2,
            first_time_s: None,
            last_time_s: None,
            requests: 2,
            blocks_read: 0,
            blocks_written: 2,
            read_hits: 0,
            write_hits: 1,
            read_hit_ratio: None,
            write_hit_ratio: Some(0.5),
            hit_ratio: Some(0.5),
            cumulative_hit_ratio: Some(0.5),
            write_amplification: None,
            device_write_amplification: Some(1.0),
            rmws: 0,
            pb_fill: Some(0.25),
            time_s: 0.01,
        };
        let v = serde_json::to_value(&w).unwrap();
        let fields: Vec<&str> = super::CSV_HEADER.split(',').skip(2).collect();
        let obj = v.as_object().unwrap();
        assert_eq!(fields.len(), obj.len());
        for f in &fields {
            assert!(obj.contains_key(*f), "{f}");
        }
        assert_eq!(
            super::row("g,1", "lru", &w),
            "\"g,1\",lru,0,1,2,,,2,0,2,0,1,,0.5,0.5,0.5,,1,0,0.25,0.01\n"
        );
    }
}
