//! The zone vocabulary of the Linux UAPI (`include/uapi/linux/blkzoned.h`): zone types and
//! conditions with their kernel codes, the zone descriptor in 512-byte sectors, management
//! operations and libzbd's reporting options.

use serde::{Deserialize, Serialize};
use std::fmt;

/// Size of the unit every address and length of this crate is counted in: the Linux 512-byte
/// sector, whatever the device's logical block size (`struct blk_zone` does the same).
pub const SECTOR_SIZE: u64 = 512;

/// `log2(SECTOR_SIZE)`.
pub const SECTOR_SHIFT: u32 = 9;

/// Zone type (`enum blk_zone_type`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ZoneType {
    /// `BLK_ZONE_TYPE_CONVENTIONAL` (0x1): no write pointer, random writes allowed.
    Conventional,
    /// `BLK_ZONE_TYPE_SEQWRITE_REQ` (0x2): writes must start at the write pointer (host-managed).
    SeqWriteRequired,
    /// `BLK_ZONE_TYPE_SEQWRITE_PREF` (0x3): sequential writes preferred, random writes accepted
    /// (host-aware).
    SeqWritePreferred,
}

impl ZoneType {
    /// The kernel code.
    pub fn code(self) -> u8 {
        match self {
            ZoneType::Conventional => 0x1,
            ZoneType::SeqWriteRequired => 0x2,
            ZoneType::SeqWritePreferred => 0x3,
        }
    }

    /// The type with kernel code `code`, if any.
    pub fn from_code(code: u8) -> Option<ZoneType> {
        Some(match code {
            0x1 => ZoneType::Conventional,
            0x2 => ZoneType::SeqWriteRequired,
            0x3 => ZoneType::SeqWritePreferred,
            _ => return None,
        })
    }

    /// `blkzone report`'s abbreviation (`CONVENTIONAL`, `SEQ_WRITE_REQUIRED`, ...).
    pub fn name(self) -> &'static str {
        match self {
            ZoneType::Conventional => "CONVENTIONAL",
            ZoneType::SeqWriteRequired => "SEQ_WRITE_REQUIRED",
            ZoneType::SeqWritePreferred => "SEQ_WRITE_PREFERRED",
        }
    }

    /// `true` for the two sequential types (zones with a write pointer).
    pub fn is_sequential(self) -> bool {
        !matches!(self, ZoneType::Conventional)
    }
}

/// Zone condition (`enum blk_zone_cond`). The ZBC names are ZC1 (empty) to ZC7 (offline).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ZoneCond {
    /// `BLK_ZONE_COND_NOT_WP` (0x0): a conventional zone.
    NotWp,
    /// `BLK_ZONE_COND_EMPTY` (0x1), ZC1.
    Empty,
    /// `BLK_ZONE_COND_IMP_OPEN` (0x2), ZC2: opened by a write.
    ImplicitOpen,
    /// `BLK_ZONE_COND_EXP_OPEN` (0x3), ZC3: opened by an OPEN ZONE command.
    ExplicitOpen,
    /// `BLK_ZONE_COND_CLOSED` (0x4), ZC4: written, not open, still holding an active resource.
    Closed,
    /// `BLK_ZONE_COND_READONLY` (0xD), ZC6.
    ReadOnly,
    /// `BLK_ZONE_COND_FULL` (0xE), ZC5.
    Full,
    /// `BLK_ZONE_COND_OFFLINE` (0xF), ZC7.
    Offline,
}

impl ZoneCond {
    /// Every condition, in code order.
    pub const ALL: [ZoneCond; 8] = [
        ZoneCond::NotWp,
        ZoneCond::Empty,
        ZoneCond::ImplicitOpen,
        ZoneCond::ExplicitOpen,
        ZoneCond::Closed,
        ZoneCond::ReadOnly,
        ZoneCond::Full,
        ZoneCond::Offline,
    ];

    /// The kernel code.
    pub fn code(self) -> u8 {
        match self {
            ZoneCond::NotWp => 0x0,
            ZoneCond::Empty => 0x1,
            ZoneCond::ImplicitOpen => 0x2,
            ZoneCond::ExplicitOpen => 0x3,
            ZoneCond::Closed => 0x4,
            ZoneCond::ReadOnly => 0xD,
            ZoneCond::Full => 0xE,
            ZoneCond::Offline => 0xF,
        }
    }

    /// The condition with kernel code `code`, if any (0x5..=0xC are reserved).
    pub fn from_code(code: u8) -> Option<ZoneCond> {
        ZoneCond::ALL.into_iter().find(|c| c.code() == code)
    }

