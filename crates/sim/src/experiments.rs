//! The papers' experiments: planned ([`plan`]: each a grid of simulations and the rows and
//! columns the paper prints), run, and reported with the paper's figures beside ours.

pub use crate::column::Column;
pub use crate::plan::*;
use crate::run::RunReport;
use crate::{SimConfig, SimError};
use shingled_trace::TraceStats;

/// Runs a planned experiment, `jobs` simulations at a time.
pub fn run_experiment(
    exp: Experiment,
    jobs: usize,
    progress: &(dyn Fn(u64) + Sync),
) -> Result<ExperimentReport, SimError> {
    run_experiment_with(exp, jobs, &|p: crate::Progress| progress(p.requests))
}

/// [`run_experiment`] reporting a [`crate::Progress`] (see [`crate::run_all_with`]).
pub fn run_experiment_with(
    exp: Experiment,
    jobs: usize,
    progress: &(dyn Fn(crate::Progress) + Sync),
) -> Result<ExperimentReport, SimError> {
    if exp.curve.is_some() {
        let progress = |p: crate::curve::CurveProgress| {
            progress(crate::Progress {
                requests: p.requests,
                requests_total: p.requests_total,
                runs_done: p.runs_done,
                runs: p.runs,
            })
        };
        return run_curve_experiment(exp, jobs, &progress, &std::sync::atomic::AtomicBool::new(false));
    }
    let configs: Vec<SimConfig> = exp.cells.iter().map(|c| c.config.clone()).collect();
    let (runs, traces) = crate::run_all_with(&configs, jobs, progress)?;
    Ok(ExperimentReport::new(exp, runs, traces))
}

/// Runs a curve form ([`Experiment::curve`]; full simulations without one): per trace, every
/// cell from the same samples ([`crate::curve::curve_configs`]), `jobs` simulations at a time.
/// Each run holds its point's estimates over the whole replay and after warm-up (as a full
/// run's report does), counts scaled back to the full trace (no latency distribution: a
/// sample's is not the trace's), or at rate 1 the full run's counters; [`ExperimentReport::curves`] holds the curves.
pub fn run_curve_experiment(
    exp: Experiment,
    jobs: usize,
    progress: &(dyn Fn(crate::curve::CurveProgress) + Sync),
    stop: &std::sync::atomic::AtomicBool,
) -> Result<ExperimentReport, SimError> {
    let Some(mut opts) = exp.curve.clone() else {
        let configs: Vec<SimConfig> = exp.cells.iter().map(|c| c.config.clone()).collect();
        let (runs, traces) = crate::run_all(&configs, jobs, &|_| {})?;
        return Ok(ExperimentReport::new(exp, runs, traces));
    };
    opts.jobs = jobs.max(1);
    let traces = exp.traces();
    let mut runs: Vec<Option<RunReport>> = vec![None; exp.cells.len()];
    let mut stats = Vec::new();
    let mut curves = Vec::new();
    for t in traces {
        let at: Vec<usize> = (0..exp.cells.len()).filter(|&i| exp.cells[i].trace == t).collect();
        // Each point's series: its label without the cache size (`lru 1.5%` is on `lru`).
        let configs: Vec<(String, SimConfig)> = at
            .iter()
            .map(|&i| {
                let c = &exp.cells[i];
                let size = c.config.cache.as_ref().map(|k| crate::curve::size_label(&k.size));
                let name = match (c.label.rsplit_once(' '), size) {
                    (Some((name, last)), Some(size)) if last == size => name.to_string(),
                    _ => c.label.clone(),
                };
                (name, c.config.clone())
            })
            .collect();
        let (curve, estimates) = crate::curve::curve_configs(&configs, &opts, progress, stop)?;
        for ((&i, point), counters) in at.iter().zip(&curve.points).zip(estimates) {
            let cfg = &exp.cells[i].config;
            runs[i] = Some(RunReport {
                label: exp.cells[i].label.clone(),
                mode: cfg.mode.name().to_string(),
                policy: cfg.cache.as_ref().map(|c| c.policy.name().to_string()),
                drive: cfg.drive.short_name().to_string(),
                sizing: crate::sizing(cfg, &curve.stats)?,
                total: crate::metrics::Metrics::new(counters.total.unwrap_or_default(), &Default::default()),
                after_warmup: counters
                    .after_warmup
                    .map(|c| crate::metrics::Metrics::new(c, &Default::default())),
                warmup_requests: None,
                dirty_left: 0,
                skipped_lines: 0,
                wall_time_s: point.wall_s,
                block_requests_per_s: 0.0,
                latency_cdf: Vec::new(),
                offline_bound: None,
                config: cfg.clone(),
                series: None,
            });
        }
        stats.push(curve.stats.clone());
        curves.push(curve);
    }
    let runs = runs.into_iter().map(|r| r.expect("every cell belongs to a trace")).collect();
    let mut report = ExperimentReport::new(exp, runs, stats);
    report.curves = curves;
    Ok(report)
}

