//! [`FileServer`]: a FUSE file system whose root directory holds a few regular files, each
//! backed by a [`Backing`] object (an in-memory image, a lossy power-cut simulator, later a
//! block device).

use fuser::{
    BsdFileFlags, Errno, FileAttr, FileHandle, FileType, Filesystem, FopenFlags, Generation, INodeNo,
    LockOwner, OpenFlags, ReplyAttr, ReplyCreate, ReplyData, ReplyDirectory, ReplyEmpty, ReplyEntry,
    ReplyOpen, ReplyStatfs, ReplyWrite, Request, TimeOrNow, WriteFlags,
};
use std::collections::BTreeMap;
use std::ffi::{OsStr, OsString};
use std::io;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, SystemTime};

/// The bytes of one served file.
///
/// The file system calls these under one lock, one request at a time. Reads are clamped to
/// [`Backing::size`] before `read_at` is called.
pub trait Backing: Send + 'static {
    /// Fills `buf` from `offset` (bytes never written read as zeros).
    fn read_at(&mut self, offset: u64, buf: &mut [u8]) -> io::Result<()>;
    /// Writes `data` at `offset`, growing the file if needed.
    fn write_at(&mut self, offset: u64, data: &[u8]) -> io::Result<()>;
    /// The durability barrier: `fsync` / `fdatasync` of the served file.
    fn sync(&mut self) -> io::Result<()>;
    /// Called at every `close()` of a descriptor of the file (FUSE `FLUSH`). Not a durability
    /// barrier: the default does nothing.
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
    /// Current length in bytes.
    fn size(&mut self) -> io::Result<u64>;
    /// Sets the length (`truncate`, `ftruncate`). A fixed-size backing (a block device)
    /// returns an error such as `EPERM`.
    fn set_len(&mut self, len: u64) -> io::Result<()>;
}

/// Makes the backing of a file created with `open(O_CREAT)` / `creat()` in the root directory.
pub type CreateFn<B> = Box<dyn Fn(&OsStr) -> io::Result<B> + Send + Sync>;

/// Attribute and entry cache lifetime given to the kernel: zero, so that every `stat` asks the
/// file system (a simulated power cut changes sizes behind the kernel's back).
const TTL: Duration = Duration::ZERO;
/// Block size reported by `stat` and `statfs`.
const BLOCK: u32 = 4096;

#[derive(Debug)]
struct Node<B> {
    name: OsString,
    backing: B,
    perm: u16,
    uid: u32,
    gid: u32,
    /// 1 while the name exists, 0 once unlinked.
    nlink: u32,
    /// Open file handles; an unlinked node goes when the last one is released.
    open: u32,
    mtime: SystemTime,
    ctime: SystemTime,
}

/// The served directory: inode number → file, name → inode number.
#[derive(Debug)]
struct Tree<B> {
    nodes: BTreeMap<u64, Node<B>>,
    names: BTreeMap<OsString, u64>,
    next_ino: u64,
    next_fh: u64,
    uid: u32,
    gid: u32,
    created: SystemTime,
}

/// A shared handle on the files of a [`FileServer`], usable while it is mounted (from the test
/// that mounted it, for example).
#[derive(Debug)]
pub struct Files<B> {
    tree: Arc<Mutex<Tree<B>>>,
}

impl<B> Clone for Files<B> {
    fn clone(&self) -> Self {
        Files { tree: Arc::clone(&self.tree) }
    }
}

impl<B: Backing> Default for Files<B> {
    fn default() -> Self {
        Files::new()
    }
}

impl<B: Backing> Files<B> {
    /// An empty directory.
    pub fn new() -> Files<B> {
        let now = SystemTime::now();
        Files {
            tree: Arc::new(Mutex::new(Tree {
                nodes: BTreeMap::new(),
                names: BTreeMap::new(),
                next_ino: 2,
                next_fh: 1,
                uid: 0,
                gid: 0,
                created: now,
            })),
        }
    }

    fn lock(&self) -> MutexGuard<'_, Tree<B>> {
        // A panic in a backing call leaves the tree consistent (every update is one step).
        self.tree.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Adds the file `name` (mode 0644) backed by `backing`; fails with `AlreadyExists` if the
    /// name is taken.
    pub fn insert(&self, name: impl Into<OsString>, backing: B) -> io::Result<()> {
        let name = name.into();
        let mut t = self.lock();
        let (uid, gid) = (t.uid, t.gid);
        t.add(name, backing, 0o644, uid, gid).map(|_| ())
    }

