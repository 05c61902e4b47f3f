//! The emulated DM-SMR drive: its counts are the model's for the same requests (a hand-worked
//! stream and random ones), its reads equal a `MemBlock` oracle after every operation, flushed
//! data survives reopening and power cuts (`SimStorage`), and bad input gets named errors.

use proptest::prelude::*;
use shingled_core::{BandConfig, ByteSize, Nanos, SizeSpec};
use shingled_device::{BuildContext, DmSmr, Drive};
use shingled_stl::{BlockDevice, DmSmrEmu, DmSmrFileSpec, MemBlock, BLOCK};
use shingled_zoned::{SimStorage, Survivors};

/// A small drive: 4-slot PB, 4-block bands (the hand-worked example's).
fn tiny() -> DmSmrFileSpec {
    DmSmrFileSpec {
        size: ByteSize::mib(1),
        drive: "st5000as0011-scaled".into(),
        pb_size: Some(SizeSpec::Absolute(ByteSize(4 * 4096))),
        bands: Some(BandConfig::Fixed { size: ByteSize(4 * 4096) }),
    }
}

/// A larger one: 64-slot PB, 64 KiB bands.
fn small() -> DmSmrFileSpec {
    DmSmrFileSpec {
        size: ByteSize::mib(4),
        drive: "st5000as0011-scaled".into(),
        pb_size: Some(SizeSpec::Absolute(ByteSize(64 * 4096))),
        bands: Some(BandConfig::Fixed { size: ByteSize(16 * 4096) }),
    }
}

fn block(tag: u64) -> Vec<u8> {
    let mut b = vec![0u8; BLOCK];
    for (i, c) in b.chunks_mut(8).enumerate() {
        c.copy_from_slice(&(tag.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ i as u64).to_le_bytes());
    }
    b
}

fn blocks(tag: u64, n: u64) -> Vec<u8> {
    (0..n).flat_map(|i| block(tag * 1000 + i)).collect()
}

/// The model alone, as `shingled sim` builds it from the same configuration.
fn reference(d: &DmSmrEmu<SimStorage>) -> DmSmr {
    let cfg = shingled_device::DmSmrConfig { ..d.model_config() };
    cfg.build(&BuildContext::default()).unwrap()
}

#[test]
fn a_hand_worked_stream_gives_the_expected_rmws_and_pb_writes() {
    let mut d = DmSmrEmu::format(SimStorage::new(), &tiny()).unwrap();
    assert!(d.metadata_damage().is_empty(), "{:?}", d.metadata_damage());
    // Blocks 0..4 fill the four slots (band 0); block 8 needs a slot: band 0 is cleaned (RMW
    // 1, four blocks merged). 1, 12 and 13 take the slots the merged copies left; 14 finds the
    // PB full with block 8 at its head: band 2 is cleaned (RMW 2, one block merged).
    for b in [0u64, 1, 2, 3, 8, 1, 12, 13, 14] {
        d.write(b, &block(b)).unwrap();
    }
    let c = d.counts();
    assert_eq!((c.pb_writes, c.rmws, c.pb_blocks_cleaned), (9, 2, 5));
    assert_eq!((c.band_bytes_read, c.band_bytes_written), (2 * 4 * 4096, 2 * 4 * 4096));
    let m = d.model().stats();
    assert_eq!((m.pb_writes, m.rmws, m.band_bytes_written, m.pb_blocks_cleaned), (9, 2, 2 * 4 * 4096, 5));
    let mut buf = vec![0u8; BLOCK];
    for b in [0u64, 1, 2, 3, 8, 12, 13, 14] {
        d.read(b, &mut buf).unwrap();
        assert_eq!(buf, block(b), "block {b}");
    }
    d.read(4, &mut buf).unwrap();
    assert_eq!(buf, vec![0u8; BLOCK], "never written");
    assert!(d.check().is_empty(), "{:?}", d.check());
}

#[derive(Clone, Debug)]
enum Op {
    Write(u64, u64),
    Read(u64, u64),
    Discard(u64, u64),
    Flush,
    Idle,
}

