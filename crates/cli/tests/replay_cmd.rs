//! `shingled replay` from the command line: the same operations as fio replaying the same
//! requests (both against a FUSE file that logs every read and write it receives), bad targets
//! refused with a clear error and a non-zero exit, the target untouched.
//!
//! The fio comparison needs root, `/dev/fuse` and fio; it skips with the reason where any is
//! missing.

use shingled_fuse::{Backing, FileServer, Files};
use std::path::Path;
use std::process::Command;
use std::sync::{Arc, Mutex};

const BIN: &str = env!("CARGO_BIN_EXE_shingled");

/// An MSR CSV trace of `(op, byte offset, bytes)`, a millisecond apart.
fn trace(path: &Path, reqs: &[(&str, u64, u64)]) {
    let base = 128_166_372_000_000_000u64;
    let lines: Vec<String> = reqs
        .iter()
        .enumerate()
        .map(|(i, (op, off, len))| format!("{},t,0,{op},{off},{len},100", base + i as u64 * 10_000))
        .collect();
    std::fs::write(path, lines.join("\n") + "\n").unwrap();
}

type Log = Arc<Mutex<Vec<(char, u64, usize)>>>;

/// A served file of fixed size that logs every read and write.
struct Logged {
    data: Vec<u8>,
    log: Log,
}

impl Backing for Logged {
    fn read_at(&mut self, offset: u64, buf: &mut [u8]) -> std::io::Result<()> {
        self.log.lock().unwrap().push(('r', offset, buf.len()));
        let at = offset as usize;
        buf.copy_from_slice(&self.data[at..at + buf.len()]);
        Ok(())
    }
    fn write_at(&mut self, offset: u64, data: &[u8]) -> std::io::Result<()> {
        self.log.lock().unwrap().push(('w', offset, data.len()));
        let at = offset as usize;
        self.data[at..at + data.len()].copy_from_slice(data);
        Ok(())
    }
    fn sync(&mut self) -> std::io::Result<()> {
        Ok(())
    }
    fn size(&mut self) -> std::io::Result<u64> {
        Ok(self.data.len() as u64)
    }
    fn set_len(&mut self, _: u64) -> std::io::Result<()> {
        // A fixed-size file, as a disk (EPERM).
        Err(std::io::Error::from_raw_os_error(1))
    }
}

fn why_not_fio() -> Option<String> {
    if !Path::new("/dev/fuse").exists() {
        return Some("no /dev/fuse".into());
    }
    if Command::new("fio").arg("--version").output().is_err() {
        return Some("fio is not installed (Debian: apt-get install fio)".into());
    }
    None
}

