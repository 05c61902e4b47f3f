//! What a replay issues its requests to: a file or block device (`RawTarget`, O_DIRECT by
//! default, safe to share between the queue's threads), or an in-process block device
//! (`DeviceTarget`): a `shingled` block cache (the `CachedDevice` `cache serve` runs, so FUSE is
//! not in the measurement) or a translation layer's file, one request at a time.

use crate::error::{ReplayError, Result};
use shingled_blockcache::pattern::describe;
use shingled_stl::{BlockDevice, BLOCK};
use shingled_zoned::lock::{lock, LockKind};
use std::fs::{File, OpenOptions};
use std::io::{Seek, SeekFrom};
use std::os::unix::fs::{FileExt, FileTypeExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// A device a replay sends 4 KiB-block requests to. Errors are the device's own words; the
/// replay adds the request and the target's path.
pub trait Target: Send + Sync {
    /// Capacity in 4 KiB blocks.
    fn capacity_blocks(&self) -> u64;
    /// Reads `buf.len() / 4096` blocks from `block`.
    fn read(&self, block: u64, buf: &mut [u8]) -> std::result::Result<(), String>;
    /// Writes `data.len() / 4096` blocks at `block`.
    fn write(&self, block: u64, data: &[u8]) -> std::result::Result<(), String>;
    /// Makes every write durable.
    fn flush(&self) -> std::result::Result<(), String>;
    /// Whether several requests may be in flight at once (a file descriptor: yes; an
    /// in-process device: one at a time).
    fn concurrent(&self) -> bool;
    /// Whether requests bypass the page cache (O_DIRECT).
    fn direct(&self) -> bool;
    /// What it is, for reports: "file", "block device", "block cache (in process)", ….
    fn kind(&self) -> String;
    /// Its path.
    fn path(&self) -> &Path;
}

fn target_err(path: &Path, reason: impl Into<String>) -> ReplayError {
    ReplayError::Target { path: path.to_path_buf(), reason: reason.into() }
}

/// A regular file or a block device, read and written with `pread`/`pwrite` (O_DIRECT unless
/// buffered), locked exclusively (shared when it is only read).
#[derive(Debug)]
pub struct RawTarget {
    file: File,
    path: PathBuf,
    capacity_blocks: u64,
    direct: bool,
    block_device: bool,
    writable: bool,
}

impl RawTarget {
    /// Opens `path`: for writing when `write`, with O_DIRECT when `direct`.
    pub fn open(path: &Path, direct: bool, write: bool) -> Result<RawTarget> {
        shingled_zoned::require_file_or_block_device(path).map_err(|e| target_err(path, e.to_string()))?;
        let meta = std::fs::metadata(path).map_err(|e| target_err(path, format!("cannot stat it: {e}")))?;
        let block_device = meta.file_type().is_block_device();
        if block_device && write && read_only_device(&meta) {
            return Err(target_err(path, "is a read-only block device, and the trace writes to it"));
        }
        let mut flags = if direct { libc::O_DIRECT } else { 0 };
        if block_device && write {
            flags |= libc::O_EXCL;
        }
        let mut file =
            OpenOptions::new().read(true).write(write).custom_flags(flags).open(path).map_err(|e| {
                let reason = match e.raw_os_error() {
                    Some(libc::EINVAL) if direct => {
                        format!("its file system does not support O_DIRECT ({e}); replay with --buffered")
                    }
                    Some(libc::EACCES | libc::EROFS | libc::EPERM) if write => {
                        format!("cannot be opened for writing ({e}), and the trace writes to it")
                    }
                    Some(libc::EBUSY) => format!("is in use, e.g. mounted ({e})"),
                    _ => format!("cannot be opened ({e})"),
                };
                target_err(path, reason)
            })?;
        lock(&file, path, if write { LockKind::Exclusive } else { LockKind::Shared })
            .map_err(|e| target_err(path, e.to_string()))?;
        let bytes = file
            .seek(SeekFrom::End(0))
            .map_err(|e| target_err(path, format!("cannot find its size: {e}")))?;
        let capacity_blocks = bytes / BLOCK as u64;
        if capacity_blocks == 0 {
            return Err(target_err(path, format!("holds {bytes} bytes, less than one 4 KiB block")));
        }
        Ok(RawTarget {
            file,
            path: path.to_path_buf(),
            capacity_blocks,
            direct,
            block_device,
            writable: write,
        })
    }
}

/// Whether the kernel marks the block device read-only (`/sys/dev/block/MAJ:MIN/ro`; a
/// read-only loop device opens for writing and fails only at the first write).
fn read_only_device(meta: &std::fs::Metadata) -> bool {
    use std::os::unix::fs::MetadataExt;
    let rdev = meta.rdev();
    let (major, minor) = (libc::major(rdev), libc::minor(rdev));
    std::fs::read_to_string(format!("/sys/dev/block/{major}:{minor}/ro")).is_ok_and(|s| s.trim() == "1")
}

/// `pread`/`pwrite` until the whole buffer moved (a short transfer at the end of a file is an
/// error: the replay checked the sizes).
fn full<F: FnMut(&mut [u8], u64) -> std::io::Result<usize>>(
    buf: &mut [u8],
    at: u64,
    mut f: F,
) -> std::result::Result<(), String> {
    let mut done = 0;
    while done < buf.len() {
        match f(&mut buf[done..], at + done as u64) {
            Ok(0) => return Err(format!("short transfer: {done} of {} bytes", buf.len())),
            Ok(n) => done += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e.to_string()),
        }
    }
    Ok(())
}