fn ops(cap: u64) -> impl Strategy<Value = Vec<Op>> {
    let op = prop_oneof![
        6 => (0..cap, 1..24u64).prop_map(move |(b, n)| Op::Write(b, n.min(cap - b))),
        3 => (0..cap, 1..24u64).prop_map(move |(b, n)| Op::Read(b, n.min(cap - b))),
        1 => (0..cap, 1..8u64).prop_map(move |(b, n)| Op::Discard(b, n.min(cap - b))),
        1 => Just(Op::Flush),
        1 => Just(Op::Idle),
    ];
    proptest::collection::vec(op, 1..160)
}

fn capacity_of(spec: &DmSmrFileSpec) -> u64 {
    DmSmrEmu::format(SimStorage::new(), spec).unwrap().capacity_blocks()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    /// Reads equal the oracle after every operation; the RMWs, PB writes and band bytes equal
    /// the model's driven alone with the same requests.
    #[test]
    fn reads_match_the_oracle_and_counts_match_the_model(ops in ops(capacity_of(&small()))) {
        let mut d = DmSmrEmu::format(SimStorage::new(), &small()).unwrap();
        let cap = d.capacity_blocks();
        let mut oracle = MemBlock::new(cap);
        let mut model = reference(&d);
        let mut now = Nanos::ZERO;
        for (i, op) in ops.iter().enumerate() {
            match *op {
                Op::Write(b, n) => {
                    let data = blocks(i as u64, n);
                    d.write(b, &data).unwrap();
                    oracle.write(b, &data).unwrap();
                    now += model.write(now, b, n as u32);
                }
                Op::Discard(b, n) => {
                    d.discard(b, n).unwrap();
                    oracle.discard(b, n).unwrap();
                    now += model.write(now, b, n as u32);
                }
                Op::Read(b, n) => {
                    let mut got = vec![0u8; (n as usize) * BLOCK];
                    let mut want = got.clone();
                    d.read(b, &mut got).unwrap();
                    oracle.read(b, &mut want).unwrap();
                    prop_assert!(got == want, "op {i}: read {n} blocks at {b}");
                    now += model.read(now, b, n as u32);
                }
                Op::Flush => d.flush().unwrap(),
                Op::Idle => d.idle(std::time::Duration::from_secs(5)).unwrap(),
            }
            let mut all = vec![0u8; cap as usize * BLOCK];
            let mut want = all.clone();
            d.read(0, &mut all).unwrap();
            oracle.read(0, &mut want).unwrap();
            prop_assert!(all == want, "after op {i} ({op:?})");
            now += model.read(now, 0, cap as u32);
        }
        let (c, m) = (d.counts(), model.stats());
        prop_assert_eq!(
            (c.pb_writes, c.pb_reads, c.rmws, c.band_bytes_read, c.band_bytes_written, c.pb_blocks_cleaned),
            (m.pb_writes, m.pb_reads, m.rmws, m.band_bytes_read, m.band_bytes_written, m.pb_blocks_cleaned)
        );
        prop_assert!(d.check().is_empty(), "{:?}", d.check());
    }
}

#[test]
fn a_long_random_stream_cleans_often_and_counts_as_the_model() {
    let mut d = DmSmrEmu::format(SimStorage::new(), &small()).unwrap();
    let cap = d.capacity_blocks();
    let mut model = reference(&d);
    let mut oracle = MemBlock::new(cap);
    let mut x = 0x2545_f491_4f6c_dd1d_u64;
    let mut now = Nanos::ZERO;
    for i in 0..3000u64 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let b = x % cap;
        let n = (1 + (x >> 20) % 8).min(cap - b);
        let data = blocks(i, n);
        d.write(b, &data).unwrap();
        oracle.write(b, &data).unwrap();
        now += model.write(now, b, n as u32);
    }
    let (c, m) = (d.counts(), model.stats());
    assert!(c.rmws > 100, "{c:?}");
    assert_eq!(
        (c.pb_writes, c.rmws, c.band_bytes_read, c.band_bytes_written, c.pb_blocks_cleaned),
        (m.pb_writes, m.rmws, m.band_bytes_read, m.band_bytes_written, m.pb_blocks_cleaned)
    );
    let mut got = vec![0u8; cap as usize * BLOCK];
    let mut want = got.clone();
    d.read(0, &mut got).unwrap();
    oracle.read(0, &mut want).unwrap();
    assert!(got == want);
}

