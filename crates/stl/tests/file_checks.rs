//! The checks of a translation layer in a file (`shingled_stl::inspect`, `Stl::check`) report
//! every bad copy of duplicated metadata, naming the copy, instead of using the good copy
//! silently; the read-only check writes nothing.

use shingled_core::ByteSize;
use shingled_stl::file_medium::FileMedium;
use shingled_stl::{inspect, BlockDevice, DmZonedFileSpec, SmartFileSpec, SmartStlConfig, Stl, TrackMedium};
use shingled_zoned::{FileOptions, FileZoned, ZonedDevice};
use std::os::unix::fs::FileExt;
use std::path::Path;

fn smart_spec() -> SmartFileSpec {
    SmartFileSpec {
        size: ByteSize::mib(16),
        track_bytes: 64 << 10,
        zones: 2,
        head_width: 2,
        config: SmartStlConfig::default(),
    }
}

/// A SMaRT file with data and a few checkpoints (both slots hold one).
fn smart_file(path: &Path) {
    let mut s = Stl::format_smart(path, &smart_spec()).unwrap();
    for i in 0..4u64 {
        s.write(i * 16, &vec![i as u8 + 1; 4096 * 4]).unwrap();
        s.flush().unwrap();
    }
}

fn dmzoned_file(path: &Path) {
    let spec = DmZonedFileSpec {
        size: ByteSize::mib(64),
        zone_bytes: ByteSize::mib(4),
        conventional: 4,
        reserved_seq: None,
    };
    let mut s = Stl::format_dmzoned(path, &spec).unwrap();
    s.write(0, &[7u8; 4096 * 8]).unwrap();
    s.flush().unwrap();
}

fn flip(path: &Path, at: u64) {
    let f = std::fs::OpenOptions::new().read(true).write(true).open(path).unwrap();
    let mut b = [0u8; 1];
    f.read_exact_at(&mut b, at).unwrap();
    f.write_all_at(&[b[0] ^ 0x5a], at).unwrap();
}

fn problems(path: &Path) -> Vec<String> {
    inspect(path).unwrap().1
}

fn assert_one(problems: &[String], needle: &str) {
    assert!(
        problems.iter().filter(|p| p.contains(needle)).count() == 1,
        "expected one problem containing {needle:?}: {problems:#?}"
    );
}

#[test]
fn smart_reports_each_bad_copy_and_check_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("s.img");
    smart_file(&p);
    assert_eq!(problems(&p), Vec::<String>::new());
    let (data_offset, track_bytes, slot0) = {
        let m = FileMedium::open_file(&p).unwrap();
        (m.data_offset(), m.geometry().track_bytes(0) as u64, m.geometry().track_offset(2))
    };
    let fresh = std::fs::read(&p).unwrap();
    // (byte to damage, what the check must name)
    let cases = [
        (100, "the header (byte 0) is damaged"),
        (16384 + 100, "the backup header (byte 16384) is damaged"),
        (32768 + 40, "flag table block 0: copy 0 does not verify"),
        (data_offset + 4, "superblock copy in track 0 does not verify"),
        (data_offset + track_bytes + 4, "superblock copy in track 1 does not verify"),
        (data_offset + slot0 + 4, "checkpoint slot"),
    ];
    for (at, needle) in cases {
        std::fs::write(&p, &fresh).unwrap();
        flip(&p, at);
        let before = std::fs::read(&p).unwrap();
        let found = problems(&p);
        assert_one(&found, needle);
        assert!(found.iter().all(|f| f.starts_with("metadata: ")), "{found:#?}");
        assert!(std::fs::read(&p).unwrap() == before, "{needle}: the check wrote to the file");
        // The data is intact (the other copy works) and the opened layer's check says the same.
        let mut s = Stl::open(&p).unwrap();
        let mut buf = vec![0u8; 4096 * 4];
        s.read(16, &mut buf).unwrap();
        assert_eq!(buf, vec![2u8; 4096 * 4], "{needle}");
        assert_one(&s.check().unwrap(), needle);
    }
}

#[test]
fn a_smart_checkpoint_slot_is_a_problem_only_once_it_should_hold_one() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("s.img");
    // Just formatted: one checkpoint, the other slot zeroed on purpose.
    drop(Stl::format_smart(&p, &smart_spec()).unwrap());
    assert_eq!(problems(&p), Vec::<String>::new());
}