impl Target for RawTarget {
    fn capacity_blocks(&self) -> u64 {
        self.capacity_blocks
    }
    fn read(&self, block: u64, buf: &mut [u8]) -> std::result::Result<(), String> {
        full(buf, block * BLOCK as u64, |b, at| self.file.read_at(b, at))
    }
    fn write(&self, block: u64, data: &[u8]) -> std::result::Result<(), String> {
        if !self.writable {
            return Err("opened read-only".into());
        }
        let mut done = 0;
        let at = block * BLOCK as u64;
        while done < data.len() {
            match self.file.write_at(&data[done..], at + done as u64) {
                Ok(0) => return Err(format!("short write: {done} of {} bytes", data.len())),
                Ok(n) => done += n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e.to_string()),
            }
        }
        Ok(())
    }
    fn flush(&self) -> std::result::Result<(), String> {
        if self.writable {
            self.file.sync_data().map_err(|e| e.to_string())?;
        }
        Ok(())
    }
    fn concurrent(&self) -> bool {
        true
    }
    fn direct(&self) -> bool {
        self.direct
    }
    fn kind(&self) -> String {
        if self.block_device { "block device" } else { "file" }.into()
    }
    fn path(&self) -> &Path {
        &self.path
    }
}

/// An in-process block device (a block cache, a translation layer), one request at a time.
pub struct DeviceTarget {
    dev: Mutex<Box<dyn BlockDevice + Send>>,
    capacity_blocks: u64,
    path: PathBuf,
    kind: String,
}

impl DeviceTarget {
    /// `dev`, opened from `path`, described as `kind` in reports.
    pub fn new(dev: Box<dyn BlockDevice + Send>, path: &Path, kind: impl Into<String>) -> DeviceTarget {
        let capacity_blocks = dev.capacity_blocks();
        DeviceTarget { dev: Mutex::new(dev), capacity_blocks, path: path.to_path_buf(), kind: kind.into() }
    }

    fn with<T>(
        &self,
        f: impl FnOnce(&mut dyn BlockDevice) -> shingled_stl::Result<T>,
    ) -> std::result::Result<T, String> {
        let mut d =
            self.dev.lock().map_err(|_| "the device's lock was poisoned by a failed request".to_string())?;
        f(&mut **d).map_err(|e| e.to_string())
    }
}

