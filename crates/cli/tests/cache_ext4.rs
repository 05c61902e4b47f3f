//! End to end: ext4 on the SSD block cache served as a real block device by the `shingled`
//! binary (modelled on `stl_ext4.rs`).
//!
//! For each configuration (LRU read-write; PORE read-write and SAC write-cache, both with 1 MiB
//! bands and a 4 MiB persistent buffer): `shingled cache create` (a 24 MiB cache in front of a
//! 192 MiB backing file, so that the policy evicts and writes back while ext4 is written),
//! `shingled cache serve` (a FUSE file and a live `stats` file), `losetup` + `mkfs.ext4` +
//! `mount`, a tree of files of seeded random sizes and contents written and `sync`ed, the live
//! statistics read (misses, evictions: write-backs went through the data path); then more files
//! written with O_DIRECT and no sync while the server is killed with SIGKILL; everything torn
//! down; `cache lost` (the dirty ranges only the cache holds, consistent with `cache stats`) and
//! `cache check` clean; `cache serve` again (recovery), ext4's journal replayed (`e2fsck -E
//! journal_only`), `fsck.ext4 -fn` clean, every synced file byte-exact, a clean stop with SIGTERM
//! (statistics as JSON on stdout) and `cache check` clean; finally `cache detach`, after which
//! the backing file alone (a read-only loop device, no cache) checks clean and holds every
//! synced file byte-exact, `cache lost` reports nothing, and `cache serve` refuses the detached
//! cache.
//!
//! Needs root, FUSE (`/dev/fuse`), loop devices and e2fsprogs; skips with the reason where any
//! is missing.

mod common;
use common::{
    assert_files, assert_fsck_clean, attach, late_writer, missing, replay_journal, run, serve, stop_server,
    wait_output, Teardown,
};
use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64;
use std::collections::BTreeMap;
use std::io::Read;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_shingled");

/// The backing file: 192 MiB (49152 blocks).
const BACKING_SIZE: u64 = 192 << 20;
/// The cache: 24 MiB, well below what the files written take (~30 MiB).
const CACHE_SIZE: &str = "24MiB";
/// Files written and synced before the kill.
const FILES: usize = 60;
/// The largest of them.
const MAX_FILE: usize = 1 << 20;

/// Runs `shingled ARGS`; panics unless it succeeds; returns its stdout parsed as JSON.
fn shingled_json(args: &[&str], cache: &Path) -> serde_json::Value {
    let out = run(Command::new(BIN).args(args).arg(cache).args(["--output", "json"]));
    serde_json::from_str(&out).unwrap_or_else(|e| panic!("shingled {args:?}: not JSON ({e}):\n{out}"))
}

/// The live statistics file of the mount. One `read` (one FUSE request, answered from one
/// snapshot of the text): `std::fs::read` reads again past the size it saw, which may tear the
/// text when it is refreshed in between.
fn live_stats(fuse: &Path) -> serde_json::Value {
    let mut f = std::fs::File::open(fuse.join("stats")).expect("opening the stats file");
    let mut buf = vec![0u8; 64 << 10];
    let n = f.read(&mut buf).expect("reading the stats file");
    serde_json::from_slice(&buf[..n]).unwrap_or_else(|e| {
        panic!("{}: not JSON ({e}):\n{}", fuse.join("stats").display(), String::from_utf8_lossy(&buf[..n]))
    })
}

fn counter(stats: &serde_json::Value, name: &str) -> u64 {
    stats[name].as_u64().unwrap_or_else(|| panic!("statistics without {name}: {stats}"))
}

fn evictions(stats: &serde_json::Value) -> u64 {
    counter(stats, "dirty_evictions") + counter(stats, "clean_evictions")
}

fn summary(stats: &serde_json::Value) -> String {
    [
        "read_hits",
        "read_misses",
        "write_hits",
        "write_misses",
        "dirty_evictions",
        "clean_evictions",
        "backing_blocks_written",
        "commits",
        "forced_commits",
        "cached_blocks",
        "dirty_blocks",
    ]
    .iter()
    .map(|k| format!("{k} {}", stats[*k]))
    .collect::<Vec<_>>()
    .join(", ")
}

