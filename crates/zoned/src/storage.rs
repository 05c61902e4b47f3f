//! Where [`crate::FileZoned`] keeps its bytes: a small storage-backend trait (redb's
//! `StorageBackend` shape) with a real file ([`FileStorage`]) and a crash simulator
//! ([`SimStorage`]) that can freeze at the Nth operation and lose any subset of unsynced writes.

use shingled_core::SplitMix64;
use std::fs::{File, OpenOptions};
use std::io;
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

/// A byte-addressed store with an explicit durability barrier.
///
/// Contract: after `sync` returns `Ok`, every write that returned `Ok` before it survives a
/// power cut. Writes not followed by a successful `sync` may survive whole, in part (torn at any
/// 512-byte boundary) or not at all, independently of each other. Reads see every completed
/// write. Bytes never written read as zeros.
pub trait Storage {
    /// Fills `buf` from `offset`; bytes beyond the current length read as zeros.
    fn read_at(&mut self, offset: u64, buf: &mut [u8]) -> io::Result<()>;
    /// Writes `data` at `offset`, growing the store if needed. Not durable until `sync`.
    fn write_at(&mut self, offset: u64, data: &[u8]) -> io::Result<()>;
    /// The durability barrier (`fdatasync`).
    fn sync(&mut self) -> io::Result<()>;
    /// Current length in bytes.
    fn size(&mut self) -> io::Result<u64>;
    /// Sets the length (a sparse extension when growing).
    fn set_len(&mut self, len: u64) -> io::Result<()>;
    /// A name for messages (the path for files).
    fn name(&self) -> String;
}

/// Refuses `path` unless it is a regular file or a block device, naming what it is instead.
/// Called before opening a device file: opening a FIFO for reading blocks until a writer
/// comes, and reading one never ends, so a FIFO given by mistake would hang the command. A
/// path that does not exist passes (the open that follows says so).
pub fn require_file_or_block_device(path: &Path) -> io::Result<()> {
    let Ok(m) = std::fs::metadata(path) else { return Ok(()) };
    let t = m.file_type();
    if t.is_file() || std::os::unix::fs::FileTypeExt::is_block_device(&t) {
        return Ok(());
    }
    Err(io::Error::new(
        io::ErrorKind::InvalidInput,
        format!(
            "{} is {}: a device file must be a regular file or a block device",
            path.display(),
            file_kind(t)
        ),
    ))
}

/// What a file of type `t` is, for messages: "a FIFO (named pipe)", "a directory", ….
pub fn file_kind(t: std::fs::FileType) -> &'static str {
    use std::os::unix::fs::FileTypeExt;
    if t.is_file() {
        "a regular file"
    } else if t.is_block_device() {
        "a block device"
    } else if t.is_fifo() {
        "a FIFO (named pipe)"
    } else if t.is_dir() {
        "a directory"
    } else if t.is_socket() {
        "a socket"
    } else if t.is_char_device() {
        "a character device"
    } else {
        "not a regular file"
    }
}

/// How [`FileStorage`] writes data.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum IoMode {
    /// Through the page cache; durability from `fdatasync`.
    Buffered,
    /// `O_DIRECT` for 4 KiB-aligned writes (others go through the page cache); fails if the
    /// filesystem refuses `O_DIRECT`.
    Direct,
    /// `O_DIRECT` if the filesystem supports it, else buffered (decided at open and at the
    /// first direct write; [`FileStorage::is_direct`] says which).
    #[default]
    Auto,
}

/// Alignment of `O_DIRECT` transfers (offset, length, memory): 4 KiB works for 512-byte and
/// 4 KiB logical blocks alike.
pub const DIRECT_ALIGN: usize = 4096;

/// A file, optionally written with `O_DIRECT`, locked with `flock(LOCK_EX)` while open.
#[derive(Debug)]
pub struct FileStorage {
    path: PathBuf,
    file: File,
    direct: Option<File>,
    mode: IoMode,
    bounce: Vec<u8>,
}

impl FileStorage {
    /// Creates `path` (failing if it exists) and locks it.
    pub fn create(path: &Path, mode: IoMode) -> io::Result<FileStorage> {
        let file = OpenOptions::new().read(true).write(true).create_new(true).open(path)?;
        FileStorage::with_file(path, file, mode)
    }

    /// Opens an existing `path` (a regular file or a block device: anything else is refused
    /// before it is opened, [`require_file_or_block_device`]) for reading and writing and locks
    /// it.
    pub fn open(path: &Path, mode: IoMode) -> io::Result<FileStorage> {
        require_file_or_block_device(path)?;
        let file = OpenOptions::new().read(true).write(true).open(path)?;
        FileStorage::with_file(path, file, mode)
    }

