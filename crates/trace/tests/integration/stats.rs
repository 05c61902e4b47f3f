//! Trace statistics checked by hand on `stats.csv`.

use crate::fixture;
use shingled_core::{BandConfig, ByteSize};
use shingled_trace::{footprint, open, trace_stats, OpenOptions};

/// `stats.csv`, one request per line (op, offset, len → 4 KiB blocks touched):
///
/// | # | op | offset | len  | blocks   | volume |
/// |---|----|--------|------|----------|--------|
/// | 1 | W  | 0      | 4096 | 0        | 0      |
/// | 2 | W  | 4096   | 8192 | 1, 2     | 0      |
/// | 3 | R  | 2048   | 4096 | 0, 1     | 0      |  (unaligned: widened to two blocks)
/// | 4 | R  | 40960  | 4096 | 10       | 1      |
/// | 5 | W  | 65536  | 512  | 16       | 0      |
/// | 6 | R  | 65536  | 4096 | 16       | 0      |
/// | 7 | W  | 8192   | 4096 | 2        | 0      |
///
/// Pages: 1+2+2+1+1+1+1 = 9; written 1+2+1+1 = 5, read 2+1+1 = 4.
/// Written blocks {0,1,2,16} = 4 → 16 KiB; accessed {0,1,2,10,16} = 5 → 20 KiB.
/// Bands of 4 blocks (16 KiB) over max block + 1 = 17 blocks: band 0 = blocks 0-3, band 2 =
/// 8-11, band 4 = block 16 alone (the map ends at block 17). Written bands {0, 4} = 4 + 1
/// blocks = 20 KiB; accessed bands {0, 2, 4} = 4 + 4 + 1 = 9 blocks = 36 KiB.
#[test]
fn table_one_row_by_hand() {
    let mut r = open(fixture("stats.csv").to_str().unwrap(), &OpenOptions::default()).unwrap();
    let bands = BandConfig::Fixed { size: ByteSize::kib(16) };
    let s = trace_stats(&mut *r, &bands).unwrap();
    assert_eq!(s.format, "msr");
    assert_eq!((s.requests, s.read_requests, s.write_requests), (7, 3, 4));
    assert_eq!((s.pages, s.read_pages, s.write_pages), (9, 4, 5));
    assert!((s.write_pct_requests - 400.0 / 7.0).abs() < 1e-9);
    assert!((s.write_pct_pages - 500.0 / 9.0).abs() < 1e-9);
    assert_eq!((s.bytes, s.read_bytes, s.write_bytes), (29_184, 12_288, 16_896));
    assert!((s.mean_request_bytes - 29_184.0 / 7.0).abs() < 1e-9);
    assert_eq!((s.written_distinct_bytes, s.accessed_distinct_bytes), (4 * 4096, 5 * 4096));
    assert_eq!((s.written_bands, s.written_band_bytes), (2, 5 * 4096));
    assert_eq!((s.accessed_bands, s.accessed_band_bytes), (3, 9 * 4096));
    assert_eq!((s.max_offset, s.max_end), (65_536, 69_632));
    // FILETIME ticks 10..70 → 1000..7000 ns.
    assert_eq!((s.first_time_ns, s.last_time_ns, s.duration_ns), (Some(1000), Some(7000), 6000));
    assert_eq!(s.volumes.into_iter().collect::<Vec<_>>(), vec![(0, 6), (1, 1)]);

    let mut r = open(fixture("stats.csv").to_str().unwrap(), &OpenOptions::default()).unwrap();
    let f = footprint(&mut *r, &bands).unwrap();
    assert_eq!(
        (f.written_bytes, f.accessed_bytes, f.written_band_bytes, f.accessed_band_bytes, f.max_end),
        (16_384, 20_480, 20_480, 36_864, 69_632)
    );
}

#[test]
fn empty_trace_and_volume_filter() {
    let opts = OpenOptions { volume: Some(9), ..OpenOptions::default() };
    let mut r = open(fixture("stats.csv").to_str().unwrap(), &opts).unwrap();
    let s = trace_stats(&mut *r, &BandConfig::default()).unwrap();
    assert_eq!((s.requests, s.filtered, s.first_time_ns, s.accessed_band_bytes), (0, 7, None, 0));
    assert_eq!(s.write_pct_pages, 0.0);
}

#[test]
fn serializes_to_json() {
    let mut r = open(fixture("msr.csv").to_str().unwrap(), &OpenOptions::default()).unwrap();
    let s = trace_stats(&mut *r, &BandConfig::default()).unwrap();
    let v: serde_json::Value = serde_json::to_value(&s).unwrap();
    assert_eq!(v["requests"], 5);
    assert_eq!(v["volumes"]["1"], 1);
}

#[test]
fn multi_terabyte_ranges_stay_sparse() {
    use shingled_core::Op;
    use shingled_trace::{Request, TraceReader};
    // Requests 2^shift bytes apart: a dense bitmap would need gigabytes, the sparse set a few
    // chunks.
    struct Far(u64, u32);
    impl TraceReader for Far {
        fn next_request(&mut self) -> Result<Option<Request>, shingled_trace::TraceError> {
            self.0 += 1;
            Ok((self.0 <= 5).then(|| Request {
                time_ns: self.0,
                volume: 0,
                op: Op::Write,
                offset: self.0 << self.1,
                len: 8192,
            }))
        }
        fn format_name(&self) -> &'static str {
            "far"
        }
    }
    // 4 TiB apart (20 TiB span): a variable layout is fine.
    let s = trace_stats(&mut Far(0, 42), &BandConfig::default()).unwrap();
    assert_eq!((s.written_distinct_bytes, s.written_bands), (5 * 8192, 5));
    // 64 TiB apart (320 TiB span): fixed bands only.
    let s = trace_stats(&mut Far(0, 46), &BandConfig::Fixed { size: ByteSize::mb(20) }).unwrap();
    // 20 MB bands are 4882 whole blocks; the map ends one block past the last one touched, so
    // the fifth band is cut short there.
    let band = 4882u64;
    let capacity = (5u64 << 34) + 2;
    let last = capacity - (capacity - 1) / band * band;
    assert_eq!((s.written_distinct_bytes, s.written_bands), (5 * 8192, 5));
    assert_eq!(s.written_band_bytes, (4 * band + last) * 4096);
    let e = trace_stats(&mut Far(0, 46), &BandConfig::default()).unwrap_err().to_string();
    assert!(e.contains("fixed band size"), "{e}");
}
