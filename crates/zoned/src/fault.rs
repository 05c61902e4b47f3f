//! [`Faulty`]: fault injection as a decorator over any [`ZonedDevice`], for the crash tests of
//! whatever is built on top (RocksDB's `sync_fault_injection` in `db_stress` and redb's "freeze
//! at the Nth flush").

use crate::config::DeviceInfo;
use crate::error::{Result, ZonedError};
use crate::storage::Survivors;
use crate::types::{ReportOption, Zone, ZoneCond, ZoneOp, SECTOR_SIZE};
use crate::ZonedDevice;
use shingled_core::SplitMix64;

/// Which operations fail, counted from 1 over the decorator's life.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FaultPlan {
    /// The Nth write fails with `EIO` and reaches nothing.
    pub fail_write: Option<u64>,
    /// The Nth flush fails with `EIO` and makes nothing durable.
    pub fail_flush: Option<u64>,
    /// The Nth write is torn: only its first `keep` sectors (rounded down to whole logical
    /// blocks) reach the device, then it fails with `EIO`.
    pub tear_write: Option<(u64, u64)>,
    /// Every Nth read returns one flipped bit (at a position drawn from `seed`).
    pub flip_read_every: Option<u64>,
    /// Seed for bit positions and for [`Survivors::Random`].
    pub seed: u64,
}

/// A device that fails on schedule and can lose power.
///
/// Durability model (the [`ZonedDevice`] contract): a write is durable after the next
/// successful flush; a successful RESET or FINISH makes its zones' state (and their data)
/// durable. [`Faulty::power_cut`] brings the inner device back to its durable state, keeping the
/// unflushed writes [`Survivors`] selects, and leaves every zone closed, as after a restart.
#[derive(Debug)]
pub struct Faulty<D: ZonedDevice> {
    inner: D,
    plan: FaultPlan,
    writes: u64,
    flushes: u64,
    reads: u64,
    rng: SplitMix64,
    /// Every zone's durable state (conventional zones unused).
    durable: Vec<Zone>,
    /// Conventional-zone overwrites since the last flush: (sector, old bytes), in issue order.
    undo: Vec<(u64, Vec<u8>)>,
}

impl<D: ZonedDevice> Faulty<D> {
    /// Wraps `inner`, whose current state is taken as durable.
    pub fn new(inner: D, plan: FaultPlan) -> Result<Faulty<D>> {
        let durable = inner.report_zones(0, 0, ReportOption::All)?;
        Ok(Faulty {
            inner,
            rng: SplitMix64::new(plan.seed),
            plan,
            writes: 0,
            flushes: 0,
            reads: 0,
            durable,
            undo: Vec::new(),
        })
    }

    /// Replaces the plan; counters keep running.
    pub fn set_plan(&mut self, plan: FaultPlan) {
        self.plan = plan;
    }

    /// Writes, flushes and reads seen so far.
    pub fn counts(&self) -> (u64, u64, u64) {
        (self.writes, self.flushes, self.reads)
    }

    /// The wrapped device.
    pub fn inner(&self) -> &D {
        &self.inner
    }

    /// Unwraps.
    pub fn into_inner(self) -> D {
        self.inner
    }

    /// Cuts power: conventional-zone overwrites since the last flush are undone and every
    /// sequential zone goes back to its durable write pointer, except for the unflushed writes
    /// `survivors` keeps (for [`Survivors::Random`], a random prefix of each zone's unflushed
    /// data and a random subset of the conventional overwrites). Then every zone is closed and
    /// the result is durable. Uses only the [`ZonedDevice`] interface (read, reset, rewrite,
    /// close), so it works over any backing.
    pub fn power_cut(&mut self, survivors: Survivors) -> Result<()> {
        let info = self.inner.info();
        let mut rng = SplitMix64::new(match survivors {
            Survivors::Random { seed } => seed,
            _ => 0,
        });
        for (sector, old) in std::mem::take(&mut self.undo).into_iter().rev() {
            let revert = match survivors {
                Survivors::None => true,
                Survivors::All => false,
                Survivors::Random { .. } => rng.next_u64().is_multiple_of(2),
            };
            if revert {
                self.inner.write(sector, &old)?;
            }
        }
        let current = self.inner.report_zones(0, 0, ReportOption::All)?;
        for z in current.iter().filter(|z| z.cond.is_open()) {
            self.inner.zone_mgmt(ZoneOp::Close, z.start, z.len)?;
        }
        // Zones going back to EMPTY first, so the active count only grows towards the durable
        // state's (which respected max_active) while the others are rebuilt.
        let mut plan: Vec<(u64, u64, u64)> = Vec::new();
        for (cur, dur) in current.iter().zip(&self.durable) {
            let fixed = |c: ZoneCond| matches!(c, ZoneCond::Full | ZoneCond::ReadOnly | ZoneCond::Offline);
            // Durable FULL, READONLY and OFFLINE zones cannot have changed since: only a
            // (durable) reset or condition change leaves those conditions.
            if !cur.zone_type.is_sequential()
                || fixed(dur.cond)
                || matches!(cur.cond, ZoneCond::ReadOnly | ZoneCond::Offline)
            {
                continue;
            }
            let cur_w = cur.written().min(cur.capacity);
            let (lo, hi) = (dur.written(), cur_w.max(dur.written()));
            let keep = match survivors {
                Survivors::None => lo,
                Survivors::All => hi,
                Survivors::Random { .. } => {
                    let ls = info.lba_sectors();
                    lo + (rng.next_u64() % ((hi - lo) / ls + 1)) * ls
                }
            };
            // Zones that keep unflushed writes are rebuilt even when they keep all of them, so
            // that the durable-active zones get their resources first.
            if cur_w != keep || keep != lo {
                plan.push((info.zone_of(cur.start), keep, lo));
            }
        }
        // Read what each zone keeps, then reset them all, then rewrite: first the zones that end
        // FULL, then those whose durable state is active (the durable state respected max_active), then those that
        // only unflushed writes would make active; when one of those finds no active resource
        // left (a mix of survivors no runtime state had), it stays EMPTY, as if its writes had
        // been lost.
        let mut saved = Vec::with_capacity(plan.len());
        for (z, keep, lo) in plan {
            let start = info.zone_start(z);
            let full = keep == info.zone_cap(z);
            let mut data = vec![0u8; (keep * SECTOR_SIZE) as usize];
            if keep > 0 {
                self.inner.read(start, &mut data)?;
            }
            saved.push((z, lo, full, data));
        }
        for &(z, _, _, _) in &saved {
            self.inner.zone_mgmt(ZoneOp::Reset, info.zone_start(z), info.zone_len(z))?;
        }
        // Zones that end FULL need an active resource only while they are rewritten: first.
        saved.sort_by_key(|&(_, lo, full, _)| (!full, lo == 0));
        for (z, lo, _, data) in saved {
            self.rewrite(&info, z, lo, &data)?;
        }
        self.inner.flush()?;
        self.durable = self.inner.report_zones(0, 0, ReportOption::All)?;
        Ok(())
    }

