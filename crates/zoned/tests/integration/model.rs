//! Model-based property tests (sled's style): random sequences of zone operations, writes,
//! reads, flushes, restarts and power cuts, run against a device and against a deliberately
//! naive reference model (resource counts recomputed by scanning every zone, the §1.2 tables
//! transcribed as `match`es), compared after every step: result (ok or errno), every zone's
//! condition and write pointer, and the bytes read.
//!
//! - `mem_matches_model`: [`MemZoned`], no crashes: the state machine itself.
//! - `file_survives_restarts_and_power_cuts`: [`FileZoned`] on a [`SimStorage`]; `Restart` is
//!   a process crash (unsynced writes survive), `PowerCut` loses any subset of unsynced writes
//!   (torn at 512-byte boundaries), `CrashInFlush` freezes the storage at the k-th operation of
//!   a flush and then cuts power. After each, every zone must be exactly as of the last durable
//!   point (a flush, reset or finish), or, for a crash inside a flush, as before or as after it;
//!   write pointers never exceed durable data.
//! - `faulty_power_cut_restores_durable_state`: [`Faulty`] over [`MemZoned`] with power cuts
//!   that keep nothing, everything, or random prefixes of the unflushed writes.

use proptest::prelude::*;
use rand_pcg::rand_core::{RngCore, SeedableRng};
use shingled_core::ByteSize;
use shingled_zoned::{
    DeviceInfo, Dialect, FaultPlan, Faulty, FileZoned, MemZoned, ReadAboveWp, ReportOption, SimStorage,
    Survivors, ZoneCond, ZoneOp, ZonedConfig, ZonedDevice,
};

type R = Result<(), &'static str>;

#[derive(Clone, Debug)]
struct MZ {
    cond: ZoneCond,
    wp: u64,
    /// Bytes of the sectors holding data, from the zone start.
    data: Vec<u8>,
}

/// The reference model.
#[derive(Clone, Debug)]
struct Model {
    i: DeviceInfo,
    z: Vec<MZ>,
    /// Bytes of the conventional zones.
    conv: Vec<u8>,
    rr: u64,
}

const SEC: usize = 512;

impl Model {
    fn new(i: DeviceInfo) -> Model {
        let z = (0..i.nr_zones)
            .map(|k| MZ {
                cond: if k < i.nr_conv { ZoneCond::NotWp } else { ZoneCond::Empty },
                wp: 0,
                data: vec![],
            })
            .collect();
        Model { i, z, conv: vec![0; (i.nr_conv * i.zone_sectors) as usize * SEC], rr: i.nr_conv }
    }

    fn count(&self, c: ZoneCond) -> u32 {
        self.z.iter().filter(|z| z.cond == c).count() as u32
    }

    fn active_full(&self) -> bool {
        let a = self.count(ZoneCond::ImplicitOpen)
            + self.count(ZoneCond::ExplicitOpen)
            + self.count(ZoneCond::Closed);
        self.i.max_active != 0 && a >= self.i.max_active
    }

    /// null_blk's resource rules, written out plainly.
    fn resources(&mut self, z: u64) -> R {
        if self.z[z as usize].cond == ZoneCond::Empty && self.active_full() {
            return Err("EOVERFLOW");
        }
        let (imp, exp) = (self.count(ZoneCond::ImplicitOpen), self.count(ZoneCond::ExplicitOpen));
        if self.i.max_open == 0 || imp + exp < self.i.max_open {
            return Ok(());
        }
        if imp == 0 || self.active_full() {
            return Err("ETOOMANYREFS");
        }
        let n = self.i.nr_zones;
        let mut k = if self.rr >= n { self.i.nr_conv } else { self.rr };
        loop {
            if self.z[k as usize].cond == ZoneCond::ImplicitOpen {
                let v = &mut self.z[k as usize];
                v.cond = if v.wp == 0 { ZoneCond::Empty } else { ZoneCond::Closed };
                self.rr = if k + 1 >= n { self.i.nr_conv } else { k + 1 };
                return Ok(());
            }
            k = if k + 1 >= n { self.i.nr_conv } else { k + 1 };
        }
    }