#[test]
fn reopening_after_flush_finds_every_block_and_merges_the_pb() {
    let mut d = DmSmrEmu::format(SimStorage::new(), &small()).unwrap();
    let cap = d.capacity_blocks();
    let mut oracle = MemBlock::new(cap);
    for i in 0..200u64 {
        let b = (i * 37) % cap;
        d.write(b, &block(i)).unwrap();
        oracle.write(b, &block(i)).unwrap();
    }
    d.flush().unwrap();
    let before = d.counts();
    assert!(d.model().pb_valid_blocks() > 0, "something is left in the PB to recover");
    let img = d.into_storage().power_cut(Survivors::None);
    let mut d = DmSmrEmu::open(img).unwrap();
    let after = d.counts();
    assert_eq!((after.pb_writes, after.rmws), (before.pb_writes, before.rmws), "counts carry on");
    assert!(after.recovery_rmws > 0);
    assert_eq!(d.model().pb_valid_blocks(), 0, "a new session starts with an empty PB");
    let mut got = vec![0u8; cap as usize * BLOCK];
    let mut want = got.clone();
    d.read(0, &mut got).unwrap();
    oracle.read(0, &mut want).unwrap();
    assert!(got == want);
    // And again: a second session's writes on top of the first's.
    for i in 0..50u64 {
        d.write(i, &block(10_000 + i)).unwrap();
        oracle.write(i, &block(10_000 + i)).unwrap();
    }
    d.flush().unwrap();
    let mut d = DmSmrEmu::open(d.into_storage().power_cut(Survivors::None)).unwrap();
    d.read(0, &mut got).unwrap();
    oracle.read(0, &mut want).unwrap();
    assert!(got == want);
}

/// Every block reads as its value at the last flush or as one written since.
fn check_allowed(d: &mut DmSmrEmu<SimStorage>, allowed: &[Vec<Vec<u8>>], what: &str) {
    let mut buf = vec![0u8; BLOCK];
    for (b, ok) in allowed.iter().enumerate() {
        d.read(b as u64, &mut buf).unwrap();
        assert!(ok.contains(&buf), "{what}: block {b} reads data that was never flushed or written");
    }
}

#[test]
fn power_cuts_keep_every_flushed_block() {
    let spec = small();
    let mut points = 0;
    for seed in 0..6u64 {
        for cut_after in [3u64, 17, 40, 90, 160, 300, 600, 1200] {
            let mut d = DmSmrEmu::format(SimStorage::new(), &spec).unwrap();
            let cap = d.capacity_blocks();
            // Per block: the flushed value, and every value written since.
            let mut allowed: Vec<Vec<Vec<u8>>> = vec![vec![vec![0u8; BLOCK]]; cap as usize];
            d.storage_mut().fail_after(cut_after);
            let mut x = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
            let mut i = 0u64;
            loop {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                i += 1;
                let r = if x % 9 == 0 {
                    d.flush().map(|()| {
                        for a in allowed.iter_mut() {
                            let last = a.pop().expect("a value");
                            *a = vec![last];
                        }
                    })
                } else {
                    let b = x % cap;
                    let n = (1 + (x >> 30) % 6).min(cap - b);
                    let data = blocks(i, n);
                    for k in 0..n {
                        allowed[(b + k) as usize]
                            .push(data[(k as usize) * BLOCK..(k as usize + 1) * BLOCK].to_vec());
                    }
                    d.write(b, &data)
                };
                if r.is_err() {
                    break;
                }
                if i > 5000 {
                    break;
                }
            }
            points += 1;
            let sim = d.into_storage();
            for survivors in [Survivors::None, Survivors::All, Survivors::Random { seed }] {
                let mut r = DmSmrEmu::open(sim.power_cut(survivors)).unwrap();
                check_allowed(
                    &mut r,
                    &allowed,
                    &format!("seed {seed}, cut after {cut_after}, {survivors:?}"),
                );
            }
        }
    }
    assert!(points >= 40);
}

