//! Crash consistency: freeze the device at the Nth operation, cut power, recover, and check
//! the oracle of acknowledged operations (the expected-state oracle of RocksDB's
//! `db_stress`; redb's "freeze at the Nth flush").

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

/// Records of at most 4 KiB: an append of up to 9000 bytes is up to three records, which
/// `Store::append` writes to their zone with one device write, so crash points land on writes
/// of several records (kept, dropped or torn between and inside them).
#[test]
fn crash_every_nth_op_with_several_records_per_write() {
    for (seed, d) in [(5, Durability::EveryAppend), (6, Durability::Batched)] {
        let cfg = StoreConfig { max_record: 4096, ..small_cfg(d) };
        let total = total_ops(&cfg, seed);
        let points = sweep(&cfg, seed, (total / 160).max(1));
        eprintln!("{d:?}, 4 KiB records: {points} crash points over {total} storage ops");
        assert!(points >= 120, "{points} crash points over {total} ops");
    }
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
            let rep = st.fsck().unwrap();
            assert!(rep.is_clean(), "{ctx}: fsck after recovery: {:?}", rep.problems);
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

// ---- Crashes around a seal that FINISHes a zone (rule 3) ----
//
// Sealing a chunk that leaves its zone with less than 1/16 free, with no other chunk appending
// there, FINISHes the zone. The FINISH is not journaled: recovery finds the zone full (or, if
// the FINISH did not happen, open with a small remnant) and must agree with the journaled seal
// either way.

/// One step of a scripted workload.
#[derive(Clone, Copy, Debug)]
enum Op {
    Create(u128, StreamType),
    /// Append 8 KiB (contents from the step number).
    Append(u128),
    Seal(u128),
    Delete(u128),
    Sync,
}

/// 256 KiB zones, so a remnant of 4 KiB is under 1/16 and not yet finished by the append.
fn seal_zcfg() -> ZonedConfig {
    ZonedConfig::small(24, 256, Dialect::Zbc)
}

/// a fills its zone to within 4 KiB (21 records of 12 KiB) while b appends elsewhere; sealing a
/// finishes its zone. Then c starts (in a fresh zone), b fills up and its seal finishes its zone
/// too, with metadata in between; a is deleted (a full zone turns garbage).
fn seal_script() -> Vec<Op> {
    use Op::*;
    let mut s =
        vec![Create(1, StreamType::DATA), Create(2, StreamType::DATA), Create(4, StreamType::METADATA)];
    for i in 0..21 {
        s.push(Append(1));
        if i % 7 == 0 {
            s.push(Append(2));
        }
    }
    s.push(Append(4));
    s.push(Seal(1)); // finishes a's zone
    s.push(Create(3, StreamType::DATA));
    s.push(Append(3));
    while s.iter().filter(|o| matches!(o, Append(2))).count() < 21 {
        s.push(Append(2));
    }
    s.push(Seal(2)); // finishes b's zone
    s.push(Append(3));
    s.push(Seal(4));
    s.push(Delete(1));
    s.push(Sync);
    s
}

/// Runs `ops` against the store, recording the oracle like [`Oracle::run`]; false at the first
/// device error.
fn drive<D: shingled_zoned::ZonedDevice>(st: &mut Store<D>, o: &mut Oracle, ops: &[Op], salt: u64) -> bool {
    use crate::common::{OChunk, Pending};
    let batched = st.config().durability == Durability::Batched;
    for (step, op) in ops.iter().enumerate() {
        let res = match *op {
            Op::Create(i, s) => {
                let id = ChunkId::from_u128(i);
                o.pending = Pending::Create(id);
                st.create(id, s).map(|_| {
                    o.chunks.insert(id, OChunk::default());
                    o.all_durable();
                })
            }
            Op::Append(i) => {
                let id = ChunkId::from_u128(i);
                let data = bytes(salt ^ (step as u64) << 8 ^ i as u64, 8192);
                o.pending = Pending::Append(id);
                o.chunks.get_mut(&id).unwrap().attempted.extend_from_slice(&data);
                st.append(id, &data).map(|_| {
                    if !batched {
                        o.all_durable();
                    }
                })
            }
            Op::Seal(i) => {
                let id = ChunkId::from_u128(i);
                o.pending = Pending::Seal(id);
                st.seal(id).map(|_| {
                    o.chunks.get_mut(&id).unwrap().sealed = true;
                    o.all_durable();
                })
            }
            Op::Delete(i) => {
                let id = ChunkId::from_u128(i);
                o.pending = Pending::Delete(id);
                st.delete(id).map(|_| {
                    o.chunks.remove(&id);
                    o.all_durable();
                })
            }
            Op::Sync => {
                o.pending = Pending::None;
                st.sync().map(|_| o.all_durable())
            }
        };
        match res {
            Ok(()) => o.pending = Pending::None,
            Err(shingled_store::StoreError::Device { .. }) => return false,
            Err(e) => panic!("step {step} {op:?}: unexpected error {e}"),
        }
    }
    true
}

fn full_zones<D: shingled_zoned::ZonedDevice>(st: &Store<D>) -> usize {
    st.zone_states().iter().filter(|z| z.1 == shingled_store::ZoneState::Full).count()
}

/// After recovery: the oracle (every acknowledged byte, seal state), fsck clean, sealed chunks
/// refuse appends; then the store keeps working (a new chunk fills and seals a zone, the
/// unsealed ones grow) and a clean restart agrees.
fn check_recovered<D: shingled_zoned::ZonedDevice>(mut st: Store<D>, o: &mut Oracle, ctx: &str) -> Store<D> {
    o.check(&mut st, ctx);
    let rep = st.fsck().unwrap();
    assert!(rep.is_clean(), "{ctx}: fsck after recovery: {:?}", rep.problems);
    for (id, c) in &o.chunks {
        if c.sealed {
            assert!(
                matches!(st.append(*id, &[1]), Err(shingled_store::StoreError::Sealed(_))),
                "{ctx}: sealed chunk {id} takes appends"
            );
        }
    }
    let mut tail = vec![Op::Create(9, StreamType::DATA)];
    tail.extend(std::iter::repeat_n(Op::Append(9), 21));
    tail.push(Op::Seal(9));
    for i in 1..=4 {
        let c = o.chunks.get(&ChunkId::from_u128(i));
        if c.is_some_and(|c| !c.sealed && c.attempted.len() + 8192 <= 200_000) {
            tail.push(Op::Append(i));
        }
    }
    tail.push(Op::Sync);
    assert!(drive(&mut st, o, &tail, 0x5eed), "{ctx}: the recovered store fails");
    o.check(&mut st, &format!("{ctx}, after more work"));
    let rep = st.fsck().unwrap();
    assert!(rep.is_clean(), "{ctx}: fsck after more work: {:?}", rep.problems);
    st
}

#[test]
fn seal_script_finishes_two_zones() {
    // The workload does what the crash tests below rely on.
    let cfg = small_cfg(Durability::EveryAppend);
    let mut st = Store::format(MemZoned::new(&seal_zcfg()).unwrap(), cfg.clone()).unwrap();
    let ops = seal_script();
    let seal_a = ops.iter().position(|o| matches!(o, Op::Seal(1))).unwrap();
    let mut o = Oracle::new();
    assert!(drive(&mut st, &mut o, &ops[..seal_a], 0));
    assert_eq!(full_zones(&st), 0);
    assert!(drive(&mut st, &mut o, &ops[seal_a..seal_a + 1], 0));
    assert_eq!(full_zones(&st), 1, "sealing a finished its zone");
    assert!(drive(&mut st, &mut o, &ops[seal_a + 1..], 0));
    let states = st.zone_states();
    let garbage = states.iter().filter(|z| z.1 == shingled_store::ZoneState::Garbage).count();
    assert_eq!((full_zones(&st), garbage), (1, 1), "b's zone full, a's garbage after its delete");
    let ctx = "no crash";
    let st = check_recovered(Store::open(st.into_device(), cfg.clone()).unwrap(), &mut o, ctx);
    let _ = st;
}

/// Power cut at every storage operation of the seal script (both durability modes), dropping
/// all unflushed writes or a random part of them.
#[test]
fn crash_at_every_op_around_a_finishing_seal() {
    let ops = seal_script();
    let mut points = 0;
    for d in [Durability::EveryAppend, Durability::Batched] {
        let cfg = small_cfg(d);
        let fresh = || {
            let dev = FileZoned::create_with(SimStorage::new(), &seal_zcfg()).unwrap();
            Store::format(dev, cfg.clone()).unwrap()
        };
        let mut st = fresh();
        let base = st.device().storage().ops();
        assert!(drive(&mut st, &mut Oracle::new(), &ops, 0));
        let total = st.device().storage().ops() - base;
        for n in 0..=total {
            for cut in [0, 1 + n] {
                let ctx = format!("{d:?} crash at op {n}/{total} cut {cut}");
                let mut st = fresh();
                st.device_mut().storage_mut().fail_after(n);
                let mut o = Oracle::new();
                if drive(&mut st, &mut o, &ops, 0) {
                    o.pending = crate::common::Pending::None;
                }
                let img = st.into_device().storage().power_cut(if cut == 0 {
                    Survivors::None
                } else {
                    Survivors::Random { seed: cut }
                });
                let dev = FileZoned::open_with(img).unwrap_or_else(|e| panic!("{ctx}: device reopen: {e}"));
                let st =
                    Store::open(dev, cfg.clone()).unwrap_or_else(|e| panic!("{ctx}: recovery failed: {e}"));
                let st = check_recovered(st, &mut o, &ctx);
                let img = st.into_device().storage().power_cut(Survivors::All);
                let mut st = Store::open(FileZoned::open_with(img).unwrap(), cfg.clone()).unwrap();
                o.check(&mut st, &format!("{ctx}, clean restart"));
                points += 1;
            }
        }
        eprintln!("finishing seal {d:?}: {total} storage ops");
    }
    eprintln!("finishing seal: {points} crash points");
    assert!(points >= 200, "{points} crash points");
}

/// A torn write (a prefix of its sectors reaches the device), a failed write or a failed flush
/// at every device call of the seal script, then a power cut keeping a random part of the
/// unflushed data. A read-only open of the image must agree with the read-write one.
#[test]
fn torn_and_failed_writes_around_a_finishing_seal() {
    let ops = seal_script();
    let mut points = 0;
    for d in [Durability::EveryAppend, Durability::Batched] {
        let cfg = small_cfg(d);
        let open = || {
            let st = Store::format(MemZoned::new(&seal_zcfg()).unwrap(), cfg.clone()).unwrap();
            let f = Faulty::new(st.into_device(), FaultPlan::default()).unwrap();
            Store::open(f, cfg.clone()).unwrap()
        };
        let mut st = open();
        let (w0, f0, _) = st.device().counts();
        assert!(drive(&mut st, &mut Oracle::new(), &ops, 0));
        let (w1, f1, _) = st.device().counts();
        for kind in 0..3 {
            let last = if kind == 2 { f1 - f0 } else { w1 - w0 };
            for n in 1..=last {
                let mut st = open();
                let (w, fl, _) = st.device().counts();
                let plan = match kind {
                    0 => FaultPlan { tear_write: Some((w + n, 1 + n % 5)), ..Default::default() },
                    1 => FaultPlan { fail_write: Some(w + n), ..Default::default() },
                    _ => FaultPlan { fail_flush: Some(fl + n), ..Default::default() },
                };
                let ctx = format!("{d:?} fault {plan:?}");
                st.device_mut().set_plan(plan);
                let mut o = Oracle::new();
                if drive(&mut st, &mut o, &ops, 0) {
                    o.pending = crate::common::Pending::None;
                }
                let mut f = st.into_device();
                f.power_cut(Survivors::Random { seed: n }).unwrap();
                f.set_plan(FaultPlan::default());
                // A read-only open of the same image agrees and is fsck-clean too.
                let mut ro = Store::open_read_only(f.inner().clone(), cfg.clone())
                    .unwrap_or_else(|e| panic!("{ctx}: read-only recovery: {e}"));
                let rep = ro.fsck().unwrap();
                assert!(rep.is_clean(), "{ctx}: fsck after read-only recovery: {:?}", rep.problems);
                let ro_chunks: Vec<_> = ro.list().iter().map(|c| (c.id, c.len, c.sealed)).collect();
                let st = Store::open(f, cfg.clone()).unwrap_or_else(|e| panic!("{ctx}: recovery: {e}"));
                let rw_chunks: Vec<_> = st.list().iter().map(|c| (c.id, c.len, c.sealed)).collect();
                assert_eq!(rw_chunks, ro_chunks, "{ctx}: read-only and read-write recovery differ");
                let mut f = check_recovered(st, &mut o, &ctx).into_device();
                f.power_cut(Survivors::All).unwrap();
                let mut st = Store::open(f, cfg.clone()).unwrap();
                o.check(&mut st, &format!("{ctx}, clean restart"));
                points += 1;
            }
        }
    }
    eprintln!("finishing seal, faults: {points} fault points");
    assert!(points >= 150, "{points} fault points");
}