    fn write(&mut self, sector: u64, data: &[u8]) -> R {
        let n = (data.len() / SEC) as u64;
        let ls = self.i.lba_sectors();
        if n == 0
            || !sector.is_multiple_of(ls)
            || !n.is_multiple_of(ls)
            || sector + n > self.i.capacity_sectors
        {
            return Err("EINVAL");
        }
        let z = self.i.zone_of(sector);
        let start = self.i.zone_start(z);
        if z < self.i.nr_conv {
            if self.i.zone_of(sector + n - 1) >= self.i.nr_conv {
                return Err("EIO");
            }
            self.conv[sector as usize * SEC..(sector + n) as usize * SEC].copy_from_slice(data);
            return Ok(());
        }
        let cap = self.i.zone_cap(z);
        let s = &self.z[z as usize];
        if matches!(s.cond, ZoneCond::Full | ZoneCond::ReadOnly | ZoneCond::Offline) {
            return Err("EIO");
        }
        if sector != start + s.wp || s.wp + n > cap {
            return Err("EIO");
        }
        if matches!(s.cond, ZoneCond::Empty | ZoneCond::Closed) {
            self.resources(z)?;
        }
        let s = &mut self.z[z as usize];
        if matches!(s.cond, ZoneCond::Empty | ZoneCond::Closed) {
            s.cond = ZoneCond::ImplicitOpen;
        }
        s.data.extend_from_slice(data);
        s.wp += n;
        if s.wp == cap {
            s.cond = ZoneCond::Full;
        }
        Ok(())
    }

    fn mgmt_one(&mut self, op: ZoneOp, z: u64) -> R {
        use ZoneCond::*;
        if z < self.i.nr_conv {
            return Err("EIO");
        }
        let zbc = self.i.dialect == Dialect::Zbc;
        let len = self.i.zone_len(z);
        let c = self.z[z as usize].cond;
        if matches!(c, ReadOnly | Offline) {
            return Err("EIO");
        }
        match (op, c) {
            (ZoneOp::Open, ExplicitOpen) => {}
            (ZoneOp::Open, Full) => return if zbc { Ok(()) } else { Err("EIO") },
            (ZoneOp::Open, ImplicitOpen) => self.z[z as usize].cond = ExplicitOpen,
            (ZoneOp::Open, _) => {
                self.resources(z)?;
                self.z[z as usize].cond = ExplicitOpen;
            }
            (ZoneOp::Close, Closed) => {}
            (ZoneOp::Close, Empty | Full) => return if zbc { Ok(()) } else { Err("EIO") },
            (ZoneOp::Close, _) => {
                let s = &mut self.z[z as usize];
                s.cond = if s.wp == 0 { Empty } else { Closed };
            }
            (ZoneOp::Finish, Full) => {}
            (ZoneOp::Finish, c) => {
                if matches!(c, Empty | Closed) {
                    self.resources(z)?;
                }
                let s = &mut self.z[z as usize];
                s.cond = Full;
                s.wp = len;
            }
            (ZoneOp::Reset, _) => self.z[z as usize] = MZ { cond: Empty, wp: 0, data: vec![] },
        }
        Ok(())
    }

