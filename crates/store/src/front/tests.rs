use super::*;
use crate::{StoreError, ZoneState};
use proptest::prelude::*;
use shingled_zoned::{Dialect, MemZoned, ZonedConfig};

/// 16 zones of 256 KiB: superzone, 2 metazones, 13 datazones (StoreConfig::small()).
fn devs(n: usize) -> Vec<MemZoned> {
    (0..n).map(|_| MemZoned::new(&ZonedConfig::small(16, 256, Dialect::Zbc)).unwrap()).collect()
}

fn id(k: u128) -> ChunkId {
    ChunkId::from_u128(k)
}

fn pattern(k: u128, n: usize) -> Vec<u8> {
    (0..n).map(|i| (i as u128 * 31 + k * 7) as u8).collect()
}

#[test]
fn candidates_of_small_ids() {
    // FNV-1a of the 24 id bytes, worked out separately (Python) for n = 3.
    let want = [(2, 1), (1, 0), (0, 2), (2, 1), (1, 0), (0, 2), (2, 1), (2, 1), (1, 0), (0, 2)];
    for (k, w) in (1..=10).zip(want) {
        assert_eq!(candidates(&id(k), 3), w, "id {k}");
    }
    assert_eq!(candidates(&id(5), 1), (0, 0));
    for k in 0..200 {
        let (a, b) = candidates(&id(k), 7);
        assert!(a < 7 && b < 7 && a != b);
    }
}

