//! Every format's fixture read back to exact requests.

use crate::{fixture, read_all, req};
use shingled_core::Op::{Read, Write};
use shingled_trace::OpenOptions;

fn all(name: &str) -> (Vec<shingled_trace::Request>, u64, u64) {
    read_all(&fixture(name), &OpenOptions::default())
}

#[test]
fn msr_without_header() {
    let (got, skipped, filtered) = all("msr.csv");
    assert_eq!(
        got,
        vec![
            req(12_816_637_200_306_162_900, 0, Read, 4096, 4096),
            req(12_816_637_200_306_172_900, 1, Write, 8192, 8192),
            req(12_816_637_200_306_272_900, 0, Write, 12288, 512),
            req(12_816_637_200_307_272_900, 0, Read, 0, 65536),
            req(12_816_637_200_308_272_900, 2, Write, 1 << 30, 4096),
        ]
    );
    assert_eq!((skipped, filtered), (0, 0));
}

#[test]
fn msr_with_header_and_crlf() {
    let (got, _, _) = all("msr-header.csv");
    assert_eq!(
        got,
        vec![
            req(12_816_637_200_306_162_900, 3, Write, 512, 1024),
            req(12_816_637_200_306_163_000, 3, Read, 1024, 2048)
        ]
    );
}

#[test]
fn gzip_is_decompressed_on_the_fly() {
    assert_eq!(all("msr.csv.gz"), all("msr.csv"));
    let r = shingled_trace::open(fixture("msr.csv.gz").to_str().unwrap(), &OpenOptions::default()).unwrap();
    assert_eq!(r.format_name(), "msr");
}

#[test]
fn sac_pages_numbered_by_line() {
    let (got, _, _) = all("sac.txt");
    assert_eq!(
        got,
        vec![
            req(0, 0, Write, 409_600, 4096),
            req(1, 0, Read, 409_600, 4096),
            req(2, 0, Write, 28_672, 4096),
            req(3, 0, Read, 0, 4096)
        ]
    );
}

#[test]
fn blkparse_issue_events() {
    let (got, skipped, _) = all("blkparse.txt");
    let sda = 8 << 20;
    let sdb = (8 << 20) | 16;
    assert_eq!(
        got,
        vec![
            req(9_507_758, sda, Write, 223_490 * 512, 56 * 512),
            req(10_000_000, sdb, Read, 2048 * 512, 8 * 512),
            req(30_000_000, sda, Write, 1_000_000 * 512, 16 * 512),
        ]
    );
    // The bare flush (FWS), the discard (D) and the zero-sector read.
    assert_eq!(skipped, 3);
}

#[test]
fn blkparse_other_actions() {
    let opts = |a: u8| OpenOptions { blkparse_action: a, ..OpenOptions::default() };
    let (c, _, _) = read_all(&fixture("blkparse.txt"), &opts(b'C'));
    assert_eq!(c, vec![req(12_003_000, 8 << 20, Write, 223_490 * 512, 56 * 512)]);
    let (q, _, _) = read_all(&fixture("blkparse.txt"), &opts(b'Q'));
    assert_eq!(q, vec![req(0, 8 << 20, Write, 223_490 * 512, 56 * 512)]);
}

#[test]
fn disksim_milliseconds_and_hex_flags() {
    let (got, _, _) = all("disksim.txt");
    assert_eq!(
        got,
        vec![
            req(0, 0, Read, 512_000, 4096),
            req(1_500_000, 0, Write, 1_024_000, 8192),
            req(12_250_000, 1, Read, 0, 512),
            req(100_000_001, 2, Write, 3584, 1024),
        ]
    );
}

#[test]
fn mqsim_nanoseconds_and_type() {
    let (got, _, _) = all("mqsim.trace");
    assert_eq!(
        got,
        vec![
            req(938_513_000, 4, Write, 264_719_034 * 512, 8192),
            req(938_828_000, 3, Read, 197_570_570 * 512, 8192),
            req(939_010_000, 0, Write, 0, 512),
        ]
    );
}

fn vscsi_expected() -> Vec<shingled_trace::Request> {
    vec![
        req(5_000_000, 0, Write, 512_000, 4096),
        req(5_001_000, 0, Read, 4096, 512),
        req(6_000_000, 0, Read, (1u64 << 32) * 512, 65536),
        req(7_000_000, 0, Write, 8192, 8192),
    ]
}