    fn mgmt_all(&mut self, op: ZoneOp) -> R {
        use ZoneCond::*;
        let seq: Vec<u64> = (self.i.nr_conv..self.i.nr_zones).collect();
        let pick = |m: &Model, f: &dyn Fn(ZoneCond) -> bool| -> Vec<u64> {
            seq.iter().copied().filter(|&z| f(m.z[z as usize].cond)).collect()
        };
        match op {
            ZoneOp::Reset => {
                for z in pick(self, &|c| !matches!(c, Empty | ReadOnly | Offline)) {
                    self.mgmt_one(op, z)?;
                }
            }
            ZoneOp::Open => {
                let t = pick(self, &|c| c == Closed);
                if self.i.max_open != 0 && t.len() as u32 > self.i.max_open - self.count(ExplicitOpen) {
                    return Err("ETOOMANYREFS");
                }
                for z in t {
                    self.mgmt_one(op, z)?;
                }
            }
            ZoneOp::Close => {
                for z in pick(self, &|c| c == ImplicitOpen || c == ExplicitOpen) {
                    self.mgmt_one(op, z)?;
                }
            }
            ZoneOp::Finish => {
                for z in pick(self, &|c| matches!(c, ImplicitOpen | ExplicitOpen | Closed)) {
                    let len = self.i.zone_len(z);
                    let s = &mut self.z[z as usize];
                    s.cond = Full;
                    s.wp = len;
                }
            }
        }
        Ok(())
    }

    fn read(&self, sector: u64, n: u64) -> Result<Vec<u8>, &'static str> {
        let ls = self.i.lba_sectors();
        if n == 0
            || !sector.is_multiple_of(ls)
            || !n.is_multiple_of(ls)
            || sector + n > self.i.capacity_sectors
        {
            return Err("EINVAL");
        }
        let mut out = vec![0u8; n as usize * SEC];
        for k in 0..n {
            let s = sector + k;
            let z = self.i.zone_of(s);
            let o = k as usize * SEC;
            if z < self.i.nr_conv {
                out[o..o + SEC].copy_from_slice(&self.conv[s as usize * SEC..(s + 1) as usize * SEC]);
                continue;
            }
            let m = &self.z[z as usize];
            let rel = s - self.i.zone_start(z);
            if m.cond == ZoneCond::Offline {
                return Err("EIO");
            }
            let restricted = self.i.read_above_wp == ReadAboveWp::Fail && m.cond != ZoneCond::Full;
            if restricted && rel >= m.wp {
                return Err("EIO");
            }
            let b = rel as usize * SEC;
            if b + SEC <= m.data.len() {
                out[o..o + SEC].copy_from_slice(&m.data[b..b + SEC]);
            }
        }
        Ok(out)
    }

    /// The model after a power cycle: open zones closed, round-robin pointer reset.
    fn closed(&self, reset_rr: bool) -> Model {
        let mut m = self.clone();
        for s in &mut m.z {
            if s.cond.is_open() {
                s.cond = if s.wp == 0 { ZoneCond::Empty } else { ZoneCond::Closed };
            }
        }
        if reset_rr {
            m.rr = m.i.nr_conv;
        }
        m
    }

    /// (condition, absolute reported write pointer) of every zone.
    fn report(&self) -> Vec<(ZoneCond, u64)> {
        (0..self.i.nr_zones)
            .map(|k| {
                let (start, len) = (self.i.zone_start(k), self.i.zone_len(k));
                let s = &self.z[k as usize];
                let wp = match s.cond {
                    ZoneCond::NotWp | ZoneCond::Full => start + len,
                    ZoneCond::ReadOnly | ZoneCond::Offline => u64::MAX,
                    _ => start + s.wp,
                };
                (s.cond, wp)
            })
            .collect()
    }
}

fn device_report(d: &dyn ZonedDevice) -> Vec<(ZoneCond, u64)> {
    d.report_zones(0, 0, ReportOption::All).unwrap().iter().map(|z| (z.cond, z.wp)).collect()
}

#[derive(Clone, Debug)]
enum Op {
    /// Write `blocks` logical blocks to zone `zone`, `skew` blocks from its write pointer.
    Write {
        zone: u64,
        skew: i64,
        blocks: u64,
    },
    /// Write `blocks` blocks at block `at` of the conventional region.
    ConvWrite {
        at: u64,
        blocks: u64,
    },
    Mgmt(ZoneOp, u64),
    All(ZoneOp),
    Read {
        zone: u64,
        at: u64,
        blocks: u64,
    },
    Flush,
    Restart,
    PowerCut(u8, u64),
    CrashInFlush(u64, u64),
}

