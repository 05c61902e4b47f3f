//! The zone condition state machine, shared by every emulated backing.
//!
//! Transitions and resource accounting follow Linux null_blk (`drivers/block/null_blk/zoned.c`)
//! for the ZNS dialect and the libzbc conformance scripts for ZBC
//! (github.com/westerndigitalcorporation/libzbc, `test/scripts/01_sk_ascq_check` and
//! `02_state_machine_check`):
//!
//! - open = implicit-open + explicit-open, active = open + closed;
//! - an EMPTY zone that becomes open checks the active limit first, then the open limit; a CLOSED
//!   zone checks the open limit only (`null_check_zone_resources`);
//! - at the open limit, if some zone is implicitly open *and the active limit is not reached*,
//!   the device closes an implicitly open zone, chosen round-robin from the zone after the last
//!   one it closed (`null_close_imp_open_zone`), and proceeds; otherwise the command fails with
//!   insufficient zone resources (`ETOOMANYREFS`);
//! - the active limit fails with `EOVERFLOW`;
//! - a write that reaches the zone capacity makes the zone FULL and releases its resources.
//!
//! Everything is checked before anything changes: [`ZoneSet::write_check`] is pure, so a backing
//! can do its I/O between the check and [`ZoneSet::write_apply`] and leave the state untouched if
//! the I/O fails.

use crate::config::DeviceInfo;
use crate::error::{Result, ZonedError};
use crate::types::{Dialect, ReadAboveWp, ReportOption, Zone, ZoneCond, ZoneOp, ZoneType};

/// The state of one zone. `wp` and `data_end` count sectors from the zone start.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ZoneState {
    /// Write pointer, relative: 0 = empty, `capacity` after writes filled the zone, `len` after
    /// FINISH (as null_blk).
    pub wp: u64,
    /// Sectors from the start that hold written data: equal to `wp` except after FINISH (the
    /// sectors between the old write pointer and the end read as zeros) and for host-aware
    /// zones written out of order.
    pub data_end: u64,
    /// Condition.
    pub cond: ZoneCond,
    /// A sequential-write-preferred zone was written out of order.
    pub non_seq: bool,
}

impl ZoneState {
    /// This state after a power cycle: open zones become CLOSED, or EMPTY if nothing was
    /// written.
    pub fn persisted(self) -> ZoneState {
        ZoneState { cond: closed_form(self.cond, self.wp), ..self }
    }

    const EMPTY: ZoneState = ZoneState { wp: 0, data_end: 0, cond: ZoneCond::Empty, non_seq: false };
    const CONV: ZoneState = ZoneState { wp: 0, data_end: 0, cond: ZoneCond::NotWp, non_seq: false };
}

/// A part of a read: `nr` sectors from `sector`, read from the backing (`data`) or zero-filled.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ReadSeg {
    /// First sector.
    pub sector: u64,
    /// Length in sectors.
    pub nr: u64,
    /// `true`: read the backing; `false`: zeros.
    pub data: bool,
}

/// What [`ZoneSet::write_check`] decided.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WritePlan {
    /// Zone of the first sector.
    pub zone: u64,
    /// The write goes to conventional zones (no state change).
    pub conventional: bool,
    /// An implicitly open zone the write will close to make room.
    pub victim: Option<u64>,
}

/// The zones of one device and their resource counters.
#[derive(Clone, Debug)]
pub struct ZoneSet {
    info: DeviceInfo,
    zones: Vec<ZoneState>,
    imp_open: u32,
    exp_open: u32,
    closed: u32,
    /// Where the round-robin search for an implicitly open zone to close starts.
    imp_close_next: u64,
}

impl ZoneSet {
    /// A fresh device: conventional zones NOT_WP, sequential zones EMPTY.
    pub fn new(info: DeviceInfo) -> ZoneSet {
        let zones = (0..info.nr_zones)
            .map(|z| if z < info.nr_conv { ZoneState::CONV } else { ZoneState::EMPTY })
            .collect();
        ZoneSet { info, zones, imp_open: 0, exp_open: 0, closed: 0, imp_close_next: info.nr_conv }
    }