    /// Names of the files, sorted.
    pub fn names(&self) -> Vec<OsString> {
        self.lock().names.keys().cloned().collect()
    }

    /// Runs `f` on the backing of `name` (`None` if there is no such file), holding the lock
    /// that every file-system request takes: no request runs meanwhile.
    pub fn with<R>(&self, name: impl AsRef<OsStr>, f: impl FnOnce(&mut B) -> R) -> Option<R> {
        let mut t = self.lock();
        let ino = *t.names.get(name.as_ref())?;
        t.nodes.get_mut(&ino).map(|n| f(&mut n.backing))
    }

    /// Runs `f` on every file (unlinked but still open ones included), atomically with respect
    /// to file-system requests. `f` may replace a backing (`*b = new`).
    pub fn for_each(&self, mut f: impl FnMut(&OsStr, &mut B)) {
        let mut t = self.lock();
        for n in t.nodes.values_mut() {
            f(&n.name, &mut n.backing);
        }
    }
}

impl<B: Backing> Tree<B> {
    fn add(&mut self, name: OsString, backing: B, perm: u16, uid: u32, gid: u32) -> io::Result<u64> {
        if self.names.contains_key(&name) {
            return Err(io::Error::new(io::ErrorKind::AlreadyExists, format!("{name:?} exists")));
        }
        let ino = self.next_ino;
        self.next_ino += 1;
        let now = SystemTime::now();
        self.names.insert(name.clone(), ino);
        self.nodes
            .insert(ino, Node { name, backing, perm, uid, gid, nlink: 1, open: 0, mtime: now, ctime: now });
        Ok(ino)
    }

    fn root_attr(&self) -> FileAttr {
        FileAttr {
            ino: INodeNo::ROOT,
            size: 0,
            blocks: 0,
            atime: self.created,
            mtime: self.created,
            ctime: self.created,
            crtime: self.created,
            kind: FileType::Directory,
            perm: 0o755,
            nlink: 2,
            uid: self.uid,
            gid: self.gid,
            rdev: 0,
            blksize: BLOCK,
            flags: 0,
        }
    }

    fn attr(&mut self, ino: u64) -> Result<FileAttr, Errno> {
        if ino == INodeNo::ROOT.0 {
            return Ok(self.root_attr());
        }
        let created = self.created;
        let n = self.nodes.get_mut(&ino).ok_or(Errno::ENOENT)?;
        let size = n.backing.size().map_err(Errno::from)?;
        Ok(FileAttr {
            ino: INodeNo(ino),
            size,
            blocks: size.div_ceil(512),
            atime: n.mtime,
            mtime: n.mtime,
            ctime: n.ctime,
            crtime: created,
            kind: FileType::RegularFile,
            perm: n.perm,
            nlink: n.nlink,
            uid: n.uid,
            gid: n.gid,
            rdev: 0,
            blksize: BLOCK,
            flags: 0,
        })
    }

    fn file(&mut self, ino: INodeNo) -> Result<&mut Node<B>, Errno> {
        if ino == INodeNo::ROOT {
            return Err(Errno::EISDIR);
        }
        self.nodes.get_mut(&ino.0).ok_or(Errno::ENOENT)
    }

    fn open_handle(&mut self, ino: u64) -> FileHandle {
        if let Some(n) = self.nodes.get_mut(&ino) {
            n.open += 1;
        }
        let fh = self.next_fh;
        self.next_fh += 1;
        FileHandle(fh)
    }

    /// Drops a node that has neither a name nor an open handle.
    fn reap(&mut self, ino: u64) {
        if self.nodes.get(&ino).is_some_and(|n| n.nlink == 0 && n.open == 0) {
            self.nodes.remove(&ino);
        }
    }
}

/// A FUSE file system serving the [`Files`] it was made with in its root directory.
///
/// Every open is answered with `FOPEN_DIRECT_IO`, so the kernel page cache never holds file
/// data: each `read`/`write` reaches the backing, and what the backing returns (after a
/// simulated power cut, say) is what readers see, without a remount. Directory changes
/// (create, unlink) take effect at once and are not subject to any durability rule.
pub struct FileServer<B: Backing> {
    files: Files<B>,
    create: Option<CreateFn<B>>,
}

