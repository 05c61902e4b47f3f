//! `shingled stl serve FILE --ublk`, the real binary.
//!
//! Built without the `ublk` feature, the flag fails and says how to build it. Where the kernel
//! has no ublk driver (no /dev/ublk-control), it fails naming the control device and
//! `modprobe ublk_drv`, and the rest is skipped. With both: ext4 on the /dev/ublkbN it prints
//! (`mkfs.ext4`, a file written and synced), a clean stop with SIGTERM (exit 0, statistics on
//! stdout), served again, the file read back byte-exact, and `shingled stl check` clean. That
//! part needs root and e2fsprogs.

mod common;
use common::run;
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdout, Command, Stdio};
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_shingled");
const CONTROL: &str = "/dev/ublk-control";

/// Runs `serve --ublk` where it cannot work: returns its stderr after checking that it failed.
fn serve_fails(img: &Path) -> String {
    let out = Command::new(BIN).args(["stl", "serve"]).arg(img).arg("--ublk").output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(!out.status.success(), "serve --ublk succeeded where it cannot work:\n{err}");
    assert!(out.stdout.is_empty(), "serve --ublk printed {:?}", String::from_utf8_lossy(&out.stdout));
    err
}

/// A running `serve --ublk`, killed on drop if it is still running (a failed test).
struct Server {
    child: Child,
    stdout: BufReader<ChildStdout>,
    dev: PathBuf,
}

impl Server {
    /// Starts the server and waits for the device path it prints.
    fn start(img: &Path) -> Server {
        let mut child = Command::new(BIN)
            .args(["stl", "serve"])
            .arg(img)
            .arg("--ublk")
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("spawning shingled stl serve --ublk");
        let mut stdout = BufReader::new(child.stdout.take().unwrap());
        let mut line = String::new();
        stdout.read_line(&mut line).unwrap();
        let dev = PathBuf::from(line.trim());
        // Built before the checks, so that a failed one kills the server.
        let server = Server { child, stdout, dev };
        assert!(line.starts_with("/dev/ublkb"), "serve --ublk printed {line:?}, not a device");
        let start = Instant::now();
        while !server.dev.exists() {
            assert!(start.elapsed() < Duration::from_secs(30), "{} did not appear", server.dev.display());
            std::thread::sleep(Duration::from_millis(50));
        }
        server
    }

    /// SIGTERM; checks the clean exit and returns the statistics printed at the end.
    fn stop(&mut self) -> serde_json::Value {
        run(Command::new("kill").arg("-TERM").arg(self.child.id().to_string()));
        let status = self.child.wait().unwrap();
        assert!(status.success(), "serve --ublk exited with {status} after SIGTERM");
        let mut rest = String::new();
        self.stdout.read_to_string(&mut rest).unwrap();
        serde_json::from_str(rest.trim()).unwrap_or_else(|e| panic!("statistics {rest:?}: {e}"))
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// A file system mounted on `path`, unmounted (lazily) on drop if the test failed first.
struct Mount {
    path: PathBuf,
    mounted: bool,
}

impl Mount {
    fn new(dev: &Path, path: &Path) -> Mount {
        run(Command::new("mount").arg(dev).arg(path));
        Mount { path: path.to_path_buf(), mounted: true }
    }

    fn unmount(mut self) {
        run(Command::new("umount").arg(&self.path));
        self.mounted = false;
    }
}

impl Drop for Mount {
    fn drop(&mut self) {
        if self.mounted {
            let _ = Command::new("umount").arg("-l").arg(&self.path).status();
        }
    }
}

fn has_tool(tool: &str) -> bool {
    std::env::var_os("PATH")
        .map(|p| std::env::split_paths(&p).any(|d| d.join(tool).exists()))
        .unwrap_or(false)
        || ["/sbin", "/usr/sbin"].iter().any(|d| Path::new(d).join(tool).exists())
}

#[test]
fn serve_ublk_ext4_round_trip() {
    let dir = tempfile::tempdir().unwrap();
    let img = dir.path().join("smart.img");
    run(Command::new(BIN).args(["stl", "format", "smart"]).arg(&img).args([
        "--size",
        "64MiB",
        "--track-size",
        "256KiB",
    ]));

    if !cfg!(feature = "ublk") {
        let err = serve_fails(&img);
        assert!(err.contains("built without the ublk feature: cargo build --features ublk"), "{err}");
        eprintln!("skipping the rest of serve_ublk_ext4_round_trip: built without the ublk feature");
        return;
    }
    if !Path::new(CONTROL).exists() {
        let err = serve_fails(&img);
        assert!(err.contains(CONTROL) && err.contains("modprobe ublk_drv"), "{err}");
        eprintln!("skipping the rest of serve_ublk_ext4_round_trip: no {CONTROL} (the kernel has no ublk)");
        return;
    }
    if !has_tool("mkfs.ext4") || !has_tool("mount") {
        eprintln!("skipping the rest of serve_ublk_ext4_round_trip: mkfs.ext4 or mount not found");
        return;
    }

    let fs = dir.path().join("fs");
    std::fs::create_dir(&fs).unwrap();
    let data: Vec<u8> = (0..1_000_003u32).map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8).collect();

    // First life: mkfs, a file, sync, unmount, a clean stop.
    let mut server = Server::start(&img);
    run(Command::new("mkfs.ext4").args(["-q", "-F"]).arg(&server.dev));
    let m = Mount::new(&server.dev, &fs);
    std::fs::write(fs.join("data"), &data).unwrap();
    run(&mut Command::new("sync"));
    m.unmount();
    let stats = server.stop();
    assert_eq!(stats["layer"], "smart");

    // Second life: the file is back.
    let mut server = Server::start(&img);
    let m = Mount::new(&server.dev, &fs);
    let got = std::fs::read(fs.join("data")).unwrap();
    assert!(got == data, "the file differs after a stop and a new serve ({} bytes read)", got.len());
    m.unmount();
    server.stop();
    run(Command::new(BIN).args(["stl", "check"]).arg(&img));
}
