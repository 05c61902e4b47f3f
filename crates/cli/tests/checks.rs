//! Checks that must not say clean when an open would fail or metadata is damaged, and inputs
//! refused before anything is opened: `cache check` on a truncated cache device or a missing
//! backing device, `stl check` on damaged duplicated metadata, FIFOs given as device files,
//! served-file names that would leave the device unreachable.

use std::os::unix::fs::FileExt;
use std::path::Path;
use std::process::{Command, Output};

fn shingled(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_shingled")).args(args).output().expect("run shingled")
}

fn out(o: &Output) -> String {
    format!("{}{}", String::from_utf8_lossy(&o.stderr), String::from_utf8_lossy(&o.stdout))
}

fn ok(o: &Output) -> String {
    assert!(o.status.success(), "failed: {}", out(o));
    out(o)
}

/// Fails with exit status 1 and returns stderr + stdout.
fn fails(o: &Output) -> String {
    assert_eq!(o.status.code(), Some(1), "expected exit status 1: {}", out(o));
    out(o)
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

#[test]
fn cache_check_refuses_what_open_refuses() {
    let dir = tempfile::tempdir().unwrap();
    let b = dir.path().join("backing.img");
    std::fs::File::create(&b).unwrap().set_len(64 << 20).unwrap();
    let c = dir.path().join("cache.img");
    ok(&shingled(&["cache", "create", s(&c), "--backing", s(&b), "--size", "8MiB"]));
    assert!(ok(&shingled(&["cache", "check", s(&c)])).contains("consistent"));
    let full = std::fs::read(&c).unwrap();

    // Truncated to half: the records are all there, the data slots are not.
    std::fs::File::options().write(true).open(&c).unwrap().set_len(4 << 20).unwrap();
    let e = fails(&shingled(&["cache", "check", s(&c)]));
    assert!(e.contains("truncated") && e.contains("needs") && !e.contains("consistent"), "{e}");
    let j = shingled(&["cache", "check", s(&c), "--output", "json"]);
    assert_eq!(j.status.code(), Some(1));
    let v: serde_json::Value = serde_json::from_slice(&j.stdout).unwrap();
    assert!(v["problems"][0].as_str().unwrap().contains("truncated"), "{v}");
    // and open agrees
    fails(&shingled(&["cache", "flush", s(&c)]));

    // Whole again, but the backing device it records is gone, then of another size.
    std::fs::write(&c, &full).unwrap();
    assert!(ok(&shingled(&["cache", "check", s(&c)])).contains("consistent"));
    std::fs::rename(&b, dir.path().join("moved.img")).unwrap();
    let e = fails(&shingled(&["cache", "check", s(&c)]));
    assert!(e.contains("does not exist") && e.contains(s(&b)), "{e}");
    fails(&shingled(&["cache", "flush", s(&c)]));
    // Another file in its place (a new inode): not the device the cache was created over.
    std::fs::File::create(&b).unwrap().set_len(64 << 20).unwrap();
    let e = fails(&shingled(&["cache", "check", s(&c)]));
    assert!(e.contains("is not the backing device this cache was created over"), "{e}");
    fails(&shingled(&["cache", "flush", s(&c)]));
    // The device itself, resized.
    std::fs::rename(dir.path().join("moved.img"), &b).unwrap();
    std::fs::File::options().write(true).open(&b).unwrap().set_len(32 << 20).unwrap();
    let e = fails(&shingled(&["cache", "check", s(&c)]));
    assert!(e.contains("holds 8192 blocks") && e.contains("16384 blocks"), "{e}");
    fails(&shingled(&["cache", "flush", s(&c)]));
}

#[test]
fn stl_check_reports_a_damaged_primary_header() {
    let dir = tempfile::tempdir().unwrap();
    for (layer, extra) in [
        ("smart", &["--size", "16MiB", "--track-size", "64KiB", "--zones", "2"][..]),
        ("dm-zoned", &["--size", "64MiB", "--zone-size", "4MiB", "--conventional", "4"][..]),
        ("dm-smr", &["--size", "16MiB", "--pb-size", "1MiB", "--bands", "fixed:1MiB"][..]),
    ] {
        let f = dir.path().join(format!("{layer}.img"));
        let mut args = vec!["stl", "format", layer, s(&f)];
        args.extend_from_slice(extra);
        ok(&shingled(&args));
        assert!(ok(&shingled(&["stl", "check", s(&f)])).contains("clean"));
        let file = std::fs::File::options().read(true).write(true).open(&f).unwrap();
        file.write_all_at(&[0xff; 4], 100).unwrap();
        let e = fails(&shingled(&["stl", "check", s(&f)]));
        assert!(e.contains("the header (byte 0) is damaged") && e.contains("backup"), "{layer}: {e}");
        let j = shingled(&["stl", "check", s(&f), "--output", "json"]);
        assert_eq!(j.status.code(), Some(1));
        let v: serde_json::Value = serde_json::from_slice(&j.stdout).unwrap();
        assert!(v["problems"][0].as_str().unwrap().contains("header (byte 0)"), "{v}");
    }
}

/// Opening a FIFO for reading blocks until a writer comes: these commands used to hang.
#[test]
fn a_fifo_given_as_a_device_file_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("pipe");
    assert!(Command::new("mkfifo").arg(&fifo).status().unwrap().success());
    for cmd in [
        &["stl", "check"][..],
        &["stl", "stats"],
        &["store", "info"],
        &["store", "fsck"],
        &["zone", "report"],
    ] {
        let mut args = cmd.to_vec();
        args.push(s(&fifo));
        let o = shingled(&args);
        assert_ne!(o.status.code(), Some(0), "{args:?}");
        assert!(out(&o).contains("is a FIFO"), "{args:?}: {}", out(&o));
    }
}

