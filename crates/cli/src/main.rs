//! `shingled`: simulate SSD caches above SMR drives, inspect and convert traces.

// `println!` and `print!` for the whole crate: a closed stdout (`shingled … | head`) ends the
// output quietly instead of panicking, and the command still finishes its work (a multi-file
// `store put` stores every file). Defined before the modules so that they shadow std's.
macro_rules! println {
    () => { $crate::out::write(format_args!("\n")) };
    ($($t:tt)*) => { $crate::out::write(format_args!("{}\n", format_args!($($t)*))) };
}
macro_rules! print {
    ($($t:tt)*) => { $crate::out::write(format_args!($($t)*)) };
}

mod out;

/// Large tables on transparent huge pages (see `shingled_core::mem`).
#[global_allocator]
static ALLOC: shingled_core::mem::HugePageAlloc = shingled_core::mem::HugePageAlloc;

mod args;
mod cache_cmd;
mod common_args;
mod curve_cmd;
mod drive_cmd;
mod json;
mod output;
mod plot;
mod probe_cmd;
mod progress;
mod replay_cmd;
mod report_cmd;
mod series_out;
mod served;
mod stl_cmd;
mod store_bench_cmd;
mod store_cmd;
#[cfg(feature = "ublk")]
mod ublk;
mod winners_chart;
mod zone_cmd;

use anyhow::{bail, Context, Result};
use args::{Cli, Command, TraceCommand};
use output::Output;
use shingled_sim::report;

fn main() {
    use clap::{CommandFactory, FromArgMatches};
    let cli =
        Cli::from_arg_matches(&negative_numbers(Cli::command()).get_matches()).unwrap_or_else(|e| e.exit());
    progress::set_mode(cli.progress);
    let r = run(cli);
    // What a command printed for `-o FILE` is written even when it then fails (as stdout would
    // have shown it: `store fsck`'s report before its error).
    let written = out::finish();
    if let Err(e) = r.and(written) {
        eprintln!("error: {}", chain(&e));
        std::process::exit(1);
    }
}

/// Lets every option that takes a value take a negative number (`--seed -1`), so the value
/// reaches its parser, which says it is out of range, instead of clap taking `-1` for a flag.
/// Numeric options get parsers whose errors say what form and range is expected (`-1 is out
/// of range`, `1e300 is not a whole number`) instead of Rust's `invalid digit found in string`.
/// This replaces any `value_parser` an integer or decimal option declares (`.range(…)`): check a
/// narrower range in the command instead.
fn negative_numbers(c: clap::Command) -> clap::Command {
    use clap::builder::ValueParser;
    use std::any::TypeId;
    c.mut_args(|a| {
        if !a.get_action().takes_values() {
            return a;
        }
        let t = a.get_value_parser().type_id();
        let a = a.allow_negative_numbers(true);
        if t == TypeId::of::<u64>() {
            a.value_parser(ValueParser::new(common_args::whole::<u64>))
        } else if t == TypeId::of::<u32>() {
            a.value_parser(ValueParser::new(common_args::whole::<u32>))
        } else if t == TypeId::of::<usize>() {
            a.value_parser(ValueParser::new(common_args::whole::<usize>))
        } else if t == TypeId::of::<u16>() {
            a.value_parser(ValueParser::new(common_args::whole::<u16>))
        } else if t == TypeId::of::<u8>() {
            a.value_parser(ValueParser::new(common_args::whole::<u8>))
        } else if t == TypeId::of::<f64>() {
            a.value_parser(ValueParser::new(common_args::finite))
        } else {
            a
        }
    })
    .mut_subcommands(negative_numbers)
}

/// The error and its causes joined by ": ", leaving out a cause whose text the message already
/// ends with (library errors that print their source and also expose it as the source), and
/// letting a cause that starts with the message so far replace it.
fn chain(e: &anyhow::Error) -> String {
    let mut msg = String::new();
    for cause in e.chain() {
        let s = cause.to_string();
        if msg.is_empty() || s.starts_with(&msg) {
            // The cause repeats the context and says more ("creating X" then "creating X: …").
            msg = s;
        } else if !msg.ends_with(&s) {
            msg.push_str(": ");
            msg.push_str(&s);
        }
    }
    msg
}

