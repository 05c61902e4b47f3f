//! Device geometry and limits: [`ZonedConfig`] (what a user asks for, null_blk's knob names)
//! and [`DeviceInfo`] (what the device is, after null_blk's clamping rules).

use crate::error::{Result, ZonedError};
use crate::types::{Dialect, ReadAboveWp, ZoneType, ZonedModel, SECTOR_SHIFT, SECTOR_SIZE};
use serde::{Deserialize, Serialize};
use shingled_core::ByteSize;

/// How to build an emulated zoned device. Field names follow null_blk's module parameters
/// (`zone_size`, `zone_capacity`, `zone_nr_conv`, `zone_max_open`, `zone_max_active`) so that
/// configurations move between the two (Linux's `Documentation/block/null_blk.rst`).
///
/// The default is [`ZonedConfig::hm_smr`] at 64 zones.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ZonedConfig {
    /// Device capacity. Default 16 GiB (64 zones of 256 MiB); bounds: at least one zone, a
    /// multiple of `lba_size`. A capacity that is not a multiple of the zone size makes the last
    /// zone smaller (a "runt" zone), which Linux accepts.
    pub capacity: ByteSize,
    /// Zone size. Default 256 MiB (SMRSTORE §2.2, null_blk's default); bounds: a power of two
    /// (Linux requires it), at least `lba_size`, at most 2^40 bytes.
    pub zone_size: ByteSize,
    /// Writable bytes per zone (ZNS zone capacity). 0 means equal to `zone_size` (the default;
    /// SMR drives have capacity = size). Bounds: a multiple of `lba_size`, at most `zone_size`;
    /// smaller than the zone size only if `capacity` is a whole number of zones (null_blk's rule:
    /// no real device has both).
    pub zone_capacity: ByteSize,
    /// Conventional zones at the start of the device. Default 1 (about 1% of an SMR drive's
    /// zones); clamped to `nr_zones − 1` as null_blk does.
    pub nr_conv: u64,
    /// Maximum open zones, 0 = no limit. Default 128 (tcmu-runner). As in null_blk it is
    /// clamped to `max_active` when that is set, and disabled (0) when it is at least the number
    /// of sequential zones.
    pub max_open: u32,
    /// Maximum active (open + closed) zones, 0 = no limit. Default 0 (SMR drives have none).
    /// Disabled (0) when at least the number of sequential zones, as in null_blk.
    pub max_active: u32,
    /// State-machine dialect. Default ZBC.
    pub dialect: Dialect,
    /// Host-managed (sequential-write-required zones, default) or host-aware
    /// (sequential-write-preferred zones).
    pub model: ZonedModel,
    /// Logical block size: 512 or 4096 (default). Every I/O and address is a multiple of it.
    pub lba_size: u32,
    /// Reads at or above the write pointer: zeros (unrestricted, default) or an error.
    pub read_above_wp: ReadAboveWp,
}

impl Default for ZonedConfig {
    fn default() -> Self {
        ZonedConfig::hm_smr(64)
    }
}

/// The most zones a device may have ([`ZonedConfig::sanitize`]).
pub const MAX_ZONES: u64 = 1 << 24;

impl ZonedConfig {
    /// A host-managed SMR drive with `nr_zones` 256 MiB zones: ZBC dialect, about 1%
    /// conventional zones (at least one), max_open 128, no active limit, unrestricted reads,
    /// 4 KiB logical blocks (256 MiB, 1% conventional and 128 open are the defaults of
    /// tcmu-runner's `file_zbc.c` emulator; SMRSTORE's Seagate drive has 74508 zones of which 800
    /// are conventional).
    pub fn hm_smr(nr_zones: u64) -> Self {
        ZonedConfig {
            capacity: ByteSize(nr_zones * (256 << 20)),
            zone_size: ByteSize::mib(256),
            zone_capacity: ByteSize(0),
            nr_conv: (nr_zones / 100).max(1).min(nr_zones.saturating_sub(1)),
            max_open: 128,
            max_active: 0,
            dialect: Dialect::Zbc,
            model: ZonedModel::HostManaged,
            lba_size: 4096,
            read_above_wp: ReadAboveWp::Zeros,
        }
    }

    /// A ZNS-like device with `nr_zones` zones: null_blk/ZNS dialect, 128 MiB zones of 96 MiB
    /// capacity, no conventional zones, max_open = max_active = 14 (128 MiB is QEMU NVMe ZNS's
    /// default `zoned.zone_size`; the capacity and limits are this profile's choice).
    pub fn zns_like(nr_zones: u64) -> Self {
        ZonedConfig {
            capacity: ByteSize(nr_zones * (128 << 20)),
            zone_size: ByteSize::mib(128),
            zone_capacity: ByteSize::mib(96),
            nr_conv: 0,
            max_open: 14,
            max_active: 14,
            dialect: Dialect::Zns,
            model: ZonedModel::HostManaged,
            lba_size: 4096,
            read_above_wp: ReadAboveWp::Zeros,
        }
    }

