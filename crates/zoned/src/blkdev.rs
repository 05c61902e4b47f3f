//! A real zoned block device through the Linux zoned ioctls (Linux's
//! `include/uapi/linux/blkzoned.h`), behind the `blkdev` cargo feature.
//!
//! The kernel structures are encoded by hand (native-endian fields at their C offsets) so that
//! the only unsafe code is the `ioctl` calls themselves; the tests pin the layouts and the
//! ioctl numbers to what the kernel header implies (`_IOWR(0x12, 130, struct blk_zone_report)`
//! and friends, asm-generic encoding). Running it needs a kernel with `CONFIG_BLK_DEV_ZONED` and a
//! zoned device (a SMR drive, ZNS namespace or zoned null_blk); this crate's CI compiles and
//! unit-tests it only.
#![allow(unsafe_code)]

use crate::config::DeviceInfo;
use crate::error::{Result, ZonedError};
use crate::types::{
    Dialect, ReadAboveWp, ReportOption, Zone, ZoneCond, ZoneOp, ZoneType, ZonedModel, SECTOR_SHIFT,
    SECTOR_SIZE,
};
use crate::ZonedDevice;
use std::fs::{File, OpenOptions};
use std::os::fd::AsRawFd;
use std::os::unix::fs::FileExt;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

/// `sizeof(struct blk_zone)`.
pub const BLK_ZONE_SIZE: usize = 64;
/// `sizeof(struct blk_zone_report)` (without the flexible array).
pub const BLK_ZONE_REPORT_SIZE: usize = 16;
/// `sizeof(struct blk_zone_range)`.
pub const BLK_ZONE_RANGE_SIZE: usize = 16;
/// `BLK_ZONE_REP_CAPACITY`: the report's zones carry a valid `capacity` (Linux 5.9+).
pub const BLK_ZONE_REP_CAPACITY: u32 = 1 << 0;

use crate::ioctl::{ioc, IOC_READ, IOC_WRITE};

/// `_IOWR(0x12, 130, struct blk_zone_report)`.
pub const BLKREPORTZONE: u64 = ioc(IOC_READ | IOC_WRITE, 0x12, 130, BLK_ZONE_REPORT_SIZE as u64);
/// `_IOW(0x12, 131, struct blk_zone_range)`.
pub const BLKRESETZONE: u64 = ioc(IOC_WRITE, 0x12, 131, BLK_ZONE_RANGE_SIZE as u64);
/// `_IOR(0x12, 132, __u32)`: zone size in sectors.
pub const BLKGETZONESZ: u64 = ioc(IOC_READ, 0x12, 132, 4);
/// `_IOR(0x12, 133, __u32)`: number of zones.
pub const BLKGETNRZONES: u64 = ioc(IOC_READ, 0x12, 133, 4);
/// `_IOW(0x12, 134, struct blk_zone_range)`.
pub const BLKOPENZONE: u64 = ioc(IOC_WRITE, 0x12, 134, BLK_ZONE_RANGE_SIZE as u64);
/// `_IOW(0x12, 135, struct blk_zone_range)`.
pub const BLKCLOSEZONE: u64 = ioc(IOC_WRITE, 0x12, 135, BLK_ZONE_RANGE_SIZE as u64);
/// `_IOW(0x12, 136, struct blk_zone_range)`.
pub const BLKFINISHZONE: u64 = ioc(IOC_WRITE, 0x12, 136, BLK_ZONE_RANGE_SIZE as u64);

/// Encodes a `struct blk_zone_range`.
pub fn encode_range(sector: u64, nr_sectors: u64) -> [u8; BLK_ZONE_RANGE_SIZE] {
    let mut b = [0u8; BLK_ZONE_RANGE_SIZE];
    b[0..8].copy_from_slice(&sector.to_ne_bytes());
    b[8..16].copy_from_slice(&nr_sectors.to_ne_bytes());
    b
}

/// Encodes the header of a `struct blk_zone_report` asking for `nr_zones` zones from `sector`.
pub fn encode_report_header(sector: u64, nr_zones: u32) -> [u8; BLK_ZONE_REPORT_SIZE] {
    let mut b = [0u8; BLK_ZONE_REPORT_SIZE];
    b[0..8].copy_from_slice(&sector.to_ne_bytes());
    b[8..12].copy_from_slice(&nr_zones.to_ne_bytes());
    b
}

