//! One bad block in the newest checkpoint: recovery falls back to the previous complete
//! checkpoint and replays the journal written since (the older metazone's, then the newer
//! one's), so every acknowledged chunk comes back intact, and the recovery report says so.
//! Damage that could have held a journal record stays an error.

use std::collections::BTreeMap;

use shingled_store::format::{decode_header, RecordType};
use shingled_store::{ChunkId, Store, StoreConfig, StoreError, StreamType};
use shingled_zoned::{FileZoned, Storage, ZoneCond, ZonedDevice};

use crate::common::bytes;
use crate::corruption::{raw_copy, reopen, Dev};

const ZONE: u64 = 256 * 1024;

/// A store whose newest metazone starts with a blocking checkpoint followed by journal records
/// (and appends, which are not journaled), with what every chunk must hold.
fn workload(metazones: u32) -> (Store<Dev>, BTreeMap<ChunkId, Vec<u8>>) {
    use shingled_zoned::{Dialect, SimStorage, ZonedConfig};
    let cfg = StoreConfig { nr_metazones: metazones, ..StoreConfig::small() };
    let dev = FileZoned::create_with(SimStorage::new(), &ZonedConfig::small(16, 256, Dialect::Zbc)).unwrap();
    let mut st = Store::format(dev, cfg).unwrap();
    let mut want = BTreeMap::new();
    for i in 0..5u64 {
        let id = ChunkId::from_u128(100 + i as u128);
        st.create(id, StreamType::DATA).unwrap();
        let data = bytes(i, 5000 + 3000 * i as usize);
        st.append(id, &data).unwrap();
        want.insert(id, data);
    }
    st.delete(ChunkId::from_u128(104)).unwrap();
    want.remove(&ChunkId::from_u128(104));
    st.checkpoint().unwrap();
    // After the checkpoint: journaled creates, a seal, a delete, and appends.
    let late = ChunkId::from_u128(200);
    st.create(late, StreamType::DATA).unwrap();
    let d = bytes(77, 9000);
    st.append(late, &d).unwrap();
    want.insert(late, d);
    st.seal(ChunkId::from_u128(101)).unwrap();
    st.delete(ChunkId::from_u128(102)).unwrap();
    want.remove(&ChunkId::from_u128(102));
    let more = bytes(78, 4100);
    st.append(ChunkId::from_u128(103), &more).unwrap();
    want.get_mut(&ChunkId::from_u128(103)).unwrap().extend_from_slice(&more);
    st.sync().unwrap();
    (st, want)
}

/// The newest metazone (the one not finished) and its records: (byte offset, type, length).
fn newest_metazone(st: &Store<Dev>, metazones: u64) -> (u64, Vec<(u64, RecordType, u64)>) {
    let dev = st.device();
    let z = (1..=metazones)
        .find(|&z| {
            let r = dev.report_zone(z).unwrap();
            r.cond != ZoneCond::Full && r.written() > 0
        })
        .expect("a current metazone");
    let wp = dev.report_zone(z).unwrap().written() * 512;
    let start = dev.info().zone_start(z);
    let mut st2 = raw_copy(st);
    let mut recs = Vec::new();
    let mut off = 0;
    while off < wp {
        let mut b = vec![0u8; 4096];
        st2.device_mut().read(start + off / 512, &mut b).unwrap();
        let h = decode_header(&b).unwrap();
        recs.push((off, h.rtype, h.record_len()));
        off += h.record_len();
    }
    (z, recs)
}

fn smash(st: &mut Store<Dev>, zone: u64, off: u64) {
    let at = st.device().data_offset() + zone * ZONE + off;
    let s = st.device_mut().storage_mut();
    s.write_at(at, &[0xa5; 4096]).unwrap();
    s.sync().unwrap();
}

fn assert_chunks(st: &mut Store<Dev>, want: &BTreeMap<ChunkId, Vec<u8>>, what: &str) {
    let ids: Vec<ChunkId> = st.list().iter().map(|c| c.id).collect();
    assert_eq!(ids, want.keys().copied().collect::<Vec<_>>(), "{what}");
    for (id, data) in want {
        assert_eq!(&st.read(*id, 0, data.len() as u64).unwrap(), data, "{what}: chunk {id}");
    }
    assert!(st.chunk(ChunkId::from_u128(101)).unwrap().sealed, "{what}: the seal after the checkpoint");
}

/// Two metazones: the closing checkpoint is appended to the damaged one (the other holds the
/// checkpoint recovery loaded); four: it goes into a third.
#[test]
fn each_bad_block_of_the_newest_checkpoint_falls_back_to_the_previous_one() {
    for metazones in [2, 4] {
        bad_blocks_of_the_newest_checkpoint(metazones);
    }
}

