//! `Store::fsck` and `Store::recovery_report`: a healthy store checks clean after appends,
//! deletes, GC and restarts; flipped bits in data, footers and headers are reported with their
//! zone, offset and chunk.

use shingled_store::{ChunkId, Durability, Store, StreamType};
use shingled_zoned::{Dialect, FileZoned, MemZoned, SimStorage, Survivors, ZonedConfig};

use crate::common::{bytes, small_cfg, Oracle};
use crate::corruption::{data_zone, flip, store};

#[test]
fn fsck_is_clean_after_appends_deletes_gc_and_restart() {
    for d in [Durability::EveryAppend, Durability::Batched] {
        let cfg = small_cfg(d);
        let dev = MemZoned::new(&ZonedConfig::small(24, 64, Dialect::Zbc)).unwrap();
        let mut st = Store::format(dev, cfg.clone()).unwrap();
        assert!(st.recovery_report().is_none());
        let mut o = Oracle::new();
        assert!(o.run(&mut st, 3, 400));
        st.sync().unwrap();
        let s = st.stats();
        assert!(s.gc_migrations + s.zone_resets > 0, "the workload should exercise GC: {s:?}");
        let rep = st.fsck().unwrap();
        assert!(rep.is_clean(), "{d:?}: {:?}", rep.problems);
        assert!(rep.records_checked >= s.records, "{rep:?}");
        assert_eq!(rep.chunks_checked, s.chunks);
        assert!(rep.zones_checked >= 2 && rep.bytes_checked > 0);
        let mut st = Store::open(st.into_device(), cfg).unwrap();
        let rr = st.recovery_report().expect("opened");
        assert_eq!(rr.chunks_recovered, s.chunks);
        assert!(rr.checkpoint_bytes > 0 && rr.total >= rr.index_build);
        let rep = st.fsck().unwrap();
        assert!(rep.is_clean(), "{d:?} after restart: {:?}", rep.problems);
    }
}

#[test]
fn recovery_report_counts_the_scan() {
    let mut st = store();
    let id = ChunkId::from_u128(1);
    st.create(id, StreamType::DATA).unwrap();
    for i in 0..5 {
        st.append(id, &bytes(i, 5000)).unwrap();
    }
    let img = st.into_device().storage().power_cut(Survivors::All);
    let st = Store::open(FileZoned::open_with(img).unwrap(), Default::default()).unwrap();
    let rr = st.recovery_report().unwrap();
    assert_eq!((rr.journal_records, rr.zones_scanned, rr.records_scanned), (1, 1, 5), "{rr:?}");
    assert_eq!(rr.bytes_scanned, 5 * 2 * 4096);
    assert_eq!(rr.chunks_recovered, 1);
}

/// One chunk, two appends of 10 000 bytes: records at bytes 0 and 12288 of one zone (3 blocks
/// each), slices of a record at +72, +4200, +8328.
fn two_records() -> (Store<FileZoned<SimStorage>>, ChunkId, u64) {
    let mut st = store();
    let id = ChunkId::from_u128(1);
    st.create(id, StreamType::DATA).unwrap();
    st.append(id, &bytes(1, 10_000)).unwrap();
    st.append(id, &bytes(2, 10_000)).unwrap();
    let z = data_zone(&st);
    assert!(st.fsck().unwrap().is_clean());
    (st, id, z)
}

#[test]
fn fsck_names_a_bit_flip_in_data() {
    let (mut st, id, z) = two_records();
    // The second record's second slice, inside the data.
    flip(&mut st, z, 12288 + 4200 + 100, 2);
    let rep = st.fsck().unwrap();
    let p = rep.problems.iter().find(|p| p.offset == 12288 + 4200).unwrap_or_else(|| panic!("{rep:?}"));
    assert_eq!((p.zone, p.chunk, p.chunk_offset), (z, Some(id), Some(10_000 + 4096)), "{p:?}");
    assert!(p.what.contains("CRC"), "{p:?}");
    // The index check names the record too.
    assert!(rep.problems.iter().any(|p| p.offset == 12288 && p.chunk_offset == Some(10_000)), "{rep:?}");
}

