//! The registry of drive models and the named profiles.
//!
//! [`DriveConfig`] is what a configuration file names under `[drive]`:
//!
//! ```toml
//! [drive]
//! model = "dm-smr"
//! pb_size = "1/256"
//! pb_flavour = "in-place"
//! bands = { kind = "fixed", size = "18MiB" }
//! [drive.mechanism]
//! rpm = 7200
//! ```
//!
//! Every field has a default, so a table names only what it changes. The SSD cache device is
//! configured separately ([`SsdConfig`]), since every run has one next to the disk.
//!
//! Adding a model = one file with its `XxxConfig` + one variant here (+ its profiles).

use crate::dm_smr::{DmSmrConfig, PbFlavour, PbFree};
use crate::error::{DeviceError, Result};
use crate::hdd::{Hdd, HddConfig};
use crate::smart::{cheetah_15k5_zones, SmartConfig};
use crate::ssd::SsdConfig;
use crate::Drive;
use serde::{Deserialize, Serialize};
use shingled_core::{BandConfig, ByteSize, SizeSpec};

/// A disk model and its parameters. Serialized with a `model` tag: `model = "cmr"`,
/// `model = "dm-smr"` or `model = "smart"`, followed by that model's fields.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "model", rename_all = "kebab-case")]
pub enum DriveConfig {
    /// Conventional drive: host LBAs straight onto the mechanism (the CMR-only baseline).
    Cmr(HddConfig),
    /// Drive-managed SMR: persistent buffer + bands (the SMR-only baseline, and the disk under
    /// every SSD cache experiment).
    DmSmr(DmSmrConfig),
    /// SMaRT: a track-level shingled translation layer (He & Du, FAST '17).
    Smart(SmartConfig),
}

impl Default for DriveConfig {
    fn default() -> Self {
        DriveConfig::DmSmr(DmSmrConfig::default())
    }
}

/// What the trace tells the drive builder. Sizes relative to the trace (a PB of "1/256") are
/// resolved against these.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct BuildContext {
    /// Written LBA range: total size of the bands that receive writes (PORE Table I). The DM-SMR
    /// PB size is resolved against it. 0 = unknown (a relative PB size then fails to build).
    pub written_range: ByteSize,
    /// Accessed LBA range: the written range plus the range of reads (PORE Table I). No drive
    /// model reads it today; it is here so cache sizes and future models share one context.
    pub accessed_range: ByteSize,
}

impl BuildContext {
    /// A context for a run without a trace (probes, micro-benchmarks): both ranges = `capacity`.
    pub fn whole_drive(capacity: ByteSize) -> BuildContext {
        BuildContext { written_range: capacity, accessed_range: capacity }
    }
}

