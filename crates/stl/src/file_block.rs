//! [`FileBlock`]: a [`BlockDevice`] over an ordinary file or a Linux block device, through the
//! page cache (buffered I/O).
//!
//! - **Capacity**: a regular file's length, which must be a positive multiple of [`BLOCK`]
//!   (fixed at open: the file does not grow); a block device's size from the `BLKGETSIZE64`
//!   ioctl, rounded down to whole blocks.
//! - **Read / write**: `pread`/`pwrite` of whole blocks (`FileExt::read_exact_at`,
//!   `write_all_at`). A read past the end of a regular file (one truncated after open) is an
//!   error, never zeros.
//! - **Flush**: `fdatasync` (`File::sync_data`); on a block device the kernel also flushes the
//!   drive's volatile write cache.
//! - **Discard**: the blocks must read as zeros afterwards (the [`BlockDevice`] contract).
//!   A regular file gets `fallocate(FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE)` (the blocks
//!   are deallocated and read as zeros); where the file system cannot punch holes
//!   (`EOPNOTSUPP`), zeros are written. A block device gets `BLKZEROOUT`, not `BLKDISCARD`:
//!   a discarded range of a real device may read back as anything (the kernel's
//!   `discard_zeroes_data` promise is gone since Linux 4.12), whereas `BLKZEROOUT` guarantees
//!   zeros (the device's WRITE ZEROES command where it has one, else the kernel writes zero
//!   pages; the ioctl asks for no unmapping, so it frees no space on a thin device) and drops
//!   the range from the page cache. Where `BLKZEROOUT` fails, zeros are written through the
//!   file. Either way the zeros are durable after the next flush.
//!
//! - **Lock**: [`FileBlock::open`] and [`FileBlock::create`] hold `flock(LOCK_EX)` (and open a
//!   block device with `O_EXCL`, refused while it is mounted or claimed), so a second writer —
//!   another process or another handle in this one — is refused with an error saying the
//!   device is in use; [`FileBlock::open_read_only`] holds `flock(LOCK_SH)`
//!   (`shingled_zoned::lock`).
//!
//! Linux only (the ioctls and `fallocate` modes). The only unsafe code is the three system
//! calls that `std` does not wrap (`ioctl` twice, `fallocate`), each in a small function.

