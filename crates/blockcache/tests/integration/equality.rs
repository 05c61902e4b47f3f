//! The cached device decides exactly as the simulator: the same block requests through it and
//! through a second `Controller` with a counting `Io` (what the replay engine counts), and
//! through `shingled_sim::simulate` on a committed trace, give the same hits, evictions,
//! write-backs and I/O counts.

use crate::common::*;
use rand::{Rng, SeedableRng};
use shingled_blockcache::{CacheOptions, CacheSetup, CachedDevice, Mode, Stats};
use shingled_cache::{Cache, PolicyContext};
use shingled_core::{BandMap, BlockNo, ByteSize};
use shingled_sim::controller::{Controller, Io};
use shingled_stl::{BlockDevice, MemBlock, BLOCK};
use std::sync::Arc;

/// What the replay engine counts, without the timing.
#[derive(Debug, Default, PartialEq, Eq)]
struct Counts {
    read_hits: u64,
    write_hits: u64,
    clean_evictions: u64,
    dirty_evictions: u64,
    ssd_reads: u64,
    ssd_writes: u64,
    drive_reads: u64,
    drive_writes: u64,
}

impl Io for Counts {
    fn ssd_read(&mut self, _: BlockNo) {
        self.ssd_reads += 1;
    }
    fn ssd_write(&mut self, _: BlockNo) {
        self.ssd_writes += 1;
    }
    fn drive_read(&mut self, _: BlockNo) {
        self.drive_reads += 1;
    }
    fn drive_write(&mut self, _: BlockNo) {
        self.drive_writes += 1;
    }
    fn read_hit(&mut self) {
        self.read_hits += 1;
    }
    fn write_hit(&mut self) {
        self.write_hits += 1;
    }
    fn evicted(&mut self, dirty: bool) {
        if dirty {
            self.dirty_evictions += 1;
        } else {
            self.clean_evictions += 1;
        }
    }
}

/// The device's counters as the engine would count them (write-only mode: reads are not part
/// of the workload, so slot and backing reads are left out).
fn as_counts(s: &Stats, mode: Mode) -> Counts {
    let reads = mode != Mode::WriteOnly;
    Counts {
        read_hits: s.read_hits,
        write_hits: s.write_hits,
        clean_evictions: s.clean_evictions,
        dirty_evictions: s.dirty_evictions,
        ssd_reads: if reads { s.cache_blocks_read - s.cleaner_writebacks } else { 0 },
        ssd_writes: s.cache_blocks_written,
        drive_reads: if reads { s.backing_blocks_read } else { 0 },
        // (the cleaner's write-backs are not the controller's)
        drive_writes: s.backing_blocks_written - s.cleaner_writebacks,
    }
}

fn counting_cache(setup: &CacheSetup, capacity: u32, backing_blocks: u64) -> Cache {
    let bands = setup
        .bands
        .as_ref()
        .map(|b| Arc::new(BandMap::build(b, ByteSize(backing_blocks * BLOCK as u64)).unwrap()));
    let ctx = PolicyContext {
        block_span: None,
        capacity_blocks: capacity,
        bands,
        pb_blocks: setup.pb_blocks,
        seed: setup.seed,
        costs: setup.costs,
    };
    Cache::new(capacity, setup.policy.build(&ctx).unwrap())
}

#[test]
fn same_decisions_as_a_counting_controller() {
    const BACKING: u64 = 64;
    for (mode, _) in Mode::ALL {
        for (i, policy) in POLICIES.iter().enumerate() {
            let opts = options(mode, policy, 6, 9);
            let ctx = format!("{} {policy}", mode.name());
            let mut dev = mem_cache(&opts, BACKING);
            let mut ctl = Controller::new(mode, Some(counting_cache(&opts.setup, 6, BACKING)));
            let mut counts = Counts::default();
            let mut oracle = MemBlock::new(BACKING);
            let mut rng = rand_pcg::Pcg64::seed_from_u64(i as u64);
            for step in 0..400 {
                let lba =
                    if rng.random_bool(0.6) { rng.random_range(0..16) } else { rng.random_range(0..BACKING) };
                let n = rng.random_range(1..=4u64).min(BACKING - lba);
                let write = rng.random_bool(0.55);
                if rng.random_ratio(1, 10) {
                    dev.flush().unwrap(); // commits: no effect on the decisions
                }
                if rng.random_ratio(1, 40) {
                    // the cleaner marks the written-back blocks clean in the live policy: the
                    // decisions go on as a controller's whose cache was told the same
                    let dirty = dev.dirty_blocks();
                    assert_eq!(dev.clean().unwrap(), dirty.len() as u64, "{ctx}");
                    let meta = ctl.cache_mut().unwrap();
                    for b in dirty {
                        meta.mark_clean(b);
                    }
                }
                if write {
                    let data = data_of(lba, &(0..n).map(|k| step * 8 + k + 1).collect::<Vec<_>>());
                    dev.write(lba, &data).unwrap();
                    oracle.write(lba, &data).unwrap();
                } else {
                    let mut got = vec![0u8; n as usize * BLOCK];
                    dev.read(lba, &mut got).unwrap();
                    assert!(got == read_range(&mut oracle, lba, n), "{ctx} step {step}: read differs");
                }
                if !ctl.skips(write) {
                    for b in lba..lba + n {
                        ctl.block(write, b, &mut counts);
                    }
                }
            }
            if mode == Mode::WriteOnly {
                // the engine drops read requests; the device serves them outside the policy
                (counts.ssd_reads, counts.drive_reads) = (0, 0);
            }
            assert_eq!(as_counts(&dev.stats(), mode), counts, "{ctx}");
            assert_eq!(dev.stats().dirty_blocks, ctl.cache().unwrap().table().dirty_len() as u64, "{ctx}");
            assert!(counts.clean_evictions + counts.dirty_evictions > 0, "{ctx}: no eviction");
        }
    }
}