#[test]
fn fsck_names_a_bit_flip_in_a_footer() {
    let (mut st, id, z) = two_records();
    // Footer of the first slice: its chunk-offset field.
    flip(&mut st, z, 72 + 4096 + 25, 0);
    let rep = st.fsck().unwrap();
    let p = rep.problems.iter().find(|p| p.offset == 72).unwrap_or_else(|| panic!("{rep:?}"));
    assert_eq!((p.zone, p.chunk, p.chunk_offset), (z, Some(id), Some(0)), "{p:?}");
}

/// Damage to the last record of a deleted chunk, in a zone that is not FULL: the record lies
/// wholly below the write pointer, so it was written completely; a crash's torn write leaves
/// the write pointer inside the record. A problem, not a torn tail. The same
/// record cut short at the write pointer is a torn tail.
#[test]
fn damage_below_the_write_pointer_is_not_a_torn_tail() {
    let (mut st, id, z) = two_records();
    st.delete(id).unwrap();
    st.sync().unwrap();
    assert_ne!(
        shingled_zoned::ZonedDevice::report_zone(st.device(), z).unwrap().cond,
        shingled_zoned::ZoneCond::Full
    );
    assert!(st.fsck().unwrap().is_clean());
    flip(&mut st, z, 12288 + 4200 + 100, 2);
    let rep = st.fsck().unwrap();
    assert_eq!(rep.torn_tails, 0, "{rep:?}");
    let p = rep.problems.iter().find(|p| p.offset == 12288 + 4200).unwrap_or_else(|| panic!("{rep:?}"));
    assert!(p.what.contains("written completely"), "{p:?}");
}

#[test]
fn fsck_names_a_bit_flip_in_a_record_header() {
    // The last record's header (nothing valid after it): the index check names it.
    let (mut st, id, z) = two_records();
    flip(&mut st, z, 12288 + 9, 4); // payload length
    let rep = st.fsck().unwrap();
    let p = rep.problems.iter().find(|p| p.chunk == Some(id)).unwrap_or_else(|| panic!("{rep:?}"));
    assert_eq!((p.zone, p.offset, p.chunk_offset), (z, 12288, Some(10_000)), "{p:?}");
    // The first record's, followed by a valid one: the walk reports it as well.
    let (mut st, id, z) = two_records();
    flip(&mut st, z, 1, 0); // magic
    let rep = st.fsck().unwrap();
    assert!(rep.problems.iter().any(|p| p.zone == z && p.offset == 0 && p.chunk.is_none()), "{rep:?}");
    assert!(rep.problems.iter().any(|p| p.chunk == Some(id) && p.chunk_offset == Some(0)), "{rep:?}");
}

#[test]
fn fsck_does_not_write() {
    use shingled_zoned::{ReportOption, ZonedDevice};
    let (mut st, _, _) = two_records();
    st.sync().unwrap();
    let (written, flushes) = (st.stats().device_bytes_written, st.stats().flushes);
    let zones = st.device().report_zones(0, 0, ReportOption::All).unwrap();
    let pending = st.device().storage().pending_writes();
    st.fsck().unwrap();
    assert_eq!((st.stats().device_bytes_written, st.stats().flushes), (written, flushes));
    assert_eq!(st.device().report_zones(0, 0, ReportOption::All).unwrap(), zones);
    assert_eq!(st.device().storage().pending_writes(), pending);
}

/// fsck between operations while periodic checkpoints are in pieces and background GC is
/// between steps: the live store always checks clean.
#[test]
fn fsck_is_clean_mid_checkpoint_and_mid_gc() {
    let cfg = shingled_store::StoreConfig {
        checkpoint_every_bytes: 20_000,
        ckpt_step_bytes: 256,
        gc_free_zones: 12,
        gc_stop_free_zones: 14,
        gc_step_bytes: 4096,
        ..small_cfg(Durability::EveryAppend)
    };
    let dev = MemZoned::new(&ZonedConfig::small(24, 64, Dialect::Zbc)).unwrap();
    let mut st = Store::format(dev, cfg).unwrap();
    let mut o = Oracle::new();
    for round in 0..60 {
        assert!(o.run(&mut st, 100 + round, 5));
        let rep = st.fsck().unwrap();
        assert!(rep.is_clean(), "round {round}: {:?}", rep.problems);
    }
    let s = st.stats();
    assert!(s.incremental_checkpoints > 0 && s.gc_steps > 0, "{s:?}");
}