fn op_strategy(crashes: bool) -> impl Strategy<Value = Op> {
    let zop = prop_oneof![Just(ZoneOp::Reset), Just(ZoneOp::Open), Just(ZoneOp::Close), Just(ZoneOp::Finish)];
    let base = prop_oneof![
        10 => (0u64..10, prop_oneof![8 => Just(0i64), 1 => -2i64..3], 1u64..6)
            .prop_map(|(zone, skew, blocks)| Op::Write { zone, skew, blocks }),
        2 => (0u64..64, 1u64..4).prop_map(|(at, blocks)| Op::ConvWrite { at, blocks }),
        4 => (zop.clone(), 0u64..10).prop_map(|(o, z)| Op::Mgmt(o, z)),
        1 => zop.prop_map(Op::All),
        3 => (0u64..10, 0u64..64, 1u64..6).prop_map(|(zone, at, blocks)| Op::Read { zone, at, blocks }),
        2 => Just(Op::Flush),
    ];
    if crashes {
        prop_oneof![
            20 => base,
            1 => Just(Op::Restart),
            2 => (0u8..3, any::<u64>()).prop_map(|(k, s)| Op::PowerCut(k, s)),
            1 => (0u64..4, any::<u64>()).prop_map(|(k, s)| Op::CrashInFlush(k, s)),
        ]
        .boxed()
    } else {
        base.boxed()
    }
}

fn config_strategy() -> impl Strategy<Value = ZonedConfig> {
    (
        4u64..10,
        prop_oneof![Just(16u64), Just(32), Just(64)],
        prop_oneof![Just(512u32), Just(4096)],
        0u64..3,
        0u32..5,
        0u32..6,
        any::<bool>(),
        any::<bool>(),
        any::<bool>(),
    )
        .prop_map(|(nz, zkib, lba, conv, mo, ma, zns, restricted, small_cap)| {
            let mut c = ZonedConfig::small(nz, zkib, if zns { Dialect::Zns } else { Dialect::Zbc });
            c.lba_size = lba;
            c.nr_conv = conv;
            c.max_open = mo;
            c.max_active = ma;
            if restricted {
                c.read_above_wp = ReadAboveWp::Fail;
            }
            if small_cap {
                c.zone_capacity = ByteSize(zkib * 1024 * 3 / 4);
            }
            c
        })
}

fn pattern(seed: u64, len: usize) -> Vec<u8> {
    let mut data = vec![0u8; len];
    rand_pcg::Pcg64Mcg::seed_from_u64(seed).fill_bytes(&mut data);
    data
}

fn to_str(r: shingled_zoned::Result<()>) -> R {
    r.map_err(|e| e.errno_name())
}

