//! Invariants of whole replays on random small traces, for every policy and mode.

use super::*;
use proptest::prelude::*;
use shingled_core::{BlockNo, Nanos};
use shingled_device::DriveStats;
use std::collections::BTreeMap;
use std::sync::Mutex;

/// A drive that forwards to another and logs every block written to it.
struct Recording {
    inner: Box<dyn Drive>,
    log: Arc<Mutex<Vec<BlockNo>>>,
}

impl Drive for Recording {
    fn read(&mut self, now: Nanos, block: BlockNo, n: u32) -> Nanos {
        self.inner.read(now, block, n)
    }
    fn write(&mut self, now: Nanos, block: BlockNo, n: u32) -> Nanos {
        self.log.lock().unwrap().extend(block..block + n as u64);
        self.inner.write(now, block, n)
    }
    fn stats(&self) -> DriveStats {
        self.inner.stats()
    }
    fn kind(&self) -> &'static str {
        self.inner.kind()
    }
    fn band_map(&self) -> Option<&shingled_core::BandMap> {
        self.inner.band_map()
    }
}

pub(crate) fn arb_trace() -> impl Strategy<Value = Vec<Request>> {
    proptest::collection::vec((any::<bool>(), 0u64..96, 1u32..4), 1..250).prop_map(|v| {
        v.into_iter()
            .enumerate()
            .map(|(i, (w, b, n))| Request {
                time_ns: i as u64,
                volume: 0,
                op: if w { Op::Write } else { Op::Read },
                offset: b * 4096,
                len: n * 4096,
            })
            .collect()
    })
}

pub(crate) fn arb_mode() -> impl Strategy<Value = Mode> {
    prop_oneof![Just(Mode::ReadWrite), Just(Mode::WriteOnly), Just(Mode::ReadOnly), Just(Mode::WriteCache)]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    /// No dirty data is lost: after the replay, the newest host write of every block is either
    /// dirty in the cache or was written to the drive after it. Counts add up and the clock is
    /// the sum of the levels.
    #[test]
    fn nothing_lost_and_counts_add_up(trace in arb_trace(), mode in arb_mode(), cap in 1u32..24, pb in 1u64..16) {
        for &policy in PolicyConfig::NAMES {
            let log = Arc::new(Mutex::new(Vec::new()));
            let drive = Box::new(Recording { inner: tiny_smr(pb, 4, PbFlavour::AppendOnly, PbFree::Immediate), log: log.clone() });
            let mut e = engine(mode, policy, cap, drive);
            // block → (request index of the newest host write, drive-written since?)
            let mut last: BTreeMap<BlockNo, bool> = BTreeMap::new();
            for r in &trace {
                e.process(r);
                // Host writes of this request come before any write-back it causes of the same
                // block; a write-back of older data that precedes them leaves the block dirty in
                // the cache, which the final check accepts.
                if r.op == Op::Write {
                    for b in r.blocks() { last.insert(b, false); }
                }
                for b in log.lock().unwrap().drain(..) {
                    if let Some(v) = last.get_mut(&b) { *v = true; }
                }
            }
            let cache = e.cache().unwrap();
            for (b, on_drive) in &last {
                let dirty = cache.peek(*b).map(|m| m.dirty).unwrap_or(false);
                prop_assert!(dirty || *on_drive, "{policy}/{mode:?}: block {b} lost");
            }
            let c = e.counters();
            prop_assert!(c.read_hits <= c.blocks_read);
            prop_assert!(c.write_hits <= c.blocks_written);
            prop_assert!(cache.table().len() <= cap);
            prop_assert_eq!(c.total_time(), e.clock());
            prop_assert_eq!(c.requests + c.skipped_requests, trace.len() as u64);
            // every dirty eviction was written to the drive
            if mode != Mode::ReadOnly {
                prop_assert_eq!(c.drive_blocks_written, c.dirty_evictions);
            }
            // the drive's own view matches the host's
            prop_assert_eq!(c.drive.blocks_written, c.drive_blocks_written);
            prop_assert_eq!(c.drive.blocks_read, c.drive_blocks_read);
            prop_assert!(c.drive.pb_blocks_cleaned <= c.drive.pb_writes);
        }
    }

    /// The same configuration and trace always give the same counters.
    #[test]
    fn deterministic(trace in arb_trace(), mode in arb_mode()) {
        let run = || {
            let mut e = engine(mode, "lru", 8, tiny_smr(4, 4, PbFlavour::InPlace, PbFree::AtHead));
            for r in &trace { e.process(r); }
            e.counters()
        };
        prop_assert_eq!(run(), run());
    }
}

/// Looking requests up ahead (`Engine::prefetch_far`, `Engine::prefetch_near`) and the next
/// victim's write-back hint to the drive (caches of `LOOK_AHEAD_MIN_SLOTS` slots and more)
/// change nothing: the same requests give the same counters, drive statistics included.
#[test]
fn warming_lookups_change_no_count() {
    use shingled_device::{PbFlavour, PbFree};
    let cap = shingled_cache::LOOK_AHEAD_MIN_SLOTS;
    // Three times the capacity's blocks, so that the cache evicts and its victims' write-backs
    // fill and clean the persistent buffer.
    let ops: Vec<(char, u64)> =
        (0..60_000u64).map(|i| (if i % 3 == 0 { 'r' } else { 'w' }, (i * 7919) % (3 * cap as u64))).collect();
    let rs = crate::reqs(&ops);
    let run = |warm: bool| {
        let mut e = crate::engine(
            Mode::ReadWrite,
            "lru",
            cap,
            // A PB of 8192 slots: its head look-ahead runs too.
            crate::tiny_smr(8192, 16, PbFlavour::AppendOnly, PbFree::Immediate),
        );
        for (i, r) in rs.iter().enumerate() {
            if warm {
                if let Some(f) = rs.get(i + 8) {
                    e.prefetch_far(f);
                }
                if let Some(n) = rs.get(i + 3) {
                    e.prefetch_near(n);
                }
            }
            e.process(r);
        }
        e.counters()
    };
    let (with, without) = (run(true), run(false));
    assert!(without.dirty_evictions > 10_000 && without.drive.rmws > 0, "{without:?}");
    assert_eq!(with, without);
}
