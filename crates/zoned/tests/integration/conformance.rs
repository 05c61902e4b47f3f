//! Zone conformance table in the style of libzbc's test suite (`test/scripts/01_sk_ascq_check`,
//! `02_state_machine_check`, github.com/westerndigitalcorporation/libzbc; Linux null_blk's
//! `drivers/block/null_blk/zoned.c` for the ZNS dialect): for each command and starting
//! condition, the expected result (success or errno) and resulting condition, in both dialects.
//!
//! Every row becomes one `#[test]` per dialect and backing: `mem_zbc::<row>`, `mem_zns::<row>`,
//! `file_zbc::<row>`, `file_zns::<row>`. File-backed rows also restart the device after the
//! command and check that the zone comes back in its power-cycle condition.
//!
//! Geometry: 8 zones of 128 sectors (64 KiB), 512-byte blocks, zones 0 and 1 conventional.
//! The zone under test is `T` = 2 unless a command names another.

use shingled_core::ByteSize;
use shingled_zoned::{
    Dialect, FileOptions, FileZoned, MemZoned, ReadAboveWp, ReportOption, ZoneCond, ZoneOp, ZonedConfig,
    ZonedDevice,
};

const T: u64 = 2;
const ZS: u64 = 128;

use ZoneCond::{
    Closed as CL, Empty as EM, ExplicitOpen as EO, Full as FU, ImplicitOpen as IO, NotWp as NW,
    Offline as OF, ReadOnly as RO,
};

/// One setup step.
#[derive(Clone, Copy, Debug)]
enum St {
    /// Write `n` sectors at zone `z`'s write pointer.
    W(u64, u64),
    /// Explicitly open zone `z`.
    O(u64),
    /// Close zone `z`.
    Cl(u64),
    /// Finish zone `z`.
    Fi(u64),
    /// Inject a condition (null_blk configfs).
    Set(u64, ZoneCond),
}

const EMPTY: &[St] = &[];
const IMP: &[St] = &[St::W(T, 8)];
const EXP0: &[St] = &[St::O(T)];
const EXP: &[St] = &[St::O(T), St::W(T, 8)];
const CLOSED: &[St] = &[St::W(T, 8), St::Cl(T)];
const FULL: &[St] = &[St::W(T, ZS)];
const FINISHED: &[St] = &[St::W(T, 8), St::Fi(T)];
const RDONLY: &[St] = &[St::Set(T, RO)];
const OFFLINE: &[St] = &[St::Set(T, OF)];

/// The command under test.
#[derive(Clone, Copy, Debug)]
enum C {
    Mgmt(ZoneOp, u64),
    All(ZoneOp),
    /// Raw management range (sector, nr_sectors).
    Range(ZoneOp, u64, u64),
    /// Write `n` sectors at the write pointer of zone `z`.
    WriteAtWp(u64, u64),
    /// Write `n` sectors at `off` sectors from the start of zone `z`.
    Write(u64, u64, u64),
    /// Read `n` sectors at `off` sectors from the start of zone `z`.
    Read(u64, u64, u64),
    /// Zone append of `n` sectors to the zone starting at sector `s`.
    Append(u64, u64),
    /// Report from sector `s`.
    Report(u64),
}

/// Device variants.
#[derive(Clone, Copy, Debug)]
enum Cfg {
    Plain,
    /// max_open, max_active.
    Limits(u32, u32),
    RestrictedReads,
    /// Last zone of 32 sectors.
    Runt,
    Lba4k,
    /// Host-aware model with restricted reads.
    HostAware,
}

#[derive(Clone, Copy, Debug)]
struct Expect {
    errno: Option<&'static str>,
    zone: Option<u64>,
    cond: ZoneCond,
    wp: Option<u64>,
    also: Option<(u64, ZoneCond)>,
}

fn ok(cond: ZoneCond) -> Expect {
    Expect { errno: None, zone: None, cond, wp: None, also: None }
}

fn err(errno: &'static str, cond: ZoneCond) -> Expect {
    Expect { errno: Some(errno), ..ok(cond) }
}

impl Expect {
    /// Also check the write pointer (sectors from the zone start).
    fn wp(mut self, wp: u64) -> Expect {
        self.wp = Some(wp);
        self
    }
    /// Check zone `z` instead of the command's zone.
    fn on(mut self, z: u64) -> Expect {
        self.zone = Some(z);
        self
    }
    /// Also check that zone `z` is in `cond`.
    fn also(mut self, z: u64, cond: ZoneCond) -> Expect {
        self.also = Some((z, cond));
        self
    }
}

