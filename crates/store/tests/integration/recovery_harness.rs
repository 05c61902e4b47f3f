//! The harness of the recovery-on-arbitrary-zone-contents tests (`arbitrary.rs`), shared with
//! the cargo-fuzz target `fuzz/fuzz_targets/store_recovery.rs`, which includes this file and
//! `common.rs` by path. Depends only on `shingled-store`, `shingled-zoned`, std and
//! `crate::common`.

use shingled_store::format::{ckpt_end_payload, ckpt_start_payload, encode_data, encode_record, RecordType};
use shingled_store::{ChunkId, Store, StoreConfig, StreamType};
use shingled_zoned::{Dialect, MemZoned, ZoneOp, ZonedConfig, ZonedDevice};
use std::collections::BTreeMap;

use crate::common::bytes;
/// 16 zones of 64 KiB: superzone 0, metazones 1–2, datazones 3–15.
pub fn base() -> (MemZoned, BTreeMap<ChunkId, Vec<u8>>) {
    let dev = MemZoned::new(&ZonedConfig::small(16, 64, Dialect::Zbc)).unwrap();
    let mut st = Store::format(dev, StoreConfig::small()).unwrap();
    let mut acked = BTreeMap::new();
    for i in 0..4u64 {
        let id = ChunkId::from_u128(i as u128 + 1);
        st.create(id, StreamType((i % 3) as u8)).unwrap();
        let d = bytes(i, 3000 + 4500 * i as usize);
        st.append(id, &d[..1000]).unwrap();
        st.append(id, &d[1000..]).unwrap();
        acked.insert(id, d);
    }
    st.seal(ChunkId::from_u128(2)).unwrap();
    st.delete(ChunkId::from_u128(3)).unwrap();
    (st.into_device(), acked)
}

/// Applies `input` to the device: a sequence of operations `[op, zone, len lo, len hi, bytes…]`.
pub fn mutate(dev: &mut MemZoned, input: &[u8]) {
    let info = dev.info();
    let mut rest = input;
    let mut gen = 100u64;
    while rest.len() >= 4 {
        let (op, zone) = (rest[0] % 6, 1 + rest[1] as u64 % (info.nr_zones - 1));
        let n = (u16::from_le_bytes([rest[2], rest[3]]) as usize).min(rest.len() - 4);
        let body = &rest[4..4 + n];
        rest = &rest[4 + n..];
        let seq = u64::from_le_bytes(
            body.iter().copied().chain([0; 8]).take(8).collect::<Vec<_>>().try_into().unwrap(),
        );
        let blob = match op {
            0 => body.to_vec(),
            1 => {
                let t = body.first().map_or(0, |b| b % 18);
                let Some(t) = RecordType::from_u8(t) else { continue };
                encode_record(t, seq, body)
            }
            2 => {
                let id = ChunkId::from_u128(1 + body.first().map_or(0, |b| *b % 5) as u128);
                let off = body.get(1).map_or(0, |b| *b as u64 * 512);
                encode_data(&id, off, body, seq, body.get(2).copied().unwrap_or(0) % 4, (seq >> 8) as u32)
            }
            3 => {
                // A complete checkpoint with an arbitrary body into a metazone, newest generation.
                let m = zone % 2;
                let z = 1 + m;
                let _ = dev.zone_mgmt(ZoneOp::Reset, info.zone_start(z), info.zone_len(z));
                gen += 1;
                let mut h = gen.to_le_bytes().to_vec();
                h.extend_from_slice(&(m as u32).to_le_bytes());
                let mut b = encode_record(RecordType::MetaHeader, seq, &h);
                b.extend(encode_record(
                    RecordType::CkptStart,
                    seq.wrapping_add(1),
                    &ckpt_start_payload(gen, 0),
                ));
                b.extend(encode_record(RecordType::CkptBody, seq.wrapping_add(2), body));
                b.extend(encode_record(
                    RecordType::CkptEnd,
                    seq.wrapping_add(3),
                    &ckpt_end_payload(gen, 0, 1, body),
                ));
                let _ = dev.write(info.zone_start(z), &b);
                continue;
            }
            4 => {
                // Metazones only: a datazone reset behind the store's back destroys appends made
                // since the checkpoint, which no metadata records (appends are not journaled), so
                // recovery cannot tell it from a zone never written; a forged record there
                // would then be indexed as the chunk's data (found by the fuzz target; outside
                // the store's fault model, see docs/store-format.md).
                let m = 1 + zone % 2;
                let _ = dev.zone_mgmt(ZoneOp::Reset, info.zone_start(m), info.zone_len(m));
                continue;
            }
            _ => {
                let _ = dev.zone_mgmt(ZoneOp::Finish, info.zone_start(zone), info.zone_len(zone));
                continue;
            }
        };
        let mut blob = blob;
        blob.resize(blob.len().div_ceil(4096).max(1) * 4096, 0);
        let Ok(r) = dev.report_zone(zone) else { continue };
        let _ = dev.write(r.wp, &blob);
    }
    let _ = dev.flush();
}

/// Opens the mutated device and checks what it returns against `acked`. Returns whether it
/// opened.
pub fn check(dev: MemZoned, acked: &BTreeMap<ChunkId, Vec<u8>>) -> bool {
    let Ok(mut st) = Store::open(dev, StoreConfig::small()) else { return false };
    for c in st.list() {
        let mut off = 0;
        while off < c.len {
            let n = (c.len - off).min(6000);
            if let Ok(got) = st.read(c.id, off, n) {
                // Bytes beyond the acknowledged length may come from forged valid records.
                if let Some(want) = acked.get(&c.id) {
                    let upto = (want.len() as u64).min(off + n);
                    if off < upto {
                        assert!(
                            got[..(upto - off) as usize] == want[off as usize..upto as usize],
                            "chunk {} at {off}: wrong bytes returned",
                            c.id
                        );
                    }
                }
            }
            off += n;
        }
    }
    let _ = st.fsck();
    true
}
