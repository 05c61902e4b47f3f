//! `Store::open_read_only`: recovers into memory without writing anything, and refuses every
//! call that would change the store.

use shingled_store::{ChunkId, Durability, Store, StoreConfig, StoreError, StreamType, ZoneState};
use shingled_zoned::{
    DeviceInfo, Dialect, FileZoned, MemZoned, ReportOption, Result as ZResult, SimStorage, Survivors, Zone,
    ZoneCond, ZoneOp, ZonedConfig, ZonedDevice, SECTOR_SIZE,
};

use crate::common::{bytes, small_cfg, Oracle};

fn zcfg() -> ZonedConfig {
    ZonedConfig::small(24, 64, Dialect::Zbc)
}

/// Everything the device holds: zone states, write pointers and bytes (MemZoned's Debug prints
/// all of it).
fn image(d: &MemZoned) -> String {
    format!("{d:?}")
}

/// Every byte of a simulated file, unsynced writes included.
fn file_image(d: &FileZoned<SimStorage>) -> String {
    format!("{:?}", d.storage().power_cut(Survivors::All))
}

/// Chunks as (id, length, sealed, contents).
fn contents<D: shingled_zoned::ZonedDevice>(st: &mut Store<D>) -> Vec<(ChunkId, u64, bool, Vec<u8>)> {
    st.list().into_iter().map(|c| (c.id, c.len, c.sealed, st.read(c.id, 0, c.len).unwrap())).collect()
}

#[test]
fn read_only_open_leaves_the_device_byte_identical() {
    let cfg = StoreConfig::small();
    let mut st = Store::format(MemZoned::new(&zcfg()).unwrap(), cfg.clone()).unwrap();
    for i in 0..4u128 {
        let id = ChunkId::from_u128(i);
        st.create(id, StreamType((i % 3) as u8)).unwrap();
        st.append(id, &bytes(i as u64, 3000 + 5000 * i as usize)).unwrap();
    }
    st.checkpoint().unwrap();
    st.append(ChunkId::from_u128(1), &bytes(9, 7000)).unwrap();
    st.seal(ChunkId::from_u128(2)).unwrap();
    st.delete(ChunkId::from_u128(3)).unwrap();
    // Unclean: journal records and appends after the checkpoint, so open replays and scans.
    let dev = st.into_device();
    let before = image(&dev);
    let mut ro = Store::open_read_only(dev.clone(), cfg.clone()).unwrap();
    assert!(ro.is_read_only());
    let rr = ro.recovery_report().unwrap();
    assert!(rr.zones_scanned >= 1 && rr.journal_records >= 2, "{rr:?}");
    let f = ro.fsck().unwrap();
    assert!(f.is_clean(), "{:?}", f.problems);
    let got = contents(&mut ro);
    assert_eq!(image(ro.device()), before, "read-only open or fsck changed the device");
    // The same state as a read-write open (which writes its closing checkpoint).
    let mut rw = Store::open(dev, cfg).unwrap();
    assert_eq!(contents(&mut rw), got);
    assert_ne!(image(rw.device()), before, "a read-write open checkpoints");
}

#[test]
fn mutating_calls_on_a_read_only_store_fail_with_read_only() {
    let cfg = StoreConfig::small();
    let mut st = Store::format(MemZoned::new(&zcfg()).unwrap(), cfg.clone()).unwrap();
    let id = ChunkId::from_u128(1);
    st.create(id, StreamType::DATA).unwrap();
    st.append(id, b"hello").unwrap();
    let dev = st.into_device();
    let before = image(&dev);
    let mut ro = Store::open_read_only(dev, cfg).unwrap();
    let other = ChunkId::from_u128(2);
    let ro_err = |r: Result<(), StoreError>, what: &str| {
        assert!(matches!(r, Err(StoreError::ReadOnly)), "{what}: {r:?}");
    };
    ro_err(ro.create(other, StreamType::DATA), "create");
    ro_err(ro.append(id, b"x"), "append");
    ro_err(ro.seal(id), "seal");
    ro_err(ro.delete(id), "delete");
    ro_err(ro.sync(), "sync");
    ro_err(ro.checkpoint(), "checkpoint");
    ro_err(ro.gc().map(|_| ()), "gc");
    ro_err(ro.gc_step(1 << 20).map(|_| ()), "gc_step");
    assert_eq!(StoreError::ReadOnly.to_string(), "store is open read-only");
    // Reads still work, and nothing changed.
    assert_eq!(ro.read(id, 0, 5).unwrap(), b"hello");
    assert_eq!(ro.chunk(id).unwrap().len, 5);
    assert!(!ro.chunk(id).unwrap().sealed);
    assert_eq!(image(ro.device()), before);
}

