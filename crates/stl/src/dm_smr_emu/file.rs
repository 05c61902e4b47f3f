//! The file or disk under an emulated drive: the zoned crate's [`FileStorage`] (locked,
//! `O_DIRECT` writes where the file system allows) with `O_DIRECT` reads as well, so the band
//! reads of an RMW and the PB reads reach the storage, not the page cache: what the real-I/O
//! experiments time. A block device is also opened with `O_EXCL` (refused while mounted or
//! claimed) and sized with `BLKGETSIZE64`.

use shingled_zoned::{FileStorage, IoMode, Storage};
use std::fs::{File, OpenOptions};
use std::io;
use std::os::unix::fs::{FileExt, FileTypeExt, OpenOptionsExt};
use std::path::Path;

/// Alignment of `O_DIRECT` transfers (offset, length, memory), as `FileStorage` uses.
const DIRECT_ALIGN: usize = 4096;

/// A file for [`super::DmSmrEmu`]: [`FileStorage`] plus an `O_DIRECT` descriptor for aligned
/// reads (others, and every read when the file system refuses `O_DIRECT`, go through the page
/// cache).
#[derive(Debug)]
pub struct EmuFile {
    inner: FileStorage,
    direct: Option<File>,
    bounce: Vec<u8>,
    /// A block device: its size, and the `O_EXCL` descriptor held while it is open.
    device: Option<(u64, File)>,
}

impl EmuFile {
    /// Creates `path` (failing if it exists) and locks it.
    pub fn create(path: &Path) -> io::Result<EmuFile> {
        EmuFile::with(FileStorage::create(path, IoMode::Auto)?, path)
    }

    /// Opens an existing `path` (a regular file or a block device) and locks it.
    pub fn open(path: &Path) -> io::Result<EmuFile> {
        EmuFile::with(FileStorage::open(path, IoMode::Auto)?, path)
    }

    fn with(inner: FileStorage, path: &Path) -> io::Result<EmuFile> {
        let device = if std::fs::metadata(path)?.file_type().is_block_device() {
            let excl = OpenOptions::new().read(true).custom_flags(libc::O_EXCL).open(path).map_err(|e| {
                if e.raw_os_error() == Some(libc::EBUSY) {
                    io::Error::new(
                        e.kind(),
                        format!("{} is in use (mounted or claimed): {e}", path.display()),
                    )
                } else {
                    e
                }
            })?;
            Some((crate::file_block::block_device_size(&excl)?, excl))
        } else {
            None
        };
        // The lock is `inner`'s; this descriptor only reads.
        let direct = if inner.is_direct() {
            OpenOptions::new().read(true).custom_flags(libc::O_DIRECT).open(path).ok()
        } else {
            None
        };
        Ok(EmuFile { inner, direct, bounce: Vec::new(), device })
    }

    /// Whether it is a block device.
    pub fn is_block_device(&self) -> bool {
        self.device.is_some()
    }

    /// Whether reads and writes bypass the page cache (`O_DIRECT`).
    pub fn is_direct(&self) -> bool {
        self.direct.is_some() && self.inner.is_direct()
    }

    /// Reads `buf` at `offset` with `O_DIRECT`; `Ok(false)` if it cannot (not aligned, no
    /// descriptor, or the file system refused the transfer: then never again).
    fn read_direct(&mut self, offset: u64, buf: &mut [u8]) -> io::Result<bool> {
        let Some(direct) = &self.direct else { return Ok(false) };
        if !offset.is_multiple_of(DIRECT_ALIGN as u64)
            || !buf.len().is_multiple_of(DIRECT_ALIGN)
            || buf.is_empty()
        {
            return Ok(false);
        }
        let aligned = buf.as_ptr().align_offset(DIRECT_ALIGN) == 0;
        if !aligned && self.bounce.len() < buf.len() + DIRECT_ALIGN {
            self.bounce = vec![0u8; buf.len() + DIRECT_ALIGN];
        }
        let a = self.bounce.as_ptr().align_offset(DIRECT_ALIGN);
        let dst: &mut [u8] = if aligned { buf } else { &mut self.bounce[a..a + buf.len()] };
        let mut done = 0;
        while done < dst.len() {
            match direct.read_at(&mut dst[done..], offset + done as u64) {
                Ok(0) => {
                    dst[done..].fill(0);
                    break;
                }
                Ok(n) => done += n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) if e.raw_os_error() == Some(libc::EINVAL) && done == 0 => {
                    self.direct = None;
                    return Ok(false);
                }
                Err(e) => return Err(e),
            }
        }
        if !aligned {
            buf.copy_from_slice(&self.bounce[a..a + buf.len()]);
        }
        Ok(true)
    }
}

impl Storage for EmuFile {
    fn read_at(&mut self, offset: u64, buf: &mut [u8]) -> io::Result<()> {
        if self.read_direct(offset, buf)? {
            return Ok(());
        }
        self.inner.read_at(offset, buf)
    }
    fn write_at(&mut self, offset: u64, data: &[u8]) -> io::Result<()> {
        self.inner.write_at(offset, data)
    }
    fn sync(&mut self) -> io::Result<()> {
        self.inner.sync()
    }
    fn size(&mut self) -> io::Result<u64> {
        match &self.device {
            Some((size, _)) => Ok(*size),
            None => self.inner.size(),
        }
    }
    fn set_len(&mut self, len: u64) -> io::Result<()> {
        match &self.device {
            Some((size, _)) if len <= *size => Ok(()),
            Some((size, _)) => Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("{} holds {size} bytes, fewer than the {len} asked for", self.inner.name()),
            )),
            None => self.inner.set_len(len),
        }
    }
    fn name(&self) -> String {
        self.inner.name()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aligned_and_unaligned_reads_see_what_was_written() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("f");
        let mut f = EmuFile::create(&p).unwrap();
        let data: Vec<u8> = (0..3 * 4096u32).map(|i| (i * 7 % 251) as u8).collect();
        f.write_at(4096, &data).unwrap();
        let mut got = vec![0u8; 3 * 4096 + 1];
        // A buffer at an odd address goes through the bounce buffer.
        f.read_at(4096, &mut got[1..]).unwrap();
        assert_eq!(&got[1..], &data[..]);
        let mut part = [0u8; 10];
        f.read_at(4100, &mut part).unwrap();
        assert_eq!(&part[..], &data[4..14]);
        // Beyond the end: zeros.
        let mut tail = vec![9u8; 8192];
        f.read_at(3 * 4096, &mut tail).unwrap();
        assert_eq!(&tail[..4096], &data[2 * 4096..]);
        assert!(tail[4096..].iter().all(|&b| b == 0));
    }
}
