//! Serving a block device (a translation layer, a cached device) to the kernel: as one file of
//! the device's size on a FUSE mount, for `losetup`, `mkfs` and `mount` (or through ublk, see
//! `ublk.rs`). The mount also holds a read-only `stats` file: the device's statistics as JSON,
//! refreshed every 100 ms (like a sysfs attribute).

use anyhow::{bail, Context, Result};
use shingled_core::ByteSize;
use shingled_fuse::{Backing, FileServer, Files};
use shingled_stl::{BlockDevice, ByteDevice, BLOCK};
use std::io;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// A block device the CLI can serve.
pub trait Served: BlockDevice + Send + 'static {
    /// What it is, for messages (`smart`, `dm-zoned`, `cache (lru, read-write)`).
    fn label(&self) -> String;
    /// Background work after the device has been idle (SMaRT's GC, dm-zoned's reclaim).
    fn idle(&mut self, _tick: Duration) -> shingled_stl::Result<()> {
        Ok(())
    }
    /// Statistics, as JSON.
    fn stats_json(&self) -> serde_json::Value;
}

/// Parses `--name`, the served file's name in the mount: one non-empty path component (no `/`,
/// not `.` or `..`, no NUL) and not `stats`, so the device is reachable as `MOUNT/NAME`. Checked
/// by clap, before anything is opened or mounted.
pub fn file_name(s: &str) -> std::result::Result<String, String> {
    let why = if s.is_empty() {
        "it is empty"
    } else if s.contains('/') {
        "it contains '/' (it must be a single file name in the mount point)"
    } else if s == "." || s == ".." {
        "'.' and '..' name directories, not a file"
    } else if s.contains('\0') {
        "it contains a NUL byte"
    } else if s == "stats" {
        "that name is the statistics file's"
    } else {
        return Ok(s.to_string());
    };
    Err(format!("{s:?} is not a file name for the served device: {why}; choose another, e.g. disk"))
}

/// A file of the mount: the served device behind a byte front end, or its statistics.
enum Entry<D: BlockDevice> {
    Device { dev: ByteDevice<D>, last_io: Instant },
    Stats(Vec<u8>),
}

impl<D: Served> Backing for Entry<D> {
    fn read_at(&mut self, offset: u64, buf: &mut [u8]) -> io::Result<()> {
        match self {
            Entry::Device { dev, last_io } => {
                *last_io = Instant::now();
                let size = dev.size();
                let n = (size.saturating_sub(offset)).min(buf.len() as u64) as usize;
                buf[n..].fill(0);
                if n > 0 {
                    dev.read_at(offset, &mut buf[..n])?;
                }
                Ok(())
            }
            Entry::Stats(text) => {
                let start = (offset as usize).min(text.len());
                let n = (text.len() - start).min(buf.len());
                buf[..n].copy_from_slice(&text[start..start + n]);
                buf[n..].fill(0);
                Ok(())
            }
        }
    }

    fn write_at(&mut self, offset: u64, data: &[u8]) -> io::Result<()> {
        match self {
            Entry::Device { dev, last_io } => {
                *last_io = Instant::now();
                if offset.saturating_add(data.len() as u64) > dev.size() {
                    return Err(io::Error::from_raw_os_error(libc::ENOSPC));
                }
                dev.write_at(offset, data).map_err(io::Error::from)
            }
            Entry::Stats(_) => Err(io::Error::from_raw_os_error(libc::EACCES)),
        }
    }

    fn sync(&mut self) -> io::Result<()> {
        match self {
            Entry::Device { dev, last_io } => {
                *last_io = Instant::now();
                dev.flush().map_err(io::Error::from)
            }
            Entry::Stats(_) => Ok(()),
        }
    }

    fn size(&mut self) -> io::Result<u64> {
        Ok(match self {
            Entry::Device { dev, .. } => dev.size(),
            Entry::Stats(text) => text.len() as u64,
        })
    }

    fn set_len(&mut self, len: u64) -> io::Result<()> {
        let size = self.size()?;
        if len == size {
            Ok(())
        } else {
            Err(io::Error::from_raw_os_error(libc::EPERM))
        }
    }
}

/// The statistics file's content: pretty JSON padded with spaces to a whole number of 4 KiB
/// (JSON allows trailing white space), so that its size stays put between refreshes and one
/// read of the file sees one snapshot.
fn stats_text<D: Served>(dev: &D) -> Vec<u8> {
    let mut t = serde_json::to_vec_pretty(&dev.stats_json()).unwrap_or_default();
    let size = (t.len() + 1).div_ceil(BLOCK) * BLOCK;
    t.resize(size - 1, b' ');
    t.push(b'\n');
    t
}