    /// The device after a power cycle, from persisted zone states: open zones come back CLOSED
    /// (EMPTY if nothing was written), as tcmu-runner and the qcow2 zoned format do. Fails if a
    /// state is impossible for its zone (the caller names the file).
    pub fn restore(info: DeviceInfo, states: Vec<ZoneState>) -> Result<ZoneSet> {
        if states.len() as u64 != info.nr_zones {
            return Err(ZonedError::ZoneStateCount { states: states.len() as u64, zones: info.nr_zones });
        }
        let mut set = ZoneSet::new(info);
        for (z, s) in states.into_iter().enumerate() {
            let z = z as u64;
            let (len, cap) = (info.zone_len(z), info.zone_cap(z));
            let conv = z < info.nr_conv;
            let s = ZoneState { cond: closed_form(s.cond, s.wp), ..s };
            let ok = match s.cond {
                ZoneCond::NotWp => conv,
                _ if conv => false,
                ZoneCond::Empty => s.wp == 0 && s.data_end == 0,
                ZoneCond::Closed => s.wp > 0 && s.wp < cap && s.data_end <= cap,
                ZoneCond::Full => (s.wp == cap || s.wp == len) && s.data_end <= cap,
                ZoneCond::ReadOnly | ZoneCond::Offline => s.data_end <= cap,
                ZoneCond::ImplicitOpen | ZoneCond::ExplicitOpen => false,
            };
            if !ok {
                return Err(ZonedError::ImpossibleZoneState {
                    zone: z,
                    cond: s.cond,
                    wp: s.wp,
                    data_end: s.data_end,
                    len,
                    cap,
                });
            }
            if s.cond == ZoneCond::Closed {
                set.closed += 1;
            }
            set.zones[z as usize] = if conv { ZoneState::CONV } else { s };
        }
        Ok(set)
    }

    /// Geometry and limits.
    pub fn info(&self) -> &DeviceInfo {
        &self.info
    }

    /// The state of zone `z`.
    pub fn state(&self, z: u64) -> ZoneState {
        self.zones[z as usize]
    }

    /// The state zone `z` has after a power cycle (open → CLOSED or EMPTY): what a backing
    /// persists.
    pub fn persisted_state(&self, z: u64) -> ZoneState {
        self.zones[z as usize].persisted()
    }

    /// Zones open (implicitly, explicitly) and closed.
    pub fn counts(&self) -> (u32, u32, u32) {
        (self.imp_open, self.exp_open, self.closed)
    }

    /// Zone `z` as `BLKREPORTZONE` would describe it.
    pub fn zone(&self, z: u64) -> Zone {
        let i = &self.info;
        let s = self.zones[z as usize];
        let (start, len) = (i.zone_start(z), i.zone_len(z));
        let wp = match s.cond {
            ZoneCond::NotWp | ZoneCond::Full => start + len,
            ZoneCond::ReadOnly | ZoneCond::Offline => u64::MAX,
            _ => start + s.wp,
        };
        Zone {
            start,
            len,
            wp,
            capacity: i.zone_cap(z),
            zone_type: i.zone_type(z),
            cond: s.cond,
            non_seq: s.non_seq,
            reset: false,
        }
    }

    /// The zones overlapping `[sector, sector + nr_sectors)` (`nr_sectors == 0`: to the end of
    /// the device) that `opt` selects, appended to `out` in zone order.
    pub fn report(&self, sector: u64, nr_sectors: u64, opt: ReportOption, out: &mut Vec<Zone>) -> Result<()> {
        let cap = self.info.capacity_sectors;
        if sector >= cap {
            return Err(ZonedError::InvalidArgument(format!(
                "report from sector {sector}: beyond the capacity of {cap} sectors"
            )));
        }
        let end = if nr_sectors == 0 { cap } else { sector.saturating_add(nr_sectors).min(cap) };
        let (first, last) = (self.info.zone_of(sector), self.info.zone_of(end - 1));
        out.extend((first..=last).map(|z| self.zone(z)).filter(|z| opt.matches(z)));
        Ok(())
    }

