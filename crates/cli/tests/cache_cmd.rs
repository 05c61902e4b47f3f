//! `shingled cache` as a user runs it (no FUSE needed; serving is in cache_ext4.rs): create,
//! stats, check, flush, detach, lost, replay — exit codes, messages naming what is wrong, JSON.

use shingled_zoned::lock::{lock, LockKind};
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
    assert!(ok(&shingled(&["cache", "check", s(&c)])).contains("consistent"));
    // A second create on an attached cache is refused, naming the way out.
    let e = fails(&shingled(&["cache", "create", s(&c), "--backing", s(&b)]));
    assert!(e.contains("already holds an attached shingled block cache") && e.contains("--force"), "{e}");
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

/// Holds `flock(LOCK_EX)` on `path` as a served cache does, from this (test) process.
fn hold_lock(path: &Path) -> std::fs::File {
    let f = std::fs::OpenOptions::new().read(true).write(true).open(path).unwrap();
    lock(&f, path, LockKind::Exclusive).unwrap();
    f
}

/// Every command that opens a cache locks the cache device and the backing device: while
/// another holder has either (a running `cache serve`), flush, detach, create --force, serve,
/// check and stats are refused, saying the device is in use, and nothing is written.
#[test]
fn a_cache_or_backing_device_in_use_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let b = backing(dir.path(), 32);
    let c = dir.path().join("cache.img");
    ok(&shingled(&["cache", "create", s(&c), "--backing", s(&b), "--size", "4MiB"]));
    let before = std::fs::read(&c).unwrap();
    for held in [&c, &b] {
        let lock = hold_lock(held);
        for args in [
            vec!["cache", "flush", s(&c)],
            vec!["cache", "detach", s(&c)],
            vec!["cache", "create", s(&c), "--backing", s(&b), "--force"],
            vec!["cache", "serve", s(&c), s(dir.path())],
        ] {
            let e = fails(&shingled(&args));
            assert!(e.contains("is in use") && e.contains(s(held)), "{args:?} with {held:?} held: {e}");
        }
        if held == &c {
            for args in [vec!["cache", "check", s(&c)], vec!["cache", "stats", s(&c)]] {
                let e = fails(&shingled(&args));
                assert!(e.contains("is in use"), "{args:?}: {e}");
            }
        }
        drop(lock);
    }
    assert_eq!(std::fs::read(&c).unwrap(), before, "nothing written while refused");
    // Readers share: stats while another reader looks.
    let f = std::fs::File::open(&c).unwrap();
    lock(&f, &c, LockKind::Shared).unwrap();
    ok(&shingled(&["cache", "stats", s(&c)]));
    assert!(fails(&shingled(&["cache", "flush", s(&c)])).contains("is in use"));
    drop(f);
    ok(&shingled(&["cache", "flush", s(&c)]));
}

/// The cache remembers its backing device by identity, not size: another file of the same
/// size is refused (the dirty blocks belong to the first), `--backing-moved` accepts it and
/// records it, and a plain open then uses the new one.
#[test]
fn another_backing_device_of_the_same_size_is_refused_unless_moved() {
    let dir = tempfile::tempdir().unwrap();
    let b = backing(dir.path(), 32);
    let c = dir.path().join("cache.img");
    ok(&shingled(&["cache", "create", s(&c), "--backing", s(&b), "--size", "4MiB"]));
    let other = dir.path().join("other.img");
    std::fs::File::create(&other).unwrap().set_len(32 << 20).unwrap();
    for cmd in ["flush", "detach"] {
        let e = fails(&shingled(&["cache", cmd, s(&c), "--backing", s(&other)]));
        assert!(
            e.contains("is not the device this cache was created over")
                && e.contains("--backing-moved")
                && e.contains("backing.img"),
            "{e}"
        );
    }
    // Replaced under the recorded path (a restored copy): a new inode, refused too.
    let moved = dir.path().join("moved.img");
    std::fs::rename(&b, &moved).unwrap();
    std::fs::copy(&moved, &b).unwrap();
    let e = fails(&shingled(&["cache", "flush", s(&c)]));
    assert!(e.contains("is not the device this cache was created over"), "{e}");
    // Moved on purpose: accepted once, recorded, then found from the cache alone.
    ok(&shingled(&["cache", "flush", s(&c), "--backing", s(&moved), "--backing-moved"]));
    let v: serde_json::Value =
        serde_json::from_str(&ok(&shingled(&["cache", "stats", s(&c), "--output", "json"]))).unwrap();
    assert_eq!(v["setup"]["backing_path"], std::fs::canonicalize(&moved).unwrap().to_str().unwrap());
    assert_eq!(v["setup"]["backing_id"]["kind"], "file");
    ok(&shingled(&["cache", "flush", s(&c)]));
    ok(&shingled(&["cache", "detach", s(&c)]));
}

