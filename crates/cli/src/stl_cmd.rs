//! `shingled stl`: translation layers that make a shingled device an ordinary block device —
//! SMaRT over a shingled track medium, a dm-zoned-style layer over a zoned device, or an
//! emulated DM-SMR drive (the DM-SMR model's PB and bands with real I/O) — kept in
//! a file: format, check (read-only), stats, and serve (a FUSE file that `losetup`, `mkfs.ext4`
//! and `mount` can use, or with `--ublk` a /dev/ublkbN block device).

use crate::output::{Output, OutputArgs};
use anyhow::{bail, Context, Result};
use clap::{Args, Subcommand, ValueEnum};
use serde::Serialize;
use shingled_core::ByteSize;
use shingled_stl::{
    BlockDevice, DmSmrFileSpec, DmZonedFileSpec, LayerKind, SmartFileSpec, SmartStlConfig, Stl, BLOCK,
};
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
    /// counts, in-place share and map memory for SMaRT; buffer use and reclaims for dm-zoned;
    /// RMWs, PB writes and band bytes for dm-smr.
    Stats(InfoArgs),
    /// Serve a translation layer as one file of the device's size on a FUSE mount, or with
    /// `--ublk` as a block device /dev/ublkbN, until SIGTERM or Ctrl-C (then unmount or remove
    /// the device, flush and exit). Attach the FUSE file with `losetup`. After a crash
    /// (SIGKILL, power loss), serving it again recovers.
    Serve(ServeArgs),
}

#[derive(Copy, Clone, Debug, PartialEq, ValueEnum)]
pub enum LayerArg {
    /// SMaRT (track-level shingled translation) on a shingled track medium.
    Smart,
    /// A dm-zoned-style layer (zone chunks, conventional-zone buffers, reclaim) on a zoned device.
    DmZoned,
    /// An emulated DM-SMR drive: the DM-SMR model of a drive profile (PB, bands, cleaning)
    /// with its PB appends and band read-modify-writes done for real in the file.
    DmSmr,
}

#[derive(Args, Debug)]
pub struct FormatArgs {
    /// The layer.
    #[arg(value_enum)]
    pub layer: LayerArg,
    /// The file to create (dm-smr: or a block device holding nothing, zeros in its first MiB).
    pub file: PathBuf,
    /// Raw size of the medium or device (dm-smr on a block device: the bytes it takes from the
    /// device's start).
    #[arg(long, default_value = "1GiB")]
    pub size: ByteSize,
    /// SMaRT: bytes per track (the last 4 KiB of each is its footer) [default: 1MiB].
    #[arg(long)]
    pub track_size: Option<ByteSize>,
    /// SMaRT: recording zones [default: 4].
    #[arg(long)]
    pub zones: Option<u32>,
    /// SMaRT: head width in tracks (a write destroys the next width − 1 tracks) [default: 2].
    #[arg(long)]
    pub head_width: Option<u32>,
    /// SMaRT: share of the shingled tracks the host can address (U) [default: 0.9].
    #[arg(long)]
    pub utilisation: Option<f64>,
    /// SMaRT: staging tracks for GC moves that overlap their destination [default: 8].
    #[arg(long)]
    pub staging_tracks: Option<u32>,
    /// dm-zoned: zone size (a power of two) [default: 16MiB].
    #[arg(long)]
    pub zone_size: Option<ByteSize>,
    /// dm-zoned: conventional zones (metadata and write buffers) [default: 8].
    #[arg(long)]
    pub conventional: Option<u64>,
    /// dm-zoned: sequential zones reserved for reclaim (default: the layer's).
    #[arg(long)]
    pub reserved_seq: Option<u64>,
    /// dm-smr: the DM-SMR drive profile (`shingled drives`) [default: st5000as0011-scaled].
    #[arg(long)]
    pub drive: Option<String>,
    /// dm-smr: persistent-buffer size, absolute (`64MiB`) or a fraction of the capacity
    /// (`1/256`) [default: the profile's].
    #[arg(long)]
    pub pb_size: Option<String>,
    /// dm-smr: band layout, fixed:SIZE, uniform:MIN:MAX[:SEED] or lba:OUTER:INNER [default: the
    /// profile's].
    #[arg(long)]
    pub bands: Option<String>,
}

