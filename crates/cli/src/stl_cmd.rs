//! `shingled stl`: translation layers that make a shingled device an ordinary block device —
//! SMaRT over a shingled track medium, or a dm-zoned-style layer over a zoned device — kept in
//! a file: format, check (read-only), stats, and serve (a FUSE file that `losetup`, `mkfs.ext4`
//! and `mount` can use, or with `--ublk` a /dev/ublkbN block device).

use anyhow::{bail, Context, Result};
use clap::{Args, Subcommand, ValueEnum};
use shingled_core::ByteSize;
use shingled_fuse::{Backing, FileServer, Files};
use shingled_stl::{BlockDevice, ByteDevice, DmZonedFileSpec, SmartFileSpec, SmartStlConfig, Stl, BLOCK};
use std::io;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Translation layers in a file: format, check, stats, serve.
#[derive(Subcommand, Debug)]
pub enum StlCommand {
    /// Create a file holding a shingled medium or a zoned device, formatted with a translation
    /// layer (the file must not exist).
    Format(FormatArgs),
    /// Check a translation layer without writing to it (an fsck); exit status 1 if it found a
    /// problem.
    Check(InfoArgs),
    /// Statistics of a translation layer (read-only): capacity, utilisation, R per zone, GC
    /// counts, in-place share and map memory for SMaRT; buffer use and reclaims for dm-zoned.
    Stats(InfoArgs),
    /// Serve a translation layer as one file of the device's size on a FUSE mount, or with
    /// `--ublk` as a block device /dev/ublkbN, until SIGTERM or Ctrl-C (then unmount or remove
    /// the device, flush and exit). Attach the FUSE file with `losetup`. After a crash
    /// (SIGKILL, power loss), serving it again recovers.
    Serve(ServeArgs),
}

#[derive(Copy, Clone, Debug, ValueEnum)]
pub enum LayerArg {
    /// SMaRT (track-level shingled translation) on a shingled track medium.
    Smart,
    /// A dm-zoned-style layer (zone chunks, conventional-zone buffers, reclaim) on a zoned device.
    DmZoned,
}

#[derive(Args, Debug)]
pub struct FormatArgs {
    /// The layer.
    #[arg(value_enum)]
    pub layer: LayerArg,
    /// The file to create.
    pub file: PathBuf,
    /// Raw size of the medium or device.
    #[arg(long, default_value = "1GiB")]
    pub size: ByteSize,
    /// SMaRT: bytes per track (the last 4 KiB of each is its footer).
    #[arg(long, default_value = "1MiB")]
    pub track_size: ByteSize,
    /// SMaRT: recording zones.
    #[arg(long, default_value_t = 4)]
    pub zones: u32,
    /// SMaRT: head width in tracks (a write destroys the next width − 1 tracks).
    #[arg(long, default_value_t = 2)]
    pub head_width: u32,
    /// SMaRT: share of the shingled tracks the host can address (U).
    #[arg(long, default_value_t = 0.9)]
    pub utilisation: f64,
    /// SMaRT: staging tracks for GC moves that overlap their destination.
    #[arg(long, default_value_t = 8)]
    pub staging_tracks: u32,
    /// dm-zoned: zone size (a power of two).
    #[arg(long, default_value = "16MiB")]
    pub zone_size: ByteSize,
    /// dm-zoned: conventional zones (metadata and write buffers).
    #[arg(long, default_value_t = 8)]
    pub conventional: u64,
    /// dm-zoned: sequential zones reserved for reclaim (default: the layer's).
    #[arg(long)]
    pub reserved_seq: Option<u64>,
}

#[derive(Copy, Clone, Debug, Default, ValueEnum)]
pub enum InfoOutput {
    /// Text for people.
    #[default]
    Table,
    /// JSON.
    Json,
}

#[derive(Args, Debug)]
pub struct InfoArgs {
    /// The file.
    pub file: PathBuf,
    /// Output format.
    #[arg(long, value_enum, default_value_t = InfoOutput::Table)]
    pub output: InfoOutput,
}

#[derive(Args, Debug)]
pub struct ServeArgs {
    /// The file holding the translation layer.
    pub file: PathBuf,
    /// Where to mount (an existing directory); not with `--ublk`.
    #[arg(required_unless_present = "ublk", conflicts_with = "ublk")]
    pub mountpoint: Option<PathBuf>,
    /// Name of the served file (FUSE).
    #[arg(long, default_value = "disk")]
    pub name: String,
    /// Serve a block device /dev/ublkbN (printed on stdout) through the kernel's ublk driver
    /// instead of a FUSE file: Linux ≥ 6.0 with `ublk_drv` loaded, root, and a `shingled`
    /// built with the `ublk` feature.
    #[arg(long)]
    pub ublk: bool,
    /// Idle time before background work (SMaRT's GC, dm-zoned's reclaim), ms.
    #[arg(long, default_value_t = 1242)]
    pub idle_ms: u64,
}

