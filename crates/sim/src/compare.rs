//! Comparisons: several schemes (no cache on the SMR drive, on a CMR drive, each cache policy)
//! run on one trace from one base configuration, with the paper's figures beside ours.

use crate::config::scheme_config;
use crate::run::{run_all_with, CompareReport, Progress, RunReport};
use crate::{SimConfig, SimError};
use shingled_trace::TraceStats;

impl CompareReport {
    /// A comparison of `runs` on one trace, run from `base`: names its set-up and puts the
    /// paper's figures beside ours where it ran in a paper's set-up.
    pub fn new(trace: TraceStats, base: &SimConfig, runs: Vec<RunReport>) -> CompareReport {
        let mut report = CompareReport {
            trace,
            trace_path: base.trace.path.clone(),
            runs,
            setup: crate::setup::describe(base),
            paper: Vec::new(),
        };
        report.paper = crate::paper::compare_claims(&report);
        report
    }
}

/// Measures the trace once, then runs every scheme of `base.compare.schemes`, `jobs` at a time
/// on separate threads. `progress` receives the total trace requests read over all schemes.
pub fn compare(
    base: &SimConfig,
    jobs: usize,
    progress: &(dyn Fn(u64) + Sync),
) -> Result<CompareReport, SimError> {
    compare_with(base, jobs, &|p: Progress| progress(p.requests))
}

/// [`compare`] reporting a [`Progress`] (see [`run_all_with`]).
pub fn compare_with(
    base: &SimConfig,
    jobs: usize,
    progress: &(dyn Fn(Progress) + Sync),
) -> Result<CompareReport, SimError> {
    let schemes = &base.compare.schemes;
    if let Some(s) = schemes.iter().enumerate().find_map(|(i, s)| schemes[..i].contains(s).then_some(s)) {
        return Err(SimError::Config {
            field: "compare.schemes",
            reason: format!("{s:?} is named twice; give each scheme once"),
        });
    }
    let configs: Vec<SimConfig> = schemes.iter().map(|s| scheme_config(base, s)).collect::<Result<_, _>>()?;
    let (runs, mut stats) = run_all_with(&configs, jobs, progress)?;
    let trace = stats.pop().unwrap_or_default();
    Ok(CompareReport::new(trace, base, runs))
}
