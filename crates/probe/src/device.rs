//! A real block device or regular file as a [`ProbeTarget`]: O_DIRECT I/O from 4 KiB-aligned
//! buffers, timed with the wall clock.
//!
//! Probing overwrites the target. [`DeviceTarget::open`] therefore refuses unless
//! [`DeviceOptions::destroy_data`] is set, refuses a block device that is mounted, used as swap,
//! or held by another block device (device-mapper, md) — itself or any of its partitions — and
//! refuses a regular file smaller than the probe needs (files are never grown).
//!
//! No `unsafe`: buffers are aligned by offsetting into an over-allocated `Vec`, I/O goes
//! through `FileExt::{read_at, write_at}`, and `libc` only supplies the `O_DIRECT` and `O_DSYNC`
//! flag values.

use crate::error::{ProbeError, Result};
use crate::target::{check_request, ProbeTarget};
use rand::{RngCore, SeedableRng};
use std::fs::{File, OpenOptions};
use std::io::{Seek, SeekFrom};
use std::os::unix::fs::{FileExt, FileTypeExt, MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// How [`DeviceTarget::open`] opens a device or file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DeviceOptions {
    /// The caller confirms that everything on the target may be destroyed. Required.
    pub destroy_data: bool,
    /// Open with O_DIRECT (bypass the page cache: the timings are the device's). Default `true`.
    pub direct: bool,
    /// If O_DIRECT is refused (tmpfs, some FUSE file systems), open without it and record a
    /// warning instead of failing. The timings are then the page cache's, useless for detection:
    /// only for tests of the plumbing. Default `false`.
    pub allow_buffered: bool,
    /// Open with O_DSYNC, so each write returns once it is on stable media rather than in the
    /// drive's volatile cache. Default `true`.
    pub dsync: bool,
    /// Bytes the probe will touch: a regular file shorter than this is refused. Default 0.
    pub min_size: u64,
}

impl Default for DeviceOptions {
    fn default() -> Self {
        DeviceOptions { destroy_data: false, direct: true, allow_buffered: false, dsync: true, min_size: 0 }
    }
}

/// A 4 KiB-aligned byte buffer without `unsafe`: a `Vec` with 4 KiB of slack, used from its
/// first aligned byte.
struct AlignedBuf {
    raw: Vec<u8>,
    offset: usize,
    len: usize,
}

impl AlignedBuf {
    const ALIGN: usize = 4096;

    fn new(len: usize) -> AlignedBuf {
        let mut raw = vec![0u8; len + Self::ALIGN];
        let offset = raw.as_ptr().align_offset(Self::ALIGN);
        // Incompressible contents, so a drive that compresses or deduplicates sees real data.
        rand_pcg::Pcg64Mcg::seed_from_u64(0x5eed).fill_bytes(&mut raw[offset..offset + len]);
        AlignedBuf { raw, offset, len }
    }

    fn slice(&self, len: usize) -> &[u8] {
        &self.raw[self.offset..self.offset + len.min(self.len)]
    }

    fn slice_mut(&mut self, len: usize) -> &mut [u8] {
        let l = len.min(self.len);
        &mut self.raw[self.offset..self.offset + l]
    }
}

/// A block device or regular file opened for probing.
pub struct DeviceTarget {
    file: File,
    path: PathBuf,
    capacity: u64,
    direct: bool,
    buf: AlignedBuf,
    opened: Instant,
    warnings: Vec<String>,
}

impl std::fmt::Debug for DeviceTarget {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DeviceTarget")
            .field("path", &self.path)
            .field("capacity", &self.capacity)
            .field("direct", &self.direct)
            .finish()
    }
}

fn io_err(path: &Path, context: impl Into<String>) -> impl FnOnce(std::io::Error) -> ProbeError {
    let (path, context) = (path.to_path_buf(), context.into());
    move |source| ProbeError::Io { path, context, source }
}