/// Runs `shingled stl ...`.
pub fn run(cmd: StlCommand) -> Result<()> {
    match cmd {
        StlCommand::Format(a) => format(a),
        StlCommand::Check(a) => check(a),
        StlCommand::Stats(a) => stats(a),
        StlCommand::Serve(a) => serve(a),
    }
}

fn format(a: FormatArgs) -> Result<()> {
    if a.file.exists() {
        bail!("{}: already exists; `shingled stl format` creates a new file", a.file.display());
    }
    let stl = match a.layer {
        LayerArg::Smart => {
            let tb = u32::try_from(a.track_size.0)
                .ok()
                .filter(|&t| t <= 64 << 20)
                .with_context(|| format!("--track-size {}: at most 64 MiB", a.track_size))?;
            let spec = SmartFileSpec {
                size: a.size,
                track_bytes: tb,
                zones: a.zones,
                head_width: a.head_width,
                config: SmartStlConfig {
                    utilisation: a.utilisation,
                    staging_tracks: a.staging_tracks,
                    ..SmartStlConfig::default()
                },
            };
            Stl::format_smart(&a.file, &spec)
        }
        LayerArg::DmZoned => {
            let spec = DmZonedFileSpec {
                size: a.size,
                zone_bytes: a.zone_size,
                conventional: a.conventional,
                reserved_seq: a.reserved_seq,
            };
            Stl::format_dmzoned(&a.file, &spec)
        }
    }
    .with_context(|| format!("formatting {}", a.file.display()))?;
    let cap = stl.capacity_blocks() * BLOCK as u64;
    println!(
        "formatted {} as {}: {} usable ({} bytes, {:.1}% of {} raw)",
        a.file.display(),
        stl.kind(),
        ByteSize(cap),
        cap,
        100.0 * cap as f64 / a.size.0 as f64,
        a.size
    );
    Ok(())
}

fn check(a: InfoArgs) -> Result<()> {
    let (kind, problems, _) =
        shingled_stl::inspect(&a.file).with_context(|| format!("checking {}", a.file.display()))?;
    match a.output {
        InfoOutput::Json => println!("{}", serde_json::json!({ "layer": kind, "problems": problems })),
        InfoOutput::Table => {
            if problems.is_empty() {
                println!("{}: {kind}: clean", a.file.display());
            }
            for p in &problems {
                println!("{}: {kind}: {p}", a.file.display());
            }
        }
    }
    if !problems.is_empty() {
        std::process::exit(1);
    }
    Ok(())
}

fn stats(a: InfoArgs) -> Result<()> {
    let (kind, problems, stats) =
        shingled_stl::inspect(&a.file).with_context(|| format!("reading {}", a.file.display()))?;
    let v = serde_json::json!({ "layer": kind, "stats": stats, "problems": problems });
    match a.output {
        InfoOutput::Json => println!("{v}"),
        InfoOutput::Table => {
            println!("{}: {kind}", a.file.display());
            if let Some(obj) = stats.as_object() {
                for (k, val) in obj {
                    let text = match val {
                        serde_json::Value::Array(z) if k == "zones" => z
                            .iter()
                            .map(|p| match p.as_array().map(|x| (x[0].as_f64(), x[1].as_f64())) {
                                Some((Some(u), Some(r))) => format!("U {:.0}% R {r:.2}", 100.0 * u),
                                _ => p.to_string(),
                            })
                            .collect::<Vec<_>>()
                            .join(", "),
                        other => other.to_string(),
                    };
                    println!("  {k:<26} {text}");
                }
            }
            for p in &problems {
                println!("  problem: {p}");
            }
        }
    }
    Ok(())
}

/// The served file: the layer behind a byte front end, and when it was last used.
struct StlBacking {
    dev: ByteDevice<Stl>,
    last_io: Instant,
}

impl Backing for StlBacking {
    fn read_at(&mut self, offset: u64, buf: &mut [u8]) -> io::Result<()> {
        self.last_io = Instant::now();
        let size = self.dev.size();
        let n = (size.saturating_sub(offset)).min(buf.len() as u64) as usize;
        buf[n..].fill(0);
        if n > 0 {
            self.dev.read_at(offset, &mut buf[..n])?;
        }
        Ok(())
    }

