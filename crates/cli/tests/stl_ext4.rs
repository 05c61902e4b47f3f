//! End to end: ext4 on a translation layer served by the real `shingled` binary.
//!
//! For each layer (SMaRT, dm-zoned, the emulated DM-SMR drive): `shingled stl format`, `shingled stl serve` (a FUSE file),
//! `losetup` + `mkfs.ext4` + `mount`, a tree of files with known contents written and `sync`ed,
//! then the server killed with SIGKILL mid-life (more files being written), everything torn
//! down, `shingled stl serve` again (recovery), ext4's journal replayed (`e2fsck -E
//! journal_only`, what a mount does), `fsck.ext4 -fn` clean, and every file synced
//! before the kill read back byte-exact; finally a clean stop with SIGTERM and `shingled stl
//! check` clean.
//!
//! Needs root, FUSE (`/dev/fuse`), loop devices and e2fsprogs; skips with the reason where any
//! is missing.

mod common;
use common::{assert_fsck_clean, attach, missing, replay_journal, run, serve, stop_server, Teardown};
use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

const BIN: &str = env!("CARGO_BIN_EXE_shingled");

/// Deterministic contents of file `i`.
fn contents(i: usize) -> Vec<u8> {
    let len = [1, 4095, 4096, 10_000, 65_536, 300_000, 1_000_000][i % 7];
    (0..len).map(|k| ((k as u64).wrapping_mul(31).wrapping_add(i as u64 * 7919) >> 3) as u8).collect()
}

fn scenario(layer: &str, format_args: &[&str]) {
    let dir = tempfile::tempdir().unwrap();
    let img = dir.path().join(format!("{layer}.img"));
    let (fuse, fs) = (dir.path().join("fuse"), dir.path().join("fs"));
    std::fs::create_dir(&fuse).unwrap();
    std::fs::create_dir(&fs).unwrap();
    let mut t = Teardown::new(&fs, &fuse);
    run(Command::new(BIN).args(["stl", "format", layer]).arg(&img).args(format_args));

    // First life: mkfs, files, sync, then more files and a SIGKILL.
    let disk = serve(&mut t, "stl", &img);
    let dev = attach(&mut t, &disk, &[]);
    run(Command::new("mkfs.ext4").args(["-q", "-F", "-E", "nodiscard"]).arg(&dev));
    run(Command::new("mount").arg(&dev).arg(&fs));
    let mut synced = BTreeMap::new();
    for i in 0..40 {
        let p = fs.join(format!("d{}", i % 4)).join(format!("f{i}"));
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(&p, contents(i)).unwrap();
        synced.insert(p, i);
    }
    run(&mut Command::new("sync"));
    for i in 40..60 {
        let _ = std::fs::write(fs.join(format!("late{i}")), contents(i));
    }
    let mut server = t.servers.pop().unwrap();
    server.kill().unwrap();
    server.wait().unwrap();
    t.clean();

    // Second life: recovery, fsck, every synced file exact.
    let disk = serve(&mut t, "stl", &img);
    let dev = attach(&mut t, &disk, &[]);
    // ext4's own crash recovery first, then a check that changes nothing.
    replay_journal(&dev, layer);
    assert_fsck_clean(&dev, &format!("{layer}: after the kill"));
    run(Command::new("mount").arg(&dev).arg(&fs));
    for (p, &i) in &synced {
        let got = std::fs::read(p).unwrap_or_else(|e| panic!("{layer}: {}: {e}", p.display()));
        assert!(got == contents(i), "{layer}: {} differs after the kill and recovery", p.display());
    }
    run(Command::new("umount").arg(&fs));
    for l in t.loops.drain(..) {
        run(Command::new("losetup").arg("-d").arg(&l));
    }
    // A clean stop: SIGTERM, exit 0, the layer checks clean.
    let stats = stop_server(&mut t, layer);
    assert_eq!(stats["layer"], layer);
    run(Command::new(BIN).args(["stl", "check"]).arg(&img));
    t.clean();
}

#[test]
fn ext4_on_smart_survives_sigkill() {
    if let Some(why) = missing() {
        eprintln!("skipping ext4_on_smart_survives_sigkill: {why}");
        return;
    }
    scenario("smart", &["--size", "192MiB", "--track-size", "256KiB", "--zones", "2"]);
}

#[test]
fn ext4_on_dm_zoned_survives_sigkill() {
    if let Some(why) = missing() {
        eprintln!("skipping ext4_on_dm_zoned_survives_sigkill: {why}");
        return;
    }
    scenario("dm-zoned", &["--size", "192MiB", "--zone-size", "8MiB", "--conventional", "6"]);
}

#[test]
fn ext4_on_dm_smr_survives_sigkill() {
    if let Some(why) = missing() {
        eprintln!("skipping ext4_on_dm_smr_survives_sigkill: {why}");
        return;
    }
    scenario("dm-smr", &["--size", "192MiB", "--pb-size", "8MiB", "--bands", "fixed:4MiB"]);
}

