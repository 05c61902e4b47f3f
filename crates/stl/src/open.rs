//! A translation layer kept in a file, whichever it is: format, open (recovering), inspect
//! without writing, statistics as JSON. What `shingled stl` and the Python package use.
//!
//! - **SMaRT** lives on a [`FileMedium`] (magic `SHSTLMED`): a shingled medium of equal tracks
//!   cut into recording zones, whose first tracks are the RAZ SMaRT needs.
//! - **dm-zoned** lives on a [`FileZoned`] (magic `SHZONED\0`): an emulated host-managed zoned
//!   device with conventional zones first, as `shingled zone create` makes.
//! - **dm-smr** is an emulated drive-managed SMR drive in a file (magic `SHDMSMR\0`): the
//!   DM-SMR model's PB and bands, with real I/O ([`DmSmrEmu`]).

use crate::block::{BlockDevice, BLOCK};
use crate::dm_smr_emu::{DmSmrEmu, DmSmrFileSpec, EmuFile};
use crate::dmzoned::{DmZoned, DmZonedConfig};
use crate::error::{invalid, io, Result, StlError};
use crate::file_medium::FileMedium;
use crate::medium::{Geometry, MediumZone};
use crate::smart::{raz_tracks_needed, SmartStl, SmartStlConfig};
use serde::Serialize;
use shingled_core::ByteSize;
use shingled_zoned::{FileOptions, FileZoned, ZonedConfig};
use std::io::Read;
use std::path::Path;
use std::time::Duration;

/// Which translation layer a file holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum LayerKind {
    /// SMaRT on a shingled track medium.
    Smart,
    /// The dm-zoned-style layer on a zoned device.
    DmZoned,
    /// An emulated DM-SMR drive (the model's PB and bands, real I/O).
    DmSmr,
}

impl std::fmt::Display for LayerKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            LayerKind::Smart => "smart",
            LayerKind::DmZoned => "dm-zoned",
            LayerKind::DmSmr => "dm-smr",
        })
    }
}

/// `e` naming the file `path` where the layer named only itself (it opens any zoned device).
fn named(e: StlError, path: &Path) -> StlError {
    match e {
        StlError::Corrupt { device, what } if device == "dm-zoned" => {
            StlError::Corrupt { device: path.display().to_string(), what }
        }
        e => e,
    }
}

/// Which layer `path` holds, by its magic.
pub fn detect(path: &Path) -> Result<LayerKind> {
    // Before the open: opening a FIFO would block.
    shingled_zoned::require_file_or_block_device(path)
        .map_err(|e| io(format!("opening {}", path.display()), e))?;
    let mut f = std::fs::File::open(path).map_err(|e| io(format!("opening {}", path.display()), e))?;
    let mut magic = [0u8; 8];
    let meta = f.metadata().map_err(|e| io(format!("reading {}", path.display()), e))?;
    // A block device's length is not its metadata's; its read says.
    let len = if std::os::unix::fs::FileTypeExt::is_block_device(&meta.file_type()) {
        u64::MAX
    } else {
        meta.len()
    };
    if len < magic.len() as u64 {
        return Err(StlError::Corrupt {
            device: path.display().to_string(),
            what: if len == 0 {
                "the file is empty; format a translation layer with `shingled stl format` (a new file)".into()
            } else {
                format!("the file holds only {len} bytes, too short for a translation layer's header")
            },
        });
    }
    f.read_exact(&mut magic).map_err(|e| io(format!("reading the header of {}", path.display()), e))?;
    match &magic {
        b"SHSTLMED" => Ok(LayerKind::Smart),
        b"SHZONED\0" => Ok(LayerKind::DmZoned),
        b"SHDMSMR\0" => Ok(LayerKind::DmSmr),
        b"SHBCACHE" => Err(StlError::Corrupt {
            device: path.display().to_string(),
            what: "a block cache device (made by `shingled cache create`; `shingled cache check` reads it), \
                   not a translation layer"
                .into(),
        }),
        other => Err(StlError::Corrupt {
            device: path.display().to_string(),
            what: format!(
                "starts with {:?}, not a shingled medium (SHSTLMED), a zoned device (SHZONED) or an emulated DM-SMR drive (SHDMSMR); \
                 format it with `shingled stl format`",
                String::from_utf8_lossy(other)
            ),
        }),
    }
}

