//! `shingled zone`: a `blkzone`-like tool for emulated zoned device files
//! (`shingled_zoned::FileZoned`, format in docs/zoned-file-format.md).

use crate::json::sorted;
use crate::output::{LongOutputArgs, Output, OutputArgs};
use anyhow::{bail, Context, Result};
use clap::{Args, Subcommand, ValueEnum};
use serde::Serialize;
use shingled_core::ByteSize;
use shingled_zoned::{
    DeviceInfo, Dialect, FileOptions, FileZoned, IoMode, ReadAboveWp, ReportOption, Zone, ZoneOp,
    ZonedConfig, ZonedDevice, ZonedModel, SECTOR_SIZE,
};
use std::path::{Path, PathBuf};

// The JSON reports below keep the keys in alphabetical order, as when they were built with
// `serde_json::json!`: fields declared alphabetically, library types through `sorted`.

/// `zone create --json`.
#[derive(Serialize)]
struct CreateReport<'a> {
    #[serde(serialize_with = "sorted")]
    device: DeviceInfo,
    file: &'a Path,
}

/// `zone report --json`.
#[derive(Serialize)]
struct ZoneReport<'a> {
    #[serde(serialize_with = "sorted")]
    device: DeviceInfo,
    file: &'a Path,
    #[serde(serialize_with = "sorted")]
    zones: Vec<Zone>,
}

/// `zone open|close|finish|reset --json`: the zones of the range after the operation.
#[derive(Serialize)]
struct ManageReport {
    op: ZoneOp,
    #[serde(serialize_with = "sorted")]
    zones: Vec<Zone>,
}

/// Zoned device files: create, report, reset, open, close, finish (like `blkzone`).
#[derive(Subcommand, Debug)]
pub enum ZoneCommand {
    /// Create an emulated host-managed zoned device file (sparse).
    Create(CreateArgs),
    /// List zones: start, length, capacity, write pointer (512-byte sectors), condition, type.
    Report(ReportArgs),
    /// Reset the write pointer of zones (whole device by default).
    Reset(RangeArgs),
    /// Explicitly open zones (whole device by default: every CLOSED zone, ZBC "ALL"). Each
    /// command is a new session of the device: like a power cycle, it brings open zones back
    /// CLOSED (or EMPTY), so an open only matters to the command that made it.
    Open(RangeArgs),
    /// Close open zones (whole device by default).
    Close(RangeArgs),
    /// Finish zones: write pointer to the end, condition FULL. With no range this is ZBC's
    /// FINISH ALL, which finishes the open and closed zones and leaves EMPTY zones EMPTY;
    /// `blkzone finish` instead finishes every zone of its range one by one, EMPTY ones too:
    /// give --offset and --count for that.
    Finish(RangeArgs),
}

#[derive(Copy, Clone, Debug, ValueEnum)]
pub enum DialectArg {
    /// SCSI ZBC / ATA ZAC (SMR drives): OPEN/CLOSE of FULL and CLOSE of EMPTY succeed.
    Zbc,
    /// Linux null_blk / NVMe ZNS: those fail with EIO.
    Zns,
}

#[derive(Copy, Clone, Debug, ValueEnum)]
pub enum ModelArg {
    /// Host-managed: sequential-write-required zones.
    HostManaged,
    /// Host-aware: sequential-write-preferred zones.
    HostAware,
}

#[derive(Copy, Clone, Debug, ValueEnum)]
pub enum ReportFilter {
    All,
    Empty,
    ImplicitOpen,
    ExplicitOpen,
    Closed,
    Full,
    ReadOnly,
    Offline,
    NonSeq,
    NotWp,
}

#[derive(Args, Debug)]
pub struct CreateArgs {
    /// The device file to create (must not exist).
    pub file: PathBuf,
    /// Zone size (a power of two).
    #[arg(long, short = 'z', default_value = "256MiB")]
    pub zone_size: ByteSize,
    /// Number of zones (alternative to --capacity).
    #[arg(long, short = 'n', conflicts_with = "capacity")]
    pub zones: Option<u64>,
    /// Device capacity; a capacity that is not a whole number of zones gives a smaller last zone.
    #[arg(long)]
    pub capacity: Option<ByteSize>,
    /// Writable bytes per zone (default: the zone size).
    #[arg(long)]
    pub zone_capacity: Option<ByteSize>,
    /// Conventional zones at the start (default: 1% of the zones, at least 1, as an SMR drive).
    #[arg(long, short = 'c')]
    pub conventional: Option<u64>,
    /// Maximum open zones (0 = no limit).
    #[arg(long, default_value_t = 128)]
    pub max_open: u32,
    /// Maximum active zones (0 = no limit).
    #[arg(long, default_value_t = 0)]
    pub max_active: u32,
    /// State-machine dialect.
    #[arg(long, value_enum, default_value_t = DialectArg::Zbc)]
    pub dialect: DialectArg,
    /// Zoned model.
    #[arg(long, value_enum, default_value_t = ModelArg::HostManaged)]
    pub model: ModelArg,
    /// Logical block size: 512 or 4096.
    #[arg(long, default_value_t = 4096)]
    pub lba_size: u32,
    /// Fail reads above the write pointer instead of returning zeros (ZBC URSWRZ = 0).
    #[arg(long)]
    pub restrict_reads: bool,
    #[command(flatten)]
    pub report: LongOutputArgs,
    /// The former spelling of `--output json`.
    #[arg(long, hide = true, conflicts_with = "output")]
    pub json: bool,
}

