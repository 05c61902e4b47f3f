//! [`MemZoned`]: a zoned device in memory (null_blk with `memory_backed=1`).

use crate::config::{DeviceInfo, ZonedConfig};
use crate::error::{Result, ZonedError};
use crate::state::{ZoneSet, ZoneState};
use crate::types::{ReportOption, Zone, ZoneCond, ZoneOp, SECTOR_SIZE};
use crate::ZonedDevice;

/// A zoned device held in memory. Each zone keeps only the bytes written so far (a sequential
/// zone grows with its write pointer; a reset frees it), so a large, mostly empty device is
/// cheap. Nothing survives the value; [`crate::Faulty`] adds power cuts on top.
#[derive(Clone, Debug)]
pub struct MemZoned {
    set: ZoneSet,
    data: Vec<Vec<u8>>,
}

impl MemZoned {
    /// Validates `cfg` and builds an empty device.
    pub fn new(cfg: &ZonedConfig) -> Result<MemZoned> {
        let (info, _) = cfg.sanitize()?;
        Ok(MemZoned::with_info(info))
    }

    /// An empty device with already sanitized geometry.
    pub fn with_info(info: DeviceInfo) -> MemZoned {
        MemZoned { set: ZoneSet::new(info), data: vec![Vec::new(); info.nr_zones as usize] }
    }

    /// The state machine (for tests and tools).
    pub fn zone_set(&self) -> &ZoneSet {
        &self.set
    }
}

/// Calls `f(zone, byte offset in zone, byte range in the buffer)` for each zone piece of
/// `[sector, sector + nr)`.
pub(crate) fn for_each_zone_piece(
    info: &DeviceInfo,
    sector: u64,
    nr: u64,
    mut f: impl FnMut(u64, u64, std::ops::Range<usize>) -> Result<()>,
) -> Result<()> {
    let end = sector + nr;
    let mut s = sector;
    while s < end {
        let z = info.zone_of(s);
        let zstart = info.zone_start(z);
        let zend = (zstart + info.zone_len(z)).min(end);
        let b0 = ((s - sector) * SECTOR_SIZE) as usize;
        let b1 = ((zend - sector) * SECTOR_SIZE) as usize;
        f(z, (s - zstart) * SECTOR_SIZE, b0..b1)?;
        s = zend;
    }
    Ok(())
}

pub(crate) fn sectors_of(what: &str, sector: u64, len: usize) -> Result<u64> {
    if !(len as u64).is_multiple_of(SECTOR_SIZE) {
        return Err(ZonedError::InvalidArgument(format!(
            "{what} at sector {sector}: buffer of {len} bytes is not a whole number of 512-byte sectors"
        )));
    }
    Ok(len as u64 / SECTOR_SIZE)
}

impl ZonedDevice for MemZoned {
    fn info(&self) -> DeviceInfo {
        *self.set.info()
    }

    fn report_zones(&self, sector: u64, nr_sectors: u64, opt: ReportOption) -> Result<Vec<Zone>> {
        let mut out = Vec::new();
        self.set.report(sector, nr_sectors, opt, &mut out)?;
        Ok(out)
    }

    fn read(&mut self, sector: u64, buf: &mut [u8]) -> Result<()> {
        let nr = sectors_of("read", sector, buf.len())?;
        let info = *self.set.info();
        for seg in self.set.read_plan(sector, nr)? {
            let base = ((seg.sector - sector) * SECTOR_SIZE) as usize;
            for_each_zone_piece(&info, seg.sector, seg.nr, |z, off, r| {
                let out = &mut buf[base + r.start..base + r.end];
                let have = &self.data[z as usize];
                let off = off as usize;
                let n = if seg.data { have.len().saturating_sub(off).min(out.len()) } else { 0 };
                if n > 0 {
                    out[..n].copy_from_slice(&have[off..off + n]);
                }
                out[n..].fill(0);
                Ok(())
            })?;
        }
        Ok(())
    }

    fn write(&mut self, sector: u64, data: &[u8]) -> Result<()> {
        let nr = sectors_of("write", sector, data.len())?;
        let plan = self.set.write_check(sector, nr)?;
        let info = *self.set.info();
        for_each_zone_piece(&info, sector, nr, |z, off, r| {
            let d = &mut self.data[z as usize];
            let (off, end) = (off as usize, off as usize + r.len());
            if d.len() < end {
                d.resize(end, 0);
            }
            d[off..end].copy_from_slice(&data[r]);
            Ok(())
        })?;
        self.set.write_apply(plan, sector, nr);
        Ok(())
    }

    fn zone_mgmt(&mut self, op: ZoneOp, sector: u64, nr_sectors: u64) -> Result<()> {
        let mut changed: Vec<(u64, ZoneState)> = Vec::new();
        let r = self.set.zone_mgmt(op, sector, nr_sectors, &mut changed);
        for (z, _) in changed {
            if self.set.state(z).cond == ZoneCond::Empty {
                self.data[z as usize] = Vec::new();
            }
        }
        r
    }

    fn flush(&mut self) -> Result<()> {
        Ok(())
    }

    fn set_zone_cond(&mut self, zone: u64, cond: ZoneCond) -> Result<()> {
        self.set.set_cond(zone, cond)?;
        if self.set.state(zone).cond == ZoneCond::Empty {
            self.data[zone as usize] = Vec::new();
        }
        Ok(())
    }
}