/// Crash points over the oracle workload with periodic incremental checkpoints (journal and
/// datazone records after the last complete one): after each power cut a read-only open writes
/// nothing, finds what a read-write open finds, and checks clean with fsck. (`FileZoned` keeps
/// no torn record below a write pointer and this workload's GC does not get interrupted between
/// journaling and carrying out a reset: the two tests after this one cover those paths.)
#[test]
fn read_only_open_after_crashes_writes_nothing_and_agrees_with_open() {
    for d in [Durability::EveryAppend, Durability::Batched] {
        let cfg = StoreConfig { checkpoint_every_bytes: 20_000, ckpt_step_bytes: 256, ..small_cfg(d) };
        let total = {
            let mut st =
                Store::format(FileZoned::create_with(SimStorage::new(), &zcfg()).unwrap(), cfg.clone())
                    .unwrap();
            let base = st.device().storage().ops();
            assert!(Oracle::new().run(&mut st, 21, 160));
            st.device().storage().ops() - base
        };
        let mut points = 0;
        let mut n = 0;
        while n <= total {
            let ctx = format!("{d:?} crash at op {n}");
            let mut st =
                Store::format(FileZoned::create_with(SimStorage::new(), &zcfg()).unwrap(), cfg.clone())
                    .unwrap();
            st.device_mut().storage_mut().fail_after(n);
            Oracle::new().run(&mut st, 21, 160);
            let img = st.into_device().storage().power_cut(Survivors::Random { seed: n });
            let dev = FileZoned::open_with(img.clone()).unwrap();
            let before = file_image(&dev);
            let mut ro = Store::open_read_only(dev, cfg.clone()).unwrap_or_else(|e| panic!("{ctx}: {e}"));
            let f = ro.fsck().unwrap();
            assert!(f.is_clean(), "{ctx}: fsck of the read-only store: {:?}", f.problems);
            let got = contents(&mut ro);
            assert_eq!(file_image(ro.device()), before, "{ctx}: the read-only open wrote");
            let mut rw = Store::open(FileZoned::open_with(img).unwrap(), cfg.clone()).unwrap();
            assert_eq!(contents(&mut rw), got, "{ctx}: read-only and read-write opens differ");
            points += 1;
            n += (total / 60).max(1);
        }
        assert!(points >= 50, "{points}");
    }
}

/// A device that drops RESETs while `drop_resets` is set: a journaled zone reset that a crash
/// interrupted before the device carried it out.
#[derive(Debug)]
struct DropResets {
    inner: MemZoned,
    drop_resets: bool,
}

impl ZonedDevice for DropResets {
    fn info(&self) -> DeviceInfo {
        self.inner.info()
    }
    fn report_zones(&self, sector: u64, nr_sectors: u64, opt: ReportOption) -> ZResult<Vec<Zone>> {
        self.inner.report_zones(sector, nr_sectors, opt)
    }
    fn read(&mut self, sector: u64, buf: &mut [u8]) -> ZResult<()> {
        self.inner.read(sector, buf)
    }
    fn write(&mut self, sector: u64, data: &[u8]) -> ZResult<()> {
        self.inner.write(sector, data)
    }
    fn zone_mgmt(&mut self, op: ZoneOp, sector: u64, nr_sectors: u64) -> ZResult<()> {
        if self.drop_resets && op == ZoneOp::Reset {
            return Ok(());
        }
        self.inner.zone_mgmt(op, sector, nr_sectors)
    }
    fn flush(&mut self) -> ZResult<()> {
        self.inner.flush()
    }
}