    /// Checks an I/O's address, length and alignment (`EINVAL`).
    pub fn check_io(&self, what: &str, sector: u64, nr: u64) -> Result<()> {
        let ls = self.info.lba_sectors();
        let cap = self.info.capacity_sectors;
        if nr == 0 {
            return Err(ZonedError::InvalidArgument(format!("{what} of 0 sectors at sector {sector}")));
        }
        if !sector.is_multiple_of(ls) || !nr.is_multiple_of(ls) {
            return Err(ZonedError::InvalidArgument(format!(
                "{what} of {nr} sectors at sector {sector} is not aligned to the {}-byte logical block",
                self.info.lba_size
            )));
        }
        if sector.checked_add(nr).is_none_or(|e| e > cap) {
            return Err(ZonedError::InvalidArgument(format!(
                "{what} of {nr} sectors at sector {sector} ends beyond the capacity of {cap} sectors"
            )));
        }
        Ok(())
    }

    /// Splits a read into backing and zero-filled parts; fails on an offline zone, or above
    /// the write pointer when reads are restricted.
    pub fn read_plan(&self, sector: u64, nr: u64) -> Result<Vec<ReadSeg>> {
        self.check_io("read", sector, nr)?;
        let i = &self.info;
        let mut segs = Vec::new();
        let end = sector + nr;
        let mut s = sector;
        while s < end {
            let z = i.zone_of(s);
            let start = i.zone_start(z);
            let zend = (start + i.zone_len(z)).min(end);
            let st = self.zones[z as usize];
            let push = |segs: &mut Vec<ReadSeg>, a: u64, b: u64, data: bool| {
                if b > a {
                    match segs.last_mut() {
                        Some(l) if l.data == data && l.sector + l.nr == a => l.nr += b - a,
                        _ => segs.push(ReadSeg { sector: a, nr: b - a, data }),
                    }
                }
            };
            match st.cond {
                ZoneCond::NotWp => push(&mut segs, s, zend, true),
                ZoneCond::Offline => return Err(ZonedError::ZoneOffline { zone: z }),
                cond => {
                    let restricted = i.read_above_wp == ReadAboveWp::Fail
                        && i.zone_type(z) == ZoneType::SeqWriteRequired
                        && !matches!(cond, ZoneCond::Full | ZoneCond::ReadOnly);
                    if restricted && zend > start + st.wp {
                        return Err(ZonedError::ReadAboveWp {
                            zone: z,
                            sector: s.max(start + st.wp),
                            wp: start + st.wp,
                        });
                    }
                    let data_end = (start + st.data_end).clamp(s, zend);
                    push(&mut segs, s, data_end, true);
                    push(&mut segs, data_end, zend, false);
                }
            }
            s = zend;
        }
        Ok(segs)
    }

    fn check_active(&self, z: u64) -> Result<()> {
        let max = self.info.max_active;
        let active = self.imp_open + self.exp_open + self.closed;
        if max == 0 || active < max {
            Ok(())
        } else {
            Err(ZonedError::TooManyActive { zone: z, active, max_active: max })
        }
    }

    fn check_open(&self, z: u64) -> Result<Option<u64>> {
        let max = self.info.max_open;
        let open = self.imp_open + self.exp_open;
        if max == 0 || open < max {
            return Ok(None);
        }
        if self.imp_open > 0 && self.check_active(z).is_ok() {
            return Ok(Some(self.imp_open_victim()));
        }
        Err(ZonedError::TooManyOpen { zone: z, open, max_open: max })
    }