fn run(cli: Cli) -> Result<()> {
    match cli.command {
        Command::Sim(a) => sim(a),
        Command::Compare(a) => compare(a),
        Command::Curve(a) => curve_cmd::run(a),
        Command::Trace(t) => trace(t),
        Command::Experiment(a) => experiment(a),
        Command::Policies => {
            let mut out = String::new();
            for (name, doc) in shingled_cache::PolicyConfig::DESCRIPTIONS {
                out.push_str(&format!("{name:<10} {}\n", doc.trim()));
            }
            out.push_str("\naliases (a policy with fields set; any field: name:field=value,...):\n");
            for (alias, expands) in shingled_cache::ALIASES {
                out.push_str(&format!("{alias:<10} {expands}\n"));
            }
            print_text(&out)
        }
        Command::Drive(d) => drive_cmd::run(d),
        Command::Drives => {
            let w = shingled_device::PROFILES.iter().map(|p| p.name.len()).max().unwrap_or(0);
            let mut out = String::new();
            for p in shingled_device::PROFILES {
                out.push_str(&format!("{:<w$}  {}\n", p.name, p.about));
            }
            print_text(&out)
        }
        Command::Config(a) => {
            let cfg = a.sim.to_config()?;
            print!("{}", cfg.to_toml());
            Ok(())
        }
        Command::Zone(z) => zone_cmd::run(z),
        Command::Probe(p) => probe_cmd::run(p),
        Command::Report(r) => report_cmd::run(r),
        Command::Store(s) => store_cmd::run(s),
        Command::Stl(s) => stl_cmd::run(s),
        Command::Cache(c) => cache_cmd::run(c),
        Command::Replay(r) => replay_cmd::run(r),
    }
}

/// Prints `text` on standard output.
fn print_text(text: &str) -> Result<()> {
    out::write(format_args!("{text}"));
    Ok(())
}

/// `--cdf FILE`: every run's request-latency CDF, as CSV (`group,label,latency_ms,fraction`)
/// or, for a `.png` name, one chart (log time axis) at exactly FILE: one panel per group of runs
/// (an experiment's trace, or trace and utilisation; a `sim` or a `compare` is one group), under
/// a title naming `what` ran and the `context` lines (set-up). `runs` gives each report its
/// group and label. Prints the line naming the file written.
fn write_cdf(
    path: &Option<std::path::PathBuf>,
    runs: &[(String, String, &shingled_sim::RunReport)],
    what: &str,
    context: &[String],
) -> Result<()> {
    let Some(path) = path else { return Ok(()) };
    let is_png = path.extension().is_some_and(|e| e.eq_ignore_ascii_case("png"));
    if is_png {
        let mut groups: Vec<&str> = Vec::new();
        for (g, _, _) in runs {
            if !groups.contains(&g.as_str()) {
                groups.push(g);
            }
        }
        let open = runs.iter().any(|(_, _, r)| r.config.replay == shingled_sim::Replay::Open);
        let kind = if open { "Response time CDF (open loop)" } else { "Request latency CDF (closed loop)" };
        let mut modes: Vec<&str> = Vec::new();
        for (_, _, r) in runs {
            if !modes.contains(&r.config.mode.name()) {
                modes.push(r.config.mode.name());
            }
        }
        let scales: std::collections::BTreeSet<String> =
            runs.iter().map(|(_, _, r)| r.config.time_scale.to_string()).collect();
        let mut subtitle = vec![format!(
            "{} mode | {} replay{}",
            modes.join(", "),
            if open { "open" } else { "closed" },
            if open {
                format!(", time scale {}", scales.into_iter().collect::<Vec<_>>().join(", "))
            } else {
                String::new()
            }
        )];
        subtitle.extend(context.iter().cloned());
        let panels: Vec<plot::Panel> = groups
            .iter()
            .map(|g| {
                let series = runs
                    .iter()
                    .filter(|(rg, _, _)| rg == g)
                    .map(|(_, label, r)| shingled_bench::Series {
                        name: label.clone(),
                        x_label: if open { "response time (ms)" } else { "request latency (ms)" }.into(),
                        y_label: "fraction of requests".into(),
                        points: r.latency_cdf.clone(),
                        paper: Vec::new(),
                        paper_fitted: false,
                    })
                    .collect();
                plot::Panel::lines(g.to_string(), series, true, false)
            })
            .collect();
        let n = panels.len();
        let fig = plot::Figure {
            title: format!("{kind}: {what}"),
            subtitle,
            notes: Vec::new(),
            cols: n.min(3),
            panels,
        };
        plot::draw(path, &fig).with_context(|| format!("--cdf {}", path.display()))?;
        let per = if n == 1 {
            "1 panel".to_string()
        } else {
            format!("{n} panels, one per group: {}", groups.join("; "))
        };
        plot::wrote(path, &per);
        return Ok(());
    }
    let field = |s: &str| {
        if s.contains([',', '"']) {
            format!("\"{}\"", s.replace('"', "\"\""))
        } else {
            s.to_string()
        }
    };
    let mut text = String::from("group,label,latency_ms,fraction\n");
    for (group, label, r) in runs {
        let (group, label) = (field(group), field(label));
        for (ms, f) in &r.latency_cdf {
            text.push_str(&format!("{group},{label},{ms},{f}\n"));
        }
    }
    out::file(path, text)?;
    plot::wrote(path, &format!("latency CDF of {} run(s) as CSV", runs.len()));
    Ok(())
}

