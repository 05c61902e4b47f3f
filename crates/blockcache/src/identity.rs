//! Which backing device a cache belongs to, and what an existing device holds before it is
//! formatted.
//!
//! A cache's dirty blocks belong to one backing device. Its capacity alone does not tell that
//! device from another of the same size, so the superblock records a [`BackingId`] at
//! create, and every open compares it with the device it is given: a regular file by (file
//! system, inode) — what a copy or a restored backup does not keep —, a block device by the
//! disk's serial number (WWID or serial from sysfs, with the partition number; a loop
//! device's backing file), or by its device number where the kernel gives no serial. A device
//! that was moved on purpose is accepted with an explicit flag, which records its new
//! identity.
//!
//! [`contents`] says what an existing device holds — one of our formats, a file system, a
//! partition table, or simply bytes that are not zero —, so that `cache create` formats over
//! nothing it did not make unless forced (what `mkfs` and `wipefs` check).

use serde::{Deserialize, Serialize};
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::Path;

/// What identifies a backing device across opens.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case", deny_unknown_fields)]
pub enum BackingId {
    /// A regular file (a drive image, a translation layer's file).
    File {
        /// `st_dev` of the file system holding it.
        dev: u64,
        /// `st_ino`.
        ino: u64,
    },
    /// A block device.
    Block {
        /// `st_rdev` (major, minor) when the cache was created.
        rdev: u64,
        /// The disk's WWID or serial number and the partition, or a loop device's backing
        /// file, when the kernel tells it; it outlives a renumbering of the device nodes.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        disk: Option<String>,
    },
}

impl BackingId {
    /// The identity of the device at `path` (symbolic links followed).
    pub fn of(path: &Path) -> std::io::Result<BackingId> {
        let m = std::fs::metadata(path)?;
        if m.file_type().is_block_device() {
            Ok(BackingId::Block { rdev: m.rdev(), disk: disk_id(m.rdev()) })
        } else {
            Ok(BackingId::File { dev: m.dev(), ino: m.ino() })
        }
    }

    /// Whether `self` (recorded) and `now` (found) are the same device: the same inode, or the
    /// same disk serial where both know one, else the same device number.
    pub fn matches(&self, now: &BackingId) -> bool {
        match (self, now) {
            (BackingId::File { dev: a, ino: i }, BackingId::File { dev: b, ino: j }) => a == b && i == j,
            (BackingId::Block { disk: Some(x), .. }, BackingId::Block { disk: Some(y), .. }) => x == y,
            (BackingId::Block { rdev: a, .. }, BackingId::Block { rdev: b, .. }) => a == b,
            _ => false,
        }
    }
}

impl std::fmt::Display for BackingId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            BackingId::File { dev, ino } => {
                write!(f, "file {ino} on device {}:{}", libc::major(*dev), libc::minor(*dev))
            }
            BackingId::Block { rdev, disk } => {
                write!(f, "block device {}:{}", libc::major(*rdev), libc::minor(*rdev))?;
                if let Some(d) = disk {
                    write!(f, " ({d})")?;
                }
                Ok(())
            }
        }
    }
}

/// A block device's lasting name from sysfs: `wwid` or `serial` of its disk (with
/// `-part<N>` for a partition), or `loop:<backing file>` for a loop device.
fn disk_id(rdev: u64) -> Option<String> {
    let base =
        std::path::PathBuf::from(format!("/sys/dev/block/{}:{}", libc::major(rdev), libc::minor(rdev)));
    let read = |p: std::path::PathBuf| {
        std::fs::read_to_string(p).ok().map(|s| s.trim().to_string()).filter(|s| !s.is_empty())
    };
    if let Some(f) = read(base.join("loop/backing_file")) {
        return Some(format!("loop:{f}"));
    }
    let (disk, part) = match read(base.join("partition")) {
        Some(n) => (base.join(".."), Some(n)),
        None => (base, None),
    };
    let serial = read(disk.join("wwid"))
        .or_else(|| read(disk.join("device/wwid")))
        .or_else(|| read(disk.join("device/serial")))
        .or_else(|| read(disk.join("serial")))?;
    Some(match part {
        Some(n) => format!("{serial}-part{n}"),
        None => serial,
    })
}

