//! `shingled probe` as a user runs it: on a small model, on a file, and with bad input.

use std::path::PathBuf;
use std::process::{Command, Output};

fn shingled(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_shingled")).args(args).output().expect("run shingled")
}

fn data(rel: &str) -> String {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/data")
        .join(rel)
        .to_string_lossy()
        .into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// A 2 GB model with an 8 MiB PB and 256 KiB bands (SAC's emulator, which never cleans when
/// idle): both probes find them, write the evidence and a profile the simulator loads.
#[test]
fn probe_all_on_a_small_model_writes_evidence_and_a_loadable_profile() {
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("csv");
    let png = dir.path().join("png");
    std::fs::create_dir(&png).unwrap();
    let profile = dir.path().join("detected.toml");
    let o = shingled(&[
        "probe",
        "all",
        "--drive",
        "sac-emulator",
        "--drive-capacity",
        "2GB",
        "--pb-size",
        "8MiB",
        "--bands",
        "fixed:256KiB",
        "--noise",
        "0.2",
        "--upper-bound",
        "256MiB",
        "--read-size",
        "32KiB",
        "--output",
        "json",
        "--csv-dir",
        csv.to_str().unwrap(),
        "--png",
        png.join("probe.png").to_str().unwrap(),
        "--drive-file",
        profile.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let pb = v["pb"]["pb_bytes"].as_f64().unwrap();
    assert!((pb / (8 << 20) as f64 - 1.0).abs() <= 0.05, "PB {pb}");
    let band = v["bands"]["samples"][0]["band_size"].as_f64().unwrap();
    assert!((band / (256 << 10) as f64 - 1.0).abs() <= 0.10, "band {band}");
    assert_eq!(v["layout"]["kind"], "fixed");
    assert!(!v["pb"]["windows"].as_array().unwrap().is_empty());

    let iops = std::fs::read_to_string(csv.join("pb_iops.csv")).unwrap();
    assert!(iops.starts_with("window,first_op,bytes_before") && iops.lines().count() > 20, "{iops}");
    let reads = std::fs::read_to_string(csv.join("bands_reads.csv")).unwrap();
    assert!(reads.lines().count() > 100 && reads.contains(",1,"), "low reads marked");
    assert!(std::fs::read_to_string(csv.join("bands_found.csv")).unwrap().lines().count() >= 4);
    assert!(std::fs::metadata(png.join("probe-pb-iops.png")).unwrap().len() > 1000);

    let text = std::fs::read_to_string(&profile).unwrap();
    assert!(text.contains("model = \"dm-smr\"") && text.contains("pb_size"), "{text}");
    let o = shingled(&[
        "sim",
        "--drive-file",
        profile.to_str().unwrap(),
        "--trace",
        &data("golden/tiny.csv"),
        "--no-cache",
        "--output",
        "json",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let r: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(r["total"]["requests"], 40);
}

#[test]
fn probe_pb_table_on_a_hidden_drive_prints_the_truth() {
    let o = shingled(&["probe", "pb", "--hidden", "5"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let s = String::from_utf8_lossy(&o.stdout);
    assert!(s.contains("PB capacity (4KiB writes, QD1)") && s.contains("hidden drive: seed 5"), "{s}");
    assert!(s.contains("expected PB for 4KiB writes"), "{s}");
}

/// Hidden drive 1 has bands shrinking over the LBAs. Probed in one region it looks fixed, and
/// the output says what that cannot tell (text and JSON); probed in three regions spread over
/// the drive the trend is found and nothing is left to say.
#[test]
fn a_layout_from_one_region_says_it_cannot_tell_fixed_from_lba_dependent() {
    let o = shingled(&["probe", "all", "--hidden", "1", "--progress", "none"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = String::from_utf8_lossy(&o.stdout);
    let line = text.lines().find(|l| l.starts_with("band layout:")).unwrap_or_default();
    assert!(
        line.contains("fixed")
            && line.contains("within the one region probed")
            && line.contains("cannot tell fixed from LBA-dependent bands"),
        "{text}"
    );
    let o = shingled(&["probe", "all", "--hidden", "1", "--progress", "none", "--output", "json"]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["layout"]["kind"], "fixed");
    assert!(v["layout_scope"].as_str().unwrap().contains("cannot tell fixed from LBA-dependent"), "{v}");
    let o = shingled(&[
        "probe",
        "all",
        "--hidden",
        "1",
        "--target-count",
        "3",
        "--progress",
        "none",
        "--output",
        "json",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["layout"]["kind"], "lba-dependent", "{}", v["layout"]);
    assert!(v["layout_scope"].is_null(), "{}", v["layout_scope"]);
}

#[test]
fn devices_need_confirmation_and_files_are_not_grown() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("disk.img");
    std::fs::write(&f, vec![0u8; 1 << 20]).unwrap();
    let fs = f.to_str().unwrap();
    let o = shingled(&["probe", "pb", "--device", fs]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("--destroy-data"), "{}", stderr(&o));
    let o = shingled(&["probe", "pb", "--device", fs, "--destroy-data", "--upper-bound", "64MiB"]);
    assert_eq!(o.status.code(), Some(1));
    let e = stderr(&o);
    assert!(e.contains("67108864") && e.contains("not grown"), "{e}");
    let o = shingled(&["probe", "pb", "--device", "/nonexistent/disk", "--destroy-data"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("/nonexistent/disk"), "{}", stderr(&o));
}

#[test]
fn bad_input_is_a_clear_error() {
    for (args, needle) in [
        (vec!["probe", "pb", "--drive", "cmr-7200-500g"], "no persistent buffer"),
        (vec!["probe", "pb", "--drive", "nope"], "unknown drive profile"),
        (vec!["probe", "pb", "--hidden", "1", "--block-size", "1000"], "block_size"),
        (vec!["probe", "bands", "--hidden", "1", "--assume-pb", "8MiB", "--targets", "200%"], "percentage"),
        (vec!["probe", "pb", "--hidden", "1", "--upper-bound", "1TB"], "--upper-bound"),
    ] {
        let o = shingled(&args);
        assert_eq!(o.status.code(), Some(1), "{args:?}");
        assert!(stderr(&o).contains(needle), "{args:?}: {}", stderr(&o));
    }
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.toml");
    std::fs::write(&bad, "model = \"dm-smr\"\npb_sise = \"1GB\"\n").unwrap();
    let o = shingled(&["sim", "--drive-file", bad.to_str().unwrap(), "--trace", &data("golden/tiny.csv")]);
    assert_eq!(o.status.code(), Some(1));
    let e = stderr(&o);
    assert!(e.contains("bad.toml") && e.contains("pb_sise"), "{e}");
}
