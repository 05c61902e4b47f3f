//! Model-based test: random reads, writes, flushes, discards, cleans and reopens in every mode
//! and with every policy, each read checked against a `MemBlock` oracle.

use crate::common::*;
use rand::{Rng, SeedableRng};
use shingled_blockcache::{CachedDevice, Mode};
use shingled_stl::{BlockDevice, MemBlock, BLOCK};

const BACKING: u64 = 48;

fn run(mode: Mode, policy: &str, seed: u64, ops: usize, cutoff: Option<u64>) {
    let ctx = format!("{} {policy} seed {seed}", mode.name());
    let mut opts = options(mode, policy, 5, 7);
    opts.setup.sequential_cutoff = cutoff;
    let mut dev = mem_cache(&opts, BACKING);
    let mut oracle = MemBlock::new(BACKING);
    let mut rng = rand_pcg::Pcg64::seed_from_u64(seed);
    let mut next_id = 1u64;
    let mut misses = 0; // over every session (counters restart at each open)
    for step in 0..ops {
        let ctx = format!("{ctx} step {step}");
        // a hot region of 12 blocks takes most requests, so that hits and evictions both happen
        let lba = if rng.random_bool(0.7) { rng.random_range(0..12) } else { rng.random_range(0..BACKING) };
        let n = rng.random_range(1..=4u64).min(BACKING - lba);
        match rng.random_range(0..100) {
            0..45 => {
                let ids: Vec<u64> = (0..n).map(|i| next_id + i).collect();
                next_id += n;
                let data = data_of(lba, &ids);
                dev.write(lba, &data).unwrap();
                oracle.write(lba, &data).unwrap();
            }
            45..85 => {
                let mut got = vec![0u8; n as usize * BLOCK];
                let mut want = got.clone();
                dev.read(lba, &mut got).unwrap();
                oracle.read(lba, &mut want).unwrap();
                assert!(got == want, "{ctx}: read {lba}+{n} differs from the oracle");
            }
            85..92 => dev.flush().unwrap(),
            92..95 => {
                dev.discard(lba, n).unwrap();
                oracle.discard(lba, n).unwrap();
            }
            95..97 => {
                misses += dev.stats().misses();
                let (c, b) = dev.close().unwrap();
                dev = CachedDevice::open(c, b).unwrap();
            }
            97..98 => {
                dev.clean().unwrap();
                assert_eq!(dev.stats().dirty_blocks, 0, "{ctx}");
            }
            _ => {
                for b in 0..BACKING {
                    let want = read_block(&mut oracle, b);
                    assert!(read_block(&mut dev, b) == want, "{ctx}: block {b} differs");
                }
            }
        }
        let s = dev.stats();
        assert!(s.cached_blocks <= 5 && s.dirty_blocks <= s.cached_blocks, "{ctx}: {s:?}");
        assert_eq!(dev.dirty_blocks().len() as u64, s.dirty_blocks, "{ctx}");
    }
    let s = dev.stats();
    assert!(misses + s.misses() > 0, "{ctx}: {s:?}");
    let (mut backing, _) = dev.detach().unwrap();
    for b in 0..BACKING {
        assert!(
            read_block(&mut backing, b) == read_block(&mut oracle, b),
            "{ctx}: detached block {b} differs"
        );
    }
}

#[test]
fn every_mode_and_policy_reads_what_was_written() {
    for (mode, _) in Mode::ALL {
        for (i, policy) in POLICIES.iter().enumerate() {
            for seed in 0..2 {
                run(mode, policy, seed * 100 + i as u64, 300, None);
            }
        }
    }
}

#[test]
fn with_sequential_bypass() {
    for (mode, _) in Mode::ALL {
        for policy in ["lru", "pore:scheme=bl,zone_size=16KiB", "sac:band_size=16KiB"] {
            run(mode, policy, 7, 300, Some(3 * 4096));
        }
    }
}
