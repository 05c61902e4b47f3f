//! `shingled cache` as a user runs it (no FUSE needed; serving is in cache_ext4.rs): create,
//! stats, check, flush, detach, lost, replay — exit codes, messages naming what is wrong, JSON.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn shingled(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_shingled")).args(args).output().expect("run shingled")
}

fn golden(rel: &str) -> String {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/data/golden")
        .join(rel)
        .to_string_lossy()
        .into_owned()
}

fn ok(o: &Output) -> String {
    assert!(
        o.status.success(),
        "failed ({}):\n{}\n{}",
        o.status,
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// Fails with exit status 1 (anyhow's error exit, or a check's) and returns stderr + stdout.
fn fails(o: &Output) -> String {
    assert_eq!(o.status.code(), Some(1), "expected exit status 1: {o:?}");
    format!("{}{}", String::from_utf8_lossy(&o.stderr), String::from_utf8_lossy(&o.stdout))
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

fn backing(dir: &Path, mib: u64) -> PathBuf {
    let p = dir.join("backing.img");
    std::fs::File::create(&p).unwrap().set_len(mib << 20).unwrap();
    p
}

#[test]
fn create_stats_check_flush_detach() {
    let dir = tempfile::tempdir().unwrap();
    let b = backing(dir.path(), 32);
    let c = dir.path().join("cache.img");
    let out =
        ok(&shingled(&["cache", "create", s(&c), "--backing", s(&b), "--size", "4MiB", "--policy", "lru"]));
    assert!(out.contains("policy lru") && out.contains("slots"), "{out}");
    let v: serde_json::Value =
        serde_json::from_str(&ok(&shingled(&["cache", "stats", s(&c), "--output", "json"]))).unwrap();
    assert_eq!(v["state"], "attached");
    assert_eq!(v["backing_blocks"], 32 * 256);
    assert_eq!(v["setup"]["policy"]["policy"], "lru");
    assert_eq!(v["setup"]["backing_path"], std::fs::canonicalize(&b).unwrap().to_str().unwrap());
    assert_eq!(v["cached_blocks"], 0);
    let slots = v["slots"].as_u64().unwrap();
    assert_eq!(
        v["capacity"].as_u64().unwrap(),
        slots - (slots / 64).max(1),
        "default reserve: 1/64 of the slots"
    );
    assert!(ok(&shingled(&["cache", "check", s(&c)])).contains("clean"));
    // A second create on an attached cache is refused, naming the way out.
    let e = fails(&shingled(&["cache", "create", s(&c), "--backing", s(&b)]));
    assert!(e.contains("already holds") && e.contains("--force"), "{e}");
    assert!(ok(&shingled(&["cache", "flush", s(&c)])).contains("wrote back 0 dirty blocks"));
    let lost: serde_json::Value =
        serde_json::from_str(&ok(&shingled(&["cache", "lost", s(&c), "--output", "json"]))).unwrap();
    assert_eq!(lost["lost_blocks"], 0);
    assert!(ok(&shingled(&["cache", "detach", s(&c)])).contains("alone holds every block"));
    let v: serde_json::Value =
        serde_json::from_str(&ok(&shingled(&["cache", "stats", s(&c), "--output", "json"]))).unwrap();
    assert_eq!(v["state"], "detached");
    let e = fails(&shingled(&["cache", "flush", s(&c)]));
    assert!(e.contains("detached"), "{e}");
    // A detached cache may be formatted again without --force.
    ok(&shingled(&["cache", "create", s(&c), "--backing", s(&b), "--policy", "most", "--band-size", "1MiB"]));
}

#[test]
fn bad_input_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let b = backing(dir.path(), 16);
    let c = dir.path().join("cache.img");
    let e = fails(&shingled(&["cache", "create", s(&c), "--backing", s(&b)]));
    assert!(e.contains("does not exist") && e.contains("size"), "{e}");
    let e = fails(&shingled(&[
        "cache",
        "create",
        s(&c),
        "--backing",
        s(&b),
        "--size",
        "1MiB",
        "--policy",
        "nope",
    ]));
    assert!(e.contains("nope"), "{e}");
    let e = fails(&shingled(&[
        "cache",
        "create",
        s(&c),
        "--backing",
        s(&b),
        "--size",
        "1MiB",
        "--policy",
        "pore",
    ]));
    assert!(e.contains("--pb-size"), "PORE without the PB size says how to give it: {e}");
    let e = fails(&shingled(&[
        "cache",
        "create",
        s(&c),
        "--backing",
        s(&dir.path().join("missing.img")),
        "--size",
        "1MiB",
    ]));
    assert!(e.contains("missing.img"), "{e}");
    // A damaged superblock: check says so and exits 1; stats fails naming the CRC.
    ok(&shingled(&["cache", "create", s(&c), "--backing", s(&b), "--size", "1MiB", "--force"]));
    let mut img = std::fs::read(&c).unwrap();
    img[100] ^= 0xff;
    std::fs::write(&c, &img).unwrap();
    let e = fails(&shingled(&["cache", "check", s(&c)]));
    assert!(e.contains("CRC"), "{e}");
    let e = fails(&shingled(&["cache", "stats", s(&c)]));
    assert!(e.contains("CRC") && e.contains("cache.img"), "{e}");
    // Not a cache at all.
    let e = fails(&shingled(&["cache", "check", s(&b)]));
    assert!(e.contains("SHBCACHE"), "{e}");
}

#[test]
fn replay_equals_sim_and_says_so() {
    let trace = golden("small.csv");
    let cfg = golden("tiny.toml");
    let args = ["cache", "replay", "-c", &cfg, "--trace", &trace, "--policy", "lru", "--cache-size", "24KiB"];
    let out = ok(&shingled(&args));
    assert!(out.contains("every count equal"), "{out}");
    assert!(out.contains("final check"), "{out}");
    let mut json_args = args.to_vec();
    json_args.extend(["--output", "json", "--metadata-off-clock"]);
    let v: serde_json::Value = serde_json::from_str(&ok(&shingled(&json_args))).unwrap();
    assert_eq!(v["differences"], serde_json::json!([]), "metadata off the clock: nothing differs");
    let (sim, dp) = (&v["sim"]["total"], &v["replay"]["run"]["total"]);
    for k in ["read_hits", "write_hits", "dirty_evictions", "drive_blocks_written"] {
        assert_eq!(sim[k], dp[k], "{k}");
    }
    assert_eq!(sim["drive"]["rmws"], dp["drive"]["rmws"]);
    assert!(dp["drive"]["rmws"].as_u64().unwrap() > 0, "the tiny drive does RMWs");
    let fc = &v["replay"]["data_path"]["final_check"];
    assert_eq!(fc["read_from_backing"], fc["written_blocks"]);
    // No cache: the backing device alone, still equal.
    let out = ok(&shingled(&["cache", "replay", "-c", &cfg, "--trace", &trace, "--no-cache"]));
    assert!(out.contains("every count equal"), "{out}");
    // Open loop is not what the data path runs.
    let e = fails(&shingled(&["cache", "replay", "-c", &cfg, "--trace", &trace, "--replay", "open"]));
    assert!(e.contains("closed loop"), "{e}");
    let e = fails(&shingled(&["cache", "replay", "--trace", "/nonexistent/t.csv"]));
    assert!(e.contains("/nonexistent/t.csv"), "{e}");
}

/// Formatting streams the record area: a 64 GiB cache (a sparse file) is formatted and read
/// back in bounded memory; a cache whose serving index cannot fit this machine's memory is
/// refused before anything is allocated, with what it would cost.
#[test]
fn large_caches_format_and_impossible_ones_are_refused_with_their_cost() {
    let dir = tempfile::tempdir().unwrap();
    let b = dir.path().join("big-backing.img");
    std::fs::File::create(&b).unwrap().set_len(256 << 30).unwrap();
    let c = dir.path().join("cache.img");
    let out = ok(&shingled(&["cache", "create", s(&c), "--backing", s(&b), "--size", "64GiB"]));
    assert!(out.contains("16646143 slots") && out.contains("B per slot"), "{out}");
    let out = ok(&shingled(&["cache", "check", s(&c)]));
    assert!(out.contains("clean (attached, 0 cached blocks"), "{out}");

    // 15 TiB of slots: about 230 GiB of serving index.
    let huge = dir.path().join("huge.img");
    let e = fails(&shingled(&["cache", "create", s(&huge), "--backing", s(&b), "--size", "15TiB"]));
    let mem_kib: u64 = std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|m| m.lines().find(|l| l.starts_with("MemTotal:"))?.split_whitespace().nth(1)?.parse().ok())
        .unwrap_or(0);
    if mem_kib < 200 << 20 {
        assert!(e.contains("14.9 TiB cache needs") && e.contains("of memory to serve"), "{e}");
        assert!(e.contains("B per 4 KiB slot with policy lru") && e.contains("this machine has"), "{e}");
    }
    assert!(!huge.exists(), "the refused cache file is not left behind");

    // A replay's reserve beyond the cache's capacity is refused before anything is allocated.
    let cfg = golden("tiny.toml");
    let trace = golden("small.csv");
    let e = fails(&shingled(&[
        "cache",
        "replay",
        "-c",
        &cfg,
        "--trace",
        &trace,
        "--policy",
        "lru",
        "--cache-size",
        "24KiB",
        "--reserve",
        "999999999",
    ]));
    assert!(e.contains("reserve 999999999: at most the cache's capacity of 6 blocks"), "{e}");
}
