//! `shingled store` on emulated zoned device files: format → put → ls → get round trips
//! (one drive and a three-drive front), rm, info, fsck, and the errors a user can cause.

use rand::{RngCore, SeedableRng};
use std::path::Path;
use std::process::{Command, Output};

fn shingled(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_shingled")).args(args).output().expect("run shingled")
}

fn ok(args: &[&str]) -> String {
    let o = shingled(args);
    assert!(o.status.success(), "{args:?}: {}", String::from_utf8_lossy(&o.stderr));
    String::from_utf8(o.stdout).unwrap()
}

/// Fails with a message on stderr (never a panic); returns stderr.
fn fails(args: &[&str]) -> String {
    let o = shingled(args);
    let e = String::from_utf8_lossy(&o.stderr).into_owned();
    assert_eq!(o.status.code(), Some(1), "{args:?} should fail: {e}");
    assert!(!e.contains("panicked"), "{args:?}: {e}");
    e
}

/// Deterministic bytes, distinct per seed.
fn bytes(seed: u64, n: usize) -> Vec<u8> {
    let mut b = vec![0u8; n];
    rand_pcg::Pcg64Mcg::seed_from_u64(seed).fill_bytes(&mut b);
    b
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// The chunk id printed first on each line of `store put`.
fn put_ids(out: &str) -> Vec<String> {
    out.lines().map(|l| l.split_whitespace().next().unwrap().to_string()).collect()
}

#[test]
fn format_put_ls_get_rm_round_trip() {
    let dir = tempfile::tempdir().unwrap();
    let dev = dir.path().join("dev.zbd");
    let dev = s(&dev);
    let out =
        ok(&["store", "format", dev, "--create", "--zones", "12", "--zone-size", "4MiB", "--metazones", "2"]);
    assert!(out.contains("store formatted: 8 datazones of 4MiB (2 metazones), placement guided"), "{out}");
    // a 3.5 MiB file (four 1 MiB appends) and a small one
    let big = dir.path().join("big.bin");
    let small = dir.path().join("small.txt");
    std::fs::write(&big, bytes(1, 3 * 1024 * 1024 + 512 * 1024)).unwrap();
    std::fs::write(&small, b"hello, zones\n").unwrap();
    let out = ok(&["store", "put", dev, s(&big), s(&small)]);
    let ids = put_ids(&out);
    assert_eq!(ids.len(), 2, "{out}");
    assert!(out.lines().next().unwrap().ends_with("3670016 bytes"), "{out}");
    assert!(ids.iter().all(|i| i.len() == 48), "{out}");
    let out = ok(&["store", "put", dev, "--name", "--stream", "metadata", "--no-seal", s(&small)]);
    let named = put_ids(&out)[0].clone();
    assert!(
        named.starts_with(&"small.txt".bytes().map(|b| format!("{b:02x}")).collect::<String>()),
        "{named}"
    );

    // ls: table and JSON
    let table = ok(&["store", "ls", dev]);
    assert_eq!(table.lines().count(), 4, "{table}");
    assert!(
        table.lines().any(|l| l.starts_with(&ids[0])
            && l.contains("data")
            && l.contains("3670016")
            && l.contains("yes")
            && l.trim_end().ends_with('4')),
        "{table}"
    );
    assert!(
        table.lines().any(|l| l.starts_with(&named) && l.contains("metadata") && l.contains(" no ")),
        "{table}"
    );
    let v: serde_json::Value = serde_json::from_str(&ok(&["store", "ls", dev, "--output", "json"])).unwrap();
    assert_eq!(v.as_array().unwrap().len(), 3);

    // put from standard input
    let mut child = Command::new(env!("CARGO_BIN_EXE_shingled"))
        .args(["store", "put", dev, "--id", &"ee".repeat(24), "-"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::io::Write::write_all(&mut child.stdin.take().unwrap(), &bytes(5, 1_500_000)[..]).unwrap();
    let o = child.wait_with_output().unwrap();
    assert!(o.status.success() && String::from_utf8_lossy(&o.stdout).contains("1500000 bytes"));
    assert_eq!(shingled(&["store", "get", dev, &"ee".repeat(24)]).stdout, bytes(5, 1_500_000));
    ok(&["store", "rm", dev, &"ee".repeat(24)]);

    // get: byte-exact, to a file and to stdout; by name
    let back = dir.path().join("back.bin");
    ok(&["store", "get", dev, &ids[0], "-o", s(&back)]);
    assert_eq!(std::fs::read(&back).unwrap(), std::fs::read(&big).unwrap());
    assert_eq!(shingled(&["store", "get", dev, &ids[1]]).stdout, b"hello, zones\n");
    assert_eq!(shingled(&["store", "get", dev, "name:small.txt"]).stdout, b"hello, zones\n");

    // info
    let v: serde_json::Value = serde_json::from_str(&ok(&["store", "info", dev, "-O", "json"])).unwrap();
    let d = &v["drives"][0];
    assert_eq!(d["chunks"], 3);
    assert_eq!(d["sealed_chunks"], 2);
    assert_eq!(d["live_bytes"], 3670016 + 13 + 13);
    assert_eq!(d["superzone"]["metazones"], 2);
    assert_eq!(d["datazones"], 8);
    assert_eq!(d["memory"]["per_record"], 8);
    assert_eq!(d["recovery"]["zones_scanned"], 0, "the last command checkpointed: {v}");
    assert_eq!(d["recovery"]["damaged_records"], 0);
    let text = ok(&["store", "info", dev]);
    assert!(text.contains("chunks      3 (2 sealed)"), "{text}");
    assert!(text.contains("  recovery    ") && text.contains("0 zones scanned"), "{text}");

    // rm, then the chunk is gone (and stays gone after reopening)
    assert!(ok(&["store", "rm", dev, &ids[0]]).contains(&format!("deleted {}", ids[0])));
    let table = ok(&["store", "ls", dev]);
    assert_eq!(table.lines().count(), 3, "{table}");
    assert!(!table.contains(&ids[0]), "{table}");
    let e = fails(&["store", "get", dev, &ids[0]]);
    assert!(e.contains(&format!("no chunk {}", ids[0])) && e.contains("dev.zbd"), "{e}");
    assert_eq!(shingled(&["store", "get", dev, &ids[1]]).stdout, b"hello, zones\n");
    ok(&["store", "gc", dev]);
    assert_eq!(shingled(&["store", "get", dev, &ids[1]]).stdout, b"hello, zones\n");
}

#[test]
fn three_drive_front_round_trip_in_any_device_order() {
    let dir = tempfile::tempdir().unwrap();
    let devs: Vec<String> = (0..3).map(|i| s(&dir.path().join(format!("d{i}.zbd"))).to_string()).collect();
    let (a, b, c) = (devs[0].as_str(), devs[1].as_str(), devs[2].as_str());
    let out =
        ok(&["store", "format", a, "-d", b, "-d", c, "--create", "--zones", "10", "--zone-size", "2MiB"]);
    assert_eq!(out.lines().count(), 3, "{out}");
    let files: Vec<_> = (0..9)
        .map(|i| {
            let p = dir.path().join(format!("f{i}"));
            std::fs::write(&p, bytes(10 + i, 1000 + i as usize * 50_000)).unwrap();
            p
        })
        .collect();
    let mut args = vec!["store", "put", a, "-d", b, "-d", c];
    args.extend(files.iter().map(|p| s(p)));
    let out = ok(&args);
    let ids = put_ids(&out);
    assert_eq!(ids.len(), 9);
    let v: serde_json::Value =
        serde_json::from_str(&ok(&["store", "ls", a, "-d", b, "-d", c, "-O", "json"])).unwrap();
    let rows = v.as_array().unwrap();
    assert_eq!(rows.len(), 9);
    let mut used = rows.iter().map(|r| r["drive"].as_u64().unwrap()).collect::<Vec<_>>();
    used.sort();
    used.dedup();
    assert!(used.len() >= 2, "placement spread over the drives: {v}");
    // the chunk → drive map comes from the drives: another order reads the same chunks
    for (id, f) in ids.iter().zip(&files) {
        let o = shingled(&["store", "get", c, "-d", a, "-d", b, id]);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        assert_eq!(o.stdout, std::fs::read(f).unwrap(), "{id}");
    }
    let v: serde_json::Value =
        serde_json::from_str(&ok(&["store", "info", b, "-d", c, "-d", a, "-O", "json"])).unwrap();
    let chunks: u64 = v["drives"].as_array().unwrap().iter().map(|d| d["chunks"].as_u64().unwrap()).sum();
    assert_eq!(chunks, 9);
    assert_eq!((v["total"]["chunks"].as_u64(), v["total"]["drives"].as_u64()), (Some(9), Some(3)));
    let live: u64 = files.iter().map(|f| std::fs::metadata(f).unwrap().len()).sum();
    assert_eq!(v["total"]["live_bytes"].as_u64(), Some(live));
    let text = ok(&["store", "info", a, "-d", b, "-d", c]);
    assert!(text.contains("total: 3 drives") && text.contains("9 chunks (9 sealed)"), "{text}");
    // one drive alone shows only its own chunks
    let alone = ok(&["store", "ls", a]).lines().count() - 1;
    assert_eq!(alone as u64, rows.iter().filter(|r| r["device"] == a).count() as u64);
}

#[test]
fn user_errors_name_what_and_where() {
    let dir = tempfile::tempdir().unwrap();
    let dev = dir.path().join("dev.zbd");
    let dev = s(&dev);
    let missing = dir.path().join("missing.zbd");
    let e = fails(&["store", "ls", s(&missing)]);
    assert!(e.contains("missing.zbd") && e.contains("No such file"), "{e}");
    ok(&["zone", "create", dev, "--zones", "8", "--zone-size", "1MiB"]);
    let e = fails(&["store", "ls", dev]);
    assert!(e.contains("dev.zbd is not a shingled store"), "{e}");
    let e = fails(&["store", "format", dev, "--pools", "4,x,1"]);
    assert!(e.contains("--pools") && e.contains("4,x,1"), "{e}");
    let e = fails(&["store", "format", dev, "--metazones", "1"]);
    assert!(e.contains("nr_metazones 1 < 2"), "{e}");
    ok(&["store", "format", dev]);
    let e = fails(&["store", "format", dev]);
    assert!(e.contains("already holds a store") && e.contains("--force"), "{e}");
    ok(&["store", "format", dev, "--force"]);
    let e = fails(&[
        "store",
        "ls",
        dev,
        "-d",
        &format!("{}/../{}/dev.zbd", dir.path().display(), dir.path().file_name().unwrap().to_str().unwrap()),
    ]);
    assert!(e.contains("is given twice"), "{e}");
    let e = fails(&["store", "get", dev, "0123"]);
    assert!(e.contains("no chunk id starts with 0123"), "{e}");
    let e = fails(&["store", "get", dev, "01z3"]);
    assert!(e.contains("\"01z3\"") && e.contains("hex digits"), "{e}");
    let e = fails(&["store", "get", dev, &"ab".repeat(24)]);
    assert!(e.contains(&format!("no chunk {}", "ab".repeat(24))), "{e}");
    let e = fails(&["store", "rm", dev, "name:nothing"]);
    assert!(e.contains("no chunk 6e6f7468696e67"), "{e}");
    let e = fails(&["store", "put", dev, s(dir.path())]);
    assert!(e.contains("is not a regular file"), "{e}");
    let e = fails(&["store", "put", dev, s(&dir.path().join("nofile"))]);
    assert!(e.contains("nofile"), "{e}");
    let f = dir.path().join("x");
    std::fs::write(&f, b"x").unwrap();
    let id = "00".repeat(23) + "07";
    ok(&["store", "put", dev, "--id", &id, s(&f)]);
    let e = fails(&["store", "put", dev, "--id", &id, s(&f)]);
    assert!(e.contains(&format!("chunk {id} already exists")), "{e}");
    // two files of the same name under --name: refused before anything is stored
    let sub = dir.path().join("sub");
    std::fs::create_dir(&sub).unwrap();
    std::fs::write(sub.join("x"), b"other").unwrap();
    let e = fails(&["store", "put", dev, "--name", s(&f), s(&sub.join("x"))]);
    assert!(e.contains("would both be chunk 78000000"), "{e}");
    assert_eq!(ok(&["store", "ls", dev]).lines().count(), 2);
    let e = fails(&["store", "put", dev, "--name", "-"]);
    assert!(e.contains("standard input (-) has none"), "{e}");
    // a file larger than a zone goes in parts; this store has no room for them: the put fails
    // naming the reason, and none of its parts is left behind
    let big = dir.path().join("big");
    std::fs::write(&big, bytes(3, 1536 * 1024)).unwrap();
    let e = fails(&["store", "put", dev, s(&big)]);
    assert!(e.contains("out of space"), "{e}");
    assert_eq!(ok(&["store", "ls", dev]).lines().count(), 2);
}

#[test]
fn fsck_clean_then_a_flipped_byte_is_reported_with_zone_offset_and_chunk() {
    let dir = tempfile::tempdir().unwrap();
    let dev = dir.path().join("dev.zbd");
    let devs = s(&dev);
    ok(&["store", "format", devs, "--create", "--zones", "10", "--zone-size", "1MiB"]);
    let f = dir.path().join("data.bin");
    let data = bytes(7, 200_000);
    std::fs::write(&f, &data).unwrap();
    let id = put_ids(&ok(&["store", "put", devs, s(&f)]))[0].clone();
    let out = ok(&["store", "fsck", devs]);
    assert!(out.contains(": clean:") && out.contains("0 problems"), "{out}");
    // flip one byte of the chunk's data inside the device file (found by its contents)
    let mut img = std::fs::read(&dev).unwrap();
    let needle = &data[100_000..100_064];
    let at = img.windows(needle.len()).position(|w| w == needle).expect("chunk data in the device file");
    img[at + 10] ^= 0x01;
    std::fs::write(&dev, &img).unwrap();
    let o = shingled(&["store", "fsck", devs]);
    let (out, err) = (String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr));
    assert_eq!(o.status.code(), Some(1), "{out}{err}");
    assert!(err.contains("fsck found") && err.contains("dev.zbd"), "{err}");
    // the damaged slice (chunk bytes 98304..102400), named with its zone and byte
    let line = out.lines().find(|l| l.contains("at chunk offset 98304")).expect("a problem line");
    assert!(
        line.contains(&format!("chunk {id}")) && line.contains(": zone ") && line.contains("CRC"),
        "{out}"
    );
    assert!(out.contains("DAMAGED"), "{out}");
    let v: serde_json::Value =
        serde_json::from_slice(&shingled(&["store", "fsck", devs, "-O", "json"]).stdout).unwrap();
    assert_eq!(v[0]["clean"], false);
    let problems = v[0]["problems"].as_array().unwrap();
    assert!(problems.iter().all(|p| p["chunk"] == id.as_str()), "{v}");
    // the slice holding byte 100_010 of the chunk starts at 98304 (24 × 4096)
    assert!(problems.iter().any(|p| p["chunk_offset"] == 98_304 && p["zone"].as_u64().is_some()), "{v}");
    // reading the damaged slice is an error naming the chunk, never wrong data
    let e = fails(&["store", "get", devs, &id]);
    assert!(e.contains(&format!("corrupt data of chunk {id}")), "{e}");
}

#[test]
fn a_damaged_superzone_is_named_with_zone_and_byte() {
    let dir = tempfile::tempdir().unwrap();
    let dev = dir.path().join("dev.zbd");
    let devs = s(&dev);
    ok(&["store", "format", devs, "--create", "--zones", "8", "--zone-size", "1MiB", "--conventional", "1"]);
    let mut img = std::fs::read(&dev).unwrap();
    // the first record in the file is the superzone's (zone 1: the first sequential zone)
    let at = img.windows(4).position(|w| w == b"SMRR").expect("a record");
    assert_eq!(img[at + 4], 1, "record type Super");
    img[at + 32 + 12] ^= 0x01; // nr_metazones, inside the CRC'd payload
    std::fs::write(&dev, &img).unwrap();
    // One damaged copy: the second copy (the next block) opens the store, and fsck says so.
    for cmd in ["ls", "info"] {
        ok(&["store", cmd, devs]);
    }
    let o = shingled(&["store", "fsck", devs]);
    assert_eq!(o.status.code(), Some(1));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("superzone record copy 0 is damaged"), "{out}");
    // Both copies damaged: named, and not taken for "not a store".
    assert_eq!(&img[at + 4096..at + 4100], b"SMRR", "the second copy follows");
    img[at + 4096 + 32 + 12] ^= 0x01;
    std::fs::write(&dev, &img).unwrap();
    for cmd in ["ls", "fsck", "info"] {
        let e = fails(&["store", cmd, devs]);
        assert!(e.contains("dev.zbd: corrupt superzone in zone 1 at byte 0: both copies"), "{e}");
        assert!(e.contains("payload CRC") && e.contains("do not format"), "{e}");
    }
}

/// The device file's own duplicated metadata: a damaged backup header is a problem fsck
/// names (the store still opens); a damaged header opens from the backup, and fsck says so.
#[test]
fn damage_to_one_copy_of_the_device_header_is_reported_by_fsck() {
    let dir = tempfile::tempdir().unwrap();
    let dev = dir.path().join("dev.zbd");
    let devs = s(&dev);
    ok(&["store", "format", devs, "--create", "--zones", "8", "--zone-size", "1MiB"]);
    let clean = ok(&["store", "fsck", devs]);
    assert!(!clean.contains("device metadata"), "{clean}");
    let img = std::fs::read(&dev).unwrap();
    let backup = (1 << 20) - 4096;
    assert_eq!(&img[backup..backup + 8], b"SHZONED\0", "the backup header sits before the data region");
    for (at, says) in
        [(backup + 40, "the backup header (byte 1044480) is damaged"), (40, "opened from its backup")]
    {
        let mut bad = img.clone();
        bad[at] ^= 0x10;
        std::fs::write(&dev, &bad).unwrap();
        ok(&["store", "ls", devs]);
        let o = shingled(&["store", "fsck", devs]);
        let out = String::from_utf8_lossy(&o.stdout);
        assert_eq!(o.status.code(), Some(1), "{out}");
        assert!(out.contains("device metadata problem") && out.contains(says), "{out}");
        let j = shingled(&["store", "fsck", devs, "--output", "json"]);
        let v: serde_json::Value = serde_json::from_slice(&j.stdout).unwrap();
        assert_eq!(v[0]["clean"], false);
        assert_eq!(v[0]["device_metadata"][0]["after_crash"], false, "{v}");
    }
}

#[test]
fn gc_reclaims_the_zone_of_a_deleted_chunk_and_keeps_the_others() {
    let dir = tempfile::tempdir().unwrap();
    let dev = dir.path().join("dev.zbd");
    let devs = s(&dev);
    ok(&["store", "format", devs, "--create", "--zones", "10", "--zone-size", "1MiB", "--pools", "1,1,1"]);
    let files: Vec<_> = [700_000usize, 100, 700_000]
        .iter()
        .enumerate()
        .map(|(i, &n)| {
            let p = dir.path().join(format!("f{i}"));
            std::fs::write(&p, bytes(20 + i as u64, n)).unwrap();
            p
        })
        .collect();
    let ids = put_ids(&ok(&["store", "put", devs, s(&files[0]), s(&files[1]), s(&files[2])]));
    // one data zone: f0 and f1 fill it, f2 spills into the next
    ok(&["store", "rm", devs, &ids[0]]);
    let info = |k: &str| -> u64 {
        let v: serde_json::Value = serde_json::from_str(&ok(&["store", "info", devs, "-O", "json"])).unwrap();
        v["drives"][0]["zones_by_state"][k].as_u64().unwrap()
    };
    assert_eq!(info("full"), 1);
    let out = ok(&["store", "gc", devs]);
    assert!(out.contains("reclaimed zone") && out.contains("1 zones reclaimed"), "{out}");
    assert_eq!(info("full"), 0);
    for (id, f) in ids[1..].iter().zip(&files[1..]) {
        assert_eq!(shingled(&["store", "get", devs, id]).stdout, std::fs::read(f).unwrap());
    }
    assert!(ok(&["store", "fsck", devs]).contains("clean"));
    assert!(ok(&["store", "gc", devs]).contains("0 zones reclaimed"));
}

#[test]
fn fsck_ls_info_get_leave_a_damaged_device_file_unchanged() {
    let dir = tempfile::tempdir().unwrap();
    let dev = dir.path().join("dev.zbd");
    let devs = s(&dev);
    ok(&["store", "format", devs, "--create", "--zones", "10", "--zone-size", "1MiB"]);
    let f = dir.path().join("data.bin");
    let data = bytes(11, 150_000);
    std::fs::write(&f, &data).unwrap();
    let id = put_ids(&ok(&["store", "put", devs, s(&f)]))[0].clone();
    let mut img = std::fs::read(&dev).unwrap();
    let needle = &data[60_000..60_064];
    let at = img.windows(needle.len()).position(|w| w == needle).expect("chunk data in the device file");
    img[at + 3] ^= 0x40;
    std::fs::write(&dev, &img).unwrap();
    let modified = std::fs::metadata(&dev).unwrap().modified().unwrap();
    let o = shingled(&["store", "fsck", devs]);
    assert_eq!(o.status.code(), Some(1), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(String::from_utf8_lossy(&o.stdout).contains("DAMAGED"));
    assert!(shingled(&["store", "fsck", devs, "-O", "json"]).status.code() == Some(1));
    assert!(ok(&["store", "ls", devs]).contains(&id));
    ok(&["store", "info", devs]);
    let e = fails(&["store", "get", devs, &id]);
    assert!(e.contains("corrupt data"), "{e}");
    assert!(std::fs::read(&dev).unwrap() == img, "a read-only command changed the device file");
    assert_eq!(std::fs::metadata(&dev).unwrap().modified().unwrap(), modified);
    // A command that writes does change it (the comparison above can see a change).
    let g = dir.path().join("more.bin");
    std::fs::write(&g, bytes(12, 5000)).unwrap();
    ok(&["store", "put", devs, s(&g)]);
    assert!(std::fs::read(&dev).unwrap() != img);
}

/// `get` and `rm` take a unique prefix of a chunk id, as git takes abbreviated commits; an
/// ambiguous or unknown prefix is refused naming it; an unformatted or missing drive says how to
/// format it.
#[test]
fn id_prefixes_and_format_hints() {
    let dir = tempfile::tempdir().unwrap();
    let dev = dir.path().join("dev.zbd");
    let dev = s(&dev);
    ok(&["store", "format", dev, "--create", "--zones", "12", "--zone-size", "4MiB", "--metazones", "2"]);
    let files: Vec<_> = (0..3u64)
        .map(|i| {
            let p = dir.path().join(format!("f{i}.bin"));
            std::fs::write(&p, bytes(10 + i, 5000 + i as usize)).unwrap();
            p
        })
        .collect();
    let ids = put_ids(&ok(&["store", "put", dev, s(&files[0]), s(&files[1]), s(&files[2])]));
    // The shortest prefix that tells each id from the others.
    let unique = |i: usize| {
        (1..=48)
            .map(|n| &ids[i][..n])
            .find(|p| ids.iter().filter(|x| x.starts_with(p)).count() == 1)
            .unwrap()
            .to_string()
    };
    let out = dir.path().join("back.bin");
    ok(&["store", "get", dev, &unique(1), "-o", s(&out)]);
    assert_eq!(std::fs::read(&out).unwrap(), std::fs::read(&files[1]).unwrap());
    // A prefix all three share (the empty string is refused as not hex).
    let common = (0..48).take_while(|&n| ids.iter().all(|x| x[..n + 1] == ids[0][..n + 1])).count();
    if common > 0 {
        let e = fails(&["store", "get", dev, &ids[0][..common]]);
        assert!(e.contains("ambiguous") && e.contains("3 chunks"), "{e}");
    }
    let absent = if ids.iter().any(|x| x.starts_with("fff")) { "000" } else { "fff" };
    let e = fails(&["store", "get", dev, absent]);
    assert!(e.contains(&format!("no chunk id starts with {absent}")), "{e}");
    assert!(fails(&["store", "get", dev, "xyz"]).contains("hex"));
    ok(&["store", "rm", dev, &unique(0)]);
    assert!(!ok(&["store", "ls", dev]).contains(&ids[0]));

    let missing = dir.path().join("d1.zbd");
    let e = fails(&["store", "put", dev, "-d", s(&missing), s(&files[2])]);
    assert!(e.contains("shingled store format") && e.contains("d1.zbd"), "{e}");
    let raw = dir.path().join("raw.zbd");
    ok(&["zone", "create", s(&raw), "--zone-size", "4MiB", "--zones", "8"]);
    let e = fails(&["store", "ls", s(&raw)]);
    assert!(e.contains("not a shingled store") && e.contains("shingled store format"), "{e}");
}

/// A file larger than a chunk (what fits in one zone) is stored in parts under one id: `get`
/// joins them byte for byte, `ls` lists the parts and the manifest, `rm` removes the whole file,
/// fsck stays clean; a small file is one chunk as before.
#[test]
fn a_file_larger_than_a_chunk_is_stored_in_parts_and_read_back_whole() {
    let dir = tempfile::tempdir().unwrap();
    let dev = dir.path().join("dev.zbd");
    let dev = s(&dev);
    ok(&["store", "format", dev, "--create", "--zones", "16", "--zone-size", "4MiB", "--metazones", "2"]);
    let big = dir.path().join("big.bin");
    let data = bytes(7, 10 * 1024 * 1024 + 12345);
    std::fs::write(&big, &data).unwrap();
    let out = ok(&["store", "put", dev, s(&big)]);
    assert!(out.contains(&format!("{} bytes  in 3 parts", data.len())), "{out}");
    let id = put_ids(&out).remove(0);
    let ls = ok(&["store", "ls", dev]);
    assert_eq!(ls.lines().count(), 1 + 4, "3 parts and the manifest:\n{ls}");
    let back = dir.path().join("back.bin");
    ok(&["store", "get", dev, &id[..12], "-o", s(&back)]);
    assert!(std::fs::read(&back).unwrap() == data, "joined parts differ from the file");
    ok(&["store", "fsck", dev]);
    let rm = ok(&["store", "rm", dev, &id]);
    assert!(rm.contains("and its 3 parts"), "{rm}");
    assert_eq!(ok(&["store", "ls", dev]).lines().count(), 1, "nothing left");
    let e = fails(&["store", "put", dev, "--no-seal", s(&big)]);
    assert!(e.contains("stored in parts") && e.contains("--no-seal"), "{e}");
}

/// A `store format --create` that fails (bad geometry or configuration) leaves no file behind,
/// so the corrected retry works.
#[test]
fn a_failed_format_create_leaves_no_file() {
    let dir = tempfile::tempdir().unwrap();
    let dev = dir.path().join("d.zbd");
    let dev = s(&dev);
    for bad in [
        vec!["--zones", "5", "--zone-size", "4MiB"],
        vec!["--zones", "12", "--zone-size", "4KiB"],
        vec!["--zones", "12", "--zone-size", "4MiB", "--metazones", "1000"],
    ] {
        let mut args = vec!["store", "format", dev, "--create"];
        args.extend(bad.iter().copied());
        fails(&args);
        assert!(!Path::new(dev).exists(), "{bad:?} left {dev} behind");
    }
    ok(&["store", "format", dev, "--create", "--zones", "12", "--zone-size", "4MiB", "--metazones", "2"]);
}

/// A device error in the middle of a put (here: the file-size limit `ulimit -f` makes every
/// write past 14 MB fail with EFBIG, so the journal in the metazones is written but the data in
/// the datazones is not) leaves no chunk behind, however often it is retried: the store refuses
/// changes after a device error, so the put reopens it to delete what it created.
#[test]
fn a_put_failing_on_a_device_error_leaves_no_chunk_behind() {
    let dir = tempfile::tempdir().unwrap();
    let dev = dir.path().join("d.zbd");
    let dev = s(&dev);
    ok(&["store", "format", dev, "--create", "--zones", "12", "--zone-size", "4MiB", "--metazones", "2"]);
    let f = dir.path().join("f.bin");
    std::fs::write(&f, bytes(5, 100_000)).unwrap();
    let bin = env!("CARGO_BIN_EXE_shingled");
    for _ in 0..2 {
        // 28000 blocks of 512 bytes: the metazones (from 4 MiB) fit, the datazones (from 12 MiB
        // on, first write at 16 MiB) do not. SIGXFSZ is ignored so the write fails instead.
        let o = Command::new("sh")
            .arg("-c")
            .arg(format!("trap '' XFSZ; ulimit -f 28000; '{bin}' store put '{dev}' '{}'", s(&f)))
            .output()
            .unwrap();
        let e = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(1), "{e}");
        assert!(e.contains("File too large") && !e.contains("left chunk"), "{e}");
    }
    assert_eq!(ok(&["store", "ls", dev]).lines().count(), 1, "no chunk left behind");
    ok(&["store", "fsck", dev]);
    let id = put_ids(&ok(&["store", "put", dev, s(&f)])).remove(0);
    let back = dir.path().join("back.bin");
    ok(&["store", "get", dev, &id, "-o", s(&back)]);
    assert_eq!(std::fs::read(&back).unwrap(), bytes(5, 100_000));
}

/// An empty file is "not a zoned device file" with how to make one (was "bad magic"); one
/// device given twice through a hard link is named as such (was "in use by another process").
#[test]
fn empty_files_and_hard_linked_devices_are_named() {
    let dir = tempfile::tempdir().unwrap();
    let empty = dir.path().join("empty.zbd");
    std::fs::write(&empty, b"").unwrap();
    let e = fails(&["store", "ls", s(&empty)]);
    assert!(e.contains("is not a zoned device file") && e.contains("shingled zone create"), "{e}");
    let dev = dir.path().join("d.zbd");
    ok(&["store", "format", s(&dev), "--create", "--zones", "12", "--zone-size", "4MiB", "--metazones", "2"]);
    let link = dir.path().join("link.zbd");
    std::fs::hard_link(&dev, &link).unwrap();
    let e = fails(&["store", "ls", s(&dev), "-d", s(&link)]);
    assert!(e.contains("are the same file (hard links)"), "{e}");
}

#[test]
fn store_bench_write_rounds_report_medians_and_bad_rounds_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let out = ok(&[
        "store",
        "bench",
        "write",
        "--scale",
        "0.001",
        "--streams",
        "2",
        "--rounds",
        "2",
        "--dir",
        s(dir.path()),
        "--output",
        "json",
    ]);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let notes = v["notes"].as_array().unwrap();
    assert!(notes.iter().any(|n| n.as_str().unwrap().contains("median time of 2 rounds")), "{notes:?}");
    assert_eq!(v["result"]["rows"].as_array().map(Vec::len), Some(50));
    for bad in ["0", "-1", "x", "1001"] {
        let o = shingled(&["store", "bench", "write", &format!("--rounds={bad}")]);
        let e = String::from_utf8_lossy(&o.stderr);
        // 2 for the parser's refusal, 1 for the command's range check
        assert!(matches!(o.status.code(), Some(1 | 2)), "--rounds {bad}: {e}");
        assert!(e.contains("--rounds"), "--rounds {bad}: {e}");
    }
}

