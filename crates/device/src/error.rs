//! Errors a user can cause by configuring or driving a drive model.

use shingled_core::ByteSize;

/// Everything that can go wrong while validating, building or addressing a drive model.
///
/// Configuration errors name the field with its path from the drive's table (for example
/// `mechanism.average_seek_ms`), the value found and what was expected, so a CLI can print them
/// as they are.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum DeviceError {
    /// One configuration field is out of bounds or inconsistent with another. Fields of the SSD
    /// table are named `ssd.…` and said to be SSD fields.
    #[error(
        "{} configuration field `{field}` = {value}: {reason}",
        if .field.starts_with("ssd.") { "SSD" } else { "drive" }
    )]
    InvalidField {
        /// Dotted path of the field, e.g. `mechanism.rpm`.
        field: String,
        /// The value given, as text.
        value: String,
        /// What was expected.
        reason: String,
    },
    /// The persistent buffer and the band region together do not fit on the mechanism.
    #[error(
        "persistent buffer ({pb}) plus `capacity` ({capacity}) exceed `mechanism.capacity` \
         ({mechanism}); raise `mechanism.capacity` or lower `capacity` / `pb_size`"
    )]
    LayoutDoesNotFit {
        /// Resolved persistent-buffer size.
        pb: ByteSize,
        /// Host-visible capacity (band region).
        capacity: ByteSize,
        /// Physical capacity of the mechanism.
        mechanism: ByteSize,
    },
    /// `pb_size` is relative to the written LBA range, and the build context did not give one.
    #[error(
        "`pb_size` = {spec} is relative to the written LBA range, but the build context has \
         written_range = 0; pass the trace's written range or give an absolute size"
    )]
    MissingWrittenRange {
        /// The relative specification, e.g. `1/256`.
        spec: String,
    },
    /// A request addresses blocks beyond the drive's capacity.
    #[error("blocks {start}..{end} lie beyond the drive capacity of {capacity_blocks} blocks")]
    OutOfRange {
        /// First block of the request.
        start: u64,
        /// One past the last block of the request.
        end: u64,
        /// Capacity of the drive in 4 KiB blocks.
        capacity_blocks: u64,
    },
    /// A name given as text that is none of a setting's names (`FromStr` of [`crate::PbFlavour`],
    /// [`crate::PbFree`] and [`crate::PbMedium`]).
    #[error("unknown {what} {name:?} ({expected})")]
    UnknownName {
        /// What the name was for, e.g. `PB flavour`.
        what: &'static str,
        /// The name given.
        name: String,
        /// The known names, e.g. `append-only or in-place`.
        expected: &'static str,
    },
    /// No drive profile has this name.
    #[error("unknown drive profile {name:?} (known: {known})")]
    UnknownProfile {
        /// The name asked for.
        name: String,
        /// The known names, comma separated.
        known: String,
    },
}

/// `Result` with a [`DeviceError`].
pub type Result<T> = std::result::Result<T, DeviceError>;

/// Shorthand for [`DeviceError::InvalidField`].
pub(crate) fn invalid(field: &str, value: impl std::fmt::Display, reason: impl Into<String>) -> DeviceError {
    DeviceError::InvalidField { field: field.to_string(), value: value.to_string(), reason: reason.into() }
}

impl DeviceError {
    /// Prefixes the field path of an [`DeviceError::InvalidField`] with `prefix.` (used when a
    /// nested table, such as a DM-SMR drive's `mechanism`, is validated).
    pub(crate) fn within(self, prefix: &str) -> DeviceError {
        match self {
            DeviceError::InvalidField { field, value, reason } => {
                DeviceError::InvalidField { field: format!("{prefix}.{field}"), value, reason }
            }
            other => other,
        }
    }
}