#[derive(Args, Debug)]
pub struct ReportArgs {
    /// The device file.
    pub file: PathBuf,
    /// First sector (512-byte units); the zone containing it is the first reported.
    #[arg(long, short = 'o', default_value_t = 0)]
    pub offset: u64,
    /// Sectors to cover (0: to the end of the device).
    #[arg(long, short = 'l', default_value_t = 0)]
    pub length: u64,
    /// Report at most this many zones.
    #[arg(long, short = 'c')]
    pub count: Option<usize>,
    /// Report only zones in this condition.
    #[arg(long, value_enum, default_value_t = ReportFilter::All)]
    pub filter: ReportFilter,
    #[command(flatten)]
    pub report: LongOutputArgs,
    /// The former spelling of `--output json`.
    #[arg(long, hide = true, conflicts_with = "output")]
    pub json: bool,
}

#[derive(Args, Debug)]
pub struct RangeArgs {
    /// The device file.
    pub file: PathBuf,
    /// First sector (512-byte units), a zone start.
    #[arg(long, short = 'o', default_value_t = 0)]
    pub offset: u64,
    /// Sectors (a multiple of the zone size, or up to the end of the device); default: to the
    /// end of the device.
    #[arg(long, short = 'l', conflicts_with = "count")]
    pub length: Option<u64>,
    /// Number of zones from --offset.
    #[arg(long, short = 'c')]
    pub count: Option<u64>,
    #[command(flatten)]
    pub report: LongOutputArgs,
    /// The former spelling of `--output json`.
    #[arg(long, hide = true, conflicts_with = "output")]
    pub json: bool,
}

/// The output flags of a zone command, `--json` read as `--output json`.
fn output(report: &LongOutputArgs, json: bool) -> OutputArgs {
    let mut out = report.args();
    if json {
        out.output = Some(Output::Json);
    }
    out
}

pub fn run(cmd: ZoneCommand) -> Result<()> {
    match cmd {
        ZoneCommand::Create(a) => create(a),
        ZoneCommand::Report(a) => report(a),
        ZoneCommand::Reset(a) => manage(ZoneOp::Reset, a),
        ZoneCommand::Open(a) => manage(ZoneOp::Open, a),
        ZoneCommand::Close(a) => manage(ZoneOp::Close, a),
        ZoneCommand::Finish(a) => manage(ZoneOp::Finish, a),
    }
}

fn create(a: CreateArgs) -> Result<()> {
    output(&a.report, a.json).check()?;
    let zs = a.zone_size.0;
    let capacity = match (a.zones, a.capacity) {
        (Some(n), None) => ByteSize(n.checked_mul(zs).context("--zones × --zone-size overflows")?),
        (None, Some(c)) => c,
        (None, None) => bail!("give the device size with --zones N or --capacity SIZE"),
        (Some(_), Some(_)) => unreachable!("clap rejects both"),
    };
    let nr_zones = capacity.0.div_ceil(zs.max(1));
    if a.zone_capacity.is_some_and(|c| c.0 == 0) {
        // 0 means "the zone size" inside ZonedConfig; given on the command line it is a mistake.
        bail!("--zone-capacity 0: a zone must hold something; leave the flag out for capacity = zone size");
    }
    let cfg = ZonedConfig {
        capacity,
        zone_size: a.zone_size,
        zone_capacity: a.zone_capacity.unwrap_or(ByteSize(0)),
        nr_conv: a.conventional.unwrap_or_else(|| (nr_zones / 100).max(1).min(nr_zones.saturating_sub(1))),
        max_open: a.max_open,
        max_active: a.max_active,
        dialect: match a.dialect {
            DialectArg::Zbc => Dialect::Zbc,
            DialectArg::Zns => Dialect::Zns,
        },
        model: match a.model {
            ModelArg::HostManaged => ZonedModel::HostManaged,
            ModelArg::HostAware => ZonedModel::HostAware,
        },
        lba_size: a.lba_size,
        read_above_wp: if a.restrict_reads { ReadAboveWp::Fail } else { ReadAboveWp::Zeros },
    };
    let (_, notes) = cfg.sanitize()?;
    let dev = FileZoned::create(&a.file, &cfg, FileOptions { io_mode: IoMode::Buffered })
        .with_context(|| format!("creating {}", a.file.display()))?;
    // Notes only once the device exists: before an error they read as if it had worked.
    for n in &notes {
        eprintln!("note: {n}");
    }
    let info = dev.info();
    let out = output(&a.report, a.json);
    out.emit_value(&CreateReport { device: info, file: &a.file }, || {
        format!("{}: {}\n", a.file.display(), describe(&info))
    })
}

