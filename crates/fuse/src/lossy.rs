//! The lossy backing: each file is a [`SimStorage`] (the project's power-cut simulator), so
//! written data sits in a volatile cache until `fsync`, and [`LossyFs::cut_power`] replaces
//! every file by the image a restart after a power failure would find.

use crate::serve::{Backing, FileServer, Files, Mounted};
use shingled_zoned::{SimStorage, Storage, Survivors};
use std::ffi::OsStr;
use std::io;
use std::path::Path;

/// One file of a [`LossyFs`]: a [`SimStorage`] plus the file's length, under the durability
/// rules of [`Storage`]:
///
/// - a write is visible to readers at once and durable after the next `sync` (FUSE `fsync`
///   or `fdatasync`); a power cut keeps each unsynced write whole, torn at a 512-byte
///   boundary, or not at all, as the [`Survivors`] given says;
/// - the length grows with writes and with `set_len`; a growth is durable after the next
///   `sync` (or once a surviving write reaches past it). A shrink is durable at once, as
///   [`SimStorage::set_len`] makes it (so unsynced writes beyond the new end that were issued
///   *before* the shrink can reappear after a cut that keeps them; the store never shrinks its
///   device file).
#[derive(Clone, Debug, Default)]
pub struct LossyFile {
    sim: SimStorage,
    len: u64,
    durable_len: u64,
    /// An operation was refused at the crash point.
    crashed: bool,
    stats: LossyStats,
}

/// Counters of one [`LossyFile`], or summed over a [`LossyFs`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LossyStats {
    /// Write requests.
    pub writes: u64,
    /// Bytes written.
    pub bytes_written: u64,
    /// Durability barriers (`fsync`/`fdatasync`).
    pub syncs: u64,
    /// Power cuts.
    pub cuts: u64,
    /// Writes that were not synced when the power was cut (each kept, torn or dropped as the
    /// [`Survivors`] chose).
    pub unsynced_at_cut: u64,
}

impl std::ops::AddAssign for LossyStats {
    fn add_assign(&mut self, o: LossyStats) {
        self.writes += o.writes;
        self.bytes_written += o.bytes_written;
        self.syncs += o.syncs;
        self.cuts += o.cuts;
        self.unsynced_at_cut += o.unsynced_at_cut;
    }
}

impl LossyFile {
    /// An empty file.
    pub fn new() -> LossyFile {
        LossyFile::default()
    }

    /// Writes not yet covered by a sync.
    pub fn pending_writes(&self) -> usize {
        self.sim.pending_writes()
    }

    /// This file's counters.
    pub fn stats(&self) -> LossyStats {
        self.stats
    }

    /// Operations (reads, writes, syncs, resizes) done on this file since it was created or
    /// last cut.
    pub fn ops(&self) -> u64 {
        self.sim.ops()
    }

    /// The `n`-th operation from now (0 = the next one) and every one after it fail with `EIO`,
    /// as on a device that lost power mid-command, until the next power cut.
    pub fn fail_after(&mut self, n: u64) {
        self.sim.fail_after(n);
    }

    /// Whether an operation was refused at the [`LossyFile::fail_after`] point (until the next
    /// power cut).
    pub fn crashed(&self) -> bool {
        self.crashed
    }

    /// `r`, noting a refusal at the crash point.
    fn note<T>(&mut self, r: io::Result<T>) -> io::Result<T> {
        if r.is_err() && self.sim.is_frozen() {
            self.crashed = true;
        }
        r
    }

    /// The file after a power cut: the durable bytes and length plus the unsynced writes
    /// `survivors` keeps. The result is all durable.
    pub fn power_cut(&self, survivors: Survivors) -> LossyFile {
        let mut sim = self.sim.power_cut(survivors);
        // SimStorage's length is the end of its furthest byte: a surviving write past the
        // durable length carries the length with it.
        let len = self.durable_len.max(sim.size().unwrap_or(0));
        let mut stats = self.stats;
        stats.cuts += 1;
        stats.unsynced_at_cut += self.sim.pending_writes() as u64;
        LossyFile { sim, len, durable_len: len, crashed: false, stats }
    }
}