/// Runs one non-crash operation on both sides and compares.
fn step(d: &mut dyn ZonedDevice, m: &mut Model, op: &Op, n: usize) -> Result<(), TestCaseError> {
    let i = m.i;
    let ls = i.lba_sectors();
    match *op {
        Op::Write { zone, skew, blocks } => {
            let z = zone % i.nr_zones;
            let wp = if z < i.nr_conv { i.zone_start(z) } else { i.zone_start(z) + m.z[z as usize].wp };
            let sector = (wp as i64 + skew * ls as i64).max(0) as u64;
            let data = pattern(n as u64, (blocks * ls) as usize * SEC);
            let (a, b) = (to_str(d.write(sector, &data)), m.write(sector, &data));
            prop_assert_eq!(a, b, "write {} sectors at {}", blocks * ls, sector);
        }
        Op::ConvWrite { at, blocks } => {
            if i.nr_conv == 0 {
                return Ok(());
            }
            let span = i.nr_conv * i.zone_sectors / ls;
            let sector = (at % span) * ls;
            let data = pattern(n as u64, (blocks * ls) as usize * SEC);
            let (a, b) = (to_str(d.write(sector, &data)), m.write(sector, &data));
            prop_assert_eq!(a, b, "conventional write at {}", sector);
        }
        Op::Mgmt(op, zone) => {
            let z = zone % i.nr_zones;
            let (a, b) = (to_str(d.zone_mgmt(op, i.zone_start(z), i.zone_len(z))), m.mgmt_one(op, z));
            prop_assert_eq!(a, b, "{} zone {}", op, z);
        }
        Op::All(op) => {
            let (a, b) = (to_str(d.zone_mgmt_all(op)), m.mgmt_all(op));
            prop_assert_eq!(a, b, "{} all", op);
        }
        Op::Read { zone, at, blocks } => {
            let z = zone % i.nr_zones;
            let sector = i.zone_start(z) + (at * ls) % i.zone_len(z);
            let nr = (blocks * ls).min(i.capacity_sectors - sector);
            let mut buf = vec![0u8; nr as usize * SEC];
            let a = d.read(sector, &mut buf).map(|_| buf).map_err(|e| e.errno_name());
            let b = m.read(sector, nr);
            prop_assert!(
                a == b,
                "read {} sectors at {}: device {:?} vs model {:?}",
                nr,
                sector,
                a.as_ref().map(|v| v.len()),
                b.as_ref().map(|v| v.len())
            );
        }
        Op::Flush => prop_assert_eq!(to_str(d.flush()), Ok(())),
        _ => {}
    }
    prop_assert_eq!(device_report(d), m.report(), "zones after step {} ({:?})", n, op);
    Ok(())
}

/// Every data sector below each zone's write pointer and every conventional sector the
/// model knows reads back as the model says.
fn check_data(d: &mut dyn ZonedDevice, m: &Model, conv_unknown: &[bool]) -> Result<(), TestCaseError> {
    let i = m.i;
    for z in 0..i.nr_zones {
        let start = i.zone_start(z);
        let len = i.zone_len(z);
        let mut buf = vec![0u8; (len as usize) * SEC];
        if m.z[z as usize].cond == ZoneCond::Offline {
            continue;
        }
        if i.read_above_wp == ReadAboveWp::Fail && z >= i.nr_conv && m.z[z as usize].cond != ZoneCond::Full {
            let wp = m.z[z as usize].wp;
            if wp == 0 {
                continue;
            }
            buf.truncate(wp as usize * SEC);
        }
        d.read(start, &mut buf).map_err(|e| TestCaseError::fail(format!("read zone {z}: {e}")))?;
        for (k, chunk) in buf.chunks(SEC).enumerate() {
            let s = start + k as u64;
            let want: &[u8] = if z < i.nr_conv {
                if conv_unknown[s as usize] {
                    continue;
                }
                &m.conv[s as usize * SEC..(s as usize + 1) * SEC]
            } else {
                let b = k * SEC;
                m.z[z as usize].data.get(b..b + SEC).unwrap_or(&[0u8; SEC])
            };
            prop_assert!(chunk == want, "zone {} sector {} differs after recovery", z, s);
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 192, ..ProptestConfig::default() })]

    #[test]
    fn mem_matches_model(cfg in config_strategy(), ops in prop::collection::vec(op_strategy(false), 1..80)) {
        let mut d = MemZoned::new(&cfg).unwrap();
        let mut m = Model::new(d.info());
        for (n, op) in ops.iter().enumerate() {
            step(&mut d, &mut m, op, n)?;
            d.zone_set().check_invariants().map_err(|e| TestCaseError::fail(e.to_string()))?;
        }
    }
}

/// The durable side of the model for a device whose RESET/FINISH flush everything (FileZoned).
struct Durable {
    m: Model,
    /// Conventional sectors written since the last durable point.
    conv_dirty: Vec<bool>,
}