#[derive(Clone, Copy, Debug)]
struct Row {
    cfg: Cfg,
    setup: &'static [St],
    cmd: C,
    zbc: Expect,
    zns: Expect,
}

fn row(setup: &'static [St], cmd: C, zbc: Expect, zns: Expect) -> Row {
    Row { cfg: Cfg::Plain, setup, cmd, zbc, zns }
}

fn both(setup: &'static [St], cmd: C, e: Expect) -> Row {
    row(setup, cmd, e, e)
}

impl Row {
    fn cfg(mut self, cfg: Cfg) -> Row {
        self.cfg = cfg;
        self
    }
}

fn config(cfg: Cfg, dialect: Dialect) -> ZonedConfig {
    let mut c = ZonedConfig::small(8, ZS / 2, dialect);
    c.nr_conv = 2;
    match cfg {
        Cfg::Plain => {}
        Cfg::Limits(o, a) => {
            c.max_open = o;
            c.max_active = a;
        }
        Cfg::RestrictedReads => c.read_above_wp = ReadAboveWp::Fail,
        Cfg::Runt => c.capacity = ByteSize((7 * ZS + 32) * 512),
        Cfg::Lba4k => c.lba_size = 4096,
        Cfg::HostAware => {
            c.model = shingled_zoned::ZonedModel::HostAware;
            c.read_above_wp = ReadAboveWp::Fail;
        }
    }
    c
}

#[derive(Clone, Copy, Debug)]
enum Backend {
    Mem,
    File,
}

fn start(d: &dyn ZonedDevice, z: u64) -> u64 {
    d.info().zone_start(z)
}

fn step(d: &mut dyn ZonedDevice, s: St) {
    let len = |d: &dyn ZonedDevice, z| d.info().zone_len(z);
    let r = match s {
        St::W(z, n) => {
            let wp = d.report_zone(z).unwrap().wp;
            d.write(wp, &vec![0xa5; (n * 512) as usize])
        }
        St::O(z) => d.zone_mgmt(ZoneOp::Open, start(d, z), len(d, z)),
        St::Cl(z) => d.zone_mgmt(ZoneOp::Close, start(d, z), len(d, z)),
        St::Fi(z) => d.zone_mgmt(ZoneOp::Finish, start(d, z), len(d, z)),
        St::Set(z, c) => d.set_zone_cond(z, c),
    };
    r.unwrap_or_else(|e| panic!("setup step {s:?} failed: {e}"));
}

fn exec(d: &mut dyn ZonedDevice, c: C) -> (shingled_zoned::Result<()>, u64) {
    let len = |d: &dyn ZonedDevice, z| d.info().zone_len(z);
    match c {
        C::Mgmt(op, z) => (d.zone_mgmt(op, start(d, z), len(d, z)), z),
        C::All(op) => (d.zone_mgmt_all(op), T),
        C::Range(op, s, n) => (d.zone_mgmt(op, s, n), T),
        C::WriteAtWp(z, n) => {
            let wp = d.report_zone(z).unwrap().wp;
            (d.write(wp, &vec![0x5a; (n * 512) as usize]), z)
        }
        C::Write(z, off, n) => (d.write(start(d, z) + off, &vec![0x5a; (n * 512) as usize]), z),
        C::Read(z, off, n) => {
            let mut buf = vec![0xff; (n * 512) as usize];
            let r = d.read(start(d, z) + off, &mut buf);
            if r.is_ok() {
                let wp = d.report_zone(z).unwrap();
                let written_end = if wp.cond == FU || z < 2 { u64::MAX } else { wp.wp - wp.start };
                for (i, chunk) in buf.chunks(512).enumerate() {
                    if off + i as u64 >= written_end {
                        assert!(
                            chunk.iter().all(|&b| b == 0),
                            "sector {} above the WP is not zero",
                            off + i as u64
                        );
                    }
                }
            }
            (r, z)
        }
        C::Append(s, n) => {
            let z = d.info().zone_of(s.min(d.info().capacity_sectors - 1));
            let before = d.report_zone(z).unwrap().wp;
            let r = d.zone_append(s, &vec![1u8; (n * 512) as usize]);
            if let Ok(at) = r {
                assert_eq!(at, before, "zone append must return the old write pointer");
            }
            (r.map(|_| ()), z)
        }
        C::Report(s) => (d.report_zones(s, 0, ReportOption::All).map(|_| ()), T),
    }
}