impl DriveConfig {
    /// Short model name, as in the `model` tag.
    pub fn model(&self) -> &'static str {
        match self {
            DriveConfig::Cmr(_) => "cmr",
            DriveConfig::DmSmr(_) => "dm-smr",
            DriveConfig::Smart(_) => "smart",
        }
    }

    /// Checks every field that can be checked without a build context; errors name the field.
    pub fn validate(&self) -> Result<()> {
        match self {
            DriveConfig::Cmr(c) => c.validate(),
            DriveConfig::DmSmr(c) => c.validate(),
            DriveConfig::Smart(c) => c.validate(),
        }
    }

    /// Validates, resolves relative sizes against `ctx` and builds the model.
    pub fn build(&self, ctx: &BuildContext) -> Result<Box<dyn Drive>> {
        Ok(match self {
            DriveConfig::Cmr(c) => Box::new(Hdd::new(c)?),
            DriveConfig::DmSmr(c) => Box::new(c.build(ctx)?),
            DriveConfig::Smart(c) => Box::new(c.build()?),
        })
    }

    /// The CMR-only baseline's drive: the `pore-cmr` profile (PORE's 7200 rpm CMR, calibrated to its Fig. 3, drive write cache on).
    pub fn default_cmr() -> DriveConfig {
        DriveConfig::Cmr(HddConfig::pore_cmr())
    }

    /// Baseline name stem: `cmr`, `smr` or `smart` (as in the papers' "CMR-only" / "SMR-only").
    pub fn short_name(&self) -> &'static str {
        match self {
            DriveConfig::Cmr(_) => "cmr",
            DriveConfig::DmSmr(_) => "smr",
            DriveConfig::Smart(_) => "smart",
        }
    }

    /// Host-visible capacity: requests must end at or below it. For SMaRT it depends on the
    /// layout and the utilisation ([`SmartConfig::host_capacity`]); `None` if that layout is
    /// invalid (building then reports why).
    pub fn capacity(&self) -> Option<ByteSize> {
        Some(match self {
            DriveConfig::Cmr(c) => c.capacity,
            DriveConfig::DmSmr(c) => c.capacity,
            DriveConfig::Smart(c) => return c.host_capacity().ok(),
        })
    }

    /// Sets the host-visible capacity. For a DM-SMR drive the mechanism grows too when the
    /// persistent buffer and the bands would no longer fit on it (same rates and seek times: a
    /// larger drive of the same family); it never shrinks. For SMaRT it sets `shingled_size` to
    /// `capacity / utilisation` (the host capacity is then that, less up to one track per zone
    /// of rounding); with derived zones the mechanism grows (by 5% more, for the zones' rounding)
    /// when it would not hold the RAZ and that space, while a zone table that is too short makes
    /// the build fail naming `zones`.
    pub fn set_capacity(&mut self, capacity: ByteSize) {
        match self {
            DriveConfig::Cmr(c) => c.capacity = capacity,
            DriveConfig::DmSmr(c) => {
                c.capacity = capacity;
                // The largest PB this config can resolve to: a fraction refers to the written
                // range, which cannot exceed the capacity.
                let pb_max = match c.pb_size {
                    SizeSpec::Absolute(b) => b.0,
                    SizeSpec::Fraction(f) => (capacity.0 as f64 * f.min(1.0)).ceil() as u64,
                };
                let need = capacity.0.saturating_add(pb_max);
                if c.mechanism.capacity.0 < need {
                    c.mechanism.capacity = ByteSize(need);
                }
            }
            DriveConfig::Smart(c) => {
                let u = if c.utilisation.is_finite() && c.utilisation > 0.0 { c.utilisation } else { 1.0 };
                let phys = (capacity.0 as f64 / u).ceil() as u64;
                c.shingled_size = Some(ByteSize(phys));
                let need = c.raz.0.saturating_add(phys);
                if c.zones.is_empty() && c.mechanism.capacity.0 < need {
                    c.mechanism.capacity = ByteSize((need as f64 * 1.05).ceil() as u64);
                }
            }
        }
    }

    /// The DM-SMR parameters, if this is a DM-SMR drive.
    pub fn dm_smr(&self) -> Option<&DmSmrConfig> {
        match self {
            DriveConfig::DmSmr(c) => Some(c),
            DriveConfig::Cmr(_) | DriveConfig::Smart(_) => None,
        }
    }

    /// The DM-SMR parameters, if this is a DM-SMR drive (for command-line overrides).
    pub fn dm_smr_mut(&mut self) -> Option<&mut DmSmrConfig> {
        match self {
            DriveConfig::DmSmr(c) => Some(c),
            DriveConfig::Cmr(_) | DriveConfig::Smart(_) => None,
        }
    }

    /// The SMaRT parameters, if this is a SMaRT drive.
    pub fn smart(&self) -> Option<&SmartConfig> {
        match self {
            DriveConfig::Smart(c) => Some(c),
            DriveConfig::Cmr(_) | DriveConfig::DmSmr(_) => None,
        }
    }

    /// The SMaRT parameters, if this is a SMaRT drive (for command-line overrides, such as the
    /// utilisation of an experiment).
    pub fn smart_mut(&mut self) -> Option<&mut SmartConfig> {
        match self {
            DriveConfig::Smart(c) => Some(c),
            DriveConfig::Cmr(_) | DriveConfig::DmSmr(_) => None,
        }
    }

    /// The disk mechanics underneath (for command-line overrides such as `--write-cache`).
    pub fn mechanism_mut(&mut self) -> &mut HddConfig {
        match self {
            DriveConfig::Cmr(c) => c,
            DriveConfig::DmSmr(c) => &mut c.mechanism,
            DriveConfig::Smart(c) => &mut c.mechanism,
        }
    }

    /// The band layout used to measure a trace's written range: the drive's own for DM-SMR, the
    /// default (PORE's uniform 17–36 MB) for drives without bands.
    pub fn bands_or_default(&self) -> BandConfig {
        match self {
            DriveConfig::DmSmr(c) => c.bands.clone(),
            DriveConfig::Cmr(_) | DriveConfig::Smart(_) => BandConfig::default(),
        }
    }

    /// PB capacity in blocks for a trace with this written range, as [`DriveConfig::build`]
    /// would resolve it; `None` for drives without a PB or if it cannot be resolved.
    pub fn pb_blocks(&self, written_range: ByteSize) -> Option<u64> {
        match self {
            DriveConfig::DmSmr(c) => {
                let ctx = BuildContext { written_range, accessed_range: written_range };
                c.resolve_pb(&ctx).ok().map(|b| b.blocks())
            }
            DriveConfig::Cmr(_) | DriveConfig::Smart(_) => None,
        }
    }

    /// [`profile`], with an error listing the known names.
    pub fn from_profile(name: &str) -> Result<DriveConfig> {
        profile(name).ok_or_else(|| DeviceError::UnknownProfile {
            name: name.to_string(),
            known: profile_names().join(", "),
        })
    }
}