impl Target for DeviceTarget {
    fn capacity_blocks(&self) -> u64 {
        self.capacity_blocks
    }
    fn read(&self, block: u64, buf: &mut [u8]) -> std::result::Result<(), String> {
        self.with(|d| d.read(block, buf))
    }
    fn write(&self, block: u64, data: &[u8]) -> std::result::Result<(), String> {
        self.with(|d| d.write(block, data))
    }
    fn flush(&self) -> std::result::Result<(), String> {
        self.with(|d| d.flush())
    }
    fn concurrent(&self) -> bool {
        false
    }
    fn direct(&self) -> bool {
        false
    }
    fn kind(&self) -> String {
        self.kind.clone()
    }
    fn path(&self) -> &Path {
        &self.path
    }
}

/// Opens `path` as a replay target: a `shingled` block cache's device (recognised by its
/// magic; opened over the backing device its superblock names) or a translation layer's file
/// run in process, otherwise the file or block device itself. `write`: the replay will write.
pub fn open_target(path: &Path, direct: bool, write: bool) -> Result<Box<dyn Target>> {
    shingled_zoned::require_file_or_block_device(path).map_err(|e| target_err(path, e.to_string()))?;
    if !path.exists() {
        return Err(target_err(path, "does not exist (a replay target is an existing file or device)"));
    }
    let is_file = std::fs::metadata(path).is_ok_and(|m| m.is_file());
    if is_file {
        let mut magic = [0u8; 8];
        let n = std::io::Read::read(
            &mut File::open(path).map_err(|e| target_err(path, e.to_string()))?,
            &mut magic,
        )
        .unwrap_or(0);
        if n == 8 && magic.as_slice() == &shingled_blockcache::layout::MAGIC[..8] {
            let c = shingled_blockcache::files::open(path, None, false)
                .map_err(|e| target_err(path, e.to_string()))?;
            return Ok(Box::new(DeviceTarget::new(Box::new(c), path, "block cache (in process)")));
        }
        if let Ok(kind) = shingled_stl::detect(path) {
            let s = shingled_stl::Stl::open(path).map_err(|e| target_err(path, e.to_string()))?;
            return Ok(Box::new(DeviceTarget::new(
                Box::new(s),
                path,
                format!("translation layer {kind} (in process)"),
            )));
        }
    }
    Ok(Box::new(RawTarget::open(path, direct, write)?))
}

/// A buffer of `len` bytes aligned to 4 KiB (what O_DIRECT asks), inside an owned vector.
#[derive(Debug, Default)]
pub struct AlignedBuf {
    v: Vec<u8>,
    off: usize,
    len: usize,
}

impl AlignedBuf {
    /// Room for at least `len` bytes, aligned.
    pub fn ensure(&mut self, len: usize) {
        if self.v.len() < len + BLOCK {
            self.v = vec![0u8; len + BLOCK];
        }
        self.off = self.v.as_ptr().align_offset(BLOCK);
        self.len = len;
    }
    /// Bytes available.
    pub fn len(&self) -> usize {
        self.len
    }
    /// Whether no bytes are available.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
    /// The aligned bytes.
    pub fn bytes(&mut self) -> &mut [u8] {
        &mut self.v[self.off..self.off + self.len]
    }
}

/// Bytes read from the start of a target to judge whether it holds data.
const HEAD_BYTES: usize = 1 << 20;

/// What `target` holds at its start that a replay's writes would destroy: `None` when its first
/// MiB is zeros or blocks an earlier replay wrote (each names itself), else what
/// `shingled cache create` would say of it (a file system, a `shingled` format, "data").
pub fn holds_data(target: &dyn Target) -> Result<Option<String>> {
    let blocks = (HEAD_BYTES / BLOCK).min(target.capacity_blocks() as usize);
    let mut buf = AlignedBuf::default();
    buf.ensure(blocks * BLOCK);
    let head = buf.bytes();
    target
        .read(0, head)
        .map_err(|e| target_err(target.path(), format!("cannot read its first blocks: {e}")))?;
    let ours = head.chunks_exact(BLOCK).enumerate().all(|(i, b)| {
        let d = describe(b);
        d == "zeros" || d.ends_with(&format!(" of block {i}"))
    });
    if ours {
        return Ok(None);
    }
    Ok(shingled_blockcache::identity::contents(head))
}
