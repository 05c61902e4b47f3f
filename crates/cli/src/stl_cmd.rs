//! `shingled stl`: translation layers that make a shingled device an ordinary block device —
//! SMaRT over a shingled track medium, or a dm-zoned-style layer over a zoned device — kept in
//! a file: format, check (read-only), stats, and serve (a FUSE file that `losetup`, `mkfs.ext4`
//! and `mount` can use, or with `--ublk` a /dev/ublkbN block device).

use crate::args::InfoOutput;
use anyhow::{bail, Context, Result};
use clap::{Args, Subcommand, ValueEnum};
use serde::Serialize;
use shingled_core::ByteSize;
use shingled_stl::{BlockDevice, DmZonedFileSpec, LayerKind, SmartFileSpec, SmartStlConfig, Stl, BLOCK};
use std::path::PathBuf;
use std::time::{Duration, Instant};

// Fields in alphabetical order: the keys come out as they did when these were built with
// `serde_json::json!`.

/// `stl check -O json`.
#[derive(Serialize)]
struct CheckReport<'a> {
    layer: LayerKind,
    problems: &'a [String],
}

/// `stl stats -O json`: the layer's own statistics object as it gives it.
#[derive(Serialize)]
struct StatsReport<'a> {
    layer: LayerKind,
    problems: &'a [String],
    stats: &'a serde_json::Value,
}

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
    /// Name of the served file (FUSE): one file name, not `stats`.
    #[arg(long, default_value = "disk", value_parser = crate::served::file_name)]
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
        InfoOutput::Json => {
            println!("{}", serde_json::to_string(&CheckReport { layer: kind, problems: &problems })?)
        }
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
    match a.output {
        InfoOutput::Json => {
            println!(
                "{}",
                serde_json::to_string(&StatsReport { layer: kind, problems: &problems, stats: &stats })?
            )
        }
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

fn serve(a: ServeArgs) -> Result<()> {
    if a.ublk {
        return serve_ublk(a);
    }
    // clap requires the mount point without --ublk.
    let Some(mountpoint) = a.mountpoint.as_deref() else { bail!("the mount point is missing") };
    shingled_fuse::fuse_available().map_err(|why| anyhow::anyhow!("cannot serve over FUSE here: {why}"))?;
    let t0 = Instant::now();
    let stl = Stl::open(&a.file).with_context(|| format!("opening {}", a.file.display()))?;
    crate::served::serve_fuse(stl, &a.file, mountpoint, &a.name, Duration::from_millis(a.idle_ms), t0)
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
