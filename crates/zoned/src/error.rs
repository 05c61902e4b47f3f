//! One error enum for the crate, each variant carrying the errno Linux user space would see
//! for the same failure (`block/blk-core.c` status table: zone open/active resource statuses
//! become `ETOOMANYREFS`/`EOVERFLOW`, every other zone error `EIO`; argument checks in
//! `blkdev_zone_mgmt` give `EINVAL`). Each variant's doc also names its ZBC sense code (from
//! libzbc's `test/scripts/01_sk_ascq_check`) and NVMe ZNS status.

use crate::types::{Dialect, ZoneCond, ZoneOp};

/// `Result` with [`ZonedError`].
pub type Result<T> = std::result::Result<T, ZonedError>;

/// Everything that can go wrong on a zoned device. [`ZonedError::errno`] gives the Linux errno.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ZonedError {
    /// A write to a sequential-write-required zone that does not start at the write pointer
    /// (ZBC UNALIGNED WRITE COMMAND 21h/04h; ZNS Zone Invalid Write). The WP is unchanged.
    #[error("unaligned write: sector {sector} is not the write pointer {wp} of zone {zone}")]
    UnalignedWrite {
        /// Zone index.
        zone: u64,
        /// First sector of the write.
        sector: u64,
        /// The zone's write pointer (absolute sector).
        wp: u64,
    },
    /// A write past the zone capacity or across a zone boundary (ZBC WRITE BOUNDARY VIOLATION
    /// 21h/05h; ZNS Zone Boundary Error).
    #[error(
        "write boundary violation: {nr_sectors} sectors at sector {sector} cross the writable end \
         {limit} of zone {zone}"
    )]
    BoundaryViolation {
        /// Zone index of the first sector.
        zone: u64,
        /// First sector of the write.
        sector: u64,
        /// Length of the write.
        nr_sectors: u64,
        /// First sector the write may not touch.
        limit: u64,
    },
    /// A write to a FULL zone (ZBC INVALID FIELD IN CDB, test 073; ZNS Zone Is Full).
    #[error("zone {zone} is full")]
    ZoneFull {
        /// Zone index.
        zone: u64,
    },
    /// A write or management command to a READONLY zone (ZBC DATA PROTECT / ZONE IS READ ONLY
    /// 27h/08h).
    #[error("zone {zone} is read-only")]
    ZoneReadOnly {
        /// Zone index.
        zone: u64,
    },
    /// Any access to an OFFLINE zone (ZBC ZONE IS OFFLINE 2Ch/0Eh).
    #[error("zone {zone} is offline")]
    ZoneOffline {
        /// Zone index.
        zone: u64,
    },
    /// Opening another zone would exceed `max_open` and no implicitly open zone can be closed
    /// (ZBC INSUFFICIENT ZONE RESOURCES 55h/0Eh; `BLK_STS_ZONE_OPEN_RESOURCE`).
    #[error(
        "insufficient zone resources: zone {zone} cannot be opened, {open} zones are open \
         (max_open {max_open}) and none can be closed implicitly"
    )]
    TooManyOpen {
        /// Zone index.
        zone: u64,
        /// Zones open at the time.
        open: u32,
        /// The device's limit.
        max_open: u32,
    },
    /// Activating another zone would exceed `max_active` (ZNS Too Many Active Zones;
    /// `BLK_STS_ZONE_ACTIVE_RESOURCE`).
    #[error(
        "too many active zones: zone {zone} cannot become active, {active} zones are open or \
         closed (max_active {max_active})"
    )]
    TooManyActive {
        /// Zone index.
        zone: u64,
        /// Zones open or closed at the time.
        active: u32,
        /// The device's limit.
        max_active: u32,
    },
    /// A management command not allowed from the zone's condition in this dialect (ZNS Invalid
    /// Zone State Transition; null_blk `BLK_STS_IOERR`).
    #[error("invalid zone state transition: {op} of zone {zone} in condition {cond}")]
    InvalidTransition {
        /// Zone index.
        zone: u64,
        /// The command.
        op: ZoneOp,
        /// The zone's condition.
        cond: ZoneCond,
    },
    /// A management command or zone append addressed to a conventional zone (ZBC INVALID FIELD
    /// IN CDB; null_blk `BLK_STS_IOERR`).
    #[error("zone {zone} is conventional: {what} applies to sequential zones only")]
    NotSequential {
        /// Zone index.
        zone: u64,
        /// What was attempted.
        what: &'static str,
    },
    /// A read at or above the write pointer with restricted reads (ZBC ATTEMPT TO READ INVALID
    /// DATA 21h/06h, URSWRZ = 0).
    #[error("read of sector {sector} in zone {zone} is at or above its write pointer {wp}")]
    ReadAboveWp {
        /// Zone index.
        zone: u64,
        /// First unwritten sector asked for.
        sector: u64,
        /// The zone's write pointer.
        wp: u64,
    },
    /// A bad address, length or alignment (`EINVAL` from `blkdev_zone_mgmt` and the I/O path).
    #[error("invalid argument: {0}")]
    InvalidArgument(String),
    /// A dialect given as text that names none ([`crate::Dialect`]'s `FromStr`).
    #[error("unknown dialect {0:?}: expected zbc or zns")]
    UnknownDialect(String),
    /// A configuration value out of its bounds.
    #[error("invalid configuration: {field} = {value}: {reason}")]
    Config {
        /// Field name.
        field: &'static str,
        /// The rejected value.
        value: String,
        /// What is allowed.
        reason: String,
    },
    /// A file that is not an emulated zoned device (empty, or no header magic anywhere).
    #[error("{path} is not a zoned device file: {detail}")]
    NotADevice {
        /// The file.
        path: String,
        /// Why not.
        detail: String,
    },
    /// An emulated device file whose header or zone table cannot be trusted.
    #[error("{path}: corrupt zoned device file: {detail}")]
    Corrupt {
        /// The file.
        path: String,
        /// What is wrong, where.
        detail: String,
    },
    /// An operating-system I/O error.
    #[error("{context}: {source}")]
    Io {
        /// What was being done.
        context: String,
        /// The OS error.
        #[source]
        source: std::io::Error,
    },
    /// A failure injected by [`crate::Faulty`] (or a device frozen by a simulated crash).
    #[error("injected fault: {0}")]
    Injected(String),
    /// The device or backend cannot do this.
    #[error("not supported: {0}")]
    Unsupported(String),
    /// Persisted zone states that do not match the device's zone count
    /// ([`crate::state::ZoneSet::restore`]).
    #[error("{states} zone states for {zones} zones")]
    ZoneStateCount {
        /// Zone states given.
        states: u64,
        /// Zones on the device.
        zones: u64,
    },
    /// A persisted zone state no zone can be in after a power cycle
    /// ([`crate::state::ZoneSet::restore`]).
    #[error(
        "zone {zone}: condition {cond} with write pointer {wp} and data end {data_end} is impossible \
         (length {len}, capacity {cap} sectors)"
    )]
    ImpossibleZoneState {
        /// Zone index.
        zone: u64,
        /// The condition (open zones already taken to their after-power-cycle form).
        cond: ZoneCond,
        /// Write pointer, sectors from the zone start.
        wp: u64,
        /// End of the data written, sectors from the zone start.
        data_end: u64,
        /// Zone length, sectors.
        len: u64,
        /// Zone capacity, sectors.
        cap: u64,
    },
    /// A zone set whose counters or conditions break its invariants
    /// ([`crate::state::ZoneSet::check_invariants`], for tests).
    #[error("{0}")]
    Inconsistent(String),
    /// A table block without its magic ([`crate::table::check_block`]).
    #[error("no {block} magic")]
    TableMagic {
        /// What the table calls a block (`page`, `block`).
        block: &'static str,
    },
    /// A table block whose CRC32C does not match its contents ([`crate::table::check_block`]).
    #[error("CRC32C mismatch")]
    TableCrc,
    /// A table block whose header names another block or entry range
    /// ([`crate::table::check_block`]).
    #[error("{block} header says {block} {index} / first {entry} {first} / {count} {entry}s")]
    TableHeader {
        /// What the table calls a block (`page`, `block`).
        block: &'static str,
        /// What the table calls an entry (`zone`, `track`).
        entry: &'static str,
        /// The block index the header gives.
        index: u32,
        /// The first entry the header gives.
        first: u64,
        /// The entry count the header gives.
        count: u32,
    },
    /// A table block whose generation's parity does not fit the copy it was found in
    /// ([`crate::table::check_block`]).
    #[error("generation {generation} cannot live in copy {copy}")]
    TableGeneration {
        /// The block's generation.
        generation: u64,
        /// The copy (0 or 1) it was found in.
        copy: u64,
    },
}