/// How to lay a SMaRT medium file out.
#[derive(Clone, Debug, PartialEq)]
pub struct SmartFileSpec {
    /// Raw size of the medium (rounded down to whole tracks).
    pub size: ByteSize,
    /// Bytes per track (a multiple of 4 KiB; the last 4 KiB of each is the footer).
    pub track_bytes: u32,
    /// Recording zones (equal numbers of tracks; the RAZ is taken from the first).
    pub zones: u32,
    /// Head width in tracks (2 in the paper).
    pub head_width: u32,
    /// SMaRT's parameters.
    pub config: SmartStlConfig,
}

impl Default for SmartFileSpec {
    fn default() -> Self {
        SmartFileSpec {
            size: ByteSize::gib(1),
            track_bytes: 1 << 20,
            zones: 4,
            head_width: 2,
            config: SmartStlConfig::default(),
        }
    }
}

impl SmartFileSpec {
    /// The medium geometry this gives.
    pub fn geometry(&self) -> Result<Geometry> {
        let tb = self.track_bytes;
        if tb == 0 || !tb.is_multiple_of(BLOCK as u32) || tb < 2 * BLOCK as u32 {
            return Err(invalid("track_size", tb, "a multiple of 4096 bytes, at least 8192"));
        }
        if self.zones == 0 {
            return Err(invalid("zones", 0, "at least one recording zone"));
        }
        if self.zones as u64 > crate::file_medium::MAX_ZONES {
            return Err(invalid(
                "zones",
                self.zones,
                format!("at most {} recording zones", crate::file_medium::MAX_ZONES),
            ));
        }
        let tracks = self.size.0 / tb as u64;
        // Before the geometry is built: a track count the flag table cannot hold would also
        // overflow the per-zone counts.
        if tracks > crate::file_medium::MAX_TRACKS {
            return Err(invalid(
                "size",
                self.size,
                format!(
                    "{tracks} tracks of {tb} B; at most {} tracks (raise the track size)",
                    crate::file_medium::MAX_TRACKS
                ),
            ));
        }
        let raz = raz_tracks_needed(tracks, tb, &self.config);
        let per = (tracks.saturating_sub(raz)) / self.zones as u64;
        if per < 4 {
            return Err(invalid(
                "size",
                self.size,
                format!(
                    "{tracks} tracks of {tb} B leave {per} shingled tracks per zone after the {raz}-track RAZ; \
                     raise the size or lower the track size or zone count"
                ),
            ));
        }
        let mut zones = vec![MediumZone { tracks: per as u32, track_bytes: tb }; self.zones as usize];
        zones[0].tracks += raz as u32;
        Ok(Geometry { zones, head_width: self.head_width, unshingled_tracks: raz as u32 })
    }
}

/// How to lay a dm-zoned device file out.
#[derive(Clone, Debug, PartialEq)]
pub struct DmZonedFileSpec {
    /// Device capacity.
    pub size: ByteSize,
    /// Zone size (a power of two).
    pub zone_bytes: ByteSize,
    /// Conventional zones at the start (metadata and write buffers).
    pub conventional: u64,
    /// Sequential zones reserved for reclaim (`None`: the layer's default).
    pub reserved_seq: Option<u64>,
}

impl Default for DmZonedFileSpec {
    fn default() -> Self {
        DmZonedFileSpec {
            size: ByteSize::gib(1),
            zone_bytes: ByteSize::mib(16),
            conventional: 8,
            reserved_seq: None,
        }
    }
}

