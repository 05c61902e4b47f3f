//! Incremental, throttled GC: hand-checked victim order and bytes per step, the bandwidth
//! ratio, the emergency path, and crashes between steps interleaved with foreground appends.

use shingled_store::{ChunkId, GcStep, Placement, Store, StoreConfig, StoreError, StreamType, ZoneState};
use shingled_zoned::{Dialect, FileZoned, MemZoned, SimStorage, Survivors, ZonedConfig, ZonedDevice};

use crate::common::bytes;

/// 24 zones of 64 KiB; superzone 0, metazones 1–2, datazones from 3.
fn zcfg() -> ZonedConfig {
    ZonedConfig::small(24, 64, Dialect::Zbc)
}

fn one_zone_cfg() -> StoreConfig {
    StoreConfig { placement: Placement::OneZone, gc_free_zones: 0, ..StoreConfig::small() }
}

/// 8000-byte chunks take 8192 bytes each, so a 64 KiB zone holds exactly 8 and one-zone
/// placement fills zones in order: chunks 0–7 in zone 3 (A), 8–15 in zone 4 (B), 16–23 in
/// zone 5 (C), 24 in zone 6 (open). Deleted: 2 of A, 5 of B, 3 of C.
fn layout<D: ZonedDevice>(dev: D, cfg: StoreConfig) -> (Store<D>, Vec<ChunkId>, Vec<usize>) {
    let mut st = Store::format(dev, cfg).unwrap();
    let ids: Vec<ChunkId> = (0..25).map(ChunkId::from_u128).collect();
    for (i, id) in ids.iter().enumerate() {
        st.create(*id, StreamType::DATA).unwrap();
        st.append(*id, &bytes(i as u64, 8000)).unwrap();
    }
    let states = st.zone_states();
    assert_eq!(
        &states[..4],
        &[(3, ZoneState::Full), (4, ZoneState::Full), (5, ZoneState::Full), (6, ZoneState::Activated)]
    );
    let dead: Vec<usize> = vec![0, 1, 8, 9, 10, 11, 12, 16, 17, 18];
    for &i in &dead {
        st.delete(ids[i]).unwrap();
    }
    (st, ids, dead)
}

#[test]
fn greedy_victim_order_and_bytes_per_step_by_hand() {
    let (mut st, ids, dead) = layout(MemZoned::new(&zcfg()).unwrap(), one_zone_cfg());
    // B (5 dead, 3 live), then C (3 dead, 5 live), then A (2 dead, 6 live): one 8000-byte
    // record per step with an 8000-byte budget; the zone is reclaimed by its last step.
    let mut want = Vec::new();
    for (zone, live) in [(4u64, 3), (5, 5), (3, 6)] {
        for k in 1..=live {
            want.push(GcStep { victim: Some(zone), migrated: 8000, reclaimed: (k == live).then_some(zone) });
        }
    }
    let mut got = Vec::new();
    loop {
        let s = st.gc_step(8000).unwrap();
        if s.victim.is_none() {
            assert_eq!(s, GcStep::default());
            break;
        }
        got.push(s);
    }
    assert_eq!(got, want);
    // A budget of 20 000 bytes moves two whole records per step.
    let (mut st2, _, _) = layout(MemZoned::new(&zcfg()).unwrap(), one_zone_cfg());
    let steps: Vec<u64> = (0..2).map(|_| st2.gc_step(20_000).unwrap().migrated).collect();
    assert_eq!(steps, [16_000, 8000]);
    // Nothing lost, stats add up.
    let s = st.stats();
    assert_eq!(
        (s.gc_bytes_migrated, s.gc_migrations, s.gc_zones_reclaimed, s.gc_steps),
        (14 * 8000, 3, 3, 14)
    );
    for (i, id) in ids.iter().enumerate() {
        if dead.contains(&i) {
            assert!(st.chunk(*id).is_none());
        } else {
            assert_eq!(st.read(*id, 0, 8000).unwrap(), bytes(i as u64, 8000), "chunk {i}");
        }
    }
    assert!(st.fsck().unwrap().is_clean());
}

#[test]
fn background_gc_respects_the_bandwidth_ratio() {
    let cfg = StoreConfig {
        gc_free_zones: 30,
        gc_stop_free_zones: 30,
        gc_step_bytes: 8000,
        gc_max_bandwidth: 50,
        ..one_zone_cfg()
    };
    let (mut st, _, _) = layout(MemZoned::new(&zcfg()).unwrap(), cfg);
    let fg = ChunkId::from_u128(100);
    st.create(fg, StreamType::DATA).unwrap();
    let before = st.stats();
    let mut appended = 0u64;
    for i in 0..16 {
        st.append(fg, &bytes(1000 + i, 4000)).unwrap();
        appended += 4000;
        let s = st.stats();
        let migrated = s.gc_bytes_migrated - before.gc_bytes_migrated;
        // Half a GC byte per foreground byte: every 4th append (2000 credit each) pays a step;
        // the layout's own appends left a full step of credit (the cap).
        assert!(migrated * 2 <= appended + 2 * 8000, "after {appended} fg bytes GC moved {migrated}");
    }
    let s = st.stats();
    assert_eq!(s.gc_bytes_migrated - before.gc_bytes_migrated, 4 * 8000, "{s:?}");
    assert_eq!(s.gc_throttled_steps - before.gc_throttled_steps, 12, "{s:?}");
    assert!(st.fsck().unwrap().is_clean());
}