impl ZonedError {
    /// The Linux errno user space would see: `EINVAL`, `EIO`, `ETOOMANYREFS`, `EOVERFLOW`,
    /// `EOPNOTSUPP`, or the OS error's own code.
    pub fn errno(&self) -> i32 {
        match self {
            ZonedError::TooManyOpen { .. } => libc::ETOOMANYREFS,
            ZonedError::TooManyActive { .. } => libc::EOVERFLOW,
            ZonedError::InvalidArgument(_) | ZonedError::UnknownDialect(_) | ZonedError::Config { .. } => {
                libc::EINVAL
            }
            ZonedError::Unsupported(_) => libc::EOPNOTSUPP,
            ZonedError::Io { source, .. } => source.raw_os_error().unwrap_or(libc::EIO),
            ZonedError::UnalignedWrite { .. }
            | ZonedError::BoundaryViolation { .. }
            | ZonedError::ZoneFull { .. }
            | ZonedError::ZoneReadOnly { .. }
            | ZonedError::ZoneOffline { .. }
            | ZonedError::InvalidTransition { .. }
            | ZonedError::NotSequential { .. }
            | ZonedError::ReadAboveWp { .. }
            | ZonedError::Corrupt { .. }
            | ZonedError::NotADevice { .. }
            | ZonedError::Injected(_)
            | ZonedError::ZoneStateCount { .. }
            | ZonedError::ImpossibleZoneState { .. }
            | ZonedError::Inconsistent(_)
            | ZonedError::TableMagic { .. }
            | ZonedError::TableCrc
            | ZonedError::TableHeader { .. }
            | ZonedError::TableGeneration { .. } => libc::EIO,
        }
    }

