//! The DM-SMR model against a slow, obviously right reference: a `Vec` FIFO that scans.
//!
//! The reference drops invalid entries eagerly (at-head: leading ones after every operation, as
//! SAC's `invalidDespInFIFO` does; immediate: all of them), while the model reclaims them lazily.
//! Identical counters on random operation sequences therefore also check that lazy reclamation
//! makes the same cleaning decisions.

use crate::common::ALL_MODES;
use proptest::prelude::*;
use shingled_core::{BandConfig, BandMap, ByteSize, Nanos, SizeSpec, BLOCK_SIZE};
use shingled_device::{BuildContext, DmSmrConfig, Drive, PbFlavour, PbFree};
use std::collections::HashMap;

#[derive(Clone, Copy, Debug)]
struct Entry {
    block: u64,
    valid: bool,
    version: u64,
}

#[derive(Default, Debug, PartialEq)]
struct Counts {
    rmws: u64,
    cleaned: u64,
    band_bytes: u64,
    in_place: u64,
    pb_writes: u64,
    pb_reads: u64,
}

struct Reference {
    cap: usize,
    flavour: PbFlavour,
    free: PbFree,
    bands: BandMap,
    fifo: Vec<Entry>,
    /// Version of each block as last merged into its band.
    band_content: HashMap<u64, u64>,
    /// Latest version written of each block.
    latest: HashMap<u64, u64>,
    counts: Counts,
}

impl Reference {
    fn new(cap: usize, flavour: PbFlavour, free: PbFree, bands: BandMap) -> Self {
        Reference {
            cap,
            flavour,
            free,
            bands,
            fifo: Vec::new(),
            band_content: HashMap::new(),
            latest: HashMap::new(),
            counts: Counts::default(),
        }
    }

    fn find(&self, block: u64) -> Option<usize> {
        self.fifo.iter().position(|e| e.valid && e.block == block)
    }

    fn occupancy(&self) -> usize {
        match self.free {
            PbFree::AtHead => self.fifo.len(),
            PbFree::Immediate => self.fifo.iter().filter(|e| e.valid).count(),
        }
    }

    fn tidy(&mut self) {
        match self.free {
            PbFree::Immediate => self.fifo.retain(|e| e.valid),
            PbFree::AtHead => {
                let lead = self.fifo.iter().take_while(|e| !e.valid).count();
                self.fifo.drain(..lead);
            }
        }
    }

    fn make_room(&mut self) {
        while self.occupancy() >= self.cap {
            assert!(self.fifo[0].valid, "tidy keeps a valid head");
            let band = self.bands.band_of(self.fifo[0].block);
            let mut merged = 0;
            for e in self.fifo.iter_mut().filter(|e| e.valid && self.bands.band_of(e.block) == band) {
                e.valid = false;
                merged += 1;
                self.band_content.insert(e.block, e.version);
            }
            self.counts.rmws += 1;
            self.counts.cleaned += merged;
            self.counts.band_bytes += self.bands.band_bytes(band);
            self.tidy();
        }
    }

    fn write(&mut self, block: u64) {
        let version = self.latest.get(&block).map_or(1, |v| v + 1);
        self.latest.insert(block, version);
        match (self.find(block), self.flavour) {
            (Some(i), PbFlavour::InPlace) => {
                self.fifo[i].version = version;
                self.counts.in_place += 1;
            }
            (Some(_), PbFlavour::AppendOnly) => {
                if self.free == PbFree::AtHead {
                    self.make_room();
                }
                // The slot may have been obtained by merging the old copy; invalidate it only if
                // it is still there.
                if let Some(i) = self.find(block) {
                    self.fifo[i].valid = false;
                }
                self.fifo.push(Entry { block, valid: true, version });
            }
            (None, _) => {
                self.make_room();
                self.fifo.push(Entry { block, valid: true, version });
            }
        }
        self.counts.pb_writes += 1;
        self.tidy();
    }

    fn read(&mut self, block: u64) {
        if self.find(block).is_some() {
            self.counts.pb_reads += 1;
        }
    }