/// Decodes one 64-byte `struct blk_zone`. Without [`BLK_ZONE_REP_CAPACITY`] in the report
/// flags, the capacity is the zone length (as libzbd does).
pub fn decode_zone(b: &[u8], report_flags: u32) -> Result<Zone> {
    let u64_at = |o: usize| u64::from_ne_bytes(b[o..o + 8].try_into().expect("8 bytes"));
    let bad = |what: &str, v: u8| ZonedError::InvalidArgument(format!("kernel reported {what} code {v:#x}"));
    let zone_type = ZoneType::from_code(b[24]).ok_or_else(|| bad("zone type", b[24]))?;
    let cond = ZoneCond::from_code(b[25]).ok_or_else(|| bad("zone condition", b[25]))?;
    let len = u64_at(8);
    let capacity = if report_flags & BLK_ZONE_REP_CAPACITY != 0 { u64_at(32) } else { len };
    Ok(Zone {
        start: u64_at(0),
        len,
        wp: u64_at(16),
        capacity,
        zone_type,
        cond,
        non_seq: b[26] != 0,
        reset: b[27] != 0,
    })
}

/// Encodes `zone` as a `struct blk_zone` (what a kernel driver fills in; for tests).
pub fn encode_zone(z: &Zone) -> [u8; BLK_ZONE_SIZE] {
    let mut b = [0u8; BLK_ZONE_SIZE];
    b[0..8].copy_from_slice(&z.start.to_ne_bytes());
    b[8..16].copy_from_slice(&z.len.to_ne_bytes());
    b[16..24].copy_from_slice(&z.wp.to_ne_bytes());
    b[24] = z.zone_type.code();
    b[25] = z.cond.code();
    b[26] = z.non_seq as u8;
    b[27] = z.reset as u8;
    b[32..40].copy_from_slice(&z.capacity.to_ne_bytes());
    b
}

fn ioctl_ptr(file: &File, req: u64, arg: *mut u8) -> std::io::Result<()> {
    // SAFETY: `arg` points to a live buffer at least as large as the structure `req` encodes
    // (the callers size it from the same constants), and the descriptor is owned by `file`.
    let r = unsafe { libc::ioctl(file.as_raw_fd(), req as _, arg) };
    if r < 0 {
        Err(std::io::Error::last_os_error())
    } else {
        Ok(())
    }
}

/// A zoned block device (`/dev/sdX`, `/dev/nvmeXnY`, `/dev/nullbN`).
///
/// The kernel keeps the zone state; this type only translates. Dialect: ZBC for SCSI/ATA
/// devices, ZNS for NVMe and null_blk (decided from the device name; only
/// [`DeviceInfo::dialect`] reports it — the device itself decides what succeeds).
#[derive(Debug)]
pub struct BlkZoned {
    path: PathBuf,
    file: File,
    info: DeviceInfo,
}

fn sysfs(dev: &Path, attr: &str) -> Option<String> {
    let name = dev.file_name()?.to_str()?;
    std::fs::read_to_string(format!("/sys/block/{name}/queue/{attr}")).ok().map(|s| s.trim().to_string())
}

impl BlkZoned {
    /// Opens `path` read-write and reads its geometry (ioctls plus sysfs `queue/` attributes,
    /// as libzbd does). Fails with `ENXIO`-like errors if the device is not zoned.
    pub fn open(path: &Path) -> Result<BlkZoned> {
        let ctx = |what: &str| format!("{what} {}", path.display());
        // O_EXCL: refused while mounted or claimed; the flock keeps out every other writer.
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .custom_flags(libc::O_EXCL)
            .open(path)
            .map_err(|e| ZonedError::io(ctx("opening"), e))?;
        crate::lock::lock(&file, path, crate::lock::LockKind::Exclusive)
            .map_err(|e| ZonedError::io(ctx("locking"), e))?;
        let model = match sysfs(path, "zoned").as_deref() {
            Some("host-managed") => ZonedModel::HostManaged,
            Some("host-aware") => ZonedModel::HostAware,
            other => {
                return Err(ZonedError::Unsupported(format!(
                    "{} is not a zoned block device (queue/zoned = {other:?})",
                    path.display()
                )))
            }
        };
        let mut zs = 0u32;
        ioctl_ptr(&file, BLKGETZONESZ, (&mut zs as *mut u32).cast())
            .map_err(|e| ZonedError::io(ctx("BLKGETZONESZ on"), e))?;
        let mut nz = 0u32;
        ioctl_ptr(&file, BLKGETNRZONES, (&mut nz as *mut u32).cast())
            .map_err(|e| ZonedError::io(ctx("BLKGETNRZONES on"), e))?;
        let num = |a: &str| sysfs(path, a).and_then(|s| s.parse::<u64>().ok()).unwrap_or(0);
        let size_bytes = std::fs::metadata(path).map(|m| m.len()).unwrap_or(0);
        let capacity_sectors = if size_bytes > 0 { size_bytes >> SECTOR_SHIFT } else { num("nr_sectors") };
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
        let dialect =
            if name.starts_with("nvme") || name.starts_with("nullb") { Dialect::Zns } else { Dialect::Zbc };
        let mut dev = BlkZoned {
            path: path.to_path_buf(),
            file,
            info: DeviceInfo {
                capacity_sectors,
                zone_sectors: zs as u64,
                zone_capacity_sectors: zs as u64,
                nr_zones: nz as u64,
                nr_conv: 0,
                max_open: num("max_open_zones") as u32,
                max_active: num("max_active_zones") as u32,
                lba_size: num("logical_block_size").max(512) as u32,
                dialect,
                model,
                read_above_wp: ReadAboveWp::Zeros,
            },
        };
        let zones = dev.report_zones(0, 0, ReportOption::All)?;
        dev.info.nr_conv = zones.iter().take_while(|z| z.zone_type == ZoneType::Conventional).count() as u64;
        if let Some(z) = zones.iter().find(|z| z.zone_type.is_sequential()) {
            dev.info.zone_capacity_sectors = z.capacity;
        }
        Ok(dev)
    }

