//! API behaviour on a healthy device.

use shingled_store::{ChunkId, Placement, Store, StoreConfig, StoreError, StreamType, ZoneState};
use shingled_zoned::{Dialect, MemZoned, ZonedConfig};

use crate::common::bytes;

fn dev(zones: u64, kib: u64) -> MemZoned {
    MemZoned::new(&ZonedConfig::small(zones, kib, Dialect::Zbc)).unwrap()
}

#[test]
fn append_read_across_slices_records_and_restart() {
    let mut st = Store::format(dev(16, 256), StoreConfig::small()).unwrap();
    let id = ChunkId::from_u128(1);
    st.create(id, StreamType::DATA).unwrap();
    let data = bytes(1, 3 * 4096 + 100);
    for piece in data.chunks(5000) {
        st.append(id, piece).unwrap();
    }
    let check = |st: &mut Store<MemZoned>| {
        for (off, len) in
            [(0, 1), (0, data.len()), (4090, 10), (4096, 4096), (4999, 2), (12000, 388), (1, 12287)]
        {
            let got = st.read(id, off as u64, len as u64).unwrap();
            assert_eq!(got, &data[off..off + len], "read {off}+{len}");
        }
        assert!(matches!(st.read(id, 0, data.len() as u64 + 1), Err(StoreError::OutOfRange { .. })));
    };
    check(&mut st);
    let mut st = Store::open(st.into_device(), StoreConfig::small()).unwrap();
    check(&mut st);
    assert_eq!(st.chunk(id).unwrap().len, data.len() as u64);
}

#[test]
fn chunk_spans_zones_when_the_limit_is_off() {
    let cfg = StoreConfig {
        placement: Placement::Guided { separate_streams: true, chunk_limit: false, round_robin: true },
        ..StoreConfig::small()
    };
    let mut st = Store::format(dev(16, 64), cfg.clone()).unwrap();
    let id = ChunkId::from_u128(9);
    st.create(id, StreamType::DATA).unwrap();
    let data = bytes(2, 200_000);
    st.append(id, &data).unwrap();
    assert!(st.chunk(id).unwrap().groups >= 3);
    let mut st = Store::open(st.into_device(), cfg).unwrap();
    assert_eq!(st.read(id, 0, 200_000).unwrap(), data);
}

#[test]
fn chunk_limit_is_what_fits_in_one_zone() {
    let mut st = Store::format(dev(16, 64), StoreConfig::small()).unwrap();
    let id = ChunkId::from_u128(3);
    st.create(id, StreamType::DATA).unwrap();
    // 64 KiB zones, max_record 1 MiB: one record, 72 bytes of header and prefix, then 15
    // slices with footers (61920 bytes) and a last slice of 3544 - 32 = 3512 bytes.
    let limit = 15 * 4096 + 3512;
    assert_eq!(st.chunk_limit(StreamType::DATA), limit);
    let e = st.append(id, &vec![1; 65 * 1024]).unwrap_err();
    assert!(matches!(e, StoreError::ChunkTooLarge { limit: 64952, .. }), "{e}");
    let e = st.append(id, &vec![1; 65536]).unwrap_err();
    assert!(matches!(e, StoreError::ChunkTooLarge { would_be: 65536, limit: 64952, .. }), "{e}");
    st.append(id, &vec![1; limit as usize]).unwrap();
    let full = st.zone_states().iter().filter(|z| z.1 == ZoneState::Full).count();
    assert_eq!((st.chunk(id).unwrap().groups, full), (1, 1));
}