    fn write_at(&mut self, offset: u64, data: &[u8]) -> io::Result<()> {
        self.last_io = Instant::now();
        if offset.saturating_add(data.len() as u64) > self.dev.size() {
            return Err(io::Error::from_raw_os_error(libc::ENOSPC));
        }
        self.dev.write_at(offset, data).map_err(io::Error::from)
    }

    fn sync(&mut self) -> io::Result<()> {
        self.last_io = Instant::now();
        self.dev.flush().map_err(io::Error::from)
    }

    fn size(&mut self) -> io::Result<u64> {
        Ok(self.dev.size())
    }

    fn set_len(&mut self, len: u64) -> io::Result<()> {
        if len == self.dev.size() {
            Ok(())
        } else {
            Err(io::Error::from_raw_os_error(libc::EPERM))
        }
    }
}

fn serve(a: ServeArgs) -> Result<()> {
    if a.ublk {
        return serve_ublk(a);
    }
    // clap requires the mount point without --ublk.
    let Some(mountpoint) = a.mountpoint.as_deref() else { bail!("the mount point is missing") };
    shingled_fuse::fuse_available().map_err(|why| anyhow::anyhow!("cannot serve over FUSE here: {why}"))?;
    if !mountpoint.is_dir() {
        bail!("{}: not a directory (the mount point must exist)", mountpoint.display());
    }
    let t0 = Instant::now();
    let stl = Stl::open(&a.file).with_context(|| format!("opening {}", a.file.display()))?;
    let kind = stl.kind();
    let size = stl.capacity_blocks() * BLOCK as u64;
    let files: Files<StlBacking> = Files::new();
    files.insert(a.name.clone(), StlBacking { dev: ByteDevice::new(stl), last_io: Instant::now() })?;
    let stop = Arc::new(AtomicBool::new(false));
    for sig in [signal_hook::consts::SIGTERM, signal_hook::consts::SIGINT, signal_hook::consts::SIGHUP] {
        signal_hook::flag::register(sig, Arc::clone(&stop)).context("installing the signal handlers")?;
    }
    let mounted = FileServer::new(files.clone())
        .mount(mountpoint)
        .with_context(|| format!("mounting on {}", mountpoint.display()))?;
    eprintln!(
        "serving {} ({kind}, {} = {size} bytes, opened in {:.2} s) as {}; SIGTERM or Ctrl-C stops",
        a.file.display(),
        ByteSize(size),
        t0.elapsed().as_secs_f64(),
        mountpoint.join(&a.name).display()
    );
    let idle = Duration::from_millis(a.idle_ms);
    let tick = Duration::from_millis(100);
    while !stop.load(Ordering::Relaxed) {
        std::thread::sleep(tick);
        let r =
            files.with(
                &a.name,
                |b| {
                    if b.last_io.elapsed() >= idle {
                        b.dev.inner().idle(tick)
                    } else {
                        Ok(())
                    }
                },
            );
        if let Some(Err(e)) = r {
            eprintln!("background work failed: {e}");
        }
    }
    eprintln!("stopping: unmounting {}", mountpoint.display());
    let unmounted = mounted.unmount();
    let flushed = files.with(&a.name, |b| b.dev.flush()).unwrap_or(Ok(()));
    if let Err(e) = &unmounted {
        eprintln!("warning: {e}; a loop device may still use the file (detach it with `losetup -d`)");
    }
    flushed.with_context(|| format!("flushing {}", a.file.display()))?;
    let stats = files.with(&a.name, |b| b.dev.inner().stats_json()).unwrap_or_default();
    eprintln!("flushed and closed {}", a.file.display());
    println!("{stats}");
    Ok(())
}

/// `serve --ublk`: checks that the kernel has ublk before opening (and so recovering) the layer.
#[cfg(feature = "ublk")]
fn serve_ublk(a: ServeArgs) -> Result<()> {
    crate::ublk::available()?;
    let t0 = Instant::now();
    let stl = Stl::open(&a.file).with_context(|| format!("opening {}", a.file.display()))?;
    crate::ublk::serve(stl, &a.file, t0, Duration::from_millis(a.idle_ms))
}

#[cfg(not(feature = "ublk"))]
fn serve_ublk(_: ServeArgs) -> Result<()> {
    bail!("--ublk: built without the ublk feature: cargo build --features ublk -p shingled-cli")
}
