//! Loss of the cache device: the metadata area alone names exactly the dirty blocks.

use crate::common::*;
use rand::{Rng, SeedableRng};
use shingled_blockcache::{lost_blocks, Loss, Mode};
use shingled_stl::{BlockDevice, MemBlock};

const BACKING: u64 = 40;

#[test]
fn the_metadata_names_exactly_the_dirty_blocks() {
    for (mode, _) in Mode::ALL {
        for policy in ["lru", "sac:band_size=16KiB"] {
            let ctx = format!("{} {policy}", mode.name());
            let mut dev = mem_cache(&options(mode, policy, 8, 10), BACKING);
            let mut oracle = MemBlock::new(BACKING);
            let mut rng = rand_pcg::Pcg64::seed_from_u64(3);
            for step in 0..150u64 {
                let b = rng.random_range(0..BACKING);
                if rng.random_bool(0.7) {
                    let d = pattern(step + 1, b);
                    dev.write(b, &d).unwrap();
                    oracle.write(b, &d).unwrap();
                } else {
                    read_block(&mut dev, b);
                }
            }
            dev.flush().unwrap();
            let dirty = dev.dirty_blocks();
            let data_start = dev.layout().data_start;
            let (cache, mut backing) = dev.into_devices();
            // Only the metadata area is readable: the data slots are gone.
            let mut meta = Limited { inner: cache, limit: data_start };
            let loss = lost_blocks(&backing, Some(&mut meta)).unwrap();
            let Loss::Known { detached, ranges, blocks } = &loss else { panic!("{ctx}: {loss:?}") };
            assert!(!detached);
            let reported: Vec<u64> = ranges.iter().flat_map(|r| r.clone()).collect();
            assert_eq!(reported, dirty, "{ctx}: the report names the dirty blocks");
            assert_eq!(*blocks, dirty.len() as u64);
            assert_eq!(loss.backing_consistent(), dirty.is_empty());
            if mode == Mode::ReadOnly {
                assert!(dirty.is_empty(), "{ctx}: nothing is dirty in read-only mode");
            } else {
                assert!(!dirty.is_empty(), "{ctx}: expected dirty blocks");
            }
            for b in 0..BACKING {
                let same = read_block(&mut backing, b) == read_block(&mut oracle, b);
                if !reported.contains(&b) {
                    assert!(same, "{ctx}: block {b} not reported lost but stale on the backing device");
                }
            }
            assert!(
                reported.iter().any(|&b| read_block(&mut backing, b) != read_block(&mut oracle, b))
                    || reported.is_empty(),
                "{ctx}: some reported block should really be missing"
            );
        }
    }
}

#[test]
fn clean_detached_and_unknown() {
    let mut dev = mem_cache(&options(Mode::ReadWrite, "lru", 4, 6), BACKING);
    for b in 0..6 {
        dev.write(b, &pattern(b + 1, b)).unwrap();
    }
    dev.clean().unwrap();
    let data_start = dev.layout().data_start;
    let (cache, backing) = dev.into_devices();
    let mut meta = Limited { inner: cache, limit: data_start };
    let loss = lost_blocks(&backing, Some(&mut meta)).unwrap();
    assert_eq!(loss, Loss::Known { detached: false, ranges: vec![], blocks: 0 });
    assert!(loss.backing_consistent());
    assert_eq!(lost_blocks::<_, MemBlock>(&backing, None).unwrap(), Loss::Unknown);

    let dev = shingled_blockcache::CachedDevice::open(meta.inner, backing).unwrap();
    let (backing, mut cache) = dev.detach().unwrap();
    let loss = lost_blocks(&backing, Some(&mut cache)).unwrap();
    assert_eq!(loss, Loss::Known { detached: true, ranges: vec![], blocks: 0 });
    // A metadata area of another backing device is refused.
    assert!(lost_blocks(&MemBlock::new(BACKING + 1), Some(&mut cache)).is_err());
    let _ = backing.capacity_blocks();
}