#[test]
fn a_chunk_at_the_limit_fills_exactly_one_zone() {
    // 256 KiB zones (262144 bytes), max_record 16 KiB. A 16 KiB record is 32 + 40 + 4 x 4128 =
    // 16584 bytes, padded to 20480; 12 of them take 245760 bytes, leaving 16384: 72 bytes of
    // header and prefix, 3 slices with footers (12384), and 3928 - 32 = 3896 bytes of a fourth
    // slice, 16384 bytes in all. Limit: 12 x 16384 + 3 x 4096 + 3896 = 212792.
    let cfg = StoreConfig { max_record: 16384, ..StoreConfig::small() };
    let mut st = Store::format(dev(16, 256), cfg.clone()).unwrap();
    let full = |st: &Store<MemZoned>| st.zone_states().iter().filter(|z| z.1 == ZoneState::Full).count();
    assert_eq!(st.chunk_limit(StreamType::DATA), 212792);
    let id = ChunkId::from_u128(77);
    st.create(id, StreamType::DATA).unwrap();
    let data = bytes(9, 212792);
    for piece in data.chunks(16384) {
        st.append(id, piece).unwrap();
    }
    let before = st.stats().device_bytes_written;
    // The last record ended exactly at the zone's capacity, so the zone is already finished,
    // unsealed, and holds this chunk alone.
    let info = st.chunk(id).unwrap();
    assert_eq!((info.len, info.records, info.groups), (212792, 13, 1));
    assert_eq!(full(&st), 1);
    // One more byte is refused, typed and naming the chunk and the limit; nothing written.
    let e = st.append(id, &[7]).unwrap_err();
    assert!(
        matches!(e, StoreError::ChunkTooLarge { chunk, would_be: 212793, limit: 212792 } if chunk == id),
        "{e}"
    );
    let msg = e.to_string();
    assert!(msg.contains(&id.to_string()) && msg.contains("212792"), "{msg}");
    assert_eq!(st.stats().device_bytes_written, before);
    st.seal(id).unwrap();
    let mut st = Store::open(st.into_device(), cfg).unwrap();
    assert_eq!(st.read(id, 0, 212792).unwrap(), data);
    assert_eq!(st.chunk(id).unwrap().groups, 1);
    assert!(matches!(st.append(id, &[7]), Err(StoreError::Sealed(_))));
}

#[test]
fn seal_delete_errors_and_listing() {
    let mut st = Store::format(dev(16, 256), StoreConfig::small()).unwrap();
    let (a, b) = (ChunkId::from_u128(1), ChunkId::from_u128(2));
    st.create(a, StreamType::DATA).unwrap();
    st.create(b, StreamType::METADATA).unwrap();
    assert!(matches!(st.create(a, StreamType::GC), Err(StoreError::ChunkExists(_))));
    st.append(a, b"xyz").unwrap();
    st.seal(a).unwrap();
    assert!(matches!(st.append(a, b"more"), Err(StoreError::Sealed(_))));
    st.delete(b).unwrap();
    assert!(matches!(st.read(b, 0, 0), Err(StoreError::NoSuchChunk(_))));
    let mut st = Store::open(st.into_device(), StoreConfig::small()).unwrap();
    let l = st.list();
    assert_eq!(l.len(), 1);
    assert!(l[0].sealed);
    assert_eq!(st.read(a, 0, 3).unwrap(), b"xyz");
    // Re-creating a deleted id starts empty even though its old records are still on disk.
    st.create(b, StreamType::DATA).unwrap();
    let st = Store::open(st.into_device(), StoreConfig::small()).unwrap();
    assert_eq!(st.chunk(b).unwrap().len, 0);
    let s = st.stats();
    assert_eq!((s.chunks, s.sealed_chunks, s.live_bytes), (2, 1, 3));
}

#[test]
fn streams_are_separated_and_one_zone_mixes() {
    let mut st = Store::format(dev(16, 256), StoreConfig::small()).unwrap();
    let ids: Vec<ChunkId> = (0..3).map(ChunkId::from_u128).collect();
    for (i, id) in ids.iter().enumerate() {
        st.create(*id, StreamType(i as u8)).unwrap();
        st.append(*id, b"abc").unwrap();
    }
    let active =
        |st: &Store<MemZoned>| st.zone_states().iter().filter(|z| z.1 == ZoneState::Activated).count();
    assert_eq!(active(&st), 3);
    let cfg = StoreConfig { placement: Placement::OneZone, ..StoreConfig::small() };
    let mut st = Store::format(dev(16, 256), cfg).unwrap();
    for (i, id) in ids.iter().enumerate() {
        st.create(*id, StreamType(i as u8)).unwrap();
        st.append(*id, b"abc").unwrap();
    }
    assert_eq!(active(&st), 1);
}

