//! FUSE file systems for crash tests of the `shingled` binary.
//!
//! - [`FileServer`]: serves a root directory of a few regular files, each backed by a
//!   [`Backing`] (`read_at`, `write_at`, `sync`, `flush`, `size`, `set_len`), with optional
//!   create support. Every open gets `FOPEN_DIRECT_IO`, so the kernel page cache never holds
//!   the data and readers always see what the backing holds. Made to serve other backings too
//!   (a block device as a single file, say).
//! - [`LossyFs`]: the LazyFS idea on the project's own power-cut simulator
//!   ([`shingled_zoned::SimStorage`]): written data stays in a volatile cache until `fsync`,
//!   and [`LossyFs::cut_power`] drops (or keeps, or tears) the unsynced writes of every file
//!   as a power failure would. A process killed with `SIGKILL` keeps its writes in the page
//!   cache of a real file system; here a cut after the kill loses them, as a power loss does.
//!
//! Mounting uses `fuser`'s pure-Rust path: `mount(2)` when running as root, else the
//! `fusermount3` helper (Debian package `fuse3`). [`fuse_available`] says whether a mount works
//! here, with a reason when not, so tests can skip.

mod lossy;
mod serve;

pub use lossy::{LossyFile, LossyFs, LossyStats};
pub use serve::{clear_dead_mount, Backing, CreateFn, DeadMount, FileServer, Files, Mounted};
pub use shingled_zoned::Survivors;

use std::sync::OnceLock;

/// Why a FUSE file system cannot be mounted here ([`fuse_available`]).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum FuseError {
    /// No `/dev/fuse`.
    #[error("/dev/fuse does not exist (no FUSE in this kernel or container; `modprobe fuse`)")]
    NoDevice,
    /// `/dev/fuse` exists but cannot be opened for reading and writing.
    #[error("cannot open /dev/fuse: {0}")]
    CannotOpen(String),
    /// The scratch directory of the probe mount cannot be created.
    #[error("creating {dir}: {reason}")]
    ScratchDir {
        /// The directory.
        dir: String,
        /// The OS error.
        reason: String,
    },
    /// The probe file system could not be set up.
    #[error("{0}")]
    Setup(String),
    /// The mount was refused (not root and no `fusermount3`, no `CAP_SYS_ADMIN`, ...).
    #[error(
        "mounting a FUSE file system on {dir} was refused: {reason} (mounting needs root, or the \
         fusermount3 helper of the Debian package fuse3)"
    )]
    MountRefused {
        /// The mount point.
        dir: String,
        /// The error of the mount.
        reason: String,
    },
    /// The probe mount could not be unmounted.
    #[error("unmounting the probe mount: {0}")]
    Unmount(String),
    /// The mount succeeded but the file system does not answer.
    #[error("a mounted FUSE file system does not answer: {0}")]
    NoAnswer(String),
}

/// Whether a FUSE file system can be mounted here: `Ok(())`, or why not (no `/dev/fuse`, no
/// access to it, the mount refused: not root and no `fusermount3`, a container without
/// `CAP_SYS_ADMIN`, ...). Tries once per process, with a real mount on a scratch directory.
pub fn fuse_available() -> Result<(), FuseError> {
    static RESULT: OnceLock<Result<(), FuseError>> = OnceLock::new();
    RESULT.get_or_init(probe).clone()
}

fn probe() -> Result<(), FuseError> {
    let dev = std::path::Path::new("/dev/fuse");
    if !dev.exists() {
        return Err(FuseError::NoDevice);
    }
    if let Err(e) = std::fs::OpenOptions::new().read(true).write(true).open(dev) {
        return Err(FuseError::CannotOpen(e.to_string()));
    }
    static N: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let dir = std::env::temp_dir().join(format!(
        "shingled-fuse-probe-{}-{}",
        std::process::id(),
        N.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
    ));
    std::fs::create_dir_all(&dir)
        .map_err(|e| FuseError::ScratchDir { dir: dir.display().to_string(), reason: e.to_string() })?;
    let r = (|| {
        let fs = LossyFs::new();
        fs.files().insert("probe", LossyFile::new()).map_err(|e| FuseError::Setup(e.to_string()))?;
        let m = fs
            .mount(&dir)
            .map_err(|e| FuseError::MountRefused { dir: dir.display().to_string(), reason: e.to_string() })?;
        let seen = std::fs::metadata(dir.join("probe"));
        m.unmount().map_err(|e| FuseError::Unmount(e.to_string()))?;
        seen.map(|_| ()).map_err(|e| FuseError::NoAnswer(e.to_string()))
    })();
    let _ = std::fs::remove_dir(&dir);
    r
}