#[test]
fn replay_issues_the_same_operations_as_fio() {
    if let Some(why) = why_not_fio() {
        eprintln!("skipping replay_issues_the_same_operations_as_fio: {why}");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let mnt = dir.path().join("mnt");
    std::fs::create_dir(&mnt).unwrap();
    let log: Log = Arc::default();
    let files: Files<Logged> = Files::new();
    files.insert("disk", Logged { data: vec![0; 4 << 20], log: log.clone() }).unwrap();
    let mounted = match FileServer::new(files).mount(&mnt) {
        Ok(m) => m,
        Err(e) => {
            eprintln!("skipping replay_issues_the_same_operations_as_fio: cannot mount FUSE here: {e}");
            return;
        }
    };
    let disk = mnt.join("disk");
    // Block-aligned requests of 4 to 64 KiB, reads and writes, in no order.
    let reqs: Vec<(&str, u64, u64)> = (0..40u64)
        .map(|i| {
            let op = if i % 3 == 1 { "Read" } else { "Write" };
            (op, (i * 7919 % 900) * 4096, 4096 * (1 + i % 16))
        })
        .collect();
    let t = dir.path().join("t.csv");
    trace(&t, &reqs);
    let iolog = dir.path().join("t.iolog");
    let d = disk.display();
    let mut text = format!("fio version 2 iolog\n{d} add\n{d} open\n");
    for (op, off, len) in &reqs {
        text.push_str(&format!("{d} {} {off} {len}\n", op.to_lowercase()));
    }
    text.push_str(&format!("{d} close\n"));
    std::fs::write(&iolog, text).unwrap();

    let ops = |log: &Log| -> Vec<(char, u64, usize)> { std::mem::take(&mut *log.lock().unwrap()) };
    let fio = Command::new("fio")
        .args(["--name=replay", "--ioengine=psync", "--direct=1", "--replay_no_stall=1"])
        .arg(format!("--read_iolog={}", iolog.display()))
        .output()
        .unwrap();
    assert!(fio.status.success(), "fio: {}", String::from_utf8_lossy(&fio.stderr));
    let by_fio = ops(&log);
    let ours = Command::new(BIN)
        .args(["replay", "--progress", "none", "--force", "--target"])
        .arg(&disk)
        .arg(&t)
        .output()
        .unwrap();
    assert!(ours.status.success(), "replay: {}", String::from_utf8_lossy(&ours.stderr));
    let by_us = ops(&log);
    drop(mounted);
    let expected: Vec<(char, u64, usize)> = reqs
        .iter()
        .map(|(op, off, len)| (if *op == "Read" { 'r' } else { 'w' }, *off, *len as usize))
        .collect();
    assert_eq!(by_fio, expected, "fio issued each logged request once, in order");
    // Ours first reads the target's first 8 bytes to tell what it is (a block cache or a
    // translation layer by their magic; with --force nothing more is read to judge what it
    // holds), then issues the trace's requests exactly as fio did.
    let (probes, requests): (Vec<_>, Vec<_>) = by_us.iter().partition(|o| **o == ('r', 0, 8));
    assert!(!probes.is_empty() && by_us[..probes.len()].iter().all(|o| *o == ('r', 0, 8)), "{by_us:?}");
    assert_eq!(
        requests.into_iter().copied().collect::<Vec<_>>(),
        by_fio,
        "shingled replay issued what fio issued"
    );
}

#[test]
fn bad_targets_exit_non_zero_with_the_reason_and_are_left_untouched() {
    let dir = tempfile::tempdir().unwrap();
    let t = dir.path().join("t.csv");
    trace(&t, &[("Write", 0, 4096), ("Read", 0, 4096)]);
    let img = dir.path().join("fs.img");
    let mut bytes = vec![0u8; 1 << 20];
    bytes[1024 + 56..1024 + 58].copy_from_slice(&[0x53, 0xef]); // an ext4 superblock's magic
    std::fs::write(&img, &bytes).unwrap();
    let run = |target: &Path, extra: &[&str]| {
        Command::new(BIN)
            .args(["replay", "--progress", "none", "--buffered", "--target"])
            .arg(target)
            .args(extra)
            .arg(&t)
            .output()
            .unwrap()
    };
    let o = run(&img, &[]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success() && err.contains("--force") && err.contains("Nothing was written"), "{err}");
    assert_eq!(std::fs::read(&img).unwrap(), bytes, "untouched");
    let o = run(dir.path(), &[]);
    assert!(!o.status.success() && String::from_utf8_lossy(&o.stderr).contains("is a directory"));
    let o = run(&img, &["--queue-depth", "2", "--verify"]);
    assert!(!o.status.success() && String::from_utf8_lossy(&o.stderr).contains("queue depth 1"));
    let o = run(&img, &["--force", "--verify", "--output", "json"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!((v["writes"]["requests"].as_u64(), v["verified_reads"].as_u64()), (Some(1), Some(1)));
    assert_eq!(v["target_kind"], "file");
}

/// A read-only block device (a loop device attached with `losetup -r`): writing to it is
/// refused before anything is issued; a read-only trace replays on it. Needs root and loop
/// devices; skips with the reason otherwise.
#[test]
fn a_read_only_device_is_refused_for_writes_and_read_for_reads() {
    let dir = tempfile::tempdir().unwrap();
    let img = dir.path().join("ro.img");
    std::fs::write(&img, vec![0u8; 4 << 20]).unwrap();
    let out = match Command::new("losetup").args(["-r", "-f", "--show"]).arg(&img).output() {
        Ok(o) if o.status.success() => o,
        Ok(o) => {
            eprintln!("skipping: losetup -r failed: {}", String::from_utf8_lossy(&o.stderr).trim());
            return;
        }
        Err(e) => {
            eprintln!("skipping: no losetup: {e}");
            return;
        }
    };
    let dev = String::from_utf8_lossy(&out.stdout).trim().to_string();
    let detach = || {
        let _ = Command::new("losetup").args(["-d", &dev]).status();
    };
    let writes = dir.path().join("w.csv");
    trace(&writes, &[("Write", 0, 4096)]);
    let reads = dir.path().join("r.csv");
    trace(&reads, &[("Read", 0, 4096), ("Read", 8192, 8192)]);
    let run = |t: &Path| {
        Command::new(BIN)
            .args(["replay", "--progress", "none", "--force", "--target", &dev])
            .arg(t)
            .output()
            .unwrap()
    };
    let w = run(&writes);
    let r = run(&reads);
    detach();
    let err = String::from_utf8_lossy(&w.stderr);
    assert!(!w.status.success() && err.contains("is a read-only block device"), "{err}");
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    assert!(String::from_utf8_lossy(&r.stdout).contains("block device"));
    assert_eq!(std::fs::read(&img).unwrap(), vec![0u8; 4 << 20]);
}

/// An emulated DM-SMR drive (`stl format dm-smr`) as the target, in process: the writes reach
/// its PB and cleanings, every read is checked, and `stl stats` counts what the replay did.
#[test]
fn replay_on_an_emulated_dm_smr_drive_in_process() {
    let dir = tempfile::tempdir().unwrap();
    let emu = dir.path().join("emu.img");
    let f = Command::new(BIN)
        .args(["stl", "format", "dm-smr"])
        .arg(&emu)
        .args(["--size", "64MiB", "--pb-size", "256KiB", "--bands", "fixed:4MiB"])
        .output()
        .unwrap();
    assert!(f.status.success(), "{}", String::from_utf8_lossy(&f.stderr));
    let t = dir.path().join("t.csv");
    // 300 one-block writes scattered over 48 MiB, each read back later: the 64-slot PB fills
    // and is cleaned many times.
    let mut reqs: Vec<(&str, u64, u64)> =
        (0..300u64).map(|i| ("Write", (i * 7919 % 12_288) * 4096, 4096)).collect();
    reqs.extend((0..300u64).map(|i| ("Read", (i * 7919 % 12_288) * 4096, 4096)));
    trace(&t, &reqs);
    let o = Command::new(BIN)
        .args(["replay", "--progress", "none", "--verify", "--output", "json", "--target"])
        .arg(&emu)
        .arg(&t)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["target_kind"], "translation layer dm-smr (in process)");
    assert_eq!(v["verified_reads"], 300);
    let s = Command::new(BIN).args(["stl", "stats", "--output", "json"]).arg(&emu).output().unwrap();
    let stats: serde_json::Value = serde_json::from_slice(&s.stdout).unwrap();
    let text = stats.to_string();
    assert!(text.contains("\"rmws\""), "{text}");
    let rmws = find_u64(&stats, "rmws").expect("rmws counted");
    assert!(rmws > 0, "the PB was cleaned: {text}");
}

fn find_u64(v: &serde_json::Value, key: &str) -> Option<u64> {
    match v {
        serde_json::Value::Object(m) => {
            m.get(key).and_then(|x| x.as_u64()).or_else(|| m.values().find_map(|x| find_u64(x, key)))
        }
        serde_json::Value::Array(a) => a.iter().find_map(|x| find_u64(x, key)),
        _ => None,
    }
}