/// Three drives, chunk k gets k × 1000 bytes right after its create. By hand, with
/// score = (free datazones, fewer live bytes) and ties to the first candidate (a chunk's
/// first append on a drive takes a new zone while the drive's data pool has < 2 zones):
///
/// | k | cands | free (0,1,2) | live (0,1,2)     | → |
/// |---|-------|--------------|------------------|---|
/// | 1 | 2,1   | 13,13,13     | 0,0,0            | 2 (tie) |
/// | 2 | 1,0   | 13,13,12     | 0,0,1000         | 1 (tie) |
/// | 3 | 0,2   | 13,12,12     | 0,2000,1000      | 0 (free) |
/// | 4 | 2,1   | 12,12,12     | 3000,2000,1000   | 2 (live) |
/// | 5 | 1,0   | 12,12,11     | 3000,2000,5000   | 1 (live) |
/// | 6 | 0,2   | 12,11,11     | 3000,7000,5000   | 0 (free) |
/// | 7 | 2,1   | 11,11,11     | 9000,7000,5000   | 2 (live) |
/// | 8 | 2,1   | 11,11,11     | 9000,7000,12000  | 1 (live) |
/// | 9 | 1,0   | 11,11,11     | 9000,15000,12000 | 0 (live) |
/// |10 | 0,2   | 11,11,11     | 18000,15000,12000| 2 (live) |
#[test]
fn three_drives_ten_chunks_placement_and_stats() {
    let mut f = StoreFront::format(devs(3), StoreConfig::small()).unwrap();
    let want = [2, 1, 0, 2, 1, 0, 2, 1, 0, 2];
    for k in 1..=10u128 {
        let d = f.create(id(k), StreamType::DATA).unwrap();
        assert_eq!(d, want[k as usize - 1], "chunk {k}");
        f.append(id(k), &pattern(k, k as usize * 1000)).unwrap();
    }
    let s = f.stats();
    let per = |g: fn(&FrontDriveStats) -> u64| s.drives.iter().map(g).collect::<Vec<_>>();
    assert_eq!(per(|d| d.store.chunks), [3, 3, 4]);
    assert_eq!(per(|d| d.store.live_bytes), [18_000, 15_000, 22_000]);
    assert_eq!(per(|d| d.bytes_appended), [18_000, 15_000, 22_000]);
    assert_eq!(per(|d| d.free_zones), [11, 11, 11]);
    assert_eq!(per(|d| d.store.records), [3, 3, 4]);
    assert_eq!(per(|d| d.bytes_read), [0, 0, 0]);
    assert_eq!((s.total.store.chunks, s.total.store.live_bytes, s.total.free_zones), (10, 55_000, 33));
    assert_eq!(s.total.store.datazones, 39);
    for k in 1..=10u128 {
        assert_eq!(f.read(id(k), 0, k as u64 * 1000).unwrap(), pattern(k, k as usize * 1000));
    }
    let s = f.stats();
    assert_eq!(s.drives.iter().map(|d| d.bytes_read).collect::<Vec<_>>(), [18_000, 15_000, 22_000]);
    assert_eq!(s.total.bytes_read, 55_000);

    // list: id order, with drives
    let l = f.list();
    assert_eq!(l.iter().map(|(d, _)| *d).collect::<Vec<_>>(), want);
    assert!(l.windows(2).all(|w| w[0].1.id < w[1].1.id));

    // restart: the map comes back from listing the drives, in any device order
    let mut devs = f.into_devices();
    devs.rotate_left(1); // old drive 1 is now drive 0
    let mut f = StoreFront::open(devs, StoreConfig::small()).unwrap();
    for k in 1..=10u128 {
        assert_eq!(f.drive_of(id(k)), Some((want[k as usize - 1] + 2) % 3), "chunk {k}");
        assert_eq!(f.read(id(k), 0, k as u64 * 1000).unwrap(), pattern(k, k as usize * 1000));
    }
    let s = f.stats();
    assert_eq!(s.drives.iter().map(|d| d.store.live_bytes).collect::<Vec<_>>(), [15_000, 22_000, 18_000]);
    assert_eq!(s.total.bytes_appended, 0);

    // delete and errors
    f.delete(id(4)).unwrap();
    assert_eq!(f.stats().drives[1].store.live_bytes, 18_000);
    assert!(matches!(f.read(id(4), 0, 1), Err(FrontError::NoSuchChunk(_))));
    assert!(matches!(f.create(id(5), StreamType::DATA), Err(FrontError::ChunkExists { drive: 0, .. })));
    f.seal(id(5)).unwrap();
    let e = f.append(id(5), b"x").unwrap_err();
    assert!(matches!(e.store_error(), Some(StoreError::Sealed(_))), "{e}");
    assert_eq!(e.to_string(), format!("drive 0: chunk {} is sealed", id(5)));
    assert!(matches!(f.create_on(3, id(99), StreamType::DATA), Err(FrontError::Drives(_))));
    let reps = f.fsck().unwrap();
    assert_eq!(reps.len(), 3);
    assert!(reps.iter().all(|r| r.is_clean()), "{reps:?}");
    assert_eq!(reps.iter().map(|r| r.chunks_checked).sum::<u64>(), 9);
}

/// GC statistics per drive, by hand: on drive 0 (one data zone at a time, 256 KiB zones,
/// datazones from device zone 3) A (10 000 B) and B (200 000 B) share zone 3 and C
/// (100 000 B) fills it and spills into zone 4. Deleting B and C leaves zone 3 full with
/// only A live: one GC round migrates A's 10 000 bytes and reclaims zone 3. Drive 1 has
/// nothing dead: nothing to collect.
#[test]
fn gc_bytes_per_drive() {
    let cfg = StoreConfig { pool_data: 1, gc_free_zones: 0, ..StoreConfig::small() };
    let mut f = StoreFront::format(devs(2), cfg).unwrap();
    for (k, n) in [(1, 10_000), (2, 200_000), (3, 100_000)] {
        f.create_on(0, id(k), StreamType::DATA).unwrap();
        f.append(id(k), &pattern(k, n)).unwrap();
    }
    f.create_on(1, id(4), StreamType::DATA).unwrap();
    f.append(id(4), &pattern(4, 50_000)).unwrap();
    f.delete(id(2)).unwrap();
    f.delete(id(3)).unwrap();
    assert_eq!(f.stats().drives[0].store.zones_by_state[ZoneState::Full as usize], 1);
    assert_eq!(f.gc().unwrap(), [Some(3), None]);
    let s = f.stats();
    let per = |g: fn(&FrontDriveStats) -> u64| s.drives.iter().map(g).collect::<Vec<_>>();
    assert_eq!(per(|d| d.store.gc_bytes_migrated), [10_000, 0]);
    assert_eq!(per(|d| d.store.gc_zones_reclaimed), [1, 0]);
    assert_eq!((s.total.store.gc_bytes_migrated, s.total.store.gc_zones_reclaimed), (10_000, 1));
    assert_eq!(f.read(id(1), 0, 10_000).unwrap(), pattern(1, 10_000));
    assert_eq!(f.read(id(4), 0, 50_000).unwrap(), pattern(4, 50_000));
}

