//! `Store::append_prepared`: records encoded ahead of the store (`PreparedRecords`) reach the
//! device byte for byte as `Store::append` writes them, across zone ends and in the fallbacks.

use shingled_store::{ChunkId, Placement, PreparedRecords, Store, StoreConfig, StreamType};
use shingled_zoned::{Dialect, MemZoned, ZonedConfig, ZonedDevice, SECTOR_SIZE};

use crate::common::bytes;

fn dev(zones: u64, kib: u64) -> MemZoned {
    MemZoned::new(&ZonedConfig::small(zones, kib, Dialect::Zbc)).unwrap()
}

/// `data` laid out for `id` at chunk offset `offset`, filled slice by slice, finished.
fn prepare(p: &mut PreparedRecords, id: ChunkId, offset: u64, data: &[u8], max_record: usize) {
    p.layout(id, offset, data.len(), max_record);
    let mut at = 0;
    for s in p.slices_mut() {
        let n = s.len();
        s.copy_from_slice(&data[at..at + n]);
        at += n;
    }
    assert_eq!(at, data.len());
    p.finish();
}

/// Every zone but the superzone (its record holds the format time), up to the capacity.
fn image(st: &mut Store<MemZoned>) -> Vec<u8> {
    let info = st.device().info();
    let zone = info.zone_sectors * SECTOR_SIZE;
    let mut b = vec![0u8; (info.nr_zones * zone) as usize];
    st.device_mut().read(0, &mut b).unwrap();
    b.drain(..zone as usize);
    b
}

#[test]
fn prepared_appends_write_what_append_writes() {
    let spans = StoreConfig {
        max_record: 16384,
        placement: Placement::Guided { separate_streams: true, chunk_limit: false, round_robin: true },
        ..StoreConfig::small()
    };
    for (cfg, zone_kib) in [(StoreConfig::small(), 256), (spans, 64)] {
        let mut plain = Store::format(dev(24, zone_kib), cfg.clone()).unwrap();
        let mut prep = Store::format(dev(24, zone_kib), cfg.clone()).unwrap();
        let mut p = PreparedRecords::new();
        let ids = [ChunkId::from_u128(1), ChunkId::from_u128(2)];
        for id in ids {
            plain.create(id, StreamType::DATA).unwrap();
            prep.create(id, StreamType::DATA).unwrap();
        }
        let sizes = [1usize, 4095, 4096, 4097, 5000, 16384, 16385, 50_000, 8192, 33_000, 100, 40_000];
        let mut lens = [0u64; 2];
        for (k, &n) in sizes.iter().enumerate() {
            let i = k % 2;
            if lens[i] + n as u64 > plain.chunk_limit(StreamType::DATA) {
                continue;
            }
            let data = bytes(k as u64 + 10, n);
            plain.append(ids[i], &data).unwrap();
            prepare(&mut p, ids[i], lens[i], &data, cfg.max_record);
            prep.append_prepared(ids[i], &mut p).unwrap();
            lens[i] += n as u64;
        }
        assert_eq!(plain.stats().device_bytes_written, prep.stats().device_bytes_written);
        assert_eq!(image(&mut plain), image(&mut prep), "device images differ ({zone_kib} KiB zones)");
        assert!(prep.fsck().unwrap().is_clean());
        let mut again = Store::open(prep.into_device(), cfg.clone()).unwrap();
        for (i, id) in ids.iter().enumerate() {
            let want = plain.read(*id, 0, lens[i]).unwrap();
            assert_eq!(again.read(*id, 0, lens[i]).unwrap(), want);
        }
    }
}

#[test]
fn prepared_records_that_do_not_fit_are_appended_as_bytes() {
    let cfg = StoreConfig::small();
    let mut plain = Store::format(dev(16, 256), cfg.clone()).unwrap();
    let mut prep = Store::format(dev(16, 256), cfg.clone()).unwrap();
    let id = ChunkId::from_u128(5);
    for st in [&mut plain, &mut prep] {
        st.create(id, StreamType::DATA).unwrap();
    }
    let mut p = PreparedRecords::new();
    let mut len = 0u64;
    // Laid out at a stale chunk offset, for another chunk, with another max_record, not
    // finished, and cut short after the layout (truncate).
    let data = bytes(1, 9000);
    plain.append(id, &data).unwrap();
    prepare(&mut p, id, len + 1, &data, cfg.max_record);
    prep.append_prepared(id, &mut p).unwrap();
    len += 9000;
    let data = bytes(2, 5000);
    plain.append(id, &data).unwrap();
    prepare(&mut p, ChunkId::from_u128(6), len, &data, cfg.max_record);
    prep.append_prepared(id, &mut p).unwrap();
    len += 5000;
    let data = bytes(3, 20_000);
    plain.append(id, &data).unwrap();
    prepare(&mut p, id, len, &data, 8192);
    prep.append_prepared(id, &mut p).unwrap();
    len += 20_000;
    let data = bytes(4, 4096);
    plain.append(id, &data).unwrap();
    p.layout(id, len, data.len(), cfg.max_record);
    p.slices_mut()[0].copy_from_slice(&data);
    prep.append_prepared(id, &mut p).unwrap();
    len += 4096;
    let data = bytes(5, 7000);
    plain.append(id, &data[..6000]).unwrap();
    prepare(&mut p, id, len, &data, cfg.max_record);
    p.truncate(6000);
    p.finish();
    prep.append_prepared(id, &mut p).unwrap();
    len += 6000;
    assert_eq!(image(&mut plain), image(&mut prep));
    assert_eq!(prep.read(id, 0, len).unwrap(), plain.read(id, 0, len).unwrap());
    assert!(prep.fsck().unwrap().is_clean());
}