    /// A small device for tests: `nr_zones` zones of `zone_kib` KiB, 512-byte blocks, no
    /// conventional zones, no limits, in `dialect`.
    pub fn small(nr_zones: u64, zone_kib: u64, dialect: Dialect) -> Self {
        ZonedConfig {
            capacity: ByteSize(nr_zones * zone_kib * 1024),
            zone_size: ByteSize::kib(zone_kib),
            zone_capacity: ByteSize(0),
            nr_conv: 0,
            max_open: 0,
            max_active: 0,
            dialect,
            model: ZonedModel::HostManaged,
            lba_size: 512,
            read_above_wp: ReadAboveWp::Zeros,
        }
    }

    /// Checks every field and applies null_blk's clamping. Returns the device geometry and a
    /// note for every value that was adjusted (as null_blk's `pr_info` lines).
    pub fn sanitize(&self) -> Result<(DeviceInfo, Vec<String>)> {
        let mut notes = Vec::new();
        let lba = self.lba_size as u64;
        if lba != 512 && lba != 4096 {
            return Err(ZonedError::config("lba_size", lba, "expected 512 or 4096"));
        }
        let zs = self.zone_size.0;
        if !zs.is_power_of_two() || zs < lba || zs > 1 << 40 {
            return Err(ZonedError::config(
                "zone_size",
                self.zone_size,
                format!("expected a power of two between lba_size ({lba} B) and 1 TiB (Linux requires power-of-two zone sizes)"),
            ));
        }
        let cap = self.capacity.0;
        if cap < zs {
            return Err(ZonedError::config(
                "capacity",
                self.capacity,
                format!("smaller than one zone ({})", self.zone_size),
            ));
        }
        if !cap.is_multiple_of(lba) {
            return Err(ZonedError::config(
                "capacity",
                self.capacity,
                format!("not a multiple of lba_size {lba}"),
            ));
        }
        let zcap = if self.zone_capacity.0 == 0 { zs } else { self.zone_capacity.0 };
        if zcap > zs {
            return Err(ZonedError::config(
                "zone_capacity",
                self.zone_capacity,
                format!("larger than zone_size {}", self.zone_size),
            ));
        }
        if zcap % lba != 0 {
            return Err(ZonedError::config(
                "zone_capacity",
                self.zone_capacity,
                format!("not a multiple of lba_size {lba}"),
            ));
        }
        if zcap != zs && !cap.is_multiple_of(zs) {
            return Err(ZonedError::config(
                "zone_capacity",
                self.zone_capacity,
                "a zone capacity smaller than the zone size needs a capacity that is a whole number of zones \
                 (null_blk: no real device has both)",
            ));
        }
        let nr_zones = cap.div_ceil(zs);
        if nr_zones > MAX_ZONES {
            // The zone table is held in memory (about 40 bytes a zone, twice on disk): bound it
            // before anything is allocated. 2^24 zones of 256 MiB are 4 PiB, past any drive.
            return Err(ZonedError::config(
                "capacity",
                self.capacity,
                format!(
                    "{nr_zones} zones of {}: at most {MAX_ZONES} zones (a larger zone size gives fewer)",
                    self.zone_size
                ),
            ));
        }
        let mut nr_conv = self.nr_conv;
        if nr_conv >= nr_zones {
            nr_conv = nr_zones - 1;
            notes.push(format!("changed the number of conventional zones to {nr_conv}"));
        }
        let nr_seq = nr_zones - nr_conv;
        let mut max_active = self.max_active;
        let mut max_open = self.max_open;
        if max_active as u64 >= nr_seq && max_active != 0 {
            max_active = 0;
            notes.push("max_active limit disabled, limit >= sequential zone count".into());
        }
        if max_active != 0 && max_open > max_active {
            max_open = max_active;
            notes.push(format!("changed the maximum number of open zones to {max_open}"));
        } else if max_open as u64 >= nr_seq && max_open != 0 {
            max_open = 0;
            notes.push("max_open limit disabled, limit >= sequential zone count".into());
        }
        let info = DeviceInfo {
            capacity_sectors: cap >> SECTOR_SHIFT,
            zone_sectors: zs >> SECTOR_SHIFT,
            zone_capacity_sectors: zcap >> SECTOR_SHIFT,
            nr_zones,
            nr_conv,
            max_open,
            max_active,
            lba_size: self.lba_size,
            dialect: self.dialect,
            model: self.model,
            read_above_wp: self.read_above_wp,
        };
        Ok((info, notes))
    }
}

/// A device's geometry and limits, all addresses in 512-byte sectors (libzbd's `zbd_info` in
/// sector units, plus the emulator's dialect switches).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct DeviceInfo {
    /// Device capacity in sectors.
    pub capacity_sectors: u64,
    /// Zone size in sectors (a power of two).
    pub zone_sectors: u64,
    /// Writable sectors of a full-size zone (a runt last zone has `min(this, its length)`).
    pub zone_capacity_sectors: u64,
    /// Number of zones (the last may be smaller).
    pub nr_zones: u64,
    /// Conventional zones, at the start of the device.
    pub nr_conv: u64,
    /// Maximum open zones, 0 = no limit.
    pub max_open: u32,
    /// Maximum active zones, 0 = no limit.
    pub max_active: u32,
    /// Logical block size in bytes.
    pub lba_size: u32,
    /// State-machine dialect.
    pub dialect: Dialect,
    /// Host-managed or host-aware.
    pub model: ZonedModel,
    /// Reads above the write pointer.
    pub read_above_wp: ReadAboveWp,
}