    /// Nothing lost: every written block's latest version is in the PB or in its band.
    fn check_nothing_lost(&self) -> Result<(), TestCaseError> {
        for (&b, &v) in &self.latest {
            let in_pb = self.fifo.iter().any(|e| e.valid && e.block == b && e.version == v);
            let in_band = self.band_content.get(&b) == Some(&v);
            prop_assert!(in_pb || in_band, "block {} version {} lost", b, v);
            prop_assert!(!(in_pb && in_band), "block {} both in PB and merged", b);
        }
        Ok(())
    }
}

#[derive(Clone, Debug)]
enum Op {
    Write(u64, u32),
    Read(u64, u32),
}

fn ops(universe: u64) -> impl Strategy<Value = Vec<Op>> {
    let op = (any::<bool>(), 0..universe, 1u32..5).prop_map(move |(w, b, n)| {
        let n = n.min((universe - b) as u32).max(1);
        if w {
            Op::Write(b, n)
        } else {
            Op::Read(b, n)
        }
    });
    prop::collection::vec(op, 1..250)
}

fn band_config() -> impl Strategy<Value = BandConfig> {
    prop_oneof![
        (1u64..9).prop_map(|n| BandConfig::Fixed { size: ByteSize(n * BLOCK_SIZE) }),
        (1u64..5, 0u64..5, 0u64..100).prop_map(|(min, extra, seed)| BandConfig::UniformRandom {
            min: ByteSize(min * BLOCK_SIZE),
            max: ByteSize((min + extra) * BLOCK_SIZE),
            seed,
        }),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn model_matches_reference(
        mode in 0usize..4,
        cap in 1u64..9,
        universe in 8u64..80,
        bands in band_config(),
        span in prop_oneof![Just(None), (0u64..90).prop_map(Some)],
        ops in ops(80),
    ) {
        let (flavour, free) = ALL_MODES[mode];
        let cfg = DmSmrConfig {
            capacity: ByteSize(universe * BLOCK_SIZE),
            pb_size: SizeSpec::Absolute(ByteSize(cap * BLOCK_SIZE)),
            pb_flavour: flavour,
            pb_free: free,
            bands: bands.clone(),
            ..DmSmrConfig::default()
        };
        let mut d = cfg.build(&BuildContext::default()).unwrap();
        // Blocks below the span are indexed in a direct array, the others hashed.
        if let Some(s) = span {
            d.expect_span(s);
        }
        let map = BandMap::build(&bands, ByteSize(universe * BLOCK_SIZE)).unwrap();
        let mut r = Reference::new(cap as usize, flavour, free, map);
        let mut now = Nanos(0);
        for op in ops {
            let (b, n, w) = match op {
                Op::Write(b, n) => (b, n, true),
                Op::Read(b, n) => (b, n, false),
            };
            if b >= universe {
                continue;
            }
            let n = n.min((universe - b) as u32);
            let t = if w { d.write(now, b, n) } else { d.read(now, b, n) };
            prop_assert!(t > Nanos(0));
            now += t;
            for blk in b..b + n as u64 {
                if w { r.write(blk) } else { r.read(blk) }
            }
            let s = d.stats();
            let got = Counts {
                rmws: s.rmws,
                cleaned: s.pb_blocks_cleaned,
                band_bytes: s.band_bytes_written,
                in_place: s.pb_rewrites_in_place,
                pb_writes: s.pb_writes,
                pb_reads: s.pb_reads,
            };
            prop_assert_eq!(&got, &r.counts);
            prop_assert_eq!(s.band_bytes_read, s.band_bytes_written);
            prop_assert!(d.pb_occupancy() <= cap, "occupancy {} > {}", d.pb_occupancy(), cap);
            prop_assert!(r.occupancy() <= r.cap);
            prop_assert_eq!(d.pb_valid_blocks() as usize, r.fifo.iter().filter(|e| e.valid).count());
            r.check_nothing_lost()?;
        }
        for blk in 0..universe {
            prop_assert_eq!(d.pb_contains(blk), r.find(blk).is_some(), "block {}", blk);
        }
        prop_assert_eq!(d.stats().out_of_range_blocks, 0);
    }
}