/// Names accepted by [`profile`], in a stable order.
pub fn profile_names() -> &'static [&'static str] {
    &[
        "cmr-7200-500g",
        "cmr-5900-5t",
        "pore-cmr",
        "sac-cmr",
        "st5000as0011",
        "st8000as0002",
        "st5000as0011-scaled",
        "pore-emulator",
        "pore-emulator-uniform",
        "sac-emulator",
        "pore-prototype",
        "sac-testbed",
        "cheetah-15k5",
        "smart-cheetah",
        "skylight-cheetah",
    ]
}

/// SAC's emulator: 12,695 bands of 20,480,000 B form its first size class, [0, 259.99 GB)
/// (published-artifacts.md §1.4).
const SAC_FIRST_CLASS_BYTES: u64 = 12_695 * 20_480_000;

/// PB entries of the ST8000AS0002: SAC Table 3 finds a PB "capacity" of 720 MB with 4 KB writes
/// and 1450 MB with 8 KB writes, i.e. a limit on entries rather than bytes; 720 MiB / 4 KiB =
/// 184,320 (1450 MiB / 8 KiB = 185,600).
pub const ST8000AS0002_PB_ENTRIES: u64 = 184_320;

/// PB entries of the ST5000AS0011. No paper measures it; this is the one value fitted to PORE
/// Fig. 3's SMR curve (docs/drive-models.md, "Calibrated profiles"), of the order SAC measured on its
/// successor ([`ST8000AS0002_PB_ENTRIES`]).
pub const ST5000AS0011_PB_ENTRIES: u64 = 125_000;

/// Merge cost of one PB block in an RMW, ms: SAC §4.4's fitted `R(x) = 0.728x + 436` ms counts
/// 0.728 ms per block for the whole write-back, of which one PB append is 1/3156 s = 0.317 ms
/// (SAC Table 3); the rest, 0.41 ms, is the merge.
pub const MERGE_MS_PER_BLOCK: f64 = 0.41;

/// Batch-cleaning low watermark of the ST8000AS0002 (`pb_clean_low_watermark`): once the PB is
/// full, the drive cleans until 98.5% of it is left, i.e. 2,765 of its 184,320 entries are
/// freed per stall. **Fitted**, together with the range `C` of SAC §5.1 that the benches
/// precondition with ([`crate::bench::DEFAULT_HISTORY_RANGE`], 600 GB), to SAC Table 2's SMR
/// write mean (124.2 KB/s) and RSD (869.6%) of 4 KB random writes over 0–10 GB: a stall of
/// about two minutes, then about a second of writes at PB speed; storj/storj#3854 reports
/// stalls of "a few dozen seconds". The mean write rate depends on `C`, hardly on this
/// (docs/drive-models.md, "Misses and why").
pub const ST8000AS0002_CLEAN_LOW_WATERMARK: f64 = 0.985;

/// Idle time after which a Skylight-like drive starts cleaning, ms (SMaRT §5.1 configures its
/// Skylight drive "with a 1242ms triggering idle window").
pub const SKYLIGHT_IDLE_WINDOW_MS: f64 = 1242.0;

/// Idle time after which SMaRT starts background GC, ms (SMaRT §5.5.4: "SMaRT also uses a
/// 1242ms idle time window as the first background GC triggering condition").
pub const SMART_IDLE_WINDOW_MS: f64 = 1242.0;