/// `sim` with a list of policies and/or cache sizes: one run per combination, one table.
fn sim_grid(a: &args::SimCmd, policies: &[String], sizes: &[String]) -> Result<()> {
    use shingled_sim::experiments::{self, Cell, Column, Experiment};
    let mut bare = a.sim.clone();
    bare.policy = None;
    bare.cache_size = None;
    let base = bare.to_config()?;
    let mut cells = Vec::new();
    for p in policies {
        for size in sizes {
            let mut cfg = base.clone();
            let cache = cfg.cache.get_or_insert_with(Default::default);
            if !p.is_empty() {
                cache.policy = p.parse().map_err(|e| anyhow::anyhow!("--policy {p:?}: {e}"))?;
            }
            if !size.is_empty() {
                cache.size = size.parse().map_err(|e| anyhow::anyhow!("--cache-size {size:?}: {e}"))?;
            }
            let label =
                [p.as_str(), size.as_str()].iter().filter(|x| !x.is_empty()).cloned().collect::<Vec<_>>();
            let label = if label.is_empty() { cfg.display_label() } else { label.join(" ") };
            cfg.label = Some(label.clone());
            cells.push(Cell { trace: cfg.trace.path.clone(), label, config: cfg });
        }
    }
    let exp = Experiment {
        name: "sim".into(),
        title: format!("{} runs: policies x cache sizes", cells.len()),
        cells,
        columns: vec![
            Column::TotalTime,
            Column::SsdTime,
            Column::DriveReadTime,
            Column::DriveWriteTime,
            Column::ReadHit,
            Column::WriteHit,
            Column::HitRatio,
            Column::Wa,
            Column::DevWa,
            Column::Rmws,
        ],
        setup: shingled_sim::describe_setup(&base),
        curve: None,
        winners: false,
    };
    let jobs = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1);
    let bar = progress::Reporter::runs("sim");
    let report = experiments::run_experiment_with(exp, jobs, &|p| bar.update(p))?;
    bar.finish();
    emit_experiment(&report, &a.emit)
}