impl<B: Backing> FileServer<B> {
    /// Serves `files` (which may be empty); `open(O_CREAT)` of a new name fails with `EACCES`
    /// unless [`FileServer::allow_create`] is given.
    pub fn new(files: Files<B>) -> FileServer<B> {
        FileServer { files, create: None }
    }

    /// Lets programs create files in the root directory, each backed by what `make` returns.
    pub fn allow_create(mut self, make: impl Fn(&OsStr) -> io::Result<B> + Send + Sync + 'static) -> Self {
        self.create = Some(Box::new(make));
        self
    }

    /// The served files (shared with the mounted file system).
    pub fn files(&self) -> Files<B> {
        self.files.clone()
    }

    /// Mounts the file system on the directory `mountpoint` and serves it from a background
    /// thread until the returned guard is dropped.
    pub fn mount(self, mountpoint: &Path) -> io::Result<Mounted> {
        use std::os::unix::fs::MetadataExt;
        let m = std::fs::metadata(mountpoint)?;
        {
            let mut t = self.files.lock();
            t.uid = m.uid();
            t.gid = m.gid();
        }
        let mut cfg = fuser::Config::default();
        cfg.mount_options = vec![
            fuser::MountOption::FSName("shingled-fuse".into()),
            fuser::MountOption::Subtype("shingled".into()),
            fuser::MountOption::NoAtime,
        ];
        let files = self.files.clone();
        let open_handles = move || files.lock().nodes.values().map(|n| u64::from(n.open)).sum::<u64>();
        let session = fuser::spawn_mount(self, mountpoint, &cfg)?;
        Ok(Mounted {
            session: Some(session),
            mountpoint: mountpoint.to_path_buf(),
            open_handles: Box::new(open_handles),
        })
    }
}

/// A mounted [`FileServer`]: unmounts when dropped (or with [`Mounted::unmount`]).
pub struct Mounted {
    session: Option<fuser::BackgroundSession>,
    mountpoint: PathBuf,
    /// Open file handles of the served files: the kernel sends `RELEASE` after `close()`
    /// returns, so an unmount right after a close can find the file system busy.
    open_handles: Box<dyn Fn() -> u64 + Send + Sync>,
}

impl std::fmt::Debug for Mounted {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Mounted").field("mountpoint", &self.mountpoint).finish_non_exhaustive()
    }
}

impl Mounted {
    /// Where the file system is mounted.
    pub fn path(&self) -> &Path {
        &self.mountpoint
    }

    /// Unmounts and waits for the serving thread to end. If the unmount is refused (`EBUSY`:
    /// a process still uses the file system), the mount is detached lazily (`umount -l`) and
    /// the serving thread is left to end when the last user goes; the error is returned.
    pub fn unmount(mut self) -> io::Result<()> {
        self.unmount_inner()
    }

    fn unmount_inner(&mut self) -> io::Result<()> {
        let Some(session) = self.session.take() else { return Ok(()) };
        // Let the releases of handles just closed arrive (at most 2 s), so that a close
        // followed by an unmount does not fail with EBUSY.
        let deadline = std::time::Instant::now() + Duration::from_secs(2);
        while (self.open_handles)() > 0 && std::time::Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(5));
        }
        // umount(2) (as root; else fusermount3 -u), then join the serving thread. A refused
        // unmount returns before the join, leaving the thread detached.
        let r = session.umount_and_join();
        if r.is_err() && is_mounted(&self.mountpoint) {
            let lazy = std::process::Command::new("umount").arg("-l").arg(&self.mountpoint).status();
            let how = match lazy {
                Ok(s) if s.success() => "detached with umount -l".to_string(),
                Ok(s) => format!("umount -l exited with {s}"),
                Err(le) => format!("umount -l: {le}"),
            };
            return r.map_err(|e| {
                io::Error::new(e.kind(), format!("unmounting {}: {e} ({how})", self.mountpoint.display()))
            });
        }
        r.map_err(|e| io::Error::new(e.kind(), format!("unmounting {}: {e}", self.mountpoint.display())))
    }
}

/// What [`clear_dead_mount`] found at a mount point.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DeadMount {
    /// Nothing to clear: the path answers (a directory, or missing).
    None,
    /// A file system of ours whose server had died (`ENOTCONN`), now detached.
    Cleared,
}