#[test]
fn emergency_gc_keeps_appends_going_without_bandwidth() {
    // No background bandwidth at all: only the emergency path frees space.
    let cfg = StoreConfig { gc_free_zones: 3, gc_max_bandwidth: 0, ..one_zone_cfg() };
    let mut st = Store::format(MemZoned::new(&zcfg()).unwrap(), cfg).unwrap();
    // Each round writes a zone's worth (8 chunks) and deletes 7 of the previous round's, so
    // every full zone keeps one live chunk of 8 and only migration frees space; 21 datazones
    // are used up several times over.
    let id = |round: u64, i: u64| ChunkId::from_u128((round * 8 + i) as u128);
    for round in 0..60u64 {
        for i in 0..8 {
            st.create(id(round, i), StreamType::DATA).unwrap();
            st.append(id(round, i), &bytes(round * 8 + i, 8000))
                .unwrap_or_else(|e| panic!("round {round}: {e}"));
        }
        if round > 0 {
            for i in 1..8 {
                st.delete(id(round - 1, i)).unwrap();
            }
        }
    }
    let s = st.stats();
    // Every migration came from the emergency path (the background has no bandwidth). Since
    // the GC reserve, the emergency path runs before the free zones fall to the background's
    // watermark, so no throttled background step need be counted.
    assert!(s.gc_emergency_rounds > 5 && s.gc_migrations > 5, "{s:?}");
    assert!(s.gc_emergency_rounds >= s.gc_migrations, "{s:?}");
    for round in 0..60u64 {
        for i in 0..8 {
            let live = i == 0 || round == 59;
            match st.read(id(round, i), 0, 8000) {
                Ok(got) => assert!(live && got == bytes(round * 8 + i, 8000), "chunk {round}/{i}"),
                Err(e) => assert!(!live, "chunk {round}/{i}: {e}"),
            }
        }
    }
    assert!(st.fsck().unwrap().is_clean());
}

/// Crash at every storage operation of a workload where background GC steps (one record per
/// step, 1:1 bandwidth) interleave with foreground appends: every live chunk of the layout
/// reads back, no deleted chunk returns, the foreground chunk keeps every acknowledged byte.
#[test]
fn crash_at_every_op_during_incremental_gc() {
    let cfg =
        StoreConfig { gc_free_zones: 30, gc_stop_free_zones: 30, gc_step_bytes: 8000, ..one_zone_cfg() };
    let fresh = || FileZoned::create_with(SimStorage::new(), &zcfg()).unwrap();
    let run = |st: &mut Store<FileZoned<SimStorage>>, acked: &mut usize| -> Result<(), StoreError> {
        let fg = ChunkId::from_u128(100);
        st.create(fg, StreamType::DATA)?;
        for i in 0..24 {
            st.append(fg, &bytes(7, 24 * 3000)[i * 3000..(i + 1) * 3000])?;
            *acked = (i + 1) * 3000;
        }
        Ok(())
    };
    let (mut st, _, _) = layout(fresh(), cfg.clone());
    let base = st.device().storage().ops();
    run(&mut st, &mut 0).unwrap();
    assert!(st.stats().gc_steps >= 6 && st.stats().gc_migrations >= 1, "{:?}", st.stats());
    let total = st.device().storage().ops() - base;
    let mut points = 0;
    for n in 0..=total {
        let (mut st, ids, dead) = layout(fresh(), cfg.clone());
        st.device_mut().storage_mut().fail_after(n);
        let mut acked = 0;
        let _ = run(&mut st, &mut acked);
        let img = st.into_device().storage().power_cut(Survivors::Random { seed: n });
        let mut st = Store::open(FileZoned::open_with(img).unwrap(), cfg.clone())
            .unwrap_or_else(|e| panic!("crash at op {n}: recovery: {e}"));
        for (i, id) in ids.iter().enumerate() {
            if dead.contains(&i) {
                assert!(st.chunk(*id).is_none(), "op {n}: deleted chunk {i} is back");
            } else {
                let got = st.read(*id, 0, 8000).unwrap_or_else(|e| panic!("op {n}: chunk {i}: {e}"));
                assert!(got == bytes(i as u64, 8000), "op {n}: chunk {i} differs");
            }
        }
        let fg = ChunkId::from_u128(100);
        if let Some(c) = st.chunk(fg) {
            let len = c.len as usize;
            assert!(len >= acked, "op {n}: foreground chunk has {len} bytes, {acked} acknowledged");
            assert_eq!(st.read(fg, 0, len as u64).unwrap(), &bytes(7, 24 * 3000)[..len], "op {n}");
        } else {
            assert_eq!(acked, 0, "op {n}: foreground chunk lost");
        }
        let rep = st.fsck().unwrap();
        assert!(rep.is_clean(), "op {n}: {:?}", rep.problems);
        while st.gc().unwrap().is_some() {}
        points += 1;
    }
    eprintln!("incremental gc: {points} crash points");
    assert!(points >= 100, "{points} crash points");
}