/// Most zones a dm-zoned device file may be formatted with (16 TiB in 16 MiB zones); its
/// metadata in memory and on the device grows with the count.
pub const MAX_DMZONED_ZONES: u64 = 1 << 20;

/// A translation layer opened from a file.
pub enum Stl {
    /// SMaRT.
    Smart(Box<SmartStl<FileMedium>>),
    /// dm-zoned.
    DmZoned(Box<DmZoned<FileZoned>>),
    /// An emulated DM-SMR drive.
    DmSmr(Box<DmSmrEmu<EmuFile>>),
}

fn medium_stats(m: &FileMedium) -> crate::medium::MediumStats {
    m.stats()
}

impl Stl {
    /// Creates `path` (which must not exist) as a SMaRT medium and formats it.
    pub fn format_smart(path: &Path, spec: &SmartFileSpec) -> Result<Stl> {
        let g = spec.geometry()?;
        let m = FileMedium::create_file(path, g)?;
        // A file that could not be formatted is not left behind (it did not exist before).
        let stl = SmartStl::format(m, &spec.config, medium_stats).inspect_err(|_| {
            let _ = std::fs::remove_file(path);
        })?;
        Ok(Stl::Smart(Box::new(stl)))
    }

    /// Creates `path` (which must not exist) as a zoned device and formats dm-zoned on it.
    pub fn format_dmzoned(path: &Path, spec: &DmZonedFileSpec) -> Result<Stl> {
        // Before anything is allocated: the zone table and the layer's per-zone state are
        // sized by the zone count.
        let zones = spec.size.0.div_ceil(spec.zone_bytes.0.max(1));
        if zones > MAX_DMZONED_ZONES {
            return Err(invalid(
                "size",
                spec.size,
                format!(
                    "{zones} zones of {}; at most {MAX_DMZONED_ZONES} zones (raise the zone size)",
                    spec.zone_bytes
                ),
            ));
        }
        let zc = ZonedConfig {
            capacity: spec.size,
            zone_size: spec.zone_bytes,
            nr_conv: spec.conventional,
            max_open: 0,
            ..ZonedConfig::default()
        };
        // The zoned device would quietly take fewer conventional zones than asked when the size
        // holds too few zones; say so instead.
        let (info, _) = zc.sanitize()?;
        if info.nr_conv != spec.conventional || info.nr_zones < spec.conventional + 2 {
            let need = spec.conventional + 2;
            return Err(crate::error::invalid(
                "size",
                spec.size,
                format!(
                    "{} zones of {}; {} conventional zones and at least 2 sequential zones need {need} zones \
                     (a size of at least {})",
                    info.nr_zones,
                    spec.zone_bytes,
                    spec.conventional,
                    ByteSize(need.saturating_mul(spec.zone_bytes.0))
                ),
            ));
        }
        let dev = FileZoned::create(path, &zc, FileOptions::default())?;
        let cfg = DmZonedConfig { reserved_seq: spec.reserved_seq, ..DmZonedConfig::default() };
        // A file that could not be formatted is not left behind (it did not exist before).
        let stl = DmZoned::format(dev, &cfg).inspect_err(|_| {
            let _ = std::fs::remove_file(path);
        })?;
        Ok(Stl::DmZoned(Box::new(stl)))
    }

