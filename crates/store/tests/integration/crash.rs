//! Crash consistency: freeze the device at the Nth operation, cut power, recover, and check
//! the oracle of acknowledged operations (zoned-storage.md §4; redb's "freeze at the Nth
//! flush").

use shingled_store::{ChunkId, Durability, Store, StoreConfig, StreamType};
use shingled_zoned::{Dialect, FaultPlan, Faulty, FileZoned, MemZoned, SimStorage, Survivors, ZonedConfig};

use crate::common::{bytes, small_cfg, Oracle};

const STEPS: usize = 160;

fn zcfg() -> ZonedConfig {
    ZonedConfig::small(24, 64, Dialect::Zbc)
}

fn fresh(cfg: &StoreConfig) -> Store<FileZoned<SimStorage>> {
    let dev = FileZoned::create_with(SimStorage::new(), &zcfg()).unwrap();
    Store::format(dev, cfg.clone()).unwrap()
}

/// Storage operations of a whole workload run (the crash-point space).
fn total_ops(cfg: &StoreConfig, seed: u64) -> u64 {
    let mut st = fresh(cfg);
    let base = st.device().storage().ops();
    assert!(Oracle::new().run(&mut st, seed, STEPS));
    st.device().storage().ops() - base
}

/// One crash point: run until the storage freezes after `n` operations, power-cut, recover,
/// check; then keep working on the recovered store and check once more after a clean restart.
fn crash_at(cfg: &StoreConfig, seed: u64, n: u64, cut: u64) {
    let ctx = format!("seed {seed} crash at op {n} cut {cut}");
    let mut st = fresh(cfg);
    st.device_mut().storage_mut().fail_after(n);
    let mut o = Oracle::new();
    let finished = o.run(&mut st, seed, STEPS);
    let img = st.into_device().storage().power_cut(if cut == 0 {
        Survivors::None
    } else {
        Survivors::Random { seed: cut }
    });
    let dev = FileZoned::open_with(img).unwrap_or_else(|e| panic!("{ctx}: device reopen: {e}"));
    let mut st = Store::open(dev, cfg.clone()).unwrap_or_else(|e| panic!("{ctx}: recovery failed: {e}"));
    if finished {
        // Froze after the workload: nothing to lose beyond unsynced batched appends.
        o.pending = crate::common::Pending::None;
    }
    o.check(&mut st, &ctx);
    let rep = st.fsck().unwrap();
    assert!(rep.is_clean(), "{ctx}: fsck after recovery: {:?}", rep.problems);
    assert!(o.run(&mut st, seed ^ 0xabc, 15), "{ctx}: the recovered store fails");
    let img = st.into_device().storage().power_cut(Survivors::All);
    let mut st = Store::open(FileZoned::open_with(img).unwrap(), cfg.clone()).unwrap();
    o.check(&mut st, &format!("{ctx}, second restart"));
}

fn sweep(cfg: &StoreConfig, seed: u64, stride: u64) -> u64 {
    let total = total_ops(cfg, seed);
    let mut points = 0;
    let mut n = 0;
    while n <= total {
        crash_at(cfg, seed, n, n % 3);
        points += 1;
        n += stride;
    }
    points
}

#[test]
fn crash_every_nth_op_every_append_durable() {
    let cfg = small_cfg(Durability::EveryAppend);
    let total = total_ops(&cfg, 1);
    let stride = (total / 150).max(1);
    let points = sweep(&cfg, 1, stride);
    eprintln!("every-append: {points} crash points over {total} storage ops");
    assert!(points >= 100, "{points} crash points over {total} ops");
}

#[test]
fn crash_every_nth_op_batched() {
    let cfg = small_cfg(Durability::Batched);
    let total = total_ops(&cfg, 2);
    let points = sweep(&cfg, 2, (total / 100).max(1));
    eprintln!("batched: {points} crash points over {total} storage ops");
    assert!(points >= 80, "{points} crash points over {total} ops");
}

/// Periodic checkpoints every ~20 KB written, each in pieces of 256 bytes spread over the
/// following operations (journal records in between): crashes land before, inside and after
/// checkpoints, including between their pieces.
#[test]
fn crash_every_nth_op_during_incremental_checkpoints() {
    for (seed, d) in [(3, Durability::EveryAppend), (4, Durability::Batched)] {
        let cfg = StoreConfig { checkpoint_every_bytes: 20_000, ckpt_step_bytes: 256, ..small_cfg(d) };
        let mut st = fresh(&cfg);
        assert!(Oracle::new().run(&mut st, seed, STEPS));
        let s = st.stats();
        assert!(
            s.incremental_checkpoints >= 3 && s.checkpoint_pieces >= 4 * s.incremental_checkpoints,
            "{s:?}"
        );
        let total = total_ops(&cfg, seed);
        let points = sweep(&cfg, seed, (total / 120).max(1));
        eprintln!("incremental checkpoints {d:?}: {points} crash points over {total} storage ops, {s:?}");
        assert!(points >= 100, "{points} crash points");
    }
}