#[test]
fn read_only_open_leaves_an_interrupted_zone_reset_alone() {
    let cfg = StoreConfig { gc_free_zones: 0, ..StoreConfig::small() };
    let dev = DropResets { inner: MemZoned::new(&zcfg()).unwrap(), drop_resets: false };
    let mut st = Store::format(dev, cfg.clone()).unwrap();
    let ids: Vec<ChunkId> = (0..24).map(ChunkId::from_u128).collect();
    for (i, id) in ids.iter().enumerate() {
        st.create(*id, StreamType::DATA).unwrap();
        st.append(*id, &bytes(i as u64, 9000)).unwrap();
        st.seal(*id).unwrap();
    }
    for id in ids.iter().skip(1) {
        st.delete(*id).unwrap();
    }
    assert!(st.zone_states().iter().any(|z| z.1 == ZoneState::Garbage));
    st.device_mut().drop_resets = true;
    let zone = st.gc_step(1 << 20).unwrap().reclaimed.expect("a garbage zone reset");
    // Crash right after: the reset is journaled, the zone still holds its old records.
    let dev = st.into_device().inner;
    assert!(dev.report_zone(zone).unwrap().wp > dev.report_zone(zone).unwrap().start);
    let before = image(&dev);
    let mut ro = Store::open_read_only(dev.clone(), cfg.clone()).unwrap();
    let f = ro.fsck().unwrap();
    assert!(f.is_clean(), "{:?}", f.problems);
    let got = contents(&mut ro);
    assert_eq!(got.len(), 1);
    assert_eq!(got[0].3, bytes(0, 9000));
    assert_eq!(image(ro.device()), before, "the read-only open reset the zone");
    let mut rw = Store::open(dev, cfg).unwrap();
    assert_eq!(contents(&mut rw), got);
    let z = rw.device().report_zone(zone).unwrap();
    assert_eq!(z.wp, z.start, "a read-write open carries the reset out");
}

#[test]
fn read_only_open_leaves_a_torn_last_record_unfinished() {
    let cfg = StoreConfig::small();
    let mut st = Store::format(MemZoned::new(&zcfg()).unwrap(), cfg.clone()).unwrap();
    let id = ChunkId::from_u128(1);
    st.create(id, StreamType::DATA).unwrap();
    st.append(id, &bytes(1, 9000)).unwrap();
    st.append(id, &bytes(2, 9000)).unwrap();
    let mut dev = st.into_device();
    // The zone holding the two 3-block records; a torn third one: its first block only (a
    // valid header claiming three blocks), written at the write pointer.
    let info = dev.info();
    let z = (0..info.nr_zones)
        .map(|z| dev.report_zone(z).unwrap())
        .find(|r| r.wp - r.start == 6 * 4096 / SECTOR_SIZE)
        .expect("the data zone");
    let mut head = vec![0u8; 4096];
    dev.read(z.start, &mut head).unwrap();
    dev.write(z.wp, &head).unwrap();
    let before = image(&dev);
    let mut ro = Store::open_read_only(dev.clone(), cfg.clone()).unwrap();
    let f = ro.fsck().unwrap();
    assert!(f.is_clean(), "{:?}", f.problems);
    assert_eq!(f.torn_tails, 1, "{f:?}");
    let got = contents(&mut ro);
    assert_eq!(got[0].3, [bytes(1, 9000), bytes(2, 9000)].concat());
    assert_eq!(image(ro.device()), before, "the read-only open finished the zone");
    let zone_no = info.zone_of(z.start);
    assert!(ro.zone_states().iter().any(|&(n, s)| n == zone_no && s == ZoneState::Full));
    let mut rw = Store::open(dev, cfg).unwrap();
    assert_eq!(contents(&mut rw), got);
    assert_eq!(rw.device().report_zone(zone_no).unwrap().cond, ZoneCond::Full);
}