fn scenario(name: &str, create_args: &[&str], seed: u64) {
    let t0 = Instant::now();
    let dir = tempfile::tempdir().unwrap();
    let cache = dir.path().join(format!("{name}.cache"));
    let backing = dir.path().join(format!("{name}.backing"));
    std::fs::File::create(&backing).unwrap().set_len(BACKING_SIZE).unwrap();
    let (fuse, fs) = (dir.path().join("fuse"), dir.path().join("fs"));
    std::fs::create_dir(&fuse).unwrap();
    std::fs::create_dir(&fs).unwrap();
    let mut t = Teardown::new(&fs, &fuse);
    run(Command::new(BIN)
        .args(["cache", "create"])
        .arg(&cache)
        .arg("--backing")
        .arg(&backing)
        .args(["--size", CACHE_SIZE])
        .args(create_args));

    // First life: mkfs, files, sync, live statistics; then more files and a SIGKILL.
    let disk = serve(&mut t, "cache", &cache);
    let dev = attach(&mut t, &disk, &["--direct-io=off"]);
    run(Command::new("mkfs.ext4").args(["-q", "-F", "-E", "nodiscard"]).arg(&dev));
    run(Command::new("mount").arg(&dev).arg(&fs));
    let mut rng = Pcg64::seed_from_u64(seed);
    let mut synced = BTreeMap::new();
    for i in 0..FILES {
        let p = fs.join(format!("d{}", i % 5)).join(format!("f{i}"));
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        let mut data = vec![0u8; rng.random_range(0..=MAX_FILE)];
        rng.fill(&mut data[..]);
        std::fs::write(&p, &data).unwrap();
        synced.insert(p, data);
    }
    run(&mut Command::new("sync"));
    // The statistics file is refreshed every 100 ms.
    std::thread::sleep(Duration::from_millis(300));
    let first = live_stats(&fuse);
    eprintln!("{name}: first life, after sync: {}", summary(&first));
    assert!(counter(&first, "write_misses") > 0, "{name}: no write miss in the first life: {first}");

    let stop = Arc::new(AtomicBool::new(false));
    let written = Arc::new(AtomicUsize::new(0));
    let writer = {
        let (fs, stop, written) = (fs.clone(), Arc::clone(&stop), Arc::clone(&written));
        std::thread::spawn(move || late_writer(fs, seed ^ 0x5eed, stop, written, 200, 16..=16))
    };
    let start = Instant::now();
    while written.load(Ordering::Relaxed) < 3 << 20 && !writer.is_finished() {
        assert!(start.elapsed() < Duration::from_secs(30), "{name}: the late writes do not progress");
        std::thread::sleep(Duration::from_millis(5));
    }
    let mut server = t.servers.pop().unwrap();
    server.kill().unwrap();
    server.wait().unwrap();
    stop.store(true, Ordering::Relaxed);
    eprintln!(
        "{name}: SIGKILL after {} KiB of unsynced O_DIRECT writes",
        written.load(Ordering::Relaxed) >> 10
    );
    writer.join().unwrap();
    t.clean();

    // The crashed cache's metadata: what only the cache holds, and a clean check.
    let info = shingled_json(&["cache", "stats"], &cache);
    let lost = shingled_json(&["cache", "lost"], &cache);
    let dirty = info["dirty_blocks"].as_u64().expect("cache stats: dirty_blocks");
    let ranges = lost["ranges"].as_array().expect("cache lost: ranges");
    let lost_blocks = lost["lost_blocks"].as_u64().expect("cache lost: lost_blocks");
    eprintln!(
        "{name}: after the kill: {} cached, {dirty} dirty blocks; lost {lost_blocks} blocks in {} ranges",
        info["cached_blocks"],
        ranges.len()
    );
    assert_eq!(lost["detached"], false, "{name}: {lost}");
    assert!(dirty > 0, "{name}: a write-back cache after ~30 MiB of writes holds no dirty block: {info}");
    assert!(!ranges.is_empty(), "{name}: {dirty} dirty blocks but no lost range: {lost}");
    let mut sum = 0;
    let mut prev_end = 0;
    for r in ranges {
        let (a, b) = (r[0].as_u64().unwrap(), r[1].as_u64().unwrap());
        assert!(a < b && a >= prev_end && b <= BACKING_SIZE / 4096, "{name}: bad range {r} in {lost}");
        sum += b - a;
        prev_end = b;
    }
    assert_eq!(lost_blocks, sum, "{name}: lost_blocks is not the ranges' total: {lost}");
    assert_eq!(lost_blocks, dirty, "{name}: cache lost and cache stats disagree: {lost} / {info}");
    run(Command::new(BIN).args(["cache", "check"]).arg(&cache));

    // Second life: recovery, fsck, every synced file exact.
    let disk = serve(&mut t, "cache", &cache);
    let dev = attach(&mut t, &disk, &["--direct-io=off"]);
    // ext4's own crash recovery first, then a check that changes nothing.
    replay_journal(&dev, name);
    assert_fsck_clean(&dev, &format!("{name}: after the kill and recovery"));
    run(Command::new("mount").arg(&dev).arg(&fs));
    assert_files(&synced, &format!("{name}: after the kill and recovery"));
    run(Command::new("umount").arg(&fs));
    for l in t.loops.drain(..) {
        run(Command::new("losetup").arg("-d").arg(&l));
    }
    // A clean stop: SIGTERM, exit 0, statistics on stdout, the cache checks clean.
    let second = stop_server(&mut t, name);
    eprintln!("{name}: second life, at SIGTERM: {}", summary(&second));
    assert!(counter(&second, "read_hits") + counter(&second, "read_misses") > 0, "{name}: {second}");
    assert!(
        evictions(&first) > 0 || evictions(&second) > 0,
        "{name}: the policy evicted nothing in either life (no write-back through the data path): \
         {first} / {second}"
    );
    run(Command::new(BIN).args(["cache", "check"]).arg(&cache));
    t.clean();

    // Detach: the backing file alone, without the cache, holds the file system.
    let det = run(Command::new(BIN).args(["cache", "detach"]).arg(&cache));
    eprintln!("{name}: {}", det.trim());
    let dev = attach(&mut t, &backing, &["--direct-io=off", "-r"]);
    assert_fsck_clean(&dev, &format!("{name}: the backing file alone after detach"));
    run(Command::new("mount").args(["-o", "ro"]).arg(&dev).arg(&fs));
    assert_files(&synced, &format!("{name}: the backing file alone after detach"));
    t.clean();
    let lost = shingled_json(&["cache", "lost"], &cache);
    assert_eq!(lost["lost_blocks"], 0, "{name}: lost blocks after detach: {lost}");
    assert_eq!(lost["detached"], true, "{name}: {lost}");
    run(Command::new(BIN).args(["cache", "check"]).arg(&cache));
    let refused = Command::new(BIN)
        .args(["cache", "serve"])
        .arg(&cache)
        .arg(&fuse)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let out = wait_output(refused, Duration::from_secs(20), &format!("{name}: serve of a detached cache"));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{name}: serve of a detached cache succeeded");
    assert!(err.contains("detached"), "{name}: serve of a detached cache: {err}");
    eprintln!("{name}: done in {:.1} s", t0.elapsed().as_secs_f64());
}