fn sim(a: args::SimCmd) -> Result<()> {
    a.emit.check(a.sim.interval()?)?;
    let policies = a.sim.policy.as_deref().map(common_args::split_policies).unwrap_or_default();
    let sizes: Vec<String> = a
        .sim
        .cache_size
        .as_deref()
        .map(|s| s.split(',').map(|x| x.trim().to_string()).filter(|x| !x.is_empty()).collect())
        .unwrap_or_default();
    common_args::no_duplicates("--policy", &policies)?;
    common_args::no_duplicates("--cache-size", &sizes)?;
    if policies.len() > 1 || sizes.len() > 1 {
        if a.sim.no_cache {
            bail!("--no-cache runs no policy; give one configuration or drop --no-cache");
        }
        let or_default = |v: Vec<String>| if v.is_empty() { vec![String::new()] } else { v };
        return sim_grid(&a, &or_default(policies), &or_default(sizes));
    }
    let cfg = a.sim.to_config()?;
    // Measured first only when a size depends on the footprint (or read from the statistics
    // kept beside a `bin` trace); otherwise the replay reads the trace once.
    let reading = |e: shingled_sim::SimError| match e {
        shingled_sim::SimError::Trace(_) => {
            anyhow::Error::new(e).context(format!("reading trace {}", cfg.trace.path))
        }
        other => other.into(),
    };
    // A text trace measured first is parsed once: the replay reads the requests the measuring
    // pass kept.
    let footprint =
        shingled_sim::footprint_keeping(&cfg, &std::sync::atomic::AtomicBool::new(false)).map_err(reading)?;
    let label = format!("sim {}", cfg.display_label());
    let bar = match &footprint {
        Some(f) => {
            let total = cfg.trace.limit.map_or(f.stats.requests, |l| l.min(f.stats.requests));
            progress::Reporter::requests(&label, total)
        }
        None => progress::Reporter::requests_unknown(&label),
    };
    let r = shingled_sim::run_footprint(&cfg, footprint, &mut |n| bar.set(n), None);
    bar.finish();
    let r = r.map_err(reading)?;
    let text = match a.emit.report.format() {
        Output::Table => report::run_table(&r),
        Output::Json => serde_json::to_string_pretty(&r)? + "\n",
        Output::Csv => format!("{}\n{}", report::CSV_HEADER, report::csv_rows(&r)),
    };
    a.emit.report.emit(&text)?;
    let runs = [(String::new(), r.label.clone(), &r)];
    let what = format!("sim on {}", cfg.trace.path);
    let setup = [shingled_sim::describe_setup(&cfg)];
    series_out::write(&a.emit.series, &runs, &what, &setup)?;
    write_cdf(&a.emit.cdf, &runs, &what, &setup)
}

fn compare(a: args::CompareCmd) -> Result<()> {
    a.emit.check(a.sim.interval()?)?;
    let mut cfg = a.sim.to_config()?;
    if let Some(s) = &a.schemes {
        cfg.compare.schemes = s.split(',').map(|x| x.trim().to_string()).filter(|x| !x.is_empty()).collect();
    }
    if cfg.compare.schemes.is_empty() {
        bail!("--schemes names no scheme");
    }
    for s in &cfg.compare.schemes {
        shingled_sim::scheme_config(&cfg, s)?;
    }
    let jobs = common_args::jobs(a.jobs)?;
    let bar = progress::Reporter::runs(&format!("compare on {}", cfg.trace.path));
    let report = shingled_sim::compare_with(&cfg, jobs, &|p| bar.update(p))
        .with_context(|| format!("comparing on {}", cfg.trace.path))?;
    bar.finish();
    let text = match a.emit.report.format() {
        Output::Table => report::compare_table(&report),
        Output::Json => serde_json::to_string_pretty(&report)? + "\n",
        Output::Csv => {
            let mut s = String::from(report::CSV_HEADER);
            s.push('\n');
            for r in &report.runs {
                s.push_str(&report::csv_rows(r));
            }
            s
        }
    };
    a.emit.report.emit(&text)?;
    let runs: Vec<_> = report.runs.iter().map(|r| (String::new(), r.label.clone(), r)).collect();
    let what = format!("compare on {}", cfg.trace.path);
    let setup = [shingled_sim::describe_setup(&cfg)];
    series_out::write(&a.emit.series, &runs, &what, &setup)?;
    write_cdf(&a.emit.cdf, &runs, &what, &setup)
}

