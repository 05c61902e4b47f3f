//! [`Tap`]: what the macro bench sees inside the zones GC resets.

use super::*;

/// A data record as [`Tap`] saw it written: owner, its stream's pool key, user bytes.
#[derive(Clone, Copy, Debug)]
pub(super) struct TapRec {
    pub(super) chunk: ChunkId,
    pub(super) len: u32,
    pub(super) pool: u8,
}

/// A pass-through device under [`Timed`] that decodes the data records written to each zone
/// (no reads, no modelled time) and, when a zone is reset, logs what it held. The macro bench
/// uses it to see inside the zones GC picks without touching the store or the clock.
#[derive(Debug)]
pub(super) struct Tap<D: ZonedDevice> {
    pub(super) inner: D,
    pub(super) info: DeviceInfo,
    pub(super) zones: Vec<Vec<TapRec>>,
    pub(super) resets: std::cell::RefCell<Vec<(u64, Vec<TapRec>)>>,
}

impl<D: ZonedDevice> Tap<D> {
    pub(super) fn new(inner: D) -> Tap<D> {
        let info = inner.info();
        Tap { inner, info, zones: vec![Vec::new(); info.nr_zones as usize], resets: Default::default() }
    }

    /// Takes the log of resets since the last call: `(zone, records it held)`.
    pub(super) fn take_resets(&self) -> Vec<(u64, Vec<TapRec>)> {
        std::mem::take(&mut *self.resets.borrow_mut())
    }
}

impl<D: ZonedDevice> ZonedDevice for Tap<D> {
    fn info(&self) -> DeviceInfo {
        self.inner.info()
    }
    fn report_zones(
        &self,
        sector: u64,
        nr_sectors: u64,
        opt: shingled_zoned::ReportOption,
    ) -> shingled_zoned::Result<Vec<shingled_zoned::Zone>> {
        self.inner.report_zones(sector, nr_sectors, opt)
    }
    fn read(&mut self, sector: u64, buf: &mut [u8]) -> shingled_zoned::Result<()> {
        self.inner.read(sector, buf)
    }
    fn write(&mut self, sector: u64, data: &[u8]) -> shingled_zoned::Result<()> {
        self.inner.write(sector, data)?;
        // The engine writes whole records, one or several consecutive ones per command
        // (write_run), so a header is at the start and after each record.
        let mut at = 0usize;
        while data.len() >= at + HEADER_LEN + DATA_PREFIX && sector < self.info.capacity_sectors {
            let Ok(h) = format::decode_header(&data[at..at + HEADER_LEN]) else { break };
            if h.rtype != RecordType::Data {
                break;
            }
            let p = &data[at + HEADER_LEN..at + HEADER_LEN + DATA_PREFIX];
            if let Ok(d) = format::decode_data_prefix(p, h.payload_len as usize) {
                let z = self.info.zone_of(sector) as usize;
                self.zones[z].push(TapRec { chunk: d.chunk, len: d.len, pool: d.pool });
            }
            at += h.record_len() as usize;
        }
        Ok(())
    }
    fn zone_mgmt(&mut self, op: ZoneOp, sector: u64, nr_sectors: u64) -> shingled_zoned::Result<()> {
        self.inner.zone_mgmt(op, sector, nr_sectors)?;
        if op == ZoneOp::Reset && sector < self.info.capacity_sectors {
            let first = self.info.zone_of(sector);
            let last =
                self.info.zone_of((sector + nr_sectors.max(1) - 1).min(self.info.capacity_sectors - 1));
            for z in first..=last {
                let recs = std::mem::take(&mut self.zones[z as usize]);
                self.resets.borrow_mut().push((z, recs));
            }
        }
        Ok(())
    }
    fn flush(&mut self) -> shingled_zoned::Result<()> {
        self.inner.flush()
    }
    fn set_zone_cond(&mut self, zone: u64, cond: shingled_zoned::ZoneCond) -> shingled_zoned::Result<()> {
        self.inner.set_zone_cond(zone, cond)
    }
    fn metadata_damage(&self) -> Vec<shingled_zoned::MetaDamage> {
        self.inner.metadata_damage()
    }
}
