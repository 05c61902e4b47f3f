//! Corruption: flipped bits in data, footers, records, checkpoints and journals are detected
//! (an error naming chunk and offset, or zone and offset), never returned as data, never a
//! panic.

use proptest::prelude::*;
use shingled_store::{ChunkId, ChunkPiece, Store, StoreConfig, StoreError, StreamType, ZoneState};
use shingled_zoned::{Dialect, FaultPlan, Faulty, FileZoned, MemZoned, SimStorage, Storage, ZonedConfig};

use crate::common::bytes;

pub type Dev = FileZoned<SimStorage>;

fn zcfg() -> ZonedConfig {
    ZonedConfig::small(16, 256, Dialect::Zbc)
}

pub fn store() -> Store<Dev> {
    Store::format(FileZoned::create_with(SimStorage::new(), &zcfg()).unwrap(), StoreConfig::small()).unwrap()
}

/// Flips bit `bit` of byte `byte` of zone `zone`, behind the device's back.
pub fn flip(st: &mut Store<Dev>, zone: u64, byte: u64, bit: u8) {
    let at = st.device().data_offset() + zone * 256 * 1024 + byte;
    let s = st.device_mut().storage_mut();
    let mut b = [0u8; 1];
    s.read_at(at, &mut b).unwrap();
    b[0] ^= 1 << bit;
    s.write_at(at, &b).unwrap();
    s.sync().unwrap();
}

pub fn reopen(st: Store<Dev>) -> Result<Store<Dev>, StoreError> {
    let img = st.into_device().storage().power_cut(shingled_zoned::Survivors::All);
    Store::open(FileZoned::open_with(img).unwrap(), StoreConfig::small())
}

pub fn data_zone(st: &Store<Dev>) -> u64 {
    st.zone_states().iter().find(|z| z.1 == ZoneState::Activated).unwrap().0
}

#[test]
fn every_bit_of_slices_and_footers_is_checked_on_read() {
    let mut st = store();
    let id = ChunkId::from_u128(5);
    st.create(id, StreamType::DATA).unwrap();
    let data = bytes(5, 10_000);
    st.append(id, &data).unwrap();
    let z = data_zone(&st);
    // Slices at 72, 72+4128, 72+2·4128; the last holds 10000 − 8192 = 1808 bytes.
    let end = 72 + 2 * 4128 + 1808 + 32;
    let mut detected = 0;
    for byte in (72..end as u64).step_by(37) {
        let bit = (byte % 8) as u8;
        flip(&mut st, z, byte, bit);
        let slice = (byte - 72) / 4128;
        match st.read(id, 0, data.len() as u64) {
            Err(StoreError::CorruptData { chunk, offset, zone, .. }) => {
                assert_eq!((chunk, offset, zone), (id, slice * 4096, z), "byte {byte}");
                detected += 1;
            }
            other => panic!("flip at byte {byte} of the record: {other:?}"),
        }
        // The other slices still read: each slice is verified alone.
        let other = (slice + 1) % 3;
        let len = if other == 2 { 1808 } else { 4096 };
        assert_eq!(st.read(id, other * 4096, len).unwrap(), &data[(other * 4096) as usize..][..len as usize]);
        flip(&mut st, z, byte, bit);
    }
    assert!(detected > 200);
    assert_eq!(st.read(id, 0, data.len() as u64).unwrap(), data);
}

/// Records at bytes 0 and 8192 of one zone (5000 bytes each: slices at +72 and +4200).
fn two_appends() -> (Store<Dev>, ChunkId, u64) {
    let mut st = store();
    let id = ChunkId::from_u128(6);
    st.create(id, StreamType::DATA).unwrap();
    st.append(id, &bytes(1, 5000)).unwrap();
    st.append(id, &bytes(2, 5000)).unwrap();
    let z = data_zone(&st);
    (st, id, z)
}

