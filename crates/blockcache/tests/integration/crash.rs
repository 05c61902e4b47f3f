//! Power cuts at every operation (write, flush, discard) of either device.
//!
//! A workload runs once over two [`CutDev`]s sharing a power supply. At every device operation
//! a hook takes both devices' state as a power cut would leave it — the unflushed writes all
//! dropped, all kept, or kept block by block at random (any version written since the last
//! flush, so reordered and torn writes too) — recovers the cache from it and checks every block:
//! it must read the value it had at the last completed host flush, or one written after it; the
//! value must be stable (after the cleaner and detach the backing device alone holds the same);
//! and the blocks the metadata does not name as dirty must be intact on the backing device alone
//! (cache-device loss after the cut).

use crate::common::*;
use rand::{Rng, SeedableRng};
use shingled_blockcache::{lost_blocks, CacheOptions, CachedDevice, Loss, Mode};
use shingled_stl::BlockDevice;
use std::cell::{Cell, RefCell};
use std::rc::Rc;

const BACKING: u64 = 20;

/// What each block may read after a power cut.
struct Oracle {
    flushed: Vec<u64>,
    since: Vec<Vec<u64>>,
    current: Vec<u64>,
}

impl Oracle {
    fn new() -> Oracle {
        let n = BACKING as usize;
        Oracle { flushed: vec![0; n], since: vec![Vec::new(); n], current: vec![0; n] }
    }
    fn allowed(&self, b: u64, id: u64) -> bool {
        self.flushed[b as usize] == id || self.since[b as usize].contains(&id)
    }
    fn write(&mut self, b: u64, id: u64) {
        self.since[b as usize].push(id);
        self.current[b as usize] = id;
    }
    fn flushed(&mut self) {
        self.flushed.clone_from(&self.current);
        self.since.iter_mut().for_each(Vec::clear);
    }
}

/// Opens the cache over `imgs`, reads every block (each checked by `check`), then detaches and
/// checks that the backing device alone holds the same values (no clean copy differed from it).
/// Returns the values read.
fn recover_and_read(
    imgs: [Store; 2],
    caps: [u64; 2],
    hook: Option<Hook>,
    ctx: &str,
    check: impl Fn(u64, u64),
) -> Vec<u64> {
    let (mut c, mut b, w) = CutDev::pair(imgs.clone(), caps);
    if let Ok(Loss::Known { detached: true, .. }) = lost_blocks(&b, Some(&mut c)) {
        // cut during a detach, after the superblock said detached: the backing device alone
        // holds every block
        return (0..BACKING)
            .map(|blk| {
                let id = read_id(&mut b, blk, ctx);
                check(blk, id);
                id
            })
            .collect();
    }
    w.borrow_mut().hook = hook;
    let mut dev = CachedDevice::open(c, b).unwrap_or_else(|e| panic!("{ctx}: open after the cut: {e}"));
    let mut seen = Vec::with_capacity(BACKING as usize);
    for blk in 0..BACKING {
        let id = read_id(&mut dev, blk, ctx);
        check(blk, id);
        seen.push(id);
    }
    let (mut backing, _) = dev.detach().unwrap_or_else(|e| panic!("{ctx}: detach: {e}"));
    for blk in 0..BACKING {
        assert_eq!(
            read_id(&mut backing, blk, ctx),
            seen[blk as usize],
            "{ctx}: block {blk} changed by the cleaner"
        );
    }
    w.borrow_mut().hook = None;
    seen
}

/// Recovers from `stores` cut as `cut` and checks every block; with `nested`, recovers a second
/// time with a power cut at each operation of that recovery too (every value recovered the
/// first time must then read again: recovery and the reads after it lose nothing).
fn verify(
    stores: &[Store; 2],
    cut: Cut,
    caps: [u64; 2],
    data_start: u64,
    o: &Oracle,
    ctx: &str,
    nested: bool,
) -> u64 {
    let imgs = [stores[0].cut(cut), stores[1].cut(cut)];
    let ctx = format!("{ctx} {cut:?}");
    // Cache-device loss right after the cut: the metadata alone says what the backing device
    // lacks; every other block must be intact there.
    let (c, mut b, _w) = CutDev::pair(imgs.clone(), caps);
    let mut meta = Limited { inner: c, limit: data_start };
    let loss = lost_blocks(&b, Some(&mut meta)).unwrap_or_else(|e| panic!("{ctx}: loss report: {e}"));
    let Loss::Known { ranges, .. } = loss else { panic!("{ctx}: metadata given, loss unknown") };
    for blk in 0..BACKING {
        if !ranges.iter().any(|r| r.contains(&blk)) {
            let id = read_id(&mut b, blk, &ctx);
            assert!(
                o.allowed(blk, id),
                "{ctx}: cache lost: block {blk} not reported dirty reads {id} on the backing device; allowed {} or {:?}",
                o.flushed[blk as usize],
                o.since[blk as usize]
            );
        }
    }
    // Recovery.
    let seen = recover_and_read(imgs.clone(), caps, None, &ctx, |blk, id| {
        assert!(
            o.allowed(blk, id),
            "{ctx}: block {blk} reads {id}; allowed: {} (flushed) or {:?}",
            o.flushed[blk as usize],
            o.since[blk as usize]
        )
    });
    if !nested {
        return 1;
    }
    let count = Rc::new(Cell::new(1u64));
    let hook: Hook = {
        let (seen, ctx, count) = (seen.clone(), ctx.clone(), count.clone());
        Rc::new(move |stores: &[Store; 2], ops: u64| {
            for cut in [Cut::DropAll, Cut::Random(ops)] {
                let ctx = format!("{ctx}, then during recovery at device op {ops} {cut:?}");
                let imgs = [stores[0].cut(cut), stores[1].cut(cut)];
                recover_and_read(imgs, caps, None, &ctx, |blk, id| {
                    assert_eq!(id, seen[blk as usize], "{ctx}: block {blk} lost its recovered value")
                });
                count.set(count.get() + 1);
            }
        })
    };
    recover_and_read(imgs, caps, Some(hook), &ctx, |blk, id| {
        assert_eq!(id, seen[blk as usize], "{ctx}: recovery is not deterministic")
    });
    count.get()
}

