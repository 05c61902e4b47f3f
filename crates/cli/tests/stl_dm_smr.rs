//! `shingled stl format dm-smr`, `stl stats` and `stl check` on an emulated DM-SMR drive: the
//! configuration asked for is the one kept, the statistics speak the model's terms, the format
//! refuses an existing file, and the check is clean on a fresh drive.

use std::path::Path;
use std::process::{Command, Output};

fn shingled(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_shingled")).args(args).output().expect("run shingled")
}

fn ok(o: &Output) -> String {
    let text = format!("{}{}", String::from_utf8_lossy(&o.stderr), String::from_utf8_lossy(&o.stdout));
    assert!(o.status.success(), "failed: {text}");
    text
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

#[test]
fn format_stats_and_check_an_emulated_drive() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("smr.img");
    let text = ok(&shingled(&[
        "stl",
        "format",
        "dm-smr",
        s(&f),
        "--size",
        "64MiB",
        "--drive",
        "sac-emulator",
        "--pb-size",
        "2MiB",
        "--bands",
        "fixed:4MiB",
    ]));
    assert!(text.contains("as dm-smr"), "{text}");
    assert_eq!(std::fs::metadata(&f).unwrap().len(), 64 << 20);
    let o = shingled(&["stl", "stats", s(&f), "--output", "json"]);
    ok(&o);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["layer"], "dm-smr");
    let st = &v["stats"];
    assert_eq!(st["drive"], "sac-emulator");
    assert_eq!(st["pb_bytes"], 2 << 20);
    assert_eq!((st["pb_flavour"].as_str(), st["pb_free"].as_str()), (Some("append-only"), Some("at-head")));
    // 64 MiB less the headers, the tables and the PB, in 4 MiB bands (the last one shorter).
    assert_eq!(st["bands"], 16);
    for k in ["rmws", "pb_writes", "band_bytes_written", "pb_blocks_cleaned"] {
        assert_eq!(st["counts"][k], 0, "{k}: {st}");
    }
    let table = ok(&shingled(&["stl", "stats", s(&f)]));
    assert!(table.contains("counts.rmws") && table.contains("counts.pb_writes"), "{table}");
    assert!(ok(&shingled(&["stl", "check", s(&f)])).contains("dm-smr: clean"));
    // The file exists now: format refuses it.
    let o = shingled(&["stl", "format", "dm-smr", s(&f), "--size", "64MiB"]);
    assert!(!o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("already exists"));
    // A refused format leaves no file behind.
    let g = dir.path().join("refused.img");
    let o = shingled(&["stl", "format", "dm-smr", s(&g), "--drive", "pore-emulator"]);
    assert!(!o.status.success());
    assert!(!g.exists());
}
