//! Store recovery on arbitrary zone contents, on libFuzzer's inputs: the harness of the store's
//! integration test `arbitrary.rs` (`recovery_harness.rs`, included by path with the tests'
//! `common.rs`). A small store is formatted and written, the input is applied to its zones
//! through the device API as operations `[op, zone, len lo, len hi, bytes…]` (raw bytes or
//! records at the write pointer, forged checkpoints, resets, finishes), then `Store::open` must
//! return `Ok` or a typed error, never panic nor hang, and an opened store must return exactly
//! the acknowledged bytes (or a typed error) for every read.
#![no_main]

#[allow(dead_code)]
#[path = "../../crates/store/tests/integration/common.rs"]
mod common;
#[path = "../../crates/store/tests/integration/recovery_harness.rs"]
mod recovery_harness;

use libfuzzer_sys::fuzz_target;
use recovery_harness::{base, check, mutate};
use shingled_store::ChunkId;
use shingled_zoned::MemZoned;
use std::collections::BTreeMap;
use std::sync::OnceLock;

fuzz_target!(|data: &[u8]| {
    static BASE: OnceLock<(MemZoned, BTreeMap<ChunkId, Vec<u8>>)> = OnceLock::new();
    let (dev, acked) = BASE.get_or_init(base);
    let mut dev = dev.clone();
    mutate(&mut dev, data);
    check(dev, acked);
});