    /// Writes `data` from the start of the (empty) zone `z` and closes it.
    fn rewrite(&mut self, info: &DeviceInfo, z: u64, lo: u64, data: &[u8]) -> Result<()> {
        let start = info.zone_start(z);
        const CHUNK: usize = 1 << 20;
        for (i, c) in data.chunks(CHUNK).enumerate() {
            match self.inner.write(start + (i * CHUNK) as u64 / SECTOR_SIZE, c) {
                Err(ZonedError::TooManyActive { .. }) if lo == 0 && i == 0 => return Ok(()),
                r => r?,
            }
        }
        if self.inner.report_zone(z)?.cond.is_open() {
            self.inner.zone_mgmt(ZoneOp::Close, start, info.zone_len(z))?;
        }
        Ok(())
    }
}

impl<D: ZonedDevice> ZonedDevice for Faulty<D> {
    fn info(&self) -> DeviceInfo {
        self.inner.info()
    }

    fn report_zones(&self, sector: u64, nr_sectors: u64, opt: ReportOption) -> Result<Vec<Zone>> {
        self.inner.report_zones(sector, nr_sectors, opt)
    }

    fn read(&mut self, sector: u64, buf: &mut [u8]) -> Result<()> {
        self.inner.read(sector, buf)?;
        self.reads += 1;
        if let Some(n) = self.plan.flip_read_every {
            if n > 0 && self.reads.is_multiple_of(n) && !buf.is_empty() {
                let bit = self.rng.next_u64() % (buf.len() as u64 * 8);
                buf[(bit / 8) as usize] ^= 1 << (bit % 8);
            }
        }
        Ok(())
    }

    fn write(&mut self, sector: u64, data: &[u8]) -> Result<()> {
        self.writes += 1;
        let n = self.writes;
        if self.plan.fail_write == Some(n) {
            return Err(ZonedError::Injected(format!("write #{n} at sector {sector} failed")));
        }
        let info = self.inner.info();
        let mut data = data;
        let mut torn = None;
        if let Some((at, keep)) = self.plan.tear_write {
            if at == n {
                let ls = info.lba_sectors();
                let nr = data.len() as u64 / SECTOR_SIZE;
                let keep = (keep.min(nr) / ls * ls).min(nr.saturating_sub(ls));
                data = &data[..(keep * SECTOR_SIZE) as usize];
                torn = Some(keep);
            }
        }
        if !data.is_empty() {
            if sector < info.capacity_sectors && info.zone_of(sector) < info.nr_conv {
                let mut old = vec![0u8; data.len()];
                self.inner.read(sector, &mut old)?;
                self.inner.write(sector, data)?;
                self.undo.push((sector, old));
            } else {
                self.inner.write(sector, data)?;
            }
        }
        match torn {
            Some(k) => {
                Err(ZonedError::Injected(format!("write #{n} at sector {sector} torn after {k} sectors")))
            }
            None => Ok(()),
        }
    }

    fn zone_mgmt(&mut self, op: ZoneOp, sector: u64, nr_sectors: u64) -> Result<()> {
        let before = self.inner.report_zones(0, 0, ReportOption::All).unwrap_or_default();
        let r = self.inner.zone_mgmt(op, sector, nr_sectors);
        if matches!(op, ZoneOp::Reset | ZoneOp::Finish) {
            let after = self.inner.report_zones(0, 0, ReportOption::All)?;
            for (i, (b, a)) in before.iter().zip(&after).enumerate() {
                if b != a {
                    self.durable[i] = *a;
                }
            }
        }
        r
    }

    fn flush(&mut self) -> Result<()> {
        self.flushes += 1;
        let n = self.flushes;
        if self.plan.fail_flush == Some(n) {
            return Err(ZonedError::Injected(format!("flush #{n} failed")));
        }
        self.inner.flush()?;
        self.durable = self.inner.report_zones(0, 0, ReportOption::All)?;
        self.undo.clear();
        Ok(())
    }

    fn set_zone_cond(&mut self, zone: u64, cond: ZoneCond) -> Result<()> {
        self.inner.set_zone_cond(zone, cond)?;
        self.durable[zone as usize] = self.inner.report_zone(zone)?;
        Ok(())
    }
    fn metadata_damage(&self) -> Vec<crate::MetaDamage> {
        self.inner.metadata_damage()
    }
}