/// Serves `dev` (opened from `file` since `t0`) as `mountpoint/name` (and `mountpoint/stats`)
/// until SIGTERM, SIGINT or SIGHUP; then unmounts, flushes, prints the statistics as JSON on
/// stdout and returns the device. `idle`: how long the device must be idle before its
/// background work runs.
pub fn serve_fuse<D: Served>(
    dev: D,
    file: &Path,
    mountpoint: &Path,
    name: &str,
    idle: Duration,
    t0: Instant,
) -> Result<()> {
    shingled_fuse::fuse_available().map_err(|why| anyhow::anyhow!("cannot serve over FUSE here: {why}"))?;
    if shingled_fuse::clear_dead_mount(mountpoint)? == shingled_fuse::DeadMount::Cleared {
        eprintln!(
            "{}: detached the dead mount a killed server had left there (Transport endpoint is not connected)",
            mountpoint.display()
        );
    }
    if !mountpoint.is_dir() {
        bail!("{}: not a directory (the mount point must exist)", mountpoint.display());
    }
    if name == "stats" {
        bail!("--name stats: that name is the statistics file's; choose another");
    }
    let label = dev.label();
    let size = dev.capacity_blocks() * BLOCK as u64;
    let files: Files<Entry<D>> = Files::new();
    files.insert("stats", Entry::Stats(stats_text(&dev)))?;
    files.insert(name.to_string(), Entry::Device { dev: ByteDevice::new(dev), last_io: Instant::now() })?;
    let stop = Arc::new(AtomicBool::new(false));
    for sig in [signal_hook::consts::SIGTERM, signal_hook::consts::SIGINT, signal_hook::consts::SIGHUP] {
        signal_hook::flag::register(sig, Arc::clone(&stop)).context("installing the signal handlers")?;
    }
    let mounted = FileServer::new(files.clone())
        .mount(mountpoint)
        .with_context(|| format!("mounting on {}", mountpoint.display()))?;
    eprintln!(
        "serving {} ({label}, {} = {size} bytes, opened in {:.2} s) as {}; statistics in {}; SIGTERM or \
         Ctrl-C stops",
        file.display(),
        ByteSize(size),
        t0.elapsed().as_secs_f64(),
        mountpoint.join(name).display(),
        mountpoint.join("stats").display()
    );
    let tick = Duration::from_millis(100);
    while !stop.load(Ordering::Relaxed) {
        std::thread::sleep(tick);
        let r = files.with(name, |e| match e {
            Entry::Device { dev, last_io } => {
                let r = if last_io.elapsed() >= idle { dev.inner().idle(tick) } else { Ok(()) };
                (r, stats_text(dev.inner()))
            }
            Entry::Stats(_) => (Ok(()), Vec::new()),
        });
        if let Some((r, text)) = r {
            if let Err(e) = r {
                eprintln!("background work failed: {e}");
            }
            files.with("stats", |e| *e = Entry::Stats(text));
        }
    }
    eprintln!("stopping: unmounting {}", mountpoint.display());
    let unmounted = mounted.unmount();
    let flushed = files
        .with(name, |e| match e {
            Entry::Device { dev, .. } => dev.flush(),
            Entry::Stats(_) => Ok(()),
        })
        .unwrap_or(Ok(()));
    if let Err(e) = &unmounted {
        eprintln!("warning: {e}; a loop device may still use the file (detach it with `losetup -d`)");
    }
    flushed.with_context(|| format!("flushing {}", file.display()))?;
    let stats = files
        .with(name, |e| match e {
            Entry::Device { dev, .. } => dev.inner().stats_json(),
            Entry::Stats(_) => serde_json::Value::Null,
        })
        .unwrap_or_default();
    eprintln!("flushed and closed {}", file.display());
    println!("{stats}");
    Ok(())
}

impl Served for shingled_stl::Stl {
    fn label(&self) -> String {
        self.kind().to_string()
    }
    fn idle(&mut self, tick: Duration) -> shingled_stl::Result<()> {
        shingled_stl::Stl::idle(self, tick)
    }
    fn stats_json(&self) -> serde_json::Value {
        shingled_stl::Stl::stats_json(self)
    }
}

impl Served for shingled_blockcache::files::FileCache {
    fn label(&self) -> String {
        format!("cache: {}, {}", self.policy_name(), self.mode().name())
    }
    fn stats_json(&self) -> serde_json::Value {
        serde_json::to_value(self.stats()).unwrap_or_default()
    }
}