/// Every operation of several workloads, both durability modes.
#[test]
#[ignore = "long: every crash point of 12 workloads (run with --ignored)"]
fn crash_every_op_long() {
    let mut points = 0;
    for seed in 10..16 {
        for d in [Durability::EveryAppend, Durability::Batched] {
            points += sweep(&small_cfg(d), seed, 1);
        }
    }
    eprintln!("long: {points} crash points");
}

/// Faulty decorator: a failed write, a torn write or a failed flush at the Nth device call,
/// then a power cut keeping a random prefix of the unflushed data.
#[test]
fn faulty_writes_tears_and_flush_failures() {
    let cfg = small_cfg(Durability::EveryAppend);
    let mut points = 0;
    for n in 1..120u64 {
        for kind in 0..3 {
            let mem = MemZoned::new(&zcfg()).unwrap();
            let st = Store::format(mem, cfg.clone()).unwrap();
            let f = Faulty::new(st.into_device(), FaultPlan::default()).unwrap();
            let mut st = Store::open(f, cfg.clone()).unwrap();
            // Counts run over the decorator's life: aim past what recovery did.
            let (w, fl, _) = st.device().counts();
            let plan = match kind {
                0 => FaultPlan { fail_write: Some(w + n), ..Default::default() },
                1 => FaultPlan { tear_write: Some((w + n, 1 + n % 7)), ..Default::default() },
                _ => FaultPlan { fail_flush: Some(fl + n), ..Default::default() },
            };
            let ctx = format!("fault {plan:?}");
            st.device_mut().set_plan(plan);
            let mut o = Oracle::new();
            if o.run(&mut st, 7 + n, STEPS) {
                continue;
            }
            let mut f = st.into_device();
            f.power_cut(Survivors::Random { seed: n }).unwrap();
            f.set_plan(FaultPlan::default());
            let mut st = Store::open(f, cfg.clone()).unwrap_or_else(|e| panic!("{ctx}: recovery: {e}"));
            o.check(&mut st, &ctx);
            assert!(o.run(&mut st, n, 10), "{ctx}: recovered store fails");
            points += 1;
        }
    }
    eprintln!("faulty: {points} fault points");
    assert!(points >= 200, "{points} fault points");
}

/// A store with garbage: 24 sealed 9000-byte chunks round-robin over two zones, every chunk
/// with `i % 4 < 2` deleted (each zone half dead).
fn gc_fixture() -> (Store<FileZoned<SimStorage>>, Vec<ChunkId>) {
    let cfg = StoreConfig { gc_free_zones: 0, ..StoreConfig::small() };
    let mut st = fresh(&cfg);
    let ids: Vec<ChunkId> = (0..24).map(ChunkId::from_u128).collect();
    for (i, id) in ids.iter().enumerate() {
        st.create(*id, StreamType::DATA).unwrap();
        st.append(*id, &bytes(i as u64, 9000)).unwrap();
        st.seal(*id).unwrap();
    }
    for id in ids.iter().enumerate().filter(|(i, _)| i % 4 < 2).map(|x| x.1) {
        st.delete(*id).unwrap();
    }
    (st, ids)
}

/// Freeze at every storage operation of a GC run (migrations, checkpoints, resets), cut power,
/// recover: every live chunk reads back exactly, no deleted chunk comes back.
#[test]
fn crash_at_every_op_during_gc() {
    let (mut st, _) = gc_fixture();
    let base = st.device().storage().ops();
    while st.gc().unwrap().is_some() {}
    assert!(st.stats().gc_migrations >= 2);
    let total = st.device().storage().ops() - base;
    let cfg = st.config().clone();
    let mut points = 0;
    for n in 0..=total {
        let (mut st, ids) = gc_fixture();
        st.device_mut().storage_mut().fail_after(n);
        while let Ok(Some(_)) = st.gc() {}
        let img = st.into_device().storage().power_cut(Survivors::Random { seed: n });
        let mut st = Store::open(FileZoned::open_with(img).unwrap(), cfg.clone())
            .unwrap_or_else(|e| panic!("crash at op {n} of GC: recovery: {e}"));
        for (i, id) in ids.iter().enumerate() {
            if i % 4 < 2 {
                assert!(st.chunk(*id).is_none(), "op {n}: deleted chunk {i} is back");
            } else {
                let got = st.read(*id, 0, 9000).unwrap_or_else(|e| panic!("op {n}: chunk {i}: {e}"));
                assert!(got == bytes(i as u64, 9000), "op {n}: chunk {i} differs");
            }
        }
        // And GC can finish after recovery.
        while st.gc().unwrap().is_some() {}
        assert_eq!(st.list().len(), 12);
        points += 1;
    }
    eprintln!("gc: {points} crash points");
    assert!(points >= 50, "{points} crash points during GC");
}

/// Regression (found by `crash_every_op_long`, seed 11, op 75): in batched mode, sealing an
/// already sealed chunk returned without flushing, so appends acknowledged by it were lost.
#[test]
fn resealing_a_sealed_chunk_still_flushes_batched_appends() {
    crash_at(&small_cfg(Durability::Batched), 11, 75, 0);
}