/// Clears what a killed server leaves behind: its mount point, whose FUSE connection is gone,
/// answers every request with `ENOTCONN` ("Transport endpoint is not connected") until it is
/// unmounted. When `mountpoint` is such a mount and `/proc/self/mountinfo` shows it is ours
/// (source `shingled-fuse`), it is detached (`umount -l`, or `fusermount3 -uz` when not root)
/// and [`DeadMount::Cleared`] returned. A dead mount of another program is an error naming the
/// command to run; a live one is left alone ([`DeadMount::None`]: mounting over a live server
/// is refused earlier, by the device's lock).
pub fn clear_dead_mount(mountpoint: &Path) -> io::Result<DeadMount> {
    match std::fs::metadata(mountpoint) {
        Err(e) if e.kind() == io::ErrorKind::NotConnected => {}
        _ => return Ok(DeadMount::None),
    }
    // canonicalize would stat the dead mount itself: resolve its parent only.
    let abs = match (mountpoint.parent().filter(|p| !p.as_os_str().is_empty()), mountpoint.file_name()) {
        (Some(parent), Some(name)) => parent.canonicalize()?.join(name),
        (None, Some(name)) => std::env::current_dir()?.join(name),
        _ => mountpoint.to_path_buf(),
    };
    let want = abs.to_string_lossy().replace(' ', "\\040").replace('\t', "\\011").replace('\n', "\\012");
    let info = std::fs::read_to_string("/proc/self/mountinfo")?;
    let ours = info.lines().any(|l| {
        let (left, right) = l.split_once(" - ").unwrap_or((l, ""));
        left.split(' ').nth(4) == Some(want.as_str()) && right.split(' ').nth(1) == Some("shingled-fuse")
    });
    let p = abs.display();
    if !ours {
        return Err(io::Error::new(
            io::ErrorKind::NotConnected,
            format!(
                "{p}: a dead mount (Transport endpoint is not connected) that is not shingled's: unmount it \
                 (umount -l {p}, or fusermount3 -uz {p}) and try again"
            ),
        ));
    }
    let root = std::fs::metadata("/proc/self").is_ok_and(|m| std::os::unix::fs::MetadataExt::uid(&m) == 0);
    let status = if root {
        std::process::Command::new("umount").arg("-l").arg(&abs).status()
    } else {
        std::process::Command::new("fusermount3").arg("-uz").arg(&abs).status()
    };
    match status {
        Ok(s) if s.success() && std::fs::metadata(&abs).is_ok() => Ok(DeadMount::Cleared),
        Ok(s) => Err(io::Error::other(format!(
            "{p}: the dead shingled mount left by a killed server could not be detached ({s}); run umount -l {p}"
        ))),
        Err(e) => Err(io::Error::new(
            e.kind(),
            format!("{p}: detaching the dead shingled mount left by a killed server: {e}; run umount -l {p}"),
        )),
    }
}

/// Whether `path` is a mount point (listed in `/proc/self/mountinfo`).
fn is_mounted(path: &Path) -> bool {
    let Ok(p) = path.canonicalize() else { return false };
    let Ok(info) = std::fs::read_to_string("/proc/self/mountinfo") else { return false };
    // Field 5 is the mount point, with spaces and such escaped as \040 etc.
    let want = p.to_string_lossy().replace(' ', "\\040").replace('\t', "\\011").replace('\n', "\\012");
    info.lines().any(|l| l.split(' ').nth(4) == Some(want.as_str()))
}

impl Drop for Mounted {
    fn drop(&mut self) {
        if let Err(e) = self.unmount_inner() {
            eprintln!("shingled-fuse: {e}");
        }
    }
}

fn errno(e: io::Error) -> Errno {
    Errno::from(e)
}

impl<B: Backing> Filesystem for FileServer<B> {
    fn lookup(&self, _req: &Request, parent: INodeNo, name: &OsStr, reply: ReplyEntry) {
        if parent != INodeNo::ROOT {
            return reply.error(Errno::ENOENT);
        }
        let mut t = self.files.lock();
        let Some(&ino) = t.names.get(name) else { return reply.error(Errno::ENOENT) };
        match t.attr(ino) {
            Ok(a) => reply.entry(&TTL, &a, Generation(0)),
            Err(e) => reply.error(e),
        }
    }

    fn getattr(&self, _req: &Request, ino: INodeNo, _fh: Option<FileHandle>, reply: ReplyAttr) {
        match self.files.lock().attr(ino.0) {
            Ok(a) => reply.attr(&TTL, &a),
            Err(e) => reply.error(e),
        }
    }