    fn mgmt_ioctl(&self, op: ZoneOp) -> u64 {
        match op {
            ZoneOp::Reset => BLKRESETZONE,
            ZoneOp::Open => BLKOPENZONE,
            ZoneOp::Close => BLKCLOSEZONE,
            ZoneOp::Finish => BLKFINISHZONE,
        }
    }
}

impl ZonedDevice for BlkZoned {
    fn info(&self) -> DeviceInfo {
        self.info
    }

    fn report_zones(&self, sector: u64, nr_sectors: u64, opt: ReportOption) -> Result<Vec<Zone>> {
        const BATCH: usize = 8192; // libzbd's batch size
        let end = if nr_sectors == 0 { u64::MAX } else { sector.saturating_add(nr_sectors) };
        let mut out = Vec::new();
        let mut next = sector;
        let mut buf = vec![0u64; (BLK_ZONE_REPORT_SIZE + BATCH * BLK_ZONE_SIZE) / 8];
        while next < end && next < self.info.capacity_sectors {
            let bytes: &mut [u8] = bytemuck_u64(&mut buf);
            bytes[..BLK_ZONE_REPORT_SIZE].copy_from_slice(&encode_report_header(next, BATCH as u32));
            ioctl_ptr(&self.file, BLKREPORTZONE, bytes.as_mut_ptr())
                .map_err(|e| ZonedError::io(format!("BLKREPORTZONE on {}", self.path.display()), e))?;
            let n = u32::from_ne_bytes(bytes[8..12].try_into().expect("4 bytes")) as usize;
            let flags = u32::from_ne_bytes(bytes[12..16].try_into().expect("4 bytes"));
            if n == 0 {
                break;
            }
            for k in 0..n {
                let at = BLK_ZONE_REPORT_SIZE + k * BLK_ZONE_SIZE;
                let z = decode_zone(&bytes[at..at + BLK_ZONE_SIZE], flags)?;
                next = z.start + z.len;
                if z.start < end && opt.matches(&z) {
                    out.push(z);
                }
            }
        }
        Ok(out)
    }

    fn read(&mut self, sector: u64, buf: &mut [u8]) -> Result<()> {
        self.file
            .read_exact_at(buf, sector * SECTOR_SIZE)
            .map_err(|e| ZonedError::io(format!("reading sector {sector} of {}", self.path.display()), e))
    }

    fn write(&mut self, sector: u64, data: &[u8]) -> Result<()> {
        self.file
            .write_all_at(data, sector * SECTOR_SIZE)
            .map_err(|e| ZonedError::io(format!("writing sector {sector} of {}", self.path.display()), e))
    }

    fn zone_mgmt(&mut self, op: ZoneOp, sector: u64, nr_sectors: u64) -> Result<()> {
        let mut range = encode_range(sector, nr_sectors);
        ioctl_ptr(&self.file, self.mgmt_ioctl(op), range.as_mut_ptr()).map_err(|e| {
            ZonedError::io(
                format!("zone {op} of sectors {sector}+{nr_sectors} on {}", self.path.display()),
                e,
            )
        })
    }

    fn flush(&mut self) -> Result<()> {
        self.file.sync_data().map_err(|e| ZonedError::io(format!("flushing {}", self.path.display()), e))
    }
}