#[test]
fn ext4_on_lru_cache_survives_sigkill_and_detach() {
    if let Some(why) = missing() {
        eprintln!("skipping ext4_on_lru_cache_survives_sigkill_and_detach: {why}");
        return;
    }
    scenario("lru", &["--policy", "lru", "--mode", "read-write"], 1);
}

#[test]
fn ext4_on_pore_cache_survives_sigkill_and_detach() {
    if let Some(why) = missing() {
        eprintln!("skipping ext4_on_pore_cache_survives_sigkill_and_detach: {why}");
        return;
    }
    scenario(
        "pore",
        &["--policy", "pore", "--band-size", "1MiB", "--pb-size", "4MiB", "--mode", "read-write"],
        2,
    );
}

#[test]
fn ext4_on_sac_write_cache_survives_sigkill_and_detach() {
    if let Some(why) = missing() {
        eprintln!("skipping ext4_on_sac_write_cache_survives_sigkill_and_detach: {why}");
        return;
    }
    scenario(
        "sac",
        &["--policy", "sac", "--band-size", "1MiB", "--pb-size", "4MiB", "--mode", "write-cache"],
        3,
    );
}

/// After a SIGKILL the server's mount point answers "Transport endpoint is not connected"
/// until unmounted; `serve` again detaches that dead mount of ours by itself and serves, for
/// the cache and for a translation layer, with no manual `umount`.
#[test]
fn serve_again_after_sigkill_clears_the_dead_mount() {
    if let Some(why) = missing() {
        eprintln!("skipping serve_again_after_sigkill_clears_the_dead_mount: {why}");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let (fuse, fs) = (dir.path().join("fuse"), dir.path().join("fs"));
    std::fs::create_dir(&fuse).unwrap();
    std::fs::create_dir(&fs).unwrap();
    let backing = dir.path().join("b.img");
    std::fs::File::create(&backing).unwrap().set_len(16 << 20).unwrap();
    let cache = dir.path().join("c.img");
    run(Command::new(BIN)
        .args(["cache", "create"])
        .arg(&cache)
        .arg("--backing")
        .arg(&backing)
        .args(["--size", "4MiB"]));
    let layer = dir.path().join("l.img");
    run(Command::new(BIN).args(["stl", "format", "smart"]).arg(&layer).args([
        "--size",
        "16MiB",
        "--track-size",
        "64KiB",
        "--zones",
        "2",
    ]));
    let mut t = Teardown::new(&fs, &fuse);
    for (command, file) in [("cache", &cache), ("stl", &layer)] {
        let disk = serve(&mut t, command, file);
        {
            use std::os::unix::fs::FileExt;
            let f = std::fs::OpenOptions::new().write(true).open(&disk).unwrap();
            f.write_all_at(&[7u8; 4096], 0).unwrap();
        }
        let mut server = t.servers.pop().unwrap();
        server.kill().unwrap();
        server.wait().unwrap();
        let e = std::fs::metadata(&disk).unwrap_err();
        assert_eq!(e.kind(), std::io::ErrorKind::NotConnected, "{command}: {e}");
        // No umount in between: serve clears the dead mount itself.
        let disk = serve(&mut t, command, file);
        assert!(std::fs::metadata(&disk).unwrap().len() > 0, "{command}: the device is served again");
        stop_server(&mut t, command);
    }
    t.clean();
}