fn persisted_changed(before: &Model, after: &Model) -> bool {
    before.closed(false).report() != after.closed(false).report()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 128, ..ProptestConfig::default() })]

    #[test]
    fn file_survives_restarts_and_power_cuts(cfg in config_strategy(), ops in prop::collection::vec(op_strategy(true), 1..80)) {
        let mut d = FileZoned::create_with(SimStorage::new(), &cfg).unwrap();
        let mut m = Model::new(d.info());
        let conv_sectors = (m.i.nr_conv * m.i.zone_sectors) as usize;
        let mut dur = Durable { m: m.clone(), conv_dirty: vec![false; conv_sectors] };
        for (n, op) in ops.iter().enumerate() {
            match *op {
                Op::Restart | Op::PowerCut(..) => {
                    let survivors = match *op {
                        Op::PowerCut(0, _) => Survivors::None,
                        Op::PowerCut(1, _) | Op::Restart => Survivors::All,
                        Op::PowerCut(_, seed) => Survivors::Random { seed },
                        _ => unreachable!(),
                    };
                    d = FileZoned::open_with(d.storage().power_cut(survivors)).map_err(|e| TestCaseError::fail(e.to_string()))?;
                    m = dur.m.closed(true);
                    prop_assert_eq!(device_report(&d), m.report(), "zones after {:?} at step {}", op, n);
                    check_data(&mut d, &m, &dur.conv_dirty)?;
                    // adopt what the device has in the conventional sectors the cut left undecided
                    m.conv = read_conv(&mut d, &m);
                    dur = Durable { m: m.clone(), conv_dirty: vec![false; conv_sectors] };
                }
                Op::CrashInFlush(k, seed) => {
                    let before = dur.m.closed(true);
                    let after = m.closed(true);
                    d.storage_mut().fail_after(k);
                    let _ = d.flush();
                    d = FileZoned::open_with(d.storage().power_cut(Survivors::Random { seed }))
                        .map_err(|e| TestCaseError::fail(e.to_string()))?;
                    let got = device_report(&d);
                    let (b, a) = (before.report(), after.report());
                    let mut adopted = before.clone();
                    for z in 0..got.len() {
                        if got[z] == a[z] {
                            adopted.z[z] = after.z[z].clone();
                        } else {
                            prop_assert_eq!(got[z], b[z], "zone {} after a crash in a flush (k = {}) is neither the old {:?} nor the new {:?}", z, k, b[z], a[z]);
                        }
                    }
                    let mut unknown = dur.conv_dirty.clone();
                    if k >= 1 {
                        // the data sync happened: conventional writes are durable
                        adopted.conv = m.conv.clone();
                        unknown.iter_mut().for_each(|u| *u = false);
                    }
                    check_data(&mut d, &adopted, &unknown)?;
                    m = adopted;
                    m.conv = read_conv(&mut d, &m);
                    dur = Durable { m: m.clone(), conv_dirty: vec![false; conv_sectors] };
                }
                _ => {
                    let before = m.clone();
                    step(&mut d, &mut m, op, n)?;
                    d.zone_set().check_invariants().map_err(|e| TestCaseError::fail(e.to_string()))?;
                    let durable_op = match op {
                        Op::Flush => true,
                        Op::Mgmt(o, _) | Op::All(o) => matches!(o, ZoneOp::Reset | ZoneOp::Finish) && persisted_changed(&before, &m),
                        _ => false,
                    };
                    if let Op::ConvWrite { .. } | Op::Write { .. } = op {
                        mark_conv(&mut dur.conv_dirty, &before, &m);
                    }
                    if durable_op {
                        dur = Durable { m: m.clone(), conv_dirty: vec![false; conv_sectors] };
                    }
                }
            }
        }
    }
}

fn read_conv(d: &mut dyn ZonedDevice, m: &Model) -> Vec<u8> {
    let mut b = vec![0u8; m.conv.len()];
    if !b.is_empty() {
        d.read(0, &mut b).unwrap();
    }
    b
}