/// A `ChunkPiece` reused across reads of other lengths holds exactly the asked-for bytes each
/// time (its larger buffer's old bytes never show), and its verification reports damage in a
/// later record as `read` does: the slice's chunk offset, zone and byte in the zone.
#[test]
fn a_reused_piece_reads_and_verifies_as_read_does() {
    let (mut st, id, z) = two_appends();
    let data = [bytes(1, 5000), bytes(2, 5000)].concat();
    let mut p = ChunkPiece::new();
    for (off, len) in [(0usize, 10_000usize), (4999, 2), (100, 9000), (0, 1), (9999, 1), (4096, 5000)] {
        st.read_raw(id, off as u64, len as u64, &mut p).unwrap();
        p.verify().unwrap();
        let got: Vec<u8> = p.user_bytes().flatten().copied().collect();
        assert_eq!(got, &data[off..off + len], "{off}+{len}");
        assert_eq!(p.len(), len as u64);
    }
    assert!(matches!(st.read_raw(id, 9999, 2, &mut p), Err(StoreError::OutOfRange { .. })));
    // The second record's second slice (chunk offset 5000 + 4096) starts at byte 8192 + 4200.
    flip(&mut st, z, 8192 + 4200 + 10, 3);
    st.read_raw(id, 0, 10_000, &mut p).unwrap();
    let e = p.verify().unwrap_err();
    match &e {
        StoreError::CorruptData { chunk, offset, zone, zone_offset, .. } => {
            assert_eq!((*chunk, *offset, *zone, *zone_offset), (id, 9096, z, 8192 + 4200))
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(e.to_string(), st.read(id, 0, 10_000).unwrap_err().to_string());
    // The first record's bytes alone still verify.
    st.read_raw(id, 0, 5000, &mut p).unwrap();
    p.verify().unwrap();
}

#[test]
fn damaged_record_header_after_the_checkpoint_fails_recovery_with_its_zone_and_offset() {
    let (st, _, z) = two_appends();
    // Headers of the first record (a valid one follows) and of the last one (the tail: it lies
    // wholly below the write pointer, so it is not a torn write).
    for (rec, byte) in [(0u64, 3u64), (0, 20), (8192, 3), (8192, 20), (8192, 30)] {
        let mut st2 = raw_copy(&st);
        flip(&mut st2, z, rec + byte, 1);
        match reopen(st2) {
            Err(StoreError::CorruptMeta { structure: "data record", zone, offset, .. }) => {
                assert_eq!((zone, offset), (z, rec), "flip at {rec}+{byte}")
            }
            other => panic!("flip at {rec}+{byte}: {:?}", other.map(|_| ())),
        }
    }
}

/// The durability gap of format version 1: a bit flip in the payload of the *last* record
/// after the checkpoint was taken for a torn write and the acknowledged append silently
/// dropped. Now recovery keeps the record and the read names chunk and offset.
#[test]
fn bit_flip_in_the_last_acknowledged_record_is_an_error_not_a_torn_write() {
    let (st, id, z) = two_appends();
    for (byte, bad_off) in
        [(8192 + 100, 5000u64), (8192 + 4200 + 7, 5000 + 4096), (8192 + 72 + 4096 + 2, 5000)]
    {
        let mut st2 = raw_copy(&st);
        flip(&mut st2, z, byte, 5);
        let mut st2 = reopen(st2).unwrap_or_else(|e| panic!("flip at {byte}: {e}"));
        assert_eq!(st2.recovery_report().unwrap().damaged_records, 1);
        assert_eq!(st2.chunk(id).unwrap().len, 10_000, "flip at {byte}: the append was dropped");
        assert_eq!(st2.read(id, 0, 5000).unwrap(), bytes(1, 5000));
        match st2.read(id, 0, 10_000) {
            Err(StoreError::CorruptData { chunk, offset, zone, .. }) => {
                assert_eq!((chunk, offset, zone), (id, bad_off, z), "flip at {byte}")
            }
            other => panic!("flip at {byte}: {other:?}"),
        }
        let rep = st2.fsck().unwrap();
        assert!(
            rep.problems
                .iter()
                .any(|p| p.zone == z && p.chunk == Some(id) && p.chunk_offset == Some(bad_off)),
            "flip at {byte}: {rep:?}"
        );
    }
    // A flip in the record's prefix (chunk id, offset, length): whose data it is cannot be
    // trusted, so recovery fails naming zone and offset rather than guess.
    let mut st2 = raw_copy(&st);
    flip(&mut st2, z, 8192 + 40, 0);
    assert!(matches!(reopen(st2), Err(StoreError::CorruptMeta { zone, offset: 8192, .. }) if zone == z));
    // The same flip in the first record (a valid record follows) is kept the same way.
    let mut st2 = raw_copy(&st);
    flip(&mut st2, z, 5000, 1);
    let mut st2 = reopen(st2).unwrap();
    assert!(matches!(st2.read(id, 4096, 10), Err(StoreError::CorruptData { offset: 4096, .. })));
    assert_eq!(st2.read(id, 5000, 5000).unwrap(), bytes(2, 5000));
}

/// A record torn by a crash (its header written, the rest not: it runs past the write
/// pointer) was never acknowledged and is dropped without error.
#[test]
fn torn_last_record_is_still_dropped() {
    let mem = MemZoned::new(&zcfg()).unwrap();
    let f = Faulty::new(mem, FaultPlan::default()).unwrap();
    let mut st = Store::format(f, StoreConfig::small()).unwrap();
    let id = ChunkId::from_u128(1);
    st.create(id, StreamType::DATA).unwrap();
    st.append(id, &bytes(1, 5000)).unwrap();
    let (w, _, _) = st.device().counts();
    st.device_mut().set_plan(FaultPlan { tear_write: Some((w + 1, 3)), ..Default::default() });
    assert!(st.append(id, &bytes(2, 9000)).is_err());
    let mut f = st.into_device();
    f.power_cut(shingled_zoned::Survivors::All).unwrap();
    f.set_plan(FaultPlan::default());
    let mut st = Store::open(f, StoreConfig::small()).unwrap();
    assert_eq!(st.chunk(id).unwrap().len, 5000);
    assert_eq!(st.recovery_report().unwrap().damaged_records, 0);
    assert_eq!(st.read(id, 0, 5000).unwrap(), bytes(1, 5000));
    assert!(st.fsck().unwrap().is_clean());
}

#[test]
fn format_version_1_is_refused_with_a_clear_error() {
    use shingled_store::format::{decode_header, encode_record, RecordType, HEADER_LEN};
    use shingled_zoned::{ZoneOp, ZonedDevice};
    let st = Store::format(MemZoned::new(&zcfg()).unwrap(), StoreConfig::small()).unwrap();
    let mut dev = st.into_device();
    let mut b = vec![0u8; 4096];
    dev.read(0, &mut b).unwrap();
    let h = decode_header(&b).unwrap();
    let mut p = b[HEADER_LEN..HEADER_LEN + h.payload_len as usize].to_vec();
    p[0..4].copy_from_slice(&1u32.to_le_bytes());
    dev.zone_mgmt(ZoneOp::Reset, 0, 512).unwrap();
    dev.write(0, &encode_record(RecordType::Super, 0, &p)).unwrap();
    match Store::open(dev, StoreConfig::small()) {
        Err(StoreError::NotFormatted(m)) => assert!(m.contains("format version 1"), "{m}"),
        other => panic!("{:?}", other.map(|_| ())),
    }
}

#[test]
fn damaged_journal_checkpoint_and_superzone_are_errors() {
    let mut st = store();
    for i in 0..3 {
        st.create(ChunkId::from_u128(i), StreamType::DATA).unwrap();
    }
    // Freshly formatted: metazone 0 is zone 1 (super 0). Header, start, body, end, journal ×3.
    let cases: [(u64, u64, &str); 4] = [
        (1, 4 * 4096 + 40, "journal"),
        (1, 2 * 4096 + 33, "checkpoint"),
        (1, 4096 + 30, "checkpoint"),
        (1, 5, "metazone header"),
    ];
    for (zone, byte, what) in cases {
        let mut st2 = raw_copy(&st);
        flip(&mut st2, zone, byte, 3);
        match reopen(st2) {
            Err(StoreError::CorruptMeta { structure, zone: z, .. }) => {
                assert_eq!((structure, z), (what, zone), "byte {byte}")
            }
            other => panic!("flip at zone {zone} byte {byte}: {:?}", other.map(|_| ())),
        }
    }
    // The superzone holds two copies of its record (blocks 0 and 1): one damaged copy, payload
    // or magic, is survived; both damaged is a damaged store, not "not formatted"; both without
    // the magic is not a store.
    for byte in [40, 0] {
        let mut st2 = raw_copy(&st);
        flip(&mut st2, 0, byte, 0);
        let mut again = reopen(st2).unwrap_or_else(|e| panic!("one bad copy (byte {byte}): {e}"));
        assert_eq!(again.list().len(), 3);
        let f = again.fsck().unwrap();
        assert_eq!(f.problems.len(), 1, "{:?}", f.problems);
        assert!(f.problems[0].what.contains("superzone record copy 0 is damaged"), "{:?}", f.problems);
    }
    let mut st2 = raw_copy(&st);
    flip(&mut st2, 0, 40, 0);
    flip(&mut st2, 0, 4096 + 40, 0);
    match reopen(st2) {
        Err(StoreError::CorruptMeta { structure: "superzone", what, .. }) => {
            assert!(what.contains("both copies") && what.contains("do not format"), "{what}")
        }
        other => panic!("both copies damaged: {:?}", other.map(|_| ())),
    }
    let mut st2 = raw_copy(&st);
    flip(&mut st2, 0, 0, 0);
    flip(&mut st2, 0, 4096, 0);
    assert!(matches!(reopen(st2), Err(StoreError::NotFormatted(_))));
}

/// A store value carrying a copy of `st`'s device image, without running recovery on it
/// (recovery would write a new checkpoint and cover the records under test): a scratch store
/// with the copy swapped in, used only to `flip` and `reopen`.
pub fn raw_copy(st: &Store<Dev>) -> Store<Dev> {
    let img = st.device().storage().power_cut(shingled_zoned::Survivors::All);
    let mut s = store();
    *s.device_mut() = FileZoned::open_with(img).unwrap();
    s
}

#[test]
fn bit_flips_on_reads_never_return_wrong_data() {
    let mem = MemZoned::new(&zcfg()).unwrap();
    let f = Faulty::new(mem, FaultPlan::default()).unwrap();
    let mut st = Store::format(f, StoreConfig::small()).unwrap();
    let id = ChunkId::from_u128(1);
    st.create(id, StreamType::DATA).unwrap();
    let data = bytes(9, 50_000);
    st.append(id, &data).unwrap();
    st.device_mut().set_plan(FaultPlan { flip_read_every: Some(1), seed: 3, ..Default::default() });
    let (mut errors, mut ok) = (0, 0);
    for i in 0..300u64 {
        let off = (i * 997) % 49_000;
        let len = 1 + (i * 31) % 1000;
        match st.read(id, off, len) {
            Ok(got) => {
                assert_eq!(got, &data[off as usize..(off + len) as usize]);
                ok += 1;
            }
            Err(StoreError::CorruptData { chunk, .. }) => {
                assert_eq!(chunk, id);
                errors += 1;
            }
            Err(e) => panic!("{e}"),
        }
    }
    assert!(errors > 150, "{errors} detected, {ok} clean");
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    /// Random bit flips anywhere in the used zones: opening and reading never panic, and
    /// whatever reads succeed return exactly the appended bytes.
    #[test]
    fn random_flips_never_panic_nor_lie(flips in proptest::collection::vec((0u64..6, 0u64..40_000, 0u8..8), 1..6)) {
        let mut st = store();
        let ids: Vec<ChunkId> = (0..3).map(ChunkId::from_u128).collect();
        let mut want = Vec::new();
        for (i, id) in ids.iter().enumerate() {
            st.create(*id, StreamType(i as u8)).unwrap();
            let d = bytes(i as u64, 7000 + i * 3000);
            st.append(*id, &d[..3000]).unwrap();
            st.append(*id, &d[3000..]).unwrap();
            want.push(d);
        }
        for (zone, byte, bit) in flips {
            flip(&mut st, zone, byte, bit);
        }
        if let Ok(mut st) = reopen(st) {
            for (i, id) in ids.iter().enumerate() {
                let Some(c) = st.chunk(*id) else { continue };
                if let Ok(got) = st.read(*id, 0, c.len) {
                    prop_assert!(got == want[i][..got.len()], "chunk {} returned wrong bytes", i);
                }
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    /// Arbitrary bytes (random, or record-shaped: a valid header over a random payload, a
    /// well-formed data record of a known chunk at a wrong offset) written at the write
    /// pointer of the active datazone and of the metazone, as a buggy or malicious writer
    /// would: recovery never panics and every acknowledged byte still reads back.
    #[test]
    fn recovery_survives_arbitrary_zone_contents(
        junk in proptest::collection::vec(any::<u8>(), 1..12_000),
        kind in 0u8..3,
        meta in any::<bool>(),
    ) {
        use shingled_store::format::{encode_data, encode_record, RecordType};
        use shingled_zoned::ZonedDevice;
        let mut st = store();
        let id = ChunkId::from_u128(1);
        st.create(id, StreamType::DATA).unwrap();
        let d = bytes(1, 6000);
        st.append(id, &d).unwrap();
        let mut blob = match kind {
            0 => junk.clone(),
            1 => encode_record(RecordType::JDelete, 1, &junk),
            _ => encode_data(&id, 4096 + junk.len() as u64, &junk, u64::MAX / 2, 0, 0),
        };
        blob.resize(blob.len().div_ceil(4096) * 4096, 0);
        let zone = if meta { 1 } else { data_zone(&st) };
        let dev = st.device_mut();
        let wp = dev.report_zone(zone).unwrap().wp;
        let _ = dev.write(wp, &blob);
        let _ = dev.flush();
        match reopen(st) {
            Ok(mut st) => {
                prop_assert_eq!(st.read(id, 0, 6000).unwrap(), d);
                prop_assert_eq!(st.list().len(), 1);
            }
            // Bytes below the write pointer that are not a valid record continuing the zone
            // (junk, a record of the wrong kind, a data record that does not link to the zone's
            // last one) are damage, reported with their zone.
            Err(StoreError::CorruptMeta { zone: z, .. }) => prop_assert_eq!(z, zone),
            Err(e) => prop_assert!(false, "{}", e),
        }
    }
}