/// `store format` of an existing zoned device formats nothing it did not make without
/// `--force`: a store, a dm-zoned layer (metadata in the conventional zones), written zones.
#[test]
fn format_refuses_a_device_that_holds_data() {
    let dir = tempfile::tempdir().unwrap();
    let layer = dir.path().join("layer.img");
    ok(&[
        "stl",
        "format",
        "dm-zoned",
        s(&layer),
        "--size",
        "64MiB",
        "--zone-size",
        "8MiB",
        "--conventional",
        "2",
    ]);
    let before = std::fs::read(&layer).unwrap();
    let e = fails(&["store", "format", s(&layer)]);
    assert!(e.contains("holds data") && e.contains("conventional zone 0") && e.contains("--force"), "{e}");
    assert_eq!(std::fs::read(&layer).unwrap(), before, "the layer untouched");
    ok(&["store", "format", s(&layer), "--force", "--metazones", "2"]);

    let dev = dir.path().join("d.zbd");
    ok(&["zone", "create", s(&dev), "--zones", "8", "--zone-size", "4MiB"]);
    ok(&["zone", "finish", s(&dev), "--offset", &(3 * 8192).to_string(), "--count", "1"]);
    let e = fails(&["store", "format", s(&dev), "--metazones", "2"]);
    assert!(e.contains("holds data") && e.contains("zone 3"), "{e}");
    ok(&["store", "format", s(&dev), "--metazones", "2", "--force"]);
    let e = fails(&["store", "format", s(&dev), "--metazones", "2"]);
    assert!(e.contains("already holds a store"), "{e}");
}