/// A block cache in front of an emulated DM-SMR drive (`cache create --backing` on a `stl
/// format dm-smr` file): blocks written through the cache and detached are on the drive, as
/// `stl serve` of the drive alone reads them; and the drive did real RMWs to take them.
#[test]
fn a_cache_over_an_emulated_dm_smr_drive_writes_back_to_it() {
    if let Some(why) = missing() {
        eprintln!("skipping a_cache_over_an_emulated_dm_smr_drive_writes_back_to_it: {why}");
        return;
    }
    use std::os::unix::fs::FileExt;
    let dir = tempfile::tempdir().unwrap();
    let (fuse, fs) = (dir.path().join("fuse"), dir.path().join("fs"));
    std::fs::create_dir(&fuse).unwrap();
    std::fs::create_dir(&fs).unwrap();
    let (smr, cache) = (dir.path().join("smr.img"), dir.path().join("cache.img"));
    run(Command::new(BIN).args(["stl", "format", "dm-smr"]).arg(&smr).args([
        "--size",
        "64MiB",
        "--pb-size",
        "1MiB",
        "--bands",
        "fixed:2MiB",
    ]));
    run(Command::new(BIN)
        .args(["cache", "create"])
        .arg(&cache)
        .arg("--backing")
        .arg(&smr)
        .args(["--size", "8MiB"]));
    let block = |i: u64| -> Vec<u8> {
        (0..4096u64).map(|k| (k.wrapping_mul(7) ^ i.wrapping_mul(131)) as u8).collect()
    };
    // Scattered blocks over the drive: more than the PB holds, so write-back cleans bands.
    let blocks: Vec<u64> = (0..3000u64).map(|i| (i * 5059) % 16000).collect();
    let mut t = Teardown::new(&fs, &fuse);
    let disk = serve(&mut t, "cache", &cache);
    {
        let f = std::fs::OpenOptions::new().write(true).open(&disk).unwrap();
        for &b in &blocks {
            f.write_all_at(&block(b), b * 4096).unwrap();
        }
        f.sync_all().unwrap();
    }
    stop_server(&mut t, "cache");
    run(Command::new(BIN).args(["cache", "detach"]).arg(&cache));
    let disk = serve(&mut t, "stl", &smr);
    {
        let f = std::fs::File::open(&disk).unwrap();
        let mut buf = vec![0u8; 4096];
        for &b in &blocks {
            f.read_exact_at(&mut buf, b * 4096).unwrap();
            assert!(buf == block(b), "block {b} differs on the drive after detach");
        }
    }
    let stats = stop_server(&mut t, "dm-smr");
    t.clean();
    let o = Command::new(BIN).args(["stl", "stats", "--output", "json"]).arg(&smr).output().unwrap();
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let c = &v["stats"]["counts"];
    assert!(c["pb_writes"].as_u64().unwrap() >= blocks.len() as u64, "{v}\n{stats}");
    assert!(c["rmws"].as_u64().unwrap() > 0, "{v}");
}

/// The emulated DM-SMR drive on a block device (a loop device standing in for a disk):
/// formatted in place, served, written, reopened (recovery merges the PB into the bands), read
/// back; a second format is refused (the device holds data), as is a size beyond the device.
#[test]
fn an_emulated_dm_smr_drive_on_a_block_device() {
    if let Some(why) = missing() {
        eprintln!("skipping an_emulated_dm_smr_drive_on_a_block_device: {why}");
        return;
    }
    use std::os::unix::fs::FileExt;
    let dir = tempfile::tempdir().unwrap();
    let (fuse, fs) = (dir.path().join("fuse"), dir.path().join("fs"));
    std::fs::create_dir(&fuse).unwrap();
    std::fs::create_dir(&fs).unwrap();
    let backing = dir.path().join("disk.img");
    std::fs::File::create(&backing).unwrap().set_len(48 << 20).unwrap();
    let mut t = Teardown::new(&fs, &fuse);
    let dev = attach(&mut t, &backing, &[]);
    let fmt = |size: &str| {
        Command::new(BIN)
            .args([
                "stl",
                "format",
                "dm-smr",
                &dev,
                "--size",
                size,
                "--pb-size",
                "1MiB",
                "--bands",
                "fixed:2MiB",
            ])
            .output()
            .unwrap()
    };
    let o = fmt("64MiB");
    assert!(!o.status.success() && String::from_utf8_lossy(&o.stderr).contains("fewer than"), "{o:?}");
    assert!(fmt("40MiB").status.success());
    let o = fmt("40MiB");
    assert!(!o.status.success() && String::from_utf8_lossy(&o.stderr).contains("holds data"), "{o:?}");
    let block = |i: u64| -> Vec<u8> { (0..4096u64).map(|k| (k ^ i.wrapping_mul(97)) as u8).collect() };
    let blocks: Vec<u64> = (0..1500u64).map(|i| (i * 3067) % 9000).collect();
    let disk = serve(&mut t, "stl", Path::new(&dev));
    {
        let f = std::fs::OpenOptions::new().write(true).open(&disk).unwrap();
        for &b in &blocks {
            f.write_all_at(&block(b), b * 4096).unwrap();
        }
        f.sync_all().unwrap();
    }
    stop_server(&mut t, "dm-smr");
    let disk = serve(&mut t, "stl", Path::new(&dev));
    {
        let f = std::fs::File::open(&disk).unwrap();
        let mut buf = vec![0u8; 4096];
        for &b in blocks.iter().rev().take(600) {
            f.read_exact_at(&mut buf, b * 4096).unwrap();
            // The last write of each block wins; every block here was written with its own
            // pattern, so any copy of it matches.
            assert!(buf == block(b), "block {b}");
        }
    }
    let stats = stop_server(&mut t, "dm-smr");
    assert!(stats["stats"]["counts"]["recovery_rmws"].as_u64().unwrap() > 0, "{stats}");
    run(Command::new(BIN).args(["stl", "check", &dev]));
    t.clean();
}