#[test]
fn deleted_zones_are_reset_and_reused() {
    let mut st = Store::format(dev(8, 64), StoreConfig::small()).unwrap();
    // 3 datazones' worth, rewritten many times over a device of 3 datazones... (8 - 1 - 2 = 5)
    for round in 0..20u128 {
        let id = ChunkId::from_u128(round);
        st.create(id, StreamType::DATA).unwrap();
        st.append(id, &bytes(round as u64, 60_000)).unwrap();
        st.seal(id).unwrap();
        if round >= 1 {
            st.delete(ChunkId::from_u128(round - 1)).unwrap();
        }
    }
    assert!(st.stats().zone_resets > 0);
    let mut st = Store::open(st.into_device(), StoreConfig::small()).unwrap();
    assert_eq!(st.read(ChunkId::from_u128(19), 0, 60_000).unwrap(), bytes(19, 60_000));
}

#[test]
fn pools_fit_the_open_zone_limit() {
    let d = MemZoned::new(&ZonedConfig::zns_like(40)).unwrap();
    let mut st = Store::format(d, StoreConfig::default()).unwrap();
    for i in 0..60u128 {
        let id = ChunkId::from_u128(i);
        st.create(id, StreamType((i % 3) as u8)).unwrap();
        st.append(id, b"data").unwrap();
    }
    let open = st.zone_states().iter().filter(|z| z.1 == ZoneState::Activated).count();
    assert!(open <= 13, "{open} zones active on a device allowing 14");
}

#[test]
fn memory_per_record_is_eight_bytes() {
    let st = Store::format(dev(16, 256), StoreConfig::small()).unwrap();
    let m = st.memory();
    assert_eq!(m.per_record, 8);
    assert!(m.per_chunk <= 200, "{} bytes per chunk", m.per_chunk);
}

#[test]
fn greedy_gc_migrates_live_records_and_frees_the_victim() {
    let cfg = StoreConfig { gc_free_zones: 0, ..StoreConfig::small() };
    let mut st = Store::format(dev(12, 64), cfg.clone()).unwrap();
    // Small chunks interleaved in the same zones; delete every other one.
    let ids: Vec<ChunkId> = (0..24).map(ChunkId::from_u128).collect();
    for (i, id) in ids.iter().enumerate() {
        st.create(*id, StreamType::DATA).unwrap();
        st.append(*id, &bytes(i as u64, 9000)).unwrap();
        st.seal(*id).unwrap();
    }
    // Round robin over two zones: each zone loses half of its chunks.
    for id in ids.iter().enumerate().filter(|(i, _)| i % 4 < 2).map(|x| x.1) {
        st.delete(*id).unwrap();
    }
    let full_before = st.stats().zones_by_state[3];
    assert!(full_before >= 2, "{:?}", st.stats());
    let mut rounds = 0;
    while let Some(_z) = st.gc().unwrap() {
        rounds += 1;
        assert!(rounds < 50);
    }
    assert!(st.stats().gc_migrations >= 1, "{:?}", st.stats());
    for (i, id) in ids.iter().enumerate().filter(|(i, _)| i % 4 >= 2) {
        assert_eq!(st.read(*id, 0, 9000).unwrap(), bytes(i as u64, 9000));
    }
    let mut st = Store::open(st.into_device(), cfg).unwrap();
    for (i, id) in ids.iter().enumerate().filter(|(i, _)| i % 4 >= 2) {
        assert_eq!(st.read(*id, 0, 9000).unwrap(), bytes(i as u64, 9000), "chunk {i} after restart");
    }
    assert_eq!(st.list().len(), 12);
}