#[test]
fn dmzoned_reports_each_bad_copy_and_check_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("d.img");
    dmzoned_file(&p);
    assert_eq!(problems(&p), Vec::<String>::new());
    let fresh = std::fs::read(&p).unwrap();
    // The zoned device file's own copies.
    for (at, needle) in [(100u64, "the header (byte 0) is damaged"), (4096 + 100, "zone table")] {
        std::fs::write(&p, &fresh).unwrap();
        flip(&p, at);
        let found = problems(&p);
        assert!(found.iter().any(|f| f.contains(needle)), "{needle}: {found:#?}");
    }
    // dm-zoned's metadata sets: set 0's superblock, then one of its table blocks.
    for sector in [0u64, 8] {
        std::fs::write(&p, &fresh).unwrap();
        {
            let mut z = FileZoned::open(&p, FileOptions::default()).unwrap();
            let mut b = vec![0u8; 4096];
            z.read(sector, &mut b).unwrap();
            b[12] ^= 0x5a;
            z.write(sector, &b).unwrap();
            z.flush().unwrap();
        }
        let before = std::fs::read(&p).unwrap();
        let found = problems(&p);
        assert_one(&found, "metadata set 0 (primary) does not verify");
        assert!(std::fs::read(&p).unwrap() == before, "sector {sector}: the check wrote to the file");
        // Open recovers (rewrites the set), its check names what it found; then all is clean.
        let mut s = Stl::open(&p).unwrap();
        assert_one(&s.check().unwrap(), "metadata set 0 (primary) does not verify");
        let mut buf = vec![0u8; 4096 * 8];
        s.read(0, &mut buf).unwrap();
        assert_eq!(buf, vec![7u8; 4096 * 8]);
        s.flush().unwrap();
        drop(s);
        assert_eq!(problems(&p), Vec::<String>::new(), "sector {sector}: after recovery");
    }
}

/// Opening a FIFO blocks (and reading one never ends): every open of a layer or device file
/// refuses anything but a regular file or a block device first, saying what it is.
#[test]
fn fifos_and_directories_are_refused_before_they_are_opened() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("pipe");
    assert!(std::process::Command::new("mkfifo").arg(&fifo).status().unwrap().success());
    for (path, what) in [(fifo.as_path(), "is a FIFO"), (dir.path(), "is a directory")] {
        let errors = [
            shingled_stl::detect(path).err().map(|e| e.to_string()),
            Stl::open(path).err().map(|e| e.to_string()),
            inspect(path).err().map(|e| e.to_string()),
            FileZoned::open(path, FileOptions::default()).err().map(|e| e.to_string()),
            FileMedium::open_file(path).err().map(|e| e.to_string()),
            shingled_stl::FileBlock::open(path).err().map(|e| e.to_string()),
        ];
        for e in errors {
            let e = e.expect("refused");
            assert!(e.contains(&path.display().to_string()) && e.contains(what), "{e}");
        }
    }
}

/// A size whose zone count the metadata cannot hold is refused before anything is allocated
/// (4 EiB aborted on a failed allocation).
#[test]
fn a_dmzoned_size_beyond_the_zone_limit_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("big.img");
    let spec = DmZonedFileSpec { size: ByteSize(1 << 62), ..DmZonedFileSpec::default() };
    let e = Stl::format_dmzoned(&p, &spec).err().expect("refused").to_string();
    assert!(e.contains("invalid size") && e.contains("at most 1048576 zones"), "{e}");
    assert!(!p.exists());
}

/// A SMaRT size or zone count the medium cannot hold is refused, not overflowed.
#[test]
fn a_smart_size_beyond_the_track_limit_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("big.img");
    for (spec, needle) in [
        (SmartFileSpec { size: ByteSize(1 << 62), ..SmartFileSpec::default() }, "at most 268435456 tracks"),
        (SmartFileSpec { zones: u32::MAX, ..SmartFileSpec::default() }, "at most 16777216 recording zones"),
    ] {
        let e = Stl::format_smart(&p, &spec).err().expect("refused").to_string();
        assert!(e.contains(needle), "{e}");
        assert!(!p.exists());
    }
}