fn describe(i: &DeviceInfo) -> String {
    format!(
        "{} zones of {} ({} conventional), capacity {}, zone capacity {}, max open {}, max active {}, \
         {} dialect, {}-byte blocks",
        i.nr_zones,
        ByteSize(i.zone_bytes()),
        i.nr_conv,
        ByteSize(i.capacity_bytes()),
        ByteSize(i.zone_capacity_sectors * SECTOR_SIZE),
        limit(i.max_open),
        limit(i.max_active),
        i.dialect.name(),
        i.lba_size
    )
}

fn limit(n: u32) -> String {
    if n == 0 {
        "unlimited".into()
    } else {
        n.to_string()
    }
}

fn open(file: &Path) -> Result<FileZoned> {
    FileZoned::open(file, FileOptions { io_mode: IoMode::Buffered })
        .with_context(|| format!("opening {}", file.display()))
}

/// One line per zone, as util-linux `blkzone report` prints it.
fn zone_line(z: &Zone) -> String {
    let wp = if z.zone_type.is_sequential() && z.wp != u64::MAX { z.wp - z.start } else { z.len };
    format!(
        "  start: 0x{:09x}, len 0x{:06x}, cap 0x{:06x}, wptr 0x{:06x} reset:{} non-seq:{}, zcond:{:2}({}) [type: {}({})]",
        z.start,
        z.len,
        z.capacity,
        wp,
        z.reset as u8,
        z.non_seq as u8,
        z.cond.code(),
        z.cond.short_name(),
        z.zone_type.code(),
        z.zone_type.name()
    )
}

fn report(a: ReportArgs) -> Result<()> {
    output(&a.report, a.json).check()?;
    let dev = open(&a.file)?;
    let opt = match a.filter {
        ReportFilter::All => ReportOption::All,
        ReportFilter::Empty => ReportOption::Empty,
        ReportFilter::ImplicitOpen => ReportOption::ImplicitOpen,
        ReportFilter::ExplicitOpen => ReportOption::ExplicitOpen,
        ReportFilter::Closed => ReportOption::Closed,
        ReportFilter::Full => ReportOption::Full,
        ReportFilter::ReadOnly => ReportOption::ReadOnly,
        ReportFilter::Offline => ReportOption::Offline,
        ReportFilter::NonSeq => ReportOption::NonSeq,
        ReportFilter::NotWp => ReportOption::NotWp,
    };
    let mut zones = dev
        .report_zones(a.offset, a.length, opt)
        .with_context(|| format!("reporting {}", a.file.display()))?;
    if let Some(c) = a.count {
        zones.truncate(c);
    }
    let out = output(&a.report, a.json);
    match out.format() {
        // One row per zone.
        Output::Csv => out.emit(&crate::output::csv_of(&serde_json::to_value(&zones)?)),
        _ => {
            let table = zones.iter().map(|z| zone_line(z) + "\n").collect::<String>();
            let v = ZoneReport { device: dev.info(), file: &a.file, zones };
            out.emit_value(&v, || table)
        }
    }
}

fn manage(op: ZoneOp, a: RangeArgs) -> Result<()> {
    output(&a.report, a.json).check()?;
    let mut dev = open(&a.file)?;
    let info = dev.info();
    let len = match (a.length, a.count) {
        (Some(l), _) => l,
        (None, Some(c)) => {
            let end = a.offset.saturating_add(c.saturating_mul(info.zone_sectors)).min(info.capacity_sectors);
            end.saturating_sub(a.offset)
        }
        (None, None) => info.capacity_sectors.saturating_sub(a.offset),
    };
    let r = dev.zone_mgmt(op, a.offset, len);
    dev.flush().with_context(|| format!("flushing {}", a.file.display()))?;
    if let Err(e) = r {
        bail!(
            "zone {op} of sectors {}..{} on {}: {e} ({})",
            a.offset,
            a.offset + len,
            a.file.display(),
            e.errno_name()
        );
    }
    // The zones of the range are reported only when asked for (JSON or CSV).
    let out = output(&a.report, a.json);
    if out.is_table() {
        return Ok(());
    }
    let zones = if a.offset < info.capacity_sectors {
        dev.report_zones(a.offset, len.max(1), ReportOption::All)?
    } else {
        vec![]
    };
    match out.format() {
        Output::Csv => out.emit(&crate::output::csv_of(&serde_json::to_value(&zones)?)),
        _ => out.emit_value(&ManageReport { op, zones }, String::new),
    }
}