/// `get` reads a chunk in pieces (several per part here) while another thread verifies and
/// writes them: the bytes come back whole to a file and to standard output, and damage far
/// into the chunk fails the command naming the chunk, with no output file left and only
/// verified bytes, a prefix of the data before the damaged piece, on standard output.
#[test]
fn get_in_pieces_verifies_every_piece_before_writing_it() {
    let dir = tempfile::tempdir().unwrap();
    let dev = dir.path().join("dev.zbd");
    let devs = s(&dev);
    ok(&["store", "format", devs, "--create", "--zones", "12", "--zone-size", "16MiB", "--metazones", "2"]);
    let f = dir.path().join("data.bin");
    let data = bytes(31, 30 * 1024 * 1024 + 777);
    std::fs::write(&f, &data).unwrap();
    let id = put_ids(&ok(&["store", "put", devs, s(&f)])).remove(0);
    let o = shingled(&["store", "get", devs, &id]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(o.stdout == data, "standard output differs from the file");
    let back = dir.path().join("back.bin");
    ok(&["store", "get", devs, &id, "-o", s(&back)]);
    assert!(std::fs::read(&back).unwrap() == data, "-o file differs from the file");
    std::fs::remove_file(&back).unwrap();
    // One flipped byte 25 MiB into the file: in the second part, past its first piece.
    let damaged = 25 * 1024 * 1024 + 100;
    let mut img = std::fs::read(&dev).unwrap();
    let needle = &data[damaged..damaged + 64];
    let at = img.windows(needle.len()).position(|w| w == needle).expect("chunk data in the device file");
    img[at] ^= 0x08;
    std::fs::write(&dev, &img).unwrap();
    let e = fails(&["store", "get", devs, &id, "-o", s(&back)]);
    assert!(e.contains("dev.zbd: corrupt data of chunk") && e.contains("CRC"), "{e}");
    assert!(!back.exists(), "a failed get left its output file");
    let o = shingled(&["store", "get", devs, &id]);
    assert_eq!(o.status.code(), Some(1));
    let e = String::from_utf8_lossy(&o.stderr);
    assert!(e.contains("corrupt data of chunk") && !e.contains("panicked"), "{e}");
    assert!(
        o.stdout.len() < damaged && o.stdout[..] == data[..o.stdout.len()],
        "{} bytes out",
        o.stdout.len()
    );
}

/// `get` reads a chunk of many pieces with two readers taking pieces in turn: the bytes come out
/// in order; a damaged piece stops it before any of that piece's bytes is written (standard
/// output holds exactly the pieces before it, and `-o FILE` leaves no file); of two damaged
/// pieces, read by different readers, the first in the chunk is the one reported.
#[test]
fn get_with_two_readers_writes_in_order_and_stops_at_the_first_damaged_piece() {
    const MIB: usize = 1 << 20;
    let dir = tempfile::tempdir().unwrap();
    let dev = dir.path().join("dev.zbd");
    let dev = s(&dev);
    ok(&["store", "format", dev, "--create", "--zones", "12", "--zone-size", "16MiB", "--metazones", "2"]);
    let data = bytes(21, 6 * MIB + 12345);
    let f = dir.path().join("six.bin");
    std::fs::write(&f, &data).unwrap();
    let id = put_ids(&ok(&["store", "put", dev, s(&f)]))[0].clone();
    assert_eq!(shingled(&["store", "get", dev, &id]).stdout, data);

    // Damage the bytes at chunk offsets 3.5 MiB (the fourth piece) and 2.5 MiB (the third):
    // find each in the device file by its content.
    let damage = |img: &mut Vec<u8>, at: usize| {
        let needle = &data[at..at + 64];
        let p = img.windows(64).position(|w| w == needle).expect("chunk data in the device file");
        img[p + 5] ^= 0x10;
    };
    let clean = std::fs::read(dev).unwrap();
    let mut img = clean.clone();
    damage(&mut img, 3 * MIB + MIB / 2);
    std::fs::write(dev, &img).unwrap();
    let o = shingled(&["store", "get", dev, &id]);
    assert!(!o.status.success());
    let e = String::from_utf8_lossy(&o.stderr);
    assert!(e.contains("corrupt data") && e.contains("chunk offset 3"), "{e}");
    assert_eq!(o.stdout.len(), 3 * MIB, "only the pieces before the damaged one are written");
    assert_eq!(o.stdout, data[..3 * MIB]);
    let out = dir.path().join("back.bin");
    let e = fails(&["store", "get", dev, &id, "-o", s(&out)]);
    assert!(e.contains("corrupt data"), "{e}");
    assert!(!out.exists(), "a failed get left {}", out.display());

    damage(&mut img, 2 * MIB + MIB / 2);
    std::fs::write(dev, &img).unwrap();
    for _ in 0..5 {
        let o = shingled(&["store", "get", dev, &id]);
        let e = String::from_utf8_lossy(&o.stderr);
        assert!(e.contains("corrupt data") && e.contains("chunk offset 2"), "{e}");
        assert_eq!(o.stdout, data[..2 * MIB]);
    }
    std::fs::write(dev, &clean).unwrap();
    ok(&["store", "get", dev, &id, "-o", s(&out)]);
    assert_eq!(std::fs::read(&out).unwrap(), data);
}