/// A served file's name must be one file name in the mount point: refused before the device is
/// opened (the file given here does not even exist) or anything is mounted.
#[test]
fn serve_refuses_names_that_leave_the_device_unreachable() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("missing.img");
    let mnt = dir.path().join("mnt");
    std::fs::create_dir(&mnt).unwrap();
    for cmd in ["stl", "cache"] {
        for name in ["", "a/b", "..", ".", "/abs", "stats", "a\u{0}b"] {
            if name.contains('\0') {
                continue; // a NUL cannot be passed on a command line; the parser refuses it too
            }
            let o = shingled(&[cmd, "serve", s(&missing), s(&mnt), "--name", name]);
            assert_ne!(o.status.code(), Some(0), "{cmd} --name {name:?}");
            let e = out(&o);
            assert!(e.contains("--name") && e.contains("not a file name"), "{cmd} --name {name:?}: {e}");
            assert!(!e.contains("missing.img"), "{cmd} --name {name:?}: refused before opening: {e}");
        }
    }
}

/// One bad block in the newest checkpoint of a chunk store: every command still opens it (the
/// previous checkpoint and the journal since), says so on stderr, and `fsck` reports the damage.
#[test]
fn store_commands_fall_back_past_a_damaged_checkpoint_and_say_so() {
    use shingled_store::format::{decode_header, u64_at, RecordType, HEADER_LEN};
    use shingled_zoned::{FileOptions, FileZoned, ZonedDevice};
    let dir = tempfile::tempdir().unwrap();
    let dev = dir.path().join("d.zbd");
    ok(&shingled(&[
        "store",
        "format",
        s(&dev),
        "--create",
        "--zones",
        "12",
        "--zone-size",
        "1MiB",
        "--metazones",
        "4",
    ]));
    let file = dir.path().join("f.txt");
    std::fs::write(&file, b"kept through a damaged checkpoint\n").unwrap();
    let put = ok(&shingled(&["store", "put", s(&dev), s(&file)]));
    let id = put.split_whitespace().next().unwrap().to_string();
    // The newest metazone (highest generation in its header) and its checkpoint body's offset.
    let (at, zone) = {
        let mut z = FileZoned::open(&dev, FileOptions::default()).unwrap();
        let info = z.info();
        let mut best = None;
        for zone in 0..info.nr_zones {
            let mut b = vec![0u8; 4096];
            z.read(info.zone_start(zone), &mut b).unwrap();
            if let Ok(h) = decode_header(&b) {
                if h.rtype == RecordType::MetaHeader {
                    let gen = u64_at(&b, HEADER_LEN);
                    if best.is_none_or(|(g, _)| gen > g) {
                        best = Some((gen, zone));
                    }
                }
            }
        }
        let zone = best.unwrap().1;
        (z.data_offset() + info.zone_start(zone) * 512 + 2 * 4096, zone)
    };
    let f = std::fs::File::options().write(true).open(&dev).unwrap();
    f.write_all_at(&[0xa5; 4096], at).unwrap();
    drop(f);
    let o = shingled(&["store", "get", s(&dev), &id]);
    assert!(o.status.success(), "{}", out(&o));
    assert_eq!(o.stdout, b"kept through a damaged checkpoint\n");
    let e = String::from_utf8_lossy(&o.stderr);
    assert!(
        e.contains("recovery:")
            && e.contains("recovered from checkpoint")
            && e.contains(&format!("metazone {zone}")),
        "{e}"
    );
    let o = shingled(&["store", "fsck", s(&dev)]);
    assert_eq!(o.status.code(), Some(1), "fsck must report the damage: {}", out(&o));
    assert!(out(&o).contains("recovered from checkpoint"), "{}", out(&o));
}