/// Persistent-buffer occupancy at which SMaRT's Skylight drive starts on-demand cleaning
/// (SMaRT §5.1: "An on-demand GC is triggered when the persistent cache space is 80% full").
pub const SKYLIGHT_HIGH_WATERMARK: f64 = 0.8;

/// The SMaRT evaluation's layout (§5.2): "one 2 GB random access zone, one 2 GB persistent
/// cache (i.e., E-region) and the rest of the 142 GB for persistent storage space (i.e.,
/// I-region)".
pub const SMART_RAZ_BYTES: u64 = 2_000_000_000;
/// See [`SMART_RAZ_BYTES`]: the E-region (Skylight's persistent buffer).
pub const SMART_PB_BYTES: u64 = 2_000_000_000;
/// See [`SMART_RAZ_BYTES`]: the I-region.
pub const SMART_I_REGION_BYTES: u64 = 142_000_000_000;

/// The share of a drive-managed SMR drive's DRAM cache used for writes is not published; the
/// Seagate Archive HDD (ST8000AS0002) has 128 MB of cache in all (a review of the 8 TB drive,
/// hardwareslave.com: "the usual cache (128MB for this model)"). The write cache this option
/// models on a real DM-SMR drive uses all of it.
pub const ARCHIVE_CACHE_BYTES: u64 = 128_000_000;

