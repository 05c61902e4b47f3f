//! Malformed input: errors name file, line (record), field and value; `skip_bad_lines` counts.

use crate::{drain, temp_file, with_format};
use shingled_trace::{open, Format, OpenOptions, TraceError};

/// Reads `content` (as file `name`) until the first error and returns it.
fn first_error(name: &str, content: &[u8], opts: &OpenOptions) -> TraceError {
    let (_d, p) = temp_file(name, content);
    let mut r = match open(p.to_str().unwrap(), opts) {
        Ok(r) => r,
        Err(e) => return e,
    };
    loop {
        match r.next_request() {
            Ok(Some(_)) => {}
            Ok(None) => panic!("{name}: no error"),
            Err(e) => return e,
        }
    }
}

/// Asserts a parse error with exactly these coordinates, and that its message shows them.
fn assert_parse(e: TraceError, file: &str, line_no: u64, field_name: &str, val: &str) {
    let msg = e.to_string();
    match e {
        TraceError::Parse { path, line, field, value, .. } => {
            assert!(path.ends_with(file), "{msg}");
            assert_eq!((line, field, value.as_str()), (line_no, field_name, val), "{msg}");
        }
        other => panic!("expected a parse error, got {other:?}"),
    }
    assert!(msg.contains(&format!("{file}:{line_no}: field {field_name}")), "{msg}");
    assert!(msg.contains(&format!("{val:?}")), "{msg}");
}

const MSR_OK: &str = "128166372003061629,wdev,0,Read,4096,4096,1000\n";

#[test]
fn msr_errors() {
    let bad = format!("{MSR_OK}{MSR_OK}128166372003061629,wdev,0,Erase,4096,4096,1000\n");
    assert_parse(first_error("a.csv", bad.as_bytes(), &OpenOptions::default()), "a.csv", 3, "Type", "Erase");
    let bad = format!("{MSR_OK}128166372003061629,wdev,0,Read,12x,4096,1000\n");
    assert_parse(first_error("b.csv", bad.as_bytes(), &OpenOptions::default()), "b.csv", 2, "Offset", "12x");
    let bad = format!("{MSR_OK}128166372003061629,wdev,0\n");
    assert_parse(first_error("c.csv", bad.as_bytes(), &with_format(Format::Msr)), "c.csv", 2, "Type", "");
    let bad = format!("{MSR_OK}1,wdev,0,Read,0,4294967296,1\n");
    assert_parse(
        first_error("d.csv", bad.as_bytes(), &OpenOptions::default()),
        "d.csv",
        2,
        "Size",
        "4294967296",
    );
    let bad = format!("{MSR_OK}1,wdev,0,Read,18446744073709551615,4096,1\n");
    let e = first_error("e.csv", bad.as_bytes(), &OpenOptions::default());
    assert!(e.to_string().contains("overflows"), "{e}");
    let bad = format!("{MSR_OK}999999999999999999,wdev,0,Read,0,4096,1\n");
    assert_parse(
        first_error("f.csv", bad.as_bytes(), &OpenOptions::default()),
        "f.csv",
        2,
        "Timestamp",
        "999999999999999999",
    );
}

#[test]
fn errors_per_format() {
    let cases: &[(Format, &str, &str, u64, &str, &str)] = &[
        (Format::Sac, "s.txt", "1 0 5\n2 0 5\n", 2, "op", "2"),
        (Format::Sac, "s.txt", "1 0 5\n1 x 5\n", 2, "int", "x"),
        (Format::Sac, "s.txt", "1 0 5 9\n", 1, "block", "9"),
        (
            Format::Blkparse,
            "b.txt",
            "8,0 1 1 0.1 5 D W 100 + 8 [a]\n8,0 1 2 0.2 5 D W abc + 8 [a]\n",
            2,
            "sector",
            "abc",
        ),
        (Format::Blkparse, "b.txt", "8,0 1 1 0.1 5 D W 100 + 8 [a]\nhello\n", 2, "device", "hello"),
        (Format::Blkparse, "b.txt", "8,0 1 1 x 5 D W 100 + 8 [a]\n", 1, "time", "x"),
        (Format::Blkparse, "b.txt", "8,0 1 1 0.1 5 D W 100 - 8 [a]\n", 1, "nsectors", "-"),
        (Format::Disksim, "d.txt", "0.5 0 10 8 1\n0.6 0 10 8 zz\n", 2, "flags", "zz"),
        (Format::Disksim, "d.txt", "0.5 0 10 8 1\n0.6 -1 10 8 0\n", 2, "devno", "-1"),
        (Format::Mqsim, "m.trace", "100 0 10 8 1\n200 0 10 8 2\n", 2, "type", "2"),
        (Format::Mqsim, "m.trace", "100 0 10 8 1\n1.5 0 10 8 0\n", 2, "time", "1.5"),
        (Format::Mqsim, "m.trace", "100 0 10\n", 1, "nsectors", ""),
        (
            Format::VscsiCsv,
            "v.csv",
            "version,time,op,size,lbn\n1,2,2a,512,9\n1,2,xyz,512,9\n",
            3,
            "op",
            "xyz",
        ),
        (Format::VscsiCsv, "v.csv", "1,2,2a,512,9\n1,-2,2a,512,9\n", 2, "time", "-2"),
        (Format::Alibaba, "a.csv", "0,R,0,4096,1\n0,X,0,4096,1\n", 2, "opcode", "X"),
        (Format::Alibaba, "a.csv", "0,R,0,4096,1\n0,R,0,4096\n", 2, "timestamp", ""),
    ];
    for &(f, file, content, line, field, value) in cases {
        // Explicitly named, and (where the first line is good) detected. MQSim lines that are
        // bad MQSim can still be good DiskSim, so detection legitimately picks DiskSim there.
        assert_parse(first_error(file, content.as_bytes(), &with_format(f)), file, line, field, value);
        if line > 1 && f != Format::Mqsim {
            assert_parse(
                first_error(file, content.as_bytes(), &OpenOptions::default()),
                file,
                line,
                field,
                value,
            );
        }
    }
}