fn experiment(a: args::ExperimentCmd) -> Result<()> {
    use shingled_sim::experiments;
    if a.name == "list" {
        let w = experiments::REGISTRY.iter().map(|e| e.name.len()).max().unwrap_or(0);
        for e in experiments::REGISTRY {
            println!("{:<w$}  {}", e.name, e.title);
        }
        return Ok(());
    }
    a.emit.check(a.sim.interval()?)?;
    if let Some(p) = &a.png {
        plot::png_output(p).map_err(|e| anyhow::anyhow!("--png {e}"))?;
    }
    let ignored = ignored_experiment_flags(&a.name, &a.sim);
    if !ignored.is_empty() {
        bail!(
            "experiment {} sets {} itself; drop {}{}",
            a.name,
            ignored.iter().map(|(f, _)| *f).collect::<Vec<_>>().join(", "),
            if ignored.len() == 1 { "it (it would be ignored)" } else { "them (they would be ignored)" },
            ignored.iter().filter_map(|(_, hint)| hint.map(|h| format!("; {h}"))).collect::<String>()
        );
    }
    // A drive flag without a whole drive (a set-up, a configuration file, a drive or a drive
    // file) changes the experiment's own set-up: `experiment sac-cycle --pb-size 1/32` is SAC's
    // drive with a larger PB, not the default set-up's drive.
    let mut sim = a.sim.clone();
    if sim.setup.is_none() && sim.config.is_none() && sim.drive.is_none() && sim.drive_file.is_none() {
        if let Some(experiments::Setup::Paper(s)) = experiments::definition(&a.name).map(|d| &d.setup) {
            sim.setup = Some(s.to_string());
        }
    }
    let base = sim.to_config()?;
    let opts = experiments::ExperimentOptions {
        mode: a.sim.mode.as_ref().map(|_| base.mode),
        paper_setup: !sim.chose_drive(),
        base,
        traces: a.on.clone(),
    };
    let mut plan = experiments::plan(&a.name, &opts)?;
    if a.offline {
        experiments::add_offline(&mut plan)?;
    }
    let jobs = common_args::jobs(a.jobs)?;
    if a.png.is_some() && plan.curve.is_none() && !plan.winners {
        bail!(
            "--png draws the curve forms of experiments and pore-regimes' winners; {} has neither (try `shingled report --experiment {}`)",
            a.name,
            a.name
        );
    }
    let report = match &mut plan.curve {
        None => {
            let given = a.sampling.given();
            if !given.is_empty() {
                bail!(
                    "{} applies to the curve forms of experiments ({}) only: {} runs every cell in full",
                    given.join(", "),
                    experiments::REGISTRY
                        .iter()
                        .filter(|d| d.curve_of.is_some())
                        .map(|d| d.name)
                        .collect::<Vec<_>>()
                        .join(", "),
                    a.name
                );
            }
            let bar = progress::Reporter::runs(&a.name);
            let report = experiments::run_experiment_with(plan, jobs, &|p| bar.update(p))?;
            bar.finish();
            report
        }
        Some(opts) => {
            if a.emit.cdf.is_some() {
                bail!(
                    "experiment {}: --cdf has no latency distribution to draw (its points are sampled); \
                     drop it, or draw the curves with --png",
                    a.name
                );
            }
            if a.sim.interval()?.is_some() {
                bail!(
                    "experiment {}: --interval applies to full runs (its points are sampled); run the \
                     full-run form ({}) for metrics over time",
                    a.name,
                    a.name.strip_suffix("-curve").unwrap_or(&a.name)
                );
            }
            a.sampling.apply(opts)?;
            let bar = progress::Reporter::curve(&a.name);
            let stop = std::sync::atomic::AtomicBool::new(false);
            let report = experiments::run_curve_experiment(plan, jobs, &|p| bar.update_curve(p), &stop)?;
            bar.finish();
            report
        }
    };
    if let Some(png) = &a.png {
        if report.experiment.winners {
            winners_chart::draw(&report, png)?;
        } else {
            curve_cmd::experiment_charts(&report, png)?;
        }
    }
    emit_experiment(&report, &a.emit)
}