    fn setattr(
        &self,
        _req: &Request,
        ino: INodeNo,
        mode: Option<u32>,
        uid: Option<u32>,
        gid: Option<u32>,
        size: Option<u64>,
        _atime: Option<TimeOrNow>,
        mtime: Option<TimeOrNow>,
        _ctime: Option<SystemTime>,
        _fh: Option<FileHandle>,
        _crtime: Option<SystemTime>,
        _chgtime: Option<SystemTime>,
        _bkuptime: Option<SystemTime>,
        _flags: Option<BsdFileFlags>,
        reply: ReplyAttr,
    ) {
        let mut t = self.files.lock();
        if ino == INodeNo::ROOT {
            // chmod/chown of the mount point itself: accepted, not kept.
            let a = t.root_attr();
            return reply.attr(&TTL, &a);
        }
        let n = match t.file(ino) {
            Ok(n) => n,
            Err(e) => return reply.error(e),
        };
        if let Some(len) = size {
            if let Err(e) = n.backing.set_len(len) {
                return reply.error(errno(e));
            }
            n.mtime = SystemTime::now();
        }
        if let Some(m) = mode {
            n.perm = (m & 0o7777) as u16;
        }
        if let Some(u) = uid {
            n.uid = u;
        }
        if let Some(g) = gid {
            n.gid = g;
        }
        match mtime {
            Some(TimeOrNow::SpecificTime(t)) => n.mtime = t,
            Some(TimeOrNow::Now) => n.mtime = SystemTime::now(),
            None => {}
        }
        n.ctime = SystemTime::now();
        match t.attr(ino.0) {
            Ok(a) => reply.attr(&TTL, &a),
            Err(e) => reply.error(e),
        }
    }

    fn unlink(&self, _req: &Request, parent: INodeNo, name: &OsStr, reply: ReplyEmpty) {
        if parent != INodeNo::ROOT {
            return reply.error(Errno::ENOENT);
        }
        let mut t = self.files.lock();
        let Some(ino) = t.names.remove(name) else { return reply.error(Errno::ENOENT) };
        if let Some(n) = t.nodes.get_mut(&ino) {
            n.nlink = 0;
            n.ctime = SystemTime::now();
        }
        t.reap(ino);
        reply.ok();
    }

    fn open(&self, _req: &Request, ino: INodeNo, _flags: OpenFlags, reply: ReplyOpen) {
        let mut t = self.files.lock();
        if let Err(e) = t.file(ino) {
            return reply.error(e);
        }
        let fh = t.open_handle(ino.0);
        reply.opened(fh, FopenFlags::FOPEN_DIRECT_IO);
    }

    fn create(
        &self,
        req: &Request,
        parent: INodeNo,
        name: &OsStr,
        mode: u32,
        umask: u32,
        _flags: i32,
        reply: ReplyCreate,
    ) {
        if parent != INodeNo::ROOT {
            return reply.error(Errno::ENOENT);
        }
        let Some(make) = &self.create else { return reply.error(Errno::EACCES) };
        let mut t = self.files.lock();
        if t.names.contains_key(name) {
            return reply.error(Errno::EEXIST);
        }
        let backing = match make(name) {
            Ok(b) => b,
            Err(e) => return reply.error(errno(e)),
        };
        let perm = (mode & !umask & 0o7777) as u16;
        let ino = match t.add(name.to_os_string(), backing, perm, req.uid(), req.gid()) {
            Ok(i) => i,
            Err(e) => return reply.error(errno(e)),
        };
        let fh = t.open_handle(ino);
        match t.attr(ino) {
            Ok(a) => reply.created(&TTL, &a, Generation(0), fh, FopenFlags::FOPEN_DIRECT_IO),
            Err(e) => reply.error(e),
        }
    }

    fn read(
        &self,
        _req: &Request,
        ino: INodeNo,
        _fh: FileHandle,
        offset: u64,
        size: u32,
        _flags: OpenFlags,
        _lock_owner: Option<LockOwner>,
        reply: ReplyData,
    ) {
        let mut t = self.files.lock();
        let n = match t.file(ino) {
            Ok(n) => n,
            Err(e) => return reply.error(e),
        };
        let len = match n.backing.size() {
            Ok(l) => l,
            Err(e) => return reply.error(errno(e)),
        };
        let want = len.saturating_sub(offset).min(u64::from(size)) as usize;
        let mut buf = vec![0u8; want];
        if want > 0 {
            if let Err(e) = n.backing.read_at(offset, &mut buf) {
                return reply.error(errno(e));
            }
        }
        reply.data(&buf);
    }

