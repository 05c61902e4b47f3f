//! The output convention of every command that prints a report, defined here once:
//!
//! * `--output table|json|csv` picks the report's format: aligned text for people (the
//!   default), JSON (everything the command knows, for programs), or CSV (a header line, then
//!   rows). A report that is one record rather than a table (a device's metadata: `cache
//!   stats`, `stl check`, `trace stats`, …) is one CSV row of its JSON fields, nested ones named
//!   `outer.inner`.
//! * `-o/--out FILE` writes the report to FILE instead of standard output (standard output then
//!   gets nothing); a FILE ending in `.json` or `.csv` picks that format when `--output` is not
//!   given. Where `-o` is already another flag (`zone report -o SECTOR`, `--offset` as in
//!   `blkzone`), the file is `--out FILE` only ([`LongOutputArgs`]).
//! * `--png FILE` draws the command's chart at exactly FILE. A command that draws several
//!   charts writes each beside FILE, named FILE's stem + `-<name>.png` (`--png ev.png` gives
//!   `ev-pb-iops.png`, `ev-bands-reads-4.png`; see [`chart_path`]).
//! * Every file written besides the report (charts, `--cdf`, `--series`, a command's other data files) is
//!   named on standard error.
//!
//! The commands that follow it: `sim`, `compare`, `experiment`, `curve`, `trace stats`, `drive
//! bench`, `probe`, `cache stats|check|lost|replay`, `stl check|stats`, `store
//! info|ls|fsck|bench`, `zone create|report|open|close|finish|reset`
//! (`crates/cli/tests/output_convention.rs` checks each). Not reports, so outside it: listings
//! (`policies`, `drives`, `trace formats|profiles`, `… list`), `config` (TOML), and commands that
//! write data (`trace convert|mix -o FILE`, `store get -o FILE`) or a document directory
//! (`report --out DIR`). Former spellings kept hidden: `trace stats --json` and `zone … --json`
//! (`--output json`), `drive bench --json FILE`/`--csv FILE` (extra files), `probe --png-dir
//! DIR` (`--png DIR/probe.png`), `store … -O` (`--output`), `trace convert|mix --output FILE`.
//!
//! [`OutputArgs`] is the pair of flags, flattened into each command that prints a report;
//! [`OutputArgs::emit`] writes a report in the chosen format; a command whose report is printed
//! piece by piece calls [`OutputArgs::start`] first, which sends standard output to `-o FILE`.

use anyhow::Result;
use clap::{Args, ValueEnum};
use serde::Serialize;
use std::path::{Path, PathBuf};

/// `--output`: the report's format.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, ValueEnum)]
pub enum Output {
    /// Aligned text for people.
    #[default]
    Table,
    /// JSON: everything the report holds (a run's configuration too).
    Json,
    /// CSV: a header line, then one row per record.
    Csv,
}

/// `--output FORMAT` and `-o/--out FILE`: see the module documentation.
#[derive(Args, Clone, Debug, Default)]
pub struct OutputArgs {
    /// Format of the report: table (text for people), json or csv. Default: the format -o
    /// FILE's extension names (.json, .csv), else table.
    #[arg(long, short_alias = 'O', value_enum, value_name = "FORMAT")]
    pub output: Option<Output>,
    /// Write the report to FILE instead of standard output.
    #[arg(long = "out", short = 'o', value_name = "FILE")]
    pub out: Option<PathBuf>,
}

/// [`OutputArgs`] without the short `-o`, for the commands where `-o` is another flag (`zone
/// report -o SECTOR` is `--offset`, as `blkzone`'s): there `-o FILE` is spelled `--out FILE`.
#[derive(Args, Clone, Debug, Default)]
pub struct LongOutputArgs {
    /// Format of the report: table (text for people), json or csv. Default: the format --out
    /// FILE's extension names (.json, .csv), else table.
    #[arg(long, value_enum, value_name = "FORMAT")]
    pub output: Option<Output>,
    /// Write the report to FILE instead of standard output.
    #[arg(long = "out", value_name = "FILE")]
    pub out: Option<PathBuf>,
}

impl LongOutputArgs {
    /// The same choice as [`OutputArgs`].
    pub fn args(&self) -> OutputArgs {
        OutputArgs { output: self.output, out: self.out.clone() }
    }
}

impl OutputArgs {
    /// The format: `--output`, else the one `-o FILE`'s extension names, else table.
    pub fn format(&self) -> Output {
        if let Some(f) = self.output {
            return f;
        }
        let ext = self.out.as_deref().and_then(Path::extension).map(|e| e.to_ascii_lowercase());
        match ext.as_ref().and_then(|e| e.to_str()) {
            Some("json") => Output::Json,
            Some("csv") => Output::Csv,
            _ => Output::Table,
        }
    }