    /// `blkzone report`'s name (`nw`, `em`, `oi`, `oe`, `cl`, `ro`, `fu`, `of`).
    pub fn short_name(self) -> &'static str {
        match self {
            ZoneCond::NotWp => "nw",
            ZoneCond::Empty => "em",
            ZoneCond::ImplicitOpen => "oi",
            ZoneCond::ExplicitOpen => "oe",
            ZoneCond::Closed => "cl",
            ZoneCond::ReadOnly => "ro",
            ZoneCond::Full => "fu",
            ZoneCond::Offline => "of",
        }
    }

    /// Implicitly or explicitly open (libzbd `zbd_zone_is_open`).
    pub fn is_open(self) -> bool {
        matches!(self, ZoneCond::ImplicitOpen | ZoneCond::ExplicitOpen)
    }

    /// Open or closed: holds an active-zone resource (libzbd `zbd_zone_is_active`).
    pub fn is_active(self) -> bool {
        self.is_open() || self == ZoneCond::Closed
    }
}

impl fmt::Display for ZoneCond {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            ZoneCond::NotWp => "not-write-pointer",
            ZoneCond::Empty => "empty",
            ZoneCond::ImplicitOpen => "implicit-open",
            ZoneCond::ExplicitOpen => "explicit-open",
            ZoneCond::Closed => "closed",
            ZoneCond::ReadOnly => "read-only",
            ZoneCond::Full => "full",
            ZoneCond::Offline => "offline",
        })
    }
}

/// One zone as `BLKREPORTZONE` describes it (`struct blk_zone`): every position and length in
/// 512-byte sectors.
///
/// `wp` is absolute. As Linux's SCSI/ATA layer (`sd_zbc`) reports them, conventional zones and
/// FULL zones have `wp = start + len`; READONLY and OFFLINE zones have no valid write pointer and
/// report `u64::MAX` (null_blk's `NULL_ZONE_INVALID_WP`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Zone {
    /// First sector of the zone.
    pub start: u64,
    /// Zone length in sectors (the zone size; smaller for a runt last zone).
    pub len: u64,
    /// Write pointer (absolute sector).
    pub wp: u64,
    /// Writable sectors from `start` (`capacity <= len`).
    pub capacity: u64,
    /// Zone type.
    #[serde(rename = "type")]
    pub zone_type: ZoneType,
    /// Zone condition.
    pub cond: ZoneCond,
    /// A sequential-write-preferred zone was written out of order (`non_seq`).
    pub non_seq: bool,
    /// Reset recommended by the device (`reset`); never set by the emulators.
    pub reset: bool,
}

impl Zone {
    /// Index of this zone on a device with `zone_sectors`-sector zones.
    pub fn index(&self, zone_sectors: u64) -> u64 {
        self.start / zone_sectors
    }

    /// One past the last sector of the zone.
    pub fn end(&self) -> u64 {
        self.start + self.len
    }

    /// Sectors written from the start (0 for conventional, read-only and offline zones; the
    /// capacity for a zone filled by writes, the length for a finished one).
    pub fn written(&self) -> u64 {
        if self.zone_type == ZoneType::Conventional || self.wp == u64::MAX {
            0
        } else {
            self.wp - self.start
        }
    }
}

/// A zone management operation (`BLKRESETZONE`, `BLKOPENZONE`, `BLKCLOSEZONE`,
/// `BLKFINISHZONE`; libzbd's `enum zbd_zone_op` numbers them 1 to 4).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ZoneOp {
    /// Rewind the write pointer to the zone start; the zone becomes EMPTY.
    Reset,
    /// Explicitly open.
    Open,
    /// Close an open zone (CLOSED, or EMPTY if nothing was written).
    Close,
    /// Move the write pointer to the zone end; the zone becomes FULL.
    Finish,
}

impl ZoneOp {
    /// Every operation.
    pub const ALL: [ZoneOp; 4] = [ZoneOp::Reset, ZoneOp::Open, ZoneOp::Close, ZoneOp::Finish];

    /// Lower-case name (`reset`, `open`, `close`, `finish`).
    pub fn name(self) -> &'static str {
        match self {
            ZoneOp::Reset => "reset",
            ZoneOp::Open => "open",
            ZoneOp::Close => "close",
            ZoneOp::Finish => "finish",
        }
    }
}