    /// null_blk's `null_check_zone_resources` for an EMPTY or CLOSED zone `z` about to open.
    fn check_resources(&self, z: u64) -> Result<Option<u64>> {
        if self.zones[z as usize].cond == ZoneCond::Empty {
            self.check_active(z)?;
        }
        self.check_open(z)
    }

    /// The implicitly open zone `null_close_imp_open_zone` would close.
    fn imp_open_victim(&self) -> u64 {
        let (conv, n) = (self.info.nr_conv, self.info.nr_zones);
        let mut z = if self.imp_close_next >= n { conv } else { self.imp_close_next };
        for _ in conv..n {
            if self.zones[z as usize].cond == ZoneCond::ImplicitOpen {
                return z;
            }
            z += 1;
            if z >= n {
                z = conv;
            }
        }
        unreachable!("imp_open counter says a zone is implicitly open")
    }

    fn close_victim(&mut self, victim: Option<u64>) {
        if let Some(v) = victim {
            self.close_open_zone(v);
            let next = v + 1;
            self.imp_close_next = if next >= self.info.nr_zones { self.info.nr_conv } else { next };
        }
    }

    /// IMP/EXP_OPEN → CLOSED (EMPTY if nothing written), counters updated.
    fn close_open_zone(&mut self, z: u64) {
        let s = &mut self.zones[z as usize];
        match s.cond {
            ZoneCond::ImplicitOpen => self.imp_open -= 1,
            ZoneCond::ExplicitOpen => self.exp_open -= 1,
            c => unreachable!("closing a zone in condition {c}"),
        }
        if s.wp == 0 {
            s.cond = ZoneCond::Empty;
        } else {
            s.cond = ZoneCond::Closed;
            self.closed += 1;
        }
    }

    /// Releases whatever resource zone `z` holds (before it becomes EMPTY or FULL).
    fn release(&mut self, z: u64) {
        match self.zones[z as usize].cond {
            ZoneCond::ImplicitOpen => self.imp_open -= 1,
            ZoneCond::ExplicitOpen => self.exp_open -= 1,
            ZoneCond::Closed => self.closed -= 1,
            _ => {}
        }
    }

    /// Checks a write of `nr` sectors at `sector` without changing anything.
    pub fn write_check(&self, sector: u64, nr: u64) -> Result<WritePlan> {
        self.check_io("write", sector, nr)?;
        let i = &self.info;
        let z = i.zone_of(sector);
        if z < i.nr_conv {
            if i.zone_of(sector + nr - 1) >= i.nr_conv {
                return Err(ZonedError::BoundaryViolation {
                    zone: z,
                    sector,
                    nr_sectors: nr,
                    limit: i.zone_start(i.nr_conv),
                });
            }
            return Ok(WritePlan { zone: z, conventional: true, victim: None });
        }
        let s = self.zones[z as usize];
        match s.cond {
            ZoneCond::Offline => return Err(ZonedError::ZoneOffline { zone: z }),
            ZoneCond::ReadOnly => return Err(ZonedError::ZoneReadOnly { zone: z }),
            ZoneCond::Full => return Err(ZonedError::ZoneFull { zone: z }),
            _ => {}
        }
        let start = i.zone_start(z);
        if i.zone_type(z) == ZoneType::SeqWriteRequired && sector != start + s.wp {
            return Err(ZonedError::UnalignedWrite { zone: z, sector, wp: start + s.wp });
        }
        let limit = start + i.zone_cap(z);
        if sector + nr > limit {
            return Err(ZonedError::BoundaryViolation { zone: z, sector, nr_sectors: nr, limit });
        }
        let victim = match s.cond {
            ZoneCond::Empty | ZoneCond::Closed => self.check_resources(z)?,
            _ => None,
        };
        Ok(WritePlan { zone: z, conventional: false, victim })
    }

