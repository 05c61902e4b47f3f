//! Model-based test (sled-style): random operations with GC and restarts (power cuts that drop
//! every unflushed write) against a `BTreeMap` of chunks; every result and every read must
//! match the model.

use proptest::prelude::*;
use shingled_store::{ChunkId, Placement, Store, StoreConfig, StoreError, StreamType};
use shingled_zoned::{Dialect, FaultPlan, Faulty, MemZoned, Survivors, ZonedConfig};
use std::collections::BTreeMap;

use crate::common::bytes;

#[derive(Clone, Debug)]
enum Op {
    Create(u8, u8),
    Append(u8, usize, u64),
    Seal(u8),
    Delete(u8),
    Read(u8, u16, u16),
    Sync,
    Gc,
    /// A power cut dropping every unflushed write, then recovery.
    Restart,
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        2 => (0u8..6, 0u8..4).prop_map(|(i, s)| Op::Create(i, s)),
        5 => (0u8..6, 1usize..20_000, any::<u64>()).prop_map(|(i, n, s)| Op::Append(i, n, s)),
        1 => (0u8..6).prop_map(Op::Seal),
        1 => (0u8..6).prop_map(Op::Delete),
        3 => (0u8..6, any::<u16>(), any::<u16>()).prop_map(|(i, a, b)| Op::Read(i, a, b)),
        1 => Just(Op::Sync),
        1 => Just(Op::Gc),
        1 => Just(Op::Restart),
    ]
}

#[derive(Clone, Debug, Default)]
struct M {
    data: Vec<u8>,
    sealed: bool,
}

fn run(ops: Vec<Op>, cfg: StoreConfig) -> Result<(), TestCaseError> {
    let dev = MemZoned::new(&ZonedConfig::small(12, 128, Dialect::Zbc)).unwrap();
    let dev = Faulty::new(dev, FaultPlan::default()).unwrap();
    let mut st = Store::format(dev, cfg.clone()).unwrap();
    let restart = |st: Store<Faulty<MemZoned>>| {
        let mut f = st.into_device();
        f.power_cut(Survivors::None).unwrap();
        Store::open(f, cfg.clone()).unwrap()
    };
    let mut model: BTreeMap<ChunkId, M> = BTreeMap::new();
    let limit = 128 * 1024;
    let mut nospace = 0;
    for (step, op) in ops.into_iter().enumerate() {
        let id_of = |i: u8| ChunkId::from_u128(i as u128);
        match op {
            Op::Create(i, s) => {
                let r = st.create(id_of(i), StreamType(s));
                if let std::collections::btree_map::Entry::Vacant(e) = model.entry(id_of(i)) {
                    r.unwrap();
                    e.insert(M::default());
                } else {
                    prop_assert!(matches!(r, Err(StoreError::ChunkExists(_))), "step {step}: {r:?}");
                }
            }
            Op::Append(i, n, s) => {
                let d = bytes(s, n);
                let r = st.append(id_of(i), &d);
                match model.get_mut(&id_of(i)) {
                    None => prop_assert!(matches!(r, Err(StoreError::NoSuchChunk(_)))),
                    Some(m) if m.sealed => prop_assert!(matches!(r, Err(StoreError::Sealed(_)))),
                    Some(m) if m.data.len() + n > limit => {
                        prop_assert!(matches!(r, Err(StoreError::ChunkTooLarge { .. })), "step {step}: {r:?}")
                    }
                    Some(m) => match r {
                        Ok(()) => m.data.extend_from_slice(&d),
                        Err(StoreError::NoSpace(_)) => {
                            // Out of space part-way: whole records may have gone in.
                            let now = st.chunk(id_of(i)).unwrap().len as usize;
                            m.data.extend_from_slice(&d[..now - m.data.len()]);
                            nospace += 1;
                        }
                        Err(e) => prop_assert!(false, "step {}: {}", step, e),
                    },
                }
            }
            Op::Seal(i) => {
                let r = st.seal(id_of(i));
                match model.get_mut(&id_of(i)) {
                    None => prop_assert!(matches!(r, Err(StoreError::NoSuchChunk(_)))),
                    Some(m) => {
                        r.unwrap();
                        m.sealed = true;
                    }
                }
            }
            Op::Delete(i) => {
                let r = st.delete(id_of(i));
                match model.remove(&id_of(i)) {
                    None => prop_assert!(matches!(r, Err(StoreError::NoSuchChunk(_)))),
                    Some(_) => r.unwrap(),
                }
            }
            Op::Read(i, a, b) => match model.get(&id_of(i)) {
                None => prop_assert!(matches!(st.read(id_of(i), 0, 0), Err(StoreError::NoSuchChunk(_)))),
                Some(m) => {
                    let len = m.data.len();
                    let off = if len == 0 { 0 } else { a as usize * len / 65536 };
                    let n = (b as usize).min(len - off);
                    let got = st.read(id_of(i), off as u64, n as u64).unwrap();
                    prop_assert!(got == m.data[off..off + n], "step {step}: read {off}+{n} differs");
                }
            },
            Op::Sync => st.sync().unwrap(),
            Op::Gc => {
                st.gc().unwrap();
            }
            Op::Restart => st = restart(st),
        }
        let listed: Vec<(ChunkId, u64, bool)> = st.list().iter().map(|c| (c.id, c.len, c.sealed)).collect();
        let want: Vec<(ChunkId, u64, bool)> =
            model.iter().map(|(k, m)| (*k, m.data.len() as u64, m.sealed)).collect();
        prop_assert_eq!(listed, want, "step {}", step);
    }
    let _ = nospace;
    // Everything, once more after a final restart.
    let mut st = restart(st);
    for (id, m) in &model {
        prop_assert!(st.read(*id, 0, m.data.len() as u64).unwrap() == m.data);
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn store_matches_a_btreemap_across_restarts(ops in proptest::collection::vec(op(), 1..80)) {
        run(ops, StoreConfig::small())?;
    }

    #[test]
    fn one_zone_placement_matches_too(ops in proptest::collection::vec(op(), 1..40)) {
        run(ops, StoreConfig { placement: Placement::OneZone, ..StoreConfig::small() })?;
    }
}
