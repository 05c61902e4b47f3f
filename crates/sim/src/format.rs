//! How reports print numbers and tables: shared by the run, comparison and experiment reports
//! and the paper's claims.

/// A table as the reports print it: the first column left-aligned, the rest right-aligned.
pub(crate) fn plain_table(header: &[&str], rows: &[Vec<String>]) -> String {
    table(header, rows)
}

/// Left-aligns the first column and right-aligns the rest (widths measured in bytes).
pub(crate) fn table(header: &[&str], rows: &[Vec<String>]) -> String {
    use shingled_core::table::{first_left_rest_right, render, Measure, Rule, Style};
    let style = Style { measure: Measure::Bytes, trim_end: false, rule: Rule::PerColumn };
    render(&first_left_rest_right(header.len()), header, rows, &style)
}

/// Bytes in decimal units with three significant decimals (`4.731 GB`, `16.384 KB`).
pub fn human_bytes(b: u64) -> String {
    let f = b as f64;
    for (div, unit) in [(1e12, "TB"), (1e9, "GB"), (1e6, "MB"), (1e3, "KB")] {
        if f >= div {
            return format!("{:.3} {unit}", f / div);
        }
    }
    format!("{b} B")
}

pub(crate) fn pct(x: Option<f64>) -> String {
    x.map(|v| format!("{:.2}%", v * 100.0)).unwrap_or_else(|| "-".into())
}

pub(crate) fn num(x: Option<f64>, digits: usize) -> String {
    x.map(|v| format!("{v:.digits$}")).unwrap_or_else(|| "-".into())
}

pub(crate) fn secs(s: f64) -> String {
    format!("{s:.3}")
}

/// Seconds with three decimals, a rounding residue shown as 0.
pub(crate) fn secs0(x: f64) -> String {
    secs(if x.abs() < 0.0005 { 0.0 } else { x })
}
