//! Host-managed SMR and other zoned block devices, with the exact zone semantics of Linux.
//!
//! A zoned device splits its address space into zones. Conventional zones take writes
//! anywhere; sequential-write-required zones only at their **write pointer** (WP), and must be
//! reset before they are rewritten. Each zone is in one condition (EMPTY, implicitly or
//! explicitly OPEN, CLOSED, FULL, READONLY, OFFLINE) and devices limit how many zones may be
//! open or active at once. [`ZonedDevice`] is that model, shaped like the Linux ioctls and
//! libzbd: every address and length is in **512-byte sectors** whatever the logical block size,
//! as in `struct blk_zone`.
//!
//! Implementations:
//!
//! - [`MemZoned`]: in memory (tests, simulations).
//! - [`FileZoned`]: an emulated device in a sparse file whose zone state survives restarts and
//!   crashes (`docs/zoned-file-format.md`): data is durable before the write pointer that covers
//!   it, and after a crash the write pointers never exceed durable data.
//! - `BlkZoned` (cargo feature `blkdev`): a real zoned block device through `BLKREPORTZONE`,
//!   `BLKRESETZONE`, `BLKOPENZONE`, `BLKCLOSEZONE`, `BLKFINISHZONE`.
//!
//! Decorators, each itself a [`ZonedDevice`]:
//!
//! - [`Timed`]: answers on the drive models' virtual clock (a [`shingled_device::Mechanism`]
//!   plus zone open/close/reset/finish costs), so engines can be benchmarked in modelled time.
//! - [`Faulty`]: fails the Nth write or flush, tears a write, flips bits on reads, and cuts
//!   power (drops everything not flushed) for the crash tests of engines built on top.
//!
//! Both state-machine dialects are implemented ([`Dialect`]): ZBC/ZAC, where OPEN or CLOSE of a
//! FULL zone and CLOSE of an EMPTY zone succeed without effect, and the Linux null_blk / NVMe
//! ZNS one, where they fail with `EIO`. Resource limits follow null_blk exactly (see
//! [`state`]). Every error is a [`ZonedError`] whose [`ZonedError::errno`] is what Linux would
//! return.
//!
//! ```
//! use shingled_zoned::{Dialect, MemZoned, ZoneCond, ZoneOp, ZonedConfig, ZonedDevice};
//!
//! let mut dev = MemZoned::new(&ZonedConfig::small(4, 64, Dialect::Zbc)).unwrap();
//! let z1 = dev.report_zones(0, 0, Default::default()).unwrap()[1];
//! dev.write(z1.start, &[7u8; 4096]).unwrap(); // at the write pointer: implicitly opens
//! let z1 = dev.report_zone(1).unwrap();
//! assert_eq!((z1.cond, z1.wp - z1.start), (ZoneCond::ImplicitOpen, 8));
//! // not at the write pointer: EIO, nothing changes
//! assert_eq!(dev.write(z1.start, &[0u8; 512]).unwrap_err().errno_name(), "EIO");
//! dev.zone_mgmt(ZoneOp::Reset, z1.start, z1.len).unwrap();
//! assert_eq!(dev.report_zone(1).unwrap().cond, ZoneCond::Empty);
//! ```

mod config;
mod error;
mod fault;
mod file;
pub mod ioctl;
pub mod lock;
mod mem;
pub mod state;
mod storage;
pub mod table;
mod timed;
mod types;

#[cfg(all(feature = "blkdev", target_os = "linux"))]
pub mod blkdev;

pub use config::{DeviceInfo, ZonedConfig};
pub use error::{errno_name, Result, ZonedError};
pub use fault::{FaultPlan, Faulty};
pub use file::{FileOptions, FileStats, FileZoned};
pub use mem::MemZoned;
pub use storage::{
    file_kind, require_file_or_block_device, FileStorage, IoMode, SimStorage, Storage, Survivors,
};
pub use timed::{Timed, TimingConfig, TimingStats};
pub use types::{
    Dialect, MetaDamage, ReadAboveWp, ReportOption, Zone, ZoneCond, ZoneOp, ZoneType, ZonedModel,
    SECTOR_SHIFT, SECTOR_SIZE,
};