fn read_range(d: &mut dyn BlockDevice, lba: u64, n: u64) -> Vec<u8> {
    let mut v = vec![0u8; n as usize * BLOCK];
    d.read(lba, &mut v).unwrap();
    v
}

fn golden(name: &str) -> String {
    format!("{}/../../tests/data/golden/{name}", env!("CARGO_MANIFEST_DIR"))
}

/// `shingled_sim::simulate` on the committed `small.csv` trace (400 requests over 1 MiB, 16 KiB
/// bands, 8-block PB), as the golden policy test configures it, against the same trace driven
/// through the cached device with real bytes.
#[test]
fn same_counts_as_simulate_on_a_trace() {
    use shingled_trace::TraceReader;
    let text = std::fs::read_to_string(golden("tiny.toml")).unwrap();
    let mut base = shingled_sim::SimConfig::from_toml(&text).unwrap();
    base.trace.path = golden("small.csv");
    if let shingled_device::DriveConfig::DmSmr(d) = &mut base.drive {
        d.pb_size = shingled_core::SizeSpec::Absolute(ByteSize(8 * 4096));
    }
    let backing_blocks = base.drive.capacity().unwrap().0 / BLOCK as u64;
    let mut runs = 0;
    for name in crate::common::online_policies() {
        let spec = match name {
            "pore" => "pore:zone_size=16KiB".to_string(),
            "sac" | "most-cdc" => format!("{name}:band_size=16KiB"),
            _ => name.to_string(),
        };
        for (mode, _) in Mode::ALL {
            for blocks in [8u64, 24] {
                let mut cfg = shingled_sim::scheme_config(&base, &spec).unwrap();
                cfg.mode = mode;
                let c = cfg.cache.as_mut().unwrap();
                c.size = shingled_core::SizeSpec::Absolute(ByteSize(blocks * 4096));
                c.costs = shingled_sim::CostModel::Paper;
                let ctx = format!("{spec} {} {blocks} blocks", mode.name());
                let report = shingled_sim::simulate(&cfg).unwrap();
                let stats = shingled_sim::measure(&cfg.trace, &cfg.drive.bands_or_default()).unwrap();
                let sizing = shingled_sim::sizing(&cfg, &stats).unwrap();
                // The device, set up as the simulator sets up its cache.
                let setup = CacheSetup {
                    mode,
                    policy: cfg.cache.as_ref().unwrap().policy.clone(),
                    bands: Some(cfg.drive.bands_or_default()),
                    pb_blocks: sizing.pb_blocks,
                    seed: 0,
                    costs: shingled_cache::SmrCosts::PAPER,
                    sequential_cutoff: None,
                    backing_path: None,
                    backing_id: None,
                };
                let capacity = sizing.cache_blocks as u32;
                let slots = capacity + 2;
                let opts =
                    CacheOptions { setup, slots: Some(slots), capacity: Some(capacity), reserve: None };
                let mut dev = CachedDevice::format(
                    MemBlock::new(cache_blocks_for(slots)),
                    MemBlock::new(backing_blocks),
                    &opts,
                )
                .unwrap();
                let mut oracle = MemBlock::new(backing_blocks);
                let mut reader = shingled_sim::open_trace(&cfg.trace).unwrap();
                let mut id = 1u64;
                while let Some(req) = reader.next_request().unwrap() {
                    let blocks = req.blocks();
                    let (lba, n) = (blocks.start, blocks.end - blocks.start);
                    if n == 0 {
                        continue;
                    }
                    if req.op.is_write() {
                        let data = data_of(lba, &(id..id + n).collect::<Vec<_>>());
                        id += n;
                        dev.write(lba, &data).unwrap();
                        oracle.write(lba, &data).unwrap();
                    } else {
                        let mut got = vec![0u8; n as usize * BLOCK];
                        dev.read(lba, &mut got).unwrap();
                        assert!(got == read_range(&mut oracle, lba, n), "{ctx}: read at {lba} differs");
                    }
                }
                let c = &report.total.counters;
                let want = Counts {
                    read_hits: c.read_hits,
                    write_hits: c.write_hits,
                    clean_evictions: c.clean_evictions,
                    dirty_evictions: c.dirty_evictions,
                    ssd_reads: if mode == Mode::WriteOnly { 0 } else { c.ssd_blocks_read },
                    // (write-only: victims' slot reads are left out too, with the reads the
                    // device serves outside the policy)
                    ssd_writes: c.ssd_blocks_written,
                    drive_reads: if mode == Mode::WriteOnly { 0 } else { c.drive_blocks_read },
                    drive_writes: c.drive_blocks_written,
                };
                let s = dev.stats();
                assert_eq!(as_counts(&s, mode), want, "{ctx}");
                assert_eq!(s.dirty_blocks, report.dirty_left, "{ctx}");
                runs += 1;
            }
        }
    }
    assert_eq!(runs, crate::common::online_policies().len() * 8);
}