impl DeviceInfo {
    /// Capacity in bytes.
    pub fn capacity_bytes(&self) -> u64 {
        self.capacity_sectors << SECTOR_SHIFT
    }

    /// Zone size in bytes.
    pub fn zone_bytes(&self) -> u64 {
        self.zone_sectors << SECTOR_SHIFT
    }

    /// Sectors per logical block (1 or 8).
    pub fn lba_sectors(&self) -> u64 {
        self.lba_size as u64 / SECTOR_SIZE
    }

    /// Index of the zone holding `sector` (`sector` must be below the capacity).
    #[inline]
    pub fn zone_of(&self, sector: u64) -> u64 {
        sector >> self.zone_sectors.trailing_zeros()
    }

    /// First sector of zone `zone`.
    #[inline]
    pub fn zone_start(&self, zone: u64) -> u64 {
        zone << self.zone_sectors.trailing_zeros()
    }

    /// Length of zone `zone` in sectors (smaller for a runt last zone).
    #[inline]
    pub fn zone_len(&self, zone: u64) -> u64 {
        self.zone_sectors.min(self.capacity_sectors - self.zone_start(zone))
    }

    /// Writable sectors of zone `zone`.
    #[inline]
    pub fn zone_cap(&self, zone: u64) -> u64 {
        self.zone_capacity_sectors.min(self.zone_len(zone))
    }

    /// The type of zone `zone`.
    pub fn zone_type(&self, zone: u64) -> ZoneType {
        if zone < self.nr_conv {
            ZoneType::Conventional
        } else if self.model == ZonedModel::HostAware {
            ZoneType::SeqWritePreferred
        } else {
            ZoneType::SeqWriteRequired
        }
    }

    /// Number of sequential zones.
    pub fn nr_seq(&self) -> u64 {
        self.nr_zones - self.nr_conv
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn null_blk_clamping_rules() {
        let mut c = ZonedConfig::small(8, 64, Dialect::Zns);
        c.nr_conv = 9;
        c.max_open = 20;
        c.max_active = 3;
        let (i, notes) = c.sanitize().unwrap();
        assert_eq!(i.nr_conv, 7);
        assert_eq!(i.max_active, 0, "max_active 3 >= 1 sequential zone is disabled");
        assert_eq!(i.max_open, 0);
        assert_eq!(notes.len(), 3, "{notes:?}");
        let mut c = ZonedConfig::small(8, 64, Dialect::Zns);
        c.max_open = 6;
        c.max_active = 4;
        let (i, _) = c.sanitize().unwrap();
        assert_eq!((i.max_open, i.max_active), (4, 4));
    }

    #[test]
    fn zone_counts_are_bounded_before_anything_is_allocated() {
        let mut c = ZonedConfig::small(4, 64, Dialect::Zbc);
        c.zone_size = ByteSize::mib(4);
        c.capacity = ByteSize(ByteSize::mib(4).0 << 40);
        let e = c.sanitize().unwrap_err().to_string();
        assert!(e.contains("1099511627776 zones") && e.contains("at most 16777216"), "{e}");
        c.capacity = ByteSize(ByteSize::mib(4).0 * MAX_ZONES);
        c.sanitize().unwrap();
    }

    #[test]
    fn geometry_rejects_what_linux_rejects() {
        let mut c = ZonedConfig::small(4, 64, Dialect::Zbc);
        c.zone_size = ByteSize::kib(48);
        assert!(c.sanitize().unwrap_err().to_string().contains("power of two"));
        let mut c = ZonedConfig::small(4, 64, Dialect::Zbc);
        c.zone_capacity = ByteSize::kib(65);
        assert!(c.sanitize().unwrap_err().to_string().contains("zone_capacity"));
        // a runt last zone is fine with capacity == size, not with a smaller capacity
        let mut c = ZonedConfig::small(4, 64, Dialect::Zbc);
        c.capacity = ByteSize::kib(64 * 3 + 16);
        let (i, _) = c.sanitize().unwrap();
        assert_eq!((i.nr_zones, i.zone_len(3), i.zone_cap(3)), (4, 32, 32));
        c.zone_capacity = ByteSize::kib(32);
        assert!(c.sanitize().is_err());
        let e = ZonedConfig { lba_size: 1024, ..ZonedConfig::default() }.sanitize().unwrap_err();
        assert_eq!(e.errno(), libc::EINVAL);
    }

    #[test]
    fn profiles_are_valid() {
        for c in [ZonedConfig::default(), ZonedConfig::hm_smr(74508), ZonedConfig::zns_like(32)] {
            c.sanitize().unwrap();
        }
        let (i, _) = ZonedConfig::hm_smr(74508).sanitize().unwrap();
        assert_eq!((i.nr_conv, i.max_open), (745, 128));
    }
}
