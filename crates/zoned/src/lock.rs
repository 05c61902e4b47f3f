//! The one lock every writer of a device or file takes, and file identity.
//!
//! A writer holds `flock(LOCK_EX)` on the file or block device it writes for as long as it
//! has it open; a reader that must see a consistent state (a check, statistics) holds
//! `flock(LOCK_SH)`. `flock` locks belong to an open file description, so a second open of the
//! same file is refused within one process as well as across processes: two handles writing
//! one cache or one zoned file would corrupt it as surely as two programs would. The lock is
//! advisory: it keeps out `shingled` and anything else that asks (`flock(1)`), not `dd`.
//!
//! A block device opened for writing is also opened with `O_EXCL`, which Linux refuses
//! (`EBUSY`) while the device is mounted, is a swap area, or is claimed by another exclusive
//! opener (a device-mapper target, `mkfs`): what `mkfs` and `wipefs` do.
//!
//! [`FileId`] tells two paths naming one file (hard or symbolic links) apart from two files.

use std::fs::File;
use std::io;
use std::os::fd::AsRawFd;
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::Path;

/// How a file is locked.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LockKind {
    /// Writers: nobody else may hold any lock.
    Exclusive,
    /// Readers: other readers may, writers may not.
    Shared,
}

/// Locks `file` (opened from `path`) without waiting; the lock lasts until every descriptor of
/// this open file description is closed. A file locked elsewhere gives an error of kind
/// `WouldBlock` that names `path` and says it is in use.
pub fn lock(file: &File, path: &Path, kind: LockKind) -> io::Result<()> {
    let op = match kind {
        LockKind::Exclusive => libc::LOCK_EX,
        LockKind::Shared => libc::LOCK_SH,
    };
    if flock(file, op | libc::LOCK_NB).is_ok() {
        return Ok(());
    }
    let e = io::Error::last_os_error();
    let held = if kind == LockKind::Exclusive { "open" } else { "open for writing" };
    Err(io::Error::new(
        e.kind(),
        format!(
            "{} is in use: another process, or another handle in this one, has it {held} (flock: {e})",
            path.display()
        ),
    ))
}

#[allow(unsafe_code)]
fn flock(file: &File, op: libc::c_int) -> io::Result<()> {
    // SAFETY: flock on a valid, owned descriptor; no memory is passed.
    let r = unsafe { libc::flock(file.as_raw_fd(), op) };
    if r == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

/// What names a file for the kernel: (device, inode) of a file, the device number of a
/// block or character device node. Two paths with the same `FileId` are one file.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FileId {
    /// A regular file (or anything else that is not a device node).
    Inode {
        /// `st_dev`: the file system holding it.
        dev: u64,
        /// `st_ino`.
        ino: u64,
    },
    /// A block device.
    Block {
        /// `st_rdev`: major and minor.
        rdev: u64,
    },
    /// A character device.
    Char {
        /// `st_rdev`.
        rdev: u64,
    },
}

impl FileId {
    /// The identity of what `path` names (following symbolic links).
    pub fn of(path: &Path) -> io::Result<FileId> {
        Ok(FileId::from_metadata(&std::fs::metadata(path)?))
    }

    /// The identity of an open file.
    pub fn of_file(file: &File) -> io::Result<FileId> {
        Ok(FileId::from_metadata(&file.metadata()?))
    }

    fn from_metadata(m: &std::fs::Metadata) -> FileId {
        let ft = m.file_type();
        if ft.is_block_device() {
            FileId::Block { rdev: m.rdev() }
        } else if ft.is_char_device() {
            FileId::Char { rdev: m.rdev() }
        } else {
            FileId::Inode { dev: m.dev(), ino: m.ino() }
        }
    }

    /// Whether `a` and `b` name the same file; `false` when either cannot be read.
    pub fn same(a: &Path, b: &Path) -> bool {
        matches!((FileId::of(a), FileId::of(b)), (Ok(x), Ok(y)) if x == y)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs::OpenOptions;

    #[test]
    fn a_second_handle_is_refused_in_the_same_process_and_named() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("f");
        std::fs::write(&p, b"x").unwrap();
        let a = File::open(&p).unwrap();
        lock(&a, &p, LockKind::Exclusive).unwrap();
        let b = OpenOptions::new().read(true).write(true).open(&p).unwrap();
        let e = lock(&b, &p, LockKind::Exclusive).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::WouldBlock);
        let m = e.to_string();
        assert!(m.contains(&p.display().to_string()) && m.contains("in use"), "{m}");
        let e = lock(&b, &p, LockKind::Shared).unwrap_err();
        assert!(e.to_string().contains("in use"), "{e}");
        drop(a);
        lock(&b, &p, LockKind::Exclusive).unwrap();
    }

    #[test]
    fn readers_share_and_keep_writers_out() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("f");
        std::fs::write(&p, b"x").unwrap();
        let (r1, r2, w) = (File::open(&p).unwrap(), File::open(&p).unwrap(), File::open(&p).unwrap());
        lock(&r1, &p, LockKind::Shared).unwrap();
        lock(&r2, &p, LockKind::Shared).unwrap();
        let e = lock(&w, &p, LockKind::Exclusive).unwrap_err();
        assert!(e.to_string().contains("has it open"), "{e}");
    }

    #[test]
    fn links_are_the_same_file_and_copies_are_not() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("f");
        std::fs::write(&p, b"x").unwrap();
        let hard = dir.path().join("hard");
        std::fs::hard_link(&p, &hard).unwrap();
        let soft = dir.path().join("soft");
        std::os::unix::fs::symlink(&p, &soft).unwrap();
        let copy = dir.path().join("copy");
        std::fs::copy(&p, &copy).unwrap();
        assert!(FileId::same(&p, &hard) && FileId::same(&p, &soft));
        assert!(!FileId::same(&p, &copy));
        assert!(!FileId::same(&p, &dir.path().join("missing")));
        assert!(matches!(FileId::of(Path::new("/dev/null")).unwrap(), FileId::Char { .. }));
    }
}