    /// Applies a write [`ZoneSet::write_check`] accepted (the data is in the backing).
    pub fn write_apply(&mut self, plan: WritePlan, sector: u64, nr: u64) {
        if plan.conventional {
            return;
        }
        self.close_victim(plan.victim);
        let z = plan.zone;
        let off = sector - self.info.zone_start(z);
        let cap = self.info.zone_cap(z);
        let s = self.zones[z as usize];
        match s.cond {
            ZoneCond::Empty => self.imp_open += 1,
            ZoneCond::Closed => {
                self.closed -= 1;
                self.imp_open += 1;
            }
            _ => {}
        }
        let s = &mut self.zones[z as usize];
        if matches!(s.cond, ZoneCond::Empty | ZoneCond::Closed) {
            s.cond = ZoneCond::ImplicitOpen;
        }
        s.non_seq |= off != s.wp;
        s.wp = s.wp.max(off + nr);
        s.data_end = s.data_end.max(off + nr);
        if s.wp >= cap {
            let cond = s.cond;
            s.cond = ZoneCond::Full;
            match cond {
                ZoneCond::ImplicitOpen => self.imp_open -= 1,
                ZoneCond::ExplicitOpen => self.exp_open -= 1,
                _ => {}
            }
        }
    }

    /// Runs `op` on the zones of `[sector, sector + nr_sectors)`.
    ///
    /// Argument checks follow `blkdev_zone_mgmt` (`EINVAL`): `nr_sectors > 0`, the range inside
    /// the device, `sector` a zone start, `nr_sectors` a multiple of the zone size unless the
    /// range ends at the capacity (runt last zone). A range covering the whole device acts as
    /// the ZBC ALL bit (see [`crate::ZonedDevice::zone_mgmt`]); otherwise zones are processed in
    /// order and the first failure stops the command, the zones before it keeping their new
    /// state. Every zone whose state changed is pushed to `changed` with its old state, also on
    /// failure.
    pub fn zone_mgmt(
        &mut self,
        op: ZoneOp,
        sector: u64,
        nr_sectors: u64,
        changed: &mut Vec<(u64, ZoneState)>,
    ) -> Result<()> {
        let i = self.info;
        let cap = i.capacity_sectors;
        if nr_sectors == 0 {
            return Err(ZonedError::InvalidArgument(format!("zone {op} of 0 sectors at sector {sector}")));
        }
        let end = sector.checked_add(nr_sectors).filter(|&e| e <= cap).ok_or_else(|| {
            ZonedError::InvalidArgument(format!(
                "zone {op} of {nr_sectors} sectors at sector {sector} ends beyond the capacity of {cap} sectors"
            ))
        })?;
        if !sector.is_multiple_of(i.zone_sectors) {
            return Err(ZonedError::InvalidArgument(format!(
                "zone {op} at sector {sector}: not the start of a zone (zone size {} sectors)",
                i.zone_sectors
            )));
        }
        if !nr_sectors.is_multiple_of(i.zone_sectors) && end != cap {
            return Err(ZonedError::InvalidArgument(format!(
                "zone {op} of {nr_sectors} sectors: not a whole number of {}-sector zones",
                i.zone_sectors
            )));
        }
        if sector == 0 && end == cap {
            return self.zone_mgmt_all(op, changed);
        }
        for z in i.zone_of(sector)..=i.zone_of(end - 1) {
            let before = self.zones[z as usize];
            let r = self.zone_mgmt_one(op, z);
            if self.zones[z as usize] != before {
                changed.push((z, before));
            }
            r?;
        }
        Ok(())
    }