#[test]
fn same_id_on_two_drives_is_refused_at_open() {
    let mut a = Store::format(devs(1).remove(0), StoreConfig::small()).unwrap();
    let mut b = Store::format(devs(1).remove(0), StoreConfig::small()).unwrap();
    a.create(id(1), StreamType::DATA).unwrap();
    b.create(id(1), StreamType::DATA).unwrap();
    let e = StoreFront::open(vec![a.into_device(), b.into_device()], StoreConfig::small()).unwrap_err();
    assert!(matches!(e, FrontError::Duplicate { first: 0, second: 1, .. }), "{e}");
    assert!(matches!(StoreFront::<MemZoned>::open(vec![], StoreConfig::small()), Err(FrontError::Drives(_))));
}

#[test]
fn read_only_front_reads_and_refuses_changes_without_writing() {
    let mut f = StoreFront::format(devs(2), StoreConfig::small()).unwrap();
    for k in 0..4u128 {
        f.create(id(k), StreamType::DATA).unwrap();
        f.append(id(k), &pattern(k, 5000)).unwrap();
    }
    let devices = f.into_devices();
    let before = format!("{devices:?}");
    let mut ro = StoreFront::open_read_only(devices, StoreConfig::small()).unwrap();
    assert_eq!(ro.list().len(), 4);
    assert_eq!(ro.read(id(2), 0, 5000).unwrap(), pattern(2, 5000));
    assert!(ro.fsck().unwrap().iter().all(|r| r.is_clean()));
    let e = ro.create(id(9), StreamType::DATA).unwrap_err();
    assert!(matches!(e, FrontError::Drive { source: StoreError::ReadOnly, .. }), "{e}");
    assert!(matches!(ro.append(id(1), b"x"), Err(FrontError::Drive { source: StoreError::ReadOnly, .. })));
    assert!(matches!(ro.checkpoint(), Err(FrontError::Drive { source: StoreError::ReadOnly, .. })));
    assert_eq!(format!("{:?}", ro.into_devices()), before);
}

#[test]
fn open_error_names_the_drive() {
    let good = devs(1).remove(0);
    let st = Store::format(good, StoreConfig::small()).unwrap();
    let unformatted = devs(1).remove(0);
    let e = StoreFront::open(vec![st.into_device(), unformatted], StoreConfig::small()).unwrap_err();
    assert!(matches!(e, FrontError::Drive { drive: 1, source: StoreError::NotFormatted(_) }), "{e}");
}

