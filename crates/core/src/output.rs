//! Writing a file the operator named as an output (`-o`, `--png`, `--csv`, `--out` …), the one
//! way every command and the Python package do it.
//!
//! * A regular file, or a path that does not exist yet, is written atomically: into a
//!   temporary file beside it, synced, then renamed over it, so a failure (a bad input, a full
//!   disk, Ctrl-C) leaves the old contents and no temporary behind.
//! * A symbolic link is followed: its target is written (the temporary goes beside the target)
//!   and the link is kept.
//! * Anything else that exists is never renamed over: a character device (`/dev/null`,
//!   `/dev/full`, a terminal) or a FIFO is written through; a block device (it holds a file
//!   system or a drive's data), a directory or a socket is refused.
//!
//! Every error names the output as given, never the temporary file.

use std::fs::{File, OpenOptions};
use std::io::{self, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// An output that could not be opened, written or put in place.
#[derive(Debug, thiserror::Error)]
#[error("{}: {source}", path.display())]
pub struct OutputError {
    /// The output as the caller named it.
    pub path: PathBuf,
    /// What went wrong.
    #[source]
    pub source: io::Error,
}

/// What an output path names once symbolic links are followed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OutputKind {
    /// A regular file, or nothing yet: written atomically.
    File,
    /// A character device or a FIFO: written through.
    Stream,
}

/// An output being written; see the module documentation. Dropped without
/// [`Output::commit`], a regular file's temporary is removed and the file is left as it was.
pub struct Output {
    file: File,
    shown: PathBuf,
    target: PathBuf,
    /// The temporary file beside `target`, for an atomic write.
    tmp: Option<PathBuf>,
}

/// Follows symbolic links from `path` to what they name (which may not exist yet).
fn resolve(path: &Path) -> io::Result<PathBuf> {
    let mut p = path.to_path_buf();
    for _ in 0..40 {
        match std::fs::symlink_metadata(&p) {
            Ok(m) if m.file_type().is_symlink() => {
                let to = std::fs::read_link(&p)?;
                p = match p.parent() {
                    Some(dir) if to.is_relative() => dir.join(to),
                    _ => to,
                };
            }
            _ => return Ok(p),
        }
    }
    Err(io::Error::other("too many levels of symbolic links"))
}

/// Why an existing node of `ft` cannot be an output, if it cannot.
fn refusal(ft: &std::fs::FileType) -> Option<&'static str> {
    use std::os::unix::fs::FileTypeExt;
    if ft.is_dir() {
        Some("is a directory; name a file")
    } else if ft.is_block_device() {
        Some("is a block device; writing over it would destroy what it holds (name a regular file)")
    } else if ft.is_socket() {
        Some("is a socket, which cannot be written as a file")
    } else {
        None
    }
}

/// What `path` names as an output, or why it cannot be one (a directory, a block device, a
/// socket, a dangling parent directory is reported when the output is created).
pub fn output_kind(path: &Path) -> Result<OutputKind, OutputError> {
    let err = |source| OutputError { path: path.to_path_buf(), source };
    if path.as_os_str().is_empty() {
        return Err(err(io::Error::new(io::ErrorKind::InvalidInput, "an empty output path")));
    }
    let target = resolve(path).map_err(err)?;
    match std::fs::metadata(&target) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(OutputKind::File),
        Err(e) => Err(err(e)),
        Ok(m) if m.is_file() => Ok(OutputKind::File),
        Ok(m) => match refusal(&m.file_type()) {
            Some(why) => Err(err(io::Error::new(io::ErrorKind::InvalidInput, why))),
            None => Ok(OutputKind::Stream),
        },
    }
}

/// Checks before long work that `path` can be written: its kind is acceptable and, for a file,
/// its directory exists and takes a new file (a temporary is created and removed).
pub fn check_output(path: &Path) -> Result<(), OutputError> {
    match output_kind(path)? {
        OutputKind::Stream => Ok(()),
        OutputKind::File => {
            let out = Output::create(path)?;
            drop(out);
            Ok(())
        }
    }
}

impl Output {
    /// Opens `path` for writing as the module documentation says. A FIFO blocks here until a
    /// reader opens it, as `cat > fifo` does.
    pub fn create(path: &Path) -> Result<Output, OutputError> {
        let err = |source| OutputError { path: path.to_path_buf(), source };
        let kind = output_kind(path)?;
        let target = resolve(path).map_err(err)?;
        if kind == OutputKind::Stream {
            let file = OpenOptions::new().write(true).open(&target).map_err(err)?;
            return Ok(Output { file, shown: path.to_path_buf(), target, tmp: None });
        }
        static CALLS: AtomicU64 = AtomicU64::new(0);
        let name =
            target.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_else(|| "out".into());
        let dir = match target.parent() {
            Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
            _ => PathBuf::from("."),
        };
        let mut attempt = 0;
        loop {
            let n = CALLS.fetch_add(1, Ordering::Relaxed);
            let tmp = dir.join(format!(".{name}.{}.{n}.tmp", std::process::id()));
            match OpenOptions::new().write(true).create_new(true).open(&tmp) {
                Ok(file) => {
                    // Keep an existing file's permissions (a trace the owner made read-only for
                    // others stays so).
                    if let Ok(m) = std::fs::metadata(&target) {
                        let _ = file.set_permissions(m.permissions());
                    }
                    return Ok(Output { file, shown: path.to_path_buf(), target, tmp: Some(tmp) });
                }
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists && attempt < 100 => attempt += 1,
                Err(e) => {
                    let why = if e.kind() == io::ErrorKind::NotFound {
                        io::Error::new(e.kind(), format!("the directory {} does not exist", dir.display()))
                    } else {
                        io::Error::new(e.kind(), format!("cannot create a file in {}: {e}", dir.display()))
                    };
                    return Err(err(why));
                }
            }
        }
    }