#[test]
fn automatic_gc_keeps_a_full_device_writable() {
    let mut st = Store::format(dev(10, 64), StoreConfig::small()).unwrap();
    // 7 datazones of 64 KiB; write 40 chunks of 30 KB, keeping only the last 4.
    for i in 0..40u128 {
        let id = ChunkId::from_u128(i);
        st.create(id, StreamType::DATA).unwrap();
        st.append(id, &bytes(i as u64, 30_000)).unwrap();
        if i >= 4 {
            st.delete(ChunkId::from_u128(i - 4)).unwrap();
        }
    }
    for i in 36..40u128 {
        assert_eq!(st.read(ChunkId::from_u128(i), 0, 30_000).unwrap(), bytes(i as u64, 30_000));
    }
}

#[test]
fn round_robin_gives_a_zone_sized_chunk_a_zone_of_its_own() {
    // 256 KiB zones, data pool of 2 (StoreConfig::small). An 8 KiB append is a 12 KiB record
    // (header, prefix, two slices with footers, padding), so 21 of them (168 KiB of data) fill
    // a zone to within 4 KiB: a zone-sized chunk.
    let cfg = StoreConfig::small();
    let mut st = Store::format(dev(16, 256), cfg.clone()).unwrap();
    let full = |st: &Store<MemZoned>| st.zone_states().iter().filter(|z| z.1 == ZoneState::Full).count();
    let (a, b, c) = (ChunkId::from_u128(1), ChunkId::from_u128(2), ChunkId::from_u128(3));
    let piece = bytes(5, 8192);
    st.create(a, StreamType::DATA).unwrap();
    st.create(b, StreamType::DATA).unwrap();
    // a takes the pool's first zone, b its second.
    for _ in 0..21 {
        st.append(a, &piece).unwrap();
    }
    st.append(b, &piece).unwrap();
    // 4 KiB left, less than 1/16 of the zone, nobody else appends to it: sealing finishes it
    // (before: it stayed open and the next chunk's first record went into the remnant).
    st.seal(a).unwrap();
    assert_eq!(full(&st), 1);
    // c is new: the only pool zone is b's, so c gets a fresh zone (before: round-robin put it
    // into b's zone and the two chunks interleaved there, each spilling into a second zone).
    st.create(c, StreamType::DATA).unwrap();
    for _ in 1..21 {
        st.append(b, &piece).unwrap();
        st.append(c, &piece).unwrap();
    }
    st.append(c, &piece).unwrap();
    st.seal(b).unwrap();
    st.seal(c).unwrap();
    assert_eq!(full(&st), 3);
    let mut st = Store::open(st.into_device(), cfg).unwrap();
    for id in [a, b, c] {
        let info = st.chunk(id).unwrap();
        assert_eq!((info.len, info.records, info.groups), (21 * 8192, 21, 1), "{id}");
        assert_eq!(st.read(id, 0, 8192).unwrap(), piece);
    }
}

#[test]
fn round_robin_shares_the_room_a_short_chunk_left() {
    // A chunk sealed well under the zone size leaves its zone open; when the pool is full the
    // next chunk of the same stream type uses that room (SMRSTORE §5.4, rule 2) rather than
    // appending beside a chunk that is still being written.
    let mut st = Store::format(dev(16, 256), StoreConfig::small()).unwrap();
    let active =
        |st: &Store<MemZoned>| st.zone_states().iter().filter(|z| z.1 == ZoneState::Activated).count();
    let ids: Vec<ChunkId> = (1..=3).map(ChunkId::from_u128).collect();
    st.create(ids[0], StreamType::DATA).unwrap();
    st.create(ids[1], StreamType::DATA).unwrap();
    st.append(ids[0], b"short").unwrap();
    st.append(ids[1], b"long-lived").unwrap();
    st.seal(ids[0]).unwrap();
    assert_eq!(active(&st), 2, "the short chunk's zone stays open");
    st.create(ids[2], StreamType::DATA).unwrap();
    st.append(ids[2], b"third").unwrap();
    assert_eq!(active(&st), 2, "the third chunk went into the short chunk's zone, not a new one");
    for _ in 0..8 {
        st.append(ids[1], &[1; 8192]).unwrap();
    }
    assert_eq!(st.chunk(ids[1]).unwrap().groups, 1);
    assert_eq!(st.chunk(ids[2]).unwrap().groups, 1);
}