impl DeviceTarget {
    /// Opens `path` for probing after the safety checks in the module documentation.
    pub fn open(path: &Path, opts: &DeviceOptions) -> Result<DeviceTarget> {
        if !opts.destroy_data {
            return Err(ProbeError::NotConfirmed { path: path.to_path_buf() });
        }
        let meta = std::fs::metadata(path).map_err(io_err(path, "stat"))?;
        let ft = meta.file_type();
        if ft.is_block_device() {
            check_block_device_unused(path, meta.rdev())?;
        } else if ft.is_file() {
            if meta.len() < opts.min_size {
                return Err(ProbeError::TooSmall {
                    what: "the probe",
                    needed: opts.min_size,
                    capacity: meta.len(),
                    hint: format!(
                        " (regular file {}); files are not grown: create it large enough first, \
                         e.g. `fallocate -l {} {}`",
                        path.display(),
                        opts.min_size,
                        path.display()
                    ),
                });
            }
        } else {
            return Err(ProbeError::Unsupported {
                path: path.to_path_buf(),
                reason: "not a block device or a regular file".into(),
            });
        }
        let mut warnings = Vec::new();
        let open = |direct: bool| {
            let mut flags = 0;
            if direct {
                flags |= libc::O_DIRECT;
            }
            if opts.dsync {
                flags |= libc::O_DSYNC;
            }
            OpenOptions::new().read(true).write(true).custom_flags(flags).open(path)
        };
        let (mut file, direct) = match open(opts.direct) {
            Ok(f) => (f, opts.direct),
            Err(e) if opts.direct && opts.allow_buffered && e.raw_os_error() == Some(libc::EINVAL) => {
                warnings.push(format!(
                    "{}: O_DIRECT refused by the file system ({e}); opened buffered: timings are the \
                     page cache's, not the device's",
                    path.display()
                ));
                (open(false).map_err(io_err(path, "open"))?, false)
            }
            Err(e) => return Err(io_err(path, "open (O_DIRECT)")(e)),
        };
        // The one lock every writer takes: refused while a cache, layer or store has it open.
        shingled_zoned::lock::lock(&file, path, shingled_zoned::lock::LockKind::Exclusive)
            .map_err(io_err(path, "lock"))?;
        let capacity = file.seek(SeekFrom::End(0)).map_err(io_err(path, "size"))? / 4096 * 4096;
        Ok(DeviceTarget {
            file,
            path: path.to_path_buf(),
            capacity,
            direct,
            buf: AlignedBuf::new(1 << 20),
            opened: Instant::now(),
            warnings,
        })
    }

    /// Whether the target was opened with O_DIRECT.
    pub fn is_direct(&self) -> bool {
        self.direct
    }

    /// Warnings from opening (a fallback to buffered I/O).
    pub fn warnings(&self) -> &[String] {
        &self.warnings
    }

    fn ensure_buf(&mut self, len: u64) {
        if self.buf.len < len as usize {
            self.buf = AlignedBuf::new(len as usize);
        }
    }
}

impl ProbeTarget for DeviceTarget {
    fn capacity(&self) -> u64 {
        self.capacity
    }

    fn write(&mut self, offset: u64, len: u64) -> Result<Duration> {
        check_request(offset, len, self.capacity, 4096)?;
        self.ensure_buf(len);
        let t = Instant::now();
        self.file
            .write_all_at(self.buf.slice(len as usize), offset)
            .map_err(io_err(&self.path, format!("write of {len} bytes at byte {offset}")))?;
        Ok(t.elapsed())
    }

    fn read(&mut self, offset: u64, len: u64) -> Result<Duration> {
        check_request(offset, len, self.capacity, 4096)?;
        self.ensure_buf(len);
        let t = Instant::now();
        self.file
            .read_exact_at(self.buf.slice_mut(len as usize), offset)
            .map_err(io_err(&self.path, format!("read of {len} bytes at byte {offset}")))?;
        Ok(t.elapsed())
    }

    fn idle(&mut self, d: Duration) -> Result<()> {
        std::thread::sleep(d);
        Ok(())
    }

    fn elapsed(&self) -> Duration {
        self.opened.elapsed()
    }

    fn describe(&self) -> String {
        format!(
            "{} ({} bytes, {})",
            self.path.display(),
            self.capacity,
            if self.direct { "O_DIRECT" } else { "buffered" }
        )
    }
}

/// One line of `/proc/self/mounts`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MountEntry {
    /// The mounted source (`/dev/sda1`, `tmpfs`, ...).
    pub source: String,
    /// Where it is mounted.
    pub mount_point: String,
    /// File-system type.
    pub fs_type: String,
}

