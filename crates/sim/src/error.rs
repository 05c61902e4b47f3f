//! Errors of a simulation, one variant per source.

/// What can stop a simulation. Each variant carries the underlying typed error.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SimError {
    /// The trace could not be opened or parsed.
    #[error(transparent)]
    Trace(#[from] shingled_trace::TraceError),
    /// A drive or SSD configuration is invalid.
    #[error(transparent)]
    Device(#[from] shingled_device::DeviceError),
    /// A policy configuration is invalid.
    #[error(transparent)]
    Policy(#[from] shingled_cache::PolicyError),
    /// The run was cancelled (e.g. Ctrl-C) after this many trace requests.
    #[error("cancelled after {requests} requests")]
    Cancelled {
        /// Trace requests read before stopping.
        requests: u64,
    },
    /// The offline pre-pass (the trace's future for an offline policy) could not use its
    /// temporary files.
    #[error("offline pre-pass: {what}: {source}")]
    Prepass {
        /// What it was doing.
        what: &'static str,
        /// The I/O error.
        source: std::io::Error,
    },
    /// A simulation setting is invalid.
    #[error("configuration field {field}: {reason}")]
    Config {
        /// The field, e.g. `cache.size`.
        field: &'static str,
        /// What is wrong.
        reason: String,
    },
}

/// A mode, I/O unit, replay, warm-up, interval or curve setting given as text that says none (`FromStr` of [`crate::Mode`],
/// [`crate::IoUnit`], [`crate::Replay`], [`crate::Warmup`], [`crate::Interval`] and the curve's `Rate`, `Unit` and
/// `Sampling`; clap and Python print the message).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ParseError {
    /// Not a mode's name.
    #[error("unknown mode {0:?}; use read-write, write-only, read-only or write-cache")]
    Mode(String),
    /// Not an I/O unit's name.
    #[error("unknown I/O unit {0:?}; use request or block")]
    IoUnit(String),
    /// Not a replay's name.
    #[error("unknown replay {0:?}; use closed or open")]
    Replay(String),
    /// A percentage whose number does not parse.
    #[error("invalid warm-up {0:?}")]
    WarmupPercent(String),
    /// A percentage outside [0%, 100%).
    #[error("warm-up {0:?} must be in [0%, 100%)")]
    WarmupRange(String),
    /// Neither a keyword, a request count nor a percentage.
    #[error("invalid warm-up {0:?}: use none, cache-full, a request count or a percentage")]
    Warmup(String),
    /// Neither a request count nor seconds.
    #[error("invalid interval {0:?}: use a request count (10000 or 10000r) or seconds of trace time (60s)")]
    Interval(String),
    /// An interval of no requests or no time.
    #[error("interval {0:?} must be more than 0")]
    IntervalZero(String),
    /// A curve's sampling rate that does not parse.
    #[error("invalid rate {0:?}: use auto, a fraction in (0, 1] or a percentage")]
    Rate(String),
    /// A curve's sampling rate outside (0, 1].
    #[error("rate {0:?} must be in (0, 1] (a percentage in (0%, 100%])")]
    RateRange(String),
    /// Neither `band` nor `zone:SIZE`.
    #[error("unknown unit {0:?}: use band or zone:SIZE (zone:20MiB)")]
    Unit(String),
    /// A `zone:SIZE` unit whose size does not parse (the size's own message second).
    #[error("unit {0:?}: {1}")]
    UnitSize(String, String),
    /// A `zone:SIZE` unit smaller than a block.
    #[error("unit {0:?}: a zone holds at least one 4 KiB block")]
    UnitTooSmall(String),
    /// Neither `stratified` nor `hash`.
    #[error("unknown sampling {0:?}: use stratified or hash")]
    Sampling(String),
}