/// One workload with a check at every device operation; returns (crash points, recoveries).
fn run(opts: &CacheOptions, seed: u64, host_ops: usize) -> (u64, u64) {
    let slots = opts.slots.unwrap();
    let caps = [cache_blocks_for(slots), BACKING];
    let data_start = 1 + (slots as u64).div_ceil(127);
    let ctx = format!("{} {} seed {seed}", opts.setup.mode.name(), opts.setup.policy.name());
    let (c, b, world) = CutDev::pair(Default::default(), caps);
    let mut dev = CachedDevice::format(c, b, opts).unwrap();
    let oracle = Rc::new(RefCell::new(Oracle::new()));
    let points = Rc::new(Cell::new(0u64));
    let recoveries = Rc::new(Cell::new(0u64));
    let step = Rc::new(Cell::new(0usize));
    {
        let (oracle, points, recoveries, step, ctx) =
            (oracle.clone(), points.clone(), recoveries.clone(), step.clone(), ctx.clone());
        let hook: Hook = Rc::new(move |stores: &[Store; 2], ops: u64| {
            points.set(points.get() + 1);
            let o = oracle.borrow();
            let ctx = format!("{ctx}: host op {} device op {ops}", step.get());
            let unflushed = stores[0].unflushed() + stores[1].unflushed();
            let cuts: &[Cut] = if unflushed == 0 {
                &[Cut::DropAll]
            } else {
                &[Cut::DropAll, Cut::KeepAll, Cut::Random(seed << 32 | ops)]
            };
            for &cut in cuts {
                // every 16th crash point: cuts during the recovery from it too
                let nested = matches!(cut, Cut::Random(_)) && ops.is_multiple_of(16);
                let n = verify(stores, cut, caps, data_start, &o, &ctx, nested);
                recoveries.set(recoveries.get() + n);
            }
        });
        world.borrow_mut().hook = Some(hook);
    }
    let mut rng = rand_pcg::Pcg64::seed_from_u64(seed);
    let mut next_id = 1u64;
    for i in 0..host_ops {
        step.set(i);
        let lba = if rng.random_bool(0.75) { rng.random_range(0..8) } else { rng.random_range(0..BACKING) };
        let n = rng.random_range(1..=3u64).min(BACKING - lba);
        match rng.random_range(0..100) {
            0..50 => {
                let ids: Vec<u64> = (0..n).map(|k| next_id + k).collect();
                next_id += n;
                for (k, &id) in ids.iter().enumerate() {
                    oracle.borrow_mut().write(lba + k as u64, id);
                }
                dev.write(lba, &data_of(lba, &ids)).unwrap();
            }
            50..78 => {
                for blk in lba..lba + n {
                    let id = read_id(&mut dev, blk, &ctx);
                    assert_eq!(
                        id,
                        oracle.borrow().current[blk as usize],
                        "{ctx}: host op {i}: read of block {blk}"
                    );
                }
            }
            78..93 => {
                dev.flush().unwrap();
                oracle.borrow_mut().flushed();
            }
            93..97 => {
                for blk in lba..lba + n {
                    oracle.borrow_mut().write(blk, 0);
                }
                dev.discard(lba, n).unwrap();
            }
            _ => {
                dev.clean().unwrap();
            }
        }
    }
    world.borrow_mut().hook = None;
    (points.get(), recoveries.get())
}

fn sweep(seeds: std::ops::Range<u64>, host_ops: usize) -> (u64, u64) {
    let mut total = (0, 0);
    for (mode, _) in Mode::ALL {
        for (policy, cap, slots) in [
            ("lru", 3, 4),
            ("pore:scheme=bl,zone_size=16KiB", 3, 5),
            ("sac:band_size=16KiB", 4, 5),
            ("arc", 3, 4),
        ] {
            for seed in seeds.clone() {
                let opts = options(mode, policy, cap, slots);
                let (p, r) = run(&opts, seed, host_ops);
                total.0 += p;
                total.1 += r;
            }
        }
    }
    total
}

#[test]
fn power_cut_at_every_device_operation() {
    let (points, recoveries) = sweep(0..2, 60);
    eprintln!("block cache: {points} crash points, {recoveries} recoveries checked");
    assert!(points >= 3000, "only {points} crash points");
}

#[test]
#[ignore = "long: more seeds and longer workloads (run with --ignored)"]
fn power_cut_sweep_long() {
    let (points, recoveries) = sweep(2..10, 200);
    eprintln!("block cache, long: {points} crash points, {recoveries} recoveries checked");
}
