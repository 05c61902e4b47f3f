//! The GC reserve: a store filled until a put is refused, then k% of its chunks deleted, takes
//! new puts again (GC reclaims the dead data into the reserved zone) — at every placement and
//! datazone count down to the smallest the format accepts. Before the reserve, a store filled
//! this way wedged at "no free or garbage datazone left" while holding garbage.

use shingled_store::{ChunkId, Placement, Store, StoreConfig, StoreError, StreamType, GC_RESERVE_ZONES};
use shingled_zoned::{Dialect, MemZoned, ZonedConfig};

use crate::common::bytes;

/// 64 KiB zones; a chunk of 8000 bytes takes 8192 (8 per zone).
const CHUNK: usize = 8000;

fn placements() -> Vec<(&'static str, Placement)> {
    let g = |a, b, c| Placement::Guided { separate_streams: a, chunk_limit: b, round_robin: c };
    vec![
        ("guided", g(true, true, true)),
        ("one-zone", Placement::OneZone),
        ("no-separate-streams", g(false, true, true)),
        ("no-chunk-limit", g(true, false, true)),
        ("no-round-robin", g(true, true, false)),
    ]
}

/// Puts 8000-byte chunks until one is refused; returns the ids stored. A refused put leaves
/// nothing behind. Any error but "out of space" fails the test.
fn fill(st: &mut Store<MemZoned>, next: &mut u128, live: &mut Vec<ChunkId>, what: &str) -> usize {
    let mut n = 0;
    loop {
        let id = ChunkId::from_u128(*next);
        *next += 1;
        let r =
            st.create(id, StreamType::DATA).and_then(|_| st.append(id, &bytes(id.0[15] as u64 + 7, CHUNK)));
        match r {
            Ok(()) => {
                st.seal(id).unwrap();
                live.push(id);
                n += 1;
            }
            Err(StoreError::NoSpace(why)) => {
                assert!(why.contains("usable capacity"), "{what}: {why}");
                if st.chunk(id).is_some() {
                    st.delete(id).unwrap();
                }
                return n;
            }
            Err(e) => panic!("{what}: {e}"),
        }
        assert!(n < 10_000, "{what}: never refused");
    }
}

#[test]
fn a_full_store_takes_puts_again_after_deletes_at_every_placement_and_size() {
    for datazones in [2u64, 3, 5, 12] {
        for (pname, placement) in placements() {
            for pct in [10usize, 25, 50, 90] {
                let what = format!("{pname}, {datazones} datazones, {pct}% deleted");
                let zcfg = ZonedConfig::small(3 + datazones, 64, Dialect::Zbc);
                let cfg = StoreConfig { placement, ..StoreConfig::small() };
                let mut st = Store::format(MemZoned::new(&zcfg).unwrap(), cfg).unwrap();
                assert_eq!(st.stats().gc_reserve_zones as usize, GC_RESERVE_ZONES, "{what}");
                let usable = st.usable_bytes();
                let (mut next, mut live) = (1u128, Vec::new());
                let first = fill(&mut st, &mut next, &mut live, &what);
                // Refused only when the live data fills the usable capacity (all but the
                // reserve: 8 chunks per zone).
                assert_eq!(first as u64, (datazones - 1) * 8, "{what}: refused at {first} chunks");
                let (l, c) = (first as u64 * CHUNK as u64, CHUNK as u64);
                assert!(l <= usable && usable < l + 8 * c, "{what}: live {l} at refusal, usable {usable}");
                // Delete every k-th chunk.
                let step = (100 / pct).max(1);
                let mut deleted = 0;
                let mut keep = Vec::new();
                for (i, id) in live.drain(..).enumerate() {
                    if i % step == 0 && deleted * 100 < first * pct + 99 {
                        st.delete(id).unwrap();
                        deleted += 1;
                    } else {
                        keep.push(id);
                    }
                }
                live = keep;
                // An explicit GC never fails for lack of space, and puts succeed again for
                // every deleted chunk: live + reserve fits.
                while st.gc_any().unwrap_or_else(|e| panic!("{what}: gc: {e}")).is_some() {}
                let again = fill(&mut st, &mut next, &mut live, &what);
                assert_eq!(again, deleted, "{what}: {deleted} deleted, {again} put again");
                assert_eq!(st.stats().live_bytes, first as u64 * CHUNK as u64, "{what}");
                // Every chunk reads back, and fsck is clean.
                for id in &live {
                    let got = st.read(*id, 0, CHUNK as u64).unwrap();
                    assert!(got == bytes(id.0[15] as u64 + 7, CHUNK), "{what}: chunk {id} differs");
                }
                let f = st.fsck().unwrap();
                assert!(f.problems.is_empty(), "{what}: {:?}", f.problems);
            }
        }
    }
}

/// The same churn without an explicit GC: the puts themselves reclaim the dead data (the
/// emergency path runs GC before an append that could break into the reserve).
#[test]
fn puts_alone_reclaim_dead_data_when_the_store_is_full() {
    let zcfg = ZonedConfig::small(3 + 6, 64, Dialect::Zbc);
    let mut st = Store::format(MemZoned::new(&zcfg).unwrap(), StoreConfig::small()).unwrap();
    let (mut next, mut live) = (1u128, Vec::new());
    let first = fill(&mut st, &mut next, &mut live, "churn");
    assert_eq!(first, 5 * 8);
    // 20 rounds: delete 3 chunks spread over the store, put 3.
    for round in 0..20 {
        for k in 0..3 {
            let i = (round * 7 + k * 13) % live.len();
            st.delete(live.remove(i)).unwrap();
        }
        let n = fill(&mut st, &mut next, &mut live, "churn");
        assert_eq!(n, 3, "round {round}");
    }
    assert!(st.stats().gc_emergency_rounds > 0);
    let f = st.fsck().unwrap();
    assert!(f.problems.is_empty(), "{:?}", f.problems);
}