    /// Checks before any work that `-o FILE` can be written, so a mistyped output fails at once.
    pub fn check(&self) -> Result<()> {
        if let Some(p) = &self.out {
            crate::out::check("--out", p)?;
        }
        Ok(())
    }

    /// Checks `-o FILE` and, when given, sends everything the command prints on standard output
    /// from now on to FILE (written when the command ends: `crate::out::finish`).
    pub fn start(&self) -> Result<()> {
        self.check()?;
        if let Some(p) = &self.out {
            crate::out::capture(p);
        }
        Ok(())
    }

    /// Writes the report `text` (already in [`Self::format`]) to `-o FILE` or standard output.
    pub fn emit(&self, text: &str) -> Result<()> {
        match &self.out {
            Some(p) if !crate::out::capturing() => crate::out::file(p, text),
            _ => {
                crate::out::write(format_args!("{text}"));
                Ok(())
            }
        }
    }

    /// Whether the report is the text for people (not JSON or CSV).
    pub fn is_table(&self) -> bool {
        self.format() == Output::Table
    }

    /// Prints a report that is one record or a list of records as JSON or CSV ([`csv_of`]), as
    /// `--output` says (JSON when it says table: the caller prints its own table).
    pub fn print_value<T: Serialize>(&self, value: &T) -> Result<()> {
        let text = match self.format() {
            Output::Csv => csv_of(&serde_json::to_value(value)?),
            _ => serde_json::to_string_pretty(value)? + "\n",
        };
        crate::out::write(format_args!("{text}"));
        Ok(())
    }

    /// As [`Self::print_value`], with the JSON on one line.
    pub fn print_line<T: Serialize>(&self, value: &T) -> Result<()> {
        let text = match self.format() {
            Output::Csv => csv_of(&serde_json::to_value(value)?),
            _ => serde_json::to_string(value)? + "\n",
        };
        crate::out::write(format_args!("{text}"));
        Ok(())
    }

    /// Writes a report that is one record or a list of records: `table` for people, the value
    /// as JSON, or its CSV ([`csv_of`]).
    pub fn emit_value<T: Serialize>(&self, value: &T, table: impl FnOnce() -> String) -> Result<()> {
        let text = match self.format() {
            Output::Table => table(),
            Output::Json => serde_json::to_string_pretty(value)? + "\n",
            Output::Csv => csv_of(&serde_json::to_value(value)?),
        };
        self.emit(&text)
    }
}

/// A JSON value as CSV: an array of objects is a row per object, anything else one row; nested
/// objects are flattened into `outer.inner` columns, arrays written as JSON in one cell.
pub fn csv_of(v: &serde_json::Value) -> String {
    fn flatten(prefix: &str, v: &serde_json::Value, out: &mut Vec<(String, String)>) {
        match v {
            serde_json::Value::Object(m) => {
                for (k, x) in m {
                    let key = if prefix.is_empty() { k.clone() } else { format!("{prefix}.{k}") };
                    flatten(&key, x, out);
                }
            }
            serde_json::Value::String(s) => out.push((prefix.to_string(), s.clone())),
            serde_json::Value::Null => out.push((prefix.to_string(), String::new())),
            other => out.push((prefix.to_string(), other.to_string())),
        }
    }
    let records: Vec<&serde_json::Value> = match v {
        serde_json::Value::Array(a) if a.iter().all(|x| x.is_object()) && !a.is_empty() => a.iter().collect(),
        other => vec![other],
    };
    let rows: Vec<Vec<(String, String)>> = records
        .iter()
        .map(|r| {
            let mut row = Vec::new();
            flatten(if r.is_object() { "" } else { "value" }, r, &mut row);
            row
        })
        .collect();
    let mut header: Vec<String> = Vec::new();
    for row in &rows {
        for (k, _) in row {
            if !header.contains(k) {
                header.push(k.clone());
            }
        }
    }
    let mut text = header.iter().map(|h| field(h)).collect::<Vec<_>>().join(",") + "\n";
    for row in &rows {
        let cells: Vec<String> = header
            .iter()
            .map(|h| row.iter().find(|(k, _)| k == h).map(|(_, v)| field(v)).unwrap_or_default())
            .collect();
        text.push_str(&cells.join(","));
        text.push('\n');
    }
    text
}

/// One CSV field, quoted when it holds a comma, a quote or a line break.
pub fn field(s: &str) -> String {
    if s.contains([',', '"', '\n']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// Where a command that draws several charts writes the one called `name` for `--png FILE`:
/// beside FILE, named FILE's stem + `-<name>.png` (`name` lower-cased, `_` and spaces as `-`).
pub fn chart_path(png: &Path, name: &str) -> PathBuf {
    let stem = png.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
    let name: String =
        name.chars().map(|c| if c == '_' || c == ' ' { '-' } else { c.to_ascii_lowercase() }).collect();
    png.with_file_name(format!("{stem}-{name}.png"))
}
