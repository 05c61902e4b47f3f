//! The lossy file system mounted for real: files created, written, synced, cut; what a power cut
//! drops; the store's own device-file storage (`FileStorage`: `O_DIRECT` or buffered, flock)
//! on it. Skips (with the reason) where FUSE cannot be mounted.

use shingled_fuse::{fuse_available, LossyFs, Survivors};
use shingled_zoned::{FileStorage, IoMode, Storage};
use std::io::{Read, Seek, SeekFrom, Write};

fn mounted() -> Option<(LossyFs, shingled_fuse::Mounted, tempfile::TempDir)> {
    if let Err(why) = fuse_available() {
        println!("skipping: {why}");
        return None;
    }
    let dir = tempfile::tempdir().unwrap();
    let fs = LossyFs::new();
    let m = fs.mount(dir.path()).expect("mount");
    Some((fs, m, dir))
}

#[test]
fn unsynced_writes_are_lost_at_a_power_cut_synced_ones_are_not() {
    let Some((fs, m, dir)) = mounted() else { return };
    let p = dir.path().join("f");
    let mut f = std::fs::File::create(&p).unwrap();
    f.write_all(&[1u8; 10_000]).unwrap();
    f.sync_data().unwrap();
    f.write_all(&[2u8; 5_000]).unwrap();
    f.flush().unwrap();
    drop(f); // close is not a barrier
    assert_eq!(std::fs::metadata(&p).unwrap().len(), 15_000);
    let mut want = vec![1u8; 10_000];
    want.extend([2u8; 5_000]);
    assert_eq!(std::fs::read(&p).unwrap(), want);
    assert_eq!(fs.cut_power(Survivors::None), 1);
    // No remount: direct I/O means no page cache to drop.
    assert_eq!(std::fs::read(&p).unwrap(), vec![1u8; 10_000]);
    assert_eq!(std::fs::metadata(&p).unwrap().len(), 10_000);

    // A kept unsynced write survives whole, length included.
    let mut f = std::fs::OpenOptions::new().write(true).open(&p).unwrap();
    f.seek(SeekFrom::Start(12_000)).unwrap();
    f.write_all(&[3u8; 100]).unwrap();
    drop(f);
    fs.cut_power(Survivors::All);
    let b = std::fs::read(&p).unwrap();
    assert_eq!(b.len(), 12_100);
    assert!(b[10_000..12_000].iter().all(|&x| x == 0) && b[12_000..].iter().all(|&x| x == 3));

    let st = fs.stats();
    assert_eq!((st.cuts, st.unsynced_at_cut, st.syncs), (2, 2, 1), "{st:?}");
    m.unmount().unwrap();
    assert!(!p.exists(), "unmounted");
}

#[test]
fn directory_operations() {
    let Some((fs, _m, dir)) = mounted() else { return };
    let a = dir.path().join("a");
    std::fs::write(&a, b"x").unwrap();
    std::fs::write(dir.path().join("b"), b"yy").unwrap();
    let mut names: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    names.sort();
    assert_eq!(names, ["a", "b"]);
    // create_new on an existing name
    let e = std::fs::OpenOptions::new().write(true).create_new(true).open(&a).unwrap_err();
    assert_eq!(e.kind(), std::io::ErrorKind::AlreadyExists);
    // truncate and extend
    let f = std::fs::OpenOptions::new().write(true).open(&a).unwrap();
    f.set_len(4096).unwrap();
    assert_eq!(std::fs::metadata(&a).unwrap().len(), 4096);
    // unlinked while open: still readable through the descriptor
    let mut r = std::fs::File::open(&a).unwrap();
    std::fs::remove_file(&a).unwrap();
    assert!(!a.exists());
    let mut buf = Vec::new();
    r.read_to_end(&mut buf).unwrap();
    assert_eq!(buf.len(), 4096);
    assert_eq!(buf[0], b'x');
    drop((r, f));
    assert_eq!(fs.files().names(), ["b"]);
    // statfs answers
    assert!(std::process::Command::new("df").arg(dir.path()).output().is_ok_and(|o| o.status.success()));
}

#[test]
fn zoned_file_storage_runs_on_it() {
    let Some((fs, _m, dir)) = mounted() else { return };
    let p = dir.path().join("dev");
    let mut st = FileStorage::create(&p, IoMode::Auto).unwrap();
    // The device-file lock works (the kernel keeps flock locks for FUSE files itself).
    let e = FileStorage::open(&p, IoMode::Buffered).unwrap_err();
    assert!(e.to_string().contains("in use"), "{e}");
    println!("O_DIRECT accepted on the FUSE file: {}", st.is_direct());
    st.write_at(0, &[5u8; 8192]).unwrap();
    st.sync().unwrap();
    st.write_at(8192, &[6u8; 4096]).unwrap();
    fs.cut_power(Survivors::None);
    let mut b = vec![0u8; 12288];
    st.read_at(0, &mut b).unwrap();
    assert!(b[..8192].iter().all(|&x| x == 5) && b[8192..].iter().all(|&x| x == 0));
    assert_eq!(st.size().unwrap(), 8192);
}