/// A zoned block device: the Linux zoned block device model (`blkzoned.h`) as a Rust trait.
///
/// Addresses and lengths are 512-byte sectors. Buffers are whole sectors and, for reads and
/// writes, whole logical blocks at logical-block-aligned sectors (`EINVAL` otherwise). Calls
/// are sequential (`&mut self`); a device is `Send` if its backing is.
pub trait ZonedDevice {
    /// Geometry, limits and dialect. Constant for the device's life.
    fn info(&self) -> DeviceInfo;

    /// The zones overlapping `[sector, sector + nr_sectors)` that `opt` selects, in address
    /// order (`nr_sectors == 0`: up to the end of the device). `sector` beyond the capacity is
    /// `EINVAL`. A report starting inside a zone includes that zone, as `BLKREPORTZONE` does.
    fn report_zones(&self, sector: u64, nr_sectors: u64, opt: ReportOption) -> Result<Vec<Zone>>;

    /// Reads `buf.len()` bytes from `sector`. Reads may span zones. Sectors of a sequential
    /// zone at or above its write pointer read as zeros, or fail with `EIO` when the device
    /// restricts reads ([`ReadAboveWp::Fail`], sequential-write-required zones that are not
    /// FULL). Any sector of an OFFLINE zone fails with `EIO`.
    fn read(&mut self, sector: u64, buf: &mut [u8]) -> Result<()>;

    /// Writes `data` at `sector`.
    ///
    /// - Conventional zones: anywhere, across conventional zones too; never into a sequential
    ///   zone (boundary violation).
    /// - Sequential-write-required zones: exactly at the write pointer (else `EIO`, WP
    ///   unchanged), within the zone capacity (else boundary violation, `EIO`); not to a FULL,
    ///   READONLY or OFFLINE zone (`EIO`).
    /// - An EMPTY or CLOSED zone becomes implicitly open, which needs zone resources: past
    ///   `max_active` the write fails with `EOVERFLOW`; at `max_open` the device closes an
    ///   implicitly open zone, or fails with `ETOOMANYREFS` if all open zones are explicitly
    ///   open. Reaching the capacity makes the zone FULL.
    ///
    /// The data is durable after the next successful [`ZonedDevice::flush`] (or a RESET or
    /// FINISH of its zone), not before.
    fn write(&mut self, sector: u64, data: &[u8]) -> Result<()>;

    /// Resets, opens, closes or finishes the zones of `[sector, sector + nr_sectors)`.
    ///
    /// Arguments as Linux's `blkdev_zone_mgmt` checks them (`EINVAL`): `nr_sectors > 0`, the
    /// range inside the device, starting at a zone start, a whole number of zones unless it
    /// ends at the capacity (a smaller last zone). Zones are processed in order; the first
    /// failure stops the command and the zones before it keep their new state. Conventional
    /// zones fail with `EIO`.
    ///
    /// A range covering the **whole device** is the ZBC "ALL" form: conventional zones are
    /// skipped, RESET resets every non-empty writable zone, OPEN opens every CLOSED zone (all or
    /// none: `ETOOMANYREFS` if they exceed `max_open`), CLOSE closes every open zone, FINISH
    /// finishes every open or closed zone. See the crate docs and the conformance table for
    /// every per-condition result in each [`Dialect`].
    ///
    /// A successful RESET or FINISH is durable when it returns.
    fn zone_mgmt(&mut self, op: ZoneOp, sector: u64, nr_sectors: u64) -> Result<()>;

    /// Makes every completed write durable (a cache flush / `fdatasync`).
    fn flush(&mut self) -> Result<()>;