/// `cache create` formats nothing it did not make without `--force`: a file system, one of our
/// other formats, a partition table, data; never the backing device itself (same inode under
/// another name) or an attached cache given as the backing device (arguments swapped).
#[test]
fn create_refuses_to_format_over_data() {
    let dir = tempfile::tempdir().unwrap();
    let b = backing(dir.path(), 32);
    let dev = |name: &str, at: usize, bytes: &[u8]| {
        let p = dir.path().join(name);
        let mut img = vec![0u8; 4 << 20];
        img[at..at + bytes.len()].copy_from_slice(bytes);
        std::fs::write(&p, &img).unwrap();
        p
    };
    let cases = [
        (dev("ext4.img", 1080, &[0x53, 0xEF]), "ext2/3/4 file system"),
        (dev("xfs.img", 0, b"XFSB"), "XFS"),
        (dev("gpt.img", 512, b"EFI PART"), "GPT partition table"),
        (dev("data.img", 700_000, b"x"), "non-zero byte at offset 700000"),
        (dev("zoned.img", 0, b"SHZONED\0"), "zoned device file"),
        (dev("medium.img", 0, b"SHSTLMED"), "SMaRT translation layer"),
    ];
    for (p, what) in &cases {
        let before = std::fs::read(p).unwrap();
        let e = fails(&shingled(&["cache", "create", s(p), "--backing", s(&b)]));
        assert!(e.contains(what) && e.contains("--force") && e.contains(s(p)), "{p:?}: {e}");
        assert_eq!(std::fs::read(p).unwrap(), before, "{p:?} untouched");
    }
    // Forced: formatted.
    ok(&shingled(&["cache", "create", s(&cases[0].0), "--backing", s(&b), "--force"]));
    // A device of zeros needs no force.
    let zeros = dir.path().join("zeros.img");
    std::fs::File::create(&zeros).unwrap().set_len(4 << 20).unwrap();
    ok(&shingled(&["cache", "create", s(&zeros), "--backing", s(&b)]));
    // The backing device itself, by any name: refused even with --force.
    let hard = dir.path().join("hard.img");
    std::fs::hard_link(&b, &hard).unwrap();
    let soft = dir.path().join("soft.img");
    std::os::unix::fs::symlink(&b, &soft).unwrap();
    for same in [&b, &hard, &soft] {
        let e = fails(&shingled(&["cache", "create", s(same), "--backing", s(&b), "--force"]));
        assert!(e.contains("is the cache device") && e.contains("itself"), "{same:?}: {e}");
    }
    // Swapped arguments on a rerun: the backing image holds data once written; here it is
    // refused because the "backing" is an attached cache.
    let c = dir.path().join("cache.img");
    ok(&shingled(&["cache", "create", s(&c), "--backing", s(&b), "--size", "4MiB"]));
    std::fs::write(&b, vec![7u8; 32 << 20]).unwrap();
    let e = fails(&shingled(&["cache", "create", s(&b), "--backing", s(&c)]));
    assert!(e.contains("swapped"), "{e}");
    assert_eq!(std::fs::read(&b).unwrap(), vec![7u8; 32 << 20], "the backing image untouched");
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
    assert!(out.contains("consistent (attached, 0 cached blocks"), "{out}");

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
