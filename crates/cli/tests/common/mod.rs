//! Helpers shared by the CLI's integration tests that drive system tools: running commands,
//! and serving a device with the real `shingled` binary for `losetup`, `mkfs.ext4` and `mount`
//! (`stl_ext4.rs`, `cache_ext4.rs`).

// Each test binary includes this module and uses only some of it.
#![allow(dead_code)]

use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64;
use shingled_fuse::fuse_available;
use std::collections::BTreeMap;
use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_shingled");

/// Runs `cmd`, panics with its status, stdout and stderr unless it succeeds; returns stdout.
pub fn run(cmd: &mut Command) -> String {
    let out = cmd.output().unwrap_or_else(|e| panic!("{cmd:?}: {e}"));
    assert!(
        out.status.success(),
        "{cmd:?} failed ({}):\n{}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Why ext4 cannot be tested on a served device here (no FUSE, no loop devices, no
/// e2fsprogs, not root), or `None` when it can.
pub fn missing() -> Option<String> {
    if let Err(why) = fuse_available() {
        return Some(why.to_string());
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
pub struct Teardown {
    /// Where the file system is mounted.
    pub fs: PathBuf,
    /// Where the servers mount their FUSE file.
    pub fuse: PathBuf,
    /// Loop devices attached.
    pub loops: Vec<String>,
    /// Servers running.
    pub servers: Vec<Child>,
}

impl Teardown {
    /// Nothing to tear down yet; the file system goes on `fs`, the served file on `fuse`.
    pub fn new(fs: &Path, fuse: &Path) -> Teardown {
        Teardown { fs: fs.to_path_buf(), fuse: fuse.to_path_buf(), loops: Vec::new(), servers: Vec::new() }
    }

    /// Unmounts the file system, detaches the loop devices, kills the servers and unmounts
    /// their FUSE mount (ignoring what is not there).
    pub fn clean(&mut self) {
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

/// Starts `shingled COMMAND serve FILE` (`stl`, `cache`) on `t.fuse` and waits (60 s at the
/// most) for its `disk` file; panics if the server exits first. Returns the file's path.
pub fn serve(t: &mut Teardown, command: &str, file: &Path) -> PathBuf {
    let child = Command::new(BIN)
        .args([command, "serve"])
        .arg(file)
        .arg(&t.fuse)
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap_or_else(|e| panic!("spawning shingled {command} serve: {e}"));
    t.servers.push(child);
    let disk = t.fuse.join("disk");
    let start = Instant::now();
    while !disk.exists() {
        if let Ok(Some(status)) = t.servers.last_mut().unwrap().try_wait() {
            panic!("shingled {command} serve {} exited with {status} before serving", file.display());
        }
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "the server did not serve {} in 60 s",
            disk.display()
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    disk
}

/// Attaches `file` to a free loop device (`losetup OPTIONS -f --show FILE`); returns the
/// device.
pub fn attach(t: &mut Teardown, file: &Path, options: &[&str]) -> String {
    let dev = run(Command::new("losetup").args(options).args(["-f", "--show"]).arg(file)).trim().to_string();
    t.loops.push(dev.clone());
    dev
}

/// Stops the last server of `t` with SIGTERM and waits for it (60 s at the most); checks that
/// it exits 0 and returns the statistics it printed on stdout as JSON.
pub fn stop_server(t: &mut Teardown, what: &str) -> serde_json::Value {
    let server = t.servers.pop().expect("no server to stop");
    run(Command::new("kill").arg("-TERM").arg(server.id().to_string()));
    let out = wait_output(server, Duration::from_secs(60), &format!("{what}: serve after SIGTERM"));
    assert!(out.status.success(), "{what}: serve exited with {} after SIGTERM", out.status);
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!("{what}: serve's stdout is not JSON ({e}):\n{}", String::from_utf8_lossy(&out.stdout))
    })
}

/// Waits for `child` at most `limit`; kills it and panics if it is still running then.
pub fn wait_output(mut child: Child, limit: Duration, what: &str) -> std::process::Output {
    let start = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if start.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{what}: still running after {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    child.wait_with_output().unwrap()
}

/// ext4's own crash recovery on `dev`: replays its journal, as mounting would (`fsck.ext4 -n`
/// skips it and then reports the changes still in the journal as damage).
pub fn replay_journal(dev: &str, what: &str) {
    let replay = Command::new("e2fsck").args(["-E", "journal_only", "-y"]).arg(dev).output().unwrap();
    assert!(
        matches!(replay.status.code(), Some(0 | 1)),
        "{what}: journal replay after the kill: {}\n{}\n{}",
        replay.status,
        String::from_utf8_lossy(&replay.stdout),
        String::from_utf8_lossy(&replay.stderr)
    );
}

/// Checks the ext4 file system on `dev` without changing it (`fsck.ext4 -fn`).
pub fn assert_fsck_clean(dev: &str, what: &str) {
    let fsck = Command::new("fsck.ext4").args(["-fn"]).arg(dev).output().unwrap();
    assert!(
        fsck.status.success(),
        "{what}: fsck.ext4 -fn: {}\n{}\n{}",
        fsck.status,
        String::from_utf8_lossy(&fsck.stdout),
        String::from_utf8_lossy(&fsck.stderr)
    );
}

/// Checks that every file of `synced` reads back byte-exact.
pub fn assert_files(synced: &BTreeMap<PathBuf, Vec<u8>>, what: &str) {
    for (p, want) in synced {
        let got = std::fs::read(p).unwrap_or_else(|e| panic!("{what}: {}: {e}", p.display()));
        assert!(
            got == *want,
            "{what}: {} differs ({} bytes read, {} written)",
            p.display(),
            got.len(),
            want.len()
        );
    }
}

/// Writes up to `files` files `late*` in `dir` with O_DIRECT (their data goes to the device at
/// once, no flush, no journal commit), each of a number of 64 KiB chunks drawn from `chunks`,
/// until told to stop or a write fails (the server is gone); counts the bytes in `written`.
pub fn late_writer(
    dir: PathBuf,
    seed: u64,
    stop: Arc<AtomicBool>,
    written: Arc<AtomicUsize>,
    files: usize,
    chunks: std::ops::RangeInclusive<usize>,
) {
    const CHUNK: usize = 64 << 10;
    let mut rng = Pcg64::seed_from_u64(seed);
    // O_DIRECT needs an aligned buffer: take an aligned window of a larger one.
    let mut raw = vec![0u8; CHUNK + 4096];
    let off = raw.as_ptr().align_offset(4096);
    for i in 0..files {
        if stop.load(Ordering::Relaxed) {
            return;
        }
        let Ok(mut f) = std::fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .custom_flags(libc::O_DIRECT)
            .open(dir.join(format!("late{i}")))
        else {
            return;
        };
        for _ in 0..rng.random_range(chunks.clone()) {
            let buf = &mut raw[off..off + CHUNK];
            rng.fill(buf);
            if f.write_all(buf).is_err() || stop.load(Ordering::Relaxed) {
                return;
            }
            written.fetch_add(CHUNK, Ordering::Relaxed);
        }
    }
}