    /// The ZBC ALL bit: conventional zones are skipped silently (libzbc 026/034/044/054), and
    /// each operation touches only the zones it applies to: RESET the non-EMPTY writable zones
    /// (null_blk's `REQ_OP_ZONE_RESET_ALL`), OPEN the CLOSED ones (failing with insufficient
    /// resources, and changing nothing, if they do not all fit: libzbc test 022), CLOSE the
    /// open ones, FINISH the open and closed ones (always succeeds: libzbc 148/149).
    fn zone_mgmt_all(&mut self, op: ZoneOp, changed: &mut Vec<(u64, ZoneState)>) -> Result<()> {
        let i = self.info;
        let targets: Vec<u64> = (i.nr_conv..i.nr_zones)
            .filter(|&z| {
                let c = self.zones[z as usize].cond;
                match op {
                    ZoneOp::Reset => !matches!(c, ZoneCond::Empty | ZoneCond::ReadOnly | ZoneCond::Offline),
                    ZoneOp::Open => c == ZoneCond::Closed,
                    ZoneOp::Close => c.is_open(),
                    ZoneOp::Finish => c.is_active(),
                }
            })
            .collect();
        if op == ZoneOp::Open && i.max_open != 0 {
            let free = i.max_open - self.exp_open;
            if targets.len() as u64 > free as u64 {
                return Err(ZonedError::TooManyOpen {
                    zone: targets.get(free as usize).copied().unwrap_or(i.nr_conv),
                    open: self.imp_open + self.exp_open,
                    max_open: i.max_open,
                });
            }
        }
        for z in targets {
            let before = self.zones[z as usize];
            let r = match op {
                ZoneOp::Finish => {
                    self.release(z);
                    self.set_full(z);
                    Ok(())
                }
                _ => self.zone_mgmt_one(op, z),
            };
            if self.zones[z as usize] != before {
                changed.push((z, before));
            }
            r?;
        }
        Ok(())
    }

    fn set_full(&mut self, z: u64) {
        let len = self.info.zone_len(z);
        let s = &mut self.zones[z as usize];
        s.cond = ZoneCond::Full;
        s.wp = len;
    }

    fn zone_mgmt_one(&mut self, op: ZoneOp, z: u64) -> Result<()> {
        let i = self.info;
        let s = self.zones[z as usize];
        match s.cond {
            ZoneCond::NotWp => return Err(ZonedError::NotSequential { zone: z, what: op_name(op) }),
            ZoneCond::ReadOnly => return Err(ZonedError::ZoneReadOnly { zone: z }),
            ZoneCond::Offline => return Err(ZonedError::ZoneOffline { zone: z }),
            _ => {}
        }
        let invalid = || Err(ZonedError::InvalidTransition { zone: z, op, cond: s.cond });
        let zbc = i.dialect == Dialect::Zbc;
        match op {
            ZoneOp::Open => match s.cond {
                ZoneCond::ExplicitOpen => {}
                ZoneCond::Full if zbc => {}
                ZoneCond::Full => return invalid(),
                ZoneCond::ImplicitOpen => {
                    self.imp_open -= 1;
                    self.exp_open += 1;
                    self.zones[z as usize].cond = ZoneCond::ExplicitOpen;
                }
                ZoneCond::Empty | ZoneCond::Closed => {
                    let victim = self.check_resources(z)?;
                    self.close_victim(victim);
                    if s.cond == ZoneCond::Closed {
                        self.closed -= 1;
                    }
                    self.exp_open += 1;
                    self.zones[z as usize].cond = ZoneCond::ExplicitOpen;
                }
                _ => unreachable!(),
            },
            ZoneOp::Close => match s.cond {
                ZoneCond::Closed => {}
                ZoneCond::Empty | ZoneCond::Full if zbc => {}
                ZoneCond::Empty | ZoneCond::Full => return invalid(),
                ZoneCond::ImplicitOpen | ZoneCond::ExplicitOpen => self.close_open_zone(z),
                _ => unreachable!(),
            },
            ZoneOp::Finish => match s.cond {
                ZoneCond::Full => {}
                ZoneCond::Empty | ZoneCond::Closed => {
                    let victim = self.check_resources(z)?;
                    self.close_victim(victim);
                    self.release(z);
                    self.set_full(z);
                }
                ZoneCond::ImplicitOpen | ZoneCond::ExplicitOpen => {
                    self.release(z);
                    self.set_full(z);
                }
                _ => unreachable!(),
            },
            ZoneOp::Reset => {
                self.release(z);
                self.zones[z as usize] = ZoneState::EMPTY;
            }
        }
        Ok(())
    }

