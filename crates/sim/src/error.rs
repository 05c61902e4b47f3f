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
    /// A simulation setting is invalid.
    #[error("configuration field {field}: {reason}")]
    Config {
        /// The field, e.g. `cache.size`.
        field: &'static str,
        /// What is wrong.
        reason: String,
    },
}
