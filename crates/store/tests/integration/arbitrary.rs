//! Recovery on arbitrary zone contents: a small store is formatted and written, then arbitrary
//! bytes, mutated valid records, forged checkpoints and zone resets are applied to its
//! metazones and datazones through the device API (as a buggy or malicious writer would).
//! `Store::open` must return `Ok` or a typed error, never panic nor hang; when it opens, every
//! read of an acknowledged range returns exactly the acknowledged bytes or a typed error, and
//! `fsck` runs. The cargo-fuzz target `fuzz/fuzz_targets/store_recovery.rs` runs the same
//! harness on libFuzzer's inputs.

use proptest::prelude::*;
use shingled_store::format::{ckpt_end_payload, ckpt_start_payload, encode_record, RecordType};
use shingled_store::{Store, StoreConfig};
use shingled_zoned::{MemZoned, ZonedDevice};

use crate::recovery_harness::{base, check, mutate};

/// The real checkpoint body of `base()`'s device (third record of metazone 1).
fn real_body(dev: &mut MemZoned) -> Vec<u8> {
    let mut b = vec![0u8; 4096 * 3];
    dev.read(dev.info().zone_start(1) + 16, &mut b).unwrap();
    let h = shingled_store::format::decode_header(&b).unwrap();
    assert_eq!(h.rtype, RecordType::CkptBody);
    b[32..32 + h.payload_len as usize].to_vec()
}

/// Regression (cargo-fuzz `store_recovery`): a forged, otherwise valid checkpoint whose
/// records carry sequence numbers near `u64::MAX` overflowed the sequence counter in
/// recovery (a panic). Now it is damage naming the metazone.
#[test]
fn sequence_numbers_near_u64_max_are_damage_not_an_overflow() {
    let (mut dev, _) = base();
    let body = real_body(&mut dev);
    let info = dev.info();
    let gen = 7u64;
    let mut h = gen.to_le_bytes().to_vec();
    h.extend_from_slice(&1u32.to_le_bytes());
    let s = u64::MAX - 3;
    let mut b = encode_record(RecordType::MetaHeader, s, &h);
    b.extend(encode_record(RecordType::CkptStart, s + 1, &ckpt_start_payload(gen, 0)));
    b.extend(encode_record(RecordType::CkptBody, s + 2, &body));
    b.extend(encode_record(RecordType::CkptEnd, s + 3, &ckpt_end_payload(gen, 0, 1, &body)));
    dev.write(info.zone_start(2), &b).unwrap();
    match Store::open(dev, StoreConfig::small()) {
        Err(shingled_store::StoreError::CorruptMeta { zone: 2, .. }) => {}
        other => panic!("{:?}", other.map(|_| ())),
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn recovery_on_arbitrary_zone_contents_never_panics_nor_lies(
        ops in proptest::collection::vec(
            (0u8..6, any::<u8>(), proptest::collection::vec(any::<u8>(), 0..9000)), 1..5)
    ) {
        let (mut dev, acked) = base();
        let mut input = Vec::new();
        for (op, zone, body) in ops {
            input.extend_from_slice(&[op, zone]);
            input.extend_from_slice(&(body.len() as u16).to_le_bytes());
            input.extend_from_slice(&body);
        }
        mutate(&mut dev, &input);
        check(dev, &acked);
    }

    /// Forged checkpoints whose body is a mutation of a real one (so the parser gets deep).
    #[test]
    fn forged_checkpoint_tables_never_panic(flips in proptest::collection::vec((any::<u16>(), any::<u8>()), 1..8)) {
        let (dev, acked) = base();
        // The real checkpoint body: the third record of the current metazone (zone 1 or 2).
        let mut body = None;
        let mut d2 = dev.clone();
        for z in [1u64, 2] {
            let mut b = vec![0u8; 4096 * 3];
            let info = d2.info();
            if d2.read(info.zone_start(z) + 16, &mut b).is_ok() {
                if let Ok(h) = shingled_store::format::decode_header(&b) {
                    if h.rtype == RecordType::CkptBody {
                        body = Some(b[32..32 + h.payload_len as usize].to_vec());
                    }
                }
            }
        }
        let mut body = body.expect("a checkpoint body");
        for (at, x) in flips {
            let i = at as usize % body.len();
            body[i] ^= x.max(1);
        }
        let mut input = vec![3u8, 0];
        input.extend_from_slice(&(body.len() as u16).to_le_bytes());
        input.extend_from_slice(&body);
        let mut dev = dev;
        mutate(&mut dev, &input);
        check(dev, &acked);
    }
}