fn run(name: &str, backend: Backend, dialect: Dialect, row: Row) {
    let cfg = config(row.cfg, dialect);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("dev.zbd");
    let mut dev: Box<dyn ZonedDevice> = match backend {
        Backend::Mem => Box::new(MemZoned::new(&cfg).unwrap()),
        Backend::File => Box::new(FileZoned::create(&path, &cfg, FileOptions::default()).unwrap()),
    };
    for &s in row.setup {
        step(dev.as_mut(), s);
    }
    let exp = if dialect == Dialect::Zbc { row.zbc } else { row.zns };
    let (r, z) = exec(dev.as_mut(), row.cmd);
    let ctx = format!("row `{name}` ({dialect:?}, {backend:?}): {:?} after {:?}", row.cmd, row.setup);
    match (&r, exp.errno) {
        (Ok(()), None) => {}
        (Err(e), Some(errno)) => assert_eq!(e.errno_name(), errno, "{ctx}: wrong errno for error `{e}`"),
        (Ok(()), Some(errno)) => panic!("{ctx}: succeeded, expected {errno}"),
        (Err(e), None) => panic!("{ctx}: failed with {} `{e}`, expected success", e.errno_name()),
    }
    let z = exp.zone.unwrap_or(z);
    let zone = dev.report_zone(z).unwrap();
    assert_eq!(zone.cond, exp.cond, "{ctx}: zone {z} condition");
    if let Some(wp) = exp.wp {
        assert_eq!(zone.wp - zone.start, wp, "{ctx}: zone {z} write pointer");
    }
    if let Some((oz, oc)) = exp.also {
        assert_eq!(dev.report_zone(oz).unwrap().cond, oc, "{ctx}: zone {oz} condition");
    }
    if let Backend::File = backend {
        dev.flush().unwrap();
        drop(dev);
        let back = FileZoned::open(&path, FileOptions::default()).unwrap();
        let after = back.report_zone(z).unwrap();
        let expect = match exp.cond {
            IO | EO if zone.wp == zone.start => EM,
            IO | EO => CL,
            c => c,
        };
        assert_eq!(after.cond, expect, "{ctx}: zone {z} after a restart");
        assert_eq!(after.wp, zone.wp, "{ctx}: zone {z} write pointer after a restart");
    }
}