    /// A second handle on the same open file (the same open file description, so the same
    /// lock): for a second reader beside this one. Both may read at the same time; a write
    /// through one is in the file for the other's reads (the page cache is one).
    pub fn try_clone(&self) -> io::Result<FileStorage> {
        Ok(FileStorage {
            path: self.path.clone(),
            file: self.file.try_clone()?,
            direct: self.direct.as_ref().map(File::try_clone).transpose()?,
            mode: self.mode,
            bounce: Vec::new(),
        })
    }

    fn with_file(path: &Path, file: File, mode: IoMode) -> io::Result<FileStorage> {
        crate::lock::lock(&file, path, crate::lock::LockKind::Exclusive)?;
        let direct = match mode {
            IoMode::Buffered => None,
            IoMode::Direct | IoMode::Auto => {
                match OpenOptions::new().read(true).write(true).custom_flags(libc::O_DIRECT).open(path) {
                    Ok(f) => Some(f),
                    Err(e) if mode == IoMode::Direct => {
                        return Err(io::Error::new(e.kind(), format!("O_DIRECT open refused: {e}")))
                    }
                    Err(_) => None,
                }
            }
        };
        Ok(FileStorage { path: path.to_path_buf(), file, direct, mode, bounce: Vec::new() })
    }

    /// Whether data writes currently use `O_DIRECT`.
    pub fn is_direct(&self) -> bool {
        self.direct.is_some()
    }

    fn write_direct(&mut self, offset: u64, data: &[u8]) -> io::Result<bool> {
        let Some(direct) = &self.direct else { return Ok(false) };
        if !offset.is_multiple_of(DIRECT_ALIGN as u64)
            || !data.len().is_multiple_of(DIRECT_ALIGN)
            || data.is_empty()
        {
            return Ok(false);
        }
        // A caller's buffer that is already aligned goes straight to the kernel; others are
        // copied into an aligned bounce buffer first.
        let buf: &[u8] = if data.as_ptr().align_offset(DIRECT_ALIGN) == 0 {
            data
        } else {
            if self.bounce.len() < data.len() + DIRECT_ALIGN {
                self.bounce = vec![0u8; data.len() + DIRECT_ALIGN];
            }
            let a = self.bounce.as_ptr().align_offset(DIRECT_ALIGN);
            let b = &mut self.bounce[a..a + data.len()];
            b.copy_from_slice(data);
            b
        };
        match direct.write_all_at(buf, offset) {
            Ok(()) => Ok(true),
            Err(e) if e.raw_os_error() == Some(libc::EINVAL) && self.mode == IoMode::Auto => {
                // The filesystem accepted the open flag but not the transfer: fall back for good.
                self.direct = None;
                Ok(false)
            }
            Err(e) => Err(e),
        }
    }
}

impl Storage for FileStorage {
    fn read_at(&mut self, offset: u64, buf: &mut [u8]) -> io::Result<()> {
        let mut done = 0;
        while done < buf.len() {
            match self.file.read_at(&mut buf[done..], offset + done as u64) {
                Ok(0) => {
                    buf[done..].fill(0);
                    break;
                }
                Ok(n) => done += n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }

    fn write_at(&mut self, offset: u64, data: &[u8]) -> io::Result<()> {
        if self.write_direct(offset, data)? {
            return Ok(());
        }
        self.file.write_all_at(data, offset)
    }

    fn sync(&mut self) -> io::Result<()> {
        self.file.sync_data()
    }

    fn size(&mut self) -> io::Result<u64> {
        Ok(self.file.metadata()?.len())
    }

    fn set_len(&mut self, len: u64) -> io::Result<()> {
        self.file.set_len(len)
    }

    fn name(&self) -> String {
        self.path.display().to_string()
    }
}

/// Which unsynced writes survive a simulated power cut.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Survivors {
    /// None: only synced data remains (the strictest case).
    None,
    /// All of them (a process crash: the page cache survives).
    All,
    /// Each independently kept, dropped, or torn at a random 512-byte boundary, from `seed`.
    Random {
        /// RNG seed.
        seed: u64,
    },
}

/// An in-memory [`Storage`] that remembers which writes are durable, for crash tests.
///
/// [`SimStorage::fail_after`] freezes it at the Nth later operation (that operation and all
/// after it fail with `EIO`, like a device that lost power mid-command); [`SimStorage::power_cut`]
/// then gives the image a restart would find.
#[derive(Clone, Debug, Default)]
pub struct SimStorage {
    durable: Vec<u8>,
    current: Vec<u8>,
    pending: Vec<(u64, Vec<u8>)>,
    ops: u64,
    fail_at: Option<u64>,
    syncs: u64,
}

impl SimStorage {
    /// An empty store.
    pub fn new() -> SimStorage {
        SimStorage::default()
    }

    /// The `n`-th operation from now (0 = the next one), and every one after it, fails.
    pub fn fail_after(&mut self, n: u64) {
        self.fail_at = Some(self.ops + n);
    }