impl ExperimentReport {
    /// The report of `experiment`'s `runs`, with the paper's figures beside ours.
    /// Offline cells ([`crate::plan::add_offline`]) take no part in the claims or the winners:
    /// both are judged on the experiment's own schemes.
    pub fn new(experiment: Experiment, runs: Vec<RunReport>, traces: Vec<TraceStats>) -> ExperimentReport {
        let mut online = experiment.clone();
        let mut online_runs = Vec::new();
        online.cells.clear();
        for (c, r) in experiment.cells.iter().zip(&runs) {
            if !crate::plan::is_offline_cell(c) {
                online.cells.push(c.clone());
                online_runs.push(r.clone());
            }
        }
        let winners = if online.winners { crate::plan::winners(&online, &online_runs) } else { Vec::new() };
        let judged = ExperimentReport {
            experiment: online,
            runs: online_runs,
            traces: traces.clone(),
            paper: Vec::new(),
            curves: Vec::new(),
            winners: Vec::new(),
        };
        let paper = crate::paper::experiment_claims(&judged);
        ExperimentReport { experiment, runs, traces, paper, curves: Vec::new(), winners }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Mode;
    use shingled_core::SizeSpec;

    fn opts(paper_setup: bool) -> ExperimentOptions {
        ExperimentOptions { base: SimConfig::default(), traces: Vec::new(), mode: None, paper_setup }
    }

    /// Whether the cells' `get` changes when `set` changes the options (the user's drive kept).
    fn follows(
        def: &Definition,
        set: impl Fn(&mut ExperimentOptions, bool),
        get: impl Fn(&SimConfig) -> String,
    ) -> bool {
        let cells = |v| {
            let mut o = opts(false);
            set(&mut o, v);
            plan(def.name, &o).unwrap().cells.iter().map(|c| get(&c.config)).collect::<Vec<_>>()
        };
        cells(false) != cells(true)
    }

    #[test]
    fn every_experiment_plans_as_registered() {
        assert_eq!(EXPERIMENTS.len(), REGISTRY.len());
        for (i, def) in REGISTRY.iter().enumerate() {
            assert!(REGISTRY[..i].iter().all(|d| d.name != def.name), "{} twice", def.name);
            assert_eq!(EXPERIMENTS[i], (def.name, def.title));
            assert_eq!(definition(def.name).map(|d| d.name), Some(def.name));
            for paper_setup in [true, false] {
                let e = plan(def.name, &opts(paper_setup)).unwrap_or_else(|e| panic!("{}: {e}", def.name));
                assert!(!e.cells.is_empty() && e.columns == def.columns, "{}", def.name);
                assert!(e.title.starts_with(def.title), "{}", def.name);
                let mode = e.cells.iter().find(|c| c.config.cache.is_some()).map(|c| c.config.mode);
                assert!(mode.is_none_or(|m| m == def.mode), "{}: runs in its mode", def.name);
            }
        }
        // A curve form draws a full-run experiment's sweep: same set-up, mode and columns.
        for def in REGISTRY.iter().filter(|d| d.curve_of.is_some()) {
            let of = definition(def.curve_of.unwrap()).expect("curve_of names an experiment");
            assert!(of.curve_of.is_none(), "{}", def.name);
            assert_eq!((of.setup, of.mode, of.columns), (def.setup, def.mode, def.columns), "{}", def.name);
            let e = plan(def.name, &opts(true)).unwrap();
            assert!(e.curve.is_some(), "{}", def.name);
            // Its grid holds every cell of the full-run form, with the same label and configuration.
            let full = plan(of.name, &opts(true)).unwrap();
            for c in &full.cells {
                let twin = e.cells.iter().find(|d| d.trace == c.trace && d.label == c.label);
                let twin = twin.unwrap_or_else(|| panic!("{}: no cell {} {}", def.name, c.trace, c.label));
                assert_eq!(format!("{:?}", twin.config), format!("{:?}", c.config), "{}", def.name);
            }
        }
        assert!(definition("nope").is_none());
        let e = plan("nope", &opts(true)).unwrap_err().to_string();
        assert!(REGISTRY.iter().all(|d| e.contains(d.name)), "{e}");
    }

    /// What an entry says it sets itself (so the CLI refuses the flags) is what its plan does
    /// with the user's value: ignores it, and uses it when not listed.
    #[test]
    fn fixed_parts_are_the_ones_the_plan_ignores() {
        use crate::{IoUnit, Replay};
        let debug = |v: &dyn std::fmt::Debug| format!("{v:?}");
        for def in REGISTRY {
            let name = def.name;
            let size = |o: &mut ExperimentOptions, v: bool| {
                o.base.cache.get_or_insert_with(Default::default).size =
                    SizeSpec::Fraction(if v { 0.07 } else { 0.03 })
            };
            let parts: [(Fixed, bool); 6] = [
                (Fixed::CacheSize, follows(def, size, |c| debug(&c.cache.as_ref().map(|c| c.size)))),
                (
                    Fixed::Mode,
                    follows(
                        def,
                        |o, v| o.mode = Some(if v { Mode::ReadWrite } else { Mode::WriteOnly }),
                        |c| debug(&c.mode),
                    ),
                ),
                (
                    Fixed::Replay,
                    follows(
                        def,
                        |o, v| o.base.replay = if v { Replay::Open } else { Replay::Closed },
                        |c| debug(&c.replay),
                    ),
                ),
                (
                    Fixed::IoUnit,
                    follows(
                        def,
                        |o, v| o.base.io_unit = if v { IoUnit::Request } else { IoUnit::Block },
                        |c| debug(&c.io_unit),
                    ),
                ),
                (
                    Fixed::Drive,
                    follows(
                        def,
                        |o, v| {
                            o.base.drive =
                                shingled_device::profile(if v { "pore-emulator" } else { "sac-emulator" })
                                    .unwrap()
                        },
                        |c| debug(&c.drive),
                    ),
                ),
                (
                    Fixed::TraceScaling,
                    follows(
                        def,
                        |o, v| o.base.trace.lba_scale = v.then_some(3),
                        |c| debug(&(c.trace.lba_scale, c.trace.fold)),
                    ),
                ),
            ];
            for (part, follows) in parts {
                assert_eq!(def.fixes(part), !follows, "{name}: {part:?}");
            }
            let cacheless = plan(name, &opts(false)).unwrap().cells.iter().all(|c| c.config.cache.is_none());
            assert_eq!(def.fixes(Fixed::NoCache), cacheless, "{name}: no cache");
        }
    }
}
