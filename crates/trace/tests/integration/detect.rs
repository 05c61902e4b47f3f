//! Format detection from content.

use crate::{fixture, temp_file};
use shingled_trace::{detect_format, open, Format, OpenOptions, TraceError};

/// Every committed fixture and its format.
pub const FIXTURES: &[(&str, Format)] = &[
    ("msr.csv", Format::Msr),
    ("msr-header.csv", Format::Msr),
    ("msr.csv.gz", Format::Msr),
    ("stats.csv", Format::Msr),
    ("sac.txt", Format::Sac),
    ("blkparse.txt", Format::Blkparse),
    ("disksim.txt", Format::Disksim),
    ("mqsim.trace", Format::Mqsim),
    ("vscsi-v1.vscsi", Format::Vscsi),
    ("vscsi-v2.vscsi", Format::Vscsi),
    ("vscsi.csv", Format::VscsiCsv),
    ("alibaba.csv", Format::Alibaba),
    ("tiny.bin", Format::Bin),
    ("tiny.oracleGeneral", Format::OracleGeneral),
    ("tiny.oracleGeneral.zst", Format::OracleGeneral),
];

#[test]
fn every_fixture_is_recognised() {
    for (name, f) in FIXTURES {
        assert_eq!(detect_format(&fixture(name)).unwrap(), *f, "{name}");
        let r = open(fixture(name).to_str().unwrap(), &OpenOptions::default()).unwrap();
        assert_eq!(r.format_name(), f.name(), "{name}");
    }
}

#[test]
fn unrecognised_content_lists_the_formats() {
    let (_d, p) = temp_file("notes.txt", b"hello world\nthis is not a trace\n");
    let e = open(p.to_str().unwrap(), &OpenOptions::default()).err().unwrap();
    assert!(matches!(e, TraceError::Format { .. }));
    let msg = e.to_string();
    assert!(msg.contains("notes.txt") && msg.contains("cannot recognise"), "{msg}");
    assert!(msg.contains("hello world"), "quotes the first line: {msg}");
    for f in Format::ALL {
        assert!(msg.contains(f.name()), "lists {f}: {msg}");
    }
}

#[test]
fn empty_file_needs_a_format() {
    let (_d, p) = temp_file("empty.csv", b"");
    let e = open(p.to_str().unwrap(), &OpenOptions::default()).err().unwrap().to_string();
    assert!(e.contains("empty"), "{e}");
    let mut r = open(p.to_str().unwrap(), &crate::with_format(Format::Msr)).unwrap();
    assert_eq!(r.next_request().unwrap(), None);
}

#[test]
fn header_only_is_not_enough_evidence() {
    let (_d, p) = temp_file("h.csv", b"Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime\n");
    assert!(detect_format(&p).is_err());
}

#[test]
fn missing_file_is_an_io_error_naming_it() {
    let e = open("/nonexistent/trace.csv", &OpenOptions::default()).err().unwrap();
    assert!(matches!(e, TraceError::Io { .. }));
    assert!(e.to_string().contains("/nonexistent/trace.csv"));
}

#[test]
fn gzip_of_a_binary_trace() {
    use std::io::Write;
    let raw = std::fs::read(fixture("vscsi-v2.vscsi")).unwrap();
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    gz.write_all(&raw).unwrap();
    let (_d, p) = temp_file("v2.vscsi.gz", &gz.finish().unwrap());
    assert_eq!(detect_format(&p).unwrap(), Format::Vscsi);
    let (got, _, _) = crate::read_all(&p, &OpenOptions::default());
    assert_eq!(got.len(), 4);
}
