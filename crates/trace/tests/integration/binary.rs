//! The `bin` format: round trips, conversion, header details.

use crate::{fixture, read_all};
use proptest::prelude::*;
use shingled_core::Op;
use shingled_trace::binary::{BinaryReader, FLAG_TIME_IS_INDEX, HEADER_SIZE, MAX_OFFSET, RECORD_SIZE};
use shingled_trace::{convert, open, BinaryWriter, OpenOptions, Request, TraceReader};

fn any_request() -> impl Strategy<Value = Request> {
    (any::<u64>(), any::<u32>(), any::<bool>(), 0..=MAX_OFFSET, any::<u32>()).prop_map(
        |(time_ns, volume, w, offset, len)| Request {
            time_ns,
            volume,
            op: if w { Op::Write } else { Op::Read },
            offset,
            len,
        },
    )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]
    #[test]
    fn any_requests_round_trip(reqs in proptest::collection::vec(any_request(), 0..300), finish in any::<bool>()) {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("t.bin");
        let mut w = BinaryWriter::create(&p).unwrap();
        for r in &reqs {
            w.write(r).unwrap();
        }
        if finish {
            prop_assert_eq!(w.finish().unwrap().1, reqs.len() as u64);
        } else {
            drop(w);
        }
        let bytes = std::fs::metadata(&p).unwrap().len();
        prop_assert_eq!(bytes, (HEADER_SIZE + RECORD_SIZE * reqs.len()) as u64);
        // Detected from its magic, through the generic entry point.
        let (got, _, _) = read_all(&p, &OpenOptions::default());
        prop_assert_eq!(got, reqs);
    }
}

#[test]
fn convert_keeps_every_request() {
    let dir = tempfile::tempdir().unwrap();
    for name in ["msr.csv", "blkparse.txt", "vscsi-v2.vscsi", "alibaba.csv"] {
        let out = dir.path().join(format!("{name}.bin"));
        let mut r = open(fixture(name).to_str().unwrap(), &OpenOptions::default()).unwrap();
        let summary = convert(&mut *r, &out).unwrap();
        let (orig, skipped, _) = read_all(&fixture(name), &OpenOptions::default());
        assert_eq!(summary.requests, orig.len() as u64, "{name}");
        assert_eq!(summary.skipped, skipped, "{name}");
        assert_eq!(summary.bytes, std::fs::metadata(&out).unwrap().len(), "{name}");
        let (back, _, _) = read_all(&out, &OpenOptions::default());
        assert_eq!(back, orig, "{name}");
        let b = BinaryReader::open(&out).unwrap();
        assert_eq!(b.header().count, Some(orig.len() as u64));
        assert_eq!(b.format_name(), "bin");
    }
}

#[test]
fn flags_and_batches() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("f.bin");
    let mut w = BinaryWriter::create_with_flags(&p, FLAG_TIME_IS_INDEX).unwrap();
    for i in 0..10_000u64 {
        w.write(&Request { time_ns: i, volume: 0, op: Op::Read, offset: i * 4096, len: 4096 }).unwrap();
    }
    w.finish().unwrap();
    let mut r = BinaryReader::open(&p).unwrap();
    assert_eq!(r.header().flags, FLAG_TIME_IS_INDEX);
    let mut out = Vec::new();
    let mut batches = 0;
    while r.next_batch(&mut out, 3000).unwrap() > 0 {
        batches += 1;
    }
    assert_eq!((out.len(), batches), (10_000, 4));
    assert!(out.iter().enumerate().all(|(i, q)| q.time_ns == i as u64));
}