    /// Whether the store is frozen.
    pub fn is_frozen(&self) -> bool {
        self.fail_at.is_some_and(|f| self.ops >= f)
    }

    /// Operations (reads, writes, syncs, resizes) done so far.
    pub fn ops(&self) -> u64 {
        self.ops
    }

    /// Successful syncs so far.
    pub fn syncs(&self) -> u64 {
        self.syncs
    }

    /// Writes not yet covered by a sync.
    pub fn pending_writes(&self) -> usize {
        self.pending.len()
    }

    /// The image after a power cut: the durable bytes plus the unsynced writes `survivors`
    /// keeps, applied in issue order. The result is a fresh, unfrozen store.
    pub fn power_cut(&self, survivors: Survivors) -> SimStorage {
        let mut img = self.durable.clone();
        let mut rng = SplitMix64::new(match survivors {
            Survivors::Random { seed } => seed ^ SplitMix64::GAMMA,
            _ => 0,
        });
        for (off, data) in &self.pending {
            let keep = match survivors {
                Survivors::None => 0,
                Survivors::All => data.len(),
                Survivors::Random { .. } => match rng.next_u64() % 3 {
                    0 => 0,
                    1 => data.len(),
                    _ => {
                        let sectors = data.len().div_ceil(512) as u64;
                        ((rng.next_u64() % (sectors + 1)) as usize * 512).min(data.len())
                    }
                },
            };
            put(&mut img, *off, &data[..keep]);
        }
        SimStorage { durable: img.clone(), current: img, ..SimStorage::default() }
    }

    fn step(&mut self) -> io::Result<()> {
        if self.is_frozen() {
            return Err(io::Error::other("simulated device frozen (crash point reached)"));
        }
        self.ops += 1;
        Ok(())
    }
}

fn put(img: &mut Vec<u8>, off: u64, data: &[u8]) {
    let end = off as usize + data.len();
    if img.len() < end {
        img.resize(end, 0);
    }
    img[off as usize..end].copy_from_slice(data);
}

impl Storage for SimStorage {
    fn read_at(&mut self, offset: u64, buf: &mut [u8]) -> io::Result<()> {
        self.step()?;
        let off = offset as usize;
        let n = self.current.len().saturating_sub(off).min(buf.len());
        if n > 0 {
            buf[..n].copy_from_slice(&self.current[off..off + n]);
        }
        buf[n..].fill(0);
        Ok(())
    }

    fn write_at(&mut self, offset: u64, data: &[u8]) -> io::Result<()> {
        self.step()?;
        put(&mut self.current, offset, data);
        self.pending.push((offset, data.to_vec()));
        Ok(())
    }

    fn sync(&mut self) -> io::Result<()> {
        self.step()?;
        for (off, data) in std::mem::take(&mut self.pending) {
            put(&mut self.durable, off, &data);
        }
        self.durable.resize(self.current.len(), 0);
        self.syncs += 1;
        Ok(())
    }

    fn size(&mut self) -> io::Result<u64> {
        Ok(self.current.len() as u64)
    }

    fn set_len(&mut self, len: u64) -> io::Result<()> {
        self.step()?;
        // Sparse: only what was written is stored; reads beyond `current` are zeros anyway.
        if (len as usize) < self.current.len() {
            self.current.truncate(len as usize);
            self.durable.truncate(len as usize);
        }
        Ok(())
    }

    fn name(&self) -> String {
        "<simulated storage>".into()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sim_storage_keeps_synced_and_chooses_unsynced() {
        let mut s = SimStorage::new();
        s.write_at(0, &[1; 1024]).unwrap();
        s.sync().unwrap();
        s.write_at(1024, &[2; 1024]).unwrap();
        let mut none = s.power_cut(Survivors::None);
        let mut buf = [9u8; 2048];
        none.read_at(0, &mut buf).unwrap();
        assert!(buf[..1024].iter().all(|&b| b == 1) && buf[1024..].iter().all(|&b| b == 0));
        let mut all = s.power_cut(Survivors::All);
        all.read_at(0, &mut buf).unwrap();
        assert!(buf[1024..].iter().all(|&b| b == 2));
        s.fail_after(0);
        assert!(s.write_at(0, &[3; 512]).is_err() && s.sync().is_err() && s.is_frozen());
    }

    #[test]
    fn file_storage_direct_or_fallback() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("f");
        let mut f = FileStorage::create(&p, IoMode::Auto).unwrap();
        f.write_at(4096, &[5u8; 8192]).unwrap();
        f.write_at(100, &[6u8; 10]).unwrap();
        f.sync().unwrap();
        let mut buf = vec![0u8; 8192];
        f.read_at(4096, &mut buf).unwrap();
        assert!(buf.iter().all(|&b| b == 5));
        // a second opener is refused while the first holds the lock
        let e = FileStorage::open(&p, IoMode::Buffered).unwrap_err();
        assert!(e.to_string().contains("in use"), "{e}");
    }
}
