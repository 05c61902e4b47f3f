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

/// `TraceReader::next_batch` through `open`'s boxed reader (the `bin` reader's batch decoder,
/// and the default one request at a time for a CSV) gives exactly what `next_request` gives,
/// with the volume filter and its count, and the same error at a truncated end.
#[test]
fn batches_through_the_trait_equal_one_request_at_a_time() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("b.bin");
    let mut w = BinaryWriter::create_with_flags(&p, 0).unwrap();
    for i in 0..1000u64 {
        let op = if i % 2 == 0 { Op::Write } else { Op::Read };
        w.write(&Request { time_ns: i, volume: (i % 3) as u32, op, offset: i * 8192, len: 4096 }).unwrap();
    }
    w.finish().unwrap();
    let csv = dir.path().join("t.csv");
    let mut text = String::new();
    for i in 0..100u64 {
        text.push_str(&format!("{},hm,{},Write,{},4096,10\n", 128166372003061629 + i, i % 2, i * 4096));
    }
    std::fs::write(&csv, text).unwrap();
    let mut cut = std::fs::read(&p).unwrap();
    cut.truncate(cut.len() - RECORD_SIZE / 2);
    let truncated = dir.path().join("cut.bin");
    std::fs::write(&truncated, cut).unwrap();
    for path in [&p, &csv, &truncated] {
        for volume in [None, Some(1)] {
            let opts = OpenOptions { volume, ..Default::default() };
            let path = path.to_str().unwrap();
            let mut one = open(path, &opts).unwrap();
            let mut all = Vec::new();
            let end = loop {
                match one.next_request() {
                    Ok(Some(r)) => all.push(r),
                    Ok(None) => break None,
                    Err(e) => break Some(e.to_string()),
                }
            };
            let mut batched = open(path, &opts).unwrap();
            let mut got = Vec::new();
            let end_batched = loop {
                match batched.next_batch(&mut got, 7) {
                    Ok(0) => break None,
                    Ok(_) => {}
                    Err(e) => break Some(e.to_string()),
                }
            };
            assert_eq!(end_batched, end, "{path} {volume:?}");
            // On an error, the batch it ended holds the requests before it, all read already.
            assert_eq!(got, all, "{path} {volume:?}");
            assert_eq!(batched.filtered(), one.filtered(), "{path} {volume:?}");
        }
    }
}