    /// Creates `path` (which must not exist) as an emulated DM-SMR drive, or formats the block
    /// device `path` (its first `spec.size` bytes), which must hold nothing: zeros in its
    /// first MiB.
    pub fn format_dm_smr(path: &Path, spec: &DmSmrFileSpec) -> Result<Stl> {
        // Before the file is created: a bad profile or size leaves nothing behind.
        crate::dm_smr_emu::plan_check(spec)?;
        let is_device = std::fs::metadata(path)
            .is_ok_and(|m| std::os::unix::fs::FileTypeExt::is_block_device(&m.file_type()));
        if !is_device {
            let st = EmuFile::create(path).map_err(|e| io(format!("creating {}", path.display()), e))?;
            let d = DmSmrEmu::format(st, spec).inspect_err(|_| {
                let _ = std::fs::remove_file(path);
            })?;
            return Ok(Stl::DmSmr(Box::new(d)));
        }
        let mut st = EmuFile::open(path).map_err(|e| io(format!("opening {}", path.display()), e))?;
        let mut head = vec![0u8; 1 << 20];
        shingled_zoned::Storage::read_at(&mut st, 0, &mut head)
            .map_err(|e| io(format!("reading {}", path.display()), e))?;
        if head.iter().any(|&b| b != 0) {
            return Err(invalid(
                "file",
                path.display(),
                "the block device holds data (a non-zero byte in its first MiB); zero its first MiB \
                 (`dd if=/dev/zero of=DEVICE bs=1M count=1`) to format it",
            ));
        }
        Ok(Stl::DmSmr(Box::new(DmSmrEmu::format(st, spec)?)))
    }

    /// Opens `path`, recovering after a crash (which writes).
    pub fn open(path: &Path) -> Result<Stl> {
        match detect(path)? {
            LayerKind::Smart => {
                Ok(Stl::Smart(Box::new(SmartStl::open(FileMedium::open_file(path)?, medium_stats)?)))
            }
            LayerKind::DmZoned => {
                let dev = FileZoned::open(path, FileOptions::default())?;
                Ok(Stl::DmZoned(Box::new(DmZoned::open(dev).map_err(|e| named(e, path))?)))
            }
            LayerKind::DmSmr => {
                let st = EmuFile::open(path).map_err(|e| io(format!("opening {}", path.display()), e))?;
                Ok(Stl::DmSmr(Box::new(DmSmrEmu::open(st)?)))
            }
        }
    }

    /// Which layer it is.
    pub fn kind(&self) -> LayerKind {
        match self {
            Stl::Smart(_) => LayerKind::Smart,
            Stl::DmZoned(_) => LayerKind::DmZoned,
            Stl::DmSmr(_) => LayerKind::DmSmr,
        }
    }

    /// The consistency check of the layer: one line per problem (empty: clean). A bad copy of
    /// duplicated metadata that open found (and recovery may since have rewritten) is a
    /// problem too, named first: [`Stl::metadata_damage`].
    pub fn check(&mut self) -> Result<Vec<String>> {
        let mut out = self.metadata_damage();
        match self {
            Stl::Smart(s) => out.extend(s.check()),
            Stl::DmZoned(d) => out.extend(d.check()?.problems),
            Stl::DmSmr(d) => out.extend(d.check()),
        }
        Ok(out)
    }

    /// Every bad copy of duplicated metadata found when the file was opened, one line each
    /// naming the copy and the one in use: the file's header and backup header, the medium's
    /// flag-table copies or the zoned device's zone-table copies, SMaRT's superblock copies and
    /// checkpoint slots, dm-zoned's two metadata sets.
    pub fn metadata_damage(&self) -> Vec<String> {
        match self {
            Stl::Smart(s) => smart_damage(s),
            Stl::DmZoned(d) => dmzoned_damage(d),
            Stl::DmSmr(d) => d.metadata_damage().iter().map(|d| format!("metadata: {d}")).collect(),
        }
    }

    /// Background work for an idle period of `d` (SMaRT's background GC, dm-zoned's idle
    /// reclaim).
    pub fn idle(&mut self, d: Duration) -> Result<()> {
        match self {
            Stl::Smart(s) => s.idle(d),
            Stl::DmZoned(z) => z.idle(d).map(|_| ()),
            Stl::DmSmr(z) => z.idle(d),
        }
    }