/// A named drive configuration; `None` for an unknown name. Sources in `docs/drive-models.md`.
///
/// - `cmr-7200-500g`: PORE's 7200 rpm 500 GB CMR disk (the CMR-only baseline).
/// - `cmr-5900-5t`: a 5900 rpm 5 TB CMR disk (PORE §V-G's CMR baseline next to the real SMR
///   drive), the ST5000AS0011 mechanics without shingling.
/// - `pore-cmr`: PORE Fig. 3's 7200 rpm CMR disk as measured: its write cache on, 2 TB so that
///   the figure's 1 TB range fits ([`HddConfig::pore_cmr`]).
/// - `sac-cmr`: the CMR disk of SAC Table 2 / Fig. 1 (5 TB), write cache on, calibrated to Table 2
///   ([`HddConfig::sac_cmr`]).
/// - `st5000as0011`: the real Seagate 5 TB DM-SMR drive as Skylight and PORE §II describe it: a
///   fixed 20 GB PB at the outer diameter, bands falling from 36 MB (LBA 0) to 17 MB, an on-disk
///   append-only log (append-only, at-head), calibrated to PORE Fig. 3: a PB entry limit
///   ([`ST5000AS0011_PB_ENTRIES`]), 0.41 ms per merged block (SAC §4.4's slope less a PB
///   append), idle cleaning after 1242 ms (Skylight, as configured by SMaRT §5.1).
/// - `st8000as0002`: the Seagate 8 TB DM-SMR drive SAC measured: PB of 30.3 GB and 184,320
///   entries (SAC Table 3: 30.3 GB at 256 KB writes, 720 MB at 4 KB), bands 40 → 15 MB (SAC
///   §5.2), 0.41 ms per merged block, idle cleaning after 1242 ms, batch cleaning down to
///   [`ST8000AS0002_CLEAN_LOW_WATERMARK`] (fitted to SAC Table 2's RSD).
/// - `st5000as0011-scaled`: the same with the PB at 1/256 of the written range (PORE §V-A's
///   trace scaling) and PORE's uniform 17–36 MB bands.
/// - `pore-emulator`: PORE's artifact as implemented (in-place, at-head, 18 MiB bands: its size
///   table never leaves the first class), PB 1/256, on its prototype's 7200 rpm 500 GB disk.
/// - `pore-emulator-uniform`: the paper's description of that emulator (uniform 17–36 MB bands).
/// - `pore-prototype`: the drive of PORE's experiments as the paper describes its prototype
///   (§V-A): the emulated SMR drive (PB 1/256, in-place FIFO, uniform 17–36 MB bands) on the
///   7200 rpm CMR disk with its write cache on; PB blocks merged at the PB region's bandwidth.
/// - `sac-testbed`: SAC's experiments: its emulator's PB and bands (append-only, at-head,
///   20.48 MB) on the calibrated ST8000AS0002 mechanics, PB 1/256 of the written range.
/// - `sac-emulator`: SAC's artifact (append-only, at-head, PB 150,000 blocks = 614.4 MB, fixed
///   20,480,000 B bands). The artifact's bands grow by 1,024,000 B steps above 259.99 GB; rather
///   than model that, the capacity stops at 259.99 GB, so a trace reaching beyond it is rejected
///   instead of silently meeting different bands. Mechanics of the ST8000AS0002 SAC measured on.
///
/// The three schemes of SMaRT's evaluation (§5.1–5.2), on one Cheetah 15K.5 mechanism
/// ([`HddConfig::cheetah_15k5`], whose doc cites every figure):
///
/// - `cheetah-15k5`: the regular HDD: the whole 146.8 GB, LBAs straight onto the mechanism,
///   write cache off (neither RAZ nor E-region, §5.2).
/// - `smart-cheetah`: SMaRT ([`SmartConfig`]) on the zone table [`crate::smart::CHEETAH_15K5_ZONES`]:
///   2 GB RAZ at the outer diameter, then a 142 GB shingled I-region (no E-region, §5.2); head
///   width 2, threshold 0.5, guard tracks below 50%, idle window 1242 ms (§5.5.4); utilisation
///   0.6 pre-populated (set `utilisation` per experiment: 0.3, 0.6, 0.9, §5.4).
/// - `skylight-cheetah`: the Seagate DM-SMR drive as SMaRT §5.1 configures it after Skylight: a
///   single 2 GB persistent cache at the outer diameter (an append-only circular log, space
///   reclaimed as its tail passes: `at-head`), fixed 40 MB bands (read as 40 MiB, whole 4 KiB
///   blocks) over a 142 GB I-region, cleaning the band of the log's tail block by RMW,
///   background cleaning after a 1242 ms idle window until the next request, on-demand cleaning
///   when the cache is 80% full; merged PB blocks read at the PB region's bandwidth (the
///   ST8000AS0002's fitted 0.41 ms/block belongs to that drive). No RAZ is modelled (its map is
///   in DRAM), so the bands follow the cache directly.
pub fn profile(name: &str) -> Option<DriveConfig> {
    let smr = |capacity: ByteSize, pb: SizeSpec, flavour, free, bands, mechanism| {
        DriveConfig::DmSmr(DmSmrConfig {
            capacity,
            pb_size: pb,
            pb_flavour: flavour,
            pb_free: free,
            bands,
            mechanism,
            ..DmSmrConfig::default()
        })
    };
    let uniform = BandConfig::UniformRandom { min: ByteSize::mb(17), max: ByteSize::mb(36), seed: 0 };
    let five_tb = ByteSize(5_000_000_000_000);
    // PORE's prototype emulated the SMR drive on its 500 GB CMR disk; keep 20 GB for the PB.
    let pore_capacity = ByteSize::gb(480);
    Some(match name {
        "cmr-7200-500g" => DriveConfig::Cmr(HddConfig::cmr_7200_500g()),
        "cmr-5900-5t" => DriveConfig::Cmr(HddConfig { capacity: five_tb, ..HddConfig::archive_5900_5tb() }),
        "pore-cmr" => DriveConfig::Cmr(HddConfig::pore_cmr()),
        "sac-cmr" => DriveConfig::Cmr(HddConfig::sac_cmr()),
        "st5000as0011" => DriveConfig::DmSmr(DmSmrConfig {
            capacity: five_tb,
            pb_size: SizeSpec::Absolute(ByteSize::gb(20)),
            pb_flavour: PbFlavour::AppendOnly,
            pb_free: PbFree::AtHead,
            bands: BandConfig::LbaDependent { outer: ByteSize::mb(36), inner: ByteSize::mb(17) },
            mechanism: HddConfig::archive_5900_5tb(),
            pb_max_entries: Some(ST5000AS0011_PB_ENTRIES),
            pb_merge_ms_per_block: Some(MERGE_MS_PER_BLOCK),
            idle_window_ms: Some(SKYLIGHT_IDLE_WINDOW_MS),
            ..DmSmrConfig::default()
        }),
        "st8000as0002" => DriveConfig::DmSmr(DmSmrConfig {
            capacity: ByteSize(8_000_000_000_000),
            pb_size: SizeSpec::Absolute(ByteSize(30_300_000_000 / 4096 * 4096)),
            pb_flavour: PbFlavour::AppendOnly,
            pb_free: PbFree::AtHead,
            bands: BandConfig::LbaDependent { outer: ByteSize::mb(40), inner: ByteSize::mb(15) },
            mechanism: HddConfig::st8000as0002(),
            pb_max_entries: Some(ST8000AS0002_PB_ENTRIES),
            pb_merge_ms_per_block: Some(MERGE_MS_PER_BLOCK),
            idle_window_ms: Some(SKYLIGHT_IDLE_WINDOW_MS),
            pb_clean_low_watermark: Some(ST8000AS0002_CLEAN_LOW_WATERMARK),
            ..DmSmrConfig::default()
        }),
        "st5000as0011-scaled" => smr(
            five_tb,
            SizeSpec::Fraction(1.0 / 256.0),
            PbFlavour::AppendOnly,
            PbFree::AtHead,
            uniform,
            HddConfig::archive_5900_5tb(),
        ),
        "pore-emulator" => smr(
            pore_capacity,
            SizeSpec::Fraction(1.0 / 256.0),
            PbFlavour::InPlace,
            PbFree::AtHead,
            BandConfig::Fixed { size: ByteSize::mib(18) },
            HddConfig::cmr_7200_500g(),
        ),
        "pore-emulator-uniform" => smr(
            pore_capacity,
            SizeSpec::Fraction(1.0 / 256.0),
            PbFlavour::InPlace,
            PbFree::AtHead,
            uniform,
            HddConfig::cmr_7200_500g(),
        ),
        "sac-emulator" => smr(
            ByteSize(SAC_FIRST_CLASS_BYTES),
            SizeSpec::Absolute(ByteSize(150_000 * 4096)),
            PbFlavour::AppendOnly,
            PbFree::AtHead,
            BandConfig::Fixed { size: ByteSize(20_480_000) },
            HddConfig::archive_5980_8tb(),
        ),
        // PORE §V-A as the paper describes its prototype: the emulated SMR drive's PB and bands
        // on its 7200 rpm CMR disk (the `pore-cmr` disk, volatile write cache on: O_DIRECT
        // bypasses the page cache, not the drive's cache), a FIFO PB of 1/256 of the written
        // range updated in place (the artifact's `smrwrite`), uniform 17–36 MB bands, and PB
        // blocks merged at the PB region's bandwidth (Eq. 1's S / B_rbuf).
        "pore-prototype" => DriveConfig::DmSmr(DmSmrConfig {
            capacity: pore_capacity,
            pb_size: SizeSpec::Fraction(1.0 / 256.0),
            pb_flavour: PbFlavour::InPlace,
            pb_free: PbFree::AtHead,
            bands: uniform,
            mechanism: HddConfig::pore_cmr(),
            pb_merge_ms_per_block: None,
            ..DmSmrConfig::default()
        }),
        // SAC §6: counts from SAC's emulator (append-only at-head PB cleaned one band at a
        // time, fixed 20.48 MB bands), time from the ST8000AS0002 as calibrated on SAC's own
        // measurements (Tables 2–3, Fig. 10: mechanics and the 0.41 ms merge). The PB is 1/256
        // of the written range, as PORE scales it, so that the synthetic traces fill it.
        "sac-testbed" => DriveConfig::DmSmr(DmSmrConfig {
            capacity: ByteSize(SAC_FIRST_CLASS_BYTES),
            pb_size: SizeSpec::Fraction(1.0 / 256.0),
            pb_flavour: PbFlavour::AppendOnly,
            pb_free: PbFree::AtHead,
            bands: BandConfig::Fixed { size: ByteSize(20_480_000) },
            mechanism: HddConfig::st8000as0002(),
            pb_merge_ms_per_block: Some(MERGE_MS_PER_BLOCK),
            ..DmSmrConfig::default()
        }),
        "cheetah-15k5" => DriveConfig::Cmr(HddConfig::cheetah_15k5()),
        "smart-cheetah" => DriveConfig::Smart(SmartConfig {
            mechanism: HddConfig::cheetah_15k5(),
            zones: cheetah_15k5_zones(),
            raz: ByteSize(SMART_RAZ_BYTES),
            shingled_size: Some(ByteSize(SMART_I_REGION_BYTES)),
            ..SmartConfig::default()
        }),
        "skylight-cheetah" => DriveConfig::DmSmr(DmSmrConfig {
            capacity: ByteSize(SMART_I_REGION_BYTES),
            pb_size: SizeSpec::Absolute(ByteSize(SMART_PB_BYTES)),
            pb_flavour: PbFlavour::AppendOnly,
            pb_free: PbFree::AtHead,
            bands: BandConfig::Fixed { size: ByteSize::mib(40) },
            mechanism: HddConfig::cheetah_15k5(),
            pb_merge_ms_per_block: None,
            idle_window_ms: Some(SKYLIGHT_IDLE_WINDOW_MS),
            pb_clean_high_watermark: Some(SKYLIGHT_HIGH_WATERMARK),
            ..DmSmrConfig::default()
        }),
        _ => return None,
    })
}

