//! The long/mix composer.

use crate::{fixture, read_all};
use shingled_core::Op;
use shingled_trace::binary::{BinaryReader, FLAG_TIME_IS_INDEX};
use shingled_trace::{mix, OpenOptions, Request};

const GIB: u64 = 1 << 30;

fn inputs() -> Vec<String> {
    ["msr.csv", "sac.txt"].iter().map(|n| fixture(n).to_str().unwrap().to_string()).collect()
}

#[test]
fn copies_get_adjacent_ranges_and_keep_their_order() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("mix.bin");
    let s = mix(&inputs(), &OpenOptions::default(), 3, 42, &out).unwrap();

    // msr.csv: 5 requests, extent 1 GiB + 4 KiB → 2 GiB ranges; sac.txt: 4 requests,
    // extent 400 KiB → 1 GiB ranges. Layout: msr ×3, then sac ×3.
    let layout: Vec<(u32, u64, u64, u64)> =
        s.streams.iter().map(|t| (t.copy, t.requests, t.base, t.range)).collect();
    assert_eq!(
        layout,
        vec![
            (0, 5, 0, 2 * GIB),
            (1, 5, 2 * GIB, 2 * GIB),
            (2, 5, 4 * GIB, 2 * GIB),
            (0, 4, 6 * GIB, GIB),
            (1, 4, 7 * GIB, GIB),
            (2, 4, 8 * GIB, GIB)
        ]
    );
    assert_eq!((s.requests, s.lba_span), (27, 9 * GIB));

    let (got, _, _) = read_all(&out, &OpenOptions::default());
    assert_eq!(got.len(), 27, "counts add up");
    assert_eq!(BinaryReader::open(&out).unwrap().header().flags, FLAG_TIME_IS_INDEX);
    for (i, r) in got.iter().enumerate() {
        assert_eq!((r.time_ns, r.volume), (i as u64, 0), "renumbered, one volume");
    }

    // Split the output back into streams by range: each is its input shifted, in order.
    for t in &s.streams {
        let mine: Vec<(Op, u64, u32)> = got
            .iter()
            .filter(|r| (t.base..t.base + t.range).contains(&r.offset))
            .map(|r| {
                assert!(r.offset + r.len as u64 <= t.base + t.range, "stays within its range");
                (r.op, r.offset - t.base, r.len)
            })
            .collect();
        let (orig, _, _) = read_all(std::path::Path::new(&t.input), &OpenOptions::default());
        let want: Vec<(Op, u64, u32)> = orig.iter().map(|r| (r.op, r.offset, r.len)).collect();
        assert_eq!(mine, want, "{} copy {}", t.input, t.copy);
    }
}

#[test]
fn same_seed_same_output() {
    let dir = tempfile::tempdir().unwrap();
    let run = |seed: u64, name: &str| {
        let out = dir.path().join(name);
        mix(&inputs(), &OpenOptions::default(), 4, seed, &out).unwrap();
        std::fs::read(out).unwrap()
    };
    let a = run(7, "a.bin");
    assert_eq!(a, run(7, "b.bin"));
    assert_ne!(a, run(8, "c.bin"), "36 requests in 8 streams: another seed reorders them");
}

#[test]
fn interleaving_is_proportional() {
    // Two streams of 1 and many requests: the short one should not always come first or last.
    let dir = tempfile::tempdir().unwrap();
    let big = dir.path().join("big.csv");
    let lines: String = (0..1000).map(|i| format!("{i},h,0,Read,{},4096,1\n", i * 4096)).collect();
    std::fs::write(&big, lines).unwrap();
    let inputs = vec![big.to_str().unwrap().to_string(), fixture("sac.txt").to_str().unwrap().to_string()];
    let mut positions = Vec::new();
    for seed in 0..20 {
        let out = dir.path().join(format!("m{seed}.bin"));
        mix(&inputs, &OpenOptions::default(), 1, seed, &out).unwrap();
        let (got, _, _) = read_all(&out, &OpenOptions::default());
        let first_sac = got.iter().position(|r: &Request| r.offset >= GIB).unwrap();
        positions.push(first_sac);
    }
    // With 4 of 1004 requests from sac, its first one lands ~200 in on average.
    let mean = positions.iter().sum::<usize>() as f64 / positions.len() as f64;
    assert!((50.0..500.0).contains(&mean), "{positions:?}");
}

#[test]
fn bad_arguments() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("x.bin");
    assert!(mix(&[], &OpenOptions::default(), 1, 0, &out).is_err());
    assert!(mix(&inputs(), &OpenOptions::default(), 0, 0, &out).is_err());
    let e = mix(&["/no/such/trace".to_string()], &OpenOptions::default(), 1, 0, &out).unwrap_err();
    assert!(e.to_string().contains("/no/such/trace"));
}

#[test]
fn volume_filter_applies_to_inputs() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("v.bin");
    let opts = OpenOptions { volume: Some(0), ..OpenOptions::default() };
    let s = mix(&[fixture("msr.csv").to_str().unwrap().to_string()], &opts, 2, 1, &out).unwrap();
    assert_eq!(s.requests, 6);
    // Volume 0's extent is 64 KiB, so each copy gets 1 GiB.
    assert_eq!(s.streams[1].base, GIB);
}