use crate::block::{check_request, BlockDevice, BLOCK};
use crate::error::{invalid, io, Result, StlError};
use std::fs::{File, OpenOptions};
use std::os::fd::AsRawFd;
use std::os::unix::fs::{FileExt, FileTypeExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use shingled_zoned::lock::{lock, LockKind};

use shingled_zoned::ioctl::{BLKGETSIZE64, BLKZEROOUT};

/// Bytes of zeros written at once when zeros are written instead of discarding.
const ZERO_CHUNK: usize = 256 * BLOCK;

/// A [`BlockDevice`] over a regular file or a block device (what each operation does is in
/// the documentation of `file_block.rs`).
#[derive(Debug)]
pub struct FileBlock {
    file: File,
    path: PathBuf,
    name: String,
    capacity: u64,
    block_device: bool,
    /// Opened with [`FileBlock::open_read_only`]: writes, discards and flushes are refused.
    read_only: bool,
    /// Whether discard goes straight to writing zeros: hole punching or `BLKZEROOUT` failed
    /// once as unsupported.
    write_zeros: bool,
}

impl FileBlock {
    /// Opens the regular file or block device `path` for reading and writing, locked
    /// exclusively (a block device also with `O_EXCL`): refused while anything else has it
    /// open through `shingled`, or a block device is mounted.
    ///
    /// A regular file's length must be a positive multiple of [`BLOCK`]; a block device must
    /// hold at least one block (a tail shorter than a block is not used).
    pub fn open(path: &Path) -> Result<FileBlock> {
        // Before the open: opening a FIFO would block.
        shingled_zoned::require_file_or_block_device(path)
            .map_err(|e| io(format!("open {}", path.display()), e))?;
        let is_block = std::fs::metadata(path).is_ok_and(|m| m.file_type().is_block_device());
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .custom_flags(if is_block { libc::O_EXCL } else { 0 })
            .open(path)
            .map_err(|e| {
                if is_block && e.raw_os_error() == Some(libc::EBUSY) {
                    let why = format!(
                        "{} is in use: mounted, or claimed by another program (O_EXCL: {e})",
                        path.display()
                    );
                    io(format!("open {}", path.display()), std::io::Error::new(e.kind(), why))
                } else {
                    io(format!("open {}", path.display()), e)
                }
            })?;
        lock(&file, path, LockKind::Exclusive).map_err(|e| io(format!("open {}", path.display()), e))?;
        FileBlock::with_file(path, file, false)
    }

    /// Opens `path` for reading only, with a shared lock: other readers may have it open, a
    /// writer (a served cache, a running flush) may not. Writes are refused.
    pub fn open_read_only(path: &Path) -> Result<FileBlock> {
        shingled_zoned::require_file_or_block_device(path)
            .map_err(|e| io(format!("open {}", path.display()), e))?;
        let file = File::open(path).map_err(|e| io(format!("open {}", path.display()), e))?;
        lock(&file, path, LockKind::Shared).map_err(|e| io(format!("open {}", path.display()), e))?;
        FileBlock::with_file(path, file, true)
    }

    /// Creates the regular file `path` (failing if it exists) of `bytes` bytes, all zeros
    /// (a sparse file: `set_len`), and opens it. `bytes` must be a positive multiple of
    /// [`BLOCK`].
    pub fn create(path: &Path, bytes: u64) -> Result<FileBlock> {
        check_length(path, bytes)?;
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create_new(true)
            .open(path)
            .map_err(|e| io(format!("create {}", path.display()), e))?;
        if let Err(e) = file.set_len(bytes) {
            drop(file);
            let _ = std::fs::remove_file(path); // created above: ours to remove
            return Err(io(format!("create {}: set its length to {bytes} bytes", path.display()), e));
        }
        lock(&file, path, LockKind::Exclusive).map_err(|e| io(format!("create {}", path.display()), e))?;
        FileBlock::with_file(path, file, false)
    }

    fn with_file(path: &Path, file: File, read_only: bool) -> Result<FileBlock> {
        let meta = file.metadata().map_err(|e| io(format!("stat {}", path.display()), e))?;
        let ft = meta.file_type();
        let (capacity, block_device) = if ft.is_block_device() {
            let bytes =
                block_device_size(&file).map_err(|e| io(format!("BLKGETSIZE64 on {}", path.display()), e))?;
            if bytes < BLOCK as u64 {
                return Err(invalid(
                    &format!("size of block device {}", path.display()),
                    bytes,
                    format!("must hold at least one {BLOCK}-byte block"),
                ));
            }
            (bytes / BLOCK as u64, true)
        } else if ft.is_file() {
            check_length(path, meta.len())?;
            (meta.len() / BLOCK as u64, false)
        } else {
            return Err(invalid(
                "file type",
                format!("{} ({})", shingled_zoned::file_kind(ft), path.display()),
                "must be a regular file or a block device",
            ));
        };
        Ok(FileBlock {
            file,
            name: path.display().to_string(),
            path: path.to_path_buf(),
            capacity,
            block_device,
            read_only,
            write_zeros: false,
        })
    }

    /// Whether the device is a block device (else a regular file).
    pub fn is_block_device(&self) -> bool {
        self.block_device
    }

    /// The path it was opened with.
    pub fn path(&self) -> &Path {
        &self.path
    }

    fn refuse_if_read_only(&self, op: &str) -> Result<()> {
        if self.read_only {
            return Err(invalid(
                &format!("{op} on {}", self.name),
                "read-only",
                "the device was opened for reading only",
            ));
        }
        Ok(())
    }

    fn io_error(&self, op: &str, lba: u64, blocks: u64, e: std::io::Error) -> StlError {
        let e = if e.kind() == std::io::ErrorKind::UnexpectedEof {
            std::io::Error::new(
                e.kind(),
                "the file ends before the last block (was it truncated after open?)",
            )
        } else {
            e
        };
        io(format!("{}: {op} of {blocks} blocks at block {lba}", self.name), e)
    }

    /// Writes `bytes` zeros at byte `offset`.
    fn fill_zeros(&self, offset: u64, bytes: u64) -> std::io::Result<()> {
        let zeros = vec![0u8; ZERO_CHUNK.min(bytes as usize)];
        let mut done = 0u64;
        while done < bytes {
            let n = (bytes - done).min(zeros.len() as u64) as usize;
            self.file.write_all_at(&zeros[..n], offset + done)?;
            done += n as u64;
        }
        Ok(())
    }
}

fn check_length(path: &Path, bytes: u64) -> Result<()> {
    if bytes == 0 {
        return Err(invalid(
            &format!("length of {}", path.display()),
            bytes,
            "the file is empty; a device holds at least one 4096-byte block",
        ));
    }
    if !bytes.is_multiple_of(BLOCK as u64) {
        return Err(invalid(
            &format!("length of {}", path.display()),
            bytes,
            format!("must be a positive multiple of the {BLOCK}-byte block"),
        ));
    }
    Ok(())
}

/// A block device's size in bytes (`BLKGETSIZE64`).
#[allow(unsafe_code)]
pub(crate) fn block_device_size(file: &File) -> std::io::Result<u64> {
    let mut bytes = 0u64;
    // SAFETY: BLKGETSIZE64 writes one u64 through the pointer, which points to a live u64;
    // the descriptor is owned by `file`.
    let r = unsafe { libc::ioctl(file.as_raw_fd(), BLKGETSIZE64 as _, &mut bytes as *mut u64) };
    if r < 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(bytes)
}

#[allow(unsafe_code)]
fn block_device_zero_out(file: &File, offset: u64, bytes: u64) -> std::io::Result<()> {
    let range: [u64; 2] = [offset, bytes];
    // SAFETY: BLKZEROOUT reads two u64s (start, length) through the pointer, which points to
    // a live [u64; 2]; the descriptor is owned by `file`.
    let r = unsafe { libc::ioctl(file.as_raw_fd(), BLKZEROOUT as _, range.as_ptr()) };
    if r < 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

#[allow(unsafe_code)]
fn punch_hole(file: &File, offset: u64, bytes: u64) -> std::io::Result<()> {
    let (Ok(off), Ok(len)) = (libc::off_t::try_from(offset), libc::off_t::try_from(bytes)) else {
        return Err(std::io::Error::from_raw_os_error(libc::EFBIG));
    };
    // SAFETY: fallocate takes no pointers; the descriptor is owned by `file`.
    let r = unsafe {
        libc::fallocate(file.as_raw_fd(), libc::FALLOC_FL_PUNCH_HOLE | libc::FALLOC_FL_KEEP_SIZE, off, len)
    };
    if r < 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

impl BlockDevice for FileBlock {
    fn capacity_blocks(&self) -> u64 {
        self.capacity
    }

    fn read(&mut self, lba: u64, buf: &mut [u8]) -> Result<()> {
        let n = check_request(&self.name, "read", lba, buf.len(), self.capacity)?;
        self.file.read_exact_at(buf, lba * BLOCK as u64).map_err(|e| self.io_error("read", lba, n, e))
    }

    fn write(&mut self, lba: u64, data: &[u8]) -> Result<()> {
        self.refuse_if_read_only("write")?;
        let n = check_request(&self.name, "write", lba, data.len(), self.capacity)?;
        self.file.write_all_at(data, lba * BLOCK as u64).map_err(|e| self.io_error("write", lba, n, e))
    }

    fn flush(&mut self) -> Result<()> {
        if self.read_only {
            return Ok(()); // nothing written through this handle
        }
        self.file.sync_data().map_err(|e| io(format!("{}: flush (fdatasync)", self.name), e))
    }

    fn discard(&mut self, lba: u64, blocks: u64) -> Result<()> {
        self.refuse_if_read_only("discard")?;
        let len = usize::try_from(blocks).ok().and_then(|b| b.checked_mul(BLOCK)).ok_or_else(|| {
            StlError::Range {
                what: format!("{}: discard at block {lba}", self.name),
                detail: format!("{blocks} blocks reach past the capacity of {} blocks", self.capacity),
            }
        })?;
        check_request(&self.name, "discard", lba, len, self.capacity)?;
        if blocks == 0 {
            return Ok(());
        }
        let (offset, bytes) = (lba * BLOCK as u64, blocks * BLOCK as u64);
        if !self.write_zeros {
            let unsupported = |e: &std::io::Error| {
                matches!(e.raw_os_error(), Some(libc::EOPNOTSUPP | libc::ENOTTY | libc::ENOSYS))
            };
            if self.block_device {
                match block_device_zero_out(&self.file, offset, bytes) {
                    Ok(()) => return Ok(()),
                    // Not supported by this kernel or driver: zeros are written from now on.
                    Err(e) if unsupported(&e) => self.write_zeros = true,
                    // Anything else (EINVAL from an odd driver, EIO): zeros written this time;
                    // their write reports a real I/O error.
                    Err(_) => {}
                }
            } else {
                match punch_hole(&self.file, offset, bytes) {
                    Ok(()) => return Ok(()),
                    Err(e) if unsupported(&e) => self.write_zeros = true,
                    Err(e) => return Err(self.io_error("discard (punch hole)", lba, blocks, e)),
                }
            }
        }
        self.fill_zeros(offset, bytes).map_err(|e| self.io_error("discard (write zeros)", lba, blocks, e))
    }

    fn name(&self) -> String {
        self.name.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pattern(seed: u8, blocks: usize) -> Vec<u8> {
        (0..blocks * BLOCK).map(|i| (i as u8).wrapping_mul(31).wrapping_add(seed) | 1).collect()
    }

    #[test]
    fn round_trip_survives_reopen() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("dev");
        let mut d = FileBlock::create(&path, 16 * BLOCK as u64).unwrap();
        assert_eq!(d.capacity_blocks(), 16);
        assert!(!d.is_block_device());
        assert_eq!(d.name(), path.display().to_string());
        assert_eq!(d.path(), path);
        let data = pattern(7, 2);
        d.write(3, &data).unwrap();
        d.write(15, &pattern(9, 1)).unwrap();
        d.flush().unwrap();
        let mut buf = vec![0u8; 2 * BLOCK];
        d.read(3, &mut buf).unwrap();
        assert_eq!(buf, data);
        drop(d);

        let mut d = FileBlock::open(&path).unwrap();
        assert_eq!(d.capacity_blocks(), 16);
        let mut all = vec![1u8; 16 * BLOCK];
        d.read(0, &mut all).unwrap();
        assert!(all[..3 * BLOCK].iter().all(|&b| b == 0), "never-written blocks read as zeros");
        assert_eq!(&all[3 * BLOCK..5 * BLOCK], &data[..]);
        assert_eq!(&all[15 * BLOCK..], &pattern(9, 1)[..]);
        assert_eq!(std::fs::metadata(&path).unwrap().len(), 16 * BLOCK as u64);
    }

    #[test]
    fn range_errors_name_the_path_the_operation_and_the_block() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("small.img");
        let mut d = FileBlock::create(&path, 4 * BLOCK as u64).unwrap();
        let p = path.display().to_string();

        let e = d.read(3, &mut vec![0u8; 2 * BLOCK]).unwrap_err();
        assert!(matches!(e, StlError::Range { .. }), "{e:?}");
        let m = e.to_string();
        assert!(m.contains(&p) && m.contains("read") && m.contains("block 3"), "{m}");

        let m = d.write(0, &[0u8; 100]).unwrap_err().to_string();
        assert!(m.contains(&p) && m.contains("write") && m.contains("multiple"), "{m}");

        let m = d.discard(2, 3).unwrap_err().to_string();
        assert!(m.contains(&p) && m.contains("discard") && m.contains("block 2"), "{m}");
        assert!(d.discard(0, u64::MAX).unwrap_err().to_string().contains(&p));
        assert!(d.write(u64::MAX, &[0u8; BLOCK]).is_err());
    }

    #[test]
    fn discarded_blocks_read_as_zeros_and_keep_the_size() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("d");
        let mut d = FileBlock::create(&path, 8 * BLOCK as u64).unwrap();
        let data = pattern(3, 8);
        d.write(0, &data).unwrap();
        d.flush().unwrap();
        d.discard(2, 3).unwrap();
        d.discard(7, 0).unwrap(); // nothing
        d.flush().unwrap();
        let mut buf = vec![0u8; 8 * BLOCK];
        d.read(0, &mut buf).unwrap();
        assert_eq!(&buf[..2 * BLOCK], &data[..2 * BLOCK]);
        assert!(buf[2 * BLOCK..5 * BLOCK].iter().all(|&b| b == 0));
        assert_eq!(&buf[5 * BLOCK..], &data[5 * BLOCK..]);
        assert_eq!(std::fs::metadata(&path).unwrap().len(), 8 * BLOCK as u64);
        assert_eq!(d.capacity_blocks(), 8);
    }

    #[test]
    fn the_write_zeros_fallback_zeros_exactly_the_range() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("z");
        let blocks = ZERO_CHUNK / BLOCK * 2 + 5; // more than one chunk, and a partial one
        let mut d = FileBlock::create(&path, blocks as u64 * BLOCK as u64).unwrap();
        let data = pattern(5, blocks);
        d.write(0, &data).unwrap();
        d.write_zeros = true; // as after EOPNOTSUPP
        d.discard(1, blocks as u64 - 2).unwrap();
        let mut buf = vec![0u8; blocks * BLOCK];
        d.read(0, &mut buf).unwrap();
        assert_eq!(&buf[..BLOCK], &data[..BLOCK]);
        assert!(buf[BLOCK..(blocks - 1) * BLOCK].iter().all(|&b| b == 0));
        assert_eq!(&buf[(blocks - 1) * BLOCK..], &data[(blocks - 1) * BLOCK..]);
    }

    #[test]
    fn create_refuses_an_existing_file_and_bad_sizes() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("exists");
        std::fs::write(&path, b"keep me").unwrap();
        let e = FileBlock::create(&path, 4 * BLOCK as u64).unwrap_err();
        match &e {
            StlError::Io { source, .. } => assert_eq!(source.kind(), std::io::ErrorKind::AlreadyExists),
            other => panic!("{other:?}"),
        }
        assert!(e.to_string().contains(&path.display().to_string()), "{e}");
        assert_eq!(std::fs::read(&path).unwrap(), b"keep me", "left untouched");

        let fresh = dir.path().join("fresh");
        for bytes in [0, 5000] {
            let m = FileBlock::create(&fresh, bytes).unwrap_err().to_string();
            assert!(m.contains(&fresh.display().to_string()) && m.contains(&bytes.to_string()), "{m}");
            assert!(!fresh.exists(), "nothing created for a bad size");
        }
    }

    #[test]
    fn open_rejects_lengths_that_are_not_whole_blocks() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("odd");
        std::fs::write(&path, vec![0u8; 5000]).unwrap();
        let e = FileBlock::open(&path).unwrap_err();
        assert!(matches!(e, StlError::Invalid { .. }), "{e:?}");
        let m = e.to_string();
        assert!(m.contains(&path.display().to_string()) && m.contains("5000"), "{m}");

        std::fs::write(&path, b"").unwrap();
        let m = FileBlock::open(&path).unwrap_err().to_string();
        assert!(m.contains(&path.display().to_string()) && m.contains("= 0"), "{m}");

        let m = FileBlock::open(&dir.path().join("missing")).unwrap_err().to_string();
        assert!(m.contains("missing"), "{m}");
        assert!(FileBlock::open(dir.path()).is_err(), "a directory is not a device");
    }

    #[test]
    fn a_read_past_the_end_of_a_truncated_file_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t");
        let mut d = FileBlock::create(&path, 4 * BLOCK as u64).unwrap();
        OpenOptions::new().write(true).open(&path).unwrap().set_len(2 * BLOCK as u64).unwrap();
        let e = d.read(1, &mut vec![0u8; 2 * BLOCK]).unwrap_err();
        match &e {
            StlError::Io { source, .. } => assert_eq!(source.kind(), std::io::ErrorKind::UnexpectedEof),
            other => panic!("{other:?}"),
        }
        let m = e.to_string();
        assert!(m.contains(&path.display().to_string()) && m.contains("block 1"), "{m}");
    }

    /// Destroys the contents of the block device named by `SHINGLED_FILEBLOCK_TEST_DEV` (for
    /// instance a loop device: `losetup -f --show img`): run with `--ignored` as root.
    #[test]
    #[ignore = "needs a scratch block device in SHINGLED_FILEBLOCK_TEST_DEV"]
    fn block_device_round_trip_and_discard() {
        let Some(dev) = std::env::var_os("SHINGLED_FILEBLOCK_TEST_DEV") else { return };
        let mut d = FileBlock::open(Path::new(&dev)).unwrap();
        assert!(d.is_block_device());
        assert!(d.capacity_blocks() >= 4);
        let data = pattern(11, 4);
        d.write(0, &data).unwrap();
        d.flush().unwrap();
        d.discard(1, 2).unwrap();
        d.flush().unwrap();
        let mut buf = vec![0u8; 4 * BLOCK];
        d.read(0, &mut buf).unwrap();
        assert_eq!(&buf[..BLOCK], &data[..BLOCK]);
        assert!(buf[BLOCK..3 * BLOCK].iter().all(|&b| b == 0));
        assert_eq!(&buf[3 * BLOCK..], &data[3 * BLOCK..]);
        let last = d.capacity_blocks() - 1;
        d.read(last, &mut buf[..BLOCK]).unwrap();
        assert!(d.read(last, &mut buf[..2 * BLOCK]).is_err());
    }
}