fn bad_blocks_of_the_newest_checkpoint(metazones: u32) {
    let (st, want) = workload(metazones);
    let (zone, recs) = newest_metazone(&st, metazones as u64);
    let kinds: Vec<RecordType> = recs.iter().map(|r| r.1).collect();
    assert_eq!(
        kinds[..4],
        [RecordType::MetaHeader, RecordType::CkptStart, RecordType::CkptBody, RecordType::CkptEnd],
        "{recs:?}"
    );
    assert!(kinds[4..].iter().filter(|k| **k != RecordType::Data).count() >= 3, "journal after it: {recs:?}");
    let blocks: Vec<u64> =
        recs[1..4].iter().flat_map(|&(off, _, len)| (off..off + len).step_by(4096)).collect();
    assert!(blocks.len() >= 3);
    for &b in &blocks {
        let what = format!("{metazones} metazones: bad block at byte {b} of metazone {zone}");
        // Read-only first: the same recovery into memory, nothing written.
        let mut bad = raw_copy(&st);
        smash(&mut bad, zone, b);
        let img = bad.device().storage().power_cut(shingled_zoned::Survivors::All);
        let mut ro = Store::open_read_only(FileZoned::open_with(img).unwrap(), StoreConfig::small())
            .unwrap_or_else(|e| panic!("{what}: read-only open: {e}"));
        assert_chunks(&mut ro, &want, &what);
        let f = ro.fsck().unwrap();
        assert!(!f.is_clean(), "{what}: fsck must still report the damaged checkpoint");
        drop(ro);

        let mut again = reopen(bad).unwrap_or_else(|e| panic!("{what}: {e}"));
        assert_chunks(&mut again, &want, &what);
        let rep = again.recovery_report().unwrap();
        assert!(
            rep.checkpoint_fallback
                .iter()
                .any(|n| n.contains(&format!("metazone {zone}")) && n.contains("do not verify"))
                && rep.checkpoint_fallback.iter().any(|n| n.contains("recovered from checkpoint")),
            "{what}: {:?}",
            rep.checkpoint_fallback
        );
        // The store goes on, and the next recovery uses the checkpoint the last one wrote.
        let id = ChunkId::from_u128(300);
        again.create(id, StreamType::DATA).unwrap();
        again.append(id, b"after").unwrap();
        let mut next = reopen(again).unwrap();
        let notes = next.recovery_report().unwrap().checkpoint_fallback;
        assert!(!notes.iter().any(|n| n.contains("recovered from checkpoint")), "{what}: {notes:?}");
        let mut want2 = want.clone();
        want2.insert(id, b"after".to_vec());
        assert_chunks(&mut next, &want2, &what);
    }
}

#[test]
fn a_bad_journal_record_after_the_newest_checkpoint_is_still_an_error() {
    let (st, _) = workload(2);
    let (zone, recs) = newest_metazone(&st, 2);
    let (off, _, _) = *recs.iter().skip(4).find(|r| r.1 != RecordType::Data).unwrap();
    let mut bad = raw_copy(&st);
    smash(&mut bad, zone, off);
    match reopen(bad) {
        Err(StoreError::CorruptMeta { structure: "journal", zone: z, offset, .. }) => {
            assert_eq!((z, offset), (zone, off))
        }
        other => panic!("{:?}", other.map(|_| ())),
    }
}

/// The same for a periodic (incremental) checkpoint: each block of the newest complete one —
/// its start, a piece, its end — damaged in turn, recovery loads the checkpoint before it.
#[test]
fn each_bad_block_of_the_newest_periodic_checkpoint_falls_back_to_the_previous_one() {
    use shingled_zoned::{Dialect, SimStorage, ZonedConfig};
    let cfg = StoreConfig { checkpoint_every_bytes: 8 << 10, ckpt_step_bytes: 256, ..StoreConfig::small() };
    let dev = FileZoned::create_with(SimStorage::new(), &ZonedConfig::small(16, 256, Dialect::Zbc)).unwrap();
    let mut st = Store::format(dev, cfg).unwrap();
    let mut want = BTreeMap::new();
    for i in 0..6u64 {
        let id = ChunkId::from_u128(500 + i as u128);
        st.create(id, StreamType::DATA).unwrap();
        let data = bytes(i, 3000);
        st.append(id, &data).unwrap();
        want.insert(id, data);
    }
    // Each operation writes a piece of the checkpoint in progress.
    for i in 0..8u64 {
        let id = ChunkId::from_u128(600 + i as u128);
        st.create(id, StreamType::DATA).unwrap();
        want.insert(id, Vec::new());
    }
    st.sync().unwrap();
    let (zone, recs) = newest_metazone(&st, 2);
    // The last complete periodic checkpoint: its CkptStart .. CkptEnd (journal records between).
    let end = recs.iter().rposition(|r| r.1 == RecordType::CkptEnd).unwrap();
    let start = recs[..end].iter().rposition(|r| r.1 == RecordType::CkptStart).unwrap();
    assert!(start > 1, "a periodic checkpoint after the first: {recs:?}");
    let ckpt: Vec<u64> = recs[start..=end]
        .iter()
        .filter(|r| matches!(r.1, RecordType::CkptStart | RecordType::CkptBody | RecordType::CkptEnd))
        .map(|r| r.0)
        .collect();
    assert!(ckpt.len() >= 4, "{recs:?}");
    for &b in &ckpt {
        let what = format!("bad block at byte {b} of metazone {zone}");
        let mut bad = raw_copy(&st);
        smash(&mut bad, zone, b);
        let mut again = reopen(bad).unwrap_or_else(|e| panic!("{what}: {e}"));
        let ids: Vec<ChunkId> = again.list().iter().map(|c| c.id).collect();
        assert_eq!(ids, want.keys().copied().collect::<Vec<_>>(), "{what}");
        for (id, data) in &want {
            assert_eq!(&again.read(*id, 0, data.len() as u64).unwrap(), data, "{what}: chunk {id}");
        }
        let notes = &again.recovery_report().unwrap().checkpoint_fallback;
        assert!(notes.iter().any(|n| n.contains("recovered from checkpoint")), "{what}: {notes:?}");
    }
}