    /// Puts sequential zone `zone` (an index) in the READONLY or OFFLINE condition, or back to
    /// EMPTY when it already is in that condition: null_blk's configfs `zone_readonly` /
    /// `zone_offline`, for tests. Emulators only; others return `EOPNOTSUPP`.
    fn set_zone_cond(&mut self, zone: u64, cond: ZoneCond) -> Result<()> {
        let _ = cond;
        Err(ZonedError::Unsupported(format!("setting the condition of zone {zone} (emulators only)")))
    }

    /// Bad copies of duplicated metadata found at open and not used (empty for devices
    /// without such metadata).
    fn metadata_damage(&self) -> Vec<MetaDamage> {
        Vec::new()
    }

    /// Zone index `zone` (provided: one-zone report).
    fn report_zone(&self, zone: u64) -> Result<Zone> {
        let info = self.info();
        if zone >= info.nr_zones {
            return Err(ZonedError::InvalidArgument(format!(
                "zone {zone} does not exist ({} zones)",
                info.nr_zones
            )));
        }
        let z = self.report_zones(info.zone_start(zone), 1, ReportOption::All)?;
        z.into_iter().next().ok_or_else(|| ZonedError::InvalidArgument(format!("zone {zone} not reported")))
    }

    /// Zone append (provided): writes `data` at the write pointer of the sequential zone
    /// starting at `zone_start` and returns the sector written. `zone_start` must be a zone
    /// start (`EINVAL`); a conventional zone fails with `EIO` (null_blk).
    fn zone_append(&mut self, zone_start: u64, data: &[u8]) -> Result<u64> {
        let info = self.info();
        if zone_start >= info.capacity_sectors || !zone_start.is_multiple_of(info.zone_sectors) {
            return Err(ZonedError::InvalidArgument(format!(
                "zone append at sector {zone_start}: not a zone start"
            )));
        }
        let z = self.report_zone(info.zone_of(zone_start))?;
        let zone = info.zone_of(zone_start);
        match z.cond {
            ZoneCond::NotWp => return Err(ZonedError::NotSequential { zone, what: "zone append" }),
            ZoneCond::ReadOnly => return Err(ZonedError::ZoneReadOnly { zone }),
            ZoneCond::Offline => return Err(ZonedError::ZoneOffline { zone }),
            ZoneCond::Full => return Err(ZonedError::ZoneFull { zone }),
            _ => {}
        }
        self.write(z.wp, data)?;
        Ok(z.wp)
    }

    /// [`ZonedDevice::zone_mgmt`] over the whole device (the ALL form).
    fn zone_mgmt_all(&mut self, op: ZoneOp) -> Result<()> {
        let cap = self.info().capacity_sectors;
        self.zone_mgmt(op, 0, cap)
    }
}

impl<D: ZonedDevice + ?Sized> ZonedDevice for Box<D> {
    fn info(&self) -> DeviceInfo {
        (**self).info()
    }
    fn report_zones(&self, sector: u64, nr_sectors: u64, opt: ReportOption) -> Result<Vec<Zone>> {
        (**self).report_zones(sector, nr_sectors, opt)
    }
    fn read(&mut self, sector: u64, buf: &mut [u8]) -> Result<()> {
        (**self).read(sector, buf)
    }
    fn write(&mut self, sector: u64, data: &[u8]) -> Result<()> {
        (**self).write(sector, data)
    }
    fn zone_mgmt(&mut self, op: ZoneOp, sector: u64, nr_sectors: u64) -> Result<()> {
        (**self).zone_mgmt(op, sector, nr_sectors)
    }
    fn flush(&mut self) -> Result<()> {
        (**self).flush()
    }
    fn set_zone_cond(&mut self, zone: u64, cond: ZoneCond) -> Result<()> {
        (**self).set_zone_cond(zone, cond)
    }
    fn metadata_damage(&self) -> Vec<MetaDamage> {
        (**self).metadata_damage()
    }
}