/// The flags an experiment would silently drop (it sets that part of every run itself, as its
/// registry entry says: [`shingled_sim::experiments::Definition::fixed`]), with a hint where
/// there is another way. Every experiment sets the trace and the policy.
fn ignored_experiment_flags(
    name: &str,
    s: &common_args::SimArgs,
) -> Vec<(&'static str, Option<&'static str>)> {
    use shingled_sim::experiments::{definition, Fixed};
    let fixes = |part: Fixed| definition(name).is_some_and(|d| d.fixes(part));
    let mut out = Vec::new();
    let mut check = |given: bool, flag: &'static str, hint: Option<&'static str>| {
        if given {
            out.push((flag, hint));
        }
    };
    check(s.trace.is_some(), "--trace", Some("give traces with --on (repeatable)"));
    check(s.policy.is_some(), "--policy", Some("run one policy with `shingled sim` or `compare --schemes`"));
    check(s.no_cache, "--no-cache", Some("the experiments run their no-cache baselines themselves"));
    check(s.cache_size.is_some() && fixes(Fixed::CacheSize), "--cache-size", None);
    check(s.mode.is_some() && fixes(Fixed::Mode), "--mode", None);
    check(s.replay.is_some() && fixes(Fixed::Replay), "--replay", None);
    check(s.io_unit.is_some() && fixes(Fixed::IoUnit), "--io-unit", None);
    if fixes(Fixed::Drive) {
        check(s.setup.is_some(), "--setup", None);
        check(s.drive.is_some() || s.drive_file.is_some(), "--drive/--drive-file", None);
        check(
            s.pb_size.is_some() || s.pb_flavour.is_some() || s.bands.is_some(),
            "--pb-size/--pb-flavour/--bands",
            None,
        );
        check(s.write_cache.is_some() || s.drive_capacity.is_some(), "--write-cache/--drive-capacity", None);
    }
    check(
        (s.lba_scale.is_some() || s.fold.is_some()) && fixes(Fixed::TraceScaling),
        "--lba-scale/--fold",
        Some("the grid scales by Table 1's factor and folds into U x capacity"),
    );
    check((s.warmup.is_some() || s.ssd.is_some()) && fixes(Fixed::NoCache), "--warmup/--ssd", None);
    out
}

/// Prints an experiment report as a table, JSON or CSV (a `trace` column first).
fn emit_experiment(
    report: &shingled_sim::experiments::ExperimentReport,
    emit: &args::EmitArgs,
) -> Result<()> {
    let output = &emit.report;
    let text = match output.format() {
        Output::Table => report::experiment_table(report),
        Output::Json => serde_json::to_string_pretty(report)? + "\n",
        Output::Csv => {
            let mut s = String::from("trace,");
            s.push_str(report::CSV_HEADER);
            s.push('\n');
            for (cell, r) in report.experiment.cells.iter().zip(&report.runs) {
                for line in report::csv_rows(r).lines() {
                    s.push_str(&format!("{},{line}\n", cell.trace));
                }
            }
            s
        }
    };
    output.emit(&text)?;
    let runs: Vec<_> = report
        .experiment
        .cells
        .iter()
        .zip(&report.runs)
        .map(|(cell, r)| {
            let trace = cell.trace.rsplit('/').next().unwrap_or(&cell.trace);
            (trace.to_string(), cell.label.clone(), r)
        })
        .collect();
    let e = &report.experiment;
    let what = if e.name == "sim" {
        format!("sim on {}: {}", e.cells.first().map_or("", |c| c.trace.as_str()), e.title)
    } else {
        format!("experiment {}: {}", e.name, e.title)
    };
    series_out::write(&emit.series, &runs, &what, std::slice::from_ref(&e.setup))?;
    write_cdf(&emit.cdf, &runs, &what, std::slice::from_ref(&e.setup))
}