    /// The symbolic name of [`ZonedError::errno`] (`"EIO"`, `"ETOOMANYREFS"`, ...).
    pub fn errno_name(&self) -> &'static str {
        errno_name(self.errno())
    }

    pub(crate) fn io(context: impl Into<String>, source: std::io::Error) -> ZonedError {
        ZonedError::Io { context: context.into(), source }
    }

    pub(crate) fn config(field: &'static str, value: impl ToString, reason: impl Into<String>) -> ZonedError {
        ZonedError::Config { field, value: value.to_string(), reason: reason.into() }
    }
}

/// The symbolic name of a Linux errno this crate produces (`"E?"` for others).
pub fn errno_name(errno: i32) -> &'static str {
    match errno {
        libc::EIO => "EIO",
        libc::EINVAL => "EINVAL",
        libc::ETOOMANYREFS => "ETOOMANYREFS",
        libc::EOVERFLOW => "EOVERFLOW",
        libc::EOPNOTSUPP => "EOPNOTSUPP",
        libc::ENOENT => "ENOENT",
        libc::EEXIST => "EEXIST",
        libc::EACCES => "EACCES",
        libc::EAGAIN => "EAGAIN",
        libc::ENOSPC => "ENOSPC",
        libc::ENOTTY => "ENOTTY",
        libc::ENXIO => "ENXIO",
        _ => "E?",
    }
}

// Parsed here, beside `UnknownDialect`, so that `types` need not know the error (one-way imports).
impl std::str::FromStr for Dialect {
    type Err = ZonedError;
    fn from_str(s: &str) -> std::result::Result<Self, ZonedError> {
        match s.to_ascii_lowercase().as_str() {
            "zbc" | "zac" | "smr" => Ok(Dialect::Zbc),
            "zns" | "null_blk" | "nullblk" | "null-blk" => Ok(Dialect::Zns),
            _ => Err(ZonedError::UnknownDialect(s.into())),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dialect_names_and_the_error_of_an_unknown_one() {
        assert_eq!("null_blk".parse::<Dialect>().unwrap(), Dialect::Zns);
        assert_eq!("SMR".parse::<Dialect>().unwrap(), Dialect::Zbc);
        let e = "zac2".parse::<Dialect>().unwrap_err();
        assert!(matches!(&e, ZonedError::UnknownDialect(s) if s == "zac2"));
        assert_eq!(e.to_string(), r#"unknown dialect "zac2": expected zbc or zns"#);
    }
}
