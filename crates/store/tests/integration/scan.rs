//! Recovery's datazone scan and fsck read zones in windows of `scan_buffer_bytes`: records
//! straddling a window's end, and records longer than the window, are recovered and checked
//! exactly as with one window holding the whole zone.

use shingled_store::{ChunkId, Store, StoreConfig, StreamType};
use shingled_zoned::{Dialect, MemZoned, ZonedConfig};

use crate::common::bytes;

/// Appends whose records are 1, 2, 3, 4 and 6 blocks long (5000 bytes of data = 2 slices plus
/// header and prefix = 3 blocks, ...), unsynced after a checkpoint, so `open` has to scan them.
fn unclean(cfg: &StoreConfig) -> (MemZoned, Vec<(ChunkId, Vec<u8>)>) {
    let dev = MemZoned::new(&ZonedConfig::small(16, 256, Dialect::Zbc)).unwrap();
    let mut st = Store::format(dev, cfg.clone()).unwrap();
    let mut want = Vec::new();
    for i in 0..3u128 {
        let id = ChunkId::from_u128(i + 1);
        st.create(id, StreamType::DATA).unwrap();
        let mut data = Vec::new();
        for (k, n) in [100usize, 5000, 9000, 13_000, 20_000, 4000, 7000].into_iter().enumerate() {
            let piece = bytes((i as u64) << 8 | k as u64, n);
            st.append(id, &piece).unwrap();
            data.extend_from_slice(&piece);
        }
        want.push((id, data));
    }
    // No checkpoint: the appends are found by the scan only.
    (st.into_device(), want)
}

#[test]
fn records_straddling_the_scan_buffer_are_recovered() {
    let base = StoreConfig::small();
    let (dev, want) = unclean(&base);
    let whole = Store::open(dev.clone(), base.clone()).unwrap();
    let rr_whole = whole.recovery_report().unwrap();
    assert!(rr_whole.records_scanned >= 21, "{rr_whole:?}");
    // 4 KiB: every record of more than one block goes past the window; 8 and 12 KiB: records
    // of 3, 4 and 6 blocks start in one window and end in the next (carried over).
    for buf in [4096usize, 8192, 12_288, 20_480] {
        let cfg = StoreConfig { scan_buffer_bytes: buf, ..base.clone() };
        let mut st = Store::open(dev.clone(), cfg).unwrap();
        let rr = st.recovery_report().unwrap();
        assert_eq!(
            (rr.zones_scanned, rr.records_scanned, rr.bytes_scanned, rr.chunks_recovered, rr.damaged_records),
            (
                rr_whole.zones_scanned,
                rr_whole.records_scanned,
                rr_whole.bytes_scanned,
                rr_whole.chunks_recovered,
                0
            ),
            "buffer {buf}"
        );
        for (id, data) in &want {
            assert_eq!(st.chunk(*id).unwrap().len, data.len() as u64, "buffer {buf}");
            assert!(st.read(*id, 0, data.len() as u64).unwrap() == *data, "buffer {buf}: {id} differs");
        }
        let f = st.fsck().unwrap();
        assert!(f.is_clean(), "buffer {buf}: {:?}", f.problems);
        assert!(f.records_checked >= 21, "buffer {buf}: {f:?}");
    }
}

#[test]
fn scan_buffer_below_a_block_is_rejected() {
    let cfg = StoreConfig { scan_buffer_bytes: 4095, ..StoreConfig::small() };
    assert!(cfg.sanitize().is_err());
}
