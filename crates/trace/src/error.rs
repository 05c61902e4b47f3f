//! Errors a user can cause by handing us a trace.

use std::path::PathBuf;

/// Everything that can go wrong while opening or reading a trace.
///
/// Every variant names the file (or the synthetic spec) it is about; parse errors also name the
/// line (1-based; for binary formats the record index, 1-based), the field and the offending value.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TraceError {
    /// The file could not be opened or read.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The operating system's error.
        #[source]
        source: std::io::Error,
    },
    /// A line or record could not be parsed.
    #[error("{path}:{line}: field {field}: {reason} (value {value:?})")]
    Parse {
        /// The file.
        path: PathBuf,
        /// 1-based line number (record number for binary formats).
        line: u64,
        /// Name of the field, e.g. `Offset`.
        field: &'static str,
        /// The text (or number) found there, truncated to 64 characters.
        value: String,
        /// What was expected.
        reason: String,
    },
    /// The format could not be recognised, or the name given is unknown.
    #[error("{path}: {reason}")]
    Format {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        reason: String,
    },
    /// A `synth:` specification is invalid.
    #[error("synthetic trace {spec:?}: {reason}")]
    Synth {
        /// The specification as given.
        spec: String,
        /// What is wrong.
        reason: String,
    },
    /// An argument of an operation (mix, convert, filter) is invalid.
    #[error("{0}")]
    Invalid(String),
    /// The reading was stopped from outside (Ctrl-C) through an [`crate::Interruptible`].
    #[error("interrupted after {requests} requests")]
    Interrupted {
        /// Requests read before stopping.
        requests: u64,
    },
}
