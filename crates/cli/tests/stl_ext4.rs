//! End to end: ext4 on a translation layer served by the real `shingled` binary.
//!
//! For each layer (SMaRT, dm-zoned): `shingled stl format`, `shingled stl serve` (a FUSE file),
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
use common::run;
use shingled_fuse::fuse_available;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_shingled");

fn missing() -> Option<String> {
    if let Err(why) = fuse_available() {
        return Some(why);
    }
    if !Path::new("/dev/loop-control").exists() {
        return Some("no /dev/loop-control (no loop devices)".into());
    }
    for tool in ["losetup", "mkfs.ext4", "fsck.ext4", "e2fsck", "mount", "umount"] {
        let found = std::env::var_os("PATH")
            .map(|p| std::env::split_paths(&p).any(|d| d.join(tool).exists()))
            .unwrap_or(false)
            || ["/sbin", "/usr/sbin"].iter().any(|d| Path::new(d).join(tool).exists());
        if !found {
            return Some(format!("{tool} not found (Debian: e2fsprogs, mount)"));
        }
    }
    // losetup needs a free loop device and root.
    match Command::new("losetup").arg("-f").output() {
        Ok(o) if o.status.success() => None,
        Ok(o) => Some(format!("losetup -f: {}", String::from_utf8_lossy(&o.stderr).trim())),
        Err(e) => Some(format!("losetup: {e}")),
    }
}

/// Whatever a failed test leaves behind is torn down on drop: mounts, loop devices, servers.
struct Teardown {
    fs: PathBuf,
    fuse: PathBuf,
    loops: Vec<String>,
    servers: Vec<Child>,
}

impl Teardown {
    fn clean(&mut self) {
        let _ = Command::new("umount").arg("-l").arg(&self.fs).stderr(Stdio::null()).status();
        for l in self.loops.drain(..) {
            let _ = Command::new("losetup").arg("-d").arg(&l).status();
        }
        for mut s in self.servers.drain(..) {
            let _ = s.kill();
            let _ = s.wait();
        }
        let _ = Command::new("umount").arg("-l").arg(&self.fuse).stderr(Stdio::null()).status();
    }
}

impl Drop for Teardown {
    fn drop(&mut self) {
        self.clean();
    }
}

fn serve(t: &mut Teardown, img: &Path) -> PathBuf {
    let child = Command::new(BIN)
        .args(["stl", "serve"])
        .arg(img)
        .arg(&t.fuse)
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("spawning shingled stl serve");
    t.servers.push(child);
    let disk = t.fuse.join("disk");
    let start = Instant::now();
    while !disk.exists() {
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "the server did not serve {} in 60 s",
            disk.display()
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    disk
}

fn attach(t: &mut Teardown, disk: &Path) -> String {
    let dev = run(Command::new("losetup").args(["-f", "--show"]).arg(disk)).trim().to_string();
    t.loops.push(dev.clone());
    dev
}

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
    let mut t = Teardown { fs: fs.clone(), fuse: fuse.clone(), loops: Vec::new(), servers: Vec::new() };
    run(Command::new(BIN).args(["stl", "format", layer]).arg(&img).args(format_args));

    // First life: mkfs, files, sync, then more files and a SIGKILL.
    let disk = serve(&mut t, &img);
    let dev = attach(&mut t, &disk);
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
    let disk = serve(&mut t, &img);
    let dev = attach(&mut t, &disk);
    // ext4's own crash recovery first: replay its journal (what mounting would do; `-n`
    // skips it and then reports the changes still in the journal as damage).
    let replay = Command::new("e2fsck").args(["-E", "journal_only", "-y"]).arg(&dev).output().unwrap();
    assert!(
        matches!(replay.status.code(), Some(0 | 1)),
        "{layer}: journal replay after the kill: {}\n{}\n{}",
        replay.status,
        String::from_utf8_lossy(&replay.stdout),
        String::from_utf8_lossy(&replay.stderr)
    );
    let fsck = Command::new("fsck.ext4").args(["-fn"]).arg(&dev).output().unwrap();
    assert!(
        fsck.status.success(),
        "{layer}: fsck.ext4 -fn after the kill: {}\n{}\n{}",
        fsck.status,
        String::from_utf8_lossy(&fsck.stdout),
        String::from_utf8_lossy(&fsck.stderr)
    );
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
    let server = t.servers.pop().unwrap();
    run(Command::new("kill").arg("-TERM").arg(server.id().to_string()));
    let out = server.wait_with_output().unwrap();
    assert!(out.status.success(), "{layer}: serve exited with {} after SIGTERM", out.status);
    let stats: serde_json::Value =
        serde_json::from_slice(&out.stdout).expect("serve prints its statistics as JSON");
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