impl Backing for LossyFile {
    fn read_at(&mut self, offset: u64, buf: &mut [u8]) -> io::Result<()> {
        let r = self.sim.read_at(offset, buf);
        self.note(r)
    }

    fn write_at(&mut self, offset: u64, data: &[u8]) -> io::Result<()> {
        let r = self.sim.write_at(offset, data);
        self.note(r)?;
        self.len = self.len.max(offset + data.len() as u64);
        self.stats.writes += 1;
        self.stats.bytes_written += data.len() as u64;
        Ok(())
    }

    fn sync(&mut self) -> io::Result<()> {
        let r = self.sim.sync();
        self.note(r)?;
        self.durable_len = self.len;
        self.stats.syncs += 1;
        Ok(())
    }

    fn size(&mut self) -> io::Result<u64> {
        Ok(self.len)
    }

    fn set_len(&mut self, len: u64) -> io::Result<()> {
        let r = self.sim.set_len(len);
        self.note(r)?;
        if len < self.len {
            self.durable_len = self.durable_len.min(len);
        }
        self.len = len;
        Ok(())
    }
}

/// A LazyFS-style file system: files written through it keep their data in a volatile cache
/// ([`LossyFile`]) until `fsync`; [`LossyFs::cut_power`] simulates a power failure.
///
/// Cheap to clone: clones share the files.
///
/// ```no_run
/// use shingled_fuse::{LossyFs, Survivors};
/// let fs = LossyFs::new();
/// let dir = std::path::Path::new("/tmp/mnt");
/// let mounted = fs.mount(dir).unwrap();
/// std::fs::write(dir.join("f"), b"not synced").unwrap();
/// fs.cut_power(Survivors::None);
/// assert_eq!(std::fs::read(dir.join("f")).unwrap(), b"");
/// drop(mounted); // unmounts
/// ```
#[derive(Clone, Debug, Default)]
pub struct LossyFs {
    files: Files<LossyFile>,
}

impl LossyFs {
    /// An empty file system (files are created in it with `open(O_CREAT)`).
    pub fn new() -> LossyFs {
        LossyFs { files: Files::new() }
    }

    /// The served files.
    pub fn files(&self) -> &Files<LossyFile> {
        &self.files
    }

    /// A [`FileServer`] on these files that creates new ones as empty [`LossyFile`]s.
    pub fn server(&self) -> FileServer<LossyFile> {
        FileServer::new(self.files.clone()).allow_create(|_: &OsStr| Ok(LossyFile::new()))
    }

    /// Mounts the file system on `mountpoint` (see [`FileServer::mount`]).
    pub fn mount(&self, mountpoint: &Path) -> io::Result<Mounted> {
        self.server().mount(mountpoint)
    }

    /// Cuts the power: every file (open or not) becomes its post-cut image
    /// ([`LossyFile::power_cut`]), atomically with respect to file-system requests. With
    /// [`Survivors::Random`], each file draws from its own seed derived from the given one.
    /// Processes that still hold a file open see the new contents; a real power cut would have
    /// ended them, so call this after they exit.
    ///
    /// Returns the number of unsynced writes the cut concerned (kept, torn or dropped).
    pub fn cut_power(&self, survivors: Survivors) -> u64 {
        let mut unsynced = 0;
        let mut k = 0u64;
        self.files.for_each(|_, f| {
            let s = match survivors {
                Survivors::Random { seed } => {
                    Survivors::Random { seed: seed ^ k.wrapping_mul(0x9e37_79b9_7f4a_7c15) }
                }
                other => other,
            };
            k += 1;
            unsynced += f.pending_writes() as u64;
            *f = f.power_cut(s);
        });
        unsynced
    }

