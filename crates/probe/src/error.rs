//! Errors of the probes and of their targets.

use std::path::PathBuf;

/// Everything that can stop a probe. Errors a user can cause name the path, flag or value.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ProbeError {
    /// A probe parameter is out of bounds.
    #[error("probe parameter `{field}` = {value}: {reason}")]
    InvalidParameter {
        /// The parameter's name (as in the configuration struct and, with dashes, the CLI flag).
        field: &'static str,
        /// The value given, as text.
        value: String,
        /// What was expected.
        reason: String,
    },
    /// A request is not aligned to the target's alignment or reaches beyond its capacity.
    #[error("request at byte {offset} of {len} bytes: {reason} (capacity {capacity} bytes)")]
    BadRequest {
        /// Byte offset of the request.
        offset: u64,
        /// Length in bytes.
        len: u64,
        /// Why it was refused.
        reason: &'static str,
        /// The target's capacity in bytes.
        capacity: u64,
    },
    /// The target is smaller than the probe needs.
    #[error("{what} needs {needed} bytes of the target, but it has only {capacity} bytes{hint}")]
    TooSmall {
        /// Which step needs the space.
        what: &'static str,
        /// Bytes needed.
        needed: u64,
        /// Bytes available.
        capacity: u64,
        /// How to fix it (may be empty).
        hint: String,
    },
    /// A real device was named without `--destroy-data` / [`crate::DeviceOptions::destroy_data`].
    #[error(
        "{path}: probing overwrites the data on it; pass --destroy-data to confirm that everything \
         on it may be destroyed"
    )]
    NotConfirmed {
        /// The device or file.
        path: PathBuf,
    },
    /// The device (or one of its partitions or holders) is in use: mounted, swap, or held by a
    /// device-mapper / md device.
    #[error("{path} is in use ({reason}); refusing to overwrite it")]
    InUse {
        /// The device.
        path: PathBuf,
        /// What uses it, e.g. `/dev/sda1 is mounted on /boot`.
        reason: String,
    },
    /// The path is neither a block device nor a regular file.
    #[error("{path}: {reason}")]
    Unsupported {
        /// The path.
        path: PathBuf,
        /// What it is and what is expected.
        reason: String,
    },
    /// An I/O error on a real target.
    #[error("{path}: {context}: {source}")]
    Io {
        /// The device or file.
        path: PathBuf,
        /// What was being done (`open`, `write at byte 4096`, ...).
        context: String,
        /// The underlying error.
        source: std::io::Error,
    },
    /// The PB probe found no drop in the write rate that passes [`crate::detect::find_knee`]:
    /// the PB is larger than the range written, the range is too small compared with the PB
    /// for the drop to show, or the target is not a drive-managed SMR drive.
    #[error(
        "no drop in the write rate in {ops} random writes ({written} bytes) over the range [0, {upper_bound}): \
         the PB is larger than that range, or too close to it in size for the drop to show (a drive \
         that cannot empty its PB before step 2 needs a range several times the PB: try a larger \
         --upper-bound), or the target has no persistent buffer{detail}"
    )]
    NoCliff {
        /// Writes issued in step 2.
        ops: u64,
        /// Bytes written in step 2.
        written: u64,
        /// The upper bound C.
        upper_bound: u64,
        /// Extra context (e.g. why the series ended early).
        detail: String,
    },
    /// The band probe found no run of low read latencies that looks like a cleaned band.
    #[error("no cleaned band found around byte {target}: {reason}")]
    NoBands {
        /// The target LBA's byte offset.
        target: u64,
        /// What the read series looked like.
        reason: String,
    },
    /// A drive model could not be built.
    #[error(transparent)]
    Device(#[from] shingled_device::DeviceError),
}

/// `Result` with a [`ProbeError`].
pub type Result<T> = std::result::Result<T, ProbeError>;

/// Shorthand for [`ProbeError::InvalidParameter`].
pub(crate) fn invalid(
    field: &'static str,
    value: impl std::fmt::Display,
    reason: impl Into<String>,
) -> ProbeError {
    ProbeError::InvalidParameter { field, value: value.to_string(), reason: reason.into() }
}