#[test]
fn vscsi_v1_and_v2() {
    for name in ["vscsi-v1.vscsi", "vscsi-v2.vscsi"] {
        let (got, skipped, _) = all(name);
        assert_eq!(got, vscsi_expected(), "{name}");
        assert_eq!(skipped, 1, "{name}: the TEST UNIT READY record");
    }
}

#[test]
fn vscsi_csv() {
    let (got, skipped, _) = all("vscsi.csv");
    assert_eq!(
        got,
        vec![
            req(5_633_898_000_000_000, 0, Write, 42_932_745 * 512, 512),
            req(5_633_898_500_000_000, 0, Read, 4096, 4096),
            req(5_633_900_000_001_000, 0, Write, 8192, 8192),
        ]
    );
    assert_eq!(skipped, 1);
}

#[test]
fn alibaba() {
    let (got, _, _) = all("alibaba.csv");
    assert_eq!(
        got,
        vec![
            req(1_577_808_000_000_046_000, 0, Read, 126_703_661_056, 4096),
            req(1_577_808_000_000_100_000, 1, Write, 4096, 8192),
            req(1_577_808_000_001_000_000, 0, Write, 0, 512),
        ]
    );
}

#[test]
fn bin_fixture() {
    let (got, _, _) = all("tiny.bin");
    assert_eq!(
        got,
        vec![
            req(5, 0, Read, 4096, 4096),
            req(6, 7, Write, 8192, 512),
            req(7, u32::MAX, Write, 1 << 62, 65536)
        ]
    );
}

#[test]
fn volume_filter() {
    let vol = |name: &str, v: u32| {
        let (got, _, filtered) =
            read_all(&fixture(name), &OpenOptions { volume: Some(v), ..OpenOptions::default() });
        assert!(got.iter().all(|r| r.volume == v), "{name}");
        (got.len(), filtered)
    };
    assert_eq!(vol("msr.csv", 0), (3, 2));
    assert_eq!(vol("msr.csv.gz", 2), (1, 4));
    assert_eq!(vol("alibaba.csv", 1), (1, 2));
    assert_eq!(vol("disksim.txt", 2), (1, 3));
    assert_eq!(vol("mqsim.trace", 4), (1, 2));
    assert_eq!(vol("blkparse.txt", (8 << 20) | 16), (1, 2));
    assert_eq!(vol("tiny.bin", 7), (1, 2));
    assert_eq!(vol("vscsi-v1.vscsi", 0), (4, 0));
    assert_eq!(vol("sac.txt", 1), (0, 4));
}

#[test]
fn explicit_format_matches_detection() {
    for (name, f) in crate::detect::FIXTURES {
        let detected = all(name);
        let explicit = read_all(&fixture(name), &crate::with_format(*f));
        assert_eq!(detected, explicit, "{name}");
    }
}

#[test]
fn synth_specs_get_the_volume_filter() {
    let spec = "synth:wdev,pages=300,seed=1,volume=3";
    let opts = |v: u32| OpenOptions { volume: Some(v), ..OpenOptions::default() };
    let (all, _, _) = crate::drain(&mut *shingled_trace::open(spec, &OpenOptions::default()).unwrap());
    assert!(!all.is_empty());
    let (kept, _, filtered) = crate::drain(&mut *shingled_trace::open(spec, &opts(3)).unwrap());
    assert_eq!((kept.len(), filtered), (all.len(), 0));
    let (none, _, filtered) = crate::drain(&mut *shingled_trace::open(spec, &opts(4)).unwrap());
    assert_eq!((none.len(), filtered), (0, all.len() as u64));
}

#[test]
fn oracle_general_fixtures() {
    let want = vec![
        req(5_000_000_000, 0, Read, 7 * 4096, 4096),
        req(6_000_000_000, 0, Read, 0, 4096),
        req(7_000_000_000, 0, Read, 7 * 4096, 4096),
    ];
    assert_eq!(all("tiny.oracleGeneral").0, want);
    assert_eq!(all("tiny.oracleGeneral.zst").0, want);
}