#[test]
fn batch_appends_on_threads_match_sequential_appends() {
    let cfg = StoreConfig { durability: crate::Durability::Batched, ..StoreConfig::small() };
    let mut par = StoreFront::format(devs(4), cfg.clone()).unwrap();
    let mut seq = StoreFront::format(devs(4), cfg.clone()).unwrap();
    for k in 0..12u128 {
        assert_eq!(
            par.create(id(k), StreamType(k as u8 % 3)).unwrap(),
            seq.create(id(k), StreamType(k as u8 % 3)).unwrap()
        );
    }
    let data: Vec<(ChunkId, Vec<u8>)> =
        (0..60u128).map(|i| (id(i % 12), pattern(i, 100 + (i as usize * 977) % 9000))).collect();
    let items: Vec<(ChunkId, &[u8])> = data.iter().map(|(i, d)| (*i, d.as_slice())).collect();
    par.append_batch(&items).unwrap();
    par.sync_parallel().unwrap();
    for (i, d) in &items {
        seq.append(*i, d).unwrap();
    }
    seq.sync().unwrap();
    assert_eq!(par.list(), seq.list());
    let (ps, ss) = (par.stats(), seq.stats());
    assert_eq!(
        ps.drives.iter().map(|d| d.bytes_appended).collect::<Vec<_>>(),
        ss.drives.iter().map(|d| d.bytes_appended).collect::<Vec<_>>()
    );
    let mut par = StoreFront::open(par.into_devices(), cfg).unwrap();
    for k in 0..12u128 {
        let want: Vec<u8> = data.iter().filter(|(i, _)| *i == id(k)).flat_map(|(_, d)| d.clone()).collect();
        assert_eq!(par.read(id(k), 0, want.len() as u64).unwrap(), want, "chunk {k}");
    }
    // an unknown chunk is refused before anything is written
    let before = par.stats().total.store.live_bytes;
    assert!(matches!(par.append_batch(&[(id(0), b"abc"), (id(77), b"x")]), Err(FrontError::NoSuchChunk(_))));
    assert_eq!(par.stats().total.store.live_bytes, before);
}