    /// Arms every file: its `n`-th operation from now (reads, writes, syncs and resizes of that
    /// file, 0 = the next one) and all later ones fail with `EIO` until the next
    /// [`LossyFs::cut_power`]. This is a power failure at an exact point of the I/O stream,
    /// where [`LossyFs::cut_power`] after killing a process is one at a point in time.
    pub fn fail_after(&self, n: u64) {
        self.files.for_each(|_, f| f.fail_after(n));
    }

    /// Operations done on each file since it was created or last cut, summed.
    pub fn ops(&self) -> u64 {
        let mut n = 0;
        self.files.for_each(|_, f| n += f.ops());
        n
    }

    /// Whether any file refused an operation at its [`LossyFs::fail_after`] point since the
    /// last cut.
    pub fn crashed(&self) -> bool {
        let mut crashed = false;
        self.files.for_each(|_, f| crashed |= f.crashed());
        crashed
    }

    /// Counters summed over every file.
    pub fn stats(&self) -> LossyStats {
        let mut s = LossyStats::default();
        self.files.for_each(|_, f| s += f.stats());
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(f: &mut LossyFile) -> Vec<u8> {
        let n = f.size().unwrap() as usize;
        let mut b = vec![0u8; n];
        f.read_at(0, &mut b).unwrap();
        b
    }

    #[test]
    fn unsynced_writes_and_growth_follow_the_survivors() {
        let mut f = LossyFile::new();
        f.write_at(0, &[1; 1024]).unwrap();
        f.sync().unwrap();
        f.write_at(1024, &[2; 1024]).unwrap();
        f.set_len(8192).unwrap();
        assert_eq!(f.size().unwrap(), 8192);
        let mut none = f.power_cut(Survivors::None);
        assert_eq!(read(&mut none), vec![1; 1024]);
        let mut all = f.power_cut(Survivors::All);
        // the write survives and carries the length to its end; the unsynced growth does not
        let mut want = vec![1; 1024];
        want.extend([2; 1024]);
        assert_eq!(read(&mut all), want);
        f.sync().unwrap();
        let mut synced = f.power_cut(Survivors::None);
        assert_eq!(synced.size().unwrap(), 8192);
        assert_eq!(synced.stats().cuts, 1);
        assert_eq!(none.stats().unsynced_at_cut, 1);
    }

    #[test]
    fn a_crash_point_fails_every_later_operation_until_the_cut() {
        let mut f = LossyFile::new();
        f.write_at(0, &[1; 512]).unwrap();
        f.fail_after(1);
        f.sync().unwrap();
        assert!(!f.crashed());
        assert!(f.write_at(512, &[2; 512]).is_err() && f.sync().is_err() && f.crashed());
        let mut g = f.power_cut(Survivors::All);
        assert!(!g.crashed());
        g.write_at(512, &[3; 512]).unwrap();
        let mut want = vec![1; 512];
        want.extend([3; 512]);
        assert_eq!(read(&mut g), want);
    }

    #[test]
    fn shrinks_are_durable_at_once() {
        let mut f = LossyFile::new();
        f.write_at(0, &[1; 4096]).unwrap();
        f.sync().unwrap();
        f.set_len(100).unwrap();
        let mut g = f.power_cut(Survivors::None);
        assert_eq!(read(&mut g), vec![1; 100]);
    }

    #[test]
    fn random_survivors_keep_synced_bytes() {
        let mut f = LossyFile::new();
        f.write_at(0, &[7; 4096]).unwrap();
        f.sync().unwrap();
        for i in 1..20u64 {
            f.write_at(i * 4096, &[i as u8; 4096]).unwrap();
        }
        for seed in 0..20 {
            let mut g = f.power_cut(Survivors::Random { seed });
            let b = read(&mut g);
            assert!(b.len() >= 4096 && b[..4096].iter().all(|&x| x == 7));
            // every later 512-byte sector is all old (zero) or all new
            for (s, sec) in b[4096..].chunks(512).enumerate() {
                let new = (s / 8 + 1) as u8;
                assert!(sec.iter().all(|&x| x == 0) || sec.iter().all(|&x| x == new));
            }
        }
    }
}
