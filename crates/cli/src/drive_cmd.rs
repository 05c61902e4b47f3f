//! `shingled drive`: the drive models' micro-benchmarks (`shingled drive bench <name>`) and a
//! listing of the drive profiles.

use crate::output::{Output, OutputArgs};
use crate::plot;
use anyhow::{bail, Context, Result};
use clap::{Args, Subcommand};
use shingled_bench::device::{self as bench, DriveBenchOptions};
use std::path::{Path, PathBuf};

/// `shingled drive ...`
#[derive(Subcommand, Debug)]
pub enum DriveCommand {
    /// Run a drive micro-benchmark and print it beside the paper's numbers: fig3, sac-table2,
    /// fig10, timeline (or `list`).
    Bench(Box<BenchCmd>),
    /// List the drive profiles.
    Profiles,
}

/// Flags of `shingled drive bench`.
#[derive(Args, Debug)]
pub struct BenchCmd {
    /// Bench name (fig3, sac-table2, fig10, timeline) or `list`.
    pub name: String,
    /// Fraction of the full measurement windows (1 = the documented sizes).
    #[arg(long, default_value_t = 1.0)]
    pub scale: f64,
    /// Seed of the random offsets.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// SAC §5.1's range C (default 600GB, fitted): timeline writes over it, sac-table2
    /// preconditions its SMR write run with it.
    #[arg(long)]
    pub range: Option<String>,
    /// Batch-cleaning low watermark of st8000as0002 in sac-table2 and timeline (default 0.985,
    /// fitted with --range to SAC Table 2); another value is a sensitivity run. 0 <= W < 1.
    #[arg(long, value_name = "W")]
    pub low_watermark: Option<f64>,
    /// The report: the compared rows beside the paper's (`--output csv`: those rows; `--output
    /// json`: everything, the curves too).
    #[command(flatten)]
    pub report: OutputArgs,
    /// Also write the curves (x, y per series, the paper's points too) as CSV at FILE.
    #[arg(long, value_name = "FILE")]
    pub series_csv: Option<PathBuf>,
    /// Also draw the curves as one PNG at exactly FILE.
    #[arg(long, value_name = "FILE")]
    pub png: Option<PathBuf>,
    /// Former flag: also write the compared rows as CSV at FILE (now `--output csv -o FILE`).
    #[arg(long, value_name = "FILE", hide = true)]
    pub csv: Option<PathBuf>,
    /// Former flag: also write everything as JSON at FILE (now `--output json -o FILE`).
    #[arg(long, value_name = "FILE", hide = true)]
    pub json: Option<PathBuf>,
}

/// Runs `shingled drive ...`.
pub fn run(cmd: DriveCommand) -> Result<()> {
    match cmd {
        DriveCommand::Profiles => {
            for name in shingled_device::profile_names() {
                println!("{name}");
            }
            Ok(())
        }
        DriveCommand::Bench(a) => bench_cmd(*a),
    }
}

fn write(path: &Path, text: &str) -> Result<()> {
    crate::out::file(path, text)
}

fn bench_cmd(a: BenchCmd) -> Result<()> {
    if a.name == "list" {
        for (name, what) in bench::BENCHES {
            println!("{name:<12} {what}");
        }
        return Ok(());
    }
    a.report.check()?;
    for (flag, p) in [("--csv", &a.csv), ("--series-csv", &a.series_csv), ("--json", &a.json)] {
        if let Some(p) = p {
            crate::out::check(flag, p)?;
        }
    }
    if let Some(p) = &a.png {
        plot::png_output(p).map_err(|e| anyhow::anyhow!("--png {e}"))?;
    }
    let range = match &a.range {
        Some(r) => {
            Some(r.parse::<shingled_core::ByteSize>().map_err(|e| anyhow::anyhow!("--range {r:?}: {e}"))?)
        }
        None => None,
    };
    if let Some(w) = a.low_watermark {
        if !(0.0..1.0).contains(&w) {
            bail!("--low-watermark {w} is out of range: a share of the persistent buffer in [0, 1)");
        }
        if !matches!(a.name.as_str(), "sac-table2" | "timeline") {
            bail!("--low-watermark applies to sac-table2 and timeline only; {} does not use it", a.name);
        }
    }
    if a.range.is_some() && !matches!(a.name.as_str(), "sac-table2" | "timeline") {
        bail!("--range applies to sac-table2 and timeline only; {} does not use it", a.name);
    }
    let opts = DriveBenchOptions { scale: a.scale, seed: a.seed, range, low_watermark: a.low_watermark };
    let report = bench::run(&a.name, &opts)?;
    let text = match a.report.format() {
        Output::Table => report.to_table(),
        Output::Json => serde_json::to_string_pretty(&report)? + "\n",
        Output::Csv => report.rows_csv(),
    };
    a.report.emit(&text)?;
    if let Some(p) = &a.csv {
        write(p, &report.rows_csv())?;
    }
    if let Some(p) = &a.series_csv {
        write(p, &report.series_csv())?;
    }
    if let Some(p) = &a.json {
        write(p, &(serde_json::to_string_pretty(&report)? + "\n"))?;
    }
    if let Some(p) = &a.png {
        let log_y = matches!(a.name.as_str(), "fig3" | "timeline");
        plot::line_chart(p, &report.title, &report.series, log_y)
            .with_context(|| format!("plotting {}", p.display()))?;
        plot::wrote(p, "");
    }
    Ok(())
}