#[test]
fn bad_input_gets_named_errors() {
    let e =
        |spec: DmSmrFileSpec| DmSmrEmu::format(SimStorage::new(), &spec).err().expect("refused").to_string();
    let m = e(DmSmrFileSpec { drive: "pore-emulator".into(), ..small() });
    assert!(m.contains("pb_flavour") && m.contains("in-place") && m.contains("pore-emulator"), "{m}");
    let m = e(DmSmrFileSpec { drive: "cmr-7200-500g".into(), ..small() });
    assert!(m.contains("not a DM-SMR drive profile") && m.contains("st5000as0011"), "{m}");
    let m = e(DmSmrFileSpec { drive: "no-such".into(), ..small() });
    assert!(m.contains("no such drive profile"), "{m}");
    let m = e(DmSmrFileSpec { size: ByteSize(100 << 10), ..small() });
    assert!(m.contains("invalid size"), "{m}");
    let m = e(DmSmrFileSpec { pb_size: Some(SizeSpec::Absolute(ByteSize::mib(8))), ..small() });
    assert!(m.contains("no room for bands"), "{m}");
    // The profile's 20 GB PB does not fit a small file.
    let m = e(DmSmrFileSpec { drive: "st5000as0011".into(), pb_size: None, ..small() });
    assert!(m.contains("--pb-size"), "{m}");
}

#[test]
fn a_bad_header_is_named_and_the_backup_used() {
    let d = DmSmrEmu::format(SimStorage::new(), &small()).unwrap();
    let mut st = d.into_storage();
    use shingled_zoned::Storage;
    st.write_at(30, b"garbage").unwrap();
    let d = DmSmrEmu::open(st).unwrap();
    assert!(
        d.metadata_damage().iter().any(|m| m.contains("the header (byte 0) is damaged")),
        "{:?}",
        d.metadata_damage()
    );
    let mut st = d.into_storage();
    st.write_at(64 << 10 | 30, b"garbage").unwrap();
    let m = DmSmrEmu::open(st).err().expect("both headers bad").to_string();
    assert!(m.contains("header: bad CRC; backup header: bad CRC"), "{m}");
    let mut st = SimStorage::new();
    st.write_at(0, &[0u8; 4096]).unwrap();
    let m = DmSmrEmu::open(st).err().expect("too short").to_string();
    assert!(m.contains("too short"), "{m}");
}

/// A profile with an idle window: idle time cleans bands for real (`idle_rmws`), as many as
/// the model driven alone with the same calls cleans, and the data stays.
#[test]
fn idle_cleaning_cleans_bands_for_real() {
    let spec = DmSmrFileSpec {
        drive: "st5000as0011".into(),
        pb_size: Some(SizeSpec::Absolute(ByteSize(64 * 4096))),
        bands: Some(BandConfig::Fixed { size: ByteSize(16 * 4096) }),
        ..small()
    };
    let mut d = DmSmrEmu::format(SimStorage::new(), &spec).unwrap();
    let window = d.model_config().idle_window_ms.expect("the profile cleans when idle");
    let cap = d.capacity_blocks();
    let mut model = reference(&d);
    let mut oracle = MemBlock::new(cap);
    let mut now = Nanos::ZERO;
    for i in 0..40u64 {
        let b = (i * 97) % cap;
        d.write(b, &block(i)).unwrap();
        oracle.write(b, &block(i)).unwrap();
        now += model.write(now, b, 1);
    }
    assert!(d.model().pb_valid_blocks() > 0 && d.counts().rmws == 0);
    let tick = std::time::Duration::from_millis(100);
    for _ in 0..30 {
        d.idle(tick).unwrap();
        let until = now + Nanos((window * 1e6).round() as u64) + Nanos(100_000_000);
        model.idle(now, until);
        now = until;
    }
    let (c, m) = (d.counts(), model.stats());
    assert!(c.idle_rmws > 0, "{c:?}");
    assert_eq!(d.model().pb_valid_blocks(), 0, "the PB was emptied");
    assert_eq!(
        (c.rmws, c.idle_rmws, c.band_bytes_written, c.pb_blocks_cleaned),
        (m.rmws, m.idle_rmws, m.band_bytes_written, m.pb_blocks_cleaned)
    );
    let mut got = vec![0u8; cap as usize * BLOCK];
    let mut want = got.clone();
    d.read(0, &mut got).unwrap();
    oracle.read(0, &mut want).unwrap();
    assert!(got == want);
    assert!(d.check().is_empty(), "{:?}", d.check());
}