/// Bytes read from the start of a device to judge what it holds: every signature below lies
/// within them (btrfs's, the farthest, at 64 KiB + 64).
pub const PROBE_BYTES: usize = 1 << 20;

/// What a device holds, judged from its first bytes (`head`, up to [`PROBE_BYTES`]): `None`
/// when they are all zeros, else a short description — a `shingled` format, a file system,
/// a partition table or volume signature, or "data".
pub fn contents(head: &[u8]) -> Option<String> {
    let at = |off: usize, sig: &[u8]| head.len() >= off + sig.len() && &head[off..off + sig.len()] == sig;
    let known: &[(usize, &[u8], &str)] = &[
        (0, crate::layout::MAGIC, "a shingled block cache"),
        (0, b"SHSTLMED", "a SMaRT translation layer (shingled stl format)"),
        (0, b"SHZONED\0", "a zoned device file (shingled zone create; a chunk store or a dm-zoned layer)"),
        (1080, &[0x53, 0xEF], "an ext2/3/4 file system"),
        (0, b"XFSB", "an XFS file system"),
        (65536 + 64, b"_BHRfS_M", "a Btrfs file system"),
        (0, b"LUKS\xba\xbe", "a LUKS encrypted volume"),
        (512, b"LABELONE", "an LVM physical volume"),
        (4086, b"SWAPSPACE2", "a swap area"),
        (512, b"EFI PART", "a GPT partition table"),
        (3, b"NTFS    ", "an NTFS file system"),
        (82, b"FAT32   ", "a FAT32 file system"),
        (54, b"FAT1", "a FAT file system"),
        (510, &[0x55, 0xAA], "an MBR partition table or boot sector"),
    ];
    if let Some((_, _, what)) = known.iter().find(|(off, sig, _)| at(*off, sig)) {
        return Some((*what).to_string());
    }
    head.iter().position(|&b| b != 0).map(|i| format!("data (a non-zero byte at offset {i})"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn files_match_by_inode_and_copies_do_not() {
        let dir = tempfile::tempdir().unwrap();
        let a = dir.path().join("a");
        std::fs::write(&a, [1u8; 8]).unwrap();
        let b = dir.path().join("b");
        std::fs::copy(&a, &b).unwrap();
        let link = dir.path().join("l");
        std::os::unix::fs::symlink(&a, &link).unwrap();
        let (ia, ib, il) =
            (BackingId::of(&a).unwrap(), BackingId::of(&b).unwrap(), BackingId::of(&link).unwrap());
        assert!(ia.matches(&il));
        assert!(!ia.matches(&ib));
        let json = serde_json::to_string(&ia).unwrap();
        assert_eq!(serde_json::from_str::<BackingId>(&json).unwrap(), ia);
        assert!(ia.to_string().starts_with("file "), "{ia}");
    }

    #[test]
    fn block_devices_match_by_serial_when_both_know_it() {
        let x = BackingId::Block { rdev: 0x800, disk: Some("wwn-1".into()) };
        assert!(x.matches(&BackingId::Block { rdev: 0x810, disk: Some("wwn-1".into()) }), "renumbered");
        assert!(!x.matches(&BackingId::Block { rdev: 0x800, disk: Some("wwn-2".into()) }), "another disk");
        assert!(x.matches(&BackingId::Block { rdev: 0x800, disk: None }));
        assert!(!x.matches(&BackingId::File { dev: 0x800, ino: 1 }));
    }

    #[test]
    fn contents_names_signatures_and_data() {
        let mut b = vec![0u8; PROBE_BYTES];
        assert_eq!(contents(&b), None);
        b[1080] = 0x53;
        b[1081] = 0xEF;
        assert!(contents(&b).unwrap().contains("ext2/3/4"));
        let mut b = vec![0u8; PROBE_BYTES];
        b[65536 + 64..65536 + 72].copy_from_slice(b"_BHRfS_M");
        assert!(contents(&b).unwrap().contains("Btrfs"));
        let mut b = vec![0u8; PROBE_BYTES];
        b[..8].copy_from_slice(b"SHZONED\0");
        assert!(contents(&b).unwrap().contains("zoned device file"));
        let mut b = vec![0u8; 4096];
        b[4000] = 1;
        assert_eq!(contents(&b).unwrap(), "data (a non-zero byte at offset 4000)");
        assert_eq!(contents(&[]), None);
    }
}