#[derive(Args, Debug)]
pub struct InfoArgs {
    /// The file.
    pub file: PathBuf,
    #[command(flatten)]
    pub output: OutputArgs,
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
    let device = std::fs::metadata(&a.file)
        .is_ok_and(|m| std::os::unix::fs::FileTypeExt::is_block_device(&m.file_type()));
    if a.file.exists() && !(device && a.layer == LayerArg::DmSmr) {
        bail!(
            "{}: already exists; `shingled stl format` creates a new file (dm-smr also formats a block device)",
            a.file.display()
        );
    }
    // A flag of the other layer would be ignored: refuse it, so the file is what was asked for.
    let flags = [
        (LayerArg::Smart, "--track-size", a.track_size.is_some()),
        (LayerArg::Smart, "--zones", a.zones.is_some()),
        (LayerArg::Smart, "--head-width", a.head_width.is_some()),
        (LayerArg::Smart, "--utilisation", a.utilisation.is_some()),
        (LayerArg::Smart, "--staging-tracks", a.staging_tracks.is_some()),
        (LayerArg::DmZoned, "--zone-size", a.zone_size.is_some()),
        (LayerArg::DmZoned, "--conventional", a.conventional.is_some()),
        (LayerArg::DmZoned, "--reserved-seq", a.reserved_seq.is_some()),
        (LayerArg::DmSmr, "--drive", a.drive.is_some()),
        (LayerArg::DmSmr, "--pb-size", a.pb_size.is_some()),
        (LayerArg::DmSmr, "--bands", a.bands.is_some()),
    ];
    let name = match a.layer {
        LayerArg::Smart => "smart",
        LayerArg::DmZoned => "dm-zoned",
        LayerArg::DmSmr => "dm-smr",
    };
    let wrong: Vec<&str> =
        flags.iter().filter(|(layer, _, given)| *given && *layer != a.layer).map(|(_, f, _)| *f).collect();
    if !wrong.is_empty() {
        bail!(
            "{} {} not apply to the {name} layer; drop {}",
            wrong.join(", "),
            if wrong.len() == 1 { "does" } else { "do" },
            if wrong.len() == 1 { "it" } else { "them" }
        );
    }
    let stl = match a.layer {
        LayerArg::Smart => {
            let track_size = a.track_size.unwrap_or(ByteSize(1 << 20));
            let tb = u32::try_from(track_size.0)
                .ok()
                .filter(|&t| t <= 64 << 20)
                .with_context(|| format!("--track-size {track_size}: at most 64 MiB"))?;
            let d = SmartStlConfig::default();
            let spec = SmartFileSpec {
                size: a.size,
                track_bytes: tb,
                zones: a.zones.unwrap_or(4),
                head_width: a.head_width.unwrap_or(2),
                config: SmartStlConfig {
                    utilisation: a.utilisation.unwrap_or(d.utilisation),
                    staging_tracks: a.staging_tracks.unwrap_or(d.staging_tracks),
                    ..d
                },
            };
            Stl::format_smart(&a.file, &spec)
        }
        LayerArg::DmZoned => {
            let spec = DmZonedFileSpec {
                size: a.size,
                zone_bytes: a.zone_size.unwrap_or(ByteSize(16 << 20)),
                conventional: a.conventional.unwrap_or(8),
                reserved_seq: a.reserved_seq,
            };
            Stl::format_dmzoned(&a.file, &spec)
        }
        LayerArg::DmSmr => {
            let pb_size = a
                .pb_size
                .as_deref()
                .map(|p| {
                    p.parse::<shingled_core::SizeSpec>().map_err(|e| anyhow::anyhow!("--pb-size {p:?}: {e}"))
                })
                .transpose()?;
            let bands = a.bands.as_deref().map(crate::common_args::parse_bands).transpose()?;
            let spec = DmSmrFileSpec {
                size: a.size,
                drive: a.drive.clone().unwrap_or_else(|| DmSmrFileSpec::default().drive),
                pb_size,
                bands,
            };
            Stl::format_dm_smr(&a.file, &spec)
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
    a.output.start()?;
    let (kind, problems, _) =
        shingled_stl::inspect(&a.file).with_context(|| format!("checking {}", a.file.display()))?;
    match a.output.format() {
        Output::Json | Output::Csv => {
            a.output.print_line(&CheckReport { layer: kind, problems: &problems })?
        }
        Output::Table => {
            if problems.is_empty() {
                println!("{}: {kind}: clean", a.file.display());
            }
            for p in &problems {
                println!("{}: {kind}: {p}", a.file.display());
            }
        }
    }
    if !problems.is_empty() {
        crate::out::finish()?;
        std::process::exit(1);
    }
    Ok(())
}

fn stats(a: InfoArgs) -> Result<()> {
    a.output.start()?;
    let (kind, problems, stats) =
        shingled_stl::inspect(&a.file).with_context(|| format!("reading {}", a.file.display()))?;
    match a.output.format() {
        Output::Json | Output::Csv => {
            a.output.print_line(&StatsReport { layer: kind, problems: &problems, stats: &stats })?
        }
        Output::Table => {
            println!("{}: {kind}", a.file.display());
            let mut rows = Vec::new();
            stat_rows(&stats, "", &mut rows);
            for (k, text) in rows {
                println!("  {k:<26} {text}");
            }
            for p in &problems {
                println!("  problem: {p}");
            }
        }
    }
    Ok(())
}

/// The rows of a layer's statistics: one per number or text, a nested object's fields as rows
/// of their own under `prefix.` (the medium's counters), a list of numbers on one row; SMaRT's
/// zones as utilisation and free-space ratio.
fn stat_rows(v: &serde_json::Value, prefix: &str, rows: &mut Vec<(String, String)>) {
    use serde_json::Value;
    let Some(obj) = v.as_object() else {
        rows.push((prefix.to_string(), v.to_string()));
        return;
    };
    for (k, val) in obj {
        let key = if prefix.is_empty() { k.clone() } else { format!("{prefix}.{k}") };
        match val {
            Value::Object(_) => stat_rows(val, &key, rows),
            Value::Array(z) if k == "zones" => rows.push((
                key,
                z.iter()
                    .map(|p| match p.as_array().map(|x| (x[0].as_f64(), x[1].as_f64())) {
                        Some((Some(u), Some(r))) => format!("U {:.0}% R {r:.2}", 100.0 * u),
                        _ => p.to_string(),
                    })
                    .collect::<Vec<_>>()
                    .join(", "),
            )),
            Value::Array(items) if items.iter().all(|x| !x.is_object() && !x.is_array()) => {
                rows.push((key, items.iter().map(Value::to_string).collect::<Vec<_>>().join(", ")))
            }
            Value::Array(items) => {
                for (i, item) in items.iter().enumerate() {
                    stat_rows(item, &format!("{key}[{i}]"), rows);
                }
            }
            Value::String(t) => rows.push((key, t.clone())),
            other => rows.push((key, other.to_string())),
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