/// Undoes the octal escapes of `/proc/self/mounts` (`\040` for a space, ...).
fn unescape_mount_field(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'\\' && i + 4 <= b.len() && b[i + 1..i + 4].iter().all(|c| (b'0'..=b'7').contains(c)) {
            if let Ok(v) = u8::from_str_radix(&s[i + 1..i + 4], 8) {
                out.push(v);
                i += 4;
                continue;
            }
        }
        out.push(b[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Parses the text of `/proc/self/mounts` (or `/proc/mounts`); malformed lines are skipped.
pub fn parse_mounts(text: &str) -> Vec<MountEntry> {
    text.lines()
        .filter_map(|l| {
            let mut f = l.split_whitespace();
            let (source, mount_point, fs_type) = (f.next()?, f.next()?, f.next()?);
            Some(MountEntry {
                source: unescape_mount_field(source),
                mount_point: unescape_mount_field(mount_point),
                fs_type: fs_type.to_string(),
            })
        })
        .collect()
}

/// Linux `dev_t` → (major, minor), glibc's encoding.
fn major_minor(dev: u64) -> (u64, u64) {
    let major = ((dev >> 8) & 0xfff) | ((dev >> 32) & !0xfff);
    let minor = (dev & 0xff) | ((dev >> 12) & !0xff);
    (major, minor)
}

/// `sys/class/block` name of a device number, via `/sys/dev/block/MAJ:MIN`.
fn sysfs_dir(dev: u64) -> Option<PathBuf> {
    let (ma, mi) = major_minor(dev);
    std::fs::canonicalize(format!("/sys/dev/block/{ma}:{mi}")).ok()
}

/// The device numbers of `dev` and of every partition of it (a whole disk's partitions are the
/// sysfs subdirectories with a `partition` file).
fn device_family(dev: u64) -> Vec<(u64, PathBuf)> {
    let mut out = Vec::new();
    let Some(dir) = sysfs_dir(dev) else { return out };
    out.push((dev, dir.clone()));
    if let Ok(rd) = std::fs::read_dir(&dir) {
        for e in rd.flatten() {
            let p = e.path();
            if p.join("partition").exists() {
                if let Ok(s) = std::fs::read_to_string(p.join("dev")) {
                    if let Some((a, b)) = s.trim().split_once(':') {
                        if let (Ok(a), Ok(b)) = (a.parse::<u64>(), b.parse::<u64>()) {
                            let d =
                                ((a & 0xfff) << 8) | ((a & !0xfff) << 32) | (b & 0xff) | ((b & !0xff) << 12);
                            out.push((d, p));
                        }
                    }
                }
            }
        }
    }
    out
}

/// Refuses a block device that is mounted, swap, or held by another device, itself or through
/// one of its partitions.
fn check_block_device_unused(path: &Path, rdev: u64) -> Result<()> {
    let family = device_family(rdev);
    let in_family = |d: u64| d == rdev || family.iter().any(|(f, _)| *f == d);
    let in_use = |reason: String| ProbeError::InUse { path: path.to_path_buf(), reason };
    let mounts = std::fs::read_to_string("/proc/self/mounts")
        .map_err(io_err(Path::new("/proc/self/mounts"), "read"))?;
    for m in parse_mounts(&mounts) {
        // By the source's device number (canonical path, so symlinks like /dev/disk/by-id match).
        if let Ok(meta) = std::fs::metadata(&m.source) {
            if meta.file_type().is_block_device() && in_family(meta.rdev()) {
                return Err(in_use(format!("{} is mounted on {}", m.source, m.mount_point)));
            }
        }
        // By the mounted file system's device number (covers sources that are not paths).
        if let Ok(meta) = std::fs::metadata(&m.mount_point) {
            if in_family(meta.dev()) {
                return Err(in_use(format!("the file system on {} is on it", m.mount_point)));
            }
        }
    }
    if let Ok(swaps) = std::fs::read_to_string("/proc/swaps") {
        for line in swaps.lines().skip(1) {
            if let Some(src) = line.split_whitespace().next() {
                if let Ok(meta) = std::fs::metadata(src) {
                    if meta.file_type().is_block_device() && in_family(meta.rdev()) {
                        return Err(in_use(format!("{src} is used as swap")));
                    }
                }
            }
        }
    }
    for (_, dir) in &family {
        if let Ok(rd) = std::fs::read_dir(dir.join("holders")) {
            if let Some(h) = rd.flatten().next() {
                return Err(in_use(format!(
                    "{} is held by {} (device-mapper, md or similar)",
                    dir.file_name().unwrap_or_default().to_string_lossy(),
                    h.file_name().to_string_lossy()
                )));
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mounts_parse_with_escapes() {
        let text = "/dev/sda1 / ext4 rw,relatime 0 0\n\
                    tmpfs /run/user/1000 tmpfs rw 0 0\n\
                    /dev/sdb1 /mnt/my\\040disk xfs rw 0 0\n\
                    garbage\n";
        let m = parse_mounts(text);
        assert_eq!(m.len(), 3);
        assert_eq!(
            m[0],
            MountEntry { source: "/dev/sda1".into(), mount_point: "/".into(), fs_type: "ext4".into() }
        );
        assert_eq!(m[2].mount_point, "/mnt/my disk");
        assert_eq!(unescape_mount_field("a\\134b"), "a\\b");
        assert_eq!(unescape_mount_field("end\\04"), "end\\04");
    }

    #[test]
    fn device_numbers_round_trip() {
        // 8:17 = /dev/sdb1; 259:3 = an NVMe partition (major above 255 is not special here).
        for (ma, mi) in [(8u64, 17u64), (259, 3), (253, 300_000)] {
            let d = ((ma & 0xfff) << 8) | ((ma & !0xfff) << 32) | (mi & 0xff) | ((mi & !0xff) << 12);
            assert_eq!(major_minor(d), (ma, mi));
        }
    }

    #[test]
    fn refuses_without_confirmation_and_non_files() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("f");
        std::fs::write(&p, vec![0u8; 8192]).unwrap();
        let e = DeviceTarget::open(&p, &DeviceOptions::default()).unwrap_err();
        assert!(matches!(e, ProbeError::NotConfirmed { .. }), "{e}");
        assert!(e.to_string().contains("--destroy-data"), "{e}");
        let yes = DeviceOptions { destroy_data: true, ..DeviceOptions::default() };
        let e = DeviceTarget::open(dir.path(), &yes).unwrap_err();
        assert!(matches!(e, ProbeError::Unsupported { .. }), "{e}");
        let e = DeviceTarget::open(Path::new("/dev/null"), &yes).unwrap_err();
        assert!(matches!(e, ProbeError::Unsupported { .. }), "{e}");
        let small = DeviceOptions { min_size: 1 << 20, ..yes.clone() };
        let e = DeviceTarget::open(&p, &small).unwrap_err().to_string();
        assert!(e.contains("1048576") && e.contains("8192") && e.contains("fallocate"), "{e}");
    }

    /// A file another handle writes (a served cache, a store) is refused; two probes of one
    /// file at once too.
    #[test]
    fn refuses_a_file_in_use() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("f");
        std::fs::write(&p, vec![0u8; 1 << 20]).unwrap();
        let yes = DeviceOptions { destroy_data: true, direct: false, ..DeviceOptions::default() };
        let first = DeviceTarget::open(&p, &yes).unwrap();
        let e = DeviceTarget::open(&p, &yes).unwrap_err().to_string();
        assert!(e.contains("is in use"), "{e}");
        drop(first);
        DeviceTarget::open(&p, &yes).unwrap();
    }

    /// The mounted root file system's device is refused if this machine exposes it as a block
    /// device node we can stat (skipped otherwise, with the reason printed).
    #[test]
    fn refuses_the_device_of_a_mounted_file_system() {
        let mounts = std::fs::read_to_string("/proc/self/mounts").unwrap_or_default();
        let yes = DeviceOptions { destroy_data: true, ..DeviceOptions::default() };
        let Some(dev) = parse_mounts(&mounts)
            .into_iter()
            .find(|m| std::fs::metadata(&m.source).is_ok_and(|md| md.file_type().is_block_device()))
        else {
            println!("skipped: no mounted file system with a block device node visible here");
            return;
        };
        let e = DeviceTarget::open(Path::new(&dev.source), &yes).unwrap_err();
        assert!(matches!(e, ProbeError::InUse { .. } | ProbeError::Io { .. }), "{e}");
        if let ProbeError::InUse { reason, .. } = &e {
            println!("refused {}: {reason}", dev.source);
        }
    }

    /// O_DIRECT reads and writes on a temporary regular file: direct where the file system
    /// supports it, else the buffered fallback with its warning (printed).
    #[test]
    fn direct_io_on_a_temporary_file() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("disk.img");
        let f = File::create(&p).unwrap();
        f.set_len(4 << 20).unwrap();
        drop(f);
        let opts = DeviceOptions {
            destroy_data: true,
            allow_buffered: true,
            min_size: 4 << 20,
            ..Default::default()
        };
        let mut t = DeviceTarget::open(&p, &opts).unwrap();
        if t.is_direct() {
            println!("O_DIRECT works on {}", dir.path().display());
        } else {
            println!("O_DIRECT not supported under {}: {:?}", dir.path().display(), t.warnings());
        }
        assert_eq!(t.capacity(), 4 << 20);
        t.write(0, 4096).unwrap();
        t.write(1 << 20, 2 << 20).unwrap();
        t.read(4096, 8192).unwrap();
        t.idle(Duration::from_millis(1)).unwrap();
        assert!(t.elapsed() >= Duration::from_millis(1));
        let e = t.write(4 << 20, 4096).unwrap_err().to_string();
        assert!(e.contains("beyond the end"), "{e}");
        assert!(t.write(512, 4096).is_err());
        let data = std::fs::read(&p).unwrap();
        assert!(data[..4096].iter().any(|&b| b != 0), "the write reached the file");
        assert!(t.describe().contains("disk.img"));
    }
}
