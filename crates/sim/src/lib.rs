//! The trace-replay simulator of an SSD cache above an SMR (or CMR) drive.
//!
//! Data flows one way: a [`shingled_trace::TraceReader`] yields requests; the [`Engine`] splits
//! each into 4 KiB blocks and, per the cache [`Mode`], asks the [`shingled_cache::Cache`] for
//! hits and victims, charges SSD and drive I/O to the models of [`shingled_device`] on a virtual
//! clock, and counts everything in [`Counters`]. [`run`] sizes a configuration from the trace's
//! footprint, builds the models and replays; [`compare`] does so for several schemes and
//! [`report`] renders tables, CSV and JSON.

mod bound;
mod claim;
mod column;
mod compare;
mod config;
pub mod controller;
mod costs;
pub mod curve;
mod engine;
mod error;
pub mod experiments;
mod format;
pub mod future;
mod histogram;
mod metrics;
pub mod paper;
mod parallel;
mod plan;
pub mod report;
mod run;
pub mod sample;
mod series;
mod setup;
pub mod stack;
pub mod stats_file;

pub use bound::{OfflineBound, RmwBound};
pub use compare::{compare, compare_with};
pub use config::{is_offline, scheme_config, setup, SetUp, SETUPS};
pub use config::{
    toml_error, CacheConfig, CompareOptions, ConfigTomlError, Interval, SimConfig, TraceSpec, Warmup,
    DEFAULT_TRACE,
};
pub use controller::Mode;
pub use costs::{fit_costs, CostModel};
pub use curve::{curve, CurveOptions, CurvePoint, CurveReport};
pub use engine::{Engine, IoUnit, Replay};
pub use error::{ParseError, SimError};
pub use histogram::{Histogram, LatencySummary};
pub use metrics::{Counters, Metrics};
pub use run::{
    footprint_for, footprint_keeping, measure, measure_until, needs_footprint, open_trace, open_trace_ahead,
    run, run_all, run_all_with, run_footprint, run_once, run_with, simulate, sizing, CompareReport,
    Footprint, Progress, RunReport, Sizing, PROGRESS_EVERY,
};
pub use series::{Window, MAX_WINDOWS};
pub use setup::describe as describe_setup;