    /// Puts sequential zone `z` in the READONLY or OFFLINE condition, as null_blk's configfs
    /// `zone_readonly` / `zone_offline` do: the zone is finished first (releasing its
    /// resources); asking again for the condition it already has brings it back EMPTY.
    pub fn set_cond(&mut self, z: u64, cond: ZoneCond) -> Result<()> {
        if z >= self.info.nr_zones {
            return Err(ZonedError::InvalidArgument(format!("zone {z} does not exist")));
        }
        if z < self.info.nr_conv {
            return Err(ZonedError::NotSequential { zone: z, what: "a condition change" });
        }
        if !matches!(cond, ZoneCond::ReadOnly | ZoneCond::Offline) {
            return Err(ZonedError::InvalidArgument(format!(
                "condition {cond}: only read-only and offline can be injected"
            )));
        }
        let s = self.zones[z as usize];
        if s.cond == cond {
            self.zones[z as usize] = ZoneState::EMPTY;
            return Ok(());
        }
        if !matches!(s.cond, ZoneCond::ReadOnly | ZoneCond::Offline) {
            self.release(z);
            self.set_full(z);
        }
        let s = &mut self.zones[z as usize];
        s.cond = cond;
        Ok(())
    }

    /// Recounts the resources from the zone conditions and checks them against the counters and
    /// the limits (for tests): [`ZonedError::Inconsistent`] says what disagrees.
    pub fn check_invariants(&self) -> Result<()> {
        self.invariants().map_err(ZonedError::Inconsistent)
    }

    fn invariants(&self) -> std::result::Result<(), String> {
        let count = |c: ZoneCond| self.zones.iter().filter(|s| s.cond == c).count() as u32;
        let (imp, exp, cl) =
            (count(ZoneCond::ImplicitOpen), count(ZoneCond::ExplicitOpen), count(ZoneCond::Closed));
        if (imp, exp, cl) != (self.imp_open, self.exp_open, self.closed) {
            return Err(format!(
                "counters (imp {}, exp {}, closed {}) != conditions (imp {imp}, exp {exp}, closed {cl})",
                self.imp_open, self.exp_open, self.closed
            ));
        }
        let i = &self.info;
        if i.max_open != 0 && imp + exp > i.max_open {
            return Err(format!("{} open zones > max_open {}", imp + exp, i.max_open));
        }
        if i.max_active != 0 && imp + exp + cl > i.max_active {
            return Err(format!("{} active zones > max_active {}", imp + exp + cl, i.max_active));
        }
        for (z, s) in self.zones.iter().enumerate() {
            let cap = i.zone_cap(z as u64);
            let bad = match s.cond {
                ZoneCond::Empty => s.wp != 0,
                ZoneCond::Closed => s.wp == 0 || s.wp >= cap,
                ZoneCond::ImplicitOpen => s.wp >= cap,
                ZoneCond::ExplicitOpen => s.wp >= cap,
                _ => false,
            };
            if bad {
                return Err(format!("zone {z}: condition {} with wp {} (capacity {cap})", s.cond, s.wp));
            }
        }
        Ok(())
    }
}

/// The condition a zone has after a power cycle.
fn closed_form(cond: ZoneCond, wp: u64) -> ZoneCond {
    match cond {
        ZoneCond::ImplicitOpen | ZoneCond::ExplicitOpen if wp == 0 => ZoneCond::Empty,
        ZoneCond::ImplicitOpen | ZoneCond::ExplicitOpen => ZoneCond::Closed,
        c => c,
    }
}

fn op_name(op: ZoneOp) -> &'static str {
    match op {
        ZoneOp::Reset => "zone reset",
        ZoneOp::Open => "zone open",
        ZoneOp::Close => "zone close",
        ZoneOp::Finish => "zone finish",
    }
}