    /// Statistics as JSON: `{"layer": ..., "capacity_bytes": ..., "stats": {...}}`.
    pub fn stats_json(&self) -> serde_json::Value {
        let stats = match self {
            Stl::Smart(s) => serde_json::to_value(s.stats()),
            Stl::DmZoned(d) => serde_json::to_value(d.stats()),
            Stl::DmSmr(d) => serde_json::to_value(d.stats()),
        }
        .unwrap_or(serde_json::Value::Null);
        serde_json::json!({
            "layer": self.kind(),
            "capacity_bytes": self.capacity_blocks() * BLOCK as u64,
            "stats": stats,
        })
    }

    fn dev(&mut self) -> &mut dyn BlockDevice {
        match self {
            Stl::Smart(s) => s.as_mut(),
            Stl::DmZoned(d) => d.as_mut(),
            Stl::DmSmr(d) => d.as_mut(),
        }
    }
}

fn smart_damage(s: &SmartStl<FileMedium>) -> Vec<String> {
    s.medium().metadata_damage().iter().chain(s.metadata_damage()).map(|d| format!("metadata: {d}")).collect()
}

fn dmzoned_damage(d: &DmZoned<FileZoned>) -> Vec<String> {
    let device = shingled_zoned::ZonedDevice::metadata_damage(d.device()).into_iter().map(|m| m.what);
    device.chain(d.metadata_damage().iter().cloned()).map(|d| format!("metadata: {d}")).collect()
}

/// Checks `path` without writing to it: for SMaRT the map recovery would build (and whether a
/// cut GC move is waiting to be finished), for dm-zoned the newest metadata set; and, for
/// both, every copy of duplicated metadata ([`Stl::metadata_damage`]).
pub fn inspect(path: &Path) -> Result<(LayerKind, Vec<String>, serde_json::Value)> {
    match detect(path)? {
        LayerKind::Smart => {
            let m = FileMedium::open_file(path)?;
            let (mut s, pending) = SmartStl::inspect(m, medium_stats)?;
            let mut problems = smart_damage(&s);
            problems.extend(s.check());
            if pending > 0 {
                problems.push(format!(
                    "{pending} logical tracks wait in the staging tracks (a GC move cut by a crash); \
                     opening the device read-write moves them back"
                ));
            }
            let stats = serde_json::to_value(s.stats()).unwrap_or_default();
            Ok((LayerKind::Smart, problems, stats))
        }
        LayerKind::DmZoned => {
            let dev = FileZoned::open(path, FileOptions::default())?;
            // Not `open`: recovery would rewrite a metadata set that is bad or behind.
            let mut d = DmZoned::inspect(dev).map_err(|e| named(e, path))?;
            let mut problems = dmzoned_damage(&d);
            problems.extend(d.check()?.problems);
            let stats = serde_json::to_value(d.stats()).unwrap_or_default();
            Ok((LayerKind::DmZoned, problems, stats))
        }
        LayerKind::DmSmr => {
            let (stats, damage) = crate::dm_smr_emu::inspect_file(path)?;
            let problems = damage.iter().map(|d| format!("metadata: {d}")).collect();
            Ok((LayerKind::DmSmr, problems, serde_json::to_value(stats).unwrap_or_default()))
        }
    }
}

impl BlockDevice for Stl {
    fn capacity_blocks(&self) -> u64 {
        match self {
            Stl::Smart(s) => s.capacity_blocks(),
            Stl::DmZoned(d) => d.capacity_blocks(),
            Stl::DmSmr(d) => d.capacity_blocks(),
        }
    }
    fn read(&mut self, lba: u64, buf: &mut [u8]) -> Result<()> {
        self.dev().read(lba, buf)
    }
    fn write(&mut self, lba: u64, data: &[u8]) -> Result<()> {
        self.dev().write(lba, data)
    }
    fn flush(&mut self) -> Result<()> {
        self.dev().flush()
    }
    fn discard(&mut self, lba: u64, blocks: u64) -> Result<()> {
        self.dev().discard(lba, blocks)
    }
    fn name(&self) -> String {
        match self {
            Stl::Smart(s) => s.name(),
            Stl::DmZoned(d) => d.name(),
            Stl::DmSmr(d) => d.name(),
        }
    }
}