fn mark_conv(dirty: &mut [bool], before: &Model, after: &Model) {
    for (s, d) in dirty.iter_mut().enumerate() {
        if before.conv[s * SEC..(s + 1) * SEC] != after.conv[s * SEC..(s + 1) * SEC] {
            *d = true;
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 128, ..ProptestConfig::default() })]

    #[test]
    fn faulty_power_cut_restores_durable_state(cfg in config_strategy(), ops in prop::collection::vec(op_strategy(true), 1..60)) {
        let mut d = Faulty::new(MemZoned::new(&cfg).unwrap(), FaultPlan::default()).unwrap();
        let mut m = Model::new(d.info());
        let conv_sectors = (m.i.nr_conv * m.i.zone_sectors) as usize;
        // Faulty's durability: flush makes everything durable; reset/finish only their zones.
        let mut dur = Durable { m: m.clone(), conv_dirty: vec![false; conv_sectors] };
        for (n, op) in ops.iter().enumerate() {
            match *op {
                Op::Restart | Op::PowerCut(..) | Op::CrashInFlush(..) => {
                    let survivors = match *op {
                        Op::PowerCut(0, _) | Op::CrashInFlush(..) => Survivors::None,
                        Op::PowerCut(1, _) => Survivors::All,
                        Op::PowerCut(_, seed) => Survivors::Random { seed },
                        _ => Survivors::All,
                    };
                    d.power_cut(survivors).map_err(|e| TestCaseError::fail(e.to_string()))?;
                    let got = device_report(&d);
                    let mut next = dur.m.closed(false);
                    next.rr = m.rr;
                    for z in m.i.nr_conv..m.i.nr_zones {
                        let zi = z as usize;
                        let (lo, hi) = (dur.m.z[zi].clone(), m.z[zi].clone());
                        let start = m.i.zone_start(z);
                        let w = if got[zi].1 == u64::MAX { 0 } else { got[zi].1.min(start + m.i.zone_len(z)) - start };
                        match survivors {
                            Survivors::None => {}
                            Survivors::All => next.z[zi] = m.closed(false).z[zi].clone(),
                            Survivors::Random { .. } => {
                                if lo.cond == ZoneCond::Full || got[zi] == next.report()[zi] {
                                    continue;
                                }
                                let cap = m.i.zone_cap(z);
                                let w = w.min(cap);
                                prop_assert!(w >= lo.wp && w <= hi.wp.min(cap).max(lo.wp),
                                    "zone {} kept {} sectors, outside [{}, {}]", z, w, lo.wp, hi.wp);
                                let mut data = hi.data.clone();
                                data.truncate(w as usize * SEC);
                                next.z[zi] = MZ {
                                    cond: if w == 0 { ZoneCond::Empty } else if w == cap { ZoneCond::Full } else { ZoneCond::Closed },
                                    wp: w,
                                    data,
                                };
                            }
                        }
                    }
                    let unknown = match survivors {
                        Survivors::None => vec![false; conv_sectors],
                        Survivors::All => { next.conv = m.conv.clone(); vec![false; conv_sectors] }
                        Survivors::Random { .. } => dur.conv_dirty.clone(),
                    };
                    prop_assert_eq!(got, next.report(), "zones after {:?} at step {}", op, n);
                    check_data(&mut d, &next, &unknown)?;
                    m = next;
                    m.conv = read_conv(&mut d, &m);
                    dur = Durable { m: m.clone(), conv_dirty: vec![false; conv_sectors] };
                }
                _ => {
                    let before = m.clone();
                    step(&mut d, &mut m, op, n)?;
                    if let Op::ConvWrite { .. } | Op::Write { .. } = op {
                        mark_conv(&mut dur.conv_dirty, &before, &m);
                    }
                    match op {
                        Op::Flush => dur = Durable { m: m.clone(), conv_dirty: vec![false; conv_sectors] },
                        Op::Mgmt(o, _) | Op::All(o) if matches!(o, ZoneOp::Reset | ZoneOp::Finish) => {
                            for z in 0..m.z.len() {
                                if before.report()[z] != m.report()[z] {
                                    dur.m.z[z] = m.z[z].clone();
                                }
                            }
                        }
                        _ => {}
                    }
                }
            }
        }
    }
}