/// Views a `u64` buffer as bytes (keeps the report 8-byte aligned, as the kernel expects).
fn bytemuck_u64(v: &mut [u64]) -> &mut [u8] {
    let len = std::mem::size_of_val(v);
    // SAFETY: u8 has no alignment or validity requirements and the length covers exactly the
    // same allocation.
    unsafe { std::slice::from_raw_parts_mut(v.as_mut_ptr().cast::<u8>(), len) }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The kernel header's layout, mirrored as `repr(C)` structs only to measure it.
    #[repr(C)]
    struct BlkZoneC {
        start: u64,
        len: u64,
        wp: u64,
        zone_type: u8,
        cond: u8,
        non_seq: u8,
        reset: u8,
        resv: [u8; 4],
        capacity: u64,
        reserved: [u8; 24],
    }
    #[repr(C)]
    struct BlkZoneReportC {
        sector: u64,
        nr_zones: u32,
        flags: u32,
    }
    #[repr(C)]
    struct BlkZoneRangeC {
        sector: u64,
        nr_sectors: u64,
    }

    #[test]
    fn struct_layouts_match_blkzoned_h() {
        use std::mem::{offset_of, size_of};
        assert_eq!(size_of::<BlkZoneC>(), BLK_ZONE_SIZE);
        assert_eq!(size_of::<BlkZoneReportC>(), BLK_ZONE_REPORT_SIZE);
        assert_eq!(size_of::<BlkZoneRangeC>(), BLK_ZONE_RANGE_SIZE);
        assert_eq!(
            [offset_of!(BlkZoneC, start), offset_of!(BlkZoneC, len), offset_of!(BlkZoneC, wp)],
            [0, 8, 16]
        );
        assert_eq!(
            [offset_of!(BlkZoneC, zone_type), offset_of!(BlkZoneC, cond), offset_of!(BlkZoneC, non_seq)],
            [24, 25, 26]
        );
        assert_eq!((offset_of!(BlkZoneC, reset), offset_of!(BlkZoneC, resv)), (27, 28));
        assert_eq!((offset_of!(BlkZoneC, capacity), offset_of!(BlkZoneC, reserved)), (32, 40));
        assert_eq!((offset_of!(BlkZoneReportC, nr_zones), offset_of!(BlkZoneReportC, flags)), (8, 12));
        assert_eq!(offset_of!(BlkZoneRangeC, nr_sectors), 8);
    }

    /// Values printed by a C program including <linux/blkzoned.h> on x86_64 Linux 6.18 (the
    /// asm-generic ioctl encoding, shared by x86, arm64 and riscv).
    #[test]
    fn ioctl_numbers_match_the_kernel_header() {
        assert_eq!(BLKREPORTZONE, 0xc010_1282);
        assert_eq!(BLKRESETZONE, 0x4010_1283);
        assert_eq!(BLKGETZONESZ, 0x8004_1284);
        assert_eq!(BLKGETNRZONES, 0x8004_1285);
        assert_eq!(BLKOPENZONE, 0x4010_1286);
        assert_eq!(BLKCLOSEZONE, 0x4010_1287);
        assert_eq!(BLKFINISHZONE, 0x4010_1288);
    }

    #[test]
    fn zone_descriptor_round_trips_and_capacity_falls_back_to_len() {
        let z = Zone {
            start: 524288,
            len: 524288,
            wp: 524296,
            capacity: 393216,
            zone_type: ZoneType::SeqWriteRequired,
            cond: ZoneCond::ImplicitOpen,
            non_seq: false,
            reset: true,
        };
        let b = encode_zone(&z);
        assert_eq!((b[24], b[25], b[27]), (0x2, 0x2, 1));
        assert_eq!(decode_zone(&b, BLK_ZONE_REP_CAPACITY).unwrap(), z);
        assert_eq!(decode_zone(&b, 0).unwrap().capacity, z.len);
        let mut bad = b;
        bad[25] = 0x7; // reserved condition code
        assert!(decode_zone(&bad, 0).is_err());
        assert_eq!(&encode_range(8, 16)[..], &[8, 0, 0, 0, 0, 0, 0, 0, 16, 0, 0, 0, 0, 0, 0, 0][..]);
        assert_eq!(&encode_report_header(1, 2)[8..12], &2u32.to_ne_bytes()[..]);
    }

    #[test]
    fn opening_a_regular_file_says_it_is_not_zoned() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("x");
        std::fs::write(&p, b"x").unwrap();
        assert!(BlkZoned::open(&p).is_err());
    }
}