    /// The output as the caller named it.
    pub fn path(&self) -> &Path {
        &self.shown
    }

    /// Whether the output is a regular file (written atomically, seekable); `false` for a
    /// device or FIFO written through.
    pub fn is_file(&self) -> bool {
        self.tmp.is_some()
    }

    /// An I/O error of this output, naming it.
    pub fn error(&self, source: io::Error) -> OutputError {
        OutputError { path: self.shown.clone(), source }
    }

    /// Finishes the output: a regular file is synced and renamed over the target; a device or
    /// FIFO is flushed. Every error (ENOSPC, EPIPE …) is returned naming the output.
    pub fn commit(mut self) -> Result<(), OutputError> {
        self.file.flush().map_err(|e| self.error(e))?;
        let Some(tmp) = self.tmp.take() else { return Ok(()) };
        let done = self.file.sync_all().and_then(|()| std::fs::rename(&tmp, &self.target));
        if let Err(e) = done {
            let _ = std::fs::remove_file(&tmp);
            return Err(self.error(e));
        }
        // Make the rename durable too; a failure here loses nothing already written.
        if let Some(dir) = self.target.parent().filter(|d| !d.as_os_str().is_empty()) {
            if let Ok(d) = File::open(dir) {
                let _ = d.sync_all();
            }
        }
        Ok(())
    }
}

impl Drop for Output {
    fn drop(&mut self) {
        if let Some(tmp) = self.tmp.take() {
            let _ = std::fs::remove_file(tmp);
        }
    }
}

impl Write for Output {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.file.write(buf)
    }
    fn write_vectored(&mut self, bufs: &[io::IoSlice<'_>]) -> io::Result<usize> {
        self.file.write_vectored(bufs)
    }
    fn flush(&mut self) -> io::Result<()> {
        self.file.flush()
    }
}

impl Seek for Output {
    fn seek(&mut self, pos: SeekFrom) -> io::Result<u64> {
        self.file.seek(pos)
    }
}

/// Writes `bytes` to the output `path` (see the module documentation).
pub fn write_output(path: &Path, bytes: &[u8]) -> Result<(), OutputError> {
    let mut out = Output::create(path)?;
    out.write_all(bytes).map_err(|e| out.error(e))?;
    out.commit()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dir() -> PathBuf {
        static N: AtomicU64 = AtomicU64::new(0);
        let d = std::env::temp_dir().join(format!(
            "shingled-output-{}-{}",
            std::process::id(),
            N.fetch_add(1, Ordering::Relaxed)
        ));
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    fn entries(d: &Path) -> Vec<String> {
        let mut v: Vec<_> = std::fs::read_dir(d)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    }

    #[test]
    fn a_new_file_is_written_and_no_temporary_is_left() {
        let d = dir();
        write_output(&d.join("a"), b"hello").unwrap();
        assert_eq!(std::fs::read(d.join("a")).unwrap(), b"hello");
        assert_eq!(entries(&d), ["a"]);
        std::fs::remove_dir_all(d).unwrap();
    }

    #[test]
    fn an_abandoned_output_leaves_the_old_file() {
        let d = dir();
        std::fs::write(d.join("a"), b"old").unwrap();
        let mut o = Output::create(&d.join("a")).unwrap();
        o.write_all(b"new and partial").unwrap();
        drop(o);
        assert_eq!(std::fs::read(d.join("a")).unwrap(), b"old");
        assert_eq!(entries(&d), ["a"]);
        std::fs::remove_dir_all(d).unwrap();
    }

    #[test]
    fn a_symbolic_link_is_kept_and_its_target_written() {
        let d = dir();
        std::fs::create_dir(d.join("sub")).unwrap();
        std::fs::write(d.join("sub/t"), b"old").unwrap();
        std::os::unix::fs::symlink("sub/t", d.join("link")).unwrap();
        write_output(&d.join("link"), b"new").unwrap();
        assert!(std::fs::symlink_metadata(d.join("link")).unwrap().file_type().is_symlink());
        assert_eq!(std::fs::read(d.join("sub/t")).unwrap(), b"new");
        assert_eq!(entries(&d.join("sub")), ["t"]);
        // a dangling link creates its target
        std::os::unix::fs::symlink("sub/u", d.join("dangling")).unwrap();
        write_output(&d.join("dangling"), b"made").unwrap();
        assert_eq!(std::fs::read(d.join("sub/u")).unwrap(), b"made");
        std::fs::remove_dir_all(d).unwrap();
    }

    #[test]
    fn devices_are_written_through_and_errors_name_the_output() {
        write_output(Path::new("/dev/null"), b"x").unwrap();
        use std::os::unix::fs::FileTypeExt;
        assert!(std::fs::metadata("/dev/null").unwrap().file_type().is_char_device());
        if Path::new("/dev/full").exists() {
            let e = write_output(Path::new("/dev/full"), &[0u8; 8192]).unwrap_err();
            assert_eq!(e.path, Path::new("/dev/full"));
            assert_eq!(e.source.raw_os_error(), Some(libc::ENOSPC), "{e}");
        }
    }

    #[test]
    fn directories_are_refused_naming_the_output() {
        let d = dir();
        let e = write_output(&d, b"x").unwrap_err().to_string();
        assert!(e.contains("is a directory") && e.contains(&d.display().to_string()), "{e}");
        let e = write_output(&d.join("no/such/f"), b"x").unwrap_err().to_string();
        assert!(e.contains("no/such/f") && e.contains("does not exist") && !e.contains(".tmp"), "{e}");
        std::fs::remove_dir_all(d).unwrap();
    }
}