macro_rules! conformance {
    ($($name:ident: $row:expr;)*) => {
        fn all_rows() -> Vec<(&'static str, Row)> {
            vec![$((stringify!($name), $row)),*]
        }
        mod mem_zbc { use super::*; $(#[test] fn $name() { run(stringify!($name), Backend::Mem, Dialect::Zbc, $row) })* }
        mod mem_zns { use super::*; $(#[test] fn $name() { run(stringify!($name), Backend::Mem, Dialect::Zns, $row) })* }
        mod file_zbc { use super::*; $(#[test] fn $name() { run(stringify!($name), Backend::File, Dialect::Zbc, $row) })* }
        mod file_zns { use super::*; $(#[test] fn $name() { run(stringify!($name), Backend::File, Dialect::Zns, $row) })* }
    };
}

use ZoneOp::{Close, Finish, Open, Reset};

conformance! {
    // ---- OPEN ZONE (libzbc 02_state_machine_check, null_blk null_open_zone) ----
    open_empty: both(EMPTY, C::Mgmt(Open, T), ok(EO).wp(0));
    open_implicit_open: both(IMP, C::Mgmt(Open, T), ok(EO).wp(8));
    open_explicit_open: both(EXP, C::Mgmt(Open, T), ok(EO).wp(8));
    open_closed: both(CLOSED, C::Mgmt(Open, T), ok(EO).wp(8));
    open_full: row(FULL, C::Mgmt(Open, T), ok(FU), err("EIO", FU));
    open_finished: row(FINISHED, C::Mgmt(Open, T), ok(FU), err("EIO", FU));
    open_read_only: both(RDONLY, C::Mgmt(Open, T), err("EIO", RO));
    open_offline: both(OFFLINE, C::Mgmt(Open, T), err("EIO", OF));
    open_conventional: both(EMPTY, C::Mgmt(Open, 0), err("EIO", NW));
    // ---- CLOSE ZONE ----
    close_empty: row(EMPTY, C::Mgmt(Close, T), ok(EM), err("EIO", EM));
    close_implicit_open: both(IMP, C::Mgmt(Close, T), ok(CL).wp(8));
    close_explicit_open: both(EXP, C::Mgmt(Close, T), ok(CL).wp(8));
    close_explicit_open_at_start_is_empty: both(EXP0, C::Mgmt(Close, T), ok(EM).wp(0));
    close_closed: both(CLOSED, C::Mgmt(Close, T), ok(CL).wp(8));
    close_full: row(FULL, C::Mgmt(Close, T), ok(FU), err("EIO", FU));
    close_read_only: both(RDONLY, C::Mgmt(Close, T), err("EIO", RO));
    close_offline: both(OFFLINE, C::Mgmt(Close, T), err("EIO", OF));
    close_conventional: both(EMPTY, C::Mgmt(Close, 1), err("EIO", NW));
    // ---- FINISH ZONE ----
    finish_empty: both(EMPTY, C::Mgmt(Finish, T), ok(FU).wp(ZS));
    finish_implicit_open: both(IMP, C::Mgmt(Finish, T), ok(FU).wp(ZS));
    finish_explicit_open: both(EXP, C::Mgmt(Finish, T), ok(FU).wp(ZS));
    finish_closed: both(CLOSED, C::Mgmt(Finish, T), ok(FU).wp(ZS));
    finish_full: both(FULL, C::Mgmt(Finish, T), ok(FU).wp(ZS));
    finish_read_only: both(RDONLY, C::Mgmt(Finish, T), err("EIO", RO));
    finish_offline: both(OFFLINE, C::Mgmt(Finish, T), err("EIO", OF));
    finish_conventional: both(EMPTY, C::Mgmt(Finish, 0), err("EIO", NW));
    // ---- RESET WRITE POINTER ----
    reset_empty: both(EMPTY, C::Mgmt(Reset, T), ok(EM).wp(0));
    reset_implicit_open: both(IMP, C::Mgmt(Reset, T), ok(EM).wp(0));
    reset_explicit_open: both(EXP, C::Mgmt(Reset, T), ok(EM).wp(0));
    reset_closed: both(CLOSED, C::Mgmt(Reset, T), ok(EM).wp(0));
    reset_full: both(FULL, C::Mgmt(Reset, T), ok(EM).wp(0));
    reset_finished: both(FINISHED, C::Mgmt(Reset, T), ok(EM).wp(0));
    reset_read_only: both(RDONLY, C::Mgmt(Reset, T), err("EIO", RO));
    reset_offline: both(OFFLINE, C::Mgmt(Reset, T), err("EIO", OF));
    reset_conventional: both(EMPTY, C::Mgmt(Reset, 0), err("EIO", NW));
    // ---- WRITE (01_sk_ascq_check 070..077, null_zone_write) ----
    write_empty_at_wp: both(EMPTY, C::WriteAtWp(T, 8), ok(IO).wp(8));
    write_implicit_open_at_wp: both(IMP, C::WriteAtWp(T, 8), ok(IO).wp(16));
    write_explicit_open_stays_explicit: both(EXP, C::WriteAtWp(T, 8), ok(EO).wp(16));
    write_closed_reopens_implicitly: both(CLOSED, C::WriteAtWp(T, 8), ok(IO).wp(16));
    write_filling_capacity_is_full: both(IMP, C::WriteAtWp(T, ZS - 8), ok(FU));
    write_above_wp_070: both(IMP, C::Write(T, 16, 8), err("EIO", IO).wp(8));
    write_ending_below_wp_076: both(&[St::W(T, 32)], C::Write(T, 8, 8), err("EIO", IO).wp(32));
    write_crossing_wp_077: both(IMP, C::Write(T, 4, 8), err("EIO", IO).wp(8));
    write_above_wp_of_empty_zone: both(EMPTY, C::Write(T, 8, 8), err("EIO", EM).wp(0));
    write_past_capacity_071: both(&[St::W(T, ZS - 8)], C::WriteAtWp(T, 16), err("EIO", IO).wp(ZS - 8));
    write_full_073: both(FULL, C::Write(T, 0, 8), err("EIO", FU));
    write_read_only: both(RDONLY, C::Write(T, 0, 8), err("EIO", RO));
    write_offline: both(OFFLINE, C::Write(T, 0, 8), err("EIO", OF));
    write_across_conventional_zones_072: both(EMPTY, C::Write(0, ZS - 8, 16), ok(NW));
    write_conventional_into_sequential: both(EMPTY, C::Write(1, ZS - 8, 16), err("EIO", NW));
    write_anywhere_in_conventional: both(EMPTY, C::Write(1, 77, 3), ok(NW));
    write_lba_misaligned: both(EMPTY, C::Write(T, 0, 1), err("EINVAL", EM)).cfg(Cfg::Lba4k);
    write_past_device_end: both(EMPTY, C::Write(7, ZS - 8, 16), err("EINVAL", EM).on(7));
    // ---- READ (060/064) ----
    read_above_wp_unrestricted_zeros: both(IMP, C::Read(T, 0, 32), ok(IO));
    read_above_wp_restricted_060: both(IMP, C::Read(T, 0, 16), err("EIO", IO)).cfg(Cfg::RestrictedReads);
    read_below_wp_restricted: both(IMP, C::Read(T, 0, 8), ok(IO)).cfg(Cfg::RestrictedReads);
    read_full_zone_restricted: both(FINISHED, C::Read(T, 0, ZS), ok(FU)).cfg(Cfg::RestrictedReads);
    read_offline: both(OFFLINE, C::Read(T, 0, 8), err("EIO", OF));
    read_read_only: both(RDONLY, C::Read(T, 0, 8), ok(RO));
    read_across_zones: both(IMP, C::Read(1, ZS - 8, 24), ok(NW));
    // ---- RESOURCES (null_check_zone_resources; libzbc 128/129/170/171/176) ----
    open_at_max_open_all_explicit_170: both(&[St::O(3), St::O(4)], C::Mgmt(Open, T), err("ETOOMANYREFS", EM))
        .cfg(Cfg::Limits(2, 0));
    write_at_max_open_all_explicit_171: both(&[St::O(3), St::O(4)], C::WriteAtWp(T, 8), err("ETOOMANYREFS", EM))
        .cfg(Cfg::Limits(2, 0));
    write_at_max_open_closes_implicit_176: both(&[St::W(3, 8), St::W(4, 8)], C::WriteAtWp(T, 8), ok(IO).also(3, CL))
        .cfg(Cfg::Limits(2, 0));
    open_at_max_open_closes_implicit_128: both(&[St::W(3, 8), St::O(4)], C::Mgmt(Open, T), ok(EO).also(3, CL))
        .cfg(Cfg::Limits(2, 0));
    implicit_close_is_round_robin: both(&[St::W(3, 8), St::W(4, 8), St::W(T, 8)], C::WriteAtWp(5, 8), ok(IO).also(4, CL))
        .cfg(Cfg::Limits(2, 0));
    write_at_max_active: both(&[St::W(3, 8), St::Cl(3), St::W(4, 8), St::Cl(4)], C::WriteAtWp(T, 8), err("EOVERFLOW", EM))
        .cfg(Cfg::Limits(2, 2));
    open_at_max_active: both(&[St::W(3, 8), St::Cl(3), St::W(4, 8), St::Cl(4)], C::Mgmt(Open, T), err("EOVERFLOW", EM))
        .cfg(Cfg::Limits(2, 2));
    finish_empty_at_max_active: both(&[St::W(3, 8), St::Cl(3), St::W(4, 8), St::Cl(4)], C::Mgmt(Finish, T), err("EOVERFLOW", EM))
        .cfg(Cfg::Limits(2, 2));
    write_closed_at_max_active_needs_no_active: both(&[St::W(T, 8), St::Cl(T), St::W(3, 8), St::Cl(3)], C::WriteAtWp(T, 8), ok(IO))
        .cfg(Cfg::Limits(2, 2));
    full_zone_releases_resources: both(&[St::O(3), St::W(3, ZS)], C::Mgmt(Open, T), ok(EO).also(3, FU))
        .cfg(Cfg::Limits(1, 0));
    null_blk_no_implicit_close_at_active_limit: both(&[St::W(T, 8), St::Cl(T), St::W(3, 8)], C::WriteAtWp(T, 8), err("ETOOMANYREFS", CL))
        .cfg(Cfg::Limits(1, 2));
    // ---- ALL bit (libzbc 022, 026/034/044/054, 148/149) ----
    reset_all_skips_conventional: both(&[St::W(T, 8), St::O(3)], C::All(Reset), ok(EM).also(3, EM));
    reset_all_leaves_read_only: both(&[St::Set(3, RO), St::W(T, 8)], C::All(Reset), ok(EM).also(3, RO));
    open_all_opens_closed_zones: both(&[St::W(T, 8), St::Cl(T), St::W(3, 8)], C::All(Open), ok(EO).also(3, IO));
    open_all_insufficient_resources_022: both(&[St::W(T, 8), St::Cl(T), St::W(3, 8), St::Cl(3), St::W(4, 8), St::Cl(4)], C::All(Open), err("ETOOMANYREFS", CL).also(3, CL))
        .cfg(Cfg::Limits(2, 0));
    close_all_closes_open_zones: both(&[St::O(T), St::W(T, 8), St::O(3)], C::All(Close), ok(CL).also(3, EM));
    close_all_skips_empty_and_full: both(&[St::W(3, ZS)], C::All(Close), ok(EM).also(3, FU));
    finish_all_148: both(&[St::W(T, 8), St::Cl(T), St::W(3, 8)], C::All(Finish), ok(FU).also(4, EM));
    finish_all_at_max_open_149: both(&[St::W(T, 8), St::Cl(T), St::O(3), St::O(4)], C::All(Finish), ok(FU).also(4, FU))
        .cfg(Cfg::Limits(2, 0));
    // ---- Arguments (blkdev_zone_mgmt: EINVAL) ----
    mgmt_not_a_zone_start: both(IMP, C::Range(Reset, 2 * ZS + 8, ZS), err("EINVAL", IO));
    mgmt_zero_sectors: both(IMP, C::Range(Reset, 2 * ZS, 0), err("EINVAL", IO));
    mgmt_past_capacity: both(IMP, C::Range(Reset, 7 * ZS, 2 * ZS), err("EINVAL", IO));
    mgmt_partial_zone: both(IMP, C::Range(Reset, 2 * ZS, ZS / 2), err("EINVAL", IO));
    mgmt_two_zones: both(&[St::W(T, 8), St::W(3, 8)], C::Range(Reset, 2 * ZS, 2 * ZS), ok(EM).also(3, EM));
    mgmt_range_stops_at_first_failure: both(&[St::W(T, 8), St::Set(3, RO)], C::Range(Reset, 2 * ZS, 2 * ZS), err("EIO", EM).also(3, RO));
    mgmt_runt_last_zone: both(&[St::W(7, 8)], C::Range(Finish, 7 * ZS, 32), ok(FU).on(7).wp(32)).cfg(Cfg::Runt);
    write_fills_runt_last_zone: both(EMPTY, C::WriteAtWp(7, 32), ok(FU)).cfg(Cfg::Runt);
    report_beyond_capacity: both(EMPTY, C::Report(8 * ZS), err("EINVAL", EM));
    // ---- Host-aware (sequential-write-preferred) zones ----
    host_aware_write_anywhere_opens_implicitly: both(EMPTY, C::Write(T, 16, 8), ok(IO).wp(24)).cfg(Cfg::HostAware);
    host_aware_write_below_wp: both(&[St::W(T, 32)], C::Write(T, 8, 8), ok(IO).wp(32)).cfg(Cfg::HostAware);
    host_aware_reads_are_unrestricted: both(IMP, C::Read(T, 0, 32), ok(IO)).cfg(Cfg::HostAware);
    host_aware_write_past_capacity: both(EMPTY, C::Write(T, ZS - 8, 16), err("EIO", EM)).cfg(Cfg::HostAware);
    // ---- Zone append (null_blk) ----
    append_returns_wp: both(IMP, C::Append(2 * ZS, 8), ok(IO).wp(16));
    append_not_zone_start: both(IMP, C::Append(2 * ZS + 8, 8), err("EINVAL", IO));
    append_conventional: both(EMPTY, C::Append(0, 8), err("EIO", NW).on(0));
    append_full: both(FULL, C::Append(2 * ZS, 8), err("EIO", FU));
}

#[test]
fn table_has_every_op_from_every_condition() {
    let rows = all_rows();
    // 4 ops × 9 starting conditions (empty, imp, exp, closed, full, finished/full, ro, offline,
    // conventional) are covered, plus the write/read/resource/ALL/argument rows.
    assert!(rows.len() >= 90, "{} rows", rows.len());
    for op in ["open", "close", "finish", "reset"] {
        for cond in [
            "empty",
            "implicit_open",
            "explicit_open",
            "closed",
            "full",
            "read_only",
            "offline",
            "conventional",
        ] {
            let name = format!("{op}_{cond}");
            assert!(rows.iter().any(|(n, _)| *n == name), "missing row {name}");
        }
    }
}