/// Names accepted by [`ssd_profile`].
pub fn ssd_profile_names() -> &'static [&'static str] {
    &["nvme", "sata"]
}

/// A named SSD configuration: `nvme` (Intel DC P4500 class, the default) or `sata` (Intel DC
/// S4500 class). See [`SsdConfig::nvme`] and [`SsdConfig::sata`] for the figures.
pub fn ssd_profile(name: &str) -> Option<SsdConfig> {
    match name {
        "nvme" => Some(SsdConfig::nvme()),
        "sata" => Some(SsdConfig::sata()),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_profile_validates_and_builds() {
        let ctx = BuildContext { written_range: ByteSize::gb(10), accessed_range: ByteSize::gb(12) };
        for name in profile_names() {
            let cfg = profile(name).unwrap_or_else(|| panic!("{name}"));
            cfg.validate().unwrap_or_else(|e| panic!("{name}: {e}"));
            let d = cfg.build(&ctx).unwrap_or_else(|e| panic!("{name}: {e}"));
            assert_eq!(d.kind(), cfg.model());
        }
        for name in ssd_profile_names() {
            ssd_profile(name).unwrap().validate().unwrap();
        }
        assert!(profile("nope").is_none());
        let e = DriveConfig::from_profile("nope").unwrap_err().to_string();
        assert!(e.contains("pore-emulator"), "{e}");
    }

    #[test]
    fn serde_uses_the_model_tag_and_rejects_unknown_fields() {
        for name in profile_names() {
            let cfg = profile(name).unwrap();
            let j = serde_json::to_string(&cfg).unwrap();
            assert!(j.contains(&format!("\"model\":\"{}\"", cfg.model())), "{j}");
            assert_eq!(serde_json::from_str::<DriveConfig>(&j).unwrap(), cfg, "{name}");
        }
        let partial =
            r#"{"model":"dm-smr","pb_size":"1/128","pb_flavour":"in-place","mechanism":{"rpm":7200}}"#;
        let cfg: DriveConfig = serde_json::from_str(partial).unwrap();
        let DriveConfig::DmSmr(c) = &cfg else { panic!() };
        assert_eq!(c.pb_size, SizeSpec::Fraction(1.0 / 128.0));
        assert_eq!(c.pb_flavour, PbFlavour::InPlace);
        assert_eq!(c.pb_free, PbFree::Immediate);
        assert_eq!(c.mechanism.rpm, 7200);
        assert_eq!(c.mechanism.surfaces, HddConfig::default().surfaces);
        let bad = r#"{"model":"cmr","rpms":7200}"#;
        let e = serde_json::from_str::<DriveConfig>(bad).unwrap_err().to_string();
        assert!(e.contains("rpms"), "{e}");
        let bad = r#"{"model":"dm-smr","mechanism":{"seek":1}}"#;
        assert!(serde_json::from_str::<DriveConfig>(bad).is_err());
        let ssd: SsdConfig = serde_json::from_str(r#"{"read_latency_us": 50}"#).unwrap();
        assert_eq!(ssd.read_latency_us, 50.0);
        assert_eq!(ssd.write_latency_us, SsdConfig::default().write_latency_us);
    }

    #[test]
    fn helpers_for_the_command_line() {
        let mut cfg = profile("pore-emulator").unwrap();
        assert_eq!(cfg.short_name(), "smr");
        assert_eq!(cfg.pb_blocks(ByteSize::gb(256)), Some(1_000_000_000 / 4096));
        cfg.set_capacity(ByteSize::gb(900));
        assert_eq!(cfg.capacity(), Some(ByteSize::gb(900)));
        let ctx = BuildContext::whole_drive(ByteSize::gb(900));
        cfg.build(&ctx).expect("the mechanism grew to hold PB + bands");
        cfg.dm_smr_mut().unwrap().pb_flavour = "append-only".parse().unwrap();
        assert_eq!(cfg.dm_smr_mut().unwrap().pb_flavour, PbFlavour::AppendOnly);
        let mut cmr = DriveConfig::default_cmr();
        assert!(cmr.dm_smr_mut().is_none() && cmr.pb_blocks(ByteSize::gb(1)).is_none());
        assert_eq!(cmr.short_name(), "cmr");
        assert_eq!(cmr.bands_or_default(), BandConfig::default());
        assert!(cmr.smart().is_none());
        cmr.mechanism_mut().write_cache.enabled = false;
        assert!(!cmr.mechanism_mut().write_cache.enabled);
    }

    #[test]
    fn smart_profile_has_the_papers_layout() {
        let mut cfg = profile("smart-cheetah").unwrap();
        assert_eq!((cfg.model(), cfg.short_name()), ("smart", "smart"));
        let c = cfg.smart().unwrap().clone();
        // The host sees U × the tracks of each zone of the 142 GB I-region.
        let cap = cfg.capacity().unwrap().0 as f64;
        assert!((cap / 142e9 - 0.6).abs() < 0.001, "{cap}");
        cfg.smart_mut().unwrap().utilisation = 0.3;
        let cap3 = cfg.capacity().unwrap().0 as f64;
        assert!((cap3 / 142e9 - 0.3).abs() < 0.001, "{cap3}");
        assert_eq!(c.zones.len(), 14);
        let sectors: u64 = c.zones.iter().map(|z| z.tracks as u64 * z.sectors_per_track as u64).sum();
        assert_eq!(sectors, 287_194_400, "the zone table's sector count");
        // set_capacity: about the capacity asked for (rounding: < one track per zone).
        let mut d = profile("smart-cheetah").unwrap();
        d.set_capacity(ByteSize::gb(30));
        let got = d.capacity().unwrap().0;
        assert!(got <= 30_000_000_000 && got > 30_000_000_000 - 14 * 614_400, "{got}");
        let mut g = DriveConfig::Smart(SmartConfig::default());
        g.set_capacity(ByteSize::gb(500));
        let got = g.capacity().unwrap().0;
        assert!(got <= 500_000_000_000 && got > 499_000_000_000, "derived zones grow: {got}");
        // Validation names the field.
        let bad = DriveConfig::Smart(SmartConfig { utilisation: 1.0, ..SmartConfig::default() });
        let e = bad.validate().unwrap_err().to_string();
        assert!(e.contains("`utilisation`") && e.contains('1'), "{e}");
        let bad = DriveConfig::Smart(SmartConfig { head_width: 1, ..SmartConfig::default() });
        assert!(bad.validate().unwrap_err().to_string().contains("`head_width`"));
        let mut bad = SmartConfig { zones: crate::smart::cheetah_15k5_zones(), ..SmartConfig::default() };
        bad.zones[3].sectors_per_track = 4;
        let e = bad.validate().unwrap_err().to_string();
        assert!(e.contains("`zones[3].sectors_per_track`") && e.contains('4'), "{e}");
        // The whole table (with spares) does not fit the 146.8 GB mechanism.
        let whole = SmartConfig { zones: crate::smart::cheetah_15k5_zones(), ..SmartConfig::default() };
        assert!(whole.validate().unwrap_err().to_string().contains("`zones`"));
        let cached = SmartConfig {
            mechanism: HddConfig {
                write_cache: crate::WriteCacheConfig { enabled: true, ..Default::default() },
                ..HddConfig::cheetah_15k5()
            },
            ..SmartConfig::default()
        };
        assert!(cached.validate().unwrap_err().to_string().contains("mechanism.write_cache.enabled"));
        let bad = r#"{"model":"smart","utilisatoin":0.3}"#;
        assert!(serde_json::from_str::<DriveConfig>(bad).unwrap_err().to_string().contains("utilisatoin"));
        let ok: DriveConfig = serde_json::from_str(
            r#"{"model":"smart","utilisation":0.3,"zones":[{"tracks":100,"sectors_per_track":64}]}"#,
        )
        .unwrap();
        assert_eq!(ok.capacity(), Some(ByteSize(30 * 8 * 4096)));
    }
}