    fn write(
        &self,
        _req: &Request,
        ino: INodeNo,
        _fh: FileHandle,
        offset: u64,
        data: &[u8],
        _write_flags: WriteFlags,
        _flags: OpenFlags,
        _lock_owner: Option<LockOwner>,
        reply: ReplyWrite,
    ) {
        let mut t = self.files.lock();
        let n = match t.file(ino) {
            Ok(n) => n,
            Err(e) => return reply.error(e),
        };
        match n.backing.write_at(offset, data) {
            Ok(()) => {
                n.mtime = SystemTime::now();
                reply.written(data.len() as u32)
            }
            Err(e) => reply.error(errno(e)),
        }
    }

    fn flush(
        &self,
        _req: &Request,
        ino: INodeNo,
        _fh: FileHandle,
        _lock_owner: LockOwner,
        reply: ReplyEmpty,
    ) {
        let mut t = self.files.lock();
        match t.file(ino).and_then(|n| n.backing.flush().map_err(errno)) {
            Ok(()) => reply.ok(),
            Err(e) => reply.error(e),
        }
    }

    fn release(
        &self,
        _req: &Request,
        ino: INodeNo,
        _fh: FileHandle,
        _flags: OpenFlags,
        _lock_owner: Option<LockOwner>,
        _flush: bool,
        reply: ReplyEmpty,
    ) {
        let mut t = self.files.lock();
        if let Some(n) = t.nodes.get_mut(&ino.0) {
            n.open = n.open.saturating_sub(1);
        }
        t.reap(ino.0);
        reply.ok();
    }

    fn fsync(&self, _req: &Request, ino: INodeNo, _fh: FileHandle, _datasync: bool, reply: ReplyEmpty) {
        // fsync and fdatasync alike: the backing's one barrier covers data and size.
        let mut t = self.files.lock();
        match t.file(ino).and_then(|n| n.backing.sync().map_err(errno)) {
            Ok(()) => reply.ok(),
            Err(e) => reply.error(e),
        }
    }

    fn opendir(&self, _req: &Request, ino: INodeNo, _flags: OpenFlags, reply: ReplyOpen) {
        if ino != INodeNo::ROOT {
            return reply.error(Errno::ENOTDIR);
        }
        reply.opened(FileHandle(0), FopenFlags::empty());
    }

    fn readdir(&self, _req: &Request, ino: INodeNo, _fh: FileHandle, offset: u64, mut reply: ReplyDirectory) {
        if ino != INodeNo::ROOT {
            return reply.error(Errno::ENOTDIR);
        }
        let t = self.files.lock();
        let dots = [
            (INodeNo::ROOT, FileType::Directory, OsString::from(".")),
            (INodeNo::ROOT, FileType::Directory, OsString::from("..")),
        ];
        let entries = dots
            .into_iter()
            .chain(t.names.iter().map(|(name, &ino)| (INodeNo(ino), FileType::RegularFile, name.clone())));
        // Entry i is followed by offset i + 1: the kernel resumes from the last one it kept.
        for (i, (ino, kind, name)) in entries.enumerate().skip(offset as usize) {
            if reply.add(ino, i as u64 + 1, kind, &name) {
                break;
            }
        }
        reply.ok();
    }

    fn fsyncdir(&self, _req: &Request, _ino: INodeNo, _fh: FileHandle, _datasync: bool, reply: ReplyEmpty) {
        // Directory changes are never lost: nothing to do.
        reply.ok();
    }

    fn statfs(&self, _req: &Request, _ino: INodeNo, reply: ReplyStatfs) {
        let mut t = self.files.lock();
        let used: u64 =
            t.nodes.values_mut().map(|n| n.backing.size().unwrap_or(0).div_ceil(u64::from(BLOCK))).sum();
        // A nominal 1 TiB: the backings do not say how much more they could take.
        let blocks = (1u64 << 40) / u64::from(BLOCK);
        let free = blocks.saturating_sub(used);
        let files = t.nodes.len() as u64;
        reply.statfs(blocks, free, free, files + 1_000_000, 1_000_000, BLOCK, 255, BLOCK);
    }
}
