//! `shingled zone`: create, report (text and JSON), finish, reset, errors with errno names.

use std::process::{Command, Output};

fn shingled(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_shingled")).args(args).output().expect("run shingled")
}

fn ok(args: &[&str]) -> String {
    let o = shingled(args);
    assert!(o.status.success(), "{args:?}: {}", String::from_utf8_lossy(&o.stderr));
    String::from_utf8(o.stdout).unwrap()
}

#[test]
fn create_report_finish_reset_round_trip() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("dev.zbd");
    let f = f.to_str().unwrap();
    let out = ok(&[
        "zone",
        "create",
        f,
        "--zones",
        "4",
        "--zone-size",
        "1MiB",
        "--conventional",
        "1",
        "--dialect",
        "zns",
    ]);
    assert!(out.contains("4 zones of 1MiB (1 conventional)"), "{out}");
    let text = ok(&["zone", "report", f]);
    assert_eq!(text.lines().count(), 4);
    assert!(text.lines().nth(1).unwrap().contains("zcond: 1(em) [type: 2(SEQ_WRITE_REQUIRED)]"), "{text}");
    ok(&["zone", "finish", f, "--offset", "2048", "--count", "2"]);
    let v: serde_json::Value =
        serde_json::from_str(&ok(&["zone", "report", f, "--json", "--filter", "full"])).unwrap();
    let zones = v["zones"].as_array().unwrap();
    assert_eq!(zones.len(), 2);
    assert_eq!((zones[0]["start"].as_u64(), zones[0]["wp"].as_u64()), (Some(2048), Some(4096)));
    assert_eq!(v["device"]["dialect"], "zns");
    // ZNS: closing an EMPTY zone is an invalid transition
    let o = shingled(&["zone", "close", f, "--offset", "6144", "--count", "1"]);
    assert!(!o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("EIO"));
    // EINVAL for a range that does not start at a zone
    let o = shingled(&["zone", "reset", f, "--offset", "100"]);
    assert!(String::from_utf8_lossy(&o.stderr).contains("EINVAL"));
    ok(&["zone", "reset", f]);
    assert_eq!(ok(&["zone", "report", f, "--filter", "full"]), "");
    // an existing file is not overwritten
    assert!(!shingled(&["zone", "create", f, "--zones", "4", "--zone-size", "1MiB"]).status.success());
}