#[derive(Clone, Debug)]
enum Op {
    Create(u8, u8),
    Append(u8, usize),
    Seal(u8),
    Delete(u8),
    Read(u8, u16, u16),
    /// Appends to up to three chunks at once on per-drive threads.
    Batch(Vec<(u8, usize)>),
    Sync,
    Gc,
    Restart,
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        3 => (0u8..10, 0u8..3).prop_map(|(i, s)| Op::Create(i, s)),
        5 => (0u8..10, 1usize..6000).prop_map(|(i, n)| Op::Append(i, n)),
        1 => (0u8..10).prop_map(Op::Seal),
        1 => (0u8..10).prop_map(Op::Delete),
        3 => (0u8..10, any::<u16>(), any::<u16>()).prop_map(|(i, a, b)| Op::Read(i, a, b)),
        2 => proptest::collection::vec((0u8..10, 1usize..3000), 1..4).prop_map(Op::Batch),
        1 => Just(Op::Sync),
        1 => Just(Op::Gc),
        1 => Just(Op::Restart),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    /// Random operations over 1–4 drives against a map of chunks (data, sealed, drive),
    /// with GC rounds, threaded batches and restarts that rebuild the chunk → drive map:
    /// every answer, read and placement agrees.
    #[test]
    fn front_matches_a_map_model(n in 1usize..5, ops in proptest::collection::vec(op(), 1..60)) {
        let cfg = StoreConfig::small();
        let mut f = StoreFront::format(devs(n), cfg.clone()).unwrap();
        let mut m: BTreeMap<ChunkId, (Vec<u8>, bool, usize)> = BTreeMap::new();
        for (step, o) in ops.into_iter().enumerate() {
            match o {
                Op::Create(i, s) => {
                    let c = id(i as u128);
                    match (f.create(c, StreamType(s)), m.get(&c)) {
                        (Ok(d), None) => { m.insert(c, (Vec::new(), false, d)); }
                        (Err(FrontError::ChunkExists { drive, .. }), Some(x)) => prop_assert_eq!(drive, x.2),
                        (r, x) => prop_assert!(false, "create {:?}: {:?} vs model {:?}", c, r, x),
                    }
                }
                Op::Append(i, n) => {
                    let c = id(i as u128);
                    let data = pattern(step as u128, n);
                    match (f.append(c, &data), m.get_mut(&c)) {
                        (Ok(()), Some(x)) if !x.1 => x.0.extend_from_slice(&data),
                        (Err(FrontError::NoSuchChunk(_)), None) => {}
                        (Err(e), Some(x)) if x.1 => prop_assert!(matches!(e.store_error(), Some(StoreError::Sealed(_)))),
                        (r, x) => prop_assert!(false, "append {:?}: {:?} vs model {:?}", c, r, x.map(|x| x.1)),
                    }
                }
                Op::Seal(i) => {
                    let c = id(i as u128);
                    match (f.seal(c), m.get_mut(&c)) {
                        (Ok(()), Some(x)) => x.1 = true,
                        (Err(FrontError::NoSuchChunk(_)), None) => {}
                        (r, _) => prop_assert!(false, "seal {:?}: {:?}", c, r),
                    }
                }
                Op::Delete(i) => {
                    let c = id(i as u128);
                    match (f.delete(c), m.remove(&c)) {
                        (Ok(()), Some(_)) | (Err(FrontError::NoSuchChunk(_)), None) => {}
                        (r, _) => prop_assert!(false, "delete {:?}: {:?}", c, r),
                    }
                }
                Op::Read(i, a, b) => {
                    let c = id(i as u128);
                    match m.get(&c) {
                        None => prop_assert!(matches!(f.read(c, 0, 0), Err(FrontError::NoSuchChunk(_)))),
                        Some(x) => {
                            let len = x.0.len() as u64;
                            let off = if len == 0 { 0 } else { a as u64 % (len + 1) };
                            let n = (b as u64).min(len - off);
                            prop_assert_eq!(f.read(c, off, n).unwrap(), x.0[off as usize..(off + n) as usize].to_vec());
                        }
                    }
                }
                Op::Batch(v) => {
                    let data: Vec<(ChunkId, Vec<u8>)> = v
                        .iter()
                        .enumerate()
                        .map(|(j, &(i, len))| (id(i as u128), pattern((step * 4 + j) as u128, len)))
                        .collect();
                    let items: Vec<(ChunkId, &[u8])> = data.iter().map(|(c, d)| (*c, d.as_slice())).collect();
                    let all_open = data.iter().all(|(c, _)| m.get(c).is_some_and(|x| !x.1));
                    let r = f.append_batch(&items);
                    if all_open {
                        prop_assert!(r.is_ok(), "{:?}", r);
                        for (c, d) in &data {
                            m.get_mut(c).unwrap().0.extend_from_slice(d);
                        }
                    } else if data.iter().any(|(c, _)| !m.contains_key(c)) {
                        prop_assert!(matches!(r, Err(FrontError::NoSuchChunk(_))), "{:?}", r);
                    } else {
                        // Some chunk is sealed: each drive stops at its first failure.
                        prop_assert!(r.is_err());
                        let mut stopped = vec![false; n];
                        for (c, d) in &data {
                            let x = m.get_mut(c).unwrap();
                            let drive = x.2;
                            if stopped[drive] {
                                continue;
                            }
                            if x.1 {
                                stopped[drive] = true;
                            } else {
                                x.0.extend_from_slice(d);
                            }
                        }
                    }
                }
                Op::Sync => f.sync_parallel().unwrap(),
                Op::Gc => {
                    f.gc().unwrap();
                }
                Op::Restart => f = StoreFront::open(f.into_devices(), cfg.clone()).unwrap(),
            }
            let l = f.list();
            prop_assert_eq!(l.len(), m.len());
            for ((d, c), (mid, (data, sealed, md))) in l.iter().zip(&m) {
                prop_assert_eq!((c.id, c.len, c.sealed, *d), (*mid, data.len() as u64, *sealed, *md));
            }
            let s = f.stats();
            for (d, ds) in s.drives.iter().enumerate() {
                let live: u64 = m.values().filter(|x| x.2 == d).map(|x| x.0.len() as u64).sum();
                prop_assert_eq!(ds.store.live_bytes, live);
                prop_assert_eq!(f.live[d], live);
            }
        }
    }
}