impl fmt::Display for ZoneOp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Which zones a report lists (libzbd `enum zbd_report_option`, ZBC reporting options).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ReportOption {
    /// 0x00: every zone.
    #[default]
    All,
    /// 0x01: EMPTY zones.
    Empty,
    /// 0x02: implicitly open zones.
    ImplicitOpen,
    /// 0x03: explicitly open zones.
    ExplicitOpen,
    /// 0x04: CLOSED zones.
    Closed,
    /// 0x05: FULL zones.
    Full,
    /// 0x06: READONLY zones.
    ReadOnly,
    /// 0x07: OFFLINE zones.
    Offline,
    /// 0x10: zones with the reset-recommended flag.
    ResetRecommended,
    /// 0x11: zones with the non-sequential-write-resources flag.
    NonSeq,
    /// 0x3F: conventional (not-write-pointer) zones.
    NotWp,
}

impl ReportOption {
    /// The libzbd / ZBC code.
    pub fn code(self) -> u8 {
        match self {
            ReportOption::All => 0x00,
            ReportOption::Empty => 0x01,
            ReportOption::ImplicitOpen => 0x02,
            ReportOption::ExplicitOpen => 0x03,
            ReportOption::Closed => 0x04,
            ReportOption::Full => 0x05,
            ReportOption::ReadOnly => 0x06,
            ReportOption::Offline => 0x07,
            ReportOption::ResetRecommended => 0x10,
            ReportOption::NonSeq => 0x11,
            ReportOption::NotWp => 0x3F,
        }
    }

    /// Whether `zone` is listed under this option.
    pub fn matches(self, zone: &Zone) -> bool {
        match self {
            ReportOption::All => true,
            ReportOption::Empty => zone.cond == ZoneCond::Empty,
            ReportOption::ImplicitOpen => zone.cond == ZoneCond::ImplicitOpen,
            ReportOption::ExplicitOpen => zone.cond == ZoneCond::ExplicitOpen,
            ReportOption::Closed => zone.cond == ZoneCond::Closed,
            ReportOption::Full => zone.cond == ZoneCond::Full,
            ReportOption::ReadOnly => zone.cond == ZoneCond::ReadOnly,
            ReportOption::Offline => zone.cond == ZoneCond::Offline,
            ReportOption::ResetRecommended => zone.reset,
            ReportOption::NonSeq => zone.non_seq,
            ReportOption::NotWp => zone.cond == ZoneCond::NotWp,
        }
    }
}

/// Which state machine the device follows where ZBC/ZAC and the Linux null_blk/NVMe ZNS
/// emulation disagree: ZBC/ZAC (libzbc's `02_state_machine_check` scripts) treats OPEN or CLOSE
/// of a FULL zone and CLOSE of an EMPTY zone as successful no-ops, Linux null_blk
/// (`drivers/block/null_blk/zoned.c`) and NVMe ZNS fail them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Dialect {
    /// SCSI ZBC / ATA ZAC (SMR hard drives): OPEN or CLOSE of a FULL zone and CLOSE of an EMPTY
    /// zone succeed without effect (libzbc `02_state_machine_check`).
    #[default]
    Zbc,
    /// Linux null_blk and NVMe ZNS: those three transitions fail (`BLK_STS_IOERR`, ZNS "Invalid
    /// Zone State Transition"), which user space sees as `EIO`.
    Zns,
}

impl Dialect {
    /// `zbc` or `zns`.
    pub fn name(self) -> &'static str {
        match self {
            Dialect::Zbc => "zbc",
            Dialect::Zns => "zns",
        }
    }
}

/// Zoned model (the sysfs `queue/zoned` attribute).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ZonedModel {
    /// `host-managed`: sequential zones are sequential-write-required.
    #[default]
    HostManaged,
    /// `host-aware`: sequential zones are sequential-write-preferred.
    HostAware,
}

/// What a read of sectors at or above a sequential-write-required zone's write pointer does.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ReadAboveWp {
    /// Unrestricted reads (ZBC URSWRZ = 1, what HM drives report): the unwritten part reads as
    /// zeros.
    #[default]
    Zeros,
    /// URSWRZ = 0: the read fails with ATTEMPT TO READ INVALID DATA (`EIO`).
    Fail,
}

/// A bad copy of duplicated metadata that a device found when it opened and did not use
/// (emulators with on-file metadata: [`crate::FileZoned`]'s header backup and zone-table
/// copies). Reported by `fsck`s so that damage to one copy is seen before the other fails.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct MetaDamage {
    /// What is damaged, where, and which copy is in use.
    pub what: String,
    /// Whether a crash can leave it (a page write torn during a flush) as well as damage.
    pub after_crash: bool,
}
