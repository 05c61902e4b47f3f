//! Sequential zone reads for recovery's scan and fsck: a window of up to
//! [`StoreConfig::scan_buffer_bytes`](crate::StoreConfig::scan_buffer_bytes) filled by one device
//! read per refill, from which records are parsed. A record that straddles the end of the window
//! is carried over: its bytes already read move to the front and only the rest is read.

use crate::{Result, StoreError};
use shingled_zoned::{ZonedDevice, SECTOR_SIZE};

pub(super) struct ZoneScan {
    /// Device zone number and its first sector.
    z: u64,
    zs: u64,
    /// Byte offset in the zone the window never reads past (the write pointer or the end
    /// checked); a request beyond it is read on its own, exactly as asked.
    limit: u64,
    /// Most bytes the window holds.
    cap: usize,
    /// The window: zone bytes `[base, base + buf.len())`.
    buf: Vec<u8>,
    base: u64,
    /// A request that does not fit the window (longer than it, or past `limit`).
    big: Vec<u8>,
}

impl ZoneScan {
    pub(super) fn new(z: u64, zs: u64, limit: u64, cap: usize) -> Self {
        let cap = (cap as u64).max(SECTOR_SIZE) / SECTOR_SIZE * SECTOR_SIZE;
        ZoneScan { z, zs, limit, cap: cap as usize, buf: Vec::new(), base: 0, big: Vec::new() }
    }

    /// Bytes `[off, off + len)` of the zone (`off` and `len` sector multiples).
    pub(super) fn get<D: ZonedDevice>(
        &mut self,
        dev: &mut D,
        off: u64,
        len: usize,
        what: &str,
    ) -> Result<&[u8]> {
        let end = off + len as u64;
        if off >= self.base && end <= self.base + self.buf.len() as u64 {
            let s = (off - self.base) as usize;
            return Ok(&self.buf[s..s + len]);
        }
        if end > self.limit || len > self.cap {
            self.big.clear();
            self.big.resize(len, 0);
            dev.read(self.zs + off / SECTOR_SIZE, &mut self.big)
                .map_err(StoreError::dev(format!("{what} zone {} at byte {off}", self.z)))?;
            return Ok(&self.big);
        }
        // Refill: carry what is already read from `off` on, read the rest up to the window size.
        let wend = self.base + self.buf.len() as u64;
        let keep = if off >= self.base && off < wend { (wend - off) as usize } else { 0 };
        if keep > 0 {
            let s = (off - self.base) as usize;
            self.buf.copy_within(s.., 0);
        }
        let new_end = self.limit.min(off + self.cap as u64);
        self.buf.resize((new_end - off) as usize, 0);
        self.base = off;
        let from = off + keep as u64;
        dev.read(self.zs + from / SECTOR_SIZE, &mut self.buf[keep..])
            .map_err(StoreError::dev(format!("{what} zone {} at byte {from}", self.z)))?;
        Ok(&self.buf[..len])
    }
}