fn trace(t: TraceCommand) -> Result<()> {
    match t {
        TraceCommand::Stats(a) => {
            a.report.check()?;
            let opts = a.input.options()?;
            let bands = a.bands.to_config();
            // A `bin` file or large uncompressed text is read directly, split between threads
            // (trace_stats_file); anything else through its reader.
            let direct = match &bands {
                Ok(b) => shingled_trace::trace_stats_file(&a.input.path, &opts, b)?,
                Err(_) => None,
            };
            let stats = match direct {
                Some(stats) => stats,
                None => {
                    let mut reader = shingled_trace::open(&a.input.path, &opts)
                        .with_context(|| format!("opening {}", a.input.path))?;
                    shingled_trace::trace_stats(&mut reader, &bands?)?
                }
            };
            let mut report = a.report.clone();
            if a.json {
                report.output = Some(Output::Json);
            }
            report.emit_value(&stats, || {
                // The covered-band ranges depend on the layout: name it, as `compare` and `sim` do.
                let layout = a.bands.to_config().map(|b| b.to_string()).unwrap_or_default();
                format!("{}band layout of the (bands) ranges: {layout} (--bands)\n", stats.to_table())
            })
        }
        TraceCommand::Convert(a) => {
            let oracle = match a.to.as_deref() {
                Some(t) => match t.parse::<shingled_trace::Format>() {
                    Ok(shingled_trace::Format::OracleGeneral) => true,
                    Ok(shingled_trace::Format::Bin) => false,
                    _ => anyhow::bail!("--to {t:?}: trace convert writes bin or oracleGeneral"),
                },
                None => a
                    .output
                    .file_name()
                    .is_some_and(|n| n.to_string_lossy().to_ascii_lowercase().contains("oraclegeneral")),
            };
            if oracle {
                shingled_trace::refuse_same_file(&[&a.input.path], &a.output)?;
                let mut reader = shingled_trace::open(&a.input.path, &a.input.options()?)
                    .with_context(|| format!("opening {}", a.input.path))?;
                let s = shingled_trace::write_oracle_general(&mut *reader, &a.output)?;
                eprintln!(
                    "wrote {} ({} requests as {} 4 KiB block records of {} objects, oracleGeneral)",
                    a.output.display(),
                    s.requests,
                    s.records,
                    s.objects
                );
                return Ok(());
            }
            let stop = std::sync::atomic::AtomicBool::new(false);
            let s = shingled_sim::stats_file::convert_keeping_stats(
                &a.input.path,
                &a.input.options()?,
                &a.output,
                &stop,
            )?;
            // statistics are kept only beside a regular file (not beside /dev/null or a FIFO)
            if std::fs::metadata(&a.output).is_ok_and(|m| m.is_file()) {
                eprintln!(
                    "wrote {} ({} requests; statistics kept in {})",
                    a.output.display(),
                    s.requests,
                    shingled_sim::stats_file::stats_path(&a.output.to_string_lossy()).display()
                );
            } else {
                eprintln!("wrote {} ({} requests)", a.output.display(), s.requests);
            }
            Ok(())
        }
        TraceCommand::Mix(a) => {
            let opts = shingled_trace::OpenOptions { skip_bad_lines: a.skip_bad_lines, ..Default::default() };
            let s = shingled_trace::mix(&a.inputs, &opts, a.copies, a.seed, &a.output)?;
            eprintln!("wrote {} ({} requests)", a.output.display(), s.requests);
            Ok(())
        }
        TraceCommand::Formats => {
            for f in shingled_trace::Format::ALL {
                println!("{:<13} {}", f.name(), f.description());
            }
            Ok(())
        }
        TraceCommand::Profiles => {
            let rows: Vec<Vec<String>> = shingled_trace::synth::profiles()
                .iter()
                .map(|p| {
                    vec![
                        p.name.to_string(),
                        format!("{} ({})", p.description, p.msr_volume),
                        p.page_requests.to_string(),
                        format!("{:.1}%", p.write_pct),
                        format!("{:.2} GB", p.written_range_gb),
                        format!("{:.2} GB", p.accessed_range_gb),
                    ]
                })
                .collect();
            // Columns sized to their widest cell, so a long description shifts nothing.
            use shingled_core::table::{render, Column, Measure, Rule, Style};
            let style = Style { measure: Measure::Chars, trim_end: true, rule: Rule::PerColumn };
            let align =
                [Column::LEFT, Column::LEFT, Column::RIGHT, Column::RIGHT, Column::RIGHT, Column::RIGHT];
            let header = ["name", "server (MSR volume)", "page reqs", "write%", "written", "accessed"];
            let mut text = render(&align, &header, &rows, &style);
            text.push_str("\nconstructed generators (docs/synthetic-traces.md):\n");
            for g in shingled_trace::synth::generators() {
                text.push_str(&format!("  {}  {} (keys: {})\n", g.name, g.description, g.keys.join(", ")));
            }
            print_text(&text)
        }
    }
}