fn vscsi_v1(records: &[(u16, u16, u64)]) -> Vec<u8> {
    let mut b = Vec::new();
    for &(cmd, ver, lbn) in records {
        b.extend_from_slice(&1u32.to_le_bytes());
        b.extend_from_slice(&4096u32.to_le_bytes());
        b.extend_from_slice(&1u32.to_le_bytes());
        b.extend_from_slice(&cmd.to_le_bytes());
        b.extend_from_slice(&ver.to_le_bytes());
        b.extend_from_slice(&lbn.to_le_bytes());
        b.extend_from_slice(&1000u64.to_le_bytes());
    }
    b
}

#[test]
fn binary_errors_name_the_record() {
    // Record 3 claims version 2 inside a version-1 trace.
    let data = vscsi_v1(&[(0x28, 0x100, 1), (0x2a, 0x100, 2), (0x2a, 0x200, 3)]);
    let e = first_error("x.vscsi", &data, &OpenOptions::default());
    assert_parse(e, "x.vscsi", 3, "ver", "0x0200");
    // A partial final record.
    let mut data = vscsi_v1(&[(0x28, 0x100, 1), (0x2a, 0x100, 2)]);
    data.extend_from_slice(&[1, 2, 3]);
    assert_parse(first_error("t.vscsi", &data, &OpenOptions::default()), "t.vscsi", 3, "record", "3 bytes");
    // An lbn whose byte offset overflows.
    let data = vscsi_v1(&[(0x28, 0x100, 1), (0x2a, 0x100, u64::MAX / 2)]);
    assert_parse(
        first_error("o.vscsi", &data, &OpenOptions::default()),
        "o.vscsi",
        2,
        "lbn",
        &(u64::MAX / 2).to_string(),
    );
    // A truncated bin trace.
    let mut bin = std::fs::read(crate::fixture("tiny.bin")).unwrap();
    bin.truncate(bin.len() - 5);
    assert_parse(first_error("t.bin", &bin, &OpenOptions::default()), "t.bin", 3, "record", "19 bytes");
}

#[test]
fn skip_bad_lines_counts_and_continues() {
    let content = format!("{MSR_OK}garbage\n{MSR_OK}1,h,0,Read,x,1,1\n{MSR_OK}");
    let (_d, p) = temp_file("bad.csv", content.as_bytes());
    let opts = OpenOptions { format: Some(Format::Msr), skip_bad_lines: true, ..OpenOptions::default() };
    let mut r = open(p.to_str().unwrap(), &opts).unwrap();
    let (got, skipped, _) = drain(&mut *r);
    assert_eq!((got.len(), skipped), (3, 2));
    // Without the option the first bad line stops the read.
    let e = first_error("bad.csv", content.as_bytes(), &with_format(Format::Msr));
    assert_parse(e, "bad.csv", 2, "Timestamp", "garbage");
}

#[test]
fn skip_bad_records_in_binary() {
    // (Records 1 and 2 decide the version, so the bad one comes third.)
    let data = vscsi_v1(&[(0x28, 0x100, 1), (0x2a, 0x100, 2), (0x2a, 0x300, 3), (0x2a, 0x100, 4)]);
    let (_d, p) = temp_file("s.vscsi", &data);
    let opts = OpenOptions { skip_bad_lines: true, ..OpenOptions::default() };
    let (got, skipped, _) = crate::read_all(&p, &opts);
    assert_eq!((got.len(), skipped), (3, 1));
}

#[test]
fn blank_lines_are_ignored() {
    let content = format!("\n{MSR_OK}\n   \n{MSR_OK}");
    let (_d, p) = temp_file("blank.csv", content.as_bytes());
    let (got, skipped, _) = crate::read_all(&p, &OpenOptions::default());
    assert_eq!((got.len(), skipped), (2, 0));
}
