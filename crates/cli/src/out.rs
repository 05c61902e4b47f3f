//! Standard output that never panics. A reader that goes away (`shingled … | head`) closes
//! the pipe: further output is dropped and the command finishes its work and exits 0, as
//! ripgrep does. Any other write error is reported once on stderr.

use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};

static CLOSED: AtomicBool = AtomicBool::new(false);
static WARNED: AtomicBool = AtomicBool::new(false);

/// Writes to stdout; see the module documentation.
pub fn write(args: std::fmt::Arguments<'_>) {
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
