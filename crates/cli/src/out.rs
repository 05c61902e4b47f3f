//! Standard output that never panics. A reader that goes away (`shingled … | head`) closes
//! the pipe: further output is dropped and the command finishes its work and exits 0, as
//! ripgrep does. Any other write error is reported once on stderr.

use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};

static CLOSED: AtomicBool = AtomicBool::new(false);
static WARNED: AtomicBool = AtomicBool::new(false);

/// `-o FILE` of a command that prints its report piece by piece (`crate::output`): the file
/// and what was printed so far.
static CAPTURE: std::sync::Mutex<Option<(std::path::PathBuf, String)>> = std::sync::Mutex::new(None);

/// From now on, what is printed goes to `path` (written by [`finish`]) instead of stdout.
pub fn capture(path: &std::path::Path) {
    *CAPTURE.lock().unwrap_or_else(|e| e.into_inner()) = Some((path.to_path_buf(), String::new()));
}

/// Whether standard output is being sent to a file ([`capture`]).
pub fn capturing() -> bool {
    CAPTURE.lock().unwrap_or_else(|e| e.into_inner()).is_some()
}

/// Writes what was captured to its file, once the command has succeeded.
pub fn finish() -> anyhow::Result<()> {
    let taken = CAPTURE.lock().unwrap_or_else(|e| e.into_inner()).take();
    match taken {
        Some((path, text)) => file(&path, text),
        None => Ok(()),
    }
}

/// Writes to stdout, or to the file of [`capture`]; see the module documentation.
pub fn write(args: std::fmt::Arguments<'_>) {
    if let Some((_, text)) = CAPTURE.lock().unwrap_or_else(|e| e.into_inner()).as_mut() {
        use std::fmt::Write as _;
        let _ = text.write_fmt(args);
        return;
    }
    if CLOSED.load(Ordering::Relaxed) {
        return;
    }
    let mut so = std::io::stdout().lock();
    if let Err(e) = so.write_fmt(args).and_then(|_| so.flush()) {
        if e.kind() == std::io::ErrorKind::BrokenPipe {
            CLOSED.store(true, Ordering::Relaxed);
        } else if !WARNED.swap(true, Ordering::Relaxed) {
            let _ = writeln!(std::io::stderr(), "warning: writing to standard output: {e}");
        }
    }
}

/// Writes `bytes` to the output file `path` through `shingled_core::output` (atomic for a
/// regular file, written through for a device or FIFO, a symbolic link's target written), with
/// an error naming it.
pub fn file(path: &std::path::Path, bytes: impl AsRef<[u8]>) -> anyhow::Result<()> {
    shingled_core::output::write_output(path, bytes.as_ref()).map_err(|e| anyhow::anyhow!("writing {e}"))
}

/// Checks before long work that `path` can be written as an output (see
/// `shingled_core::output::check_output`).
pub fn check(flag: &str, path: &std::path::Path) -> anyhow::Result<()> {
    shingled_core::output::check_output(path).map_err(|e| anyhow::anyhow!("{flag} {e}"))
}
